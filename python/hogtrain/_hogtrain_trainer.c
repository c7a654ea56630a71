/*
 * Trainer: a hog_trainer (include/hogtrain.h, "online learning"), the
 * run partial_fit continues from one call to the next. Its pieces are
 * trained with the GIL released on the calling thread: a piece is the
 * caller's rows, not an epoch over a data set, and there is no cancel.
 */
#include "_hogtrain.h"

typedef struct {
    PyObject_HEAD
    hog_trainer *t;
} TrainerObject;

static void Trainer_dealloc(TrainerObject *self)
{
    hog_trainer_free(self->t);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Trainer_init(TrainerObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = { "opts", "warm_start", "classes", NULL };
    PyObject *opts, *warm = Py_None, *classes = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|OO", names, &PyDict_Type,
                                     &opts, &warm, &classes))
        return -1;
    if (warm != Py_None && !PyObject_TypeCheck(warm, &ModelType)) {
        PyErr_SetString(PyExc_TypeError, "warm_start must be a Model");
        return -1;
    }
    hog_train_opts o;
    hog_train_opts_init(&o);
    if (set_opts(&o, opts) < 0)
        return -1;
    Py_buffer bk = { 0 };
    if (get_buffer(classes, &bk, "the classes") < 0)
        return -1;
    if (bk.obj) {
        if (buffer_dtype(&bk, "the classes") != HOG_DTYPE_FLOAT64) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "classes: a float64 array");
            PyBuffer_Release(&bk);
            return -1;
        }
        o.classes = bk.buf;
        o.n_classes = (unsigned)buffer_len(&bk);
    }
    if (warm != Py_None)
        o.warm_start = ((ModelObject *)warm)->m;
    hog_trainer *t;
    hog_err err;
    hog_status st = hog_trainer_create(&o, &t, &err); /* copies o's arrays */
    if (bk.obj)
        PyBuffer_Release(&bk);
    if (st != HOG_OK) {
        raise_status(st, &err, NULL);
        return -1;
    }
    hog_trainer_free(self->t);
    self->t = t;
    return 0;
}

static int usable(const TrainerObject *self)
{
    if (self->t)
        return 0;
    PyErr_SetString(PyExc_ValueError, "the Trainer was not initialised");
    return -1;
}

PyDoc_STRVAR(train_doc,
"train(data, row_weights=None)\n\n"
"One unshuffled epoch over data's rows, continuing the run\n"
"(hog_trainer_train). row_weights: float32, one per row. The GIL is\n"
"released.");

static PyObject *Trainer_train(TrainerObject *self, PyObject *args,
                               PyObject *kw)
{
    static char *names[] = { "data", "row_weights", NULL };
    DataObject *data;
    PyObject *rw = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|O", names, &DataType,
                                     &data, &rw))
        return NULL;
    if (usable(self) < 0 || data_usable(data) < 0)
        return NULL;
    Py_buffer b = { 0 };
    if (get_buffer(rw, &b, "the sample weights") < 0)
        return NULL;
    if (b.obj && (buffer_dtype(&b, "the sample weights") != HOG_DTYPE_FLOAT32 ||
                  buffer_len(&b) != hog_data_rows(data->d))) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "the sample weights must be %llu "
                         "float32 numbers, one per row",
                         (unsigned long long)hog_data_rows(data->d));
        PyBuffer_Release(&b);
        return NULL;
    }
    hog_err err;
    hog_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hog_trainer_train(self->t, data->d, b.obj ? b.buf : NULL, &err);
    Py_END_ALLOW_THREADS
    if (b.obj)
        PyBuffer_Release(&b);
    if (st != HOG_OK)
        return raise_status(st, &err, NULL);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(model_doc,
"model(state=True) -> Model\n\n"
"The model after the pieces so far, with the optimizer's state when\n"
"state (hog_trainer_model: a pass over the model).");

static PyObject *Trainer_model(TrainerObject *self, PyObject *args,
                               PyObject *kw)
{
    static char *names[] = { "state", NULL };
    int state = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|p", names, &state))
        return NULL;
    if (usable(self) < 0)
        return NULL;
    hog_model *m;
    hog_err err;
    hog_status st;
    Py_BEGIN_ALLOW_THREADS
    st = hog_trainer_model(self->t, state, &m, &err);
    Py_END_ALLOW_THREADS
    if (st != HOG_OK)
        return raise_status(st, &err, NULL);
    return model_wrap(m);
}

static PyObject *Trainer_pieces(TrainerObject *self, void *unused)
{
    (void)unused;
    return usable(self) < 0 ? NULL
                            : PyLong_FromUnsignedLongLong(
                                  hog_trainer_pieces(self->t));
}

static PyObject *Trainer_model_passes(TrainerObject *self, void *unused)
{
    (void)unused;
    return usable(self) < 0 ? NULL
                            : PyLong_FromUnsignedLongLong(
                                  hog_trainer_model_passes(self->t));
}

static PyMethodDef Trainer_methods[] = {
    { "train", (PyCFunction)(void (*)(void))Trainer_train,
      METH_VARARGS | METH_KEYWORDS, train_doc },
    { "model", (PyCFunction)(void (*)(void))Trainer_model,
      METH_VARARGS | METH_KEYWORDS, model_doc },
    { NULL, NULL, 0, NULL }
};

static PyGetSetDef Trainer_getset[] = {
    { "pieces", (getter)Trainer_pieces, NULL, "The pieces trained.", NULL },
    { "model_passes", (getter)Trainer_model_passes, NULL,
      "The passes over the whole model the pieces took "
      "(hog_trainer_model_passes).", NULL },
    { NULL, NULL, NULL, NULL, NULL }
};

PyTypeObject TrainerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hogtrain._hogtrain.Trainer",
    .tp_basicsize = sizeof(TrainerObject),
    .tp_dealloc = (destructor)Trainer_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Trainer(opts, warm_start=None, classes=None): a hog_trainer "
              "of the options of the dict opts (hog_train_opts field names), "
              "from the Model warm_start, K >= 3 classes in the order of the "
              "float64 array classes.",
    .tp_methods = Trainer_methods,
    .tp_getset = Trainer_getset,
    .tp_init = (initproc)Trainer_init,
    .tp_new = PyType_GenericNew,
};
