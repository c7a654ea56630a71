/*
 * Labels that look like a regression target. A classification loss on
 * labels of more than two values trains K classes, whatever the values
 * are: abalone's ages (1 to 29) make a 28-class one-vs-rest model without
 * a word. Two signs say the labels are numbers to predict rather than
 * classes, and a warning (never an error: a classifier of them is
 * legitimate) names --loss squared:
 *   - a label that is not an integer (class labels are integers in every
 *     LIBSVM multiclass set);
 *   - many rare classes: at least a quarter of the classes with fewer than
 *     DOUBT_FEW_ROWS rows each (a one-vs-rest class learns little from so
 *     few rows; a target spread over many values has such a tail: 9 of
 *     abalone's 28 ages, none of news20's 20 topics or Fashion-MNIST's 10).
 * Too many classes for the rows (more than half the rows) is the front
 * door's error, not a doubt.
 */
#include "train/train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DOUBT_FEW_ROWS 10

bool hog_train_classes_doubt(const double *labels, const uint64_t *rows,
                             uint32_t k, char *buf, size_t len)
{
    uint64_t total = 0;
    uint32_t rare = 0, frac = k;
    for (uint32_t c = 0; c < k; c++) {
        total += rows[c];
        rare += rows[c] < DOUBT_FEW_ROWS;
        if (frac == k && labels[c] != floor(labels[c]))
            frac = c;
    }
    if (k < 3 || k > total / 2)
        return false;
    char why[160];
    if (frac < k)
        snprintf(why, sizeof why, "label %.9g is not an integer", labels[frac]);
    else if (4 * (uint64_t)rare >= k)
        snprintf(why, sizeof why, "%u of them with fewer than %u rows", rare,
                 DOUBT_FEW_ROWS);
    else
        return false;
    snprintf(buf, len, "warning: the labels take %u values over %llu rows "
             "(%s): trained as %u classes; if they are numbers to predict, "
             "use --loss squared", k, (unsigned long long)total, why, k);
    return true;
}

bool hog_train_data_classes_doubt(const hog_train_opts *o, const hog_data *d,
                                  char *buf, size_t len)
{
    if (!hog_train_is_multiclass(o, d) || o->n_classes || !d->m.y)
        return false;
    double *labels;
    uint32_t k;
    hog_err err;
    if (hog_data_classes(d, HOG_MAX_CLASSES, &labels, &k, &err) != HOG_OK)
        return false; /* training says why */
    struct hog_class_index ix;
    uint64_t *rows = calloc(k ? k : 1, sizeof *rows);
    bool doubt = false;
    if (rows && hog_class_index_init(&ix, labels, k, &err) == HOG_OK) {
        for (uint64_t i = 0; i < d->m.rows; i++) {
            int64_t c = hog_class_index_find(&ix, d->m.y[i]);
            if (c >= 0)
                rows[c]++;
        }
        hog_class_index_free(&ix);
        doubt = hog_train_classes_doubt(labels, rows, k, buf, len);
    }
    free(rows);
    free(labels);
    return doubt;
}

void hog_train_notice(const hog_train_hooks *h, const char *line)
{
    if (h && h->log)
        h->log(h->log_ctx, line);
    else
        fprintf(stderr, "hogtrain: %s\n", line);
}
