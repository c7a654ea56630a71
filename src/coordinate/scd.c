/*
 * Primal stochastic coordinate descent over columns, shotgun-parallel.
 *
 * Minimises F(w) = (1/n) sum_i loss(y_i, m_i) + l2/2 |w|^2 + l1 |w|_1,
 * m = X w (the bias a column of constant value), for the squared loss
 * (ridge, Lasso, elastic net) and the logistic loss (L1 and/or L2), with
 * the margins m kept current. Coordinate j, with column x_j:
 *
 *   g = (1/n) sum_i x_ij loss'(m_i) + l2 w_j
 *   h = (1/n) sum_i x_ij^2 + l2
 *   z = soft(w_j - g / h, l1 / h),  soft(u, t) = sign(u) max(|u| - t, 0)
 *
 * the exact minimiser along w_j for the squared loss; then w_j += d and
 * m_i += d x_ij down the column, d = z - w_j. Each epoch visits the active
 * columns in a fresh seeded permutation (Shalev-Shwartz & Tewari, ICML
 * 2009).
 *
 * Logistic: an exp() per nonzero per step (what CDN, LIBLINEAR's L1 solver
 * before 1.8, pays) costs several times more per epoch than this: an exp()
 * is far dearer than a step's multiply-adds (measured in
 * docs/bench-log/coordinate.md). At the start of each epoch the loss is
 * replaced by its second-order model around the epoch's margins m0
 * (n exp()s: loss'(m0_i), loss''(m0_i)); the epoch runs the steps above on
 * that model,
 *
 *   g = (1/n) sum_i x_ij (loss'(m0_i) + loss''(m0_i) (m_i - m0_i)) + l2 w_j
 *   h = (1/n) sum_i x_ij^2 loss''(m0_i) + l2
 *
 * and ends with an Armijo line search on F along the epoch's whole step
 * (newGLMNET with one coordinate cycle per Newton step: Yuan, Ho, Lin,
 * JMLR 2012; LIBLINEAR -s 6).
 *
 * Shrinking (L1): a zero weight whose |g| is below l1 by more than the
 * largest violation of the last epoch (divided by n) leaves the active set
 * for the rest of the round; when the active set has converged, every
 * column comes back for a check (LIBLINEAR -s 5/6). The active set is
 * solved to 0.1, then 0.01, ... (never below tol) between full checks.
 * Stopping: the L1 norm of the minimum-norm subgradient, relative to the
 * first epoch's, below tol on a full pass over the columns (LIBLINEAR's
 * -e for -s 5/6); or after `epochs`.
 *
 * Parallel (Bradley, Kyrola, Bickson, Guestrin, "Parallel coordinate
 * descent for L1-regularized loss minimization", ICML 2011): the workers
 * take slices of the epoch's permutation of columns and update their
 * coordinates at the same time, reading margins the others are changing.
 * Each w_j has one writer per epoch. The margins are another matter, and
 * this is why the adds to m_i are compare-and-swap atomics where Hogwild!
 * uses plain relaxed stores: two columns that share row i both add to m_i,
 * and m_i is not a free variable but the cached value of w.x_i. Hogwild!
 * losing a write to w_j loses one stochastic step, which later steps
 * correct; losing an add to m_i would leave m_i != w.x_i for good, and
 * every later step would descend a wrong objective. With one worker the
 * adds are plain and the run is deterministic given the seed.
 *
 * Workers sit out small epochs (SCD_PAR_NNZ): an epoch, or a parallel
 * epoch's inner cycles, with fewer nonzeros than that per worker runs on
 * one thread with plain adds, and a problem too small for any parallel
 * epoch opens no pool. The per-epoch objective comes from the line search
 * (logistic) or the residuals (squared), so the front door need not make
 * a pass over the data for it (fit.h).
 *
 * Row weights v_i (docs/TRAINING.md, "Weights"): the loss term is
 * (1/n) sum_i v_i loss_i, so g and h take v_i x_ij loss'(m_i) and
 * v_i x_ij^2 loss''(m_i). Logistic: the epoch's quadratic model carries
 * the weights (its per-row coefficients are v_i times the unweighted
 * ones), and the column loops stay as they are. Squared: |x_j|^2 becomes
 * sum_i v_i x_ij^2, and the residual loop has a weighted twin.
 */
#include "coordinate/internal.h"

