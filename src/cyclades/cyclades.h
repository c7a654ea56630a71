/*
 * cyclades: conflict-free parallel SGD (Pan et al., NIPS 2016) whose model
 * does not depend on the number of threads. Each batch of rows is cut into
 * the connected components of its row-feature conflict graph; threads take
 * whole components, so no two touch one weight. The bias and the most
 * frequent features ("hot") leave the graph and take one step per batch,
 * summed in row order. docs/CYCLADES.md has the rules and what they do to
 * serial equivalence.
 */
#ifndef HOG_CYCLADES_H
#define HOG_CYCLADES_H

#include "core/fit.h"

/* Trains with o->threads threads (0: one per allowed core). The model is
 * the same bit for bit for every thread count. Without hot features
 * (o->cyclades_hot_degree 0) it is the model of serial SGD over
 * hog_cyclades_train_reference()'s row order, and with o->repartition
 * also that of hog_serial_train(). */
hog_status hog_cyclades_train(struct hog_fit *f, hog_err *err);

/* Multinomial logistic regression of the model's K classes
 * (--multiclass softmax) by Cyclades: the K-wide kernel of core/softmax.h
 * on the same batches, components and hot features, a hot feature's K
 * weights stepped together (step.c). The same model at every thread
 * count; with o->cyclades_hot_degree == 0 that of the K-wide kernel over
 * hog_cyclades_train_reference()'s row order. Checkpoints after whole
 * epochs only, as softmax's other trainers write them. */
hog_status hog_cyclades_train_softmax(struct hog_fit *f, hog_err *err);

/* The serial reference of hog_cyclades_train without hot features
 * (o->cyclades_hot_degree 0): the rows in the order Cyclades visits them
 * (its permutations, batches and batch order), run one at a time through
 * the plain kernel (hog_sgd_run) as the serial trainer runs them.
 * HOG_EINVAL with hot features. For tests.
 * softmax: the same for hog_cyclades_train_softmax, through the K-wide
 * kernel. */
hog_status hog_cyclades_train_reference(struct hog_fit *f, bool softmax,
                                        hog_err *err);

/* What Cyclades' runs did with the share of sibling runs (core/fit.h,
 * struct hog_fit_share; one-vs-rest's classes): the runs that built the
 * hot set and views, those that took them from the share, and those that
 * took epoch 1's order and partition. For tests. */
void hog_cyclades_share_counts(struct hog_fit_share *s, uint64_t *built,
                               uint64_t *took_views, uint64_t *took_order);

#endif
