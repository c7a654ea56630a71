/* newton_gpu: --algo newton and lbfgs with their products on GPUs
 * (gpu/products.c, gpu/spmv.cu, newton/device.c). On any machine: the
 * split of the rows into shards, the order the shards' partials are
 * added in, the shards' upload layout, the solvers through the products'
 * table with a CPU stand-in for the devices (three shards) against the
 * CPU blocks, and the sentences of a machine without a device. With a
 * device (suite newton_gpu_device): the objective on the GPUs within
 * 1e-6 of the CPU's; without one those skip with "no CUDA device: ...". */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinate/coordinate.h"
#include "core/core.h"
#include "core/loss.h"
#include "core/products.h"
#include "gpu/cuda.h"
#include "gpu/gpu.h"
#include "helpers.h"
#include "newton/newton.h"
#include "train/train.h"

/* ---- the split, the order of the sum, the layout --------------------------- */

Test(newton_gpu, rows_split_covers_every_row_by_cost)
{
    /* rows of 1, 100, 1, 1, 100, 1, 1, 1 nonzeros */
    const uint64_t nnz[] = { 1, 100, 1, 1, 100, 1, 1, 1 };
    uint64_t off[9] = { 5 }; /* offsets need not start at 0 */
    for (int i = 0; i < 8; i++)
        off[i + 1] = off[i] + nnz[i];
    uint64_t row0[HOG_GPU_MAX + 1];
    for (unsigned parts = 1; parts <= 10; parts++) {
        hog_gpu_rows_split(off, 8, parts, row0);
        cr_assert_eq(row0[0], 0);
        cr_assert_eq(row0[parts], 8);
        for (unsigned k = 0; k < parts; k++)
            cr_assert_leq(row0[k], row0[k + 1], "parts %u", parts);
    }
    /* two parts: the heavy rows go one to each side */
    hog_gpu_rows_split(off, 8, 2, row0);
    cr_assert(row0[1] >= 2 && row0[1] <= 4, "split at %llu",
              (unsigned long long)row0[1]);
    /* no nonzeros: by rows */
    uint64_t zero[5] = { 0, 0, 0, 0, 0 };
    hog_gpu_rows_split(zero, 4, 2, row0);
    cr_assert_eq(row0[1], 2);
}

Test(newton_gpu, partials_are_added_in_shard_order)
{
    /* (1e16 + 1) - 1e16 is 0 in doubles, (1e16 - 1e16) + 1 is 1: the
     * order shows */
    const double a[2] = { 1e16, 3 }, b[2] = { 1, 4 }, c[2] = { -1e16, 5 };
    const double *in_order[3] = { a, b, c }, *other[3] = { a, c, b };
    double out[2], alt[2];
    hog_gpu_partials_add(out, in_order, 3, 2);
    hog_gpu_partials_add(alt, other, 3, 2);
    cr_assert_eq(out[0], (1e16 + 1.0) + -1e16);
    cr_assert_eq(out[0], 0.0);
    cr_assert_eq(alt[0], 1.0);
    cr_assert_eq(out[1], 12.0);
    double none[2] = { 7, 7 };
    hog_gpu_partials_add(none, in_order, 0, 2);
    cr_assert(none[0] == 0 && none[1] == 0);
}

Test(newton_gpu, shard_layout_has_the_bias_column_and_doubles)
{
    TH_DATA_OR_SKIP(path, "heart_scale");
    hog_data *d = th_load(path);
    const struct hog_csr *m = &d->m;
    const uint64_t nf = d->n_features, lo = 50, hi = 120;
    struct hog_cuda_csr a;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_gpu_csr_build(m, nf, 0.5, lo, hi, 3, &a, &err), HOG_OK,
                 "%s", err.msg);
    cr_assert_eq(a.dev, 3);
    cr_assert_eq(a.rows, hi - lo);
    cr_assert_eq(a.cols, nf + 1);
    cr_assert_eq(a.nnz, m->off[hi] - m->off[lo] + (hi - lo));
    cr_assert_eq(a.off[0], 0);
    for (uint64_t i = lo; i < hi; i++) {
        struct hog_row r = hog_csr_row(m, i);
        int32_t s = a.off[i - lo], e = a.off[i - lo + 1];
        cr_assert_eq((uint32_t)(e - s), r.nnz + 1);
        for (uint32_t q = 0; q < r.nnz; q++) {
            cr_assert_eq((uint32_t)a.col[s + q], r.idx[q]);
            cr_assert_eq(a.val[s + q], (double)r.val[q]);
        }
        cr_assert_eq((uint64_t)a.col[e - 1], nf);
        cr_assert_eq(a.val[e - 1], 0.5);
    }
    hog_gpu_csr_free(&a);
    /* without a bias: the rows as they are */
    cr_assert_eq(hog_gpu_csr_build(m, nf, 0.0, lo, hi, 0, &a, &err), HOG_OK);
    cr_assert_eq(a.cols, nf);
    cr_assert_eq(a.nnz, m->off[hi] - m->off[lo]);
    hog_gpu_csr_free(&a);
    hog_data_free(d);
}

