/* Vowpal Wabbit text (docs/FORMATS.md, "The Vowpal Wabbit dialect
 * accepted"): every part of the syntax against indices computed here,
 * the format told by content or forced, each malformed line at its
 * line, parallel parsing against serial, a9a written as VW text against
 * plain a9a, rcv1_vw_small in its VW form, and convert's hashed .hgb
 * trained by every algorithm and streamed. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "io/io.h"

static hog_data *parse_vw(const char *text, size_t len, unsigned bits,
                          unsigned slices, hog_format fmt, hog_status want,
                          hog_err *err)
{
    hog_load_opts o;
    hog_load_opts_init(&o);
    o.hash_bits = bits;
    o.format = fmt;
    hog_data *d = NULL;
    hog_status st = hog_parse_svm_slices(text, len, "t.vw", &o, slices, &d, err);
    cr_assert_eq(st, want, "status %s, want %s: %s", hog_status_str(st),
                 hog_status_str(want), st ? err->msg : "");
    return d;
}

/* The weight of feature `name` in namespace ns (NULL: the default one):
 * VW's hashing, hash seed 0. */
static uint32_t feat(const char *ns, const char *name, unsigned bits)
{
    uint32_t nsh = ns ? hog_vw_hash(ns, strlen(ns), 0) : hog_murmur3_32("", 0, 0);
    return hog_vw_hash(name, strlen(name), nsh) &
           (uint32_t)((UINT64_C(1) << bits) - 1);
}

struct ent {
    uint32_t idx;
    float val;
};

