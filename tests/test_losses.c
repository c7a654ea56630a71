/* losses: the table of losses (core/loss.c) — each loss's derivative and
 * second derivative against differences, its value at hand-computed
 * points, and what training with it does on real data (quantile's
 * residuals, Poisson's objective and predictions, modified Huber's
 * probabilities, Newton against L-BFGS, the parameter in the model). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/loss.h"
#include "coordinate/coordinate.h"
#include "helpers.h"

/* The parameters each loss is checked at: epsilon 0, 0.1 and 1.5, tau
 * 0.1, 0.5 and 0.9; none for the others. */
static double param_at(hog_loss l, int k)
{
    static const double eps[] = { 0.0, 0.1, 1.5 }, tau[] = { 0.1, 0.5, 0.9 };
    switch (hog_loss_rows[l].param) {
    case HOG_LOSS_PARAM_EPSILON: return eps[k];
    case HOG_LOSS_PARAM_TAU: return tau[k];
    case HOG_LOSS_PARAM_NONE: break;
    }
    return 0.0;
}

/* Whether m is within h of a kink of loss l at (p, y): where its
 * derivative (second: its second derivative) jumps. */
static bool near_kink(hog_loss l, double p, double y, double m, double h)
{
    double z = y * m, r = m - y;
    switch (l) {
    case HOG_LOSS_HINGE:
    case HOG_LOSS_SQHINGE:
        return fabs(1.0 - z) < h;
    case HOG_LOSS_MODIFIED_HUBER:
        return fabs(1.0 - z) < h || fabs(1.0 + z) < h;
    case HOG_LOSS_HUBER:
    case HOG_LOSS_EPS_INSENSITIVE:
    case HOG_LOSS_SQ_EPS_INSENSITIVE:
        return fabs(fabs(r) - p) < h;
    case HOG_LOSS_QUANTILE:
        return fabs(r) < h;
    default:
        return false;
    }
}

Test(losses, table_has_a_row_per_loss_with_distinct_names)
{
    for (int i = 0; i < HOG_LOSS_COUNT; i++) {
        const struct hog_loss_row *r = &hog_loss_rows[i];
        cr_assert(r->name && r->title && r->value && r->deriv,
                  "loss %d has a row", i);
        cr_assert_gt(r->eta, 0.0, "%s has a step size", r->name);
        for (int j = 0; j < i; j++)
            cr_assert_str_neq(r->name, hog_loss_rows[j].name);
        /* what Newton needs, the table gives */
        if (r->algos & HOG_LOSS_ALGO(HOG_ALGO_NEWTON) &&
            (int)i >= HOG_LOSS_MODIFIED_HUBER)
            cr_assert(r->second, "%s trains with newton", r->name);
    }
}

Test(losses, derivative_matches_central_differences_for_every_loss)
{
    const double ys_cls[] = { 1.0, -1.0 };
    const double ys_reg[] = { 0.0, 0.3, 2.5, -4.0, 7.0 };
    const double h = 1e-6;
    for (int li = 0; li < HOG_LOSS_COUNT; li++) {
        hog_loss l = (hog_loss)li;
        bool cls = hog_loss_is_classification(l);
        const double *ys = cls ? ys_cls : ys_reg;
        int ny = cls ? 2 : 5, checked = 0;
        for (int k = 0; k < 3; k++) {
            double p = param_at(l, k);
            for (int yi = 0; yi < ny; yi++) {
                double y = ys[yi];
                if (l == HOG_LOSS_POISSON && y < 0)
                    continue; /* counts */
                for (double m = -12.0; m <= 12.0; m += 0.0173) {
                    if (near_kink(l, p, y, m, 1e-3))
                        continue;
                    double fd = (hog_loss_value(l, p, y, m + h) -
                                 hog_loss_value(l, p, y, m - h)) / (2 * h);
                    double d = hog_loss_deriv(l, p, y, m);
                    cr_assert(fabs(fd - d) <= 2e-6 * fmax(1.0, fabs(d)),
                              "%s loss, p = %g, y = %g, m = %g: derivative "
                              "%.10g, central difference %.10g",
                              hog_loss_name(l), p, y, m, d, fd);
                    /* through the table too, as the run-time loops call */
                    cr_assert_eq(hog_loss_rows[l].deriv(p, y, m), d);
                    checked++;
                }
            }
        }
        cr_assert_gt(checked, 1000, "%s: %d margins", hog_loss_name(l),
                     checked);
    }
}

