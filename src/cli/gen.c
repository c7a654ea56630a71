/* hogtrain gen: synthetic LIBSVM data from a planted linear model
 * (src/io/gen.c), streamed to a file or standard output. */
#include "cli/cli.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

enum {
    OPT_ROWS = HOG_CLI_OPT_OWN,
    OPT_FEATURES,
    OPT_NNZ,
    OPT_ZIPF,
    OPT_NOISE,
    OPT_REGRESSION,
    OPT_SEED,
};

static const struct option longopts[] = {
    { "output", required_argument, NULL, 'o' },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { "rows", required_argument, NULL, OPT_ROWS },
    { "features", required_argument, NULL, OPT_FEATURES },
    { "nnz", required_argument, NULL, OPT_NNZ },
    { "zipf", required_argument, NULL, OPT_ZIPF },
    { "noise", required_argument, NULL, OPT_NOISE },
    { "regression", no_argument, NULL, OPT_REGRESSION },
    { "seed", required_argument, NULL, OPT_SEED },
    { NULL, 0, NULL, 0 },
};

static void help(FILE *f)
{
    struct hog_gen_opts d;
    hog_gen_opts_init(&d);
    fprintf(f,
            "\n"
            "Writes synthetic LIBSVM text: rows with power-law feature frequencies\n"
            "(like text) labelled by a planted sparse linear model. The same options\n"
            "and seed always give the same bytes.\n"
            "\n"
            "      --rows N        rows, N >= 1 (default %llu)\n"
            "      --features N    features, N >= 1 (default %llu)\n"
            "      --nnz X         mean nonzeros per row, 0 < X <= features (default %g)\n"
            "      --zipf X        power-law exponent of feature frequencies; 0 =\n"
            "                      uniform (default %g)\n"
            "      --noise X       label flip probability in [0, 1], or with\n"
            "                      --regression the noise's standard deviation (default %g)\n"
            "      --regression    real targets instead of +1/-1 labels\n"
            "      --seed N        random seed (default %llu)\n"
            "  -o, --output FILE   write to FILE (temporary name, then renamed);\n"
            "                      '-' or no -o: standard output\n"
            "  -q, --quiet         no progress or summary on standard error\n"
            "\n"
            HOG_CLI_EXIT_HELP,
            (unsigned long long)d.rows,
            (unsigned long long)d.features, d.nnz_per_row, d.zipf,
            d.label_noise, (unsigned long long)d.seed);
}

static const struct hog_cli_cmd cmd = {
    "gen",
    "hogtrain gen [--rows N] [--features N] [--nnz X] [--zipf X] [--noise X]\n"
    "                    [--regression] [--seed N] [-o FILE|-]",
    help,
    NULL,
};


/* A FILE that forwards to another and counts bytes and rows written, for
 * the progress line (hog_gen_write takes a FILE and reports nothing). */
struct sink {
    FILE *to;
    uint64_t bytes, rows, total_rows;
    double t0, last;
    int error; /* errno of the first failed write */
    bool show; /* draw a progress line on stderr */
    bool drawn;
};

