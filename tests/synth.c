#include "synth.h"

#include <math.h>
#include <stdlib.h>

static float draw_value(struct hog_rng *r, enum th_synth_values v)
{
    return v == TH_SYNTH_UNIFORM ? (float)(hog_rng_uniform(r) + 0.1)
                                 : (float)hog_rng_normal(r);
}

static uint64_t per_row_cap(const struct th_synth *o)
{
    switch (o->layout) {
    case TH_SYNTH_GAPS: return 2 * (uint64_t)o->nnz + 1;
    case TH_SYNTH_SKEW: return o->nnz_max;
    case TH_SYNTH_HOT: return o->nnz;
    case TH_SYNTH_COIN: break;
    }
    return o->features;
}

hog_data *th_synth(const struct th_synth *o, hog_err *err)
{
    const uint32_t nf = o->features;
    struct hog_rng r;
    hog_rng_seed(&r, o->seed, o->stream);
    uint64_t cap = o->rows * per_row_cap(o) + 1;
    uint64_t *off = malloc((o->rows + 1) * sizeof *off);
    float *y = malloc((o->rows + 1) * sizeof *y);
    uint32_t *idx = malloc(cap * sizeof *idx);
    float *val = malloc(cap * sizeof *val);
    double *w = malloc(((uint64_t)nf + 1) * sizeof *w);
    unsigned char *seen = o->layout == TH_SYNTH_SKEW ? calloc(nf + 1, 1)
                                                     : NULL;
    if (!off || !y || !idx || !val || !w ||
        (o->layout == TH_SYNTH_SKEW && !seen)) {
        free(off), free(y), free(idx), free(val), free(w), free(seen);
        hog_errf(err, HOG_ENOMEM, "out of memory for %llu synthetic rows",
                 (unsigned long long)o->rows);
        return NULL;
    }
    unsigned period = o->period ? o->period : 1;
    for (uint32_t j = 0; j < nf; j++) {
        const struct th_synth_weight *p = j % period == 0 ? &o->first
                                                          : &o->rest;
        w[j] = p->normal ? hog_rng_normal(&r) : p->value;
    }
    uint64_t z = 0;
    off[0] = 0;
    for (uint64_t i = 0; i < o->rows; i++) {
        double m = o->offset;
        switch (o->layout) {
        case TH_SYNTH_COIN:
            for (uint32_t j = 0; j < nf; j++) {
                if (hog_rng_uniform(&r) >= o->density)
                    continue;
                float v = draw_value(&r, o->values);
                idx[z] = j;
                val[z++] = v;
                m += w[j] * v;
            }
            break;
        case TH_SYNTH_GAPS: {
            unsigned k = (unsigned)hog_rng_below(&r, 2 * o->nnz + 1);
            uint32_t j = 0;
            for (unsigned t = 0; t < k && j < nf; t++) {
                j += 1 + (uint32_t)hog_rng_below(&r, 2 * nf / (k + 1) + 1);
                if (j > nf)
                    break;
                float v = draw_value(&r, o->values);
                idx[z] = j - 1;
                val[z++] = v;
                m += w[j - 1] * v;
            }
            break;
        }
        case TH_SYNTH_SKEW: {
            unsigned k = o->nnz_min + (unsigned)hog_rng_below(
                                          &r, o->nnz_max - o->nnz_min + 1);
            for (unsigned q = 0; q < k; q++) {
                double u = hog_rng_uniform(&r);
                seen[(uint64_t)((double)nf * u * u * u)] = 1;
            }
            for (uint32_t j = 0; j < nf; j++) { /* ascending, distinct */
                if (!seen[j])
                    continue;
                seen[j] = 0;
                float v = draw_value(&r, o->values);
                idx[z] = j;
                val[z++] = v;
                m += w[j] * v;
            }
            break;
        }
        case TH_SYNTH_HOT: {
            uint32_t j = 0;
            for (uint32_t k = 0; k < o->nnz; k++) {
                /* hot 0 .. hot-1, then strictly increasing cold indices */
                j = k < o->hot ? k
                               : j + 1 + (uint32_t)hog_rng_below(
                                             &r, (nf - j - 1) / (o->nnz - k));
                float v = draw_value(&r, o->values);
                idx[z] = j;
                val[z++] = v;
                m += w[j] * v;
            }
            break;
        }
        }
        off[i + 1] = z;
        if (o->coin_labels) {
            y[i] = hog_rng_uniform(&r) < 0.5 ? -1.0f : 1.0f;
            continue;
        }
        if (o->noise != 0)
            m += o->noise * hog_rng_normal(&r);
        y[i] = o->regression ? (float)m : (m > 0 ? 1.0f : -1.0f);
    }
    free(w);
    free(seen);
    hog_data *d = NULL;
    if (hog_data_wrap(o->rows, z, off, y, idx, val,
                      o->infer_features ? 0 : nf, &d, err) != HOG_OK)
        return NULL;
    return d;
}

bool th_label_argmax(hog_data *d, unsigned k, double step, uint64_t seed,
                     uint64_t stream)
{
    uint64_t nf = d->n_features;
    double *w = malloc((size_t)k * nf * sizeof *w);
    if (!w)
        return false;
    struct hog_rng rng;
    hog_rng_seed(&rng, seed, stream);
    for (size_t i = 0; i < (size_t)k * nf; i++)
        w[i] = hog_rng_uniform(&rng) - 0.5;
    float *y = (float *)d->m.y;
    for (uint64_t i = 0; i < d->m.rows; i++) {
        struct hog_row r = hog_csr_row(&d->m, i);
        double best = -INFINITY;
        for (unsigned c = 0; c < k; c++) {
            double s = 0;
            for (uint32_t e = 0; e < r.nnz; e++)
                s += w[(size_t)c * nf + r.idx[e]] * r.val[e];
            if (s > best) {
                best = s;
                y[i] = (float)(step * (c + 1));
            }
        }
    }
    free(w);
    hog_data_scan_labels(d);
    return true;
}

uint64_t *th_serial_order(uint64_t n, uint64_t seed, struct hog_rng *rng)
{
    uint64_t *order = malloc((n ? n : 1) * sizeof *order);
    for (uint64_t i = 0; order && i < n; i++)
        order[i] = i;
    hog_rng_seed(rng, seed, 0);
    return order;
}
