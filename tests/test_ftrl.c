/* ftrl: --schedule ftrl (FTRL-Proximal, core/sgd.c) against an independent
 * double-precision reference of McMahan et al.'s algorithm, its l1 zeros,
 * Hogwild! at one thread in every update mode, a warm start, what it
 * refuses, and the command's default (FTRL at its own l2) against AdaGrad's test
 * accuracy on real data. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/loss.h"
#include "core/sgd.h"
#include "helpers.h"
#include "synth.h"
#include "train/train.h"

static hog_data *synth(uint64_t rows, uint32_t nf, double density,
                       bool regression, uint64_t seed)
{
    hog_err err = { { 0 } };
    hog_data *d = th_synth(&(struct th_synth){
        .rows = rows, .features = nf, .layout = TH_SYNTH_COIN,
        .density = density, .seed = seed, .stream = 7, .period = 2,
        .first = { .normal = true }, .offset = 0.3, .noise = 0.5,
        .regression = regression }, &err);
    cr_assert(d, "%s", err.msg);
    return d;
}

static hog_train_opts ftrl_opts(hog_loss loss, double l1, double l2)
{
    hog_train_opts o;
    th_opts_init(&o);
    o.loss = loss;
    o.schedule = HOG_SCHED_FTRL;
    o.l1 = l1;
    o.l2 = l2;
    o.eta = 0.3;
    o.epochs = 4;
    o.bias = 1.0;
    o.seed = 5;
    return o;
}

/* Algorithm 1 of McMahan et al. (KDD 2013) in double, dense, with the
 * regularizers of the t steps before each one (t l1, t l2) and the serial
 * trainer's permutation: every weight is recomputed from (z, n) at every
 * step, so nothing here is lazy. */
static double weight(double z, double n, double t, const hog_train_opts *o)
{
    if (fabs(z) <= t * o->l1)
        return 0.0;
    return -(z - copysign(t * o->l1, z)) /
           ((HOG_FTRL_BETA + sqrt(n)) / o->eta + t * o->l2);
}

static double *reference(const hog_data *d, const hog_train_opts *o)
{
    uint64_t n = d->m.rows, nf = d->n_features, nw = nf + 1;
    double *z = calloc(nw, sizeof *z), *q = calloc(nw, sizeof *q);
    double *w = calloc(nw, sizeof *w);
    struct hog_rng rng;
    uint64_t *order = th_serial_order(n, o->seed, &rng);
    uint64_t t = 0;
    for (unsigned e = 0; e < o->epochs; e++) {
        hog_shuffle_u64(&rng, order, n);
        for (uint64_t i = 0; i < n; i++, t++) {
            for (uint64_t j = 0; j < nw; j++)
                w[j] = weight(z[j], q[j], (double)t, o);
            struct hog_row r = hog_csr_row(&d->m, order[i]);
            double y = o->loss == HOG_LOSS_SQUARED ? r.y
                       : hog_label_positive(d, r.y) ? 1.0
                                                    : -1.0;
            double m = w[nf] * o->bias;
            for (uint32_t k = 0; k < r.nnz; k++)
                m += w[r.idx[k]] * (double)r.val[k];
            double dl = hog_loss_deriv(o->loss, 0.0, y, m);
            if (dl == 0.0)
                continue;
            for (uint32_t k = 0; k <= r.nnz; k++) {
                uint64_t j = k < r.nnz ? r.idx[k] : nf;
                double g = dl * (k < r.nnz ? (double)r.val[k] : o->bias);
                double sigma = (sqrt(q[j] + g * g) - sqrt(q[j])) / o->eta;
                z[j] += g - sigma * w[j];
                q[j] += g * g;
            }
        }
    }
    for (uint64_t j = 0; j < nw; j++)
        w[j] = weight(z[j], q[j], (double)t, o);
    free(z), free(q), free(order);
    return w;
}

static hog_model *train(const hog_data *d, const hog_train_opts *o)
{
    hog_model *m;
    hog_err err;
    cr_assert_eq(hog_train(d, NULL, o, NULL, &m, &err), HOG_OK, "%s", err.msg);
    return m;
}

