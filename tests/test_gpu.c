/* gpu: --gpus parsing, the plan, the CPU reference of the minibatch step
 * (against a plain eager SGD, and two averaged replicas against one with
 * twice the batch), the sentences of a build or machine without CUDA, the
 * plugin loader. Where a device is present, the GPU steps against the
 * reference and the CPU trainers: test_gpu_device.c (suite gpu_device).
 * What both files use is gpu_tests.h. */
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

/* ---- --gpus ------------------------------------------------------------------------ */

Test(gpu, spec_parse)
{
    struct hog_gpu_spec s;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_gpu_spec_parse(NULL, &s, &err), HOG_OK);
    cr_assert(!s.all && s.n == 0);
    cr_assert_eq(hog_gpu_spec_parse("none", &s, &err), HOG_OK);
    cr_assert(!s.all && s.n == 0);
    cr_assert_eq(hog_gpu_spec_parse("all", &s, &err), HOG_OK);
    cr_assert(s.all);
    cr_assert_eq(hog_gpu_spec_parse("0,3,1", &s, &err), HOG_OK);
    cr_assert(!s.all && s.n == 3 && s.dev[0] == 0 && s.dev[1] == 3 &&
              s.dev[2] == 1);
    cr_assert_eq(hog_gpu_spec_parse("2,2", &s, &err), HOG_OK);
    cr_assert(s.n == 2 && s.dev[0] == 2 && s.dev[1] == 2);

    const char *bad[] = { "0,", ",1", "x", "0,,1", "1024", "-1", "0 1",
                          "All", "0;1" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err.msg[0] = '\0';
        cr_assert_eq(hog_gpu_spec_parse(bad[i], &s, &err), HOG_EINVAL, "%s",
                     bad[i]);
        cr_assert(strstr(err.msg, "--gpus"), "%s: %s", bad[i], err.msg);
    }
    char many[400] = "0";
    for (int i = 1; i <= HOG_GPU_MAX; i++)
        strcat(many, ",0");
    cr_assert_eq(hog_gpu_spec_parse(many, &s, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "at most"), "%s", err.msg);
}

Test(gpu, opts_checked_before_any_device)
{
    hog_data *d = synth(50, 10, 0.3, false, 1);
    hog_train_opts o = opts(HOG_LOSS_LOGISTIC, HOG_SCHED_ADAGRAD, 0, 1e-3, 1);
    o.gpus = "0";
    o.gpu_step = HOG_GPU_STEP_HOGWILD;
    hog_model *m = NULL;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "adagrad"), "%s", err.msg);
    o.gpus = "0,x";
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "--gpus"), "%s", err.msg);
    hog_data_free(d);
}

/* ---- the plan ------------------------------------------------------------------------ */

Test(gpu, plan_covers_every_row_once)
{
    const uint64_t ns[] = { 1, 7, 64, 1000 };
    const unsigned Rs[] = { 1, 2, 3 };
    const uint32_t Bs[] = { 1, 5, 64 };
    for (size_t a = 0; a < 4; a++)
        for (size_t b = 0; b < 3; b++)
            for (size_t c = 0; c < 3; c++) {
                struct hog_gpu_plan p;
                cr_assert_eq(hog_gpu_plan_make(ns[a], Rs[b], Bs[c], 3, &p,
                                               NULL),
                             HOG_OK);
                unsigned char *seen = calloc(ns[a], 1);
                uint64_t count = 0;
                for (uint64_t k = 0; k < p.rounds; k++)
                    for (unsigned r = 0; r < p.R; r++) {
                        uint64_t lo, hi;
                        hog_gpu_plan_part(&p, k, r, &lo, &hi);
                        cr_assert_leq(hi - lo, Bs[c]);
                        for (uint64_t x = lo; x < hi; x++) {
                            cr_assert_lt(p.perm[x], ns[a]);
                            cr_assert_eq(seen[p.perm[x]]++, 0);
                            count++;
                        }
                    }
                cr_assert_eq(count, ns[a]);
                /* Every round but the last is full. */
                cr_assert_eq(p.rounds,
                             (ns[a] + Rs[b] * Bs[c] - 1) / (Rs[b] * Bs[c]));
                free(seen);
                hog_gpu_plan_free(&p);
            }
}

/* ---- the CPU reference ------------------------------------------------------------------- */

static double eta_of(const hog_train_opts *o, uint64_t t, uint64_t n)
{
    if (o->schedule != HOG_SCHED_INVSCALING)
        return o->eta;
    if (o->l2 > 0)
        return o->eta / (1.0 + o->eta * o->l2 * (double)t);
    return o->eta / pow(1.0 + (double)t / (double)n, o->power);
}

static double soft_d(double u, double b)
{
    return u > b ? u - b : u < -b ? u + b : 0.0;
}

/* Plain eager SGD, one row a step, every weight regularized every step, in
 * double, over the plan's order with R = 1 and B = 1. */
