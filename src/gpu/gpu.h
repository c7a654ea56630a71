/*
 * gpu: per-GPU model replicas running sparse SGD, averaged through in-node
 * peer copies. This header names no CUDA type: the rest of hogtrain builds
 * and links the same with or without nvcc: the CUDA code is a plugin loaded
 * on first use (cuda.h). Without CUDA every call that needs a device
 * answers HOG_ENOTSUP and "hogtrain was built without CUDA", or "GPU
 * support not available: ..." when the plugin or the runtime is missing;
 * on a machine without a usable device, HOG_ENOTSUP and a sentence that
 * says why (no device, no driver, a driver older than the runtime).
 *
 * The pieces:
 *   spec.c   --gpus parsing, the row plan every replica follows, the step
 *            schedule (plain C, always built)
 *   ref.c    the CPU reference of the GPU steps (plain C, always)
 *   train.c  hog_gpu_train: shards in the upload layout, the epoch loop
 *            (plain C, always; reaches the device through cuda.h)
 *   *.cu     the CUDA backend of cuda.h, linked with cuda_export.c into
 *            the plugin libhogtrain-cuda.so: device.cu (discovery, CUDA's
 *            errors), kernels.cu, replica.cu (device state, residency or
 *            streaming, peer links), step.cu (a round's steps, cuSPARSE),
 *            average.cu (the peer-copy average); internal.cuh between them
 *   cuda_plugin.c  cuda.h in the library: loads the plugin on first use,
 *            or answers every call with the sentence saying what is missing
 * docs/GPU.md says what was verified where.
 */
#ifndef HOG_GPU_H
#define HOG_GPU_H

#include "core/fit.h"

#define HOG_GPU_MAX 64                 /* replicas in one run */
#define HOG_GPU_DEFAULT_BATCH 1024u    /* rows per replica per step */

/* ---- which devices (spec.c) ------------------------------------------------ */

/* A parsed --gpus: none (n == 0, all false), all, or a list of device
 * numbers; a number may repeat (two replicas on one GPU). */
struct hog_gpu_spec {
    bool all;
    unsigned n;
    int dev[HOG_GPU_MAX];
};

/* "none", "all" or "0,1,3" (no spaces, each 0..1023). NULL or "" is none.
 * A sentence in err and HOG_EINVAL otherwise. */
hog_status hog_gpu_spec_parse(const char *spec, struct hog_gpu_spec *out,
                              hog_err *err);
/* True when o asks for GPUs (o->gpus set and not "none"). */
bool hog_gpu_requested(const hog_train_opts *o);

/* ---- devices (train.c over the backend) --------------------------------------- */

/* True when this build has the CUDA backend (the plugin was built). */
bool hog_gpu_built(void);

struct hog_gpu_info {
    int index;              /* CUDA device number (after CUDA_VISIBLE_DEVICES) */
    char name[256];
    char pci[32];           /* PCI bus id, "0000:3b:00.0" */
    uint64_t mem_total, mem_free;
    int numa;               /* NUMA node (OS index), -1 when unknown */
    int cc_major, cc_minor; /* compute capability */
    int sms;                /* streaming multiprocessors */
};

/* Lists up to max devices into out (*n set to the number of devices, which
 * may exceed max). HOG_ENOTSUP with a sentence when the build has no CUDA,
 * there is no device or the driver is missing or too old. */
hog_status hog_gpu_list(struct hog_gpu_info *out, unsigned max, unsigned *n,
                        hog_err *err);

/* Device-to-device copy bandwidth of device dev, with bytes per copy:
 * (bytes read + bytes written) per second, the unit the GPU bench compares
 * an epoch's traffic against. */
hog_status hog_gpu_copy_bandwidth(int dev, size_t bytes, double *bytes_per_s,
                                  hog_err *err);

/* The devices of a spec: its list, or every device for "all" (at most
 * HOG_GPU_MAX); a sentence for a number this machine does not show. */
hog_status hog_gpu_devices(const struct hog_gpu_spec *spec, int *dev,
                           unsigned *n, hog_err *err);

/* ---- training (train.c) ----------------------------------------------------- */

/* What hog_gpu_train reads from the options, plus knobs for tests. */
struct hog_gpu_opts {
    struct hog_gpu_spec spec;
    hog_gpu_step step;
    uint32_t batch;       /* rows per replica per round */
    uint64_t sync_every;  /* rows per replica between averages; 0: at
                             the epoch's end only */
    bool force_stream;    /* stream the shards even when they fit (tests) */
    bool quiet;           /* no notes on stderr (peer access, streaming) */
};

/* Fills g from o (defaults for zero fields); HOG_EINVAL with a sentence
 * for a bad spec, batch or step. */
hog_status hog_gpu_opts_from(const hog_train_opts *o, struct hog_gpu_opts *g,
                             hog_err *err);

/* The GPU trainer: the front door's entry (f->o->gpus asks for GPUs). */
hog_status hog_gpu_train(struct hog_fit *f, hog_err *err);
/* The same with explicit GPU options. */
hog_status hog_gpu_train_opts(struct hog_fit *f, const struct hog_gpu_opts *g,
                              hog_err *err);

/* ---- the plan every replica follows (spec.c) ----------------------------------- *
 *
 * Rows are permuted once (hog_rng stream 1 of the seed) and cut into rounds
 * of R * B consecutive positions; in round k replica r takes positions
 * [k R B + r B, k R B + (r + 1) B) (clipped at n). Each epoch visits the
 * rounds in a fresh order: hog_shuffle_u64 of the previous epoch's order,
 * drawn from hog_rng stream 0 of the seed (as the serial trainer shuffles
 * its rows). Step t of a round is the number of rows the rounds before it
 * held globally, t = rounds done * R * B, so that R = 1, B = 1 follows the
 * serial trainer's step sizes. */
