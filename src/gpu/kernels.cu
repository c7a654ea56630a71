/*
 * The CUDA backend's kernels: each a static __global__ kernel and a
 * launcher taking the stream (internal.cuh). The minibatch step: the
 * loss derivatives of a batch's margins, the compact gradient scattered
 * into the dense one, the update of every weight (regularization or
 * AdaGrad) or of the touched ones only. The hogwild step: a warp per row
 * with relaxed loads and atomic adds, then the shrink of the batch's
 * regularization at once. The replica average. The maths is in train.c
 * and gpu.h; the CPU reference of every step is ref.c.
 */
#include "gpu/internal.cuh"

#include <cuda/atomic>

#include <cmath>

#define THREADS 256
#define ADAGRAD_EPS 1e-8 /* HOG_ADAGRAD_EPS in core/sgd.h */

/* d loss / d m, as hog_loss_deriv in core/loss.h. */
__device__ static double loss_deriv(int loss, double y, double m)
{
    double z = y * m;
    switch (loss) {
    case HOG_LOSS_LOGISTIC: {
        double s = z > 0 ? exp(-z) / (1.0 + exp(-z)) : 1.0 / (1.0 + exp(z));
        return -y * s;
    }
    case HOG_LOSS_HINGE:
        return z < 1.0 ? -y : 0.0;
    case HOG_LOSS_SQHINGE:
        return z < 1.0 ? -2.0 * y * (1.0 - z) : 0.0;
    default:
        return m - y;
    }
}

__device__ static float soft(double u, double b)
{
    return u > b ? (float)(u - b) : u < -b ? (float)(u + b) : 0.0f;
}

static unsigned blocks_for(uint64_t n, unsigned per_block)
{
    uint64_t b = (n + per_block - 1) / per_block;
    return (unsigned)(b ? b : 1);
}

/* dv[i] = loss'(y_i, margin_i) / m */
__global__ static void k_deriv(uint32_t m, const float *margin,
                               const float *y, float *dv, int loss,
                               double inv_m)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m)
        dv[i] = (float)(loss_deriv(loss, y[i], margin[i]) * inv_m);
}

cudaError_t launch_deriv(cudaStream_t s, uint32_t m, const float *margin,
                         const float *y, float *dv, int loss,
                         double inv_m)
{
    k_deriv<<<blocks_for(m, THREADS), THREADS, 0, s>>>(m, margin, y, dv, loss,
                                                       inv_m);
    return cudaGetLastError();
}

/* gdense[tcol[u]] = gc[u]: the compact gradient into the dense one. */
__global__ static void k_scatter(uint32_t u, const int32_t *tcol,
                                 const float *gc, float *gdense)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < u)
        gdense[tcol[k]] = gc[k];
}

cudaError_t launch_scatter(cudaStream_t s, uint32_t u,
                           const int32_t *tcol, const float *gc,
                           float *gdense)
{
    k_scatter<<<blocks_for(u, THREADS), THREADS, 0, s>>>(u, tcol, gc, gdense);
    return cudaGetLastError();
}

/* Every weight: w <- S_b((1 - a) w - e g), g read and reset to zero. */
__global__ static void k_update_dense(uint64_t n, float *w, float *g,
                                      float *g2, double eta, double l1,
                                      double l2, bool ada)
{
    uint64_t j = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n)
        return;
    float gj = g[j];
    if (gj != 0.0f)
        g[j] = 0.0f;
    double e = eta, a;
    if (ada) {
        double G = (double)g2[j] + (double)gj * gj;
        g2[j] = (float)G;
        e = eta / sqrt(ADAGRAD_EPS + G);
        a = fmin(1.0, e * l2);
    } else {
        a = e * l2;
    }
    w[j] = soft((1.0 - a) * (double)w[j] - e * (double)gj, e * l1);
}

