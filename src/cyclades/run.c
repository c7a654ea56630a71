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
 * run.c (this: the epochs), setup.c (the run's state), hot.c (the hot
 * set, the cold and hot views), partition.c (the epoch's row order, the
 * batches' components), step.c (the parallel job of an epoch),
 * checkpoint.c (checkpoints and resume), serial_ref.c (the serial
 * reference); internal.h is what they share, prof.h the phase timers
 * (-DHOG_CYC_PROF). The setup's passes over the data run on the pool's
 * threads too (docs/CYCLADES.md, "What runs on the pool's threads").
 */
#include "cyclades/internal.h"

#include <stdlib.h>

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

static hog_status train(struct hog_fit *f, bool softmax, hog_err *err)
{
    struct cyc c;
    double t_start = hog_now();
    hog_status st = hog_cyc_prepare(&c, f, true, softmax, err);
    if (st != HOG_OK)
        goto out;
    if ((st = hog_cyc_alloc_threads(&c, err)) != HOG_OK ||
        (st = hog_cyc_setup_hot(&c, err)) != HOG_OK ||
        (st = hog_cyc_alloc_hot_scratch(&c, err)) != HOG_OK)
        goto out;
    c.pos = malloc(c.n * sizeof *c.pos);
    c.boff = malloc((c.nb * c.G + 1) * sizeof *c.boff);
    c.gcur = malloc(c.G * sizeof *c.gcur);
    c.rd = calloc(c.B, sizeof *c.rd);
    c.pl1 = calloc(c.n, sizeof *c.pl1);
    if (!c.pos || !c.boff || !c.gcur || !c.rd || !c.pl1) {
        st = hog_errf(err, HOG_ENOMEM, "out of memory for the partition");
        goto out;
    }
    c.st.setup_seconds = hog_now() - t_start;
    c.st.threads = c.T;
    c.st.batch_size = c.B;
    c.st.batches = c.nb;
    c.st.hot_degree = c.o->hot ? c.tau : 0;
    c.st.bias_hot = c.bias_hot;

    struct hog_rng rows, batches;
    hog_rng_seed(&rows, c.o->seed, 0);
    hog_rng_seed(&batches, c.o->seed, 1);
    c.err = err;
    c.every = f->ckpt_rows;
    unsigned first = 1;
    bool resumed_mid = false, need_partition = false;
    if (f->resume && (st = hog_cyc_resume(&c, &rows, &batches, &first,
                                          &resumed_mid, err)) != HOG_OK)
        goto out;
    need_partition = f->resume != NULL;
    double t0 = t_start, extra = 0.0; /* extra: diagnostics, not training */
    for (unsigned epoch = first; epoch <= c.o->epochs && st == HOG_OK;
         epoch++) {
        c.epoch = epoch;
        bool fresh = !(resumed_mid && epoch == first);
        if ((fresh && hog_cyc_next_order(&c, &rows, &batches, epoch)) ||
            need_partition) {
            double tp = hog_now();
            cyc_prof_lap(&c.prof, CYC_P_EPOCH_END, CYC_PROF_PROCESS);
            hog_cyc_partition(&c, false);
            cyc_prof_lap(&c.prof, CYC_P_PARTITION, CYC_PROF_PROCESS);
            c.st.partition_seconds += hog_now() - tp;
            if (epoch == 1 && c.o->cyclades_stats) {
                double ta = hog_now();
                hog_cyc_partition(&c, true);
                cyc_prof_lap(&c.prof, CYC_P_STATS, CYC_PROF_PROCESS);
                extra += hog_now() - ta;
            }
            need_partition = false;
        }
        c.rows_rng = rows;
        if (fresh) {
            c.start_bi = c.start_epos = 0;
            c.seg_lo = 0;
            c.seg_want = c.n < UINT32_MAX ? (uint32_t)c.n : UINT32_MAX;
            c.seg_len = hog_sgd_segment_begin(&c.s, c.t_global, c.seg_want);
        }
        c.ck_st = HOG_OK;
        atomic_store_explicit(&c.claim, 0, memory_order_relaxed);
        cyc_prof_lap(&c.prof, CYC_P_EPOCH_END, CYC_PROF_PROCESS);
        hog_pool_run(c.pool, hog_cyc_run_job, &c);
        cyc_prof_start(&c.prof, CYC_PROF_PROCESS);
        if ((st = c.ck_st) != HOG_OK)
            break;
        if (c.softmax)
            hog_softmax_model_slice(&c.km, f->model->w, 0, c.km.nw);
        else
            hog_sgd_copy_weights(&c.s, f->model->w);
        double now = hog_now();
        c.st.train_seconds += now - t0 - extra;
        if (c.prog_loss) { /* the batches this run stepped, in order */
            struct hog_sgd_tally tl = { 0 };
            for (uint64_t bi = c.start_bi; bi < c.nb; bi++) {
                uint64_t lo = c.visit[bi] * c.B, hi = min_u64(lo + c.B, c.n);
                for (uint64_t p = lo; p < hi; p++) {
                    tl.loss += c.prog_loss[p];
                    tl.right += c.prog_right[p];
                }
                tl.rows += hi - lo;
            }
            hog_sgd_tally_report(f, &c.s, &tl);
        }
        st = f->epoch_end(f, epoch, now - t0 - extra, err);
        /* the epoch's checkpoint; also the row cadence's, when the last
         * batch crossed a multiple */
        uint64_t len = c.n - hog_cyc_last_batch_start(&c);
        bool rows_due = c.every && c.t_global / c.every !=
                                       (c.t_global - len) / c.every;
        if (st == HOG_OK &&
            ((f->ckpt_epochs && epoch % f->ckpt_epochs == 0) || rows_due ||
             hog_fit_cancelled(f)))
            st = hog_cyc_checkpoint(&c, c.n, hog_fit_cancelled(f));
        t0 = hog_now();
        extra = 0.0;
    }
    cyc_prof_lap(&c.prof, CYC_P_EPOCH_END, CYC_PROF_PROCESS);
    /* a run the front door stopped early (core/fit.h) is a whole run */
    bool whole = st == HOG_OK || st == HOG_FIT_STOP;
    if (whole && c.o->cyclades_stats)
        *c.o->cyclades_stats = c.st;
    if (whole)
        hog_cyc_prof_print(&c);
out:
    hog_cyc_free(&c);
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
