/*
 * X v and X^T c over fixed blocks of rows (newton.h). Each block keeps the
 * sorted list of the features its rows touch and its rows' indices
 * rewritten as positions in that list, so that its partial X^T c is as
 * long as the list, not as the model: the reduction reads every partial
 * once (at most nnz values in all), where dense partials would cost
 * blocks x features per product (news20.binary: 140 x 1.35M).
 *
 * The reduction is split by feature ranges: each worker adds, for its
 * features, the partials of block 0, 1, 2, ... in that order, so that
 * every sum is the same whichever worker makes it. The ranges are cut to
 * equal work, not equal counts, and the lists themselves are built on the
 * pool, a block per task: the set-up was a fifth of a two-thread run on
 * news20.binary while it ran on one thread (docs/bench-log/newton.md).
 */
#include "newton/newton.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Row blocks of about HOG_NEWTON_BLOCK_NNZ nonzeros (a row never split),
 * from the data alone. */
static hog_status cut_blocks(struct hog_newton_blocks *b, hog_err *err)
{
    const struct hog_csr *m = b->m;
    uint64_t cap = m->nnz / HOG_NEWTON_BLOCK_NNZ + 2;
    b->row0 = malloc((cap + 1) * sizeof *b->row0);
    if (!b->row0)
        return hog_errf(err, HOG_ENOMEM, "out of memory for Newton's row "
                        "blocks");
    uint64_t nb = 0, start = m->off[0];
    b->row0[0] = 0;
    for (uint64_t i = 0; i < m->rows; i++) {
        if (m->off[i + 1] - start >= HOG_NEWTON_BLOCK_NNZ && nb + 1 < cap) {
            b->row0[++nb] = i + 1;
            start = m->off[i + 1];
        }
    }
    if (b->row0[nb] != m->rows)
        b->row0[++nb] = m->rows;
    b->nb = nb ? nb : 1;
    b->row0[b->nb] = m->rows;
    return HOG_OK;
}

/* ---- the blocks' feature lists ------------------------------------------ */

/* Block k's features come from sorting its entries as (feature << 32 |
 * entry) keys by the feature's bits, RADIX_BITS at a time: no array as
 * long as the model per worker, and a cost linear in the block's
 * nonzeros. Models with no more features than a block has nonzeros take
 * a stamp per feature instead (list_block_few), cheaper there. The
 * sorted, distinct features are the same whichever way and whichever
 * worker lists them, so every thread count lists the same blocks. */
#define RADIX_BITS 11u
#define RADIX (1u << RADIX_BITS)

struct lister { /* a worker's scratch, grown to its largest block */
    uint64_t *key, *tmp;
    uint64_t cap;
    uint32_t *pos; /* nf, UINT32_MAX between blocks: for few features */
};

struct list_job {
    struct hog_newton_blocks *b;
    uint32_t *wide;  /* block k's list from its first entry's position */
    unsigned passes; /* radix passes that cover nf's bits */
    atomic_uint_fast64_t next; /* the next block to list */
    atomic_bool failed;        /* a worker ran out of memory */
};

static uint64_t block_start(const struct hog_newton_blocks *b, uint64_t k)
{
    return b->m->off[b->row0[k]] - b->m->off[0];
}

/* Lists block k into lj->wide, writes its entries' positions into lidx
 * and its count into feat0[k + 1]; false when out of memory. */
/* Block k's list when the model has no more features than the block has
 * nonzeros (a9a, ijcnn1): a stamp per feature, read in feature order. */
static bool list_block_few(struct list_job *lj, uint64_t k, struct lister *ls)
{
    struct hog_newton_blocks *b = lj->b;
    const uint32_t *idx = b->m->idx + b->m->off[0];
    uint64_t a = block_start(b, k), n = block_start(b, k + 1) - a;
    if (!ls->pos) {
        ls->pos = hog_malloc_big(b->nf * sizeof *ls->pos);
        if (!ls->pos)
            return false;
        memset(ls->pos, 0xff, b->nf * sizeof *ls->pos);
    }
    uint32_t *pos = ls->pos, *feat = lj->wide + a, *lidx = b->lidx + a;
    for (uint64_t p = 0; p < n; p++)
        pos[idx[a + p]] = 0;
    uint32_t u = 0;
    for (uint32_t j = 0; j < b->nf; j++)
        if (pos[j] != UINT32_MAX) {
            pos[j] = u;
            feat[u++] = j;
        }
    for (uint64_t p = 0; p < n; p++)
        lidx[p] = pos[idx[a + p]];
    for (uint32_t q = 0; q < u; q++)
        pos[feat[q]] = UINT32_MAX;
    b->feat0[k + 1] = u;
    return true;
}

