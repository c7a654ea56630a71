/*
 * The options' table: one row per scalar option of hog_train_opts, with
 * its type, range, default, the rule of a default that depends on other
 * options, the command's flag and help text and the Python estimators'
 * parameter (in the spirit of redis' config.c). The library's defaults
 * live here and nowhere else: hog_train_opts_init() writes each row's
 * default and leaves the rule-bound options unset, every training entry
 * point calls hog_train_opts_resolve(), and the command and the Python
 * package set only what their user gave. The command's --help is printed
 * from these rows (src/cli/train_help.c); tests/test_options.c checks the
 * man page and the Python package against them.
 */
#include "train/train.h"

#include "core/loss.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define OFF(f) offsetof(hog_train_opts, f)
#define NUM(f, t, lo, hi) .field = #f, .offset = OFF(f), .type = t, \
                          .min = (lo), .max = (hi)

static const hog_train_option rows[] = {
    { NUM(loss, HOG_OPTION_ENUM, 0, HOG_LOSS_COUNT - 1),
      .def = HOG_LOSS_LOGISTIC, .flag = "loss", .metavar = "L",
      .help = "logistic, hinge, sqhinge, modified_huber\n"
              "(classification); squared, huber,\n"
              "epsilon_insensitive, squared_epsilon_insensitive,\n"
              "quantile or poisson (regression; docs/TRAINING.md,\n"
              "\"Losses\")",
      .python = "loss" },
    { NUM(epsilon, HOG_OPTION_DOUBLE, 0, HUGE_VAL), .def = 0.1,
      .flag = "epsilon", .metavar = "X",
      .help = "huber's threshold, the epsilon-insensitive\n"
              "losses' tube (LIBLINEAR's -p), X >= 0",
      .python = "epsilon" },
    { NUM(quantile_tau, HOG_OPTION_DOUBLE, 0, 1), .above_min = 1,
      .below_max = 1, .def = 0.5, .flag = "quantile-tau", .metavar = "X",
      .help = "the quantile loss's tau, 0 < X < 1", .python = "quantile_tau" },
    { NUM(algo, HOG_OPTION_ENUM, 0, HOG_ALGO_AUTO),
      .def = HOG_ALGO_AUTO, .flag = "algo", .metavar = "A",
      .help = "auto: serial, or hogwild with a model per thread\n"
              "where the data is large enough to gain (said in\n"
              "the progress and the JSON); serial\n"
              "(deterministic), hogwild, cyclades, scd,\n"
              "dcd, newton (trust-region Newton, LIBLINEAR\n"
              "-s 0 and -s 2: logistic, sqhinge or squared\n"
              "loss with l2; the same model at any --threads)\n"
              "or lbfgs (L-BFGS, the same losses with l2, and\n"
              "OWL-QN with --l1: -s 6's problem with --reg l1;\n"
              "the same model at any --threads). Shared\n"
              "hogwild, cyclades (AdaGrad only), scd and dcd\n"
              "were slower than the default on two cores and\n"
              "the 1M-row set, so auto never picks them\n"
              "(docs/TRAINING.md, \"--algo auto\")",
      .python = "algorithm" },
    { NUM(multiclass, HOG_OPTION_ENUM, 0, HOG_MULTICLASS_SOFTMAX),
      .def = HOG_MULTICLASS_OVR, .flag = "multiclass", .metavar = "M",
      .help = "3 or more label values train K classes: ovr\n"
              "(one-vs-rest, every algorithm and loss) or\n"
              "softmax (multinomial logistic regression:\n"
              "logistic loss; --algo serial, hogwild or\n"
              "cyclades)",
      .python = "multiclass" },
    /* the rules' order: schedule before l2, which depends on it */
    { NUM(schedule, HOG_OPTION_ENUM, 0, HOG_SCHED_FTRL),
      .def = HOG_SCHED_ADAGRAD,
      .rule = "ftrl where it runs: serial and hogwild without\n"
              "--hot, --world, softmax or --gpus;\n"
              "invscaling with --average; adagrad elsewhere",
      .flag = "schedule", .metavar = "S",
      .help = "constant, invscaling, adagrad or ftrl; ftrl:\n"
              "FTRL-Proximal, --eta its alpha, l1 and l2 in\n"
              "closed form, K classes stepped together",
      .python = "schedule" },
    { NUM(l1, HOG_OPTION_DOUBLE, 0, HUGE_VAL), .def = 0, .flag = "l1",
      .metavar = "X", .help = "L1 regularization strength", .python = "l1" },
    { NUM(l2, HOG_OPTION_DOUBLE, 0, HUGE_VAL), .def = 1e-5,
      .rule = "1e-05; 4e-06 under ftrl", .flag = "l2", .metavar = "X",
      .help = "L2 regularization strength", .python = "alpha" },
    { NUM(eta, HOG_OPTION_DOUBLE, 0, HUGE_VAL), .above_min = 1, .def = 0.3,
      .rule = "0.3 with the logistic loss, 0.1 with hinge and\n"
              "sqhinge, 1 with squared (the other losses:\n"
              "docs/TRAINING.md, \"Losses\")",
      .flag = "eta", .metavar = "X", .help = "initial step size, X > 0",
      .python = "eta" },
    { NUM(power, HOG_OPTION_DOUBLE, 0, HUGE_VAL), .def = 0.5,
      .flag = "power", .metavar = "X",
      .help = "exponent of the invscaling schedule", .python = "power" },
    { NUM(bias, HOG_OPTION_DOUBLE, -HUGE_VAL, HUGE_VAL), .def = 1, .flag = "bias", .metavar = "X",
      .help = "value of a constant bias feature; 0 = no bias",
      .python = "intercept_scaling" },
    { NUM(epochs, HOG_OPTION_UNSIGNED, 0, 1000000), .def = 5,
      .rule = "5; 1000 for scd, dcd, newton and lbfgs, whose\n"
              "--tol stops them first; newton's and lbfgs's\n"
              "epoch is one iteration",
      .flag = "epochs", .metavar = "N",
      .help = "passes over the data, N >= 1 (0 with --init)",
      .python = "epochs" },
    { NUM(tol, HOG_OPTION_DOUBLE, 0, HUGE_VAL), .def = 0.01,
      .rule = "dcd 0.1, scd, newton and lbfgs 0.01, as\n"
              "LIBLINEAR's",
      .flag = "tol", .metavar = "X",
      .help = "scd, dcd, newton, lbfgs: stop once LIBLINEAR's\n"
              "-e criterion is below X; 0 runs every epoch",
      .python = "tol" },
    { NUM(update, HOG_OPTION_ENUM, 0, HOG_UPDATE_MUTEX),
      .def = HOG_UPDATE_NONE, .rule = "none; atomic for dcd",
      .flag = "update", .metavar = "U",
      .help = "how hogwild threads write shared weights: none\n"
              "(lock-free), atomic, striped or mutex; dcd: none\n"
              "(wild, PASSCoDe-Wild) or atomic (PASSCoDe-Atomic)" },
    { NUM(seed, HOG_OPTION_U64, 0, (double)UINT64_MAX), .def = 1,
      .flag = "seed", .metavar = "N", .help = "random seed",
      .python = "random_state" },
    { NUM(threads, HOG_OPTION_UNSIGNED, 0, 65536), .def = 0,
      .flag = "threads", .metavar = "N",
      .help = "worker threads; 0 = all allowed cores", .python = "n_jobs" },
    { NUM(replicas, HOG_OPTION_ENUM, 0, HOG_REPLICAS_CORE),
      .def = HOG_REPLICAS_SHARED, .flag = "replicas", .metavar = "R",
      .help = "shared (one model), node (one per NUMA node)\n"
              "or core (one per thread), averaged" },
    { NUM(sync_every, HOG_OPTION_U64, 0, (double)UINT64_MAX), .def = 65536 },
    { NUM(no_smt, HOG_OPTION_BOOL, 0, 1), .def = 0 },
    { NUM(oversubscribe, HOG_OPTION_BOOL, 0, 1), .def = 0 },
    { NUM(batch_size, HOG_OPTION_U64, 0, UINT32_MAX), .def = 0 },
    { NUM(repartition, HOG_OPTION_BOOL, 0, 1), .def = 0 },
    { NUM(cyclades_hot_degree, HOG_OPTION_U64, 0, (double)UINT64_MAX),
      .def = (double)HOG_HOT_AUTO },
    { NUM(hot_features, HOG_OPTION_U64, 0, (double)UINT64_MAX), .def = 0 },
    { NUM(gpu_step, HOG_OPTION_ENUM, 0, HOG_GPU_STEP_HOGWILD),
      .def = HOG_GPU_STEP_MINIBATCH },
    { NUM(gpu_batch, HOG_OPTION_UNSIGNED, 0, 1u << 30), .def = 0 },
    { NUM(metrics_every, HOG_OPTION_UNSIGNED, 0, 1000000), .def = 0 },
    { NUM(normalize, HOG_OPTION_BOOL, 0, 1), .def = 0, .python = "normalize" },
    { NUM(C, HOG_OPTION_DOUBLE, 0, HUGE_VAL), .def = 0,
      .python = "C" },
    { NUM(C_l1, HOG_OPTION_BOOL, 0, 1), .def = 0 },
    { NUM(holdout, HOG_OPTION_DOUBLE, 0, 1), .below_max = 1, .def = 0,
      .python = "holdout" },
    { NUM(early_stop, HOG_OPTION_UNSIGNED, 0, 1000000), .def = 0,
      .python = "early_stop" },
    { NUM(mem_budget, HOG_OPTION_U64, 0, (double)UINT64_MAX), .def = 0 },
    { NUM(io, HOG_OPTION_ENUM, 0, HOG_IO_PREAD), .def = HOG_IO_AUTO },
    { NUM(direct, HOG_OPTION_ENUM, -1, 1), .def = -1 },
    { NUM(checkpoint_epochs, HOG_OPTION_UNSIGNED, 0, 1000000), .def = 0 },
    { NUM(checkpoint_rows, HOG_OPTION_U64, 0, (double)UINT64_MAX), .def = 0 },
    { NUM(class_weight_balanced, HOG_OPTION_BOOL, 0, 1), .def = 0,
      .python = "class_weight" },
    /* a training option, not the model writer's: the trainer must hand
     * its state out after the last epoch for any writer to have it */
    { NUM(save_state, HOG_OPTION_BOOL, 0, 1), .def = 0, .flag = "save-state",
      .help = "keep the optimizer's state in the model (.hgm\n"
              "version 5: FTRL's or AdaGrad's sums, the epochs\n"
              "and steps), so that --init MODEL continues the\n"
              "run exactly: 3 epochs then 2 equal 5; serial",
      .python = "save_state" },
    { NUM(shuffle, HOG_OPTION_BOOL, 0, 1), .def = 1, .python = "shuffle" },
    { NUM(average, HOG_OPTION_U64, 0, (double)UINT64_MAX), .def = 0,
      .flag = "average", .metavar = "N",
      .help = "averaged SGD (ASGD, scikit-learn's average):\n"
              "the model is the mean of the weights after\n"
              "each step from the N-th on (1: every step;\n"
              "0: the last); --schedule constant or\n"
              "invscaling, --algo serial or hogwild",
      .python = "average" },
};
#define N_ROWS (sizeof rows / sizeof rows[0])

