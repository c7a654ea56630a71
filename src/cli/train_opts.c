/* hogtrain train: the option table and parsing argv in steps:
 * the options one by one (those naming one of a few values by a table,
 * numbers through util.c's ranged helpers), the scale-out options
 * (train_net.c), then the checks of options that only make sense together. */
#include "cli/train.h"

#include "core/loss.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const struct option hog_cli_train_longopts[] = {
    { "test", required_argument, NULL, 't' },
    { "output", required_argument, NULL, 'o' },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { "seed", required_argument, NULL, OPT_SEED },
    HOG_CLI_LOAD_OPTIONS, /* --threads: the workers as well as the parser */
    { "epochs", required_argument, NULL, OPT_EPOCHS },
    { "loss", required_argument, NULL, OPT_LOSS },
    { "l1", required_argument, NULL, OPT_L1 },
    { "l2", required_argument, NULL, OPT_L2 },
    { "eta", required_argument, NULL, OPT_ETA },
    { "schedule", required_argument, NULL, OPT_SCHEDULE },
    { "power", required_argument, NULL, OPT_POWER },
    { "epsilon", required_argument, NULL, OPT_EPSILON },
    { "quantile-tau", required_argument, NULL, OPT_QUANTILE_TAU },
    { "bias", required_argument, NULL, OPT_BIAS },
    { "algo", required_argument, NULL, OPT_ALGO },
    { "update", required_argument, NULL, OPT_UPDATE },
    { "json", required_argument, NULL, OPT_JSON },
    { "model-format", required_argument, NULL, OPT_MODEL_FORMAT },
    { "gpus", required_argument, NULL, OPT_GPUS },
    { "gpu-step", required_argument, NULL, OPT_GPU_STEP },
    { "gpu-batch", required_argument, NULL, OPT_GPU_BATCH },
    { "sync-every", required_argument, NULL, OPT_SYNC_EVERY },
    { "world", required_argument, NULL, OPT_WORLD },
    { "rank", required_argument, NULL, OPT_RANK },
    { "coordinator", required_argument, NULL, OPT_COORDINATOR },
    { "secret-file", required_argument, NULL, OPT_SECRET_FILE },
    { "insecure", no_argument, NULL, OPT_INSECURE },
    { "job", required_argument, NULL, OPT_JOB },
    { "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
    { "net-timeout", required_argument, NULL, OPT_NET_TIMEOUT },
    { "sync", required_argument, NULL, OPT_SYNC },
    { "bmuf-momentum", required_argument, NULL, OPT_BMUF_MOMENTUM },
    { "bmuf-lr", required_argument, NULL, OPT_BMUF_LR },
    { "bmuf-nesterov", required_argument, NULL, OPT_BMUF_NESTEROV },
    { "shard", required_argument, NULL, OPT_SHARD },
    { "checkpoint", required_argument, NULL, OPT_CHECKPOINT },
    { "net-backend", required_argument, NULL, OPT_NET_BACKEND },
    { "bind", required_argument, NULL, OPT_BIND },
    { "no-smt", no_argument, NULL, OPT_NO_SMT },
    { "oversubscribe", no_argument, NULL, OPT_OVERSUBSCRIBE },
    { "replicas", required_argument, NULL, OPT_REPLICAS },
    { "batch-size", required_argument, NULL, OPT_BATCH_SIZE },
    { "repartition", no_argument, NULL, OPT_REPARTITION },
    { "deterministic", no_argument, NULL, OPT_DETERMINISTIC },
    { "hot", required_argument, NULL, OPT_HOT },
    { "tol", required_argument, NULL, OPT_TOL },
    { "stream", no_argument, NULL, OPT_STREAM },
    { "mem-budget", required_argument, NULL, OPT_MEM_BUDGET },
    { "io", required_argument, NULL, OPT_IO },
    { "direct", required_argument, NULL, OPT_DIRECT },
    { "checkpoint-every", required_argument, NULL, OPT_CHECKPOINT_EVERY },
    { "resume", required_argument, NULL, OPT_RESUME },
    { "metrics-every", required_argument, NULL, OPT_METRICS_EVERY },
    { "multiclass", required_argument, NULL, OPT_MULTICLASS },
    { "normalize", no_argument, NULL, OPT_NORMALIZE },
    { "init", required_argument, NULL, OPT_INIT },
    { "save-state", no_argument, NULL, OPT_SAVE_STATE },
    { "average", required_argument, NULL, OPT_AVERAGE },
    { "weights", required_argument, NULL, OPT_WEIGHTS },
    { "class-weight", required_argument, NULL, OPT_CLASS_WEIGHT },
    { "C", required_argument, NULL, OPT_C },
    { "reg", required_argument, NULL, OPT_REG },
    { "cv", required_argument, NULL, OPT_CV },
    { "search-C", no_argument, NULL, OPT_SEARCH_C },
    { "plot", required_argument, NULL, OPT_PLOT },
    { "holdout", required_argument, NULL, OPT_HOLDOUT },
    { "validation", required_argument, NULL, OPT_VALIDATION },
    { "early-stop", required_argument, NULL, OPT_EARLY_STOP },
    { "interactions", required_argument, NULL, OPT_INTERACTIONS },
    { "keep-names", no_argument, NULL, OPT_KEEP_NAMES },
    { NULL, 0, NULL, 0 },
};

