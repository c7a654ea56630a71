/*
 * The K-wide SGD kernel of multinomial logistic regression (softmax.c has
 * the maths): K classes' weights feature-major, w[j K + c], one stamp and
 * one AdaGrad accumulator per feature, the binary kernel's schedules and
 * lazy regularization (sgd.h). The trainers own the rest: the schedule's
 * segments, the row order and the threads (hogwild/softmax.c: serial,
 * Hogwild! and streamed; cyclades/: conflict-free batches, whose hot
 * features take hog_softmax_apply's delayed steps).
 */
#ifndef HOG_CORE_SOFTMAX_H
#define HOG_CORE_SOFTMAX_H

#include "core/cross.h"
#include "core/fit.h"
#include "core/sgd.h"

struct hog_softmax {
    const struct hog_sgd *sch; /* the trainer's schedule and segment
                                  (hog_sgd_init_schedule: no weights) */
    uint32_t k;                /* classes */
    uint64_t nf, nw;           /* features; weights per class (nf + bias) */
    double bias;
    int kind;                  /* how the weights are kept (softmax.c) */
    bool tally;                /* the row steps sum the progressive metrics */
    /* shared, written by the kernel (relaxed where threads share them) */
    _Atomic float *w;          /* nw k, feature-major */
    _Atomic uint32_t *stamp;   /* per feature (stamped kinds), else NULL */
    _Atomic float *g2;         /* per feature, AdaGrad's G_j, else NULL */
};

/* One thread's scratch, on cache lines of its own. */
struct hog_softmax_work {
    double *s, *g; /* a row's K scores, and their gradient */
    float *buf;    /* shared weights: a private copy of one feature's K */
    struct hog_cross_buf xb; /* rows with interactions (core/cross.h) */
    struct hog_sgd_tally tally; /* its rows' scores (m->tally) */
};

/* The working weights of k classes over nf features (and the bias when
 * bias != 0) and their per-feature state, zero or the warm start init (K
 * class-major vectors of nf + (bias != 0) weights); sch must outlive m.
 * Every failure is a sentence with the sizes; m is then for
 * hog_softmax_free. */
hog_status hog_softmax_init(struct hog_softmax *m, const struct hog_sgd *sch,
                            uint32_t k, uint64_t nf, double bias,
                            const float *init, hog_err *err);
void hog_softmax_free(struct hog_softmax *m);
hog_status hog_softmax_work_init(struct hog_softmax_work *w,
                                 const struct hog_softmax *m,
                                 const hog_data *d, hog_err *err);
void hog_softmax_work_free(struct hog_softmax_work *w);

/* Each of d's rows' class among the model's labels (malloc'd into *out);
 * a label the model lacks is a sentence naming the row. */
hog_status hog_softmax_classes(const hog_model *mo, const hog_data *d,
                               uint32_t **out, hog_err *err);

/* The gradient of the cross-entropy -log softmax(s)_y with respect to the
 * k scores s: g_c = softmax(s)_c - [c == y]; returns the cross-entropy
 * (the step's own, for the tests' finite differences). */
double hog_softmax_score_grad(const double *s, uint32_t k, uint32_t y,
                              double *g);

/* count rows of d, rows[i] of class cls[rows[i]], the i-th at segment step
 * t + i stride. shared: the weights are shared with other threads
 * (Hogwild!: relaxed copies of a feature's K weights); otherwise in place. */
void hog_softmax_run(const struct hog_softmax *m, bool shared,
                     struct hog_softmax_work *w, const hog_data *d,
                     const uint32_t *cls, const uint64_t *rows,
                     uint64_t count, uint32_t t, uint32_t stride);
/* Features [lo, hi) brought to the end of a segment of len steps, their
 * stamps reset (buf: K floats of scratch). No step runs. */
void hog_softmax_end(const struct hog_softmax *m, bool shared, float *buf,
                     uint64_t lo, uint64_t hi, uint32_t len);
/* Features [lo, hi) of the weights into out's K class-major vectors of
 * nw weights. */
void hog_softmax_model_slice(const struct hog_softmax *m, float *out,
                             uint64_t lo, uint64_t hi);

/* Checkpoints, after whole epochs (every weight current): the state holds
 * the model's K class-major vectors (n_weights = K nw) and, for AdaGrad, a
 * sum per weight, the K weights of feature j carrying their group's G_j
 * alike, so that the file has the weights' layout. hog_softmax_state_alloc
 * sizes st's arrays; hog_softmax_state_keep fills them from the model's
 * vectors model_w (hog_softmax_model_slice's) and m's sums. */
hog_status hog_softmax_state_alloc(const struct hog_softmax *m,
                                   struct hog_train_state *st, hog_err *err);
void hog_softmax_state_keep(const struct hog_softmax *m, const float *model_w,
                            struct hog_train_state *st);
/* Puts checkpoint r of a trainer over n rows in place: m's weights and
 * sums, and the model's vectors model_w (a checkpoint after the last
 * epoch trains none); *after: r stands after epoch r->epoch (else before
 * epoch 1). A checkpoint that is not a softmax one of these classes at an
 * epoch boundary is a sentence. */
hog_status hog_softmax_state_restore(struct hog_softmax *m,
                                     const struct hog_train_state *r,
                                     uint64_t n, float *model_w, bool *after,
                                     hog_err *err);
/* A warm start from a model that keeps its optimizer's state (fit.h,
 * warm; the weights already in place from init): AdaGrad's sums, from the
 * state's class-major layout of hog_softmax_state_keep. */
void hog_softmax_state_warm(struct hog_softmax *m,
                            const struct hog_train_state *w);

/* Cyclades' row step, in place: hog_softmax_run's step of row r (class y,
 * weight *rw, NULL: 1) at segment step t, whose scores also take the
 * weights of the row's hot entries (hot; with hot_bias the bias too) as
 * they stand, in stored units, without stepping them. w->g is left with
 * the row's weighted score gradient and w->s with its scores. Returns the
 * row's cross-entropy (before its step). With no hot entry and !hot_bias
 * it is hog_softmax_run's step bit for bit. */
double hog_softmax_split_step(const struct hog_softmax *m,
                              struct hog_softmax_work *w, struct hog_row r,
                              struct hog_row hot, bool hot_bias, uint32_t y,
                              const float *rw, uint32_t t);
/* Step t of feature j's K weights with score gradient g (times x_j, K
 * values) and AdaGrad increment sq, in place: a Cyclades hot feature's
 * summed step (buf: K floats of scratch). */
void hog_softmax_apply(const struct hog_softmax *m, float *buf, uint64_t j,
                       uint32_t t, const double *g, double sq);

#endif