const hog_train_option *hog_train_options(size_t *n)
{
    *n = N_ROWS;
    return rows;
}

/* ---- a row's value ------------------------------------------------------ */

static double get(const hog_train_opts *o, const hog_train_option *r)
{
    const char *p = (const char *)o + r->offset;
    switch (r->type) {
    case HOG_OPTION_DOUBLE: { double v; memcpy(&v, p, sizeof v); return v; }
    case HOG_OPTION_UNSIGNED: { unsigned v; memcpy(&v, p, sizeof v); return v; }
    case HOG_OPTION_U64: { uint64_t v; memcpy(&v, p, sizeof v); return (double)v; }
    case HOG_OPTION_ENUM:
    case HOG_OPTION_BOOL: { int v; memcpy(&v, p, sizeof v); return v; }
    }
    return NAN;
}

static void set(hog_train_opts *o, const hog_train_option *r, double x)
{
    char *p = (char *)o + r->offset;
    switch (r->type) {
    case HOG_OPTION_DOUBLE: memcpy(p, &x, sizeof x); break;
    case HOG_OPTION_UNSIGNED: { unsigned v = (unsigned)x; memcpy(p, &v, sizeof v); break; }
    case HOG_OPTION_U64: {
        /* UINT64_MAX (HOG_HOT_AUTO) is 2^64 as a double, one past what
         * converts */
        uint64_t v = x >= 0x1p64 ? UINT64_MAX : (uint64_t)x;
        memcpy(p, &v, sizeof v);
        break;
    }
    case HOG_OPTION_ENUM:
    case HOG_OPTION_BOOL: { int v = (int)x; memcpy(p, &v, sizeof v); break; }
    }
}

