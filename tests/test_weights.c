/* weights: row weights (--weights, hog_train_opts.row_weights) and class
 * weights (--class-weight) in every algorithm. Weights of 1 give the
 * unweighted model bit for bit; a weight of 2 is the row twice where the
 * mathematics says so exactly (the objective; dcd and scd at convergence)
 * and within a stated tolerance for SGD; balanced class weights raise the
 * minority class's recall on w8a; bad inputs are sentences; the command
 * end to end; checkpoints refuse other weights. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinate/coordinate.h"
#include "core/core.h"
#include "core/loss.h"
#include "core/metrics.h"
#include "helpers.h"
#include "io/io.h"
#include "synth.h"
#include "train/train.h"

/* ---- problems ----------------------------------------------------------- */

/* A skewed sparse binary problem (+1/-1 labels from a planted model). */
static hog_data *binary(uint64_t rows, uint32_t nf, uint64_t seed,
                        bool regression)
{
    hog_err err = { { 0 } };
    hog_data *d = th_synth(&(struct th_synth){
        .rows = rows, .features = nf, .layout = TH_SYNTH_SKEW,
        .nnz_min = 3, .nnz_max = 12, .seed = seed, .stream = 21,
        .first = { .normal = true }, .offset = -0.3, .noise = 0.5,
        .regression = regression }, &err);
    cr_assert(d, "%s", err.msg);
    return d;
}

/* The same rows relabelled into 3 classes 10, 20, 30 by the arg-max of
 * three planted models. */
static hog_data *three_classes(uint64_t rows, uint32_t nf, uint64_t seed)
{
    hog_data *d = binary(rows, nf, seed, false);
    cr_assert(th_label_argmax(d, 3, 10, 3, 77));
    return d;
}

/* d with every row i where i % every == 0 `copies` times (0: left out;
 * 2: the copy right after it), the others once. */
static hog_data *recopied(const hog_data *d, uint64_t every, uint64_t copies)
{
    const struct hog_csr *m = &d->m;
    uint64_t rows = 0, nnz = 0;
    for (uint64_t i = 0; i < m->rows; i++) {
        uint64_t k = i % every == 0 ? copies : 1,
                 len = m->off[i + 1] - m->off[i];
        rows += k;
        nnz += k * len;
    }
    uint64_t *off = malloc((rows + 1) * sizeof *off);
    float *y = malloc(rows * sizeof *y);
    uint32_t *idx = malloc((nnz + 1) * sizeof *idx);
    float *val = malloc((nnz + 1) * sizeof *val);
    cr_assert(off && y && idx && val);
    uint64_t r = 0, z = 0;
    off[0] = 0;
    for (uint64_t i = 0; i < m->rows; i++)
        for (uint64_t k = 0; k < (i % every == 0 ? copies : 1); k++) {
            for (uint64_t e = m->off[i]; e < m->off[i + 1]; e++) {
                idx[z] = m->idx[e];
                val[z++] = m->val[e];
            }
            y[r] = m->y[i];
            off[++r] = z;
        }
    hog_data *out;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_data_wrap(rows, nnz, off, y, idx, val, d->n_features,
                               &out, &err), HOG_OK, "%s", err.msg);
    return out;
}

/* The rows i % every == 0 twice, and the weights that say so: 2 on those
 * rows, 1 elsewhere. */
static hog_data *duplicated(const hog_data *d, uint64_t every)
{
    return recopied(d, every, 2);
}

static float *every_nth(const hog_data *d, uint64_t every, float v)
{
    float *w = malloc(d->m.rows * sizeof *w);
    cr_assert(w);
    for (uint64_t i = 0; i < d->m.rows; i++)
        w[i] = i % every == 0 ? v : 1.0f;
    return w;
}

static float *twos(const hog_data *d, uint64_t every)
{
    return every_nth(d, every, 2.0f);
}

static float *constant(const hog_data *d, float v)
{
    float *w = malloc(d->m.rows * sizeof *w);
    cr_assert(w);
    for (uint64_t i = 0; i < d->m.rows; i++)
        w[i] = v;
    return w;
}

/* A view of d whose rows carry the weights w (as the front door's). */
static hog_data weighted_view(const hog_data *d, const float *w)
{
    hog_data v = *d;
    memset(v.mem, 0, sizeof v.mem);
    memset(v.mem_len, 0, sizeof v.mem_len);
    v.release = NULL;
    v.row_w = w;
    return v;
}

static hog_model *train_ok(const hog_data *d, const hog_train_opts *o,
                           const char *what)
{
    hog_model *m = NULL;
    hog_err err = { { 0 } };
    hog_status s = hog_train(d, NULL, o, NULL, &m, &err);
    cr_assert_eq(s, HOG_OK, "%s: %s", what, err.msg);
    return m;
}

static hog_status train_err(const hog_data *d, const hog_train_opts *o,
                            hog_err *err)
{
    hog_model *m = NULL;
    hog_status s = hog_train(d, NULL, o, NULL, &m, err);
    hog_model_free(m);
    return s;
}

static bool same_weights(const hog_model *a, const hog_model *b)
{
    return hog_model_features(a) == hog_model_features(b) &&
           memcmp(a->w, b->w, hog_model_len(a) * sizeof *a->w) == 0;
}

/* max_j |a_j - b_j| / max(1e-3, max_j |b_j|): the models' distance
 * relative to the larger model's scale. */
static double rel_distance(const hog_model *a, const hog_model *b)
{
    uint64_t n = hog_model_len(a);
    double d = 0, s = 0;
    for (uint64_t j = 0; j < n; j++) {
        double e = fabs((double)a->w[j] - b->w[j]);
        d = e > d ? e : d;
        s = fabs((double)b->w[j]) > s ? fabs((double)b->w[j]) : s;
    }
    return d / (s > 1e-3 ? s : 1e-3);
}

