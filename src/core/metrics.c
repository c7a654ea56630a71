/*
 * Metrics of a model on a data set, on several threads.
 *
 * The pass over the rows is cut into blocks of BLOCK_ROWS rows, a block
 * being the unit a thread claims and the unit of the partial sums: each
 * block sums its rows' losses in row order, and the blocks' sums are
 * added in block order at the end. The blocks do not depend on the thread
 * count, so neither does any bit of the result.
 *
 * The AUC ranks the scores exactly without a comparison sort: each score
 * becomes a 64-bit key whose unsigned order is the order of the doubles
 * (flip every bit of a negative number, only the sign bit of a positive
 * one; -0 taken as +0), the positives' keys and the negatives' keys are
 * sorted apart by an LSD radix sort (11-bit digits, six passes at most,
 * a pass whose digit is the same for every key skipped), and one merge of
 * the two walks the runs of equal scores in ascending order, as the
 * sorted array of all scores would: each run adds its positives times
 * the run's mean rank to the rank sum, in the same order and with the same
 * operands as the comparison sort it replaces, so the AUC is the same
 * double. O(n), two threads (one per class) when there are several.
 *
 * Row weights (d->row_w, docs/TRAINING.md "Weights"): the losses and the
 * squared errors are the weighted sums over n, (1/n) sum_i v_i loss_i, the
 * objective's loss term; accuracy, AUC, macro-F1 and the confusion count
 * rows, unweighted.
 */
#include "core/cross.h"
#include "core/metrics.h"

#include "core/forkjoin.h"
#include "core/loss.h"
#include "core/sparse.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_ROWS 4096u
/* Below this many rows a pass is not worth a thread's start. */
#define PAR_MIN_ROWS (4u * BLOCK_ROWS)

/* ---- exact ranks: radix sort on the doubles' bits ------------------------- */

enum { DIGIT_BITS = 11, DIGITS = 1 << DIGIT_BITS, PASSES = 6 };

static uint64_t score_key(double s)
{
    uint64_t u;
    if (s == 0.0)
        s = 0.0; /* -0 ties with +0, as == has it */
    memcpy(&u, &s, sizeof u);
    return u >> 63 ? ~u : u | (UINT64_C(1) << 63);
}

/* A NaN's key: above +inf's (positive NaN) or below -inf's (negative). */
static bool key_is_nan(uint64_t k)
{
    return k > UINT64_C(0xfff0000000000000) ||
           k < UINT64_C(0x000fffffffffffff);
}

struct radix_job {
    const double *scores; /* all n_all of them */
    const unsigned char *pos;
    uint64_t n_all;
    unsigned char want;      /* the class whose scores this job ranks */
    uint64_t *a, *tmp;       /* n keys; scratch of n */
    uint64_t n;
    uint64_t (*cnt)[DIGITS]; /* PASSES histograms */
    const uint64_t *sorted;  /* out: a or tmp */
};

/* The keys of one class's scores, sorted by a stable LSD radix sort; the
 * result lands in a or tmp. */
