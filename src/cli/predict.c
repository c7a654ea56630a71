/* hogtrain predict: labels (or scores) for every row of a data file, and
 * the accuracy, macro-F1 and confusion matrix (classification) or RMSE
 * (regression) when the file's labels can be compared.
 *
 * The rows are scored a block at a time, so that a K-class model's scores
 * take K doubles a row of the block only; each block's predictions are
 * written and counted before the next is scored. */
#include "cli/cli.h"

#include "core/loss.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { OPT_SCORES = HOG_CLI_OPT_OWN, OPT_CONFUSION, OPT_PROBABILITIES };

/* What a row's line holds. */
enum out_kind { OUT_LABELS, OUT_SCORES, OUT_PROBABILITIES };

/* Rows scored at a time. */
#define BLOCK_ROWS 4096u
/* The most classes --confusion prints a table of (K x K counts). */
#define CONFUSION_MAX_CLASSES 1000u
/* Unknown labels named in the warning. */
#define UNSEEN_SHOWN 5u

static const struct option longopts[] = {
    { "output", required_argument, NULL, 'o' },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { "scores", no_argument, NULL, OPT_SCORES },
    { "confusion", no_argument, NULL, OPT_CONFUSION },
    { "probabilities", no_argument, NULL, OPT_PROBABILITIES },
    HOG_CLI_LOAD_OPTIONS,
    { NULL, 0, NULL, 0 },
};

static const char help[] =
    "\n"
    "Writes one line per row of DATA (LIBSVM or Vowpal Wabbit text, or .hgb;\n"
    "'-' reads standard input as it comes: each row answered once its line\n"
    "is read, flushed at once into a pipe), hashed as the model's training data was\n"
    "(.hgm records it; --hash-bits, if given, must be the model's): the\n"
    "predicted label, in the label values the model was trained\n"
    "with (for K classes the label of the class with the highest score), or\n"
    "for a regression model the predicted value. MODEL is a .hgm or a\n"
    "LIBLINEAR text model. When DATA's labels are the model's, prints the\n"
    "accuracy (classification; K classes also the macro-F1) or RMSE\n"
    "(regression) on standard error. A K-class model counts a row whose label\n"
    "is none of its classes as wrong, and says so in one warning line. Rows\n"
    "without a label (LIBSVM: the first token is index:value; VW: nothing\n"
    "before the '|') are scored and not counted.\n"
    "\n"
    "  -o, --output FILE   write the predictions to FILE (default: standard output)\n"
    "      --scores        write the raw score w.x + b instead of the label; K\n"
    "                      classes: a line 'labels L1 ... LK' first, then the K\n"
    "                      scores of each row in that order\n"
    "      --probabilities logistic, softmax and modified Huber models: a\n"
    "                      line 'labels L1 ...' first, then per row the\n"
    "                      predicted label and each\n"
    "                      class's probability (liblinear-predict -b 1's\n"
    "                      layout; binary: the positive label first)\n"
    "      --confusion     print the confusion matrix on standard error (rows:\n"
    "                      true label, columns: predicted), with the accuracy\n"
    "                      and macro-F1; DATA must be labelled\n"
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
    bool confusion, quiet;
    enum out_kind kind;
    hog_load_opts lo;
};

static int parse(int argc, char **argv, struct predict_args *a)
{
    hog_load_opts_init(&a->lo);
    a->lo.unlabelled = 1; /* scored; the metrics count the labelled rows */
    int ch, rc;
    struct hog_cli_parser op;
    hog_cli_parser_init(&op, &cmd, "o:qh", longopts);
    op.load = &a->lo;
    while ((ch = hog_cli_getopt(&op, argc, argv)) > 0) {
        switch (ch) {
        case 'o': a->out = optarg; break;
        case 'q': a->quiet = true; break;
        case OPT_SCORES:
        case OPT_PROBABILITIES:
            if (a->kind != OUT_LABELS)
                return hog_cli_usage_error(&cmd, "--scores and "
                                           "--probabilities: give one");
            a->kind = ch == OPT_SCORES ? OUT_SCORES : OUT_PROBABILITIES;
            break;
        case OPT_CONFUSION: a->confusion = true; break;
        default:
            return hog_cli_bad_option(&cmd, '?', argv);
        }
    }
    if (ch < 0)
        return op.status;
    if (a->confusion && a->quiet)
        return hog_cli_usage_error(&cmd, "--confusion prints a report and "
                                   "--quiet none: give one of them");
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
    return !m->n_classes &&
           (m->labels == HOG_LABELS_REAL ||
            !hog_loss_is_classification(m->loss));
}

