/*
 * The kernel of multinomial logistic regression (--multiclass softmax): K
 * classes, one weight vector w_c per class, trained by SGD (the trainers:
 * hogwild/softmax.c serial, Hogwild! and streamed; cyclades/).
 *
 * Objective (n rows, labels y_i in 0..K-1, scores s_c = w_c.x + b_c with
 * the bias a feature of constant value opts.bias, regularized like the
 * others as in the binary trainers):
 *
 *     F(W) = (1/n) sum_i CE(y_i, softmax(W x_i)) + l2/2 |W|^2 + l1 |W|_1,
 *     CE(y, p) = -log p_y,   softmax(s)_c = exp(s_c) / sum_d exp(s_d).
 *
 * Step t on row x of class y: the K scores s, p = softmax(s) and the score
 * gradient g_c = p_c - [c == y] (hog_softmax_score_grad; times the row's
 * weight when the data has row weights: the weighted objective's
 * (1/n) sum_i v_i CE_i), then for every weight, as the binary kernel's
 * eager update (src/core/sgd.c),
 *
 *     W[j][c] <- S_{b}( (1 - a) W[j][c] - eta g_c x_j ),
 *
 * with a = eta l2, b = eta l1 and S the soft threshold, the rows in the
 * order and at the steps their trainer gives.
 *
 * Layout. The working weights are FEATURE-MAJOR, w[j * K + c]: a row's
 * nonzero x_j touches the K adjacent weights of feature j, one contiguous
 * run per feature, and the inner loops over c (the margin s_c += w_jc x_j,
 * the step, the catch-ups) are plain loops over arrays that the compiler
 * vectorises. After each epoch the trainers transpose the weights into
 * the model's class-major vectors (hog_softmax_model_slice).
 *
 * Lazy regularization, exactly the binary kernel's (the maths and the
 * proof of equality with the eager update at the top of sgd.c; its
 * prefixes, step sizes and per-coordinate maps are shared through sgd.h),
 * with ONE piece of state per feature, shared by its K weights, since all
 * K weights of a feature are touched by the same rows:
 *
 *   plain    l1 = l2 = 0: the weights as they are.
 *   scaled   l2 only, constant or inverse scaling: w holds W q_t. The K
 *            weights of a feature share the scale q_t, so there is no
 *            per-feature state at all: the scores are (sum w x) / q_t and
 *            the step adds -eta_t g_c x_j q_{t+1}.
 *   stamped  l1 (shared schedules), or AdaGrad with l1 or l2: one stamp
 *            per FEATURE, the first step whose regularization its K
 *            weights lack. A row first brings its features' weights to
 *            step t (the closed form of sgd.c: prefixes q and c for the
 *            shared schedules; (1 - a)^k and its l1 sum for AdaGrad, one
 *            power per feature for its K weights), stores them with stamp
 *            t, computes the scores, and then steps them to stamp t + 1.
 *
 * AdaGrad in its group form: one accumulator per feature,
 *
 *     G_j += sum_c (g_c x_j)^2 = x_j^2 |g|^2,   eta_j = eta / sqrt(eps + G_j),
 *
 * so that the rate of a feature's K weights is one number, their lazy
 * shrink (1 - min(1, eta_j l2))^k one power per touched feature, and the
 * state one float and one stamp per feature, as in the binary kernel (the
 * per-weight form would need K of each: K times the memory, and K powers
 * per feature of a row). It is AdaGrad on the groups {W[j][c]: c}, the
 * diagonal of Duchi, Hazan and Singer's 2011 update with one entry per
 * feature; the rate of a feature falls with its gradient over every class.
 */
#include "core/softmax.h"

#include "core/sparse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* How the weights are kept (the kinds of sgd.c, by schedule and
 * regularizer). */
enum kind {
    KIND_PLAIN,  /* shared schedule, no regularization */
    KIND_SCALED, /* shared schedule, l2 only: w = W q_t */
    KIND_PREFIX, /* shared schedule, l1 (and l2): stamped, prefix catch-up */
    KIND_ADA,    /* AdaGrad, no regularization */
    KIND_ADA_L2, /* AdaGrad, l2 only: stamped */
    KIND_ADA_L1, /* AdaGrad, l1 (and l2): stamped */
    KIND_COUNT
};

