/* Data from the caller's arrays (hog_data_from_csr) and models handed out
 * and in without a file (hog_model_describe, hog_model_from_weights): the
 * arrays are used in place when their types are hogtrain's, converted
 * otherwise, and either way train the model the loaded file trains; a bad
 * matrix is refused with a sentence naming its row. */
#include <criterion/criterion.h>

#include "core/core.h"
#include "helpers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static hog_data *load(const char *path)
{
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    hog_data *d = NULL;
    hog_err e;
    cr_assert_eq(hog_data_load(path, &lo, &d, &e), HOG_OK, "%s", e.msg);
    return d;
}

/* One thread (deterministic), a bias, seed 7. */
static hog_model *train_loss(const hog_data *d, hog_algo algo, hog_loss loss,
                             unsigned epochs)
{
    hog_train_opts o;
    th_opts_init(&o);
    o.algo = algo;
    o.loss = loss;
    o.threads = 1;
    o.epochs = epochs;
    o.seed = 7;
    o.bias = 1.0;
    hog_model *m = NULL;
    hog_err e;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &e), HOG_OK, "%s", e.msg);
    return m;
}

static hog_model *train(const hog_data *d, hog_algo algo)
{
    return train_loss(d, algo, HOG_LOSS_LOGISTIC, 3);
}

static void same_weights(const hog_model *a, const hog_model *b)
{
    cr_assert_eq(hog_model_features(a), hog_model_features(b));
    uint64_t n = hog_model_len(a);
    cr_assert_eq(n, hog_model_len(b));
    cr_assert_eq(memcmp(hog_model_weights(a), hog_model_weights(b),
                        n * sizeof(float)), 0, "the weights differ");
}

/* f's own arrays, in hogtrain's types, as a caller's CSR matrix. */
static hog_csr_arrays own_arrays(const hog_data *f)
{
    return (hog_csr_arrays){
        .size = sizeof(hog_csr_arrays), .rows = f->m.rows,
        .cols = f->n_features,
        .indptr = f->m.off, .indptr_type = HOG_DTYPE_UINT64,
        .indices = f->m.idx, .indices_type = HOG_DTYPE_UINT32,
        .values = f->m.val, .values_type = HOG_DTYPE_FLOAT32,
        .labels = f->m.y, .labels_type = HOG_DTYPE_FLOAT32,
    };
}

/* a9a's arrays as the caller's, in hogtrain's own types: nothing copied. */
Test(arrays, zero_copy_trains_as_the_file)
{
    TH_DATA_OR_SKIP(path, "a9a");
    hog_data *f = load(path);
    hog_csr_arrays a = own_arrays(f);
    hog_data *d = NULL;
    hog_err e;
    cr_assert_eq(hog_data_from_csr(&a, 2, &d, &e), HOG_OK, "%s", e.msg);
    cr_assert_eq(hog_data_borrowed(d), HOG_BORROW_INDPTR | HOG_BORROW_INDICES |
                                       HOG_BORROW_VALUES | HOG_BORROW_LABELS);
    cr_assert(d->m.off == f->m.off && d->m.idx == f->m.idx &&
              d->m.val == f->m.val && d->m.y == f->m.y,
              "the data set does not point into the caller's arrays");
    cr_assert_eq(hog_data_borrowed(f), 0u);
    const uint64_t *po;
    const uint32_t *pi;
    const float *pv, *py;
    hog_data_csr(d, &po, &pi, &pv, &py);
    cr_assert(po == f->m.off && pi == f->m.idx && pv == f->m.val &&
              py == f->m.y);
    cr_assert_eq(d->labels, f->labels);
    cr_assert_eq(d->n_pos, f->n_pos);
    hog_model *mf = train(f, HOG_ALGO_SERIAL), *md = train(d, HOG_ALGO_SERIAL);
    same_weights(mf, md);
    hog_model_free(mf), hog_model_free(md);
    mf = train(f, HOG_ALGO_DCD), md = train(d, HOG_ALGO_DCD);
    same_weights(mf, md);
    hog_model_free(mf), hog_model_free(md);
    hog_data_free(d); /* frees nothing of the caller's: f is still whole */
    cr_assert_eq(f->m.off[f->m.rows], f->m.nnz);
    hog_data_free(f);
}