/* ---- weights of 1 are no weights, bit for bit --------------------------- */

struct algo_case {
    const char *name;
    hog_algo algo;
    hog_loss loss;
    hog_schedule schedule;
    double l1, l2;
    unsigned threads;
    hog_update update;
    uint64_t hot_features; /* Hogwild! --hot K */
    int cyc_hot;          /* Cyclades: hot features on */
    bool classes;         /* three classes (one-vs-rest, or softmax) */
    hog_multiclass mc;
};

static hog_train_opts case_opts(const struct algo_case *c)
{
    hog_train_opts o;
    th_opts_init(&o);
    o.algo = c->algo;
    o.loss = c->loss;
    th_opts_step_for_loss(&o);
    o.schedule = c->schedule;
    if (c->schedule != HOG_SCHED_ADAGRAD)
        o.eta = 0.05;
    o.l1 = c->l1;
    o.l2 = c->l2;
    o.threads = c->threads;
    o.update = c->update;
    o.hot_features = c->hot_features;
    o.cyclades_hot_degree = c->cyc_hot ? HOG_HOT_AUTO : 0;
    o.multiclass = c->mc;
    o.epochs = 3;
    o.seed = 9;
    if (c->algo == HOG_ALGO_SCD || c->algo == HOG_ALGO_DCD) {
        o.epochs = 200;
        o.tol = 1e-4;
    }
    return o;
}

static const struct algo_case every_algo[] = {
    { "serial adagrad l2", HOG_ALGO_SERIAL, HOG_LOSS_LOGISTIC,
      HOG_SCHED_ADAGRAD, 0, 1e-3, 1, HOG_UPDATE_NONE, 0, 1, false, 0 },
    { "serial adagrad l1", HOG_ALGO_SERIAL, HOG_LOSS_HINGE,
      HOG_SCHED_ADAGRAD, 1e-4, 1e-4, 1, HOG_UPDATE_NONE, 0, 1, false, 0 },
    { "serial constant l2 (scaled)", HOG_ALGO_SERIAL, HOG_LOSS_SQHINGE,
      HOG_SCHED_CONSTANT, 0, 1e-3, 1, HOG_UPDATE_NONE, 0, 1, false, 0 },
    { "serial invscaling l1", HOG_ALGO_SERIAL, HOG_LOSS_SQUARED,
      HOG_SCHED_INVSCALING, 1e-4, 0, 1, HOG_UPDATE_NONE, 0, 1, false, 0 },
    { "serial constant plain", HOG_ALGO_SERIAL, HOG_LOSS_LOGISTIC,
      HOG_SCHED_CONSTANT, 0, 0, 1, HOG_UPDATE_NONE, 0, 1, false, 0 },
    { "hogwild none", HOG_ALGO_HOGWILD, HOG_LOSS_LOGISTIC, HOG_SCHED_ADAGRAD,
      0, 1e-3, 1, HOG_UPDATE_NONE, 0, 1, false, 0 },
    { "hogwild atomic", HOG_ALGO_HOGWILD, HOG_LOSS_HINGE, HOG_SCHED_CONSTANT,
      0, 1e-3, 1, HOG_UPDATE_ATOMIC, 0, 1, false, 0 },
    { "hogwild striped", HOG_ALGO_HOGWILD, HOG_LOSS_LOGISTIC,
      HOG_SCHED_ADAGRAD, 1e-4, 0, 1, HOG_UPDATE_STRIPED, 0, 1, false, 0 },
    { "hogwild mutex", HOG_ALGO_HOGWILD, HOG_LOSS_SQUARED, HOG_SCHED_ADAGRAD,
      0, 1e-3, 1, HOG_UPDATE_MUTEX, 0, 1, false, 0 },
    { "hogwild --hot 4", HOG_ALGO_HOGWILD, HOG_LOSS_LOGISTIC,
      HOG_SCHED_ADAGRAD, 0, 1e-3, 1, HOG_UPDATE_NONE, 4, 1, false, 0 },
    { "cyclades hot", HOG_ALGO_CYCLADES, HOG_LOSS_LOGISTIC, HOG_SCHED_ADAGRAD,
      0, 1e-3, 2, HOG_UPDATE_NONE, 0, 1, false, 0 },
    { "cyclades hot off", HOG_ALGO_CYCLADES, HOG_LOSS_HINGE,
      HOG_SCHED_CONSTANT, 1e-4, 1e-3, 2, HOG_UPDATE_NONE, 0, 0, false, 0 },
    { "scd logistic l1", HOG_ALGO_SCD, HOG_LOSS_LOGISTIC, HOG_SCHED_ADAGRAD,
      1e-3, 0, 1, HOG_UPDATE_NONE, 0, 1, false, 0 },
    { "scd squared l2", HOG_ALGO_SCD, HOG_LOSS_SQUARED, HOG_SCHED_ADAGRAD, 0,
      1e-3, 1, HOG_UPDATE_NONE, 0, 1, false, 0 },
    { "dcd hinge", HOG_ALGO_DCD, HOG_LOSS_HINGE, HOG_SCHED_ADAGRAD, 0, 1e-3,
      1, HOG_UPDATE_ATOMIC, 0, 1, false, 0 },
    { "dcd sqhinge", HOG_ALGO_DCD, HOG_LOSS_SQHINGE, HOG_SCHED_ADAGRAD, 0,
      1e-3, 1, HOG_UPDATE_ATOMIC, 0, 1, false, 0 },
    { "dcd logistic", HOG_ALGO_DCD, HOG_LOSS_LOGISTIC, HOG_SCHED_ADAGRAD, 0,
      1e-3, 1, HOG_UPDATE_ATOMIC, 0, 1, false, 0 },
    { "softmax serial", HOG_ALGO_SERIAL, HOG_LOSS_LOGISTIC, HOG_SCHED_ADAGRAD,
      1e-4, 1e-3, 1, HOG_UPDATE_NONE, 0, 1, true, HOG_MULTICLASS_SOFTMAX },
    { "softmax hogwild", HOG_ALGO_HOGWILD, HOG_LOSS_LOGISTIC,
      HOG_SCHED_CONSTANT, 0, 1e-3, 1, HOG_UPDATE_NONE, 0, 1, true,
      HOG_MULTICLASS_SOFTMAX },
    { "one-vs-rest serial", HOG_ALGO_SERIAL, HOG_LOSS_HINGE,
      HOG_SCHED_ADAGRAD, 0, 1e-3, 1, HOG_UPDATE_NONE, 0, 1, true,
      HOG_MULTICLASS_OVR },
    { "one-vs-rest dcd", HOG_ALGO_DCD, HOG_LOSS_LOGISTIC, HOG_SCHED_ADAGRAD,
      0, 1e-3, 1, HOG_UPDATE_ATOMIC, 0, 1, true, HOG_MULTICLASS_OVR },
};

