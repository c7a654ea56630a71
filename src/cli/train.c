/* hogtrain train: load, train with progress, report, write the model. */
#include "cli/cli.h"
#include "gpu/gpu.h"
#include "net/net.h"
#include "train/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

enum {
    OPT_SEED = HOG_CLI_OPT_OWN,
    OPT_EPOCHS,
    OPT_LOSS,
    OPT_L1,
    OPT_L2,
    OPT_ETA,
    OPT_SCHEDULE,
    OPT_POWER,
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
    OPT_METRICS_EVERY, /* scd, dcd: full training metrics every K epochs */
};

static const struct option longopts[] = {
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
    { NULL, 0, NULL, 0 },
};

/* Coordinate descent stops on --tol; --epochs is then only a cap
 * (LIBLINEAR's default iteration limit). */
#define COORD_EPOCHS 1000u

/* The library's default step size for a loss. */
static double eta_for(hog_loss l)
{
    hog_train_opts o;
    hog_train_opts_init(&o);
    o.loss = l;
    hog_train_opts_defaults_for_loss(&o);
    return o.eta;
}

static void help(FILE *f)
{
    hog_train_opts d;
    hog_train_opts_init(&d);
    fprintf(f,
            "\n"
            "Trains a linear model on TRAIN (LIBSVM/SVMlight text or .hgb; '-' reads\n"
            "standard input), printing per-epoch metrics on standard error.\n"
            "\n"
            "data and output:\n"
            "  -t, --test FILE        also report metrics on FILE after each epoch\n"
            "  -o, --output MODEL     write the trained model to MODEL\n"
            "      --model-format F   hgm (hogtrain's binary model, default) or\n"
            "                         liblinear (text, readable by liblinear-predict)\n"
            "      --json FILE        write options, data summary, per-epoch metrics\n"
            "                         and timings to FILE as JSON\n"
            "      --zero-based       feature indices in the text start at 0\n"
            "  -q, --quiet            print nothing but errors\n"
            "      --checkpoint FILE  write the model and its training state to\n"
            "                         FILE (atomically) during training\n"
            "      --checkpoint-every N  every N epochs (default 1), or every N\n"
            "                         rows with a suffix r (50000r)\n"
            "      --resume FILE      continue from a checkpoint; with the same data\n"
            "                         and options the model equals an uninterrupted run\n"
            "\n"
            "model:\n"
            "      --loss L           logistic, hinge, sqhinge or squared (default %s)\n"
            "      --l1 X             L1 regularization strength (default %g)\n"
            "      --l2 X             L2 regularization strength (default %g)\n"
            "      --bias X           value of a constant bias feature; 0 = no bias\n"
            "                         (default %g)\n"
            "\n"
            "optimizer:\n"
            "      --epochs N         passes over the data, N >= 1 (default %u)\n"
            "      --eta X            initial step size, X > 0 (default %g with the\n"
            "                         logistic loss, %g with hinge and sqhinge, %g\n"
            "                         with squared)\n"
            "      --schedule S       constant, invscaling or adagrad (default %s)\n"
            "      --power X          exponent of the invscaling schedule (default %g)\n"
            "      --seed N           random seed (default %llu)\n"
            "      --tol X            scd, dcd: stop once LIBLINEAR's -e criterion is\n"
            "                         below X; 0 runs every epoch (default %g; with\n"
            "                         scd or dcd --epochs defaults to %u)\n"
            "      --metrics-every K  scd, dcd: training accuracy and AUC (a pass\n"
            "                         over the data) every K epochs and after the\n"
            "                         last; other epochs report the objective the\n"
            "                         solver keeps (default 0: after the last only)\n"
            "\n"
            "parallelism:\n"
            "      --algo A           serial (deterministic), hogwild, cyclades, scd\n"
            "                         or dcd (default %s)\n"
            "      --threads N        worker threads; 0 = all allowed cores (default %u)\n"
            "      --update U         how hogwild threads write shared weights: none\n"
            "                         (lock-free), atomic, striped or mutex (default %s);\n"
            "                         dcd: none (wild, PASSCoDe-Wild) or atomic\n"
            "                         (PASSCoDe-Atomic, dcd's default)\n"
            "      --bind SPEC        where hogwild threads run: compact, scatter, none,\n"
            "                         cpus:LIST, numa:LIST or socket:LIST, optionally\n"
            "                         +no_smt, +oversubscribe (default compact; see\n"
            "                         docs/POOL.md)\n"
            "      --no-smt           at most one hogwild thread per core\n"
            "      --oversubscribe    allow more threads than usable CPUs\n"
            "      --replicas R       shared (one model, default), node (one per NUMA\n"
            "                         node) or core (one per thread), averaged\n"
            "      --hot K            hot-feature replicas: the K most frequent\n"
            "                         features and the bias kept per thread, folded\n"
            "                         into the shared model every --sync-every rows\n"
            "                         (or epoch); auto: those in 1/32 of the rows;\n"
            "                         0 or off (default): plain Hogwild!\n"
            "      --sync-every N     rows per replica (--replicas node or core, or\n"
            "                         --gpus) or per process (--world) between model\n"
            "                         averagings (default %llu; 10000 with --world);\n"
            "                         0, with --replicas only: never during training,\n"
            "                         each epoch's model is the replicas' average\n"
            "      --deterministic    the same as --algo cyclades: the model is the\n"
            "                         same bit for bit at every thread count\n"
            "\n"
            "cyclades (docs/CYCLADES.md):\n"
            "      --batch-size N     rows per batch (default: from the data)\n"
            "      --repartition      a fresh row permutation and partition every\n"
            "                         epoch (the serial trainer's order) instead of\n"
            "                         one partition whose batches are reshuffled\n"
            "      --hot H            features that leave the conflict graph and step\n"
            "                         once per batch: auto (default: the bias and the\n"
            "                         features in more rows than the batch size\n"
            "                         allows), off (none: the model equals serial SGD\n"
            "                         over the same row order), or a degree D (the\n"
            "                         bias and the features in more than D rows)\n"
            "\n"
            "GPUs (see docs/GPU.md):\n"
            "      --gpus G           all, none (default) or device numbers like 0,1\n"
            "                         (after CUDA_VISIBLE_DEVICES; a number twice is\n"
            "                         two replicas on that GPU)\n"
            "      --gpu-step S       minibatch (cuSPARSE, deterministic; default) or\n"
            "                         hogwild (a warp per row, atomic adds)\n"
            "      --gpu-batch N      rows per replica per step (default %u)\n"
            "      --sync-every N     also sets the rows per GPU replica between\n"
            "                         averages (see parallelism)\n"
            "\n"
            "scale-out (one process per machine, models averaged; docs/SCALEOUT.md):\n"
            "      --world N          number of processes (or HOGTRAIN_WORLD)\n"
            "      --rank R           this process, 0 .. N-1 (or HOGTRAIN_RANK)\n"
            "      --coordinator H:P  rank 0 listens there, the others connect\n"
            "                         (or HOGTRAIN_COORDINATOR)\n"
            "      --secret-file F    shared secret every rank must hold; without\n"
            "                         one the coordinator must be a loopback address\n"
            "      --insecure         allow other addresses without a secret\n"
            "      --job ID           job id all ranks name (default hogtrain)\n"
            "      --connect-timeout S  give up the rendezvous after S s (default 60)\n"
            "      --net-timeout S    a peer silent for S s is an error (default 60)\n"
            "      --sync M           ma (model averaging, default) or bmuf (block\n"
            "                         momentum, Chen and Huo 2016)\n"
            "      --sync-every N     rows per rank between averagings (default\n"
            "                         10000 here; see parallelism)\n"
            "      --bmuf-momentum X  block momentum in [0, 1) (default 1 - 1/N)\n"
            "      --bmuf-lr X        block learning rate > 0 (default 1)\n"
            "      --bmuf-nesterov B  1: Nesterov block momentum (default), 0: classic\n"
            "      --shard S          train on part of TRAIN: stride (every N-th row\n"
            "                         from row R) or range (the R-th of N pieces)\n"
            "      --checkpoint FILE  with --world: rank 0 writes the averaged model after\n"
            "                         each epoch, and at most once a second between\n"
            "      --net-backend B    tcp (default) or mpi (default under mpirun,\n"
            "                         where the build has MPI)\n"
            "\n"
            "out of core (TRAIN a .hgb file; docs/STREAMING.md):\n"
            "      --stream           read TRAIN from disk a chunk at a time while\n"
            "                         training (serial or hogwild); rows are shuffled\n"
            "                         within a window of chunks; no train metrics\n"
            "      --mem-budget SIZE  memory for chunk buffers, e.g. 512M or 2G\n"
            "                         (default 256M)\n"
            "      --io B             uring or pread (default: io_uring, pread when\n"
            "                         the kernel refuses it)\n"
            "      --direct W         O_DIRECT reads: auto (when the file is over\n"
            "                         half the machine's memory), on or off\n"
            "\n"
            "Every option may be given once. Exit status: 0 success, 1 runtime error,\n"
            "2 usage error. See man hogtrain for the output's wording.\n",
            hog_cli_loss_name(d.loss), d.l1, d.l2, d.bias, d.epochs,
            eta_for(HOG_LOSS_LOGISTIC), eta_for(HOG_LOSS_HINGE),
            eta_for(HOG_LOSS_SQUARED), hog_cli_schedule_name(d.schedule), d.power,
            (unsigned long long)d.seed, d.tol, COORD_EPOCHS,
            hog_cli_algo_name(d.algo), d.threads,
            hog_cli_update_name(d.update), (unsigned long long)d.sync_every,
            HOG_GPU_DEFAULT_BATCH);
}

