/*
 * K classes: the distinct labels of a data set in order of first appearance
 * (LIBLINEAR's order), a lookup table from a label to its class, and the
 * K-vector model's set-up, scores and predictions.
 */
#include "core/core.h"
#include "core/cross.h"
#include "core/loss.h"
#include "core/sparse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The table's empty slot: the bits of a negative quiet NaN with a payload
 * no label has (the parsers never give NaN labels). */
#define EMPTY UINT64_MAX

static uint64_t label_bits(double y)
{
    if (y == 0.0)
        y = 0.0; /* -0 and +0 are one label */
    uint64_t b;
    memcpy(&b, &y, sizeof b);
    return b;
}

static uint64_t slot_of(uint64_t b, uint64_t mask)
{
    return (b * 0x9E3779B97F4A7C15ull >> 17) & mask;
}

static hog_status index_alloc(struct hog_class_index *ix, uint64_t cap,
                              hog_err *err)
{
    uint64_t slots = 16;
    while (slots < 2 * cap)
        slots *= 2;
    ix->mask = slots - 1;
    ix->key = malloc(slots * sizeof *ix->key);
    ix->cls = malloc(slots * sizeof *ix->cls);
    if (!ix->key || !ix->cls) {
        hog_class_index_free(ix);
        return hog_errf(err, HOG_ENOMEM, "out of memory for a table of %llu "
                        "classes", (unsigned long long)cap);
    }
    memset(ix->key, 0xFF, slots * sizeof *ix->key);
    return HOG_OK;
}

/* The slot of b: its own, or the empty one where it would go. */
static uint64_t index_probe(const struct hog_class_index *ix, uint64_t b)
{
    uint64_t s = slot_of(b, ix->mask);
    while (ix->key[s] != EMPTY && ix->key[s] != b)
        s = (s + 1) & ix->mask;
    return s;
}

hog_status hog_class_index_init(struct hog_class_index *ix,
                                const double *labels, uint32_t k,
                                hog_err *err)
{
    memset(ix, 0, sizeof *ix);
    hog_status st = index_alloc(ix, k, err);
    if (st != HOG_OK)
        return st;
    for (uint32_t c = 0; c < k; c++) {
        uint64_t b = label_bits(labels[c]), s = index_probe(ix, b);
        ix->key[s] = b;
        ix->cls[s] = c;
    }
    return HOG_OK;
}

int64_t hog_class_index_find(const struct hog_class_index *ix, double y)
{
    uint64_t s = index_probe(ix, label_bits(y));
    return ix->key[s] == EMPTY ? -1 : (int64_t)ix->cls[s];
}

void hog_class_index_free(struct hog_class_index *ix)
{
    free(ix->key);
    free(ix->cls);
    ix->key = NULL;
    ix->cls = NULL;
}

hog_status hog_data_classes(const hog_data *d, uint32_t max, double **labels,
                            uint32_t *k, hog_err *err)
{
    *labels = NULL;
    *k = 0;
    struct hog_class_index ix;
    memset(&ix, 0, sizeof ix);
    /* the table grows with the classes seen, up to max + 1 of them */
    uint64_t cap = 64;
    double *out = malloc(cap * sizeof *out);
    hog_status st = out ? index_alloc(&ix, cap, err)
                        : hog_errf(err, HOG_ENOMEM, "out of memory");
    uint32_t n = 0;
    for (uint64_t i = 0; st == HOG_OK && i < d->m.rows; i++) {
        double y = d->m.y[i];
        uint64_t b = label_bits(y), s = index_probe(&ix, b);
        if (ix.key[s] == b)
            continue;
        if (n == max) {
            st = hog_errf(err, HOG_EINVAL,
                          "the labels take more than %u distinct values "
                          "(row %llu has the %u-th): too many classes for "
                          "a classification loss; for a regression target "
                          "use --loss squared",
                          max, (unsigned long long)i + 1, max + 1);
            break;
        }
        if (n == cap) {
            cap *= 2;
            double *grown = realloc(out, cap * sizeof *out);
            struct hog_class_index bigger;
            if (!grown || index_alloc(&bigger, cap, err) != HOG_OK) {
                if (grown)
                    out = grown;
                st = hog_errf(err, HOG_ENOMEM, "out of memory for %u "
                              "classes", n);
                break;
            }
            out = grown;
            hog_class_index_free(&ix);
            ix = bigger;
            for (uint32_t c = 0; c < n; c++) {
                uint64_t bc = label_bits(out[c]), sc = index_probe(&ix, bc);
                ix.key[sc] = bc;
                ix.cls[sc] = c;
            }
            s = index_probe(&ix, b);
        }
        ix.key[s] = b;
        ix.cls[s] = n;
        out[n++] = y == 0.0 ? 0.0 : y;
    }
    hog_class_index_free(&ix);
    if (st != HOG_OK) {
        free(out);
        return st;
    }
    *labels = out;
    *k = n;
    return HOG_OK;
}

