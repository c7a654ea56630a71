/* K classes: the label scan, one-vs-rest for every algorithm (each class
 * equal to the binary problem trained alone), the K-class metrics against
 * a count by hand, Cyclades' model the same at every thread count, the
 * refusals, and the accuracy on news20 against LIBLINEAR. */
#include <criterion/criterion.h>

#include "core/core.h"
#include "core/metrics.h"
#include "train/train.h"
#include "helpers.h"
#include "synth.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K 4

/* A skewed sparse problem whose label is the arg-max of K planted random
 * models' margins, as the label values 10, 20, ... (first appearance in
 * the rows' order decides the classes' order, which the tests check). */
static hog_data *k_classes(uint64_t rows, uint32_t nf, uint64_t seed)
{
    /* the planted models: the same for every seed */
    hog_data *d = th_k_classes(rows, nf, K, 10, seed);
    cr_assert_neq(d->labels, HOG_LABELS_BINARY);
    return d;
}

/* Every algorithm, for the tests that run each. */
static const hog_algo every_algo[] = { HOG_ALGO_SERIAL, HOG_ALGO_HOGWILD,
                                       HOG_ALGO_CYCLADES, HOG_ALGO_SCD,
                                       HOG_ALGO_DCD };

/* h: the hooks, or NULL */
static hog_model *train_hooked(const hog_data *d, const hog_train_opts *o,
                               const hog_train_hooks *h)
{
    hog_model *m;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_train(d, NULL, o, h, &m, &err), HOG_OK, "%s", err.msg);
    return m;
}

static hog_model *train(const hog_data *d, const hog_train_opts *o)
{
    return train_hooked(d, o, NULL);
}

Test(multiclass, classes_in_order_of_first_appearance)
{
    hog_data *d = k_classes(500, 50, 3);
    double *labels;
    uint32_t k;
    hog_err err;
    cr_assert_eq(hog_data_classes(d, 100, &labels, &k, &err), HOG_OK);
    cr_assert_eq(k, K);
    /* by hand: the first row of each new label */
    double seen[K];
    uint32_t n = 0;
    for (uint64_t i = 0; i < d->m.rows; i++) {
        bool known = false;
        for (uint32_t c = 0; c < n; c++)
            known |= seen[c] == d->m.y[i];
        if (!known)
            seen[n++] = d->m.y[i];
    }
    cr_assert_eq(n, K);
    for (uint32_t c = 0; c < K; c++)
        cr_assert_eq(labels[c], seen[c]);
    free(labels);
    /* more classes than the bound: a sentence naming the bound */
    cr_assert_eq(hog_data_classes(d, 3, &labels, &k, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "more than 3 distinct values"), "%s", err.msg);
    hog_data_free(d);
}

/* d as the binary problem "label == label" (+1, else -1), its labels
 * written into y (d's rows of them); the arrays shared. */
static hog_data binary_view(const hog_data *d, double label, float *y)
{
    hog_data view = *d;
    memset(view.mem, 0, sizeof view.mem);
    view.release = NULL;
    for (uint64_t i = 0; i < d->m.rows; i++)
        y[i] = d->m.y[i] == label ? 1.0f : -1.0f;
    view.m.y = y;
    hog_data_scan_labels(&view);
    return view;
}

/* Whether every class vector of m (trained on d with o) is the binary
 * model of "label == c" trained alone with o at one thread, bit for bit. */
static void assert_classes_are_binary(const hog_data *d, const hog_model *m,
                                      const hog_train_opts *o,
                                      const char *what)
{
    uint64_t len = hog_model_vector_len(m);
    const hog_data *va = o->validation;
    float *y = malloc(d->m.rows * sizeof *y);
    float *vy = va ? malloc(va->m.rows * sizeof *vy) : NULL;
    cr_assert(y && (!va || vy));
    for (uint32_t c = 0; c < m->n_classes; c++) {
        hog_data view = binary_view(d, m->classes[c], y), vview;
        hog_train_opts b = *o;
        b.threads = 1;
        if (va) { /* the validation set as the same binary problem */
            vview = binary_view(va, m->classes[c], vy);
            b.validation = &vview;
        }
        hog_model *bm = train(&view, &b);
        cr_assert_eq(memcmp(bm->w, m->w + c * len, len * sizeof *bm->w), 0,
                     "%s: class %u differs from its binary problem", what, c);
        hog_model_free(bm);
    }
    free(y);
    free(vy);
}

/* Each class's vector is the binary model of "label == c" trained alone
 * with the same options: for every algorithm, with one thread per class
 * (four classes over two threads) and with the classes one after another
 * on two threads. */
