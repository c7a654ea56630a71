/* model: .hgm save/load, corruption and truncation; LIBLINEAR text models
 * checked against liblinear-train and liblinear-predict themselves. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "io/io.h"

/* ---- small helpers ---------------------------------------------------------- */

static hog_data *read_svm(const char *path)
{
    hog_load_opts o;
    hog_load_opts_init(&o);
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_data_load(path, &o, &d, &err), HOG_OK, "%s", err.msg);
    return d;
}

/* The label hogtrain predicts for each row: label_pos when w.x > 0. */
static void predict_labels(const hog_model *m, const hog_data *d, double *out)
{
    hog_err err;
    uint64_t n = hog_data_rows(d);
    double *s = malloc(n * sizeof *s);
    cr_assert_eq(hog_model_scores(m, d, s, &err), HOG_OK);
    for (uint64_t i = 0; i < n; i++)
        out[i] = m->labels == HOG_LABELS_REAL ? s[i]
                 : s[i] > 0                   ? m->label_pos
                                              : m->label_neg;
    free(s);
}

/* liblinear-predict's output for data and model, one value per row. */
static double *liblinear_predict(const char *dir, const char *data,
                                 const char *model, uint64_t rows)
{
    char out[4096], pred[1100];
    snprintf(pred, sizeof pred, "%s/pred.txt", dir);
    int rc = th_run(out, sizeof out, "liblinear-predict '%s' '%s' '%s'", data,
                    model, pred);
    cr_assert_eq(rc, 0, "liblinear-predict failed: %s", out);
    FILE *f = fopen(pred, "r");
    cr_assert_not_null(f);
    double *v = malloc(rows * sizeof *v);
    for (uint64_t i = 0; i < rows; i++)
        cr_assert_eq(fscanf(f, "%lf", &v[i]), 1, "short prediction file");
    double extra;
    cr_assert_eq(fscanf(f, "%lf", &extra), EOF, "too many predictions");
    fclose(f);
    return v;
}

static hog_model *pattern_model(uint64_t nf, hog_loss loss, double bias)
{
    hog_model *m;
    hog_err err;
    cr_assert_eq(hog_model_new(nf, loss, bias, &m, &err), HOG_OK);
    for (uint64_t j = 0; j < nf + (bias != 0); j++)
        m->w[j] = (float)(sin(1.0 + 0.7 * (double)j) * (j % 3 ? 0.9 : -1.3));
    return m;
}

static const char *heart(void)
{
    const char *p = th_data("heart_scale");
    if (!p)
        cr_skip_test("heart_scale not found under HOGTRAIN_DATA; skipping");
    return p;
}

/* ---- .hgm ------------------------------------------------------------------- */

