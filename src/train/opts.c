/*
 * The library's training options: hog_train_opts_init()'s defaults, the
 * step that suits each loss, and the options a caller hands in, completed
 * where an older, shorter struct stops.
 */
#include "train/train.h"

#include <string.h>

/* AdaGrad's per-coordinate steps make one eta work across feature scales
 * (binary a9a, tf-idf news20, scaled ijcnn1); these etas reach LIBLINEAR's
 * test accuracy at C = 1 within one to three epochs on those sets
 * (docs/TRAINING.md). The squared loss takes larger steps because its
 * targets are not bounded by 1. */
void hog_train_opts_defaults_for_loss(hog_train_opts *o)
{
    o->schedule = HOG_SCHED_ADAGRAD;
    switch (o->loss) {
    case HOG_LOSS_LOGISTIC:
        o->eta = 0.3;
        break;
    case HOG_LOSS_HINGE:
    case HOG_LOSS_SQHINGE:
        o->eta = 0.1;
        break;
    case HOG_LOSS_SQUARED:
        o->eta = 1.0;
        break;
    }
}

void hog_train_opts_init(hog_train_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->loss = HOG_LOSS_LOGISTIC;
    o->l1 = 0.0;
    o->l2 = 1e-5;
    o->power = 0.5;
    o->bias = 1.0;
    o->epochs = 5;
    o->seed = 1;
    o->threads = 0;
    o->algo = HOG_ALGO_SERIAL;
    o->update = HOG_UPDATE_NONE;
    o->replicas = HOG_REPLICAS_SHARED;
    o->sync_every = 65536;
    o->hot = 1;
    o->tol = 0.01;
    o->direct = -1;
    hog_train_opts_defaults_for_loss(o);
}

/* The options the caller gave, completed with the defaults of the fields
 * an older, shorter struct does not have. */
hog_status hog_train_opts_take(const hog_train_opts *user, hog_train_opts *o,
                               hog_err *err)
{
    if (!user || user->size == 0 || user->size > sizeof(hog_train_opts))
        return hog_errf(err, HOG_EINVAL,
                        "the training options were not set up with "
                        "hog_train_opts_init()");
    hog_train_opts_init(o);
    memcpy(o, user, user->size);
    o->size = sizeof *o;
    return HOG_OK;
}
