/* --algo auto, the default (src/train/auto.c): the serial trainer unless
 * the data is large, in memory, of two labels and the threads two or
 * more, where it is Hogwild! with a model per thread under FTRL; what
 * it ran is the named algorithm's run bit for bit, and said. */
#include <criterion/criterion.h>

#include "helpers.h"
#include "hogtrain.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static hog_model *train_said(const hog_data *d, const hog_train_opts *o,
                             hog_auto_stats *s)
{
    *s = (hog_auto_stats){ .size = sizeof *s };
    hog_train_hooks h = { .size = sizeof h, .auto_stats = s };
    return th_train_hooked(d, o, &h);
}

/* The library's defaults (FTRL), a9a: 0.45M nonzeros is small, so auto
 * runs the serial trainer even with two threads asked for, which the
 * serial trainer alone refuses. */
Test(auto, small_data_trains_the_serial_model_on_any_threads)
{
    TH_DATA_OR_SKIP(path, "a9a");
    hog_data *d = th_load(path);
    hog_train_opts o;
    hog_train_opts_init(&o);
    cr_assert_eq(o.algo, HOG_ALGO_AUTO, "auto is the default");
    o.threads = 2;
    hog_auto_stats s;
    hog_model *a = train_said(d, &o, &s);
    cr_assert_eq(s.chosen, 1);
    cr_assert_eq(s.algo, HOG_ALGO_SERIAL);
    cr_assert_eq(s.threads, 1);
    cr_assert(strstr(s.why, "nonzeros"), "%s", s.why);

    hog_train_opts serial = o;
    serial.algo = HOG_ALGO_SERIAL;
    serial.threads = 1;
    hog_model *b = th_train_ok(d, &serial);
    th_assert_same_model(a, b, "auto against the serial trainer named");

    /* the serial trainer named still refuses the threads */
    serial.threads = 2;
    hog_model *m = NULL;
    hog_err err;
    cr_assert_eq(hog_train(d, NULL, &serial, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "--threads above 1"), "%s", err.msg);
    hog_model_free(a);
    hog_model_free(b);
    hog_data_free(d);
}

/* news20.binary five times over (19.0M nonzeros, above auto's 16.8M): two
 * threads train Hogwild! with a model per thread, the same bits as that
 * run named; one thread, K classes, AdaGrad or --save-state keep the
 * serial trainer, each with its reason. */
struct copies {
    uint64_t *indptr;
    uint32_t *indices;
    float *values, *labels;
};

#define COPIES 5

static hog_data *copied(const hog_data *src, struct copies *k)
{
    const uint64_t *ip;
    const uint32_t *ix;
    const float *v, *y;
    hog_data_csr(src, &ip, &ix, &v, &y);
    uint64_t n = hog_data_rows(src), nnz = ip[n];
    k->indptr = malloc((COPIES * n + 1) * sizeof *k->indptr);
    k->indices = malloc(COPIES * nnz * sizeof *k->indices);
    k->values = malloc(COPIES * nnz * sizeof *k->values);
    k->labels = malloc(COPIES * n * sizeof *k->labels);
    cr_assert(k->indptr && k->indices && k->values && k->labels);
    for (uint64_t c = 0; c < COPIES; c++) {
        memcpy(k->indices + c * nnz, ix, nnz * sizeof *ix);
        memcpy(k->values + c * nnz, v, nnz * sizeof *v);
        memcpy(k->labels + c * n, y, n * sizeof *y);
        for (uint64_t i = 0; i <= n; i++)
            k->indptr[c * n + i] = c * nnz + ip[i];
    }
    hog_csr_arrays a = {
        .size = sizeof a, .rows = COPIES * n, .cols = hog_data_features(src),
        .indptr = k->indptr, .indptr_type = HOG_DTYPE_UINT64,
        .indices = k->indices, .indices_type = HOG_DTYPE_UINT32,
        .values = k->values, .values_type = HOG_DTYPE_FLOAT32,
        .labels = k->labels, .labels_type = HOG_DTYPE_FLOAT32,
    };
    hog_data *d = NULL;
    hog_err err;
    cr_assert_eq(hog_data_from_csr(&a, 2, &d, &err), HOG_OK, "%s", err.msg);
    return d;
}

static void copies_free(hog_data *d, struct copies *k)
{
    hog_data_free(d);
    free(k->indptr);
    free(k->indices);
    free(k->values);
    free(k->labels);
}

