/*
 * search_C(): hog_search_C, the GIL released. train(): hog_train on a
 * worker thread while the calling thread waits
 * with the GIL released, taking it back every 50 ms for signal handlers
 * and the progress callback (_hogtrain.c says why); the options from a
 * dict.
 */
#include "_hogtrain.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What the worker thread and the waiting caller share. */
struct train_job {
    const hog_data *train;
    hog_train_opts o;
    hog_train_hooks h;         /* progress and cancel */
    hog_auto_stats autos;      /* what --algo auto chose */
    hog_model *model;
    hog_status st;
    hog_err err;
    volatile sig_atomic_t cancel;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;                  /* under mu */
    hog_epoch_stats *epochs;   /* under mu: the stats reported so far */
    unsigned n_epochs, cap_epochs;
    int epochs_oom;
};

/* Called by training (any thread, GIL not held): keeps the epoch's stats
 * for the caller to hand to Python. */
static void train_progress(void *ctx, unsigned epoch, unsigned epochs,
                           uint64_t done, uint64_t total,
                           const hog_epoch_stats *stats)
{
    struct train_job *j = ctx;
    if (!stats)
        return;
    pthread_mutex_lock(&j->mu);
    if (j->n_epochs == j->cap_epochs) {
        unsigned cap = j->cap_epochs ? 2 * j->cap_epochs : 16;
        hog_epoch_stats *p = realloc(j->epochs, cap * sizeof *p);
        if (p)
            j->epochs = p, j->cap_epochs = cap;
        else
            j->epochs_oom = 1;
    }
    if (j->n_epochs < j->cap_epochs)
        j->epochs[j->n_epochs++] = *stats;
    pthread_mutex_unlock(&j->mu);
}

static void *train_worker(void *arg)
{
    struct train_job *j = arg;
    j->st = hog_train(j->train, NULL, &j->o, &j->h, &j->model, &j->err);
    pthread_mutex_lock(&j->mu);
    j->done = 1;
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

static PyObject *epoch_dict(const hog_epoch_stats *s)
{
    return Py_BuildValue("{s:I,s:d,s:d,s:d,s:d,s:d,s:d,s:K,s:d,s:d,s:d,s:d,"
                         "s:i,s:I,s:d,s:d}",
                         "epoch", s->epoch, "objective", s->objective,
                         "train_loss", s->train_loss,
                         "train_accuracy", s->train_accuracy,
                         "train_auc", s->train_auc,
                         "train_rmse", s->train_rmse,
                         "train_macro_f1", s->train_macro_f1,
                         "nonzero_weights",
                         (unsigned long long)s->nonzero_weights,
                         "seconds", s->seconds,
                         "total_seconds", s->total_seconds,
                         "rows_per_s", s->rows_per_s, "gap", s->gap,
                         "converged", s->converged,
                         "classes_done", s->classes_done,
                         "progressive_loss", s->progressive_loss,
                         "progressive_accuracy", s->progressive_accuracy);
}

/* Hands the epochs reported since *sent to progress (GIL held); -1 when
 * the callback raised. */
static int drain_epochs(struct train_job *j, unsigned *sent,
                        PyObject *progress)
{
    for (;;) {
        hog_epoch_stats s;
        pthread_mutex_lock(&j->mu);
        int have = *sent < j->n_epochs;
        if (have)
            s = j->epochs[(*sent)++];
        pthread_mutex_unlock(&j->mu);
        if (!have)
            return 0;
        PyObject *d = epoch_dict(&s);
        PyObject *r = d ? PyObject_CallOneArg(progress, d) : NULL;
        Py_XDECREF(d);
        if (!r)
            return -1;
        Py_DECREF(r);
    }
}

/* opts dict -> hog_train_opts: each key a field of the library's options'
 * table (hog_train_options), converted by its row's type; the ranges are
 * the library's to check (hog_train_opts_resolve, in hog_train). */
static const hog_train_option *option_row(const char *name)
{
    size_t n;
    const hog_train_option *rows = hog_train_options(&n);
    for (size_t i = 0; name && i < n; i++)
        if (strcmp(rows[i].field, name) == 0)
            return &rows[i];
    return NULL;
}

int set_opts(hog_train_opts *o, PyObject *dict)
{
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(dict, &pos, &k, &v)) {
        const char *name = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
        const hog_train_option *r = option_row(name);
        if (!r) {
            PyErr_Format(PyExc_ValueError, "unknown training option %R", k);
            return -1;
        }
        char *p = (char *)o + r->offset;
        if (r->type == HOG_OPTION_DOUBLE) {
            double x = PyFloat_AsDouble(v);
            if (x == -1.0 && PyErr_Occurred())
                return -1;
            memcpy(p, &x, sizeof x);
            continue;
        }
        bool is_signed = r->type == HOG_OPTION_ENUM ||
                         r->type == HOG_OPTION_BOOL;
        unsigned long long u = 0;
        long long s = 0;
        if (is_signed)
            s = PyLong_AsLongLong(v);
        else
            u = PyLong_AsUnsignedLongLong(v);
        if (PyErr_Occurred()) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "the training option '%s' must be "
                         "%s integer (got %R)", name,
                         is_signed ? "an" : "a non-negative", v);
            return -1;
        }
        if (is_signed) {
            int x = s < INT_MIN ? INT_MIN : s > INT_MAX ? INT_MAX : (int)s;
            memcpy(p, &x, sizeof x); /* enums and ints alike */
        } else if (r->type == HOG_OPTION_UNSIGNED) {
            if (u > UINT32_MAX) {
                PyErr_Format(PyExc_ValueError, "the training option '%s' is "
                             "too large", name);
                return -1;
            }
            unsigned x = (unsigned)u;
            memcpy(p, &x, sizeof x);
        } else {
            uint64_t x = u;
            memcpy(p, &x, sizeof x);
        }
    }
    return 0;
}

