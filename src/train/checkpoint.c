/*
 * Checkpoints, the front door's side: which run a checkpoint belongs to
 * (options, a CRC of the data and one of the effective row weights, so
 * that resuming with anything else is refused with the difference named), when they are written (fit.h), and
 * what the user is told: where an interrupted run stands, how to resume,
 * and, when a checkpoint cannot be written (a full disk), that the previous
 * one is intact.
 */
#include "train/checkpoint.h"
#include "train/train.h"


#include <stdio.h>
#include <string.h>

static void identity(const struct hog_fit *f, uint32_t data_crc,
                     struct hog_ckpt *c)
{
    const hog_train_opts *o = f->o;
    const hog_data *d = f->train;
    c->algo = (uint32_t)o->algo;
    c->loss = (uint32_t)o->loss;
    c->schedule = (uint32_t)o->schedule;
    c->eta = o->eta;
    c->l1 = o->l1;
    c->l2 = o->l2;
    c->power = o->power;
    c->bias = o->bias;
    c->seed = o->seed;
    c->rows = d->m.rows;
    c->nnz = d->m.nnz;
    c->n_features = d->n_features;
    c->data_crc = data_crc;
    c->ckpt_rows = f->ckpt_rows;
    c->ckpt_epochs = f->ckpt_epochs;
    c->opts_known = true;
    c->batch_size = o->batch_size;
    /* the file's fields as they were before one field held both: 0 is
     * the degree chosen with the batch size */
    c->hot_degree = o->cyclades_hot_degree == HOG_HOT_AUTO
                        ? 0 : o->cyclades_hot_degree;
    c->repartition = o->repartition != 0;
    c->cyc_hot = o->cyclades_hot_degree != 0;
    c->hot_count = o->hot_features;
    c->sync_every = o->sync_every;
    c->replicas = (uint32_t)o->replicas;
    c->weighted = d->row_w != NULL;
    c->weights_crc = hog_ckpt_weights_crc(d);
    /* K = 2 under --multiclass softmax is the binary path (n_classes 0) */
    c->softmax = f->model->n_classes != 0 &&
                 o->multiclass == HOG_MULTICLASS_SOFTMAX;
}

/* Names the first difference between the checkpoint and this run. */
static hog_status check_identity(const struct hog_fit *f,
                                 const struct hog_ckpt *k, uint32_t data_crc,
                                 hog_err *err)
{
    struct hog_ckpt c;
    identity(f, data_crc, &c);
    const char *p = f->o->resume;
    char what[160] = "";
#define DIFF_U(field, name)                                                   \
    if (!what[0] && k->field != c.field)                                      \
        snprintf(what, sizeof what, "%s %llu, not %llu", name,                \
                 (unsigned long long)k->field, (unsigned long long)c.field);
#define DIFF_D(field, name)                                                   \
    if (!what[0] && memcmp(&k->field, &c.field, sizeof c.field) != 0)         \
        snprintf(what, sizeof what, "%s = %.17g, not %.17g", name, k->field,  \
                 c.field);
    DIFF_U(algo, "algorithm number")
    DIFF_U(loss, "loss number")
    DIFF_U(schedule, "schedule number")
    DIFF_D(eta, "eta")
    DIFF_D(l1, "l1")
    DIFF_D(l2, "l2")
    DIFF_D(power, "power")
    DIFF_D(bias, "bias")
    DIFF_U(seed, "seed")
    DIFF_U(rows, "training rows")
    DIFF_U(nnz, "training nonzeros")
    DIFF_U(n_features, "features")
    /* The options that shape the algorithm's row order and steps; version 1
     * files (serial training only) do not record them. */
    if (k->opts_known && c.algo == HOG_ALGO_CYCLADES) {
        DIFF_U(batch_size, "--batch-size")
        DIFF_U(repartition, "--repartition")
        DIFF_U(cyc_hot, "hot features (0: --hot off)")
        DIFF_U(hot_degree, "--hot degree")
    }
    if (k->opts_known && c.algo == HOG_ALGO_HOGWILD) {
        /* --threads may change: each thread's row order is replayed from
         * the seed for the threads of the resumed run, so a resume at
         * another count continues (as Hogwild! does, not bit for bit) */
        DIFF_U(replicas, "--replicas number")
        DIFF_U(hot_count, "--hot count")
        /* the cadence of folds and averagings, where there are any */
        if (c.hot_count || c.replicas != HOG_REPLICAS_SHARED)
            DIFF_U(sync_every, "--sync-every")
    }
    if (!what[0] && k->softmax != c.softmax)
        snprintf(what, sizeof what, "--multiclass %s, not %s",
                 k->softmax ? "softmax" : "ovr (or two classes)",
                 c.softmax ? "softmax" : "ovr (or two classes)");
    /* softmax: the classes are the data's (its CRC), n_weights K x len */
    if (!what[0] && !c.softmax && k->st.n_classes != f->model->n_classes)
        snprintf(what, sizeof what, "%u classes, not %u (0: two)",
                 k->st.n_classes, f->model->n_classes);
#undef DIFF_U
#undef DIFF_D
    if (what[0])
        return hog_errf(err, HOG_EINVAL,
                        "%s: the checkpoint was written with %s; resume with "
                        "the options and data it was written with",
                        p, what);
    if (k->data_crc != data_crc)
        return hog_errf(err, HOG_EINVAL,
                        "%s: the checkpoint was written for other training "
                        "data (same size, different content)", p);
    /* The effective row weights are part of the problem: resuming with
     * others would continue another objective's run. */
    if (k->weighted != c.weighted)
        return hog_errf(err, HOG_EINVAL,
                        "%s: the checkpoint was written %s row or class "
                        "weights and this run has %s; resume with the "
                        "weights it was written with", p,
                        k->weighted ? "with" : "without",
                        c.weighted ? "some" : "none");
    if (k->weighted && k->weights_crc != c.weights_crc)
        return hog_errf(err, HOG_EINVAL,
                        "%s: the checkpoint was written with other row "
                        "weights (CRC32C %08x, not %08x: a different "
                        "--weights file or --class-weight); resume with the "
                        "weights it was written with", p, k->weights_crc,
                        c.weights_crc);
    if (k->st.epoch > f->o->epochs)
        return hog_errf(err, HOG_EINVAL,
                        "%s: the checkpoint is at epoch %llu, beyond the %u "
                        "epochs asked for", p,
                        (unsigned long long)k->st.epoch, f->o->epochs);
    return HOG_OK;
}