static double *eager(const hog_data *d, const hog_train_opts *o)
{
    uint64_t n = d->m.rows, nf = d->n_features, nw = n_weights(d, o);
    double *w = calloc(nw, sizeof *w), *G = calloc(nw, sizeof *G);
    double *g = calloc(nw, sizeof *g);
    struct hog_gpu_plan p;
    cr_assert_eq(hog_gpu_plan_make(n, 1, 1, o->seed, &p, NULL), HOG_OK);
    struct hog_rng rng;
    uint64_t *order = th_serial_order(n, o->seed, &rng);
    uint64_t t = 0;
    for (unsigned e = 0; e < o->epochs; e++) {
        hog_shuffle_u64(&rng, order, n);
        for (uint64_t i = 0; i < n; i++, t++) {
            struct hog_row r = hog_csr_row(&d->m, p.perm[order[i]]);
            double y = o->loss == HOG_LOSS_SQUARED ? r.y
                       : hog_label_positive(d, r.y) ? 1.0
                                                    : -1.0;
            double m = w[nf] * o->bias;
            for (uint32_t k = 0; k < r.nnz; k++)
                m += w[r.idx[k]] * r.val[k];
            double dl = hog_loss_deriv(o->loss, 0.0, y, m);
            memset(g, 0, nw * sizeof *g);
            for (uint32_t k = 0; k < r.nnz; k++)
                g[r.idx[k]] = dl * r.val[k];
            g[nf] = dl * o->bias;
            double eta = eta_of(o, t, n);
            for (uint64_t j = 0; j < nw; j++) {
                double ej = eta, a;
                if (o->schedule == HOG_SCHED_ADAGRAD) {
                    G[j] += g[j] * g[j];
                    ej = eta / sqrt(1e-8 + G[j]);
                    a = fmin(1.0, ej * o->l2);
                } else {
                    a = ej * o->l2;
                }
                w[j] = soft_d((1.0 - a) * w[j] - ej * g[j], ej * o->l1);
            }
        }
    }
    hog_gpu_plan_free(&p);
    free(order);
    free(G);
    free(g);
    return w;
}

static void ref_batch1_vs_eager(hog_loss loss, hog_schedule sched, double l1,
                                double l2)
{
    hog_data *d = synth(300, 30, 0.25, loss == HOG_LOSS_SQUARED, 11);
    hog_train_opts o = opts(loss, sched, l1, l2, 2);
    uint64_t nw = n_weights(d, &o);
    float *w = malloc(nw * sizeof *w);
    hog_err err = { { 0 } };
    cr_assert_eq(hog_gpu_ref_train(d, &o, 1, 1, 1, w, &err), HOG_OK, "%s",
                 err.msg);
    double *e = eager(d, &o);
    uint64_t nonzero = 0;
    for (uint64_t j = 0; j < nw; j++) {
        nonzero += e[j] != 0.0;
        cr_assert(fabs(w[j] - e[j]) <= 1e-4 * fmax(1e-2, fabs(e[j])),
                  "%s, schedule %d, l1 %g, l2 %g: weight %llu: reference "
                  "%.9g, eager %.9g",
                  hog_loss_name(loss), (int)sched, l1, l2,
                  (unsigned long long)j, w[j], e[j]);
    }
    cr_assert_gt(nonzero, nw / 3, "the problem trains to zeros: no test");
    free(e);
    free(w);
    hog_data_free(d);
}

Test(gpu, reference_batch_1_is_plain_sgd)
{
    const hog_loss losses[] = { HOG_LOSS_LOGISTIC, HOG_LOSS_HINGE,
                                HOG_LOSS_SQHINGE, HOG_LOSS_SQUARED };
    const hog_schedule scheds[] = { HOG_SCHED_CONSTANT, HOG_SCHED_INVSCALING,
                                    HOG_SCHED_ADAGRAD };
    for (int l = 0; l < 4; l++)
        for (int s = 0; s < 3; s++) {
            ref_batch1_vs_eager(losses[l], scheds[s], 0, 1e-3);
            ref_batch1_vs_eager(losses[l], scheds[s], 1e-3, 1e-3);
        }
    ref_batch1_vs_eager(HOG_LOSS_LOGISTIC, HOG_SCHED_INVSCALING, 0, 0);
}

/* Averaging two replicas after every round is one step with both batches
 * (l1 = 0: the step is then linear in w and g). */
Test(gpu, reference_two_replicas_equal_one_with_twice_the_batch)
{
    hog_data *d = synth(320, 40, 0.2, false, 5); /* 320 = 10 rounds of 32 */
    hog_train_opts o = opts(HOG_LOSS_LOGISTIC, HOG_SCHED_INVSCALING, 0, 1e-3,
                            3);
    uint64_t nw = n_weights(d, &o);
    float *two = malloc(nw * sizeof *two), *one = malloc(nw * sizeof *one);
    float *lazy = malloc(nw * sizeof *lazy);
    cr_assert_eq(hog_gpu_ref_train(d, &o, 2, 16, 1, two, NULL), HOG_OK);
    cr_assert_eq(hog_gpu_ref_train(d, &o, 1, 32, 1, one, NULL), HOG_OK);
    double r = worst_ratio(two, one, nw, 1e-5, 1e-3);
    cr_assert_leq(r, 1.0, "two replicas differ from one: %g of the bound", r);
    /* Averaging less often is another algorithm: the test can fail. */
    cr_assert_eq(hog_gpu_ref_train(d, &o, 2, 16, 4, lazy, NULL), HOG_OK);
    cr_assert_gt(worst_ratio(lazy, one, nw, 1e-5, 1e-3), 10.0);
    free(two);
    free(one);
    free(lazy);
    hog_data_free(d);
}

