/*
 * The SGD kernel's state around its rows: set-up and release, a segment's
 * step sizes and prefixes (the maths at the top of sgd.c), the weights out
 * and in, the update modes' locks. The catch-up of every weight at a
 * segment's end is a vector kernel, in sgd_catchup.c.
 */
#include "core/sgd.h"
#include "core/sgd_int.h"

#include "core/fit.h"
#include "core/sgd_lanes.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

hog_status hog_sgd_init_schedule(struct hog_sgd *s, const hog_train_opts *o,
                                 const hog_data *train, hog_err *err)
{
    memset(s, 0, sizeof *s);
    s->loss = o->loss;
    s->loss_param = hog_loss_param_of(o);
    s->schedule = o->schedule;
    s->eta = o->eta;
    s->l1 = o->l1;
    s->l2 = o->l2;
    s->power = o->power;
    s->bias = o->bias;
    s->label_pos = train->label_pos;
    s->n_features = train->n_features;
    s->n_weights = train->n_features + (o->bias != 0.0);
    s->rows = train->m.rows ? train->m.rows : 1;
    bool ada = s->schedule == HOG_SCHED_ADAGRAD;
    bool ftrl = s->schedule == HOG_SCHED_FTRL; /* closed form: no lazy state */
    /* averaging sums the stamped kind's states (sgd_avg.h); the conflicts
     * refuse it with AdaGrad and FTRL */
    bool avg = o->average && !ada && !ftrl;
    s->avg_from = avg ? o->average : 0;
    s->reg = ftrl ? HOG_SGD_REG_NONE
             : s->l1 > 0 || (ada && s->l2 > 0) || avg ? HOG_SGD_REG_STAMPED
             : s->l2 > 0                       ? HOG_SGD_REG_SCALED
                                               : HOG_SGD_REG_NONE;
    s->seg_cap = s->rows < HOG_SGD_SEG_MAX ? (uint32_t)s->rows
                                           : HOG_SGD_SEG_MAX;
    if (ada || ftrl)
        s->seg_cap = UINT32_MAX - 1;

    bool ok = true;
    if (!ada && !ftrl) {
        ok = (s->seg_eta = malloc(s->seg_cap * sizeof *s->seg_eta)) != NULL;
        if (ok && s->reg != HOG_SGD_REG_NONE)
            ok = (s->pre = malloc(((size_t)s->seg_cap + 1) *
                                  sizeof *s->pre)) != NULL;
        if (ok && avg)
            ok = (s->asuf = malloc(((size_t)s->seg_cap + 2) *
                                   sizeof *s->asuf)) != NULL;
    }
    if (!ok) {
        hog_sgd_free(s);
        return hog_errf(err, HOG_ENOMEM, "out of memory for the step sizes "
                        "of a segment of %u steps", s->seg_cap);
    }
    return HOG_OK;
}

/* The weights and their sums and stamps, or FTRL's words. */
static hog_status state_alloc(struct hog_sgd *s, hog_err *err)
{
    bool ada = s->schedule == HOG_SCHED_ADAGRAD;
    size_t nw = s->n_weights ? s->n_weights : 1;
    if (s->schedule == HOG_SCHED_FTRL) { /* (z, r) = (0, 0): weights 0 */
        if ((s->zn = calloc(nw, sizeof *s->zn)) != NULL)
            return HOG_OK;
        return hog_errf(err, HOG_ENOMEM,
                        "out of memory for the FTRL state of %llu weights",
                        (unsigned long long)nw);
    }
    bool ok = (s->w = calloc(nw, sizeof *s->w)) != NULL;
    if (ok && s->reg == HOG_SGD_REG_STAMPED)
        ok = (s->stamp = calloc(nw, sizeof *s->stamp)) != NULL;
    if (ok && ada)
        ok = (s->g2 = calloc(nw, sizeof *s->g2)) != NULL;
    if (ok && s->avg_from)
        ok = (s->asum = calloc(nw, sizeof *s->asum)) != NULL;
    if (!ok)
        return hog_errf(err, HOG_ENOMEM,
                        "out of memory for the SGD state of %llu weights",
                        (unsigned long long)nw);
    return HOG_OK;
}

