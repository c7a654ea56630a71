/* hogtrain train --help, with the library's defaults in it. */
#include "cli/train.h"

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
            "      --metrics-every K  the training set's objective, loss, accuracy\n"
            "                         and AUC (a pass over the data) every K epochs\n"
            "                         and after the last; other epochs report the\n"
            "                         objective scd and dcd keep, or nothing (default\n"
            "                         0: after the last only with scd and dcd, every\n"
            "                         epoch otherwise)\n"
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

const struct hog_cli_cmd hog_cli_train_cmd = {
    "train",
    "hogtrain train [options] TRAIN [-t TEST] [-o MODEL]",
    help,
    NULL,
};