Test(gpu, reference_learns)
{
    hog_data *d = synth(2000, 50, 0.2, false, 3);
    hog_train_opts o = opts(HOG_LOSS_LOGISTIC, HOG_SCHED_INVSCALING, 0, 1e-4,
                            10);
    o.eta = 1.0;
    uint64_t nw = n_weights(d, &o);
    float *w = malloc(nw * sizeof *w);
    cr_assert_eq(hog_gpu_ref_train(d, &o, 2, 16, 4, w, NULL), HOG_OK);
    uint64_t right = 0;
    for (uint64_t i = 0; i < d->m.rows; i++) {
        struct hog_row r = hog_csr_row(&d->m, i);
        double m = w[d->n_features];
        for (uint32_t k = 0; k < r.nnz; k++)
            m += w[r.idx[k]] * r.val[k];
        right += (m > 0) == hog_label_positive(d, r.y);
    }
    cr_assert_gt((double)right / d->m.rows, 0.85, "accuracy %.3f",
                 (double)right / d->m.rows);
    free(w);
    hog_data_free(d);
}

/* The hogwild step as the GPU runs it (every row of a batch reads the
 * weights before any row writes), emulated by the reference with the
 * device test's settings: within half a point of CPU Hogwild!'s test
 * accuracy on news20.binary. A feature that every row touches (the bias)
 * takes the batch's summed updates unless each feature's update is
 * averaged over the rows that touch it. */
Test(gpu, reference_hogwild_step_reaches_cpu_hogwild_accuracy, .timeout = 300)
{
    TH_HEAVY_OR_SKIP();
    TH_DATA_OR_SKIP(trp, "news20.binary.train.svm");
    TH_DATA_OR_SKIP(tep, "news20.binary.test.svm");
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    hog_data *tr, *te;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_data_load(trp, &lo, &tr, &err), HOG_OK, "%s", err.msg);
    lo.n_features = tr->n_features;
    cr_assert_eq(hog_data_load(tep, &lo, &te, &err), HOG_OK, "%s", err.msg);
    hog_train_opts o = opts(HOG_LOSS_LOGISTIC, HOG_SCHED_INVSCALING, 0, 1e-5,
                            5);
    o.eta = 0.5;
    o.gpu_step = HOG_GPU_STEP_HOGWILD;
    uint64_t nw = n_weights(tr, &o);
    float *w = malloc(nw * sizeof *w);
    double acc[2];
    const uint32_t batch[2] = { 256, 1024 };
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(hog_gpu_ref_train(tr, &o, 1, batch[i], 1 << 20, w, &err),
                     HOG_OK, "%s", err.msg);
        acc[i] = accuracy(w, te, o.bias);
    }
    const char *cpu;
    double cacc = cpu_hogwild_accuracy(tr, te, o, &cpu);
    fprintf(stderr, "data: news20.binary; emulated GPU hogwild step: %.2f%% "
            "(batch 256), %.2f%% (batch 1024), bias %g; %s %.2f%%\n",
            100 * acc[0], 100 * acc[1], (double)w[nw - 1], cpu, 100 * cacc);
    for (int i = 0; i < 2; i++)
        cr_expect_geq(acc[i], cacc - 0.005,
                      "batch %u: emulated GPU hogwild step %.2f%%, %s %.2f%%",
                      batch[i], 100 * acc[i], cpu, 100 * cacc);
    free(w);
    hog_data_free(te);
    hog_data_free(tr);
}

/* ---- shards: the upload layout, checked and stepped on the CPU ---------------------------- */

static void *alloc_plain(size_t n) { return malloc(n); }

/* Every batch of replica q's shard holds its plan rows (bias column
 * appended, labels mapped), and its compact transpose holds the same
 * entries, columns increasing, rows increasing within a column. */
