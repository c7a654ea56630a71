/*
 * The training front door: options, dispatch to an algorithm, per-epoch
 * metrics and progress. The objective every algorithm minimises:
 *
 *     (1/n) sum_i v_i loss(y_i, w.x_i + b) + l2/2 |w|^2 + l1 |w|_1
 *
 * with the bias b = w_bias * opts.bias a weight like the others when
 * opts.bias != 0 (LIBLINEAR's -B), and v_i the row's weight (1 without
 * weights; weights.c combines row and class weights once, and the
 * algorithms see them through the front door's view of the data,
 * hog_data.row_w). docs/TRAINING.md maps it to LIBLINEAR.
 *
 * This file is the door itself, in memory (hog_train) and out of core
 * (hog_train_stream): the options and hooks taken (and the stats they
 * point to, hooks.c), the holdout split, LIBLINEAR's C resolved. Its
 * parts: the options and their defaults (opts.c), their
 * checks (validate.c) with the model's memory (memory.c), the model and
 * the warm start (setup.c), the hooks the algorithms call after each
 * epoch (epoch.c), the run in memory (run.c) and --normalize around it
 * (normalize.c).
 */
#include "train/train.h"

#include "core/fit.h"
#include "core/loss.h"
#include "gpu/gpu.h"
#include "io/io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* LIBLINEAR's C as the strengths, n being the rows trained on. */
static void resolve_C(hog_train_opts *o, uint64_t rows)
{
    if (o->C > 0)
        hog_strengths_of_C(o->C, o->C_l1 != 0, rows, &o->l1, &o->l2);
}

/* The same where several processes solve one problem (h->reduce): n is
 * every process's rows together. */
static hog_status resolve_C_reduced(hog_train_opts *o,
                                    const hog_train_hooks *h, uint64_t rows,
                                    hog_err *err)
{
    if (!(o->C > 0))
        return HOG_OK;
    double n = (double)rows; /* below 2^53: exact */
    hog_status st = h->reduce(h->reduce_ctx, &n, 1, err);
    if (st == HOG_OK)
        resolve_C(o, (uint64_t)n);
    return st;
}

/* o->holdout: the training rows split into two copies (split.c), *train
 * pointing to the rows trained on and o->validation to the rows held out
 * (o->holdout 0 from then on). Out-of-range values are the validation's
 * to refuse. */
static hog_status holdout_split(hog_train_opts *o, const hog_train_hooks *h,
                                const hog_data **train, hog_data **tr,
                                hog_data **va, hog_err *err)
{
    *tr = *va = NULL;
    if (!(o->holdout > 0 && o->holdout < 1) || o->validation || !*train ||
        (*train)->m.rows == 0)
        return HOG_OK;
    /* the conflicts' rows about options (a holdout with row weights
     * among them) before the split, which forgets o->holdout */
    hog_status st = hog_train_conflicts_options(o, h, false, err);
    if (st != HOG_OK)
        return st;
    uint64_t n = (*train)->m.rows;
    uint32_t *part = malloc(n * sizeof *part);
    if (!part)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the holdout of "
                        "%llu rows", (unsigned long long)n);
    st = hog_split_holdout(*train, o->loss, o->holdout, o->seed, part, err);
    if (st == HOG_OK &&
        (st = hog_data_subset(*train, part, 1, true, tr, err)) == HOG_OK &&
        (st = hog_data_subset(*train, part, 1, false, va, err)) != HOG_OK) {
        hog_data_free(*tr);
        *tr = NULL;
    }
    free(part);
    if (st != HOG_OK)
        return st;
    *train = *tr;
    o->validation = *va;
    o->holdout = 0;
    return HOG_OK;
}

/* hog_train_stream with the options and hooks taken, h's stats the front
 * door's. */
