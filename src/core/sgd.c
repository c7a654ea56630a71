/*
 * Sparse SGD with lazy L1/L2 regularization.
 *
 * Objective (n rows, weights w including the bias weight, whose feature is
 * the constant opts.bias):
 *
 *     F(w) = (1/n) sum_i loss(y_i, w.x_i) + l2/2 |w|^2 + l1 |w|_1
 *
 * Step t on row x with margin m = w.x, d = loss'(y, m), step size eta_t:
 *
 *     w <- S_{b_t}( (1 - a_t) w - eta_t d x ),   a_t = eta_t l2,  b_t = eta_t l1
 *
 * for EVERY weight, where S_b(v) = sign(v) max(0, |v| - b) is the proximal
 * map of b|.|_1 (soft threshold; cf. the truncated gradient of Langford, Li
 * and Zhang 2009 and Tsuruoka, Tsujii and Ananiadou 2009). This is the dense,
 * eager update; its cost is O(features) per step.
 *
 * Lazy form, O(nnz of the row) per step. A weight that is not in rows
 * k..t-1 only sees u -> max(0, (1 - a_s) u - b_s) on u = |w| (sign kept).
 * With 1 - a_s >= 0 the composition of these maps is again of that shape:
 *
 *     |w_t| = max(0, P |w_k| - Q),   P = prod_{s=k}^{t-1} (1 - a_s),
 *                                    Q = sum_{s=k}^{t-1} b_s prod_{r=s+1}^{t-1} (1 - a_r)
 *
 * (induction: if P u - Q < 0 both sides are 0 because b >= 0; otherwise the
 * max(0, .) of the inner map is the identity). With per-segment prefixes
 * q_s = 1 / prod_{r<s} (1 - a_r) and c_s = sum_{r<s} b_r q_{r+1}:
 *
 *     P = q_k / q_t,   Q = (c_t - c_k) / q_t,
 *     |w_t| = max(0, |w_k| q_k - (c_t - c_k)) / q_t.
 *
 * The step sizes of the shared schedules (constant, inverse scaling) depend
 * on t only, so the prefixes of a whole segment are computed up front, O(1)
 * per step. Three ways to keep the weights, by regularization:
 *
 *   none     w[j] = w_j.
 *   scaled   l2 only: w[j] = w_j q_t. Untouched, w_j q_t does not change
 *            (P = q_k / q_t), so no timestamps: the margin is
 *            (sum w[j] x_j) / q_t and the step is the plain sparse axpy
 *            w[j] -= eta_t d x_j q_{t+1}.
 *   stamped  l1, or AdaGrad: w[j] holds w_j as of segment step stamp[j]
 *            (the first step whose regularization it lacks); a step first
 *            brings the row's weights to t with the formula above, then
 *            applies the step to them only.
 *
 * Each makes the lazy weights EQUAL the eager ones up to float rounding
 * (tests/test_sgd.c checks it against an eager trainer). A segment ends at
 * the end of an epoch, after HOG_SGD_SEG_MAX steps, or before q would pass
 * 1/HOG_SGD_PREFIX_MIN; hog_sgd_segment_end() then brings every weight to
 * the segment's end (O(features)) and the next one starts at q = 1.
 *
 * AdaGrad (Duchi, Hazan, Singer 2011): eta_{t,j} = eta / sqrt(eps + G_j),
 * G_j the sum of the squared loss gradients of coordinate j (the
 * regularizer's gradient is not accumulated). Between two touches G_j is
 * constant, so with a = min(1, eta_j l2), b = eta_j l1 and k untouched steps
 * P = (1 - a)^k and Q = b (1 - (1 - a)^k) / a (b k when a = 0). The clamp
 * a <= 1 keeps the composition valid where a young coordinate's step is
 * large; the eager reference in the tests applies the same clamp.
 *
 * Several threads (Hogwild!). The kernel takes the step number t and reads
 * and writes weights, accumulators and stamps with relaxed atomics. A thread
 * works in its own virtual time (e.g. t = k T + thread for its k-th row, all
 * within the segment); the prefixes hold every step of the segment, so any
 * t may run at any moment. Scaled weights need nothing more. Stamped: a
 * stamp >= t means the weight is already current (a thread ran further
 * ahead): no catch-up, and the step adds its gradient without shrinking
 * again; a stamp only grows within a segment (the update stores
 * max(stamp, t + 1)). Two threads that catch up one weight at once may
 * shrink it twice, and a racing store may lose an update: the same noise
 * Hogwild! accepts for the gradient itself. hog_sgd_segment_end() must run
 * with no step in flight.
 */