static const struct hog_cli_cmd cmd = {
    "train",
    "hogtrain train [options] TRAIN [-t TEST] [-o MODEL]",
    help,
};


/* Scale-out settings. */
struct net_args {
    bool on;                  /* averaging across processes */
    bool mpi;
    struct hog_net_opts no;
    const char *secret_file;
    struct hog_avg_opts ao;
    uint64_t sync_every;
    bool shard;
    enum hog_shard_mode shard_mode;
};

struct train_args {
    struct net_args net;
    hog_train_opts o;
    hog_load_opts lo;
    const char *train, *test, *model, *json;
    hog_model_format fmt;
    bool quiet;
    bool stream;
};

/* The scale-out options after getopt: environment fallbacks, backend,
 * consistency. Returns -1 to go on, or an exit status. */
static int parse_net(struct train_args *a, const unsigned char *seen,
                     const char *backend)
{
    struct net_args *na = &a->net;
    uint64_t u;
    const char *env;
    if (!seen[OPT_WORLD] && (env = getenv("HOGTRAIN_WORLD")) && *env) {
        if (!hog_parse_u64(env, 1, HOG_NET_MAX_WORLD, &u))
            return hog_cli_usage_error(&cmd, "HOGTRAIN_WORLD='%s' is not a "
                                       "number of processes", env);
        na->no.world = (unsigned)u;
    }
    if (!seen[OPT_RANK] && (env = getenv("HOGTRAIN_RANK")) && *env) {
        if (!hog_parse_u64(env, 0, HOG_NET_MAX_WORLD - 1, &u))
            return hog_cli_usage_error(&cmd, "HOGTRAIN_RANK='%s' is not a "
                                       "rank", env);
        na->no.rank = (unsigned)u;
    }
    if (!seen[OPT_COORDINATOR] && (env = getenv("HOGTRAIN_COORDINATOR")) &&
        *env)
        na->no.coordinator = env;
    bool want_mpi = backend ? strcmp(backend, "mpi") == 0
                            : na->no.world <= 1 && hog_net_under_mpirun() &&
                                  hog_net_have_mpi();
    na->mpi = want_mpi;
    na->on = want_mpi || na->no.world > 1;
    static const int net_only[] = {
        OPT_RANK, OPT_COORDINATOR, OPT_SECRET_FILE, OPT_INSECURE, OPT_JOB,
        OPT_CONNECT_TIMEOUT, OPT_NET_TIMEOUT, OPT_SYNC,
        OPT_BMUF_MOMENTUM, OPT_BMUF_LR, OPT_BMUF_NESTEROV, OPT_SHARD,
    };
    if (!na->on) {
        for (size_t i = 0; i < sizeof net_only / sizeof net_only[0]; i++)
            if (seen[net_only[i]])
                return hog_cli_usage_error(
                    &cmd, "--%s needs several processes: --world N (or "
                    "HOGTRAIN_WORLD), or mpirun with an MPI build",
                    hog_cli_opt_name(longopts, net_only[i]));
        return -1;
    }
    if (!want_mpi) {
        if (na->no.rank >= na->no.world)
            return hog_cli_usage_error(&cmd, "rank %u is not below the world "
                                       "size %u", na->no.rank, na->no.world);
        if (!na->no.coordinator)
            return hog_cli_usage_error(&cmd, "--world %u needs --coordinator "
                                       "HOST:PORT (or HOGTRAIN_COORDINATOR)",
                                       na->no.world);
    }
    bool bmuf = na->ao.mode == HOG_AVG_BMUF;
    if (!bmuf && (seen[OPT_BMUF_MOMENTUM] || seen[OPT_BMUF_LR] ||
                  seen[OPT_BMUF_NESTEROV]))
        return hog_cli_usage_error(&cmd, "the --bmuf-* options apply to "
                                   "--sync bmuf only");
    if (hog_gpu_requested(&a->o))
        return hog_cli_usage_error(&cmd, "model averaging across processes "
                                   "runs with --algo serial or hogwild for "
                                   "now, not with --gpus");
    return -1;
}

