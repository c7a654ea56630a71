/*
 * AdaGrad with l2 only (the library's default options): the row step on
 * the lanes of sgd_lanes.h, whose comment ("AdaGrad with l2 only: the
 * catch-up in lanes") has the method. Part of the row kernel: included by
 * sgd.c alone, whose step_impl() calls step_ada_l2(), so that its passes
 * stay functions of that one translation unit.
 */
#ifndef HOG_SGD_ADA_H
#define HOG_SGD_ADA_H

#include "core/sgd_lanes.h"

/* ---- the row step of AdaGrad with l2 only ---------------------------------- */

/* One weight through the lanes (lane 0; the others idle). */
static ALWAYS_INLINE double ada_catch_up1(const struct ada_ctx *s, uint32_t t,
                                          float v, float g, uint32_t k)
{
    float vv[ADA_W] = { v }, gg[ADA_W] = { g };
    uint32_t kk[ADA_W] = { k, t, t, t };
    double c[ADA_W];
    (void)ada_catch_up4(s, t, vv, gg, kk, c, ada_acc_zero(), ada_acc_zero());
    return c[0];
}

/* Step t of weight j alone (hog_sgd_apply; a row's weight that another
 * thread changed between the passes): the catch-up and step through the
 * lanes, installed as update_sq() installs. */
static ALWAYS_INLINE void ada_l2_update1(const struct ada_ctx *s, uint64_t j,
                                         double gj, double sq, uint32_t t,
                                         bool cas)
{
    _Atomic float *wp = &s->w[j];
    float v = hog_f_load(wp);
    for (;;) {
        uint32_t k = hog_u32_load(&s->stamp[j]);
        float g[ADA_W] = { hog_f_load(&s->g2[j]) }, nv[ADA_W], g2n[ADA_W];
        uint32_t kk[ADA_W] = { k, t, t, t }, kn[ADA_W];
        double c[ADA_W] = { ada_catch_up1(s, t, v, g[0], k) };
        double gg[ADA_W] = { gj }, qq[ADA_W] = { sq };
        ada_step4(s, t, g, kk, c, ada_vec_f64(gg), qq, nv, g2n, kn);
        if (w_install(wp, &v, nv[0], cas)) {
            hog_f_store(&s->g2[j], g2n[0]);
            if (k <= t)
                hog_u32_store(&s->stamp[j], t + 1);
            return;
        }
    }
}

/* Step t of the weights j[0..ADA_W) alone, one per lane, with loss
 * gradients g and AdaGrad increments sq (NULL: g^2, as ada_step4 makes
 * them): ada_l2_update1() of each, in the
 * lanes at once (a lane's arithmetic never depends on its neighbours, so
 * each weight gets the bits ada_l2_update1() gives it), stored plainly:
 * for a caller that is the weights' only writer (Cyclades' hot phase). */
static ALWAYS_INLINE void ada_l2_update4(const struct ada_ctx *s,
                                         const uint32_t *j, const double *g,
                                         const double *sq, uint32_t t)
{
    float v[ADA_W], g2[ADA_W], nv[ADA_W], g2n[ADA_W];
    uint32_t k[ADA_W], kn[ADA_W];
    double c[ADA_W];
#pragma GCC unroll 4
    for (uint32_t q = 0; q < ADA_W; q++) {
        v[q] = hog_f_load(&s->w[j[q]]);
        k[q] = hog_u32_load(&s->stamp[j[q]]);
        g2[q] = hog_f_load(&s->g2[j[q]]);
    }
    (void)ada_catch_up4(s, t, v, g2, k, c, ada_acc_zero(), ada_acc_zero());
    ada_step4(s, t, g2, k, c, ada_vec_f64(g), sq, nv, g2n, kn);
#pragma GCC unroll 4
    for (uint32_t q = 0; q < ADA_W; q++) {
        hog_f_store(&s->w[j[q]], nv[q]);
        hog_f_store(&s->g2[j[q]], g2n[q]);
        hog_u32_store(&s->stamp[j[q]], kn[q]);
    }
}

