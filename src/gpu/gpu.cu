/*
 * The CUDA backend of src/gpu (cuda.h): device discovery, the replicas'
 * device state, the two step kernels, and the replica average.
 *
 * Each GPU operation is a static __global__ kernel, a launcher taking the
 * stream, and an entry point taking the replica. Every CUDA and cuSPARSE
 * call is checked; a failure becomes a hog_status and a sentence naming the
 * call, the GPU and CUDA's reason. The maths is in train.c and gpu.h.
 *
 * Memory per replica: the weights w, and for the minibatch step a dense
 * gradient (zero between steps), the batch's margins and derivatives, its
 * compact gradient and cuSPARSE's work buffer; replica 0 also holds R - 1
 * gather slots for the average. The shard is resident (uploaded once with
 * async copies from page-locked memory) or, when it does not fit, streamed
 * batch by batch through two device slots on a copy stream, so that batch
 * k + 1's upload overlaps batch k's step.
 */
#include "gpu/cuda.h"

#include <cuda/atomic>
#include <cuda_runtime.h>
#include <cusparse.h>
#include <hwloc.h>
#include <hwloc/cudart.h>

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" hog_status hog_errf(hog_err *err, hog_status s, const char *fmt,
                               ...) __attribute__((format(printf, 3, 4)));

#define THREADS 256
#define ADAGRAD_EPS 1e-8 /* HOG_ADAGRAD_EPS in core/sgd.h */

/* ---- errors ------------------------------------------------------------------- */

