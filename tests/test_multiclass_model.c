/* multiclass_model: K-class model files (.hgm version 2 and LIBLINEAR's
 * K-column text), binary files byte for byte as before, and predict and
 * info of K-class models; LIBLINEAR interop checked by liblinear-train and
 * liblinear-predict themselves, on news20 and abalone. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "io/io.h"

#define OUT_MAX (1 << 16)
static char out[OUT_MAX];

/* Runs "hogtrain ARGS" (stdout and stderr together into out). */
#define HT(...) th_run(out, sizeof out, "'%s' " __VA_ARGS__)

/* ---- models built here ---------------------------------------------------------- */

/* A K-class model of nf features: class c's weight j is a pattern of c and
 * j, exactly representable. */
static hog_model *k_model(uint64_t nf, double bias, uint32_t k,
                          const double *labels, hog_multiclass mc)
{
    hog_model *m;
    hog_err err;
    cr_assert_eq(hog_model_new(nf, HOG_LOSS_LOGISTIC, bias, &m, &err), HOG_OK);
    cr_assert_eq(hog_model_set_classes(m, k, labels, mc, &err), HOG_OK, "%s",
                 err.msg);
    uint64_t len = hog_model_vector_len(m);
    for (uint32_t c = 0; c < k; c++)
        for (uint64_t j = 0; j < len; j++)
            m->w[c * len + j] = (float)((int)((j * 7 + c * 3) % 11) - 5) / 4.0f;
    return m;
}

static const char *path_in(char *buf, size_t len, const char *dir,
                           const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
    return buf;
}

static void save_ok(const hog_model *m, const char *p, hog_model_format fmt)
{
    hog_err err;
    cr_assert_eq(hog_model_save(m, p, fmt, &err), HOG_OK, "%s", err.msg);
}

static hog_model *load_ok(const char *p)
{
    hog_model *m = NULL;
    hog_err err;
    cr_assert_eq(hog_model_load(p, &m, &err), HOG_OK, "%s", err.msg);
    return m;
}

/* The load of p fails with status want, a message that starts with
 * "p:" + line (line NULL: "p: ") and holds why. */
static void expect_refused(const char *p, hog_status want, const char *line,
                           const char *why)
{
    hog_model *m = NULL;
    hog_err err = { "" };
    hog_status s = hog_model_load(p, &m, &err);
    cr_assert_eq(s, want, "%s: status %d (%s)", p, (int)s, err.msg);
    cr_assert_null(m);
    char prefix[1200];
    snprintf(prefix, sizeof prefix, "%s:%s%s", p, line ? line : "",
             line ? ": " : " ");
    cr_assert_eq(strncmp(err.msg, prefix, strlen(prefix)), 0,
                 "message \"%s\" does not start with \"%s\"", err.msg, prefix);
    cr_assert(strstr(err.msg, why), "message \"%s\" lacks \"%s\"", err.msg, why);
}

/* ---- .hgm version 2 ------------------------------------------------------------ */

Test(multiclass_model, hgm_round_trip_keeps_classes_mode_and_weights)
{
    char dir[1024], a[1100], b[1100];
    th_tmpdir(dir, sizeof dir);
    const double labels[] = { 3, -1, 7.5, 0, 12 };
    for (int mc = 0; mc < 2; mc++) {
        for (int with_bias = 0; with_bias < 2; with_bias++) {
            hog_model *m = k_model(100, with_bias ? 2.5 : 0, 5, labels,
                                   (hog_multiclass)mc);
            m->l1 = 1e-6, m->l2 = 3e-4;
            m->w[17] = -0.0f;
            save_ok(m, path_in(a, sizeof a, dir, "k.hgm"), HOG_MODEL_HGM);
            hog_model *r = load_ok(a);
            th_assert_same_model(m, r, "the model");
            cr_assert_eq(r->l1, 1e-6);
            cr_assert_eq(r->l2, 3e-4);
            /* the public view */
            const double *cl;
            cr_assert_eq(hog_model_classes(r, &cl), 5u);
            cr_assert_eq(cl[2], 7.5);
            cr_assert_eq(hog_model_multiclass(r), (hog_multiclass)mc);
            cr_assert_eq(hog_model_weights(r)[hog_model_vector_len(r) + 3],
                         m->w[hog_model_vector_len(m) + 3]);
            /* the layout: version 2, header 104 + 8 K, then the weights */
            save_ok(r, path_in(b, sizeof b, dir, "again.hgm"), HOG_MODEL_HGM);
            size_t la, lb;
            char *ta = th_slurp(a, &la), *tb = th_slurp(b, &lb);
            uint64_t nw = 5 * (100 + (uint64_t)with_bias);
            cr_assert_eq(la, 104 + 8 * 5 + 4 * nw + 4);
            cr_assert_eq(ta[8], 2, "version");
            cr_assert_eq((unsigned char)ta[12], 104 + 40, "header size");
            cr_assert_eq(ta[88], 5, "K");
            cr_assert_eq(ta[92], mc, "mode");
            cr_assert_eq(la, lb);
            cr_assert_eq(memcmp(ta, tb, la), 0, "saving a loaded model "
                         "gives other bytes");
            free(ta), free(tb);
            hog_model_free(m), hog_model_free(r);
        }
    }
    /* two "classes" are a binary model: the API's caller is told */
    hog_model *m = k_model(3, 0, 3, labels, HOG_MULTICLASS_OVR);
    m->n_classes = 2;
    hog_err err;
    cr_assert_eq(hog_model_save(m, a, HOG_MODEL_HGM, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "K-class models have 3 or more"), "%s", err.msg);
    hog_model_free(m);
}

/* tests/data/model_v1_*.hgm were written by hogtrain before K-class files
 * existed (commit 6dcaf78), from exactly these two models. */
