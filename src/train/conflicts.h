/*
 * What the two files of the conflicts' table share (conflicts.c: the
 * walk and the rows about options whatever trains; conflicts_trainers.c:
 * the rows about what a trainer does not do). Only conflicts.c reads the
 * other's rows, as data: neither calls into the other.
 */
#ifndef HOG_TRAIN_CONFLICTS_H
#define HOG_TRAIN_CONFLICTS_H

#include "train/train.h"

#include "gpu/gpu.h"

/* The trainers' rows, walked after conflicts.c's own. */
extern const struct hog_conflict hog_conflicts_trainers[];
extern const size_t hog_conflicts_trainers_n;

#define ROW(opts, st, hit_, data_, sentence_, detail_, ex)                  \
    { .options = opts, .status = st, .hit = hit_, .data = data_,           \
      .sentence = sentence_, .detail = detail_, .example = ex }

/* ---- what the predicates share ------------------------------------------ */

static inline bool hog_cf_gpu(const struct hog_conflict_ctx *c)
{
    return hog_gpu_requested(c->o);
}
static inline bool hog_cf_ckpt(const struct hog_conflict_ctx *c)
{
    return c->o->checkpoint || c->o->resume;
}
static inline bool hog_cf_ftrl(const struct hog_conflict_ctx *c)
{
    return c->o->schedule == HOG_SCHED_FTRL;
}
/* K classes: from the labels where the data is known. */
static inline bool hog_cf_multi(const struct hog_conflict_ctx *c)
{
    return c->train && hog_train_is_multiclass(c->o, c->train);
}
static inline bool hog_cf_softmax(const struct hog_conflict_ctx *c)
{
    return c->o->multiclass == HOG_MULTICLASS_SOFTMAX && hog_cf_multi(c);
}
/* Softmax asked for counts wherever it is asked for while the data is
 * not known (the default schedule's rule, hog_train_ftrl_runs), and
 * where the labels have K classes once it is. */
static inline bool hog_cf_softmax_asked(const struct hog_conflict_ctx *c)
{
    return c->o->multiclass == HOG_MULTICLASS_SOFTMAX &&
           (!c->train || hog_cf_multi(c));
}
/* o->algo trains (the GPU replicas train in its place, o->algo unused) */
static inline bool hog_cf_algo_is(const struct hog_conflict_ctx *c,
                                  hog_algo a)
{
    return !hog_cf_gpu(c) && c->o->algo == a;
}

/* The serial trainer, or --algo auto, which is the serial trainer until
 * the data is known and whenever an option needs the serial trainer
 * (auto.c tries Hogwild! against this table). */
static inline bool hog_cf_serial(const struct hog_conflict_ctx *c)
{
    return c->o->algo == HOG_ALGO_SERIAL || c->o->algo == HOG_ALGO_AUTO;
}

/* a sentence's detail: the algorithm's title */
static inline const char *hog_cf_algo_title(const struct hog_conflict_ctx *c,
                                            char *buf, size_t len)
{
    (void)buf, (void)len;
    return hog_algo_name(c->o->algo);
}

#endif
