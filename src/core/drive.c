/*
 * The SGD epoch driver (drive.h has its loop and the two kinds of step).
 *
 * Steps are counted from the start of training: every epoch has n of
 * them, so epoch e's row p is step (e - 1) n + p, which is where the row
 * checkpoints fall (fit.h: they do not depend on where a run resumed).
 */
#include "core/drive.h"

#include "core/sgd.h"

#include <string.h>

static void barrier(const struct hog_drive *dv)
{
    if (dv->ops->barrier)
        dv->ops->barrier(dv->ctx);
}

/* Hands the state at row pos of epoch `epoch` to the step's save(). */
static hog_status save(struct hog_drive *dv, unsigned epoch, uint64_t pos,
                       bool cut)
{
    struct hog_train_state at;
    memset(&at, 0, sizeof at);
    at.epoch = epoch;
    at.pos = pos;
    at.t_global = dv->t0 + (uint64_t)(epoch - 1) * dv->n + pos;
    if (dv->n_orders)
        at.rng = dv->ops->order(dv->ctx, 0)->rng;
    return dv->ops->save(dv->ctx, &at, cut, dv->err);
}

/* The orders as after `epochs` epochs' shuffles from the seed. */
static void replay(struct hog_drive *dv, uint64_t epochs)
{
    if (!dv->f->o->shuffle)
        return;
    for (unsigned p = 0; p < dv->n_orders; p++) {
        struct hog_order *o = dv->ops->order(dv->ctx, p);
        for (uint64_t e = 1; e <= epochs; e++)
            hog_shuffle_u64(&o->rng, o->rows, o->n);
    }
}

/* A warm start from a model's optimizer state (fit.h): the state stands
 * at the end of its last epoch, which the step takes as a resume from a
 * completed epoch; the epochs and steps go on from its counts, so that
 * this run's epoch e draws the order and step sizes of epoch
 * warm->epoch + e of one long run. On other data (another row count) the
 * replayed shuffles are the seed's on that data: the random state is
 * this run's, not checked against the model's. */
static hog_status warm_begin(struct hog_drive *dv, hog_err *err)
{
    struct hog_train_state w = *dv->f->warm;
    dv->f->warm_epochs = w.epoch;
    replay(dv, w.epoch);
    w.epoch = 0;
    w.pos = dv->n;
    w.seg_pos = w.seg_want = 0;
    if (dv->n_orders)
        w.rng = dv->ops->order(dv->ctx, 0)->rng;
    dv->t0 = w.t_global;
    uint64_t open = dv->n;
    return dv->ops->resume ? dv->ops->resume(dv->ctx, &w, &open, err)
                           : HOG_OK;
}

/* A checkpoint of a run warm-started from a model's optimizer state counts
 * that state's steps before its epoch 1; their epochs, whose shuffles the
 * resume replays first, are those steps over these rows (a state trained
 * on other rows is refused: its epochs are not known). One-vs-rest's
 * classes after the running one would start from the model's vectors,
 * which the checkpoint does not hold. */
static hog_status warm_resume(struct hog_drive *dv,
                              const struct hog_train_state *r, hog_err *err)
{
    uint64_t before = hog_train_state_steps_before(r, dv->n);
    if (!before || !dv->warm_state)
        return HOG_OK;
    if (r->n_classes)
        return hog_errf(err, HOG_EINVAL, "the checkpoint is of a "
                        "one-vs-rest run warm-started from a model's "
                        "optimizer state, whose classes after class %u "
                        "start from that model's vectors, which a "
                        "checkpoint does not hold: it cannot be resumed; "
                        "train from that model again (--init MODEL)",
                        r->ovr_class + 1);
    if (before % dv->n)
        return hog_errf(err, HOG_EINVAL, "the checkpoint continues a warm "
                        "start from a model's optimizer state of %llu steps, "
                        "which are not whole epochs of these %llu rows: its "
                        "row order cannot be replayed, so it cannot be "
                        "resumed; train from that model again (--init MODEL)",
                        (unsigned long long)before,
                        (unsigned long long)dv->n);
    dv->f->warm_epochs = before / dv->n;
    dv->t0 = before;
    return HOG_OK;
}

