/* hogtrain info: what a data, model or checkpoint file holds, told apart
 * by content (hog_file_kind, src/io/input.c). */
#include "cli/cli.h"

#include "core/loss.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

enum { OPT_WEIGHTS = HOG_CLI_OPT_OWN, OPT_TOP, OPT_JSON, OPT_NAMES };

static const struct option longopts[] = {
    { "help", no_argument, NULL, 'h' },
    { "weights", no_argument, NULL, OPT_WEIGHTS },
    { "top", required_argument, NULL, OPT_TOP },
    { "json", no_argument, NULL, OPT_JSON },
    { "names", required_argument, NULL, OPT_NAMES },
    HOG_CLI_LOAD_OPTIONS,
    { NULL, 0, NULL, 0 },
};

static const char help[] =
    "\n"
    "Describes each FILE on standard output. Data (LIBSVM or Vowpal Wabbit\n"
    "text, plain or compressed with gzip, xz or zstd, or .hgb): rows,\n"
    "features, nonzeros, density, labels and their counts, the format (and\n"
    "compression), the hashing and its collisions, and the .hgb header.\n"
    "Models (.hgm or LIBLINEAR text): loss, regularization, features,\n"
    "nonzero weights, bias and label values, the hashing of the features;\n"
    "for K classes their number, labels and the multiclass mode.\n"
    "Checkpoints: the run they belong to (algorithm, loss, step size,\n"
    "regularization, seed, the data) and where it stands (epoch, row, step).\n"
    "\n"
    "      --weights       list each MODEL's nonzero weights instead, one\n"
    "                      feature a line: its index (hashed models: the\n"
    "                      weight, 0 to 2^B - 1; LIBSVM: 1-based unless\n"
    "                      --zero-based), one column per class, its names,\n"
    "                      and the bias last. Names: those the model kept\n"
    "                      (train --keep-names: every Vowpal Wabbit name\n"
    "                      hashed there, collisions included, as\n"
    "                      namespace^name), or --names FILE's\n"
    "      --top N         with --weights: the N largest |w| (K classes:\n"
    "                      the largest over the classes), largest first\n"
    "      --json          with --weights: a JSON document (index, names,\n"
    "                      weights: one array per class, bias, loss,\n"
    "                      hashing, classes)\n"
    "      --names FILE    with --weights: the names of a LIBSVM-indexed\n"
    "                      model's features, lines 'INDEX [...] NAME' (the\n"
    "                      last field; '#' lines skipped)\n"
    HOG_CLI_LOAD_HELP
    "\n"
    HOG_CLI_EXIT_HELP;

static const struct hog_cli_cmd cmd = {
    "info",
    "hogtrain info [options] FILE...\n"
    "       hogtrain info --weights [--top N] [--json] [--names FILE] MODEL...",
    NULL,
    help,
};


#define ROW(key, ...)                                                         \
    do {                                                                      \
        printf("%-16s ", key);                                                \
        printf(__VA_ARGS__);                                                  \
        putchar('\n');                                                        \
    } while (0)

static void labels_row(const hog_data *d)
{
    uint64_t rows = d->m.rows;
    if (!rows) {
        ROW("labels", "none (no rows)");
        return;
    }
    if (d->labels == HOG_LABELS_BINARY) {
        uint64_t neg = rows - d->n_pos;
        ROW("labels", "binary: %g (%llu rows, %.2f%%), %g (%llu rows, %.2f%%)",
            d->label_pos, (unsigned long long)d->n_pos,
            100.0 * (double)d->n_pos / (double)rows, d->label_neg,
            (unsigned long long)neg, 100.0 * (double)neg / (double)rows);
        return;
    }
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    for (uint64_t i = 0; i < rows; i++) {
        double y = d->m.y[i];
        lo = y < lo ? y : lo;
        hi = y > hi ? y : hi;
        sum += y;
    }
    ROW("labels", "real-valued: min %g, max %g, mean %.4g", lo, hi,
        sum / (double)rows);
}