Test(losses, second_derivative_matches_differences_of_the_first)
{
    const double h = 1e-6;
    for (int li = 0; li < HOG_LOSS_COUNT; li++) {
        hog_loss l = (hog_loss)li;
        if (!hog_loss_rows[l].second)
            continue;
        bool cls = hog_loss_is_classification(l);
        for (int k = 0; k < 3; k++) {
            double p = param_at(l, k), y = cls ? -1.0 : 2.5;
            for (double m = -6.0; m <= 6.0; m += 0.0131) {
                if (near_kink(l, p, y, m, 1e-3))
                    continue;
                double fd = (hog_loss_deriv(l, p, y, m + h) -
                             hog_loss_deriv(l, p, y, m - h)) / (2 * h);
                double s = hog_loss_rows[l].second(p, y, m);
                cr_assert(fabs(fd - s) <= 2e-5 * fmax(1.0, fabs(s)),
                          "%s loss, p = %g, m = %g: second derivative %.10g, "
                          "difference %.10g", hog_loss_name(l), p, m, s, fd);
            }
        }
    }
}

Test(losses, values_at_hand_computed_points)
{
    /* modified Huber: (1 - z)^2 for -1 <= z < 1, -4 z below */
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_MODIFIED_HUBER, 0, 1, 0.5),
                       0.25, 1e-15);
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_MODIFIED_HUBER, 0, -1, 1),
                       4.0, 1e-15);
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_MODIFIED_HUBER, 0, 1, -3),
                       12.0, 1e-15);
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_MODIFIED_HUBER, 0, 1, 2), 0.0,
                       1e-15);
    cr_assert_float_eq(hog_loss_deriv(HOG_LOSS_MODIFIED_HUBER, 0, -1, 5), 4.0,
                       1e-15);
    /* Huber at epsilon 1: r^2 / 2 inside, |r| - 1/2 outside */
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_HUBER, 1.0, 2, 2.5), 0.125,
                       1e-15);
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_HUBER, 1.0, 2, 5), 2.5, 1e-15);
    cr_assert_float_eq(hog_loss_deriv(HOG_LOSS_HUBER, 1.0, 2, -5), -1.0,
                       1e-15);
    /* epsilon-insensitive, tube 0.5: nothing inside, |r| - 0.5 outside */
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_EPS_INSENSITIVE, 0.5, 3, 3.4),
                       0.0, 1e-15);
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_EPS_INSENSITIVE, 0.5, 3, 1),
                       1.5, 1e-15);
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_SQ_EPS_INSENSITIVE, 0.5, 3, 1),
                       2.25, 1e-15);
    cr_assert_float_eq(hog_loss_deriv(HOG_LOSS_SQ_EPS_INSENSITIVE, 0.5, 3, 1),
                       -3.0, 1e-15);
    /* quantile at tau 0.2: 0.2 (y - m) under, 0.8 (m - y) over */
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_QUANTILE, 0.2, 10, 7), 0.6,
                       1e-15);
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_QUANTILE, 0.2, 10, 12), 1.6,
                       1e-15);
    cr_assert_float_eq(hog_loss_deriv(HOG_LOSS_QUANTILE, 0.2, 10, 12), 0.8,
                       1e-15);
    /* Poisson: exp(m) - y m */
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_POISSON, 0, 3, 0), 1.0, 1e-15);
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_POISSON, 0, 2, log(2.0)),
                       2.0 - 2.0 * log(2.0), 1e-15);
    cr_assert_float_eq(hog_loss_deriv(HOG_LOSS_POISSON, 0, 2, log(2.0)), 0.0,
                       1e-15);
    cr_assert_float_eq(hog_loss_predict(HOG_LOSS_POISSON, log(3.0)), 3.0,
                       1e-14);
}

Test(losses, parameters_in_range)
{
    cr_assert(hog_loss_param_ok(HOG_LOSS_HUBER, 0.0));
    cr_assert(!hog_loss_param_ok(HOG_LOSS_HUBER, -0.1));
    cr_assert(!hog_loss_param_ok(HOG_LOSS_QUANTILE, 0.0));
    cr_assert(!hog_loss_param_ok(HOG_LOSS_QUANTILE, 1.0));
    cr_assert(hog_loss_param_ok(HOG_LOSS_QUANTILE, 0.3));
    cr_assert(!hog_loss_param_ok(HOG_LOSS_POISSON, 0.3));
}

/* ---- training --------------------------------------------------------- */