/* Parses argv into a; returns -1 to go on, or an exit status. */
static int parse(int argc, char **argv, struct train_args *a)
{
    const char *hot_arg = NULL;
    hog_train_opts_init(&a->o);
    hog_load_opts_init(&a->lo);
    a->fmt = HOG_MODEL_HGM;
    int ch, rc = HOG_EXIT_USAGE;
    uint64_t u;
    double x;
    int e;
    struct net_args *na = &a->net;
    hog_net_opts_init(&na->no);
    hog_avg_opts_init(&na->ao);
    na->sync_every = 10000;
    const char *backend = NULL;
    struct hog_cli_parser op;
    hog_cli_parser_init(&op, &cmd, "t:o:qh", longopts);
    op.load = &a->lo;
    op.train = &a->o;
    const unsigned char *seen = op.seen;
    while ((ch = hog_cli_getopt(&op, argc, argv)) > 0) {
        const char *name = hog_cli_opt_name(longopts, ch);
        switch (ch) {
        case 't': a->test = optarg; break;
        case 'o': a->model = optarg; break;
        case 'q': a->quiet = true; break;
        case OPT_JSON: a->json = optarg; break;
        case OPT_CHECKPOINT: /* which one: after parse_net() */
            a->o.checkpoint = na->ao.checkpoint = optarg;
            break;
        case OPT_RESUME: a->o.resume = optarg; break;
        case OPT_CHECKPOINT_EVERY: {
            size_t l = strlen(optarg);
            bool rows = l > 1 && optarg[l - 1] == 'r';
            char num[32];
            if (l - rows >= sizeof num)
                return hog_cli_usage_error(&cmd, "--checkpoint-every: '%s' "
                                           "is too long", optarg);
            memcpy(num, optarg, l - rows);
            num[l - rows] = 0;
            if (!hog_parse_u64(num, 1, rows ? UINT64_MAX : 1000000, &u))
                return hog_cli_usage_error(&cmd, "--checkpoint-every: '%s' is "
                                           "not N epochs or Nr rows (N >= 1)",
                                           optarg);
            if (rows)
                a->o.checkpoint_rows = u;
            else
                a->o.checkpoint_epochs = (unsigned)u;
            break;
        }
        case OPT_SEED:
            if (!hog_parse_u64(optarg, 0, UINT64_MAX, &u))
                return hog_cli_usage_error(&cmd, "--seed: '%s' is not a "
                                           "non-negative integer", optarg);
            a->o.seed = u;
            break;
        case OPT_EPOCHS:
            if (!hog_parse_u64(optarg, 1, 1000000, &u))
                return hog_cli_usage_error(&cmd, "--epochs: '%s' is not a "
                                           "number of epochs (1 to 1000000)",
                                           optarg);
            a->o.epochs = (unsigned)u;
            break;
        case OPT_ALGO:
            if ((e = hog_cli_algo_parse(optarg)) < 0)
                return hog_cli_usage_error(&cmd, "--algo: unknown algorithm "
                                           "'%s' (serial, hogwild, cyclades, "
                                           "scd, dcd)", optarg);
            a->o.algo = (hog_algo)e;
            break;
        case OPT_UPDATE:
            if ((e = hog_cli_update_parse(optarg)) < 0)
                return hog_cli_usage_error(&cmd, "--update: unknown update "
                                           "mode '%s' (none, atomic, striped, "
                                           "mutex)", optarg);
            a->o.update = (hog_update)e;
            break;
        case OPT_GPUS: {
            struct hog_gpu_spec gs;
            hog_err e2 = { { 0 } };
            if (hog_gpu_spec_parse(optarg, &gs, &e2) != HOG_OK)
                return hog_cli_usage_error(&cmd, "%s", e2.msg);
            a->o.gpus = optarg;
            break;
        }
        case OPT_GPU_STEP:
            if (strcmp(optarg, "minibatch") == 0)
                a->o.gpu_step = HOG_GPU_STEP_MINIBATCH;
            else if (strcmp(optarg, "hogwild") == 0)
                a->o.gpu_step = HOG_GPU_STEP_HOGWILD;
            else
                return hog_cli_usage_error(&cmd, "--gpu-step: unknown step "
                                           "'%s' (minibatch, hogwild)",
                                           optarg);
            break;
        case OPT_GPU_BATCH:
            if (!hog_parse_u64(optarg, 1, UINT64_C(1) << 30, &u))
                return hog_cli_usage_error(&cmd, "--gpu-batch: '%s' is not a "
                                           "number of rows (1 to 2^30)",
                                           optarg);
            a->o.gpu_batch = (uint32_t)u;
            break;
        case OPT_SYNC_EVERY:
            /* Rows per replica (Hogwild! --replicas, GPU replicas --gpus)
             * or per process (--world, mpirun) between averagings: one
             * meaning, one field; 0 (Hogwild! replicas only, checked
             * below) never averages during training. */
            if (!hog_parse_u64(optarg, 0, UINT64_MAX, &u))
                return hog_cli_usage_error(&cmd, "--sync-every: '%s' is not a "
                                           "number of rows", optarg);
            a->o.sync_every = u;
            na->sync_every = u;
            break;
        case OPT_BIND: a->o.bind = optarg; break;
        case OPT_NO_SMT: a->o.no_smt = 1; break;
        case OPT_OVERSUBSCRIBE: a->o.oversubscribe = 1; break;
        case OPT_REPLICAS:
            if ((e = hog_cli_replicas_parse(optarg)) < 0)
                return hog_cli_usage_error(&cmd, "--replicas: unknown replica "
                                           "mode '%s' (shared, node, core)",
                                           optarg);
            a->o.replicas = (hog_replicas)e;
            break;
        case OPT_BATCH_SIZE:
            if (!hog_parse_u64(optarg, 1, UINT32_MAX, &u))
                return hog_cli_usage_error(&cmd, "--batch-size: '%s' is not a "
                                           "number of rows (1 to %u)", optarg,
                                           UINT32_MAX);
            a->o.batch_size = u;
            break;
        case OPT_REPARTITION: a->o.repartition = 1; break;
        case OPT_DETERMINISTIC: break;
        case OPT_HOT:
            hot_arg = optarg; /* Hogwild!'s meaning: after --algo is known */
            if (strcmp(optarg, "auto") == 0) {
                a->o.hot = 1;
                a->o.hot_degree = 0;
            } else if (strcmp(optarg, "off") == 0) {
                a->o.hot = 0;
            } else if (hog_parse_u64(optarg, 1, UINT64_MAX, &u)) {
                a->o.hot = 1;
                a->o.hot_degree = u;
            } else if (!hog_parse_u64(optarg, 0, UINT32_MAX, &u)) {
                return hog_cli_usage_error(&cmd, "--hot: '%s' is not auto, "
                                           "off or a number (hogwild: of "
                                           "features; cyclades: a degree "
                                           ">= 1)", optarg);
            }
            break;
        case OPT_METRICS_EVERY:
            if (!hog_parse_u64(optarg, 0, 1000000, &u))
                return hog_cli_usage_error(&cmd, "--metrics-every: '%s' is "
                                           "not a number of epochs (0 to "
                                           "1000000)", optarg);
            a->o.metrics_every = (unsigned)u;
            break;
        case OPT_TOL:
            if (!hog_parse_double(optarg, 0.0, HUGE_VAL, &x))
                return hog_cli_usage_error(&cmd, "--tol: '%s' is not a "
                                           "number >= 0", optarg);
            a->o.tol = x;
            break;
        case OPT_MODEL_FORMAT:
            if (strcmp(optarg, "hgm") == 0)
                a->fmt = HOG_MODEL_HGM;
            else if (strcmp(optarg, "liblinear") == 0)
                a->fmt = HOG_MODEL_LIBLINEAR;
            else
                return hog_cli_usage_error(&cmd, "--model-format: unknown "
                                           "format '%s' (hgm, liblinear)",
                                           optarg);
            break;
        case OPT_WORLD:
        case OPT_RANK:
            if (!hog_parse_u64(optarg, ch == OPT_WORLD ? 1 : 0,
                               HOG_NET_MAX_WORLD - (ch == OPT_RANK), &u))
                return hog_cli_usage_error(&cmd, "--%s: '%s' is not a %s "
                                           "(%s to %u)", name, optarg,
                                           ch == OPT_WORLD ? "number of "
                                           "processes" : "rank",
                                           ch == OPT_WORLD ? "1" : "0",
                                           HOG_NET_MAX_WORLD -
                                               (ch == OPT_RANK));
            *(ch == OPT_WORLD ? &na->no.world : &na->no.rank) = (unsigned)u;
            break;
        case OPT_COORDINATOR: {
            /* The form only (HOST:PORT, [IPV6]:PORT, a port from 1 to
             * 65535); whether the host resolves is the rendezvous' call. */
            hog_err e2;
            if (hog_net_check_address(optarg, &e2) != HOG_OK)
                return hog_cli_usage_error(&cmd, "%s", e2.msg);
            na->no.coordinator = optarg;
            break;
        }
        case OPT_SECRET_FILE: na->secret_file = optarg; break;
        case OPT_INSECURE: na->no.insecure = 1; break;
        case OPT_JOB:
            if (strlen(optarg) > 255)
                return hog_cli_usage_error(&cmd, "--job: at most 255 bytes");
            na->no.job = optarg;
            break;
        case OPT_CONNECT_TIMEOUT:
        case OPT_NET_TIMEOUT:
            if (!hog_parse_double(optarg, 0.0, 1e6, &x) || x == 0.0)
                return hog_cli_usage_error(&cmd, "--%s: '%s' is not a number "
                                           "of seconds > 0", name, optarg);
            *(ch == OPT_NET_TIMEOUT ? &na->no.timeout
                                    : &na->no.connect_timeout) = x;
            break;
        case OPT_SYNC:
            if (strcmp(optarg, "ma") == 0)
                na->ao.mode = HOG_AVG_MA;
            else if (strcmp(optarg, "bmuf") == 0)
                na->ao.mode = HOG_AVG_BMUF;
            else
                return hog_cli_usage_error(&cmd, "--sync: unknown method '%s' "
                                           "(ma, bmuf)", optarg);
            break;
        case OPT_BMUF_MOMENTUM:
            if (!hog_parse_double(optarg, 0.0, 1.0, &x) || x >= 1.0)
                return hog_cli_usage_error(&cmd, "--bmuf-momentum: '%s' is not "
                                           "in [0, 1)", optarg);
            na->ao.momentum = x;
            break;
        case OPT_BMUF_LR:
            if (!hog_parse_double(optarg, 0.0, 1e6, &x) || x == 0.0)
                return hog_cli_usage_error(&cmd, "--bmuf-lr: '%s' is not a "
                                           "number > 0", optarg);
            na->ao.block_lr = x;
            break;
        case OPT_BMUF_NESTEROV:
            if (!hog_parse_u64(optarg, 0, 1, &u))
                return hog_cli_usage_error(&cmd, "--bmuf-nesterov: '%s' is not "
                                           "0 or 1", optarg);
            na->ao.nesterov = (int)u;
            break;
        case OPT_SHARD:
            if (strcmp(optarg, "stride") == 0)
                na->shard_mode = HOG_SHARD_STRIDE;
            else if (strcmp(optarg, "range") == 0)
                na->shard_mode = HOG_SHARD_RANGE;
            else
                return hog_cli_usage_error(&cmd, "--shard: unknown mode '%s' "
                                           "(stride, range)", optarg);
            na->shard = true;
            break;
        case OPT_NET_BACKEND:
            if (strcmp(optarg, "tcp") != 0 && strcmp(optarg, "mpi") != 0)
                return hog_cli_usage_error(&cmd, "--net-backend: unknown "
                                           "backend '%s' (tcp, mpi)", optarg);
            backend = optarg;
            break;
        case OPT_STREAM: a->stream = true; break;
        case OPT_MEM_BUDGET:
            if (!hog_cli_parse_size(optarg, &u) || u == 0)
                return hog_cli_usage_error(&cmd, "--mem-budget: '%s' is not a "
                                           "size (e.g. 64M, 2G)", optarg);
            a->o.mem_budget = u;
            break;
        case OPT_IO:
            if (strcmp(optarg, "uring") == 0 || strcmp(optarg, "io_uring") == 0)
                a->o.io = HOG_IO_URING;
            else if (strcmp(optarg, "pread") == 0)
                a->o.io = HOG_IO_PREAD;
            else
                return hog_cli_usage_error(&cmd, "--io: unknown backend '%s' "
                                           "(uring, pread)", optarg);
            break;
        case OPT_DIRECT:
            if (strcmp(optarg, "auto") == 0)
                a->o.direct = -1;
            else if (strcmp(optarg, "on") == 0)
                a->o.direct = 1;
            else if (strcmp(optarg, "off") == 0)
                a->o.direct = 0;
            else
                return hog_cli_usage_error(&cmd, "--direct: '%s' is not auto, "
                                           "on or off", optarg);
            break;
        default:
            return hog_cli_bad_option(&cmd, '?', argv);
        }
    }
    if (ch < 0)
        return op.status;
    if (seen[HOG_CLI_OPT_THREADS]) /* one count for parser and workers */
        a->o.threads = a->lo.threads;
    /* --checkpoint: with several processes rank 0 writes the averaged
     * model (src/net); in one process, the model and its training state
     * (docs/RELIABILITY.md) */
    if ((rc = parse_net(a, seen, backend)) >= 0)
        return rc;
    if (a->net.on) {
        a->o.checkpoint = NULL;
        if (seen[OPT_CHECKPOINT_EVERY] || seen[OPT_RESUME])
            return hog_cli_usage_error(&cmd, "--%s works in one process "
                                       "only so far (not with --world or "
                                       "mpirun)", seen[OPT_RESUME]
                                       ? "resume" : "checkpoint-every");
    } else {
        a->net.ao.checkpoint = NULL;
    }
    static const char *const files[] = { "TRAIN" };
    if ((rc = hog_cli_operands(&cmd, argc, argv, 1, files, "one TRAIN file; "
                               "the test file goes after -t")) >= 0)
        return rc;
    a->train = argv[optind];
    hog_cli_model_finish(&op); /* the loss's step size and schedule, unless given */
    /* Options that only make sense together. */
    if (seen[OPT_DETERMINISTIC]) {
        if (seen[OPT_ALGO] && a->o.algo != HOG_ALGO_CYCLADES)
            return hog_cli_usage_error(&cmd, "--deterministic selects --algo "
                                       "cyclades; it conflicts with --algo %s",
                                       hog_cli_algo_name(a->o.algo));
        a->o.algo = HOG_ALGO_CYCLADES;
    }
    bool coord = a->o.algo == HOG_ALGO_SCD || a->o.algo == HOG_ALGO_DCD;
    bool gpus = hog_gpu_requested(&a->o);
    if (!gpus && (seen[OPT_GPU_STEP] || seen[OPT_GPU_BATCH]))
        return hog_cli_usage_error(&cmd, "--%s applies to GPU training only "
                                   "(add --gpus)",
                                   seen[OPT_GPU_STEP] ? "gpu-step"
                                                      : "gpu-batch");
    if (gpus && seen[OPT_ALGO])
        return hog_cli_usage_error(&cmd, "--gpus trains GPU replicas; it "
                                   "does not combine with --algo");
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
            { OPT_METRICS_EVERY, HOG_CAP_METRICS_EVERY },
        };
        unsigned used = hog_train_opts_caps(&a->o);
        for (size_t i = 0; i < sizeof given / sizeof *given; i++)
            if (seen[given[i].opt])
                used |= given[i].cap;
        if (a->net.on)
            used |= HOG_CAP_WORLD;
        hog_err cap_err;
        if (hog_algo_check(a->o.algo, used, &cap_err) != HOG_OK)
            return hog_cli_usage_error(&cmd, "%s", cap_err.msg);
    }
    if (seen[OPT_HOT] && a->o.algo == HOG_ALGO_HOGWILD) {
        /* Hogwild!: K features (and the bias) per thread; the cyclades
         * meaning (a degree) was parsed above */
        if (hog_cli_hot_parse(hot_arg, &a->o.hot_count) != 0)
            return hog_cli_usage_error(&cmd, "--hot: '%s' is not auto, off or "
                                       "a number of features", hot_arg);
        a->o.hot = 1;
        a->o.hot_degree = 0;
    } else if (seen[OPT_HOT] && a->o.hot && a->o.hot_degree == 0 &&
               strcmp(hot_arg, "auto") != 0) {
        return hog_cli_usage_error(&cmd, "--hot: '%s' is not auto, off or a "
                                   "number of rows >= 1", hot_arg);
    }
    /* --sync-every: rows per replica or process between averagings, for
     * whatever averages: Hogwild! replicas, GPU replicas, processes. */
    bool cpu_replicas = a->o.algo == HOG_ALGO_HOGWILD &&
                        a->o.replicas != HOG_REPLICAS_SHARED;
    bool hot_folds = a->o.algo == HOG_ALGO_HOGWILD && a->o.hot_count;
    if (seen[OPT_SYNC_EVERY] && !cpu_replicas && !hot_folds && !gpus &&
        !a->net.on)
        return hog_cli_usage_error(&cmd, "--sync-every applies to model "
                                   "replicas (--algo hogwild --replicas node "
                                   "or core, or --gpus) or to several "
                                   "processes (--world N, mpirun)");
    if (seen[OPT_SYNC_EVERY] && a->o.sync_every == 0 && (gpus || a->net.on))
        return hog_cli_usage_error(&cmd, "--sync-every 0 (never average "
                                   "during training) applies to Hogwild! "
                                   "replicas only; GPU replicas and processes "
                                   "need a number of rows >= 1");
    if (coord && !seen[OPT_EPOCHS])
        a->o.epochs = COORD_EPOCHS;
    /* dcd's exact mode unless wild is asked for. */
    if (a->o.algo == HOG_ALGO_DCD && !seen[OPT_UPDATE])
        a->o.update = HOG_UPDATE_ATOMIC;
    if (seen[OPT_POWER] && a->o.schedule != HOG_SCHED_INVSCALING)
        return hog_cli_usage_error(&cmd, "--power applies to --schedule "
                                   "invscaling only");
    if (seen[OPT_CHECKPOINT_EVERY] && !a->o.checkpoint)
        return hog_cli_usage_error(&cmd, "--checkpoint-every needs "
                                   "--checkpoint FILE");
    if (a->o.checkpoint && a->model &&
        hog_cli_same_file(a->o.checkpoint, a->model))
        return hog_cli_usage_error(&cmd, "--checkpoint and -o name the same "
                                   "file");
    for (int k = 0; k < 2 && a->o.checkpoint; k++) {
        const char *in = k ? a->test : a->train;
        if (hog_cli_same_file(a->o.checkpoint, in))
            return hog_cli_usage_error(&cmd, "--checkpoint %s would "
                                       "overwrite the input %s",
                                       a->o.checkpoint, in);
    }
    if (seen[OPT_MODEL_FORMAT] && !a->model)
        return hog_cli_usage_error(&cmd, "--model-format needs -o MODEL");
    if (!a->stream && (seen[OPT_MEM_BUDGET] || seen[OPT_IO] || seen[OPT_DIRECT]))
        return hog_cli_usage_error(&cmd, "--%s applies to --stream only",
                                   seen[OPT_MEM_BUDGET] ? "mem-budget"
                                   : seen[OPT_IO]       ? "io"
                                                        : "direct");
    if (a->stream && strcmp(a->train, "-") == 0)
        return hog_cli_usage_error(&cmd, "--stream reads a .hgb file, not "
                                   "standard input");
    const char *outs[] = { a->model, a->json };
    const char *ins[] = { a->train, a->test };
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++)
            if (outs[i] && hog_cli_same_file(outs[i], ins[k]))
                return hog_cli_usage_error(&cmd, "%s would overwrite the "
                                           "input %s", outs[i], ins[k]);
    if (a->model && a->json && hog_cli_same_file(a->model, a->json))
        return hog_cli_usage_error(&cmd, "-o and --json name the same file");
    if (a->test && strcmp(a->test, "-") == 0 && strcmp(a->train, "-") == 0)
        return hog_cli_usage_error(&cmd, "TRAIN and TEST cannot both be "
                                   "standard input");
    return -1;
}

