/* hogtrain info --weights (src/cli/info_weights.c) and train --keep-names
 * (src/io/names.c, the .hgm names section): the listed weights are the
 * model's, --top lists the largest, the JSON parses and holds the same
 * numbers, and every Vowpal Wabbit name is kept in its hashed weight. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "helpers.h"
#include "io/io.h"

static char out[1 << 22];

/* The listing (info --weights's text, or the JSON turned into the same
 * lines by to_lines below) checked against m: each line's weights are
 * m's bit for bit, features shown 1-based unless hashed; returns the
 * features listed (the bias line not counted). */
static uint64_t check_listing(const char *text, const hog_model *m)
{
    const float *w = hog_model_weights(m);
    uint64_t nf = hog_model_features(m), len = hog_model_vector_len(m),
             v = hog_model_vectors(m), n = 0;
    bool bias_seen = false;
    for (const char *p = text; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1
                                                        : p + strlen(p)) {
        if (*p == '#' || *p == '\n')
            continue;
        char *e;
        uint64_t j;
        if (strncmp(p, "bias", 4) == 0) {
            j = nf;
            e = (char *)p + 4;
            bias_seen = true;
        } else {
            uint64_t ix = strtoull(p, &e, 10);
            cr_assert(e > p, "a line without an index: %.40s", p);
            j = ix - (m->hash_bits == 0);
            cr_assert(j < nf, "index %llu past the model's %llu features",
                      (unsigned long long)ix, (unsigned long long)nf);
            n++;
        }
        for (uint64_t c = 0; c < v; c++) {
            float x = strtof(e, &e);
            cr_assert_eq(x, w[c * len + j], "feature %llu class %llu: listed "
                         "%.9g, the model's %.9g", (unsigned long long)j,
                         (unsigned long long)c, (double)x,
                         (double)w[c * len + j]);
        }
    }
    cr_assert_eq(bias_seen, m->bias != 0.0, "the bias line");
    return n;
}

/* Features with a nonzero weight in some class. */
static uint64_t nonzero_features(const hog_model *m)
{
    uint64_t len = hog_model_vector_len(m), n = 0;
    for (uint64_t j = 0; j < m->n_features; j++) {
        bool nz = false;
        for (uint64_t c = 0; c < hog_model_vectors(m); c++)
            nz |= m->w[c * len + j] != 0.0f;
        n += nz;
    }
    return n;
}

/* info --weights's text and JSON for the model at path, each checked. */
static void check_model(const char *path, const char *dir)
{
    hog_model *m = NULL;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_model_load(path, &m, &err), HOG_OK, "%s", err.msg);
    /* into a file: a K-class listing is megabytes */
    char lst[700];
    snprintf(lst, sizeof lst, "%s/listing", dir);
    int rc = th_run(out, sizeof out, "'%s' info --weights '%s' > '%s'",
                    th_bin(), path, lst);
    cr_assert_eq(rc, 0, "%s", out);
    size_t len;
    char *text = th_slurp(lst, &len);
    cr_assert_eq(check_listing(text, m), nonzero_features(m));
    free(text);
    /* The JSON: parsed by Python, its structure checked there, its
     * numbers printed as the text's lines and checked here. */
    char py[700];
    snprintf(py, sizeof py, "%s/to_lines.py", dir);
    FILE *f = fopen(py, "w");
    cr_assert(f);
    fputs("import json, sys\n"
          "d = json.load(sys.stdin)\n"
          "for k in ('model', 'loss', 'features', 'hashing', 'classes',\n"
          "          'index', 'names', 'weights', 'bias'):\n"
          "    assert k in d, k\n"
          "K = len(d['classes']) if d['classes'] else 0\n"
          "W = d['weights'] if K else [d['weights']]\n"
          "assert len(W) == max(K, 1)\n"
          "for c in W:\n"
          "    assert len(c) == len(d['index'])\n"
          "for i, ix in enumerate(d['index']):\n"
          "    print(ix, ' '.join(repr(c[i]) for c in W))\n"
          "if d['bias']:\n"
          "    b = d['bias']['weights'] if K else [d['bias']['weight']]\n"
          "    print('bias', ' '.join(repr(x) for x in b))\n", f);
    fclose(f);
    rc = th_run(out, sizeof out, "'%s' info --weights --json '%s' | python3 "
                "'%s' > '%s'", th_bin(), path, py, lst);
    cr_assert_eq(rc, 0, "%s", out);
    text = th_slurp(lst, &len);
    cr_assert_eq(check_listing(text, m), nonzero_features(m));
    free(text);
    hog_model_free(m);
}

