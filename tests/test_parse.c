/* The LIBSVM/SVMlight parser: every accepted variant, every documented
 * error at its line, float rounding against strtof, real files, and
 * parallel parsing against serial (suite `threads`). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "helpers.h"
#include "io/io.h"

static hog_data *parse_n(const char *text, size_t len, unsigned slices,
                         int zero_based, hog_status want, hog_err *err)
{
    hog_load_opts o;
    hog_load_opts_init(&o);
    o.zero_based = zero_based;
    hog_data *d = NULL;
    hog_status st = hog_parse_svm_slices(text, len, "t.svm", &o, slices, &d, err);
    cr_assert_eq(st, want, "status %s, want %s: %s", hog_status_str(st),
                 hog_status_str(want), st ? err->msg : "");
    return st == HOG_OK ? d : NULL;
}

static hog_data *parse_ok(const char *text, int zero_based)
{
    hog_err err;
    return parse_n(text, strlen(text), 1, zero_based, HOG_OK, &err);
}

/* Bit-identical arrays, labels and counts. */
static void assert_same(const hog_data *a, const hog_data *b, const char *what)
{
    cr_assert_eq(a->m.rows, b->m.rows, "%s: rows %llu vs %llu", what,
                 (unsigned long long)a->m.rows, (unsigned long long)b->m.rows);
    cr_assert_eq(a->m.nnz, b->m.nnz, "%s: nnz", what);
    cr_assert_eq(a->n_features, b->n_features, "%s: features", what);
    cr_assert(memcmp(a->m.off, b->m.off, (a->m.rows + 1) * 8) == 0, "%s: off", what);
    cr_assert(memcmp(a->m.y, b->m.y, a->m.rows * 4) == 0, "%s: labels", what);
    cr_assert(memcmp(a->m.idx, b->m.idx, a->m.nnz * 4) == 0, "%s: idx", what);
    cr_assert(memcmp(a->m.val, b->m.val, a->m.nnz * 4) == 0, "%s: val", what);
    cr_assert_eq(a->labels, b->labels, "%s: label kind", what);
    cr_assert_eq(a->label_pos, b->label_pos, "%s", what);
    cr_assert_eq(a->label_neg, b->label_neg, "%s", what);
    cr_assert_eq(a->n_pos, b->n_pos, "%s", what);
}

static const char canon[] = "1 1:0.5 3:2 10:-0.25\n"
                            "-1 2:1\n"
                            "1\n"
                            "-1 1:1e-3 4:12345.5\n";

Test(parse, canonical_form)
{
    hog_data *d = parse_ok(canon, 0);
    cr_assert_eq(d->m.rows, 4);
    cr_assert_eq(d->m.nnz, 6);
    cr_assert_eq(d->n_features, 10);
    uint64_t off[] = { 0, 3, 4, 4, 6 };
    uint32_t idx[] = { 0, 2, 9, 1, 0, 3 };
    float val[] = { 0.5f, 2.0f, -0.25f, 1.0f, 1e-3f, 12345.5f };
    float y[] = { 1, -1, 1, -1 };
    cr_assert(memcmp(d->m.off, off, sizeof off) == 0);
    cr_assert(memcmp(d->m.idx, idx, sizeof idx) == 0);
    cr_assert(memcmp(d->m.val, val, sizeof val) == 0);
    cr_assert(memcmp(d->m.y, y, sizeof y) == 0);
    cr_assert_eq(d->labels, HOG_LABELS_BINARY);
    cr_assert_eq(d->label_pos, 1.0);
    cr_assert_eq(d->n_pos, 2);
    hog_data_free(d);
}

Test(parse, every_variant_equals_the_canonical_form)
{
    static const char *variants[] = {
        /* CRLF */
        "1 1:0.5 3:2 10:-0.25\r\n-1 2:1\r\n1\r\n-1 1:1e-3 4:12345.5\r\n",
        /* tabs, runs of spaces, leading and trailing blanks */
        "\t1\t1:0.5   3:2\t\t10:-0.25  \n  -1 2:1\t\n1   \n-1\t1:1e-3 4:12345.5 \t\n",
        /* comments, whole-line and trailing; blank lines */
        "# header comment\n\n1 1:0.5 3:2 10:-0.25 # trailing\n   \n-1 2:1#x\n"
        "1 # no features\n# another\n\n-1 1:1e-3 4:12345.5\n\n",
        /* qid, explicit signs, upper-case exponents, other spellings */
        "+1 qid:3 1:.5 3:2.0 10:-2.5E-01\n-1 qid:3 2:1.\n+1 qid:4\n"
        "-1 qid:4 1:1E-3 4:1.23455e+4\n",
        /* no final newline */
        "1 1:0.5 3:2 10:-0.25\n-1 2:1\n1\n-1 1:1e-3 4:12345.5",
        /* leading zeros, long mantissas (slow path) */
        "1 01:0000.5000 003:2 10:-0.2500000000000000000000000001\n-1 2:1\n1\n"
        "-1 1:0.00100000000000000000000000 4:12345.50000000000000000000\n",
        /* a UTF-8 byte order mark */
        "\xEF\xBB\xBF" "1 1:0.5 3:2 10:-0.25\n-1 2:1\n1\n-1 1:1e-3 4:12345.5\n",
        /* CRLF and no final newline, label with a trailing comment only */
        "1 1:0.5 3:2 10:-0.25\r\n-1 2:1\r\n1#c\r\n-1 1:1e-3 4:12345.5\r",
    };
    hog_data *ref = parse_ok(canon, 0);
    for (size_t i = 0; i < sizeof variants / sizeof *variants; i++) {
        for (unsigned t = 1; t <= 3; t++) {
            hog_err err;
            hog_data *d = parse_n(variants[i], strlen(variants[i]), t, 0, HOG_OK, &err);
            char what[64];
            snprintf(what, sizeof what, "variant %zu, %u slices", i, t);
            assert_same(ref, d, what);
            hog_data_free(d);
        }
    }
    hog_data_free(ref);
}

