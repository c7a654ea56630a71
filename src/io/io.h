/*
 * io: the LIBSVM/SVMlight parser, the .hgb binary cache, model files and
 * the synthetic data generator. The only module that touches files; it
 * never knows which algorithm runs.
 */
#ifndef HOG_IO_H
#define HOG_IO_H

#include "core/core.h"

#include <stdio.h>

/* ---- LIBSVM text (parse.c) ------------------------------------------------ */

/* Parses LIBSVM/SVMlight text in buf[0..len) with o->threads threads; name
 * is used in messages ("name:line: reason"). */
hog_status hog_parse_svm(const char *buf, size_t len, const char *name,
                         const hog_load_opts *o, hog_data **out, hog_err *err);

/* ---- .hgb binary cache (hgb.c) -------------------------------------------- */

#define HOG_HGB_MAGIC "HOGDATA\0"
#define HOG_HGB_VERSION 1u
#define HOG_HGB_ALIGN 4096u

/* True when the first bytes of a file are the .hgb magic. */
bool hog_hgb_sniff(const void *head, size_t len);
hog_status hog_hgb_load(const char *path, const hog_load_opts *o,
                        hog_data **out, hog_err *err);

/* ---- model files (model.c) ------------------------------------------------ */

#define HOG_HGM_MAGIC "HOGMODL\0"
#define HOG_HGM_VERSION 1u

/* ---- synthetic data (gen.c) ----------------------------------------------- */

struct hog_gen_opts {
    uint64_t rows;
    uint64_t features;
    double nnz_per_row;   /* mean nonzeros per row (Poisson-like around it) */
    double zipf;          /* power-law exponent of feature frequencies (~1.1 like text) */
    double label_noise;   /* probability of flipping a class label / noise sd */
    bool regression;      /* real targets instead of +1/-1 */
    double density_true;  /* fraction of planted weights that are non-zero */
    uint64_t seed;
    unsigned threads;     /* 0 = all online CPUs; the output is the same for any */
};

void hog_gen_opts_init(struct hog_gen_opts *g);
/* Writes LIBSVM text to f (streams: memory use independent of rows). */
hog_status hog_gen_write(const struct hog_gen_opts *g, FILE *f, hog_err *err);
/* The planted model of g: weights by 0-based feature id, and a bias weight
 * (bias value 1) chosen so that the classes are about balanced. Its scores
 * on the written data are the margins the labels were drawn from (loss
 * logistic, or squared for regression). */
hog_status hog_gen_model(const struct hog_gen_opts *g, hog_model **out,
                         hog_err *err);

/* ---- helpers shared by the writers ---------------------------------------- */

/* Opens "path.tmp.PID" for writing; hog_commit_file() fsyncs, closes and
 * renames it over path (or removes it on failure). */
hog_status hog_tmpfile_open(const char *path, char *tmp, size_t tmplen,
                            FILE **out, hog_err *err);
hog_status hog_tmpfile_commit(FILE *f, const char *tmp, const char *path,
                              hog_err *err);
void hog_tmpfile_abort(FILE *f, const char *tmp);

#endif