/* A row's value in o, as Python sees it. */
static PyObject *option_value(const hog_train_opts *o,
                              const hog_train_option *r)
{
    const char *p = (const char *)o + r->offset;
    switch (r->type) {
    case HOG_OPTION_DOUBLE: {
        double x;
        memcpy(&x, p, sizeof x);
        return PyFloat_FromDouble(x);
    }
    case HOG_OPTION_UNSIGNED: {
        unsigned x;
        memcpy(&x, p, sizeof x);
        return PyLong_FromUnsignedLong(x);
    }
    case HOG_OPTION_U64: {
        uint64_t x;
        memcpy(&x, p, sizeof x);
        return PyLong_FromUnsignedLongLong(x);
    }
    case HOG_OPTION_ENUM:
    case HOG_OPTION_BOOL:
        break;
    }
    int x;
    memcpy(&x, p, sizeof x);
    return PyLong_FromLong(x);
}

PyDoc_STRVAR(resolve_doc,
"resolve(opts) -> dict\n\n"
"The options hog_train would train with for the dict opts (hog_train_opts\n"
"field names): hog_train_opts_init, opts, then hog_train_opts_resolve;\n"
"every row of the options' table by field name. ValueError with the\n"
"library's sentence for a value out of range.");

static PyObject *mod_resolve(PyObject *mod, PyObject *opts)
{
    (void)mod;
    if (!PyDict_Check(opts))
        return PyErr_Format(PyExc_TypeError, "opts must be a dict");
    hog_train_opts o;
    hog_train_opts_init(&o);
    if (set_opts(&o, opts) < 0)
        return NULL;
    hog_err err;
    hog_status st = hog_train_opts_resolve(&o, NULL, &err);
    if (st != HOG_OK)
        return raise_status(st, &err, NULL);
    size_t n;
    const hog_train_option *rows = hog_train_options(&n);
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i < n; i++) {
        PyObject *v = option_value(&o, &rows[i]);
        if (!v || PyDict_SetItemString(d, rows[i].field, v) < 0)
            Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

PyDoc_STRVAR(options_doc,
"options() -> list of dict\n\n"
"The library's options' table (hog_train_options): per row its field,\n"
"Python parameter (None: none), command flag, type name, min, max,\n"
"above_min, below_max and default.");

static PyObject *mod_options(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    static const char *const types[] = { "double", "unsigned", "u64", "enum",
                                         "bool" };
    size_t n;
    const hog_train_option *rows = hog_train_options(&n);
    PyObject *list = PyList_New(0);
    for (size_t i = 0; list && i < n; i++) {
        const hog_train_option *r = &rows[i];
        PyObject *d = Py_BuildValue(
            "{s:s,s:z,s:z,s:s,s:d,s:d,s:O,s:O,s:d}", "field", r->field,
            "python", r->python, "flag", r->flag, "type", types[r->type],
            "min", r->min, "max", r->max, "above_min",
            r->above_min ? Py_True : Py_False, "below_max",
            r->below_max ? Py_True : Py_False, "default", r->def);
        if (!d || PyList_Append(list, d) < 0)
            Py_CLEAR(list);
        Py_XDECREF(d);
    }
    return list;
}

/* The weights a training takes beside its options (train's and
 * search_C's), held while it runs. */
struct weights {
    Py_buffer rows, labels, values;
};

static void weights_release(struct weights *w)
{
    Py_buffer *b[] = { &w->rows, &w->labels, &w->values };
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++)
        if (b[i]->obj)
            PyBuffer_Release(b[i]);
}

