/* hogwild: Hogwild! and the locked update modes against the serial trainer
 * (bit-identical with one thread; test accuracy within 0.5 points of its
 * band over seeds with 1, 2 and 4 threads on real sparse data, where the
 * verdict must not move with the machine's load), model replicas, options.
 * Suite `threads`: these tests start threads (make tsan runs the same
 * scenarios through tests/tsan_hogwild.c, since Criterion cannot start
 * under TSan). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/metrics.h"
#include "helpers.h"

static const hog_update modes[] = { HOG_UPDATE_NONE, HOG_UPDATE_ATOMIC,
                                    HOG_UPDATE_STRIPED, HOG_UPDATE_MUTEX };
static const char *const mode_names[] = { "none", "atomic", "striped",
                                          "mutex" };

static hog_data *load(const char *path)
{
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_data_load(path, &lo, &d, &err), HOG_OK, "%s", err.msg);
    return d;
}

static hog_data *load_test(const char *path, const hog_data *train)
{
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    lo.n_features = hog_data_features(train);
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_data_load(path, &lo, &d, &err), HOG_OK, "%s", err.msg);
    return d;
}

/* h: the hooks, or NULL */
static hog_model *train_hooked(const hog_data *d, const hog_train_opts *o,
                               const hog_train_hooks *h)
{
    hog_model *m;
    hog_err err;
    hog_status s = hog_train(d, NULL, o, h, &m, &err);
    cr_assert_eq(s, HOG_OK, "%s", err.msg);
    return m;
}

static hog_model *train(const hog_data *d, const hog_train_opts *o)
{
    return train_hooked(d, o, NULL);
}

static double accuracy(const hog_model *m, const hog_data *test)
{
    struct hog_metrics r;
    hog_err err;
    cr_assert_eq(hog_metrics_eval(m, test, &r, &err), HOG_OK, "%s", err.msg);
    return 100.0 * r.accuracy;
}

static bool same_weights(const hog_model *a, const hog_model *b)
{
    uint64_t n = hog_model_features(a) + (hog_model_bias(a) != 0.0 ? 1 : 0);
    return hog_model_features(a) == hog_model_features(b) &&
           memcmp(hog_model_weights(a), hog_model_weights(b),
                  n * sizeof(float)) == 0;
}

/* With one thread every mode replays the serial run bit for bit. */
static void bit_identical(const char *name, hog_train_opts o)
{
    TH_DATA_OR_SKIP(path, name);
    hog_data *d = load(path);
    o.algo = HOG_ALGO_SERIAL;
    hog_model *ref = train(d, &o);
    o.algo = HOG_ALGO_HOGWILD;
    o.threads = 1;
    for (size_t i = 0; i < 4; i++) {
        o.update = modes[i];
        hog_model *m = train(d, &o);
        cr_expect(same_weights(ref, m),
                  "%s, --update %s, 1 thread: weights differ from serial",
                  name, mode_names[i]);
        hog_model_free(m);
    }
    hog_model_free(ref);
    hog_data_free(d);
}

Test(threads, one_thread_bit_identical_l1_l2)
{
    hog_train_opts o;
    th_opts_init(&o);
    o.l1 = 1e-5;
    o.l2 = 1e-4;
    o.epochs = 2;
    o.seed = 7;
    bit_identical("reuters_moneyfx.trn", o);
}

Test(threads, one_thread_bit_identical_adagrad_hinge)
{
    hog_train_opts o;
    th_opts_init(&o);
    o.loss = HOG_LOSS_HINGE;
    o.schedule = HOG_SCHED_ADAGRAD;
    o.eta = 0.1;
    o.l1 = 1e-6;
    o.epochs = 2;
    bit_identical("a9a", o);
}

/* The kernel's other kinds: l2 only with a shared schedule keeps the
 * weights scaled by the running shrink factor (no stamps; the CAS and the
 * locks then work on scaled values), and no regularization at all. */
Test(threads, one_thread_bit_identical_scaled_l2_and_plain)
{
    hog_train_opts o;
    th_opts_init(&o);
    o.schedule = HOG_SCHED_INVSCALING;
    o.eta = 0.5;
    o.l1 = 0;
    o.l2 = 1e-4;
    o.epochs = 2;
    bit_identical("reuters_moneyfx.trn", o);
    o.schedule = HOG_SCHED_CONSTANT;
    o.eta = 0.05;
    o.l2 = 0;
    o.loss = HOG_LOSS_SQHINGE;
    bit_identical("reuters_moneyfx.trn", o);
}

