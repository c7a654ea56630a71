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
 * Every pass over the data is hog_newton_pass (blocks.c) and every vector
 * sum a plain loop in index order, so the model does not depend on the
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
    uint64_t n, nw;
    double C;
    const float *rw;   /* row weights, NULL: all 1 */
    double *y;         /* the loss's targets */
    double *z, *znew;  /* margins of w and of the trial point */
    double *D;         /* C_i loss'' at w */
    double *w, *wnew, *g, *s, *r, *d, *Hd, *pz, *M;
};

static inline double row_c(const struct newton *t, uint64_t i)
{
    return t->rw ? t->C * (double)t->rw[i] : t->C;
}

/* loss''(y, m) */
static inline double loss_second(hog_loss loss, double y, double m)
{
    switch (loss) {
    case HOG_LOSS_LOGISTIC: {
        double p = hog_sigmoid_neg(y * m);
        return p * (1.0 - p);
    }
    case HOG_LOSS_SQHINGE:
        return y * m < 1.0 ? 2.0 : 0.0;
    default:
        return 1.0;
    }
}

/* ---- the passes' rows ------------------------------------------------------ */

static double fun_row(void *ctx, uint64_t i, double m, double *acc)
{
    struct newton *t = ctx;
    t->znew[i] = m;
    double c = row_c(t, i);
    if (c != 0.0)
        *acc += c * hog_loss_value(t->loss, t->y[i], m);
    return 0.0;
}