/* row_weights: float32, one per row of d; class_labels and class_weights:
 * float64 of one length; each None or a buffer. Set into o; -1 with an
 * exception (the caller releases w either way). */
static int weights_get(hog_train_opts *o, const hog_data *d, PyObject *rw,
                       PyObject *cl, PyObject *cw, struct weights *w)
{
    if (get_buffer(rw, &w->rows, "the sample weights") < 0 ||
        get_buffer(cl, &w->labels, "the class labels") < 0 ||
        get_buffer(cw, &w->values, "the class weights") < 0)
        return -1;
    if (w->rows.obj) {
        if (buffer_dtype(&w->rows, "the sample weights") != HOG_DTYPE_FLOAT32 ||
            buffer_len(&w->rows) != hog_data_rows(d)) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "the sample weights must be "
                             "%llu float32 numbers, one per row",
                             (unsigned long long)hog_data_rows(d));
            return -1;
        }
        o->row_weights = w->rows.buf;
    }
    if (w->labels.obj || w->values.obj) {
        if (!w->labels.obj || !w->values.obj ||
            buffer_dtype(&w->labels, "the class labels") != HOG_DTYPE_FLOAT64 ||
            buffer_dtype(&w->values, "the class weights") != HOG_DTYPE_FLOAT64 ||
            buffer_len(&w->labels) != buffer_len(&w->values)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "class labels and class "
                                "weights: two float64 arrays of one length");
            return -1;
        }
        o->class_weight_labels = w->labels.buf;
        o->class_weight_values = w->values.buf;
        o->n_class_weights = (unsigned)buffer_len(&w->labels);
    }
    return 0;
}

/* What auto chose, into the caller's dict d (its names as the command's
 * JSON report's options.auto). */
static int chose_fill(PyObject *d, const hog_auto_stats *a)
{
    PyObject *v = Py_BuildValue(
        "{s:s,s:s,s:I,s:s}", "algo",
        a->algo == HOG_ALGO_HOGWILD ? "hogwild" : "serial", "replicas",
        a->replicas == HOG_REPLICAS_CORE ? "core" : "shared", "threads",
        a->threads, "why", a->why);
    int rc = v ? PyDict_Update(d, v) : -1;
    Py_XDECREF(v);
    return rc;
}

PyDoc_STRVAR(train_doc,
"train(data, opts, row_weights=None, class_labels=None, class_weights=None,\n"
"      warm_start=None, progress=None, classes=None, chose=None) -> Model\n\n"
"hog_train on data with the options of the dict opts (hog_train_opts\n"
"field names; the rest the library's defaults). row_weights:\n"
"float32, one per row. class_labels/class_weights: float64 sequences of\n"
"equal length. warm_start: a Model to start from. progress: called with\n"
"a dict of each epoch's stats, on the calling thread. classes: float64\n"
"labels, K >= 3, the model's classes in this order (hog_train_opts.classes).\n"
"chose: a dict, given algo, replicas, threads and why when the algorithm\n"
"was auto's to choose (hog_auto_stats).\n"
"The GIL is released;\n"
"Ctrl-C (any signal handler raising) cancels training and raises.");

