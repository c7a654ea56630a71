/*
 * Dual coordinate descent for L2-regularized linear classifiers, run
 * asynchronously on the pool (support vector regression, the
 * epsilon-insensitive losses: dcd_svr.c).
 *
 * With C = 1 / (l2 n), minimising the front door's objective
 * (1/n) sum loss(y_i w.x_i) + l2/2 |w|^2 is minimising LIBLINEAR's primal
 * P(w) = 1/2 |w|^2 + C sum_i loss(y_i w.x_i), whose dual is
 *
 *   hinge, squared hinge (Hsieh, Chang, Lin, Keerthi, Sundararajan,
 *   ICML 2008; LIBLINEAR -s 3, -s 1):
 *     min_a  1/2 a'Qa + 1/2 D sum a_i^2 - sum a_i,   0 <= a_i <= U,
 *     Q_ij = y_i y_j x_i.x_j;  hinge: U = C, D = 0;  sq. hinge: U = inf,
 *     D = 1/(2C);
 *   logistic (Yu, Huang, Lin, MLJ 2011; LIBLINEAR -s 7):
 *     min_a  1/2 a'Qa + sum a_i log a_i + (C - a_i) log(C - a_i),
 *     0 < a_i < C,
 *
 * with w = sum_i a_i y_i x_i kept current. One coordinate step on row i:
 *   hinge/sq. hinge: G = y_i w.x_i - 1 + D a_i;
 *                    a_i <- min(max(a_i - G / (|x_i|^2 + D), 0), U);
 *   logistic: a few Newton steps on the one-variable problem in a_i (or in
 *             C - a_i, whichever is farther from its bound), as LIBLINEAR;
 * then w += (a_i' - a_i) y_i x_i. Each epoch visits the active rows in a
 * fresh seeded permutation. Shrinking (hinge losses): a row whose a_i sits
 * at a bound with a gradient pushing it outwards by more than last epoch's
 * largest violation leaves the active set; when the active set has
 * converged, every row comes back for a last check (LIBLINEAR).
 *
 * Parallel (PASSCoDe, Hsieh, Yu, Dhillon, ICML 2015): each worker takes a
 * slice of the epoch's permutation, so a_i has one writer per epoch, while
 * all workers read and update the shared w without locks:
 *   --update atomic  every w_j += d x_ij is a compare-and-swap add, so w
 *                    stays exactly sum a_i y_i x_i (PASSCoDe-Atomic);
 *   --update none    ("wild") relaxed load + store: concurrent adds to one
 *                    w_j may lose one, and w drifts from sum a_i y_i x_i;
 *                    the w the workers saw is the one returned, which the
 *                    paper shows is the right one to predict with
 *                    (PASSCoDe-Wild, a backward-error argument). The bias
 *                    weight is the exception: every row adds to it, so two
 *                    workers would collide on it all the time (on
 *                    reuters_moneyfx a wild bias left a relative gap of
 *                    2.5); no add to it is lost: each worker gathers its
 *                    own and folds them in with one compare-and-swap every
 *                    HOG_DCD_BIAS_FOLD rows (row_axpy), so w is exactly
 *                    sum a_i y_i x_i at the end of every epoch. Frequent
 *                    features still collide: wild ends within about 1e-2
 *                    of the optimum where atomic reaches it.
 * With one worker both are the serial algorithm and deterministic given
 * the seed.
 *
 * Stopping: LIBLINEAR's -e rule, tol: hinge losses stop when the spread of
 * the projected gradient over all rows, max PG - min PG, is <= tol;
 * logistic when the largest |gradient| is < tol. Also after `epochs`.
 * When someone listens to the progress, the relative duality gap
 * (P(w) - D(a)) / P(w) is computed after each epoch, untimed, with
 * D's w recomputed from a (so that it is a true bound under --update none;
 * with several workers on the pool, and under --update atomic from w,
 * which is that sum already).
 *
 * Row weights v_i (docs/TRAINING.md, "Weights"): the primal is
 * 1/2 |w|^2 + C sum_i v_i loss_i, whose dual is the one above with a
 * bound of its own per row, C_i = C v_i (LIBLINEAR's weighted dual, as its
 * -wi and instance weights): hinge U_i = C_i, squared hinge D_i =
 * 1/(2 C_i), logistic 0 < a_i < C_i. A row of weight 0 has a_i = 0 and is
 * never visited (it is left out of the active set).
 */
