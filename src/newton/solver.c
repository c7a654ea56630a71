/*
 * What the solvers over the products share (newton.h): the blocks of the
 * training rows, the loss's targets and the rows' counts, LIBLINEAR's -e
 * rule and the end of an iteration (the weights into the model, the epoch
 * to the front door, the answer to a cancel or a failed reduction).
 */
#include "newton/newton.h"

#include "core/loss.h"

#include <math.h>
#include <stdlib.h>

hog_status hog_newton_open(struct hog_newton_blocks *b,
                           const struct hog_fit *f, hog_err *err)
{
    const hog_data *d = f->train;
    hog_status st = hog_newton_blocks_open(b, &d->m, d->n_features,
                                           f->o->bias, f->o->threads, err);
    if (st != HOG_OK)
        return st;
    if (f->products &&
        (st = hog_newton_dev_open(b, f->products, f->o, err)) != HOG_OK) {
        hog_newton_blocks_close(b);
        return st;
    }
    if (!f->hooks.reduce)
        return HOG_OK;
    b->red = hog_malloc_big((b->nw + 1) * sizeof *b->red);
    if (!b->red) {
        hog_newton_blocks_close(b);
        return hog_errf(err, HOG_ENOMEM, "out of memory for the products' "
                        "all-reduce (%llu weights)",
                        (unsigned long long)b->nw);
    }
    b->bytes += (b->nw + 1) * sizeof *b->red;
    b->reduce = f->hooks.reduce;
    b->reduce_ctx = f->hooks.reduce_ctx;
    return HOG_OK;
}

void hog_newton_targets(const struct hog_fit *f, hog_loss loss, double *y)
{
    const hog_data *d = f->train;
    for (uint64_t i = 0; i < d->m.rows; i++)
        y[i] = hog_loss_target(loss, d->label_pos, d->m.y[i]);
}

hog_status hog_newton_count(struct hog_newton_blocks *b, const double *y,
                            uint64_t n, hog_err *err)
{
    uint64_t pos = 0;
    for (uint64_t i = 0; i < n; i++)
        pos += y[i] > 0;
    b->rows = n;
    b->pos = pos;
    if (!b->reduce)
        return HOG_OK;
    /* counts below 2^53: exact as doubles */
    double c[2] = { (double)n, (double)pos };
    hog_status st = b->reduce(b->reduce_ctx, c, 2, err);
    if (st != HOG_OK)
        return st;
    b->rows = (uint64_t)c[0];
    b->pos = (uint64_t)c[1];
    if (b->rows == 0)
        return hog_errf(err, HOG_EINVAL, "the ranks hold no training rows "
                        "at all");
    return HOG_OK;
}

double hog_newton_rel_tol(const struct hog_newton_blocks *b, hog_loss loss,
                          double tol)
{
    if (!hog_loss_is_classification(loss))
        return tol;
    uint64_t n = b->rows, pos = b->pos;
    uint64_t few = pos < n - pos ? pos : n - pos;
    return tol * (double)(few > 1 ? few : 1) / (double)n;
}

struct to_model {
    const double *w;
    float *out;
};

static void op_model(void *ctx, uint64_t lo, uint64_t hi, double *sum)
{
    (void)sum;
    const struct to_model *m = ctx;
    for (uint64_t j = lo; j < hi; j++)
        m->out[j] = (float)m->w[j];
}

hog_status hog_newton_report(struct hog_fit *f, struct hog_newton_blocks *b,
                             const struct hog_newton_iter *it, hog_err *err)
{
    if (b->st != HOG_OK) {
        *err = b->err;
        return b->st;
    }
    struct to_model m = { it->w, f->model->w };
    hog_newton_vec(b, op_model, &m, NULL);
    f->mean_loss = it->mean_loss;
    f->objective = it->objective;
    f->last = it->stop || it->epoch == f->o->epochs;
    f->converged = it->converged;
    hog_status st = f->epoch_end(f, it->epoch, it->secs, err);
    if (st == HOG_OK && !f->last && hog_fit_cancelled(f))
        st = hog_errf(err, HOG_EINTR,
                      "training interrupted after %s iteration %u; %s "
                      "writes no checkpoints, so nothing was kept (rerun "
                      "with a smaller --epochs or a looser --tol for a "
                      "shorter run)", it->solver, it->epoch, it->solver);
    return st;
}