#include "core/sgd.h"

#include "core/loss.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ALWAYS_INLINE inline __attribute__((always_inline))

hog_status hog_sgd_init(struct hog_sgd *s, const hog_train_opts *o,
                        const hog_data *train, hog_err *err)
{
    memset(s, 0, sizeof *s);
    s->loss = o->loss;
    s->schedule = o->schedule;
    s->eta = o->eta;
    s->l1 = o->l1;
    s->l2 = o->l2;
    s->power = o->power;
    s->bias = o->bias;
    s->label_pos = train->label_pos;
    s->n_features = train->n_features;
    s->n_weights = train->n_features + (o->bias != 0.0);
    s->rows = train->m.rows ? train->m.rows : 1;
    bool ada = s->schedule == HOG_SCHED_ADAGRAD;
    s->reg = s->l1 > 0 || (ada && s->l2 > 0) ? HOG_SGD_REG_STAMPED
             : s->l2 > 0                     ? HOG_SGD_REG_SCALED
                                             : HOG_SGD_REG_NONE;
    s->seg_cap = s->rows < HOG_SGD_SEG_MAX ? (uint32_t)s->rows
                                           : HOG_SGD_SEG_MAX;
    if (ada)
        s->seg_cap = UINT32_MAX - 1;

    size_t nw = s->n_weights ? s->n_weights : 1;
    bool ok = (s->w = calloc(nw, sizeof *s->w)) != NULL;
    if (ok && s->reg == HOG_SGD_REG_STAMPED)
        ok = (s->stamp = calloc(nw, sizeof *s->stamp)) != NULL;
    if (ok && ada)
        ok = (s->g2 = calloc(nw, sizeof *s->g2)) != NULL;
    if (ok && !ada) {
        ok = (s->seg_eta = malloc(s->seg_cap * sizeof *s->seg_eta)) != NULL;
        if (ok && s->reg != HOG_SGD_REG_NONE)
            ok = (s->pre = malloc(((size_t)s->seg_cap + 1) *
                                  sizeof *s->pre)) != NULL;
    }
    if (!ok) {
        hog_sgd_free(s);
        return hog_errf(err, HOG_ENOMEM,
                        "out of memory for the SGD state of %llu weights",
                        (unsigned long long)nw);
    }
    return HOG_OK;
}

void hog_sgd_free(struct hog_sgd *s)
{
    free(s->w);
    free(s->g2);
    free(s->stamp);
    free(s->pre);
    free(s->seg_eta);
    s->w = s->g2 = NULL;
    s->stamp = NULL;
    s->pre = NULL;
    s->seg_eta = NULL;
}

double hog_sgd_eta_at(const struct hog_sgd *s, uint64_t t)
{
    if (s->schedule != HOG_SCHED_INVSCALING)
        return s->eta;
    if (s->l2 > 0)
        return s->eta / (1.0 + s->eta * s->l2 * (double)t);
    return s->eta / pow(1.0 + (double)t / (double)s->rows, s->power);
}

uint32_t hog_sgd_segment_begin(struct hog_sgd *s, uint64_t t0, uint32_t want)
{
    if (want < 1)
        want = 1;
    if (want > s->seg_cap)
        want = s->seg_cap;
    s->seg_t0 = t0;
    s->seg_len = want;
    if (s->schedule == HOG_SCHED_ADAGRAD)
        return want;
    for (uint32_t i = 0; i < want; i++)
        s->seg_eta[i] = hog_sgd_eta_at(s, t0 + i);
    if (!s->pre)
        return want;
    double q = 1.0, c = 0.0;
    s->pre[0] = (struct hog_sgd_prefix){ 1.0, 0.0 };
    for (uint32_t i = 0; i < want; i++) {
        double qn = q / (1.0 - s->seg_eta[i] * s->l2);
        if (i > 0 && qn > 1.0 / HOG_SGD_PREFIX_MIN) {
            s->seg_len = i;
            break;
        }
        q = qn;
        c += s->seg_eta[i] * s->l1 * q;
        s->pre[i + 1] = (struct hog_sgd_prefix){ q, c };
    }
    return s->seg_len;
}

/* ---- shared state, relaxed (see above) ------------------------------------ */

static ALWAYS_INLINE _Atomic float *w_at(const struct hog_sgd *s, uint64_t j)
{
    return &s->w[j];
}

static ALWAYS_INLINE _Atomic uint32_t *stamp_at(const struct hog_sgd *s,
                                                uint64_t j)
{
    return &s->stamp[j];
}

