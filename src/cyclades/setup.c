/*
 * Setting up and tearing down a Cyclades run (struct cyc): the SGD state,
 * the pinned pool and its spinning barrier, the batch size, the row order,
 * the per-thread scratch of the partition and the hot phase, and freeing
 * it all (whatever was reached: a failed setup is freed the same way).
 * The hot set and the cold and hot views of the rows are hot.c's.
 *
 * Batch size (docs/CYCLADES.md): B = 2^14 nonzeros' worth of rows, within
 * [64, max(64, n/64)] (the hot features' delay is one batch). It does not
 * depend on the thread count.
 */
#include "cyclades/internal.h"

#include <stdlib.h>
#include <string.h>

#define CYC_BATCH_NNZ (UINT64_C(1) << 14) /* nonzeros per batch, default */
#define CYC_BATCH_MIN UINT64_C(64)
#define CYC_MIN_BATCHES UINT64_C(64) /* per epoch, when rows allow */

static uint64_t batch_size(const hog_data *d, const hog_train_opts *o)
{
    uint64_t n = d->m.rows;
    if (o->batch_size)
        return min_u64(o->batch_size, n);
    double avg = d->m.nnz ? (double)d->m.nnz / (double)n : 1.0;
    uint64_t b = (uint64_t)((double)CYC_BATCH_NNZ / (avg > 1.0 ? avg : 1.0));
    uint64_t hi = n / CYC_MIN_BATCHES > CYC_BATCH_MIN ? n / CYC_MIN_BATCHES
                                                      : CYC_BATCH_MIN;
    if (b < CYC_BATCH_MIN)
        b = CYC_BATCH_MIN;
    if (b > hi)
        b = hi;
    return b ? min_u64(b, n) : 1;
}

static hog_status make_pool(struct cyc *c, hog_err *err)
{
    /* more threads than PUs: allowed, reproducible */
    hog_status st = hog_pool_for_opts(c->o, c->o->threads, HOG_POOL_BIND_ANY,
                                      &c->topo, &c->pool, err);
    if (st != HOG_OK)
        return st;
    struct hog_topo_info info;
    hog_topo_info(c->topo, &info);
    c->T = hog_pool_size(c->pool);
    /* with more threads than CPUs a spinner holds the CPU of a thread it
     * waits for */
    hog_spin_barrier_init(&c->bar, c->T, c->T > info.allowed_pus);
    return HOG_OK;
}

void hog_cyc_free_views(struct cyc *c)
{
    free(c->cold_off);
    free(c->cold_idx);
    free(c->cold_val);
    if (!c->hot_alias) {
        free(c->hot_off);
        free(c->hot_j);
        free(c->hot_x);
    }
    free(c->hot_owner);
    free(c->hot_l1);
}

void hog_cyc_free_order(struct cyc *c)
{
    free(c->perm);
    free(c->pos);
    free(c->boff);
    free(c->pl1);
    free(c->eoff);
    free(c->roff);
    free(c->bslot);
    free(c->ent);
    free(c->rec);
}

void hog_cyc_free(struct cyc *c)
{
    if (c->th) {
        for (unsigned t = 0; t < c->T; t++) {
            struct cyc_thread *w = &c->th[t];
            free(w->parent);
            free(w->cid);
            free(w->touched);
            free(w->comp_of);
            free(w->thr_of);
            free(w->comps);
            free(w->load);
            free(w->cur);
            free(w->slot);
            free(w->gby);
            free(w->busy);
            free(w->scur);
            free(w->hcnt);
            free(w->htouch);
            free(w->aj);
            free(w->ag);
            free(w->asq);
            free(w->kg);
            hog_softmax_work_free(&w->kw);
        }
        free(c->th);
    }
    hog_pool_destroy(c->pool);
    hog_topo_free(c->topo);
    if (!c->views_shared)
        hog_cyc_free_views(c);
    if (!c->order_shared)
        hog_cyc_free_order(c);
    free(c->hot_bits);
    free(c->gcur);
    free(c->visit);
    free(c->rd);
    free(c->prog_loss);
    free(c->prog_right);
    free(c->cls);
    free(c->kd);
    free(c->kh);
    free(c->kq);
    hog_softmax_free(&c->km);
    hog_train_state_free(&c->last);
    hog_sgd_free(&c->s);
}

