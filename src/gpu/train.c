/*
 * GPU replicas: sparse SGD on every GPU, averaged through in-node peer
 * copies (DimmWitted's model replicas, one per GPU).
 *
 * Objective, as every hogtrain trainer:
 *     (1/n) sum_i loss(y_i, w.x_i) + l2/2 |w|^2 + l1 |w|_1
 * with the bias a constant column of the data (value opts.bias).
 *
 * R replicas (one per listed GPU; a GPU listed twice holds two) each own a
 * shard: their parts of every round of the plan in gpu.h. A round is one
 * step on every replica:
 *
 *   minibatch  m = X_B w (cuSPARSE SpMV), g_i = loss'(y_i, m_i) / |B|,
 *              grad = X_B^T g (cuSPARSE SpMV over the batch's compact
 *              transpose), then w <- S_{eta l1}((1 - eta l2) w - eta grad)
 *              on every weight. cuSPARSE's CSR_ALG2 is deterministic, so
 *              the step is; hog_gpu_ref_train is its CPU twin.
 *   hogwild    a warp per row: margin, loss'(y, m), atomicAdd of
 *              -eta loss' x_j into the replica (Niu et al. 2011 on one
 *              GPU), then the |B| steps' L2/L1 shrink in closed form
 *              (|w| <- max(0, P |w| - Q), as the lazy CPU kernel).
 *
 * Every sync_every rows per replica (whole rounds), and at the end of each
 * epoch, the replicas are replaced by their mean.
 *
 * This file is plain C: it builds the shards in the upload layout (one
 * thread per replica, bound next to its GPU, writing page-locked memory
 * that therefore lands on the GPU's NUMA node) and runs the epoch loop.
 * The device work is behind cuda.h (the .cu files in the plugin
 * libhogtrain-cuda.so, loaded on first use by cuda_plugin.c).
 */
#include "gpu/gpu.h"

#include "core/forkjoin.h"
#include "core/loss.h"
#include "gpu/cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool hog_gpu_built(void) { return hog_cuda_built(); }

hog_status hog_gpu_list(struct hog_gpu_info *out, unsigned max, unsigned *n,
                        hog_err *err)
{
    int count = 0;
    *n = 0;
    hog_status st = hog_cuda_count(&count, err);
    if (st != HOG_OK)
        return st;
    *n = (unsigned)count;
    for (int i = 0; i < count && (unsigned)i < max; i++) {
        struct hog_cuda_info ci;
        if ((st = hog_cuda_info(i, &ci, err)) != HOG_OK)
            return st;
        struct hog_gpu_info *g = &out[i];
        memset(g, 0, sizeof *g);
        g->index = i;
        memcpy(g->name, ci.name, sizeof g->name);
        memcpy(g->pci, ci.pci, sizeof g->pci);
        g->name[sizeof g->name - 1] = g->pci[sizeof g->pci - 1] = '\0';
        g->mem_total = ci.mem_total;
        g->mem_free = ci.mem_free;
        g->numa = ci.numa;
        g->cc_major = ci.cc_major;
        g->cc_minor = ci.cc_minor;
        g->sms = ci.sms;
    }
    return HOG_OK;
}

hog_status hog_gpu_copy_bandwidth(int dev, size_t bytes, double *bytes_per_s,
                                  hog_err *err)
{
    int count = 0;
    *bytes_per_s = 0;
    hog_status st = hog_cuda_count(&count, err);
    if (st != HOG_OK)
        return st;
    if (dev < 0 || dev >= count || bytes == 0)
        return hog_errf(err, HOG_EINVAL,
                        "no CUDA device %d (this machine shows %d), or an "
                        "empty copy",
                        dev, count);
    return hog_cuda_copy_bandwidth(dev, bytes, bytes_per_s, err);
}

/* ---- shards ------------------------------------------------------------------ */

void hog_gpu_shard_free(struct hog_cuda_shard *s, void (*release)(void *))
{
    free(s->b);
    release(s->y);
    release(s->roff);
    release(s->col);
    release(s->val);
    release(s->tcol);
    release(s->toff);
    release(s->trow);
    release(s->tval);
    int dev = s->dev;
    memset(s, 0, sizeof *s);
    s->dev = dev;
}

