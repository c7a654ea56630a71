/*
 * Hogwild! and the locked update modes, on a pool of pinned threads.
 *
 * Objective and update: those of the serial trainer (serial.c, and the
 * kernel in src/core/sgd.c): proximal SGD steps on
 *
 *     (1/n) sum_i loss(y_i, w.x_i) + l2/2 |w|^2 + l1 |w|_1.
 *
 * Hogwild! (Niu, Recht, Ré, Wright, NIPS 2011): T threads run those steps at
 * once on ONE weight vector, with no locks: every load and store of a weight
 * is a relaxed atomic, a racing store may overwrite another thread's update
 * (a lost update), and with sparse rows that rarely touch the same weights
 * the method still converges at nearly the serial rate per step.
 *
 * Work and time. Thread p of T owns the shard of rows i with i mod T = p
 * (so that a file sorted by label still gives every thread both classes) and
 * shuffles it every epoch with its own RNG stream p of the seed; serial SGD
 * shuffles all rows with stream 0, so one thread replays the serial run
 * exactly. Thread p's k-th row of the epoch is step p + k T of a virtual
 * interleaved clock, the step numbers the kernel's schedule and lazy
 * regularization use: with T threads the epoch still has n steps, each with
 * its step size and shrink, as in serial SGD. A thread that has run all of
 * its shard's rows of a segment claims the rest of another's (run_segment),
 * each row with its owner's step number, so a slowed-down thread does not
 * hold the barrier.
 *
 * Lazy regularization under races. The kernel keeps per weight a stamp, the
 * first step whose shrink the weight lacks, and before a step brings the
 * row's weights forward to that step in closed form (sgd.c). Threads run
 * their steps out of virtual order, so a weight may already be stamped past
 * the step at hand (a thread further ahead caught it up): then the shrink is
 * not applied again and only the gradient is added; stamps only grow within
 * a segment. Two threads that catch up one weight at once may both shrink
 * it, and a racing store may drop a catch-up or a gradient: each is one
 * more lost update of the kind Hogwild! already accepts, bounded by one
 * step's shrink or gradient, never a torn or stale-forever value. At the end
 * of each segment (an epoch, or less) all threads stop at a barrier and
 * bring every weight up to date, so no weight ever misses regularization
 * for longer than a segment and the model written after each epoch is the
 * exact lazy-equals-eager state.
 *
 * Update modes (--update), the baselines of the paper; the arithmetic and
 * the random streams are the same in all, so the differences are the cost
 * of synchronisation alone: none (Hogwild!), atomic (each weight installed
 * by compare-and-swap, retried on conflict: no update is lost), striped
 * (spinlocks over 16-weight stripes, a row's stripes taken in ascending
 * order: the paper's AIG), mutex (one lock around each row's whole update:
 * the paper's round robin).
 *
 * Model replicas (--replicas; DimmWitted, Zhang and Ré, VLDB 2014): node
 * and core give each NUMA node, or each thread, its own model; the threads
 * of a replica run Hogwild! on it with their own interleaved clock, and
 * every sync_every rows all replicas are brought up to date and replaced by
 * their average (OpenBLAS saxpy/sscal/scopy, each thread over a slice of
 * the weights). sync_every = 0 never averages during training: the model is
 * the replicas' average after each epoch (one-shot averaging, Zinkevich et
 * al., NIPS 2010); with core replicas that is also the bench's control of
 * threads that share nothing.
 *
 * Hot-feature replicas (--hot K, hot.c): the K most frequent features and
 * the bias are kept per thread, the rest stays shared as above; each thread
 * runs the kernel on a view whose cold part is the shared memory, and at
 * every segment end the hot copies are averaged (the AdaGrad sums added).
 * With one thread and one fold per epoch the model is plain Hogwild!'s bit
 * for bit.
 *
 * The epochs, their sync blocks, averaging across processes, cancel,
 * checkpoints and resume are the epoch driver's (core/drive.h); this file
 * is its block step. Each thread polls the cancel flag (hog_drive_poll)
 * before each block of rows; once one sees it, all skip the rest of the
 * epoch and the last completed epoch's state is saved (fit.h).
 * Checkpoints are taken after whole epochs and resumed by the driver's
 * replay of each thread's shuffles.
 */
#include "hogwild/hogwild.h"

#include "core/sgd.h"
#include "core/sparse.h"
#include "pool/pool.h"

