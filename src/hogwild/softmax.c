/*
 * Multinomial logistic regression (--multiclass softmax): K classes, one
 * weight vector w_c per class, trained by SGD, serial or Hogwild!.
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
 * with a = eta l2, b = eta l1 and S the soft threshold; the rows come in
 * the serial trainer's order (hog_rng stream 0 of the seed, a fresh
 * Fisher-Yates permutation each epoch), and Hogwild! threads take the
 * shards and interleaved step numbers of hogwild.c.
 *
 * Layout. The working weights are FEATURE-MAJOR, w[j * K + c]: a row's
 * nonzero x_j touches the K adjacent weights of feature j, one contiguous
 * run per feature, and the inner loops over c (the margin s_c += w_jc x_j,
 * the step, the catch-ups) are plain loops over arrays that the compiler
 * vectorises. After each epoch the weights are transposed into the
 * model's class-major vectors (f->model->w, class c at c * len).
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
 *
 * Hogwild! (Niu, Recht, Ré, Wright 2011): T threads step one shared array
 * with relaxed atomic loads and stores. Thread p trains the rows p, p + T,
 * ... shuffled with its own stream p of the seed, its k-th row being step
 * p + k T of the epoch (hogwild.c's shards and clock), so one thread runs
 * the serial order and gives the serial model bit for bit: the arithmetic
 * is the same code, only the loads and stores differ (a private copy of a
 * feature's K weights by relaxed loads, stored back by relaxed stores).
 * A feature stamped beyond t by a thread further ahead takes the gradient
 * alone; races can lose an update or shrink a weight twice, the noise
 * Hogwild! accepts. Segments end at barriers, where the threads bring
 * their share of the features up to date. Replicas, update modes and
 * hot features are not offered (train.c refuses them with a sentence).
 *
 * Across processes (--world, hog_train_opts.average): the segments end at
 * each of the epoch's averaging blocks, where the K nw weights, current,
 * are replaced by their average over the processes (thread 0, the others
 * at the barrier), as the serial trainer's one vector is; AdaGrad's sums
 * stay each process's own.
 */
#include "core/cross.h"
#include "hogwild/hogwild.h"

#include "core/sgd.h"
#include "io/io.h"
#include "pool/pool.h"

#include <math.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#define ALWAYS_INLINE inline __attribute__((always_inline))

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

/* Per thread: its shard and its scratch, on cache lines of its own. */
struct worker {
    alignas(HOG_CACHELINE) struct hog_rng rng;
    uint64_t *shard; /* its rows, shuffled each epoch */
    uint64_t n;
    /* scratch, one allocation on cache lines of its own: */
    double *s, *g;   /* a row's K scores, and their gradient */
    float *buf;      /* Hogwild!: a private copy of one feature's K weights */
    struct hog_cross_buf xb; /* rows with interactions, crossed (core/cross.h) */
    struct hog_sgd_tally tally; /* its rows' scores this epoch (progress on) */
};

struct softmax {
    /* the problem */
    struct hog_fit *f;
    const hog_data *d;
    uint32_t k;          /* classes */
    uint64_t nf, nw;     /* features; weights per class (nf + bias) */
    double bias;
    enum kind kind;
    struct hog_sgd sch;  /* the schedule and the segment's prefixes, no
                            weights (hog_sgd_init_schedule) */

    /* shared, written by the kernel (relaxed) */
    _Atomic float *w;        /* nw * k, feature-major: w[j * k + c] */
    _Atomic uint32_t *stamp; /* per feature (stamped kinds) */
    _Atomic float *g2;       /* per feature: AdaGrad's G_j */
    uint32_t *cls;           /* per training row: its class */

    /* the threads */
    struct hog_pool *pool;   /* NULL: serial, on the calling thread */
    unsigned nthreads;
    struct worker *wk;
    bool shared;             /* Hogwild!'s relaxed copies, even at T = 1 */
    bool tally;              /* sum the progressive metrics (progress on) */

    /* written by thread 0 between barriers */
    uint64_t t;              /* global step of the next segment */
    uint64_t pos;            /* epoch step where the segment starts */
    uint32_t len;            /* the running segment's length; 0: epoch done */
    unsigned epoch;
    hog_status st;
    hog_err *err;
    atomic_bool cut;         /* a thread saw the cancel flag */

    /* checkpoints, after whole epochs (thread 0) */
    unsigned first;               /* the first epoch to run (> 1: resumed) */
    struct hog_train_state last;  /* the last epoch kept for a checkpoint */
};

/* ---- shared state, relaxed -------------------------------------------------- */

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