hog_status hog_drive_begin(struct hog_drive *dv, hog_err *err)
{
    const struct hog_train_state *r = dv->f->resume;
    dv->first = 1;
    dv->t0 = 0;
    dv->mid = false;
    dv->st = HOG_OK;
    dv->drawn = HOG_OK;
    dv->err = err;
    atomic_init(&dv->cut, false);
    if (!r && dv->f->warm)
        return warm_begin(dv, err);
    if (!r)
        return HOG_OK;
    /* A checkpoint before epoch 1 (a cut in the first epoch) has drawn
     * no shuffle; any other has drawn those of epochs 1 .. r->epoch,
     * including one at row 0 inside an open segment (Cyclades' before its
     * first batch). */
    hog_status ws = warm_resume(dv, r, err);
    if (ws != HOG_OK)
        return ws;
    bool start = r->pos == 0 && r->epoch <= 1 && r->seg_want == 0;
    replay(dv, dv->f->warm_epochs + (start ? 0 : r->epoch));
    uint64_t open = r->pos;
    if (dv->ops->resume) {
        hog_status st = dv->ops->resume(dv->ctx, r, &open, err);
        if (st != HOG_OK)
            return st;
    }
    if (r->pos >= dv->n && open >= dv->n) { /* a completed epoch */
        dv->first = (unsigned)r->epoch + 1;
    } else if (!start) {
        dv->first = (unsigned)r->epoch;
        dv->mid = true;
        dv->mid_pos = r->pos;
        dv->mid_open = open;
    }
    return HOG_OK;
}

/* A rows step's block: pieces of at most HOG_SGD_BLOCK rows that end on
 * the row checkpoints, each followed by a tick, the cancel poll and the
 * checkpoint when one is due (one thread). */
static hog_status run_pieces(struct hog_drive *dv, struct hog_drive_span *sp,
                             uint64_t *pos)
{
    struct hog_fit *f = dv->f;
    const uint64_t every = f->ckpt_rows ? f->ckpt_rows : UINT64_MAX;
    const uint64_t base = dv->t0 + (uint64_t)(sp->epoch - 1) * dv->n;
    while (*pos < sp->stop) {
        uint64_t t = base + *pos, blk = sp->stop - *pos;
        if (blk > HOG_SGD_BLOCK)
            blk = HOG_SGD_BLOCK;
        if (blk > every - t % every)
            blk = every - t % every;
        sp->from = *pos;
        sp->to = *pos + blk;
        hog_status st = dv->ops->run(dv->ctx, 0, 1, sp, dv->err);
        if (st != HOG_OK)
            return st;
        *pos += blk;
        f->tick(f, sp->epoch, *pos, dv->n);
        bool cancel = hog_fit_cancelled(f);
        if ((t + blk) % every == 0 || cancel) {
            if ((st = save(dv, sp->epoch, *pos, cancel)) != HOG_OK)
                return st;
        }
    }
    return HOG_OK;
}

/* Scale-out (fit.h) at a block's end, every weight current: thread 0
 * averages across the processes while the others wait, then each thread
 * puts its share back. False when the averaging failed (dv->st), on
 * every thread. */
static bool net_average(struct hog_drive *dv, unsigned tid, unsigned T)
{
    barrier(dv);
    if (tid == 0) {
        uint64_t len;
        dv->net_w = dv->ops->net_get(dv->ctx, &len);
        dv->st = hog_fit_average(dv->f, dv->net_w, len, dv->err);
    }
    barrier(dv);
    if (dv->st != HOG_OK)
        return false;
    if (dv->ops->net_put)
        dv->ops->net_put(dv->ctx, tid, T, dv->net_w);
    return true;
}

/* After the epoch's model is complete (thread 0): the report, then the
 * front door's epoch_end and a due checkpoint, or the cut's checkpoint. */