static const hog_train_option *row_of(size_t off)
{
    for (size_t i = 0; i < N_ROWS; i++)
        if (rows[i].offset == off)
            return &rows[i];
    return NULL;
}

/* ---- init and resolve --------------------------------------------------- */

void hog_train_opts_init(hog_train_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    for (size_t i = 0; i < N_ROWS; i++)
        set(o, &rows[i], rows[i].def);
    /* the options whose default depends on others: hog_train_opts_resolve */
    o->schedule = HOG_SCHED_AUTO;
    o->update = HOG_UPDATE_AUTO;
    o->epochs = HOG_EPOCHS_AUTO;
    o->l2 = o->eta = o->tol = NAN;
}


/* The exact solvers stop at tol long before 1000 epochs (newton's and
 * lbfgs's epoch is one of their iterations); LIBLINEAR's -e of its dual
 * solvers is 0.1. */
static bool exact(hog_algo a)
{
    return a == HOG_ALGO_SCD || a == HOG_ALGO_DCD || a == HOG_ALGO_NEWTON ||
           a == HOG_ALGO_LBFGS;
}

/* "l2 (--l2, alpha) must be a number >= 0, not -1": the range in words. */
static hog_status out_of_range(const hog_train_option *r, double v,
                               hog_err *err)
{
    char name[96], range[96];
    if (r->flag && r->python && strcmp(r->python, r->field) != 0)
        snprintf(name, sizeof name, "%s (--%s, Python %s)", r->field, r->flag,
                 r->python);
    else if (r->flag && strcmp(r->flag, r->field) != 0)
        snprintf(name, sizeof name, "%s (--%s)", r->field, r->flag);
    else
        snprintf(name, sizeof name, "%s", r->field);
    if (r->type == HOG_OPTION_ENUM)
        return hog_errf(err, HOG_EINVAL, "the option %s is %d, not one of "
                        "its values (%g to %g)", name, (int)v, r->min, r->max);
    if (isinf(r->min) && isinf(r->max))
        snprintf(range, sizeof range, "a finite number");
    else if (isinf(r->max))
        snprintf(range, sizeof range, "a finite number %s %g",
                 r->above_min ? ">" : ">=", r->min);
    else
        snprintf(range, sizeof range, "a number from %g %s to %g %s", r->min,
                 r->above_min ? "(exclusive)" : "", r->max,
                 r->below_max ? "(exclusive)" : "");
    return hog_errf(err, HOG_EINVAL, "the option %s must be %s, not %g", name,
                    range, v);
}

