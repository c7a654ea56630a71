/*
 * The CUDA backend's private header, shared by the .cu files of src/gpu
 * (the plugin libhogtrain-cuda.so): the replicas' device state, checked
 * CUDA and cuSPARSE calls, and the kernels' launchers. CUDA types are
 * fine here and nowhere outside src/gpu; the rest of the library sees
 * cuda.h only.
 *
 *   device.cu   device discovery, CUDA's errors as sentences
 *   kernels.cu  the kernels and their launchers
 *   replica.cu  the trainer: replicas' memory, residency or streaming,
 *               peer links, create and destroy
 *   step.cu     one round: a batch's minibatch or hogwild step per replica
 *   average.cu  the replica average through peer copies, the weights out
 */
#ifndef HOG_GPU_INTERNAL_CUH
#define HOG_GPU_INTERNAL_CUH

#include "gpu/cuda.h"

#include <cuda_runtime.h>
#include <cusparse.h>

#include <cstddef>
#include <cstdint>

extern "C" hog_status hog_errf(hog_err *err, hog_status s, const char *fmt,
                               ...) __attribute__((format(printf, 3, 4)));

/* ---- errors (device.cu) --------------------------------------------------- */

/* bytes as "1.5 MiB" or "2.00 GiB" in buf; returns buf. */
const char *mib(char *buf, size_t len, double bytes);
/* HOG_OK, or a status and a sentence naming the call, the GPU and CUDA's
 * (cuSPARSE's) reason. */
hog_status cuda_check(cudaError_t e, const char *call, const char *file,
                      int line, hog_err *err);
hog_status sparse_check(cusparseStatus_t s, const char *call,
                        const char *file, int line, hog_err *err);

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

/* HOGTRAIN_CUDA_RESET_AT_EXIT=1: reset every device at exit (device.cu);
 * call after the first stream is made. */
void reset_at_exit_arm(void);

/* ---- the trainer (replica.cu) --------------------------------------------- */

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
    cudaEvent_t done;
    struct dbatch whole; /* resident shard */
    struct slot slot[2]; /* streamed shard */
    uint64_t turn;
    float *w, *g2;
    double *gdense, *dv; /* minibatch: dense gradient, rows' derivatives */
    float *coef;         /* hogwild: the rows' coefficients */
    uint32_t *cnt;       /* hogwild: the batch's rows per feature */
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

/* cudaMalloc, with a sentence on what did not fit where. */
hog_status dev_alloc(void **p, size_t bytes, const struct replica *r,
                     const char *what, hog_err *err);
/* Inside a function with `hog_status st`, `r` and an `out:` label. */
#define DALLOC(ptr, n, what)                                                  \
    do {                                                                      \
        if ((st = dev_alloc((void **)&(ptr), (size_t)(n) * sizeof *(ptr), r,  \
                            what, err)) != HOG_OK)                            \
            goto out;                                                         \
    } while (0)

/* ---- kernels (kernels.cu): each queued on stream s ------------------------ */

cudaError_t launch_margin_deriv(cudaStream_t s, uint32_t rows,
                                const int32_t *roff, const int32_t *col,
                                const float *val, const float *y,
                                const float *w, double *dv, int loss,
                                double inv_m);
cudaError_t launch_grad(cudaStream_t s, uint32_t uniq, const int32_t *toff,
                        const int32_t *trow, const float *tval,
                        const int32_t *tcol, const double *dv,
                        double *gdense, float *w, double eta);
cudaError_t launch_update_dense(cudaStream_t s, uint64_t n, float *w,
                                double *g, float *g2, double eta, double l1,
                                double l2, bool ada);
cudaError_t launch_hogwild(cudaStream_t s, uint32_t rows, uint64_t nnz,
                           const int32_t *roff, const int32_t *col,
                           const float *val, const float *y, float *w,
                           float eta, int loss, float *coef, uint32_t *cnt);
cudaError_t launch_shrink(cudaStream_t s, uint64_t n, float *w, double P,
                          double Q);
cudaError_t launch_average(cudaStream_t s, uint64_t n, float *w0,
                           const float *slots, unsigned others, float inv);

#endif