static hog_model *fixture_binary(void)
{
    hog_model *m;
    hog_err err;
    cr_assert_eq(hog_model_new(6, HOG_LOSS_LOGISTIC, 1.0, &m, &err), HOG_OK);
    for (int j = 0; j < 7; j++)
        m->w[j] = (float)(j - 3) / 8.0f;
    m->l1 = 0.0, m->l2 = 1e-4, m->label_pos = 2, m->label_neg = -5;
    return m;
}

static hog_model *fixture_regression(void)
{
    hog_model *m;
    hog_err err;
    cr_assert_eq(hog_model_new(4, HOG_LOSS_SQUARED, 0.0, &m, &err), HOG_OK);
    for (int j = 0; j < 4; j++)
        m->w[j] = 0.25f * (float)(j + 1);
    m->l1 = 0.5, m->l2 = 0;
    return m;
}

Test(multiclass_model, binary_files_equal_the_version_1_bytes_of_before)
{
    char dir[1024], p[1100];
    th_tmpdir(dir, sizeof dir);
    struct {
        hog_model *(*make)(void);
        const char *fixture;
        size_t size;
    } cases[] = {
        { fixture_binary, "tests/data/model_v1_binary.hgm", 88 + 7 * 4 + 4 },
        { fixture_regression, "tests/data/model_v1_regression.hgm", 88 + 4 * 4 + 4 },
    };
    for (size_t i = 0; i < 2; i++) {
        hog_model *m = cases[i].make();
        save_ok(m, path_in(p, sizeof p, dir, "now.hgm"), HOG_MODEL_HGM);
        size_t ln, lf;
        char *now = th_slurp(p, &ln), *before = th_slurp(cases[i].fixture, &lf);
        cr_assert_eq(lf, cases[i].size, "%s", cases[i].fixture);
        cr_assert_eq(ln, lf, "%s: %zu bytes now, %zu before", cases[i].fixture,
                     ln, lf);
        cr_assert_eq(memcmp(now, before, ln), 0, "%s: other bytes now",
                     cases[i].fixture);
        cr_assert_eq(now[8], 1, "binary models stay version 1");
        free(now), free(before);
        hog_model_free(m);
    }
}

Test(multiclass_model, version_1_files_still_load)
{
    hog_model *m = load_ok("tests/data/model_v1_binary.hgm");
    hog_model *want = fixture_binary();
    cr_assert_eq(m->n_classes, 0u);
    cr_assert_null(m->classes);
    cr_assert_eq(hog_model_classes(m, NULL), 0u);
    cr_assert_eq(m->label_pos, 2);
    cr_assert_eq(m->label_neg, -5);
    cr_assert_eq(m->labels, HOG_LABELS_BINARY);
    th_assert_same_model(m, want, "the model");
    hog_model_free(m), hog_model_free(want);
    m = load_ok("tests/data/model_v1_regression.hgm");
    want = fixture_regression();
    cr_assert_eq(m->labels, HOG_LABELS_REAL);
    cr_assert_eq(m->l1, 0.5);
    th_assert_same_model(m, want, "the model");
    hog_model_free(m), hog_model_free(want);
}

/* A small K-class .hgm and its bytes. */
static char *small_k_hgm(const char *dir, size_t *len)
{
    char p[1100];
    const double labels[] = { 1, 2, 3 };
    hog_model *m = k_model(2, 1.0, 3, labels, HOG_MULTICLASS_OVR);
    save_ok(m, path_in(p, sizeof p, dir, "small.hgm"), HOG_MODEL_HGM);
    hog_model_free(m);
    return th_slurp(p, len);
}

Test(multiclass_model, hgm_every_bit_flip_and_truncation_is_refused)
{
    char dir[1024];
    th_tmpdir(dir, sizeof dir);
    size_t len;
    char *good = small_k_hgm(dir, &len);
    cr_assert_eq(len, 104 + 24 + 9 * 4 + 4);
    char *bad = malloc(len + 1);
    for (size_t i = 0; i < len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            memcpy(bad, good, len);
            bad[i] ^= (char)(1 << bit);
            const char *p = th_write(dir, "flip.hgm", bad, len);
            hog_model *m = NULL;
            hog_err err = { "" };
            cr_assert_neq(hog_model_load(p, &m, &err), HOG_OK,
                          "flip of bit %d of byte %zu not detected", bit, i);
            cr_assert_null(m);
            cr_assert_eq(strncmp(err.msg, p, strlen(p)), 0,
                         "byte %zu: \"%s\" does not name the file", i, err.msg);
        }
    }
    for (size_t n = 0; n <= len; n++) {
        memcpy(bad, good, len);
        bad[len] = 0;
        const char *p = th_write(dir, "cut.hgm", bad, n == len ? len + 1 : n);
        hog_model *m = NULL;
        hog_err err = { "" };
        hog_status s = hog_model_load(p, &m, &err);
        cr_assert(s == HOG_ECORRUPT || s == HOG_EFORMAT,
                  "%zu bytes: status %d (%s)", n, (int)s, err.msg);
        cr_assert_null(m);
        cr_assert_eq(strncmp(err.msg, p, strlen(p)), 0, "%s", err.msg);
    }
    free(good), free(bad);
}

/* Sets the CRC32C at the end of a .hgm in memory. */
static void reseal(char *b, size_t len)
{
    uint32_t crc = hog_crc32c(0, b, len - 4);
    for (int i = 0; i < 4; i++)
        b[len - 4 + (size_t)i] = (char)(crc >> (8 * i));
}

static void put_le(char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (char)(v >> (8 * i));
}