#include "coordinate/internal.h"

#include "core/loss.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A worker's own line(s): its epoch's results, its unfolded bias adds
 * and its part of the duality gap. */
struct dcd_thread {
    _Alignas(HOG_CACHELINE) double pgmax, pgmin, gmax;
    uint64_t kept;
    uint64_t newton;
    double bias_own;   /* bias adds not yet folded into the shared weight */
    unsigned since;    /* rows since the last fold */
    double loss, sum_a, sum_a2, ent, w2, wa2; /* gap_job's sums */
};

/* Rows a worker goes between folds of its bias adds (fold_bias). */
#define HOG_DCD_BIAS_FOLD 64u

/* The driver's part first (internal.h): the active rows in co.act, the
 * shared w = sum a_i y_i x_i in co.w. */
struct dcd {
    struct hog_coord co;
    const struct hog_csr *m;
    uint64_t n, nf;
    double bias;
    hog_loss loss;
    bool cas;             /* --update atomic */
    bool par;             /* more than one worker: bias adds folded per
                             worker, the gap computed on the pool */
    double C, U, D;       /* bound and diagonal (hinge losses) */
    const float *rw;      /* row weights (NULL: all 1): C_i = C v_i */
    uint64_t live;        /* rows of positive weight (n unweighted) */
    double *alpha;        /* a_i */
    double *calpha;       /* C - a_i (logistic, kept apart for precision) */
    double *qd;           /* |x_i|^2 (+ bias^2) + D */
    signed char *y;       /* +1 / -1 */
    double pgmax_old, pgmin_old; /* shrinking thresholds */
    bool shrink;
    double innereps;      /* logistic: Newton accuracy of the sub-problem */
    struct dcd_thread *th;
    _Atomic double *gap_wa; /* gap_job's rebuilt w, wild only */
};

/* Row i's C_i = C v_i, and its bound U_i and diagonal D_i. */
static inline double row_c(const struct dcd *s, uint64_t i)
{
    return s->rw ? s->C * (double)s->rw[i] : s->C;
}

static inline void row_bounds(const struct dcd *s, uint64_t i, double *U,
                              double *D)
{
    if (!s->rw) {
        *U = s->U;
        *D = s->D;
        return;
    }
    double c = row_c(s, i);
    *U = s->loss == HOG_LOSS_HINGE ? c : INFINITY;
    *D = s->loss == HOG_LOSS_SQHINGE ? 1.0 / (2.0 * c) : 0.0;
}

/* Every row of positive weight active again, in order. */
static void all_rows(struct dcd *s)
{
    if (!s->rw) {
        hog_coord_all_active(&s->co, s->n);
        return;
    }
    uint64_t k = 0;
    for (uint64_t i = 0; i < s->n; i++)
        if (s->rw[i] > 0.0f)
            s->co.act[k++] = i;
    s->co.active = k;
}

/* w.x_i with the bias; th: the worker's state when bias adds are folded
 * (s->par), whose unfolded adds it counts; NULL: the shared bias only. */
static inline double row_dot(const struct dcd *s, struct hog_row r,
                             const struct dcd_thread *th)
{
    double d = hog_sparse_dot_d_relaxed(s->co.w, r, 0.0);
    if (s->bias != 0.0) {
        double b = hog_d_load(&s->co.w[s->nf]);
        if (th)
            b += th->bias_own;
        d += b * s->bias;
    }
    return d;
}

/* w += a x_i. The bias weight is in every row: with one worker (th NULL)
 * its add is a CAS like all of them; with several, each worker gathers
 * its bias adds and folds them in with one CAS every HOG_DCD_BIAS_FOLD
 * rows (fold_bias): one CAS per add on that line made the two workers
 * trade it on every row. */
