/* gen: the synthetic data generator. Output read back as text and checked
 * row by row; the planted model's accuracy; learnability with LIBLINEAR. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "io/io.h"

/* Generates into memory; returns the text (NUL-terminated) and its length. */
static char *gen_text(const struct hog_gen_opts *g, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    cr_assert_not_null(f);
    hog_err err;
    hog_status s = hog_gen_write(g, f, &err);
    cr_assert_eq(s, HOG_OK, "%s", err.msg);
    fclose(f);
    *len = n;
    return buf;
}

/* What the text holds, checked line by line while reading. */
struct stats {
    uint64_t rows, nnz, n_pos;
    uint32_t *df;     /* rows holding each feature (0-based) */
    double *y;        /* labels */
    double *score;    /* the planted model's score of each row, if a model */
};

static void read_text(const char *text, const struct hog_gen_opts *g,
                      const hog_model *m, struct stats *st)
{
    memset(st, 0, sizeof *st);
    st->df = calloc(g->features, sizeof *st->df);
    st->y = malloc(g->rows * sizeof *st->y);
    st->score = malloc(g->rows * sizeof *st->score);
    const char *p = text;
    while (*p) {
        cr_assert_lt(st->rows, g->rows, "more rows than asked for");
        char *end;
        double y = strtod(p, &end);
        cr_assert_neq(end, p, "row %llu: no label", (unsigned long long)st->rows);
        if (!g->regression)
            cr_assert(y == 1 || y == -1, "row %llu: label %g",
                      (unsigned long long)st->rows, y);
        p = end;
        double s = m ? hog_model_bias(m) : 0, ss = 0;
        unsigned long prev = 0;
        uint64_t k = 0;
        while (*p == ' ') {
            unsigned long j = strtoul(p + 1, &end, 10);
            cr_assert_eq(*end, ':', "row %llu: bad token",
                         (unsigned long long)st->rows);
            cr_assert(j > prev, "row %llu: index %lu after %lu (not ascending, "
                                "or 0)",
                      (unsigned long long)st->rows, j, prev);
            cr_assert_leq(j, g->features);
            prev = j;
            double v = strtod(end + 1, &end);
            cr_assert(v > 0 && v <= 1, "value %g", v);
            p = end;
            ss += v * v;
            if (m)
                s += (double)m->w[j - 1] * (double)(float)v;
            st->df[j - 1]++;
            k++;
        }
        cr_assert_eq(*p, '\n', "row %llu: junk at end of line",
                     (unsigned long long)st->rows);
        p++;
        cr_assert_geq(k, 1u, "an empty row");
        cr_assert_float_eq(ss, 1.0, 1e-4, "row %llu: L2 norm^2 %g",
                           (unsigned long long)st->rows, ss);
        st->y[st->rows] = y;
        st->score[st->rows] = s;
        st->n_pos += y > 0;
        st->nnz += k;
        st->rows++;
    }
}

static void stats_free(struct stats *st)
{
    free(st->df), free(st->y), free(st->score);
}

static struct hog_gen_opts small_opts(void)
{
    struct hog_gen_opts g;
    hog_gen_opts_init(&g);
    g.rows = 2000;
    g.features = 5000;
    g.nnz_per_row = 20;
    return g;
}

Test(gen, defaults)
{
    struct hog_gen_opts g;
    hog_gen_opts_init(&g);
    cr_assert_eq(g.rows, 100000u);
    cr_assert_eq(g.features, 100000u);
    cr_assert_eq(g.nnz_per_row, 50);
    cr_assert_eq(g.zipf, 1.1);
    cr_assert_eq(g.label_noise, 0.05);
    cr_assert_eq(g.density_true, 0.1);
    cr_assert_eq(g.seed, 1u);
    cr_assert(!g.regression);
}

Test(gen, same_seed_same_bytes_other_seed_other_bytes)
{
    struct hog_gen_opts g = small_opts();
    size_t la, lb, lc;
    char *a = gen_text(&g, &la), *b = gen_text(&g, &lb);
    cr_assert_gt(la, 0u);
    cr_assert_eq(la, lb);
    cr_assert_eq(memcmp(a, b, la), 0);
    g.seed = 2;
    char *c = gen_text(&g, &lc);
    cr_assert(lc != la || memcmp(a, c, la) != 0);
    /* more rows: the first rows are the same (rows are drawn in blocks of
     * their own random streams) */
    g.seed = 1;
    g.rows = 3000;
    char *d = gen_text(&g, &lc);
    cr_assert_gt(lc, la);
    cr_assert_eq(memcmp(a, d, la), 0);
    free(a), free(b), free(c), free(d);
}

