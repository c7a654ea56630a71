/*
 * Sparse SGD with lazy L1/L2 regularization.
 *
 * Objective (n rows, weights w including the bias weight, whose feature is
 * the constant opts.bias):
 *
 *     F(w) = (1/n) sum_i loss(y_i, w.x_i) + l2/2 |w|^2 + l1 |w|_1
 *
 * Step t on row x with margin m = w.x, d = loss'(y, m), step size eta_t:
 *
 *     w <- S_{b_t}( (1 - a_t) w - eta_t d x ),   a_t = eta_t l2,  b_t = eta_t l1
 *
 * for EVERY weight, where S_b(v) = sign(v) max(0, |v| - b) is the proximal
 * map of b|.|_1 (soft threshold; the "truncated gradient" of Langford et al.
 * 2009 and the SGD-L1 of Tsuruoka et al. 2009 are its cousins). This is the
 * dense, eager update; its cost is O(features) per step.
 *
 * Lazy form, O(nnz of the row) per step. A weight that is not in rows
 * k..t-1 only sees u -> max(0, (1 - a_s) u - b_s) on u = |w| (sign kept).
 * With 1 - a_s >= 0 the composition of these maps is again of that shape:
 *
 *     |w_t| = max(0, P |w_k| - Q),   P = prod_{s=k}^{t-1} (1 - a_s),
 *                                    Q = sum_{s=k}^{t-1} b_s prod_{r=s+1}^{t-1} (1 - a_r)
 *
 * (induction: if P u - Q < 0 both sides are 0 because b >= 0; otherwise the
 * max(0, .) of the inner map is the identity). With per-segment prefixes
 * q_s = 1 / prod_{r<s} (1 - a_r) and c_s = sum_{r<s} b_r q_{r+1}:
 *
 *     P = q_k / q_t,   Q = (c_t - c_k) / q_t,
 *     |w_t| = max(0, |w_k| q_k - (c_t - c_k)) / q_t.
 *
 * So each weight carries a timestamp (the first segment step whose
 * regularization it lacks); a step first brings the row's weights up to
 * date, then applies the step above to them only, which makes the lazy
 * weights EQUAL the eager ones (up to float rounding). The schedules
 * constant and inverse scaling depend on t only, so the prefixes of a whole
 * segment are computed up front (O(1) per step). A segment ends at the end
 * of an epoch, after HOG_SGD_SEG_MAX steps, or before 1/q would underflow
 * below HOG_SGD_PREFIX_MIN; hog_sgd_segment_end() then brings every weight
 * up to date (O(features)) and the stamps restart at 0.
 *
 * AdaGrad (Duchi, Hazan, Singer 2011): eta_{t,j} = eta / sqrt(eps + G_j),
 * G_j the sum of the squared loss gradients of coordinate j (the
 * regularizer's gradient is not accumulated). Between two touches G_j is
 * constant, so the prefixes are closed forms with a = min(1, eta_j l2),
 * b = eta_j l1 and k untouched steps: P = (1 - a)^k,
 * Q = b (1 - (1 - a)^k) / a (b k when a = 0). The clamp a <= 1 keeps the
 * composition valid where a young coordinate's step is large; the eager
 * reference in tests/test_sgd.c applies the same clamp.
 *
 * Several threads (Hogwild!). The kernel takes the step number t and reads
 * and writes weights, accumulators and stamps with relaxed atomics. A thread
 * works in its own virtual time (e.g. t = k T + thread for its k-th row, all
 * within the segment); the prefixes hold every step of the segment, so any
 * t may run at any moment. A stamp >= t means the weight is already current
 * (another thread ran further ahead): no catch-up, and the step adds its
 * gradient without shrinking again. A stamp only grows within a segment
 * (the update stores max(stamp, t + 1)). Two threads that catch up one
 * weight at once may shrink it twice and a racing store may lose an update:
 * the same lost-update noise Hogwild! accepts for the gradient itself.
 * hog_sgd_segment_end() must run with no step in flight.
 */
#include "core/sgd.h"

#include "core/loss.h"
#include "core/sparse.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define ALWAYS_INLINE inline __attribute__((always_inline))