#include <assert.h>
#include <cblas.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

/* Level-1 OpenBLAS calls on at most this many floats stay on the calling
 * thread (OpenBLAS threads axpy only above 10000 elements), so that our
 * workers never start OpenBLAS's own threads. */
#define BLAS_CHUNK 8192

/* One model: the shared one, or a replica. Written between barriers by its
 * leader (its first thread) only; read by its threads after the barrier. */
struct replica {
    alignas(HOG_CACHELINE) struct hog_sgd s;
    struct hog_sgd_locks locks;
    unsigned nthreads;  /* threads training it */
    unsigned leader;    /* the first of them */
    uint64_t rows;      /* rows per epoch: the sum of its threads' shards */
    uint64_t t;         /* global step at which its next segment starts */
    uint64_t pos;       /* its epoch step at which its segment starts */
    uint64_t block_end; /* its epoch step at which the sync block ends */
    uint32_t len;       /* the running segment's length; 0: block done */
};

/* Per thread, cache lines of its own (plus the shard it points to). */
struct worker {
    alignas(HOG_CACHELINE) struct hog_order ord; /* its shard of the rows */
    size_t shard_bytes;
    unsigned replica; /* which model it trains */
    unsigned local;   /* its index among the replica's threads */
    struct hog_sgd view; /* --hot: the shared trainer on its own view */
    struct hog_sgd_tally tally; /* its rows' scores this epoch (progress on) */
    /* The running segment's rows of its shard: shard[next, end) are still
     * to claim, by it or, once a thread of its replica has run out of its
     * own, by that thread (set by the replica's leader before the barrier
     * that starts the segment). On a line of its own: the owner's claims
     * stay in its cache until a thief comes. */
    alignas(HOG_CACHELINE) _Atomic uint64_t next;
    uint64_t end;
};

struct hogwild {
    struct hog_fit *f;
    const hog_data *d;
    struct hog_pool *pool;
    hog_update mode;
    unsigned nthreads, nrep;
    struct replica *rep;
    struct worker *w;
    uint64_t n_weights;
    unsigned blocks;  /* sync blocks per epoch (1 without averaging) */
    uint64_t claim;   /* rows a thread claims at a time (run_segment) */
    bool average;     /* replicas averaged during training */
    float *ftrl_w;    /* FTRL's replicas never averaged: a replica's weights
                         on their way into the model's mean */
    bool net;         /* averaged across processes at every block's end */
    uint64_t syncs;   /* averagings so far (written by thread 0) */
    struct hog_drive dv; /* the epochs, blocks, checkpoints (core/drive.h) */
    struct hog_train_state last; /* checkpoints: the last completed epoch */
    struct hog_hot *hot; /* --hot K > 0: hot-feature replicas (hot.c) */
    uint64_t folds;      /* of the hot weights (written by thread 0) */
};

/* Worker p's rows of its replica's running segment, replica steps
 * [pos, pos + len): its k-th row is replica step local + k * nt, for k in
 * [*k0, *k1) of its shard. */
static void segment_rows(const struct replica *rp, const struct worker *w,
                         uint64_t *k0, uint64_t *k1)
{
    uint64_t nt = rp->nthreads, p = w->local, a = rp->pos, e = a + rp->len;
    *k0 = a <= p ? 0 : (a - p + nt - 1) / nt;
    *k1 = e <= p ? 0 : (e - p + nt - 1) / nt;
    if (*k1 > w->ord.n)
        *k1 = w->ord.n;
    if (*k0 > *k1)
        *k0 = *k1;
}

/* Up to `want` rows of v's running segment for the calling thread: the
 * first's index in v's shard and their number (0: none left). A thief
 * leaves the owner its last claim: the tail stays within one claim, and a
 * shard of one claim (tiny data) is always run by its owner. */
static uint64_t claim(struct worker *v, uint64_t want, bool thief,
                      uint64_t *k)
{
    /* read first: no write to the line of a thread that has finished */
    uint64_t next = atomic_load_explicit(&v->next, memory_order_relaxed);
    if (next >= v->end || (thief && v->end - next <= want))
        return 0;
    *k = atomic_fetch_add_explicit(&v->next, want, memory_order_relaxed);
    return *k >= v->end ? 0 : v->end - *k < want ? v->end - *k : want;
}

