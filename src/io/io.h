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
/* The same with exactly nslices slices (threads), whatever the input size:
 * for tests that compare parallel against serial parsing on small files. */
hog_status hog_parse_svm_slices(const char *buf, size_t len, const char *name,
                                const hog_load_opts *o, unsigned nslices,
                                hog_data **out, hog_err *err);

/* ---- .hgb binary cache (hgb.c) -------------------------------------------- */

#define HOG_HGB_MAGIC "HOGDATA\0"
#define HOG_HGB_VERSION 1u
#define HOG_HGB_ALIGN 4096u

/* True when the first bytes of a file are the .hgb magic. */
bool hog_hgb_sniff(const void *head, size_t len);
/* Loads a whole .hgb file (o may be NULL: threads = all CPUs). */
hog_status hog_hgb_load(const char *path, const hog_load_opts *o,
                        hog_data **out, hog_err *err);
/* Writes d as .hgb (temporary name, then rename); src_size and src_mtime
 * describe the text file it came from (0 when none), so that a stale cache
 * can be told apart. */
hog_status hog_hgb_save(const hog_data *d, const char *path, uint64_t src_size,
                        int64_t src_mtime, hog_err *err);
#define HOG_HGB_CHUNK_TARGET (4u << 20) /* payload bytes per chunk */
/* hog_hgb_save with a chosen chunk payload target (tests use tiny ones). */
hog_status hog_hgb_save_chunked(const hog_data *d, const char *path,
                                uint64_t src_size, int64_t src_mtime,
                                uint64_t chunk_target, hog_err *err);

/* Reading chunk by chunk (the streamer). Layout in docs/FORMATS.md. */
#define HOG_HGB_CHUNK_MAGIC "HGBC"
#define HOG_HGB_CHUNK_HEADER 64u /* bytes before a chunk's payload */

struct hog_hgb_chunk {
    uint64_t offset;    /* file offset, a multiple of HOG_HGB_ALIGN */
    uint64_t bytes;     /* chunk header + payload + padding, multiple of 4096 */
    uint64_t first_row; /* global index of its first row */
    uint64_t first_nnz; /* global index of its first nonzero */
    uint64_t rows, nnz;
};

struct hog_hgb_info {
    int fd;             /* open read-only; closed by hog_hgb_info_close */
    uint32_t version;
    uint64_t rows, n_features, nnz, n_chunks;
    uint64_t src_size;
    int64_t src_mtime;
    enum hog_label_kind labels;
    double label_pos, label_neg;
    uint64_t n_pos;
    uint64_t file_size;
    uint64_t max_chunk_bytes;      /* largest chunk: the buffer a reader needs */
    struct hog_hgb_chunk *chunks;  /* n_chunks entries, in file order */
};

/* Opens path, checks the header and the chunk table (CRCs, sizes against
 * the file size) and fills info. Nothing of the chunks is read. */
hog_status hog_hgb_open_info(const char *path, struct hog_hgb_info *info,
                             hog_err *err);
void hog_hgb_info_close(struct hog_hgb_info *info);
/* Checks chunk k read whole into buf (info->chunks[k].bytes bytes from its
 * offset; buf aligned to at least 8 bytes, HOG_HGB_ALIGN for O_DIRECT):
 * header, CRC of payload and padding, row offsets, indices below
 * n_features. On success m views the chunk inside buf, with local offsets
 * (m->off[0] == 0). name is used in messages. */
hog_status hog_hgb_chunk_verify(const struct hog_hgb_info *info, uint64_t k,
                                const void *buf, const char *name,
                                struct hog_csr *m, hog_err *err);

/* ---- model files (model.c) ------------------------------------------------ */

#define HOG_HGM_MAGIC "HOGMODL\0"
#define HOG_HGM_VERSION 1u

/* ---- training checkpoints (checkpoint.c) --------------------------------- */

#include "core/fit.h"

#define HOG_CKPT_MAGIC "HOGCKPT\0"
#define HOG_CKPT_VERSION 1u

/* A checkpoint file: what it belongs to (checked on resume) and the state.
 * Layout in docs/RELIABILITY.md; every byte is covered by a CRC32C. */
struct hog_ckpt {
    uint32_t algo, loss, schedule;
    double eta, l1, l2, power, bias;
    uint64_t seed;
    uint64_t rows, nnz, n_features;
    uint32_t data_crc;          /* hog_ckpt_data_crc() of the training set */
    uint64_t ckpt_rows;         /* the cadence it was written with */
    uint32_t ckpt_epochs;
    struct hog_train_state st;  /* arrays owned (hog_ckpt_free) */
};

/* CRC32C over the rows, labels, indices and values of d. */
uint32_t hog_ckpt_data_crc(const hog_data *d);
hog_status hog_ckpt_save(const struct hog_ckpt *c, const char *path,
                         hog_err *err);
/* Reads and checks a checkpoint: magic, version (a newer one is refused
 * with its number), CRCs, sizes against the file size before allocating. */
hog_status hog_ckpt_load(const char *path, struct hog_ckpt *c, hog_err *err);
void hog_ckpt_free(struct hog_ckpt *c);

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