static void check_shard(const hog_data *d, const hog_train_opts *o,
                        const struct hog_gpu_plan *p, unsigned q,
                        const struct hog_cuda_shard *s)
{
    const bool bias = o->bias != 0;
    cr_assert_eq(s->nbatch, p->rounds);
    for (uint64_t k = 0; k < s->nbatch; k++) {
        const struct hog_cuda_batch *b = &s->b[k];
        uint64_t lo, hi;
        hog_gpu_plan_part(p, k, q, &lo, &hi);
        cr_assert_eq(b->rows, hi - lo);
        const int32_t *roff = s->roff + b->at_off;
        const int32_t *col = s->col + b->at_nnz;
        const float *val = s->val + b->at_nnz;
        cr_assert_eq(roff[0], 0);
        for (uint32_t i = 0; i < b->rows; i++) {
            struct hog_row r = hog_csr_row(&d->m, p->perm[lo + i]);
            cr_assert_eq((uint32_t)(roff[i + 1] - roff[i]), r.nnz + bias);
            for (uint32_t j = 0; j < r.nnz; j++) {
                cr_assert_eq((uint32_t)col[roff[i] + j], r.idx[j]);
                cr_assert_eq(val[roff[i] + j], r.val[j]);
            }
            if (bias) {
                cr_assert_eq((uint64_t)col[roff[i + 1] - 1], d->n_features);
                cr_assert_eq(val[roff[i + 1] - 1], (float)o->bias);
            }
            float y = s->y[b->at_row + i];
            cr_assert_eq(y, hog_label_positive(d, r.y) ? 1.0f : -1.0f);
        }
        cr_assert_eq((uint32_t)roff[b->rows], b->nnz);
        cr_assert_leq(b->rows, s->max_rows);
        cr_assert_leq(b->nnz, s->max_nnz);

        /* The transpose: rebuild the CSR entries from it. */
        const int32_t *tcol = s->tcol + b->at_uniq;
        const int32_t *toff = s->toff + b->at_toff;
        const int32_t *trow = s->trow + b->at_nnz;
        const float *tval = s->tval + b->at_nnz;
        cr_assert_eq(toff[0], 0);
        cr_assert_eq((uint32_t)toff[b->uniq], b->nnz);
        uint64_t matched = 0;
        for (uint32_t u = 0; u < b->uniq; u++) {
            if (u)
                cr_assert_lt(tcol[u - 1], tcol[u]);
            cr_assert_lt(toff[u], toff[u + 1], "an empty transpose row");
            for (int32_t x = toff[u]; x < toff[u + 1]; x++) {
                if (x > toff[u])
                    cr_assert_lt(trow[x - 1], trow[x]);
                int32_t i = trow[x];
                cr_assert(i >= 0 && (uint32_t)i < b->rows);
                /* Find column tcol[u] in row i. */
                bool found = false;
                for (int32_t e = roff[i]; e < roff[i + 1]; e++)
                    if (col[e] == tcol[u]) {
                        cr_assert_eq(val[e], tval[x]);
                        found = true;
                    }
                cr_assert(found, "batch %llu: transpose entry (%d, %d) is "
                          "not in the CSR", (unsigned long long)k, i, tcol[u]);
                matched++;
            }
        }
        cr_assert_eq(matched, b->nnz);
    }
}

Test(gpu, shard_layout_matches_the_plan)
{
    hog_data *d = synth(203, 37, 0.2, false, 12);
    for (int bias = 0; bias < 2; bias++) {
        hog_train_opts o = opts(HOG_LOSS_LOGISTIC, HOG_SCHED_CONSTANT, 0, 0, 1);
        o.bias = bias ? 2.5 : 0;
        struct hog_gpu_plan p;
        cr_assert_eq(hog_gpu_plan_make(d->m.rows, 3, 16, o.seed, &p, NULL),
                     HOG_OK);
        for (unsigned q = 0; q < 3; q++) {
            struct hog_cuda_shard s;
            memset(&s, 0, sizeof s);
            hog_err err = { { 0 } };
            cr_assert_eq(hog_gpu_shard_build(d, &o, &p, q, true, alloc_plain,
                                             &s, &err),
                         HOG_OK, "%s", err.msg);
            check_shard(d, &o, &p, q, &s);
            hog_gpu_shard_free(&s, free);
        }
        hog_gpu_plan_free(&p);
    }
    hog_data_free(d);
}

/* sum_x a(x) b(x) over x in [lo, hi) as a warp of kernels.cu sums it:
 * lane l over x = lo + l, lo + l + 32, ... with fused multiply-adds, then
 * the shuffle tree (partners 16, 8, 4, 2, 1); lane 0's value. */
static double warp_dot(int64_t lo, int64_t hi, const double *a,
                       const int32_t *ai, const float *b)
{
    double s[32];
    for (int l = 0; l < 32; l++) {
        s[l] = 0;
        for (int64_t x = lo + l; x < hi; x += 32)
            s[l] = fma(a[ai ? ai[x] : x], (double)b[x], s[l]);
    }
    for (int o = 16; o > 0; o >>= 1) {
        double t[32];
        for (int l = 0; l < 32; l++)
            t[l] = s[l] + s[l ^ o];
        memcpy(s, t, sizeof s);
    }
    return s[0];
}

/* The GPU minibatch step emulated on the shard's arrays, kernel by kernel
 * (each row's derivative from its margin, each column's gradient from the
 * compact transpose, both summed in double in the order of kernels.cu's
 * warps; the dense update): it must give the reference's weights, so the layout the
 * device reads carries the right rows, columns and values. */