/* The thread's share of its replica's running segment: its own rows in
 * chunks of h->claim, then whatever the replica's other threads have not
 * claimed yet. A row keeps its step (its owner's interleaved clock) whoever
 * runs it, so the schedule and the lazy regularization see the same steps;
 * claiming only keeps a thread that the machine slowed down (another
 * process on its core, longer rows in its shard) from holding the barrier.
 * One thread per replica: its own rows in order, in the kernel's largest
 * blocks, as before. */
static uint64_t run_segment(struct hogwild *h, unsigned tid,
                            struct worker *me, struct replica *rp)
{
    uint64_t ran = 0;
    const uint32_t nt = rp->nthreads;
    const uint64_t a = rp->pos, want = nt > 1 ? h->claim : HOG_SGD_BLOCK;
    for (unsigned i = 0; i < h->nthreads; i++) {
        struct worker *v = &h->w[(tid + i) % h->nthreads];
        if (v->replica != me->replica)
            continue;
        uint64_t k, blk;
        while ((blk = claim(v, want, v != me, &k)) != 0) {
            /* SIGINT/SIGTERM: finish this block, skip the rest of the epoch */
            if (hog_drive_poll(&h->dv))
                return ran;
            uint32_t t = (uint32_t)(v->local + k * nt - a);
            struct hog_sgd_tally *tl = h->f->hooks.progress ? &me->tally : NULL;
            if (h->hot)
                hog_sgd_run_tally(&me->view, &h->hot->data, v->ord.rows + k,
                                  (uint32_t)blk, t, nt, h->mode, &rp->locks,
                                  tl);
            else
                hog_sgd_run_tally(&rp->s, h->d, v->ord.rows + k, (uint32_t)blk,
                                  t, nt, h->mode, &rp->locks, tl);
            if (tid == 0 && v == me) {
                /* the progress of thread 0's replica, scaled to all rows */
                uint64_t done = (v->local + (k + blk) * nt) *
                                h->d->m.rows / rp->rows;
                hog_drive_tick(&h->dv, done);
            }
            ran += blk;
        }
    }
    return ran;
}

/* The replicas' vector v's floats [lo, hi), each replaced by their mean:
 * w, AdaGrad's sums, or FTRL's words read as floats (z and r side by side,
 * two to a weight). Between barriers the arrays are private to this
 * thread's slice, so plain float access is safe (same layout). */
static float *rep_vec(struct hogwild *h, unsigned r, int v)
{
    const struct hog_sgd *s = &h->rep[r].s;
    return v == 2 ? (float *)s->zn : v == 1 ? (float *)s->g2 : (float *)s->w;
}

static void average_floats(struct hogwild *h, int v, uint64_t lo, uint64_t hi)
{
    const float inv = 1.0f / (float)h->nrep;
    for (uint64_t a = lo; a < hi; a += BLAS_CHUNK) {
        int n = (int)(hi - a < BLAS_CHUNK ? hi - a : BLAS_CHUNK);
        float *w0 = rep_vec(h, 0, v) + a;
        for (unsigned r = 1; r < h->nrep; r++)
            cblas_saxpy(n, 1.0f, rep_vec(h, r, v) + a, 1, w0, 1);
        cblas_sscal(n, inv, w0, 1);
        for (unsigned r = 1; r < h->nrep; r++)
            cblas_scopy(n, w0, 1, rep_vec(h, r, v) + a, 1);
    }
}

/* Replaces weights [lo, hi) of every replica by their average. No step
 * runs. FTRL's replicas average their z and their r = sqrt(n) (McMahan's
 * per-coordinate sums, as parameter mixing averages them): each replica
 * has taken the same number of steps T, so the mean is again the state of
 * a replica after T steps, whose weights follow from it in closed form. */
static void average_slice(struct hogwild *h, uint64_t lo, uint64_t hi)
{
    if (h->rep[0].s.zn) {
        average_floats(h, 2, 2 * lo, 2 * hi);
        return;
    }
    average_floats(h, 0, lo, hi);
    if (h->rep[0].s.g2)
        average_floats(h, 1, lo, hi);
}

/* The epoch's model into f->model->w[lo, hi): the shared weights, or the
 * replicas' average (already equal after an averaging): their weights'
 * mean, FTRL's computed from each replica's sums. */
