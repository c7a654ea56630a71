/*
 * The search of C (hog_search_C; LIBLINEAR's -C, find_parameter_C): a
 * cross-validation at each C of the path
 *
 *     C_min, C_min r, C_min r^2, ...  up to C_max     (r = 2, C_max = 2^10)
 *
 * on one dealing of the folds (cv.c), keeping the C of the best CV
 * accuracy (regression: the lowest RMSE; the smallest C of a tie, as
 * LIBLINEAR keeps the first). C_min is LIBLINEAR's start unless given:
 * the power of two at or below 1/(n max_i |x_i|^2) (squared hinge:
 * 1/(2 n max_i |x_i|^2)), the bias feature in |x_i|^2, below which every
 * model is nearly zero. The path stops early once `patience` C values in
 * a row (3 by default) have gained less than min_gain (a tenth of a point
 * of accuracy) over the last C that gained, counting only once the path
 * has gained at all (the plateau of nearly-zero models at the smallest C
 * is no peak: news20.binary stays on it for 6 values of C). Past the
 * peak the CV
 * accuracy of a linear model only falls or stays flat as C grows, and the
 * large C are the slow ones. (LIBLINEAR stops instead when no fold's
 * weights move for three C values, a test of its own converged solvers.)
 *
 * Warm start: where the algorithm takes one (serial, hogwild, cyclades:
 * the SGD trainers put the weights in place before the first step), each
 * fold of a C starts from its model of the previous C, as LIBLINEAR's
 * primal solvers start from the previous solution (its init_sol). The
 * epochs are the same either way (an SGD run has no stopping rule), so
 * it buys a start near the answer, not time. Coordinate descent (scd,
 * dcd), softmax and the GPU trainer run the plain grid: dcd's state is
 * its dual variables, which a weight vector does not give back.
 */
#include "train/train.h"

#include "core/loss.h"
#include "gpu/gpu.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void hog_search_opts_init(hog_search_opts *so)
{
    memset(so, 0, sizeof *so);
    so->size = sizeof *so;
    so->C_min = 0;
    so->C_max = 1024;
    so->ratio = 2;
    so->patience = 3;
    so->warm_start = 1;
    so->min_gain = 0.001;
}

/* LIBLINEAR's calc_start_C. */
static double start_C(const hog_data *d, const hog_train_opts *o)
{
    double max_xx = 0;
    for (uint64_t i = 0; i < d->m.rows; i++) {
        double xx = o->bias * o->bias;
        for (uint64_t e = d->m.off[i]; e < d->m.off[i + 1]; e++)
            xx += (double)d->m.val[e] * d->m.val[e];
        max_xx = xx > max_xx ? xx : max_xx;
    }
    if (!(max_xx > 0))
        return 1.0;
    double n = (double)d->m.rows;
    double c = o->loss == HOG_LOSS_SQHINGE ? 1.0 / (2.0 * n * max_xx)
                                           : 1.0 / (n * max_xx);
    return pow(2.0, floor(log2(c)));
}

/* Whether the run o takes a warm start (the algorithms' table). */
static bool takes_warm(const hog_train_opts *o, const hog_data *d)
{
    const struct hog_algo_row *r = hog_algo_row(o->algo);
    return r && (r->caps & HOG_CAP_WARM) && !hog_gpu_requested(o) &&
           !(hog_train_is_multiclass(o, d) &&
             o->multiclass == HOG_MULTICLASS_SOFTMAX) &&
           !o->resume;
}

/* The search with the options taken, into the library's own result
 * (its step and step_cap the caller's). */