static bool list_block(struct list_job *lj, uint64_t k, struct lister *ls)
{
    struct hog_newton_blocks *b = lj->b;
    const uint32_t *idx = b->m->idx + b->m->off[0];
    uint64_t a = block_start(b, k), n = block_start(b, k + 1) - a;
    if (b->nf <= n)
        return list_block_few(lj, k, ls);
    if (n > ls->cap) {
        free(ls->key);
        free(ls->tmp);
        ls->key = malloc(n * sizeof *ls->key);
        ls->tmp = malloc(n * sizeof *ls->tmp);
        ls->cap = ls->key && ls->tmp ? n : 0;
        if (!ls->cap)
            return false;
    }
    uint64_t *key = ls->key, *tmp = ls->tmp;
    for (uint64_t p = 0; p < n; p++)
        key[p] = (uint64_t)idx[a + p] << 32 | p;
    for (unsigned s = 0; s < lj->passes; s++) {
        unsigned shift = 32 + s * RADIX_BITS;
        uint32_t cnt[RADIX] = { 0 };
        for (uint64_t p = 0; p < n; p++)
            cnt[key[p] >> shift & (RADIX - 1)]++;
        uint32_t at = 0;
        for (unsigned d = 0; d < RADIX; d++) {
            uint32_t c = cnt[d];
            cnt[d] = at;
            at += c;
        }
        for (uint64_t p = 0; p < n; p++)
            tmp[cnt[key[p] >> shift & (RADIX - 1)]++] = key[p];
        uint64_t *t = key;
        key = tmp;
        tmp = t;
    }
    uint32_t *feat = lj->wide + a, *lidx = b->lidx + a;
    uint64_t u = 0;
    for (uint64_t p = 0; p < n; p++) {
        uint32_t j = (uint32_t)(key[p] >> 32);
        if (u == 0 || feat[u - 1] != j)
            feat[u++] = j;
        lidx[(uint32_t)key[p]] = (uint32_t)(u - 1);
    }
    b->feat0[k + 1] = u;
    return true;
}

/* Blocks handed out one at a time: their sizes differ in features, and a
 * worker the machine has put aside leaves its share to the others. */
static void list_job_run(void *arg, unsigned tid, unsigned nt)
{
    (void)tid, (void)nt;
    struct list_job *lj = arg;
    struct lister ls = { NULL, NULL, 0, NULL };
    for (;;) {
        uint64_t k = atomic_fetch_add_explicit(&lj->next, 1,
                                               memory_order_relaxed);
        if (k >= lj->b->nb)
            break;
        if (!list_block(lj, k, &ls)) {
            atomic_store(&lj->failed, true);
            break;
        }
    }
    free(ls.key);
    free(ls.tmp);
    free(ls.pos);
}

/* The lists packed one after the other, at feat0. */
static void pack_job(void *arg, unsigned tid, unsigned nt)
{
    struct list_job *lj = arg;
    struct hog_newton_blocks *b = lj->b;
    uint64_t lo, hi;
    hog_slice(b->nb, tid, nt, &lo, &hi);
    for (uint64_t k = lo; k < hi; k++)
        memcpy(b->feat + b->feat0[k], lj->wide + block_start(b, k),
               (b->feat0[k + 1] - b->feat0[k]) * sizeof *b->feat);
}

static void run_job(struct hog_newton_blocks *b, hog_pool_fn fn, void *arg)
{
    if (b->pool)
        hog_pool_run(b->pool, fn, arg);
    else
        fn(arg, 0, 1);
}