static void emulate_minibatch(const hog_data *d, const hog_train_opts *o,
                              uint32_t B, float *w)
{
    struct hog_gpu_plan p;
    cr_assert_eq(hog_gpu_plan_make(d->m.rows, 1, B, o->seed, &p, NULL),
                 HOG_OK);
    struct hog_cuda_shard s;
    memset(&s, 0, sizeof s);
    cr_assert_eq(hog_gpu_shard_build(d, o, &p, 0, true, alloc_plain, &s, NULL),
                 HOG_OK);
    uint64_t nw = n_weights(d, o);
    double *dv = malloc(s.max_rows * sizeof *dv);
    double *gdense = calloc(nw, sizeof *gdense);
    double *wd = malloc(nw * sizeof *wd);
    float *g2 = calloc(nw, sizeof *g2);
    memset(w, 0, nw * sizeof *w);
    struct hog_rng rng;
    uint64_t *order = th_serial_order(p.rounds, o->seed, &rng);
    uint64_t done = 0;
    for (unsigned e = 0; e < o->epochs; e++) {
        hog_shuffle_u64(&rng, order, p.rounds);
        for (uint64_t i = 0; i < p.rounds; i++, done++) {
            const struct hog_cuda_batch *b = &s.b[order[i]];
            double eta = hog_gpu_eta_at(o, done * B, p.n);
            const int32_t *roff = s.roff + b->at_off, *col = s.col + b->at_nnz;
            const float *val = s.val + b->at_nnz, *y = s.y + b->at_row;
            for (uint64_t j = 0; j < nw; j++)
                wd[j] = w[j];
            for (uint32_t r = 0; r < b->rows; r++) {
                double m = warp_dot(roff[r], roff[r + 1], wd, col, val);
                dv[r] = hog_loss_deriv(o->loss, 0.0, y[r], m) * (1.0 / b->rows);
            }
            const int32_t *tcol = s.tcol + b->at_uniq;
            const int32_t *toff = s.toff + b->at_toff;
            const int32_t *trow = s.trow + b->at_nnz;
            const float *tval = s.tval + b->at_nnz;
            for (uint32_t u = 0; u < b->uniq; u++)
                gdense[tcol[u]] = warp_dot(toff[u], toff[u + 1], dv, trow,
                                           tval);
            for (uint64_t j = 0; j < nw; j++) {
                double gj = gdense[j], ej = eta, a;
                gdense[j] = 0;
                if (o->schedule == HOG_SCHED_ADAGRAD) {
                    double G = (double)g2[j] + gj * gj;
                    g2[j] = (float)G;
                    ej = eta / sqrt(1e-8 + G);
                    a = fmin(1.0, ej * o->l2);
                } else {
                    a = ej * o->l2;
                }
                w[j] = (float)soft_d((1.0 - a) * w[j] - ej * gj, ej * o->l1);
            }
        }
    }
    free(dv);
    free(gdense);
    free(wd);
    free(g2);
    free(order);
    hog_gpu_shard_free(&s, free);
    hog_gpu_plan_free(&p);
}

Test(gpu, emulated_device_step_on_the_shard_equals_the_reference)
{
    hog_data *d = synth(500, 60, 0.15, false, 13);
    const hog_schedule scheds[] = { HOG_SCHED_CONSTANT, HOG_SCHED_INVSCALING,
                                    HOG_SCHED_ADAGRAD };
    for (int i = 0; i < 3; i++) {
        hog_train_opts o = opts(HOG_LOSS_LOGISTIC, scheds[i], 1e-4, 1e-3, 2);
        uint64_t nw = n_weights(d, &o);
        float *em = malloc(nw * sizeof *em), *ref = malloc(nw * sizeof *ref);
        emulate_minibatch(d, &o, 24, em);
        cr_assert_eq(hog_gpu_ref_train(d, &o, 1, 24, 1, ref, NULL), HOG_OK);
        double r = worst_ratio(em, ref, nw, 1e-5, 1e-3);
        cr_assert_leq(r, 1.0, "schedule %d: %g of the bound", (int)scheds[i],
                      r);
        free(em);
        free(ref);
    }
    hog_data_free(d);
}

/* gpu_device/minibatch_equals_cpu_reference's cases on its data, with the
 * device's arithmetic emulated: every weight within the device test's
 * bound. Summing margins and gradients in float (as cuSPARSE's float SpMV
 * did) put AdaGrad's weights past it; kernels.cu sums in double. */
Test(gpu, emulated_device_step_on_news20_within_the_device_bound,
     .timeout = 300)
{
    TH_HEAVY_OR_SKIP();
    TH_DATA_OR_SKIP(path, "news20.binary.train.svm");
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    hog_data *d;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_data_load(path, &lo, &d, &err), HOG_OK, "%s", err.msg);
    double r[MB_NCASES];
    for (size_t i = 0; i < MB_NCASES; i++) {
        const struct mb_case *c = &MB_CASES[i];
        hog_train_opts o = opts(HOG_LOSS_LOGISTIC, c->sched, c->l1, c->l2, 1);
        uint64_t nw = n_weights(d, &o);
        float *em = malloc(nw * sizeof *em), *ref = malloc(nw * sizeof *ref);
        emulate_minibatch(d, &o, MB_BATCH, em);
        cr_assert_eq(hog_gpu_ref_train(d, &o, 1, MB_BATCH, 1, ref, &err),
                     HOG_OK, "%s", err.msg);
        r[i] = worst_ratio(em, ref, nw, MB_REL, MB_FLOOR);
        fprintf(stderr, "data: news20.binary; emulated minibatch step, %s: "
                "worst weight at %.3g of the bound\n", c->name, r[i]);
        free(em);
        free(ref);
    }
    for (size_t i = 0; i < MB_NCASES; i++)
        cr_expect_leq(r[i], 1.0, "%s: %g of the bound", MB_CASES[i].name,
                      r[i]);
    hog_data_free(d);
}

