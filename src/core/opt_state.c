/*
 * The optimizer's state a model keeps (struct hog_opt_state, core.h):
 * what a warm start needs besides the weights to continue a run exactly.
 * FTRL-Proximal's weights are a closed form of its sums z and n, AdaGrad's
 * steps are scaled by its sums of squared gradients, and the step-count
 * schedules (constant, invscaling) need the steps taken; with the epochs
 * run, which seed the next epoch's row order, a run of E epochs continued
 * for F more equals one of E + F bit for bit. Taken after an epoch, when
 * no lazy regularization is pending (every weight is current), so the
 * checkpoints' mid-segment state (core/sgd_state.c) is not needed here.
 */
#include "core/core.h"

#include <stdlib.h>
#include <string.h>

struct hog_opt_state *hog_opt_state_new(hog_schedule sch, uint64_t len)
{
    struct hog_opt_state *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->schedule = sch;
    unsigned arr = hog_opt_state_arrays(sch);
    size_t n = len ? (size_t)len : 1;
    if (((arr & 1) && !(s->a = calloc(n, sizeof *s->a))) ||
        ((arr & 2) && !(s->b = calloc(n, sizeof *s->b)))) {
        hog_opt_state_free(s);
        return NULL;
    }
    return s;
}

void hog_opt_state_free(struct hog_opt_state *s)
{
    if (!s)
        return;
    free(s->a);
    free(s->b);
    free(s);
}

int hog_model_get_state(const hog_model *m, hog_model_state *s)
{
    const struct hog_opt_state *st = m->state;
    if (!st)
        return 0;
    s->schedule = st->schedule;
    s->epochs = st->epochs;
    s->steps = st->steps;
    s->len = hog_model_len(m);
    s->a = st->a;
    s->b = st->b;
    return 1;
}

hog_status hog_model_set_state(hog_model *m, const hog_model_state *s,
                               hog_err *err)
{
    if (!s) {
        hog_opt_state_free(m->state);
        m->state = NULL;
        return HOG_OK;
    }
    uint64_t len = hog_model_len(m);
    if (s->size != sizeof *s)
        return hog_errf(err, HOG_EINVAL, "hog_model_set_state: the state's "
                        "size field is %zu, not sizeof(hog_model_state) %zu",
                        s->size, sizeof *s);
    if ((unsigned)s->schedule > HOG_SCHED_FTRL)
        return hog_errf(err, HOG_EINVAL, "hog_model_set_state: unknown "
                        "schedule %d", (int)s->schedule);
    unsigned arr = hog_opt_state_arrays(s->schedule);
    if (s->len != len || !(arr & 1) != !s->a || !(arr & 2) != !s->b)
        return hog_errf(err, HOG_EINVAL, "hog_model_set_state: a state of "
                        "%llu floats%s%s does not fit a model of %llu "
                        "weights under its schedule",
                        (unsigned long long)s->len, s->a ? ", a" : "",
                        s->b ? ", b" : "", (unsigned long long)len);
    struct hog_opt_state *st = hog_opt_state_new(s->schedule, len);
    if (!st)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the optimizer "
                        "state of %llu weights", (unsigned long long)len);
    st->epochs = s->epochs;
    st->steps = s->steps;
    if (s->a)
        memcpy(st->a, s->a, len * sizeof *st->a);
    if (s->b)
        memcpy(st->b, s->b, len * sizeof *st->b);
    hog_opt_state_free(m->state);
    m->state = st;
    return HOG_OK;
}
