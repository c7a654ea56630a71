/*
 * Softmax Hogwild! (--multiclass softmax --algo hogwild, src/hogwild/
 * softmax.c) under ThreadSanitizer, without Criterion (see tsan_hogwild.c).
 * `make tsan` builds and runs it; it exits non-zero on a wrong result, and
 * TSan (halt_on_error=1) on any report.
 *
 * A small problem of 4 classes whose rows all hold the hot features 0..3
 * (so that the threads really race on the same K weights), trained with 2
 * and 4 threads under every kind of weights the trainer keeps (plain,
 * scaled, prefix-stamped, AdaGrad with and without stamps), a cancelled
 * run, row weights, an averaging hook, and more threads than rows.
 */
#include "core/core.h"
#include "core/metrics.h"

#include <stdio.h>
#include <stdlib.h>

#define CHECK(c)                                                              \
    do {                                                                      \
        if (!(c)) {                                                           \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);      \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

enum { K = 4, HOT = 4, COLD = 12 };

/* rows x nf: the hot features and COLD random others per row, normal
 * values; the label is the class of the highest planted score. */
static hog_data *synth(uint64_t rows, uint32_t nf)
{
    struct hog_rng r;
    hog_rng_seed(&r, 9, 1);
    double *w = malloc((size_t)K * nf * sizeof *w);
    uint64_t *off = malloc((rows + 1) * sizeof *off);
    float *y = malloc(rows * sizeof *y);
    uint32_t *idx = malloc(rows * (HOT + COLD) * sizeof *idx);
    float *val = malloc(rows * (HOT + COLD) * sizeof *val);
    CHECK(w && off && y && idx && val);
    for (size_t i = 0; i < (size_t)K * nf; i++)
        w[i] = hog_rng_normal(&r);
    uint64_t z = 0;
    off[0] = 0;
    for (uint64_t i = 0; i < rows; i++) {
        double s[K] = { 0 };
        uint32_t j = 0;
        for (unsigned e = 0; e < HOT + COLD && j < nf; e++) {
            float v = (float)hog_rng_normal(&r);
            idx[z] = j;
            val[z++] = v;
            for (unsigned c = 0; c < K; c++)
                s[c] += w[(size_t)c * nf + j] * v;
            j = e + 1 < HOT ? j + 1
                            : j + 1 + (uint32_t)hog_rng_below(&r, nf / COLD);
        }
        y[i] = (float)(10 + hog_scores_argmax(s, K));
        off[i + 1] = z;
    }
    free(w);
    hog_data *d;
    hog_err err;
    CHECK(hog_data_wrap(rows, z, off, y, idx, val, nf, &d, &err) == HOG_OK);
    return d;
}

static double train_acc(const hog_data *d, const hog_train_opts *o,
                        const hog_train_hooks *h)
{
    hog_model *m;
    hog_err err;
    hog_status s = hog_train(d, NULL, o, h, &m, &err);
    if (s != HOG_OK)
        fprintf(stderr, "hog_train: %s\n", err.msg);
    CHECK(s == HOG_OK);
    CHECK(hog_model_classes(m, NULL) >= 3);
    struct hog_metrics r;
    CHECK(hog_metrics_eval(m, d, &r, &err) == HOG_OK);
    hog_model_free(m);
    return 100.0 * r.accuracy;
}

/* Scale-out's hook, reading and writing every weight (one process: the
 * average of one model is itself). */
static hog_status identity_average(void *ctx, float *w, uint64_t n,
                                   hog_err *err)
{
    (void)ctx, (void)err;
    for (uint64_t i = 0; i < n; i++)
        w[i] = w[i] * 1.0f;
    return HOG_OK;
}

int main(void)
{
    hog_train_hooks hk = { .size = sizeof hk };
    static const struct {
        hog_schedule sched;
        double eta, l1, l2;
    } kinds[] = {
        { HOG_SCHED_CONSTANT, 0.1, 0, 0 },         /* plain */
        { HOG_SCHED_INVSCALING, 0.3, 0, 1e-3 },    /* scaled */
        { HOG_SCHED_CONSTANT, 0.1, 1e-4, 1e-3 },   /* prefix-stamped */
        { HOG_SCHED_ADAGRAD, 0.3, 0, 0 },          /* AdaGrad */
        { HOG_SCHED_ADAGRAD, 0.3, 0, 1e-4 },       /* AdaGrad, l2 */
        { HOG_SCHED_ADAGRAD, 0.3, 1e-4, 1e-4 },    /* AdaGrad, l1 */
    };
    hog_data *d = synth(3000, 400);
    hog_train_opts o;
    hog_train_opts_init(&o);
    o.multiclass = HOG_MULTICLASS_SOFTMAX;
    o.epochs = 2;
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        o.schedule = kinds[k].sched;
        o.eta = kinds[k].eta;
        o.l1 = kinds[k].l1;
        o.l2 = kinds[k].l2;
        o.algo = HOG_ALGO_SERIAL;
        o.threads = 1;
        double base = train_acc(d, &o, &hk);
        CHECK(base > 70.0);
        o.algo = HOG_ALGO_HOGWILD;
        o.oversubscribe = 1;
        for (unsigned t = 2; t <= 4; t += 2) {
            o.threads = t;
            double acc = train_acc(d, &o, &hk);
            printf("kind %zu, %u threads: %.2f%% (serial %.2f%%)\n", k, t,
                   acc, base);
            /* a broken update lands near 25% */
            CHECK(acc > base - 10.0);
        }
    }
    /* a raised cancel flag: every thread stops at its next block */
    volatile sig_atomic_t flag = 1;
    hk.cancel = &flag;
    o.threads = 3;
    {
        hog_model *m = NULL;
        hog_err err;
        CHECK(hog_train(d, NULL, &o, &hk, &m, &err) == HOG_EINTR && m == NULL);
    }
    hk.cancel = NULL;
    /* row weights (docs/TRAINING.md, "Weights"): 2 on every third row,
     * read by every thread, and balanced class weights */
    float *rw = malloc(d->m.rows * sizeof *rw);
    CHECK(rw != NULL);
    for (uint64_t i = 0; i < d->m.rows; i++)
        rw[i] = i % 3 ? 1.0f : 2.0f;
    o.row_weights = rw;
    o.class_weight_balanced = 1;
    o.threads = 2;
    printf("weighted, 2 threads: %.2f%%\n", train_acc(d, &o, &hk));
    o.row_weights = NULL;
    o.class_weight_balanced = 0;
    free(rw);
    /* across processes (--world): thread 0 averages, every 500 rows, the
     * weights the others stepped, while they wait at the barrier */
    hk.average = identity_average;
    o.average_blocks = 6;
    printf("averaged in 6 blocks, 2 threads: %.2f%%\n", train_acc(d, &o, &hk));
    hk.average = NULL;
    o.average_blocks = 0;
    hog_data_free(d);

    /* more threads than rows */
    d = synth(16, 64);
    o.threads = 5;
    (void)train_acc(d, &o, &hk);
    hog_data_free(d);
    puts("tsan_softmax: ok");
    return 0;
}
