/* Interactions (VW's -q; docs/FORMATS.md, "Interactions") and sparse
 * models at rest (docs/FORMATS.md, ".hgm"): the crossed rows against an
 * explicit materialisation, the formula's fixed vectors, a label that only
 * the product of two namespaces explains, predict crossing as training
 * did, the refusals, and a B = 24 model small on disk. */
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

/* The weight of VW feature name in namespace ns (seed 0). */
static uint32_t feat(const char *ns, const char *name)
{
    return hog_vw_hash(name, strlen(name), hog_vw_hash(ns, strlen(ns), 0)) &
           MASK;
}

/* The formula, fixed: ((f * 16777619) ^ g) mod 2^B. */
Test(interactions, pair_hash_vectors)
{
    cr_assert_eq(((0u * HOG_CROSS_PRIME) ^ 5u) & MASK, 5u);
    cr_assert_eq(((1u * HOG_CROSS_PRIME) ^ 0u) & MASK, 16777619u & MASK);
    cr_assert_eq((16777619u & MASK), 0x193u); /* 0x01000193 mod 2^18 */
    cr_assert_eq(((3u * HOG_CROSS_PRIME) ^ 7u) & MASK, (0x4B9u ^ 7u));
    /* |a x crossed with |b p, seed 0, B = 18, checked with the Python
     * MurmurHash3 of tests/test_hash.c: x is 0xD888, p 0x25C01, the pair
     * 0x28219 (the same from the full 32-bit hashes taken mod 2^18, VW's
     * way) */
    cr_assert_eq(feat("a", "x"), 0xD888u);
    cr_assert_eq(feat("b", "p"), 0x25C01u);
    cr_assert_eq(((feat("a", "x") * HOG_CROSS_PRIME) ^ feat("b", "p")) & MASK,
                 0x28219u);
}

struct ent {
    const char *ns, *name;
    float v;
};

/* (a) The crossed rows of "ab,aa" equal the crossing written out: each row
 * of the file and of its explicit twin (numbered features of the default
 * namespace, whose weight is the number itself) read alike, and serial
 * training on both gives the same weights. */
