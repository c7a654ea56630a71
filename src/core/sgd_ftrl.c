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
 * from the value found on failure, as the other kinds do.
 *
 * Here: one-vs-rest's classes in one pass, and the weights and sums out
 * and in. The word and the closed form are sgd_int.h's; the row step
 * (step_ftrl) is sgd.c's, inlined into its loops. */

#include "core/sgd.h"
#include "core/sgd_int.h"

#include <stdlib.h>
#include <string.h>

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
        double d = hog_loss_deriv(loss, s->loss_param,
                                  hog_loss_target(loss, s->wide_pos[c], r.y),
                                  m[c]) * rw;
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

void hog_sgd_ftrl_weights_range(const struct hog_sgd *s, uint64_t steps,
                         float *out, uint64_t lo, uint64_t hi)
{
    const struct ftrl_lam L = ftrl_lam_at(s, steps);
    enum { B = 64 }; /* the words in blocks, the weights in lanes */
    float c[2 * B];
    for (uint64_t j = lo; j < hi; j += B) {
        uint32_t k = hi - j < B ? (uint32_t)(hi - j) : B;
        for (uint32_t i = 0; i < k; i++)
            ftrl_unpack(hog_u64_load(&s->zn[j + i]), &c[2 * i]);
        for (uint32_t i = 0; i < k; i++)
            out[j + i] = ftrl_weight(c[2 * i], c[2 * i + 1], L);
    }
}

void hog_sgd_ftrl_weights(const struct hog_sgd *s, uint64_t steps,
                          float *out)
{
    hog_sgd_ftrl_weights_range(s, steps, out, 0, s->n_weights);
}

void hog_sgd_ftrl_get(const struct hog_sgd *s, float *z, float *r)
{
    for (uint64_t j = 0; j < s->n_weights; j++) {
        float c[2];
        ftrl_unpack(hog_u64_load(&s->zn[j]), c);
        z[j] = c[0];
        r[j] = c[1];
    }
}

void hog_sgd_ftrl_put(struct hog_sgd *s, const float *z, const float *r,
                      uint64_t steps)
{
    for (uint64_t j = 0; j < s->n_weights; j++)
        hog_u64_store(&s->zn[j], ftrl_pack((const float[2]){ z[j], r[j] }));
    s->seg_t0 = steps;
    s->seg_len = 0;
}

