/*
 * Capture and restore of the SGD state (src/core/sgd.h) for checkpoints,
 * inside a lazy-regularization segment as well as between segments, so
 * that a checkpoint may fall on any step and a resumed run repeats the
 * uninterrupted one bit for bit: the segment is rebuilt by
 * hog_sgd_segment_begin() with the same arguments (its prefixes depend on
 * them only), the lazy weights and their timestamps are put back as they
 * were, and the weights brought current go into the checkpoint as the
 * model. The serial trainer, Hogwild! and Cyclades (at batch boundaries)
 * share it.
 */
#include "core/sgd.h"

#include "core/fit.h"
#include "core/sparse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void hog_train_state_free(struct hog_train_state *st)
{
    free(st->w);
    free(st->w_lazy);     /* or FTRL's z: one pointer */
    free(st->adagrad_g2); /* or FTRL's sqrt(n) */
    free(st->stamp);
    st->w = st->w_lazy = st->adagrad_g2 = NULL;
    st->stamp = NULL;
}

static void copy_out(const _Atomic float *a, float *out, uint64_t n)
{
    for (uint64_t j = 0; j < n; j++)
        out[j] = hog_f_load(&a[j]);
}

static void copy_in(_Atomic float *a, const float *in, uint64_t n)
{
    for (uint64_t j = 0; j < n; j++)
        hog_f_store(&a[j], in[j]);
}

/* FTRL-Proximal: nothing is lazy, so a checkpoint anywhere is the weights
 * after st->t_global steps (the model) and the two sums, z in ftrl_z and
 * r = sqrt(n) in ftrl_sqrt_n. */
static hog_status ftrl_capture(struct hog_sgd *s, struct hog_train_state *st,
                               hog_err *err)
{
    uint64_t nw = s->n_weights;
    size_t bytes = (nw ? nw : 1) * sizeof(float);
    st->n_weights = nw;
    st->w = malloc(bytes);
    st->ftrl_z = malloc(bytes);
    st->ftrl_sqrt_n = malloc(bytes);
    st->stamp = NULL;
    if (!st->w || !st->ftrl_z || !st->ftrl_sqrt_n) {
        hog_train_state_free(st);
        return hog_errf(err, HOG_ENOMEM,
                        "out of memory for a checkpoint of %llu weights",
                        (unsigned long long)nw);
    }
    hog_sgd_ftrl_weights(s, st->t_global, st->w);
    hog_sgd_ftrl_get(s, st->ftrl_z, st->ftrl_sqrt_n);
    return HOG_OK;
}

hog_status hog_sgd_state_capture(struct hog_sgd *s, uint32_t seg_pos,
                                 struct hog_train_state *st, hog_err *err)
{
    if (s->zn)
        return ftrl_capture(s, st, err);
    uint64_t nw = s->n_weights;
    size_t bytes = (nw ? nw : 1) * sizeof(float);
    /* inside a segment with regularization, w holds lazy (stamped) or
     * scaled weights: those go into w_lazy, and a copy brought current
     * into w */
    bool mid = seg_pos > 0 && s->reg != HOG_SGD_REG_NONE;
    bool stamps = mid && s->stamp;
    st->n_weights = nw;
    st->w = malloc(bytes);
    st->w_lazy = mid ? malloc(bytes) : NULL;
    st->stamp = stamps ? malloc(bytes) : NULL;
    st->adagrad_g2 = s->g2 ? malloc(bytes) : NULL;
    if (!st->w || (mid && !st->w_lazy) || (stamps && !st->stamp) ||
        (s->g2 && !st->adagrad_g2)) {
        hog_train_state_free(st);
        return hog_errf(err, HOG_ENOMEM,
                        "out of memory for a checkpoint of %llu weights",
                        (unsigned long long)nw);
    }
    if (s->g2)
        copy_out(s->g2, st->adagrad_g2, nw);
    if (!mid) { /* every weight is current */
        copy_out(s->w, st->w, nw);
        return HOG_OK;
    }
    copy_out(s->w, st->w_lazy, nw);
    for (uint64_t j = 0; stamps && j < nw; j++)
        st->stamp[j] = hog_u32_load(&s->stamp[j]);
    /* bring a copy current: catch up in place, read, put the lazy state back */
    hog_sgd_catch_up_range(s, 0, nw, seg_pos);
    copy_out(s->w, st->w, nw);
    copy_in(s->w, st->w_lazy, nw);
    for (uint64_t j = 0; stamps && j < nw; j++)
        hog_u32_store(&s->stamp[j], st->stamp[j]);
    return HOG_OK;
}

