/*
 * Model averaging across processes, and sharding a data set by rank.
 *
 * MA (model averaging; Zinkevich et al. 2010, McDonald et al. 2010): after
 * every block of rows each process replaces its weights by the mean over
 * the processes,
 *
 *     w <- (1/N) sum_r w_r.
 *
 * BMUF (blockwise model-update filtering; Chen and Huo, ICASSP 2016) treats
 * the averaged step of a block as a gradient-like update and filters it
 * with block momentum. With W the global model, Delta the block momentum,
 * and W_g the model handed out at the start of the block:
 *
 *     G      = mean_r(w_r) - W_g            the block's averaged update
 *     Delta <- eta_b * Delta + zeta * G     block momentum eta_b, block lr zeta
 *     W     <- W + Delta
 *     W_g   <- W + eta_b * Delta            Nesterov (default), or W_g <- W
 *
 * and every process continues from W_g. Chen and Huo recommend
 * eta_b = 1 - 1/N and zeta = 1 (the defaults). With eta_b = 0, zeta = 1
 * BMUF is MA.
 *
 * Every process does the same arithmetic on the same all-reduced sums, so
 * all hold the same bits afterwards.
 */
#include "net/net.h"

#include "io/io.h"

#include <stdlib.h>
#include <string.h>

struct hog_avg {
    hog_net *net;
    struct hog_avg_opts o;
    uint64_t count;
    uint64_t n;           /* weights (0 until the first call) */
    float *W, *delta, *Wg; /* BMUF state */
    hog_model *ckpt;       /* checkpoint: shape and labels of the model */
    char *ckpt_path;
    double last_ckpt;
};

void hog_avg_opts_init(struct hog_avg_opts *o)
{
    memset(o, 0, sizeof *o);
    o->mode = HOG_AVG_MA;
    o->momentum = -1;
    o->block_lr = 1;
    o->nesterov = 1;
}

hog_status hog_avg_create(hog_net *n, const struct hog_avg_opts *o,
                          struct hog_avg **out, hog_err *err)
{
    *out = NULL;
    if (o->mode == HOG_AVG_BMUF &&
        (!(o->block_lr > 0) || o->momentum >= 1))
        return hog_errf(err, HOG_EINVAL, "BMUF needs a block learning rate "
                        "> 0 and a block momentum below 1 (got %g and %g)",
                        o->block_lr, o->momentum);
    struct hog_avg *a = calloc(1, sizeof *a);
    if (!a)
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    a->net = n;
    a->o = *o;
    if (a->o.momentum < 0)
        a->o.momentum = 1.0 - 1.0 / (double)hog_net_world(n);
    if (o->checkpoint) {
        if (!o->like) {
            free(a);
            return hog_errf(err, HOG_EINVAL, "a checkpoint needs the model's "
                            "shape");
        }
        hog_status st = hog_model_new(o->like->n_features, o->like->loss,
                                      o->like->bias, &a->ckpt, err);
        a->ckpt_path = strdup(o->checkpoint);
        if (st != HOG_OK || !a->ckpt_path) {
            hog_avg_free(a);
            return st != HOG_OK ? st : hog_errf(err, HOG_ENOMEM, "out of memory");
        }
        a->ckpt->l1 = o->like->l1;
        a->ckpt->l2 = o->like->l2;
        a->ckpt->labels = o->like->labels;
        a->ckpt->label_pos = o->like->label_pos;
        a->ckpt->label_neg = o->like->label_neg;
        a->o.checkpoint = a->ckpt_path;
        a->o.like = NULL;
    }
    *out = a;
    return HOG_OK;
}

uint64_t hog_avg_count(const struct hog_avg *a) { return a->count; }

void hog_avg_free(struct hog_avg *a)
{
    if (!a)
        return;
    free(a->W);
    free(a->delta);
    free(a->Wg);
    hog_model_free(a->ckpt);
    free(a->ckpt_path);
    free(a);
}

static hog_status checkpoint(struct hog_avg *a, const float *w, uint64_t n,
                             hog_err *err)
{
    /* Rank 0 writes: at the end of every epoch, and in between at most
     * once a second. */
    if (!a->ckpt || hog_net_rank(a->net) != 0)
        return HOG_OK;
    bool epoch_end = a->o.epoch_blocks && a->count % a->o.epoch_blocks == 0;
    double now = hog_now();
    if (!epoch_end && a->last_ckpt && now - a->last_ckpt < 1.0)
        return HOG_OK;
    uint64_t nw = a->ckpt->n_features + (a->ckpt->bias != 0);
    if (nw != n)
        return hog_errf(err, HOG_EINVAL, "checkpoint: the model has %llu "
                        "weights, the trainer %llu", (unsigned long long)nw,
                        (unsigned long long)n);
    memcpy(a->ckpt->w, w, n * sizeof *w);
    hog_status st = hog_model_save(a->ckpt, a->ckpt_path, HOG_MODEL_HGM, err);
    a->last_ckpt = hog_now();
    return st;
}

