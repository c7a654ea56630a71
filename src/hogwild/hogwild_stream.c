/*
 * Hogwild! out of core: the objective, the kernel and the update modes of
 * hogwild.c, with the rows coming from a chunk stream (src/io/stream.c)
 * instead of memory.
 *
 * Each epoch walks the stream's order (hog_stream_order_init in io.h): the
 * chunk order is reshuffled, cut into windows of W chunks, and the rows of
 * each window are shuffled together. For a window, the calling thread takes
 * its W chunks from the ring (each checked as it arrives) while the other
 * half of the ring is already reading the next window; then all T pool
 * threads run Hogwild! on the window's rows, thread p taking window steps
 * p, p + T, p + 2T, ... of the interleaved clock (as hogwild.c does with its
 * shards), in segments of the lazy regularization that end at the window's
 * end; at each segment's end every weight is brought up to date in
 * parallel slices. One shared model: replicas would multiply the memory
 * the budget is meant to bound, and are refused.
 *
 * The epochs are the epoch driver's (core/drive.h): the stream's chunk
 * order is its draw (stream_epochs.c), and an epoch is one block whose
 * step takes the windows in turn; thread 0 takes each window's chunks
 * (the others wait at the barrier) and polls the cancel flag after it.
 */
#include "hogwild/hogwild.h"

#include "core/sgd.h"
#include "io/io.h"
#include "pool/pool.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

struct hstream {
    struct hog_fit *f;
    struct hog_pool *pool;
    hog_update mode;
    struct hog_sgd s;
    struct hog_sgd_locks locks;
    struct hog_stream_epochs se;
    struct hog_drive dv;
    hog_status st;        /* thread 0's window take */
    uint64_t win;         /* the window of the epoch */
    const uint32_t *rows; /* the window's shuffled row order */
    uint64_t nrows;       /* its length */
    uint64_t pos;         /* window steps done */
    uint64_t t;           /* global step of the next segment */
    uint64_t epoch_done;  /* rows of the epoch before this window */
    uint32_t len;         /* the running segment; 0: the window is done */
    unsigned epoch;
    struct tally_line { /* per thread, its rows' scores (progress on) */
        alignas(HOG_CACHELINE) struct hog_sgd_tally t;
    } *tally;
};

/* Thread tid's steps of the running segment: window steps pos + k for
 * k = tid, tid + T, ... < len, each at segment step k. */
static void run_segment(struct hstream *h, unsigned tid, unsigned T)
{
    const struct hog_stream_win *w = &h->se.win;
    const uint32_t *rows = h->rows + h->pos;
    uint64_t tick_every = HOG_SGD_BLOCK * (uint64_t)T;
    for (uint64_t k = tid; k < h->len; k += T) {
        uint32_t p = rows[k];
        uint64_t j = hog_stream_win_chunk(w, p);
        uint64_t r = p - w->first[j];
        hog_sgd_run_tally(&h->s, &w->d[j], &r, 1, (uint32_t)k, T, h->mode,
                          &h->locks, h->tally ? &h->tally[tid].t : NULL);
        if (tid == 0 && k % tick_every == 0)
            h->f->tick(h->f, h->epoch, h->epoch_done + h->pos + k,
                       h->f->train->m.rows);
    }
}

/* The window's rows on every thread, in segments that end at its end. */
static void run_window(struct hstream *h, unsigned tid, unsigned T)
{
    for (;;) {
        if (tid == 0) {
            uint64_t left = h->nrows - h->pos;
            h->len = left == 0 ? 0
                     : hog_sgd_segment_begin(&h->s, h->t,
                                             left < UINT32_MAX ? (uint32_t)left
                                                               : UINT32_MAX);
        }
        hog_pool_barrier(h->pool);
        if (h->len == 0)
            break;
        run_segment(h, tid, T);
        hog_pool_barrier(h->pool);
        uint64_t n = h->s.n_weights;
        hog_sgd_catch_up_range(&h->s, n * tid / T, n * (tid + 1) / T, h->len);
        hog_pool_barrier(h->pool);
        if (tid == 0) {
            h->t += h->len;
            h->pos += h->len;
        }
    }
}

/* Thread 0: the next window's chunks and row order; h->nrows 0 when the
 * epoch's windows are done. */
static hog_status next_window(struct hstream *h, hog_err *err)
{
    const uint64_t nc = h->se.ord.in->n_chunks;
    const uint64_t W = hog_stream_window(h->se.s);
    h->nrows = 0;
    if (h->win * W >= nc)
        return HOG_OK;
    uint64_t k = nc - h->win * W < W ? nc - h->win * W : W;
    hog_stream_win_release(h->se.s, &h->se.win);
    hog_status st = hog_stream_win_take(h->se.s, &h->se.win, k, err);
    if (st != HOG_OK)
        return st;
    h->rows = hog_stream_order_window(&h->se.ord, h->se.seq, h->win,
                                      &h->nrows);
    h->pos = 0;
    h->win++;
    return HOG_OK;
}

