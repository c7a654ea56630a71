/* sgd: the lazy kernel equals the eager dense update; determinism; options;
 * metrics; accuracy on real data against LIBLINEAR. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/loss.h"
#include "core/metrics.h"
#include "core/sgd.h"
#include "helpers.h"
#include "synth.h"
#include "train/train.h"

/* A random sparse problem: each entry present with probability density,
 * values normal; labels from a planted model (+1/-1, or real targets). */
static hog_data *synth(uint64_t rows, uint64_t nf, double density,
                       bool regression, uint64_t seed)
{
    hog_err err = { { 0 } };
    hog_data *d = th_synth(&(struct th_synth){
        .rows = rows, .features = (uint32_t)nf, .layout = TH_SYNTH_COIN,
        .density = density, .seed = seed, .stream = 7,
        .period = 2, .first = { .normal = true }, /* odd features: no signal */
        .offset = 0.3, .noise = 0.5, .regression = regression }, &err);
    cr_assert(d, "%s", err.msg);
    return d;
}

/* The eager reference: every weight regularized at every step, O(features)
 * per step, in double precision; same permutation as the serial trainer.
 * prog, when not NULL, gets each epoch's progressive mean loss and
 * accuracy (prog[2e], prog[2e + 1]): each row's loss at the margin it had
 * just before its own step. */
static double *eager_train(const hog_data *d, const hog_train_opts *o,
                           double *prog)
{
    uint64_t n = d->m.rows, nf = d->n_features;
    uint64_t nw = nf + (o->bias != 0);
    double *w = calloc(nw, sizeof *w), *g2 = calloc(nw, sizeof *g2);
    double *g = calloc(nw, sizeof *g);
    struct hog_rng rng;
    uint64_t *order = th_serial_order(n, o->seed, &rng);
    uint64_t t = 0;
    for (unsigned e = 0; e < o->epochs; e++) {
        hog_shuffle_u64(&rng, order, n);
        double loss = 0, right = 0;
        for (uint64_t i = 0; i < n; i++, t++) {
            struct hog_row r = hog_csr_row(&d->m, order[i]);
            double y = o->loss == HOG_LOSS_SQUARED ? r.y
                       : hog_label_positive(d, r.y) ? 1.0
                                                    : -1.0;
            double m = o->bias != 0 ? w[nf] * o->bias : 0.0;
            for (uint32_t k = 0; k < r.nnz; k++)
                m += w[r.idx[k]] * (double)(float)r.val[k];
            double dl = hog_loss_deriv(o->loss, 0.0, y, m);
            loss += hog_loss_value(o->loss, 0.0, y, m);
            right += (m > 0) == (y > 0);
            memset(g, 0, nw * sizeof *g);
            for (uint32_t k = 0; k < r.nnz; k++)
                g[r.idx[k]] = dl * r.val[k];
            if (o->bias != 0)
                g[nf] = dl * o->bias;
            for (uint64_t j = 0; j < nw; j++) {
                double eta;
                if (o->schedule == HOG_SCHED_ADAGRAD) {
                    g2[j] += g[j] * g[j];
                    eta = o->eta / sqrt(HOG_ADAGRAD_EPS + g2[j]);
                } else {
                    eta = th_sgd_eta(o, t, n);
                }
                double a = fmin(1.0, eta * o->l2);
                w[j] = th_soft((1 - a) * w[j] - eta * g[j], eta * o->l1);
            }
        }
        if (prog)
            prog[2 * e] = loss / (double)n, prog[2 * e + 1] = right / (double)n;
    }
    free(g2), free(g), free(order);
    return w;
}

/* Returns how many weights ended exactly at zero. */
static int assert_lazy_equals_eager(hog_loss loss, hog_schedule sched,
                                     double l1, double l2, double eta,
                                     uint64_t rows, unsigned epochs)
{
    hog_data *d = synth(rows, 20, 0.3, loss == HOG_LOSS_SQUARED, 11);
    hog_train_opts o;
    th_opts_init(&o);
    o.loss = loss;
    o.schedule = sched;
    o.l1 = l1;
    o.l2 = l2;
    o.eta = eta;
    o.epochs = epochs;
    o.bias = 1.0;
    o.seed = 5;
    hog_model *m;
    hog_err err;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_OK, "%s", err.msg);
    double *ref = eager_train(d, &o, NULL);
    const float *w = hog_model_weights(m);
    int nonzero = 0, zero = 0;
    for (uint64_t j = 0; j <= d->n_features; j++) {
        cr_assert(fabs(w[j] - ref[j]) <= 1e-5 * fmax(1.0, fabs(ref[j])),
                  "%s loss, schedule %d, l1 %g, l2 %g: w[%llu] lazy %.9g, "
                  "eager %.9g",
                  hog_loss_name(loss), (int)sched, l1, l2,
                  (unsigned long long)j, w[j], ref[j]);
        nonzero += ref[j] != 0;
        zero += ref[j] == 0;
    }
    cr_assert_gt(nonzero, 0, "the problem trains to all zeros: no test");

    free(ref);
    hog_model_free(m);
    hog_data_free(d);
    return zero;
}

