/* hogtrain train: load, train with progress, report, write the model.
 * The options are train_opts.c's, the scale-out train_net.c's and the
 * report train_report.c's (train.h). */
#include "cli/train.h"

#include "core/cross.h"

#include <stdlib.h>
#include <string.h>

static void quiet_log(void *ctx, const char *line)
{
    (void)ctx, (void)line;
}

/* The library's notices as it prints them itself, and with them what it
 * says only to a caller who listens (--algo auto's choice). */
static void said_log(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "hogtrain: %s\n", line);
}

/* The .hgb header of a file to stream, as a hog_data without arrays. */
static hog_status stream_header(const char *path, hog_data *d, hog_err *err)
{
    struct hog_hgb_info in;
    hog_status s = hog_hgb_open_info(path, &in, err);
    enum hog_file_kind kind;
    hog_err e2;
    /* Only text is worth converting; a damaged or newer .hgb, a compressed
     * file or a model keeps the reader's own sentence. */
    if (s != HOG_OK && hog_file_kind_of(path, &kind, &e2) == HOG_OK &&
        kind == HOG_FILE_TEXT)
        return hog_errf(err, s, "%s: --stream reads a .hgb file; make one "
                        "with: hogtrain convert %s %s.hgb", path, path, path);
    if (s != HOG_OK)
        return s;
    memset(d, 0, sizeof *d);
    d->m.rows = in.rows;
    d->m.nnz = in.nnz;
    d->n_features = in.n_features;
    d->labels = in.labels;
    d->label_pos = in.label_pos;
    d->label_neg = in.label_neg;
    d->n_pos = in.n_pos;
    d->hash = in.hash;
    hog_hgb_info_close(&in);
    return HOG_OK;
}

/* --interactions naming a namespace the training data never has: its
 * terms cross nothing, which is no error (another file may have it) but
 * most likely a typo. */
static void warn_absent_namespaces(const struct train_args *a,
                                   const hog_data *d)
{
    char miss[3 * HOG_MAX_INTERACTIONS + 1], list[8 * sizeof miss] = "";
    unsigned n = hog_cross_absent(d, miss, sizeof miss);
    for (unsigned i = 0, w = 0; i < n; i++)
        w += (unsigned)snprintf(list + w, sizeof list - w, "%s'%c'",
                                i == 0 ? "" : i + 1 < n ? ", " : " or ",
                                miss[i]);
    if (n)
        fprintf(stderr, "hogtrain: warning: --interactions %s: %s has no "
                        "namespace that starts with %s; the interactions "
                        "with %s cross nothing\n",
                a->interactions,
                strcmp(a->train, "-") == 0 ? "standard input"
                                           : hog_cli_basename(a->train),
                list,
                n == 1 ? "it" : "them");
}

/* The features d's rows use (its highest index + 1): the test set's own,
 * which its load raised to the training set's. Hashed data has 2^B. */
static uint64_t features_used(const hog_data *d)
{
    if (d->hash.bits)
        return hog_data_features(d);
    uint64_t nf = 0;
    for (uint64_t i = 0; i < d->m.rows; i++)
        if (d->m.off[i + 1] > d->m.off[i] &&
            (uint64_t)d->m.idx[d->m.off[i + 1] - 1] + 1 > nf)
            nf = (uint64_t)d->m.idx[d->m.off[i + 1] - 1] + 1;
    return nf;
}