/* The .hgb header: version, chunks, and the text file it was made from. */
static void hgb_rows(const char *path)
{
    struct hog_hgb_info h;
    hog_err err = { { 0 } };
    if (hog_hgb_open_info(path, &h, &err) != HOG_OK) {
        ROW("format", "hogtrain binary cache (.hgb; header unreadable: %s)",
            err.msg);
        return;
    }
    ROW("format", "hogtrain binary cache (.hgb version %u)", h.version);
    char b[32];
    ROW("chunks", "%llu (largest %s)", (unsigned long long)h.n_chunks,
        hog_cli_bytes(b, sizeof b, (double)h.max_chunk_bytes));
    if (h.src_size || h.src_mtime) {
        char when[64] = "?";
        time_t t = (time_t)h.src_mtime;
        struct tm tm;
        if (gmtime_r(&t, &tm))
            strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
        ROW("source", "%llu bytes, modified %s",
            (unsigned long long)h.src_size, when);
    } else {
        ROW("source", "not recorded");
    }
    hog_hgb_info_close(&h);
}

static int info_data(const char *path, enum hog_file_kind k, const struct stat *st,
                     const hog_load_opts *lo)
{
    hog_err err = { { 0 } };
    hog_data *d = NULL;
    hog_status s = hog_data_load(path, lo, &d, &err);
    if (s != HOG_OK)
        return hog_cli_fail_status(s, &err);
    char b[32];
    uint64_t rows = hog_data_rows(d), nf = hog_data_features(d),
             nnz = hog_data_nnz(d);
    ROW("file", "%s", path);
    bool vw = hog_data_format(d) == HOG_FORMAT_VW;
    const char *what = vw ? "Vowpal Wabbit text" : "LIBSVM text";
    const char *base = vw ? "" : lo->zero_based ? " (0-based feature indices)"
                                                : " (1-based feature indices)";
    if (k == HOG_FILE_HGB)
        hgb_rows(path);
    else if (k == HOG_FILE_TEXT)
        ROW("format", "%s%s", what, base);
    else /* decompressed by the loader */
        ROW("format", "%s, %s%s", what, hog_file_kind_name(k), base);
    ROW("size", "%s (%llu bytes)", hog_cli_bytes(b, sizeof b, (double)st->st_size),
        (unsigned long long)st->st_size);
    ROW("rows", "%llu", (unsigned long long)rows);
    ROW("features", "%llu", (unsigned long long)nf);
    ROW("nonzeros", "%llu", (unsigned long long)nnz);
    if (rows && nf)
        ROW("density", "%.4g%% (%.2f nonzeros per row)",
            100.0 * (double)nnz / ((double)rows * (double)nf),
            (double)nnz / (double)rows);
    labels_row(d);
    hog_hashing h = { .size = sizeof h };
    hog_data_hashing(d, &h);
    if (h.bits)
        ROW("hashing", "--hash-bits %u --hash-seed %u: %llu weights, %llu "
            "shared by two or more features, %llu entries merged in rows",
            h.bits, h.seed, (unsigned long long)(UINT64_C(1) << h.bits),
            (unsigned long long)h.collisions, (unsigned long long)h.merged);
    else
        ROW("hashing", "none");
    uint64_t weighted = hog_cli_importance_rows(d);
    if (weighted)
        ROW("importance", "%llu rows weighted other than 1 (train takes "
            "them as row weights)", (unsigned long long)weighted);
    hog_data_free(d);
    return HOG_EXIT_OK;
}

/* K classes: how many, their labels in the model's order (the first
 * eight and the last two when there are more than ten), and how they were
 * trained. */
static void classes_rows(const hog_model *m)
{
    char list[512];
    ROW("classes", "%u: %s", m->n_classes,
        hog_cli_labels(list, sizeof list, m->classes, m->n_classes, 8));
    if (m->multiclass == HOG_MULTICLASS_SOFTMAX)
        ROW("multiclass", "softmax (multinomial logistic regression), %u "
                          "weight vectors", m->n_classes);
    else
        ROW("multiclass", "one-vs-rest, %u weight vectors", m->n_classes);
}

