/*
 * Dual coordinate descent for L2-regularized support vector regression
 * (Ho and Lin, JMLR 2012; LIBLINEAR's solve_l2r_l1l2_svr: -s 13 for the
 * epsilon-insensitive loss, -s 12 for the squared one).
 *
 * With C = 1 / (l2 n), minimising the front door's objective
 * (1/n) sum loss(w.x_i - y_i) + l2/2 |w|^2 is minimising LIBLINEAR's
 * primal P(w) = 1/2 |w|^2 + C sum_i loss(w.x_i - y_i), whose dual is
 *
 *   min_b  1/2 b'Qb + sum_i (lambda/2 b_i^2 + p |b_i| - y_i b_i),
 *   -U <= b_i <= U,   Q_ij = x_i.x_j,
 *
 *   epsilon-insensitive: U = C, lambda = 0;
 *   squared epsilon-insensitive: U = inf, lambda = 1/(2C),
 *
 * p the tube (hog_train_opts.epsilon), with w = sum_i b_i x_i kept
 * current. One coordinate step on row i: G = w.x_i - y_i + lambda b_i,
 * H = |x_i|^2 + lambda, G+ = G + p, G- = G - p; the one-variable
 * problem's minimiser is b_i - G+/H where G+ < H b_i, b_i - G-/H where
 * G- > H b_i, else 0, clipped to [-U, U]; then w += (b_i' - b_i) x_i.
 * Shrinking and stopping are LIBLINEAR's: a row at a bound (or at 0)
 * whose gradient pushes it outwards by more than last epoch's largest
 * violation leaves the active set; the run stops once the epoch's summed
 * violation is at most tol times the first epoch's with every row
 * active (the active set's convergence brings every row back first).
 * Also after `epochs`.
 *
 * Row weights v_i: C_i = C v_i per row (U_i = C_i, lambda_i = 1/(2 C_i));
 * a row of weight 0 has b_i = 0 and is never visited.
 *
 * One worker: the epoch is the serial algorithm, deterministic given the
 * seed (the driver's shuffle). Parallel updates as dcd.c's PASSCoDe are
 * not done here.
 */
#include "coordinate/internal.h"

#include "core/loss.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct svr {
    struct hog_coord co;
    const struct hog_csr *m;
    uint64_t n, nf;
    double bias, C, p;
    bool l1;              /* epsilon-insensitive (-s 13); else squared */
    const float *rw;      /* row weights (NULL: all 1) */
    const float *y;       /* the targets */
    uint64_t live;        /* rows of positive weight */
    double *beta;         /* b_i */
    double *qd;           /* |x_i|^2 (+ bias^2) */
    double gmax_old, gmax, gnorm1, gnorm1_init;
    uint64_t kept;
};

_Static_assert(offsetof(struct svr, co) == 0, "co must come first");

static inline double row_cw(const struct svr *s, uint64_t i)
{
    return s->rw ? s->C * (double)s->rw[i] : s->C;
}

/* Row i's bound U_i and lambda_i (weight > 0). */
static inline void row_ul(const struct svr *s, uint64_t i, double *U,
                          double *lam)
{
    double c = row_cw(s, i);
    *U = s->l1 ? c : INFINITY;
    *lam = s->l1 ? 0.0 : 1.0 / (2.0 * c);
}

static inline double row_dot(const struct svr *s, struct hog_row r)
{
    double d = hog_sparse_dot_d_relaxed(s->co.w, r, 0.0);
    if (s->bias != 0.0)
        d += hog_d_load(&s->co.w[s->nf]) * s->bias;
    return d;
}

static inline void row_axpy(const struct svr *s, double a, struct hog_row r)
{
    hog_sparse_axpy_d_wild_n(s->co.w, a, r.idx, r.val, r.nnz);
    if (s->bias != 0.0)
        hog_d_add_wild(&s->co.w[s->nf], a * s->bias);
}

static void all_rows(struct svr *s)
{
    uint64_t k = 0;
    for (uint64_t i = 0; i < s->n; i++)
        if (!s->rw || s->rw[i] > 0.0f)
            s->co.act[k++] = i;
    s->co.active = k;
}

static hog_status svr_setup(struct hog_coord *c, hog_err *err)
{
    struct svr *s = (struct svr *)c;
    uint64_t nw = c->nw = s->nf + (s->bias != 0.0);
    c->w = hog_zalloc(nw, sizeof *c->w);
    s->beta = calloc(s->n ? s->n : 1, sizeof *s->beta);
    s->qd = malloc((s->n ? s->n : 1) * sizeof *s->qd);
    c->act = malloc((s->n ? s->n : 1) * sizeof *c->act);
    if (!c->w || !s->beta || !s->qd || !c->act)
        return hog_errf(err, HOG_ENOMEM,
                        "out of memory for the dual variables of %llu rows",
                        (unsigned long long)s->n);
    c->f->aux_bytes = nw * sizeof *c->w +
                      s->n * (2 * sizeof(double) + sizeof(uint64_t));
    s->live = 0;
    for (uint64_t i = 0; i < s->n; i++) {
        struct hog_row r = hog_csr_row(s->m, i);
        s->qd[i] = hog_sparse_sqnorm(r.val, r.nnz, s->bias * s->bias);
        s->live += !s->rw || s->rw[i] > 0.0f;
    }
    all_rows(s);
    return HOG_OK;
}

