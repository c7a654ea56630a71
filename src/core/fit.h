/*
 * What the training front door (src/train) hands an algorithm: the data,
 * the validated options, the model to fill, and two hooks back into the
 * front door. It lives in core so that the algorithms never include the
 * module above them.
 */
#ifndef HOG_FIT_H
#define HOG_FIT_H

#include "core/core.h"

struct hog_fit {
    const hog_data *train;
    const hog_train_opts *o;  /* validated */
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
    /* Streamed training (hog_train_stream): the chunks come from here and
     * train holds only the file's header (rows, features, labels; no
     * arrays). NULL for in-memory training. */
    struct hog_stream *stream;
};

/* Scale-out: the number of blocks per epoch after which the algorithm
 * calls hog_fit_average() (0: no averaging). Block k of an epoch of n rows
 * ends after row floor(k n / blocks); every weight must be current (all
 * lazy updates applied) when the call is made, and the algorithm continues
 * from the weights the call leaves in w. */
static inline uint64_t hog_fit_average_blocks(const struct hog_fit *f)
{
    return f->o->average ? f->o->average_blocks : 0;
}

static inline hog_status hog_fit_average(struct hog_fit *f, float *w,
                                         uint64_t n, hog_err *err)
{
    return f->o->average(f->o->average_ctx, w, n, err);
}

#endif