/* Entries of a row whose pass 1 is kept for pass 2 (a multiple of ADA_W);
 * a longer row's earlier blocks are gathered and caught up again in pass 2
 * (the same lanes, so the same values where nothing changed). */
#define ADA_BLOCK 2048

/* One block of a row's weights as pass 1 read them (v, stamps k, sums g)
 * and caught them up (c), with room for the bias weight and the idle lanes
 * after the last block's entries: 40 KiB of stack. */
struct ada_block {
    float v[ADA_BLOCK + ADA_W], g[ADA_BLOCK + ADA_W];
    uint32_t k[ADA_BLOCK + ADA_W];
    double c[ADA_BLOCK + ADA_W];
};

/* Weight j into lane i of b (relaxed loads: nothing is written). */
static ALWAYS_INLINE void ada_read(const struct ada_ctx *s, uint64_t j,
                                   struct ada_block *b, uint32_t i)
{
    b->v[i] = hog_f_load(&s->w[j]);
    b->k[i] = hog_u32_load(&s->stamp[j]);
    b->g[i] = hog_f_load(&s->g2[j]);
}

#if defined(__AVX2__) && defined(__FMA__)
/* Weights idx[0..4) into lanes i..i+4 of b, by gathers: the C11 model has
 * no atomic gather, so these are vector loads of the shared arrays, each
 * lane an aligned 4-byte load that x86 never tears, emitted where they are
 * written: what the relaxed loads of ada_read() promise, unordered and
 * untorn (TSan does not see them; the scalar build's ada_read4() is the
 * relaxed loads). */
static ALWAYS_INLINE void ada_read4(const struct ada_ctx *s,
                                    const uint32_t *idx, struct ada_block *b,
                                    uint32_t i)
{
    __m256i j = _mm256_cvtepu32_epi64(
        _mm_loadu_si128((const __m128i *)(const void *)idx));
    _mm_storeu_ps(b->v + i,
                  _mm256_i64gather_ps((const float *)(const void *)s->w, j,
                                      4));
    _mm_storeu_si128(
        (__m128i *)(void *)(b->k + i),
        _mm256_i64gather_epi32((const int *)(const void *)s->stamp, j, 4));
    _mm_storeu_ps(b->g + i,
                  _mm256_i64gather_ps((const float *)(const void *)s->g2, j,
                                      4));
}

/* Whether weights idx[0..4) and their stamps still hold lanes i..i+4 of
 * b (the same gathers). */
static ALWAYS_INLINE bool ada_same4(const struct ada_ctx *s,
                                    const uint32_t *idx,
                                    const struct ada_block *b, uint32_t i)
{
    __m256i j = _mm256_cvtepu32_epi64(
        _mm_loadu_si128((const __m128i *)(const void *)idx));
    __m128i v = _mm_castps_si128(
        _mm256_i64gather_ps((const float *)(const void *)s->w, j, 4));
    __m128i k =
        _mm256_i64gather_epi32((const int *)(const void *)s->stamp, j, 4);
    __m128i same = _mm_and_si128(
        _mm_cmpeq_epi32(v, _mm_loadu_si128((const __m128i *)(const void *)(
                               b->v + i))),
        _mm_cmpeq_epi32(k, _mm_loadu_si128((const __m128i *)(const void *)(
                               b->k + i))));
    return _mm_movemask_epi8(same) == 0xFFFF;
}
#else
static ALWAYS_INLINE void ada_read4(const struct ada_ctx *s,
                                    const uint32_t *idx, struct ada_block *b,
                                    uint32_t i)
{
    for (uint32_t q = 0; q < ADA_W; q++)
        ada_read(s, idx[q], b, i + q);
}

static ALWAYS_INLINE bool ada_same4(const struct ada_ctx *s,
                                    const uint32_t *idx,
                                    const struct ada_block *b, uint32_t i)
{
    bool same = true;
    for (uint32_t q = 0; q < ADA_W; q++) {
        float v = hog_f_load(&s->w[idx[q]]);
        same &= hog_u32_load(&s->stamp[idx[q]]) == b->k[i + q] &&
                memcmp(&v, &b->v[i + q], sizeof v) == 0;
    }
    return same;
}
#endif