static inline float ld(_Atomic float *p)
{
    return atomic_load_explicit(p, memory_order_relaxed);
}
static inline void st(_Atomic float *p, float v)
{
    atomic_store_explicit(p, v, memory_order_relaxed);
}
static inline uint32_t ld_u32(_Atomic uint32_t *p)
{
    return atomic_load_explicit(p, memory_order_relaxed);
}
static inline void st_u32(_Atomic uint32_t *p, uint32_t v)
{
    atomic_store_explicit(p, v, memory_order_relaxed);
}

/* ---- per-coordinate maps ---------------------------------------------------- */

static inline float soft_threshold(double u, double b)
{
    if (u > b)
        return (float)(u - b);
    if (u < -b)
        return (float)(u + b);
    return 0.0f;
}

/* Stamped weight v of stamp k brought to step t (shared schedules, l1 > 0);
 * qt_inv and ct are 1/q_t and c_t. */
static ALWAYS_INLINE float catch_up_prefix(const struct hog_sgd_prefix *pre,
                                           float v, uint32_t k, double qt_inv,
                                           double ct)
{
    if (v == 0.0f)
        return 0.0f;
    struct hog_sgd_prefix pk = pre[k];
    double u = fabs((double)v) * pk.q - (ct - pk.c);
    return u > 0 ? (float)copysign(u * qt_inv, (double)v) : 0.0f;
}

/* exp(x) for x <= 0, inline: x = n ln2 + f with |f| <= ln2/2, e^f by its
 * Taylor polynomial of degree 8 (relative error < 3e-10, far below the
 * float weights' 6e-8), 2^n through the exponent bits. A libm call here
 * would stall the pipeline on every rare feature's catch-up. */
static ALWAYS_INLINE double exp_nonpos(double x)
{
    if (x < -700.0)
        return 0.0;
    double n = __builtin_rint(x * 1.4426950408889634);
    double f = (x - n * 0.6931471803691238) - n * 1.9082149292705877e-10;
    double p = 1.0 / 40320;
    p = p * f + 1.0 / 5040;
    p = p * f + 1.0 / 720;
    p = p * f + 1.0 / 120;
    p = p * f + 1.0 / 24;
    p = p * f + 1.0 / 6;
    p = p * f + 0.5;
    p = p * f + 1.0;
    p = p * f + 1.0;
    uint64_t bits = (uint64_t)((int64_t)n + 1023) << 52;
    double scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
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
    double sv = (m - 1.0) / (m + 1.0), s2 = sv * sv;
    double p = 1.0 / 11;
    p = p * s2 + 1.0 / 9;
    p = p * s2 + 1.0 / 7;
    p = p * s2 + 1.0 / 5;
    p = p * s2 + 1.0 / 3;
    p = p * s2 + 1.0;
    return (double)e * 0.6931471805599453 + 2.0 * sv * p;
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
    return (float)s->eta / sqrtf((float)HOG_ADAGRAD_EPS + g2);
}

/* AdaGrad: k regularization steps of coordinate j at its constant rate. */
static ALWAYS_INLINE float catch_up_adagrad(const struct hog_sgd *s, float v,
                                            uint64_t j, uint32_t k, bool l1)
{
    if (v == 0.0f)
        return 0.0f;
    double eta = adagrad_eta(s, ld(&s->g2[j]));
    double a = eta * s->l2;
    a = a < 1.0 ? a : 1.0;
    double p = a > 0 ? shrink_pow(a, k) : 1.0;
    double u = p * fabs((double)v);
    if (l1) {
        /* Q = b (1 - p) / a, by its series where 1 - p would cancel */
        double ka = (double)k * a;
        double q = ka < 1e-4 ? (double)k * (1.0 - 0.5 * (ka - a))
                             : (1.0 - p) / a;
        u -= eta * s->l1 * q;
    }
    return u > 0 ? (float)copysign(u, (double)v) : 0.0f;
}

/* ---- the row step ----------------------------------------------------------- */

/* Pass 1 for one coordinate: w[j] as of step t (stamped), or as stored. */
static ALWAYS_INLINE float fetch(const struct hog_sgd *s, uint64_t j,
                                 uint32_t t, double qt_inv, double ct,
                                 bool ada, bool stamped, bool l1)
{
    _Atomic float *wp = w_at(s, j);
    float v = ld(wp);
    if (!stamped)
        return v;
    _Atomic uint32_t *sp = stamp_at(s, j);
    uint32_t k = ld_u32(sp);
    if (k >= t)
        return v;
    v = ada ? catch_up_adagrad(s, v, j, t - k, l1)
            : catch_up_prefix(s->pre, v, k, qt_inv, ct);
    st(wp, v);
    st_u32(sp, t);
    return v;
}

