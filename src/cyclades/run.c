/*
 * Cyclades: conflict-free parallel SGD, the same model at every thread count.
 *
 * Objective and step: those of the serial trainer (src/core/sgd.c),
 *
 *     F(w) = (1/n) sum_i loss(y_i, w.x_i) + l2/2 |w|^2 + l1 |w|_1,
 *     step t on row x:  w <- prox( (1 - eta_t l2) w - eta_t loss'(y, w.x) x ).
 *
 * Each epoch the rows are taken in a seeded permutation, cut into batches
 * of B rows. Within a batch, rows that share a feature conflict; the
 * connected components of this bipartite row-feature graph (union-find
 * over the features of each row) are dealt to work groups, largest first,
 * each to the least-loaded group, and threads claim the groups (Pan, Lam,
 * Tu, Papailiopoulos, Zhang, Jordan, Ramchandran, Ré, Recht: "Cyclades:
 * Conflict-free Asynchronous Machine Learning", NIPS 2016; the authors
 * deal components to threads, here threads claim groups so that a
 * descheduled thread does not hold up the batch: CYC_GROUPS). A thread
 * runs its groups' rows in permutation order with
 * the plain kernel and relaxed stores; no weight is touched by two threads
 * of one batch, so the weights after the batch are those of the serial
 * run over the batch's rows in permutation order, whatever the threads.
 * A barrier separates batches. Segment step t of a row is its position in
 * the epoch's order, minus the segment's start: the lazy regularization
 * sees exactly the serial trainer's steps, and batches are split where a
 * kernel segment ends.
 *
 * Hot features (the bias and the frequent features, which leave the
 * conflict graph and step once per batch) are chosen in hot.c and stepped
 * in step.c, whose comment has the maths. The files of src/cyclades:
 * run.c (this: the epochs, as the epoch driver's block step,
 * core/drive.h), setup.c (the run's state), hot.c (the hot set, the cold
 * and hot views), partition.c (the epoch's row order, the
 * batches' components), step.c (the parallel job of an epoch),
 * checkpoint.c (checkpoints and resume), serial_ref.c (the serial
 * reference); internal.h is what they share, prof.h the phase timers
 * (-DHOG_CYC_PROF). The setup's passes over the data run on the pool's
 * threads too (docs/CYCLADES.md, "What runs on the pool's threads").
 */
#include "cyclades/internal.h"

#include "core/drive.h"

#include <stdlib.h>
#include <string.h>

#ifdef HOG_CYC_PROF
#include <stdio.h>
void hog_cyc_prof_print(const struct cyc *c)
{
    static const char *const name[CYC_P_COUNT] = {
        "prepare", "degrees", "hot set", "views", "threads", "partition",
        "stats partition", "epoch ends", "rows", "rows wait", "hot",
        "hot wait", "segment ends", "between batches"};
    double wall = 0, cpu = 0;
    fprintf(stderr, "cyclades profile, %u threads (seconds: wall, cpu)\n",
            c->T);
    for (int p = 0; p < CYC_P_ROWS; p++) {
        fprintf(stderr, "  %-16s %8.3f %8.3f\n", name[p], c->prof.wall[p],
                c->prof.cpu[p]);
        wall += c->prof.wall[p];
        cpu += c->prof.cpu[p];
    }
    fprintf(stderr, "  %-16s %8.3f %8.3f\n", "setup, all", wall, cpu);
    for (unsigned t = 0; t < c->T; t++) {
        const struct cyc_prof *p = &c->th[t].prof;
        wall = cpu = 0;
        for (int q = CYC_P_ROWS; q < CYC_P_COUNT; q++) {
            wall += p->wall[q];
            cpu += p->cpu[q];
        }
        fprintf(stderr, "  thread %u: epochs %.3f %.3f\n", t, wall, cpu);
        for (int q = CYC_P_ROWS; q < CYC_P_COUNT; q++)
            fprintf(stderr, "    %-14s %8.3f %8.3f\n", name[q], p->wall[q],
                    p->cpu[q]);
    }
}
#else
void hog_cyc_prof_print(const struct cyc *c) { (void)c; }
#endif

/* ---- the epochs: the epoch driver's block step (core/drive.h) ----------- */