static const char *data_name(const char *path)
{
    return strcmp(path, "-") == 0 ? "standard input" : hog_cli_basename(path);
}

/* ---- what the labels say ------------------------------------------------------ */

/* The predictions counted against the labels: per class for
 * classification (the K classes, or a binary model's positive and
 * negative label), the squared error for regression. */
struct tally {
    uint32_t k;                /* classes; 0: regression */
    const double *labels;      /* the k labels, in the model's order */
    double pair[2];            /* a binary model's: positive, negative */
    struct hog_class_index ix;
    uint64_t rows, right, unknown;
    uint64_t unlabelled;       /* rows without a label: scored, not counted */
    uint64_t *tp, *predicted, *actual; /* per class */
    uint64_t *conf;            /* --confusion: (k + 1) x k counts [true][predicted],
                                  row k for labels that are no class */
    double unseen[UNSEEN_SHOWN];
    unsigned n_unseen;
    bool more_unseen;
    double se;
};

static hog_status tally_init(struct tally *t, const hog_model *m,
                             bool confusion, hog_err *err)
{
    memset(t, 0, sizeof *t);
    if (is_regression(m))
        return HOG_OK;
    t->k = m->n_classes ? m->n_classes : 2;
    t->pair[0] = m->label_pos;
    t->pair[1] = m->label_neg;
    t->labels = m->n_classes ? m->classes : t->pair;
    hog_status s = hog_class_index_init(&t->ix, t->labels, t->k, err);
    if (s != HOG_OK)
        return s;
    t->tp = calloc(3 * (size_t)t->k, sizeof *t->tp);
    if (confusion)
        t->conf = calloc(((size_t)t->k + 1) * t->k, sizeof *t->conf);
    if (!t->tp || (confusion && !t->conf))
        return hog_errf(err, HOG_ENOMEM, "out of memory for the counts of %u "
                        "classes", t->k);
    t->predicted = t->tp + t->k;
    t->actual = t->predicted + t->k;
    return HOG_OK;
}

static void tally_free(struct tally *t)
{
    if (t->k)
        hog_class_index_free(&t->ix);
    free(t->tp);
    free(t->conf);
}

/* A row labelled y whose predicted class is p (classification). */
static void tally_class(struct tally *t, double y, uint32_t p)
{
    if (isnan(y)) {
        t->unlabelled++;
        return;
    }
    int64_t c = hog_class_index_find(&t->ix, y);
    t->rows++;
    t->predicted[p]++;
    if (c >= 0) {
        t->actual[c]++;
        if ((uint32_t)c == p) {
            t->tp[c]++;
            t->right++;
        }
    } else {
        t->unknown++;
        bool seen = false;
        for (unsigned i = 0; i < t->n_unseen; i++)
            seen |= t->unseen[i] == y;
        if (!seen && t->n_unseen < UNSEEN_SHOWN)
            t->unseen[t->n_unseen++] = y;
        else if (!seen)
            t->more_unseen = true;
    }
    if (t->conf)
        t->conf[(uint64_t)(c >= 0 ? (uint32_t)c : t->k) * t->k + p]++;
}

/* The macro-averaged F1 as training reports it (src/core/metrics.c):
 * 2 tp / (predicted + actual) per class, 0 for a class neither predicted
 * nor present. */
static double tally_macro_f1(const struct tally *t)
{
    double f1 = 0;
    for (uint32_t c = 0; c < t->k; c++) {
        uint64_t den = t->predicted[c] + t->actual[c];
        f1 += den ? 2.0 * (double)t->tp[c] / (double)den : 0.0;
    }
    return f1 / t->k;
}

/* Rows of d whose label is one of the tally's classes. */
static uint64_t rows_with_a_class(const struct tally *t, const hog_data *d)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < d->m.rows; i++)
        n += hog_class_index_find(&t->ix, d->m.y[i]) >= 0;
    return n;
}

