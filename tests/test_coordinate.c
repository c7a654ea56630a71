/* coordinate: the CSC transpose, dual coordinate descent against
 * liblinear-train -s 3, -s 1, -s 7, primal L1 coordinate descent against
 * -s 6, Lasso support recovery on planted data, the lambda <-> C mapping,
 * determinism, and (suite threads) 2 and 4 workers reaching the one-worker
 * objective. */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinate/coordinate.h"
#include "core/core.h"
#include "helpers.h"
#include "synth.h"
#include "io/io.h"
#include "train/train.h"

/* ---- helpers --------------------------------------------------------------- */

static bool have_liblinear(void)
{
    char out[256];
    return th_run(out, sizeof out, "command -v liblinear-train") == 0;
}

#define LIBLINEAR_OR_SKIP()                                                    \
    if (!have_liblinear())                                                     \
    cr_skip_test("liblinear-train not installed (apt-get install "             \
                 "liblinear-tools); skipping")

static void assert_close(double mine, double theirs, double rel,
                         const char *what)
{
    cr_assert(fabs(mine - theirs) <= rel * fabs(theirs),
              "%s: hogtrain %.10g, LIBLINEAR %.10g (relative %.3g > %g)", what,
              mine, theirs, fabs(mine - theirs) / fabs(theirs), rel);
}

/* dcd at C against LIBLINEAR's solver on the same file; both objectives
 * computed by hog_objective_eval. */
static void dcd_vs_liblinear(const char *name, hog_loss loss, int solver,
                             double C, const char *eps, double tol)
{
    LIBLINEAR_OR_SKIP();
    const char *path = th_data(name);
    if (!path)
        cr_skip_test("real data file %s not found; skipping", name);
    hog_data *d = th_load(path);
    double l2 = 1.0 / (C * (double)hog_data_rows(d));
    hog_train_opts o = th_solver_opts(HOG_ALGO_DCD, loss, 0, l2, 1, tol);
    hog_model *mine = th_train_ok(d, &o);
    hog_model *theirs = th_liblinear_model(path, solver, C, eps, NULL);
    double a = th_objective(mine, d, loss, 0, l2).value;
    double b = th_objective(theirs, d, loss, 0, l2).value;
    char what[128];
    snprintf(what, sizeof what, "%s, dcd vs -s %d at C = %g", name, solver, C);
    assert_close(a, b, 1e-3, what);
    hog_model_free(mine);
    hog_model_free(theirs);
    hog_data_free(d);
}

/* ---- the transpose ------------------------------------------------------------ */

static hog_data *random_csr(uint64_t rows, uint64_t nf, double density,
                            uint64_t seed)
{
    hog_err err = { { 0 } };
    hog_data *d = th_synth(&(struct th_synth){
        .rows = rows, .features = (uint32_t)nf, .layout = TH_SYNTH_COIN,
        .density = density, .seed = seed, .stream = 3, .coin_labels = true },
        &err);
    cr_assert(d, "%s", err.msg);
    return d;
}

Test(coordinate, csc_is_the_transpose_for_any_worker_count)
{
    hog_data *d = random_csr(301, 57, 0.1, 5);
    const struct hog_csr *m = &d->m;
    for (unsigned nt = 1; nt <= 3; nt++) {
        struct hog_coord_env env;
        hog_err err = { { 0 } };
        cr_assert_eq(hog_coord_env_open(nt, &env, &err), HOG_OK, "%s",
                     err.msg);
        struct hog_csc c;
        cr_assert_eq(hog_csc_build(env.pool, m, d->n_features, 2.5, &c, &err),
                     HOG_OK, "%s", err.msg);
        cr_assert_eq(c.cols, d->n_features + 1);
        cr_assert_eq(c.nnz, m->nnz + m->rows);
        /* Every CSR entry is found in its column; columns ascend by row. */
        uint64_t *seen = calloc(c.cols, sizeof *seen);
        for (uint64_t i = 0; i < m->rows; i++) {
            struct hog_row r = hog_csr_row(m, i);
            for (uint32_t k = 0; k < r.nnz; k++) {
                uint32_t j = r.idx[k];
                uint64_t at = c.off[j] + seen[j]++;
                cr_assert_lt(at, c.off[j + 1]);
                cr_assert_eq(c.row[at], i, "column %u entry %llu", j,
                             (unsigned long long)seen[j]);
                cr_assert_eq(c.val[at], r.val[k]);
            }
        }
        for (uint64_t j = 0; j < d->n_features; j++)
            cr_assert_eq(seen[j], c.off[j + 1] - c.off[j]);
        /* The bias column: every row, value 2.5. */
        uint64_t b = d->n_features;
        cr_assert_eq(c.off[b + 1] - c.off[b], m->rows);
        for (uint64_t i = 0; i < m->rows; i++) {
            cr_assert_eq(c.row[c.off[b] + i], i);
            cr_assert_eq(c.val[c.off[b] + i], 2.5f);
        }
        cr_assert_gt(c.bytes, 0);
        free(seen);
        hog_csc_free(&c);
        hog_coord_env_close(&env);
    }
    hog_data_free(d);
}

