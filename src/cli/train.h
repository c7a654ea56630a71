/*
 * hogtrain train, for the files that make it up and no one else:
 *   train.c         the command's flow: load, train, report, save
 *   train_opts.c    the option table and parsing argv
 *   train_help.c    the help and the command's usage line
 *   train_net.c     the scale-out options and joining the group
 *   train_report.c  the JSON report and the summary on standard error
 *   train_cv.c      --cv, --search-C, --plot, the validation set's report
 */
#ifndef HOG_CLI_TRAIN_H
#define HOG_CLI_TRAIN_H

#include "cli/cli.h"
#include "gpu/gpu.h"
#include "net/net.h"
#include "train/train.h"

/* getopt_long values of train's own options. */
enum {
    OPT_SEED = HOG_CLI_OPT_OWN,
    OPT_EPOCHS,
    OPT_LOSS,
    OPT_L1,
    OPT_L2,
    OPT_ETA,
    OPT_SCHEDULE,
    OPT_POWER,
    OPT_EPSILON,
    OPT_QUANTILE_TAU,
    OPT_BIAS,
    OPT_ALGO,
    OPT_UPDATE,
    OPT_JSON,
    OPT_MODEL_FORMAT,
    OPT_GPUS,
    OPT_GPU_STEP,
    OPT_GPU_BATCH,
    OPT_SYNC_EVERY,
    /* scale-out */
    OPT_WORLD,
    OPT_RANK,
    OPT_COORDINATOR,
    OPT_SECRET_FILE,
    OPT_INSECURE,
    OPT_JOB,
    OPT_CONNECT_TIMEOUT,
    OPT_NET_TIMEOUT,
    OPT_SYNC,
    OPT_BMUF_MOMENTUM,
    OPT_BMUF_LR,
    OPT_BMUF_NESTEROV,
    OPT_SHARD,
    OPT_CHECKPOINT,
    OPT_NET_BACKEND,
    OPT_BIND,
    OPT_NO_SMT,
    OPT_OVERSUBSCRIBE,
    OPT_REPLICAS,
    OPT_BATCH_SIZE,
    OPT_REPARTITION,
    OPT_DETERMINISTIC,
    OPT_HOT,
    OPT_TOL,
    OPT_STREAM,
    OPT_MEM_BUDGET,
    OPT_IO,
    OPT_DIRECT,
    OPT_CHECKPOINT_EVERY, /* with OPT_CHECKPOINT: docs/RELIABILITY.md */
    OPT_RESUME,
    OPT_METRICS_EVERY, /* full training-set metrics every K epochs */
    OPT_MULTICLASS,    /* K classes: ovr or softmax */
    OPT_NORMALIZE,     /* max-abs feature scaling, folded into the model */
    OPT_INIT,          /* warm start from a model file */
    OPT_SAVE_STATE,    /* the optimizer's state into the model */
    OPT_AVERAGE,       /* averaged SGD: the mean of the iterates */
    OPT_KEEP_NAMES,    /* the features' names into the model */
    OPT_WEIGHTS,       /* --weights FILE: one weight per training row */
    OPT_CLASS_WEIGHT,  /* --class-weight balanced|LABEL:W,... */
    /* model selection (train_cv.c) */
    OPT_C,             /* LIBLINEAR's C (the shared parser's) */
    OPT_REG,           /* which strength --C sets */
    OPT_CV,            /* K-fold cross-validation */
    OPT_SEARCH_C,      /* the path of C (LIBLINEAR -C) */
    OPT_PLOT,          /* --search-C: the SVG of CV accuracy against C */
    OPT_HOLDOUT,       /* a share of TRAIN kept out for validation */
    OPT_VALIDATION,    /* or a validation file */
    OPT_EARLY_STOP,    /* epochs without a lower validation loss */
    OPT_INTERACTIONS,  /* VW's -q: namespaces crossed as rows are read */
};

/* --net-backend */
enum { NET_BACKEND_TCP, NET_BACKEND_MPI };

/* Scale-out settings. */
struct net_args {
    bool on;                  /* averaging across processes */
    bool mpi;
    int backend;              /* NET_BACKEND_*; -1: not given */
    struct hog_net_opts no;
    const char *secret_file;
    struct hog_avg_opts ao;
    uint64_t sync_every;
    bool shard;
    enum hog_shard_mode shard_mode;
    double *classes;          /* K >= 3: the classes every rank trains, in
                                 the loaded data's first appearance (malloc'd;
                                 the training options point here) */
};

