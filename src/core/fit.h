/*
 * What the training front door (src/train) hands an algorithm: the data,
 * the validated options, the caller's hooks, the model to fill, and two
 * hooks back into the front door. It lives in core so that the algorithms
 * never include the module above them.
 */
#ifndef HOG_FIT_H
#define HOG_FIT_H

#include "core/core.h"

#include <pthread.h>

struct hog_train_state;
struct hog_products_ops;

/* What several runs of one algorithm on the same rows, options and thread
 * count may build once and read together: one-vs-rest's classes, whose
 * problems differ in their labels only (train/multiclass.c makes one for
 * the classes' runs). The algorithm owns what p points to: the first run
 * that needs it fills p, and sets free_p, holding the lock, while the
 * others wait on the lock for it; after that every run only reads it. The
 * maker frees p with free_p once every run has returned. */
struct hog_fit_share {
    pthread_mutex_t lock;
    void *p;
    void (*free_p)(void *p);
};

/* epoch_end's answer when the front door ends training after this epoch
 * (early stopping on the validation loss): not a failure. A trainer treats
 * it as any status other than HOG_OK (it stops where it is, frees what it
 * holds and returns the status) and the front door turns it into HOG_OK,
 * so that no trainer needs a stopping rule of its own and no caller of
 * the library ever sees the value (it is none of hog_status's). */
#define HOG_FIT_STOP ((hog_status)0x100)

struct hog_fit {
    const hog_data *train;
    const hog_train_opts *o;  /* validated */
    /* The caller's callbacks and stats (a copy: the stats point to the
     * front door's structs); all NULL, as a zero struct hog_fit has them,
     * is none. */
    hog_train_hooks hooks;
    hog_model *model;         /* zero weights, labels and options set */

    /* After each epoch, with model->w holding the epoch's weights and
     * seconds the epoch's training time. Computes the metrics (untimed) and
     * reports progress; a status other than HOG_OK stops training. Called
     * by one thread at a time, not necessarily the caller of hog_train (a
     * pool worker, while the other workers wait). */
    hog_status (*epoch_end)(struct hog_fit *f, unsigned epoch, double seconds,
                            hog_err *err);
    /* Within an epoch, as often as the algorithm likes (every few thousand
     * rows); reports progress about every 0.1 s. */
    void (*tick)(struct hog_fit *f, unsigned epoch, uint64_t done,
                 uint64_t total);
    void *ctx; /* the front door's */
    uint64_t replica_syncs; /* set by algorithms with model replicas */
    /* Set by an algorithm before epoch_end when it has them (coordinate
     * descent); the front door starts them at NaN and 0. */
    double gap;         /* relative duality gap of the epoch's weights */
    uint64_t aux_bytes; /* memory held beside the data */
    /* Set before each epoch_end by an algorithm that knows the epoch's
     * objective and mean training loss from its own state (coordinate
     * descent's margins), NaN otherwise (the front door's start). With
     * them the front door skips its pass over the training set (accuracy,
     * AUC: a sort) except every o->metrics_every-th epoch and the last,
     * which the algorithm marks with `last` (its stopping rule fired or
     * the epoch is o->epochs); converged says it was the stopping rule,
     * so that a run cut off by the cap can be told from one that met tol
     * on its last epoch. */
    double objective, mean_loss;
    bool last, converged;
    /* Set before each epoch_end by an SGD trainer whose rows were scored
     * as they went (hog_sgd_tally_report: only when a progress callback
     * listens): the epoch's progressive mean loss and accuracy, each row
     * scored just before its own step (accuracy NaN for regression); NaN
     * otherwise (the front door's start). With them, as with objective
     * above, the exact pass comes every o->metrics_every-th epoch and
     * after the last only. */
    double prog_loss, prog_accuracy;
    /* Streamed training (hog_train_stream): the chunks come from here and
     * train holds only the file's header (rows, features, labels; no
     * arrays). NULL for in-memory training. */
    struct hog_stream *stream;

