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
 *
 * The pieces around this kernel, and what it shares with them: sgd_int.h.
 */
#include "core/sgd.h"
#include "core/sgd_int.h"

#include "core/sgd_ada.h"
#include "core/sgd_avg.h"
#include "core/sgd_lanes.h"

#include "core/cross.h"
#include "core/fit.h"

#include "core/spin.h"

#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

/* ---- the row step ----------------------------------------------------------- */

static inline float soft_threshold(double u, double b)
{
    return hog_sgd_soft_threshold(u, b);
}

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
    float v = hog_f_load(w_at(s, j));
    if (spec.reg != HOG_SGD_REG_STAMPED)
        return v;
    uint32_t k = hog_u32_load(stamp_at(s, j));
    float c = k >= p.t ? v
                       : catch_up(s, v, spec.ada ? hog_f_load(&s->g2[j]) : 0.0f, k,
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
    float v = hog_f_load(wp);
    uint32_t k = stamped ? hog_u32_load(stamp_at(s, j)) : 0;
    /* the catch-up uses the accumulator of the untouched steps */
    float g2_old = spec.ada ? hog_f_load(&s->g2[j]) : 0.0f;
    double eta = p.eta, shrink = p.shrink, thr = p.thr;
    if (spec.ada) {
        float g2 = (float)((double)g2_old + sq);
        hog_f_store(&s->g2[j], g2);
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
                hog_u32_store(stamp_at(s, j), t + 1);
            if (spec.avg)
                avg_step(s, j, v, k, t, nv);
            return;
        }
        /* CAS lost to another thread: v is now its value; and its stamp */
        if (stamped)
            k = hog_u32_load(stamp_at(s, j));
    }
}

/* The step of one row's weight: AdaGrad's accumulator takes gj^2. */
static ALWAYS_INLINE void update(const struct hog_sgd *s, uint64_t j,
                                 double gj, struct step p, struct spec spec,
                                 const struct seen *sn)
{
    update_sq(s, j, gj, gj * gj, p, spec, sn);
}

/* ---- the row step of FTRL-Proximal (the maths at the top of sgd_ftrl.c) ----- */

/* Coordinate j alone at step constants L (a weight another thread changed
 * between the passes, in the atomic mode; hog_sgd_apply). */
