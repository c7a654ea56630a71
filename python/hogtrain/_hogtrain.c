/*
 * hogtrain._hogtrain: the CPython extension over libhogtrain's public API
 * (include/hogtrain.h), as the command is: data in from the caller's CSR
 * arrays or from a file, training, scores and probabilities, models out
 * and in with or without a file. The estimators (the .py files beside this one)
 * are written in Python over this module.
 *
 * Arrays cross through the buffer protocol (PEP 3118), not numpy's C API:
 * the module needs Python.h only, and any contiguous buffer (numpy arrays,
 * memmaps, array.array) is taken in place. Arrays going out (a loaded
 * file's CSR matrix) are exported the same way by small View objects that
 * keep the Data they point into alive; Python wraps them with
 * numpy.frombuffer, so a numpy array's base owns the hog_data.
 *
 * The GIL is released while data is checked, parsed, trained on and
 * scored. Training runs on a worker thread while the calling thread waits
 * on a condition variable with a timeout, taking the GIL back at each
 * timeout to run signal handlers (PyErr_CheckSignals) and the progress
 * callback: a Ctrl-C sets hogtrain's cancel flag, the worker's training
 * returns HOG_EINTR at its next poll, the worker is joined, and the
 * KeyboardInterrupt propagates; no thread outlives the call.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "hogtrain.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

PyMODINIT_FUNC PyInit__hogtrain(void);

/* ---- errors -------------------------------------------------------------- */

/* hogtrain's sentence as the Python exception its status means. */
static PyObject *raise_status(hog_status st, const hog_err *err,
                              const char *path)
{
    const char *msg = err->msg[0] ? err->msg : hog_status_str(st);
    switch (st) {
    case HOG_ENOMEM:
        PyErr_SetString(PyExc_MemoryError, msg);
        break;
    case HOG_EIO: {
        PyObject *e = path ? PyObject_CallFunction(PyExc_OSError, "iss", EIO,
                                                   msg, path)
                           : PyObject_CallFunction(PyExc_OSError, "is", EIO,
                                                   msg);
        if (e) {
            PyErr_SetObject((PyObject *)Py_TYPE(e), e);
            Py_DECREF(e);
        }
        break;
    }
    case HOG_EINTR:
        PyErr_SetString(PyExc_KeyboardInterrupt, msg);
        break;
    case HOG_ENET:
        PyErr_SetString(PyExc_ConnectionError, msg);
        break;
    case HOG_ETIMEDOUT:
        PyErr_SetString(PyExc_TimeoutError, msg);
        break;
    case HOG_EINVAL:
    case HOG_EPARSE:
    case HOG_EFORMAT:
    case HOG_ECORRUPT:
    case HOG_ERANGE:
    case HOG_ENOTSUP:
        PyErr_SetString(PyExc_ValueError, msg);
        break;
    default:
        PyErr_SetString(PyExc_RuntimeError, msg);
    }
    return NULL;
}

/* ---- buffers in ------------------------------------------------------------ */

/* The hog_dtype of a one-dimensional contiguous buffer, or 0 with a
 * ValueError naming what (e.g. "the indices"). */
static hog_dtype buffer_dtype(const Py_buffer *b, const char *what)
{
    const char *f = b->format ? b->format : "B";
    if (*f == '@' || *f == '=' || *f == '<')
        f++;
    if (b->ndim != 1) {
        PyErr_Format(PyExc_ValueError, "%s must be a one-dimensional array "
                     "(this one has %d dimensions)", what, b->ndim);
        return 0;
    }
    if (f[0] && !f[1]) {
        bool sgn = strchr("bhilq", f[0]) != NULL;
        bool uns = strchr("BHILQ", f[0]) != NULL;
        if (f[0] == 'f' && b->itemsize == 4)
            return HOG_DTYPE_FLOAT32;
        if (f[0] == 'd' && b->itemsize == 8)
            return HOG_DTYPE_FLOAT64;
        if (sgn && b->itemsize == 4)
            return HOG_DTYPE_INT32;
        if (sgn && b->itemsize == 8)
            return HOG_DTYPE_INT64;
        if (uns && b->itemsize == 4)
            return HOG_DTYPE_UINT32;
        if (uns && b->itemsize == 8)
            return HOG_DTYPE_UINT64;
    }
    PyErr_Format(PyExc_ValueError, "%s have the element type '%s': hogtrain "
                 "takes 32- or 64-bit integers and 32- or 64-bit floats",
                 what, b->format ? b->format : "B");
    return 0;
}

/* obj's buffer, contiguous, read-only is fine; NULL obj or None: none. */
static int get_buffer(PyObject *obj, Py_buffer *b, const char *what)
{
    memset(b, 0, sizeof *b);
    if (!obj || obj == Py_None)
        return 0;
    if (PyObject_GetBuffer(obj, b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s must be a contiguous array "
                     "(got %s)", what, Py_TYPE(obj)->tp_name);
        return -1;
    }
    return 0;
}

static uint64_t buffer_len(const Py_buffer *b)
{
    return b->obj ? (uint64_t)(b->len / (b->itemsize ? b->itemsize : 1)) : 0;
}

/* Element i of an integer buffer of type t; *neg set when it is below
 * zero (a uint64 above INT64_MAX is not). */