/* What one generated kernel is: constants that fold away. shared: Hogwild!
 * (relaxed atomic copies of a feature's weights) or one thread (in place). */
struct spec {
    enum kind kind;
    bool shared;
};

static ALWAYS_INLINE bool is_ada(struct spec p) { return p.kind >= KIND_ADA; }
static ALWAYS_INLINE bool is_stamped(struct spec p)
{
    return p.kind == KIND_PREFIX || p.kind == KIND_ADA_L2 ||
           p.kind == KIND_ADA_L1;
}
static ALWAYS_INLINE bool has_l1(struct spec p)
{
    return p.kind == KIND_PREFIX || p.kind == KIND_ADA_L1;
}

/* The K weights of feature j to compute on. One thread (serial): in place;
 * the array is nobody else's, and _Atomic float has float's layout (as
 * hogwild.c's BLAS averaging assumes). Hogwild!: a private copy in buf by
 * relaxed loads, which put() stores back. */
static ALWAYS_INLINE float *get(const struct hog_softmax *m, uint64_t j,
                                float *buf, struct spec sp)
{
    _Atomic float *a = m->w + j * m->k;
    if (!sp.shared)
        return (float *)a;
    for (uint32_t c = 0; c < m->k; c++)
        buf[c] = hog_f_load(&a[c]);
    return buf;
}

static ALWAYS_INLINE void put(const struct hog_softmax *m, uint64_t j,
                              const float *v, struct spec sp)
{
    if (!sp.shared)
        return;
    _Atomic float *a = m->w + j * m->k;
    for (uint32_t c = 0; c < m->k; c++)
        hog_f_store(&a[c], v[c]);
}

/* ---- the maths -------------------------------------------------------------- */

double hog_softmax_score_grad(const double *s, uint32_t k, uint32_t y,
                              double *g)
{
    double top = s[0];
    for (uint32_t c = 1; c < k; c++)
        top = s[c] > top ? s[c] : top;
    double z = 0;
    for (uint32_t c = 0; c < k; c++)
        z += g[c] = exp(s[c] - top);
    double inv = 1.0 / z;
    for (uint32_t c = 0; c < k; c++)
        g[c] *= inv;
    g[y] -= 1.0;
    return log(z) - (s[y] - top);
}

/* Step t's scalars of the shared schedules (sgd.h's segment): 1/q_t and
 * c_t for the scores and the catch-ups, the step size, its shrink and
 * threshold (scaled: the step size times q_{t+1}). AdaGrad's are per
 * feature. */
struct rates {
    double qt_inv, ct;
    double eta, shrink, thr;
};

static ALWAYS_INLINE struct rates rates_at(const struct hog_softmax *m,
                                           uint32_t t, struct spec sp)
{
    const struct hog_sgd *s = m->sch;
    struct rates r = { 1.0, 0.0, 0.0, 1.0, 0.0 };
    if (is_ada(sp))
        return r;
    r.eta = s->seg_eta[t];
    r.shrink = 1.0 - r.eta * s->l2;
    r.thr = r.eta * s->l1;
    if (sp.kind != KIND_PLAIN) {
        r.qt_inv = 1.0 / s->pre[t].q;
        r.ct = s->pre[t].c;
    }
    if (sp.kind == KIND_SCALED)
        r.eta *= s->pre[t + 1].q;
    return r;
}

/* v, feature j's K weights stamped k, brought to step t > k (qt_inv and ct
 * of step t for the prefix kind). */