/* The K weights of feature j to compute on. One thread (serial): in place;
 * the array is nobody else's, and _Atomic float has float's layout (as
 * hogwild.c's BLAS averaging assumes). Hogwild!: a private copy in buf by
 * relaxed loads, which put() stores back. */
static ALWAYS_INLINE float *get(const struct softmax *m, uint64_t j,
                                float *buf, struct spec sp)
{
    _Atomic float *a = m->w + j * m->k;
    if (!sp.shared)
        return (float *)a;
    for (uint32_t c = 0; c < m->k; c++)
        buf[c] = ld(&a[c]);
    return buf;
}

static ALWAYS_INLINE void put(const struct softmax *m, uint64_t j,
                              const float *v, struct spec sp)
{
    if (!sp.shared)
        return;
    _Atomic float *a = m->w + j * m->k;
    for (uint32_t c = 0; c < m->k; c++)
        st(&a[c], v[c]);
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

static ALWAYS_INLINE struct rates rates_at(const struct softmax *m,
                                           uint32_t t, struct spec sp)
{
    const struct hog_sgd *s = &m->sch;
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
static ALWAYS_INLINE void catch_up(const struct softmax *m, float *restrict v,
                                   uint64_t j, uint32_t k, uint32_t t,
                                   double qt_inv, double ct, struct spec sp)
{
    const uint32_t K = m->k;
    if (sp.kind == KIND_PREFIX) {
        const struct hog_sgd_prefix pk = m->sch.pre[k];
        for (uint32_t c = 0; c < K; c++)
            v[c] = hog_sgd_prefix_catch_up_lanes(pk, v[c], qt_inv, ct);
        return;
    }
    /* AdaGrad: the rate of the untouched steps (G_j has not changed) */
    double eta = hog_sgd_adagrad_rate(m->sch.eta, ld(&m->g2[j]));
    double a = eta * m->sch.l2;
    a = a < 1.0 ? a : 1.0;
    double q;
    double p = hog_sgd_adagrad_decay(a, t - k, has_l1(sp) ? &q : NULL);
    if (!has_l1(sp)) {
        for (uint32_t c = 0; c < K; c++)
            v[c] = (float)(p * (double)v[c]);
        return;
    }
    double bq = eta * m->sch.l1 * q;
    for (uint32_t c = 0; c < K; c++) {
        /* sgd.c's catch_up_adagrad_g2 in sgd.h's lane form */
        double u = hog_sgd_pos(p * fabs((double)v[c]) - bq);
        v[c] = (float)(copysign(u, (double)v[c]) + 0.0);
    }
}

/* Pass 1 for feature j of value x: its weights brought to step t (stored,
 * stamped t), and s += w_j x. */
static ALWAYS_INLINE void score_feature(const struct softmax *m,
                                        double *restrict s, float *buf,
                                        uint64_t j, double x, uint32_t t,
                                        const struct rates *r, struct spec sp)
{
    const uint32_t K = m->k;
    float *restrict v = get(m, j, buf, sp);
    if (is_stamped(sp)) {
        uint32_t k = ld_u32(&m->stamp[j]);
        if (k < t) {
            catch_up(m, v, j, k, t, r->qt_inv, r->ct, sp);
            put(m, j, v, sp);
            st_u32(&m->stamp[j], t);
        }
    }
    for (uint32_t c = 0; c < K; c++)
        s[c] += (double)v[c] * x;
}

/* Pass 2 for feature j of value x: step t with score gradient g (gsq:
 * |g|^2, for AdaGrad). */
static ALWAYS_INLINE void step_feature(const struct softmax *m,
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
        k = ld_u32(&m->stamp[j]);
        if (k < t) /* Hogwild!: another thread stored an older stamp */
            catch_up(m, v, j, k, t, r->qt_inv, r->ct, sp);
        /* k > t: a thread further ahead regularized it past step t; the
         * gradient alone */
        reg = k <= t;
    }
    if (is_ada(sp)) {
        float G = (float)((double)ld(&m->g2[j]) + x * x * gsq);
        st(&m->g2[j], G);
        eta = hog_sgd_adagrad_rate(m->sch.eta, G);
        double a = eta * m->sch.l2;
        shrink = 1.0 - (a < 1.0 ? a : 1.0);
        thr = eta * m->sch.l1;
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
        st_u32(&m->stamp[j], t + 1);
}

/* One SGD step on row r of class y and weight rw (NULL: 1) at segment
 * step t. */
static ALWAYS_INLINE void step_row(const struct softmax *m, struct worker *w,
                                   struct hog_row r, uint32_t y,
                                   const float *rw, uint32_t t,
                                   struct spec sp)
{
    const uint32_t K = m->k;
    double *restrict s = w->s, *restrict g = w->g;
    const struct rates rt = rates_at(m, t, sp);
    const bool bias = m->bias != 0.0;
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
}

/* count rows of rows[] of d (row i of class cls[i]), the i-th at segment
 * step t + i * stride. */
static ALWAYS_INLINE void run_impl(const struct softmax *m, struct worker *w,
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
        step_row(m, w, hog_data_row(d, &x, rows[i], &w->xb), cls[rows[i]],
                 rw ? rw + rows[i] : NULL, t, sp);
    }
}

/* Features [lo, hi) brought to the end of a segment of len steps, stamps
 * reset. No step runs. */
static ALWAYS_INLINE void end_impl(const struct softmax *m, float *buf,
                                   uint64_t lo, uint64_t hi, uint32_t len,
                                   struct spec sp)
{
    const uint32_t K = m->k;
    if (sp.kind == KIND_PLAIN || sp.kind == KIND_ADA)
        return;
    const struct hog_sgd_prefix *pre = m->sch.pre;
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
        uint32_t k = ld_u32(&m->stamp[j]);
        if (k < len) {
            float *v = get(m, j, buf, sp);
            catch_up(m, v, j, k, len, qt_inv, ct, sp);
            put(m, j, v, sp);
        }
        st_u32(&m->stamp[j], 0);
    }
}

