/*
 * The conflicts between options, as rows beside the algorithms' table
 * (algos.c): each row names the options involved, the predicate over the
 * resolved options (and what else it needs to know: streamed or not, a
 * validation set, a warm start, weights, the data's classes and
 * interactions) and the one sentence a user reads. hog_train_validate()
 * walks the rows once; the command walks the rows that need no data
 * before it reads any (src/cli/train_opts.c), so both say the same.
 * tests/test_options.c builds every row's example and checks that its
 * sentence comes back, so a row cannot be left untested.
 *
 * Rows are walked in order and the first that holds is the answer: keep
 * a row about one option before a row about two that would also hold.
 */
#include "train/train.h"

#include "core/loss.h"
#include "gpu/gpu.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void hog_conflict_ctx_of(struct hog_conflict_ctx *c, const hog_train_opts *o,
                         const hog_train_hooks *h, const hog_data *train,
                         bool stream)
{
    memset(c, 0, sizeof *c);
    c->o = o;
    c->train = train;
    c->stream = stream;
    c->validation = o->validation != NULL;
    c->warm = o->warm_start != NULL;
    c->weighted = hog_train_weighted(o);
    c->average = h && h->average;
    c->reduce = h && h->reduce;
    c->world = c->average || c->reduce;
    c->crossed = train && train->cross.n;
}

/* ---- what the predicates share ------------------------------------------ */

#define O (c->o)

static bool gpu(const struct hog_conflict_ctx *c) { return hog_gpu_requested(O); }
static bool ckpt(const struct hog_conflict_ctx *c)
{
    return O->checkpoint || O->resume;
}
/* K classes: from the labels where the data is known; softmax asked for
 * counts wherever it is asked for before (the default schedule's rule). */
static bool multi(const struct hog_conflict_ctx *c)
{
    return c->train && hog_train_is_multiclass(O, c->train);
}
static bool softmax(const struct hog_conflict_ctx *c)
{
    return O->multiclass == HOG_MULTICLASS_SOFTMAX && multi(c);
}
static bool ftrl(const struct hog_conflict_ctx *c)
{
    return O->schedule == HOG_SCHED_FTRL;
}
static bool cross(const struct hog_conflict_ctx *c)
{
    return c->crossed;
}
static bool algo_is(const struct hog_conflict_ctx *c, hog_algo a)
{
    return !gpu(c) && O->algo == a;
}

/* ---- the predicates ----------------------------------------------------- */

static bool eta_l2(const struct hog_conflict_ctx *c)
{
    /* The coordinate methods and the exact solvers take no step size;
     * AdaGrad's and FTRL's per-coordinate rates never shrink a weight
     * past zero. */
    bool stepped = O->algo != HOG_ALGO_SCD && O->algo != HOG_ALGO_DCD &&
                   O->algo != HOG_ALGO_NEWTON && O->algo != HOG_ALGO_LBFGS;
    return stepped && O->schedule != HOG_SCHED_ADAGRAD && !ftrl(c) &&
           O->eta * O->l2 >= 1.0;
}
static bool epochs0(const struct hog_conflict_ctx *c)
{
    return O->epochs < 1 && !c->warm;
}
static bool no_blocks(const struct hog_conflict_ctx *c)
{
    /* the command names the blocks once the ranks have met */
    return c->train && c->average && O->average_blocks == 0;
}
static bool holdout_validation(const struct hog_conflict_ctx *c)
{
    return O->holdout > 0 && c->validation;
}
static bool early_alone(const struct hog_conflict_ctx *c)
{
    return O->early_stop && !(O->holdout > 0) && !c->validation;
}
static bool early_world(const struct hog_conflict_ctx *c)
{
    return O->early_stop && c->world;
}
static bool normalize_reduce(const struct hog_conflict_ctx *c)
{
    return O->normalize && c->reduce;
}
static bool average_reduce(const struct hog_conflict_ctx *c)
{
    return c->average && c->reduce;
}
static bool early_ckpt(const struct hog_conflict_ctx *c)
{
    return O->early_stop && ckpt(c);
}
static bool warm_resume(const struct hog_conflict_ctx *c)
{
    return c->warm && O->resume;
}
static bool warm_gpu(const struct hog_conflict_ctx *c)
{
    return c->warm && gpu(c);
}
static bool warm_normalize(const struct hog_conflict_ctx *c)
{
    return c->warm && O->normalize;
}
static bool gpu_world(const struct hog_conflict_ctx *c)
{
    return gpu(c) && c->world;
}
static bool gpu_weighted(const struct hog_conflict_ctx *c)
{
    return hog_train_gpu_replicas(O) && c->weighted;
}
static bool gpu_hogwild_adagrad(const struct hog_conflict_ctx *c)
{
    return gpu(c) && O->gpu_step == HOG_GPU_STEP_HOGWILD &&
           O->schedule == HOG_SCHED_ADAGRAD;
}

