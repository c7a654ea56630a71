/*
 * Cyclades: conflict-free parallel SGD, the same model at every thread count.
 *
 * Objective and step: those of the serial trainer (src/core/sgd.c),
 *
 *     F(w) = (1/n) sum_i loss(y_i, w.x_i) + l2/2 |w|^2 + l1 |w|_1,
 *     step t on row x:  w <- prox( (1 - eta_t l2) w - eta_t loss'(y, w.x) x ).
 *
 * Each epoch the rows are taken in a seeded permutation, cut into batches
 * of B rows. Within a batch, rows that share a feature conflict; the
 * connected components of this bipartite row-feature graph (union-find
 * over the features of each row) are dealt to work groups, largest first,
 * each to the least-loaded group, and threads claim the groups (Pan, Lam,
 * Tu, Papailiopoulos, Zhang, Jordan, Ramchandran, Ré, Recht: "Cyclades:
 * Conflict-free Asynchronous Machine Learning", NIPS 2016; the authors
 * deal components to threads, here threads claim groups so that a
 * descheduled thread does not hold up the batch: CYC_GROUPS). A thread
 * runs its groups' rows in permutation order with
 * the plain kernel and relaxed stores; no weight is touched by two threads
 * of one batch, so the weights after the batch are those of the serial
 * run over the batch's rows in permutation order, whatever the threads.
 * A barrier separates batches. Segment step t of a row is its position in
 * the epoch's order, minus the segment's start: the lazy regularization
 * sees exactly the serial trainer's steps, and batches are split where a
 * kernel segment ends.
 *
 * Hot features. A feature in most rows (the bias, "the" in text) joins
 * every row of a batch into one component: on text the largest component
 * holds about all of every batch. Features in more than hot_degree rows,
 * and the bias, therefore leave the graph. During a batch every row reads
 * them as they were at the batch's start (its margin gets their part as
 * m_extra); after the barrier each hot weight j takes ONE step at the
 * batch's last step t_end, with the summed gradient and, for AdaGrad, the
 * summed squares (both over the batch's rows i, in permutation order)
 *
 *     G_j = sum_i loss'_i x_ij,     S_j = sum_i (loss'_i x_ij)^2.
 *
 * AdaGrad's accumulator takes S_j, what the serial steps would have added
 * (G_j^2 is up to c times larger for a feature in c rows of the batch, and
 * shrank the hot weights' steps by up to sqrt(c): 1.5 points of test
 * accuracy on the benchmark's skewed set, 8 with the hinge loss). The
 * gradient is divided by max(1, eta_j R_j), where eta_j is the step's
 * step size (eta_t_end; AdaGrad: eta / sqrt(eps + A_j + S_j), A_j the
 * accumulator before the step) and
 *
 *     R_j = sum_i |x_ij| h_i |x_i,hot|_1
 *
 * is row j of Gershgorin's bound on the batch loss's Hessian H over the hot
 * weights (|x_i,hot|_1 counts the bias), h_i row i's curvature: the
 * logistic loss's second derivative at the row's margin at the batch's
 * start, |d_i| (1 - |d_i|); for the other losses their bound (1 squared and
 * hinge, 2 squared hinge). All hot weights step at once, on stale margins:
 * a Jacobi step with step sizes D = diag(eta_j), and rho(D H) <= max_j
 * eta_j R_j (the row sums of |D H|). The division makes the damped D'
 * satisfy rho(D' H) <= 1, so on the batch loss's quadratic model the step
 * moves towards its minimum without overshooting, however many hot
 * features a row has (the bias and a9a's fourteen one-hot groups move
 * together; undamped AdaGrad steps with S_j cost a9a 1 to 5 points at eta
 * 1 or B = 2000). Hot features are
 * dealt to work groups by whole cache lines (largest degree first,
 * least-loaded group); whoever claims a group sums each of its weights in
 * row order from a feature-major copy of the batch's hot entries built
 * with the partition, and steps it once. The result is serial SGD with delayed,
 * damped hot-feature updates, and it does not depend on the thread count
 * either. With hot == 0 nothing is delayed and the model is serial SGD's
 * over the same order, bit for bit.
 *
 * Batch size and hot set (docs/CYCLADES.md): B = 2^14 nonzeros' worth of
 * rows, within [64, max(64, n/64)] (the hot features' delay is one batch);
 * then hot_degree is the largest degree
 * tau for which the cold graph's mean row-row conflict degree in a batch,
 * (B/n^2) sum_{deg_j <= tau} deg_j (deg_j - 1), stays at most 1/2: below
 * the giant-component threshold of 1, so components stay small. Neither
 * depends on the thread count.
 */
#include "cyclades/cyclades.h"

#include "core/sgd.h"
#include "core/sparse.h"
#include "pool/pool.h"
#include "pool/spin.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CYC_NONE UINT32_MAX
#define CYC_BATCH_NNZ (UINT64_C(1) << 14) /* nonzeros per batch, default */
#define CYC_BATCH_MIN UINT64_C(64)
#define CYC_MIN_BATCHES UINT64_C(64) /* per epoch, when rows allow */
#define CYC_CONFLICT 0.5 /* mean conflict degree of the cold graph, default */
#define CYC_STATS_BATCHES UINT64_C(16) /* sampled for the _all_ statistics */
#define CYC_LINE (HOG_CACHELINE / sizeof(float)) /* weights per cache line */
#define CYC_PREFETCH 16 /* hot steps ahead whose weights are fetched */
/* Work groups per thread. A batch's components, and the hot lines, are
 * dealt to G = CYC_GROUPS T groups, not to T threads, and threads claim
 * groups from a shared counter, largest first (cyc_claim): a thread on a
 * free CPU takes the groups of a partner that was descheduled instead of
 * waiting for it at the barrier. Groups are whole components and whole
 * cache lines of hot weights, so who runs a group never changes the
 * arithmetic. */
#define CYC_GROUPS 8u

/* A batch's hot entries, feature-major: one record per hot feature the
 * batch touches, its entries (row's place in the batch, value) in row
 * order. */
struct hot_ent {
    uint32_t at; /* position - batch start */
    float x;
};
struct hot_rec {
    uint64_t start; /* first entry */
    uint32_t j, count; /* weight index, entries */
};
/* What the rows phase leaves the hot phase of each row of the batch (one
 * line holds four rows' both). */
struct row_d {
    double d; /* loss derivative at the batch's start */
    double h; /* curvature times |x_hot|_1 (hot_curv) */
};

/* One component of a batch. */
struct comp {
    uint64_t work;
    uint32_t rows, id;
};

/* Per-thread scratch: union-find over the features and the allocation. */
struct cyc_thread {
    /* [nf + 1], CYC_NONE: untouched */
    _Alignas(HOG_CACHELINE) uint32_t *parent;
    uint32_t *cid;      /* [nf + 1] component id of a root */
    uint32_t *touched;  /* [nf + 1] features touched in this batch */
    uint32_t ntouched;
    uint32_t *comp_of;  /* [B] component of each row of the batch */
    uint32_t *thr_of;   /* [B] group of each component */
    struct comp *comps; /* [B] */
    uint64_t *load;     /* [G] work of each group */
    uint64_t *cur;      /* [G] counts, then cursors */
    uint32_t *slot;     /* [G] a group's place in claim order */
    struct comp *gby;   /* [G] the groups in claim order */
    uint64_t *busy;     /* [T] the claim order's simulated thread loads */
    uint64_t *scur;     /* [G] hot records by slot, then cursors */
    uint32_t *hcnt;     /* [nf + 1] entries of a hot weight in the batch */
    uint32_t *htouch;   /* hot weights the batch touches */
    uint32_t *aj;       /* [nh] the hot phase's steps: weight, */
    double *ag;         /* gradient, */
    double *asq;        /* AdaGrad's increment */
    /* statistics of the batches this thread partitioned */
    uint64_t st_batches, st_comps, st_largest;
    double st_share, st_imb;
};