/* The serial trainer's test accuracy over seeds 1..BAND_SEEDS: the band
 * a run of several threads is held to. Which rows a thread runs, in which
 * order against the other's, and which updates a race loses all depend on
 * the machine's load, so such a run is serial SGD in another row order
 * (plus lost updates): its accuracy moves as serial SGD's does from seed to
 * seed, and a bar set by seed 1's run alone failed under load for no fault
 * (issue 37: 94.32% against 94.92%). The settings below keep that band
 * narrow; measured with two busy loops on this 2-core machine, the threaded
 * runs (10 to 20 per setting, every mode, 2 and 4 threads, hot or not)
 * fell at most 0.15 points below the band (reuters, 2 threads) and 0.24
 * above it (news20, hot): a margin of 0.5 still catches a broken method. */
#define BAND_SEEDS 8

struct band {
    double lo, hi;
};

static struct band serial_band(const hog_data *d, const hog_data *t,
                               hog_train_opts o)
{
    struct band b = { INFINITY, -INFINITY };
    o.algo = HOG_ALGO_SERIAL;
    for (uint64_t seed = 1; seed <= BAND_SEEDS; seed++) {
        o.seed = seed;
        hog_model *m = train(d, &o);
        double acc = accuracy(m, t);
        b.lo = acc < b.lo ? acc : b.lo;
        b.hi = acc > b.hi ? acc : b.hi;
        hog_model_free(m);
    }
    return b;
}

/* Test accuracy of every mode with 1, 2 and 4 threads (4 oversubscribes a
 * small machine) within 0.5 points of the serial trainer's band over seeds
 * (serial_band). Settings where SGD's final iterate is stable across seeds
 * (within about 0.2 points), so that the test measures the parallel method,
 * not the seed. */
static void accuracy_close(const char *trn, const char *tst, hog_train_opts o,
                           hog_update mode)
{
    TH_DATA_OR_SKIP(ptrain, trn);
    TH_DATA_OR_SKIP(ptest, tst);
    hog_data *d = load(ptrain), *t = load_test(ptest, d);
    struct band b = serial_band(d, t, o);
    o.algo = HOG_ALGO_HOGWILD;
    o.update = mode;
    o.oversubscribe = 1;
    static const unsigned threads[] = { 1, 2, 4 };
    for (size_t i = 0; i < 3; i++) {
        o.threads = threads[i];
        hog_model *m = train(d, &o);
        double acc = accuracy(m, t);
        cr_expect(acc >= b.lo - 0.5 && acc <= b.hi + 0.5,
                  "%s, --update %s, %u threads: test accuracy %.2f%%, serial "
                  "%.2f%% to %.2f%% over seeds 1 to %d",
                  trn, mode_names[mode], threads[i], acc, b.lo, b.hi,
                  BAND_SEEDS);
        hog_model_free(m);
    }
    hog_data_free(t);
    hog_data_free(d);
}

/* Logistic with AdaGrad (per-coordinate steps, lazy L2 in closed form). */
static hog_train_opts adagrad_opts(double eta, unsigned epochs)
{
    hog_train_opts o;
    th_opts_init(&o);
    o.schedule = HOG_SCHED_ADAGRAD;
    o.eta = eta;
    o.epochs = epochs;
    return o;
}

/* The Hogwild! paper's SVM: hinge loss, shared step schedule, lazy L2
 * through the segment prefixes. */
static hog_train_opts svm_opts(void)
{
    hog_train_opts o;
    th_opts_init(&o);
    o.loss = HOG_LOSS_HINGE;
    o.eta = 0.05;
    o.epochs = 5;
    return o;
}

