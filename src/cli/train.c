/* hogtrain train: load, train with progress, report, write the model. */
#include "cli/cli.h"
#include "gpu/gpu.h"
#include "train/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_SEED = 256,
    OPT_THREADS,
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
    OPT_ZERO_BASED,
    OPT_JSON,
    OPT_MODEL_FORMAT,
    OPT_GPUS,
    OPT_GPU_STEP,
    OPT_GPU_BATCH,
    OPT_SYNC_EVERY,
    OPT_CHECKPOINT, /* checkpoints: docs/RELIABILITY.md */
    OPT_CHECKPOINT_EVERY,
    OPT_RESUME,
};

static const struct option longopts[] = {
    { "test", required_argument, NULL, 't' },
    { "output", required_argument, NULL, 'o' },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { "seed", required_argument, NULL, OPT_SEED },
    { "threads", required_argument, NULL, OPT_THREADS },
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
    { "zero-based", no_argument, NULL, OPT_ZERO_BASED },
    { "json", required_argument, NULL, OPT_JSON },
    { "model-format", required_argument, NULL, OPT_MODEL_FORMAT },
    { "gpus", required_argument, NULL, OPT_GPUS },
    { "gpu-step", required_argument, NULL, OPT_GPU_STEP },
    { "gpu-batch", required_argument, NULL, OPT_GPU_BATCH },
    { "sync-every", required_argument, NULL, OPT_SYNC_EVERY },
    { "checkpoint", required_argument, NULL, OPT_CHECKPOINT },
    { "checkpoint-every", required_argument, NULL, OPT_CHECKPOINT_EVERY },
    { "resume", required_argument, NULL, OPT_RESUME },
    { NULL, 0, NULL, 0 },
};

static void help(FILE *f);

static const struct hog_cli_cmd cmd = {
    "train",
    "hogtrain train [options] TRAIN [-t TEST] [-o MODEL]",
    help,
};

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
            "usage: %s\n"
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
            "\n"
            "parallelism:\n"
            "      --algo A           serial (deterministic), hogwild, cyclades, scd\n"
            "                         or dcd (default %s)\n"
            "      --threads N        worker threads; 0 = all allowed cores (default %u)\n"
            "      --update U         how hogwild threads write shared weights: none\n"
            "                         (lock-free), atomic, striped or mutex (default %s)\n"
            "\n"
            "GPUs (see docs/GPU.md):\n"
            "      --gpus G           all, none (default) or device numbers like 0,1\n"
            "                         (after CUDA_VISIBLE_DEVICES; a number twice is\n"
            "                         two replicas on that GPU)\n"
            "      --gpu-step S       minibatch (cuSPARSE, deterministic; default) or\n"
            "                         hogwild (a warp per row, atomic adds)\n"
            "      --gpu-batch N      rows per replica per step (default %u)\n"
            "      --sync-every N     rows per replica between replica averages\n"
            "                         (default %u)\n"
            "\n"
            "Every option may be given once. Exit status: 0 success, 1 runtime error,\n"
            "2 usage error. See man hogtrain for the output's wording.\n",
            cmd.usage, hog_cli_loss_name(d.loss), d.l1, d.l2, d.bias, d.epochs,
            eta_for(HOG_LOSS_LOGISTIC), eta_for(HOG_LOSS_HINGE),
            eta_for(HOG_LOSS_SQUARED), hog_cli_schedule_name(d.schedule), d.power,
            (unsigned long long)d.seed, hog_cli_algo_name(d.algo), d.threads,
            hog_cli_update_name(d.update), HOG_GPU_DEFAULT_BATCH,
            HOG_GPU_DEFAULT_SYNC);
}

struct train_args {
    hog_train_opts o;
    hog_load_opts lo;
    const char *train, *test, *model, *json;
    hog_model_format fmt;
    bool quiet;
};