/* ---- options -------------------------------------------------------------------- */

Test(coordinate, options_that_do_not_apply_are_refused)
{
    hog_data *d = random_csr(50, 10, 0.3, 1);
    hog_err err = { { 0 } };
    hog_model *m = NULL;
    struct {
        hog_algo algo;
        hog_loss loss;
        double l1, l2;
        hog_update update;
        const char *says;
    } bad[] = {
        { HOG_ALGO_DCD, HOG_LOSS_SQUARED, 0, 1e-3, HOG_UPDATE_NONE, "squared" },
        { HOG_ALGO_DCD, HOG_LOSS_HINGE, 1e-3, 1e-3, HOG_UPDATE_NONE, "L2-regularized" },
        { HOG_ALGO_DCD, HOG_LOSS_HINGE, 0, 0, HOG_UPDATE_NONE, "l2 > 0" },
        { HOG_ALGO_DCD, HOG_LOSS_HINGE, 0, 1e-3, HOG_UPDATE_MUTEX, "mutex" },
        { HOG_ALGO_SCD, HOG_LOSS_HINGE, 1e-3, 0, HOG_UPDATE_NONE, "hinge" },
        { HOG_ALGO_SCD, HOG_LOSS_SQUARED, 1e-3, 0, HOG_UPDATE_ATOMIC, "--update" },
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        hog_train_opts o = th_solver_opts(bad[k].algo, bad[k].loss, bad[k].l1,
                                          bad[k].l2, 1, 0.01);
        o.update = bad[k].update;
        cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL, "case %zu",
                     k);
        cr_assert_null(m);
        cr_assert(strstr(err.msg, bad[k].says), "case %zu: %s", k, err.msg);
    }
    hog_train_opts o =
        th_solver_opts(HOG_ALGO_DCD, HOG_LOSS_HINGE, 0, 1e-3, 1, -1.0);
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "option tol"), "%s", err.msg);
    hog_data_free(d);
}

/* ---- dcd against LIBLINEAR ------------------------------------------------------- */

Test(coordinate, dcd_hinge_reaches_liblinear_s3_on_a9a, .timeout = 60)
{
    /* a9a's hinge dual is LIBLINEAR's hard case: both run 1000 epochs. */
    dcd_vs_liblinear("a9a", HOG_LOSS_HINGE, 3, 1.0, "0.0001", 0.001);
}

Test(coordinate, dcd_hinge_reaches_liblinear_s3_on_news20, .timeout = 60)
{
    /* C = 0.1: at C = 1 liblinear-train needs 666 iterations for -e 0.001
     * (a9a covers C = 1). */
    dcd_vs_liblinear("news20.binary.train.svm", HOG_LOSS_HINGE, 3, 0.1,
                     "0.001", 0.001);
}

Test(coordinate, dcd_sqhinge_reaches_liblinear_s1_on_news20, .timeout = 60)
{
    dcd_vs_liblinear("news20.binary.train.svm", HOG_LOSS_SQHINGE, 1, 1.0,
                     "0.0001", 0.001);
}

Test(coordinate, dcd_logistic_reaches_liblinear_s7_on_news20, .timeout = 60)
{
    dcd_vs_liblinear("news20.binary.train.svm", HOG_LOSS_LOGISTIC, 7, 1.0,
                     "0.0001", 0.001);
}

/* ---- scd against LIBLINEAR -s 6 ----------------------------------------------------- */