/* Thread tid's union-find tables, all untouched (and first touched by the
 * thread that uses them). */
static void clear_job(void *arg, unsigned tid, unsigned T)
{
    struct cyc *c = arg;
    struct cyc_thread *w = &c->th[tid];
    memset(w->parent, 0xff, (c->nf + 1) * sizeof *w->parent);
    memset(w->cid, 0xff, (c->nf + 1) * sizeof *w->cid);
}

hog_status hog_cyc_alloc_threads(struct cyc *c, hog_err *err)
{
    unsigned T = c->T;
    size_t nf1 = c->nf + 1, B = c->B;
    c->th = aligned_alloc(HOG_CACHELINE,
                          ((T * sizeof *c->th + HOG_CACHELINE - 1) /
                           HOG_CACHELINE) * HOG_CACHELINE);
    if (!c->th)
        goto oom;
    memset(c->th, 0, T * sizeof *c->th);
    for (unsigned t = 0; t < T; t++) {
        struct cyc_thread *w = &c->th[t];
        w->parent = malloc(nf1 * sizeof *w->parent);
        w->cid = malloc(nf1 * sizeof *w->cid);
        w->touched = malloc(nf1 * sizeof *w->touched);
        w->comp_of = malloc(B * sizeof *w->comp_of);
        w->thr_of = malloc(B * sizeof *w->thr_of);
        w->comps = malloc(B * sizeof *w->comps);
        w->load = malloc(c->G * sizeof *w->load);
        w->cur = malloc(c->G * sizeof *w->cur);
        w->slot = malloc(c->G * sizeof *w->slot);
        w->gby = malloc(c->G * sizeof *w->gby);
        w->busy = malloc(T * sizeof *w->busy);
        w->scur = malloc(c->G * sizeof *w->scur);
        if (!w->parent || !w->cid || !w->touched || !w->comp_of ||
            !w->thr_of || !w->comps || !w->load || !w->cur || !w->slot ||
            !w->busy || !w->scur || !w->gby)
            goto oom;
        if (c->softmax) {
            hog_status st = hog_softmax_work_init(&w->kw, &c->km, c->d, err);
            if (st != HOG_OK)
                return st;
            if (!(w->kg = malloc(2 * (size_t)c->km.k * sizeof *w->kg)))
                goto oom;
        }
    }
    hog_pool_run(c->pool, clear_job, c);
    cyc_prof_lap(&c->prof, CYC_P_THREADS, CYC_PROF_PROCESS);
    return HOG_OK;
oom:
    return hog_errf(err, HOG_ENOMEM,
                    "out of memory for Cyclades' per-thread tables (%u "
                    "threads, %llu features)",
                    T, (unsigned long long)c->nf);
}

hog_status hog_cyc_alloc_hot_scratch(struct cyc *c, hog_err *err)
{
    size_t nf1 = c->nf + 1;
    for (unsigned t = 0; t < c->T; t++) {
        struct cyc_thread *w = &c->th[t];
        /* +1: the branch-free append */
        w->hcnt = calloc(c->nh ? nf1 : 1, sizeof *w->hcnt);
        w->htouch = malloc(((size_t)c->nh + 1) * sizeof *w->htouch);
        w->aj = malloc(((size_t)c->nh + 1) * sizeof *w->aj);
        w->ag = malloc(((size_t)c->nh + 1) * sizeof *w->ag);
        w->asq = malloc(((size_t)c->nh + 1) * sizeof *w->asq);
        if (!w->hcnt || !w->htouch || !w->aj || !w->ag || !w->asq)
            return hog_errf(err, HOG_ENOMEM,
                            "out of memory for Cyclades' hot-phase tables "
                            "(%u threads, %llu hot weights)",
                            c->T, (unsigned long long)c->nh);
    }
    return HOG_OK;
}

