/*
 * The SGD epoch driver: what every SGD trainer does around its step,
 * written once. The epochs and their seeded row orders, the blocks of an
 * epoch (averaging across processes, replica syncs), resume from a
 * checkpoint's epoch and row, the checkpoints (after epochs, every
 * ckpt_rows steps, on cancel), cancel polling, progress ticks, the
 * progressive loss and the epoch's end (struct hog_fit's hooks, fit.h);
 * a trainer supplies only its step through struct hog_drive_ops.
 *
 * It lives in core because it needs nothing above core and both SGD
 * modules use it: src/hogwild (serial, Hogwild!, softmax) and
 * src/cyclades are peers, so a driver in either would be a sideways
 * arrow (DESIGN.md: arrows point down only). It knows no threads: a
 * pool trainer runs hog_drive_job() on every worker of its own pool
 * (barriers through the ops), a serial one on the calling thread.
 *
 * The driver's loop, on every thread (tid of T):
 *
 *     for each epoch from the first (after a resume, its epoch):
 *         thread 0: draw the epoch's order (a stream's, Cyclades'), or
 *         shuffle this thread's order (unless resumed inside this epoch)
 *         begin; barrier
 *         for each block of the epoch (rows up to n (b + 1) / blocks):
 *             run the block's rows (rows mode: in pieces of at most
 *                 HOG_SGD_BLOCK rows, cut at the row checkpoints, with a
 *                 tick, a cancel poll and a due checkpoint after each)
 *             block_end; averaging across processes; barrier
 *         model (the epoch's weights into f->model->w); barrier
 *         thread 0: report, then epoch_end and a due checkpoint, or,
 *             when a cut left the epoch partial, the cut's checkpoint
 *         barrier
 *
 * Two kinds of step. A rows step (serial) runs any span of rows and can
 * save its state after any of them, so the driver hands it pieces and
 * checkpoints on the row cadence and on cancel mid-epoch; it runs on one
 * thread. A block step (Hogwild!, softmax) runs a whole block on every
 * thread with barriers of its own; it polls hog_drive_poll() between its
 * kernel calls, and after a cut (the cancel flag seen) its threads skip
 * the rest of the epoch's rows, and its save() writes the last completed
 * epoch again (hog_fit_epoch_checkpoint).
 */
#ifndef HOG_DRIVE_H
#define HOG_DRIVE_H

#include "core/fit.h"

/* Rows per call to the kernel between progress checks and cancel polls. */
#define HOG_SGD_BLOCK 4096u

/* One thread's rows and the random stream that shuffles them each epoch
 * (the serial trainer's: every row, stream 0 of the seed). */
struct hog_order {
    struct hog_rng rng;
    uint64_t *rows;
    uint64_t n;
};

/* What the driver is at when it calls run(): epoch rows [from, to) of
 * the block [.., stop), block `block` of `blocks`. A block step is called
 * once per block with to == stop. */
struct hog_drive_span {
    unsigned epoch;
    uint64_t block, blocks;
    uint64_t from, to, stop;
};

/* The step. Called on every thread of the drive (tid of T, T == 1 for a
 * rows step) unless marked "thread 0"; a NULL slot is skipped. */
struct hog_drive_ops {
    /* thread p's row order (p < n_orders): shuffled by thread p at each
     * epoch's start, and replayed from the seed on resume. */
    struct hog_order *(*order)(void *ctx, unsigned p);
    /* thread 0, at each epoch's start, for a step whose order is not a
     * shuffle of order(p)'s rows (n_orders 0: a stream's chunk sequence,
     * drawn with the next epoch's queued behind it as read-ahead;
     * Cyclades' permutation or batch order and its partition). resumed:
     * the drive resumed inside this epoch, whose order the step's
     * resume() has already drawn. A failure ends the drive. */
    hog_status (*draw)(void *ctx, unsigned epoch, bool resumed,
                       hog_err *err);
    /* The epoch starts (after this thread's shuffle): per-thread tallies
     * and positions back to zero. */
    void (*begin)(void *ctx, unsigned tid, unsigned T, unsigned epoch);
    /* The span's rows. A block step returns the same status on every
     * thread (a failure seen by one is shared through its own barrier),
     * and only thread 0 writes err. */
    hog_status (*run)(void *ctx, unsigned tid, unsigned T,
                      const struct hog_drive_span *sp, hog_err *err);
    /* The block's rows are done: every weight brought current (open
     * segments closed, replicas averaged). */
    void (*block_end)(void *ctx, unsigned tid, unsigned T);
    /* Averaging across processes at a block's end: thread 0 takes the
     * weights to average in place (their count in *len), and after the
     * average every thread puts its share of them back. */
    float *(*net_get)(void *ctx, uint64_t *len);
    void (*net_put)(void *ctx, unsigned tid, unsigned T, const float *w);
    /* The epoch's weights into f->model->w (each thread its slice). */
    void (*model)(void *ctx, unsigned tid, unsigned T);
    /* thread 0, before epoch_end: the progressive tally merged in thread
     * order (hog_sgd_tally_report) and whatever else the report carries. */
    void (*report)(void *ctx);
    /* thread 0: a checkpoint. at holds the driver's part (epoch, pos,
     * t_global, the rng of order 0); a rows step adds its own state and
     * calls hog_fit_save; a block step keeps or repeats its last epoch
     * (hog_fit_epoch_checkpoint with cut). Returns HOG_EINTR when
     * cancelled and the save succeeded. */
    hog_status (*save)(void *ctx, struct hog_train_state *at, bool cut,
                       hog_err *err);
    /* thread 0, after epoch_end: a checkpoint falls at the epoch's end
     * besides the epoch cadence (Cyclades: a row checkpoint its last
     * batch crossed, which it leaves to the epoch's end). */
    bool (*due)(void *ctx);
    /* On resume, after every order was replayed up to the checkpoint's
     * epoch (inclusive unless r stands at the start): check r against the
     * step and put its state in place. *open_from: the epoch row where
     * the step's state resumes (a rows step: its open segment's first
     * row; r->pos for a step that stands at epoch boundaries). NULL: the
     * trainer checked and restored r itself before hog_drive_begin. */
    hog_status (*resume)(void *ctx, const struct hog_train_state *r,
                         uint64_t *open_from, hog_err *err);
    void (*barrier)(void *ctx);
};