static ALWAYS_INLINE void catch_up(const struct hog_softmax *m,
                                   float *restrict v,
                                   uint64_t j, uint32_t k, uint32_t t,
                                   double qt_inv, double ct, struct spec sp)
{
    const uint32_t K = m->k;
    if (sp.kind == KIND_PREFIX) {
        const struct hog_sgd_prefix pk = m->sch->pre[k];
        for (uint32_t c = 0; c < K; c++)
            v[c] = hog_sgd_prefix_catch_up_lanes(pk, v[c], qt_inv, ct);
        return;
    }
    /* AdaGrad: the rate of the untouched steps (G_j has not changed) */
    double eta = hog_sgd_adagrad_rate(m->sch->eta, hog_f_load(&m->g2[j]));
    double a = eta * m->sch->l2;
    a = a < 1.0 ? a : 1.0;
    double q;
    double p = hog_sgd_adagrad_decay(a, t - k, has_l1(sp) ? &q : NULL);
    if (!has_l1(sp)) {
        for (uint32_t c = 0; c < K; c++)
            v[c] = (float)(p * (double)v[c]);
        return;
    }
    double bq = eta * m->sch->l1 * q;
    for (uint32_t c = 0; c < K; c++) {
        /* sgd.c's catch_up_adagrad_g2 in sgd.h's lane form */
        double u = hog_sgd_pos(p * fabs((double)v[c]) - bq);
        v[c] = (float)(copysign(u, (double)v[c]) + 0.0);
    }
}

/* Pass 1 for feature j of value x: its weights brought to step t (stored,
 * stamped t), and s += w_j x. */
static ALWAYS_INLINE void score_feature(const struct hog_softmax *m,
                                        double *restrict s, float *buf,
                                        uint64_t j, double x, uint32_t t,
                                        const struct rates *r, struct spec sp)
{
    const uint32_t K = m->k;
    float *restrict v = get(m, j, buf, sp);
    if (is_stamped(sp)) {
        uint32_t k = hog_u32_load(&m->stamp[j]);
        if (k < t) {
            catch_up(m, v, j, k, t, r->qt_inv, r->ct, sp);
            put(m, j, v, sp);
            hog_u32_store(&m->stamp[j], t);
        }
    }
    for (uint32_t c = 0; c < K; c++)
        s[c] += (double)v[c] * x;
}

/* s += w_j x for a Cyclades hot feature j, its weights as they stand (a
 * batch's rows read them unchanged; only hog_softmax_apply writes them). */
static ALWAYS_INLINE void score_as_stored(const struct hog_softmax *m,
                                          double *restrict s, uint64_t j,
                                          double x)
{
    const float *a = (const float *)(m->w + j * m->k); /* as get() */
    for (uint32_t c = 0; c < m->k; c++)
        s[c] += (double)a[c] * x;
}

/* Pass 2 for feature j of value x: step t with score gradient g (gsq:
 * |g|^2, for AdaGrad). */
static ALWAYS_INLINE void step_feature(const struct hog_softmax *m,
                                       const double *restrict g, double gsq,
                                       float *buf, uint64_t j, double x,
                                       uint32_t t, const struct rates *r,
                                       struct spec sp)
{
    const uint32_t K = m->k;
    float *restrict v = get(m, j, buf, sp);
    double eta = r->eta, shrink = r->shrink, thr = r->thr;
    bool reg = false;
    uint32_t k = 0;
    if (is_stamped(sp)) {
        k = hog_u32_load(&m->stamp[j]);
        if (k < t) /* Hogwild!: another thread stored an older stamp */
            catch_up(m, v, j, k, t, r->qt_inv, r->ct, sp);
        /* k > t: a thread further ahead regularized it past step t; the
         * gradient alone */
        reg = k <= t;
    }
    if (is_ada(sp)) {
        float G = (float)((double)hog_f_load(&m->g2[j]) + x * x * gsq);
        hog_f_store(&m->g2[j], G);
        eta = hog_sgd_adagrad_rate(m->sch->eta, G);
        double a = eta * m->sch->l2;
        shrink = 1.0 - (a < 1.0 ? a : 1.0);
        thr = eta * m->sch->l1;
    }
    const double ex = eta * x;
    if (!reg) {
        for (uint32_t c = 0; c < K; c++)
            v[c] = (float)((double)v[c] - ex * g[c]);
    } else if (!has_l1(sp)) {
        for (uint32_t c = 0; c < K; c++)
            v[c] = (float)(shrink * (double)v[c] - ex * g[c]);
    } else {
        for (uint32_t c = 0; c < K; c++)
            v[c] = hog_sgd_soft_threshold_lanes(
                shrink * (double)v[c] - ex * g[c], thr);
    }
    put(m, j, v, sp);
    if (reg)
        hog_u32_store(&m->stamp[j], t + 1);
}