static hog_train_opts sgd_opts(hog_loss loss)
{
    hog_train_opts o;
    hog_train_opts_init(&o);
    o.loss = loss;
    o.threads = 1;
    o.l2 = 1e-5; /* set, for the objectives below */
    return o;
}

/* The fraction of d's rows whose label is below m's prediction. */
static double share_below(const hog_model *m, const hog_data *d)
{
    uint64_t n = hog_data_rows(d);
    double *pred = malloc(n * sizeof *pred);
    hog_err err = { 0 };
    cr_assert_eq(hog_model_predict(m, d, pred, &err), HOG_OK, "%s", err.msg);
    const uint64_t *off;
    const uint32_t *idx;
    const float *val, *y;
    hog_data_csr(d, &off, &idx, &val, &y);
    uint64_t below = 0;
    for (uint64_t i = 0; i < n; i++)
        below += (double)y[i] < pred[i];
    free(pred);
    return (double)below / (double)n;
}

/* At the quantile loss's unregularised minimum over a model with a bias,
 * the subgradient in the bias puts tau between the shares of labels below
 * and at or below the prediction; abalone's integer labels tie with no
 * prediction, and FTRL's noise after 50 epochs leaves the share within
 * 0.02 of tau (0.198, 0.495 and 0.795 measured; 20 epochs, 0.47 at 0.5). */
Test(losses, quantile_puts_tau_of_the_labels_below_its_predictions)
{
    TH_DATA_OR_SKIP(path, "abalone_scale");
    hog_data *d = th_load(path);
    const double taus[] = { 0.2, 0.5, 0.8 };
    double last = 0.0;
    for (int i = 0; i < 3; i++) {
        hog_train_opts o = sgd_opts(HOG_LOSS_QUANTILE);
        o.quantile_tau = taus[i];
        o.epochs = 50;
        o.l2 = 0;
        hog_model *m = th_train_ok(d, &o);
        cr_assert_float_eq(hog_model_loss_param(m), taus[i], 0);
        double s = share_below(m, d);
        cr_assert(fabs(s - taus[i]) < 0.02,
                  "tau %g: %.4f of the labels below the predictions", taus[i],
                  s);
        cr_assert_gt(s, last);
        last = s;
        hog_model_free(m);
    }
    hog_data_free(d);
}

Test(losses, poisson_objective_falls_and_predictions_are_positive)
{
    TH_DATA_OR_SKIP(path, "abalone_scale");
    hog_data *d = th_load(path);
    double prev = INFINITY;
    const unsigned epochs[] = { 1, 3, 10 };
    for (int i = 0; i < 3; i++) {
        hog_train_opts o = sgd_opts(HOG_LOSS_POISSON);
        o.epochs = epochs[i];
        hog_model *m = th_train_ok(d, &o);
        struct hog_objective f = th_objective(m, d, HOG_LOSS_POISSON, o.l1,
                                              o.l2);
        cr_assert(f.value < prev, "%u epochs: objective %.6f, before %.6f",
                  epochs[i], f.value, prev);
        prev = f.value;
        uint64_t n = hog_data_rows(d);
        double *pred = malloc(n * sizeof *pred);
        hog_err err = { 0 };
        cr_assert_eq(hog_model_predict(m, d, pred, &err), HOG_OK);
        double mean = 0;
        for (uint64_t r = 0; r < n; r++) {
            cr_assert(pred[r] > 0 && isfinite(pred[r]), "row %llu: %g",
                      (unsigned long long)r, pred[r]);
            mean += pred[r] / (double)n;
        }
        free(pred);
        /* the log link's intercept: the mean prediction near the mean
         * label (9.93 on abalone) once trained */
        if (i == 2)
            cr_assert(fabs(mean - 9.93) < 0.5, "mean prediction %g", mean);
        hog_model_free(m);
    }
    hog_data_free(d);
}

Test(losses, poisson_refuses_negative_labels_with_a_sentence)
{
    TH_DATA_OR_SKIP(path, "a9a");
    hog_data *d = th_load(path);
    hog_train_opts o = sgd_opts(HOG_LOSS_POISSON);
    hog_model *m = NULL;
    hog_err err = { 0 };
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "Poisson loss needs labels >= 0") &&
                  strstr(err.msg, "is -1"),
              "%s", err.msg);
    cr_assert_null(m);
    hog_data_free(d);
}

/* Newton's generalised Hessians (the table's second derivatives) and
 * L-BFGS's gradients reach one minimum: a wrong second derivative would
 * stop Newton early or elsewhere. */