static int ent_cmp(const void *a, const void *b)
{
    const struct ent *x = a, *y = b;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Row i of d holds exactly the n entries (any order, distinct indices). */
static void assert_row(const hog_data *d, uint64_t i, float label,
                       struct ent *want, size_t n)
{
    if (n)
        qsort(want, n, sizeof *want, ent_cmp);
    uint64_t a = d->m.off[i], b = d->m.off[i + 1];
    cr_assert_eq(d->m.y[i], label, "row %llu: label %g", (unsigned long long)i,
                 d->m.y[i]);
    cr_assert_eq(b - a, n, "row %llu: %llu entries, want %zu",
                 (unsigned long long)i, (unsigned long long)(b - a), n);
    for (size_t k = 0; k < n; k++) {
        cr_assert_eq(d->m.idx[a + k], want[k].idx, "row %llu entry %zu",
                     (unsigned long long)i, k);
        cr_assert_eq(d->m.val[a + k], want[k].val, "row %llu entry %zu: %g",
                     (unsigned long long)i, k, d->m.val[a + k]);
    }
}

static const char every_part[] =
    "# a comment: a line starting with '#' (hogtrain's, VW has none)\n"
    "1 |f a b:2 c:0.5 z:0\n"
    "-1 2 'tag1 |f a |g:0.5 x y:4\n"
    "1 tag2|f 123 b\n"
    "-1 0.5 |  |f\n"
    "\n"
    "1 | plain 7:3 user#5\r\n"
    "-1\n"
    "0.25\t|f\ta\t|g x a a:2\n"
    "-1 |s city:paris :2.5 :4 |t:2 :1 \x01w\x02\n";

Test(vw, every_part_of_the_syntax)
{
    const unsigned B = 18;
    hog_err err;
    for (unsigned slices = 1; slices <= 3; slices++) {
        hog_data *d = parse_vw(every_part, sizeof every_part - 1, 0, slices,
                               HOG_FORMAT_AUTO, HOG_OK, &err);
        cr_assert_eq(d->format, HOG_FORMAT_VW);
        cr_assert_eq(d->hash.bits, B); /* VW's default -b 18 */
        cr_assert_eq(d->n_features, 1u << B);
        cr_assert_eq(d->m.rows, 8);
        struct ent r0[] = { { feat("f", "a", B), 1 }, { feat("f", "b", B), 2 },
                            { feat("f", "c", B), 0.5f } };
        assert_row(d, 0, 1, r0, 3);
        struct ent r1[] = { { feat("f", "a", B), 1 }, { feat("g", "x", B), 0.5f },
                            { feat("g", "y", B), 2 } };
        assert_row(d, 1, -1, r1, 3);
        /* digits: the number plus the namespace's hash */
        uint32_t n123 = (123u + hog_vw_hash("f", 1, 0)) & ((1u << B) - 1);
        cr_assert_eq(n123, feat("f", "123", B));
        struct ent r2[] = { { n123, 1 }, { feat("f", "b", B), 1 } };
        assert_row(d, 2, 1, r2, 2);
        assert_row(d, 3, -1, NULL, 0);
        struct ent r4[] = { { feat(NULL, "plain", B), 1 }, { 7, 3 },
                            { feat(NULL, "user#5", B), 1 } };
        assert_row(d, 4, 1, r4, 3);
        assert_row(d, 5, -1, NULL, 0);
        /* a twice in g: merged, 1 + 2 */
        struct ent r6[] = { { feat("f", "a", B), 1 }, { feat("g", "x", B), 1 },
                            { feat("g", "a", B), 3 } };
        assert_row(d, 6, 0.25f, r6, 3);
        /* a string value: VW's chained hash, value 1; anonymous features:
         * the namespace's hash plus their number in it; control bytes at
         * a name's ends are not part of it */
        uint32_t hs = hog_vw_hash("s", 1, 0), ht = hog_vw_hash("t", 1, 0);
        const uint32_t m = (1u << B) - 1;
        struct ent r7[] = {
            { hog_vw_hash("paris", 5, hog_vw_hash("city", 4, hs)) & m, 1 },
            { hs & m, 2.5f }, { (hs + 1) & m, 4 }, { ht & m, 2 },
            { feat("t", "w", B), 2 },
        };
        assert_row(d, 7, -1, r7, 5);
        cr_assert_eq(d->hash.merged, 1);
        const float *imp = hog_data_importance(d);
        cr_assert(imp);
        const float want_imp[] = { 1, 2, 1, 0.5f, 1, 1, 1, 1 };
        for (int i = 0; i < 8; i++)
            cr_assert_eq(imp[i], want_imp[i], "row %d: importance %g", i, imp[i]);
        hog_data_free(d);
    }
    /* every importance 1: no array */
    const char plain[] = "1 |f a\n-1 1 |f b\n";
    hog_data *d = parse_vw(plain, sizeof plain - 1, 0, 1, HOG_FORMAT_AUTO,
                           HOG_OK, &err);
    cr_assert_null(hog_data_importance(d));
    hog_data_free(d);
}

Test(vw, features_that_share_a_weight_are_merged_and_counted)
{
    /* 2 bits: 4 weights for 8 features, so some share */
    const char text[] = "1 |f a b c d e f g h\n-1 |f a\n";
    hog_err err;
    hog_data *d = parse_vw(text, sizeof text - 1, 2, 1, HOG_FORMAT_VW, HOG_OK,
                           &err);
    cr_assert_eq(d->n_features, 4);
    cr_assert_leq(d->m.off[1], 4);
    float sum = 0;
    for (uint64_t e = 0; e < d->m.off[1]; e++) {
        sum += d->m.val[e];
        if (e)
            cr_assert_lt(d->m.idx[e - 1], d->m.idx[e]);
    }
    cr_assert_eq(sum, 8.0f);
    cr_assert_eq(d->hash.merged, 8 - d->m.off[1]);
    unsigned per[4] = { 0 };
    const char *names = "abcdefgh";
    for (int k = 0; k < 8; k++) {
        char nm[2] = { names[k], 0 };
        per[feat("f", nm, 2)]++;
    }
    uint64_t shared = 0;
    for (int s = 0; s < 4; s++)
        shared += per[s] >= 2;
    cr_assert_eq(d->hash.collisions, shared);
    hog_data_free(d);
}

Test(vw, the_format_is_told_by_content_or_forced)
{
    hog_err err;
    /* a '|' in a LIBSVM comment does not make it VW */
    const char svm[] = "# a|b\n1 1:1 2:3 # c|d\n-1 3:1\n";
    hog_data *d = parse_vw(svm, sizeof svm - 1, 0, 1, HOG_FORMAT_AUTO, HOG_OK,
                           &err);
    cr_assert_eq(d->format, HOG_FORMAT_LIBSVM);
    cr_assert_eq(d->hash.bits, 0);
    hog_data_free(d);
    /* forced the other way, each fails on its first line, saying why */
    parse_vw(svm, sizeof svm - 1, 0, 1, HOG_FORMAT_VW, HOG_EPARSE, &err);
    cr_assert(strstr(err.msg, "t.vw:2: more fields before the first '|'"), "%s",
              err.msg); /* '#' is no comment there, its '|' a namespace's */
    const char svm2[] = "1 1:1 2:3\n";
    parse_vw(svm2, sizeof svm2 - 1, 0, 1, HOG_FORMAT_VW, HOG_EPARSE, &err);
    cr_assert(strstr(err.msg, "t.vw:1: a third field before the '|'"), "%s",
              err.msg);
    const char vw[] = "1 |f a\n";
    parse_vw(vw, sizeof vw - 1, 0, 1, HOG_FORMAT_LIBSVM, HOG_EPARSE, &err);
    cr_assert(strstr(err.msg, "t.vw:1: "), "%s", err.msg);
    /* the command's --format and info's description */
    char dir[512], out[4096];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *p = th_write(dir, "d.txt", every_part, sizeof every_part - 1);
    int rc = th_run(out, sizeof out, "'%s' info '%s'", th_bin(), p);
    cr_assert(rc == 0 && strstr(out, "format           Vowpal Wabbit text") &&
                  strstr(out, "--hash-bits 18 --hash-seed 0") &&
                  strstr(out, "importance       2 rows"),
              "%s", out);
    rc = th_run(out, sizeof out, "'%s' info --format libsvm '%s'", th_bin(), p);
    cr_assert_eq(rc, 1, "%s", out);
    rc = th_run(out, sizeof out, "'%s' info --format csv '%s'", th_bin(), p);
    cr_assert(rc == 2 && strstr(out, "unknown format 'csv' (auto, libsvm, vw)"),
              "%s", out);
    rc = th_run(out, sizeof out, "'%s' info --hash-bits 12 '%s'", th_bin(), p);
    cr_assert(rc == 0 && strstr(out, "--hash-bits 12"), "%s", out);
    rc = th_run(out, sizeof out, "'%s' info --hash-bits 32 '%s'", th_bin(), p);
    cr_assert(rc == 2 && strstr(out, "1 to 31"), "%s", out);
}

/* Each malformed line names the file, its line and the reason. */
Test(vw, malformed_lines_name_their_line_and_reason)
{
    static const struct {
        const char *line, *reason;
        hog_status st;
    } bad[] = {
        { "|f a", "no label (every row needs one", HOG_EPARSE },
        { "1|f a", "no label: '1' touches the '|', which makes it the tag",
          HOG_EPARSE },
        { "x |f a", "label 'x' is not a number", HOG_EPARSE },
        { "nan |f a", "label 'nan' is NaN", HOG_EPARSE },
        { "1 -2 |f a", "importance weight '-2' is negative", HOG_EPARSE },
        { "1 w |f a", "importance weight 'w' is not a number", HOG_EPARSE },
        { "1 2 3 |f a", "a third field before the '|' ('3', VW's initial "
                        "prediction)", HOG_EPARSE },
        { "1 2 3 4 5|f a", "more fields before the first '|'", HOG_EPARSE },
        { "1 |f a:", "missing value after feature 'a:'", HOG_EPARSE },
        { "1 |f a:1x", "bad value '1x' of feature 'a' (a number, or a "
                       "string that starts with neither", HOG_EPARSE },
        { "1 |f a:b:c", "bad value 'b:c' of feature 'a' (one ':' in a "
                        "feature)", HOG_EPARSE },
        { "1 |f a:inf", "value 'inf' of feature 'a' is infinite", HOG_EPARSE },
        { "1 |f a:1e39", "value '1e39' of feature 'a' is out of range",
          HOG_ERANGE },
        { "1 |:2 a", "a namespace without a name before ':'", HOG_EPARSE },
        { "1 |f:x a", "bad value 'x' of namespace 'f' (a number)",
          HOG_EPARSE },
        { "1 |f:1e30 a:1e30", "the value of feature 'a' times its "
                              "namespace's is out of range", HOG_ERANGE },
    };
    hog_err err;
    char text[512];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int n = snprintf(text, sizeof text, "1 |f a\n-1 |g b:2\n%s\n1 |f c\n",
                         bad[i].line);
        parse_vw(text, (size_t)n, 0, 1, HOG_FORMAT_AUTO, bad[i].st, &err);
        char want[600];
        snprintf(want, sizeof want, "t.vw:3: %s", bad[i].reason);
        cr_assert(strncmp(err.msg, want, strlen(want)) == 0,
                  "'%s': got \"%s\", want \"%s...\"", bad[i].line, err.msg, want);
    }
    /* a NUL byte */
    const char nul[] = "1 |f a\n1 |f b\0c\n";
    parse_vw(nul, sizeof nul - 1, 0, 1, HOG_FORMAT_VW, HOG_EPARSE, &err);
    cr_assert_str_eq(err.msg, "t.vw:2: NUL byte in the line");
    /* deep in a large text parsed in slices: still its own line */
    size_t cap = 3u << 20, len = 0;
    char *big = malloc(cap);
    unsigned bad_line = 60000;
    for (unsigned l = 1; l <= 90000; l++)
        len += (size_t)snprintf(big + len, cap - len, l == bad_line
                                ? "1 |f a:1zz\n" : "%d |f w%u:0.5 x%u\n",
                                l % 2 ? 1 : -1, l % 97, l % 13);
    for (unsigned slices = 1; slices <= 4; slices += 3) {
        parse_vw(big, len, 0, slices, HOG_FORMAT_AUTO, HOG_EPARSE, &err);
        cr_assert(strstr(err.msg, "t.vw:60000: bad value '1zz' of feature 'a'"),
                  "%u slices: %s", slices, err.msg);
    }
    /* and through convert's windows of 4 KiB */
    char dir[512], out[4096];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *p = th_write(dir, "big.vw", big, len);
    int rc = th_run(out, sizeof out, "'%s' convert -q --window 4K '%s' '%s/b.hgb'",
                    th_bin(), p, dir);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "big.vw:60000: bad value '1zz'"), "%s", out);
    free(big);
}