Test(weights, ones_equal_no_weights_bit_for_bit, .timeout = 240)
{
    hog_data *bin = binary(1500, 60, 4, false);
    hog_data *reg = binary(1500, 60, 4, true);
    hog_data *three = three_classes(1500, 60, 4);
    for (size_t i = 0; i < sizeof every_algo / sizeof *every_algo; i++) {
        const struct algo_case *c = &every_algo[i];
        const hog_data *d = c->classes ? three
                            : c->loss == HOG_LOSS_SQUARED ? reg
                                                          : bin;
        hog_train_opts o = case_opts(c);
        hog_model *plain = train_ok(d, &o, c->name);

        float *ones = constant(d, 1.0f);
        o.row_weights = ones;
        hog_model *file = train_ok(d, &o, c->name);
        cr_assert(same_weights(plain, file),
                  "%s: row weights of 1 changed the model", c->name);
        o.row_weights = NULL;

        if (c->loss != HOG_LOSS_SQUARED) { /* every label at 1 */
            double *lab;
            uint32_t k;
            hog_err err = { { 0 } };
            cr_assert_eq(hog_data_classes(d, 10, &lab, &k, &err), HOG_OK);
            double one[3] = { 1, 1, 1 };
            o.class_weight_labels = lab;
            o.class_weight_values = one;
            o.n_class_weights = k;
            hog_model *cls = train_ok(d, &o, c->name);
            cr_assert(same_weights(plain, cls),
                      "%s: class weights of 1 changed the model", c->name);
            /* and both at once: 1 x 1 */
            o.row_weights = ones;
            hog_model *both = train_ok(d, &o, c->name);
            cr_assert(same_weights(plain, both),
                      "%s: row and class weights of 1 changed the model",
                      c->name);
            hog_model_free(cls);
            hog_model_free(both);
            free(lab);
        }
        free(ones);
        hog_model_free(plain);
        hog_model_free(file);
    }
    hog_data_free(bin);
    hog_data_free(reg);
    hog_data_free(three);
}

/* ---- a weight of 2 is the row twice ------------------------------------- */

/* LIBLINEAR's scale at one C: 1/2 |w|^2 + C sum_i v_i loss_i (or |w|_1 +
 * ...) of the weighted rows equals that of the duplicated rows, whatever
 * the model; the two problems' l2 differ as 1/(C n) does. */
Test(weights, weight_two_objective_equals_duplicated_rows)
{
    hog_data *bin = binary(900, 40, 6, false), *reg = binary(900, 40, 6, true);
    hog_data *three = three_classes(900, 40, 6);
    const hog_loss losses[] = { HOG_LOSS_LOGISTIC, HOG_LOSS_HINGE,
                                HOG_LOSS_SQHINGE, HOG_LOSS_SQUARED };
    const double C = 0.7;
    for (int l = 0; l < 5; l++) {
        bool k3 = l == 4; /* one-vs-rest: the sum of the classes' objectives */
        hog_loss loss = k3 ? HOG_LOSS_LOGISTIC : losses[l];
        hog_data *d = k3 ? three : loss == HOG_LOSS_SQUARED ? reg : bin;
        hog_data *dup = duplicated(d, 3);
        float *w = twos(d, 3);
        hog_data v = weighted_view(d, w);
        hog_train_opts o;
        th_opts_init(&o);
        o.loss = loss;
        th_opts_step_for_loss(&o);
        o.epochs = 2;
        hog_model *m = train_ok(d, &o, "a model to evaluate");
        for (int r = 0; r < 2; r++) { /* l2, then l1 */
            double lw = 1.0 / (C * (double)d->m.rows);
            double ld = 1.0 / (C * (double)dup->m.rows);
            struct hog_objective a, b;
            hog_err err = { { 0 } };
            cr_assert_eq(hog_objective_eval(m, &v, loss, r ? lw : 0,
                                            r ? 0 : lw, &a, &err), HOG_OK,
                         "%s", err.msg);
            cr_assert_eq(hog_objective_eval(m, dup, loss, r ? ld : 0,
                                            r ? 0 : ld, &b, &err), HOG_OK,
                         "%s", err.msg);
            cr_assert(fabs(a.liblinear - b.liblinear) <=
                          1e-12 * fabs(b.liblinear),
                      "%s, %s: weighted %.17g, duplicated %.17g",
                      k3 ? "3 classes" : hog_loss_name(loss), r ? "l1" : "l2",
                      a.liblinear, b.liblinear);
            cr_assert(fabs(a.C - C) <= 1e-12 * C &&
                      fabs(b.C - C) <= 1e-12 * C);
        }
        hog_model_free(m);
        free(w);
        hog_data_free(dup);
    }
    hog_data_free(bin);
    hog_data_free(reg);
    hog_data_free(three);
}