/* Returns how many weights the reference puts at exactly zero. */
static int assert_equals_reference(hog_loss loss, double l1, double l2)
{
    hog_data *d = synth(300, 24, 0.3, loss == HOG_LOSS_SQUARED, 11);
    hog_train_opts o = ftrl_opts(loss, l1, l2);
    hog_model *m = train(d, &o);
    double *ref = reference(d, &o);
    const float *w = hog_model_weights(m);
    int zero = 0, nonzero = 0;
    for (uint64_t j = 0; j <= d->n_features; j++) {
        /* float sums against double ones over 1200 steps */
        cr_assert(fabs(w[j] - ref[j]) <= 2e-4 * fmax(0.1, fabs(ref[j])),
                  "%s loss, l1 %g, l2 %g: w[%llu] = %.9g, reference %.9g",
                  hog_loss_name(loss), l1, l2, (unsigned long long)j, w[j],
                  ref[j]);
        if (ref[j] == 0.0) {
            zero++;
            cr_assert_eq(w[j], 0.0f, "w[%llu] = %g where the reference "
                         "is 0 (l1's dead zone)", (unsigned long long)j,
                         w[j]);
        }
        nonzero += ref[j] != 0.0;
    }
    cr_assert_gt(nonzero, 0, "the problem trains to all zeros: no test");
    free(ref);
    hog_model_free(m);
    hog_data_free(d);
    return zero;
}

Test(ftrl, equals_the_reference_without_regularization)
{
    assert_equals_reference(HOG_LOSS_LOGISTIC, 0, 0);
    assert_equals_reference(HOG_LOSS_SQUARED, 0, 0);
}

Test(ftrl, equals_the_reference_with_l2)
{
    assert_equals_reference(HOG_LOSS_LOGISTIC, 0, 1e-3);
    assert_equals_reference(HOG_LOSS_HINGE, 0, 1e-3);
    assert_equals_reference(HOG_LOSS_SQUARED, 0, 1e-2);
}

Test(ftrl, equals_the_reference_with_l1_and_its_zeros_are_exact)
{
    int none = assert_equals_reference(HOG_LOSS_LOGISTIC, 0, 1e-4);
    int some = assert_equals_reference(HOG_LOSS_LOGISTIC, 2e-3, 1e-4);
    cr_assert_eq(none, 0, "no weight is exactly 0 without l1");
    cr_assert_gt(some, 0, "l1 puts the noise features at exactly 0");
}

/* One thread of Hogwild! runs the serial trainer's steps in every update
 * mode: the same weights bit for bit. */
Test(ftrl, hogwild_one_thread_equals_serial_in_every_update_mode)
{
    hog_data *d = synth(400, 40, 0.25, false, 3);
    hog_train_opts o = ftrl_opts(HOG_LOSS_LOGISTIC, 1e-4, 1e-4);
    o.threads = 1;
    hog_model *serial = train(d, &o);
    const hog_update modes[] = { HOG_UPDATE_NONE, HOG_UPDATE_ATOMIC,
                                 HOG_UPDATE_STRIPED, HOG_UPDATE_MUTEX };
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
        o.algo = HOG_ALGO_HOGWILD;
        o.update = modes[i];
        hog_model *h = train(d, &o);
        cr_assert(memcmp(hog_model_weights(h), hog_model_weights(serial),
                         (d->n_features + 1) * sizeof(float)) == 0,
                  "update mode %d differs from the serial trainer",
                  (int)modes[i]);
        hog_model_free(h);
    }
    /* two threads race but still learn the planted model */
    o.threads = 2;
    o.update = HOG_UPDATE_ATOMIC;
    hog_model *h2 = train(d, &o);
    const float *a = hog_model_weights(h2), *b = hog_model_weights(serial);
    double dot = 0, na = 0, nb = 0;
    for (uint64_t j = 0; j <= d->n_features; j++) {
        dot += (double)a[j] * b[j];
        na += (double)a[j] * a[j];
        nb += (double)b[j] * b[j];
    }
    cr_assert_gt(dot / sqrt(na * nb), 0.95, "2 threads: cosine %g",
                 dot / sqrt(na * nb));
    hog_model_free(h2);
    hog_model_free(serial);
    hog_data_free(d);
}

/* Weights put in come out again (a warm start: n = 0 and z chosen so
 * that the closed form gives them). */
Test(ftrl, warm_start_weights_come_out_as_put_in)
{
    hog_data *d = synth(50, 30, 0.3, false, 9);
    hog_train_opts o = ftrl_opts(HOG_LOSS_LOGISTIC, 1e-3, 1e-3);
    struct hog_sgd s;
    hog_err err;
    cr_assert_eq(hog_sgd_init(&s, &o, d, &err), HOG_OK, "%s", err.msg);
    uint64_t nw = s.n_weights;
    float *in = malloc(nw * sizeof *in), *out = malloc(nw * sizeof *out);
    for (uint64_t j = 0; j < nw; j++)
        in[j] = j % 3 == 0 ? 0.0f : (float)((double)j - 14.5) * 0.37f;
    hog_sgd_set_weights(&s, in);
    hog_sgd_copy_weights(&s, out);
    for (uint64_t j = 0; j < nw; j++)
        cr_assert(fabsf(out[j] - in[j]) <= 1e-6f * fmaxf(1.0f, fabsf(in[j])),
                  "w[%llu]: in %.9g, out %.9g", (unsigned long long)j, in[j],
                  out[j]);
    free(in), free(out);
    hog_sgd_free(&s);
    hog_data_free(d);
}

