/* hogtrain convert: LIBSVM or Vowpal Wabbit text (plain or compressed) to
 * the .hgb binary cache, which loads without parsing; hashed text is
 * written with its hashed indices, and the cache records the hashing. The cache records the source's size
 * and modification time, so that a stale cache can be told from a fresh
 * one. The text is parsed in windows (hog_svm_to_hgb_stream), so that a
 * file larger than memory converts in bounded memory. */
#include "cli/cli.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

enum { OPT_WINDOW = HOG_CLI_OPT_OWN };

static const struct option longopts[] = {
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    HOG_CLI_LOAD_OPTIONS,
    { "window", required_argument, NULL, OPT_WINDOW },
    { NULL, 0, NULL, 0 },
};

static const char help[] =
    "\n"
    "Converts IN (LIBSVM/SVMlight or Vowpal Wabbit text, plain or compressed\n"
    "with gzip, xz or zstd; '-' reads standard input) to the hogtrain binary\n"
    "cache OUT.hgb, which train, predict and info read without parsing. OUT\n"
    "records the text's size (decompressed) and IN's modification time, and\n"
    "holds hashed features when the text is hashed (--hash-bits; Vowpal\n"
    "Wabbit text always), recording the hashing for the model and predict.\n"
    "\n"
    HOG_CLI_LOAD_HELP
    "      --window SIZE   text parsed at a time, e.g. 64M (default 32M):\n"
    "                      memory use is a few windows, whatever IN's size\n"
    "  -q, --quiet         print nothing but errors\n"
    "\n"
    HOG_CLI_EXIT_HELP;

static const struct hog_cli_cmd cmd = {
    "convert",
    "hogtrain convert [options] IN OUT.hgb",
    NULL,
    help,
};


int hog_cli_convert(int argc, char **argv)
{
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    bool quiet = false;
    size_t window = 32u << 20;
    int ch, rc;
    uint64_t u;
    struct hog_cli_parser op;
    hog_cli_parser_init(&op, &cmd, "qh", longopts);
    op.load = &lo;
    while ((ch = hog_cli_getopt(&op, argc, argv)) > 0) {
        switch (ch) {
        case 'q': quiet = true; break;
        case OPT_WINDOW:
            if ((rc = hog_cli_opt_size(&cmd, "window", optarg, 4096,
                                       UINT64_C(1) << 40, &u, "a size of at "
                                       "least 4K (e.g. 64M)")) != HOG_EXIT_OK)
                return rc;
            window = (size_t)u;
            break;
        default:
            return hog_cli_bad_option(&cmd, '?', argv);
        }
    }
    if (ch < 0)
        return op.status;
    static const char *const files[] = { "IN", "OUT" };
    if ((rc = hog_cli_operands(&cmd, argc, argv, 2, files, NULL)) >= 0)
        return rc;
    const char *in = argv[optind], *out = argv[optind + 1];
    if (strcmp(out, "-") == 0)
        return hog_cli_usage_error(&cmd, "OUT must be a file, not '-'");
    if (hog_cli_same_file(in, out))
        return hog_cli_usage_error(&cmd, "OUT would overwrite IN");

    hog_err err = { { 0 } };
    hog_status s;
    if ((s = hog_outfile_check(out, &err)) != HOG_OK)
        return hog_cli_fail_status(s, &err);
    double t = hog_now();
    struct hog_convert_stats cs = { 0 };
    if ((s = hog_svm_to_hgb_stream(in, out, &lo, window, 0, &cs, &err)) != HOG_OK)
        return hog_cli_fail_status(s, &err);
    t = hog_now() - t;
    if (!quiet) {
        struct stat so;
        char sz[32] = "?";
        if (stat(out, &so) == 0)
            hog_cli_bytes(sz, sizeof sz, (double)so.st_size);
        char hb[160];
        hog_cli_hashing(hb, sizeof hb, &cs.hash);
        fprintf(stderr, "wrote %s: %llu rows, %llu features, %llu nonzeros, "
                        "%s in %.2f s%s%s\n",
                out, (unsigned long long)cs.rows,
                (unsigned long long)cs.n_features,
                (unsigned long long)cs.nnz, sz, t, *hb ? "; " : "", hb);
    }
    return HOG_EXIT_OK;
}
