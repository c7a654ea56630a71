/*
 * The training front door: options, dispatch to an algorithm, per-epoch
 * metrics and progress. The objective every algorithm minimises:
 *
 *     (1/n) sum_i v_i loss(y_i, w.x_i + b) + l2/2 |w|^2 + l1 |w|_1
 *
 * with the bias b = w_bias * opts.bias a weight like the others when
 * opts.bias != 0 (LIBLINEAR's -B), and v_i the row's weight (1 without
 * weights; weights.c combines row and class weights once, and the
 * algorithms see them through the front door's view of the data,
 * hog_data.row_w). docs/TRAINING.md maps it to LIBLINEAR.
 */
#include "core/cross.h"
#include "train/train.h"

#include "train/checkpoint.h"

#include "core/fit.h"
#include "core/loss.h"
#include "core/metrics.h"
#include "cyclades/cyclades.h"
#include "gpu/gpu.h"
#include "coordinate/coordinate.h"
#include "hogwild/hogwild.h"
#include "io/io.h"
#include "newton/newton.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* AdaGrad's per-coordinate steps make one eta work across feature scales
 * (binary a9a, tf-idf news20, scaled ijcnn1); these etas reach LIBLINEAR's
 * test accuracy at C = 1 within one to three epochs on those sets
 * (docs/TRAINING.md). The squared loss takes larger steps because its
 * targets are not bounded by 1. */
void hog_train_opts_defaults_for_loss(hog_train_opts *o)
{
    o->schedule = HOG_SCHED_ADAGRAD;
    switch (o->loss) {
    case HOG_LOSS_LOGISTIC:
        o->eta = 0.3;
        break;
    case HOG_LOSS_HINGE:
    case HOG_LOSS_SQHINGE:
        o->eta = 0.1;
        break;
    case HOG_LOSS_SQUARED:
        o->eta = 1.0;
        break;
    }
}

void hog_train_opts_init(hog_train_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->loss = HOG_LOSS_LOGISTIC;
    o->l1 = 0.0;
    o->l2 = 1e-5;
    o->power = 0.5;
    o->bias = 1.0;
    o->epochs = 5;
    o->seed = 1;
    o->threads = 0;
    o->algo = HOG_ALGO_SERIAL;
    o->update = HOG_UPDATE_NONE;
    o->replicas = HOG_REPLICAS_SHARED;
    o->sync_every = 65536;
    o->hot = 1;
    o->tol = 0.01;
    o->direct = -1;
    hog_train_opts_defaults_for_loss(o);
}

static bool finite_nonneg(double x) { return isfinite(x) && x >= 0; }

/* ---- the model's memory -------------------------------------------------------- */

/* Bytes per weight (feature) that training holds at once, from the
 * allocations of each algorithm, and what they are, for the sentence:
 *   the model's float weights (hog_model_new);
 *   serial, Hogwild!, Cyclades (hog_sgd_init): a float working copy, the
 *     lazy-regularization timestamps (l1, or l2 under AdaGrad), AdaGrad's
 *     float sums; Hogwild! with --replicas core: all three per thread
 *     (node: at least one replica, the node count being the pool's);
 *   Cyclades: degrees and owners, and per thread the union-find's parent,
 *     component and touched arrays (and a hot count with hot features);
 *   scd: double weights, column norms, the active set and the column
 *     offsets (and the line search's start under the logistic loss);
 *   dcd: double weights;
 *   newton: nine double vectors (w, the trial w, g, M and CG's five).
 * Arrays that grow with the rows (the data is loaded already, and what
 * the algorithms keep per row is smaller than it) and short-lived ones
 * are left out: a lower bound, so that a refusal is never wrong. */
static uint64_t bytes_per_weight(const hog_train_opts *o, char *what,
                                 size_t len)
{
    unsigned T = o->threads ? o->threads : hog_allowed_cpus();
    bool ada = o->schedule == HOG_SCHED_ADAGRAD;
    bool stamps = o->l1 > 0 || (ada && o->l2 > 0);
    uint64_t b = sizeof(float);
    const char *part[5];
    unsigned n = 0;
    part[n++] = "the weights";
    if (hog_gpu_requested(o)) {
        /* the replicas live in device memory */
    } else if (o->algo == HOG_ALGO_SCD) {
        b += (4 + (o->loss == HOG_LOSS_LOGISTIC)) * sizeof(double);
        part[n++] = "the solver's double-precision weights and column arrays";
    } else if (o->algo == HOG_ALGO_DCD) {
        b += sizeof(double);
        part[n++] = "the solver's double-precision weights";
    } else if (o->algo == HOG_ALGO_NEWTON) {
        b += 9 * sizeof(double);
        part[n++] = "the solver's nine double-precision vectors";
    } else if (o->schedule == HOG_SCHED_FTRL) {
        b += 2 * sizeof(float);
        part[n++] = "FTRL's two sums per weight";
    } else {
        unsigned rep = o->algo == HOG_ALGO_HOGWILD &&
                               o->replicas == HOG_REPLICAS_CORE ? T : 1;
        b += sizeof(float) * (1 + stamps + ada) * rep;
        part[n++] = rep > 1 ? "a working copy per thread" : "a working copy";
        if (ada)
            part[n++] = rep > 1 ? "AdaGrad's sums per thread" : "AdaGrad's sums";
        if (stamps)
            part[n++] = "regularization timestamps";
        if (o->algo == HOG_ALGO_CYCLADES) {
            b += 2 * sizeof(uint32_t) + (uint64_t)T * (3 + (o->hot != 0)) *
                                            sizeof(uint32_t);
            part[n++] = "the conflict graph's arrays per thread";
        }
    }
    size_t k = 0;
    what[0] = '\0';
    for (unsigned i = 0; i < n && k < len; i++)
        k += (size_t)snprintf(what + k, len - k, "%s%s",
                              i == 0 ? "" : i == n - 1 ? " and " : ", ",
                              part[i]);
    return b;
}