Test(parse, label_spellings)
{
    hog_data *d = parse_ok("1 1:1\n0 1:1\n0 2:1\n", 0);
    cr_assert_eq(d->labels, HOG_LABELS_BINARY);
    cr_assert_eq(d->label_pos, 1.0);
    cr_assert_eq(d->label_neg, 0.0);
    cr_assert_eq(d->n_pos, 1);
    hog_data_free(d);
    d = parse_ok("-1.0 1:1\n1.0 1:1\n+1 1:1\n", 0);
    cr_assert_eq(d->labels, HOG_LABELS_BINARY);
    cr_assert_eq(d->label_neg, -1.0);
    cr_assert_eq(d->n_pos, 2);
    hog_data_free(d);
    d = parse_ok("15 1:1\n7.5 1:1\n-2e1 1:1\n", 0);
    cr_assert_eq(d->labels, HOG_LABELS_REAL);
    cr_assert_eq(d->m.y[0], 15.0f);
    cr_assert_eq(d->m.y[1], 7.5f);
    cr_assert_eq(d->m.y[2], -20.0f);
    hog_data_free(d);
}

Test(parse, zero_based_indices)
{
    hog_data *d = parse_ok("1 0:1 2:3\n-1 4294967293:2\n", 1);
    cr_assert_eq(d->m.idx[0], 0);
    cr_assert_eq(d->m.idx[1], 2);
    cr_assert_eq(d->m.idx[2], HOG_MAX_FEATURE_INDEX);
    cr_assert_eq(d->n_features, (uint64_t)HOG_MAX_FEATURES);
    hog_data_free(d);
    /* 1-based: the largest index is one more. */
    d = parse_ok("1 4294967294:2\n", 0);
    cr_assert_eq(d->m.idx[0], HOG_MAX_FEATURE_INDEX);
    hog_data_free(d);
}

Test(parse, n_features_option_raises_the_count)
{
    hog_load_opts o;
    hog_load_opts_init(&o);
    o.n_features = 500;
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_parse_svm(canon, strlen(canon), "c", &o, &d, &err), HOG_OK);
    cr_assert_eq(d->n_features, 500);
    hog_data_free(d);
    o.n_features = 3; /* smaller than the data: the data wins */
    cr_assert_eq(hog_parse_svm(canon, strlen(canon), "c", &o, &d, &err), HOG_OK);
    cr_assert_eq(d->n_features, 10);
    hog_data_free(d);
}

struct bad {
    const char *text;
    size_t len; /* 0: strlen */
    int zero_based;
    hog_status status;
    unsigned line;
    const char *phrase;
};

