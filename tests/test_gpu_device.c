/* gpu_device: where a CUDA device is present, the GPU steps against the
 * CPU reference and the CPU trainers, deterministic, streamed and
 * replicated; the topology's GPUs and the command on a device. Without a
 * device each test skips with "no CUDA device: <why>". */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "core/loss.h"
#include "core/metrics.h"
#include "gpu/cuda.h"
#include "gpu/gpu.h"
#include "gpu_tests.h"
#include "helpers.h"
#include "synth.h"
#include "io/io.h"

/* ---- with a device (suite gpu_device) ------------------------------------------------------ */

#define NEED_DEVICE()                                                         \
    do {                                                                      \
        hog_err e_ = { { 0 } };                                               \
        if (!have_device(&e_))                                                \
            cr_skip_test("%s%s",                                              \
                         strstr(e_.msg, "no CUDA device") ? ""                \
                                                          : "no CUDA device: ",\
                         e_.msg);                                             \
    } while (0)

static hog_status fit_epoch_end(struct hog_fit *f, unsigned epoch,
                                double seconds, hog_err *err)
{
    return HOG_OK;
}

static void fit_tick(struct hog_fit *f, unsigned epoch, uint64_t done,
                     uint64_t total)
{
}

/* GPU training with explicit GPU options; the weights into w. */
static hog_status gpu_fit(const hog_data *d, const hog_train_opts *o,
                          const struct hog_gpu_opts *g, float *w,
                          hog_err *err)
{
    hog_model *m;
    hog_status st = hog_model_new(d->n_features, o->loss, o->bias, &m, err);
    if (st != HOG_OK)
        return st;
    struct hog_fit f = { .train = d, .o = o, .model = m,
                         .epoch_end = fit_epoch_end, .tick = fit_tick };
    st = hog_gpu_train_opts(&f, g, err);
    if (st == HOG_OK)
        memcpy(w, m->w, n_weights(d, o) * sizeof *w);
    hog_model_free(m);
    return st;
}

static struct hog_gpu_opts gopts(hog_gpu_step step, unsigned replicas,
                                 uint32_t batch, uint64_t sync_every)
{
    struct hog_gpu_opts g;
    memset(&g, 0, sizeof g);
    g.spec.n = replicas;
    for (unsigned i = 0; i < replicas; i++)
        g.spec.dev[i] = 0;
    g.step = step;
    g.batch = batch;
    g.sync_every = sync_every;
    g.quiet = true;
    return g;
}

/* The weights whose bits differ. */
static uint64_t differing(const float *a, const float *b, uint64_t n)
{
    uint64_t k = 0;
    for (uint64_t j = 0; j < n; j++)
        k += memcmp(&a[j], &b[j], sizeof *a) != 0;
    return k;
}

/* news20.binary when it is there (the check), else a synthetic
 * stand-in so that the test still runs. */
static hog_data *news20_or_synth(const char *name, const hog_data *like)
{
    const char *path = th_data(name);
    fprintf(stderr, "data: %s\n", path ? path : like ? "(no test set)" :
            "a synthetic stand-in (4000 rows, 2000 features): news20.binary "
            "is not under HOGTRAIN_DATA, or xz is missing");
    if (!path)
        return like ? NULL : synth(4000, 2000, 0.01, false, 21);
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    if (like)
        lo.n_features = like->n_features;
    hog_data *d;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_data_load(path, &lo, &d, &err), HOG_OK, "%s", err.msg);
    return d;
}

/* Every case's worst ratio is printed, passing or not, and asserted only
 * once all are measured: one device run shows them all. */
Test(gpu_device, minibatch_equals_cpu_reference, .timeout = 120)
{
    NEED_DEVICE();
    hog_data *d = news20_or_synth("news20.binary.train.svm", NULL);
    double r[MB_NCASES];
    for (size_t i = 0; i < MB_NCASES; i++) {
        const struct mb_case *c = &MB_CASES[i];
        hog_train_opts o = opts(HOG_LOSS_LOGISTIC, c->sched, c->l1, c->l2, 1);
        uint64_t nw = n_weights(d, &o);
        float *gw = malloc(nw * sizeof *gw), *cw = malloc(nw * sizeof *cw);
        hog_err err = { { 0 } };
        struct hog_gpu_opts g = gopts(HOG_GPU_STEP_MINIBATCH, 1, MB_BATCH,
                                      1 << 20);
        cr_assert_eq(gpu_fit(d, &o, &g, gw, &err), HOG_OK, "%s", err.msg);
        cr_assert_eq(hog_gpu_ref_train(d, &o, 1, MB_BATCH, 1, cw, &err),
                     HOG_OK, "%s", err.msg);
        r[i] = worst_ratio(gw, cw, nw, MB_REL, MB_FLOOR);
        fprintf(stderr, "minibatch_equals_cpu_reference: %s: worst weight at "
                "%.3g of the bound (%g relative)\n", c->name, r[i], MB_REL);
        free(gw);
        free(cw);
    }
    for (size_t i = 0; i < MB_NCASES; i++)
        cr_expect_leq(r[i], 1.0, "%s: GPU minibatch differs from the CPU "
                      "reference by %g of %g relative", MB_CASES[i].name,
                      r[i], MB_REL);
    hog_data_free(d);
}

