/*
 * L-BFGS (Liu and Nocedal, Math. Programming 1989) for L2-regularised
 * smooth losses, and OWL-QN (Andrew and Gao, ICML 2007) when l1 > 0.
 *
 * With r = l1 when l1 > 0, else l2, C = 1 / (r n) and row weights v_i
 * (C_i = C v_i) it minimises the front door's objective over r,
 *
 *     f(w) = sum_i C_i loss(y_i, w.x_i) + l2/(2 r) |w|^2 + l1/r |w|_1,
 *
 * LIBLINEAR's scale: 1/2 |w|^2 + C sum loss for -s 0, -s 2 and -s 11,
 * |w|_1 + C sum loss for -s 6 and -s 5 (the bias regularised like the
 * others, as their -B 1 does). h(w), f without its L1 term, is smooth.
 *
 * Each iteration: the pseudo-gradient pg (h's gradient g where w_j != 0,
 * else the one-sided derivative of f that descends, 0 when none does;
 * g itself without L1), the direction d = -H pg by the two-loop
 * recursion over the last MEM pairs s = w' - w, y = g' - g (h's gradients
 * only), H0 = (s.y / y.y) I from the newest pair; with L1, d_j set to 0
 * where it does not point against pg_j. The line search is Armijo
 * backtracking (steps 1, 1/2, 1/4, ...; the first iteration starts at
 * 1 / |pg|): the trial point w + a d, with L1 projected onto w's orthant
 * (zero where a weight would change sign; a zero weight takes the sign
 * of -pg_j), is taken once f falls by at least 1e-4 of pg.(w' - w).
 * A pair with s.y not above 1e-10 y.y (no curvature seen) is not kept; a
 * search that fails drops the pairs and tries -pg; failing on -pg too
 * ends the run as far as f's rounding goes.
 *
 * Stopping: LIBLINEAR's -e rule. Without L1 that of -s 0, |g| <= eps |g0|,
 * eps = tol max(min(pos, neg), 1) / n (regression: tol), w0 = 0. With L1
 * the form of -s 6's newGLMNET rule, the 1-norm of the pseudo-gradient
 * (its minimum-norm subgradient) against w0's, |pg|_1 <= OWLQN_TOL eps
 * |pg0|_1: a tenth of LIBLINEAR's share, as OWL-QN's objective lags
 * newGLMNET's at the same |pg|_1. --epochs caps the iterations, each
 * reported as an epoch.
 *
 * Each evaluation of f is one pass over the data (hog_newton_pass: the
 * margins, the loss and X^T (C_i loss') together) and each loop over the
 * weights one hog_newton_vec, whose sums run over fixed blocks and ranges
 * added in order: the model does not depend on the thread count.
 */
#include "newton/newton.h"

#include "core/loss.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MEM 10           /* pairs kept: the usual choice, 20 nw doubles */
#define ARMIJO 1e-4      /* the share of the first-order decrease asked */
#define BACKTRACKS 40    /* halvings before a search gives up */
#define CURVATURE 1e-10  /* a pair is kept when s.y > this * y.y */
/* With L1, the share of LIBLINEAR's -s 6 tolerance asked of |pg|_1: at its
 * own, OWL-QN's many short steps stop 1.7e-3 above newGLMNET's objective
 * on news20.binary (-e 0.01); at a tenth, 6e-6 below it (docs/TRAINING.md,
 * "L-BFGS and OWL-QN"). */
#define OWLQN_TOL 0.1

struct lbfgs {
    struct hog_fit *f;
    struct hog_newton_blocks bl;
    hog_loss loss;
    double lp;               /* its parameter (core/loss.h) */
    uint64_t n, nw;
    double C, r, lam1, lam2; /* lam1 = l1 / r, lam2 = l2 / r */
    const float *rw;         /* row weights, NULL: all 1 */
    double *y;               /* the loss's targets */
    double *w, *wnew, *g, *gnew, *pg, *d;
    double *S[MEM], *Y[MEM]; /* pair k % MEM is the k-th kept */
    double rho[MEM], alpha[MEM], gamma;
    unsigned kept, len;      /* pairs kept in all, and held (<= MEM) */
};

/* ---- the pass's rows ------------------------------------------------------- */

/* f's data part and its gradient's coefficients in one pass */
static double fg_row(void *ctx, uint64_t i, double m, double *acc)
{
    const struct lbfgs *t = ctx;
    double c = t->rw ? t->C * (double)t->rw[i] : t->C;
    if (c == 0.0)
        return 0.0;
    *acc += c * hog_loss_value(t->loss, t->lp, t->y[i], m);
    return c * hog_loss_deriv(t->loss, t->lp, t->y[i], m);
}

/* ---- vectors --------------------------------------------------------------- */