hog_status hog_sgd_init(struct hog_sgd *s, const hog_train_opts *o,
                        const hog_data *train, hog_err *err)
{
    memset(s, 0, sizeof *s);
    s->loss = o->loss;
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
    s->seg_cap = s->rows < HOG_SGD_SEG_MAX ? (uint32_t)s->rows
                                           : HOG_SGD_SEG_MAX;
    if (s->schedule == HOG_SCHED_ADAGRAD)
        s->seg_cap = UINT32_MAX - 1;

    size_t nw = s->n_weights ? s->n_weights : 1;
    bool reg = s->l1 > 0 || s->l2 > 0;
    bool ok = (s->w = calloc(nw, sizeof *s->w)) != NULL;
    if (ok && reg)
        ok = (s->stamp = calloc(nw, sizeof *s->stamp)) != NULL;
    if (ok && s->schedule == HOG_SCHED_ADAGRAD)
        ok = (s->g2 = calloc(nw, sizeof *s->g2)) != NULL;
    if (ok && s->schedule != HOG_SCHED_ADAGRAD) {
        ok = (s->seg_eta = malloc(s->seg_cap * sizeof *s->seg_eta)) != NULL;
        if (ok && reg)
            ok = (s->pre = malloc(((size_t)s->seg_cap + 1) *
                                  sizeof *s->pre)) != NULL;
    }
    if (!ok) {
        hog_sgd_free(s);
        return hog_errf(err, HOG_ENOMEM,
                        "out of memory for the SGD state of %llu weights",
                        (unsigned long long)nw);
    }
    return HOG_OK;
}

