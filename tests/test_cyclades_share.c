/* cyclades_share: one-vs-rest's classes build Cyclades' hot set, views and
 * first partition once and share them (src/cyclades/share.c), and every
 * class's model stays the one its own run gives, bit for bit: classes in
 * turn on several threads, classes at once on one thread each (as
 * one-vs-rest spreads them), with a repartition (a class copies the order
 * before writing it), with hot features off, and on news20's classes. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/fit.h"
#include "cyclades/cyclades.h"
#include "helpers.h"
#include "synth.h"
#include "train/train.h"

#define K 4

static hog_status no_epoch_end(struct hog_fit *f, unsigned epoch,
                               double seconds, hog_err *err)
{
    (void)f, (void)epoch, (void)seconds, (void)err;
    return HOG_OK;
}

static void no_tick(struct hog_fit *f, unsigned epoch, uint64_t done,
                    uint64_t total)
{
    (void)f, (void)epoch, (void)done, (void)total;
}

/* A skewed sparse problem of K classes (the labels 10, 20, ...). */
static hog_data *k_classes(uint64_t rows, uint32_t nf, uint64_t seed)
{
    return th_k_classes(rows, nf, K, 10, seed);
}

/* The classes' binary problems, as one-vs-rest makes them: the rows
 * shared, the label compared with the class's. */
struct classes {
    const hog_data *d;
    const hog_train_opts *o;
    hog_data view[K];
    hog_model *m[K];
    struct hog_fit_share *share; /* NULL: each class alone */
};

static void classes_init(struct classes *cl, const hog_data *d,
                         const hog_train_opts *o, const double *labels,
                         struct hog_fit_share *share)
{
    memset(cl, 0, sizeof *cl);
    cl->d = d;
    cl->o = o;
    cl->share = share;
    for (uint32_t c = 0; c < K; c++) {
        cl->view[c] = *d;
        memset(cl->view[c].mem, 0, sizeof cl->view[c].mem);
        memset(cl->view[c].mem_len, 0, sizeof cl->view[c].mem_len);
        cl->view[c].release = NULL;
        cl->view[c].labels = HOG_LABELS_BINARY;
        cl->view[c].label_pos = labels[c];
        hog_err err = { { 0 } };
        cr_assert_eq(hog_model_new(d->n_features, o->loss, o->bias,
                                   &cl->m[c], &err),
                     HOG_OK, "%s", err.msg);
        cl->m[c]->label_pos = labels[c];
    }
}

static hog_status class_job(void *ctx, uint32_t c, unsigned worker,
                            hog_err *err)
{
    (void)worker;
    struct classes *cl = ctx;
    struct hog_fit f = { .train = &cl->view[c], .o = cl->o,
                         .model = cl->m[c], .epoch_end = no_epoch_end,
                         .tick = no_tick, .share = cl->share };
    return hog_cyclades_train(&f, err);
}

/* The K classes on `workers` threads at once (1: one after another). */
static void run_classes(struct classes *cl, unsigned workers)
{
    hog_err err = { { 0 } };
    cr_assert_eq(hog_train_spread(K, workers, class_job, cl, &err), HOG_OK,
                 "%s", err.msg);
}

static void classes_free(struct classes *cl)
{
    for (uint32_t c = 0; c < K; c++)
        hog_model_free(cl->m[c]);
}

/* Each class alone, then all of them through one share (workers at once,
 * every class on o's threads); the models bit for bit, and the share
 * built once and taken by the other classes. */