/* ---- predictions ------------------------------------------------------------------ */

/* The predictions of rows [lo, lo + n) of d, scores sc, written to f and
 * counted in t. names: the K classes' labels as text. */
static void write_block(FILE *f, const hog_model *m, const hog_data *d,
                        uint64_t lo, uint64_t n, const double *sc,
                        const double *pr, char (*names)[40],
                        enum out_kind kind, struct tally *t)
{
    uint32_t k = m->n_classes;
    bool reg = is_regression(m), scores = kind == OUT_SCORES;
    for (uint64_t i = 0; i < n; i++) {
        double y = d->m.y[lo + i];
        if (kind == OUT_PROBABILITIES) {
            /* the predicted label, then each class's probability */
            uint32_t kk = k ? k : 2;
            const double *p = pr + i * kk;
            uint32_t c = k ? hog_scores_argmax(sc + i * k, k)
                           : sc[i] > 0 ? 0 : 1;
            fputs(names[c], f);
            for (uint32_t q = 0; q < kk; q++)
                fprintf(f, " %.9g", p[q]);
            fputc('\n', f);
            tally_class(t, y, c);
        } else if (k) {
            const double *s = sc + i * k;
            uint32_t p = hog_scores_argmax(s, k);
            if (scores)
                for (uint32_t c = 0; c < k; c++)
                    fprintf(f, c + 1 < k ? "%.9g " : "%.9g\n", s[c]);
            else
                fprintf(f, "%s\n", names[p]);
            tally_class(t, y, p);
        } else if (reg) {
            /* the prediction: exp(score) under the Poisson loss */
            double v = hog_loss_predict(m->loss, sc[i]);
            fprintf(f, "%.9g\n", scores ? sc[i] : v);
            if (isnan(y)) {
                t->unlabelled++;
                continue;
            }
            t->se += (v - y) * (v - y);
            t->rows++;
        } else {
            if (scores)
                fprintf(f, "%.9g\n", sc[i]);
            else
                fprintf(f, "%g\n", sc[i] > 0 ? m->label_pos : m->label_neg);
            tally_class(t, y, sc[i] > 0 ? 0 : 1);
        }
    }
}

/* What scoring a block needs: its scores and probabilities, and the
 * classes' labels as text. */
struct scorer {
    FILE *f;
    const hog_model *m;
    enum out_kind kind;
    struct tally *t;
    double *sc, *pr;
    char (*names)[40];
};

static void scorer_free(struct scorer *w)
{
    free(w->pr);
    free(w->sc);
    free(w->names);
}

/* The buffers, and the header line of the K scores or the probabilities. */
static hog_status scorer_init(struct scorer *w, FILE *f, const hog_model *m,
                              enum out_kind kind, struct tally *t, hog_err *err)
{
    uint32_t k = m->n_classes;
    uint64_t per_row = k ? k : 1, named = k ? k : 2;
    bool probs = kind == OUT_PROBABILITIES;
    *w = (struct scorer){ f, m, kind, t, NULL, NULL, NULL };
    w->sc = malloc(BLOCK_ROWS * per_row * sizeof *w->sc);
    w->pr = probs ? malloc(BLOCK_ROWS * named * sizeof *w->pr) : NULL;
    w->names = malloc(named * sizeof *w->names);
    if (!w->sc || !w->names || (probs && !w->pr)) {
        scorer_free(w);
        return hog_errf(err, HOG_ENOMEM, "out of memory for the scores of "
                        "%u classes", k);
    }
    for (uint32_t c = 0; c < k; c++)
        hog_cli_label(w->names[c], sizeof w->names[c], m->classes[c]);
    if (!k) { /* binary: the positive label first, as the probabilities */
        hog_cli_label(w->names[0], sizeof w->names[0], m->label_pos);
        hog_cli_label(w->names[1], sizeof w->names[1], m->label_neg);
    }
    if ((k && kind == OUT_SCORES) || probs) {
        fputs("labels", f);
        for (uint32_t c = 0; c < named; c++)
            fprintf(f, " %s", w->names[c]);
        fputc('\n', f);
    }
    return HOG_OK;
}

