/*
 * The parallel job of one Cyclades epoch (hog_cyc_run_job, run on every
 * worker by hog_cyclades_train): the batches in the epoch's visit order,
 * each in phases separated by the spinning barrier (pool/spin.h): the
 * rows phase, where threads claim groups of whole components and run
 * their rows through the SGD kernel; the hot phase, where threads claim
 * groups of hot weights and step each once; at a segment's end, the
 * catch-up of every weight. Thread 0 polls the cancel flag, ticks the
 * progress and writes checkpoints between batches (checkpoint.c).
 *
 * Hot features. A feature in most rows (the bias, "the" in text) joins
 * every row of a batch into one component: on text the largest component
 * holds about all of every batch. Features in more than hot_degree rows,
 * and the bias, therefore leave the graph. During a batch every row reads
 * them as they were at the batch's start (its margin gets their part as
 * m_extra); after the barrier each hot weight j takes ONE step at the
 * batch's last step t_end, with the summed gradient and, for AdaGrad, the
 * summed squares (both over the batch's rows i, in permutation order)
 *
 *     G_j = sum_i loss'_i x_ij,     S_j = sum_i (loss'_i x_ij)^2.
 *
 * AdaGrad's accumulator takes S_j, what the serial steps would have added
 * (G_j^2 is up to c times larger for a feature in c rows of the batch, and
 * shrank the hot weights' steps by up to sqrt(c), which cost test accuracy
 * on skewed data, more with the hinge loss: see docs/bench-log/cyclades.md).
 * The gradient is divided by max(1, eta_j R_j), where eta_j is the step's
 * step size (eta_t_end; AdaGrad: eta / sqrt(eps + A_j + S_j), A_j the
 * accumulator before the step) and
 *
 *     R_j = sum_i |x_ij| h_i |x_i,hot|_1
 *
 * is row j of Gershgorin's bound on the batch loss's Hessian H over the hot
 * weights (|x_i,hot|_1 counts the bias), h_i row i's curvature: the
 * logistic loss's second derivative at the row's margin at the batch's
 * start, |d_i| (1 - |d_i|); for the other losses their bound (1 squared and
 * hinge, 2 squared hinge). All hot weights step at once, on stale margins:
 * a Jacobi step with step sizes D = diag(eta_j), and rho(D H) <= max_j
 * eta_j R_j (the row sums of |D H|). The division makes the damped D'
 * satisfy rho(D' H) <= 1, so on the batch loss's quadratic model the step
 * moves towards its minimum without overshooting, however many hot
 * features a row has (the bias and a9a's fourteen one-hot groups move
 * together; undamped AdaGrad steps with S_j cost a9a test accuracy at a
 * large eta or batch size: see docs/bench-log/cyclades.md). Hot features
 * are dealt to work groups by whole cache lines (largest degree first,
 * least-loaded group); whoever claims a group sums each of its weights in
 * row order from a feature-major copy of the batch's hot entries built
 * with the partition, and steps it once. The result is serial SGD with
 * delayed, damped hot-feature updates, and it does not depend on the
 * thread count either. With hot == 0 nothing is delayed and the model is
 * serial SGD's over the same order, bit for bit.
 *
 * Row weights v_i (docs/TRAINING.md, "Weights"): the cold step is the
 * kernel's weighted split step (v_i loss'), and the hot sums take
 * v_i loss'_i and v_i h_i, the weighted loss's gradient and curvature.
 *
 * Softmax (K classes, core/softmax.h): row i's loss derivative is the K
 * score gradient g_i = p_i - e_{y_i} (times v_i), and the K weights of a
 * hot feature j take one step together, with the K sums
 * G_jc = sum_i g_ic x_ij and AdaGrad's group increment
 * S_j = sum_i x_ij^2 |g_i|^2 (the kernel's one accumulator per feature).
 * The batch loss's Hessian over the hot weights is
 * sum_i v_i x_i,hot x_i,hot^T (x) (diag(p_i) - p_i p_i^T), whose row (j, c)
 * has Gershgorin sum R_jc = sum_i |x_ij| h_ic |x_i,hot|_1 with
 * h_ic = 2 v_i p_ic (1 - p_ic) (the row sum of |diag(p) - p p^T|'s row c:
 * p_c (1 - p_c) on the diagonal, p_c sum_{d != c} p_d = p_c (1 - p_c) off
 * it); so each G_jc is divided by max(1, eta_j R_jc), the binary rule per
 * class, with eta_j the group's step size.
 */