/* The driver's loop runs on the calling thread (T = 1), whose pool is
 * free between epochs for the partition's passes; an epoch is one block,
 * the pool's job (step.c), which ticks, polls the cancel flag and writes
 * the checkpoints at batch ends itself. */
struct cyc_run {
    struct cyc c;
    struct hog_rng rows, batches; /* the permutation's, the batch order's */
    bool need_partition;          /* resumed: partition the order again */
    struct hog_drive dv;
};

/* The epoch's order (hog_cyc_next_order; resumed inside it: as drawn)
 * and, when it changed or the run resumed, its partition; then the
 * epoch's first kernel segment. */
static hog_status cyc_draw(void *ctx, unsigned epoch, bool resumed,
                           hog_err *err)
{
    struct cyc_run *r = ctx;
    struct cyc *c = &r->c;
    c->epoch = epoch;
    /* epoch 1's order comes drawn and partitioned with the set-up of a
     * run that starts afresh (hog_cyc_setup_shared) */
    bool drawn = epoch == 1 && c->first_drawn && !resumed;
    hog_status st;
    if (!drawn && !resumed && c->o->repartition &&
        (st = hog_cyc_own_order(c, err)) != HOG_OK)
        return st;
    if (!drawn &&
        ((!resumed && hog_cyc_next_order(c, &r->rows, &r->batches, epoch)) ||
         r->need_partition)) {
        double tp = hog_now();
        cyc_prof_lap(&c->prof, CYC_P_EPOCH_END, CYC_PROF_PROCESS);
        hog_cyc_partition(c, false);
        cyc_prof_lap(&c->prof, CYC_P_PARTITION, CYC_PROF_PROCESS);
        c->st.partition_seconds += hog_now() - tp;
        drawn = epoch == 1;
        r->need_partition = false;
    }
    if (drawn && c->f->hooks.cyclades_stats) { /* diagnostics */
        double ta = hog_now();
        hog_cyc_partition(c, true);
        cyc_prof_lap(&c->prof, CYC_P_STATS, CYC_PROF_PROCESS);
        r->dv.untimed += hog_now() - ta;
    }
    c->rows_rng = r->rows;
    if (!resumed) {
        c->start_bi = c->start_epos = 0;
        c->seg_lo = 0;
        c->seg_want = c->n < UINT32_MAX ? (uint32_t)c->n : UINT32_MAX;
        c->seg_len = hog_sgd_segment_begin(&c->s, c->t_global, c->seg_want);
    }
    c->ck_st = HOG_OK;
    atomic_store_explicit(&c->claim, 0, memory_order_relaxed);
    cyc_prof_lap(&c->prof, CYC_P_EPOCH_END, CYC_PROF_PROCESS);
    return HOG_OK;
}

static hog_status cyc_block(void *ctx, unsigned tid, unsigned T,
                            const struct hog_drive_span *sp, hog_err *err)
{
    (void)tid, (void)T, (void)sp, (void)err;
    struct cyc *c = &((struct cyc_run *)ctx)->c;
    hog_pool_run(c->pool, hog_cyc_run_job, c);
    cyc_prof_start(&c->prof, CYC_PROF_PROCESS);
    return c->ck_st;
}

static void cyc_model(void *ctx, unsigned tid, unsigned T)
{
    (void)tid, (void)T;
    struct cyc *c = &((struct cyc_run *)ctx)->c;
    if (c->softmax)
        hog_softmax_model_slice(&c->km, c->f->model->w, 0, c->km.nw);
    else
        hog_sgd_copy_weights(&c->s, c->f->model->w);
}

/* The epoch's training time, and the progressive loss of the batches
 * this run stepped, in order. */
static void cyc_report(void *ctx)
{
    struct cyc_run *r = ctx;
    struct cyc *c = &r->c;
    c->st.train_seconds += r->dv.seconds;
    if (!c->prog_loss)
        return;
    struct hog_sgd_tally tl = { 0 };
    for (uint64_t bi = c->start_bi; bi < c->nb; bi++) {
        uint64_t lo = c->visit[bi] * c->B, hi = min_u64(lo + c->B, c->n);
        for (uint64_t p = lo; p < hi; p++) {
            tl.loss += c->prog_loss[p];
            tl.right += c->prog_right[p];
        }
        tl.rows += hi - lo;
    }
    hog_sgd_tally_report(c->f, &c->s, &tl);
}

