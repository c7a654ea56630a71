/* newton: trust-region Newton against a dense Newton on a hand-sized
 * problem, against liblinear-train -s 0 and -s 2 on a9a and
 * news20.binary and -s 11 -p 0 (least squares) on abalone_scale, the same model bit for bit at 1, 2 and 3 threads, K
 * classes one-vs-rest on news20, and the options it refuses. */
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

/* ---- a problem small enough to solve by hand ----------------------------- */

/* 4 rows, 2 features and the bias: x = (x1, x2, 1). */
static const double X[4][3] = {
    { 1.0, 0.5, 1.0 }, { -0.5, 1.0, 1.0 }, { 0.25, -1.0, 1.0 },
    { 0.5, 0.125, 1.0 },
};
static const double Y[4] = { 1, -1, 1, -1 };
static const char SMALL[] = "+1 1:1 2:0.5\n"
                            "-1 1:-0.5 2:1\n"
                            "+1 1:0.25 2:-1\n"
                            "-1 1:0.5 2:0.125\n";

/* P(w) = 1/2 |w|^2 + C sum loss(y_i, w.x_i), its gradient and Hessian,
 * dense, in the test's own words. */
static double dense_p(hog_loss loss, double C, const double w[3],
                      double g[3], double H[3][3])
{
    double p = 0.5 * (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    for (int a = 0; a < 3; a++) {
        g[a] = w[a];
        for (int b = 0; b < 3; b++)
            H[a][b] = a == b;
    }
    for (int i = 0; i < 4; i++) {
        double m = w[0] * X[i][0] + w[1] * X[i][1] + w[2] * X[i][2];
        double l, d1, d2;
        if (loss == HOG_LOSS_LOGISTIC) {
            double s = 1.0 / (1.0 + exp(-Y[i] * m)); /* sigma(y m) */
            l = log(1.0 + exp(-Y[i] * m));
            d1 = -Y[i] * (1.0 - s);
            d2 = s * (1.0 - s);
        } else { /* squared: 1/2 (m - y)^2 */
            l = 0.5 * (m - Y[i]) * (m - Y[i]);
            d1 = m - Y[i];
            d2 = 1.0;
        }
        p += C * l;
        for (int a = 0; a < 3; a++) {
            g[a] += C * d1 * X[i][a];
            for (int b = 0; b < 3; b++)
                H[a][b] += C * d2 * X[i][a] * X[i][b];
        }
    }
    return p;
}

/* The minimum of P by plain Newton steps (Gaussian elimination on the 3 x 3
 * Hessian), to the last bit the iteration reaches. */
static double dense_newton(hog_loss loss, double C, double w[3])
{
    w[0] = w[1] = w[2] = 0.0;
    for (int it = 0; it < 50; it++) {
        double g[3], H[3][3];
        dense_p(loss, C, w, g, H);
        double A[3][4];
        for (int a = 0; a < 3; a++) {
            for (int b = 0; b < 3; b++)
                A[a][b] = H[a][b];
            A[a][3] = -g[a];
        }
        for (int c = 0; c < 3; c++)
            for (int a = c + 1; a < 3; a++) {
                double f = A[a][c] / A[c][c];
                for (int b = c; b < 4; b++)
                    A[a][b] -= f * A[c][b];
            }
        double s[3];
        for (int a = 2; a >= 0; a--) {
            double v = A[a][3];
            for (int b = a + 1; b < 3; b++)
                v -= A[a][b] * s[b];
            s[a] = v / A[a][a];
        }
        for (int a = 0; a < 3; a++)
            w[a] += s[a];
    }
    double g[3], H[3][3];
    return dense_p(loss, C, w, g, H);
}

static void small_case(hog_loss loss, double C)
{
    char dir[512];
    th_tmpdir(dir, sizeof dir);
    hog_data *d = th_load(th_write(dir, "small.svm", SMALL, strlen(SMALL)));
    double l2 = 1.0 / (C * 4.0);
    hog_train_opts o =
        th_solver_opts(HOG_ALGO_NEWTON, loss, 0.0, l2, 1, 1e-12);
    hog_model *m = th_train_ok(d, &o);
    const float *wf = hog_model_weights(m);
    double w[3] = { wf[0], wf[1], wf[2] }, g[3], H[3][3];
    double p = dense_p(loss, C, w, g, H);
    /* |g| at the optimum rounded to floats: at most |H| |w| 2^-24 */
    double gn = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]), hw = 0.0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            hw += fabs(H[a][b]) * fabs(w[b]);
    cr_assert_leq(gn, 2.0 * hw * ldexp(1.0, -24),
                  "|gradient| %g at hogtrain's solution (|H| |w| %g)", gn,
                  hw);
    double ref[3];
    double pref = dense_newton(loss, C, ref);
    cr_assert(fabs(p - pref) <= 1e-12 * pref,
              "objective %.17g, dense Newton's %.17g", p, pref);
    for (int a = 0; a < 3; a++)
        cr_assert(fabs(w[a] - ref[a]) <= 1e-6 * (1.0 + fabs(ref[a])),
                  "w[%d] = %.10g, dense Newton's %.10g", a, w[a], ref[a]);
    /* and the library's own objective is the one computed here */
    cr_assert(fabs(th_objective(m, d, loss, 0.0, l2).liblinear - p) <=
              1e-12 * p);
    hog_model_free(m);
    hog_data_free(d);
}