static uint64_t int_elem(const Py_buffer *b, hog_dtype t, uint64_t i,
                         bool *neg)
{
    int64_t v;
    switch (t) {
    case HOG_DTYPE_INT32: v = ((const int32_t *)b->buf)[i]; break;
    case HOG_DTYPE_INT64: v = ((const int64_t *)b->buf)[i]; break;
    case HOG_DTYPE_UINT32:
        *neg = false;
        return ((const uint32_t *)b->buf)[i];
    default:
        *neg = false;
        return ((const uint64_t *)b->buf)[i];
    }
    *neg = v < 0;
    return (uint64_t)v;
}

/* ---- Data ------------------------------------------------------------------- */

/* A hog_data and the buffers it may borrow, held until it is freed. */
typedef struct {
    PyObject_HEAD
    hog_data *d;
    Py_buffer held[4]; /* indptr, indices, values, labels (obj NULL: none) */
    bool own;          /* loaded with hog_load_opts.own_arrays */
    bool handed_out;   /* its arrays exported writable: no longer used */
} DataObject;

static PyTypeObject DataType;

static void Data_dealloc(DataObject *self)
{
    hog_data_free(self->d); /* before the buffers it may point into */
    for (int i = 0; i < 4; i++)
        if (self->held[i].obj)
            PyBuffer_Release(&self->held[i]);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static DataObject *data_new(void)
{
    DataObject *self = PyObject_New(DataObject, &DataType);
    if (self) {
        self->d = NULL;
        memset(self->held, 0, sizeof self->held);
        self->own = self->handed_out = false;
    }
    return self;
}

PyDoc_STRVAR(Data_doc,
"Data(indptr, indices, values, labels, n_cols, threads=0)\n\n"
"A data set over a CSR matrix's arrays (hog_data_from_csr): used in place\n"
"where the types are hogtrain's (int64/uint64 indptr, int32/uint32\n"
"indices, float32 values and labels), converted once otherwise. values\n"
"None: every value 1; labels None: data to score. The arrays must not\n"
"change while the Data lives.");

static PyObject *Data_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = { "indptr", "indices", "values", "labels",
                             "n_cols", "threads", NULL };
    PyObject *o_ptr, *o_idx, *o_val, *o_y;
    unsigned long long cols;
    unsigned threads = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOK|I", names, &o_ptr,
                                     &o_idx, &o_val, &o_y, &cols, &threads))
        return NULL;
    DataObject *self = data_new();
    if (!self)
        return NULL;
    Py_buffer *b = self->held;
    static const char *what[4] = { "the row offsets (indptr)",
                                   "the feature indices", "the values",
                                   "the labels" };
    PyObject *objs[4] = { o_ptr, o_idx, o_val, o_y };
    hog_dtype t[4] = { 0 };
    for (int i = 0; i < 4; i++) {
        if (get_buffer(objs[i], &b[i], what[i]) < 0)
            goto fail;
        if (b[i].obj && !(t[i] = buffer_dtype(&b[i], what[i])))
            goto fail;
    }
    if (!b[0].obj || !b[1].obj) {
        PyErr_SetString(PyExc_ValueError, "a CSR matrix needs its row "
                        "offsets (indptr) and feature indices");
        goto fail;
    }
    if (t[0] == HOG_DTYPE_FLOAT32 || t[0] == HOG_DTYPE_FLOAT64 ||
        t[1] == HOG_DTYPE_FLOAT32 || t[1] == HOG_DTYPE_FLOAT64) {
        PyErr_SetString(PyExc_ValueError, "the row offsets (indptr) and the "
                        "feature indices must be integers");
        goto fail;
    }
    uint64_t n_ptr = buffer_len(&b[0]);
    if (n_ptr == 0) {
        PyErr_SetString(PyExc_ValueError, "the row offsets (indptr) are "
                        "empty: a CSR matrix of n rows has n + 1 of them");
        goto fail;
    }
    uint64_t rows = n_ptr - 1;
    /* hog_data_from_csr takes no lengths: it reads as many indices and
     * values as the last offset says, the offsets being non-decreasing
     * (which it checks, as a negative last one). Check that the buffers
     * hold that many; the earlier offsets are no larger. */
    bool neg;
    uint64_t nnz = int_elem(&b[0], t[0], rows, &neg);
    if (!neg && nnz > buffer_len(&b[1])) {
        PyErr_Format(PyExc_ValueError, "the row offsets end at %llu but "
                     "there are %llu feature indices",
                     (unsigned long long)nnz,
                     (unsigned long long)buffer_len(&b[1]));
        goto fail;
    }
    if (!neg && b[2].obj && nnz > buffer_len(&b[2])) {
        PyErr_Format(PyExc_ValueError, "the row offsets end at %llu but "
                     "there are %llu values", (unsigned long long)nnz,
                     (unsigned long long)buffer_len(&b[2]));
        goto fail;
    }
    if (b[3].obj && buffer_len(&b[3]) != rows) {
        PyErr_Format(PyExc_ValueError, "%llu labels for %llu rows: one label "
                     "per row", (unsigned long long)buffer_len(&b[3]),
                     (unsigned long long)rows);
        goto fail;
    }
    hog_csr_arrays a = {
        .size = sizeof a, .rows = rows, .cols = cols,
        .indptr = b[0].buf, .indptr_type = t[0],
        .indices = b[1].buf, .indices_type = t[1],
        .values = b[2].obj ? b[2].buf : NULL, .values_type = t[2],
        .labels = b[3].obj ? b[3].buf : NULL, .labels_type = t[3],
    };
    hog_err err = { { 0 } };
    hog_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hog_data_from_csr(&a, threads, &self->d, &err);
    Py_END_ALLOW_THREADS
    if (st != HOG_OK) {
        raise_status(st, &err, NULL);
        goto fail;
    }
    (void)type;
    return (PyObject *)self;