/* a9a as VW text: "label |f w3 w11 ..." (every a9a value is 1). */
static const char *a9a_as_vw(const char *svm, const char *dir, const char *name)
{
    size_t len;
    char *t = th_slurp(svm, &len);
    size_t cap = len * 2 + 1024, n = 0;
    char *o = malloc(cap);
    for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n")) {
        char *sp = strchr(line, ' ');
        if (sp)
            *sp = 0;
        n += (size_t)snprintf(o + n, cap - n, "%s |f", line);
        for (char *tok = sp ? strtok_r(sp + 1, " ", &sp) : NULL; tok;
             tok = strtok_r(NULL, " ", &sp)) {
            char *c = strchr(tok, ':');
            if (!c)
                continue;
            *c = 0;
            n += strcmp(c + 1, "1") == 0
                     ? (size_t)snprintf(o + n, cap - n, " w%s", tok)
                     : (size_t)snprintf(o + n, cap - n, " w%s:%s", tok, c + 1);
        }
        n += (size_t)snprintf(o + n, cap - n, "\n");
    }
    const char *p = th_write(dir, name, o, n);
    free(o);
    free(t);
    return p;
}

/* The last epoch's test accuracy in a --json report. */
static double json_test_accuracy(const char *path)
{
    size_t len;
    char *json = th_slurp(path, &len);
    const char *acc = NULL, *q = json;
    while ((q = strstr(q, "\"test_accuracy\": ")))
        acc = q, q++;
    cr_assert(acc, "%s", json);
    double a = strtod(acc + 17, NULL);
    free(json);
    return a;
}