#include "cyclades/internal.h"

#include "core/loss.h"

#include <math.h>

#define CYC_PREFETCH 16 /* hot steps ahead whose weights are fetched */

/* Each phase of a batch (rows, hot weights) offers G groups in claim order;
 * every thread takes tickets from one shared counter until a ticket falls
 * past the phase's groups. Each thread thus takes exactly one ticket too
 * many per phase, so a phase uses G + T tickets and every thread knows
 * where the next phase's start (*base) without resetting the counter; the
 * barrier after each phase keeps phases apart. Ticket k of a phase is
 * group slot k: the heaviest groups go first, and a thread that was
 * descheduled costs the others only the group it holds. */
static inline bool cyc_claim(struct cyc *c, uint64_t *base, uint32_t *slot)
{
    uint64_t k = atomic_fetch_add_explicit(&c->claim, 1, memory_order_relaxed) -
                 *base;
    if (k < c->G) {
        *slot = (uint32_t)k;
        return true;
    }
    *base += c->G + c->T;
    return false;
}

/* A row's curvature bound at the batch's start, from its loss derivative
 * d: the logistic loss's second derivative there, sigma(m) (1 - sigma(m)) =
 * |d| (1 - |d|) (its bound 1/4 holds at m = 0 only, and damped well fitted
 * text features for nothing); otherwise the loss's bound c->curv. */
static inline double hot_curv(const struct cyc *c, double d)
{
    if (c->s.loss != HOG_LOSS_LOGISTIC)
        return c->curv;
    double a = fabs(d);
    return a * (1.0 - a);
}

/* A hot weight's damped gradient (the rule in the comment at the top of
 * this file): G / max(1, eta_j R_j), R_j = sum_i |x_ij| h_i |x_i,hot|_1
 * (r1), with eta_j the step size of the weight's step: eta_t for the
 * shared schedules (eta = eta_t), AdaGrad's eta / sqrt(eps + A + S) with A
 * the accumulator before the step and S the batch's sum of squared
 * gradients. Compared squared, so that an undamped weight costs no square
 * root. */
static inline double hot_damp(double g, double sq, double r1, double eta,
                              bool ada, const _Atomic float *g2, uint32_t j)
{
    double lim = eta * r1;
    if (!ada)
        return lim > 1.0 ? g / lim : g;
    double acc = HOG_ADAGRAD_EPS +
                 (double)hog_f_load(&g2[j]) + sq;
    return lim * lim > acc ? g * (sqrt(acc) / lim) : g;
}

/* After the rows of positions [lo + a, lo + z) of batch b: the group in
 * claim slot k sums the gradients of its hot weights in row order and
 * takes their step at t_end; when the segment goes on, the new values are
 * what rows read. Whoever runs it, each weight's step is the same. */
