/* gpu_bench TRAIN [TEST] [EPOCHS]: the GPU bench of docs/BENCHMARKS.md.
 *
 * Prints, as Markdown for docs/BENCHMARKS.md:
 *   - the CUDA devices, and device 0's device-to-device copy bandwidth
 *     (bytes read + bytes written per second, 256 MiB copies);
 *   - for each GPU step kind (and a few --gpu-batch values) on one GPU:
 *     nonzeros per second of the best epoch, the bytes an epoch must move
 *     divided by that epoch's time, as a fraction of the copy bandwidth, and
 *     the test accuracy;
 *   - CPU Hogwild! on every core of the machine on the same data (the
 *     serial trainer where this build has no Hogwild! yet), and the GPU's
 *     throughput as a multiple of it.
 * Targets (the issue): minibatch >= 50% of copy bandwidth; >= 10x the
 * 16-core Hogwild! throughput.
 *
 * The minibatch rows run the library's default options (AdaGrad); the
 * hogwild rows the same with invscaling, since that step runs the constant
 * and invscaling schedules only (under AdaGrad's options it would take
 * AdaGrad's eta as a constant step).
 *
 * Bytes an epoch must move, per step kind, as kernels.cu reads and writes
 * (n rows, z nonzeros with the bias column, u the sum over steps of the
 * distinct columns a step touches, s steps, W weights):
 *   minibatch  margins: z * 12 (col, val, w gathered) + n * 16 (offsets,
 *              labels, the derivatives written); gradient: z * 16 (row,
 *              value, derivative gathered) + u * 16 (column, offset, the
 *              gradient written, or w read and written without
 *              regularization); with regularization or AdaGrad the dense
 *              update: s * W * 16 (w read and written, the double gradient
 *              read) + u * 8 (its reset), and AdaGrad's sums s * W * 8
 *   hogwild    coefficients: z * 20 (col, val, w gathered, the count's
 *              atomic increment) + n * 12; the adds: z * 20 (col, val,
 *              count, w's atomic add) + n * 8; the counts' reset: z * 8;
 *              the shrink s * W * 8 when regularized
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "gpu/gpu.h"

struct rec {
    double best, sum;
    unsigned n;
};

static hog_status rec_epoch(struct hog_fit *f, unsigned epoch, double seconds,
                            hog_err *err)
{
    struct rec *r = f->ctx;
    if (seconds < r->best)
        r->best = seconds;
    r->sum += seconds;
    r->n++;
    return HOG_OK;
}

static void no_tick(struct hog_fit *f, unsigned e, uint64_t d, uint64_t t) {}

static double accuracy(const float *w, const hog_data *d, double bias)
{
    uint64_t right = 0;
    for (uint64_t i = 0; i < d->m.rows; i++) {
        struct hog_row r = hog_csr_row(&d->m, i);
        double m = bias != 0 ? w[d->n_features] * bias : 0;
        for (uint32_t k = 0; k < r.nnz; k++)
            m += w[r.idx[k]] * r.val[k];
        right += (m > 0) == hog_label_positive(d, r.y);
    }
    return d->m.rows ? (double)right / (double)d->m.rows : NAN;
}

/* Sum over the plan's steps of the distinct columns each touches. */
static double distinct_per_epoch(const hog_data *d, uint32_t batch,
                                 uint64_t seed, bool bias)
{
    struct hog_gpu_plan p;
    if (hog_gpu_plan_make(d->m.rows, 1, batch, seed, &p, NULL) != HOG_OK)
        return NAN;
    unsigned char *seen = calloc(d->n_features + 1, 1);
    uint32_t *list = malloc((d->n_features + 1) * sizeof *list);
    double u = 0;
    for (uint64_t k = 0; seen && list && k < p.rounds; k++) {
        uint64_t lo, hi, c = 0;
        hog_gpu_plan_part(&p, k, 0, &lo, &hi);
        for (uint64_t x = lo; x < hi; x++) {
            struct hog_row r = hog_csr_row(&d->m, p.perm[x]);
            for (uint32_t j = 0; j < r.nnz; j++)
                if (!seen[r.idx[j]]++)
                    list[c++] = r.idx[j];
        }
        u += (double)c + bias;
        for (uint64_t j = 0; j < c; j++)
            seen[list[j]] = 0;
    }
    free(seen);
    free(list);
    hog_gpu_plan_free(&p);
    return u;
}