#define ACCURACY_TESTS(MODE, M)                                               \
    Test(threads, news20_accuracy_##MODE, .timeout = 60)                      \
    {                                                                         \
        accuracy_close("news20.binary.train.svm", "news20.binary.test.svm",  \
                       adagrad_opts(0.5, 5), M);                                     \
    }                                                                         \
    Test(threads, a9a_accuracy_##MODE, .timeout = 60)                         \
    {                                                                         \
        accuracy_close("a9a", "a9a.t", adagrad_opts(0.1, 4), M);                    \
    }                                                                         \
    Test(threads, reuters_accuracy_##MODE, .timeout = 60)                     \
    {                                                                         \
        accuracy_close("reuters_moneyfx.trn", "reuters_moneyfx.tst",          \
                       svm_opts(), M);                                        \
    }
ACCURACY_TESTS(none, HOG_UPDATE_NONE)
ACCURACY_TESTS(atomic, HOG_UPDATE_ATOMIC)
ACCURACY_TESTS(striped, HOG_UPDATE_STRIPED)
ACCURACY_TESTS(mutex, HOG_UPDATE_MUTEX)

/* Replicas: averaged as often as asked, and still a good model. */
struct syncs {
    uint64_t last;
    unsigned epochs;
};

static void count_syncs(void *ctx, unsigned epoch, unsigned epochs,
                        uint64_t done, uint64_t total,
                        const hog_epoch_stats *s)
{
    struct syncs *c = ctx;
    if (s) {
        c->last = s->replica_syncs;
        c->epochs++;
    }
}

Test(threads, replicas_average_and_learn, .timeout = 60)
{
    TH_DATA_OR_SKIP(ptrain, "a9a");
    TH_DATA_OR_SKIP(ptest, "a9a.t");
    hog_data *d = load(ptrain), *t = load_test(ptest, d);
    hog_train_opts o = adagrad_opts(0.1, 3);
    hog_model *ref = train(d, &o);
    double base = accuracy(ref, t);
    hog_model_free(ref);

    o.algo = HOG_ALGO_HOGWILD;
    o.threads = 2;
    o.oversubscribe = 1;
    uint64_t n = hog_data_rows(d);
    const struct {
        hog_replicas r;
        uint64_t sync_every, want; /* averagings in 3 epochs */
    } cases[] = {
        { HOG_REPLICAS_CORE, 4096, 3 * ((n + 4095) / 4096) },
        { HOG_REPLICAS_CORE, 0, 0 },
        { HOG_REPLICAS_NODE, 4096, 0 }, /* one NUMA node here: one replica */
        { HOG_REPLICAS_SHARED, 4096, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct syncs c = { 0, 0 };
        o.replicas = cases[i].r;
        o.sync_every = cases[i].sync_every;
        hog_train_hooks hk = { .size = sizeof hk };
        hk.progress = count_syncs;
        hk.progress_ctx = &c;
        hog_model *m = train_hooked(d, &o, &hk);
        double acc = accuracy(m, t);
        cr_expect_eq(c.epochs, 3);
        if (cases[i].r != HOG_REPLICAS_NODE)
            cr_expect_eq(c.last, cases[i].want,
                         "replicas %d, sync every %llu: %llu averagings, "
                         "expected %llu",
                         (int)cases[i].r,
                         (unsigned long long)cases[i].sync_every,
                         (unsigned long long)c.last,
                         (unsigned long long)cases[i].want);
        cr_expect(fabs(acc - base) <= 1.0,
                  "replicas %d, sync every %llu: test accuracy %.2f%%, serial "
                  "%.2f%%",
                  (int)cases[i].r, (unsigned long long)cases[i].sync_every,
                  acc, base);
        hog_model_free(m);
    }
    hog_data_free(t);
    hog_data_free(d);
}

/* Every row runs exactly once per epoch, whoever claims it. With the hinge
 * loss, a constant step so small that every margin stays far below 1, and
 * no regularization, each row's step adds eta y_i x_i whatever the weights,
 * so after E epochs w = E eta sum_i y_i x_i (the bias: x_i0 = 1), computed
 * here in double from the data. A row run twice or skipped moves a weight by
 * eta |x_ij|, far outside the rounding tolerance for all but the commonest
 * features. atomic loses no update; 4 threads on fewer CPUs make threads
 * claim each other's rows. */
Test(threads, every_row_runs_once_per_epoch, .timeout = 60)
{
    TH_DATA_OR_SKIP(path, "news20.binary.train.svm");
    hog_data *d = load(path);
    const struct hog_csr *c = &d->m;
    const uint64_t nf = d->n_features;
    const double eta = 1e-7, E = 2;
    double *ref = calloc(nf + 1, sizeof *ref), *mag = calloc(nf + 1, sizeof *mag);
    cr_assert(ref && mag);
    for (uint64_t i = 0; i < c->rows; i++) {
        double y = c->y[i] == d->label_pos ? 1.0 : -1.0;
        for (uint64_t e = c->off[i]; e < c->off[i + 1]; e++) {
            ref[c->idx[e]] += E * eta * y * c->val[e];
            mag[c->idx[e]] += E * eta * fabs(c->val[e]);
        }
        ref[nf] += E * eta * y;
        mag[nf] += E * eta;
    }
    hog_train_opts o;
    th_opts_init(&o);
    o.algo = HOG_ALGO_HOGWILD;
    o.update = HOG_UPDATE_ATOMIC;
    o.loss = HOG_LOSS_HINGE;
    o.schedule = HOG_SCHED_CONSTANT;
    o.eta = eta;
    o.l2 = 0;
    o.epochs = (unsigned)E;
    o.oversubscribe = 1;
    for (unsigned t = 2; t <= 4; t += 2) {
        o.threads = t;
        hog_model *m = train(d, &o);
        const float *w = hog_model_weights(m);
        uint64_t bad = 0, first = 0;
        for (uint64_t j = 0; j <= nf; j++)
            if (fabs(w[j] - ref[j]) > 1e-3 * mag[j] + 1e-30 && bad++ == 0)
                first = j;
        cr_expect_eq(bad, 0, "%u threads: %llu of %llu weights are not "
                     "eta sum_i y_i x_ij (first: weight %llu, %g against "
                     "%g)", t, (unsigned long long)bad,
                     (unsigned long long)nf + 1, (unsigned long long)first,
                     (double)w[first], ref[first]);
        hog_model_free(m);
    }
    free(ref);
    free(mag);
    hog_data_free(d);
}

/* More threads than rows: empty shards are fine. */
Test(threads, more_threads_than_rows)
{
    uint64_t *off = malloc(4 * sizeof *off);
    float *y = malloc(3 * sizeof *y);
    uint32_t *idx = malloc(3 * sizeof *idx);
    float *val = malloc(3 * sizeof *val);
    cr_assert(off && y && idx && val);
    for (int i = 0; i < 3; i++) {
        off[i] = (uint64_t)i;
        y[i] = i % 2 ? 1.0f : -1.0f;
        idx[i] = (uint32_t)i;
        val[i] = 1.0f;
    }
    off[3] = 3;
    hog_data *d;
    cr_assert_eq(hog_data_wrap(3, 3, off, y, idx, val, 0, &d, NULL), HOG_OK);
    hog_train_opts o;
    th_opts_init(&o);
    o.algo = HOG_ALGO_HOGWILD;
    o.threads = 5;
    o.oversubscribe = 1;
    for (int r = 0; r < 3; r++) {
        o.replicas = (hog_replicas)r;
        hog_model *m = train(d, &o);
        const float *w = hog_model_weights(m);
        cr_expect(w[0] < 0 && w[1] > 0 && w[2] < 0, "replicas %d", r);
        hog_model_free(m);
    }
    hog_data_free(d);
}

Test(threads, bad_binding_is_an_error)
{
    TH_DATA_OR_SKIP(path, "reuters_moneyfx.trn");
    hog_data *d = load(path);
    hog_train_opts o;
    th_opts_init(&o);
    o.algo = HOG_ALGO_HOGWILD;
    o.bind = "sideways";
    hog_model *m;
    hog_err err = { { 0 } };
    cr_expect_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL);
    cr_expect(strstr(err.msg, "sideways") != NULL, "message: %s", err.msg);
    o.bind = NULL;
    o.replicas = (hog_replicas)7;
    cr_expect_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL);
    hog_data_free(d);
}

/* ---- hogtrain bench ------------------------------------------------------------ */

static int count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int n = 0, c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

Test(bench, grid_table_csv_and_plot, .timeout = 120)
{
    TH_DATA_OR_SKIP(ptrain, "reuters_moneyfx.trn");
    TH_DATA_OR_SKIP(ptest, "reuters_moneyfx.tst");
    char dir[512], out[16384];
    th_tmpdir(dir, sizeof dir);
    int rc = th_run(out, sizeof out,
                    "%s bench %s -t %s --threads 1,2 --update none,mutex "
                    "--epochs 2 --repeat 1 --csv %s/b.csv --plot %s/b.svg "
                    "--oversubscribe -q",
                    th_bin(), ptrain, ptest, dir, dir);
    cr_assert_eq(rc, 0, "%s", out);
    /* serial, the two controls, 2 modes x 2 thread counts */
    cr_expect(strstr(out, "serial") && strstr(out, "control") &&
                  strstr(out, "mutex") && strstr(out, "stream"),
              "%s", out);
    char csv[600];
    snprintf(csv, sizeof csv, "%s/b.csv", dir);
    cr_expect_eq(count_lines(csv), 1 + 1 + 2 + 4);
    char svg[600];
    snprintf(svg, sizeof svg, "%s/b.svg", dir);
    if (system("command -v gnuplot >/dev/null 2>&1") == 0)
        cr_expect_gt(count_lines(svg), 10, "no plot in %s: %s", svg, out);
    else
        cr_expect(strstr(out, "gnuplot is not installed"), "%s", out);
}

/* --hot 0,auto: plain and hot-feature rows side by side, with the same
 * control and efficiency columns; no hot rows with striped locks. */
Test(bench, hot_rows_beside_plain, .timeout = 120)
{
    TH_DATA_OR_SKIP(ptrain, "reuters_moneyfx.trn");
    TH_DATA_OR_SKIP(ptest, "reuters_moneyfx.tst");
    char dir[512], out[16384];
    th_tmpdir(dir, sizeof dir);
    int rc = th_run(out, sizeof out,
                    "%s bench %s -t %s --threads 1,2 --update none,striped "
                    "--hot 0,auto --epochs 2 --repeat 1 --csv %s/h.csv "
                    "--oversubscribe -q",
                    th_bin(), ptrain, ptest, dir);
    cr_assert_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "hot:auto") && strstr(out, "folded 2 times"),
              "%s", out);
    cr_expect(strstr(out, "striped  hot") == NULL, "%s", out);
    char csv[600];
    snprintf(csv, sizeof csv, "%s/h.csv", dir);
    /* header, serial, 2 controls, 2 modes x 2 threads plain, 2 hot */
    cr_expect_eq(count_lines(csv), 1 + 1 + 2 + 4 + 2);
    cr_expect_eq(th_run(out, sizeof out, "%s bench x --hot 1,many", th_bin()),
                 2);
    cr_expect(strstr(out, "--hot"), "%s", out);
}

