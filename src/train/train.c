/*
 * The training front door: options, dispatch to an algorithm, per-epoch
 * metrics and progress. The objective every algorithm minimises:
 *
 *     (1/n) sum_i loss(y_i, w.x_i + b) + l2/2 |w|^2 + l1 |w|_1
 *
 * with the bias b = w_bias * opts.bias a weight like the others when
 * opts.bias != 0 (LIBLINEAR's -B). docs/TRAINING.md maps it to LIBLINEAR.
 */
#include "train/train.h"

#include "train/checkpoint.h"

#include "core/fit.h"
#include "core/loss.h"
#include "core/metrics.h"
#include "cyclades/cyclades.h"
#include "gpu/gpu.h"
#include "coordinate/coordinate.h"
#include "hogwild/hogwild.h"

#include <math.h>
#include <string.h>

typedef hog_status algo_fn(struct hog_fit *f, hog_err *err);

/* A NULL run: not built yet. New algorithms plug in here. */
static const struct {
    const char *name;
    algo_fn *run;
} algos[] = {
    [HOG_ALGO_SERIAL] = { "serial", hog_serial_train },
    [HOG_ALGO_HOGWILD] = { "Hogwild!", hog_hogwild_train },
    [HOG_ALGO_CYCLADES] = { "Cyclades", hog_cyclades_train },
    [HOG_ALGO_SCD] = { "stochastic coordinate descent", hog_scd_train },
    [HOG_ALGO_DCD] = { "dual coordinate descent", hog_dcd_train },
};
#define N_ALGOS (sizeof algos / sizeof algos[0])

const char *hog_algo_name(hog_algo a)
{
    return (unsigned)a < N_ALGOS ? algos[a].name : "unknown";
}

/* AdaGrad's per-coordinate steps make one eta work across feature scales
 * (binary a9a, tf-idf news20, scaled ijcnn1); these etas reach LIBLINEAR's
 * test accuracy at C = 1 within one to three epochs on those sets
 * (docs/TRAINING.md). The squared loss takes larger steps because its
 * targets are not bounded by 1. */
void hog_train_opts_defaults_for_loss(hog_train_opts *o)
{
    o->schedule = HOG_SCHED_ADAGRAD;
    switch (o->loss) {
    case HOG_LOSS_LOGISTIC:
        o->eta = 0.3;
        break;
    case HOG_LOSS_HINGE:
    case HOG_LOSS_SQHINGE:
        o->eta = 0.1;
        break;
    case HOG_LOSS_SQUARED:
        o->eta = 1.0;
        break;
    }
}

void hog_train_opts_init(hog_train_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->loss = HOG_LOSS_LOGISTIC;
    o->l1 = 0.0;
    o->l2 = 1e-5;
    o->power = 0.5;
    o->bias = 1.0;
    o->epochs = 5;
    o->seed = 1;
    o->threads = 0;
    o->algo = HOG_ALGO_SERIAL;
    o->update = HOG_UPDATE_NONE;
    o->replicas = HOG_REPLICAS_SHARED;
    o->sync_every = 65536;
    o->hot = 1;
    o->tol = 0.01;
    hog_train_opts_defaults_for_loss(o);
}

static bool finite_nonneg(double x) { return isfinite(x) && x >= 0; }