Test(parse, malformed_inputs_name_their_line)
{
    static const struct bad cases[] = {
        { "1 1:1\n1 2:1\n-1 0:1\n", 0, 0, HOG_EPARSE, 3,
          "feature index 0 in a 1-based file (use --zero-based)" },
        { "1 1:1\n1 5:1 3:1\n", 0, 0, HOG_EPARSE, 2, "feature index 3 after 5" },
        { "1 1:1 1:2\n", 0, 0, HOG_EPARSE, 1, "feature index 1 repeated" },
        { "1 0:1 0:2\n", 0, 1, HOG_EPARSE, 1, "feature index 0 repeated" },
        { "# c\n\n1 3:\n", 0, 0, HOG_EPARSE, 3, "missing value after '3:'" },
        { "1 3: 4:1\n", 0, 0, HOG_EPARSE, 1, "missing value after '3:'" },
        { "1 2:1\n1 3\n", 0, 0, HOG_EPARSE, 2, "missing ':'" },
        { "1 2:1\n1 3 4:1\n", 0, 0, HOG_EPARSE, 2, "missing ':' in feature '3'" },
        { "yes 1:1\n", 0, 0, HOG_EPARSE, 1, "bad label 'yes'" },
        { "1 1:1\n2:1 3:1\n", 0, 0, HOG_EPARSE, 2, "bad label '2:1'" },
        { "1 1:1\nnan 1:1\n", 0, 0, HOG_EPARSE, 2, "label is NaN" },
        { "1 1:NaN\n", 0, 0, HOG_EPARSE, 1, "value of feature 1 is NaN" },
        { "1 1:-nan\n", 0, 0, HOG_EPARSE, 1, "is NaN" },
        { "1 1:inf\n", 0, 0, HOG_EPARSE, 1, "value of feature 1 is infinite" },
        { "-Infinity 1:1\n", 0, 0, HOG_EPARSE, 1, "label is infinite" },
        { "1 1:1\n1 7:1e999\n", 0, 0, HOG_ERANGE, 2, "out of range for float" },
        { "1 7:3.5e38\n", 0, 0, HOG_ERANGE, 1, "out of range for float" },
        { "1e40 7:1\n", 0, 0, HOG_ERANGE, 1, "out of range for float" },
        { "1 4294967296:1\n", 0, 0, HOG_ERANGE, 1, "beyond the largest supported" },
        { "1 4294967295:1\n", 0, 0, HOG_ERANGE, 1, "beyond the largest supported (4294967294)" },
        { "1 4294967294:1\n", 0, 1, HOG_ERANGE, 1, "beyond the largest supported (4294967293)" },
        { "1 99999999999999999999999:1\n", 0, 0, HOG_ERANGE, 1,
          "beyond the largest supported" },
        { "1 1:1\n1 a:1\n", 0, 0, HOG_EPARSE, 2, "bad feature index" },
        { "1 1:1\n1 -3:1\n", 0, 0, HOG_EPARSE, 2, "bad feature index" },
        { "1 1:1.2.3\n", 0, 0, HOG_EPARSE, 1, "bad value '1.2.3'" },
        { "1 1:0x10\n", 0, 0, HOG_EPARSE, 1, "bad value" },
        { "1 1:1e\n", 0, 0, HOG_EPARSE, 1, "bad value" },
        { "1 1:1:2\n", 0, 0, HOG_EPARSE, 1, "bad value" },
        { "1 qid:x 1:1\n", 0, 0, HOG_EPARSE, 1, "bad qid" },
        { "1 1:1\n1 2:1\0 3:1\n", 16, 0, HOG_EPARSE, 2, "NUL byte" },
        { "1 1:1\n1 2:1 # c\0mment\n", 21, 0, HOG_EPARSE, 2, "NUL byte" },
        { "1 1:1\n\0\n", 8, 0, HOG_EPARSE, 2, "NUL byte" },
        { "1 1:1\n1 2:\0\n", 11, 0, HOG_EPARSE, 2, "NUL byte" },
        { "1 1:1\n1 1:1 2:3", 0, 0, HOG_OK, 0, NULL }, /* no final newline */
        { "1 1:1\n-1 2:1 1:1", 0, 0, HOG_EPARSE, 2, "after 2" }, /* ... and an error */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const struct bad *c = &cases[i];
        size_t len = c->len ? c->len : strlen(c->text);
        for (unsigned t = 1; t <= 3; t++) {
            hog_err err;
            err.msg[0] = 0;
            hog_data *d = parse_n(c->text, len, t, c->zero_based, c->status, &err);
            if (c->status == HOG_OK) {
                hog_data_free(d);
                continue;
            }
            char prefix[64];
            snprintf(prefix, sizeof prefix, "t.svm:%u: ", c->line);
            cr_assert(strncmp(err.msg, prefix, strlen(prefix)) == 0,
                      "case %zu (%u slices): '%s' does not start with '%s'", i, t,
                      err.msg, prefix);
            cr_assert(strstr(err.msg, c->phrase) != NULL,
                      "case %zu: '%s' lacks '%s'", i, err.msg, c->phrase);
        }
    }
}

/* A CSV file is named as one, with the format hogtrain reads instead. */
Test(parse, csv_is_named_with_the_format_to_use)
{
    static const char *const csv[] = { "label,f1,f2\n1,0.5,3\n",
                                       "1,0.5,3\n0,1.5,2\n", "1, 0.5, 3\n" };
    for (size_t i = 0; i < sizeof csv / sizeof *csv; i++) {
        hog_err err;
        parse_n(csv[i], strlen(csv[i]), 1, 0, HOG_EPARSE, &err);
        cr_assert(strncmp(err.msg, "t.svm:1: bad label '", 20) == 0, "%s", err.msg);
        cr_assert(strstr(err.msg, "looks like CSV") &&
                  strstr(err.msg, "'label index:value index:value ...'") &&
                  strstr(err.msg, "--format vw"), "%s", err.msg);
    }
    /* a comma in a line of idx:value pairs is no CSV */
    static const char *const other[] = { "yes 1:1\n", "1,5 2:1\n" };
    for (size_t i = 0; i < sizeof other / sizeof *other; i++) {
        hog_err err;
        parse_n(other[i], strlen(other[i]), 1, 0, HOG_EPARSE, &err);
        cr_assert(strstr(err.msg, "bad label") && !strstr(err.msg, "CSV"),
                  "%s", err.msg);
    }
}