Test(coordinate, scd_l1_logistic_reaches_liblinear_s6_on_reuters, .timeout = 60)
{
    LIBLINEAR_OR_SKIP();
    TH_DATA_OR_SKIP(path, "reuters_moneyfx.trn");
    hog_data *d = th_load(path);
    double C = 1.0, l1 = 1.0 / (C * (double)hog_data_rows(d));
    hog_train_opts o =
        th_solver_opts(HOG_ALGO_SCD, HOG_LOSS_LOGISTIC, l1, 0, 1, 1e-3);
    hog_model *mine = th_train_ok(d, &o);
    hog_model *theirs = th_liblinear_model(path, 6, C, "0.0001", NULL);
    double a = th_objective(mine, d, HOG_LOSS_LOGISTIC, l1, 0).value;
    double b = th_objective(theirs, d, HOG_LOSS_LOGISTIC, l1, 0).value;
    assert_close(a, b, 1e-3, "reuters_moneyfx, scd vs -s 6 at C = 1");
    /* L1 keeps the model sparse, like LIBLINEAR's. */
    struct hog_objective ob;
    hog_err err = { { 0 } };
    hog_objective_eval(mine, d, HOG_LOSS_LOGISTIC, l1, 0, &ob, &err);
    cr_assert_lt(ob.nonzeros, hog_data_features(d) / 20,
                 "%llu nonzero weights", (unsigned long long)ob.nonzeros);
    hog_model_free(mine);
    hog_model_free(theirs);
    hog_data_free(d);
}

Test(coordinate, scd_ridge_reaches_liblinear_s11_on_abalone, .timeout = 60)
{
    /* -s 11 -p 0 minimises 1/2 |w|^2 + C sum (y - w.x)^2; our squared loss
     * is half of that, so l2 = 1 / (2 C n). */
    LIBLINEAR_OR_SKIP();
    TH_DATA_OR_SKIP(path, "abalone_scale");
    hog_data *d = th_load(path);
    double C = 0.1, l2 = 1.0 / (2 * C * (double)hog_data_rows(d));
    hog_train_opts o =
        th_solver_opts(HOG_ALGO_SCD, HOG_LOSS_SQUARED, 0, l2, 1, 1e-6);
    hog_model *mine = th_train_ok(d, &o);
    char dir[512], mp[700], out[4096];
    th_tmpdir(dir, sizeof dir);
    snprintf(mp, sizeof mp, "%s/svr.model", dir);
    cr_assert_eq(th_run(out, sizeof out,
                        "liblinear-train -s 11 -p 0 -c %g -e 0.00001 -B 1 "
                        "-q '%s' '%s'",
                        C, path, mp),
                 0, "%s", out);
    hog_model *theirs = NULL;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_model_load(mp, &theirs, &err), HOG_OK, "%s", err.msg);
    double a = th_objective(mine, d, HOG_LOSS_SQUARED, 0, l2).value;
    double b = th_objective(theirs, d, HOG_LOSS_SQUARED, 0, l2).value;
    assert_close(a, b, 1e-3, "abalone_scale, scd ridge vs -s 11 -p 0");
    hog_model_free(mine);
    hog_model_free(theirs);
    hog_data_free(d);
}

/* ---- lambda <-> C ----------------------------------------------------------------- */

Test(coordinate, liblinear_objective_is_ours_over_l2_at_c_n, .timeout = 60)
{
    /* LIBLINEAR's dual solvers print their objective; at convergence it
     * equals the primal 1/2 |w|^2 + C sum loss, which hog_objective_eval
     * computes as F / l2 with l2 = 1 / (C n). */
    LIBLINEAR_OR_SKIP();
    TH_DATA_OR_SKIP(path, "reuters_moneyfx.trn");
    hog_data *d = th_load(path);
    double C = 0.5, printed;
    hog_model *theirs = th_liblinear_model(path, 7, C, "0.00001", &printed);
    cr_assert(isfinite(printed), "LIBLINEAR printed no objective");
    double l2 = 1.0 / (C * (double)hog_data_rows(d));
    struct hog_objective ob;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_objective_eval(theirs, d, HOG_LOSS_LOGISTIC, 0, l2, &ob,
                                    &err),
                 HOG_OK, "%s", err.msg);
    cr_assert_float_eq(ob.C, C, 1e-12);
    cr_assert_float_eq(ob.liblinear, ob.value / l2, 1e-9 * ob.liblinear);
    assert_close(ob.liblinear, fabs(printed), 1e-4,
                 "LIBLINEAR -s 7's printed objective");
    hog_model_free(theirs);
    hog_data_free(d);
}

