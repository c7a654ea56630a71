/* What test_gpu.c and test_gpu_device.c share: a planted random problem,
 * the options of the GPU tests, the weights' count and comparison, and
 * whether a device is there. */
#ifndef HOG_TEST_GPU_TESTS_H
#define HOG_TEST_GPU_TESTS_H

#include <criterion/criterion.h>
#include <math.h>

#include "core/core.h"
#include "gpu/gpu.h"
#include "synth.h"

/* A random sparse problem labelled by a planted model: ±1 labels, or real
 * targets. */
static inline hog_data *synth(uint64_t rows, uint64_t nf, double density,
                              bool regression, uint64_t seed)
{
    hog_err err = { { 0 } };
    hog_data *d = th_synth(&(struct th_synth){
        .rows = rows, .features = (uint32_t)nf, .layout = TH_SYNTH_COIN,
        .density = density, .seed = seed, .stream = 9,
        .period = 3, .rest = { .normal = true }, /* every third: no signal */
        .offset = -0.2, .noise = 0.3, .regression = regression }, &err);
    cr_assert(d, "%s", err.msg);
    return d;
}

static inline hog_train_opts opts(hog_loss loss, hog_schedule sched,
                                  double l1, double l2, unsigned epochs)
{
    hog_train_opts o;
    th_opts_init(&o);
    o.loss = loss;
    o.schedule = sched;
    o.eta = loss == HOG_LOSS_SQUARED ? 0.02 : 0.2;
    o.l1 = l1;
    o.l2 = l2;
    o.bias = 1.0;
    o.epochs = epochs;
    o.seed = 7;
    return o;
}

static inline uint64_t n_weights(const hog_data *d, const hog_train_opts *o)
{
    return d->n_features + (o->bias != 0.0);
}

/* |a - b| <= rel * max(|b|, floor * max_j |b_j|) for every weight; returns
 * the largest ratio of the difference to its bound. */
static inline double worst_ratio(const float *a, const float *b, uint64_t n,
                                 double rel, double floor_frac)
{
    double big = 0, worst = 0;
    for (uint64_t j = 0; j < n; j++)
        big = fmax(big, fabs((double)b[j]));
    for (uint64_t j = 0; j < n; j++) {
        double bound = rel * fmax(fabs((double)b[j]), floor_frac * big);
        double diff = fabs((double)a[j] - (double)b[j]);
        double r = bound > 0 ? diff / bound : (diff > 0 ? INFINITY : 0);
        worst = fmax(worst, r);
    }
    return worst;
}

/* True when this build and machine have a CUDA device; else the reason. */
static inline bool have_device(hog_err *err)
{
    struct hog_gpu_info g[1];
    unsigned n = 0;
    return hog_gpu_list(g, 1, &n, err) == HOG_OK && n > 0;
}

#endif