Test(gpu_device, minibatch_is_deterministic, .timeout = 60)
{
    NEED_DEVICE();
    hog_data *d = synth(3000, 500, 0.05, false, 4);
    hog_train_opts o = opts(HOG_LOSS_LOGISTIC, HOG_SCHED_INVSCALING, 0, 1e-4,
                            2);
    uint64_t nw = n_weights(d, &o);
    float *a = malloc(nw * sizeof *a), *b = malloc(nw * sizeof *b);
    struct hog_gpu_opts g = gopts(HOG_GPU_STEP_MINIBATCH, 1, 64, 1 << 20);
    hog_err err = { { 0 } };
    cr_assert_eq(gpu_fit(d, &o, &g, a, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(gpu_fit(d, &o, &g, b, &err), HOG_OK, "%s", err.msg);
    uint64_t diff = differing(a, b, nw);
    fprintf(stderr, "minibatch_is_deterministic: %llu of %llu weights differ "
            "between two runs\n", (unsigned long long)diff,
            (unsigned long long)nw);
    cr_assert_eq(diff, 0);
    free(a);
    free(b);
    hog_data_free(d);
}

Test(gpu_device, streamed_equals_resident, .timeout = 60)
{
    NEED_DEVICE();
    hog_data *d = synth(3000, 500, 0.05, false, 6);
    hog_train_opts o = opts(HOG_LOSS_HINGE, HOG_SCHED_CONSTANT, 1e-5, 1e-4,
                            2);
    uint64_t nw = n_weights(d, &o);
    float *a = malloc(nw * sizeof *a), *b = malloc(nw * sizeof *b);
    struct hog_gpu_opts g = gopts(HOG_GPU_STEP_MINIBATCH, 1, 100, 1 << 20);
    hog_err err = { { 0 } };
    cr_assert_eq(gpu_fit(d, &o, &g, a, &err), HOG_OK, "%s", err.msg);
    g.force_stream = true;
    cr_assert_eq(gpu_fit(d, &o, &g, b, &err), HOG_OK, "%s", err.msg);
    uint64_t diff = differing(a, b, nw);
    fprintf(stderr, "streamed_equals_resident: %llu of %llu weights differ\n",
            (unsigned long long)diff, (unsigned long long)nw);
    cr_assert_eq(diff, 0,
                 "streamed batches train another model");
    free(a);
    free(b);
    hog_data_free(d);
}

/* Two replicas on one GPU averaged every round equal one replica with
 * their two batches (and the CPU reference of two replicas). */
Test(gpu_device, two_replicas_one_gpu_equal_one_replica, .timeout = 60)
{
    NEED_DEVICE();
    hog_data *d = synth(4096, 800, 0.03, false, 8); /* 32 rounds of 128 */
    hog_train_opts o = opts(HOG_LOSS_LOGISTIC, HOG_SCHED_INVSCALING, 0, 1e-4,
                            2);
    uint64_t nw = n_weights(d, &o);
    float *two = malloc(nw * sizeof *two), *one = malloc(nw * sizeof *one);
    float *ref = malloc(nw * sizeof *ref);
    hog_err err = { { 0 } };
    struct hog_gpu_opts g2 = gopts(HOG_GPU_STEP_MINIBATCH, 2, 64, 1);
    struct hog_gpu_opts g1 = gopts(HOG_GPU_STEP_MINIBATCH, 1, 128, 1);
    cr_assert_eq(gpu_fit(d, &o, &g2, two, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(gpu_fit(d, &o, &g1, one, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_gpu_ref_train(d, &o, 2, 64, 1, ref, &err), HOG_OK);
    double r1 = worst_ratio(two, one, nw, 1e-5, 1e-3);
    double r2 = worst_ratio(two, ref, nw, 1e-5, 1e-3);
    fprintf(stderr, "two_replicas_one_gpu_equal_one_replica: against one "
            "replica %.3g, against the reference %.3g of the bound (1e-5)\n",
            r1, r2);
    cr_expect_leq(r1, 1.0, "two replicas vs one: %g of the bound", r1);
    cr_assert_leq(r2, 1.0, "two replicas vs the reference: %g", r2);
    free(two);
    free(one);
    free(ref);
    hog_data_free(d);
}

Test(gpu_device, hogwild_step_reaches_cpu_hogwild_accuracy, .timeout = 180)
{
    NEED_DEVICE();
    hog_data *tr = news20_or_synth("news20.binary.train.svm", NULL);
    hog_data *te = news20_or_synth("news20.binary.test.svm", tr);
    if (!te)
        te = tr;
    hog_train_opts o = opts(HOG_LOSS_LOGISTIC, HOG_SCHED_INVSCALING, 0, 1e-5,
                            5);
    o.eta = 0.5;
    uint64_t nw = n_weights(tr, &o);
    float *gw = malloc(nw * sizeof *gw);
    hog_err err = { { 0 } };
    struct hog_gpu_opts g = gopts(HOG_GPU_STEP_HOGWILD, 1, 256, 1 << 20);
    cr_assert_eq(gpu_fit(tr, &o, &g, gw, &err), HOG_OK, "%s", err.msg);
    double gacc = accuracy(gw, te, o.bias);
    const char *cpu;
    double cacc = cpu_hogwild_accuracy(tr, te, o, &cpu);
    fprintf(stderr, "hogwild_step_reaches_cpu_hogwild_accuracy: GPU hogwild "
            "step %.2f%%, %s %.2f%%, bias weight %g\n", 100 * gacc, cpu,
            100 * cacc, (double)gw[nw - 1]);
    cr_assert_geq(gacc, cacc - 0.005, "GPU hogwild step %.2f%%, %s %.2f%%",
                  100 * gacc, cpu, 100 * cacc);
    free(gw);
    if (te != tr)
        hog_data_free(te);
    hog_data_free(tr);
}

Test(gpu_device, topo_lists_gpus, .timeout = 60)
{
    NEED_DEVICE();
    struct hog_gpu_info g[HOG_GPU_MAX];
    unsigned n = 0;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_gpu_list(g, HOG_GPU_MAX, &n, &err), HOG_OK, "%s",
                 err.msg);
    cr_assert_gt(n, 0);
    cr_assert_gt(g[0].mem_total, 0);
    cr_assert(strchr(g[0].pci, ':'), "%s", g[0].pci);
    char out[8192];
    int rc = th_run(out, sizeof out, "'%s' topo", th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, g[0].pci), "%s", out);
    double bps = 0;
    cr_assert_eq(hog_gpu_copy_bandwidth(0, 64 << 20, &bps, &err), HOG_OK,
                 "%s", err.msg);
    fprintf(stderr, "topo_lists_gpus: %s, %s, %.1f GiB, cc %d.%d, %d SMs; "
            "copy bandwidth %.1f GB/s\n", g[0].name, g[0].pci,
            (double)g[0].mem_total / (1u << 30), g[0].cc_major, g[0].cc_minor,
            g[0].sms, bps / 1e9);
    cr_assert_gt(bps, 1e9);
}

Test(gpu_device, command_trains_on_gpu, .timeout = 60)
{
    NEED_DEVICE();
    char dir[512], out[8192];
    th_tmpdir(dir, sizeof dir);
    char path[600];
    snprintf(path, sizeof path, "%s/g.svm", dir);
    int rc = th_run(out, sizeof out,
                    "'%s' gen -q --rows 5000 --features 2000 -o '%s'",
                    th_bin(), path);
    cr_assert_eq(rc, 0, "%s", out);
    for (int i = 0; i < 2; i++) {
        rc = th_run(out, sizeof out,
                    "'%s' train --gpus 0,0 %s --epochs 2 -o '%s/m%d.hgm' '%s'",
                    th_bin(), GPU_COMMAND_STEPS[i], dir, i, path);
        fprintf(stderr, "command_trains_on_gpu: %s: status %d\n%s\n",
                GPU_COMMAND_STEPS[i], rc, out);
        cr_assert_eq(rc, 0, "%s: %s", GPU_COMMAND_STEPS[i], out);
        cr_assert(strstr(out, "accuracy"), "%s", out);
    }
    rc = th_run(out, sizeof out, "'%s' train -q --gpus 999 '%s'", th_bin(),
                path);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "device 999"), "%s", out);
}