Test(interactions, crossed_rows_equal_explicit_materialisation)
{
    static const struct ent rows[3][5] = {
        { { "a", "x", 1 }, { "a", "y", 2 }, { "b", "p", 0.5f }, { "c", "z", 1 },
          { NULL, NULL, 0 } },
        { { "a", "x", 3 }, { "b", "p", 1 }, { "b", "q", -1 }, { NULL, NULL, 0 } },
        { { "b", "q", 2 }, { "c", "z", 1 }, { NULL, NULL, 0 } }, /* no a */
    };
    static const float label[3] = { 1, -1, 1 };
    char dir[512], txt[2048] = "", exp[8192] = "";
    th_tmpdir(dir, sizeof dir);
    for (int r = 0; r < 3; r++) {
        size_t n = strlen(txt), e = strlen(exp);
        n += (size_t)snprintf(txt + n, sizeof txt - n, "%g", label[r]);
        e += (size_t)snprintf(exp + e, sizeof exp - e, "%g |", label[r]);
        const char *last = "";
        for (const struct ent *f = rows[r]; f->ns; f++) {
            if (strcmp(f->ns, last) != 0)
                n += (size_t)snprintf(txt + n, sizeof txt - n, " |%s", f->ns);
            last = f->ns;
            n += (size_t)snprintf(txt + n, sizeof txt - n, " %s:%g", f->name,
                                  f->v);
            e += (size_t)snprintf(exp + e, sizeof exp - e, " %u:%.9g",
                                  feat(f->ns, f->name), f->v);
        }
        /* ab: every a with every b */
        for (const struct ent *f = rows[r]; f->ns; f++)
            for (const struct ent *g = rows[r]; g->ns; g++)
                if (!strcmp(f->ns, "a") && !strcmp(g->ns, "b"))
                    e += (size_t)snprintf(
                        exp + e, sizeof exp - e, " %u:%.9g",
                        ((feat("a", f->name) * HOG_CROSS_PRIME) ^
                         feat("b", g->name)) & MASK,
                        f->v * g->v);
        /* aa: each unordered pair once, the lower weight first, and each
         * feature with itself */
        for (const struct ent *f = rows[r]; f->ns; f++)
            for (const struct ent *g = f; g->ns; g++) {
                if (strcmp(f->ns, "a") || strcmp(g->ns, "a"))
                    continue;
                uint32_t i = feat("a", f->name), j = feat("a", g->name);
                uint32_t lo = i < j ? i : j, hi = i < j ? j : i;
                e += (size_t)snprintf(exp + e, sizeof exp - e, " %u:%.9g",
                                      ((lo * HOG_CROSS_PRIME) ^ hi) & MASK,
                                      f->v * g->v);
            }
        snprintf(txt + n, sizeof txt - n, "\n");
        snprintf(exp + e, sizeof exp - e, "\n");
    }
    const char *p = th_write(dir, "q.vw", txt, strlen(txt));
    hog_data *x = th_load_hashed(p, BITS, "ab,aa");
    p = th_write(dir, "explicit.vw", exp, strlen(exp));
    hog_data *m = th_load_hashed(p, BITS, NULL);
    cr_assert_eq(hog_data_rows(x), 3);
    struct hog_cross_buf b;
    hog_err err;
    cr_assert_eq(hog_cross_buf_init(&b, x, &err), HOG_OK);
    uint64_t crossed = 0;
    for (uint64_t i = 0; i < 3; i++) {
        struct hog_row r = hog_data_row(x, &x->m, i, &b);
        struct hog_row w = hog_csr_row(&m->m, i);
        cr_assert_eq(r.nnz, w.nnz, "row %llu: %u entries crossed, %u written",
                     (unsigned long long)i, r.nnz, w.nnz);
        for (uint32_t k = 0; k < r.nnz; k++) {
            cr_assert_eq(r.idx[k], w.idx[k]);
            cr_assert_float_eq(r.val[k], w.val[k], 1e-6);
        }
        crossed += r.nnz;
    }
    cr_assert_eq(x->cross_nnz, crossed); /* no two crossed entries meet */
    hog_cross_buf_free(&b);
    /* the same rows train the same model */
    hog_train_opts o;
    th_opts_init(&o);
    o.algo = HOG_ALGO_SERIAL;
    o.epochs = 5;
    o.seed = 7;
    hog_model *mx, *mm;
    cr_assert_eq(hog_train(x, NULL, &o, NULL, &mx, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_train(m, NULL, &o, NULL, &mm, &err), HOG_OK, "%s", err.msg);
    const float *wx = hog_model_weights(mx), *wm = hog_model_weights(mm);
    for (uint64_t j = 0; j <= MASK + 1u; j++)
        cr_assert_float_eq(wx[j], wm[j], 1e-6, "weight %llu",
                           (unsigned long long)j);
    cr_assert_str_eq(hog_model_interactions(mx), "ab,aa");
    cr_assert_null(hog_model_interactions(mm));
    hog_model_free(mx);
    hog_model_free(mm);
    hog_data_free(x);
    hog_data_free(m);
}

/* A click-log-like set whose label is the product of two categorical
 * fields' signs: |u's user u0..u9 is +1 below 5, |a's ad likewise, the
 * label their product; |n is noise. */
static void write_product_set(const char *path, unsigned rows, uint64_t seed)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    for (unsigned i = 0; i < rows; i++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        unsigned u = (unsigned)(seed >> 33) % 10, a = (unsigned)(seed >> 45) % 10,
                 n = (unsigned)(seed >> 53) % 50;
        int y = ((u < 5) == (a < 5)) ? 1 : -1;
        fprintf(f, "%d |user u%u |ad a%u |noise n%u\n", y, u, a, n);
    }
    fclose(f);
}

static double predict_accuracy(const char *model, const char *data)
{
    char out[4096];
    int rc = th_run(out, sizeof out, "%s predict %s %s", th_bin(), model, data);
    cr_assert_eq(rc, 0, "%s", out);
    const char *a = strstr(out, "accuracy ");
    cr_assert_not_null(a, "%s", out);
    return strtod(a + 9, NULL);
}

/* (b) and (c): the interaction takes the accuracy from a coin's to nearly
 * all, and predict, crossing as the model says, scores the test set as
 * training's own test metrics did. */
