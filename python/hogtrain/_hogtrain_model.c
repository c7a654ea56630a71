/*
 * Model: a trained or loaded hog_model, its description and weights, its
 * scores, predictions and probabilities, and its files; models built from
 * a description and weights.
 */
#include "_hogtrain.h"

#include <limits.h>
#include <math.h>
#include <string.h>

static void Model_dealloc(ModelObject *self)
{
    hog_model_free(self->m);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PyObject *model_wrap(hog_model *m)
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
"l2, hash_bits, hash_seed, interactions: \"ab,cd\" or None, loss_param).");

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
                         "s:I,s:I,s:z,s:d}",
                         "n_features", (unsigned long long)s.n_features,
                         "loss", (int)s.loss, "bias", s.bias,
                         "regression", s.regression ? Py_True : Py_False,
                         "label_pos", s.label_pos, "label_neg", s.label_neg,
                         "n_classes", s.n_classes, "classes", classes,
                         "multiclass", (int)s.multiclass, "l1", s.l1,
                         "l2", s.l2, "hash_bits", s.hash_bits,
                         "hash_seed", (unsigned)s.hash_seed,
                         "interactions", s.interactions,
                         "loss_param", s.loss_param);
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

PyDoc_STRVAR(Model_state_doc,
"state() -> None, or (schedule, epochs, steps, a, b): the optimizer's state\n"
"the model keeps (hog_model_get_state), a and b float32 bytes or None.");

static PyObject *Model_state(ModelObject *self, PyObject *unused)
{
    (void)unused;
    hog_model_state s = { .size = sizeof s };
    if (!hog_model_get_state(self->m, &s))
        Py_RETURN_NONE;
    Py_ssize_t bytes = (Py_ssize_t)(s.len * sizeof(float));
    PyObject *a = s.a ? PyBytes_FromStringAndSize((const char *)s.a, bytes)
                      : Py_NewRef(Py_None);
    PyObject *b = s.b ? PyBytes_FromStringAndSize((const char *)s.b, bytes)
                      : Py_NewRef(Py_None);
    if (!a || !b) {
        Py_XDECREF(a);
        Py_XDECREF(b);
        return NULL;
    }
    return Py_BuildValue("(iKKNN)", (int)s.schedule,
                         (unsigned long long)s.epochs,
                         (unsigned long long)s.steps, a, b);
}

PyDoc_STRVAR(Model_set_state_doc,
"set_state(state): state() of another model (None: none) into this one\n"
"(copied; hog_model_set_state refuses one that does not fit).");

static PyObject *Model_set_state(ModelObject *self, PyObject *arg)
{
    hog_err err;
    hog_status st;
    if (arg == Py_None) {
        st = hog_model_set_state(self->m, NULL, &err);
    } else {
        int sch;
        unsigned long long epochs, steps;
        PyObject *a, *b;
        if (!PyArg_ParseTuple(arg, "iKKOO", &sch, &epochs, &steps, &a, &b))
            return NULL;
        hog_model_state s = { .size = sizeof s, .schedule = (hog_schedule)sch,
                              .epochs = epochs, .steps = steps,
                              .len = model_len(self->m) };
        PyObject *arr[2] = { a, b };
        const float **to[2] = { &s.a, &s.b };
        for (int i = 0; i < 2; i++) {
            if (arr[i] == Py_None)
                continue;
            if (!PyBytes_Check(arr[i]) ||
                (uint64_t)PyBytes_GET_SIZE(arr[i]) != s.len * sizeof(float))
                return PyErr_Format(PyExc_ValueError, "the state's arrays "
                                    "must be bytes of %llu float32",
                                    (unsigned long long)s.len);
            *to[i] = (const float *)PyBytes_AS_STRING(arr[i]);
        }
        st = hog_model_set_state(self->m, &s, &err);
    }
    if (st != HOG_OK)
        return raise_status(st, &err, NULL);
    Py_RETURN_NONE;
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
        dict_whole(spec, "hash_seed", UINT32_MAX, &seed, 0) < 0 ||
        dict_double(spec, "loss_param", &s.loss_param, 0) < 0)
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
    { "state", (PyCFunction)Model_state, METH_NOARGS, Model_state_doc },
    { "set_state", (PyCFunction)Model_set_state, METH_O, Model_set_state_doc },
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

PyTypeObject ModelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hogtrain._hogtrain.Model",
    .tp_basicsize = sizeof(ModelObject),
    .tp_dealloc = (destructor)Model_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A trained or loaded model (a hog_model).",
    .tp_methods = Model_methods,
};


PyMethodDef hogpy_model_functions[] = {
    { "load_model", (PyCFunction)mod_load_model, METH_VARARGS, load_model_doc },
    { "from_weights", (PyCFunction)mod_from_weights, METH_VARARGS,
      from_weights_doc },
    { NULL, NULL, 0, NULL }
};
