/*
 * Model quality on a data set: mean loss, accuracy, AUC, RMSE, and the
 * regularization term of the objective. Used by the training front door
 * after each epoch, outside the timed part, on the run's threads; the
 * result does not depend on the thread count (metrics.c).
 */
#ifndef HOG_METRICS_H
#define HOG_METRICS_H

#include "core/core.h"

/* Fields that do not apply are NaN. With row weights (d->row_w) the loss,
 * obj_loss and rmse weigh each row's term (still divided by the rows);
 * accuracy, AUC and macro-F1 count rows unweighted. */
struct hog_metrics {
    double loss;     /* mean loss of the model's loss function; K classes:
                        the multiclass log-loss of logistic models, else
                        the mean of the summed one-vs-rest losses */
    double accuracy; /* binary labels; K classes: arg-max equals the label */
    double auc;      /* binary labels, both classes present */
    double rmse;     /* squared loss */
    double macro_f1; /* K classes: the mean over classes of F1 */
    double obj_loss; /* the loss term of the training objective: loss, but
                        for K classes the mean summed one-vs-rest loss
                        (softmax: the cross-entropy) */
    uint64_t unknown;/* K classes: rows whose label the model has no class
                        for (counted wrong, left out of the losses) */
};

/* K classes: the confusion matrix conf[true * K + predicted] (k * k counts,
 * zeroed here) of the rows of d whose label is one of m's classes, and
 * their count per class. */
hog_status hog_metrics_confusion(const hog_model *m, const hog_data *d,
                                 uint64_t *conf, hog_err *err);
/* Scores every row of d with m (features beyond the model's count as zero)
 * and fills out. Classification: a row is positive when its label equals
 * m->label_pos; a score > 0 predicts positive (squared loss: a score above
 * the midpoint of the two label values). */
hog_status hog_metrics_eval(const hog_model *m, const hog_data *d,
                            struct hog_metrics *out, hog_err *err);
/* The same on up to `threads` threads (0: every allowed CPU; one for a
 * small set), with the same result to the last bit at any count. */
hog_status hog_metrics_eval_threads(const hog_model *m, const hog_data *d,
                                    unsigned threads, struct hog_metrics *out,
                                    hog_err *err);

/* Area under the ROC curve of scores against pos[i] != 0, ties counted as
 * half (the Mann-Whitney U statistic). NaN when a class is absent. Exact
 * ranks in O(n) (a radix sort); a NaN score (which finite weights never
 * give) ranks below or above every number by its sign bit, tied with
 * nothing. _threads: two threads when threads is not 1, same result. */
hog_status hog_auc(const double *scores, const unsigned char *pos, uint64_t n,
                   double *auc, hog_err *err);
hog_status hog_auc_threads(const double *scores, const unsigned char *pos,
                           uint64_t n, unsigned threads, double *auc,
                           hog_err *err);

/* l2/2 |w|^2 + l1 |w|_1 over all weights, the bias weight included. */
double hog_model_regularizer(const hog_model *m);
/* Weights that are not zero, the bias weight included. */
uint64_t hog_model_nonzeros(const hog_model *m);

#endif
