/*
 * Serial SGD, the reference every parallel trainer is measured against.
 *
 * Minimises (1/n) sum_i loss(y_i, w.x_i + b) + l2/2 |w|^2 + l1 |w|_1 by
 * plain stochastic (proximal) gradient steps, one row at a time, rows in a
 * fresh seeded permutation each epoch (Bottou, "Stochastic gradient descent
 * tricks", 2012). The update and the lazy regularization that keeps each
 * step O(nnz of the row) are in src/core/sgd.c.
 *
 * The epochs, the averaging blocks, cancel, ticks and checkpoints are the
 * epoch driver's (core/drive.h); the trainer, in memory or streamed, is
 * its rows step.
 * Checkpoints (fit.h) may fall on any step: the state is captured inside
 * the open segment (sgd_state.c) and a resumed run replays the epochs'
 * shuffles from the seed, rebuilds that segment and goes on, so it repeats
 * the uninterrupted run bit for bit. Row checkpoints only split the
 * kernel's blocks, which changes nothing in the arithmetic.
 */
#include "hogwild/hogwild.h"

#include "core/sgd.h"
#include "core/warm.h"
#include "io/io.h"

#include <stdlib.h>
#include <string.h>

/* The serial trainer: a rows step of the epoch driver (core/drive.h)
 * over one order of every row, with the open segment of the lazy
 * regularization (sgd.h) as its state between the driver's pieces
 * (struct hog_drive_seg: a checkpoint after a segment's last step still
 * holds it, seg_pos == its length, as a resumed run rebuilds it). */
struct serial {
    struct hog_fit *f;
    const hog_data *d;
    struct hog_sgd s;
    struct hog_order ord;
    struct hog_sgd_tally tally, *tl; /* tl: &tally when progress listens */
    struct hog_drive dv;
    struct hog_stream_epochs *se; /* streamed: the order and the window */
    struct hog_stream_walk walk;  /* ... and the epoch's walk through it */
    struct hog_drive_seg g; /* the open segment */
};

static struct hog_order *serial_order(void *ctx, unsigned p)
{
    (void)p;
    return &((struct serial *)ctx)->ord;
}

static void serial_begin(void *ctx, unsigned tid, unsigned T, unsigned epoch)
{
    (void)tid, (void)T, (void)epoch;
    ((struct serial *)ctx)->tally = (struct hog_sgd_tally){ 0 };
}

/* Streamed: blk rows of the walk, one at a time with its chunk as the
 * data, cut at the window's end (*blk). */
static hog_status stream_rows(struct serial *c, uint64_t *blk, hog_err *err)
{
    uint64_t left;
    bool fresh;
    hog_status st = hog_stream_walk_next(&c->walk, &left, &fresh, err);
    if (st != HOG_OK)
        return st;
    if (*blk > left)
        *blk = left;
    for (uint64_t b = 0; b < *blk; b++) {
        uint64_t r;
        const hog_data *cd = hog_stream_walk_row(&c->walk, b, &r);
        hog_sgd_run_tally(&c->s, cd, &r, 1, c->g.i + (uint32_t)b, 1,
                          HOG_UPDATE_NONE, NULL, c->tl);
    }
    c->walk.pos += *blk;
    return HOG_OK;
}

static hog_status serial_run(void *ctx, unsigned tid, unsigned T,
                             const struct hog_drive_span *sp, hog_err *err)
{
    (void)tid, (void)T;
    struct serial *c = ctx;
    for (uint64_t from = sp->from; from < sp->to;) {
        uint64_t blk = hog_drive_seg_next(&c->g, &c->s, sp, from);
        if (c->se) {
            hog_status st = stream_rows(c, &blk, err);
            if (st != HOG_OK)
                return st;
        } else {
            hog_sgd_run_tally(&c->s, c->d, c->ord.rows + from, (uint32_t)blk,
                              c->g.i, 1, HOG_UPDATE_NONE, NULL, c->tl);
        }
        c->g.i += (uint32_t)blk;
        from += blk;
    }
    return HOG_OK;
}

static void serial_block_end(void *ctx, unsigned tid, unsigned T)
{
    (void)tid, (void)T;
    hog_drive_seg_close(&((struct serial *)ctx)->g);
}

