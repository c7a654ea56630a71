/* The in-memory data set and the model object. */
#include "core.h"
#include "loss.h"
#include "sparse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void hog_load_opts_init(hog_load_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

void hog_label_scan_init(struct hog_label_scan *s)
{
    *s = (struct hog_label_scan){ .a = NAN, .b = NAN };
}

void hog_label_scan_add(struct hog_label_scan *s, const float *y, uint64_t n)
{
    for (uint64_t i = 0; i < n && !s->real; i++) {
        double v = y[i];
        if (isnan(s->a) || v == s->a)
            s->a = v, s->na++;
        else if (isnan(s->b) || v == s->b)
            s->b = v, s->nb++;
        else
            s->real = true;
    }
}

void hog_label_scan_result(const struct hog_label_scan *s,
                           enum hog_label_kind *kind, double *pos, double *neg,
                           uint64_t *n_pos)
{
    double a = s->a, b = s->b;
    if (s->real || isnan(b)) {
        /* One label value only: still binary when it is a class label. */
        if (!s->real && !isnan(a) && (a == 1.0 || a == -1.0 || a == 0.0)) {
            *kind = HOG_LABELS_BINARY;
            *pos = a > 0 ? a : 1.0;
            *neg = a > 0 ? -1.0 : a;
            *n_pos = a > 0 ? s->na : 0;
        } else {
            *kind = HOG_LABELS_REAL, *pos = 1.0, *neg = -1.0, *n_pos = 0;
        }
    } else {
        *kind = HOG_LABELS_BINARY;
        *pos = a > b ? a : b;
        *neg = a > b ? b : a;
        *n_pos = a > b ? s->na : s->nb;
    }
}

void hog_data_scan_labels(hog_data *d)
{
    struct hog_label_scan s;
    hog_label_scan_init(&s);
    hog_label_scan_add(&s, d->m.y, d->m.rows);
    hog_label_scan_result(&s, &d->labels, &d->label_pos, &d->label_neg,
                          &d->n_pos);
    /* Counted again: the scan's counts are off for NaN labels (a NaN is
     * replaced by the next value), which only API callers can pass. */
    d->n_pos = 0;
    if (d->labels == HOG_LABELS_BINARY)
        for (uint64_t i = 0; i < d->m.rows; i++)
            d->n_pos += (double)d->m.y[i] == d->label_pos;
}

hog_status hog_data_adopt(uint64_t rows, uint64_t nnz, uint64_t *off, float *y,
                          uint32_t *idx, float *val, uint64_t n_features,
                          hog_data **out, hog_err *err)
{
    hog_data *d = calloc(1, sizeof *d);
    if (!d) {
        free(off), free(y), free(idx), free(val);
        return hog_errf(err, HOG_ENOMEM, "out of memory for the data set");
    }
    d->m = (struct hog_csr){ rows, nnz, off, y, idx, val, NULL };
    d->mem[0] = off, d->mem[1] = y, d->mem[2] = idx, d->mem[3] = val;
    d->n_features = n_features;
    hog_data_scan_labels(d);
    *out = d;
    return HOG_OK;
}

hog_status hog_data_wrap(uint64_t rows, uint64_t nnz, uint64_t *off, float *y,
                         uint32_t *idx, float *val, uint64_t n_features_min,
                         hog_data **out, hog_err *err)
{
    uint64_t nf = n_features_min;
    for (uint64_t i = 0; i < rows; i++)
        if (off[i + 1] > off[i] && (uint64_t)idx[off[i + 1] - 1] + 1 > nf)
            nf = (uint64_t)idx[off[i + 1] - 1] + 1;
    return hog_data_adopt(rows, nnz, off, y, idx, val, nf, out, err);
}

void hog_data_free(hog_data *d)
{
    if (!d)
        return;
    if (d->release)
        d->release(d->release_ctx);
    for (int i = 0; i < 4; i++) {
        if (d->mem_len[i])
            munmap(d->mem[i], d->mem_len[i]);
        else
            free(d->mem[i]);
    }
    free(d->importance);
    free(d->ns_mem);
    hog_names_free(d->names);
    free(d);
}

uint64_t hog_data_rows(const hog_data *d) { return d->m.rows; }
uint64_t hog_data_features(const hog_data *d) { return d->n_features; }
uint64_t hog_data_nnz(const hog_data *d) { return d->m.nnz; }

hog_status hog_model_new(uint64_t n_features, hog_loss loss, double bias,
                         hog_model **out, hog_err *err)
{
    hog_model *m = calloc(1, sizeof *m);
    uint64_t n = n_features + (bias != 0.0);
    if (m)
        m->w = calloc(n ? n : 1, sizeof *m->w);
    if (!m || !m->w) {
        free(m);
        return hog_errf(err, HOG_ENOMEM,
                        "out of memory for a model of %llu weights",
                        (unsigned long long)n);
    }
    m->n_features = n_features;
    m->loss = loss;
    m->bias = bias;
    m->label_pos = 1.0;
    m->label_neg = -1.0;
    m->labels = hog_loss_is_classification(loss) ? HOG_LABELS_BINARY
                                                  : HOG_LABELS_REAL;
    *out = m;
    return HOG_OK;
}

void hog_model_free(hog_model *m)
{
    if (!m)
        return;
    free(m->w);
    free(m->classes);
    hog_opt_state_free(m->state);
    hog_names_free(m->names);
    free(m);
}

uint64_t hog_model_features(const hog_model *m) { return m->n_features; }
hog_loss hog_model_loss(const hog_model *m) { return m->loss; }
double hog_model_loss_param(const hog_model *m) { return m->loss_param; }
const float *hog_model_weights(const hog_model *m) { return m->w; }
double hog_model_bias(const hog_model *m)
{
    return m->bias != 0.0 ? (double)m->w[m->n_features] * m->bias : 0.0;
}
