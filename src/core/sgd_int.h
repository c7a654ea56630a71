/*
 * What the pieces of the SGD kernel share, private to them:
 *
 *   sgd.c          the row step of every kind, the loops and their tables,
 *                  the locks of the striped and mutex modes (taken around
 *                  a row inside the loops), Cyclades' entry points (the
 *                  lazy regularization's maths at its top)
 *   sgd_lanes.h    the vector maths: AdaGrad's catch-up (1 - a)^k, scalar
 *                  and in four lanes, with no state (testable alone)
 *   sgd_ada.h      AdaGrad with l2 only: the row step on those lanes
 *   sgd_avg.h      averaged SGD: the sums of the iterates, kept lazily
 *   sgd_ftrl.c     FTRL-Proximal: its maths, one-vs-rest's classes in one
 *                  pass, its weights and sums out and in
 *   sgd_segment.c  set-up, segments, the catch-up at a segment's end, the
 *                  weights out and in
 *   sgd_base.h     below them all: struct hog_sgd, the constants and the
 *                  per-coordinate closed forms (sgd.h declares the
 *                  functions the files above define)
 *
 * The row steps and what they inline stay in one translation unit (sgd.c,
 * with sgd_lanes.h and sgd_ada.h, whose functions are static): the loops'
 * speed rests on the compiler seeing all of it. The other files call down
 * into none of sgd.c, nor into each other but sgd_segment.c into
 * sgd_ftrl.c (an FTRL model's weights).
 */
#ifndef HOG_SGD_INT_H
#define HOG_SGD_INT_H

#include "core/sgd_base.h"

#include "core/loss.h"
#include "core/sparse.h"

#include <math.h>
#include <string.h>

/* The passes of the long rows' steps (sgd_ada.h, sgd.c's FTRL) are
 * NOINLINE (core.h), functions of their own: inlined into the run loops
 * they would compete with the loops' state for the 16 vector registers. */

/* ---- shared state, relaxed (sparse.h's loads and stores; sgd.c) ---------- */

static ALWAYS_INLINE _Atomic float *w_at(const struct hog_sgd *s, uint64_t j)
{
    return &s->w[j];
}

static ALWAYS_INLINE _Atomic uint32_t *stamp_at(const struct hog_sgd *s,
                                                uint64_t j)
{
    return &s->stamp[j];
}

/* Stamped weight v of stamp k brought to step t (shared schedules, l1 > 0);
 * qt_inv and ct are 1/q_t and c_t. */
static ALWAYS_INLINE float catch_up_prefix(const struct hog_sgd_prefix *pre,
                                           float v, uint32_t k, double qt_inv,
                                           double ct)
{
    return hog_sgd_prefix_catch_up(pre[k], v, qt_inv, ct);
}

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
    bool avg;             /* the iterates summed (stamped; sgd_avg.h) */
    double lp;            /* the loss's parameter (hog_sgd.loss_param);
                             read only by the losses of their rows */
};

/* THE one place a row's loss derivative is made, for every kind: d =
 * loss'(y, m), times the row's weight rw in the weighted kinds (the
 * gradient of rw loss; sgd.h). *dout gets d before the weight (Cyclades
 * weighs its hot gradients and curvatures itself). The unweighted kinds
 * never read rw, so their arithmetic is what it was, and a weight of 1
 * changes no bit (d * 1 is d). A zero result writes nothing. */
static ALWAYS_INLINE double row_deriv(struct spec spec, double y, double m,
                                      double rw, double *dout)
{
    double d = hog_loss_deriv(spec.loss, spec.lp, y, m);
    *dout = d;
    if (spec.weighted)
        d *= rw;
    return d;
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
        hog_f_store(wp, v);
        return true;
    }
    return atomic_compare_exchange_weak_explicit(wp, old, v,
                                                 memory_order_relaxed,
                                                 memory_order_relaxed);
}

/* ---- FTRL-Proximal's state (the maths at the top of sgd_ftrl.c) ---------- */

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

/* Entries of a row kept from pass 1 for pass 2; a longer row's earlier
 * blocks are read again in pass 2 (the same values where nothing changed).
 * 2048 rather than 512: news20.binary has 43% of its nonzeros in rows
 * longer than 512 entries and 10% in rows longer than 2048; its epoch
 * took 17.0 ms against 19.4 (median of 10 interleaved runs, 1 thread). */
#define FTRL_BLOCK 2048

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

/* ---- between the files ------------------------------------------------------ */

/* FTRL-Proximal's weights w[lo, hi) after `steps` steps (sgd_ftrl.c). */
void hog_sgd_ftrl_weights_range(const struct hog_sgd *s, uint64_t steps,
                                float *out, uint64_t lo, uint64_t hi);

#endif