static const char *mib(char *buf, size_t len, double bytes)
{
    if (bytes >= 1024.0 * 1024 * 1024)
        snprintf(buf, len, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
    else
        snprintf(buf, len, "%.1f MiB", bytes / (1024.0 * 1024));
    return buf;
}

static hog_status cuda_check(cudaError_t e, const char *call, const char *file,
                             int line, hog_err *err)
{
    if (e == cudaSuccess)
        return HOG_OK;
    int dev = -1;
    cudaGetDevice(&dev);
    (void)cudaGetLastError(); /* clear a non-sticky error */
    return hog_errf(err, e == cudaErrorMemoryAllocation ? HOG_ENOMEM : HOG_EIO,
                    "GPU %d: %s failed (%s:%d): %s", dev, call, file, line,
                    cudaGetErrorString(e));
}

static hog_status sparse_check(cusparseStatus_t s, const char *call,
                               const char *file, int line, hog_err *err)
{
    if (s == CUSPARSE_STATUS_SUCCESS)
        return HOG_OK;
    int dev = -1;
    cudaGetDevice(&dev);
    return hog_errf(err,
                    s == CUSPARSE_STATUS_ALLOC_FAILED ? HOG_ENOMEM : HOG_EIO,
                    "GPU %d: %s failed (%s:%d): %s", dev, call, file, line,
                    cusparseGetErrorString(s));
}

/* Inside a function with `hog_status st` and an `out:` label. */
#define CK(call)                                                              \
    do {                                                                      \
        if ((st = cuda_check((call), #call, __FILE__, __LINE__, err)) !=      \
            HOG_OK)                                                           \
            goto out;                                                         \
    } while (0)
#define SK(call)                                                              \
    do {                                                                      \
        if ((st = sparse_check((call), #call, __FILE__, __LINE__, err)) !=    \
            HOG_OK)                                                           \
            goto out;                                                         \
    } while (0)
/* Returns the status at once (nothing to clean up). */
#define CR(call)                                                              \
    do {                                                                      \
        hog_status s_ = cuda_check((call), #call, __FILE__, __LINE__, err);   \
        if (s_ != HOG_OK)                                                     \
            return s_;                                                        \
    } while (0)
#define SR(call)                                                              \
    do {                                                                      \
        hog_status s_ = sparse_check((call), #call, __FILE__, __LINE__, err); \
        if (s_ != HOG_OK)                                                     \
            return s_;                                                        \
    } while (0)

/* ---- devices ------------------------------------------------------------------ */

extern "C" bool hog_cuda_built(void) { return true; }

extern "C" hog_status hog_cuda_count(int *n, hog_err *err)
{
    *n = 0;
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    cudaError_t e = cudaGetDeviceCount(n);
    (void)cudaGetLastError();
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    if (e == cudaSuccess && *n > 0)
        return HOG_OK;
    *n = 0;
    if (e == cudaErrorInsufficientDriver && drv == 0)
        return hog_errf(err, HOG_ENOTSUP,
                        "no CUDA device: no NVIDIA driver is installed on "
                        "this machine (hogtrain was built for CUDA %d.%d)",
                        rt / 1000, rt % 1000 / 10);
    if (e == cudaErrorInsufficientDriver)
        return hog_errf(err, HOG_ENOTSUP,
                        "no CUDA device: the NVIDIA driver supports CUDA "
                        "%d.%d, older than the CUDA %d.%d runtime hogtrain "
                        "was built with; update the driver",
                        drv / 1000, drv % 1000 / 10, rt / 1000,
                        rt % 1000 / 10);
    if (e == cudaSuccess || e == cudaErrorNoDevice)
        return hog_errf(err, HOG_ENOTSUP,
                        "no CUDA device: the driver sees no GPU%s%s%s",
                        vis ? " (CUDA_VISIBLE_DEVICES=" : "", vis ? vis : "",
                        vis ? ")" : "");
    return hog_errf(err, HOG_ENOTSUP, "no CUDA device: %s",
                    cudaGetErrorString(e));
}

/* The GPU's CPUs (hwloc's cudart helper) and the one NUMA node they lie in;
 * -1 when the topology names none or several. set may be NULL. */
static int device_numa(hwloc_topology_t topo, int dev, hwloc_cpuset_t set)
{
    hwloc_cpuset_t cs = set ? set : hwloc_bitmap_alloc();
    int node = -1;
    if (cs && hwloc_cudart_get_device_cpuset(topo, dev, cs) == 0) {
        hwloc_obj_t o = NULL;
        int found = 0;
        while ((o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, o))) {
            if (!hwloc_bitmap_iszero(o->cpuset) &&
                hwloc_bitmap_isincluded(o->cpuset, cs)) {
                node = (int)o->os_index;
                found++;
            } else if (hwloc_bitmap_isincluded(cs, o->cpuset)) {
                node = (int)o->os_index; /* the GPU's CPUs inside one node */
                found = 1;
                break;
            }
        }
        if (found != 1)
            node = -1;
    }
    if (!set && cs)
        hwloc_bitmap_free(cs);
    return node;
}

static bool topo_open(hwloc_topology_t *t)
{
    if (hwloc_topology_init(t) != 0)
        return false;
    if (hwloc_topology_load(*t) != 0) {
        hwloc_topology_destroy(*t);
        return false;
    }
    return true;
}

extern "C" hog_status hog_cuda_info(int dev, struct hog_cuda_info *out,
                                    hog_err *err)
{
    memset(out, 0, sizeof *out);
    cudaDeviceProp prop;
    CR(cudaGetDeviceProperties(&prop, dev));
    snprintf(out->name, sizeof out->name, "%s", prop.name);
    CR(cudaDeviceGetPCIBusId(out->pci, (int)sizeof out->pci, dev));
    out->cc_major = prop.major;
    out->cc_minor = prop.minor;
    out->sms = prop.multiProcessorCount;
    out->mem_total = prop.totalGlobalMem;
    size_t fr = 0, tot = 0;
    CR(cudaSetDevice(dev));
    CR(cudaMemGetInfo(&fr, &tot));
    out->mem_free = fr;
    out->mem_total = tot;
    out->numa = -1;
    hwloc_topology_t topo;
    if (topo_open(&topo)) {
        out->numa = device_numa(topo, dev, NULL);
        hwloc_topology_destroy(topo);
    }
    return HOG_OK;
}

extern "C" int hog_cuda_bind_near(int dev)
{
    /* This thread's CUDA calls (page-locked allocations) go to dev. */
    if (cudaSetDevice(dev) != cudaSuccess)
        (void)cudaGetLastError();
    hwloc_topology_t topo;
    if (!topo_open(&topo))
        return -1;
    hwloc_cpuset_t cs = hwloc_bitmap_alloc();
    int node = -1;
    if (cs) {
        node = device_numa(topo, dev, cs);
        if (!hwloc_bitmap_iszero(cs) &&
            hwloc_set_cpubind(topo, cs, HWLOC_CPUBIND_THREAD) != 0)
            node = -1;
        hwloc_bitmap_free(cs);
    }
    hwloc_topology_destroy(topo);
    return node;
}

extern "C" void *hog_cuda_host_alloc(size_t bytes)
{
    void *p = NULL;
    if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return p;
}

extern "C" void hog_cuda_host_free(void *p)
{
    if (p)
        cudaFreeHost(p);
}

extern "C" hog_status hog_cuda_copy_bandwidth(int dev, size_t bytes,
                                              double *bytes_per_s,
                                              hog_err *err)
{
    hog_status st = HOG_OK;
    void *a = NULL, *b = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    cudaStream_t s = NULL;
    const int iters = 20;
    float ms = 0;
    *bytes_per_s = 0;
    CK(cudaSetDevice(dev));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMemsetAsync(a, 1, bytes, s));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int i = 0; i < 2; i++) /* warm up */
        CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s));
    CK(cudaEventRecord(e0, s));
    for (int i = 0; i < iters; i++)
        CK(cudaMemcpyAsync(i % 2 ? a : b, i % 2 ? b : a, bytes,
                           cudaMemcpyDeviceToDevice, s));
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    /* A copy reads and writes each byte. */
    *bytes_per_s = ms > 0 ? 2.0 * (double)bytes * iters / (ms * 1e-3) : 0;
out:
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    if (s)
        cudaStreamDestroy(s);
    return st;
}

/* ---- kernels -------------------------------------------------------------------- */

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

static cudaError_t launch_deriv(cudaStream_t s, uint32_t m, const float *margin,
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

static cudaError_t launch_scatter(cudaStream_t s, uint32_t u,
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

static cudaError_t launch_update_dense(cudaStream_t s, uint64_t n, float *w,
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

static cudaError_t launch_update_sparse(cudaStream_t s, uint32_t u,
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

static cudaError_t launch_hogwild(cudaStream_t s, uint32_t rows,
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

static cudaError_t launch_shrink(cudaStream_t s, uint64_t n, float *w,
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

static cudaError_t launch_average(cudaStream_t s, uint64_t n, float *w0,
                                  const float *slots, unsigned others,
                                  float inv)
{
    k_average<<<blocks_for(n, THREADS), THREADS, 0, s>>>(n, w0, slots, others,
                                                         inv);
    return cudaGetLastError();
}

/* ---- the trainer ------------------------------------------------------------------ */

/* Where a batch's arrays are on the device. */
struct dbatch {
    int32_t *roff, *col, *tcol, *toff, *trow;
    float *val, *y, *tval;
};

struct slot {
    struct dbatch a;
    cudaEvent_t ready, free_;
};

enum link { LINK_SAME = 0, LINK_PEER, LINK_HOST };

struct replica {
    int dev;
    const struct hog_cuda_shard *sh;
    cudaStream_t s, copy;
    cusparseHandle_t sp;
    cudaEvent_t done;
    struct dbatch whole; /* resident shard */
    struct slot slot[2]; /* streamed shard */
    uint64_t turn;
    float *w, *gdense, *g2, *margin, *dv, *gc;
    void *buf;
    size_t buf_cap;
    cusparseDnVecDescr_t wvec;
    float *gather;       /* replica 0: R - 1 slots of n_weights */
    enum link link;      /* how this replica reaches replica 0 */
    float *stage;        /* LINK_HOST: page-locked n_weights */
};

struct hog_cuda_trainer {
    struct hog_cuda_params p;
    unsigned R;
    bool streaming;
    struct replica r[];
};

extern "C" bool hog_cuda_streaming(const hog_cuda_trainer *t)
{
    return t && t->streaming;
}

static hog_status dev_alloc(void **p, size_t bytes, const struct replica *r,
                            const char *what, hog_err *err)
{
    *p = NULL;
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 4);
    if (e == cudaSuccess)
        return HOG_OK;
    (void)cudaGetLastError();
    if (e != cudaErrorMemoryAllocation)
        return cuda_check(e, "cudaMalloc", __FILE__, __LINE__, err);
    size_t fr = 0, tot = 0;
    cudaMemGetInfo(&fr, &tot);
    (void)cudaGetLastError();
    char a[32], b[32], c[32];
    return hog_errf(err, HOG_ENOMEM,
                    "out of memory on GPU %d: %s for %s, with %s free of %s; "
                    "use a smaller --gpu-batch, or more GPUs (shards that do "
                    "not fit are streamed, but the weights and one batch "
                    "must fit)",
                    r->dev, mib(a, sizeof a, (double)bytes), what,
                    mib(b, sizeof b, (double)fr), mib(c, sizeof c, (double)tot));
}

#define DALLOC(ptr, n, what)                                                  \
    do {                                                                      \
        if ((st = dev_alloc((void **)&(ptr), (size_t)(n) * sizeof *(ptr), r,  \
                            what, err)) != HOG_OK)                            \
            goto out;                                                         \
    } while (0)

/* Device bytes of a batch layout: rows, nnz, uniq, and how many batches. */
static uint64_t layout_bytes(uint64_t rows, uint64_t offs, uint64_t nnz,
                             uint64_t uniq, uint64_t toffs, bool transpose)
{
    uint64_t b = rows * 4 + offs * 4 + nnz * 8;
    if (transpose)
        b += uniq * 4 + toffs * 4 + nnz * 8;
    return b;
}

static hog_status alloc_layout(struct dbatch *a, uint64_t rows, uint64_t offs,
                               uint64_t nnz, uint64_t uniq, uint64_t toffs,
                               bool transpose, const struct replica *r,
                               hog_err *err)
{
    hog_status st = HOG_OK;
    DALLOC(a->y, rows, "the labels");
    DALLOC(a->roff, offs, "the row offsets");
    DALLOC(a->col, nnz, "the column indices");
    DALLOC(a->val, nnz, "the values");
    if (transpose) {
        DALLOC(a->tcol, uniq, "the transposes' columns");
        DALLOC(a->toff, toffs, "the transposes' offsets");
        DALLOC(a->trow, nnz, "the transposes' rows");
        DALLOC(a->tval, nnz, "the transposes' values");
    }
out:
    return st;
}

static void free_layout(struct dbatch *a)
{
    cudaFree(a->y);
    cudaFree(a->roff);
    cudaFree(a->col);
    cudaFree(a->val);
    cudaFree(a->tcol);
    cudaFree(a->toff);
    cudaFree(a->trow);
    cudaFree(a->tval);
    memset(a, 0, sizeof *a);
}

/* Queues the copy of batch b of shard sh into the device slot dst. */
static hog_status copy_batch(struct dbatch *dst, const struct hog_cuda_shard *sh,
                             const struct hog_cuda_batch *b, bool transpose,
                             cudaStream_t s, hog_err *err)
{
    CR(cudaMemcpyAsync(dst->y, sh->y + b->at_row, b->rows * sizeof(float),
                       cudaMemcpyHostToDevice, s));
    CR(cudaMemcpyAsync(dst->roff, sh->roff + b->at_off,
                       (b->rows + 1) * sizeof(int32_t), cudaMemcpyHostToDevice,
                       s));
    if (b->nnz) {
        CR(cudaMemcpyAsync(dst->col, sh->col + b->at_nnz,
                           b->nnz * sizeof(int32_t), cudaMemcpyHostToDevice,
                           s));
        CR(cudaMemcpyAsync(dst->val, sh->val + b->at_nnz,
                           b->nnz * sizeof(float), cudaMemcpyHostToDevice, s));
    }
    if (transpose) {
        CR(cudaMemcpyAsync(dst->toff, sh->toff + b->at_toff,
                           (b->uniq + 1) * sizeof(int32_t),
                           cudaMemcpyHostToDevice, s));
        if (b->uniq)
            CR(cudaMemcpyAsync(dst->tcol, sh->tcol + b->at_uniq,
                               b->uniq * sizeof(int32_t),
                               cudaMemcpyHostToDevice, s));
        if (b->nnz) {
            CR(cudaMemcpyAsync(dst->trow, sh->trow + b->at_nnz,
                               b->nnz * sizeof(int32_t),
                               cudaMemcpyHostToDevice, s));
            CR(cudaMemcpyAsync(dst->tval, sh->tval + b->at_nnz,
                               b->nnz * sizeof(float), cudaMemcpyHostToDevice,
                               s));
        }
    }
    return HOG_OK;
}

/* Queues a whole shard's upload, in pieces of at most 64 MiB (so that the
 * copy engine interleaves with other streams). */
static hog_status upload(void *dst, const void *src, size_t bytes,
                         cudaStream_t s, hog_err *err)
{
    const size_t piece = (size_t)64 << 20;
    for (size_t at = 0; at < bytes; at += piece) {
        size_t n = bytes - at < piece ? bytes - at : piece;
        CR(cudaMemcpyAsync((char *)dst + at, (const char *)src + at, n,
                           cudaMemcpyHostToDevice, s));
    }
    return HOG_OK;
}

static hog_status upload_shard(struct replica *r, bool transpose, hog_err *err)
{
    const struct hog_cuda_shard *sh = r->sh;
    hog_status st;
    if ((st = upload(r->whole.y, sh->y, sh->n_y * 4, r->copy, err)) ||
        (st = upload(r->whole.roff, sh->roff, sh->n_roff * 4, r->copy, err)) ||
        (st = upload(r->whole.col, sh->col, sh->n_nnz * 4, r->copy, err)) ||
        (st = upload(r->whole.val, sh->val, sh->n_nnz * 4, r->copy, err)))
        return st;
    if (transpose &&
        ((st = upload(r->whole.tcol, sh->tcol, sh->n_tcol * 4, r->copy, err)) ||
         (st = upload(r->whole.toff, sh->toff, sh->n_toff * 4, r->copy, err)) ||
         (st = upload(r->whole.trow, sh->trow, sh->n_nnz * 4, r->copy, err)) ||
         (st = upload(r->whole.tval, sh->tval, sh->n_nnz * 4, r->copy, err))))
        return st;
    /* The first step waits for the upload. */
    CR(cudaEventRecord(r->done, r->copy));
    CR(cudaStreamWaitEvent(r->s, r->done, 0));
    return HOG_OK;
}

static void replica_free(struct replica *r)
{
    if (r->dev < 0)
        return;
    cudaSetDevice(r->dev);
    if (r->s)
        cudaStreamSynchronize(r->s);
    if (r->copy)
        cudaStreamSynchronize(r->copy);
    (void)cudaGetLastError();
    free_layout(&r->whole);
    for (int i = 0; i < 2; i++) {
        free_layout(&r->slot[i].a);
        if (r->slot[i].ready)
            cudaEventDestroy(r->slot[i].ready);
        if (r->slot[i].free_)
            cudaEventDestroy(r->slot[i].free_);
    }
    if (r->wvec)
        cusparseDestroyDnVec(r->wvec);
    if (r->sp)
        cusparseDestroy(r->sp);
    cudaFree(r->w);
    cudaFree(r->gdense);
    cudaFree(r->g2);
    cudaFree(r->margin);
    cudaFree(r->dv);
    cudaFree(r->gc);
    cudaFree(r->buf);
    cudaFree(r->gather);
    if (r->stage)
        cudaFreeHost(r->stage);
    if (r->done)
        cudaEventDestroy(r->done);
    if (r->s)
        cudaStreamDestroy(r->s);
    if (r->copy)
        cudaStreamDestroy(r->copy);
    (void)cudaGetLastError();
    r->dev = -1;
}

extern "C" void hog_cuda_trainer_destroy(hog_cuda_trainer *t)
{
    if (!t)
        return;
    for (unsigned q = 0; q < t->R; q++)
        replica_free(&t->r[q]);
    free(t);
}

/* The bytes replicas on device dev need: resident (the shards and work
 * buffers) and streamed (work buffers and two batch slots). */
static void device_need(const hog_cuda_trainer *t,
                        const struct hog_cuda_shard *shards, int dev,
                        uint64_t *resident, uint64_t *streamed)
{
    const bool mb = t->p.step == HOG_GPU_STEP_MINIBATCH;
    const uint64_t nw = t->p.n_weights;
    *resident = *streamed = 0;
    for (unsigned q = 0; q < t->R; q++) {
        const struct hog_cuda_shard *sh = &shards[q];
        if (sh->dev != dev)
            continue;
        uint64_t work = nw * 4;
        if (mb)
            work += nw * 4 + (uint64_t)sh->max_rows * 8 +
                    (uint64_t)sh->max_uniq * 4 + ((uint64_t)64 << 20);
        if (t->p.schedule == HOG_SCHED_ADAGRAD)
            work += nw * 4;
        if (q == 0)
            work += (uint64_t)(t->R - 1) * nw * 4;
        *resident += work + layout_bytes(sh->n_y, sh->n_roff, sh->n_nnz,
                                         sh->n_tcol, sh->n_toff, mb);
        *streamed += work + 2 * layout_bytes(sh->max_rows, sh->max_rows + 1,
                                             sh->max_nnz, sh->max_uniq,
                                             sh->max_uniq + 1, mb);
    }
}

static hog_status replica_init(hog_cuda_trainer *t, unsigned q,
                               const struct hog_cuda_shard *sh, hog_err *err)
{
    struct replica *r = &t->r[q];
    const bool mb = t->p.step == HOG_GPU_STEP_MINIBATCH;
    const uint64_t nw = t->p.n_weights;
    hog_status st = HOG_OK;
    r->dev = sh->dev;
    r->sh = sh;
    CK(cudaSetDevice(r->dev));
    CK(cudaStreamCreateWithFlags(&r->s, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&r->copy, cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&r->done, cudaEventDisableTiming));
    SK(cusparseCreate(&r->sp));
    SK(cusparseSetStream(r->sp, r->s));
    DALLOC(r->w, nw, "the weights");
    CK(cudaMemsetAsync(r->w, 0, nw * 4, r->s));
    if (mb) {
        DALLOC(r->gdense, nw, "the dense gradient");
        CK(cudaMemsetAsync(r->gdense, 0, nw * 4, r->s));
        DALLOC(r->margin, sh->max_rows, "the margins");
        DALLOC(r->dv, sh->max_rows, "the loss derivatives");
        DALLOC(r->gc, sh->max_uniq, "the compact gradient");
        SK(cusparseCreateDnVec(&r->wvec, (int64_t)nw, r->w, CUDA_R_32F));
    }
    if (t->p.schedule == HOG_SCHED_ADAGRAD) {
        DALLOC(r->g2, nw, "the AdaGrad sums");
        CK(cudaMemsetAsync(r->g2, 0, nw * 4, r->s));
    }
    if (q == 0 && t->R > 1)
        DALLOC(r->gather, (uint64_t)(t->R - 1) * nw, "the average's slots");
    if (t->streaming) {
        for (int i = 0; i < 2; i++) {
            if ((st = alloc_layout(&r->slot[i].a, sh->max_rows,
                                   sh->max_rows + 1, sh->max_nnz,
                                   sh->max_uniq, sh->max_uniq + 1, mb, r,
                                   err)) != HOG_OK)
                goto out;
            CK(cudaEventCreateWithFlags(&r->slot[i].ready,
                                        cudaEventDisableTiming));
            CK(cudaEventCreateWithFlags(&r->slot[i].free_,
                                        cudaEventDisableTiming));
            CK(cudaEventRecord(r->slot[i].free_, r->s));
        }
    } else {
        if ((st = alloc_layout(&r->whole, sh->n_y, sh->n_roff, sh->n_nnz,
                               sh->n_tcol, sh->n_toff, mb, r, err)) != HOG_OK)
            goto out;
        if ((st = upload_shard(r, mb, err)) != HOG_OK)
            goto out;
    }
out:
    return st;
}

/* Peer access between replica q's GPU and replica 0's, or host staging
 * where the GPUs cannot reach each other (said once per pair). */
static hog_status link_init(hog_cuda_trainer *t, unsigned q, hog_err *err)
{
    struct replica *r = &t->r[q], *z = &t->r[0];
    hog_status st = HOG_OK;
    int a = 0, b = 0;
    if (r->dev == z->dev) {
        r->link = LINK_SAME;
        return HOG_OK;
    }
    CR(cudaDeviceCanAccessPeer(&a, z->dev, r->dev));
    CR(cudaDeviceCanAccessPeer(&b, r->dev, z->dev));
    if (a && b) {
        int pair[2][2] = { { z->dev, r->dev }, { r->dev, z->dev } };
        for (int i = 0; i < 2; i++) {
            CR(cudaSetDevice(pair[i][0]));
            cudaError_t e = cudaDeviceEnablePeerAccess(pair[i][1], 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled)
                (void)cudaGetLastError();
            else if ((st = cuda_check(e, "cudaDeviceEnablePeerAccess",
                                      __FILE__, __LINE__, err)) != HOG_OK)
                return st;
        }
        r->link = LINK_PEER;
        return HOG_OK;
    }
    r->link = LINK_HOST;
    r->stage = (float *)hog_cuda_host_alloc(t->p.n_weights * 4);
    if (!r->stage)
        return hog_errf(err, HOG_ENOMEM,
                        "out of page-locked host memory to stage GPU %d's "
                        "replica",
                        r->dev);
    bool said = false;
    for (unsigned i = 1; i < q; i++)
        said |= t->r[i].dev == r->dev;
    if (!said && !t->p.quiet)
        fprintf(stderr,
                "hogtrain: note: GPUs %d and %d cannot access each other's "
                "memory; their replicas are averaged through host memory\n",
                z->dev, r->dev);
    return HOG_OK;
}

extern "C" hog_status hog_cuda_trainer_create(const struct hog_cuda_params *p,
                                              const struct hog_cuda_shard *sh,
                                              hog_cuda_trainer **out,
                                              hog_err *err)
{
    *out = NULL;
    hog_cuda_trainer *t = (hog_cuda_trainer *)calloc(
        1, sizeof *t + p->replicas * sizeof(struct replica));
    if (!t)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the GPU trainer");
    t->p = *p;
    t->R = p->replicas;
    for (unsigned q = 0; q < t->R; q++)
        t->r[q].dev = -1;
    hog_status st = HOG_OK;

    /* Resident when every device holds its shards, else streamed. */
    t->streaming = p->force_stream;
    for (unsigned q = 0; q < t->R; q++) {
        bool first = true;
        for (unsigned i = 0; i < q; i++)
            first &= sh[i].dev != sh[q].dev;
        if (!first)
            continue;
        uint64_t res, str;
        size_t fr = 0, tot = 0;
        device_need(t, sh, sh[q].dev, &res, &str);
        CK(cudaSetDevice(sh[q].dev));
        CK(cudaMemGetInfo(&fr, &tot));
        uint64_t usable = fr > ((size_t)512 << 20) ? fr - ((size_t)512 << 20)
                                                   : 0;
        char a[32], b[32], c[32];
        if (str > usable) {
            st = hog_errf(err, HOG_ENOMEM,
                          "GPU %d has %s free of %s, but its replicas need "
                          "%s even with their shards streamed (weights, work "
                          "buffers, two batches); use a smaller --gpu-batch "
                          "or fewer replicas on this GPU",
                          sh[q].dev, mib(a, sizeof a, (double)fr),
                          mib(b, sizeof b, (double)tot),
                          mib(c, sizeof c, (double)str));
            goto out;
        }
        if (res > usable && !t->streaming) {
            t->streaming = true;
            if (!p->quiet)
                fprintf(stderr,
                        "hogtrain: note: GPU %d's shard needs %s but %s is "
                        "free; batches are streamed from host memory every "
                        "epoch\n",
                        sh[q].dev, mib(a, sizeof a, (double)res),
                        mib(b, sizeof b, (double)fr));
        }
    }
    for (unsigned q = 0; q < t->R && st == HOG_OK; q++)
        st = replica_init(t, q, &sh[q], err);
    for (unsigned q = 1; q < t->R && st == HOG_OK; q++)
        st = link_init(t, q, err);
out:
    if (st != HOG_OK) {
        hog_cuda_trainer_destroy(t);
        return st;
    }
    *out = t;
    return HOG_OK;
}

/* cuSPARSE's work buffer, grown when a call needs more (rare: the first
 * batches). Growing waits for the stream, which may still use the old one. */
static hog_status ensure_buf(struct replica *r, size_t need, hog_err *err)
{
    if (need < 256)
        need = 256; /* never a NULL buffer, even where none is needed */
    if (need <= r->buf_cap)
        return HOG_OK;
    CR(cudaStreamSynchronize(r->s));
    cudaFree(r->buf);
    r->buf = NULL;
    r->buf_cap = 0;
    hog_status st = dev_alloc(&r->buf, need, r, "cuSPARSE's work buffer", err);
    if (st == HOG_OK)
        r->buf_cap = need;
    return st;
}

/* y = A x for a CSR A (rows x cols) with the deterministic CSR_ALG2. */
static hog_status spmv(struct replica *r, int64_t rows, int64_t cols,
                       int64_t nnz, int32_t *off, int32_t *idx, float *val,
                       cusparseDnVecDescr_t x, float *y, hog_err *err)
{
    hog_status st = HOG_OK;
    cusparseSpMatDescr_t A = NULL;
    cusparseDnVecDescr_t Y = NULL;
    const float one = 1.0f, zero = 0.0f;
    size_t need = 0;
    SK(cusparseCreateCsr(&A, rows, cols, nnz, off, idx, val,
                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    SK(cusparseCreateDnVec(&Y, rows, y, CUDA_R_32F));
    SK(cusparseSpMV_bufferSize(r->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                               A, x, &zero, Y, CUDA_R_32F,
                               CUSPARSE_SPMV_CSR_ALG2, &need));
    if ((st = ensure_buf(r, need, err)) != HOG_OK)
        goto out;
    SK(cusparseSpMV(r->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, x,
                    &zero, Y, CUDA_R_32F, CUSPARSE_SPMV_CSR_ALG2, r->buf));
out:
    if (Y)
        cusparseDestroyDnVec(Y);
    if (A)
        cusparseDestroySpMat(A);
    return st;
}

/* The minibatch step of replica r on batch b (arrays in a). */
static hog_status step_minibatch(hog_cuda_trainer *t, struct replica *r,
                                 const struct hog_cuda_batch *b,
                                 const struct dbatch *a, double eta,
                                 hog_err *err)
{
    const struct hog_cuda_params *p = &t->p;
    const uint64_t nw = p->n_weights;
    hog_status st = HOG_OK;
    cusparseDnVecDescr_t D = NULL;
    if (b->nnz) {
        if ((st = spmv(r, b->rows, (int64_t)nw, b->nnz, a->roff, a->col,
                       a->val, r->wvec, r->margin, err)) != HOG_OK)
            goto out;
    } else {
        CK(cudaMemsetAsync(r->margin, 0, b->rows * sizeof(float), r->s));
    }
    CK(launch_deriv(r->s, b->rows, r->margin, a->y, r->dv, (int)p->loss,
                    1.0 / (double)b->rows));
    if (b->uniq) {
        SK(cusparseCreateDnVec(&D, b->rows, r->dv, CUDA_R_32F));
        if ((st = spmv(r, b->uniq, b->rows, b->nnz, a->toff, a->trow, a->tval,
                       D, r->gc, err)) != HOG_OK)
            goto out;
    }
    if (p->l1 > 0 || p->l2 > 0 || p->schedule == HOG_SCHED_ADAGRAD) {
        if (b->uniq)
            CK(launch_scatter(r->s, b->uniq, a->tcol, r->gc, r->gdense));
        CK(launch_update_dense(r->s, nw, r->w, r->gdense, r->g2, eta, p->l1,
                               p->l2, p->schedule == HOG_SCHED_ADAGRAD));
    } else if (b->uniq) {
        CK(launch_update_sparse(r->s, b->uniq, a->tcol, r->gc, r->w, eta));
    }
out:
    if (D)
        cusparseDestroyDnVec(D);
    return st;
}

/* The hogwild step: the rows' gradient steps, then their shrink. */
static hog_status step_hogwild(hog_cuda_trainer *t, struct replica *r,
                               const struct hog_cuda_batch *b,
                               const struct dbatch *a, double eta,
                               hog_err *err)
{
    const struct hog_cuda_params *p = &t->p;
    CR(launch_hogwild(r->s, b->rows, a->roff, a->col, a->val, a->y, r->w,
                      (float)eta, (int)p->loss));
    if (p->l1 > 0 || p->l2 > 0) {
        double P, Q;
        hog_gpu_shrink_pq(eta, p->l1, p->l2, b->rows, &P, &Q);
        CR(launch_shrink(r->s, p->n_weights, r->w, P, Q));
    }
    return HOG_OK;
}

/* The entry point of one replica's part of round k. */
static hog_status replica_round(hog_cuda_trainer *t, struct replica *r,
                                uint64_t k, double eta, hog_err *err)
{
    const struct hog_cuda_batch *b = &r->sh->b[k];
    const bool mb = t->p.step == HOG_GPU_STEP_MINIBATCH;
    hog_status st = HOG_OK;
    struct dbatch a;
    struct slot *sl = NULL;
    if (b->rows == 0)
        return HOG_OK; /* the last round's part may be empty */
    CR(cudaSetDevice(r->dev));
    if (t->streaming) {
        sl = &r->slot[r->turn++ & 1];
        CR(cudaStreamWaitEvent(r->copy, sl->free_, 0));
        if ((st = copy_batch(&sl->a, r->sh, b, mb, r->copy, err)) != HOG_OK)
            return st;
        CR(cudaEventRecord(sl->ready, r->copy));
        CR(cudaStreamWaitEvent(r->s, sl->ready, 0));
        a = sl->a;
    } else {
        a = r->whole;
        a.y += b->at_row;
        a.roff += b->at_off;
        a.col += b->at_nnz;
        a.val += b->at_nnz;
        if (mb) {
            a.tcol += b->at_uniq;
            a.toff += b->at_toff;
            a.trow += b->at_nnz;
            a.tval += b->at_nnz;
        }
    }
    st = mb ? step_minibatch(t, r, b, &a, eta, err)
            : step_hogwild(t, r, b, &a, eta, err);
    if (st == HOG_OK && sl)
        CR(cudaEventRecord(sl->free_, r->s));
    return st;
}

extern "C" hog_status hog_cuda_round(hog_cuda_trainer *t, uint64_t k,
                                     double eta, hog_err *err)
{
    for (unsigned q = 0; q < t->R; q++) {
        hog_status st = replica_round(t, &t->r[q], k, eta, err);
        if (st != HOG_OK)
            return st;
    }
    return HOG_OK;
}

/* Replica q's weights into replica 0's gather slot (queued on stream 0). */
static hog_status gather(hog_cuda_trainer *t, unsigned q, hog_err *err)
{
    struct replica *r = &t->r[q], *z = &t->r[0];
    size_t bytes = t->p.n_weights * sizeof(float);
    float *dst = z->gather + (uint64_t)(q - 1) * t->p.n_weights;
    CR(cudaSetDevice(r->dev));
    if (r->link == LINK_HOST) {
        CR(cudaMemcpyAsync(r->stage, r->w, bytes, cudaMemcpyDeviceToHost,
                           r->s));
        CR(cudaEventRecord(r->done, r->s));
        CR(cudaSetDevice(z->dev));
        CR(cudaStreamWaitEvent(z->s, r->done, 0));
        CR(cudaMemcpyAsync(dst, r->stage, bytes, cudaMemcpyHostToDevice,
                           z->s));
        return HOG_OK;
    }
    CR(cudaEventRecord(r->done, r->s));
    CR(cudaSetDevice(z->dev));
    CR(cudaStreamWaitEvent(z->s, r->done, 0));
    if (r->link == LINK_SAME)
        CR(cudaMemcpyAsync(dst, r->w, bytes, cudaMemcpyDeviceToDevice, z->s));
    else
        CR(cudaMemcpyPeerAsync(dst, z->dev, r->w, r->dev, bytes, z->s));
    return HOG_OK;
}

/* Replica 0's (averaged) weights back into replica q; q's stream waits. */
static hog_status scatter_back(hog_cuda_trainer *t, unsigned q, hog_err *err)
{
    struct replica *r = &t->r[q], *z = &t->r[0];
    size_t bytes = t->p.n_weights * sizeof(float);
    CR(cudaSetDevice(z->dev));
    if (r->link == LINK_HOST) {
        CR(cudaMemcpyAsync(r->stage, z->w, bytes, cudaMemcpyDeviceToHost,
                           z->s));
        CR(cudaEventRecord(z->done, z->s));
        CR(cudaSetDevice(r->dev));
        CR(cudaStreamWaitEvent(r->s, z->done, 0));
        CR(cudaMemcpyAsync(r->w, r->stage, bytes, cudaMemcpyHostToDevice,
                           r->s));
        return HOG_OK;
    }
    if (r->link == LINK_SAME)
        CR(cudaMemcpyAsync(r->w, z->w, bytes, cudaMemcpyDeviceToDevice, z->s));
    else
        CR(cudaMemcpyPeerAsync(r->w, r->dev, z->w, z->dev, bytes, z->s));
    CR(cudaEventRecord(z->done, z->s));
    CR(cudaSetDevice(r->dev));
    CR(cudaStreamWaitEvent(r->s, z->done, 0));
    return HOG_OK;
}

extern "C" hog_status hog_cuda_average(hog_cuda_trainer *t, hog_err *err)
{
    if (t->R < 2)
        return HOG_OK;
    hog_status st;
    for (unsigned q = 1; q < t->R; q++)
        if ((st = gather(t, q, err)) != HOG_OK)
            return st;
    struct replica *z = &t->r[0];
    CR(cudaSetDevice(z->dev));
    CR(launch_average(z->s, t->p.n_weights, z->w, z->gather, t->R - 1,
                      1.0f / (float)t->R));
    /* LINK_HOST staging reuses a replica's stage buffer, whose gather copy
     * finished before the average ran on stream 0 (it waited for it). */
    for (unsigned q = 1; q < t->R; q++)
        if ((st = scatter_back(t, q, err)) != HOG_OK)
            return st;
    return HOG_OK;
}

extern "C" hog_status hog_cuda_weights(hog_cuda_trainer *t, float *w,
                                       hog_err *err)
{
    for (unsigned q = t->R; q-- > 0;) {
        CR(cudaSetDevice(t->r[q].dev));
        CR(cudaStreamSynchronize(t->r[q].s));
        CR(cudaStreamSynchronize(t->r[q].copy));
    }
    struct replica *z = &t->r[0];
    CR(cudaSetDevice(z->dev));
    CR(cudaMemcpy(w, z->w, t->p.n_weights * sizeof(float),
                  cudaMemcpyDeviceToHost));
    return HOG_OK;
}