/* ---- Lasso on planted data ----------------------------------------------------------- */

Test(coordinate, lasso_recovers_the_planted_support, .timeout = 60)
{
    struct hog_gen_opts g;
    hog_gen_opts_init(&g);
    g.rows = 20000;
    g.features = 200;
    g.nnz_per_row = 40;
    g.zipf = 0.0;
    g.regression = true;
    g.label_noise = 0.1;
    g.density_true = 0.1;
    g.seed = 11;
    char dir[512], path[700];
    th_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/lasso.svm", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    hog_err err = { { 0 } };
    cr_assert_eq(hog_gen_write(&g, f, &err), HOG_OK, "%s", err.msg);
    fclose(f);
    hog_model *planted = NULL;
    cr_assert_eq(hog_gen_model(&g, &planted, &err), HOG_OK, "%s", err.msg);
    hog_data *d = th_load(path);

    hog_train_opts o =
        th_solver_opts(HOG_ALGO_SCD, HOG_LOSS_SQUARED, 2e-3, 0, 1, 1e-4);
    hog_model *m = th_train_ok(d, &o);
    uint64_t nf = hog_data_features(d), in = 0, missed = 0, extra = 0;
    for (uint64_t j = 0; j < nf && j < planted->n_features; j++) {
        bool truth = planted->w[j] != 0.0f, found = m->w[j] != 0.0f;
        in += truth;
        missed += truth && !found;
        extra += !truth && found;
    }
    cr_assert_gt(in, 5, "the planted model has %llu nonzero weights",
                 (unsigned long long)in);
    cr_assert_eq(missed, 0, "%llu of %llu planted weights not found",
                 (unsigned long long)missed, (unsigned long long)in);
    cr_assert_eq(extra, 0, "%llu weights outside the planted support",
                 (unsigned long long)extra);
    hog_model_free(m);
    hog_model_free(planted);
    hog_data_free(d);
}

/* ---- determinism ------------------------------------------------------------------ */