/* Scale-out: the model's array is the staging buffer. */
static float *serial_net_get(void *ctx, uint64_t *len)
{
    struct serial *c = ctx;
    hog_sgd_copy_weights(&c->s, c->f->model->w);
    *len = c->s.n_weights;
    return c->f->model->w;
}

static void serial_net_put(void *ctx, unsigned tid, unsigned T,
                           const float *w)
{
    (void)tid, (void)T;
    struct serial *c = ctx;
    for (uint64_t j = 0; j < c->s.n_weights; j++)
        atomic_store_explicit(&c->s.w[j], w[j], memory_order_relaxed);
}

static void serial_model(void *ctx, unsigned tid, unsigned T)
{
    (void)tid, (void)T;
    struct serial *c = ctx;
    hog_sgd_copy_weights(&c->s, c->f->model->w);
}

static void serial_report(void *ctx)
{
    struct serial *c = ctx;
    hog_sgd_tally_report(c->f, &c->s, &c->tally);
}

/* Captures the state at step i of the open segment (0 at a boundary). */
static hog_status serial_save(void *ctx, struct hog_train_state *at,
                              bool cut, hog_err *err)
{
    (void)cut; /* a rows step saves where it is */
    struct serial *c = ctx;
    at->seg_t0 = c->s.seg_t0;
    at->seg_want = c->g.open ? c->g.want : 0;
    at->seg_pos = c->g.open ? c->g.i : 0;
    return hog_sgd_checkpoint(c->f, &c->s, at->seg_pos, at,
                              hog_fit_cancelled(c->f), err);
}

/* The driver has replayed the epochs' shuffles from the seed: the random
 * state must match; a checkpoint inside a segment rebuilds it. */
static hog_status serial_resume(void *ctx, const struct hog_train_state *r,
                                uint64_t *open_from, hog_err *err)
{
    struct serial *c = ctx;
    const uint64_t n = c->d->m.rows;
    if (memcmp(&c->ord.rng, &r->rng, sizeof c->ord.rng) != 0)
        return hog_errf(err, HOG_EINVAL, "the checkpoint's random state "
                        "does not follow from this seed (different seed "
                        "or data)");
    if (r->pos == n && r->seg_pos == 0) { /* a completed epoch */
        c->g.t = r->t_global;
        *open_from = n;
        hog_status st = hog_sgd_state_restore(&c->s, r, err);
        hog_sgd_copy_weights(&c->s, c->f->model->w);
        return st;
    }
    c->g.t = r->t_global - r->seg_pos;
    *open_from = r->pos - r->seg_pos;
    uint64_t stop = 0; /* the end of the segment's block */
    for (uint64_t b = 0; b < (c->dv.blocks ? c->dv.blocks : 1); b++)
        if ((stop = hog_drive_stop(&c->dv, b)) > *open_from)
            break;
    uint64_t left = stop > *open_from ? stop - *open_from : 0;
    c->g.want = r->seg_want;
    c->g.len = hog_sgd_segment_begin(&c->s, c->g.t, c->g.want);
    c->g.i = (uint32_t)r->seg_pos;
    c->g.open = true;
    if (r->seg_t0 != c->g.t || r->seg_pos > c->g.len || c->g.len > left)
        return hog_errf(err, HOG_EINVAL, "bad checkpoint: its segment does "
                        "not fit these options");
    return hog_sgd_state_restore(&c->s, r, err);
}

static const struct hog_drive_ops serial_ops = {
    .order = serial_order,
    .begin = serial_begin,
    .run = serial_run,
    .block_end = serial_block_end,
    .net_get = serial_net_get,
    .net_put = serial_net_put,
    .model = serial_model,
    .report = serial_report,
    .save = serial_save,
    .resume = serial_resume,
};

uint64_t *hog_serial_order(uint64_t n, uint64_t seed, struct hog_rng *rng,
                           hog_err *err)
{
    uint64_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!order) {
        hog_errf(err, HOG_ENOMEM, "out of memory for the order of %llu rows",
                 (unsigned long long)n);
        return NULL;
    }
    for (uint64_t i = 0; i < n; i++)
        order[i] = i;
    hog_rng_seed(rng, seed, 0);
    return order;
}

