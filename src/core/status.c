/* Status codes, messages and version. */
#include "core.h"

#include <stdarg.h>
#include <stdio.h>

const char *hog_status_str(hog_status s)
{
    switch (s) {
    case HOG_OK: return "ok";
    case HOG_EINVAL: return "invalid argument";
    case HOG_ENOMEM: return "out of memory";
    case HOG_EIO: return "I/O error";
    case HOG_EPARSE: return "parse error";
    case HOG_EFORMAT: return "unknown or unsupported file format";
    case HOG_ECORRUPT: return "corrupt or truncated file";
    case HOG_ERANGE: return "value out of range";
    case HOG_ENOTSUP: return "not supported";
    case HOG_EINTR: return "interrupted";
    case HOG_ENET: return "network error";
    case HOG_ETIMEDOUT: return "timed out";
    }
    return "unknown status";
}

const char *hog_version(void)
{
    return HOG_VERSION_STRING;
}

hog_status hog_errf(hog_err *err, hog_status s, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return s;
}