Test(bench, usage_errors)
{
    char out[4096];
    cr_expect_eq(th_run(out, sizeof out, "%s bench", th_bin()), 2);
    cr_expect_eq(th_run(out, sizeof out, "%s bench x --threads 1,x", th_bin()),
                 2);
    cr_expect(strstr(out, "--threads"), "%s", out);
    cr_expect_eq(th_run(out, sizeof out, "%s bench x --update none,slow",
                        th_bin()),
                 2);
    cr_expect_eq(th_run(out, sizeof out, "%s bench x --plot p.gif", th_bin()),
                 2);
    cr_expect(strstr(out, ".png or .svg"), "%s", out);
}

/* ---- hot-feature replicas (--hot K) --------------------------------------------- */

/* With one thread the fold gives back the thread's own copy, and the
 * remapped indices keep each row's order: hot mode is plain Hogwild! (so
 * the serial trainer) bit for bit, in every kernel kind and the update
 * modes it runs with, whatever K, when it folds once per epoch (the
 * default sync_every exceeds these sets' rows; a fold inside the epoch
 * also ends a lazy-regularization segment, which changes the rounding). */
static void hot_one_thread(const char *name, hog_train_opts o)
{
    TH_DATA_OR_SKIP(path, name);
    hog_data *d = load(path);
    o.algo = HOG_ALGO_SERIAL;
    hog_model *ref = train(d, &o);
    o.algo = HOG_ALGO_HOGWILD;
    o.threads = 1;
    const uint64_t ks[] = { 1, 50, HOG_HOT_AUTO, UINT32_MAX };
    const hog_update um[] = { HOG_UPDATE_NONE, HOG_UPDATE_ATOMIC,
                              HOG_UPDATE_MUTEX };
    for (size_t i = 0; i < 4; i++)
        for (size_t u = 0; u < 3; u++) {
            hog_hot_stats hs = { .size = sizeof hs };
            o.hot_features = ks[i];
            o.update = um[u];
            hog_train_hooks hk = { .size = sizeof hk };
            hk.hot_stats = &hs;
            hog_model *m = train_hooked(d, &o, &hk);
            cr_expect(same_weights(ref, m),
                      "%s, --hot %llu, --update %s, 1 thread: weights differ "
                      "from serial",
                      name, (unsigned long long)ks[i], mode_names[um[u]]);
            cr_expect(hs.hot_features > 0 && hs.bias_hot && hs.folds >= o.epochs,
                      "%s: %llu hot features, %llu folds", name,
                      (unsigned long long)hs.hot_features,
                      (unsigned long long)hs.folds);
            hog_model_free(m);
        }
    hog_model_free(ref);
    hog_data_free(d);
}

