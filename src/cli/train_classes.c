/* hogtrain train's report of a K-class model in --json: the mode, the
 * labels, how the threads were used, and for the test set (the training
 * set without one) the per-class precision, recall, F1 and support and the
 * confusion matrix. */
#include "cli/train.h"

#include "core/metrics.h"

#include <stdlib.h>

/* The confusion matrix is written up to this many classes (its K^2 counts
 * would dwarf the rest of the report beyond). */
#define CONFUSION_MAX 1000u

static void per_class(struct hog_json *j, const hog_model *m,
                      const uint64_t *conf)
{
    uint32_t k = m->n_classes;
    hog_json_arr(j, "per_class");
    for (uint32_t c = 0; c < k; c++) {
        uint64_t tp = conf[(uint64_t)c * k + c], actual = 0, predicted = 0;
        for (uint32_t q = 0; q < k; q++) {
            actual += conf[(uint64_t)c * k + q];
            predicted += conf[(uint64_t)q * k + c];
        }
        double p = predicted ? (double)tp / (double)predicted : 0.0;
        double r = actual ? (double)tp / (double)actual : 0.0;
        hog_json_obj(j, NULL);
        hog_json_num(j, "label", m->classes[c]);
        hog_json_num(j, "precision", p);
        hog_json_num(j, "recall", r);
        hog_json_num(j, "f1", p + r > 0 ? 2 * p * r / (p + r) : 0.0);
        hog_json_u64(j, "support", actual);
        hog_json_close_obj(j);
    }
    hog_json_close_arr(j);
}

void hog_cli_json_classes(struct hog_json *j, const struct train_report *r)
{
    const hog_model *m = r->m;
    uint32_t k = m->n_classes;
    hog_json_obj(j, "classes");
    hog_json_str(j, "mode", m->multiclass == HOG_MULTICLASS_SOFTMAX
                                ? "softmax"
                                : "ovr");
    hog_json_u64(j, "count", k);
    hog_json_arr(j, "labels");
    for (uint32_t c = 0; c < k; c++)
        hog_json_num(j, NULL, m->classes[c]);
    hog_json_close_arr(j);
    if (m->multiclass == HOG_MULTICLASS_OVR)
        hog_json_str(j, "parallel", hog_train_ovr_spread(&r->a->o, k)
                                        ? "classes over threads"
                                        : "rows within a class");
    const hog_data *d = r->test ? r->test : r->train;
    hog_json_str(j, "evaluated_on", r->test ? "test" : "train");
    uint64_t *conf = k <= CONFUSION_MAX && d->m.y
                         ? malloc((uint64_t)k * k * sizeof *conf)
                         : NULL;
    hog_err err;
    if (conf && hog_metrics_confusion(m, d, conf, &err) == HOG_OK) {
        per_class(j, m, conf);
        hog_json_arr(j, "confusion"); /* rows: the true label */
        for (uint32_t c = 0; c < k; c++) {
            hog_json_arr(j, NULL);
            for (uint32_t q = 0; q < k; q++)
                hog_json_u64(j, NULL, conf[(uint64_t)c * k + q]);
            hog_json_close_arr(j);
        }
        hog_json_close_arr(j);
    } else {
        hog_json_null(j, "per_class");
        hog_json_null(j, "confusion");
    }
    free(conf);
    hog_json_close_obj(j);
}
