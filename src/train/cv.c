/*
 * K-fold cross-validation (hog_cross_validate; LIBLINEAR's -v): the rows
 * dealt into K stratified folds once (split.c, seeded by o->seed), then
 * for each fold k a model trained by hog_train() on the other folds' rows
 * and scored on fold k's. A fold's problem is LIBLINEAR's subproblem: with
 * o->C its strength is 1/(C n_k), n_k its training rows, as LIBLINEAR's
 * cross_validation trains its subproblems at the same C.
 *
 * Threads, as one-vs-rest's classes (spread.c): with at least as many
 * folds as threads the folds spread over the threads, each fold's
 * training and scoring on one thread (unpinned), no weight shared; else
 * the folds one after another, each on all threads. An algorithm that
 * trains on one thread only (serial) spreads its folds over the threads
 * whenever there are several: as many folds at a time as threads. Either way a fold's
 * model is hog_train's with the fold's options, so a deterministic
 * algorithm (serial; cyclades; scd and dcd on one thread) gives the same
 * figures bit for bit for the same seed.
 *
 * Memory: each fold's training and validation rows are copied out when the
 * fold starts and freed when it ends (split.c): one more data set per fold
 * in flight, so one with the folds in sequence and up to the thread count
 * when they spread.
 *
 * The figures: accuracy over every row (each row is scored once, by the
 * model that did not see it: LIBLINEAR's "Cross Validation Accuracy"),
 * RMSE over every row likewise, the folds' mean AUC, macro-F1 and loss,
 * and the sample standard deviation of each over the folds.
 *
 * The search of C (search_c.c) keeps a cross-validation open across its C
 * values (hog_cv_open, hog_cv_run): the same folds for every C, and each
 * fold's model of one C the warm start of the next.
 */
#include "train/train.h"

#include "core/metrics.h"
#include "gpu/gpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hog_cv {
    const hog_data *d;
    unsigned folds;
    uint32_t *fold;     /* each row's fold */
    hog_model **model;  /* each fold's last model (keep_models), or NULL */
};

/* One run over the folds. */
struct cv_run {
    struct hog_cv *cv;
    hog_train_opts sub; /* every fold's options */
    hog_train_hooks hooks; /* and hooks */
    bool warm;
    hog_cv_fold *res;   /* folds entries */
};

hog_status hog_cv_open(const hog_data *d, const hog_train_opts *o,
                       unsigned folds, bool keep_models, struct hog_cv **out,
                       hog_err *err)
{
    *out = NULL;
    if (!d || d->m.rows == 0)
        return hog_errf(err, HOG_EINVAL, "cross-validation needs training "
                        "data with rows");
    if (folds < 2 || folds > HOG_CV_MAX_FOLDS || folds > d->m.rows)
        return hog_errf(err, HOG_EINVAL, "cross-validation takes 2 to %u "
                        "folds, at most one per row (%llu rows), not %u",
                        HOG_CV_MAX_FOLDS, (unsigned long long)d->m.rows,
                        folds);
    if (hog_gpu_requested(o))
        return hog_errf(err, HOG_ENOTSUP, "cross-validation trains its folds "
                        "on the CPUs (several at once); drop --gpus");
    struct hog_cv *cv = calloc(1, sizeof *cv);
    if (!cv || !(cv->fold = malloc(d->m.rows * sizeof *cv->fold)) ||
        (keep_models && !(cv->model = calloc(folds, sizeof *cv->model)))) {
        hog_cv_close(cv);
        return hog_errf(err, HOG_ENOMEM, "out of memory for the folds of "
                        "%llu rows", (unsigned long long)d->m.rows);
    }
    cv->d = d;
    cv->folds = folds;
    hog_status st = hog_split_folds(d, o->loss, folds, o->seed, cv->fold, err);
    if (st != HOG_OK) {
        hog_cv_close(cv);
        return st;
    }
    *out = cv;
    return HOG_OK;
}

void hog_cv_close(struct hog_cv *cv)
{
    if (!cv)
        return;
    for (unsigned k = 0; cv->model && k < cv->folds; k++)
        hog_model_free(cv->model[k]);
    free(cv->model);
    free(cv->fold);
    free(cv);
}