static const struct hog_cli_cmd *const cmd = &hog_cli_train_cmd;
static const struct option *const longopts = hog_cli_train_longopts;

/* ---- the options one by one ---------------------------------------------------- */

static const struct hog_cli_name gpu_step_names[] = {
    { "minibatch", HOG_GPU_STEP_MINIBATCH, false },
    { "hogwild", HOG_GPU_STEP_HOGWILD, false }, { NULL, 0, false },
};
static const struct hog_cli_name format_names[] = {
    { "hgm", HOG_MODEL_HGM, false }, { "liblinear", HOG_MODEL_LIBLINEAR, false },
    { NULL, 0, false },
};
static const struct hog_cli_name sync_names[] = {
    { "ma", HOG_AVG_MA, false }, { "bmuf", HOG_AVG_BMUF, false }, { NULL, 0, false },
};
static const struct hog_cli_name shard_names[] = {
    { "stride", HOG_SHARD_STRIDE, false }, { "range", HOG_SHARD_RANGE, false },
    { NULL, 0, false },
};
static const struct hog_cli_name backend_names[] = {
    { "tcp", NET_BACKEND_TCP, false }, { "mpi", NET_BACKEND_MPI, false },
    { NULL, 0, false },
};
static const struct hog_cli_name io_names[] = {
    { "uring", HOG_IO_URING, false }, { "pread", HOG_IO_PREAD, false },
    { "io_uring", HOG_IO_URING, true }, { NULL, 0, false },
};
static const struct hog_cli_name multiclass_names[] = {
    { "ovr", HOG_MULTICLASS_OVR, false },
    { "softmax", HOG_MULTICLASS_SOFTMAX, false }, { NULL, 0, false },
};
static const struct hog_cli_name direct_names[] = {
    { "auto", -1, false }, { "on", 1, false }, { "off", 0, false },
    { NULL, 0, false },
};

/* The options whose value is one of a few names (--loss and --schedule
 * are the shared parser's, util.c): -1 when ch is none of them. */
static int enum_option(struct train_args *a, int ch, const char *arg)
{
    struct net_args *na = &a->net;
    const struct hog_cli_enum table[] = {
        { OPT_ALGO, "algorithm", hog_cli_algo_names(),
          HOG_CLI_TARGET(a->o.algo) },
        { OPT_UPDATE, "update mode", hog_cli_update_names,
          HOG_CLI_TARGET(a->o.update) },
        { OPT_REPLICAS, "replica mode", hog_cli_replicas_names,
          HOG_CLI_TARGET(a->o.replicas) },
        { OPT_GPU_STEP, "step", gpu_step_names, HOG_CLI_TARGET(a->o.gpu_step) },
        { OPT_MODEL_FORMAT, "format", format_names, HOG_CLI_TARGET(a->fmt) },
        { OPT_SYNC, "method", sync_names, HOG_CLI_TARGET(na->ao.mode) },
        { OPT_SHARD, "mode", shard_names, HOG_CLI_TARGET(na->shard_mode) },
        { OPT_NET_BACKEND, "backend", backend_names,
          HOG_CLI_TARGET(na->backend) },
        { OPT_IO, "backend", io_names, HOG_CLI_TARGET(a->o.io) },
        { OPT_DIRECT, NULL, direct_names, HOG_CLI_TARGET(a->o.direct) },
        { OPT_MULTICLASS, NULL, multiclass_names,
          HOG_CLI_TARGET(a->o.multiclass) },
    };
    return hog_cli_enum_option(cmd, longopts, table,
                               sizeof table / sizeof *table, ch, arg);
}

/* --checkpoint-every N (epochs) or Nr (rows). */
static int checkpoint_every(struct train_args *a, const char *arg)
{
    size_t l = strlen(arg);
    bool rows = l > 1 && arg[l - 1] == 'r';
    char num[32];
    uint64_t u;
    if (l - rows >= sizeof num)
        return hog_cli_usage_error(cmd, "--checkpoint-every: '%s' is too "
                                   "long", arg);
    memcpy(num, arg, l - rows);
    num[l - rows] = 0;
    if (!hog_parse_u64(num, 1, rows ? UINT64_MAX : 1000000, &u))
        return hog_cli_usage_error(cmd, "--checkpoint-every: '%s' is not N "
                                   "epochs or Nr rows (N >= 1)", arg);
    if (rows)
        a->o.checkpoint_rows = u;
    else
        a->o.checkpoint_epochs = (unsigned)u;
    return HOG_EXIT_OK;
}

