/*
 * The primal objective of any linear model (hogtrain's or LIBLINEAR's) on
 * a data set, so that two solvers can be compared on one problem:
 *
 *     F(w) = (1/n) sum_i loss(y_i, w.x_i + b) + l2/2 |w|^2 + l1 |w|_1
 *
 * with the bias weight regularized like the others, as LIBLINEAR's -B
 * does. LIBLINEAR minimises 1/2 |w|^2 + C sum loss (L2) or
 * |w|_1 + C sum loss (L1): the same problem with l2 (or l1) = 1 / (C n),
 * whose objective is F / l2 (or F / l1). A K-class one-vs-rest model's is
 * the sum of its K binary objectives (the loss of each row summed over the
 * classes, every vector regularized), LIBLINEAR's one-vs-rest objectives
 * summed the same way. Row weights v_i on d (d->row_w) weigh each row's
 * loss, (1/n) sum_i v_i loss_i, LIBLINEAR's C sum_i v_i loss_i (the
 * metrics' weighted loss; core/metrics.h).
 */
#include "coordinate/coordinate.h"

#include "core/loss.h"
#include "core/metrics.h"

#include <math.h>

hog_status hog_objective_eval(const hog_model *m, const hog_data *d,
                              hog_loss loss, double l1, double l2,
                              struct hog_objective *out, hog_err *err)
{
    *out = (struct hog_objective){ NAN, NAN, NAN, NAN, NAN, 0 };
    if (!(isfinite(l1) && l1 >= 0 && isfinite(l2) && l2 >= 0))
        return hog_errf(err, HOG_EINVAL,
                        "the regularization strengths must be known numbers "
                        ">= 0, not l1 = %g, l2 = %g",
                        l1, l2);
    if (d->m.rows == 0)
        return hog_errf(err, HOG_EINVAL, "the data has no rows");
    if (m->n_classes && !hog_loss_is_classification(loss))
        return hog_errf(err, HOG_EINVAL, "a model of %u classes takes a "
                        "classification loss, not %s", m->n_classes,
                        hog_loss_name(loss));
    if (!m->n_classes && hog_loss_is_classification(loss) &&
        d->labels != HOG_LABELS_BINARY)
        return hog_errf(err, HOG_EINVAL,
                        "the %s loss needs two label values, and the data "
                        "has more",
                        hog_loss_name(loss));
    /* A view of m with the problem's loss and strengths. */
    hog_model v = *m;
    v.loss = loss;
    v.l1 = l1;
    v.l2 = l2;
    if (!m->n_classes && hog_loss_is_classification(loss) &&
        m->labels != HOG_LABELS_BINARY) {
        v.labels = HOG_LABELS_BINARY;
        v.label_pos = d->label_pos;
        v.label_neg = d->label_neg;
    }
    struct hog_metrics mt;
    hog_status st = hog_metrics_eval(&v, d, &mt, err);
    if (st != HOG_OK)
        return st;
    /* K classes: the one-vs-rest losses summed over the classes
     * (LIBLINEAR's objective of its K binary problems, summed), or the
     * cross-entropy of a softmax model */
    out->mean_loss = m->n_classes ? mt.obj_loss : mt.loss;
    out->reg = hog_model_regularizer(&v);
    out->value = out->mean_loss + out->reg;
    out->nonzeros = hog_model_nonzeros(&v);
    double n = (double)d->m.rows;
    if (l1 == 0 && l2 > 0) {
        out->C = 1.0 / (l2 * n);
        out->liblinear = out->value / l2;
    } else if (l2 == 0 && l1 > 0) {
        out->C = 1.0 / (l1 * n);
        out->liblinear = out->value / l1;
    }
    return HOG_OK;
}