hog_status hog_train_validate(const hog_train_opts *o, const hog_data *train,
                              hog_err *err)
{
    if ((unsigned)o->loss > HOG_LOSS_SQUARED)
        return hog_errf(err, HOG_EINVAL, "unknown loss %d", (int)o->loss);
    if (!(isfinite(o->eta) && o->eta > 0))
        return hog_errf(err, HOG_EINVAL,
                        "the step size eta must be a positive number, not %g",
                        o->eta);
    if (!finite_nonneg(o->l1) || !finite_nonneg(o->l2))
        return hog_errf(err, HOG_EINVAL,
                        "the regularization strengths must be zero or "
                        "positive, not l1 = %g, l2 = %g",
                        o->l1, o->l2);
    if ((unsigned)o->schedule > HOG_SCHED_ADAGRAD)
        return hog_errf(err, HOG_EINVAL, "unknown step schedule %d",
                        (int)o->schedule);
    /* The coordinate methods take no step size. */
    bool stepped = o->algo != HOG_ALGO_SCD && o->algo != HOG_ALGO_DCD;
    if (stepped && o->schedule != HOG_SCHED_ADAGRAD && o->eta * o->l2 >= 1.0)
        return hog_errf(err, HOG_EINVAL,
                        "eta * l2 = %g: each step would shrink the weights "
                        "past zero; use eta * l2 below 1",
                        o->eta * o->l2);
    if (!finite_nonneg(o->power))
        return hog_errf(err, HOG_EINVAL,
                        "the schedule's power must be zero or positive, "
                        "not %g",
                        o->power);
    if (!isfinite(o->bias))
        return hog_errf(err, HOG_EINVAL, "the bias must be a number, not %g",
                        o->bias);
    if (o->epochs < 1)
        return hog_errf(err, HOG_EINVAL, "epochs must be at least 1");
    if ((unsigned)o->algo >= N_ALGOS)
        return hog_errf(err, HOG_EINVAL, "unknown algorithm %d",
                        (int)o->algo);
    if ((unsigned)o->update > HOG_UPDATE_MUTEX)
        return hog_errf(err, HOG_EINVAL, "unknown update mode %d",
                        (int)o->update);
    if (hog_gpu_requested(o)) {
        struct hog_gpu_opts g;
        hog_status st = hog_gpu_opts_from(o, &g, err);
        if (st != HOG_OK)
            return st;
    }
    if (o->average && o->average_blocks == 0)
        return hog_errf(err, HOG_EINVAL, "model averaging needs at least one "
                        "block per epoch");
    if ((unsigned)o->replicas > HOG_REPLICAS_CORE)
        return hog_errf(err, HOG_EINVAL, "unknown replica mode %d",
                        (int)o->replicas);
    if (!finite_nonneg(o->tol))
        return hog_errf(err, HOG_EINVAL,
                        "the tolerance must be zero or positive, not %g",
                        o->tol);
    if (o->algo == HOG_ALGO_SCD || o->algo == HOG_ALGO_DCD) {
        hog_status st = hog_coord_validate(o, err);
        if (st != HOG_OK)
            return st;
    }
    if (!train)
        return hog_errf(err, HOG_EINVAL, "no training data");
    if (train->m.rows == 0)
        return hog_errf(err, HOG_EINVAL, "the training data has no rows");
    if (hog_loss_is_classification(o->loss) &&
        train->labels != HOG_LABELS_BINARY)
        return hog_errf(err, HOG_EINVAL,
                        "the %s loss needs two label values, but the "
                        "training labels take more (use the squared loss "
                        "for regression)",
                        hog_loss_name(o->loss));
    if (train->n_features > HOG_MAX_FEATURE_INDEX)
        return hog_errf(err, HOG_EINVAL, "%llu features is more than %llu",
                        (unsigned long long)train->n_features,
                        (unsigned long long)HOG_MAX_FEATURE_INDEX);
    return HOG_OK;
}

/* ---- hooks the algorithms call ------------------------------------------------ */

struct front {
    const hog_data *test;
    double total_seconds;
    double next_tick;
};

static void tick(struct hog_fit *f, unsigned epoch, uint64_t done,
                 uint64_t total)
{
    struct front *c = f->ctx;
    if (!f->o->progress || done >= total)
        return;
    double now = hog_now();
    if (now < c->next_tick)
        return;
    c->next_tick = now + 0.1;
    f->o->progress(f->o->progress_ctx, epoch, f->o->epochs, done, total,
                   NULL);
}