static hog_status no_average(void *ctx, float *w, uint64_t n, hog_err *err)
{
    (void)ctx, (void)w, (void)n;
    return hog_errf(err, HOG_EINVAL, "not called: refused before training");
}

/* The trainers that keep weights of their own say so in one sentence. */
Test(ftrl, what_it_does_not_combine_with_is_refused_with_a_sentence)
{
    hog_data *d = synth(60, 10, 0.5, false, 2);
    hog_train_opts o = ftrl_opts(HOG_LOSS_LOGISTIC, 0, 1e-4);
    hog_model *m = NULL;
    hog_err err;
    hog_train_opts c = o;
    c.algo = HOG_ALGO_CYCLADES;
    cr_assert_neq(hog_train(d, NULL, &c, NULL, &m, &err), HOG_OK);
    cr_assert(strstr(err.msg, "--schedule ftrl applies to --algo serial "
                              "and hogwild only"), "%s", err.msg);
    c = o;
    c.algo = HOG_ALGO_DCD;
    cr_assert_neq(hog_train(d, NULL, &c, NULL, &m, &err), HOG_OK);
    cr_assert(strstr(err.msg, "--schedule ftrl"), "%s", err.msg);
    c = o;
    c.algo = HOG_ALGO_HOGWILD;
    c.hot_features = 4;
    cr_assert_neq(hog_train(d, NULL, &c, NULL, &m, &err), HOG_OK);
    cr_assert(strstr(err.msg, "hot-feature replicas"), "%s", err.msg);
    c = o;
    hog_train_hooks world = { .size = sizeof world, .average = no_average };
    c.average_blocks = 1;
    cr_assert_neq(hog_train(d, NULL, &c, &world, &m, &err), HOG_OK);
    cr_assert(strstr(err.msg, "model averaging across processes"), "%s",
              err.msg);
    cr_assert_null(m, "nothing trained");
    hog_data_free(d);
}

/* Replicas (--replicas node|core) average their z and r = sqrt(n) at
 * each sync block's end, or (--sync-every 0) the model is their weights'
 * mean. A replica of one thread has no races and its averagings sit
 * between barriers, so two runs give the same model; on a9a the averaged
 * replicas reach serial FTRL's test accuracy (within half a point: the
 * replicas see half the rows each between averagings), and where the
 * schedule is not given they run FTRL, the default where it runs. */
static double test_accuracy(const hog_data *te, const hog_model *m)
{
    uint64_t n = hog_data_rows(te), right = 0;
    double *p = malloc(n * sizeof *p);
    hog_err err;
    cr_assert_eq(hog_model_predict(m, te, p, &err), HOG_OK, "%s", err.msg);
    for (uint64_t i = 0; i < n; i++)
        right += p[i] == (double)te->m.y[i];
    free(p);
    return 100.0 * (double)right / (double)n;
}

