/*
 * Trust-region Newton for L2-regularised smooth losses (Lin, Weng,
 * Keerthi, JMLR 2008; LIBLINEAR's TRON, -s 0, -s 2, -s 11), with the
 * diagonal preconditioner of Hsia, Chiang, Lin (ACML 2018).
 *
 * With C = 1 / (l2 n) and row weights v_i (C_i = C v_i) it minimises
 *
 *     f(w) = 1/2 |w|^2 + sum_i C_i loss(y_i, w.x_i),
 *
 * the front door's objective times 1 / l2 (the bias a weight like the
 * others, as LIBLINEAR -B 1 regularises it). With D_i = C_i loss''(y_i, z_i)
 * at the margins z = X w:
 *
 *     g = w + X^T (C_i loss'(y_i, z_i)),   H s = s + X^T (D X s),
 *     M = (1 - a) + a (1 + diag(X^T D X)),  a = 0.01.
 *
 * Each iteration approximately solves  min_s g.s + 1/2 s.H s  subject to
 * |s|_M <= delta  by conjugate gradients preconditioned with M, stopping
 * when the preconditioned residual is 0.1 of its start or at the boundary
 * (where s is extended to it); the step is taken when the actual
 * reduction f(w) - f(w + s) is more than 1e-4 of the model's predicted
 * one, and delta grows or shrinks with their ratio (the rules of the
 * paper's section 2 and LIBLINEAR's tron.cpp).
 *
 * Stopping: LIBLINEAR's -e rule, |g| <= tol max(min(pos, neg), 1) / n |g0|
 * (g0 the gradient at w = 0; regression: tol |g0|), after o->epochs
 * iterations, or when the reductions are below f's rounding. Every
 * iteration is reported as an epoch, whether or not its step was taken.
 *
 * Every pass over the data is hog_newton_pass (blocks.c) and every loop
 * over the weights hog_newton_vec (vec.c), whose sums run over fixed
 * ranges added in range order, so the model does not depend on the
 * thread count.
 */
#include "newton/newton.h"

#include "core/loss.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ETA0 1e-4 /* the step is taken above this share of the prediction */
#define ETA1 0.25
#define ETA2 0.75
#define SIGMA1 0.25 /* delta's shrink and growth factors */
#define SIGMA2 0.5
#define SIGMA3 4.0
#define PCG_MIX 0.01 /* a in M above */
#define CG_TOL 0.1   /* LIBLINEAR's eps_cg */

struct newton {
    struct hog_fit *f;
    struct hog_newton_blocks bl;
    hog_loss loss;
    double lp;         /* its parameter (core/loss.h) */
    uint64_t n, nw;
    double C;
    const float *rw;   /* row weights, NULL: all 1 */
    double *y;         /* the loss's targets */
    double *z, *znew;  /* margins of w and of the trial point */
    double *D;         /* C_i loss'' at w */
    double *w, *wnew, *g, *s, *r, *d, *Hd, *M;
};

static inline double row_c(const struct newton *t, uint64_t i)
{
    return t->rw ? t->C * (double)t->rw[i] : t->C;
}


/* ---- the passes' rows ------------------------------------------------------ */

static double fun_row(void *ctx, uint64_t i, double m, double *acc)
{
    struct newton *t = ctx;
    t->znew[i] = m;
    double c = row_c(t, i);
    if (c != 0.0)
        *acc += c * hog_loss_value(t->loss, t->lp, t->y[i], m);
    return 0.0;
}

static double grad_row(void *ctx, uint64_t i, double m, double *acc)
{
    (void)m, (void)acc;
    struct newton *t = ctx;
    double c = row_c(t, i), z = t->z[i];
    /* the loss's generalised loss'' (conflicts: newton runs those that
     * have one) */
    t->D[i] = c * hog_loss_rows[t->loss].second(t->lp, t->y[i], z);
    return c * hog_loss_deriv(t->loss, t->lp, t->y[i], z);
}

static double diag_row(void *ctx, uint64_t i, double m, double *acc)
{
    (void)m, (void)acc;
    return ((struct newton *)ctx)->D[i];
}

static double hv_row(void *ctx, uint64_t i, double m, double *acc)
{
    (void)acc;
    return ((struct newton *)ctx)->D[i] * m;
}

/* ---- vectors --------------------------------------------------------------- */

/* Every loop over the weights is one of these, run by hog_newton_vec over
 * fixed ranges; a CG step's loops are fused so that each reads its vectors
 * once (sum[q] as written, in index order within a range). */
struct vop {
    struct newton *t;
    const double *v;
    double *out;
    double a, b; /* the step lengths */
};