    /* Checkpoints and interruption (src/train/checkpoint.c). An algorithm
     * that supports them: starts from *resume when it is not NULL; calls
     * save() with its state every ckpt_rows steps (0: never; steps counted
     * from the start of training, so the points do not depend on where a
     * run was resumed), after every ckpt_epochs-th epoch (0: never), and
     * when hog_fit_cancelled() turns true, after which it returns
     * HOG_EINTR with the message save() left (save() does nothing when no
     * checkpoint is configured). */
    const struct hog_train_state *resume;
    uint64_t ckpt_rows;
    unsigned ckpt_epochs;
    hog_status (*save)(struct hog_fit *f, const struct hog_train_state *s,
                       bool cancelled, hog_err *err);
    void *ckpt_ctx; /* the front door's */

    /* Warm start (hog_train_opts.warm_start): the weights to start from,
     * hog_model_vector_len(model) of them, or NULL for zero. A trainer
     * that takes it (the algorithms' table, HOG_CAP_WARM) puts them in
     * place before the first step. */
    const float *init;
    /* ... and, with a model that keeps its optimizer's state (core.h,
     * struct hog_opt_state), that state as the end of an epoch: epoch
     * the epochs run, t_global the steps taken, w the weights, FTRL's
     * sums or AdaGrad's (the serial trainer, in memory). The epoch driver
     * replays that many epochs' shuffles and counts steps on from there;
     * the run's own epochs are still numbered from 1. NULL: none. */
    const struct hog_train_state *warm;
    /* The epochs of that state, set by the epoch driver from warm or from
     * a checkpoint of such a run (hog_train_state_steps_before): the
     * model's state after this run counts them too. */
    uint64_t warm_epochs;
    /* The front door keeps the state after the last epoch (save_state):
     * the driver calls save() there too. */
    bool keep_last;
    /* One-vs-rest's one report: the class epochs run, all classes
     * together (0 otherwise), for its rates. */
    uint64_t class_epochs;
    /* One-vs-rest of a stream: the training rows of each class, counted
     * by the class pass (NULL: counted from f->train's labels). */
    const uint64_t *class_rows;
    /* The exact solvers' products on devices (core/products.h), set by
     * the front door when --gpus asks for them; NULL: on the CPUs. */
    const struct hog_products_ops *products;
    /* What this run may share with its sibling runs (above); NULL: none. */
    struct hog_fit_share *share;
};

/* Where an SGD-type trainer stands, exactly enough to continue bit for bit.
 * A checkpoint may fall inside a lazy-regularization segment (sgd.h): then
 * w_lazy and stamp hold the lazy weights and their timestamps, and the
 * segment is rebuilt by hog_sgd_segment_begin(seg_t0, seg_want). */
struct hog_train_state {
    uint64_t epoch;      /* 1-based epoch in progress (or just completed) */
    uint64_t pos;        /* its rows done; == rows: the epoch is complete */
    uint64_t t_global;   /* steps done since the start of training */
    uint64_t seg_t0;     /* the open segment's first step (mid-segment) */
    uint32_t seg_want;   /* the want it was begun with (mid-segment) */
    uint32_t seg_pos;    /* its steps done; 0 at a segment boundary */
    struct hog_rng rng;  /* after the shuffle of epoch `epoch` */
    uint64_t n_weights;
    float *w;            /* the weights brought current: the model */
    /* Two more arrays, named for what each trainer keeps in them (one
     * pointer and one array of a checkpoint file each: the flags 1 and 2
     * of io/checkpoint.c). FTRL-Proximal has no lazy segment: its sums
     * stand where SGD's lazy weights and AdaGrad's sums would. */
    union {
        float *w_lazy;   /* SGD mid-segment: the lazy weights; else NULL */
        float *ftrl_z;   /* FTRL: its sums z */
    };
    union {
        float *adagrad_g2;  /* AdaGrad: the sums of squared gradients;
                               else NULL */
        float *ftrl_sqrt_n; /* FTRL: the roots r = sqrt(n) of its sums of
                               squared gradients n */
    };
    uint32_t *stamp;     /* mid-segment with l1 or l2: timestamps; else NULL */
    /* One-vs-rest of n_classes classes (0: a binary or regression run):
     * the state above is class ovr_class's, and ovr_done holds the
     * finished vectors of classes 0 .. ovr_class - 1, one after another
     * (n_weights floats each; not owned by a trainer's state). */
    uint32_t n_classes, ovr_class;
    float *ovr_done;
};

