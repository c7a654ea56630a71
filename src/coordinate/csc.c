/*
 * Column access for coordinate descent: a parallel CSR -> CSC transpose,
 * built beside the CSR only when a column method runs, and the options
 * the coordinate methods accept (the pool they share is driver.c's).
 *
 * Transpose in three phases on T workers, separated by barriers:
 *   1. worker t counts, per column j, the nonzeros in its block of rows:
 *      cnt[t][j];
 *   2. each worker owns a block of columns and sums cnt[.][j] over t into
 *      the column lengths; worker 0 turns the block totals into block
 *      starts; each worker then writes off[j] and replaces cnt[t][j] by
 *      the position where worker t writes its first entry of column j;
 *   3. worker t scatters its rows. Row blocks are in row order, so every
 *      column ends up sorted by row, whatever T is.
 * Memory while building: T * cols * 4 bytes of counts, freed at the end.
 */
#include "coordinate/coordinate.h"

#include "core/loss.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- options ------------------------------------------------------------- */

/* ---- the transpose ------------------------------------------------------------- */

struct tjob {
    struct hog_pool *pool;
    const struct hog_csr *m;
    struct hog_csc *c;
    uint64_t nf;       /* feature columns (the bias column is filled apart) */
    uint32_t *cnt;     /* T x nf */
    uint64_t *block;   /* T + 1: nonzeros per column block, then starts */
};

static void transpose_job(void *arg, unsigned tid, unsigned nt)
{
    struct tjob *j = arg;
    const struct hog_csr *m = j->m;
    uint64_t nf = j->nf;
    uint32_t *cnt = j->cnt + (size_t)tid * nf;
    uint64_t r0, r1, c0, c1;
    hog_slice(m->rows, tid, nt, &r0, &r1);
    hog_slice(nf, tid, nt, &c0, &c1);

    memset(cnt, 0, nf * sizeof *cnt);
    for (uint64_t k = m->off[r0]; k < m->off[r1]; k++)
        if (m->idx[k] < nf)
            cnt[m->idx[k]]++;
    if (nt > 1)
        hog_pool_barrier(j->pool);

    uint64_t tot = 0;
    for (uint64_t c = c0; c < c1; c++)
        for (unsigned t = 0; t < nt; t++)
            tot += j->cnt[(size_t)t * nf + c];
    j->block[tid + 1] = tot;
    if (nt > 1)
        hog_pool_barrier(j->pool);
    if (tid == 0) {
        j->block[0] = 0;
        for (unsigned t = 0; t < nt; t++)
            j->block[t + 1] += j->block[t];
    }
    if (nt > 1)
        hog_pool_barrier(j->pool);
    uint64_t pos = j->block[tid];
    for (uint64_t c = c0; c < c1; c++) {
        j->c->off[c] = pos;
        for (unsigned t = 0; t < nt; t++) {
            uint32_t *ct = &j->cnt[(size_t)t * nf + c];
            uint64_t len = *ct;
            *ct = (uint32_t)(pos - j->c->off[c]); /* offset within column */
            pos += len;
        }
    }
    if (nt > 1)
        hog_pool_barrier(j->pool);

    uint64_t *off = j->c->off;
    uint32_t *row = j->c->row;
    float *val = j->c->val;
    for (uint64_t i = r0; i < r1; i++)
        for (uint64_t k = m->off[i]; k < m->off[i + 1]; k++) {
            uint32_t f = m->idx[k];
            if (f >= nf)
                continue;
            uint64_t at = off[f] + cnt[f]++;
            row[at] = (uint32_t)i;
            val[at] = m->val[k];
        }
}

hog_status hog_csc_build(struct hog_pool *p, const struct hog_csr *m,
                         uint64_t n_features, double bias,
                         struct hog_csc *out, hog_err *err)
{
    memset(out, 0, sizeof *out);
    if (m->rows > UINT32_MAX)
        return hog_errf(err, HOG_ERANGE,
                        "%llu rows: the column copy stores 32-bit row ids",
                        (unsigned long long)m->rows);
    unsigned nt = p ? hog_pool_size(p) : 1;
    uint64_t base = m->off[0];
    uint64_t nnz_feat = m->off[m->rows] - base;
    uint64_t bias_nnz = bias != 0.0 ? m->rows : 0;
    uint64_t cols = n_features + (bias != 0.0);
    uint64_t nnz = nnz_feat + bias_nnz; /* upper bound if indices >= nf */
    struct hog_csc c = { m->rows, cols, 0, NULL, NULL, NULL, 0 };
    c.off = hog_malloc_big((cols + 1) * sizeof *c.off);
    c.row = hog_malloc_big(nnz * sizeof *c.row);
    c.val = hog_malloc_big(nnz * sizeof *c.val);
    uint32_t *cnt = hog_malloc_big((size_t)nt * n_features * sizeof *cnt);
    uint64_t *block = malloc((nt + 1) * sizeof *block);
    if (!c.off || !c.row || !c.val || !cnt || !block) {
        free(c.off), free(c.row), free(c.val), free(cnt), free(block);
        return hog_errf(err, HOG_ENOMEM,
                        "out of memory for the column copy (%llu columns, "
                        "%llu nonzeros)",
                        (unsigned long long)cols, (unsigned long long)nnz);
    }
    struct tjob j = { p, m, &c, n_features, cnt, block };
    hog_coord_run(p, transpose_job, &j);
    uint64_t end = block[nt];
    if (bias != 0.0) {
        c.off[n_features] = end;
        for (uint64_t i = 0; i < m->rows; i++) {
            c.row[end + i] = (uint32_t)i;
            c.val[end + i] = (float)bias;
        }
        end += m->rows;
    }
    c.off[cols] = end;
    c.nnz = end;
    c.bytes = (cols + 1) * sizeof *c.off + nnz * (sizeof *c.row +
                                                  sizeof *c.val);
    free(cnt);
    free(block);
    *out = c;
    return HOG_OK;
}

void hog_csc_free(struct hog_csc *c)
{
    free(c->off);
    free(c->row);
    free(c->val);
    memset(c, 0, sizeof *c);
}