static inline void row_axpy(const struct dcd *s, double a, struct hog_row r,
                            struct dcd_thread *th)
{
    if (s->cas)
        hog_sparse_axpy_d_cas_n(s->co.w, a, r.idx, r.val, r.nnz);
    else
        hog_sparse_axpy_d_wild_n(s->co.w, a, r.idx, r.val, r.nnz);
    if (s->bias != 0.0) {
        if (th)
            th->bias_own += a * s->bias;
        else /* never lost, even wild (see the top) */
            hog_d_add_cas(&s->co.w[s->nf], a * s->bias);
    }
}

/* The worker's gathered bias adds into the shared weight: one CAS, so no
 * add is lost under either update mode. */
static inline void fold_bias(const struct dcd *s, struct dcd_thread *th)
{
    if (th->bias_own != 0.0)
        hog_d_add_cas(&s->co.w[s->nf], th->bias_own);
    th->bias_own = 0.0;
    th->since = 0;
}

/* The worker's state for row_dot/row_axpy: NULL with one worker (the
 * serial algorithm, bit for bit as it always was). */
static inline struct dcd_thread *fold_state(const struct dcd *s, unsigned tid)
{
    return s->par && s->bias != 0.0 ? &s->th[tid] : NULL;
}

/* After each row of a worker with fold state. */
static inline void after_row(const struct dcd *s, struct dcd_thread *th)
{
    if (th && ++th->since == HOG_DCD_BIAS_FOLD)
        fold_bias(s, th);
}

/* Progress from worker 0 only: the hooks are not thread-safe, and the
 * caller of hog_pool_run() only waits. */
static inline void maybe_tick(const struct dcd *s, unsigned tid, unsigned nt,
                              uint64_t done_here)
{
    if (tid == 0 && (done_here & 4095) == 4095)
        s->co.f->tick(s->co.f, s->co.epoch, done_here * nt, s->co.active);
}

static void svm_job(void *arg, unsigned tid, unsigned nt)
{
    struct dcd *s = arg;
    uint64_t lo, hi;
    hog_slice(s->co.active, tid, nt, &lo, &hi);
    double pgmax = -INFINITY, pgmin = INFINITY;
    double U = s->U, D = s->D;
    const double pmax_old = s->pgmax_old, pmin_old = s->pgmin_old;
    struct dcd_thread *th = fold_state(s, tid);
    uint64_t kept = 0;
    for (uint64_t t = lo; t < hi; t++) {
        uint64_t i = s->co.act[t];
        struct hog_row r = hog_csr_row(s->m, i);
        double yi = s->y[i], a = s->alpha[i];
        if (s->rw)
            row_bounds(s, i, &U, &D);
        double G = yi * row_dot(s, r, th) - 1.0 + D * a;
        after_row(s, th);
        double PG = 0.0;
        if (a == 0.0) {
            if (s->shrink && G > pmax_old)
                continue; /* at 0 and pushed below it: shrink */
            if (G < 0)
                PG = G;
        } else if (a == U) {
            if (s->shrink && G < pmin_old)
                continue; /* at C and pushed above it: shrink */
            if (G > 0)
                PG = G;
        } else {
            PG = G;
        }
        s->co.act[lo + kept++] = i;
        pgmax = PG > pgmax ? PG : pgmax;
        pgmin = PG < pgmin ? PG : pgmin;
        if (fabs(PG) > 1e-12) {
            double an = a - G / s->qd[i];
            an = an < 0.0 ? 0.0 : an > U ? U : an;
            s->alpha[i] = an;
            row_axpy(s, (an - a) * yi, r, th);
        }
        maybe_tick(s, tid, nt, t - lo);
    }
    if (th)
        fold_bias(s, th);
    s->th[tid].pgmax = pgmax;
    s->th[tid].pgmin = pgmin;
    s->th[tid].kept = kept;
}