/* dcd and scd at convergence: the weighted problem's solution is the one
 * of the rows repeated as often as their weight says (the same strongly
 * convex primal in LIBLINEAR's scale, so the same minimiser). Both are
 * solved to a tight tol; the models agree within 1e-4 of the weights'
 * scale (measured: to the last float bit for the logistic and squared
 * losses, within 3e-7 for the hinge losses). */
Test(weights, coordinate_weights_converge_to_repeated_rows,
     .timeout = 240)
{
    hog_data *bin = binary(600, 30, 8, false), *reg = binary(600, 30, 8, true);
    struct {
        hog_algo algo;
        hog_loss loss;
        bool l1;
    } cases[] = {
        { HOG_ALGO_DCD, HOG_LOSS_HINGE, false },
        { HOG_ALGO_DCD, HOG_LOSS_SQHINGE, false },
        { HOG_ALGO_DCD, HOG_LOSS_LOGISTIC, false },
        { HOG_ALGO_SCD, HOG_LOSS_LOGISTIC, true },
        { HOG_ALGO_SCD, HOG_LOSS_SQUARED, false },
    };
    const double C = 0.5;
    /* weight 2 against the rows twice, weight 0 (never visited by dcd)
     * against the rows left out */
    for (size_t i = 0; i < 2 * sizeof cases / sizeof *cases; i++) {
        const uint64_t copies = i % 2 ? 0 : 2;
        hog_data *d = cases[i / 2].loss == HOG_LOSS_SQUARED ? reg : bin;
        hog_data *dup = recopied(d, 4, copies);
        float *w = every_nth(d, 4, (float)copies);
        hog_train_opts o;
        th_opts_init(&o);
        o.algo = cases[i / 2].algo;
        o.loss = cases[i / 2].loss;
        o.threads = 1;
        o.epochs = 100000;
        o.tol = 1e-7;
        const bool l1 = cases[i / 2].l1;
        double lw = 1.0 / (C * (double)d->m.rows);
        double ld = 1.0 / (C * (double)dup->m.rows);
        o.l1 = l1 ? lw : 0;
        o.l2 = l1 ? 0 : lw;
        o.row_weights = w;
        hog_model *a = train_ok(d, &o, "weighted");
        o.row_weights = NULL;
        o.l1 = l1 ? ld : 0;
        o.l2 = l1 ? 0 : ld;
        hog_model *b = train_ok(dup, &o, "repeated");
        double dist = rel_distance(a, b);
        cr_assert(dist <= 1e-4, "%s %s: weight %llu against the rows %llu "
                  "times: relative distance %.3g > 1e-4",
                  hog_algo_name(o.algo), hog_loss_name(o.loss),
                  (unsigned long long)copies, (unsigned long long)copies,
                  dist);
        hog_model_free(a);
        hog_model_free(b);
        free(w);
        hog_data_free(dup);
    }
    hog_data_free(bin);
    hog_data_free(reg);
}

/* Serial SGD is not exact here: the duplicated row is two steps (each on
 * the weights the other left), not one step of twice the size, and an
 * epoch of the duplicated data is longer, so the two runs see different
 * step sequences. Both head for the same minimiser, though, so after
 * enough epochs of a decaying step they end close: within 1e-2 of the
 * weights' scale (measured: 7.7e-4 here; 3e-2 after 60 epochs at C = 1,
 * where the steps are still large), and the same training accuracy within
 * 0.5 points. */
Test(weights, sgd_weight_two_is_near_duplicated_rows, .timeout = 120)
{
    hog_data *d = binary(2000, 40, 10, false);
    hog_data *dup = duplicated(d, 3);
    float *w = twos(d, 3);
    const double C = 0.1;
    hog_train_opts o;
    th_opts_init(&o);
    o.loss = HOG_LOSS_LOGISTIC;
    o.schedule = HOG_SCHED_INVSCALING; /* Bottou's eta / (1 + eta l2 t) */
    o.eta = 0.5;
    o.epochs = 200;
    o.l2 = 1.0 / (C * (double)d->m.rows);
    o.row_weights = w;
    hog_model *a = train_ok(d, &o, "weighted");
    o.row_weights = NULL;
    o.l2 = 1.0 / (C * (double)dup->m.rows);
    hog_model *b = train_ok(dup, &o, "duplicated");
    double dist = rel_distance(a, b);
    struct hog_metrics ma, mb;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_metrics_eval(a, d, &ma, &err), HOG_OK);
    cr_assert_eq(hog_metrics_eval(b, d, &mb, &err), HOG_OK);
    cr_assert(dist <= 1e-2, "serial SGD, weight 2 against duplicated rows: "
              "relative distance %.3g > 1e-2", dist);
    cr_assert(fabs(ma.accuracy - mb.accuracy) <= 0.005,
              "accuracy %.4f weighted, %.4f duplicated", ma.accuracy,
              mb.accuracy);
    hog_model_free(a);
    hog_model_free(b);
    free(w);
    hog_data_free(dup);
    hog_data_free(d);
}

/* ---- what the weights mean ---------------------------------------------- */

/* The row's weight is its row weight times its class's (scikit-learn's
 * sample_weight x class_weight[y]): the two given apart train the model
 * of their product given as row weights. */
