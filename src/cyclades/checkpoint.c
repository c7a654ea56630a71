/*
 * Cyclades' checkpoints: the training state at a batch boundary handed to
 * the front door (core/fit.h's save hook), and the resume from one: the
 * orders of the epochs before it replayed from the seed, the SGD state
 * restored, the open kernel segment rebuilt. A checkpoint does not depend
 * on the thread count, and neither does the model resumed from it.
 */
#include "cyclades/internal.h"

#include <string.h>

/* Softmax keeps the state of whole epochs (the K-wide weights have one
 * stamp per feature, not the binary state's per weight): after epoch
 * `epoch`, every segment ended and the model's vectors sliced. */
static void keep_epoch(void *arg, unsigned epoch)
{
    struct cyc *c = arg;
    c->last.epoch = epoch;
    c->last.pos = c->n;
    c->last.t_global = c->t_global;
    c->last.rng = c->rows_rng;
    if (c->last.w) /* else no checkpoint file: where training stands */
        hog_softmax_state_keep(&c->km, c->f->model->w, &c->last);
}

/* Hands the state after epoch position epos (a batch boundary) to the
 * front door; HOG_EINTR when cancelled. One thread, the others waiting.
 * Softmax: after whole epochs; a stop inside one hands the last whole
 * epoch on (hog_fit_epoch_checkpoint). */
hog_status hog_cyc_checkpoint(struct cyc *c, uint64_t epos, bool cancelled)
{
    if (c->softmax)
        return hog_fit_epoch_checkpoint(c->f, &c->last, c->epoch,
                                        epos < c->n, keep_epoch, c, c->err);
    uint32_t seg_pos = (uint32_t)(epos - c->seg_lo);
    if (epos >= c->n)
        seg_pos = 0; /* the epoch's last segment has ended */
    struct hog_train_state st = {
        .epoch = c->epoch, .pos = epos,
        .t_global = c->t_global + seg_pos, .seg_t0 = c->t_global,
        .seg_want = epos < c->n ? c->seg_want : 0, .seg_pos = seg_pos,
        .rng = c->rows_rng
    };
    return hog_sgd_checkpoint(c->f, &c->s, seg_pos, &st, cancelled, c->err);
}

/* Epoch position of the first row of the epoch's last batch. */
uint64_t hog_cyc_last_batch_start(const struct cyc *c)
{
    uint64_t b = c->visit[c->nb - 1];
    return c->n - (min_u64(b * c->B + c->B, c->n) - b * c->B);
}

/* Puts the run where checkpoint f->resume left it: the orders of the
 * epochs up to its epoch replayed from the seed, the SGD state restored,
 * the open segment rebuilt. *first: the epoch to train next; *mid: it is
 * under way (its order is drawn, its start set). */
hog_status hog_cyc_resume(struct cyc *c, struct hog_rng *rows,
                          struct hog_rng *batches, unsigned *first, bool *mid,
                          hog_err *err)
{
    const struct hog_train_state *r = c->f->resume;
    bool after = true;
    if (c->softmax) {
        hog_status st = hog_softmax_state_restore(&c->km, r, c->n,
                                                  c->f->model->w, &after, err);
        if (st != HOG_OK)
            return st;
        c->last.epoch = r->epoch;
        c->last.pos = r->pos;
        c->last.t_global = r->t_global;
        c->last.rng = r->rng;
        if (c->last.w)
            hog_softmax_state_keep(&c->km, r->w, &c->last);
        c->t_global = r->t_global;
        *first = (unsigned)r->epoch + after;
        *mid = false;
        if (!after) /* before epoch 1: nothing to replay */
            return HOG_OK;
    }
    for (uint64_t e = 1; e <= r->epoch; e++)
        hog_cyc_next_order(c, rows, batches, (unsigned)e);
    if (memcmp(rows, &r->rng, sizeof *rows) != 0)
        return hog_errf(err, HOG_EINVAL, "the checkpoint's random state "
                        "does not follow from this seed (different seed "
                        "or data)");
    if (c->softmax) /* restored above */
        return HOG_OK;
    if (r->pos >= c->n) { /* a completed epoch */
        if (r->seg_pos != 0 || r->pos != c->n)
            return hog_errf(err, HOG_EINVAL, "bad checkpoint: an epoch's end "
                            "inside a segment");
        hog_status st = hog_sgd_state_restore(&c->s, r, err);
        if (st != HOG_OK)
            return st;
        hog_sgd_copy_weights(&c->s, c->f->model->w);
        c->t_global = r->t_global;
        *first = (unsigned)r->epoch + 1;
        *mid = false;
        return HOG_OK;
    }
    /* inside an epoch: at a batch boundary of this order */
    uint64_t epos = 0, bi = 0;
    while (bi < c->nb && epos < r->pos) {
        uint64_t b = c->visit[bi++];
        epos += min_u64(b * c->B + c->B, c->n) - b * c->B;
    }
    if (epos != r->pos || r->seg_pos > r->pos || r->seg_want == 0)
        return hog_errf(err, HOG_EINVAL,
                        "bad checkpoint: row %llu of epoch %llu is not where "
                        "a batch ends with these options (--batch-size, "
                        "--repartition)",
                        (unsigned long long)r->pos,
                        (unsigned long long)r->epoch);
    c->t_global = r->seg_t0;
    c->seg_lo = r->pos - r->seg_pos;
    c->seg_want = r->seg_want;
    c->seg_len = hog_sgd_segment_begin(&c->s, c->t_global, c->seg_want);
    if (r->t_global != r->seg_t0 + r->seg_pos || r->seg_pos > c->seg_len ||
        c->seg_lo + c->seg_len > c->n)
        return hog_errf(err, HOG_EINVAL, "bad checkpoint: its segment does "
                        "not fit these options");
    hog_status st = hog_sgd_state_restore(&c->s, r, err);
    if (st != HOG_OK)
        return st;
    c->start_bi = bi;
    c->start_epos = epos;
    *first = (unsigned)r->epoch;
    *mid = true;
    return HOG_OK;
}