static void hot_group(struct cyc *c, struct cyc_thread *w, uint64_t b,
                      uint32_t k, uint64_t a, uint64_t z, uint32_t t_end)
{
    const unsigned G1 = c->G + 1;
    const bool ada = c->s.schedule == HOG_SCHED_ADAGRAD;
    const double eta = ada ? c->s.eta : c->s.seg_eta[t_end];
    const struct row_d *rd = c->rd;
    const uint64_t bs = c->s.n_features;
    if (c->bias_hot && c->bslot[b] == k) {
        double g = 0, sq = 0, r1 = 0;
        for (uint64_t i = a; i < z; i++) {
            g += rd[i].d;
            sq += rd[i].d * rd[i].d;
            r1 += rd[i].h;
        }
        const double bv = c->s.bias;
        g *= bv;
        sq *= bv * bv;
        g = hot_damp(g, sq, fabs(bv) * r1, eta, ada, c->s.g2, (uint32_t)bs);
        if (g != 0.0)
            hog_sgd_apply(&c->s, bs, t_end, g, sq);
    }
    uint64_t na = 0;
    const uint64_t rlo = c->roff[b * G1 + k], rhi = c->roff[b * G1 + k + 1];
    /* in locals: the stores to aj, ag and asq below may alias c as far as
     * the compiler knows, and would reload these on every record */
    const struct hot_rec *rec = c->rec;
    const struct hot_ent *ent = c->ent;
    const _Atomic float *wv = c->s.w, *g2 = c->s.g2;
    const _Atomic uint32_t *stamp = c->s.stamp;
    uint32_t *aj = w->aj;
    double *ag = w->ag, *asq = w->asq;
    for (uint64_t r = rlo; r < rhi; r++) {
        /* The weights this phase steps were read by the other threads'
         * rows since their owner last wrote them: fetch their lines for
         * writing well ahead, so that the misses overlap instead of
         * stalling the steps one by one. */
        if (r + CYC_PREFETCH < rhi) {
            uint32_t jp = rec[r + CYC_PREFETCH].j;
            __builtin_prefetch((const void *)&wv[jp], 1, 3);
            if (g2)
                __builtin_prefetch((const void *)&g2[jp], 1, 3);
            if (stamp)
                __builtin_prefetch((const void *)&stamp[jp], 1, 3);
        }
        const struct hot_rec *rc = &rec[r];
        const struct hot_ent *e = &ent[rc->start];
        double g = 0.0, sq = 0.0, r1 = 0.0;
        for (uint32_t q = 0; q < rc->count; q++) {
            uint32_t at = e[q].at;
            if (at < a || at >= z)
                continue;
            double x = e[q].x, gi = rd[at].d * x;
            g += gi;
            sq += gi * gi;
            r1 += fabs(x) * rd[at].h;
        }
        aj[na] = rc->j;
        ag[na] = hot_damp(g, sq, r1, eta, ada, g2, rc->j);
        asq[na] = sq;
        na += g != 0.0;
    }
    hog_sgd_apply_many(&c->s, aj, ag, ada ? asq : NULL, na, t_end);
}

/* hot_damp per class: the K sums g of a hot feature divided by
 * max(1, eta_j R_jc) (r: the K Gershgorin sums), eta_j the step's size:
 * eta_t, or AdaGrad's eta / sqrt(eps + A + S) of the feature's group
 * accumulator, one square root for the K classes. */
static void hot_damp_k(double *restrict g, const double *restrict r,
                       uint32_t K, double sq, double eta, bool ada,
                       const _Atomic float *g2, uint64_t j)
{
    /* eta_j = eta / root: compared as eta R_jc against root */
    const double root =
        ada ? sqrt(HOG_ADAGRAD_EPS +
                   (double)hog_f_load(&g2[j]) + sq)
            : 1.0;
    for (uint32_t k = 0; k < K; k++) {
        double lim = eta * r[k];
        g[k] = lim > root ? g[k] * (root / lim) : g[k];
    }
}

/* hot_group's softmax form: each hot weight of the group in claim slot k
 * (and the bias, when its group's) sums its K gradients, K Gershgorin
 * sums and AdaGrad increment over the rows of positions [lo + a, lo + z)
 * in row order, and its K weights take one step at t_end. A feature none
 * of those rows has keeps its stamp (no step, as the binary rule). */
