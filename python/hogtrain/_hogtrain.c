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
 *
 * This file is the module: its types, functions and constants. The types
 * and functions are in _hogtrain_data.c (Data, View, load),
 * _hogtrain_model.c (Model, load_model, from_weights) and
 * _hogtrain_train.c (train), _hogtrain_trainer.c (Trainer, partial_fit's
 * pieces), over _hogtrain_bridge.c's statuses and
 * buffers; _hogtrain.h is what they share.
 */
#include "_hogtrain.h"

PyMODINIT_FUNC PyInit__hogtrain(void);

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, .m_name = "hogtrain._hogtrain",
    .m_doc = "libhogtrain's C API for the hogtrain package.", .m_size = -1,
};

PyMODINIT_FUNC PyInit__hogtrain(void)
{
    if (PyType_Ready(&DataType) < 0 || PyType_Ready(&ViewType) < 0 ||
        PyType_Ready(&ModelType) < 0 || PyType_Ready(&TrainerType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    if (PyModule_AddFunctions(m, hogpy_data_functions) < 0 ||
        PyModule_AddFunctions(m, hogpy_model_functions) < 0 ||
        PyModule_AddFunctions(m, hogpy_train_functions) < 0)
        goto fail;
    struct { const char *name; long v; } consts[] = {
        { "LOSS_LOGISTIC", HOG_LOSS_LOGISTIC }, { "LOSS_HINGE", HOG_LOSS_HINGE },
        { "LOSS_SQHINGE", HOG_LOSS_SQHINGE }, { "LOSS_SQUARED", HOG_LOSS_SQUARED },
        { "LOSS_MODIFIED_HUBER", HOG_LOSS_MODIFIED_HUBER },
        { "LOSS_HUBER", HOG_LOSS_HUBER },
        { "LOSS_EPS_INSENSITIVE", HOG_LOSS_EPS_INSENSITIVE },
        { "LOSS_SQ_EPS_INSENSITIVE", HOG_LOSS_SQ_EPS_INSENSITIVE },
        { "LOSS_QUANTILE", HOG_LOSS_QUANTILE },
        { "LOSS_POISSON", HOG_LOSS_POISSON },
        { "SCHED_CONSTANT", HOG_SCHED_CONSTANT },
        { "SCHED_INVSCALING", HOG_SCHED_INVSCALING },
        { "SCHED_ADAGRAD", HOG_SCHED_ADAGRAD },
        { "SCHED_FTRL", HOG_SCHED_FTRL },
        { "ALGO_SERIAL", HOG_ALGO_SERIAL }, { "ALGO_HOGWILD", HOG_ALGO_HOGWILD },
        { "ALGO_CYCLADES", HOG_ALGO_CYCLADES }, { "ALGO_SCD", HOG_ALGO_SCD },
        { "ALGO_DCD", HOG_ALGO_DCD }, { "ALGO_NEWTON", HOG_ALGO_NEWTON },
        { "ALGO_LBFGS", HOG_ALGO_LBFGS }, { "ALGO_AUTO", HOG_ALGO_AUTO },
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
        PyModule_AddStringConstant(m, "build_info", hog_build_info()) < 0 ||
        PyModule_AddObject(m, "FTRL_L2_DEFAULT",
                           PyFloat_FromDouble(HOG_FTRL_L2_DEFAULT)) < 0)
        goto fail;
    Py_INCREF(&DataType);
    Py_INCREF(&ModelType);
    Py_INCREF(&TrainerType);
    if (PyModule_AddObject(m, "Data", (PyObject *)&DataType) < 0 ||
        PyModule_AddObject(m, "Model", (PyObject *)&ModelType) < 0 ||
        PyModule_AddObject(m, "Trainer", (PyObject *)&TrainerType) < 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