#include "core/loss.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct scd_thread {
    _Alignas(HOG_CACHELINE) double vsum, vmax;
    double f0;       /* logistic: sum of the losses at m0 over the worker's rows */
    uint64_t work;   /* logistic: nonzeros of the worker's nonzero weights */
    double cvsum[2]; /* logistic: violation of the worker's inner cycles,
                        alternating (one barrier per cycle) */
    uint64_t kept;
};

/* The driver's part first (internal.h): the active columns in co.act, the
 * shared weights in co.w (cols). */
struct scd {
    struct hog_coord co;
    struct hog_csc c;
    uint64_t n, cols;
    hog_loss loss;
    double l1, l2, inv_n;
    bool cas;               /* more than one worker in this epoch */
    bool shrink;
    _Atomic double *mar;    /* n: w.x_i */
    double *y;              /* n: +1/-1, or the target */
    const float *rw;        /* n: row weights, or NULL (all 1) */
    double *colsq;          /* cols: |x_j|^2 */
    /* logistic: the epoch's quadratic model around (w0, m0) */
    double *w0;             /* cols */
    double *m0;             /* n */
    double *lp;             /* n: v_i loss'(m0_i) = -v_i y_i sigma(-y_i m0_i) */
    double *qd;             /* 2n, per row: v_i (loss'(m0_i) - loss''(m0_i)
                               m0_i) and v_i loss''(m0_i), side by side so
                               that a step's gradient reads one line per
                               row */
    double m_old;           /* shrinking margin: last epoch's max violation / n */
    double vnorm0;          /* the first epoch's violation (-1 before it) */
    double inner;           /* the active set's tolerance */
    double obj, mean_loss;  /* the epoch's F and mean loss (NaN: unknown) */
    struct scd_thread *th;
};

/* Workers of an epoch run alone (nt 1) need no barrier. */
static inline void barrier(struct scd *s, unsigned nt)
{
    if (nt > 1)
        hog_pool_barrier(s->co.env.pool);
}

static inline double soft(double u, double t)
{
    return u > t ? u - t : u < -t ? u + t : 0.0;
}

/* The squared loss's sum_i x_ij (m_i - y_i) down column [a, b), each term
 * times v_i when weighted: two loops, chosen once per column. */
static ALWAYS_INLINE double
residual_dot(const struct scd *s, uint64_t a, uint64_t b, bool weighted)
{
    const uint32_t *row = s->c.row;
    const float *val = s->c.val;
    double g = 0.0;
    for (uint64_t k = a; k < b; k++) {
        uint32_t i = row[k];
        double t = val[k] * (hog_d_load(&s->mar[i]) - s->y[i]);
        g += weighted ? (double)s->rw[i] * t : t;
    }
    return g;
}

/* One coordinate; returns false when it leaves the active set. */
static inline bool update(struct scd *s, uint64_t j, bool may_shrink,
                          bool cas, double *vsum, double *vmax)
{
    uint64_t a = s->c.off[j], b = s->c.off[j + 1];
    const uint32_t *row = s->c.row;
    const float *val = s->c.val;
    double wj = hog_d_load(&s->co.w[j]);
    double g = 0.0, h = 0.0;
    if (s->loss == HOG_LOSS_SQUARED) {
        g = s->rw ? residual_dot(s, a, b, true) : residual_dot(s, a, b, false);
        h = s->colsq[j];
    } else { /* the quadratic model of the epoch: no exp() here */
        for (uint64_t k = a; k < b; k++) {
            uint32_t i = row[k];
            double v = val[k];
            double q = s->qd[2 * i], dd = s->qd[2 * i + 1];
            g += v * (q + dd * hog_d_load(&s->mar[i]));
            h += v * v * dd;
        }
        h += 1e-12 * (double)s->n; /* LIBLINEAR's nu: h > 0 */
    }
    g = g * s->inv_n + s->l2 * wj;
    h = h * s->inv_n + s->l2;

    double viol;
    if (wj == 0.0) {
        if (may_shrink && s->shrink && fabs(g) < s->l1 - s->m_old)
            return false;
        viol = fabs(g) > s->l1 ? fabs(g) - s->l1 : 0.0;
    } else {
        viol = fabs(g + (wj > 0 ? s->l1 : -s->l1));
    }
    *vsum += viol;
    *vmax = viol > *vmax ? viol : *vmax;
    if (!(h > 1e-12))
        return true; /* an empty column without l2: nothing to learn */

    double d = soft(wj - g / h, s->l1 / h) - wj;
    if (d == 0.0)
        return true;
    hog_d_store(&s->co.w[j], wj + d);
    if (cas)
        hog_sparse_axpy_d_cas_n(s->mar, d, row + a, val + a, b - a);
    else
        hog_sparse_axpy_d_wild_n(s->mar, d, row + a, val + a, b - a);
    return true;
}

