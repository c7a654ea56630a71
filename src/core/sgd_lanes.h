/*
 * The vector maths of the SGD kernel: the power (1 - a)^k of AdaGrad's
 * catch-up (a weight untouched for k steps at its constant rate; the
 * closed form at the top of sgd.c), by exp and log series written out
 * rather than libm's, in scalar form for the AdaGrad kinds with l1 and in
 * four lanes (AVX2 and FMA, or the same sequence per lane in C) for the
 * default AdaGrad with l2 only. Pure functions of their arguments and of
 * the rate and l2 (struct ada_ctx), no shared state: a test may include
 * this header and call them alone. Private to the kernel's files
 * (sgd_int.h); static inline, so that the row steps (sgd.c, sgd_ada.h)
 * inline them.
 */
#ifndef HOG_SGD_LANES_H
#define HOG_SGD_LANES_H

#include "core/sgd_int.h"

/* exp(x) for x <= 0, inline: x = n ln2 + f with |f| <= ln2/2, e^f by its
 * Taylor polynomial of degree 8 in Estrin's scheme (the terms in pairs,
 * the pairs by f^2 and f^4: a short dependency chain; relative error
 * < 3e-10, far below the float weights' 6e-8), 2^n through the exponent
 * bits. A libm call here would stall the pipeline on every rare feature's
 * catch-up. */
