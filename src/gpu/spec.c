/*
 * --gpus parsing, the row plan every replica follows, and the step
 * schedule: plain C, built with or without CUDA, so that the CPU reference
 * and the tests share them on any machine.
 */
#include "gpu/gpu.h"

#include "gpu/cuda.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEVICE 1023

hog_status hog_gpu_spec_parse(const char *spec, struct hog_gpu_spec *out,
                              hog_err *err)
{
    struct hog_gpu_spec s;
    memset(&s, 0, sizeof s);
    if (!spec || !*spec || strcmp(spec, "none") == 0) {
        *out = s;
        return HOG_OK;
    }
    if (strcmp(spec, "all") == 0) {
        s.all = true;
        *out = s;
        return HOG_OK;
    }
    const char *p = spec;
    for (;;) {
        if (*p < '0' || *p > '9')
            return hog_errf(err, HOG_EINVAL,
                            "--gpus \"%s\": expected all, none or a list of "
                            "device numbers like 0,1,3 at \"%s\"",
                            spec, p);
        long v = 0;
        while (*p >= '0' && *p <= '9') {
            v = v * 10 + (*p++ - '0');
            if (v > MAX_DEVICE)
                return hog_errf(err, HOG_EINVAL,
                                "--gpus \"%s\": device numbers go up to %d",
                                spec, MAX_DEVICE);
        }
        if (s.n == HOG_GPU_MAX)
            return hog_errf(err, HOG_EINVAL,
                            "--gpus \"%s\": at most %d replicas", spec,
                            HOG_GPU_MAX);
        s.dev[s.n++] = (int)v;
        if (!*p)
            break;
        if (*p != ',' || !p[1])
            return hog_errf(err, HOG_EINVAL,
                            "--gpus \"%s\": expected a comma and a device "
                            "number at \"%s\"",
                            spec, p);
        p++;
    }
    *out = s;
    return HOG_OK;
}

bool hog_gpu_requested(const hog_train_opts *o)
{
    return o->gpus && *o->gpus && strcmp(o->gpus, "none") != 0;
}

hog_status hog_gpu_opts_from(const hog_train_opts *o, struct hog_gpu_opts *g,
                             hog_err *err)
{
    memset(g, 0, sizeof *g);
    hog_status st = hog_gpu_spec_parse(o->gpus, &g->spec, err);
    if (st != HOG_OK)
        return st;
    if ((unsigned)o->gpu_step > HOG_GPU_STEP_HOGWILD)
        return hog_errf(err, HOG_EINVAL, "unknown GPU step %d",
                        (int)o->gpu_step);
    g->step = o->gpu_step;
    g->batch = o->gpu_batch ? o->gpu_batch : HOG_GPU_DEFAULT_BATCH;
    if (g->batch > (UINT32_C(1) << 30))
        return hog_errf(err, HOG_EINVAL,
                        "--gpu-batch %u: at most 2^30 rows per step",
                        (unsigned)g->batch);
    g->sync_every = o->sync_every; /* 0: at the epoch's end only */
    return HOG_OK;
}

hog_status hog_gpu_plan_make(uint64_t n, unsigned R, uint32_t B, uint64_t seed,
                             struct hog_gpu_plan *p, hog_err *err)
{
    memset(p, 0, sizeof *p);
    if (R < 1 || B < 1)
        return hog_errf(err, HOG_EINVAL,
                        "a GPU plan needs at least one replica and one row "
                        "per step");
    p->n = n;
    p->R = R;
    p->B = B;
    uint64_t per = (uint64_t)R * B;
    p->rounds = (n + per - 1) / per;
    p->perm = malloc((n ? n : 1) * sizeof *p->perm);
    if (!p->perm)
        return hog_errf(err, HOG_ENOMEM,
                        "out of memory for the row order of %llu rows",
                        (unsigned long long)n);
    for (uint64_t i = 0; i < n; i++)
        p->perm[i] = i;
    struct hog_rng rng;
    hog_rng_seed(&rng, seed, 1);
    hog_shuffle_u64(&rng, p->perm, n);
    return HOG_OK;
}

void hog_gpu_plan_free(struct hog_gpu_plan *p)
{
    free(p->perm);
    p->perm = NULL;
}

double hog_gpu_eta_at(const hog_train_opts *o, uint64_t t, uint64_t n)
{
    if (o->schedule != HOG_SCHED_INVSCALING)
        return o->eta;
    if (o->l2 > 0)
        return o->eta / (1.0 + o->eta * o->l2 * (double)t);
    return o->eta / pow(1.0 + (double)t / (double)(n ? n : 1), o->power);
}

/* The composition of m maps u -> max(0, (1 - a) u - b) on u = |w| is
 * u -> max(0, P u - Q) with P = (1 - a)^m and Q = b sum_{s<m} (1 - a)^s
 * (the lazy regularization of core/sgd.c with a constant step). */
void hog_gpu_shrink_pq(double eta, double l1, double l2, uint64_t m,
                       double *P, double *Q)
{
    double a = eta * l2, b = eta * l1;
    *P = pow(1.0 - a, (double)m);
    *Q = a > 0 ? b * (1.0 - *P) / a : b * (double)m;
}