static void *radix_sort(void *arg)
{
    struct radix_job *j = arg;
    uint64_t *src = j->a, *dst = j->tmp, n = j->n;
    for (uint64_t i = 0, k = 0; i < j->n_all; i++)
        if ((j->pos[i] != 0) == j->want)
            src[k++] = score_key(j->scores[i]);
    memset(j->cnt, 0, PASSES * sizeof *j->cnt);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = src[i];
        for (unsigned p = 0; p < PASSES; p++)
            j->cnt[p][(k >> (p * DIGIT_BITS)) & (DIGITS - 1)]++;
    }
    for (unsigned p = 0; p < PASSES && n > 1; p++) {
        unsigned shift = p * DIGIT_BITS;
        uint64_t *c = j->cnt[p];
        if (c[(src[0] >> shift) & (DIGITS - 1)] == n)
            continue; /* one digit for all: the pass moves nothing */
        uint64_t sum = 0;
        for (unsigned d = 0; d < DIGITS; d++) {
            uint64_t x = c[d];
            c[d] = sum;
            sum += x;
        }
        for (uint64_t i = 0; i < n; i++)
            dst[c[(src[i] >> shift) & (DIGITS - 1)]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    j->sorted = src;
    return NULL;
}

hog_status hog_auc_threads(const double *scores, const unsigned char *pos,
                           uint64_t n, unsigned threads, double *auc,
                           hog_err *err)
{
    uint64_t n_pos = 0;
    for (uint64_t i = 0; i < n; i++)
        n_pos += pos[i] != 0;
    uint64_t n_neg = n - n_pos;
    *auc = NAN;
    if (n_pos == 0 || n_neg == 0)
        return HOG_OK;
    uint64_t *keys = malloc(2 * n * sizeof *keys);
    uint64_t (*cnt)[DIGITS] = malloc(2 * PASSES * sizeof *cnt);
    if (!keys || !cnt) {
        free(keys), free(cnt);
        return hog_errf(err, HOG_ENOMEM, "out of memory for the AUC of %llu "
                        "rows", (unsigned long long)n);
    }
    /* keys: the positives' then the negatives'; scratch behind them. */
    struct radix_job job[2] = {
        { scores, pos, n, 1, keys, keys + n, n_pos, cnt, NULL },
        { scores, pos, n, 0, keys + n_pos, keys + n + n_pos, n_neg,
          cnt + PASSES, NULL },
    };
    if (threads == 0)
        threads = hog_allowed_cpus();
    if (threads >= 2 && n >= PAR_MIN_ROWS) {
        hog_fork_join(job, sizeof *job, 2, radix_sort, HOG_FORK_CALLER_FIRST);
    } else {
        radix_sort(&job[0]);
        radix_sort(&job[1]);
    }
    const uint64_t *sp = job[0].sorted, *sn = job[1].sorted;

    /* Sum of the positives' ranks (1-based), tied scores sharing the mean
     * rank of their run; r counts the scores below the run. A NaN equals
     * nothing, itself included: a run of its own. */
    double rank_sum = 0.0;
    uint64_t i = 0, j = 0, r = 0;
    while (i < n_pos || j < n_neg) {
        bool from_pos = j == n_neg || (i < n_pos && sp[i] <= sn[j]);
        uint64_t k = from_pos ? sp[i] : sn[j], p = 0, g = 0;
        if (key_is_nan(k)) {
            p = from_pos;
            g = 1;
            i += from_pos;
            j += !from_pos;
        } else {
            while (i < n_pos && sp[i] == k)
                i++, p++;
            g = p;
            while (j < n_neg && sn[j] == k)
                j++, g++;
        }
        rank_sum += (double)p * (0.5 * (double)(r + 1 + r + g));
        r += g;
    }
    free(keys);
    free(cnt);
    double np = (double)n_pos, nn = (double)n_neg;
    *auc = (rank_sum - np * (np + 1) / 2) / (np * nn);
    return HOG_OK;
}

hog_status hog_auc(const double *scores, const unsigned char *pos, uint64_t n,
                   double *auc, hog_err *err)
{
    return hog_auc_threads(scores, pos, n, 1, auc, err);
}

/* ---- the pass over the rows ----------------------------------------------- */

struct pass {
    const hog_model *m;
    const hog_data *d;
    double *sc;
    unsigned char *pos;
    double *loss, *se;  /* per block */
    uint64_t *correct;  /* per block */
    uint64_t n_blocks;
    double bias, mid;
    bool cls;
    bool inside; /* d's features are all the model's */
    _Alignas(HOG_CACHELINE) _Atomic uint64_t next; /* the next block to claim */
};

static void pass_block(struct pass *p, uint64_t b, struct hog_cross_buf *xb)
{
    const hog_model *m = p->m;
    const struct hog_csr *x = &p->d->m;
    const uint64_t nf = m->n_features;
    uint64_t lo = b * BLOCK_ROWS, hi = lo + BLOCK_ROWS;
    if (hi > x->rows)
        hi = x->rows;
    double loss = 0, se = 0;
    uint64_t correct = 0;
    const float *rw = p->d->row_w;
    for (uint64_t i = lo; i < hi; i++) {
        struct hog_row r = hog_data_row(p->d, x, i, xb);
        const double v = rw ? (double)rw[i] : 1.0; /* the row's weight */
        /* the training set: every index has a weight, no bound test */
        double s = p->inside ? hog_sparse_dot_in(m->w, r, p->bias)
                             : hog_sparse_dot(m->w, nf, r, p->bias);
        double y = r.y;
        bool pos = y == m->label_pos;
        p->sc[i] = s;
        p->pos[i] = pos;
        double target = hog_loss_target(m->loss, m->label_pos, r.y);
        loss += v * hog_loss_value(m->loss, m->loss_param, target, s);
        double e = hog_loss_predict(m->loss, s) - y;
        se += v * (e * e);
        bool says_pos = p->cls ? s > 0 : s > p->mid;
        correct += says_pos == pos;
    }
    p->loss[b] = loss;
    p->se[b] = se;
    p->correct[b] = correct;
}

static void *pass_worker(void *arg)
{
    struct pass *p = *(void **)arg;
    struct hog_cross_buf xb;
    hog_err err;
    if (hog_cross_buf_init(&xb, p->d, &err) != HOG_OK)
        return p; /* the caller sees the blocks left and runs them */
    for (;;) {
        /* relaxed: a block's claim orders nothing; the fork-join's join
         * publishes the blocks' results */
        uint64_t b = atomic_fetch_add_explicit(&p->next, 1,
                                               memory_order_relaxed);
        if (b >= p->n_blocks)
            break;
        pass_block(p, b, &xb);
    }
    hog_cross_buf_free(&xb);
    return NULL;
}

/* Runs worker(&p) on up to `threads` threads (0: every allowed CPU; one
 * for a small set, never more than the nb blocks of the n rows), each
 * claiming blocks until none is left; returns the threads used. A block
 * left by a thread that could not start is the caller's to run after. */
static unsigned fork_blocks(void *p, unsigned threads, uint64_t n,
                            uint64_t nb, void *(*worker)(void *))
{
    if (threads == 0)
        threads = hog_allowed_cpus();
    if (n < PAR_MIN_ROWS)
        threads = 1;
    if (threads > nb)
        threads = (unsigned)nb;
    if (threads > 1) {
        void **items = malloc(threads * sizeof *items);
        if (items) {
            for (unsigned t = 0; t < threads; t++)
                items[t] = p;
            hog_fork_join(items, sizeof *items, threads, worker,
                          HOG_FORK_CALLER_FIRST);
            free(items);
        }
    }
    return threads;
}

/* ---- K classes ---------------------------------------------------------------- */

/* Row scores s of a row of class y (-1: a label the model lacks): the
 * multiclass log-loss, and the loss term of the objective. */
static void class_losses(const hog_model *m, const double *s, int64_t y,
                         double *logloss, double *obj)
{
    uint32_t k = m->n_classes;
    if (m->multiclass == HOG_MULTICLASS_SOFTMAX) {
        /* -log softmax(s)_y = log sum exp(s_c - top) - (s_y - top) */
        double top = s[hog_scores_argmax(s, k)], z = 0;
        for (uint32_t c = 0; c < k; c++)
            z += exp(s[c] - top);
        *logloss = *obj = log(z) - (s[y] - top);
        return;
    }
    double sum = 0, sig = 0;
    for (uint32_t c = 0; c < k; c++) {
        double t = (int64_t)c == y ? 1.0 : -1.0;
        sum += hog_loss_value(m->loss, m->loss_param, t, s[c]);
        if (m->loss == HOG_LOSS_LOGISTIC)
            sig += 1.0 / (1.0 + exp(-s[c]));
    }
    *obj = sum;
    /* -log(sigma(s_y) / sum sigma): log(sum) + log(1 + exp(-s_y)) */
    *logloss = m->loss == HOG_LOSS_LOGISTIC
                   ? log(sig) + hog_log1pexp_neg(s[y])
                   : sum;
}

struct mpass {
    const hog_model *m;
    const hog_data *d;
    struct hog_scorer sc;
    struct hog_class_index ix;
    int32_t *truth, *pred;  /* per row; truth -1: unknown label */
    double *ll, *obj;       /* per block */
    uint64_t n_blocks;
    _Alignas(HOG_CACHELINE) _Atomic uint64_t next;
};

static void mpass_block(struct mpass *p, uint64_t b, double *s,
                        struct hog_cross_buf *xb)
{
    const hog_model *m = p->m;
    const struct hog_csr *x = &p->d->m;
    uint64_t lo = b * BLOCK_ROWS, hi = lo + BLOCK_ROWS;
    if (hi > x->rows)
        hi = x->rows;
    double ll = 0, obj = 0;
    const float *rw = p->d->row_w;
    for (uint64_t i = lo; i < hi; i++) {
        struct hog_row r = hog_data_row(p->d, x, i, xb);
        const double v = rw ? (double)rw[i] : 1.0; /* the row's weight */
        hog_scorer_row(&p->sc, r, s);
        int64_t y = hog_class_index_find(&p->ix, r.y);
        p->truth[i] = (int32_t)y;
        p->pred[i] = (int32_t)hog_scores_argmax(s, m->n_classes);
        if (y >= 0) {
            double a, o;
            class_losses(m, s, y, &a, &o);
            ll += v * a;
            obj += v * o;
        }
    }
    p->ll[b] = ll;
    p->obj[b] = obj;
}

static void *mpass_worker(void *arg)
{
    struct mpass *p = *(void **)arg;
    double *s = malloc(p->m->n_classes * sizeof *s);
    struct hog_cross_buf xb;
    hog_err err;
    if (!s || hog_cross_buf_init(&xb, p->d, &err) != HOG_OK) {
        free(s);
        return p; /* the caller sees the blocks left and runs them */
    }
    for (;;) {
        /* relaxed: as pass_worker */
        uint64_t b = atomic_fetch_add_explicit(&p->next, 1,
                                               memory_order_relaxed);
        if (b >= p->n_blocks)
            break;
        mpass_block(p, b, s, &xb);
    }
    hog_cross_buf_free(&xb);
    free(s);
    return NULL;
}

static hog_status eval_classes(const hog_model *m, const hog_data *d,
                               unsigned threads, struct hog_metrics *out,
                               uint64_t *conf, hog_err *err)
{
    uint64_t n = d->m.rows, nb = (n + BLOCK_ROWS - 1) / BLOCK_ROWS;
    uint32_t k = m->n_classes;
    struct mpass *p = aligned_alloc(HOG_CACHELINE, sizeof *p);
    if (!p)
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    *p = (struct mpass){ .m = m, .d = d, .n_blocks = nb };
    atomic_init(&p->next, 0);
    hog_status st = hog_class_index_init(&p->ix, m->classes, k, err);
    if (st != HOG_OK) {
        free(p);
        return st;
    }
    hog_scorer_init(&p->sc, m, HOG_SCORER_CAP);
    p->truth = malloc(n * sizeof *p->truth);
    p->pred = malloc(n * sizeof *p->pred);
    p->ll = malloc(2 * nb * sizeof *p->ll);
    /* per class: true positives, predicted, actual */
    uint64_t *cnt = calloc(3 * (uint64_t)k, sizeof *cnt);
    double *s = malloc(k * sizeof *s);
    if (!p->truth || !p->pred || !p->ll || !cnt || !s) {
        st = hog_errf(err, HOG_ENOMEM, "out of memory for the metrics of "
                      "%llu rows", (unsigned long long)n);
        goto out;
    }
    p->obj = p->ll + nb;
    threads = fork_blocks(p, threads, n, nb, mpass_worker);
    struct hog_cross_buf xb;
    if ((st = hog_cross_buf_init(&xb, d, err)) != HOG_OK)
        goto out;
    for (uint64_t b; (b = atomic_fetch_add_explicit(&p->next, 1,
                                                    memory_order_relaxed)) <
                     nb;)
        mpass_block(p, b, s, &xb);
    hog_cross_buf_free(&xb);

    double ll = 0, obj = 0;
    for (uint64_t b = 0; b < nb; b++) {
        ll += p->ll[b];
        obj += p->obj[b];
    }
    uint64_t right = 0, known = 0;
    for (uint64_t i = 0; i < n; i++) {
        int32_t y = p->truth[i], q = p->pred[i];
        cnt[k + (uint64_t)q]++;
        if (y < 0)
            continue;
        known++;
        cnt[2 * (uint64_t)k + (uint64_t)y]++;
        if (y == q) {
            right++;
            cnt[y]++;
        }
        if (conf)
            conf[(uint64_t)y * k + (uint64_t)q]++;
    }
    /* F1 of a class = 2 tp / (predicted + actual); a class neither
     * predicted nor present counts 0, as scikit-learn's zero_division */
    double f1 = 0;
    for (uint32_t c = 0; c < k; c++) {
        uint64_t den = cnt[k + c] + cnt[2 * (uint64_t)k + c];
        f1 += den ? 2.0 * (double)cnt[c] / (double)den : 0.0;
    }
    out->accuracy = (double)right / (double)n;
    out->macro_f1 = f1 / k;
    out->loss = known ? ll / (double)known : NAN;
    out->obj_loss = known ? obj / (double)known : NAN;
    out->unknown = n - known;
out:
    hog_class_index_free(&p->ix);
    hog_scorer_free(&p->sc);
    free(p->truth);
    free(p->pred);
    free(p->ll);
    free(p);
    free(cnt);
    free(s);
    return st;
}

hog_status hog_metrics_confusion(const hog_model *m, const hog_data *d,
                                 uint64_t *conf, hog_err *err)
{
    uint64_t k = m->n_classes;
    memset(conf, 0, k * k * sizeof *conf);
    struct hog_metrics out;
    return eval_classes(m, d, 1, &out, conf, err);
}

hog_status hog_metrics_eval_threads(const hog_model *m, const hog_data *d,
                                    unsigned threads, struct hog_metrics *out,
                                    hog_err *err)
{
    if (m->n_classes) {
        *out = (struct hog_metrics){ NAN, NAN, NAN, NAN, NAN, NAN, 0 };
        return d->m.rows ? eval_classes(m, d, threads, out, NULL, err)
                         : HOG_OK;
    }
    *out = (struct hog_metrics){ NAN, NAN, NAN, NAN, NAN, NAN, 0 };
    uint64_t n = d->m.rows;
    if (n == 0)
        return HOG_OK;
    uint64_t nb = (n + BLOCK_ROWS - 1) / BLOCK_ROWS;
    double *sc = malloc(n * sizeof *sc);
    unsigned char *pos = malloc(n);
    double *part = malloc(2 * nb * sizeof *part);
    uint64_t *correct = malloc(nb * sizeof *correct);
    struct pass *p = aligned_alloc(HOG_CACHELINE, sizeof *p);
    hog_status st = HOG_OK;
    if (!sc || !pos || !part || !correct || !p) {
        st = hog_errf(err, HOG_ENOMEM, "out of memory for the scores of %llu "
                      "rows", (unsigned long long)n);
        goto out;
    }
    *p = (struct pass){
        .m = m, .d = d, .sc = sc, .pos = pos, .loss = part, .se = part + nb,
        .correct = correct, .n_blocks = nb, .bias = hog_model_bias(m),
        .mid = 0.5 * (m->label_pos + m->label_neg),
        .cls = hog_loss_is_classification(m->loss),
        .inside = d->n_features <= m->n_features,
    };
    atomic_init(&p->next, 0);
    threads = fork_blocks(p, threads, n, nb, pass_worker);
    if (pass_worker(&p) != NULL) { /* the lot with one thread, or what is left */
        st = hog_errf(err, HOG_ENOMEM, "out of memory for a row of %llu "
                      "entries with its crossed features",
                      (unsigned long long)d->cross_row_max);
        goto out;
    }

    double loss = 0, se = 0;
    uint64_t right = 0;
    for (uint64_t b = 0; b < nb; b++) {
        loss += p->loss[b];
        se += p->se[b];
        right += p->correct[b];
    }
    out->loss = out->obj_loss = loss / (double)n;
    if (!p->cls)
        out->rmse = sqrt(se / (double)n);
    if (m->labels == HOG_LABELS_BINARY) {
        out->accuracy = (double)right / (double)n;
        st = hog_auc_threads(sc, pos, n, threads, &out->auc, err);
    }
out:
    free(sc);
    free(pos);
    free(part);
    free(correct);
    free(p);
    return st;
}

hog_status hog_metrics_eval(const hog_model *m, const hog_data *d,
                            struct hog_metrics *out, hog_err *err)
{
    return hog_metrics_eval_threads(m, d, 1, out, err);
}

double hog_model_regularizer(const hog_model *m)
{
    uint64_t n = hog_model_len(m);
    double s2 = 0, s1 = 0;
    for (uint64_t j = 0; j < n; j++) {
        s2 += (double)m->w[j] * m->w[j];
        s1 += fabs((double)m->w[j]);
    }
    return 0.5 * m->l2 * s2 + m->l1 * s1;
}

uint64_t hog_model_nonzeros(const hog_model *m)
{
    uint64_t n = hog_model_len(m), nz = 0;
    for (uint64_t j = 0; j < n; j++)
        nz += m->w[j] != 0.0f;
    return nz;
}