static inline bool hog_fit_cancelled(const struct hog_fit *f)
{
    return f->hooks.cancel && *f->hooks.cancel;
}

/* A streamed run's answer to the cancel flag, seen after `row` rows of
 * epoch `epoch` (a stream keeps no checkpoint: nothing to save). */
static inline hog_status hog_fit_stream_interrupted(unsigned epoch,
                                                    uint64_t row,
                                                    hog_err *err)
{
    return hog_errf(err, HOG_EINTR, "training interrupted at row %llu of "
                    "epoch %u", (unsigned long long)row, epoch);
}

/* Hands st to the front door's save(); a cancelled run's successful save
 * becomes HOG_EINTR (with the message save() left), which the trainer
 * returns. */
static inline hog_status hog_fit_save(struct hog_fit *f,
                                      const struct hog_train_state *st,
                                      bool cancelled, hog_err *err)
{
    hog_status r = f->save(f, st, cancelled, err);
    return r == HOG_OK && cancelled ? HOG_EINTR : r;
}

/* The checkpoints of a trainer that writes them after whole epochs only
 * (Hogwild!, softmax), after epoch `epoch` or a cut inside it (thread 0):
 * when one is due or the run is cancelled, keep(ctx, epoch) puts the
 * epoch's state into *last, which goes to save(); a cut saves the last
 * kept epoch again (or the start), with HOG_EINTR. *last's arrays are NULL
 * without a checkpoint file: then it says only where training stands. */
static inline hog_status hog_fit_epoch_checkpoint(
    struct hog_fit *f, struct hog_train_state *last, unsigned epoch,
    bool cut, void (*keep)(void *ctx, unsigned epoch), void *ctx,
    hog_err *err)
{
    if (cut && !last->w) { /* no file: only where training stands */
        last->epoch = epoch - 1;
        last->pos = f->train->m.rows;
    }
    if (cut && last->epoch == 0) { /* no epoch done: the start (a warm
                                      * start's steps, kept at set-up) */
        last->epoch = 1;
        last->pos = 0;
    }
    if (!cut) {
        bool due = f->ckpt_epochs && epoch % f->ckpt_epochs == 0;
        if (!due && !hog_fit_cancelled(f))
            return HOG_OK;
        keep(ctx, epoch);
    }
    return hog_fit_save(f, last, cut || hog_fit_cancelled(f), err);
}

/* Whether r, a checkpoint of a trainer over n rows, stands at an epoch
 * boundary such a trainer resumes from: after epoch E (*after true), or
 * before epoch 1 (a run cancelled in its first epoch). */
static inline bool hog_train_state_at_epoch(const struct hog_train_state *r,
                                            uint64_t n, bool *after)
{
    *after = r->pos == n && r->t_global == r->epoch * n;
    bool start = r->pos == 0 && r->epoch == 1 && r->t_global == 0;
    return (*after || start) && r->seg_pos == 0;
}

/* The steps a checkpoint r of a trainer over n rows counts before its
 * epoch 1: those of the optimizer's state a warm start continued (fit.h,
 * warm; 0: none). */
static inline uint64_t hog_train_state_steps_before(
    const struct hog_train_state *r, uint64_t n)
{
    uint64_t own = (r->epoch ? r->epoch - 1 : 0) * n + r->pos;
    return r->t_global > own ? r->t_global - own : 0;
}

/* Scale-out: the number of blocks per epoch after which the algorithm
 * calls hog_fit_average() (0: no averaging). Block k of an epoch of n rows
 * ends after row floor(k n / blocks); every weight must be current (all
 * lazy updates applied) when the call is made, and the algorithm continues
 * from the weights the call leaves in w. */
static inline uint64_t hog_fit_average_blocks(const struct hog_fit *f)
{
    return f->hooks.average ? f->o->average_blocks : 0;
}

static inline hog_status hog_fit_average(struct hog_fit *f, float *w,
                                         uint64_t n, hog_err *err)
{
    return f->hooks.average(f->hooks.average_ctx, w, n, err);
}

#endif
