/*
 * Cyclades under ThreadSanitizer, without Criterion (Criterion cannot start
 * under TSan; see tests/tsan_pool.c). `make tsan` builds and runs it; it
 * exits non-zero on a wrong result, and TSan (halt_on_error=1) on any
 * report: a race would mean two threads touched one weight in a batch, or
 * a barrier failed to order the batch's rows and its hot-feature steps.
 *
 * A small problem whose rows share a few frequent features and a long
 * tail: hot features, cold components and the bias all in play; 1, 2 and 4
 * threads must give one model; L1 + L2 with the prefix schedule (lazy
 * catch-up at segment ends shared by the threads) and AdaGrad; short
 * segments ending inside batches (eta l2 = 0.95); K classes by softmax,
 * each hot feature's K weights stepped by one thread. Then checkpoints: a
 * run at 4 threads cancelled (the flag polled each batch, the checkpoint
 * written while the other threads wait) and resumed at 2 threads equals
 * the uninterrupted run.
 */
#include "core/core.h"
#include "synth.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(c)                                                              \
    do {                                                                      \
        if (!(c)) {                                                           \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);      \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

/* Rows of 3 to 10 features drawn as nf u^3: few frequent, many rare. */
static hog_data *synth(uint64_t rows, uint32_t nf)
{
    hog_err err = { { 0 } };
    hog_data *d = th_synth(&(struct th_synth){
        .rows = rows, .features = nf, .layout = TH_SYNTH_SKEW, .nnz_min = 3,
        .nnz_max = 10, .seed = 21,
        .period = 3, .first = { .value = -1.0 }, .rest = { .value = 1.0 } },
        &err);
    CHECK(d);
    return d;
}

static hog_model *fit(const hog_data *d, const hog_train_opts *base,
                      unsigned threads)
{
    hog_train_opts o = *base;
    o.algo = HOG_ALGO_CYCLADES;
    o.threads = threads;
    hog_model *m;
    hog_err err;
    if (hog_train(d, NULL, &o, NULL, &m, &err) != HOG_OK) {
        fprintf(stderr, "FAIL: %s\n", err.msg);
        exit(1);
    }
    return m;
}

static void same_at_1_2_4(const hog_data *d, const hog_train_opts *o,
                          const char *what)
{
    hog_model *a = fit(d, o, 1);
    for (unsigned t = 2; t <= 4; t += 2) {
        hog_model *b = fit(d, o, t);
        if (memcmp(a->w, b->w, hog_model_len(a) * sizeof(float)) != 0) {
            fprintf(stderr, "FAIL: %s: 1 and %u threads differ\n", what, t);
            exit(1);
        }
        hog_model_free(b);
    }
    hog_model_free(a);
    printf("ok %s\n", what);
}

/* Cancelled at 4 threads with checkpoints every 100 rows, resumed at 2
 * threads until done: the uninterrupted model. */
static void cancel_and_resume(const hog_data *d, const hog_train_opts *base)
{
    char ck[64];
    snprintf(ck, sizeof ck, "/tmp/tsan_cyclades.%d.ckpt", (int)getpid());
    hog_model *ref = fit(d, base, 3);
    volatile sig_atomic_t flag = 1;
    hog_train_opts o = *base;
    o.algo = HOG_ALGO_CYCLADES;
    o.threads = 4;
    o.checkpoint = ck;
    o.checkpoint_rows = 100;
    hog_train_hooks hk = { .size = sizeof hk };
    hk.cancel = &flag;
    hog_model *m = NULL;
    hog_err err;
    CHECK(hog_train(d, NULL, &o, &hk, &m, &err) == HOG_EINTR);
    flag = 0;
    o.resume = ck;
    o.threads = 2;
    CHECK(hog_train(d, NULL, &o, &hk, &m, &err) == HOG_OK);
    CHECK(memcmp(ref->w, m->w, (d->n_features + 1) * sizeof(float)) == 0);
    hog_model_free(m);
    hog_model_free(ref);
    unlink(ck);
    printf("ok cancelled at 4 threads, resumed at 2\n");
}

int main(void)
{
    hog_data *d = synth(1200, 600);
    hog_train_opts o;
    hog_train_opts_init(&o);
    o.epochs = 2;
    o.batch_size = 48;
    o.cyclades_hot_degree = 60;
    o.l1 = 1e-4;
    o.l2 = 1e-3;
    same_at_1_2_4(d, &o, "hot features, L1 + L2, invscaling");
    cancel_and_resume(d, &o);
    o.repartition = 1;
    o.schedule = HOG_SCHED_ADAGRAD;
    same_at_1_2_4(d, &o, "repartition, AdaGrad");
    o.schedule = HOG_SCHED_CONSTANT;
    o.eta = 0.5;
    o.l1 = 0;
    o.l2 = 1.9;
    same_at_1_2_4(d, &o, "segments ending inside batches");
    o.cyclades_hot_degree = 0;
    o.l2 = 1e-3;
    same_at_1_2_4(d, &o, "hot off");
    hog_data_free(d);

    hog_data *k4 = synth(1200, 600);
    CHECK(th_label_argmax(k4, 4, 1.0, 21, 12));
    hog_train_opts_init(&o);
    o.multiclass = HOG_MULTICLASS_SOFTMAX;
    o.epochs = 2;
    o.batch_size = 48;
    o.cyclades_hot_degree = 60;
    o.l1 = 1e-4;
    same_at_1_2_4(k4, &o, "softmax, AdaGrad, L1 + L2, hot features");
    o.schedule = HOG_SCHED_CONSTANT;
    o.eta = 0.5;
    o.l1 = 0;
    o.l2 = 1.9;
    same_at_1_2_4(k4, &o, "softmax, segments ending inside batches");
    hog_data_free(k4);
    return 0;
}