/* --hot auto, off (or 0) or a number, into the algorithm's own field:
 * Hogwild!'s hot_features (K features per thread), Cyclades'
 * cyclades_hot_degree (the features in more than D rows). One flag, as
 * users type it; the library keeps one field per meaning. The algorithms
 * without hot features refuse it (HOG_CAP_HOT); GPU replicas ignore it. */
static int hot_option(struct train_args *a)
{
    bool cyc = a->o.algo == HOG_ALGO_CYCLADES;
    uint64_t u;
    if (hog_cli_hot_parse(a->hot_arg, cyc ? UINT64_MAX - 1 : UINT32_MAX,
                          &u) != 0)
        return hog_cli_usage_error(cmd, "--hot: '%s' is not auto, off or a "
                                   "number %s", a->hot_arg,
                                   cyc ? "of rows (a degree)" : "of features");
    if (cyc)
        a->o.cyclades_hot_degree = u;
    else if (a->o.algo == HOG_ALGO_HOGWILD)
        a->o.hot_features = u;
    return -1;
}

/* --class-weight balanced, or LABEL:W[,LABEL:W...]: the labels and
 * weights into a->cw_* (the library checks them against the data). */
/* --interactions ab[,cde...], repeatable: the terms joined, checked as the
 * loader will parse them. */
static int interactions_option(struct train_args *a, const char *arg)
{
    size_t have = strlen(a->interactions), len = strlen(arg);
    if (len == 0)
        return hog_cli_usage_error(cmd, "--interactions: an empty list; give "
                                   "pairs or triples of namespaces, as ab "
                                   "or ab,cde");
    if (have + 1 + len >= sizeof a->interactions)
        return hog_cli_usage_error(cmd, "--interactions: more than %u "
                                   "interactions", HOG_MAX_INTERACTIONS);
    char all[sizeof a->interactions];
    memcpy(all, a->interactions, have);
    if (have)
        all[have++] = ',';
    memcpy(all + have, arg, len + 1);
    struct hog_interactions x;
    hog_err e;
    if (hog_interactions_parse(all, &x, &e) != HOG_OK)
        return hog_cli_usage_error(cmd, "--interactions: %s", e.msg);
    memcpy(a->interactions, all, sizeof all);
    a->lo.interactions = a->interactions;
    return HOG_EXIT_OK;
}

static int class_weight_option(struct train_args *a, const char *arg)
{
    a->class_weight = arg;
    free(a->cw_labels);
    free(a->cw_values);
    a->cw_labels = a->cw_values = NULL;
    a->o.class_weight_balanced = 0;
    a->o.n_class_weights = 0;
    if (strcmp(arg, "balanced") == 0) {
        a->o.class_weight_balanced = 1;
        return HOG_EXIT_OK;
    }
    size_t k = 1;
    for (const char *p = arg; *p; p++)
        k += *p == ',';
    if (k > HOG_MAX_CLASSES)
        return hog_cli_usage_error(cmd, "--class-weight: more than %u "
                                   "labels", HOG_MAX_CLASSES);
    a->cw_labels = malloc(k * sizeof *a->cw_labels);
    a->cw_values = malloc(k * sizeof *a->cw_values);
    if (!a->cw_labels || !a->cw_values)
        return hog_cli_usage_error(cmd, "--class-weight: out of memory");
    const char *p = arg;
    for (size_t i = 0; i < k; i++) {
        char *end;
        double l = strtod(p, &end), w = 0;
        bool ok = end != p && *end == ':';
        if (ok) {
            const char *q = end + 1;
            w = strtod(q, &end);
            ok = end != q && (*end == ',' || *end == '\0');
        }
        if (!ok || !isfinite(l))
            return hog_cli_usage_error(cmd, "--class-weight: '%s' is not "
                                       "balanced or LABEL:WEIGHT[,LABEL:"
                                       "WEIGHT...] (e.g. 1:5,-1:1)", arg);
        if (!(isfinite(w) && w >= 0))
            return hog_cli_usage_error(cmd, "--class-weight: the weight of "
                                       "label %g is %g; weights are finite "
                                       "numbers >= 0", l, w);
        a->cw_labels[i] = l;
        a->cw_values[i] = w;
        p = end + (*end == ',');
    }
    a->o.class_weight_labels = a->cw_labels;
    a->o.class_weight_values = a->cw_values;
    a->o.n_class_weights = (unsigned)k;
    return HOG_EXIT_OK;
}

/* Narrows a checked number into its field. */
#define SET_IF_OK(rc, field, v)                                               \
    do {                                                                      \
        if ((rc) == HOG_EXIT_OK)                                              \
            (field) = (v);                                                    \
    } while (0)

/* One option of train's own: HOG_EXIT_OK, the usage error's status, or -1
 * for one it does not know. */
