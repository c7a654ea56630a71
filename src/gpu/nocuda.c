/*
 * The device backend of a build without nvcc: every call that needs a GPU
 * answers HOG_ENOTSUP and one sentence. The rest of src/gpu (the plan, the
 * CPU reference, the shard builder) is plain C and built either way.
 */
#include "gpu/cuda.h"

#include "core/core.h"

#define NO_CUDA "hogtrain was built without CUDA (no nvcc was found at build " \
                "time; install the CUDA toolkit and rebuild to use GPUs)"

bool hog_cuda_built(void) { return false; }

hog_status hog_cuda_count(int *n, hog_err *err)
{
    *n = 0;
    return hog_errf(err, HOG_ENOTSUP, NO_CUDA);
}

hog_status hog_cuda_info(int dev, struct hog_cuda_info *out, hog_err *err)
{
    return hog_errf(err, HOG_ENOTSUP, NO_CUDA);
}

int hog_cuda_bind_near(int dev) { return -1; }

void *hog_cuda_host_alloc(size_t bytes) { return NULL; }

void hog_cuda_host_free(void *p) {}

hog_status hog_cuda_copy_bandwidth(int dev, size_t bytes, double *bytes_per_s,
                                   hog_err *err)
{
    *bytes_per_s = 0;
    return hog_errf(err, HOG_ENOTSUP, NO_CUDA);
}

hog_status hog_cuda_trainer_create(const struct hog_cuda_params *p,
                                   const struct hog_cuda_shard *shards,
                                   hog_cuda_trainer **out, hog_err *err)
{
    *out = NULL;
    return hog_errf(err, HOG_ENOTSUP, NO_CUDA);
}

void hog_cuda_trainer_destroy(hog_cuda_trainer *t) {}

hog_status hog_cuda_round(hog_cuda_trainer *t, uint64_t k, double eta,
                          hog_err *err)
{
    return hog_errf(err, HOG_ENOTSUP, NO_CUDA);
}

hog_status hog_cuda_average(hog_cuda_trainer *t, hog_err *err)
{
    return hog_errf(err, HOG_ENOTSUP, NO_CUDA);
}

hog_status hog_cuda_weights(hog_cuda_trainer *t, float *w, hog_err *err)
{
    return hog_errf(err, HOG_ENOTSUP, NO_CUDA);
}

bool hog_cuda_streaming(const hog_cuda_trainer *t) { return false; }