Test(model, hgm_save_load_save_is_byte_identical)
{
    char dir[1024], a[1100], b[1100];
    hog_err err;
    th_tmpdir(dir, sizeof dir);
    snprintf(a, sizeof a, "%s/a.hgm", dir);
    snprintf(b, sizeof b, "%s/b.hgm", dir);
    hog_model *m = pattern_model(1000, HOG_LOSS_SQHINGE, 0.5);
    m->l1 = 1e-6, m->l2 = 3.5e-4, m->label_pos = 7, m->label_neg = 3;
    m->w[17] = -0.0f;
    cr_assert_eq(hog_model_save(m, a, HOG_MODEL_HGM, &err), HOG_OK, "%s", err.msg);
    hog_model *r;
    cr_assert_eq(hog_model_load(a, &r, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(r->n_features, 1000u);
    cr_assert_eq(r->loss, HOG_LOSS_SQHINGE);
    cr_assert_eq(r->l1, 1e-6);
    cr_assert_eq(r->l2, 3.5e-4);
    cr_assert_eq(r->bias, 0.5);
    cr_assert_eq(r->label_pos, 7);
    cr_assert_eq(r->label_neg, 3);
    cr_assert_eq(r->labels, HOG_LABELS_BINARY);
    cr_assert_eq(memcmp(r->w, m->w, 1001 * sizeof(float)), 0);
    cr_assert_eq(hog_model_save(r, b, HOG_MODEL_HGM, &err), HOG_OK, "%s", err.msg);
    size_t la, lb;
    char *ta = th_slurp(a, &la), *tb = th_slurp(b, &lb);
    cr_assert_eq(la, 88 + 1001 * 4 + 4);
    cr_assert_eq(la, lb);
    cr_assert_eq(memcmp(ta, tb, la), 0);
    /* no temporary file left behind */
    char out[256];
    cr_assert_eq(th_run(out, sizeof out, "ls '%s' | wc -l", dir), 0);
    cr_assert_eq(atoi(out), 2);
    free(ta), free(tb);
    hog_model_free(m), hog_model_free(r);
}

Test(model, hgm_regression_model_without_bias_round_trips)
{
    char dir[1024], a[1100];
    hog_err err;
    th_tmpdir(dir, sizeof dir);
    snprintf(a, sizeof a, "%s/r.hgm", dir);
    hog_model *m = pattern_model(0, HOG_LOSS_SQUARED, 0);
    cr_assert_eq(hog_model_save(m, a, HOG_MODEL_HGM, &err), HOG_OK, "%s", err.msg);
    hog_model *r;
    cr_assert_eq(hog_model_load(a, &r, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(r->n_features, 0u);
    cr_assert_eq(r->bias, 0);
    cr_assert_eq(r->loss, HOG_LOSS_SQUARED);
    cr_assert_eq(r->labels, HOG_LABELS_REAL);
    hog_model_free(m), hog_model_free(r);
}

/* Writes a small .hgm and returns its bytes. */
static char *small_hgm(const char *dir, size_t *len)
{
    char p[1100];
    hog_err err;
    snprintf(p, sizeof p, "%s/small.hgm", dir);
    hog_model *m = pattern_model(5, HOG_LOSS_LOGISTIC, 1.0);
    cr_assert_eq(hog_model_save(m, p, HOG_MODEL_HGM, &err), HOG_OK, "%s", err.msg);
    hog_model_free(m);
    return th_slurp(p, len);
}

Test(model, hgm_every_bit_flip_is_detected)
{
    char dir[1024];
    th_tmpdir(dir, sizeof dir);
    size_t len;
    char *good = small_hgm(dir, &len);
    char *bad = malloc(len);
    int checked = 0;
    for (size_t i = 0; i < len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            memcpy(bad, good, len);
            bad[i] ^= (char)(1 << bit);
            const char *p = th_write(dir, "flip.hgm", bad, len);
            hog_model *m = NULL;
            hog_err err = { "" };
            hog_status s = hog_model_load(p, &m, &err);
            cr_assert_neq(s, HOG_OK, "flip of bit %d of byte %zu not detected",
                          bit, i);
            cr_assert_null(m);
            cr_assert_neq(err.msg[0], 0, "no message for byte %zu", i);
            checked++;
        }
    }
    cr_assert_eq(checked, (int)len * 8);
    free(good), free(bad);
}

Test(model, hgm_every_truncation_is_detected)
{
    char dir[1024];
    th_tmpdir(dir, sizeof dir);
    size_t len;
    char *good = small_hgm(dir, &len);
    for (size_t n = 0; n < len; n++) {
        const char *p = th_write(dir, "cut.hgm", good, n);
        hog_model *m = NULL;
        hog_err err = { "" };
        hog_status s = hog_model_load(p, &m, &err);
        cr_assert_neq(s, HOG_OK, "truncation to %zu bytes not detected", n);
        cr_assert(s == HOG_ECORRUPT || s == HOG_EFORMAT, "status %d at %zu",
                  (int)s, n);
        cr_assert_null(m);
    }
    /* and one byte too many */
    char *more = malloc(len + 1);
    memcpy(more, good, len);
    more[len] = 0;
    hog_model *m = NULL;
    hog_err err;
    cr_assert_eq(hog_model_load(th_write(dir, "long.hgm", more, len + 1), &m, &err),
                 HOG_ECORRUPT);
    free(good), free(more);
}

Test(model, hgm_newer_version_is_refused_by_number)
{
    char dir[1024];
    th_tmpdir(dir, sizeof dir);
    size_t len;
    char *b = small_hgm(dir, &len);
    b[8] = 9, b[9] = 0, b[10] = 0, b[11] = 0;
    const char *p = th_write(dir, "v9.hgm", b, len);
    hog_model *m = NULL;
    hog_err err;
    cr_assert_eq(hog_model_load(p, &m, &err), HOG_EFORMAT);
    char want[1200];
    snprintf(want, sizeof want,
             "%s: .hgm format version 9 is newer than this hogtrain reads (5)", p);
    cr_assert_str_eq(err.msg, want);
    free(b);
}

Test(model, hgm_huge_declared_size_is_refused_before_allocating)
{
    char dir[1024];
    th_tmpdir(dir, sizeof dir);
    size_t len;
    char *b = small_hgm(dir, &len);
    /* n_features and the weight count: 2^60 */
    memset(b + 64, 0, 16);
    b[71] = 0x10, b[79] = 0x10;
    hog_model *m = NULL;
    hog_err err;
    cr_assert_eq(hog_model_load(th_write(dir, "huge.hgm", b, len), &m, &err),
                 HOG_ECORRUPT);
    cr_assert(strstr(err.msg, "declares"), "%s", err.msg);
    free(b);
}

Test(model, not_a_model_is_refused)
{
    char dir[1024];
    th_tmpdir(dir, sizeof dir);
    hog_model *m = NULL;
    hog_err err;
    cr_assert_eq(hog_model_load(th_write(dir, "x", "+1 1:2\n", 7), &m, &err),
                 HOG_EFORMAT);
    cr_assert(strstr(err.msg, "not a model"), "%s", err.msg);
    cr_assert_eq(hog_model_load(th_write(dir, "e", "", 0), &m, &err), HOG_EFORMAT);
    cr_assert_eq(hog_model_load("/nonexistent/m", &m, &err), HOG_EIO);
    cr_assert_null(m);
}

/* ---- LIBLINEAR export, checked by liblinear-predict ------------------------ */

static void check_export(hog_model *m, const char *data, const char *tag)
{
    char dir[1024], mp[1100];
    hog_err err;
    th_tmpdir(dir, sizeof dir);
    snprintf(mp, sizeof mp, "%s/%s.model", dir, tag);
    cr_assert_eq(hog_model_save(m, mp, HOG_MODEL_LIBLINEAR, &err), HOG_OK,
                 "%s: %s", tag, err.msg);
    hog_data *d = read_svm(data);
    uint64_t n = hog_data_rows(d);
    double *mine = malloc(n * sizeof *mine);
    predict_labels(m, d, mine);
    double *theirs = liblinear_predict(dir, data, mp, n);
    int pos = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (m->labels == HOG_LABELS_REAL)
            cr_assert_float_eq(theirs[i], mine[i], 1e-5 * (1 + fabs(mine[i])),
                               "%s row %llu", tag, (unsigned long long)i);
        else
            cr_assert_eq(theirs[i], mine[i], "%s row %llu: liblinear %g, hogtrain %g",
                         tag, (unsigned long long)i, theirs[i], mine[i]);
        pos += mine[i] == m->label_pos;
    }
    if (m->labels != HOG_LABELS_REAL) /* both labels occur: the test can fail */
        cr_assert(pos > 0 && (uint64_t)pos < n, "%s: one label only", tag);
    free(mine), free(theirs);
    hog_data_free(d);
}

Test(model, liblinear_export_predicts_as_hogtrain)
{
    TH_LIBLINEAR_OR_SKIP();
    const char *data = heart();
    hog_model *m = pattern_model(13, HOG_LOSS_LOGISTIC, 1.0);
    check_export(m, data, "lr_bias");
    m->label_pos = 1, m->label_neg = 0;
    check_export(m, data, "labels_1_0");
    m->label_pos = 2, m->label_neg = -5;
    m->l1 = 0.01;
    check_export(m, data, "l1");
    hog_model_free(m);

    m = pattern_model(13, HOG_LOSS_HINGE, -2.5); /* a negative bias value */
    m->w[13] = 0.8f;
    check_export(m, data, "neg_bias");
    hog_model_free(m);

    m = pattern_model(13, HOG_LOSS_SQHINGE, 0);
    check_export(m, data, "no_bias");
    hog_model_free(m);

    m = pattern_model(10, HOG_LOSS_LOGISTIC, 0); /* fewer features than data */
    check_export(m, data, "short");
    hog_model_free(m);

    m = pattern_model(13, HOG_LOSS_SQUARED, 1.0);
    check_export(m, data, "regression");
    hog_model_free(m);
}

Test(model, liblinear_export_writes_liblinears_layout)
{
    char dir[1024], mp[1100];
    hog_err err;
    th_tmpdir(dir, sizeof dir);
    snprintf(mp, sizeof mp, "%s/m", dir);
    hog_model *m = pattern_model(2, HOG_LOSS_LOGISTIC, 1.0);
    m->w[0] = 0.5f, m->w[1] = -0.1f, m->w[2] = 2.0f;
    cr_assert_eq(hog_model_save(m, mp, HOG_MODEL_LIBLINEAR, &err), HOG_OK);
    size_t len;
    char *t = th_slurp(mp, &len);
    cr_assert_str_eq(t, "solver_type L2R_LR\nnr_class 2\nlabel 1 -1\n"
                        "nr_feature 2\nbias 1\nw\n0.5 \n"
                        "-0.10000000149011612 \n2 \n");
    free(t);
    m->loss = HOG_LOSS_SQUARED;
    m->labels = HOG_LABELS_REAL;
    cr_assert_eq(hog_model_save(m, mp, HOG_MODEL_LIBLINEAR, &err), HOG_OK);
    t = th_slurp(mp, &len);
    cr_assert_str_eq(t, "solver_type L2R_L2LOSS_SVR\nnr_class 2\n"
                        "nr_feature 2\nbias 1\nw\n0.5 \n"
                        "-0.10000000149011612 \n2 \n");
    free(t);
    m->loss = HOG_LOSS_LOGISTIC;
    m->labels = HOG_LABELS_BINARY;
    m->label_pos = 0.5;
    cr_assert_eq(hog_model_save(m, mp, HOG_MODEL_LIBLINEAR, &err), HOG_ERANGE);
    cr_assert(strstr(err.msg, "integers"), "%s", err.msg);
    hog_model_free(m);
}

Test(model, liblinear_export_then_load_keeps_the_weights)
{
    char dir[1024], mp[1100];
    hog_err err;
    th_tmpdir(dir, sizeof dir);
    snprintf(mp, sizeof mp, "%s/m", dir);
    struct {
        hog_loss loss;
        double l1, bias, pos, neg;
        hog_loss back;
    } cases[] = {
        { HOG_LOSS_LOGISTIC, 0, 1, 1, -1, HOG_LOSS_LOGISTIC },
        { HOG_LOSS_LOGISTIC, 0.1, 0, 1, 0, HOG_LOSS_LOGISTIC },
        { HOG_LOSS_HINGE, 0, 3, 5, 2, HOG_LOSS_HINGE },
        { HOG_LOSS_SQHINGE, 0.1, -1, 1, -1, HOG_LOSS_SQHINGE },
        { HOG_LOSS_SQUARED, 0, 1, 1, -1, HOG_LOSS_SQUARED },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        hog_model *m = pattern_model(300, cases[c].loss, cases[c].bias);
        m->l1 = cases[c].l1;
        m->label_pos = cases[c].pos, m->label_neg = cases[c].neg;
        m->w[5] = 1e-30f, m->w[6] = -3.4e38f, m->w[7] = 0;
        cr_assert_eq(hog_model_save(m, mp, HOG_MODEL_LIBLINEAR, &err), HOG_OK,
                     "%s", err.msg);
        hog_model *r;
        cr_assert_eq(hog_model_load(mp, &r, &err), HOG_OK, "case %zu: %s", c,
                     err.msg);
        cr_assert_eq(r->n_features, 300u);
        cr_assert_eq(r->loss, cases[c].back, "case %zu", c);
        cr_assert_eq(r->bias, fabs(cases[c].bias), "case %zu", c);
        cr_assert_eq(r->l1 != 0, cases[c].l1 != 0, "case %zu", c);
        cr_assert_eq(r->labels, m->labels);
        if (m->labels == HOG_LABELS_BINARY) {
            cr_assert_eq(r->label_pos, cases[c].pos);
            cr_assert_eq(r->label_neg, cases[c].neg);
        }
        for (int j = 0; j < 300; j++)
            cr_assert_eq(r->w[j], m->w[j], "case %zu weight %d", c, j);
        /* the bias term w_b * b is kept, whatever sign b has */
        cr_assert_eq(hog_model_bias(r), hog_model_bias(m), "case %zu", c);
        hog_model_free(m), hog_model_free(r);
    }
}

/* ---- models trained by liblinear-train -------------------------------------- */

static void check_trained(const char *data, const char *args, hog_loss loss)
{
    char dir[1024], mp[1100], out[4096];
    hog_err err;
    th_tmpdir(dir, sizeof dir);
    snprintf(mp, sizeof mp, "%s/m", dir);
    cr_assert_eq(th_run(out, sizeof out, "liblinear-train -q %s '%s' '%s'", args,
                        data, mp),
                 0, "liblinear-train %s: %s", args, out);
    hog_model *m;
    cr_assert_eq(hog_model_load(mp, &m, &err), HOG_OK, "%s: %s", args, err.msg);
    cr_assert_eq(m->loss, loss, "%s", args);
    hog_data *d = read_svm(data);
    uint64_t n = hog_data_rows(d);
    double *mine = malloc(n * sizeof *mine);
    predict_labels(m, d, mine);
    double *theirs = liblinear_predict(dir, data, mp, n);
    for (uint64_t i = 0; i < n; i++) {
        if (m->labels == HOG_LABELS_REAL)
            cr_assert_float_eq(theirs[i], mine[i], 1e-5 * (1 + fabs(mine[i])),
                               "%s row %llu", args, (unsigned long long)i);
        else
            cr_assert_eq(theirs[i], mine[i], "%s row %llu", args,
                         (unsigned long long)i);
    }
    free(mine), free(theirs);
    hog_data_free(d);
    hog_model_free(m);
}

Test(model, liblinear_trained_models_load_and_predict_alike)
{
    TH_LIBLINEAR_OR_SKIP();
    const char *data = heart();
    check_trained(data, "-s 0", HOG_LOSS_LOGISTIC);
    check_trained(data, "-s 0 -B 1", HOG_LOSS_LOGISTIC);
    check_trained(data, "-s 2 -B 3", HOG_LOSS_SQHINGE);
    check_trained(data, "-s 3", HOG_LOSS_HINGE);
    check_trained(data, "-s 5 -B 1", HOG_LOSS_SQHINGE);
    check_trained(data, "-s 6", HOG_LOSS_LOGISTIC);
    check_trained(data, "-s 11 -B 1", HOG_LOSS_SQUARED);
}

Test(model, liblinear_smaller_label_first_is_negated)
{
    TH_LIBLINEAR_OR_SKIP();
    const char *src = heart();
    /* LIBLINEAR keeps the order of first appearance, except that it puts
     * +1 before -1; with labels 1/0 and a 0 row first it writes "label 0 1".
     * heart_scale starts with a +1 row: move the first -1 row to the top. */
    char dir[1024], mp[1100], out[4096], data[1100];
    th_tmpdir(dir, sizeof dir);
    snprintf(data, sizeof data, "%s/zero_first", dir);
    cr_assert_eq(th_run(out, sizeof out,
                        "awk 'NR==FNR { if (!f && /^-1/) { print; f = NR } next } "
                        "FNR != f' '%s' '%s' | sed -e 's/^-1/0/' -e 's/^+1/1/' > '%s'",
                        src, src, data),
                 0, "%s", out);
    snprintf(mp, sizeof mp, "%s/m", dir);
    cr_assert_eq(th_run(out, sizeof out, "liblinear-train -q -s 0 -B 1 '%s' '%s'",
                        data, mp),
                 0, "%s", out);
    cr_assert_eq(th_run(out, sizeof out, "grep '^label' '%s'", mp), 0);
    cr_assert_str_eq(out, "label 0 1\n");
    hog_model *m;
    hog_err err;
    cr_assert_eq(hog_model_load(mp, &m, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(m->label_pos, 1);
    cr_assert_eq(m->label_neg, 0);
    hog_data *d = read_svm(data);
    uint64_t n = hog_data_rows(d);
    double *mine = malloc(n * sizeof *mine);
    predict_labels(m, d, mine);
    double *theirs = liblinear_predict(dir, data, mp, n);
    int correct = 0;
    for (uint64_t i = 0; i < n; i++) {
        cr_assert_eq(theirs[i], mine[i], "row %llu", (unsigned long long)i);
        correct += mine[i] == d->m.y[i];
    }
    cr_assert_gt(correct, (int)n * 3 / 4, "a trained model predicts well");
    /* exported again, it lists the positive label first and still agrees */
    cr_assert_eq(hog_model_save(m, mp, HOG_MODEL_LIBLINEAR, &err), HOG_OK);
    double *again = liblinear_predict(dir, data, mp, n);
    for (uint64_t i = 0; i < n; i++)
        cr_assert_eq(again[i], mine[i]);
    free(mine), free(theirs), free(again);
    hog_data_free(d);
    hog_model_free(m);
}

/* ---- malformed LIBLINEAR text ------------------------------------------------ */

static void expect_bad(const char *text, hog_status want, const char *line,
                       const char *why)
{
    char dir[1024];
    th_tmpdir(dir, sizeof dir);
    const char *p = th_write(dir, "bad.model", text, strlen(text));
    hog_model *m = NULL;
    hog_err err = { "" };
    hog_status s = hog_model_load(p, &m, &err);
    cr_assert_eq(s, want, "\"%s\": status %d (%s)", text, (int)s, err.msg);
    cr_assert_null(m);
    char prefix[1200];
    snprintf(prefix, sizeof prefix, "%s:%s: ", p, line);
    cr_assert_eq(strncmp(err.msg, prefix, strlen(prefix)), 0,
                 "message \"%s\" does not start with \"%s\"", err.msg, prefix);
    cr_assert(strstr(err.msg, why), "message \"%s\" lacks \"%s\"", err.msg, why);
}

#define HEAD "solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 2\nbias -1\n"

Test(model, liblinear_malformed_text_names_file_and_line)
{
    expect_bad(HEAD "w\n0.5 \n", HOG_ECORRUPT, "7", "truncated");
    expect_bad("solver_type L2R_LR\nnr_class 2\nlabel 1 -1\n"
               "nr_feature 4000000000\nbias -1\nw\n0.5 \n",
               HOG_ECORRUPT, "6", "nr_feature 4000000000");
    expect_bad(HEAD "w\n0.5 \nabc \n", HOG_EPARSE, "8", "one weight per line");
    expect_bad(HEAD "w\n0.5 \n1 2 \n", HOG_EPARSE, "8", "one weight per line");
    expect_bad(HEAD "w\n0.5 \n1 \n3 \n", HOG_EPARSE, "9", "after the 2 weights");
    expect_bad(HEAD "w\n0.5 \n1e999 \n", HOG_ERANGE, "8", "float");
    expect_bad(HEAD, HOG_EPARSE, "5", "\"w\"");
    expect_bad("solver_type FOO\n", HOG_ENOTSUP, "1", "FOO");
    expect_bad("solver_type L2R_LR\nnr_class 2\nlabel 1\n", HOG_EPARSE, "3",
               "label needs 2 numbers");
    expect_bad("solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature x\n",
               HOG_EPARSE, "4", "nr_feature");
    expect_bad("solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 2\n"
               "colour blue\n",
               HOG_EPARSE, "5", "unknown keyword");
    expect_bad("solver_type L2R_LR\nnr_class 2\nnr_feature 2\nbias -1\nw\n",
               HOG_EPARSE, "5", "label");
}

Test(model, liblinear_regression_without_label_line_loads)
{
    char dir[1024];
    th_tmpdir(dir, sizeof dir);
    const char *t = "solver_type L2R_L2LOSS_SVR_DUAL\nnr_class 2\nnr_feature 2\n"
                    "bias 0\nw\n0.25 \n-1 \n7 \n";
    const char *p = th_write(dir, "r.model", t, strlen(t));
    hog_model *m;
    hog_err err;
    cr_assert_eq(hog_model_load(p, &m, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(m->loss, HOG_LOSS_SQUARED);
    cr_assert_eq(m->labels, HOG_LABELS_REAL);
    cr_assert_eq(m->bias, 0); /* a bias feature of value 0 adds nothing */
    cr_assert_eq(m->w[0], 0.25f);
    cr_assert_eq(m->w[1], -1.0f);
    cr_assert_eq(hog_model_bias(m), 0.0);
    hog_model_free(m);
}

/* Text cut anywhere before the last weight's line is refused; cut inside
 * the last number it may read as a shorter number, as any text would. */
Test(model, liblinear_every_truncation_is_refused_or_harmless)
{
    char dir[1024], mp[1100];
    hog_err err;
    th_tmpdir(dir, sizeof dir);
    snprintf(mp, sizeof mp, "%s/m", dir);
    hog_model *m = pattern_model(6, HOG_LOSS_LOGISTIC, 1.0);
    cr_assert_eq(hog_model_save(m, mp, HOG_MODEL_LIBLINEAR, &err), HOG_OK);
    size_t len;
    char *t = th_slurp(mp, &len);
    size_t last = len - 2; /* start of the last line */
    while (last > 0 && t[last - 1] != '\n')
        last--;
    for (size_t n = 0; n < len; n++) {
        hog_model *r = NULL;
        hog_status s = hog_model_load(th_write(dir, "cut", t, n), &r, &err);
        if (n <= last) {
            cr_assert_neq(s, HOG_OK, "cut at %zu of %zu loaded", n, len);
            cr_assert_null(r);
        } else if (s == HOG_OK) {
            cr_assert_eq(memcmp(r->w, m->w, 6 * sizeof(float)), 0);
        }
        hog_model_free(r);
    }
    free(t);
    hog_model_free(m);
}
