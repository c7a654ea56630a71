/* Interactions of three namespaces (VW's --cubic, --interactions abc;
 * docs/FORMATS.md, "Interactions"): the crossed rows against the formula
 * written out here, VW's order and duplicates, the row bound, a model on
 * real data, and the model file carrying the triples. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cross.h"
#include "helpers.h"
#include "io/io.h"

#define BITS 18u
#define MASK ((1u << BITS) - 1)
#define P 16777619u /* FNV-1's 32-bit prime: VW's FNV_PRIME */

static uint32_t feat(const char *ns, const char *name)
{
    return hog_vw_hash(name, strlen(name), hog_vw_hash(ns, strlen(ns), 0)) &
           MASK;
}

/* VW's cubic index, process_cubic_interaction: halfhash1 = P f,
 * halfhash = P (halfhash1 ^ g), index h ^ halfhash; here in 64 bits and
 * reduced at the end, as VW's 64-bit feature indices are by its mask. */
static uint32_t cubic(uint64_t f, uint64_t g, uint64_t h)
{
    return (uint32_t)((((f * P) ^ g) * P ^ h) & MASK);
}

Test(cross_cubic, hash_vectors)
{
    cr_assert_eq(cubic(0, 0, 5), 5u);
    cr_assert_eq(cubic(0, 1, 0), P & MASK);
    cr_assert_eq(cubic(1, 0, 0), (uint32_t)((uint64_t)P * P) & MASK);
    /* |a x, |b p, |c z at B = 18, seed 0 */
    uint32_t x = feat("a", "x"), p = feat("b", "p"), z = feat("c", "z");
    cr_assert_eq(x, 0xD888u);
    cr_assert_eq(p, 0x25C01u);
    /* the 32-bit product taken mod 2^B is the 64-bit one's */
    cr_assert_eq(((((x * P) ^ p) * P) ^ z) & MASK, cubic(x, p, z));
}

struct ent {
    char ns;
    const char *name;
    float v;
};

struct kv {
    uint32_t i;
    double v;
};

static int kv_cmp(const void *a, const void *b)
{
    const struct kv *x = a, *y = b;
    return (x->i > y->i) - (x->i < y->i);
}

/* Row i's crossed features for term t, by brute force: every ordered
 * choice of one entry per namespace of the term, kept when a namespace
 * named again takes an entry of weight no lower than the previous one's
 * (VW's combinations, self-interactions included, in weight order). */
static size_t brute(const struct ent *row, const char *t, struct kv *out)
{
    size_t n = 0, len = strlen(t);
    for (const struct ent *f = row; f->name; f++)
        for (const struct ent *g = row; g->name; g++) {
            if (f->ns != t[0] || g->ns != t[1])
                continue;
            uint32_t a = feat((char[]){ f->ns, 0 }, f->name);
            uint32_t b = feat((char[]){ g->ns, 0 }, g->name);
            if (t[0] == t[1] && b < a)
                continue;
            if (len == 2) {
                out[n++] = (struct kv){ ((a * P) ^ b) & MASK,
                                        (double)f->v * g->v };
                continue;
            }
            for (const struct ent *h = row; h->name; h++) {
                if (h->ns != t[2])
                    continue;
                uint32_t c = feat((char[]){ h->ns, 0 }, h->name);
                if (t[1] == t[2] && c < b)
                    continue;
                out[n++] = (struct kv){ cubic(a, b, c),
                                        (double)f->v * g->v * h->v };
            }
        }
    return n;
}

/* The crossed rows of "abc,aab,abb,aaa,ab" against the brute force: the
 * same indices and values, summed where they meet, and the count before
 * summing is hog_cross_count()'s. "bab" asks for "abb" (VW's order). */