Test(multiclass, ovr_class_equals_its_binary_problem, .timeout = 120)
{
    hog_data *d = k_classes(3000, 300, 4);
    for (size_t a = 0; a < sizeof every_algo / sizeof *every_algo; a++) {
        hog_train_opts o;
        th_opts_init(&o);
        o.algo = every_algo[a];
        o.epochs = 3;
        o.threads = 2; /* K = 4 >= 2: a class per thread, each on one */
        hog_model *m = train(d, &o);
        cr_assert_eq(m->n_classes, K);
        char what[32];
        snprintf(what, sizeof what, "algorithm %d", (int)every_algo[a]);
        assert_classes_are_binary(d, m, &o, what);
        hog_model_free(m);
    }
    hog_data_free(d);
}

/* FTRL-Proximal's one-thread runs step their classes together
 * (hog_sgd_run_wide); each class is still its binary problem's model bit
 * for bit: serial and Hogwild!, one and three threads, the classification
 * losses, l1, no bias, 40 classes (two groups), and rows longer than the
 * kernel's blocks of 2048 entries (FTRL_BLOCK). */
Test(multiclass, ftrl_classes_stepped_together_equal_their_binary_problems,
     .timeout = 120)
{
    hog_err err = { { 0 } };
    hog_data *d = k_classes(2000, 300, 6);
    hog_data *wide = th_synth(&(struct th_synth){
        .rows = 300, .features = 12000, .layout = TH_SYNTH_SKEW,
        .nnz_min = 1000, .nnz_max = 6000, .seed = 7, .stream = 5,
        .first = { .normal = true } }, &err);
    cr_assert(wide, "%s", err.msg);
    cr_assert(th_label_argmax(wide, 5, 1, 2, 99));
    hog_data *many = k_classes(1500, 200, 8);
    cr_assert(th_label_argmax(many, 40, 1, 3, 99));
    const struct {
        const hog_data *d;
        hog_algo algo;
        hog_loss loss;
        unsigned threads;
        double l1, bias;
        uint32_t k;
        bool weighted;
    } runs[] = {
        { d, HOG_ALGO_SERIAL, HOG_LOSS_LOGISTIC, 1, 0, 1, K, false },
        { d, HOG_ALGO_HOGWILD, HOG_LOSS_HINGE, 3, 0, 1, K, false },
        { d, HOG_ALGO_HOGWILD, HOG_LOSS_SQHINGE, 2, 1e-3, 0, K, false },
        { wide, HOG_ALGO_SERIAL, HOG_LOSS_HINGE, 1, 1e-4, 1, 5, false },
        { wide, HOG_ALGO_HOGWILD, HOG_LOSS_LOGISTIC, 2, 0, 1, 5, false },
        { many, HOG_ALGO_SERIAL, HOG_LOSS_LOGISTIC, 1, 0, 1, 40, false },
        { d, HOG_ALGO_HOGWILD, HOG_LOSS_LOGISTIC, 2, 0, 1, K, true },
        { wide, HOG_ALGO_SERIAL, HOG_LOSS_HINGE, 1, 0, 1, 5, true },
    };
    /* row weights 0, 0.5, 1, ..., 2.5 (zeros: rows that step nothing) */
    float *rw = malloc(d->m.rows * sizeof *rw);
    cr_assert(rw);
    for (uint64_t i = 0; i < d->m.rows; i++)
        rw[i] = (float)(i * 7 % 6) * 0.5f;
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        hog_train_opts o;
        th_opts_init(&o);
        o.loss = runs[i].loss;
        th_opts_step_for_loss(&o);
        o.schedule = HOG_SCHED_FTRL;
        o.algo = runs[i].algo;
        o.threads = runs[i].threads;
        o.l1 = runs[i].l1;
        o.bias = runs[i].bias;
        o.epochs = 2;
        o.row_weights = runs[i].weighted ? rw : NULL;
        hog_model *m = train(runs[i].d, &o);
        cr_assert_eq(m->n_classes, runs[i].k);
        char what[32];
        snprintf(what, sizeof what, "run %zu", i);
        assert_classes_are_binary(runs[i].d, m, &o, what);
        hog_model_free(m);
    }
    /* a warm start: the classes stepped together from a model's vectors
     * equal the classes trained one at a time from them (as a run with a
     * checkpoint file trains them) */
    hog_train_opts o;
    th_opts_init(&o);
    o.schedule = HOG_SCHED_FTRL;
    o.l1 = 1e-4;
    o.epochs = 1;
    hog_model *w0 = train(d, &o);
    o.warm_start = w0;
    o.epochs = 2;
    hog_model *a = train(d, &o);
    char dir[1024], ck[1100];
    cr_assert(th_tmpdir(dir, sizeof dir));
    snprintf(ck, sizeof ck, "%s/ck", dir);
    o.checkpoint = ck;
    hog_model *b = train(d, &o);
    uint64_t n = (uint64_t)K * hog_model_vector_len(a);
    cr_assert_eq(memcmp(a->w, b->w, n * sizeof *a->w), 0,
                 "warm start: stepped together differs from one at a time");
    cr_assert_neq(memcmp(a->w, w0->w, n * sizeof *a->w), 0);
    hog_model_free(w0);
    hog_model_free(a);
    hog_model_free(b);
    /* early stopping, each class on its own validation loss: noisy labels
     * and a large step, so that classes stop at different epochs */
    hog_data *noisy = k_classes(2000, 100, 12);
    hog_data *valid = k_classes(600, 100, 13);
    float *ny = (float *)noisy->m.y;
    for (uint64_t i = 0; i < noisy->m.rows; i += 4)
        ny[i] = ny[(i * 7 + 3) % noisy->m.rows];
    for (unsigned threads = 1; threads <= 2; threads++) {
        th_opts_init(&o);
        o.schedule = HOG_SCHED_FTRL;
        o.eta = 5;
        o.l2 = 0;
        o.epochs = 30;
        o.early_stop = 2;
        o.algo = HOG_ALGO_HOGWILD;
        o.threads = threads;
        o.validation = valid;
        hog_valid_stats vs = { .size = sizeof vs };
        hog_train_hooks hk = { .size = sizeof hk, .valid_stats = &vs };
        hog_model *e = train_hooked(noisy, &o, &hk);
        cr_assert(vs.early_stopped && vs.classes_stopped >= 1,
                  "%u classes stopped", vs.classes_stopped);
        cr_assert_lt(vs.epochs_run, 30);
        assert_classes_are_binary(noisy, e, &o, "early stopping");
        hog_model_free(e);
    }
    hog_data_free(noisy);
    hog_data_free(valid);
    free(rw);
    hog_data_free(d);
    hog_data_free(wide);
    hog_data_free(many);
}