static void hot_group_k(struct cyc *c, struct cyc_thread *w, uint64_t b,
                        uint32_t k, uint64_t a, uint64_t z, uint32_t t_end)
{
    const unsigned G1 = c->G + 1;
    const struct hog_softmax *km = &c->km;
    const uint32_t K = km->k;
    const bool ada = c->s.schedule == HOG_SCHED_ADAGRAD;
    const double eta = ada ? c->s.eta : c->s.seg_eta[t_end];
    const double *kd = c->kd, *kh = c->kh, *kq = c->kq;
    double *restrict gs = w->kg, *restrict rs = w->kg + K;
    if (c->bias_hot && c->bslot[b] == k && z > a) {
        const double bv = c->s.bias;
        double sq = 0;
        for (uint32_t q = 0; q < K; q++)
            gs[q] = rs[q] = 0.0;
        for (uint64_t i = a; i < z; i++) {
            for (uint32_t q = 0; q < K; q++) {
                gs[q] += kd[i * K + q];
                rs[q] += kh[i * K + q];
            }
            sq += kq[i];
        }
        for (uint32_t q = 0; q < K; q++) {
            gs[q] *= bv;
            rs[q] *= fabs(bv);
        }
        sq *= bv * bv;
        hot_damp_k(gs, rs, K, sq, eta, ada, km->g2, c->nf);
        hog_softmax_apply(km, w->kw.buf, c->nf, t_end, gs, sq);
    }
    const uint64_t rlo = c->roff[b * G1 + k], rhi = c->roff[b * G1 + k + 1];
    for (uint64_t r = rlo; r < rhi; r++) {
        /* the weights, sum and stamp of the feature CYC_PREFETCH records
         * ahead, for writing, as hot_group fetches them */
        if (r + CYC_PREFETCH < rhi) {
            uint64_t jp = c->rec[r + CYC_PREFETCH].j;
            const _Atomic float *wp = km->w + jp * K;
            __builtin_prefetch((const void *)wp, 1, 3);
            __builtin_prefetch((const void *)(wp + K - 1), 1, 3);
            if (km->g2)
                __builtin_prefetch((const void *)&km->g2[jp], 1, 3);
            if (km->stamp)
                __builtin_prefetch((const void *)&km->stamp[jp], 1, 3);
        }
        const struct hot_rec *rc = &c->rec[r];
        const struct hot_ent *e = &c->ent[rc->start];
        bool any = false;
        double sq = 0;
        for (uint32_t q = 0; q < K; q++)
            gs[q] = rs[q] = 0.0;
        for (uint32_t n = 0; n < rc->count; n++) {
            uint32_t at = e[n].at;
            if (at < a || at >= z)
                continue;
            const double x = e[n].x, ax = fabs(x);
            for (uint32_t q = 0; q < K; q++) {
                gs[q] += kd[(size_t)at * K + q] * x;
                rs[q] += kh[(size_t)at * K + q] * ax;
            }
            sq += x * x * kq[at];
            any = true;
        }
        if (!any)
            continue;
        hot_damp_k(gs, rs, K, sq, eta, ada, km->g2, rc->j);
        hog_softmax_apply(km, w->kw.buf, rc->j, t_end, gs, sq);
    }
}

/* The segment ends at a barrier: every weight brought up to date (threads
 * share the range), and thread 0 starts the next segment. */
static void end_segment(struct cyc *c, unsigned tid, unsigned T)
{
    struct hog_sgd *s = &c->s;
    if (c->softmax) {
        const uint64_t nw = c->km.nw;
        hog_softmax_end(&c->km, false, c->th[tid].kw.buf, nw * tid / T,
                        nw * (tid + 1) / T, (uint32_t)c->seg_len);
    } else {
        const uint64_t nw = s->n_weights;
        hog_sgd_catch_up_range(s, nw * tid / T, nw * (tid + 1) / T,
                               (uint32_t)c->seg_len);
    }
    hog_spin_barrier_wait(&c->bar);
    if (tid == 0) {
        c->t_global += c->seg_len;
        c->seg_lo += c->seg_len;
        if (c->seg_lo < c->n) {
            uint64_t left = c->n - c->seg_lo;
            c->seg_want = left < UINT32_MAX ? (uint32_t)left : UINT32_MAX;
            c->seg_len = hog_sgd_segment_begin(s, c->t_global, c->seg_want);
        }
    }
    hog_spin_barrier_wait(&c->bar);
}

/* Rows come in random order: fetch the offsets two rows ahead and the
 * first lines of the next row while this one computes, as the serial
 * trainer does (hog_sgd_run). cur: the group's list position. Always
 * inlined: GCC 12 takes a function whose only effects are prefetches for
 * a pure one and deletes its calls (the binary epochs ran 20-30% slower
 * while this was a plain static inline function: docs/CYCLADES.md). */
static ALWAYS_INLINE void
fetch_ahead(const struct cyc *c, uint64_t cur, uint64_t end)
{
    const struct hog_csr *cm = &c->cold;
    const bool hot = c->nh > 0;
    if (cur + 2 < end) {
        uint64_t r2 = c->perm[c->pos[cur + 2]];
        __builtin_prefetch(&cm->off[r2]);
        if (hot)
            __builtin_prefetch(&c->hot_off[r2]);
    }
    if (cur + 1 < end) {
        uint64_t r1 = c->perm[c->pos[cur + 1]], q1 = cm->off[r1];
        __builtin_prefetch(cm->idx + q1);
        __builtin_prefetch(cm->val + q1);
        __builtin_prefetch(&cm->y[r1]);
        if (hot) {
            uint64_t h1 = c->hot_off[r1];
            __builtin_prefetch(c->hot_j + h1);
            __builtin_prefetch(c->hot_x + h1);
        }
    }
}

