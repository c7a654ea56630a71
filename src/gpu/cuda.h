/*
 * The device backend of src/gpu. The .cu files (internal.cuh has their
 * map) implement it inside the plugin libhogtrain-cuda.so (built where
 * nvcc is found); in libhogtrain, cuda_plugin.c implements it by loading
 * that plugin on first use and forwarding (cuda_plugin.h). Where the
 * plugin, the CUDA runtime or nvcc was missing, every call answers
 * HOG_ENOTSUP and one sentence ("GPU support not available: ...",
 * "hogtrain was built without CUDA ...").
 * Plain C types only, so that train.c, the shard builder, compiles with
 * the C compiler in every build.
 */
#ifndef HOG_GPU_CUDA_H
#define HOG_GPU_CUDA_H

#include "hogtrain.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* True when the library was built with nvcc, so with a plugin beside it
 * (whether the plugin then loads or not: the sentence says). */
bool hog_cuda_built(void);

/* Device count; HOG_ENOTSUP with a sentence when there is none, no driver,
 * or a driver older than the runtime. */
hog_status hog_cuda_count(int *n, hog_err *err);

struct hog_cuda_info {
    char name[256];
    char pci[32];
    uint64_t mem_total, mem_free;
    int numa;
    int cc_major, cc_minor, sms;
};
hog_status hog_cuda_info(int dev, struct hog_cuda_info *out, hog_err *err);

/* Binds the calling thread to the CPUs next to device dev (hwloc's cudart
 * helper); returns the NUMA node (OS index) or -1 when unknown or when the
 * binding was refused (not an error: the thread runs where it was). */
int hog_cuda_bind_near(int dev);

/* Page-locked host memory (cudaHostAlloc, portable); NULL when refused. */
void *hog_cuda_host_alloc(size_t bytes);
void hog_cuda_host_free(void *p);

hog_status hog_cuda_copy_bandwidth(int dev, size_t bytes, double *bytes_per_s,
                                   hog_err *err);

/* m steps of w <- S_{eta l1}((1 - eta l2) w) at once: |w| <- max(0, P |w| - Q)
 * (spec.c, plain C; the hogwild step's shrink). */
void hog_gpu_shrink_pq(double eta, double l1, double l2, uint64_t m,
                       double *P, double *Q);

/* ---- the trainer ---------------------------------------------------------- */

/* One batch (one replica's part of one round) inside a shard's arrays.
 * Offsets count elements of the arrays named. */
struct hog_cuda_batch {
    uint32_t rows, nnz, uniq;  /* uniq: distinct columns (transpose rows) */
    uint64_t at_row;           /* into y */
    uint64_t at_off;           /* into roff (rows + 1 entries) */
    uint64_t at_nnz;           /* into col, val, trow, tval */
    uint64_t at_uniq;          /* into tcol */
    uint64_t at_toff;          /* into toff (uniq + 1 entries) */
};

/* One replica's rows, in page-locked host memory, batch k for round k.
 * Each batch is a CSR with local offsets (roff[at_off] == 0) over
 * n_weights columns (the bias a column of its own), and, for the
 * minibatch step, its transpose restricted to the columns it touches:
 * tcol[u] the column of transpose row u, toff its local offsets, trow the
 * batch row of each entry, tval its value. */
struct hog_cuda_shard {
    int dev;
    uint64_t nbatch;
    struct hog_cuda_batch *b;  /* nbatch, plain host memory */
    float *y;                  /* +1/-1, or the target (squared loss) */
    int32_t *roff, *col;
    float *val;
    int32_t *tcol, *toff, *trow; /* NULL for the hogwild step */
    float *tval;
    uint64_t n_y, n_roff, n_nnz, n_tcol, n_toff; /* array lengths */
    uint32_t max_rows, max_nnz, max_uniq;
};

struct hog_cuda_params {
    hog_loss loss;
    hog_schedule schedule;
    hog_gpu_step step;
    double l1, l2;
    uint64_t n_weights;
    unsigned replicas;
    bool force_stream, quiet;
};

typedef struct hog_cuda_trainer hog_cuda_trainer;

/* Allocates each replica's state on its device and uploads the shards
 * (async copies from their page-locked memory), or keeps them on the host
 * to be streamed each epoch when they do not fit (or force_stream). The
 * shards must outlive the trainer. */
hog_status hog_cuda_trainer_create(const struct hog_cuda_params *p,
                                   const struct hog_cuda_shard *shards,
                                   hog_cuda_trainer **out, hog_err *err);
void hog_cuda_trainer_destroy(hog_cuda_trainer *t);

/* Queues round k (batch k of every replica) with step size eta; returns
 * before the device is done. */
hog_status hog_cuda_round(hog_cuda_trainer *t, uint64_t k, double eta,
                          hog_err *err);
/* Replaces every replica by the replicas' mean (peer copies to replica 0,
 * an averaging kernel, peer copies back). */
hog_status hog_cuda_average(hog_cuda_trainer *t, hog_err *err);
/* Waits for the queued work and copies replica 0's weights to w. */
hog_status hog_cuda_weights(hog_cuda_trainer *t, float *w, hog_err *err);
/* True when the shards are streamed each epoch. */
bool hog_cuda_streaming(const hog_cuda_trainer *t);

/* ---- products for the exact solvers (spmv.cu) ------------------------------ */

/* One device's shard of the rows as uploaded: a CSR with local offsets
 * (off[0] == 0) over cols columns (the bias a column of its own), values
 * as doubles (the data's floats, exactly), so that the products are
 * computed in double as the CPU's are. cuSPARSE's 32-bit indices: rows,
 * cols and nnz below 2^31. */
struct hog_cuda_csr {
    int dev;
    uint32_t rows, cols;
    uint64_t nnz;
    const int32_t *off; /* rows + 1 */
    const int32_t *col; /* nnz */
    const double *val;  /* nnz */
};

typedef struct hog_cuda_spmv hog_cuda_spmv;

/* Uploads the shard and makes its transpose on the device; the host
 * arrays may be freed on return. */
hog_status hog_cuda_spmv_open(const struct hog_cuda_csr *a,
                              hog_cuda_spmv **out, hog_err *err);
void hog_cuda_spmv_close(hog_cuda_spmv *s);
/* Queues t = A v (v: cols doubles, read before the call returns; t: rows
 * doubles, written by hog_cuda_spmv_wait). One product in flight at a
 * time per shard. */
hog_status hog_cuda_spmv_xv(hog_cuda_spmv *s, const double *v, double *t,
                            hog_err *err);
/* Queues out = A^T c, or (A.*A)^T c with squares (c: rows doubles, read
 * before the call returns; out: cols doubles, written by the wait). */
hog_status hog_cuda_spmv_xtc(hog_cuda_spmv *s, const double *c, bool squares,
                             double *out, hog_err *err);
/* Waits for the queued product and copies its result where it was asked. */
hog_status hog_cuda_spmv_wait(hog_cuda_spmv *s, hog_err *err);

#ifdef __cplusplus
}
#endif
#endif
