/*
 * Losses of a linear model as functions of the margin m = w.x + b, with
 * their derivatives d loss / d m. For the classification losses y is +1 or
 * -1 and z = y m; for the regression losses y is the raw target
 * (hog_loss_target() maps a row's label to it) and r = m - y. p is the
 * loss's parameter (epsilon, or tau; hog_train_opts), unused by the rest.
 *
 *   logistic      log(1 + exp(-z))          d = -y / (1 + exp(z))
 *   hinge         max(0, 1 - z)             d = -y where z < 1, else 0
 *   squared hinge max(0, 1 - z)^2           d = -2 y max(0, 1 - z)
 *   squared       r^2 / 2                   d = r
 *   modified      max(0, 1 - z)^2, z >= -1  d = -2 y max(0, 1 - z), z >= -1
 *     Huber       -4 z,            z < -1       -4 y,              z < -1
 *   Huber         r^2 / 2,    |r| <= p      d = r,          |r| <= p
 *                 p |r| - p^2 / 2, else         p sign(r),  else
 *   eps-insens.   max(0, |r| - p)           d = sign(r) where |r| > p, else 0
 *   squared eps-  max(0, |r| - p)^2         d = 2 sign(r) max(0, |r| - p)
 *     insensitive
 *   quantile      tau (y - m),  y >= m      d = -tau,      y > m
 *     (p = tau)   (1 - tau) (m - y), y < m      1 - tau,   y < m (0 at y = m)
 *   Poisson       exp(m) - y m, y >= 0      d = exp(m) - y
 *
 * The first four are LIBLINEAR's losses without any factor (its -s 0,
 * -s 3, -s 2/-s 1 and -s 11 at -p 0), so that l2 = 1 / (C n) gives the
 * same minimiser as LIBLINEAR's C (docs/TRAINING.md); the
 * epsilon-insensitive pair is -s 13 and -s 11/-s 12 with -p epsilon.
 * Modified Huber, Huber and the epsilon-insensitive pair are
 * scikit-learn's SGD losses of those names (Huber's epsilon its
 * threshold), quantile and Poisson Vowpal Wabbit's --loss_function ones.
 * Poisson's margin is the log of its prediction, exp(m) (the log link).
 *
 * The logistic forms never overflow: exp() only ever sees a non-positive
 * argument.
 *
 * Each loss is one row of hog_loss_rows (core/loss.c): its name, kind,
 * parameter, value, derivative and generalised second derivative, and the
 * algorithms that train it. The first four keep their cases in the
 * switches below, folded into the SGD kernels specialised per loss; the
 * others are read from their rows.
 */
#ifndef HOG_LOSS_H
#define HOG_LOSS_H

#include "hogtrain.h"

#include <math.h>
#include <stdbool.h>

/* The parameter a loss takes (hog_train_opts: epsilon or quantile_tau). */
enum hog_loss_param {
    HOG_LOSS_PARAM_NONE = 0,
    HOG_LOSS_PARAM_EPSILON,
    HOG_LOSS_PARAM_TAU,
};

/* The algorithms of hog_loss_row.algos: 1 << hog_algo, and the GPUs. */
#define HOG_LOSS_ALGO(a) (1u << (a))
#define HOG_LOSS_ON_GPU (1u << 31)

typedef double hog_loss_fn(double p, double y, double m);

struct hog_loss_row {
    const char *name;       /* --loss, Python's loss=, the messages */
    const char *title;      /* in a sentence: "modified Huber" */
    bool classification;    /* y is +1 or -1 (else the label itself) */
    enum hog_loss_param param;
    double eta;             /* the default step size (hog_train_opts.eta) */
    unsigned algos;         /* HOG_LOSS_ALGO bits: what trains it */
    hog_loss_fn *value, *deriv;
    /* d^2 loss / d m^2, generalised where the derivative has kinks
     * (LIBLINEAR's -s 2 and -s 11); NULL: --algo newton refuses it */
    hog_loss_fn *second;
};

/* Indexed by hog_loss; HOG_LOSS_COUNT rows. */
extern const struct hog_loss_row hog_loss_rows[];

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

static inline bool hog_loss_valid(int loss)
{
    return loss >= 0 && loss < HOG_LOSS_COUNT;
}

static inline double hog_loss_value(hog_loss loss, double p, double y,
                                    double m)
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
    default:
        return hog_loss_rows[loss].value(p, y, m);
    }
}

/* d loss / d m. The subgradients at the kinks are 0 (the hinge's at
 * y m = 1, the quantile's at m = y). */
static inline double hog_loss_deriv(hog_loss loss, double p, double y,
                                    double m)
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
    default:
        return hog_loss_rows[loss].deriv(p, y, m);
    }
}

static inline bool hog_loss_is_classification(hog_loss loss)
{
    return hog_loss_rows[loss].classification;
}

/* The y the loss sees for a row labelled `label`: the label itself for the
 * regression losses; for the classification losses +1 where it is the
 * positive label (label_pos, compared as a double), else -1. */
static inline double hog_loss_target(hog_loss loss, double label_pos,
                                     float label)
{
    return !hog_loss_is_classification(loss) ? (double)label
           : (double)label == label_pos      ? 1.0
                                             : -1.0;
}

/* p is in the range of loss's parameter (0 for a loss that takes none). */
bool hog_loss_param_ok(hog_loss loss, double p);

/* o's parameter of o's loss (o->epsilon or o->quantile_tau); 0 for a
 * loss that takes none. */
double hog_loss_param_of(const hog_train_opts *o);

/* What a regression model predicts at margin m: m, or exp(m) under the
 * Poisson loss's log link. */
static inline double hog_loss_predict(hog_loss loss, double m)
{
    return loss == HOG_LOSS_POISSON ? exp(m) : m;
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

/* The loss's title in a sentence ("squared hinge", "modified Huber"). */
static inline const char *hog_loss_name(hog_loss loss)
{
    return hog_loss_valid((int)loss) ? hog_loss_rows[loss].title : "unknown";
}

#endif
