/* average: averaged SGD (--average) against the mean of the iterates of a
 * naive dense loop, by hand on three rows and on a9a; Hogwild! at one
 * thread against the serial trainer; the combinations refused. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/loss.h"
#include "core/sgd.h"
#include "helpers.h"
#include "train/train.h"

/* The options of these tests: o's loss, schedule, l1, l2 and eta, the
 * rows in their order every epoch, a bias feature, averaging from step
 * `from`. */
static hog_train_opts avg_opts(hog_schedule sched, double l1, double l2,
                               double eta, unsigned epochs, uint64_t from)
{
    hog_train_opts o;
    th_opts_init(&o);
    o.loss = HOG_LOSS_LOGISTIC;
    o.schedule = sched;
    o.l1 = l1;
    o.l2 = l2;
    o.eta = eta;
    o.epochs = epochs;
    o.bias = 1.0;
    o.shuffle = 0;
    o.average = from;
    hog_err err;
    cr_assert_eq(hog_train_opts_resolve(&o, NULL, &err), HOG_OK, "%s",
                 err.msg);
    return o;
}

/* The naive dense loop: every weight shrunk, stepped and thresholded at
 * every step, rows in their order, and after each step every weight added
 * to its sum from step `from` on (1-based, as hog_train_opts.average).
 * f32: each weight kept as a float, as the kernel stores it, with the
 * kernel's order of operations (the margin over the row's entries, then
 * the bias), so that where every weight is touched at every step, or
 * nothing shrinks, the iterates are the kernel's bit for bit. Returns
 * the mean of the counted iterates (malloc'd). */
static double *naive_average(const hog_data *d, const hog_train_opts *o,
                             bool f32)
{
    uint64_t n = d->m.rows, nf = d->n_features;
    uint64_t nw = nf + (o->bias != 0);
    double *w = calloc(nw, sizeof *w), *sum = calloc(nw, sizeof *sum);
    double *g = calloc(nw, sizeof *g);
    uint64_t t = 0, counted = 0;
    for (unsigned e = 0; e < o->epochs; e++)
        for (uint64_t i = 0; i < n; i++, t++) {
            struct hog_row r = hog_csr_row(&d->m, i);
            double y = hog_loss_target(o->loss, d->label_pos, r.y);
            double m = 0.0;
            for (uint32_t k = 0; k < r.nnz; k++)
                m += w[r.idx[k]] * r.val[k];
            if (o->bias != 0)
                m += w[nf] * o->bias;
            double dl = hog_loss_deriv(o->loss, hog_loss_param_of(o), y, m);
            memset(g, 0, nw * sizeof *g);
            for (uint32_t k = 0; k < r.nnz; k++)
                g[r.idx[k]] = dl * r.val[k];
            if (o->bias != 0)
                g[nf] = dl * o->bias;
            double eta = th_sgd_eta(o, t, n);
            for (uint64_t j = 0; j < nw; j++) {
                double u = th_soft((1.0 - eta * o->l2) * w[j] - eta * g[j],
                                eta * o->l1);
                w[j] = f32 ? (double)(float)u : u;
            }
            if (t + 1 >= o->average) {
                for (uint64_t j = 0; j < nw; j++)
                    sum[j] += w[j];
                counted++;
            }
        }
    for (uint64_t j = 0; j < nw; j++)
        sum[j] /= (double)counted;
    free(w), free(g);
    return sum;
}

/* The arrays of rows_of's data set, which borrows them (they are of the
 * library's own types), so they live as long as it. */
struct rows {
    uint64_t off[8];
    uint32_t idx[24];
    float val[24];
};

/* Rows given as dense arrays (0: absent), their labels, into a data set
 * on r's arrays. */
static hog_data *rows_of(struct rows *r, const double (*x)[3], const float *y,
                         uint32_t n)
{
    uint64_t *off = r->off;
    uint32_t *idx = r->idx;
    float *val = r->val;
    uint32_t nnz = 0;
    off[0] = 0;
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < 3; j++)
            if (x[i][j] != 0) {
                idx[nnz] = j;
                val[nnz++] = (float)x[i][j];
            }
        off[i + 1] = nnz;
    }
    hog_csr_arrays a = {
        .size = sizeof a, .rows = n, .cols = 3,
        .indptr = off, .indptr_type = HOG_DTYPE_UINT64,
        .indices = idx, .indices_type = HOG_DTYPE_UINT32,
        .values = val, .values_type = HOG_DTYPE_FLOAT32,
        .labels = y, .labels_type = HOG_DTYPE_FLOAT32,
    };
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_data_from_csr(&a, 1, &d, &err), HOG_OK, "%s", err.msg);
    return d;
}