/* The same matrix in other types (32-bit offsets, 64-bit indices, double
 * values, integer labels): converted once, the same model. */
Test(arrays, converted_types_train_as_the_file)
{
    TH_DATA_OR_SKIP(path, "a9a");
    hog_data *f = load(path);
    uint64_t rows = f->m.rows, nnz = f->m.nnz;
    int32_t *ip = malloc((rows + 1) * sizeof *ip);
    int64_t *ix = malloc(nnz * sizeof *ix), *lab = malloc(rows * sizeof *lab);
    double *v = malloc(nnz * sizeof *v);
    cr_assert(ip && ix && lab && v);
    for (uint64_t r = 0; r <= rows; r++)
        ip[r] = (int32_t)f->m.off[r];
    for (uint64_t k = 0; k < nnz; k++)
        ix[k] = f->m.idx[k], v[k] = f->m.val[k];
    for (uint64_t r = 0; r < rows; r++)
        lab[r] = (int64_t)f->m.y[r];
    hog_csr_arrays a = {
        .size = sizeof a, .rows = rows, .cols = f->n_features,
        .indptr = ip, .indptr_type = HOG_DTYPE_INT32,
        .indices = ix, .indices_type = HOG_DTYPE_INT64,
        .values = v, .values_type = HOG_DTYPE_FLOAT64,
        .labels = lab, .labels_type = HOG_DTYPE_INT64,
    };
    hog_data *d = NULL;
    hog_err e;
    cr_assert_eq(hog_data_from_csr(&a, 0, &d, &e), HOG_OK, "%s", e.msg);
    cr_assert_eq(hog_data_borrowed(d), 0u);
    free(ip), free(ix), free(lab), free(v); /* the data set owns its copies */
    hog_model *mf = train(f, HOG_ALGO_SERIAL), *md = train(d, HOG_ALGO_SERIAL);
    same_weights(mf, md);
    hog_model_free(mf), hog_model_free(md);
    hog_data_free(d), hog_data_free(f);
}

/* No values: every value 1 (agaricus is a 0/1 matrix); no labels: zeros. */
Test(arrays, missing_values_and_labels)
{
    TH_DATA_OR_SKIP(path, "agaricus.txt.train");
    hog_data *f = load(path);
    for (uint64_t k = 0; k < f->m.nnz; k++)
        cr_assert_eq(f->m.val[k], 1.0f);
    hog_csr_arrays a = own_arrays(f);
    a.values = NULL;
    hog_data *d = NULL;
    hog_err e;
    cr_assert_eq(hog_data_from_csr(&a, 1, &d, &e), HOG_OK, "%s", e.msg);
    cr_assert_eq(hog_data_borrowed(d), HOG_BORROW_INDPTR | HOG_BORROW_INDICES |
                                       HOG_BORROW_LABELS);
    hog_model *mf = train(f, HOG_ALGO_SERIAL), *md = train(d, HOG_ALGO_SERIAL);
    same_weights(mf, md);
    /* scores need no labels */
    a.labels = NULL;
    hog_data *u = NULL;
    cr_assert_eq(hog_data_from_csr(&a, 1, &u, &e), HOG_OK, "%s", e.msg);
    uint64_t rows = f->m.rows;
    double *s1 = malloc(rows * sizeof *s1), *s2 = malloc(rows * sizeof *s2);
    cr_assert_eq(hog_model_scores(mf, f, s1, &e), HOG_OK);
    cr_assert_eq(hog_model_scores(mf, u, s2, &e), HOG_OK);
    cr_assert_eq(memcmp(s1, s2, rows * sizeof *s1), 0);
    for (uint64_t r = 0; r < rows; r++)
        cr_assert_eq(u->m.y[r], 0.0f);
    free(s1), free(s2);
    hog_model_free(mf), hog_model_free(md);
    hog_data_free(u), hog_data_free(d), hog_data_free(f);
}

