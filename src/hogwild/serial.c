/*
 * Serial SGD, the reference every parallel trainer is measured against.
 *
 * Minimises (1/n) sum_i loss(y_i, w.x_i + b) + l2/2 |w|^2 + l1 |w|_1 by
 * plain stochastic (proximal) gradient steps, one row at a time, rows in a
 * fresh seeded permutation each epoch (Bottou, "Stochastic gradient descent
 * tricks", 2012). The update and the lazy regularization that keeps each
 * step O(nnz of the row) are in src/core/sgd.c.
 *
 * Checkpoints (fit.h) may fall on any step: the state is captured inside
 * the open segment (sgd_state.c) and a resumed run replays the epochs'
 * shuffles from the seed, rebuilds that segment and goes on, so it repeats
 * the uninterrupted run bit for bit. Row checkpoints only split the
 * kernel's blocks, which changes nothing in the arithmetic.
 */
#include "hogwild/hogwild.h"

#include "core/sgd.h"
#include "io/io.h"

#include <stdlib.h>
#include <string.h>

/* Captures the state at step seg_pos of the open segment and hands it to
 * the front door. */
static hog_status checkpoint(struct hog_fit *f, struct hog_sgd *s,
                             const struct hog_rng *rng, unsigned epoch,
                             uint64_t pos, uint64_t t_global, uint32_t want,
                             uint32_t seg_pos, hog_err *err)
{
    bool cancel = hog_fit_cancelled(f);
    struct hog_train_state st = { .epoch = epoch, .pos = pos,
                                  .t_global = t_global, .seg_t0 = s->seg_t0,
                                  .seg_want = want, .seg_pos = seg_pos,
                                  .rng = *rng };
    return hog_sgd_checkpoint(f, s, seg_pos, &st, cancel, err);
}

/* Replaces the weights (all current: a segment just ended) by the average
 * across processes; the model's array is the staging buffer. */
static hog_status average(struct hog_fit *f, struct hog_sgd *s, hog_err *err)
{
    float *w = f->model->w;
    hog_sgd_copy_weights(s, w);
    hog_status st = hog_fit_average(f, w, s->n_weights, err);
    if (st != HOG_OK)
        return st;
    for (uint64_t j = 0; j < s->n_weights; j++)
        atomic_store_explicit(&s->w[j], w[j], memory_order_relaxed);
    return HOG_OK;
}

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
    const struct hog_train_state *r = f->resume;
    uint64_t n = d->m.rows;
    uint64_t every = f->ckpt_rows ? f->ckpt_rows : UINT64_MAX;

    struct hog_sgd s;
    hog_status st = hog_sgd_init(&s, o, d, err);
    if (st != HOG_OK)
        return st;
    s.alone = true;
    if (f->init) /* a warm start (a resume below replaces it) */
        hog_sgd_set_weights(&s, f->init);
    struct hog_rng rng;
    uint64_t *order = hog_serial_order(n, o->seed, &rng, err);
    if (!order) {
        hog_sgd_free(&s);
        return HOG_ENOMEM;
    }

    /* Scale-out: the epoch in `blocks` blocks, the model averaged across
     * processes after each (one block and no averaging when alone). */
    uint64_t blocks = hog_fit_average_blocks(f);
    uint64_t nb = blocks ? blocks : 1;
    uint64_t t_global = 0;
    unsigned first = 1;
    if (r) { /* the permutations up to the checkpoint's epoch, from the seed */
        for (uint64_t e = 1; e <= r->epoch; e++)
            hog_shuffle_u64(&rng, order, n);
        if (memcmp(&rng, &r->rng, sizeof rng) != 0)
            st = hog_errf(err, HOG_EINVAL, "the checkpoint's random state "
                          "does not follow from this seed (different seed "
                          "or data)");
        else if (r->pos == n && r->seg_pos == 0) { /* a completed epoch */
            st = hog_sgd_state_restore(&s, r, err);
            hog_sgd_copy_weights(&s, f->model->w);
        }
        t_global = r->t_global - r->seg_pos;
        first = (unsigned)(r->pos == n && r->seg_pos == 0 ? r->epoch + 1
                                                           : r->epoch);
    }

    for (unsigned epoch = first; epoch <= o->epochs && st == HOG_OK; epoch++) {
        double t0 = hog_now();
        struct hog_sgd_tally tally = { 0 }, *tl = o->progress ? &tally : NULL;
        bool in_seg = r && epoch == r->epoch; /* resuming inside this epoch */
        uint64_t done = in_seg ? r->pos - r->seg_pos : 0;
        if (!in_seg)
            hog_shuffle_u64(&rng, order, n);
        for (uint64_t k = 1; k <= nb && st == HOG_OK; k++) {
            uint64_t stop = (uint64_t)((unsigned __int128)n * k / nb);
            if (in_seg && stop <= done)
                continue; /* a block finished before the checkpoint */
            while (done < stop && st == HOG_OK) {
                uint64_t left = stop - done;
                uint32_t want = in_seg ? r->seg_want
                                       : left < UINT32_MAX ? (uint32_t)left
                                                           : UINT32_MAX;
                uint32_t len = hog_sgd_segment_begin(&s, t_global, want);
                uint32_t i = 0;
                if (in_seg) {
                    in_seg = false;
                    i = r->seg_pos;
                    if (r->seg_t0 != t_global || i > len || len > left)
                        st = hog_errf(err, HOG_EINVAL, "bad checkpoint: its "
                                      "segment does not fit these options");
                    else
                        st = hog_sgd_state_restore(&s, r, err);
                }
                while (i < len && st == HOG_OK) {
                    uint32_t blk = len - i < HOG_SGD_BLOCK ? len - i
                                                           : HOG_SGD_BLOCK;
                    uint64_t to_ck = every - (t_global + i) % every;
                    if (to_ck < blk)
                        blk = (uint32_t)to_ck;
                    hog_sgd_run_tally(&s, d, order + done + i, blk, i, 1,
                                      HOG_UPDATE_NONE, NULL, tl);
                    i += blk;
                    f->tick(f, epoch, done + i, n);
                    if ((t_global + i) % every == 0 || hog_fit_cancelled(f))
                        st = checkpoint(f, &s, &rng, epoch, done + i,
                                        t_global + i, want, i, err);
                }
                if (st != HOG_OK)
                    break;
                hog_sgd_segment_end(&s, len);
                t_global += len;
                done += len;
            }
            if (blocks && st == HOG_OK)
                st = average(f, &s, err);
        }
        if (st != HOG_OK)
            break;
        hog_sgd_copy_weights(&s, f->model->w);
        hog_sgd_tally_report(f, &s, &tally);
        st = f->epoch_end(f, epoch, hog_now() - t0, err);
        if (st == HOG_OK && ((f->ckpt_epochs && epoch % f->ckpt_epochs == 0) ||
                             hog_fit_cancelled(f)))
            st = checkpoint(f, &s, &rng, epoch, n, t_global, 0, 0, err);
    }
    free(order);
    hog_sgd_free(&s);
    return st;
}