/* rows_group's softmax form: each row's K-wide step (its hot entries' and,
 * when hot, the bias's weights read as they stood at the batch's start),
 * and for the hot phase its weighted score gradient, per-class curvature
 * bound times |x_hot|_1 and |g|^2 (the comment at the top). */
static void rows_group_k(struct cyc *c, struct cyc_thread *w, uint64_t b,
                         uint32_t k, uint64_t epos, uint64_t plim, bool first)
{
    const struct hog_softmax *km = &c->km;
    const uint32_t K = km->k;
    const struct hog_csr *cm = &c->cold;
    const bool hot = c->nh > 0;
    const float *const rw = c->d->row_w; /* NULL: every row weighs 1 */
    const uint64_t lo = b * c->B;
    uint64_t cur = first ? c->boff[b * c->G + k] : c->gcur[k];
    const uint64_t end = c->boff[b * c->G + k + 1];
    for (; cur < end && c->pos[cur] < plim; cur++) {
        fetch_ahead(c, cur, end);
        uint64_t p = c->pos[cur], row = c->perm[p];
        uint32_t t = (uint32_t)(epos + (p - lo) - c->seg_lo);
        struct hog_row hr = { 0 };
        if (hot) {
            uint64_t q = c->hot_off[row];
            hr = (struct hog_row){ c->hot_j + q, c->hot_x + q,
                                   (uint32_t)(c->hot_off[row + 1] - q), 0 };
        }
        const uint32_t y = c->cls[row];
        double ce = hog_softmax_split_step(km, &w->kw, hog_csr_row(cm, row),
                                           hr, c->bias_hot, y,
                                           rw ? rw + row : NULL, t);
        const double v = rw ? (double)rw[row] : 1.0;
        if (c->prog_loss) { /* the row scored before its step */
            c->prog_loss[p] = v * ce;
            c->prog_right[p] = hog_scores_argmax(w->kw.s, K) == y;
        }
        if (hot) {
            /* g is v (p - e_y): p back from it, where v != 0 */
            const double *g = w->kw.g;
            double *d = c->kd + (p - lo) * K, *h = c->kh + (p - lo) * K;
            const double l1 = c->pl1[p], inv = v != 0.0 ? 1.0 / v : 0.0;
            double sq = 0;
            for (uint32_t q = 0; q < K; q++) {
                double pc = g[q] * inv + (q == y);
                d[q] = g[q];
                h[q] = 2.0 * v * pc * (1.0 - pc) * l1;
                sq += g[q] * g[q];
            }
            c->kq[p - lo] = sq;
        }
    }
    c->gcur[k] = cur;
}

/* The rows of batch b's group in claim slot k at epoch positions below
 * plim, in permutation order, from where the group stopped (first: from its
 * start). Rows of other groups share no cold weight with these. */
static void rows_group(struct cyc *c, uint64_t b, uint32_t k, uint64_t epos,
                       uint64_t plim, bool first)
{
    struct hog_sgd *s = &c->s;
    hog_sgd_split_fn *step = c->step;
    const struct hog_csr *cm = &c->cold;
    const hog_loss loss = s->loss;
    const bool hot = c->nh > 0;
    const bool with_bias = !c->bias_hot;
    const float *const rw = c->d->row_w; /* NULL: every row weighs 1 */
    const double label_pos = s->label_pos, bias = s->bias;
    const uint64_t lo = b * c->B, bs = s->n_features;
    uint64_t cur = first ? c->boff[b * c->G + k] : c->gcur[k];
    const uint64_t end = c->boff[b * c->G + k + 1];
    for (; cur < end && c->pos[cur] < plim; cur++) {
        fetch_ahead(c, cur, end);
        uint64_t p = c->pos[cur], row = c->perm[p];
        uint32_t t = (uint32_t)(epos + (p - lo) - c->seg_lo);
        struct hog_row r = hog_csr_row(cm, row);
        double y = hog_loss_target(loss, label_pos, r.y);
        double mx = 0.0;
        if (hot) {
            uint64_t q = c->hot_off[row];
            mx = hog_sparse_dot_relaxed_n(s->w, c->hot_j + q, c->hot_x + q,
                                          c->hot_off[row + 1] - q, 0.0);
            if (c->bias_hot)
                mx += (double)hog_w_load_relaxed(s->w, bs) * bias;
        }
        const double v = rw ? (double)rw[row] : 1.0;
        double mg, dv = step(s, r, y, v, t, mx, with_bias, &mg);
        if (c->prog_loss) { /* the row scored before its step */
            c->prog_loss[p] = v * hog_loss_value(loss, s->loss_param, y, mg);
            c->prog_right[p] = (mg > 0) == (y > 0);
        }
        if (hot) {
            /* the weighted loss's gradient and curvature: v times the
             * row's (v = 1 changes no bit) */
            c->rd[p - lo] =
                (struct row_d){ v * dv, v * hot_curv(c, dv) * c->pl1[p] };
        }
    }
    c->gcur[k] = cur;
}

