/*
 * The losses' table (core/loss.h has the maths): one row per loss, read
 * by the trainers, the options' defaults, the conflicts' table, the model
 * files and the command. A new loss is one row here and one name in
 * hog_loss; the SGD kernels, Newton and L-BFGS reach it through its
 * functions.
 */
#include "core/loss.h"

#include <math.h>

static double logistic_value(double p, double y, double m)
{
    return hog_loss_value(HOG_LOSS_LOGISTIC, p, y, m);
}
static double logistic_deriv(double p, double y, double m)
{
    return hog_loss_deriv(HOG_LOSS_LOGISTIC, p, y, m);
}
static double logistic_second(double p, double y, double m)
{
    (void)p;
    double s = hog_sigmoid_neg(y * m);
    return s * (1.0 - s);
}
static double hinge_value(double p, double y, double m)
{
    return hog_loss_value(HOG_LOSS_HINGE, p, y, m);
}
static double hinge_deriv(double p, double y, double m)
{
    return hog_loss_deriv(HOG_LOSS_HINGE, p, y, m);
}
static double sqhinge_value(double p, double y, double m)
{
    return hog_loss_value(HOG_LOSS_SQHINGE, p, y, m);
}
static double sqhinge_deriv(double p, double y, double m)
{
    return hog_loss_deriv(HOG_LOSS_SQHINGE, p, y, m);
}
static double sqhinge_second(double p, double y, double m)
{
    (void)p;
    return y * m < 1.0 ? 2.0 : 0.0;
}
static double squared_value(double p, double y, double m)
{
    return hog_loss_value(HOG_LOSS_SQUARED, p, y, m);
}
static double squared_deriv(double p, double y, double m)
{
    return hog_loss_deriv(HOG_LOSS_SQUARED, p, y, m);
}
static double one(double p, double y, double m)
{
    (void)p, (void)y, (void)m;
    return 1.0;
}

/* scikit-learn's ModifiedHuber: the squared hinge, continued linearly
 * below z = -1 with the slope it has there. */
static double mhuber_value(double p, double y, double m)
{
    (void)p;
    double z = y * m;
    return z >= 1.0 ? 0.0 : z >= -1.0 ? (1.0 - z) * (1.0 - z) : -4.0 * z;
}
static double mhuber_deriv(double p, double y, double m)
{
    (void)p;
    double z = y * m;
    return z >= 1.0 ? 0.0 : z >= -1.0 ? -2.0 * y * (1.0 - z) : -4.0 * y;
}
static double mhuber_second(double p, double y, double m)
{
    (void)p;
    double z = y * m;
    return z < 1.0 && z >= -1.0 ? 2.0 : 0.0;
}

static double huber_value(double p, double y, double m)
{
    double r = fabs(m - y);
    return r <= p ? 0.5 * r * r : p * r - 0.5 * p * p;
}
static double huber_deriv(double p, double y, double m)
{
    double r = m - y;
    return r > p ? p : r < -p ? -p : r;
}
static double huber_second(double p, double y, double m)
{
    return fabs(m - y) <= p ? 1.0 : 0.0;
}

static double epsins_value(double p, double y, double m)
{
    double e = fabs(m - y) - p;
    return e > 0.0 ? e : 0.0;
}
static double epsins_deriv(double p, double y, double m)
{
    double r = m - y;
    return r > p ? 1.0 : r < -p ? -1.0 : 0.0;
}

static double sqepsins_value(double p, double y, double m)
{
    double e = fabs(m - y) - p;
    return e > 0.0 ? e * e : 0.0;
}
static double sqepsins_deriv(double p, double y, double m)
{
    double r = m - y;
    return r > p ? 2.0 * (r - p) : r < -p ? 2.0 * (r + p) : 0.0;
}
static double sqepsins_second(double p, double y, double m)
{
    return fabs(m - y) > p ? 2.0 : 0.0;
}

static double quantile_value(double p, double y, double m)
{
    double r = y - m;
    return r >= 0.0 ? p * r : (p - 1.0) * r;
}
static double quantile_deriv(double p, double y, double m)
{
    double r = y - m;
    return r > 0.0 ? -p : r < 0.0 ? 1.0 - p : 0.0;
}

static double poisson_value(double p, double y, double m)
{
    (void)p;
    return exp(m) - y * m;
}
static double poisson_deriv(double p, double y, double m)
{
    (void)p;
    return exp(m) - y;
}
static double poisson_second(double p, double y, double m)
{
    (void)p, (void)y;
    return exp(m);
}