static const hog_schedule scheds[] = { HOG_SCHED_CONSTANT,
                                       HOG_SCHED_INVSCALING,
                                       HOG_SCHED_ADAGRAD };

Test(sgd, lazy_l2_equals_eager)
{
    for (int s = 0; s < 3; s++)
        for (int l = 0; l < 4; l++)
            assert_lazy_equals_eager((hog_loss)l, scheds[s], 0.0, 0.05, 0.05,
                                     200, 3);
}

/* With l1 some weights must end at exactly zero, or the truncation went
 * untested. */
Test(sgd, lazy_l1_equals_eager)
{
    int zero = 0;
    for (int s = 0; s < 3; s++)
        for (int l = 0; l < 4; l++)
            zero += assert_lazy_equals_eager((hog_loss)l, scheds[s], 0.05, 0.0,
                                             0.05, 200, 3);
    cr_assert_gt(zero, 5);
}

Test(sgd, lazy_l1_l2_equals_eager)
{
    int zero = 0;
    for (int s = 0; s < 3; s++)
        for (int l = 0; l < 4; l++)
            zero += assert_lazy_equals_eager((hog_loss)l, scheds[s], 0.03, 0.03,
                                             0.05, 200, 3);
    cr_assert_gt(zero, 3);
}

Test(sgd, no_regularization_equals_eager)
{
    for (int s = 0; s < 3; s++)
        assert_lazy_equals_eager(HOG_LOSS_LOGISTIC, scheds[s], 0.0, 0.0, 0.05,
                                 150, 2);
}

Test(sgd, lazy_equals_eager_across_underflow_restarts)
{
    /* eta l2 = 0.45: the shrink product passes HOG_SGD_PREFIX_MIN after
     * ~77 steps, so each 1000-row epoch runs in many segments. */
    assert_lazy_equals_eager(HOG_LOSS_SQUARED, HOG_SCHED_CONSTANT, 0.0, 0.9,
                             0.5, 1000, 2);
    assert_lazy_equals_eager(HOG_LOSS_LOGISTIC, HOG_SCHED_CONSTANT, 0.001, 0.9,
                             0.5, 1000, 2);
}

/* The catch-up (1 - a)^k of AdaGrad with l2 only, in lanes, against
 * shrink_pow() (the exact catch-up the other AdaGrad kinds keep) and a long
 * double powl: a near 0, in between and near 1, k = 0, 1, small, large. */
Test(sgd, adagrad_l2_catch_up_equals_exact)
{
    struct hog_rng rng;
    hog_rng_seed(&rng, 99, 0);
    double worst_exact = 0, worst_ref = 0;
    for (int i = 0; i < 200000; i++) {
        double u = hog_rng_uniform(&rng);
        double a = i % 3 == 0   ? pow(10.0, -14.0 * u)       /* 1e-14..1 */
                   : i % 3 == 1 ? 1.0 - pow(10.0, -12.0 * u) /* near 1 */
                                : u;
        static const uint32_t fixed[] = { 0, 1, 2, 3, 7, UINT32_MAX };
        uint32_t k = i % 4 == 0 ? fixed[hog_rng_below(&rng, 6)]
                     : i % 4 == 1
                         ? (uint32_t)hog_rng_below(&rng, 1000)
                         : (uint32_t)pow(10.0, 9.0 * hog_rng_uniform(&rng));
        double fast = hog_sgd_shrink_lanes(a, k);
        double exact = hog_sgd_shrink_exact(a, k);
        long double ref = a >= 1.0 ? (k ? 0.0L : 1.0L)
                                   : powl(1.0L - (long double)a, k);
        if (k == 1)
            cr_assert_eq(fast, 1.0 - a, "k = 1 is one exact factor");
        if (k == 0 && a < 1.0)
            cr_assert_eq(fast, 1.0);
        /* below e^-700 both round to 0 or to the smallest doubles */
        double e1 = fabs(fast - exact) / fmax(exact, 1e-290);
        double e2 = (double)(fabsl((long double)fast - ref) /
                             fmaxl(ref, 1e-290L));
        cr_assert(e1 <= 1e-6, "a %.17g, k %u: lanes %.17g, shrink_pow %.17g",
                  a, k, fast, exact);
        /* the series' error on the log grows with the power's log */
        double lnp = ref > 0 ? -(double)logl(ref) : 0.0;
        cr_assert(e2 <= 1e-9 * fmax(1.0, lnp),
                  "a %.17g, k %u: lanes %.17g, powl %.17Lg", a, k, fast, ref);
        e2 /= fmax(1.0, lnp);
        worst_exact = fmax(worst_exact, e1);
        worst_ref = fmax(worst_ref, e2);
    }
    cr_log_info("lanes vs shrink_pow: %.3g relative; vs powl: %.3g "
                "relative per unit of max(1, |log p|)",
                worst_exact, worst_ref);
}

