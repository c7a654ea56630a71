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

/* The options the caller gave (size-first), completed with the defaults
 * of the fields an older, shorter struct does not have, and resolved
 * (hog_train_opts_resolve). */
hog_status hog_train_opts_take(const hog_train_opts *user,
                               const hog_train_hooks *h, hog_train_opts *o,
                               hog_err *err);
/* The hooks the caller gave (NULL: none), size-first like the options,
 * into *h, whose fields past the caller's size are NULL. */
hog_status hog_train_hooks_take(const hog_train_hooks *user,
                                hog_train_hooks *h, hog_err *err);

/* Checks o, with the hooks h (NULL: none), against the training data: a
 * sentence in err and HOG_EINVAL when an option is out of range or does
 * not fit the labels. The one place validation happens: the algorithms'
 * table, the conflicts' table (conflicts.c), then the data. _stream:
 * train is a streamed file's header (hog_train_stream). */
hog_status hog_train_validate(const hog_train_opts *o,
                              const hog_train_hooks *h,
                              const hog_data *train, hog_err *err);
hog_status hog_train_validate_stream(const hog_train_opts *o,
                                     const hog_train_hooks *h,
                                     const hog_data *train, hog_err *err);

/* --algo auto (o->algo HOG_ALGO_AUTO) settled against the data where it
 * is first known (auto.c): o->algo the serial trainer or Hogwild! with
 * o->replicas core; the choice in h->auto_stats and, where it is not
 * the serial trainer on the threads it was given, a notice. Other
 * algorithms: nothing. stream: train is a streamed file's header. */
void hog_train_auto(hog_train_opts *o, const hog_train_hooks *h,
                    const hog_data *train, bool stream);

/* A classification loss on labels with more than two values: K classes. */
bool hog_train_is_multiclass(const hog_train_opts *o, const hog_data *train);

/* Whether o's algorithm and options, with the hooks h (NULL: none), run
 * --schedule ftrl (the serial trainer and Hogwild!, without what keeps
 * weights of its own: replicas, hot features, process averaging,
 * softmax, the GPU trainer); the default schedule where they do
 * (docs/TRAINING.md, "The default"). */
bool hog_train_ftrl_runs(const hog_train_opts *o, const hog_train_hooks *h);

/* ---- the conflicts between options (conflicts.c) ------------------------------ */

/* What a conflict may depend on beyond the resolved options. The library
 * fills it from the options and hooks (hog_conflict_ctx_of); the command,
 * before it reads any file, from its flags (--validation FILE, --init,
 * --weights, --world, --stream). */
struct hog_conflict_ctx {
    const hog_train_opts *o;
    const hog_data *train; /* NULL: not read yet; the rows about data pass */
    bool stream;           /* out of core (hog_train_stream) */
    bool validation;       /* a validation set is given */
    bool warm;             /* a warm start is given */
    bool weighted;         /* row or class weights */
    bool row_weights;      /* row weights (--weights) */
    bool world;            /* several processes: the model averaged, or
                              one problem solved exactly (reduce) */
    bool average;          /* the hooks average the model (scale-out) */
    bool reduce;           /* the hooks solve one problem exactly */
    bool crossed;          /* the rows are crossed (--interactions) */
};

/* What a row needs to know besides the options: the test gives data of
 * that kind to its example. */
enum hog_conflict_data {
    HOG_CONFLICT_OPTIONS, /* the options (and the context's flags) alone */
    HOG_CONFLICT_DATA,    /* the data read, any */
    HOG_CONFLICT_CLASSES, /* the data read, with K classes */
};

struct hog_conflict {
    const char *options;   /* the options involved: "holdout, validation" */
    hog_status status;     /* HOG_EINVAL, or HOG_ENOTSUP for "not yet" */
    bool (*hit)(const struct hog_conflict_ctx *c);
    enum hog_conflict_data data;
    const char *sentence;  /* what the user reads; one %s where detail */
    const char *(*detail)(const struct hog_conflict_ctx *c, char *buf,
                          size_t len);
    /* options (from hog_train_opts_init) and context that break the row
     * and no row before it: tests/test_options.c */
    void (*example)(hog_train_opts *o, struct hog_conflict_ctx *c);
};

/* Row i of the table in the order it is walked; NULL past the last. */
const struct hog_conflict *hog_train_conflict(size_t i);
void hog_conflict_ctx_of(struct hog_conflict_ctx *c, const hog_train_opts *o,
                         const hog_train_hooks *h, const hog_data *train,
                         bool stream);
/* The first row that holds, as its sentence in err; HOG_OK when none. */
hog_status hog_train_conflicts_check(const struct hog_conflict_ctx *c,
                                     hog_err *err);
