/* The tests' synthetic sparse problems: one generator, its options naming
 * what the suites used to write out each time (where the nonzeros lie,
 * their values, the planted weights, the labels). No Criterion here: the
 * tsan_*.c programs link it too. */
#ifndef HOG_TEST_SYNTH_H
#define HOG_TEST_SYNTH_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"

/* Where a row's nonzeros lie; every row's indices strictly increase. */
enum th_synth_layout {
    /* each feature present with probability density, tried in order */
    TH_SYNTH_COIN,
    /* below(2 nnz + 1) tries at increasing random gaps of up to
     * 2 features / (tries + 1) + 1; a try past the last feature ends the
     * row */
    TH_SYNTH_GAPS,
    /* nnz_min + below(nnz_max - nnz_min + 1) draws of feature
     * features * u^3 (a few frequent features, a long tail), repeats
     * merged */
    TH_SYNTH_SKEW,
    /* nnz entries: the hot features 0 .. hot-1 in every row, then cold
     * ones at increasing random gaps */
    TH_SYNTH_HOT,
};

enum th_synth_values {
    TH_SYNTH_NORMAL,  /* standard normal */
    TH_SYNTH_UNIFORM, /* 0.1 + uniform [0, 1) */
};

/* A planted weight: a constant, or a standard-normal draw. */
struct th_synth_weight {
    bool normal;
    double value;
};

struct th_synth {
    uint64_t rows;
    uint32_t features;
    enum th_synth_layout layout;
    double density;           /* TH_SYNTH_COIN */
    unsigned nnz;             /* TH_SYNTH_GAPS: half the most tries;
                               * TH_SYNTH_HOT: entries per row */
    unsigned nnz_min, nnz_max; /* TH_SYNTH_SKEW */
    unsigned hot;             /* TH_SYNTH_HOT */
    enum th_synth_values values;
    uint64_t seed, stream;    /* hog_rng_seed(seed, stream) */
    /* The planted weight of feature j: `first` where j % period == 0,
     * `rest` elsewhere (period 0 or 1: `first` everywhere). The normal
     * ones are drawn in feature order before any row; {0} plants zero. */
    unsigned period;
    struct th_synth_weight first, rest;
    /* The margin: offset + the planted weights times the row, plus
     * noise times a normal draw after the row's entries (none when 0). */
    double offset, noise;
    bool regression;    /* the label is the margin, else its sign (+1/-1) */
    bool coin_labels;   /* instead: -1 or +1 by a uniform draw after the row */
    bool infer_features; /* n_features from the largest index, not features */
};

/* The problem o describes, hog_data_wrap'ed; NULL (err set) when out of
 * memory. The same options give the same bytes on every machine. */
hog_data *th_synth(const struct th_synth *o, hog_err *err);

/* Relabels d into k classes: row i gets step * (c + 1) for the class c
 * whose planted model scores it highest (the k models' weights uniform in
 * [-0.5, 0.5), drawn from stream `stream` of `seed`, class by class), and
 * the labels are scanned again. False when out of memory. */
bool th_label_argmax(hog_data *d, unsigned k, double step, uint64_t seed,
                     uint64_t stream);

/* The serial trainers' order of n rows (or batches) for the references:
 * the identity, and *rng seeded as the trainers seed theirs (seed, stream
 * 0), so that hog_shuffle_u64(rng, order, n) before each epoch gives the
 * trainers' permutations. NULL when out of memory. */
uint64_t *th_serial_order(uint64_t n, uint64_t seed, struct hog_rng *rng);

#endif
