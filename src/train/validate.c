/*
 * The options checked against the training data before anything is
 * allocated: each refusal one sentence naming the option and what to do.
 * What options mean together is the conflicts' table's (conflicts.c).
 */
#include "train/train.h"

#include "core/loss.h"
#include "gpu/gpu.h"

#include <math.h>

/* The Poisson loss's labels are counts (rates): exp(m) - y m has no
 * minimum for y < 0. A stream's rows are checked only through its
 * summary's two labels, where it has them. */
static hog_status poisson_labels(const hog_data *train, hog_err *err)
{
    const float *y = train->m.y;
    for (uint64_t i = 0; y && i < train->m.rows; i++)
        if (!(y[i] >= 0))
            return hog_errf(err, HOG_EINVAL, "the Poisson loss needs labels "
                            ">= 0 (counts or rates), and training row %llu's "
                            "is %g", (unsigned long long)i + 1, (double)y[i]);
    if (!y && train->labels == HOG_LABELS_BINARY &&
        !(train->label_pos >= 0 && train->label_neg >= 0))
        return hog_errf(err, HOG_EINVAL, "the Poisson loss needs labels >= 0 "
                        "(counts or rates), and the training labels include "
                        "%g", train->label_pos < 0 ? train->label_pos
                                                  : train->label_neg);
    return HOG_OK;
}

static hog_status validate(const hog_train_opts *o, const hog_train_hooks *h,
                           const hog_data *train, bool stream, hog_err *err)
{
    if (!hog_algo_row(o->algo))
        return hog_errf(err, HOG_EINVAL, "unknown algorithm %d",
                        (int)o->algo);
    if (hog_gpu_requested(o)) {
        struct hog_gpu_opts g;
        hog_status st = hog_gpu_opts_from(o, &g, err);
        if (st != HOG_OK)
            return st;
    }
    /* GPU replicas are a trainer of their own (o->algo unused). */
    if (!hog_train_gpu_replicas(o)) {
        unsigned used = hog_train_opts_caps(o, h);
        /* one-vs-rest spreads the classes over the threads of any
         * algorithm */
        if (hog_train_is_multiclass(o, train) &&
            o->multiclass == HOG_MULTICLASS_OVR)
            used &= ~(unsigned)HOG_CAP_THREADS;
        if (train && train->cross.n)
            used |= HOG_CAP_INTERACTIONS;
        /* --algo auto took the threads for whichever trainer it chose */
        if (h && h->auto_stats && h->auto_stats->chosen)
            used &= ~(unsigned)(HOG_CAP_THREADS | HOG_CAP_BIND);
        hog_status st = hog_algo_check(o->algo, used, err);
        if (st != HOG_OK)
            return st;
    }
    struct hog_conflict_ctx c;
    hog_conflict_ctx_of(&c, o, h, train, stream);
    hog_status cst = hog_train_conflicts_check(&c, err);
    if (cst != HOG_OK)
        return cst;
    if (!train)
        return hog_errf(err, HOG_EINVAL, "no training data");
    if (train->m.rows == 0)
        return hog_errf(err, HOG_EINVAL, "the training data has no rows");
    if (!hog_train_is_multiclass(o, train) &&
        hog_loss_is_classification(o->loss) &&
        train->labels == HOG_LABELS_BINARY &&
        (train->n_pos == 0 || train->n_pos == train->m.rows)) {
        /* from the summary, not y: a streamed file has only its header */
        return hog_errf(err, HOG_EINVAL,
                        "the training labels take one value only (%g): a "
                        "classifier needs at least two classes",
                        train->n_pos ? train->label_pos : train->label_neg);
    }
    if (o->loss == HOG_LOSS_POISSON) {
        hog_status st = poisson_labels(train, err);
        if (st != HOG_OK)
            return st;
    }
    if (hog_train_weighted(o)) {
        hog_status st = hog_train_row_weights(o, train, NULL, err);
        if (st != HOG_OK)
            return st;
    }
    /* The loaders refuse wider data naming the file; this is for data
     * built through the API. */
    if (train->n_features > HOG_MAX_FEATURES)
        return hog_errf(err, HOG_EINVAL, "the training data has %llu "
                        "features, more than hogtrain supports (%llu)",
                        (unsigned long long)train->n_features,
                        (unsigned long long)HOG_MAX_FEATURES);
    return hog_train_check_memory(o, train, 0, err);
}

/* Each option's type and range are the options' table's to check
 * (options.c, hog_train_opts_resolve, run by every entry point before
 * this); the options together are the conflicts' table's (conflicts.c);
 * here the algorithm, then the data. */
hog_status hog_train_validate(const hog_train_opts *o,
                              const hog_train_hooks *h,
                              const hog_data *train, hog_err *err)
{
    return validate(o, h, train, false, err);
}

hog_status hog_train_validate_stream(const hog_train_opts *o,
                                     const hog_train_hooks *h,
                                     const hog_data *train, hog_err *err)
{
    return validate(o, h, train, true, err);
}