Test(newton, logistic_solves_a_hand_sized_problem)
{
    small_case(HOG_LOSS_LOGISTIC, 1.0);
    small_case(HOG_LOSS_LOGISTIC, 100.0);
}

Test(newton, least_squares_solves_a_hand_sized_problem)
{
    small_case(HOG_LOSS_SQUARED, 10.0);
}

/* ---- against LIBLINEAR ---------------------------------------------------- */

static void vs_liblinear(const char *name, hog_loss loss, int solver)
{
    TH_LIBLINEAR_OR_SKIP();
    TH_DATA_OR_SKIP(path, name);
    hog_data *d = th_load(path);
    double l2 = 1.0 / (double)hog_data_rows(d); /* C = 1 */
    hog_train_opts o = th_solver_opts(HOG_ALGO_NEWTON, loss, 0.0, l2, 2, 1e-4);
    hog_model *mine = th_train_ok(d, &o);
    hog_model *theirs = th_liblinear_model(path, solver, 1.0, "0.0001", NULL);
    double a = th_objective(mine, d, loss, 0.0, l2).liblinear,
           b = th_objective(theirs, d, loss, 0.0, l2).liblinear;
    cr_assert(fabs(a - b) <= 1e-6 * b,
              "%s, newton vs -s %d: hogtrain %.12g, LIBLINEAR %.12g "
              "(relative %.3g)", name, solver, a, b, fabs(a - b) / b);
    hog_model_free(mine);
    hog_model_free(theirs);
    hog_data_free(d);
}

Test(newton, logistic_reaches_liblinear_s0_on_a9a, .timeout = 60)
{
    vs_liblinear("a9a", HOG_LOSS_LOGISTIC, 0);
}

Test(newton, sqhinge_reaches_liblinear_s2_on_a9a, .timeout = 60)
{
    vs_liblinear("a9a", HOG_LOSS_SQHINGE, 2);
}

Test(newton, logistic_reaches_liblinear_s0_on_news20, .timeout = 120)
{
    TH_HEAVY_OR_SKIP();
    vs_liblinear("news20.binary.train.svm", HOG_LOSS_LOGISTIC, 0);
}

Test(newton, sqhinge_reaches_liblinear_s2_on_news20, .timeout = 120)
{
    TH_HEAVY_OR_SKIP();
    vs_liblinear("news20.binary.train.svm", HOG_LOSS_SQHINGE, 2);
}

/* LIBLINEAR -s 11 minimises 1/2 |w|^2 + C sum max(|y - w.x| - p, 0)^2:
 * with -p 0 least squares, its loss twice hogtrain's 1/2 (m - y)^2, so
 * its C is our 2 C: l2 = 1 / (2 C n). Its model's objective is checked
 * against that sum written out here, so that the scale is LIBLINEAR's and
 * not only the two models'. */
static double ll_svr_objective(const hog_model *m, const hog_data *d, double C)
{
    const float *w = hog_model_weights(m);
    uint64_t nf = hog_model_features(m);
    double f = 0.0;
    for (uint64_t j = 0; j <= nf; j++)
        f += 0.5 * (double)w[j] * (double)w[j];
    for (uint64_t i = 0; i < d->m.rows; i++) {
        double z = (double)w[nf]; /* -B 1 */
        for (uint64_t p = d->m.off[i]; p < d->m.off[i + 1]; p++)
            z += (double)w[d->m.idx[p]] * (double)d->m.val[p];
        double r = (double)d->m.y[i] - z;
        f += C * r * r;
    }
    return f;
}

