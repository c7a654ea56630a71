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
 *   K <  threads:  the classes one after another, each on all threads
 *                  (also across processes, --world: every rank trains and
 *                  averages class c's vector at the same time).
 * Either way each class's model equals the algorithm's binary model of that
 * problem with the same options and thread count, so the one-thread runs
 * (serial, cyclades, dcd with one thread) are deterministic.
 *
 * The classes are spread.c's jobs. Early stopping (o->early_stop with a
 * validation set): each class stops on its own binary validation loss and
 * keeps its best epoch's vector (early.c), scored on the class's thread.
 *
 * Checkpoints: the classes run one after another, and a checkpoint is the
 * running class's state (the algorithm's own) with the class number and
 * the finished classes' vectors (core/fit.h); a resumed run copies those,
 * resumes that class from its state and goes on with the next.
 */
#include "train/train.h"

#include "core/fit.h"
#include "core/metrics.h"
#include "core/sgd.h"
#include "hogwild/hogwild.h"
#include "io/io.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct ovr {
    struct hog_fit *parent;
    const struct hog_algo_row *row;
    hog_train_opts sub;      /* the options of every class's run */
    hog_train_hooks sub_hooks; /* and its hooks: no progress, no stats */
    uint64_t *n_pos;         /* rows per class */
    uint64_t *valid_pos;     /* validation rows per class (early stopping) */
    pthread_mutex_t lock;    /* the progress callback, the counts below */
    uint64_t epochs_done;    /* class epochs, for progress */
    uint32_t current;        /* the class running (checkpoints: one at a
                                time; not kept when the classes spread) */
    bool spread;             /* the classes spread over the threads */
    unsigned classes_done;
    double *seconds;         /* per worker: its training time */
    hog_valid_stats early;   /* early stopping: what the classes did */
    /* what the classes' runs build once and share (core/fit.h): their
     * problems differ in the labels only */
    struct hog_fit_share share;
};

/* One class's run: its fit (first, so that the hooks find the rest) and
 * its early stopping. */
struct class_run {
    struct hog_fit f;
    struct ovr *v;
    uint32_t c;
    struct hog_early early;
    hog_data valid;          /* the validation set as the class's binary
                                problem */
};

/* Progress: the share of class epochs done (the callback's epoch is the
 * classes done, out of K). */
static void report(struct ovr *v)
{
    const struct hog_fit *p = v->parent;
    if (!p->hooks.progress)
        return;
    uint64_t total = (uint64_t)p->model->n_classes * p->o->epochs;
    p->hooks.progress(p->hooks.progress_ctx, v->classes_done,
                      p->model->n_classes, v->epochs_done, total, NULL);
}

/* Early stopping of one class: its binary validation loss after the
 * epoch (on the class's thread count), the best vector kept; HOG_FIT_STOP
 * once the patience has run out. */
static hog_status class_early(struct class_run *r, unsigned epoch,
                              hog_err *err)
{
    struct hog_metrics m;
    hog_status st = hog_metrics_eval_threads(r->f.model, &r->valid,
                                             r->f.o->threads, &m, err);
    if (st != HOG_OK)
        return st;
    return hog_early_step(&r->early, epoch, m.loss, r->f.model->w)
               ? HOG_FIT_STOP
               : HOG_OK;
}

/* The front door's divergence check on class `label`'s vector w. */
static hog_status class_finite(const float *w, uint64_t len, double label,
                               unsigned epoch, double eta, hog_err *err)
{
    for (uint64_t j = 0; j < len; j++)
        if (!isfinite(w[j]))
            return hog_errf(err, HOG_ERANGE,
                            "training class %g diverged in epoch %u (weight "
                            "%llu is %g); use a smaller step size than "
                            "eta = %g",
                            label, epoch, (unsigned long long)j, w[j], eta);
    return HOG_OK;
}

/* A class's epoch: the divergence check on its vector, early stopping,
 * and progress. */