Test(interactions, product_label_needs_the_interaction, .timeout = 120)
{
    char dir[512], tr[600], te[600], m0[600], m1[600], js[600], out[8192];
    th_tmpdir(dir, sizeof dir);
    snprintf(tr, sizeof tr, "%s/train.vw", dir);
    snprintf(te, sizeof te, "%s/test.vw", dir);
    snprintf(m0, sizeof m0, "%s/plain.hgm", dir);
    snprintf(m1, sizeof m1, "%s/cross.hgm", dir);
    snprintf(js, sizeof js, "%s/cross.json", dir);
    write_product_set(tr, 4000, 1);
    write_product_set(te, 1000, 2);
    int rc = th_run(out, sizeof out, "%s train %s --algo serial --epochs 5 "
                    "--seed 3 -q -o %s", th_bin(), tr, m0);
    cr_assert_eq(rc, 0, "%s", out);
    rc = th_run(out, sizeof out, "%s train %s --algo hogwild --threads 2 "
                "--epochs 5 --seed 3 --interactions ua -q -t %s -o %s "
                "--json %s", th_bin(), tr, te, m1, js);
    cr_assert_eq(rc, 0, "%s", out);
    double plain = predict_accuracy(m0, te), cross = predict_accuracy(m1, te);
    cr_assert(plain < 65.0, "without the interaction: %.2f%%", plain);
    cr_assert(cross >= 95.0, "with --interactions ua: %.2f%%", cross);
    cr_assert(cross - plain >= 30.0, "%.2f against %.2f", cross, plain);
    /* the last epoch's test accuracy, as training measured it */
    size_t len;
    char *j = th_slurp(js, &len);
    const char *k = NULL;
    for (const char *q = j; (q = strstr(q, "\"test_accuracy\": ")); q++)
        k = q;
    cr_assert_not_null(k);
    double train_test = 100.0 * strtod(k + 17, NULL);
    cr_assert_float_eq(train_test, cross, 0.011, "%g vs %g", train_test, cross);
    cr_assert_not_null(strstr(j, "\"interactions\": \"ua\""));
    free(j);
    rc = th_run(out, sizeof out, "%s info %s", th_bin(), m1);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert_not_null(strstr(out, "interactions     ua"), "%s", out);
}

/* A model with interactions handed out and back in without a file
 * (hog_model_describe, hog_model_from_weights) crosses as before: the same
 * predictions on crossed data; a caller of the spec's first size builds a
 * model without them; interactions without hash bits are refused. */
Test(interactions, model_spec_carries_them, .timeout = 60)
{
    char dir[512], tr[600];
    th_tmpdir(dir, sizeof dir);
    snprintf(tr, sizeof tr, "%s/train.vw", dir);
    write_product_set(tr, 2000, 5);
    hog_data *d = th_load_hashed(tr, BITS, "ua");
    hog_train_opts o;
    th_opts_init(&o);
    o.algo = HOG_ALGO_SERIAL;
    o.epochs = 3;
    hog_model *m = NULL;
    hog_err e;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &e), HOG_OK, "%s", e.msg);
    hog_model_spec s = { .size = sizeof s };
    hog_model_describe(m, &s);
    cr_assert_str_eq(s.interactions, "ua");
    cr_assert_eq(s.hash_bits, BITS);
    hog_model *back = NULL;
    cr_assert_eq(hog_model_from_weights(&s, hog_model_weights(m), &back, &e),
                 HOG_OK, "%s", e.msg);
    cr_assert_str_eq(hog_model_interactions(back), "ua");
    uint64_t rows = d->m.rows;
    double *p1 = malloc(rows * sizeof *p1), *p2 = malloc(rows * sizeof *p2);
    cr_assert_eq(hog_model_predict(m, d, p1, &e), HOG_OK, "%s", e.msg);
    cr_assert_eq(hog_model_predict(back, d, p2, &e), HOG_OK, "%s", e.msg);
    cr_assert_eq(memcmp(p1, p2, rows * sizeof *p1), 0);
    hog_model_free(back);
    /* the first version's size: no interactions field, none in the model */
    s.size = HOG_MODEL_SPEC_SIZE_V1;
    cr_assert_eq(hog_model_from_weights(&s, hog_model_weights(m), &back, &e),
                 HOG_OK, "%s", e.msg);
    cr_assert_null(hog_model_interactions(back));
    hog_model_free(back);
    s.size = sizeof s;
    s.interactions = "u";
    cr_assert_eq(hog_model_from_weights(&s, hog_model_weights(m), &back, &e),
                 HOG_EINVAL);
    cr_assert(strstr(e.msg, "is not two or three namespaces"), "%s", e.msg);
    s.interactions = "ua";
    s.hash_bits = 0;
    cr_assert_eq(hog_model_from_weights(&s, hog_model_weights(m), &back, &e),
                 HOG_EINVAL);
    cr_assert(strstr(e.msg, "has hash bits"), "%s", e.msg);
    free(p1), free(p2);
    hog_model_free(m), hog_data_free(d);
}

