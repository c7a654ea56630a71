/*
 * Sparse kernels: dot products, axpy and squared norms over the nonzeros of
 * one row (struct hog_row) or of any (idx, val) run (a CSC column, a row's
 * hot entries). One place for them, used by every algorithm (STYLE #8):
 * model scores (data.c), Cyclades' hot margins, coordinate descent (dcd.c,
 * scd.c), Newton's products (newton/blocks.c) and the GPU step's CPU
 * reference (gpu/ref.c). The SGD row kernel (sgd.c) fuses its dot and
 * update with the lazy regularization and keeps its own loops, on the
 * relaxed loads and stores below.
 *
 * Every sum runs over the entries in their order, in double, from the
 * caller's starting value acc (so that `b + w.x` and `w.x + b` stay the two
 * different roundings they are): a caller moved onto these gets the same
 * bits as its loop did.
 *
 * The _relaxed forms work on shared weights (_Atomic float): lost updates
 * are the price Hogwild! accepts; torn or cached values are not, so loads
 * and stores are atomic but unordered. On x86-64 they compile to plain moves.
 * The shared doubles of coordinate descent have the same relaxed loads and
 * stores (hog_d_*), with adds that may lose an update (_wild) or never do
 * (_cas).
 */
#ifndef HOG_SPARSE_H
#define HOG_SPARSE_H

#include "core/core.h"

#include <stdatomic.h>

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

/* The same by address, for the SGD kernels' own arrays (sgd*.c,
 * softmax.c, Cyclades' hot step): weights and AdaGrad sums, stamps,
 * FTRL's (z, r) words. */
static inline float hog_f_load(const _Atomic float *p)
{
    return atomic_load_explicit((_Atomic float *)p, memory_order_relaxed);
}

static inline void hog_f_store(_Atomic float *p, float v)
{
    atomic_store_explicit(p, v, memory_order_relaxed);
}

static inline uint32_t hog_u32_load(const _Atomic uint32_t *p)
{
    return atomic_load_explicit((_Atomic uint32_t *)p, memory_order_relaxed);
}

static inline void hog_u32_store(_Atomic uint32_t *p, uint32_t v)
{
    atomic_store_explicit(p, v, memory_order_relaxed);
}

static inline uint64_t hog_u64_load(const _Atomic uint64_t *p)
{
    return atomic_load_explicit((_Atomic uint64_t *)p, memory_order_relaxed);
}

static inline void hog_u64_store(_Atomic uint64_t *p, uint64_t v)
{
    atomic_store_explicit(p, v, memory_order_relaxed);
}

/* ---- shared doubles ------------------------------------------------------ */

static inline double hog_d_load(const _Atomic double *p)
{
    return atomic_load_explicit((_Atomic double *)p, memory_order_relaxed);
}

static inline void hog_d_store(_Atomic double *p, double v)
{
    atomic_store_explicit(p, v, memory_order_relaxed);
}

/* A lost update is possible (another writer between the load and store). */
static inline void hog_d_add_wild(_Atomic double *p, double d)
{
    hog_d_store(p, hog_d_load(p) + d);
}

/* Never loses an update: a compare-and-swap loop. Relaxed, since nothing
 * else is published through it; the pool's barrier orders the epochs. */
static inline void hog_d_add_cas(_Atomic double *p, double d)
{
    double old = hog_d_load(p);
    while (!atomic_compare_exchange_weak_explicit(
        p, &old, old + d, memory_order_relaxed, memory_order_relaxed))
        ;
}

/* ---- dot products -------------------------------------------------------- */

/* acc + w . x, plain float weights of length n; indices >= n (features the
 * model has not seen) count as zero. */
static inline double hog_sparse_dot(const float *w, uint64_t n,
                                    struct hog_row r, double acc)
{
    for (uint32_t k = 0; k < r.nnz; k++)
        if (r.idx[k] < n)
            acc += (double)w[r.idx[k]] * r.val[k];
    return acc;
}

/* acc + w . x, plain float weights; every index must be below the
 * weights' length (the data the model was trained on): no bound test. */
static inline double hog_sparse_dot_in(const float *w, struct hog_row r,
                                       double acc)
{
    for (uint32_t k = 0; k < r.nnz; k++)
        acc += (double)w[r.idx[k]] * r.val[k];
    return acc;
}

/* acc + w . x over nnz entries, shared float weights; every index must be
 * below the weights' length. */
static inline double hog_sparse_dot_relaxed_n(const _Atomic float *w,
                                              const uint32_t *idx,
                                              const float *val, uint64_t nnz,
                                              double acc)
{
    for (uint64_t k = 0; k < nnz; k++)
        acc += (double)hog_w_load_relaxed(w, idx[k]) * val[k];
    return acc;
}

/* acc + w . x over the row, shared doubles (every index in range). */
static inline double hog_sparse_dot_d_relaxed(const _Atomic double *w,
                                              struct hog_row r, double acc)
{
    for (uint32_t k = 0; k < r.nnz; k++)
        acc += hog_d_load(&w[r.idx[k]]) * r.val[k];
    return acc;
}

/* acc + w . x over the row, plain doubles (every index in range). */
static inline double hog_sparse_dot_d(const double *w, struct hog_row r,
                                      double acc)
{
    for (uint32_t k = 0; k < r.nnz; k++)
        acc += w[r.idx[k]] * r.val[k];
    return acc;
}

/* acc + |x|^2 over nnz values. */
static inline double hog_sparse_sqnorm(const float *val, uint64_t nnz,
                                       double acc)
{
    for (uint64_t k = 0; k < nnz; k++)
        acc += (double)val[k] * val[k];
    return acc;
}

/* ---- axpy: y += a x ------------------------------------------------------ */

/* Plain doubles, one writer. */
static inline void hog_sparse_axpy_d(double *y, double a, struct hog_row r)
{
    for (uint32_t k = 0; k < r.nnz; k++)
        y[r.idx[k]] += a * r.val[k];
}

/* y += a x^2 elementwise, plain doubles, one writer (a Hessian's
 * diagonal). */
static inline void hog_sparse_axpy_sq_d(double *y, double a, struct hog_row r)
{
    for (uint32_t k = 0; k < r.nnz; k++)
        y[r.idx[k]] += a * ((double)r.val[k] * r.val[k]);
}

/* Shared doubles, relaxed load + store: a racing writer's add may be lost. */
static inline void hog_sparse_axpy_d_wild_n(_Atomic double *y, double a,
                                            const uint32_t *idx,
                                            const float *val, uint64_t nnz)
{
    for (uint64_t k = 0; k < nnz; k++)
        hog_d_add_wild(&y[idx[k]], a * val[k]);
}

/* Shared doubles, compare-and-swap: no add is lost. */
static inline void hog_sparse_axpy_d_cas_n(_Atomic double *y, double a,
                                           const uint32_t *idx,
                                           const float *val, uint64_t nnz)
{
    for (uint64_t k = 0; k < nnz; k++)
        hog_d_add_cas(&y[idx[k]], a * val[k]);
}

#endif