/* One specialised kernel per kind, in place (serial) and shared. */
typedef void run_fn(const struct softmax *, struct worker *, const hog_data *,
                    const uint32_t *, const uint64_t *, uint64_t, uint32_t,
                    uint32_t);
typedef void end_fn(const struct softmax *, float *, uint64_t, uint64_t,
                    uint32_t);

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
    static void run_##K##_##SH(const struct softmax *m, struct worker *w,     \
                               const hog_data *d, const uint32_t *cls,        \
                               const uint64_t *rows, uint64_t count,          \
                               uint32_t t, uint32_t stride)                   \
    {                                                                         \
        run_impl(m, w, d, cls, rows, count, t, stride,                        \
                 (struct spec){ KIND_##K, SH });                              \
    }                                                                         \
    static void end_##K##_##SH(const struct softmax *m, float *buf,           \
                               uint64_t lo, uint64_t hi, uint32_t len)        \
    {                                                                         \
        end_impl(m, buf, lo, hi, len, (struct spec){ KIND_##K, SH });         \
    }
FOR_EACH_KIND(GEN_FNS, 0)
FOR_EACH_KIND(GEN_FNS, 1)

#define RUN_ENTRY(K, SH) [KIND_##K] = run_##K##_##SH,
#define END_ENTRY(K, SH) [KIND_##K] = end_##K##_##SH,
static run_fn *const run_table[2][KIND_COUNT] = {
    { FOR_EACH_KIND(RUN_ENTRY, 0) }, { FOR_EACH_KIND(RUN_ENTRY, 1) },
};
static end_fn *const end_table[2][KIND_COUNT] = {
    { FOR_EACH_KIND(END_ENTRY, 0) }, { FOR_EACH_KIND(END_ENTRY, 1) },
};

static enum kind kind_of(const struct hog_sgd *s)
{
    if (s->schedule == HOG_SCHED_ADAGRAD)
        return s->l1 > 0 ? KIND_ADA_L1 : s->l2 > 0 ? KIND_ADA_L2 : KIND_ADA;
    return s->reg == HOG_SGD_REG_STAMPED ? KIND_PREFIX
           : s->reg == HOG_SGD_REG_SCALED ? KIND_SCALED
                                          : KIND_PLAIN;
}

/* ---- the epochs ------------------------------------------------------------- */

static void barrier(struct softmax *m)
{
    if (m->pool)
        hog_pool_barrier(m->pool);
}

/* Thread p's rows of the running segment, epoch steps [pos, pos + len):
 * its k-th row is step p + k T, for k in [*k0, *k1) of its shard. */
static void segment_rows(const struct softmax *m, unsigned p,
                         const struct worker *w, uint64_t *k0, uint64_t *k1)
{
    uint64_t T = m->nthreads, a = m->pos, e = a + m->len;
    *k0 = a <= p ? 0 : (a - p + T - 1) / T;
    *k1 = e <= p ? 0 : (e - p + T - 1) / T;
    if (*k1 > w->n)
        *k1 = w->n;
    if (*k0 > *k1)
        *k0 = *k1;
}

/* The thread's rows of the running segment, a block at a time between
 * which it polls the cancel flag and (thread 0) reports progress. */
static void run_segment(struct softmax *m, unsigned tid)
{
    struct worker *w = &m->wk[tid];
    run_fn *run = run_table[m->shared][m->kind];
    const uint64_t T = m->nthreads, n = m->d->m.rows;
    uint64_t k0, k1;
    segment_rows(m, tid, w, &k0, &k1);
    for (uint64_t k = k0; k < k1;) {
        if (hog_fit_cancelled(m->f))
            atomic_store_explicit(&m->cut, true, memory_order_relaxed);
        if (atomic_load_explicit(&m->cut, memory_order_relaxed))
            return;
        uint64_t blk = k1 - k < HOG_SGD_BLOCK ? k1 - k : HOG_SGD_BLOCK;
        run(m, w, m->d, m->cls, w->shard + k, blk,
            (uint32_t)(tid + k * T - m->pos), (uint32_t)T);
        k += blk;
        if (tid == 0) {
            uint64_t done = k * T;
            m->f->tick(m->f, m->epoch, done < n ? done : n, n);
        }
    }
}

/* The epoch's weights into the model's class-major vectors, features
 * [lo, hi), in blocks of features whose K rows stay in the cache. */
static void model_slice(const struct softmax *m, uint64_t lo, uint64_t hi)
{
    enum { B = 64 };
    const uint32_t K = m->k;
    float *out = m->f->model->w;
    for (uint64_t j0 = lo; j0 < hi; j0 += B) {
        uint64_t j1 = hi - j0 < B ? hi : j0 + B;
        for (uint32_t c = 0; c < K; c++) {
            float *o = out + (uint64_t)c * m->nw;
            for (uint64_t j = j0; j < j1; j++)
                o[j] = ld(&m->w[j * K + c]);
        }
    }
}

/* ---- checkpoints (epoch boundaries) ----------------------------------------- */

/* A checkpoint holds the model's K class-major vectors (n_weights = K nw)
 * and, for AdaGrad, a sum per weight: the K weights of feature j carry
 * their group's G_j alike, so the file has the layout of the weights. */

/* The state after epoch `epoch` into m->last (thread 0, the epoch's model
 * complete in f->model->w, every segment ended). */
static void keep_state(struct softmax *m, unsigned epoch)
{
    struct hog_train_state *st = &m->last;
    st->epoch = epoch;
    st->pos = m->d->m.rows;
    st->t_global = m->t;
    st->rng = m->wk[0].rng;
    if (!st->w) /* no checkpoint file: where training stands, for the message */
        return;
    memcpy(st->w, m->f->model->w, st->n_weights * sizeof *st->w);
    for (uint32_t c = 0; st->g2 && c < m->k; c++)
        for (uint64_t j = 0; j < m->nw; j++)
            st->g2[c * m->nw + j] = ld(&m->g2[j]);
}

static void keep_job(void *m, unsigned epoch) { keep_state(m, epoch); }

/* After an epoch or a cut (thread 0): hog_fit_epoch_checkpoint (fit.h). */
static hog_status checkpoint(struct softmax *m, unsigned epoch, bool cut)
{
    return hog_fit_epoch_checkpoint(m->f, &m->last, epoch, cut, keep_job, m,
                                    m->err);
}

/* Every epoch, on every thread (the serial trainer: the calling thread
 * alone, no barriers). Thread 0 begins the segments, times the epochs and
 * runs the front door's epoch_end while the others wait. */
static void train_job(void *arg, unsigned tid, unsigned nthreads)
{
    struct softmax *m = arg;
    struct worker *w = &m->wk[tid];
    const uint64_t n = m->d->m.rows;
    end_fn *end = end_table[m->shared][m->kind];
    const uint64_t blocks = hog_fit_average_blocks(m->f);
    const uint64_t nb = blocks ? blocks : 1;
    for (unsigned epoch = m->first; epoch <= m->f->o->epochs; epoch++) {
        double t0 = 0;
        if (tid == 0) {
            m->pos = 0;
            m->epoch = epoch;
            t0 = hog_now();
        }
        hog_shuffle_u64(&w->rng, w->shard, w->n);
        w->tally = (struct hog_sgd_tally){ 0 };
        /* Scale-out: the epoch in nb blocks (epoch steps up to n b / nb),
         * whose segments end at the block's end; there, every weight
         * current, thread 0 replaces them by the average across the
         * processes while the others wait (one block and no averaging
         * when alone). An empty block averages too: every process makes
         * the same calls. */
        for (uint64_t b = 1; b <= nb && m->st == HOG_OK; b++) {
            const uint64_t stop = (uint64_t)((unsigned __int128)n * b / nb);
            for (;;) {
                if (tid == 0) {
                    uint64_t left = stop - m->pos;
                    m->len = left == 0 ? 0
                             : hog_sgd_segment_begin(
                                   &m->sch, m->t,
                                   left < UINT32_MAX ? (uint32_t)left
                                                     : UINT32_MAX);
                }
                barrier(m);
                if (m->len == 0)
                    break;
                run_segment(m, tid);
                barrier(m);
                uint64_t lo, hi;
                hog_slice(m->nw, tid, nthreads, &lo, &hi);
                end(m, w->buf, lo, hi, m->len);
                barrier(m);
                if (tid == 0) {
                    m->t += m->len;
                    m->pos += m->len;
                }
            }
            if (blocks) {
                if (tid == 0) /* _Atomic float has float's layout */
                    m->st = hog_fit_average(m->f, (float *)m->w,
                                            m->nw * m->k, m->err);
                barrier(m);
            }
        }
        if (m->st != HOG_OK)
            break;
        uint64_t lo, hi;
        hog_slice(m->nw, tid, nthreads, &lo, &hi);
        model_slice(m, lo, hi);
        barrier(m); /* the epoch's model is complete */
        if (tid == 0) {
            double secs = hog_now() - t0;
            struct hog_sgd_tally all = { 0 }; /* in thread order */
            for (unsigned p = 0; p < m->nthreads; p++)
                hog_sgd_tally_merge(&all, &m->wk[p].tally);
            hog_sgd_tally_report(m->f, &m->sch, &all);
            if (atomic_load_explicit(&m->cut, memory_order_relaxed))
                m->st = checkpoint(m, epoch, true); /* the epoch is partial */
            else if ((m->st = m->f->epoch_end(m->f, epoch, secs, m->err)) ==
                     HOG_OK)
                m->st = checkpoint(m, epoch, false);
        }
        barrier(m);
        if (m->st != HOG_OK)
            break;
    }
}

/* ---- streamed (--stream, serial) ------------------------------------------- */

/* The classes of the window's rows, cls[p] for window row p; a label none
 * of the model's is the sentence classes_of_rows() gives. */
static hog_status window_classes(const struct softmax *m,
                                 const struct hog_class_index *ix,
                                 const struct hog_stream_win *win,
                                 uint32_t *cls, uint64_t done, hog_err *err)
{
    for (uint64_t j = 0; j < win->n; j++) {
        const struct hog_csr *x = &win->d[j].m;
        for (uint64_t r = 0; r < x->rows; r++) {
            int64_t c = hog_class_index_find(ix, (double)x->y[r]);
            if (c < 0)
                return hog_errf(err, HOG_EINVAL, "a row's label %g is none "
                                "of the model's %u classes (the stream's "
                                "rows %llu to %llu of the epoch)",
                                (double)x->y[r], m->k,
                                (unsigned long long)done + 1,
                                (unsigned long long)(done + win->first[win->n]));
            cls[win->first[j] + r] = (uint32_t)c;
        }
    }
    return HOG_OK;
}

/* The serial trainer's epochs with the rows from f->stream, in the order
 * of hog_serial_train_stream (hogwild/serial.c): one window over the whole
 * file is the in-memory serial order, so the model is the in-memory one's
 * bit for bit; smaller windows shuffle the chunks, then the rows of each
 * window. The same kernel, one row at a time with its chunk as the data. */
static hog_status train_stream(struct softmax *m)
{
    struct hog_fit *f = m->f;
    const hog_train_opts *o = f->o;
    hog_err *err = m->err;
    hog_stream *st = f->stream;
    const struct hog_hgb_info *in = hog_stream_info(st);
    const uint64_t n = in->rows, nc = in->n_chunks, W = hog_stream_window(st);
    struct worker *w = &m->wk[0];
    run_fn *run = run_table[0][m->kind];
    end_fn *end = end_table[0][m->kind];
    struct hog_stream_order ord;
    struct hog_stream_win win;
    struct hog_class_index ix;
    memset(&ord, 0, sizeof ord);
    memset(&win, 0, sizeof win);
    memset(&ix, 0, sizeof ix);
    uint32_t *cls = NULL;
    hog_status rc;
    if ((rc = hog_stream_win_init(&win, W, err)) != HOG_OK ||
        (rc = hog_stream_order_init(&ord, in, W, o->seed, err)) != HOG_OK ||
        (rc = hog_class_index_init(&ix, f->model->classes, m->k, err)) !=
            HOG_OK)
        goto out;
    uint64_t most = hog_stream_window_rows_max(in, W);
    if (!(cls = malloc((most ? most : 1) * sizeof *cls))) {
        rc = hog_errf(err, HOG_ENOMEM, "out of memory for the classes of "
                      "%llu rows", (unsigned long long)most);
        goto out;
    }
    const uint64_t *seq = hog_stream_order_epoch(&ord);
    if ((rc = hog_stream_push(st, seq, nc, err)) != HOG_OK)
        goto out;
    for (unsigned epoch = 1; epoch <= o->epochs && rc == HOG_OK; epoch++) {
        double t0 = hog_now();
        w->tally = (struct hog_sgd_tally){ 0 };
        const uint64_t *next_seq = NULL; /* read ahead: the next epoch */
        if (epoch < o->epochs) {
            next_seq = hog_stream_order_epoch(&ord);
            if ((rc = hog_stream_push(st, next_seq, nc, err)) != HOG_OK)
                break;
        }
        struct hog_stream_walk walk;
        hog_stream_walk_begin(&walk, st, &win, &ord, seq);
        uint64_t done = 0;
        while (done < n && rc == HOG_OK) {
            uint64_t left = n - done;
            uint32_t len = hog_sgd_segment_begin(
                &m->sch, m->t, left < UINT32_MAX ? (uint32_t)left : UINT32_MAX);
            for (uint32_t i = 0; i < len && rc == HOG_OK;) {
                uint64_t blk;
                bool fresh;
                if ((rc = hog_stream_walk_next(&walk, &blk, &fresh, err)) !=
                        HOG_OK ||
                    (fresh && (rc = window_classes(m, &ix, &win, cls,
                                                   done + i, err)) != HOG_OK))
                    break;
                blk = blk < len - i ? blk : len - i;
                blk = blk < HOG_SGD_BLOCK ? blk : HOG_SGD_BLOCK;
                for (uint64_t b = 0; b < blk; b++) {
                    uint64_t r;
                    const hog_data *cd = hog_stream_walk_row(&walk, b, &r);
                    run(m, w, cd, cls + win.first[cd - win.d], &r, 1,
                        i + (uint32_t)b, 1);
                }
                i += (uint32_t)blk;
                walk.pos += blk;
                f->tick(f, epoch, done + i, n);
                if (hog_fit_cancelled(f))
                    rc = hog_fit_stream_interrupted(epoch, done + i, err);
            }
            if (rc != HOG_OK)
                break;
            end(m, w->buf, 0, m->nw, len);
            m->t += len;
            done += len;
        }
        hog_stream_win_release(st, &win);
        if (rc != HOG_OK)
            break;
        seq = next_seq;
        model_slice(m, 0, m->nw);
        hog_sgd_tally_report(f, &m->sch, &w->tally);
        rc = f->epoch_end(f, epoch, hog_now() - t0, err);
    }
out:
    hog_stream_win_release(st, &win);
    hog_stream_win_free(&win);
    hog_stream_order_free(&ord);
    hog_class_index_free(&ix);
    free(cls);
    return rc;
}

/* ---- set-up ------------------------------------------------------------------ */

/* Each training row's class (the model's labels come from these rows). */
static hog_status classes_of_rows(struct softmax *m, hog_err *err)
{
    const hog_model *mo = m->f->model;
    uint64_t n = m->d->m.rows;
    struct hog_class_index ix;
    hog_status st = hog_class_index_init(&ix, mo->classes, mo->n_classes, err);
    if (st != HOG_OK)
        return st;
    if (!(m->cls = malloc((n ? n : 1) * sizeof *m->cls))) {
        hog_class_index_free(&ix);
        return hog_errf(err, HOG_ENOMEM, "out of memory for the classes of "
                        "%llu rows", (unsigned long long)n);
    }
    for (uint64_t i = 0; i < n && st == HOG_OK; i++) {
        int64_t c = hog_class_index_find(&ix, (double)m->d->m.y[i]);
        if (c < 0)
            st = hog_errf(err, HOG_EINVAL, "row %llu's label %g is none of "
                          "the model's %u classes",
                          (unsigned long long)i + 1, (double)m->d->m.y[i],
                          mo->n_classes);
        else
            m->cls[i] = (uint32_t)c;
    }
    hog_class_index_free(&ix);
    return st;
}

/* The working weights and the per-feature state; every failure a
 * sentence with the sizes. */
static hog_status alloc_state(struct softmax *m, hog_err *err)
{
    const uint64_t nw = m->nw ? m->nw : 1;
    const bool stamped = m->kind == KIND_PREFIX || m->kind == KIND_ADA_L2 ||
                         m->kind == KIND_ADA_L1;
    const bool ada = m->kind >= KIND_ADA;
    if (nw > SIZE_MAX / sizeof(float) / m->k)
        return hog_errf(err, HOG_ENOMEM, "%u classes x %llu weights do not "
                        "fit this machine's address space", m->k,
                        (unsigned long long)nw);
    m->w = hog_zalloc(nw * m->k, sizeof *m->w);
    if (!m->w)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the softmax "
                        "trainer's working weights: %u classes x %llu "
                        "weights (%.1f GiB)", m->k, (unsigned long long)nw,
                        (double)nw * m->k * sizeof(float) / (1u << 30));
    if ((stamped && !(m->stamp = hog_zalloc(nw, sizeof *m->stamp))) ||
        (ada && !(m->g2 = hog_zalloc(nw, sizeof *m->g2))))
        return hog_errf(err, HOG_ENOMEM, "out of memory for the softmax "
                        "trainer's per-feature state (%llu features)",
                        (unsigned long long)nw);
    const float *init = m->f->init;
    if (init) /* a warm start: its class-major vectors, feature-major */
        for (uint32_t c = 0; c < m->k; c++)
            for (uint64_t j = 0; j < m->nw; j++)
                m->w[j * m->k + c] = init[c * m->nw + j];
    return HOG_OK;
}

/* The threads' shards (rows p, p + T, ...) and scratch. */
static hog_status alloc_workers(struct softmax *m, hog_err *err)
{
    const unsigned T = m->nthreads;
    const uint64_t n = m->d->m.rows;
    m->wk = aligned_alloc(HOG_CACHELINE, T * sizeof *m->wk);
    if (!m->wk)
        return hog_errf(err, HOG_ENOMEM, "out of memory for %u threads", T);
    memset(m->wk, 0, T * sizeof *m->wk);
    for (unsigned p = 0; p < T; p++) {
        struct worker *w = &m->wk[p];
        w->n = m->f->stream ? 0 : n > p ? (n - p + T - 1) / T : 0;
        /* 2 K doubles, then K floats, in whole cache lines */
        size_t bytes = (size_t)m->k * (2 * sizeof(double) + sizeof(float));
        bytes = (bytes + HOG_CACHELINE - 1) / HOG_CACHELINE * HOG_CACHELINE;
        w->shard = malloc((w->n ? w->n : 1) * sizeof *w->shard);
        w->s = aligned_alloc(HOG_CACHELINE, bytes);
        if (!w->shard || !w->s)
            return hog_errf(err, HOG_ENOMEM, "out of memory for the rows "
                            "and scratch of %u threads", T);
        w->g = w->s + m->k;
        w->buf = (float *)(w->g + m->k);
        hog_status st = hog_cross_buf_init(&w->xb, m->d, err);
        if (st != HOG_OK)
            return st;
        for (uint64_t k = 0; k < w->n; k++)
            w->shard[k] = p + k * T;
        /* stream p of the seed: thread 0 of 1 draws the serial order */
        hog_rng_seed(&w->rng, m->f->o->seed, p);
    }
    return HOG_OK;
}

/* Checkpoints: after whole epochs only, as Hogwild!'s (hogwild.c): the
 * threads' places inside an epoch are not one position. Resuming puts the
 * saved weights and sums in place and replays each thread's shuffles from
 * the seed; the serial trainer and one thread continue bit for bit. */
static hog_status checkpoint_setup(struct softmax *m, hog_err *err)
{
    struct hog_fit *f = m->f;
    const struct hog_train_state *r = f->resume;
    const uint64_t n = m->d->m.rows, K = m->k, nw = m->nw;
    struct hog_train_state *last = &m->last;
    m->first = 1;
    hog_rng_seed(&last->rng, f->o->seed, 0);
    if (!f->o->checkpoint && !r)
        return HOG_OK;
    if (f->ckpt_rows)
        return hog_errf(err, HOG_ENOTSUP, "softmax training writes "
                        "checkpoints after whole epochs only "
                        "(--checkpoint-every N, without a rows suffix)");
    const bool ada = m->g2 != NULL;
    size_t bytes = (size_t)(K * nw > 0 ? K * nw : 1) * sizeof(float);
    last->n_weights = K * nw;
    last->pos = n;
    last->w = calloc(1, bytes);
    last->g2 = ada ? calloc(1, bytes) : NULL;
    if (!last->w || (ada && !last->g2))
        return hog_errf(err, HOG_ENOMEM, "out of memory for a checkpoint of "
                        "%u classes x %llu weights", m->k,
                        (unsigned long long)nw);
    if (!r)
        return HOG_OK;
    bool after;
    if (!hog_train_state_at_epoch(r, n, &after) || r->w_raw || r->stamp ||
        r->n_weights != K * nw || (r->g2 == NULL) != !ada)
        return hog_errf(err, HOG_EINVAL, "softmax training resumes from "
                        "its own checkpoints, written after a whole epoch "
                        "(this one is at row %llu of epoch %llu, or of "
                        "another trainer)", (unsigned long long)r->pos,
                        (unsigned long long)r->epoch);
    for (uint64_t j = 0; j < nw; j++) {
        for (uint64_t c = 0; c < K; c++)
            st(&m->w[j * K + c], r->w[c * nw + j]);
        if (ada)
            st(&m->g2[j], r->g2[j]);
    }
    memcpy(last->w, r->w, bytes);
    /* the model too: a checkpoint after the last epoch runs none */
    memcpy(f->model->w, r->w, bytes);
    if (ada)
        memcpy(last->g2, r->g2, bytes);
    last->epoch = r->epoch;
    last->pos = r->pos;
    last->t_global = r->t_global;
    last->rng = r->rng;
    m->t = r->t_global;
    m->first = (unsigned)r->epoch + after;
    for (unsigned p = 0; p < m->nthreads; p++)
        for (unsigned e = 1; e < m->first; e++)
            hog_shuffle_u64(&m->wk[p].rng, m->wk[p].shard, m->wk[p].n);
    return HOG_OK;
}

static void destroy(struct softmax *m)
{
    if (m->wk)
        for (unsigned p = 0; p < m->nthreads; p++) {
            free(m->wk[p].shard);
            free(m->wk[p].s);
            hog_cross_buf_free(&m->wk[p].xb);
        }
    free(m->wk);
    free(m->w);
    free(m->stamp);
    free(m->g2);
    free(m->cls);
    hog_train_state_free(&m->last);
    hog_sgd_free(&m->sch);
}

hog_status hog_softmax_train(struct hog_fit *f, hog_err *err)
{
    const hog_train_opts *o = f->o;
    const hog_model *mo = f->model;
    struct softmax m = { .f = f, .d = f->train, .k = mo->n_classes,
                         .nf = mo->n_features,
                         .nw = hog_model_vector_len(mo), .bias = mo->bias,
                         .err = err, .st = HOG_OK };
    struct hog_topo *topo = NULL;
    atomic_init(&m.cut, false);
    if (m.k < 2 || m.d->n_features != m.nf)
        return hog_errf(err, HOG_EINVAL, "the softmax trainer needs a model "
                        "of K classes over the training data's features");
    if (f->stream) { /* serial, one pass of the chunks per epoch */
        const char *no = o->algo != HOG_ALGO_SERIAL
                             ? "runs --algo serial only"
                         : o->checkpoint || f->resume
                             ? "writes no checkpoints"
                         : o->average ? "does not average across processes"
                         : f->init    ? "takes no warm start"
                                      : NULL;
        if (no)
            return hog_errf(err, HOG_ENOTSUP, "streamed softmax training "
                            "(--stream --multiclass softmax) %s", no);
    }
    hog_status st = hog_sgd_init_schedule(&m.sch, o, m.d, err);
    if (st != HOG_OK)
        return st;
    m.kind = kind_of(&m.sch);
    m.tally = o->progress != NULL;
    if ((!f->stream && (st = classes_of_rows(&m, err)) != HOG_OK) ||
        (st = alloc_state(&m, err)) != HOG_OK)
        goto out;
    if (o->algo == HOG_ALGO_HOGWILD) {
        st = hog_pool_for_opts(o, o->threads, HOG_POOL_BIND_OPTS, &topo,
                               &m.pool, err);
        if (st != HOG_OK)
            goto out;
        m.nthreads = hog_pool_size(m.pool);
        m.shared = true;
    } else {
        m.nthreads = 1;
    }
    if ((st = alloc_workers(&m, err)) != HOG_OK ||
        (st = checkpoint_setup(&m, err)) != HOG_OK)
        goto out;
    if (f->stream)
        m.st = train_stream(&m);
    else if (m.pool)
        hog_pool_run(m.pool, train_job, &m);
    else
        train_job(&m, 0, 1);
    st = m.st;
out:
    destroy(&m);
    hog_pool_destroy(m.pool);
    hog_topo_free(topo);
    return st;
}