/* One SGD step on row r of class y and weight rw (NULL: 1) at segment
 * step t; returns the row's cross-entropy before the step. Cyclades' rows
 * (hog_softmax_split_step) add the weights of their hot entries (hot, and
 * the bias with hot_bias) to the scores as they stand, in stored units,
 * and leave them to hog_softmax_apply; everything else passes none. */
static ALWAYS_INLINE double step_row(const struct hog_softmax *m,
                                     struct hog_softmax_work *w,
                                     struct hog_row r, struct hog_row hot,
                                     bool hot_bias, uint32_t y,
                                     const float *rw, uint32_t t,
                                     struct spec sp)
{
    const uint32_t K = m->k;
    double *restrict s = w->s, *restrict g = w->g;
    const struct rates rt = rates_at(m, t, sp);
    const bool bias = m->bias != 0.0 && !hot_bias;
    for (uint32_t c = 0; c < K; c++)
        s[c] = 0.0;
    /* A row's features lie anywhere in the array: the lines of the
     * features a few entries ahead are fetched, for writing (every step
     * writes every weight it reads: the softmax gradient is never 0), as
     * the binary kernel does for the logistic loss. */
    enum { PF = 8 };
    for (uint32_t e = 0; e < r.nnz; e++) {
        if (e + PF < r.nnz) {
            uint64_t jp = r.idx[e + PF];
            __builtin_prefetch(m->w + jp * K, 1);
            __builtin_prefetch(m->w + jp * K + K - 1, 1);
            if (is_stamped(sp))
                __builtin_prefetch(&m->stamp[jp], 1);
            if (is_ada(sp))
                __builtin_prefetch(&m->g2[jp], 1);
        }
        score_feature(m, s, w->buf, r.idx[e], (double)r.val[e], t, &rt, sp);
    }
    if (bias)
        score_feature(m, s, w->buf, m->nf, m->bias, t, &rt, sp);
    for (uint32_t e = 0; e < hot.nnz; e++) {
        if (e + PF < hot.nnz) { /* read only: their step is the batch's */
            const _Atomic float *hp = m->w + (uint64_t)hot.idx[e + PF] * K;
            __builtin_prefetch((const void *)hp);
            __builtin_prefetch((const void *)(hp + K - 1));
        }
        score_as_stored(m, s, hot.idx[e], (double)hot.val[e]);
    }
    if (hot_bias)
        score_as_stored(m, s, m->nf, m->bias);
    if (sp.kind == KIND_SCALED)
        for (uint32_t c = 0; c < K; c++)
            s[c] *= rt.qt_inv;
    double ce = hog_softmax_score_grad(s, K, y, g);
    if (m->tally) { /* the row scored before its step: progressive */
        w->tally.loss += rw ? (double)*rw * ce : ce;
        w->tally.right += hog_scores_argmax(s, K) == y;
        w->tally.rows++;
    }
    if (rw) /* the gradient of the row's weighted cross-entropy */
        for (uint32_t c = 0; c < K; c++)
            g[c] *= (double)*rw;
    double gsq = 0;
    if (is_ada(sp))
        for (uint32_t c = 0; c < K; c++)
            gsq += g[c] * g[c];
    for (uint32_t e = 0; e < r.nnz; e++)
        step_feature(m, g, gsq, w->buf, r.idx[e], (double)r.val[e], t, &rt,
                     sp);
    if (bias)
        step_feature(m, g, gsq, w->buf, m->nf, m->bias, t, &rt, sp);
    return ce;
}

/* count rows of rows[] of d (row i of class cls[i]), the i-th at segment
 * step t + i * stride. */