/* Every loop over the weights is one of these, run by hog_newton_vec over
 * fixed ranges (sum[q] as written, in index order within a range). */
struct vop {
    struct lbfgs *t;
    double *out;
    const double *x, *u; /* out += a x; u: the next dot's vector */
    double a;
};

static double vec(struct lbfgs *t, hog_newton_vec_fn fn, struct vop *op,
                  double *sum)
{
    double tmp[HOG_NEWTON_VEC_SUMS];
    op->t = t;
    hog_newton_vec(&t->bl, fn, op, sum ? sum : tmp);
    return sum ? sum[0] : tmp[0];
}

/* The pseudo-gradient at w_j with h's gradient g_j: where w_j = 0 the
 * one-sided derivative of f that is negative, if either is. */
static inline double pseudo(double w, double g, double lam1)
{
    if (w > 0)
        return g + lam1;
    if (w < 0)
        return g - lam1;
    if (g + lam1 < 0)
        return g + lam1;
    if (g - lam1 > 0)
        return g - lam1;
    return 0.0;
}

/* At the start: g += lam2 w, pg; sum0 = |pg|^2, sum1 = |pg|_1 */
static void op_start(void *ctx, uint64_t lo, uint64_t hi, double *sum)
{
    struct lbfgs *t = ((const struct vop *)ctx)->t;
    for (uint64_t j = lo; j < hi; j++) {
        t->g[j] += t->lam2 * t->w[j];
        double p = pseudo(t->w[j], t->g[j], t->lam1);
        t->pg[j] = p;
        sum[0] += p * p;
        sum[1] += fabs(p);
    }
}

/* out = x (u: sum0 = u.out) */
static void op_copy(void *ctx, uint64_t lo, uint64_t hi, double *sum)
{
    const struct vop *op = ctx;
    for (uint64_t j = lo; j < hi; j++) {
        op->out[j] = op->x[j];
        if (op->u)
            sum[0] += op->u[j] * op->out[j];
    }
}

/* out += a x (u: sum0 = u.out) */
static void op_axpy(void *ctx, uint64_t lo, uint64_t hi, double *sum)
{
    const struct vop *op = ctx;
    for (uint64_t j = lo; j < hi; j++) {
        op->out[j] += op->a * op->x[j];
        if (op->u)
            sum[0] += op->u[j] * op->out[j];
    }
}

/* out *= a (u: sum0 = u.out) */
static void op_scale(void *ctx, uint64_t lo, uint64_t hi, double *sum)
{
    const struct vop *op = ctx;
    for (uint64_t j = lo; j < hi; j++) {
        op->out[j] *= op->a;
        if (op->u)
            sum[0] += op->u[j] * op->out[j];
    }
}

/* d = -d, with L1 zero where it does not point against pg (Andrew and
 * Gao's projection of the direction); sum0 = pg.d */
static void op_direction(void *ctx, uint64_t lo, uint64_t hi, double *sum)
{
    struct lbfgs *t = ((const struct vop *)ctx)->t;
    for (uint64_t j = lo; j < hi; j++) {
        double d = -t->d[j];
        if (t->lam1 > 0 && d * t->pg[j] >= 0)
            d = 0.0;
        t->d[j] = d;
        sum[0] += t->pg[j] * d;
    }
}

/* wnew = w + a d, with L1 kept in w's orthant (a zero weight's: that of
 * -pg); sum0 = |wnew|^2, sum1 = |wnew|_1, sum2 = pg.(wnew - w) */
static void op_trial(void *ctx, uint64_t lo, uint64_t hi, double *sum)
{
    const struct vop *op = ctx;
    struct lbfgs *t = op->t;
    for (uint64_t j = lo; j < hi; j++) {
        double w = t->w[j], v = w + op->a * t->d[j];
        if (t->lam1 > 0) {
            double orth = w != 0 ? w : -t->pg[j];
            if (v * orth <= 0)
                v = 0.0;
        }
        t->wnew[j] = v;
        sum[0] += v * v;
        sum[1] += fabs(v);
        sum[2] += t->pg[j] * (v - w);
    }
}

/* The step taken: gnew += lam2 wnew, the pair s = wnew - w, y = gnew - g
 * into out (S) and u (Y), pg at wnew; sum0 = s.y, sum1 = y.y,
 * sum2 = |pg|^2, sum3 = |pg|_1 */