Test(vw, a9a_as_vw_text_reaches_plain_a9a_accuracy, .timeout = 600)
{
    TH_DATA_OR_SKIP(train, "a9a");
    TH_DATA_OR_SKIP(test, "a9a.t");
    char dir[512], out[8192], jp[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *vtrain = a9a_as_vw(train, dir, "a9a.vw");
    const char *vtest = a9a_as_vw(test, dir, "a9a.t.vw");
    int rc = th_run(out, sizeof out, "'%s' train -q --epochs 5 -t '%s' --json "
                    "'%s/plain.json' '%s'", th_bin(), test, dir, train);
    cr_assert_eq(rc, 0, "%s", out);
    snprintf(jp, sizeof jp, "%s/plain.json", dir);
    double plain = json_test_accuracy(jp);
    rc = th_run(out, sizeof out, "'%s' train -q --epochs 5 -t '%s' --json "
                "'%s/vw.json' -o '%s/vw.hgm' '%s'", th_bin(), vtest, dir, dir,
                vtrain);
    cr_assert_eq(rc, 0, "%s", out);
    snprintf(jp, sizeof jp, "%s/vw.json", dir);
    double vw = json_test_accuracy(jp);
    cr_assert(fabs(vw - plain) <= 0.005, "VW text %.4f, LIBSVM %.4f", vw, plain);
    cr_assert_gt(plain, 0.84);
    /* the model hashes its test data itself */
    rc = th_run(out, sizeof out, "'%s' predict -o '%s/p.txt' '%s/vw.hgm' '%s'", th_bin(),
                dir, dir, vtest);
    cr_assert_eq(rc, 0, "%s", out);
    const char *a = strstr(out, "accuracy ");
    cr_assert(a && fabs(strtod(a + 9, NULL) / 100 - vw) < 1e-4, "%s", out);
    /* a model of unhashed features refuses VW text, and train its mix */
    rc = th_run(out, sizeof out, "'%s' train -q --epochs 1 -o '%s/p.hgm' '%s' "
                "&& '%s' predict '%s/p.hgm' '%s'", th_bin(), dir, train,
                th_bin(), dir, vtest);
    cr_assert(rc == 1 && strstr(out, "a model scores only data hashed as its "
                                "training data was"), "%s", out);
    rc = th_run(out, sizeof out, "'%s' train -q --epochs 1 -t '%s' '%s'",
                th_bin(), vtest, train);
    cr_assert(rc == 1 && strstr(out, "hash both, with --hash-bits"), "%s", out);
}

/* Parsed in parallel as serially, hashing and merging included. */
Test(vw, parallel_parsing_equals_serial)
{
    TH_DATA_OR_SKIP(train, "a9a");
    char dir[512];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *p = a9a_as_vw(train, dir, "a9a.vw");
    size_t len;
    char *t = th_slurp(p, &len);
    hog_err err;
    hog_data *one = parse_vw(t, len, 8, 1, HOG_FORMAT_AUTO, HOG_OK, &err);
    cr_assert_gt(one->hash.collisions, 0);
    cr_assert_gt(one->hash.merged, 0);
    for (unsigned s = 2; s <= 6; s += 4) {
        hog_data *d = parse_vw(t, len, 8, s, HOG_FORMAT_AUTO, HOG_OK, &err);
        cr_assert_eq(d->m.nnz, one->m.nnz);
        cr_assert(memcmp(d->m.off, one->m.off, 8 * (d->m.rows + 1)) == 0);
        cr_assert(memcmp(d->m.idx, one->m.idx, 4 * d->m.nnz) == 0);
        cr_assert(memcmp(d->m.val, one->m.val, 4 * d->m.nnz) == 0);
        cr_assert(memcmp(d->m.y, one->m.y, 4 * d->m.rows) == 0);
        cr_assert_eq(d->hash.collisions, one->hash.collisions);
        cr_assert_eq(d->hash.merged, one->hash.merged);
        hog_data_free(d);
    }
    hog_data_free(one);
    free(t);
}

/* rcv1_vw_small as VW wrote it ("label |f idx:val ..."; the copy here had
 * its " |f" removed): integer names are the number plus f's hash, so each
 * row is the LIBSVM row shifted; it parses, trains and predicts. */
static const char *rcv1_as_vw(const char *svm, const char *dir, const char *name)
{
    size_t len;
    char *t = th_slurp(svm, &len);
    char *o = malloc(len + len / 10 + 64);
    size_t n = 0;
    for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n")) {
        char *sp = strchr(line, ' ');
        if (!sp) {
            n += (size_t)sprintf(o + n, "%s |f\n", line);
            continue;
        }
        *sp = 0;
        n += (size_t)sprintf(o + n, "%s |f %s\n", line, sp + 1);
    }
    const char *p = th_write(dir, name, o, n);
    free(o);
    free(t);
    return p;
}

