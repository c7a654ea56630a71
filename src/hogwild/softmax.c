/*
 * Multinomial logistic regression (--multiclass softmax): K classes, one
 * weight vector w_c per class, trained by SGD, serial or Hogwild!. The
 * objective, the step, the feature-major layout and the lazy
 * regularization are the kernel's (src/core/softmax.c); this file runs
 * it: the rows come in the serial trainer's order (hog_rng stream 0 of
 * the seed, a fresh Fisher-Yates permutation each epoch), and Hogwild!
 * threads take the shards and interleaved step numbers of hogwild.c.
 * After each epoch the weights are transposed into the model's
 * class-major vectors (f->model->w, class c at c * len).
 *
 * Hogwild! (Niu, Recht, Ré, Wright 2011): T threads step one shared array
 * with relaxed atomic loads and stores. Thread p trains the rows p, p + T,
 * ... shuffled with its own stream p of the seed, its k-th row being step
 * p + k T of the epoch (hogwild.c's shards and clock), so one thread runs
 * the serial order and gives the serial model bit for bit: the arithmetic
 * is the same code, only the loads and stores differ (a private copy of a
 * feature's K weights by relaxed loads, stored back by relaxed stores).
 * A feature stamped beyond t by a thread further ahead takes the gradient
 * alone; races can lose an update or shrink a weight twice, the noise
 * Hogwild! accepts. Segments end at barriers, where the threads bring
 * their share of the features up to date. Replicas, update modes and
 * hot features are not offered (train/validate.c refuses them with a
 * sentence).
 *
 * Across processes (--world, hog_train_opts.average): the segments end at
 * each of the epoch's averaging blocks, where the K nw weights, current,
 * are replaced by their average over the processes (thread 0, the others
 * at the barrier), as the serial trainer's one vector is; AdaGrad's sums
 * stay each process's own.
 */
#include "hogwild/hogwild.h"

#include "core/softmax.h"
#include "io/io.h"
#include "pool/pool.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

/* Per thread: its shard and its scratch, on cache lines of its own. */
struct worker {
    alignas(HOG_CACHELINE) struct hog_order ord; /* its shard of the rows */
    struct hog_softmax_work k; /* the kernel's scratch and tally */
};

struct softmax {
    /* the problem */
    struct hog_fit *f;
    const hog_data *d;
    struct hog_sgd sch;     /* the schedule and the segment's prefixes, no
                               weights (hog_sgd_init_schedule) */
    struct hog_softmax km;  /* the K-wide weights and their state */
    uint32_t *cls;          /* per training row: its class */

    /* the threads */
    struct hog_pool *pool;   /* NULL: serial, on the calling thread */
    unsigned nthreads;
    struct worker *wk;
    bool shared;             /* Hogwild!'s relaxed copies, even at T = 1 */

    /* written by thread 0 between barriers */
    uint64_t t;              /* global step of the next segment */
    uint64_t pos;            /* epoch step where the segment starts */
    uint32_t len;            /* the running segment's length; 0: epoch done */
    hog_err *err;
    struct hog_drive dv;     /* the epochs, blocks, checkpoints (drive.h) */

    /* streamed (serial): the driver's rows step over the stream's order,
     * one segment open between its pieces (hogwild/serial.c's) */
    struct hog_stream_epochs *se;
    struct hog_stream_walk walk;
    struct hog_class_index ix;
    uint32_t *wcls;          /* the window's rows' classes */
    struct hog_drive_seg g;  /* the open segment, from step 0 */

    /* checkpoints, after whole epochs (thread 0) */
    struct hog_train_state last;  /* the last epoch kept for a checkpoint */
};

/* ---- the epochs ------------------------------------------------------------- */

static void barrier(struct softmax *m)
{
    if (m->pool)
        hog_pool_barrier(m->pool);
}

/* Thread p's rows of the running segment, epoch steps [pos, pos + len):
 * its k-th row is step p + k T, for k in [*k0, *k1) of its shard. */
static void segment_rows(const struct softmax *m, unsigned p,
                         const struct worker *w, uint64_t *k0, uint64_t *k1)
{
    uint64_t T = m->nthreads, a = m->pos, e = a + m->len;
    *k0 = a <= p ? 0 : (a - p + T - 1) / T;
    *k1 = e <= p ? 0 : (e - p + T - 1) / T;
    if (*k1 > w->ord.n)
        *k1 = w->ord.n;
    if (*k0 > *k1)
        *k0 = *k1;
}

/* The thread's rows of the running segment, a block at a time between
 * which it polls the cancel flag and (thread 0) reports progress. */
