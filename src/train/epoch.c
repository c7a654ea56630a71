/*
 * The hooks the algorithms call (struct hog_fit): the progress ticks
 * within an epoch and, after each, the divergence check, the validation
 * set and early stopping on it, the training and test metrics (outside
 * the timed part) and the progress report; and the front door's part of
 * a run around them.
 */
#include "train/train.h"

#include "core/fit.h"
#include "core/metrics.h"

#include <math.h>
#include <string.h>

void hog_train_tick(struct hog_fit *f, unsigned epoch, uint64_t done,
                    uint64_t total)
{
    struct hog_front *c = f->ctx;
    if (!f->hooks.progress || done >= total)
        return;
    double now = hog_now();
    if (now < c->next_tick)
        return;
    c->next_tick = now + 0.1;
    f->hooks.progress(f->hooks.progress_ctx, epoch, f->o->epochs, done, total,
                      NULL);
}

hog_status hog_train_epoch_end(struct hog_fit *f, unsigned epoch,
                               double seconds, hog_err *err)
{
    struct hog_front *c = f->ctx;
    const hog_data *d = f->train;
    c->total_seconds += seconds;
    c->next_tick = hog_now() + 0.1;
    uint64_t nw = hog_model_len(f->model);
    for (uint64_t j = 0; j < nw; j++)
        if (!isfinite(f->model->w[j]))
            return hog_errf(err, HOG_ERANGE,
                            "training diverged in epoch %u (weight %llu is "
                            "%g); use a smaller step size than eta = %g",
                            epoch, (unsigned long long)j, f->model->w[j],
                            f->o->eta);
    /* The validation set first: early stopping needs it whether or not
     * anyone listens, and the last epoch gets the full metrics below. */
    struct hog_metrics vm;
    bool stop = false;
    hog_status st;
    if (c->valid && c->watch) {
        st = hog_metrics_eval_threads(f->model, c->valid, f->o->threads, &vm,
                                      err);
        if (st != HOG_OK)
            return st;
        stop = hog_early_step(&c->early, epoch, vm.loss, f->model->w);
    }
    const hog_status done = stop ? HOG_FIT_STOP : HOG_OK;
    if (!f->hooks.progress)
        return done; /* nobody listens: no metrics to compute */

    hog_epoch_stats s;
    memset(&s, 0, sizeof s);
    s.size = sizeof s;
    s.epoch = epoch;
    s.seconds = seconds;
    s.total_seconds = c->total_seconds;
    /* The data's rows and nonzeros, each once per epoch, whatever the
     * class count: a row steps K classes at once, which is the kernel's
     * business, not the rate a reader compares with the row count.
     * One-vs-rest's one report covers every class's epochs: the mean
     * epochs a class ran (its stopping rule may end some early). */
    const hog_model *md = f->model;
    double per = md->n_classes && md->multiclass == HOG_MULTICLASS_OVR
                     ? (double)f->class_epochs / md->n_classes
                     : 1.0;
    s.rows_per_s = seconds > 0 ? per * (double)d->m.rows / seconds : NAN;
    /* the crossed features count: they are the entries the kernel ran */
    double nnz = d->m.ns ? (double)d->cross_nnz : (double)d->m.nnz;
    s.nnz_per_s = seconds > 0 ? per * nnz / seconds : NAN;
    s.nonzero_weights = hog_model_nonzeros(f->model);
    s.replica_syncs = f->replica_syncs;
    s.gap = f->gap;
    s.aux_bytes = f->aux_bytes;
    s.converged = f->converged;

    struct hog_metrics m;
    /* The exact pass over the training set (mean loss, accuracy, AUC)
     * every metrics_every-th epoch and after the last. Between them an
     * algorithm that keeps its own objective and mean loss (coordinate
     * descent) reports those, and the SGD trainers that score each row
     * before its step report the progressive loss and accuracy (on every
     * epoch: they cost a loss per row); a trainer with neither reports no
     * training metrics there. metrics_every 0: after the last only with
     * figures of the algorithm's own, else every epoch. */
    const bool own = isfinite(f->objective);
    unsigned every = f->o->metrics_every ? f->o->metrics_every
                                         : !(own || isfinite(f->prog_loss));
    bool last = f->last || epoch == f->o->epochs || stop;
    bool full = last || (every && epoch % every == 0);
    s.objective = s.train_loss = s.train_accuracy = s.train_auc =
        s.train_rmse = NAN;
    s.train_macro_f1 = s.test_macro_f1 = NAN;
    s.classes = f->model->n_classes;
    s.classes_done = f->model->n_classes;
    s.progressive_loss = f->prog_loss;
    s.progressive_accuracy = f->prog_accuracy;
    if (!full && own) {
        s.objective = f->objective;
        s.train_loss = f->mean_loss;
        if (f->o->loss == HOG_LOSS_SQUARED) /* loss (m - y)^2 / 2 */
            s.train_rmse = sqrt(2.0 * f->mean_loss);
    } else if (!full || f->stream) {
        /* Streamed: the training set is not in memory; its metrics would
         * cost a second pass over the disk each epoch. */
    } else {
        st = hog_metrics_eval_threads(f->model, d, f->o->threads, &m, err);
        if (st != HOG_OK)
            return st;
        s.objective = m.obj_loss + hog_model_regularizer(f->model);
        s.train_loss = m.loss;
        s.train_accuracy = m.accuracy;
        s.train_auc = m.auc;
        s.train_rmse = m.rmse;
        s.train_macro_f1 = m.macro_f1;
        if (own && f->hooks.reduce) {
            /* solved across processes: the objective of every rank's
             * rows, as the solver knows it; this rank's rows would give
             * another (the accuracy and AUC stay this rank's) */
            s.objective = f->objective;
            s.train_loss = f->mean_loss;
        }
    }
    s.test_loss = s.test_accuracy = s.test_auc = s.test_rmse = NAN;

    if (c->test) {
        st = hog_metrics_eval_threads(f->model, c->test, f->o->threads, &m,
                                      err);
        if (st != HOG_OK)
            return st;
        s.has_test = 1;
        s.test_loss = m.loss;
        s.test_accuracy = m.accuracy;
        s.test_auc = m.auc;
        s.test_rmse = m.rmse;
        s.test_macro_f1 = m.macro_f1;
        s.test_unknown_labels = m.unknown;
    }
    s.valid_loss = s.valid_accuracy = s.valid_auc = s.valid_rmse =
        s.valid_macro_f1 = NAN;
    if (c->valid && c->watch) {
        s.has_valid = 1;
        s.valid_loss = vm.loss;
        s.valid_accuracy = vm.accuracy;
        s.valid_auc = vm.auc;
        s.valid_rmse = vm.rmse;
        s.valid_macro_f1 = vm.macro_f1;
        s.best_epoch = c->early.best_epoch;
    }
    f->objective = f->mean_loss = f->prog_loss = f->prog_accuracy = NAN;
    f->hooks.progress(f->hooks.progress_ctx, epoch, f->o->epochs, d->m.rows,
                      d->m.rows, &s);
    return done;
}

