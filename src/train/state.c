/*
 * The optimizer's state a model keeps (hog_train_opts.save_state; core.h,
 * struct hog_opt_state), the front door's side: taken through the
 * checkpoints' save hook after the last epoch (the trainer's capture is
 * the checkpoints' own, core/sgd_state.c, at an epoch's end), and handed
 * back to the trainer as a completed epoch to resume from when a warm
 * start's model has one (fit.h, warm). One-vs-rest keeps each class's
 * state where its weights are: class c's sums at c times the vector
 * length, as in the model; softmax's per-feature AdaGrad sum stands in
 * each of its K weights' places alike (core/softmax.h, checkpoints).
 */
#include "train/train.h"

#include "core/fit.h"
#include "gpu/gpu.h"

#include <string.h>

/* Whether the trainer o runs takes a warm state: the serial trainer in
 * memory, one vector, one-vs-rest or softmax (hog_train_opts.save_state's
 * rows in conflicts.c). */
static bool takes_state(const hog_train_opts *o)
{
    return o->algo == HOG_ALGO_SERIAL && !hog_gpu_requested(o);
}

static const char *schedule_name(hog_schedule s)
{
    static const char *const name[] = { "constant", "invscaling", "adagrad",
                                        "ftrl" };
    return (unsigned)s < sizeof name / sizeof name[0] ? name[s] : "unknown";
}

hog_status hog_train_state_begin(struct hog_fit *f,
                                 struct hog_train_state *warm, hog_err *err)
{
    const hog_train_opts *o = f->o;
    hog_model *m = f->model;
    const hog_model *ws = o->warm_start;
    const struct hog_opt_state *ss = ws ? ws->state : NULL;
    if (f->init && ss && takes_state(o)) {
        if (ss->schedule != o->schedule)
            return hog_errf(err, HOG_EINVAL, "the warm start keeps the "
                            "optimizer state of --schedule %s and this run's "
                            "is %s: continue it with its own schedule "
                            "(--schedule %s)", schedule_name(ss->schedule),
                            schedule_name(o->schedule),
                            schedule_name(ss->schedule));
        memset(warm, 0, sizeof *warm);
        warm->epoch = ss->epochs;
        warm->t_global = ss->steps;
        warm->n_weights = hog_model_vector_len(m);
        warm->w = (float *)f->init;
        warm->ftrl_z = ss->a;
        warm->adagrad_g2 = ss->b;
        f->warm = warm;
    }
    if (!o->save_state)
        return HOG_OK;
    if (!(m->state = hog_opt_state_new(o->schedule, hog_model_len(m))))
        return hog_errf(err, HOG_ENOMEM, "out of memory for the optimizer "
                        "state of %llu weights",
                        (unsigned long long)hog_model_len(m));
    f->keep_last = true;
    return HOG_OK;
}

struct hog_train_state hog_train_state_class(const struct hog_train_state *w,
                                             uint32_t c)
{
    struct hog_train_state k = *w;
    uint64_t at = (uint64_t)c * w->n_weights;
    k.w += at;
    if (k.ftrl_z)
        k.ftrl_z += at;
    if (k.adagrad_g2)
        k.adagrad_g2 += at;
    return k;
}

void hog_train_state_keep(struct hog_fit *f, const struct hog_train_state *s)
{
    struct hog_opt_state *st = f->model->state;
    if (!st || s->pos < f->train->m.rows || s->epoch != f->o->epochs)
        return;
    uint64_t at = (uint64_t)s->ovr_class * s->n_weights;
    size_t bytes = s->n_weights * sizeof(float);
    if (st->a)
        memcpy(st->a + at, s->ftrl_z, bytes);
    if (st->b)
        memcpy(st->b + at, s->adagrad_g2, bytes);
    /* every class ends at the same counts; one writes them, as the
     * classes may run on threads of their own */
    if (s->ovr_class == 0) {
        st->epochs = f->warm_epochs + s->epoch;
        st->steps = s->t_global;
    }
}