static void run_segment(struct softmax *m, unsigned tid)
{
    struct worker *w = &m->wk[tid];
    const uint64_t T = m->nthreads;
    uint64_t k0, k1;
    segment_rows(m, tid, w, &k0, &k1);
    for (uint64_t k = k0; k < k1;) {
        if (hog_drive_poll(&m->dv))
            return;
        uint64_t blk = k1 - k < HOG_SGD_BLOCK ? k1 - k : HOG_SGD_BLOCK;
        hog_softmax_run(&m->km, m->shared, &w->k, m->d, m->cls,
                        w->ord.rows + k, blk, (uint32_t)(tid + k * T - m->pos),
                        (uint32_t)T);
        k += blk;
        if (tid == 0) {
            uint64_t done = k * T;
            hog_drive_tick(&m->dv, done);
        }
    }
}

/* ---- checkpoints (epoch boundaries) ----------------------------------------- */

/* What a checkpoint holds: hog_softmax_state_keep (core/softmax.h). */

/* The state after epoch `epoch` into m->last (thread 0, the epoch's model
 * complete in f->model->w, every segment ended). */
static void keep_state(struct softmax *m, unsigned epoch)
{
    struct hog_train_state *st = &m->last;
    st->epoch = epoch;
    st->pos = m->d->m.rows;
    st->t_global = m->t;
    st->rng = m->wk[0].ord.rng;
    if (st->w) /* else no checkpoint file: where training stands */
        hog_softmax_state_keep(&m->km, m->f->model->w, st);
}

static void keep_job(void *m, unsigned epoch) { keep_state(m, epoch); }

/* After an epoch or a cut (thread 0): hog_fit_epoch_checkpoint (fit.h);
 * after the last epoch of a run that keeps its optimizer's state
 * (save_state), that state whether or not a checkpoint is due. */
static hog_status save(void *ctx, struct hog_train_state *at, bool cut,
                       hog_err *err)
{
    struct softmax *m = ctx;
    struct hog_fit *f = m->f;
    unsigned epoch = (unsigned)at->epoch;
    if (!cut && f->keep_last && epoch == f->o->epochs) {
        /* without a checkpoint file the arrays come now: before, a cut's
         * last state without them says where training stood */
        hog_status st = m->last.w ? HOG_OK
                                  : hog_softmax_state_alloc(&m->km, &m->last,
                                                            err);
        if (st != HOG_OK)
            return st;
        keep_state(m, epoch);
        return hog_fit_save(f, &m->last, hog_fit_cancelled(f), err);
    }
    return hog_fit_epoch_checkpoint(f, &m->last, epoch, cut, keep_job, m,
                                    err);
}

/* ---- the step (core/drive.h's block step) ---------------------------------- */

static struct hog_order *order(void *ctx, unsigned p)
{
    return &((struct softmax *)ctx)->wk[p].ord;
}

static void begin(void *ctx, unsigned tid, unsigned nthreads, unsigned epoch)
{
    (void)nthreads, (void)epoch;
    struct softmax *m = ctx;
    if (tid == 0)
        m->pos = 0;
    m->wk[tid].k.tally = (struct hog_sgd_tally){ 0 };
}

/* The block's rows (epoch steps up to sp->stop), on every thread (the
 * serial trainer: the calling thread alone, no barriers), in segments
 * that end at the block's end: there every weight is current for the
 * driver's averaging across processes. Thread 0 begins the segments. */
static hog_status run_block(void *ctx, unsigned tid, unsigned nthreads,
                            const struct hog_drive_span *sp, hog_err *err)
{
    (void)err;
    struct softmax *m = ctx;
    struct worker *w = &m->wk[tid];
    const struct hog_softmax *km = &m->km;
    for (;;) {
        if (tid == 0) {
            uint64_t left = sp->stop - m->pos;
            m->len = left == 0 ? 0
                     : hog_sgd_segment_begin(&m->sch, m->t,
                                             left < UINT32_MAX ? (uint32_t)left
                                                               : UINT32_MAX);
        }
        barrier(m);
        if (m->len == 0)
            return HOG_OK;
        run_segment(m, tid);
        barrier(m);
        uint64_t lo, hi;
        hog_slice(km->nw, tid, nthreads, &lo, &hi);
        hog_softmax_end(km, m->shared, w->k.buf, lo, hi, m->len);
        barrier(m);
        if (tid == 0) {
            m->t += m->len;
            m->pos += m->len;
        }
    }
}

/* Across processes (--world): the K nw weights, current, averaged in
 * place (_Atomic float has float's layout). */