/* ---- the K-vector model ------------------------------------------------------ */

hog_status hog_model_set_classes(hog_model *m, uint32_t k,
                                 const double *labels, hog_multiclass mc,
                                 hog_err *err)
{
    uint64_t len = hog_model_vector_len(m);
    if (k > HOG_MAX_CLASSES || (len && k > UINT64_MAX / sizeof(float) / len))
        return hog_errf(err, HOG_EINVAL, "%u classes of %llu weights are "
                        "more than hogtrain supports", k,
                        (unsigned long long)len);
    uint64_t n = len * k;
    float *w = calloc(n ? n : 1, sizeof *w);
    double *cl = malloc((k ? k : 1) * sizeof *cl);
    if (!w || !cl) {
        free(w);
        free(cl);
        return hog_errf(err, HOG_ENOMEM, "out of memory for a model of %u "
                        "classes x %llu weights (%.1f GiB)", k,
                        (unsigned long long)len,
                        (double)len * k * sizeof *w / (1u << 30));
    }
    memcpy(cl, labels, k * sizeof *cl);
    free(m->w);
    free(m->classes);
    m->w = w;
    m->classes = cl;
    m->n_classes = k;
    m->multiclass = mc;
    m->labels = HOG_LABELS_BINARY; /* per class: label == classes[c] or not */
    return HOG_OK;
}

unsigned hog_model_classes(const hog_model *m, const double **labels)
{
    if (labels)
        *labels = m->n_classes ? m->classes : NULL;
    return m->n_classes;
}

hog_multiclass hog_model_multiclass(const hog_model *m)
{
    return m->multiclass;
}

/* ---- K scores of a row ---------------------------------------------------- */

void hog_scorer_init(struct hog_scorer *sc, const hog_model *m, uint64_t cap)
{
    const uint64_t K = m->n_classes, len = hog_model_vector_len(m);
    sc->m = m;
    sc->wt = NULL;
    if (K < 2 || len == 0 || len > cap / sizeof(float) / K)
        return;
    if (!(sc->wt = malloc(K * len * sizeof *sc->wt)))
        return; /* the model's own vectors then */
    /* in blocks of features whose K rows stay in the cache */
    enum { B = 256 };
    for (uint64_t j0 = 0; j0 < len; j0 += B) {
        uint64_t j1 = len - j0 < B ? len : j0 + B;
        for (uint64_t c = 0; c < K; c++) {
            const float *w = m->w + c * len;
            for (uint64_t j = j0; j < j1; j++)
                sc->wt[j * K + c] = w[j];
        }
    }
}

void hog_scorer_row(const struct hog_scorer *sc, struct hog_row r, double *s)
{
    const hog_model *m = sc->m;
    const uint32_t K = m->n_classes;
    const uint64_t len = hog_model_vector_len(m), nf = m->n_features;
    if (!sc->wt) {
        for (uint32_t c = 0; c < K; c++) {
            const float *w = m->w + c * len;
            double b = m->bias != 0.0 ? (double)w[nf] * m->bias : 0.0;
            s[c] = hog_sparse_dot(w, nf, r, b);
        }
        return;
    }
    const float *restrict wt = sc->wt;
    for (uint32_t c = 0; c < K; c++)
        s[c] = m->bias != 0.0 ? (double)wt[nf * K + c] * m->bias : 0.0;
    for (uint32_t e = 0; e < r.nnz; e++) {
        if (r.idx[e] >= nf)
            continue;
        const float *restrict wj = wt + (uint64_t)r.idx[e] * K;
        const double x = r.val[e];
        for (uint32_t c = 0; c < K; c++)
            s[c] += (double)wj[c] * x;
    }
}

void hog_scorer_free(struct hog_scorer *sc)
{
    free(sc->wt);
    sc->wt = NULL;
}

hog_status hog_model_scores(const hog_model *m, const hog_data *d,
                            double *scores, hog_err *err)
{
    struct hog_cross_buf xb;
    hog_status st = hog_cross_buf_init(&xb, d, err);
    if (st != HOG_OK)
        return st;
    double b = hog_model_bias(m);
    struct hog_scorer sc;
    hog_scorer_init(&sc, m, HOG_SCORER_CAP);
    for (uint64_t i = 0; i < d->m.rows; i++) {
        struct hog_row r = hog_data_row(d, &d->m, i, &xb);
        if (m->n_classes)
            hog_scorer_row(&sc, r, scores + i * m->n_classes);
        else
            scores[i] = hog_sparse_dot(m->w, m->n_features, r, b);
    }
    hog_scorer_free(&sc);
    hog_cross_buf_free(&xb);
    return HOG_OK;
}

