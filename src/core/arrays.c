/*
 * The caller's arrays in and out: a data set over a CSR matrix held in
 * memory (the Python package's scipy matrices), used in place where its
 * element types are hogtrain's and converted once where not; and a model
 * built from, or described for, weights held outside a file.
 */
#include "core.h"
#include "cross.h"
#include "loss.h"
#include "forkjoin.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_int_type(hog_dtype t)
{
    return t >= HOG_DTYPE_INT32 && t <= HOG_DTYPE_UINT64;
}

static bool is_real_type(hog_dtype t)
{
    return t == HOG_DTYPE_FLOAT32 || t == HOG_DTYPE_FLOAT64 || is_int_type(t);
}

/* Element i of an integer array; *neg set when it is below zero. */
static inline uint64_t int_at(const void *p, hog_dtype t, uint64_t i, bool *neg)
{
    switch (t) {
    case HOG_DTYPE_INT32: {
        int32_t v = ((const int32_t *)p)[i];
        *neg = v < 0;
        return (uint64_t)(int64_t)v;
    }
    case HOG_DTYPE_INT64: {
        int64_t v = ((const int64_t *)p)[i];
        *neg = v < 0;
        return (uint64_t)v;
    }
    case HOG_DTYPE_UINT32:
        *neg = false;
        return ((const uint32_t *)p)[i];
    default:
        *neg = false;
        return ((const uint64_t *)p)[i];
    }
}

/* Element i of a numeric array, as a double. */
static inline double real_at(const void *p, hog_dtype t, uint64_t i)
{
    switch (t) {
    case HOG_DTYPE_FLOAT32: return ((const float *)p)[i];
    case HOG_DTYPE_FLOAT64: return ((const double *)p)[i];
    case HOG_DTYPE_INT32: return ((const int32_t *)p)[i];
    case HOG_DTYPE_INT64: return (double)((const int64_t *)p)[i];
    case HOG_DTYPE_UINT32: return ((const uint32_t *)p)[i];
    default: return (double)((const uint64_t *)p)[i];
    }
}

/* One worker's rows: their indices, values and labels checked and, where
 * the data set owns converted copies, converted. The first fault (lowest
 * row) is kept with its sentence. */
struct rows_job {
    const hog_csr_arrays *a;
    const uint64_t *off;
    uint32_t *idx;   /* NULL: the caller's indices are used in place */
    float *val, *y;  /* likewise; ones/zeros filled when the input is NULL */
    uint64_t lo, hi;
    uint64_t bad_row; /* UINT64_MAX: none */
    hog_err err;
};

/* The common case, hogtrain's own types used in place (32-bit indices,
 * float values): a row passes when its indices increase strictly below
 * the column count and its values and label are finite, tested without
 * a branch per entry; a row that fails is checked again by the general
 * loop below, which names the fault. */
static bool row_ok_in_place(const hog_csr_arrays *a, const uint64_t *off,
                            uint64_t r)
{
    const uint32_t *idx = a->indices;
    const float *val = a->values;
    uint64_t lo = off[r], hi = off[r + 1];
    if (a->labels && !isfinite(((const float *)a->labels)[r]))
        return false;
    if (lo == hi)
        return true;
    /* int32: the first and last nonnegative, so with the increase every
     * index is (compared as uint32, a negative one is 2^31 or more) */
    if (a->indices_type == HOG_DTYPE_INT32 &&
        ((int32_t)idx[lo] < 0 || (int32_t)idx[hi - 1] < 0))
        return false;
    unsigned ok = (uint64_t)idx[hi - 1] < a->cols;
    for (uint64_t k = lo + 1; k < hi; k++)
        ok &= idx[k] > idx[k - 1];
    /* finite: the exponent bits not all ones (integer lanes) */
    for (uint64_t k = lo; val && k < hi; k++) {
        uint32_t b;
        memcpy(&b, &val[k], sizeof b);
        ok &= (b & 0x7F800000u) != 0x7F800000u;
    }
    return ok;
}