/* Parses argv into a; returns -1 to go on, or an exit status. */
static int parse(int argc, char **argv, struct train_args *a)
{
    unsigned char seen[HOG_CLI_MAX_OPT] = { 0 };
    hog_train_opts_init(&a->o);
    hog_load_opts_init(&a->lo);
    a->fmt = HOG_MODEL_HGM;
    int ch, rc = HOG_EXIT_USAGE;
    uint64_t u;
    double x, eta = 0;
    int e;
    hog_schedule sched = HOG_SCHED_CONSTANT;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":t:o:qh", longopts, NULL)) != -1) {
        if (ch == '?' || ch == ':')
            return hog_cli_bad_option(&cmd, ch, argv);
        if (!hog_cli_once(&cmd, longopts, seen, ch, &rc))
            return rc;
        const char *name = hog_cli_opt_name(longopts, ch);
        switch (ch) {
        case 'h':
            help(stdout);
            return HOG_EXIT_OK;
        case 't': a->test = optarg; break;
        case 'o': a->model = optarg; break;
        case 'q': a->quiet = true; break;
        case OPT_JSON: a->json = optarg; break;
        case OPT_ZERO_BASED: a->lo.zero_based = 1; break;
        case OPT_CHECKPOINT: a->o.checkpoint = optarg; break;
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
        case OPT_THREADS:
            if (!hog_parse_u64(optarg, 0, 65536, &u))
                return hog_cli_usage_error(&cmd, "--threads: '%s' is not a "
                                           "thread count (0 to 65536)", optarg);
            a->o.threads = (unsigned)u;
            a->lo.threads = (unsigned)u;
            break;
        case OPT_EPOCHS:
            if (!hog_parse_u64(optarg, 1, 1000000, &u))
                return hog_cli_usage_error(&cmd, "--epochs: '%s' is not a "
                                           "number of epochs (1 to 1000000)",
                                           optarg);
            a->o.epochs = (unsigned)u;
            break;
        case OPT_L1:
        case OPT_L2:
        case OPT_POWER:
            if (!hog_parse_double(optarg, 0.0, HUGE_VAL, &x))
                return hog_cli_usage_error(&cmd, "--%s: '%s' is not a "
                                           "number >= 0", name, optarg);
            *(ch == OPT_L1 ? &a->o.l1 : ch == OPT_L2 ? &a->o.l2 : &a->o.power) = x;
            break;
        case OPT_ETA:
            if (!hog_parse_double(optarg, 0.0, HUGE_VAL, &x) || x == 0.0)
                return hog_cli_usage_error(&cmd, "--eta: '%s' is not a step "
                                           "size > 0", optarg);
            eta = x;
            break;
        case OPT_BIAS:
            if (!hog_parse_double(optarg, -HUGE_VAL, HUGE_VAL, &x))
                return hog_cli_usage_error(&cmd, "--bias: '%s' is not a "
                                           "number", optarg);
            a->o.bias = x;
            break;
        case OPT_LOSS:
            if ((e = hog_cli_loss_parse(optarg)) < 0)
                return hog_cli_usage_error(&cmd, "--loss: unknown loss '%s' "
                                           "(logistic, hinge, sqhinge, squared)",
                                           optarg);
            a->o.loss = (hog_loss)e;
            break;
        case OPT_SCHEDULE:
            if ((e = hog_cli_schedule_parse(optarg)) < 0)
                return hog_cli_usage_error(&cmd, "--schedule: unknown schedule "
                                           "'%s' (constant, invscaling, adagrad)",
                                           optarg);
            sched = (hog_schedule)e;
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
            if (!hog_parse_u64(optarg, 1, UINT64_MAX, &u))
                return hog_cli_usage_error(&cmd, "--sync-every: '%s' is not a "
                                           "number of rows >= 1", optarg);
            a->o.sync_every = u;
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
        default:
            return hog_cli_bad_option(&cmd, '?', argv);
        }
    }
    if (optind >= argc)
        return hog_cli_usage_error(&cmd, "missing the TRAIN file");
    if (argc - optind > 1)
        return hog_cli_usage_error(&cmd, "unexpected argument '%s' (one "
                                   "TRAIN file; the test file goes after -t)",
                                   argv[optind + 1]);
    a->train = argv[optind];
    /* The step size and schedule that suit the loss, unless given. */
    hog_train_opts_defaults_for_loss(&a->o);
    if (seen[OPT_ETA])
        a->o.eta = eta;
    if (seen[OPT_SCHEDULE])
        a->o.schedule = sched;
    /* Options that only make sense together. */
    if (seen[OPT_UPDATE] && a->o.algo != HOG_ALGO_HOGWILD)
        return hog_cli_usage_error(&cmd, "--update applies to --algo hogwild "
                                   "only (this run uses --algo %s)",
                                   hog_cli_algo_name(a->o.algo));
    bool gpus = hog_gpu_requested(&a->o);
    if (!gpus && (seen[OPT_GPU_STEP] || seen[OPT_GPU_BATCH] ||
                  seen[OPT_SYNC_EVERY]))
        return hog_cli_usage_error(&cmd, "--%s applies to GPU training only "
                                   "(add --gpus)",
                                   seen[OPT_GPU_STEP]    ? "gpu-step"
                                   : seen[OPT_GPU_BATCH] ? "gpu-batch"
                                                         : "sync-every");
    if (gpus && seen[OPT_ALGO])
        return hog_cli_usage_error(&cmd, "--gpus trains GPU replicas; it "
                                   "does not combine with --algo");
    if (seen[OPT_POWER] && a->o.schedule != HOG_SCHED_INVSCALING)
        return hog_cli_usage_error(&cmd, "--power applies to --schedule "
                                   "invscaling only");
    if (seen[OPT_CHECKPOINT_EVERY] && !a->o.checkpoint)
        return hog_cli_usage_error(&cmd, "--checkpoint-every needs "
                                   "--checkpoint FILE");
    if ((a->o.checkpoint || a->o.resume) && a->o.algo != HOG_ALGO_SERIAL)
        return hog_cli_usage_error(&cmd, "--checkpoint and --resume work "
                                   "with --algo serial only so far");
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
    if (seen[OPT_THREADS] && a->o.algo == HOG_ALGO_SERIAL && a->o.threads > 1)
        return hog_cli_usage_error(&cmd, "--algo serial runs one thread; "
                                   "--threads %u conflicts with it",
                                   a->o.threads);
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
    double load_train_s, load_test_s, train_s, save_s, total_s;
    const struct hog_progress *p;
    const hog_model *m;
};

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
        hog_json_num(&j, "seconds", s->seconds);
        hog_json_num(&j, "total_seconds", s->total_seconds);
        hog_json_num(&j, "rows_per_s", s->rows_per_s);
        hog_json_num(&j, "nnz_per_s", s->nnz_per_s);
        hog_json_close_obj(&j);
    }
    hog_json_close_arr(&j);

    hog_json_obj(&j, "model");
    hog_json_u64(&j, "features", hog_model_features(r->m));
    hog_json_num(&j, "bias_weight", hog_model_bias(r->m));
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
    if (r->a->model)
        fprintf(stderr, ", model written to %s", r->a->model);
    fputc('\n', stderr);
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
    struct hog_progress p;
    struct train_report r = { .a = &a, .p = &p };
    hog_progress_init(&p, stderr, a.quiet, a.o.loss == HOG_LOSS_SQUARED);

    /* Fail before the work, not after it, when an output cannot be made. */
    if ((a.model && (s = hog_cli_check_writable(a.model, &err)) != HOG_OK) ||
        (a.o.checkpoint &&
         (s = hog_cli_check_writable(a.o.checkpoint, &err)) != HOG_OK) ||
        (a.json && (s = hog_cli_check_writable(a.json, &err)) != HOG_OK))
        goto fail;

    if ((s = hog_cli_load(a.train, &a.lo, a.quiet, &train, &r.load_train_s,
                          &err)) != HOG_OK)
        goto fail;
    r.train = train;
    if (a.test) {
        /* The test set lives in the training set's feature space. */
        hog_load_opts tl = a.lo;
        tl.n_features = hog_data_features(train);
        if ((s = hog_cli_load(a.test, &tl, a.quiet, &test, &r.load_test_s,
                              &err)) != HOG_OK)
            goto fail;
        r.test = test;
    }

    a.o.progress = hog_progress_cb;
    a.o.progress_ctx = &p;
    p.t0 = p.epoch_t0 = hog_now();
    a.o.cancel = hog_cli_signals_install();
    s = hog_train(train, test, &a.o, &m, &err);
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
    hog_model_free(m);
    hog_data_free(test);
    hog_data_free(train);
    hog_progress_free(&p);
    return rc;
}