/* Every block's list, on the pool; feat0, feat and lidx filled. */
static hog_status list_blocks(struct hog_newton_blocks *b, uint64_t nnz,
                              hog_err *err)
{
    struct list_job lj = { .b = b };
    for (uint64_t k = 0; k < b->nb; k++)
        if (block_start(b, k + 1) - block_start(b, k) > UINT32_MAX)
            return hog_errf(err, HOG_ERANGE, "Newton's block %llu holds "
                            "more than 2^32 nonzeros (one row that long "
                            "does not fit its 32-bit positions)",
                            (unsigned long long)k);
    unsigned bits = 0;
    while (bits < 32 && (b->nf - 1) >> bits)
        bits++;
    lj.passes = b->nf > 1 ? (bits + RADIX_BITS - 1) / RADIX_BITS : 0;
    atomic_init(&lj.next, 0);
    atomic_init(&lj.failed, false);
    lj.wide = hog_malloc_big(nnz * sizeof *lj.wide);
    if (!lj.wide)
        return hog_errf(err, HOG_ENOMEM, "out of memory for Newton's row "
                        "blocks (%llu nonzeros)", (unsigned long long)nnz);
    run_job(b, list_job_run, &lj);
    if (atomic_load(&lj.failed)) {
        free(lj.wide);
        return hog_errf(err, HOG_ENOMEM, "out of memory for sorting "
                        "Newton's row blocks' features");
    }
    b->feat0[0] = 0;
    for (uint64_t k = 0; k < b->nb; k++)
        b->feat0[k + 1] += b->feat0[k];
    uint64_t total = b->feat0[b->nb];
    b->feat = hog_malloc_big(total * sizeof *b->feat);
    if (!b->feat) {
        free(lj.wide);
        return hog_errf(err, HOG_ENOMEM, "out of memory for Newton's row "
                        "blocks' features (%llu)", (unsigned long long)total);
    }
    run_job(b, pack_job, &lj);
    free(lj.wide);
    return HOG_OK;
}

/* Entries of the blocks' lists below feature x, plus x for the zeroing:
 * the reduction's work on [0, x). */
static uint64_t reduce_work(const struct hog_newton_blocks *b, uint64_t x)
{
    uint64_t w = x;
    for (uint64_t k = 0; k < b->nb; k++) {
        const uint32_t *f = b->feat + b->feat0[k];
        uint64_t lo = 0, hi = b->feat0[k + 1] - b->feat0[k];
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (f[mid] < x)
                lo = mid + 1;
            else
                hi = mid;
        }
        w += lo;
    }
    return w;
}

/* The workers' feature ranges for the reduction, cut to equal work: text
 * data's first features are in most blocks, its last in few, so equal
 * counts of features leave one worker waiting for the other. Each
 * feature's sum runs in block order whoever makes it. */
static hog_status cut_reduction(struct hog_newton_blocks *b, hog_err *err)
{
    unsigned nt = b->threads;
    b->cut = malloc((nt + 1) * sizeof *b->cut);
    b->cursor = malloc((size_t)nt * b->nb * sizeof *b->cursor);
    if (!b->cut || !b->cursor)
        return hog_errf(err, HOG_ENOMEM, "out of memory for Newton's "
                        "reduction ranges");
    uint64_t all = reduce_work(b, b->nf);
    b->cut[0] = 0;
    for (unsigned t = 1; t < nt; t++) {
        uint64_t want = all / nt * t + all % nt * t / nt;
        uint64_t lo = b->cut[t - 1], hi = b->nf;
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (reduce_work(b, mid) < want)
                lo = mid + 1;
            else
                hi = mid;
        }
        b->cut[t] = lo;
    }
    b->cut[nt] = b->nf;
    return HOG_OK;
}