Test(multiclass_model, hgm_bad_fields_are_named)
{
    char dir[1024];
    th_tmpdir(dir, sizeof dir);
    size_t len;
    char *good = small_k_hgm(dir, &len);
    char *b = malloc(len);
    double v;
    struct {
        size_t off;
        int bytes;
        uint64_t value;
        bool seal;
        const char *why;
    } cases[] = {
        { 88, 4, 2, false, "2 classes (a K-class model has 3 to" },
        { 88, 4, 1u << 30, false, "classes (a K-class model has 3 to" },
        { 12, 4, 120, false, "header size 120, version 2 with 3 classes has 128" },
        { 92, 4, 7, true, "unknown multiclass mode" },
        { 16, 4, HOG_LOSS_SQUARED, true, "K classes of a regression model" },
        { 20, 4, HOG_LABELS_REAL, true, "K classes of a regression model" },
        { 72, 8, 10, false, "header declares 10 weights" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(b, good, len);
        put_le(b + cases[i].off, cases[i].value, cases[i].bytes);
        if (cases[i].seal)
            reseal(b, len);
        char name[32];
        snprintf(name, sizeof name, "bad%zu.hgm", i);
        expect_refused(th_write(dir, name, b, len), HOG_ECORRUPT, NULL,
                       cases[i].why);
    }
    /* softmax needs the logistic loss */
    memcpy(b, good, len);
    put_le(b + 92, HOG_MULTICLASS_SOFTMAX, 4);
    put_le(b + 16, HOG_LOSS_HINGE, 4);
    reseal(b, len);
    expect_refused(th_write(dir, "sm.hgm", b, len), HOG_ECORRUPT, NULL,
                   "softmax model without the logistic loss");
    /* a label twice, a label not finite */
    memcpy(b, good, len);
    memcpy(b + 104 + 16, b + 104, 8);
    reseal(b, len);
    expect_refused(th_write(dir, "dup.hgm", b, len), HOG_ECORRUPT, NULL,
                   "listed twice");
    memcpy(b, good, len);
    v = NAN;
    memcpy(b + 104 + 8, &v, 8);
    reseal(b, len);
    expect_refused(th_write(dir, "nan.hgm", b, len), HOG_ECORRUPT, NULL,
                   "not finite");
    /* and a version this hogtrain does not know */
    memcpy(b, good, len);
    put_le(b + 8, 6, 4);
    expect_refused(th_write(dir, "v6.hgm", b, len), HOG_EFORMAT, NULL,
                   ".hgm format version 6 is newer than this hogtrain reads (5)");
    free(good), free(b);
}

/* ---- LIBLINEAR text of K classes -------------------------------------------------- */

Test(multiclass_model, liblinear_export_writes_k_columns_in_class_order)
{
    char dir[1024], p[1100];
    th_tmpdir(dir, sizeof dir);
    const double labels[] = { 3, 1, 2 };
    hog_model *m = k_model(2, 1.0, 3, labels, HOG_MULTICLASS_OVR);
    const float w[] = { 0.5f, -0.25f, 1, 0, 2, -0.5f, 0.125f, 0, 3 };
    memcpy(m->w, w, sizeof w);
    save_ok(m, path_in(p, sizeof p, dir, "m"), HOG_MODEL_LIBLINEAR);
    size_t len;
    char *t = th_slurp(p, &len);
    cr_assert_str_eq(t, "solver_type L2R_LR\nnr_class 3\nlabel 3 1 2\n"
                        "nr_feature 2\nbias 1\nw\n"
                        "0.5 0 0.125 \n-0.25 2 0 \n1 -0.5 3 \n");
    free(t);
    /* a negative bias value: |b|, and every class's bias weight negated */
    m->bias = -2;
    save_ok(m, p, HOG_MODEL_LIBLINEAR);
    t = th_slurp(p, &len);
    cr_assert(strstr(t, "bias 2\nw\n0.5 0 0.125 \n-0.25 2 0 \n-1 0.5 -3 \n"),
              "%s", t);
    free(t);
    /* LIBLINEAR's labels are integers */
    m->classes[1] = 1.5;
    hog_err err;
    cr_assert_eq(hog_model_save(m, p, HOG_MODEL_LIBLINEAR, &err), HOG_ERANGE);
    cr_assert(strstr(err.msg, "class 2 of 3 is 1.5"), "%s", err.msg);
    hog_model_free(m);
}

Test(multiclass_model, liblinear_k_class_text_loads_as_k_vectors)
{
    char dir[1024];
    th_tmpdir(dir, sizeof dir);
    const char *t = "solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 3\n"
                    "label 4 -2 7\nnr_feature 2\nbias 0\nw\n"
                    "0.5 1 -1 \n0.25 -0.5 2 \n9 9 9 \n";
    hog_model *m = load_ok(th_write(dir, "k.model", t, strlen(t)));
    cr_assert_eq(m->n_classes, 3u);
    cr_assert_eq(m->multiclass, HOG_MULTICLASS_OVR);
    cr_assert_eq(m->loss, HOG_LOSS_SQHINGE);
    cr_assert(isnan(m->l2));
    cr_assert_eq(m->classes[0], 4);
    cr_assert_eq(m->classes[1], -2);
    cr_assert_eq(m->classes[2], 7);
    cr_assert_eq(m->bias, 0); /* bias 0: its line is read and dropped */
    const float want[] = { 0.5f, 0.25f, 1, -0.5f, -1, 2 };
    cr_assert_eq(hog_model_len(m), 6u);
    cr_assert_eq(memcmp(m->w, want, sizeof want), 0);
    hog_model_free(m);

    /* export and load again: the same model, bit for bit */
    char p[1100];
    const double labels[] = { 10, 20, 30, 40 };
    hog_model *k = k_model(50, 1.0, 4, labels, HOG_MULTICLASS_SOFTMAX);
    k->w[3] = 1e-30f, k->w[60] = -3.4e38f, k->w[70] = 0.1f;
    save_ok(k, path_in(p, sizeof p, dir, "e.model"), HOG_MODEL_LIBLINEAR);
    hog_model *r = load_ok(p);
    cr_assert_eq(r->multiclass, HOG_MULTICLASS_OVR, "LIBLINEAR has no softmax "
                 "mode: its labels are the arg-max either way");
    /* written as Crammer-Singer's, read back as its hinge loss: LIBLINEAR
     * gives it no probabilities, rather than one-vs-rest ones */
    cr_assert_eq(r->loss, HOG_LOSS_HINGE);
    r->multiclass = k->multiclass;
    r->loss = k->loss;
    th_assert_same_model(k, r, "the model");
    hog_model_free(k), hog_model_free(r);
}

Test(multiclass_model, liblinear_crammer_singer_of_two_classes_loads_as_binary)
{
    char dir[1024];
    th_tmpdir(dir, sizeof dir);
    /* two columns; label[0] wins when its score is the larger */
    const char *t = "solver_type MCSVM_CS\nnr_class 2\nlabel 1 -1\n"
                    "nr_feature 2\nbias -1\nw\n0.5 0.25 \n-1 1 \n";
    hog_model *m = load_ok(th_write(dir, "cs.model", t, strlen(t)));
    cr_assert_eq(m->n_classes, 0u);
    cr_assert_eq(m->loss, HOG_LOSS_HINGE);
    cr_assert_eq(m->label_pos, 1);
    cr_assert_eq(m->label_neg, -1);
    cr_assert_eq(m->w[0], 0.25f);
    cr_assert_eq(m->w[1], -2.0f);
    hog_model_free(m);
    t = "solver_type MCSVM_CS\nnr_class 2\nlabel -1 1\n"
        "nr_feature 2\nbias -1\nw\n0.5 0.25 \n-1 1 \n";
    m = load_ok(th_write(dir, "cs2.model", t, strlen(t)));
    cr_assert_eq(m->label_pos, 1);
    cr_assert_eq(m->w[0], -0.25f);
    cr_assert_eq(m->w[1], 2.0f);
    hog_model_free(m);
}

#define K3 "solver_type L2R_LR\nnr_class 3\nlabel 1 2 3\nnr_feature 2\nbias -1\n"

static void expect_bad_text(const char *text, hog_status want,
                            const char *line, const char *why)
{
    char dir[1024];
    th_tmpdir(dir, sizeof dir);
    expect_refused(th_write(dir, "bad.model", text, strlen(text)), want, line,
                   why);
}

Test(multiclass_model, liblinear_k_class_malformed_text_names_file_and_line)
{
    expect_bad_text(K3 "w\n0.5 1 2 \n0.5 1 \n", HOG_EPARSE, "8",
                    "expected 3 weights per line, one per class (found 2)");
    expect_bad_text(K3 "w\n0.5 1 2 3 \n", HOG_EPARSE, "7",
                    "expected 3 weights per line, one per class (found more)");
    expect_bad_text(K3 "w\n0.5 1 2 \n", HOG_ECORRUPT, "7",
                    "end of file after 1 of 2 lines of weights (truncated)");
    expect_bad_text(K3 "w\n0.5 1 2 \n0.5 1e999 2 \n", HOG_ERANGE, "8",
                    "weight 1e999 does not fit a float");
    expect_bad_text(K3 "w\n0.5 1 2 \n0.5 1 2 \nx\n", HOG_EPARSE, "9",
                    "after the 2 lines of weights");
    expect_bad_text("solver_type L2R_LR\nnr_class 3\nlabel 1 2\n", HOG_EPARSE,
                    "3", "label needs 3 numbers, one per class (found 2)");
    expect_bad_text("solver_type L2R_LR\nlabel 1 2\nnr_class 3\nnr_feature 1\n"
                    "w\n1 2 3 \n",
                    HOG_EPARSE, "5", "label lists 2 classes, but nr_class is 3");
    expect_bad_text("solver_type L2R_LR\nnr_class 3\nlabel 1 2 1\nnr_feature 1\n"
                    "w\n1 2 3 \n",
                    HOG_EPARSE, "5", "listed twice");
    expect_bad_text("solver_type L2R_LR\nnr_class 200000\n", HOG_ENOTSUP, "2",
                    "hogtrain reads at most 100000");
    expect_bad_text("solver_type L2R_LR\nnr_class 3\nlabel 1 2 3\n"
                    "nr_feature 100000\nbias -1\nw\n1 2 3 \n",
                    HOG_ECORRUPT, "6", "holds fewer weights");
}

/* ---- predict and info of K classes, on data made here --------------------------- */

/* n rows of three classes, labelled 2, 5, 9 and first seen in that order
 * (unless first is another label: then row 0 has it): class c has feature
 * c + 1 and two of the features 4..23; one row in eight is labelled with
 * the next class, so that no model is perfect. */
static const char *write_classes(const char *dir, const char *name, unsigned n,
                                 unsigned seed, int first)
{
    static const int label[] = { 2, 5, 9 };
    size_t cap = (size_t)n * 64 + 64, len = 0;
    char *t = malloc(cap);
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (unsigned i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        unsigned c = i < 3 ? i : (unsigned)(x >> 33) % 3;
        unsigned a = 4 + (unsigned)(x >> 40) % 10, b = 14 + (unsigned)(x >> 50) % 10;
        int y = label[(x >> 20) % 8 == 0 ? (c + 1) % 3 : c];
        if (i == 0 && first)
            y = first;
        len += (size_t)snprintf(t + len, cap - len, "%d %u:1 %u:0.5 %u:0.5\n",
                                y, c + 1, a, b);
    }
    const char *p = th_write(dir, name, t, len);
    free(t);
    return p;
}

/* The last number after key in text; NaN when key is absent. */
static double last_number_after(const char *text, const char *key)
{
    const char *p = NULL, *q = text;
    while ((q = strstr(q, key)))
        p = q++;
    return p ? strtod(p + strlen(key), NULL) : NAN;
}

/* The confusion table in out: its counts summed, and their number. */
static uint64_t confusion_total(const char *text, unsigned *cells)
{
    const char *p = strstr(text, "confusion matrix of");
    cr_assert_not_null(p, "no confusion matrix in:\n%s", text);
    p = strchr(p, '\n') + 1; /* the header row */
    p = strchr(p, '\n') + 1;
    uint64_t sum = 0;
    *cells = 0;
    while (strncmp(p, "accuracy", 8) != 0) {
        const char *end = strchr(p, '\n');
        cr_assert_not_null(end);
        while (*p == ' ')
            p++;
        p = strchr(p, ' '); /* past the row's label */
        while (p && p < end) {
            char *e;
            unsigned long long v = strtoull(p, &e, 10);
            if (e == p)
                break;
            sum += v;
            ++*cells;
            p = e;
        }
        p = end + 1;
    }
    return sum;
}

struct trained {
    char dir[1024], train[1100], test[1100], model[1100], json[1100];
};

/* Trains a 3-class model on 600 rows made here, tested on 300 more. */
static void train_classes(struct trained *t, const char *model_args)
{
    th_tmpdir(t->dir, sizeof t->dir);
    snprintf(t->train, sizeof t->train, "%s", write_classes(t->dir, "tr.svm", 600, 1, 0));
    snprintf(t->test, sizeof t->test, "%s", write_classes(t->dir, "te.svm", 300, 2, 0));
    path_in(t->model, sizeof t->model, t->dir, "m.hgm");
    path_in(t->json, sizeof t->json, t->dir, "r.json");
    cr_assert_eq(HT("train -q '%s' -t '%s' -o '%s' --json '%s' --epochs 5 %s",
                    th_bin(), t->train, t->test, t->model, t->json, model_args),
                 0, "%s", out);
}

Test(multiclass_model, predict_writes_labels_and_k_scores_with_a_header)
{
    struct trained t;
    train_classes(&t, "");
    char pl[1100], ps[1100];
    path_in(pl, sizeof pl, t.dir, "labels.txt");
    path_in(ps, sizeof ps, t.dir, "scores.txt");
    cr_assert_eq(HT("predict -q '%s' '%s' -o '%s'", th_bin(), t.model, t.test, pl),
                 0, "%s", out);
    cr_assert_eq(HT("predict -q --scores '%s' '%s' -o '%s'", th_bin(), t.model,
                    t.test, ps),
                 0, "%s", out);
    FILE *fl = fopen(pl, "r"), *fs = fopen(ps, "r");
    char line[4096];
    cr_assert_not_null(fgets(line, sizeof line, fs));
    cr_assert_str_eq(line, "labels 2 5 9\n");
    unsigned rows = 0, seen[10] = { 0 };
    int y;
    while (fscanf(fl, "%d", &y) == 1) {
        double s[3];
        char rest[8];
        cr_assert_not_null(fgets(line, sizeof line, fs), "row %u", rows);
        cr_assert_eq(sscanf(line, "%lf %lf %lf %7s", &s[0], &s[1], &s[2], rest),
                     3, "row %u: not 3 scores: %s", rows, line);
        int top = s[1] > s[0] ? 1 : 0;
        top = s[2] > s[top] ? 2 : top;
        static const int label_of[] = { 2, 5, 9 };
        cr_assert_eq(y, label_of[top], "row %u: label %d, scores %s", rows, y,
                     line);
        cr_assert(y == 2 || y == 5 || y == 9);
        seen[y]++;
        rows++;
    }
    cr_assert_eq(rows, 300u);
    cr_assert_null(fgets(line, sizeof line, fs), "more score lines than rows");
    cr_assert(seen[2] && seen[5] && seen[9], "every class is predicted");
    fclose(fl), fclose(fs);
    /* standard output holds the same as -o */
    cr_assert_eq(th_run(out, sizeof out, "'%s' predict -q '%s' '%s' | cmp - '%s'",
                        th_bin(), t.model, t.test, pl),
                 0, "%s", out);
}

Test(multiclass_model, predict_confusion_counts_every_row_and_agrees_with_train)
{
    struct trained t;
    train_classes(&t, "");
    size_t len;
    char *json = th_slurp(t.json, &len);
    double train_acc = last_number_after(json, "\"test_accuracy\": ");
    free(json);
    cr_assert(train_acc > 0.6 && train_acc < 1, "test accuracy %g", train_acc);
    cr_assert_eq(HT("predict --confusion '%s' '%s' -o '%s/p.txt'", th_bin(),
                    t.model, t.test, t.dir),
                 0, "%s", out);
    unsigned cells;
    cr_assert_eq(confusion_total(out, &cells), 300u, "%s", out);
    cr_assert_eq(cells, 9u, "%s", out);
    cr_assert(strstr(out, "true\\pred"), "%s", out);
    unsigned long long right, rows;
    const char *a = strstr(out, "accuracy ");
    cr_assert_not_null(a, "%s", out);
    cr_assert_eq(sscanf(strchr(a, '(') + 1, "%llu/%llu", &right, &rows), 2);
    cr_assert_eq(rows, 300u);
    cr_assert_float_eq((double)right / (double)rows, train_acc, 1e-9,
                       "predict %llu/%llu, train %.10g", right, rows, train_acc);
    cr_assert(strstr(out, "macro-F1 0."), "%s", out);
    cr_assert_null(strstr(out, "warning"), "%s", out);
}

Test(multiclass_model, predict_counts_unseen_labels_wrong_with_one_warning)
{
    struct trained t;
    train_classes(&t, "");
    /* labels 11 and 13 were never in training */
    char line[4096];
    FILE *f = fopen(t.test, "r"), *g;
    char odd[1100];
    g = fopen(path_in(odd, sizeof odd, t.dir, "odd.svm"), "w");
    for (int i = 0; fgets(line, sizeof line, f); i++)
        fprintf(g, "%s%s", i % 50 == 0 ? "11" : i % 75 == 1 ? "13" : "",
                i % 50 == 0 || i % 75 == 1 ? strchr(line, ' ') : line);
    fclose(f), fclose(g);
    cr_assert_eq(HT("predict --confusion '%s' '%s' -o '%s/p.txt'", th_bin(),
                    t.model, odd, t.dir),
                 0, "%s", out);
    const char *w = strstr(out, "hogtrain: warning: ");
    cr_assert_not_null(w, "%s", out);
    cr_assert_null(strstr(strchr(w, '\n'), "warning"), "one warning only:\n%s",
                   out);
    cr_assert(strstr(out, "10 rows of odd.svm have labels the model has no "
                          "class for (11, 13): counted as wrong"),
              "%s", out);
    unsigned cells;
    cr_assert_eq(confusion_total(out, &cells), 300u, "%s", out);
    cr_assert_eq(cells, 12u, "a row (unseen) below the three:\n%s", out);
    cr_assert(strstr(out, "(unseen)"), "%s", out);
    /* without --confusion: the same warning and accuracy */
    char again[OUT_MAX];
    cr_assert_eq(th_run(again, sizeof again, "'%s' predict '%s' '%s' -o '%s/p.txt'",
                        th_bin(), t.model, odd, t.dir),
                 0, "%s", again);
    cr_assert(strstr(again, "10 rows of odd.svm"), "%s", again);
    cr_assert_str_eq(strstr(again, "accuracy"), strstr(out, "accuracy"));
    /* a file none of whose labels is a class: no confusion matrix */
    char none[1100];
    g = fopen(path_in(none, sizeof none, t.dir, "none.svm"), "w");
    fprintf(g, "0 1:1\n0 2:1\n");
    fclose(g);
    cr_assert_eq(HT("predict --confusion '%s' '%s'", th_bin(), t.model, none), 1,
                 "%s", out);
    cr_assert(strstr(out, "no row of none.svm has a label among the model's "
                          "classes (2 5 9)"),
              "%s", out);
}

Test(multiclass_model, predict_confusion_options_are_checked)
{
    struct trained t;
    train_classes(&t, "");
    cr_assert_eq(HT("predict -q --confusion '%s' '%s'", th_bin(), t.model, t.test),
                 2, "%s", out);
    cr_assert(strstr(out, "--confusion prints a report and --quiet none"), "%s",
              out);
    /* a regression model has no classes */
    char r[1100], rm[1100];
    const char *text = "1.5 1:1\n-0.5 2:1\n2.25 1:1 2:1\n";
    snprintf(r, sizeof r, "%s", th_write(t.dir, "r.svm", text, strlen(text)));
    cr_assert_eq(HT("train -q --loss squared '%s' -o '%s'", th_bin(), r,
                    path_in(rm, sizeof rm, t.dir, "r.hgm")),
                 0, "%s", out);
    cr_assert_eq(HT("predict --confusion '%s' '%s'", th_bin(), rm, r), 1, "%s",
                 out);
    cr_assert(strstr(out, "is a regression model"), "%s", out);
    /* a binary model's table is 2 x 2, positive label first */
    char b[1100], bm[1100];
    text = "1 1:1\n-1 2:1\n1 1:1 3:1\n-1 2:1 3:1\n";
    snprintf(b, sizeof b, "%s", th_write(t.dir, "b.svm", text, strlen(text)));
    cr_assert_eq(HT("train -q '%s' -o '%s'", th_bin(), b,
                    path_in(bm, sizeof bm, t.dir, "b.hgm")),
                 0, "%s", out);
    cr_assert_eq(HT("predict --confusion '%s' '%s'", th_bin(), bm, b), 0, "%s",
                 out);
    unsigned cells;
    cr_assert_eq(confusion_total(out, &cells), 4u, "%s", out);
    cr_assert_eq(cells, 4u, "%s", out);
    cr_assert(strstr(out, "accuracy 100.00% (4/4), macro-F1 1.0000"), "%s", out);
}

Test(multiclass_model, info_shows_classes_and_mode)
{
    struct trained t;
    train_classes(&t, "");
    cr_assert_eq(HT("info '%s'", th_bin(), t.model), 0, "%s", out);
    cr_assert(strstr(out, "classes          3: 2 5 9\n"), "%s", out);
    cr_assert(strstr(out, "multiclass       one-vs-rest, 3 weight vectors"), "%s",
              out);
    cr_assert(strstr(out, "of 72, the bias weights included"), "%s", out);
    cr_assert(strstr(out, "labels           the class of the highest of the 3 "
                          "scores"),
              "%s", out);
    /* the same through LIBLINEAR text */
    char ll[1100];
    path_in(ll, sizeof ll, t.dir, "m.txt");
    hog_model *m = load_ok(t.model);
    save_ok(m, ll, HOG_MODEL_LIBLINEAR);
    hog_model_free(m);
    cr_assert_eq(HT("info '%s'", th_bin(), ll), 0, "%s", out);
    cr_assert(strstr(out, "LIBLINEAR text model"), "%s", out);
    cr_assert(strstr(out, "classes          3: 2 5 9\n"), "%s", out);
    /* many classes are abbreviated */
    double labels[30];
    for (int c = 0; c < 30; c++)
        labels[c] = 100 + c;
    m = k_model(3, 0, 30, labels, HOG_MULTICLASS_SOFTMAX);
    save_ok(m, path_in(ll, sizeof ll, t.dir, "many.hgm"), HOG_MODEL_HGM);
    hog_model_free(m);
    cr_assert_eq(HT("info '%s'", th_bin(), ll), 0, "%s", out);
    cr_assert(strstr(out, "classes          30: 100 101 102 103 104 105 106 107 "
                          "... 128 129\n"),
              "%s", out);
    cr_assert(strstr(out, "softmax (multinomial logistic regression)"), "%s", out);
}

/* ---- LIBLINEAR's own programs ----------------------------------------------------- */

/* The first line where files a and b differ (0: none) and the lines of a. */
static unsigned long first_difference(const char *a, const char *b,
                                      unsigned long *lines)
{
    FILE *fa = fopen(a, "r"), *fb = fopen(b, "r");
    cr_assert(fa && fb, "cannot open %s or %s", a, b);
    char la[256], lb[256];
    unsigned long n = 0, diff = 0;
    for (;;) {
        char *ra = fgets(la, sizeof la, fa), *rb = fgets(lb, sizeof lb, fb);
        if (!ra && !rb)
            break;
        n++;
        if (!diff && (!ra || !rb || strcmp(la, lb) != 0))
            diff = n;
    }
    fclose(fa), fclose(fb);
    *lines = n;
    return diff;
}

/* liblinear-predict and hogtrain predict (with options opts; its output
 * left in out) give model the same labels on data, row by row. */
static void agree_with_liblinear_opts(const char *dir, const char *model,
                                      const char *data, unsigned long rows,
                                      const char *opts)
{
    char ll[1100], mine[1100];
    path_in(ll, sizeof ll, dir, "ll.pred");
    path_in(mine, sizeof mine, dir, "hog.pred");
    cr_assert_eq(th_run(out, sizeof out, "liblinear-predict '%s' '%s' '%s'", data,
                        model, ll),
                 0, "liblinear-predict: %s", out);
    cr_assert_eq(HT("predict %s '%s' '%s' -o '%s'", th_bin(), opts, model, data,
                    mine),
                 0, "%s", out);
    unsigned long n, d = first_difference(ll, mine, &n);
    cr_assert_eq(d, 0ul, "%s: liblinear-predict and hogtrain predict differ "
                 "first at row %lu", model, d);
    cr_assert_eq(n, rows);
}

static void agree_with_liblinear(const char *dir, const char *model,
                                 const char *data, unsigned long rows)
{
    agree_with_liblinear_opts(dir, model, data, rows, "-q");
}

Test(multiclass_model, news20_liblinear_model_predicts_as_liblinear_predict,
     .timeout = 300)
{
    TH_HEAVY_OR_SKIP();
    TH_LIBLINEAR_OR_SKIP();
    TH_DATA_OR_SKIP(train, "news20.train.svm");
    TH_DATA_OR_SKIP(test, "news20.test.svm");
    char dir[1024], mp[1100];
    th_tmpdir(dir, sizeof dir);
    path_in(mp, sizeof mp, dir, "s1.model");
    cr_assert_eq(th_run(out, sizeof out, "liblinear-train -q -s 1 -e 0.1 '%s' '%s'",
                        train, mp),
                 0, "liblinear-train: %s", out);
    hog_model *m = load_ok(mp);
    cr_assert_eq(m->n_classes, 20u);
    cr_assert_eq(m->multiclass, HOG_MULTICLASS_OVR);
    cr_assert_eq(m->loss, HOG_LOSS_SQHINGE);
    /* the classes in the label line's order: news20.train.svm's first
     * appearances */
    const double first[] = { 3, 17, 12, 14, 6, 4, 11, 10, 8, 2 };
    for (int c = 0; c < 10; c++)
        cr_assert_eq(m->classes[c], first[c], "class %d", c);
    hog_model_free(m);
    agree_with_liblinear(dir, mp, test, 7532);
}

Test(multiclass_model, news20_model_written_for_liblinear_predicts_alike,
     .timeout = 300)
{
    TH_HEAVY_OR_SKIP();
    TH_LIBLINEAR_OR_SKIP();
    TH_DATA_OR_SKIP(train, "news20.train.svm");
    TH_DATA_OR_SKIP(test, "news20.test.svm");
    char dir[1024], mp[1100], json[1100];
    th_tmpdir(dir, sizeof dir);
    path_in(mp, sizeof mp, dir, "m.txt");
    path_in(json, sizeof json, dir, "r.json");
    cr_assert_eq(HT("train -q '%s' -t '%s' --algo dcd --epochs 2 --json '%s' "
                    "-o '%s' --model-format liblinear",
                    th_bin(), train, test, json, mp),
                 0, "%s", out);
    cr_assert_eq(th_run(out, sizeof out, "grep -c '^label 3 17 12 14' '%s'", mp), 0,
                 "%s", out);
    /* and its confusion matrix holds every row, at the accuracy training
     * reported */
    agree_with_liblinear_opts(dir, mp, test, 7532, "--confusion");
    size_t len;
    char *j = th_slurp(json, &len);
    double train_acc = last_number_after(j, "\"test_accuracy\": ");
    free(j);
    cr_assert(train_acc > 0.7, "test accuracy %g", train_acc);
    unsigned cells;
    cr_assert_eq(confusion_total(out, &cells), 7532u, "%s", out);
    cr_assert_eq(cells, 400u);
    unsigned long long right, rows;
    const char *a = strstr(out, "accuracy ");
    cr_assert_not_null(a, "%s", out);
    cr_assert_eq(sscanf(strchr(a, '(') + 1, "%llu/%llu", &right, &rows), 2);
    cr_assert_float_eq((double)right / (double)rows, train_acc, 1e-9,
                       "predict %llu/%llu, train %.10g", right, rows, train_acc);
}

/* Every LIBLINEAR classifier's model of abalone's 28 ages (integers read
 * as classes), and Crammer-Singer's of news20 and of two classes. */
Test(multiclass_model, liblinear_solvers_models_predict_as_liblinear_predict,
     .timeout = 300)
{
    TH_LIBLINEAR_OR_SKIP();
    TH_DATA_OR_SKIP(abalone, "abalone_scale");
    TH_DATA_OR_SKIP(heart, "heart_scale");
    TH_DATA_OR_SKIP(news, "news20.train.svm");
    char dir[1024], mp[1100];
    th_tmpdir(dir, sizeof dir);
    path_in(mp, sizeof mp, dir, "m");
    static const char *const solvers[] = { "-s 0", "-s 2 -B 1", "-s 3",
                                           "-s 5 -B 1", "-s 6", "-s 7" };
    for (size_t i = 0; i < sizeof solvers / sizeof solvers[0]; i++) {
        cr_assert_eq(th_run(out, sizeof out, "liblinear-train -q %s '%s' '%s'",
                            solvers[i], abalone, mp),
                     0, "%s: %s", solvers[i], out);
        hog_model *m = load_ok(mp);
        cr_assert_eq(m->n_classes, 28u, "%s", solvers[i]);
        hog_model_free(m);
        agree_with_liblinear(dir, mp, abalone, 4177);
    }
    /* Crammer-Singer, two classes: two columns read as one */
    cr_assert_eq(th_run(out, sizeof out, "liblinear-train -q -s 4 '%s' '%s'",
                        heart, mp),
                 0, "%s", out);
    agree_with_liblinear(dir, mp, heart, 270);
    /* K classes: news20's first 1000 rows, tested on the next 1000. (On
     * abalone its scores tie to within a float's rounding on some rows,
     * which LIBLINEAR's double weights and hogtrain's float ones break
     * differently: docs/FORMATS.md.) */
    char head[1100], next[1100];
    path_in(head, sizeof head, dir, "head.svm");
    path_in(next, sizeof next, dir, "next.svm");
    cr_assert_eq(th_run(out, sizeof out, "head -n 1000 '%s' > '%s' && "
                        "sed -n '1001,2000p' '%s' > '%s'", news, head, news, next),
                 0, "%s", out);
    cr_assert_eq(th_run(out, sizeof out, "liblinear-train -q -s 4 '%s' '%s'",
                        head, mp),
                 0, "%s", out);
    hog_model *m = load_ok(mp);
    cr_assert_gt(m->n_classes, 15u);
    cr_assert_eq(m->loss, HOG_LOSS_HINGE);
    hog_model_free(m);
    agree_with_liblinear(dir, mp, next, 1000);
}

/* A softmax model for LIBLINEAR: written as Crammer-Singer's K columns
 * (LIBLINEAR has no softmax solver), whose arg-max liblinear-predict takes
 * as hogtrain does, row by row, and whose -b 1 it refuses (as L2R_LR, -b 1
 * printed one-vs-rest probabilities, not the model's); the command says
 * so. The same run written as .hgm predicts the same labels. */
Test(multiclass_model, softmax_written_for_liblinear_predicts_alike,
     .timeout = 120)
{
    TH_LIBLINEAR_OR_SKIP();
    TH_DATA_OR_SKIP(train, "news20.train.svm");
    TH_DATA_OR_SKIP(test, "news20.test.svm");
    char dir[1024], mp[1100], hgm[1100], ll[1100], mine[1100];
    th_tmpdir(dir, sizeof dir);
    path_in(mp, sizeof mp, dir, "m.txt");
    path_in(hgm, sizeof hgm, dir, "m.hgm");
    path_in(ll, sizeof ll, dir, "ll.pred");
    path_in(mine, sizeof mine, dir, "hgm.pred");
    const char *opts = "--multiclass softmax --epochs 2 --threads 1 --seed 3";
    cr_assert_eq(HT("train -q %s '%s' -o '%s' --model-format liblinear",
                    th_bin(), opts, train, mp),
                 0, "%s", out);
    cr_assert(strstr(out, "note: ") && strstr(out, "MCSVM_CS") &&
                  strstr(out, "same labels"),
              "no note that the softmax model is written as MCSVM_CS: %s",
              out);
    cr_assert_eq(th_run(out, sizeof out, "head -n 2 '%s'", mp), 0);
    cr_assert_str_eq(out, "solver_type MCSVM_CS\nnr_class 20\n");
    agree_with_liblinear(dir, mp, test, 7532);

    cr_assert_eq(HT("train -q %s '%s' -o '%s'", th_bin(), opts, train, hgm),
                 0, "%s", out);
    cr_assert_eq(HT("predict -q '%s' '%s' -o '%s'", th_bin(), hgm, test, mine),
                 0, "%s", out);
    unsigned long n, d = first_difference(ll, mine, &n);
    cr_assert_eq(d, 0ul, "liblinear-predict of the export and hogtrain "
                 "predict of the softmax .hgm differ first at row %lu", d);
    cr_assert_eq(n, 7532ul);
    cr_assert_neq(th_run(out, sizeof out, "liblinear-predict -b 1 '%s' '%s' "
                         "'%s/b1.pred'", test, mp, dir),
                  0, "liblinear-predict -b 1 gave probabilities: %s", out);
}
