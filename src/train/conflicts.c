/*
 * The conflicts between options, as rows beside the algorithms' table
 * (algos.c): this file the walk and the rows about options whatever
 * trains, conflicts_trainers.c the rows about what a trainer does not do
 * (walked after these). Each row names the options involved, the predicate over the
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
#include "train/conflicts.h"

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
    c->row_weights = o->row_weights != NULL;
    c->average = h && h->average;
    c->reduce = h && h->reduce;
    c->world = c->average || c->reduce;
    c->crossed = train && train->cross.n;
}

#define O (c->o)

/* ---- the predicates ----------------------------------------------------- */

static bool eta_l2(const struct hog_conflict_ctx *c)
{
    /* The coordinate methods and the exact solvers take no step size;
     * AdaGrad's and FTRL's per-coordinate rates never shrink a weight
     * past zero. */
    bool stepped = O->algo != HOG_ALGO_SCD && O->algo != HOG_ALGO_DCD &&
                   O->algo != HOG_ALGO_NEWTON && O->algo != HOG_ALGO_LBFGS;
    return stepped && O->schedule != HOG_SCHED_ADAGRAD && !hog_cf_ftrl(c) &&
           O->eta * O->l2 >= 1.0;
}
static bool epochs0(const struct hog_conflict_ctx *c)
{
    return O->epochs < 1 && !c->warm;
}
static bool holdout_validation(const struct hog_conflict_ctx *c)
{
    return O->holdout > 0 && c->validation;
}
static bool holdout_row_weights(const struct hog_conflict_ctx *c)
{
    return O->holdout > 0 && c->row_weights;
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
    return O->early_stop && hog_cf_ckpt(c);
}
static bool warm_resume(const struct hog_conflict_ctx *c)
{
    return c->warm && O->resume;
}
static bool warm_gpu(const struct hog_conflict_ctx *c)
{
    return c->warm && hog_cf_gpu(c);
}
static bool warm_normalize(const struct hog_conflict_ctx *c)
{
    return c->warm && O->normalize;
}
static bool gpu_world(const struct hog_conflict_ctx *c)
{
    return hog_cf_gpu(c) && c->world;
}
static bool gpu_weighted(const struct hog_conflict_ctx *c)
{
    return hog_train_gpu_replicas(O) && c->weighted;
}
static bool gpu_hogwild_adagrad(const struct hog_conflict_ctx *c)
{
    return hog_cf_gpu(c) && O->gpu_step == HOG_GPU_STEP_HOGWILD &&
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
    return c->stream && (hog_cf_gpu(c) || c->world);
}
static bool stream_ckpt(const struct hog_conflict_ctx *c)
{
    return c->stream && hog_cf_ckpt(c);
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
    return c->stream && hog_cf_algo_is(c, HOG_ALGO_HOGWILD) &&
           O->replicas != HOG_REPLICAS_SHARED;
}
static bool stream_hot(const struct hog_conflict_ctx *c)
{
    return c->stream && hog_cf_algo_is(c, HOG_ALGO_HOGWILD) && O->hot_features;
}

/* ---- the details a sentence names --------------------------------------- */

static const char *eta_l2_value(const struct hog_conflict_ctx *c, char *buf,
                                size_t len)
{
    snprintf(buf, len, "%g", O->eta * O->l2);
    return buf;
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
static void ex_holdout_row_weights(hog_train_opts *o,
                                   struct hog_conflict_ctx *c)
{
    o->holdout = 0.2;
    c->row_weights = true;
    c->weighted = true;
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
/* ---- the rows ----------------------------------------------------------- */

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
    /* the held-out rows would take their weights with them */
    ROW("holdout, row_weights", HOG_ENOTSUP, holdout_row_weights,
        HOG_CONFLICT_OPTIONS,
        "a holdout with row weights (--weights) is not done yet: the "
        "held-out rows would take their weights with them; give "
        "--validation FILE instead", NULL, ex_holdout_row_weights),
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
        "--stream (or use serial or hogwild)", hog_cf_algo_title, ex_stream_algo),
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
        "training across processes runs with --algo serial, hogwild, newton "
        "or lbfgs for now, not with --gpus", NULL, ex_gpu_world),
    ROW("gpus, row_weights, class_weights", HOG_ENOTSUP, gpu_weighted,
        HOG_CONFLICT_OPTIONS,
        "the GPU trainer does not take row or class weights yet; drop --gpus "
        "(every CPU algorithm takes them)", NULL, ex_gpu_weighted),

};
#define N_ROWS (sizeof rows / sizeof rows[0])

const struct hog_conflict *hog_train_conflict(size_t i)
{
    if (i < N_ROWS)
        return &rows[i];
    i -= N_ROWS;
    return i < hog_conflicts_trainers_n ? &hog_conflicts_trainers[i] : NULL;
}

hog_status hog_conflict_refuse(const struct hog_conflict *r,
                               const struct hog_conflict_ctx *c, hog_err *err)
{
    const char *at = r->detail ? strstr(r->sentence, "%s") : NULL;
    if (!at)
        return hog_errf(err, r->status, "%s", r->sentence);
    char buf[160]; /* the longest detail: loss_trainers() */
    return hog_errf(err, r->status, "%.*s%s%s", (int)(at - r->sentence),
                    r->sentence, r->detail(c, buf, sizeof buf), at + 2);
}

hog_status hog_train_conflicts_check(const struct hog_conflict_ctx *c,
                                     hog_err *err)
{
    const struct hog_conflict *r;
    for (size_t i = 0; (r = hog_train_conflict(i)); i++) {
        if (r->data != HOG_CONFLICT_OPTIONS && !c->train)
            continue; /* the data is not read yet */
        if (r->hit(c))
            return hog_conflict_refuse(r, c, err);
    }
    return HOG_OK;
}

hog_status hog_train_conflicts_options(const hog_train_opts *o,
                                       const hog_train_hooks *h, bool stream,
                                       hog_err *err)
{
    struct hog_conflict_ctx c;
    hog_conflict_ctx_of(&c, o, h, NULL, stream);
    return hog_train_conflicts_check(&c, err);
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
    const struct hog_conflict *r;
    for (size_t i = 0; (r = hog_train_conflict(i)); i++)
        if (strncmp(r->options, "schedule ftrl,", 14) == 0 && r->hit(&c))
            return false;
    return true;
}