static int own_option(struct train_args *a, int ch, const char *arg)
{
    struct net_args *na = &a->net;
    const char *name = hog_cli_opt_name(longopts, ch);
    int rc = enum_option(a, ch, arg);
    if (rc >= 0)
        return rc;
    uint64_t u = 0;
    rc = HOG_EXIT_OK;
    switch (ch) {
    case 't': a->test = arg; break;
    case 'o': a->model = arg; break;
    case 'q': a->quiet = true; break;
    case OPT_JSON: a->json = arg; break;
    case OPT_CHECKPOINT: /* which one: after hog_cli_train_parse_net() */
        a->o.checkpoint = na->ao.checkpoint = arg;
        break;
    case OPT_RESUME: a->o.resume = arg; break;
    case OPT_CHECKPOINT_EVERY: return checkpoint_every(a, arg);
    case OPT_SEED:
        return hog_cli_opt_u64(cmd, name, arg, 0, UINT64_MAX, &a->o.seed,
                               "a non-negative integer");
    case OPT_EPOCHS:
        rc = hog_cli_opt_u64(cmd, name, arg, 0, 1000000, &u,
                             "a number of epochs (1 to 1000000; 0 with "
                             "--init)");
        SET_IF_OK(rc, a->o.epochs, (unsigned)u);
        break;
    case OPT_GPUS: {
        struct hog_gpu_spec gs;
        hog_err e2 = { { 0 } };
        if (hog_gpu_spec_parse(arg, &gs, &e2) != HOG_OK)
            return hog_cli_usage_error(cmd, "%s", e2.msg);
        a->o.gpus = arg;
        break;
    }
    case OPT_GPU_BATCH:
        rc = hog_cli_opt_u64(cmd, name, arg, 1, UINT64_C(1) << 30, &u,
                             "a number of rows (1 to 2^30)");
        SET_IF_OK(rc, a->o.gpu_batch, (uint32_t)u);
        break;
    case OPT_SYNC_EVERY:
        /* Rows per replica (Hogwild! --replicas, GPU replicas --gpus) or
         * per process (--world, mpirun) between averagings: one meaning,
         * one field; 0 (Hogwild! replicas only, checked in
         * sync_every_options) never averages during training. */
        rc = hog_cli_opt_u64(cmd, name, arg, 0, UINT64_MAX, &a->o.sync_every,
                             "a number of rows");
        na->sync_every = a->o.sync_every;
        break;
    case OPT_BIND: a->o.bind = arg; break;
    case OPT_NO_SMT: a->o.no_smt = 1; break;
    case OPT_OVERSUBSCRIBE: a->o.oversubscribe = 1; break;
    case OPT_BATCH_SIZE:
        return hog_cli_opt_u64(cmd, name, arg, 1, UINT32_MAX,
                               &a->o.batch_size, "a number of rows (1 to %u)",
                               UINT32_MAX);
    case OPT_REPARTITION: a->o.repartition = 1; break;
    case OPT_NORMALIZE: a->o.normalize = 1; break;
    case OPT_INIT: a->init = arg; break;
    case OPT_SAVE_STATE: a->o.save_state = 1; break;
    case OPT_AVERAGE:
        return hog_cli_opt_u64(cmd, name, arg, 0, UINT64_MAX, &a->o.average,
                               "a step to start averaging from (1: the "
                               "first; 0: off)");
    case OPT_DETERMINISTIC: break;
    case OPT_HOT:
        a->hot_arg = arg; /* its meaning: after --algo is known */
        break;
    case OPT_METRICS_EVERY:
        rc = hog_cli_opt_u64(cmd, name, arg, 0, 1000000, &u,
                             "a number of epochs (0 to 1000000)");
        SET_IF_OK(rc, a->o.metrics_every, (unsigned)u);
        break;
    case OPT_TOL:
        return hog_cli_opt_double(cmd, name, arg, 0.0, HUGE_VAL, &a->o.tol,
                                  "a number >= 0");
    case OPT_WORLD:
        rc = hog_cli_opt_u64(cmd, name, arg, 1, HOG_NET_MAX_WORLD, &u,
                             "a number of processes (1 to %u)",
                             HOG_NET_MAX_WORLD);
        SET_IF_OK(rc, na->no.world, (unsigned)u);
        break;
    case OPT_RANK:
        rc = hog_cli_opt_u64(cmd, name, arg, 0, HOG_NET_MAX_WORLD - 1, &u,
                             "a rank (0 to %u)", HOG_NET_MAX_WORLD - 1);
        SET_IF_OK(rc, na->no.rank, (unsigned)u);
        break;
    case OPT_COORDINATOR: {
        /* The form only (HOST:PORT, [IPV6]:PORT, a port from 1 to 65535);
         * whether the host resolves is the rendezvous' call. */
        hog_err e2;
        if (hog_net_check_address(arg, &e2) != HOG_OK)
            return hog_cli_usage_error(cmd, "%s", e2.msg);
        na->no.coordinator = arg;
        break;
    }
    case OPT_SECRET_FILE: na->secret_file = arg; break;
    case OPT_INSECURE: na->no.insecure = 1; break;
    case OPT_JOB:
        if (strlen(arg) > 255)
            return hog_cli_usage_error(cmd, "--job: at most 255 bytes");
        na->no.job = arg;
        break;
    case OPT_CONNECT_TIMEOUT:
        return hog_cli_opt_double(cmd, name, arg, HOG_CLI_ABOVE(0.0), 1e6,
                                  &na->no.connect_timeout,
                                  "a number of seconds > 0");
    case OPT_NET_TIMEOUT:
        return hog_cli_opt_double(cmd, name, arg, HOG_CLI_ABOVE(0.0), 1e6,
                                  &na->no.timeout, "a number of seconds > 0");
    case OPT_BMUF_MOMENTUM:
        return hog_cli_opt_double(cmd, name, arg, 0.0, HOG_CLI_BELOW(1.0),
                                  &na->ao.momentum, "in [0, 1)");
    case OPT_BMUF_LR:
        return hog_cli_opt_double(cmd, name, arg, HOG_CLI_ABOVE(0.0), 1e6,
                                  &na->ao.block_lr, "a number > 0");
    case OPT_BMUF_NESTEROV:
        rc = hog_cli_opt_u64(cmd, name, arg, 0, 1, &u, "0 or 1");
        SET_IF_OK(rc, na->ao.nesterov, (int)u);
        break;
    case OPT_STREAM: a->stream = true; break;
    case OPT_KEEP_NAMES: a->lo.keep_names = 1; break;
    case OPT_WEIGHTS: a->weights = arg; break;
    case OPT_CLASS_WEIGHT: return class_weight_option(a, arg);
    case OPT_MEM_BUDGET:
        return hog_cli_opt_size(cmd, name, arg, 1, UINT64_MAX, &a->o.mem_budget,
                                "a size (e.g. 64M, 2G)");
    case OPT_CV:
        rc = hog_cli_opt_u64(cmd, name, arg, 2, HOG_CV_MAX_FOLDS, &u,
                             "a number of folds (2 to %u)", HOG_CV_MAX_FOLDS);
        SET_IF_OK(rc, a->cv, (unsigned)u);
        break;
    case OPT_SEARCH_C: a->search_c = true; break;
    case OPT_PLOT: a->plot = arg; break;
    case OPT_HOLDOUT:
        return hog_cli_opt_double(cmd, name, arg, HOG_CLI_ABOVE(0.0),
                                  HOG_CLI_BELOW(1.0), &a->o.holdout,
                                  "a share of the rows between 0 and 1 "
                                  "(exclusive)");
    case OPT_VALIDATION: a->validation = arg; break;
    case OPT_EARLY_STOP:
        rc = hog_cli_opt_u64(cmd, name, arg, 1, 1000000, &u,
                             "a number of epochs (1 to 1000000)");
        SET_IF_OK(rc, a->o.early_stop, (unsigned)u);
        break;
    case OPT_INTERACTIONS: return interactions_option(a, arg);
    default:
        return -1;
    }
    return rc;
}