Test(gen, output_has_the_rows_and_nnz_asked_for)
{
    struct hog_gen_opts g = small_opts();
    size_t len;
    char *t = gen_text(&g, &len);
    struct stats st;
    read_text(t, &g, NULL, &st);
    cr_assert_eq(st.rows, g.rows);
    double mean = (double)st.nnz / (double)st.rows;
    cr_assert(fabs(mean - g.nnz_per_row) < 0.05 * g.nnz_per_row,
              "mean nnz %g, asked for %g", mean, g.nnz_per_row);
    /* the classes are about balanced */
    cr_assert(st.n_pos > st.rows * 4 / 10 && st.n_pos < st.rows * 6 / 10,
              "%llu positive of %llu", (unsigned long long)st.n_pos,
              (unsigned long long)st.rows);
    stats_free(&st);
    free(t);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

Test(gen, feature_frequencies_follow_a_power_law)
{
    struct hog_gen_opts g = small_opts();
    size_t len;
    char *t = gen_text(&g, &len);
    struct stats st;
    read_text(t, &g, NULL, &st);
    uint32_t *df = malloc(g.features * sizeof *df);
    memcpy(df, st.df, g.features * sizeof *df);
    qsort(df, g.features, sizeof *df, cmp_u32);
    uint32_t top = df[g.features - 1], median = df[g.features / 2];
    cr_assert_gt(top, 50 * (median + 1), "top feature in %u rows, median %u",
                 top, median);
    /* Zipf: df of rank 10 vs rank 100 about (100/10)^1.1 apart (rank 1 is
     * capped by the number of rows) */
    double r = (double)df[g.features - 10] / df[g.features - 100];
    cr_assert(r > 4 && r < 25, "df ratio rank 10 / rank 100 = %g", r);
    /* frequent features are spread over the index range, not the low ids */
    int high = 0;
    for (uint64_t j = 0; j < g.features; j++)
        if (st.df[j] >= df[g.features - 20] && j >= g.features / 2)
            high++;
    cr_assert_gt(high, 3, "the 20 most frequent features sit at low ids");
    /* zipf 0 is uniform: no feature stands out */
    g.zipf = 0;
    free(t);
    stats_free(&st);
    t = gen_text(&g, &len);
    read_text(t, &g, NULL, &st);
    memcpy(df, st.df, g.features * sizeof *df);
    qsort(df, g.features, sizeof *df, cmp_u32);
    cr_assert_lt(df[g.features - 1], 4 * (df[g.features / 2] + 1));
    stats_free(&st);
    free(df), free(t);
}

Test(gen, planted_model_scores_are_the_margins_of_the_labels)
{
    struct hog_gen_opts g = small_opts();
    g.rows = 20000;
    g.label_noise = 0.1;
    size_t len;
    char *t = gen_text(&g, &len);
    hog_model *m;
    hog_err err;
    cr_assert_eq(hog_gen_model(&g, &m, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(m->n_features, g.features);
    cr_assert_eq(m->bias, 1.0);
    uint64_t nz = 0;
    for (uint64_t j = 0; j < g.features; j++)
        nz += m->w[j] != 0;
    cr_assert(fabs((double)nz / g.features - g.density_true) < 0.02,
              "%llu non-zero planted weights", (unsigned long long)nz);
    struct stats st;
    read_text(t, &g, m, &st);
    uint64_t agree = 0;
    for (uint64_t i = 0; i < st.rows; i++)
        agree += (st.score[i] > 0) == (st.y[i] > 0);
    double acc = (double)agree / (double)st.rows;
    /* 1 - noise: the labels were drawn from these very scores; 3 sd of a
     * binomial of 20000 rows is 0.0064 */
    cr_assert(fabs(acc - (1 - g.label_noise)) < 0.0065,
              "planted accuracy %g, expected %g", acc, 1 - g.label_noise);
    g.label_noise = 0;
    free(t);
    stats_free(&st);
    t = gen_text(&g, &len);
    read_text(t, &g, m, &st);
    for (uint64_t i = 0; i < st.rows; i++)
        cr_assert_eq(st.score[i] > 0, st.y[i] > 0, "row %llu, score %g",
                     (unsigned long long)i, st.score[i]);
    stats_free(&st);
    hog_model_free(m);
    free(t);
}

Test(gen, regression_targets_are_margin_plus_noise)
{
    struct hog_gen_opts g = small_opts();
    g.regression = true;
    g.rows = 10000;
    g.label_noise = 0.2;
    size_t len;
    char *t = gen_text(&g, &len);
    hog_model *m;
    hog_err err;
    cr_assert_eq(hog_gen_model(&g, &m, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(m->loss, HOG_LOSS_SQUARED);
    struct stats st;
    read_text(t, &g, m, &st);
    double r = 0, rr = 0, s = 0, ss = 0;
    for (uint64_t i = 0; i < st.rows; i++) {
        double e = st.y[i] - st.score[i];
        r += e, rr += e * e;
        s += st.score[i], ss += st.score[i] * st.score[i];
    }
    double n = (double)st.rows;
    double sd_noise = sqrt(rr / n - (r / n) * (r / n));
    double sd_signal = sqrt(ss / n - (s / n) * (s / n));
    cr_assert(fabs(sd_noise - 0.2) < 0.01, "noise sd %g", sd_noise);
    cr_assert(fabs(r / n) < 0.01, "noise mean %g", r / n);
    cr_assert(sd_signal > 0.8 && sd_signal < 1.25, "signal sd %g", sd_signal);
    stats_free(&st);
    hog_model_free(m);
    free(t);
}

Test(gen, bad_options_are_refused_with_a_sentence)
{
    struct hog_gen_opts g = small_opts();
    hog_err err;
    FILE *f = fopen("/dev/null", "w");
    g.features = 0;
    cr_assert_eq(hog_gen_write(&g, f, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "features"), "%s", err.msg);
    g = small_opts();
    g.nnz_per_row = 0;
    cr_assert_eq(hog_gen_write(&g, f, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "nnz"), "%s", err.msg);
    g = small_opts();
    g.zipf = NAN;
    cr_assert_eq(hog_gen_write(&g, f, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "Zipf"), "%s", err.msg);
    g = small_opts();
    g.label_noise = 1.5;
    cr_assert_eq(hog_gen_write(&g, f, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "flip"), "%s", err.msg);
    g = small_opts();
    g.density_true = -0.1;
    cr_assert_eq(hog_gen_write(&g, f, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "density"), "%s", err.msg);
    fclose(f);
}

Test(gen, extreme_shapes_still_give_valid_rows)
{
    /* more nonzeros asked for than features; one feature; dense rows */
    struct hog_gen_opts g = small_opts();
    g.rows = 300;
    g.features = 30;
    g.nnz_per_row = 100;
    size_t len;
    char *t = gen_text(&g, &len);
    struct stats st;
    read_text(t, &g, NULL, &st);
    cr_assert_eq(st.rows, 300u);
    cr_assert_gt(st.nnz, 300u * 20);
    stats_free(&st);
    free(t);
    g.features = 1;
    g.nnz_per_row = 0.5;
    t = gen_text(&g, &len);
    read_text(t, &g, NULL, &st);
    cr_assert_eq(st.nnz, 300u);
    stats_free(&st);
    free(t);
    g.features = 100;
    g.nnz_per_row = 3;
    g.rows = 0;
    t = gen_text(&g, &len);
    cr_assert_eq(len, 0u);
    free(t);
}

Test(gen, a_write_error_is_reported)
{
    struct hog_gen_opts g = small_opts();
    FILE *f = fopen("/dev/full", "w");
    if (!f)
        cr_skip_test("no /dev/full on this system");
    hog_err err;
    cr_assert_eq(hog_gen_write(&g, f, &err), HOG_EIO);
    cr_assert(strstr(err.msg, "write"), "%s", err.msg);
    fclose(f);
}

/* The point of the generator: a linear model learns it. Trained with
 * liblinear-train (the reference), tested on rows it did not see. */
Test(gen, a_linear_model_learns_it)
{
    char out[4096];
    if (th_run(out, sizeof out, "command -v liblinear-train") != 0)
        cr_skip_test("liblinear-train not installed; skipping");
    struct hog_gen_opts g;
    hog_gen_opts_init(&g);
    g.rows = 40000;
    g.features = 20000;
    char dir[1024], all[1100];
    th_tmpdir(dir, sizeof dir);
    snprintf(all, sizeof all, "%s/all.svm", dir);
    FILE *f = fopen(all, "w");
    hog_err err;
    cr_assert_eq(hog_gen_write(&g, f, &err), HOG_OK, "%s", err.msg);
    fclose(f);
    cr_assert_eq(th_run(out, sizeof out,
                        "cd '%s' && head -n 30000 all.svm > train && "
                        "tail -n 10000 all.svm > test && "
                        "liblinear-train -q -s 0 -B 1 train m && "
                        "liblinear-predict test m pred",
                        dir),
                 0, "%s", out);
    double acc = 0;
    const char *a = strstr(out, "Accuracy = ");
    cr_assert_not_null(a, "%s", out);
    acc = atof(a + 11);
    cr_assert_geq(acc, 85.0, "test accuracy %g%% with 5%% label noise", acc);
}

/* Blocks are drawn by several threads and written in order: the bytes do
 * not depend on the thread count (a row count that ends mid-block). */
Test(threads, gen_output_is_the_same_for_any_thread_count)
{
    struct hog_gen_opts g = small_opts();
    g.rows = 10 * 1024 + 77;
    g.threads = 1;
    size_t l1, ln;
    char *one = gen_text(&g, &l1);
    for (unsigned t = 2; t <= 5; t += 3) {
        g.threads = t;
        char *many = gen_text(&g, &ln);
        cr_assert_eq(ln, l1, "%u threads", t);
        cr_assert_eq(memcmp(one, many, l1), 0, "%u threads", t);
        free(many);
    }
    struct stats st;
    read_text(one, &g, NULL, &st);
    cr_assert_eq(st.rows, g.rows);
    stats_free(&st);
    free(one);
}

/* The same, with hogtrain's own loader and trainer (defaults: logistic,
 * bias 1), on rows it did not see. */
Test(gen, hogtrain_learns_it)
{
    struct hog_gen_opts g;
    hog_gen_opts_init(&g);
    g.rows = 40000;
    g.features = 20000;
    char dir[1024], all[1100], out[4096];
    th_tmpdir(dir, sizeof dir);
    snprintf(all, sizeof all, "%s/all.svm", dir);
    FILE *f = fopen(all, "w");
    hog_err err;
    cr_assert_eq(hog_gen_write(&g, f, &err), HOG_OK, "%s", err.msg);
    fclose(f);
    cr_assert_eq(th_run(out, sizeof out,
                        "cd '%s' && head -n 30000 all.svm > train && "
                        "tail -n 10000 all.svm > test",
                        dir),
                 0, "%s", out);
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    lo.n_features = g.features;
    hog_data *tr, *te;
    char p[1100];
    snprintf(p, sizeof p, "%s/train", dir);
    cr_assert_eq(hog_data_load(p, &lo, &tr, &err), HOG_OK, "%s", err.msg);
    snprintf(p, sizeof p, "%s/test", dir);
    cr_assert_eq(hog_data_load(p, &lo, &te, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_data_rows(tr), 30000u);
    hog_train_opts o;
    th_opts_init(&o);
    o.threads = 1;
    hog_model *m;
    cr_assert_eq(hog_train(tr, NULL, &o, NULL, &m, &err), HOG_OK, "%s", err.msg);
    double *sc = malloc(hog_data_rows(te) * sizeof *sc);
    cr_assert_eq(hog_model_scores(m, te, sc, &err), HOG_OK);
    uint64_t ok = 0;
    for (uint64_t i = 0; i < hog_data_rows(te); i++)
        ok += (sc[i] > 0) == (te->m.y[i] > 0);
    double acc = (double)ok / (double)hog_data_rows(te);
    cr_assert_geq(acc, 0.85, "hogtrain's test accuracy %g with 5%% label noise",
                  acc);
    free(sc);
    hog_model_free(m);
    hog_data_free(tr), hog_data_free(te);
}

/* hogtrain's own parser reads what the generator writes, row for row. */
Test(gen, the_parser_reads_it)
{
    struct hog_gen_opts g = small_opts();
    size_t len;
    char *t = gen_text(&g, &len);
    struct stats st;
    read_text(t, &g, NULL, &st);
    char dir[1024];
    th_tmpdir(dir, sizeof dir);
    const char *p = th_write(dir, "g.svm", t, len);
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_data_load(p, &lo, &d, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_data_rows(d), g.rows);
    cr_assert_eq(hog_data_nnz(d), st.nnz);
    cr_assert_leq(hog_data_features(d), g.features);
    cr_assert_eq(d->labels, HOG_LABELS_BINARY);
    cr_assert_eq(d->label_pos, 1);
    cr_assert_eq(d->label_neg, -1);
    cr_assert_eq(d->n_pos, st.n_pos);
    hog_data_free(d);
    /* Without noise the planted model's scores on the parsed data give
     * every label exactly: the generator labels what the parser reads. */
    g.label_noise = 0;
    free(t);
    t = gen_text(&g, &len);
    p = th_write(dir, "g0.svm", t, len);
    lo.n_features = g.features;
    cr_assert_eq(hog_data_load(p, &lo, &d, &err), HOG_OK, "%s", err.msg);
    hog_model *m;
    cr_assert_eq(hog_gen_model(&g, &m, &err), HOG_OK, "%s", err.msg);
    double *sc = malloc(g.rows * sizeof *sc);
    cr_assert_eq(hog_model_scores(m, d, sc, &err), HOG_OK);
    for (uint64_t i = 0; i < g.rows; i++)
        cr_assert_eq(sc[i] > 0, d->m.y[i] > 0, "row %llu: score %g, label %g",
                     (unsigned long long)i, sc[i], (double)d->m.y[i]);
    free(sc);
    hog_model_free(m);
    hog_data_free(d);
    stats_free(&st);
    free(t);
}
