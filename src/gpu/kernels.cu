/*
 * The CUDA backend's kernels: each a static __global__ kernel and a
 * launcher taking the stream (internal.cuh). The minibatch step: the loss
 * derivatives of a batch's margins, the gradient of each column the batch
 * touches from its compact transpose (both summed in double, a warp per
 * row or column, in a fixed order), the update of every weight
 * (regularization or AdaGrad) or of the touched ones only. The hogwild
 * step: each row's coefficient from the weights before the batch, each
 * feature's update averaged over the batch's rows that touch it, then the
 * shrink of the batch's regularization at once. The replica average. The
 * maths is in train.c and gpu.h; the CPU reference of every step is ref.c.
 */
#include "gpu/internal.cuh"

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

/* The thread's index in the grid, and the row of its warp (a warp per
 * row), in 64 bits: in 32, 2^27 rows at 32 threads a row would wrap. */
__device__ static uint64_t thread_index(void)
{
    return (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ static uint64_t warp_item(void) { return thread_index() >> 5; }

/* The warp's sum of v, in a fixed tree: the same bits on every run. */
__device__ static double warp_sum(double v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* dv[i] = loss'(y_i, x_i . w) / m, a warp per row. The margin is summed in
 * double, as the CPU reference sums it: in float, AdaGrad's steps (each
 * touched weight of size about eta) make margins of many large terms that
 * cancel, and their rounding moved weights 7-18x past the 1e-5 relative
 * agreement with the reference in a float emulation on news20.binary. */
__global__ static void k_margin_deriv(uint32_t rows, const int32_t *roff,
                                      const int32_t *col, const float *val,
                                      const float *y, const float *w,
                                      double *dv, int loss, double inv_m)
{
    uint64_t i = warp_item();
    unsigned lane = threadIdx.x & 31;
    if (i >= rows)
        return; /* the whole warp leaves together */
    double s = 0;
    for (int64_t x = roff[i] + (int64_t)lane; x < roff[i + 1]; x += 32)
        s += (double)w[col[x]] * (double)val[x];
    s = warp_sum(s);
    if (lane == 0)
        dv[i] = loss_deriv(loss, y[i], s) * inv_m;
}

cudaError_t launch_margin_deriv(cudaStream_t s, uint32_t rows,
                                const int32_t *roff, const int32_t *col,
                                const float *val, const float *y,
                                const float *w, double *dv, int loss,
                                double inv_m)
{
    k_margin_deriv<<<blocks_for(rows, THREADS / 32), THREADS, 0, s>>>(
        rows, roff, col, val, y, w, dv, loss, inv_m);
    return cudaGetLastError();
}

/* The gradient of the batch's column tcol[u] from its compact transpose,
 * a warp per column, summed in double in a fixed order: into the dense
 * gradient, or (gdense NULL: no regularization, a fixed schedule) straight
 * into the weight, the only ones that move. */
__global__ static void k_grad(uint32_t uniq, const int32_t *toff,
                              const int32_t *trow, const float *tval,
                              const int32_t *tcol, const double *dv,
                              double *gdense, float *w, double eta)
{
    uint64_t u = warp_item();
    unsigned lane = threadIdx.x & 31;
    if (u >= uniq)
        return;
    double g = 0;
    for (int64_t x = toff[u] + (int64_t)lane; x < toff[u + 1]; x += 32)
        g += dv[trow[x]] * (double)tval[x];
    g = warp_sum(g);
    if (lane != 0)
        return;
    int32_t j = tcol[u];
    if (gdense)
        gdense[j] = g;
    else
        w[j] = (float)((double)w[j] - eta * g);
}

cudaError_t launch_grad(cudaStream_t s, uint32_t uniq, const int32_t *toff,
                        const int32_t *trow, const float *tval,
                        const int32_t *tcol, const double *dv,
                        double *gdense, float *w, double eta)
{
    k_grad<<<blocks_for(uniq, THREADS / 32), THREADS, 0, s>>>(
        uniq, toff, trow, tval, tcol, dv, gdense, w, eta);
    return cudaGetLastError();
}

/* Every weight: w <- S_b((1 - a) w - e g), g read and reset to zero. */
__global__ static void k_update_dense(uint64_t n, float *w, double *g,
                                      float *g2, double eta, double l1,
                                      double l2, bool ada)
{
    uint64_t j = thread_index();
    if (j >= n)
        return;
    double gj = g[j];
    if (gj != 0.0)
        g[j] = 0.0;
    double e = eta, a;
    if (ada) {
        double G = (double)g2[j] + gj * gj;
        g2[j] = (float)G;
        e = eta / sqrt(ADAGRAD_EPS + G);
        a = fmin(1.0, e * l2);
    } else {
        a = e * l2;
    }
    w[j] = soft((1.0 - a) * (double)w[j] - e * gj, e * l1);
}

cudaError_t launch_update_dense(cudaStream_t s, uint64_t n, float *w,
                                double *g, float *g2, double eta,
                                double l1, double l2, bool ada)
{
    k_update_dense<<<blocks_for(n, THREADS), THREADS, 0, s>>>(n, w, g, g2, eta,
                                                              l1, l2, ada);
    return cudaGetLastError();
}

/* The hogwild step, a warp per row in three passes (ref.c's ref_hogwild
 * is the same on the CPU). First each row's coefficient
 * c_i = -eta loss'(y_i, x_i . w) from the weights before the batch (all
 * of a batch's rows are in flight at once anyway), and n_j, the batch's
 * rows that touch feature j. */
__global__ static void k_hogwild_coef(uint32_t rows, const int32_t *roff,
                                      const int32_t *col, const float *val,
                                      const float *y, const float *w,
                                      float eta, int loss, float *coef,
                                      uint32_t *cnt)
{
    uint64_t i = warp_item();
    unsigned lane = threadIdx.x & 31;
    if (i >= rows)
        return;
    double s = 0;
    for (int64_t x = roff[i] + (int64_t)lane; x < roff[i + 1]; x += 32) {
        s += (double)w[col[x]] * (double)val[x];
        atomicAdd(&cnt[col[x]], 1u);
    }
    s = warp_sum(s);
    if (lane == 0)
        coef[i] = (float)(-(double)eta * loss_deriv(loss, y[i], s));
}

/* Then w_j += c_i x_ij / n_j: each feature moves by the mean of its rows'
 * updates. Summed, a feature every row touches (the bias) would take B
 * steps from one reading of w and swing (ref.c). */
__global__ static void k_hogwild_add(uint32_t rows, const int32_t *roff,
                                     const int32_t *col, const float *val,
                                     const float *coef, const uint32_t *cnt,
                                     float *w)
{
    uint64_t i = warp_item();
    unsigned lane = threadIdx.x & 31;
    if (i >= rows)
        return;
    float c = coef[i];
    if (c == 0.0f)
        return;
    for (int64_t x = roff[i] + (int64_t)lane; x < roff[i + 1]; x += 32)
        atomicAdd(&w[col[x]], c * val[x] / (float)cnt[col[x]]);
}

/* Last the counts back to zero for the next batch, a thread a nonzero. */
__global__ static void k_hogwild_clear(uint64_t nnz, const int32_t *col,
                                       uint32_t *cnt)
{
    uint64_t x = thread_index();
    if (x < nnz)
        cnt[col[x]] = 0;
}

cudaError_t launch_hogwild(cudaStream_t s, uint32_t rows, uint64_t nnz,
                           const int32_t *roff, const int32_t *col,
                           const float *val, const float *y, float *w,
                           float eta, int loss, float *coef, uint32_t *cnt)
{
    const unsigned rows_per_block = THREADS / 32;
    k_hogwild_coef<<<blocks_for(rows, rows_per_block), THREADS, 0, s>>>(
        rows, roff, col, val, y, w, eta, loss, coef, cnt);
    k_hogwild_add<<<blocks_for(rows, rows_per_block), THREADS, 0, s>>>(
        rows, roff, col, val, coef, cnt, w);
    k_hogwild_clear<<<blocks_for(nnz, THREADS), THREADS, 0, s>>>(nnz, col, cnt);
    return cudaGetLastError();
}

/* |w| <- max(0, P |w| - Q): the L2/L1 shrink of several steps at once. */
__global__ static void k_shrink(uint64_t n, float *w, double P, double Q)
{
    uint64_t j = thread_index();
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
    uint64_t j = thread_index();
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
