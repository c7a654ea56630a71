/*
 * The solvers' loops over the weights on the pool of the products
 * (newton.h). The ranges are cut from nw alone and each range's partial
 * sums land in its own slot, which the caller adds in range order: which
 * worker ran a range, and how many there were, never reaches a result.
 * Small models (fewer than HOG_NEWTON_VEC_POOL_RANGES ranges) run on the
 * caller, through the same ranges and slots, so the bits do not change
 * where the pool starts being used.
 */
#include "newton/newton.h"

#include <string.h>

struct vec {
    struct hog_newton_blocks *b;
    hog_newton_vec_fn fn;
    void *ctx;
};

static void vec_range(const struct vec *v, uint64_t k)
{
    const struct hog_newton_blocks *b = v->b;
    double *sum = b->vsum + k * HOG_NEWTON_VEC_SUMS;
    uint64_t lo = k * HOG_NEWTON_VEC_RANGE;
    uint64_t hi = lo + HOG_NEWTON_VEC_RANGE < b->nw ? lo + HOG_NEWTON_VEC_RANGE
                                                    : b->nw;
    memset(sum, 0, HOG_NEWTON_VEC_SUMS * sizeof *sum);
    v->fn(v->ctx, lo, hi, sum);
}

static void vec_job(void *arg, unsigned tid, unsigned nt)
{
    const struct vec *v = arg;
    uint64_t lo, hi;
    hog_slice(v->b->nr, tid, nt, &lo, &hi);
    for (uint64_t k = lo; k < hi; k++)
        vec_range(v, k);
}

void hog_newton_vec(struct hog_newton_blocks *b, hog_newton_vec_fn fn,
                    void *ctx, double *sum)
{
    struct vec v = { b, fn, ctx };
    if (b->pool && b->nr >= HOG_NEWTON_VEC_POOL_RANGES)
        hog_pool_run(b->pool, vec_job, &v);
    else
        vec_job(&v, 0, 1);
    if (!sum)
        return;
    for (int q = 0; q < HOG_NEWTON_VEC_SUMS; q++)
        sum[q] = 0.0;
    for (uint64_t k = 0; k < b->nr; k++)
        for (int q = 0; q < HOG_NEWTON_VEC_SUMS; q++)
            sum[q] += b->vsum[k * HOG_NEWTON_VEC_SUMS + q];
}