Test(losses, newton_and_lbfgs_agree_on_the_smooth_losses)
{
    TH_DATA_OR_SKIP(reg, "abalone_scale");
    TH_DATA_OR_SKIP(cls, "a9a");
    const hog_loss losses[] = { HOG_LOSS_MODIFIED_HUBER, HOG_LOSS_HUBER,
                                HOG_LOSS_SQ_EPS_INSENSITIVE,
                                HOG_LOSS_POISSON };
    hog_data *dr = th_load(reg), *dc = th_load(cls);
    for (int i = 0; i < 4; i++) {
        hog_data *d = hog_loss_is_classification(losses[i]) ? dc : dr;
        double f[2];
        for (int k = 0; k < 2; k++) {
            hog_train_opts o = th_solver_opts(k ? HOG_ALGO_LBFGS
                                                : HOG_ALGO_NEWTON,
                                              losses[i], 0, 1e-3, 1, 1e-6);
            o.epsilon = 0.5;
            hog_model *m = th_train_ok(d, &o);
            f[k] = th_objective(m, d, losses[i], 0, 1e-3).value;
            hog_model_free(m);
        }
        cr_assert(fabs(f[0] - f[1]) <= 1e-5 * fabs(f[1]),
                  "%s: newton %.10g, lbfgs %.10g", hog_loss_name(losses[i]),
                  f[0], f[1]);
    }
    hog_data_free(dr);
    hog_data_free(dc);
}

/* scikit-learn's predict_proba of modified Huber: (clip(s, -1, 1) + 1) / 2 */
Test(losses, modified_huber_probabilities_are_the_clipped_scores)
{
    TH_DATA_OR_SKIP(path, "a9a");
    hog_data *d = th_load(path);
    hog_train_opts o = sgd_opts(HOG_LOSS_MODIFIED_HUBER);
    hog_model *m = th_train_ok(d, &o);
    uint64_t n = hog_data_rows(d);
    double *pr = malloc(2 * n * sizeof *pr);
    hog_err err = { 0 };
    cr_assert_eq(hog_model_probabilities(m, d, pr, &err), HOG_OK, "%s",
                 err.msg);
    const uint64_t *off;
    const uint32_t *idx;
    const float *val, *y;
    hog_data_csr(d, &off, &idx, &val, &y);
    const float *w = hog_model_weights(m);
    uint64_t nf = hog_model_features(m), clipped = 0;
    for (uint64_t i = 0; i < n; i++) {
        double s = (double)w[nf]; /* the bias feature is 1 */
        for (uint64_t q = off[i]; q < off[i + 1]; q++)
            s += (double)w[idx[q]] * (double)val[q];
        double want = (fmin(fmax(s, -1.0), 1.0) + 1.0) / 2.0;
        clipped += fabs(s) > 1.0;
        cr_assert_float_eq(pr[2 * i], want, 1e-12, "row %llu: score %g",
                           (unsigned long long)i, s);
        cr_assert_float_eq(pr[2 * i] + pr[2 * i + 1], 1.0, 1e-15);
    }
    /* both ways of the formula are reached */
    cr_assert(clipped > 0 && clipped < n, "%llu of %llu clipped",
              (unsigned long long)clipped, (unsigned long long)n);
    free(pr);
    hog_model_free(m);
    hog_data_free(d);
}

/* The parameter is stored in the .hgm (flag bit 2) and read back, and
 * `objective` sees it: the same objective from the file as in memory. */
