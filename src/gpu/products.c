/*
 * The exact solvers' products on GPUs (core/products.h; hog_gpu_products,
 * which the front door hands --algo newton and lbfgs with --gpus).
 *
 * The rows are cut into one contiguous shard per listed device (a device
 * listed twice holds two), of about equal nonzeros plus rows, uploaded
 * once and resident until the solver ends (spmv.cu):
 *
 *   X v     each shard's rows' products, written where its rows are;
 *   X^T c   each shard's partial X_s^T c_s (nw doubles), added on the host
 *           shard 0, 1, 2, ... in that order, so that the sum depends on
 *           the list of devices only, never on which GPU finished first.
 *
 * The products are queued on every shard before the first is waited for,
 * so that the GPUs work at once. Plain C: the device work is behind
 * cuda.h (the plugin); the split, the shards' layout and the order of the
 * sum are tested on machines without a device.
 */
#include "gpu/gpu.h"

#include "core/products.h"
#include "gpu/cuda.h"

#include <stdlib.h>
#include <string.h>

void hog_gpu_rows_split(const uint64_t *off, uint64_t rows, unsigned parts,
                        uint64_t *row0)
{
    /* the cost of rows [0, i) is off[i] - off[0] + i: strictly increasing,
     * and with a bias column exactly the nonzeros uploaded */
    const uint64_t total = off[rows] - off[0] + rows;
    row0[0] = 0;
    for (unsigned k = 1; k < parts; k++) {
        uint64_t want = total / parts * k + total % parts * k / parts;
        uint64_t a = row0[k - 1], z = rows; /* first i with cost >= want */
        while (a < z) {
            uint64_t mid = a + (z - a) / 2;
            if (off[mid] - off[0] + mid < want)
                a = mid + 1;
            else
                z = mid;
        }
        row0[k] = a;
    }
    row0[parts] = rows;
}

void hog_gpu_partials_add(double *out, const double *const *part,
                          unsigned n, uint64_t len)
{
    if (n == 0) {
        memset(out, 0, len * sizeof *out);
        return;
    }
    if (out != part[0])
        memcpy(out, part[0], len * sizeof *out);
    for (unsigned k = 1; k < n; k++) {
        const double *p = part[k];
        for (uint64_t j = 0; j < len; j++)
            out[j] += p[j];
    }
}

hog_status hog_gpu_csr_build(const struct hog_csr *m, uint64_t nf,
                             double bias, uint64_t lo, uint64_t hi, int dev,
                             struct hog_cuda_csr *a, hog_err *err)
{
    memset(a, 0, sizeof *a);
    const bool with_bias = bias != 0.0;
    const uint64_t rows = hi - lo, cols = nf + with_bias;
    const uint64_t nnz = m->off[hi] - m->off[lo] + (with_bias ? rows : 0);
    if (nnz >= (UINT64_C(1) << 31) || rows >= (UINT64_C(1) << 31) ||
        cols >= (UINT64_C(1) << 31))
        return hog_errf(err, HOG_ERANGE,
                        "GPU %d's shard holds %llu rows, %llu nonzeros and "
                        "%llu columns; cuSPARSE's 32-bit indices take fewer "
                        "than 2^31 of each (list more GPUs in --gpus, a GPU "
                        "twice for two shards on it)",
                        dev, (unsigned long long)rows,
                        (unsigned long long)nnz, (unsigned long long)cols);
    int32_t *off = malloc((rows + 1) * sizeof *off);
    int32_t *col = malloc((nnz ? nnz : 1) * sizeof *col);
    double *val = malloc((nnz ? nnz : 1) * sizeof *val);
    if (!off || !col || !val) {
        free(off);
        free(col);
        free(val);
        return hog_errf(err, HOG_ENOMEM, "out of memory for GPU %d's shard "
                        "(%llu nonzeros)", dev, (unsigned long long)nnz);
    }
    uint64_t q = 0;
    off[0] = 0;
    for (uint64_t i = lo; i < hi; i++) {
        for (uint64_t p = m->off[i]; p < m->off[i + 1]; p++) {
            col[q] = (int32_t)m->idx[p];
            val[q++] = m->val[p];
        }
        if (with_bias) { /* after the features: the columns stay sorted */
            col[q] = (int32_t)nf;
            val[q++] = bias;
        }
        off[i - lo + 1] = (int32_t)q;
    }
    *a = (struct hog_cuda_csr){ .dev = dev, .rows = (uint32_t)rows,
                                .cols = (uint32_t)cols, .nnz = nnz,
                                .off = off, .col = col, .val = val };
    return HOG_OK;
}