/* The kernel's sums, driven as the serial trainer drives it (one segment
 * an epoch): the mean of the counted iterates in double, before the
 * model's rounding to float. */
static double *kernel_average(const hog_data *d, const hog_train_opts *o)
{
    struct hog_sgd s;
    hog_err err;
    cr_assert_eq(hog_sgd_init(&s, o, d, &err), HOG_OK, "%s", err.msg);
    uint64_t n = d->m.rows, *order = malloc(n * sizeof *order), t = 0;
    for (uint64_t i = 0; i < n; i++)
        order[i] = i;
    for (unsigned e = 0; e < o->epochs; e++)
        for (uint64_t done = 0; done < n;) {
            uint32_t len = hog_sgd_segment_begin(&s, t, (uint32_t)(n - done));
            hog_sgd_run(&s, d, order + done, len, 0, 1);
            hog_sgd_segment_end(&s, len);
            t += len;
            done += len;
        }
    cr_assert_geq(t, o->average);
    double counted = (double)(t - o->average + 1);
    double *mean = malloc(s.n_weights * sizeof *mean);
    for (uint64_t j = 0; j < s.n_weights; j++)
        mean[j] = (double)s.asum[j] / counted;
    free(order);
    hog_sgd_free(&s);
    return mean;
}

static hog_model *train(const hog_data *d, const hog_train_opts *o)
{
    hog_model *m;
    hog_err err;
    cr_assert_eq(hog_train(d, NULL, o, NULL, &m, &err), HOG_OK, "%s",
                 err.msg);
    return m;
}

/* Three rows, two epochs, a constant step: the kernel's mean against the
 * naive loop's to 1e-12 (the iterates are the same floats; only the sums'
 * order differs), and the model is that mean as a float. */
static void three_rows(const double (*x)[3], double l2, uint64_t from)
{
    static const float y[3] = { 1, -1, 1 };
    struct rows r;
    hog_data *d = rows_of(&r, x, y, 3);
    hog_train_opts o = avg_opts(HOG_SCHED_CONSTANT, 0.0, l2, 0.4, 2, from);
    double *ref = naive_average(d, &o, true);
    double *got = kernel_average(d, &o);
    hog_model *m = train(d, &o);
    const float *w = hog_model_weights(m);
    int moved = 0;
    for (uint64_t j = 0; j < 4; j++) {
        cr_assert(fabs(got[j] - ref[j]) <= 1e-12 * fabs(ref[j]),
                  "l2 %g, from step %llu: weight %llu's mean %.17g, the "
                  "naive loop's %.17g", l2, (unsigned long long)from,
                  (unsigned long long)j, got[j], ref[j]);
        cr_assert_eq(w[j], (float)got[j], "weight %llu: model %.9g, mean "
                     "%.9g", (unsigned long long)j, w[j], got[j]);
        moved += ref[j] != 0;
    }
    cr_assert_eq(moved, 4, "every weight moves: no test of it otherwise");
    hog_model_free(m);
    free(ref), free(got);
    hog_data_free(d);
}

/* Sparse rows without regularization: each weight is untouched for some
 * steps, whose states the lazy sums count by the closed form. */
Test(average, three_sparse_rows_equal_the_naive_mean)
{
    static const double x[3][3] = { { 1.0, 0, -0.5 },
                                    { 0, 2.0, 0 },
                                    { -1.5, 0.5, 0 } };
    three_rows(x, 0.0, 1);
    three_rows(x, 0.0, 4); /* from the second epoch's first step */
}

/* Dense rows with l2: every weight shrinks and steps at every step. */
Test(average, three_dense_rows_with_l2_equal_the_naive_mean)
{
    static const double x[3][3] = { { 1.0, -0.25, -0.5 },
                                    { 0.75, 2.0, 1.0 },
                                    { -1.5, 0.5, 0.25 } };
    three_rows(x, 0.1, 1);
    three_rows(x, 0.1, 5);
}

/* a9a (sparse: 14 of 123 features a row) over three epochs with l1 and l2,
 * both shared schedules: the model against the naive dense loop in double.
 * The lazy iterates are rounded to float at each touch and the naive ones
 * never, so they part by float rounding carried over 97,683 steps: 2e-5
 * of the weight (1e-5 of the iterates in test_sgd.c's lazy-against-eager
 * tests on smaller runs); l1 zeroes some weights for good, and those must
 * be zero in both. */
