/* hogtrain: the command. Finds the subcommand and hands it the rest of the
 * arguments; each subcommand parses its own options (src/cli/<name>.c).
 * Whatever the subcommand, a failed write to standard output (a full disk,
 * a closed pipe's reader) is an error here, at the end, in one place. */
#include "cli/cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct subcommand {
    const char *name;
    hog_cli_fn fn;
    const char *summary;
};

static const struct subcommand commands[] = {
    { "train", hog_cli_train, "train a linear model on LIBSVM text or .hgb data" },
    { "predict", hog_cli_predict, "predict labels or scores with a trained model" },
    { "convert", hog_cli_convert, "convert LIBSVM text to the .hgb binary cache" },
    { "gen", hog_cli_gen, "generate synthetic sparse data (LIBSVM text)" },
    { "info", hog_cli_info, "describe a data or model file" },
    { "bench", hog_cli_bench, "benchmark Hogwild! and the locked update modes" },
    { "topo", hog_cli_topo, "show the cores, NUMA nodes and thread placement" },
    { "objective", hog_cli_objective, "the primal objective of a model on data" },
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fputs("usage: hogtrain COMMAND [options] [arguments]\n"
          "       hogtrain --help | --version\n"
          "\n"
          "Trains sparse linear models (logistic regression, linear SVM, least\n"
          "squares, Lasso) on LIBSVM data: serial SGD, lock-free Hogwild!,\n"
          "reproducible Cyclades, coordinate descent, out of core, on GPUs and\n"
          "across machines.\n"
          "\n"
          "commands:\n",
          f);
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fputs("\n"
          "'hogtrain COMMAND --help' describes a command's options; man hogtrain\n"
          "describes them all. Exit status: 0 success, 1 runtime error, 2 usage error.\n",
          f);
}

/* "hogtrain: unknown command 'trian'; did you mean 'train'?" and the usage. */
static int unknown_command(const char *name)
{
    struct hog_cli_nearest n;
    hog_cli_nearest_init(&n, name, strlen(name));
    for (size_t i = 0; i < N_COMMANDS; i++)
        hog_cli_nearest_offer(&n, commands[i].name);
    const char *best = hog_cli_nearest_best(&n);
    if (best)
        fprintf(stderr, "hogtrain: unknown command '%s'; did you mean '%s'?\n",
                name, best);
    else
        fprintf(stderr, "hogtrain: unknown command '%s'\n", name);
    usage(stderr);
    return HOG_EXIT_USAGE;
}

static int run(int argc, char **argv);

int main(int argc, char **argv)
{
    int rc = run(argc, argv);
    /* Data written to standard output may still sit in its buffer, and a
     * write that failed earlier leaves only the error flag: a command that
     * succeeded has not, unless both are clean and the close works too. */
    hog_err err = { { 0 } };
    if (hog_cli_stdout_check(&err) != HOG_OK) {
        if (rc == HOG_EXIT_OK)
            rc = hog_cli_fail_status(HOG_EIO, &err);
    } else {
        errno = 0;
        /* EBADF: started with standard output closed, and wrote nothing */
        if (fclose(stdout) != 0 && errno != EBADF && rc == HOG_EXIT_OK)
            rc = hog_cli_fail("cannot write to standard output: %s",
                              strerror(errno));
    }
    return rc;
}

static int run(int argc, char **argv)
{
    hog_cli_blas_threads(argv); /* memory.c: may re-exec under ulimit -v */
    /* hwloc's plugins find I/O devices (PCI, OpenCL, GL) and read XML with
     * libxml2; hogtrain asks only for the CPUs (and reads --topology-xml
     * with hwloc's own reader), yet loading them and what they link (ICU,
     * X11) cost 13 ms of CPU at every pool's start, a tenth of a small
     * two-thread run. A path the user set is kept. */
    setenv("HWLOC_PLUGINS_PATH", "", 0);
    hog_cli_sigbus_install();
    hog_cli_cleanup_install();
    if (argc < 2) {
        fputs("hogtrain: no command given\n", stderr);
        usage(stderr);
        return HOG_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
        strcmp(cmd, "help") == 0) {
        if (argc > 2 && strcmp(cmd, "help") == 0) {
            /* "hogtrain help train" = "hogtrain train --help" */
            static char help_flag[] = "--help";
            char *args[] = { argv[2], help_flag, NULL };
            for (size_t i = 0; i < N_COMMANDS; i++)
                if (strcmp(argv[2], commands[i].name) == 0)
                    return commands[i].fn(2, args);
            return unknown_command(argv[2]);
        }
        usage(stdout);
        return HOG_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        /* the second line: native or portable, and the vector kernels
         * this CPU runs (a portable build picks them at load time) */
        printf("hogtrain %s\n%s\n", hog_version(), hog_build_info());
        return HOG_EXIT_OK;
    }
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    if (cmd[0] != '-')
        return unknown_command(cmd);
    fprintf(stderr, "hogtrain: unknown option '%s' (options follow the command)\n", cmd);
    usage(stderr);
    return HOG_EXIT_USAGE;
}
