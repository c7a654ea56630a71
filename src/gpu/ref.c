/*
 * The CPU reference of the GPU steps (the maths is above hog_gpu_ref_train
 * in gpu.h). Dense and plain on purpose: every weight is regularized every
 * round, the gradient is summed in double, and the replicas are simulated
 * one after another over the same plan and round order as the GPU trainer. tests/test_gpu.c checks it against a plain
 * eager SGD (batch 1) and against itself (two replicas averaged every
 * round = one replica with twice the batch), and the GPU against it.
 */
#include "gpu/gpu.h"
#include "gpu/cuda.h"

#include "core/loss.h"
#include "core/sparse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ADAGRAD_EPS 1e-8 /* as HOG_ADAGRAD_EPS in core/sgd.h */

static float soft(double u, double b)
{
    if (u > b)
        return (float)(u - b);
    if (u < -b)
        return (float)(u + b);
    return 0.0f;
}

struct ref {
    const hog_data *d;
    const hog_train_opts *o;
    uint64_t nf, nw;   /* features, weights (+1 bias) */
    double *g;         /* nw, the batch gradient */
    uint32_t *cnt;     /* nw, the hogwild step's rows per feature */
};

/* One replica's hogwild step on positions [lo, hi) of perm: every row's
 * margin from the weights before the batch (on the GPU all of a batch's
 * rows are in flight at once), then each feature's update averaged over
 * the rows that touch it, then the regularization of hi - lo steps in
 * closed form. Summed instead, a feature that every row touches (the
 * bias) would take B steps at once from one reading of w: on news20.binary
 * at B = 256 the bias swings to +-35 and the test accuracy falls to 55%. */
static void ref_hogwild(struct ref *r, const uint64_t *perm, uint64_t lo,
                        uint64_t hi, double eta, float *w)
{
    const hog_data *d = r->d;
    const hog_train_opts *o = r->o;
    const bool bias = o->bias != 0.0;
    if (hi <= lo)
        return;
    memset(r->g, 0, r->nw * sizeof *r->g);
    for (uint64_t p = lo; p < hi; p++) {
        struct hog_row row = hog_csr_row(&d->m, perm[p]);
        double y = hog_loss_target(o->loss, d->label_pos, row.y);
        double m = hog_sparse_dot(w, r->nf, row, 0.0);
        if (bias)
            m += (double)w[r->nf] * o->bias;
        double c = -eta * hog_loss_deriv(o->loss, hog_loss_param_of(o), y, m);
        hog_sparse_axpy_d(r->g, c, row);
        for (uint32_t k = 0; k < row.nnz; k++)
            r->cnt[row.idx[k]]++;
        if (bias) {
            r->g[r->nf] += c * o->bias;
            r->cnt[r->nf]++;
        }
    }
    for (uint64_t j = 0; j < r->nw; j++)
        if (r->cnt[j]) {
            w[j] = (float)((double)w[j] + r->g[j] / r->cnt[j]);
            r->cnt[j] = 0;
        }
    if (o->l1 > 0 || o->l2 > 0) {
        double P, Q;
        hog_gpu_shrink_pq(eta, o->l1, o->l2, hi - lo, &P, &Q);
        for (uint64_t j = 0; j < r->nw; j++) {
            double v = w[j], u = P * fabs(v) - Q;
            w[j] = u > 0 ? (float)copysign(u, v) : 0.0f;
        }
    }
}

/* One replica's minibatch step on positions [lo, hi) of perm. */
static void ref_step(struct ref *r, const uint64_t *perm, uint64_t lo,
                     uint64_t hi, double eta, float *w, float *g2)
{
    const hog_data *d = r->d;
    const hog_train_opts *o = r->o;
    const bool bias = o->bias != 0.0;
    if (hi <= lo)
        return;
    double inv_m = 1.0 / (double)(hi - lo);
    memset(r->g, 0, r->nw * sizeof *r->g);
    for (uint64_t p = lo; p < hi; p++) {
        struct hog_row row = hog_csr_row(&d->m, perm[p]);
        double y = hog_loss_target(o->loss, d->label_pos, row.y);
        double m = hog_sparse_dot(w, r->nf, row, 0.0);
        if (bias)
            m += (double)w[r->nf] * o->bias;
        double dl = hog_loss_deriv(o->loss, hog_loss_param_of(o), y, m) * inv_m;
        hog_sparse_axpy_d(r->g, dl, row);
        if (bias)
            r->g[r->nf] += dl * o->bias;
    }
    const bool ada = o->schedule == HOG_SCHED_ADAGRAD;
    for (uint64_t j = 0; j < r->nw; j++) {
        double gj = r->g[j], e = eta, a, b;
        if (ada) {
            double G = (double)g2[j] + gj * gj;
            g2[j] = (float)G;
            e = eta / sqrt(ADAGRAD_EPS + G);
            a = fmin(1.0, e * o->l2);
        } else {
            a = e * o->l2;
        }
        b = e * o->l1;
        w[j] = soft((1.0 - a) * (double)w[j] - e * gj, b);
    }
}

