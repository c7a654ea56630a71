/* Warm starts (--init): training starts from the model given, for every
 * trainer that takes one (a step of almost nothing leaves it where it
 * was, where a start from zero stays near zero); --epochs 0 is the model
 * itself; mismatches are sentences. */
#include <criterion/criterion.h>

#include "core/core.h"
#include "helpers.h"
#include "synth.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static hog_data *problem(uint32_t classes)
{
    hog_err err = { { 0 } };
    hog_data *d = th_synth(&(struct th_synth){
        .rows = 1500, .features = 80, .layout = TH_SYNTH_SKEW,
        .nnz_min = 3, .nnz_max = 12, .seed = 5, .stream = 2,
        .first = { .normal = true }, .noise = 0.1 }, &err);
    cr_assert(d, "%s", err.msg);
    if (classes > 2) { /* labels from the first feature's value */
        float *y = (float *)d->m.y;
        for (uint64_t i = 0; i < d->m.rows; i++) {
            struct hog_row r = hog_csr_row(&d->m, i);
            y[i] = (float)(r.nnz ? r.idx[0] % classes : 0);
        }
        hog_data_scan_labels(d);
    }
    return d;
}

static hog_model *train(const hog_data *d, const hog_train_opts *o)
{
    hog_model *m;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_train(d, NULL, o, NULL, &m, &err), HOG_OK, "%s", err.msg);
    return m;
}

static double max_abs(const float *a, const float *b, uint64_t n)
{
    double m = 0;
    for (uint64_t j = 0; j < n; j++)
        m = fmax(m, fabs((double)a[j] - (b ? (double)b[j] : 0.0)));
    return m;
}

struct kind {
    const char *name;
    hog_algo algo;
    unsigned threads;
    uint32_t classes;
    hog_multiclass mc;
};

Test(init, every_trainer_starts_from_the_model, .timeout = 60)
{
    const struct kind kinds[] = {
        { "serial", HOG_ALGO_SERIAL, 1, 2, HOG_MULTICLASS_OVR },
        { "hogwild 2 threads", HOG_ALGO_HOGWILD, 2, 2, HOG_MULTICLASS_OVR },
        { "cyclades", HOG_ALGO_CYCLADES, 2, 2, HOG_MULTICLASS_OVR },
        { "one-vs-rest serial", HOG_ALGO_SERIAL, 2, 4, HOG_MULTICLASS_OVR },
        { "softmax", HOG_ALGO_SERIAL, 1, 4, HOG_MULTICLASS_SOFTMAX },
        { "softmax hogwild", HOG_ALGO_HOGWILD, 2, 4, HOG_MULTICLASS_SOFTMAX },
    };
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        const struct kind *q = &kinds[k];
        hog_data *d = problem(q->classes);
        hog_train_opts o;
        th_opts_init(&o);
        o.algo = q->algo;
        o.threads = q->threads;
        o.multiclass = q->mc;
        hog_model *m = train(d, &o);
        uint64_t n = hog_model_len(m);
        double size = max_abs(m->w, NULL, n);
        cr_assert_gt(size, 0.1, "%s: a model to start from", q->name);
        /* a step of almost nothing */
        hog_train_opts w = o;
        w.schedule = HOG_SCHED_CONSTANT;
        w.eta = 1e-9;
        w.epochs = 1;
        w.warm_start = m;
        hog_model *a = train(d, &w);
        cr_assert_lt(max_abs(a->w, m->w, n), 1e-5 * size,
                     "%s: the warm start moved from the model", q->name);
        w.warm_start = NULL;
        hog_model *z = train(d, &w);
        cr_assert_lt(max_abs(z->w, NULL, n), 1e-5 * size,
                     "%s: the cold start is not near zero", q->name);
        /* no epoch: the model itself */
        w.warm_start = m;
        w.epochs = 0;
        hog_model *e = train(d, &w);
        cr_assert_eq(memcmp(e->w, m->w, n * sizeof *m->w), 0, "%s", q->name);
        hog_model_free(a);
        hog_model_free(z);
        hog_model_free(e);
        hog_model_free(m);
        hog_data_free(d);
    }
}

Test(init, mismatches_are_sentences)
{
    hog_data *d2 = problem(2), *d4 = problem(4);
    hog_train_opts o;
    th_opts_init(&o);
    hog_model *m2 = train(d2, &o), *m4 = train(d4, &o), *x;
    hog_err err;
    hog_train_opts w = o;
    w.warm_start = m2;
    cr_assert_eq(hog_train(d4, NULL, &w, NULL, &x, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "classes"), "%s", err.msg);
    w.warm_start = m4;
    w.multiclass = HOG_MULTICLASS_SOFTMAX;
    cr_assert_eq(hog_train(d4, NULL, &w, NULL, &x, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "one-vs-rest"), "%s", err.msg);
    w = o;
    w.warm_start = m2;
    w.bias = 0;
    cr_assert_eq(hog_train(d2, NULL, &w, NULL, &x, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "bias"), "%s", err.msg);
    w = o;
    w.warm_start = m2;
    w.algo = HOG_ALGO_DCD;
    w.update = HOG_UPDATE_ATOMIC;
    cr_assert_eq(hog_train(d2, NULL, &w, NULL, &x, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "warm start"), "%s", err.msg);
    w = o;
    w.warm_start = m2;
    w.loss = HOG_LOSS_SQUARED;
    w.eta = 0.01;
    cr_assert_eq(hog_train(d2, NULL, &w, NULL, &x, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "regresses"), "%s", err.msg);
    hog_model_free(m2);
    hog_model_free(m4);
    hog_data_free(d2);
    hog_data_free(d4);
}

/* The command: a LIBLINEAR model as the start (its bias as -B 1), and
 * --epochs 0 writes the model as it is. */
Test(init, command_starts_from_a_liblinear_model, .timeout = 60)
{
    TH_LIBLINEAR_OR_SKIP();
    TH_DATA_OR_SKIP(tr, "a9a");
    TH_DATA_OR_SKIP(te, "a9a.t");
    char dir[256], out[8192];
    cr_assert(th_tmpdir(dir, sizeof dir));
    cr_assert_eq(th_run(out, sizeof out, "liblinear-train -q -s 0 -B 1 %s "
                        "%s/ll && liblinear-predict %s %s/ll %s/ll.out", tr,
                        dir, te, dir, dir), 0, "%s", out);
    cr_assert_eq(th_run(out, sizeof out, "%s train -q --init %s/ll --epochs "
                        "0 %s -o %s/m.hgm && %s predict -q %s/m.hgm %s -o "
                        "%s/m.out && cmp %s/ll.out %s/m.out", th_bin(), dir,
                        tr, dir, th_bin(), dir, te, dir, dir, dir), 0, "%s",
                 out);
    cr_assert_eq(th_run(out, sizeof out, "%s train --init %s/ll --epochs 1 "
                        "%s -t %s", th_bin(), dir, tr, te), 0, "%s", out);
    cr_assert(strstr(out, "test accuracy"), "%s", out);
    cr_assert_neq(th_run(out, sizeof out, "%s train --epochs 0 %s", th_bin(),
                         tr), 0);
    cr_assert(strstr(out, "--init"), "%s", out);
}