hog_status hog_newton_blocks_open(struct hog_newton_blocks *b,
                                  const struct hog_csr *m, uint64_t nf,
                                  double bias, unsigned threads, hog_err *err)
{
    memset(b, 0, sizeof *b);
    b->m = m;
    b->nf = nf;
    b->bias = bias;
    b->nw = nf + (bias != 0.0);
    if (nf > UINT32_MAX)
        return hog_errf(err, HOG_ERANGE, "Newton's blocks index features "
                        "with 32 bits; %llu features do not fit",
                        (unsigned long long)nf);
    hog_status st = cut_blocks(b, err);
    if (st != HOG_OK)
        return st;
    if (threads != 1) {
        st = hog_pool_for_opts(NULL, threads, HOG_POOL_BIND_ANY, &b->topo,
                               &b->pool, err);
        if (st != HOG_OK) {
            hog_newton_blocks_close(b);
            return st;
        }
    }
    b->threads = b->pool ? hog_pool_size(b->pool) : 1;
    uint64_t nnz = m->off[m->rows] - m->off[0];
    b->feat0 = malloc((b->nb + 1) * sizeof *b->feat0);
    b->lidx = hog_malloc_big(nnz * sizeof *b->lidx);
    b->part_bias = malloc(b->nb * sizeof *b->part_bias);
    b->acc = malloc(b->nb * sizeof *b->acc);
    b->nr = (b->nw + HOG_NEWTON_VEC_RANGE - 1) / HOG_NEWTON_VEC_RANGE;
    b->vsum = malloc((b->nr ? b->nr : 1) * HOG_NEWTON_VEC_SUMS *
                     sizeof *b->vsum);
    if (!b->feat0 || !b->lidx || !b->part_bias || !b->acc || !b->vsum) {
        hog_newton_blocks_close(b);
        return hog_errf(err, HOG_ENOMEM, "out of memory for Newton's row "
                        "blocks (%llu nonzeros)", (unsigned long long)nnz);
    }
    st = list_blocks(b, nnz, err);
    if (st == HOG_OK)
        st = cut_reduction(b, err);
    if (st != HOG_OK) {
        hog_newton_blocks_close(b);
        return st;
    }
    uint64_t total = b->feat0[b->nb];
    b->part = hog_malloc_big(total * sizeof *b->part);
    if (!b->part) {
        hog_newton_blocks_close(b);
        return hog_errf(err, HOG_ENOMEM, "out of memory for Newton's "
                        "partial products");
    }
    b->bytes = (b->nb + 1) * 2 * sizeof(uint64_t) + nnz * sizeof(uint32_t) +
               total * (sizeof(uint32_t) + sizeof(double)) +
               b->nb * 2 * sizeof(double) +
               b->nr * HOG_NEWTON_VEC_SUMS * sizeof(double) +
               (b->threads + 1) * sizeof(uint64_t) +
               (size_t)b->threads * b->nb * sizeof(uint32_t);
    return HOG_OK;
}

void hog_newton_blocks_close(struct hog_newton_blocks *b)
{
    hog_newton_dev_close(b);
    hog_pool_destroy(b->pool);
    hog_topo_free(b->topo);
    free(b->row0);
    free(b->feat0);
    free(b->feat);
    free(b->lidx);
    free(b->part);
    free(b->part_bias);
    free(b->acc);
    free(b->vsum);
    free(b->cut);
    free(b->cursor);
    free(b->red);
    memset(b, 0, sizeof *b);
}

/* ---- the pass ------------------------------------------------------------ */

struct pass {
    struct hog_newton_blocks *b;
    const double *v;
    hog_newton_row_fn fn;
    void *ctx;
    double *out;
    bool squares;
};

/* Block k's rows: the products, fn, and the block's partial X^T c. */
static void pass_block(const struct pass *ps, uint64_t k)
{
    struct hog_newton_blocks *b = ps->b;
    const struct hog_csr *m = b->m;
    const double *v = ps->v;
    double *part = b->part + b->feat0[k];
    if (ps->out)
        memset(part, 0, (b->feat0[k + 1] - b->feat0[k]) * sizeof *part);
    double acc = 0.0, pb = 0.0;
    for (uint64_t i = b->row0[k]; i < b->row0[k + 1]; i++) {
        struct hog_row r = hog_csr_row(m, i);
        double t = 0.0;
        if (v) {
            t = hog_sparse_dot_d(v, r, 0.0);
            if (b->bias != 0.0)
                t += v[b->nf] * b->bias;
        }
        double c = ps->fn(ps->ctx, i, t, &acc);
        if (!ps->out || c == 0.0)
            continue;
        /* the same values, indexed by position in the block's features */
        r.idx = b->lidx + (m->off[i] - m->off[0]);
        if (ps->squares) {
            hog_sparse_axpy_sq_d(part, c, r);
            pb += c * (b->bias * b->bias);
        } else {
            hog_sparse_axpy_d(part, c, r);
            pb += c * b->bias;
        }
    }
    b->acc[k] = acc;
    b->part_bias[k] = pb;
}

/* Features the reduction sums at a time: their out (128 KiB) stays in
 * cache while every block adds to it, where a sweep of the worker's whole
 * range per block would miss on most adds (news20.binary: 140 sweeps of
 * 5 MiB each). */
#define REDUCE_CHUNK 16384u

