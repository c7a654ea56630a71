/*
 * hogtrain's public API, its models: files (.hgm and LIBLINEAR's text),
 * what a model holds, a model from weights and back, its optimizer state,
 * scores, predictions and probabilities. Included by hogtrain.h, whose
 * conventions it follows (include that one).
 */
#ifndef HOGTRAIN_MODEL_H
#define HOGTRAIN_MODEL_H

#include "hogtrain.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- models ------------------------------------------------------------- */

typedef enum hog_model_format {
    HOG_MODEL_HGM = 0,   /* hogtrain's binary model */
    HOG_MODEL_LIBLINEAR  /* LIBLINEAR's text model, for liblinear-predict */
} hog_model_format;

/* Written to a temporary name, then renamed. */
HOG_API hog_status hog_model_save(const hog_model *m, const char *path,
                                  hog_model_format fmt, hog_err *err);
/* Reads .hgm or LIBLINEAR text, told apart by content. */
HOG_API hog_status hog_model_load(const char *path, hog_model **out,
                                  hog_err *err);
HOG_API void hog_model_free(hog_model *m);

HOG_API uint64_t hog_model_features(const hog_model *m);
HOG_API hog_loss hog_model_loss(const hog_model *m);
/* The parameter of the model's loss (epsilon or quantile_tau, as
 * hog_train_opts; 0 for a loss that takes none). */
HOG_API double hog_model_loss_param(const hog_model *m);
/* Binary and regression models: the n_features weights (+ the bias
 * weight). K classes: K such vectors one after another, in the order of
 * hog_model_classes(). */
HOG_API const float *hog_model_weights(const hog_model *m);
/* K (>= 3) and the class labels in the model's order (the first
 * appearance in the training data, as LIBLINEAR), or 0 and NULL for a
 * binary or regression model. */
HOG_API unsigned hog_model_classes(const hog_model *m, const double **labels);
HOG_API hog_multiclass hog_model_multiclass(const hog_model *m);
HOG_API double hog_model_bias(const hog_model *m); /* bias weight times bias value */
/* The hashing of the data the model was trained on: B (0: none) and the
 * seed. Data to score must be loaded with the same (hog_load_opts). */
HOG_API unsigned hog_model_hash_bits(const hog_model *m);
HOG_API uint32_t hog_model_hash_seed(const hog_model *m);
/* The interactions its training rows were crossed with ("ab,cde"), NULL
 * when none: load the data it scores with them (hog_load_opts). */
HOG_API const char *hog_model_interactions(const hog_model *m);

/* A model's description, to hand its weights out and in without a file
 * (hog_model_weights() gives them; hog_model_from_weights() takes them). */
typedef struct hog_model_spec {
    size_t size;             /* sizeof(hog_model_spec) */
    uint64_t n_features;
    hog_loss loss;
    double bias;             /* the bias feature's value; 0: no bias weight */
    int regression;          /* 1: the score is the prediction (real labels) */
    double label_pos, label_neg; /* binary: the labels of a score > 0, <= 0 */
    unsigned n_classes;      /* K >= 3 classes, or 0 (one weight vector) */
    const double *classes;   /* K labels, in the order of the vectors */
    hog_multiclass multiclass; /* K classes: one-vs-rest or softmax */
    double l1, l2;           /* the objective trained (kept in .hgm files) */
    unsigned hash_bits;      /* as hog_model_hash_bits() */
    uint32_t hash_seed;
    /* As hog_model_interactions(): "ab,cd", NULL (or "") for none; needs
     * hash_bits. Added after the fields above: a caller whose size ends
     * before it (HOG_MODEL_SPEC_SIZE_V1) describes and builds models
     * without interactions. */
    const char *interactions;
    /* As hog_model_loss_param(); a caller whose size ends before it
     * (HOG_MODEL_SPEC_SIZE_V2) builds models of 0. */
    double loss_param;
} hog_model_spec;
/* The size of the struct before interactions was added. */
#define HOG_MODEL_SPEC_SIZE_V1 offsetof(hog_model_spec, interactions)
/* The size of the struct before loss_param was added. */
#define HOG_MODEL_SPEC_SIZE_V2 offsetof(hog_model_spec, loss_param)

/* Fills s (s->classes points into m); s->size must be set. */
HOG_API void hog_model_describe(const hog_model *m, hog_model_spec *s);
/* A model of s with weights w (copied): max(K, 1) vectors of n_features
 * (+ 1 with a bias) floats one after another, as hog_model_weights(). */
HOG_API hog_status hog_model_from_weights(const hog_model_spec *s,
                                          const float *w, hog_model **out,
                                          hog_err *err);

/* The optimizer's state a model keeps (hog_train_opts.save_state; .hgm
 * version 5): the schedule it belongs to, the epochs and steps (rows,
 * per class) trained, and len = hog_model_weights()'s count of floats in
 * each array: FTRL z in a and sqrt(n) in b, AdaGrad's sums of squared
 * gradients in b (a NULL), neither for the constant and invscaling
 * schedules, whose state is the step count. A warm start from a model
 * with a state (the serial trainer in memory, the same schedule)
 * continues it; one of another schedule is refused. */
typedef struct hog_model_state {
    size_t size;            /* sizeof(hog_model_state) */
    hog_schedule schedule;
    uint64_t epochs, steps;
    uint64_t len;
    const float *a, *b;
} hog_model_state;
/* 1 and s filled (its arrays point into m) when m keeps a state, else 0. */
HOG_API int hog_model_get_state(const hog_model *m, hog_model_state *s);
/* Gives m a copy of s (NULL: drops m's state); a state that does not fit
 * m (its length, arrays or schedule) is refused with a sentence. */
HOG_API hog_status hog_model_set_state(hog_model *m, const hog_model_state *s,
                                       hog_err *err);

/* scores[i] = w . x_i (+ bias) for every row of d. K classes: scores has
 * rows * K entries, row i's K scores at scores[i * K]. */
HOG_API hog_status hog_model_scores(const hog_model *m, const hog_data *d,
                                    double *scores, hog_err *err);
/* The predicted label of every row: the label value of the positive or
 * negative class (binary), of the class with the highest score (K
 * classes), or the score itself (regression). */
HOG_API hog_status hog_model_predict(const hog_model *m, const hog_data *d,
                                     double *labels, hog_err *err);
/* Class probabilities of logistic models: rows * K entries (row i's at
 * probs[i * K], classes in hog_model_classes() order; softmax models
 * exp(s_c) / sum, one-vs-rest sigma(s_c) / sum sigma, as LIBLINEAR's -b 1),
 * or rows * 2 for a binary model (the positive label's, then the
 * negative's). Modified Huber models: (clip(s, -1, 1) + 1) / 2, K classes'
 * normalised (uniform where all are 0), as scikit-learn's predict_proba.
 * Other losses: HOG_ENOTSUP with a sentence. */
HOG_API hog_status hog_model_probabilities(const hog_model *m,
                                           const hog_data *d, double *probs,
                                           hog_err *err);

#ifdef __cplusplus
}
#endif
#endif