void hog_cyc_run_job(void *arg, unsigned tid, unsigned T)
{
    struct cyc *c = arg;
    const bool hot = c->nh > 0;
    struct cyc_thread *w = &c->th[tid];
    uint64_t base = 0; /* first ticket of this phase's claims */
    uint32_t k;

    cyc_prof_start(&w->prof, CYC_PROF_THREAD);
    uint64_t epos = c->start_epos; /* epoch position of the batch's first row */
    for (uint64_t bi = c->start_bi; bi < c->nb; bi++) {
        const uint64_t b = c->visit[bi], lo = b * c->B;

        const uint64_t len = min_u64(c->B, c->n - lo);
        for (uint64_t done = 0; done < len;) {
            const uint64_t seg_end = c->seg_lo + c->seg_len;
            const uint64_t sub = min_u64(len - done, seg_end - (epos + done));
            const uint64_t plim = lo + done + sub;
            /* the rows of [done, done + sub) of each claimed group; a
             * group's rows past a segment's end wait in gcur[k] for the
             * next sub-batch, whoever claims it then */
            while (cyc_claim(c, &base, &k))
                if (c->softmax)
                    rows_group_k(c, w, b, k, epos, plim, done == 0);
                else
                    rows_group(c, b, k, epos, plim, done == 0);
            cyc_prof_lap(&w->prof, CYC_P_ROWS, CYC_PROF_THREAD);
            /* the cancel flag, polled once the batch's rows are done and
             * published to every thread by the barriers that follow */
            if (tid == 0 && done + sub == len)
                atomic_store_explicit(&c->stop[bi & 1],
                                      hog_fit_cancelled(c->f),
                                      memory_order_relaxed);
            hog_spin_barrier_wait(&c->bar);
            cyc_prof_lap(&w->prof, CYC_P_ROWS_WAIT, CYC_PROF_THREAD);
            const bool seg_over = epos + done + sub == seg_end;
            if (hot) {
                uint32_t t_end = (uint32_t)(epos + done + sub - 1 - c->seg_lo);
                while (cyc_claim(c, &base, &k))
                    if (c->softmax)
                        hot_group_k(c, w, b, k, done, done + sub, t_end);
                    else
                        hot_group(c, w, b, k, done, done + sub, t_end);
                cyc_prof_lap(&w->prof, CYC_P_HOT, CYC_PROF_THREAD);
                hog_spin_barrier_wait(&c->bar);
                cyc_prof_lap(&w->prof, CYC_P_HOT_WAIT, CYC_PROF_THREAD);
            }
            done += sub;
            if (seg_over) {
                end_segment(c, tid, T);
                cyc_prof_lap(&w->prof, CYC_P_SEGMENT, CYC_PROF_THREAD);
            }
        }
        epos += len;
        if (tid == 0)
            c->f->tick(c->f, c->epoch, epos, c->n);
        /* A checkpoint when the batch crossed a multiple of `every` steps
         * (counted from the start of training: the same points however
         * the run was resumed), or when cancelled; the epoch's last batch
         * leaves both to the epoch's end. */
        uint64_t g = c->t_global + (epos - c->seg_lo);
        bool stop = atomic_load_explicit(&c->stop[bi & 1], memory_order_relaxed);
        bool ck = c->every && g / c->every != (g - len) / c->every;
        if (epos < c->n && (ck || stop)) {
            if (tid == 0)
                c->ck_st = hog_cyc_checkpoint(c, epos, stop);
            hog_spin_barrier_wait(&c->bar);
            if (c->ck_st != HOG_OK)
                return;
        }
        cyc_prof_lap(&w->prof, CYC_P_BETWEEN, CYC_PROF_THREAD);
    }
}