Test(info_weights, binary_kclass_and_hashed_models_listed_as_they_are)
{
    TH_DATA_OR_SKIP(a9a, "a9a");
    TH_DATA_OR_SKIP(n20, "news20.test.svm");
    char dir[512], p[600];
    th_tmpdir(dir, sizeof dir);
    struct {
        const char *name, *data, *args;
    } runs[] = {
        { "bin.hgm", a9a, "--epochs 1" },
        { "k.hgm", n20, "--epochs 1 --algo serial" },
        { "soft.hgm", n20, "--epochs 1 --multiclass softmax --algo serial" },
        { "hashed.hgm", a9a, "--epochs 1 --hash-bits 6" },
        { "nobias.hgm", a9a, "--epochs 1 --bias 0" },
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, runs[i].name);
        int rc = th_run(out, sizeof out, "'%s' train '%s' %s -q -o '%s' 2>&1",
                        th_bin(), runs[i].data, runs[i].args, p);
        cr_assert_eq(rc, 0, "%s: %s", runs[i].name, out);
        check_model(p, dir);
    }
}

Test(info_weights, top_lists_the_largest_first)
{
    TH_DATA_OR_SKIP(n20, "news20.test.svm");
    char dir[512], p[600];
    th_tmpdir(dir, sizeof dir);
    snprintf(p, sizeof p, "%s/k.hgm", dir);
    cr_assert_eq(th_run(out, sizeof out, "'%s' train '%s' --epochs 1 --algo "
                        "serial -q -o '%s' 2>&1", th_bin(), n20, p), 0, "%s",
                 out);
    hog_model *m = NULL;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_model_load(p, &m, &err), HOG_OK, "%s", err.msg);
    const unsigned top = 25;
    cr_assert_eq(th_run(out, sizeof out, "'%s' info --weights --top %u '%s' "
                        "2>&1", th_bin(), top, p), 0, "%s", out);
    cr_assert_eq(check_listing(out, m), top);
    /* largest |w| over the classes, in order, none left out larger */
    uint64_t len = hog_model_vector_len(m);
    double prev = INFINITY, last = 0;
    bool *listed = calloc(m->n_features, 1);
    for (const char *q = out; *q; q = strchr(q, '\n') + 1) {
        if (*q != '#' && strncmp(q, "bias", 4) != 0) {
            uint64_t j = strtoull(q, NULL, 10) - 1;
            double b = 0;
            for (uint32_t c = 0; c < m->n_classes; c++)
                b = fmax(b, fabs((double)m->w[c * len + j]));
            cr_assert(b <= prev, "not largest first at feature %llu",
                      (unsigned long long)j + 1);
            prev = last = b;
            listed[j] = true;
        }
        if (!strchr(q, '\n'))
            break;
    }
    for (uint64_t j = 0; j < m->n_features; j++)
        for (uint32_t c = 0; c < m->n_classes && !listed[j]; c++)
            cr_assert(fabs((double)m->w[c * len + j]) <= last,
                      "feature %llu's |w| %g is above the listed ones'",
                      (unsigned long long)j + 1, (double)m->w[c * len + j]);
    free(listed);
    hog_model_free(m);
}

Test(info_weights, names_file_and_usage)
{
    TH_DATA_OR_SKIP(a9a, "a9a");
    char dir[512], p[600];
    th_tmpdir(dir, sizeof dir);
    snprintf(p, sizeof p, "%s/m.hgm", dir);
    cr_assert_eq(th_run(out, sizeof out, "'%s' train '%s' --epochs 1 -q -o "
                        "'%s' 2>&1", th_bin(), a9a, p), 0, "%s", out);
    const char *names = th_write(dir, "names.txt",
                                 "# index name\n3 third\n5 x fifth\n", 31);
    cr_assert_eq(th_run(out, sizeof out, "'%s' info --weights --names '%s' "
                        "'%s' | grep -E '^(3|5)\t' 2>&1", th_bin(), names, p),
                 0, "%s", out);
    cr_assert(strstr(out, "\tthird\n") && strstr(out, "\tfifth\n"), "%s", out);
    cr_assert_eq(th_run(out, sizeof out, "'%s' info --top 3 '%s' 2>&1",
                        th_bin(), p), 2, "%s", out);
    cr_assert(strstr(out, "apply to --weights"), "%s", out);
    cr_assert_eq(th_run(out, sizeof out, "'%s' info --weights --top 0 '%s' "
                        "2>&1", th_bin(), p), 2, "%s", out);
}