/* Two label values are the binary problem, whatever the multiclass mode
 * asks and whatever the values are: for every algorithm the weights are
 * those of the same rows labelled +1/-1, bit for bit, and the model has no
 * classes. */
Test(multiclass, two_classes_are_the_binary_path, .timeout = 60)
{
    hog_err err = { { 0 } };
    hog_data *d = th_synth(&(struct th_synth){
        .rows = 1500, .features = 200, .layout = TH_SYNTH_SKEW,
        .nnz_min = 3, .nnz_max = 14, .seed = 6, .stream = 5,
        .first = { .normal = true } }, &err);
    cr_assert(d, "%s", err.msg);
    /* the same rows labelled 7 and 3 (7 where the planted label is +1) */
    hog_data two = *d;
    memset(two.mem, 0, sizeof two.mem);
    two.release = NULL;
    float *y = malloc(d->m.rows * sizeof *y);
    cr_assert(y);
    for (uint64_t i = 0; i < d->m.rows; i++)
        y[i] = d->m.y[i] > 0 ? 7.0f : 3.0f;
    two.m.y = y;
    hog_data_scan_labels(&two);
    cr_assert_eq(two.labels, HOG_LABELS_BINARY);
    for (size_t a = 0; a < sizeof every_algo / sizeof *every_algo; a++) {
        hog_train_opts o;
        th_opts_init(&o);
        o.algo = every_algo[a];
        o.epochs = 3;
        o.threads = 1;
        hog_model *ref = train(d, &o);
        for (int mode = HOG_MULTICLASS_OVR; mode <= HOG_MULTICLASS_SOFTMAX;
             mode++) {
            hog_train_opts b = o;
            b.multiclass = (hog_multiclass)mode;
            hog_model *m = train(&two, &b);
            cr_assert_eq(m->n_classes, 0u, "algorithm %d: %u classes",
                         (int)every_algo[a], m->n_classes);
            cr_assert_eq(m->label_pos, 7.0);
            cr_assert_eq(memcmp(m->w, ref->w, (d->n_features + 1) *
                                                  sizeof *m->w),
                         0, "algorithm %d, multiclass mode %d: the labels "
                         "7/3 give other weights than +1/-1", (int)every_algo[a],
                         mode);
            hog_model_free(m);
        }
        hog_model_free(ref);
    }
    free(y);
    hog_data_free(d);
}

/* Cyclades' model of every class is the same at every thread count, so
 * the K-class model is too, whichever way the classes meet the threads. */
Test(multiclass, cyclades_same_model_at_1_2_3_8_threads, .timeout = 60)
{
    hog_data *d = k_classes(4000, 400, 5);
    hog_train_opts o;
    th_opts_init(&o);
    o.algo = HOG_ALGO_CYCLADES;
    o.epochs = 2;
    o.threads = 1;
    hog_model *ref = train(d, &o);
    const unsigned threads[] = { 2, 3, 8 };
    for (size_t t = 0; t < 3; t++) {
        o.threads = threads[t];
        o.oversubscribe = 1;
        hog_model *m = train(d, &o);
        cr_assert_eq(memcmp(m->w, ref->w, hog_model_len(m) * sizeof *m->w), 0,
                     "%u threads", threads[t]);
        hog_model_free(m);
    }
    hog_model_free(ref);
    hog_data_free(d);
}