Test(threads, hot_one_thread_bit_identical, .timeout = 60)
{
    hog_train_opts o;
    th_opts_init(&o);
    o.l1 = 1e-5;
    o.l2 = 1e-4;
    o.epochs = 2;
    o.schedule = HOG_SCHED_INVSCALING; /* stamped, prefix catch-up */
    hot_one_thread("reuters_moneyfx.trn", o);
    o.l1 = 0; /* scaled */
    o.schedule = HOG_SCHED_CONSTANT;
    hot_one_thread("reuters_moneyfx.trn", o);
    th_opts_init(&o);
    o.loss = HOG_LOSS_HINGE;
    o.schedule = HOG_SCHED_ADAGRAD; /* AdaGrad with lazy L1 and L2 */
    o.eta = 0.1;
    o.l1 = 1e-6;
    o.epochs = 2;
    hot_one_thread("a9a", o);
}

/* Folds inside the epoch (every 4096 rows) end lazy-regularization
 * segments there: one thread then equals plain Hogwild! up to the
 * rounding of the catch-ups. */
Test(threads, hot_one_thread_folding_inside_epochs)
{
    TH_DATA_OR_SKIP(path, "a9a");
    hog_data *d = load(path);
    hog_train_opts o = adagrad_opts(0.1, 3);
    o.l1 = 1e-6;
    o.algo = HOG_ALGO_HOGWILD;
    o.threads = 1;
    hog_model *ref = train(d, &o);
    o.hot_features = HOG_HOT_AUTO;
    o.sync_every = 4096;
    hog_hot_stats hs = { .size = sizeof hs };
    hog_train_hooks hk = { .size = sizeof hk };
    hk.hot_stats = &hs;
    hog_model *m = train_hooked(d, &o, &hk);
    cr_expect_eq(hs.folds, 3 * ((hog_data_rows(d) + 4095) / 4096));
    const float *a = hog_model_weights(ref), *b = hog_model_weights(m);
    double worst = 0;
    for (uint64_t j = 0; j <= hog_model_features(m); j++)
        worst = fmax(worst, fabs((double)a[j] - b[j]) /
                                fmax(1e-3, fabs((double)a[j])));
    cr_expect(worst < 1e-4, "largest relative difference %g", worst);
    hog_model_free(m);
    hog_model_free(ref);
    hog_data_free(d);
}