/* The row's entries [lo, hi) and, if bias, the bias weight after them,
 * read into b and caught up to step t; returns their sum c x. Long rows
 * miss the cache on most weights: the lines PF entries ahead are fetched
 * (for writing where every row steps; see step_impl). */
static NOINLINE double ada_gather(const struct ada_ctx *sp, struct hog_row r,
                                  uint32_t lo, uint32_t hi, bool bias,
                                  uint32_t t, struct ada_block *b,
                                  bool pf_write)
{
    const struct ada_ctx sc = *sp, *s = &sc; /* see ada_ctx */
    enum { PF = 16 };
    ada_acc acc = ada_acc_zero();
    uint32_t e = lo, i = 0;
    for (; e + ADA_W <= hi; e += ADA_W, i += ADA_W) {
        if (e + PF + ADA_W <= r.nnz) {
#pragma GCC unroll 4
            for (uint32_t q = 0; q < ADA_W; q++) {
                uint32_t jp = r.idx[e + q + PF];
                if (pf_write) {
                    __builtin_prefetch(&s->w[jp], 1);
                    __builtin_prefetch(&s->stamp[jp], 1);
                    __builtin_prefetch(&s->g2[jp], 1);
                } else {
                    __builtin_prefetch(&s->w[jp], 0);
                    __builtin_prefetch(&s->stamp[jp], 0);
                    __builtin_prefetch(&s->g2[jp], 0);
                }
            }
        }
        ada_read4(s, r.idx + e, b, i);
        acc = ada_catch_up4(s, t, b->v + i, b->g + i, b->k + i, b->c + i,
                            ada_vec_f32(r.val + e), acc);
    }
    /* the last < ADA_W entries and the bias weight: one more set of
     * lanes, the idle ones current and zero */
    if (e < hi || bias) {
        double x[ADA_W] = { 0 };
#pragma GCC unroll 4
        for (uint32_t q = 0; q < ADA_W; q++) {
            b->v[i + q] = b->g[i + q] = 0.0f;
            b->k[i + q] = t;
        }
        uint32_t q = 0;
        for (; e + q < hi; q++) {
            ada_read(s, r.idx[e + q], b, i + q);
            x[q] = r.val[e + q];
        }
        if (bias) {
            ada_read(s, s->bias_j, b, i + q);
            x[q] = s->bias;
        }
        acc = ada_catch_up4(s, t, b->v + i, b->g + i, b->k + i, b->c + i,
                            ada_vec_f64(x), acc);
    }
    return ada_acc_sum(acc);
}

/* Installs lane i's step of weight j where the weight and its stamp still
 * hold what pass 1 read (always with one thread); else ada_l2_update1()
 * steps that weight afresh with gradient d x. */
static ALWAYS_INLINE void ada_install(const struct ada_ctx *s, uint64_t j,
                                      const struct ada_block *b, uint32_t i,
                                      float nv, float g2n, uint32_t t,
                                      double d, double x, bool cas)
{
    _Atomic float *wp = &s->w[j];
    float v = hog_f_load(wp);
    uint32_t k = hog_u32_load(&s->stamp[j]);
    if (k == b->k[i] && memcmp(&v, &b->v[i], sizeof v) == 0 &&
        w_install(wp, &v, nv, cas)) {
        hog_f_store(&s->g2[j], g2n);
        if (k <= t)
            hog_u32_store(&s->stamp[j], t + 1);
        return;
    }
    double gj = d * x;
    ada_l2_update1(s, j, gj, gj * gj, t, cas);
}

/* ada_install() of 4 lanes: the compare-and-swap mode, or a weight that
 * changed between the passes (kept out of the loop of the common case). */
static NOINLINE void ada_install4(const struct ada_ctx *s, const uint32_t *idx,
                                  const float *val, const struct ada_block *b,
                                  uint32_t i, const float *nv,
                                  const float *g2n, uint32_t t, double d,
                                  bool cas)
{
    for (uint32_t q = 0; q < ADA_W; q++)
        ada_install(s, idx[q], b, i + q, nv[q], g2n[q], t, d, val[q], cas);
}