/* The row weights w of the rows outside fold k, in their order: those of
 * its training copy (hog_data_subset). */
static hog_status fold_weights(const struct hog_cv *cv, const float *w,
                               uint32_t k, uint64_t rows, float **out,
                               hog_err *err)
{
    float *v = malloc((rows ? rows : 1) * sizeof *v);
    if (!v)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the row weights "
                        "of a fold of %llu rows", (unsigned long long)rows);
    uint64_t r = 0;
    for (uint64_t i = 0; i < cv->d->m.rows; i++)
        if (cv->fold[i] != k)
            v[r++] = w[i];
    *out = v;
    return HOG_OK;
}

/* Fold k: its copies of the rows and of their weights, its model, its
 * scores (every validation row counts once, as LIBLINEAR's -v). */
static hog_status fold_job(void *ctx, uint32_t k, unsigned worker,
                           hog_err *err)
{
    struct cv_run *r = ctx;
    struct hog_cv *cv = r->cv;
    hog_cv_fold *out = &r->res[k];
    (void)worker;
    hog_data *tr = NULL, *va = NULL;
    hog_model *m = NULL;
    float *rw = NULL;
    hog_status st;
    if ((st = hog_data_subset(cv->d, cv->fold, k, true, &tr, err)) != HOG_OK ||
        (st = hog_data_subset(cv->d, cv->fold, k, false, &va, err)) != HOG_OK ||
        (r->sub.row_weights &&
         (st = fold_weights(cv, r->sub.row_weights, k, tr->m.rows, &rw,
                            err)) != HOG_OK))
        goto out;
    hog_train_opts o = r->sub;
    o.row_weights = rw;
    if (r->warm && cv->model && cv->model[k])
        o.warm_start = cv->model[k];
    double t0 = hog_now();
    if ((st = hog_train(tr, NULL, &o, &r->hooks, &m, err)) != HOG_OK) {
        char why[HOG_ERR_MAX];
        snprintf(why, sizeof why, "%s", err->msg);
        hog_errf(err, st, "fold %u of %u: %s", k + 1, cv->folds, why);
        goto out;
    }
    out->seconds = hog_now() - t0;
    struct hog_metrics mt;
    if ((st = hog_metrics_eval_threads(m, va, o.threads, &mt, err)) != HOG_OK)
        goto out;
    out->train_rows = tr->m.rows;
    out->valid_rows = va->m.rows;
    out->loss = mt.loss;
    out->accuracy = mt.accuracy;
    out->auc = mt.auc;
    out->rmse = mt.rmse;
    out->macro_f1 = mt.macro_f1;
    if (cv->model) { /* the next run's warm start */
        hog_model_free(cv->model[k]);
        cv->model[k] = m;
        m = NULL;
    }
out:
    hog_model_free(m);
    hog_data_free(tr);
    hog_data_free(va);
    free(rw);
    return st;
}

/* One figure (the double at `field` of each fold) over the folds whose
 * value is finite: the mean weighted by the folds' rows (by_rows; with
 * squared, the root of the row-weighted mean square: an RMSE over every
 * row) or the plain mean, NaN when no fold has one; and *sd, the sample
 * standard deviation of the folds' values (NaN below two folds). */
static void mean_sd(const hog_cv_fold *f, unsigned n, size_t field,
                    bool by_rows, bool squared, double *mean, double *sd)
{
    double sw = 0, s = 0, s2 = 0;
    unsigned m = 0;
    for (unsigned k = 0; k < n; k++) {
        double v = *(const double *)((const char *)&f[k] + field);
        if (!isfinite(v))
            continue;
        double w = by_rows ? (double)f[k].valid_rows : 1.0;
        sw += w;
        s += w * (squared ? v * v : v);
        s2 += v * v;
        m++;
    }
    if (m == 0) {
        *mean = *sd = NAN;
        return;
    }
    *mean = squared ? sqrt(s / sw) : s / sw;
    /* the folds' spread, unweighted */
    double plain = 0;
    for (unsigned k = 0; k < n; k++) {
        double v = *(const double *)((const char *)&f[k] + field);
        if (isfinite(v))
            plain += v;
    }
    plain /= m;
    *sd = m > 1 ? sqrt(fmax(0.0, (s2 - m * plain * plain) / (m - 1))) : NAN;
}