/* The epoch's one block: its windows in turn. */
static hog_status run_block(void *ctx, unsigned tid, unsigned T,
                            const struct hog_drive_span *sp, hog_err *err)
{
    (void)sp;
    struct hstream *h = ctx;
    for (;;) {
        if (tid == 0)
            h->st = next_window(h, err);
        hog_pool_barrier(h->pool);
        if (h->st != HOG_OK || h->nrows == 0)
            return h->st;
        run_window(h, tid, T);
        if (tid == 0) {
            h->epoch_done += h->nrows;
            hog_drive_poll(&h->dv); /* seen after each window */
        }
        hog_pool_barrier(h->pool);
        if (atomic_load_explicit(&h->dv.cut, memory_order_relaxed))
            return HOG_OK;
    }
}

static hog_status draw(void *ctx, unsigned epoch, bool resumed,
                       hog_err *err)
{
    (void)resumed; /* a stream does not resume */
    return hog_stream_epochs_draw(&((struct hstream *)ctx)->se, epoch, err);
}

static void begin(void *ctx, unsigned tid, unsigned T, unsigned epoch)
{
    struct hstream *h = ctx;
    if (h->tally)
        h->tally[tid].t = (struct hog_sgd_tally){ 0 };
    if (tid == 0) {
        h->epoch = epoch;
        h->epoch_done = 0;
        h->win = 0;
    }
    (void)T;
}

/* Thread 0 (the others wait): the epoch's last window goes back to the
 * ring for the read-ahead, the weights into the model. */
static void model(void *ctx, unsigned tid, unsigned T)
{
    (void)T;
    struct hstream *h = ctx;
    if (tid != 0)
        return;
    hog_stream_win_release(h->se.s, &h->se.win);
    hog_sgd_copy_weights(&h->s, h->f->model->w);
}

static void report(void *ctx)
{
    struct hstream *h = ctx;
    struct hog_sgd_tally all = { 0 }; /* in thread order */
    for (unsigned p = 0; h->tally && p < hog_pool_size(h->pool); p++)
        hog_sgd_tally_merge(&all, &h->tally[p].t);
    hog_sgd_tally_report(h->f, &h->s, &all);
}

/* A stream keeps no checkpoint: the cancel flag ends the run here. */
static hog_status save(void *ctx, struct hog_train_state *at, bool cut,
                       hog_err *err)
{
    (void)cut;
    struct hstream *h = ctx;
    return hog_fit_stream_interrupted((unsigned)at->epoch, h->epoch_done,
                                      err);
}

static void barrier(void *ctx)
{
    hog_pool_barrier(((struct hstream *)ctx)->pool);
}

static const struct hog_drive_ops hstream_ops = {
    .draw = draw,
    .begin = begin,
    .run = run_block,
    .model = model,
    .report = report,
    .save = save,
    .barrier = barrier,
};

static void train_job(void *arg, unsigned tid, unsigned T)
{
    hog_drive_job(&((struct hstream *)arg)->dv, tid, T);
}

hog_status hog_hogwild_train_stream(struct hog_fit *f, hog_err *err)
{
    const hog_train_opts *o = f->o;
    struct hog_topo *topo = NULL;
    struct hstream h;
    memset(&h, 0, sizeof h);
    h.f = f;
    h.mode = o->update;

    hog_status rc = hog_pool_for_opts(o, o->threads, HOG_POOL_BIND_OPTS,
                                      &topo, &h.pool, err);
    if (rc != HOG_OK)
        goto out;
    if ((rc = hog_sgd_init(&h.s, o, f->train, err)) != HOG_OK)
        goto out;
    h.s.alone = hog_pool_size(h.pool) == 1;
    if (f->init)
        hog_sgd_set_weights(&h.s, f->init);
    unsigned T = hog_pool_size(h.pool);
    if (f->hooks.progress &&
        !(h.tally = aligned_alloc(HOG_CACHELINE, T * sizeof *h.tally))) {
        rc = hog_errf(err, HOG_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = hog_sgd_locks_init(&h.locks, o->update, &h.s, err)) != HOG_OK ||
        (rc = hog_stream_epochs_init(&h.se, f, err)) != HOG_OK)
        goto out;
    h.dv = (struct hog_drive){ .f = f, .ops = &hstream_ops, .ctx = &h,
                               .n = f->train->m.rows };
    if ((rc = hog_drive_begin(&h.dv, err)) != HOG_OK)
        goto out;
    hog_pool_run(h.pool, train_job, &h);
    rc = h.dv.st;
out:
    hog_stream_epochs_free(&h.se);
    hog_sgd_locks_free(&h.locks);
    hog_sgd_free(&h.s);
    free(h.tally);
    hog_pool_destroy(h.pool);
    hog_topo_free(topo);
    return rc;
}
