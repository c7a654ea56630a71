/* Namespaces of data in memory (hog_load_opts.keep_namespaces,
 * hog_data_column_namespaces, hog_data_set_interactions; the Python
 * package's interactions): a matrix given a namespace per column and
 * crossed trains the model of the Vowpal Wabbit text it came from,
 * loaded with the same interactions; and what is refused. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "hogtrain.h"
#include "helpers.h"

#define BITS 18u

/* Rows of three namespaces, 'a' repeated in a row, a feature in two
 * namespaces' names ("x" in a and c: two weights). */
static const char vw_text[] =
    "1 |a x y |b p |c x:2\n"
    "-1 |a y |b q r |c z\n"
    "1 |a x:0.5 w |b p r |c x\n"
    "-1 |a w |b q |c z:3\n"
    "1 |a y w |b p |c x\n"
    "-1 |a x |b q r |c z\n";

static hog_data *load_kept(const char *path, unsigned bits)
{
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    lo.hash_bits = bits;
    lo.keep_namespaces = 1;
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_data_load(path, &lo, &d, &err), HOG_OK, "%s", err.msg);
    return d;
}

/* d's own arrays as a new data set, as the Python package hands a scipy
 * matrix over (no namespaces). */
static hog_data *from_arrays(const hog_data *d)
{
    const uint64_t *off;
    const uint32_t *idx;
    const float *val, *y;
    hog_data_csr(d, &off, &idx, &val, &y);
    hog_csr_arrays a = {
        .size = sizeof a, .rows = hog_data_rows(d),
        .cols = hog_data_features(d), .indptr = off,
        .indptr_type = HOG_DTYPE_UINT64, .indices = idx,
        .indices_type = HOG_DTYPE_UINT32, .values = val,
        .values_type = HOG_DTYPE_FLOAT32, .labels = y,
        .labels_type = HOG_DTYPE_FLOAT32,
    };
    hog_data *m;
    hog_err err;
    cr_assert_eq(hog_data_from_csr(&a, 1, &m, &err), HOG_OK, "%s", err.msg);
    return m;
}

Test(namespaces, crossed_matrix_trains_the_loaders_model)
{
    char dir[512];
    th_tmpdir(dir, sizeof dir);
    const char *path = th_write(dir, "ns.vw", vw_text, sizeof vw_text - 1);
    static const char *const specs[] = { "ab", "ab,abc,aab", "ca,bb" };
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        hog_data *vw = th_load_hashed(path, BITS, specs[s]);
        hog_data *kept = load_kept(path, BITS);
        uint64_t nf = hog_data_features(kept);
        cr_assert_eq(nf, UINT64_C(1) << BITS);
        uint8_t *ns = malloc(nf);
        hog_err err;
        cr_assert_eq(hog_data_column_namespaces(kept, ns, &err), HOG_OK,
                     "%s", err.msg);
        size_t count[256] = { 0 };
        for (uint64_t j = 0; j < nf; j++)
            count[ns[j]]++;
        /* a: x y w, b: p q r, c: x z; the rest the default */
        cr_assert_eq(count['a'], 3);
        cr_assert_eq(count['b'], 3);
        cr_assert_eq(count['c'], 2);
        cr_assert_eq(count[' '], nf - 8);
        hog_data *mine = from_arrays(kept);
        cr_assert_eq(hog_data_set_interactions(mine, ns, specs[s], BITS,
                                               &err), HOG_OK, "%s", err.msg);
        hog_train_opts o;
        th_opts_init(&o);
        o.epochs = 3;
        hog_model *a = th_train_ok(vw, &o), *b = th_train_ok(mine, &o);
        /* the model without them differs: the crossing counted */
        hog_model *plain = th_train_ok(kept, &o);
        uint64_t n = hog_model_features(a) + 1;
        cr_assert_eq(hog_model_features(b) + 1, n);
        cr_assert_eq(memcmp(hog_model_weights(a), hog_model_weights(b),
                            n * sizeof(float)), 0, "%s", specs[s]);
        cr_assert_neq(memcmp(hog_model_weights(a), hog_model_weights(plain),
                             n * sizeof(float)), 0, "%s", specs[s]);
        cr_assert_str_eq(hog_model_interactions(b), hog_model_interactions(a));
        double sa[6], sb[6];
        cr_assert_eq(hog_model_scores(a, vw, sa, &err), HOG_OK, "%s", err.msg);
        cr_assert_eq(hog_model_scores(a, mine, sb, &err), HOG_OK, "%s",
                     err.msg);
        cr_assert_eq(memcmp(sa, sb, sizeof sa), 0);
        hog_model_free(a), hog_model_free(b), hog_model_free(plain);
        hog_data_free(vw), hog_data_free(kept), hog_data_free(mine);
        free(ns);
    }
}

Test(namespaces, refusals)
{
    char dir[512];
    th_tmpdir(dir, sizeof dir);
    const char *vw = th_write(dir, "ns.vw", vw_text, sizeof vw_text - 1);
    const char *svm = th_write(dir, "a.svm", "1 1:1\n-1 2:1\n", 13);
    hog_err err;
    hog_data *d;
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    lo.keep_namespaces = 1;
    cr_assert_eq(hog_data_load(svm, &lo, &d, &err), HOG_EINVAL);
    cr_assert_not_null(strstr(err.msg, "namespaces are kept of Vowpal "
                                       "Wabbit text; this is LIBSVM text"),
                       "%s", err.msg);
    /* two namespaces' features in one of 2 columns */
    d = load_kept(vw, 1);
    uint8_t ns2[2];
    cr_assert_eq(hog_data_column_namespaces(d, ns2, &err), HOG_EINVAL);
    cr_assert_not_null(strstr(err.msg, "holds entries of namespaces"), "%s",
                       err.msg);
    hog_data_free(d);
    /* no namespaces kept */
    d = th_load(svm);
    cr_assert_eq(hog_data_column_namespaces(d, ns2, &err), HOG_EINVAL);
    cr_assert_not_null(strstr(err.msg, "keeps no namespaces"), "%s", err.msg);
    /* 2 features: at most 2^1 columns to cross into */
    static const struct { const char *spec; unsigned bits; const char *says; }
    bad[] = {
        { "ab", 0, "B must be 1 to 31 (got 0)" },
        { "ab", 2, "into 2^2 columns, but the data set has 2" },
        { "abcd", 1, "interaction 'abcd' crosses 4 namespaces" },
        { "ab,ab", 1, "interaction 'ab' is asked twice" },
    };
    const uint8_t cols[2] = { 'a', 'b' };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_eq(hog_data_set_interactions(d, cols, bad[i].spec,
                                               bad[i].bits, &err), HOG_EINVAL);
        cr_assert_not_null(strstr(err.msg, bad[i].says), "%s", err.msg);
    }
    /* nothing asked: unchanged; asked: once only */
    cr_assert_eq(hog_data_set_interactions(d, cols, "", 1, &err), HOG_OK);
    cr_assert_eq(hog_data_set_interactions(d, cols, "ab", 1, &err), HOG_OK,
                 "%s", err.msg);
    cr_assert_eq(hog_data_set_interactions(d, cols, "aa", 1, &err),
                 HOG_EINVAL);
    cr_assert_not_null(strstr(err.msg, "crosses its rows already"), "%s",
                       err.msg);
    hog_data_free(d);
}
