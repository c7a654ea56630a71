/* What test_stream.c and test_stream_train.c share: random sparse data
 * and a chunked .hgb of it. */
#ifndef HOG_TEST_STREAM_TESTS_H
#define HOG_TEST_STREAM_TESTS_H

#include <criterion/criterion.h>
#include <stdio.h>

#include "io/io.h"
#include "synth.h"

/* Random sparse data: rows of 0..2*nnz nonzeros, labels +1/-1 from a
 * planted direction with some noise, so that training moves. */
static inline hog_data *make_data(uint64_t rows, uint32_t features,
                                  unsigned nnz, uint64_t seed)
{
    hog_err err = { { 0 } };
    hog_data *d = th_synth(&(struct th_synth){
        .rows = rows, .features = features, .layout = TH_SYNTH_GAPS,
        .nnz = nnz, .values = TH_SYNTH_UNIFORM, .seed = seed,
        .period = 3, .first = { .value = 1.0 }, .rest = { .value = -0.5 },
        .noise = 0.3 }, &err);
    cr_assert(d, "%s", err.msg);
    return d;
}

/* A .hgb of random data with chunks of about `target` payload bytes. */
static inline const char *make_file(const char *dir, const char *name,
                                    uint64_t rows, uint64_t target,
                                    uint64_t seed)
{
    static char paths[8][1100];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    hog_data *d = make_data(rows, 3000, 12, seed);
    hog_err err;
    cr_assert_eq(hog_hgb_save_chunked(d, p, 0, 0, target, &err), HOG_OK, "%s",
                 err.msg);
    hog_data_free(d);
    return p;
}

#endif