struct hog_drive {
    /* the trainer's, before hog_drive_begin */
    struct hog_fit *f;
    const struct hog_drive_ops *ops;
    void *ctx;
    uint64_t n;         /* steps (rows) per epoch */
    uint64_t blocks;    /* blocks per epoch (0 taken as 1) */
    unsigned n_orders;  /* row orders (one per thread of a pool step) */
    bool rows;          /* a rows step (see above) */
    bool net;           /* average across processes at every block's end */
    bool warm_state;    /* the step takes a warm start's optimizer state
                           (fit.h, warm): its checkpoints count that
                           state's steps before their epoch 1 */
    double since;       /* 0, or when the first epoch's clock starts (a
                           set-up that counts as training: Cyclades') */

    /* the driver's; written by thread 0 between barriers */
    unsigned epoch;     /* in progress */
    unsigned first;     /* the first epoch to run */
    uint64_t t0;        /* steps before epoch 1: a warm state's (fit.h) */
    bool mid;           /* resumed inside epoch `first` */
    uint64_t mid_pos;   /* ... at this row */
    uint64_t mid_open;  /* ... with the step's state open from this row */
    atomic_bool cut;    /* a block step's thread saw the cancel flag */
    hog_status st;
    hog_status drawn;   /* the epoch's draw() */
    hog_err *err;
    float *net_w;       /* the weights being averaged across processes */
    double untimed;     /* seconds of this epoch that are not training
                           (thread 0's step adds diagnostics here) */
    double seconds;     /* the epoch's training seconds, before report */
};

/* After the trainer's set-up: the resume from f->resume, if any (replays
 * the orders' shuffles and calls ops->resume). */
hog_status hog_drive_begin(struct hog_drive *dv, hog_err *err);
/* Every epoch, on every thread of the drive; the outcome in dv->st. */
void hog_drive_job(struct hog_drive *dv, unsigned tid, unsigned T);

/* A rows step's open segment of the lazy regularization (sgd.h) between
 * the driver's pieces. A segment ends at its length or at the block's
 * end; it is closed when the next piece starts or the block ends, so that
 * a checkpoint after its last step still holds it (i == len), as a
 * resumed run rebuilds it. end(ctx, len) is the step's segment end
 * (hog_drive_seg_sgd_end: hog_sgd_segment_end on ctx). */
struct hog_drive_seg {
    uint64_t t;    /* global step of the open segment's first step (of the
                      next segment's when none is open) */
    uint32_t want; /* the open segment's want, its length, its steps done */
    uint32_t len, i;
    bool open;
    void (*end)(void *ctx, uint32_t len);
    void *ctx;
};
struct hog_sgd;
/* The rows of the span from epoch row `from` that go next, all in the
 * open segment (begun on s, up to the block's end, when none is open; a
 * full one ended first). The caller steps them at segment steps i, i + 1,
 * ... and adds their count to g->i. */
uint64_t hog_drive_seg_next(struct hog_drive_seg *g, struct hog_sgd *s,
                            const struct hog_drive_span *sp, uint64_t from);
/* Ends the open segment, if any (at a block's end). */
void hog_drive_seg_close(struct hog_drive_seg *g);
void hog_drive_seg_sgd_end(void *s, uint32_t len);

/* The row where block b (0-based) of the epoch ends. */
static inline uint64_t hog_drive_stop(const struct hog_drive *dv, uint64_t b)
{
    uint64_t nb = dv->blocks ? dv->blocks : 1;
    return (uint64_t)((unsigned __int128)dv->n * (b + 1) / nb);
}

/* A block step's cancel poll between kernel calls: true once any thread
 * saw the flag (the rest of the epoch's rows are skipped). */
static inline bool hog_drive_poll(struct hog_drive *dv)
{
    if (hog_fit_cancelled(dv->f))
        atomic_store_explicit(&dv->cut, true, memory_order_relaxed);
    return atomic_load_explicit(&dv->cut, memory_order_relaxed);
}

/* A block step's progress within the epoch: `done` of n rows. */
static inline void hog_drive_tick(struct hog_drive *dv, uint64_t done)
{
    dv->f->tick(dv->f, dv->epoch, done < dv->n ? done : dv->n, dv->n);
}

#endif