static ALWAYS_INLINE void run_impl(const struct hog_softmax *m,
                                   struct hog_softmax_work *w,
                                   const hog_data *d, const uint32_t *cls,
                                   const uint64_t *rows, uint64_t count,
                                   uint32_t t, uint32_t stride,
                                   struct spec sp)
{
    const struct hog_csr x = d->m;
    const float *rw = d->row_w;
    for (uint64_t i = 0; i < count; i++, t += stride) {
        if (HOG_LIKELY(i + 1 < count)) {
            uint64_t nx = x.off[rows[i + 1]];
            __builtin_prefetch(x.idx + nx);
            __builtin_prefetch(x.val + nx);
        }
        (void)step_row(m, w, hog_data_row(d, &x, rows[i], &w->xb),
                       (struct hog_row){ 0 }, false, cls[rows[i]],
                       rw ? rw + rows[i] : NULL, t, sp);
    }
}

/* Features [lo, hi) brought to the end of a segment of len steps, stamps
 * reset. No step runs. */
static ALWAYS_INLINE void end_impl(const struct hog_softmax *m, float *buf,
                                   uint64_t lo, uint64_t hi, uint32_t len,
                                   struct spec sp)
{
    const uint32_t K = m->k;
    if (sp.kind == KIND_PLAIN || sp.kind == KIND_ADA)
        return;
    const struct hog_sgd_prefix *pre = m->sch->pre;
    if (sp.kind == KIND_SCALED) {
        const double qinv = 1.0 / pre[len].q;
        for (uint64_t j = lo; j < hi; j++) {
            float *restrict v = get(m, j, buf, sp);
            for (uint32_t c = 0; c < K; c++)
                v[c] = (float)((double)v[c] * qinv);
            put(m, j, v, sp);
        }
        return;
    }
    double qt_inv = 0, ct = 0;
    if (sp.kind == KIND_PREFIX) {
        qt_inv = 1.0 / pre[len].q;
        ct = pre[len].c;
    }
    for (uint64_t j = lo; j < hi; j++) {
        uint32_t k = hog_u32_load(&m->stamp[j]);
        if (k < len) {
            float *v = get(m, j, buf, sp);
            catch_up(m, v, j, k, len, qt_inv, ct, sp);
            put(m, j, v, sp);
        }
        hog_u32_store(&m->stamp[j], 0);
    }
}

/* One specialised kernel per kind, in place (serial, Cyclades) and shared
 * (Hogwild!); Cyclades' split step and hot step in place only. */
typedef void run_fn(const struct hog_softmax *, struct hog_softmax_work *,
                    const hog_data *, const uint32_t *, const uint64_t *,
                    uint64_t, uint32_t, uint32_t);
typedef void end_fn(const struct hog_softmax *, float *, uint64_t, uint64_t,
                    uint32_t);
typedef double split_fn(const struct hog_softmax *, struct hog_softmax_work *,
                        struct hog_row, struct hog_row, bool, uint32_t,
                        const float *, uint32_t);
typedef void apply_fn(const struct hog_softmax *, float *, uint64_t, uint32_t,
                      const double *, double);

#define FOR_EACH_KIND(X, ...)                                                 \
    X(PLAIN, __VA_ARGS__)                                                     \
    X(SCALED, __VA_ARGS__)                                                    \
    X(PREFIX, __VA_ARGS__)                                                    \
    X(ADA, __VA_ARGS__)                                                       \
    X(ADA_L2, __VA_ARGS__)                                                    \
    X(ADA_L1, __VA_ARGS__)
#define KIND_ONE(K, ...) +1
_Static_assert(0 FOR_EACH_KIND(KIND_ONE, ) == KIND_COUNT,
               "FOR_EACH_KIND lists every kind");
#undef KIND_ONE