static void json_data(struct hog_json *j, const char *key, const char *path,
                      const hog_data *d, double secs)
{
    hog_json_obj(j, key);
    hog_json_str(j, "path", path);
    hog_json_u64(j, "rows", hog_data_rows(d));
    hog_json_u64(j, "features", hog_data_features(d));
    hog_json_u64(j, "nonzeros", hog_data_nnz(d));
    bool bin = d->labels == HOG_LABELS_BINARY;
    hog_json_str(j, "labels", bin ? "binary" : "real");
    if (bin) {
        hog_json_num(j, "label_positive", d->label_pos);
        hog_json_num(j, "label_negative", d->label_neg);
        hog_json_u64(j, "rows_positive", d->n_pos);
        hog_json_u64(j, "rows_negative", hog_data_rows(d) - d->n_pos);
    }
    hog_json_num(j, "load_seconds", secs);
    hog_json_close_obj(j);
}

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
};

/* Why training stopped: "tol" when scd or dcd met --tol, "epochs" when the
 * run went through --epochs (every other algorithm always does). */
static const char *stop_reason(const struct train_report *r)
{
    const struct hog_progress *p = r->p;
    return p->hist_len && p->hist[p->hist_len - 1].converged ? "tol"
                                                             : "epochs";
}

/* scd and dcd stop on --tol, --epochs being a cap: true when the cap came
 * first (LIBLINEAR's "reaching max number of iterations"). --tol 0 asks
 * for every epoch. */