Test(sgd, segment_ends_before_the_prefix_underflows)
{
    hog_data *d = synth(5000, 10, 0.3, false, 3);
    hog_train_opts o;
    th_opts_init(&o);
    o.schedule = HOG_SCHED_CONSTANT;
    o.eta = 0.05;
    o.l2 = 0.9; /* q grows by 1/(1 - 0.045) a step: 1e20 after ~1000 */
    struct hog_sgd s;
    cr_assert_eq(hog_sgd_init(&s, &o, d, NULL), HOG_OK);
    uint32_t len = hog_sgd_segment_begin(&s, 0, 5000);
    cr_assert_lt(len, 5000u);
    cr_assert_gt(len, 900u);
    cr_assert(1.0 / s.pre[len].q >= HOG_SGD_PREFIX_MIN);
    cr_assert(1.0 / s.pre[len].q < HOG_SGD_PREFIX_MIN / 0.955 * 1.0000001);
    /* the next segment starts afresh */
    hog_sgd_segment_end(&s, len);
    uint32_t len2 = hog_sgd_segment_begin(&s, len, 5000 - len);
    cr_assert_eq(len2, len < 2500 ? len : 5000 - len);
    hog_sgd_free(&s);
    hog_data_free(d);
}

static void train_synth(uint64_t seed, float *out, uint64_t nw)
{
    hog_data *d = synth(300, 30, 0.2, false, 2);
    hog_train_opts o;
    th_opts_init(&o);
    o.seed = seed;
    o.l1 = 1e-3;
    hog_model *m;
    hog_err err;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_OK, "%s", err.msg);
    memcpy(out, hog_model_weights(m), nw * sizeof *out);
    hog_model_free(m);
    hog_data_free(d);
}

Test(sgd, same_seed_same_weights_other_seed_other_weights)
{
    float a[31], b[31], c[31];
    train_synth(42, a, 31);
    train_synth(42, b, 31);
    train_synth(43, c, 31);
    cr_assert_eq(memcmp(a, b, sizeof a), 0);
    cr_assert_neq(memcmp(a, c, sizeof a), 0);
}

/* ---- options and the front door ------------------------------------------- */

static hog_status try_opts(hog_data *d, void (*set)(hog_train_opts *),
                           hog_err *err)
{
    hog_train_opts o;
    th_opts_init(&o);
    set(&o);
    hog_model *m = NULL;
    hog_status st = hog_train(d, NULL, &o, NULL, &m, err);
    hog_model_free(m);
    return st;
}

static void eta0(hog_train_opts *o) { o->eta = 0; }
/* NaN is "unset" (the loss's step, hog_train_opts_resolve); an infinite
 * step is out of range */
static void eta_inf(hog_train_opts *o) { o->eta = INFINITY; }
static void l1neg(hog_train_opts *o) { o->l1 = -1; }
static void l2big(hog_train_opts *o)
{
    o->schedule = HOG_SCHED_CONSTANT;
    o->l2 = 20;
    o->eta = 0.1;
}
static void epochs0(hog_train_opts *o) { o->epochs = 0; }
static void badloss(hog_train_opts *o) { o->loss = (hog_loss)9; }
static void badreplicas(hog_train_opts *o) { o->replicas = (hog_replicas)9; }
static void size0(hog_train_opts *o) { o->size = 0; }

Test(sgd, bad_options_are_refused_with_a_sentence)
{
    hog_data *d = synth(50, 5, 0.5, false, 1);
    struct {
        void (*set)(hog_train_opts *);
        hog_status st;
        const char *word;
    } cases[] = {
        { eta0, HOG_EINVAL, "eta" },     { eta_inf, HOG_EINVAL, "eta" },
        { l1neg, HOG_EINVAL, "l1" },     { l2big, HOG_EINVAL, "l2" },
        { epochs0, HOG_EINVAL, "epochs" }, { badloss, HOG_EINVAL, "loss" },
        { badreplicas, HOG_EINVAL, "replica" },
        { size0, HOG_EINVAL, "hog_train_opts_init" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hog_err err = { "" };
        cr_assert_eq(try_opts(d, cases[i].set, &err), cases[i].st,
                     "case %zu: %s", i, err.msg);
        cr_assert(strstr(err.msg, cases[i].word), "case %zu: \"%s\"", i,
                  err.msg);
    }
    hog_data_free(d);
}

Test(sgd, classification_loss_refuses_real_labels)
{
    hog_data *d = synth(50, 5, 0.5, true, 1);
    hog_train_opts o;
    th_opts_init(&o);
    hog_model *m;
    hog_err err;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "squared"), "%s", err.msg);
    o.loss = HOG_LOSS_SQUARED;
    o.eta = 0.01;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(m->labels, HOG_LABELS_REAL);
    hog_model_free(m);
    hog_data_free(d);
}