Test(gpu, hogwild_shrink_is_m_steps_at_once)
{
    const double l1s[] = { 0, 1e-3, 0.05 }, l2s[] = { 0, 1e-3, 0.2 };
    const uint64_t ms[] = { 1, 7, 300 };
    const double ws[] = { 0.9, -0.35, 0.004, 0 };
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            for (int t = 0; t < 3; t++)
                for (int v = 0; v < 4; v++) {
                    double eta = 0.3, P, Q, w = ws[v];
                    hog_gpu_shrink_pq(eta, l1s[i], l2s[k], ms[t], &P, &Q);
                    for (uint64_t s = 0; s < ms[t]; s++)
                        w = soft_d((1 - eta * l2s[k]) * w, eta * l1s[i]);
                    double u = P * fabs(ws[v]) - Q;
                    double once = u > 0 ? copysign(u, ws[v]) : 0;
                    cr_assert(fabs(once - w) <= 1e-12 + 1e-9 * fabs(w),
                              "l1 %g l2 %g m %llu w %g: %.15g vs %.15g",
                              l1s[i], l2s[k], (unsigned long long)ms[t],
                              ws[v], once, w);
                }
}

/* ---- without a device -------------------------------------------------------------------- */

static bool no_cuda_sentence(const char *msg)
{
    return strstr(msg, "no CUDA device") ||
           strstr(msg, "hogtrain was built without CUDA") ||
           strstr(msg, "GPU support not available: ");
}

Test(gpu, without_device_a_sentence_and_enotsup)
{
    hog_err err = { { 0 } };
    if (have_device(&err))
        cr_skip_test("a CUDA device is present; the no-device path is "
                     "checked on machines without one");
    cr_assert(no_cuda_sentence(err.msg), "%s", err.msg);
    cr_assert_eq(hog_gpu_built(), strstr(err.msg, "without CUDA") == NULL);

    hog_data *d = synth(40, 8, 0.3, false, 2);
    hog_train_opts o = opts(HOG_LOSS_LOGISTIC, HOG_SCHED_CONSTANT, 0, 1e-3, 1);
    const char *specs[] = { "all", "0", "0,0" };
    for (int i = 0; i < 3; i++) {
        o.gpus = specs[i];
        hog_model *m = NULL;
        err.msg[0] = '\0';
        cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_ENOTSUP, "%s",
                     specs[i]);
        cr_assert_null(m);
        cr_assert(no_cuda_sentence(err.msg), "%s", err.msg);
    }
    double bps = 1;
    cr_assert_eq(hog_gpu_copy_bandwidth(0, 1 << 20, &bps, &err), HOG_ENOTSUP);
    cr_assert_eq(bps, 0.0);
    hog_data_free(d);
}

Test(gpu, command_without_device)
{
    hog_err err = { { 0 } };
    if (have_device(&err))
        cr_skip_test("a CUDA device is present");
    char dir[512], out[4096];
    th_tmpdir(dir, sizeof dir);
    const char *f = th_write(dir, "t.svm", "1 1:1 2:0.5\n-1 2:1\n1 1:2\n",
                             25);
    int rc = th_run(out, sizeof out, "'%s' train -q --gpus all '%s'",
                    th_bin(), f);
    cr_assert_eq(rc, 1, "rc %d: %s", rc, out);
    cr_assert(no_cuda_sentence(out), "%s", out);
    rc = th_run(out, sizeof out, "'%s' train -q --gpus none '%s'", th_bin(),
                f);
    cr_assert_eq(rc, 0, "rc %d: %s", rc, out);
    rc = th_run(out, sizeof out, "'%s' topo", th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "GPUs        none: ") && no_cuda_sentence(out),
              "%s", out);
}

Test(gpu, command_usage_errors)
{
    char dir[512], out[4096];
    th_tmpdir(dir, sizeof dir);
    const char *f = th_write(dir, "t.svm", "1 1:1\n-1 2:1\n", 13);
    const char *bad[] = { "--gpus 0,x", "--gpus all --gpu-step sgd",
                          "--gpu-batch 8", "--sync-every 9",
                          "--gpus all --gpu-batch 0",
                          "--gpus all --algo hogwild" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = th_run(out, sizeof out, "'%s' train -q %s '%s'", th_bin(),
                        bad[i], f);
        cr_assert_eq(rc, 2, "%s: rc %d: %s", bad[i], rc, out);
    }
}

