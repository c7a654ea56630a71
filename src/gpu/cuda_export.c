/*
 * The plugin's side of cuda_plugin.h: the one symbol libhogtrain-cuda.so
 * exports. Linked into the plugin only, never into libhogtrain.
 */
#include "gpu/cuda_plugin.h"

__attribute__((visibility("default")))
extern const struct hog_cuda_plugin hog_cuda_plugin;

const struct hog_cuda_plugin hog_cuda_plugin = {
    .abi = HOG_CUDA_PLUGIN_ABI,
    .layout = HOG_CUDA_PLUGIN_LAYOUT,
    .version = HOG_VERSION_STRING,
    .count = hog_cuda_count,
    .info = hog_cuda_info,
    .bind_near = hog_cuda_bind_near,
    .host_alloc = hog_cuda_host_alloc,
    .host_free = hog_cuda_host_free,
    .copy_bandwidth = hog_cuda_copy_bandwidth,
    .trainer_create = hog_cuda_trainer_create,
    .trainer_destroy = hog_cuda_trainer_destroy,
    .round = hog_cuda_round,
    .average = hog_cuda_average,
    .weights = hog_cuda_weights,
    .streaming = hog_cuda_streaming,
    .spmv_open = hog_cuda_spmv_open,
    .spmv_close = hog_cuda_spmv_close,
    .spmv_xv = hog_cuda_spmv_xv,
    .spmv_xtc = hog_cuda_spmv_xtc,
    .spmv_wait = hog_cuda_spmv_wait,
};