/* The epoch over c->act[0, active) in the calling thread, the rows kept
 * moved to the front. */
static unsigned svr_run(struct hog_coord *c)
{
    struct svr *s = (struct svr *)c;
    double gmax = 0.0, gnorm1 = 0.0;
    uint64_t k = 0;
    for (uint64_t q = 0; q < c->active; q++) {
        uint64_t i = c->act[q];
        struct hog_row r = hog_csr_row(s->m, i);
        double U, lam, b = s->beta[i];
        row_ul(s, i, &U, &lam);
        double G = row_dot(s, r) - (double)s->y[i] + lam * b;
        double H = s->qd[i] + lam;
        double gp = G + s->p, gn = G - s->p, viol = 0.0;
        bool out = false;
        if (b == 0.0) {
            if (gp < 0.0)
                viol = -gp;
            else if (gn > 0.0)
                viol = gn;
            else
                out = gp > s->gmax_old && gn < -s->gmax_old;
        } else if (b >= U) {
            if (gp > 0.0)
                viol = gp;
            else
                out = gp < -s->gmax_old;
        } else if (b <= -U) {
            if (gn < 0.0)
                viol = -gn;
            else
                out = gn > s->gmax_old;
        } else {
            viol = b > 0.0 ? fabs(gp) : fabs(gn);
        }
        if (out) /* shrunk: left out of the active set */
            continue;
        c->act[k++] = i;
        gmax = viol > gmax ? viol : gmax;
        gnorm1 += viol;
        double d = gp < H * b ? -gp / H : gn > H * b ? -gn / H : -b;
        if (fabs(d) < 1e-12)
            continue;
        double nb = fmin(fmax(b + d, -U), U);
        if (nb != b) {
            s->beta[i] = nb;
            row_axpy(s, nb - b, r);
        }
    }
    s->kept = k;
    s->gmax = gmax;
    s->gnorm1 = gnorm1;
    return 1;
}

static uint64_t svr_kept(const struct hog_coord *c, unsigned t)
{
    (void)t;
    return ((const struct svr *)c)->kept;
}

static bool svr_end(struct hog_coord *c, unsigned nt)
{
    (void)nt;
    struct svr *s = (struct svr *)c;
    if (c->epoch == 1)
        s->gnorm1_init = s->gnorm1;
    if (s->gnorm1 <= c->f->o->tol * s->gnorm1_init) {
        if (c->active == s->live)
            return true;
        all_rows(s); /* the active set converged: check every row */
        s->gmax_old = INFINITY;
        return false;
    }
    s->gmax_old = s->gmax;
    return false;
}

/* The primal and dual objectives in LIBLINEAR's scale, and with them the
 * front door's objective and the relative gap, when someone listens. */
static hog_status svr_report(struct hog_coord *c, hog_err *err)
{
    (void)err;
    struct hog_fit *f = c->f;
    if (!f->hooks.progress)
        return HOG_OK;
    struct svr *s = (struct svr *)c;
    hog_loss loss = s->l1 ? HOG_LOSS_EPS_INSENSITIVE
                          : HOG_LOSS_SQ_EPS_INSENSITIVE;
    double w2 = 0.0, closs = 0.0, dual = 0.0, wloss = 0.0;
    for (uint64_t j = 0; j < c->nw; j++) {
        double v = hog_d_load(&c->w[j]);
        w2 += v * v;
    }
    for (uint64_t i = 0; i < s->n; i++) {
        double v = s->rw ? (double)s->rw[i] : 1.0;
        if (v <= 0.0)
            continue;
        double U, lam, b = s->beta[i], y = (double)s->y[i];
        row_ul(s, i, &U, &lam);
        double l = hog_loss_value(loss, s->p, y, row_dot(s, hog_csr_row(s->m, i)));
        wloss += v * l;
        closs += row_cw(s, i) * l;
        dual += 0.5 * lam * b * b + s->p * fabs(b) - y * b;
    }
    double P = 0.5 * w2 + closs, D = -(0.5 * w2 + dual);
    f->objective = P / (s->C * (double)s->n);
    f->mean_loss = wloss / (double)s->n;
    f->gap = P > 0.0 ? (P - D) / P : 0.0;
    return HOG_OK;
}

hog_status hog_dcd_svr_train(struct hog_fit *f, hog_err *err)
{
    static const struct hog_coord_ops ops = { svr_setup, svr_run, svr_kept,
                                              svr_end, svr_report };
    const hog_data *d = f->train;
    const hog_train_opts *o = f->o;
    struct svr s;
    memset(&s, 0, sizeof s);
    s.co.f = f;
    s.co.ops = &ops;
    s.m = &d->m;
    s.n = d->m.rows;
    s.nf = d->n_features;
    s.bias = o->bias;
    s.C = 1.0 / (o->l2 * (double)s.n);
    s.p = hog_loss_param_of(o);
    s.l1 = o->loss == HOG_LOSS_EPS_INSENSITIVE;
    s.rw = d->row_w;
    s.y = d->m.y;
    s.gmax_old = INFINITY;
    hog_status st =
        hog_coord_drive(&s.co, d->m.nnz + (s.bias != 0.0 ? s.n : 0), err);
    free(s.beta);
    free(s.qd);
    return st;
}
