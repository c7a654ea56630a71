/*
 * Averaged SGD (Polyak-Ruppert averaging: Bottou's ASGD, Xu 2011,
 * scikit-learn's average): the model is the mean of the iterates
 *
 *     wbar = (1 / |C|) sum_{i in C} w^(i),
 *
 * w^(i) the weights after the run's i-th step (state i; state 0 is the
 * start, never counted) and C the states from the N-th on
 * (hog_train_opts.average = N). Summed eagerly that is O(features) per
 * step; here it is O(1) per weight a row touches, as the lazy
 * regularization is (the maths at the top of sgd.c).
 *
 * Averaging runs on the stamped kind alone, which every shared schedule
 * can take (l1 = 0 is a threshold of 0, l2 = 0 a q of 1): w[j] holds
 * w_j^(k), k its stamp, and asum[j] the sum of its counted states up to
 * k. Untouched from k to e, its states are the catch-up's
 *
 *     w^(i) = sign(v) max(0, |v| q_k - (c_i - c_k)) / q_i,   k < i <= e,
 *
 * positive up to the first i where c_i - c_k >= |v| q_k (c never
 * decreases), 0 from there. With the segment's suffix sums
 * Q_i = sum_{i' >= i} m_i' / q_i' and C_i = sum_{i' >= i} m_i' c_i' / q_i'
 * (struct hog_sgd_asuf; m_i = 1 where state i counts), the sum of the
 * states k+1 .. z-1 (z the first zero, or e + 1) is
 *
 *     sign(v) ((|v| q_k + c_k) (Q_{k+1} - Q_z) - (C_{k+1} - C_z)),
 *
 * z found by bisection over the segment's c, only where the weight died
 * (its catch-up at e is 0). Suffix sums rather than prefix sums: 1/q_i
 * falls over a segment (as far as HOG_SGD_PREFIX_MIN), and a difference
 * of suffix sums that start late is made of the late, small terms, with
 * an error relative to them; prefix sums would carry the early, large
 * terms' rounding into it.
 *
 * A step at t on a weight stamped k <= t adds states k+1 .. t (its
 * catch-up) and state t+1 (the value stored, as rounded to float); a
 * segment's end adds every weight's states up to the end. A Hogwild!
 * thread that finds a weight stamped past its t (k > t: another thread
 * ran ahead) changes state k, so the sum takes the difference. Two
 * threads adding to one sum at once may lose one addition, as Hogwild!
 * may lose a step: the average is of the shared iterates up to the races
 * Hogwild! accepts. Private to the kernel's files (sgd.c, sgd_catchup.c).
 */
#ifndef HOG_SGD_AVG_H
#define HOG_SGD_AVG_H

#include "core/sgd_int.h"

/* 1 where segment state i counts. */
static ALWAYS_INLINE double avg_counts(const struct hog_sgd *s, uint64_t i)
{
    return s->seg_t0 + i >= s->avg_first ? 1.0 : 0.0;
}

/* The sum of the counted states k+1 .. e of the weight whose stored value
 * v has stamp k and which no step touches until e (<= the segment's
 * length). */
static inline double avg_untouched(const struct hog_sgd *s, float v,
                                   uint32_t k, uint32_t e)
{
    if (v == 0.0f || k >= e)
        return 0.0;
    const struct hog_sgd_prefix pk = s->pre[k];
    const double a = fabs((double)v) * pk.q;
    uint32_t z = e + 1;
    /* the catch-up's own test (hog_sgd_prefix_catch_up): alive at i while
     * a - (c_i - c_k) > 0, which only falls as i grows */
    if (!(a - (s->pre[e].c - pk.c) > 0)) {
        uint32_t lo = k + 1, hi = e;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (a - (s->pre[mid].c - pk.c) > 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        z = lo;
    }
    const struct hog_sgd_asuf *u = s->asuf;
    double sum = (a + pk.c) * (u[k + 1].q - u[z].q) - (u[k + 1].c - u[z].c);
    return copysign(sum, (double)v);
}

static ALWAYS_INLINE void avg_add(const struct hog_sgd *s, uint64_t j,
                                  double x)
{
    _Atomic double *p = &s->asum[j];
    hog_d_store(p, hog_d_load(p) + x);
}

/* Step t installed nv over v, which had stamp k (the update of sgd.c's
 * update_sq): the states the weight went through, into its sum. */
static ALWAYS_INLINE void avg_step(const struct hog_sgd *s, uint64_t j,
                                   float v, uint32_t k, uint32_t t, float nv)
{
    avg_add(s, j, k <= t ? avg_untouched(s, v, k, t) +
                               avg_counts(s, (uint64_t)t + 1) * (double)nv
                         : avg_counts(s, k) * ((double)nv - (double)v));
}

#endif