/* streamed */
static bool stream_algo(const struct hog_conflict_ctx *c)
{
    const struct hog_algo_row *r = hog_algo_row(O->algo);
    return c->stream && r && !r->stream;
}
static bool stream_elsewhere(const struct hog_conflict_ctx *c)
{
    return c->stream && (gpu(c) || c->world);
}
static bool stream_ckpt(const struct hog_conflict_ctx *c)
{
    return c->stream && ckpt(c);
}
static bool stream_weighted(const struct hog_conflict_ctx *c)
{
    return c->stream && c->weighted;
}
static bool stream_holdout(const struct hog_conflict_ctx *c)
{
    return c->stream && O->holdout > 0;
}
static bool stream_normalize(const struct hog_conflict_ctx *c)
{
    return c->stream && O->normalize;
}
static bool stream_replicas(const struct hog_conflict_ctx *c)
{
    return c->stream && algo_is(c, HOG_ALGO_HOGWILD) &&
           O->replicas != HOG_REPLICAS_SHARED;
}
static bool stream_hot(const struct hog_conflict_ctx *c)
{
    return c->stream && algo_is(c, HOG_ALGO_HOGWILD) && O->hot_features;
}

/* the coordinate methods and the exact solvers */
static bool dcd_squared(const struct hog_conflict_ctx *c)
{
    return algo_is(c, HOG_ALGO_DCD) && O->loss == HOG_LOSS_SQUARED;
}
static bool dcd_l1(const struct hog_conflict_ctx *c)
{
    return algo_is(c, HOG_ALGO_DCD) && O->l1 != 0.0;
}
static bool dcd_l2(const struct hog_conflict_ctx *c)
{
    return algo_is(c, HOG_ALGO_DCD) && !(O->l2 > 0);
}
static bool dcd_update(const struct hog_conflict_ctx *c)
{
    return algo_is(c, HOG_ALGO_DCD) && O->update != HOG_UPDATE_NONE &&
           O->update != HOG_UPDATE_ATOMIC;
}
static bool scd_loss(const struct hog_conflict_ctx *c)
{
    return algo_is(c, HOG_ALGO_SCD) && O->loss != HOG_LOSS_SQUARED &&
           O->loss != HOG_LOSS_LOGISTIC;
}
static bool scd_update(const struct hog_conflict_ctx *c)
{
    return algo_is(c, HOG_ALGO_SCD) && O->update != HOG_UPDATE_NONE;
}
static bool newton_hinge(const struct hog_conflict_ctx *c)
{
    return algo_is(c, HOG_ALGO_NEWTON) && O->loss == HOG_LOSS_HINGE;
}
static bool newton_l1(const struct hog_conflict_ctx *c)
{
    return algo_is(c, HOG_ALGO_NEWTON) && O->l1 != 0.0;
}
static bool newton_l2(const struct hog_conflict_ctx *c)
{
    return algo_is(c, HOG_ALGO_NEWTON) && !(O->l2 > 0);
}
static bool lbfgs_hinge(const struct hog_conflict_ctx *c)
{
    return algo_is(c, HOG_ALGO_LBFGS) && O->loss == HOG_LOSS_HINGE;
}
static bool lbfgs_unregularized(const struct hog_conflict_ctx *c)
{
    return algo_is(c, HOG_ALGO_LBFGS) && !(O->l1 > 0) && !(O->l2 > 0);
}

/* FTRL-Proximal keeps two sums per coordinate in place of the weights
 * (core/sgd.h): what reads or writes the weights array itself does not
 * take it yet (the algorithms' table refuses Cyclades and coordinate
 * descent). Softmax counts wherever it is asked for while the data is
 * not known (the default schedule's rule, hog_train_ftrl_runs). */