fail:
    Py_DECREF(self);
    return NULL;
}

static PyObject *Data_rows(DataObject *self, void *c)
{
    return PyLong_FromUnsignedLongLong(hog_data_rows(self->d));
}
static PyObject *Data_cols(DataObject *self, void *c)
{
    return PyLong_FromUnsignedLongLong(hog_data_features(self->d));
}
static PyObject *Data_nnz(DataObject *self, void *c)
{
    return PyLong_FromUnsignedLongLong(hog_data_nnz(self->d));
}
static PyObject *Data_borrowed(DataObject *self, void *c)
{
    return PyLong_FromUnsignedLong(hog_data_borrowed(self->d));
}

/* A Data whose arrays were handed out to be written (Data.arrays of a
 * loaded file) may hold anything now, and what the library learnt of it
 * at load (the labels' kinds) no longer holds: it is not used again. */
static int data_usable(const DataObject *d)
{
    if (!d->handed_out)
        return 0;
    PyErr_SetString(PyExc_ValueError, "this data set's arrays were handed "
                    "out to be changed (Data.arrays): make a data set of "
                    "them (hogtrain.as_data)");
    return -1;
}

/* ---- View: one of a Data's arrays, exported as a buffer ------------------ */

typedef struct {
    PyObject_HEAD
    PyObject *owner; /* the Data */
    void *ptr;
    Py_ssize_t n, itemsize;
    char format[2];
    Py_ssize_t shape, strides;
    bool writable; /* the data set's own memory, handed out */
} ViewObject;

static PyTypeObject ViewType;

static void View_dealloc(ViewObject *self)
{
    Py_XDECREF(self->owner);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int View_getbuffer(ViewObject *self, Py_buffer *view, int flags)
{
    if ((flags & PyBUF_WRITABLE) && !self->writable) {
        PyErr_SetString(PyExc_BufferError, "this data set's arrays are "
                        "read-only (copy them to change them)");
        view->obj = NULL;
        return -1;
    }
    static char empty[8];
    view->buf = self->n ? self->ptr : empty;
    view->obj = (PyObject *)self;
    Py_INCREF(self);
    view->len = self->n * self->itemsize;
    view->readonly = !self->writable;
    view->itemsize = self->itemsize;
    view->format = (flags & PyBUF_FORMAT) ? self->format : NULL;
    view->ndim = 1;
    view->shape = (flags & PyBUF_ND) ? &self->shape : NULL;
    view->strides = (flags & PyBUF_STRIDES) ? &self->strides : NULL;
    view->suboffsets = NULL;
    view->internal = NULL;
    return 0;
}

static PyBufferProcs View_as_buffer = {
    .bf_getbuffer = (getbufferproc)View_getbuffer,
};

static PyObject *view_new(PyObject *owner, const void *ptr, uint64_t n,
                          char format, Py_ssize_t itemsize, bool writable)
{
    ViewObject *v = PyObject_New(ViewObject, &ViewType);
    if (!v)
        return NULL;
    Py_INCREF(owner);
    v->owner = owner;
    v->ptr = (void *)ptr;
    v->n = (Py_ssize_t)n;
    v->itemsize = itemsize;
    v->format[0] = format;
    v->format[1] = 0;
    v->shape = v->n;
    v->strides = itemsize;
    v->writable = writable;
    return (PyObject *)v;
}

PyDoc_STRVAR(Data_arrays_doc,
"arrays() -> (indptr, indices, values, labels)\n\n"
"The data set's own CSR arrays as buffers (uint64 offsets, uint32\n"
"indices, float32 values and labels; values None when absent), each\n"
"keeping this Data alive: numpy.frombuffer wraps them without a copy.\n"
"Writable when the Data was loaded with own_arrays (the Data is then\n"
"not used again); read-only otherwise.");

static PyObject *Data_arrays(DataObject *self, PyObject *unused)
{
    const uint64_t *off;
    const uint32_t *idx;
    const float *val, *y;
    hog_data_csr(self->d, &off, &idx, &val, &y);
    uint64_t rows = hog_data_rows(self->d), nnz = hog_data_nnz(self->d);
    PyObject *o = (PyObject *)self;
    bool w = self->own;
    self->handed_out = self->handed_out || w;
    PyObject *p = view_new(o, off, rows + 1, 'Q', 8, w);
    PyObject *i = view_new(o, idx, nnz, 'I', 4, w);
    PyObject *v = val ? view_new(o, val, nnz, 'f', 4, w) : Py_NewRef(Py_None);
    PyObject *l = y ? view_new(o, y, rows, 'f', 4, w) : Py_NewRef(Py_None);
    PyObject *r = (p && i && v && l) ? PyTuple_Pack(4, p, i, v, l) : NULL;
    Py_XDECREF(p), Py_XDECREF(i), Py_XDECREF(v), Py_XDECREF(l);
    return r;
}

static PyGetSetDef Data_getset[] = {
    { "rows", (getter)Data_rows, NULL, "rows", NULL },
    { "cols", (getter)Data_cols, NULL, "features (columns)", NULL },
    { "nnz", (getter)Data_nnz, NULL, "nonzeros", NULL },
    { "borrowed", (getter)Data_borrowed, NULL,
      "the BORROW_ bits of the caller's arrays used in place "
      "(hog_data_borrowed)", NULL },
    { NULL, NULL, NULL, NULL, NULL }
};

static PyMethodDef Data_methods[] = {
    { "arrays", (PyCFunction)Data_arrays, METH_NOARGS, Data_arrays_doc },
    { NULL, NULL, 0, NULL }
};

PyDoc_STRVAR(load_doc,
"load(path, zero_based=False, threads=0, n_features=0, hash_bits=0,\n"
"     hash_seed=0, own_arrays=False) -> Data\n\n"
"LIBSVM/SVMlight or Vowpal Wabbit text (plain, gzip, xz or zstd) or a\n"
".hgb cache, told apart by content (hog_data_load); the GIL is released\n"
"while it parses. own_arrays: the arrays in memory of the data set's own\n"
"(hog_load_opts.own_arrays), which arrays() hands out writable.");

static PyObject *mod_load(PyObject *mod, PyObject *args, PyObject *kw)
{
    static char *names[] = { "path", "zero_based", "threads", "n_features",
                             "hash_bits", "hash_seed", "own_arrays", NULL };
    PyObject *po;
    int zero_based = 0, own = 0;
    unsigned threads = 0, bits = 0, seed = 0;
    unsigned long long nf = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|pIKIIp", names,
                                     PyUnicode_FSConverter, &po, &zero_based,
                                     &threads, &nf, &bits, &seed, &own))
        return NULL;
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    lo.zero_based = zero_based;
    lo.threads = threads;
    lo.n_features = nf;
    lo.hash_bits = bits;
    lo.hash_seed = seed;
    lo.own_arrays = own;
    const char *path = PyBytes_AS_STRING(po);
    DataObject *self = data_new();
    if (!self) {
        Py_DECREF(po);
        return NULL;
    }
    hog_err err = { { 0 } };
    hog_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hog_data_load(path, &lo, &self->d, &err);
    Py_END_ALLOW_THREADS
    if (st != HOG_OK) {
        raise_status(st, &err, path);
        Py_DECREF(self);
        self = NULL;
    } else {
        self->own = own;
    }
    Py_DECREF(po);
    return (PyObject *)self;
}

