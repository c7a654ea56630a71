/* hogtrain train --help: the library's options (their text and defaults)
 * printed from its options' table (src/train/options.c), the command's
 * own between them. */
#include "cli/train.h"

#include <math.h>
#include <string.h>

/* The command's word for an enum option's value. */
static const char *enum_word(const hog_train_option *r, int v)
{
    if (strcmp(r->field, "loss") == 0)
        return hog_cli_loss_name((hog_loss)v);
    if (strcmp(r->field, "algo") == 0)
        return hog_cli_algo_name((hog_algo)v);
    if (strcmp(r->field, "schedule") == 0)
        return hog_cli_schedule_name((hog_schedule)v);
    if (strcmp(r->field, "update") == 0)
        return hog_cli_update_name((hog_update)v);
    if (strcmp(r->field, "replicas") == 0)
        return hog_cli_replicas_name((hog_replicas)v);
    if (strcmp(r->field, "multiclass") == 0)
        return v == HOG_MULTICLASS_SOFTMAX ? "softmax" : "ovr";
    return "?";
}

/* The row's default in words: its rule, or its value. */
static void default_words(const hog_train_option *r, char *buf, size_t len)
{
    if (r->rule)
        snprintf(buf, len, "%s", r->rule);
    else if (r->type == HOG_OPTION_ENUM)
        snprintf(buf, len, "%s", enum_word(r, (int)r->def));
    else if (r->type == HOG_OPTION_DOUBLE)
        snprintf(buf, len, "%g", r->def);
    else
        snprintf(buf, len, "%llu", (unsigned long long)r->def);
}

#define HELP_COL 25
#define HELP_WIDTH 79

/* One option of the table: "      --l2 X", its text from column 25,
 * wrapped at 79 columns, and "(default ...)". */
static void option(FILE *f, const char *flag)
{
    size_t n;
    const hog_train_option *rows = hog_train_options(&n), *r = NULL;
    for (size_t i = 0; i < n && !r; i++)
        if (rows[i].flag && strcmp(rows[i].flag, flag) == 0)
            r = &rows[i];
    if (!r)
        return;
    char def[256], text[1024];
    default_words(r, def, sizeof def);
    snprintf(text, sizeof text, "%s (default %s)", r->help, def);
    int col = fprintf(f, "      --%s%s%s", flag, r->metavar ? " " : "",
                      r->metavar ? r->metavar : "");
    fprintf(f, "%*s", col < HELP_COL ? HELP_COL - col : 2, "");
    col = col < HELP_COL ? HELP_COL : col + 2;
    bool first = true;
    for (char *w = strtok(text, " \n"); w; w = strtok(NULL, " \n")) {
        int len = (int)strlen(w);
        if (!first && col + 1 + len > HELP_WIDTH) {
            fprintf(f, "\n%*s", HELP_COL, "");
            col = HELP_COL;
        } else if (!first) {
            fputc(' ', f);
            col++;
        }
        fputs(w, f);
        col += len;
        first = false;
    }
    fputc('\n', f);
}