static bool in_range(const hog_train_option *r, double v)
{
    if (r->type == HOG_OPTION_BOOL)
        return true;
    if (isnan(v) || v < r->min || v > r->max)
        return false;
    if (r->type == HOG_OPTION_DOUBLE && !isfinite(v))
        return false;
    if (r->above_min && v == r->min)
        return false;
    return !(r->below_max && v == r->max);
}

hog_status hog_train_opts_resolve(hog_train_opts *o, const hog_train_hooks *h,
                                  hog_err *err)
{
    if (!o || o->size != sizeof *o)
        return hog_errf(err, HOG_EINVAL, "the training options were not set "
                        "up with hog_train_opts_init()");
    /* algo, loss and multiclass first: the rules read them */
    const hog_train_option *const first[] = {
        row_of(OFF(algo)), row_of(OFF(loss)), row_of(OFF(multiclass)),
    };
    for (size_t i = 0; i < sizeof first / sizeof *first; i++)
        if (!in_range(first[i], get(o, first[i])))
            return out_of_range(first[i], get(o, first[i]), err);
    /* averaging needs a shared schedule (train/conflicts_trainers.c);
     * invscaling with l2 is the rate of Bottou's ASGD */
    if (o->schedule == HOG_SCHED_AUTO)
        o->schedule = o->average ? HOG_SCHED_INVSCALING
                      : hog_train_ftrl_runs(o, h) ? HOG_SCHED_FTRL
                                                  : HOG_SCHED_ADAGRAD;
    if (isnan(o->l2))
        o->l2 = o->schedule == HOG_SCHED_FTRL ? HOG_FTRL_L2_DEFAULT
                                              : row_of(OFF(l2))->def;
    if (isnan(o->eta))
        o->eta = hog_loss_rows[o->loss].eta; /* core/loss.c: why */
    if (o->epochs == HOG_EPOCHS_AUTO)
        o->epochs = exact(o->algo) ? 1000 : (unsigned)row_of(OFF(epochs))->def;
    if (isnan(o->tol))
        o->tol = o->algo == HOG_ALGO_DCD ? 0.1 : row_of(OFF(tol))->def;
    if (o->update == HOG_UPDATE_AUTO)
        o->update = o->algo == HOG_ALGO_DCD ? HOG_UPDATE_ATOMIC
                                            : HOG_UPDATE_NONE;
    for (size_t i = 0; i < N_ROWS; i++)
        if (!in_range(&rows[i], get(o, &rows[i])))
            return out_of_range(&rows[i], get(o, &rows[i]), err);
    return HOG_OK;
}