/* The matrix below with one thing broken; the sentence names it. */
static void refused(const char *what, const int32_t ip[4], const int32_t ix[5],
                    const float v[5], const float y[3], const char *want)
{
    hog_csr_arrays a = {
        .size = sizeof a, .rows = 3, .cols = 6,
        .indptr = ip, .indptr_type = HOG_DTYPE_INT32,
        .indices = ix, .indices_type = HOG_DTYPE_INT32,
        .values = v, .values_type = HOG_DTYPE_FLOAT32,
        .labels = y, .labels_type = HOG_DTYPE_FLOAT32,
    };
    hog_data *d = (hog_data *)&a;
    hog_err e = { "" };
    cr_assert_eq(hog_data_from_csr(&a, 2, &d, &e), HOG_EINVAL, "%s accepted",
                 what);
    cr_assert_null(d);
    cr_assert(strstr(e.msg, want), "%s: \"%s\" lacks \"%s\"", what, e.msg,
              want);
}

Test(arrays, bad_matrices_name_the_fault)
{
    const int32_t ip[4] = { 0, 2, 3, 5 }, ix[5] = { 0, 4, 2, 1, 5 };
    const float v[5] = { 1, 2, 3, 4, 5 }, y[3] = { 1, -1, 1 };
    hog_csr_arrays a = {
        .size = sizeof a, .rows = 3, .cols = 6,
        .indptr = ip, .indptr_type = HOG_DTYPE_INT32,
        .indices = ix, .indices_type = HOG_DTYPE_INT32,
        .values = v, .values_type = HOG_DTYPE_FLOAT32,
        .labels = y, .labels_type = HOG_DTYPE_FLOAT32,
    };
    hog_data *d = NULL;
    hog_err e;
    cr_assert_eq(hog_data_from_csr(&a, 2, &d, &e), HOG_OK, "%s", e.msg);
    cr_assert_eq(hog_data_borrowed(d), HOG_BORROW_INDICES | HOG_BORROW_VALUES |
                                       HOG_BORROW_LABELS);
    cr_assert_eq(d->n_features, 6u);
    cr_assert_eq(d->m.nnz, 5u);
    hog_data_free(d);

    int32_t bip[4], bix[5];
    float bv[5], by[3];
#define RESET() (memcpy(bip, ip, sizeof bip), memcpy(bix, ix, sizeof bix), \
                 memcpy(bv, v, sizeof bv), memcpy(by, y, sizeof by))
    RESET(), bix[3] = -1;
    refused("a negative index", bip, bix, bv, by, "row 2: the feature index -1 "
            "is negative");
    RESET(), bix[4] = -3; /* after a smaller one, as uint32 a larger one */
    refused("a negative last index", bip, bix, bv, by, "row 2: the feature "
            "index -3 is negative");
    RESET(), bix[4] = 6;
    refused("an index past the columns", bip, bix, bv, by,
            "row 2: the feature index 6 is not below");
    RESET(), bix[1] = 0;
    refused("a duplicate index", bip, bix, bv, by, "row 0: the feature index 0 "
            "does not follow a smaller one");
    RESET(), bv[2] = NAN;
    refused("a NaN value", bip, bix, bv, by, "row 1, feature 2: the value NaN "
            "is not a finite number");
    RESET(), by[2] = INFINITY;
    refused("an infinite label", bip, bix, bv, by, "row 2: the label inf");
    RESET(), bip[2] = 1;
    refused("decreasing offsets", bip, bix, bv, by,
            "indptr[2] = 1 is below the one before it");
    RESET(), bip[0] = 1;
    refused("a first offset not 0", bip, bix, bv, by, "the first must be 0");
#undef RESET
    a.values_type = (hog_dtype)99;
    cr_assert_eq(hog_data_from_csr(&a, 2, &d, &e), HOG_EINVAL);
    a.values_type = HOG_DTYPE_FLOAT32;
    a.size = 8;
    cr_assert_eq(hog_data_from_csr(&a, 2, &d, &e), HOG_EINVAL);
    cr_assert(strstr(e.msg, "sizeof(hog_csr_arrays)"));
}

/* A model's weights out and back in: the same predictions, binary, K-class
 * (news20, one-vs-rest) and regression (abalone). */