static PyObject *mod_train(PyObject *mod, PyObject *args, PyObject *kw)
{
    static char *names[] = { "data", "opts", "row_weights", "class_labels",
                             "class_weights", "warm_start", "progress",
                             "classes", "chose", NULL };
    DataObject *data;
    PyObject *opts, *rw = Py_None, *cl = Py_None, *cw = Py_None,
             *warm = Py_None, *progress = Py_None, *classes = Py_None,
             *chose = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O!|OOOOOOO", names,
                                     &DataType, &data, &PyDict_Type, &opts,
                                     &rw, &cl, &cw, &warm, &progress,
                                     &classes, &chose))
        return NULL;
    if (chose != Py_None && !PyDict_Check(chose))
        return PyErr_Format(PyExc_TypeError, "chose must be a dict");
    if (data_usable(data) < 0)
        return NULL;
    if (warm != Py_None && !PyObject_TypeCheck(warm, &ModelType))
        return PyErr_Format(PyExc_TypeError, "warm_start must be a Model");
    if (progress != Py_None && !PyCallable_Check(progress))
        return PyErr_Format(PyExc_TypeError, "progress must be callable");

    struct train_job *j = calloc(1, sizeof *j);
    if (!j)
        return PyErr_NoMemory();
    hog_train_opts_init(&j->o);
    struct weights in = { 0 };
    Py_buffer bk = { 0 };
    PyObject *result = NULL;
    if (set_opts(&j->o, opts) < 0)
        goto out;
    if (weights_get(&j->o, data->d, rw, cl, cw, &in) < 0 ||
        get_buffer(classes, &bk, "the classes") < 0)
        goto out;
    if (bk.obj) {
        if (buffer_dtype(&bk, "the classes") != HOG_DTYPE_FLOAT64) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "classes: a float64 array");
            goto out;
        }
        j->o.classes = bk.buf;
        j->o.n_classes = (unsigned)buffer_len(&bk);
    }
    if (warm != Py_None)
        j->o.warm_start = ((ModelObject *)warm)->m;
    j->autos = (hog_auto_stats){ .size = sizeof j->autos };
    j->h = (hog_train_hooks){ .size = sizeof j->h, .cancel = &j->cancel,
                              .auto_stats = &j->autos };
    if (progress != Py_None) {
        j->h.progress = train_progress;
        j->h.progress_ctx = j;
    }
    j->train = data->d;
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);

    pthread_t tid;
    int rc = pthread_create(&tid, NULL, train_worker, j);
    if (rc != 0) {
        PyErr_Format(PyExc_RuntimeError, "cannot start the training thread: "
                     "%s", strerror(rc));
        goto destroy;
    }
    /* Wait with the GIL released; every 50 ms take it back for signal
     * handlers (KeyboardInterrupt) and the progress callback. */
    unsigned sent = 0;
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&j->mu);
    while (!j->done) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L)
            ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&j->cv, &j->mu, &ts);
        if (j->done || failed)
            continue;
        pthread_mutex_unlock(&j->mu);
        Py_BLOCK_THREADS
        if (PyErr_CheckSignals() < 0 ||
            (progress != Py_None && drain_epochs(j, &sent, progress) < 0)) {
            failed = 1;
            j->cancel = 1; /* training stops at its next poll */
        }
        Py_UNBLOCK_THREADS
        pthread_mutex_lock(&j->mu);
    }
    pthread_mutex_unlock(&j->mu);
    Py_END_ALLOW_THREADS
    pthread_join(tid, NULL);
    if (!failed && progress != Py_None && drain_epochs(j, &sent, progress) < 0)
        failed = 1;
    if (failed) {
        /* the pending exception (KeyboardInterrupt, or the callback's) */
        hog_model_free(j->model);
    } else if (j->st != HOG_OK) {
        raise_status(j->st, &j->err, NULL);
    } else if (chose != Py_None && j->autos.chosen &&
               chose_fill(chose, &j->autos) < 0) {
        hog_model_free(j->model);
    } else {
        result = model_wrap(j->model);
    }
destroy:
    pthread_cond_destroy(&j->cv);
    pthread_mutex_destroy(&j->mu);
out:
    weights_release(&in);
    if (bk.obj)
        PyBuffer_Release(&bk);
    free(j->epochs);
    free(j);
    return result;
}