static bool ftrl_gpu(const struct hog_conflict_ctx *c)
{
    return ftrl(c) && gpu(c);
}
static bool ftrl_replicas(const struct hog_conflict_ctx *c)
{
    return ftrl(c) && O->replicas != HOG_REPLICAS_SHARED;
}
static bool ftrl_hot(const struct hog_conflict_ctx *c)
{
    return ftrl(c) && O->hot_features;
}
static bool ftrl_world(const struct hog_conflict_ctx *c)
{
    return ftrl(c) && c->world;
}
static bool ftrl_softmax(const struct hog_conflict_ctx *c)
{
    return ftrl(c) && O->multiclass == HOG_MULTICLASS_SOFTMAX &&
           (!c->train || multi(c));
}

/* --interactions: the rows are crossed in the SGD row loops and the
 * scorers; the trainers with loops of their own do not cross them yet */
static bool cross_gpu(const struct hog_conflict_ctx *c)
{
    return cross(c) && gpu(c);
}
static bool cross_world(const struct hog_conflict_ctx *c)
{
    return cross(c) && c->world;
}
static bool cross_hot(const struct hog_conflict_ctx *c)
{
    return cross(c) && O->hot_features;
}
static bool cross_normalize(const struct hog_conflict_ctx *c)
{
    return cross(c) && O->normalize;
}

/* K classes: the test gives a K-class set (c->train) to these examples */
static bool softmax_loss(const struct hog_conflict_ctx *c)
{
    return softmax(c) && O->loss != HOG_LOSS_LOGISTIC;
}
static bool softmax_algo(const struct hog_conflict_ctx *c)
{
    const struct hog_algo_row *r = hog_algo_row(O->algo);
    return softmax(c) && !gpu(c) && r && !r->softmax;
}
/* softmax.c: Hogwild! on one shared K-wide model, plain stores */
static bool softmax_update(const struct hog_conflict_ctx *c)
{
    return softmax(c) && O->update != HOG_UPDATE_NONE;
}
static bool softmax_replicas(const struct hog_conflict_ctx *c)
{
    return softmax(c) && O->replicas != HOG_REPLICAS_SHARED;
}
static bool softmax_hot(const struct hog_conflict_ctx *c)
{
    return softmax(c) && O->hot_features;
}
static bool multi_gpu(const struct hog_conflict_ctx *c)
{
    return multi(c) && gpu(c);
}

/* ---- the details a sentence names --------------------------------------- */

static const char *eta_l2_value(const struct hog_conflict_ctx *c, char *buf,
                                size_t len)
{
    snprintf(buf, len, "%g", O->eta * O->l2);
    return buf;
}
static const char *l1_value(const struct hog_conflict_ctx *c, char *buf,
                            size_t len)
{
    snprintf(buf, len, "%g", O->l1);
    return buf;
}
static const char *loss_name(const struct hog_conflict_ctx *c, char *buf,
                             size_t len)
{
    (void)buf, (void)len;
    return hog_loss_name(O->loss);
}
static const char *update_name(const struct hog_conflict_ctx *c, char *buf,
                               size_t len)
{
    (void)buf, (void)len;
    return O->update == HOG_UPDATE_STRIPED ? "striped" : "mutex";
}
static const char *algo_title(const struct hog_conflict_ctx *c, char *buf,
                              size_t len)
{
    (void)buf, (void)len;
    return hog_algo_name(O->algo);
}

/* ---- the examples: options that break each row (tests/test_options.c) -- */