Test(coordinate, one_worker_is_deterministic_given_the_seed)
{
    hog_data *d = random_csr(400, 60, 0.1, 9);
    struct {
        hog_algo algo;
        hog_loss loss;
        double l1, l2;
    } cases[] = {
        { HOG_ALGO_DCD, HOG_LOSS_HINGE, 0, 1e-3 },
        { HOG_ALGO_DCD, HOG_LOSS_LOGISTIC, 0, 1e-3 },
        { HOG_ALGO_SCD, HOG_LOSS_LOGISTIC, 1e-3, 1e-4 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        hog_train_opts o = th_solver_opts(cases[k].algo, cases[k].loss,
                                          cases[k].l1, cases[k].l2, 1, 0);
        o.epochs = 3;
        o.seed = 42;
        hog_model *a = th_train_ok(d, &o), *b = th_train_ok(d, &o);
        size_t nw = hog_data_features(d) + 1;
        cr_assert(memcmp(a->w, b->w, nw * sizeof(float)) == 0, "case %zu",
                  k);
        o.seed = 43;
        hog_model *c = th_train_ok(d, &o);
        cr_assert(memcmp(a->w, c->w, nw * sizeof(float)) != 0,
                  "case %zu: another seed, the same weights", k);
        hog_model_free(a);
        hog_model_free(b);
        hog_model_free(c);
    }
    hog_data_free(d);
}

/* ---- the front door's report ---------------------------------------------------------- */

struct seen {
    unsigned epochs;
    double last_gap, last_obj;
    uint64_t aux;
};

static void record(void *ctx, unsigned epoch, unsigned epochs, uint64_t done,
                   uint64_t total, const hog_epoch_stats *s)
{
    (void)epoch, (void)epochs, (void)done, (void)total;
    struct seen *v = ctx;
    if (!s)
        return;
    v->epochs++;
    v->last_gap = s->gap;
    v->last_obj = s->objective;
    v->aux = s->aux_bytes;
}

Test(coordinate, dcd_reports_the_gap_and_stops_on_tol)
{
    hog_data *d = random_csr(500, 40, 0.2, 4);
    struct seen v = { 0, NAN, NAN, 0 };
    hog_train_opts o =
        th_solver_opts(HOG_ALGO_DCD, HOG_LOSS_SQHINGE, 0, 1e-2, 1, 1e-6);
    hog_train_hooks hk = { .size = sizeof hk };
    hk.progress = record;
    hk.progress_ctx = &v;
    hog_model *m = th_train_hooked(d, &o, &hk);
    cr_assert_lt(v.epochs, 1000, "tol 1e-6 never stopped training");
    cr_assert(isfinite(v.last_gap) && v.last_gap >= -1e-9 &&
                  v.last_gap < 1e-6,
              "gap %g at the end", v.last_gap);
    cr_assert_gt(v.aux, 0);
    /* tol 0 runs every epoch. */
    struct seen w = { 0, NAN, NAN, 0 };
    o.tol = 0;
    o.epochs = 7;
    hk.progress_ctx = &w;
    hog_model *m2 = th_train_hooked(d, &o, &hk);
    cr_assert_eq(w.epochs, 7);
    hog_model_free(m);
    hog_model_free(m2);
    hog_data_free(d);
}

Test(coordinate, scd_reports_nan_gap_and_column_memory)
{
    hog_data *d = random_csr(300, 30, 0.2, 6);
    struct seen v = { 0, 0.0, NAN, 0 };
    hog_train_opts o =
        th_solver_opts(HOG_ALGO_SCD, HOG_LOSS_LOGISTIC, 1e-3, 0, 1, 1e-3);
    hog_train_hooks hk = { .size = sizeof hk };
    hk.progress = record;
    hk.progress_ctx = &v;
    hog_model *m = th_train_hooked(d, &o, &hk);
    cr_assert(isnan(v.last_gap));
    /* At least the column copy: values and row ids of every nonzero. */
    cr_assert_geq(v.aux, d->m.nnz * 8);
    hog_model_free(m);
    hog_data_free(d);
}

/* Every epoch's stats, for the metrics_every tests. */
struct hist {
    unsigned n;
    hog_epoch_stats s[64];
};

static void keep(void *ctx, unsigned epoch, unsigned epochs, uint64_t done,
                 uint64_t total, const hog_epoch_stats *s)
{
    (void)epoch, (void)epochs, (void)done, (void)total;
    struct hist *h = ctx;
    if (s && h->n < 64)
        h->s[h->n++] = *s;
}

/* The objective scd and dcd keep from their own state equals the front
 * door's pass over the data (float weights: 1e-5), on every epoch; the
 * accuracy and AUC come every metrics_every-th epoch and after the last. */
Test(coordinate, metrics_every_and_the_solvers_own_objective)
{
    hog_data *d = random_csr(400, 50, 0.15, 12);
    struct {
        hog_algo algo;
        hog_loss loss;
        double l1, l2;
    } cases[] = {
        { HOG_ALGO_SCD, HOG_LOSS_LOGISTIC, 2e-3, 0 },
        { HOG_ALGO_SCD, HOG_LOSS_SQUARED, 1e-3, 1e-3 },
        { HOG_ALGO_DCD, HOG_LOSS_HINGE, 0, 1e-2 },
        { HOG_ALGO_DCD, HOG_LOSS_LOGISTIC, 0, 1e-2 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        hog_train_opts o = th_solver_opts(cases[k].algo, cases[k].loss,
                                          cases[k].l1, cases[k].l2, 1, 0);
        o.epochs = 7;
        o.update = cases[k].algo == HOG_ALGO_DCD ? HOG_UPDATE_ATOMIC
                                                 : HOG_UPDATE_NONE;
        hog_train_hooks hk = { .size = sizeof hk };
        hk.progress = keep;
        struct hist full = { 0 }, cheap = { 0 }, every3 = { 0 };
        o.metrics_every = 1;
        hk.progress_ctx = &full;
        hog_model *a = th_train_hooked(d, &o, &hk);
        o.metrics_every = 0;
        hk.progress_ctx = &cheap;
        hog_model *b = th_train_hooked(d, &o, &hk);
        o.metrics_every = 3;
        hk.progress_ctx = &every3;
        hog_model *c = th_train_hooked(d, &o, &hk);
        cr_assert_eq(full.n, 7, "case %zu", k);
        cr_assert_eq(cheap.n, 7, "case %zu", k);
        cr_assert_eq(every3.n, 7, "case %zu", k);
        bool reg = cases[k].loss == HOG_LOSS_SQUARED;
        for (unsigned e = 0; e < 7; e++) {
            double f = full.s[e].objective, g = cheap.s[e].objective;
            cr_assert(isfinite(g) && fabs(f - g) <= 1e-5 * fabs(f),
                      "case %zu epoch %u: kept %.10g, pass %.10g", k, e + 1,
                      g, f);
            cr_assert(fabs(full.s[e].train_loss - cheap.s[e].train_loss) <=
                          1e-5 * fabs(full.s[e].train_loss),
                      "case %zu epoch %u: loss", k, e + 1);
            double acc_full = reg ? full.s[e].train_rmse
                                  : full.s[e].train_accuracy;
            cr_assert(isfinite(acc_full), "case %zu epoch %u", k, e + 1);
            bool last = e == 6;
            if (!reg) {
                cr_assert_eq(isfinite(cheap.s[e].train_accuracy), last,
                             "case %zu epoch %u: accuracy", k, e + 1);
                cr_assert_eq(isfinite(cheap.s[e].train_auc), last,
                             "case %zu epoch %u: AUC", k, e + 1);
                cr_assert_eq(isfinite(every3.s[e].train_accuracy),
                             last || (e + 1) % 3 == 0, "case %zu epoch %u",
                             k, e + 1);
            } else { /* RMSE from the kept loss on every epoch */
                cr_assert(fabs(cheap.s[e].train_rmse - acc_full) <=
                              1e-5 * acc_full,
                          "case %zu epoch %u: RMSE", k, e + 1);
            }
        }
        /* The metrics change what is reported, not what is trained. */
        size_t nw = hog_data_features(d) + 1;
        cr_assert(memcmp(a->w, b->w, nw * sizeof(float)) == 0, "case %zu", k);
        cr_assert(memcmp(a->w, c->w, nw * sizeof(float)) == 0, "case %zu", k);
        hog_model_free(a);
        hog_model_free(b);
        hog_model_free(c);
    }
    hog_data_free(d);
}

/* ---- the command ---------------------------------------------------------------------- */

Test(coordinate, cli_objective_and_tol, .timeout = 60)
{
    TH_DATA_OR_SKIP(path, "reuters_moneyfx.trn");
    char dir[512], out[16384];
    th_tmpdir(dir, sizeof dir);
    int rc = th_run(out, sizeof out,
                    "'%s' train -q --algo dcd --loss logistic --l2 0.0001 "
                    "--tol 0.001 -o '%s/m.hgm' '%s'",
                    th_bin(), dir, path);
    cr_assert_eq(rc, 0, "%s", out);
    rc = th_run(out, sizeof out, "'%s' objective -q '%s/m.hgm' '%s'",
                th_bin(), dir, path);
    cr_assert_eq(rc, 0, "%s", out);
    const char *p = strstr(out, "objective ");
    cr_assert(p, "%s", out);
    double mine = strtod(p + 10, NULL);
    const char *c = strstr(out, "\nC ");
    cr_assert(c, "%s", out);
    cr_assert_float_eq(strtod(c + 3, NULL), 1.0 / (1e-4 * 7770), 1e-9);
    /* --C gives the same problem as --l2 = 1/(C n). */
    rc = th_run(out, sizeof out, "'%s' objective -q --C %.17g '%s/m.hgm' '%s'",
                th_bin(), 1.0 / (1e-4 * 7770), dir, path);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert_float_eq(strtod(strstr(out, "objective ") + 10, NULL), mine,
                       1e-9 * mine);
    /* --tol only for the coordinate methods. */
    rc = th_run(out, sizeof out, "'%s' train --tol 0.1 '%s'", th_bin(), path);
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert(strstr(out, "--tol applies"), "%s", out);
    /* --reg says what --C sets: alone it is a usage error. */
    rc = th_run(out, sizeof out, "'%s' objective -q --reg l1 '%s/m.hgm' '%s'",
                th_bin(), dir, path);
    cr_assert_eq(rc, 2, "%s", out);
    /* --metrics-every: every algorithm takes it (serial below, in
     * test_cli.c); recorded in --json, accuracy there on the K-th and last
     * epochs, null on the others. */
    rc = th_run(out, sizeof out,
                "'%s' train -q --algo scd --l1 0.0001 --l2 0 --tol 0 "
                "--epochs 5 --metrics-every 2 --json '%s/r.json' '%s' && "
                "python3 -c \"import json; j = json.load(open('%s/r.json')); "
                "print(j['options']['metrics_every'], [e['train_accuracy'] is "
                "not None for e in j['epochs']])\"",
                th_bin(), dir, path, dir);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "2 [False, True, False, True, True]"), "%s", out);
}