/* Pass 2 for one coordinate: step t with loss gradient gj = d x_j. Shared
 * schedules pass eta, shrink = 1 - eta l2 and thr = eta l1 (scaled: eta
 * already times q_{t+1}, shrink unused). */
static ALWAYS_INLINE void update(const struct hog_sgd *s, uint64_t j,
                                 uint32_t t, double gj, double eta,
                                 double shrink, double thr, bool ada,
                                 bool stamped, bool l1)
{
    if (ada) {
        float g2 = (float)((double)ld(&s->g2[j]) + gj * gj);
        st(&s->g2[j], g2);
        eta = adagrad_eta(s, g2);
        double a = eta * s->l2;
        shrink = 1.0 - (a < 1.0 ? a : 1.0);
        thr = eta * s->l1;
    }
    _Atomic float *wp = w_at(s, j);
    double v = ld(wp);
    if (stamped) {
        _Atomic uint32_t *sp = stamp_at(s, j);
        if (ld_u32(sp) <= t) {
            double u = shrink * v - eta * gj;
            st(wp, l1 ? soft_threshold(u, thr) : (float)u);
            st_u32(sp, t + 1);
            return;
        }
        /* A thread further ahead regularized this weight past step t. */
    }
    st(wp, (float)(v - eta * gj));
}

static ALWAYS_INLINE double step_impl(const struct hog_sgd *s,
                                      struct hog_row r, double y, uint32_t t,
                                      hog_loss loss, bool ada,
                                      enum hog_sgd_reg reg, bool l1)
{
    const bool stamped = reg == HOG_SGD_REG_STAMPED;
    const bool scaled = reg == HOG_SGD_REG_SCALED;
    double qt_inv = 0, ct = 0;
    if (reg != HOG_SGD_REG_NONE && !ada) {
        qt_inv = 1.0 / s->pre[t].q;
        ct = s->pre[t].c;
    }
    /* Long rows miss the cache on most weights; prefetching a few entries
     * ahead keeps several misses in flight despite the catch-up's
     * branches and calls. */
    enum { PF = 16 };
    double m = 0.0;
    uint32_t k = 0;
    if (r.nnz > PF)
        for (; k < r.nnz - PF; k++) {
            uint32_t jp = r.idx[k + PF];
            __builtin_prefetch(w_at(s, jp), 1);
            if (stamped)
                __builtin_prefetch(stamp_at(s, jp), 1);
            if (ada)
                __builtin_prefetch(&s->g2[jp], 1);
            m += (double)fetch(s, r.idx[k], t, qt_inv, ct, ada, stamped, l1) *
                 r.val[k];
        }
    for (; k < r.nnz; k++)
        m += (double)fetch(s, r.idx[k], t, qt_inv, ct, ada, stamped, l1) *
             r.val[k];
    const bool has_bias = s->bias != 0.0;
    if (has_bias)
        m += (double)fetch(s, s->n_features, t, qt_inv, ct, ada, stamped,
                           l1) *
             s->bias;
    if (scaled)
        m *= qt_inv;

    double d = hog_loss_deriv(loss, y, m);
    if (d == 0.0)
        return m; /* step t's shrink stays pending (stamps, or q) */
    double eta = 0, shrink = 1, thr = 0;
    if (!ada) {
        eta = s->seg_eta[t];
        shrink = 1.0 - eta * s->l2;
        thr = eta * s->l1;
        if (scaled)
            eta *= s->pre[t + 1].q;
    }
    for (k = 0; k < r.nnz; k++)
        update(s, r.idx[k], t, d * r.val[k], eta, shrink, thr, ada, stamped,
               l1);
    if (has_bias)
        update(s, s->n_features, t, d * s->bias, eta, shrink, thr, ada,
               stamped, l1);
    return m;
}

static ALWAYS_INLINE void run_impl(const struct hog_sgd *s, const hog_data *d,
                                   const uint64_t *order, uint64_t count,
                                   uint32_t t, uint32_t stride, hog_loss loss,
                                   bool ada, enum hog_sgd_reg reg, bool l1)
{
    /* A private copy whose address never escapes: the compiler then knows
     * that the weight stores do not change the array pointers, and keeps
     * them in registers. */
    const struct hog_sgd sc = *s;
    const struct hog_csr m = d->m;
    const double pos = sc.label_pos;
    for (uint64_t i = 0; i < count; i++, t += stride) {
        struct hog_row r = hog_csr_row(&m, order[i]);
        double y = loss == HOG_LOSS_SQUARED ? (double)r.y
                   : (double)r.y == pos     ? 1.0
                                            : -1.0;
        step_impl(&sc, r, y, t, loss, ada, reg, l1);
    }
}