/* The K-wide kernel and each row's class (softmax), the batch rows' hot
 * phase figures and the checkpoints' state included. */
static hog_status prepare_softmax(struct cyc *c, hog_err *err)
{
    /* checkpoints after whole epochs only: the conflicts' table refuses
     * a rows cadence */
    const hog_model *mo = c->f->model;
    if (mo->n_classes < 2 || mo->n_features != c->nf)
        return hog_errf(err, HOG_EINVAL, "the softmax trainer needs a model "
                        "of K classes over the training data's features");
    hog_status st = hog_softmax_init(&c->km, &c->s, mo->n_classes, c->nf,
                                     mo->bias, c->f->init, err);
    if (st != HOG_OK ||
        (st = hog_softmax_classes(mo, c->d, &c->cls, err)) != HOG_OK)
        return st;
    hog_rng_seed(&c->last.rng, c->o->seed, 0); /* nothing kept yet */
    c->last.pos = c->n;
    if ((c->o->checkpoint || c->f->resume) &&
        (st = hog_softmax_state_alloc(&c->km, &c->last, err)) != HOG_OK)
        return st;
    const size_t BK = (size_t)c->B * c->km.k;
    c->kd = malloc(BK * sizeof *c->kd);
    c->kh = malloc(BK * sizeof *c->kh);
    c->kq = malloc((size_t)c->B * sizeof *c->kq);
    if (!c->kd || !c->kh || !c->kq)
        return hog_errf(err, HOG_ENOMEM, "out of memory for a batch of "
                        "%llu rows of %u classes", (unsigned long long)c->B,
                        c->km.k);
    return HOG_OK;
}

hog_status hog_cyc_prepare(struct cyc *c, struct hog_fit *f, bool parallel,
                           bool softmax, hog_err *err)
{
    memset(c, 0, sizeof *c);
    cyc_prof_start(&c->prof, CYC_PROF_PROCESS);
    c->f = f;
    c->d = f->train;
    c->o = f->o;
    c->n = c->d->m.rows;
    c->nf = c->d->n_features;
    c->T = 1;
    if (c->nf >= CYC_NONE)
        return hog_errf(err, HOG_ERANGE,
                        "Cyclades handles at most %u features, not %llu",
                        CYC_NONE - 1, (unsigned long long)c->nf);
    c->softmax = softmax;
    hog_status st = softmax ? hog_sgd_init_schedule(&c->s, c->o, c->d, err)
                            : hog_sgd_init(&c->s, c->o, c->d, err);
    if (st != HOG_OK)
        return st;
    c->B = batch_size(c->d, c->o);
    if (softmax) {
        if ((st = prepare_softmax(c, err)) != HOG_OK)
            return st;
    } else {
        c->s.alone = true; /* no cold weight in two groups of a batch */
        if (f->init) /* a warm start (a resume replaces it) */
            hog_sgd_set_weights(&c->s, f->init);
        c->step = hog_sgd_split_step(&c->s, c->d->row_w != NULL);
    }
    if (parallel && (st = make_pool(c, err)) != HOG_OK)
        return st;
    c->G = CYC_GROUPS * c->T;
    c->nb = (c->n + c->B - 1) / c->B;
    c->perm = malloc(c->n * sizeof *c->perm);
    c->visit = malloc(c->nb * sizeof *c->visit);
    if (!c->perm || !c->visit)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the row order");
    for (uint64_t i = 0; i < c->n; i++)
        c->perm[i] = i;
    /* the progressive figures (internal.h) */
    if (c->f->hooks.progress && c->n) {
        c->prog_loss = malloc(c->n * sizeof *c->prog_loss);
        c->prog_right = malloc(c->n * sizeof *c->prog_right);
        if (!c->prog_loss || !c->prog_right)
            return hog_errf(err, HOG_ENOMEM, "out of memory for the "
                            "progressive metrics of %llu rows",
                            (unsigned long long)c->n);
    }
    cyc_prof_lap(&c->prof, CYC_P_PREPARE, CYC_PROF_PROCESS);
    return HOG_OK;
}