static double vec(struct newton *t, hog_newton_vec_fn fn, struct vop *op,
                  double *sum)
{
    double tmp[HOG_NEWTON_VEC_SUMS];
    op->t = t;
    hog_newton_vec(&t->bl, fn, op, sum ? sum : tmp);
    return sum ? sum[0] : tmp[0];
}

/* sum0 = v.v */
static void op_norm(void *ctx, uint64_t lo, uint64_t hi, double *sum)
{
    const double *v = ((const struct vop *)ctx)->v;
    for (uint64_t j = lo; j < hi; j++)
        sum[0] += v[j] * v[j];
}

/* g += w, M from diag(X^T D X); sum0 = g.g, sum1 = g.M.g */
static void op_grad(void *ctx, uint64_t lo, uint64_t hi, double *sum)
{
    struct newton *t = ((const struct vop *)ctx)->t;
    double *g = t->g, *M = t->M;
    for (uint64_t j = lo; j < hi; j++) {
        g[j] += t->w[j];
        M[j] = (1.0 - PCG_MIX) + PCG_MIX * (1.0 + M[j]);
        sum[0] += g[j] * g[j];
        sum[1] += g[j] * M[j] * g[j];
    }
}

/* out += v (H's identity part); sum0 = v.out */
static void op_hv(void *ctx, uint64_t lo, uint64_t hi, double *sum)
{
    const struct vop *op = ctx;
    for (uint64_t j = lo; j < hi; j++) {
        op->out[j] += op->v[j];
        sum[0] += op->v[j] * op->out[j];
    }
}

/* s = 0, r = -g, d = z = M^-1 r; sum0 = z.r */
static void op_cg_init(void *ctx, uint64_t lo, uint64_t hi, double *sum)
{
    struct newton *t = ((const struct vop *)ctx)->t;
    for (uint64_t j = lo; j < hi; j++) {
        t->s[j] = 0.0;
        t->r[j] = -t->g[j];
        double z = t->r[j] / t->M[j];
        t->d[j] = z;
        sum[0] += z * t->r[j];
    }
}

/* s += a d; sum0 = s.M.s, sum1 = z.r for the r - a Hd and z = M^-1 r the
 * step would give, which op_cg_next writes once s is known to be inside */
static void op_cg_step(void *ctx, uint64_t lo, uint64_t hi, double *sum)
{
    const struct vop *op = ctx;
    struct newton *t = op->t;
    double *s = t->s, *M = t->M;
    for (uint64_t j = lo; j < hi; j++) {
        s[j] += op->a * t->d[j];
        sum[0] += s[j] * M[j] * s[j];
        double r = t->r[j] - op->a * t->Hd[j], z = r / M[j];
        sum[1] += z * r;
    }
}

/* r -= a Hd, d = M^-1 r + b d */
static void op_cg_next(void *ctx, uint64_t lo, uint64_t hi, double *sum)
{
    (void)sum;
    const struct vop *op = ctx;
    struct newton *t = op->t;
    for (uint64_t j = lo; j < hi; j++) {
        t->r[j] -= op->a * t->Hd[j];
        t->d[j] = t->r[j] / t->M[j] + op->b * t->d[j];
    }
}

/* s -= a d (back inside); sum0 = s.M.d, sum1 = s.M.s, sum2 = d.M.d */
static void op_cg_back(void *ctx, uint64_t lo, uint64_t hi, double *sum)
{
    const struct vop *op = ctx;
    struct newton *t = op->t;
    double *s = t->s, *d = t->d, *M = t->M;
    for (uint64_t j = lo; j < hi; j++) {
        s[j] -= op->a * d[j];
        sum[0] += s[j] * M[j] * d[j];
        sum[1] += s[j] * M[j] * s[j];
        sum[2] += d[j] * M[j] * d[j];
    }
}

/* s += a d, r -= a Hd (to the boundary) */
static void op_cg_edge(void *ctx, uint64_t lo, uint64_t hi, double *sum)
{
    (void)sum;
    const struct vop *op = ctx;
    struct newton *t = op->t;
    for (uint64_t j = lo; j < hi; j++) {
        t->s[j] += op->a * t->d[j];
        t->r[j] -= op->a * t->Hd[j];
    }
}

/* wnew = w + s; sum0 = g.s, sum1 = s.r, sum2 = s.M.s, sum3 = wnew.wnew */
static void op_trial(void *ctx, uint64_t lo, uint64_t hi, double *sum)
{
    struct newton *t = ((const struct vop *)ctx)->t;
    const double *s = t->s;
    for (uint64_t j = lo; j < hi; j++) {
        t->wnew[j] = t->w[j] + s[j];
        sum[0] += t->g[j] * s[j];
        sum[1] += s[j] * t->r[j];
        sum[2] += s[j] * t->M[j] * s[j];
        sum[3] += t->wnew[j] * t->wnew[j];
    }
}

