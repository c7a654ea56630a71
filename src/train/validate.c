/*
 * The options checked against the training data before anything is
 * allocated: each refusal one sentence naming the option and what to do.
 */
#include "train/train.h"

#include "core/loss.h"
#include "coordinate/coordinate.h"
#include "newton/newton.h"
#include "gpu/gpu.h"

#include <math.h>

bool hog_train_is_multiclass(const hog_train_opts *o, const hog_data *train)
{
    return train && hog_loss_is_classification(o->loss) &&
           (train->labels != HOG_LABELS_BINARY || o->n_classes);
}

/* What K classes do not run with (yet), each in a sentence. */
static hog_status multiclass_validate(const hog_train_opts *o, hog_err *err)
{
    if (o->multiclass == HOG_MULTICLASS_SOFTMAX &&
        o->loss != HOG_LOSS_LOGISTIC)
        return hog_errf(err, HOG_EINVAL,
                        "--multiclass softmax is multinomial logistic "
                        "regression and needs the logistic loss, not %s "
                        "(one-vs-rest, --multiclass ovr, takes every loss)",
                        hog_loss_name(o->loss));
    if (o->multiclass == HOG_MULTICLASS_SOFTMAX) {
        const struct hog_algo_row *r = hog_algo_row(o->algo);
        if (r && !r->softmax)
            return hog_errf(err, HOG_ENOTSUP,
                            "--multiclass softmax runs with --algo serial, "
                            "hogwild and cyclades; %s trains K classes "
                            "one-vs-rest (--multiclass ovr)", r->title);
        /* softmax.c: Hogwild! on one shared K-wide model, plain stores */
        const char *what = o->update != HOG_UPDATE_NONE ? "--update"
                           : o->replicas != HOG_REPLICAS_SHARED
                               ? "--replicas"
                           : o->hot_count ? "--hot" : NULL;
        if (what)
            return hog_errf(err, HOG_ENOTSUP,
                            "--multiclass softmax runs Hogwild! on one "
                            "shared model with lock-free updates only; drop "
                            "%s (or train one-vs-rest: --multiclass ovr)",
                            what);
    }
    if (hog_gpu_requested(o))
        return hog_errf(err, HOG_ENOTSUP,
                        "the GPU trainer takes two classes only; the "
                        "training labels have more (train K classes on the "
                        "CPUs: drop --gpus)");
    return HOG_OK;
}

/* LIBLINEAR's C, the validation set, early stopping and the warm start,
 * as far as they can be checked without the model (their ranges are the
 * options' table's). */
static hog_status validation_validate(const hog_train_opts *o, hog_err *err)
{
    if (o->holdout > 0 && o->validation)
        return hog_errf(err, HOG_EINVAL, "a holdout and a validation set "
                        "both name the validation rows; give one");
    if (o->early_stop && !(o->holdout > 0) && !o->validation)
        return hog_errf(err, HOG_EINVAL, "early stopping watches the "
                        "validation loss and needs a validation set (a "
                        "holdout share, or a validation data set)");
    if (o->early_stop && (o->average || o->reduce))
        return hog_errf(err, HOG_ENOTSUP, "early stopping is not taken "
                        "across processes: each would stop at its own "
                        "epoch; drop --early-stop with --world or mpirun");
    if (o->normalize && o->reduce)
        return hog_errf(err, HOG_ENOTSUP, "--normalize learns its scales "
                        "from one process's rows, and exact solving across "
                        "processes needs the same problem on every rank; "
                        "scale the data first, or drop --world");
    if (o->average && o->reduce)
        return hog_errf(err, HOG_EINVAL, "model averaging and exact solving "
                        "across processes are two ways to combine them; "
                        "give one");
    if (o->early_stop && (o->checkpoint || o->resume))
        return hog_errf(err, HOG_ENOTSUP, "checkpoints do not hold early "
                        "stopping's best epoch yet; drop --checkpoint and "
                        "--resume, or --early-stop");
    if (o->warm_start && o->resume)
        return hog_errf(err, HOG_EINVAL, "a warm start and a resume both "
                        "say where training starts; give one");
    if (o->warm_start && hog_gpu_requested(o))
        return hog_errf(err, HOG_ENOTSUP, "the GPU trainer takes no warm "
                        "start");
    return HOG_OK;
}

/* FTRL-Proximal keeps two sums per coordinate in place of the weights
 * (core/sgd.h): the trainers that read or write the weights array of
 * struct hog_sgd themselves do not take it yet (the algorithms' table
 * refuses Cyclades and coordinate descent). What of o is one of them, in
 * words, or NULL; softmax counts where the labels have K classes, or
 * wherever it is asked for when train is NULL. */
static const char *ftrl_conflict(const hog_train_opts *o,
                                 const hog_data *train)
{
    bool softmax = o->multiclass == HOG_MULTICLASS_SOFTMAX &&
                   (!train || hog_train_is_multiclass(o, train));
    return hog_gpu_requested(o) ? "the GPU trainer (--gpus)"
           : o->replicas != HOG_REPLICAS_SHARED
               ? "--replicas node or core (the replicas are averaged weight "
                 "by weight)"
           : o->hot_count ? "hot-feature replicas (--hot)"
           : o->average ? "model averaging across processes (--world, mpirun)"
           : softmax ? "--multiclass softmax (its K-wide weights are AdaGrad's)"
                     : NULL;
}

static hog_status ftrl_validate(const hog_train_opts *o,
                                const hog_data *train, hog_err *err)
{
    const char *what = ftrl_conflict(o, train);
    if (what)
        return hog_errf(err, HOG_ENOTSUP,
                        "--schedule ftrl does not combine with %s yet; use "
                        "--schedule adagrad there", what);
    return HOG_OK;
}

