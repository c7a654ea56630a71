/* cyclades: the model is the same bit for bit at every thread count, equals
 * serial SGD over the same row order when no feature is hot, works with
 * every loss, regularizer and schedule, and is as accurate as the serial
 * trainer and Hogwild! on real data (not worse by more than half a point). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/fit.h"
#include "core/metrics.h"
#include "core/sgd.h"
#include "cyclades/cyclades.h"
#include "helpers.h"
#include "synth.h"
#include "io/io.h"
#include "train/train.h"

/* ---- data ------------------------------------------------------------------- */

/* A skewed sparse problem: feature j of nf drawn as nf u^3 (a few features
 * in most rows, a long tail of rare ones), 3 to 14 per row, values normal;
 * labels from a planted model (+1/-1, or real targets). */
static hog_data *skewed(uint64_t rows, uint64_t nf, bool regression,
                        uint64_t seed)
{
    hog_err err = { { 0 } };
    hog_data *d = th_synth(&(struct th_synth){
        .rows = rows, .features = (uint32_t)nf, .layout = TH_SYNTH_SKEW,
        .nnz_min = 3, .nnz_max = 14, .seed = seed, .stream = 11,
        .first = { .normal = true }, .offset = -0.2, .noise = 0.3,
        .regression = regression }, &err);
    cr_assert(d, "%s", err.msg);
    return d;
}

static hog_data *load(const char *path, uint64_t n_features)
{
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    lo.n_features = n_features;
    hog_data *d;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_data_load(path, &lo, &d, &err), HOG_OK, "%s", err.msg);
    return d;
}

/* Writes the io generator's text for g to path. */
static void write_gen(const struct hog_gen_opts *g, const char *path)
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s", path);
    hog_err err = { { 0 } };
    cr_assert_eq(hog_gen_write(g, f, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(fclose(f), 0);
}

/* Text-like data from the io generator (Zipf feature frequencies). */
static hog_data *generated(uint64_t rows, uint64_t features, double nnz,
                           uint64_t seed)
{
    char dir[256], path[300];
    cr_assert(th_tmpdir(dir, sizeof dir));
    snprintf(path, sizeof path, "%s/gen.svm", dir);
    struct hog_gen_opts g;
    hog_gen_opts_init(&g);
    g.rows = rows;
    g.features = features;
    g.nnz_per_row = nnz;
    g.seed = seed;
    write_gen(&g, path);
    return load(path, 0);
}

/* ---- training ----------------------------------------------------------------- */

/* h: the hooks, or NULL */
static hog_model *fit_hooked(const hog_data *d, const hog_train_opts *base,
                             const hog_train_hooks *h, hog_algo algo,
                             unsigned threads)
{
    hog_train_opts o = *base;
    o.algo = algo;
    o.threads = algo == HOG_ALGO_SERIAL ? 0 : threads;
    hog_model *m = NULL;
    hog_err err = { { 0 } };
    hog_status s = hog_train(d, NULL, &o, h, &m, &err);
    cr_assert_eq(s, HOG_OK, "%s", err.msg);
    return m;
}

static hog_model *fit(const hog_data *d, const hog_train_opts *base,
                      hog_algo algo, unsigned threads)
{
    return fit_hooked(d, base, NULL, algo, threads);
}

static hog_status no_epoch_end(struct hog_fit *f, unsigned epoch,
                               double seconds, hog_err *err)
{
    return HOG_OK;
}

static void no_tick(struct hog_fit *f, unsigned epoch, uint64_t done,
                    uint64_t total)
{
}

/* The serial reference: Cyclades' row order through the plain kernel. */
static hog_model *fit_reference(const hog_data *d, const hog_train_opts *o)
{
    hog_model *m;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_model_new(d->n_features, o->loss, o->bias, &m, &err),
                 HOG_OK);
    struct hog_fit f = { .train = d, .o = o, .model = m,
                         .epoch_end = no_epoch_end, .tick = no_tick };
    cr_assert_eq(hog_cyclades_train_reference(&f, false, &err), HOG_OK, "%s",
                 err.msg);
    return m;
}

static void assert_same(const hog_model *a, const hog_model *b,
                        const char *what)
{
    uint64_t nw = hog_model_len(a); /* K classes: K vectors */
    cr_assert_eq(a->n_features, b->n_features);
    cr_assert_eq(a->n_classes, b->n_classes);
    for (uint64_t j = 0; j < nw; j++) {
        uint32_t x, y;
        memcpy(&x, &a->w[j], 4);
        memcpy(&y, &b->w[j], 4);
        cr_assert_eq(x, y, "%s: weight %llu differs: %.9g vs %.9g", what,
                     (unsigned long long)j, a->w[j], b->w[j]);
    }
}

static bool any_nonzero(const hog_model *m)
{
    for (uint64_t j = 0; j < m->n_features; j++)
        if (m->w[j] != 0.0f)
            return true;
    return false;
}

static double accuracy(const hog_model *m, const hog_data *d)
{
    double *s = malloc(d->m.rows * sizeof *s);
    cr_assert(s);
    hog_err err;
    cr_assert_eq(hog_model_scores(m, d, s, &err), HOG_OK);
    uint64_t ok = 0;
    for (uint64_t i = 0; i < d->m.rows; i++)
        ok += (s[i] > 0) == hog_label_positive(d, d->m.y[i]);
    free(s);
    return (double)ok / (double)d->m.rows;
}