int hog_cli_train(int argc, char **argv)
{
    struct train_args a = { 0 };
    int rc = hog_cli_train_parse(argc, argv, &a);
    if (rc >= 0) {
        free(a.cw_labels);
        free(a.cw_values);
        return rc;
    }

    double t_start = hog_now();
    hog_err err = { { 0 } };
    hog_status s = HOG_OK;
    hog_data *train = NULL, *test = NULL, *valid = NULL;
    hog_cv_fold *folds = NULL;
    hog_search_result *search = NULL;
    hog_search_step *steps = NULL;
    hog_model *m = NULL, *init = NULL;
    hog_net *net = NULL;
    struct hog_avg *avg = NULL;
    struct hog_progress p;
    struct train_report r = { .a = &a, .p = &p };
    hog_progress_init(&p, stderr, a.quiet, a.o.loss == HOG_LOSS_SQUARED);

    /* Fail before the work, not after it, when an input cannot be read or
     * an output cannot be made. */
    const char *const ins[] = { a.train, a.test, a.o.resume,
                                a.net.secret_file, a.weights, a.validation,
                                a.init };
    if ((s = hog_cli_check_readable(ins, sizeof ins / sizeof *ins, &err)) !=
            HOG_OK ||
        (a.model && (s = hog_outfile_check(a.model, &err)) != HOG_OK) ||
        (a.o.checkpoint &&
         (s = hog_outfile_check(a.o.checkpoint, &err)) != HOG_OK) ||
        (a.json && (s = hog_outfile_check(a.json, &err)) != HOG_OK) ||
        (a.plot && (s = hog_outfile_check(a.plot, &err)) != HOG_OK))
        goto fail;

    hog_data hdr; /* --stream: the file's header, no arrays */
    hog_stream_stats ss;
    if (a.stream) {
        double t = hog_now();
        if ((s = stream_header(a.train, &hdr, &err)) != HOG_OK ||
            (s = hog_hash_check_file(a.train, hdr.hash.bits, hdr.hash.seed,
                                     &a.lo, &err)) != HOG_OK)
            goto fail;
        r.load_train_s = hog_now() - t;
        r.train = &hdr;
        ss = (hog_stream_stats){ .size = sizeof ss };
        a.h.stream_stats = &ss;
        r.stream = &ss;
        if (a.quiet)
            a.h.log = quiet_log;
        if (!a.quiet)
            fprintf(stderr, "streaming %s: %llu rows, %llu features, %llu "
                            "nonzeros\n", hog_cli_basename(a.train),
                    (unsigned long long)hdr.m.rows,
                    (unsigned long long)hdr.n_features,
                    (unsigned long long)hdr.m.nnz);
    } else {
        if ((s = hog_cli_load(a.train, &a.lo, a.quiet, &train, &r.load_train_s,
                              &err)) != HOG_OK)
            goto fail;
        r.train = train;
    }
    if (a.net.on) { /* not streamed: the conflicts' table refused it */
        if ((s = hog_cli_train_net_setup(&a, &train, &net, &avg, &err)) !=
            HOG_OK)
            goto fail;
        r.train = train;
    }
    r.net = net;
    r.avg = avg;
    /* --weights: one per training row, so read once the rows are known
     * (the library checks the combination with --class-weight) */
    if (a.weights) {
        if ((s = hog_weights_load(a.weights, hog_data_rows(r.train), &a.row_w,
                                  &err)) != HOG_OK)
            goto fail;
        a.o.row_weights = a.row_w;
    }
    /* Vowpal Wabbit's importance weights are the rows' weights, unless
     * --weights gives its own */
    if (!a.o.row_weights && train && hog_data_importance(train))
        a.o.row_weights = hog_data_importance(train);
    else if (a.o.row_weights && train && hog_data_importance(train) &&
             !a.quiet)
        fprintf(stderr, "hogtrain: %s's importance weights are replaced by "
                "--weights %s\n", hog_cli_basename(a.train), a.weights);
    if (a.test) {
        /* The test set lives in the training set's feature space, hashed
         * as its features were (a hashed .hgb's too). */
        hog_load_opts tl = a.lo;
        tl.n_features = hog_data_features(r.train);
        tl.hash_bits = r.train->hash.bits;
        tl.hash_seed = r.train->hash.seed;
        tl.keep_names = 0; /* the model's are the training set's */
        if ((s = hog_cli_load(a.test, &tl, a.quiet, &test, &r.load_test_s,
                              &err)) != HOG_OK)
            goto fail;
        if (test->hash.bits != r.train->hash.bits) {
            s = hog_errf(&err, HOG_EINVAL,
                         "%s is hashed (Vowpal Wabbit text always is) but "
                         "%s is not: hash both, with --hash-bits",
                         test->hash.bits ? a.test : a.train,
                         test->hash.bits ? a.train : a.test);
            goto fail;
        }
        if (!a.quiet)
            hog_cli_warn_feature_space(hog_data_features(r.train),
                                       features_used(test), a.test,
                                       "training goes on");
        r.test = test;
    }
    if (a.validation) { /* in the training set's feature space, too */
        hog_load_opts vl = a.lo;
        vl.n_features = hog_data_features(r.train);
        vl.keep_names = 0;
        if ((s = hog_cli_load(a.validation, &vl, a.quiet, &valid,
                              &r.load_valid_s, &err)) != HOG_OK)
            goto fail;
        r.valid = valid;
        a.o.validation = valid;
    }
    /* once, not per fold: labels that look like a regression target
     * (a stream's are found, and said, in its first pass) */
    if (!a.quiet && train && a.interactions[0])
        warn_absent_namespaces(&a, train);
    char doubt[400];
    if (!a.quiet && train &&
        hog_train_data_classes_doubt(&a.o, train, doubt, sizeof doubt))
        hog_train_notice(&a.h, doubt);
    hog_valid_stats vs = { .size = sizeof vs };
    if (a.o.validation || a.o.holdout > 0) {
        a.h.valid_stats = &vs;
        r.vs = &vs;
    }

    /* --cv, --search-C: the cross-validation first; a model only when -o
     * or -t asks for one (trained on every row, at the best C) */
    hog_cv_result cvr;
    if (a.cv) {
        folds = calloc(a.cv, sizeof *folds);
        search = a.search_c ? malloc(sizeof *search) : NULL;
        steps = a.search_c ? calloc(HOG_SEARCH_MAX_STEPS, sizeof *steps)
                           : NULL;
        if (!folds || (a.search_c && (!search || !steps))) {
            s = hog_errf(&err, HOG_ENOMEM, "out of memory");
            goto fail;
        }
        if (search) /* room for every C: the report lists them all */
            *search = (hog_search_result){ .size = sizeof *search,
                                           .step = steps,
                                           .step_cap = HOG_SEARCH_MAX_STEPS };
        double t = hog_now();
        a.h.cancel = hog_cli_signals_install();
        s = hog_cli_train_cv(&a, train, &cvr, folds, search, &err);
        hog_cli_signals_restore();
        r.train_s = hog_now() - t;
        if (s != HOG_OK)
            goto fail;
        r.cv = a.search_c ? NULL : &cvr;
        r.search = search;
        if (!a.model && !a.test) {
            r.total_s = hog_now() - t_start;
            if (a.json && (s = hog_cli_train_save_json(&r, &err)) != HOG_OK)
                goto fail;
            rc = HOG_EXIT_OK;
            goto out;
        }
        /* --threads was the folds'; a one-thread algorithm's model is
         * trained on one (the metrics on every allowed CPU) */
        const struct hog_algo_row *row = hog_algo_row(a.o.algo);
        if (row && !(row->caps & HOG_CAP_THREADS) && a.o.threads > 1)
            a.o.threads = 0;
        if (!a.quiet)
            fprintf(stderr, "training on all %llu rows%s\n",
                    (unsigned long long)hog_data_rows(train),
                    a.search_c ? " at the best C" : "");
    }

    /* The epochs' metrics feed the lines on standard error, the --json
     * report and the test set's figures; -q alone reads none of them, and
     * a run without a progress callback computes none. */
    if (!a.quiet || a.json || a.test) {
        a.h.progress = hog_progress_cb;
        a.h.progress_ctx = &p;
    }
    hog_cyclades_stats cyc = { .size = sizeof cyc };
    if (a.o.algo == HOG_ALGO_CYCLADES) {
        a.h.cyclades_stats = &cyc;
        r.cyc = &cyc;
    }
    hog_hot_stats hot = { .size = sizeof hot };
    if (a.o.algo == HOG_ALGO_HOGWILD && a.o.hot_features) {
        a.h.hot_stats = &hot;
        r.hot = &hot;
    }
    hog_auto_stats autos = { .size = sizeof autos };
    a.h.auto_stats = &autos;
    if (!a.quiet && !a.h.log)
        a.h.log = said_log;
    /* K classes one-vs-rest report classes done while they train */
    p.ovr = a.o.multiclass == HOG_MULTICLASS_OVR &&
            a.o.loss != HOG_LOSS_SQUARED &&
            r.train->labels != HOG_LABELS_BINARY;
    if (a.init) { /* the warm start's model */
        if ((s = hog_model_load(a.init, &init, &err)) != HOG_OK)
            goto fail;
        a.o.warm_start = init;
    }
    p.t0 = p.epoch_t0 = hog_now();
    a.h.cancel = hog_cli_signals_install();
    s = a.stream ? hog_train_stream(a.train, test, &a.o, &a.h, &m, &err)
                 : hog_train(train, test, &a.o, &a.h, &m, &err);
    if (s == HOG_OK && a.stream && !a.quiet)
        hog_cli_train_print_stream(&ss);
    hog_cli_signals_restore();
    r.train_s = hog_now() - p.t0;
    hog_progress_finish(&p);
    if (s != HOG_OK)
        goto fail;
    /* the report says what trained, and why when auto chose it */
    if (autos.chosen) {
        r.autos = &autos;
        a.o.algo = autos.algo;
        a.o.replicas = autos.replicas;
    }
    r.m = m;
    /* Test seam (tests/test_cli.c): how many epochs' metrics arrived. */
    if (getenv("HOGTRAIN_TEST_EPOCH_REPORTS"))
        fprintf(stderr, "epoch reports: %u\n", p.hist_len);
    if (p.oom)
        fprintf(stderr, "hogtrain: warning: out of memory for the epoch "
                        "history; the table and report are incomplete\n");

    if (!a.quiet)
        hog_cli_train_print_tables(&r);
    if (a.model) {
        double t = hog_now();
        if (train && train->names) { /* --keep-names: the model keeps them */
            m->names = train->names;
            train->names = NULL;
        }
        if ((s = hog_model_save(m, a.model, a.fmt, &err)) != HOG_OK)
            goto fail;
        r.save_s = hog_now() - t;
        /* said even with -q: the file is not what the option's name
         * suggests (hog_model_save: softmax as MCSVM_CS) */
        if (a.fmt == HOG_MODEL_LIBLINEAR && hog_model_classes(m, NULL) &&
            hog_model_multiclass(m) == HOG_MULTICLASS_SOFTMAX)
            fprintf(stderr, "hogtrain: note: %s: LIBLINEAR has no softmax "
                            "model, so it is written as Crammer-Singer's "
                            "(MCSVM_CS): liblinear-predict gives the same "
                            "labels but no probabilities (-b 1 refuses it; "
                            "hogtrain predict --probabilities gives "
                            "softmax's from the .hgm model)\n",
                    a.model);
    }
    r.total_s = hog_now() - t_start;
    if (a.json && (s = hog_cli_train_save_json(&r, &err)) != HOG_OK)
        goto fail;
    if (!a.quiet)
        hog_cli_train_print_summary(&r);
    rc = HOG_EXIT_OK;
    goto out;
fail:
    rc = hog_cli_fail_status(s, &err);
out:
    hog_avg_free(avg);
    hog_net_close(net);
    hog_model_free(m);
    hog_model_free(init);
    hog_data_free(test);
    hog_data_free(valid);
    hog_data_free(train);
    free(folds);
    free(search);
    free(steps);
    hog_progress_free(&p);
    free(a.row_w);
    free(a.net.classes);
    free(a.cw_labels);
    free(a.cw_values);
    return rc;
}
