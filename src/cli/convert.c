/* hogtrain convert: LIBSVM text to the .hgb binary cache, which loads
 * without parsing. The cache records the source's size and modification
 * time, so that a stale cache can be told from a fresh one. */
#include "cli/cli.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

enum { OPT_ZERO_BASED = 256, OPT_THREADS };

static const struct option longopts[] = {
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { "zero-based", no_argument, NULL, OPT_ZERO_BASED },
    { "threads", required_argument, NULL, OPT_THREADS },
    { NULL, 0, NULL, 0 },
};

static void help(FILE *f);

static const struct hog_cli_cmd cmd = {
    "convert",
    "hogtrain convert [options] IN OUT.hgb",
    help,
};

static void help(FILE *f)
{
    fprintf(f,
            "usage: %s\n"
            "\n"
            "Converts IN (LIBSVM/SVMlight text; '-' reads standard input) to the\n"
            "hogtrain binary cache OUT.hgb, which train, predict and info read\n"
            "without parsing. OUT records IN's size and modification time.\n"
            "\n"
            "      --zero-based    feature indices in the text start at 0\n"
            "      --threads N     parser threads; 0 = all cores (default 0)\n"
            "  -q, --quiet         print nothing but errors\n"
            "\n"
            "Exit status: 0 success, 1 runtime error, 2 usage error.\n",
            cmd.usage);
}

int hog_cli_convert(int argc, char **argv)
{
    unsigned char seen[HOG_CLI_MAX_OPT] = { 0 };
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    bool quiet = false;
    int ch, rc;
    uint64_t u;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":qh", longopts, NULL)) != -1) {
        if (ch == '?' || ch == ':')
            return hog_cli_bad_option(&cmd, ch, argv);
        if (!hog_cli_once(&cmd, longopts, seen, ch, &rc))
            return rc;
        switch (ch) {
        case 'h':
            help(stdout);
            return HOG_EXIT_OK;
        case 'q': quiet = true; break;
        case OPT_ZERO_BASED: lo.zero_based = 1; break;
        case OPT_THREADS:
            if (!hog_parse_u64(optarg, 0, 65536, &u))
                return hog_cli_usage_error(&cmd, "--threads: '%s' is not a "
                                           "thread count (0 to 65536)", optarg);
            lo.threads = (unsigned)u;
            break;
        default:
            return hog_cli_bad_option(&cmd, '?', argv);
        }
    }
    if (argc - optind < 2)
        return hog_cli_usage_error(&cmd, "missing the %s file",
                                   argc - optind ? "OUT" : "IN");
    if (argc - optind > 2)
        return hog_cli_usage_error(&cmd, "unexpected argument '%s'",
                                   argv[optind + 2]);
    const char *in = argv[optind], *out = argv[optind + 1];
    if (strcmp(out, "-") == 0)
        return hog_cli_usage_error(&cmd, "OUT must be a file, not '-'");
    if (hog_cli_same_file(in, out))
        return hog_cli_usage_error(&cmd, "OUT would overwrite IN");

    hog_err err = { { 0 } };
    hog_status s;
    hog_data *d = NULL;
    struct stat st = { 0 };
    if ((s = hog_cli_check_writable(out, &err)) != HOG_OK)
        goto fail;
    /* The source's identity before reading it: a file changed while being
     * read then looks stale, never fresh. */
    if (strcmp(in, "-") != 0 && stat(in, &st) != 0) {
        s = hog_errf(&err, HOG_EIO, "%s: %s", in, strerror(errno));
        goto fail;
    }
    if ((s = hog_cli_load(in, &lo, quiet, &d, NULL, &err)) != HOG_OK)
        goto fail;
    double t = hog_now();
    if ((s = hog_hgb_save(d, out, (uint64_t)st.st_size, (int64_t)st.st_mtime,
                          &err)) != HOG_OK)
        goto fail;
    t = hog_now() - t;
    if (!quiet) {
        struct stat so;
        char sz[32] = "?";
        if (stat(out, &so) == 0)
            hog_cli_bytes(sz, sizeof sz, (double)so.st_size);
        fprintf(stderr, "wrote %s: %llu rows, %llu features, %llu nonzeros, "
                        "%s in %.2f s\n",
                out, (unsigned long long)hog_data_rows(d),
                (unsigned long long)hog_data_features(d),
                (unsigned long long)hog_data_nnz(d), sz, t);
    }
    hog_data_free(d);
    return HOG_EXIT_OK;
fail:
    hog_data_free(d);
    return hog_cli_fail_status(s, &err);
}