Test(vw, rcv1_vw_small_parses_and_trains, .timeout = 300)
{
    TH_DATA_OR_SKIP(train, "rcv1_vw_small.train");
    TH_DATA_OR_SKIP(test, "rcv1_vw_small.test");
    char dir[512], out[8192];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *vtrain = rcv1_as_vw(train, dir, "rcv1.train.vw");
    const char *vtest = rcv1_as_vw(test, dir, "rcv1.test.vw");
    hog_err err;
    hog_data *v = NULL, *s = NULL;
    cr_assert_eq(hog_data_load(vtrain, NULL, &v, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_data_load(train, NULL, &s, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(v->format, HOG_FORMAT_VW);
    cr_assert_eq(v->m.rows, 1000);
    cr_assert_eq(v->m.rows, s->m.rows);
    const uint32_t mask = (1u << 18) - 1, fh = hog_vw_hash("f", 1, 0);
    for (uint64_t i = 0; i < 20; i++) {
        uint64_t a = s->m.off[i], b = s->m.off[i + 1];
        struct ent want[4096];
        cr_assert_lt(b - a, 4096);
        for (uint64_t e = a; e < b; e++)
            want[e - a] = (struct ent){ (s->m.idx[e] + 1 + fh) & mask,
                                        s->m.val[e] };
        assert_row(v, i, s->m.y[i], want, b - a);
    }
    hog_data_free(v);
    hog_data_free(s);
    int rc = th_run(out, sizeof out, "'%s' train -q --epochs 10 -t '%s' -o "
                    "'%s/r.hgm' --json '%s/r.json' '%s' && '%s' predict -o "
                    "/dev/null '%s/r.hgm' '%s'", th_bin(), vtest, dir, dir, vtrain,
                    th_bin(), dir, vtest);
    cr_assert_eq(rc, 0, "%s", out);
    char jp[1024];
    snprintf(jp, sizeof jp, "%s/r.json", dir);
    cr_assert_gt(json_test_accuracy(jp), 0.85);
    const char *a = strstr(out, "accuracy ");
    cr_assert(a && strtod(a + 9, NULL) > 85.0, "%s", out);
}

/* convert writes hashed indices: the .hgb trains with every algorithm,
 * streamed too, and its model predicts VW text. */
Test(vw, converted_vw_trains_everywhere, .timeout = 600)
{
    TH_DATA_OR_SKIP(train, "a9a");
    TH_DATA_OR_SKIP(test, "a9a.t");
    char dir[512], out[8192];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *vtrain = a9a_as_vw(train, dir, "a9a.vw");
    const char *vtest = a9a_as_vw(test, dir, "a9a.t.vw");
    int rc = th_run(out, sizeof out, "'%s' convert --hash-bits 16 --hash-seed 3 "
                    "'%s' '%s/a.hgb'", th_bin(), vtrain, dir);
    cr_assert(rc == 0 && strstr(out, "hashed into 2^16 weights (seed 3)"), "%s",
              out);
    rc = th_run(out, sizeof out, "'%s' info '%s/a.hgb'", th_bin(), dir);
    cr_assert(rc == 0 && strstr(out, ".hgb version 3") &&
                  strstr(out, "--hash-bits 16 --hash-seed 3"),
              "%s", out);
    static const char *const runs[] = {
        "--algo serial", "--algo hogwild --threads 2", "--algo cyclades",
        "--algo dcd --loss hinge", "--algo scd --l1 0.0001", "--stream",
    };
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        rc = th_run(out, sizeof out, "'%s' train -q --epochs 2 %s -o "
                    "'%s/m.hgm' '%s/a.hgb' && '%s' predict -o '%s/p.txt' "
                    "'%s/m.hgm' '%s'",
                    th_bin(), runs[i], dir, dir, th_bin(), dir, dir, vtest);
        cr_assert_eq(rc, 0, "%s: %s", runs[i], out);
        const char *a = strstr(out, "accuracy ");
        cr_assert(a && strtod(a + 9, NULL) > 80.0, "%s: %s", runs[i], out);
    }
    /* the hashing of the .hgb, not another */
    rc = th_run(out, sizeof out, "'%s' train -q --epochs 1 --hash-bits 18 "
                "'%s/a.hgb'", th_bin(), dir);
    cr_assert(rc == 1 && strstr(out, "hashed with --hash-bits 16 --hash-seed 3"),
              "%s", out);
    rc = th_run(out, sizeof out, "'%s' train -q --epochs 1 --stream --hash-bits "
                "18 '%s/a.hgb'", th_bin(), dir);
    cr_assert(rc == 1 && strstr(out, "hashed with --hash-bits 16"), "%s", out);
    /* importance weights: convert cannot keep them; train takes them as
     * the rows' weights, the same model as --weights with those values */
    const char *w = th_write(dir, "w.vw", "1 2 |f a\n-1 |f b\n", 17);
    rc = th_run(out, sizeof out, "'%s' convert '%s' '%s/w.hgb'", th_bin(), w, dir);
    cr_assert(rc == 1 && strstr(out, "importance weights, which a .hgb file has "
                                "no place for"), "%s", out);
    const char *u = th_write(dir, "u.vw", "1 |f a\n-1 |f b\n", 15);
    const char *wf = th_write(dir, "w.txt", "2\n1\n", 4);
    rc = th_run(out, sizeof out, "'%s' train -q --epochs 3 '%s' -o '%s/i.hgm' "
                "&& '%s' train -q --epochs 3 '%s' --weights '%s' -o '%s/f.hgm' "
                "&& cmp '%s/i.hgm' '%s/f.hgm'", th_bin(), w, dir, th_bin(), u,
                wf, dir, dir, dir);
    cr_assert(rc == 0, "%s", out);
}

/* Labels 1..K, as VW's --oaa: K classes, and their model keeps the
 * hashing (.hgm version 3 with K classes). */
Test(vw, oaa_labels_train_k_classes)
{
    char dir[512], out[4096];
    cr_assert(th_tmpdir(dir, sizeof dir));
    size_t cap = 1 << 16, n = 0;
    char *t = malloc(cap);
    for (int i = 0; i < 600; i++)
        n += (size_t)snprintf(t + n, cap - n, "%d |w %s noise%d\n", i % 3 + 1,
                              i % 3 == 0 ? "alpha" : i % 3 == 1 ? "beta" : "gamma",
                              i % 7);
    const char *p = th_write(dir, "k.vw", t, n);
    free(t);
    int rc = th_run(out, sizeof out, "'%s' train -q --epochs 3 --hash-bits 10 "
                    "-o '%s/k.hgm' '%s'", th_bin(), dir, p);
    cr_assert_eq(rc, 0, "%s", out);
    rc = th_run(out, sizeof out, "'%s' info '%s/k.hgm'", th_bin(), dir);
    cr_assert(rc == 0 && strstr(out, "classes          3: 1 2 3") &&
                  strstr(out, "--hash-bits 10 --hash-seed 0"),
              "%s", out);
    rc = th_run(out, sizeof out, "'%s' predict -o '%s/p.txt' '%s/k.hgm' '%s'",
                th_bin(), dir, dir, p);
    cr_assert(rc == 0 && strstr(out, "accuracy 100.00%"), "%s", out);
}