struct cyc {
    struct hog_fit *f;
    const hog_data *d;
    const hog_train_opts *o;
    struct hog_sgd s;
    hog_sgd_split_fn *step;
    unsigned T, G; /* threads; work groups per phase (CYC_GROUPS T) */
    struct hog_topo *topo;
    struct hog_pool *pool;
    uint64_t n, nf, B, nb, tau;
    bool bias_hot;

    /* rows without their hot features (== the data when nothing is hot) */
    struct hog_csr cold;
    uint64_t *cold_off;
    uint32_t *cold_idx;
    float *cold_val;
    /* hot features: the bias and the features in more than tau rows */
    uint64_t nh;          /* hot weights, the bias's included */
    uint32_t *hot_owner;  /* [nf + 1] group that steps weight j; CYC_NONE:
                             cold (the bias is weight nf) */
    uint64_t *hot_off;    /* [n + 1] a row's hot entries (bias not included) */
    uint32_t *hot_j;      /* weight index of each entry, feature order */
    float *hot_x;
    bool hot_alias;       /* the hot view is the data's own arrays */
    /* per partition: batch b's hot entries are ent[eoff[b]..eoff[b+1]),
     * the records of the group in claim slot k are
     * rec[roff[b (G+1) + k] .. roff[b (G+1) + k + 1]); the bias's group is
     * in slot bslot[b] */
    uint64_t *eoff, *roff;
    uint32_t *bslot;
    struct hot_ent *ent;
    struct hot_rec *rec;
    double curv;

    /* order and partition */
    uint64_t *perm;  /* [n] epoch position -> row */
    uint64_t *pos;   /* [n] positions, per batch per group, ascending */
    uint64_t *boff;  /* [nb G + 1] start of the list of batch b's group in
                        claim slot k: boff[b G + k] */
    uint64_t *gcur;  /* [G] where each slot's rows stopped (a segment can
                        end inside a batch; read after a barrier) */
    uint64_t *visit; /* [nb] batch order of this epoch */
    struct row_d *rd; /* [B] what the hot phase needs of each batch row */
    double *pl1;     /* [n] |x_hot|_1 of the row at each epoch position */
    double *hot_l1;  /* [n] |x_hot|_1 of each row, the bias's |value| in */
    struct cyc_thread *th;
    bool all_mode;   /* partition job: statistics with every feature */

    /* run state, written by thread 0 between barriers */
    unsigned epoch;
    uint64_t t_global, seg_lo, seg_len;
    uint32_t seg_want; /* what the open segment was begun with */

    /* checkpoints and interruption (core/fit.h) */
    uint64_t every;          /* checkpoint every this many steps, or never */
    uint64_t start_bi, start_epos; /* where the epoch starts (a resume) */
    atomic_bool stop[2];     /* batch bi's poll of the cancel flag: [bi & 1] */
    hog_status ck_st;        /* thread 0's checkpoint, read after a barrier */
    hog_err *err;
    struct hog_rng rows_rng; /* after the shuffle of the epoch */

    /* between the phases of a batch: the spinning barrier (pool/spin.h),
     * not the pool's, which sleeps */
    struct hog_spin_barrier bar;
    /* tickets of the group claims (cyc_claim), reset per epoch */
    _Alignas(HOG_CACHELINE) atomic_uint_fast64_t claim;
    char claim_pad[HOG_CACHELINE - sizeof(atomic_uint_fast64_t)];
    hog_cyclades_stats st;
};

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* ---- batch size and hot set --------------------------------------------- */

static uint64_t batch_size(const hog_data *d, const hog_train_opts *o)
{
    uint64_t n = d->m.rows;
    if (o->batch_size)
        return min_u64(o->batch_size, n);
    double avg = d->m.nnz ? (double)d->m.nnz / (double)n : 1.0;
    uint64_t b = (uint64_t)((double)CYC_BATCH_NNZ / (avg > 1.0 ? avg : 1.0));
    uint64_t hi = n / CYC_MIN_BATCHES > CYC_BATCH_MIN ? n / CYC_MIN_BATCHES
                                                      : CYC_BATCH_MIN;
    if (b < CYC_BATCH_MIN)
        b = CYC_BATCH_MIN;
    if (b > hi)
        b = hi;
    return b ? min_u64(b, n) : 1;
}

/* The largest tau with (B/n^2) sum_{deg <= tau} deg (deg - 1) at most
 * CYC_CONFLICT. */
static uint64_t hot_degree(const uint32_t *deg, uint64_t nf, uint64_t n,
                           uint64_t B, hog_err *err, hog_status *st)
{
    uint64_t *hist = calloc(n + 2, sizeof *hist);
    if (!hist) {
        *st = hog_errf(err, HOG_ENOMEM, "out of memory for a degree histogram");
        return 0;
    }
    for (uint64_t j = 0; j < nf; j++)
        hist[deg[j]]++;
    double budget = CYC_CONFLICT * (double)n * (double)n / (double)B;
    double sum = 0;
    uint64_t tau = 1; /* a feature of one row never conflicts */
    for (uint64_t k = 2; k <= n; k++) {
        sum += (double)hist[k] * (double)k * (double)(k - 1);
        if (sum > budget)
            break;
        tau = k;
    }
    free(hist);
    *st = HOG_OK;
    return tau;
}

/* ---- setup: degrees, hot set, cold and hot views ------------------------- */

