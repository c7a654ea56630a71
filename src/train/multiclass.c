/*
 * One-vs-rest: K binary problems on one load of the data. Class c is the
 * binary problem "label == classes[c]" (+1) against the rest (-1): the data
 * is shared, and only its label_pos differs (every algorithm turns a row's
 * label into its +1/-1 target through hog_loss_target(label_pos, y), so the
 * targets are made on the fly, never copied K times). Its weights are the
 * model's vector c.
 *
 * How the threads are used (docs/TRAINING.md, "K classes"):
 *   K >= threads:  classes spread over the threads, each class on one
 *                  thread with the algorithm's one-thread run (no sharing,
 *                  no locks: every class has its own weights);
 *   K <  threads:  the classes one after another, each on all threads.
 * Either way each class's model equals the algorithm's binary model of that
 * problem with the same options and thread count, so the one-thread runs
 * (serial, cyclades, dcd with one thread) are deterministic.
 *
 * Checkpoints: the classes run one after another, and a checkpoint is the
 * running class's state (the algorithm's own) with the class number and
 * the finished classes' vectors (core/fit.h); a resumed run copies those,
 * resumes that class from its state and goes on with the next.
 */
#include "train/train.h"

#include "core/fit.h"
#include "core/forkjoin.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct ovr {
    struct hog_fit *parent;
    const struct hog_algo_row *row;
    hog_train_opts sub;      /* the options of every class's run */
    uint64_t *n_pos;         /* rows per class */
    pthread_mutex_t lock;    /* the progress callback, the first error */
    hog_status st;
    hog_err err;
    uint64_t epochs_done;    /* class epochs, for progress */
    uint32_t current;        /* the class running (checkpoints: one at a
                                time) */
    unsigned classes_done;
    double seconds;          /* the longest class's training time, summed
                                over the waves (see run_all) */
    _Alignas(HOG_CACHELINE) _Atomic uint32_t next;
};

struct worker {
    struct ovr *v;
    double seconds; /* this worker's training time */
};

/* Progress: the share of class epochs done (the callback's epoch is the
 * classes done, out of K). */
static void report(struct ovr *v)
{
    const hog_train_opts *o = v->parent->o;
    if (!o->progress)
        return;
    uint64_t total = (uint64_t)v->parent->model->n_classes * o->epochs;
    o->progress(o->progress_ctx, v->classes_done, v->parent->model->n_classes,
                v->epochs_done, total, NULL);
}

/* A class's epoch: the front door's divergence check on its vector, and
 * progress. */
static hog_status class_epoch_end(struct hog_fit *f, unsigned epoch,
                                  double seconds, hog_err *err)
{
    struct ovr *v = f->ctx;
    (void)seconds;
    uint64_t nw = hog_model_vector_len(f->model);
    for (uint64_t j = 0; j < nw; j++)
        if (!isfinite(f->model->w[j]))
            return hog_errf(err, HOG_ERANGE,
                            "training class %g diverged in epoch %u (weight "
                            "%llu is %g); use a smaller step size than "
                            "eta = %g",
                            f->model->label_pos, epoch,
                            (unsigned long long)j, f->model->w[j],
                            f->o->eta);
    pthread_mutex_lock(&v->lock);
    v->epochs_done++;
    report(v);
    pthread_mutex_unlock(&v->lock);
    return HOG_OK;
}

static void class_tick(struct hog_fit *f, unsigned epoch, uint64_t done,
                       uint64_t total)
{
    (void)f, (void)epoch, (void)done, (void)total;
}

/* A class's checkpoint: its state, its number and the classes before it,
 * through the front door's save. */
static hog_status class_save(struct hog_fit *f,
                             const struct hog_train_state *s, bool cancelled,
                             hog_err *err)
{
    struct ovr *v = f->ctx;
    struct hog_fit *p = v->parent;
    struct hog_train_state k = *s;
    k.n_classes = p->model->n_classes;
    k.ovr_class = v->current;
    k.ovr_done = p->model->w;
    return p->save(p, &k, cancelled, err);
}

/* Trains class c into the model's vector c. */
static hog_status train_class(struct ovr *v, uint32_t c, double *seconds,
                              hog_err *err)
{
    struct hog_fit *p = v->parent;
    hog_model *m = p->model;
    double label = m->classes[c];
    hog_data view = *p->train;
    memset(view.mem, 0, sizeof view.mem);
    memset(view.mem_len, 0, sizeof view.mem_len);
    view.release = NULL;
    view.labels = HOG_LABELS_BINARY;
    view.label_pos = label;
    view.label_neg = NAN;
    view.n_pos = v->n_pos[c];
    hog_model sub = *m;
    sub.w = m->w + c * hog_model_vector_len(m);
    sub.n_classes = 0;
    sub.classes = NULL;
    sub.labels = HOG_LABELS_BINARY;
    sub.label_pos = label;
    sub.label_neg = NAN;
    /* a warm start: the class's vector of the model given */
    hog_train_opts co = v->sub;
    hog_model init;
    if (co.init) {
        init = *co.init;
        init.w = co.init->w + c * hog_model_vector_len(co.init);
        init.n_classes = 0;
        init.classes = NULL;
        co.init = &init;
    }
    struct hog_fit f = { .train = &view, .o = &co, .model = &sub,
                         .epoch_end = class_epoch_end, .tick = class_tick,
                         .ctx = v, .gap = NAN, .objective = NAN,
                         .mean_loss = NAN, .save = class_save,
                         .ckpt_rows = p->ckpt_rows,
                         .ckpt_epochs = p->ckpt_epochs };
    const struct hog_train_state *r = p->resume;
    if (r && c < r->ovr_class) { /* finished before the checkpoint */
        uint64_t len = hog_model_vector_len(m);
        memcpy(sub.w, r->ovr_done + c * len, len * sizeof *sub.w);
        return HOG_OK;
    }
    if (r && c == r->ovr_class)
        f.resume = r;
    v->current = c;
    double t0 = hog_now();
    hog_status st = v->row->run(&f, err);
    *seconds += hog_now() - t0;
    return st;
}