bool hog_train_ftrl_runs(const hog_train_opts *o)
{
    const struct hog_algo_row *row = hog_algo_row(o->algo);
    return row && (row->caps & HOG_CAP_FTRL) && !ftrl_conflict(o, NULL);
}

/* Each option's type and range are the options' table's to check
 * (options.c, hog_train_opts_resolve, run by every entry point before
 * this); here what the options mean together and for the data. */
hog_status hog_train_validate(const hog_train_opts *o, const hog_data *train,
                              hog_err *err)
{
    /* The coordinate methods take no step size; AdaGrad's and FTRL's
     * per-coordinate rates never shrink a weight past zero. */
    bool stepped = o->algo != HOG_ALGO_SCD && o->algo != HOG_ALGO_DCD &&
                   o->algo != HOG_ALGO_NEWTON && o->algo != HOG_ALGO_LBFGS;
    if (stepped && o->schedule != HOG_SCHED_ADAGRAD &&
        o->schedule != HOG_SCHED_FTRL && o->eta * o->l2 >= 1.0)
        return hog_errf(err, HOG_EINVAL,
                        "eta * l2 = %g: each step would shrink the weights "
                        "past zero; use eta * l2 below 1",
                        o->eta * o->l2);
    if (o->epochs < 1 && !o->warm_start)
        return hog_errf(err, HOG_EINVAL, "epochs must be at least 1 (0 "
                        "only with a warm start: the model as it is)");
    if (!hog_algo_row(o->algo))
        return hog_errf(err, HOG_EINVAL, "unknown algorithm %d",
                        (int)o->algo);
    if (hog_gpu_requested(o)) {
        struct hog_gpu_opts g;
        hog_status st = hog_gpu_opts_from(o, &g, err);
        if (st != HOG_OK)
            return st;
    }
    if (o->average && o->average_blocks == 0)
        return hog_errf(err, HOG_EINVAL, "model averaging needs at least one "
                        "block per epoch");
    hog_status vst = validation_validate(o, err);
    if (vst != HOG_OK)
        return vst;
    /* GPU replicas are a trainer of their own (o->algo unused). */
    if (!hog_gpu_requested(o)) {
        unsigned used = hog_train_opts_caps(o);
        /* one-vs-rest spreads the classes over the threads of any
         * algorithm */
        if (hog_train_is_multiclass(o, train) &&
            o->multiclass == HOG_MULTICLASS_OVR)
            used &= ~(unsigned)HOG_CAP_THREADS;
        if (train && train->cross.n)
            used |= HOG_CAP_INTERACTIONS;
        hog_status st = hog_algo_check(o->algo, used, err);
        if (st != HOG_OK)
            return st;
    }
    if (o->algo == HOG_ALGO_SCD || o->algo == HOG_ALGO_DCD) {
        hog_status st = hog_coord_validate(o, err);
        if (st != HOG_OK)
            return st;
    }
    if (o->algo == HOG_ALGO_NEWTON || o->algo == HOG_ALGO_LBFGS) {
        hog_status st = o->algo == HOG_ALGO_NEWTON
                            ? hog_newton_validate(o, err)
                            : hog_lbfgs_validate(o, err);
        if (st != HOG_OK)
            return st;
    }
    if (!train)
        return hog_errf(err, HOG_EINVAL, "no training data");
    if (o->schedule == HOG_SCHED_FTRL) {
        hog_status st = ftrl_validate(o, train, err);
        if (st != HOG_OK)
            return st;
    }
    if (train->cross.n) {
        /* the rows are crossed in the SGD row loops and the scorers; the
         * trainers with loops of their own do not cross them yet */
        const char *what =
            hog_gpu_requested(o)
                ? "the GPU trainer (--gpus), whose kernels do not cross rows"
            : o->average ? "model averaging across processes, whose "
                           "trainer does not cross rows"
            : o->hot_count ? "hot-feature replicas (--hot), whose loops do "
                             "not cross rows"
            : o->normalize ? "--normalize, whose scales of the stored "
                             "features are not the crossed features'"
                           : NULL;
        if (what)
            return hog_errf(err, HOG_ENOTSUP,
                            "--interactions do not combine with %s; drop "
                            "one of the two", what);
    }
    if (train->m.rows == 0)
        return hog_errf(err, HOG_EINVAL, "the training data has no rows");
    if (hog_train_is_multiclass(o, train)) {
        hog_status st = multiclass_validate(o, err);
        if (st != HOG_OK)
            return st;
    } else if (hog_loss_is_classification(o->loss) &&
               train->labels == HOG_LABELS_BINARY &&
               (train->n_pos == 0 || train->n_pos == train->m.rows)) {
        /* from the summary, not y: a streamed file has only its header */
        return hog_errf(err, HOG_EINVAL,
                        "the training labels take one value only (%g): a "
                        "classifier needs at least two classes",
                        train->n_pos ? train->label_pos : train->label_neg);
    }
    if (hog_train_weighted(o)) {
        if (hog_gpu_requested(o))
            return hog_errf(err, HOG_ENOTSUP,
                            "the GPU trainer does not take row or class "
                            "weights yet; drop --gpus (every CPU algorithm "
                            "takes them)");
        hog_status st = hog_train_row_weights(o, train, NULL, err);
        if (st != HOG_OK)
            return st;
    }
    /* The loaders refuse wider data naming the file; this is for data
     * built through the API. */
    if (train->n_features > HOG_MAX_FEATURES)
        return hog_errf(err, HOG_EINVAL, "the training data has %llu "
                        "features, more than hogtrain supports (%llu)",
                        (unsigned long long)train->n_features,
                        (unsigned long long)HOG_MAX_FEATURES);
    return hog_train_check_memory(o, train, 0, err);
}
