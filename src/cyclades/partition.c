/*
 * The epoch's row order (a seeded permutation, or the last one with its
 * batches reshuffled: it decides the batches), and the partition of
 * Cyclades' batches, once per partition of the epoch's permutation, in
 * parallel on the pool (one batch per thread at a time):
 * union-find over the cold features of each batch's rows (path halving,
 * per-thread scratch reset through the list of features touched) gives
 * the connected components of its conflict graph; the components are
 * dealt to G work groups, largest first, each to the least-loaded group,
 * and the groups put in claim order, heaviest first (c->pos, c->boff).
 * Where features are hot, the batch's hot entries are laid out
 * feature-major by owner group in claim order (c->ent, c->rec, c->roff).
 * Also the statistics of the partition (hog_cyclades_stats), and with
 * every feature in the graph for the _all_ ones.
 */
#include "cyclades/internal.h"

#include <stdlib.h>

#define CYC_STATS_BATCHES UINT64_C(16) /* sampled for the _all_ statistics */

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
        /* rows come in random order: the offsets two rows ahead, the
         * first lines of the next row (and of its hot entries, which
         * hot_layout reads next) while this one is joined */
        if (p + 2 < hi) {
            __builtin_prefetch(&m->off[c->perm[p + 2]]);
            if (c->hot_off && !all)
                __builtin_prefetch(&c->hot_off[c->perm[p + 2]]);
        }
        if (p + 1 < hi) {
            uint64_t nx = c->perm[p + 1];
            __builtin_prefetch(m->idx + m->off[nx]);
            if (c->hot_off && !all) {
                __builtin_prefetch(c->hot_j + c->hot_off[nx]);
                __builtin_prefetch(c->hot_x + c->hot_off[nx]);
            }
        }
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

/* eoff[b + 1]: batch b's hot entries, for the batches of the thread's
 * share; hog_cyc_partition sums them into offsets. */
static void hot_count_job(void *arg, unsigned tid, unsigned T)
{
    struct cyc *c = arg;
    const uint64_t *ho = c->hot_off;
    const uint64_t b1 = cyc_share(c->nb, tid + 1, T);
    for (uint64_t b = cyc_share(c->nb, tid, T); b < b1; b++) {
        uint64_t lo = b * c->B, hi = min_u64(lo + c->B, c->n), e = 0;
        for (uint64_t p = lo; p < hi; p++) {
            if (p + 8 < hi)
                __builtin_prefetch(&ho[c->perm[p + 8]]);
            e += ho[c->perm[p] + 1] - ho[c->perm[p]];
        }
        c->eoff[b + 1] = e;
    }
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

hog_status hog_cyc_alloc_partition(struct cyc *c, hog_err *err)
{
    const uint64_t hn = c->hot_nnz ? c->hot_nnz : 1;
    c->pos = malloc(c->n * sizeof *c->pos);
    c->boff = malloc((c->nb * c->G + 1) * sizeof *c->boff);
    c->pl1 = calloc(c->n, sizeof *c->pl1);
    if (!c->pos || !c->boff || !c->pl1)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the partition");
    if (!c->nh)
        return HOG_OK;
    c->ent = malloc(hn * sizeof *c->ent);
    c->rec = malloc(hn * sizeof *c->rec);
    c->eoff = malloc((c->nb + 1) * sizeof *c->eoff);
    c->roff = malloc((c->nb * (c->G + 1) + 1) * sizeof *c->roff);
    c->bslot = calloc(c->nb, sizeof *c->bslot);
    if (!c->ent || !c->rec || !c->eoff || !c->roff || !c->bslot)
        return hog_errf(err, HOG_ENOMEM,
                        "out of memory for Cyclades' hot-feature tables");
    return HOG_OK;
}

/* The epoch's row order: the serial trainer's permutation (stream 0) when
 * partitioning, else the previous one with its batches reshuffled
 * (stream 1). Returns true when the rows must be partitioned again. */
bool hog_cyc_next_order(struct cyc *c, struct hog_rng *rows,
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

/* Runs the partition job; statistics into st (all: the _all_ fields). */
void hog_cyc_partition(struct cyc *c, bool all)
{
    for (unsigned t = 0; t < c->T; t++) {
        struct cyc_thread *w = &c->th[t];
        w->st_batches = w->st_comps = w->st_largest = 0;
        w->st_share = w->st_imb = 0;
    }
    c->all_mode = all;
    if (c->nh && !all) {
        hog_pool_run(c->pool, hot_count_job, c);
        c->eoff[0] = 0;
        for (uint64_t b = 0; b < c->nb; b++)
            c->eoff[b + 1] += c->eoff[b];
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

void hog_cyc_first_order(struct cyc *c, struct hog_rng *rows,
                         struct hog_rng *batches)
{
    double tp = hog_now();
    hog_cyc_next_order(c, rows, batches, 1);
    hog_cyc_partition(c, false);
    cyc_prof_lap(&c->prof, CYC_P_PARTITION, CYC_PROF_PROCESS);
    c->st.partition_seconds += hog_now() - tp;
    c->first_drawn = true;
}