Test(parse, empty_and_row_less_inputs_are_errors)
{
    hog_err err;
    parse_n("", 0, 1, 0, HOG_EPARSE, &err);
    cr_assert_str_eq(err.msg, "t.svm: empty file, no rows");
    parse_n("# only\n\n  \n", 11, 2, 0, HOG_EPARSE, &err);
    cr_assert(strstr(err.msg, "t.svm: no rows") == err.msg, "%s", err.msg);
}

Test(parse, error_line_counts_across_slices)
{
    /* 5000 good lines, then a bad one: every slice count gives line 5001. */
    size_t n = 5000;
    char *buf = malloc(n * 32 + 64);
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(buf + len, "%d %zu:%zu.5\n", i % 2 ? 1 : -1,
                               i % 7 + 1, i);
    len += (size_t)sprintf(buf + len, "1 3:1 2:1\n1 0:1\n");
    for (unsigned t = 1; t <= 8; t++) {
        hog_err err;
        parse_n(buf, len, t, 0, HOG_EPARSE, &err);
        cr_assert(strncmp(err.msg, "t.svm:5001: ", 12) == 0, "%u: %s", t, err.msg);
    }
    free(buf);
}

Test(parse, very_long_line)
{
    /* One row of 300,000 features (about 3 MB): no fixed line buffer. */
    size_t n = 300000;
    char *buf = malloc(n * 16 + 16);
    size_t len = (size_t)sprintf(buf, "1");
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(buf + len, " %zu:%zu", i + 1, i % 1000);
    len += (size_t)sprintf(buf + len, "\n-1 1:1");
    hog_err err;
    for (unsigned t = 1; t <= 4; t += 3) {
        hog_data *d = parse_n(buf, len, t, 0, HOG_OK, &err);
        cr_assert_eq(d->m.rows, 2);
        cr_assert_eq(d->m.nnz, n + 1);
        cr_assert_eq(d->m.idx[n - 1], n - 1);
        cr_assert_eq(d->m.val[n - 1], (float)((n - 1) % 1000));
        hog_data_free(d);
    }
    free(buf);
}

/* Random decimal tokens of every shape, each compared bit for bit with
 * strtof: the fast path must round exactly like it. */
Test(parse, values_round_like_strtof)
{
    struct hog_rng r;
    hog_rng_seed(&r, 1234, 0);
    size_t n = 400000, cap = n * 48 + 64, len = 0;
    char *buf = malloc(cap);
    char (*tok)[40] = malloc(n * sizeof *tok);
    for (size_t i = 0; i < n; i++) {
        char *t = tok[i];
        int k = 0;
        if (hog_rng_below(&r, 4) == 0)
            t[k++] = '-';
        int shape = (int)hog_rng_below(&r, 5);
        int nd = 1 + (int)hog_rng_below(&r, shape == 4 ? 24 : 10);
        int dot = (int)hog_rng_below(&r, (uint64_t)nd + 1);
        for (int j = 0; j < nd; j++) {
            if (j == dot && shape != 0)
                t[k++] = '.';
            t[k++] = (char)('0' + hog_rng_below(&r, 10));
        }
        if (shape >= 2) {
            int e = (int)hog_rng_below(&r, (uint64_t)(84 - nd)) - 46; /* < FLT_MAX */
            k += sprintf(t + k, "%c%d", hog_rng_below(&r, 2) ? 'e' : 'E', e);
        }
        if (shape == 3) { /* near halfway points between floats, 8 to 17 digits */
            double f = (double)(float)(hog_rng_uniform(&r) * 0x1p20);
            double ulp = (double)nextafterf((float)f, INFINITY) - f;
            double x = f + ulp / 2 * (hog_rng_below(&r, 2) ? 1 : 0.999999);
            k = sprintf(t, "%.*g", 8 + (int)hog_rng_below(&r, 10),
                        x * (hog_rng_below(&r, 2) ? 1e-12 : 1));
        }
        t[k] = 0;
        len += (size_t)sprintf(buf + len, "%s 1:%s\n", t, t);
    }
    hog_err err;
    hog_data *d = parse_n(buf, len, 2, 0, HOG_OK, &err);
    cr_assert_eq(d->m.rows, n);
    for (size_t i = 0; i < n; i++) {
        float want = strtof(tok[i], NULL);
        uint32_t a, b, c;
        memcpy(&a, &want, 4);
        memcpy(&b, &d->m.val[i], 4);
        memcpy(&c, &d->m.y[i], 4);
        cr_assert_eq(a, b, "token %s: %a vs strtof %a", tok[i], d->m.val[i], want);
        cr_assert_eq(a, c, "label %s", tok[i]);
    }
    hog_data_free(d);
    free(buf);
    free(tok);
}

/* ---- real files ------------------------------------------------------------ */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    b[n] = 0;
    *len = (size_t)n;
    return b;
}

/* A plain strtof/strtoull reference parser for the real files (they have
 * no comments or qids); compared with the fast parser value by value. */