Test(weights, row_times_class_weight_is_the_row_weight)
{
    hog_data *d = three_classes(800, 30, 12);
    float *rw = twos(d, 5), *prod = malloc(d->m.rows * sizeof *prod);
    cr_assert(prod);
    const double lab[] = { 20, 30 }, val[] = { 3, 0.25 };
    for (uint64_t i = 0; i < d->m.rows; i++)
        prod[i] = (float)(rw[i] * (d->m.y[i] == 20 ? 3.0
                                   : d->m.y[i] == 30 ? 0.25 : 1.0));
    for (int mc = 0; mc < 2; mc++) {
        hog_train_opts o;
        th_opts_init(&o);
        o.multiclass = mc ? HOG_MULTICLASS_SOFTMAX : HOG_MULTICLASS_OVR;
        o.threads = 1;
        o.row_weights = rw;
        o.class_weight_labels = lab;
        o.class_weight_values = val;
        o.n_class_weights = 2;
        hog_model *a = train_ok(d, &o, "row and class weights");
        o.n_class_weights = 0;
        o.row_weights = prod;
        hog_model *b = train_ok(d, &o, "their product");
        cr_assert(same_weights(a, b), "%s", mc ? "softmax" : "one-vs-rest");
        hog_model_free(a);
        hog_model_free(b);
    }
    free(rw);
    free(prod);
    hog_data_free(d);
}

/* The training loss and objective are weighted, accuracy and AUC count
 * rows: weights of 2 double the loss and leave the rest. */
Test(weights, metrics_weigh_the_loss_not_the_counts)
{
    hog_data *d = binary(700, 30, 14, false);
    hog_train_opts o;
    th_opts_init(&o);
    hog_model *m = train_ok(d, &o, "a model");
    float *two = constant(d, 2.0f);
    hog_data v = weighted_view(d, two);
    struct hog_metrics a, b;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_metrics_eval(m, d, &a, &err), HOG_OK);
    cr_assert_eq(hog_metrics_eval(m, &v, &b, &err), HOG_OK);
    cr_assert(fabs(b.loss - 2 * a.loss) <= 1e-12 * a.loss, "%.17g %.17g",
              b.loss, a.loss);
    cr_assert_eq(a.accuracy, b.accuracy);
    cr_assert_eq(a.auc, b.auc);
    hog_model_free(m);
    free(two);
    hog_data_free(d);
}

/* ---- balanced class weights on real, skewed data ------------------------ */

/* The positive class's recall on the training rows, in percent. */
static double recall_pos(const hog_model *m, const hog_data *d)
{
    double *p = malloc(d->m.rows * sizeof *p);
    hog_err err = { { 0 } };
    cr_assert(p);
    cr_assert_eq(hog_model_predict(m, d, p, &err), HOG_OK, "%s", err.msg);
    uint64_t tp = 0, pos = 0;
    for (uint64_t i = 0; i < d->m.rows; i++)
        if ((double)d->m.y[i] == d->label_pos) {
            pos++;
            tp += p[i] == d->label_pos;
        }
    free(p);
    return 100.0 * (double)tp / (double)pos;
}

/* w8a is 3% positive: the unweighted logistic model misses many of them;
 * balanced weights (each class n/2 in all) must find at least 15 points
 * more of them (measured: 59.6% against 85.3%, serial, every other option
 * at its default). */
Test(weights, balanced_raises_minority_recall_on_w8a, .timeout = 120)
{
    TH_DATA_OR_SKIP(path, "w8a");
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    hog_data *d;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_data_load(path, &lo, &d, &err), HOG_OK, "%s", err.msg);
    hog_train_opts o;
    th_opts_init(&o);
    hog_model *plain = train_ok(d, &o, "w8a");
    o.class_weight_balanced = 1;
    hog_model *bal = train_ok(d, &o, "w8a balanced");
    double a = recall_pos(plain, d), b = recall_pos(bal, d);
    cr_assert(b > a + 15.0, "positive recall on w8a: %.2f%% unweighted, "
              "%.2f%% balanced (want 15 points more)", a, b);
    hog_model_free(plain);
    hog_model_free(bal);
    hog_data_free(d);
}

/* The parallel trainers run the weighted kernel as the serial trainer
 * does: one Hogwild! thread (every update mode, hot features, replicas) is
 * the serial weighted model bit for bit, Cyclades' weighted model is the same
 * at 1 and 3 threads, and in every algorithm balanced weights raise the
 * training recall of a minority class by more than 10 points (measured:
 * 17.8 to 24.1 points, from 72-77% to 94-96%). */