/* Pass 2 of the entries ada_gather() put in b: step t with loss derivative
 * d, in lanes, then one install per weight. */
static NOINLINE void ada_apply(const struct ada_ctx *sp, struct hog_row r,
                               uint32_t lo, uint32_t hi, bool bias, uint32_t t,
                               double d, struct ada_block *b, bool cas)
{
    const struct ada_ctx sc = *sp, *s = &sc;
    uint32_t e = lo, i = 0;
    float nv[ADA_W], g2n[ADA_W];
    uint32_t kn[ADA_W];
    for (; e + ADA_W <= hi; e += ADA_W, i += ADA_W) {
        ada_step4(s, t, b->g + i, b->k + i, b->c + i,
                  ada_vec_scale(ada_vec_f32(r.val + e), d), NULL, nv, g2n,
                  kn);
        if (!cas && (s->alone || ada_same4(s, r.idx + e, b, i))) {
#pragma GCC unroll 4
            for (uint32_t q = 0; q < ADA_W; q++) {
                uint32_t j = r.idx[e + q];
                hog_f_store(&s->w[j], nv[q]);
                hog_f_store(&s->g2[j], g2n[q]);
                hog_u32_store(&s->stamp[j], kn[q]);
            }
        } else {
            ada_install4(s, r.idx + e, r.val + e, b, i, nv, g2n, t, d, cas);
        }
    }
    if (e == hi && !bias)
        return;
    double x[ADA_W] = { 0 };
    for (uint32_t q = 0; e + q < hi; q++)
        x[q] = r.val[e + q];
    if (bias)
        x[hi - e] = s->bias;
    ada_step4(s, t, b->g + i, b->k + i, b->c + i,
              ada_vec_scale(ada_vec_f64(x), d), NULL, nv, g2n, kn);
    uint32_t q = 0;
    for (; e + q < hi; q++)
        ada_install(s, r.idx[e + q], b, i + q, nv[q], g2n[q], t, d, x[q],
                    cas);
    if (bias)
        ada_install(s, s->bias_j, b, i + q, nv[q], g2n[q], t, d, s->bias,
                    cas);
}

/* step_impl() for AdaGrad with l2 only (the same contract): pass 1 reads
 * and catches up the row's weights in blocks of ADA_BLOCK, pass 2 steps
 * them, the last block straight from pass 1's lanes. */
static ALWAYS_INLINE double step_ada_l2(const struct hog_sgd *sg,
                                        struct hog_row r, double y,
                                        double rw, uint32_t t,
                                        double m_extra, bool with_bias,
                                        double *dout, struct spec spec)
{
    const struct ada_ctx sc = ada_ctx_of(sg), *s = &sc;
    const bool pf_write = spec.loss == HOG_LOSS_LOGISTIC ||
                          spec.loss == HOG_LOSS_SQUARED;
    const bool has_bias = with_bias && s->bias != 0.0;
    /* the last block: [last, nnz) and the bias weight */
    const uint32_t last = r.nnz ? (r.nnz - 1) / ADA_BLOCK * ADA_BLOCK : 0;
    struct ada_block b;
    double m = m_extra;
    for (uint32_t lo = 0; lo < last; lo += ADA_BLOCK)
        m += ada_gather(s, r, lo, lo + ADA_BLOCK, false, t, &b, pf_write);
    m += ada_gather(s, r, last, r.nnz, has_bias, t, &b, pf_write);
    double d = row_deriv(spec, y, m, rw, dout);
    if (d == 0.0)
        return m; /* step t's shrink stays pending in the stamps */
    /* the weights are distinct, so the blocks' order does not matter */
    ada_apply(s, r, last, r.nnz, has_bias, t, d, &b, spec.cas);
    for (uint32_t lo = 0; lo < last; lo += ADA_BLOCK) {
        (void)ada_gather(s, r, lo, lo + ADA_BLOCK, false, t, &b, pf_write);
        ada_apply(s, r, lo, lo + ADA_BLOCK, false, t, d, &b, spec.cas);
    }
    return m;
}


#endif
