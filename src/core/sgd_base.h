/*
 * The SGD kernel's state and its per-coordinate maths: the struct every
 * piece of the kernel steps (sgd.c and the headers it inlines, sgd_ftrl.c,
 * sgd_segment.c, sgd_state.c), the constants that fix its arithmetic, and
 * the closed forms that softmax.c and Cyclades' hot step share with it.
 * No function of the kernel is declared here (core/sgd.h has them), so the
 * kernel's private headers (sgd_int.h, sgd_lanes.h) stand below sgd.c.
 */
#ifndef HOG_SGD_BASE_H
#define HOG_SGD_BASE_H

#include "core/core.h"
#include "core/cross.h"

#include <math.h>

#define HOG_ADAGRAD_EPS 1e-8
/* A segment ends early when the product of the shrink factors would fall
 * below this: 1/product scales the weights stored as float (l2 only), so it
 * must stay far from float's 3.4e38. */
#define HOG_SGD_PREFIX_MIN 1e-20
/* At most this many steps per segment: bounds the prefix arrays to
 * 2^20 * 24 bytes = 24 MiB, for one O(features) catch-up every 2^20 steps. */
#define HOG_SGD_SEG_MAX (UINT32_C(1) << 20)
/* FTRL-Proximal's beta: a coordinate's rate is eta / (beta + sqrt(n_j)),
 * so its first step is about eta sign(g) as AdaGrad's is (sgd_ftrl.c). */
#define HOG_FTRL_BETA 0.01

/* Per segment step s: q = 1 / prod_{r<s} (1 - a_r) and
 * c = sum_{r<s} b_r * q_{r+1}, where a_r = eta_r l2 and b_r = eta_r l1. */
struct hog_sgd_prefix {
    double q, c;
};

/* Averaged SGD's suffix sums over a segment's states i..len (sgd_avg.h):
 * q = sum m_i / q_i and c = sum m_i c_i / q_i, m_i 1 where state i is
 * counted. */
struct hog_sgd_asuf {
    double q, c;
};

/* How the regularization is kept up to date (sgd.c has the maths). */
enum hog_sgd_reg {
    HOG_SGD_REG_NONE = 0, /* l1 = l2 = 0: w holds the weights */
    HOG_SGD_REG_SCALED,   /* l2 only, shared schedule: during a segment w[j]
                             holds w_j q_t, constant between touches */
    HOG_SGD_REG_STAMPED   /* l1, or AdaGrad with l2: w[j] holds w_j as of
                             segment step stamp[j] */
};

struct hog_sgd {
    /* the problem, fixed */
    hog_loss loss;
    double loss_param;    /* epsilon or tau (core/loss.h), else 0 */
    hog_schedule schedule;
    double eta, l1, l2, power, bias;
    double label_pos;     /* classification: y = +1 where label == label_pos */
    uint64_t n_features;  /* the bias weight, if any, is w[n_features] */
    uint64_t n_weights;   /* n_features + (bias != 0) */
    uint64_t rows;        /* n in the schedule eta / (1 + t/n)^power */
    enum hog_sgd_reg reg;
    /* Set by a trainer whose weights no two threads step at once (the
     * serial trainer, Hogwild! with one thread per model, Cyclades'
     * conflict-free rows): then a row's second pass stores its steps
     * without checking that the weights still hold what its first pass
     * read, a check that always holds there (hog_sgd_init: false). */
    bool alone;

    /* shared, written by the kernel (relaxed) */
    _Atomic float *w;         /* the weights (scaled: w_j q_t in a segment) */
    _Atomic float *g2;        /* AdaGrad: sum of squared loss gradients */
    _Atomic uint32_t *stamp;  /* HOG_SGD_REG_STAMPED only: w[j] holds the
                                 regularization of segment steps < stamp[j] */
    _Atomic uint64_t *zn;     /* FTRL-Proximal only, in place of w and g2:
                                 coordinate j's (z_j, r_j = sqrt(n_j)), floats in
                                 one word, so that a row touches one cache
                                 line per entry and a compare-and-swap
                                 installs both (sgd_ftrl.c) */

