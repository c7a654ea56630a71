/*
 * A pass over the rows with the products on devices (newton.h; the table
 * of core/products.h, GPUs through --gpus):
 *
 *   t = X v            on the devices (skipped without v: t = 0)
 *   c_i = fn(i, t_i)   here, over fixed ranges of HOG_NEWTON_DEV_ROWS
 *                      rows on the pool, each range's running sum in its
 *                      own slot, added range 0, 1, 2, ...
 *   out = X^T c        on the devices (or (X.*X)^T c), their partials
 *                      added in the devices' fixed order
 *
 * The row callbacks are the CPU pass's, so the losses, the weights and
 * the counts stay in one place; only the two products move. The rows'
 * work here is a few flops a row against the products' two per nonzero.
 */
#include "newton/newton.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

hog_status hog_newton_dev_open(struct hog_newton_blocks *b,
                               const struct hog_products_ops *ops,
                               const hog_train_opts *o, hog_err *err)
{
    const uint64_t rows = b->m->rows;
    b->dev_ranges = (rows + HOG_NEWTON_DEV_ROWS - 1) / HOG_NEWTON_DEV_ROWS;
    b->dev_t = malloc((rows ? rows : 1) * sizeof *b->dev_t);
    b->dev_acc = malloc((b->dev_ranges ? b->dev_ranges : 1) *
                        sizeof *b->dev_acc);
    if (!b->dev_t || !b->dev_acc) {
        hog_newton_dev_close(b);
        return hog_errf(err, HOG_ENOMEM, "out of memory for the rows' "
                        "products (%llu rows)", (unsigned long long)rows);
    }
    hog_status st = ops->open(b->m, b->nf, b->bias, o, &b->dev, err);
    if (st != HOG_OK) {
        hog_newton_dev_close(b);
        return st;
    }
    b->dev_ops = ops;
    b->bytes += (rows + b->dev_ranges) * sizeof(double) + ops->bytes(b->dev);
    return HOG_OK;
}

void hog_newton_dev_close(struct hog_newton_blocks *b)
{
    if (b->dev_ops && b->dev)
        b->dev_ops->close(b->dev);
    free(b->dev_t);
    free(b->dev_acc);
    b->dev_ops = NULL;
    b->dev = NULL;
    b->dev_t = NULL;
    b->dev_acc = NULL;
}

struct rows_pass {
    struct hog_newton_blocks *b;
    bool have_t;
    hog_newton_row_fn fn;
    void *ctx;
};

/* Ranges [lo, hi) of this worker: t_i becomes c_i in place. */
static void rows_job(void *arg, unsigned tid, unsigned nt)
{
    const struct rows_pass *rp = arg;
    struct hog_newton_blocks *b = rp->b;
    const uint64_t rows = b->m->rows;
    uint64_t lo, hi;
    hog_slice(b->dev_ranges, tid, nt, &lo, &hi);
    for (uint64_t r = lo; r < hi; r++) {
        uint64_t a = r * HOG_NEWTON_DEV_ROWS, e = a + HOG_NEWTON_DEV_ROWS;
        double acc = 0.0;
        for (uint64_t i = a; i < e && i < rows; i++)
            b->dev_t[i] = rp->fn(rp->ctx, i, rp->have_t ? b->dev_t[i] : 0.0,
                                 &acc);
        b->dev_acc[r] = acc;
    }
}

double hog_newton_dev_pass(struct hog_newton_blocks *b, const double *v,
                           hog_newton_row_fn fn, void *ctx, double *out,
                           bool squares)
{
    const struct hog_products_ops *ops = b->dev_ops;
    if (v && (b->st = ops->xv(b->dev, v, b->dev_t, &b->err)) != HOG_OK)
        return NAN;
    struct rows_pass rp = { b, v != NULL, fn, ctx };
    if (b->pool && b->dev_ranges > 1)
        hog_pool_run(b->pool, rows_job, &rp);
    else
        rows_job(&rp, 0, 1);
    double acc = 0.0;
    for (uint64_t r = 0; r < b->dev_ranges; r++)
        acc += b->dev_acc[r];
    if (out && (b->st = ops->xtc(b->dev, b->dev_t, squares, out,
                                 &b->err)) != HOG_OK)
        return NAN;
    return acc;
}