static bool epoch_cap_first(const struct train_report *r)
{
    const hog_train_opts *o = &r->a->o;
    bool coord = o->algo == HOG_ALGO_SCD || o->algo == HOG_ALGO_DCD;
    return coord && o->tol > 0 && strcmp(stop_reason(r), "epochs") == 0;
}

static void write_json(FILE *f, const struct train_report *r)
{
    const hog_train_opts *o = &r->a->o;
    struct hog_json j;
    hog_json_begin(&j, f);
    hog_json_str(&j, "hogtrain", hog_version());
    hog_json_str(&j, "command", "train");
    hog_json_obj(&j, "options");
    hog_json_str(&j, "loss", hog_cli_loss_name(o->loss));
    hog_json_num(&j, "l1", o->l1);
    hog_json_num(&j, "l2", o->l2);
    hog_json_num(&j, "eta", o->eta);
    hog_json_str(&j, "schedule", hog_cli_schedule_name(o->schedule));
    hog_json_num(&j, "power", o->power);
    hog_json_num(&j, "bias", o->bias);
    hog_json_u64(&j, "epochs", o->epochs);
    hog_json_u64(&j, "seed", o->seed);
    hog_json_u64(&j, "threads", o->threads);
    hog_json_u64(&j, "cpus_online", hog_online_cpus());
    hog_json_str(&j, "algo", hog_cli_algo_name(o->algo));
    hog_json_str(&j, "update", hog_cli_update_name(o->update));
    if (o->algo == HOG_ALGO_HOGWILD) {
        hog_json_str(&j, "bind", o->bind ? o->bind : "compact");
        hog_json_bool(&j, "no_smt", o->no_smt != 0);
        hog_json_bool(&j, "oversubscribe", o->oversubscribe != 0);
        hog_json_str(&j, "replicas", hog_cli_replicas_name(o->replicas));
        hog_json_u64(&j, "sync_every", o->sync_every);
    }
    hog_json_num(&j, "tol", o->tol);
    hog_json_u64(&j, "metrics_every", o->metrics_every);
    hog_json_bool(&j, "zero_based", r->a->lo.zero_based != 0);
    if (hog_gpu_requested(o)) {
        hog_json_str(&j, "gpus", o->gpus);
        hog_json_str(&j, "gpu_step", o->gpu_step == HOG_GPU_STEP_HOGWILD
                                         ? "hogwild"
                                         : "minibatch");
        hog_json_u64(&j, "gpu_batch",
                     o->gpu_batch ? o->gpu_batch : HOG_GPU_DEFAULT_BATCH);
        hog_json_u64(&j, "sync_every",
                     o->sync_every ? o->sync_every : HOG_GPU_DEFAULT_SYNC);
    } else {
        hog_json_null(&j, "gpus");
    }
    hog_json_str(&j, "model", r->a->model);
    hog_json_str(&j, "model_format",
                 r->a->fmt == HOG_MODEL_LIBLINEAR ? "liblinear" : "hgm");
    hog_json_close_obj(&j);

    if (r->net) {
        const struct net_args *na = &r->a->net;
        hog_json_obj(&j, "scale_out");
        hog_json_str(&j, "backend", hog_net_backend(r->net));
        hog_json_u64(&j, "world", hog_net_world(r->net));
        hog_json_u64(&j, "rank", hog_net_rank(r->net));
        hog_json_str(&j, "sync", na->ao.mode == HOG_AVG_BMUF ? "bmuf" : "ma");
        hog_json_u64(&j, "sync_every", na->sync_every);
        hog_json_u64(&j, "averagings_per_epoch", o->average_blocks);
        hog_json_u64(&j, "averagings", hog_avg_count(r->avg));
        if (na->ao.mode == HOG_AVG_BMUF) {
            hog_json_num(&j, "bmuf_momentum",
                         na->ao.momentum < 0
                             ? 1.0 - 1.0 / hog_net_world(r->net)
                             : na->ao.momentum);
            hog_json_num(&j, "bmuf_lr", na->ao.block_lr);
            hog_json_bool(&j, "bmuf_nesterov", na->ao.nesterov != 0);
        }
        hog_json_str(&j, "shard", !na->shard ? NULL
                     : na->shard_mode == HOG_SHARD_RANGE ? "range" : "stride");
        hog_json_close_obj(&j);
    }

    hog_json_obj(&j, "data");
    json_data(&j, "train", r->a->train, r->train, r->load_train_s);
    if (r->test)
        json_data(&j, "test", r->a->test, r->test, r->load_test_s);
    else
        hog_json_null(&j, "test");
    hog_json_close_obj(&j);

    hog_json_arr(&j, "epochs");
    for (unsigned i = 0; i < r->p->hist_len; i++) {
        const hog_epoch_stats *s = &r->p->hist[i];
        hog_json_obj(&j, NULL);
        hog_json_u64(&j, "epoch", s->epoch);
        hog_json_num(&j, "objective", s->objective);
        hog_json_num(&j, "train_loss", s->train_loss);
        hog_json_num(&j, "train_accuracy", s->train_accuracy);
        hog_json_num(&j, "train_auc", s->train_auc);
        hog_json_num(&j, "train_rmse", s->train_rmse);
        if (s->has_test) {
            hog_json_num(&j, "test_loss", s->test_loss);
            hog_json_num(&j, "test_accuracy", s->test_accuracy);
            hog_json_num(&j, "test_auc", s->test_auc);
            hog_json_num(&j, "test_rmse", s->test_rmse);
        }
        hog_json_u64(&j, "nonzero_weights", s->nonzero_weights);
        hog_json_num(&j, "gap", s->gap);
        hog_json_u64(&j, "aux_bytes", s->aux_bytes);
        hog_json_num(&j, "seconds", s->seconds);
        hog_json_num(&j, "total_seconds", s->total_seconds);
        hog_json_num(&j, "rows_per_s", s->rows_per_s);
        hog_json_num(&j, "nnz_per_s", s->nnz_per_s);
        if (o->algo == HOG_ALGO_HOGWILD && o->replicas != HOG_REPLICAS_SHARED)
            hog_json_u64(&j, "replica_syncs", s->replica_syncs);
        hog_json_close_obj(&j);
    }
    hog_json_close_arr(&j);
    hog_json_str(&j, "stopped", stop_reason(r));

    if (r->hot) {
        hog_json_obj(&j, "hot_replicas");
        hog_json_u64(&j, "hot_features", r->hot->hot_features);
        hog_json_bool(&j, "bias_hot", r->hot->bias_hot != 0);
        hog_json_num(&j, "hot_nnz_share", r->hot->hot_nnz_share);
        hog_json_u64(&j, "folds", r->hot->folds);
        hog_json_u64(&j, "sync_every", o->sync_every);
        hog_json_num(&j, "setup_seconds", r->hot->setup_seconds);
        hog_json_close_obj(&j);
    }

    if (r->cyc) {
        const hog_cyclades_stats *c = r->cyc;
        hog_json_obj(&j, "cyclades");
        hog_json_u64(&j, "threads", c->threads);
        hog_json_u64(&j, "batch_size", c->batch_size);
        hog_json_u64(&j, "batches_per_epoch", c->batches);
        hog_json_bool(&j, "repartition", o->repartition != 0);
        hog_json_bool(&j, "hot", o->hot != 0);
        hog_json_u64(&j, "hot_degree", c->hot_degree);
        hog_json_u64(&j, "hot_features", c->hot_features);
        hog_json_bool(&j, "bias_hot", c->bias_hot != 0);
        hog_json_num(&j, "hot_nnz_share", c->hot_nnz_share);
        hog_json_u64(&j, "partitions", c->partitions);
        hog_json_num(&j, "setup_seconds", c->setup_seconds);
        hog_json_num(&j, "partition_seconds", c->partition_seconds);
        hog_json_num(&j, "train_seconds", c->train_seconds);
        hog_json_obj(&j, "components");
        hog_json_num(&j, "per_batch", c->components);
        hog_json_u64(&j, "largest_rows", c->largest_rows);
        hog_json_num(&j, "largest_share", c->largest_share);
        hog_json_num(&j, "thread_imbalance", c->imbalance);
        hog_json_close_obj(&j);
        hog_json_obj(&j, "components_every_feature");
        hog_json_num(&j, "per_batch", c->all_components);
        hog_json_u64(&j, "largest_rows", c->all_largest_rows);
        hog_json_num(&j, "largest_share", c->all_largest_share);
        hog_json_close_obj(&j);
        hog_json_close_obj(&j);
    }

    hog_json_obj(&j, "model");
    hog_json_u64(&j, "features", hog_model_features(r->m));
    hog_json_num(&j, "bias_weight", hog_model_bias(r->m));
    hog_json_close_obj(&j);

    if (r->stream) {
        const hog_stream_stats *ss = r->stream;
        hog_json_obj(&j, "stream");
        hog_json_str(&j, "backend", ss->backend);
        if (ss->fallback[0])
            hog_json_str(&j, "fallback_reason", ss->fallback);
        else
            hog_json_null(&j, "fallback_reason");
        hog_json_bool(&j, "direct", ss->direct != 0);
        hog_json_u64(&j, "mem_budget", o->mem_budget ? o->mem_budget
                                                     : HOG_STREAM_DEFAULT_BUDGET);
        hog_json_u64(&j, "slots", ss->slots);
        hog_json_u64(&j, "window_chunks", ss->window);
        hog_json_u64(&j, "ring_bytes", ss->ring_bytes);
        hog_json_u64(&j, "bytes_read", ss->bytes_read);
        hog_json_num(&j, "read_wait_seconds", ss->read_wait_s);
        hog_json_close_obj(&j);
    } else {
        hog_json_null(&j, "stream");
    }
    struct rusage ru;
    hog_json_obj(&j, "memory");
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        hog_json_u64(&j, "peak_rss_bytes", (uint64_t)ru.ru_maxrss * 1024);
    else
        hog_json_null(&j, "peak_rss_bytes");
    hog_json_close_obj(&j);

    hog_json_obj(&j, "timings");
    hog_json_num(&j, "load_train_seconds", r->load_train_s);
    hog_json_num(&j, "load_test_seconds", r->test ? r->load_test_s : NAN);
    hog_json_num(&j, "train_seconds", r->train_s);
    hog_json_num(&j, "save_seconds", r->a->model ? r->save_s : NAN);
    hog_json_num(&j, "total_seconds", r->total_s);
    hog_json_close_obj(&j);
    hog_json_end(&j);
}