/* out over features [lo, hi): zero, then the blocks' partials in block
 * order, a chunk of features at a time; cur (nb) holds each block's
 * position in its list. */
static void reduce_range(const struct hog_newton_blocks *b, double *out,
                         uint64_t lo, uint64_t hi, uint32_t *cur)
{
    for (uint64_t k = 0; k < b->nb; k++) {
        /* the first of the block's features at or above lo */
        const uint32_t *f = b->feat + b->feat0[k];
        uint64_t a = 0, z = b->feat0[k + 1] - b->feat0[k];
        while (a < z) {
            uint64_t mid = a + (z - a) / 2;
            if (f[mid] < lo)
                a = mid + 1;
            else
                z = mid;
        }
        cur[k] = (uint32_t)a;
    }
    for (uint64_t c0 = lo; c0 < hi; c0 += REDUCE_CHUNK) {
        uint64_t c1 = hi - c0 > REDUCE_CHUNK ? c0 + REDUCE_CHUNK : hi;
        memset(out + c0, 0, (c1 - c0) * sizeof *out);
        for (uint64_t k = 0; k < b->nb; k++) {
            const uint32_t *f = b->feat + b->feat0[k];
            const double *p = b->part + b->feat0[k];
            uint64_t u = b->feat0[k + 1] - b->feat0[k], q = cur[k];
            for (; q < u && f[q] < c1; q++)
                out[f[q]] += p[q];
            cur[k] = (uint32_t)q;
        }
    }
}

static void pass_job(void *arg, unsigned tid, unsigned nt)
{
    const struct pass *ps = arg;
    struct hog_newton_blocks *b = ps->b;
    uint64_t lo, hi;
    hog_slice(b->nb, tid, nt, &lo, &hi);
    for (uint64_t k = lo; k < hi; k++)
        pass_block(ps, k);
    if (!ps->out)
        return;
    if (b->pool) /* every block's partial written before anyone adds them */
        hog_pool_barrier(b->pool);
    reduce_range(b, ps->out, b->cut[tid], b->cut[tid + 1],
                 b->cursor + tid * b->nb);
}

/* After a failed reduction: out and the sum are NaN, so that whatever
 * the solver computes from them fails its tests and its loops end. */
static double poisoned(const struct hog_newton_blocks *b, double *out)
{
    if (out)
        for (uint64_t j = 0; j < b->nw; j++)
            out[j] = NAN;
    return NAN;
}

/* The pass's results (out, when given, and the sum) added over the ranks
 * by one all-reduce; every rank gets the same bits. */
static double reduce_pass(struct hog_newton_blocks *b, double *out,
                          double acc)
{
    uint64_t k = out ? b->nw : 0;
    if (out)
        memcpy(b->red, out, k * sizeof *out);
    b->red[k] = acc;
    b->st = b->reduce(b->reduce_ctx, b->red, k + 1, &b->err);
    if (b->st != HOG_OK)
        return poisoned(b, out);
    if (out)
        memcpy(out, b->red, k * sizeof *out);
    return b->red[k];
}

/* The pass over the blocks on the pool; the sum of the blocks' acc. */
static double blocks_pass(struct hog_newton_blocks *b, const double *v,
                          hog_newton_row_fn fn, void *ctx, double *out,
                          bool squares)
{
    struct pass ps = { b, v, fn, ctx, out, squares };
    if (b->pool)
        hog_pool_run(b->pool, pass_job, &ps);
    else
        pass_job(&ps, 0, 1);
    double acc = 0.0, pb = 0.0;
    for (uint64_t k = 0; k < b->nb; k++) {
        acc += b->acc[k];
        pb += b->part_bias[k];
    }
    if (out && b->bias != 0.0)
        out[b->nf] = pb;
    return acc;
}

double hog_newton_pass(struct hog_newton_blocks *b, const double *v,
                       hog_newton_row_fn fn, void *ctx, double *out,
                       bool squares)
{
    if (b->st != HOG_OK)
        return poisoned(b, out);
    double acc = b->dev ? hog_newton_dev_pass(b, v, fn, ctx, out, squares)
                        : blocks_pass(b, v, fn, ctx, out, squares);
    if (b->st != HOG_OK) /* a device failed */
        return poisoned(b, out);
    return b->reduce ? reduce_pass(b, out, acc) : acc;
}
