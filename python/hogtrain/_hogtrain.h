/*
 * The extension's private header: what its files share (_hogtrain.c, the
 * module; _hogtrain_bridge.c, statuses and buffers across the boundary;
 * _hogtrain_data.c, Data and View; _hogtrain_model.c, Model;
 * _hogtrain_train.c, training; _hogtrain_trainer.c, Trainer). Only PyInit__hogtrain leaves the shared
 * object: the rest is built with hidden visibility.
 */
#ifndef HOGTRAIN_PY_EXT_H
#define HOGTRAIN_PY_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "hogtrain.h"

#include <stdbool.h>
#include <stdint.h>

/* A hog_data and the buffers it may borrow, held until it is freed. */
typedef struct {
    PyObject_HEAD
    hog_data *d;
    Py_buffer held[4]; /* indptr, indices, values, labels (obj NULL: none) */
    bool own;          /* loaded with hog_load_opts.own_arrays */
    bool handed_out;   /* its arrays exported writable: no longer used */
} DataObject;

typedef struct {
    PyObject_HEAD
    hog_model *m;
} ModelObject;

extern PyTypeObject DataType, ViewType, ModelType, TrainerType;

/* Each file's module-level functions, NULL-terminated, which the module
 * adds in this order. */
extern PyMethodDef hogpy_data_functions[], hogpy_model_functions[],
    hogpy_train_functions[];

/* ---- _hogtrain_bridge.c --------------------------------------------------- */

/* hogtrain's sentence as the Python exception its status means; NULL. */
PyObject *raise_status(hog_status st, const hog_err *err, const char *path);
/* The hog_dtype of a one-dimensional contiguous buffer, or 0 with a
 * ValueError naming what (e.g. "the indices"). */
hog_dtype buffer_dtype(const Py_buffer *b, const char *what);
/* obj's buffer, contiguous, read-only is fine; NULL obj or None: none. */
int get_buffer(PyObject *obj, Py_buffer *b, const char *what);
/* The elements of b (0 for none). */
uint64_t buffer_len(const Py_buffer *b);

/* ---- _hogtrain_data.c and _hogtrain_model.c ------------------------------ */

/* 0, or -1 with a ValueError when d's arrays were handed out to be
 * changed (Data.arrays). */
int data_usable(const DataObject *d);
/* m in a new Model (m freed when that fails). */
PyObject *model_wrap(hog_model *m);

/* ---- _hogtrain_train.c --------------------------------------------------- */

/* The dict's items (hog_train_opts field names) into o, each converted by
 * its row of the options' table; -1 with a ValueError. */
int set_opts(hog_train_opts *o, PyObject *dict);

#endif
