/*
 * Cyclades' hot set and the two views of the rows it makes: which
 * features leave the conflict graph, which work group steps each of them,
 * the rows without them (the cold view, what the partition and the rows
 * phase see) and their entries (the hot view, what the hot phase sums).
 *
 * Hot set (docs/CYCLADES.md): the bias, and the features of degree above
 * hot_degree, the largest degree tau for which the cold graph's mean
 * row-row conflict degree in a batch,
 * (B/n^2) sum_{deg_j <= tau} deg_j (deg_j - 1), stays at most 1/2: below
 * the giant-component threshold of 1, so components stay small. It does
 * not depend on the thread count. Hot weights are dealt to groups by
 * whole cache lines (deal_lines).
 */
#include "cyclades/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CYC_CONFLICT 0.5 /* mean conflict degree of the cold graph, default */
#define CYC_LINE (HOG_CACHELINE / sizeof(float)) /* weights per cache line */

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

static hog_status hot_oom(hog_err *err)
{
    return hog_errf(err, HOG_ENOMEM,
                    "out of memory for Cyclades' hot-feature tables");
}

/* Weight j (< nf, or nf: the bias) is hot. */
static inline bool is_hot(const struct cyc *c, const uint32_t *deg,
                          uint64_t j)
{
    return deg[j] > c->tau && (j < c->nf || c->bias_hot);
}

/* deg[j]: the rows of feature j (saturating), on the pool: each thread
 * counts its share of the rows into its own table (its union-find's
 * touched list, unused until the partition), then sums every thread's
 * tables over its share of the features. Each table saturates as the one
 * count would, so the sum reaches UINT32_MAX exactly when that count
 * does. */
struct degree_job {
    struct cyc *c;
    uint32_t *deg;
};

static void degree_count_job(void *arg, unsigned tid, unsigned T)
{
    const struct cyc *c = ((struct degree_job *)arg)->c;
    const struct hog_csr *m = &c->d->m;
    uint32_t *cnt = c->th[tid].touched;
    memset(cnt, 0, (c->nf + 1) * sizeof *cnt);
    const uint64_t q1 = m->off[cyc_share(c->n, tid + 1, T)];
    for (uint64_t q = m->off[cyc_share(c->n, tid, T)]; q < q1; q++)
        if (cnt[m->idx[q]] != UINT32_MAX)
            cnt[m->idx[q]]++;
}

static void degree_sum_job(void *arg, unsigned tid, unsigned T)
{
    const struct degree_job *job = arg;
    const struct cyc *c = job->c;
    const uint64_t nf1 = c->nf + 1, j1 = cyc_share(nf1, tid + 1, T);
    for (uint64_t j = cyc_share(nf1, tid, T); j < j1; j++) {
        uint64_t sum = 0;
        for (unsigned t = 0; t < T; t++)
            sum += c->th[t].touched[j];
        job->deg[j] = sum < UINT32_MAX ? (uint32_t)sum : UINT32_MAX;
    }
}

static void count_degrees(struct cyc *c, uint32_t *deg)
{
    struct degree_job job = { c, deg };
    hog_pool_run(c->pool, degree_count_job, &job);
    hog_pool_run(c->pool, degree_sum_job, &job);
}

/* Marks every weight cold (owner CYC_NONE), counts the hot ones into
 * c->nh and the statistics, and gives the hot bias degree n. Returns the
 * largest hot degree. */
static uint64_t count_hot(struct cyc *c, uint32_t *deg)
{
    const uint64_t n = c->n, nf = c->nf;
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
    return maxdeg;
}

/* The c->nh hot weights by degree, largest first, ties by index: a
 * counting sort over the degrees (the bias counts n). */
static hog_status order_by_degree(const struct cyc *c, const uint32_t *deg,
                                  uint64_t maxdeg, uint32_t **out,
                                  hog_err *err)
{
    const uint64_t nf = c->nf;
    uint64_t *bucket = calloc(maxdeg + 2, sizeof *bucket);
    uint32_t *order = malloc(c->nh * sizeof *order);
    if (!bucket || !order) {
        free(bucket);
        free(order);
        return hot_oom(err);
    }
    for (uint64_t j = 0; j <= nf; j++)
        if (is_hot(c, deg, j))
            bucket[maxdeg - deg[j]]++;
    for (uint64_t k = 0, at = 0; k <= maxdeg; k++) {
        uint64_t cnt = bucket[k];
        bucket[k] = at;
        at += cnt;
    }
    for (uint64_t j = 0; j <= nf; j++)
        if (is_hot(c, deg, j))
            order[bucket[maxdeg - deg[j]]++] = (uint32_t)j;
    free(bucket);
    *out = order;
    return HOG_OK;
}