static void model_slice(struct hogwild *h, uint64_t lo, uint64_t hi)
{
    float *m = h->f->model->w;
    if (h->hot) {
        hog_hot_model(h->hot, lo, hi, h->d->n_features, m);
        return;
    }
    if (h->nrep == 1 || h->average) {
        hog_sgd_copy_weights_range(&h->rep[0].s, m, lo, hi);
        return;
    }
    const float inv = 1.0f / (float)h->nrep;
    for (uint64_t a = lo; a < hi; a += BLAS_CHUNK) {
        int n = (int)(hi - a < BLAS_CHUNK ? hi - a : BLAS_CHUNK);
        if (h->ftrl_w) /* FTRL: each replica's weights computed first */
            hog_sgd_copy_weights_range(&h->rep[0].s, m, a, a + (uint64_t)n);
        else
            cblas_scopy(n, (const float *)h->rep[0].s.w + a, 1, m + a, 1);
        for (unsigned r = 1; r < h->nrep; r++) {
            const float *x = (const float *)h->rep[r].s.w;
            if (h->ftrl_w) {
                hog_sgd_copy_weights_range(&h->rep[r].s, h->ftrl_w, a,
                                           a + (uint64_t)n);
                x = h->ftrl_w;
            }
            cblas_saxpy(n, 1.0f, x + a, 1, m + a, 1);
        }
        cblas_sscal(n, inv, m + a, 1);
    }
}

/* ---- the step (core/drive.h's block step) --------------------------------- */

/* Scale-out (fit.h): at a block's end every thread has stopped and every
 * weight is current (replicas averaged). Thread 0 hands the driver the
 * model (the staging buffer) to average across processes while the others
 * wait; then each thread copies its slice of the result into every
 * replica. */
static float *net_get(void *ctx, uint64_t *len)
{
    struct hogwild *h = ctx;
    float *m = h->f->model->w;
    for (uint64_t j = 0; j < h->n_weights; j++)
        m[j] = hog_w_load_relaxed(h->rep[0].s.w, j);
    *len = h->n_weights;
    return m;
}

static void net_put(void *ctx, unsigned tid, unsigned nthreads,
                    const float *m)
{
    struct hogwild *h = ctx;
    uint64_t lo, hi;
    hog_slice(h->n_weights, tid, nthreads, &lo, &hi);
    for (unsigned r = 0; r < h->nrep; r++)
        for (uint64_t j = lo; j < hi; j++)
            atomic_store_explicit(&h->rep[r].s.w[j], m[j],
                                  memory_order_relaxed);
}

static struct hog_order *order(void *ctx, unsigned p)
{
    return &((struct hogwild *)ctx)->w[p].ord;
}

static void begin(void *ctx, unsigned tid, unsigned nthreads, unsigned epoch)
{
    (void)nthreads, (void)epoch;
    struct hogwild *h = ctx;
    if (tid == 0)
        for (unsigned r = 0; r < h->nrep; r++)
            h->rep[r].pos = 0;
    h->w[tid].tally = (struct hog_sgd_tally){ 0 };
}

/* Sync block sp->block of the epoch, on every worker, in segments of the
 * lazy regularization. Every thread passes the same barriers. */