/* Two rows, one feature, two threads with every weight private: thread 0
 * takes row 0 (x = 1, y = 1), thread 1 row 1 (x = 2, y = 3), squared loss
 * 0.5 (w x - y)^2, eta 0.1, no bias. The fold averages the copies (by
 * the rows each ran) and adds up the AdaGrad sums; worked by hand below. */
static hog_data *two_rows(void)
{
    uint64_t *off = malloc(3 * sizeof *off);
    float *y = malloc(2 * sizeof *y);
    uint32_t *idx = malloc(2 * sizeof *idx);
    float *val = malloc(2 * sizeof *val);
    cr_assert(off && y && idx && val);
    off[0] = 0, off[1] = 1, off[2] = 2;
    y[0] = 1, y[1] = 3;
    idx[0] = idx[1] = 0;
    val[0] = 1, val[1] = 2;
    hog_data *d;
    cr_assert_eq(hog_data_wrap(2, 2, off, y, idx, val, 0, &d, NULL), HOG_OK);
    return d;
}

Test(threads, hot_fold_rule_by_hand)
{
    hog_data *d = two_rows();
    hog_train_opts o;
    th_opts_init(&o);
    o.loss = HOG_LOSS_SQUARED;
    o.schedule = HOG_SCHED_CONSTANT;
    o.eta = 0.1;
    o.l2 = 0;
    o.bias = 0;
    o.epochs = 2;
    o.algo = HOG_ALGO_HOGWILD;
    o.threads = 2;
    o.oversubscribe = 1;
    o.hot_features = 1;
    hog_hot_stats hs = { .size = sizeof hs };
    hog_train_hooks hk = { .size = sizeof hk };
    hk.hot_stats = &hs;
    /* epoch 1: w0 = 0 + 0.1 * 1 * 1 = 0.1, w1 = 0 + 0.1 * 3 * 2 = 0.6,
     * fold (0.1 + 0.6) / 2 = 0.35 (a sum of the deltas would give 0.7);
     * epoch 2: w0 = 0.35 + 0.1 * 0.65 = 0.415,
     * w1 = 0.35 + 0.1 * (3 - 0.7) * 2 = 0.81, fold 0.6125 */
    hog_model *m = train_hooked(d, &o, &hk);
    cr_expect_float_eq(hog_model_weights(m)[0], 0.6125f, 1e-6f, "w = %.9g",
                       hog_model_weights(m)[0]);
    cr_expect_eq(hs.hot_features, 1);
    cr_expect_eq(hs.folds, 2);
    cr_expect_eq(hs.bias_hot, 0);
    hog_model_free(m);

    /* AdaGrad: epoch 1 both copies step to 0.1 (rates 0.1/1 and 0.1/6),
     * sums 1 and 36 add up to G = 37; epoch 2: w0 = 0.1 + 0.9 * 0.1 /
     * sqrt(37.81), w1 = 0.1 + 5.6 * 0.1 / sqrt(37 + 31.36) */
    o.schedule = HOG_SCHED_ADAGRAD;
    m = train_hooked(d, &o, &hk);
    double w0 = 0.1 + 0.9 * 0.1 / sqrt(37.81);
    double w1 = 0.1 + 5.6 * 0.1 / sqrt(68.36);
    cr_expect(fabs(hog_model_weights(m)[0] - 0.5 * (w0 + w1)) < 1e-5,
              "w = %.9g, by hand %.9g", hog_model_weights(m)[0],
              0.5 * (w0 + w1));
    hog_model_free(m);
    hog_data_free(d);

    /* Unequal shares: a third row like row 0 goes to thread 0 (rows p,
     * p + 2, ...; a shard of one claim is never taken by the other thread),
     * whose copy runs 2 rows: 0.1, then 0.1 + 0.1 (1 - 0.1) = 0.19; thread
     * 1's copy runs 1 row: 0.6. The fold weights the copies by their rows:
     * (2 * 0.19 + 0.6) / 3 (an equal vote would give 0.395). */
    uint64_t *off = malloc(4 * sizeof *off);
    float *y = malloc(3 * sizeof *y), *val = malloc(3 * sizeof *val);
    uint32_t *idx = calloc(3, sizeof *idx);
    cr_assert(off && y && val && idx);
    for (int i = 0; i < 4; i++)
        off[i] = (uint64_t)i;
    y[0] = y[2] = 1, y[1] = 3;
    val[0] = val[2] = 1, val[1] = 2;
    cr_assert_eq(hog_data_wrap(3, 3, off, y, idx, val, 0, &d, NULL), HOG_OK);
    o.schedule = HOG_SCHED_CONSTANT;
    o.epochs = 1;
    m = train_hooked(d, &o, &hk);
    cr_expect_float_eq(hog_model_weights(m)[0], (float)(0.98 / 3), 1e-6f,
                       "w = %.9g, by hand %.9g", hog_model_weights(m)[0],
                       0.98 / 3);
    hog_model_free(m);
    hog_data_free(d);
}