/* ---- the solvers through the products' table, devices stood in for -------- *
 *
 * The table of gpu/products.c with each device's SpMV done here on the
 * shard's upload layout: the split, the layout, the order of the sum,
 * newton/device.c's pass and the solvers' set-up are the GPU path's; only
 * cuSPARSE is not. */
#define FAKE_SHARDS 3u

struct hog_products {
    uint64_t nw, row0[FAKE_SHARDS + 1];
    struct hog_cuda_csr a[FAKE_SHARDS];
    double *part;
    unsigned opened;
};

static unsigned fake_opens;

static void fake_close(struct hog_products *p)
{
    for (unsigned k = 0; k < FAKE_SHARDS; k++)
        hog_gpu_csr_free(&p->a[k]);
    free(p->part);
    free(p);
}

static hog_status fake_open(const struct hog_csr *m, uint64_t nf,
                            double bias, const hog_train_opts *o,
                            struct hog_products **out, hog_err *err)
{
    cr_assert_str_eq(o->gpus, "0,1,2");
    struct hog_products *p = calloc(1, sizeof *p);
    cr_assert_not_null(p);
    p->nw = nf + (bias != 0.0);
    p->part = malloc(FAKE_SHARDS * p->nw * sizeof *p->part);
    hog_gpu_rows_split(m->off, m->rows, FAKE_SHARDS, p->row0);
    for (unsigned k = 0; k < FAKE_SHARDS; k++) {
        hog_status st = hog_gpu_csr_build(m, nf, bias, p->row0[k],
                                          p->row0[k + 1], (int)k, &p->a[k],
                                          err);
        cr_assert_eq(st, HOG_OK, "%s", err->msg);
    }
    fake_opens++;
    *out = p;
    return HOG_OK;
}

static hog_status fake_xv(struct hog_products *p, const double *v, double *t,
                          hog_err *err)
{
    (void)err;
    for (unsigned k = 0; k < FAKE_SHARDS; k++) {
        const struct hog_cuda_csr *a = &p->a[k];
        for (uint32_t i = 0; i < a->rows; i++) {
            double s = 0;
            for (int32_t q = a->off[i]; q < a->off[i + 1]; q++)
                s += a->val[q] * v[a->col[q]];
            t[p->row0[k] + i] = s;
        }
    }
    return HOG_OK;
}

static hog_status fake_xtc(struct hog_products *p, const double *c,
                           bool squares, double *out, hog_err *err)
{
    (void)err;
    const double *parts[FAKE_SHARDS];
    for (unsigned k = 0; k < FAKE_SHARDS; k++) {
        const struct hog_cuda_csr *a = &p->a[k];
        double *part = p->part + k * p->nw;
        memset(part, 0, p->nw * sizeof *part);
        for (uint32_t i = 0; i < a->rows; i++)
            for (int32_t q = a->off[i]; q < a->off[i + 1]; q++)
                part[a->col[q]] += (squares ? a->val[q] * a->val[q]
                                            : a->val[q]) *
                                   c[p->row0[k] + i];
        parts[k] = part;
    }
    hog_gpu_partials_add(out, parts, FAKE_SHARDS, p->nw);
    return HOG_OK;
}

static uint64_t fake_bytes(const struct hog_products *p)
{
    return p->nw * FAKE_SHARDS * sizeof(double);
}