static hog_status run_block(void *ctx, unsigned tid, unsigned nthreads,
                            const struct hog_drive_span *sp, hog_err *err)
{
    (void)err;
    struct hogwild *h = ctx;
    struct worker *me = &h->w[tid];
    struct replica *rp = &h->rep[me->replica];
    uint64_t lo, hi;

    if (tid == rp->leader)
        rp->block_end = rp->rows * (sp->block + 1) / h->blocks;
    for (;;) {
        if (tid == rp->leader) {
            uint64_t left = rp->block_end - rp->pos;
            rp->len = left == 0 ? 0
                      : hog_sgd_segment_begin(
                            &rp->s, rp->t,
                            left < UINT32_MAX ? (uint32_t)left
                                              : UINT32_MAX);
            /* the segment's rows, claimable once the barrier passes */
            for (unsigned p = 0; p < nthreads; p++) {
                struct worker *v = &h->w[p];
                uint64_t k0, k1;
                if (v->replica != me->replica)
                    continue;
                segment_rows(rp, v, &k0, &k1);
                atomic_store_explicit(&v->next, k0, memory_order_relaxed);
                v->end = k1;
            }
        }
        hog_pool_barrier(h->pool);
        bool more = false;
        for (unsigned r = 0; r < h->nrep; r++)
            more |= h->rep[r].len != 0;
        if (!more)
            return HOG_OK;
        if (h->hot) {
            /* the segment's prefixes, seen through each view */
            hog_hot_view(h->hot, &rp->s, tid, &me->view);
        }
        uint64_t ran = rp->len ? run_segment(h, tid, me, rp) : 0;
        if (h->hot) {
            /* its own weights, and how many rows its copies saw (the
             * fold's weight): before the barrier */
            hog_hot_catch_up_private(h->hot, &me->view, rp->len);
            h->hot->ran[tid] = ran;
        }
        hog_pool_barrier(h->pool);
        if (h->hot) {
            /* the cold weights up to date and the hot copies folded:
             * disjoint memory, no barrier between */
            hog_hot_segment_end(h->hot, &me->view, tid, nthreads,
                                rp->len);
            hog_hot_fold(h->hot, tid, nthreads);
            if (tid == 0)
                h->folds++;
        } else {
            /* every weight of the replica up to date; threads share it */
            hog_slice(rp->s.n_weights, me->local, rp->nthreads, &lo, &hi);
            if (rp->len)
                hog_sgd_catch_up_range(&rp->s, lo, hi, rp->len);
        }
        hog_pool_barrier(h->pool);
        if (tid == rp->leader) {
            rp->t += rp->len;
            rp->pos += rp->len;
        }
    }
}

/* The block's end: the replicas replaced by their average. */
static void block_end(void *ctx, unsigned tid, unsigned nthreads)
{
    struct hogwild *h = ctx;
    uint64_t lo, hi;
    if (!h->average)
        return;
    hog_slice(h->n_weights, tid, nthreads, &lo, &hi);
    average_slice(h, lo, hi);
    if (tid == 0)
        h->syncs++;
}

static void model(void *ctx, unsigned tid, unsigned nthreads)
{
    struct hogwild *h = ctx;
    uint64_t lo, hi;
    hog_slice(h->n_weights, tid, nthreads, &lo, &hi);
    model_slice(h, lo, hi);
}

static void report(void *ctx)
{
    struct hogwild *h = ctx;
    h->f->replica_syncs = h->syncs;
    struct hog_sgd_tally all = { 0 }; /* in thread order */
    for (unsigned p = 0; p < h->nthreads; p++)
        hog_sgd_tally_merge(&all, &h->w[p].tally);
    hog_sgd_tally_report(h->f, &h->rep[0].s, &all);
}

static void barrier(void *ctx)
{
    hog_pool_barrier(((struct hogwild *)ctx)->pool);
}

/* ---- checkpoints (epoch boundaries) ------------------------------------------------ */

/* The state after epoch `epoch` into h->last (thread 0, after the epoch's
 * model is complete: f->model->w holds the weights, every segment ended). */
static void keep_state(struct hogwild *h, unsigned epoch)
{
    struct hog_train_state *st = &h->last;
    uint64_t nw = h->n_weights;
    st->epoch = epoch;
    st->pos = h->d->m.rows;
    st->t_global = h->rep[0].t;
    st->rng = h->w[0].ord.rng;
    if (!st->w) /* no checkpoint file: where training stands, for the message */
        return;
    memcpy(st->w, h->f->model->w, nw * sizeof *st->w);
    if (h->rep[0].s.zn) { /* FTRL: z and r (sgd_state.c's layout) */
        hog_sgd_ftrl_get(&h->rep[0].s, st->ftrl_z, st->ftrl_sqrt_n);
        return;
    }
    if (!st->adagrad_g2)
        return;
    if (h->hot)
        hog_hot_g2(h->hot, nw, h->d->n_features, st->adagrad_g2);
    else
        for (uint64_t j = 0; j < nw; j++)
            st->adagrad_g2[j] = hog_w_load_relaxed(h->rep[0].s.g2, j);
}

static void keep_job(void *h, unsigned epoch) { keep_state(h, epoch); }

/* After an epoch or a cut (thread 0): hog_fit_epoch_checkpoint (fit.h). */
static hog_status save(void *ctx, struct hog_train_state *at, bool cut,
                       hog_err *err)
{
    struct hogwild *h = ctx;
    return hog_fit_epoch_checkpoint(h->f, &h->last, (unsigned)at->epoch, cut,
                                    keep_job, h, err);
}