/* One specialised loop per loss and regularization kind:
 * 0 none, 1 scaled (l2), 2 stamped l1, 3 AdaGrad, 4 AdaGrad stamped l2,
 * 5 AdaGrad stamped l1. */
typedef void run_fn(const struct hog_sgd *, const hog_data *,
                    const uint64_t *, uint64_t, uint32_t, uint32_t);

#define RUN_VARIANT(LOSS, K, ADA, REG, L1)                                    \
    static void run_##LOSS##_##K(const struct hog_sgd *s, const hog_data *d,  \
                                 const uint64_t *order, uint64_t count,       \
                                 uint32_t t, uint32_t stride)                 \
    {                                                                         \
        run_impl(s, d, order, count, t, stride, HOG_LOSS_##LOSS, ADA,         \
                 HOG_SGD_REG_##REG, L1);                                      \
    }
#define RUN_VARIANTS(LOSS)                                                    \
    RUN_VARIANT(LOSS, 0, false, NONE, false)                                  \
    RUN_VARIANT(LOSS, 1, false, SCALED, false)                                \
    RUN_VARIANT(LOSS, 2, false, STAMPED, true)                                \
    RUN_VARIANT(LOSS, 3, true, NONE, false)                                   \
    RUN_VARIANT(LOSS, 4, true, STAMPED, false)                                \
    RUN_VARIANT(LOSS, 5, true, STAMPED, true)
RUN_VARIANTS(LOGISTIC)
RUN_VARIANTS(HINGE)
RUN_VARIANTS(SQHINGE)
RUN_VARIANTS(SQUARED)

#define RUN_ROW(LOSS)                                                         \
    { run_##LOSS##_0, run_##LOSS##_1, run_##LOSS##_2,                         \
      run_##LOSS##_3, run_##LOSS##_4, run_##LOSS##_5 }
static run_fn *const run_table[4][6] = {
    [HOG_LOSS_LOGISTIC] = RUN_ROW(LOGISTIC),
    [HOG_LOSS_HINGE] = RUN_ROW(HINGE),
    [HOG_LOSS_SQHINGE] = RUN_ROW(SQHINGE),
    [HOG_LOSS_SQUARED] = RUN_ROW(SQUARED),
};

static int variant(const struct hog_sgd *s)
{
    if (s->schedule == HOG_SCHED_ADAGRAD)
        return s->l1 > 0 ? 5 : s->l2 > 0 ? 4 : 3;
    return (int)s->reg; /* none 0, scaled 1, stamped (l1) 2 */
}

void hog_sgd_run(const struct hog_sgd *s, const hog_data *d,
                 const uint64_t *order, uint64_t count, uint32_t t_first,
                 uint32_t t_stride)
{
    run_table[s->loss][variant(s)](s, d, order, count, t_first, t_stride);
}

double hog_sgd_step(const struct hog_sgd *s, struct hog_row r, double y,
                    uint32_t t)
{
    return step_impl(s, r, y, t, s->loss, s->schedule == HOG_SCHED_ADAGRAD,
                     s->reg, s->l1 > 0);
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
            st(&s->w[j], (float)((double)ld(&s->w[j]) * qinv));
        return;
    }
    bool ada = s->schedule == HOG_SCHED_ADAGRAD, l1 = s->l1 > 0;
    double qt_inv = 0, ct = 0;
    if (!ada) {
        qt_inv = 1.0 / s->pre[len].q;
        ct = s->pre[len].c;
    }
    for (uint64_t j = lo; j < hi; j++) {
        _Atomic float *wp = w_at(s, j);
        _Atomic uint32_t *sp = stamp_at(s, j);
        uint32_t k = ld_u32(sp);
        if (k < len) {
            float v = ld(wp);
            v = ada ? catch_up_adagrad(s, v, j, len - k, l1)
                    : catch_up_prefix(s->pre, v, k, qt_inv, ct);
            st(wp, v);
        }
        st_u32(sp, 0);
    }
}

void hog_sgd_segment_end(struct hog_sgd *s, uint32_t len)
{
    hog_sgd_catch_up_range(s, 0, s->n_weights, len);
}

void hog_sgd_copy_weights(const struct hog_sgd *s, float *out)
{
    for (uint64_t j = 0; j < s->n_weights; j++)
        out[j] = ld(&s->w[j]);
}