static void *host_array(void *(*alloc)(size_t), size_t n, size_t size,
                        bool *ok)
{
    if (!*ok)
        return NULL;
    void *p = alloc((n ? n : 1) * size);
    if (!p)
        *ok = false;
    return p;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

hog_status hog_gpu_shard_build(const hog_data *d, const hog_train_opts *o,
                               const struct hog_gpu_plan *pl, unsigned q,
                               bool transpose, void *(*alloc)(size_t),
                               struct hog_cuda_shard *s, hog_err *err)
{
    const uint64_t nf = d->n_features;
    const bool bias = o->bias != 0.0;
    const uint64_t nw = nf + bias;

    /* Sizes first, and the 32-bit limits cuSPARSE's indices impose. */
    uint64_t rows = 0, nnz = 0;
    for (uint64_t k = 0; k < pl->rounds; k++) {
        uint64_t lo, hi, bn = 0;
        hog_gpu_plan_part(pl, k, q, &lo, &hi);
        for (uint64_t p = lo; p < hi; p++)
            bn += d->m.off[pl->perm[p] + 1] - d->m.off[pl->perm[p]] + bias;
        if (bn > INT32_MAX)
            return hog_errf(err, HOG_ERANGE,
                            "a GPU step of %u rows holds %llu nonzeros, more "
                            "than 2^31 - 1; use a smaller --gpu-batch",
                            pl->B, (unsigned long long)bn);
        rows += hi - lo;
        nnz += bn;
    }
    s->nbatch = pl->rounds;
    s->n_y = rows;
    s->n_roff = rows + pl->rounds;
    s->n_nnz = nnz;
    bool ok = (s->b = calloc(pl->rounds ? pl->rounds : 1, sizeof *s->b));
    s->y = host_array(alloc, rows, sizeof *s->y, &ok);
    s->roff = host_array(alloc, s->n_roff, sizeof *s->roff, &ok);
    s->col = host_array(alloc, nnz, sizeof *s->col, &ok);
    s->val = host_array(alloc, nnz, sizeof *s->val, &ok);
    uint32_t *cnt = NULL, *touched = NULL;
    if (transpose) {
        /* tcol and toff sized for the worst case (every entry its own
         * column); only the used prefix is uploaded. */
        s->tcol = host_array(alloc, nnz, sizeof *s->tcol, &ok);
        s->toff = host_array(alloc, nnz + pl->rounds, sizeof *s->toff, &ok);
        s->trow = host_array(alloc, nnz, sizeof *s->trow, &ok);
        s->tval = host_array(alloc, nnz, sizeof *s->tval, &ok);
        if (ok)
            ok = (cnt = calloc(nw ? nw : 1, sizeof *cnt)) &&
                 (touched = malloc((nw ? nw : 1) * sizeof *touched));
    }
    if (!ok) {
        free(cnt);
        free(touched);
        return hog_errf(err, HOG_ENOMEM,
                        "out of page-locked host memory for GPU %d's shard "
                        "(%llu rows, %llu nonzeros); use fewer rows or more "
                        "GPUs",
                        s->dev, (unsigned long long)rows,
                        (unsigned long long)nnz);
    }

    uint64_t at_row = 0, at_off = 0, at_nnz = 0, at_uniq = 0, at_toff = 0;
    for (uint64_t k = 0; k < pl->rounds; k++) {
        uint64_t lo, hi;
        hog_gpu_plan_part(pl, k, q, &lo, &hi);
        struct hog_cuda_batch *b = &s->b[k];
        b->rows = (uint32_t)(hi - lo);
        b->at_row = at_row;
        b->at_off = at_off;
        b->at_nnz = at_nnz;
        b->at_uniq = at_uniq;
        b->at_toff = at_toff;
        int32_t *roff = s->roff + at_off;
        int32_t *col = s->col + at_nnz;
        float *val = s->val + at_nnz;
        uint32_t e = 0;
        roff[0] = 0;
        for (uint64_t p = lo; p < hi; p++) {
            struct hog_row r = hog_csr_row(&d->m, pl->perm[p]);
            uint32_t i = (uint32_t)(p - lo);
            s->y[at_row + i] = (float)hog_loss_target(o->loss, d->label_pos,
                                                      r.y);
            for (uint32_t j = 0; j < r.nnz; j++, e++) {
                col[e] = (int32_t)r.idx[j];
                val[e] = r.val[j];
            }
            if (bias) {
                col[e] = (int32_t)nf;
                val[e++] = (float)o->bias;
            }
            roff[i + 1] = (int32_t)e;
        }
        b->nnz = e;
        if (e > s->max_nnz)
            s->max_nnz = e;
        if (b->rows > s->max_rows)
            s->max_rows = b->rows;

        if (transpose) {
            /* The compact transpose: columns in increasing order, each
             * column's entries in increasing batch row. */
            uint32_t u = 0;
            for (uint32_t x = 0; x < e; x++)
                if (cnt[col[x]]++ == 0)
                    touched[u++] = (uint32_t)col[x];
            /* Counting sort would need O(n_weights) per batch; the touched
             * list is short. */
            qsort(touched, u, sizeof *touched, cmp_u32);
            int32_t *tcol = s->tcol + at_uniq, *toff = s->toff + at_toff;
            int32_t *trow = s->trow + at_nnz;
            float *tval = s->tval + at_nnz;
            uint32_t sum = 0;
            for (uint32_t c = 0; c < u; c++) {
                tcol[c] = (int32_t)touched[c];
                toff[c] = (int32_t)sum;
                uint32_t len = cnt[touched[c]];
                cnt[touched[c]] = sum; /* now the fill position */
                sum += len;
            }
            toff[u] = (int32_t)sum;
            for (uint32_t i = 0; i < b->rows; i++)
                for (int32_t x = roff[i]; x < roff[i + 1]; x++) {
                    uint32_t at = cnt[col[x]]++;
                    trow[at] = (int32_t)i;
                    tval[at] = val[x];
                }
            for (uint32_t c = 0; c < u; c++)
                cnt[touched[c]] = 0;
            b->uniq = u;
            if (u > s->max_uniq)
                s->max_uniq = u;
            at_uniq += u;
            at_toff += u + 1;
        }
        at_row += b->rows;
        at_off += b->rows + 1;
        at_nnz += e;
    }
    s->n_tcol = at_uniq;
    s->n_toff = at_toff;
    free(cnt);
    free(touched);
    return HOG_OK;
}

/* One replica's shard build, on a thread bound next to its GPU: the
 * page-locked arrays it allocates and fills land on the GPU's node. */
struct build {
    const hog_data *d;
    const hog_train_opts *o;
    const struct hog_gpu_plan *plan;
    unsigned q;
    bool transpose;
    struct hog_cuda_shard *s;
    hog_status st;
    hog_err err;
};

static void *build_thread(void *arg)
{
    struct build *bd = arg;
    hog_cuda_bind_near(bd->s->dev);
    bd->st = hog_gpu_shard_build(bd->d, bd->o, bd->plan, bd->q, bd->transpose,
                                 hog_cuda_host_alloc, bd->s, &bd->err);
    return NULL;
}

/* ---- training ------------------------------------------------------------------ */

hog_status hog_gpu_train(struct hog_fit *f, hog_err *err)
{
    struct hog_gpu_opts g;
    hog_status st = hog_gpu_opts_from(f->o, &g, err);
    if (st != HOG_OK)
        return st;
    return hog_gpu_train_opts(f, &g, err);
}

hog_status hog_gpu_devices(const struct hog_gpu_spec *spec, int *dev,
                           unsigned *R, hog_err *err)
{
    int count = 0;
    hog_status st = hog_cuda_count(&count, err);
    if (st != HOG_OK)
        return st;
    if (spec->all) {
        *R = (unsigned)(count < HOG_GPU_MAX ? count : HOG_GPU_MAX);
        for (unsigned i = 0; i < *R; i++)
            dev[i] = (int)i;
        return HOG_OK;
    }
    if (spec->n == 0)
        return hog_errf(err, HOG_EINVAL, "no GPUs were asked for");
    for (unsigned i = 0; i < spec->n; i++) {
        if (spec->dev[i] >= count)
            return hog_errf(err, HOG_EINVAL,
                            "--gpus names device %d, but this machine shows "
                            "%d CUDA device%s (numbered from 0, after "
                            "CUDA_VISIBLE_DEVICES)",
                            spec->dev[i], count, count == 1 ? "" : "s");
        dev[i] = spec->dev[i];
    }
    *R = spec->n;
    return HOG_OK;
}

hog_status hog_gpu_train_opts(struct hog_fit *f, const struct hog_gpu_opts *g,
                              hog_err *err)
{
    const hog_data *d = f->train;
    const hog_train_opts *o = f->o;
    const uint64_t nw = d->n_features + (o->bias != 0.0);
    int dev[HOG_GPU_MAX];
    unsigned R = 0;
    hog_status st = hog_gpu_devices(&g->spec, dev, &R, err);
    if (st != HOG_OK)
        return st;
    if (nw > INT32_MAX)
        return hog_errf(err, HOG_ERANGE,
                        "%llu weights: the GPU step indexes columns with "
                        "32-bit integers (at most 2^31 - 1)",
                        (unsigned long long)nw);

    struct hog_gpu_plan plan;
    if ((st = hog_gpu_plan_make(d->m.rows, R, g->batch, o->seed, &plan,
                                err)) != HOG_OK)
        return st;
    struct hog_cuda_shard shards[HOG_GPU_MAX];
    struct build bd[HOG_GPU_MAX];
    memset(shards, 0, sizeof shards);
    for (unsigned q = 0; q < R; q++) {
        shards[q].dev = dev[q];
        bd[q] = (struct build){ d, o, &plan, q,
                                g->step == HOG_GPU_STEP_MINIBATCH, &shards[q],
                                HOG_OK, { { 0 } } };
    }
    /* Each build binds its thread near its device: none on the caller's. */
    hog_fork_join(bd, sizeof *bd, R, build_thread, HOG_FORK_ALL);
    for (unsigned q = 0; q < R; q++) {
        if (bd[q].st != HOG_OK && st == HOG_OK) {
            st = bd[q].st;
            if (err)
                *err = bd[q].err;
        }
    }

    hog_cuda_trainer *t = NULL;
    uint64_t *order = NULL;
    if (st != HOG_OK)
        goto out;
    struct hog_cuda_params p = { o->loss, o->schedule, g->step, o->l1, o->l2,
                                 nw, R, g->force_stream, g->quiet };
    if ((st = hog_cuda_trainer_create(&p, shards, &t, err)) != HOG_OK)
        goto out;
    order = malloc((plan.rounds ? plan.rounds : 1) * sizeof *order);
    if (!order) {
        st = hog_errf(err, HOG_ENOMEM, "out of memory for the round order");
        goto out;
    }
    for (uint64_t k = 0; k < plan.rounds; k++)
        order[k] = k;
    /* sync_every 0: the replicas average at the epoch's end only */
    uint64_t sync_rounds = g->sync_every
                               ? (g->sync_every + g->batch - 1) / g->batch
                               : UINT64_MAX;
    struct hog_rng rng;
    hog_rng_seed(&rng, o->seed, 0);
    uint64_t done = 0, per = (uint64_t)R * g->batch;
    for (unsigned epoch = 1; epoch <= o->epochs && st == HOG_OK; epoch++) {
        double t0 = hog_now();
        hog_shuffle_u64(&rng, order, plan.rounds);
        for (uint64_t i = 0; i < plan.rounds && st == HOG_OK; i++, done++) {
            double eta = hog_gpu_eta_at(o, done * per, plan.n);
            st = hog_cuda_round(t, order[i], eta, err);
            if (st == HOG_OK && R > 1 &&
                ((i + 1) % sync_rounds == 0 || i + 1 == plan.rounds))
                st = hog_cuda_average(t, err);
            uint64_t rows_done = (i + 1) * per;
            f->tick(f, epoch, rows_done < plan.n ? rows_done : plan.n,
                    plan.n);
        }
        if (st == HOG_OK)
            st = hog_cuda_weights(t, f->model->w, err);
        if (st == HOG_OK)
            st = f->epoch_end(f, epoch, hog_now() - t0, err);
    }
out:
    free(order);
    hog_cuda_trainer_destroy(t);
    for (unsigned q = 0; q < R; q++)
        hog_gpu_shard_free(&shards[q], hog_cuda_host_free);
    hog_gpu_plan_free(&plan);
    return st;
}