struct hog_gpu_plan {
    uint64_t n;        /* rows */
    unsigned R;        /* replicas */
    uint32_t B;        /* rows per replica per round */
    uint64_t rounds;   /* ceil(n / (R B)) */
    uint64_t *perm;    /* n row numbers */
};

hog_status hog_gpu_plan_make(uint64_t n, unsigned R, uint32_t B, uint64_t seed,
                             struct hog_gpu_plan *p, hog_err *err);
void hog_gpu_plan_free(struct hog_gpu_plan *p);

/* Positions [*lo, *hi) of perm that replica r runs in round k. */
static inline void hog_gpu_plan_part(const struct hog_gpu_plan *p, uint64_t k,
                                     unsigned r, uint64_t *lo, uint64_t *hi)
{
    uint64_t a = k * p->R * p->B + (uint64_t)r * p->B, b = a + p->B;
    *lo = a < p->n ? a : p->n;
    *hi = b < p->n ? b : p->n;
}

/* The step size of step t (constant and inverse scaling; AdaGrad's base
 * eta), n the rows of an epoch: as hog_sgd_eta_at. */
double hog_gpu_eta_at(const hog_train_opts *o, uint64_t t, uint64_t n);

/* ---- shards (train.c) ----------------------------------------------------------- */

/* Replica q's batches of the plan in the upload layout of struct
 * hog_cuda_shard (gpu/cuda.h): batch k = its part of round k, a CSR with
 * local offsets over n_features (+1 bias column) columns, labels as +1/-1
 * (or the target), and with transpose the batch's compact transpose. The
 * arrays come from alloc (page-locked memory when training, malloc in
 * tests); HOG_ERANGE when a batch holds 2^31 nonzeros or more. */
struct hog_cuda_shard;
hog_status hog_gpu_shard_build(const hog_data *d, const hog_train_opts *o,
                               const struct hog_gpu_plan *plan, unsigned q,
                               bool transpose, void *(*alloc)(size_t),
                               struct hog_cuda_shard *s, hog_err *err);
/* Frees the arrays with release (the matching free), keeps s->dev. */
void hog_gpu_shard_free(struct hog_cuda_shard *s, void (*release)(void *));

/* ---- the CPU reference (ref.c) -------------------------------------------------- *
 *
 * The minibatch step on the CPU, for R simulated replicas over the plan
 * above: in a round, replica r with rows I (m = |I| > 0) and step size eta
 *
 *     g   = (1/m) sum_{i in I} loss'(y_i, x_i.w) x_i
 *     w_j <- S_{eta l1}((1 - eta l2) w_j - eta g_j)      for every weight j
 *
 * (AdaGrad: G_j += g_j^2, eta_j = eta / sqrt(eps + G_j), the shrink
 * 1 - min(1, eta_j l2), threshold eta_j l1). After every sync_rounds
 * rounds, and at the end of each epoch, the replicas are replaced by their
 * mean. Weights are floats (as on the GPU), sums in double. w_out gets
 * n_features (+1 bias) weights after `epochs` epochs.
 *
 * With o->gpu_step HOG_GPU_STEP_HOGWILD, the hogwild step instead: every
 * row's c_i = -eta loss'(y_i, x_i.w) from the weights before the batch,
 * then w_j += (1/n_j) sum_{i in I} c_i x_ij, n_j the rows of I that touch
 * j, then the regularization of m steps in closed form (hog_gpu_shrink_pq). */
hog_status hog_gpu_ref_train(const hog_data *d, const hog_train_opts *o,
                             unsigned replicas, uint32_t batch,
                             uint64_t sync_rounds, float *w_out, hog_err *err);

/* ---- the exact solvers' products (products.c) ------------------------------- *
 *
 * core/products.h's table for --algo newton and lbfgs with --gpus: the
 * rows cut into one resident shard per listed device, X v and X^T c as
 * cuSPARSE SpMV there (spmv.cu), the shards' partial X^T c added on the
 * host in shard order. */
struct hog_products_ops;
extern const struct hog_products_ops hog_gpu_products;

/* Cuts rows [0, rows) of a CSR with offsets off into parts contiguous
 * ranges row0[k] .. row0[k + 1] (row0: parts + 1) of about equal
 * nonzeros plus rows, from the offsets alone. */
void hog_gpu_rows_split(const uint64_t *off, uint64_t rows, unsigned parts,
                        uint64_t *row0);
/* out = part[0] + part[1] + ... + part[n - 1], added in that order for
 * every element (out may be part[0]; n == 0: zeros). */
void hog_gpu_partials_add(double *out, const double *const *part,
                          unsigned n, uint64_t len);
/* Rows [lo, hi) of m in the upload layout of struct hog_cuda_csr
 * (gpu/cuda.h): local offsets, nf + (bias != 0) columns with the bias
 * the last entry of each row, values as doubles; malloc'd arrays, freed
 * by hog_gpu_csr_free. HOG_ERANGE with a sentence past cuSPARSE's 32-bit
 * indices. */
struct hog_cuda_csr;
hog_status hog_gpu_csr_build(const struct hog_csr *m, uint64_t nf,
                             double bias, uint64_t lo, uint64_t hi, int dev,
                             struct hog_cuda_csr *a, hog_err *err);
void hog_gpu_csr_free(struct hog_cuda_csr *a);

#endif