static void *check_rows(void *arg)
{
    struct rows_job *j = arg;
    const hog_csr_arrays *a = j->a;
    j->bad_row = UINT64_MAX;
    const bool in_place = !j->idx && !j->val && !j->y &&
                          (a->indices_type == HOG_DTYPE_INT32 ||
                           a->indices_type == HOG_DTYPE_UINT32);
    for (uint64_t r = j->lo; r < j->hi; r++) {
        if (in_place && row_ok_in_place(a, j->off, r))
            continue;
        if (a->labels) {
            double y = real_at(a->labels, a->labels_type, r);
            if (!isfinite(y) || !isfinite((float)y)) {
                hog_errf(&j->err, HOG_EINVAL, "row %llu: the label %g is "
                         "not a finite number%s", (unsigned long long)r, y,
                         isfinite(y) ? " in single precision" : "");
                j->bad_row = r;
                return NULL;
            }
            if (j->y)
                j->y[r] = (float)y;
        } else {
            j->y[r] = 0.0f;
        }
        uint64_t prev = 0;
        for (uint64_t k = j->off[r]; k < j->off[r + 1]; k++) {
            bool neg;
            uint64_t f = int_at(a->indices, a->indices_type, k, &neg);
            const char *why = NULL;
            if (neg)
                why = "is negative";
            else if (f >= a->cols)
                why = "is not below the number of columns";
            else if (k > j->off[r] && f <= prev)
                why = "does not follow a smaller one (a row's indices must "
                      "increase strictly, without duplicates)";
            if (why) {
                hog_errf(&j->err, HOG_EINVAL, "row %llu: the feature index "
                         "%lld %s (%llu columns)", (unsigned long long)r,
                         (long long)f, why, (unsigned long long)a->cols);
                j->bad_row = r;
                return NULL;
            }
            prev = f;
            if (j->idx)
                j->idx[k] = (uint32_t)f;
            if (!a->values) {
                j->val[k] = 1.0f;
                continue;
            }
            double v = real_at(a->values, a->values_type, k);
            if (!isfinite(v) || !isfinite((float)v)) {
                char vs[32]; /* "NaN", as scikit-learn's checks expect */
                snprintf(vs, sizeof vs, isnan(v) ? "NaN" : "%g", v);
                hog_errf(&j->err, HOG_EINVAL, "row %llu, feature %llu: the "
                         "value %s is not a finite number%s",
                         (unsigned long long)r, (unsigned long long)f, vs,
                         isfinite(v) ? " in single precision" : "");
                j->bad_row = r;
                return NULL;
            }
            if (j->val)
                j->val[k] = (float)v;
        }
    }
    return NULL;
}

static hog_status check_header(const hog_csr_arrays *a, hog_err *err)
{
    if (!a || a->size < sizeof *a)
        return hog_errf(err, HOG_EINVAL, "hog_data_from_csr: the arrays' "
                        "size field is not sizeof(hog_csr_arrays)");
    if (!a->indptr || !is_int_type(a->indptr_type))
        return hog_errf(err, HOG_EINVAL, "the row offsets (indptr) must be "
                        "an array of integers");
    if (!is_int_type(a->indices_type) || (!a->indices && a->rows))
        return hog_errf(err, HOG_EINVAL, "the feature indices must be an "
                        "array of integers");
    if (a->values && !is_real_type(a->values_type))
        return hog_errf(err, HOG_EINVAL, "the values must be numbers");
    if (a->labels && !is_real_type(a->labels_type))
        return hog_errf(err, HOG_EINVAL, "the labels must be numbers");
    if (a->cols > HOG_MAX_FEATURES)
        return hog_errf(err, HOG_ERANGE, "%llu columns are more than the "
                        "%llu features hogtrain keeps; hash them "
                        "(--hash-bits)", (unsigned long long)a->cols,
                        (unsigned long long)HOG_MAX_FEATURES);
    if (a->rows >= UINT64_MAX / sizeof(uint64_t))
        return hog_errf(err, HOG_ERANGE, "too many rows");
    return HOG_OK;
}