/* ---- Model ----------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    hog_model *m;
} ModelObject;

static PyTypeObject ModelType;

static void Model_dealloc(ModelObject *self)
{
    hog_model_free(self->m);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *model_wrap(hog_model *m)
{
    ModelObject *self = PyObject_New(ModelObject, &ModelType);
    if (!self) {
        hog_model_free(m);
        return NULL;
    }
    self->m = m;
    return (PyObject *)self;
}

static uint64_t model_len(const hog_model *m)
{
    hog_model_spec s = { .size = sizeof s };
    hog_model_describe(m, &s);
    uint64_t per = s.n_features + (s.bias != 0.0);
    return per * (s.n_classes ? s.n_classes : 1);
}

PyDoc_STRVAR(Model_describe_doc,
"describe() -> dict: the model's hog_model_spec (n_features, loss, bias,\n"
"regression, label_pos, label_neg, n_classes, classes, multiclass, l1,\n"
"l2, hash_bits, hash_seed, interactions: \"ab,cd\" or None).");

static PyObject *Model_describe(ModelObject *self, PyObject *unused)
{
    hog_model_spec s = { .size = sizeof s };
    hog_model_describe(self->m, &s);
    PyObject *classes = PyTuple_New(s.n_classes);
    if (!classes)
        return NULL;
    for (unsigned c = 0; c < s.n_classes; c++) {
        PyObject *v = PyFloat_FromDouble(s.classes[c]);
        if (!v) {
            Py_DECREF(classes);
            return NULL;
        }
        PyTuple_SET_ITEM(classes, c, v);
    }
    return Py_BuildValue("{s:K,s:i,s:d,s:O,s:d,s:d,s:I,s:N,s:i,s:d,s:d,"
                         "s:I,s:I,s:z}",
                         "n_features", (unsigned long long)s.n_features,
                         "loss", (int)s.loss, "bias", s.bias,
                         "regression", s.regression ? Py_True : Py_False,
                         "label_pos", s.label_pos, "label_neg", s.label_neg,
                         "n_classes", s.n_classes, "classes", classes,
                         "multiclass", (int)s.multiclass, "l1", s.l1,
                         "l2", s.l2, "hash_bits", s.hash_bits,
                         "hash_seed", (unsigned)s.hash_seed,
                         "interactions", s.interactions);
}

PyDoc_STRVAR(Model_weights_doc,
"weights() -> bytearray: a copy of the float32 weights, max(K, 1) vectors\n"
"of n_features (+ 1 with a bias) one after another (hog_model_weights).");

static PyObject *Model_weights(ModelObject *self, PyObject *unused)
{
    uint64_t n = model_len(self->m);
    return PyByteArray_FromStringAndSize((const char *)hog_model_weights(self->m),
                                         (Py_ssize_t)(n * sizeof(float)));
}

/* spec dict -> hog_model_spec; classes into *cls (freed by the caller). */
static int dict_double(PyObject *d, const char *k, double *out, int need)
{
    PyObject *v = PyDict_GetItemString(d, k);
    if (!v) {
        if (need)
            PyErr_Format(PyExc_KeyError, "the model's description lacks '%s'", k);
        return need ? -1 : 0;
    }
    *out = PyFloat_AsDouble(v);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

/* A whole number from 0 to max, as dict_double reads it: a double outside
 * the integer type it is cast to would be undefined behaviour. */
static int dict_whole(PyObject *d, const char *k, double max, double *out,
                      int need)
{
    if (dict_double(d, k, out, need) < 0)
        return -1;
    if (!(*out >= 0 && *out <= max && *out == floor(*out))) {
        PyErr_Format(PyExc_ValueError, "the model's '%s' must be a whole "
                     "number from 0 to %.0f", k, max);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(from_weights_doc,
"from_weights(spec, weights) -> Model: a model of spec (a dict as\n"
"Model.describe() gives) with the float32 weights (copied;\n"
"hog_model_from_weights).");

static PyObject *mod_from_weights(PyObject *mod, PyObject *args)
{
    PyObject *spec, *wobj;
    if (!PyArg_ParseTuple(args, "O!O", &PyDict_Type, &spec, &wobj))
        return NULL;
    hog_model_spec s = { .size = sizeof s };
    double nf = 0, loss = 0, regression = 0, ncls = 0, mc = 0, bits = 0,
           seed = 0;
    /* the library checks what the numbers mean; here only that each fits
     * its field (2^53: a double's whole numbers, more than any model) */
    if (dict_whole(spec, "n_features", 9007199254740992.0, &nf, 1) < 0 ||
        dict_whole(spec, "loss", INT_MAX, &loss, 1) < 0 ||
        dict_double(spec, "bias", &s.bias, 1) < 0 ||
        dict_double(spec, "regression", &regression, 0) < 0 ||
        dict_double(spec, "label_pos", &s.label_pos, 0) < 0 ||
        dict_double(spec, "label_neg", &s.label_neg, 0) < 0 ||
        dict_whole(spec, "n_classes", UINT_MAX, &ncls, 0) < 0 ||
        dict_whole(spec, "multiclass", INT_MAX, &mc, 0) < 0 ||
        dict_double(spec, "l1", &s.l1, 0) < 0 ||
        dict_double(spec, "l2", &s.l2, 0) < 0 ||
        dict_whole(spec, "hash_bits", UINT_MAX, &bits, 0) < 0 ||
        dict_whole(spec, "hash_seed", UINT32_MAX, &seed, 0) < 0)
        return NULL;
    s.n_features = (uint64_t)nf;
    s.loss = (hog_loss)(int)loss;
    s.regression = regression != 0;
    s.n_classes = (unsigned)ncls;
    s.multiclass = (hog_multiclass)(int)mc;
    s.hash_bits = (unsigned)bits;
    s.hash_seed = (uint32_t)seed;
    PyObject *ix = PyDict_GetItemString(spec, "interactions");
    if (ix && ix != Py_None &&
        !(s.interactions = PyUnicode_AsUTF8(ix))) /* owned by the dict */
        return NULL;
    double *cls = NULL;
    if (s.n_classes) {
        PyObject *c = PyDict_GetItemString(spec, "classes");
        PyObject *seq = c ? PySequence_Fast(c, "the classes must be a "
                                            "sequence of numbers") : NULL;
        if (!seq) {
            if (!c)
                PyErr_SetString(PyExc_ValueError, "a K-class model needs "
                                "its classes");
            return NULL;
        }
        if ((unsigned)PySequence_Fast_GET_SIZE(seq) != s.n_classes) {
            Py_DECREF(seq);
            return PyErr_Format(PyExc_ValueError, "%u classes named for a "
                                "model of %u", (unsigned)PySequence_Fast_GET_SIZE(seq),
                                s.n_classes);
        }
        cls = PyMem_Malloc(s.n_classes * sizeof *cls);
        for (unsigned k = 0; cls && k < s.n_classes; k++)
            cls[k] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, k));
        Py_DECREF(seq);
        if (!cls)
            return PyErr_NoMemory();
        if (PyErr_Occurred()) {
            PyMem_Free(cls);
            return NULL;
        }
        s.classes = cls;
    }
    uint64_t per = s.n_features + (s.bias != 0.0);
    uint64_t k = s.n_classes ? s.n_classes : 1;
    if (per > UINT64_MAX / sizeof(float) / k) {
        PyMem_Free(cls);
        return PyErr_Format(PyExc_ValueError, "a model of %llu features "
                            "and %u classes is more than hogtrain keeps",
                            (unsigned long long)s.n_features, s.n_classes);
    }
    uint64_t need = per * k;
    Py_buffer b;
    hog_dtype t = 0;
    if (get_buffer(wobj, &b, "the weights") < 0 ||
        !(t = buffer_dtype(&b, "the weights"))) {
        if (b.obj)
            PyBuffer_Release(&b);
        PyMem_Free(cls);
        return NULL;
    }
    PyObject *r = NULL;
    if (t != HOG_DTYPE_FLOAT32 || buffer_len(&b) != need) {
        PyErr_Format(PyExc_ValueError, "the weights must be %llu float32 "
                     "numbers (%llu features%s%s)", (unsigned long long)need,
                     (unsigned long long)s.n_features,
                     s.bias != 0.0 ? " and the bias" : "",
                     s.n_classes ? ", for each class" : "");
    } else {
        hog_model *m = NULL;
        hog_err err = { { 0 } };
        hog_status st = hog_model_from_weights(&s, b.buf, &m, &err);
        r = st == HOG_OK ? model_wrap(m) : raise_status(st, &err, NULL);
    }
    PyBuffer_Release(&b);
    PyMem_Free(cls);
    return r;
}

/* The rows x width float64 output buffer of a scoring call. */
static int out_buffer(PyObject *o, Py_buffer *b, uint64_t need)
{
    if (PyObject_GetBuffer(o, b, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE |
                                 PyBUF_FORMAT) < 0)
        return -1;
    const char *f = b->format ? b->format : "B";
    if (*f == '@' || *f == '=' || *f == '<')
        f++;
    if (strcmp(f, "d") != 0 || b->itemsize != 8 ||
        (uint64_t)(b->len / 8) != need) {
        PyErr_Format(PyExc_ValueError, "the output must be %llu float64 "
                     "numbers", (unsigned long long)need);
        PyBuffer_Release(b);
        return -1;
    }
    return 0;
}

enum score_kind { SCORES, PREDICT, PROBABILITIES };

static PyObject *model_score(ModelObject *self, PyObject *args,
                             enum score_kind kind)
{
    DataObject *d;
    PyObject *out;
    if (!PyArg_ParseTuple(args, "O!O", &DataType, &d, &out) ||
        data_usable(d) < 0)
        return NULL;
    hog_model_spec s = { .size = sizeof s };
    hog_model_describe(self->m, &s);
    uint64_t rows = hog_data_rows(d->d);
    uint64_t width = kind == PREDICT ? 1
                     : s.n_classes ? s.n_classes
                     : kind == PROBABILITIES ? 2 : 1;
    if (hog_data_features(d->d) > s.n_features)
        return PyErr_Format(PyExc_ValueError, "X has %llu features, but the "
                            "model was trained on %llu",
                            (unsigned long long)hog_data_features(d->d),
                            (unsigned long long)s.n_features);
    Py_buffer b;
    if (out_buffer(out, &b, rows * width) < 0)
        return NULL;
    hog_err err = { { 0 } };
    hog_status st;
    Py_BEGIN_ALLOW_THREADS
    st = kind == SCORES  ? hog_model_scores(self->m, d->d, b.buf, &err)
         : kind == PREDICT ? hog_model_predict(self->m, d->d, b.buf, &err)
                           : hog_model_probabilities(self->m, d->d, b.buf, &err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&b);
    if (st != HOG_OK)
        return raise_status(st, &err, NULL);
    Py_RETURN_NONE;
}

static PyObject *Model_scores(ModelObject *self, PyObject *args)
{
    return model_score(self, args, SCORES);
}
static PyObject *Model_predict(ModelObject *self, PyObject *args)
{
    return model_score(self, args, PREDICT);
}
static PyObject *Model_probabilities(ModelObject *self, PyObject *args)
{
    return model_score(self, args, PROBABILITIES);
}

PyDoc_STRVAR(Model_save_doc,
"save(path, liblinear=False): .hgm (or LIBLINEAR text), written under a\n"
"temporary name and renamed (hog_model_save).");

static PyObject *Model_save(ModelObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = { "path", "liblinear", NULL };
    PyObject *po;
    int liblinear = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|p", names,
                                     PyUnicode_FSConverter, &po, &liblinear))
        return NULL;
    const char *path = PyBytes_AS_STRING(po);
    hog_err err = { { 0 } };
    hog_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hog_model_save(self->m, path, liblinear ? HOG_MODEL_LIBLINEAR
                                                 : HOG_MODEL_HGM, &err);
    Py_END_ALLOW_THREADS
    PyObject *r = st == HOG_OK ? Py_NewRef(Py_None)
                               : raise_status(st, &err, path);
    Py_DECREF(po);
    return r;
}