static float *net_get(void *ctx, uint64_t *len)
{
    struct softmax *m = ctx;
    *len = m->km.nw * m->km.k;
    return (float *)m->km.w;
}

static void model(void *ctx, unsigned tid, unsigned nthreads)
{
    struct softmax *m = ctx;
    uint64_t lo, hi;
    hog_slice(m->km.nw, tid, nthreads, &lo, &hi);
    hog_softmax_model_slice(&m->km, m->f->model->w, lo, hi);
}

static void report(void *ctx)
{
    struct softmax *m = ctx;
    struct hog_sgd_tally all = { 0 }; /* in thread order */
    for (unsigned p = 0; p < m->nthreads; p++)
        hog_sgd_tally_merge(&all, &m->wk[p].k.tally);
    hog_sgd_tally_report(m->f, &m->sch, &all);
}

static void barrier_op(void *ctx) { barrier(ctx); }

static const struct hog_drive_ops softmax_ops = {
    .order = order,
    .begin = begin,
    .run = run_block,
    .net_get = net_get,
    .model = model,
    .report = report,
    .save = save,
    .barrier = barrier_op,
};

/* Every epoch, on every thread (the serial trainer: the calling thread
 * alone, no barriers): the driver's loop around run_block. */
static void train_job(void *arg, unsigned tid, unsigned nthreads)
{
    hog_drive_job(&((struct softmax *)arg)->dv, tid, nthreads);
}

/* ---- streamed (--stream, serial) ------------------------------------------- */

/* The classes of the window's rows, cls[p] for window row p; a label none
 * of the model's is the sentence hog_softmax_classes() gives. */
static hog_status window_classes(const struct softmax *m,
                                 const struct hog_class_index *ix,
                                 const struct hog_stream_win *win,
                                 uint32_t *cls, uint64_t done, hog_err *err)
{
    for (uint64_t j = 0; j < win->n; j++) {
        const struct hog_csr *x = &win->d[j].m;
        for (uint64_t r = 0; r < x->rows; r++) {
            int64_t c = hog_class_index_find(ix, (double)x->y[r]);
            if (c < 0)
                return hog_errf(err, HOG_EINVAL, "a row's label %g is none "
                                "of the model's %u classes (the stream's "
                                "rows %llu to %llu of the epoch)",
                                (double)x->y[r], m->km.k,
                                (unsigned long long)done + 1,
                                (unsigned long long)(done + win->first[win->n]));
            cls[win->first[j] + r] = (uint32_t)c;
        }
    }
    return HOG_OK;
}

/* The serial trainer's steps with the rows from f->stream, in the order
 * of hog_serial_train_stream (hogwild/serial.c): one window over the whole
 * file is the in-memory serial order, so the model is the in-memory one's
 * bit for bit; smaller windows shuffle the chunks, then the rows of each
 * window. The same kernel, one row at a time with its chunk as the data,
 * in segments that end at the epoch's end. */
static void stream_end(void *ctx, uint32_t len)
{
    struct softmax *m = ctx;
    hog_softmax_end(&m->km, false, m->wk[0].k.buf, 0, m->km.nw, len);
}

static hog_status stream_run(void *ctx, unsigned tid, unsigned T,
                             const struct hog_drive_span *sp, hog_err *err)
{
    (void)tid, (void)T;
    struct softmax *m = ctx;
    struct hog_stream_win *win = &m->se->win;
    for (uint64_t from = sp->from; from < sp->to;) {
        uint64_t blk = hog_drive_seg_next(&m->g, &m->sch, sp, from);
        uint64_t left;
        bool fresh;
        hog_status st = hog_stream_walk_next(&m->walk, &left, &fresh, err);
        if (st == HOG_OK && fresh)
            st = window_classes(m, &m->ix, win, m->wcls, from, err);
        if (st != HOG_OK)
            return st;
        blk = blk < left ? blk : left;
        for (uint64_t b = 0; b < blk; b++) {
            uint64_t r;
            const hog_data *cd = hog_stream_walk_row(&m->walk, b, &r);
            hog_softmax_run(&m->km, false, &m->wk[0].k, cd,
                            m->wcls + win->first[cd - win->d], &r, 1,
                            m->g.i + (uint32_t)b, 1);
        }
        m->walk.pos += blk;
        m->g.i += (uint32_t)blk;
        from += blk;
    }
    return HOG_OK;
}

static void stream_block_end(void *ctx, unsigned tid, unsigned T)
{
    (void)tid, (void)T;
    hog_drive_seg_close(&((struct softmax *)ctx)->g);
}

static hog_status stream_draw(void *ctx, unsigned epoch, bool resumed,
                              hog_err *err)
{
    (void)resumed; /* a stream does not resume */
    return hog_stream_epochs_draw(((struct softmax *)ctx)->se, epoch, err);
}