/* The row offsets, checked; *own the converted copy (NULL: in place). */
static hog_status offsets(const hog_csr_arrays *a, const uint64_t **off,
                          uint64_t **own, hog_err *err)
{
    bool wide = a->indptr_type == HOG_DTYPE_INT64 ||
                a->indptr_type == HOG_DTYPE_UINT64;
    uint64_t *o = NULL;
    if (!wide && !(o = malloc((a->rows + 1) * sizeof *o)))
        return hog_errf(err, HOG_ENOMEM, "out of memory for %llu row "
                        "offsets", (unsigned long long)a->rows + 1);
    uint64_t prev = 0;
    for (uint64_t r = 0; r <= a->rows; r++) {
        bool neg;
        uint64_t v = int_at(a->indptr, a->indptr_type, r, &neg);
        if (neg || (r == 0 && v != 0) || v < prev) {
            free(o);
            return hog_errf(err, HOG_EINVAL, "the row offsets are not a CSR "
                            "matrix's: indptr[%llu] = %lld %s",
                            (unsigned long long)r, (long long)v,
                            r == 0 ? "(the first must be 0)"
                                   : "is below the one before it");
        }
        if (o)
            o[r] = v;
        prev = v;
    }
    *off = o ? o : (const uint64_t *)a->indptr;
    *own = o;
    return HOG_OK;
}

hog_status hog_data_from_csr(const hog_csr_arrays *a, unsigned threads,
                             hog_data **out, hog_err *err)
{
    *out = NULL;
    hog_status st = check_header(a, err);
    if (st != HOG_OK)
        return st;
    hog_data *d = calloc(1, sizeof *d);
    if (!d)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the data set");
    const uint64_t *off = NULL;
    uint64_t *own_off = NULL;
    if ((st = offsets(a, &off, &own_off, err)) != HOG_OK) {
        free(d);
        return st;
    }
    uint64_t nnz = off[a->rows];
    d->mem[0] = own_off;
    bool idx_in_place = a->indices_type == HOG_DTYPE_INT32 ||
                        a->indices_type == HOG_DTYPE_UINT32;
    bool val_in_place = a->values && a->values_type == HOG_DTYPE_FLOAT32;
    bool y_in_place = a->labels && a->labels_type == HOG_DTYPE_FLOAT32;
    uint32_t *idx = NULL;
    float *val = NULL, *y = NULL;
    if ((!idx_in_place && !(idx = malloc((nnz ? nnz : 1) * sizeof *idx))) ||
        (!val_in_place && !(val = malloc((nnz ? nnz : 1) * sizeof *val))) ||
        (!y_in_place && !(y = malloc((a->rows ? a->rows : 1) * sizeof *y)))) {
        free(idx), free(val), free(y), free(own_off), free(d);
        return hog_errf(err, HOG_ENOMEM, "out of memory for a copy of %llu "
                        "nonzeros in hogtrain's types", (unsigned long long)nnz);
    }
    d->mem[1] = y, d->mem[2] = idx, d->mem[3] = val;

    /* the checks (and conversions) on slices of rows of about equal nnz */
    unsigned t = threads ? threads : hog_online_cpus();
    uint64_t most = nnz / 65536 + 1;
    if (t > most)
        t = (unsigned)most;
    if (t > 64)
        t = 64;
    if (t == 0)
        t = 1;
    struct rows_job jobs[64];
    uint64_t r = 0;
    for (unsigned i = 0; i < t; i++) {
        uint64_t until = nnz / t * (i + 1), lo = r;
        while (r < a->rows && (i + 1 == t || off[r] < until))
            r++;
        jobs[i] = (struct rows_job){ .a = a, .off = off, .idx = idx,
                                     .val = val, .y = y, .lo = lo, .hi = r };
    }
    hog_fork_join(jobs, sizeof jobs[0], t, check_rows, HOG_FORK_CALLER_FIRST);
    for (unsigned i = 0; i < t; i++)
        if (jobs[i].bad_row != UINT64_MAX) {
            *err = jobs[i].err;
            hog_data_free(d);
            return HOG_EINVAL;
        }

    d->m = (struct hog_csr){
        .rows = a->rows, .nnz = nnz, .off = off,
        .y = y ? y : (const float *)a->labels,
        .idx = idx ? idx : (const uint32_t *)a->indices,
        .val = val ? val : (const float *)a->values,
    };
    d->borrowed = (own_off ? 0 : HOG_BORROW_INDPTR) |
                  (idx ? 0 : HOG_BORROW_INDICES) |
                  (val ? 0 : HOG_BORROW_VALUES) | (y ? 0 : HOG_BORROW_LABELS);
    d->n_features = a->cols;
    hog_data_scan_labels(d);
    *out = d;
    return HOG_OK;
}

