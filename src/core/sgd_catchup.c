/*
 * The catch-up of every weight at a segment's end, through the lanes of
 * sgd_lanes.h (the same rounding as the row steps'). With sgd.c, the
 * kernel files: a PORTABLE build compiles them once per x86-64 level and
 * picks a copy at run time (core/isa.c), so that nothing else lives here.
 */
#include "core/sgd.h"
#include "core/sgd_int.h"

#include "core/sgd_avg.h"
#include "core/sgd_lanes.h"

#include <string.h>

/* The same, reading coordinate j's accumulator. */
static ALWAYS_INLINE float catch_up_adagrad(const struct hog_sgd *s, float v,
                                            uint64_t j, uint32_t k, bool l1)
{
    return catch_up_adagrad_g2(s, v, hog_f_load(&s->g2[j]), k, l1);
}

/* ---- segment end -------------------------------------------------------------- */

void hog_sgd_catch_up_range(struct hog_sgd *s, uint64_t lo, uint64_t hi,
                            uint32_t len)
{
    if (s->reg == HOG_SGD_REG_NONE)
        return;
    if (s->reg == HOG_SGD_REG_SCALED) {
        double qinv = 1.0 / s->pre[len].q;
        for (uint64_t j = lo; j < hi; j++)
            hog_f_store(&s->w[j], (float)((double)hog_f_load(&s->w[j]) * qinv));
        return;
    }
    /* averaged: the states counted end here (one thread of a shared
     * catch-up says so; the copies read it after the catch-up's end) */
    if (s->asum && lo == 0)
        s->avg_end = s->seg_t0 + len;
    bool ada = s->schedule == HOG_SCHED_ADAGRAD, l1 = s->l1 > 0;
    double qt_inv = 0, ct = 0;
    if (!ada) {
        qt_inv = 1.0 / s->pre[len].q;
        ct = s->pre[len].c;
    }
    if (ada && !l1) { /* through the lanes, four weights at a time */
        const struct ada_ctx cx = ada_ctx_of(s);
        for (uint64_t j0 = lo; j0 < hi; j0 += ADA_W) {
            float v[ADA_W] = { 0 }, g[ADA_W] = { 0 };
            uint32_t k[ADA_W] = { len, len, len, len };
            double c[ADA_W];
            uint64_t nl = hi - j0 < ADA_W ? hi - j0 : ADA_W;
            uint32_t nz = 0; /* any weight not zero (+0 and -0 alike) */
            for (uint64_t i = 0; i < nl; i++) {
                v[i] = hog_f_load(w_at(s, j0 + i));
                g[i] = hog_f_load(&s->g2[j0 + i]);
                k[i] = hog_u32_load(stamp_at(s, j0 + i));
                uint32_t bits;
                memcpy(&bits, &v[i], sizeof bits);
                nz |= bits << 1;
            }
            /* zero weights stay zero (0 p = 0): four untouched features,
             * most of a text set's, skip the power */
            if (nz)
                (void)ada_catch_up4(&cx, len, v, g, k, c, ada_acc_zero(),
                                    ada_acc_zero());
            for (uint64_t i = 0; i < nl; i++) {
                if (nz && k[i] < len)
                    hog_f_store(w_at(s, j0 + i), (float)c[i]);
                hog_u32_store(stamp_at(s, j0 + i), 0);
            }
        }
        return;
    }
    for (uint64_t j = lo; j < hi; j++) {
        _Atomic float *wp = w_at(s, j);
        _Atomic uint32_t *sp = stamp_at(s, j);
        uint32_t k = hog_u32_load(sp);
        if (k < len) {
            float v = hog_f_load(wp);
            if (s->asum)
                avg_add(s, j, avg_untouched(s, v, k, len));
            v = ada ? catch_up_adagrad(s, v, j, len - k, l1)
                    : catch_up_prefix(s->pre, v, k, qt_inv, ct);
            hog_f_store(wp, v);
        }
        hog_u32_store(sp, 0);
    }
}

void hog_sgd_segment_end(struct hog_sgd *s, uint32_t len)
{
    hog_sgd_catch_up_range(s, 0, s->n_weights, len);
}


double hog_sgd_shrink_lanes(double a, uint32_t k)
{
#if defined(__AVX2__) && defined(__FMA__)
    double p[ADA_W];
    _mm256_storeu_pd(p, shrink_pow4(_mm256_set1_pd(a),
                                    _mm256_set1_pd((double)k)));
    return p[0];
#else
    return shrink_pow1(a, (double)k);
#endif
}