/* The command lines of gpu_device/command_trains_on_gpu pass the
 * command's checks: without a device they end with status 1 and the
 * no-device sentence, not with usage's status 2 (the hogwild step under
 * the default schedule, AdaGrad, did). */
Test(gpu, command_gpu_steps_pass_the_checks)
{
    hog_err err = { { 0 } };
    if (have_device(&err))
        cr_skip_test("a CUDA device is present: gpu_device/"
                     "command_trains_on_gpu runs these lines");
    char dir[512], out[4096];
    th_tmpdir(dir, sizeof dir);
    const char *f = th_write(dir, "t.svm", "1 1:1 2:0.5\n-1 2:1\n1 1:2\n",
                             25);
    for (size_t i = 0; i < 2; i++) {
        int rc = th_run(out, sizeof out,
                        "'%s' train --gpus 0,0 %s --epochs 2 -o '%s/m.hgm' "
                        "'%s'",
                        th_bin(), GPU_COMMAND_STEPS[i], dir, f);
        cr_expect_eq(rc, 1, "%s: rc %d: %s", GPU_COMMAND_STEPS[i], rc, out);
        cr_expect(no_cuda_sentence(out), "%s: %s", GPU_COMMAND_STEPS[i], out);
    }
}

/* ---- the plugin loader (src/gpu/cuda_plugin.c, src/core/plugin.c) -------------------------- */

/* Criterion runs each test in a fresh process, so each test below sees the
 * plugin loaded (or refused) once, under its own HOGTRAIN_CUDA_PLUGIN. */

/* dir of the hogtrain command under test + "/" + rel. */
static const char *beside_bin(char *buf, size_t len, const char *rel)
{
    char b[1024];
    snprintf(b, sizeof b, "%s", th_bin());
    snprintf(buf, len, "%s/%s", dirname(b), rel);
    return buf;
}

/* Every device call refuses with one sentence holding each of want[]. */
static void refused_with(const char *const *want, size_t nwant)
{
    hog_err err = { { 0 } };
    struct hog_gpu_info g[1];
    unsigned n = 9;
    cr_assert_eq(hog_gpu_list(g, 1, &n, &err), HOG_ENOTSUP, "%s", err.msg);
    cr_assert_eq(n, 0u);
    cr_assert(strncmp(err.msg, "GPU support not available: ", 27) == 0, "%s",
              err.msg);
    for (size_t i = 0; i < nwant; i++)
        cr_assert(strstr(err.msg, want[i]), "no \"%s\" in: %s", want[i],
                  err.msg);
    char first[HOG_ERR_MAX];
    memcpy(first, err.msg, sizeof first);

    double bps = 1;
    err.msg[0] = '\0';
    cr_assert_eq(hog_gpu_copy_bandwidth(0, 1 << 20, &bps, &err), HOG_ENOTSUP);
    cr_assert_eq(bps, 0.0);
    cr_assert_str_eq(err.msg, first);
    cr_assert_eq(hog_cuda_host_alloc(64), NULL);
    cr_assert_eq(hog_cuda_bind_near(0), -1);

    hog_data *d = synth(40, 8, 0.3, false, 2);
    hog_train_opts o = opts(HOG_LOSS_LOGISTIC, HOG_SCHED_CONSTANT, 0, 1e-3, 1);
    o.gpus = "0";
    hog_model *m = NULL;
    err.msg[0] = '\0';
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_ENOTSUP, "%s",
                 err.msg);
    cr_assert_null(m);
    cr_assert_str_eq(err.msg, first);
    hog_data_free(d);
}

Test(gpu, plugin_missing_file_is_a_sentence)
{
    char dir[512], path[600];
    th_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/no-such-plugin.so", dir);
    setenv("HOGTRAIN_CUDA_PLUGIN", path, 1);
    const char *want[] = { path, "names no file",
                           "point HOGTRAIN_CUDA_PLUGIN to "
                           "libhogtrain-cuda.so or unset it" };
    refused_with(want, 3);
}

Test(gpu, plugin_not_a_library_is_a_sentence)
{
    char dir[512];
    th_tmpdir(dir, sizeof dir);
    const char *f = th_write(dir, "fake.so", "not an ELF file\n", 16);
    setenv("HOGTRAIN_CUDA_PLUGIN", f, 1);
    const char *want[] = { f, "not a loadable library" };
    refused_with(want, 2);
}

Test(gpu, plugin_without_the_table_is_a_sentence)
{
    /* libc (gnu_get_libc_version: no sanitizer intercepts it): a real
     * shared library that is no hogtrain plugin. */
    Dl_info info;
    cr_assert(dladdr((const void *)&gnu_get_libc_version, &info) &&
              info.dli_fname);
    if (!strchr(info.dli_fname, '/'))
        cr_skip_test("the C library's path is unknown (%s)", info.dli_fname);
    setenv("HOGTRAIN_CUDA_PLUGIN", info.dli_fname, 1);
    const char *want[] = { info.dli_fname,
                           "is not a hogtrain plugin (it has no "
                           "hog_cuda_plugin table)" };
    refused_with(want, 2);
}