void hog_sgd_free(struct hog_sgd *s)
{
    free(s->w);
    free(s->g2);
    free(s->stamp);
    free(s->pre);
    free(s->seg_eta);
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

uint32_t hog_sgd_segment_begin(struct hog_sgd *s, uint64_t t0, uint32_t want)
{
    if (want < 1)
        want = 1;
    if (want > s->seg_cap)
        want = s->seg_cap;
    s->seg_t0 = t0;
    s->seg_len = want;
    if (s->schedule == HOG_SCHED_ADAGRAD)
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
    return s->seg_len;
}

/* ---- per-coordinate maps ---------------------------------------------------- */

static inline float soft_threshold(double u, double b)
{
    if (u > b)
        return (float)(u - b);
    if (u < -b)
        return (float)(u + b);
    return 0.0f;
}

/* Weight v with stamp k brought to step t (prefix schedules); qt_inv and ct
 * are 1/q_t and c_t. */
static ALWAYS_INLINE float catch_up_prefix(const struct hog_sgd_prefix *pre,
                                           float v, uint32_t k, double qt_inv,
                                           double ct, bool l1)
{
    struct hog_sgd_prefix pk = pre[k];
    if (!l1)
        return (float)((double)v * pk.q * qt_inv);
    double u = fabs((double)v) * pk.q - (ct - pk.c);
    return u > 0 ? (float)copysign(u * qt_inv, (double)v) : 0.0f;
}

/* AdaGrad: k regularization steps at the coordinate's constant rate. */
static ALWAYS_INLINE float catch_up_adagrad(const struct hog_sgd *s, float v,
                                            float g2, uint32_t k)
{
    if (v == 0.0f)
        return 0.0f;
    double eta = s->eta / sqrt(HOG_ADAGRAD_EPS + (double)g2);
    double a = fmin(1.0, eta * s->l2), b = eta * s->l1;
    double p, q;
    if (a > 0) {
        double lg = (double)k * log1p(-a); /* -inf when a == 1: p = 0 */
        p = exp(lg);
        q = b * -expm1(lg) / a;
    } else {
        p = 1.0;
        q = b * (double)k;
    }
    double u = p * fabs((double)v) - q;
    return u > 0 ? (float)copysign(u, (double)v) : 0.0f;
}

static inline uint32_t stamp_load(const struct hog_sgd *s, uint64_t j)
{
    return atomic_load_explicit(&s->stamp[j], memory_order_relaxed);
}

static inline void stamp_store(const struct hog_sgd *s, uint64_t j, uint32_t v)
{
    atomic_store_explicit(&s->stamp[j], v, memory_order_relaxed);
}

/* ---- the row step ----------------------------------------------------------- */

/* The atomic mode installs each new weight with a compare-and-swap on the
 * value it was computed from and recomputes on failure, so no racing update
 * is lost; the other modes store (relaxed) and accept the loss (none) or
 * exclude racers by locks (striped, mutex). The value computed is the same
 * expression either way: one thread gets bit-identical weights. */
static ALWAYS_INLINE bool w_install(const struct hog_sgd *s, uint64_t j,
                                    float *old, float v, bool cas)
{
    if (!cas) {
        hog_w_store_relaxed(s->w, j, v);
        return true;
    }
    return atomic_compare_exchange_weak_explicit(
        &s->w[j], old, v, memory_order_relaxed, memory_order_relaxed);
}

/* Pass 1 for one coordinate: bring w[j] to step t, return it. */
static ALWAYS_INLINE float fetch(const struct hog_sgd *s, uint64_t j,
                                 uint32_t t, double qt_inv, double ct,
                                 bool ada, bool reg, bool l1, bool cas)
{
    float v = hog_w_load_relaxed(s->w, j);
    if (!reg)
        return v;
    for (;;) {
        uint32_t k = stamp_load(s, j);
        if (k >= t)
            return v;
        float nv = ada ? catch_up_adagrad(
                             s, v,
                             atomic_load_explicit(&s->g2[j],
                                                  memory_order_relaxed),
                             t - k)
                       : catch_up_prefix(s->pre, v, k, qt_inv, ct, l1);
        if (w_install(s, j, &v, nv, cas)) {
            stamp_store(s, j, t);
            return nv;
        }
    }
}

/* Pass 2 for one coordinate: the step t with loss gradient gj = d x_j
 * (prefix schedules: eta, shrink = 1 - eta l2, thr = eta l1). */
static ALWAYS_INLINE void update(const struct hog_sgd *s, uint64_t j,
                                 uint32_t t, double gj, double eta,
                                 double shrink, double thr, bool ada, bool reg,
                                 bool l1, bool cas)
{
    if (ada) {
        double g2 = (double)atomic_load_explicit(&s->g2[j],
                                                 memory_order_relaxed) +
                    gj * gj;
        atomic_store_explicit(&s->g2[j], (float)g2, memory_order_relaxed);
        eta = s->eta / sqrt(HOG_ADAGRAD_EPS + g2);
        shrink = 1.0 - fmin(1.0, eta * s->l2);
        thr = eta * s->l1;
    }
    float v = hog_w_load_relaxed(s->w, j);
    if (reg) {
        uint32_t k = stamp_load(s, j);
        if (k <= t) {
            for (;;) {
                double u = shrink * (double)v - eta * gj;
                if (w_install(s, j, &v,
                              l1 ? soft_threshold(u, thr) : (float)u, cas))
                    break;
            }
            stamp_store(s, j, t + 1);
            return;
        }
        /* A thread further ahead regularized this weight past step t. */
    }
    while (!w_install(s, j, &v, (float)((double)v - eta * gj), cas))
        ;
}

static ALWAYS_INLINE double step_impl(const struct hog_sgd *s,
                                      struct hog_row r, double y, uint32_t t,
                                      hog_loss loss, bool ada, bool reg,
                                      bool l1, bool cas)
{
    double qt_inv = 0, ct = 0;
    if (reg && !ada) {
        qt_inv = 1.0 / s->pre[t].q;
        ct = s->pre[t].c;
    }
    double m = 0.0;
    for (uint32_t k = 0; k < r.nnz; k++)
        m += (double)fetch(s, r.idx[k], t, qt_inv, ct, ada, reg, l1, cas) *
             r.val[k];
    const bool has_bias = s->bias != 0.0;
    if (has_bias)
        m += (double)fetch(s, s->n_features, t, qt_inv, ct, ada, reg, l1,
                           cas) *
             s->bias;

    double d = hog_loss_deriv(loss, y, m);
    if (d == 0.0)
        return m; /* step t's shrink stays pending in the stamps */
    double eta = 0, shrink = 1, thr = 0;
    if (!ada) {
        eta = s->seg_eta[t];
        shrink = 1.0 - eta * s->l2;
        thr = eta * s->l1;
    }
    for (uint32_t k = 0; k < r.nnz; k++)
        update(s, r.idx[k], t, d * r.val[k], eta, shrink, thr, ada, reg, l1,
               cas);
    if (has_bias)
        update(s, s->n_features, t, d * s->bias, eta, shrink, thr, ada, reg,
               l1, cas);
    return m;
}

/* ---- locks of the striped and mutex modes ----------------------------------- */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* A test-and-test-and-set spinlock that yields the CPU after a while (a
 * holder preempted on an oversubscribed machine must get to run). */
static inline void spin_lock(atomic_uint *l)
{
    for (unsigned spins = 0;;) {
        /* acquire: pairs with the release in spin_unlock(), so the previous
         * holder's weight stores are visible to this holder */
        if (!atomic_exchange_explicit(l, 1u, memory_order_acquire))
            return;
        while (atomic_load_explicit(l, memory_order_relaxed))
            if (++spins % 256 == 0)
                sched_yield();
            else
                cpu_relax();
    }
}

static inline void spin_unlock(atomic_uint *l)
{
    /* release: pairs with the acquire in spin_lock() */
    atomic_store_explicit(l, 0u, memory_order_release);
}

/* The row's stripes, each once, in ascending order (the indices ascend and
 * the bias weight comes last). */
static void lock_row(const struct hog_sgd *s, const struct hog_sgd_locks *l,
                     struct hog_row r, bool lock)
{
    if (l->mode == HOG_UPDATE_MUTEX) {
        if (lock)
            pthread_mutex_lock(l->mutex);
        else
            pthread_mutex_unlock(l->mutex);
        return;
    }
    uint64_t last = UINT64_MAX;
    for (uint32_t k = 0; k <= r.nnz; k++) {
        uint64_t j = k < r.nnz ? r.idx[k] : s->n_features;
        if (k == r.nnz && s->bias == 0.0)
            break;
        uint64_t st = j >> HOG_SGD_STRIPE_SHIFT;
        if (st == last)
            continue;
        last = st;
        if (lock)
            spin_lock(&l->stripe[st]);
        else
            spin_unlock(&l->stripe[st]);
    }
}

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

/* ---- the loops ---------------------------------------------------------------- */

/* l is NULL unless the mode locks (a test per row, outside the row's loops). */
static ALWAYS_INLINE void run_impl(const struct hog_sgd *s, const hog_data *d,
                                   const uint64_t *order, uint64_t count,
                                   uint32_t t, uint32_t stride,
                                   const struct hog_sgd_locks *l,
                                   hog_loss loss, bool ada, bool reg, bool l1,
                                   bool cas)
{
    const struct hog_csr *m = &d->m;
    const double pos = s->label_pos;
    for (uint64_t i = 0; i < count; i++, t += stride) {
        struct hog_row r = hog_csr_row(m, order[i]);
        double y = loss == HOG_LOSS_SQUARED ? (double)r.y
                   : (double)r.y == pos     ? 1.0
                                            : -1.0;
        if (HOG_UNLIKELY(l != NULL)) {
            lock_row(s, l, r, true);
            step_impl(s, r, y, t, loss, ada, reg, l1, cas);
            lock_row(s, l, r, false);
        } else {
            step_impl(s, r, y, t, loss, ada, reg, l1, cas);
        }
    }
}

/* One specialised loop per (loss, AdaGrad or not, regularization kind,
 * compare-and-swap or not). */
typedef void run_fn(const struct hog_sgd *, const hog_data *,
                    const uint64_t *, uint64_t, uint32_t, uint32_t,
                    const struct hog_sgd_locks *);

#define RUN_VARIANT(LOSS, ADA, REG, L1, CAS)                                  \
    static void run_##LOSS##_##ADA##REG##L1##CAS(                             \
        const struct hog_sgd *s, const hog_data *d, const uint64_t *order,    \
        uint64_t count, uint32_t t, uint32_t stride,                          \
        const struct hog_sgd_locks *l)                                        \
    {                                                                         \
        run_impl(s, d, order, count, t, stride, l, HOG_LOSS_##LOSS, ADA, REG, \
                 L1, CAS);                                                    \
    }