/* Two threads with hot replicas reach the serial trainer's test accuracy
 * within 0.5 points (the bar) on news20.binary and a9a: no more
 * than 0.5 below its band over seeds (serial_band; the cold weights are
 * shared, so the run depends on the threads' interleaving). */
static void hot_accuracy(const char *trn, const char *tst, hog_train_opts o)
{
    TH_DATA_OR_SKIP(ptrain, trn);
    TH_DATA_OR_SKIP(ptest, tst);
    hog_data *d = load(ptrain), *t = load_test(ptest, d);
    struct band b = serial_band(d, t, o);
    o.algo = HOG_ALGO_HOGWILD;
    o.threads = 2;
    o.oversubscribe = 1;
    const uint64_t ks[] = { HOG_HOT_AUTO, 64 };
    for (size_t i = 0; i < 2; i++) {
        o.hot_features = ks[i];
        hog_model *m = train(d, &o);
        double acc = accuracy(m, t);
        cr_expect(acc >= b.lo - 0.5,
                  "%s, --hot %llu, 2 threads: test accuracy %.2f%%, serial "
                  "%.2f%% to %.2f%% over seeds 1 to %d",
                  trn, (unsigned long long)ks[i], acc, b.lo, b.hi,
                  BAND_SEEDS);
        hog_model_free(m);
    }
    hog_data_free(t);
    hog_data_free(d);
}

/* AdaGrad, and the Hogwild! paper's SVM (hinge, a decaying step: with a
 * constant step of 0.1 the serial trainer's own final iterate ends
 * anywhere from 92.9% to 95.1% over 20 seeds, so no bar near serial holds
 * for a run in another order; svm_opts' spans 95.2% to 95.4%) */
Test(threads, hot_news20_accuracy, .timeout = 90)
{
    hot_accuracy("news20.binary.train.svm", "news20.binary.test.svm",
                 adagrad_opts(0.5, 5));
    hot_accuracy("news20.binary.train.svm", "news20.binary.test.svm",
                 svm_opts());
}

/* (a9a's final iterate with a constant or decaying hinge step moves by
 * several points from seed to seed, for the serial trainer too: AdaGrad
 * only, logistic and hinge) */
Test(threads, hot_a9a_accuracy, .timeout = 60)
{
    hot_accuracy("a9a", "a9a.t", adagrad_opts(0.1, 4));
    hog_train_opts o = adagrad_opts(0.1, 4);
    o.loss = HOG_LOSS_HINGE;
    hot_accuracy("a9a", "a9a.t", o);
}