hog_status hog_sgd_state_restore(struct hog_sgd *s,
                                 const struct hog_train_state *st,
                                 hog_err *err)
{
    uint64_t nw = s->n_weights;
    if (st->n_weights != nw)
        return hog_errf(err, HOG_EINVAL,
                        "the checkpoint holds %llu weights but this training "
                        "has %llu (different data or bias)",
                        (unsigned long long)st->n_weights,
                        (unsigned long long)nw);
    if (s->zn) {
        if (!st->ftrl_z || !st->ftrl_sqrt_n || st->stamp)
            return hog_errf(err, HOG_EINVAL, "the checkpoint does not hold "
                            "FTRL's sums (written with another --schedule)");
        for (uint64_t j = 0; j < nw; j++)
            if (!isfinite(st->ftrl_z[j]))
                return hog_errf(err, HOG_EINVAL, "bad checkpoint: FTRL's "
                                "sum z of weight %llu is not finite",
                                (unsigned long long)j);
        /* inside a segment the trainer has begun it; at a boundary the
         * weights are read at the checkpoint's step count */
        uint64_t t0 = s->seg_t0;
        uint32_t len = s->seg_len;
        hog_sgd_ftrl_put(s, st->ftrl_z, st->ftrl_sqrt_n, st->t_global);
        if (st->seg_pos > 0) {
            s->seg_t0 = t0;
            s->seg_len = len;
        }
        return HOG_OK;
    }
    if (!st->adagrad_g2 != !s->g2)
        return hog_errf(err, HOG_EINVAL,
                        "the checkpoint %s AdaGrad sums but this training %s",
                        st->adagrad_g2 ? "holds" : "lacks",
                        s->g2 ? "needs them" : "uses none");
    bool mid = st->seg_pos > 0 && s->reg != HOG_SGD_REG_NONE;
    bool stamps = mid && s->stamp;
    if (mid != !!st->w_lazy || stamps != !!st->stamp)
        return hog_errf(err, HOG_EINVAL,
                        "the checkpoint's regularization state does not "
                        "match these options (l1, l2)");
    /* checked before anything is written: s is untouched on refusal */
    for (uint64_t j = 0; stamps && j < nw; j++)
        if (st->stamp[j] > st->seg_pos)
            return hog_errf(err, HOG_EINVAL,
                            "bad checkpoint: weight %llu is stamped beyond "
                            "its position", (unsigned long long)j);
    if (s->g2)
        copy_in(s->g2, st->adagrad_g2, nw);
    copy_in(s->w, mid ? st->w_lazy : st->w, nw);
    for (uint64_t j = 0; stamps && j < nw; j++)
        hog_u32_store(&s->stamp[j], st->stamp[j]);
    return HOG_OK;
}

hog_status hog_sgd_checkpoint(struct hog_fit *f, struct hog_sgd *s,
                              uint32_t seg_pos, struct hog_train_state *st,
                              bool cancelled, hog_err *err)
{
    hog_status r = hog_sgd_state_capture(s, seg_pos, st, err);
    if (r == HOG_OK)
        r = hog_fit_save(f, st, cancelled, err);
    hog_train_state_free(st);
    return r;
}
