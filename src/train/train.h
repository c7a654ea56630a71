/*
 * train: the front door of training. hog_train() (public) validates the
 * options, sets up the model, runs the algorithm the options name, and after
 * each epoch computes the metrics and calls the progress callback. The
 * algorithms sit below it (src/hogwild, later src/cyclades, ...), reached
 * through struct hog_fit (src/core/fit.h).
 */
#ifndef HOG_TRAIN_H
#define HOG_TRAIN_H

#include "core/core.h"

/* Checks o against the training data: a sentence in err and HOG_EINVAL
 * when an option is out of range or does not fit the labels. */
hog_status hog_train_validate(const hog_train_opts *o, const hog_data *train,
                              hog_err *err);

/* A classification loss on labels with more than two values: K classes. */
bool hog_train_is_multiclass(const hog_train_opts *o, const hog_data *train);

/* Sets the step size and schedule that work best for o->loss out of the box
 * (hog_train_opts_init() gives those of the logistic loss). For callers
 * that pick the loss but not the step. */
void hog_train_opts_defaults_for_loss(hog_train_opts *o);

/* ---- the algorithms' table (algos.c) ----------------------------------------- */

/* What an algorithm accepts beyond the options every trainer takes. The
 * first five change what a trainer computes, and the library refuses them
 * where they do not apply; the knobs after them tune one algorithm, and an
 * algorithm without them ignores them in the library (one options struct
 * may serve several algorithms, as in `hogtrain bench`), while the command
 * refuses them when they are typed. Out of core is the row's stream entry. */
enum hog_cap {
    HOG_CAP_THREADS = 1u << 0,     /* more than one thread */
    HOG_CAP_UPDATE = 1u << 1,      /* update modes (--update) */
    HOG_CAP_REPLICAS = 1u << 2,    /* node or core replicas (--replicas) */
    HOG_CAP_CHECKPOINT = 1u << 3,  /* --checkpoint, --resume */
    HOG_CAP_WORLD = 1u << 4,       /* averaging across processes */
    HOG_CAP_HOT = 1u << 5,         /* knob: hot features (--hot) */
    HOG_CAP_BIND = 1u << 6,        /* knob: --bind, --no-smt, --oversubscribe */
    HOG_CAP_BATCH = 1u << 7,       /* knob: --batch-size, --repartition */
    HOG_CAP_TOL = 1u << 8,         /* knob: a stopping rule (--tol) */
};

struct hog_fit;
typedef hog_status hog_algo_fn(struct hog_fit *f, hog_err *err);

struct hog_algo_row {
    const char *name;     /* as the command spells it: "hogwild" */
    const char *title;    /* in sentences: "Hogwild!" */
    hog_algo_fn *run;     /* the data in memory */
    hog_algo_fn *stream;  /* out of core; NULL: needs the data in memory */
    hog_algo_fn *softmax; /* multinomial logistic regression of K classes
                             (--multiclass softmax); NULL: one-vs-rest only */
    unsigned caps;        /* enum hog_cap */
};

/* The row of a, or NULL for a value that names no algorithm. */
const struct hog_algo_row *hog_algo_row(hog_algo a);
/* The name of an algorithm, for messages ("serial", "Hogwild!", ...). */
const char *hog_algo_name(hog_algo a);
/* The command's name of a ("hogwild"), and the algorithm of a name (-1: none). */
const char *hog_algo_cli_name(hog_algo a);
int hog_algo_parse(const char *name);
/* The capabilities o asks for that change what a trainer computes (the
 * first five of enum hog_cap): options that differ from the defaults
 * (hog_train_opts_init) in a way only some algorithms accept. */
unsigned hog_train_opts_caps(const hog_train_opts *o);
/* HOG_OK when algorithm a accepts every capability in used; else
 * HOG_EINVAL and the sentence naming the first option it does not take and
 * the algorithms that do. */
hog_status hog_algo_check(hog_algo a, unsigned used, hog_err *err);

/* ---- --normalize (normalize.c) ------------------------------------------------ */

/* hog_train() on max-abs scaled copies of train's and test's values, the
 * scales then folded into the model's weights. */
hog_status hog_train_normalized(const hog_data *train, const hog_data *test,
                                const hog_train_opts *o, hog_model **out,
                                hog_err *err);

/* ---- row and class weights (weights.c) --------------------------------------- */

/* True when o asks for row or class weights. */
bool hog_train_weighted(const hog_train_opts *o);
/* The class weights o asks for, resolved against train's labels: the k
 * classes in order of first appearance (hog_data_classes) with their
 * weights, "balanced" computed and unlisted labels 1, in two malloc'd
 * arrays the caller frees; k = 0 and NULLs when o asks for none. A label
 * no training row has, a negative or non-finite weight, both balanced and
 * a list: HOG_EINVAL with a sentence. */
hog_status hog_train_class_weights(const hog_train_opts *o,
                                   const hog_data *train, double **labels,
                                   double **weights, uint32_t *k,
                                   hog_err *err);
/* The effective weight of every training row, its row weight times its
 * class weight: checked (finite, >= 0, one row above 0) and, when out is
 * not NULL, stored in a malloc'd array of rows floats (*out NULL when o
 * asks for no weights). The front door's view of the data carries it
 * (hog_data.row_w) to every algorithm. */
hog_status hog_train_row_weights(const hog_train_opts *o,
                                 const hog_data *train, float **out,
                                 hog_err *err);

/* ---- K classes (multiclass.c) ------------------------------------------------ */

/* One-vs-rest: trains f->model's K vectors with row's in-memory run, the
 * classes spread over the threads or one after another (multiclass.c
 * says which when), then calls f->epoch_end once with the whole model. */
hog_status hog_train_ovr(struct hog_fit *f, const struct hog_algo_row *row,
                         hog_err *err);
/* True when one-vs-rest of k classes spreads the classes over the threads
 * (each class on one thread): k >= threads > 1. Else the classes run one
 * after another, each on all threads. */
bool hog_train_ovr_spread(const hog_train_opts *o, uint32_t k);

#endif