struct last_stats {
    hog_epoch_stats s;
    unsigned calls;
};

static void keep_stats(void *ctx, unsigned epoch, unsigned epochs,
                       uint64_t done, uint64_t total,
                       const hog_epoch_stats *s)
{
    (void)epoch, (void)epochs, (void)done, (void)total;
    struct last_stats *l = ctx;
    if (s) {
        l->s = *s;
        l->calls++;
    }
}

/* Accuracy, macro-F1 and the log-loss of the report against a count by
 * hand from the model's scores; a label the model never saw counts wrong. */
Test(multiclass, metrics_equal_a_count_by_hand, .timeout = 60)
{
    hog_data *d = k_classes(3000, 300, 6), *t = k_classes(1000, 300, 7);
    float *ty = (float *)t->m.y;
    ty[0] = 77.0f; /* a class the training set has not */
    hog_train_opts o;
    th_opts_init(&o);
    struct last_stats l = { 0 };
    hog_train_hooks hk = { .size = sizeof hk };
    hk.progress = keep_stats;
    hk.progress_ctx = &l;
    hog_model *m;
    hog_err err;
    cr_assert_eq(hog_train(d, t, &o, &hk, &m, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(l.s.classes, K);
    /* one-vs-rest reports once, after every class's last epoch */
    cr_assert_eq(l.calls, 1);
    cr_assert_eq(l.s.epoch, o.epochs);

    double *s = malloc(t->m.rows * K * sizeof *s);
    cr_assert(s);
    cr_assert_eq(hog_model_scores(m, t, s, &err), HOG_OK);
    uint64_t tp[K] = { 0 }, pred[K] = { 0 }, act[K] = { 0 }, right = 0, n = 0;
    double ll = 0;
    for (uint64_t i = 0; i < t->m.rows; i++) {
        int q = 0, y = -1;
        for (int c = 1; c < K; c++)
            q = s[i * K + c] > s[i * K + q] ? c : q;
        for (int c = 0; c < K; c++)
            y = m->classes[c] == t->m.y[i] ? c : y;
        pred[q]++;
        if (y < 0)
            continue;
        act[y]++;
        right += q == y;
        tp[y] += q == y;
        /* OvR logistic: sigma(s_y) / sum sigma */
        double sum = 0;
        for (int c = 0; c < K; c++)
            sum += 1 / (1 + exp(-s[i * K + c]));
        ll -= log(1 / (1 + exp(-s[i * K + y])) / sum);
        n++;
    }
    double f1 = 0;
    for (int c = 0; c < K; c++)
        f1 += 2.0 * tp[c] / (double)(pred[c] + act[c]);
    cr_assert_eq(n, t->m.rows - 1);
    cr_assert_float_eq(l.s.test_accuracy, (double)right / t->m.rows, 1e-12);
    cr_assert_float_eq(l.s.test_macro_f1, f1 / K, 1e-12);
    cr_assert_float_eq(l.s.test_loss, ll / n, 1e-9);
    cr_assert_gt(l.s.test_accuracy, 0.6, "%g", l.s.test_accuracy);

    uint64_t conf[K * K];
    cr_assert_eq(hog_metrics_confusion(m, t, conf, &err), HOG_OK);
    uint64_t total = 0, diag = 0;
    for (int c = 0; c < K * K; c++)
        total += conf[c];
    for (int c = 0; c < K; c++)
        diag += conf[c * K + c];
    cr_assert_eq(total, n);
    cr_assert_eq(diag, right);

    double *labels = malloc(t->m.rows * sizeof *labels);
    cr_assert(labels);
    cr_assert_eq(hog_model_predict(m, t, labels, &err), HOG_OK);
    uint64_t same = 0;
    for (uint64_t i = 0; i < t->m.rows; i++)
        same += labels[i] == t->m.y[i];
    cr_assert_eq(same, right);
    free(labels);
    free(s);
    hog_model_free(m);
    hog_data_free(d);
    hog_data_free(t);
}

Test(multiclass, refusals_are_sentences)
{
    hog_data *d = k_classes(300, 30, 8);
    hog_train_opts o;
    th_opts_init(&o);
    hog_model *m;
    hog_err err;
    th_opts_init(&o);
    o.multiclass = HOG_MULTICLASS_SOFTMAX;
    o.loss = HOG_LOSS_HINGE;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "logistic loss"), "%s", err.msg);
    /* a distinct label on most rows: regression targets, refused */
    float *y0 = (float *)d->m.y;
    for (uint64_t i = 0; i < d->m.rows; i++)
        y0[i] = (float)i * 0.5f;
    hog_data_scan_labels(d);
    th_opts_init(&o);
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "--loss squared"), "%s", err.msg);
    /* one label value: not a classification problem */
    float *y = (float *)d->m.y;
    for (uint64_t i = 0; i < d->m.rows; i++)
        y[i] = 3.0f;
    hog_data_scan_labels(d);
    th_opts_init(&o);
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "one value only"), "%s", err.msg);
    hog_data_free(d);
}