static hog_status train_stream(const char *path, const hog_data *test,
                               hog_train_opts o, const hog_train_hooks *h,
                               hog_model **out, hog_err *err)
{
    hog_status st;
    hog_train_auto(&o, h, NULL, true);
    const struct hog_algo_row *row = hog_algo_row(o.algo);
    /* what streaming does not combine with is the conflicts' table's:
     * the rows about options alone before the file is opened, all of
     * them against its header below (hog_train_validate_stream) */
    if ((st = hog_train_conflicts_options(&o, h, true, err)) != HOG_OK)
        return st;
    if ((unsigned)o.io > HOG_IO_PREAD)
        return hog_errf(err, HOG_EINVAL, "unknown io backend %d", (int)o.io);

    struct hog_stream_opts so;
    hog_stream_opts_init(&so);
    so.mem_budget = o.mem_budget;
    so.io = o.io;
    so.direct = o.direct;
    so.log = h->log;
    so.log_ctx = h->log_ctx;
    so.row_bytes = 4; /* the window's row order */
    hog_stream *stream;
    if ((st = hog_stream_open(path, &so, &stream, err)) != HOG_OK)
        return st;
    const struct hog_hgb_info *in = hog_stream_info(stream);

    /* The data as the header describes it; no arrays. */
    hog_data hd;
    memset(&hd, 0, sizeof hd);
    hd.m.rows = in->rows;
    hd.m.nnz = in->nnz;
    hd.n_features = in->n_features;
    hd.labels = in->labels;
    hd.label_pos = in->label_pos;
    hd.label_neg = in->label_neg;
    hd.n_pos = in->n_pos;
    hd.hash = in->hash;

    hog_model *m = NULL;
    /* K classes: one pass over the chunks finds them and their rows
     * first, in the file's order (one-vs-rest then streams the file once
     * per class and epoch) */
    double *classes = NULL;
    uint64_t *class_rows = NULL;
    uint32_t k = 0;
    const bool multi = hog_train_is_multiclass(&o, &hd);
    resolve_C(&o, hd.m.rows);
    if ((st = hog_train_validate_stream(&o, h, &hd, err)) != HOG_OK)
        ;
    else if (multi && (st = hog_train_stream_classes(stream, h, &classes,
                                                     &class_rows, &k,
                                                     err)) != HOG_OK)
        ;
    else if (multi && k < 3)
        st = hog_errf(err, HOG_EINVAL, "the labels of %s take %u values "
                      "only: not K classes", path, k);
    else if ((st = hog_train_new_model(&hd, &o, &m, err)) == HOG_OK &&
             (!multi ||
              ((st = hog_model_set_classes(m, k, classes, o.multiclass,
                                           err)) == HOG_OK &&
               (st = hog_train_check_memory(&o, &hd, k, err)) == HOG_OK))) {
        struct hog_front c;
        struct hog_fit f = { .train = &hd, .o = &o, .hooks = *h, .model = m,
                             .epoch_end = hog_train_epoch_end,
                             .tick = hog_train_tick, .ctx = &c,
                             .gap = NAN, .stream = stream,
                             .objective = NAN, .mean_loss = NAN,
                             .prog_loss = NAN, .prog_accuracy = NAN,
                             .class_rows = class_rows };
        if ((st = hog_train_front_begin(&c, &f, test, err)) == HOG_OK &&
            (st = hog_train_warm_weights(&o, m, &f.init, err)) == HOG_OK)
            st = !multi ? row->stream(&f, err)
                 : m->multiclass == HOG_MULTICLASS_SOFTMAX
                     ? row->softmax(&f, err)
                     : hog_train_ovr(&f, row, &c.ovr, err);
        st = hog_train_front_end(&c, st, &f, hd.m.rows);
    }
    free(classes);
    free(class_rows);
    if (h->stream_stats)
        hog_stream_get_stats(stream, h->stream_stats);
    hog_stream_close(stream);
    return hog_train_hand_out(st, m, out);
}

hog_status hog_train_stream(const char *path, const hog_data *test,
                            const hog_train_opts *user,
                            const hog_train_hooks *user_h, hog_model **out,
                            hog_err *err)
{
    *out = NULL;
    if (!path)
        return hog_errf(err, HOG_EINVAL, "no training file");
    hog_train_opts o;
    hog_train_hooks h;
    struct hog_train_outs t;
    hog_status st = hog_train_hooks_take(user_h, &h, err);
    if (st != HOG_OK ||
        (st = hog_train_opts_take(user, &h, &o, err)) != HOG_OK ||
        (st = hog_train_outs_take(&h, &t, err)) != HOG_OK)
        return st;
    st = train_stream(path, test, o, &h, out, err);
    hog_train_outs_give(&t);
    return st;
}

/* hog_train with the options and hooks taken, h's stats the front
 * door's. */
static hog_status train_in_memory(const hog_data *train, const hog_data *test,
                                  hog_train_opts o, const hog_train_hooks *h,
                                  hog_model **out, hog_err *err)
{
    hog_status st;
    /* A holdout: the rows trained on and the validation rows, copies. */
    hog_data *kept = NULL, *held = NULL;
    if ((st = holdout_split(&o, h, &train, &kept, &held, err)) != HOG_OK)
        return st;
    uint64_t rows = train ? train->m.rows : 0;
    if (h->reduce)
        st = resolve_C_reduced(&o, h, rows, err);
    else
        resolve_C(&o, rows);
    if (st == HOG_OK)
        hog_train_auto(&o, h, train, false);
    if (st == HOG_OK &&
        (st = hog_train_check(train, test, &o, h, err)) == HOG_OK)
        st = o.normalize ? hog_train_normalized(train, test, &o, h, out, err)
                         : hog_train_run(train, test, &o, h, out, err);
    hog_data_free(kept);
    hog_data_free(held);
    return st;
}

hog_status hog_train(const hog_data *train, const hog_data *test,
                     const hog_train_opts *user, const hog_train_hooks *user_h,
                     hog_model **out, hog_err *err)
{
    *out = NULL;
    hog_train_opts o;
    hog_train_hooks h;
    struct hog_train_outs t;
    hog_status st = hog_train_hooks_take(user_h, &h, err);
    if (st != HOG_OK ||
        (st = hog_train_opts_take(user, &h, &o, err)) != HOG_OK ||
        (st = hog_train_outs_take(&h, &t, err)) != HOG_OK)
        return st;
    st = train_in_memory(train, test, o, &h, out, err);
    hog_train_outs_give(&t);
    return st;
}