static const unsigned thread_counts[] = { 1, 2, 3, 4, 8 };
#define N_THREADS (sizeof thread_counts / sizeof thread_counts[0])

/* Trains at every thread count and checks the models are one model. */
static hog_model *same_at_every_thread_count(const hog_data *d,
                                             const hog_train_opts *o,
                                             const hog_train_hooks *h,
                                             const char *what)
{
    hog_model *first = fit_hooked(d, o, h, HOG_ALGO_CYCLADES,
                                  thread_counts[0]);
    cr_assert(any_nonzero(first), "%s: the model is all zero", what);
    for (size_t i = 1; i < N_THREADS; i++) {
        hog_model *m = fit_hooked(d, o, h, HOG_ALGO_CYCLADES,
                                  thread_counts[i]);
        char buf[200];
        snprintf(buf, sizeof buf, "%s, 1 vs %u threads", what,
                 thread_counts[i]);
        assert_same(first, m, buf);
        hog_model_free(m);
    }
    return first;
}

/* ---- the progressive figures ------------------------------------------------- */

/* The reference's figures, from the fit it hands its epoch_end. */
static hog_status prog_epoch_end(struct hog_fit *f, unsigned epoch,
                                 double seconds, hog_err *err)
{
    (void)epoch, (void)seconds, (void)err;
    struct th_prog *p = f->ctx;
    if (p->n < 8) {
        p->loss[p->n] = f->prog_loss;
        p->acc[p->n++] = f->prog_accuracy;
    }
    f->prog_loss = f->prog_accuracy = NAN;
    return HOG_OK;
}

static struct th_prog cyclades_prog(const hog_data *d, hog_train_opts o,
                                    unsigned threads)
{
    struct th_prog p = { 0 };
    hog_train_hooks hk = { .size = sizeof hk };
    hk.progress = th_on_prog;
    hk.progress_ctx = &p;
    hog_model_free(fit_hooked(d, &o, &hk, HOG_ALGO_CYCLADES, threads));
    return p;
}

/* Cyclades scores each row before its step and adds the figures in its
 * visiting order after the epoch: the same bits at every thread count,
 * and without hot features the serial reference's (the same rows, in the
 * same order, through the same kernel), whose weights it has bit for
 * bit. */
Test(cyclades, progressive_figures_the_same_at_every_thread_count)
{
    hog_data *d = generated(6000, 20000, 30, 3);
    hog_train_opts o;
    th_opts_init(&o);
    o.epochs = 3;
    for (int hot = 0; hot < 2; hot++) {
        o.cyclades_hot_degree = hot ? HOG_HOT_AUTO : 0;
        struct th_prog first = cyclades_prog(d, o, 1);
        cr_assert_eq(first.n, 3);
        for (unsigned e = 0; e < 3; e++)
            cr_assert(isfinite(first.loss[e]) && first.loss[e] > 0 &&
                      first.acc[e] > 0.5 && first.acc[e] <= 1.0,
                      "hot %d epoch %u: %g, %g", hot, e + 1, first.loss[e],
                      first.acc[e]);
        cr_assert_lt(first.loss[2], first.loss[0]);
        for (size_t i = 1; i < N_THREADS; i++) {
            struct th_prog p = cyclades_prog(d, o, thread_counts[i]);
            cr_assert(memcmp(&p, &first, sizeof p) == 0,
                      "hot %d, %u threads: %.17g against %.17g", hot,
                      thread_counts[i], p.loss[0], first.loss[0]);
        }
        if (hot)
            continue;
        hog_model *m;
        hog_err err = { { 0 } };
        cr_assert_eq(hog_model_new(d->n_features, o.loss, o.bias, &m, &err),
                     HOG_OK);
        struct th_prog ref = { 0 };
        hog_train_opts ro = o;
        struct hog_fit f = { .train = d, .o = &ro, .model = m,
                             /* asks the reference to score its rows */
                             .hooks.progress = th_on_prog,
                             .epoch_end = prog_epoch_end, .tick = no_tick,
                             .ctx = &ref, .prog_loss = NAN,
                             .prog_accuracy = NAN };
        cr_assert_eq(hog_cyclades_train_reference(&f, false, &err), HOG_OK, "%s",
                     err.msg);
        cr_assert(memcmp(&ref, &first, sizeof ref) == 0,
                  "the reference: %.17g / %.17g against %.17g / %.17g",
                  ref.loss[0], ref.acc[0], first.loss[0], first.acc[0]);
        hog_model_free(m);
    }
    hog_data_free(d);
}

/* ---- generated data ----------------------------------------------------------- */

