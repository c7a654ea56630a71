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
 *            (the first step whose regularization it lacks); a step reads
 *            the row's weights brought to t with the formula above (for
 *            the margin; nothing is stored), then stores for each of them
 *            the catch-up and the step in one write. A row whose loss has
 *            zero derivative writes nothing: its shrink stays pending in
 *            the stamps (or, scaled, in q).
 *
 * The true weight is w[j] in the none and stamped kinds once caught up,
 * and w[j] / q_t in the scaled kind during a segment; after
 * hog_sgd_segment_end() every kind holds the true weights, which is when
 * Hogwild!'s replicas are averaged and models copied out.
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
 * large; the eager reference in the tests applies the same clamp. With l2
 * only (the default options) the power (1 - a)^k is evaluated four
 * weights at a time, branch-free, as exp(k log(1 - a)) with log(1 - a)
 * from a itself where a is small (1 - a exactly at k = 1); the formulation
 * and its accuracy are above the lanes ("AdaGrad with l2 only").
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
 *
 * Update modes (hog_sgd_run_mode; the baselines Hogwild! is measured
 * against): none stores relaxed; atomic installs each weight by a
 * compare-and-swap on the value it was computed from (on the stored, scaled
 * value in the scaled kind: every thread shares q_t, so that is exact);
 * striped and mutex hold locks around the row. All kinds run in all modes,
 * and with one thread every mode is the serial run bit for bit.
 *
 * Cyclades (hog_sgd_split_step, hog_sgd_apply_many): the same row step with
 * an extra margin term from weights the caller steps itself, read in place
 * in stored units (the kernel divides them by q_t with the rest of the
 * margin), and single-weight steps at a given t. With no extra term it is
 * the row step bit for bit.
 *
 * Row weights (docs/TRAINING.md, "Weights"). The objective's loss term
 * becomes (1/n) sum_i v_i loss(y_i, w.x_i), so a step on row i uses
 * d = v_i loss'(y_i, m): the one change is where d is made (row_deriv),
 * in kernels of their own (spec.weighted; the loss at run time there),
 * and AdaGrad's sums take the weighted gradients (v_i d x_j)^2. The
 * unweighted kernels are the ones that ran before weights existed.
 */
#include "core/sgd.h"

#include "core/cross.h"
#include "core/fit.h"

#include "core/loss.h"
#include "core/spin.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALWAYS_INLINE inline __attribute__((always_inline))

hog_status hog_sgd_init_schedule(struct hog_sgd *s, const hog_train_opts *o,
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
    bool ftrl = s->schedule == HOG_SCHED_FTRL; /* closed form: no lazy state */
    s->reg = ftrl ? HOG_SGD_REG_NONE
             : s->l1 > 0 || (ada && s->l2 > 0) ? HOG_SGD_REG_STAMPED
             : s->l2 > 0                       ? HOG_SGD_REG_SCALED
                                               : HOG_SGD_REG_NONE;
    s->seg_cap = s->rows < HOG_SGD_SEG_MAX ? (uint32_t)s->rows
                                           : HOG_SGD_SEG_MAX;
    if (ada || ftrl)
        s->seg_cap = UINT32_MAX - 1;

    bool ok = true;
    if (!ada && !ftrl) {
        ok = (s->seg_eta = malloc(s->seg_cap * sizeof *s->seg_eta)) != NULL;
        if (ok && s->reg != HOG_SGD_REG_NONE)
            ok = (s->pre = malloc(((size_t)s->seg_cap + 1) *
                                  sizeof *s->pre)) != NULL;
    }
    if (!ok) {
        hog_sgd_free(s);
        return hog_errf(err, HOG_ENOMEM, "out of memory for the step sizes "
                        "of a segment of %u steps", s->seg_cap);
    }
    return HOG_OK;
}

hog_status hog_sgd_init_unplaced(struct hog_sgd *s, const hog_train_opts *o,
                                 const hog_data *train, hog_err *err)
{
    hog_status st = hog_sgd_init_schedule(s, o, train, err);
    if (st != HOG_OK)
        return st;
    bool ada = s->schedule == HOG_SCHED_ADAGRAD;
    size_t nw = s->n_weights ? s->n_weights : 1;
    if (s->schedule == HOG_SCHED_FTRL) { /* (z, r) = (0, 0): weights 0 */
        if ((s->zn = calloc(nw, sizeof *s->zn)) != NULL)
            return HOG_OK;
        return hog_errf(err, HOG_ENOMEM,
                        "out of memory for the FTRL state of %llu weights",
                        (unsigned long long)nw);
    }
    bool ok = (s->w = calloc(nw, sizeof *s->w)) != NULL;
    if (ok && s->reg == HOG_SGD_REG_STAMPED)
        ok = (s->stamp = calloc(nw, sizeof *s->stamp)) != NULL;
    if (ok && ada)
        ok = (s->g2 = calloc(nw, sizeof *s->g2)) != NULL;
    if (!ok) {
        hog_sgd_free(s);
        return hog_errf(err, HOG_ENOMEM,
                        "out of memory for the SGD state of %llu weights",
                        (unsigned long long)nw);
    }
    return HOG_OK;
}

void hog_sgd_populate(struct hog_sgd *s)
{
    size_t nw = s->n_weights;
    if (s->zn)
        hog_populate(s->zn, nw * sizeof *s->zn, true);
    if (s->w)
        hog_populate(s->w, nw * sizeof *s->w, true);
    if (s->stamp)
        hog_populate(s->stamp, nw * sizeof *s->stamp, true);
    if (s->g2)
        hog_populate(s->g2, nw * sizeof *s->g2, true);
}

hog_status hog_sgd_init(struct hog_sgd *s, const hog_train_opts *o,
                        const hog_data *train, hog_err *err)
{
    hog_status st = hog_sgd_init_unplaced(s, o, train, err);
    if (st == HOG_OK)
        hog_sgd_populate(s);
    return st;
}

void hog_sgd_free(struct hog_sgd *s)
{
    free(s->w);
    free(s->g2);
    free(s->stamp);
    free(s->pre);
    free(s->seg_eta);
    free(s->zn);
    free(s->zk);
    s->zn = NULL;
    s->zk = NULL;
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
    if (s->schedule == HOG_SCHED_ADAGRAD || s->schedule == HOG_SCHED_FTRL)
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
    return hog_sgd_soft_threshold(u, b);
}

/* Stamped weight v of stamp k brought to step t (shared schedules, l1 > 0);
 * qt_inv and ct are 1/q_t and c_t. */
static ALWAYS_INLINE float catch_up_prefix(const struct hog_sgd_prefix *pre,
                                           float v, uint32_t k, double qt_inv,
                                           double ct)
{
    return hog_sgd_prefix_catch_up(pre[k], v, qt_inv, ct);
}

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