void hog_gpu_csr_free(struct hog_cuda_csr *a)
{
    free((void *)a->off);
    free((void *)a->col);
    free((void *)a->val);
    memset(a, 0, sizeof *a);
}

/* ---- the table ------------------------------------------------------------- */

struct hog_products {
    unsigned n;             /* shards */
    uint64_t rows, nw;
    uint64_t row0[HOG_GPU_MAX + 1];
    hog_cuda_spmv *s[HOG_GPU_MAX]; /* NULL: a shard without nonzeros */
    double *part;           /* n x nw: the shards' X_s^T c */
};

static void products_close(struct hog_products *p)
{
    if (!p)
        return;
    for (unsigned k = 0; k < p->n; k++)
        hog_cuda_spmv_close(p->s[k]);
    free(p->part);
    free(p);
}

static hog_status products_open(const struct hog_csr *m, uint64_t nf,
                                double bias, const hog_train_opts *o,
                                struct hog_products **out, hog_err *err)
{
    struct hog_gpu_spec spec;
    int dev[HOG_GPU_MAX];
    unsigned n = 0;
    *out = NULL;
    hog_status st = hog_gpu_spec_parse(o->gpus, &spec, err);
    if (st == HOG_OK)
        st = hog_gpu_devices(&spec, dev, &n, err);
    if (st != HOG_OK)
        return st;
    struct hog_products *p = calloc(1, sizeof *p);
    if (!p)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the GPUs' "
                        "products");
    p->n = n;
    p->rows = m->rows;
    p->nw = nf + (bias != 0.0);
    p->part = malloc((size_t)n * (p->nw ? p->nw : 1) * sizeof *p->part);
    if (!p->part) {
        unsigned long long nw = p->nw;
        products_close(p);
        return hog_errf(err, HOG_ENOMEM, "out of memory for the GPUs' "
                        "partial products (%u x %llu weights)", n, nw);
    }
    hog_gpu_rows_split(m->off, m->rows, n, p->row0);
    for (unsigned k = 0; k < n && st == HOG_OK; k++) {
        struct hog_cuda_csr a;
        st = hog_gpu_csr_build(m, nf, bias, p->row0[k], p->row0[k + 1],
                               dev[k], &a, err);
        if (st == HOG_OK && a.nnz > 0)
            st = hog_cuda_spmv_open(&a, &p->s[k], err);
        hog_gpu_csr_free(&a);
    }
    if (st != HOG_OK) {
        products_close(p);
        return st;
    }
    *out = p;
    return HOG_OK;
}

/* Waits for every shard in order; the first failure's sentence. */
static hog_status wait_all(struct hog_products *p, hog_status st,
                           hog_err *err)
{
    for (unsigned k = 0; k < p->n; k++) {
        if (!p->s[k])
            continue;
        hog_err e2;
        hog_status w = hog_cuda_spmv_wait(p->s[k], st == HOG_OK ? err : &e2);
        if (st == HOG_OK)
            st = w;
    }
    return st;
}

static hog_status products_xv(struct hog_products *p, const double *v,
                              double *t, hog_err *err)
{
    hog_status st = HOG_OK;
    for (unsigned k = 0; k < p->n && st == HOG_OK; k++) {
        double *tk = t + p->row0[k];
        if (p->s[k])
            st = hog_cuda_spmv_xv(p->s[k], v, tk, err);
        else /* no nonzeros: every product 0 */
            memset(tk, 0, (p->row0[k + 1] - p->row0[k]) * sizeof *t);
    }
    return wait_all(p, st, err);
}

static hog_status products_xtc(struct hog_products *p, const double *c,
                               bool squares, double *out, hog_err *err)
{
    hog_status st = HOG_OK;
    const double *parts[HOG_GPU_MAX];
    unsigned np = 0;
    for (unsigned k = 0; k < p->n && st == HOG_OK; k++) {
        if (!p->s[k])
            continue;
        double *dst = p->part + (size_t)np * p->nw;
        parts[np++] = dst;
        st = hog_cuda_spmv_xtc(p->s[k], c + p->row0[k], squares, dst, err);
    }
    if ((st = wait_all(p, st, err)) != HOG_OK)
        return st;
    hog_gpu_partials_add(out, parts, np, p->nw);
    return HOG_OK;
}

static uint64_t products_bytes(const struct hog_products *p)
{
    return sizeof *p + (uint64_t)p->n * p->nw * sizeof *p->part;
}

const struct hog_products_ops hog_gpu_products = {
    .open = products_open,
    .xv = products_xv,
    .xtc = products_xtc,
    .bytes = products_bytes,
    .close = products_close,
};