static void a9a_equals_naive(hog_schedule sched, double eta, uint64_t from)
{
    TH_DATA_OR_SKIP(path, "a9a");
    hog_data *d = th_load(path);
    hog_train_opts o = avg_opts(sched, 1e-4, 1e-3, eta, 3, from);
    double *ref = naive_average(d, &o, false);
    hog_model *m = train(d, &o);
    const float *w = hog_model_weights(m);
    int nonzero = 0;
    for (uint64_t j = 0; j <= d->n_features; j++) {
        cr_assert(fabs(w[j] - ref[j]) <= 2e-5 * fmax(1.0, fabs(ref[j])),
                  "schedule %d, from step %llu: weight %llu lazy %.9g, "
                  "naive %.9g", (int)sched, (unsigned long long)from,
                  (unsigned long long)j, w[j], ref[j]);
        nonzero += ref[j] != 0;
    }
    cr_assert_gt(nonzero, 50, "the average trains to zeros: no test");
    /* the averaged model is not the last iterate, in which l1 has zeroed
     * weights (so that the sums' zero crossing is taken) */
    o.average = 0;
    hog_model *last = train(d, &o);
    const float *wl = hog_model_weights(last);
    int zero = 0;
    for (uint64_t j = 0; j <= d->n_features; j++)
        zero += wl[j] == 0 && w[j] != 0;
    cr_assert_gt(zero, 0, "l1 zeroes no averaged weight: the closed form's "
                 "zero crossing untested");
    cr_assert_neq(memcmp(wl, w, (d->n_features + 1) * sizeof *w), 0);
    hog_model_free(last);
    hog_model_free(m);
    free(ref);
    hog_data_free(d);
}

Test(average, a9a_constant_equals_the_naive_mean, .timeout = 120)
{
    a9a_equals_naive(HOG_SCHED_CONSTANT, 0.05, 1);
    a9a_equals_naive(HOG_SCHED_CONSTANT, 0.05, 40000); /* in epoch 2 */
}

Test(average, a9a_invscaling_equals_the_naive_mean, .timeout = 120)
{
    a9a_equals_naive(HOG_SCHED_INVSCALING, 0.5, 1);
}

/* Hogwild! at one thread steps the rows of the serial trainer in its
 * order, and with averaging returns its average bit for bit, in every
 * update mode. */
Test(average, hogwild_one_thread_equals_serial, .timeout = 60)
{
    TH_DATA_OR_SKIP(path, "a9a");
    hog_data *d = th_load(path);
    hog_train_opts o = avg_opts(HOG_SCHED_INVSCALING, 1e-5, 1e-4, 0.5, 2, 1);
    o.shuffle = 1;
    hog_model *ref = train(d, &o);
    static const hog_update modes[] = { HOG_UPDATE_NONE, HOG_UPDATE_ATOMIC,
                                        HOG_UPDATE_STRIPED,
                                        HOG_UPDATE_MUTEX };
    o.algo = HOG_ALGO_HOGWILD;
    o.threads = 1;
    for (size_t i = 0; i < 4; i++) {
        o.update = modes[i];
        hog_model *m = train(d, &o);
        cr_assert_eq(memcmp(hog_model_weights(ref), hog_model_weights(m),
                            (d->n_features + 1) * sizeof(float)), 0,
                     "update mode %d: Hogwild!'s average differs from the "
                     "serial trainer's", (int)modes[i]);
        hog_model_free(m);
    }
    hog_model_free(ref);
    hog_data_free(d);
}

/* The command: --average trains (invscaling when no schedule is given),
 * and what it does not combine with is refused with a sentence, exit 2. */
Test(average, command_trains_and_refuses_with_a_sentence, .timeout = 60)
{
    TH_DATA_OR_SKIP(path, "a9a");
    char dir[512], out[4096];
    th_tmpdir(dir, sizeof dir);
    int rc = th_run(out, sizeof out, "%s train --average 1 --epochs 1 %s "
                    "-o %s/avg.hgm", th_bin(), path, dir);
    cr_assert_eq(rc, 0, "%s", out);
    static const struct {
        const char *flags, *says;
    } refused[] = {
        { "--schedule ftrl", "not ftrl" },
        { "--schedule adagrad", "not adagrad" },
        { "--algo dcd", "--algo serial and hogwild" },
        { "--algo cyclades", "--algo serial and hogwild" },
        { "--algo hogwild --replicas core", "one shared model" },
        { "--save-state", "--save-state" },
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        rc = th_run(out, sizeof out, "%s train --average 1 %s %s -o "
                    "%s/no.hgm", th_bin(), refused[i].flags, path, dir);
        cr_assert_eq(rc, 2, "--average %s: exit %d: %s", refused[i].flags,
                     rc, out);
        cr_assert(strstr(out, refused[i].says), "--average %s: %s",
                  refused[i].flags, out);
    }
}
