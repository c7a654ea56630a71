/*
 * --normalize: per-feature max-abs scaling learned on the training set.
 * Feature j's values are divided by s_j = max_i |x_ij| (1 where the
 * feature is absent or all zero), which keeps zeros zero (the data stays
 * sparse) and puts every feature in [-1, 1], like scikit-learn's
 * MaxAbsScaler. The model trains on scaled copies of the values (train
 * and test alike: the test metrics see the same space), and the scaling
 * is then folded into the weights, w_j / s_j, so that the saved model
 * applied to raw data scores exactly as the scaled model on scaled data:
 * predict needs no scaling step, and a LIBLINEAR export stays valid. The
 * regularization is that of the scaled problem (the point of scaling).
 */
#include "train/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A copy of d's values scaled by 1/s (features past nf keep theirs), as a
 * data set that shares d's other arrays and owns only the values. */
static hog_status scaled_view(const hog_data *d, const float *inv,
                              uint64_t nf, hog_data *out, hog_err *err)
{
    *out = *d;
    memset(out->mem, 0, sizeof out->mem);
    memset(out->mem_len, 0, sizeof out->mem_len);
    out->release = NULL;
    const struct hog_csr *m = &d->m;
    uint64_t base = m->off[0];
    float *v = malloc((m->nnz ? m->nnz : 1) * sizeof *v);
    if (!v)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the scaled "
                        "values of %llu nonzeros (--normalize copies them)",
                        (unsigned long long)m->nnz);
    for (uint64_t e = 0; e < m->nnz; e++) {
        uint32_t j = m->idx[base + e];
        v[e] = j < nf ? m->val[base + e] * inv[j] : m->val[base + e];
    }
    out->m.val = v - base; /* indexed by the shared offsets */
    out->mem[0] = v;
    return HOG_OK;
}

hog_status hog_train_normalized(const hog_data *train, const hog_data *test,
                                const hog_train_opts *o,
                                const hog_train_hooks *h, hog_model **out,
                                hog_err *err)
{
    *out = NULL;
    uint64_t nf = train->n_features;
    float *inv = malloc((nf ? nf : 1) * sizeof *inv);
    if (!inv)
        return hog_errf(err, HOG_ENOMEM, "out of memory for %llu feature "
                        "scales", (unsigned long long)nf);
    for (uint64_t j = 0; j < nf; j++)
        inv[j] = 0.0f;
    const struct hog_csr *m = &train->m;
    uint64_t base = m->off[0];
    for (uint64_t e = 0; e < m->nnz; e++) {
        float a = fabsf(m->val[base + e]);
        uint32_t j = m->idx[base + e];
        if (a > inv[j])
            inv[j] = a;
    }
    for (uint64_t j = 0; j < nf; j++)
        inv[j] = inv[j] > 0.0f && isfinite(inv[j]) ? 1.0f / inv[j] : 1.0f;

    /* the training, test and validation sets, scaled alike */
    hog_data tr, te, va;
    memset(&te, 0, sizeof te);
    memset(&va, 0, sizeof va);
    hog_status st = scaled_view(train, inv, nf, &tr, err);
    if (st == HOG_OK && test)
        st = scaled_view(test, inv, nf, &te, err);
    if (st == HOG_OK && o->validation)
        st = scaled_view(o->validation, inv, nf, &va, err);
    if (st == HOG_OK) {
        hog_train_opts plain = *o;
        plain.normalize = 0;
        if (o->validation)
            plain.validation = &va;
        /* hog_train()'s steps on the scaled copies: the holdout is split
         * and C resolved already (for the same rows) */
        st = hog_train_check(&tr, test ? &te : NULL, &plain, h, err);
        if (st == HOG_OK)
            st = hog_train_run(&tr, test ? &te : NULL, &plain, h, out, err);
    }
    free(tr.mem[0]);
    free(te.mem[0]);
    free(va.mem[0]);
    if (st == HOG_OK) { /* fold the scales into every class's weights */
        hog_model *md = *out;
        uint64_t len = hog_model_vector_len(md);
        for (uint64_t c = 0; c < hog_model_vectors(md); c++)
            for (uint64_t j = 0; j < nf && j < md->n_features; j++)
                md->w[c * len + j] *= inv[j];
    }
    free(inv);
    return st;
}