static const struct hog_products_ops fake_ops = {
    .open = fake_open, .xv = fake_xv, .xtc = fake_xtc, .bytes = fake_bytes,
    .close = fake_close,
};

static hog_status fit_epoch_end(struct hog_fit *f, unsigned epoch,
                                double seconds, hog_err *err)
{
    (void)f, (void)epoch, (void)seconds, (void)err;
    return HOG_OK;
}

static void fit_tick(struct hog_fit *f, unsigned epoch, uint64_t done,
                     uint64_t total)
{
    (void)f, (void)epoch, (void)done, (void)total;
}

/* The solver of o on d, its products on the CPU blocks (ops NULL) or
 * through ops. */
static hog_model *solve(const hog_data *d, const hog_train_opts *o,
                        const struct hog_products_ops *ops)
{
    hog_err err = { { 0 } };
    hog_model *m;
    cr_assert_eq(hog_model_new(d->n_features, o->loss, o->bias, &m, &err),
                 HOG_OK, "%s", err.msg);
    struct hog_fit f = { .train = d, .o = o, .model = m,
                         .epoch_end = fit_epoch_end, .tick = fit_tick,
                         .gap = NAN, .objective = NAN, .mean_loss = NAN,
                         .products = ops };
    hog_status st = o->algo == HOG_ALGO_NEWTON ? hog_newton_train(&f, &err)
                                               : hog_lbfgs_train(&f, &err);
    cr_assert_eq(st, HOG_OK, "%s", err.msg);
    return m;
}

static void through_the_table(hog_algo algo, hog_loss loss, unsigned threads)
{
    TH_DATA_OR_SKIP(path, "a9a");
    hog_data *d = th_load(path);
    double l2 = 1.0 / (double)hog_data_rows(d);
    hog_train_opts o = th_solver_opts(algo, loss, 0.0, l2, 0, 1e-4);
    o.threads = threads;
    hog_model *cpu = solve(d, &o, NULL);
    o.gpus = "0,1,2";
    unsigned before = fake_opens;
    hog_model *dev = solve(d, &o, &fake_ops);
    cr_assert_eq(fake_opens, before + 1, "the table was not used");
    double a = th_objective(cpu, d, loss, 0.0, l2).liblinear,
           b = th_objective(dev, d, loss, 0.0, l2).liblinear;
    cr_assert(fabs(a - b) <= 1e-6 * fabs(a),
              "%s %s: objective %.17g through the table, %.17g on the "
              "blocks", hog_algo_name(algo), hog_loss_name(loss), b, a);
    hog_model_free(cpu);
    hog_model_free(dev);
    hog_data_free(d);
}

Test(newton_gpu, newton_through_the_table_equals_the_blocks, .timeout = 60)
{
    through_the_table(HOG_ALGO_NEWTON, HOG_LOSS_LOGISTIC, 1);
    through_the_table(HOG_ALGO_NEWTON, HOG_LOSS_SQHINGE, 2);
}

Test(newton_gpu, lbfgs_through_the_table_equals_the_blocks, .timeout = 60)
{
    through_the_table(HOG_ALGO_LBFGS, HOG_LOSS_LOGISTIC, 2);
}

/* The rows' coefficients over ranges on the pool: the same bits at 1 and
 * 3 threads (hog_newton_pass through the table). */
static double pass_row(void *ctx, uint64_t i, double t, double *acc)
{
    const float *y = ctx;
    double c = y[i] * tanh(t) + 0.25;
    *acc += c * c;
    return c;
}

