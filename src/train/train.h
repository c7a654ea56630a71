/*
 * train: the front door of training. hog_train() (public) validates the
 * options, sets up the model, runs the algorithm the options name, and after
 * each epoch computes the metrics and calls the progress callback. The
 * algorithms sit below it (src/hogwild, later src/cyclades, ...), reached
 * through struct hog_fit (src/core/fit.h).
 */
#ifndef HOG_TRAIN_H
#define HOG_TRAIN_H

#include "core/core.h"

/* Checks o against the training data: a sentence in err and HOG_EINVAL
 * when an option is out of range or does not fit the labels. */
hog_status hog_train_validate(const hog_train_opts *o, const hog_data *train,
                              hog_err *err);

/* Sets the step size and schedule that work best for o->loss out of the box
 * (hog_train_opts_init() gives those of the logistic loss). For callers
 * that pick the loss but not the step. */
void hog_train_opts_defaults_for_loss(hog_train_opts *o);

/* The name of an algorithm, for messages ("serial", "Hogwild!", ...). */
const char *hog_algo_name(hog_algo a);

#endif