Test(auto, large_data_on_two_threads_trains_hogwild_with_replicas)
{
    TH_HEAVY_OR_SKIP();
    TH_DATA_OR_SKIP(path, "news20.binary.train.svm");
    hog_data *src = th_load(path);
    struct copies k;
    hog_data *d = copied(src, &k);
    hog_data_free(src);
    cr_assert_geq(hog_data_nnz(d), 1ull << 24);

    hog_train_opts o;
    hog_train_opts_init(&o);
    o.threads = 2;
    o.epochs = 2;
    hog_auto_stats s;
    hog_model *a = train_said(d, &o, &s);
    cr_assert_eq(s.algo, HOG_ALGO_HOGWILD, "why: %s", s.why);
    cr_assert_eq(s.replicas, HOG_REPLICAS_CORE);
    cr_assert_eq(s.threads, 2);
    cr_assert(strstr(s.why, "on 2 threads"), "%s", s.why);

    hog_train_opts named = o;
    named.algo = HOG_ALGO_HOGWILD;
    named.replicas = HOG_REPLICAS_CORE;
    hog_model *b = th_train_ok(d, &named);
    th_assert_same_model(a, b, "auto against Hogwild! with replicas named");
    hog_model_free(b);
    hog_model_free(a);

    /* what keeps the serial trainer, and says so */
    static const struct {
        const char *what, *why;
    } keep[] = {
        { "one thread", "one thread" },
        { "adagrad", "the schedule is not ftrl" },
        { "save_state", "Hogwild! would refuse" },
    };
    for (size_t i = 0; i < sizeof keep / sizeof *keep; i++) {
        hog_train_opts c = o;
        c.epochs = 1;
        if (strcmp(keep[i].what, "one thread") == 0)
            c.threads = 1;
        else if (strcmp(keep[i].what, "adagrad") == 0)
            c.schedule = HOG_SCHED_ADAGRAD;
        else
            c.save_state = 1;
        hog_model *m = train_said(d, &c, &s);
        cr_expect_eq(s.algo, HOG_ALGO_SERIAL, "%s: %s", keep[i].what, s.why);
        cr_expect(strstr(s.why, keep[i].why), "%s: %s", keep[i].what, s.why);
        hog_model_free(m);
    }
    copies_free(d, &k);
}

/* K classes (news20's 20): the serial trainer, which spreads the classes
 * over the threads itself. */
Test(auto, k_classes_keep_the_serial_trainer)
{
    TH_HEAVY_OR_SKIP(); /* news20's 20 classes; the rule is one line */
    TH_DATA_OR_SKIP(path, "news20.train.svm");
    hog_data *d = th_load(path);
    hog_train_opts o;
    hog_train_opts_init(&o);
    o.threads = 2;
    o.epochs = 1;
    hog_auto_stats s;
    hog_model *m = train_said(d, &o, &s);
    cr_assert_eq(s.algo, HOG_ALGO_SERIAL, "%s", s.why);
    cr_assert(strstr(s.why, "K classes"), "%s", s.why);
    hog_model_free(m);
    hog_data_free(d);
}

/* The command: --threads 2 with the default is taken (the serial
 * trainer alone refuses it), the choice is said on standard error and in
 * the JSON report, and -q keeps the notice quiet. */
Test(auto, the_command_says_what_auto_chose)
{
    TH_DATA_OR_SKIP(path, "a9a");
    char dir[512], out[16384], json[600];
    th_tmpdir(dir, sizeof dir);
    snprintf(json, sizeof json, "%s/r.json", dir);
    int rc = th_run(out, sizeof out, "%s train --threads 2 --epochs 1 "
                    "--json %s %s 2>&1", th_bin(), json, path);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "--algo auto: the serial trainer (0.5M nonzeros"),
              "%s", out);
    size_t len;
    char *j = th_slurp(json, &len);
    cr_assert_not_null(j);
    cr_assert(strstr(j, "\"algo\": \"serial\""), "%s", j);
    const char *at = strstr(j, "\"auto\": {");
    cr_assert(at && strncmp(strstr(at, "\"algo\""), "\"algo\": \"serial\"",
                            16) == 0, "%s", j);
    free(j);
    rc = th_run(out, sizeof out, "%s train -q --threads 2 --epochs 1 %s 2>&1",
                th_bin(), path);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert_eq(out[0], 0, "-q printed: %s", out);
    /* a named trainer: no choice, auto null */
    rc = th_run(out, sizeof out, "%s train -q --algo serial --epochs 1 "
                "--json %s %s 2>&1", th_bin(), json, path);
    cr_assert_eq(rc, 0, "%s", out);
    j = th_slurp(json, &len);
    cr_assert(strstr(j, "\"auto\": null"), "%s", j);
    free(j);
    /* what only Hogwild! takes is refused by name */
    rc = th_run(out, sizeof out, "%s train -q --replicas core %s 2>&1",
                th_bin(), path);
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert(strstr(out, "--replicas applies to --algo hogwild only (this "
                     "run uses --algo auto)"), "%s", out);
}