/* LIBLINEAR's solve_l2r_lr_dual step: minimise over z in (0, C)
 *   g(z) = z log z + (C - z) log(C - z) + a/2 (z - z0)^2 + sign b (z - z0)
 * where z is a_i or C - a_i, whichever the sign of the gradient moves
 * away from its bound. */
static void lr_job(void *arg, unsigned tid, unsigned nt)
{
    struct dcd *s = arg;
    uint64_t lo, hi;
    hog_slice(s->co.active, tid, nt, &lo, &hi);
    const double innereps = s->innereps;
    const int max_inner = 100;
    double gmax = 0.0;
    uint64_t newton = 0;
    struct dcd_thread *th = fold_state(s, tid);
    for (uint64_t t = lo; t < hi; t++) {
        uint64_t i = s->co.act[t];
        struct hog_row r = hog_csr_row(s->m, i);
        double yi = s->y[i], C = row_c(s, i);
        double a = s->qd[i], b = yi * row_dot(s, r, th);
        after_row(s, th);
        double *z1 = &s->alpha[i], *z2 = &s->calpha[i];
        double sign = 1.0;
        if (0.5 * a * (*z2 - *z1) + b < 0) {
            double *tmp = z1;
            z1 = z2, z2 = tmp;
            sign = -1.0;
        }
        double z0 = *z1, z = z0;
        if (C - z < 0.5 * C)
            z = 0.1 * z;
        double gp = a * (z - z0) + sign * b + log(z / (C - z));
        gmax = fabs(gp) > gmax ? fabs(gp) : gmax;
        int inner = 0;
        while (inner <= max_inner && fabs(gp) >= innereps) {
            double gpp = a + C / (C - z) / z;
            double tz = z - gp / gpp;
            z = tz <= 0 ? z * 0.1 : tz;
            gp = a * (z - z0) + sign * b + log(z / (C - z));
            inner++;
        }
        newton += (uint64_t)inner;
        if (inner > 0) {
            *z1 = z;
            *z2 = C - z;
            row_axpy(s, sign * (z - z0) * yi, r, th);
        }
        maybe_tick(s, tid, nt, t - lo);
    }
    if (th)
        fold_bias(s, th);
    s->th[tid].gmax = gmax;
    s->th[tid].newton = newton;
    s->th[tid].kept = hi - lo;
}

/* x log(x / C), 0 at x = 0. */
static double xlogx_c(double x, double C)
{
    return x > 0 ? x * log(x / C) : 0.0;
}

/* Row i's part of the gap's sums: its weighted loss at margin m into
 * *loss, and a_i, a_i^2 D_i and the logistic entropy terms. */
static inline void gap_row(const struct dcd *s, uint64_t i, double m,
                           double *loss, double *sum_a, double *sum_a2d,
                           double *ent)
{
    double yi = s->y[i], a = s->alpha[i];
    double l = hog_loss_value(s->loss, 0.0, yi, m);
    *loss += s->rw ? (double)s->rw[i] * l : l;
    *sum_a += a;
    if (s->loss == HOG_LOSS_SQHINGE && a != 0.0) {
        double U, D;
        row_bounds(s, i, &U, &D);
        *sum_a2d += a * a * D;
    }
    if (s->loss == HOG_LOSS_LOGISTIC) {
        double C = row_c(s, i);
        *ent += xlogx_c(a, C) + xlogx_c(s->calpha[i], C);
    }
}

/* (P - D) / P from the sums over rows and weights, and F and the mean
 * loss; loss = sum_i v_i loss_i, sum_a2d = sum_i a_i^2 D_i, wa2 =
 * |sum a_i y_i x_i|^2. */
static double gap_from_sums(const struct dcd *s, double loss, double sum_a,
                            double sum_a2d, double ent, double w2, double wa2,
                            double *F, double *mean_loss)
{
    double P = 0.5 * w2 + s->C * loss, D;
    *F = P / (s->C * (double)s->n);
    *mean_loss = loss / (double)s->n;
    switch (s->loss) {
    case HOG_LOSS_HINGE: D = sum_a - 0.5 * wa2; break;
    case HOG_LOSS_SQHINGE: D = sum_a - 0.5 * wa2 - sum_a2d / 2; break;
    default: D = -0.5 * wa2 - ent; break;
    }
    return P > 0 ? (P - D) / P : 0.0;
}