static hog_status class_epoch_end(struct hog_fit *f, unsigned epoch,
                                  double seconds, hog_err *err)
{
    struct class_run *r = (struct class_run *)f;
    struct ovr *v = r->v;
    (void)seconds;
    hog_status st = class_finite(f->model->w, hog_model_vector_len(f->model),
                                 f->model->label_pos, epoch, f->o->eta, err);
    if (st != HOG_OK)
        return st;
    st = r->early.patience ? class_early(r, epoch, err) : HOG_OK;
    pthread_mutex_lock(&v->lock);
    v->epochs_done++;
    report(v);
    pthread_mutex_unlock(&v->lock);
    return st;
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
    const struct class_run *r = (const struct class_run *)f;
    struct hog_fit *p = r->v->parent;
    struct hog_train_state k = *s;
    k.n_classes = p->model->n_classes;
    k.ovr_class = r->c; /* v->current where checkpoints are kept */
    k.ovr_done = p->model->w;
    return p->save(p, &k, cancelled, err);
}

hog_data hog_train_class_view(const hog_data *d, double label,
                              uint64_t n_pos)
{
    hog_data view = *d;
    memset(view.mem, 0, sizeof view.mem);
    memset(view.mem_len, 0, sizeof view.mem_len);
    view.release = NULL;
    view.labels = HOG_LABELS_BINARY;
    view.label_pos = label;
    view.label_neg = NAN;
    view.n_pos = n_pos;
    return view;
}

/* The model's vector c as the binary model of class c (its weights
 * shared). */
static hog_model class_model(const hog_model *m, uint32_t c)
{
    hog_model sub = *m;
    sub.w = m->w + c * hog_model_vector_len(m);
    sub.n_classes = 0;
    sub.classes = NULL;
    sub.labels = HOG_LABELS_BINARY;
    sub.label_pos = m->classes[c];
    sub.label_neg = NAN;
    return sub;
}

/* After class r's training with early stopping: its best epoch's vector
 * into w, and what it did into the run's figures. */
static void class_early_done(struct ovr *v, const struct class_run *r,
                             float *w)
{
    hog_early_restore(&r->early, w);
    pthread_mutex_lock(&v->lock);
    hog_valid_stats *e = &v->early;
    e->classes_stopped += r->early.stopped;
    e->early_stopped |= r->early.stopped;
    if (r->early.epochs > e->epochs_run)
        e->epochs_run = r->early.epochs;
    if (r->early.best_epoch > e->best_epoch)
        e->best_epoch = r->early.best_epoch;
    pthread_mutex_unlock(&v->lock);
}

/* Trains class c into the model's vector c. */
static hog_status train_class(struct ovr *v, uint32_t c, double *seconds,
                              hog_err *err)
{
    struct hog_fit *p = v->parent;
    hog_model *m = p->model;
    double label = m->classes[c];
    uint64_t len = hog_model_vector_len(m);
    hog_data view = hog_train_class_view(p->train, label, v->n_pos[c]);
    hog_model sub = class_model(m, c);
    struct class_run r;
    memset(&r, 0, sizeof r);
    r.f = (struct hog_fit){ .train = &view, .o = &v->sub,
                            .hooks = v->sub_hooks, .model = &sub,
                            .stream = p->stream,
                            .epoch_end = class_epoch_end, .tick = class_tick,
                            .ctx = v, .gap = NAN, .objective = NAN,
                            .mean_loss = NAN, .prog_loss = NAN,
                            .prog_accuracy = NAN, .save = class_save,
                            .ckpt_rows = p->ckpt_rows,
                            .ckpt_epochs = p->ckpt_epochs,
                            .init = p->init ? p->init + c * len : NULL,
                            .keep_last = p->keep_last,
                            .share = &v->share };
    r.v = v;
    r.c = c;
    struct hog_train_state warm;
    if (p->warm) {
        warm = hog_train_state_class(p->warm, c);
        r.f.warm = &warm;
    }
    const struct hog_train_state *rs = p->resume;
    if (rs && c < rs->ovr_class) { /* finished before the checkpoint */
        memcpy(sub.w, rs->ovr_done + c * len, len * sizeof *sub.w);
        return HOG_OK;
    }
    if (rs && c == rs->ovr_class)
        r.f.resume = rs;
    const hog_train_opts *o = p->o;
    hog_status st = HOG_OK;
    if (o->early_stop && o->validation) {
        r.valid = hog_train_class_view(o->validation, label,
                                       v->valid_pos[c]);
        st = hog_early_init(&r.early, o->early_stop, len, err);
    }
    if (st != HOG_OK)
        return st;
    if (!v->spread)
        v->current = c;
    double t0 = hog_now();
    st = p->stream ? v->row->stream(&r.f, err) : v->row->run(&r.f, err);
    *seconds += hog_now() - t0;
    if (st == HOG_FIT_STOP || (st == HOG_OK && r.early.patience)) {
        class_early_done(v, &r, sub.w);
        st = HOG_OK;
    }
    hog_early_free(&r.early);
    return st;
}