/* (d) Bad specs and what cannot cross: a sentence, and exit 2 for usage. */
Test(interactions, refusals)
{
    char dir[512], out[4096];
    th_tmpdir(dir, sizeof dir);
    static const char vwt[] = "1 |a x |b y\n-1 |a z |b y\n";
    const char *vw = th_write(dir, "t.vw", vwt, strlen(vwt));
    const char *svm = th_write(dir, "t.svm", "1 1:1\n-1 2:1\n", 13);
    int rc = th_run(out, sizeof out, "%s train %s --interactions a", th_bin(), vw);
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert_not_null(strstr(out, "interaction 'a' is not two or three namespaces"),
                       "%s", out);
    rc = th_run(out, sizeof out, "%s train %s --interactions ab,ab", th_bin(),
                vw);
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert_not_null(strstr(out, "asked twice"), "%s", out);
    rc = th_run(out, sizeof out, "%s train %s --interactions ab --algo dcd",
                th_bin(), vw);
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert_not_null(strstr(out, "apply to --algo serial and hogwild only"),
                       "%s", out);
    rc = th_run(out, sizeof out, "%s train %s --interactions ab --stream",
                th_bin(), vw);
    cr_assert_eq(rc, 2, "%s", out);
    rc = th_run(out, sizeof out, "%s train %s --interactions ab --normalize",
                th_bin(), vw);
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert_not_null(strstr(out, "do not combine with --normalize"), "%s",
                       out);
    rc = th_run(out, sizeof out, "%s train %s --interactions ab", th_bin(), svm);
    cr_assert_neq(rc, 0, "%s", out);
    cr_assert_not_null(strstr(out, "only Vowpal Wabbit text has"), "%s", out);
    /* repeated, as VW's -q is */
    rc = th_run(out, sizeof out, "%s train %s --interactions ab "
                "--interactions aa -q", th_bin(), vw);
    cr_assert_eq(rc, 0, "%s", out);
}

/* Sparse at rest: a B = 24 model of a few features is a few hundred bytes
 * (16.8 M floats dense: 64 MiB) and predicts as before after reload; a
 * dense model of the same data stays as it was written. */
Test(interactions, sparse_model_at_rest)
{
    char dir[512], tr[600], m[600], out[4096];
    th_tmpdir(dir, sizeof dir);
    snprintf(tr, sizeof tr, "%s/train.vw", dir);
    snprintf(m, sizeof m, "%s/b24.hgm", dir);
    write_product_set(tr, 500, 5);
    int rc = th_run(out, sizeof out, "%s train %s --hash-bits 24 --epochs 3 "
                    "--interactions ua -q -o %s", th_bin(), tr, m);
    cr_assert_eq(rc, 0, "%s", out);
    size_t len;
    free(th_slurp(m, &len));
    cr_assert(len < 1u << 20, "%zu bytes", len);
    hog_model *a;
    hog_err err;
    cr_assert_eq(hog_model_load(m, &a, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_model_hash_bits(a), 24u);
    /* saved again (sparse once more) and reloaded: the same weights */
    char m2[700];
    snprintf(m2, sizeof m2, "%s/again.hgm", dir);
    cr_assert_eq(hog_model_save(a, m2, HOG_MODEL_HGM, &err), HOG_OK);
    hog_model *b;
    cr_assert_eq(hog_model_load(m2, &b, &err), HOG_OK, "%s", err.msg);
    uint64_t n = (UINT64_C(1) << 24) + 1, nz = 0;
    const float *wa = hog_model_weights(a), *wb = hog_model_weights(b);
    for (uint64_t j = 0; j < n; j++) {
        cr_assert_eq(wa[j], wb[j]);
        nz += wa[j] != 0;
    }
    cr_assert(nz > 10);
    cr_assert_str_eq(hog_model_interactions(b), "ua");
    hog_model_free(a);
    hog_model_free(b);
    /* a corrupt byte in the stored positions is caught */
    char *raw = th_slurp(m2, &len);
    raw[len / 2] ^= 0x40;
    const char *bad = th_write(dir, "bad.hgm", raw, len);
    free(raw);
    cr_assert_neq(hog_model_load(bad, &b, &err), HOG_OK);
    cr_assert_not_null(strstr(err.msg, "bad.hgm"), "%s", err.msg);
}

/* K classes cross alike: a class that is the sum of two fields mod 3 is
 * learnt with the interaction only, one-vs-rest and softmax, on Hogwild!'s
 * two threads, and predict agrees. */
Test(interactions, k_classes_cross_too, .timeout = 120)
{
    char dir[512], tr[600], te[600], m[600], out[8192];
    th_tmpdir(dir, sizeof dir);
    snprintf(tr, sizeof tr, "%s/train.vw", dir);
    snprintf(te, sizeof te, "%s/test.vw", dir);
    snprintf(m, sizeof m, "%s/k.hgm", dir);
    for (int s = 0; s < 2; s++) {
        FILE *f = fopen(s ? te : tr, "w");
        cr_assert_not_null(f);
        uint64_t seed = 11 + (uint64_t)s;
        for (unsigned i = 0; i < (s ? 600u : 3000u); i++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            unsigned u = (unsigned)(seed >> 33) % 9, a = (unsigned)(seed >> 45) % 9;
            fprintf(f, "%u |user u%u |ad a%u\n", 1 + (u % 3 + a % 3) % 3, u, a);
        }
        fclose(f);
    }
    static const char *const modes[] = { "ovr", "softmax" };
    for (int k = 0; k < 2; k++) {
        for (int q = 0; q < 2; q++) {
            int rc = th_run(out, sizeof out, "%s train %s --multiclass %s "
                            "--algo hogwild --threads 2 --epochs 10 -q -o %s%s",
                            th_bin(), tr, modes[k], m,
                            q ? " --interactions ua" : "");
            cr_assert_eq(rc, 0, "%s", out);
            double acc = predict_accuracy(m, te);
            if (q)
                cr_assert(acc >= 95.0, "%s with ua: %.2f%%", modes[k], acc);
            else
                cr_assert(acc < 60.0, "%s without: %.2f%%", modes[k], acc);
        }
    }
}

/* A hashed model with most weights nonzero stays dense, as version 3
 * (which older readers read); an unhashed one as version 1. */
Test(interactions, dense_models_keep_their_versions)
{
    char dir[512], p[600], out[4096];
    th_tmpdir(dir, sizeof dir);
    const char *svm = th_write(dir, "t.svm", "1 1:1 2:1\n-1 3:1 4:1\n", 21);
    static const struct { const char *opt; unsigned version; } c[] = {
        { "--hash-bits 2", 3 }, { "", 1 },
    };
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/m%d.hgm", dir, i);
        int rc = th_run(out, sizeof out, "%s train %s %s --epochs 2 -q -o %s",
                        th_bin(), svm, c[i].opt, p);
        cr_assert_eq(rc, 0, "%s", out);
        size_t len;
        unsigned char *b = (unsigned char *)th_slurp(p, &len);
        cr_assert_eq(b[8], c[i].version, "%s: version %u", c[i].opt, b[8]);
        free(b);
        hog_model *m;
        hog_err err;
        cr_assert_eq(hog_model_load(p, &m, &err), HOG_OK, "%s", err.msg);
        hog_model_free(m);
    }
}