Test(losses, model_file_keeps_the_parameter)
{
    TH_DATA_OR_SKIP(path, "abalone_scale");
    char dir[512], file[600], out[4096];
    th_tmpdir(dir, sizeof dir);
    hog_data *d = th_load(path);
    const hog_loss losses[] = { HOG_LOSS_HUBER, HOG_LOSS_EPS_INSENSITIVE,
                                HOG_LOSS_SQ_EPS_INSENSITIVE,
                                HOG_LOSS_QUANTILE, HOG_LOSS_POISSON };
    for (int i = 0; i < 5; i++) {
        hog_train_opts o = sgd_opts(losses[i]);
        o.epsilon = 0.75;
        o.quantile_tau = 0.3;
        hog_model *m = th_train_ok(d, &o);
        snprintf(file, sizeof file, "%s/m%d.hgm", dir, i);
        hog_err err = { 0 };
        cr_assert_eq(hog_model_save(m, file, HOG_MODEL_HGM, &err), HOG_OK, "%s", err.msg);
        hog_model *r = NULL;
        cr_assert_eq(hog_model_load(file, &r, &err), HOG_OK, "%s", err.msg);
        cr_assert_eq(hog_model_loss(r), losses[i]);
        cr_assert_eq(hog_model_loss_param(r), hog_model_loss_param(m));
        cr_assert_eq(hog_model_loss_param(m),
                     losses[i] == HOG_LOSS_QUANTILE  ? 0.3
                     : losses[i] == HOG_LOSS_POISSON ? 0.0
                                                     : 0.75);
        double f = th_objective(m, d, losses[i], o.l1, o.l2).value;
        cr_assert_float_eq(th_objective(r, d, losses[i], o.l1, o.l2).value, f,
                           0);
        /* the command reads the same file */
        cr_assert_eq(th_run(out, sizeof out, "%s objective %s %s", th_bin(),
                            file, path), 0, "%s", out);
        char want[64];
        snprintf(want, sizeof want, "loss %s", hog_loss_rows[losses[i]].name);
        cr_assert(strstr(out, want), "%s", out);
        snprintf(want, sizeof want, "objective %.12g\n", f);
        cr_assert(strstr(out, want), "want %s in %s", want, out);
        if (losses[i] == HOG_LOSS_HUBER) {
            cr_assert(strstr(out, "epsilon 0.75\n"), "%s", out);
            /* another epsilon, given: another problem */
            cr_assert_eq(th_run(out, sizeof out, "%s objective --epsilon 2 "
                                "%s %s", th_bin(), file, path), 0, "%s", out);
            cr_assert(strstr(out, "epsilon 2\n") && !strstr(out, want),
                      "%s", out);
        }
        hog_model_free(r);
        hog_model_free(m);
    }
    hog_data_free(d);
}

Test(losses, trainers_without_a_loss_refuse_it_with_a_sentence)
{
    char out[4096];
    TH_DATA_OR_SKIP(path, "abalone_scale");
    int rc = th_run(out, sizeof out, "%s train --algo dcd --loss huber %s",
                    th_bin(), path);
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert(strstr(out, "--algo dcd does not train the Huber loss; it "
                          "trains with --algo serial, hogwild, newton or "
                          "lbfgs"), "%s", out);
    rc = th_run(out, sizeof out, "%s train --algo newton --loss quantile %s",
                th_bin(), path);
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert(strstr(out, "--algo newton does not train the quantile loss; "
                          "it trains with --algo serial or hogwild"),
              "%s", out);
    rc = th_run(out, sizeof out, "%s train --loss squared --epsilon 1 %s",
                th_bin(), path);
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert(strstr(out, "--epsilon applies to --loss huber"), "%s", out);
    rc = th_run(out, sizeof out,
                "%s train --loss quantile --quantile-tau 1 %s", th_bin(),
                path);
    cr_assert_eq(rc, 2, "%s", out);
}

/* Every loss trains with Hogwild! as with the serial trainer: one thread
 * gives the serial model, bit for bit, as for the first four. */
Test(losses, hogwild_with_one_thread_is_serial)
{
    TH_DATA_OR_SKIP(reg, "abalone_scale");
    TH_DATA_OR_SKIP(cls, "a9a");
    hog_data *dr = th_load(reg), *dc = th_load(cls);
    for (int l = HOG_LOSS_MODIFIED_HUBER; l < HOG_LOSS_COUNT; l++) {
        hog_data *d = hog_loss_is_classification((hog_loss)l) ? dc : dr;
        hog_model *m[2];
        for (int k = 0; k < 2; k++) {
            hog_train_opts o = sgd_opts((hog_loss)l);
            o.schedule = HOG_SCHED_ADAGRAD;
            o.algo = k ? HOG_ALGO_HOGWILD : HOG_ALGO_SERIAL;
            m[k] = th_train_ok(d, &o);
        }
        uint64_t n = hog_model_features(m[0]) + 1;
        cr_assert(memcmp(hog_model_weights(m[0]), hog_model_weights(m[1]),
                         n * sizeof(float)) == 0,
                  "%s", hog_loss_name((hog_loss)l));
        hog_model_free(m[0]);
        hog_model_free(m[1]);
    }
    hog_data_free(dr);
    hog_data_free(dc);
}

/* dcd's support vector regression (coordinate/dcd_svr.c) against
 * LIBLINEAR's own, -s 13 (epsilon-insensitive) and -s 12 (squared), at
 * -p 0.1 (both sides' default): the primal objectives of the two models
 * agree within 1e-6 relative, and LIBLINEAR's printed dual objective is
 * minus ours (the duality gap) within 1e-5. At -e 0.0001 the two stop at
 * different points of -s 13's slow tail (6242.714 and 6242.701, 2e-6
 * apart, the optimum 6242.656): both run to 1e-6 (2e-8 apart). */