Test(cyclades, generated_data_same_model_at_1_2_3_4_8_threads)
{
    hog_data *d = generated(6000, 20000, 30, 3);
    hog_train_opts o;
    th_opts_init(&o);
    o.epochs = 3;
    hog_cyclades_stats st = { .size = sizeof st };
    hog_train_hooks hk = { .size = sizeof hk };
    hk.cyclades_stats = &st;
    hog_model *m = same_at_every_thread_count(d, &o, &hk, "hot auto");
    cr_assert_gt(st.hot_features, 0);
    cr_assert(st.bias_hot);
    /* the hot rule left some features in the graph and cut the batches */
    cr_assert_lt(st.hot_nnz_share, 1.0);
    cr_assert_gt(st.components, 1.0);
    cr_assert_lt(st.largest_share, st.all_largest_share);
    hog_model_free(m);

    o.repartition = 1;
    o.batch_size = 100;
    m = same_at_every_thread_count(d, &o, &hk, "repartition, B = 100");
    cr_assert_eq(st.partitions, 3);
    hog_model_free(m);

    /* hot off: the same, and serial SGD bit for bit */
    o.cyclades_hot_degree = 0;
    m = same_at_every_thread_count(d, &o, &hk, "hot off, repartition");
    hog_model *s = fit_hooked(d, &o, &hk, HOG_ALGO_SERIAL, 1);
    assert_same(m, s, "hot off, repartition vs the serial trainer");
    hog_model_free(s);
    hog_model_free(m);
    hog_data_free(d);
}

Test(cyclades, hot_off_equals_serial_over_the_same_order)
{
    /* No bias and a long tail: real components, many per batch. */
    hog_data *d = skewed(3000, 3000, false, 5);
    hog_train_opts o;
    th_opts_init(&o);
    o.epochs = 3;
    o.bias = 0.0;
    o.cyclades_hot_degree = 0;
    o.batch_size = 40;
    hog_cyclades_stats st = { .size = sizeof st };
    hog_train_hooks hk = { .size = sizeof hk };
    hk.cyclades_stats = &st;
    hog_model *ref = fit_reference(d, &o); /* partition once, batches shuffled */
    for (size_t i = 0; i < N_THREADS; i++) {
        hog_model *m = fit_hooked(d, &o, &hk, HOG_ALGO_CYCLADES, thread_counts[i]);
        assert_same(ref, m, "hot off vs the serial reference");
        hog_model_free(m);
    }
    cr_assert_gt(st.components, 2.0, "components per batch %g", st.components);
    cr_assert_eq(st.partitions, 1);
    hog_model_free(ref);

    o.repartition = 1; /* the serial trainer's own order */
    ref = fit_hooked(d, &o, &hk, HOG_ALGO_SERIAL, 1);
    for (size_t i = 0; i < N_THREADS; i++) {
        hog_model *m = fit_hooked(d, &o, &hk, HOG_ALGO_CYCLADES, thread_counts[i]);
        assert_same(ref, m, "hot off, repartition vs the serial trainer");
        hog_model_free(m);
    }
    hog_model_free(ref);
    hog_data_free(d);
}

/* Every loss, regularizer and schedule: thread-count independent with hot
 * features, and serial-exact without. */
Test(cyclades, every_loss_regularizer_and_schedule)
{
    hog_data *cls = skewed(700, 400, false, 9);
    hog_data *reg = skewed(700, 400, true, 9);
    const double l1s[] = { 0, 0, 1e-3, 1e-3 }, l2s[] = { 0, 1e-3, 0, 1e-3 };
    for (int loss = HOG_LOSS_LOGISTIC; loss <= HOG_LOSS_SQUARED; loss++)
        for (int r = 0; r < 4; r++)
            for (int sch = HOG_SCHED_CONSTANT; sch <= HOG_SCHED_ADAGRAD;
                 sch++) {
                const hog_data *d = loss == HOG_LOSS_SQUARED ? reg : cls;
                hog_train_opts o;
                th_opts_init(&o);
                o.loss = (hog_loss)loss;
                th_opts_step_for_loss(&o);
                o.schedule = (hog_schedule)sch;
                /* main's per-loss etas are tuned for AdaGrad; the shared
                 * schedules keep the etas this test was written with (the
                 * squared loss diverges at eta 1 with a constant step) */
                if (sch != HOG_SCHED_ADAGRAD)
                    o.eta = loss == HOG_LOSS_LOGISTIC  ? 0.5
                            : loss == HOG_LOSS_SQUARED ? 0.01
                                                       : 0.1;
                o.l1 = l1s[r];
                o.l2 = l2s[r];
                o.epochs = 2;
                o.batch_size = 50;
                o.cyclades_hot_degree = 40;
                char what[128];
                snprintf(what, sizeof what, "loss %d, l1 %g, l2 %g, schedule %d",
                         loss, o.l1, o.l2, sch);
                hog_model *a = fit(d, &o, HOG_ALGO_CYCLADES, 1);
                hog_model *b = fit(d, &o, HOG_ALGO_CYCLADES, 3);
                assert_same(a, b, what);
                for (uint64_t j = 0; j <= a->n_features; j++)
                    cr_assert(isfinite(a->w[j]), "%s: weight %llu is %g", what,
                              (unsigned long long)j, a->w[j]);
                hog_model_free(a);
                hog_model_free(b);
                o.cyclades_hot_degree = 0;
                o.repartition = 1;
                a = fit(d, &o, HOG_ALGO_SERIAL, 1);
                b = fit(d, &o, HOG_ALGO_CYCLADES, 2);
                assert_same(a, b, what);
                hog_model_free(a);
                hog_model_free(b);
            }
    hog_data_free(cls);
    hog_data_free(reg);
}

/* eta l2 = 0.95: the kernel's segments end every hundred-odd steps, inside
 * batches; the pieces are run as batches of their own. */