/* The defaults, then every option through the shared parser and
 * own_option(). Returns -1 to go on, or an exit status. */
static int read_options(int argc, char **argv, struct train_args *a,
                        struct hog_cli_parser *op)
{
    struct net_args *na = &a->net;
    hog_train_opts_init(&a->o);
    a->h = (hog_train_hooks){ .size = sizeof a->h };
    hog_load_opts_init(&a->lo);
    a->fmt = HOG_MODEL_HGM;
    hog_net_opts_init(&na->no);
    hog_avg_opts_init(&na->ao);
    na->sync_every = 10000;
    na->backend = -1;
    hog_cli_parser_init(op, cmd, "t:o:qh", longopts);
    op->load = &a->lo;
    op->train = &a->o;
    op->repeatable = OPT_INTERACTIONS; /* as VW's -q */
    int ch, rc;
    while ((ch = hog_cli_getopt(op, argc, argv)) > 0) {
        char hint[256]; /* -q is --quiet; Vowpal Wabbit's -q ua is not */
        if (ch == 'q' && optind < argc && strcmp(argv[optind - 1], "-q") == 0 &&
            hog_cli_foreign_quiet(argv[optind], hint, sizeof hint))
            return hog_cli_usage_error(cmd, "%s", hint);
        if ((rc = own_option(a, ch, optarg)) < 0)
            return hog_cli_bad_option(cmd, '?', argv);
        if (rc != HOG_EXIT_OK)
            return rc;
    }
    if (ch < 0)
        return op->status;
    if (op->seen[HOG_CLI_OPT_THREADS]) /* one count for parser and workers */
        a->o.threads = a->lo.threads;
    na->shard = op->seen[OPT_SHARD];
    return -1;
}

/* ---- options that only make sense together ---------------------------------- */

/* --checkpoint: with several processes rank 0 writes the averaged model
 * (src/net); in one process, the model and its training state
 * (docs/RELIABILITY.md). */
