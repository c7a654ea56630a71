/*
 * What the text parser's machinery (parse.c: windows, slices, threads, the
 * growing CSR) shares with the parser of each text format's lines
 * (parse_svm.c: LIBSVM, parse_vw.c: Vowpal Wabbit): the slice a thread
 * fills and the table of formats. A format is one function that parses
 * whole lines onto a slice's arrays. Private to src/io/.
 */
#ifndef HOG_IO_PARSE_INT_H
#define HOG_IO_PARSE_INT_H

#include "io/io.h"
#include "io/parse_num.h"

struct hog_slice;

/* One slice's feature names (--keep-names; io/names.c): each distinct
 * (weight, name) once, as records in buf found through an open-addressed
 * table of their offsets. */
struct hog_name_set {
    unsigned char *buf;
    size_t len, cap;
    uint64_t *slot, nslot, used;
};
/* The name part[0]^part[1]^... (parts joined by '^') of the feature of
 * hash h, in weight pos, added unless there; false: out of memory. */
bool hog_name_set_add(struct hog_name_set *s, uint32_t h, uint32_t pos,
                      const char *const part[], const size_t len[],
                      unsigned parts);
void hog_name_set_free(struct hog_name_set *s);
/* The sets' names, sorted and each once, as *out. */
hog_status hog_names_merge(struct hog_name_set *const sets[], unsigned nsets,
                           struct hog_names **out, hog_err *err);

/* One text format: its lines parsed onto a slice (every line ends with
 * '\n', end[-1] too); false with the slice's status set on the first
 * error, whose line is s->lines + the lines before it in [p, end). */
struct hog_text_format {
    hog_format id;
    const char *name;  /* "LIBSVM", "Vowpal Wabbit" */
    bool (*parse_lines)(struct hog_slice *s, const char *p, const char *end);
    /* Hashes its features as it parses them (names have no index to
     * keep); otherwise its integer indices are hashed after each slice's
     * lines, when hashing is asked for (parse.c), and not looked at
     * otherwise. */
    bool hashes_names;
};

extern const struct hog_text_format hog_text_libsvm; /* parse_svm.c */
extern const struct hog_text_format hog_text_vw;     /* parse_vw.c */

/* What one thread builds from its slice. off has rows + 1 entries, local. */
struct hog_slice {
    const char *beg, *end;
    const char *name;
    bool zero_based;
    bool unlabelled;      /* rows without a label read, labelled NaN */
    const struct hog_text_format *fmt;
    const struct hog_hash_space *hash; /* NULL: indices as written */
    uint64_t rows, nnz, cap_rows, cap_nnz;
    uint64_t want_rows, want_nnz; /* the first arrays' capacity where the
                                     parser knows the whole text (else 0:
                                     from the slice's own bytes) */
    uint64_t *off;
    float *y;
    uint32_t *idx;
    float *val;
    uint8_t *ns;          /* with interactions: each entry's namespace
                             (struct hog_csr's ns), cap_nnz; else NULL */
    bool keep_ns;
    struct hog_name_set *names; /* --keep-names (VW text); else NULL */
    float *imp;           /* importance of each row (VW); NULL while every
                             row's is 1, then cap_rows entries */
    uint64_t lines;       /* newlines seen (all of them when status is OK) */
    uint64_t nf;          /* the largest index + 1 its rows hold, as
                             written (LIBSVM; hashing's are below the
                             table's size) */
    hog_status status;
    uint64_t err_line;    /* 1-based line within the slice */
    char reason[512];
    /* hashing: this feed's counts, and the scratch of hog_row_merge */
    uint64_t collisions, merged;
    struct hog_hash_scratch scratch;
    /* phase two: where this slice lands in the final arrays */
    uint64_t row_base, nnz_base;
    uint64_t *dst_off;
    float *dst_y, *dst_val, *dst_imp;
    uint32_t *dst_idx;
    uint8_t *dst_ns;
} __attribute__((aligned(HOG_CACHELINE)));

/* Records the error of line `line` (1-based within the slice). */
void hog_slice_fail(struct hog_slice *s, hog_status st, uint64_t line,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Room for one more row, and for one more nonzero (false: out of memory). */
bool hog_slice_grow_rows(struct hog_slice *s);
bool hog_slice_grow_nnz(struct hog_slice *s);
/* Row `row`'s importance v (rows' not set are 1); false: out of memory. */
bool hog_slice_set_importance(struct hog_slice *s, uint64_t row, float v);

#endif