/* Every (name, weight) the model keeps, each checked against the hash. */
struct want {
    const char *ns, *name, *str; /* ns "": the default namespace */
    int anon;                    /* >= 0: the anon-th anonymous feature */
};

static uint32_t want_hash(const struct want *x, uint32_t seed)
{
    uint32_t ns = x->ns[0] ? hog_vw_hash(x->ns, strlen(x->ns), seed)
                           : hog_murmur3_32("", 0, seed);
    if (x->anon >= 0)
        return ns + (uint32_t)x->anon;
    uint32_t h = hog_vw_hash(x->name, strlen(x->name), ns);
    return x->str ? hog_vw_hash(x->str, strlen(x->str), h) : h;
}

static void want_text(const struct want *x, char *buf, size_t len)
{
    if (x->anon >= 0)
        snprintf(buf, len, "%s^%d", x->ns, x->anon);
    else
        snprintf(buf, len, "%s%s%s%s%s", x->ns, x->ns[0] ? "^" : "", x->name,
                 x->str ? "^" : "", x->str ? x->str : "");
}

/* Whether m keeps exactly the names of want, each in its weight. */
static void check_names(const hog_model *m, const struct want *want, size_t n)
{
    const struct hog_names *nm = m->names;
    cr_assert(nm, "the model keeps no names");
    cr_assert_eq(nm->n, n, "%llu names kept, %zu in the file",
                 (unsigned long long)nm->n, n);
    uint32_t mask = (uint32_t)((UINT64_C(1) << m->hash_bits) - 1);
    for (size_t i = 0; i < n; i++) {
        char t[256];
        want_text(&want[i], t, sizeof t);
        uint32_t j = want_hash(&want[i], m->hash_seed) & mask;
        uint64_t lo, hi;
        hog_names_range(nm, j, &lo, &hi);
        bool found = false;
        for (uint64_t e = lo; e < hi && !found; e++)
            found = nm->off[e + 1] - nm->off[e] == strlen(t) &&
                    memcmp(nm->text + nm->off[e], t, strlen(t)) == 0;
        cr_assert(found, "'%s' is not in weight %u", t, j);
    }
}