static void ex_eta_l2(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->schedule = HOG_SCHED_CONSTANT;
    o->eta = 10;
    o->l2 = 0.5;
}
static void ex_epochs0(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->epochs = 0;
}
static void ex_no_blocks(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    c->world = c->average = true;
    o->schedule = HOG_SCHED_ADAGRAD;
    o->average_blocks = 0;
}
static void ex_normalize_reduce(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    c->world = c->reduce = true;
    o->algo = HOG_ALGO_NEWTON;
    o->normalize = 1;
}
static void ex_average_reduce(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    c->world = c->average = c->reduce = true;
    o->algo = HOG_ALGO_NEWTON;
    o->average_blocks = 1;
}
static void ex_holdout_validation(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    o->holdout = 0.2;
    c->validation = true;
}
static void ex_early_alone(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->early_stop = 2;
}
static void ex_early_world(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    o->early_stop = 2;
    o->holdout = 0.2;
    o->schedule = HOG_SCHED_ADAGRAD;
    c->world = true;
}
static void ex_early_ckpt(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->early_stop = 2;
    o->holdout = 0.2;
    o->checkpoint = "model.ckpt";
}
static void ex_warm_resume(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    c->warm = true;
    o->resume = "model.ckpt";
}
static void ex_warm_gpu(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    c->warm = true;
    o->gpus = "0";
    o->schedule = HOG_SCHED_ADAGRAD;
}
static void ex_warm_normalize(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    c->warm = true;
    o->normalize = 1;
}
static void ex_gpu_world(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    o->gpus = "0";
    o->schedule = HOG_SCHED_ADAGRAD;
    c->world = true;
    o->average_blocks = 1;
}
static void ex_gpu_weighted(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    o->gpus = "0";
    o->schedule = HOG_SCHED_ADAGRAD;
    c->weighted = true;
}
static void ex_gpu_hogwild_adagrad(hog_train_opts *o,
                                   struct hog_conflict_ctx *c)
{
    (void)c;
    o->gpus = "0";
    o->gpu_step = HOG_GPU_STEP_HOGWILD;
    o->schedule = HOG_SCHED_ADAGRAD;
}
static void ex_stream_algo(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    c->stream = true;
    o->algo = HOG_ALGO_CYCLADES;
    o->schedule = HOG_SCHED_ADAGRAD;
}
static void ex_stream_elsewhere(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    c->stream = true;
    o->gpus = "0";
    o->schedule = HOG_SCHED_ADAGRAD;
}
static void ex_stream_ckpt(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    c->stream = true;
    o->checkpoint = "model.ckpt";
}
static void ex_stream_weighted(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    c->stream = true;
    c->weighted = true;
}
static void ex_stream_holdout(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    c->stream = true;
    o->holdout = 0.2;
}
static void ex_stream_normalize(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    c->stream = true;
    o->normalize = 1;
}
static void ex_stream_replicas(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    c->stream = true;
    o->algo = HOG_ALGO_HOGWILD;
    o->schedule = HOG_SCHED_ADAGRAD;
    o->replicas = HOG_REPLICAS_NODE;
}
static void ex_stream_hot(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    c->stream = true;
    o->algo = HOG_ALGO_HOGWILD;
    o->schedule = HOG_SCHED_ADAGRAD;
    o->hot_features = 64;
}
static void ex_dcd_squared(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->algo = HOG_ALGO_DCD;
    o->loss = HOG_LOSS_SQUARED;
}
static void ex_dcd_l1(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->algo = HOG_ALGO_DCD;
    o->l1 = 1e-4;
}
static void ex_dcd_l2(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->algo = HOG_ALGO_DCD;
    o->l2 = 0;
}
static void ex_dcd_update(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->algo = HOG_ALGO_DCD;
    o->update = HOG_UPDATE_STRIPED;
}
static void ex_scd_loss(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->algo = HOG_ALGO_SCD;
    o->loss = HOG_LOSS_HINGE;
}
static void ex_scd_update(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->algo = HOG_ALGO_SCD;
    o->update = HOG_UPDATE_ATOMIC;
}
static void ex_newton_hinge(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->algo = HOG_ALGO_NEWTON;
    o->loss = HOG_LOSS_HINGE;
}
static void ex_newton_l1(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->algo = HOG_ALGO_NEWTON;
    o->l1 = 1e-4;
}
static void ex_newton_l2(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->algo = HOG_ALGO_NEWTON;
    o->l2 = 0;
}
static void ex_lbfgs_hinge(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->algo = HOG_ALGO_LBFGS;
    o->loss = HOG_LOSS_HINGE;
}
static void ex_lbfgs_unregularized(hog_train_opts *o,
                                   struct hog_conflict_ctx *c)
{
    (void)c;
    o->algo = HOG_ALGO_LBFGS;
    o->l2 = 0;
}
static void ex_ftrl_gpu(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->schedule = HOG_SCHED_FTRL;
    o->gpus = "0";
}
static void ex_ftrl_replicas(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->schedule = HOG_SCHED_FTRL;
    o->algo = HOG_ALGO_HOGWILD;
    o->replicas = HOG_REPLICAS_NODE;
}
static void ex_ftrl_hot(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->schedule = HOG_SCHED_FTRL;
    o->algo = HOG_ALGO_HOGWILD;
    o->hot_features = 64;
}
static void ex_ftrl_world(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    o->schedule = HOG_SCHED_FTRL;
    c->world = true;
    o->average_blocks = 1;
}
static void ex_ftrl_softmax(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->schedule = HOG_SCHED_FTRL;
    o->multiclass = HOG_MULTICLASS_SOFTMAX;
}
static void ex_cross_gpu(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    c->crossed = true;
    o->gpus = "0";
    o->schedule = HOG_SCHED_ADAGRAD;
}
static void ex_cross_world(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    c->crossed = true;
    c->world = true;
    o->schedule = HOG_SCHED_ADAGRAD;
    o->average_blocks = 1;
}
static void ex_cross_hot(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    c->crossed = true;
    o->algo = HOG_ALGO_HOGWILD;
    o->schedule = HOG_SCHED_ADAGRAD;
    o->hot_features = 64;
}
static void ex_cross_normalize(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    c->crossed = true;
    o->normalize = 1;
}
static void ex_softmax_loss(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->multiclass = HOG_MULTICLASS_SOFTMAX;
    o->loss = HOG_LOSS_HINGE;
}
static void ex_softmax_algo(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->multiclass = HOG_MULTICLASS_SOFTMAX;
    o->algo = HOG_ALGO_SCD;
}
static void ex_softmax_update(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->multiclass = HOG_MULTICLASS_SOFTMAX;
    o->algo = HOG_ALGO_HOGWILD;
    o->update = HOG_UPDATE_ATOMIC;
}
static void ex_softmax_replicas(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->multiclass = HOG_MULTICLASS_SOFTMAX;
    o->algo = HOG_ALGO_HOGWILD;
    o->replicas = HOG_REPLICAS_NODE;
}
static void ex_softmax_hot(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->multiclass = HOG_MULTICLASS_SOFTMAX;
    o->algo = HOG_ALGO_HOGWILD;
    o->hot_features = 64;
}
static void ex_multi_gpu(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->gpus = "0";
    o->schedule = HOG_SCHED_ADAGRAD;
}