static const struct hog_drive_ops hogwild_ops = {
    .order = order,
    .begin = begin,
    .run = run_block,
    .block_end = block_end,
    .net_get = net_get,
    .net_put = net_put,
    .model = model,
    .report = report,
    .save = save,
    .barrier = barrier,
};

/* All epochs in one job: the workers stay up between epochs (a barrier,
 * not a wake-up from the pool, and none at all with one thread), and
 * thread 0 times each epoch and runs the front door's epoch_end while the
 * others wait. */
static void train_job(void *arg, unsigned tid, unsigned nthreads)
{
    hog_drive_job(&((struct hogwild *)arg)->dv, tid, nthreads);
}

/* ---- set-up ------------------------------------------------------------------- */

/* Which replica each thread trains; returns the number of replicas. */
static unsigned map_replicas(struct hogwild *h, hog_replicas mode)
{
    unsigned T = h->nthreads, R = 0;
    for (unsigned p = 0; p < T; p++) {
        unsigned r = p;
        if (mode == HOG_REPLICAS_SHARED) {
            r = 0;
        } else if (mode == HOG_REPLICAS_NODE) {
            /* threads of one NUMA node share a replica (unpinned: one) */
            int node = hog_pool_place(h->pool, p)->numa;
            for (r = 0; r < p; r++)
                if (hog_pool_place(h->pool, r)->numa == node)
                    break;
            if (r < p)
                r = h->w[r].replica;
            else
                r = R;
        }
        h->w[p].replica = r;
        if (r + 1 > R)
            R = r + 1;
    }
    return R;
}

static void destroy(struct hogwild *h)
{
    if (h->w)
        for (unsigned p = 0; p < h->nthreads; p++)
            if (h->w[p].ord.rows)
                hog_pool_free_local(h->pool, h->w[p].ord.rows,
                                    h->w[p].shard_bytes);
    if (h->rep)
        for (unsigned r = 0; r < h->nrep; r++) {
            hog_sgd_locks_free(&h->rep[r].locks);
            hog_sgd_free(&h->rep[r].s);
        }
    free(h->rep);
    free(h->ftrl_w);
    free(h->w);
    if (h->hot)
        hog_hot_free(h->hot);
    free(h->hot);
    hog_train_state_free(&h->last);
}

/* Puts weights w and AdaGrad sums g2 (original feature order) into the
 * shared model, or into every hot view. */
static void load_weights(struct hogwild *h, const float *w, const float *g2)
{
    const uint64_t nw = h->n_weights, nf = h->d->n_features;
    struct hog_hot *hot = h->hot;
    for (unsigned v = 0; v < (hot ? hot->nviews : 1); v++) {
        _Atomic float *dw = hot ? hot->view[0][v] : h->rep[0].s.w;
        _Atomic float *dg = hot ? hot->view[2][v] : h->rep[0].s.g2;
        for (uint64_t j = 0; j < nw; j++) {
            uint64_t k = !hot ? j : j < nf ? hot->map[j] : hot->n_features;
            atomic_store_explicit(&dw[k], w[j], memory_order_relaxed);
            if (dg && g2)
                atomic_store_explicit(&dg[k], g2[j], memory_order_relaxed);
        }
    }
}

/* Checkpoints: after whole epochs only (the threads' places inside an
 * epoch are not one position), one shared model. Resuming puts the saved
 * weights and sums in place and replays each thread's shuffles from the
 * seed, so every thread continues with the row order it would have had;
 * with one thread the run equals the uninterrupted one bit for bit (with
 * more, Hogwild!'s races make no two runs equal anyway). */