/* (P(w) - D(a)) / P(w), in LIBLINEAR's scale; -1 when out of memory.
 * Also the front door's objective F = P / (C n) and mean loss of w, which
 * spares it a second pass over the data (fit.h). One worker: on the
 * caller, as it always was. */
static double duality_gap_serial(const struct dcd *s, double *F,
                                 double *mean_loss)
{
    uint64_t nw = s->nf + (s->bias != 0.0);
    double *wa = calloc(nw, sizeof *wa);
    if (!wa)
        return -1.0;
    double loss = 0.0, sum_a = 0.0, sum_a2 = 0.0, ent = 0.0;
    for (uint64_t i = 0; i < s->n; i++) {
        struct hog_row r = hog_csr_row(s->m, i);
        double c = s->alpha[i] * s->y[i];
        gap_row(s, i, row_dot(s, r, NULL), &loss, &sum_a, &sum_a2, &ent);
        if (c != 0.0) {
            hog_sparse_axpy_d(wa, c, r);
            if (s->bias != 0.0)
                wa[s->nf] += c * s->bias;
        }
    }
    double w2 = 0.0, wa2 = 0.0;
    for (uint64_t j = 0; j < nw; j++) {
        double v = hog_d_load(&s->co.w[j]);
        w2 += v * v;
        wa2 += wa[j] * wa[j];
    }
    free(wa);
    return gap_from_sums(s, loss, sum_a, sum_a2, ent, w2, wa2, F, mean_loss);
}

/* The gap's pass on every worker: a block of rows each (loss, sums of a,
 * and, wild only, sum a_i y_i x_i rebuilt into s->gap_wa by CAS adds),
 * a barrier, then a block of weights each (|w|^2, |wa|^2). Under
 * --update atomic no add was lost, so w is sum a_i y_i x_i already (to
 * rounding) and is not rebuilt. */
static void gap_job(void *arg, unsigned tid, unsigned nt)
{
    struct dcd *s = arg;
    _Atomic double *wa = s->gap_wa;
    uint64_t lo, hi;
    hog_slice(s->n, tid, nt, &lo, &hi);
    double loss = 0.0, sum_a = 0.0, sum_a2 = 0.0, ent = 0.0;
    for (uint64_t i = lo; i < hi; i++) {
        struct hog_row r = hog_csr_row(s->m, i);
        double c = s->alpha[i] * s->y[i];
        gap_row(s, i, row_dot(s, r, NULL), &loss, &sum_a, &sum_a2, &ent);
        if (wa && c != 0.0) {
            hog_sparse_axpy_d_cas_n(wa, c, r.idx, r.val, r.nnz);
            if (s->bias != 0.0)
                hog_d_add_cas(&wa[s->nf], c * s->bias);
        }
    }
    struct dcd_thread *th = &s->th[tid];
    th->loss = loss, th->sum_a = sum_a, th->sum_a2 = sum_a2, th->ent = ent;
    if (wa) /* every add to wa done before anyone sums it */
        hog_pool_barrier(s->co.env.pool);
    double w2 = 0.0, wa2 = 0.0;
    hog_slice(s->co.nw, tid, nt, &lo, &hi);
    for (uint64_t j = lo; j < hi; j++) {
        double v = hog_d_load(&s->co.w[j]);
        w2 += v * v;
        if (wa) {
            double u = hog_d_load(&wa[j]);
            wa2 += u * u;
        }
    }
    th->w2 = w2;
    th->wa2 = wa ? wa2 : w2;
}

/* The gap on the pool (gap_job): it was a serial pass over the data as
 * long as an epoch's, between every two epochs. The sums are added in
 * worker order. */
