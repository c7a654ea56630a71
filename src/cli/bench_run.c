/* hogtrain bench: one run of a cell (the epochs' log, the final metrics,
 * the time to the target objective), the median of a cell's runs, and
 * the memory system's pace for one core. */
#include "cli/bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_EPOCHS_KEPT 100000

struct run_log {
    unsigned n, cap;
    hog_epoch_stats *e;
    bool oom;
    /* progress on stderr */
    bool quiet;
    const char *label;
};

static void on_progress(void *ctx, unsigned epoch, unsigned epochs,
                        uint64_t done, uint64_t total,
                        const hog_epoch_stats *s)
{
    struct run_log *l = ctx;
    if (!s)
        return;
    if (l->n == l->cap) {
        unsigned cap = l->cap ? 2 * l->cap : 16;
        hog_epoch_stats *e = realloc(l->e, cap * sizeof *e);
        if (!e) {
            l->oom = true;
            return;
        }
        l->e = e;
        l->cap = cap;
    }
    l->e[l->n++] = *s;
    if (!l->quiet && isatty(STDERR_FILENO))
        fprintf(stderr, "\r  %-32s epoch %u/%u ", l->label, epoch, epochs);
}

static hog_status run_once(const hog_data *d, const hog_data *test,
                           const hog_train_opts *o, double target,
                           const char *label, bool quiet, struct result *r,
                           hog_err *err)
{
    struct run_log l = { .quiet = quiet, .label = label };
    r->hot = (hog_hot_stats){ .size = sizeof r->hot };
    hog_train_hooks h = { .size = sizeof h, .progress = on_progress,
                          .progress_ctx = &l, .hot_stats = &r->hot };
    hog_model *m = NULL;
    hog_status s = hog_train(d, test, o, &h, &m, err);
    hog_model_free(m);
    if (s == HOG_OK && (l.oom || l.n == 0))
        s = hog_errf(err, HOG_ENOMEM, "out of memory for the epoch log");
    if (s != HOG_OK) {
        free(l.e);
        return s;
    }
    const hog_epoch_stats *last = &l.e[l.n - 1];
    r->seconds = last->total_seconds;
    r->nnz_s = (double)hog_data_nnz(d) * l.n / last->total_seconds;
    r->objective = last->objective;
    bool reg = o->loss == HOG_LOSS_SQUARED;
    r->metric = last->has_test
                    ? (reg ? last->test_rmse : 100.0 * last->test_accuracy)
                    : (reg ? last->train_rmse : 100.0 * last->train_accuracy);
    if (isnan(target)) /* the baseline: its own final objective */
        target = last->objective;
    r->to_obj = INFINITY;
    for (unsigned i = 0; i < l.n; i++)
        if (l.e[i].objective <= target * (1.0 + 1e-3)) {
            r->to_obj = l.e[i].total_seconds;
            break;
        }
    r->syncs = last->replica_syncs;
    free(l.e);
    return HOG_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct result hog_cli_bench_median_of(const struct result *rs, unsigned k)
{
    double(*v)[4] = malloc(k * sizeof *v);
    struct result m = { 0 };
    if (!v)
        return m;
    double *col = (double *)v;
    for (unsigned i = 0; i < k; i++) {
        col[0 * k + i] = rs[i].nnz_s;
        col[1 * k + i] = rs[i].objective;
        col[2 * k + i] = rs[i].metric;
        col[3 * k + i] = rs[i].to_obj;
    }
    m.nnz_s = median(col, k);
    m.objective = median(col + k, k);
    m.metric = median(col + 2 * k, k);
    m.to_obj = median(col + 3 * k, k);
    free(v);
    m.syncs = rs[k - 1].syncs;
    m.hot = rs[k - 1].hot;
    for (unsigned i = 0; i < k; i++)
        m.seconds += rs[i].seconds / k;
    return m;
}

hog_status hog_cli_bench_run_cell(const struct bench_args *a, const hog_data *d,
                                  const hog_data *test, struct cell *c,
                                  unsigned rep, double target, hog_err *err)
{
    hog_train_opts o = a->o;
    char label[96];
    if (strcmp(c->algo, "serial") == 0) {
        o.algo = HOG_ALGO_SERIAL;
        o.threads = 0;
        snprintf(label, sizeof label, "serial");
    } else if (strcmp(c->algo, "cyclades") == 0) {
        o.algo = HOG_ALGO_CYCLADES;
        o.threads = c->threads;
        snprintf(label, sizeof label, "cyclades %u", c->threads);
    } else {
        o.algo = HOG_ALGO_HOGWILD;
        o.threads = c->threads;
        o.update = c->update;
        o.replicas = c->replicas;
        o.hot_features = c->hot;
        if (strcmp(c->algo, "control") == 0)
            o.sync_every = 0; /* private models, never averaged */
        snprintf(label, sizeof label, "%s %s %s %u", c->algo,
                 hog_cli_update_name(c->update), c->mode, c->threads);
    }
    return run_once(d, test, &o, target, label, a->quiet, &c->runs[rep], err);
}

double hog_cli_bench_stream_rate(const hog_data *d, unsigned repeat)
{
    const struct hog_csr *m = &d->m;
    double v[64];
    unsigned k = repeat < 64 ? repeat : 64;
    volatile double sink = 0;
    for (unsigned r = 0; r < k; r++) {
        uint64_t passes = 0;
        double t0 = hog_now(), t;
        do {
            uint64_t si = 0;
            double sv = 0;
            for (uint64_t i = m->off[0]; i < m->off[m->rows]; i++) {
                si += m->idx[i];
                sv += m->val[i];
            }
            sink += (double)si + sv;
            passes++;
        } while ((t = hog_now() - t0) < 0.3);
        v[r] = (double)m->nnz * passes / t;
    }
    (void)sink;
    return median(v, k);
}

double hog_cli_bench_load_avg(void)
{
    double l[1];
    return getloadavg(l, 1) == 1 ? l[0] : NAN;
}