cudaError_t launch_update_dense(cudaStream_t s, uint64_t n, float *w,
                                float *g, float *g2, double eta,
                                double l1, double l2, bool ada)
{
    k_update_dense<<<blocks_for(n, THREADS), THREADS, 0, s>>>(n, w, g, g2, eta,
                                                              l1, l2, ada);
    return cudaGetLastError();
}

/* No regularization, fixed schedule: only the touched weights move. */
__global__ static void k_update_sparse(uint32_t u, const int32_t *tcol,
                                       const float *gc, float *w, double eta)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < u)
        w[tcol[k]] = (float)((double)w[tcol[k]] - eta * (double)gc[k]);
}

cudaError_t launch_update_sparse(cudaStream_t s, uint32_t u,
                                 const int32_t *tcol, const float *gc,
                                 float *w, double eta)
{
    k_update_sparse<<<blocks_for(u, THREADS), THREADS, 0, s>>>(u, tcol, gc, w,
                                                               eta);
    return cudaGetLastError();
}

/* Hogwild! on one GPU: a warp per row. Loads of w are relaxed atomics and
 * the updates atomic adds: lost or stale reads are the noise Hogwild!
 * accepts, torn values are not (as the CPU kernel's relaxed atomics). */
__global__ static void k_hogwild(uint32_t rows, const int32_t *roff,
                                 const int32_t *col, const float *val,
                                 const float *y, float *w, float eta, int loss)
{
    uint32_t row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    unsigned lane = threadIdx.x & 31;
    if (row >= rows)
        return; /* the whole warp leaves together */
    int32_t a = roff[row], b = roff[row + 1];
    float s = 0.0f;
    for (int32_t x = a + (int32_t)lane; x < b; x += 32) {
        cuda::atomic_ref<float, cuda::thread_scope_device> wj(w[col[x]]);
        s += wj.load(cuda::memory_order_relaxed) * val[x];
    }
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_xor_sync(0xffffffffu, s, o);
    float c = (float)(-(double)eta * loss_deriv(loss, y[row], s));
    if (c == 0.0f)
        return;
    for (int32_t x = a + (int32_t)lane; x < b; x += 32)
        atomicAdd(&w[col[x]], c * val[x]);
}

cudaError_t launch_hogwild(cudaStream_t s, uint32_t rows,
                           const int32_t *roff, const int32_t *col,
                           const float *val, const float *y, float *w,
                           float eta, int loss)
{
    const unsigned rows_per_block = THREADS / 32;
    k_hogwild<<<blocks_for(rows, rows_per_block), THREADS, 0, s>>>(
        rows, roff, col, val, y, w, eta, loss);
    return cudaGetLastError();
}

/* |w| <- max(0, P |w| - Q): the L2/L1 shrink of several steps at once. */
__global__ static void k_shrink(uint64_t n, float *w, double P, double Q)
{
    uint64_t j = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n)
        return;
    double v = w[j], u = P * fabs(v) - Q;
    w[j] = u > 0 ? (float)copysign(u, v) : 0.0f;
}

cudaError_t launch_shrink(cudaStream_t s, uint64_t n, float *w,
                          double P, double Q)
{
    k_shrink<<<blocks_for(n, THREADS), THREADS, 0, s>>>(n, w, P, Q);
    return cudaGetLastError();
}

/* w0 <- (w0 + slot_1 + ... + slot_{R-1}) / R, summed in replica order (as
 * hog_gpu_ref_train). */
__global__ static void k_average(uint64_t n, float *w0, const float *slots,
                                 unsigned others, float inv)
{
    uint64_t j = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n)
        return;
    float s = w0[j];
    for (unsigned q = 0; q < others; q++)
        s += slots[(uint64_t)q * n + j];
    w0[j] = s * inv;
}

cudaError_t launch_average(cudaStream_t s, uint64_t n, float *w0,
                           const float *slots, unsigned others,
                           float inv)
{
    k_average<<<blocks_for(n, THREADS), THREADS, 0, s>>>(n, w0, slots, others,
                                                         inv);
    return cudaGetLastError();
}
