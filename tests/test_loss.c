/* loss: values and derivatives of every loss; the AUC and other metrics. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "core/loss.h"
#include "core/metrics.h"

static const hog_loss all_losses[] = { HOG_LOSS_LOGISTIC, HOG_LOSS_HINGE,
                                       HOG_LOSS_SQHINGE, HOG_LOSS_SQUARED };

Test(loss, derivative_matches_central_differences)
{
    const double ys[] = { 1.0, -1.0, 0.3, 2.5 };
    const double h = 1e-6;
    int checked = 0;
    for (int li = 0; li < 4; li++) {
        hog_loss loss = all_losses[li];
        for (int yi = 0; yi < 4; yi++) {
            double y = ys[yi];
            if (hog_loss_is_classification(loss) && fabs(y) != 1.0)
                continue;
            for (double m = -30.0; m <= 30.0; m += 0.0371) {
                /* the hinges are not differentiable at y m = 1 */
                if (loss != HOG_LOSS_SQUARED && loss != HOG_LOSS_LOGISTIC &&
                    fabs(1.0 - y * m) < 1e-3)
                    continue;
                double fd = (hog_loss_value(loss, 0.0, y, m + h) -
                             hog_loss_value(loss, 0.0, y, m - h)) /
                            (2 * h);
                double d = hog_loss_deriv(loss, 0.0, y, m);
                cr_assert(fabs(fd - d) <= 1e-6 * fmax(1.0, fabs(d)),
                          "%s loss, y = %g, m = %g: derivative %.10g, "
                          "central difference %.10g",
                          hog_loss_name(loss), y, m, d, fd);
                checked++;
            }
        }
    }
    cr_assert_gt(checked, 5000);
}

Test(loss, known_values)
{
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_LOGISTIC, 0.0, 1, 0), log(2.0), 1e-15);
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_LOGISTIC, 0.0, -1, 2),
                       log1p(exp(2.0)), 1e-14);
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_HINGE, 0.0, 1, 0.25), 0.75, 1e-15);
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_HINGE, 0.0, -1, -3), 0.0, 1e-15);
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_SQHINGE, 0.0, -1, 0.5), 2.25, 1e-15);
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_SQUARED, 0.0, 3, 1), 2.0, 1e-15);
    cr_assert_float_eq(hog_loss_deriv(HOG_LOSS_LOGISTIC, 0.0, 1, 0), -0.5, 1e-15);
    cr_assert_float_eq(hog_loss_deriv(HOG_LOSS_SQHINGE, 0.0, 1, 0.5), -1.0, 1e-15);
    cr_assert_float_eq(hog_loss_deriv(HOG_LOSS_SQUARED, 0.0, 3, 1), -2.0, 1e-15);
}

Test(loss, logistic_is_stable_for_large_margins)
{
    const double ms[] = { 1e3, 1e5, 1e300, 710.0, 745.0, 40.0 };
    for (int i = 0; i < 6; i++) {
        double m = ms[i];
        /* right side: tiny but exact-ish, never NaN */
        double v = hog_loss_value(HOG_LOSS_LOGISTIC, 0.0, 1, m);
        cr_assert(isfinite(v) && v >= 0 && v <= exp(-m) * 1.0000001 + 1e-300,
                  "loss(+1, %g) = %g", m, v);
        double d = hog_loss_deriv(HOG_LOSS_LOGISTIC, 0.0, 1, m);
        cr_assert(isfinite(d) && d <= 0 && d > -1e-17, "d(+1, %g) = %g", m, d);
        /* wrong side: linear, no overflow */
        v = hog_loss_value(HOG_LOSS_LOGISTIC, 0.0, 1, -m);
        cr_assert(isfinite(v) && fabs(v - m) <= 1e-12 * m + 1e-15,
                  "loss(+1, %g) = %g", -m, v);
        d = hog_loss_deriv(HOG_LOSS_LOGISTIC, 0.0, 1, -m);
        cr_assert(isfinite(d) && fabs(d + 1) < 1e-15, "d(+1, %g) = %g", -m, d);
        d = hog_loss_deriv(HOG_LOSS_LOGISTIC, 0.0, -1, m);
        cr_assert(isfinite(d) && fabs(d - 1) < 1e-15, "d(-1, %g) = %g", m, d);
    }
    /* small margins keep full precision: log1p(exp(-z)) at z = 40 */
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_LOGISTIC, 0.0, 1, 40), exp(-40.0),
                       1e-30);
}