/* ---- the rows ----------------------------------------------------------- */

#define ROW(opts, st, hit_, data_, sentence_, detail_, ex)                  \
    { .options = opts, .status = st, .hit = hit_, .data = data_,           \
      .sentence = sentence_, .detail = detail_, .example = ex }

static const struct hog_conflict rows[] = {
    ROW("epochs", HOG_EINVAL, epochs0, HOG_CONFLICT_OPTIONS,
        "epochs must be at least 1 (0 only with a warm start, --init MODEL: "
        "the model as it is)", NULL, ex_epochs0),
    ROW("eta, l2, schedule", HOG_EINVAL, eta_l2, HOG_CONFLICT_OPTIONS,
        "eta * l2 = %s: each step would shrink the weights past zero; use "
        "eta * l2 below 1", eta_l2_value, ex_eta_l2),
    ROW("holdout, validation", HOG_EINVAL, holdout_validation,
        HOG_CONFLICT_OPTIONS,
        "a holdout and a validation set both name the validation rows; give "
        "one", NULL, ex_holdout_validation),
    ROW("early_stop, holdout, validation", HOG_EINVAL, early_alone,
        HOG_CONFLICT_OPTIONS,
        "early stopping watches the validation loss and needs a validation "
        "set: add --holdout F or --validation FILE (a share of the training "
        "rows, or a data set of its own)", NULL,
        ex_early_alone),
    ROW("early_stop, average", HOG_ENOTSUP, early_world, HOG_CONFLICT_OPTIONS,
        "early stopping is not taken across processes: each would stop at "
        "its own epoch; drop --early-stop with --world or mpirun", NULL,
        ex_early_world),
    ROW("normalize, reduce", HOG_ENOTSUP, normalize_reduce,
        HOG_CONFLICT_OPTIONS,
        "--normalize learns its scales from one process's rows, and exact "
        "solving across processes needs the same problem on every rank; "
        "scale the data first, or drop --world", NULL, ex_normalize_reduce),
    ROW("average, reduce", HOG_EINVAL, average_reduce, HOG_CONFLICT_OPTIONS,
        "model averaging and exact solving across processes are two ways to "
        "combine them; give one", NULL, ex_average_reduce),
    ROW("early_stop, checkpoint, resume", HOG_ENOTSUP, early_ckpt,
        HOG_CONFLICT_OPTIONS,
        "checkpoints do not hold early stopping's best epoch yet; drop "
        "--checkpoint and --resume, or --early-stop", NULL, ex_early_ckpt),
    ROW("warm_start, resume", HOG_EINVAL, warm_resume, HOG_CONFLICT_OPTIONS,
        "a warm start and a resume both say where training starts; give one",
        NULL, ex_warm_resume),
    ROW("warm_start, gpus", HOG_ENOTSUP, warm_gpu, HOG_CONFLICT_OPTIONS,
        "the GPU trainer takes no warm start", NULL, ex_warm_gpu),
    ROW("warm_start, normalize", HOG_ENOTSUP, warm_normalize,
        HOG_CONFLICT_OPTIONS,
        "--normalize with --init: the model's weights are in the raw "
        "features' units; drop one of them", NULL, ex_warm_normalize),

    /* streamed: one process, this machine's CPUs, one pass a chunk */
    ROW("stream, algo", HOG_ENOTSUP, stream_algo, HOG_CONFLICT_OPTIONS,
        "the %s trainer needs the data in memory and cannot stream it; drop "
        "--stream (or use serial or hogwild)", algo_title, ex_stream_algo),
    ROW("stream, gpus, average", HOG_ENOTSUP, stream_elsewhere,
        HOG_CONFLICT_OPTIONS,
        "streamed training runs on this machine's CPUs in one process; drop "
        "--stream, or --gpus / --world", NULL, ex_stream_elsewhere),
    ROW("stream, checkpoint, resume", HOG_ENOTSUP, stream_ckpt,
        HOG_CONFLICT_OPTIONS,
        "streamed training does not write or resume checkpoints yet; drop "
        "--stream to use them", NULL, ex_stream_ckpt),
    ROW("stream, row_weights, class_weights", HOG_ENOTSUP, stream_weighted,
        HOG_CONFLICT_OPTIONS,
        "streamed training does not take row or class weights yet (class "
        "weights need every row's label before the first step); drop "
        "--stream to train the weighted rows in memory", NULL,
        ex_stream_weighted),
    ROW("stream, holdout", HOG_ENOTSUP, stream_holdout, HOG_CONFLICT_OPTIONS,
        "streamed training cannot hold rows out of the file; give a "
        "validation set of its own instead of a holdout", NULL,
        ex_stream_holdout),
    ROW("stream, normalize", HOG_ENOTSUP, stream_normalize,
        HOG_CONFLICT_OPTIONS,
        "--normalize learns the scales in a pass over the data in memory; "
        "drop --stream, or scale the file first", NULL, ex_stream_normalize),
    ROW("stream, replicas", HOG_ENOTSUP, stream_replicas, HOG_CONFLICT_OPTIONS,
        "streamed Hogwild! trains one shared model; drop --replicas (or "
        "--stream)", NULL, ex_stream_replicas),
    ROW("stream, hot_features", HOG_ENOTSUP, stream_hot, HOG_CONFLICT_OPTIONS,
        "streamed Hogwild! has no hot-feature replicas (they remap the whole "
        "data set's indices); drop --hot (or --stream)", NULL, ex_stream_hot),

    /* the GPU trainer (o->algo unused there) */
    ROW("gpus, gpu_step, schedule", HOG_EINVAL, gpu_hogwild_adagrad,
        HOG_CONFLICT_OPTIONS,
        "the GPU hogwild step runs the constant and invscaling schedules; use "
        "--gpu-step minibatch for adagrad", NULL, ex_gpu_hogwild_adagrad),
    ROW("gpus, average", HOG_ENOTSUP, gpu_world, HOG_CONFLICT_OPTIONS,
        "the GPU trainer does not take part in model averaging across "
        "processes yet; use --algo serial or hogwild", NULL, ex_gpu_world),
    ROW("gpus, row_weights, class_weights", HOG_ENOTSUP, gpu_weighted,
        HOG_CONFLICT_OPTIONS,
        "the GPU trainer does not take row or class weights yet; drop --gpus "
        "(every CPU algorithm takes them)", NULL, ex_gpu_weighted),

    /* the coordinate methods and the exact solvers: what they solve */
    ROW("algo dcd, loss", HOG_EINVAL, dcd_squared, HOG_CONFLICT_OPTIONS,
        "--algo dcd solves the hinge, sqhinge and logistic losses; for the "
        "squared loss use --algo scd", NULL, ex_dcd_squared),
    ROW("algo dcd, l1", HOG_EINVAL, dcd_l1, HOG_CONFLICT_OPTIONS,
        "--algo dcd solves L2-regularized problems only (l1 = %s); for L1 "
        "use --algo scd", l1_value, ex_dcd_l1),
    ROW("algo dcd, l2", HOG_EINVAL, dcd_l2, HOG_CONFLICT_OPTIONS,
        "--algo dcd needs l2 > 0 (its dual has C = 1 / (l2 n))", NULL,
        ex_dcd_l2),
    ROW("algo dcd, update", HOG_EINVAL, dcd_update, HOG_CONFLICT_OPTIONS,
        "--algo dcd updates w either wild (none) or atomic, not %s",
        update_name, ex_dcd_update),
    ROW("algo scd, loss", HOG_EINVAL, scd_loss, HOG_CONFLICT_OPTIONS,
        "--algo scd solves the squared and logistic losses; for the %s loss "
        "use --algo dcd", loss_name, ex_scd_loss),
    ROW("algo scd, update", HOG_EINVAL, scd_update, HOG_CONFLICT_OPTIONS,
        "--algo scd always adds to the shared margins atomically; --update "
        "does not apply to it", NULL, ex_scd_update),
    ROW("algo newton, loss", HOG_EINVAL, newton_hinge, HOG_CONFLICT_OPTIONS,
        "--algo newton needs a loss with a second derivative (logistic, "
        "sqhinge or squared); for the hinge loss use --algo dcd", NULL,
        ex_newton_hinge),
    ROW("algo newton, l1", HOG_EINVAL, newton_l1, HOG_CONFLICT_OPTIONS,
        "--algo newton solves L2-regularized problems only (l1 = %s); for L1 "
        "use --algo scd", l1_value, ex_newton_l1),
    ROW("algo newton, l2", HOG_EINVAL, newton_l2, HOG_CONFLICT_OPTIONS,
        "--algo newton needs l2 > 0 (or --C: l2 = 1 / (C n))", NULL,
        ex_newton_l2),
    ROW("algo lbfgs, loss", HOG_EINVAL, lbfgs_hinge, HOG_CONFLICT_OPTIONS,
        "--algo lbfgs needs a loss with a continuous derivative (logistic, "
        "sqhinge or squared); for the hinge loss use --algo dcd", NULL,
        ex_lbfgs_hinge),
    ROW("algo lbfgs, l1, l2", HOG_EINVAL, lbfgs_unregularized,
        HOG_CONFLICT_OPTIONS,
        "--algo lbfgs needs l2 > 0 (or --C: l2 = 1 / (C n)) or l1 > 0: "
        "without regularization the minimum may be at infinity", NULL,
        ex_lbfgs_unregularized),

    /* FTRL's two sums in place of the weights */
    ROW("schedule ftrl, gpus", HOG_ENOTSUP, ftrl_gpu, HOG_CONFLICT_OPTIONS,
        "--schedule ftrl does not combine with the GPU trainer (--gpus) yet; "
        "use --schedule adagrad there", NULL, ex_ftrl_gpu),
    ROW("schedule ftrl, replicas", HOG_ENOTSUP, ftrl_replicas,
        HOG_CONFLICT_OPTIONS,
        "--schedule ftrl does not combine with --replicas node or core (the "
        "replicas are averaged weight by weight) yet; use --schedule adagrad "
        "there", NULL, ex_ftrl_replicas),
    ROW("schedule ftrl, hot_features", HOG_ENOTSUP, ftrl_hot, HOG_CONFLICT_OPTIONS,
        "--schedule ftrl does not combine with hot-feature replicas (--hot) "
        "yet; use --schedule adagrad there", NULL, ex_ftrl_hot),
    ROW("schedule ftrl, average", HOG_ENOTSUP, ftrl_world, HOG_CONFLICT_OPTIONS,
        "--schedule ftrl does not combine with model averaging across "
        "processes (--world, mpirun) yet; use --schedule adagrad there", NULL,
        ex_ftrl_world),
    ROW("schedule ftrl, multiclass softmax", HOG_ENOTSUP, ftrl_softmax,
        HOG_CONFLICT_OPTIONS,
        "--schedule ftrl does not combine with --multiclass softmax (its "
        "K-wide weights are AdaGrad's) yet; use --schedule adagrad there",
        NULL, ex_ftrl_softmax),

    /* what the data tells: the blocks of averaging, its interactions and
     * its classes */
    ROW("average, average_blocks", HOG_EINVAL, no_blocks, HOG_CONFLICT_DATA,
        "model averaging needs at least one block per epoch", NULL,
        ex_no_blocks),
    ROW("interactions, gpus", HOG_ENOTSUP, cross_gpu, HOG_CONFLICT_OPTIONS,
        "--interactions do not combine with the GPU trainer (--gpus), whose "
        "kernels do not cross rows; drop one of the two", NULL, ex_cross_gpu),
    ROW("interactions, average", HOG_ENOTSUP, cross_world,
        HOG_CONFLICT_OPTIONS,
        "--interactions do not combine with model averaging across "
        "processes, whose trainer does not cross rows; drop one of the two",
        NULL, ex_cross_world),
    ROW("interactions, hot_features", HOG_ENOTSUP, cross_hot, HOG_CONFLICT_OPTIONS,
        "--interactions do not combine with hot-feature replicas (--hot), "
        "whose loops do not cross rows; drop one of the two", NULL,
        ex_cross_hot),
    ROW("interactions, normalize", HOG_ENOTSUP, cross_normalize,
        HOG_CONFLICT_OPTIONS,
        "--interactions do not combine with --normalize, whose scales of the "
        "stored features are not the crossed features'; drop one of the two",
        NULL, ex_cross_normalize),
    ROW("multiclass softmax, loss", HOG_EINVAL, softmax_loss,
        HOG_CONFLICT_CLASSES,
        "--multiclass softmax is multinomial logistic regression and needs "
        "the logistic loss, not %s (one-vs-rest, --multiclass ovr, takes "
        "every loss)", loss_name, ex_softmax_loss),
    ROW("multiclass softmax, algo", HOG_ENOTSUP, softmax_algo,
        HOG_CONFLICT_CLASSES,
        "--multiclass softmax runs with --algo serial, hogwild and cyclades; "
        "%s trains K classes one-vs-rest (--multiclass ovr)", algo_title,
        ex_softmax_algo),
    ROW("multiclass softmax, update", HOG_ENOTSUP, softmax_update,
        HOG_CONFLICT_CLASSES,
        "--multiclass softmax runs Hogwild! on one shared model with "
        "lock-free updates only; drop --update (or train one-vs-rest: "
        "--multiclass ovr)", NULL, ex_softmax_update),
    ROW("multiclass softmax, replicas", HOG_ENOTSUP, softmax_replicas,
        HOG_CONFLICT_CLASSES,
        "--multiclass softmax runs Hogwild! on one shared model with "
        "lock-free updates only; drop --replicas (or train one-vs-rest: "
        "--multiclass ovr)", NULL, ex_softmax_replicas),
    ROW("multiclass softmax, hot_features", HOG_ENOTSUP, softmax_hot,
        HOG_CONFLICT_CLASSES,
        "--multiclass softmax runs Hogwild! on one shared model with "
        "lock-free updates only; drop --hot (or train one-vs-rest: "
        "--multiclass ovr)", NULL, ex_softmax_hot),
    ROW("multiclass, gpus", HOG_ENOTSUP, multi_gpu, HOG_CONFLICT_CLASSES,
        "the GPU trainer takes two classes only; the training labels have "
        "more (train K classes on the CPUs: drop --gpus)", NULL,
        ex_multi_gpu),
};
#define N_ROWS (sizeof rows / sizeof rows[0])