/* The interactions' row buffers are made where the run is set up, so a
 * buffer the process cannot have is HOG_ENOMEM with its sentence, never an
 * abort inside the epochs (which took a Python user's interpreter with
 * it). One row of 60,000 a-features and 60,000 b-features crosses to about
 * 2.8e9 entries (their hashes collide a little): buffers of some 45 GB,
 * refused under a 16 GiB address space (room for any machine's start-up)
 * before any row is crossed. */
Test(interactions, row_buffer_refused_at_setup, .timeout = 120)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    cr_skip_test("a sanitizer's shadow memory does not fit under ulimit -v");
#endif
    char dir[512], m[600], out[4096];
    th_tmpdir(dir, sizeof dir);
    enum { N = 60000 };
    size_t cap = 2 * N * 8 + 64, n = 0;
    char *txt = malloc(cap);
    cr_assert_not_null(txt);
    n += (size_t)snprintf(txt + n, cap - n, "1 |a");
    for (int i = 0; i < N; i++)
        n += (size_t)snprintf(txt + n, cap - n, " a%d", i);
    n += (size_t)snprintf(txt + n, cap - n, " |b");
    for (int i = 0; i < N; i++)
        n += (size_t)snprintf(txt + n, cap - n, " b%d", i);
    n += (size_t)snprintf(txt + n, cap - n, "\n-1 |a x |b y\n");
    const char *vw = th_write(dir, "wide.vw", txt, n);
    free(txt);
    snprintf(m, sizeof m, "%s/m.hgm", dir);
    static const char *const algo[] = { "--algo serial",
                                        "--algo hogwild --threads 2" };
    for (int i = 0; i < 2; i++) {
        int rc = th_run(out, sizeof out, "ulimit -v 16777216; %s train %s "
                        "--interactions ab %s --epochs 1 -q -o %s",
                        th_bin(), vw, algo[i], m);
        cr_assert_eq(rc, 1, "%s: exit %d (an abort is not an error): %s",
                     algo[i], rc, out);
        cr_assert_not_null(strstr(out, "out of memory for a row of"), "%s: %s",
                           algo[i], out);
    }
}
