/*
 * The conflicts' rows about what a trainer does not do (conflicts.c walks
 * them after its own, the rows about options whatever trains): what the
 * coordinate methods and the exact solvers solve, what FTRL's sums, the
 * interactions and softmax's K-wide model do not combine with, and what
 * the trainers' state holds (checkpoints, hot features, replicas). Each
 * was once a refusal where its trainer set up; here the command asks the
 * rows that need no data before it reads a file.
 */
#include "train/conflicts.h"

#include "core/loss.h"

#include <stdio.h>

#define O (c->o)

/* ---- the predicates ----------------------------------------------------- */

/* the coordinate methods and the exact solvers */
static bool dcd_squared(const struct hog_conflict_ctx *c)
{
    return hog_cf_algo_is(c, HOG_ALGO_DCD) && O->loss == HOG_LOSS_SQUARED;
}
static bool dcd_l1(const struct hog_conflict_ctx *c)
{
    return hog_cf_algo_is(c, HOG_ALGO_DCD) && O->l1 != 0.0;
}
static bool dcd_l2(const struct hog_conflict_ctx *c)
{
    return hog_cf_algo_is(c, HOG_ALGO_DCD) && !(O->l2 > 0);
}
static bool dcd_update(const struct hog_conflict_ctx *c)
{
    return hog_cf_algo_is(c, HOG_ALGO_DCD) && O->update != HOG_UPDATE_NONE &&
           O->update != HOG_UPDATE_ATOMIC;
}
static bool scd_loss(const struct hog_conflict_ctx *c)
{
    return hog_cf_algo_is(c, HOG_ALGO_SCD) && O->loss != HOG_LOSS_SQUARED &&
           O->loss != HOG_LOSS_LOGISTIC;
}
static bool scd_update(const struct hog_conflict_ctx *c)
{
    return hog_cf_algo_is(c, HOG_ALGO_SCD) && O->update != HOG_UPDATE_NONE;
}
static bool newton_hinge(const struct hog_conflict_ctx *c)
{
    return hog_cf_algo_is(c, HOG_ALGO_NEWTON) && O->loss == HOG_LOSS_HINGE;
}
static bool newton_l1(const struct hog_conflict_ctx *c)
{
    return hog_cf_algo_is(c, HOG_ALGO_NEWTON) && O->l1 != 0.0;
}
static bool newton_l2(const struct hog_conflict_ctx *c)
{
    return hog_cf_algo_is(c, HOG_ALGO_NEWTON) && !(O->l2 > 0);
}
static bool lbfgs_hinge(const struct hog_conflict_ctx *c)
{
    return hog_cf_algo_is(c, HOG_ALGO_LBFGS) && O->loss == HOG_LOSS_HINGE;
}
/* The losses' table (core/loss.c) says which trainers take each loss;
 * the rows above say it in their own words for the first four. */
static bool loss_trainer(const struct hog_conflict_ctx *c)
{
    unsigned bit = hog_cf_gpu(c) ? HOG_LOSS_ON_GPU : HOG_LOSS_ALGO(O->algo);
    return hog_loss_valid((int)O->loss) && !(hog_loss_rows[O->loss].algos & bit);
}
static bool lbfgs_unregularized(const struct hog_conflict_ctx *c)
{
    return hog_cf_algo_is(c, HOG_ALGO_LBFGS) && !(O->l1 > 0) && !(O->l2 > 0);
}

/* FTRL-Proximal keeps two sums per coordinate in place of the weights
 * (core/sgd.h): what reads or writes the weights array itself does not
 * take it yet (the algorithms' table refuses Cyclades and coordinate
 * descent). Softmax counts wherever it is asked for while the data is
 * not known (the default schedule's rule, hog_train_ftrl_runs). */
static bool ftrl_gpu(const struct hog_conflict_ctx *c)
{
    return hog_cf_ftrl(c) && hog_cf_gpu(c);
}
static bool ftrl_hot(const struct hog_conflict_ctx *c)
{
    return hog_cf_ftrl(c) && O->hot_features;
}
static bool ftrl_world(const struct hog_conflict_ctx *c)
{
    return hog_cf_ftrl(c) && c->world;
}
static bool ftrl_softmax(const struct hog_conflict_ctx *c)
{
    return hog_cf_ftrl(c) && hog_cf_softmax_asked(c);
}

/* averaging across processes: the blocks of an epoch */
static bool no_blocks(const struct hog_conflict_ctx *c)
{
    /* the command names the blocks once the ranks have met */
    return c->train && c->average && O->average_blocks == 0;
}