static double grad_row(void *ctx, uint64_t i, double m, double *acc)
{
    (void)m, (void)acc;
    struct newton *t = ctx;
    double c = row_c(t, i), z = t->z[i];
    t->D[i] = c * loss_second(t->loss, t->y[i], z);
    return c * hog_loss_deriv(t->loss, t->y[i], z);
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

static double dot(const double *a, const double *b, uint64_t n)
{
    double s = 0.0;
    for (uint64_t j = 0; j < n; j++)
        s += a[j] * b[j];
    return s;
}

/* a . diag(M) . b */
static double dot_m(const double *a, const double *M, const double *b,
                    uint64_t n)
{
    double s = 0.0;
    for (uint64_t j = 0; j < n; j++)
        s += a[j] * M[j] * b[j];
    return s;
}

static void axpy(double *y, double a, const double *x, uint64_t n)
{
    for (uint64_t j = 0; j < n; j++)
        y[j] += a * x[j];
}

/* ---- f, g, H --------------------------------------------------------------- */

/* f(v), the margins of v into znew; *loss: sum_i C_i loss_i. */
static double fun(struct newton *t, const double *v, double *loss)
{
    *loss = hog_newton_pass(&t->bl, v, fun_row, t, NULL, false);
    return 0.5 * dot(v, v, t->nw) + *loss;
}

/* g and D at w (margins in z), and the preconditioner M. */
static void grad(struct newton *t)
{
    hog_newton_pass(&t->bl, NULL, grad_row, t, t->g, false);
    axpy(t->g, 1.0, t->w, t->nw);
    hog_newton_pass(&t->bl, NULL, diag_row, t, t->M, true);
    for (uint64_t j = 0; j < t->nw; j++)
        t->M[j] = (1.0 - PCG_MIX) + PCG_MIX * (1.0 + t->M[j]);
}

static void hess_vec(struct newton *t, const double *v, double *out)
{
    hog_newton_pass(&t->bl, v, hv_row, t, out, false);
    axpy(out, 1.0, v, t->nw);
}

/* ---- the trust-region sub-problem ------------------------------------------ */

/* Approximately minimises g.s + 1/2 s.H s over |s|_M <= delta into s, with
 * r = -(g + H s) the residual; *boundary when s was stopped at the
 * boundary. */
static void trpcg(struct newton *t, double delta, bool *boundary)
{
    uint64_t n = t->nw;
    double *s = t->s, *r = t->r, *d = t->d, *Hd = t->Hd, *z = t->pz,
           *M = t->M;
    *boundary = false;
    for (uint64_t j = 0; j < n; j++) {
        s[j] = 0.0;
        r[j] = -t->g[j];
        z[j] = r[j] / M[j];
        d[j] = z[j];
    }
    double zr = dot(z, r, n);
    double stop = CG_TOL * sqrt(zr);
    uint64_t max_cg = n > 5 ? n : 5;
    for (uint64_t it = 0; it < max_cg && sqrt(zr) > stop; it++) {
        hess_vec(t, d, Hd);
        double alpha = zr / dot(d, Hd, n);
        axpy(s, alpha, d, n);
        if (sqrt(dot_m(s, M, s, n)) > delta) {
            /* back to the last inside point, then along d to |s|_M = delta:
             * the root of |s + tau d|_M^2 = delta^2, in the form that
             * does not cancel */
            *boundary = true;
            axpy(s, -alpha, d, n);
            double sd = dot_m(s, M, d, n), ss = dot_m(s, M, s, n),
                   dd = dot_m(d, M, d, n), dsq = delta * delta;
            double rad = sqrt(sd * sd + dd * (dsq - ss));
            double tau = sd >= 0 ? (dsq - ss) / (sd + rad) : (rad - sd) / dd;
            axpy(s, tau, d, n);
            axpy(r, -tau, Hd, n);
            return;
        }
        axpy(r, -alpha, Hd, n);
        for (uint64_t j = 0; j < n; j++)
            z[j] = r[j] / M[j];
        double zr_new = dot(z, r, n);
        double beta = zr_new / zr;
        for (uint64_t j = 0; j < n; j++)
            d[j] = z[j] + beta * d[j];
        zr = zr_new;
    }
}

/* ---- the run --------------------------------------------------------------- */

static void newton_free(struct newton *t)
{
    hog_newton_blocks_close(&t->bl);
    double *v[] = { t->y, t->z, t->znew, t->D, t->w, t->wnew, t->g,
                    t->s, t->r, t->d, t->Hd, t->pz, t->M };
    for (size_t k = 0; k < sizeof v / sizeof *v; k++)
        free(v[k]);
}

static hog_status setup(struct newton *t, hog_err *err)
{
    struct hog_fit *f = t->f;
    const hog_data *d = f->train;
    hog_status st = hog_newton_blocks_open(&t->bl, &d->m, d->n_features,
                                           f->o->bias, f->o->threads, err);
    if (st != HOG_OK)
        return st;
    uint64_t n = t->n, nw = t->nw = t->bl.nw;
    double **rows[] = { &t->y, &t->z, &t->znew, &t->D };
    double **cols[] = { &t->w, &t->wnew, &t->g, &t->s, &t->r, &t->d,
                        &t->Hd, &t->pz, &t->M };
    bool ok = true;
    for (size_t k = 0; k < sizeof rows / sizeof *rows; k++)
        ok &= (*rows[k] = malloc((n ? n : 1) * sizeof(double))) != NULL;
    for (size_t k = 0; k < sizeof cols / sizeof *cols; k++)
        ok &= (*cols[k] = calloc(nw ? nw : 1, sizeof(double))) != NULL;
    if (!ok)
        return hog_errf(err, HOG_ENOMEM, "out of memory for Newton's vectors "
                        "(%llu rows, %llu weights)", (unsigned long long)n,
                        (unsigned long long)nw);
    f->aux_bytes = t->bl.bytes + (4 * n + 9 * nw) * sizeof(double);
    for (uint64_t i = 0; i < n; i++)
        t->y[i] = hog_loss_target(t->loss, d->label_pos, d->m.y[i]);
    return HOG_OK;
}

/* The tolerance on |g| / |g0| (LIBLINEAR's primal_solver_tol over eps). */
static double rel_tol(const struct newton *t, const hog_train_opts *o)
{
    if (!hog_loss_is_classification(t->loss))
        return o->tol;
    uint64_t pos = 0;
    for (uint64_t i = 0; i < t->n; i++)
        pos += t->y[i] > 0;
    uint64_t few = pos < t->n - pos ? pos : t->n - pos;
    return o->tol * (double)(few > 1 ? few : 1) / (double)t->n;
}

/* The weights into the model and the epoch to the front door. */
static hog_status report(struct newton *t, unsigned epoch, double secs,
                         double loss, bool stop, bool converged,
                         hog_err *err)
{
    struct hog_fit *f = t->f;
    for (uint64_t j = 0; j < t->nw; j++)
        f->model->w[j] = (float)t->w[j];
    double cn = t->C * (double)t->n;
    f->mean_loss = loss / cn;
    f->objective = (0.5 * dot(t->w, t->w, t->nw) + loss) / cn;
    f->last = stop || epoch == f->o->epochs;
    f->converged = converged;
    hog_status st = f->epoch_end(f, epoch, secs, err);
    if (st == HOG_OK && !f->last && hog_fit_cancelled(f))
        st = hog_errf(err, HOG_EINTR,
                      "training interrupted after Newton iteration %u; "
                      "Newton writes no checkpoints, so nothing was kept "
                      "(rerun with a smaller --epochs or a looser --tol for "
                      "a shorter run)", epoch);
    return st;
}

static hog_status iterate(struct newton *t, double t0, hog_err *err)
{
    const hog_train_opts *o = t->f->o;
    uint64_t nw = t->nw;
    double loss, f = fun(t, t->w, &loss);
    double *swap = t->z;
    t->z = t->znew, t->znew = swap;
    grad(t);
    /* w starts at 0, so this is LIBLINEAR's |g0| */
    double gnorm0 = sqrt(dot(t->g, t->g, nw)), gnorm = gnorm0;
    const double eps = rel_tol(t, o);
    if (gnorm <= eps * gnorm0) /* tol >= 1 or a zero gradient */
        return report(t, 1, hog_now() - t0, loss, true, true, err);

    double delta = sqrt(dot_m(t->g, t->M, t->g, nw));
    for (unsigned epoch = 1; epoch <= o->epochs; epoch++) {
        bool boundary;
        trpcg(t, delta, &boundary);
        memcpy(t->wnew, t->w, nw * sizeof *t->w);
        axpy(t->wnew, 1.0, t->s, nw);
        double gs = dot(t->g, t->s, nw);
        double prered = -0.5 * (gs - dot(t->s, t->r, nw));
        double loss_new, fnew = fun(t, t->wnew, &loss_new);
        double actred = f - fnew;
        double snorm = sqrt(dot_m(t->s, t->M, t->s, nw));
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
            grad(t);
            gnorm = sqrt(dot(t->g, t->g, nw));
            converged = gnorm <= eps * gnorm0;
        }
        /* no further progress within f's rounding: as far as it goes */
        bool stuck = f < -1.0e32 || prered <= 0 ||
                     (fabs(actred) <= 1.0e-12 * fabs(f) &&
                      fabs(prered) <= 1.0e-12 * fabs(f));
        double secs = hog_now() - t0;
        hog_status st = report(t, epoch, secs, loss, converged || stuck,
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
    t.n = f->train->m.rows;
    t.C = 1.0 / (f->o->l2 * (double)t.n);
    t.rw = f->train->row_w;
    hog_status st = setup(&t, err);
    if (st == HOG_OK)
        st = iterate(&t, t0, err);
    newton_free(&t);
    return st;
}

hog_status hog_newton_validate(const hog_train_opts *o, hog_err *err)
{
    if (o->loss == HOG_LOSS_HINGE)
        return hog_errf(err, HOG_EINVAL,
                        "--algo newton needs a loss with a second "
                        "derivative (logistic, sqhinge or squared); for the "
                        "hinge loss use --algo dcd");
    if (o->l1 != 0.0)
        return hog_errf(err, HOG_EINVAL,
                        "--algo newton solves L2-regularized problems only "
                        "(l1 = %g); for L1 use --algo scd", o->l1);
    if (!(o->l2 > 0))
        return hog_errf(err, HOG_EINVAL,
                        "--algo newton needs l2 > 0 (or --C: l2 = 1 / (C n))");
    return HOG_OK;
}
