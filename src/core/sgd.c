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
 */
#include "core/sgd.h"

#include "core/loss.h"
#include "core/spin.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
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

/* The row step, also Cyclades' split step: m_extra (stored units) joins the
 * margin and the bias weight takes part only if with_bias; the run loops
 * pass 0 and true, constants the compiler folds away. Returns the margin;
 * *dout gets the loss derivative (0: nothing was written). */
static ALWAYS_INLINE double step_impl(const struct hog_sgd *s,
                                      struct hog_row r, double y, uint32_t t,
                                      double m_extra, bool with_bias,
                                      double *dout, struct spec spec)
{
    const bool stamped = spec.reg == HOG_SGD_REG_STAMPED;
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

    double d = hog_loss_deriv(spec.loss, y, m);
    *dout = d;
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
                                   struct spec spec)
{
    /* A private copy whose address never escapes: the compiler then knows
     * that the weight stores do not change the array pointers, and keeps
     * them in registers. */
    const struct hog_sgd sc = *s;
    const struct hog_csr m = d->m;
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
        }
        struct hog_row r = hog_csr_row(&m, order[i]);
        double y = hog_loss_target(spec.loss, pos, r.y);
        double dv;
        if (HOG_UNLIKELY(l != NULL)) {
            lock_row(&sc, l, r, true);
            step_impl(&sc, r, y, t, 0.0, true, &dv, spec);
            lock_row(&sc, l, r, false);
        } else {
            step_impl(&sc, r, y, t, 0.0, true, &dv, spec);
        }
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
    KIND_COUNT
};

/* What each kind is; read with constant indices in the generated
 * functions, so the compiler folds it. */
static const struct {
    bool ada;
    enum hog_sgd_reg reg;
    bool l1;
} kinds[KIND_COUNT] = {
    [KIND_PLAIN] = { false, HOG_SGD_REG_NONE, false },
    [KIND_SCALED] = { false, HOG_SGD_REG_SCALED, false },
    [KIND_STAMPED_L1] = { false, HOG_SGD_REG_STAMPED, true },
    [KIND_ADA] = { true, HOG_SGD_REG_NONE, false },
    [KIND_ADA_L2] = { true, HOG_SGD_REG_STAMPED, false },
    [KIND_ADA_L1] = { true, HOG_SGD_REG_STAMPED, true },
};

/* X(kind, args) for every kind: the one list the generated functions and
 * tables below are written from. */
#define FOR_EACH_KIND(X, ...)                                                 \
    X(PLAIN, __VA_ARGS__)                                                     \
    X(SCALED, __VA_ARGS__)                                                    \
    X(STAMPED_L1, __VA_ARGS__)                                                \
    X(ADA, __VA_ARGS__)                                                       \
    X(ADA_L2, __VA_ARGS__)                                                    \
    X(ADA_L1, __VA_ARGS__)
#define KIND_ONE(K, ...) +1
_Static_assert(0 FOR_EACH_KIND(KIND_ONE, ) == KIND_COUNT,
               "FOR_EACH_KIND lists every kind");
#undef KIND_ONE

static ALWAYS_INLINE struct spec spec_of(hog_loss loss, enum kind k, bool cas)
{
    return (struct spec){ .loss = loss, .ada = kinds[k].ada,
                          .reg = kinds[k].reg, .l1 = kinds[k].l1,
                          .cas = cas };
}

/* The kind of s. */
static enum kind variant(const struct hog_sgd *s)
{
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
                    const struct hog_sgd_locks *);

#define RUN_FN(K, LOSS, CAS)                                                  \
    static void run_##LOSS##_##K##_##CAS(                                     \
        const struct hog_sgd *s, const hog_data *d, const uint64_t *order,    \
        uint64_t count, uint32_t t, uint32_t stride,                          \
        const struct hog_sgd_locks *l)                                        \
    {                                                                         \
        run_impl(s, d, order, count, t, stride, l,                            \
                 spec_of(HOG_LOSS_##LOSS, KIND_##K, CAS));                    \
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

void hog_sgd_run_mode(const struct hog_sgd *s, const hog_data *d,
                      const uint64_t *order, uint64_t count, uint32_t t_first,
                      uint32_t t_stride, hog_update mode,
                      const struct hog_sgd_locks *l)
{
    bool cas = mode == HOG_UPDATE_ATOMIC;
    bool locked = mode == HOG_UPDATE_STRIPED || mode == HOG_UPDATE_MUTEX;
    run_table[s->loss][cas][variant(s)](s, d, order, count, t_first,
                                        t_stride, locked ? l : NULL);
}

void hog_sgd_run(const struct hog_sgd *s, const hog_data *d,
                 const uint64_t *order, uint64_t count, uint32_t t_first,
                 uint32_t t_stride)
{
    run_table[s->loss][false][variant(s)](s, d, order, count, t_first,
                                          t_stride, NULL);
}

double hog_sgd_step(const struct hog_sgd *s, struct hog_row r, double y,
                    uint32_t t)
{
    double dv;
    return step_impl(s, r, y, t, 0.0, true, &dv,
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

/* ---- Cyclades: steps with some weights kept apart ------------------------------ */

/* step_impl itself with m_extra and with_bias free: m_extra = 0 with the
 * bias is hog_sgd_step's arithmetic, bit for bit. The scaled kind divides
 * m_extra by q_t with the rest of the margin (it is in stored units: the
 * caller reads the hot weights in place), and hog_sgd_apply moves a stored
 * value by eta_t g q_{t+1}, so Cyclades' hot weights stay in the same
 * representation as every other weight and segment_end fixes them all. */
#define SPLIT_FN(K, LOSS)                                                     \
    static double split_##LOSS##_##K(const struct hog_sgd *s,                 \
                                     struct hog_row r, double y, uint32_t t,  \
                                     double m_extra, bool with_bias)          \
    {                                                                         \
        double dv;                                                            \
        step_impl(s, r, y, t, m_extra, with_bias, &dv,                        \
                  spec_of(HOG_LOSS_##LOSS, KIND_##K, false));                 \
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

hog_sgd_split_fn *hog_sgd_split_step(const struct hog_sgd *s)
{
    return split_table[s->loss][variant(s)];
}

/* update() catches the weight up to step t itself (stamped). */
static ALWAYS_INLINE void apply_impl(const struct hog_sgd *s,
                                     const uint32_t *j, const double *g,
                                     const double *sq, uint64_t count,
                                     uint32_t t, struct spec spec)
{
    struct step p = step_rates(s, step_at(s, t, spec), spec);
    for (uint64_t i = 0; i < count; i++)
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