/* The threads that may run the kernel on one state at once: Hogwild!'s
 * (every allowed CPU when o->threads is 0, as the pool has), else one. */
static unsigned kernel_threads(const hog_train_opts *o)
{
    if (o->algo != HOG_ALGO_HOGWILD)
        return 1;
    unsigned t = o->threads ? o->threads : hog_allowed_cpus();
    return t ? t : 1;
}

hog_status hog_sgd_set_rows(struct hog_sgd *s, uint64_t rows, hog_err *err)
{
    s->rows = rows ? rows : 1;
    if (s->schedule == HOG_SCHED_ADAGRAD || s->schedule == HOG_SCHED_FTRL)
        return HOG_OK; /* no arrays per step, nothing read of the rows */
    uint32_t cap = s->rows < HOG_SGD_SEG_MAX ? (uint32_t)s->rows
                                             : HOG_SGD_SEG_MAX;
    if (cap > s->seg_cap) {
        void *p = realloc(s->seg_eta, cap * sizeof *s->seg_eta);
        if (!p)
            goto oom;
        s->seg_eta = p;
        if (s->pre) {
            if (!(p = realloc(s->pre, ((size_t)cap + 1) * sizeof *s->pre)))
                goto oom;
            s->pre = p;
        }
        if (s->asuf) {
            if (!(p = realloc(s->asuf, ((size_t)cap + 2) * sizeof *s->asuf)))
                goto oom;
            s->asuf = p;
        }
    }
    s->seg_cap = cap;
    return HOG_OK;
oom:
    return hog_errf(err, HOG_ENOMEM, "out of memory for the step sizes of "
                    "a segment of %u steps", cap);
}

float hog_sgd_weight(const struct hog_sgd *s, uint64_t j)
{
    if (s->zn) {
        float c[2];
        ftrl_unpack(hog_u64_load(&s->zn[j]), c);
        return ftrl_weight(c[0], c[1],
                           ftrl_lam_at(s, s->seg_t0 + s->seg_len));
    }
    return hog_f_load(&s->w[j]);
}

hog_status hog_sgd_init_unplaced(struct hog_sgd *s, const hog_train_opts *o,
                                 const hog_data *train, hog_err *err)
{
    hog_status st = hog_sgd_init_schedule(s, o, train, err);
    if (st != HOG_OK)
        return st;
    /* the rows' buffers now, so that a run never allocates one: the
     * kernel's loops have no status to return a failure through */
    if ((st = state_alloc(s, err)) != HOG_OK ||
        (st = hog_cross_bufs_init(&s->xbufs, train, kernel_threads(o),
                                  err)) != HOG_OK)
        hog_sgd_free(s);
    return st;
}

void hog_sgd_populate(struct hog_sgd *s)
{
    size_t nw = s->n_weights;
    if (s->zn)
        hog_populate(s->zn, nw * sizeof *s->zn, true);
    if (s->w)
        hog_populate(s->w, nw * sizeof *s->w, true);
    if (s->stamp)
        hog_populate(s->stamp, nw * sizeof *s->stamp, true);
    if (s->g2)
        hog_populate(s->g2, nw * sizeof *s->g2, true);
    if (s->asum)
        hog_populate(s->asum, nw * sizeof *s->asum, true);
}

hog_status hog_sgd_init(struct hog_sgd *s, const hog_train_opts *o,
                        const hog_data *train, hog_err *err)
{
    hog_status st = hog_sgd_init_unplaced(s, o, train, err);
    if (st == HOG_OK)
        hog_sgd_populate(s);
    return st;
}