static ssize_t sink_write(void *cookie, const char *buf, size_t size)
{
    struct sink *k = cookie;
    if (fwrite(buf, 1, size, k->to) != size) {
        if (!k->error)
            k->error = errno ? errno : EIO;
        return -1;
    }
    k->bytes += size;
    for (const char *p = buf, *end = buf + size;
         (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++)
        k->rows++;
    if (k->show) {
        double now = hog_now();
        /* Only outputs that take a while get a progress line. */
        if (now - k->t0 >= 0.5 && now - k->last >= 0.2) {
            char b[32];
            k->last = now;
            k->drawn = true;
            fprintf(stderr, "\r\033[Kgen: %3.0f%% (%llu/%llu rows, %s)",
                    100.0 * (double)k->rows / (double)k->total_rows,
                    (unsigned long long)k->rows,
                    (unsigned long long)k->total_rows,
                    hog_cli_bytes(b, sizeof b, (double)k->bytes));
            fflush(stderr);
        }
    }
    return (ssize_t)size;
}

static int sink_close(void *cookie)
{
    (void)cookie; /* the target is closed (and renamed) by the caller */
    return 0;
}

/* Runs the generator into `to` through a counting FILE. */
static hog_status gen_into(const struct hog_gen_opts *g, FILE *to,
                           const char *name, struct sink *k, hog_err *err)
{
    cookie_io_functions_t fns = { .write = sink_write, .close = sink_close };
    k->to = to;
    FILE *f = fopencookie(k, "w", fns);
    if (!f)
        return hog_errf(err, HOG_ENOMEM, "cannot set up the output stream");
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    hog_status s = hog_gen_write(g, f, err);
    int bad = fflush(f) != 0 || ferror(f);
    fclose(f);
    if (k->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    if ((s == HOG_OK || k->error) && (bad || k->error))
        s = hog_errf(err, HOG_EIO, "%s: write failed: %s", name,
                     strerror(k->error ? k->error : EIO));
    return s;
}

int hog_cli_gen(int argc, char **argv)
{
    struct hog_gen_opts g;
    hog_gen_opts_init(&g);
    const char *out = NULL;
    bool quiet = false;
    int ch, rc = HOG_EXIT_OK;
    struct hog_cli_parser op;
    hog_cli_parser_init(&op, &cmd, "o:qh", longopts);
    while ((ch = hog_cli_getopt(&op, argc, argv)) > 0) {
        switch (ch) {
        case 'o': out = optarg; break;
        case 'q': quiet = true; break;
        case OPT_REGRESSION: g.regression = true; break;
        case OPT_ROWS:
            rc = hog_cli_opt_u64(&cmd, "rows", optarg, 1, UINT64_MAX >> 1,
                                 &g.rows, "a positive integer");
            break;
        case OPT_FEATURES:
            rc = hog_cli_opt_u64(&cmd, "features", optarg, 1,
                                 (uint64_t)HOG_MAX_FEATURE_INDEX + 1,
                                 &g.features, "a feature count (1 to %llu)",
                                 (unsigned long long)HOG_MAX_FEATURE_INDEX + 1);
            break;
        case OPT_SEED:
            rc = hog_cli_opt_u64(&cmd, "seed", optarg, 0, UINT64_MAX, &g.seed,
                                 "a non-negative integer");
            break;
        case OPT_NNZ:
            rc = hog_cli_opt_double(&cmd, "nnz", optarg, HOG_CLI_ABOVE(0.0),
                                    HUGE_VAL, &g.nnz_per_row, "a number > 0");
            break;
        case OPT_ZIPF:
            rc = hog_cli_opt_double(&cmd, "zipf", optarg, 0.0, 100.0, &g.zipf,
                                    "an exponent in [0, 100]");
            break;
        case OPT_NOISE:
            rc = hog_cli_opt_double(&cmd, "noise", optarg, 0.0, HUGE_VAL,
                                    &g.label_noise, "a number >= 0");
            break;
        default:
            return hog_cli_bad_option(&cmd, '?', argv);
        }
        if (rc != HOG_EXIT_OK)
            return rc;
    }
    if (ch < 0)
        return op.status;
    if ((rc = hog_cli_operands(&cmd, argc, argv, 0, NULL,
                               "the output file goes after -o")) >= 0)
        return rc;
    if (!g.regression && g.label_noise > 1.0)
        return hog_cli_usage_error(&cmd, "--noise %g: a label flip probability "
                                   "must be in [0, 1] (use --regression for "
                                   "a noise level)", g.label_noise);
    if (!op.seen[OPT_NNZ] && g.nnz_per_row > (double)g.features)
        g.nnz_per_row = (double)g.features; /* the default, for few features */
    if (g.nnz_per_row > (double)g.features)
        return hog_cli_usage_error(&cmd, "--nnz %g exceeds --features %llu",
                                   g.nnz_per_row,
                                   (unsigned long long)g.features);
    if (out && strcmp(out, "-") == 0)
        out = NULL;

    hog_err err = { { 0 } };
    hog_status s;
    struct sink k = { .total_rows = g.rows, .t0 = hog_now() };
    k.show = !quiet && isatty(STDERR_FILENO) == 1;
    if (!out) {
        if ((s = gen_into(&g, stdout, "standard output", &k, &err)) == HOG_OK)
            s = hog_cli_stdout_check(&err);
        return s == HOG_OK ? HOG_EXIT_OK : hog_cli_fail_status(s, &err);
    }
    hog_outfile o;
    if ((s = hog_outfile_check(out, &err)) != HOG_OK ||
        (s = hog_outfile_open(&o, out, &err)) != HOG_OK)
        return hog_cli_fail_status(s, &err);
    if ((s = gen_into(&g, o.f, out, &k, &err)) != HOG_OK) {
        hog_outfile_abort(&o);
        return hog_cli_fail_status(s, &err);
    }
    if ((s = hog_outfile_commit(&o, &err)) != HOG_OK)
        return hog_cli_fail_status(s, &err);
    if (!quiet) {
        char b[32];
        fprintf(stderr, "wrote %s: %llu rows, %llu features, %s in %.2f s\n",
                out, (unsigned long long)k.rows,
                (unsigned long long)g.features,
                hog_cli_bytes(b, sizeof b, (double)k.bytes), hog_now() - k.t0);
    }
    return HOG_EXIT_OK;
}