#define RUN_VARIANTS2(LOSS, CAS)                                              \
    RUN_VARIANT(LOSS, 0, 0, 0, CAS)                                           \
    RUN_VARIANT(LOSS, 0, 1, 0, CAS)                                           \
    RUN_VARIANT(LOSS, 0, 1, 1, CAS)                                           \
    RUN_VARIANT(LOSS, 1, 0, 0, CAS)                                           \
    RUN_VARIANT(LOSS, 1, 1, 0, CAS)                                           \
    RUN_VARIANT(LOSS, 1, 1, 1, CAS)
#define RUN_VARIANTS(LOSS) RUN_VARIANTS2(LOSS, 0) RUN_VARIANTS2(LOSS, 1)
RUN_VARIANTS(LOGISTIC)
RUN_VARIANTS(HINGE)
RUN_VARIANTS(SQHINGE)
RUN_VARIANTS(SQUARED)

#define RUN_ROW(LOSS)                                                         \
    { run_##LOSS##_0000, run_##LOSS##_0100, run_##LOSS##_0110,                \
      run_##LOSS##_1000, run_##LOSS##_1100, run_##LOSS##_1110,                \
      run_##LOSS##_0001, run_##LOSS##_0101, run_##LOSS##_0111,                \
      run_##LOSS##_1001, run_##LOSS##_1101, run_##LOSS##_1111 }
static run_fn *const run_table[4][12] = {
    [HOG_LOSS_LOGISTIC] = RUN_ROW(LOGISTIC),
    [HOG_LOSS_HINGE] = RUN_ROW(HINGE),
    [HOG_LOSS_SQHINGE] = RUN_ROW(SQHINGE),
    [HOG_LOSS_SQUARED] = RUN_ROW(SQUARED),
};

void hog_sgd_run_mode(const struct hog_sgd *s, const hog_data *d,
                      const uint64_t *order, uint64_t count, uint32_t t_first,
                      uint32_t t_stride, hog_update mode,
                      const struct hog_sgd_locks *l)
{
    int reg = s->l1 > 0 ? 2 : s->l2 > 0 ? 1 : 0;
    int ada = s->schedule == HOG_SCHED_ADAGRAD;
    int cas = mode == HOG_UPDATE_ATOMIC;
    bool locked = mode == HOG_UPDATE_STRIPED || mode == HOG_UPDATE_MUTEX;
    run_table[s->loss][6 * cas + 3 * ada + reg](s, d, order, count, t_first,
                                                 t_stride, locked ? l : NULL);
}

void hog_sgd_run(const struct hog_sgd *s, const hog_data *d,
                 const uint64_t *order, uint64_t count, uint32_t t_first,
                 uint32_t t_stride)
{
    hog_sgd_run_mode(s, d, order, count, t_first, t_stride, HOG_UPDATE_NONE,
                     NULL);
}

double hog_sgd_step(const struct hog_sgd *s, struct hog_row r, double y,
                    uint32_t t)
{
    bool reg = s->l1 > 0 || s->l2 > 0, l1 = s->l1 > 0;
    bool ada = s->schedule == HOG_SCHED_ADAGRAD;
    return step_impl(s, r, y, t, s->loss, ada, reg, l1, false);
}

/* ---- segment end -------------------------------------------------------------- */

void hog_sgd_catch_up_range(struct hog_sgd *s, uint64_t lo, uint64_t hi,
                            uint32_t len)
{
    if (!s->stamp)
        return;
    bool ada = s->schedule == HOG_SCHED_ADAGRAD, l1 = s->l1 > 0;
    double qt_inv = 0, ct = 0;
    if (!ada) {
        qt_inv = 1.0 / s->pre[len].q;
        ct = s->pre[len].c;
    }
    for (uint64_t j = lo; j < hi; j++) {
        uint32_t k = stamp_load(s, j);
        if (k < len) {
            float v = hog_w_load_relaxed(s->w, j);
            v = ada ? catch_up_adagrad(s, v,
                                       atomic_load_explicit(
                                           &s->g2[j], memory_order_relaxed),
                                       len - k)
                    : catch_up_prefix(s->pre, v, k, qt_inv, ct, l1);
            hog_w_store_relaxed(s->w, j, v);
        }
        stamp_store(s, j, 0);
    }
}

void hog_sgd_segment_end(struct hog_sgd *s, uint32_t len)
{
    hog_sgd_catch_up_range(s, 0, s->n_weights, len);
}

void hog_sgd_copy_weights(const struct hog_sgd *s, float *out)
{
    for (uint64_t j = 0; j < s->n_weights; j++)
        out[j] = hog_w_load_relaxed(s->w, j);
}