struct train_args {
    struct net_args net;
    hog_train_opts o;
    hog_train_hooks h;   /* progress, cancel, averaging, the stats */
    hog_load_opts lo;
    const char *train, *test, *model, *json;
    const char *hot_arg; /* --hot as typed: its field depends on --algo */
    const char *init;    /* --init MODEL */
    /* Weights (docs/TRAINING.md, "Weights"): the file, read once the
     * training rows are known (train.c), into row_w; --class-weight as
     * typed, and its labels and weights (malloc'd; NULL for balanced). */
    const char *weights, *class_weight;
    float *row_w;
    double *cw_labels, *cw_values;
    hog_model_format fmt;
    bool quiet;
    bool stream;
    /* model selection: --cv K (0: none), --search-C, --plot, --validation */
    unsigned cv;
    bool search_c;
    const char *plot, *validation;
    /* --interactions, every one given, joined by ',' (a.lo.interactions) */
    char interactions[HOG_INTERACTIONS_SPEC_LEN];
};

/* What the report and the summary tell of a finished run. */
struct train_report {
    const struct train_args *a;
    const hog_data *train, *test;
    const hog_stream_stats *stream; /* --stream */
    double load_train_s, load_test_s, train_s, save_s, total_s;
    const struct hog_progress *p;
    const hog_model *m;
    const hog_net *net;        /* scale-out, or NULL */
    const struct hog_avg *avg;
    const hog_cyclades_stats *cyc; /* NULL unless --algo cyclades */
    const hog_hot_stats *hot;      /* NULL unless --algo hogwild --hot K */
    const hog_auto_stats *autos;   /* NULL unless --algo auto chose */
    /* model selection (train_cv.c): NULL when not asked for */
    const hog_cv_result *cv;       /* --cv without --search-C */
    const hog_search_result *search; /* --search-C */
    const hog_data *valid;         /* --validation FILE */
    const hog_valid_stats *vs;     /* with a validation set */
    double load_valid_s;
};

/* ---- train_help.c, train_opts.c ---------------------------------------------- */

extern const struct hog_cli_cmd hog_cli_train_cmd; /* train_help.c */
extern const struct option hog_cli_train_longopts[];

/* Parses argv into a; returns -1 to go on, or an exit status. */
int hog_cli_train_parse(int argc, char **argv, struct train_args *a);

/* ---- train_net.c ------------------------------------------------------------ */

/* The scale-out options after getopt: environment fallbacks, backend,
 * consistency. Returns -1 to go on, or an exit status. */
int hog_cli_train_parse_net(struct train_args *a, const unsigned char *seen);

/* Scale-out: joins the group, takes this rank's shard, agrees on the
 * feature count and the number of averagings per epoch, and hooks the
 * averaging into the training options. */
hog_status hog_cli_train_net_setup(struct train_args *a, hog_data **train,
                                   hog_net **net, struct hog_avg **avg,
                                   hog_err *err);

/* ---- train_report.c --------------------------------------------------------- */

/* --json FILE, written atomically. */
hog_status hog_cli_train_save_json(const struct train_report *r, hog_err *err);
/* After training, unless --quiet: the epochs' table, how Cyclades cut the
 * batches, an epoch cap met before --tol, the hot replicas. */
void hog_cli_train_print_tables(const struct train_report *r);
/* --stream: how the file was read. */
void hog_cli_train_print_stream(const hog_stream_stats *ss);
/* "done: 10 epochs in 3.21 s, test accuracy 84.95%, model written to m.hgm" */
void hog_cli_train_print_summary(const struct train_report *r);

/* ---- train_cv.c -------------------------------------------------------------- */

/* --cv K, and --search-C: the cross-validation or the path of C on train,
 * their table and summary on standard error (unless --quiet) and --plot;
 * for --search-C the best C goes into a->o.C (the refit's, with -o or -t).
 * The result lives in *cv or *search. */
hog_status hog_cli_train_cv(struct train_args *a, const hog_data *train,
                            hog_cv_result *cv, hog_cv_fold *folds,
                            hog_search_result *search, hog_err *err);
/* The report's "cross_validation" or "search_C" object. */
void hog_cli_json_cv(struct hog_json *j, const struct train_report *r);
/* The report's "validation" object (with a validation set). */
void hog_cli_json_validation(struct hog_json *j, const struct train_report *r);
/* "l2 = 1/(C n) = 3.07e-05" for --C, n = rows (0: each fold's). */
void hog_cli_c_strength(char *buf, size_t len, const hog_train_opts *o,
                        uint64_t rows, const hog_model *m);

/* ---- train_classes.c ----------------------------------------------------------- */

/* --json of a K-class model: "classes" with the mode, labels, the threads'
 * use, the per-class table and the confusion matrix. */
void hog_cli_json_classes(struct hog_json *j, const struct train_report *r);

#endif