Test(newton_gpu, a_pass_through_the_table_is_the_same_at_any_thread_count)
{
    TH_DATA_OR_SKIP(path, "a9a");
    hog_data *d = th_load(path);
    hog_train_opts o =
        th_solver_opts(HOG_ALGO_NEWTON, HOG_LOSS_LOGISTIC, 0.0, 1e-3, 0, 1e-4);
    o.gpus = "0,1,2";
    double *out[2] = { NULL, NULL }, sum[2];
    uint64_t nw = 0;
    for (int k = 0; k < 2; k++) {
        struct hog_newton_blocks b;
        hog_err err = { { 0 } };
        cr_assert_eq(hog_newton_blocks_open(&b, &d->m, d->n_features, 1.0,
                                            k ? 3 : 1, &err), HOG_OK);
        cr_assert_eq(hog_newton_dev_open(&b, &fake_ops, &o, &err), HOG_OK,
                     "%s", err.msg);
        nw = b.nw;
        double *v = malloc(nw * sizeof *v);
        for (uint64_t j = 0; j < nw; j++)
            v[j] = 0.01 * (double)((j * 7) % 13) - 0.05;
        out[k] = malloc(nw * sizeof *out[k]);
        sum[k] = hog_newton_pass(&b, v, pass_row, (void *)d->m.y, out[k],
                                 false);
        cr_assert(b.dev_ranges > 3, "a9a's rows make several ranges");
        free(v);
        hog_newton_blocks_close(&b);
    }
    cr_assert_eq(sum[0], sum[1]);
    cr_assert(memcmp(out[0], out[1], nw * sizeof *out[0]) == 0);
    free(out[0]);
    free(out[1]);
    hog_data_free(d);
}

/* ---- without a device --------------------------------------------------------- */

static bool have_device(hog_err *err)
{
    struct hog_gpu_info g[1];
    unsigned n = 0;
    return hog_gpu_list(g, 1, &n, err) == HOG_OK && n > 0;
}

static bool no_cuda_sentence(const char *msg)
{
    return strstr(msg, "no CUDA device") ||
           strstr(msg, "hogtrain was built without CUDA") ||
           strstr(msg, "GPU support not available: ");
}

Test(newton_gpu, without_a_device_the_library_says_why)
{
    hog_err err = { { 0 } };
    if (have_device(&err))
        cr_skip_test("a CUDA device is present; the no-device path is "
                     "checked on machines without one");
    TH_DATA_OR_SKIP(path, "heart_scale");
    hog_data *d = th_load(path);
    for (int k = 0; k < 2; k++) {
        hog_train_opts o =
            th_solver_opts(k ? HOG_ALGO_LBFGS : HOG_ALGO_NEWTON,
                           HOG_LOSS_LOGISTIC, 0.0, 1e-2, 0, 1e-4);
        o.gpus = "0";
        hog_model *m = NULL;
        err.msg[0] = '\0';
        cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_ENOTSUP);
        cr_assert_null(m);
        cr_assert(no_cuda_sentence(err.msg), "%s", err.msg);
        /* the solver's products, not GPU replicas */
        cr_assert(hog_train_gpu_replicas(&o) == false);
    }
    hog_data_free(d);
}

Test(newton_gpu, the_command_says_why_and_runs_with_gpus_none,
     .timeout = 60)
{
    hog_err err = { { 0 } };
    if (have_device(&err))
        cr_skip_test("a CUDA device is present");
    TH_DATA_OR_SKIP(path, "heart_scale");
    char dir[512], out[8192];
    th_tmpdir(dir, sizeof dir);
    const char *algos[] = { "newton", "lbfgs" };
    for (int k = 0; k < 2; k++) {
        int rc = th_run(out, sizeof out, "'%s' train --algo %s --gpus 0 "
                        "'%s' -o '%s/m.hgm'", th_bin(), algos[k], path, dir);
        cr_assert_eq(rc, 1, "%s: %s", algos[k], out);
        cr_assert(no_cuda_sentence(out), "%s", out);
        rc = th_run(out, sizeof out, "'%s' train --algo %s --gpus none "
                    "'%s' -o '%s/m.hgm'", th_bin(), algos[k], path, dir);
        cr_assert_eq(rc, 0, "%s: %s", algos[k], out);
    }
    /* other algorithms keep refusing --algo with --gpus; the replicas'
     * knobs are not the products' */
    int rc = th_run(out, sizeof out, "'%s' train --algo dcd --gpus 0 '%s'",
                    th_bin(), path);
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert(strstr(out, "newton and lbfgs"), "%s", out);
    rc = th_run(out, sizeof out, "'%s' train --algo newton --gpus 0 "
                "--gpu-batch 64 '%s'", th_bin(), path);
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert(strstr(out, "--gpu-batch applies to GPU replicas"), "%s", out);
}

/* ---- with a device (suite newton_gpu_device) ------------------------------------ */