struct cpu_rec {
    double best;
};

static void cpu_progress(void *ctx, unsigned epoch, unsigned epochs,
                         uint64_t done, uint64_t total,
                         const hog_epoch_stats *s)
{
    struct cpu_rec *r = ctx;
    if (s && s->seconds < r->best)
        r->best = s->seconds;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: gpu_bench TRAIN [TEST] [EPOCHS]\n");
        return 2;
    }
    unsigned epochs = argc > 3 ? (unsigned)atoi(argv[3]) : 3;
    hog_err err = { { 0 } };
    struct hog_gpu_info g[HOG_GPU_MAX];
    unsigned ng = 0;
    if (hog_gpu_list(g, HOG_GPU_MAX, &ng, &err) != HOG_OK) {
        printf("gpu_bench: %s\n", err.msg);
        return 1;
    }
    printf("### GPU bench\n\n| GPU | name | PCI bus id | memory | NUMA |\n"
           "|---|---|---|---|---|\n");
    for (unsigned i = 0; i < ng && i < HOG_GPU_MAX; i++)
        printf("| %d | %s | %s | %.1f GiB | %d |\n", g[i].index, g[i].name,
               g[i].pci, (double)g[i].mem_total / (1u << 30), g[i].numa);
    double bw = 0;
    if (hog_gpu_copy_bandwidth(0, (size_t)256 << 20, &bw, &err) != HOG_OK) {
        printf("gpu_bench: %s\n", err.msg);
        return 1;
    }
    printf("\ndevice-to-device copy bandwidth (GPU 0, 256 MiB copies, read + "
           "write): %.1f GB/s\n\n",
           bw / 1e9);

    hog_load_opts lo;
    hog_load_opts_init(&lo);
    hog_data *tr, *te = NULL;
    double t0 = hog_now();
    if (hog_data_load(argv[1], &lo, &tr, &err) != HOG_OK) {
        printf("gpu_bench: %s\n", err.msg);
        return 1;
    }
    if (argc > 2 && strcmp(argv[2], "-") != 0) {
        lo.n_features = tr->n_features;
        if (hog_data_load(argv[2], &lo, &te, &err) != HOG_OK) {
            printf("gpu_bench: %s\n", err.msg);
            return 1;
        }
    }
    printf("data: %s: %llu rows, %llu features, %llu nonzeros (loaded in "
           "%.1f s); %u epochs each, best epoch timed\n\n",
           argv[1], (unsigned long long)tr->m.rows,
           (unsigned long long)tr->n_features,
           (unsigned long long)tr->m.nnz, hog_now() - t0, epochs);
    const hog_data *eval = te ? te : tr;

    hog_train_opts o;
    hog_train_opts_init(&o);
    o.epochs = epochs;
    const double n = (double)tr->m.rows;
    const double z = (double)tr->m.nnz + (o.bias != 0 ? n : 0);
    const double W = (double)tr->n_features + (o.bias != 0);

    printf("| step | --gpu-batch | best epoch s | nonzeros/s | GB/s moved "
           "| of copy bandwidth | %s accuracy |\n"
           "|---|---|---|---|---|---|---|\n",
           te ? "test" : "train");
    struct {
        hog_gpu_step step;
        uint32_t batch;
    } runs[] = {
        { HOG_GPU_STEP_MINIBATCH, 1024 },  { HOG_GPU_STEP_MINIBATCH, 16384 },
        { HOG_GPU_STEP_MINIBATCH, 131072 }, { HOG_GPU_STEP_HOGWILD, 1024 },
        { HOG_GPU_STEP_HOGWILD, 65536 },
    };
    double best_gpu_nnz = 0, best_mb_frac = 0;
    float *w = malloc((size_t)W * sizeof *w);
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        struct hog_gpu_opts go;
        memset(&go, 0, sizeof go);
        go.spec.n = 1;
        go.step = runs[i].step;
        go.batch = runs[i].batch;
        go.sync_every = 65536; /* the library's default (options.c) */
        go.quiet = false;
        hog_train_opts so = o;
        if (go.step == HOG_GPU_STEP_HOGWILD)
            so.schedule = HOG_SCHED_INVSCALING;
        const bool reg = so.l1 > 0 || so.l2 > 0;
        const bool ada = so.schedule == HOG_SCHED_ADAGRAD;
        hog_model *m;
        if (hog_model_new(tr->n_features, so.loss, so.bias, &m, &err) != HOG_OK)
            return 1;
        struct rec r = { 1e300, 0, 0 };
        struct hog_fit f = { .train = tr, .o = &so, .model = m,
                             .epoch_end = rec_epoch, .tick = no_tick,
                             .ctx = &r };
        hog_status st = hog_gpu_train_opts(&f, &go, &err);
        const char *name =
            go.step == HOG_GPU_STEP_MINIBATCH ? "minibatch" : "hogwild";
        if (st != HOG_OK) {
            printf("| %s | %u | failed: %s | | | | |\n", name, go.batch,
                   err.msg);
            fflush(stdout);
            hog_model_free(m);
            continue;
        }
        double steps = ceil(n / go.batch), bytes;
        if (go.step == HOG_GPU_STEP_MINIBATCH) {
            double u = distinct_per_epoch(tr, go.batch, so.seed,
                                          so.bias != 0);
            bytes = z * 12 + n * 16 + z * 16 + u * 16;
            if (reg || ada)
                bytes += steps * W * 16 + u * 8 + (ada ? steps * W * 8 : 0);
        } else {
            bytes = z * 20 + n * 12 + z * 20 + n * 8 + z * 8 +
                    (reg ? steps * W * 8 : 0);
        }
        double nnz_s = (double)tr->m.nnz / r.best;
        double frac = bytes / r.best / bw;
        if (nnz_s > best_gpu_nnz)
            best_gpu_nnz = nnz_s;
        if (go.step == HOG_GPU_STEP_MINIBATCH && frac > best_mb_frac)
            best_mb_frac = frac;
        printf("| %s (%s) | %u | %.4f | %.3g | %.1f | %.1f%% | %.2f%% |\n",
               name, ada ? "adagrad" : "invscaling", go.batch, r.best, nnz_s, bytes / r.best / 1e9, 100 * frac,
               100 * accuracy(m->w, eval, o.bias));
        fflush(stdout);
        hog_model_free(m);
    }
    free(w);

    /* CPU Hogwild! on every core, the same data and options. */
    o.algo = HOG_ALGO_HOGWILD;
    o.threads = 0;
    struct cpu_rec cr = { 1e300 };
    hog_train_hooks hk = { .size = sizeof hk };
    hk.progress = cpu_progress;
    hk.progress_ctx = &cr;
    hog_model *cm = NULL;
    hog_status st = hog_train(tr, NULL, &o, &hk, &cm, &err);
    const char *cpu_name = "CPU Hogwild!";
    if (st == HOG_ENOTSUP) {
        cpu_name = "CPU serial SGD (this build has no Hogwild! yet)";
        o.algo = HOG_ALGO_SERIAL;
        o.threads = 1;
        st = hog_train(tr, NULL, &o, &hk, &cm, &err);
    }
    if (st != HOG_OK) {
        printf("\n%s: %s\n", cpu_name, err.msg);
        return 1;
    }
    double cpu_nnz = (double)tr->m.nnz / cr.best;
    printf("\n%s, %u CPUs online: best epoch %.3f s, %.3g nonzeros/s, %s "
           "accuracy %.2f%%\n",
           cpu_name, hog_online_cpus(), cr.best, cpu_nnz,
           te ? "test" : "train",
           100 * accuracy(hog_model_weights(cm), eval, o.bias));
    printf("\nbest GPU step: %.1fx the CPU's nonzeros/s (target 10x); "
           "minibatch at %.1f%% of copy bandwidth (target 50%%)\n",
           best_gpu_nnz / cpu_nnz, 100 * best_mb_frac);
    hog_model_free(cm);
    hog_data_free(te);
    hog_data_free(tr);
    return 0;
}