/* Scores every row of d a block at a time; writes and counts them. */
static hog_status predict_rows(struct scorer *w, const hog_data *d,
                               hog_err *err)
{
    bool probs = w->kind == OUT_PROBABILITIES;
    for (uint64_t lo = 0; lo < d->m.rows; lo += BLOCK_ROWS) {
        uint64_t n = d->m.rows - lo < BLOCK_ROWS ? d->m.rows - lo : BLOCK_ROWS;
        /* a view of the block's rows: the offsets stay global */
        hog_data view = *d;
        view.m.rows = n;
        view.m.off = d->m.off + lo;
        view.m.y = d->m.y + lo;
        hog_status s = hog_model_scores(w->m, &view, w->sc, err);
        if (s == HOG_OK && probs)
            s = hog_model_probabilities(w->m, &view, w->pr, err);
        if (s != HOG_OK)
            return s;
        write_block(w->f, w->m, d, lo, n, w->sc, w->pr, w->names, w->kind,
                    w->t);
    }
    return HOG_OK;
}

/* ---- standard input, as it comes ------------------------------------------------ */

/* The rows parsed so far: scored, written, counted and freed. */
static hog_status score_taken(struct scorer *w, struct hog_svm_parser *p,
                              const struct predict_args *a, uint64_t *rows,
                              hog_err *err)
{
    hog_data *d = NULL;
    hog_status s = hog_svm_parser_take(p, &d, err);
    if (s == HOG_OK && d && *rows == 0)
        s = hog_cli_hashing_check(a->model, w->m, data_name(a->data), d, err);
    if (s == HOG_OK && d) {
        *rows += d->m.rows;
        s = predict_rows(w, d, err);
    }
    hog_data_free(d);
    return s;
}

/* predict MODEL -: standard input read as it comes, its whole lines
 * parsed, scored and written before more is read. The read-ahead reader
 * (io's, the loader's own: decompression, NUL bytes, the longest line) at
 * a window of one byte hands over each read's whole lines at once; each
 * answer is flushed at once when the output is no regular file (a pipe:
 * `tail -f log | hogtrain predict m.hgm - | ...`). */
static hog_status predict_stream(struct scorer *w, const struct predict_args *a,
                                 bool flush, hog_err *err)
{
    struct hog_input in;
    struct hog_text_reader *r = NULL;
    struct hog_svm_parser *p = NULL;
    uint64_t rows = 0;
    hog_status s = hog_input_open("-", &in, err);
    if (s != HOG_OK)
        return s;
    if ((s = hog_input_sniff(&in, err)) != HOG_OK)
        goto out;
    if (in.kind == HOG_FILE_HGB) {
        s = hog_errf(err, HOG_EINVAL, "%s: a .hgb file can only be read from "
                     "a path, not a pipe", in.name);
        goto out;
    }
    if ((s = hog_text_reader_open(&in, 1, &r, err)) != HOG_OK ||
        (s = hog_svm_parser_create(in.name, &a->lo, &p, err)) != HOG_OK)
        goto out;
    for (;;) {
        const char *text;
        size_t len;
        if ((s = hog_text_reader_next(r, &text, &len, err)) != HOG_OK)
            goto out;
        if (!len)
            break;
        if ((s = hog_svm_parser_feed(p, text, len, err)) != HOG_OK ||
            (s = score_taken(w, p, a, &rows, err)) != HOG_OK)
            goto out;
        if (flush && fflush(w->f) != 0) {
            s = hog_cli_stdout_check(err);
            goto out;
        }
    }
    if (!rows)
        s = hog_errf(err, HOG_EPARSE, "%s: no rows", in.name);
out:
    hog_svm_parser_free(p);
    hog_text_reader_close(r);
    hog_input_close(&in);
    return s;
}

/* ---- reports on standard error ------------------------------------------------------ */

/* One line when some labels are none of the model's classes. */
static void warn_unseen(const struct tally *t, const char *path)
{
    char list[UNSEEN_SHOWN * 40 + 8] = "";
    size_t n = 0;
    for (unsigned i = 0; i < t->n_unseen; i++) {
        char one[40];
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "",
                              hog_cli_label(one, sizeof one, t->unseen[i]));
    }
    if (t->more_unseen)
        snprintf(list + n, sizeof list - n, ", ...");
    fprintf(stderr, "hogtrain: warning: %llu row%s of %s %s label%s the model "
                    "has no class for (%s): counted as wrong\n",
            (unsigned long long)t->unknown, t->unknown == 1 ? "" : "s",
            data_name(path), t->unknown == 1 ? "has a" : "have",
            t->unknown == 1 ? "" : "s", list);
}