/* The front door's part of a run of model m: the test and validation
 * sets, early stopping. */
hog_status hog_train_front_begin(struct hog_front *c, const struct hog_fit *f,
                                 const hog_data *test, hog_err *err)
{
    const hog_train_opts *o = f->o;
    const hog_model *m = f->model;
    memset(c, 0, sizeof *c);
    c->test = test;
    c->next_tick = hog_now() + 0.1;
    c->valid = o->validation;
    c->watch = c->valid && (f->hooks.progress || o->early_stop ||
                            f->hooks.valid_stats);
    bool ovr = m->n_classes && m->multiclass == HOG_MULTICLASS_OVR;
    return hog_early_init(&c->early, ovr ? 0 : o->early_stop,
                          hog_model_len(m), err);
}

/* After the algorithm: early stopping's stop is a success, the best
 * epoch's weights go back into the model, and valid_stats is filled. */
hog_status hog_train_front_end(struct hog_front *c, hog_status st,
                               const struct hog_fit *f, uint64_t train_rows)
{
    const hog_train_opts *o = f->o;
    hog_model *m = f->model;
    if (st == HOG_FIT_STOP)
        st = HOG_OK;
    if (st == HOG_OK)
        hog_early_restore(&c->early, m->w);
    if (st == HOG_OK && f->hooks.valid_stats) {
        hog_valid_stats *v = f->hooks.valid_stats;
        bool ovr = m->n_classes && m->multiclass == HOG_MULTICLASS_OVR;
        memset(v, 0, sizeof *v);
        v->rows = c->valid ? c->valid->m.rows : 0;
        v->train_rows = train_rows;
        v->epochs_run = !ovr ? c->early.epochs
                        : c->ovr.epochs_run ? c->ovr.epochs_run
                                            : o->epochs;
        v->best_epoch = ovr && o->early_stop ? c->ovr.best_epoch
                                             : c->early.best_epoch;
        v->best_loss = c->early.best_epoch ? c->early.best_loss : NAN;
        v->early_stopped = ovr ? c->ovr.early_stopped : c->early.stopped;
        v->classes_stopped = c->ovr.classes_stopped;
    }
    hog_early_free(&c->early);
    return st;
}
