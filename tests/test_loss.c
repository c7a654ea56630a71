/* loss: values and derivatives of every loss; the AUC and other metrics. */
#include <criterion/criterion.h>
#include <math.h>

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
                double fd = (hog_loss_value(loss, y, m + h) -
                             hog_loss_value(loss, y, m - h)) /
                            (2 * h);
                double d = hog_loss_deriv(loss, y, m);
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
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_LOGISTIC, 1, 0), log(2.0), 1e-15);
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_LOGISTIC, -1, 2),
                       log1p(exp(2.0)), 1e-14);
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_HINGE, 1, 0.25), 0.75, 1e-15);
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_HINGE, -1, -3), 0.0, 1e-15);
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_SQHINGE, -1, 0.5), 2.25, 1e-15);
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_SQUARED, 3, 1), 2.0, 1e-15);
    cr_assert_float_eq(hog_loss_deriv(HOG_LOSS_LOGISTIC, 1, 0), -0.5, 1e-15);
    cr_assert_float_eq(hog_loss_deriv(HOG_LOSS_SQHINGE, 1, 0.5), -1.0, 1e-15);
    cr_assert_float_eq(hog_loss_deriv(HOG_LOSS_SQUARED, 3, 1), -2.0, 1e-15);
}

Test(loss, logistic_is_stable_for_large_margins)
{
    const double ms[] = { 1e3, 1e5, 1e300, 710.0, 745.0, 40.0 };
    for (int i = 0; i < 6; i++) {
        double m = ms[i];
        /* right side: tiny but exact-ish, never NaN */
        double v = hog_loss_value(HOG_LOSS_LOGISTIC, 1, m);
        cr_assert(isfinite(v) && v >= 0 && v <= exp(-m) * 1.0000001 + 1e-300,
                  "loss(+1, %g) = %g", m, v);
        double d = hog_loss_deriv(HOG_LOSS_LOGISTIC, 1, m);
        cr_assert(isfinite(d) && d <= 0 && d > -1e-17, "d(+1, %g) = %g", m, d);
        /* wrong side: linear, no overflow */
        v = hog_loss_value(HOG_LOSS_LOGISTIC, 1, -m);
        cr_assert(isfinite(v) && fabs(v - m) <= 1e-12 * m + 1e-15,
                  "loss(+1, %g) = %g", -m, v);
        d = hog_loss_deriv(HOG_LOSS_LOGISTIC, 1, -m);
        cr_assert(isfinite(d) && fabs(d + 1) < 1e-15, "d(+1, %g) = %g", -m, d);
        d = hog_loss_deriv(HOG_LOSS_LOGISTIC, -1, m);
        cr_assert(isfinite(d) && fabs(d - 1) < 1e-15, "d(-1, %g) = %g", m, d);
    }
    /* small margins keep full precision: log1p(exp(-z)) at z = 40 */
    cr_assert_float_eq(hog_loss_value(HOG_LOSS_LOGISTIC, 1, 40), exp(-40.0),
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