/* ---- f, g, H --------------------------------------------------------------- */

/* f(v) with vv = v.v, the margins of v into znew; *loss: sum_i C_i loss_i. */
static double fun(struct newton *t, const double *v, double vv, double *loss)
{
    *loss = hog_newton_pass(&t->bl, v, fun_row, t, NULL, false);
    return 0.5 * vv + *loss;
}

/* g and D at w (margins in z), and the preconditioner M; sum0 = g.g,
 * sum1 = g.M.g. */
static void grad(struct newton *t, double *sum)
{
    hog_newton_pass(&t->bl, NULL, grad_row, t, t->g, false);
    hog_newton_pass(&t->bl, NULL, diag_row, t, t->M, true);
    vec(t, op_grad, &(struct vop){ 0 }, sum);
}

/* out = H v; returns v.out */
static double hess_vec(struct newton *t, const double *v, double *out)
{
    hog_newton_pass(&t->bl, v, hv_row, t, out, false);
    return vec(t, op_hv, &(struct vop){ .v = v, .out = out }, NULL);
}

/* ---- the trust-region sub-problem ------------------------------------------ */

/* Approximately minimises g.s + 1/2 s.H s over |s|_M <= delta into s, with
 * r = -(g + H s) the residual; *boundary when s was stopped at the
 * boundary. */
static void trpcg(struct newton *t, double delta, bool *boundary)
{
    uint64_t n = t->nw;
    double sum[HOG_NEWTON_VEC_SUMS];
    *boundary = false;
    double zr = vec(t, op_cg_init, &(struct vop){ 0 }, NULL);
    double stop = CG_TOL * sqrt(zr);
    uint64_t max_cg = n > 5 ? n : 5;
    for (uint64_t it = 0; it < max_cg && sqrt(zr) > stop && t->bl.st == HOG_OK;
         it++) {
        double alpha = zr / hess_vec(t, t->d, t->Hd);
        vec(t, op_cg_step, &(struct vop){ .a = alpha }, sum);
        if (sqrt(sum[0]) > delta) {
            /* back to the last inside point, then along d to |s|_M = delta:
             * the root of |s + tau d|_M^2 = delta^2, in the form that
             * does not cancel */
            *boundary = true;
            vec(t, op_cg_back, &(struct vop){ .a = alpha }, sum);
            double sd = sum[0], ss = sum[1], dd = sum[2], dsq = delta * delta;
            double rad = sqrt(sd * sd + dd * (dsq - ss));
            double tau = sd >= 0 ? (dsq - ss) / (sd + rad) : (rad - sd) / dd;
            vec(t, op_cg_edge, &(struct vop){ .a = tau }, NULL);
            return;
        }
        double zr_new = sum[1];
        vec(t, op_cg_next, &(struct vop){ .a = alpha, .b = zr_new / zr },
            NULL);
        zr = zr_new;
    }
}

/* ---- the run --------------------------------------------------------------- */

static void newton_free(struct newton *t)
{
    hog_newton_blocks_close(&t->bl);
    double *v[] = { t->y, t->z, t->znew, t->D, t->w, t->wnew, t->g,
                    t->s, t->r, t->d, t->Hd, t->M };
    for (size_t k = 0; k < sizeof v / sizeof *v; k++)
        free(v[k]);
}

static hog_status setup(struct newton *t, hog_err *err)
{
    struct hog_fit *f = t->f;
    hog_status st = hog_newton_open(&t->bl, f, err);
    if (st != HOG_OK)
        return st;
    uint64_t n = t->n, nw = t->nw = t->bl.nw;
    double **rows[] = { &t->y, &t->z, &t->znew, &t->D };
    double **cols[] = { &t->w, &t->wnew, &t->g, &t->s, &t->r, &t->d,
                        &t->Hd, &t->M };
    bool ok = true;
    for (size_t k = 0; k < sizeof rows / sizeof *rows; k++)
        ok &= (*rows[k] = hog_malloc_big(n * sizeof(double))) != NULL;
    for (size_t k = 0; k < sizeof cols / sizeof *cols; k++)
        ok &= (*cols[k] = hog_calloc_big(nw, sizeof(double))) != NULL;
    if (!ok)
        return hog_errf(err, HOG_ENOMEM, "out of memory for Newton's vectors "
                        "(%llu rows, %llu weights)", (unsigned long long)n,
                        (unsigned long long)nw);
    f->aux_bytes = t->bl.bytes + (4 * n + 8 * nw) * sizeof(double);
    hog_newton_targets(f, t->loss, t->y);
    if ((st = hog_newton_count(&t->bl, t->y, n, err)) != HOG_OK)
        return st;
    /* the rows of every rank: C n = 1 / l2 */
    t->C = 1.0 / (f->o->l2 * (double)t->bl.rows);
    return HOG_OK;
}