/* K classes: one bias weight per class, summarised by their range. */
static void bias_row_classes(const hog_model *m)
{
    uint64_t len = hog_model_vector_len(m);
    double lo = INFINITY, hi = -INFINITY;
    for (uint32_t c = 0; c < m->n_classes; c++) {
        double b = (double)m->w[c * len + m->n_features] * m->bias;
        lo = b < lo ? b : lo;
        hi = b > hi ? b : hi;
    }
    ROW("bias", "one per class, from %.6g to %.6g (weights times bias "
                "feature %g)",
        lo, hi, m->bias);
}

static int info_model(const char *path, enum hog_file_kind k,
                      const struct stat *st)
{
    hog_err err = { { 0 } };
    hog_model *m = NULL;
    hog_status s = hog_model_load(path, &m, &err);
    if (s != HOG_OK)
        return hog_cli_fail_status(s, &err);
    uint64_t nf = hog_model_features(m), nz = 0;
    const float *w = hog_model_weights(m);
    double l2 = 0, l1 = 0;
    /* Counted as training counts them: the bias weight is a weight; K
     * classes: every class's. */
    uint64_t nw = hog_model_len(m);
    for (uint64_t j = 0; j < nw; j++) {
        nz += w[j] != 0.0f;
        l2 += (double)w[j] * w[j];
        l1 += fabs((double)w[j]);
    }
    char b[32];
    ROW("file", "%s", path);
    ROW("format", "%s", k == HOG_FILE_HGM ? "hogtrain model (.hgm)"
                                          : "LIBLINEAR text model");
    ROW("size", "%s (%llu bytes)", hog_cli_bytes(b, sizeof b, (double)st->st_size),
        (unsigned long long)st->st_size);
    if (hog_loss_rows[m->loss].param == HOG_LOSS_PARAM_NONE)
        ROW("loss", "%s", hog_cli_loss_name(hog_model_loss(m)));
    else
        ROW("loss", "%s (%s %g)", hog_cli_loss_name(hog_model_loss(m)),
            hog_loss_rows[m->loss].param == HOG_LOSS_PARAM_TAU
                ? "quantile tau" : "epsilon",
            hog_model_loss_param(m));
    if (isfinite(m->l1) && isfinite(m->l2))
        ROW("regularization", "l1 %g, l2 %g", m->l1, m->l2);
    else
        ROW("regularization", "not recorded in this format");
    ROW("features", "%llu", (unsigned long long)nf);
    if (hog_model_hash_bits(m))
        ROW("hashing", "--hash-bits %u --hash-seed %u (predict hashes the "
            "data alike)", hog_model_hash_bits(m), hog_model_hash_seed(m));
    else
        ROW("hashing", "none");
    if (hog_model_interactions(m))
        ROW("interactions", "%s (predict crosses the data alike)",
            hog_model_interactions(m));
    if (m->n_classes)
        classes_rows(m);
    ROW("nonzero weights", "%llu of %llu%s (%.2f%%)", (unsigned long long)nz,
        (unsigned long long)nw,
        m->bias == 0.0 ? ""
        : m->n_classes ? ", the bias weights included"
                       : ", bias included",
        nw ? 100.0 * (double)nz / (double)nw : 0.0);
    ROW("weight norms", "|w|_1 %.6g, |w|_2 %.6g", l1, sqrt(l2));
    if (m->bias != 0.0 && m->n_classes)
        bias_row_classes(m);
    else if (m->bias != 0.0)
        ROW("bias", "%.6g (weight %.6g times bias feature %g)",
            hog_model_bias(m), (double)w[nf], m->bias);
    else
        ROW("bias", "none");
    if (m->n_classes)
        ROW("labels", "the class of the highest of the %u scores",
            m->n_classes);
    else if (m->labels == HOG_LABELS_BINARY &&
             hog_model_loss(m) != HOG_LOSS_SQUARED)
        ROW("labels", "%g if score > 0, else %g", m->label_pos, m->label_neg);
    else
        ROW("labels", "real-valued (regression)");
    hog_model_free(m);
    return HOG_EXIT_OK;
}