static ALWAYS_INLINE double exp_nonpos(double x)
{
    if (x < -700.0)
        return 0.0;
    double n = __builtin_rint(x * 1.4426950408889634);
    double f = (x - n * 0.6931471803691238) - n * 1.9082149292705877e-10;
    double f2 = f * f, f4 = f2 * f2;
    double p = ((1.0 + f) + f2 * (0.5 + f * (1.0 / 6))) +
               f4 * (((1.0 / 24) + f * (1.0 / 120)) +
                     f2 * ((1.0 / 720) + f * (1.0 / 5040))) +
               (f4 * f4) * (1.0 / 40320);
    uint64_t bits = (uint64_t)((int64_t)n + 1023) << 52;
    double scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

/* 2 atanh(s) = log((1 + s)/(1 - s)) by its series to s^11, for small |s|
 * (log_unit's mantissa, and log(1 - a) = 2 atanh(-a / (2 - a)) for small a;
 * log4_series below is the same sequence in four lanes). */
static ALWAYS_INLINE double atanh2_series(double sv)
{
    double s2 = sv * sv;
    double p = 1.0 / 11;
    p = p * s2 + 1.0 / 9;
    p = p * s2 + 1.0 / 7;
    p = p * s2 + 1.0 / 5;
    p = p * s2 + 1.0 / 3;
    p = p * s2 + 1.0;
    return (sv + sv) * p;
}

/* log(x) for 0 < x < 1, inline: x = 2^e m with m in [sqrt(1/2), sqrt(2)),
 * log m = 2 atanh(s), s = (m - 1)/(m + 1), |s| < 0.172, by its series to
 * s^11 (relative error < 1e-10). */
static ALWAYS_INLINE double log_unit(double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int64_t e = (int64_t)((bits >> 52) & 0x7FF) - 1023;
    bits = (bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull;
    double m;
    memcpy(&m, &bits, sizeof m);
    if (m > 1.4142135623730951) {
        m *= 0.5;
        e += 1;
    }
    return (double)e * 0.6931471805599453 + atanh2_series((m - 1.0) / (m + 1.0));
}

/* (1 - a)^k for 0 <= a <= 1: k = 1 directly, else exp(k log(1 - a)) with
 * log(1 - a) from its series where a is small (relative error < a^3 / 4),
 * where 1 - a would lose a's digits. */
static ALWAYS_INLINE double shrink_pow(double a, uint32_t k)
{
    if (k == 1)
        return 1.0 - a;
    if (a >= 1.0)
        return 0.0;
    double lg = a < 1e-3 ? -a * (1.0 + a * (0.5 + a * (1.0 / 3.0)))
                         : log_unit(1.0 - a);
    return exp_nonpos((double)k * lg);
}

/* AdaGrad's rate of a coordinate whose squared gradients sum to g2, in
 * float: the rate is stored nowhere, so the catch-up recomputes it, and
 * float's square root and division cost half of double's. */
static ALWAYS_INLINE double adagrad_eta(const struct hog_sgd *s, float g2)
{
    return hog_sgd_adagrad_rate(s->eta, g2);
}

/* k regularization steps at one constant rate with a = min(1, eta l2):
 * returns P = (1 - a)^k, and *q (when q is not NULL) Q / b, the l1 part's
 * sum (1 - (1 - a)^k) / a (k where a = 0), by its series where 1 - P
 * would cancel. */
static ALWAYS_INLINE double ada_decay(double a, uint32_t k, double *q)
{
    double p = a > 0 ? shrink_pow(a, k) : 1.0;
    if (q) {
        double ka = (double)k * a;
        *q = ka < 1e-4 ? (double)k * (1.0 - 0.5 * (ka - a)) : (1.0 - p) / a;
    }
    return p;
}
/* AdaGrad: k regularization steps of a coordinate whose squared gradients
 * sum to g2, at its constant rate. */
static ALWAYS_INLINE float catch_up_adagrad_g2(const struct hog_sgd *s,
                                               float v, float g2, uint32_t k,
                                               bool l1)
{
    if (v == 0.0f)
        return 0.0f;
    double eta = adagrad_eta(s, g2);
    double a = eta * s->l2;
    a = a < 1.0 ? a : 1.0;
    double q;
    double p = ada_decay(a, k, l1 ? &q : NULL);
    double u = p * fabs((double)v);
    if (l1)
        u -= eta * s->l1 * q;
    return u > 0 ? (float)copysign(u, (double)v) : 0.0f;
}


/* ---- AdaGrad with l2 only: the catch-up in lanes ---------------------------
 *
 * The kernel of the default options (AdaGrad, l2 > 0, l1 = 0). A weight
 * v untouched for n steps at its constant rate eta_j = eta / sqrt(eps + G_j)
 * is brought current by the exact composition above (Q = 0 without l1),
 *
 *     v (1 - a)^n,   a = min(1, eta_j l2),
 *
 * evaluated in double, four weights at a time, as
 *
 *     n = 1:   1 - a                (exact: the power is one factor)
 *     a = 1:   0
 *     else:    exp(n log(1 - a))
 *
 *   log(1 - a), a < 2^-7: -(a + a^2/2 + a^3/3 + a^4/4 + a^5/5) from a
 *                         itself (relative error < a^5/6 < 5e-12), with no
 *                         division: nearly every lane once a coordinate
 *                         has a few gradients in its sum;
 *   log(1 - a), a < 1/4:  2 atanh(s), s = -a/(2 - a) formed from a itself
 *                         (1 - a would round a's last digits away: n 2^-53
 *                         on the power), series to s^11, |s| < 1/7;
 *   log(1 - a), else:     x = 1 - a (exact for a >= 1/2) = 2^e m, m in
 *                         [sqrt(1/2), sqrt(2)): e ln2 + 2 atanh((m-1)/(m+1)),
 *                         the same series, |s| < 0.172 (log_unit's sequence);
 *   exp(y), y <= 0:       y = r ln2 + f, |f| <= ln2/2, 2^r times e^f by
 *                         Taylor to f^8 (relative error < 3e-10) in
 *                         Estrin's scheme, four multiply-adds deep where
 *                         Horner's is nine; y < -700 gives 0 (exp_nonpos's
 *                         sequence).
 *
 * The series' relative error on the log is below 2e-11, which the power
 * takes times |log p|: against the real (1 - a)^n the relative error is at
 * most 1e-9 max(1, |log p|) (3.3e-10 measured), so below 1e-9 wherever
 * p > 1e-8 and the weight still shows in float; tests/test_sgd.c checks
 * it on random (a, n) against powl() and against shrink_pow(), the scalar
 * catch-up the other AdaGrad kinds keep (1.5e-7: its short series for
 * log(1 - a) where a < 1e-3 is the less exact of the two). The formulation
 * is the same exact catch-up; the models differ from shrink_pow()'s by
 * rounding only. What it buys is one straight-line sequence for every
 * lane, with no branch per weight (one per four, where a lane is not
 * tiny, which picks no lane's formula: each lane's range does): the row's
 * weights, stamps and sums are
 * gathered four at a time (AVX2 and FMA, chosen at build time; the same
 * sequence per lane in C without them, one weight at a time), caught up,
 * stepped (G_j += g^2, the new rate, w <- (1 - a) c - eta_j g from the
 * caught-up c) and installed by scalar relaxed stores. Every catch-up of
 * this kind (row, single weight, segment end) goes through these lanes, so
 * a weight's rounding does not depend on the path that brought it current:
 * one thread still gives the same model in every update mode, in Cyclades
 * and in resumed runs. The lanes need no state beyond the weights, stamps
 * and sums (a cached log(1 - a) per coordinate would be one more array for
 * Hogwild!'s hot views, Cyclades and the checkpoints to keep in step with
 * the sums that they average, add and restore). */

#define ADA_W 4 /* lanes */
#define ADA_TINY 0x1p-7 /* a below it: log(1 - a) by the short series */

/* What the lanes read of the trainer: the shared arrays and the scalars,
 * copied out of struct hog_sgd by ada_ctx_of() into a local, so that the
 * compiler keeps them in registers across the weight stores. */
struct ada_ctx {
    _Atomic float *w, *g2;
    _Atomic uint32_t *stamp;
    float eta; /* AdaGrad's base rate, in float as adagrad_eta() has it */
    double l2, bias;
    uint64_t bias_j; /* the bias weight's index, n_features */
    bool alone;      /* hog_sgd.alone */
};

static ALWAYS_INLINE struct ada_ctx ada_ctx_of(const struct hog_sgd *s)
{
    return (struct ada_ctx){ .w = s->w, .g2 = s->g2, .stamp = s->stamp,
                             .eta = (float)s->eta, .l2 = s->l2,
                             .bias = s->bias, .bias_j = s->n_features,
                             .alone = s->alone };
}

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

/* a lane vector of doubles, and the margin's 4 partial sums */
typedef __m256d ada_vec;
typedef __m256d ada_acc;
static ALWAYS_INLINE ada_vec ada_vec_f32(const float *p)
{
    return _mm256_cvtps_pd(_mm_loadu_ps(p));
}
static ALWAYS_INLINE ada_vec ada_vec_f64(const double *p)
{
    return _mm256_loadu_pd(p);
}
static ALWAYS_INLINE ada_vec ada_vec_scale(ada_vec x, double d)
{
    return _mm256_mul_pd(x, _mm256_set1_pd(d));
}
static ALWAYS_INLINE ada_acc ada_acc_zero(void) { return _mm256_setzero_pd(); }
static ALWAYS_INLINE double ada_acc_sum(ada_acc a)
{
    double l[ADA_W];
    _mm256_storeu_pd(l, a);
    return (l[0] + l[1]) + (l[2] + l[3]);
}

/* 2 atanh(s) = log((1 + s)/(1 - s)) by its series to s^11, for
 * |s| < 0.172. */
static ALWAYS_INLINE __m256d log4_series(__m256d sv)
{
    __m256d s2 = _mm256_mul_pd(sv, sv);
    __m256d p = _mm256_set1_pd(1.0 / 11);
    p = _mm256_fmadd_pd(p, s2, _mm256_set1_pd(1.0 / 9));
    p = _mm256_fmadd_pd(p, s2, _mm256_set1_pd(1.0 / 7));
    p = _mm256_fmadd_pd(p, s2, _mm256_set1_pd(1.0 / 5));
    p = _mm256_fmadd_pd(p, s2, _mm256_set1_pd(1.0 / 3));
    p = _mm256_fmadd_pd(p, s2, _mm256_set1_pd(1.0));
    return _mm256_mul_pd(_mm256_add_pd(sv, sv), p);
}

/* log(1 - a) for 0 <= a < 1: where a < 1/4, 2 atanh(s) with s = -a/(2 - a)
 * from a itself (1 - a would round a's last digits away: a relative error
 * 2^-53/a of the log, n times that on the power); elsewhere log_unit()'s
 * sequence on x = 1 - a, which is exact there. small: the lanes with
 * a < 1/4, which log1m4_small() gives bit for bit. */
static ALWAYS_INLINE __m256d log1m4_small(__m256d a)
{
    return log4_series(_mm256_div_pd(_mm256_sub_pd(_mm256_setzero_pd(), a),
                                     _mm256_sub_pd(_mm256_set1_pd(2.0), a)));
}

/* log(1 - a) for a < 2^-7 (ADA_TINY): -(a + a^2/2 + a^3/3 + a^4/4 + a^5/5),
 * relative error < a^5/6 < 5e-12, with no division. */
static ALWAYS_INLINE __m256d log1m4_tiny(__m256d a)
{
    __m256d a2 = _mm256_mul_pd(a, a);
    __m256d lo = _mm256_fmadd_pd(a, _mm256_set1_pd(1.0 / 3),
                                 _mm256_set1_pd(0.5));
    __m256d hi = _mm256_fmadd_pd(a, _mm256_set1_pd(1.0 / 5),
                                 _mm256_set1_pd(0.25));
    __m256d t = _mm256_fmadd_pd(a2, _mm256_fmadd_pd(a2, hi, lo), a);
    return _mm256_sub_pd(_mm256_setzero_pd(), t);
}

static ALWAYS_INLINE __m256d log1m4(__m256d a, __m256d small)
{
    const __m256d x = _mm256_sub_pd(_mm256_set1_pd(1.0), a);
    const __m256i bits = _mm256_castpd_si256(x);
    /* e: the biased exponent, made a double by putting it in 2^52's
     * mantissa */
    __m256d e = _mm256_sub_pd(
        _mm256_castsi256_pd(_mm256_or_si256(
            _mm256_srli_epi64(bits, 52),
            _mm256_set1_epi64x(0x4330000000000000ll))),
        _mm256_set1_pd(0x1p52 + 1023.0));
    __m256d m = _mm256_castsi256_pd(_mm256_or_si256(
        _mm256_and_si256(bits, _mm256_set1_epi64x(0x000FFFFFFFFFFFFFll)),
        _mm256_set1_epi64x(0x3FF0000000000000ll)));
    __m256d big = _mm256_cmp_pd(m, _mm256_set1_pd(1.4142135623730951),
                                _CMP_GT_OQ);
    m = _mm256_blendv_pd(m, _mm256_mul_pd(m, _mm256_set1_pd(0.5)), big);
    e = _mm256_add_pd(e, _mm256_and_pd(big, _mm256_set1_pd(1.0)));
    const __m256d one = _mm256_set1_pd(1.0);
    __m256d sv = _mm256_div_pd(_mm256_sub_pd(m, one), _mm256_add_pd(m, one));
    sv = _mm256_blendv_pd(
        sv,
        _mm256_div_pd(_mm256_sub_pd(_mm256_setzero_pd(), a),
                      _mm256_sub_pd(_mm256_set1_pd(2.0), a)),
        small);
    e = _mm256_andnot_pd(small, e); /* 0 where small: fma(0, ln2, z) = z */
    return _mm256_fmadd_pd(e, _mm256_set1_pd(0.6931471805599453),
                           log4_series(sv));
}

/* e^f for |f| <= ln2/2: Taylor to f^8 in Estrin's scheme, four
 * multiply-adds deep where Horner's is nine. */
static ALWAYS_INLINE __m256d exp4_reduced(__m256d f)
{
    __m256d f2 = _mm256_mul_pd(f, f), f4 = _mm256_mul_pd(f2, f2);
    __m256d q01 = _mm256_add_pd(_mm256_set1_pd(1.0), f);
    __m256d q23 = _mm256_fmadd_pd(f, _mm256_set1_pd(1.0 / 6),
                                  _mm256_set1_pd(0.5));
    __m256d q45 = _mm256_fmadd_pd(f, _mm256_set1_pd(1.0 / 120),
                                  _mm256_set1_pd(1.0 / 24));
    __m256d q67 = _mm256_fmadd_pd(f, _mm256_set1_pd(1.0 / 5040),
                                  _mm256_set1_pd(1.0 / 720));
    __m256d p = _mm256_fmadd_pd(
        f4, _mm256_fmadd_pd(f2, q67, q45), _mm256_fmadd_pd(f2, q23, q01));
    return _mm256_fmadd_pd(_mm256_mul_pd(f4, f4),
                           _mm256_set1_pd(1.0 / 40320), p);
}

/* exp(y) for y <= 0 (exp_nonpos's sequence). Where y >= -0.34 in every
 * lane (two thirds of a text set's catch-ups), r = 0: f = y and 2^r = 1,
 * so the reduction is skipped with the same result, bit for bit. */
static ALWAYS_INLINE __m256d exp4_nonpos(__m256d y)
{
    if (_mm256_movemask_pd(_mm256_cmp_pd(y, _mm256_set1_pd(-0.34),
                                         _CMP_GE_OQ)) == 0xF)
        return exp4_reduced(y);
    __m256d r = _mm256_round_pd(
        _mm256_mul_pd(y, _mm256_set1_pd(1.4426950408889634)),
        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256d f = _mm256_fnmadd_pd(r, _mm256_set1_pd(0.6931471803691238), y);
    f = _mm256_fnmadd_pd(r, _mm256_set1_pd(1.9082149292705877e-10), f);
    __m256d p = exp4_reduced(f);
    /* 2^r: r + 1.5 2^52 holds r in its low mantissa bits */
    __m256i ri = _mm256_castpd_si256(
        _mm256_add_pd(r, _mm256_set1_pd(0x1.8p52)));
    __m256d scale = _mm256_castsi256_pd(_mm256_slli_epi64(
        _mm256_add_epi64(ri, _mm256_set1_epi64x(1023)), 52));
    __m256d under = _mm256_cmp_pd(y, _mm256_set1_pd(-700.0), _CMP_LT_OQ);
    return _mm256_andnot_pd(under, _mm256_mul_pd(p, scale));
}

/* (1 - a)^n for 0 <= a <= 1, n >= 1 (the formulation above). */
static ALWAYS_INLINE __m256d shrink_pow4(__m256d a, __m256d n)
{
    const __m256d one = _mm256_set1_pd(1.0);
    __m256d x = _mm256_sub_pd(one, a);
    /* a < 2^-7 in every lane (all but the young coordinates): the short
     * series alone; else each lane by its own range, so that a lane's
     * result never depends on its neighbours */
    __m256d tiny = _mm256_cmp_pd(a, _mm256_set1_pd(ADA_TINY), _CMP_LT_OQ);
    __m256d lg;
    if (_mm256_movemask_pd(tiny) == 0xF) {
        lg = log1m4_tiny(a);
    } else {
        __m256d small = _mm256_cmp_pd(a, _mm256_set1_pd(0.25), _CMP_LT_OQ);
        lg = _mm256_blendv_pd(_mm256_movemask_pd(small) == 0xF
                                  ? log1m4_small(a)
                                  : log1m4(a, small),
                              log1m4_tiny(a), tiny);
    }
    __m256d p = exp4_nonpos(_mm256_mul_pd(n, lg));
    p = _mm256_blendv_pd(p, x, _mm256_cmp_pd(n, one, _CMP_EQ_OQ));
    return _mm256_andnot_pd(_mm256_cmp_pd(a, one, _CMP_GE_OQ), p);
}

/* AdaGrad's rate (adagrad_eta, in float: the same rounding) of 4 sums. */
static ALWAYS_INLINE __m256d rate4(const struct ada_ctx *s, __m128 g2)
{
    __m128 r = _mm_div_ps(_mm_set1_ps(s->eta),
                          _mm_sqrt_ps(_mm_add_ps(
                              _mm_set1_ps((float)HOG_ADAGRAD_EPS), g2)));
    return _mm256_cvtps_pd(r);
}

/* a = min(1, eta_j l2) */
static ALWAYS_INLINE __m256d shrink_a4(const struct ada_ctx *s, __m256d eta)
{
    return _mm256_min_pd(_mm256_mul_pd(eta, _mm256_set1_pd(s->l2)),
                         _mm256_set1_pd(1.0));
}

/* c[i] = v[i] with stamp k[i] brought to step t (k >= t: v itself), for
 * the sums g[i] of the untouched steps; returns acc + c x, lane by lane. */
static ALWAYS_INLINE __m256d ada_catch_up4(const struct ada_ctx *s,
                                           uint32_t t, const float *v,
                                           const float *g, const uint32_t *k,
                                           double *c, ada_vec x, ada_acc acc)
{
    __m256d vd = _mm256_cvtps_pd(_mm_loadu_ps(v));
    /* n = t - k, unsigned (through the signed conversion, offset by
     * 2^31); behind (to catch up) where t > k */
    const __m128i sb = _mm_set1_epi32(INT32_MIN);
    __m128i ki = _mm_loadu_si128((const __m128i *)(const void *)k);
    __m128i ti = _mm_set1_epi32((int)t);
    __m256d n = _mm256_add_pd(
        _mm256_cvtepi32_pd(_mm_xor_si128(_mm_sub_epi32(ti, ki), sb)),
        _mm256_set1_pd(0x1p31));
    __m256d behind = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(
        _mm_cmpgt_epi32(_mm_xor_si128(ti, sb), _mm_xor_si128(ki, sb))));
    __m256d a = shrink_a4(s, rate4(s, _mm_loadu_ps(g)));
    __m256d cd = _mm256_blendv_pd(vd, _mm256_mul_pd(shrink_pow4(a, n), vd),
                                  behind);
    _mm256_storeu_pd(c, cd);
    return _mm256_fmadd_pd(cd, x, acc);
}

/* Step t of 4 weights: v[i] with stamp k[i] and sum g[i], caught up to
 * c[i], loss gradient gj[i] and increment sq[i] (NULL: gj[i]^2) give the
 * new weight nv[i] and sum g2n[i]. A weight stamped beyond t (a thread
 * further ahead) takes the gradient alone. */
static ALWAYS_INLINE void ada_step4(const struct ada_ctx *s, uint32_t t,
                                    const float *g, const uint32_t *k,
                                    const double *c, ada_vec gd,
                                    const double *sq, float *nv, float *g2n,
                                    uint32_t *kn)
{
    __m256d sd = sq ? _mm256_loadu_pd(sq) : _mm256_mul_pd(gd, gd);
    __m128 gn = _mm256_cvtpd_ps(
        _mm256_add_pd(_mm256_cvtps_pd(_mm_loadu_ps(g)), sd));
    _mm_storeu_ps(g2n, gn);
    __m256d eta = rate4(s, gn);
    __m256d shrink = _mm256_sub_pd(_mm256_set1_pd(1.0), shrink_a4(s, eta));
    __m128i ki = _mm_loadu_si128((const __m128i *)(const void *)k);
    /* k <= t (unsigned): k ^ 2^31 <= t ^ 2^31 (signed) */
    const __m128i sb = _mm_set1_epi32(INT32_MIN);
    __m128i ahead = _mm_cmpgt_epi32(_mm_xor_si128(ki, sb),
                                    _mm_xor_si128(_mm_set1_epi32((int)t), sb));
    _mm_storeu_si128((__m128i *)(void *)kn,
                     _mm_blendv_epi8(_mm_set1_epi32((int)(t + 1)), ki, ahead));
    __m256d ah = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(ahead));
    __m256d cd = _mm256_loadu_pd(c);
    __m256d base = _mm256_blendv_pd(_mm256_mul_pd(shrink, cd), cd, ah);
    _mm_storeu_ps(nv, _mm256_cvtpd_ps(_mm256_fnmadd_pd(eta, gd, base)));
}


#else /* the same sequence per lane, in C */

typedef struct {
    double l[ADA_W];
} ada_vec;
typedef ada_vec ada_acc;
static ALWAYS_INLINE ada_vec ada_vec_f32(const float *p)
{
    return (ada_vec){ { p[0], p[1], p[2], p[3] } };
}
static ALWAYS_INLINE ada_vec ada_vec_f64(const double *p)
{
    return (ada_vec){ { p[0], p[1], p[2], p[3] } };
}
static ALWAYS_INLINE ada_vec ada_vec_scale(ada_vec x, double d)
{
    for (int i = 0; i < ADA_W; i++)
        x.l[i] *= d;
    return x;
}
static ALWAYS_INLINE ada_acc ada_acc_zero(void) { return (ada_acc){ { 0 } }; }
static ALWAYS_INLINE double ada_acc_sum(ada_acc a)
{
    return (a.l[0] + a.l[1]) + (a.l[2] + a.l[3]);
}

static ALWAYS_INLINE double shrink_pow1(double a, double n)
{
    if (a >= 1.0)
        return 0.0;
    if (n == 1.0)
        return 1.0 - a;
    double lg;
    if (a < ADA_TINY) { /* log1m4_tiny */
        lg = -(a + (a * a) * ((0.5 + a * (1.0 / 3)) +
                              (a * a) * (0.25 + a * (1.0 / 5))));
    } else if (a < 0.25) { /* log4_series(-a / (2 - a)) */
        lg = atanh2_series(-a / (2.0 - a));
    } else {
        lg = log_unit(1.0 - a);
    }
    return exp_nonpos(n * lg);
}

static ALWAYS_INLINE double ada_eta1(const struct ada_ctx *s, float g2)
{
    return s->eta / sqrtf((float)HOG_ADAGRAD_EPS + g2);
}

static ALWAYS_INLINE double shrink_a1(const struct ada_ctx *s, double eta)
{
    double a = eta * s->l2;
    return a < 1.0 ? a : 1.0;
}

static ALWAYS_INLINE ada_acc ada_catch_up4(const struct ada_ctx *s,
                                           uint32_t t, const float *v,
                                           const float *g, const uint32_t *k,
                                           double *c, ada_vec x,
                                           ada_acc acc)
{
    for (int i = 0; i < ADA_W; i++) {
        c[i] = k[i] >= t ? (double)v[i]
                         : shrink_pow1(shrink_a1(s, ada_eta1(s, g[i])),
                                       (double)(t - k[i])) *
                               (double)v[i];
        acc.l[i] += c[i] * x.l[i];
    }
    return acc;
}

static ALWAYS_INLINE void ada_step4(const struct ada_ctx *s, uint32_t t,
                                    const float *g, const uint32_t *k,
                                    const double *c, ada_vec gj,
                                    const double *sq, float *nv, float *g2n,
                                    uint32_t *kn)
{
    for (int i = 0; i < ADA_W; i++) {
        g2n[i] = (float)((double)g[i] + (sq ? sq[i] : gj.l[i] * gj.l[i]));
        double eta = ada_eta1(s, g2n[i]);
        double base = k[i] <= t ? (1.0 - shrink_a1(s, eta)) * c[i] : c[i];
        nv[i] = (float)(base - eta * gj.l[i]);
        kn[i] = k[i] <= t ? t + 1 : k[i];
    }
}

#endif


#endif