static hog_status checkpoint_setup(struct hogwild *h, hog_err *err)
{
    struct hog_fit *f = h->f;
    const struct hog_train_state *r = f->resume;
    if (!f->o->checkpoint && !r)
        return HOG_OK;
    /* one shared model, whole epochs: the conflicts' table refuses
     * replicas and a rows cadence (src/train/conflicts_trainers.c) */
    assert(h->nrep == 1 && !f->ckpt_rows);
    uint64_t nw = h->n_weights, n = h->d->m.rows;
    struct hog_train_state *st = &h->last;
    size_t bytes = (nw ? nw : 1) * sizeof(float);
    st->n_weights = nw;
    st->pos = n;
    const bool ftrl = h->rep[0].s.zn != NULL;
    st->w = calloc(1, bytes);
    /* AdaGrad's sums, or FTRL's z and sqrt(n) (fit.h's unions) */
    st->adagrad_g2 = h->rep[0].s.g2 || ftrl ? calloc(1, bytes) : NULL;
    st->ftrl_z = ftrl ? calloc(1, bytes) : NULL;
    if (!st->w || ((h->rep[0].s.g2 || ftrl) && !st->adagrad_g2) ||
        (ftrl && !st->ftrl_z))
        return hog_errf(err, HOG_ENOMEM, "out of memory for a checkpoint of "
                        "%llu weights", (unsigned long long)nw);
    hog_rng_seed(&st->rng, f->o->seed, 0);
    if (!r)
        return HOG_OK;
    bool after;
    if (!hog_train_state_at_epoch(r, n, &after) || r->n_weights != nw ||
        (r->adagrad_g2 == NULL) != (st->adagrad_g2 == NULL) ||
        (r->w_lazy == NULL) != (st->w_lazy == NULL))
        return hog_errf(err, HOG_EINVAL, "Hogwild! resumes from checkpoints "
                        "written after a whole epoch (this one is at row "
                        "%llu of epoch %llu, or of another trainer)",
                        (unsigned long long)r->pos,
                        (unsigned long long)r->epoch);
    if (ftrl) {
        hog_sgd_ftrl_put(&h->rep[0].s, r->ftrl_z, r->ftrl_sqrt_n,
                         r->t_global);
        memcpy(st->ftrl_z, r->ftrl_z, bytes);
    } else {
        load_weights(h, r->w, r->adagrad_g2);
    }
    memcpy(st->w, r->w, bytes);
    /* the model too: a checkpoint after the last epoch runs none */
    memcpy(f->model->w, r->w, bytes);
    if (st->adagrad_g2) /* or FTRL's sqrt(n): the same array */
        memcpy(st->adagrad_g2, r->adagrad_g2, bytes);
    st->epoch = r->epoch;
    st->pos = r->pos;
    st->t_global = r->t_global;
    st->rng = r->rng;
    h->rep[0].t = r->t_global;
    return HOG_OK; /* the driver replays each thread's shuffles */
}

/* Each replica's pages faulted in by its first thread, on that thread's
 * NUMA node, before the first epoch (hog_sgd_populate). */
static void populate_job(void *arg, unsigned tid, unsigned nthreads)
{
    (void)nthreads;
    struct hogwild *h = arg;
    struct replica *rp = &h->rep[h->w[tid].replica];
    if (rp->leader == tid)
        hog_sgd_populate(&rp->s);
}