static void where(char *buf, size_t len, uint64_t epoch, uint64_t pos,
                  uint64_t rows)
{
    if (pos >= rows)
        snprintf(buf, len, "after epoch %llu", (unsigned long long)epoch);
    else
        snprintf(buf, len, "at row %llu of epoch %llu",
                 (unsigned long long)pos, (unsigned long long)epoch);
}

static hog_status save(struct hog_fit *f, const struct hog_train_state *s,
                       bool cancelled, hog_err *err)
{
    struct hog_ckpt_ctx *cx = f->ckpt_ctx;
    const char *path = f->o->checkpoint;
    uint64_t rows = f->train->m.rows;
    char at[96];
    hog_train_state_keep(f, s);
    where(at, sizeof at, s->epoch, s->pos, rows);
    if (!path) {
        if (cancelled)
            hog_errf(err, HOG_EINTR,
                     "training interrupted %s; no checkpoint was asked for "
                     "(--checkpoint FILE keeps the work of a long run)", at);
        return HOG_OK;
    }
    struct hog_ckpt c;
    identity(f, cx->data_crc, &c);
    c.st = *s;
    hog_err e;
    if (hog_ckpt_save(&c, path, &e) != HOG_OK) {
        /* a failed commit leaves the file it would replace as it was */
        char prev[4200];
        if (!cx->have_last)
            snprintf(prev, sizeof prev, "no earlier checkpoint of this run "
                     "exists");
        else {
            char was[96];
            where(was, sizeof was, cx->last_epoch, cx->last_pos, rows);
            if (cx->last_resumed)
                snprintf(prev, sizeof prev, "the checkpoint this run resumed "
                         "from (%s, %s) is intact", f->o->resume, was);
            else
                snprintf(prev, sizeof prev, "the previous checkpoint (%s) is "
                         "intact", was);
        }
        return hog_errf(err, HOG_EIO, "checkpoint %s not written: %s; %s", at,
                        e.msg, prev);
    }
    cx->have_last = true;
    cx->last_resumed = false;
    cx->last_epoch = s->epoch;
    cx->last_pos = s->pos;
    if (cancelled)
        hog_errf(err, HOG_EINTR,
                 "training interrupted %s; checkpoint written to %s "
                 "(continue with --resume %s)", at, path, path);
    return HOG_OK;
}

hog_status hog_train_ckpt_begin(struct hog_fit *f, struct hog_ckpt_ctx *cx,
                                hog_err *err)
{
    const hog_train_opts *o = f->o;
    memset(cx, 0, sizeof *cx);
    f->ckpt_ctx = cx;
    f->save = save;
    /* which trainers write them, and with what, is the algorithms' and
     * the conflicts' tables' to say (hog_train_validate) */
    if (!o->checkpoint && !o->resume)
        return HOG_OK;
    if (o->checkpoint) {
        f->ckpt_rows = o->checkpoint_rows;
        f->ckpt_epochs = o->checkpoint_epochs;
        if (!f->ckpt_rows && !f->ckpt_epochs)
            f->ckpt_epochs = 1;
    }
    cx->data_crc = hog_ckpt_data_crc(f->train);
    if (!o->resume)
        return HOG_OK;
    hog_status st = hog_ckpt_load(o->resume, &cx->resume, err);
    if (st != HOG_OK)
        return st;
    cx->loaded = true;
    st = check_identity(f, &cx->resume, cx->data_crc, err);
    if (st != HOG_OK)
        return st;
    f->resume = &cx->resume.st;
    cx->have_last = cx->last_resumed = true;
    cx->last_epoch = f->resume->epoch;
    cx->last_pos = f->resume->pos;
    return HOG_OK;
}

void hog_train_ckpt_end(struct hog_ckpt_ctx *cx)
{
    if (cx->loaded)
        hog_ckpt_free(&cx->resume);
    cx->loaded = false;
}