/* Refuses, before anything is allocated, a model that cannot fit: a
 * feature index of 4e9 is 16 GB of weights alone, which the kernel would
 * otherwise answer by killing the process partway through. */
/* k classes (0: one vector) add k - 1 model vectors (and, softmax, k - 1
 * working copies). */
/* The bytes a model of nf features and k classes needs to train, at
 * bpw bytes per weight of one vector. */
static uint64_t model_need(const hog_train_opts *o, uint64_t nf, uint32_t k,
                           uint64_t bpw)
{
    uint64_t nw = nf + (o->bias != 0.0);
    uint64_t need = nw * bpw;
    if (k > 1)
        need += nw * sizeof(float) * (k - 1);
    /* softmax.c's working copy is K wide too (its per-feature state is
     * counted once, as above) */
    if (k > 1 && o->multiclass == HOG_MULTICLASS_SOFTMAX)
        need += nw * sizeof(float) * (k - 1);
    return need;
}

/* The --hash-bits to suggest: the most bits up to 24 (16.8 M weights)
 * whose model takes at most half of what is available, and fewer than
 * the data's own when it is hashed already; 0 when none fits. */
static unsigned hash_bits_that_fit(const hog_train_opts *o, uint32_t k,
                                   uint64_t bpw, uint64_t have,
                                   unsigned data_bits)
{
    unsigned b = data_bits && data_bits <= 24 ? data_bits - 1 : 24;
    for (; b >= 1; b--)
        if (model_need(o, UINT64_C(1) << b, k, bpw) <= have / 2)
            return b;
    return 0;
}

static hog_status check_model_memory(const hog_train_opts *o,
                                     const hog_data *train, uint32_t k,
                                     hog_err *err)
{
    char what[256];
    uint64_t nf = train->n_features;
    uint64_t bpw = bytes_per_weight(o, what, sizeof what);
    uint64_t need = model_need(o, nf, k, bpw);
    const char *limit;
    uint64_t have = hog_mem_available(&limit);
    if (need <= have)
        return HOG_OK;
    if (k > 1) {
        size_t l = strlen(what);
        snprintf(what + l, sizeof what - l, " (the weights%s for each of "
                 "%u classes)", o->multiclass == HOG_MULTICLASS_SOFTMAX
                                    ? " and the working copy" : "", k);
    }
    const double gib = 1024.0 * 1024.0 * 1024.0, mib = 1024.0 * 1024.0;
    char remedy[256];
    unsigned b = hash_bits_that_fit(o, k, bpw, have, train->hash.bits);
    if (b)
        snprintf(remedy, sizeof remedy,
                 "hash the features into fewer weights with --hash-bits %u "
                 "(%.1f M weights, %.0f MiB; %.0f MiB with what training "
                 "keeps beside them), or renumber them into a smaller range",
                 b, (double)(UINT64_C(1) << b) / 1e6,
                 (double)(UINT64_C(4) << b) * (k > 1 ? k : 1) / mib,
                 (double)model_need(o, UINT64_C(1) << b, k, bpw) / mib);
    else
        snprintf(remedy, sizeof remedy, "use fewer distinct feature indices "
                 "(renumber them, or hash them with --hash-bits)");
    return hog_errf(err, HOG_ENOMEM,
                    "the training data spans %llu features (%s), and a dense "
                    "model of them needs %.1f GiB for %s, but only %.1f GiB "
                    "is available %s; %s",
                    (unsigned long long)nf,
                    train->hash.bits ? "hashed into 2^bits weights"
                                     : "up to its largest feature index",
                    (double)need / gib, what, (double)have / gib, limit,
                    remedy);
}

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
 * as far as they can be checked without the model. */
