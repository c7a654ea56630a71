/*
 * Row and class weights: what hog_train_opts asks for, checked against the
 * training data and combined, once, into one effective weight per row
 *
 *     v_i = row_weights[i] x class_weight[label of row i]
 *
 * (scikit-learn's sample_weight times class_weight[y]; LIBLINEAR's
 * instance weights when only row weights are given). The front door hands
 * the algorithms v through its view of the data (hog_data.row_w), the same
 * array in every one-vs-rest problem, and the objective they minimise is
 *
 *     F(w) = (1/n) sum_i v_i loss(y_i, w.x_i + b) + l2/2 |w|^2 + l1 |w|_1,
 *
 * n the number of rows (not the sum of the weights), so that with
 * l2 = 1/(C n) it is LIBLINEAR's C sum_i v_i loss_i + 1/2 |w|^2 divided by
 * C n, and a row of weight 2 is the row twice in LIBLINEAR's scale.
 * "balanced" gives class k of K classes with n_k rows n / (K n_k), so that
 * every class weighs n / K in all.
 */
#include "train/train.h"

#include "core/loss.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool hog_train_weighted(const hog_train_opts *o)
{
    return o->row_weights || o->class_weight_balanced ||
           o->n_class_weights > 0;
}

/* "-1, 1" (the first few labels), for a sentence. */
static void label_list(const double *labels, uint32_t k, char *buf,
                       size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (uint32_t c = 0; c < k && at < len; c++) {
        if (c == 8) {
            snprintf(buf + at, len - at, ", ... (%u in all)", k);
            return;
        }
        at += (size_t)snprintf(buf + at, len - at, "%s%g", c ? ", " : "",
                               labels[c]);
    }
}

/* A label as the data holds it: labels are floats (struct hog_csr), so
 * that 0.1 given as a double names the rows whose label reads 0.1. */
static double as_label(double l)
{
    return (double)(float)l;
}

/* The options themselves, before the data is looked at. */
static hog_status check_class_opts(const hog_train_opts *o, hog_err *err)
{
    const unsigned k = o->n_class_weights;
    if (o->class_weight_balanced && k)
        return hog_errf(err, HOG_EINVAL,
                        "the class weights are either balanced or a list of "
                        "label weights, not both");
    if (k && (!o->class_weight_labels || !o->class_weight_values))
        return hog_errf(err, HOG_EINVAL,
                        "%u class weights asked for, but their labels or "
                        "values are missing (NULL)", k);
    for (unsigned i = 0; i < k; i++) {
        double l = o->class_weight_labels[i], v = o->class_weight_values[i];
        if (!isfinite(l))
            return hog_errf(err, HOG_EINVAL, "a class weight's label must "
                            "be a number, not %g", l);
        if (!(isfinite(v) && v >= 0))
            return hog_errf(err, HOG_EINVAL,
                            "the class weight of label %g is %g: class "
                            "weights must be finite numbers >= 0", l, v);
        for (unsigned j = 0; j < i; j++)
            if (as_label(o->class_weight_labels[j]) == as_label(l))
                return hog_errf(err, HOG_EINVAL,
                                "label %g is given two class weights (%g "
                                "and %g)", l, o->class_weight_values[j], v);
    }
    return HOG_OK;
}

/* Rows per class of train's k labels, through ix. */
static void class_counts(const hog_data *train,
                         const struct hog_class_index *ix, uint64_t *n_k)
{
    for (uint64_t i = 0; i < train->m.rows; i++) {
        int64_t c = hog_class_index_find(ix, train->m.y[i]);
        if (c >= 0)
            n_k[c]++;
    }
}