static void op_accept(void *ctx, uint64_t lo, uint64_t hi, double *sum)
{
    const struct vop *op = ctx;
    struct lbfgs *t = op->t;
    double *s = op->out, *y = (double *)op->u;
    for (uint64_t j = lo; j < hi; j++) {
        double wn = t->wnew[j], gn = t->gnew[j] + t->lam2 * wn;
        t->gnew[j] = gn;
        s[j] = wn - t->w[j];
        y[j] = gn - t->g[j];
        double p = pseudo(wn, gn, t->lam1);
        t->pg[j] = p;
        sum[0] += s[j] * y[j];
        sum[1] += y[j] * y[j];
        sum[2] += p * p;
        sum[3] += fabs(p);
    }
}

/* ---- the direction ----------------------------------------------------------- */

/* d = -H pg by the two-loop recursion (newest pair first, then oldest
 * first), each step's axpy fused with the next step's dot; returns
 * pg.d after the L1 projection. */
static double direction(struct lbfgs *t)
{
    unsigned len = t->len, newest = t->kept - 1;
    double dot;
    if (len == 0) {
        vec(t, op_copy, &(struct vop){ .out = t->d, .x = t->pg }, NULL);
        return vec(t, op_direction, &(struct vop){ 0 }, NULL);
    }
    dot = vec(t, op_copy, &(struct vop){ .out = t->d, .x = t->pg,
                                         .u = t->S[newest % MEM] }, NULL);
    for (unsigned q = 0; q < len; q++) {
        unsigned k = (newest - q) % MEM;
        t->alpha[k] = t->rho[k] * dot;
        const double *next = q + 1 < len ? t->S[(newest - q - 1) % MEM]
                                         : NULL;
        dot = vec(t, op_axpy, &(struct vop){ .out = t->d, .x = t->Y[k],
                                             .u = next, .a = -t->alpha[k] },
                  NULL);
    }
    unsigned oldest = t->kept - len;
    dot = vec(t, op_scale, &(struct vop){ .out = t->d, .a = t->gamma,
                                          .u = t->Y[oldest % MEM] }, NULL);
    for (unsigned q = 0; q < len; q++) {
        unsigned k = (oldest + q) % MEM;
        double beta = t->rho[k] * dot;
        const double *next = q + 1 < len ? t->Y[(oldest + q + 1) % MEM]
                                         : NULL;
        dot = vec(t, op_axpy, &(struct vop){ .out = t->d, .x = t->S[k],
                                             .u = next,
                                             .a = t->alpha[k] - beta },
                  NULL);
    }
    return vec(t, op_direction, &(struct vop){ 0 }, NULL);
}

/* ---- the run --------------------------------------------------------------- */

static void lbfgs_free(struct lbfgs *t)
{
    hog_newton_blocks_close(&t->bl);
    double *v[] = { t->y, t->w, t->wnew, t->g, t->gnew, t->pg, t->d };
    for (size_t k = 0; k < sizeof v / sizeof *v; k++)
        free(v[k]);
    for (unsigned k = 0; k < MEM; k++) {
        free(t->S[k]);
        free(t->Y[k]);
    }
}

static hog_status setup(struct lbfgs *t, hog_err *err)
{
    struct hog_fit *f = t->f;
    hog_status st = hog_newton_open(&t->bl, f, err);
    if (st != HOG_OK)
        return st;
    uint64_t n = t->n, nw = t->nw = t->bl.nw;
    double **cols[6 + 2 * MEM] = { &t->w, &t->wnew, &t->g, &t->gnew,
                                   &t->pg, &t->d };
    for (unsigned k = 0; k < MEM; k++) {
        cols[6 + 2 * k] = &t->S[k];
        cols[7 + 2 * k] = &t->Y[k];
    }
    bool ok = (t->y = hog_malloc_big(n * sizeof(double))) != NULL;
    for (size_t k = 0; k < sizeof cols / sizeof *cols; k++)
        ok &= (*cols[k] = hog_calloc_big(nw, sizeof(double))) != NULL;
    if (!ok)
        return hog_errf(err, HOG_ENOMEM, "out of memory for L-BFGS's vectors "
                        "(%llu rows, %llu weights, %d pairs)",
                        (unsigned long long)n, (unsigned long long)nw, MEM);
    f->aux_bytes = t->bl.bytes + (n + (6 + 2 * MEM) * nw) * sizeof(double);
    hog_newton_targets(f, t->loss, t->y);
    if ((st = hog_newton_count(&t->bl, t->y, n, err)) != HOG_OK)
        return st;
    /* the rows of every rank: C n = 1 / r */
    t->C = 1.0 / (t->r * (double)t->bl.rows);
    return HOG_OK;
}

struct point {
    double f, loss; /* f(w) and its data part */
    double gnorm;   /* the stopping rule's norm of pg */
};

/* The line search from w along d (pg.d = slope < 0): on success wnew,
 * gnew (data part) and *next hold the point taken. */