Test(newton, least_squares_reaches_liblinear_s11_on_abalone, .timeout = 60)
{
    TH_LIBLINEAR_OR_SKIP();
    TH_DATA_OR_SKIP(path, "abalone_scale");
    hog_data *d = th_load(path);
    double l2 = 1.0 / (2.0 * (double)hog_data_rows(d)); /* LIBLINEAR's C 1 */
    hog_train_opts o =
        th_solver_opts(HOG_ALGO_NEWTON, HOG_LOSS_SQUARED, 0.0, l2, 2, 1e-4);
    hog_model *mine = th_train_ok(d, &o);
    /* the helper pastes its eps into the command line: -p 0 rides along */
    hog_model *theirs = th_liblinear_model(path, 11, 1.0, "0.0001 -p 0",
                                           NULL);
    double a = th_objective(mine, d, HOG_LOSS_SQUARED, 0.0, l2).liblinear;
    double b = th_objective(theirs, d, HOG_LOSS_SQUARED, 0.0, l2).liblinear;
    double hand = ll_svr_objective(theirs, d, 1.0);
    cr_assert(fabs(b - hand) <= 1e-12 * hand,
              "LIBLINEAR's objective %.17g, by hand %.17g", b, hand);
    cr_assert(fabs(a - b) <= 1e-6 * b,
              "abalone_scale, newton squared vs -s 11 -p 0: hogtrain %.12g, "
              "LIBLINEAR %.12g (relative %.3g)", a, b, fabs(a - b) / b);
    hog_model_free(mine);
    hog_model_free(theirs);
    hog_data_free(d);
}

/* ---- the same bits at every thread count ----------------------------------- */

static void same_bits(const hog_model *a, const hog_model *b, uint64_t n,
                      const char *what)
{
    cr_assert(memcmp(hog_model_weights(a), hog_model_weights(b),
                     n * sizeof(float)) == 0,
              "%s: the weights differ", what);
}

/* Both losses at 1, 2 and 3 threads. a9a's 124 weights keep the vector
 * work on the caller; news20.binary's 1.35M run it on the pool in 83
 * ranges of HOG_NEWTON_VEC_RANGE (newton/vec.c). */
static void same_at_1_2_3(const char *name, double tol)
{
    TH_DATA_OR_SKIP(path, name);
    hog_data *d = th_load(path);
    uint64_t n = hog_data_features(d) + 1;
    double l2 = 1.0 / (double)hog_data_rows(d);
    for (int k = 0; k < 2; k++) {
        hog_loss loss = k ? HOG_LOSS_SQHINGE : HOG_LOSS_LOGISTIC;
        hog_train_opts o =
            th_solver_opts(HOG_ALGO_NEWTON, loss, 0.0, l2, 1, tol);
        hog_model *one = th_train_ok(d, &o);
        for (unsigned t = 2; t <= 3; t++) {
            o.threads = t;
            hog_model *m = th_train_ok(d, &o);
            char what[96];
            snprintf(what, sizeof what, "%s, %s, %u threads", name,
                     hog_loss_name(loss), t);
            same_bits(one, m, n, what);
            hog_model_free(m);
        }
        hog_model_free(one);
    }
    hog_data_free(d);
}

Test(newton, the_model_is_the_same_at_1_2_and_3_threads, .timeout = 60)
{
    same_at_1_2_3("a9a", 1e-4);
}

Test(newton, news20_vectors_on_the_pool_give_the_same_bits, .timeout = 240)
{
    TH_HEAVY_OR_SKIP();
    same_at_1_2_3("news20.binary.train.svm", 1e-3);
}

/* K classes: news20 (20 classes) one-vs-rest, the classes spread over the
 * threads; each class's solve runs on one thread whichever class it is,
 * so 1 and 2 threads give the same model. Accuracy against LIBLINEAR's
 * -s 1 at C = 1 (the same problem as -s 2, sqhinge with L2; 86.26%,
 * tests/test_multiclass.c), within half a point. */
