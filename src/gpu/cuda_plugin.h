/*
 * The CUDA backend as a plugin: the .cu files and cuda_export.c are
 * linked into libhogtrain-cuda.so (with cudart, cuSPARSE, libstdc++),
 * which exports one table, hog_cuda_plugin. cuda_plugin.c, in
 * libhogtrain, implements cuda.h by loading it on first use and
 * forwarding through the table, so that neither the library nor the
 * command needs the CUDA runtime to start.
 */
#ifndef HOG_GPU_CUDA_PLUGIN_H
#define HOG_GPU_CUDA_PLUGIN_H

#include "gpu/cuda.h"

#define HOG_CUDA_PLUGIN_FILE "libhogtrain-cuda.so"
#define HOG_CUDA_PLUGIN_ENV "HOGTRAIN_CUDA_PLUGIN"
#define HOG_CUDA_PLUGIN_SYMBOL "hog_cuda_plugin"

/* Bump on any change of the table or of a type crossing it. */
#define HOG_CUDA_PLUGIN_ABI 2u

/* The sizes of the types crossing the table, folded: a second guard for
 * a layout change made without bumping the ABI. */
#define HOG_CUDA_PLUGIN_LAYOUT                                                \
    ((uint32_t)(sizeof(struct hog_cuda_plugin) +                              \
                3u * sizeof(hog_err) +                                        \
                7u * sizeof(struct hog_cuda_info) +                           \
                131u * sizeof(struct hog_cuda_batch) +                        \
                1031u * sizeof(struct hog_cuda_shard) +                       \
                8209u * sizeof(struct hog_cuda_params) +                      \
                16411u * sizeof(struct hog_cuda_csr)))

/* abi and layout stay the first two fields in every ABI, so that a plugin
 * of another one is recognised and named. */
struct hog_cuda_plugin {
    uint32_t abi;        /* HOG_CUDA_PLUGIN_ABI */
    uint32_t layout;     /* HOG_CUDA_PLUGIN_LAYOUT */
    const char *version; /* HOG_VERSION_STRING of the plugin's build */
    hog_status (*count)(int *n, hog_err *err);
    hog_status (*info)(int dev, struct hog_cuda_info *out, hog_err *err);
    int (*bind_near)(int dev);
    void *(*host_alloc)(size_t bytes);
    void (*host_free)(void *p);
    hog_status (*copy_bandwidth)(int dev, size_t bytes, double *bytes_per_s,
                                 hog_err *err);
    hog_status (*trainer_create)(const struct hog_cuda_params *p,
                                 const struct hog_cuda_shard *shards,
                                 hog_cuda_trainer **out, hog_err *err);
    void (*trainer_destroy)(hog_cuda_trainer *t);
    hog_status (*round)(hog_cuda_trainer *t, uint64_t k, double eta,
                        hog_err *err);
    hog_status (*average)(hog_cuda_trainer *t, hog_err *err);
    hog_status (*weights)(hog_cuda_trainer *t, float *w, hog_err *err);
    bool (*streaming)(const hog_cuda_trainer *t);
    /* ABI 2: the exact solvers' products */
    hog_status (*spmv_open)(const struct hog_cuda_csr *a, hog_cuda_spmv **out,
                            hog_err *err);
    void (*spmv_close)(hog_cuda_spmv *s);
    hog_status (*spmv_xv)(hog_cuda_spmv *s, const double *v, double *t,
                          hog_err *err);
    hog_status (*spmv_xtc)(hog_cuda_spmv *s, const double *c, bool squares,
                           double *out, hog_err *err);
    hog_status (*spmv_wait)(hog_cuda_spmv *s, hog_err *err);
};

#endif