#define NEED_DEVICE()                                                         \
    do {                                                                      \
        hog_err e_ = { { 0 } };                                               \
        if (!have_device(&e_))                                                \
            cr_skip_test("%s%s",                                              \
                         strstr(e_.msg, "no CUDA device") ? ""                \
                                                          : "no CUDA device: ",\
                         e_.msg);                                             \
    } while (0)

/* The objective with --gpus gpus within 1e-6 of the CPU's, through
 * hog_train (the front door's wiring, the plugin, cuSPARSE). */
static void gpu_vs_cpu(const char *name, hog_algo algo, hog_loss loss,
                       const char *gpus)
{
    TH_DATA_OR_SKIP(path, name);
    hog_data *d = th_load(path);
    double l2 = 1.0 / (double)hog_data_rows(d);
    hog_train_opts o = th_solver_opts(algo, loss, 0.0, l2, 0, 1e-4);
    o.threads = 4;
    hog_model *cpu = th_train_ok(d, &o);
    o.gpus = gpus;
    hog_model *gpu = th_train_ok(d, &o);
    double a = th_objective(cpu, d, loss, 0.0, l2).liblinear,
           b = th_objective(gpu, d, loss, 0.0, l2).liblinear;
    printf("newton_gpu_device: %s %s %s --gpus %s: objective %.12g, CPU "
           "%.12g, relative difference %.2g\n", name, hog_algo_name(algo),
           hog_loss_name(loss), gpus, b, a, fabs(a - b) / fabs(a));
    cr_assert(fabs(a - b) <= 1e-6 * fabs(a),
              "%s %s on %s --gpus %s: objective %.17g, the CPU's %.17g",
              hog_algo_name(algo), hog_loss_name(loss), name, gpus, b, a);
    hog_model_free(cpu);
    hog_model_free(gpu);
    hog_data_free(d);
}

Test(newton_gpu_device, newton_objective_equals_the_cpu, .timeout = 240)
{
    NEED_DEVICE();
    gpu_vs_cpu("a9a", HOG_ALGO_NEWTON, HOG_LOSS_LOGISTIC, "0");
    gpu_vs_cpu("a9a", HOG_ALGO_NEWTON, HOG_LOSS_SQHINGE, "0");
    gpu_vs_cpu("news20.binary.train.svm", HOG_ALGO_NEWTON, HOG_LOSS_LOGISTIC,
               "0");
}

Test(newton_gpu_device, lbfgs_objective_equals_the_cpu, .timeout = 240)
{
    NEED_DEVICE();
    gpu_vs_cpu("a9a", HOG_ALGO_LBFGS, HOG_LOSS_LOGISTIC, "0");
    gpu_vs_cpu("news20.binary.train.svm", HOG_ALGO_LBFGS, HOG_LOSS_LOGISTIC,
               "0");
}

Test(newton_gpu_device, two_shards_on_one_gpu_equal_the_cpu, .timeout = 240)
{
    NEED_DEVICE();
    gpu_vs_cpu("a9a", HOG_ALGO_NEWTON, HOG_LOSS_LOGISTIC, "0,0");
    gpu_vs_cpu("a9a", HOG_ALGO_LBFGS, HOG_LOSS_SQHINGE, "0,0,0");
}

Test(newton_gpu_device, the_gpu_result_is_the_same_on_every_run,
     .timeout = 120)
{
    NEED_DEVICE();
    TH_DATA_OR_SKIP(path, "a9a");
    hog_data *d = th_load(path);
    hog_train_opts o = th_solver_opts(HOG_ALGO_NEWTON, HOG_LOSS_LOGISTIC, 0.0,
                                      1.0 / (double)hog_data_rows(d), 0, 1e-4);
    o.gpus = "0,0";
    hog_model *a = th_train_ok(d, &o), *b = th_train_ok(d, &o);
    cr_assert(memcmp(hog_model_weights(a), hog_model_weights(b),
                     (hog_data_features(d) + 1) * sizeof(float)) == 0,
              "two runs on the GPU gave different weights (CSR_ALG2 on "
              "the transposed copy should not)");
    hog_model_free(a);
    hog_model_free(b);
    hog_data_free(d);
}