#define SGD                                                                 \
    (HOG_LOSS_ALGO(HOG_ALGO_SERIAL) | HOG_LOSS_ALGO(HOG_ALGO_HOGWILD) |     \
     HOG_LOSS_ALGO(HOG_ALGO_AUTO))
/* LIBLINEAR's dual of support vector regression (coordinate/dcd_svr.c) */
#define DCD HOG_LOSS_ALGO(HOG_ALGO_DCD)
#define ALL_ALGOS (~0u)
/* the smooth losses: L-BFGS needs a continuous derivative, Newton a
 * (generalised) second one */
#define EXACT (HOG_LOSS_ALGO(HOG_ALGO_NEWTON) | HOG_LOSS_ALGO(HOG_ALGO_LBFGS))

/* The step sizes: the squared loss's targets are not bounded by 1, the
 * hinges take smaller steps (docs/TRAINING.md, "The default"); the
 * regression losses whose gradient is bounded by 1 or epsilon take the
 * logistic's, the squared ones the squared's. */
const struct hog_loss_row hog_loss_rows[] = {
    [HOG_LOSS_LOGISTIC] = { "logistic", "logistic", true,
                            HOG_LOSS_PARAM_NONE, 0.3, ALL_ALGOS,
                            logistic_value, logistic_deriv, logistic_second },
    [HOG_LOSS_HINGE] = { "hinge", "hinge", true, HOG_LOSS_PARAM_NONE, 0.1,
                         ALL_ALGOS, hinge_value, hinge_deriv, NULL },
    [HOG_LOSS_SQHINGE] = { "sqhinge", "squared hinge", true,
                           HOG_LOSS_PARAM_NONE, 0.1, ALL_ALGOS,
                           sqhinge_value, sqhinge_deriv, sqhinge_second },
    [HOG_LOSS_SQUARED] = { "squared", "squared", false, HOG_LOSS_PARAM_NONE,
                           1.0, ALL_ALGOS, squared_value, squared_deriv,
                           one },
    [HOG_LOSS_MODIFIED_HUBER] = { "modified_huber", "modified Huber", true,
                                  HOG_LOSS_PARAM_NONE, 0.1, SGD | EXACT,
                                  mhuber_value, mhuber_deriv,
                                  mhuber_second },
    [HOG_LOSS_HUBER] = { "huber", "Huber", false, HOG_LOSS_PARAM_EPSILON,
                         0.3, SGD | EXACT, huber_value, huber_deriv,
                         huber_second },
    [HOG_LOSS_EPS_INSENSITIVE] = { "epsilon_insensitive",
                                   "epsilon-insensitive", false,
                                   HOG_LOSS_PARAM_EPSILON, 0.3, SGD | DCD,
                                   epsins_value, epsins_deriv, NULL },
    [HOG_LOSS_SQ_EPS_INSENSITIVE] = { "squared_epsilon_insensitive",
                                      "squared epsilon-insensitive", false,
                                      HOG_LOSS_PARAM_EPSILON, 1.0,
                                      SGD | EXACT | DCD, sqepsins_value,
                                      sqepsins_deriv, sqepsins_second },
    [HOG_LOSS_QUANTILE] = { "quantile", "quantile", false,
                            HOG_LOSS_PARAM_TAU, 0.3, SGD, quantile_value,
                            quantile_deriv, NULL },
    [HOG_LOSS_POISSON] = { "poisson", "Poisson", false, HOG_LOSS_PARAM_NONE,
                           0.1, SGD | EXACT, poisson_value, poisson_deriv,
                           poisson_second },
};
_Static_assert(sizeof hog_loss_rows / sizeof *hog_loss_rows ==
                   HOG_LOSS_COUNT,
               "hog_loss_rows has a row per loss");

double hog_loss_param_of(const hog_train_opts *o)
{
    switch (hog_loss_rows[o->loss].param) {
    case HOG_LOSS_PARAM_EPSILON:
        return o->epsilon;
    case HOG_LOSS_PARAM_TAU:
        return o->quantile_tau;
    case HOG_LOSS_PARAM_NONE:
        break;
    }
    return 0.0;
}

bool hog_loss_param_ok(hog_loss loss, double p)
{
    switch (hog_loss_rows[loss].param) {
    case HOG_LOSS_PARAM_EPSILON:
        return isfinite(p) && p >= 0.0;
    case HOG_LOSS_PARAM_TAU:
        return p > 0.0 && p < 1.0;
    case HOG_LOSS_PARAM_NONE:
        break;
    }
    return p == 0.0;
}