Test(ftrl, replicas_average_their_sums_and_reach_serial_accuracy,
     .timeout = 120)
{
    const char *trp = th_data("a9a"), *tep = th_data("a9a.t");
    if (!trp || !tep)
        cr_skip_test("real data a9a / a9a.t not found under HOGTRAIN_DATA; "
                     "skipping");
    hog_data *tr, *te;
    hog_err err;
    cr_assert_eq(hog_data_load(trp, NULL, &tr, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_data_load(tep, NULL, &te, &err), HOG_OK, "%s", err.msg);
    hog_train_opts o;
    th_opts_init(&o);
    o.schedule = HOG_SCHED_FTRL;
    o.l2 = HOG_FTRL_L2_DEFAULT;
    hog_model *serial;
    cr_assert_eq(hog_train(tr, NULL, &o, NULL, &serial, &err), HOG_OK, "%s",
                 err.msg);
    double want = test_accuracy(te, serial);
    const uint64_t syncs[] = { 0, 1000 }; /* one-shot, and every 1000 rows */
    for (size_t k = 0; k < 2; k++) {
        hog_train_opts c = o;
        c.algo = HOG_ALGO_HOGWILD;
        c.threads = 2;
        c.replicas = HOG_REPLICAS_CORE;
        c.sync_every = syncs[k];
        hog_model *a, *b;
        cr_assert_eq(hog_train(tr, NULL, &c, NULL, &a, &err), HOG_OK, "%s",
                     err.msg);
        cr_assert_eq(hog_train(tr, NULL, &c, NULL, &b, &err), HOG_OK, "%s",
                     err.msg);
        uint64_t nw = a->n_features + 1;
        cr_assert(memcmp(a->w, b->w, nw * sizeof *a->w) == 0,
                  "sync-every %llu: two runs differ",
                  (unsigned long long)syncs[k]);
        double got = test_accuracy(te, a);
        cr_log_info("a9a: serial FTRL %.3f%%, 2 core replicas (sync-every "
                    "%llu) %.3f%%", want, (unsigned long long)syncs[k], got);
        cr_assert_geq(got, want - 0.5, "sync-every %llu: %.3f%% against "
                      "serial's %.3f%%", (unsigned long long)syncs[k], got,
                      want);
        hog_model_free(a);
        hog_model_free(b);
    }
    hog_train_opts r;
    hog_train_opts_init(&r); /* the library's defaults: the schedule unset */
    r.algo = HOG_ALGO_HOGWILD;
    r.replicas = HOG_REPLICAS_NODE;
    cr_assert_eq(hog_train_opts_resolve(&r, NULL, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(r.schedule, HOG_SCHED_FTRL);
    hog_model_free(serial);
    hog_data_free(tr);
    hog_data_free(te);
}

/* K classes, one-vs-rest: each class's binary problem runs the same
 * kernel; on a planted 4-class problem FTRL predicts the training labels
 * about as well as AdaGrad does. */
static double train_accuracy(const hog_data *d, const hog_model *m)
{
    uint64_t n = d->m.rows, right = 0;
    double *p = malloc(n * sizeof *p);
    hog_err err;
    cr_assert_eq(hog_model_predict(m, d, p, &err), HOG_OK, "%s", err.msg);
    for (uint64_t i = 0; i < n; i++)
        right += p[i] == (double)d->m.y[i];
    free(p);
    return (double)right / (double)n;
}

Test(ftrl, k_classes_one_vs_rest)
{
    hog_err err = { { 0 } };
    hog_data *d = th_synth(&(struct th_synth){
        .rows = 2000, .features = 60, .layout = TH_SYNTH_SKEW,
        .nnz_min = 3, .nnz_max = 14, .seed = 8, .stream = 5,
        .first = { .normal = true } }, &err);
    cr_assert(d, "%s", err.msg);
    cr_assert(th_label_argmax(d, 4, 10, 1, 99));
    hog_train_opts o = ftrl_opts(HOG_LOSS_LOGISTIC, 0, 1e-5);
    o.epochs = 5;
    hog_model *f = train(d, &o);
    cr_assert_eq(hog_model_classes(f, NULL), 4u);
    o.schedule = HOG_SCHED_ADAGRAD;
    hog_model *a = train(d, &o);
    double fa = train_accuracy(d, f), aa = train_accuracy(d, a);
    cr_log_info("4 classes: ftrl %.4f, adagrad %.4f", fa, aa);
    cr_assert_gt(fa, 0.7, "ftrl: %g", fa);
    cr_assert_gt(fa, aa - 0.03, "ftrl %g against adagrad %g", fa, aa);
    hog_model_free(f), hog_model_free(a);
    hog_data_free(d);
}

/* Hogwild!'s checkpoints after whole epochs hold FTRL's sums: at one
 * thread a run stopped after epoch 2 and resumed equals the uninterrupted
 * one bit for bit (the serial trainer's, stopped anywhere, are in
 * test_checkpoint.c's configurations). */
Test(ftrl, hogwild_resumed_after_an_epoch_equals_uninterrupted)
{
    char dir[1024], ck[1100];
    cr_assert(th_tmpdir(dir, sizeof dir));
    snprintf(ck, sizeof ck, "%s/ftrl.ckpt", dir);
    hog_data *d = synth(500, 40, 0.25, false, 4);
    hog_train_opts o = ftrl_opts(HOG_LOSS_LOGISTIC, 1e-4, 1e-3);
    o.algo = HOG_ALGO_HOGWILD;
    o.threads = 1;
    o.epochs = 3;
    hog_model *ref = train(d, &o);
    hog_train_opts a = o;
    a.epochs = 2;
    a.checkpoint = ck;
    a.checkpoint_epochs = 1;
    hog_model *part = train(d, &a);
    hog_train_opts b = o;
    b.resume = ck;
    hog_model *res = train(d, &b);
    cr_assert(memcmp(hog_model_weights(res), hog_model_weights(ref),
                     (d->n_features + 1) * sizeof(float)) == 0,
              "the resumed run differs from the uninterrupted one");
    cr_assert(memcmp(hog_model_weights(part), hog_model_weights(ref),
                     (d->n_features + 1) * sizeof(float)) != 0,
              "2 epochs and 3 give the same model: no test");
    hog_model_free(ref), hog_model_free(part), hog_model_free(res);
    hog_data_free(d);
}

/* ---- real data: the command's default against AdaGrad -----------------------
 * The command's default (FTRL-Proximal at l2 HOG_FTRL_L2_DEFAULT; eta 0.3,
 * 5 epochs, serial) is held to at least the test accuracy of the former
 * default, AdaGrad at l2 1e-5 (docs/TRAINING.md, "The default"): the mean
 * over seeds 1..SEEDS of each, since one seed's row order moves a test
 * accuracy by 0.05-0.15 point. Measured with 32 seeds (2026-12-03): a9a
 * 84.932% (AdaGrad) and 84.932% (FTRL), ijcnn1 91.745 and 91.756,
 * news20.binary 95.173 and 95.294, reuters money-fx 97.106 and 97.105
 * (standard errors 0.005-0.016). The margin allowed below AdaGrad's mean,
 * 0.05 point, is about two standard errors of the difference at 8 seeds;
 * FTRL at l2 1e-5 falls 0.13 point short on news20.binary. */
enum { SEEDS = 8 };

static double mean_accuracy(const hog_data *tr, const hog_data *te,
                            hog_schedule sched, double l2)
{
    double sum = 0;
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        hog_train_opts o;
        th_opts_init(&o);
        o.schedule = sched;
        o.l2 = l2;
        o.seed = seed;
        hog_model *m;
        hog_err err;
        cr_assert_eq(hog_train(tr, NULL, &o, NULL, &m, &err), HOG_OK, "%s",
                     err.msg);
        uint64_t right = 0, n = hog_data_rows(te);
        const float *w = hog_model_weights(m);
        for (uint64_t i = 0; i < n; i++) {
            struct hog_row r = hog_csr_row(&te->m, i);
            double sc = w[m->n_features] * o.bias;
            for (uint32_t k = 0; k < r.nnz; k++)
                if (r.idx[k] < m->n_features)
                    sc += w[r.idx[k]] * (double)r.val[k];
            right += (sc > 0) == hog_label_positive(tr, r.y);
        }
        sum += 100.0 * (double)right / (double)n;
        hog_model_free(m);
    }
    return sum / SEEDS;
}

static void default_reaches_adagrad(const char *train_name,
                                    const char *test_name)
{
    const char *trp = th_data(train_name), *tep = th_data(test_name);
    if (!trp || !tep)
        cr_skip_test("real data %s / %s not found under HOGTRAIN_DATA; "
                     "skipping", train_name, test_name);
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    hog_data *tr, *te;
    hog_err err;
    cr_assert_eq(hog_data_load(trp, &lo, &tr, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_data_load(tep, &lo, &te, &err), HOG_OK, "%s", err.msg);
    double ada = mean_accuracy(tr, te, HOG_SCHED_ADAGRAD, 1e-5);
    double ftrl = mean_accuracy(tr, te, HOG_SCHED_FTRL, HOG_FTRL_L2_DEFAULT);
    cr_log_info("%s: test accuracy over %d seeds: ftrl %.4f%%, adagrad "
                "%.4f%%", train_name, SEEDS, ftrl, ada);
    cr_assert_geq(ftrl, ada - 0.05, "%s: ftrl %.4f%% against adagrad %.4f%%",
                  train_name, ftrl, ada);
    hog_data_free(tr);
    hog_data_free(te);
}

Test(ftrl, a9a_default_reaches_adagrads_accuracy, .timeout = 60)
{
    default_reaches_adagrad("a9a", "a9a.t");
}

Test(ftrl, ijcnn1_default_reaches_adagrads_accuracy, .timeout = 60)
{
    default_reaches_adagrad("ijcnn1", "ijcnn1.t");
}

Test(ftrl, news20_binary_default_reaches_adagrads_accuracy, .timeout = 240)
{
    TH_HEAVY_OR_SKIP();
    default_reaches_adagrad("news20.binary.train.svm",
                            "news20.binary.test.svm");
}

Test(ftrl, reuters_moneyfx_default_reaches_adagrads_accuracy, .timeout = 60)
{
    default_reaches_adagrad("reuters_moneyfx.trn", "reuters_moneyfx.tst");
}
