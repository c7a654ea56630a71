/*
 * What crosses between Python and libhogtrain in every call: hogtrain's
 * statuses out as Python exceptions, Python buffers in as hogtrain's
 * typed arrays.
 */
#include "_hogtrain.h"

#include <errno.h>
#include <string.h>

/* ---- errors -------------------------------------------------------------- */

/* hogtrain's sentence as the Python exception its status means. */
PyObject *raise_status(hog_status st, const hog_err *err,
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
hog_dtype buffer_dtype(const Py_buffer *b, const char *what)
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
int get_buffer(PyObject *obj, Py_buffer *b, const char *what)
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

uint64_t buffer_len(const Py_buffer *b)
{
    return b->obj ? (uint64_t)(b->len / (b->itemsize ? b->itemsize : 1)) : 0;
}