/* ---- threads ------------------------------------------------------------------------ */

static void threads_reach(const char *name, hog_algo algo, hog_loss loss,
                          double l1, double l2C, double tol)
{
    const char *path = th_data(name);
    if (!path)
        cr_skip_test("real data file %s not found; skipping", name);
    hog_data *d = th_load(path);
    double lam = 1.0 / (l2C * (double)hog_data_rows(d));
    double l2 = l1 > 0 ? 0.0 : lam;
    l1 = l1 > 0 ? lam : 0.0;
    hog_train_opts o = th_solver_opts(algo, loss, l1, l2, 1, tol);
    hog_model *one = th_train_ok(d, &o);
    double ref = th_objective(one, d, loss, l1, l2).value;
    hog_model_free(one);
    unsigned nts[] = { 2, 4 };
    hog_update ups[] = { HOG_UPDATE_NONE, HOG_UPDATE_ATOMIC };
    for (int t = 0; t < 2; t++)
        for (int u = 0; u < (algo == HOG_ALGO_DCD ? 2 : 1); u++) {
            o.threads = nts[t];
            o.update = ups[u];
            hog_model *m = th_train_ok(d, &o);
            double v = th_objective(m, d, loss, l1, l2).value;
            char what[160];
            snprintf(what, sizeof what, "%s, %u workers, update %d", name,
                     nts[t], (int)ups[u]);
            /* Wild loses adds on frequent features: PASSCoDe-Wild solves a
             * nearby problem (docs/COORDINATE.md). */
            assert_close(v, ref, ups[u] == HOG_UPDATE_NONE ? 1e-2 : 1e-3,
                         what);
            hog_model_free(m);
        }
    hog_data_free(d);
}