static int checkpoint_options(struct train_args *a, const unsigned char *seen)
{
    if (!a->net.on) {
        a->net.ao.checkpoint = NULL;
        return -1;
    }
    a->o.checkpoint = NULL;
    if (seen[OPT_CHECKPOINT_EVERY] || seen[OPT_RESUME])
        return hog_cli_usage_error(cmd, "--%s works in one process only so "
                                   "far (not with --world or mpirun)",
                                   seen[OPT_RESUME] ? "resume"
                                                    : "checkpoint-every");
    return -1;
}

/* --deterministic, --gpus, what the algorithm accepts, and --hot's
 * meaning for it. */
static int algo_options(struct train_args *a, const unsigned char *seen)
{
    if (seen[OPT_DETERMINISTIC]) {
        if (seen[OPT_ALGO] && a->o.algo != HOG_ALGO_CYCLADES)
            return hog_cli_usage_error(cmd, "--deterministic selects --algo "
                                       "cyclades; it conflicts with --algo %s",
                                       hog_cli_algo_name(a->o.algo));
        a->o.algo = HOG_ALGO_CYCLADES;
    }
    /* --gpus: GPU replicas, or the products of an algorithm that runs
     * them there (the table's HOG_CAP_GPU: newton, lbfgs) */
    bool gpus = hog_train_gpu_replicas(&a->o);
    if (!gpus && (seen[OPT_GPU_STEP] || seen[OPT_GPU_BATCH]))
        return hog_cli_usage_error(cmd, "--%s applies to GPU replicas only "
                                   "(--gpus without --algo, or with --algo "
                                   "newton or lbfgs their products)",
                                   seen[OPT_GPU_STEP] ? "gpu-step"
                                                      : "gpu-batch");
    if (gpus && seen[OPT_ALGO])
        return hog_cli_usage_error(cmd, "--gpus trains GPU replicas, or runs "
                                   "the products of --algo newton and lbfgs; "
                                   "it does not combine with --algo %s",
                                   hog_cli_algo_name(a->o.algo));
    /* What the algorithm accepts: the library's table (src/train/algos.c),
     * asked with the options typed here as well as those the library sees
     * in the values, so that `--update none --algo serial` and the knobs
     * are refused too. Streaming is the library's to refuse (the row's
     * stream entry), with its own sentence. */
    if (!gpus) {
        static const struct { int opt; unsigned cap; } given[] = {
            { OPT_UPDATE, HOG_CAP_UPDATE },
            { OPT_REPLICAS, HOG_CAP_REPLICAS },
            { OPT_HOT, HOG_CAP_HOT },
            { OPT_BIND, HOG_CAP_BIND },
            { OPT_NO_SMT, HOG_CAP_BIND },
            { OPT_OVERSUBSCRIBE, HOG_CAP_BIND },
            { OPT_BATCH_SIZE, HOG_CAP_BATCH },
            { OPT_REPARTITION, HOG_CAP_BATCH },
            { OPT_TOL, HOG_CAP_TOL },
        };
        unsigned used = hog_train_opts_caps(&a->o, &a->h);
        /* --cv: the folds spread over the threads whatever the algorithm */
        if (a->cv)
            used &= ~(unsigned)HOG_CAP_THREADS;
        for (size_t i = 0; i < sizeof given / sizeof *given; i++)
            if (seen[given[i].opt])
                used |= given[i].cap;
        const struct hog_algo_row *row = hog_algo_row(a->o.algo);
        if (a->net.on) /* newton and lbfgs solve exactly, others average */
            used |= row && (row->caps & HOG_CAP_REDUCE) ? HOG_CAP_REDUCE
                                                        : HOG_CAP_WORLD;
        if (a->interactions[0])
            used |= HOG_CAP_INTERACTIONS;
        hog_err cap_err;
        if (hog_algo_check(a->o.algo, used, &cap_err) != HOG_OK)
            return hog_cli_usage_error(cmd, "%s", cap_err.msg);
    }
    /* Newton and L-BFGS take no steps of a given size: a schedule would be
     * ignored */
    bool newton = a->o.algo == HOG_ALGO_NEWTON;
    if ((newton || a->o.algo == HOG_ALGO_LBFGS) &&
        (seen[OPT_ETA] || seen[OPT_SCHEDULE] || seen[OPT_POWER]))
        return hog_cli_usage_error(cmd, "--%s applies to the SGD trainers; "
                                   "--algo %s takes no step size (its "
                                   "steps come from the %s)",
                                   seen[OPT_ETA] ? "eta"
                                   : seen[OPT_SCHEDULE] ? "schedule"
                                                        : "power",
                                   newton ? "newton" : "lbfgs",
                                   newton ? "trust region" : "line search");
    if (seen[OPT_HOT])
        return hot_option(a);
    return -1;
}

/* --sync-every: rows per replica or process between averagings, for
 * whatever averages: Hogwild! replicas, GPU replicas, processes. */