static bool search(struct lbfgs *t, const struct point *at, double slope,
                   double a, struct point *next)
{
    double sum[HOG_NEWTON_VEC_SUMS];
    for (int b = 0; b < BACKTRACKS && slope < 0 && t->bl.st == HOG_OK;
         b++, a *= 0.5) {
        vec(t, op_trial, &(struct vop){ .a = a }, sum);
        double decrease = sum[2];
        if (!(decrease < 0)) /* projected away, or lost to rounding */
            return false;
        double loss = hog_newton_pass(&t->bl, t->wnew, fg_row, t, t->gnew,
                                      false);
        double fn = loss + 0.5 * t->lam2 * sum[0] + t->lam1 * sum[1];
        if (fn <= at->f + ARMIJO * decrease) {
            next->f = fn;
            next->loss = loss;
            return true;
        }
    }
    return false;
}

/* The point found becomes w; its pair kept when it shows curvature. */
static void accept(struct lbfgs *t, struct point *p)
{
    double sum[HOG_NEWTON_VEC_SUMS];
    unsigned k = t->kept % MEM;
    vec(t, op_accept, &(struct vop){ .out = t->S[k], .u = t->Y[k] }, sum);
    double *swap = t->w;
    t->w = t->wnew, t->wnew = swap;
    swap = t->g, t->g = t->gnew, t->gnew = swap;
    p->gnorm = t->lam1 > 0 ? sum[3] : sqrt(sum[2]);
    double sy = sum[0], yy = sum[1];
    if (sy > CURVATURE * yy && yy > 0) {
        t->rho[k] = 1.0 / sy;
        t->gamma = sy / yy;
        t->kept++;
        t->len += t->len < MEM;
    } else if (t->len == MEM) {
        t->len--; /* slot k held the oldest pair, now overwritten */
    }
}

static hog_status report(struct lbfgs *t, unsigned epoch, double secs,
                         const struct point *p, bool stop, bool converged,
                         hog_err *err)
{
    /* f is F / r, and C n = 1 / r */
    struct hog_newton_iter it = { "L-BFGS", t->w, epoch, secs, p->f * t->r,
                                  p->loss * t->r, stop, converged };
    return hog_newton_report(t->f, &t->bl, &it, err);
}

static hog_status iterate(struct lbfgs *t, double t0, hog_err *err)
{
    const hog_train_opts *o = t->f->o;
    double sum[HOG_NEWTON_VEC_SUMS];
    struct point at;
    at.loss = hog_newton_pass(&t->bl, t->w, fg_row, t, t->g, false);
    at.f = at.loss; /* w = 0 */
    vec(t, op_start, &(struct vop){ 0 }, sum);
    at.gnorm = t->lam1 > 0 ? sum[1] : sqrt(sum[0]);
    const double gnorm0 = at.gnorm, first_step = 1.0 / sqrt(sum[0]);
    const double eps = hog_newton_rel_tol(&t->bl, t->loss, o->tol) *
                       (t->lam1 > 0 ? OWLQN_TOL : 1.0);
    if (at.gnorm <= eps * gnorm0) /* tol >= 1 or a zero gradient */
        return report(t, 1, hog_now() - t0, &at, true, true, err);

    for (unsigned epoch = 1; epoch <= o->epochs; epoch++) {
        struct point next;
        bool found = false;
        /* the pairs' direction first; -pg when its search fails */
        for (int tries = 0; tries < 2 && !found; tries++) {
            if (tries)
                t->len = 0;
            bool fresh = t->len == 0;
            double slope = direction(t);
            double a = t->kept == 0 ? first_step : 1.0;
            found = search(t, &at, slope, a, &next);
            if (fresh)
                break;
        }
        bool converged = false, stuck = !found;
        if (found) {
            accept(t, &next);
            at = next;
            converged = at.gnorm <= eps * gnorm0;
        }
        double secs = hog_now() - t0;
        hog_status st = report(t, epoch, secs, &at, converged || stuck,
                               converged || stuck, err);
        if (st != HOG_OK || converged || stuck)
            return st;
        t0 = hog_now();
    }
    return HOG_OK;
}

hog_status hog_lbfgs_train(struct hog_fit *f, hog_err *err)
{
    double t0 = hog_now();
    const hog_train_opts *o = f->o;
    struct lbfgs t;
    memset(&t, 0, sizeof t);
    t.f = f;
    t.loss = o->loss;
    t.lp = hog_loss_param_of(o);
    t.n = f->train->m.rows;
    t.r = o->l1 > 0 ? o->l1 : o->l2;
    t.lam1 = o->l1 / t.r;
    t.lam2 = o->l2 / t.r;
    t.rw = f->train->row_w;
    hog_status st = setup(&t, err);
    if (st == HOG_OK)
        st = iterate(&t, t0, err);
    lbfgs_free(&t);
    return st;
}