hog_status hog_avg_step(void *ctx, float *w, uint64_t n, hog_err *err)
{
    struct hog_avg *a = ctx;
    hog_status st;
    if (a->n && a->n != n)
        return hog_errf(err, HOG_EINVAL, "model averaging: %llu weights, "
                        "then %llu", (unsigned long long)a->n,
                        (unsigned long long)n);
    if (a->o.mode == HOG_AVG_BMUF && !a->W) {
        a->W = calloc(n ? n : 1, sizeof *a->W);
        a->delta = calloc(n ? n : 1, sizeof *a->delta);
        a->Wg = calloc(n ? n : 1, sizeof *a->Wg);
        if (!a->W || !a->delta || !a->Wg)
            return hog_errf(err, HOG_ENOMEM, "out of memory for the BMUF "
                            "state of %llu weights", (unsigned long long)n);
        /* Every rank starts from the same zero model. */
    }
    a->n = n;
    if ((st = hog_net_allreduce_sum(a->net, w, n, err)) != HOG_OK)
        return st;
    const float inv = 1.0f / (float)hog_net_world(a->net);
    if (a->o.mode == HOG_AVG_MA) {
        for (uint64_t j = 0; j < n; j++)
            w[j] *= inv;
    } else {
        const float eta = (float)a->o.momentum, zeta = (float)a->o.block_lr;
        const int nest = a->o.nesterov;
        for (uint64_t j = 0; j < n; j++) {
            float g = w[j] * inv - a->Wg[j];
            float d = eta * a->delta[j] + zeta * g;
            float W = a->W[j] + d;
            a->delta[j] = d;
            a->W[j] = W;
            a->Wg[j] = nest ? W + eta * d : W;
            w[j] = a->Wg[j];
        }
    }
    a->count++;
    return checkpoint(a, w, n, err);
}

/* ---- sharding ----------------------------------------------------------------------- */

hog_status hog_net_shard(const hog_data *d, unsigned rank, unsigned world,
                         enum hog_shard_mode mode, hog_data **out,
                         hog_err *err)
{
    *out = NULL;
    if (world == 0 || rank >= world)
        return hog_errf(err, HOG_EINVAL, "shard: rank %u of %u", rank, world);
    uint64_t rows = d->m.rows, lo = 0, hi = rows, step = 1;
    if (mode == HOG_SHARD_RANGE) {
        lo = (uint64_t)((unsigned __int128)rows * rank / world);
        hi = (uint64_t)((unsigned __int128)rows * (rank + 1) / world);
    } else {
        lo = rank;
        step = world;
    }
    uint64_t nr = lo < hi ? (hi - lo + step - 1) / step : 0, nz = 0;
    if (nr == 0)
        return hog_errf(err, HOG_EINVAL, "shard %u of %u of %llu rows is "
                        "empty", rank, world, (unsigned long long)rows);
    for (uint64_t i = lo; i < hi; i += step)
        nz += d->m.off[i + 1] - d->m.off[i];
    uint64_t *off = malloc((nr + 1) * sizeof *off);
    float *y = malloc(nr * sizeof *y);
    uint32_t *idx = malloc((nz ? nz : 1) * sizeof *idx);
    float *val = malloc((nz ? nz : 1) * sizeof *val);
    if (!off || !y || !idx || !val) {
        free(off);
        free(y);
        free(idx);
        free(val);
        return hog_errf(err, HOG_ENOMEM, "out of memory for a shard of %llu "
                        "rows", (unsigned long long)nr);
    }
    uint64_t r = 0, z = 0;
    off[0] = 0;
    for (uint64_t i = lo; i < hi; i += step, r++) {
        struct hog_row row = hog_csr_row(&d->m, i);
        memcpy(idx + z, row.idx, row.nnz * sizeof *idx);
        memcpy(val + z, row.val, row.nnz * sizeof *val);
        z += row.nnz;
        off[r + 1] = z;
        y[r] = row.y;
    }
    hog_status st = hog_data_adopt(nr, nz, off, y, idx, val, d->n_features,
                                   out, err);
    if (st == HOG_OK)
        (*out)->hash = d->hash; /* the model records it (predict hashes alike) */
    return st;
}