hog_status hog_serial_train(struct hog_fit *f, hog_err *err)
{
    const hog_data *d = f->train;
    const hog_train_opts *o = f->o;
    struct serial c = { .f = f, .d = d };
    c.g = (struct hog_drive_seg){ .end = hog_drive_seg_sgd_end, .ctx = &c.s };

    hog_status st = hog_sgd_init(&c.s, o, d, err);
    if (st != HOG_OK)
        return st;
    c.s.alone = true;
    c.tl = f->hooks.progress ? &c.tally : NULL;
    if (f->init) /* a warm start (a resume replaces it) */
        hog_sgd_set_weights(&c.s, f->init);
    c.ord.n = d->m.rows;
    if (!(c.ord.rows = hog_serial_order(c.ord.n, o->seed, &c.ord.rng, err))) {
        hog_sgd_free(&c.s);
        return HOG_ENOMEM;
    }
    /* Scale-out: the epoch in blocks, the model averaged across processes
     * after each (one block and no averaging when alone). */
    c.dv = (struct hog_drive){ .f = f, .ops = &serial_ops, .ctx = &c,
                               .n = d->m.rows, .n_orders = 1, .rows = true,
                               .blocks = hog_fit_average_blocks(f),
                               .warm_state = true };
    c.dv.net = c.dv.blocks > 0;
    /* the rows one thread steps through are read ahead on another, where
     * the run has one */
    struct hog_warm warm;
    hog_warm_begin(&warm, d, o->threads ? o->threads : hog_allowed_cpus());
    if ((st = hog_drive_begin(&c.dv, err)) == HOG_OK) {
        hog_drive_job(&c.dv, 0, 1);
        st = c.dv.st;
    }
    hog_warm_end(&warm);
    free(c.ord.rows);
    hog_sgd_free(&c.s);
    return st;
}

/* ---- streamed: the same rows step over the stream's order ---------------- */

static hog_status stream_draw(void *ctx, unsigned epoch, bool resumed,
                              hog_err *err)
{
    (void)resumed; /* a stream does not resume */
    return hog_stream_epochs_draw(((struct serial *)ctx)->se, epoch, err);
}

static void stream_begin(void *ctx, unsigned tid, unsigned T, unsigned epoch)
{
    struct serial *c = ctx;
    struct hog_stream_epochs *se = c->se;
    serial_begin(ctx, tid, T, epoch);
    hog_stream_walk_begin(&c->walk, se->s, &se->win, &se->ord, se->seq);
}

/* The epoch's last window goes back to the ring for the read-ahead. */
static void stream_model(void *ctx, unsigned tid, unsigned T)
{
    struct serial *c = ctx;
    hog_stream_win_release(c->se->s, &c->se->win);
    serial_model(ctx, tid, T);
}

/* A stream keeps no checkpoint: the cancel flag ends the run here. */
static hog_status stream_save(void *ctx, struct hog_train_state *at,
                              bool cut, hog_err *err)
{
    (void)ctx, (void)cut;
    return hog_fit_stream_interrupted((unsigned)at->epoch, at->pos, err);
}

static const struct hog_drive_ops serial_stream_ops = {
    .draw = stream_draw,
    .begin = stream_begin,
    .run = serial_run,
    .block_end = serial_block_end,
    .model = stream_model,
    .report = serial_report,
    .save = stream_save,
};

hog_status hog_serial_train_stream(struct hog_fit *f, hog_err *err)
{
    const hog_train_opts *o = f->o;
    struct hog_stream_epochs se;
    struct serial c = { .f = f, .d = f->train, .se = &se };
    c.g = (struct hog_drive_seg){ .end = hog_drive_seg_sgd_end, .ctx = &c.s };
    memset(&se, 0, sizeof se);
    hog_status st = hog_sgd_init(&c.s, o, f->train, err);
    if (st != HOG_OK)
        return st;
    c.s.alone = true;
    c.tl = f->hooks.progress ? &c.tally : NULL;
    if (f->init)
        hog_sgd_set_weights(&c.s, f->init);
    c.dv = (struct hog_drive){ .f = f, .ops = &serial_stream_ops, .ctx = &c,
                               .n = f->train->m.rows, .rows = true };
    if ((st = hog_stream_epochs_init(&se, f, err)) == HOG_OK &&
        (st = hog_drive_begin(&c.dv, err)) == HOG_OK) {
        hog_drive_job(&c.dv, 0, 1);
        st = c.dv.st;
    }
    hog_stream_epochs_free(&se);
    hog_sgd_free(&c.s);
    return st;
}