/* Where the threads' interleaving cannot matter: every feature hot (each
 * thread's view all private, no weight shared between the threads) and
 * segments of 32 rows, so that each thread's share of a segment is at most
 * one claim (16 rows at the least, hogwild.c) and no thread runs
 * another's rows. The run is then a fixed function of the data and the
 * seed: the same bits twice, however loaded the machine, and its accuracy
 * a verdict that cannot move with the load; local SGD with a fold every 32
 * rows reaches the serial trainer's. */
Test(threads, hot_private_views_are_deterministic, .timeout = 60)
{
    TH_DATA_OR_SKIP(ptrain, "a9a");
    TH_DATA_OR_SKIP(ptest, "a9a.t");
    hog_data *d = load(ptrain), *t = load_test(ptest, d);
    hog_train_opts o = adagrad_opts(0.1, 4);
    hog_model *ref = train(d, &o);
    double base = accuracy(ref, t);
    hog_model_free(ref);
    o.algo = HOG_ALGO_HOGWILD;
    o.threads = 2;
    o.oversubscribe = 1;
    o.hot_features = hog_data_features(d);
    o.sync_every = 32;
    hog_hot_stats hs = { .size = sizeof hs };
    hog_train_hooks hk = { .size = sizeof hk };
    hk.hot_stats = &hs;
    hog_model *a = train_hooked(d, &o, &hk);
    cr_assert_eq(hs.hot_features, hog_data_features(d));
    for (int run = 0; run < 3; run++) {
        hog_model *m = train_hooked(d, &o, &hk);
        cr_expect(same_weights(a, m), "run %d differs from the first", run + 2);
        hog_model_free(m);
    }
    double acc = accuracy(a, t);
    cr_expect(fabs(acc - base) <= 0.5,
              "every feature hot, 2 threads: test accuracy %.2f%%, serial "
              "%.2f%%", acc, base);
    hog_model_free(a);
    hog_data_free(t);
    hog_data_free(d);
}

Test(threads, hot_refuses_stripes_and_replicas)
{
    hog_data *d = two_rows();
    hog_train_opts o;
    th_opts_init(&o);
    o.loss = HOG_LOSS_SQUARED;
    o.algo = HOG_ALGO_HOGWILD;
    o.threads = 1;
    o.hot_features = HOG_HOT_AUTO;
    hog_model *m = NULL;
    hog_err err = { { 0 } };
    o.update = HOG_UPDATE_STRIPED;
    cr_expect_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL);
    cr_expect(strstr(err.msg, "striped"), "message: %s", err.msg);
    o.update = HOG_UPDATE_NONE;
    o.replicas = HOG_REPLICAS_CORE;
    o.threads = 2;
    o.oversubscribe = 1;
    cr_expect_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL);
    cr_expect(strstr(err.msg, "replicas"), "message: %s", err.msg);
    cr_expect_null(m);
    hog_data_free(d);
}

/* ---- checkpoints and cancellation --------------------------------------------- */

/* A checkpoint after each epoch; resumed from epoch 2 of 4, one thread
 * gives the uninterrupted model bit for bit, plain and with hot replicas
 * (AdaGrad: the sums are part of the state); checkpoints are whole epochs
 * only. (The cancel flag: tests/test_checkpoint.c,
 * cancel_flag_stops_every_algorithm.) */
Test(threads, checkpoint_resume, .timeout = 60)
{
    TH_DATA_OR_SKIP(path, "a9a");
    hog_data *d = load(path);
    char dir[512], ck[600];
    cr_assert(th_tmpdir(dir, sizeof dir));
    snprintf(ck, sizeof ck, "%s/hog.ck", dir);
    for (int hot = 0; hot < 2; hot++) {
        hog_train_opts o = adagrad_opts(0.1, 4);
        o.l1 = 1e-6;
        o.algo = HOG_ALGO_HOGWILD;
        o.threads = 1;
        o.hot_features = hot ? HOG_HOT_AUTO : 0;
        hog_model *ref = train(d, &o);

        hog_train_opts a = o;
        a.epochs = 2;
        a.checkpoint = ck;
        hog_model_free(train(d, &a));
        hog_train_opts b = o;
        b.resume = ck;
        hog_model *res = train(d, &b);
        cr_expect(same_weights(ref, res), "hot %d: resumed after epoch 2 "
                  "differs from the uninterrupted run", hot);
        hog_model_free(res);

        hog_model *m = NULL;
        hog_err err = { { 0 } };
        a = o;
        a.checkpoint = ck;
        a.checkpoint_rows = 1000;
        cr_expect_eq(hog_train(d, NULL, &a, NULL, &m, &err), HOG_ENOTSUP);
        cr_expect(strstr(err.msg, "whole epochs"), "message: %s", err.msg);
        hog_model_free(ref);
    }
    hog_data_free(d);
}