void hog_sgd_free(struct hog_sgd *s)
{
    free(s->w);
    free(s->g2);
    free(s->stamp);
    free(s->pre);
    free(s->seg_eta);
    free(s->zn);
    free(s->asum);
    free(s->asuf);
    s->asum = NULL;
    s->asuf = NULL;
    if (s->wide)
        free(s->zk);
    else
        hog_cross_bufs_free(&s->xbufs);
    s->zn = NULL;
    s->zk = NULL;
    s->w = s->g2 = NULL;
    s->stamp = NULL;
    s->pre = NULL;
    s->seg_eta = NULL;
}

double hog_sgd_eta_at(const struct hog_sgd *s, uint64_t t)
{
    if (s->schedule != HOG_SCHED_INVSCALING)
        return s->eta;
    if (s->l2 > 0)
        return s->eta / (1.0 + s->eta * s->l2 * (double)t);
    return s->eta / pow(1.0 + (double)t / (double)s->rows, s->power);
}

/* Averaged SGD: the segment's suffix sums (sgd_avg.h), the states of
 * global index avg_first on counted; the run's first segment fixes
 * avg_first (a warm start's state goes on from its step count, and
 * averaging from this run's N-th step). */
static void avg_suffix(struct hog_sgd *s)
{
    if (!s->avg_first)
        s->avg_first = s->seg_t0 + s->avg_from;
    struct hog_sgd_asuf *u = s->asuf;
    const uint32_t len = s->seg_len;
    u[len + 1] = (struct hog_sgd_asuf){ 0, 0 };
    for (uint32_t i = len; i >= 1; i--) {
        double m = s->seg_t0 + i >= s->avg_first ? 1.0 / s->pre[i].q : 0.0;
        u[i] = (struct hog_sgd_asuf){ u[i + 1].q + m,
                                      u[i + 1].c + m * s->pre[i].c };
    }
    u[0] = u[1];
}

uint32_t hog_sgd_segment_begin(struct hog_sgd *s, uint64_t t0, uint32_t want)
{
    if (want < 1)
        want = 1;
    if (want > s->seg_cap)
        want = s->seg_cap;
    s->seg_t0 = t0;
    s->seg_len = want;
    if (s->schedule == HOG_SCHED_ADAGRAD || s->schedule == HOG_SCHED_FTRL)
        return want;
    for (uint32_t i = 0; i < want; i++)
        s->seg_eta[i] = hog_sgd_eta_at(s, t0 + i);
    if (!s->pre)
        return want;
    double q = 1.0, c = 0.0;
    s->pre[0] = (struct hog_sgd_prefix){ 1.0, 0.0 };
    for (uint32_t i = 0; i < want; i++) {
        double qn = q / (1.0 - s->seg_eta[i] * s->l2);
        if (i > 0 && qn > 1.0 / HOG_SGD_PREFIX_MIN) {
            s->seg_len = i;
            break;
        }
        q = qn;
        c += s->seg_eta[i] * s->l1 * q;
        s->pre[i + 1] = (struct hog_sgd_prefix){ q, c };
    }
    if (s->asuf)
        avg_suffix(s);
    return s->seg_len;
}

hog_status hog_sgd_init_wide(struct hog_sgd *s, const hog_train_opts *o,
                             const hog_data *train, uint32_t k,
                             const double *pos, hog_err *err)
{
    if (o->schedule != HOG_SCHED_FTRL || k < 1 || k > HOG_SGD_WIDE_MAX)
        return hog_errf(err, HOG_EINVAL, "classes stepped together: "
                        "FTRL-Proximal and 1 to %d classes only, not %u",
                        HOG_SGD_WIDE_MAX, k);
    hog_status st = hog_sgd_init_schedule(s, o, train, err);
    if (st != HOG_OK)
        return st;
    s->wide = k;
    s->wide_pos = pos;
    size_t nw = s->n_weights ? s->n_weights : 1;
    size_t per = 2 * (size_t)wide_lanes(s) * sizeof *s->zk;
    if (nw <= SIZE_MAX / per &&
        (s->zk = aligned_alloc(HOG_CACHELINE, nw * per)) != NULL) {
        memset(s->zk, 0, nw * per);
        return HOG_OK;
    }
    hog_sgd_free(s);
    return hog_errf(err, HOG_ENOMEM, "out of memory for the FTRL state of "
                    "%u classes of %llu weights", k, (unsigned long long)nw);
}