/* The test accuracy (%) of K-class one-vs-rest training with o on the
 * named training and test files; c_one: LIBLINEAR's C = 1. */
static double ovr_accuracy(const char *train, const char *test, uint32_t k,
                           hog_train_opts o, bool c_one)
{
    TH_DATA_OR_SKIP(trp, train);
    TH_DATA_OR_SKIP(tep, test);
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    hog_data *tr, *te;
    hog_err err;
    cr_assert_eq(hog_data_load(trp, &lo, &tr, &err), HOG_OK, "%s", err.msg);
    lo.n_features = tr->n_features;
    cr_assert_eq(hog_data_load(tep, &lo, &te, &err), HOG_OK, "%s", err.msg);
    if (c_one)
        o.l2 = 1.0 / (double)tr->m.rows;
    struct last_stats l = { 0 };
    hog_train_hooks hk = { .size = sizeof hk };
    hk.progress = keep_stats;
    hk.progress_ctx = &l;
    hog_model *m;
    cr_assert_eq(hog_train(tr, te, &o, &hk, &m, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(m->n_classes, k);
    hog_model_free(m);
    hog_data_free(tr);
    hog_data_free(te);
    return 100.0 * l.s.test_accuracy;
}

/* news20 (20 classes, 11,314 x 62k... rows of tf-idf text), against
 * LIBLINEAR -s 1 (L2-loss SVM dual, C = 1, one-vs-rest):
 *     liblinear-train -s 1 -q news20.train.svm m; liblinear-predict
 *     news20.test.svm m out   ->  86.26%
 * hogtrain's one-vs-rest must come within half a point: the SGD default
 * with the hinge loss, and dual CD with LIBLINEAR's loss and C. */
static double news20_accuracy(hog_train_opts o, bool c_one)
{
    return ovr_accuracy("news20.train.svm", "news20.test.svm", 20, o, c_one);
}

Test(multiclass, news20_ovr_sgd_hinge_within_half_a_point, .timeout = 120)
{
    TH_HEAVY_OR_SKIP();
    hog_train_opts o;
    th_opts_init(&o);
    o.loss = HOG_LOSS_HINGE;
    th_opts_step_for_loss(&o);
    double acc = news20_accuracy(o, false);
    cr_assert_geq(acc, 86.26 - 0.5, "%.2f%%", acc);
}

Test(multiclass, news20_ovr_dcd_within_half_a_point, .timeout = 120)
{
    TH_HEAVY_OR_SKIP();
    hog_train_opts o;
    th_opts_init(&o);
    o.algo = HOG_ALGO_DCD;
    o.loss = HOG_LOSS_SQHINGE;
    o.update = HOG_UPDATE_ATOMIC;
    o.epochs = 50;
    o.tol = 0.1;
    double acc = news20_accuracy(o, true);
    cr_assert_geq(acc, 86.26 - 0.5, "%.2f%%", acc);
}

/* Fashion-MNIST (10 classes, 60,000 x 784 raw pixel values 0..255),
 * against LIBLINEAR -s 1 on the same unscaled files:
 *     liblinear-train -s 1 -q fashion-mnist.train.svm m   (607 s here, at
 *     its iteration limit); liblinear-predict fashion-mnist.test.svm m out
 *     ->  70.48%
 * hogtrain's one-vs-rest defaults (logistic, AdaGrad, 5 epochs; 20 s on
 * 2 cores) must reach it within half a point (they give 80.0%). */
Test(multiclass, fashion_ovr_defaults_reach_liblinear, .timeout = 240)
{
    TH_HEAVY_OR_SKIP();
    hog_train_opts o;
    th_opts_init(&o);
    double acc = ovr_accuracy("fashion-mnist.train.svm",
                              "fashion-mnist.test.svm", 10, o, false);
    cr_assert_geq(acc, 70.48 - 0.5, "%.2f%%", acc);
}

/* Stops a run (the cancel flag, as SIGINT sets it) once `after` class
 * epochs are done. */
struct stopper {
    volatile sig_atomic_t flag;
    uint64_t after; /* 0: never stop; count the class epochs run */
    uint64_t ran;
};

static void stop_after(void *ctx, unsigned epoch, unsigned epochs,
                       uint64_t done, uint64_t total, const hog_epoch_stats *s)
{
    (void)epoch, (void)epochs, (void)total;
    struct stopper *p = ctx;
    if (!s && done > p->ran)
        p->ran = done;
    if (!s && p->after && done >= p->after)
        p->flag = 1;
}

/* Runs b with checkpoints to ck until the cancel flag (set by fn) stops it
 * with a checkpoint written. */
static void train_until_stopped(const hog_data *d, hog_train_opts b,
                                const char *ck, volatile sig_atomic_t *flag,
                                hog_progress_fn fn, void *ctx)
{
    b.checkpoint = ck;
    hog_train_hooks hb = { .size = sizeof hb };
    hb.cancel = flag;
    hb.progress = fn;
    hb.progress_ctx = ctx;
    hog_model *m;
    hog_err err;
    cr_assert_eq(hog_train(d, NULL, &b, &hb, &m, &err), HOG_EINTR, "%s", err.msg);
    cr_assert(strstr(err.msg, "checkpoint written"), "%s", err.msg);
}

/* One-vs-rest stopped anywhere (a class epoch's end, or the row
 * checkpoints in between), then resumed, gives the uninterrupted model bit
 * for bit: serial and Cyclades. */
Test(multiclass, ovr_stopped_and_resumed_equals_uninterrupted, .timeout = 120)
{
    char dir[256], ck[300];
    cr_assert(th_tmpdir(dir, sizeof dir));
    snprintf(ck, sizeof ck, "%s/ck", dir);
    hog_data *d = k_classes(2000, 200, 9);
    const hog_algo algos[] = { HOG_ALGO_SERIAL, HOG_ALGO_CYCLADES };
    unsigned seed = 777;
    for (size_t a = 0; a < 2; a++) {
        hog_train_opts o;
        th_opts_init(&o);
        o.algo = algos[a];
        o.epochs = 3;
        o.threads = 2;
        hog_model *ref = train(d, &o);
        for (int trial = 0; trial < 4; trial++) {
            struct stopper s = { 0, 1 + (uint64_t)rand_r(&seed) % (K * 3 - 1),
                                 0 };
            hog_train_opts b = o;
            b.checkpoint_rows = 1 + (uint64_t)rand_r(&seed) % 3000;
            train_until_stopped(d, b, ck, &s.flag, stop_after, &s);
            hog_model *m;
            hog_train_opts r = o;
            r.resume = ck;
            struct stopper count = { 0, 0, 0 };
            hog_train_hooks hr = { .size = sizeof hr, .progress = stop_after,
                                   .progress_ctx = &count };
            m = train_hooked(d, &r, &hr);
            /* it went on from the checkpoint: the finished classes and
             * epochs did not run again */
            cr_assert_lt(count.ran, K * 3, "%llu class epochs",
                         (unsigned long long)count.ran);
            cr_assert_geq(count.ran + s.after, K * 3, "%llu + %llu",
                          (unsigned long long)count.ran,
                          (unsigned long long)s.after);
            cr_assert_eq(memcmp(m->w, ref->w, hog_model_len(m) * sizeof *m->w),
                         0, "algorithm %d stopped after %llu class epochs",
                         (int)algos[a], (unsigned long long)s.after);
            hog_model_free(m);
        }
        hog_model_free(ref);
    }
    hog_data_free(d);
}

/* Stops a run at the end of epoch `after` (the front door's ticks inside
 * an epoch come at most every 0.1 s, too seldom to aim at a row). */
struct epoch_stopper {
    volatile sig_atomic_t flag;
    unsigned after, first_epoch; /* first_epoch: the first epoch it saw */
};

static void stop_at_epoch(void *ctx, unsigned epoch, unsigned epochs,
                          uint64_t done, uint64_t total,
                          const hog_epoch_stats *s)
{
    (void)epochs, (void)done, (void)total;
    struct epoch_stopper *p = ctx;
    if (!p->first_epoch)
        p->first_epoch = epoch;
    if (s && epoch == p->after)
        p->flag = 1;
}

/* Softmax training stopped after any epoch, or inside the first (the flag
 * up from the start: the checkpoint of the start), then resumed, gives the
 * uninterrupted model bit for bit: serial and Hogwild! at one thread, and
 * Cyclades stopped at 2 threads and resumed at 3 (the uninterrupted run at
 * 1), with AdaGrad's per-feature sums and with a decaying shared
 * schedule. */
Test(multiclass, softmax_stopped_and_resumed_equals_uninterrupted,
     .timeout = 120)
{
    char dir[256], ck[300];
    cr_assert(th_tmpdir(dir, sizeof dir));
    snprintf(ck, sizeof ck, "%s/ck", dir);
    hog_data *d = k_classes(2000, 200, 10);
    for (int c = 0; c < 6; c++) {
        hog_train_opts o;
        th_opts_init(&o);
        o.multiclass = HOG_MULTICLASS_SOFTMAX;
        static const hog_algo algos[] = { HOG_ALGO_SERIAL, HOG_ALGO_HOGWILD,
                                          HOG_ALGO_CYCLADES };
        o.algo = algos[c / 2];
        o.threads = 1;
        o.epochs = 4;
        if (c & 1) { /* the step size depends on the global step */
            o.schedule = HOG_SCHED_INVSCALING;
            o.eta = 0.5;
            o.l1 = 1e-4;
        }
        hog_model *ref = train(d, &o);
        for (unsigned after = 0; after <= o.epochs; after++) {
            struct epoch_stopper s = { after == 0, after, 0 };
            hog_train_opts b = o;
            if (o.algo == HOG_ALGO_CYCLADES)
                b.threads = 2;
            train_until_stopped(d, b, ck, &s.flag, stop_at_epoch, &s);
            hog_model *m;
            hog_err err;
            hog_train_opts r = o;
            r.resume = ck;
            if (o.algo == HOG_ALGO_CYCLADES)
                r.threads = 3;
            if (after == 0) { /* stopped again at once: still the start */
                struct epoch_stopper again = { 1, 0, 0 };
                hog_train_opts b2 = r;
                b2.checkpoint = ck;
                hog_train_hooks hb2 = { .size = sizeof hb2 };
                hb2.cancel = &again.flag;
                cr_assert_eq(hog_train(d, NULL, &b2, &hb2, &m, &err), HOG_EINTR);
                cr_assert(strstr(err.msg, "at row 0 of epoch 1"), "%s",
                          err.msg);
            }
            struct epoch_stopper seen = { 0, 0, 0 };
            hog_train_hooks hr = { .size = sizeof hr, .progress = stop_at_epoch,
                                   .progress_ctx = &seen };
            m = train_hooked(d, &r, &hr);
            /* it went on after the epochs done, not from the start (none
             * left after the last: the checkpoint is the model) */
            cr_assert_eq(seen.first_epoch, after < o.epochs ? after + 1 : 0,
                         "stopped after epoch %u, resumed at %u", after,
                         seen.first_epoch);
            cr_assert_eq(memcmp(m->w, ref->w, hog_model_len(m) * sizeof *m->w),
                         0, "configuration %d stopped after epoch %u", c,
                         after);
            hog_model_free(m);
        }
        hog_model_free(ref);
    }
    hog_data_free(d);
}

/* A checkpoint of one-vs-rest is not resumed as softmax training, nor
 * the other way round; row checkpoints are refused with a sentence. */
Test(multiclass, softmax_checkpoints_refuse_other_runs, .timeout = 60)
{
    char dir[256], ck[300];
    cr_assert(th_tmpdir(dir, sizeof dir));
    snprintf(ck, sizeof ck, "%s/ck", dir);
    hog_data *d = k_classes(600, 40, 11);
    hog_train_opts o;
    th_opts_init(&o);
    o.epochs = 2;
    o.checkpoint = ck;
    hog_model *m = train(d, &o); /* one-vs-rest writes ck */
    hog_model_free(m);
    hog_train_opts r;
    th_opts_init(&r);
    r.epochs = 3;
    r.resume = ck;
    r.multiclass = HOG_MULTICLASS_SOFTMAX;
    hog_err err;
    cr_assert_eq(hog_train(d, NULL, &r, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "--multiclass ovr (or two classes), not "
                              "softmax"), "%s", err.msg);
    o.multiclass = HOG_MULTICLASS_SOFTMAX;
    m = train(d, &o); /* softmax writes ck */
    hog_model_free(m);
    r.multiclass = HOG_MULTICLASS_OVR;
    cr_assert_eq(hog_train(d, NULL, &r, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "--multiclass softmax, not ovr"), "%s",
              err.msg);
    o.checkpoint_rows = 100;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_ENOTSUP);
    cr_assert(strstr(err.msg, "after whole epochs only"), "%s", err.msg);
    hog_data_free(d);
}

/* `hogtrain objective` of a LIBLINEAR one-vs-rest model is LIBLINEAR's
 * objective summed over the classes: liblinear-train -s 1 prints each
 * class's dual objective, which at -e 1e-4 equals the primal's to about
 * 1e-7 (with the sign of the minimised dual: primal = -dual). abalone:
 * 28 classes. */
Test(multiclass, objective_of_a_liblinear_model_sums_its_classes,
     .timeout = 60)
{
    TH_LIBLINEAR_OR_SKIP();
    TH_DATA_OR_SKIP(path, "abalone_scale");
    char dir[256], out[1 << 16];
    cr_assert(th_tmpdir(dir, sizeof dir));
    cr_assert_eq(th_run(out, sizeof out, "liblinear-train -s 1 -e 0.0001 "
                        "%s %s/m", path, dir), 0, "%s", out);
    double dual = 0;
    int classes = 0;
    for (const char *p = out; (p = strstr(p, "Objective value = ")); classes++) {
        p += strlen("Objective value = ");
        dual += strtod(p, NULL);
    }
    cr_assert_eq(classes, 28);
    cr_assert_eq(th_run(out, sizeof out, "%s objective -q --loss sqhinge "
                        "--C 1 %s/m %s", th_bin(), dir, path), 0, "%s", out);
    const char *l = strstr(out, "liblinear_objective ");
    cr_assert(l, "%s", out);
    double ours = strtod(l + strlen("liblinear_objective "), NULL);
    cr_assert_float_eq(ours, -dual, 1e-6 * -dual, "%.10g vs %.10g", ours,
                       -dual);
}

/* hog_train_opts.classes: the model's classes in the given order; a
 * training label outside them, or fewer than 3, refused. */
Test(multiclass, given_classes)
{
    char dir[512];
    th_tmpdir(dir, sizeof dir);
    static const char text[] = "1 1:1\n2 2:1\n3 3:1\n1 1:1 2:1\n2 2:1 3:1\n"
                               "3 1:1 3:1\n";
    const char *path = th_write(dir, "k3.svm", text, sizeof text - 1);
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_data_load(path, &lo, &d, &err), HOG_OK, "%s", err.msg);
    hog_train_opts o;
    th_opts_init(&o);
    o.threads = 1;
    const double order[3] = { 3, 1, 2 }, other[3] = { 1, 2, 5 };
    o.classes = order;
    o.n_classes = 3;
    hog_model *m = NULL;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_OK, "%s", err.msg);
    const double *cl;
    cr_assert_eq(hog_model_classes(m, &cl), 3u);
    cr_assert(cl[0] == 3 && cl[1] == 1 && cl[2] == 2);
    hog_model_free(m);
    o.classes = other;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "label 3 is none of the 3 given classes"), "%s",
              err.msg);
    o.classes = order;
    o.n_classes = 2;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "must be 3 to"), "%s", err.msg);
    hog_data_free(d);
}