static void check_against_reference(const char *text, const hog_data *d)
{
    const char *p = text;
    uint64_t row = 0, k = 0;
    while (*p) {
        char *e;
        float y = strtof(p, &e);
        cr_assert(e > p);
        cr_assert_eq(memcmp(&y, &d->m.y[row], 4), 0, "label of row %llu",
                     (unsigned long long)row);
        p = e;
        for (;;) {
            while (*p == ' ' || *p == '\t' || *p == '\r')
                p++;
            if (*p == '\n' || !*p)
                break;
            unsigned long long j = strtoull(p, &e, 10);
            cr_assert_eq(*e, ':');
            float v = strtof(e + 1, &e);
            cr_assert_eq(d->m.idx[k], j - 1, "row %llu", (unsigned long long)row);
            cr_assert_eq(memcmp(&v, &d->m.val[k], 4), 0, "row %llu feature %llu: %a vs %a",
                         (unsigned long long)row, j, v, d->m.val[k]);
            k++;
            p = e;
        }
        row++;
        cr_assert_eq(d->m.off[row], k);
        if (*p)
            p++;
    }
    cr_assert_eq(row, d->m.rows);
    cr_assert_eq(k, d->m.nnz);
}

struct real {
    const char *name;
    uint64_t rows, nnz, features;
};

static const struct real reals[] = {
    { "a9a", 32561, 451592, 123 },
    { "ijcnn1", 49990, 649870, 22 },
    { "reuters_moneyfx.trn", 7770, 339837, 8315 },
    { "rcv1_vw_small.train", 1000, 77739, 47117 },
    { "abalone_scale", 4177, 32080, 8 },
    { "heart_scale", 270, 3378, 13 },
    { "news20.binary.train.svm", 11314, 3789990, 377295 },
};

Test(parse, real_files_match_the_data_readme_and_strtof, .timeout = 60)
{
    for (size_t i = 0; i < sizeof reals / sizeof *reals; i++) {
        TH_DATA_OR_SKIP(path, reals[i].name);
        hog_load_opts o;
        hog_load_opts_init(&o);
        hog_data *d;
        hog_err err;
        cr_assert_eq(hog_data_load(path, &o, &d, &err), HOG_OK, "%s", err.msg);
        cr_assert_eq(hog_data_rows(d), reals[i].rows, "%s", reals[i].name);
        cr_assert_eq(hog_data_nnz(d), reals[i].nnz, "%s", reals[i].name);
        cr_assert_eq(hog_data_features(d), reals[i].features, "%s", reals[i].name);
        size_t len;
        char *text = slurp(path, &len);
        check_against_reference(text, d);
        free(text);
        if (strcmp(reals[i].name, "a9a") == 0) {
            cr_assert_eq(d->labels, HOG_LABELS_BINARY);
            cr_assert_eq(d->n_pos, 7841);
        }
        if (strcmp(reals[i].name, "abalone_scale") == 0)
            cr_assert_eq(d->labels, HOG_LABELS_REAL);
        hog_data_free(d);
    }
}

Test(parse, load_names_the_path_in_messages)
{
    char dir[512];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *p = th_write(dir, "bad.svm", "1 1:1\n1 0:1\n", 12);
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_data_load(p, NULL, &d, &err), HOG_EPARSE);
    char want[1100];
    snprintf(want, sizeof want, "%s:2: feature index 0 in a 1-based file", p);
    cr_assert(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
    p = th_write(dir, "empty.svm", "", 0);
    cr_assert_eq(hog_data_load(p, NULL, &d, &err), HOG_EPARSE);
    cr_assert(strstr(err.msg, "empty file") != NULL, "%s", err.msg);
    cr_assert_eq(hog_data_load("/nonexistent/x.svm", NULL, &d, &err), HOG_EIO);
    cr_assert(strstr(err.msg, "/nonexistent/x.svm") == err.msg);
}

/* ---- parallel equals serial ------------------------------------------------- */

/* The largest index + 1 among every entry: what the parser's running
 * count must come to when no count was asked for. */
static uint64_t features_in(const hog_data *d)
{
    uint64_t nf = 0;
    for (uint64_t e = 0; e < d->m.nnz; e++)
        nf = d->m.idx[e] + 1u > nf ? d->m.idx[e] + 1u : nf;
    return nf;
}

Test(threads, parallel_parse_equals_serial_on_real_files, .timeout = 120)
{
    static const unsigned counts[] = { 2, 3, 4, 8 };
    for (size_t i = 0; i < sizeof reals / sizeof *reals; i++) {
        TH_DATA_OR_SKIP(path, reals[i].name);
        size_t len;
        char *text = slurp(path, &len);
        hog_load_opts o;
        hog_load_opts_init(&o);
        hog_data *ref, *d;
        hog_err err;
        cr_assert_eq(hog_parse_svm_slices(text, len, path, &o, 1, &ref, &err), HOG_OK);
        if (!ref->hash.bits) /* hashed: the table's size */
            cr_assert_eq(ref->n_features, features_in(ref), "%s", reals[i].name);
        for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
            cr_assert_eq(hog_parse_svm_slices(text, len, path, &o, counts[c], &d, &err),
                         HOG_OK, "%s", err.msg);
            char what[128];
            snprintf(what, sizeof what, "%s with %u threads", reals[i].name, counts[c]);
            assert_same(ref, d, what);
            hog_data_free(d);
        }
        /* The public entry, all CPUs. */
        o.threads = 0;
        cr_assert_eq(hog_data_load(path, &o, &d, &err), HOG_OK);
        assert_same(ref, d, reals[i].name);
        hog_data_free(d);
        hog_data_free(ref);
        free(text);
    }
}