Test(weights, every_algorithm_takes_the_weights, .timeout = 240)
{
    hog_err err = { { 0 } };
    hog_data *d = th_synth(&(struct th_synth){
        .rows = 3000, .features = 50, .layout = TH_SYNTH_SKEW,
        .nnz_min = 3, .nnz_max = 12, .seed = 22, .stream = 21,
        .first = { .normal = true }, .offset = -3.0, .noise = 1.0 }, &err);
    cr_assert(d, "%s", err.msg);
    float *w = twos(d, 3);
    hog_train_opts o;
    th_opts_init(&o);
    o.threads = 1;
    o.row_weights = w;
    hog_model *serial = train_ok(d, &o, "serial");
    o.algo = HOG_ALGO_HOGWILD;
    for (int u = HOG_UPDATE_NONE; u <= HOG_UPDATE_MUTEX + 1; u++) {
        o.update = u <= HOG_UPDATE_MUTEX ? (hog_update)u : HOG_UPDATE_NONE;
        o.hot_features = u > HOG_UPDATE_MUTEX ? 4 : 0;
        hog_model *h = train_ok(d, &o, "hogwild");
        cr_assert(same_weights(serial, h), "one Hogwild! thread, update %d, "
                  "hot %llu: not the serial weighted model", u,
                  (unsigned long long)o.hot_features);
        hog_model_free(h);
    }
    o.update = HOG_UPDATE_NONE;
    o.hot_features = 0;
    for (int r = HOG_REPLICAS_NODE; r <= HOG_REPLICAS_CORE; r++) {
        o.replicas = (hog_replicas)r; /* one thread: one replica */
        hog_model *h = train_ok(d, &o, "hogwild replicas");
        cr_assert(same_weights(serial, h), "one Hogwild! thread, replicas "
                  "%d: not the serial weighted model", r);
        hog_model_free(h);
    }
    o.replicas = HOG_REPLICAS_SHARED;
    o.algo = HOG_ALGO_CYCLADES;
    hog_model *c1 = train_ok(d, &o, "cyclades 1");
    o.threads = 3;
    hog_model *c3 = train_ok(d, &o, "cyclades 3");
    cr_assert(same_weights(c1, c3), "weighted Cyclades differs at 1 and 3 "
              "threads");
    hog_model_free(c1);
    hog_model_free(c3);
    hog_model_free(serial);
    o.row_weights = NULL;

    struct {
        const char *name;
        hog_algo algo;
        hog_loss loss;
        unsigned threads;
    } algos[] = {
        { "serial", HOG_ALGO_SERIAL, HOG_LOSS_LOGISTIC, 1 },
        { "hogwild", HOG_ALGO_HOGWILD, HOG_LOSS_HINGE, 2 },
        { "cyclades", HOG_ALGO_CYCLADES, HOG_LOSS_LOGISTIC, 2 },
        { "scd", HOG_ALGO_SCD, HOG_LOSS_LOGISTIC, 1 },
        { "dcd", HOG_ALGO_DCD, HOG_LOSS_HINGE, 1 },
        { "dcd", HOG_ALGO_DCD, HOG_LOSS_LOGISTIC, 1 },
    };
    for (size_t i = 0; i < sizeof algos / sizeof *algos; i++) {
        th_opts_init(&o);
        o.algo = algos[i].algo;
        o.loss = algos[i].loss;
        th_opts_step_for_loss(&o);
        o.threads = algos[i].threads;
        if (o.algo == HOG_ALGO_SCD) {
            o.l1 = 1e-3;
            o.l2 = 0;
        }
        if (o.algo == HOG_ALGO_DCD)
            o.l2 = 1e-3; /* C = 1/3: weights count, far from a hard margin */
        if (o.algo == HOG_ALGO_SCD || o.algo == HOG_ALGO_DCD)
            o.epochs = 200;
        hog_model *a = train_ok(d, &o, algos[i].name);
        o.class_weight_balanced = 1;
        hog_model *b = train_ok(d, &o, algos[i].name);
        double ra = recall_pos(a, d), rb = recall_pos(b, d);
        cr_assert(rb > ra + 10.0, "%s, %s: positive recall %.2f%% "
                  "unweighted, %.2f%% balanced (want 10 points more)",
                  algos[i].name, hog_loss_name(o.loss), ra, rb);
        hog_model_free(a);
        hog_model_free(b);
    }
    free(w);
    hog_data_free(d);
}

/* ---- bad inputs --------------------------------------------------------- */

static void assert_refused(const hog_data *d, const hog_train_opts *o,
                           hog_status want, const char *says)
{
    hog_err err = { { 0 } };
    hog_status s = train_err(d, o, &err);
    cr_assert_eq(s, want, "status %s (want %s): %s", hog_status_str(s),
                 hog_status_str(want), err.msg);
    cr_assert(strstr(err.msg, says), "the sentence '%s' lacks '%s'", err.msg,
              says);
}

Test(weights, bad_weights_are_refused_with_a_sentence)
{
    hog_data *d = binary(200, 20, 16, false), *reg = binary(200, 20, 16, true);
    hog_train_opts o;
    th_opts_init(&o);
    float *w = constant(d, 1.0f);
    o.row_weights = w;
    w[17] = -1.0f;
    assert_refused(d, &o, HOG_EINVAL, "training row 18 is -1");
    w[17] = NAN;
    assert_refused(d, &o, HOG_EINVAL, "finite numbers >= 0");
    w[17] = INFINITY;
    assert_refused(d, &o, HOG_EINVAL, "finite numbers >= 0");
    for (uint64_t i = 0; i < d->m.rows; i++)
        w[i] = 0.0f;
    assert_refused(d, &o, HOG_EINVAL, "every training row weighs 0");
    o.row_weights = NULL;

    const double lab[] = { 1, 3 }, val[] = { 2, 1 }, neg[] = { -2, 1 };
    const double zero[] = { 0, 0 }, both[] = { 1, -1 };
    o.class_weight_labels = lab;
    o.class_weight_values = val;
    o.n_class_weights = 2;
    assert_refused(d, &o, HOG_EINVAL, "names label 3, which no training row "
                   "has (the labels are");
    o.class_weight_values = neg;
    assert_refused(d, &o, HOG_EINVAL, "the class weight of label 1 is -2");
    o.class_weight_labels = both;
    o.class_weight_values = zero;
    assert_refused(d, &o, HOG_EINVAL, "every training row weighs 0 (the "
                   "weight of its class)");
    const double dup[] = { 1, 1 };
    o.class_weight_labels = dup;
    o.class_weight_values = val;
    assert_refused(d, &o, HOG_EINVAL, "label 1 is given two class weights");
    o.class_weight_labels = lab;
    o.class_weight_balanced = 1;
    assert_refused(d, &o, HOG_EINVAL, "either balanced or a list");
    o.n_class_weights = 0;
    o.loss = HOG_LOSS_SQUARED;
    assert_refused(reg, &o, HOG_EINVAL, "class weights need class labels");
    o.loss = HOG_LOSS_LOGISTIC;
    o.gpus = "all";
    assert_refused(d, &o, HOG_ENOTSUP, "the GPU trainer does not take row "
                   "or class weights");
    o.gpus = NULL;

    /* streamed training is refused before the file is opened */
    hog_model *m = NULL;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_train_stream("/nonexistent.hgb", NULL, &o, NULL, &m, &err),
                 HOG_ENOTSUP, "%s", err.msg);
    cr_assert(strstr(err.msg, "streamed training does not take row or class "
                              "weights"), "%s", err.msg);
    free(w);
    hog_data_free(d);
    hog_data_free(reg);
}

