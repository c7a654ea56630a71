/*
 * Stratified splits of a data set's rows, for cross-validation's folds
 * (cv.c) and the holdout of early stopping (train.c), and the copies of
 * the rows each side gets.
 *
 * Strata: the classes (binary labels: positive and negative; K >= 3 label
 * values under a classification loss: the K classes), or all the rows as
 * one for regression. The rows of a stratum are shuffled with a stream of
 * the seed of their own (the trainers use streams 0 .. threads-1), then
 * dealt: round robin for folds, the first share for a holdout. So the
 * same seed gives the same split, and each side holds each class's share
 * within one row (LIBSVM's stratified cross-validation; scikit-learn's
 * StratifiedKFold).
 *
 * The copies: an algorithm takes a hog_data, a CSR of its own, so a fold's
 * training rows and its validation rows are copied out (the rows in their
 * order, every array): memory for one more data set per split in use.
 */
#include "core/cross.h"
#include "train/train.h"

#include "core/loss.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The seed streams of the splits, far from the trainers' 0 .. threads-1. */
#define STREAM_FOLDS UINT64_C(0xcf01d5)
#define STREAM_HOLDOUT UINT64_C(0x401d0)

/* The rows grouped by stratum: rows[off[s] .. off[s + 1]) are stratum s's
 * rows in file order. */
struct strata {
    uint32_t k;
    uint64_t *off;  /* k + 1 */
    uint64_t *rows; /* every row once */
};

static void strata_free(struct strata *s)
{
    free(s->off);
    free(s->rows);
}

static hog_status strata_of(const hog_data *d, hog_loss loss,
                            struct strata *out, hog_err *err)
{
    memset(out, 0, sizeof *out);
    uint64_t n = d->m.rows;
    uint32_t *st = malloc((n ? n : 1) * sizeof *st);
    if (!st)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the strata of "
                        "%llu rows", (unsigned long long)n);
    uint32_t k = 1;
    hog_status rc = HOG_OK;
    if (d->labels == HOG_LABELS_BINARY) {
        k = 2;
        for (uint64_t i = 0; i < n; i++)
            st[i] = hog_label_positive(d, d->m.y[i]);
    } else if (hog_loss_is_classification(loss)) {
        double *labels = NULL;
        struct hog_class_index ix;
        memset(&ix, 0, sizeof ix);
        if ((rc = hog_data_classes(d, HOG_MAX_CLASSES, &labels, &k, err)) ==
                HOG_OK &&
            (rc = hog_class_index_init(&ix, labels, k, err)) == HOG_OK)
            for (uint64_t i = 0; i < n; i++)
                st[i] = (uint32_t)hog_class_index_find(&ix, d->m.y[i]);
        hog_class_index_free(&ix);
        free(labels);
    } else {
        memset(st, 0, (n ? n : 1) * sizeof *st);
    }
    out->k = k;
    if (rc == HOG_OK && (!(out->off = calloc((size_t)k + 1, sizeof *out->off)) ||
                         !(out->rows = malloc((n ? n : 1) * sizeof *out->rows))))
        rc = hog_errf(err, HOG_ENOMEM, "out of memory for the strata of "
                      "%llu rows", (unsigned long long)n);
    if (rc == HOG_OK) { /* a counting sort, stable: file order within */
        for (uint64_t i = 0; i < n; i++)
            out->off[st[i] + 1]++;
        for (uint32_t s = 0; s < k; s++)
            out->off[s + 1] += out->off[s];
        uint64_t *at = malloc(((size_t)k + 1) * sizeof *at);
        if (!at) {
            rc = hog_errf(err, HOG_ENOMEM, "out of memory");
        } else {
            memcpy(at, out->off, ((size_t)k + 1) * sizeof *at);
            for (uint64_t i = 0; i < n; i++)
                out->rows[at[st[i]]++] = i;
            free(at);
        }
    }
    free(st);
    if (rc != HOG_OK)
        strata_free(out);
    return rc;
}

hog_status hog_split_folds(const hog_data *d, hog_loss loss, unsigned folds,
                           uint64_t seed, uint32_t *fold, hog_err *err)
{
    if (folds < 2 || folds > d->m.rows)
        return hog_errf(err, HOG_EINVAL, "%u folds of %llu rows: a "
                        "cross-validation takes 2 to the number of rows",
                        folds, (unsigned long long)d->m.rows);
    struct strata s;
    hog_status rc = strata_of(d, loss, &s, err);
    if (rc != HOG_OK)
        return rc;
    struct hog_rng rng;
    hog_rng_seed(&rng, seed, STREAM_FOLDS);
    uint64_t next = 0; /* the fold the next row goes to */
    for (uint32_t k = 0; k < s.k; k++) {
        uint64_t lo = s.off[k], len = s.off[k + 1] - lo;
        hog_shuffle_u64(&rng, s.rows + lo, len);
        for (uint64_t j = 0; j < len; j++) {
            fold[s.rows[lo + j]] = (uint32_t)next;
            next = next + 1 == folds ? 0 : next + 1;
        }
    }
    strata_free(&s);
    return HOG_OK;
}