Test(cyclades, segments_ending_inside_batches)
{
    hog_data *d = skewed(2000, 500, false, 13);
    hog_train_opts o;
    th_opts_init(&o);
    o.schedule = HOG_SCHED_CONSTANT;
    o.eta = 0.5;
    o.l2 = 1.9;
    o.epochs = 2;
    o.batch_size = 64;
    o.cyclades_hot_degree = 100;
    hog_model *m = same_at_every_thread_count(d, &o, NULL, "short segments, hot");
    hog_model_free(m);
    o.cyclades_hot_degree = 0;
    o.repartition = 1;
    hog_model *s = fit(d, &o, HOG_ALGO_SERIAL, 1);
    m = fit(d, &o, HOG_ALGO_CYCLADES, 3);
    assert_same(s, m, "short segments, hot off vs serial");
    hog_model_free(s);
    hog_model_free(m);
    hog_data_free(d);
}

Test(cyclades, seed_changes_the_model_and_batch_size_is_clamped)
{
    hog_data *d = skewed(500, 300, false, 17);
    hog_train_opts o;
    th_opts_init(&o);
    o.epochs = 2;
    hog_model *a = fit(d, &o, HOG_ALGO_CYCLADES, 2);
    o.seed = 2;
    hog_model *b = fit(d, &o, HOG_ALGO_CYCLADES, 2);
    cr_assert_neq(memcmp(a->w, b->w, (d->n_features + 1) * sizeof(float)), 0);
    hog_model_free(b);
    o.batch_size = 1000000; /* more than the rows: one batch */
    hog_cyclades_stats st = { .size = sizeof st };
    hog_train_hooks hk = { .size = sizeof hk };
    hk.cyclades_stats = &st;
    b = fit_hooked(d, &o, &hk, HOG_ALGO_CYCLADES, 2);
    cr_assert_eq(st.batch_size, 500);
    cr_assert_eq(st.batches, 1);
    hog_model_free(a);
    hog_model_free(b);
    hog_data_free(d);
}

/* The benchmark's skewed set in small (hogtrain gen --zipf 1.1, 30 per row):
 * 12,000 rows, the first 10,000 for training, the last 2,000 for testing.
 * About 85% of the nonzeros are hot. Each hot weight steps once per batch
 * with the batch's summed gradient; when AdaGrad's accumulator took the
 * square of that sum instead of the serial steps' sum of squares, the hot
 * weights moved about sqrt(rows in the batch) times too little and the
 * test accuracy was 5 points below Hogwild!'s with the logistic loss, 10
 * with the hinge loss. */
Test(cyclades, skewed_generated_accuracy_within_half_a_point, .timeout = 60)
{
    char dir[256], all[300], trp[300], tep[300];
    cr_assert(th_tmpdir(dir, sizeof dir));
    snprintf(all, sizeof all, "%s/skew.svm", dir);
    snprintf(trp, sizeof trp, "%s/skew.train.svm", dir);
    snprintf(tep, sizeof tep, "%s/skew.test.svm", dir);
    struct hog_gen_opts g;
    hog_gen_opts_init(&g);
    g.rows = 12000;
    g.features = 5000;
    g.nnz_per_row = 30;
    g.zipf = 1.1;
    g.seed = 7;
    write_gen(&g, all);
    FILE *in = fopen(all, "r"), *tr = fopen(trp, "w"), *te = fopen(tep, "w");
    cr_assert(in && tr && te);
    char *line = NULL;
    size_t cap = 0;
    for (uint64_t i = 0; getline(&line, &cap, in) > 0; i++)
        fputs(line, i < 10000 ? tr : te);
    free(line);
    fclose(in);
    cr_assert_eq(fclose(tr), 0);
    cr_assert_eq(fclose(te), 0);
    hog_data *d = load(trp, g.features), *t = load(tep, g.features);
    cr_assert_eq(d->m.rows, 10000);
    cr_assert_eq(t->m.rows, 2000);

    const hog_loss losses[] = { HOG_LOSS_LOGISTIC, HOG_LOSS_HINGE };
    for (size_t k = 0; k < sizeof losses / sizeof losses[0]; k++) {
        hog_train_opts o;
        th_opts_init(&o);
        o.loss = losses[k];
        th_opts_step_for_loss(&o);
        o.epochs = 10;
        hog_cyclades_stats st = { .size = sizeof st };
        hog_train_hooks hk = { .size = sizeof hk };
        hk.cyclades_stats = &st;
        hog_model *m = fit_hooked(d, &o, &hk, HOG_ALGO_CYCLADES, 2);
        cr_assert_gt(st.hot_nnz_share, 0.7, "hot share %g", st.hot_nnz_share);
        hk.cyclades_stats = NULL;
        hog_model *m3 = fit_hooked(d, &o, &hk, HOG_ALGO_CYCLADES, 3);
        assert_same(m, m3, "skewed, 2 vs 3 threads");
        hog_model_free(m3);
        hog_model *s = fit_hooked(d, &o, &hk, HOG_ALGO_SERIAL, 1);
        hog_model *h = fit_hooked(d, &o, &hk, HOG_ALGO_HOGWILD, 2);
        double ac = accuracy(m, t), as = accuracy(s, t), ah = accuracy(h, t);
        cr_assert_gt(ac, 0.8, "loss %d: cyclades test accuracy %.4f",
                     (int)o.loss, ac);
        /* not worse by more than half a point (better is allowed: with
         * hinge Cyclades is up to 0.6 points above Hogwild! here) */
        cr_assert_gt(ac, ah - 0.005, "loss %d: cyclades %.4f vs Hogwild! %.4f",
                     (int)o.loss, ac, ah);
        cr_assert_gt(ac, as - 0.005, "loss %d: cyclades %.4f vs serial %.4f",
                     (int)o.loss, ac, as);
        hog_model_free(m);
        hog_model_free(s);
        hog_model_free(h);
    }
    hog_data_free(t);
    hog_data_free(d);
}