static void check_shared(const hog_data *d, const hog_train_opts *base,
                         const double *labels, unsigned threads,
                         unsigned workers, const char *what)
{
    hog_train_opts o = *base;
    o.algo = HOG_ALGO_CYCLADES;
    o.threads = threads;
    o.oversubscribe = 1;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_train_opts_resolve(&o, NULL, &err), HOG_OK, "%s",
                 err.msg);
    struct classes alone, shared;
    classes_init(&alone, d, &o, labels, NULL);
    run_classes(&alone, 1);

    struct hog_fit_share share = { .p = NULL };
    pthread_mutex_init(&share.lock, NULL);
    classes_init(&shared, d, &o, labels, &share);
    run_classes(&shared, workers);
    uint64_t built, took_views, took_order;
    hog_cyclades_share_counts(&share, &built, &took_views, &took_order);
    cr_assert_eq(built, 1, "%s: the views built %llu times", what,
                 (unsigned long long)built);
    cr_assert_eq(took_views, K - 1, "%s: %llu classes took the views", what,
                 (unsigned long long)took_views);
    cr_assert_eq(took_order, K - 1, "%s: %llu classes took the order", what,
                 (unsigned long long)took_order);
    for (uint32_t c = 0; c < K; c++) {
        uint64_t n = hog_model_vector_len(alone.m[c]);
        cr_assert(memcmp(alone.m[c]->w, shared.m[c]->w,
                         n * sizeof *alone.m[c]->w) == 0,
                  "%s: class %u's model differs when shared", what, c);
        bool any = false;
        for (uint64_t j = 0; j < n; j++)
            any |= alone.m[c]->w[j] != 0.0f;
        cr_assert(any, "%s: class %u's model is all zero", what, c);
    }
    share.free_p(share.p);
    pthread_mutex_destroy(&share.lock);
    classes_free(&alone);
    classes_free(&shared);
}

static const double synth_labels[K] = { 10, 20, 30, 40 };

Test(cyclades_share, classes_at_once_on_one_thread_each, .timeout = 60)
{
    hog_data *d = k_classes(3000, 300, 5);
    hog_train_opts o;
    th_opts_init(&o);
    o.epochs = 3;
    o.bias = 1.0;
    check_shared(d, &o, synth_labels, 1, 2, "spread, 1 thread per class");
    check_shared(d, &o, synth_labels, 1, 3, "spread on 3 workers");
    hog_data_free(d);
}

Test(cyclades_share, classes_in_turn_on_several_threads, .timeout = 60)
{
    hog_data *d = k_classes(3000, 300, 6);
    hog_train_opts o;
    th_opts_init(&o);
    o.epochs = 2;
    check_shared(d, &o, synth_labels, 3, 1, "in turn, 3 threads");
    hog_data_free(d);
}

/* A repartition writes the order: each class copies the shared one
 * first; without hot features the views are the data's rows. */
Test(cyclades_share, repartition_hot_off_and_other_losses, .timeout = 60)
{
    hog_data *d = k_classes(2000, 200, 7);
    hog_train_opts o;
    th_opts_init(&o);
    o.epochs = 3;
    o.repartition = 1;
    check_shared(d, &o, synth_labels, 1, 2, "repartition");
    o.repartition = 0;
    o.cyclades_hot_degree = 0;
    check_shared(d, &o, synth_labels, 2, 1, "hot off");
    o.cyclades_hot_degree = HOG_HOT_AUTO;
    o.loss = HOG_LOSS_HINGE;
    o.schedule = HOG_SCHED_INVSCALING;
    o.l1 = 1e-4;
    check_shared(d, &o, synth_labels, 1, 2, "hinge, l1, inverse scaling");
    hog_data_free(d);
}

/* news20's first four topics (1-4), 2 epochs: the text's hot features
 * (most of its nonzeros) and its batches of 64 rows. */
Test(cyclades_share, news20_classes, .timeout = 240)
{
    TH_HEAVY_OR_SKIP();
    TH_DATA_OR_SKIP(tr, "news20.train.svm");
    hog_data *d = th_load(tr);
    hog_train_opts o;
    th_opts_init(&o);
    o.epochs = 2;
    const double labels[K] = { 1, 2, 3, 4 };
    check_shared(d, &o, labels, 1, 2, "news20");
    hog_data_free(d);
}