Test(parse, load_from_standard_input)
{
    char dir[512];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *p = th_write(dir, "in.svm", canon, strlen(canon));
    cr_assert(freopen(p, "rb", stdin));
    hog_data *d, *ref = parse_ok(canon, 0);
    hog_err err;
    cr_assert_eq(hog_data_load("-", NULL, &d, &err), HOG_OK, "%s", err.msg);
    assert_same(ref, d, "stdin");
    hog_data_free(d);
    hog_data_free(ref);
    p = th_write(dir, "bad.svm", "1 1:1\n\n1 2:x\n", 13);
    cr_assert(freopen(p, "rb", stdin));
    cr_assert_eq(hog_data_load("-", NULL, &d, &err), HOG_EPARSE);
    cr_assert(strncmp(err.msg, "<stdin>:3: bad value 'x'", 24) == 0, "%s", err.msg);
}

Test(parse, exact_halfway_values_round_to_even)
{
    static const char *toks[] = {
        "16777217", "16777219", "3.3554434e7", "33554435", "1.00000005960464477539062",
        "1.000000059604644775390625", "1.0000000596046448", "0.500000029802322387695312",
        "1e-38", "1.17549435e-38", "1e-45", "3.4028235e38", "3.4028235677973366e38",
        "7.006492e-46", "9007199254740993", "123456789012345678901234567890",
        "0.1", "0.2", "0.3", "1.1", "2.2e-7", "6.0221409e23", "1e22", "1e-22", "1e23",
    };
    char buf[4096];
    size_t len = 0, n = sizeof toks / sizeof *toks;
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(buf + len, "%s 1:%s 2:-%s\n", toks[i], toks[i], toks[i]);
    hog_err err;
    hog_data *d = parse_n(buf, len, 1, 0, HOG_OK, &err);
    for (size_t i = 0; i < n; i++) {
        float want = strtof(toks[i], NULL), neg = -want;
        cr_assert_eq(memcmp(&d->m.y[i], &want, 4), 0, "%s: %a vs %a", toks[i],
                     d->m.y[i], want);
        cr_assert_eq(memcmp(&d->m.val[2 * i], &want, 4), 0, "%s", toks[i]);
        cr_assert_eq(memcmp(&d->m.val[2 * i + 1], &neg, 4), 0, "-%s", toks[i]);
    }
    hog_data_free(d);
}

/* Mutated text never crashes, and any slice count gives the serial
 * result: the same data, or the same error at the same line. */
Test(threads, mutated_inputs_parse_alike_in_parallel, .timeout = 60)
{
    static const char alphabet[] = "0123456789:.eE+-# \t\r\n\nqid:nan\0x";
    struct hog_rng r;
    hog_rng_seed(&r, 99, 0);
    char base[2048];
    size_t blen = 0;
    for (int i = 0; i < 40; i++)
        blen += (size_t)sprintf(base + blen, "%s %d:%d.5 %d:1e-%d\n", i % 3 ? "-1" : "+1",
                                i % 5 + 1, i, i % 5 + 7, i % 4);
    char buf[4096];
    for (int it = 0; it < 3000; it++) {
        memcpy(buf, base, blen);
        size_t len = blen;
        int muts = 1 + (int)hog_rng_below(&r, 4);
        for (int k = 0; k < muts; k++) {
            size_t at = (size_t)hog_rng_below(&r, len);
            char c = alphabet[hog_rng_below(&r, sizeof alphabet - 1)];
            switch (hog_rng_below(&r, 3)) {
            case 0: buf[at] = c; break;
            case 1: memmove(buf + at + 1, buf + at, len - at); buf[at] = c; len++; break;
            default: memmove(buf + at, buf + at + 1, len - at - 1); len--; break;
            }
        }
        hog_load_opts o;
        hog_load_opts_init(&o);
        o.zero_based = it % 2;
        hog_data *a = NULL, *b = NULL;
        hog_err ea, eb;
        hog_status sa = hog_parse_svm_slices(buf, len, "t.svm", &o, 1, &a, &ea);
        hog_status sb = hog_parse_svm_slices(buf, len, "t.svm", &o, 2 + it % 5, &b, &eb);
        cr_assert_eq(sa, sb, "iteration %d: %s vs %s", it, hog_status_str(sa),
                     hog_status_str(sb));
        if (sa == HOG_OK) {
            assert_same(a, b, "mutated");
        } else {
            cr_assert_str_eq(ea.msg, eb.msg);
            cr_assert(strncmp(ea.msg, "t.svm:", 6) == 0, "%s", ea.msg);
        }
        hog_data_free(a);
        hog_data_free(b);
    }
}

