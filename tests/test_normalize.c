/* --normalize: the model applied to raw data scores as the scaled model on
 * scaled data (the scales folded into the weights); invariant to a
 * feature's unit; Fashion-MNIST's 0..255 pixels reach LIBLINEAR's accuracy
 * with the defaults. */
#include <criterion/criterion.h>

#include "core/core.h"
#include "helpers.h"
#include "synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static hog_data *problem(uint64_t seed)
{
    hog_err err = { { 0 } };
    hog_data *d = th_synth(&(struct th_synth){
        .rows = 2000, .features = 60, .layout = TH_SYNTH_SKEW,
        .nnz_min = 3, .nnz_max = 12, .seed = seed, .stream = 3,
        .first = { .normal = true }, .noise = 0.2 }, &err);
    cr_assert(d, "%s", err.msg);
    return d;
}

/* Multiplies feature j's values by f[j % 3] in place. */
static void rescale(hog_data *d, const double *f)
{
    float *v = (float *)d->m.val;
    for (uint64_t e = 0; e < d->m.nnz; e++)
        v[e] = (float)(v[e] * f[d->m.idx[e] % 3]);
}

static double *scores(const hog_model *m, const hog_data *d)
{
    double *s = malloc(d->m.rows * sizeof *s);
    hog_err err;
    cr_assert(s);
    cr_assert_eq(hog_model_scores(m, d, s, &err), HOG_OK);
    return s;
}

Test(normalize, raw_scores_equal_the_scaled_problem_and_units_do_not_matter)
{
    hog_data *d = problem(1), *big = problem(1);
    const double f[3] = { 1000.0, 0.001, 37.0 };
    rescale(big, f);
    hog_train_opts o;
    th_opts_init(&o);
    o.normalize = 1;
    hog_model *a, *b;
    hog_err err;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &a, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_train(big, NULL, &o, NULL, &b, &err), HOG_OK, "%s", err.msg);
    /* the same scaled problem either way: the raw scores agree up to the
     * rounding of the scaled copies */
    double *sa = scores(a, d), *sb = scores(b, big);
    for (uint64_t i = 0; i < d->m.rows; i++)
        cr_assert(fabs(sa[i] - sb[i]) <= 1e-4 * (1 + fabs(sa[i])),
                  "row %llu: %.9g vs %.9g", (unsigned long long)i, sa[i],
                  sb[i]);
    /* by hand: train without --normalize on values divided by the
     * largest |value| of each feature, then divide the weights */
    hog_data *h = problem(1);
    double mx[60] = { 0 };
    for (uint64_t e = 0; e < h->m.nnz; e++)
        mx[h->m.idx[e]] = fmax(mx[h->m.idx[e]], fabs(h->m.val[e]));
    float *v = (float *)h->m.val;
    for (uint64_t e = 0; e < h->m.nnz; e++)
        v[e] = (float)(v[e] * (float)(1.0f / (float)mx[h->m.idx[e]]));
    o.normalize = 0;
    hog_model *c;
    cr_assert_eq(hog_train(h, NULL, &o, NULL, &c, &err), HOG_OK, "%s", err.msg);
    for (uint64_t j = 0; j < 60; j++) {
        float want = mx[j] > 0 ? c->w[j] * (float)(1.0f / (float)mx[j])
                               : c->w[j];
        cr_assert_eq(a->w[j], want, "weight %llu: %.9g vs %.9g",
                     (unsigned long long)j, a->w[j], want);
    }
    cr_assert_eq(a->w[60], c->w[60], "the bias weight is not scaled");
    free(sa);
    free(sb);
    hog_model_free(a);
    hog_model_free(b);
    hog_model_free(c);
    hog_data_free(d);
    hog_data_free(big);
    hog_data_free(h);
}

/* Fashion-MNIST's raw pixels (0..255): softmax with the default step
 * overshoots without scaling (81.23% measured); with --normalize it
 * reaches LIBLINEAR -s 0's one-vs-rest accuracy, 84.00%
 * (liblinear-train -s 0 -q fashion-mnist.train.svm m; liblinear-predict
 * fashion-mnist.test.svm m out), within half a point (84.36% measured). */
Test(normalize, fashion_mnist_softmax_defaults_reach_liblinear, .timeout = 240)
{
    TH_HEAVY_OR_SKIP();
    TH_DATA_OR_SKIP(trp, "fashion-mnist.train.svm");
    TH_DATA_OR_SKIP(tep, "fashion-mnist.test.svm");
    char dir[256], js[300], out[4096];
    cr_assert(th_tmpdir(dir, sizeof dir));
    snprintf(js, sizeof js, "%s/r.json", dir);
    int rc = th_run(out, sizeof out, "%s train -q --json %s --multiclass "
                    "softmax --normalize %s -t %s", th_bin(), js, trp, tep);
    cr_assert_eq(rc, 0, "%s", out);
    size_t len;
    char *j = th_slurp(js, &len);
    const char *p = strstr(j, "\"test_accuracy\": ");
    cr_assert(p, "%s", j);
    double acc = 100 * strtod(p + strlen("\"test_accuracy\": "), NULL);
    free(j);
    cr_assert_geq(acc, 84.00 - 0.5, "%.2f%%", acc);
}