/* Replicas 1..R-1 and 0 replaced by their mean (summed in replica order). */
static void ref_average(float **w, unsigned R, uint64_t nw)
{
    if (R < 2)
        return;
    for (uint64_t j = 0; j < nw; j++) {
        float s = w[0][j];
        for (unsigned q = 1; q < R; q++)
            s += w[q][j];
        s *= 1.0f / (float)R;
        for (unsigned q = 0; q < R; q++)
            w[q][j] = s;
    }
}

hog_status hog_gpu_ref_train(const hog_data *d, const hog_train_opts *o,
                             unsigned replicas, uint32_t batch,
                             uint64_t sync_rounds, float *w_out, hog_err *err)
{
    if (replicas < 1 || replicas > HOG_GPU_MAX || batch < 1)
        return hog_errf(err, HOG_EINVAL,
                        "the reference needs 1 to %d replicas and a batch "
                        "of at least one row",
                        HOG_GPU_MAX);
    if (sync_rounds < 1)
        sync_rounds = 1;
    struct hog_gpu_plan plan;
    hog_status st = hog_gpu_plan_make(d->m.rows, replicas, batch, o->seed,
                                      &plan, err);
    if (st != HOG_OK)
        return st;
    struct ref r = { d, o, d->n_features, d->n_features + (o->bias != 0.0),
                     NULL, NULL };
    uint64_t nw = r.nw ? r.nw : 1;
    float *w[HOG_GPU_MAX] = { 0 }, *g2[HOG_GPU_MAX] = { 0 };
    uint64_t *order = malloc((plan.rounds ? plan.rounds : 1) * sizeof *order);
    r.g = malloc(nw * sizeof *r.g);
    r.cnt = calloc(nw, sizeof *r.cnt);
    bool ok = order && r.g && r.cnt;
    for (unsigned q = 0; ok && q < replicas; q++)
        ok = (w[q] = calloc(nw, sizeof *w[q])) &&
             (g2[q] = calloc(nw, sizeof *g2[q]));
    if (!ok) {
        st = hog_errf(err, HOG_ENOMEM,
                      "out of memory for %u reference replicas of %llu "
                      "weights",
                      replicas, (unsigned long long)nw);
        goto out;
    }
    for (uint64_t k = 0; k < plan.rounds; k++)
        order[k] = k;
    struct hog_rng rng;
    hog_rng_seed(&rng, o->seed, 0);
    uint64_t done = 0; /* rounds, all epochs */
    for (unsigned e = 0; e < o->epochs; e++) {
        hog_shuffle_u64(&rng, order, plan.rounds);
        for (uint64_t i = 0; i < plan.rounds; i++, done++) {
            double eta = hog_gpu_eta_at(o, done * replicas * batch, plan.n);
            for (unsigned q = 0; q < replicas; q++) {
                uint64_t lo, hi;
                hog_gpu_plan_part(&plan, order[i], q, &lo, &hi);
                if (o->gpu_step == HOG_GPU_STEP_HOGWILD)
                    ref_hogwild(&r, plan.perm, lo, hi, eta, w[q]);
                else
                    ref_step(&r, plan.perm, lo, hi, eta, w[q], g2[q]);
            }
            if ((i + 1) % sync_rounds == 0 || i + 1 == plan.rounds)
                ref_average(w, replicas, r.nw);
        }
    }
    memcpy(w_out, w[0], r.nw * sizeof *w_out);
out:
    for (unsigned q = 0; q < replicas; q++) {
        free(w[q]);
        free(g2[q]);
    }
    free(order);
    free(r.g);
    free(r.cnt);
    hog_gpu_plan_free(&plan);
    return st;
}