Test(info_weights, keep_names_recovers_every_name_collisions_included)
{
    char dir[512], p[600], q[600];
    th_tmpdir(dir, sizeof dir);
    const char *text = "1 |a x y z |b q:2 k:foo :3 :0.5\n"
                       "-1 'tag|a x w\n"
                       "1 | plain x\n"
                       "-1 |a v u t s r |color red blue:0.5\n";
    const char *vw = th_write(dir, "s.vw", text, strlen(text));
    static const struct want want[] = {
        { "a", "x", NULL, -1 }, { "a", "y", NULL, -1 },
        { "a", "z", NULL, -1 }, { "b", "q", NULL, -1 },
        { "b", "k", "foo", -1 }, { "b", NULL, NULL, 0 },
        { "b", NULL, NULL, 1 }, { "a", "w", NULL, -1 },
        { "", "plain", NULL, -1 }, { "", "x", NULL, -1 },
        { "a", "v", NULL, -1 }, { "a", "u", NULL, -1 },
        { "a", "t", NULL, -1 }, { "a", "s", NULL, -1 },
        { "a", "r", NULL, -1 }, { "color", "red", NULL, -1 },
        { "color", "blue", NULL, -1 },
    };
    size_t n = sizeof want / sizeof want[0];
    snprintf(p, sizeof p, "%s/s.hgm", dir);
    cr_assert_eq(th_run(out, sizeof out, "'%s' train '%s' --hash-bits 4 "
                        "--keep-names -q -o '%s' 2>&1", th_bin(), vw, p), 0,
                 "%s", out);
    hog_model *m = NULL;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_model_load(p, &m, &err), HOG_OK, "%s", err.msg);
    check_names(m, want, n);
    /* 17 names in 16 weights: some weight holds two */
    bool collided = false;
    for (uint64_t e = 1; e < m->names->n; e++)
        collided |= m->names->pos[e] == m->names->pos[e - 1];
    cr_assert(collided);
    /* the listing shows them: each listed weight's names, blank-separated */
    cr_assert_eq(th_run(out, sizeof out, "'%s' info --weights '%s' 2>&1",
                        th_bin(), p), 0, "%s", out);
    cr_assert(strstr(out, "\tnames\n"), "%s", out);
    for (uint64_t j = 0; j < 16; j++) {
        if (m->w[j] == 0.0f)
            continue;
        char line[1024];
        int k = snprintf(line, sizeof line, "\n%llu\t%.9g\t",
                         (unsigned long long)j, (double)m->w[j]);
        uint64_t lo, hi;
        hog_names_range(m->names, j, &lo, &hi);
        for (uint64_t e = lo; e < hi; e++)
            k += snprintf(line + k, sizeof line - (size_t)k, "%s%.*s",
                          e > lo ? " " : "",
                          (int)(m->names->off[e + 1] - m->names->off[e]),
                          m->names->text + m->names->off[e]);
        snprintf(line + k, sizeof line - (size_t)k, "\n");
        cr_assert(strstr(out, line), "no line '%s' in\n%s", line + 1, out);
    }
    /* the same weights as a run without --keep-names, whose file has no
     * names section (and is smaller by it) */
    snprintf(q, sizeof q, "%s/s0.hgm", dir);
    cr_assert_eq(th_run(out, sizeof out, "'%s' train '%s' --hash-bits 4 -q "
                        "-o '%s' 2>&1", th_bin(), vw, q), 0, "%s", out);
    hog_model *m0 = NULL;
    cr_assert_eq(hog_model_load(q, &m0, &err), HOG_OK, "%s", err.msg);
    cr_assert_null(m0->names);
    cr_assert_eq(memcmp(m0->w, m->w, hog_model_len(m) * 4), 0);
    hog_model_free(m0);
    /* round trip: saved again, the same bytes, the same names */
    snprintf(q, sizeof q, "%s/s2.hgm", dir);
    cr_assert_eq(hog_model_save(m, q, HOG_MODEL_HGM, &err), HOG_OK, "%s",
                 err.msg);
    size_t la, lb;
    char *a = th_slurp(p, &la), *b = th_slurp(q, &lb);
    cr_assert(la == lb && memcmp(a, b, la) == 0, "the file changed on a "
              "round trip");
    free(a);
    free(b);
    hog_model *m2 = NULL;
    cr_assert_eq(hog_model_load(q, &m2, &err), HOG_OK, "%s", err.msg);
    check_names(m2, want, n);
    hog_model_free(m2);
    /* with the optimizer's state too: both sections */
    snprintf(q, sizeof q, "%s/s3.hgm", dir);
    cr_assert_eq(th_run(out, sizeof out, "'%s' train '%s' --hash-bits 4 "
                        "--keep-names --save-state --algo serial --schedule "
                        "adagrad -q -o '%s' 2>&1", th_bin(), vw, q), 0, "%s",
                 out);
    cr_assert_eq(hog_model_load(q, &m2, &err), HOG_OK, "%s", err.msg);
    cr_assert_not_null(m2->state);
    check_names(m2, want, n);
    hog_model_free(m2);
    hog_model_free(m);
}

Test(info_weights, keep_names_of_a_real_vw_file)
{
    TH_DATA_OR_SKIP(a9a, "a9a");
    char dir[512], vw[600], p[600];
    th_tmpdir(dir, sizeof dir);
    snprintf(vw, sizeof vw, "%s/a9a.vw", dir);
    snprintf(p, sizeof p, "%s/a9a.hgm", dir);
    int rc = th_run(out, sizeof out, "sed -E 's/^([^ ]+) (.*)$/\\1 |a \\2/' "
                    "'%s' > '%s' && '%s' train '%s' --hash-bits 6 --keep-names "
                    "--epochs 1 -q -o '%s' 2>&1", a9a, vw, th_bin(), vw, p);
    cr_assert_eq(rc, 0, "%s", out);
    hog_model *m = NULL;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_model_load(p, &m, &err), HOG_OK, "%s", err.msg);
    /* a9a's features are 1 to 123, each used: "a^1" .. "a^123" */
    static char nm[123][8];
    static struct want want[123];
    for (int i = 0; i < 123; i++) {
        snprintf(nm[i], sizeof nm[i], "%d", i + 1);
        want[i] = (struct want){ "a", nm[i], NULL, -1 };
    }
    check_names(m, want, 123);
    hog_model_free(m);
    /* LIBSVM text has no names to keep: refused with a sentence */
    rc = th_run(out, sizeof out, "'%s' train '%s' --keep-names -q -o "
                "'%s/x.hgm' 2>&1", th_bin(), a9a, dir);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "--keep-names keeps the names of Vowpal Wabbit"),
              "%s", out);
}