Test(gpu, plugin_of_another_abi_is_a_sentence)
{
    char path[1200];
    beside_bin(path, sizeof path, "tests/plugin/other_abi.so");
    setenv("HOGTRAIN_CUDA_PLUGIN", path, 1);
    const char *want[] = { path, "plugin ABI 999",
                           "install the libhogtrain-cuda.so built with this "
                           "hogtrain" };
    refused_with(want, 3);
}

Test(gpu, plugin_missing_a_library_names_it)
{
    /* As the plugin on a machine without the CUDA runtime: the sentence
     * names the plugin, the library it lacks and the remedy. */
    char path[1200];
    beside_bin(path, sizeof path, "tests/plugin/needs_absent.so");
    setenv("HOGTRAIN_CUDA_PLUGIN", path, 1);
    const char *want[] = { path, "libhog-absent.so: cannot open shared "
                                 "object file",
                           "install the CUDA runtime" };
    refused_with(want, 3);
}

Test(gpu, plugin_of_this_build_without_device)
{
    if (!hog_gpu_built())
        cr_skip_test("built without nvcc: there is no libhogtrain-cuda.so "
                     "to load");
    char path[1200];
    beside_bin(path, sizeof path, "libhogtrain-cuda.so");
    setenv("HOGTRAIN_CUDA_PLUGIN", path, 1);
    hog_err err = { { 0 } };
    if (have_device(&err))
        cr_skip_test("a CUDA device is present: the plugin loads and sees it");
    cr_assert(strstr(err.msg, "no CUDA device: "), "%s", err.msg);
}

Test(gpu, plugin_found_beside_the_program)
{
    if (!hog_gpu_built())
        cr_skip_test("built without nvcc: there is no libhogtrain-cuda.so "
                     "to load");
    unsetenv("HOGTRAIN_CUDA_PLUGIN");
    hog_err err = { { 0 } };
    if (have_device(&err))
        cr_skip_test("a CUDA device is present: the plugin loads and sees it");
    cr_assert(strstr(err.msg, "no CUDA device: "), "%s", err.msg);
}

Test(gpu, command_with_a_missing_plugin)
{
    char dir[512], out[4096];
    th_tmpdir(dir, sizeof dir);
    const char *f = th_write(dir, "t.svm", "1 1:1 2:0.5\n-1 2:1\n1 1:2\n",
                             25);
    int rc = th_run(out, sizeof out,
                    "HOGTRAIN_CUDA_PLUGIN='%s/gone.so' '%s' train -q --gpus "
                    "all '%s'", dir, th_bin(), f);
    cr_assert_eq(rc, 1, "rc %d: %s", rc, out);
    cr_assert(strstr(out, "GPU support not available: ") &&
              strstr(out, "gone.so names no file"), "%s", out);
    rc = th_run(out, sizeof out, "HOGTRAIN_CUDA_PLUGIN='%s/gone.so' '%s' "
                "train -q '%s'", dir, th_bin(), f);
    cr_assert_eq(rc, 0, "CPU training needs no plugin: rc %d: %s", rc, out);
    rc = th_run(out, sizeof out, "HOGTRAIN_CUDA_PLUGIN='%s/gone.so' '%s' topo",
                dir, th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "GPUs        none: GPU support not available: "),
              "%s", out);
}

Test(gpu, command_links_no_cuda)
{
    if (!hog_gpu_built())
        cr_skip_test("built without nvcc: nothing links CUDA; the check is "
                     "for CUDA builds");
    char lib[1200], out[8192];
    beside_bin(lib, sizeof lib, "libhogtrain.so");
    const char *objs[] = { th_bin(), lib };
    for (int i = 0; i < 2; i++) {
        if (access(objs[i], F_OK) != 0)
            continue; /* make test builds the command, maybe not the .so */
        int rc = th_run(out, sizeof out, "readelf -d '%s'", objs[i]);
        if (rc == 127)
            cr_skip_test("readelf is not installed");
        cr_assert_eq(rc, 0, "%s: %s", objs[i], out);
        cr_assert(strstr(out, "(NEEDED)"), "%s: %s", objs[i], out);
        const char *bad[] = { "libcudart", "libcusparse", "libstdc++" };
        for (int k = 0; k < 3; k++)
            cr_assert(!strstr(out, bad[k]), "%s needs %s:\n%s", objs[i],
                      bad[k], out);
    }
    /* The plugin does, and exports its table only. */
    beside_bin(lib, sizeof lib, "libhogtrain-cuda.so");
    cr_assert_eq(th_run(out, sizeof out, "readelf -dW --dyn-syms '%s' | grep -E 'NEEDED|hog_'", lib),
                 0, "%s", out);
    cr_assert(strstr(out, "[libcudart.so"), "%s", out);
    cr_assert(strstr(out, " hog_cuda_plugin\n"), "%s", out);
    cr_assert(!strstr(out, " hog_cuda_count"), "%s", out);
}