static ALWAYS_INLINE void ftrl_update1(const struct hog_sgd *s, uint64_t j,
                                       double g, double g2,
                                       struct ftrl_lam L, bool cas)
{
    _Atomic uint64_t *p = &s->zn[j];
    uint64_t old = hog_u64_load(p);
    for (;;) {
        float c[2], nc[2];
        ftrl_unpack(old, c);
        ftrl_next(c, ftrl_weight(c[0], c[1], L), (float)g, (float)g2, L.ia,
                  nc);
        if (!cas) {
            hog_u64_store(p, ftrl_pack(nc));
            return;
        }
        if (atomic_compare_exchange_weak_explicit(p, &old, ftrl_pack(nc),
                                                  memory_order_relaxed,
                                                  memory_order_relaxed))
            return;
    }
}

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
     * lane is an aligned 8-byte load, whole as hog_u64_load()'s. */
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
        ftrl_unpack(hog_u64_load(&zn[r.idx[e]]), &b->c[2 * n]);
        b->x[n] = r.val[e];
    }
    if (bias) {
        ftrl_unpack(hog_u64_load(&zn[s->n_features]), &b->c[2 * n]);
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
            hog_u64_store(&zn[j], nb);
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

/* ---- the loops ---------------------------------------------------------------- */

#define PF_ROW_MAX 512

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
    const bool has_w = spec.weighted && rw; /* the table's losses: maybe NULL */
    const double pos = sc.label_pos;
    for (uint64_t i = 0; i < count; i++, t += stride) {
        /* Rows come in random order: fetch the offsets two rows ahead and
         * the lines of the next row (its first PF_ROW_MAX entries) while
         * this one computes; its first line alone left the rest to the
         * hardware's prefetch, which starts late on a short row (later
         * epochs 0.89x on news20.binary and the 1M-row set, one thread). */
        if (HOG_LIKELY(i + 2 < count))
            __builtin_prefetch(&m.off[order[i + 2]]);
        if (HOG_LIKELY(i + 1 < count)) {
            uint64_t nx = m.off[order[i + 1]];
            uint64_t ne = m.off[order[i + 1] + 1];
            if (ne - nx > PF_ROW_MAX)
                ne = nx + PF_ROW_MAX;
            for (uint64_t e = nx; e < ne; e += 16) {
                __builtin_prefetch(m.idx + e);
                __builtin_prefetch(m.val + e);
            }
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
            hog_sgd_tally_add(tally, spec.loss, spec.lp, y, mg, w);
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
    KIND_AVG,        /* averaged: stamped (l1 and l2 any), iterates summed */
    KIND_COUNT
};

/* What each kind is; read with constant indices in the generated
 * functions, so the compiler folds it. */
static const struct {
    bool ada;
    enum hog_sgd_reg reg;
    bool l1;
    bool ftrl, avg;
} kinds[KIND_COUNT] = {
    [KIND_PLAIN] = { false, HOG_SGD_REG_NONE, false },
    [KIND_SCALED] = { false, HOG_SGD_REG_SCALED, false },
    [KIND_STAMPED_L1] = { false, HOG_SGD_REG_STAMPED, true },
    [KIND_ADA] = { true, HOG_SGD_REG_NONE, false },
    [KIND_ADA_L2] = { true, HOG_SGD_REG_STAMPED, false },
    [KIND_ADA_L1] = { true, HOG_SGD_REG_STAMPED, true },
    [KIND_FTRL] = { false, HOG_SGD_REG_NONE, false, true },
    [KIND_AVG] = { false, HOG_SGD_REG_STAMPED, true, false, true },
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
    X(FTRL, __VA_ARGS__)                                                      \
    X(AVG, __VA_ARGS__)
#define KIND_ONE(K, ...) +1
_Static_assert(0 FOR_EACH_KIND(KIND_ONE, ) == KIND_COUNT,
               "FOR_EACH_KIND lists every kind");
#undef KIND_ONE

static ALWAYS_INLINE struct spec spec_of(hog_loss loss, enum kind k, bool cas)
{
    return (struct spec){ .loss = loss, .ada = kinds[k].ada,
                          .reg = kinds[k].reg, .l1 = kinds[k].l1,
                          .cas = cas, .ftrl = kinds[k].ftrl,
                          .avg = kinds[k].avg };
}

/* A weighted kind: the loss read at run time (one switch per row, in
 * hog_loss_deriv and the choice of prefetch), everything else folded.
 * The losses past the first four run here too, weighted or not (a row
 * without weights weighs 1, and d * 1 is d): their derivative is a call
 * through their row of hog_loss_rows either way. */
static ALWAYS_INLINE struct spec spec_weighted(const struct hog_sgd *s,
                                               enum kind k, bool cas)
{
    struct spec p = spec_of(s->loss, k, cas);
    p.weighted = true;
    p.lp = s->loss_param;
    return p;
}

/* The losses with loops of their own (run_table, split_table). */
#define SPECIALISED_LOSSES ((int)HOG_LOSS_SQUARED + 1)
static bool specialised(const struct hog_sgd *s)
{
    return (int)s->loss < SPECIALISED_LOSSES;
}

/* The kind of s. */
static enum kind variant(const struct hog_sgd *s)
{
    if (s->schedule == HOG_SCHED_FTRL)
        return KIND_FTRL;
    if (s->schedule == HOG_SCHED_ADAGRAD)
        return s->l1 > 0 ? KIND_ADA_L1 : s->l2 > 0 ? KIND_ADA_L2 : KIND_ADA;
    if (s->asum)
        return KIND_AVG;
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
static run_fn *const run_table[SPECIALISED_LOSSES][2][KIND_COUNT] = {
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
 * just before the kernel reads it into a buffer the call holds alone (one
 * of those hog_sgd_init made); the loops above are untouched. */
static void run_crossed(const struct hog_sgd *s, const hog_data *d,
                        const uint64_t *order, uint64_t count, uint32_t t,
                        uint32_t stride, const struct hog_sgd_locks *l,
                        struct hog_sgd_tally *tl, struct spec spec)
{
    struct hog_cross_buf *xb = hog_cross_bufs_take(&s->xbufs);
    /* made for the rows of the data s was set up with: other data with
     * longer crossed rows is the caller's bug */
    assert(xb && xb->cap >= d->cross_row_max);
    spec.crossed = true;
    run_impl(s, d, order, count, t, stride, l, spec, xb, tl);
    hog_cross_bufs_give(xb);
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
    return d->row_w || !specialised(s) ? run_w_table[cas][variant(s)]
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

double hog_sgd_step(const struct hog_sgd *s, struct hog_row r, double y,
                    uint32_t t)
{
    double dv;
    struct spec p = spec_of(s->loss, variant(s), false);
    p.lp = s->loss_param;
    return step_impl(s, r, y, 1.0, t, 0.0, true, &dv, p);
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
static hog_sgd_split_fn *const split_table[SPECIALISED_LOSSES][KIND_COUNT] = {
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
    return weighted || !specialised(s) ? split_w_table[variant(s)]
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
