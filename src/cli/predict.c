/* hogtrain predict: labels (or scores) for every row of a data file, and
 * the accuracy or RMSE when the file's labels can be compared. */
#include "cli/cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_SCORES = HOG_CLI_OPT_OWN };

static const struct option longopts[] = {
    { "output", required_argument, NULL, 'o' },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { "scores", no_argument, NULL, OPT_SCORES },
    HOG_CLI_LOAD_OPTIONS,
    { NULL, 0, NULL, 0 },
};

static const char help[] =
    "\n"
    "Writes one line per row of DATA (LIBSVM text or .hgb; '-' reads standard\n"
    "input): the predicted label, in the label values the model was trained\n"
    "with, or for a regression model the predicted value. MODEL is a .hgm or\n"
    "a LIBLINEAR text model. When DATA's labels are the model's, prints the\n"
    "accuracy (classification) or RMSE (regression) on standard error.\n"
    "\n"
    "  -o, --output FILE   write the predictions to FILE (default: standard output)\n"
    "      --scores        write the raw score w.x + b instead of the label\n"
    HOG_CLI_LOAD_HELP
    "  -q, --quiet         print nothing but errors\n"
    "\n"
    HOG_CLI_EXIT_HELP;

static const struct hog_cli_cmd cmd = {
    "predict",
    "hogtrain predict [options] MODEL DATA [-o PREDICTIONS]",
    NULL,
    help,
};


struct predict_args {
    const char *model, *data, *out;
    bool scores, quiet;
    hog_load_opts lo;
};

static int parse(int argc, char **argv, struct predict_args *a)
{
    hog_load_opts_init(&a->lo);
    int ch, rc;
    struct hog_cli_parser op;
    hog_cli_parser_init(&op, &cmd, "o:qh", longopts);
    op.load = &a->lo;
    while ((ch = hog_cli_getopt(&op, argc, argv)) > 0) {
        switch (ch) {
        case 'o': a->out = optarg; break;
        case 'q': a->quiet = true; break;
        case OPT_SCORES: a->scores = true; break;
        default:
            return hog_cli_bad_option(&cmd, '?', argv);
        }
    }
    if (ch < 0)
        return op.status;
    static const char *const files[] = { "MODEL", "DATA" };
    if ((rc = hog_cli_operands(&cmd, argc, argv, 2, files, NULL)) >= 0)
        return rc;
    a->model = argv[optind];
    a->data = argv[optind + 1];
    if (a->out && (hog_cli_same_file(a->out, a->model) ||
                   hog_cli_same_file(a->out, a->data)))
        return hog_cli_usage_error(&cmd, "%s would overwrite an input",
                                   a->out);
    if (strcmp(a->model, "-") == 0)
        return hog_cli_usage_error(&cmd, "MODEL must be a file, not '-'");
    return -1;
}

static bool is_regression(const hog_model *m)
{
    return m->labels == HOG_LABELS_REAL || m->loss == HOG_LOSS_SQUARED;
}

static void write_predictions(FILE *f, const hog_model *m, const double *sc,
                              uint64_t rows, bool scores)
{
    bool reg = is_regression(m);
    for (uint64_t i = 0; i < rows; i++) {
        if (scores || reg)
            fprintf(f, "%.9g\n", sc[i]);
        else
            fprintf(f, "%g\n", sc[i] > 0 ? m->label_pos : m->label_neg);
    }
}

/* Accuracy or RMSE on stderr, when the data's labels allow it. */
static void report(const hog_model *m, const hog_data *d, const double *sc)
{
    uint64_t rows = d->m.rows;
    if (!rows)
        return;
    if (is_regression(m)) {
        double se = 0;
        for (uint64_t i = 0; i < rows; i++) {
            double e = sc[i] - (double)d->m.y[i];
            se += e * e;
        }
        fprintf(stderr, "RMSE %.4f (%llu rows)\n", sqrt(se / (double)rows),
                (unsigned long long)rows);
        return;
    }
    uint64_t right = 0;
    for (uint64_t i = 0; i < rows; i++) {
        double y = d->m.y[i];
        if (y != m->label_pos && y != m->label_neg)
            return; /* unlabelled, or labelled in other values: no metric */
        right += (sc[i] > 0) == (y == m->label_pos);
    }
    fprintf(stderr, "accuracy %.2f%% (%llu/%llu)\n",
            100.0 * (double)right / (double)rows, (unsigned long long)right,
            (unsigned long long)rows);
}

/* A model of other data predicts without an error (a feature it lacks
 * weighs 0), so the command says when the feature counts are far apart:
 * the data's more than twice the model's and 1000 more (a test set may
 * well have a few features the training set lacked), or the model's more
 * than 100 times the data's and 1000 more (a small file may use few of a
 * large model's features, but not that few). One line; predictions go on. */
static void warn_feature_space(const hog_model *m, const hog_data *d,
                               const char *path)
{
    uint64_t mf = hog_model_features(m), df = hog_data_features(d);
    if ((df > 2 * mf && df - mf >= 1000) || (mf > 100 * df && mf - df >= 1000))
        fprintf(stderr, "hogtrain: warning: the model has %llu features but "
                        "%s has %llu: was it trained on other data? "
                        "(predictions go on)\n",
                (unsigned long long)mf,
                strcmp(path, "-") == 0 ? "standard input"
                                       : hog_cli_basename(path),
                (unsigned long long)df);
}

int hog_cli_predict(int argc, char **argv)
{
    struct predict_args a = { 0 };
    int rc = parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    hog_err err = { { 0 } };
    hog_status s;
    hog_model *m = NULL;
    hog_data *d = NULL;
    double *sc = NULL;
    FILE *f = NULL;
    char tmp[4200];

    if ((s = hog_cli_load_model_data(a.model, a.data, a.out, &a.lo, false,
                                     a.quiet, &m, &d, &err)) != HOG_OK)
        goto fail;
    if (!a.quiet)
        warn_feature_space(m, d, a.data);
    uint64_t rows = hog_data_rows(d);
    sc = malloc((rows ? rows : 1) * sizeof *sc);
    if (!sc) {
        s = hog_errf(&err, HOG_ENOMEM, "out of memory for %llu scores",
                     (unsigned long long)rows);
        goto fail;
    }
    if ((s = hog_model_scores(m, d, sc, &err)) != HOG_OK)
        goto fail;
    if (a.out) {
        if ((s = hog_tmpfile_open(a.out, tmp, sizeof tmp, &f, &err)) != HOG_OK)
            goto fail;
        write_predictions(f, m, sc, rows, a.scores);
        s = hog_tmpfile_commit(f, tmp, a.out, &err);
        f = NULL;
        if (s != HOG_OK)
            goto fail;
    } else {
        write_predictions(stdout, m, sc, rows, a.scores);
        if ((s = hog_cli_stdout_check(&err)) != HOG_OK)
            goto fail;
    }
    if (!a.quiet)
        report(m, d, sc);
    rc = HOG_EXIT_OK;
    goto out;
fail:
    rc = hog_cli_fail_status(s, &err);
out:
    free(sc);
    hog_data_free(d);
    hog_model_free(m);
    return rc;
}
