/* predict --probabilities against liblinear-predict -b 1 on the same
 * LIBLINEAR logistic models (binary a9a, 20-class news20), row by row;
 * softmax models' probabilities against their scores; hinge models
 * refused with a sentence. */
#include <criterion/criterion.h>

#include "core/core.h"
#include "helpers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Compares the two files line by line: the header equal, each row's label
 * equal and its probabilities within tol; returns the rows compared. */
static uint64_t same_probabilities(const char *a, const char *b, double tol)
{
    FILE *fa = fopen(a, "r"), *fb = fopen(b, "r");
    cr_assert(fa && fb);
    char *la = NULL, *lb = NULL;
    size_t ca = 0, cb = 0;
    uint64_t rows = 0;
    cr_assert(getline(&la, &ca, fa) > 0 && getline(&lb, &cb, fb) > 0);
    cr_assert_str_eq(la, lb, "the label headers differ");
    for (;; rows++) {
        ssize_t na = getline(&la, &ca, fa), nb = getline(&lb, &cb, fb);
        cr_assert_eq(na > 0, nb > 0, "row counts differ at %llu",
                     (unsigned long long)rows);
        if (na <= 0)
            break;
        char *pa = la, *pb = lb;
        cr_assert_eq(strtod(pa, &pa), strtod(pb, &pb), "row %llu's label",
                     (unsigned long long)rows + 1);
        for (int c = 0;; c++) {
            double x = strtod(pa, &pa), y = strtod(pb, &pb);
            while (*pa == ' ')
                pa++;
            while (*pb == ' ')
                pb++;
            cr_assert(fabs(x - y) <= tol, "row %llu class %d: %.9g vs %.9g",
                      (unsigned long long)rows + 1, c, x, y);
            if (*pa == '\n' || !*pa) {
                cr_assert(*pb == '\n' || !*pb, "row %llu: more classes",
                          (unsigned long long)rows + 1);
                break;
            }
        }
    }
    free(la);
    free(lb);
    fclose(fa);
    fclose(fb);
    return rows;
}

static void against_liblinear(const char *train_name, const char *test_name,
                              uint64_t rows)
{
    TH_LIBLINEAR_OR_SKIP();
    TH_DATA_OR_SKIP(tr, train_name);
    TH_DATA_OR_SKIP(te, test_name);
    char dir[256], out[4096];
    cr_assert(th_tmpdir(dir, sizeof dir));
    cr_assert_eq(th_run(out, sizeof out, "liblinear-train -q -s 0 %s %s/m && "
                        "liblinear-predict -b 1 %s %s/m %s/ll.out", tr, dir,
                        te, dir, dir), 0, "%s", out);
    cr_assert_eq(th_run(out, sizeof out, "%s predict -q --probabilities %s/m "
                        "%s -o %s/hog.out", th_bin(), dir, te, dir), 0, "%s",
                 out);
    char a[300], b[300];
    snprintf(a, sizeof a, "%s/ll.out", dir);
    snprintf(b, sizeof b, "%s/hog.out", dir);
    cr_assert_eq(same_probabilities(a, b, 1e-4), rows);
}

Test(probabilities, a9a_equals_liblinear_predict_b1, .timeout = 60)
{
    against_liblinear("a9a", "a9a.t", 16281);
}

Test(probabilities, news20_equals_liblinear_predict_b1, .timeout = 120)
{
    TH_HEAVY_OR_SKIP();
    against_liblinear("news20.train.svm", "news20.test.svm", 7532);
}

/* A softmax model's probabilities are exp(s_c) / sum over its scores; a
 * hinge model has none. */
Test(probabilities, softmax_from_scores_and_hinge_refused)
{
    const char *text = "1 1:1 2:0.5\n2 2:1 3:0.2\n3 1:0.3 3:1\n"
                       "1 1:0.9\n2 2:0.8\n3 1:0.1 3:0.7\n";
    char dir[256];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *p = th_write(dir, "t.svm", text, strlen(text));
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_data_load(p, &lo, &d, &err), HOG_OK, "%s", err.msg);
    hog_train_opts o;
    th_opts_init(&o);
    o.multiclass = HOG_MULTICLASS_SOFTMAX;
    o.epochs = 20;
    hog_model *m;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_OK, "%s", err.msg);
    double s[18], q[18];
    cr_assert_eq(hog_model_scores(m, d, s, &err), HOG_OK);
    cr_assert_eq(hog_model_probabilities(m, d, q, &err), HOG_OK);
    for (int i = 0; i < 6; i++) {
        double z = 0, sum = 0;
        for (int c = 0; c < 3; c++)
            z += exp(s[i * 3 + c]);
        for (int c = 0; c < 3; c++) {
            cr_assert_float_eq(q[i * 3 + c], exp(s[i * 3 + c]) / z, 1e-12);
            sum += q[i * 3 + c];
        }
        cr_assert_float_eq(sum, 1.0, 1e-12);
    }
    hog_model_free(m);
    o.multiclass = HOG_MULTICLASS_OVR;
    o.loss = HOG_LOSS_HINGE;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_model_probabilities(m, d, q, &err), HOG_ENOTSUP);
    cr_assert(strstr(err.msg, "logistic"), "%s", err.msg);
    char mp[300], out[2048];
    snprintf(mp, sizeof mp, "%s/h.hgm", dir);
    cr_assert_eq(hog_model_save(m, mp, HOG_MODEL_HGM, &err), HOG_OK);
    int rc = th_run(out, sizeof out, "%s predict --probabilities %s %s",
                    th_bin(), mp, p);
    cr_assert_neq(rc, 0);
    cr_assert(strstr(out, "probabilities come from logistic"), "%s", out);
    hog_model_free(m);
    hog_data_free(d);
}