/* ---- the command -------------------------------------------------------- */

#define HT(...) th_run(out, sizeof out, "'%s' " __VA_ARGS__)

/* A weights file of n lines, line i being line(i). */
static void write_weights(const char *path, uint64_t n, const char *(*line)(
                                                           uint64_t))
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s", path);
    for (uint64_t i = 0; i < n; i++)
        fprintf(f, "%s\n", line(i));
    fclose(f);
}

static const char *one(uint64_t i) { return (void)i, "1"; }
static const char *two_every_3(uint64_t i) { return i % 3 ? " 1" : "2\r"; }

static double printed(const char *out, const char *key)
{
    const char *p = strstr(out, key);
    cr_assert(p, "'%s' not in:\n%s", key, out);
    return strtod(p + strlen(key), NULL);
}

Test(weights, command_end_to_end, .timeout = 120)
{
    char dir[512], out[16384];
    th_tmpdir(dir, sizeof dir);
    hog_data *d = binary(400, 25, 18, false), *dup = duplicated(d, 3);
    char data[700], dupf[700], w1[700], w2[700], json[700];
    snprintf(data, sizeof data, "%s/d.svm", dir);
    snprintf(dupf, sizeof dupf, "%s/dup.hgb", dir);
    snprintf(w1, sizeof w1, "%s/ones.txt", dir);
    snprintf(w2, sizeof w2, "%s/twos.txt", dir);
    snprintf(json, sizeof json, "%s/r.json", dir);
    hog_err err = { { 0 } };
    cr_assert_eq(hog_data_save_hgb(d, data, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_data_save_hgb(dup, dupf, &err), HOG_OK, "%s", err.msg);
    write_weights(w1, d->m.rows, one);
    write_weights(w2, d->m.rows, two_every_3);
    const char *bin = th_bin();

    /* a file of ones, and every label at 1: the unweighted model's bytes */
    cr_assert_eq(HT("train '%s' -q -o '%s/plain.hgm'", bin, data, dir), 0,
                 "%s", out);
    cr_assert_eq(HT("train '%s' -q --weights '%s' -o '%s/ones.hgm'", bin,
                    data, w1, dir), 0, "%s", out);
    cr_assert_eq(HT("train '%s' -q --class-weight 1:1,-1:1 -o '%s/cw.hgm'",
                    bin, data, dir), 0, "%s", out);
    cr_assert_eq(th_run(out, sizeof out, "cmp '%s/plain.hgm' '%s/ones.hgm' && "
                        "cmp '%s/plain.hgm' '%s/cw.hgm'", dir, dir, dir, dir),
                 0, "%s", out);

    /* weights and class weights; the report names them */
    cr_assert_eq(HT("train '%s' -q --algo dcd --loss hinge --l2 0.004 "
                    "--weights '%s' --class-weight balanced --json '%s' "
                    "-o '%s/w.hgm'", bin, data, w2, json, dir), 0, "%s", out);
    size_t len;
    char *j = th_slurp(json, &len);
    char want[900];
    snprintf(want, sizeof want, "\"weights\": \"%s\"", w2);
    cr_assert(strstr(j, want), "no %s in %s", want, j);
    cr_assert(strstr(j, "\"class_weight\": \"balanced\""), "%s", j);
    cr_assert(strstr(j, "\"class_weights\": [") && strstr(j, "\"label\": -1"),
              "%s", j);
    free(j);

    /* the objective of a model: the weighted rows against the duplicated
     * rows at one C, and the one train reports */
    cr_assert_eq(HT("train '%s' -q --weights '%s' --json '%s' -o "
                    "'%s/m.hgm'", bin, data, w2, json, dir), 0, "%s", out);
    cr_assert_eq(HT("objective '%s/m.hgm' '%s' --weights '%s' --C 2", bin,
                    dir, data, w2), 0, "%s", out);
    double a = printed(out, "liblinear_objective ");
    cr_assert_eq(HT("objective '%s/m.hgm' '%s' --C 2", bin, dir, dupf), 0,
                 "%s", out);
    double b = printed(out, "liblinear_objective ");
    cr_assert(fabs(a - b) <= 1e-10 * fabs(b), "%.12g %.12g", a, b);
    cr_assert_eq(HT("objective '%s/m.hgm' '%s' --weights '%s'", bin, dir,
                    data, w2), 0, "%s", out);
    double F = printed(out, "objective ");
    j = th_slurp(json, &len);
    const char *last = NULL;
    for (const char *p = j; (p = strstr(p, "\"objective\": ")); p++)
        last = p;
    cr_assert(last, "%s", j);
    double G = strtod(last + strlen("\"objective\": "), NULL);
    cr_assert(fabs(F - G) <= 1e-9 * fabs(G), "objective %.12g, train's %.12g",
              F, G);
    free(j);

    hog_data_free(d);
    hog_data_free(dup);
}

Test(weights, command_bad_weights_are_named, .timeout = 60)
{
    char dir[512], out[8192];
    th_tmpdir(dir, sizeof dir);
    hog_data *d = binary(50, 10, 19, false);
    char data[700];
    snprintf(data, sizeof data, "%s/d.hgb", dir);
    hog_err err = { { 0 } };
    cr_assert_eq(hog_data_save_hgb(d, data, &err), HOG_OK, "%s", err.msg);
    const char *bin = th_bin();
    const char *short_w = th_write(dir, "short.txt", "1\n1\n1\n", 6);
    cr_assert_eq(HT("train '%s' -q --weights '%s'", bin, data, short_w), 1);
    cr_assert(strstr(out, "short.txt has 3 weights (one per line) but the "
                          "training data has 50 rows"), "%s", out);
    char text[8192] = "";
    for (int i = 0; i < 50; i++)
        strcat(text, i == 6 ? "-0.5\n" : i == 9 ? "x\n" : "1\n");
    const char *neg = th_write(dir, "neg.txt", text, strlen(text));
    cr_assert_eq(HT("train '%s' -q --weights '%s'", bin, data, neg), 1);
    cr_assert(strstr(out, "neg.txt:7: '-0.5' is a negative weight"), "%s",
              out);
    text[0] = 0;
    for (int i = 0; i < 50; i++)
        strcat(text, i == 2 ? "\n" : "1\n");
    const char *gap = th_write(dir, "gap.txt", text, strlen(text));
    cr_assert_eq(HT("train '%s' -q --weights '%s'", bin, data, gap), 1);
    cr_assert(strstr(out, "gap.txt:3: '' is an empty line"), "%s", out);
    text[0] = 0;
    for (int i = 0; i < 50; i++)
        strcat(text, "0\n");
    const char *zero = th_write(dir, "zero.txt", text, strlen(text));
    cr_assert_eq(HT("train '%s' -q --weights '%s'", bin, data, zero), 1);
    cr_assert(strstr(out, "every training row weighs 0"), "%s", out);
    /* a device without end, or a binary file: refused at the first NUL,
     * not read until memory runs out; so is a line no weight needs */
    cr_assert_eq(HT("train '%s' -q --weights /dev/zero", bin, data), 1);
    cr_assert(strstr(out, "/dev/zero:1: a NUL byte: not a weights file"),
              "%s", out);
    const char *nul = th_write(dir, "nul.txt", "1\n1\n2\0\n", 7);
    cr_assert_eq(HT("train '%s' -q --weights '%s'", bin, data, nul), 1);
    cr_assert(strstr(out, "nul.txt:3: a NUL byte"), "%s", out);
    memset(text, ' ', 5000);
    strcpy(text + 5000, "1\n");
    const char *wide = th_write(dir, "wide.txt", text, strlen(text));
    cr_assert_eq(HT("train '%s' -q --weights '%s'", bin, data, wide), 1);
    cr_assert(strstr(out, "wide.txt:1: a line longer than 4095 bytes"), "%s",
              out);
    cr_assert_eq(HT("train '%s' -q --class-weight 7:2", bin, data), 1);
    cr_assert(strstr(out, "names label 7, which no training row has"), "%s",
              out);
    cr_assert_eq(HT("train '%s' -q --class-weight 1:-2", bin, data), 2);
    cr_assert(strstr(out, "the weight of label 1 is -2"), "%s", out);
    cr_assert_eq(HT("train '%s' -q --class-weight 1=2", bin, data), 2);
    cr_assert(strstr(out, "is not balanced or LABEL:WEIGHT"), "%s", out);
    /* an option conflict (src/train/conflicts.c): a usage error, before
     * the file is read */
    cr_assert_eq(HT("train '%s' -q --stream --class-weight balanced", bin,
                    data), 2);
    cr_assert(strstr(out, "streamed training does not take row or class "
                          "weights"), "%s", out);
    hog_data_free(d);
}

/* ---- checkpoints -------------------------------------------------------- */

Test(weights, checkpoint_refuses_other_weights, .timeout = 60)
{
    char dir[512], out[8192];
    th_tmpdir(dir, sizeof dir);
    hog_data *d = binary(300, 20, 20, false);
    char data[700], ck[700];
    snprintf(data, sizeof data, "%s/d.hgb", dir);
    snprintf(ck, sizeof ck, "%s/run.ck", dir);
    hog_err err = { { 0 } };
    cr_assert_eq(hog_data_save_hgb(d, data, &err), HOG_OK, "%s", err.msg);
    char w1[700], w2[700];
    snprintf(w1, sizeof w1, "%s/a.txt", dir);
    snprintf(w2, sizeof w2, "%s/b.txt", dir);
    write_weights(w1, d->m.rows, two_every_3);
    write_weights(w2, d->m.rows, one);
    const char *bin = th_bin();
    cr_assert_eq(HT("train '%s' -q --epochs 4 --weights '%s' -o '%s/full.hgm'",
                    bin, data, w1, dir), 0, "%s", out);
    cr_assert_eq(HT("train '%s' -q --epochs 2 --weights '%s' --checkpoint "
                    "'%s'", bin, data, w1, ck), 0, "%s", out);
    cr_assert_eq(HT("train '%s' -q --epochs 4 --weights '%s' --resume '%s'",
                    bin, data, w2, ck), 1);
    cr_assert(strstr(out, "written with other row weights"), "%s", out);
    cr_assert_eq(HT("train '%s' -q --epochs 4 --resume '%s'", bin, data, ck),
                 1);
    cr_assert(strstr(out, "written with row or class weights and this run "
                          "has none"), "%s", out);
    cr_assert_eq(HT("info '%s'", bin, ck), 0, "%s", out);
    cr_assert(strstr(out, "row weights") && strstr(out, "yes (CRC32C"), "%s",
              out);
    /* the same weights: the uninterrupted run, bit for bit */
    cr_assert_eq(HT("train '%s' -q --epochs 4 --weights '%s' --resume '%s' "
                    "-o '%s/resumed.hgm'", bin, data, w1, ck, dir), 0, "%s",
                 out);
    cr_assert_eq(th_run(out, sizeof out, "cmp '%s/full.hgm' '%s/resumed.hgm'",
                        dir, dir), 0, "%s", out);
    hog_data_free(d);
}