static int sync_every_options(const struct train_args *a,
                              const unsigned char *seen)
{
    bool gpus = hog_train_gpu_replicas(&a->o);
    bool cpu_replicas = a->o.algo == HOG_ALGO_HOGWILD &&
                        a->o.replicas != HOG_REPLICAS_SHARED;
    bool hot_folds = a->o.algo == HOG_ALGO_HOGWILD && a->o.hot_features;
    if (seen[OPT_SYNC_EVERY] && !cpu_replicas && !hot_folds && !gpus &&
        !a->net.on)
        return hog_cli_usage_error(cmd, "--sync-every applies to model "
                                   "replicas (--algo hogwild --replicas node "
                                   "or core, or --gpus) or to several "
                                   "processes (--world N, mpirun)");
    return -1;
}

/* The options not given take the library's defaults (src/train/options.c),
 * settled now so that the report and the checks below see them. Several
 * processes average the model: the library's defaults depend on that
 * (no FTRL), so the callback is named here; its context and the blocks
 * per epoch follow once the ranks have met (train_net.c). */
static int resolve(struct train_args *a)
{
    if (a->net.on)
        a->h.average = hog_avg_step;
    hog_err e;
    if (hog_train_opts_resolve(&a->o, &a->h, &e) != HOG_OK)
        return hog_cli_usage_error(cmd, "%s", e.msg);
    /* What the options mean together: the library's table, asked before
     * any file is read, with what the files named here will be */
    struct hog_conflict_ctx c;
    hog_conflict_ctx_of(&c, &a->o, &a->h, NULL, a->stream);
    c.validation = a->validation != NULL;
    c.warm = a->init != NULL;
    c.weighted |= a->weights || a->class_weight;
    c.row_weights |= a->weights != NULL;
    c.world |= a->net.on;
    c.crossed = a->interactions[0] != 0;
    if (hog_train_conflicts_check(&c, &e) != HOG_OK)
        return hog_cli_usage_error(cmd, "%s", e.msg);
    return -1;
}

/* --power, the checkpoint's, the model's and the stream's options, and
 * outputs that would overwrite inputs. */
static int file_options(const struct train_args *a, const unsigned char *seen)
{
    if (seen[OPT_POWER] && a->o.schedule != HOG_SCHED_INVSCALING)
        return hog_cli_usage_error(cmd, "--power applies to --schedule "
                                   "invscaling only");
    if (seen[OPT_EPSILON] &&
        hog_loss_rows[a->o.loss].param != HOG_LOSS_PARAM_EPSILON)
        return hog_cli_usage_error(cmd, "--epsilon applies to --loss huber, "
                                   "epsilon_insensitive and "
                                   "squared_epsilon_insensitive, not %s",
                                   hog_cli_loss_name(a->o.loss));
    if (seen[OPT_QUANTILE_TAU] && a->o.loss != HOG_LOSS_QUANTILE)
        return hog_cli_usage_error(cmd, "--quantile-tau applies to --loss "
                                   "quantile, not %s",
                                   hog_cli_loss_name(a->o.loss));
    if (a->init && a->model && hog_cli_same_file(a->init, a->model))
        return hog_cli_usage_error(cmd, "--init and -o name the same file");
    if (a->o.save_state && a->fmt != HOG_MODEL_HGM)
        return hog_cli_usage_error(cmd, "--save-state keeps the optimizer's "
                                   "state in a .hgm model; LIBLINEAR's text "
                                   "has no place for it (drop --model-format "
                                   "liblinear)");
    if (a->lo.keep_names && (a->fmt != HOG_MODEL_HGM || a->stream || !a->model))
        return hog_cli_usage_error(cmd, a->stream
                                   ? "--keep-names keeps the names of Vowpal "
                                     "Wabbit text's features; --stream reads "
                                     ".hgb chunks, which have none"
                                   : "--keep-names keeps the features' names "
                                     "in a .hgm model: it needs -o MODEL, "
                                     "and LIBLINEAR's text has no place for "
                                     "them");
    if (seen[OPT_CHECKPOINT_EVERY] && !a->o.checkpoint)
        return hog_cli_usage_error(cmd, "--checkpoint-every needs "
                                   "--checkpoint FILE");
    if (a->o.checkpoint && a->model &&
        hog_cli_same_file(a->o.checkpoint, a->model))
        return hog_cli_usage_error(cmd, "--checkpoint and -o name the same "
                                   "file");
    for (int k = 0; k < 2 && a->o.checkpoint; k++) {
        const char *in = k ? a->test : a->train;
        if (hog_cli_same_file(a->o.checkpoint, in))
            return hog_cli_usage_error(cmd, "--checkpoint %s would "
                                       "overwrite the input %s",
                                       a->o.checkpoint, in);
    }
    if (seen[OPT_MODEL_FORMAT] && !a->model)
        return hog_cli_usage_error(cmd, "--model-format needs -o MODEL");
    if (a->interactions[0] && (a->stream || seen[OPT_GPUS]))
        return hog_cli_usage_error(cmd, "--interactions cross the namespaces "
                                   "of Vowpal Wabbit text as in-memory rows "
                                   "are read; %s", a->stream
                                   ? "--stream reads .hgb chunks, which keep "
                                     "no namespaces"
                                   : "the GPU trainer does not cross them "
                                     "(drop --gpus)");
    if (!a->stream && (seen[OPT_MEM_BUDGET] || seen[OPT_IO] || seen[OPT_DIRECT]))
        return hog_cli_usage_error(cmd, "--%s applies to --stream only",
                                   seen[OPT_MEM_BUDGET] ? "mem-budget"
                                   : seen[OPT_IO]       ? "io"
                                                        : "direct");
    if (a->stream && strcmp(a->train, "-") == 0)
        return hog_cli_usage_error(cmd, "--stream reads a .hgb file, not "
                                   "standard input");
    const char *outs[] = { a->model, a->json, a->plot };
    const char *ins[] = { a->train, a->test, a->validation };
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            if (outs[i] && hog_cli_same_file(outs[i], ins[k]))
                return hog_cli_usage_error(cmd, "%s would overwrite the "
                                           "input %s", outs[i], ins[k]);
    if (a->model && a->json && hog_cli_same_file(a->model, a->json))
        return hog_cli_usage_error(cmd, "-o and --json name the same file");
    for (int i = 0; i < 2 && a->weights; i++)
        if (outs[i] && hog_cli_same_file(outs[i], a->weights))
            return hog_cli_usage_error(cmd, "%s would overwrite the weights "
                                       "file %s", outs[i], a->weights);
    if (a->test && strcmp(a->test, "-") == 0 && strcmp(a->train, "-") == 0)
        return hog_cli_usage_error(cmd, "TRAIN and TEST cannot both be "
                                   "standard input");
    return -1;
}