static double duality_gap_pool(struct dcd *s, double *F, double *mean_loss)
{
    s->gap_wa = NULL;
    if (!s->cas) {
        s->gap_wa = hog_zalloc(s->co.nw, sizeof *s->gap_wa);
        if (!s->gap_wa)
            return -1.0;
    }
    hog_pool_run(s->co.env.pool, gap_job, s);
    free((void *)s->gap_wa);
    s->gap_wa = NULL;
    double loss = 0.0, sum_a = 0.0, sum_a2 = 0.0, ent = 0.0, w2 = 0.0,
           wa2 = 0.0;
    for (unsigned t = 0; t < s->co.env.threads; t++) {
        const struct dcd_thread *th = &s->th[t];
        loss += th->loss, sum_a += th->sum_a, sum_a2 += th->sum_a2;
        ent += th->ent, w2 += th->w2, wa2 += th->wa2;
    }
    return gap_from_sums(s, loss, sum_a, sum_a2, ent, w2, wa2, F, mean_loss);
}

static void dcd_free(struct dcd *s)
{
    free(s->alpha);
    free(s->calpha);
    free(s->qd);
    free(s->y);
    free(s->th);
}

/* The driver hands back the struct hog_coord at the start of ours. */
_Static_assert(offsetof(struct dcd, co) == 0, "co must come first");

static hog_status dcd_setup(struct hog_coord *c, hog_err *err)
{
    struct dcd *s = (struct dcd *)c;
    struct hog_fit *f = c->f;
    const hog_data *d = f->train;
    /* One worker has no one to race with: plain adds, the same answer. */
    s->cas = f->o->update == HOG_UPDATE_ATOMIC && c->env.threads > 1;
    s->par = c->env.threads > 1;
    uint64_t nw = c->nw = s->nf + (s->bias != 0.0);
    c->w = hog_zalloc(nw, sizeof *c->w);
    s->alpha = malloc(s->n * sizeof *s->alpha);
    s->calpha = s->loss == HOG_LOSS_LOGISTIC
                    ? malloc(s->n * sizeof *s->calpha)
                    : NULL;
    s->qd = malloc(s->n * sizeof *s->qd);
    s->y = malloc(s->n);
    c->act = malloc(s->n * sizeof *c->act);
    s->th = aligned_alloc(HOG_CACHELINE, c->env.threads * sizeof *s->th);
    if (!c->w || !s->alpha || !s->qd || !s->y || !c->act || !s->th ||
        (s->loss == HOG_LOSS_LOGISTIC && !s->calpha))
        return hog_errf(err, HOG_ENOMEM,
                        "out of memory for the dual variables of %llu rows",
                        (unsigned long long)s->n);
    memset(s->th, 0, c->env.threads * sizeof *s->th); /* no bias adds held */
    size_t aux = nw * sizeof *c->w + s->n * (2 * sizeof(double) + 1 +
                                             sizeof(uint64_t));
    if (s->calpha)
        aux += s->n * sizeof(double);
    f->aux_bytes = aux;

    s->live = 0;
    for (uint64_t i = 0; i < s->n; i++) {
        struct hog_row r = hog_csr_row(s->m, i);
        double q = hog_sparse_sqnorm(r.val, r.nnz, s->bias * s->bias);
        s->y[i] = (signed char)hog_loss_target(s->loss, d->label_pos, r.y);
        double C = row_c(s, i), U, D;
        s->live += C > 0.0;
        if (s->loss == HOG_LOSS_LOGISTIC) {
            /* LIBLINEAR's start: a small a_i inside (0, C_i); a row of
             * weight 0 keeps a_i = 0 = C_i and is never visited. */
            double a0 = 0.001 * C < 1e-8 ? 0.001 * C : 1e-8;
            s->alpha[i] = a0;
            s->calpha[i] = C - a0;
            s->qd[i] = q;
            if (a0 > 0.0)
                row_axpy(s, a0 * s->y[i], r, NULL);
        } else {
            row_bounds(s, i, &U, &D);
            s->alpha[i] = 0.0;
            s->qd[i] = C > 0.0 ? q + D : q;
        }
    }
    all_rows(s);
    return HOG_OK;
}