/* The checkpoints the driver writes: at the epoch's end. */
static hog_status cyc_save(void *ctx, struct hog_train_state *at, bool cut,
                           hog_err *err)
{
    (void)at, (void)cut, (void)err;
    struct cyc *c = &((struct cyc_run *)ctx)->c;
    return hog_cyc_checkpoint(c, c->n, hog_fit_cancelled(c->f));
}

/* The row cadence's checkpoint when the epoch's last batch crossed a
 * multiple (step.c leaves it to the epoch's end). */
static bool cyc_due(void *ctx)
{
    struct cyc *c = &((struct cyc_run *)ctx)->c;
    uint64_t len = c->n - hog_cyc_last_batch_start(c);
    return c->every &&
           c->t_global / c->every != (c->t_global - len) / c->every;
}

static hog_status cyc_resume(void *ctx, const struct hog_train_state *st,
                             uint64_t *open_from, hog_err *err)
{
    struct cyc_run *r = ctx;
    unsigned first;
    bool mid;
    (void)st, (void)open_from; /* the driver's first and mid agree */
    r->need_partition = true;
    return hog_cyc_resume(&r->c, &r->rows, &r->batches, &first, &mid, err);
}

static const struct hog_drive_ops cyc_ops = {
    .draw = cyc_draw,
    .run = cyc_block,
    .model = cyc_model,
    .report = cyc_report,
    .save = cyc_save,
    .due = cyc_due,
    .resume = cyc_resume,
};

static hog_status train(struct hog_fit *f, bool softmax, hog_err *err)
{
    struct cyc_run run, *r = &run; /* aligned as its cache lines ask */
    memset(r, 0, sizeof *r);
    struct cyc *c = &r->c;
    double t_start = hog_now();
    hog_status st = hog_cyc_prepare(c, f, true, softmax, err);
    if (st != HOG_OK)
        goto out;
    hog_rng_seed(&r->rows, c->o->seed, 0);
    hog_rng_seed(&r->batches, c->o->seed, 1);
    /* a resumed run or a warm state replays its orders (cyc_resume) */
    const bool fresh = !f->resume && !f->warm;
    if ((st = hog_cyc_alloc_threads(c, err)) != HOG_OK ||
        (st = hog_cyc_setup_shared(c, fresh, &r->rows, &r->batches,
                                   err)) != HOG_OK)
        goto out;
    c->gcur = malloc(c->G * sizeof *c->gcur);
    c->rd = calloc(c->B, sizeof *c->rd);
    if (!c->gcur || !c->rd) {
        st = hog_errf(err, HOG_ENOMEM, "out of memory for the partition");
        goto out;
    }
    c->st.setup_seconds = hog_now() - t_start;
    c->st.threads = c->T;
    c->st.batch_size = c->B;
    c->st.batches = c->nb;
    c->st.hot_degree = c->o->cyclades_hot_degree ? c->tau : 0;
    c->st.bias_hot = c->bias_hot;

    c->err = err;
    c->every = f->ckpt_rows;
    /* the set-up counts as the first epoch's training time */
    r->dv = (struct hog_drive){ .f = f, .ops = &cyc_ops, .ctx = r,
                                .n = c->n, .since = t_start };
    if ((st = hog_drive_begin(&r->dv, err)) != HOG_OK)
        goto out;
    hog_drive_job(&r->dv, 0, 1);
    st = r->dv.st;
    cyc_prof_lap(&c->prof, CYC_P_EPOCH_END, CYC_PROF_PROCESS);
    /* a run the front door stopped early (core/fit.h) is a whole run */
    bool whole = st == HOG_OK || st == HOG_FIT_STOP;
    if (whole && c->f->hooks.cyclades_stats)
        *c->f->hooks.cyclades_stats = c->st;
    if (whole)
        hog_cyc_prof_print(c);
out:
    hog_cyc_free(c);
    return st;
}

hog_status hog_cyclades_train(struct hog_fit *f, hog_err *err)
{
    return train(f, false, err);
}

hog_status hog_cyclades_train_softmax(struct hog_fit *f, hog_err *err)
{
    return train(f, true, err);
}