static void help(FILE *f)
{
    fputs("\n"
          "Trains a linear model on TRAIN (LIBSVM/SVMlight or Vowpal Wabbit text,\n"
          "or .hgb; '-' reads standard input), printing per-epoch metrics on\n"
          "standard error.\n"
          "\n"
          "data and output:\n"
          "  -t, --test FILE        also report metrics on FILE after each epoch\n"
          "  -o, --output MODEL     write the trained model to MODEL\n"
          "      --model-format F   hgm (hogtrain's binary model, default) or\n"
          "                         liblinear (text, readable by liblinear-predict;\n"
          "                         softmax as MCSVM_CS: the same labels, no -b 1)\n"
          "      --json FILE        write options, data summary, per-epoch metrics\n"
          "                         and timings to FILE as JSON\n"
          "      --zero-based       feature indices in the text start at 0\n"
          "      --format F         auto (default: Vowpal Wabbit text when its first\n"
          "                         line has a '|'), libsvm or vw\n"
          "      --hash-bits B      hash the features into 2^B weights, B from 1 to\n"
          "                         31 (Vowpal Wabbit text: always, default 18); the\n"
          "                         model records it and predict hashes alike\n"
          "      --hash-seed S      the hash's seed (default 0)\n"
          "      --interactions ab[,cde...]  cross namespaces a and b (or a, b\n"
          "                         and c) of Vowpal Wabbit text (VW's -q,\n"
          "                         --cubic; first bytes of the names), as each\n"
          "                         row is read; repeatable; serial and hogwild;\n"
          "                         predict crosses alike; a namespace the data\n"
          "                         never has is warned of\n"
          "      --keep-names       keep in the model, for each weight, the names\n"
          "                         of the Vowpal Wabbit features hashed into it\n"
          "                         (VW's --invert_hash; hogtrain info --weights\n"
          "                         lists them); .hgm only\n"
          "  -q, --quiet            print nothing but errors\n"
          "      --checkpoint FILE  write the model and its training state to\n"
          "                         FILE (atomically) during training\n"
          "      --checkpoint-every N  every N epochs (default 1), or every N\n"
          "                         rows with a suffix r (50000r)\n"
          "      --resume FILE      continue from a checkpoint; with the same data\n"
          "                         and options the model equals an uninterrupted run\n"
          "\n"
          "model:\n", f);
    option(f, "loss");
    option(f, "epsilon");
    option(f, "quantile-tau");
    option(f, "l1");
    option(f, "l2");
    fputs("      --C X              LIBLINEAR's C instead: l2 = 1/(C n), l1 = 0, n the\n"
          "                         rows trained on (LIBLINEAR -s 0, 1, 2, 3 and 7)\n"
          "      --reg R            l2 (default) or l1: which strength --C sets\n"
          "                         (l1 = 1/(C n), l2 = 0: LIBLINEAR -s 5 and 6)\n", f);
    option(f, "bias");
    option(f, "multiclass");
    fputs("      --init MODEL       warm start from MODEL's weights (.hgm or\n"
          "                         LIBLINEAR; same loss kind, bias, classes;\n"
          "                         --epochs 0: MODEL as it is)\n"
          "      --normalize        divide each feature by its largest |value| in\n"
          "                         TRAIN (sparse stays sparse), folded into the\n"
          "                         saved weights: predict needs no scaling\n"
          "      --weights FILE     one weight >= 0 per training row, one per line\n"
          "                         (LIBLINEAR's instance weights): the row's loss\n"
          "                         counts that many times in the objective\n"
          "      --class-weight W   balanced (class k of K with n_k rows weighs\n"
          "                         n / (K n_k)) or LABEL:W[,LABEL:W...] (other\n"
          "                         labels 1); a row weighs its --weights value\n"
          "                         times its class's (docs/TRAINING.md, Weights)\n"
          "\n"
          "optimizer:\n", f);
    option(f, "epochs");
    option(f, "eta");
    option(f, "schedule");
    option(f, "power");
    option(f, "seed");
    option(f, "tol");
    option(f, "save-state");
    option(f, "average");
    fputs("      --metrics-every K  the training set's objective, loss, accuracy\n"
          "                         and AUC (a pass over the data) every K epochs\n"
          "                         and after the last; other epochs report the\n"
          "                         objective scd and dcd keep, the SGD trainers\n"
          "                         their progressive loss and accuracy (each row\n"
          "                         scored before its step), one-vs-rest nothing\n"
          "                         (default 0: after the last only where the\n"
          "                         algorithm reports its own, every epoch\n"
          "                         otherwise)\n"
          "\n"
          "parallelism:\n", f);
    option(f, "algo");
    option(f, "threads");
    option(f, "update");
    fputs("      --bind SPEC        where hogwild threads run: compact, scatter, none,\n"
          "                         cpus:LIST, numa:LIST or socket:LIST, optionally\n"
          "                         +no_smt, +oversubscribe (default compact; see\n"
          "                         docs/POOL.md)\n"
          "      --no-smt           at most one hogwild thread per core\n"
          "      --oversubscribe    allow more threads than usable CPUs\n", f);
    option(f, "replicas");
    fputs("      --hot K            hot-feature replicas: the K most frequent\n"
          "                         features and the bias kept per thread, folded\n"
          "                         into the shared model every --sync-every rows\n"
          "                         (or epoch); auto: those in 1/32 of the rows;\n"
          "                         0 or off (default): plain Hogwild!\n"
          "      --sync-every N     rows per replica (--replicas node or core, or\n"
          "                         --gpus) or per process (--world) between model\n", f);
    hog_train_opts d;
    hog_train_opts_init(&d);
    fprintf(f, "                         averagings (default %llu; 10000 with --world);\n",
            (unsigned long long)d.sync_every);
    fputs("                         0: only at each epoch's end (its model is the\n"
          "                         replicas' or processes' average)\n"
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
          "                         allows), off or 0 (none: the model equals\n"
          "                         serial SGD over the same row order), or a\n"
          "                         degree D (the bias and the features in more\n"
          "                         than D rows)\n"
          "\n"
          "GPUs (see docs/GPU.md):\n"
          "      --gpus G           all, none (default) or device numbers like 0,1\n"
          "                         (after CUDA_VISIBLE_DEVICES; a number twice is\n"
          "                         two replicas on that GPU); with --algo newton\n"
          "                         or lbfgs: their products X v and X^T u there\n"
          "      --gpu-step S       minibatch (sums in double, deterministic;\n"
          "                         default) or hogwild (a warp per row, each\n"
          "                         feature's update averaged over the batch's\n"
          "                         rows; --schedule constant or invscaling)\n", f);
    fprintf(f, "      --gpu-batch N      rows per replica per step (default %u)\n",
            HOG_GPU_DEFAULT_BATCH);
    fputs(          "      --sync-every N     also sets the rows per GPU replica between\n"
          "                         averages (see parallelism)\n"
          "\n"
          "scale-out (one process per machine, models averaged; --algo newton and\n"
          "lbfgs solve all the ranks' rows exactly instead; docs/SCALEOUT.md):\n"
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
          "model selection and validation (docs/TRAINING.md):\n"
          "      --cv K             K-fold cross-validation (2 to 1000), folds\n"
          "                         stratified by class and seeded by --seed: prints\n"
          "                         each fold and the CV accuracy (RMSE, AUC,\n"
          "                         macro-F1) with its spread; no model unless -o\n"
          "                         or -t asks for one, then trained on every row\n"
          "      --search-C         LIBLINEAR's -C: --cv (default 5 folds) over C\n"
          "                         doubling from LIBLINEAR's start (or --C X) up to\n"
          "                         2^10, stopping after 3 values without a better\n"
          "                         CV accuracy; prints the path and the best C,\n"
          "                         which -o and -t then train with\n"
          "      --plot FILE        with --search-C: CV accuracy against log2 C as\n"
          "                         an .svg or .png (gnuplot)\n"
          "      --holdout F        keep a seeded, stratified share F (0 < F < 1) of\n"
          "                         TRAIN out as a validation set, reported after\n"
          "                         every epoch\n"
          "      --validation FILE  or validate on FILE\n"
          "      --early-stop N     stop after N epochs without a lower validation\n"
          "                         loss and keep the best epoch's model\n"
          "\n"
          "Every option may be given once. Exit status: 0 success, 1 runtime error,\n"
          "2 usage error. See man hogtrain for the output's wording.\n", f);
}

const struct hog_cli_cmd hog_cli_train_cmd = {
    "train",
    "hogtrain train [options] TRAIN [-t TEST] [-o MODEL]",
    help,
    NULL,
};
