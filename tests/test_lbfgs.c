/* lbfgs: L-BFGS and OWL-QN on hand-sized problems checked by their
 * optimality conditions and by finite differences, against
 * liblinear-train -s 0, -s 2 and -s 6 on a9a and news20.binary, the same
 * model bit for bit at 1, 2 and 3 threads (and one-vs-rest's at 1 and 2),
 * and the options it refuses. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinate/coordinate.h"
#include "core/core.h"
#include "core/loss.h"
#include "helpers.h"
#include "train/train.h"

/* ---- problems small enough to check by hand -------------------------------- */

/* 3 rows, 2 features and the bias: x = (x1, x2, 1). Feature 2 barely
 * tells the classes apart, so that L1 at C = 2 keeps it at zero (the
 * values are floats' exactly, as the library reads them). */
static const double X[3][3] = {
    { 1.0, 0.125, 1.0 }, { -1.0, 0.25, 1.0 }, { 0.5, -0.125, 1.0 },
};
static const double Y[3] = { 1, -1, 1 };
static const char SMALL[] = "+1 1:1 2:0.125\n"
                            "-1 1:-1 2:0.25\n"
                            "+1 1:0.5 2:-0.125\n";

/* The logistic objective in the test's own words, LIBLINEAR's scale:
 * lam2/2 |w|^2 + lam1 |w|_1 + C sum log(1 + exp(-y w.x)); g the gradient
 * of its smooth part. */
static double small_f(double C, double lam1, double lam2, const double w[3],
                      double g[3])
{
    double f = 0.0;
    for (int a = 0; a < 3; a++) {
        f += 0.5 * lam2 * w[a] * w[a] + lam1 * fabs(w[a]);
        g[a] = lam2 * w[a];
    }
    for (int i = 0; i < 3; i++) {
        double m = w[0] * X[i][0] + w[1] * X[i][1] + w[2] * X[i][2];
        f += C * log1p(exp(-Y[i] * m));
        double d1 = -Y[i] / (1.0 + exp(Y[i] * m));
        for (int a = 0; a < 3; a++)
            g[a] += C * d1 * X[i][a];
    }
    return f;
}

/* Trains the small problem at C (l1 when lam1, else l2) to tol 1e-12 and
 * returns its weights and f at them. */
static double small_solve(bool l1, double C, double w[3], hog_model **out)
{
    char dir[512];
    th_tmpdir(dir, sizeof dir);
    hog_data *d = th_load(th_write(dir, "small.svm", SMALL, strlen(SMALL)));
    double s = 1.0 / (C * 3.0);
    hog_train_opts o = th_solver_opts(HOG_ALGO_LBFGS, HOG_LOSS_LOGISTIC,
                                      l1 ? s : 0.0, l1 ? 0.0 : s, 1, 1e-12);
    hog_model *m = th_train_ok(d, &o);
    const float *wf = hog_model_weights(m);
    double g[3];
    for (int a = 0; a < 3; a++)
        w[a] = wf[a];
    double f = small_f(C, l1, !l1, w, g);
    /* the library's objective is the one computed here */
    double lib =
        th_objective(m, d, HOG_LOSS_LOGISTIC, l1 ? s : 0.0, l1 ? 0.0 : s)
            .liblinear;
    cr_assert(fabs(lib - f) <= 1e-12 * f, "library %.17g, test %.17g", lib,
              f);
    hog_data_free(d);
    *out = m;
    return f;
}

/* No step of h along any coordinate lowers f by more than rounding. */
static void no_better_neighbour(double C, double lam1, double lam2,
                                const double w[3], double f)
{
    double g[3];
    for (int a = 0; a < 3; a++)
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            double v[3] = { w[0], w[1], w[2] };
            v[a] += sgn * 1e-4;
            double fv = small_f(C, lam1, lam2, v, g);
            cr_assert_geq(fv, f - 1e-12 * f,
                          "f(w %+g e%d) = %.17g below f(w) = %.17g",
                          sgn * 1e-4, a, fv, f);
        }
}