static void round_trip(const char *name, hog_loss loss, unsigned K)
{
    const char *path = th_data(name);
    if (!path)
        cr_skip_test("real data file %s not found under HOGTRAIN_DATA; "
                     "skipping", name);
    hog_data *d = load(path);
    hog_model *m = train_loss(d, HOG_ALGO_SERIAL, loss, 2);
    hog_err e;
    hog_model_spec s = { .size = sizeof s };
    hog_model_describe(m, &s);
    cr_assert_eq(s.n_classes, K);
    cr_assert_eq(s.regression, loss == HOG_LOSS_SQUARED);
    cr_assert_eq(s.n_features, hog_model_features(m));
    hog_model *back = NULL;
    cr_assert_eq(hog_model_from_weights(&s, hog_model_weights(m), &back, &e),
                 HOG_OK, "%s", e.msg);
    same_weights(m, back);
    uint64_t rows = d->m.rows;
    double *p1 = malloc(rows * sizeof *p1), *p2 = malloc(rows * sizeof *p2);
    cr_assert_eq(hog_model_predict(m, d, p1, &e), HOG_OK, "%s", e.msg);
    cr_assert_eq(hog_model_predict(back, d, p2, &e), HOG_OK, "%s", e.msg);
    cr_assert_eq(memcmp(p1, p2, rows * sizeof *p1), 0, "predictions differ");
    /* a weight that is not a number is refused */
    uint64_t n = hog_model_len(m);
    float *w = malloc(n * sizeof *w);
    memcpy(w, hog_model_weights(m), n * sizeof *w);
    w[n / 2] = NAN;
    hog_model *bad = NULL;
    cr_assert_eq(hog_model_from_weights(&s, w, &bad, &e), HOG_EINVAL);
    cr_assert_null(bad);
    cr_assert(strstr(e.msg, "not a finite number"), "%s", e.msg);
    free(w), free(p1), free(p2);
    hog_model_free(back), hog_model_free(m), hog_data_free(d);
}

Test(arrays, model_weights_round_trip_binary) { round_trip("a9a", HOG_LOSS_LOGISTIC, 0); }
Test(arrays, model_weights_round_trip_regression) { round_trip("abalone_scale", HOG_LOSS_SQUARED, 0); }
Test(arrays, model_weights_round_trip_classes)
{
    round_trip("news20.test.svm", HOG_LOSS_HINGE, 20);
}

Test(arrays, bad_model_specs)
{
    const double cl[3] = { 1, 2, 1 };
    float w[9] = { 0 };
    hog_model_spec s = { .size = sizeof s, .n_features = 2, .bias = 1,
                         .loss = HOG_LOSS_LOGISTIC, .n_classes = 3,
                         .classes = cl };
    hog_model *m = NULL;
    hog_err e;
    cr_assert_eq(hog_model_from_weights(&s, w, &m, &e), HOG_EINVAL);
    cr_assert(strstr(e.msg, "the label 1 names two classes"), "%s", e.msg);
    const double ok[3] = { 1, 2, 3 };
    s.classes = ok;
    s.loss = HOG_LOSS_SQUARED;
    cr_assert_eq(hog_model_from_weights(&s, w, &m, &e), HOG_EINVAL);
    cr_assert(strstr(e.msg, "classification loss"), "%s", e.msg);
    s.loss = HOG_LOSS_LOGISTIC;
    s.classes = cl;
    s.n_classes = 2;
    cr_assert_eq(hog_model_from_weights(&s, w, &m, &e), HOG_EINVAL);
    s.n_classes = 0; /* binary needs two labels */
    cr_assert_eq(hog_model_from_weights(&s, w, &m, &e), HOG_EINVAL);
    cr_assert(strstr(e.msg, "two distinct finite labels"), "%s", e.msg);
    s.label_pos = 1, s.label_neg = 0;
    cr_assert_eq(hog_model_from_weights(&s, w, &m, &e), HOG_OK, "%s", e.msg);
    cr_assert_eq(hog_model_len(m), 3u);
    hog_model_free(m);
}