static unsigned dcd_run(struct hog_coord *c)
{
    struct dcd *s = (struct dcd *)c;
    hog_coord_run(c->env.pool,
                  s->loss == HOG_LOSS_LOGISTIC ? lr_job : svm_job, s);
    return c->env.threads;
}

static uint64_t dcd_kept(const struct hog_coord *c, unsigned t)
{
    return ((const struct dcd *)c)->th[t].kept;
}

/* LIBLINEAR's stopping rule and shrinking thresholds, and the logistic
 * sub-problems' accuracy. */
static bool dcd_end(struct hog_coord *c, unsigned nt)
{
    struct dcd *s = (struct dcd *)c;
    const double tol = c->f->o->tol;
    const double innereps_min = tol > 0 && tol < 1e-8 ? tol : 1e-8;
    uint64_t newton = 0;
    double pgmax = -INFINITY, pgmin = INFINITY, gmax = 0.0;
    for (unsigned t = 0; t < nt; t++) {
        pgmax = s->th[t].pgmax > pgmax ? s->th[t].pgmax : pgmax;
        pgmin = s->th[t].pgmin < pgmin ? s->th[t].pgmin : pgmin;
        gmax = s->th[t].gmax > gmax ? s->th[t].gmax : gmax;
        newton += s->th[t].newton;
    }

    bool stop = false;
    if (s->loss == HOG_LOSS_LOGISTIC) {
        stop = gmax < tol;
        if (newton <= s->n / 10)
            s->innereps = 0.1 * s->innereps > innereps_min
                              ? 0.1 * s->innereps
                              : innereps_min;
    } else if (pgmax - pgmin <= tol) {
        if (c->active == s->live) {
            stop = true;
        } else { /* the active set converged: check every row again */
            all_rows(s);
            s->pgmax_old = INFINITY;
            s->pgmin_old = -INFINITY;
        }
    } else {
        s->pgmax_old = pgmax <= 0 ? INFINITY : pgmax;
        s->pgmin_old = pgmin >= 0 ? -INFINITY : pgmin;
    }
    return stop;
}

/* The duality gap, and with it the objective, when someone listens. */
static hog_status dcd_report(struct hog_coord *c, hog_err *err)
{
    struct hog_fit *f = c->f;
    if (!f->hooks.progress)
        return HOG_OK;
    struct dcd *s = (struct dcd *)c;
    double g = c->env.pool ? duality_gap_pool(s, &f->objective, &f->mean_loss)
                           : duality_gap_serial(s, &f->objective, &f->mean_loss);
    if (g < -0.5)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the duality gap");
    f->gap = g;
    return HOG_OK;
}

hog_status hog_dcd_train(struct hog_fit *f, hog_err *err)
{
    static const struct hog_coord_ops ops = { dcd_setup, dcd_run, dcd_kept,
                                              dcd_end, dcd_report };
    const hog_data *d = f->train;
    const hog_train_opts *o = f->o;
    if (o->loss == HOG_LOSS_EPS_INSENSITIVE ||
        o->loss == HOG_LOSS_SQ_EPS_INSENSITIVE)
        return hog_dcd_svr_train(f, err);
    struct dcd s;
    memset(&s, 0, sizeof s);
    s.co.f = f;
    s.co.ops = &ops;
    s.m = &d->m;
    s.n = d->m.rows;
    s.nf = d->n_features;
    s.bias = o->bias;
    s.loss = o->loss;
    s.C = 1.0 / (o->l2 * (double)s.n);
    s.rw = d->row_w;
    s.U = o->loss == HOG_LOSS_HINGE ? s.C : INFINITY;
    s.D = o->loss == HOG_LOSS_SQHINGE ? 1.0 / (2.0 * s.C) : 0.0;
    s.shrink = o->loss != HOG_LOSS_LOGISTIC && o->tol > 0;
    s.pgmax_old = INFINITY;
    s.pgmin_old = -INFINITY;
    s.innereps = 1e-2;
    hog_status st =
        hog_coord_drive(&s.co, d->m.nnz + (s.bias != 0.0 ? s.n : 0), err);
    dcd_free(&s);
    return st;
}