    /* the segment, written by segment_begin/end only */
    uint64_t seg_t0;          /* global step number of segment step 0 */
    uint32_t seg_len;
    uint32_t seg_cap;         /* most steps segment_begin gives */
    struct hog_sgd_prefix *pre; /* seg_cap + 1 entries (shared schedules
                                   with l1 or l2) */
    double *seg_eta;            /* eta of each segment step (not for AdaGrad) */

    /* One-vs-rest's classes stepped together (hog_sgd_init_wide; 0, NULL
     * otherwise): wide binary problems "label == wide_pos[c]", FTRL-Proximal,
     * their words feature-major in zk (weight j: the z of its wide classes,
     * then their r, each run wide rounded up to 8 floats, from a cache
     * line's start). One thread's: plain memory. */
    uint32_t wide;
    /* wide > 0 takes no interactions (its run crosses no rows), so its
     * arrays and the interactions' buffers share the words: the struct
     * keeps its size, and the run loops, which copy it whole, their code. */
    union {
        struct {
            const double *wide_pos;
            float *zk;
        };
        /* wide = 0, data with interactions: a row buffer for each thread
         * that may run the kernel at once (hog_sgd_init), taken for a run
         * of rows */
        struct hog_cross_bufs xbufs;
    };

    /* Averaged SGD (o->average >= 1; the maths in sgd_avg.h), stamped
     * weights only: asum[j] sums weight j's counted states up to its
     * stamp (relaxed, as w), asuf the open segment's suffix sums
     * (seg_cap + 2 entries). The states counted are those of global index
     * avg_first on (set at the run's first segment), up to avg_end, the
     * last segment's end. NULL, 0: the last iterate. */
    _Atomic double *asum;
    struct hog_sgd_asuf *asuf;
    uint64_t avg_from;  /* o->average: the first step averaged (1-based) */
    uint64_t avg_first, avg_end;
};

/* ---- the per-coordinate maths, shared with softmax.c ------------------------ */

/* S_b(u) = sign(u) max(0, |u| - b), the proximal map of b|.|_1. */
static ALWAYS_INLINE float
hog_sgd_soft_threshold(double u, double b)
{
    if (u > b)
        return (float)(u - b);
    if (u < -b)
        return (float)(u + b);
    return 0.0f;
}

/* A weight v stamped k (pk = its segment's prefix at k) brought to step t
 * with qt_inv = 1/q_t and ct = c_t (shared schedules with l1):
 * sign(v) max(0, |v| q_k - (c_t - c_k)) / q_t. */
static ALWAYS_INLINE float
hog_sgd_prefix_catch_up(struct hog_sgd_prefix pk, float v, double qt_inv,
                        double ct)
{
    if (v == 0.0f)
        return 0.0f;
    double u = fabs((double)v) * pk.q - (ct - pk.c);
    return u > 0 ? (float)copysign(u * qt_inv, (double)v) : 0.0f;
}

/* The two maps above for vector lanes: no branch and no speculated
 * operation (the arithmetic is done on every lane, then max(0, .) is a
 * select), so that a loop of them vectorises under the default
 * -ftrapping-math. The values are the scalar forms', bit for bit: the
 * added +0 turns the -0 that copysign gives in the dead zone of a
 * negative value into the scalar forms' +0 (and changes nothing else);
 * the prefix form's v = 0 case needs c_t >= c_k, true since c never
 * decreases. */
static ALWAYS_INLINE double hog_sgd_pos(double x)
{
    return x > 0 ? x : 0.0;
}

static ALWAYS_INLINE float
hog_sgd_soft_threshold_lanes(double u, double b)
{
    return (float)(copysign(hog_sgd_pos(fabs(u) - b), u) + 0.0);
}

static ALWAYS_INLINE float
hog_sgd_prefix_catch_up_lanes(struct hog_sgd_prefix pk, float v,
                              double qt_inv, double ct)
{
    double u = hog_sgd_pos(fabs((double)v) * pk.q - (ct - pk.c));
    return (float)(copysign(u * qt_inv, (double)v) + 0.0);
}

/* AdaGrad's rate eta / sqrt(eps + g2) of a coordinate whose squared
 * gradients sum to g2, in float as the kernel keeps it (the rate is
 * stored nowhere; every catch-up recomputes it). */
static ALWAYS_INLINE double
hog_sgd_adagrad_rate(double eta, float g2)
{
    return (float)eta / sqrtf((float)HOG_ADAGRAD_EPS + g2);
}

#endif
