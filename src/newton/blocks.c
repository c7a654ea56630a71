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
 * every sum is the same whichever worker makes it.
 */
#include "newton/newton.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

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

/* Block k's features: collected with a stamp per feature (pos), sorted,
 * then each entry's position written into lidx. Returns the count. */
static uint64_t list_block(struct hog_newton_blocks *b, uint64_t k,
                           uint32_t *pos, uint32_t *feat)
{
    const struct hog_csr *m = b->m;
    uint64_t a = m->off[b->row0[k]], e = m->off[b->row0[k + 1]];
    uint32_t u = 0;
    for (uint64_t p = a; p < e; p++) {
        uint32_t j = m->idx[p];
        if (pos[j] != UINT32_MAX)
            continue;
        pos[j] = 0;
        feat[u++] = j;
    }
    qsort(feat, u, sizeof *feat, cmp_u32);
    for (uint32_t q = 0; q < u; q++)
        pos[feat[q]] = q;
    for (uint64_t p = a; p < e; p++)
        b->lidx[p - m->off[0]] = pos[m->idx[p]];
    for (uint32_t q = 0; q < u; q++)
        pos[feat[q]] = UINT32_MAX;
    return u;
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
    uint64_t nnz = m->off[m->rows] - m->off[0];
    /* a block touches at most min(its nonzeros, nf) features */
    b->feat0 = malloc((b->nb + 1) * sizeof *b->feat0);
    b->lidx = malloc((nnz ? nnz : 1) * sizeof *b->lidx);
    b->feat = malloc((nnz ? nnz : 1) * sizeof *b->feat);
    uint32_t *pos = malloc((nf ? nf : 1) * sizeof *pos);
    b->part_bias = malloc(b->nb * sizeof *b->part_bias);
    b->acc = malloc(b->nb * sizeof *b->acc);
    b->nr = (b->nw + HOG_NEWTON_VEC_RANGE - 1) / HOG_NEWTON_VEC_RANGE;
    b->vsum = malloc((b->nr ? b->nr : 1) * HOG_NEWTON_VEC_SUMS *
                     sizeof *b->vsum);
    if (!b->feat0 || !b->lidx || !b->feat || !pos || !b->part_bias ||
        !b->acc || !b->vsum) {
        free(pos);
        hog_newton_blocks_close(b);
        return hog_errf(err, HOG_ENOMEM, "out of memory for Newton's row "
                        "blocks (%llu nonzeros)", (unsigned long long)nnz);
    }
    memset(pos, 0xff, (nf ? nf : 1) * sizeof *pos);
    b->feat0[0] = 0;
    for (uint64_t k = 0; k < b->nb; k++)
        b->feat0[k + 1] = b->feat0[k] + list_block(b, k, pos,
                                                   b->feat + b->feat0[k]);
    free(pos);
    uint64_t total = b->feat0[b->nb];
    uint32_t *shrunk = realloc(b->feat, (total ? total : 1) * sizeof *shrunk);
    if (shrunk)
        b->feat = shrunk;
    b->part = malloc((total ? total : 1) * sizeof *b->part);
    if (!b->part) {
        hog_newton_blocks_close(b);
        return hog_errf(err, HOG_ENOMEM, "out of memory for Newton's "
                        "partial products");
    }
    b->bytes = (b->nb + 1) * 2 * sizeof(uint64_t) + nnz * sizeof(uint32_t) +
               total * (sizeof(uint32_t) + sizeof(double)) +
               b->nb * 2 * sizeof(double) +
               b->nr * HOG_NEWTON_VEC_SUMS * sizeof(double);
    if (threads != 1) {
        st = hog_pool_for_opts(NULL, threads, HOG_POOL_BIND_ANY, &b->topo,
                               &b->pool, err);
        if (st != HOG_OK) {
            hog_newton_blocks_close(b);
            return st;
        }
    }
    b->threads = b->pool ? hog_pool_size(b->pool) : 1;
    return HOG_OK;
}

void hog_newton_blocks_close(struct hog_newton_blocks *b)
{
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

/* out over features [lo, hi): zero, then the blocks' partials in block
 * order. */
static void reduce_range(const struct hog_newton_blocks *b, double *out,
                         uint64_t lo, uint64_t hi)
{
    memset(out + lo, 0, (hi - lo) * sizeof *out);
    for (uint64_t k = 0; k < b->nb; k++) {
        const uint32_t *f = b->feat + b->feat0[k];
        const double *p = b->part + b->feat0[k];
        uint64_t u = b->feat0[k + 1] - b->feat0[k];
        /* the first of the block's features at or above lo */
        uint64_t a = 0, z = u;
        while (a < z) {
            uint64_t mid = a + (z - a) / 2;
            if (f[mid] < lo)
                a = mid + 1;
            else
                z = mid;
        }
        for (uint64_t q = a; q < u && f[q] < hi; q++)
            out[f[q]] += p[q];
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
    hog_slice(b->nf, tid, nt, &lo, &hi);
    reduce_range(b, ps->out, lo, hi);
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

double hog_newton_pass(struct hog_newton_blocks *b, const double *v,
                       hog_newton_row_fn fn, void *ctx, double *out,
                       bool squares)
{
    if (b->st != HOG_OK)
        return poisoned(b, out);
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
    return b->reduce ? reduce_pass(b, out, acc) : acc;
}