#define GEN_FNS(K, SH)                                                        \
    static void run_##K##_##SH(const struct hog_softmax *m,                   \
                               struct hog_softmax_work *w, const hog_data *d, \
                               const uint32_t *cls, const uint64_t *rows,     \
                               uint64_t count, uint32_t t, uint32_t stride)   \
    {                                                                         \
        run_impl(m, w, d, cls, rows, count, t, stride,                        \
                 (struct spec){ KIND_##K, SH });                              \
    }                                                                         \
    static void end_##K##_##SH(const struct hog_softmax *m, float *buf,       \
                               uint64_t lo, uint64_t hi, uint32_t len)        \
    {                                                                         \
        end_impl(m, buf, lo, hi, len, (struct spec){ KIND_##K, SH });         \
    }
FOR_EACH_KIND(GEN_FNS, 0)
FOR_EACH_KIND(GEN_FNS, 1)

/* Cyclades (in place): the row step with hot entries, and a hot feature's
 * summed step, step_feature with x = 1 (G_j += sq, the weights move by
 * eta_j g). */
#define GEN_SPLIT(K, ...)                                                     \
    static double split_##K(const struct hog_softmax *m,                      \
                            struct hog_softmax_work *w, struct hog_row r,     \
                            struct hog_row hot, bool hot_bias, uint32_t y,    \
                            const float *rw, uint32_t t)                      \
    {                                                                         \
        return step_row(m, w, r, hot, hot_bias, y, rw, t,                     \
                        (struct spec){ KIND_##K, false });                    \
    }                                                                         \
    static void apply_##K(const struct hog_softmax *m, float *buf,            \
                          uint64_t j, uint32_t t, const double *g, double sq) \
    {                                                                         \
        const struct spec sp = { KIND_##K, false };                           \
        const struct rates rt = rates_at(m, t, sp);                           \
        step_feature(m, g, sq, buf, j, 1.0, t, &rt, sp);                      \
    }
FOR_EACH_KIND(GEN_SPLIT, )

#define RUN_ENTRY(K, SH) [KIND_##K] = run_##K##_##SH,
#define END_ENTRY(K, SH) [KIND_##K] = end_##K##_##SH,
#define SPLIT_ENTRY(K, ...) [KIND_##K] = split_##K,
#define APPLY_ENTRY(K, ...) [KIND_##K] = apply_##K,
static run_fn *const run_table[2][KIND_COUNT] = {
    { FOR_EACH_KIND(RUN_ENTRY, 0) }, { FOR_EACH_KIND(RUN_ENTRY, 1) },
};
static end_fn *const end_table[2][KIND_COUNT] = {
    { FOR_EACH_KIND(END_ENTRY, 0) }, { FOR_EACH_KIND(END_ENTRY, 1) },
};
static split_fn *const split_table[KIND_COUNT] = {
    FOR_EACH_KIND(SPLIT_ENTRY, )
};
static apply_fn *const apply_table[KIND_COUNT] = {
    FOR_EACH_KIND(APPLY_ENTRY, )
};

void hog_softmax_run(const struct hog_softmax *m, bool shared,
                     struct hog_softmax_work *w, const hog_data *d,
                     const uint32_t *cls, const uint64_t *rows,
                     uint64_t count, uint32_t t, uint32_t stride)
{
    run_table[shared][m->kind](m, w, d, cls, rows, count, t, stride);
}

void hog_softmax_end(const struct hog_softmax *m, bool shared, float *buf,
                     uint64_t lo, uint64_t hi, uint32_t len)
{
    end_table[shared][m->kind](m, buf, lo, hi, len);
}

double hog_softmax_split_step(const struct hog_softmax *m,
                              struct hog_softmax_work *w, struct hog_row r,
                              struct hog_row hot, bool hot_bias, uint32_t y,
                              const float *rw, uint32_t t)
{
    return split_table[m->kind](m, w, r, hot, hot_bias, y, rw, t);
}

void hog_softmax_apply(const struct hog_softmax *m, float *buf, uint64_t j,
                       uint32_t t, const double *g, double sq)
{
    apply_table[m->kind](m, buf, j, t, g, sq);
}

void hog_softmax_model_slice(const struct hog_softmax *m, float *out,
                             uint64_t lo, uint64_t hi)
{
    enum { B = 64 }; /* features whose K rows stay in the cache */
    const uint32_t K = m->k;
    for (uint64_t j0 = lo; j0 < hi; j0 += B) {
        uint64_t j1 = hi - j0 < B ? hi : j0 + B;
        for (uint32_t c = 0; c < K; c++) {
            float *o = out + (uint64_t)c * m->nw;
            for (uint64_t j = j0; j < j1; j++)
                o[j] = hog_f_load(&m->w[j * K + c]);
        }
    }
}

/* ---- set-up ------------------------------------------------------------------ */

static enum kind kind_of(const struct hog_sgd *s)
{
    if (s->schedule == HOG_SCHED_ADAGRAD)
        return s->l1 > 0 ? KIND_ADA_L1 : s->l2 > 0 ? KIND_ADA_L2 : KIND_ADA;
    return s->reg == HOG_SGD_REG_STAMPED ? KIND_PREFIX
           : s->reg == HOG_SGD_REG_SCALED ? KIND_SCALED
                                          : KIND_PLAIN;
}

hog_status hog_softmax_classes(const hog_model *mo, const hog_data *d,
                               uint32_t **out, hog_err *err)
{
    const uint64_t n = d->m.rows;
    struct hog_class_index ix;
    uint32_t *cls;
    *out = NULL;
    hog_status st = hog_class_index_init(&ix, mo->classes, mo->n_classes, err);
    if (st != HOG_OK)
        return st;
    if (!(cls = malloc((n ? n : 1) * sizeof *cls))) {
        hog_class_index_free(&ix);
        return hog_errf(err, HOG_ENOMEM, "out of memory for the classes of "
                        "%llu rows", (unsigned long long)n);
    }
    for (uint64_t i = 0; i < n && st == HOG_OK; i++) {
        int64_t c = hog_class_index_find(&ix, (double)d->m.y[i]);
        if (c < 0)
            st = hog_errf(err, HOG_EINVAL, "row %llu's label %g is none of "
                          "the model's %u classes",
                          (unsigned long long)i + 1, (double)d->m.y[i],
                          mo->n_classes);
        else
            cls[i] = (uint32_t)c;
    }
    hog_class_index_free(&ix);
    if (st != HOG_OK)
        free(cls);
    else
        *out = cls;
    return st;
}

hog_status hog_softmax_init(struct hog_softmax *m, const struct hog_sgd *sch,
                            uint32_t k, uint64_t nf, double bias,
                            const float *init, hog_err *err)
{
    *m = (struct hog_softmax){ .sch = sch, .k = k, .nf = nf,
                               .nw = nf + (bias != 0.0), .bias = bias,
                               .kind = kind_of(sch) };
    const uint64_t nw = m->nw ? m->nw : 1;
    const struct spec sp = { (enum kind)m->kind, false };
    if (nw > SIZE_MAX / sizeof(float) / k)
        return hog_errf(err, HOG_ENOMEM, "%u classes x %llu weights do not "
                        "fit this machine's address space", k,
                        (unsigned long long)nw);
    m->w = hog_zalloc(nw * k, sizeof *m->w);
    if (!m->w)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the softmax "
                        "trainer's working weights: %u classes x %llu "
                        "weights (%.1f GiB)", k, (unsigned long long)nw,
                        (double)nw * k * sizeof(float) / (1u << 30));
    if ((is_stamped(sp) && !(m->stamp = hog_zalloc(nw, sizeof *m->stamp))) ||
        (is_ada(sp) && !(m->g2 = hog_zalloc(nw, sizeof *m->g2))))
        return hog_errf(err, HOG_ENOMEM, "out of memory for the softmax "
                        "trainer's per-feature state (%llu features)",
                        (unsigned long long)nw);
    if (init) /* a warm start: its class-major vectors, feature-major */
        for (uint32_t c = 0; c < k; c++)
            for (uint64_t j = 0; j < m->nw; j++)
                m->w[j * k + c] = init[c * m->nw + j];
    return HOG_OK;
}

void hog_softmax_free(struct hog_softmax *m)
{
    free(m->w);
    free(m->stamp);
    free(m->g2);
    m->w = NULL;
    m->stamp = NULL;
    m->g2 = NULL;
}

hog_status hog_softmax_work_init(struct hog_softmax_work *w,
                                 const struct hog_softmax *m,
                                 const hog_data *d, hog_err *err)
{
    /* 2 K doubles, then K floats, in whole cache lines */
    size_t bytes = (size_t)m->k * (2 * sizeof(double) + sizeof(float));
    bytes = (bytes + HOG_CACHELINE - 1) / HOG_CACHELINE * HOG_CACHELINE;
    memset(w, 0, sizeof *w);
    if (!(w->s = aligned_alloc(HOG_CACHELINE, bytes)))
        return hog_errf(err, HOG_ENOMEM, "out of memory for the softmax "
                        "scratch of %u classes", m->k);
    w->g = w->s + m->k;
    w->buf = (float *)(w->g + m->k);
    return hog_cross_buf_init(&w->xb, d, err);
}

void hog_softmax_work_free(struct hog_softmax_work *w)
{
    free(w->s);
    hog_cross_buf_free(&w->xb);
    w->s = w->g = NULL;
    w->buf = NULL;
}

/* ---- checkpoints ------------------------------------------------------------- */

hog_status hog_softmax_state_alloc(const struct hog_softmax *m,
                                   struct hog_train_state *st, hog_err *err)
{
    const uint64_t n = (uint64_t)m->k * m->nw;
    const size_t bytes = (size_t)(n ? n : 1) * sizeof(float);
    st->n_weights = n;
    st->w = calloc(1, bytes);
    st->adagrad_g2 = m->g2 ? calloc(1, bytes) : NULL;
    if (!st->w || (m->g2 && !st->adagrad_g2))
        return hog_errf(err, HOG_ENOMEM, "out of memory for a checkpoint of "
                        "%u classes x %llu weights", m->k,
                        (unsigned long long)m->nw);
    return HOG_OK;
}

void hog_softmax_state_keep(const struct hog_softmax *m, const float *model_w,
                            struct hog_train_state *st)
{
    memcpy(st->w, model_w, st->n_weights * sizeof *st->w);
    for (uint32_t c = 0; st->adagrad_g2 && c < m->k; c++)
        for (uint64_t j = 0; j < m->nw; j++)
            st->adagrad_g2[c * m->nw + j] = hog_f_load(&m->g2[j]);
}

hog_status hog_softmax_state_restore(struct hog_softmax *m,
                                     const struct hog_train_state *r,
                                     uint64_t n, float *model_w, bool *after,
                                     hog_err *err)
{
    const uint64_t K = m->k, nw = m->nw;
    const bool ada = m->g2 != NULL;
    if (!hog_train_state_at_epoch(r, n, after) || r->w_lazy || r->stamp ||
        r->n_weights != K * nw || (r->adagrad_g2 == NULL) != !ada)
        return hog_errf(err, HOG_EINVAL, "softmax training resumes from "
                        "its own checkpoints, written after a whole epoch "
                        "(this one is at row %llu of epoch %llu, or of "
                        "another trainer)", (unsigned long long)r->pos,
                        (unsigned long long)r->epoch);
    for (uint64_t j = 0; j < nw; j++) {
        for (uint64_t c = 0; c < K; c++)
            hog_f_store(&m->w[j * K + c], r->w[c * nw + j]);
        if (ada)
            hog_f_store(&m->g2[j], r->adagrad_g2[j]);
    }
    memcpy(model_w, r->w, K * nw * sizeof *model_w);
    return HOG_OK;
}

void hog_softmax_state_warm(struct hog_softmax *m,
                            const struct hog_train_state *w)
{
    /* the K class-major copies of G_j are alike: class 0's is the group's */
    for (uint64_t j = 0; m->g2 && w->adagrad_g2 && j < m->nw; j++)
        hog_f_store(&m->g2[j], w->adagrad_g2[j]);
}