Test(lbfgs, l2_logistic_solves_a_hand_sized_problem)
{
    for (double C = 1.0; C <= 100.0; C *= 10.0) {
        double w[3], g[3];
        hog_model *m;
        double f = small_solve(false, C, w, &m);
        small_f(C, 0.0, 1.0, w, g);
        /* the gradient at the optimum rounded to floats, and where the
         * line search meets f's rounding: well below 1e-6 */
        double gn = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
        cr_assert_leq(gn, 1e-6 * C, "C %g: |gradient| %g at (%g, %g, %g)",
                      C, gn, w[0], w[1], w[2]);
        no_better_neighbour(C, 0.0, 1.0, w, f);
        hog_model_free(m);
    }
}

/* OWL-QN: at the optimum of |w|_1 + C sum loss every nonzero weight has
 * g_j = -sign(w_j) and every zero weight |g_j| <= 1; here w2 is zero
 * (at w = 0 its |g_2| is C/2 0.25 = 0.25, far inside) and w1 is not. */
Test(lbfgs, owlqn_solves_a_hand_sized_l1_problem)
{
    const double C = 2.0;
    double w[3], g[3];
    hog_model *m;
    double f = small_solve(true, C, w, &m);
    small_f(C, 1.0, 0.0, w, g);
    cr_assert_eq(w[1], 0.0, "w2 = %g, not exactly zero", w[1]);
    cr_assert_neq(w[0], 0.0);
    for (int a = 0; a < 3; a++) {
        if (w[a] != 0.0)
            cr_assert_leq(fabs(g[a] + (w[a] > 0 ? 1.0 : -1.0)), 1e-6,
                          "w%d = %g: g + sign(w) = %g", a + 1, w[a],
                          g[a] + (w[a] > 0 ? 1.0 : -1.0));
        else
            cr_assert_leq(fabs(g[a]), 1.0, "w%d = 0 with |g| %g > 1",
                          a + 1, fabs(g[a]));
    }
    no_better_neighbour(C, 1.0, 0.0, w, f);
    hog_model_free(m);
}

/* ---- against LIBLINEAR ---------------------------------------------------- */

/* hogtrain's and LIBLINEAR's objectives at C = 1 and -e eps (l1: -s 6's
 * problem), into *mine and *theirs. */
static void vs_liblinear(const char *path, hog_loss loss, int solver,
                         bool l1, const char *eps, unsigned threads,
                         double *mine, double *theirs)
{
    hog_data *d = th_load(path);
    double s = 1.0 / (double)hog_data_rows(d); /* C = 1 */
    double l1s = l1 ? s : 0.0, l2s = l1 ? 0.0 : s;
    hog_train_opts o =
        th_solver_opts(HOG_ALGO_LBFGS, loss, l1s, l2s, threads, atof(eps));
    hog_model *a = th_train_ok(d, &o);
    hog_model *b = th_liblinear_model(path, solver, 1.0, eps, NULL);
    *mine = th_objective(a, d, loss, l1s, l2s).liblinear;
    *theirs = th_objective(b, d, loss, l1s, l2s).liblinear;
    hog_model_free(a);
    hog_model_free(b);
    hog_data_free(d);
}

static void within(const char *name, int solver, double a, double b,
                   double rel)
{
    cr_assert(fabs(a - b) <= rel * b,
              "%s, lbfgs vs -s %d: hogtrain %.12g, LIBLINEAR %.12g "
              "(relative %.3g)", name, solver, a, b, fabs(a - b) / b);
}

Test(lbfgs, logistic_reaches_liblinear_s0_on_a9a, .timeout = 60)
{
    TH_LIBLINEAR_OR_SKIP();
    TH_DATA_OR_SKIP(path, "a9a");
    double a, b;
    vs_liblinear(path, HOG_LOSS_LOGISTIC, 0, false, "0.0001", 2, &a, &b);
    within("a9a", 0, a, b, 1e-6);
}