static hog_status class_job(void *ctx, uint32_t c, unsigned worker,
                            hog_err *err)
{
    struct ovr *v = ctx;
    hog_status st = train_class(v, c, &v->seconds[worker], err);
    pthread_mutex_lock(&v->lock);
    v->classes_done += st == HOG_OK;
    report(v);
    pthread_mutex_unlock(&v->lock);
    return st;
}

/* ---- classes stepped together ---------------------------------------------- */

/* One-vs-rest's one-thread runs of FTRL-Proximal (serial, and Hogwild! on
 * one thread, which replays it) step their classes together, in groups of
 * up to HOG_SGD_WIDE_MAX (hog_sgd_run_wide: each class's weights are its
 * own run's bit for bit, at a fraction of the memory traffic): where the
 * classes spread over the threads or there is one thread, and none of
 * what the per-class runs do on their own is asked for (checkpoints,
 * averaging, streams, interactions). Early stopping is each class's own,
 * as in its own run: a class that stops keeps its best epoch's vector
 * (the group steps on while one of its classes has not stopped). */
static bool wide_fits(const struct hog_fit *f, bool spread)
{
    const hog_train_opts *o = f->o;
    const hog_data *d = f->train;
    return o->schedule == HOG_SCHED_FTRL &&
           (o->algo == HOG_ALGO_SERIAL || o->algo == HOG_ALGO_HOGWILD) &&
           (spread || hog_train_threads(o) == 1) && !o->checkpoint &&
           !f->resume && !f->hooks.average && !f->stream && !d->m.ns &&
           !f->warm && !f->keep_last;
}

/* Group g of the classes: [g * size, min(k, (g + 1) * size)). */
struct wide {
    struct ovr *v;
    uint32_t size;
};

/* A group's run: the serial trainer's rows step (hogwild/serial.c: the
 * same order, shuffles and segments) on the group's k classes at once,
 * under the epoch driver (core/drive.h). Its fit has the classes' options
 * and hooks of its own: each class's vector is checked after every epoch
 * as its own run's epoch_end does. */
struct wide_run {
    struct hog_fit f;
    struct ovr *v;
    struct hog_sgd s;
    struct hog_order ord;
    struct hog_drive dv;
    uint32_t c0, k;
    uint64_t len;           /* a class vector's length */
    struct hog_drive_seg g; /* the open segment */
    /* early stopping: each class as its own run has it (class_early) */
    struct class_run *cr;
    hog_model *subs;
    bool *stopped;
    uint32_t running;
};

static struct hog_order *wide_order(void *ctx, unsigned p)
{
    (void)p;
    return &((struct wide_run *)ctx)->ord;
}

static hog_status wide_rows(void *ctx, unsigned tid, unsigned T,
                            const struct hog_drive_span *sp, hog_err *err)
{
    (void)tid, (void)T, (void)err;
    struct wide_run *w = ctx;
    for (uint64_t from = sp->from; from < sp->to;) {
        uint64_t blk = hog_drive_seg_next(&w->g, &w->s, sp, from);
        hog_sgd_run_wide(&w->s, w->f.train, w->ord.rows + from,
                         (uint32_t)blk, w->g.i);
        w->g.i += (uint32_t)blk;
        from += blk;
    }
    return HOG_OK;
}

static void wide_block_end(void *ctx, unsigned tid, unsigned T)
{
    (void)tid, (void)T;
    hog_drive_seg_close(&((struct wide_run *)ctx)->g);
}

static void wide_model(void *ctx, unsigned tid, unsigned T)
{
    (void)tid, (void)T;
    struct wide_run *w = ctx;
    hog_sgd_copy_weights_wide(&w->s, w->v->parent->model->w + w->c0 * w->len,
                              w->len);
}

/* No checkpoint is kept (wide_fits): a cancel's save only says where. */
static hog_status wide_save(void *ctx, struct hog_train_state *at, bool cut,
                            hog_err *err)
{
    (void)cut;
    struct wide_run *w = ctx;
    return hog_fit_save(w->v->parent, at, hog_fit_cancelled(&w->f), err);
}

static const struct hog_drive_ops wide_ops = {
    .order = wide_order,
    .run = wide_rows,
    .block_end = wide_block_end,
    .model = wide_model,
    .save = wide_save,
};

