/*
 * The model a run trains: its features, labels or classes and options
 * recorded; the warm start's weights checked against it; and the model
 * handed to the caller at the end.
 */
#include "train/train.h"

#include "core/cross.h"
#include "core/loss.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* o->classes, copied, once every training label is found among them. */
static hog_status given_classes(const hog_train_opts *o, const hog_data *d,
                                double **labels, uint32_t *k, hog_err *err)
{
    if (o->n_classes < 3 || o->n_classes > HOG_MAX_CLASSES || !o->classes)
        return hog_errf(err, HOG_EINVAL, "the given classes must be 3 to %u "
                        "labels, not %u", HOG_MAX_CLASSES, o->n_classes);
    struct hog_class_index ix;
    hog_status st = hog_class_index_init(&ix, o->classes, o->n_classes, err);
    if (st != HOG_OK)
        return st;
    for (unsigned c = 0; c < o->n_classes && st == HOG_OK; c++)
        if (!isfinite(o->classes[c]) ||
            hog_class_index_find(&ix, o->classes[c]) != (int64_t)c)
            st = hog_errf(err, HOG_EINVAL, "the given class %g is not a "
                          "finite label named once", o->classes[c]);
    for (uint64_t i = 0; i < d->m.rows && st == HOG_OK; i++)
        if (hog_class_index_find(&ix, d->m.y[i]) < 0)
            st = hog_errf(err, HOG_EINVAL, "training row %llu's label %g is "
                          "none of the %u given classes",
                          (unsigned long long)i + 1, (double)d->m.y[i],
                          o->n_classes);
    hog_class_index_free(&ix);
    if (st != HOG_OK)
        return st;
    if (!(*labels = malloc(o->n_classes * sizeof **labels)))
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    memcpy(*labels, o->classes, o->n_classes * sizeof **labels);
    *k = o->n_classes;
    return HOG_OK;
}
/* The model for train's features and labels, options recorded. */
hog_status hog_train_new_model(const hog_data *train, const hog_train_opts *o,
                               hog_model **out, hog_err *err)
{
    hog_model *m;
    hog_status st = hog_model_new(train->n_features, o->loss, o->bias, &m, err);
    if (st != HOG_OK)
        return st;
    m->l1 = o->l1;
    m->l2 = o->l2;
    m->loss_param = hog_loss_param_of(o);
    m->labels = hog_loss_is_classification(o->loss) ? HOG_LABELS_BINARY
                                                    : train->labels;
    m->label_pos = train->label_pos;
    m->label_neg = train->label_neg;
    m->hash_bits = train->hash.bits; /* predict hashes its data the same way */
    m->hash_seed = train->hash.seed;
    m->cross = train->cross; /* and crosses it so */
    hog_interactions_format(&m->cross, m->cross_spec, sizeof m->cross_spec);
    if (hog_train_is_multiclass(o, train) && train->m.y) {
        double *labels;
        uint32_t k;
        st = o->n_classes ? given_classes(o, train, &labels, &k, err)
                          : hog_data_classes(train, HOG_MAX_CLASSES, &labels,
                                             &k, err);
        if (st == HOG_OK && k > 2 && k > train->m.rows / 2) {
            st = hog_errf(err, HOG_EINVAL,
                          "the training labels take %u distinct values over "
                          "%llu rows, too many for classes of the %s loss: "
                          "for regression targets use --loss squared",
                          k, (unsigned long long)train->m.rows,
                          hog_loss_name(o->loss));
            free(labels);
        } else if (st == HOG_OK && k < 3) {
            st = hog_errf(err, HOG_EINVAL,
                          "the training labels take one value only (%g): a "
                          "classifier needs at least two classes",
                          labels[0]);
            free(labels);
        } else if (st == HOG_OK) {
            st = hog_model_set_classes(m, k, labels, o->multiclass, err);
            free(labels);
        }
        if (st == HOG_OK)
            st = hog_train_check_memory(o, train, k, err);
        if (st != HOG_OK) {
            hog_model_free(m);
            return st;
        }
    }
    *out = m;
    return HOG_OK;
}

/* The warm start's weights for the model m (NULL without one), or a
 * sentence when they do not fit it. */
hog_status hog_train_warm_weights(const hog_train_opts *o, const hog_model *m,
                                  const float **out, hog_err *err)
{
    const hog_model *ws = o->warm_start;
    *out = NULL;
    if (!ws)
        return HOG_OK;
    if (hog_loss_is_classification(ws->loss) !=
        hog_loss_is_classification(m->loss))
        return hog_errf(err, HOG_EINVAL,
                        "the warm start is a %s model and this run %s",
                        hog_loss_is_classification(ws->loss) ? "classification"
                                                             : "regression",
                        hog_loss_is_classification(m->loss) ? "classifies"
                                                            : "regresses");
    if (m->n_classes && ws->n_classes == m->n_classes &&
        ws->multiclass != m->multiclass)
        return hog_errf(err, HOG_EINVAL, "the warm start is a %s model, this "
                        "run %s", ws->multiclass ? "softmax" : "one-vs-rest",
                        m->multiclass ? "softmax" : "one-vs-rest");
    if (!m->n_classes && hog_loss_is_classification(m->loss) &&
        !ws->n_classes && ws->label_pos != m->label_pos)
        return hog_errf(err, HOG_EINVAL, "the warm start's positive label is "
                        "%g, the training data's %g", ws->label_pos,
                        m->label_pos);
    if (ws->n_features != m->n_features || (ws->bias != 0) != (m->bias != 0))
        return hog_errf(err, HOG_EINVAL, "the warm start has %llu features%s "
                        "and this training %llu%s; start from a model of the "
                        "same features and bias",
                        (unsigned long long)ws->n_features,
                        ws->bias != 0 ? " and a bias" : "",
                        (unsigned long long)m->n_features,
                        m->bias != 0 ? " and a bias" : "");
    if (ws->cross.n != m->cross.n ||
        memcmp(ws->cross.term, m->cross.term, sizeof m->cross.term) != 0)
        return hog_errf(err, HOG_EINVAL, "the warm start was trained %s%s "
                        "and this training %s%s; start from a model of the "
                        "same interactions",
                        ws->cross.n ? "with interactions " : "without "
                                                             "interactions",
                        ws->cross.n ? ws->cross_spec : "",
                        m->cross.n ? "crosses " : "has none",
                        m->cross.n ? m->cross_spec : "");
    bool same = ws->n_classes == m->n_classes;
    for (uint32_t c = 0; same && c < m->n_classes; c++)
        same = ws->classes[c] == m->classes[c];
    if (!same)
        return hog_errf(err, HOG_EINVAL, "the warm start's classes (%u) are "
                        "not this training's (%u, in the order of their first "
                        "appearance)", ws->n_classes, m->n_classes);
    *out = ws->w;
    return HOG_OK;
}

/* The end of a run: the trained model to the caller, or freed on failure. */
hog_status hog_train_hand_out(hog_status st, hog_model *m, hog_model **out)
{
    if (st != HOG_OK) {
        hog_model_free(m);
        return st;
    }
    *out = m;
    return HOG_OK;
}