/* --cv, --search-C, --plot, --holdout, --validation and --early-stop:
 * model selection and validation (docs/TRAINING.md, "Cross-validation, C
 * search and early stopping"). */
static int selection_options(struct train_args *a, const unsigned char *seen)
{
    if (a->search_c && !a->cv)
        a->cv = 5; /* LIBLINEAR's -C without -v */
    if (seen[OPT_PLOT] && !a->search_c)
        return hog_cli_usage_error(cmd, "--plot draws the path of --search-C; "
                                   "add --search-C");
    if (a->plot) {
        const char *dot = strrchr(a->plot, '.');
        if (!dot || (strcmp(dot, ".svg") != 0 && strcmp(dot, ".png") != 0))
            return hog_cli_usage_error(cmd, "--plot %s: the image is .svg or "
                                       ".png", a->plot);
    }
    if (a->search_c && (seen[OPT_L1] || seen[OPT_L2]))
        return hog_cli_usage_error(cmd, "--search-C sets the regularization "
                                   "from C; drop --%s (--reg l1 searches l1)",
                                   seen[OPT_L1] ? "l1" : "l2");
    if (!a->cv)
        return -1;
    const char *not_with = a->stream                  ? "--stream"
                           : a->net.on                 ? "--world"
                           : a->o.checkpoint            ? "--checkpoint"
                           : a->o.resume                ? "--resume"
                           : hog_gpu_requested(&a->o) ? "--gpus"
                                                       : NULL;
    if (not_with)
        return hog_cli_usage_error(cmd, "--%s does not combine with %s "
                                   "(cross-validation trains K models in "
                                   "memory on this machine's CPUs)",
                                   a->search_c ? "search-C" : "cv", not_with);
    return -1;
}

/* ---- the steps ------------------------------------------------------------------ */

int hog_cli_train_parse(int argc, char **argv, struct train_args *a)
{
    struct hog_cli_parser op;
    int rc;
    if ((rc = read_options(argc, argv, a, &op)) >= 0)
        return rc;
    const unsigned char *seen = op.seen;
    if ((rc = hog_cli_train_parse_net(a, seen)) >= 0 ||
        (rc = checkpoint_options(a, seen)) >= 0)
        return rc;
    /* each rank trains a shard of the rows: the file's rows and the
     * classes' counts are the whole data's */
    if (a->net.on && (a->weights || a->class_weight))
        return hog_cli_usage_error(cmd, "--%s works in one process only so "
                                   "far (not with --world or mpirun)",
                                   a->weights ? "weights" : "class-weight");
    static const char *const files[] = { "TRAIN" };
    if ((rc = hog_cli_operands(cmd, argc, argv, 1, files, "one TRAIN file; "
                               "the test file goes after -t")) >= 0)
        return rc;
    a->train = argv[optind];
    if ((rc = algo_options(a, seen)) >= 0 ||
        (rc = sync_every_options(a, seen)) >= 0 ||
        (rc = resolve(a)) >= 0 || (rc = selection_options(a, seen)) >= 0)
        return rc;
    return file_options(a, seen);
}