static hog_status epoch_done(struct hog_drive *dv, unsigned epoch,
                             double secs)
{
    struct hog_fit *f = dv->f;
    dv->seconds = secs;
    if (dv->ops->report)
        dv->ops->report(dv->ctx);
    if (atomic_load_explicit(&dv->cut, memory_order_relaxed))
        return save(dv, epoch, dv->n, true); /* the epoch is partial */
    hog_status st = f->epoch_end(f, epoch, secs, dv->err);
    if (st == HOG_OK && ((f->ckpt_epochs && epoch % f->ckpt_epochs == 0) ||
                         (f->keep_last && epoch == f->o->epochs) ||
                         (dv->ops->due && dv->ops->due(dv->ctx)) ||
                         hog_fit_cancelled(f)))
        st = save(dv, epoch, dv->n, false);
    return st;
}

void hog_drive_job(struct hog_drive *dv, unsigned tid, unsigned T)
{
    const struct hog_drive_ops *ops = dv->ops;
    void *ctx = dv->ctx;
    const uint64_t nb = dv->blocks ? dv->blocks : 1;
    struct hog_order *mine = tid < dv->n_orders ? ops->order(ctx, tid) : NULL;
    for (unsigned epoch = dv->first; epoch <= dv->f->o->epochs; epoch++) {
        const bool mid = dv->mid && epoch == dv->first;
        double t0 = 0;
        if (tid == 0) {
            dv->epoch = epoch;
            t0 = epoch == dv->first && dv->since ? dv->since : hog_now();
            dv->untimed = 0;
        }
        if (ops->draw && tid == 0)
            dv->drawn = ops->draw(ctx, epoch, mid, dv->err);
        if (mine && !mid && dv->f->o->shuffle)
            hog_shuffle_u64(&mine->rng, mine->rows, mine->n);
        if (ops->begin)
            ops->begin(ctx, tid, T, epoch);
        barrier(dv);
        hog_status st = dv->drawn; /* the same on every thread */
        uint64_t pos = mid ? dv->mid_pos : 0;
        for (uint64_t b = 0; st == HOG_OK && b < nb; b++) {
            struct hog_drive_span sp = { .epoch = epoch, .block = b,
                                         .blocks = nb, .from = pos,
                                         .stop = hog_drive_stop(dv, b) };
            sp.to = sp.stop;
            if (mid && sp.stop <= dv->mid_open)
                continue; /* a block finished before the checkpoint */
            if (dv->rows) {
                st = run_pieces(dv, &sp, &pos);
            } else {
                st = ops->run(ctx, tid, T, &sp, dv->err);
                pos = sp.stop;
            }
            if (st != HOG_OK)
                break;
            if (ops->block_end)
                ops->block_end(ctx, tid, T);
            if (dv->net && !net_average(dv, tid, T)) {
                st = dv->st;
                break;
            }
            barrier(dv);
        }
        if (st != HOG_OK) {
            if (tid == 0)
                dv->st = st;
            break;
        }
        if (ops->model)
            ops->model(ctx, tid, T);
        barrier(dv); /* the epoch's model is complete */
        if (tid == 0)
            dv->st = epoch_done(dv, epoch, hog_now() - t0 - dv->untimed);
        barrier(dv);
        if (dv->st != HOG_OK)
            break;
    }
}

void hog_drive_seg_close(struct hog_drive_seg *g)
{
    if (!g->open)
        return;
    g->end(g->ctx, g->len);
    g->t += g->len;
    g->open = false;
}

void hog_drive_seg_sgd_end(void *s, uint32_t len)
{
    hog_sgd_segment_end(s, len);
}

uint64_t hog_drive_seg_next(struct hog_drive_seg *g, struct hog_sgd *s,
                            const struct hog_drive_span *sp, uint64_t from)
{
    if (g->open && g->i == g->len)
        hog_drive_seg_close(g);
    if (!g->open) {
        uint64_t left = sp->stop - from;
        g->want = left < UINT32_MAX ? (uint32_t)left : UINT32_MAX;
        g->len = hog_sgd_segment_begin(s, g->t, g->want);
        g->i = 0;
        g->open = true;
    }
    uint64_t blk = sp->to - from;
    return blk < g->len - g->i ? blk : g->len - g->i;
}