static hog_status epoch_end(struct hog_fit *f, unsigned epoch, double seconds,
                            hog_err *err)
{
    struct front *c = f->ctx;
    const hog_data *d = f->train;
    c->total_seconds += seconds;
    c->next_tick = hog_now() + 0.1;
    uint64_t nw = f->model->n_features + (f->model->bias != 0.0);
    for (uint64_t j = 0; j < nw; j++)
        if (!isfinite(f->model->w[j]))
            return hog_errf(err, HOG_ERANGE,
                            "training diverged in epoch %u (weight %llu is "
                            "%g); use a smaller step size than eta = %g",
                            epoch, (unsigned long long)j, f->model->w[j],
                            f->o->eta);
    if (!f->o->progress)
        return HOG_OK; /* nobody listens: no metrics to compute */

    hog_epoch_stats s;
    memset(&s, 0, sizeof s);
    s.epoch = epoch;
    s.seconds = seconds;
    s.total_seconds = c->total_seconds;
    s.rows_per_s = seconds > 0 ? (double)d->m.rows / seconds : NAN;
    s.nnz_per_s = seconds > 0 ? (double)d->m.nnz / seconds : NAN;
    s.nonzero_weights = hog_model_nonzeros(f->model);
    s.replica_syncs = f->replica_syncs;
    s.gap = f->gap;
    s.aux_bytes = f->aux_bytes;

    struct hog_metrics m;
    hog_status st = hog_metrics_eval(f->model, d, &m, err);
    if (st != HOG_OK)
        return st;
    s.objective = m.loss + hog_model_regularizer(f->model);
    s.train_loss = m.loss;
    s.train_accuracy = m.accuracy;
    s.train_auc = m.auc;
    s.train_rmse = m.rmse;
    s.test_loss = s.test_accuracy = s.test_auc = s.test_rmse = NAN;
    if (c->test) {
        st = hog_metrics_eval(f->model, c->test, &m, err);
        if (st != HOG_OK)
            return st;
        s.has_test = 1;
        s.test_loss = m.loss;
        s.test_accuracy = m.accuracy;
        s.test_auc = m.auc;
        s.test_rmse = m.rmse;
    }
    f->o->progress(f->o->progress_ctx, epoch, f->o->epochs, d->m.rows,
                   d->m.rows, &s);
    return HOG_OK;
}

/* ---- the front door ------------------------------------------------------------- */

hog_status hog_train(const hog_data *train, const hog_data *test,
                     const hog_train_opts *user, hog_model **out,
                     hog_err *err)
{
    *out = NULL;
    if (!user || user->size == 0 || user->size > sizeof(hog_train_opts))
        return hog_errf(err, HOG_EINVAL,
                        "the training options were not set up with "
                        "hog_train_opts_init()");
    /* A caller built against an older, shorter struct gets the defaults of
     * the fields it does not know. */
    hog_train_opts o;
    hog_train_opts_init(&o);
    memcpy(&o, user, user->size);
    o.size = sizeof o;
    hog_status st = hog_train_validate(&o, train, err);
    if (st != HOG_OK)
        return st;
    const bool gpu = hog_gpu_requested(&o);
    if (!gpu && !algos[o.algo].run)
        return hog_errf(err, HOG_ENOTSUP,
                        "the %s trainer is not built yet; use the serial one",
                        algos[o.algo].name);

    if (o.average && (gpu || o.algo != HOG_ALGO_SERIAL))
        return hog_errf(err, HOG_ENOTSUP,
                        "the %s trainer does not take part in model "
                        "averaging across processes yet; use --algo serial",
                        gpu ? "GPU" : algos[o.algo].name);

    hog_model *m;
    st = hog_model_new(train->n_features, o.loss, o.bias, &m, err);
    if (st != HOG_OK)
        return st;
    m->l1 = o.l1;
    m->l2 = o.l2;
    m->labels = hog_loss_is_classification(o.loss) ? HOG_LABELS_BINARY
                                                   : train->labels;
    m->label_pos = train->label_pos;
    m->label_neg = train->label_neg;

    struct front c = { test, 0.0, hog_now() + 0.1 };
    struct hog_fit f = { .train = train, .o = &o, .model = m,
                         .epoch_end = epoch_end, .tick = tick, .ctx = &c,
                         .replica_syncs = 0, .gap = NAN, .aux_bytes = 0 };
    /* GPUs asked for: the GPU replicas train, whatever o.algo says. */
    struct hog_ckpt_ctx ck;
    st = hog_train_ckpt_begin(&f, &ck, err);
    if (st == HOG_OK)
        st = gpu ? hog_gpu_train(&f, err) : algos[o.algo].run(&f, err);
    hog_train_ckpt_end(&ck);
    if (st != HOG_OK) {
        hog_model_free(m);
        return st;
    }
    *out = m;
    return HOG_OK;
}