Test(loss, auc_counts_ties_as_half)
{
    /* positives at 0.9, 0.5, 0.5; negatives at 0.5, 0.1.
     * Pairs (pos, neg): 0.9>0.5, 0.9>0.1, 0.5=0.5 (half) x2, 0.5>0.1 x2:
     * (1 + 1 + 0.5 + 0.5 + 1 + 1) / 6. */
    double s[] = { 0.5, 0.9, 0.1, 0.5, 0.5 };
    unsigned char p[] = { 1, 1, 0, 0, 1 };
    double auc;
    cr_assert_eq(hog_auc(s, p, 5, &auc, NULL), HOG_OK);
    cr_assert_float_eq(auc, 5.0 / 6.0, 1e-12);
    /* perfect and reversed rankings, and a single class */
    double s2[] = { 1, 2, 3, 4 };
    unsigned char p2[] = { 0, 0, 1, 1 }, p3[] = { 1, 1, 0, 0 },
                  p4[] = { 1, 1, 1, 1 };
    cr_assert_eq(hog_auc(s2, p2, 4, &auc, NULL), HOG_OK);
    cr_assert_float_eq(auc, 1.0, 1e-12);
    cr_assert_eq(hog_auc(s2, p3, 4, &auc, NULL), HOG_OK);
    cr_assert_float_eq(auc, 0.0, 1e-12);
    cr_assert_eq(hog_auc(s2, p4, 4, &auc, NULL), HOG_OK);
    cr_assert(isnan(auc));
}

/* The AUC as it was computed before the radix sort: qsort of (score,
 * class) pairs, then the runs of equal scores. The reference for the
 * radix ranks, which must give the same double. */
struct ref_scored {
    double s;
    unsigned char pos;
};

static int ref_cmp(const void *a, const void *b)
{
    double x = ((const struct ref_scored *)a)->s;
    double y = ((const struct ref_scored *)b)->s;
    return (x > y) - (x < y);
}

static double ref_auc(const double *sc, const unsigned char *pos, uint64_t n)
{
    uint64_t n_pos = 0;
    for (uint64_t i = 0; i < n; i++)
        n_pos += pos[i] != 0;
    uint64_t n_neg = n - n_pos;
    if (n_pos == 0 || n_neg == 0)
        return NAN;
    struct ref_scored *a = malloc(n * sizeof *a);
    cr_assert_not_null(a);
    for (uint64_t i = 0; i < n; i++)
        a[i] = (struct ref_scored){ sc[i], pos[i] != 0 };
    qsort(a, n, sizeof *a, ref_cmp);
    double rank_sum = 0.0;
    for (uint64_t i = 0; i < n;) {
        uint64_t j = i + 1, p = a[i].pos;
        while (j < n && a[j].s == a[i].s)
            p += a[j++].pos;
        rank_sum += (double)p * (0.5 * (double)(i + 1 + j));
        i = j;
    }
    free(a);
    double np = (double)n_pos, nn = (double)n_neg;
    return (rank_sum - np * (np + 1) / 2) / (np * nn);
}

/* Random scores with many ties (a few distinct values, both zeros, the
 * infinities, subnormals, wide exponents) and random classes: the radix
 * ranks give the comparison sort's AUC to the last bit, on one thread
 * and on two. */
Test(loss, auc_radix_ranks_equal_the_comparison_sort)
{
    const uint64_t sizes[] = { 2, 3, 17, 1000, 4096, 20000, 70001 };
    struct hog_rng r;
    hog_rng_seed(&r, 42, 0);
    unsigned cases = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        uint64_t n = sizes[si];
        double *sc = malloc(n * sizeof *sc);
        unsigned char *pos = malloc(n);
        cr_assert(sc && pos);
        for (int kind = 0; kind < 5; kind++) {
            for (uint64_t i = 0; i < n; i++) {
                double u = hog_rng_uniform(&r) - 0.5;
                switch (kind) {
                case 0: /* a handful of values: long ties */
                    sc[i] = (double)(int)(u * 8);
                    break;
                case 1: /* few ties, both signs */
                    sc[i] = hog_rng_normal(&r);
                    break;
                case 2: /* rounded: ties among many values */
                    sc[i] = round(u * 200) / 16;
                    break;
                case 3: /* zeros of both signs, infinities, subnormals */
                    sc[i] = (const double[]){ 0.0, -0.0, INFINITY, -INFINITY,
                                              4.9e-324, -4.9e-324, 1e300,
                                              -1e-300, u }[hog_rng_below(&r, 9)];
                    break;
                default: /* wide exponents */
                    sc[i] = ldexp(u, (int)hog_rng_below(&r, 200) - 100);
                    break;
                }
                /* classes skewed per kind, both present */
                pos[i] = i == 0 || (i + 1 < n &&
                                    hog_rng_uniform(&r) < 0.15 + 0.15 * kind);
            }
            double want = ref_auc(sc, pos, n), got1, got2;
            cr_assert_eq(hog_auc(sc, pos, n, &got1, NULL), HOG_OK);
            cr_assert_eq(hog_auc_threads(sc, pos, n, 2, &got2, NULL), HOG_OK);
            cr_assert(got1 == want && got2 == want,
                      "n %llu kind %d: qsort %.17g, radix %.17g / %.17g",
                      (unsigned long long)n, kind, want, got1, got2);
            cases++;
        }
        free(sc);
        free(pos);
    }
    cr_assert_eq(cases, 35);
}