static hog_status setup(struct cyc *c, hog_err *err)
{
    const struct hog_csr *m = &c->d->m;
    const hog_train_opts *o = c->o;
    const uint64_t n = c->n, nf = c->nf, base = m->off[0];
    const unsigned G = c->G;
    c->bias_hot = o->hot && o->bias != 0.0;
    c->cold = *m;
    c->tau = UINT64_MAX;
    switch (c->s.loss) {
    case HOG_LOSS_LOGISTIC: c->curv = 0.25; break;
    case HOG_LOSS_SQHINGE: c->curv = 2.0; break;
    default: c->curv = 1.0; break;
    }
    if (!o->hot)
        return HOG_OK;

    hog_status st = HOG_OK;
    uint32_t *deg = calloc(nf + 1, sizeof *deg);
    uint64_t *load = calloc(G, sizeof *load), *bucket = NULL;
    uint32_t *order = NULL;
    c->hot_owner = malloc((nf + 1) * sizeof *c->hot_owner);
    if (!deg || !load || !c->hot_owner)
        goto oom;
    for (uint64_t q = base; q < base + m->nnz; q++)
        if (deg[m->idx[q]] != UINT32_MAX)
            deg[m->idx[q]]++;
    c->tau = o->hot_degree ? o->hot_degree
                           : hot_degree(deg, nf, n, c->B, err, &st);
    if (st != HOG_OK)
        goto fail;

    /* Hot features by degree, largest first (a counting sort over the
     * degrees; the bias counts n), each to the least-loaded owner. */
    uint64_t nh = 0, maxdeg = c->bias_hot ? n : 0;
    for (uint64_t j = 0; j < nf; j++) {
        c->hot_owner[j] = CYC_NONE;
        if (deg[j] > c->tau) {
            nh++;
            if (deg[j] > maxdeg)
                maxdeg = deg[j];
        }
    }
    c->hot_owner[nf] = CYC_NONE;
    if (c->bias_hot)
        deg[nf] = (uint32_t)(n < UINT32_MAX ? n : UINT32_MAX);
    c->st.hot_features = nh;
    c->nh = nh + c->bias_hot;
    if (c->nh == 0)
        goto done;
    bucket = calloc(maxdeg + 2, sizeof *bucket);
    order = malloc(c->nh * sizeof *order);
    if (!bucket || !order)
        goto oom;
    for (uint64_t j = 0; j <= nf; j++)
        if (deg[j] > c->tau && (j < nf || c->bias_hot))
            bucket[maxdeg - deg[j]]++;
    for (uint64_t k = 0, at = 0; k <= maxdeg; k++) {
        uint64_t cnt = bucket[k];
        bucket[k] = at;
        at += cnt;
    }
    for (uint64_t j = 0; j <= nf; j++)
        if (deg[j] > c->tau && (j < nf || c->bias_hot))
            order[bucket[maxdeg - deg[j]]++] = (uint32_t)j;
    /* Groups take whole cache lines of weights (CYC_LINE of them), so that
     * the hot phase's stores (weight, AdaGrad sum, stamp) never share a
     * line between threads: the first hot weight of a line, in degree
     * order, deals the line, by the line's total hot degree, to the least
     * loaded of the G groups (threads claim groups per batch). Which group
     * steps a weight does not change the model: each weight takes one step
     * per batch, from its entries in row order. sh: the weights' offset
     * into their first line (malloc aligns to 16 bytes). */
    const uint64_t sh =
        ((uintptr_t)c->s.w % HOG_CACHELINE) / sizeof *c->s.w;
    for (uint64_t i = 0; i < c->nh; i++) {
        uint32_t j = order[i];
        if (c->hot_owner[j] != CYC_NONE)
            continue;
        uint64_t l0 = (j + sh) / CYC_LINE * CYC_LINE;
        l0 = l0 > sh ? l0 - sh : 0;
        uint64_t l1 = min_u64((j + sh) / CYC_LINE * CYC_LINE + CYC_LINE - sh,
                              nf + 1),
                 ld = 0;
        for (uint64_t k = l0; k < l1; k++)
            if (deg[k] > c->tau && (k < nf || c->bias_hot))
                ld += deg[k];
        unsigned best = 0;
        for (unsigned t = 1; t < G; t++)
            if (load[t] < load[best])
                best = t;
        for (uint64_t k = l0; k < l1; k++)
            if (deg[k] > c->tau && (k < nf || c->bias_hot))
                c->hot_owner[k] = best;
        load[best] += ld;
    }

    /* Cold rows and hot entries (zeros add nothing and are dropped). */
    uint64_t hot_nnz = 0, cold_nnz = 0;
    for (uint64_t q = base; q < base + m->nnz; q++) {
        bool hot = c->hot_owner[m->idx[q]] != CYC_NONE;
        cold_nnz += !hot;
        hot_nnz += hot && m->val[q] != 0.0f;
    }
    c->hot_l1 = malloc(n * sizeof *c->hot_l1);
    c->cold_off = calloc(n + 1, sizeof *c->cold_off);
    c->cold_idx = malloc((cold_nnz ? cold_nnz : 1) * sizeof *c->cold_idx);
    c->cold_val = malloc((cold_nnz ? cold_nnz : 1) * sizeof *c->cold_val);
    c->ent = malloc((hot_nnz ? hot_nnz : 1) * sizeof *c->ent);
    c->rec = malloc((hot_nnz ? hot_nnz : 1) * sizeof *c->rec);
    c->eoff = malloc((c->nb + 1) * sizeof *c->eoff);
    c->roff = malloc((c->nb * (G + 1) + 1) * sizeof *c->roff);
    c->bslot = calloc(c->nb, sizeof *c->bslot);
    if (!c->hot_l1 || !c->cold_off || !c->cold_idx || !c->cold_val ||
        !c->ent || !c->rec || !c->eoff || !c->roff || !c->bslot)
        goto oom;
    const double bias_l1 = c->bias_hot ? fabs(o->bias) : 0.0;
    if (cold_nnz == 0 && hot_nnz == m->nnz) {
        /* Every entry hot (text, most often): the rows are the hot view. */
        c->hot_off = (uint64_t *)m->off;
        c->hot_j = (uint32_t *)m->idx;
        c->hot_x = (float *)m->val;
        c->hot_alias = true;
        for (uint64_t r = 0; r < n; r++) {
            double l1 = bias_l1;
            for (uint64_t q = m->off[r]; q < m->off[r + 1]; q++)
                l1 += fabs((double)m->val[q]);
            c->hot_l1[r] = l1;
        }
    } else {
        c->hot_off = malloc((n + 1) * sizeof *c->hot_off);
        c->hot_j = malloc((hot_nnz ? hot_nnz : 1) * sizeof *c->hot_j);
        c->hot_x = malloc((hot_nnz ? hot_nnz : 1) * sizeof *c->hot_x);
        if (!c->hot_off || !c->hot_j || !c->hot_x)
            goto oom;
        uint64_t pc = 0, ph = 0;
        for (uint64_t r = 0; r < n; r++) {
            c->cold_off[r] = pc;
            c->hot_off[r] = ph;
            double l1 = bias_l1;
            for (uint64_t q = m->off[r]; q < m->off[r + 1]; q++) {
                uint32_t j = m->idx[q];
                if (c->hot_owner[j] == CYC_NONE) {
                    c->cold_idx[pc] = j;
                    c->cold_val[pc++] = m->val[q];
                } else if (m->val[q] != 0.0f) {
                    l1 += fabs((double)m->val[q]);
                    c->hot_j[ph] = j;
                    c->hot_x[ph++] = m->val[q];
                }
            }
            c->hot_l1[r] = l1;
        }
        c->cold_off[n] = pc;
        c->hot_off[n] = ph;
    }
    c->cold.off = c->cold_off;
    c->cold.idx = c->cold_idx;
    c->cold.val = c->cold_val;
    c->cold.nnz = cold_nnz;
    c->st.hot_nnz_share =
        m->nnz ? (double)(m->nnz - cold_nnz) / (double)m->nnz : 0.0;
done:
    free(deg);
    free(load);
    free(bucket);
    free(order);
    return HOG_OK;
oom:
    st = hog_errf(err, HOG_ENOMEM,
                  "out of memory for Cyclades' hot-feature tables");
fail:
    free(deg);
    free(load);
    free(bucket);
    free(order);
    return st;
}

/* ---- partition: union-find per batch, components to threads -------------- */

static inline uint32_t uf_find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]]; /* path halving */
        x = parent[x];
    }
    return x;
}

static inline uint32_t uf_touch(struct cyc_thread *w, uint32_t x)
{
    if (w->parent[x] == CYC_NONE) {
        w->parent[x] = x;
        w->touched[w->ntouched++] = x;
        return x;
    }
    return uf_find(w->parent, x);
}

