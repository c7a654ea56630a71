/*
 * Data: a hog_data over the caller's CSR arrays or loaded from a file,
 * and View, one of its arrays exported as a buffer.
 */
#include "_hogtrain.h"

#include <string.h>

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
int data_usable(const DataObject *d)
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

PyDoc_STRVAR(Data_column_namespaces_doc,
"column_namespaces() -> bytes\n\n"
"The namespace byte of each column (hog_data_column_namespaces): of a\n"
"data set loaded with keep_namespaces, ' ' for a column no entry has. A\n"
"ValueError naming the column when two namespaces share one.");

static PyObject *Data_column_namespaces(DataObject *self, PyObject *unused)
{
    uint64_t nf = hog_data_features(self->d);
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)nf);
    if (!out)
        return NULL;
    hog_err err = { { 0 } };
    hog_status st;
    uint8_t *ns = (uint8_t *)PyBytes_AS_STRING(out);
    Py_BEGIN_ALLOW_THREADS
    st = hog_data_column_namespaces(self->d, ns, &err);
    Py_END_ALLOW_THREADS
    if (st != HOG_OK) {
        Py_DECREF(out);
        return raise_status(st, &err, NULL);
    }
    return out;
}

PyDoc_STRVAR(Data_set_interactions_doc,
"set_interactions(namespaces, interactions, hash_bits)\n\n"
"Crosses the rows (hog_data_set_interactions): namespaces a bytes-like\n"
"object of one namespace byte per column, interactions \"ab,cde\",\n"
"hashed into 2^hash_bits columns.");

static PyObject *Data_set_interactions(DataObject *self, PyObject *args)
{
    Py_buffer ns;
    const char *spec;
    unsigned bits;
    if (!PyArg_ParseTuple(args, "y*sI", &ns, &spec, &bits))
        return NULL;
    if ((uint64_t)ns.len != hog_data_features(self->d)) {
        PyErr_Format(PyExc_ValueError, "%zd namespaces for %llu columns: one "
                     "per column", ns.len,
                     (unsigned long long)hog_data_features(self->d));
        PyBuffer_Release(&ns);
        return NULL;
    }
    hog_err err = { { 0 } };
    hog_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hog_data_set_interactions(self->d, ns.buf, spec, bits, &err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&ns);
    if (st != HOG_OK)
        return raise_status(st, &err, NULL);
    Py_RETURN_NONE;
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
    { "column_namespaces", (PyCFunction)Data_column_namespaces, METH_NOARGS,
      Data_column_namespaces_doc },
    { "set_interactions", (PyCFunction)Data_set_interactions, METH_VARARGS,
      Data_set_interactions_doc },
    { NULL, NULL, 0, NULL }
};

PyDoc_STRVAR(load_doc,
"load(path, zero_based=False, threads=0, n_features=0, hash_bits=0,\n"
"     hash_seed=0, own_arrays=False, keep_namespaces=False) -> Data\n\n"
"LIBSVM/SVMlight or Vowpal Wabbit text (plain, gzip, xz or zstd) or a\n"
".hgb cache, told apart by content (hog_data_load); the GIL is released\n"
"while it parses. own_arrays: the arrays in memory of the data set's own\n"
"(hog_load_opts.own_arrays), which arrays() hands out writable.\n"
"keep_namespaces: each entry's namespace kept (Vowpal Wabbit text), for\n"
"column_namespaces().");

static PyObject *mod_load(PyObject *mod, PyObject *args, PyObject *kw)
{
    static char *names[] = { "path", "zero_based", "threads", "n_features",
                             "hash_bits", "hash_seed", "own_arrays",
                             "keep_namespaces", NULL };
    PyObject *po;
    int zero_based = 0, own = 0, keep_ns = 0;
    unsigned threads = 0, bits = 0, seed = 0;
    unsigned long long nf = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|pIKIIpp", names,
                                     PyUnicode_FSConverter, &po, &zero_based,
                                     &threads, &nf, &bits, &seed, &own,
                                     &keep_ns))
        return NULL;
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    lo.zero_based = zero_based;
    lo.threads = threads;
    lo.n_features = nf;
    lo.hash_bits = bits;
    lo.hash_seed = seed;
    lo.own_arrays = own;
    lo.keep_namespaces = keep_ns;
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

PyTypeObject DataType = {
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

PyTypeObject ViewType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hogtrain._hogtrain.View",
    .tp_basicsize = sizeof(ViewObject),
    .tp_dealloc = (destructor)View_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A read-only buffer over one of a Data's arrays.",
    .tp_as_buffer = &View_as_buffer,
};


PyMethodDef hogpy_data_functions[] = {
    { "load", (PyCFunction)(void (*)(void))mod_load,
      METH_VARARGS | METH_KEYWORDS, load_doc },
    { NULL, NULL, 0, NULL }
};