Test(losses, dcd_svr_reaches_liblinears_objective, .timeout = 120)
{
    TH_LIBLINEAR_OR_SKIP();
    TH_DATA_OR_SKIP(path, "abalone_scale");
    hog_data *d = th_load(path);
    const double C = 1.0;
    double l2 = 1.0 / (C * (double)hog_data_rows(d));
    const struct { int solver; hog_loss loss; } runs[] = {
        { 13, HOG_LOSS_EPS_INSENSITIVE }, { 12, HOG_LOSS_SQ_EPS_INSENSITIVE },
    };
    for (int k = 0; k < 2; k++) {
        hog_train_opts o = th_solver_opts(HOG_ALGO_DCD, runs[k].loss, 0, l2,
                                          1, 1e-6);
        o.epsilon = 0.1;
        hog_model *ours = th_train_ok(d, &o);
        double printed;
        hog_model *ll = th_liblinear_model(path, runs[k].solver, C,
                                           "0.000001 -p 0.1", &printed);
        ll->loss_param = 0.1; /* LIBLINEAR's files do not keep -p */
        double a = th_objective(ours, d, runs[k].loss, 0, l2).liblinear;
        double b = th_objective(ll, d, runs[k].loss, 0, l2).liblinear;
        cr_assert(fabs(a - b) <= 1e-6 * fabs(b), "-s %d: ours %.12g, "
                  "LIBLINEAR's %.12g", runs[k].solver, a, b);
        cr_assert(fabs(a + printed) <= 1e-5 * fabs(a), "-s %d: primal "
                  "%.12g, LIBLINEAR's dual %.12g", runs[k].solver, a,
                  printed);
        hog_model_free(ll);
        hog_model_free(ours);
    }
    hog_data_free(d);
}

/* LIBLINEAR's text keeps the epsilon-insensitive pair as its SVR solvers
 * (-s 13 reads back as epsilon-insensitive, -s 11 as squared: its files
 * do not keep -p), and refuses Poisson models with a sentence. */
Test(losses, liblinear_text_models_of_the_regression_losses)
{
    TH_DATA_OR_SKIP(path, "abalone_scale");
    char dir[512], file[600];
    th_tmpdir(dir, sizeof dir);
    hog_data *d = th_load(path);
    const struct { hog_loss loss, back; const char *solver; } runs[] = {
        { HOG_LOSS_EPS_INSENSITIVE, HOG_LOSS_EPS_INSENSITIVE,
          "L2R_L1LOSS_SVR_DUAL" },
        { HOG_LOSS_SQ_EPS_INSENSITIVE, HOG_LOSS_SQUARED, "L2R_L2LOSS_SVR" },
        { HOG_LOSS_HUBER, HOG_LOSS_SQUARED, "L2R_L2LOSS_SVR" },
    };
    for (int i = 0; i < 3; i++) {
        hog_train_opts o = sgd_opts(runs[i].loss);
        hog_model *m = th_train_ok(d, &o);
        snprintf(file, sizeof file, "%s/ll%d.model", dir, i);
        hog_err err = { 0 };
        cr_assert_eq(hog_model_save(m, file, HOG_MODEL_LIBLINEAR, &err),
                     HOG_OK, "%s", err.msg);
        size_t len;
        char *text = th_slurp(file, &len);
        cr_assert(strstr(text, runs[i].solver), "%s", text);
        free(text);
        hog_model *r = NULL;
        cr_assert_eq(hog_model_load(file, &r, &err), HOG_OK, "%s", err.msg);
        cr_assert_eq(hog_model_loss(r), runs[i].back);
        cr_assert(memcmp(hog_model_weights(r), hog_model_weights(m),
                         (hog_model_features(m) + 1) * sizeof(float)) == 0);
        hog_model_free(r);
        hog_model_free(m);
    }
    hog_train_opts o = sgd_opts(HOG_LOSS_POISSON);
    hog_model *m = th_train_ok(d, &o);
    hog_err err = { 0 };
    snprintf(file, sizeof file, "%s/poisson.model", dir);
    cr_assert_eq(hog_model_save(m, file, HOG_MODEL_LIBLINEAR, &err),
                 HOG_ENOTSUP);
    cr_assert(strstr(err.msg, "Poisson loss's log link"), "%s", err.msg);
    hog_model_free(m);
    hog_data_free(d);
}