/* Logistic: the quadratic model of the epoch, around the weights and
 * margins it starts from, on the worker's rows and columns. */
static void logistic_model(struct scd *s, unsigned tid, unsigned nt)
{
    uint64_t r0, r1, c0, c1;
    hog_slice(s->n, tid, nt, &r0, &r1);
    double f = 0.0;
    for (uint64_t i = r0; i < r1; i++) {
        double m = hog_d_load(&s->mar[i]), z = s->y[i] * m;
        double p = hog_sigmoid_neg(z);
        double v = s->rw ? (double)s->rw[i] : 1.0; /* v = 1: the same bits */
        double dd = v * (p * (1.0 - p));
        s->m0[i] = m;
        s->lp[i] = v * (-s->y[i] * p);
        s->qd[2 * i + 1] = dd;
        s->qd[2 * i] = s->lp[i] - dd * m;
        f += v * hog_log1pexp_neg(z);
    }
    hog_slice(s->cols, tid, nt, &c0, &c1);
    for (uint64_t j = c0; j < c1; j++)
        s->w0[j] = hog_d_load(&s->co.w[j]);
    s->th[tid].f0 = f;
}

/* Logistic, after the epoch: Armijo backtracking on F along the epoch's
 * step (w0, m0) -> (w, m): F(w0 + t D) - F(w0) <= sigma t delta, delta the
 * directional derivative plus the change of l1 |w|_1 (Tseng and Yun; the
 * line search of newGLMNET). Takes the step, a part of it, or none.
 * Returns F where it leaves the weights (the epoch's objective, free of a
 * pass over the data), and their mean loss in *mean_loss. */
static double logistic_line_search(struct scd *s, double f0,
                                   double *mean_loss)
{
    const double sigma = 0.01;
    double n1w0 = 0, n2w0 = 0, n1w = 0, dl2 = 0, dloss = 0;
    for (uint64_t j = 0; j < s->cols; j++) {
        double a = s->w0[j], b = hog_d_load(&s->co.w[j]);
        n1w0 += fabs(a);
        n2w0 += a * a;
        n1w += fabs(b);
        dl2 += a * (b - a);
    }
    for (uint64_t i = 0; i < s->n; i++)
        dloss += s->lp[i] * (hog_d_load(&s->mar[i]) - s->m0[i]);
    double F0 = f0 * s->inv_n + 0.5 * s->l2 * n2w0 + s->l1 * n1w0;
    double delta = dloss * s->inv_n + s->l2 * dl2 + s->l1 * (n1w - n1w0);
    double t = 1.0, F = F0, mloss = f0 * s->inv_n;
    bool ok = false;
    for (int ls = 0; ls < 30 && delta < 0; ls++, t *= 0.5) {
        double loss = 0, n1 = 0, n2 = 0;
        for (uint64_t i = 0; i < s->n; i++) {
            double m0 = s->m0[i], m = hog_d_load(&s->mar[i]);
            double l = hog_log1pexp_neg(s->y[i] * (m0 + t * (m - m0)));
            loss += s->rw ? (double)s->rw[i] * l : l;
        }
        for (uint64_t j = 0; j < s->cols; j++) {
            double a = s->w0[j], v = a + t * (hog_d_load(&s->co.w[j]) - a);
            n1 += fabs(v);
            n2 += v * v;
        }
        double Ft = loss * s->inv_n + 0.5 * s->l2 * n2 + s->l1 * n1;
        if (Ft - F0 <= sigma * t * delta) {
            ok = true;
            F = Ft;
            mloss = loss * s->inv_n;
            break;
        }
    }
    *mean_loss = mloss;
    if (ok && t == 1.0)
        return F;
    if (!ok)
        t = 0.0; /* no descent: back to where the epoch started */
    for (uint64_t j = 0; j < s->cols; j++) {
        double a = s->w0[j];
        hog_d_store(&s->co.w[j], a + t * (hog_d_load(&s->co.w[j]) - a));
    }
    for (uint64_t i = 0; i < s->n; i++) {
        double m0 = s->m0[i];
        hog_d_store(&s->mar[i], m0 + t * (hog_d_load(&s->mar[i]) - m0));
    }
    return F;
}