PyDoc_STRVAR(load_model_doc,
"load_model(path) -> Model: .hgm or LIBLINEAR text (hog_model_load).");

static PyObject *mod_load_model(PyObject *mod, PyObject *args)
{
    PyObject *po;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &po))
        return NULL;
    const char *path = PyBytes_AS_STRING(po);
    hog_model *m = NULL;
    hog_err err = { { 0 } };
    hog_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hog_model_load(path, &m, &err);
    Py_END_ALLOW_THREADS
    PyObject *r = st == HOG_OK ? model_wrap(m) : raise_status(st, &err, path);
    Py_DECREF(po);
    return r;
}

static PyMethodDef Model_methods[] = {
    { "describe", (PyCFunction)Model_describe, METH_NOARGS, Model_describe_doc },
    { "weights", (PyCFunction)Model_weights, METH_NOARGS, Model_weights_doc },
    { "scores", (PyCFunction)Model_scores, METH_VARARGS,
      "scores(data, out): w.x + b of every row into out (float64, rows x "
      "max(K, 1))" },
    { "predict", (PyCFunction)Model_predict, METH_VARARGS,
      "predict(data, out): every row's label (float64, rows)" },
    { "probabilities", (PyCFunction)Model_probabilities, METH_VARARGS,
      "probabilities(data, out): class probabilities of a logistic model "
      "(rows x K, or rows x 2: the positive label's, then the negative's)" },
    { "save", (PyCFunction)(void (*)(void))Model_save,
      METH_VARARGS | METH_KEYWORDS, Model_save_doc },
    { NULL, NULL, 0, NULL }
};