/* ---- real data ------------------------------------------------------------- */

Test(cyclades, news20_same_model_at_every_thread_count_and_accuracy,
     .timeout = 120)
{
    TH_DATA_OR_SKIP(tr, "news20.binary.train.svm");
    TH_DATA_OR_SKIP(te, "news20.binary.test.svm");
    hog_data *d = load(tr, 0), *t = load(te, d->n_features);
    hog_train_opts o;
    th_opts_init(&o);
    o.epochs = 3;
    hog_cyclades_stats st = { .size = sizeof st };
    hog_train_hooks hk = { .size = sizeof hk };
    hk.cyclades_stats = &st;
    hog_model *m = same_at_every_thread_count(d, &o, &hk, "news20, hot auto");
    /* every feature in the graph: one component holds the whole batch */
    cr_assert_gt(st.all_largest_share, 0.99, "%g", st.all_largest_share);
    cr_assert_lt(st.largest_share, 0.1, "%g", st.largest_share);
    hog_model *s = fit_hooked(d, &o, &hk, HOG_ALGO_SERIAL, 1);
    hog_model *h = fit_hooked(d, &o, &hk, HOG_ALGO_HOGWILD, 2);
    double ac = accuracy(m, t), as = accuracy(s, t), ah = accuracy(h, t);
    hog_model_free(h);
    cr_assert_gt(ac, ah - 0.005, "cyclades %.4f vs Hogwild! %.4f", ac, ah);
    cr_assert_gt(ac, 0.90, "cyclades test accuracy %.4f", ac);
    /* not worse than the serial trainer by more than half a point (the
     * delayed hot steps average over a batch and may do better) */
    cr_assert_gt(ac, as - 0.005, "cyclades %.4f vs serial %.4f", ac, as);
    hog_model_free(m);

    o.cyclades_hot_degree = 0; /* serial-exact; news20 is then one component per batch */
    o.repartition = 1;
    o.epochs = 1;
    hog_model_free(s);
    s = fit_hooked(d, &o, &hk, HOG_ALGO_SERIAL, 1);
    m = fit_hooked(d, &o, &hk, HOG_ALGO_CYCLADES, 2);
    assert_same(s, m, "news20, hot off vs the serial trainer");
    hog_model_free(m);
    hog_model_free(s);
    hog_data_free(t);
    hog_data_free(d);
}

Test(cyclades, a9a_same_model_at_every_thread_count_and_accuracy,
     .timeout = 120)
{
    TH_DATA_OR_SKIP(tr, "a9a");
    TH_DATA_OR_SKIP(te, "a9a.t");
    hog_data *d = load(tr, 0), *t = load(te, d->n_features);
    hog_train_opts o;
    th_opts_init(&o);
    o.epochs = 3;
    hog_model *m = same_at_every_thread_count(d, &o, NULL, "a9a, hot auto");
    hog_model *s = fit(d, &o, HOG_ALGO_SERIAL, 1);
    hog_model *h = fit(d, &o, HOG_ALGO_HOGWILD, 2);
    double ac = accuracy(m, t), as = accuracy(s, t), ah = accuracy(h, t);
    hog_model_free(h);
    cr_assert_gt(ac, ah - 0.005, "cyclades %.4f vs Hogwild! %.4f", ac, ah);
    cr_assert_gt(ac, 0.83, "cyclades test accuracy %.4f", ac);
    /* not worse than the serial trainer by more than half a point (the
     * delayed hot steps average over a batch and may do better) */
    cr_assert_gt(ac, as - 0.005, "cyclades %.4f vs serial %.4f", ac, as);
    hog_model_free(m);
    hog_model_free(s);

    o.cyclades_hot_degree = 0;
    hog_model *ref = fit_reference(d, &o);
    m = fit(d, &o, HOG_ALGO_CYCLADES, 3);
    assert_same(ref, m, "a9a, hot off vs the serial reference");
    hog_model_free(m);
    hog_model_free(ref);
    hog_data_free(t);
    hog_data_free(d);
}

/* ---- the command ------------------------------------------------------------ */

/* ---- K classes: softmax -------------------------------------------------------- */

/* skewed()'s rows in k classes, each row the class of the highest of k
 * planted models. */
static hog_data *skewed_k(uint64_t rows, uint64_t nf, unsigned k,
                          uint64_t seed)
{
    hog_data *d = skewed(rows, nf, false, seed);
    cr_assert(th_label_argmax(d, k, 1.0, seed, 12));
    return d;
}

static hog_train_opts softmax_opts(void)
{
    hog_train_opts o;
    th_opts_init(&o);
    o.multiclass = HOG_MULTICLASS_SOFTMAX;
    o.epochs = 3;
    return o;
}