static hog_status save_json(const struct train_report *r, hog_err *err)
{
    char tmp[4200];
    FILE *f;
    hog_status s = hog_tmpfile_open(r->a->json, tmp, sizeof tmp, &f, err);
    if (s != HOG_OK)
        return s;
    write_json(f, r);
    return hog_tmpfile_commit(f, tmp, r->a->json, err);
}

/* Two lines on how Cyclades cut the batches. */
static void print_cyclades(const hog_cyclades_stats *c)
{
    fprintf(stderr,
            "cyclades: %u threads, %llu batches of %llu rows, %llu hot "
            "features%s (degree > %llu, %.1f%% of nonzeros); partition "
            "%.3f s (%u times), setup %.3f s\n",
            c->threads, (unsigned long long)c->batches,
            (unsigned long long)c->batch_size,
            (unsigned long long)c->hot_features,
            c->bias_hot ? " and the bias" : "",
            (unsigned long long)c->hot_degree, 100.0 * c->hot_nnz_share,
            c->partition_seconds, c->partitions, c->setup_seconds);
    fprintf(stderr,
            "cyclades: components per batch %.1f, largest %llu rows (mean "
            "share %.1f%%), thread imbalance %.2f; with every feature: %.1f "
            "per batch, largest %llu rows (%.1f%%)\n",
            c->components, (unsigned long long)c->largest_rows,
            100.0 * c->largest_share, c->imbalance, c->all_components,
            (unsigned long long)c->all_largest_rows,
            100.0 * c->all_largest_share);
}