Test(lbfgs, sqhinge_reaches_liblinear_s2_on_a9a, .timeout = 60)
{
    TH_LIBLINEAR_OR_SKIP();
    TH_DATA_OR_SKIP(path, "a9a");
    double a, b;
    vs_liblinear(path, HOG_LOSS_SQHINGE, 2, false, "0.0001", 2, &a, &b);
    within("a9a", 2, a, b, 1e-6);
}

/* OWL-QN against newGLMNET: at LIBLINEAR's default -e 0.01 it stops
 * below -s 6's objective on a9a (newGLMNET stops 4e-3 above the minimum
 * there), and at -e 0.0001 the two agree within 1e-4 (a9a's L1 problem
 * is ill-conditioned: OWL-QN reaches --epochs 1000 first). */
Test(lbfgs, owlqn_reaches_liblinear_s6_on_a9a, .timeout = 120)
{
    TH_HEAVY_OR_SKIP();
    TH_LIBLINEAR_OR_SKIP();
    TH_DATA_OR_SKIP(path, "a9a");
    double a, b;
    vs_liblinear(path, HOG_LOSS_LOGISTIC, 6, true, "0.01", 2, &a, &b);
    cr_assert_leq(a, b * (1.0 + 1e-4), "a9a -e 0.01: hogtrain %.12g, "
                  "LIBLINEAR -s 6 %.12g", a, b);
    vs_liblinear(path, HOG_LOSS_LOGISTIC, 6, true, "0.0001", 2, &a, &b);
    within("a9a -e 0.0001", 6, a, b, 1e-4);
}

Test(lbfgs, owlqn_reaches_liblinear_s6_on_news20, .timeout = 180)
{
    TH_HEAVY_OR_SKIP();
    TH_LIBLINEAR_OR_SKIP();
    TH_DATA_OR_SKIP(path, "news20.binary.train.svm");
    double a, b;
    vs_liblinear(path, HOG_LOSS_LOGISTIC, 6, true, "0.01", 1, &a, &b);
    within("news20.binary", 6, a, b, 1e-4);
}

/* ---- the same bits at every thread count ----------------------------------- */

/* L2 and L1 at 1, 2 and 3 threads, at most epochs iterations. */
static void same_at_1_2_3(const char *name, double tol, unsigned epochs)
{
    TH_DATA_OR_SKIP(path, name);
    hog_data *d = th_load(path);
    uint64_t n = hog_data_features(d) + 1;
    double s = 1.0 / (double)hog_data_rows(d);
    for (int k = 0; k < 3; k++) {
        hog_loss loss = k == 1 ? HOG_LOSS_SQHINGE : HOG_LOSS_LOGISTIC;
        hog_train_opts o = th_solver_opts(
            HOG_ALGO_LBFGS, loss, k == 2 ? s : 0.0, k == 2 ? 0.0 : s, 1, tol);
        o.epochs = epochs;
        hog_model *one = th_train_ok(d, &o);
        for (unsigned t = 2; t <= 3; t++) {
            o.threads = t;
            hog_model *m = th_train_ok(d, &o);
            cr_assert(memcmp(hog_model_weights(one), hog_model_weights(m),
                             n * sizeof(float)) == 0,
                      "%s, %s, l1 %g, %u threads: the weights differ", name,
                      hog_loss_name(loss), o.l1, t);
            hog_model_free(m);
        }
        hog_model_free(one);
    }
    hog_data_free(d);
}

Test(lbfgs, the_model_is_the_same_at_1_2_and_3_threads, .timeout = 120)
{
    TH_HEAVY_OR_SKIP();
    same_at_1_2_3("a9a", 1e-3, 1000);
}

/* news20.binary's 1.35M weights put the vector work on the pool, in 83
 * ranges (newton/vec.c); 30 iterations reach every step of the method
 * (a full memory of pairs, searches that backtrack) */
Test(lbfgs, news20_vectors_on_the_pool_give_the_same_bits, .timeout = 240)
{
    TH_HEAVY_OR_SKIP();
    same_at_1_2_3("news20.binary.train.svm", 0.01, 30);
}

/* K classes: news20's 20 one-vs-rest, the classes spread over the
 * threads, each solved on one thread: the same model at 1 and 2 threads
 * (4 iterations a class keep it short: the classes' spread is the
 * point, not the method, which the tests above check). */