double hog_sgd_adagrad_decay(double a, uint32_t k, double *q)
{
    return ada_decay(a, k, q);
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

/* The same, reading coordinate j's accumulator. */
static ALWAYS_INLINE float catch_up_adagrad(const struct hog_sgd *s, float v,
                                            uint64_t j, uint32_t k, bool l1)
{
    return catch_up_adagrad_g2(s, v, ld(&s->g2[j]), k, l1);
}

/* ---- the row step ----------------------------------------------------------- */

/* What one specialised kernel is. The generated functions below pass
 * constants, so every test on these members folds away and each function
 * is the straight-line code of its kind; hog_sgd_step() passes the same
 * values at run time through the same code. */
struct spec {
    hog_loss loss;
    bool ada;             /* AdaGrad's per-coordinate rates */
    enum hog_sgd_reg reg; /* how the weights are kept (sgd.h) */
    bool l1;              /* stamped: soft threshold after the shrink */
    bool cas;             /* install each weight by compare-and-swap */
    bool weighted;        /* the row's loss derivative times its weight */
    bool crossed;         /* rows expanded with their interactions
                             (core/cross.h); weighted too, row_w maybe NULL */
    bool ftrl;            /* FTRL-Proximal's (z, r) in place of w, g2 */
};

/* Step t's scalars, shared by all of a row's weights. Shared schedules
 * with a regularizer: qt_inv = 1/q_t and ct = c_t (the stamped catch-up,
 * the scaled margin). For the writes, shared schedules: eta = eta_t,
 * shrink = 1 - eta l2 and thr = eta l1 (scaled: eta already times
 * q_{t+1}, shrink unused); AdaGrad computes them per coordinate. */
struct step {
    uint32_t t;
    double eta, shrink, thr;
    double qt_inv, ct;
};

/* Step t's scalars for the margin pass. */
static ALWAYS_INLINE struct step step_at(const struct hog_sgd *s, uint32_t t,
                                         struct spec spec)
{
    struct step p = { .t = t, .eta = 0, .shrink = 1, .thr = 0 };
    if (spec.reg != HOG_SGD_REG_NONE && !spec.ada) {
        p.qt_inv = 1.0 / s->pre[t].q;
        p.ct = s->pre[t].c;
    }
    return p;
}

/* ... and for the writes, computed only when there are some. */
static ALWAYS_INLINE struct step step_rates(const struct hog_sgd *s,
                                            struct step p, struct spec spec)
{
    if (!spec.ada) {
        p.eta = s->seg_eta[p.t];
        p.shrink = 1.0 - p.eta * s->l2;
        p.thr = p.eta * s->l1;
        if (spec.reg == HOG_SGD_REG_SCALED)
            p.eta *= s->pre[p.t + 1].q;
    }
    return p;
}

/* The atomic mode installs each new weight with a compare-and-swap on the
 * value it was computed from and recomputes on failure, so no racing update
 * is lost; the other modes store (relaxed) and accept the loss (none) or
 * exclude racers by locks (striped, mutex). The value computed is the same
 * expression either way: one thread gets bit-identical weights in every
 * mode. A CAS on a scaled weight (l2 only: w[j] = w_j q_t) is as good as on
 * a plain one: the representation is shared by all threads, and the value
 * installed was computed from the value compared. */
static ALWAYS_INLINE bool w_install(_Atomic float *wp, float *old, float v,
                                    bool cas)
{
    if (!cas) {
        st(wp, v);
        return true;
    }
    return atomic_compare_exchange_weak_explicit(wp, old, v,
                                                 memory_order_relaxed,
                                                 memory_order_relaxed);
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

double hog_sgd_shrink_exact(double a, uint32_t k)
{
    return shrink_pow(a, k);
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
    float v = ld(wp);
    for (;;) {
        uint32_t k = ld_u32(&s->stamp[j]);
        float g[ADA_W] = { ld(&s->g2[j]) }, nv[ADA_W], g2n[ADA_W];
        uint32_t kk[ADA_W] = { k, t, t, t }, kn[ADA_W];
        double c[ADA_W] = { ada_catch_up1(s, t, v, g[0], k) };
        double gg[ADA_W] = { gj }, qq[ADA_W] = { sq };
        ada_step4(s, t, g, kk, c, ada_vec_f64(gg), qq, nv, g2n, kn);
        if (w_install(wp, &v, nv[0], cas)) {
            st(&s->g2[j], g2n[0]);
            if (k <= t)
                st_u32(&s->stamp[j], t + 1);
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
        v[q] = ld(&s->w[j[q]]);
        k[q] = ld_u32(&s->stamp[j[q]]);
        g2[q] = ld(&s->g2[j[q]]);
    }
    (void)ada_catch_up4(s, t, v, g2, k, c, ada_acc_zero(), ada_acc_zero());
    ada_step4(s, t, g2, k, c, ada_vec_f64(g), sq, nv, g2n, kn);
#pragma GCC unroll 4
    for (uint32_t q = 0; q < ADA_W; q++) {
        st(&s->w[j[q]], nv[q]);
        st(&s->g2[j[q]], g2n[q]);
        st_u32(&s->stamp[j[q]], kn[q]);
    }
}

/* Stamped weight v of coordinate j with stamp k < t brought to step t;
 * g2 is AdaGrad's accumulator over the untouched steps. */
static ALWAYS_INLINE float catch_up(const struct hog_sgd *s, float v,
                                    float g2, uint32_t k, struct step p,
                                    struct spec spec)
{
    return spec.ada ? catch_up_adagrad_g2(s, v, g2, p.t - k, spec.l1)
                    : catch_up_prefix(s->pre, v, k, p.qt_inv, p.ct);
}

/* What pass 1 saw of a stamped weight: the stored value v with stamp k,
 * and c, v brought to step t. Pass 2 reuses c when the weight still holds
 * v and k (always with one thread; another thread's write in between makes
 * it recompute), so AdaGrad's catch-up (a log and an exp) runs once. */
struct seen {
    float v, c;
    uint32_t k;
};
/* Rows up to this long keep pass 1's catch-ups on the stack; the entries
 * past it are caught up again in pass 2. */
#define SEEN_MAX 256

/* Pass 1 for one coordinate: w[j] as of step t (stamped), or as stored
 * (scaled: w_j q_t). Nothing is stored in shared memory: the catch-up goes
 * to update() through *sn (when not NULL) and stays pending in the stamp
 * when the row has no gradient (the margin pass writes no shared cache
 * line). */
static ALWAYS_INLINE float fetch(const struct hog_sgd *s, uint64_t j,
                                 struct step p, struct spec spec,
                                 struct seen *sn)
{
    float v = ld(w_at(s, j));
    if (spec.reg != HOG_SGD_REG_STAMPED)
        return v;
    uint32_t k = ld_u32(stamp_at(s, j));
    float c = k >= p.t ? v
                       : catch_up(s, v, spec.ada ? ld(&s->g2[j]) : 0.0f, k,
                                  p, spec);
    if (sn)
        *sn = (struct seen){ v, c, k };
    return c;
}

/* Pass 2 for one coordinate: step p.t with loss gradient gj = d x_j and
 * AdaGrad increment sq. Stamped: the catch-up, shrink, step and threshold
 * in one store. */
static ALWAYS_INLINE void update_sq(const struct hog_sgd *s, uint64_t j,
                                    double gj, double sq, struct step p,
                                    struct spec spec, const struct seen *sn)
{
    const bool stamped = spec.reg == HOG_SGD_REG_STAMPED;
    const uint32_t t = p.t;
    if (spec.ada && stamped && !spec.l1) {
        const struct ada_ctx c = ada_ctx_of(s);
        ada_l2_update1(&c, j, gj, sq, t, spec.cas);
        return;
    }
    _Atomic float *wp = w_at(s, j);
    float v = ld(wp);
    uint32_t k = stamped ? ld_u32(stamp_at(s, j)) : 0;
    /* the catch-up uses the accumulator of the untouched steps */
    float g2_old = spec.ada ? ld(&s->g2[j]) : 0.0f;
    double eta = p.eta, shrink = p.shrink, thr = p.thr;
    if (spec.ada) {
        float g2 = (float)((double)g2_old + sq);
        st(&s->g2[j], g2);
        eta = adagrad_eta(s, g2);
        double a = eta * s->l2;
        shrink = 1.0 - (a < 1.0 ? a : 1.0);
        thr = eta * s->l1;
    }
    for (;;) {
        /* k > t: a thread further ahead regularized this weight past step
         * t; the gradient alone. */
        bool regstep = stamped && k <= t;
        float nv;
        if (regstep) {
            float c = k == t ? v
                      : sn && sn->k == k && memcmp(&sn->v, &v, sizeof v) == 0
                          ? sn->c /* pass 1's, from the same v and k */
                          : catch_up(s, v, g2_old, k, p, spec);
            double u = shrink * (double)c - eta * gj;
            nv = spec.l1 ? soft_threshold(u, thr) : (float)u;
        } else {
            nv = (float)((double)v - eta * gj);
        }
        if (w_install(wp, &v, nv, spec.cas)) {
            if (regstep)
                st_u32(stamp_at(s, j), t + 1);
            return;
        }
        /* CAS lost to another thread: v is now its value; and its stamp */
        if (stamped)
            k = ld_u32(stamp_at(s, j));
    }
}

/* The step of one row's weight: AdaGrad's accumulator takes gj^2. */
static ALWAYS_INLINE void update(const struct hog_sgd *s, uint64_t j,
                                 double gj, struct step p, struct spec spec,
                                 const struct seen *sn)
{
    update_sq(s, j, gj, gj * gj, p, spec, sn);
}

/* ---- the row step of AdaGrad with l2 only ---------------------------------- */

/* The passes are functions of their own: inlined into the run loops they
 * would compete with the loops' state for the 16 vector registers. */
#define NOINLINE __attribute__((noinline))

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
    b->v[i] = ld(&s->w[j]);
    b->k[i] = ld_u32(&s->stamp[j]);
    b->g[i] = ld(&s->g2[j]);
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
        float v = ld(&s->w[idx[q]]);
        same &= ld_u32(&s->stamp[idx[q]]) == b->k[i + q] &&
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
    float v = ld(wp);
    uint32_t k = ld_u32(&s->stamp[j]);
    if (k == b->k[i] && memcmp(&v, &b->v[i], sizeof v) == 0 &&
        w_install(wp, &v, nv, cas)) {
        st(&s->g2[j], g2n);
        if (k <= t)
            st_u32(&s->stamp[j], t + 1);
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
                st(&s->w[j], nv[q]);
                st(&s->g2[j], g2n[q]);
                st_u32(&s->stamp[j], kn[q]);
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

/* THE one place a row's loss derivative is made, for every kind: d =
 * loss'(y, m), times the row's weight rw in the weighted kinds (the
 * gradient of rw loss; sgd.h). *dout gets d before the weight (Cyclades
 * weighs its hot gradients and curvatures itself). The unweighted kinds
 * never read rw, so their arithmetic is what it was, and a weight of 1
 * changes no bit (d * 1 is d). A zero result writes nothing. */
static ALWAYS_INLINE double row_deriv(struct spec spec, double y, double m,
                                      double rw, double *dout)
{
    double d = hog_loss_deriv(spec.loss, y, m);
    *dout = d;
    if (spec.weighted)
        d *= rw;
    return d;
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

/* ---- FTRL-Proximal: l1 and l2 in closed form, no catch-up ------------------
 *
 * --schedule ftrl (McMahan et al., "Ad Click Prediction: a View from the
 * Trenches", KDD 2013, algorithm 1). Per coordinate it keeps z_j =
 * sum_s (g_s - sigma_s w_s) and the root r_j = sqrt(n_j) of the sum n_j
 * of squared loss gradients, where sigma_s = (r_j after s - r_j before s)
 * / eta; after T steps the weight is the minimiser of
 *
 *     z_j w + (beta + r_j) / (2 eta) w^2 + T l2 / 2 w^2 + T l1 |w|,
 *
 *     w_j = -(z_j - sign(z_j) T l1) / ((beta + r_j) / eta + T l2)
 *           where |z_j| > T l1, else 0.
 *
 * T l2 and T l1 are the regularizers of all T steps, the same per-step
 * l2 / 2 |w|^2 + l1 |w|_1 that the other schedules apply, summed as the
 * losses are (FTRL with the regularization kept out of the linearisation:
 * McMahan, AISTATS 2011). Without l1 and l2 this is AdaGrad's update with
 * the rate eta / (beta + r_j); with them nothing is lazy: a coordinate
 * that a row does not touch has no state to bring up to date, its weight
 * follows from (z_j, r_j) and T whenever it is read. So a row costs one
 * 8-byte load per entry in the margin pass (z_j and r_j share a word: one
 * cache line), a division in lanes, a square root in lanes in the update
 * pass and one 8-byte store per entry; no timestamps, no segments'
 * prefixes, no exp or log. Keeping r_j rather than n_j saves the margin
 * pass its square root (n_j = r_j^2 in the update, float rounding either
 * way). Arithmetic is float, as the weights are; the margin is summed in
 * double. A row's weights are computed for step t, with T = the steps
 * before it (t's global number); the model after a segment is computed
 * for T = the segment's end (hog_sgd_copy_weights).
 *
 * Hogwild!: the word is loaded and stored whole (relaxed), so a racing
 * update is lost but never torn; the atomic mode installs it by a
 * compare-and-swap on the word pass 1 read and recomputes the coordinate
 * from the value found on failure, as the other kinds do. */

/* Coordinate j's word as two floats: c[0] = z_j, c[1] = r_j. */
static ALWAYS_INLINE void ftrl_unpack(uint64_t b, float c[2])
{
    memcpy(c, &b, sizeof b);
}

static ALWAYS_INLINE uint64_t ftrl_pack(const float c[2])
{
    uint64_t b;
    memcpy(&b, c, sizeof b);
    return b;
}

static inline uint64_t ftrl_ld(_Atomic uint64_t *p)
{
    return atomic_load_explicit(p, memory_order_relaxed);
}

static inline void ftrl_st(_Atomic uint64_t *p, uint64_t v)
{
    atomic_store_explicit(p, v, memory_order_relaxed);
}

/* Step T's constants: T l1, T l2, 1 / eta and beta / eta. */
struct ftrl_lam {
    float l1, l2, ia, b_ia;
};

static ALWAYS_INLINE struct ftrl_lam ftrl_lam_at(const struct hog_sgd *s,
                                                 uint64_t t)
{
    return (struct ftrl_lam){ .l1 = (float)((double)t * s->l1),
                              .l2 = (float)((double)t * s->l2),
                              .ia = (float)(1.0 / s->eta),
                              .b_ia = (float)(HOG_FTRL_BETA / s->eta) };
}

/* The z that gives weight w at step constants L with r = 0 (a warm
 * start's weights put in). */
static ALWAYS_INLINE float ftrl_z_of(float w, struct ftrl_lam L)
{
    return w == 0 ? 0.0f : -(w * (L.b_ia + L.l2) + copysignf(L.l1, w));
}

/* The closed form above. No branch: a loop of it runs in vector lanes
 * (the denominator is positive, so every lane's division is defined). */
static ALWAYS_INLINE float ftrl_weight(float z, float r, struct ftrl_lam L)
{
    float u = fabsf(z) - L.l1;
    u = u > 0.0f ? u : 0.0f;
    /* + 0: the dead zone's -0 made +0 */
    return -copysignf(u, z) / (r * L.ia + L.b_ia + L.l2) + 0.0f;
}

/* One coordinate's step from (z, r) = c with weight w, loss gradient g and
 * increment g2 (g^2, or Cyclades' sum of squares) into out. */
static ALWAYS_INLINE void ftrl_next(const float c[2], float w, float g,
                                    float g2, float ia, float out[2])
{
    float r = sqrtf(c[1] * c[1] + g2);
    out[0] = c[0] + g - (r - c[1]) * ia * w;
    out[1] = r;
}

/* Coordinate j alone at step constants L (a weight another thread changed
 * between the passes, in the atomic mode; hog_sgd_apply). */
static ALWAYS_INLINE void ftrl_update1(const struct hog_sgd *s, uint64_t j,
                                       double g, double g2,
                                       struct ftrl_lam L, bool cas)
{
    _Atomic uint64_t *p = &s->zn[j];
    uint64_t old = ftrl_ld(p);
    for (;;) {
        float c[2], nc[2];
        ftrl_unpack(old, c);
        ftrl_next(c, ftrl_weight(c[0], c[1], L), (float)g, (float)g2, L.ia,
                  nc);
        if (!cas) {
            ftrl_st(p, ftrl_pack(nc));
            return;
        }
        if (atomic_compare_exchange_weak_explicit(p, &old, ftrl_pack(nc),
                                                  memory_order_relaxed,
                                                  memory_order_relaxed))
            return;
    }
}

/* Entries of a row kept from pass 1 for pass 2; a longer row's earlier
 * blocks are read again in pass 2 (the same values where nothing changed).
 * 2048 rather than 512: news20.binary has 43% of its nonzeros in rows
 * longer than 512 entries and 10% in rows longer than 2048; its epoch
 * took 17.0 ms against 19.4 (median of 10 interleaved runs, 1 thread). */
#define FTRL_BLOCK 2048

/* One block as pass 1 read it (the words as (z, r) pairs, x) and the
 * weights it computed, pass 2's new words, with room for the bias: 48 KiB
 * of stack. */
struct ftrl_block {
    uint32_t len;
    float c[2 * (FTRL_BLOCK + 1)], nc[2 * (FTRL_BLOCK + 1)];
    float w[FTRL_BLOCK + 1], x[FTRL_BLOCK + 1];
};

/* Pass 1 of entries [lo, hi) and, if bias, the bias weight: their words
 * into b, their weights at L; returns their sum w x. */
static NOINLINE double ftrl_gather(const struct hog_sgd *s, struct hog_row r,
                                   uint32_t lo, uint32_t hi, bool bias,
                                   struct ftrl_lam L, struct ftrl_block *b,
                                   bool pf_write)
{
    enum { PF = 16 };
    _Atomic uint64_t *const zn = s->zn;
    uint32_t e = lo, n = 0;
#if defined(__AVX2__) && defined(__FMA__)
    /* Four words a gather, without prefetches: the gathers keep as many
     * loads in flight as the prefetches did and take a quarter of the
     * instructions (news20.binary, 1 thread: the epoch 17% shorter; on
     * 20 M features, where the loads go to memory, the same time). Each
     * lane is an aligned 8-byte load, whole as ftrl_ld()'s. */
    for (; e + 4 <= hi; e += 4, n += 4) {
        __m256i j = _mm256_cvtepu32_epi64(
            _mm_loadu_si128((const __m128i *)&r.idx[e]));
        _mm256_storeu_si256((__m256i *)&b->c[2 * n],
                            _mm256_i64gather_epi64((const long long *)zn, j,
                                                   8));
        _mm_storeu_ps(&b->x[n], _mm_loadu_ps(&r.val[e]));
    }
#endif
    for (; e < hi; e++, n++) {
        if (e + PF < r.nnz) {
            if (pf_write)
                __builtin_prefetch(&zn[r.idx[e + PF]], 1);
            else
                __builtin_prefetch(&zn[r.idx[e + PF]], 0);
        }
        ftrl_unpack(ftrl_ld(&zn[r.idx[e]]), &b->c[2 * n]);
        b->x[n] = r.val[e];
    }
    if (bias) {
        ftrl_unpack(ftrl_ld(&zn[s->n_features]), &b->c[2 * n]);
        b->x[n] = (float)s->bias;
        n++;
    }
    b->len = n;
    const float *restrict c = b->c;
    float *restrict w = b->w;
    for (size_t i = 0; i < n; i++)
        w[i] = ftrl_weight(c[2 * i], c[2 * i + 1], L);
    double a[4] = { 0, 0, 0, 0 };
    uint32_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (uint32_t q = 0; q < 4; q++)
            a[q] += (double)b->w[i + q] * (double)b->x[i + q];
    for (; i < n; i++)
        a[0] += (double)b->w[i] * (double)b->x[i];
    return (a[0] + a[1]) + (a[2] + a[3]);
}

/* Pass 2 of the entries ftrl_gather() put in b (entries [lo, hi), then
 * the bias weight if b holds one more): the step with loss derivative d
 * in lanes, then one store (or compare-and-swap) per word. */
static NOINLINE void ftrl_apply(const struct hog_sgd *s, struct hog_row r,
                                uint32_t lo, uint32_t hi, double d,
                                struct ftrl_lam L, struct ftrl_block *b,
                                bool cas)
{
    const uint32_t n = b->len;
    const float df = (float)d;
    const float *restrict c = b->c, *restrict w = b->w, *restrict x = b->x;
    float *restrict nc = b->nc;
    for (size_t i = 0; i < n; i++) {
        float g = df * x[i];
        ftrl_next(&c[2 * i], w[i], g, g * g, L.ia, &nc[2 * i]);
    }
    _Atomic uint64_t *const zn = s->zn;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t j = lo + i < hi ? r.idx[lo + i] : s->n_features;
        uint64_t nb = ftrl_pack(&nc[2 * i]);
        if (!cas) {
            ftrl_st(&zn[j], nb);
            continue;
        }
        uint64_t old = ftrl_pack(&c[2 * i]);
        if (!atomic_compare_exchange_strong_explicit(&zn[j], &old, nb,
                                                     memory_order_relaxed,
                                                     memory_order_relaxed)) {
            float g = df * x[i];
            ftrl_update1(s, j, g, (double)g * g, L, true);
        }
    }
}

/* step_impl() for FTRL-Proximal (the same contract), in blocks of
 * FTRL_BLOCK as step_ada_l2(). */
static ALWAYS_INLINE double step_ftrl(const struct hog_sgd *s,
                                      struct hog_row r, double y, double rw,
                                      uint32_t t, double m_extra,
                                      bool with_bias, double *dout,
                                      struct spec spec)
{
    const struct ftrl_lam L = ftrl_lam_at(s, s->seg_t0 + t);
    const bool pf_write = spec.loss == HOG_LOSS_LOGISTIC ||
                          spec.loss == HOG_LOSS_SQUARED;
    const bool has_bias = with_bias && s->bias != 0.0;
    const uint32_t last = r.nnz ? (r.nnz - 1) / FTRL_BLOCK * FTRL_BLOCK : 0;
    struct ftrl_block b;
    double m = m_extra;
    for (uint32_t lo = 0; lo < last; lo += FTRL_BLOCK)
        m += ftrl_gather(s, r, lo, lo + FTRL_BLOCK, false, L, &b, pf_write);
    m += ftrl_gather(s, r, last, r.nnz, has_bias, L, &b, pf_write);
    double d = row_deriv(spec, y, m, rw, dout);
    if (d == 0.0)
        return m;
    ftrl_apply(s, r, last, r.nnz, d, L, &b, spec.cas);
    for (uint32_t lo = 0; lo < last; lo += FTRL_BLOCK) {
        (void)ftrl_gather(s, r, lo, lo + FTRL_BLOCK, false, L, &b, pf_write);
        ftrl_apply(s, r, lo, lo + FTRL_BLOCK, d, L, &b, spec.cas);
    }
    return m;
}

/* ---- one-vs-rest's classes in one pass (FTRL-Proximal) ---------------------
 *
 * One-vs-rest's serial runs step k binary problems on the same rows in the
 * same order (every class shuffles with the seed's stream 0), so they share
 * everything but their weights, and one pass over a row can step them all:
 * the row's indices and values are read once, and a feature's k words lie
 * side by side (s->zk: weight j's k z, then its k r, from a cache line's
 * start), so that an entry touches k / 8 lines instead of k and the
 * classes fill the vector lanes. Every class's arithmetic is
 * step_ftrl()'s for that class, operation for operation (the build does
 * not contract a * b + c, so lanes and scalars round alike): the same
 * closed form and step in float, the margin summed in double over blocks
 * of FTRL_BLOCK entries, each in the same four partial sums, the bias
 * last. So class c's weights are its own run's bit for bit
 * (tests/test_multiclass.c). A class whose loss derivative is 0 keeps its
 * words by a select, not by stepping with g = 0 (sqrt(r^2) need not give
 * r back). The row's indices are distinct (the loaders check it), so
 * pass 2 may recompute pass 1's weights. */

/* A weight's classes take wide_lanes() floats of z, then as many of r: k
 * rounded up to 8, so that each weight starts a cache line (zk is
 * line-aligned) and the loops over the classes run in whole vectors; the
 * unused lanes stay (0, 0), weight 0, and never step. */
static ALWAYS_INLINE uint32_t wide_lanes(const struct hog_sgd *s)
{
    return (s->wide + 7) / 8 * 8;
}

/* Weight j's z (its r follow at + wide_lanes()). */
static ALWAYS_INLINE float *wide_at(const struct hog_sgd *s, uint64_t j)
{
    return s->zk + (size_t)j * 2 * wide_lanes(s);
}

hog_status hog_sgd_init_wide(struct hog_sgd *s, const hog_train_opts *o,
                             const hog_data *train, uint32_t k,
                             const double *pos, hog_err *err)
{
    if (o->schedule != HOG_SCHED_FTRL || k < 1 || k > HOG_SGD_WIDE_MAX)
        return hog_errf(err, HOG_EINVAL, "classes stepped together: "
                        "FTRL-Proximal and 1 to %d classes only, not %u",
                        HOG_SGD_WIDE_MAX, k);
    hog_status st = hog_sgd_init_schedule(s, o, train, err);
    if (st != HOG_OK)
        return st;
    s->wide = k;
    s->wide_pos = pos;
    size_t nw = s->n_weights ? s->n_weights : 1;
    size_t per = 2 * (size_t)wide_lanes(s) * sizeof *s->zk;
    if (nw <= SIZE_MAX / per &&
        (s->zk = aligned_alloc(HOG_CACHELINE, nw * per)) != NULL) {
        memset(s->zk, 0, nw * per);
        return HOG_OK;
    }
    hog_sgd_free(s);
    return hog_errf(err, HOG_ENOMEM, "out of memory for the FTRL state of "
                    "%u classes of %llu weights", k, (unsigned long long)nw);
}

/* Entry e of a block ending at hi, or the bias weight (e = hi). */
static ALWAYS_INLINE uint64_t wide_j(const struct hog_sgd *s, struct hog_row r,
                                     uint32_t e, uint32_t hi)
{
    return e < hi ? r.idx[e] : s->n_features;
}

static ALWAYS_INLINE float wide_x(const struct hog_sgd *s, struct hog_row r,
                                  uint32_t e, uint32_t hi)
{
    return e < hi ? r.val[e] : (float)s->bias;
}

/* Pass 1 of block [lo, hi) (and the bias weight if bias): adds each
 * class's block sum to m[c], in ftrl_gather()'s four partial sums. */
static ALWAYS_INLINE void wide_margins(const struct hog_sgd *s,
                                       struct hog_row r, uint32_t lo,
                                       uint32_t hi, bool bias,
                                       struct ftrl_lam L, double *m)
{
    enum { PF = 8 };
    const uint32_t KL = wide_lanes(s), n = hi - lo + bias, n4 = n / 4 * 4;
    double a[4][HOG_SGD_WIDE_MAX];
    for (uint32_t q = 0; q < 4; q++)
        for (uint32_t c = 0; c < KL; c++)
            a[q][c] = 0.0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t e = lo + i;
        if (e + PF < hi)
            for (uint32_t c = 0; c < 2 * KL; c += 16)
                __builtin_prefetch(wide_at(s, r.idx[e + PF]) + c, 1);
        const float *restrict z = wide_at(s, wide_j(s, r, e, hi));
        const float *restrict rt = z + KL;
        const double x = (double)wide_x(s, r, e, hi);
        double *restrict aq = a[i < n4 ? (i & 3) : 0];
        for (uint32_t c = 0; c < KL; c++)
            aq[c] += (double)ftrl_weight(z[c], rt[c], L) * x;
    }
    for (uint32_t c = 0; c < KL; c++)
        m[c] += (a[0][c] + a[1][c]) + (a[2][c] + a[3][c]);
}

/* Pass 2 of block [lo, hi) (and the bias weight if bias): the classes with
 * on[c] step with derivative df[c], as ftrl_apply() steps one class. */
static ALWAYS_INLINE void wide_steps(const struct hog_sgd *s,
                                     struct hog_row r, uint32_t lo,
                                     uint32_t hi, bool bias,
                                     struct ftrl_lam L, const float *df,
                                     const int32_t *on)
{
    const uint32_t KL = wide_lanes(s), n = hi - lo + bias;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t e = lo + i;
        float *restrict z = wide_at(s, wide_j(s, r, e, hi));
        float *restrict rt = z + KL;
        const float x = wide_x(s, r, e, hi);
        for (uint32_t c = 0; c < KL; c++) {
            float zc = z[c], rc = rt[c];
            float g = df[c] * x, nc[2];
            ftrl_next((const float[2]){ zc, rc }, ftrl_weight(zc, rc, L), g,
                      g * g, L.ia, nc);
            z[c] = on[c] ? nc[0] : zc;
            rt[c] = on[c] ? nc[1] : rc;
        }
    }
}

/* One row, every class: step_ftrl()'s blocks, margins, derivatives and
 * steps, with the loss a constant of the caller's. */
static ALWAYS_INLINE void wide_row(const struct hog_sgd *s, struct hog_row r,
                                   double rw, uint32_t t, hog_loss loss)
{
    const uint32_t K = s->wide;
    const struct ftrl_lam L = ftrl_lam_at(s, s->seg_t0 + t);
    const bool has_bias = s->bias != 0.0;
    const uint32_t last = r.nnz ? (r.nnz - 1) / FTRL_BLOCK * FTRL_BLOCK : 0;
    enum { W = HOG_SGD_WIDE_MAX };
    double m[W];
    for (uint32_t c = 0; c < W; c++)
        m[c] = 0.0;
    for (uint32_t lo = 0;; lo += FTRL_BLOCK) {
        bool end = lo == last;
        wide_margins(s, r, lo, end ? r.nnz : lo + FTRL_BLOCK, end && has_bias,
                     L, m);
        if (end)
            break;
    }
    float df[W] = { 0 };
    int32_t on[W] = { 0 };
    bool any = false;
    for (uint32_t c = 0; c < K; c++) {
        /* row_deriv()'s weighted d (d * 1 is d: no weights, no change) */
        double d = hog_loss_deriv(loss, hog_loss_target(loss, s->wide_pos[c],
                                                        r.y), m[c]) * rw;
        on[c] = d != 0.0;
        any |= d != 0.0;
        df[c] = (float)d;
    }
    if (!any)
        return;
    for (uint32_t lo = 0;; lo += FTRL_BLOCK) {
        bool end = lo == last;
        wide_steps(s, r, lo, end ? r.nnz : lo + FTRL_BLOCK, end && has_bias,
                   L, df, on);
        if (end)
            break;
    }
}

static ALWAYS_INLINE void run_wide(const struct hog_sgd *s, const hog_data *d,
                                   const uint64_t *order, uint64_t count,
                                   uint32_t t, hog_loss loss)
{
    const struct hog_csr m = d->m;
    const float *const rw = d->row_w;
    for (uint64_t i = 0; i < count; i++, t++) {
        if (HOG_LIKELY(i + 1 < count)) {
            uint64_t nx = m.off[order[i + 1]];
            __builtin_prefetch(m.idx + nx);
            __builtin_prefetch(m.val + nx);
            __builtin_prefetch(&m.y[order[i + 1]]);
        }
        wide_row(s, hog_csr_row(&m, order[i]),
                 rw ? (double)rw[order[i]] : 1.0, t, loss);
    }
}

void hog_sgd_run_wide(const struct hog_sgd *s, const hog_data *d,
                      const uint64_t *order, uint64_t count, uint32_t t_first)
{
    switch (s->loss) { /* the loss a constant in each loop */
    case HOG_LOSS_LOGISTIC:
        run_wide(s, d, order, count, t_first, HOG_LOSS_LOGISTIC);
        break;
    case HOG_LOSS_HINGE:
        run_wide(s, d, order, count, t_first, HOG_LOSS_HINGE);
        break;
    default:
        run_wide(s, d, order, count, t_first, s->loss);
        break;
    }
}

void hog_sgd_set_weights_wide(struct hog_sgd *s, const float *in,
                              uint64_t stride)
{
    const uint32_t K = s->wide, KL = wide_lanes(s);
    const struct ftrl_lam L = ftrl_lam_at(s, s->seg_t0 + s->seg_len);
    for (uint64_t j = 0; j < s->n_weights; j++) {
        float *z = wide_at(s, j);
        for (uint32_t c = 0; c < K; c++) {
            z[c] = ftrl_z_of(in[c * stride + j], L);
            z[KL + c] = 0.0f;
        }
    }
}

void hog_sgd_copy_weights_wide(const struct hog_sgd *s, float *out,
                               uint64_t stride)
{
    const uint32_t K = s->wide, KL = wide_lanes(s);
    const struct ftrl_lam L = ftrl_lam_at(s, s->seg_t0 + s->seg_len);
    for (uint64_t j = 0; j < s->n_weights; j++) {
        const float *z = wide_at(s, j);
        for (uint32_t c = 0; c < K; c++)
            out[c * stride + j] = ftrl_weight(z[c], z[KL + c], L);
    }
}

/* The row step, also Cyclades' split step: m_extra (stored units) joins the
 * margin and the bias weight takes part only if with_bias; the run loops
 * pass 0 and true, constants the compiler folds away. rw is the row's
 * weight, read only by the weighted kinds (spec.weighted). Returns the
 * margin; *dout gets the loss derivative before the weight (row_deriv). */
static ALWAYS_INLINE double step_impl(const struct hog_sgd *s,
                                      struct hog_row r, double y, double rw,
                                      uint32_t t, double m_extra,
                                      bool with_bias, double *dout,
                                      struct spec spec)
{
    const bool stamped = spec.reg == HOG_SGD_REG_STAMPED;
    if (spec.ftrl)
        return step_ftrl(s, r, y, rw, t, m_extra, with_bias, dout, spec);
    if (spec.ada && stamped && !spec.l1)
        return step_ada_l2(s, r, y, rw, t, m_extra, with_bias, dout, spec);
    struct step p = step_at(s, t, spec);
    /* Long rows miss the cache on most weights; prefetching a few entries
     * ahead keeps several misses in flight despite the catch-up's
     * branches and calls. For writing where every row steps (the logistic
     * and squared losses' derivative is never 0), for reading where most
     * rows end up with a zero derivative and write nothing (hinge, squared
     * hinge: a prefetch for writing would take the line from every other
     * core's cache, on read-only rows, and threads sharing the weights
     * would keep stealing it back; measured in docs/bench-log/hogwild.md,
     * "Prefetching for reading under the hinge losses"). */
    enum { PF = 16 };
    const bool pf_write = spec.loss == HOG_LOSS_LOGISTIC ||
                          spec.loss == HOG_LOSS_SQUARED;
    struct seen sn[stamped ? SEEN_MAX + 1 : 1], sb;
#define SEEN(k) (stamped && (k) < SEEN_MAX ? &sn[k] : NULL)
    double m = m_extra;
    uint32_t k = 0;
    if (r.nnz > PF)
        for (; k < r.nnz - PF; k++) {
            uint32_t jp = r.idx[k + PF];
            if (pf_write) {
                __builtin_prefetch(w_at(s, jp), 1);
                if (stamped)
                    __builtin_prefetch(stamp_at(s, jp), 1);
                if (spec.ada)
                    __builtin_prefetch(&s->g2[jp], 1);
            } else {
                __builtin_prefetch(w_at(s, jp), 0);
                if (stamped)
                    __builtin_prefetch(stamp_at(s, jp), 0);
                if (spec.ada)
                    __builtin_prefetch(&s->g2[jp], 0);
            }
            m += (double)fetch(s, r.idx[k], p, spec, SEEN(k)) * r.val[k];
        }
    for (; k < r.nnz; k++)
        m += (double)fetch(s, r.idx[k], p, spec, SEEN(k)) * r.val[k];
    const bool has_bias = with_bias && s->bias != 0.0;
    if (has_bias)
        m += (double)fetch(s, s->n_features, p, spec,
                           stamped ? &sb : NULL) *
             s->bias;
    if (spec.reg == HOG_SGD_REG_SCALED)
        m *= p.qt_inv; /* stored w_j q_t -> w_j, for m_extra's part too */

    double d = row_deriv(spec, y, m, rw, dout);
    if (d == 0.0)
        return m; /* step t's shrink stays pending (stamps, or q) */
    p = step_rates(s, p, spec);
    for (k = 0; k < r.nnz; k++)
        update(s, r.idx[k], d * r.val[k], p, spec, SEEN(k));
    if (has_bias)
        update(s, s->n_features, d * s->bias, p, spec, stamped ? &sb : NULL);
#undef SEEN
    return m;
}

/* ---- locks of the striped and mutex modes ----------------------------------- */

/* A test-and-test-and-set spinlock that yields the CPU after a while (a
 * holder preempted on an oversubscribed machine must get to run). */
static inline void spin_lock(atomic_uint *l)
{
    for (unsigned spins = 0;;) {
        /* acquire: pairs with the release in spin_unlock(), so the previous
         * holder's weight stores are visible to this holder */
        if (!atomic_exchange_explicit(l, 1u, memory_order_acquire))
            return;
        while (atomic_load_explicit(l, memory_order_relaxed))
            if (++spins % 256 == 0)
                sched_yield();
            else
                hog_spin_pause();
    }
}

static inline void spin_unlock(atomic_uint *l)
{
    /* release: pairs with the acquire in spin_lock() */
    atomic_store_explicit(l, 0u, memory_order_release);
}

/* The row's stripes, each once, in ascending order (the indices ascend and
 * the bias weight comes last). */
static void lock_row(const struct hog_sgd *s, const struct hog_sgd_locks *l,
                     struct hog_row r, bool lock)
{
    if (l->mode == HOG_UPDATE_MUTEX) {
        if (lock)
            pthread_mutex_lock(l->mutex);
        else
            pthread_mutex_unlock(l->mutex);
        return;
    }
    uint64_t last = UINT64_MAX;
    for (uint32_t k = 0; k <= r.nnz; k++) {
        uint64_t j = k < r.nnz ? r.idx[k] : s->n_features;
        if (k == r.nnz && s->bias == 0.0)
            break;
        uint64_t sj = j >> HOG_SGD_STRIPE_SHIFT;
        if (sj == last)
            continue;
        last = sj;
        if (lock)
            spin_lock(&l->stripe[sj]);
        else
            spin_unlock(&l->stripe[sj]);
    }
}

hog_status hog_sgd_locks_init(struct hog_sgd_locks *l, hog_update mode,
                              const struct hog_sgd *s, hog_err *err)
{
    memset(l, 0, sizeof *l);
    if (mode == HOG_UPDATE_STRIPED) {
        l->n_stripes = (s->n_weights >> HOG_SGD_STRIPE_SHIFT) + 1;
        l->stripe = calloc(l->n_stripes, sizeof *l->stripe);
        if (!l->stripe)
            return hog_errf(err, HOG_ENOMEM,
                            "out of memory for %llu stripe locks",
                            (unsigned long long)l->n_stripes);
    } else if (mode == HOG_UPDATE_MUTEX) {
        pthread_mutex_t *m = malloc(sizeof *m);
        if (!m)
            return hog_errf(err, HOG_ENOMEM, "out of memory for a mutex");
        pthread_mutex_init(m, NULL);
        l->mutex = m;
    } else {
        mode = HOG_UPDATE_NONE;
    }
    l->mode = mode;
    return HOG_OK;
}

void hog_sgd_locks_free(struct hog_sgd_locks *l)
{
    if (l->mutex) {
        pthread_mutex_destroy(l->mutex);
        free(l->mutex);
    }
    free(l->stripe);
    memset(l, 0, sizeof *l);
}

/* ---- the loops ---------------------------------------------------------------- */

/* l is NULL unless the mode locks (a test per row, outside the row's loops). */
static ALWAYS_INLINE void run_impl(const struct hog_sgd *s, const hog_data *d,
                                   const uint64_t *order, uint64_t count,
                                   uint32_t t, uint32_t stride,
                                   const struct hog_sgd_locks *l,
                                   struct spec spec, struct hog_cross_buf *xb,
                                   struct hog_sgd_tally *tally)
{
    /* A private copy whose address never escapes: the compiler then knows
     * that the weight stores do not change the array pointers, and keeps
     * them in registers. */
    const struct hog_sgd sc = *s;
    const struct hog_csr m = d->m;
    const float *const rw = spec.weighted ? d->row_w : NULL;
    const bool has_w = spec.weighted && (!spec.crossed || rw);
    const double pos = sc.label_pos;
    for (uint64_t i = 0; i < count; i++, t += stride) {
        /* Rows come in random order: fetch the offsets two rows ahead and
         * the first lines of the next row while this one computes. */
        if (HOG_LIKELY(i + 2 < count))
            __builtin_prefetch(&m.off[order[i + 2]]);
        if (HOG_LIKELY(i + 1 < count)) {
            uint64_t nx = m.off[order[i + 1]];
            __builtin_prefetch(m.idx + nx);
            __builtin_prefetch(m.val + nx);
            __builtin_prefetch(&m.y[order[i + 1]]);
            if (has_w)
                __builtin_prefetch(&rw[order[i + 1]]);
        }
        struct hog_row r = spec.crossed
                               ? hog_cross_row(&d->cross, &m, order[i], xb)
                               : hog_csr_row(&m, order[i]);
        double y = hog_loss_target(spec.loss, pos, r.y);
        double w = has_w ? (double)rw[order[i]] : 1.0;
        double dv, mg;
        if (HOG_UNLIKELY(l != NULL)) {
            lock_row(&sc, l, r, true);
            mg = step_impl(&sc, r, y, w, t, 0.0, true, &dv, spec);
            lock_row(&sc, l, r, false);
        } else {
            mg = step_impl(&sc, r, y, w, t, 0.0, true, &dv, spec);
        }
        if (tally) /* the row's score before its step, summed as it goes */
            hog_sgd_tally_add(tally, spec.loss, y, mg, w);
    }
}

/* The kinds of kernel: one per way of keeping the weights up to date
 * (enum hog_sgd_reg, the maths above) with or without AdaGrad. Every kind
 * runs in every update mode: the scaled kind needs no stamps, so its CAS
 * is one per weight like the plain kind's, and the locks exclude racers
 * whatever the representation. */
enum kind {
    KIND_PLAIN,      /* no regularization */
    KIND_SCALED,     /* l2 only: w[j] = w_j q_t */
    KIND_STAMPED_L1, /* l1, with or without l2: stamped, prefix catch-up */
    KIND_ADA,        /* AdaGrad, no regularization */
    KIND_ADA_L2,     /* AdaGrad, l2 only: stamped */
    KIND_ADA_L1,     /* AdaGrad, l1 with or without l2: stamped */
    KIND_FTRL,       /* FTRL-Proximal, l1 and l2 in closed form */
    KIND_COUNT
};

/* What each kind is; read with constant indices in the generated
 * functions, so the compiler folds it. */
static const struct {
    bool ada;
    enum hog_sgd_reg reg;
    bool l1;
    bool ftrl;
} kinds[KIND_COUNT] = {
    [KIND_PLAIN] = { false, HOG_SGD_REG_NONE, false },
    [KIND_SCALED] = { false, HOG_SGD_REG_SCALED, false },
    [KIND_STAMPED_L1] = { false, HOG_SGD_REG_STAMPED, true },
    [KIND_ADA] = { true, HOG_SGD_REG_NONE, false },
    [KIND_ADA_L2] = { true, HOG_SGD_REG_STAMPED, false },
    [KIND_ADA_L1] = { true, HOG_SGD_REG_STAMPED, true },
    [KIND_FTRL] = { false, HOG_SGD_REG_NONE, false, true },
};

/* X(kind, args) for every kind: the one list the generated functions and
 * tables below are written from. */
#define FOR_EACH_KIND(X, ...)                                                 \
    X(PLAIN, __VA_ARGS__)                                                     \
    X(SCALED, __VA_ARGS__)                                                    \
    X(STAMPED_L1, __VA_ARGS__)                                                \
    X(ADA, __VA_ARGS__)                                                       \
    X(ADA_L2, __VA_ARGS__)                                                    \
    X(ADA_L1, __VA_ARGS__)                                                    \
    X(FTRL, __VA_ARGS__)
#define KIND_ONE(K, ...) +1
_Static_assert(0 FOR_EACH_KIND(KIND_ONE, ) == KIND_COUNT,
               "FOR_EACH_KIND lists every kind");
#undef KIND_ONE

static ALWAYS_INLINE struct spec spec_of(hog_loss loss, enum kind k, bool cas)
{
    return (struct spec){ .loss = loss, .ada = kinds[k].ada,
                          .reg = kinds[k].reg, .l1 = kinds[k].l1,
                          .cas = cas, .ftrl = kinds[k].ftrl };
}

/* A weighted kind: the loss read at run time (one switch per row, in
 * hog_loss_deriv and the choice of prefetch), everything else folded. */
static ALWAYS_INLINE struct spec spec_weighted(const struct hog_sgd *s,
                                               enum kind k, bool cas)
{
    struct spec p = spec_of(s->loss, k, cas);
    p.weighted = true;
    return p;
}

/* The kind of s. */
static enum kind variant(const struct hog_sgd *s)
{
    if (s->schedule == HOG_SCHED_FTRL)
        return KIND_FTRL;
    if (s->schedule == HOG_SCHED_ADAGRAD)
        return s->l1 > 0 ? KIND_ADA_L1 : s->l2 > 0 ? KIND_ADA_L2 : KIND_ADA;
    static const enum kind shared[] = {
        [HOG_SGD_REG_NONE] = KIND_PLAIN,
        [HOG_SGD_REG_SCALED] = KIND_SCALED,
        [HOG_SGD_REG_STAMPED] = KIND_STAMPED_L1,
    };
    return shared[s->reg];
}

/* One specialised loop per loss, update (relaxed store, or
 * compare-and-swap: CAS 1) and kind. */
typedef void run_fn(const struct hog_sgd *, const hog_data *,
                    const uint64_t *, uint64_t, uint32_t, uint32_t,
                    const struct hog_sgd_locks *, struct hog_sgd_tally *);

#define RUN_FN(K, LOSS, CAS)                                                  \
    static void run_##LOSS##_##K##_##CAS(                                     \
        const struct hog_sgd *s, const hog_data *d, const uint64_t *order,    \
        uint64_t count, uint32_t t, uint32_t stride,                          \
        const struct hog_sgd_locks *l, struct hog_sgd_tally *tl)              \
    {                                                                         \
        run_impl(s, d, order, count, t, stride, l,                            \
                 spec_of(HOG_LOSS_##LOSS, KIND_##K, CAS), NULL, tl);          \
    }
#define RUN_FNS(LOSS)                                                         \
    FOR_EACH_KIND(RUN_FN, LOSS, 0) FOR_EACH_KIND(RUN_FN, LOSS, 1)
RUN_FNS(LOGISTIC)
RUN_FNS(HINGE)
RUN_FNS(SQHINGE)
RUN_FNS(SQUARED)

#define RUN_ENTRY(K, LOSS, CAS) [KIND_##K] = run_##LOSS##_##K##_##CAS,
#define RUN_ROW(LOSS)                                                         \
    { [0] = { FOR_EACH_KIND(RUN_ENTRY, LOSS, 0) },                            \
      [1] = { FOR_EACH_KIND(RUN_ENTRY, LOSS, 1) } }
/* [loss][cas][kind] */
static run_fn *const run_table[4][2][KIND_COUNT] = {
    [HOG_LOSS_LOGISTIC] = RUN_ROW(LOGISTIC),
    [HOG_LOSS_HINGE] = RUN_ROW(HINGE),
    [HOG_LOSS_SQHINGE] = RUN_ROW(SQHINGE),
    [HOG_LOSS_SQUARED] = RUN_ROW(SQUARED),
};

/* Weighted rows (d->row_w set): one loop per update and kind, the loss
 * read at run time (spec_weighted), so that weights add a quarter of the
 * unweighted loops' code rather than as much again; the unweighted loops
 * above are untouched. */
#define RUN_W_FN(K, CAS)                                                      \
    static void run_w_##K##_##CAS(                                            \
        const struct hog_sgd *s, const hog_data *d, const uint64_t *order,    \
        uint64_t count, uint32_t t, uint32_t stride,                          \
        const struct hog_sgd_locks *l, struct hog_sgd_tally *tl)              \
    {                                                                         \
        run_impl(s, d, order, count, t, stride, l,                            \
                 spec_weighted(s, KIND_##K, CAS), NULL, tl);                  \
    }
FOR_EACH_KIND(RUN_W_FN, 0)
FOR_EACH_KIND(RUN_W_FN, 1)
#define RUN_W_ENTRY(K, CAS) [KIND_##K] = run_w_##K##_##CAS,
/* [cas][kind] */
static run_fn *const run_w_table[2][KIND_COUNT] = {
    { FOR_EACH_KIND(RUN_W_ENTRY, 0) }, { FOR_EACH_KIND(RUN_W_ENTRY, 1) },
};

/* Rows with interactions (d->m.ns set): the weighted loops' way (the loss
 * read at run time, rows weighted when d->row_w is set), each row expanded
 * into a buffer of the call's own (so that threads never share one) just
 * before the kernel reads it; the loops above are untouched. */
static void run_crossed(const struct hog_sgd *s, const hog_data *d,
                        const uint64_t *order, uint64_t count, uint32_t t,
                        uint32_t stride, const struct hog_sgd_locks *l,
                        struct hog_sgd_tally *tl, struct spec spec)
{
    struct hog_cross_buf xb;
    hog_err err;
    if (hog_cross_buf_init(&xb, d, &err) != HOG_OK) {
        /* a few KiB for the longest row; a run that cannot have them
         * cannot train the rows it was given */
        fprintf(stderr, "hogtrain: %s\n", err.msg);
        abort();
    }
    spec.crossed = true;
    run_impl(s, d, order, count, t, stride, l, spec, &xb, tl);
    hog_cross_buf_free(&xb);
}
#define RUN_X_FN(K, CAS)                                                      \
    static void run_x_##K##_##CAS(                                            \
        const struct hog_sgd *s, const hog_data *d, const uint64_t *order,    \
        uint64_t count, uint32_t t, uint32_t stride,                          \
        const struct hog_sgd_locks *l, struct hog_sgd_tally *tl)              \
    {                                                                         \
        run_crossed(s, d, order, count, t, stride, l, tl,                     \
                    spec_weighted(s, KIND_##K, CAS));                         \
    }
FOR_EACH_KIND(RUN_X_FN, 0)
FOR_EACH_KIND(RUN_X_FN, 1)
#define RUN_X_ENTRY(K, CAS) [KIND_##K] = run_x_##K##_##CAS,
static run_fn *const run_x_table[2][KIND_COUNT] = {
    { FOR_EACH_KIND(RUN_X_ENTRY, 0) }, { FOR_EACH_KIND(RUN_X_ENTRY, 1) },
};

/* The loop for s and d, chosen once per call. */
static run_fn *run_fn_for(const struct hog_sgd *s, const hog_data *d,
                          bool cas)
{
    if (HOG_UNLIKELY(d->m.ns != NULL))
        return run_x_table[cas][variant(s)];
    return d->row_w ? run_w_table[cas][variant(s)]
                    : run_table[s->loss][cas][variant(s)];
}

void hog_sgd_run_tally(const struct hog_sgd *s, const hog_data *d,
                       const uint64_t *order, uint64_t count,
                       uint32_t t_first, uint32_t t_stride, hog_update mode,
                       const struct hog_sgd_locks *l,
                       struct hog_sgd_tally *tally)
{
    bool cas = mode == HOG_UPDATE_ATOMIC;
    bool locked = mode == HOG_UPDATE_STRIPED || mode == HOG_UPDATE_MUTEX;
    run_fn_for(s, d, cas)(s, d, order, count, t_first, t_stride,
                          locked ? l : NULL, tally);
}

void hog_sgd_run_mode(const struct hog_sgd *s, const hog_data *d,
                      const uint64_t *order, uint64_t count, uint32_t t_first,
                      uint32_t t_stride, hog_update mode,
                      const struct hog_sgd_locks *l)
{
    hog_sgd_run_tally(s, d, order, count, t_first, t_stride, mode, l, NULL);
}

void hog_sgd_run(const struct hog_sgd *s, const hog_data *d,
                 const uint64_t *order, uint64_t count, uint32_t t_first,
                 uint32_t t_stride)
{
    hog_sgd_run_tally(s, d, order, count, t_first, t_stride, HOG_UPDATE_NONE,
                      NULL, NULL);
}

void hog_sgd_tally_report(struct hog_fit *f, const struct hog_sgd *s,
                          const struct hog_sgd_tally *t)
{
    if (!t->rows)
        return;
    f->prog_loss = t->loss / (double)t->rows;
    f->prog_accuracy = hog_loss_is_classification(s->loss)
                           ? (double)t->right / (double)t->rows
                           : NAN;
}

double hog_sgd_step(const struct hog_sgd *s, struct hog_row r, double y,
                    uint32_t t)
{
    double dv;
    return step_impl(s, r, y, 1.0, t, 0.0, true, &dv,
                     spec_of(s->loss, variant(s), false));
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
    if (ada && !l1) { /* through the lanes, four weights at a time */
        const struct ada_ctx cx = ada_ctx_of(s);
        for (uint64_t j0 = lo; j0 < hi; j0 += ADA_W) {
            float v[ADA_W] = { 0 }, g[ADA_W] = { 0 };
            uint32_t k[ADA_W] = { len, len, len, len };
            double c[ADA_W];
            uint64_t nl = hi - j0 < ADA_W ? hi - j0 : ADA_W;
            uint32_t nz = 0; /* any weight not zero (+0 and -0 alike) */
            for (uint64_t i = 0; i < nl; i++) {
                v[i] = ld(w_at(s, j0 + i));
                g[i] = ld(&s->g2[j0 + i]);
                k[i] = ld_u32(stamp_at(s, j0 + i));
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
                    st(w_at(s, j0 + i), (float)c[i]);
                st_u32(stamp_at(s, j0 + i), 0);
            }
        }
        return;
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

static void ftrl_weights(const struct hog_sgd *s, uint64_t steps,
                         float *out, uint64_t lo, uint64_t hi)
{
    const struct ftrl_lam L = ftrl_lam_at(s, steps);
    enum { B = 64 }; /* the words in blocks, the weights in lanes */
    float c[2 * B];
    for (uint64_t j = lo; j < hi; j += B) {
        uint32_t k = hi - j < B ? (uint32_t)(hi - j) : B;
        for (uint32_t i = 0; i < k; i++)
            ftrl_unpack(ftrl_ld(&s->zn[j + i]), &c[2 * i]);
        for (uint32_t i = 0; i < k; i++)
            out[j + i] = ftrl_weight(c[2 * i], c[2 * i + 1], L);
    }
}

void hog_sgd_ftrl_weights(const struct hog_sgd *s, uint64_t steps,
                          float *out)
{
    ftrl_weights(s, steps, out, 0, s->n_weights);
}

void hog_sgd_ftrl_get(const struct hog_sgd *s, float *z, float *r)
{
    for (uint64_t j = 0; j < s->n_weights; j++) {
        float c[2];
        ftrl_unpack(ftrl_ld(&s->zn[j]), c);
        z[j] = c[0];
        r[j] = c[1];
    }
}

void hog_sgd_ftrl_put(struct hog_sgd *s, const float *z, const float *r,
                      uint64_t steps)
{
    for (uint64_t j = 0; j < s->n_weights; j++)
        ftrl_st(&s->zn[j], ftrl_pack((const float[2]){ z[j], r[j] }));
    s->seg_t0 = steps;
    s->seg_len = 0;
}

void hog_sgd_copy_weights_range(const struct hog_sgd *s, float *out,
                                uint64_t lo, uint64_t hi)
{
    if (s->zn) {
        ftrl_weights(s, s->seg_t0 + s->seg_len, out, lo, hi);
        return;
    }
    for (uint64_t j = lo; j < hi; j++)
        out[j] = ld(&s->w[j]);
}

void hog_sgd_copy_weights(const struct hog_sgd *s, float *out)
{
    hog_sgd_copy_weights_range(s, out, 0, s->n_weights);
}

void hog_sgd_set_weights(struct hog_sgd *s, const float *in)
{
    if (s->zn) { /* the z that gives w = in[j] at n = 0, now */
        const struct ftrl_lam L = ftrl_lam_at(s, s->seg_t0 + s->seg_len);
        for (uint64_t j = 0; j < s->n_weights; j++)
            ftrl_st(&s->zn[j], ftrl_pack((const float[2]){
                                   ftrl_z_of(in[j], L), 0.0f }));
        return;
    }
    /* between segments every kind holds the weights themselves (scale 1,
     * stamps 0) */
    for (uint64_t j = 0; j < s->n_weights; j++)
        st(&s->w[j], in[j]);
}

/* ---- Cyclades: steps with some weights kept apart ------------------------------ */

/* step_impl itself with m_extra and with_bias free: m_extra = 0 with the
 * bias is hog_sgd_step's arithmetic, bit for bit. The scaled kind divides
 * m_extra by q_t with the rest of the margin (it is in stored units: the
 * caller reads the hot weights in place), and hog_sgd_apply moves a stored
 * value by eta_t g q_{t+1}, so Cyclades' hot weights stay in the same
 * representation as every other weight and segment_end fixes them all. */
#define SPLIT_FN(K, LOSS)                                                     \
    static double split_##LOSS##_##K(const struct hog_sgd *s,                 \
                                     struct hog_row r, double y, double rw,   \
                                     uint32_t t, double m_extra,              \
                                     bool with_bias, double *margin)          \
    {                                                                         \
        double dv;                                                            \
        (void)rw;                                                             \
        *margin = step_impl(s, r, y, 1.0, t, m_extra, with_bias, &dv,         \
                            spec_of(HOG_LOSS_##LOSS, KIND_##K, false));       \
        return dv;                                                            \
    }
FOR_EACH_KIND(SPLIT_FN, LOGISTIC)
FOR_EACH_KIND(SPLIT_FN, HINGE)
FOR_EACH_KIND(SPLIT_FN, SQHINGE)
FOR_EACH_KIND(SPLIT_FN, SQUARED)

#define SPLIT_ENTRY(K, LOSS) [KIND_##K] = split_##LOSS##_##K,
#define SPLIT_ROW(LOSS) { FOR_EACH_KIND(SPLIT_ENTRY, LOSS) }
/* [loss][kind] */
static hog_sgd_split_fn *const split_table[4][KIND_COUNT] = {
    [HOG_LOSS_LOGISTIC] = SPLIT_ROW(LOGISTIC),
    [HOG_LOSS_HINGE] = SPLIT_ROW(HINGE),
    [HOG_LOSS_SQHINGE] = SPLIT_ROW(SQHINGE),
    [HOG_LOSS_SQUARED] = SPLIT_ROW(SQUARED),
};

/* Weighted rows: the loss at run time, as the weighted run loops. */
#define SPLIT_W_FN(K, ...)                                                    \
    static double split_w_##K(const struct hog_sgd *s, struct hog_row r,      \
                              double y, double rw, uint32_t t,                \
                              double m_extra, bool with_bias,                 \
                              double *margin)                                 \
    {                                                                         \
        double dv;                                                            \
        *margin = step_impl(s, r, y, rw, t, m_extra, with_bias, &dv,          \
                            spec_weighted(s, KIND_##K, false));               \
        return dv;                                                            \
    }
FOR_EACH_KIND(SPLIT_W_FN, )
#define SPLIT_W_ENTRY(K, ...) [KIND_##K] = split_w_##K,
static hog_sgd_split_fn *const split_w_table[KIND_COUNT] = {
    FOR_EACH_KIND(SPLIT_W_ENTRY, )
};

hog_sgd_split_fn *hog_sgd_split_step(const struct hog_sgd *s, bool weighted)
{
    return weighted ? split_w_table[variant(s)]
                    : split_table[s->loss][variant(s)];
}

/* update() catches the weight up to step t itself (stamped). */
static ALWAYS_INLINE void apply_impl(const struct hog_sgd *s,
                                     const uint32_t *j, const double *g,
                                     const double *sq, uint64_t count,
                                     uint32_t t, struct spec spec)
{
    if (spec.ftrl) {
        const struct ftrl_lam L = ftrl_lam_at(s, s->seg_t0 + t);
        for (uint64_t i = 0; i < count; i++)
            ftrl_update1(s, j[i], g[i], sq ? sq[i] : g[i] * g[i], L, false);
        return;
    }
    uint64_t i = 0;
    if (spec.ada && spec.reg == HOG_SGD_REG_STAMPED && !spec.l1 &&
        !spec.cas) { /* AdaGrad with l2 only: four weights in the lanes */
        const struct ada_ctx c = ada_ctx_of(s);
        for (; i + ADA_W <= count; i += ADA_W)
            ada_l2_update4(&c, j + i, g + i, sq ? sq + i : NULL, t);
    }
    struct step p = step_rates(s, step_at(s, t, spec), spec);
    for (; i < count; i++)
        update_sq(s, j[i], g[i], spec.ada && sq ? sq[i] : g[i] * g[i], p,
                  spec, NULL);
}

typedef void apply_fn(const struct hog_sgd *, const uint32_t *,
                      const double *, const double *, uint64_t, uint32_t);

/* The loss is unused here (g is given). */
#define APPLY_FN(K, ...)                                                      \
    static void apply_##K(const struct hog_sgd *s, const uint32_t *j,         \
                          const double *g, const double *sq, uint64_t count,  \
                          uint32_t t)                                         \
    {                                                                         \
        apply_impl(s, j, g, sq, count, t,                                     \
                   spec_of(HOG_LOSS_LOGISTIC, KIND_##K, false));              \
    }
FOR_EACH_KIND(APPLY_FN, )

#define APPLY_ENTRY(K, ...) [KIND_##K] = apply_##K,
static apply_fn *const apply_table[KIND_COUNT] = {
    FOR_EACH_KIND(APPLY_ENTRY, )
};

void hog_sgd_apply_many(const struct hog_sgd *s, const uint32_t *j,
                        const double *g, const double *sq, uint64_t count,
                        uint32_t t)
{
    apply_table[variant(s)](s, j, g, sq, count, t);
}

void hog_sgd_apply(const struct hog_sgd *s, uint64_t j, uint32_t t, double g,
                   double sq)
{
    uint32_t jj = (uint32_t)j;
    hog_sgd_apply_many(s, &jj, &g, &sq, 1, t);
}