/* The group's epoch: each running class's vector checked, early
 * stopping, progress; HOG_FIT_STOP once every class has stopped. */
static hog_status wide_epoch_end(struct hog_fit *f, unsigned epoch,
                                 double seconds, hog_err *err)
{
    (void)seconds;
    struct wide_run *w = (struct wide_run *)f;
    struct ovr *v = w->v;
    const hog_model *m = v->parent->model;
    const uint32_t ran = w->running; /* the class epochs this one counts */
    hog_status st = HOG_OK;
    for (uint32_t c = 0; c < w->k && st == HOG_OK; c++) {
        if (w->stopped && w->stopped[c])
            continue;
        st = class_finite(m->w + (w->c0 + c) * w->len, w->len,
                          m->classes[w->c0 + c], epoch, f->o->eta, err);
        if (st == HOG_OK && w->cr &&
            (st = class_early(&w->cr[c], epoch, err)) == HOG_FIT_STOP) {
            w->stopped[c] = true;
            w->running--;
            st = HOG_OK;
        }
    }
    pthread_mutex_lock(&v->lock);
    v->epochs_done += ran;
    report(v);
    pthread_mutex_unlock(&v->lock);
    return st == HOG_OK && w->running == 0 ? HOG_FIT_STOP : st;
}

static void wide_tick(struct hog_fit *f, unsigned epoch, uint64_t done,
                      uint64_t total)
{
    (void)f, (void)epoch, (void)done, (void)total;
}

/* Group g's classes from the start (wide_fits: no resume) to the last
 * epoch or until every one has stopped early. */
static hog_status wide_job(void *ctx, uint32_t g, unsigned worker,
                           hog_err *err)
{
    const struct wide *wd = ctx;
    struct ovr *v = wd->v;
    struct hog_fit *p = v->parent;
    hog_model *m = p->model;
    const hog_data *d = p->train;
    const hog_train_opts *o = &v->sub;
    double t0 = hog_now();
    struct wide_run *w = calloc(1, sizeof *w);
    if (!w)
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    w->v = v;
    w->c0 = g * wd->size;
    w->k = m->n_classes - w->c0 < wd->size ? m->n_classes - w->c0 : wd->size;
    w->len = hog_model_vector_len(m);
    w->g = (struct hog_drive_seg){ .end = hog_drive_seg_sgd_end, .ctx = &w->s };
    w->f = (struct hog_fit){ .train = d, .o = o, .hooks = v->sub_hooks,
                             .model = m,
                             .epoch_end = wide_epoch_end, .tick = wide_tick };
    hog_status st = hog_sgd_init_wide(&w->s, o, d, w->k, m->classes + w->c0,
                                      err);
    if (st != HOG_OK) {
        free(w);
        return st;
    }
    if (p->init) /* a warm start: the classes' vectors */
        hog_sgd_set_weights_wide(&w->s, p->init + w->c0 * w->len, w->len);
    w->ord.n = d->m.rows;
    if (!(w->ord.rows = hog_serial_order(w->ord.n, o->seed, &w->ord.rng,
                                         err)))
        st = HOG_ENOMEM;
    const hog_train_opts *po = p->o;
    const bool early = po->early_stop && po->validation;
    w->running = w->k;
    if (early && st == HOG_OK &&
        (!(w->cr = calloc(w->k, sizeof *w->cr)) ||
         !(w->subs = calloc(w->k, sizeof *w->subs)) ||
         !(w->stopped = calloc(w->k, sizeof *w->stopped))))
        st = hog_errf(err, HOG_ENOMEM, "out of memory");
    for (uint32_t c = 0; early && c < w->k && st == HOG_OK; c++) {
        w->subs[c] = class_model(m, w->c0 + c);
        w->cr[c].f = (struct hog_fit){ .o = o, .hooks = v->sub_hooks,
                                       .model = &w->subs[c] };
        w->cr[c].valid = hog_train_class_view(po->validation,
                                              m->classes[w->c0 + c],
                                              v->valid_pos[w->c0 + c]);
        st = hog_early_init(&w->cr[c].early, po->early_stop, w->len, err);
    }
    w->dv = (struct hog_drive){ .f = &w->f, .ops = &wide_ops, .ctx = w,
                                .n = d->m.rows, .n_orders = 1, .rows = true };
    if (st == HOG_OK && (st = hog_drive_begin(&w->dv, err)) == HOG_OK) {
        hog_drive_job(&w->dv, 0, 1);
        st = w->dv.st == HOG_FIT_STOP ? HOG_OK : w->dv.st;
    }
    for (uint32_t c = 0; w->cr && c < w->k; c++) {
        if (st == HOG_OK)
            class_early_done(v, &w->cr[c], m->w + (w->c0 + c) * w->len);
        hog_early_free(&w->cr[c].early);
    }
    const uint32_t k = w->k;
    free(w->cr);
    free(w->subs);
    free(w->stopped);
    free(w->ord.rows);
    hog_sgd_free(&w->s);
    free(w);
    v->seconds[worker] += hog_now() - t0;
    pthread_mutex_lock(&v->lock);
    v->classes_done += st == HOG_OK ? k : 0;
    report(v);
    pthread_mutex_unlock(&v->lock);
    return st;
}