hog_status hog_split_holdout(const hog_data *d, hog_loss loss, double frac,
                             uint64_t seed, uint32_t *part, hog_err *err)
{
    uint64_t n = d->m.rows;
    if (!(frac > 0 && frac < 1))
        return hog_errf(err, HOG_EINVAL, "the holdout is a share of the "
                        "rows between 0 and 1 (exclusive), not %g", frac);
    struct strata s;
    hog_status rc = strata_of(d, loss, &s, err);
    if (rc != HOG_OK)
        return rc;
    struct hog_rng rng;
    hog_rng_seed(&rng, seed, STREAM_HOLDOUT);
    memset(part, 0, n * sizeof *part);
    /* Stratum k keeps round(frac * rows up to k) - round(frac * rows
     * before k) rows out: within one row of its share, and the total is
     * round(frac * n). */
    uint64_t out = 0;
    for (uint32_t k = 0; k < s.k; k++) {
        uint64_t lo = s.off[k], len = s.off[k + 1] - lo;
        uint64_t take = (uint64_t)llround(frac * (double)(lo + len)) -
                        (uint64_t)llround(frac * (double)lo);
        hog_shuffle_u64(&rng, s.rows + lo, len);
        for (uint64_t j = 0; j < take && j < len; j++)
            part[s.rows[lo + j]] = 1;
        out += take < len ? take : len;
    }
    strata_free(&s);
    if (out == 0 || out == n)
        return hog_errf(err, HOG_EINVAL, "a holdout of %g of %llu rows "
                        "leaves %s: use a %s share or more rows",
                        frac, (unsigned long long)n,
                        out == 0 ? "no row for validation"
                                 : "no row to train on",
                        out == 0 ? "larger" : "smaller");
    return HOG_OK;
}

hog_status hog_data_subset(const hog_data *d, const uint32_t *part,
                           uint32_t which, bool other, hog_data **out,
                           hog_err *err)
{
    const struct hog_csr *m = &d->m;
    uint64_t rows = 0, nnz = 0;
    for (uint64_t i = 0; i < m->rows; i++)
        if ((part[i] == which) != other) {
            rows++;
            nnz += m->off[i + 1] - m->off[i];
        }
    uint64_t *off = hog_malloc_big((rows + 1) * sizeof *off);
    float *y = hog_malloc_big(rows * sizeof *y);
    uint32_t *idx = hog_malloc_big(nnz * sizeof *idx);
    float *val = hog_malloc_big(nnz * sizeof *val);
    uint8_t *ns = m->ns ? hog_malloc_big(nnz) : NULL;
    if (!off || !y || !idx || !val || (m->ns && !ns)) {
        free(off), free(y), free(idx), free(val), free(ns);
        return hog_errf(err, HOG_ENOMEM, "out of memory for a copy of %llu "
                        "rows (%llu nonzeros)", (unsigned long long)rows,
                        (unsigned long long)nnz);
    }
    uint64_t r = 0, e = 0;
    off[0] = 0;
    for (uint64_t i = 0; i < m->rows; i++) {
        if ((part[i] == which) == other)
            continue;
        uint64_t a = m->off[i], len = m->off[i + 1] - a;
        memcpy(idx + e, m->idx + a, len * sizeof *idx);
        memcpy(val + e, m->val + a, len * sizeof *val);
        if (ns)
            memcpy(ns + e, m->ns + a, len);
        e += len;
        y[r] = m->y[i];
        off[++r] = e;
    }
    hog_data *s;
    hog_status rc = hog_data_adopt(rows, nnz, off, y, idx, val, d->n_features,
                                   &s, err);
    if (rc != HOG_OK) {
        free(ns);
        return rc;
    }
    if (ns) { /* the parent's interactions, crossed in the part alike */
        s->ns_mem = ns;
        s->m.ns = ns;
        s->cross = d->cross;
        /* its rows are the parent's, which were counted: cannot fail */
        rc = hog_cross_count(s, "a part of the data", err);
        if (rc != HOG_OK) {
            hog_data_free(s);
            return rc;
        }
    }
    /* the parent's problem: its label kind and labels, whatever values
     * this part happens to hold */
    s->labels = d->labels;
    s->label_pos = d->label_pos;
    s->label_neg = d->label_neg;
    s->n_pos = 0;
    if (d->labels == HOG_LABELS_BINARY)
        for (uint64_t i = 0; i < rows; i++)
            s->n_pos += hog_label_positive(s, y[i]);
    *out = s;
    return HOG_OK;
}