/* --interactions: the rows are crossed in the SGD row loops and the
 * scorers; the trainers with loops of their own do not cross them yet */
static bool cross(const struct hog_conflict_ctx *c)
{
    return c->crossed;
}
static bool cross_gpu(const struct hog_conflict_ctx *c)
{
    return cross(c) && hog_cf_gpu(c);
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
    return hog_cf_softmax(c) && O->loss != HOG_LOSS_LOGISTIC;
}
static bool softmax_algo(const struct hog_conflict_ctx *c)
{
    const struct hog_algo_row *r = hog_algo_row(O->algo);
    return hog_cf_softmax(c) && !hog_cf_gpu(c) && r && !r->softmax;
}
/* softmax.c: Hogwild! on one shared K-wide model, plain stores */
static bool softmax_update(const struct hog_conflict_ctx *c)
{
    return hog_cf_softmax(c) && O->update != HOG_UPDATE_NONE;
}
static bool softmax_replicas(const struct hog_conflict_ctx *c)
{
    return hog_cf_softmax(c) && O->replicas != HOG_REPLICAS_SHARED;
}
static bool softmax_hot(const struct hog_conflict_ctx *c)
{
    return hog_cf_softmax(c) && O->hot_features;
}
static bool multi_gpu(const struct hog_conflict_ctx *c)
{
    return hog_cf_multi(c) && hog_cf_gpu(c);
}

/* What the trainers' state holds. Checkpoints are written in one process
 * by the CPU trainers (train/checkpoint.c); Hogwild!'s hold one shared
 * model after whole epochs; hot-feature replicas are views of one shared
 * model that averaging across processes does not pass through; streamed
 * softmax trains serially from the chunks, without a warm start. Replicas
 * are refused by option, not by how many the machine would make, so that
 * a run refused on a big machine is refused on a laptop too. */
static bool ckpt_world(const struct hog_conflict_ctx *c)
{
    return hog_cf_ckpt(c) && c->average;
}
static bool ckpt_gpu(const struct hog_conflict_ctx *c)
{
    return hog_cf_ckpt(c) && hog_cf_gpu(c);
}
static bool hot_world(const struct hog_conflict_ctx *c)
{
    return hog_cf_algo_is(c, HOG_ALGO_HOGWILD) && O->hot_features && c->average;
}
static bool hot_replicas(const struct hog_conflict_ctx *c)
{
    return hog_cf_algo_is(c, HOG_ALGO_HOGWILD) && O->hot_features &&
           O->replicas != HOG_REPLICAS_SHARED;
}
static bool hot_striped(const struct hog_conflict_ctx *c)
{
    return hog_cf_algo_is(c, HOG_ALGO_HOGWILD) && O->hot_features &&
           O->update == HOG_UPDATE_STRIPED;
}
static bool hogwild_ckpt_replicas(const struct hog_conflict_ctx *c)
{
    return hog_cf_algo_is(c, HOG_ALGO_HOGWILD) && hog_cf_ckpt(c) &&
           O->replicas != HOG_REPLICAS_SHARED;
}
/* softmax's trainers say it in their own words (softmax_ckpt_rows) */
static bool hogwild_ckpt_rows(const struct hog_conflict_ctx *c)
{
    return hog_cf_algo_is(c, HOG_ALGO_HOGWILD) && O->checkpoint &&
           O->checkpoint_rows && !hog_cf_softmax_asked(c);
}
static bool stream_softmax_algo(const struct hog_conflict_ctx *c)
{
    return c->stream && hog_cf_softmax(c) && !hog_cf_serial(c);
}
static bool stream_softmax_warm(const struct hog_conflict_ctx *c)
{
    return c->stream && hog_cf_softmax(c) && c->warm;
}
static bool softmax_ckpt_rows(const struct hog_conflict_ctx *c)
{
    return hog_cf_softmax(c) && O->checkpoint && O->checkpoint_rows;
}

/* ---- the details a sentence names --------------------------------------- */

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
/* "--algo dcd does not train the Huber loss; it trains with --algo
 * serial, hogwild, newton or lbfgs": the trainers from the table */