PyDoc_STRVAR(search_C_doc,
"search_C(data, opts, folds, C_min=0, C_max=0, ratio=0, patience=-1,\n"
"         row_weights=None, class_labels=None, class_weights=None) -> dict\n\n"
"hog_search_C, the command's --search-C: `folds`-fold cross-validation of\n"
"opts (as train's) over C = C_min, C_min ratio, ... up to C_max, stopping\n"
"after `patience` values of C without a gain (0 or less for C_min, C_max\n"
"and ratio, and a negative patience: the library's defaults). A dict:\n"
"best_C, best (the index of its step), stopped_early, seconds and steps,\n"
"a list of dicts (C, l1, l2, accuracy, accuracy_sd, auc, rmse, macro_f1,\n"
"seconds, warm). The GIL is released; it cannot be interrupted.");

static PyObject *step_dict(const hog_search_step *s)
{
    return Py_BuildValue("{s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:O}",
                         "C", s->C, "l1", s->l1, "l2", s->l2,
                         "accuracy", s->accuracy,
                         "accuracy_sd", s->accuracy_sd, "auc", s->auc,
                         "rmse", s->rmse, "macro_f1", s->macro_f1,
                         "seconds", s->seconds,
                         "warm", s->warm ? Py_True : Py_False);
}

static PyObject *mod_search_C(PyObject *mod, PyObject *args, PyObject *kw)
{
    static char *names[] = { "data", "opts", "folds", "C_min", "C_max",
                             "ratio", "patience", "row_weights",
                             "class_labels", "class_weights", NULL };
    DataObject *data;
    PyObject *opts, *rw = Py_None, *cl = Py_None, *cw = Py_None;
    unsigned folds;
    double c_min = 0, c_max = 0, ratio = 0;
    int patience = -1;
    (void)mod;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O!I|dddiOOO", names,
                                     &DataType, &data, &PyDict_Type, &opts,
                                     &folds, &c_min, &c_max, &ratio,
                                     &patience, &rw, &cl, &cw))
        return NULL;
    if (data_usable(data) < 0)
        return NULL;
    hog_train_opts o;
    hog_train_opts_init(&o);
    hog_search_opts so;
    hog_search_opts_init(&so);
    if (c_min > 0)
        so.C_min = c_min;
    if (c_max > 0)
        so.C_max = c_max;
    if (ratio > 0)
        so.ratio = ratio;
    if (patience >= 0)
        so.patience = (unsigned)patience;
    struct weights in = { 0 };
    hog_search_step *steps = calloc(HOG_SEARCH_MAX_STEPS, sizeof *steps);
    PyObject *result = NULL;
    if (!steps) {
        PyErr_NoMemory();
        goto out;
    }
    if (set_opts(&o, opts) < 0 ||
        weights_get(&o, data->d, rw, cl, cw, &in) < 0)
        goto out;
    hog_search_result r = { .size = sizeof r, .step = steps,
                            .step_cap = HOG_SEARCH_MAX_STEPS };
    hog_err err;
    hog_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hog_search_C(data->d, &o, NULL, folds, &so, &r, &err);
    Py_END_ALLOW_THREADS
    if (st != HOG_OK) {
        raise_status(st, &err, NULL);
        goto out;
    }
    PyObject *list = PyList_New(0);
    unsigned n = r.steps < r.step_cap ? r.steps : r.step_cap;
    for (unsigned i = 0; list && i < n; i++) {
        PyObject *d = step_dict(&steps[i]);
        if (!d || PyList_Append(list, d) < 0)
            Py_CLEAR(list);
        Py_XDECREF(d);
    }
    if (list)
        result = Py_BuildValue("{s:d,s:I,s:O,s:d,s:N}", "best_C", r.best_C,
                               "best", r.best, "stopped_early",
                               r.stopped_early ? Py_True : Py_False,
                               "seconds", r.seconds, "steps", list);
out:
    weights_release(&in);
    free(steps);
    return result;
}

PyMethodDef hogpy_train_functions[] = {
    { "train", (PyCFunction)(void (*)(void))mod_train,
      METH_VARARGS | METH_KEYWORDS, train_doc },
    { "search_C", (PyCFunction)(void (*)(void))mod_search_C,
      METH_VARARGS | METH_KEYWORDS, search_C_doc },
    { "resolve", (PyCFunction)mod_resolve, METH_O, resolve_doc },
    { "options", (PyCFunction)mod_options, METH_NOARGS, options_doc },
    { NULL, NULL, 0, NULL }
};