/* The rows about o alone (the data not read yet); stream: out of core. */
hog_status hog_train_conflicts_options(const hog_train_opts *o,
                                       const hog_train_hooks *h, bool stream,
                                       hog_err *err);
hog_status hog_conflict_refuse(const struct hog_conflict *r,
                               const struct hog_conflict_ctx *c, hog_err *err);

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
    HOG_CAP_WARM = 1u << 9,        /* a warm start (hog_train_opts.warm_start,
                                      core/fit.h's init); refused like the
                                      first five */
    HOG_CAP_INTERACTIONS = 1u << 10, /* rows crossed as they are read
                                        (a data set loaded with
                                        --interactions); refused likewise */
    HOG_CAP_FTRL = 1u << 11,       /* --schedule ftrl (core/sgd.h's (z, n)
                                      in place of the weights) */
    HOG_CAP_REDUCE = 1u << 12,     /* exact solving across processes
                                      (hog_train_opts.reduce) */
    HOG_CAP_GPU = 1u << 13,        /* runs its products on the GPUs with
                                      --gpus (core/products.h); without it
                                      --gpus trains GPU replicas in its
                                      place */
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
/* The capabilities o and the hooks h (NULL: none) ask for that change
 * what a trainer computes (the first five of enum hog_cap): options that
 * differ from the defaults (hog_train_opts_init) in a way only some
 * algorithms accept, averaging or reducing across processes. */
unsigned hog_train_opts_caps(const hog_train_opts *o, const hog_train_hooks *h);
/* HOG_OK when algorithm a accepts every capability in used; else
 * HOG_EINVAL and the sentence naming the first option it does not take and
 * the algorithms that do. */
hog_status hog_algo_check(hog_algo a, unsigned used, hog_err *err);
/* True when o's --gpus trains GPU replicas (src/gpu's trainer, o->algo
 * unused): GPUs asked for by an algorithm without HOG_CAP_GPU. */
bool hog_train_gpu_replicas(const hog_train_opts *o);

/* ---- --normalize (normalize.c) ------------------------------------------------ */

/* hog_train()'s run (hog_train_check, hog_train_run) on max-abs scaled
 * copies of train's and test's values, the scales then folded into the
 * model's weights; o checked already against train (hog_train_check). */