Test(cross_cubic, crossed_rows_equal_the_formula)
{
    static const struct ent rows[3][9] = {
        { { 'a', "x", 1 }, { 'a', "y", 2 }, { 'a', "w", -0.5f },
          { 'b', "p", 0.5f }, { 'b', "q", 3 }, { 'c', "z", 1.5f },
          { 'c', "u", -2 }, { 'd', "k", 1 }, { 0, NULL, 0 } },
        { { 'a', "x", 3 }, { 'b', "p", 1 }, { 'c', "z", -1 }, { 0, NULL, 0 } },
        { { 'b', "q", 2 }, { 'c', "z", 1 }, { 0, NULL, 0 } }, /* no a */
    };
    static const char *const terms[] = { "abc", "aab", "abb", "aaa", "ab" };
    char dir[512], txt[2048] = "";
    th_tmpdir(dir, sizeof dir);
    for (int r = 0; r < 3; r++) {
        size_t n = strlen(txt);
        n += (size_t)snprintf(txt + n, sizeof txt - n, "%d", r % 2 ? -1 : 1);
        char last = 0;
        for (const struct ent *f = rows[r]; f->name; f++) {
            if (f->ns != last)
                n += (size_t)snprintf(txt + n, sizeof txt - n, " |%c", f->ns);
            last = f->ns;
            n += (size_t)snprintf(txt + n, sizeof txt - n, " %s:%g", f->name,
                                  f->v);
        }
        snprintf(txt + n, sizeof txt - n, "\n");
    }
    const char *p = th_write(dir, "c.vw", txt, strlen(txt));
    hog_data *d = th_load_hashed(p, BITS, "abc,aab,bab,aaa,ab");
    char spec[HOG_INTERACTIONS_SPEC_LEN];
    hog_interactions_format(&d->cross, spec, sizeof spec);
    cr_assert_str_eq(spec, "abc,aab,abb,aaa,ab");
    struct hog_cross_buf b;
    hog_err err;
    cr_assert_eq(hog_cross_buf_init(&b, d, &err), HOG_OK, "%s", err.msg);
    uint64_t before = 0;
    for (uint64_t i = 0; i < 3; i++) {
        struct kv want[512];
        size_t n = 0;
        for (const struct ent *f = rows[i]; f->name; f++)
            want[n++] = (struct kv){ feat((char[]){ f->ns, 0 }, f->name), f->v };
        for (size_t t = 0; t < sizeof terms / sizeof terms[0]; t++)
            n += brute(rows[i], terms[t], want + n);
        before += n;
        qsort(want, n, sizeof *want, kv_cmp);
        size_t w = 0;
        for (size_t k = 0; k < n; k++) {
            if (w && want[w - 1].i == want[k].i)
                want[w - 1].v += want[k].v;
            else
                want[w++] = want[k];
        }
        struct hog_row r = hog_data_row(d, &d->m, i, &b);
        cr_assert_eq(r.nnz, w, "row %llu: %u entries crossed, %zu by hand",
                     (unsigned long long)i, r.nnz, w);
        for (uint32_t k = 0; k < r.nnz; k++) {
            cr_assert_eq(r.idx[k], want[k].i, "row %llu entry %u",
                         (unsigned long long)i, k);
            cr_assert(fabs(r.val[k] - want[k].v) <= 1e-5 * (1 + fabs(want[k].v)),
                      "row %llu weight %u: %g, by hand %g",
                      (unsigned long long)i, r.idx[k], r.val[k], want[k].v);
        }
    }
    /* row 0: 8 own, abc 3*2*2, aab 6*2, abb 3*3, aaa 10, ab 6 */
    cr_assert_eq(before, (8 + 12 + 12 + 9 + 10 + 6) + (3 + 1 + 1 + 1 + 1 + 1) + 2);
    cr_assert_eq(d->cross_nnz, before);
    cr_assert_eq(d->cross_row_max, 57u);
    hog_cross_buf_free(&b);
    hog_data_free(d);
}

/* What is refused, each with its sentence: four namespaces, a term asked
 * twice (in VW's order: "aba" is "aab"), and a row whose
 * crossed count passes what a row holds (3,000 a-features, 2,985 weights
 * at B = 18, crossed "aaa": C(2987, 3) = 4,437,293,045 entries and its
 * own, past 2^32 - 1), at load, before any buffer is sized. */