static void print_scores_line(const struct tally *t)
{
    fprintf(stderr, "accuracy %.2f%% (%llu/%llu), macro-F1 %.4f\n",
            100.0 * (double)t->right / (double)t->rows,
            (unsigned long long)t->right, (unsigned long long)t->rows,
            tally_macro_f1(t));
}

struct label_at {
    double label;
    uint32_t c;
};

static int by_label(const void *a, const void *b)
{
    double x = ((const struct label_at *)a)->label,
           y = ((const struct label_at *)b)->label;
    return (x > y) - (x < y);
}

/* The confusion matrix as a table: a column per predicted label, a row
 * per true label, both in increasing label order, and a row "(unseen)"
 * for labels that are no class. */
static void print_confusion(const struct tally *t, const char *path)
{
    uint32_t k = t->k;
    char (*names)[40] = malloc(k * sizeof *names);
    struct label_at *order = malloc(k * sizeof *order);
    if (!names || !order) {
        free(names);
        free(order);
        fprintf(stderr, "hogtrain: out of memory for the confusion matrix\n");
        return;
    }
    for (uint32_t c = 0; c < k; c++)
        order[c] = (struct label_at){ t->labels[c], c };
    qsort(order, k, sizeof *order, by_label);
    const char *corner = "true\\pred", *other = "(unseen)";
    int w = 1, w0 = (int)strlen(corner);
    for (uint32_t c = 0; c < k; c++) {
        int l = (int)strlen(hog_cli_label(names[c], sizeof names[c],
                                          t->labels[c]));
        w = l > w ? l : w;
        w0 = l > w0 ? l : w0;
    }
    if (t->unknown)
        w0 = (int)strlen(other) > w0 ? (int)strlen(other) : w0;
    for (uint64_t i = 0; i < ((uint64_t)k + 1) * k; i++) {
        char num[24];
        int l = snprintf(num, sizeof num, "%llu", (unsigned long long)t->conf[i]);
        w = l > w ? l : w;
    }
    fprintf(stderr, "confusion matrix of %s, %llu rows (rows: true label, "
                    "columns: predicted)\n",
            data_name(path), (unsigned long long)t->rows);
    fprintf(stderr, "%*s", w0, corner);
    for (uint32_t j = 0; j < k; j++)
        fprintf(stderr, " %*s", w, names[order[j].c]);
    fputc('\n', stderr);
    for (uint32_t i = 0; i <= k; i++) {
        if (i == k && !t->unknown)
            break;
        uint32_t r = i < k ? order[i].c : k;
        fprintf(stderr, "%*s", w0, r < k ? names[r] : other);
        for (uint32_t j = 0; j < k; j++)
            fprintf(stderr, " %*llu", w,
                    (unsigned long long)t->conf[(uint64_t)r * k + order[j].c]);
        fputc('\n', stderr);
    }
    free(names);
    free(order);
}

/* Accuracy (and macro-F1, the matrix) or RMSE, when the labels allow. */
static void report(const hog_model *m, const struct tally *t, bool confusion,
                   const char *path)
{
    if (!t->rows)
        return;
    if (t->unlabelled)
        fprintf(stderr, "hogtrain: %llu row%s of %s without a label: scored, "
                "not counted\n", (unsigned long long)t->unlabelled,
                t->unlabelled == 1 ? "" : "s", data_name(path));
    if (!t->k) {
        fprintf(stderr, "RMSE %.4f (%llu rows)\n",
                sqrt(t->se / (double)t->rows), (unsigned long long)t->rows);
        return;
    }
    if (!confusion && !m->n_classes) {
        /* binary: labelled in other values, or unlabelled: no metric */
        if (!t->unknown)
            fprintf(stderr, "accuracy %.2f%% (%llu/%llu)\n",
                    100.0 * (double)t->right / (double)t->rows,
                    (unsigned long long)t->right, (unsigned long long)t->rows);
        return;
    }
    if (t->unknown == t->rows)
        return; /* an unlabelled file (--confusion refused it before) */
    if (t->unknown)
        warn_unseen(t, path);
    if (confusion)
        print_confusion(t, path);
    print_scores_line(t);
}