void hog_sgd_copy_weights_range(const struct hog_sgd *s, float *out,
                                uint64_t lo, uint64_t hi)
{
    if (s->zn) {
        hog_sgd_ftrl_weights_range(s, s->seg_t0 + s->seg_len, out, lo, hi);
        return;
    }
    /* averaged: the mean of the states counted so far; none yet (the run
     * ended before step N, as scikit-learn's): the last iterate */
    if (s->asum && s->avg_first && s->avg_end >= s->avg_first) {
        double n = (double)(s->avg_end - s->avg_first + 1);
        for (uint64_t j = lo; j < hi; j++)
            out[j] = (float)(hog_d_load(&s->asum[j]) / n);
        return;
    }
    for (uint64_t j = lo; j < hi; j++)
        out[j] = hog_f_load(&s->w[j]);
}

void hog_sgd_copy_weights(const struct hog_sgd *s, float *out)
{
    hog_sgd_copy_weights_range(s, out, 0, s->n_weights);
}

void hog_sgd_set_weights(struct hog_sgd *s, const float *in)
{
    if (s->zn) { /* the z that gives w = in[j] at n = 0, now */
        const struct ftrl_lam L = ftrl_lam_at(s, s->seg_t0 + s->seg_len);
        for (uint64_t j = 0; j < s->n_weights; j++)
            hog_u64_store(&s->zn[j], ftrl_pack((const float[2]){
                                   ftrl_z_of(in[j], L), 0.0f }));
        return;
    }
    /* between segments every kind holds the weights themselves (scale 1,
     * stamps 0) */
    for (uint64_t j = 0; j < s->n_weights; j++)
        hog_f_store(&s->w[j], in[j]);
}


/* ---- the catch-up's maths as functions (softmax.c, the tests) ------------- */

double hog_sgd_adagrad_decay(double a, uint32_t k, double *q)
{
    return ada_decay(a, k, q);
}

double hog_sgd_shrink_exact(double a, uint32_t k)
{
    return shrink_pow(a, k);
}

/* ---- the update modes' locks, the progress tally --------------------------- */

hog_status hog_sgd_locks_init(struct hog_sgd_locks *l, hog_update mode,
                              const struct hog_sgd *s, hog_err *err)
{
    memset(l, 0, sizeof *l);
    if (mode == HOG_UPDATE_STRIPED) {
        l->n_stripes = (s->n_weights >> HOG_SGD_STRIPE_SHIFT) + 1;
        l->stripe = calloc(l->n_stripes, sizeof *l->stripe);
        if (!l->stripe)
            return hog_errf(err, HOG_ENOMEM,
                            "out of memory for %llu stripe locks",
                            (unsigned long long)l->n_stripes);
    } else if (mode == HOG_UPDATE_MUTEX) {
        pthread_mutex_t *m = malloc(sizeof *m);
        if (!m)
            return hog_errf(err, HOG_ENOMEM, "out of memory for a mutex");
        pthread_mutex_init(m, NULL);
        l->mutex = m;
    } else {
        mode = HOG_UPDATE_NONE;
    }
    l->mode = mode;
    return HOG_OK;
}

void hog_sgd_locks_free(struct hog_sgd_locks *l)
{
    if (l->mutex) {
        pthread_mutex_destroy(l->mutex);
        free(l->mutex);
    }
    free(l->stripe);
    memset(l, 0, sizeof *l);
}

void hog_sgd_tally_report(struct hog_fit *f, const struct hog_sgd *s,
                          const struct hog_sgd_tally *t)
{
    if (!t->rows)
        return;
    f->prog_loss = t->loss / (double)t->rows;
    f->prog_accuracy = hog_loss_is_classification(s->loss)
                           ? (double)t->right / (double)t->rows
                           : NAN;
}