uint32_t hog_scores_argmax(const double *s, uint32_t k)
{
    uint32_t best = 0;
    for (uint32_t c = 1; c < k; c++)
        if (s[c] > s[best])
            best = c;
    return best;
}

void hog_class_probabilities(hog_multiclass mc, const double *s, uint32_t k,
                             double *p)
{
    double sum = 0;
    if (mc == HOG_MULTICLASS_SOFTMAX) {
        double top = s[hog_scores_argmax(s, k)];
        for (uint32_t c = 0; c < k; c++)
            sum += p[c] = exp(s[c] - top);
    } else {
        for (uint32_t c = 0; c < k; c++)
            sum += p[c] = 1.0 / (1.0 + exp(-s[c]));
    }
    for (uint32_t c = 0; c < k; c++)
        p[c] /= sum;
}

hog_status hog_model_predict(const hog_model *m, const hog_data *d,
                             double *labels, hog_err *err)
{
    uint32_t k = m->n_classes;
    double *s = malloc((k ? k : 1) * sizeof *s);
    if (!s)
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    struct hog_cross_buf xb;
    hog_status st = hog_cross_buf_init(&xb, d, err);
    if (st != HOG_OK) {
        free(s);
        return st;
    }
    double b = hog_model_bias(m);
    bool cls = hog_loss_is_classification(m->loss);
    struct hog_scorer sc;
    hog_scorer_init(&sc, m, HOG_SCORER_CAP);
    for (uint64_t i = 0; i < d->m.rows; i++) {
        struct hog_row r = hog_data_row(d, &d->m, i, &xb);
        if (k) {
            hog_scorer_row(&sc, r, s);
            labels[i] = m->classes[hog_scores_argmax(s, k)];
        } else {
            double v = hog_sparse_dot(m->w, m->n_features, r, b);
            labels[i] = !cls    ? hog_loss_predict(m->loss, v)
                        : v > 0 ? m->label_pos
                                : m->label_neg;
        }
    }
    hog_scorer_free(&sc);
    hog_cross_buf_free(&xb);
    free(s);
    return HOG_OK;
}

/* scikit-learn's predict_proba of a modified Huber model: the score
 * clipped to [-1, 1] and mapped onto [0, 1] (Zhang 2004's estimate). */
static double mhuber_prob(double v)
{
    return (fmin(fmax(v, -1.0), 1.0) + 1.0) / 2.0;
}

/* One-vs-rest: each class's, normalised; uniform where all are 0, as
 * scikit-learn's. */
static void mhuber_probabilities(const double *s, uint32_t k, double *p)
{
    double sum = 0;
    for (uint32_t c = 0; c < k; c++)
        sum += p[c] = mhuber_prob(s[c]);
    for (uint32_t c = 0; c < k; c++)
        p[c] = sum > 0 ? p[c] / sum : 1.0 / k;
}

hog_status hog_model_probabilities(const hog_model *m, const hog_data *d,
                                   double *probs, hog_err *err)
{
    bool mh = m->loss == HOG_LOSS_MODIFIED_HUBER;
    if (m->loss != HOG_LOSS_LOGISTIC && !mh)
        return hog_errf(err, HOG_ENOTSUP,
                        "probabilities come from logistic and modified "
                        "Huber models; this model's loss is %s (its scores "
                        "are margins, not log-odds)", hog_loss_name(m->loss));
    uint32_t k = m->n_classes;
    double *s = malloc((k ? k : 1) * sizeof *s);
    if (!s)
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    struct hog_cross_buf xb;
    hog_status st = hog_cross_buf_init(&xb, d, err);
    if (st != HOG_OK) {
        free(s);
        return st;
    }
    double b = hog_model_bias(m);
    struct hog_scorer sc;
    hog_scorer_init(&sc, m, HOG_SCORER_CAP);
    for (uint64_t i = 0; i < d->m.rows; i++) {
        struct hog_row r = hog_data_row(d, &d->m, i, &xb);
        if (!k) {
            double v = hog_sparse_dot(m->w, m->n_features, r, b);
            probs[2 * i] = mh ? mhuber_prob(v) : 1.0 / (1.0 + exp(-v));
            probs[2 * i + 1] = 1.0 - probs[2 * i];
        } else {
            hog_scorer_row(&sc, r, s);
            if (mh)
                mhuber_probabilities(s, k, probs + i * k);
            else
                hog_class_probabilities(m->multiclass, s, k, probs + i * k);
        }
    }
    hog_scorer_free(&sc);
    hog_cross_buf_free(&xb);
    free(s);
    return HOG_OK;
}
