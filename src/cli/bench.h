/*
 * hogtrain bench, for the files that make it up and no one else:
 *   bench.c        the options, the grid and the command's flow
 *   bench_run.c    one run of a cell, medians, the memory stream's pace
 *   bench_table.c  the table, the CSV and the lines under the table
 *   bench_plot.c   the gnuplot script (run by plot.c)
 */
#ifndef HOG_CLI_BENCH_H
#define HOG_CLI_BENCH_H

#include "cli/cli.h"

#define MAX_LIST 32

struct bench_args {
    hog_train_opts o;
    hog_load_opts lo;
    const char *data, *test, *csv, *plot;
    unsigned threads[MAX_LIST], nthreads;
    int update[MAX_LIST];   /* hog_update */
    unsigned nupdate;
    int replicas[MAX_LIST]; /* hog_replicas */
    unsigned nreplicas;
    uint64_t hot[MAX_LIST];
    unsigned nhot;
    unsigned repeat;
    bool quiet;
    bool hogwild, cyclades; /* the --algo list */
};

struct result {
    double nnz_s;     /* nonzeros per second of training */
    double objective; /* final */
    double metric;    /* test (else train) accuracy %, or RMSE */
    double to_obj;    /* seconds to the target objective; INFINITY: never */
    double seconds;
    uint64_t syncs;
    hog_hot_stats hot; /* --hot: what the last run did */
};

struct cell {
    const char *algo;       /* "serial", "control", "hogwild", "cyclades" */
    hog_update update;
    hog_replicas replicas;
    uint64_t hot;           /* hogwild: --hot K (0: plain) */
    char mode[32];          /* the replicas column: shared, core, hot:K */
    unsigned threads;
    struct result r;        /* the median of runs[] */
    struct result *runs;    /* repeat of them */
    double speedup1;        /* over 1 thread of the same row kind */
    double speedup_serial;
    double control;         /* the control's speedup at this thread count */
    double efficiency;      /* speedup1 / control */
};

/* ---- bench_run.c ------------------------------------------------------------- */

/* Run `rep` of cell c; target: the objective of "to obj" (NaN: the run's
 * own final one, for the serial baseline). */
hog_status hog_cli_bench_run_cell(const struct bench_args *a, const hog_data *d,
                                  const hog_data *test, struct cell *c,
                                  unsigned rep, double target, hog_err *err);
/* The median of each field over k results (infinities sort last). */
struct result hog_cli_bench_median_of(const struct result *rs, unsigned k);
/* Nonzeros per second of one thread summing idx and val over the arrays. */
double hog_cli_bench_stream_rate(const hog_data *d, unsigned repeat);
/* The 1-minute load average, NaN when unknown. */
double hog_cli_bench_load_avg(void);

/* ---- bench_table.c ------------------------------------------------------------ */

void hog_cli_bench_print_table(FILE *f, const struct cell *c, unsigned n,
                               bool regression, bool test);
/* --csv FILE, written atomically. */
hog_status hog_cli_bench_save_csv(const char *path, const struct cell *c,
                                  unsigned n, hog_err *err);
/* Under the table on standard output: the stream's pace and Hogwild!'s
 * share of it, the hot replicas, Cyclades against Hogwild!, and what the
 * control and "to obj" columns mean. */
void hog_cli_bench_print_notes(const struct cell *c, unsigned n, double stream,
                               double target);

/* ---- bench_plot.c ------------------------------------------------------------- */

/* --plot FILE (.png or .svg), written atomically. */
hog_status hog_cli_bench_draw_plot(const struct bench_args *a,
                                   const struct cell *c, unsigned n,
                                   const char *title, hog_err *err);

#endif