/* Groups take whole cache lines of weights (CYC_LINE of them), so that
 * the hot phase's stores (weight, AdaGrad sum, stamp) never share a
 * line between threads: the first hot weight of a line, in degree
 * order, deals the line, by the line's total hot degree, to the least
 * loaded of the G groups (threads claim groups per batch). Which group
 * steps a weight does not change the model: each weight takes one step
 * per batch, from its entries in row order. sh: the weights' offset
 * into their first line (malloc aligns to 16 bytes). load: [G] zeroes. */
static void deal_lines(struct cyc *c, const uint32_t *deg,
                       const uint32_t *order, uint64_t *load)
{
    const uint64_t nf = c->nf;
    const unsigned G = c->G;
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
            if (is_hot(c, deg, k))
                ld += deg[k];
        unsigned best = 0;
        for (unsigned t = 1; t < G; t++)
            if (load[t] < load[best])
                best = t;
        for (uint64_t k = l0; k < l1; k++)
            if (is_hot(c, deg, k))
                c->hot_owner[k] = best;
        load[best] += ld;
    }
}

/* Whether feature j is hot, for the views' passes over every entry: on a
 * million features hot_owner is 4 MB and its test missed the cache at
 * every cold entry; the bits are 128 KB. */
static inline bool hot_bit(const struct cyc *c, uint32_t j)
{
    return c->hot_bits[j >> 6] >> (j & 63) & 1;
}

/* The views are made on the pool, each thread over its share of the rows
 * (cyc_share): it counts their cold and hot entries (view_count_job); the
 * counts of the threads before it say where its rows start in each view
 * (make_views); it copies them there (split_job), or, when every entry is
 * hot and the rows are the hot view, computes their |x_hot|_1 only
 * (alias_job). Each row's sum runs over its entries in order, as one
 * thread would: the views do not depend on the thread count. */
static void view_count_job(void *arg, unsigned tid, unsigned T)
{
    struct cyc *c = arg;
    const struct hog_csr *m = &c->d->m;
    const uint64_t q1 = m->off[cyc_share(c->n, tid + 1, T)];
    uint64_t cold = 0, hot = 0;
    for (uint64_t q = m->off[cyc_share(c->n, tid, T)]; q < q1; q++) {
        bool h = hot_bit(c, m->idx[q]);
        cold += !h;
        hot += h && m->val[q] != 0.0f;
    }
    c->th[tid].v_cold = cold;
    c->th[tid].v_hot = hot;
}

static double bias_l1(const struct cyc *c)
{
    return c->bias_hot ? fabs(c->o->bias) : 0.0;
}

/* Every entry hot (text, most often): the rows are the hot view; only
 * each row's |x_hot|_1 is computed. */
static void alias_job(void *arg, unsigned tid, unsigned T)
{
    struct cyc *c = arg;
    const struct hog_csr *m = &c->d->m;
    const double b1 = bias_l1(c);
    const uint64_t r1 = cyc_share(c->n, tid + 1, T);
    for (uint64_t r = cyc_share(c->n, tid, T); r < r1; r++) {
        double l1 = b1;
        for (uint64_t q = m->off[r]; q < m->off[r + 1]; q++)
            l1 += fabs((double)m->val[q]);
        c->hot_l1[r] = l1;
    }
}

/* Each row's cold entries into the cold view and its nonzero hot entries
 * into the hot view, with its |x_hot|_1; the thread's rows start at
 * v_cold and v_hot. */