bool hog_train_ovr_spread(const hog_train_opts *o, uint32_t k)
{
    return hog_train_spread_workers(o, k) > 1;
}

/* Rows per class of d (labels none of the classes' left out). */
static hog_status count_classes(const hog_data *d, const hog_model *m,
                                uint64_t *n_pos, hog_err *err)
{
    struct hog_class_index ix;
    hog_status st = hog_class_index_init(&ix, m->classes, m->n_classes, err);
    if (st != HOG_OK)
        return st;
    for (uint64_t i = 0; i < d->m.rows; i++) {
        int64_t c = hog_class_index_find(&ix, d->m.y[i]);
        if (c >= 0)
            n_pos[c]++;
    }
    hog_class_index_free(&ix);
    return HOG_OK;
}

hog_status hog_train_ovr(struct hog_fit *f, const struct hog_algo_row *row,
                         hog_valid_stats *early, hog_err *err)
{
    hog_model *m = f->model;
    const hog_train_opts *o = f->o;
    uint32_t k = m->n_classes;
    unsigned threads = hog_train_threads(o);
    /* a class per thread, each on one thread (and unpinned: the workers
     * are the OS's to place, each running a one-thread trainer); else one
     * class at a time on all threads */
    /* averaged or solved exactly across processes: every rank trains the
     * classes in the same order, one at a time, each class's vector
     * averaged or reduced as a binary model's (so that every rank makes
     * the same calls) */
    bool spread = hog_train_ovr_spread(o, k) && !o->checkpoint &&
                  !f->resume && !f->hooks.average && !f->hooks.reduce &&
                  !f->stream;
    unsigned workers = spread ? threads : 1;
    struct ovr *v = calloc(1, sizeof *v);
    uint64_t *n_pos = calloc(2 * (size_t)k, sizeof *n_pos);
    double *seconds = calloc(workers, sizeof *seconds);
    hog_status st = !v || !n_pos || !seconds
                        ? hog_errf(err, HOG_ENOMEM, "out of memory")
                    : f->class_rows
                        ? (memcpy(n_pos, f->class_rows, k * sizeof *n_pos),
                           HOG_OK)
                        : count_classes(f->train, m, n_pos, err);
    if (st == HOG_OK && o->early_stop && o->validation)
        st = count_classes(o->validation, m, n_pos + k, err);
    if (st != HOG_OK) {
        free(v);
        free(n_pos);
        free(seconds);
        return st;
    }
    v->parent = f;
    v->row = row;
    v->n_pos = n_pos;
    v->valid_pos = n_pos + k;
    v->seconds = seconds;
    v->spread = spread;
    pthread_mutex_init(&v->lock, NULL);
    pthread_mutex_init(&v->share.lock, NULL);
    v->sub = *o;
    v->sub.threads = spread ? 1 : o->threads;
    if (spread)
        v->sub.bind = "none";
    v->sub_hooks = f->hooks;
    v->sub_hooks.progress = NULL; /* the classes' runs compute no metrics */
    v->sub_hooks.cyclades_stats = NULL;
    v->sub_hooks.hot_stats = NULL;

    report(v);
    if (wide_fits(f, spread)) {
        /* groups of at most HOG_SGD_WIDE_MAX classes, a multiple of the
         * workers, as even as they go */
        uint32_t wmax = HOG_SGD_WIDE_MAX;
        uint32_t groups = workers * ((k + workers * wmax - 1) /
                                     (workers * wmax));
        struct wide wd = { v, (k + groups - 1) / groups };
        groups = (k + wd.size - 1) / wd.size;
        st = hog_train_spread(groups, workers, wide_job, &wd, err);
    } else {
        st = hog_train_spread(k, workers, class_job, v, err);
    }
    /* the training time: the busiest worker's */
    double secs = 0;
    for (unsigned t = 0; t < workers; t++)
        secs = seconds[t] > secs ? seconds[t] : secs;
    if (early)
        *early = v->early;
    uint64_t class_epochs = v->epochs_done;
    if (v->share.p)
        v->share.free_p(v->share.p);
    pthread_mutex_destroy(&v->share.lock);
    pthread_mutex_destroy(&v->lock);
    free(v);
    free(n_pos);
    free(seconds);
    if (st != HOG_OK)
        return st;
    f->last = true;
    f->class_epochs = class_epochs;
    return f->epoch_end(f, o->epochs, secs, err);
}