/* The softmax reference: Cyclades' row order through the K-wide kernel,
 * into a model of like's classes (progress: its progressive figures). */
static hog_model *fit_reference_k(const hog_data *d, const hog_train_opts *o,
                                  const hog_model *like, struct th_prog *prog)
{
    hog_model *m;
    hog_err err = { { 0 } };
    const double *lab;
    unsigned k = hog_model_classes(like, &lab);
    cr_assert_eq(hog_model_new(d->n_features, o->loss, o->bias, &m, &err),
                 HOG_OK);
    cr_assert_eq(hog_model_set_classes(m, k, lab, HOG_MULTICLASS_SOFTMAX,
                                       &err), HOG_OK, "%s", err.msg);
    hog_train_opts ro = *o;
    /* row weights reach the trainers on the front door's view of the data
     * (train/run.c); with no class weights each row's is its own */
    hog_data view = *d;
    memset(view.mem, 0, sizeof view.mem);
    memset(view.mem_len, 0, sizeof view.mem_len);
    view.release = NULL;
    view.row_w = o->row_weights;
    ro.row_weights = NULL;
    struct hog_fit f = { .train = &view, .o = &ro, .model = m,
                         /* prog asks the reference to score its rows */
                         .hooks.progress = prog ? th_on_prog : NULL,
                         .epoch_end = prog ? prog_epoch_end : no_epoch_end,
                         .tick = no_tick, .ctx = prog, .prog_loss = NAN,
                         .prog_accuracy = NAN };
    cr_assert_eq(hog_cyclades_train_reference(&f, true, &err), HOG_OK, "%s",
                 err.msg);
    return m;
}

/* The K-wide kernel's ways of keeping weights (core/softmax.c's kinds):
 * AdaGrad with l2 (the default), with l1, without either; a shared
 * schedule with l2 only (scaled), with l1 (prefix sums), with neither. */
static void softmax_kind(hog_train_opts *o, int kind)
{
    static const struct {
        hog_schedule sch;
        double eta, l1, l2;
    } kinds[] = {
        { HOG_SCHED_ADAGRAD, 0.3, 0, 1e-5 },
        { HOG_SCHED_ADAGRAD, 0.3, 1e-4, 1e-5 },
        { HOG_SCHED_ADAGRAD, 0.3, 0, 0 },
        { HOG_SCHED_INVSCALING, 0.2, 0, 1e-3 },
        { HOG_SCHED_CONSTANT, 0.05, 1e-4, 1e-3 },
        { HOG_SCHED_CONSTANT, 0.05, 0, 0 },
    };
    o->schedule = kinds[kind].sch;
    o->eta = kinds[kind].eta;
    o->l1 = kinds[kind].l1;
    o->l2 = kinds[kind].l2;
}
#define SOFTMAX_KINDS 6

static double accuracy_k(const hog_model *m, const hog_data *d)
{
    struct hog_metrics r;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_metrics_eval(m, d, &r, &err), HOG_OK, "%s", err.msg);
    return r.accuracy;
}

/* Without hot features no row's step is delayed: Cyclades' softmax is the
 * K-wide kernel over its own row order (the reference) at every thread
 * count, progressive figures included, and with a partition per epoch the
 * serial softmax trainer's model, bit for bit. Row weights (zeros among
 * them) and no bias; a few kinds with the bias. */
Test(cyclades, softmax_hot_off_equals_its_serial_references)
{
    hog_data *d = skewed_k(3000, 3000, 5, 5);
    float *rw = malloc(d->m.rows * sizeof *rw);
    cr_assert(rw);
    for (uint64_t i = 0; i < d->m.rows; i++)
        rw[i] = (float)(i % 7) * 0.25f; /* 0, 0.25, ..., 1.5 */
    for (int kind = 0; kind < SOFTMAX_KINDS; kind++)
        for (int v = 0; v < 3; v++) {
            hog_train_opts o = softmax_opts();
            softmax_kind(&o, kind);
            o.cyclades_hot_degree = 0;
            o.batch_size = 40;
            o.bias = v == 2 ? 1.0 : 0.0;
            o.row_weights = v == 1 ? rw : NULL;
            hog_cyclades_stats st = { .size = sizeof st };
            hog_train_hooks hk = { .size = sizeof hk };
            hk.cyclades_stats = &st;
            char what[96];
            snprintf(what, sizeof what, "softmax kind %d, %s", kind,
                     v == 1 ? "row weights" : v == 2 ? "bias" : "plain");
            struct th_prog first = cyclades_prog(d, o, 1);
            hog_model *m = fit_hooked(d, &o, &hk, HOG_ALGO_CYCLADES, 1);
            cr_assert_eq(m->n_classes, 5);
            cr_assert(any_nonzero(m), "%s: the model is all zero", what);
            struct th_prog rp = { 0 };
            hog_model *ref = fit_reference_k(d, &o, m, &rp);
            assert_same(ref, m, what);
            cr_assert(memcmp(&rp, &first, sizeof rp) == 0,
                      "%s, the reference: %.17g against %.17g", what,
                      rp.loss[0], first.loss[0]);
            cr_assert_eq(first.n, 3);
            cr_assert_lt(first.loss[2], first.loss[0], "%s", what);
            for (size_t i = 1; i < N_THREADS; i++) {
                hog_model *t = fit_hooked(d, &o, &hk, HOG_ALGO_CYCLADES, thread_counts[i]);
                assert_same(ref, t, what);
                hog_model_free(t);
                struct th_prog p = cyclades_prog(d, o, thread_counts[i]);
                cr_assert(memcmp(&p, &first, sizeof p) == 0, "%s", what);
            }
            if (o.bias == 0.0) /* the bias joins every row */
                cr_assert_gt(st.components, 2.0, "%s: components per batch "
                             "%g", what, st.components);
            hog_model_free(m);
            hog_model_free(ref);

            o.repartition = 1; /* the serial trainer's own order */
            ref = fit_hooked(d, &o, &hk, HOG_ALGO_SERIAL, 1);
            m = fit_hooked(d, &o, &hk, HOG_ALGO_CYCLADES, 3);
            assert_same(ref, m, what);
            hog_model_free(m);
            hog_model_free(ref);
        }
    free(rw);
    hog_data_free(d);
}