hog_status hog_hogwild_train(struct hog_fit *f, hog_err *err)
{
    const hog_train_opts *o = f->o;
    const hog_data *d = f->train;
    uint64_t n = d->m.rows;
    struct hog_topo *topo = NULL;
    struct hogwild h = { .f = f, .d = d, .mode = o->update };

    hog_status st = hog_pool_for_opts(o, o->threads, HOG_POOL_BIND_OPTS,
                                      &topo, &h.pool, err);
    if (st != HOG_OK)
        goto out;
    unsigned T = h.nthreads = hog_pool_size(h.pool);
    h.w = aligned_alloc(HOG_CACHELINE, T * sizeof *h.w);
    if (!h.w)
        goto oom;
    memset(h.w, 0, T * sizeof *h.w);
    h.nrep = map_replicas(&h, o->replicas);
    h.rep = aligned_alloc(HOG_CACHELINE, h.nrep * sizeof *h.rep);
    if (!h.rep)
        goto oom;
    memset(h.rep, 0, h.nrep * sizeof *h.rep);

    /* Shards: thread p gets rows p, p + T, p + 2T, ... */
    for (unsigned p = 0; p < T; p++) {
        struct worker *w = &h.w[p];
        struct replica *rp = &h.rep[w->replica];
        w->ord.n = n > p ? (n - p + T - 1) / T : 0;
        w->shard_bytes = (w->ord.n ? w->ord.n : 1) * sizeof *w->ord.rows;
        w->ord.rows = hog_pool_alloc_local(h.pool, p, w->shard_bytes);
        if (!w->ord.rows)
            goto oom;
        for (uint64_t k = 0; k < w->ord.n; k++)
            w->ord.rows[k] = p + k * T;
        hog_rng_seed(&w->ord.rng, o->seed, p);
        if (rp->nthreads++ == 0)
            rp->leader = p;
        w->local = rp->nthreads - 1;
        rp->rows += w->ord.n;
    }
    for (unsigned r = 0; r < h.nrep; r++)
        if ((st = hog_sgd_init_unplaced(&h.rep[r].s, o, d, err)) != HOG_OK)
            goto out;
    hog_pool_run(h.pool, populate_job, &h);
    for (unsigned r = 0; r < h.nrep; r++) {
        h.rep[r].s.alone = h.rep[r].nthreads == 1;
        if (f->init) /* a warm start: every replica from it */
            hog_sgd_set_weights(&h.rep[r].s, f->init);
        if ((st = hog_sgd_locks_init(&h.rep[r].locks, o->update,
                                     &h.rep[r].s, err)) != HOG_OK)
            goto out;
    }
    /* About 2^14 nonzeros a claim: the kernel's call and the claim's
     * atomic add vanish against the rows, and the last claim of an epoch
     * is short enough to end it evenly. */
    uint64_t mean = n ? (d->m.off[n] - d->m.off[0]) / n : 0;
    h.claim = (UINT64_C(1) << 14) / (mean ? mean : 1);
    h.claim = h.claim < 16 ? 16 : h.claim > HOG_SGD_BLOCK ? HOG_SGD_BLOCK
                                                           : h.claim;
    h.n_weights = h.rep[0].s.n_weights;
    h.average = h.nrep > 1 && o->sync_every > 0;
    if (h.nrep > 1 && !h.average && h.rep[0].s.zn &&
        !(h.ftrl_w = malloc(h.n_weights * sizeof *h.ftrl_w)))
        goto oom;
    if (o->hot_features) {
        /* Averaging across processes reads and writes the shared model
         * (net_average), which the hot threads' views do not pass
         * through; replicas and striped locks do not see the views
         * either: the conflicts' table refuses all three
         * (src/train/conflicts_trainers.c). */
        assert(hog_fit_average_blocks(f) == 0 && h.nrep == 1 &&
               o->update != HOG_UPDATE_STRIPED);
        if (!(h.hot = calloc(1, sizeof *h.hot)))
            goto oom;
        if ((st = hog_hot_init(h.hot, d, &h.rep[0].s, o->hot_features, T,
                               err)) != HOG_OK)
            goto out;
        if (f->init) /* the views start from the warm weights too */
            load_weights(&h, f->init, NULL);
    }
    bool blocked = h.average || (h.hot && o->sync_every > 0);
    uint64_t blocks = blocked ? (n + o->sync_every - 1) / o->sync_every : 1;
    h.blocks = blocks > n ? (unsigned)n : (unsigned)blocks;
    if (h.blocks < 1)
        h.blocks = 1;
    /* Across processes: exactly the agreed number of blocks, replicas
     * averaged at each block's end first. */
    if ((h.net = hog_fit_average_blocks(f) > 0)) {
        h.average = h.nrep > 1;
        h.blocks = (unsigned)hog_fit_average_blocks(f);
    }

    if ((st = checkpoint_setup(&h, err)) != HOG_OK)
        goto out;
    h.dv = (struct hog_drive){ .f = f, .ops = &hogwild_ops, .ctx = &h,
                               .n = n, .blocks = h.blocks, .n_orders = T,
                               .net = h.net };
    if ((st = hog_drive_begin(&h.dv, err)) != HOG_OK)
        goto out;
    hog_pool_run(h.pool, train_job, &h);
    st = h.dv.st;
    if (f->hooks.hot_stats) {
        hog_hot_stats *hs = f->hooks.hot_stats;
        memset(hs, 0, sizeof *hs);
        if (h.hot) {
            hs->hot_features = h.hot->k;
            hs->bias_hot = h.hot->bias;
            hs->hot_nnz_share = h.hot->nnz_share;
            hs->setup_seconds = h.hot->setup_seconds;
            hs->folds = h.folds;
        }
    }
    goto out;
oom:
    st = hog_errf(err, HOG_ENOMEM, "out of memory for %u Hogwild! threads",
                  h.nthreads);
out:
    destroy(&h);
    hog_pool_destroy(h.pool);
    hog_topo_free(topo);
    return st;
}