/* ---- progress and metrics --------------------------------------------------- */

struct seen {
    unsigned epochs;
    hog_epoch_stats last;
    int bad;
};

static void on_progress(void *ctx, unsigned epoch, unsigned epochs,
                        uint64_t done, uint64_t total,
                        const hog_epoch_stats *s)
{
    struct seen *v = ctx;
    if (done > total || epoch < 1 || epoch > epochs)
        v->bad++;
    if (!s)
        return;
    if (s->epoch != epoch || epoch != v->epochs + 1 || done != total)
        v->bad++;
    v->epochs++;
    v->last = *s;
}

Test(sgd, progress_reports_every_epoch_with_metrics)
{
    hog_data *tr = synth(2000, 40, 0.2, false, 9);
    hog_data *te = synth(1000, 45, 0.2, false, 9); /* more features */
    hog_train_opts o;
    th_opts_init(&o);
    o.epochs = 4;
    struct seen v = { 0 };
    hog_train_hooks hk = { .size = sizeof hk };
    hk.progress = on_progress;
    hk.progress_ctx = &v;
    hog_model *m;
    hog_err err;
    cr_assert_eq(hog_train(tr, te, &o, &hk, &m, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(v.epochs, 4);
    cr_assert_eq(v.bad, 0);
    const hog_epoch_stats *s = &v.last;
    cr_assert(s->has_test);
    cr_assert(s->train_accuracy > 0.8 && s->train_accuracy <= 1.0);
    cr_assert(s->test_accuracy > 0.6 && s->test_accuracy <= 1.0,
              "test accuracy %g", s->test_accuracy);
    cr_assert(s->train_auc > 0.85 && s->train_auc <= 1.0);
    cr_assert(s->objective >= s->train_loss && s->train_loss > 0);
    cr_assert(isnan(s->train_rmse) && isnan(s->test_rmse));
    cr_assert(s->nonzero_weights > 0 && s->nonzero_weights <= 41);
    cr_assert(s->total_seconds >= s->seconds && s->seconds >= 0);
    hog_model_free(m);
    hog_data_free(tr);
    hog_data_free(te);
}

/* The metrics pass on several threads: the same doubles as on one, for a
 * classifier and a regression, on data large enough to be split. */
Test(sgd, parallel_metrics_equal_serial_metrics_exactly)
{
    for (int reg = 0; reg < 2; reg++) {
        hog_data *d = synth(50000, 60, 0.15, reg, 11);
        hog_train_opts o;
        th_opts_init(&o);
        if (reg) {
            o.loss = HOG_LOSS_SQUARED;
            th_opts_step_for_loss(&o);
        }
        o.epochs = 1;
        hog_model *m;
        hog_err err;
        cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_OK, "%s", err.msg);
        struct hog_metrics one, many;
        cr_assert_eq(hog_metrics_eval(m, d, &one, &err), HOG_OK, "%s", err.msg);
        cr_assert(isfinite(one.loss));
        cr_assert(reg ? isfinite(one.rmse) : isfinite(one.auc));
        const unsigned threads[] = { 1, 2, 3, 7, 16, 0 };
        for (size_t i = 0; i < sizeof threads / sizeof *threads; i++) {
            cr_assert_eq(hog_metrics_eval_threads(m, d, threads[i], &many, &err),
                         HOG_OK, "%s", err.msg);
            cr_assert(memcmp(&one, &many, sizeof one) == 0,
                      "%u threads: loss %.17g/%.17g acc %.17g/%.17g "
                      "auc %.17g/%.17g rmse %.17g/%.17g", threads[i],
                      one.loss, many.loss, one.accuracy, many.accuracy,
                      one.auc, many.auc, one.rmse, many.rmse);
        }
        hog_model_free(m);
        hog_data_free(d);
    }
}

/* Every epoch's stats. */
struct history {
    unsigned n;
    hog_epoch_stats s[8];
};

static void on_history(void *ctx, unsigned epoch, unsigned epochs,
                       uint64_t done, uint64_t total, const hog_epoch_stats *s)
{
    (void)epoch, (void)epochs, (void)done, (void)total;
    struct history *h = ctx;
    if (s && h->n < 8)
        h->s[h->n++] = *s;
}

/* --metrics-every K for SGD: the exact training-set pass on every K-th
 * epoch and the last, the progressive figures alone on the others (and
 * beside the exact ones on every epoch); default the last only; test
 * metrics every epoch; the model the same bits whatever is measured, and
 * with no callback. */
Test(sgd, metrics_every_k_epochs_for_serial_sgd)
{
    hog_data *tr = synth(2000, 40, 0.2, false, 9);
    hog_data *te = synth(500, 40, 0.2, false, 10);
    hog_model *ref = NULL;
    const unsigned every[] = { 0, 1, 2, 3, 7 };
    for (int k = -1; k < 5; k++) {
        hog_train_opts o;
        th_opts_init(&o);
        o.epochs = 5;
        struct history h = { 0 };
        hog_train_hooks hk = { .size = sizeof hk };
        if (k >= 0) { /* k == -1: no callback, no metrics */
            o.metrics_every = every[k];
            hk.progress = on_history;
            hk.progress_ctx = &h;
        }
        hog_model *m;
        hog_err err;
        cr_assert_eq(hog_train(tr, te, &o, &hk, &m, &err), HOG_OK, "%s", err.msg);
        if (k < 0) {
            ref = m;
            continue;
        }
        cr_assert_eq(h.n, 5);
        unsigned K = every[k] ? every[k] : 5;
        for (unsigned e = 0; e < 5; e++) {
            bool full = (e + 1) % K == 0 || e == 4;
            const hog_epoch_stats *s = &h.s[e];
            cr_assert(isfinite(s->progressive_loss) &&
                      isfinite(s->progressive_accuracy),
                      "every %u epoch %u: no progressive figures", K, e + 1);
            cr_assert_eq(isfinite(s->train_accuracy), full,
                         "every %u epoch %u: accuracy %g", K, e + 1,
                         s->train_accuracy);
            cr_assert_eq(isfinite(s->objective), full);
            cr_assert_eq(isfinite(s->train_loss), full);
            cr_assert_eq(isfinite(s->train_auc), full);
            cr_assert(s->has_test && isfinite(s->test_accuracy));
        }
        cr_assert(memcmp(hog_model_weights(m), hog_model_weights(ref),
                         (hog_model_features(m) + 1) * sizeof(float)) == 0,
                  "metrics_every %u changed the model", every[k]);
        hog_model_free(m);
    }
    hog_model_free(ref);
    hog_data_free(tr);
    hog_data_free(te);
}

/* The progressive figures (each row scored just before its own step) of
 * the serial trainer against the eager reference's, for every loss and
 * schedule, with l1 and l2; Hogwild! at one thread gives the serial
 * figures exactly, and at two threads figures over all rows, each once
 * (near the serial ones: the same steps, racing). */
Test(sgd, progressive_metrics_equal_the_eager_reference)
{
    for (int l = 0; l < 4; l++)
        for (size_t sc = 0; sc < 3; sc++) {
            hog_loss loss = (hog_loss)l;
            hog_data *d = synth(1500, 20, 0.3, loss == HOG_LOSS_SQUARED, 11);
            hog_train_opts o;
            th_opts_init(&o);
            o.loss = loss;
            o.schedule = scheds[sc];
            o.l1 = 0.01;
            o.l2 = 0.02;
            o.eta = 0.05;
            o.epochs = 3;
            o.bias = 1.0;
            o.seed = 5;
            double ref[6];
            free(eager_train(d, &o, ref));
            hog_epoch_stats got[3][3]; /* serial, 1 thread, 2 threads */
            for (int run = 0; run < 3; run++) {
                struct history h = { 0 };
                hog_train_hooks hk = { .size = sizeof hk };
                hk.progress = on_history;
                hk.progress_ctx = &h;
                o.algo = run ? HOG_ALGO_HOGWILD : HOG_ALGO_SERIAL;
                o.threads = run ? (unsigned)run : 0;
                hog_model *m;
                hog_err err;
                cr_assert_eq(hog_train(d, NULL, &o, &hk, &m, &err), HOG_OK, "%s",
                             err.msg);
                cr_assert_eq(h.n, 3);
                memcpy(got[run], h.s, sizeof got[run]);
                hog_model_free(m);
            }
            for (unsigned e = 0; e < 3; e++) {
                const hog_epoch_stats *s = &got[0][e];
                cr_assert(fabs(s->progressive_loss - ref[2 * e]) <=
                              1e-5 * fmax(1.0, ref[2 * e]),
                          "%s loss, schedule %d, epoch %u: progressive loss "
                          "%.9g, eager %.9g", hog_loss_name(loss),
                          (int)scheds[sc], e + 1, s->progressive_loss,
                          ref[2 * e]);
                if (loss == HOG_LOSS_SQUARED)
                    cr_assert(isnan(s->progressive_accuracy));
                else /* a margin within rounding of 0 may fall either way */
                    cr_assert(fabs(s->progressive_accuracy - ref[2 * e + 1]) *
                                  1500 <= 2,
                              "%s loss, epoch %u: progressive accuracy %.6f, "
                              "eager %.6f", hog_loss_name(loss), e + 1,
                              s->progressive_accuracy, ref[2 * e + 1]);
                cr_assert(s->progressive_loss == got[1][e].progressive_loss &&
                          memcmp(&s->progressive_accuracy,
                                 &got[1][e].progressive_accuracy,
                                 sizeof(double)) == 0,
                          "Hogwild! at 1 thread: %.17g, serial %.17g",
                          got[1][e].progressive_loss, s->progressive_loss);
                /* two threads race on these 20 features (their model is
                 * not the serial one: 12% off on a loaded machine), but
                 * every row is counted once: a tally of one thread's rows
                 * alone, or of both twice, would halve or double the
                 * accuracy */
                const hog_epoch_stats *h2 = &got[2][e];
                cr_assert(isfinite(h2->progressive_loss) &&
                              h2->progressive_loss > 0.5 * ref[2 * e] &&
                              h2->progressive_loss < 2.0 * ref[2 * e] + 0.1,
                          "Hogwild! at 2 threads: %.9g, eager %.9g",
                          h2->progressive_loss, ref[2 * e]);
                if (loss != HOG_LOSS_SQUARED)
                    cr_assert(fabs(h2->progressive_accuracy -
                                   ref[2 * e + 1]) < 0.15,
                              "Hogwild! at 2 threads: accuracy %.4f, eager "
                              "%.4f", h2->progressive_accuracy,
                              ref[2 * e + 1]);
            }
            /* the loss falls: the figures follow the training */
            cr_assert_lt(got[0][2].progressive_loss,
                         got[0][0].progressive_loss);
            hog_data_free(d);
        }
}

/* Rows that share no weight (each its own three features, no bias, a
 * constant step, no regularization): each row's margin depends on its own
 * earlier steps alone, so Hogwild! at 2 and 3 threads scores every row as
 * the serial trainer does, and its progressive figures are the serial
 * ones up to the order of the sum: a thread's rows left out of the
 * total, or counted twice, would move them by far more. */
Test(sgd, hogwild_progressive_figures_count_every_row_once)
{
    enum { N = 3000, E = 3 };
    uint64_t *off = malloc((N + 1) * sizeof *off);
    float *y = malloc(N * sizeof *y), *val = malloc(3 * N * sizeof *val);
    uint32_t *idx = malloc(3 * N * sizeof *idx);
    cr_assert(off && y && val && idx);
    struct hog_rng r;
    hog_rng_seed(&r, 4, 0);
    off[0] = 0;
    for (uint32_t i = 0; i < N; i++) {
        for (uint32_t q = 0; q < 3; q++) {
            idx[3 * i + q] = 3 * i + q;
            val[3 * i + q] = (float)hog_rng_normal(&r);
        }
        y[i] = hog_rng_below(&r, 2) ? 1.0f : -1.0f;
        off[i + 1] = 3 * (uint64_t)i + 3;
    }
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_data_wrap(N, 3 * N, off, y, idx, val, 3 * N, &d, &err),
                 HOG_OK, "%s", err.msg);
    hog_train_opts o;
    th_opts_init(&o);
    o.schedule = HOG_SCHED_CONSTANT;
    o.eta = 0.5;
    o.l2 = 0;
    o.bias = 0;
    o.epochs = E;
    struct history h[3] = { { 0 } };
    for (int run = 0; run < 3; run++) {
        o.algo = run ? HOG_ALGO_HOGWILD : HOG_ALGO_SERIAL;
        o.threads = run ? (unsigned)run + 1 : 0;
        o.oversubscribe = 1; /* 3 threads on a 2-core machine */
        hog_train_hooks hk = { .size = sizeof hk };
        hk.progress = on_history;
        hk.progress_ctx = &h[run];
        hog_model *m;
        cr_assert_eq(hog_train(d, NULL, &o, &hk, &m, &err), HOG_OK, "%s", err.msg);
        hog_model_free(m);
        cr_assert_eq(h[run].n, E);
    }
    for (int run = 1; run < 3; run++)
        for (unsigned e = 0; e < E; e++) {
            double a = h[0].s[e].progressive_loss;
            double b = h[run].s[e].progressive_loss;
            cr_assert(fabs(a - b) <= 1e-12 * a, "%d threads, epoch %u: "
                      "%.17g, serial %.17g", run + 1, e + 1, b, a);
            cr_assert_eq(h[run].s[e].progressive_accuracy,
                         h[0].s[e].progressive_accuracy);
        }
    /* the rows learn their own labels: the figures follow the training */
    cr_assert_lt(h[0].s[2].progressive_loss, 0.5 * h[0].s[0].progressive_loss);
    hog_data_free(d);
}

