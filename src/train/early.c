/*
 * Early stopping on a validation set, as Vowpal Wabbit's holdout and
 * scikit-learn's early_stopping do: after each epoch the validation loss
 * is compared with the lowest so far; an epoch that lowers it is the new
 * best and its weights are copied aside; after `patience` epochs in a row
 * without a lower loss training stops, and the model handed out is the
 * best epoch's, not the last one's (also when the epochs run out first).
 * "Lower" is strict: an epoch that only equals the best does not reset
 * the count, so a run that has stopped moving stops.
 *
 * The front door (epoch.c) keeps one for the whole model; one-vs-rest
 * (multiclass.c) one per class on the class's binary loss. The copy of
 * the weights is one more model vector: the memory of early stopping.
 */
#include "train/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

hog_status hog_early_init(struct hog_early *e, unsigned patience,
                          uint64_t len, hog_err *err)
{
    memset(e, 0, sizeof *e);
    e->patience = patience;
    e->len = len;
    e->best_loss = INFINITY;
    if (patience && !(e->best_w = malloc((len ? len : 1) * sizeof *e->best_w)))
        return hog_errf(err, HOG_ENOMEM, "out of memory for the best "
                        "epoch's copy of %llu weights (early stopping)",
                        (unsigned long long)len);
    return HOG_OK;
}

bool hog_early_step(struct hog_early *e, unsigned epoch, double loss,
                    const float *w)
{
    e->epochs = epoch;
    if (loss < e->best_loss) { /* false for NaN */
        e->best_loss = loss;
        e->best_epoch = epoch;
        e->bad = 0;
        if (e->best_w)
            memcpy(e->best_w, w, e->len * sizeof *w);
        return false;
    }
    e->bad++;
    if (e->patience && e->bad >= e->patience)
        e->stopped = true;
    return e->stopped;
}

void hog_early_restore(const struct hog_early *e, float *w)
{
    if (e->best_w && e->best_epoch)
        memcpy(w, e->best_w, e->len * sizeof *w);
}

void hog_early_free(struct hog_early *e)
{
    free(e->best_w);
    e->best_w = NULL;
}