hog_status hog_train_class_weights(const hog_train_opts *o,
                                   const hog_data *train, double **labels,
                                   double **weights, uint32_t *k,
                                   hog_err *err)
{
    *labels = *weights = NULL;
    *k = 0;
    if (!o->class_weight_balanced && o->n_class_weights == 0)
        return HOG_OK;
    hog_status st = check_class_opts(o, err);
    if (st != HOG_OK)
        return st;
    if (!hog_loss_is_classification(o->loss) &&
        train->labels != HOG_LABELS_BINARY)
        return hog_errf(err, HOG_EINVAL,
                        "class weights need class labels, and the targets of "
                        "the %s loss take more than two values here (weigh "
                        "rows with row weights instead)",
                        hog_loss_name(o->loss));
    double *lab = NULL, *w = NULL;
    uint32_t kk = 0;
    uint64_t *n_k = NULL;
    struct hog_class_index ix;
    memset(&ix, 0, sizeof ix);
    if ((st = hog_data_classes(train, HOG_MAX_CLASSES, &lab, &kk, err)) !=
            HOG_OK ||
        (st = hog_class_index_init(&ix, lab, kk, err)) != HOG_OK)
        goto out;
    w = malloc(kk * sizeof *w);
    n_k = calloc(kk, sizeof *n_k);
    if (!w || !n_k) {
        st = hog_errf(err, HOG_ENOMEM, "out of memory for %u class weights",
                      kk);
        goto out;
    }
    if (o->class_weight_balanced)
        class_counts(train, &ix, n_k);
    for (uint32_t c = 0; c < kk; c++)
        w[c] = o->class_weight_balanced
                   ? (double)train->m.rows / ((double)kk * (double)n_k[c])
                   : 1.0;
    for (unsigned i = 0; i < o->n_class_weights; i++) {
        double l = o->class_weight_labels[i];
        int64_t c = hog_class_index_find(&ix, as_label(l));
        if (c < 0) {
            char list[256];
            label_list(lab, kk, list, sizeof list);
            st = hog_errf(err, HOG_EINVAL,
                          "a class weight names label %g, which no training "
                          "row has (the labels are %s)", l, list);
            goto out;
        }
        w[c] = o->class_weight_values[i];
    }
out:
    hog_class_index_free(&ix);
    free(n_k);
    if (st != HOG_OK) {
        free(lab);
        free(w);
        return st;
    }
    *labels = lab;
    *weights = w;
    *k = kk;
    return HOG_OK;
}

hog_status hog_train_row_weights(const hog_train_opts *o,
                                 const hog_data *train, float **out,
                                 hog_err *err)
{
    if (out)
        *out = NULL;
    if (!hog_train_weighted(o))
        return HOG_OK;
    const uint64_t n = train->m.rows;
    double *lab, *cw;
    uint32_t k;
    hog_status st = hog_train_class_weights(o, train, &lab, &cw, &k, err);
    if (st != HOG_OK)
        return st;
    struct hog_class_index ix;
    memset(&ix, 0, sizeof ix);
    float *v = NULL;
    if (k && (st = hog_class_index_init(&ix, lab, k, err)) != HOG_OK)
        goto out;
    if (out && !(v = malloc((n ? n : 1) * sizeof *v))) {
        st = hog_errf(err, HOG_ENOMEM, "out of memory for the weights of "
                      "%llu rows", (unsigned long long)n);
        goto out;
    }
    uint64_t positive = 0;
    for (uint64_t i = 0; i < n; i++) {
        double r = o->row_weights ? (double)o->row_weights[i] : 1.0;
        if (!(isfinite(r) && r >= 0)) {
            st = hog_errf(err, HOG_EINVAL,
                          "the weight of training row %llu is %g: row "
                          "weights must be finite numbers >= 0",
                          (unsigned long long)i + 1, r);
            goto out;
        }
        double c = k ? cw[hog_class_index_find(&ix, train->m.y[i])] : 1.0;
        /* a class weight of 1 leaves the row's float as it is */
        float e = (float)(r * c);
        if (!isfinite(e)) {
            st = hog_errf(err, HOG_ERANGE,
                          "training row %llu weighs %g times its class "
                          "weight %g, more than a float holds",
                          (unsigned long long)i + 1, r, c);
            goto out;
        }
        positive += e > 0.0f;
        if (v)
            v[i] = e;
    }
    if (positive == 0)
        st = hog_errf(err, HOG_EINVAL,
                      "every training row weighs 0%s: nothing to train on",
                      k && o->row_weights ? " (its row weight times its "
                                            "class weight)"
                      : k ? " (the weight of its class)"
                          : "");
out:
    hog_class_index_free(&ix);
    free(lab);
    free(cw);
    if (st != HOG_OK) {
        free(v);
        return st;
    }
    if (out)
        *out = v;
    return HOG_OK;
}