static void split_job(void *arg, unsigned tid, unsigned T)
{
    struct cyc *c = arg;
    const struct hog_csr *m = &c->d->m;
    const double b1 = bias_l1(c);
    const uint64_t r1 = cyc_share(c->n, tid + 1, T);
    uint64_t pc = c->th[tid].v_cold, ph = c->th[tid].v_hot;
    for (uint64_t r = cyc_share(c->n, tid, T); r < r1; r++) {
        c->cold_off[r] = pc;
        c->hot_off[r] = ph;
        double l1 = b1;
        for (uint64_t q = m->off[r]; q < m->off[r + 1]; q++) {
            uint32_t j = m->idx[q];
            if (!hot_bit(c, j)) {
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
}

/* Cold rows and hot entries (zeros add nothing and are dropped); their
 * count sizes the partition's tables of hot entries. */
static hog_status make_views(struct cyc *c, hog_err *err)
{
    const struct hog_csr *m = &c->d->m;
    const uint64_t n = c->n;
    c->hot_bits = calloc(c->nf / 64 + 1, sizeof *c->hot_bits);
    if (!c->hot_bits)
        return hot_oom(err);
    for (uint64_t j = 0; j < c->nf; j++)
        if (c->hot_owner[j] != CYC_NONE)
            c->hot_bits[j >> 6] |= UINT64_C(1) << (j & 63);
    hog_pool_run(c->pool, view_count_job, c);
    uint64_t hot_nnz = 0, cold_nnz = 0;
    for (unsigned t = 0; t < c->T; t++) { /* now where each share starts */
        uint64_t cold = c->th[t].v_cold, hot = c->th[t].v_hot;
        c->th[t].v_cold = cold_nnz;
        c->th[t].v_hot = hot_nnz;
        cold_nnz += cold;
        hot_nnz += hot;
    }
    c->hot_l1 = malloc(n * sizeof *c->hot_l1);
    c->cold_off = calloc(n + 1, sizeof *c->cold_off);
    c->cold_idx = hog_malloc_big(cold_nnz * sizeof *c->cold_idx);
    c->cold_val = hog_malloc_big(cold_nnz * sizeof *c->cold_val);
    c->hot_nnz = hot_nnz;
    if (!c->hot_l1 || !c->cold_off || !c->cold_idx || !c->cold_val)
        return hot_oom(err);
    if (cold_nnz == 0 && hot_nnz == m->nnz) {
        c->hot_off = (uint64_t *)m->off;
        c->hot_j = (uint32_t *)m->idx;
        c->hot_x = (float *)m->val;
        c->hot_alias = true;
        hog_pool_run(c->pool, alias_job, c);
    } else {
        c->hot_off = malloc((n + 1) * sizeof *c->hot_off);
        c->hot_j = hog_malloc_big(hot_nnz * sizeof *c->hot_j);
        c->hot_x = hog_malloc_big(hot_nnz * sizeof *c->hot_x);
        if (!c->hot_off || !c->hot_j || !c->hot_x)
            return hot_oom(err);
        hog_pool_run(c->pool, split_job, c);
        c->cold_off[n] = cold_nnz;
        c->hot_off[n] = hot_nnz;
    }
    c->cold.off = c->cold_off;
    c->cold.idx = c->cold_idx;
    c->cold.val = c->cold_val;
    c->cold.nnz = cold_nnz;
    free(c->hot_bits); /* the views were its only readers */
    c->hot_bits = NULL;
    c->st.hot_nnz_share =
        m->nnz ? (double)(m->nnz - cold_nnz) / (double)m->nnz : 0.0;
    return HOG_OK;
}

hog_status hog_cyc_setup_hot(struct cyc *c, hog_err *err)
{
    const hog_train_opts *o = c->o;
    c->bias_hot = o->cyclades_hot_degree && o->bias != 0.0;
    c->cold = c->d->m;
    c->tau = UINT64_MAX;
    switch (c->s.loss) {
    case HOG_LOSS_LOGISTIC: c->curv = 0.25; break;
    case HOG_LOSS_SQHINGE: c->curv = 2.0; break;
    default: c->curv = 1.0; break;
    }
    if (!o->cyclades_hot_degree)
        return HOG_OK;

    hog_status st = HOG_OK;
    uint32_t *deg = calloc(c->nf + 1, sizeof *deg), *order = NULL;
    uint64_t *load = calloc(c->G, sizeof *load);
    c->hot_owner = malloc((c->nf + 1) * sizeof *c->hot_owner);
    if (!deg || !load || !c->hot_owner) {
        st = hot_oom(err);
        goto out;
    }
    count_degrees(c, deg);
    cyc_prof_lap(&c->prof, CYC_P_DEGREES, CYC_PROF_PROCESS);
    c->tau = o->cyclades_hot_degree != HOG_HOT_AUTO
                 ? o->cyclades_hot_degree
                 : hot_degree(deg, c->nf, c->n, c->B, err, &st);
    if (st != HOG_OK)
        goto out;
    uint64_t maxdeg = count_hot(c, deg);
    if (c->nh == 0)
        goto out;
    if ((st = order_by_degree(c, deg, maxdeg, &order, err)) != HOG_OK)
        goto out;
    deal_lines(c, deg, order, load);
    cyc_prof_lap(&c->prof, CYC_P_HOTSET, CYC_PROF_PROCESS);
    st = make_views(c, err);
    cyc_prof_lap(&c->prof, CYC_P_VIEWS, CYC_PROF_PROCESS);
out:
    free(deg);
    free(load);
    free(order);
    return st;
}