/* --confusion needs a classifier, a table that fits, and labels to count
 * (d NULL: not known yet, the stream's). */
static hog_status confusion_check(const struct predict_args *a,
                                  const hog_data *d, const struct tally *t,
                                  hog_err *err)
{
    if (!t->k)
        return hog_errf(err, HOG_EINVAL, "--confusion: %s is a regression "
                        "model; a confusion matrix needs classes", a->model);
    if (t->k > CONFUSION_MAX_CLASSES)
        return hog_errf(err, HOG_EINVAL, "--confusion prints a table of at "
                        "most %u classes; %s has %u", CONFUSION_MAX_CLASSES,
                        a->model, t->k);
    if (d && d->m.rows && rows_with_a_class(t, d) == 0) {
        char list[200];
        return hog_errf(err, HOG_EINVAL, "--confusion: no row of %s has a "
                        "label among the model's classes (%s): is it "
                        "labelled?", data_name(a->data),
                        hog_cli_labels(list, sizeof list, t->labels, t->k, 8));
    }
    return HOG_OK;
}

/* The predictions into f (standard output or the temporary file of -o):
 * of d, or of standard input as it comes when d is NULL. */
static hog_status predict_into(FILE *f, const struct predict_args *a,
                               const hog_model *m, const hog_data *d,
                               struct tally *t, hog_err *err)
{
    struct scorer w;
    hog_status s = scorer_init(&w, f, m, a->kind, t, err);
    if (s != HOG_OK)
        return s;
    struct stat sb;
    bool flush = fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode);
    s = d ? predict_rows(&w, d, err) : predict_stream(&w, a, flush, err);
    scorer_free(&w);
    return s;
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
    hog_outfile o;
    struct tally t;
    memset(&t, 0, sizeof t);
    /* standard input is answered as it comes (predict_stream) */
    bool stream = strcmp(a.data, "-") == 0;

    if ((s = hog_cli_load_model_data(a.model, a.data, a.out, &a.lo, false,
                                     a.quiet, &m, stream ? NULL : &d,
                                     &err)) != HOG_OK)
        goto fail;
    if (!a.quiet && d)
        hog_cli_warn_feature_space(hog_model_features(m),
                                   hog_data_features(d), a.data,
                                   "predictions go on");
    if (a.kind == OUT_PROBABILITIES &&
        ((m->loss != HOG_LOSS_LOGISTIC &&
          m->loss != HOG_LOSS_MODIFIED_HUBER) || is_regression(m))) {
        s = hog_errf(&err, HOG_EINVAL, "--probabilities: %s is a %s model; "
                     "probabilities come from logistic (and softmax) "
                     "models, whose scores are log-odds, and modified "
                     "Huber ones", a.model,
                     hog_cli_loss_name(m->loss));
        goto fail;
    }
    if ((s = tally_init(&t, m, a.confusion, &err)) != HOG_OK)
        goto fail;
    if (a.confusion && (s = confusion_check(&a, d, &t, &err)) != HOG_OK)
        goto fail;
    if (a.out) {
        if ((s = hog_outfile_open(&o, a.out, &err)) != HOG_OK)
            goto fail;
        s = predict_into(o.f, &a, m, d, &t, &err);
        if (s != HOG_OK) {
            hog_outfile_abort(&o);
            goto fail;
        }
        s = hog_outfile_commit(&o, &err);
        if (s != HOG_OK)
            goto fail;
    } else {
        if ((s = predict_into(stdout, &a, m, d, &t, &err)) != HOG_OK ||
            (s = hog_cli_stdout_check(&err)) != HOG_OK)
            goto fail;
    }
    if (!a.quiet)
        report(m, &t, a.confusion, a.data);
    rc = HOG_EXIT_OK;
    goto out;
fail:
    rc = hog_cli_fail_status(s, &err);
out:
    tally_free(&t);
    hog_data_free(d);
    hog_model_free(m);
    return rc;
}