Test(threads, coord_dcd_workers_reach_the_serial_objective, .timeout = 120)
{
    /* Solved to 1e-3 (not LIBLINEAR's looser default) so that where an
     * asynchronous run stops depends on the problem, not on scheduling. */
    threads_reach("reuters_moneyfx.trn", HOG_ALGO_DCD, HOG_LOSS_HINGE, 0, 1.0,
                  1e-3);
}

/* PASSCoDe proper: reuters_moneyfx (348k nonzeros) runs on one worker
 * (hog_coord_threads_for), so the asynchronous dual workers are checked on
 * 40,000 generated rows x 100 columns (1.2M nonzeros, every row sharing
 * every column: the worst case for lost wild adds). */
Test(threads, coord_dcd_passcode_workers_reach_the_serial_objective,
     .timeout = 120)
{
    hog_data *d = random_csr(40000, 100, 0.3, 22);
    const hog_loss losses[] = { HOG_LOSS_HINGE, HOG_LOSS_LOGISTIC };
    const hog_update ups[] = { HOG_UPDATE_ATOMIC, HOG_UPDATE_NONE };
    for (int k = 0; k < 2; k++) {
        double l2 = 1e-3;
        hog_train_opts o =
            th_solver_opts(HOG_ALGO_DCD, losses[k], 0, l2, 1, 1e-3);
        hog_model *one = th_train_ok(d, &o);
        double ref = th_objective(one, d, losses[k], 0, l2).value;
        for (unsigned nt = 2; nt <= 4; nt += 2)
            for (int u = 0; u < 2; u++) {
                o.threads = nt;
                o.update = ups[u];
                hog_model *m = th_train_ok(d, &o);
                char what[96];
                snprintf(what, sizeof what, "generated, loss %d, %u workers, "
                         "update %d", (int)losses[k], nt, (int)ups[u]);
                assert_close(th_objective(m, d, losses[k], 0, l2).value, ref,
                             ups[u] == HOG_UPDATE_NONE ? 1e-2 : 1e-3, what);
                /* That the epochs ran on nt workers is the dispatch's
                 * rule, checked here; whether their model differs from
                 * one worker's depends on how the scheduler interleaved
                 * them (a starved worker makes the serial order), which
                 * no verdict may. */
                cr_assert_eq(hog_coord_threads_for(hog_data_nnz(d), nt), nt,
                             "%s: the problem runs on one worker", what);
                hog_model_free(m);
            }
        hog_model_free(one);
    }
    hog_data_free(d);
}