Test(parse, fixture_files_load_alike)
{
    hog_data *a, *b;
    hog_err err;
    cr_assert_eq(hog_data_load("tests/data/canonical.svm", NULL, &a, &err), HOG_OK, "%s",
                 err.msg);
    cr_assert_eq(hog_data_load("tests/data/variants.svm", NULL, &b, &err), HOG_OK, "%s",
                 err.msg);
    assert_same(a, b, "tests/data/variants.svm");
    hog_data *c = parse_ok(canon, 0);
    assert_same(a, c, "tests/data/canonical.svm");
    hog_data_free(a);
    hog_data_free(b);
    hog_data_free(c);
}

/* ---- windows: parsed a window of whole lines at a time ---------------------- */

static hog_status parse_w(const char *text, size_t len, size_t window,
                          hog_data **d, hog_err *err)
{
    hog_load_opts o;
    hog_load_opts_init(&o);
    *d = NULL;
    return hog_parse_svm_windows(text, len, "t.svm", &o, window, false, d, err);
}

Test(windows, windowed_parse_equals_whole_on_real_files, .timeout = 120)
{
    static const size_t windows[] = { 4093, 65536, (1u << 20) + 7, 3u << 20 };
    static const char *names[] = { "a9a", "news20.binary.train.svm" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        TH_DATA_OR_SKIP(path, names[i]);
        size_t len;
        char *text = slurp(path, &len);
        hog_load_opts o;
        hog_load_opts_init(&o);
        hog_data *ref, *d;
        hog_err err;
        cr_assert_eq(hog_parse_svm_slices(text, len, path, &o, 1, &ref, &err), HOG_OK);
        cr_assert_eq(ref->n_features, features_in(ref), "%s", names[i]);
        for (size_t w = 0; w < sizeof windows / sizeof *windows; w++) {
            cr_assert_eq(parse_w(text, len, windows[w], &d, &err), HOG_OK,
                         "%s", err.msg);
            char what[128];
            snprintf(what, sizeof what, "%s in windows of %zu", names[i],
                     windows[w]);
            assert_same(ref, d, what);
            hog_data_free(d);
        }
        /* The loader: the file mapped and its pages dropped behind, and
         * standard input read a window at a time, both in small windows. */
        setenv("HOGTRAIN_TEST_TEXT_WINDOW", "100003", 1);
        cr_assert_eq(hog_data_load(path, &o, &d, &err), HOG_OK, "%s", err.msg);
        assert_same(ref, d, "mapped, windows of 100003");
        hog_data_free(d);
        cr_assert(freopen(path, "rb", stdin));
        cr_assert_eq(hog_data_load("-", &o, &d, &err), HOG_OK, "%s", err.msg);
        assert_same(ref, d, "standard input, windows of 100003");
        hog_data_free(d);
        unsetenv("HOGTRAIN_TEST_TEXT_WINDOW");
        hog_data_free(ref);
        free(text);
    }
}

/* The accumulator is sized once from the text's first 256 KiB: where the
 * rest has more entries a byte than that (news20.binary's long decimals,
 * then a9a's "3:1"s, three times as many a byte) the arrays still grow to
 * take them, and where it has fewer (a9a's, then news20.binary's) the
 * room left over is not in the result. Both against one slice parsing the
 * same text in one piece. */
Test(windows, sampled_reservation_grows_or_trims_on_mixed_real_rows,
     .timeout = 120)
{
    TH_DATA_OR_SKIP(short_rows, "a9a");
    TH_DATA_OR_SKIP(long_rows, "news20.binary.train.svm");
    size_t la, lb;
    char *a = slurp(short_rows, &la), *b = slurp(long_rows, &lb);
    const size_t head = 300u << 10, tail = 3u << 20;
    for (int order = 0; order < 2; order++) {
        const char *first = order ? b : a, *then = order ? a : b;
        size_t lf = order ? lb : la, lt = order ? la : lb;
        /* whole lines: the first file's first 300 KiB, then 3 MiB of the
         * other's */
        size_t n1 = head < lf ? head : lf, n2 = tail < lt ? tail : lt;
        while (n1 < lf && first[n1 - 1] != '\n')
            n1++;
        while (n2 < lt && then[n2 - 1] != '\n')
            n2++;
        char *text = malloc(n1 + n2);
        cr_assert_not_null(text);
        memcpy(text, first, n1);
        memcpy(text + n1, then, n2);
        hog_load_opts o;
        hog_load_opts_init(&o);
        hog_data *ref, *d;
        hog_err err;
        cr_assert_eq(hog_parse_svm_slices(text, n1 + n2, "mixed", &o, 1, &ref,
                                          &err), HOG_OK, "%s", err.msg);
        for (size_t w = 65536; w <= (4u << 20); w *= 8) {
            cr_assert_eq(parse_w(text, n1 + n2, w, &d, &err), HOG_OK, "%s",
                         err.msg);
            char what[128];
            snprintf(what, sizeof what, "%s rows first, windows of %zu",
                     order ? "long" : "short", w);
            assert_same(ref, d, what);
            hog_data_free(d);
        }
        hog_data_free(ref);
        free(text);
    }
    free(a);
    free(b);
}

/* Every window size over a text of every awkward shape: CRLF line ends
 * (a window may end between the '\r' and the '\n'), comments, blank and
 * comment-only lines, qid, a byte order mark, no newline at the end. */