Test(sgd, squared_loss_fits_a_linear_target)
{
    hog_data *d = synth(3000, 10, 0.5, true, 4);
    hog_train_opts o;
    th_opts_init(&o);
    o.loss = HOG_LOSS_SQUARED;
    th_opts_step_for_loss(&o);
    o.l2 = 0;
    o.epochs = 10;
    struct seen v = { 0 };
    hog_train_hooks hk = { .size = sizeof hk };
    hk.progress = on_progress;
    hk.progress_ctx = &v;
    hog_model *m;
    hog_err err;
    cr_assert_eq(hog_train(d, NULL, &o, &hk, &m, &err), HOG_OK, "%s", err.msg);
    /* noise sd 0.5: the best RMSE is about 0.5 */
    cr_assert(v.last.train_rmse < 0.6, "rmse %g", v.last.train_rmse);
    cr_assert(isnan(v.last.train_accuracy));
    hog_model_free(m);
    hog_data_free(d);
}

Test(sgd, l1_gives_sparse_models)
{
    hog_data *d = synth(2000, 60, 0.2, false, 8);
    hog_train_opts o;
    th_opts_init(&o);
    o.l2 = 0;
    o.l1 = 0.1;
    o.epochs = 5;
    hog_model *m;
    hog_err err;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_OK, "%s", err.msg);
    int zero = 0;
    for (int j = 0; j < 60; j++)
        zero += m->w[j] == 0.0f;
    /* half of the features carry no signal */
    cr_assert_gt(zero, 10, "%d weights of 60 are zero", zero);
    cr_assert_lt(zero, 60);
    hog_model_free(m);
    hog_data_free(d);
}