hog_status hog_train_normalized(const hog_data *train, const hog_data *test,
                                const hog_train_opts *o,
                                const hog_train_hooks *h, hog_model **out,
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

/* One-vs-rest: trains f->model's K vectors with row's in-memory run (or
 * its streamed one when f->stream is set, the classes then one after
 * another, each a pass of the file per epoch), the
 * classes spread over the threads or one after another (multiclass.c
 * says which when), then calls f->epoch_end once with the whole model.
 * With f->o->early_stop and f->o->validation each class stops on its own
 * binary validation loss and keeps its best epoch's vector; what they did
 * goes into *early (when not NULL: epochs_run, best_epoch, early_stopped,
 * classes_stopped). */
hog_status hog_train_ovr(struct hog_fit *f, const struct hog_algo_row *row,
                         hog_valid_stats *early, hog_err *err);
/* d as one-vs-rest's binary problem of the class `label` (label ==
 * label against the rest, n_pos rows of it), the arrays shared. */
hog_data hog_train_class_view(const hog_data *d, double label,
                              uint64_t n_pos);
/* True when one-vs-rest of k classes spreads the classes over the threads
 * (each class on one thread): k >= threads > 1. Else the classes run one
 * after another, each on all threads. */
bool hog_train_ovr_spread(const hog_train_opts *o, uint32_t k);
/* The classes of a streamed file, in first appearance, and the rows of
 * each (*labels, *rows: malloc'd, k of each), from one pass over its
 * chunks in file order; at most HOG_MAX_CLASSES classes. Classes that look
 * like a regression target are a notice through h (doubt.c). The stream
 * is left with nothing queued, ready to train. */
struct hog_stream;
hog_status hog_train_stream_classes(struct hog_stream *s,
                                    const hog_train_hooks *h, double **labels,
                                    uint64_t **rows, uint32_t *k,
                                    hog_err *err);

/* ---- labels that look like a regression target (doubt.c) -------------------- */

/* Whether the k classes labels[c] of rows[c] rows each look like numbers
 * to predict (doubt.c says when); if so the one-line warning, which names
 * --loss squared, in buf. */
bool hog_train_classes_doubt(const double *labels, const uint64_t *rows,
                             uint32_t k, char *buf, size_t len);
/* The same for d's labels in memory when o would train K classes of them
 * (and does not name its classes, o->n_classes). */
bool hog_train_data_classes_doubt(const hog_train_opts *o, const hog_data *d,
                                  char *buf, size_t len);
/* A one-line notice through h->log, else (h or its log NULL)
 * "hogtrain: LINE" on stderr. */
void hog_train_notice(const hog_train_hooks *h, const char *line);

/* ---- jobs spread over threads (spread.c) ------------------------------------ */

/* The threads o asks for: o->threads, 0 meaning every allowed CPU. */
unsigned hog_train_threads(const hog_train_opts *o);
/* The worker threads for n independent trainings under o: hog_train_threads
 * when n is at least that and more than one (each job then trains on one
 * thread), else 1 (the jobs one after another, each on all threads). */
unsigned hog_train_spread_workers(const hog_train_opts *o, uint32_t n);
/* Runs job(ctx, i, worker, err) for i = 0 .. n-1 on `workers` threads
 * (the caller's among them), each claiming the next i until none is left
 * or a job has failed; worker is 0 .. workers-1. Returns the first
 * failure (its status and message) or HOG_OK. */
typedef hog_status hog_spread_job(void *ctx, uint32_t i, unsigned worker,
                                  hog_err *err);
hog_status hog_train_spread(uint32_t n, unsigned workers, hog_spread_job *job,
                            void *ctx, hog_err *err);

/* ---- early stopping (early.c) -------------------------------------------------- */

/* The validation loss epoch by epoch: the lowest so far, the weights of
 * its epoch, and whether the patience has run out. */
struct hog_early {
    unsigned patience;   /* epochs without a lower loss before stopping;
                            0: track the best epoch only, keep no weights */
    uint64_t len;        /* floats of the weights kept */
    float *best_w;       /* the best epoch's weights (patience > 0) */
    double best_loss;    /* +inf before the first epoch */
    unsigned best_epoch; /* 0 before the first epoch */
    unsigned bad;        /* epochs since the best */
    unsigned epochs;     /* epochs seen */
    bool stopped;        /* the patience ran out */
};
hog_status hog_early_init(struct hog_early *e, unsigned patience,
                          uint64_t len, hog_err *err);
/* After `epoch`, whose weights w (len floats) have validation loss `loss`
 * (NaN counts as no improvement): true when training should stop. */
bool hog_early_step(struct hog_early *e, unsigned epoch, double loss,
                    const float *w);
/* The best epoch's weights into w (nothing when none was kept). */
void hog_early_restore(const struct hog_early *e, float *w);
void hog_early_free(struct hog_early *e);

/* ---- the front door's parts (train.c calls them) ------------------------------ */

/* The options checked against train (hog_train_validate), and a test or
 * validation set's interactions against train's (run.c). */
hog_status hog_train_check(const hog_data *train, const hog_data *test,
                           const hog_train_opts *o, const hog_train_hooks *h,
                           hog_err *err);
/* hog_train() in memory once the options are taken and checked, the
 * holdout split and C resolved, without --normalize (run.c). */
hog_status hog_train_run(const hog_data *train, const hog_data *test,
                         const hog_train_opts *o, const hog_train_hooks *h,
                         hog_model **out, hog_err *err);

/* Refuses, before anything is allocated, a model of train's features and
 * k classes (0: one vector) that cannot fit in the memory available, with
 * a sentence naming the --hash-bits that would (memory.c). */
hog_status hog_train_check_memory(const hog_train_opts *o,
                                  const hog_data *train, uint32_t k,
                                  hog_err *err);
/* The optimizer's state (state.c): f->warm from a warm start's model
 * that keeps one (into *warm, which must outlive the run), and a state
 * for the model when o->save_state (f->keep_last). */
struct hog_train_state;
hog_status hog_train_state_begin(struct hog_fit *f,
                                 struct hog_train_state *warm, hog_err *err);
/* One-vs-rest: class c's part of the warm state w. */
struct hog_train_state hog_train_state_class(const struct hog_train_state *w,
                                             uint32_t c);
/* From the save hook: s into the model's state when it is the last
 * epoch's end (one-vs-rest: class s->ovr_class's). */
void hog_train_state_keep(struct hog_fit *f, const struct hog_train_state *s);


/* The model for train's features and labels, options recorded; K classes
 * checked against the memory (setup.c). */
hog_status hog_train_new_model(const hog_data *train, const hog_train_opts *o,
                               hog_model **out, hog_err *err);
/* The warm start's weights for the model m (NULL without one), or a
 * sentence when they do not fit it. */
hog_status hog_train_warm_weights(const hog_train_opts *o, const hog_model *m,
                                  const float **out, hog_err *err);
/* The end of a run: m to the caller on success, else freed; returns st. */
hog_status hog_train_hand_out(hog_status st, hog_model *m, hog_model **out);

/* The front door's state of a run, the ctx of struct hog_fit's hooks
 * (epoch.c). */
struct hog_front {
    const hog_data *test;
    double total_seconds;
    double next_tick;
    /* the validation set (o->validation: the caller's or the holdout) and
     * early stopping on it; early.patience 0 where one-vs-rest's classes
     * stop on their own (multiclass.c) */
    const hog_data *valid;
    bool watch;              /* evaluate it after every epoch */
    struct hog_early early;
    hog_valid_stats ovr;     /* one-vs-rest: what its classes did */
};
/* struct hog_fit's tick and epoch_end (core/fit.h), f->ctx a struct
 * hog_front. */
void hog_train_tick(struct hog_fit *f, unsigned epoch, uint64_t done,
                    uint64_t total);
hog_status hog_train_epoch_end(struct hog_fit *f, unsigned epoch,
                               double seconds, hog_err *err);
/* The test and validation sets and early stopping of f's run. */
hog_status hog_train_front_begin(struct hog_front *c, const struct hog_fit *f,
                                 const hog_data *test, hog_err *err);
/* After the algorithm's status st: early stopping's stop is a success,
 * the best epoch's weights go back into f's model, the hooks' valid_stats
 * is filled; returns the run's status. */
hog_status hog_train_front_end(struct hog_front *c, hog_status st,
                               const struct hog_fit *f, uint64_t train_rows);

/* ---- the caller's hooks and stats structs (hooks.c) ----------------------------- */

/* The *_stats the caller's hooks point to, each filled in a full struct
 * of the library's own and handed back within the caller's size (core's
 * hog_out_take, hog_out_give). */
struct hog_train_outs {
    hog_auto_stats autos; /* always: validate.c reads whether auto chose */
    hog_cyclades_stats cyc;
    hog_hot_stats hot;
    hog_stream_stats stream;
    hog_valid_stats valid;
    hog_cyclades_stats *cyc_to; /* the caller's, or NULL */
    hog_hot_stats *hot_to;
    hog_stream_stats *stream_to;
    hog_valid_stats *valid_to;
    hog_auto_stats *autos_to;
};
/* Checks the sizes of the stats h points to (HOG_EINVAL with a sentence)
 * and points h at t's copies of them. */
hog_status hog_train_outs_take(hog_train_hooks *h, struct hog_train_outs *t,
                               hog_err *err);
/* Hands t's copies back to the caller's structs. */
void hog_train_outs_give(const struct hog_train_outs *t);

/* ---- stratified splits of the rows (split.c) ------------------------------------ */

/* Deals the rows of d into `folds` folds, fold[i] in [0, folds): within
 * each stratum (classification: a class, the two of binary labels or the
 * K of a classification loss on more label values; regression: all rows)
 * a shuffle seeded by seed, then round robin, each stratum starting where
 * the previous one's deal ended. Each fold holds each stratum's share
 * within one row, and the folds' sizes differ by at most one. */
hog_status hog_split_folds(const hog_data *d, hog_loss loss, unsigned folds,
                           uint64_t seed, uint32_t *fold, hog_err *err);
/* A holdout: part[i] = 1 for about frac of the rows (0 < frac < 1), each
 * stratum's share within one row, 0 for the others; seeded as above. At
 * least one row on each side, else HOG_EINVAL with a sentence. */
hog_status hog_split_holdout(const hog_data *d, hog_loss loss, double frac,
                             uint64_t seed, uint32_t *part, hog_err *err);
/* A copy of the rows i of d (in their order) with part[i] == which (or,
 * other, != which): the parent's features, label kind and labels. */
hog_status hog_data_subset(const hog_data *d, const uint32_t *part,
                           uint32_t which, bool other, hog_data **out,
                           hog_err *err);

/* ---- cross-validation (cv.c), for the search of C (search_c.c) ----------------- */

/* A cross-validation whose folds stay dealt: the same folds for every C. */
struct hog_cv;
hog_status hog_cv_open(const hog_data *d, const hog_train_opts *o,
                       unsigned folds, bool keep_models, struct hog_cv **out,
                       hog_err *err);
/* One cross-validation with o (res->fold as in hog_cross_validate). With
 * keep_models, each fold's model stays and the next run's fold starts
 * from it when warm (the caller checks that the algorithm takes it). */
hog_status hog_cv_run(struct hog_cv *cv, const hog_train_opts *o,
                      const hog_train_hooks *h, bool warm,
                      hog_cv_result *res, hog_err *err);
void hog_cv_close(struct hog_cv *cv);

#endif