static const char *loss_trainers(const struct hog_conflict_ctx *c, char *buf,
                                 size_t len)
{
    unsigned a = hog_loss_rows[O->loss].algos;
    int n = snprintf(buf, len, "%s%s does not train the %s loss; it trains "
                     "with --algo", hog_cf_gpu(c) ? "--gpus" : "--algo ",
                     hog_cf_gpu(c) ? "" : hog_algo_row(O->algo)->name,
                     hog_loss_name(O->loss));
    int k = 0, total = 0;
    /* the trainers: auto chooses one of them */
    for (int i = 0; i < HOG_ALGO_AUTO; i++)
        total += (a & (1u << i)) && hog_algo_row((hog_algo)i);
    for (int i = 0; i < HOG_ALGO_AUTO && n > 0 && (size_t)n < len; i++) {
        const struct hog_algo_row *r = hog_algo_row((hog_algo)i);
        if (!(a & (1u << i)) || !r)
            continue;
        k++;
        n += snprintf(buf + n, len - (size_t)n, "%s%s",
                      k == 1 ? " " : k == total ? " or " : ", ", r->name);
    }
    return buf;
}
static const char *update_name(const struct hog_conflict_ctx *c, char *buf,
                               size_t len)
{
    (void)buf, (void)len;
    return O->update == HOG_UPDATE_STRIPED ? "striped" : "mutex";
}

/* ---- the examples: options that break each row (tests/test_options.c) -- */