static void stream_begin(void *ctx, unsigned tid, unsigned T, unsigned epoch)
{
    struct softmax *m = ctx;
    struct hog_stream_epochs *se = m->se;
    begin(ctx, tid, T, epoch);
    hog_stream_walk_begin(&m->walk, se->s, &se->win, &se->ord, se->seq);
}

/* The epoch's last window goes back to the ring for the read-ahead. */
static void stream_model(void *ctx, unsigned tid, unsigned T)
{
    struct softmax *m = ctx;
    hog_stream_win_release(m->se->s, &m->se->win);
    model(ctx, tid, T);
}

/* A stream keeps no checkpoint: the cancel flag ends the run here. */
static hog_status stream_save(void *ctx, struct hog_train_state *at,
                              bool cut, hog_err *err)
{
    (void)ctx, (void)cut;
    return hog_fit_stream_interrupted((unsigned)at->epoch, at->pos, err);
}

static const struct hog_drive_ops stream_ops = {
    .draw = stream_draw,
    .begin = stream_begin,
    .run = stream_run,
    .block_end = stream_block_end,
    .model = stream_model,
    .report = report,
    .save = stream_save,
};

static hog_status train_stream(struct softmax *m)
{
    struct hog_fit *f = m->f;
    hog_err *err = m->err;
    struct hog_stream_epochs se;
    m->se = &se;
    m->g = (struct hog_drive_seg){ .end = stream_end, .ctx = m };
    hog_status st = hog_stream_epochs_init(&se, f, err);
    if (st == HOG_OK)
        st = hog_class_index_init(&m->ix, f->model->classes, m->km.k, err);
    if (st == HOG_OK) {
        uint64_t most = hog_stream_window_rows_max(se.ord.in,
                                                   hog_stream_window(se.s));
        if (!(m->wcls = malloc((most ? most : 1) * sizeof *m->wcls)))
            st = hog_errf(err, HOG_ENOMEM, "out of memory for the classes "
                          "of %llu rows", (unsigned long long)most);
    }
    m->dv = (struct hog_drive){ .f = f, .ops = &stream_ops, .ctx = m,
                                .n = f->train->m.rows, .rows = true };
    if (st == HOG_OK && (st = hog_drive_begin(&m->dv, err)) == HOG_OK) {
        hog_drive_job(&m->dv, 0, 1);
        st = m->dv.st;
    }
    hog_stream_epochs_free(&se);
    hog_class_index_free(&m->ix);
    free(m->wcls);
    m->se = NULL;
    return st;
}

/* ---- set-up ------------------------------------------------------------------ */

/* The threads' shards (rows p, p + T, ...) and scratch. */
static hog_status alloc_workers(struct softmax *m, hog_err *err)
{
    const unsigned T = m->nthreads;
    const uint64_t n = m->d->m.rows;
    m->wk = aligned_alloc(HOG_CACHELINE, T * sizeof *m->wk);
    if (!m->wk)
        return hog_errf(err, HOG_ENOMEM, "out of memory for %u threads", T);
    memset(m->wk, 0, T * sizeof *m->wk);
    for (unsigned p = 0; p < T; p++) {
        struct worker *w = &m->wk[p];
        w->ord.n = m->f->stream ? 0 : n > p ? (n - p + T - 1) / T : 0;
        w->ord.rows = malloc((w->ord.n ? w->ord.n : 1) * sizeof *w->ord.rows);
        if (!w->ord.rows)
            return hog_errf(err, HOG_ENOMEM, "out of memory for the rows "
                            "of %u threads", T);
        hog_status st = hog_softmax_work_init(&w->k, &m->km, m->d, err);
        if (st != HOG_OK)
            return st;
        for (uint64_t k = 0; k < w->ord.n; k++)
            w->ord.rows[k] = p + k * T;
        /* stream p of the seed: thread 0 of 1 draws the serial order */
        hog_rng_seed(&w->ord.rng, m->f->o->seed, p);
    }
    return HOG_OK;
}

/* Checkpoints: after whole epochs only, as Hogwild!'s (hogwild.c): the
 * threads' places inside an epoch are not one position. Resuming puts the
 * saved weights and sums in place and replays each thread's shuffles from
 * the seed; the serial trainer and one thread continue bit for bit. A
 * warm start from a model's optimizer state continues its sums and its
 * step count (the driver replays its epochs' shuffles), and is where a
 * cut before the first epoch's end stands; a run that keeps its state
 * (save_state) takes it as a checkpoint's after its last epoch (save). */