/* With more than one worker the duality gap is computed on the pool
 * (dcd.c gap_job; wild rebuilds sum a_i y_i x_i by CAS adds, atomic uses
 * w) and the bias adds are folded per worker: the reported objective is
 * still the model's, the gap still a bound that closes: below 1e-2 with
 * atomic adds; wild stops on a criterion computed from weights that lost
 * adds, so its gap ends near 1e-2 (0.010 to 0.017 in 2 of 6 runs here,
 * 2026-12-02, the rest below; docs/COORDINATE.md), held to 5e-2. */
Test(threads, coord_dcd_pool_gap_is_the_models, .timeout = 120)
{
    hog_data *d = random_csr(40000, 100, 0.3, 23);
    const hog_loss losses[] = { HOG_LOSS_SQHINGE, HOG_LOSS_LOGISTIC };
    const hog_update ups[] = { HOG_UPDATE_ATOMIC, HOG_UPDATE_NONE };
    for (int k = 0; k < 2; k++)
        for (int u = 0; u < 2; u++) {
            double l2 = 1e-3;
            hog_train_opts o =
                th_solver_opts(HOG_ALGO_DCD, losses[k], 0, l2, 1, 1e-3);
            struct seen v = { 0, NAN, NAN, 0 };
            o.threads = 2;
            o.update = ups[u];
            hog_train_hooks hk = { .size = sizeof hk };
            hk.progress = record;
            hk.progress_ctx = &v;
            hog_model *m = th_train_hooked(d, &o, &hk);
            char what[96];
            snprintf(what, sizeof what, "loss %d, update %d", (int)losses[k],
                     (int)ups[u]);
            assert_close(v.last_obj,
                         th_objective(m, d, losses[k], 0, l2).value, 1e-5,
                         what);
            double bound = ups[u] == HOG_UPDATE_NONE ? 5e-2 : 1e-2;
            cr_assert(isfinite(v.last_gap) && v.last_gap >= -1e-9 &&
                          v.last_gap < bound,
                      "%s: gap %g at the end (bound %g)", what, v.last_gap,
                      bound);
            hog_model_free(m);
        }
    hog_data_free(d);
}

Test(threads, coord_scd_workers_reach_the_serial_objective, .timeout = 120)
{
    threads_reach("reuters_moneyfx.trn", HOG_ALGO_SCD, HOG_LOSS_LOGISTIC, 1,
                  1.0, 1e-3);
}

/* Shotgun proper: an epoch runs on all workers only when each has 256k
 * nonzeros of active columns (SCD_PAR_NNZ), which L1's small active sets on
 * reuters_moneyfx do not reach. Here 40,000 rows x 100 dense-ish columns
 * (1.2M nonzeros, every row in every worker's columns: compare-and-swap
 * contention on every margin) keep 2 and 4 workers busy in every epoch. */
Test(threads, coord_scd_shotgun_workers_reach_the_serial_objective,
     .timeout = 120)
{
    hog_data *d = random_csr(40000, 100, 0.3, 21);
    const hog_loss losses[] = { HOG_LOSS_LOGISTIC, HOG_LOSS_SQUARED };
    for (int k = 0; k < 2; k++) {
        double l1 = 1e-3;
        hog_train_opts o =
            th_solver_opts(HOG_ALGO_SCD, losses[k], l1, 0, 1, 1e-4);
        hog_model *one = th_train_ok(d, &o);
        double ref = th_objective(one, d, losses[k], l1, 0).value;
        for (unsigned nt = 2; nt <= 4; nt += 2) {
            o.threads = nt;
            hog_model *m = th_train_ok(d, &o);
            char what[96];
            snprintf(what, sizeof what, "generated, loss %d, %u workers",
                     (int)losses[k], nt);
            assert_close(th_objective(m, d, losses[k], l1, 0).value, ref, 1e-3,
                         what);
            /* The first epoch (every column active) runs on nt workers by
             * the dispatch's rules, checked here; whether the model then
             * differs from one worker's depends on the scheduler's
             * interleaving, which no verdict may. */
            cr_assert(hog_coord_threads_for(hog_data_nnz(d), nt) == nt &&
                          hog_data_nnz(d) >= (uint64_t)HOG_COORD_PAR_NNZ * nt,
                      "%s: an epoch of every column runs on one worker", what);
            hog_model_free(m);
        }
        hog_model_free(one);
    }
    hog_data_free(d);
}