/* Squared loss: F from the residuals the solver keeps, O(rows + cols). */
static double squared_objective(const struct scd *s, double *mean_loss)
{
    double loss = 0.0, n1 = 0.0, n2 = 0.0;
    for (uint64_t i = 0; i < s->n; i++) {
        double r = hog_d_load(&s->mar[i]) - s->y[i];
        double l = 0.5 * r * r;
        loss += s->rw ? (double)s->rw[i] * l : l;
    }
    for (uint64_t j = 0; j < s->cols; j++) {
        double v = hog_d_load(&s->co.w[j]);
        n1 += fabs(v);
        n2 += v * v;
    }
    *mean_loss = loss * s->inv_n;
    return *mean_loss + 0.5 * s->l2 * n2 + s->l1 * n1;
}

/* Logistic: more coordinate cycles over the nonzero weights on the same
 * quadratic model while the cycle's violation is above a tenth of the
 * first cycle's, up to this many (newGLMNET's adaptive inner loop,
 * simplified). */
#define SCD_INNER_CYCLES 8

/* An epoch, or a parallel epoch's inner cycles, with fewer than
 * HOG_COORD_PAR_NNZ nonzeros per worker runs on one worker (the caller,
 * plain adds; coordinate.h). Below it a parallel epoch spends more on the
 * pool's wake-up and barriers than on its columns, most of all on a loaded
 * machine, where a barrier waits for a descheduled peer (measured in
 * docs/bench-log/coordinate.md, reuters_moneyfx). L1's
 * active sets (reuters_moneyfx: 348k nonzeros for all columns, 40k-120k
 * active; news20: 3.8M, 280k-400k) run alone; news20's full checks of
 * every column, mostly zero weights that stay zero and cost no atomic, run
 * on all workers. */
#define SCD_PAR_NNZ HOG_COORD_PAR_NNZ

/* Inner cycles refine the nonzero weights only; a zero weight gets its
 * chance in the next epoch's first cycle (on news20 a full cycle walks
 * 377k mostly-zero columns, several times the work of the nonzero ones:
 * measured in docs/bench-log/coordinate.md). The kept columns of a slice. */
static void inner_cycle(struct scd *s, uint64_t lo, uint64_t kept, bool cas,
                        double *cyc, double *vm)
{
    for (uint64_t t = lo; t < lo + kept; t++)
        if (hog_d_load(&s->co.w[s->co.act[t]]) != 0.0)
            update(s, s->co.act[t], false, cas, cyc, vm);
}

static void scd_job(void *arg, unsigned tid, unsigned nt)
{
    struct scd *s = arg;
    bool logistic = s->loss == HOG_LOSS_LOGISTIC;
    if (logistic) {
        logistic_model(s, tid, nt);
        barrier(s, nt);
    }
    uint64_t lo, hi, kept = 0;
    hog_slice(s->co.active, tid, nt, &lo, &hi);
    double vsum = 0.0, vmax = 0.0;
    for (uint64_t t = lo; t < hi; t++) {
        uint64_t j = s->co.act[t];
        if (update(s, j, true, s->cas, &vsum, &vmax))
            s->co.act[lo + kept++] = j;
        /* Progress from worker 0 only: the hooks are not thread-safe. */
        if (tid == 0 && ((t - lo) & 1023) == 1023)
            s->co.f->tick(s->co.f, s->co.epoch, (t - lo) * nt,
                          s->co.active);
    }
    s->th[tid].vsum = vsum;
    s->th[tid].vmax = vmax;
    s->th[tid].kept = kept;
    if (!logistic)
        return;
    /* Every worker sums the same published violations in the same order,
     * so all take the same decision after one barrier. Slot c & 1 is
     * rewritten at cycle c + 2, after the next barrier, which nobody
     * passes before everyone has read it. */
    uint64_t work = 0;
    for (uint64_t t = lo; t < lo + kept; t++) {
        uint64_t j = s->co.act[t];
        if (hog_d_load(&s->co.w[j]) != 0.0)
            work += s->c.off[j + 1] - s->c.off[j];
    }
    s->th[tid].work = work;
    double cyc = vsum, first = 0.0;
    bool alone = nt == 1, cas = s->cas;
    for (int c = 1; c < SCD_INNER_CYCLES; c++) {
        double last = cyc;
        if (!alone) {
            s->th[tid].cvsum[c & 1] = cyc;
            barrier(s, nt);
            last = 0.0;
            for (unsigned t = 0; t < nt; t++)
                last += s->th[t].cvsum[c & 1];
            if (c == 1) {
                /* Few nonzero weights (the usual case once L1 has found
                 * its support): worker 0 refines them alone, plain adds,
                 * no barriers; the others are done. */
                work = 0;
                for (unsigned t = 0; t < nt; t++)
                    work += s->th[t].work;
                if (work < (uint64_t)SCD_PAR_NNZ * nt) {
                    if (tid != 0)
                        return;
                    alone = true;
                    cas = false;
                }
            }
        }
        if (c == 1)
            first = last;
        if (!(c == 1 ? first > 0 : last > 0.1 * first))
            break;
        double vm = 0.0;
        cyc = 0.0;
        if (alone && nt > 1) { /* worker 0 for all: every slice */
            for (unsigned t = 0; t < nt; t++) {
                uint64_t a, b;
                hog_slice(s->co.active, t, nt, &a, &b);
                inner_cycle(s, a, s->th[t].kept, cas, &cyc, &vm);
            }
        } else {
            inner_cycle(s, lo, kept, cas, &cyc, &vm);
        }
    }
}