/* ---- training ---------------------------------------------------------------- */

/* What the worker thread and the waiting caller share. */
struct train_job {
    const hog_data *train;
    hog_train_opts o;
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
    j->st = hog_train(j->train, NULL, &j->o, &j->model, &j->err);
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

/* opts dict -> hog_train_opts: every key must be one of these. */
struct opt_key {
    const char *name;
    enum { O_DOUBLE, O_UNSIGNED, O_U64, O_INT } kind;
    size_t off;
};
#define OPT(n, k) { #n, k, offsetof(hog_train_opts, n) }
static const struct opt_key opt_keys[] = {
    OPT(loss, O_INT), OPT(l1, O_DOUBLE), OPT(l2, O_DOUBLE),
    OPT(eta, O_DOUBLE), OPT(power, O_DOUBLE), OPT(schedule, O_INT),
    OPT(bias, O_DOUBLE), OPT(epochs, O_UNSIGNED), OPT(seed, O_U64),
    OPT(threads, O_UNSIGNED), OPT(algo, O_INT), OPT(update, O_INT),
    OPT(tol, O_DOUBLE), OPT(multiclass, O_INT), OPT(normalize, O_INT),
    OPT(C, O_DOUBLE), OPT(C_l1, O_INT), OPT(hot_count, O_U64),
    OPT(batch_size, O_U64), OPT(sync_every, O_U64),
    OPT(class_weight_balanced, O_INT), OPT(metrics_every, O_UNSIGNED),
};

static int set_opts(hog_train_opts *o, PyObject *dict)
{
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(dict, &pos, &k, &v)) {
        const char *name = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
        const struct opt_key *ok = NULL;
        for (size_t i = 0; name && i < sizeof opt_keys / sizeof *opt_keys; i++)
            if (strcmp(opt_keys[i].name, name) == 0)
                ok = &opt_keys[i];
        if (!ok) {
            PyErr_Format(PyExc_ValueError, "unknown training option %R", k);
            return -1;
        }
        char *p = (char *)o + ok->off;
        if (ok->kind == O_DOUBLE) {
            double x = PyFloat_AsDouble(v);
            if (x == -1.0 && PyErr_Occurred())
                return -1;
            memcpy(p, &x, sizeof x);
            continue;
        }
        unsigned long long u = 0;
        long long s = 0;
        if (ok->kind == O_INT)
            s = PyLong_AsLongLong(v);
        else
            u = PyLong_AsUnsignedLongLong(v);
        if (PyErr_Occurred()) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "the training option '%s' must be "
                         "%s integer (got %R)", name,
                         ok->kind == O_INT ? "an" : "a non-negative", v);
            return -1;
        }
        if (ok->kind == O_INT) {
            int x = (int)s;
            memcpy(p, &x, sizeof x); /* enums and ints alike */
        } else if (ok->kind == O_UNSIGNED) {
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

PyDoc_STRVAR(train_doc,
"train(data, opts, row_weights=None, class_labels=None, class_weights=None,\n"
"      warm_start=None, progress=None) -> Model\n\n"
"hog_train on data with the options of the dict opts (hog_train_opts\n"
"field names; the rest keep hog_train_opts_init's defaults). row_weights:\n"
"float32, one per row. class_labels/class_weights: float64 sequences of\n"
"equal length. warm_start: a Model to start from. progress: called with\n"
"a dict of each epoch's stats, on the calling thread. The GIL is released;\n"
"Ctrl-C (any signal handler raising) cancels training and raises.");

static PyObject *mod_train(PyObject *mod, PyObject *args, PyObject *kw)
{
    static char *names[] = { "data", "opts", "row_weights", "class_labels",
                             "class_weights", "warm_start", "progress", NULL };
    DataObject *data;
    PyObject *opts, *rw = Py_None, *cl = Py_None, *cw = Py_None,
             *warm = Py_None, *progress = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O!|OOOOO", names, &DataType,
                                     &data, &PyDict_Type, &opts, &rw, &cl, &cw,
                                     &warm, &progress))
        return NULL;
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
    Py_buffer bw = { 0 }, bl = { 0 }, bc = { 0 };
    PyObject *result = NULL;
    if (set_opts(&j->o, opts) < 0)
        goto out;
    if (get_buffer(rw, &bw, "the sample weights") < 0 ||
        get_buffer(cl, &bl, "the class labels") < 0 ||
        get_buffer(cw, &bc, "the class weights") < 0)
        goto out;
    if (bw.obj) {
        if (buffer_dtype(&bw, "the sample weights") != HOG_DTYPE_FLOAT32 ||
            buffer_len(&bw) != hog_data_rows(data->d)) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "the sample weights must be "
                             "%llu float32 numbers, one per row",
                             (unsigned long long)hog_data_rows(data->d));
            goto out;
        }
        j->o.row_weights = bw.buf;
    }
    if (bl.obj || bc.obj) {
        if (!bl.obj || !bc.obj ||
            buffer_dtype(&bl, "the class labels") != HOG_DTYPE_FLOAT64 ||
            buffer_dtype(&bc, "the class weights") != HOG_DTYPE_FLOAT64 ||
            buffer_len(&bl) != buffer_len(&bc)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "class labels and class "
                                "weights: two float64 arrays of one length");
            goto out;
        }
        j->o.class_weight_labels = bl.buf;
        j->o.class_weight_values = bc.buf;
        j->o.n_class_weights = (unsigned)buffer_len(&bl);
    }
    if (warm != Py_None)
        j->o.warm_start = ((ModelObject *)warm)->m;
    if (progress != Py_None) {
        j->o.progress = train_progress;
        j->o.progress_ctx = j;
    }
    j->o.cancel = &j->cancel;
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
    } else {
        result = model_wrap(j->model);
    }
