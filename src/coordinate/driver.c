/*
 * The run around the coordinate solvers' epochs (internal.h has the
 * order of things), and the pool they run on.
 */
#include "coordinate/internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- the pool ------------------------------------------------------------ */

hog_status hog_coord_env_open(unsigned threads, struct hog_coord_env *e,
                              hog_err *err)
{
    memset(e, 0, sizeof *e);
    if (threads == 1) {
        e->threads = 1;
        return HOG_OK;
    }
    hog_status s = hog_pool_for_opts(NULL, threads, HOG_POOL_BIND_ANY,
                                     &e->topo, &e->pool, err);
    if (s != HOG_OK)
        return s;
    e->threads = hog_pool_size(e->pool);
    return HOG_OK;
}

void hog_coord_env_close(struct hog_coord_env *e)
{
    hog_pool_destroy(e->pool);
    hog_topo_free(e->topo);
    memset(e, 0, sizeof *e);
}

/* ---- the epochs ---------------------------------------------------------- */

/* After an epoch: HOG_EINTR with the sentence when the cancel flag is set
 * (coordinate descent stops there; it writes no checkpoints). */
static hog_status check_cancel(struct hog_fit *f, unsigned epoch,
                               hog_err *err)
{
    if (!hog_fit_cancelled(f))
        return HOG_OK;
    return hog_errf(err, HOG_EINTR,
                    "training interrupted after epoch %u; coordinate descent "
                    "writes no checkpoints, so nothing was kept (rerun with a "
                    "smaller --epochs or a looser --tol for a shorter run)",
                    epoch);
}

/* The coordinates each of nt workers kept, moved together in worker
 * order. */
static void gather_kept(struct hog_coord *c, unsigned nt)
{
    uint64_t kept = 0;
    for (unsigned t = 0; t < nt; t++) {
        uint64_t lo, hi, k = c->ops->kept(c, t);
        hog_slice(c->active, t, nt, &lo, &hi);
        if (lo != kept)
            memmove(c->act + kept, c->act + lo, k * sizeof *c->act);
        kept += k;
    }
    c->active = kept;
}

hog_status hog_coord_drive(struct hog_coord *c, uint64_t nnz, hog_err *err)
{
    double t_setup = hog_now();
    struct hog_fit *f = c->f;
    const hog_train_opts *o = f->o;
    const struct hog_coord_ops *ops = c->ops;
    /* A small problem runs on one worker, and opens no pool (coordinate.h). */
    hog_status st = hog_coord_env_open(hog_coord_threads_for(nnz, o->threads),
                                       &c->env, err);
    if (st != HOG_OK)
        return st;
    if ((st = ops->setup(c, err)) != HOG_OK)
        goto out;

    struct hog_rng rng;
    hog_rng_seed(&rng, o->seed, 0);
    t_setup = hog_now() - t_setup;
    for (unsigned epoch = 1; epoch <= o->epochs; epoch++) {
        double t0 = hog_now();
        c->epoch = epoch;
        hog_shuffle_u64(&rng, c->act, c->active);
        unsigned nt = ops->run(c);
        gather_kept(c, nt);
        bool stop = ops->end(c, nt);

        double secs = hog_now() - t0 + (epoch == 1 ? t_setup : 0.0);
        for (uint64_t j = 0; j < c->nw; j++)
            f->model->w[j] = (float)hog_d_load(&c->w[j]);
        if ((st = ops->report(c, err)) != HOG_OK)
            break;
        f->last = stop || epoch == o->epochs;
        f->converged = stop;
        st = f->epoch_end(f, epoch, secs, err);
        if (st != HOG_OK || stop)
            break;
        if ((st = check_cancel(f, epoch, err)) != HOG_OK)
            break;
    }
out:
    hog_coord_env_close(&c->env);
    free((void *)c->w);
    free(c->act);
    c->w = NULL;
    c->act = NULL;
    return st;
}