static hog_status search(const hog_data *d, hog_train_opts o,
                         const hog_train_hooks *h, unsigned folds,
                         hog_search_opts so, hog_search_result *res,
                         hog_err *err)
{
    hog_status st;
    if (!d || d->m.rows == 0)
        return hog_errf(err, HOG_EINVAL, "the search of C needs training "
                        "data with rows");
    if (!(so.min_gain >= 0 && so.min_gain < 1))
        return hog_errf(err, HOG_EINVAL, "the search's min_gain is a share "
                        "in [0, 1), not %g", so.min_gain);
    double c0 = so.C_min > 0 ? so.C_min : start_C(d, &o);
    if (!(isfinite(c0) && c0 > 0 && isfinite(so.C_max) && so.C_max >= c0 &&
          isfinite(so.ratio) && so.ratio > 1))
        return hog_errf(err, HOG_EINVAL, "the path of C goes from C_min > 0 "
                        "up to C_max >= C_min by a ratio > 1, not %g to %g "
                        "by %g", c0, so.C_max, so.ratio);
    /* the grid, with a little room for the rounding of the products */
    double steps = floor(log(so.C_max / c0) / log(so.ratio) + 1e-9) + 1;
    if (steps > HOG_SEARCH_MAX_STEPS)
        return hog_errf(err, HOG_EINVAL, "the path of C from %g to %g by %g "
                        "has %.0f values, more than %u: start at a larger C",
                        c0, so.C_max, so.ratio, steps, HOG_SEARCH_MAX_STEPS);
    const bool reg = o.loss == HOG_LOSS_SQUARED &&
                     d->labels != HOG_LABELS_BINARY;
    const bool warm = so.warm_start && takes_warm(&o, d);

    double t0 = hog_now();
    struct hog_cv *cv;
    if ((st = hog_cv_open(d, &o, folds, warm, &cv, err)) != HOG_OK)
        return st;
    unsigned since_best = 0; /* C values since the last gain */
    double anchor = NAN;      /* the figure of the last C that gained */
    bool gained = false;
    for (unsigned i = 0; i < (unsigned)steps; i++) {
        double C = c0 * pow(so.ratio, i);
        o.C = C;
        hog_cv_result r;
        memset(&r, 0, sizeof r);
        if ((st = hog_cv_run(cv, &o, h, warm && i > 0, &r, err)) != HOG_OK) {
            char why[HOG_ERR_MAX];
            snprintf(why, sizeof why, "%s", err->msg);
            hog_errf(err, st, "C = %g: %s", C, why);
            break;
        }
        hog_search_step s = { .C = C };
        hog_strengths_of_C(C, o.C_l1 != 0, d->m.rows, &s.l1, &s.l2);
        s.accuracy = r.accuracy;
        s.accuracy_sd = r.accuracy_sd;
        s.auc = r.auc;
        s.rmse = r.rmse;
        s.macro_f1 = r.macro_f1;
        s.seconds = r.seconds;
        s.warm = warm && i > 0;
        if (res->steps < res->step_cap)
            res->step[res->steps] = s;
        res->steps++;
        const hog_search_step *b = &res->best_step;
        bool better = i == 0 || (reg ? s.rmse < b->rmse
                                     : s.accuracy > b->accuracy);
        if (better) {
            res->best = res->steps - 1;
            res->best_step = s;
        }
        /* the gains, against the figure of the last C that gained (the
         * first C's at the start) */
        double fig = reg ? s.rmse : s.accuracy;
        if (i == 0) {
            anchor = fig;
        } else if (reg ? fig < anchor * (1.0 - so.min_gain)
                       : fig >= anchor + so.min_gain - 1e-12) {
            anchor = fig;
            gained = true;
            since_best = 0;
        } else if (gained) {
            since_best++;
        }
        if (so.step)
            so.step(so.step_ctx, &s);
        if (so.patience && since_best >= so.patience &&
            i + 1 < (unsigned)steps) {
            res->stopped_early = 1;
            break;
        }
    }
    hog_cv_close(cv);
    res->best_C = res->steps ? res->best_step.C : NAN;
    res->seconds = hog_now() - t0;
    return st;
}

hog_status hog_search_C(const hog_data *d, const hog_train_opts *user,
                        const hog_train_hooks *user_h, unsigned folds,
                        const hog_search_opts *user_so,
                        hog_search_result *res, hog_err *err)
{
    hog_train_opts o;
    hog_train_hooks h;
    hog_status st = hog_train_hooks_take(user_h, &h, err);
    if (st != HOG_OK || (st = hog_train_opts_take(user, &h, &o, err)) != HOG_OK)
        return st;
    hog_search_opts so;
    hog_search_opts_init(&so);
    if (user_so) {
        if (user_so->size == 0 || user_so->size > sizeof so)
            return hog_errf(err, HOG_EINVAL, "the search options were not "
                            "set up with hog_search_opts_init()");
        memcpy(&so, user_so, user_so->size);
    }
    if (!res)
        return hog_errf(err, HOG_EINVAL, "no result to fill");
    hog_search_result r;
    if ((st = hog_out_take(&r, res, sizeof r, "hog_search_result",
                           err)) != HOG_OK)
        return st;
    if (r.step_cap && !r.step)
        return hog_errf(err, HOG_EINVAL, "hog_search_result.step_cap is %u "
                        "but step is NULL: give an array of step_cap steps, "
                        "or step_cap 0 for the best step alone", r.step_cap);
    /* the caller's array (none when its size ends before it), the
     * figures zero until they are known */
    r = (hog_search_result){ .size = sizeof r, .step = r.step,
                             .step_cap = r.step_cap };
    st = search(d, o, &h, folds, so, &r, err);
    hog_out_give(res, &r, sizeof r);
    return st;
}
