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
    struct hog_stream_win w;
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
    const struct hog_stream_win *w = &h->w;
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

static void window_job(void *arg, unsigned tid, unsigned T)
{
    struct hstream *h = arg;
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

hog_status hog_hogwild_train_stream(struct hog_fit *f, hog_err *err)
{
    const hog_train_opts *o = f->o;
    hog_stream *st = f->stream;
    const struct hog_hgb_info *in = hog_stream_info(st);
    const uint64_t nc = in->n_chunks, W = hog_stream_window(st);
    struct hog_topo *topo = NULL;
    struct hstream h;
    memset(&h, 0, sizeof h);
    h.f = f;
    h.mode = o->update;
    struct hog_stream_order ord;
    memset(&ord, 0, sizeof ord);

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
    if (o->progress &&
        !(h.tally = aligned_alloc(HOG_CACHELINE, T * sizeof *h.tally))) {
        rc = hog_errf(err, HOG_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = hog_sgd_locks_init(&h.locks, o->update, &h.s, err)) != HOG_OK ||
        (rc = hog_stream_win_init(&h.w, W, err)) != HOG_OK ||
        (rc = hog_stream_order_init(&ord, in, W, o->seed, err)) != HOG_OK)
        goto out;

    const uint64_t *seq = hog_stream_order_epoch(&ord);
    if ((rc = hog_stream_push(st, seq, nc, err)) != HOG_OK)
        goto out;
    for (unsigned epoch = 1; epoch <= o->epochs; epoch++) {
        double t0 = hog_now();
        const uint64_t *next_seq = NULL;
        if (epoch < o->epochs) { /* prefetch: the next epoch queues now */
            next_seq = hog_stream_order_epoch(&ord);
            if ((rc = hog_stream_push(st, next_seq, nc, err)) != HOG_OK)
                break;
        }
        h.epoch = epoch;
        h.epoch_done = 0;
        if (h.tally)
            memset(h.tally, 0, T * sizeof *h.tally);
        for (uint64_t win = 0; win * W < nc; win++) {
            uint64_t k = nc - win * W < W ? nc - win * W : W;
            hog_stream_win_release(st, &h.w);
            if ((rc = hog_stream_win_take(st, &h.w, k, err)) != HOG_OK)
                break;
            h.rows = hog_stream_order_window(&ord, seq, win, &h.nrows);
            h.pos = 0;
            hog_pool_run(h.pool, window_job, &h);
            h.epoch_done += h.nrows;
            if (hog_fit_cancelled(f)) { /* seen after each window */
                rc = hog_fit_stream_interrupted(epoch, h.epoch_done, err);
                break;
            }
        }
        hog_stream_win_release(st, &h.w);
        if (rc != HOG_OK)
            break;
        seq = next_seq;
        hog_sgd_copy_weights(&h.s, f->model->w);
        struct hog_sgd_tally all = { 0 }; /* in thread order */
        for (unsigned p = 0; h.tally && p < T; p++)
            hog_sgd_tally_merge(&all, &h.tally[p].t);
        hog_sgd_tally_report(f, &h.s, &all);
        if ((rc = f->epoch_end(f, epoch, hog_now() - t0, err)) != HOG_OK)
            break;
    }
out:
    if (h.w.c)
        hog_stream_win_release(st, &h.w);
    hog_stream_win_free(&h.w);
    hog_stream_order_free(&ord);
    hog_sgd_locks_free(&h.locks);
    hog_sgd_free(&h.s);
    free(h.tally);
    hog_pool_destroy(h.pool);
    hog_topo_free(topo);
    return rc;
}