/* ---- streamed ---------------------------------------------------------------- */

hog_status hog_serial_train_stream(struct hog_fit *f, hog_err *err)
{
    const hog_train_opts *o = f->o;
    hog_stream *st = f->stream;
    const struct hog_hgb_info *in = hog_stream_info(st);
    const uint64_t n = in->rows, nc = in->n_chunks;
    const uint64_t W = hog_stream_window(st);

    struct hog_sgd s;
    hog_status rc = hog_sgd_init(&s, o, f->train, err);
    if (rc != HOG_OK)
        return rc;
    s.alone = true;
    if (f->init)
        hog_sgd_set_weights(&s, f->init);
    struct hog_stream_order ord;
    struct hog_stream_win w;
    memset(&ord, 0, sizeof ord);
    if ((rc = hog_stream_win_init(&w, W, err)) != HOG_OK ||
        (rc = hog_stream_order_init(&ord, in, W, o->seed, err)) != HOG_OK)
        goto out;

    const uint64_t *seq = hog_stream_order_epoch(&ord);
    if ((rc = hog_stream_push(st, seq, nc, err)) != HOG_OK)
        goto out;
    uint64_t t_global = 0;
    for (unsigned epoch = 1; epoch <= o->epochs && rc == HOG_OK; epoch++) {
        double t0 = hog_now();
        struct hog_sgd_tally tally = { 0 }, *tl = o->progress ? &tally : NULL;
        /* The next epoch's chunks go in the queue now: its first reads
         * start as soon as this epoch's last buffers come back. */
        const uint64_t *next_seq = NULL;
        if (epoch < o->epochs) {
            next_seq = hog_stream_order_epoch(&ord);
            if ((rc = hog_stream_push(st, next_seq, nc, err)) != HOG_OK)
                break;
        }
        struct hog_stream_walk k;
        hog_stream_walk_begin(&k, st, &w, &ord, seq);
        uint64_t done = 0;
        while (done < n && rc == HOG_OK) {
            uint64_t left = n - done;
            uint32_t len = hog_sgd_segment_begin(
                &s, t_global, left < UINT32_MAX ? (uint32_t)left : UINT32_MAX);
            for (uint32_t i = 0; i < len;) {
                uint64_t blk;
                bool fresh;
                if ((rc = hog_stream_walk_next(&k, &blk, &fresh, err)) !=
                    HOG_OK)
                    break;
                blk = blk < len - i ? blk : len - i;
                blk = blk < HOG_SGD_BLOCK ? blk : HOG_SGD_BLOCK;
                for (uint64_t b = 0; b < blk; b++) {
                    /* one row through the specialised kernel, with its
                     * chunk as the data */
                    uint64_t r;
                    const hog_data *cd = hog_stream_walk_row(&k, b, &r);
                    hog_sgd_run_tally(&s, cd, &r, 1, i + (uint32_t)b, 1,
                                      HOG_UPDATE_NONE, NULL, tl);
                }
                i += (uint32_t)blk;
                k.pos += blk;
                f->tick(f, epoch, done + i, n);
                if (hog_fit_cancelled(f)) {
                    rc = hog_fit_stream_interrupted(epoch, done + i, err);
                    break;
                }
            }
            if (rc != HOG_OK)
                break;
            hog_sgd_segment_end(&s, len);
            t_global += len;
            done += len;
        }
        hog_stream_win_release(st, &w);
        if (rc != HOG_OK)
            break;
        seq = next_seq;
        hog_sgd_copy_weights(&s, f->model->w);
        hog_sgd_tally_report(f, &s, &tally);
        rc = f->epoch_end(f, epoch, hog_now() - t0, err);
    }
out:
    hog_stream_win_release(st, &w);
    hog_stream_win_free(&w);
    hog_stream_order_free(&ord);
    hog_sgd_free(&s);
    return rc;
}