Test(cross_cubic, refusals, .timeout = 60)
{
    char dir[512], out[4096];
    th_tmpdir(dir, sizeof dir);
    static const char vwt[] = "1 |a x |b y |c z\n-1 |a w |b y |c v\n";
    const char *vw = th_write(dir, "t.vw", vwt, strlen(vwt));
    static const struct { const char *spec, *says; } bad[] = {
        { "abcd", "interaction 'abcd' crosses 4 namespaces; at most 3" },
        { "abc,abc", "interaction 'abc' is asked twice" },
        { "aab,aba", "interaction 'aba' is asked twice (as 'aab', VW's "
                     "order)" },
        { "a", "interaction 'a' is not two or three namespaces" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = th_run(out, sizeof out, "%s train %s --interactions %s",
                        th_bin(), vw, bad[i].spec);
        cr_assert_eq(rc, 2, "%s: %s", bad[i].spec, out);
        cr_assert_not_null(strstr(out, bad[i].says), "%s: %s", bad[i].spec,
                           out);
    }
    enum { N = 3000 };
    size_t cap = N * 8 + 64, n = 0;
    char *txt = malloc(cap);
    cr_assert_not_null(txt);
    n += (size_t)snprintf(txt + n, cap - n, "-1 |a x\n1 |a");
    for (int i = 0; i < N; i++)
        n += (size_t)snprintf(txt + n, cap - n, " a%d", i);
    n += (size_t)snprintf(txt + n, cap - n, "\n");
    const char *wide = th_write(dir, "wide.vw", txt, n);
    free(txt);
    int rc = th_run(out, sizeof out, "%s train %s --interactions aaa -q -o "
                    "%s/m.hgm", th_bin(), wide, dir);
    cr_assert_eq(rc, 1, "exit %d: %s", rc, out);
    cr_assert_not_null(strstr(out, "wide.vw: row 2 of 2985 entries crosses "
                                   "to 4437296030 with --interactions aaa, "
                                   "past the 4294967295 a row can hold"),
                       "%s", out);
}

/* a9a's 123 indicator features as VW text in three namespaces (a: 1-41,
 * b: 42-82, c: 83-123), its first 5,000 rows. */
static void write_a9a_vw(const char *a9a, const char *path)
{
    char out[4096];
    int rc = th_run(out, sizeof out,
                    "head -n 5000 '%s' | awk '{ printf \"%%s\", $1; "
                    "for (n = 0; n < 3; n++) { printf \" |%%c\", 97 + n; "
                    "for (i = 2; i <= NF; i++) { split($i, p, \":\"); "
                    "if (int((p[1] - 1) / 41) == n) "
                    "printf \" f%%s:%%s\", p[1], p[2] } } print \"\" }' > '%s'",
                    a9a, path);
    cr_assert_eq(rc, 0, "%s", out);
}

static double accuracy(const char *model, const char *data)
{
    char out[4096];
    int rc = th_run(out, sizeof out, "%s predict %s %s -o %s.pred", th_bin(),
                    model, data, model);
    cr_assert_eq(rc, 0, "%s", out);
    const char *a = strstr(out, "accuracy ");
    cr_assert_not_null(a, "%s", out);
    return strtod(a + 9, NULL);
}

/* On real data the triple's features are learnt: the model differs from
 * the one without, predicts its training rows at least as well, records
 * "abc" (predict crosses alike, info shows it), and --cubic's translation
 * names the same option. */
Test(cross_cubic, a9a_model_with_abc, .timeout = 120)
{
    TH_DATA_OR_SKIP(a9a, "a9a");
    char dir[512], vw[600], m0[600], m1[600], out[8192];
    th_tmpdir(dir, sizeof dir);
    snprintf(vw, sizeof vw, "%s/a9a.vw", dir);
    snprintf(m0, sizeof m0, "%s/plain.hgm", dir);
    snprintf(m1, sizeof m1, "%s/abc.hgm", dir);
    write_a9a_vw(a9a, vw);
    int rc = th_run(out, sizeof out, "%s train %s --algo serial --epochs 5 "
                    "--seed 3 -q -o %s", th_bin(), vw, m0);
    cr_assert_eq(rc, 0, "%s", out);
    rc = th_run(out, sizeof out, "%s train %s --algo serial --epochs 5 "
                "--seed 3 --interactions abc -q -o %s", th_bin(), vw, m1);
    cr_assert_eq(rc, 0, "%s", out);
    double plain = accuracy(m0, vw), cross = accuracy(m1, vw);
    cr_assert(plain > 75.0, "without: %.2f%%", plain);
    cr_assert(cross >= plain, "with abc %.2f%%, without %.2f%%", cross, plain);
    hog_model *a, *b;
    hog_err err;
    cr_assert_eq(hog_model_load(m0, &a, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_model_load(m1, &b, &err), HOG_OK, "%s", err.msg);
    cr_assert_str_eq(hog_model_interactions(b), "abc");
    /* weights no stored feature has: the triples' */
    const float *wa = hog_model_weights(a), *wb = hog_model_weights(b);
    uint64_t only_b = 0;
    for (uint64_t j = 0; j <= MASK; j++)
        only_b += wa[j] == 0 && wb[j] != 0;
    cr_assert(only_b > 1000, "%llu weights of crossed features",
              (unsigned long long)only_b);
    hog_model_free(a);
    hog_model_free(b);
    rc = th_run(out, sizeof out, "%s info %s", th_bin(), m1);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert_not_null(strstr(out, "interactions     abc"), "%s", out);
}

/* A term of a repeated namespace is kept in VW's order in the model
 * ("bab" is "abb"), predict crosses alike, and a model whose header holds
 * a triple's bytes out of place, or a triple without the flag that older
 * readers refuse, is refused as corrupt (its sum made good), never
 * crossed otherwise than it was trained. */
Test(cross_cubic, model_file_keeps_triples, .timeout = 60)
{
    char dir[512], m[600], out[4096];
    th_tmpdir(dir, sizeof dir);
    static const char vwt[] = "1 |a x |b y z |c v\n-1 |a w |b y |c u\n";
    const char *vw = th_write(dir, "t.vw", vwt, strlen(vwt));
    snprintf(m, sizeof m, "%s/m.hgm", dir);
    int rc = th_run(out, sizeof out, "%s train %s --interactions bab "
                    "--interactions ca,cab --epochs 2 -q -o %s", th_bin(), vw,
                    m);
    cr_assert_eq(rc, 0, "%s", out);
    hog_model *a;
    hog_err err;
    cr_assert_eq(hog_model_load(m, &a, &err), HOG_OK, "%s", err.msg);
    cr_assert_str_eq(hog_model_interactions(a), "abb,ca,cab");
    hog_model_free(a);
    rc = th_run(out, sizeof out, "%s predict %s %s -o %s/p.txt", th_bin(), m,
                vw, dir);
    cr_assert_eq(rc, 0, "%s", out);
    /* the first term's bytes "abb\0" as "a\0b\0": refused */
    size_t len;
    unsigned char *raw = (unsigned char *)th_slurp(m, &len);
    unsigned char *at = NULL;
    for (size_t i = 0; i + 12 <= len && !at; i++)
        if (!memcmp(raw + i, "abb\0ca\0\0cab\0", 12))
            at = raw + i;
    cr_assert_not_null(at);
    at[1] = 0, at[2] = 'b';
    uint32_t crc = hog_crc32c(0, raw, len - 4); /* the file's last field */
    for (int k = 0; k < 4; k++)
        raw[len - 4 + (size_t)k] = (unsigned char)(crc >> (8 * k));
    const char *bad = th_write(dir, "bad.hgm", (char *)raw, len);
    free(raw);
    cr_assert_neq(hog_model_load(bad, &a, &err), HOG_OK);
    cr_assert_not_null(strstr(err.msg, "interactions that are not pairs or "
                                       "triples"), "%s", err.msg);
    /* the flag that makes older readers refuse a triple (bit 3 at 96) */
    raw = (unsigned char *)th_slurp(m, &len);
    cr_assert_eq(raw[96] & 8, 8);
    raw[96] &= (unsigned char)~8u;
    crc = hog_crc32c(0, raw, len - 4);
    for (int k = 0; k < 4; k++)
        raw[len - 4 + (size_t)k] = (unsigned char)(crc >> (8 * k));
    bad = th_write(dir, "noflag.hgm", (char *)raw, len);
    free(raw);
    cr_assert_neq(hog_model_load(bad, &a, &err), HOG_OK);
    cr_assert_not_null(strstr(err.msg, "interactions that are not pairs or "
                                       "triples"), "%s", err.msg);
}