const struct hog_conflict *hog_train_conflicts(size_t *n)
{
    *n = N_ROWS;
    return rows;
}

hog_status hog_conflict_refuse(const struct hog_conflict *r,
                               const struct hog_conflict_ctx *c, hog_err *err)
{
    const char *at = r->detail ? strstr(r->sentence, "%s") : NULL;
    if (!at)
        return hog_errf(err, r->status, "%s", r->sentence);
    char buf[64];
    return hog_errf(err, r->status, "%.*s%s%s", (int)(at - r->sentence),
                    r->sentence, r->detail(c, buf, sizeof buf), at + 2);
}

hog_status hog_train_conflicts_check(const struct hog_conflict_ctx *c,
                                     hog_err *err)
{
    for (size_t i = 0; i < N_ROWS; i++) {
        if (rows[i].data != HOG_CONFLICT_OPTIONS && !c->train)
            continue; /* the data is not read yet */
        if (rows[i].hit(c))
            return hog_conflict_refuse(&rows[i], c, err);
    }
    return HOG_OK;
}

bool hog_train_ftrl_runs(const hog_train_opts *o, const hog_train_hooks *h)
{
    const struct hog_algo_row *row = hog_algo_row(o->algo);
    if (!row || !(row->caps & HOG_CAP_FTRL))
        return false;
    hog_train_opts f = *o;
    f.schedule = HOG_SCHED_FTRL;
    struct hog_conflict_ctx c;
    hog_conflict_ctx_of(&c, &f, h, NULL, false);
    for (size_t i = 0; i < N_ROWS; i++)
        if (strncmp(rows[i].options, "schedule ftrl,", 14) == 0 &&
            rows[i].hit(&c))
            return false;
    return true;
}