static void ex_no_blocks(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    c->world = true;
    o->schedule = HOG_SCHED_ADAGRAD;
    c->average = true;
    o->average_blocks = 0;
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
static void ex_loss_trainer(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->algo = HOG_ALGO_DCD;
    o->loss = HOG_LOSS_HUBER;
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
static void ex_ckpt_world(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    c->world = true;
    o->schedule = HOG_SCHED_ADAGRAD;
    c->average = true;
    o->average_blocks = 1;
    o->checkpoint = "model.ckpt";
}
static void ex_ckpt_gpu(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->gpus = "0";
    o->schedule = HOG_SCHED_ADAGRAD;
    o->checkpoint = "model.ckpt";
}
static void ex_hot_world(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    c->world = true;
    o->algo = HOG_ALGO_HOGWILD;
    o->schedule = HOG_SCHED_ADAGRAD;
    o->hot_features = 64;
    c->average = true;
    o->average_blocks = 1;
}
static void ex_hot_replicas(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->algo = HOG_ALGO_HOGWILD;
    o->schedule = HOG_SCHED_ADAGRAD;
    o->hot_features = 64;
    o->replicas = HOG_REPLICAS_NODE;
}
static void ex_hot_striped(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->algo = HOG_ALGO_HOGWILD;
    o->schedule = HOG_SCHED_ADAGRAD;
    o->hot_features = 64;
    o->update = HOG_UPDATE_STRIPED;
}
static void ex_hogwild_ckpt_replicas(hog_train_opts *o,
                                     struct hog_conflict_ctx *c)
{
    (void)c;
    o->algo = HOG_ALGO_HOGWILD;
    o->schedule = HOG_SCHED_ADAGRAD;
    o->replicas = HOG_REPLICAS_CORE;
    o->checkpoint = "model.ckpt";
}
static void ex_hogwild_ckpt_rows(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->algo = HOG_ALGO_HOGWILD;
    o->checkpoint = "model.ckpt";
    o->checkpoint_rows = 1000;
}
static void ex_stream_softmax_algo(hog_train_opts *o,
                                   struct hog_conflict_ctx *c)
{
    c->stream = true;
    o->multiclass = HOG_MULTICLASS_SOFTMAX;
    o->algo = HOG_ALGO_HOGWILD;
    o->schedule = HOG_SCHED_ADAGRAD;
}
static void ex_stream_softmax_warm(hog_train_opts *o,
                                   struct hog_conflict_ctx *c)
{
    c->stream = true;
    c->warm = true;
    o->multiclass = HOG_MULTICLASS_SOFTMAX;
    o->algo = HOG_ALGO_SERIAL;
    o->schedule = HOG_SCHED_ADAGRAD;
}
static void ex_softmax_ckpt_rows(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->multiclass = HOG_MULTICLASS_SOFTMAX;
    o->algo = HOG_ALGO_SERIAL;
    o->schedule = HOG_SCHED_ADAGRAD;
    o->checkpoint = "model.ckpt";
    o->checkpoint_rows = 100;
}

/* The optimizer's state is taken from the serial trainer in memory after
 * its last epoch: other trainers keep per-thread or per-replica state, a
 * stream none, and early stopping's model is an earlier epoch's. */
static bool state_where(const struct hog_conflict_ctx *c)
{
    return O->save_state &&
           (hog_cf_gpu(c) || !hog_cf_serial(c) || c->stream ||
            c->world || O->early_stop);
}
static void ex_state_where(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->save_state = 1;
    o->algo = HOG_ALGO_HOGWILD;
}

/* Averaged SGD (--average; core/sgd_avg.h): one sum per weight of one
 * shared model, kept lazily between a weight's touches by the closed
 * form of the shared schedules' regularization steps. AdaGrad's and
 * FTRL's per-coordinate steps have no such sum in the kernel; the other
 * trainers take no SGD steps, or step weights the sums do not follow
 * (replicas, hot copies, softmax's K-wide rows, the ranks' average); the
 * state a model or a checkpoint keeps has no place for the sums. */
static bool avg_schedule(const struct hog_conflict_ctx *c)
{
    return O->average && (O->schedule == HOG_SCHED_ADAGRAD ||
                          O->schedule == HOG_SCHED_FTRL);
}
static bool avg_algo(const struct hog_conflict_ctx *c)
{
    return O->average && (hog_cf_gpu(c) || (!hog_cf_serial(c) &&
                                            O->algo != HOG_ALGO_HOGWILD));
}
static bool avg_replicas(const struct hog_conflict_ctx *c)
{
    return O->average && hog_cf_algo_is(c, HOG_ALGO_HOGWILD) &&
           (O->replicas != HOG_REPLICAS_SHARED || O->hot_features);
}
static bool avg_softmax(const struct hog_conflict_ctx *c)
{
    return O->average && hog_cf_softmax_asked(c);
}
static bool avg_world(const struct hog_conflict_ctx *c)
{
    return O->average && c->world;
}
static bool avg_state(const struct hog_conflict_ctx *c)
{
    return O->average && (O->save_state || hog_cf_ckpt(c));
}
static const char *schedule_name(const struct hog_conflict_ctx *c,
                                 char *buf, size_t len)
{
    (void)buf, (void)len;
    return O->schedule == HOG_SCHED_FTRL ? "ftrl" : "adagrad";
}
static const char *avg_trainer(const struct hog_conflict_ctx *c, char *buf,
                               size_t len)
{
    return hog_cf_gpu(c) ? "the GPU trainer (--gpus)"
                         : hog_cf_algo_title(c, buf, len);
}
static void ex_avg_schedule(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->average = 1;
    o->schedule = HOG_SCHED_ADAGRAD;
}
static void ex_avg_algo(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->average = 1;
    o->algo = HOG_ALGO_CYCLADES;
}
static void ex_avg_replicas(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->average = 1;
    o->algo = HOG_ALGO_HOGWILD;
    o->replicas = HOG_REPLICAS_CORE;
}
static void ex_avg_softmax(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->average = 1;
    o->multiclass = HOG_MULTICLASS_SOFTMAX;
}
static void ex_avg_world(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    o->average = 1;
    c->world = true;
}
static void ex_avg_state(hog_train_opts *o, struct hog_conflict_ctx *c)
{
    (void)c;
    o->average = 1;
    o->save_state = 1;
}

/* ---- the rows ----------------------------------------------------------- */

const struct hog_conflict hog_conflicts_trainers[] = {
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
    ROW("algo, loss", HOG_EINVAL, loss_trainer, HOG_CONFLICT_OPTIONS, "%s",
        loss_trainers, ex_loss_trainer),
    ROW("algo lbfgs, l1, l2", HOG_EINVAL, lbfgs_unregularized,
        HOG_CONFLICT_OPTIONS,
        "--algo lbfgs needs l2 > 0 (or --C: l2 = 1 / (C n)) or l1 > 0: "
        "without regularization the minimum may be at infinity", NULL,
        ex_lbfgs_unregularized),

    /* FTRL's two sums in place of the weights */
    ROW("schedule ftrl, gpus", HOG_ENOTSUP, ftrl_gpu, HOG_CONFLICT_OPTIONS,
        "--schedule ftrl does not combine with the GPU trainer (--gpus) yet; "
        "use --schedule adagrad there", NULL, ex_ftrl_gpu),
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
        "%s trains K classes one-vs-rest (--multiclass ovr)", hog_cf_algo_title,
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

    /* what the trainers' state holds */
    ROW("checkpoint, resume, average", HOG_ENOTSUP, ckpt_world,
        HOG_CONFLICT_OPTIONS,
        "checkpoints of the training state are written in one process only "
        "so far (not with averaging across processes)", NULL, ex_ckpt_world),
    ROW("checkpoint, resume, gpus", HOG_ENOTSUP, ckpt_gpu,
        HOG_CONFLICT_OPTIONS,
        "checkpoints are written by the serial, Hogwild! and Cyclades "
        "trainers only so far", NULL, ex_ckpt_gpu),
    ROW("algo hogwild, hot_features, average", HOG_ENOTSUP, hot_world,
        HOG_CONFLICT_OPTIONS,
        "hot-feature replicas (--hot) do not take part in averaging across "
        "processes yet: leave out --hot with --world or mpirun", NULL,
        ex_hot_world),
    ROW("algo hogwild, hot_features, replicas", HOG_EINVAL, hot_replicas,
        HOG_CONFLICT_OPTIONS,
        "hot-feature replicas (--hot) run on one shared model with --update "
        "none, atomic or mutex, not with model replicas", NULL,
        ex_hot_replicas),
    ROW("algo hogwild, hot_features, update", HOG_EINVAL, hot_striped,
        HOG_CONFLICT_OPTIONS,
        "hot-feature replicas (--hot) run on one shared model with --update "
        "none, atomic or mutex, not with striped locks (they need each row's "
        "indices in ascending order)", NULL, ex_hot_striped),
    ROW("algo hogwild, checkpoint, resume, replicas", HOG_ENOTSUP,
        hogwild_ckpt_replicas, HOG_CONFLICT_OPTIONS,
        "Hogwild! checkpoints hold one shared model; drop --replicas", NULL,
        ex_hogwild_ckpt_replicas),
    ROW("algo hogwild, checkpoint_rows", HOG_ENOTSUP, hogwild_ckpt_rows,
        HOG_CONFLICT_OPTIONS,
        "Hogwild! writes checkpoints after whole epochs only "
        "(--checkpoint-every N, without a rows suffix)", NULL,
        ex_hogwild_ckpt_rows),
    ROW("stream, multiclass softmax, algo", HOG_ENOTSUP, stream_softmax_algo,
        HOG_CONFLICT_CLASSES,
        "streamed softmax training (--stream --multiclass softmax) runs "
        "--algo serial only", NULL, ex_stream_softmax_algo),
    ROW("stream, multiclass softmax, warm_start", HOG_ENOTSUP,
        stream_softmax_warm, HOG_CONFLICT_CLASSES,
        "streamed softmax training (--stream --multiclass softmax) takes no "
        "warm start", NULL, ex_stream_softmax_warm),
    ROW("multiclass softmax, checkpoint_rows", HOG_ENOTSUP, softmax_ckpt_rows,
        HOG_CONFLICT_CLASSES,
        "softmax training writes checkpoints after whole epochs only "
        "(--checkpoint-every N, without a rows suffix)", NULL,
        ex_softmax_ckpt_rows),
    ROW("save_state, algo, stream, average, early_stop", HOG_ENOTSUP,
        state_where, HOG_CONFLICT_OPTIONS,
        "--save-state keeps the state of the serial trainer in memory after "
        "its last epoch: not with another --algo, --stream, --gpus, --world "
        "or --early-stop", NULL, ex_state_where),

    /* averaged SGD: the sums of the iterates */
    ROW("average, schedule", HOG_EINVAL, avg_schedule, HOG_CONFLICT_OPTIONS,
        "--average averages the steps of the shared schedules, --schedule "
        "constant or invscaling (scikit-learn's), not %s, whose "
        "per-coordinate rates it does not sum", schedule_name,
        ex_avg_schedule),
    ROW("average, algo, gpus", HOG_EINVAL, avg_algo, HOG_CONFLICT_OPTIONS,
        "--average averages the SGD steps of --algo serial and hogwild, not "
        "of %s", avg_trainer, ex_avg_algo),
    ROW("average, replicas, hot_features", HOG_ENOTSUP, avg_replicas,
        HOG_CONFLICT_OPTIONS,
        "--average keeps one sum per weight of one shared model: not with "
        "--replicas node or core, nor hot-feature replicas (--hot)", NULL,
        ex_avg_replicas),
    ROW("average, multiclass softmax", HOG_ENOTSUP, avg_softmax,
        HOG_CONFLICT_OPTIONS,
        "--average averages binary and one-vs-rest models, not --multiclass "
        "softmax's K-wide weights (train one-vs-rest: --multiclass ovr)",
        NULL, ex_avg_softmax),
    ROW("average, world", HOG_ENOTSUP, avg_world, HOG_CONFLICT_OPTIONS,
        "--average does not combine with model averaging across processes "
        "(--world, mpirun), whose average of the ranks' weights is not of "
        "the iterates; drop one of the two", NULL, ex_avg_world),
    ROW("average, save_state, checkpoint, resume", HOG_ENOTSUP, avg_state,
        HOG_CONFLICT_OPTIONS,
        "--average keeps a sum per weight that neither the model's state "
        "(--save-state, partial_fit) nor a checkpoint holds; drop one of "
        "the two", NULL, ex_avg_state),
};
const size_t hog_conflicts_trainers_n =
    sizeof hog_conflicts_trainers / sizeof hog_conflicts_trainers[0];
