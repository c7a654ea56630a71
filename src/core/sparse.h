/*
 * Sparse kernels on one row: dot products and axpy. One place for them, used
 * by every algorithm (STYLE #8).
 *
 * The _relaxed forms work on shared weights (_Atomic float): lost updates
 * are the price Hogwild! accepts; torn or cached values are not, so loads
 * and stores are atomic but unordered. On x86-64 they compile to plain moves.
 */
#ifndef HOG_SPARSE_H
#define HOG_SPARSE_H

#include "core/core.h"

_Static_assert(sizeof(_Atomic float) == sizeof(float),
               "shared weights must have the layout of float");

static inline float hog_w_load_relaxed(const _Atomic float *w, uint64_t j)
{
    return atomic_load_explicit((_Atomic float *)&w[j], memory_order_relaxed);
}

static inline void hog_w_store_relaxed(_Atomic float *w, uint64_t j, float v)
{
    atomic_store_explicit(&w[j], v, memory_order_relaxed);
}

/* w . x over the row, plain weights; indices >= n (features the model has
 * not seen) count as zero. */
static inline double hog_sparse_dot(const float *w, uint64_t n,
                                    struct hog_row r)
{
    double s = 0.0;
    for (uint32_t k = 0; k < r.nnz; k++)
        if (r.idx[k] < n)
            s += (double)w[r.idx[k]] * r.val[k];
    return s;
}

/* w . x on shared weights; every index must be below the weights' length. */
static inline double hog_sparse_dot_relaxed(const _Atomic float *w,
                                            struct hog_row r)
{
    double s = 0.0;
    for (uint32_t k = 0; k < r.nnz; k++)
        s += (double)hog_w_load_relaxed(w, r.idx[k]) * r.val[k];
    return s;
}

/* w += a x on shared weights (a racing writer's update may be lost). */
static inline void hog_sparse_axpy_relaxed(_Atomic float *w, double a,
                                           struct hog_row r)
{
    for (uint32_t k = 0; k < r.nnz; k++) {
        uint32_t j = r.idx[k];
        float v = hog_w_load_relaxed(w, j);
        hog_w_store_relaxed(w, j, (float)(v + a * r.val[k]));
    }
}

#endif
