/* What test_gpu.c and test_gpu_device.c share: a planted random problem,
 * the options of the GPU tests, the weights' count and comparison, and
 * whether a device is there. */
#ifndef HOG_TEST_GPU_TESTS_H
#define HOG_TEST_GPU_TESTS_H

#include <criterion/criterion.h>
#include <math.h>

#include "core/core.h"
#include "gpu/gpu.h"
#include "helpers.h"
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

/* The cases of gpu_device/minibatch_equals_cpu_reference: one epoch of
 * logistic regression at batch 256, every weight within 1e-5 relative of
 * the CPU reference (a floor of 1e-3 of the largest weight). */
struct mb_case {
    const char *name;
    hog_schedule sched;
    double l1, l2;
};
static const struct mb_case MB_CASES[] = {
    { "invscaling, L2", HOG_SCHED_INVSCALING, 0, 1e-5 },
    { "constant, L1 + L2", HOG_SCHED_CONSTANT, 1e-6, 1e-5 },
    { "adagrad", HOG_SCHED_ADAGRAD, 0, 0 },
    { "constant, the sparse update", HOG_SCHED_CONSTANT, 0, 0 },
};
#define MB_NCASES (sizeof MB_CASES / sizeof MB_CASES[0])
#define MB_BATCH 256u
#define MB_REL 1e-5
#define MB_FLOOR 1e-3

/* gpu_device/command_trains_on_gpu's two steps through the command. The
 * hogwild step refuses the command's default schedule (AdaGrad); suite gpu
 * checks that these lines pass the command's checks on any machine. */
static const char *const GPU_COMMAND_STEPS[] = {
    "--gpu-step minibatch",
    "--gpu-step hogwild --schedule invscaling",
};

/* The share of d's rows that w (bias weight last) classifies right. */
static inline double accuracy(const float *w, const hog_data *d, double bias)
{
    uint64_t right = 0;
    for (uint64_t i = 0; i < d->m.rows; i++) {
        struct hog_row r = hog_csr_row(&d->m, i);
        double m = bias != 0 ? w[d->n_features] * bias : 0;
        for (uint32_t k = 0; k < r.nnz; k++)
            m += w[r.idx[k]] * r.val[k];
        right += (m > 0) == hog_label_positive(d, r.y);
    }
    return (double)right / (double)d->m.rows;
}

/* The test accuracy of CPU Hogwild! on every core with o (of serial SGD
 * where this build has no Hogwild! yet); its name in *name. */
static inline double cpu_hogwild_accuracy(const hog_data *tr,
                                          const hog_data *te,
                                          hog_train_opts o, const char **name)
{
    hog_err err = { { 0 } };
    hog_model *m = NULL;
    o.gpus = NULL;
    o.algo = HOG_ALGO_HOGWILD;
    *name = "CPU Hogwild!";
    hog_status st = hog_train(tr, NULL, &o, NULL, &m, &err);
    if (st == HOG_ENOTSUP) {
        o.algo = HOG_ALGO_SERIAL;
        *name = "CPU serial SGD";
        st = hog_train(tr, NULL, &o, NULL, &m, &err);
    }
    cr_assert_eq(st, HOG_OK, "%s", err.msg);
    double acc = accuracy(hog_model_weights(m), te, o.bias);
    hog_model_free(m);
    return acc;
}

/* True when this build and machine have a CUDA device; else the reason. */
static inline bool have_device(hog_err *err)
{
    struct hog_gpu_info g[1];
    unsigned n = 0;
    return hog_gpu_list(g, 1, &n, err) == HOG_OK && n > 0;
}

#endif