/* ---- real data against LIBLINEAR ---------------------------------------------
 * Each figure is LIBLINEAR 2.3.0's test accuracy (Debian liblinear-tools) on
 * the same split, at C = 1 with a bias feature, produced by the command in
 * the comment. hogtrain minimises the same objective (l2 = 1 / (C n), bias
 * 1, regularized like LIBLINEAR's -B 1) with serial AdaGrad SGD and must
 * come within 0.5 points of it. */

/* Trains on train_name with o (its rows known only once loaded, so
 * l2_per_row, when set, makes l2 = 1 / n: C = 1) and returns the test
 * accuracy after the last epoch, in percent. */
static double accuracy_with(const char *train_name, const char *test_name,
                            hog_train_opts o, bool l2_per_row)
{
    const char *trp = th_data(train_name), *tep = th_data(test_name);
    if (!trp || !tep)
        cr_skip_test("real data %s / %s not found under HOGTRAIN_DATA; "
                     "skipping",
                     train_name, test_name);
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    hog_data *tr, *te;
    hog_err err;
    cr_assert_eq(hog_data_load(trp, &lo, &tr, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_data_load(tep, &lo, &te, &err), HOG_OK, "%s", err.msg);
    if (l2_per_row)
        o.l2 = 1.0 / (double)hog_data_rows(tr);
    struct seen v = { 0 };
    hog_train_hooks hk = { .size = sizeof hk };
    hk.progress = on_progress;
    hk.progress_ctx = &v;
    hog_model *m;
    cr_assert_eq(hog_train(tr, te, &o, &hk, &m, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(v.epochs, o.epochs);
    double acc = 100.0 * v.last.test_accuracy;
    cr_log_info("%s: test accuracy %.4f%% after %u epochs (%.3f s)",
                train_name, acc, v.epochs, v.last.total_seconds);
    hog_model_free(m);
    hog_data_free(tr);
    hog_data_free(te);
    return acc;
}

static double real_accuracy(const char *train_name, const char *test_name,
                            hog_loss loss, double eta, unsigned epochs)
{
    hog_train_opts o;
    th_opts_init(&o);
    o.loss = loss;
    o.schedule = HOG_SCHED_ADAGRAD;
    o.eta = eta;
    o.bias = 1.0;
    o.epochs = epochs;
    return accuracy_with(train_name, test_name, o, true);
}

Test(sgd, a9a_reaches_liblinear_accuracy, .timeout = 60)
{
    /* liblinear-train -q -s 0 -c 1 -B 1 a9a m; liblinear-predict a9a.t m out
     *   Accuracy = 84.9518% (13831/16281) */
    double acc = real_accuracy("a9a", "a9a.t", HOG_LOSS_LOGISTIC, 0.2, 3);
    cr_assert_geq(acc, 84.9518 - 0.5, "a9a: %.4f%%", acc);
}

Test(sgd, ijcnn1_reaches_liblinear_accuracy, .timeout = 60)
{
    /* liblinear-train -q -s 0 -c 1 -B 1 ijcnn1 m; liblinear-predict ijcnn1.t m out
     *   Accuracy = 91.879% (84254/91701) */
    double acc = real_accuracy("ijcnn1", "ijcnn1.t", HOG_LOSS_LOGISTIC, 0.5, 3);
    cr_assert_geq(acc, 91.879 - 0.5, "ijcnn1: %.4f%%", acc);
}

Test(sgd, reuters_moneyfx_reaches_liblinear_accuracy, .timeout = 60)
{
    /* liblinear-train -q -s 2 -c 1 -B 1 reuters_moneyfx.trn m;
     * liblinear-predict reuters_moneyfx.tst m out
     *   Accuracy = 97.4235% (3214/3299) */
    double acc = real_accuracy("reuters_moneyfx.trn", "reuters_moneyfx.tst",
                               HOG_LOSS_SQHINGE, 0.1, 3);
    cr_assert_geq(acc, 97.4235 - 0.5, "reuters money-fx: %.4f%%", acc);
}

Test(sgd, news20_binary_reaches_liblinear_accuracy, .timeout = 120)
{
    /* liblinear-train -q -s 2 -c 1 -B 1 news20.binary.train.svm m;
     * liblinear-predict news20.binary.test.svm m out
     *   Accuracy = 95.6452% (7204/7532) */
    double acc = real_accuracy("news20.binary.train.svm",
                               "news20.binary.test.svm", HOG_LOSS_SQHINGE, 0.1,
                               3);
    cr_assert_geq(acc, 95.6452 - 0.5, "news20.binary: %.4f%%", acc);
}

/* ---- the default options (AdaGrad, l2 = 1e-5) on real data -------------------
 * hogtrain train X -t X.t with every option at its default; the figures
 * are this kernel's test accuracy after 5 epochs (the lanes' catch-up of
 * sgd.c: the same as the scalar exp/log catch-up it replaced, to the two
 * decimals shown), and a change must stay within 0.1 point of them. */

static double default_accuracy(const char *train_name, const char *test_name)
{
    hog_train_opts o;
    th_opts_init(&o);
    cr_assert_eq(o.schedule, HOG_SCHED_ADAGRAD);
    cr_assert(o.l2 > 0 && o.l1 == 0, "the default is AdaGrad with l2 only");
    return accuracy_with(train_name, test_name, o, false);
}

Test(sgd, a9a_default_options_accuracy, .timeout = 60)
{
    double acc = default_accuracy("a9a", "a9a.t");
    cr_assert_geq(acc, 85.03 - 0.1, "a9a: %.4f%%", acc);
}

Test(sgd, news20_binary_default_options_accuracy, .timeout = 120)
{
    double acc = default_accuracy("news20.binary.train.svm",
                                  "news20.binary.test.svm");
    cr_assert_geq(acc, 95.15 - 0.1, "news20.binary: %.4f%%", acc);
}

/* hog_sgd_apply_many (Cyclades' hot phase) takes AdaGrad-with-l2 weights
 * four at a time in the vector lanes: each must get the bits that
 * hog_sgd_apply gives it alone, whatever its lane's neighbours: young
 * coordinates (a large) beside old ones, stamps behind and ahead of t,
 * with given increments and with sq NULL (g^2), counts not a multiple of
 * four. */
Test(sgd, apply_many_in_lanes_equals_one_weight_at_a_time)
{
    hog_data *d = synth(60, 40, 0.3, false, 5);
    hog_train_opts o;
    th_opts_init(&o); /* AdaGrad, l2 only */
    o.l2 = 0.02;             /* eta_j l2 from 2^-7 and below up to 1 */
    struct hog_sgd a, b;
    cr_assert_eq(hog_sgd_init(&a, &o, d, NULL), HOG_OK);
    cr_assert_eq(hog_sgd_init(&b, &o, d, NULL), HOG_OK);
    cr_assert_eq(hog_sgd_segment_begin(&a, 0, 60), 60u);
    cr_assert_eq(hog_sgd_segment_begin(&b, 0, 60), 60u);
    struct hog_rng rng;
    hog_rng_seed(&rng, 11, 0);
    const uint32_t ts[] = { 3, 9, 20, 14, 41, 42, 59, 30 }; /* 14, 30: behind
                                                               some stamps */
    for (unsigned r = 0; r < sizeof ts / sizeof *ts; r++) {
        uint32_t j[41];
        double g[41], sq[41];
        uint32_t n = 0;
        for (uint32_t f = 0; f <= 40; f++) /* 40: the bias weight */
            if (hog_rng_next(&rng) % 3 != 0) {
                j[n] = f;
                g[n] = ((double)(hog_rng_next(&rng) % 2001) - 1000.0) / 250.0;
                sq[n] = g[n] * g[n] * (1.0 + (double)(r % 3));
                n++;
            }
        n -= n % 4 == 0; /* a tail after the lanes */
        cr_assert_gt(n, 8u);
        const double *q = r % 2 ? NULL : sq;
        hog_sgd_apply_many(&a, j, g, q, n, ts[r]);
        for (uint32_t i = 0; i < n; i++)
            hog_sgd_apply(&b, j[i], ts[r], g[i], q ? q[i] : g[i] * g[i]);
    }
    const size_t nw = 41;
    cr_assert_eq(memcmp((const void *)a.w, (const void *)b.w,
                        nw * sizeof *a.w), 0, "the weights");
    cr_assert_eq(memcmp((const void *)a.g2, (const void *)b.g2,
                        nw * sizeof *a.g2), 0, "AdaGrad's sums");
    cr_assert_eq(memcmp((const void *)a.stamp, (const void *)b.stamp,
                        nw * sizeof *a.stamp), 0, "the stamps");
    /* and the weights moved: the comparison is not of zeros */
    unsigned moved = 0;
    for (size_t i = 0; i < nw; i++)
        moved += atomic_load_explicit(&a.w[i], memory_order_relaxed) != 0.0f;
    cr_assert_gt(moved, 30u);
    hog_sgd_free(&a);
    hog_sgd_free(&b);
    hog_data_free(d);
}