destroy:
    pthread_cond_destroy(&j->cv);
    pthread_mutex_destroy(&j->mu);
out:
    if (bw.obj)
        PyBuffer_Release(&bw);
    if (bl.obj)
        PyBuffer_Release(&bl);
    if (bc.obj)
        PyBuffer_Release(&bc);
    free(j->epochs);
    free(j);
    return result;
}

/* ---- the module -------------------------------------------------------------- */

static PyTypeObject DataType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hogtrain._hogtrain.Data",
    .tp_basicsize = sizeof(DataObject),
    .tp_dealloc = (destructor)Data_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = Data_doc,
    .tp_new = Data_new,
    .tp_getset = Data_getset,
    .tp_methods = Data_methods,
};

static PyTypeObject ViewType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hogtrain._hogtrain.View",
    .tp_basicsize = sizeof(ViewObject),
    .tp_dealloc = (destructor)View_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A read-only buffer over one of a Data's arrays.",
    .tp_as_buffer = &View_as_buffer,
};

static PyTypeObject ModelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hogtrain._hogtrain.Model",
    .tp_basicsize = sizeof(ModelObject),
    .tp_dealloc = (destructor)Model_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A trained or loaded model (a hog_model).",
    .tp_methods = Model_methods,
};

static PyMethodDef mod_methods[] = {
    { "load", (PyCFunction)(void (*)(void))mod_load,
      METH_VARARGS | METH_KEYWORDS, load_doc },
    { "load_model", (PyCFunction)mod_load_model, METH_VARARGS, load_model_doc },
    { "from_weights", (PyCFunction)mod_from_weights, METH_VARARGS,
      from_weights_doc },
    { "train", (PyCFunction)(void (*)(void))mod_train,
      METH_VARARGS | METH_KEYWORDS, train_doc },
    { NULL, NULL, 0, NULL }
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, .m_name = "hogtrain._hogtrain",
    .m_doc = "libhogtrain's C API for the hogtrain package.", .m_size = -1,
    .m_methods = mod_methods,
};