/* A checkpoint: what run it belongs to and where that run stands, as
 * far as the file records it (the header of src/io/checkpoint.c). */
static int info_ckpt(const char *path, const struct stat *st)
{
    hog_err err = { { 0 } };
    struct hog_ckpt c;
    hog_status s = hog_ckpt_load(path, &c, &err);
    if (s != HOG_OK)
        return hog_cli_fail_status(s, &err);
    const struct hog_train_state *t = &c.st;
    uint64_t nz = 0;
    for (uint64_t j = 0; j < t->n_weights; j++)
        nz += t->w[j] != 0.0f;
    char b[32];
    ROW("file", "%s", path);
    /* the writer's numbering: 3 for one-vs-rest's class part */
    ROW("format", "hogtrain checkpoint (version %u)",
        t->n_classes ? 3u : c.opts_known ? 2u : 1u);
    ROW("size", "%s (%llu bytes)", hog_cli_bytes(b, sizeof b, (double)st->st_size),
        (unsigned long long)st->st_size);
    ROW("algorithm", "%s", hog_cli_algo_name((hog_algo)c.algo));
    ROW("loss", "%s", hog_cli_loss_name((hog_loss)c.loss));
    if (c.schedule == HOG_SCHED_INVSCALING)
        ROW("step size", "%s, eta %g, power %g",
            hog_cli_schedule_name((hog_schedule)c.schedule), c.eta, c.power);
    else
        ROW("step size", "%s, eta %g",
            hog_cli_schedule_name((hog_schedule)c.schedule), c.eta);
    ROW("regularization", "l1 %g, l2 %g", c.l1, c.l2);
    if (c.bias != 0.0)
        ROW("bias", "feature value %g", c.bias);
    else
        ROW("bias", "none");
    ROW("seed", "%llu", (unsigned long long)c.seed);
    ROW("data", "%llu rows, %llu nonzeros, %llu features (CRC32C %08x)",
        (unsigned long long)c.rows, (unsigned long long)c.nnz,
        (unsigned long long)c.n_features, (unsigned)c.data_crc);
    if (c.weighted)
        ROW("row weights", "yes (CRC32C %08x)", (unsigned)c.weights_crc);
    else
        ROW("row weights", "none");
    if (t->pos >= c.rows)
        ROW("position", "after epoch %llu (step %llu)",
            (unsigned long long)t->epoch, (unsigned long long)t->t_global);
    else
        ROW("position", "epoch %llu, row %llu of %llu (step %llu)",
            (unsigned long long)t->epoch, (unsigned long long)t->pos,
            (unsigned long long)c.rows, (unsigned long long)t->t_global);
    ROW("weights", "%llu, %llu nonzero", (unsigned long long)t->n_weights,
        (unsigned long long)nz);
    if (c.softmax)
        ROW("multiclass", "softmax: the weights are the classes' vectors, "
            "one after another");
    else if (t->n_classes)
        ROW("multiclass", "one-vs-rest of %u classes: %u finished, class %u "
            "running", t->n_classes, t->ovr_class, t->ovr_class + 1);
    if (c.schedule == HOG_SCHED_FTRL) /* its sums where SGD's would be */
        ROW("state", "FTRL sums (z and sqrt(n))%s",
            t->ftrl_z && t->ftrl_sqrt_n ? "" : ", incomplete");
    else
        ROW("state", "%s%s",
            t->adagrad_g2 ? "AdaGrad sums" : "no AdaGrad sums",
            t->w_lazy ? ", inside a lazy-regularization segment" : "");
    if (c.ckpt_rows)
        ROW("written every", "%llu rows", (unsigned long long)c.ckpt_rows);
    else
        ROW("written every", "%u epoch%s", c.ckpt_epochs,
            c.ckpt_epochs == 1 ? "" : "s");
    if (!c.opts_known)
        ROW("options", "not recorded (version 1)");
    else if (c.algo == HOG_ALGO_CYCLADES)
        ROW("options", "--batch-size %llu%s, hot features %s",
            (unsigned long long)c.batch_size,
            c.repartition ? ", --repartition" : "", c.cyc_hot ? "on" : "off");
    else if (c.algo == HOG_ALGO_HOGWILD)
        ROW("options", "--replicas %s, --hot %llu, --sync-every %llu",
            hog_cli_replicas_name((hog_replicas)c.replicas),
            (unsigned long long)c.hot_count, (unsigned long long)c.sync_every);
    ROW("training loss", "not recorded in checkpoints");
    hog_ckpt_free(&c);
    return HOG_EXIT_OK;
}