Test(lbfgs, news20_ovr_is_the_same_at_1_and_2_threads, .timeout = 300)
{
    TH_HEAVY_OR_SKIP();
    TH_DATA_OR_SKIP(path, "news20.train.svm");
    hog_data *d = th_load(path);
    hog_train_opts o = th_solver_opts(HOG_ALGO_LBFGS, HOG_LOSS_LOGISTIC, 0.0,
                                      1.0 / (double)hog_data_rows(d), 1, 0.01);
    o.epochs = 4;
    hog_model *one = th_train_ok(d, &o);
    o.threads = 2;
    hog_model *two = th_train_ok(d, &o);
    const double *labels;
    unsigned k = hog_model_classes(one, &labels);
    cr_assert_eq(k, 20);
    cr_assert(memcmp(hog_model_weights(one), hog_model_weights(two),
                     (uint64_t)k * (hog_data_features(d) + 1) *
                         sizeof(float)) == 0,
              "news20, one-vs-rest: the weights differ");
    hog_model_free(one);
    hog_model_free(two);
    hog_data_free(d);
}

/* ---- what it refuses, and what it says -------------------------------------- */

Test(lbfgs, options_that_do_not_apply_are_refused)
{
    char dir[512];
    th_tmpdir(dir, sizeof dir);
    hog_data *d = th_load(th_write(dir, "small.svm", SMALL, strlen(SMALL)));
    hog_model *m = NULL;
    hog_err err = { { 0 } };
    hog_train_opts o =
        th_solver_opts(HOG_ALGO_LBFGS, HOG_LOSS_HINGE, 0.0, 0.1, 1, 0.01);
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "--algo lbfgs needs a loss with a continuous "
                              "derivative") && strstr(err.msg, "--algo dcd"),
              "%s", err.msg);
    o = th_solver_opts(HOG_ALGO_LBFGS, HOG_LOSS_LOGISTIC, 0.0, 0.0, 1, 0.01);
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "--algo lbfgs needs l2 > 0"), "%s", err.msg);
    o = th_solver_opts(HOG_ALGO_LBFGS, HOG_LOSS_LOGISTIC, 0.0, 0.1, 1, 0.01);
    o.update = HOG_UPDATE_ATOMIC;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "--update applies to --algo"), "%s", err.msg);
    hog_data_free(d);

    const char *path = th_write(dir, "c.svm", SMALL, strlen(SMALL));
    char out[4096];
    int rc = th_run(out, sizeof out, "'%s' train --algo lbfgs --loss hinge "
                    "'%s'", th_bin(), path);
    cr_assert_neq(rc, 0, "%s", out);
    cr_assert(strstr(out, "for the hinge loss use --algo dcd"), "%s", out);
    static const char *const step[] = { "--schedule constant", "--eta 0.1",
                                        "--schedule invscaling --power 0.5" };
    for (size_t i = 0; i < sizeof step / sizeof *step; i++) {
        rc = th_run(out, sizeof out, "'%s' train --algo lbfgs %s '%s'",
                    th_bin(), step[i], path);
        cr_assert_eq(rc, 2, "%s: %s", step[i], out);
        cr_assert(strstr(out, "--algo lbfgs takes no step size (its steps "
                              "come from the line search)"),
                  "%s: %s", step[i], out);
    }
}

/* The command says what ended the run, L2 and L1 alike. */
Test(lbfgs, the_command_says_why_it_stopped, .timeout = 60)
{
    TH_DATA_OR_SKIP(path, "a9a");
    char out[8192];
    int rc = th_run(out, sizeof out, "'%s' train --algo lbfgs --C 1 '%s'",
                    th_bin(), path);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "tolerance met (--tol 0.01)"), "%s", out);
    rc = th_run(out, sizeof out, "'%s' train --algo lbfgs --C 1 --reg l1 "
                "--epochs 2 --threads 2 '%s'", th_bin(), path);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "epoch limit reached (--epochs 2)"), "%s", out);
}