Test(newton, news20_ovr_is_the_same_at_1_and_2_threads, .timeout = 240)
{
    TH_HEAVY_OR_SKIP();
    TH_DATA_OR_SKIP(trp, "news20.train.svm");
    TH_DATA_OR_SKIP(tep, "news20.test.svm");
    hog_data *tr = th_load(trp);
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    lo.n_features = hog_data_features(tr);
    hog_data *te = NULL;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_data_load(tep, &lo, &te, &err), HOG_OK, "%s", err.msg);
    hog_train_opts o =
        th_solver_opts(HOG_ALGO_NEWTON, HOG_LOSS_SQHINGE, 0.0,
                       1.0 / (double)hog_data_rows(tr), 1, 0.01);
    hog_model *one = th_train_ok(tr, &o);
    o.threads = 2;
    hog_model *two = th_train_ok(tr, &o);
    const double *labels;
    unsigned k = hog_model_classes(one, &labels);
    cr_assert_eq(k, 20);
    same_bits(one, two, (uint64_t)k * (hog_data_features(tr) + 1),
              "news20, one-vs-rest");
    double *pred = malloc(te->m.rows * sizeof *pred);
    cr_assert_eq(hog_model_predict(two, te, pred, &err), HOG_OK, "%s",
                 err.msg);
    uint64_t right = 0;
    for (uint64_t i = 0; i < te->m.rows; i++)
        right += pred[i] == (double)te->m.y[i];
    free(pred);
    double acc = 100.0 * (double)right / (double)te->m.rows;
    cr_assert_geq(acc, 86.26 - 0.5, "%.2f%%", acc);
    hog_model_free(one);
    hog_model_free(two);
    hog_data_free(tr);
    hog_data_free(te);
}

/* ---- what it refuses -------------------------------------------------------- */

Test(newton, options_that_do_not_apply_are_refused)
{
    char dir[512];
    th_tmpdir(dir, sizeof dir);
    hog_data *d = th_load(th_write(dir, "small.svm", SMALL, strlen(SMALL)));
    hog_model *m = NULL;
    hog_err err = { { 0 } };
    hog_train_opts o =
        th_solver_opts(HOG_ALGO_NEWTON, HOG_LOSS_LOGISTIC, 0.0, 0.1, 1, 0.01);
    o.l1 = 0.01;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "--algo newton solves L2-regularized problems "
                              "only") && strstr(err.msg, "--algo scd"),
              "%s", err.msg);
    o = th_solver_opts(HOG_ALGO_NEWTON, HOG_LOSS_HINGE, 0.0, 0.1, 1, 0.01);
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "--algo dcd"), "%s", err.msg);
    o = th_solver_opts(HOG_ALGO_NEWTON, HOG_LOSS_LOGISTIC, 0.0, 0.0, 1, 0.01);
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "needs l2 > 0"), "%s", err.msg);
    o = th_solver_opts(HOG_ALGO_NEWTON, HOG_LOSS_LOGISTIC, 0.0, 0.1, 1, 0.01);
    o.update = HOG_UPDATE_ATOMIC;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "--update applies to --algo"), "%s", err.msg);
    hog_data_free(d);

    /* the command: the same sentence for --l1, and step-size options */
    const char *path = th_write(dir, "c.svm", SMALL, strlen(SMALL));
    char out[4096];
    int rc = th_run(out, sizeof out, "'%s' train --algo newton --l1 0.01 '%s'",
                    th_bin(), path);
    cr_assert_neq(rc, 0, "%s", out);
    cr_assert(strstr(out, "for L1 use --algo scd"), "%s", out);
    static const char *const step[] = { "--schedule constant", "--eta 0.1",
                                        "--schedule invscaling --power 0.5" };
    for (size_t i = 0; i < sizeof step / sizeof *step; i++) {
        rc = th_run(out, sizeof out, "'%s' train --algo newton %s '%s'",
                    th_bin(), step[i], path);
        cr_assert_eq(rc, 2, "%s: %s", step[i], out);
        cr_assert(strstr(out, "--algo newton takes no step size"), "%s: %s",
                  step[i], out);
    }
}

/* The command says what ended the run, as for scd and dcd. */
Test(newton, the_command_says_why_it_stopped, .timeout = 60)
{
    TH_DATA_OR_SKIP(path, "a9a");
    char out[8192];
    int rc = th_run(out, sizeof out, "'%s' train --algo newton --C 1 '%s'",
                    th_bin(), path);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "tolerance met (--tol 0.01)"), "%s", out);
    rc = th_run(out, sizeof out, "'%s' train --algo newton --C 1 --epochs 2 "
                "--threads 2 '%s'", th_bin(), path);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "epoch limit reached (--epochs 2)"), "%s", out);
}