/* The weights into the model and the epoch to the front door; fw = f(w)
 * and loss its data part. */
static hog_status report(struct newton *t, unsigned epoch, double secs,
                         double fw, double loss, bool stop, bool converged,
                         hog_err *err)
{
    double cn = t->C * (double)t->bl.rows;
    struct hog_newton_iter it = { "Newton", t->w, epoch, secs, fw / cn,
                                  loss / cn, stop, converged };
    return hog_newton_report(t->f, &t->bl, &it, err);
}

static hog_status iterate(struct newton *t, double t0, hog_err *err)
{
    const hog_train_opts *o = t->f->o;
    double sum[HOG_NEWTON_VEC_SUMS];
    double ww = vec(t, op_norm, &(struct vop){ .v = t->w }, NULL);
    double loss, f = fun(t, t->w, ww, &loss);
    double *swap = t->z;
    t->z = t->znew, t->znew = swap;
    grad(t, sum);
    /* w starts at 0, so this is LIBLINEAR's |g0| */
    double gnorm0 = sqrt(sum[0]), gnorm = gnorm0;
    const double eps = hog_newton_rel_tol(&t->bl, t->loss, o->tol);
    if (gnorm <= eps * gnorm0) /* tol >= 1 or a zero gradient */
        return report(t, 1, hog_now() - t0, f, loss, true, true, err);

    double delta = sqrt(sum[1]);
    for (unsigned epoch = 1; epoch <= o->epochs; epoch++) {
        bool boundary;
        trpcg(t, delta, &boundary);
        vec(t, op_trial, &(struct vop){ 0 }, sum);
        double gs = sum[0];
        double prered = -0.5 * (gs - sum[1]);
        double snorm = sqrt(sum[2]);
        double loss_new, fnew = fun(t, t->wnew, sum[3], &loss_new);
        double actred = f - fnew;
        if (epoch == 1)
            delta = fmin(delta, snorm);
        /* the step length the one-dimensional quadratic through f, fnew
         * and gs would take, as a share of s */
        double alpha = fnew - f - gs <= 0
                           ? SIGMA3
                           : fmax(SIGMA1, -0.5 * (gs / (fnew - f - gs)));
        if (actred < ETA0 * prered)
            delta = fmin(alpha * snorm, SIGMA2 * delta);
        else if (actred < ETA1 * prered)
            delta = fmax(SIGMA1 * delta, fmin(alpha * snorm, SIGMA2 * delta));
        else if (actred < ETA2 * prered)
            delta = fmax(SIGMA1 * delta, fmin(alpha * snorm, SIGMA3 * delta));
        else if (boundary)
            delta = SIGMA3 * delta;
        else
            delta = fmax(delta, fmin(alpha * snorm, SIGMA3 * delta));

        bool converged = false;
        if (actred > ETA0 * prered) {
            swap = t->w, t->w = t->wnew, t->wnew = swap;
            swap = t->z, t->z = t->znew, t->znew = swap;
            f = fnew;
            loss = loss_new;
            grad(t, sum);
            gnorm = sqrt(sum[0]);
            converged = gnorm <= eps * gnorm0;
        }
        /* no further progress within f's rounding: as far as it goes */
        bool stuck = f < -1.0e32 || prered <= 0 ||
                     (fabs(actred) <= 1.0e-12 * fabs(f) &&
                      fabs(prered) <= 1.0e-12 * fabs(f));
        double secs = hog_now() - t0;
        hog_status st = report(t, epoch, secs, f, loss, converged || stuck,
                               converged || stuck, err);
        if (st != HOG_OK || converged || stuck)
            return st;
        t0 = hog_now();
    }
    return HOG_OK;
}

hog_status hog_newton_train(struct hog_fit *f, hog_err *err)
{
    double t0 = hog_now();
    struct newton t;
    memset(&t, 0, sizeof t);
    t.f = f;
    t.loss = f->o->loss;
    t.lp = hog_loss_param_of(f->o);
    t.n = f->train->m.rows;
    t.rw = f->train->row_w;
    hog_status st = setup(&t, err);
    if (st == HOG_OK)
        st = iterate(&t, t0, err);
    newton_free(&t);
    return st;
}