/* The K scores of a row from the scorer's feature-major copy are the
 * class-major vectors' scores to the last bit (each class's sum in the
 * row's order), with and without a bias, for models of one-vs-rest and
 * softmax, on rows whose features the model lacks too; and the copy is
 * made only within its cap. */
Test(multiclass, feature_major_scores_equal_class_major_scores)
{
    hog_data *d = k_classes(600, 700, 12);  /* more than a block of 256 */
    hog_data *t = k_classes(300, 760, 13);  /* 60 features the model lacks */
    for (int mode = 0; mode < 2; mode++)
        for (int bias = 0; bias < 2; bias++) {
            hog_train_opts o;
            th_opts_init(&o);
            o.multiclass = mode ? HOG_MULTICLASS_SOFTMAX : HOG_MULTICLASS_OVR;
            o.bias = bias ? 1.5 : 0.0;
            o.epochs = 2;
            hog_model *m = train(d, &o);
            const uint32_t k = hog_model_classes(m, NULL);
            struct hog_scorer fm, cm;
            hog_scorer_init(&fm, m, HOG_SCORER_CAP);
            hog_scorer_init(&cm, m, 0);
            cr_assert(fm.wt && !cm.wt, "the copy: %p, none: %p",
                      (void *)fm.wt, (void *)cm.wt);
            double a[K], b[K];
            uint64_t seen_unknown = 0;
            for (uint64_t i = 0; i < hog_data_rows(t); i++) {
                struct hog_row r = hog_csr_row(&t->m, i);
                for (uint32_t e = 0; e < r.nnz; e++)
                    seen_unknown += r.idx[e] >= hog_model_features(m);
                hog_scorer_row(&fm, r, a);
                hog_scorer_row(&cm, r, b);
                cr_assert(memcmp(a, b, k * sizeof *a) == 0,
                          "mode %d bias %d row %llu: %.17g against %.17g",
                          mode, bias, (unsigned long long)i, a[0], b[0]);
            }
            cr_assert_gt(seen_unknown, 0, "no feature beyond the model's");
            /* one class's vector: the cap counts the whole copy */
            struct hog_scorer small;
            hog_scorer_init(&small, m, (uint64_t)k * hog_model_vector_len(m) *
                                           sizeof(float) - 1);
            cr_assert_null(small.wt);
            hog_scorer_free(&small);
            hog_scorer_free(&fm);
            hog_scorer_free(&cm);
            hog_model_free(m);
        }
    hog_data_free(d);
    hog_data_free(t);
}
