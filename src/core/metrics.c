/* Metrics of a model on a data set. */
#include "core/metrics.h"

#include "core/loss.h"

#include <math.h>
#include <stdlib.h>

struct scored {
    double s;
    unsigned char pos;
};

static int cmp_scored(const void *a, const void *b)
{
    double x = ((const struct scored *)a)->s, y = ((const struct scored *)b)->s;
    return (x > y) - (x < y);
}

hog_status hog_auc(const double *scores, const unsigned char *pos, uint64_t n,
                   double *auc, hog_err *err)
{
    uint64_t n_pos = 0;
    for (uint64_t i = 0; i < n; i++)
        n_pos += pos[i] != 0;
    uint64_t n_neg = n - n_pos;
    *auc = NAN;
    if (n_pos == 0 || n_neg == 0)
        return HOG_OK;
    struct scored *a = malloc(n * sizeof *a);
    if (!a)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the AUC of %llu rows",
                        (unsigned long long)n);
    for (uint64_t i = 0; i < n; i++)
        a[i] = (struct scored){ scores[i], pos[i] != 0 };
    qsort(a, n, sizeof *a, cmp_scored);
    /* Sum of the positives' ranks (1-based), tied scores sharing the mean
     * rank of their run. */
    double rank_sum = 0.0;
    for (uint64_t i = 0; i < n;) {
        uint64_t j = i + 1, p = a[i].pos; /* NaN equals nothing */
        while (j < n && a[j].s == a[i].s)
            p += a[j++].pos;
        rank_sum += (double)p * (0.5 * (double)(i + 1 + j));
        i = j;
    }
    free(a);
    double np = (double)n_pos, nn = (double)n_neg;
    *auc = (rank_sum - np * (np + 1) / 2) / (np * nn);
    return HOG_OK;
}

hog_status hog_metrics_eval(const hog_model *m, const hog_data *d,
                            struct hog_metrics *out, hog_err *err)
{
    *out = (struct hog_metrics){ NAN, NAN, NAN, NAN };
    uint64_t n = d->m.rows;
    if (n == 0)
        return HOG_OK;
    double *sc = malloc(n * sizeof *sc);
    unsigned char *pos = malloc(n);
    if (!sc || !pos) {
        free(sc), free(pos);
        return hog_errf(err, HOG_ENOMEM,
                        "out of memory for the scores of %llu rows",
                        (unsigned long long)n);
    }
    hog_status st = hog_model_scores(m, d, sc, err);
    if (st != HOG_OK)
        goto out;

    const bool cls = hog_loss_is_classification(m->loss);
    const bool binary = m->labels == HOG_LABELS_BINARY;
    const double mid = 0.5 * (m->label_pos + m->label_neg);
    double loss = 0, se = 0;
    uint64_t correct = 0;
    for (uint64_t i = 0; i < n; i++) {
        double y = d->m.y[i];
        pos[i] = y == m->label_pos;
        double target = hog_loss_target(m->loss, m->label_pos, d->m.y[i]);
        loss += hog_loss_value(m->loss, target, sc[i]);
        se += (sc[i] - y) * (sc[i] - y);
        bool says_pos = cls ? sc[i] > 0 : sc[i] > mid;
        correct += says_pos == (pos[i] != 0);
    }
    out->loss = loss / (double)n;
    if (!cls)
        out->rmse = sqrt(se / (double)n);
    if (binary) {
        out->accuracy = (double)correct / (double)n;
        st = hog_auc(sc, pos, n, &out->auc, err);
    }
out:
    free(sc);
    free(pos);
    return st;
}

double hog_model_regularizer(const hog_model *m)
{
    uint64_t n = m->n_features + (m->bias != 0.0);
    double s2 = 0, s1 = 0;
    for (uint64_t j = 0; j < n; j++) {
        s2 += (double)m->w[j] * m->w[j];
        s1 += fabs((double)m->w[j]);
    }
    return 0.5 * m->l2 * s2 + m->l1 * s1;
}

uint64_t hog_model_nonzeros(const hog_model *m)
{
    uint64_t n = m->n_features + (m->bias != 0.0), nz = 0;
    for (uint64_t j = 0; j < n; j++)
        nz += m->w[j] != 0.0f;
    return nz;
}