static hog_status validation_validate(const hog_train_opts *o, hog_err *err)
{
    if (!finite_nonneg(o->C))
        return hog_errf(err, HOG_EINVAL, "LIBLINEAR's C must be a positive "
                        "number (0: unused), not %g", o->C);
    if (!(o->holdout >= 0 && o->holdout < 1))
        return hog_errf(err, HOG_EINVAL, "the holdout is a share of the "
                        "training rows between 0 and 1 (exclusive), not %g",
                        o->holdout);
    if (o->holdout > 0 && o->validation)
        return hog_errf(err, HOG_EINVAL, "a holdout and a validation set "
                        "both name the validation rows; give one");
    if (o->early_stop && !(o->holdout > 0) && !o->validation)
        return hog_errf(err, HOG_EINVAL, "early stopping watches the "
                        "validation loss and needs a validation set (a "
                        "holdout share, or a validation data set)");
    if (o->early_stop && o->average)
        return hog_errf(err, HOG_ENOTSUP, "early stopping is not taken "
                        "across processes: each would stop at its own "
                        "epoch; drop --early-stop with --world or mpirun");
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

hog_status hog_train_validate(const hog_train_opts *o, const hog_data *train,
                              hog_err *err)
{
    if ((unsigned)o->loss > HOG_LOSS_SQUARED)
        return hog_errf(err, HOG_EINVAL, "unknown loss %d", (int)o->loss);
    if (!(isfinite(o->eta) && o->eta > 0))
        return hog_errf(err, HOG_EINVAL,
                        "the step size eta must be a positive number, not %g",
                        o->eta);
    if (!finite_nonneg(o->l1) || !finite_nonneg(o->l2))
        return hog_errf(err, HOG_EINVAL,
                        "the regularization strengths must be zero or "
                        "positive, not l1 = %g, l2 = %g",
                        o->l1, o->l2);
    if ((unsigned)o->schedule > HOG_SCHED_FTRL)
        return hog_errf(err, HOG_EINVAL, "unknown step schedule %d",
                        (int)o->schedule);
    /* The coordinate methods take no step size; AdaGrad's and FTRL's
     * per-coordinate rates never shrink a weight past zero. */
    bool stepped = o->algo != HOG_ALGO_SCD && o->algo != HOG_ALGO_DCD &&
                   o->algo != HOG_ALGO_NEWTON;
    if (stepped && o->schedule != HOG_SCHED_ADAGRAD &&
        o->schedule != HOG_SCHED_FTRL && o->eta * o->l2 >= 1.0)
        return hog_errf(err, HOG_EINVAL,
                        "eta * l2 = %g: each step would shrink the weights "
                        "past zero; use eta * l2 below 1",
                        o->eta * o->l2);
    if (!finite_nonneg(o->power))
        return hog_errf(err, HOG_EINVAL,
                        "the schedule's power must be zero or positive, "
                        "not %g",
                        o->power);
    if (!isfinite(o->bias))
        return hog_errf(err, HOG_EINVAL, "the bias must be a number, not %g",
                        o->bias);
    if (o->epochs < 1 && !o->warm_start)
        return hog_errf(err, HOG_EINVAL, "epochs must be at least 1 (0 "
                        "only with a warm start: the model as it is)");
    if (!hog_algo_row(o->algo))
        return hog_errf(err, HOG_EINVAL, "unknown algorithm %d",
                        (int)o->algo);
    if ((unsigned)o->update > HOG_UPDATE_MUTEX)
        return hog_errf(err, HOG_EINVAL, "unknown update mode %d",
                        (int)o->update);
    if (hog_gpu_requested(o)) {
        struct hog_gpu_opts g;
        hog_status st = hog_gpu_opts_from(o, &g, err);
        if (st != HOG_OK)
            return st;
    }
    if (o->average && o->average_blocks == 0)
        return hog_errf(err, HOG_EINVAL, "model averaging needs at least one "
                        "block per epoch");
    if ((unsigned)o->replicas > HOG_REPLICAS_CORE)
        return hog_errf(err, HOG_EINVAL, "unknown replica mode %d",
                        (int)o->replicas);
    if (!finite_nonneg(o->tol))
        return hog_errf(err, HOG_EINVAL,
                        "the tolerance must be zero or positive, not %g",
                        o->tol);
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
    if (o->algo == HOG_ALGO_NEWTON) {
        hog_status st = hog_newton_validate(o, err);
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
    if ((unsigned)o->multiclass > HOG_MULTICLASS_SOFTMAX)
        return hog_errf(err, HOG_EINVAL, "unknown multiclass mode %d",
                        (int)o->multiclass);
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
    return check_model_memory(o, train, 0, err);
}

/* ---- hooks the algorithms call ------------------------------------------------ */

struct front {
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

static void tick(struct hog_fit *f, unsigned epoch, uint64_t done,
                 uint64_t total)
{
    struct front *c = f->ctx;
    if (!f->o->progress || done >= total)
        return;
    double now = hog_now();
    if (now < c->next_tick)
        return;
    c->next_tick = now + 0.1;
    f->o->progress(f->o->progress_ctx, epoch, f->o->epochs, done, total,
                   NULL);
}

static hog_status epoch_end(struct hog_fit *f, unsigned epoch, double seconds,
                            hog_err *err)
{
    struct front *c = f->ctx;
    const hog_data *d = f->train;
    c->total_seconds += seconds;
    c->next_tick = hog_now() + 0.1;
    uint64_t nw = hog_model_len(f->model);
    for (uint64_t j = 0; j < nw; j++)
        if (!isfinite(f->model->w[j]))
            return hog_errf(err, HOG_ERANGE,
                            "training diverged in epoch %u (weight %llu is "
                            "%g); use a smaller step size than eta = %g",
                            epoch, (unsigned long long)j, f->model->w[j],
                            f->o->eta);
    /* The validation set first: early stopping needs it whether or not
     * anyone listens, and the last epoch gets the full metrics below. */
    struct hog_metrics vm;
    bool stop = false;
    hog_status st;
    if (c->valid && c->watch) {
        st = hog_metrics_eval_threads(f->model, c->valid, f->o->threads, &vm,
                                      err);
        if (st != HOG_OK)
            return st;
        stop = hog_early_step(&c->early, epoch, vm.loss, f->model->w);
    }
    const hog_status done = stop ? HOG_FIT_STOP : HOG_OK;
    if (!f->o->progress)
        return done; /* nobody listens: no metrics to compute */

    hog_epoch_stats s;
    memset(&s, 0, sizeof s);
    s.epoch = epoch;
    s.seconds = seconds;
    s.total_seconds = c->total_seconds;
    /* The data's rows and nonzeros, each once per epoch, whatever the
     * class count: a row steps K classes at once, which is the kernel's
     * business, not the rate a reader compares with the row count.
     * One-vs-rest's one report covers every class's epochs: the mean
     * epochs a class ran (its stopping rule may end some early). */
    const hog_model *md = f->model;
    double per = md->n_classes && md->multiclass == HOG_MULTICLASS_OVR
                     ? (double)f->class_epochs / md->n_classes
                     : 1.0;
    s.rows_per_s = seconds > 0 ? per * (double)d->m.rows / seconds : NAN;
    /* the crossed features count: they are the entries the kernel ran */
    double nnz = d->m.ns ? (double)d->cross_nnz : (double)d->m.nnz;
    s.nnz_per_s = seconds > 0 ? per * nnz / seconds : NAN;
    s.nonzero_weights = hog_model_nonzeros(f->model);
    s.replica_syncs = f->replica_syncs;
    s.gap = f->gap;
    s.aux_bytes = f->aux_bytes;
    s.converged = f->converged;

    struct hog_metrics m;
    /* The exact pass over the training set (mean loss, accuracy, AUC)
     * every metrics_every-th epoch and after the last. Between them an
     * algorithm that keeps its own objective and mean loss (coordinate
     * descent) reports those, and the SGD trainers that score each row
     * before its step report the progressive loss and accuracy (on every
     * epoch: they cost a loss per row); a trainer with neither reports no
     * training metrics there. metrics_every 0: after the last only with
     * figures of the algorithm's own, else every epoch. */
    const bool own = isfinite(f->objective);
    unsigned every = f->o->metrics_every ? f->o->metrics_every
                                         : !(own || isfinite(f->prog_loss));
    bool last = f->last || epoch == f->o->epochs || stop;
    bool full = last || (every && epoch % every == 0);
    s.objective = s.train_loss = s.train_accuracy = s.train_auc =
        s.train_rmse = NAN;
    s.train_macro_f1 = s.test_macro_f1 = NAN;
    s.classes = f->model->n_classes;
    s.classes_done = f->model->n_classes;
    s.progressive_loss = f->prog_loss;
    s.progressive_accuracy = f->prog_accuracy;
    if (!full && own) {
        s.objective = f->objective;
        s.train_loss = f->mean_loss;
        if (f->o->loss == HOG_LOSS_SQUARED) /* loss (m - y)^2 / 2 */
            s.train_rmse = sqrt(2.0 * f->mean_loss);
    } else if (!full || f->stream) {
        /* Streamed: the training set is not in memory; its metrics would
         * cost a second pass over the disk each epoch. */
    } else {
        st = hog_metrics_eval_threads(f->model, d, f->o->threads, &m, err);
        if (st != HOG_OK)
            return st;
        s.objective = m.obj_loss + hog_model_regularizer(f->model);
        s.train_loss = m.loss;
        s.train_accuracy = m.accuracy;
        s.train_auc = m.auc;
        s.train_rmse = m.rmse;
        s.train_macro_f1 = m.macro_f1;
    }
    s.test_loss = s.test_accuracy = s.test_auc = s.test_rmse = NAN;

    if (c->test) {
        st = hog_metrics_eval_threads(f->model, c->test, f->o->threads, &m,
                                      err);
        if (st != HOG_OK)
            return st;
        s.has_test = 1;
        s.test_loss = m.loss;
        s.test_accuracy = m.accuracy;
        s.test_auc = m.auc;
        s.test_rmse = m.rmse;
        s.test_macro_f1 = m.macro_f1;
        s.test_unknown_labels = m.unknown;
    }
    s.valid_loss = s.valid_accuracy = s.valid_auc = s.valid_rmse =
        s.valid_macro_f1 = NAN;
    if (c->valid && c->watch) {
        s.has_valid = 1;
        s.valid_loss = vm.loss;
        s.valid_accuracy = vm.accuracy;
        s.valid_auc = vm.auc;
        s.valid_rmse = vm.rmse;
        s.valid_macro_f1 = vm.macro_f1;
        s.best_epoch = c->early.best_epoch;
    }
    f->objective = f->mean_loss = f->prog_loss = f->prog_accuracy = NAN;
    f->o->progress(f->o->progress_ctx, epoch, f->o->epochs, d->m.rows,
                   d->m.rows, &s);
    return done;
}

/* ---- the front door ------------------------------------------------------------- */

/* The options the caller gave, completed with the defaults of the fields
 * an older, shorter struct does not have. */
hog_status hog_train_opts_take(const hog_train_opts *user, hog_train_opts *o,
                               hog_err *err)
{
    if (!user || user->size == 0 || user->size > sizeof(hog_train_opts))
        return hog_errf(err, HOG_EINVAL,
                        "the training options were not set up with "
                        "hog_train_opts_init()");
    hog_train_opts_init(o);
    memcpy(o, user, user->size);
    o->size = sizeof *o;
    return HOG_OK;
}


/* o->classes, copied, once every training label is found among them. */
static hog_status given_classes(const hog_train_opts *o, const hog_data *d,
                                double **labels, uint32_t *k, hog_err *err)
{
    if (o->n_classes < 3 || o->n_classes > HOG_MAX_CLASSES || !o->classes)
        return hog_errf(err, HOG_EINVAL, "the given classes must be 3 to %u "
                        "labels, not %u", HOG_MAX_CLASSES, o->n_classes);
    struct hog_class_index ix;
    hog_status st = hog_class_index_init(&ix, o->classes, o->n_classes, err);
    if (st != HOG_OK)
        return st;
    for (unsigned c = 0; c < o->n_classes && st == HOG_OK; c++)
        if (!isfinite(o->classes[c]) ||
            hog_class_index_find(&ix, o->classes[c]) != (int64_t)c)
            st = hog_errf(err, HOG_EINVAL, "the given class %g is not a "
                          "finite label named once", o->classes[c]);
    for (uint64_t i = 0; i < d->m.rows && st == HOG_OK; i++)
        if (hog_class_index_find(&ix, d->m.y[i]) < 0)
            st = hog_errf(err, HOG_EINVAL, "training row %llu's label %g is "
                          "none of the %u given classes",
                          (unsigned long long)i + 1, (double)d->m.y[i],
                          o->n_classes);
    hog_class_index_free(&ix);
    if (st != HOG_OK)
        return st;
    if (!(*labels = malloc(o->n_classes * sizeof **labels)))
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    memcpy(*labels, o->classes, o->n_classes * sizeof **labels);
    *k = o->n_classes;
    return HOG_OK;
}
/* The model for train's features and labels, options recorded. */
static hog_status new_model(const hog_data *train, const hog_train_opts *o,
                            hog_model **out, hog_err *err)
{
    hog_model *m;
    hog_status st = hog_model_new(train->n_features, o->loss, o->bias, &m, err);
    if (st != HOG_OK)
        return st;
    m->l1 = o->l1;
    m->l2 = o->l2;
    m->labels = hog_loss_is_classification(o->loss) ? HOG_LABELS_BINARY
                                                    : train->labels;
    m->label_pos = train->label_pos;
    m->label_neg = train->label_neg;
    m->hash_bits = train->hash.bits; /* predict hashes its data the same way */
    m->hash_seed = train->hash.seed;
    m->cross = train->cross; /* and crosses it so */
    hog_interactions_format(&m->cross, m->cross_spec, sizeof m->cross_spec);
    if (hog_train_is_multiclass(o, train) && train->m.y) {
        double *labels;
        uint32_t k;
        st = o->n_classes ? given_classes(o, train, &labels, &k, err)
                          : hog_data_classes(train, HOG_MAX_CLASSES, &labels,
                                             &k, err);
        if (st == HOG_OK && k > 2 && k > train->m.rows / 2) {
            st = hog_errf(err, HOG_EINVAL,
                          "the training labels take %u distinct values over "
                          "%llu rows, too many for classes of the %s loss: "
                          "for regression targets use --loss squared",
                          k, (unsigned long long)train->m.rows,
                          hog_loss_name(o->loss));
            free(labels);
        } else if (st == HOG_OK && k < 3) {
            st = hog_errf(err, HOG_EINVAL,
                          "the training labels take one value only (%g): a "
                          "classifier needs at least two classes",
                          labels[0]);
            free(labels);
        } else if (st == HOG_OK) {
            st = hog_model_set_classes(m, k, labels, o->multiclass, err);
            free(labels);
        }
        if (st == HOG_OK)
            st = check_model_memory(o, train, k, err);
        if (st != HOG_OK) {
            hog_model_free(m);
            return st;
        }
    }
    *out = m;
    return HOG_OK;
}

/* LIBLINEAR's C as the strengths, n being the rows trained on. */
static void resolve_C(hog_train_opts *o, uint64_t rows)
{
    if (o->C > 0)
        hog_strengths_of_C(o->C, o->C_l1 != 0, rows, &o->l1, &o->l2);
}

/* The warm start's weights for the model m (NULL without one), or a
 * sentence when they do not fit it. */
static hog_status warm_weights(const hog_train_opts *o, const hog_model *m,
                               const float **out, hog_err *err)
{
    const hog_model *ws = o->warm_start;
    *out = NULL;
    if (!ws)
        return HOG_OK;
    if (hog_loss_is_classification(ws->loss) !=
        hog_loss_is_classification(m->loss))
        return hog_errf(err, HOG_EINVAL,
                        "the warm start is a %s model and this run %s",
                        hog_loss_is_classification(ws->loss) ? "classification"
                                                             : "regression",
                        hog_loss_is_classification(m->loss) ? "classifies"
                                                            : "regresses");
    if (m->n_classes && ws->n_classes == m->n_classes &&
        ws->multiclass != m->multiclass)
        return hog_errf(err, HOG_EINVAL, "the warm start is a %s model, this "
                        "run %s", ws->multiclass ? "softmax" : "one-vs-rest",
                        m->multiclass ? "softmax" : "one-vs-rest");
    if (!m->n_classes && hog_loss_is_classification(m->loss) &&
        !ws->n_classes && ws->label_pos != m->label_pos)
        return hog_errf(err, HOG_EINVAL, "the warm start's positive label is "
                        "%g, the training data's %g", ws->label_pos,
                        m->label_pos);
    if (ws->n_features != m->n_features || (ws->bias != 0) != (m->bias != 0))
        return hog_errf(err, HOG_EINVAL, "the warm start has %llu features%s "
                        "and this training %llu%s; start from a model of the "
                        "same features and bias",
                        (unsigned long long)ws->n_features,
                        ws->bias != 0 ? " and a bias" : "",
                        (unsigned long long)m->n_features,
                        m->bias != 0 ? " and a bias" : "");
    if (ws->cross.n != m->cross.n ||
        memcmp(ws->cross.pair, m->cross.pair, sizeof m->cross.pair) != 0)
        return hog_errf(err, HOG_EINVAL, "the warm start was trained %s%s "
                        "and this training %s%s; start from a model of the "
                        "same interactions",
                        ws->cross.n ? "with interactions " : "without "
                                                             "interactions",
                        ws->cross.n ? ws->cross_spec : "",
                        m->cross.n ? "crosses " : "has none",
                        m->cross.n ? m->cross_spec : "");
    bool same = ws->n_classes == m->n_classes;
    for (uint32_t c = 0; same && c < m->n_classes; c++)
        same = ws->classes[c] == m->classes[c];
    if (!same)
        return hog_errf(err, HOG_EINVAL, "the warm start's classes (%u) are "
                        "not this training's (%u, in the order of their first "
                        "appearance)", ws->n_classes, m->n_classes);
    *out = ws->w;
    return HOG_OK;
}

/* o->holdout: the training rows split into two copies (split.c), *train
 * pointing to the rows trained on and o->validation to the rows held out
 * (o->holdout 0 from then on). Out-of-range values are the validation's
 * to refuse. */
static hog_status holdout_split(hog_train_opts *o, const hog_data **train,
                                hog_data **tr, hog_data **va, hog_err *err)
{
    *tr = *va = NULL;
    if (!(o->holdout > 0 && o->holdout < 1) || o->validation || !*train ||
        (*train)->m.rows == 0)
        return HOG_OK;
    if (o->row_weights)
        return hog_errf(err, HOG_ENOTSUP,
                        "a holdout with row weights (--weights) is not done "
                        "yet: the held-out rows would take their weights "
                        "with them; give --validation FILE instead");
    uint64_t n = (*train)->m.rows;
    uint32_t *part = malloc(n * sizeof *part);
    if (!part)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the holdout of "
                        "%llu rows", (unsigned long long)n);
    hog_status st = hog_split_holdout(*train, o->loss, o->holdout, o->seed,
                                      part, err);
    if (st == HOG_OK &&
        (st = hog_data_subset(*train, part, 1, true, tr, err)) == HOG_OK &&
        (st = hog_data_subset(*train, part, 1, false, va, err)) != HOG_OK) {
        hog_data_free(*tr);
        *tr = NULL;
    }
    free(part);
    if (st != HOG_OK)
        return st;
    *train = *tr;
    o->validation = *va;
    o->holdout = 0;
    return HOG_OK;
}

/* The front door's part of a run of model m: the test and validation
 * sets, early stopping. */
static hog_status front_begin(struct front *c, const hog_train_opts *o,
                              const hog_data *test, const hog_model *m,
                              hog_err *err)
{
    memset(c, 0, sizeof *c);
    c->test = test;
    c->next_tick = hog_now() + 0.1;
    c->valid = o->validation;
    c->watch = c->valid && (o->progress || o->early_stop || o->valid_stats);
    bool ovr = m->n_classes && m->multiclass == HOG_MULTICLASS_OVR;
    return hog_early_init(&c->early, ovr ? 0 : o->early_stop,
                          hog_model_len(m), err);
}

/* After the algorithm: early stopping's stop is a success, the best
 * epoch's weights go back into the model, and valid_stats is filled. */
static hog_status front_end(struct front *c, hog_status st,
                            const hog_train_opts *o, hog_model *m,
                            uint64_t train_rows)
{
    if (st == HOG_FIT_STOP)
        st = HOG_OK;
    if (st == HOG_OK)
        hog_early_restore(&c->early, m->w);
    if (st == HOG_OK && o->valid_stats) {
        hog_valid_stats *v = o->valid_stats;
        bool ovr = m->n_classes && m->multiclass == HOG_MULTICLASS_OVR;
        memset(v, 0, sizeof *v);
        v->rows = c->valid ? c->valid->m.rows : 0;
        v->train_rows = train_rows;
        v->epochs_run = !ovr ? c->early.epochs
                        : c->ovr.epochs_run ? c->ovr.epochs_run
                                            : o->epochs;
        v->best_epoch = ovr && o->early_stop ? c->ovr.best_epoch
                                             : c->early.best_epoch;
        v->best_loss = c->early.best_epoch ? c->early.best_loss : NAN;
        v->early_stopped = ovr ? c->ovr.early_stopped : c->early.stopped;
        v->classes_stopped = c->ovr.classes_stopped;
    }
    hog_early_free(&c->early);
    return st;
}

/* The end of a run: the trained model to the caller, or freed on failure. */
static hog_status hand_out(hog_status st, hog_model *m, hog_model **out)
{
    if (st != HOG_OK) {
        hog_model_free(m);
        return st;
    }
    *out = m;
    return HOG_OK;
}

hog_status hog_train_stream(const char *path, const hog_data *test,
                            const hog_train_opts *user, hog_model **out,
                            hog_err *err)
{
    *out = NULL;
    if (!path)
        return hog_errf(err, HOG_EINVAL, "no training file");
    hog_train_opts o;
    hog_status st = hog_train_opts_take(user, &o, err);
    if (st != HOG_OK)
        return st;
    const struct hog_algo_row *row = hog_algo_row(o.algo);
    if (row && !row->stream)
        return hog_errf(err, HOG_ENOTSUP,
                        "the %s trainer needs the data in memory and cannot "
                        "stream it; drop --stream (or use serial or hogwild)",
                        row->title);
    if (hog_gpu_requested(&o) || o.average)
        return hog_errf(err, HOG_ENOTSUP,
                        "streamed training runs on this machine's CPUs in "
                        "one process; drop --stream, or --gpus / --world");
    if (o.checkpoint || o.resume)
        return hog_errf(err, HOG_ENOTSUP,
                        "streamed training does not write or resume "
                        "checkpoints yet; drop --stream to use them");
    if (hog_train_weighted(&o))
        return hog_errf(err, HOG_ENOTSUP,
                        "streamed training does not take row or class "
                        "weights yet (class weights need every row's label "
                        "before the first step); drop --stream to train the "
                        "weighted rows in memory");
    if ((unsigned)o.io > HOG_IO_PREAD)
        return hog_errf(err, HOG_EINVAL, "unknown io backend %d", (int)o.io);
    if (o.holdout > 0)
        return hog_errf(err, HOG_ENOTSUP, "streamed training cannot hold "
                        "rows out of the file; give a validation set of "
                        "its own instead of a holdout");

    struct hog_stream_opts so;
    hog_stream_opts_init(&so);
    so.mem_budget = o.mem_budget;
    so.io = o.io;
    so.direct = o.direct;
    so.log = o.log;
    so.log_ctx = o.log_ctx;
    so.row_bytes = 4; /* the window's row order */
    hog_stream *stream;
    if ((st = hog_stream_open(path, &so, &stream, err)) != HOG_OK)
        return st;
    const struct hog_hgb_info *in = hog_stream_info(stream);

    /* The data as the header describes it; no arrays. */
    hog_data hd;
    memset(&hd, 0, sizeof hd);
    hd.m.rows = in->rows;
    hd.m.nnz = in->nnz;
    hd.n_features = in->n_features;
    hd.labels = in->labels;
    hd.label_pos = in->label_pos;
    hd.label_neg = in->label_neg;
    hd.n_pos = in->n_pos;
    hd.hash = in->hash;

    hog_model *m = NULL;
    /* K classes: one pass over the chunks finds them and their rows
     * first, in the file's order (one-vs-rest then streams the file once
     * per class and epoch) */
    double *classes = NULL;
    uint64_t *class_rows = NULL;
    uint32_t k = 0;
    const bool multi = hog_train_is_multiclass(&o, &hd);
    if (o.normalize)
        st = hog_errf(err, HOG_ENOTSUP,
                      "--normalize learns the scales in a pass over the "
                      "data in memory; drop --stream, or scale %s first",
                      path);
    else if (multi && (st = hog_train_stream_classes(stream, &o, &classes,
                                                     &class_rows, &k,
                                                     err)) != HOG_OK)
        ;
    else if (multi && k < 3)
        st = hog_errf(err, HOG_EINVAL, "the labels of %s take %u values "
                      "only: not K classes", path, k);
    else if ((resolve_C(&o, hd.m.rows),
              st = hog_train_validate(&o, &hd, err)) == HOG_OK &&
             (st = new_model(&hd, &o, &m, err)) == HOG_OK &&
             (!multi ||
              ((st = hog_model_set_classes(m, k, classes, o.multiclass,
                                           err)) == HOG_OK &&
               (st = check_model_memory(&o, &hd, k, err)) == HOG_OK))) {
        struct front c;
        struct hog_fit f = { .train = &hd, .o = &o, .model = m,
                             .epoch_end = epoch_end, .tick = tick, .ctx = &c,
                             .gap = NAN, .stream = stream,
                             .objective = NAN, .mean_loss = NAN,
                             .prog_loss = NAN, .prog_accuracy = NAN,
                             .class_rows = class_rows };
        if ((st = front_begin(&c, &o, test, m, err)) == HOG_OK &&
            (st = warm_weights(&o, m, &f.init, err)) == HOG_OK)
            st = !multi ? row->stream(&f, err)
                 : m->multiclass == HOG_MULTICLASS_SOFTMAX
                     ? row->softmax(&f, err)
                     : hog_train_ovr(&f, row, &c.ovr, err);
        st = front_end(&c, st, &o, m, hd.m.rows);
    }
    free(classes);
    free(class_rows);
    if (o.stream_stats)
        hog_stream_get_stats(stream, o.stream_stats);
    hog_stream_close(stream);
    return hand_out(st, m, out);
}

static hog_status run_train(const hog_data *train, const hog_data *test,
                            const hog_train_opts *op, hog_model **out,
                            hog_err *err);

hog_status hog_train(const hog_data *train, const hog_data *test,
                     const hog_train_opts *user, hog_model **out,
                     hog_err *err)
{
    *out = NULL;
    hog_train_opts o;
    hog_status st = hog_train_opts_take(user, &o, err);
    if (st != HOG_OK)
        return st;
    /* A holdout: the rows trained on and the validation rows, copies. */
    hog_data *kept = NULL, *held = NULL;
    if ((st = holdout_split(&o, &train, &kept, &held, err)) != HOG_OK)
        return st;
    resolve_C(&o, train ? train->m.rows : 0);
    st = run_train(train, test, &o, out, err);
    hog_data_free(kept);
    hog_data_free(held);
    return st;
}

/* hog_train() once the options are taken, the holdout split and C
 * resolved. */
static hog_status run_train(const hog_data *train, const hog_data *test,
                            const hog_train_opts *op, hog_model **out,
                            hog_err *err)
{
    const hog_train_opts o = *op;
    hog_status st;
    if ((st = hog_train_validate(&o, train, err)) != HOG_OK)
        return st;
    /* a test or validation set is scored as the model will be: crossed
     * as the training rows are */
    const hog_data *other[] = { test, o.validation };
    for (int i = 0; i < 2; i++)
        if (other[i] && (other[i]->cross.n != train->cross.n ||
                         memcmp(other[i]->cross.pair, train->cross.pair,
                                sizeof train->cross.pair) != 0))
            return hog_errf(err, HOG_EINVAL,
                            "the %s set was loaded with other interactions "
                            "than the training set; load both with the "
                            "same (hog_load_opts.interactions)",
                            i ? "validation" : "test");
    if (o.normalize)
        return hog_train_normalized(train, test, &o, out, err);
    const bool gpu = hog_gpu_requested(&o);
    const struct hog_algo_row *row = hog_algo_row(o.algo);
    /* The table's check (in validate) refuses averaging with an algorithm
     * that does not take part; the GPU trainer does not either. */
    if (o.average && gpu)
        return hog_errf(err, HOG_ENOTSUP,
                        "the GPU trainer does not take part in model "
                        "averaging across processes yet; use --algo serial "
                        "or hogwild");

    /* Row and class weights, combined once; the algorithms and the
     * training-set metrics see them on this view of the data. */
    float *rw;
    if ((st = hog_train_row_weights(&o, train, &rw, err)) != HOG_OK)
        return st;
    hog_data view;
    if (rw) {
        view = *train;
        memset(view.mem, 0, sizeof view.mem); /* train owns its arrays */
        memset(view.mem_len, 0, sizeof view.mem_len);
        view.release = NULL;
        view.row_w = rw;
    }
    const hog_data *data = rw ? &view : train;

    hog_model *m;
    if ((st = new_model(train, &o, &m, err)) != HOG_OK) {
        free(rw);
        return st;
    }
    const float *init;
    if ((st = warm_weights(&o, m, &init, err)) != HOG_OK) {
        free(rw);
        return hand_out(st, m, out);
    }
    if (init && o.epochs == 0) { /* no step: the model given */
        memcpy(m->w, init, hog_model_len(m) * sizeof *m->w);
        free(rw);
        return hand_out(HOG_OK, m, out);
    }

    struct front c;
    struct hog_fit f = { .train = data, .o = &o, .model = m, .init = init,
                         .epoch_end = epoch_end, .tick = tick, .ctx = &c,
                         .replica_syncs = 0, .gap = NAN, .aux_bytes = 0,
                         .objective = NAN, .mean_loss = NAN,
                         .prog_loss = NAN, .prog_accuracy = NAN };
    /* GPUs asked for: the GPU replicas train, whatever o.algo says. */
    struct hog_ckpt_ctx ck;
    if ((st = front_begin(&c, &o, test, m, err)) != HOG_OK) {
        free(rw);
        hog_model_free(m);
        return st;
    }
    st = hog_train_ckpt_begin(&f, &ck, err);
    if (st == HOG_OK)
        st = gpu             ? hog_gpu_train(&f, err)
             : !m->n_classes ? row->run(&f, err)
             : m->multiclass == HOG_MULTICLASS_SOFTMAX
                 ? row->softmax(&f, err)
                 : hog_train_ovr(&f, row, &c.ovr, err);
    hog_train_ckpt_end(&ck);
    st = front_end(&c, st, &o, m, train->m.rows);
    free(rw);
    return hand_out(st, m, out);
}