static hog_status checkpoint_setup(struct softmax *m, hog_err *err)
{
    struct hog_fit *f = m->f;
    const struct hog_train_state *r = f->resume;
    const struct hog_softmax *km = &m->km;
    const uint64_t n = m->d->m.rows;
    struct hog_train_state *last = &m->last;
    hog_rng_seed(&last->rng, f->o->seed, 0);
    if (f->warm && !r) {
        hog_softmax_state_warm(&m->km, f->warm);
        m->t = f->warm->t_global;
    }
    if (!f->o->checkpoint && !r)
        return HOG_OK; /* a rows cadence: refused by the conflicts' table */
    last->pos = n;
    hog_status st = hog_softmax_state_alloc(km, last, err);
    if (st != HOG_OK)
        return st;
    if (!r) {
        /* the start a cut before epoch 1's end saves: a warm start's
         * weights, sums and steps (else zero) */
        if (f->init)
            hog_softmax_state_keep(km, f->init, last);
        last->t_global = m->t;
        return HOG_OK;
    }
    /* a run warm-started from a model's state counts its steps first (the
     * driver replays their epochs: hog_drive_begin) */
    struct hog_train_state own = *r;
    own.t_global -= m->pool ? 0 : hog_train_state_steps_before(r, n);
    bool after;
    if ((st = hog_softmax_state_restore(&m->km, &own, n, f->model->w, &after,
                                        err)) != HOG_OK)
        return st;
    hog_softmax_state_keep(km, r->w, last);
    last->epoch = r->epoch;
    last->pos = r->pos;
    last->t_global = r->t_global;
    last->rng = r->rng;
    m->t = r->t_global;
    (void)after; /* the driver replays each thread's shuffles */
    return HOG_OK;
}

static void destroy(struct softmax *m)
{
    if (m->wk)
        for (unsigned p = 0; p < m->nthreads; p++) {
            free(m->wk[p].ord.rows);
            hog_softmax_work_free(&m->wk[p].k);
        }
    free(m->wk);
    hog_softmax_free(&m->km);
    free(m->cls);
    hog_train_state_free(&m->last);
    hog_sgd_free(&m->sch);
}

hog_status hog_softmax_train(struct hog_fit *f, hog_err *err)
{
    const hog_train_opts *o = f->o;
    const hog_model *mo = f->model;
    struct softmax m = { .f = f, .d = f->train, .err = err };
    struct hog_topo *topo = NULL;
    if (mo->n_classes < 2 || m.d->n_features != mo->n_features)
        return hog_errf(err, HOG_EINVAL, "the softmax trainer needs a model "
                        "of K classes over the training data's features");
    /* Streamed: serial, one pass of the chunks per epoch, from zero, in
     * one process and without checkpoints (the conflicts' table refuses
     * the rest). */
    hog_status st = hog_sgd_init_schedule(&m.sch, o, m.d, err);
    if (st != HOG_OK)
        return st;
    if ((!f->stream &&
         (st = hog_softmax_classes(mo, m.d, &m.cls, err)) != HOG_OK) ||
        (st = hog_softmax_init(&m.km, &m.sch, mo->n_classes, mo->n_features,
                               mo->bias, f->init, err)) != HOG_OK)
        goto out;
    m.km.tally = f->hooks.progress != NULL;
    if (o->algo == HOG_ALGO_HOGWILD) {
        st = hog_pool_for_opts(o, o->threads, HOG_POOL_BIND_OPTS, &topo,
                               &m.pool, err);
        if (st != HOG_OK)
            goto out;
        m.nthreads = hog_pool_size(m.pool);
        m.shared = true;
    } else {
        m.nthreads = 1;
    }
    if ((st = alloc_workers(&m, err)) != HOG_OK ||
        (st = checkpoint_setup(&m, err)) != HOG_OK)
        goto out;
    if (f->stream) {
        st = train_stream(&m);
        goto out;
    }
    m.dv = (struct hog_drive){ .f = f, .ops = &softmax_ops, .ctx = &m,
                               .n = m.d->m.rows, .n_orders = m.nthreads,
                               .blocks = hog_fit_average_blocks(f),
                               .warm_state = !m.pool };
    m.dv.net = m.dv.blocks > 0;
    if ((st = hog_drive_begin(&m.dv, err)) != HOG_OK)
        goto out;
    if (m.pool)
        hog_pool_run(m.pool, train_job, &m);
    else
        train_job(&m, 0, 1);
    st = m.dv.st;
out:
    destroy(&m);
    hog_pool_destroy(m.pool);
    hog_topo_free(topo);
    return st;
}