Test(windows, every_window_boundary_parses_alike)
{
    static const char text[] = "\xEF\xBB\xBF" "1 1:0.5 3:2\r\n"
                               "# a comment line\r\n"
                               "\r\n"
                               "-1 qid:3 2:1e-3 7:-4 # trailing\r\n"
                               "   \t\n"
                               "+1 1:1 2:2 3:3 4:4 5:5 6:6 7:7 8:8 9:9\n"
                               "-1\r\n"
                               "1 10:0.125";
    size_t len = sizeof text - 1;
    hog_data *ref, *d;
    hog_err err;
    cr_assert_eq(parse_w(text, len, len, &ref, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(ref->m.rows, 5);
    for (size_t w = 1; w <= len; w++) {
        cr_assert_eq(parse_w(text, len, w, &d, &err), HOG_OK, "%zu: %s", w,
                     err.msg);
        char what[64];
        snprintf(what, sizeof what, "windows of %zu bytes", w);
        assert_same(ref, d, what);
        hog_data_free(d);
    }
    /* Only comments in the first windows, rows after; and none at all. */
    static const char late[] = "# c\n# d\n\n\n1 1:1\n";
    cr_assert_eq(parse_w(late, sizeof late - 1, 2, &d, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(d->m.rows, 1);
    hog_data_free(d);
    cr_assert_eq(parse_w("# c\n\n# d\n", 9, 3, &d, &err), HOG_EPARSE);
    cr_assert(strstr(err.msg, "t.svm: no rows") == err.msg, "%s", err.msg);
    cr_assert_eq(parse_w("", 0, 3, &d, &err), HOG_EPARSE);
    cr_assert_str_eq(err.msg, "t.svm: empty file, no rows");
}

/* A malformed line in a later window names the file's own line: lines
 * are counted across windows (and across each window's slices). */
Test(windows, error_lines_count_across_windows)
{
    size_t n = 60000;
    char *buf = malloc(n * 32 + 64);
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(buf + len, i % 5 == 3 ? "# note %zu\r\n"
                               : "%zu 1:%zu.5\r\n", i % 2, i);
    len += (size_t)sprintf(buf + len, "1 3:1 2:1\n1 1:1\n");
    static const size_t windows[] = { 1000, 4096, 65537, 1u << 20, 0 };
    for (size_t w = 0; w < sizeof windows / sizeof *windows; w++) {
        hog_data *d;
        hog_err err;
        cr_assert_eq(parse_w(buf, len, windows[w], &d, &err), HOG_EPARSE);
        cr_assert(strncmp(err.msg, "t.svm:60001: feature index 2 after 3", 36) == 0,
                  "%zu: %s", windows[w], err.msg);
    }
    /* The same through the loader's two readers, in windows of 4096. */
    char dir[512];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *p = th_write(dir, "bad.svm", buf, len);
    setenv("HOGTRAIN_TEST_TEXT_WINDOW", "4096", 1);
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_data_load(p, NULL, &d, &err), HOG_EPARSE);
    cr_assert(strstr(err.msg, "bad.svm:60001: feature index 2 after 3"), "%s",
              err.msg);
    cr_assert(freopen(p, "rb", stdin));
    cr_assert_eq(hog_data_load("-", NULL, &d, &err), HOG_EPARSE);
    cr_assert(strncmp(err.msg, "<stdin>:60001: feature index 2 after 3", 38) == 0,
              "%s", err.msg);
    /* A NUL byte in a later window, a line across many windows. */
    memcpy(buf + len - 16, "1 2:1 3:1\n", 10); /* line 60001 mended */
    buf[len - 3] = '\0';
    p = th_write(dir, "nul.svm", buf, len);
    cr_assert_eq(hog_data_load(p, NULL, &d, &err), HOG_EPARSE);
    cr_assert(strstr(err.msg, "nul.svm:60002: NUL byte in the line"), "%s",
              err.msg);
    cr_assert(freopen(p, "rb", stdin));
    cr_assert_eq(hog_data_load("-", NULL, &d, &err), HOG_EPARSE);
    cr_assert(strstr(err.msg, "<stdin>:60002: NUL byte in the line"), "%s", err.msg);
    len = (size_t)sprintf(buf, "1");
    for (size_t i = 0; i < 3000; i++)
        len += (size_t)sprintf(buf + len, " %zu:1", i + 1);
    len += (size_t)sprintf(buf + len, "\n-1 2:x\n");
    p = th_write(dir, "long.svm", buf, len);
    cr_assert_eq(hog_data_load(p, NULL, &d, &err), HOG_EPARSE);
    cr_assert(strstr(err.msg, "long.svm:2: bad value 'x'"), "%s", err.msg);
    cr_assert(freopen(p, "rb", stdin));
    cr_assert_eq(hog_data_load("-", NULL, &d, &err), HOG_EPARSE);
    cr_assert(strstr(err.msg, "<stdin>:2: bad value 'x'"), "%s", err.msg);
    unsetenv("HOGTRAIN_TEST_TEXT_WINDOW");
    free(buf);
}
