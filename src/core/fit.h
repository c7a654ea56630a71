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
     * reports progress; a status other than HOG_OK stops training. */
    hog_status (*epoch_end)(struct hog_fit *f, unsigned epoch, double seconds,
                            hog_err *err);
    /* Within an epoch, as often as the algorithm likes (every few thousand
     * rows); reports progress about every 0.1 s. */
    void (*tick)(struct hog_fit *f, unsigned epoch, uint64_t done,
                 uint64_t total);
    void *ctx; /* the front door's */
    uint64_t replica_syncs; /* set by algorithms with model replicas */
    /* Streamed training (hog_train_stream): the chunks come from here and
     * train holds only the file's header (rows, features, labels; no
     * arrays). NULL for in-memory training. */
    struct hog_stream *stream;
};

#endif