/* Hot features and the bias, each hot feature's K weights stepped
 * together once a batch: one model at every thread count for every kind
 * (segments that end inside batches too), and as accurate on its
 * training rows as the serial trainer. */
Test(cyclades, softmax_same_model_at_every_thread_count, .timeout = 60)
{
    hog_data *d = skewed_k(4000, 2000, 6, 21);
    for (int kind = 0; kind < SOFTMAX_KINDS; kind++) {
        hog_train_opts o = softmax_opts();
        softmax_kind(&o, kind);
        hog_cyclades_stats st = { .size = sizeof st };
        hog_train_hooks hk = { .size = sizeof hk };
        hk.cyclades_stats = &st;
        char what[64];
        snprintf(what, sizeof what, "softmax kind %d, hot auto", kind);
        hog_model *m = same_at_every_thread_count(d, &o, &hk, what);
        cr_assert_gt(st.hot_features, 0, "%s", what);
        cr_assert(st.bias_hot, "%s", what);
        cr_assert_lt(st.hot_nnz_share, 1.0, "%s", what);
        cr_assert_gt(st.components, 1.0, "%s", what);
        hog_model *s = fit_hooked(d, &o, &hk, HOG_ALGO_SERIAL, 1);
        double ac = accuracy_k(m, d), as = accuracy_k(s, d);
        cr_log_info("%s: training accuracy %.4f, serial %.4f", what, ac, as);
        cr_assert_gt(ac, as - 0.02, "%s: %.4f vs serial %.4f", what, ac, as);
        for (uint64_t j = 0; j < hog_model_len(m); j++)
            cr_assert(isfinite(m->w[j]), "%s: weight %llu is %g", what,
                      (unsigned long long)j, m->w[j]);
        hog_model_free(s);
        hog_model_free(m);
    }
    /* eta l2 = 0.95: the kernel's segments end inside batches */
    hog_train_opts o = softmax_opts();
    o.schedule = HOG_SCHED_CONSTANT;
    o.eta = 0.5;
    o.l2 = 1.9;
    o.epochs = 2;
    o.batch_size = 64;
    o.cyclades_hot_degree = 100;
    hog_model_free(same_at_every_thread_count(d, &o, NULL, "softmax, short "
                                              "segments"));
    hog_data_free(d);
}

/* The K-wide hot step by hand: six rows of three features, every feature
 * and the bias hot, one batch of all six rows, 3 classes. Each row reads
 * the weights as they stood at the batch's start (zero: p = 1/3 for every
 * class), and each weight j of class c then takes one step with
 * G_jc = sum_i (p_ic - [c = y_i]) x_ij, divided by max(1, eta_j R_jc),
 * R_jc = sum_i |x_ij| 2 p_ic (1 - p_ic) |x_i|_1 (the bias's 1 counted);
 * AdaGrad's rate from S_j = sum_i x_ij^2 |g_i|^2. Computed here in double
 * from the formulas, for a constant step small enough to take every sum
 * as it is and large enough to damp them all, and for AdaGrad, at 1 and 2
 * threads. */
