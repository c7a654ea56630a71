/*
 * Losses of a linear model as functions of the margin m = w.x + b, with
 * their derivatives d loss / d m. For the classification losses y is +1 or
 * -1; for the squared loss y is the raw target (hog_loss_target() maps a
 * row's label to it).
 *
 *   logistic      log(1 + exp(-y m))        d = -y / (1 + exp(y m))
 *   hinge         max(0, 1 - y m)           d = -y where y m < 1, else 0
 *   squared hinge max(0, 1 - y m)^2         d = -2 y max(0, 1 - y m)
 *   squared       (m - y)^2 / 2             d = m - y
 *
 * These are LIBLINEAR's losses without any factor (its -s 0, -s 3, -s 2/-s 1
 * and -s 11 up to the epsilon tube), so that l2 = 1 / (C n) gives the same
 * minimiser as LIBLINEAR's C (docs/TRAINING.md).
 *
 * The logistic forms never overflow: exp() only ever sees a non-positive
 * argument.
 */
#ifndef HOG_LOSS_H
#define HOG_LOSS_H

#include "hogtrain.h"

#include <math.h>
#include <stdbool.h>

/* log(1 + exp(-z)) without overflow or loss of precision for large |z|. */
static inline double hog_log1pexp_neg(double z)
{
    return z > 0 ? log1p(exp(-z)) : -z + log1p(exp(z));
}

/* 1 / (1 + exp(z)) without overflow. */
static inline double hog_sigmoid_neg(double z)
{
    if (z > 0) {
        double e = exp(-z);
        return e / (1.0 + e);
    }
    return 1.0 / (1.0 + exp(z));
}

static inline double hog_loss_value(hog_loss loss, double y, double m)
{
    double z = y * m;
    switch (loss) {
    case HOG_LOSS_LOGISTIC:
        return hog_log1pexp_neg(z);
    case HOG_LOSS_HINGE:
        return z < 1.0 ? 1.0 - z : 0.0;
    case HOG_LOSS_SQHINGE:
        return z < 1.0 ? (1.0 - z) * (1.0 - z) : 0.0;
    case HOG_LOSS_SQUARED:
        return 0.5 * (m - y) * (m - y);
    }
    return NAN;
}

/* d loss / d m. The hinge's subgradient at the kink y m = 1 is 0. */
static inline double hog_loss_deriv(hog_loss loss, double y, double m)
{
    double z = y * m;
    switch (loss) {
    case HOG_LOSS_LOGISTIC:
        return -y * hog_sigmoid_neg(z);
    case HOG_LOSS_HINGE:
        return z < 1.0 ? -y : 0.0;
    case HOG_LOSS_SQHINGE:
        return z < 1.0 ? -2.0 * y * (1.0 - z) : 0.0;
    case HOG_LOSS_SQUARED:
        return m - y;
    }
    return NAN;
}

static inline bool hog_loss_is_classification(hog_loss loss)
{
    return loss != HOG_LOSS_SQUARED;
}

/* The y the loss sees for a row labelled `label`: the label itself for the
 * squared loss; for the classification losses +1 where it is the positive
 * label (label_pos, compared as a double), else -1. */
static inline double hog_loss_target(hog_loss loss, double label_pos,
                                     float label)
{
    return loss == HOG_LOSS_SQUARED ? (double)label
           : (double)label == label_pos ? 1.0
                                        : -1.0;
}

/* LIBLINEAR's C as hogtrain's strengths: its objective 1/2 |w|^2 +
 * C sum_i loss_i (L2; -s 0, 1, 2, 3, 7) or |w|_1 + C sum_i loss_i (L1;
 * -s 5, 6) over n rows, divided by C n, is ours with l2 (or l1) = 1/(C n)
 * and the other strength 0: the same minimiser. The one map behind
 * hog_train_opts.C, `train --C` and `objective --C`. */
static inline void hog_strengths_of_C(double C, bool l1_reg, uint64_t n,
                                      double *l1, double *l2)
{
    double lam = 1.0 / (C * (double)(n ? n : 1));
    *l1 = l1_reg ? lam : 0.0;
    *l2 = l1_reg ? 0.0 : lam;
}

static inline const char *hog_loss_name(hog_loss loss)
{
    switch (loss) {
    case HOG_LOSS_LOGISTIC: return "logistic";
    case HOG_LOSS_HINGE: return "hinge";
    case HOG_LOSS_SQHINGE: return "squared hinge";
    case HOG_LOSS_SQUARED: return "squared";
    }
    return "unknown";
}

#endif
