/*
 * cuda.h in libhogtrain: the device backend is the plugin
 * libhogtrain-cuda.so (cuda_plugin.h), loaded once, on the first call that
 * needs a device. Where it or the CUDA runtime is missing, or it comes
 * from another build, every call answers HOG_ENOTSUP with one sentence
 * naming what is missing, as a build without nvcc does.
 *
 * The loaded table is process state (as the dlopen behind it is): written
 * once under pthread_once, read-only afterwards.
 */
#include "gpu/cuda_plugin.h"

#include "core/core.h"
#include "core/plugin.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NO_CUDA "hogtrain was built without CUDA (no nvcc was found at build " \
                "time; install the CUDA toolkit and rebuild to use GPUs)"

static bool check_table(const void *table, char *why, size_t len)
{
    const struct hog_cuda_plugin *t = table;
    if (t->abi != HOG_CUDA_PLUGIN_ABI || t->layout != HOG_CUDA_PLUGIN_LAYOUT) {
        snprintf(why, len,
                 "plugin ABI %u (layout %u, hogtrain %s), this hogtrain reads "
                 "ABI %u (layout %u, hogtrain %s)",
                 t->abi, t->layout, t->abi == HOG_CUDA_PLUGIN_ABI && t->version
                                        ? t->version : "?",
                 HOG_CUDA_PLUGIN_ABI, HOG_CUDA_PLUGIN_LAYOUT,
                 HOG_VERSION_STRING);
        return false;
    }
    return true;
}

static const struct hog_plugin_spec cuda_spec = {
    .what = "GPU support",
    .file = HOG_CUDA_PLUGIN_FILE,
    .env = HOG_CUDA_PLUGIN_ENV,
    .symbol = HOG_CUDA_PLUGIN_SYMBOL,
    .hint_load = "install the CUDA runtime (libcudart, libcusparse) or "
                 "rebuild with NVCC= for a build without GPUs",
    .check = check_table,
};

static pthread_once_t cuda_once = PTHREAD_ONCE_INIT;
static struct hog_plugin cuda;

static void cuda_load(void)
{
#ifndef HOG_WITH_CUDA
    /* No plugin was built beside this library: the old sentence, unless a
     * plugin is named explicitly. */
    const char *env = getenv(HOG_CUDA_PLUGIN_ENV);
    if (!env || !env[0]) {
        cuda.table = NULL;
        snprintf(cuda.why, sizeof cuda.why, "%s", NO_CUDA);
        return;
    }
#endif
    hog_plugin_load(&cuda_spec, &cuda);
}

/* The table, or NULL with the sentence in err. */
static const struct hog_cuda_plugin *plugin(hog_err *err)
{
    pthread_once(&cuda_once, cuda_load);
    if (!cuda.table)
        hog_errf(err, HOG_ENOTSUP, "%s", cuda.why);
    return cuda.table;
}

bool hog_cuda_built(void)
{
#ifdef HOG_WITH_CUDA
    return true;
#else
    return false;
#endif
}

hog_status hog_cuda_count(int *n, hog_err *err)
{
    const struct hog_cuda_plugin *t = plugin(err);
    *n = 0;
    return t ? t->count(n, err) : HOG_ENOTSUP;
}

hog_status hog_cuda_info(int dev, struct hog_cuda_info *out, hog_err *err)
{
    const struct hog_cuda_plugin *t = plugin(err);
    return t ? t->info(dev, out, err) : HOG_ENOTSUP;
}

int hog_cuda_bind_near(int dev)
{
    const struct hog_cuda_plugin *t = plugin(NULL);
    return t ? t->bind_near(dev) : -1;
}

void *hog_cuda_host_alloc(size_t bytes)
{
    const struct hog_cuda_plugin *t = plugin(NULL);
    return t ? t->host_alloc(bytes) : NULL;
}

void hog_cuda_host_free(void *p)
{
    const struct hog_cuda_plugin *t = plugin(NULL);
    if (t)
        t->host_free(p);
}

hog_status hog_cuda_copy_bandwidth(int dev, size_t bytes, double *bytes_per_s,
                                   hog_err *err)
{
    const struct hog_cuda_plugin *t = plugin(err);
    *bytes_per_s = 0;
    return t ? t->copy_bandwidth(dev, bytes, bytes_per_s, err) : HOG_ENOTSUP;
}

hog_status hog_cuda_trainer_create(const struct hog_cuda_params *p,
                                   const struct hog_cuda_shard *shards,
                                   hog_cuda_trainer **out, hog_err *err)
{
    const struct hog_cuda_plugin *t = plugin(err);
    *out = NULL;
    return t ? t->trainer_create(p, shards, out, err) : HOG_ENOTSUP;
}

/* A trainer exists only where the plugin is loaded. */
void hog_cuda_trainer_destroy(hog_cuda_trainer *tr)
{
    const struct hog_cuda_plugin *t = plugin(NULL);
    if (t && tr)
        t->trainer_destroy(tr);
}

hog_status hog_cuda_round(hog_cuda_trainer *tr, uint64_t k, double eta,
                          hog_err *err)
{
    const struct hog_cuda_plugin *t = plugin(err);
    return t ? t->round(tr, k, eta, err) : HOG_ENOTSUP;
}

hog_status hog_cuda_average(hog_cuda_trainer *tr, hog_err *err)
{
    const struct hog_cuda_plugin *t = plugin(err);
    return t ? t->average(tr, err) : HOG_ENOTSUP;
}

hog_status hog_cuda_weights(hog_cuda_trainer *tr, float *w, hog_err *err)
{
    const struct hog_cuda_plugin *t = plugin(err);
    return t ? t->weights(tr, w, err) : HOG_ENOTSUP;
}

bool hog_cuda_streaming(const hog_cuda_trainer *tr)
{
    const struct hog_cuda_plugin *t = plugin(NULL);
    return t && tr ? t->streaming(tr) : false;
}

hog_status hog_cuda_spmv_open(const struct hog_cuda_csr *a,
                              hog_cuda_spmv **out, hog_err *err)
{
    const struct hog_cuda_plugin *t = plugin(err);
    *out = NULL;
    return t ? t->spmv_open(a, out, err) : HOG_ENOTSUP;
}

/* A shard exists only where the plugin is loaded. */
void hog_cuda_spmv_close(hog_cuda_spmv *s)
{
    const struct hog_cuda_plugin *t = plugin(NULL);
    if (t && s)
        t->spmv_close(s);
}

hog_status hog_cuda_spmv_xv(hog_cuda_spmv *s, const double *v, double *tv,
                            hog_err *err)
{
    const struct hog_cuda_plugin *t = plugin(err);
    return t ? t->spmv_xv(s, v, tv, err) : HOG_ENOTSUP;
}

hog_status hog_cuda_spmv_xtc(hog_cuda_spmv *s, const double *c, bool squares,
                             double *out, hog_err *err)
{
    const struct hog_cuda_plugin *t = plugin(err);
    return t ? t->spmv_xtc(s, c, squares, out, err) : HOG_ENOTSUP;
}

hog_status hog_cuda_spmv_wait(hog_cuda_spmv *s, hog_err *err)
{
    const struct hog_cuda_plugin *t = plugin(err);
    return t ? t->spmv_wait(s, err) : HOG_ENOTSUP;
}