static void scd_free(struct scd *s)
{
    hog_csc_free(&s->c);
    free((void *)s->mar);
    free(s->y);
    free(s->colsq);
    free(s->w0);
    free(s->m0);
    free(s->lp);
    free(s->qd);
    free(s->th);
}

/* The driver hands back the struct hog_coord at the start of ours. */
_Static_assert(offsetof(struct scd, co) == 0, "co must come first");

static hog_status scd_setup(struct hog_coord *c, hog_err *err)
{
    struct scd *s = (struct scd *)c;
    struct hog_fit *f = c->f;
    const hog_data *d = f->train;
    hog_status st = hog_csc_build(c->env.pool, &d->m, d->n_features,
                                  f->o->bias, &s->c, err);
    if (st != HOG_OK)
        return st;
    s->cols = c->nw = s->c.cols;
    c->w = hog_zalloc(s->cols, sizeof *c->w);
    s->mar = hog_zalloc(s->n, sizeof *s->mar);
    s->y = malloc(s->n * sizeof *s->y);
    s->colsq = malloc((s->cols ? s->cols : 1) * sizeof *s->colsq);
    c->act = malloc((s->cols ? s->cols : 1) * sizeof *c->act);
    s->th = aligned_alloc(HOG_CACHELINE, c->env.threads * sizeof *s->th);
    if (s->loss == HOG_LOSS_LOGISTIC) {
        s->w0 = malloc((s->cols ? s->cols : 1) * sizeof *s->w0);
        s->m0 = malloc(s->n * sizeof *s->m0);
        s->lp = malloc(s->n * sizeof *s->lp);
        s->qd = malloc(2 * s->n * sizeof *s->qd);
    }
    if (!c->w || !s->mar || !s->y || !s->colsq || !c->act || !s->th ||
        (s->loss == HOG_LOSS_LOGISTIC &&
         (!s->w0 || !s->m0 || !s->lp || !s->qd)))
        return hog_errf(err, HOG_ENOMEM,
                        "out of memory for coordinate descent over %llu "
                        "columns and %llu rows",
                        (unsigned long long)s->cols,
                        (unsigned long long)s->n);
    f->aux_bytes = s->c.bytes + s->cols * (2 * sizeof(double) +
                                           sizeof(uint64_t)) +
                   s->n * 2 * sizeof(double);
    if (s->loss == HOG_LOSS_LOGISTIC)
        f->aux_bytes += s->cols * sizeof(double) + s->n * 4 * sizeof(double);
    for (uint64_t i = 0; i < s->n; i++)
        s->y[i] = hog_loss_target(s->loss, d->label_pos, d->m.y[i]);
    for (uint64_t j = 0; j < s->cols; j++) {
        uint64_t a = s->c.off[j], b = s->c.off[j + 1];
        if (!s->rw) {
            s->colsq[j] = hog_sparse_sqnorm(s->c.val + a, b - a, 0.0);
            continue;
        }
        double q = 0.0; /* sum_i v_i x_ij^2, in entry order */
        for (uint64_t k = a; k < b; k++)
            q += (double)s->rw[s->c.row[k]] * ((double)s->c.val[k] * s->c.val[k]);
        s->colsq[j] = q;
    }
    hog_coord_all_active(c, s->cols);
    return HOG_OK;
}