/* "done: 10 epochs in 3.21 s, test accuracy 84.95%, model written to m.hgm" */
static void print_summary(const struct train_report *r)
{
    const struct hog_progress *p = r->p;
    fprintf(stderr, "done: %u epoch%s in %.2f s", p->hist_len,
            p->hist_len == 1 ? "" : "s", r->train_s);
    if (p->hist_len) {
        const hog_epoch_stats *s = &p->hist[p->hist_len - 1];
        const char *set = s->has_test ? "test" : "train";
        double acc = s->has_test ? s->test_accuracy : s->train_accuracy;
        double rmse = s->has_test ? s->test_rmse : s->train_rmse;
        if (p->regression && isfinite(rmse))
            fprintf(stderr, ", %s RMSE %.4f", set, rmse);
        else if (!p->regression && isfinite(acc))
            fprintf(stderr, ", %s accuracy %.2f%%", set, 100.0 * acc);
    }
    if (p->hist_len && p->hist[p->hist_len - 1].aux_bytes) {
        char b[32];
        fprintf(stderr, ", %s held beside the data",
                hog_cli_bytes(b, sizeof b,
                              (double)p->hist[p->hist_len - 1].aux_bytes));
    }
    if (r->a->model)
        fprintf(stderr, ", model written to %s", r->a->model);
    fputc('\n', stderr);
}

/* What the ranks must agree on, hashed: the same options everywhere. */
static uint64_t options_digest(const struct train_args *a)
{
    const hog_train_opts *o = &a->o;
    const struct net_args *na = &a->net;
    char buf[512];
    int n = snprintf(buf, sizeof buf,
                     "%d %a %a %a %a %d %a %u %d | %d %llu %a %a %d %d %d",
                     (int)o->loss, o->l1, o->l2, o->eta, o->power,
                     (int)o->schedule, o->bias, o->epochs, (int)o->algo,
                     (int)na->ao.mode, (unsigned long long)na->sync_every,
                     na->ao.momentum, na->ao.block_lr, na->ao.nesterov,
                     (int)na->shard, (int)na->shard_mode);
    unsigned char d[32];
    hog_sha256(buf, (size_t)n, d);
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | d[i];
    return v;
}

/* Scale-out: joins the group, takes this rank's shard, agrees on the
 * feature count and the number of averagings per epoch, and hooks the
 * averaging into the training options. */
static hog_status net_setup(struct train_args *a, hog_data **train,
                            hog_net **net, struct hog_avg **avg,
                            hog_err *err)
{
    struct net_args *na = &a->net;
    unsigned char *secret = NULL;
    hog_status s;
    if (na->secret_file) {
        size_t len;
        if ((s = hog_net_read_secret(na->secret_file, &secret, &len, err)) !=
            HOG_OK)
            return s;
        na->no.secret = secret;
        na->no.secret_len = len;
    }
    na->no.log = stderr;
    na->no.verbose = !a->quiet;
    s = na->mpi ? hog_net_open_mpi(&na->no, net, err)
                : hog_net_open_tcp(&na->no, net, err);
    free(secret);
    na->no.secret = NULL;
    if (s != HOG_OK)
        return s;
    unsigned rank = hog_net_rank(*net), world = hog_net_world(*net);
    if (na->shard) {
        hog_data *part;
        if ((s = hog_net_shard(*train, rank, world, na->shard_mode, &part,
                               err)) != HOG_OK)
            return s;
        hog_data_free(*train);
        *train = part;
    }
    uint64_t dg = options_digest(a);
    uint64_t v[4] = { (*train)->n_features, (*train)->m.rows, dg, ~dg };
    if ((s = hog_net_allreduce_max(*net, v, 4, err)) != HOG_OK)
        return s;
    if (v[2] != dg || v[3] != ~dg)
        return hog_errf(err, HOG_EINVAL, "rank %u: the ranks were started "
                        "with different training options (loss, step, "
                        "epochs, --sync...); give every rank the same", rank);
    /* Shards whose largest index differs still share one feature space. */
    (*train)->n_features = v[0];
    uint64_t blocks = (v[1] + na->sync_every - 1) / na->sync_every;
    a->o.average = hog_avg_step;
    a->o.average_blocks = blocks ? blocks : 1;

    hog_model *like = NULL;
    if (na->ao.checkpoint) {
        if ((s = hog_model_new(v[0], a->o.loss, a->o.bias, &like, err)) !=
            HOG_OK)
            return s;
        like->l1 = a->o.l1;
        like->l2 = a->o.l2;
        like->labels = (*train)->labels;
        like->label_pos = (*train)->label_pos;
        like->label_neg = (*train)->label_neg;
        if (a->o.loss != HOG_LOSS_SQUARED)
            like->labels = HOG_LABELS_BINARY;
        na->ao.like = like;
        na->ao.epoch_blocks = a->o.average_blocks;
    }
    s = hog_avg_create(*net, &na->ao, avg, err);
    hog_model_free(like);
    na->ao.like = NULL;
    if (s != HOG_OK)
        return s;
    a->o.average_ctx = *avg;
    if (!a->quiet)
        fprintf(stderr, "rank %u of %u (%s): %llu rows, %llu features, "
                "%s every %llu rows (%llu per epoch)\n", rank, world,
                hog_net_backend(*net),
                (unsigned long long)(*train)->m.rows,
                (unsigned long long)v[0],
                na->ao.mode == HOG_AVG_BMUF ? "BMUF" : "averaging",
                (unsigned long long)(((*train)->m.rows + a->o.average_blocks -
                                      1) / a->o.average_blocks),
                (unsigned long long)a->o.average_blocks);
    return HOG_OK;
}