static void *class_worker(void *arg)
{
    struct worker *w = arg;
    struct ovr *v = w->v;
    uint32_t k = v->parent->model->n_classes;
    hog_err err;
    for (;;) {
        /* relaxed: a class's claim orders nothing; the join publishes */
        uint32_t c = atomic_fetch_add_explicit(&v->next, 1,
                                               memory_order_relaxed);
        if (c >= k)
            return NULL;
        pthread_mutex_lock(&v->lock);
        bool failed = v->st != HOG_OK;
        pthread_mutex_unlock(&v->lock);
        if (failed)
            return NULL;
        hog_status st = train_class(v, c, &w->seconds, &err);
        pthread_mutex_lock(&v->lock);
        if (st != HOG_OK && v->st == HOG_OK) {
            v->st = st;
            v->err = err;
        }
        v->classes_done += st == HOG_OK;
        report(v);
        pthread_mutex_unlock(&v->lock);
    }
}

static unsigned ovr_threads(const hog_train_opts *o)
{
    unsigned t = o->threads ? o->threads : hog_allowed_cpus();
    return t ? t : 1;
}

bool hog_train_ovr_spread(const hog_train_opts *o, uint32_t k)
{
    unsigned t = ovr_threads(o);
    return t > 1 && k >= t;
}

hog_status hog_train_ovr(struct hog_fit *f, const struct hog_algo_row *row,
                         hog_err *err)
{
    hog_model *m = f->model;
    const hog_train_opts *o = f->o;
    uint32_t k = m->n_classes;
    unsigned threads = ovr_threads(o);
    struct ovr *v = aligned_alloc(HOG_CACHELINE, sizeof *v);
    uint64_t *n_pos = calloc(k, sizeof *n_pos);
    struct hog_class_index ix;
    memset(&ix, 0, sizeof ix);
    hog_status st = v && n_pos ? hog_class_index_init(&ix, m->classes, k, err)
                               : hog_errf(err, HOG_ENOMEM, "out of memory");
    if (st != HOG_OK) {
        free(v);
        free(n_pos);
        return st;
    }
    for (uint64_t i = 0; i < f->train->m.rows; i++) {
        int64_t c = hog_class_index_find(&ix, f->train->m.y[i]);
        if (c >= 0)
            n_pos[c]++;
    }
    hog_class_index_free(&ix);

    memset(v, 0, sizeof *v);
    v->parent = f;
    v->row = row;
    v->n_pos = n_pos;
    v->st = HOG_OK;
    pthread_mutex_init(&v->lock, NULL);
    atomic_init(&v->next, 0);
    /* a class per thread, each on one thread (and unpinned: the workers
     * are the OS's to place, each running a one-thread trainer); else one
     * class at a time on all threads */
    bool spread = hog_train_ovr_spread(o, k) && !o->checkpoint && !f->resume;
    unsigned workers = spread ? threads : 1;
    v->sub = *o;
    v->sub.threads = spread ? 1 : o->threads;
    if (spread)
        v->sub.bind = "none";
    v->sub.progress = NULL; /* the classes' runs compute no metrics */
    v->sub.cyclades_stats = NULL;
    v->sub.hot_stats = NULL;

    struct worker *w = calloc(workers, sizeof *w);
    if (!w) {
        st = hog_errf(err, HOG_ENOMEM, "out of memory");
    } else {
        for (unsigned t = 0; t < workers; t++)
            w[t].v = v;
        report(v);
        hog_fork_join(w, sizeof *w, workers, class_worker,
                      HOG_FORK_CALLER_FIRST);
        st = v->st;
        if (st != HOG_OK)
            *err = v->err;
    }
    /* the training time: the busiest worker's */
    double seconds = 0;
    for (unsigned t = 0; w && t < workers; t++)
        seconds = w[t].seconds > seconds ? w[t].seconds : seconds;
    free(w);
    pthread_mutex_destroy(&v->lock);
    free(v);
    free(n_pos);
    if (st != HOG_OK)
        return st;
    f->last = true;
    return f->epoch_end(f, o->epochs, seconds, err);
}