hog_status hog_cv_run(struct hog_cv *cv, const hog_train_opts *o,
                      const hog_train_hooks *h, bool warm,
                      hog_cv_result *res, hog_err *err)
{
    double t0 = hog_now();
    unsigned K = cv->folds;
    hog_cv_fold *fold = res->fold ? res->fold : calloc(K, sizeof *fold);
    struct cv_run *r = malloc(sizeof *r);
    if (!fold || !r) {
        if (!res->fold)
            free(fold);
        free(r);
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    }
    for (unsigned k = 0; k < K; k++)
        fold[k] = (hog_cv_fold){ 0, 0, NAN, NAN, NAN, NAN, NAN, NAN };
    unsigned workers = hog_train_spread_workers(o, K);
    const struct hog_algo_row *row = hog_algo_row(o->algo);
    if (workers == 1 && row && !(row->caps & HOG_CAP_THREADS)) {
        unsigned t = hog_train_threads(o);
        workers = t < K ? t : K;
    }
    r->cv = cv;
    r->sub = *o;
    r->warm = warm;
    r->res = fold;
    if (workers > 1) { /* each fold on one thread of its own, unpinned */
        r->sub.threads = 1;
        r->sub.bind = "none";
    }
    /* no per-epoch figures from the folds; each fold's figures are the
     * scores below */
    r->hooks = *h;
    r->hooks.progress = NULL;
    r->hooks.cyclades_stats = NULL;
    r->hooks.hot_stats = NULL;
    r->hooks.stream_stats = NULL;
    r->hooks.valid_stats = NULL;
    r->sub.warm_start = NULL;
    hog_status st = hog_train_spread(K, workers, fold_job, r, err);
    free(r);
    if (st == HOG_OK) {
        res->folds = K;
        res->parallel = workers;
        mean_sd(fold, K, offsetof(hog_cv_fold, accuracy), true, false,
                &res->accuracy, &res->accuracy_sd);
        mean_sd(fold, K, offsetof(hog_cv_fold, rmse), true, true, &res->rmse,
                &res->rmse_sd);
        mean_sd(fold, K, offsetof(hog_cv_fold, auc), false, false, &res->auc,
                &res->auc_sd);
        mean_sd(fold, K, offsetof(hog_cv_fold, macro_f1), false, false,
                &res->macro_f1, &res->macro_f1_sd);
        mean_sd(fold, K, offsetof(hog_cv_fold, loss), false, false,
                &res->loss, &res->loss_sd);
        res->seconds = hog_now() - t0;
    }
    if (!res->fold)
        free(fold);
    return st;
}

hog_status hog_cross_validate(const hog_data *d, const hog_train_opts *user,
                              const hog_train_hooks *user_h, unsigned folds,
                              hog_cv_result *res, hog_err *err)
{
    hog_train_opts o;
    hog_train_hooks h;
    hog_status st = hog_train_hooks_take(user_h, &h, err);
    if (st != HOG_OK || (st = hog_train_opts_take(user, &h, &o, err)) != HOG_OK)
        return st;
    if (!res)
        return hog_errf(err, HOG_EINVAL, "no result to fill");
    hog_cv_result r;
    if ((st = hog_out_take(&r, res, sizeof r, "hog_cv_result", err)) != HOG_OK)
        return st;
    /* the caller's fold array (NULL when its size ends before it), the
     * figures zero until they are known */
    r = (hog_cv_result){ .size = sizeof r, .fold = r.fold };
    struct hog_cv *cv;
    if ((st = hog_cv_open(d, &o, folds, false, &cv, err)) != HOG_OK)
        return st;
    st = hog_cv_run(cv, &o, &h, false, &r, err);
    hog_cv_close(cv);
    hog_out_give(res, &r, sizeof r);
    return st;
}