static void quiet_log(void *ctx, const char *line)
{
    (void)ctx, (void)line;
}

/* The .hgb header of a file to stream, as a hog_data without arrays. */
static hog_status stream_header(const char *path, hog_data *d, hog_err *err)
{
    struct hog_hgb_info in;
    hog_status s = hog_hgb_open_info(path, &in, err);
    enum hog_file_kind kind;
    hog_err e2;
    /* Only text is worth converting; a damaged or newer .hgb, a compressed
     * file or a model keeps the reader's own sentence. */
    if (s != HOG_OK && hog_file_kind_of(path, &kind, &e2) == HOG_OK &&
        kind == HOG_FILE_TEXT)
        return hog_errf(err, s, "%s: --stream reads a .hgb file; make one "
                        "with: hogtrain convert %s %s.hgb", path, path, path);
    if (s != HOG_OK)
        return s;
    memset(d, 0, sizeof *d);
    d->m.rows = in.rows;
    d->m.nnz = in.nnz;
    d->n_features = in.n_features;
    d->labels = in.labels;
    d->label_pos = in.label_pos;
    d->label_neg = in.label_neg;
    d->n_pos = in.n_pos;
    hog_hgb_info_close(&in);
    return HOG_OK;
}

int hog_cli_train(int argc, char **argv)
{
    struct train_args a = { 0 };
    int rc = parse(argc, argv, &a);
    if (rc >= 0)
        return rc;

    double t_start = hog_now();
    hog_err err = { { 0 } };
    hog_status s = HOG_OK;
    hog_data *train = NULL, *test = NULL;
    hog_model *m = NULL;
    hog_net *net = NULL;
    struct hog_avg *avg = NULL;
    struct hog_progress p;
    struct train_report r = { .a = &a, .p = &p };
    hog_progress_init(&p, stderr, a.quiet, a.o.loss == HOG_LOSS_SQUARED);

    /* Fail before the work, not after it, when an input cannot be read or
     * an output cannot be made. */
    const char *const ins[] = { a.train, a.test, a.o.resume,
                                a.net.secret_file };
    if ((s = hog_cli_check_readable(ins, sizeof ins / sizeof *ins, &err)) !=
            HOG_OK ||
        (a.model && (s = hog_cli_check_writable(a.model, &err)) != HOG_OK) ||
        (a.o.checkpoint &&
         (s = hog_cli_check_writable(a.o.checkpoint, &err)) != HOG_OK) ||
        (a.json && (s = hog_cli_check_writable(a.json, &err)) != HOG_OK))
        goto fail;

    hog_data hdr; /* --stream: the file's header, no arrays */
    hog_stream_stats ss;
    if (a.stream) {
        double t = hog_now();
        if ((s = stream_header(a.train, &hdr, &err)) != HOG_OK)
            goto fail;
        r.load_train_s = hog_now() - t;
        r.train = &hdr;
        memset(&ss, 0, sizeof ss);
        a.o.stream_stats = &ss;
        r.stream = &ss;
        if (a.quiet)
            a.o.log = quiet_log;
        if (!a.quiet)
            fprintf(stderr, "streaming %s: %llu rows, %llu features, %llu "
                            "nonzeros\n", hog_cli_basename(a.train),
                    (unsigned long long)hdr.m.rows,
                    (unsigned long long)hdr.n_features,
                    (unsigned long long)hdr.m.nnz);
    } else {
        if ((s = hog_cli_load(a.train, &a.lo, a.quiet, &train, &r.load_train_s,
                              &err)) != HOG_OK)
            goto fail;
        r.train = train;
    }
    if (a.net.on) {
        if (a.stream) {
            s = hog_errf(&err, HOG_ENOTSUP, "--stream does not combine with "
                         "--world yet: each rank loads its shard");
            goto fail;
        }
        if ((s = net_setup(&a, &train, &net, &avg, &err)) != HOG_OK)
            goto fail;
        r.train = train;
    }
    r.net = net;
    r.avg = avg;
    if (a.test) {
        /* The test set lives in the training set's feature space. */
        hog_load_opts tl = a.lo;
        tl.n_features = hog_data_features(r.train);
        if ((s = hog_cli_load(a.test, &tl, a.quiet, &test, &r.load_test_s,
                              &err)) != HOG_OK)
            goto fail;
        r.test = test;
    }

    a.o.progress = hog_progress_cb;
    a.o.progress_ctx = &p;
    hog_cyclades_stats cyc;
    memset(&cyc, 0, sizeof cyc);
    if (a.o.algo == HOG_ALGO_CYCLADES) {
        a.o.cyclades_stats = &cyc;
        r.cyc = &cyc;
    }
    hog_hot_stats hot;
    memset(&hot, 0, sizeof hot);
    if (a.o.algo == HOG_ALGO_HOGWILD && a.o.hot_count) {
        a.o.hot_stats = &hot;
        r.hot = &hot;
    }
    p.t0 = p.epoch_t0 = hog_now();
    a.o.cancel = hog_cli_signals_install();
    s = a.stream ? hog_train_stream(a.train, test, &a.o, &m, &err)
                 : hog_train(train, test, &a.o, &m, &err);
    if (s == HOG_OK && a.stream && !a.quiet)
        fprintf(stderr, "streamed with %s%s: %u buffers of %s, %s read, "
                        "%.2f s waiting for reads\n",
                ss.backend, ss.direct ? " (O_DIRECT)" : "", ss.slots,
                hog_cli_bytes((char[32]){ 0 }, 32,
                              ss.slots ? (double)ss.ring_bytes / ss.slots : 0),
                hog_cli_bytes((char[32]){ 0 }, 32, (double)ss.bytes_read),
                ss.read_wait_s);
    hog_cli_signals_restore();
    r.train_s = hog_now() - p.t0;
    hog_progress_clear(&p);
    if (s != HOG_OK)
        goto fail;
    r.m = m;
    if (p.oom)
        fprintf(stderr, "hogtrain: warning: out of memory for the epoch "
                        "history; the table and report are incomplete\n");

    if (!a.quiet) {
        fputc('\n', stderr);
        hog_progress_table(&p, stderr);
        if (r.cyc)
            print_cyclades(r.cyc);
        if (epoch_cap_first(&r))
            fprintf(stderr, "%s: reached the epoch cap (--epochs %u) before "
                            "--tol %g; the model may be less accurate: raise "
                            "--epochs\n",
                    hog_cli_algo_name(a.o.algo), a.o.epochs, a.o.tol);
        if (r.hot)
            fprintf(stderr, "hot replicas: %llu features%s per thread "
                            "(%.1f%% of the nonzeros), folded %llu times\n",
                    (unsigned long long)hot.hot_features,
                    hot.bias_hot ? " and the bias" : "",
                    100.0 * hot.hot_nnz_share,
                    (unsigned long long)hot.folds);
    }
    if (a.model) {
        double t = hog_now();
        if ((s = hog_model_save(m, a.model, a.fmt, &err)) != HOG_OK)
            goto fail;
        r.save_s = hog_now() - t;
    }
    r.total_s = hog_now() - t_start;
    if (a.json && (s = save_json(&r, &err)) != HOG_OK)
        goto fail;
    if (!a.quiet)
        print_summary(&r);
    rc = HOG_EXIT_OK;
    goto out;
fail:
    rc = hog_cli_fail_status(s, &err);
out:
    hog_avg_free(avg);
    hog_net_close(net);
    hog_model_free(m);
    hog_data_free(test);
    hog_data_free(train);
    hog_progress_free(&p);
    return rc;
}