unsigned hog_data_borrowed(const hog_data *d) { return d->borrowed; }

void hog_data_csr(const hog_data *d, const uint64_t **indptr,
                  const uint32_t **indices, const float **values,
                  const float **labels)
{
    *indptr = d->m.off;
    *indices = d->m.idx;
    *values = d->m.val;
    *labels = d->m.y;
}

/* ---- models ------------------------------------------------------------- */

void hog_model_describe(const hog_model *m, hog_model_spec *s)
{
    size_t size = s->size;
    memset(s, 0, size < sizeof *s ? size : sizeof *s);
    hog_model_spec full = {
        .size = size,
        .n_features = m->n_features,
        .loss = m->loss,
        .bias = m->bias,
        .regression = m->labels == HOG_LABELS_REAL,
        .label_pos = m->label_pos,
        .label_neg = m->label_neg,
        .n_classes = m->n_classes,
        .classes = m->n_classes ? m->classes : NULL,
        .multiclass = m->multiclass,
        .l1 = m->l1,
        .l2 = m->l2,
        .hash_bits = m->hash_bits,
        .hash_seed = m->hash_seed,
        .interactions = m->cross.n ? m->cross_spec : NULL,
        .loss_param = m->loss_param,
    };
    memcpy(s, &full, size < sizeof full ? size : sizeof full);
}

/* The spec's interactions, NULL for none (or a caller of the first
 * version's size, which has no such field). */
static const char *spec_interactions(const hog_model_spec *s)
{
    if (s->size < HOG_MODEL_SPEC_SIZE_V1 + sizeof s->interactions ||
        !s->interactions || !s->interactions[0])
        return NULL;
    return s->interactions;
}

