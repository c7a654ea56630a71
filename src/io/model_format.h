/*
 * Model files, private to io: the two formats' readers and writers
 * (model_hgm.c, model_liblinear.c), which model.c's hog_model_save() and
 * hog_model_load() choose between, and what both formats check alike.
 */
#ifndef HOG_IO_MODEL_FORMAT_H
#define HOG_IO_MODEL_FORMAT_H

#include "io/io.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* m to f as .hgm, or as LIBLINEAR's text (path for the sentences). */
hog_status hog_hgm_save(const hog_model *m, FILE *f, const char *path,
                        hog_err *err);
hog_status hog_liblinear_save(const hog_model *m, FILE *f, const char *path,
                              hog_err *err);
/* The model in f, a regular file of fsize bytes at its start, as .hgm or
 * as LIBLINEAR's text. */
hog_status hog_hgm_load(FILE *f, const char *path, uint64_t fsize,
                        hog_model **out, hog_err *err);
hog_status hog_liblinear_load(FILE *f, const char *path, uint64_t fsize,
                              hog_model **out, hog_err *err);

/* Inline here, so that neither format's file calls into the other's. */
static inline hog_status hog_model_write_failed(const char *path, hog_err *err)
{
    return hog_errf(err, HOG_EIO, "%s: write failed: %s", path,
                    strerror(errno));
}

/* The labels of a K-class file: finite and distinct. NULL when they are,
 * else why not. */
static inline const char *hog_model_check_classes(const double *cl,
                                                  uint32_t k, hog_err *err)
{
    for (uint32_t c = 0; c < k; c++)
        if (!isfinite(cl[c]))
            return "a class label is not finite";
    /* a label listed twice makes the index answer its later class */
    struct hog_class_index ix;
    if (hog_class_index_init(&ix, cl, k, err) != HOG_OK)
        return "out of memory for the class labels";
    const char *bad = NULL;
    for (uint32_t c = 0; c < k && !bad; c++)
        if (hog_class_index_find(&ix, cl[c]) != (int64_t)c)
            bad = "a class label is listed twice";
    hog_class_index_free(&ix);
    return bad;
}

#endif