Test(cyclades, softmax_hot_step_by_hand)
{
    enum { N = 6, NF = 3, K = 3, NW = NF + 1 };
    static const uint64_t off[N + 1] = { 0, 2, 4, 6, 7, 9, 12 };
    static const uint32_t idx[12] = { 0, 1, 1, 2, 0, 2, 0, 1, 2, 0, 1, 2 };
    static const float val[12] = { 1.0f, 2.0f, 0.5f, 3.0f, 2.0f, 1.0f,
                                   0.5f, 1.5f, 0.25f, 1.0f, 1.0f, 1.0f };
    static const float lab[N] = { 0, 1, 2, 0, 1, 2 };
    /* dense rows, the bias as feature NF */
    double x[N][NW] = { { 0 } }, l1[N] = { 0 };
    for (int i = 0; i < N; i++) {
        for (uint64_t q = off[i]; q < off[i + 1]; q++)
            x[i][idx[q]] = val[q];
        x[i][NF] = 1.0;
        for (int j = 0; j < NW; j++)
            l1[i] += fabs(x[i][j]);
    }
    const double p = 1.0 / K, h = 2.0 * p * (1.0 - p);
    const struct {
        hog_schedule sch;
        double eta;
    } runs[] = { { HOG_SCHED_CONSTANT, 0.01 }, { HOG_SCHED_CONSTANT, 0.4 },
                 { HOG_SCHED_ADAGRAD, 0.3 } };
    unsigned damped = 0, undamped = 0;
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        uint64_t *o_off = malloc(sizeof off);
        uint32_t *o_idx = malloc(sizeof idx);
        float *o_val = malloc(sizeof val), *o_y = malloc(sizeof lab);
        cr_assert(o_off && o_idx && o_val && o_y);
        memcpy(o_off, off, sizeof off);
        memcpy(o_idx, idx, sizeof idx);
        memcpy(o_val, val, sizeof val);
        memcpy(o_y, lab, sizeof lab);
        hog_data *d;
        hog_err err = { { 0 } };
        cr_assert_eq(hog_data_wrap(N, 12, o_off, o_y, o_idx, o_val, NF, &d,
                                   &err), HOG_OK, "%s", err.msg);
        hog_train_opts o = softmax_opts();
        o.schedule = runs[r].sch;
        o.eta = runs[r].eta;
        o.l2 = 0;
        o.epochs = 1;
        o.batch_size = N;
        o.cyclades_hot_degree = 1; /* every feature is in 4 rows: all hot */
        hog_cyclades_stats st = { .size = sizeof st };
        hog_train_hooks hk = { .size = sizeof hk };
        hk.cyclades_stats = &st;
        hog_model *m = fit_hooked(d, &o, &hk, HOG_ALGO_CYCLADES, 1);
        cr_assert_eq(st.hot_features, NF);
        cr_assert(st.bias_hot);
        cr_assert_eq(m->n_classes, K);
        for (int j = 0; j < NW; j++) {
            double S = 0;
            for (int i = 0; i < N; i++)
                S += x[i][j] * x[i][j] * (2 * p * p + (1 - p) * (1 - p));
            for (int c = 0; c < K; c++) {
                double G = 0, R = 0;
                for (int i = 0; i < N; i++) {
                    G += (p - (c == (int)lab[i])) * x[i][j];
                    R += fabs(x[i][j]) * h * l1[i];
                }
                double eta = (double)(float)runs[r].eta, rate = eta;
                double lim = eta * R, one = 1.0;
                if (o.schedule == HOG_SCHED_ADAGRAD) {
                    one = sqrt(HOG_ADAGRAD_EPS + S);
                    rate = (double)((float)runs[r].eta /
                                    sqrtf((float)HOG_ADAGRAD_EPS + (float)S));
                }
                bool damp = lim > one;
                damped += damp;
                undamped += !damp;
                double want = -rate * (damp ? G * one / lim : G);
                double got = m->w[(uint64_t)c * NW + j];
                cr_assert(fabs(got - want) <= 1e-6 * fabs(want) + 1e-9,
                          "run %zu, weight %d of class %d: %.9g, by hand "
                          "%.9g (%s)", r, j, c, got, want,
                          damp ? "damped" : "as summed");
            }
        }
        hog_model *m2 = fit_hooked(d, &o, &hk, HOG_ALGO_CYCLADES, 2);
        assert_same(m, m2, "the hot step by hand, 2 threads");
        hog_model_free(m2);
        hog_model_free(m);
        hog_data_free(d);
    }
    cr_assert_gt(damped, 0);
    cr_assert_gt(undamped, 0);
}

/* news20's 20 classes: one model at 1, 2 and 3 threads, and LIBLINEAR's
 * one-vs-rest accuracy (-s 0: 84.33%, tests/test_softmax.c) within a
 * point, as the serial softmax trainer reaches it; not worse than the
 * serial trainer by more than half a point. */
Test(cyclades, softmax_news20_same_model_and_accuracy, .timeout = 180)
{
    TH_HEAVY_OR_SKIP();
    TH_DATA_OR_SKIP(tr, "news20.train.svm");
    TH_DATA_OR_SKIP(te, "news20.test.svm");
    hog_data *d = load(tr, 0), *t = load(te, d->n_features);
    hog_train_opts o = softmax_opts();
    o.epochs = 5;
    o.seed = 1;
    hog_cyclades_stats st = { .size = sizeof st };
    hog_train_hooks hk = { .size = sizeof hk };
    hk.cyclades_stats = &st;
    hog_model *m = fit_hooked(d, &o, &hk, HOG_ALGO_CYCLADES, 1);
    for (unsigned threads = 2; threads <= 3; threads++) {
        hog_model *p = fit_hooked(d, &o, &hk, HOG_ALGO_CYCLADES, threads);
        assert_same(m, p, "news20 softmax, 1 thread against more");
        hog_model_free(p);
    }
    cr_assert_gt(st.hot_nnz_share, 0.5, "%g", st.hot_nnz_share);
    hog_model *s = fit_hooked(d, &o, &hk, HOG_ALGO_SERIAL, 1);
    double ac = 100 * accuracy_k(m, t), as = 100 * accuracy_k(s, t);
    cr_log_info("news20 softmax: Cyclades %.2f%%, serial %.2f%%", ac, as);
    cr_assert_gt(ac, 84.3335 - 1.0, "Cyclades %.2f%%", ac);
    cr_assert_gt(ac, as - 0.5, "Cyclades %.2f%% vs serial %.2f%%", ac, as);
    hog_model_free(s);
    hog_model_free(m);
    hog_data_free(t);
    hog_data_free(d);
}