PyMODINIT_FUNC PyInit__hogtrain(void)
{
    if (PyType_Ready(&DataType) < 0 || PyType_Ready(&ViewType) < 0 ||
        PyType_Ready(&ModelType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    struct { const char *name; long v; } consts[] = {
        { "LOSS_LOGISTIC", HOG_LOSS_LOGISTIC }, { "LOSS_HINGE", HOG_LOSS_HINGE },
        { "LOSS_SQHINGE", HOG_LOSS_SQHINGE }, { "LOSS_SQUARED", HOG_LOSS_SQUARED },
        { "SCHED_CONSTANT", HOG_SCHED_CONSTANT },
        { "SCHED_INVSCALING", HOG_SCHED_INVSCALING },
        { "SCHED_ADAGRAD", HOG_SCHED_ADAGRAD },
        { "SCHED_FTRL", HOG_SCHED_FTRL },
        { "ALGO_SERIAL", HOG_ALGO_SERIAL }, { "ALGO_HOGWILD", HOG_ALGO_HOGWILD },
        { "ALGO_CYCLADES", HOG_ALGO_CYCLADES }, { "ALGO_SCD", HOG_ALGO_SCD },
        { "ALGO_DCD", HOG_ALGO_DCD },
        { "UPDATE_NONE", HOG_UPDATE_NONE }, { "UPDATE_ATOMIC", HOG_UPDATE_ATOMIC },
        { "UPDATE_STRIPED", HOG_UPDATE_STRIPED },
        { "UPDATE_MUTEX", HOG_UPDATE_MUTEX },
        { "MULTICLASS_OVR", HOG_MULTICLASS_OVR },
        { "MULTICLASS_SOFTMAX", HOG_MULTICLASS_SOFTMAX },
        { "BORROW_INDPTR", HOG_BORROW_INDPTR },
        { "BORROW_INDICES", HOG_BORROW_INDICES },
        { "BORROW_VALUES", HOG_BORROW_VALUES },
        { "BORROW_LABELS", HOG_BORROW_LABELS },
    };
    for (size_t i = 0; i < sizeof consts / sizeof *consts; i++)
        if (PyModule_AddIntConstant(m, consts[i].name, consts[i].v) < 0)
            goto fail;
    if (PyModule_AddStringConstant(m, "version", hog_version()) < 0 ||
        PyModule_AddObject(m, "FTRL_L2_DEFAULT",
                           PyFloat_FromDouble(HOG_FTRL_L2_DEFAULT)) < 0)
        goto fail;
    Py_INCREF(&DataType);
    Py_INCREF(&ModelType);
    if (PyModule_AddObject(m, "Data", (PyObject *)&DataType) < 0 ||
        PyModule_AddObject(m, "Model", (PyObject *)&ModelType) < 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