static int comp_cmp(const void *a, const void *b)
{
    const struct comp *x = a, *y = b;
    if (x->work != y->work)
        return x->work > y->work ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* slot[g]: group g's place when the groups are ordered by load, heaviest
 * first, ties by index; by[k]: the group in place k. */
static void order_groups(const uint64_t *load, unsigned G, uint32_t *slot,
                         struct comp *by)
{
    for (unsigned g = 0; g < G; g++)
        by[g] = (struct comp){ load[g], 0, g };
    qsort(by, G, sizeof *by, comp_cmp);
    for (unsigned k = 0; k < G; k++)
        slot[by[k].id] = k;
}

static void partition_batch(struct cyc *c, struct cyc_thread *w, uint64_t b,
                            bool all)
{
    const unsigned T = c->T;
    const uint64_t lo = b * c->B, hi = min_u64(lo + c->B, c->n);
    const struct hog_csr *m = all ? &c->d->m : &c->cold;
    const bool bias = c->o->bias != 0.0 && (all || !c->bias_hot);
    const uint32_t bias_f = (uint32_t)c->nf;

    for (uint64_t p = lo; p < hi; p++) {
        uint64_t row = c->perm[p];
        uint32_t r0 = CYC_NONE;
        for (uint64_t q = m->off[row]; q < m->off[row + 1]; q++) {
            uint32_t r = uf_touch(w, m->idx[q]);
            if (r0 == CYC_NONE)
                r0 = r;
            else if (r != r0)
                w->parent[r] = r0; /* r0 stays a root */
        }
        if (bias) {
            uint32_t r = uf_touch(w, bias_f);
            if (r0 != CYC_NONE && r != r0)
                w->parent[r] = r0;
        }
    }
    uint32_t nc = 0, largest = 0;
    for (uint64_t p = lo; p < hi; p++) {
        uint64_t row = c->perm[p];
        uint64_t a = m->off[row], e = m->off[row + 1];
        uint32_t f0 = a < e ? m->idx[a] : bias ? bias_f : CYC_NONE;
        uint32_t id;
        if (f0 == CYC_NONE) {
            id = nc++;
            w->comps[id] = (struct comp){ 0, 0, id };
        } else {
            uint32_t root = uf_find(w->parent, f0);
            if (w->cid[root] == CYC_NONE) {
                w->cid[root] = nc;
                w->comps[nc] = (struct comp){ 0, 0, nc };
                nc++;
            }
            id = w->cid[root];
        }
        /* work: the dot and the update of the cold entries, the hot
         * entries' part of the margin, and a fixed cost per row */
        uint64_t hot = c->hot_off ? c->hot_off[row + 1] - c->hot_off[row] : 0;
        w->comps[id].work += 2 * (e - a) + hot + 8;
        if (++w->comps[id].rows > largest)
            largest = w->comps[id].rows;
        w->comp_of[p - lo] = id;
    }
    for (uint32_t i = 0; i < w->ntouched; i++)
        w->parent[w->touched[i]] = w->cid[w->touched[i]] = CYC_NONE;
    w->ntouched = 0;
    w->st_batches++;
    w->st_comps += nc;
    if (largest > w->st_largest)
        w->st_largest = largest;
    w->st_share += (double)largest / (double)(hi - lo);
    if (all)
        return;

    /* Largest first, each to the least-loaded of G groups; then the
     * groups in claim order, heaviest first (slot), so that what is left
     * when a thread finishes is small. */
    const unsigned G = c->G;
    qsort(w->comps, nc, sizeof *w->comps, comp_cmp);
    uint64_t total = 0, most = 0;
    for (unsigned g = 0; g < G; g++)
        w->load[g] = 0;
    for (uint32_t i = 0; i < nc; i++) {
        unsigned best = 0;
        for (unsigned g = 1; g < G; g++)
            if (w->load[g] < w->load[best])
                best = g;
        w->thr_of[w->comps[i].id] = best;
        w->load[best] += w->comps[i].work;
        total += w->comps[i].work;
    }
    order_groups(w->load, G, w->slot, w->gby);
    /* thread imbalance: the claims on T idle threads, each group to the
     * first thread free */
    for (unsigned t = 0; t < T; t++)
        w->busy[t] = 0;
    for (unsigned k = 0; k < G; k++) {
        unsigned best = 0;
        for (unsigned t = 1; t < T; t++)
            if (w->busy[t] < w->busy[best])
                best = t;
        w->busy[best] += w->gby[k].work;
    }
    for (unsigned t = 0; t < T; t++)
        if (w->busy[t] > most)
            most = w->busy[t];
    w->st_imb += total ? (double)most * T / (double)total : 1.0;
    for (unsigned k = 0; k < G; k++)
        w->cur[k] = 0;
    for (uint64_t p = lo; p < hi; p++)
        w->cur[w->slot[w->thr_of[w->comp_of[p - lo]]]]++;
    uint64_t at = lo;
    for (unsigned k = 0; k < G; k++) {
        uint64_t cnt = w->cur[k];
        c->boff[b * G + k] = at;
        w->cur[k] = at;
        at += cnt;
    }
    for (uint64_t p = lo; p < hi; p++)
        c->pos[w->cur[w->slot[w->thr_of[w->comp_of[p - lo]]]]++] = p;
}

/* Batch b's hot entries, feature-major, records grouped by owner group in
 * claim order: a counting sort over the hot weights the batch touches. */
static void hot_layout(struct cyc *c, struct cyc_thread *w, uint64_t b)
{
    const unsigned G = c->G, G1 = G + 1;
    const uint64_t lo = b * c->B, hi = min_u64(lo + c->B, c->n);
    const uint64_t e0 = c->eoff[b];
    const uint32_t *hj = c->hot_j;
    const uint64_t *ho = c->hot_off;
    uint32_t *hcnt = w->hcnt;
    uint64_t nt = 0;
    for (uint64_t p = lo; p < hi; p++) {
        uint64_t row = c->perm[p];
        for (uint64_t q = ho[row]; q < ho[row + 1]; q++) {
            uint32_t j = hj[q];
            w->htouch[nt] = j;
            nt += hcnt[j]++ == 0; /* branch-free: first touches are random */
        }
    }
    /* the groups in claim order: by the batch's entries, heaviest first */
    uint64_t *rb = &c->roff[b * G1];
    for (unsigned g = 0; g < G; g++)
        w->load[g] = w->cur[g] = 0;
    for (uint64_t i = 0; i < nt; i++) {
        uint32_t g = c->hot_owner[w->htouch[i]];
        w->load[g] += hcnt[w->htouch[i]];
        w->cur[g]++;
    }
    order_groups(w->load, G, w->slot, w->gby);
    if (c->bias_hot)
        c->bslot[b] = w->slot[c->hot_owner[c->nf]];
    for (unsigned g = 0; g < G; g++) /* counts by slot */
        w->scur[w->slot[g]] = w->cur[g];
    uint64_t at = e0; /* records: at most one per entry */
    for (unsigned k = 0; k < G; k++) {
        uint64_t cnt = w->scur[k];
        rb[k] = w->scur[k] = at;
        at += cnt;
    }
    rb[G] = at;
    for (uint64_t i = 0; i < nt; i++) {
        uint32_t j = w->htouch[i];
        struct hot_rec *r =
            &c->rec[w->scur[w->slot[c->hot_owner[j]]]++];
        r->j = j;
        r->count = hcnt[j];
    }
    uint64_t e = e0;
    for (uint64_t r = rb[0]; r < rb[G]; r++) {
        c->rec[r].start = e;
        hcnt[c->rec[r].j] = (uint32_t)(e - e0); /* now a cursor */
        e += c->rec[r].count;
    }
    for (uint64_t p = lo; p < hi; p++) {
        uint64_t row = c->perm[p];
        for (uint64_t q = ho[row]; q < ho[row + 1]; q++)
            c->ent[e0 + hcnt[hj[q]]++] =
                (struct hot_ent){ (uint32_t)(p - lo), c->hot_x[q] };
    }
    for (uint64_t i = 0; i < nt; i++)
        hcnt[w->htouch[i]] = 0;
}

static void partition_job(void *arg, unsigned tid, unsigned nthreads)
{
    struct cyc *c = arg;
    uint64_t nb = c->all_mode ? min_u64(c->nb, CYC_STATS_BATCHES) : c->nb;
    for (uint64_t b = tid; b < nb; b += nthreads) {
        partition_batch(c, &c->th[tid], b, c->all_mode);
        if (c->nh && !c->all_mode) {
            hot_layout(c, &c->th[tid], b);
            for (uint64_t p = b * c->B; p < min_u64(b * c->B + c->B, c->n);
                 p++)
                c->pl1[p] = c->hot_l1[c->perm[p]];
        }
    }
}

/* Runs the partition job; statistics into st (all: the _all_ fields). */
static void partition(struct cyc *c, bool all)
{
    for (unsigned t = 0; t < c->T; t++) {
        struct cyc_thread *w = &c->th[t];
        w->st_batches = w->st_comps = w->st_largest = 0;
        w->st_share = w->st_imb = 0;
    }
    c->all_mode = all;
    if (c->nh && !all) {
        uint64_t e = 0;
        for (uint64_t b = 0; b < c->nb; b++) {
            c->eoff[b] = e;
            uint64_t lo = b * c->B, hi = min_u64(lo + c->B, c->n);
            for (uint64_t p = lo; p < hi; p++)
                e += c->hot_off[c->perm[p] + 1] - c->hot_off[c->perm[p]];
        }
        c->eoff[c->nb] = e;
    }
    hog_pool_run(c->pool, partition_job, c);
    c->boff[c->nb * c->G] = c->n;
    uint64_t batches = 0, comps = 0, largest = 0;
    double share = 0, imb = 0;
    for (unsigned t = 0; t < c->T; t++) {
        struct cyc_thread *w = &c->th[t];
        batches += w->st_batches;
        comps += w->st_comps;
        if (w->st_largest > largest)
            largest = w->st_largest;
        share += w->st_share;
        imb += w->st_imb;
    }
    hog_cyclades_stats *s = &c->st;
    if (all) {
        s->all_components = (double)comps / (double)batches;
        s->all_largest_rows = largest;
        s->all_largest_share = share / (double)batches;
        return;
    }
    /* running means over every partition */
    double k = s->partitions;
    s->components = (s->components * k + (double)comps / batches) / (k + 1);
    s->largest_share = (s->largest_share * k + share / batches) / (k + 1);
    s->imbalance = (s->imbalance * k + imb / batches) / (k + 1);
    if (largest > s->largest_rows)
        s->largest_rows = largest;
    s->partitions++;
}

/* ---- group claims ------------------------------------------------------- */

/* Each phase of a batch (rows, hot weights) offers G groups in claim order;
 * every thread takes tickets from one shared counter until a ticket falls
 * past the phase's groups. Each thread thus takes exactly one ticket too
 * many per phase, so a phase uses G + T tickets and every thread knows
 * where the next phase's start (*base) without resetting the counter; the
 * barrier after each phase keeps phases apart. Ticket k of a phase is
 * group slot k: the heaviest groups go first, and a thread that was
 * descheduled costs the others only the group it holds. */
static inline bool cyc_claim(struct cyc *c, uint64_t *base, uint32_t *slot)
{
    uint64_t k = atomic_fetch_add_explicit(&c->claim, 1, memory_order_relaxed) -
                 *base;
    if (k < c->G) {
        *slot = (uint32_t)k;
        return true;
    }
    *base += c->G + c->T;
    return false;
}

/* ---- the run ------------------------------------------------------------ */

/* After the rows of positions [lo + a, lo + z) of batch b: the group in
 * claim slot k sums the gradients of its hot weights in row order and
 * takes their step at t_end; when the segment goes on, the new values are
 * what rows read. Whoever runs it, each weight's step is the same. */
/* A row's curvature bound at the batch's start, from its loss derivative
 * d: the logistic loss's second derivative there, sigma(m) (1 - sigma(m)) =
 * |d| (1 - |d|) (its bound 1/4 holds at m = 0 only, and damped well fitted
 * text features for nothing); otherwise the loss's bound c->curv. */
static inline double hot_curv(const struct cyc *c, double d)
{
    if (c->s.loss != HOG_LOSS_LOGISTIC)
        return c->curv;
    double a = fabs(d);
    return a * (1.0 - a);
}

/* A hot weight's damped gradient (the rule in the comment at the top of
 * this file): G / max(1, eta_j R_j), R_j = sum_i |x_ij| h_i |x_i,hot|_1
 * (r1), with eta_j the step size of the weight's step: eta_t for the
 * shared schedules (eta = eta_t), AdaGrad's eta / sqrt(eps + A + S) with A
 * the accumulator before the step and S the batch's sum of squared
 * gradients. Compared squared, so that an undamped weight costs no square
 * root. */
static inline double hot_damp(double g, double sq, double r1, double eta,
                              bool ada, const _Atomic float *g2, uint32_t j)
{
    double lim = eta * r1;
    if (!ada)
        return lim > 1.0 ? g / lim : g;
    double acc = HOG_ADAGRAD_EPS +
                 (double)atomic_load_explicit(&g2[j], memory_order_relaxed) +
                 sq;
    return lim * lim > acc ? g * (sqrt(acc) / lim) : g;
}

static void hot_group(struct cyc *c, struct cyc_thread *w, uint64_t b,
                      uint32_t k, uint64_t a, uint64_t z, uint32_t t_end)
{
    const unsigned G1 = c->G + 1;
    const bool ada = c->s.schedule == HOG_SCHED_ADAGRAD;
    const double eta = ada ? c->s.eta : c->s.seg_eta[t_end];
    const struct row_d *rd = c->rd;
    const uint64_t bs = c->s.n_features;
    if (c->bias_hot && c->bslot[b] == k) {
        double g = 0, sq = 0, r1 = 0;
        for (uint64_t i = a; i < z; i++) {
            g += rd[i].d;
            sq += rd[i].d * rd[i].d;
            r1 += rd[i].h;
        }
        const double bv = c->s.bias;
        g *= bv;
        sq *= bv * bv;
        g = hot_damp(g, sq, fabs(bv) * r1, eta, ada, c->s.g2, (uint32_t)bs);
        if (g != 0.0)
            hog_sgd_apply(&c->s, bs, t_end, g, sq);
    }
    uint64_t na = 0;
    const uint64_t rlo = c->roff[b * G1 + k], rhi = c->roff[b * G1 + k + 1];
    /* in locals: the stores to aj, ag and asq below may alias c as far as
     * the compiler knows, and would reload these on every record */
    const struct hot_rec *rec = c->rec;
    const struct hot_ent *ent = c->ent;
    const _Atomic float *wv = c->s.w, *g2 = c->s.g2;
    const _Atomic uint32_t *stamp = c->s.stamp;
    uint32_t *aj = w->aj;
    double *ag = w->ag, *asq = w->asq;
    for (uint64_t r = rlo; r < rhi; r++) {
        /* The weights this phase steps were read by the other threads'
         * rows since their owner last wrote them: fetch their lines for
         * writing well ahead, so that the misses overlap instead of
         * stalling the steps one by one. */
        if (r + CYC_PREFETCH < rhi) {
            uint32_t jp = rec[r + CYC_PREFETCH].j;
            __builtin_prefetch((const void *)&wv[jp], 1, 3);
            if (g2)
                __builtin_prefetch((const void *)&g2[jp], 1, 3);
            if (stamp)
                __builtin_prefetch((const void *)&stamp[jp], 1, 3);
        }
        const struct hot_rec *rc = &rec[r];
        const struct hot_ent *e = &ent[rc->start];
        double g = 0.0, sq = 0.0, r1 = 0.0;
        for (uint32_t q = 0; q < rc->count; q++) {
            uint32_t at = e[q].at;
            if (at < a || at >= z)
                continue;
            double x = e[q].x, gi = rd[at].d * x;
            g += gi;
            sq += gi * gi;
            r1 += fabs(x) * rd[at].h;
        }
        aj[na] = rc->j;
        ag[na] = hot_damp(g, sq, r1, eta, ada, g2, rc->j);
        asq[na] = sq;
        na += g != 0.0;
    }
    hog_sgd_apply_many(&c->s, aj, ag, ada ? asq : NULL, na, t_end);
}

/* The segment ends at a barrier: every weight brought up to date (threads
 * share the range), and thread 0 starts the next segment. */
static void end_segment(struct cyc *c, unsigned tid, unsigned T)
{
    struct hog_sgd *s = &c->s;
    uint64_t nw = s->n_weights;
    hog_sgd_catch_up_range(s, nw * tid / T, nw * (tid + 1) / T,
                           (uint32_t)c->seg_len);
    hog_spin_barrier_wait(&c->bar);
    if (tid == 0) {
        c->t_global += c->seg_len;
        c->seg_lo += c->seg_len;
        if (c->seg_lo < c->n) {
            uint64_t left = c->n - c->seg_lo;
            c->seg_want = left < UINT32_MAX ? (uint32_t)left : UINT32_MAX;
            c->seg_len = hog_sgd_segment_begin(s, c->t_global, c->seg_want);
        }
    }
    hog_spin_barrier_wait(&c->bar);
}

/* ---- checkpoints ---------------------------------------------------------- */

/* Hands the state after epoch position epos (a batch boundary) to the
 * front door; HOG_EINTR when cancelled. One thread, the others waiting. */
static hog_status checkpoint(struct cyc *c, uint64_t epos, bool cancelled)
{
    uint32_t seg_pos = (uint32_t)(epos - c->seg_lo);
    if (epos >= c->n)
        seg_pos = 0; /* the epoch's last segment has ended */
    struct hog_train_state st = {
        .epoch = c->epoch, .pos = epos,
        .t_global = c->t_global + seg_pos, .seg_t0 = c->t_global,
        .seg_want = epos < c->n ? c->seg_want : 0, .seg_pos = seg_pos,
        .rng = c->rows_rng
    };
    hog_status r = hog_sgd_state_capture(&c->s, seg_pos, &st, c->err);
    if (r == HOG_OK)
        r = c->f->save(c->f, &st, cancelled, c->err);
    hog_train_state_free(&st);
    return r == HOG_OK && cancelled ? HOG_EINTR : r;
}

/* The rows of batch b's group in claim slot k at epoch positions below
 * plim, in permutation order, from where the group stopped (first: from its
 * start). Rows of other groups share no cold weight with these. */
static void rows_group(struct cyc *c, uint64_t b, uint32_t k, uint64_t epos,
                       uint64_t plim, bool first)
{
    struct hog_sgd *s = &c->s;
    hog_sgd_split_fn *step = c->step;
    const struct hog_csr *cm = &c->cold;
    const bool sq = s->loss == HOG_LOSS_SQUARED, hot = c->nh > 0;
    const bool with_bias = !c->bias_hot;
    const double label_pos = s->label_pos, bias = s->bias;
    const uint64_t lo = b * c->B, bs = s->n_features;
    uint64_t cur = first ? c->boff[b * c->G + k] : c->gcur[k];
    const uint64_t end = c->boff[b * c->G + k + 1];
    for (; cur < end && c->pos[cur] < plim; cur++) {
        uint64_t p = c->pos[cur], row = c->perm[p];
        uint32_t t = (uint32_t)(epos + (p - lo) - c->seg_lo);
        struct hog_row r = hog_csr_row(cm, row);
        double y = sq                          ? (double)r.y
                   : (double)r.y == label_pos ? 1.0
                                              : -1.0;
        double mx = 0.0;
        if (hot) {
            for (uint64_t q = c->hot_off[row]; q < c->hot_off[row + 1]; q++)
                mx += (double)hog_w_load_relaxed(s->w, c->hot_j[q]) *
                      c->hot_x[q];
            if (c->bias_hot)
                mx += (double)hog_w_load_relaxed(s->w, bs) * bias;
        }
        double dv = step(s, r, y, t, mx, with_bias);
        if (hot) {
            c->rd[p - lo] =
                (struct row_d){ dv, hot_curv(c, dv) * c->pl1[p] };
        }
    }
    c->gcur[k] = cur;
}

static void run_job(void *arg, unsigned tid, unsigned T)
{
    struct cyc *c = arg;
    const bool hot = c->nh > 0;
    struct cyc_thread *w = &c->th[tid];
    uint64_t base = 0; /* first ticket of this phase's claims */
    uint32_t k;

    uint64_t epos = c->start_epos; /* epoch position of the batch's first row */
    for (uint64_t bi = c->start_bi; bi < c->nb; bi++) {
        const uint64_t b = c->visit[bi], lo = b * c->B;

        const uint64_t len = min_u64(c->B, c->n - lo);
        for (uint64_t done = 0; done < len;) {
            const uint64_t seg_end = c->seg_lo + c->seg_len;
            const uint64_t sub = min_u64(len - done, seg_end - (epos + done));
            const uint64_t plim = lo + done + sub;
            /* the rows of [done, done + sub) of each claimed group; a
             * group's rows past a segment's end wait in gcur[k] for the
             * next sub-batch, whoever claims it then */
            while (cyc_claim(c, &base, &k))
                rows_group(c, b, k, epos, plim, done == 0);
            /* the cancel flag, polled once the batch's rows are done and
             * published to every thread by the barriers that follow */
            if (tid == 0 && done + sub == len)
                atomic_store_explicit(&c->stop[bi & 1],
                                      hog_fit_cancelled(c->f),
                                      memory_order_relaxed);
            hog_spin_barrier_wait(&c->bar);
            const bool seg_over = epos + done + sub == seg_end;
            if (hot) {
                uint32_t t_end = (uint32_t)(epos + done + sub - 1 - c->seg_lo);
                while (cyc_claim(c, &base, &k))
                    hot_group(c, w, b, k, done, done + sub, t_end);
                hog_spin_barrier_wait(&c->bar);
            }
            done += sub;
            if (seg_over)
                end_segment(c, tid, T);
        }
        epos += len;
        if (tid == 0)
            c->f->tick(c->f, c->epoch, epos, c->n);
        /* A checkpoint when the batch crossed a multiple of `every` steps
         * (counted from the start of training: the same points however
         * the run was resumed), or when cancelled; the epoch's last batch
         * leaves both to the epoch's end. */
        uint64_t g = c->t_global + (epos - c->seg_lo);
        bool stop = atomic_load_explicit(&c->stop[bi & 1], memory_order_relaxed);
        bool ck = c->every && g / c->every != (g - len) / c->every;
        if (epos < c->n && (ck || stop)) {
            if (tid == 0)
                c->ck_st = checkpoint(c, epos, stop);
            hog_spin_barrier_wait(&c->bar);
            if (c->ck_st != HOG_OK)
                return;
        }
    }
}

/* ---- set-up and tear-down ----------------------------------------------- */

static hog_status make_pool(struct cyc *c, hog_err *err)
{
    hog_status st = hog_topo_load(&c->topo, NULL, NULL, NULL, err);
    if (st != HOG_OK)
        return st;
    struct hog_topo_info info;
    hog_topo_info(c->topo, &info);
    unsigned T = c->o->threads ? c->o->threads
                               : (info.allowed_cores ? info.allowed_cores : 1);
    struct hog_bind b;
    hog_bind_init(&b);
    b.oversubscribe = true; /* more threads than PUs: allowed, reproducible */
    struct hog_plan *plan;
    st = hog_topo_plan(c->topo, &b, T, &plan, err);
    if (st != HOG_OK)
        return st;
    st = hog_pool_create(plan, &c->pool, err);
    hog_plan_free(plan);
    if (st != HOG_OK)
        return st;
    c->T = hog_pool_size(c->pool);
    /* with more threads than CPUs a spinner holds the CPU of a thread it
     * waits for */
    hog_spin_barrier_init(&c->bar, c->T, c->T > info.allowed_pus);
    return HOG_OK;
}

static void cyc_free(struct cyc *c)
{
    if (c->th) {
        for (unsigned t = 0; t < c->T; t++) {
            struct cyc_thread *w = &c->th[t];
            free(w->parent);
            free(w->cid);
            free(w->touched);
            free(w->comp_of);
            free(w->thr_of);
            free(w->comps);
            free(w->load);
            free(w->cur);
            free(w->slot);
            free(w->gby);
            free(w->busy);
            free(w->scur);
            free(w->hcnt);
            free(w->htouch);
            free(w->aj);
            free(w->ag);
            free(w->asq);
        }
        free(c->th);
    }
    hog_pool_destroy(c->pool);
    hog_topo_free(c->topo);
    free(c->cold_off);
    free(c->cold_idx);
    free(c->cold_val);
    if (!c->hot_alias) {
        free(c->hot_off);
        free(c->hot_j);
        free(c->hot_x);
    }
    free(c->hot_owner);
    free(c->eoff);
    free(c->roff);
    free(c->bslot);
    free(c->gcur);
    free(c->ent);
    free(c->rec);
    free(c->perm);
    free(c->pos);
    free(c->boff);
    free(c->visit);
    free(c->rd);
    free(c->pl1);
    free(c->hot_l1);
    hog_sgd_free(&c->s);
}

static hog_status alloc_threads(struct cyc *c, hog_err *err)
{
    unsigned T = c->T;
    size_t nf1 = c->nf + 1, B = c->B;
    c->th = aligned_alloc(HOG_CACHELINE,
                          ((T * sizeof *c->th + HOG_CACHELINE - 1) /
                           HOG_CACHELINE) * HOG_CACHELINE);
    if (!c->th)
        goto oom;
    memset(c->th, 0, T * sizeof *c->th);
    for (unsigned t = 0; t < T; t++) {
        struct cyc_thread *w = &c->th[t];
        w->parent = malloc(nf1 * sizeof *w->parent);
        w->cid = malloc(nf1 * sizeof *w->cid);
        w->touched = malloc(nf1 * sizeof *w->touched);
        w->comp_of = malloc(B * sizeof *w->comp_of);
        w->thr_of = malloc(B * sizeof *w->thr_of);
        w->comps = malloc(B * sizeof *w->comps);
        w->load = malloc(c->G * sizeof *w->load);
        w->cur = malloc(c->G * sizeof *w->cur);
        w->slot = malloc(c->G * sizeof *w->slot);
        w->gby = malloc(c->G * sizeof *w->gby);
        w->busy = malloc(T * sizeof *w->busy);
        w->scur = malloc(c->G * sizeof *w->scur);
        /* +1: the branch-free append */
        w->hcnt = calloc(c->nh ? nf1 : 1, sizeof *w->hcnt);
        w->htouch = malloc(((size_t)c->nh + 1) * sizeof *w->htouch);
        w->aj = malloc(((size_t)c->nh + 1) * sizeof *w->aj);
        w->ag = malloc(((size_t)c->nh + 1) * sizeof *w->ag);
        w->asq = malloc(((size_t)c->nh + 1) * sizeof *w->asq);
        if (!w->parent || !w->cid || !w->touched || !w->comp_of ||
            !w->thr_of || !w->comps || !w->load || !w->cur || !w->slot ||
            !w->busy || !w->scur || !w->gby || !w->hcnt ||
            !w->htouch || !w->aj || !w->ag || !w->asq)
            goto oom;
        memset(w->parent, 0xff, nf1 * sizeof *w->parent);
        memset(w->cid, 0xff, nf1 * sizeof *w->cid);
    }
    return HOG_OK;
oom:
    return hog_errf(err, HOG_ENOMEM,
                    "out of memory for Cyclades' per-thread tables (%u "
                    "threads, %llu features)",
                    T, (unsigned long long)c->nf);
}

/* The epoch's row order: the serial trainer's permutation (stream 0) when
 * partitioning, else the previous one with its batches reshuffled
 * (stream 1). Returns true when the rows must be partitioned again. */
static bool next_order(struct cyc *c, struct hog_rng *rows,
                       struct hog_rng *batches, unsigned epoch)
{
    if (epoch == 1 || c->o->repartition) {
        hog_shuffle_u64(rows, c->perm, c->n);
        for (uint64_t b = 0; b < c->nb; b++)
            c->visit[b] = b;
        return true;
    }
    hog_shuffle_u64(batches, c->visit, c->nb);
    return false;
}

static hog_status prepare(struct cyc *c, struct hog_fit *f, bool parallel,
                          hog_err *err)
{
    memset(c, 0, sizeof *c);
    c->f = f;
    c->d = f->train;
    c->o = f->o;
    c->n = c->d->m.rows;
    c->nf = c->d->n_features;
    c->T = 1;
    if (c->nf >= CYC_NONE)
        return hog_errf(err, HOG_ERANGE,
                        "Cyclades handles at most %u features, not %llu",
                        CYC_NONE - 1, (unsigned long long)c->nf);
    hog_status st = hog_sgd_init(&c->s, c->o, c->d, err);
    if (st != HOG_OK)
        return st;
    c->step = hog_sgd_split_step(&c->s);
    if (parallel && (st = make_pool(c, err)) != HOG_OK)
        return st;
    c->G = CYC_GROUPS * c->T;
    c->B = batch_size(c->d, c->o);
    c->nb = (c->n + c->B - 1) / c->B;
    c->perm = malloc(c->n * sizeof *c->perm);
    c->visit = malloc(c->nb * sizeof *c->visit);
    if (!c->perm || !c->visit)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the row order");
    for (uint64_t i = 0; i < c->n; i++)
        c->perm[i] = i;
    return HOG_OK;
}

/* Epoch position of the first row of the epoch's last batch. */
static uint64_t last_batch_start(const struct cyc *c)
{
    uint64_t b = c->visit[c->nb - 1];
    return c->n - (min_u64(b * c->B + c->B, c->n) - b * c->B);
}

/* Puts the run where checkpoint f->resume left it: the orders of the
 * epochs up to its epoch replayed from the seed, the SGD state restored,
 * the open segment rebuilt. *first: the epoch to train next; *mid: it is
 * under way (its order is drawn, its start set). */
static hog_status resume(struct cyc *c, struct hog_rng *rows,
                         struct hog_rng *batches, unsigned *first, bool *mid,
                         hog_err *err)
{
    const struct hog_train_state *r = c->f->resume;
    for (uint64_t e = 1; e <= r->epoch; e++)
        next_order(c, rows, batches, (unsigned)e);
    if (memcmp(rows, &r->rng, sizeof *rows) != 0)
        return hog_errf(err, HOG_EINVAL, "the checkpoint's random state "
                        "does not follow from this seed (different seed "
                        "or data)");
    if (r->pos >= c->n) { /* a completed epoch */
        if (r->seg_pos != 0 || r->pos != c->n)
            return hog_errf(err, HOG_EINVAL, "bad checkpoint: an epoch's end "
                            "inside a segment");
        hog_status st = hog_sgd_state_restore(&c->s, r, err);
        if (st != HOG_OK)
            return st;
        hog_sgd_copy_weights(&c->s, c->f->model->w);
        c->t_global = r->t_global;
        *first = (unsigned)r->epoch + 1;
        *mid = false;
        return HOG_OK;
    }
    /* inside an epoch: at a batch boundary of this order */
    uint64_t epos = 0, bi = 0;
    while (bi < c->nb && epos < r->pos) {
        uint64_t b = c->visit[bi++];
        epos += min_u64(b * c->B + c->B, c->n) - b * c->B;
    }
    if (epos != r->pos || r->seg_pos > r->pos || r->seg_want == 0)
        return hog_errf(err, HOG_EINVAL,
                        "bad checkpoint: row %llu of epoch %llu is not where "
                        "a batch ends with these options (--batch-size, "
                        "--repartition)",
                        (unsigned long long)r->pos,
                        (unsigned long long)r->epoch);
    c->t_global = r->seg_t0;
    c->seg_lo = r->pos - r->seg_pos;
    c->seg_want = r->seg_want;
    c->seg_len = hog_sgd_segment_begin(&c->s, c->t_global, c->seg_want);
    if (r->t_global != r->seg_t0 + r->seg_pos || r->seg_pos > c->seg_len ||
        c->seg_lo + c->seg_len > c->n)
        return hog_errf(err, HOG_EINVAL, "bad checkpoint: its segment does "
                        "not fit these options");
    hog_status st = hog_sgd_state_restore(&c->s, r, err);
    if (st != HOG_OK)
        return st;
    c->start_bi = bi;
    c->start_epos = epos;
    *first = (unsigned)r->epoch;
    *mid = true;
    return HOG_OK;
}

hog_status hog_cyclades_train(struct hog_fit *f, hog_err *err)
{
    struct cyc c;
    double t_start = hog_now();
    hog_status st = prepare(&c, f, true, err);
    if (st != HOG_OK)
        goto out;
    if ((st = setup(&c, err)) != HOG_OK ||
        (st = alloc_threads(&c, err)) != HOG_OK)
        goto out;
    c.pos = malloc(c.n * sizeof *c.pos);
    c.boff = malloc((c.nb * c.G + 1) * sizeof *c.boff);
    c.gcur = malloc(c.G * sizeof *c.gcur);
    c.rd = calloc(c.B, sizeof *c.rd);
    c.pl1 = calloc(c.n, sizeof *c.pl1);
    if (!c.pos || !c.boff || !c.gcur || !c.rd || !c.pl1) {
        st = hog_errf(err, HOG_ENOMEM, "out of memory for the partition");
        goto out;
    }
    c.st.setup_seconds = hog_now() - t_start;
    c.st.threads = c.T;
    c.st.batch_size = c.B;
    c.st.batches = c.nb;
    c.st.hot_degree = c.o->hot ? c.tau : 0;
    c.st.bias_hot = c.bias_hot;

    struct hog_rng rows, batches;
    hog_rng_seed(&rows, c.o->seed, 0);
    hog_rng_seed(&batches, c.o->seed, 1);
    c.err = err;
    c.every = f->ckpt_rows;
    unsigned first = 1;
    bool resumed_mid = false, need_partition = false;
    if (f->resume && (st = resume(&c, &rows, &batches, &first, &resumed_mid,
                                  err)) != HOG_OK)
        goto out;
    need_partition = f->resume != NULL;
    double t0 = t_start, extra = 0.0; /* extra: diagnostics, not training */
    for (unsigned epoch = first; epoch <= c.o->epochs && st == HOG_OK;
         epoch++) {
        c.epoch = epoch;
        bool fresh = !(resumed_mid && epoch == first);
        if ((fresh && next_order(&c, &rows, &batches, epoch)) ||
            need_partition) {
            double tp = hog_now();
            partition(&c, false);
            c.st.partition_seconds += hog_now() - tp;
            if (epoch == 1 && c.o->cyclades_stats) {
                double ta = hog_now();
                partition(&c, true);
                extra += hog_now() - ta;
            }
            need_partition = false;
        }
        c.rows_rng = rows;
        if (fresh) {
            c.start_bi = c.start_epos = 0;
            c.seg_lo = 0;
            c.seg_want = c.n < UINT32_MAX ? (uint32_t)c.n : UINT32_MAX;
            c.seg_len = hog_sgd_segment_begin(&c.s, c.t_global, c.seg_want);
        }
        c.ck_st = HOG_OK;
        atomic_store_explicit(&c.claim, 0, memory_order_relaxed);
        hog_pool_run(c.pool, run_job, &c);
        if ((st = c.ck_st) != HOG_OK)
            break;
        hog_sgd_copy_weights(&c.s, f->model->w);
        double now = hog_now();
        c.st.train_seconds += now - t0 - extra;
        st = f->epoch_end(f, epoch, now - t0 - extra, err);
        /* the epoch's checkpoint; also the row cadence's, when the last
         * batch crossed a multiple */
        uint64_t len = c.n - last_batch_start(&c);
        bool rows_due = c.every && c.t_global / c.every !=
                                       (c.t_global - len) / c.every;
        if (st == HOG_OK &&
            ((f->ckpt_epochs && epoch % f->ckpt_epochs == 0) || rows_due ||
             hog_fit_cancelled(f)))
            st = checkpoint(&c, c.n, hog_fit_cancelled(f));
        t0 = hog_now();
        extra = 0.0;
    }
    if (st == HOG_OK && c.o->cyclades_stats)
        *c.o->cyclades_stats = c.st;
out:
    cyc_free(&c);
    return st;
}

#define REF_BLOCK 4096u

hog_status hog_cyclades_train_reference(struct hog_fit *f, hog_err *err)
{
    if (f->o->hot)
        return hog_errf(err, HOG_EINVAL,
                        "the serial reference of Cyclades needs hot = 0");
    struct cyc c;
    uint64_t *order = NULL;
    hog_status st = prepare(&c, f, false, err);
    if (st != HOG_OK)
        goto out;
    uint64_t n = c.n;
    if (!(order = malloc(n * sizeof *order))) {
        st = hog_errf(err, HOG_ENOMEM, "out of memory for the row order");
        goto out;
    }
    struct hog_rng rows, batches;
    hog_rng_seed(&rows, c.o->seed, 0);
    hog_rng_seed(&batches, c.o->seed, 1);
    uint64_t t_global = 0;
    for (unsigned epoch = 1; epoch <= c.o->epochs && st == HOG_OK; epoch++) {
        double t0 = hog_now();
        next_order(&c, &rows, &batches, epoch);
        uint64_t k = 0;
        for (uint64_t bi = 0; bi < c.nb; bi++) {
            uint64_t lo = c.visit[bi] * c.B, hi = min_u64(lo + c.B, n);
            for (uint64_t p = lo; p < hi; p++)
                order[k++] = c.perm[p];
        }
        for (uint64_t done = 0; done < n;) {
            uint64_t left = n - done;
            uint32_t len = hog_sgd_segment_begin(
                &c.s, t_global,
                left < UINT32_MAX ? (uint32_t)left : UINT32_MAX);
            for (uint32_t i = 0; i < len;) {
                uint32_t blk = len - i < REF_BLOCK ? len - i : REF_BLOCK;
                hog_sgd_run(&c.s, c.d, order + done + i, blk, i, 1);
                i += blk;
            }
            hog_sgd_segment_end(&c.s, len);
            t_global += len;
            done += len;
        }
        hog_sgd_copy_weights(&c.s, f->model->w);
        st = f->epoch_end(f, epoch, hog_now() - t0, err);
    }
out:
    free(order);
    cyc_free(&c);
    return st;
}