/* A small epoch runs on the caller alone: see SCD_PAR_NNZ. */
static unsigned scd_run(struct hog_coord *c)
{
    struct scd *s = (struct scd *)c;
    uint64_t work = 0;
    for (uint64_t t = 0; t < c->active; t++)
        work += s->c.off[c->act[t] + 1] - s->c.off[c->act[t]];
    unsigned nt = c->env.threads;
    if (work < SCD_PAR_NNZ * nt)
        nt = 1;
    s->cas = nt > 1;
    hog_coord_run(nt > 1 ? c->env.pool : NULL, scd_job, s);
    return nt;
}

static uint64_t scd_kept(const struct hog_coord *c, unsigned t)
{
    return ((const struct scd *)c)->th[t].kept;
}

/* The logistic line search, then the stopping rule and shrinking. */
static bool scd_end(struct hog_coord *c, unsigned nt)
{
    struct scd *s = (struct scd *)c;
    const double tol = c->f->o->tol;
    double vsum = 0.0, vmax = 0.0, f0 = 0.0;
    for (unsigned t = 0; t < nt; t++) {
        vsum += s->th[t].vsum;
        vmax = s->th[t].vmax > vmax ? s->th[t].vmax : vmax;
        f0 += s->th[t].f0;
    }
    s->obj = NAN;
    s->mean_loss = NAN;
    if (s->loss == HOG_LOSS_LOGISTIC)
        s->obj = logistic_line_search(s, f0, &s->mean_loss);
    if (s->vnorm0 < 0)
        s->vnorm0 = vsum;

    /* The active set is solved to a looser tolerance first, tightened
     * tenfold at each full check: a column shrunk early waits for the
     * next full check, and LIBLINEAR's single tolerance made it wait
     * 20 epochs on reuters_moneyfx while the rest had converged. */
    bool stop = false;
    if (vsum <= s->inner * s->vnorm0) {
        if (c->active == s->cols && vsum <= tol * s->vnorm0) {
            stop = true;
        } else if (c->active < s->cols) { /* check every column */
            hog_coord_all_active(c, s->cols);
            s->m_old = INFINITY;
        } else {
            s->m_old = vmax * s->inv_n;
        }
        s->inner = s->inner * 0.1 > tol ? s->inner * 0.1 : tol;
    } else {
        s->m_old = vmax * s->inv_n;
    }
    return stop;
}

/* The objective the line search found (logistic) or the residuals give
 * (squared, O(n)). */
static hog_status scd_report(struct hog_coord *c, hog_err *err)
{
    (void)err;
    struct scd *s = (struct scd *)c;
    if (s->loss == HOG_LOSS_SQUARED)
        s->obj = squared_objective(s, &s->mean_loss);
    c->f->objective = s->obj;
    c->f->mean_loss = s->mean_loss;
    return HOG_OK;
}

hog_status hog_scd_train(struct hog_fit *f, hog_err *err)
{
    static const struct hog_coord_ops ops = { scd_setup, scd_run, scd_kept,
                                              scd_end, scd_report };
    const hog_data *d = f->train;
    const hog_train_opts *o = f->o;
    struct scd s;
    memset(&s, 0, sizeof s);
    s.co.f = f;
    s.co.ops = &ops;
    s.n = d->m.rows;
    s.rw = d->row_w;
    s.loss = o->loss;
    s.l1 = o->l1;
    s.l2 = o->l2;
    s.inv_n = 1.0 / (double)s.n;
    s.shrink = o->l1 > 0 && o->tol > 0;
    s.m_old = INFINITY; /* no shrinking before a first full epoch */
    s.vnorm0 = -1.0;
    s.inner = o->tol > 0.1 ? o->tol : 0.1;
    /* No epoch of a small problem could run in parallel: no pool for it. */
    hog_status st =
        hog_coord_drive(&s.co, d->m.nnz + (o->bias != 0.0 ? s.n : 0), err);
    scd_free(&s);
    return st;
}