static hog_status check_spec(const hog_model_spec *s, hog_err *err)
{
    if (!s || s->size < HOG_MODEL_SPEC_SIZE_V1)
        return hog_errf(err, HOG_EINVAL, "hog_model_from_weights: the spec's "
                        "size field is not sizeof(hog_model_spec)");
    const char *cross = spec_interactions(s);
    if (cross && !s->hash_bits)
        return hog_errf(err, HOG_EINVAL, "interactions '%.60s' cross hashed "
                        "namespaces: a model with them has hash bits", cross);
    if (s->n_features > HOG_MAX_FEATURES)
        return hog_errf(err, HOG_ERANGE, "a model of %llu features is more "
                        "than hogtrain keeps", (unsigned long long)s->n_features);
    if (!hog_loss_valid((int)s->loss))
        return hog_errf(err, HOG_EINVAL, "unknown loss %d", (int)s->loss);
    if (s->size >= HOG_MODEL_SPEC_SIZE_V2 + sizeof s->loss_param &&
        !hog_loss_param_ok(s->loss, s->loss_param))
        return hog_errf(err, HOG_EINVAL, "the %s loss's parameter %g is out "
                        "of its range", hog_loss_name(s->loss), s->loss_param);
    if (!isfinite(s->bias))
        return hog_errf(err, HOG_EINVAL, "the bias value must be finite");
    if (s->hash_bits > HOG_HASH_BITS_MAX)
        return hog_errf(err, HOG_ERANGE, "hash bits %u: at most %u",
                        s->hash_bits, HOG_HASH_BITS_MAX);
    if (s->n_classes == 0) {
        if (!s->regression && !(s->label_pos != s->label_neg &&
                                isfinite(s->label_pos) &&
                                isfinite(s->label_neg)))
            return hog_errf(err, HOG_EINVAL, "a binary model needs two "
                            "distinct finite labels");
        return HOG_OK;
    }
    if (s->n_classes < 3 || s->n_classes > HOG_MAX_CLASSES)
        return hog_errf(err, HOG_EINVAL, "%u classes: a K-class model has "
                        "3 to %u (0 for a binary or regression model)",
                        s->n_classes, HOG_MAX_CLASSES);
    if (s->regression || !hog_loss_is_classification(s->loss))
        return hog_errf(err, HOG_EINVAL, "a K-class model has a "
                        "classification loss, not a regression");
    if ((unsigned)s->multiclass > HOG_MULTICLASS_SOFTMAX ||
        (s->multiclass == HOG_MULTICLASS_SOFTMAX &&
         s->loss != HOG_LOSS_LOGISTIC))
        return hog_errf(err, HOG_EINVAL, "softmax models are logistic; "
                        "multiclass must be one-vs-rest or softmax");
    if (!s->classes)
        return hog_errf(err, HOG_EINVAL, "a K-class model needs its labels");
    for (unsigned c = 0; c < s->n_classes; c++)
        if (!isfinite(s->classes[c]))
            return hog_errf(err, HOG_EINVAL, "class %u's label is not "
                            "finite", c);
    struct hog_class_index ix;
    hog_status st = hog_class_index_init(&ix, s->classes, s->n_classes, err);
    if (st != HOG_OK)
        return st;
    for (unsigned c = 0; c < s->n_classes && st == HOG_OK; c++)
        if (hog_class_index_find(&ix, s->classes[c]) != (int64_t)c)
            st = hog_errf(err, HOG_EINVAL, "the label %g names two classes",
                          s->classes[c]);
    hog_class_index_free(&ix);
    return st;
}

hog_status hog_model_from_weights(const hog_model_spec *s, const float *w,
                                  hog_model **out, hog_err *err)
{
    *out = NULL;
    hog_status st = check_spec(s, err);
    hog_model *m = NULL;
    struct hog_interactions cross = { 0 };
    if (st == HOG_OK)
        st = hog_interactions_parse(spec_interactions(s), &cross, err);
    if (st == HOG_OK)
        st = hog_model_new(s->n_features, s->loss, s->bias, &m, err);
    if (st == HOG_OK && s->n_classes)
        st = hog_model_set_classes(m, s->n_classes, s->classes,
                                   s->multiclass, err);
    if (st != HOG_OK) {
        hog_model_free(m);
        return st;
    }
    uint64_t n = hog_model_len(m);
    for (uint64_t i = 0; i < n; i++)
        if (!isfinite(w[i])) {
            hog_model_free(m);
            return hog_errf(err, HOG_EINVAL, "weight %llu is not a finite "
                            "number", (unsigned long long)i);
        }
    memcpy(m->w, w, n * sizeof *w);
    if (!s->n_classes) {
        m->labels = s->regression ? HOG_LABELS_REAL : HOG_LABELS_BINARY;
        m->label_pos = s->regression ? 1.0 : s->label_pos;
        m->label_neg = s->regression ? -1.0 : s->label_neg;
    }
    m->l1 = s->l1;
    m->l2 = s->l2;
    if (s->size >= HOG_MODEL_SPEC_SIZE_V2 + sizeof s->loss_param)
        m->loss_param = s->loss_param;
    m->hash_bits = s->hash_bits;
    m->hash_seed = s->hash_seed;
    if (cross.n) { /* the mask of the hashed space, as the parser's */
        m->cross = cross;
        m->cross.mask = (uint32_t)((UINT64_C(1) << s->hash_bits) - 1);
        hog_interactions_format(&m->cross, m->cross_spec,
                                sizeof m->cross_spec);
    }
    *out = m;
    return HOG_OK;
}
