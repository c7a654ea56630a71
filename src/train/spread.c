/*
 * A few independent trainings spread over threads: one-vs-rest's classes
 * (multiclass.c) and cross-validation's folds (cv.c). Each worker thread
 * claims the next job until none is left, so that jobs of unequal length
 * keep every thread busy; each job trains on one thread of its own (the
 * caller sets its options' threads to 1), with no weight shared between
 * jobs: no locks in training, no cache line passed between threads.
 *
 * When it pays: with at least as many jobs as threads, and more than one
 * thread. With fewer jobs a thread would sit idle for the whole run, and
 * the jobs are better run one after another, each on all threads.
 */
#include "train/train.h"

#include "core/forkjoin.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct spread {
    hog_spread_job *job;
    void *ctx;
    uint32_t n;
    pthread_mutex_t lock; /* the first failure */
    hog_status st;
    hog_err err;
    _Alignas(HOG_CACHELINE) _Atomic uint32_t next;
};

struct spread_worker {
    struct spread *s;
    unsigned id;
};

static void *spread_worker(void *arg)
{
    struct spread_worker *w = arg;
    struct spread *s = w->s;
    hog_err err;
    for (;;) {
        /* relaxed: a job's claim orders nothing; the join publishes */
        uint32_t i = atomic_fetch_add_explicit(&s->next, 1,
                                               memory_order_relaxed);
        if (i >= s->n)
            return NULL;
        pthread_mutex_lock(&s->lock);
        bool failed = s->st != HOG_OK;
        pthread_mutex_unlock(&s->lock);
        if (failed)
            return NULL;
        hog_status st = s->job(s->ctx, i, w->id, &err);
        if (st != HOG_OK) {
            pthread_mutex_lock(&s->lock);
            if (s->st == HOG_OK) {
                s->st = st;
                s->err = err;
            }
            pthread_mutex_unlock(&s->lock);
        }
    }
}

unsigned hog_train_threads(const hog_train_opts *o)
{
    unsigned t = o->threads ? o->threads : hog_allowed_cpus();
    return t ? t : 1;
}

unsigned hog_train_spread_workers(const hog_train_opts *o, uint32_t n)
{
    unsigned t = hog_train_threads(o);
    return t > 1 && n >= t ? t : 1;
}

hog_status hog_train_spread(uint32_t n, unsigned workers, hog_spread_job *job,
                            void *ctx, hog_err *err)
{
    struct spread *s = aligned_alloc(HOG_CACHELINE, sizeof *s);
    struct spread_worker *w = calloc(workers ? workers : 1, sizeof *w);
    if (!s || !w) {
        free(s);
        free(w);
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    }
    s->job = job;
    s->ctx = ctx;
    s->n = n;
    s->st = HOG_OK;
    pthread_mutex_init(&s->lock, NULL);
    atomic_init(&s->next, 0);
    for (unsigned t = 0; t < workers; t++)
        w[t] = (struct spread_worker){ s, t };
    hog_fork_join(w, sizeof *w, workers ? workers : 1, spread_worker,
                  HOG_FORK_CALLER_FIRST);
    hog_status st = s->st;
    if (st != HOG_OK)
        *err = s->err;
    pthread_mutex_destroy(&s->lock);
    free(s);
    free(w);
    return st;
}