/* ---- the classes of a stream ------------------------------------------------ */

hog_status hog_train_stream_classes(struct hog_stream *s,
                                    const hog_train_hooks *h, double **labels,
                                    uint64_t **rows, uint32_t *k,
                                    hog_err *err)
{
    const uint32_t max = HOG_MAX_CLASSES;
    const struct hog_hgb_info *in = hog_stream_info(s);
    uint64_t nc = in->n_chunks;
    uint64_t *seq = malloc((nc ? nc : 1) * sizeof *seq);
    double *cl = NULL;
    uint64_t *cnt = NULL;
    uint32_t n = 0;
    struct hog_class_index ix;
    memset(&ix, 0, sizeof ix);
    hog_status st = seq ? HOG_OK : hog_errf(err, HOG_ENOMEM, "out of memory");
    for (uint64_t j = 0; j < nc && st == HOG_OK; j++)
        seq[j] = j;
    if (st == HOG_OK)
        st = hog_stream_push(s, seq, nc, err);
    uint64_t taken = 0;
    for (; taken < nc && st == HOG_OK; taken++) {
        struct hog_stream_chunk c;
        if ((st = hog_stream_next(s, &c, err)) != HOG_OK)
            break;
        /* the chunk's own classes, merged into the list in their order */
        hog_data view;
        memset(&view, 0, sizeof view);
        view.m = c.m;
        double *mine;
        uint32_t km;
        st = hog_data_classes(&view, max, &mine, &km, err);
        bool got = st == HOG_OK;
        const uint32_t before = n; /* the classes ix holds */
        for (uint32_t i = 0; st == HOG_OK && i < km; i++) {
            if (before && hog_class_index_find(&ix, mine[i]) >= 0)
                continue;
            if (n == max) {
                st = hog_errf(err, HOG_EINVAL, "the labels take more than %u "
                              "distinct values: too many classes for a "
                              "classification loss; for a regression "
                              "target use --loss squared", max);
                break;
            }
            double *g = realloc(cl, (n + 1) * sizeof *cl);
            uint64_t *u = realloc(cnt, (n + 1) * sizeof *cnt);
            if (g)
                cl = g;
            if (u)
                cnt = u;
            if (!g || !u) {
                st = hog_errf(err, HOG_ENOMEM, "out of memory for %u classes",
                              n + 1);
                break;
            }
            cl[n] = mine[i];
            cnt[n++] = 0;
        }
        if (got)
            free(mine);
        /* the index of the classes so far, rebuilt when the chunk brought
         * new ones (the chunk's classes are distinct: the lookups above
         * need only the older ones) */
        if (st == HOG_OK && n > before) {
            hog_class_index_free(&ix);
            st = hog_class_index_init(&ix, cl, n, err);
        }
        for (uint64_t i = 0; st == HOG_OK && i < c.m.rows; i++)
            cnt[hog_class_index_find(&ix, c.m.y[i])]++;
        hog_stream_release(s, c.slot);
    }
    /* a failure part way leaves chunks queued: the caller closes the
     * stream, which drops them */
    hog_class_index_free(&ix);
    free(seq);
    if (st != HOG_OK) {
        free(cl);
        free(cnt);
        return st;
    }
    char doubt[400];
    if (hog_train_classes_doubt(cl, cnt, n, doubt, sizeof doubt))
        hog_train_notice(h, doubt);
    *labels = cl;
    *rows = cnt;
    *k = n;
    return HOG_OK;
}