int hog_cli_info(int argc, char **argv)
{
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    struct hog_cli_parser op;
    hog_cli_parser_init(&op, &cmd, "h", longopts);
    op.load = &lo;
    int ch, rc;
    bool weights = false;
    struct hog_cli_weights wo = { 0 };
    while ((ch = hog_cli_getopt(&op, argc, argv)) > 0) {
        switch (ch) {
        case OPT_WEIGHTS: weights = true; break;
        case OPT_JSON: wo.json = true; break;
        case OPT_NAMES: wo.names = optarg; break;
        case OPT_TOP:
            if ((rc = hog_cli_opt_u64(&cmd, "top", optarg, 1, UINT64_MAX,
                                      &wo.top, "a number of weights (1 or "
                                      "more)")) != HOG_EXIT_OK)
                return rc;
            break;
        default: return hog_cli_bad_option(&cmd, ch, argv);
        }
    }
    if (ch < 0)
        return op.status;
    if (optind >= argc)
        return hog_cli_usage_error(&cmd, "missing the FILE to describe");
    if (!weights && (wo.top || wo.json || wo.names))
        return hog_cli_usage_error(&cmd, "--top, --json and --names apply "
                                   "to --weights");
    rc = HOG_EXIT_OK;
    wo.zero_based = lo.zero_based != 0;
    for (int i = optind; weights && i < argc; i++) {
        int r = hog_cli_info_weights(argv[i], &wo);
        rc = r != HOG_EXIT_OK ? r : rc;
        hog_err err = { { 0 } };
        hog_status s = hog_cli_stdout_check(&err);
        if (s != HOG_OK)
            return hog_cli_fail_status(s, &err);
    }
    if (weights)
        return rc;
    for (int i = optind; i < argc; i++) {
        const char *path = argv[i];
        hog_err err = { { 0 } };
        struct stat st;
        enum hog_file_kind k = HOG_FILE_TEXT;
        hog_status s;
        if (i > optind)
            putchar('\n');
        if (stat(path, &st) != 0) {
            s = hog_errf(&err, HOG_EIO, "%s: %s", path, strerror(errno));
            rc = hog_cli_fail_status(s, &err);
            continue;
        }
        if ((s = hog_file_kind_of(path, &k, &err)) != HOG_OK) {
            rc = hog_cli_fail_status(s, &err);
            continue;
        }
        /* Anything else is data; the loader names what is not. */
        int r = k == HOG_FILE_HGM || k == HOG_FILE_LIBLINEAR
                    ? info_model(path, k, &st)
                : k == HOG_FILE_CKPT ? info_ckpt(path, &st)
                                     : info_data(path, k, &st, &lo);
        if (r != HOG_EXIT_OK)
            rc = r;
        /* Each file's description out before the next is read; a failed
         * write stops here with its reason (main's check would only see
         * the error flag). */
        if ((s = hog_cli_stdout_check(&err)) != HOG_OK)
            return hog_cli_fail_status(s, &err);
    }
    return rc;
}
