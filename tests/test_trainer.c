/*
 * The trainer kept between pieces (hog_trainer; docs/TRAINING.md,
 * "Continuing training"): the pieces of a real data set through one
 * trainer equal one unshuffled epoch of hog_train over them bit for bit
 * (FTRL and AdaGrad, binary and one-vs-rest), and equal hog_train per
 * piece from the last piece's model and state (what partial_fit ran
 * before) where regularization closes a segment at each piece's end; a
 * piece takes no pass over the model on the default path, and the model
 * handed out with its state continues the run in a new trainer exactly.
 */
#include <criterion/criterion.h>

#include "helpers.h"
#include "core/core.h" /* hog_model_len */

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rows [a, b) of f as a data set of f's features: the arrays borrowed
 * from f but the offsets, which live in the data set's own allocation
 * (free_rows frees both). */
struct rows {
    hog_data *d;
    uint64_t *off;
};

static void free_rows(struct rows r)
{
    hog_data_free(r.d);
    free(r.off);
}

static struct rows rows_at(const hog_data *f, uint64_t a, uint64_t b)
{
    const uint64_t *off;
    const uint32_t *idx;
    const float *val, *y;
    hog_data_csr(f, &off, &idx, &val, &y);
    uint64_t *o = malloc((b - a + 1) * sizeof *o);
    cr_assert(o);
    for (uint64_t i = a; i <= b; i++)
        o[i - a] = off[i] - off[a];
    hog_csr_arrays arr = {
        .size = sizeof arr, .rows = b - a, .cols = hog_data_features(f),
        .indptr = o, .indptr_type = HOG_DTYPE_UINT64,
        .indices = idx + off[a], .indices_type = HOG_DTYPE_UINT32,
        .values = val + off[a], .values_type = HOG_DTYPE_FLOAT32,
        .labels = y + a, .labels_type = HOG_DTYPE_FLOAT32,
    };
    hog_data *d;
    hog_err e;
    cr_assert_eq(hog_data_from_csr(&arr, 1, &d, &e), HOG_OK, "%s", e.msg);
    return (struct rows){ d, o };
}

/* The pieces [from, to) of d, `size` rows each, through t. */
static void feed(hog_trainer *t, const hog_data *d, uint64_t from,
                 uint64_t to, uint64_t size)
{
    for (uint64_t a = from; a < to; a += size) {
        uint64_t b = a + size < to ? a + size : to;
        struct rows p = rows_at(d, a, b);
        hog_err e;
        cr_assert_eq(hog_trainer_train(t, p.d, NULL, &e), HOG_OK, "%s",
                     e.msg);
        free_rows(p);
    }
}

static hog_trainer *trainer_of(const hog_train_opts *o)
{
    hog_trainer *t;
    hog_err e;
    cr_assert_eq(hog_trainer_create(o, &t, &e), HOG_OK, "%s", e.msg);
    return t;
}

static hog_model *model_of(hog_trainer *t, int with_state)
{
    hog_model *m;
    hog_err e;
    cr_assert_eq(hog_trainer_model(t, with_state, &m, &e), HOG_OK, "%s",
                 e.msg);
    return m;
}

static void same_bits(const hog_model *a, const hog_model *b,
                      const char *what)
{
    uint64_t n = hog_model_len(a);
    cr_assert_eq(n, hog_model_len(b), "%s", what);
    const float *wa = hog_model_weights(a), *wb = hog_model_weights(b);
    for (uint64_t j = 0; j < n; j++)
        cr_assert(memcmp(&wa[j], &wb[j], sizeof wa[j]) == 0,
                  "%s: weight %llu is %.9g, the reference's %.9g", what,
                  (unsigned long long)j, wb[j], wa[j]);
    hog_model_state sa = { .size = sizeof sa }, sb = { .size = sizeof sb };
    if (!hog_model_get_state(a, &sa) || !hog_model_get_state(b, &sb))
        return;
    cr_assert_eq(sa.steps, sb.steps, "%s", what);
    cr_assert(!sa.a == !sb.a && !sa.b == !sb.b, "%s", what);
    cr_assert(!sa.a || memcmp(sa.a, sb.a, n * sizeof *sa.a) == 0,
              "%s: the state's first sums differ", what);
    cr_assert(!sa.b || memcmp(sa.b, sb.b, n * sizeof *sa.b) == 0,
              "%s: the state's second sums differ", what);
}

/* o's one unshuffled epoch over d (its state kept) against the trainer's
 * pieces of `size` rows, and against a trainer cut after the first third
 * whose model and state start a second trainer for the rest (a pickled
 * estimator's partial_fit). */
static void pieces_equal_one_epoch(const hog_data *d, hog_train_opts o,
                                   uint64_t size, const char *what)
{
    uint64_t n = hog_data_rows(d);
    o.epochs = 1;
    o.shuffle = 0;
    o.save_state = 1;
    hog_model *full = th_train_ok(d, &o);

    hog_trainer *t = trainer_of(&o);
    feed(t, d, 0, n, size);
    cr_assert_eq(hog_trainer_pieces(t), (n + size - 1) / size);
    hog_model *m = model_of(t, 1);
    same_bits(full, m, what);
    hog_model_state s = { .size = sizeof s };
    cr_assert(hog_model_get_state(m, &s), "%s", what);
    cr_assert_eq(s.epochs, hog_trainer_pieces(t), "%s: an epoch a piece",
                 what);
    cr_assert_eq(s.steps, n);
    /* asked twice, the same model: handing it out changes nothing */
    hog_model *again = model_of(t, 0);
    same_bits(full, again, what);
    hog_model_free(again);

    uint64_t cut = (n / 3 + size - 1) / size * size;
    hog_trainer *first = trainer_of(&o);
    feed(first, d, 0, cut, size);
    hog_model *mid = model_of(first, 1);
    hog_trainer_free(first);
    hog_train_opts w = o;
    w.warm_start = mid;
    hog_trainer *rest = trainer_of(&w);
    hog_model_free(mid); /* the trainer keeps its own copy */
    feed(rest, d, cut, n, size);
    hog_model *resumed = model_of(rest, 1);
    same_bits(full, resumed, what);
    hog_model_free(resumed);
    hog_trainer_free(rest);
    hog_model_free(m);
    hog_trainer_free(t);
    hog_model_free(full);
}

static hog_train_opts opts_of(hog_schedule sch, double l1, double l2)
{
    hog_train_opts o;
    th_opts_init(&o);
    o.schedule = sch;
    o.l1 = l1;
    o.l2 = l2;
    o.threads = 1;
    return o;
}

Test(trainer, pieces_of_a9a_equal_one_unshuffled_epoch, .timeout = 300)
{
    TH_DATA_OR_SKIP(path, "a9a");
    hog_data *d = th_load(path);
    pieces_equal_one_epoch(d, opts_of(HOG_SCHED_FTRL, 1e-6, 4e-6), 3000,
                           "ftrl");
    pieces_equal_one_epoch(d, opts_of(HOG_SCHED_ADAGRAD, 0, 0), 3000,
                           "adagrad");
    hog_data_free(d);
}

/* One-vs-rest of news20's 20 classes (its first 3000 rows), the classes
 * given in one order to both. */
Test(trainer, pieces_of_k_classes_equal_one_unshuffled_epoch, .timeout = 300)
{
    TH_HEAVY_OR_SKIP(); /* 20 classes of news20; a9a's pieces cover the code */
    TH_DATA_OR_SKIP(path, "news20.train.svm");
    hog_data *all = th_load(path);
    struct rows r = rows_at(all, 0, 3000);
    const hog_data *d = r.d;
    double classes[20];
    for (int c = 0; c < 20; c++)
        classes[c] = c + 1;
    hog_train_opts o = opts_of(HOG_SCHED_FTRL, 0, 4e-6);
    o.classes = classes;
    o.n_classes = 20;
    pieces_equal_one_epoch(d, o, 700, "ftrl, 20 classes");
    o = opts_of(HOG_SCHED_ADAGRAD, 0, 0);
    o.classes = classes;
    o.n_classes = 20;
    pieces_equal_one_epoch(d, o, 700, "adagrad, 20 classes");
    free_rows(r);
    hog_data_free(all);
}

/* The steps hog_train per piece took (warm-started from the last piece's
 * model with its state, as partial_fit did): equal where a segment of
 * the lazy regularization closes at every piece's end (AdaGrad with l2,
 * inverse scaling with l1, constant with l2). */
Test(trainer, pieces_equal_hog_train_per_piece, .timeout = 300)
{
    TH_DATA_OR_SKIP(path, "a9a");
    hog_data *d = th_load(path);
    const uint64_t n = hog_data_rows(d), size = 5000;
    hog_train_opts os[] = { opts_of(HOG_SCHED_ADAGRAD, 0, 1e-5),
                            opts_of(HOG_SCHED_INVSCALING, 1e-6, 1e-5),
                            opts_of(HOG_SCHED_CONSTANT, 0, 1e-5) };
    for (size_t k = 0; k < sizeof os / sizeof os[0]; k++) {
        hog_train_opts o = os[k];
        o.epochs = 1;
        o.shuffle = 0;
        o.save_state = 1;
        hog_model *last = NULL;
        for (uint64_t a = 0; a < n; a += size) {
            struct rows p = rows_at(d, a, a + size < n ? a + size : n);
            o.warm_start = last;
            hog_model *m = th_train_ok(p.d, &o);
            hog_model_free(last);
            last = m;
            free_rows(p);
        }
        o.warm_start = NULL;
        hog_trainer *t = trainer_of(&o);
        feed(t, d, 0, n, size);
        hog_model *m = model_of(t, 1);
        same_bits(last, m, "per piece");
        /* each piece's segment end caught every weight up: a pass */
        cr_assert_eq(hog_trainer_model_passes(t), 1 + hog_trainer_pieces(t));
        hog_model_free(m);
        hog_model_free(last);
        hog_trainer_free(t);
    }
    hog_data_free(d);
}

/* The default path takes no pass over the model after the first piece's
 * set-up, however many pieces; hog_train per piece (softmax) one each. */
Test(trainer, a_piece_takes_no_pass_over_the_model, .timeout = 300)
{
    TH_DATA_OR_SKIP(path, "news20.binary.train.svm");
    hog_data *d = th_load(path);
    hog_train_opts o;
    hog_train_opts_init(&o); /* the defaults: FTRL */
    hog_trainer *t = trainer_of(&o);
    cr_assert_eq(hog_trainer_model_passes(t), 0);
    feed(t, d, 0, 5000, 100);
    cr_assert_eq(hog_trainer_pieces(t), 50);
    cr_assert_eq(hog_trainer_model_passes(t), 1, "%llu passes",
                 (unsigned long long)hog_trainer_model_passes(t));
    hog_model *m = model_of(t, 1);
    cr_assert_eq(hog_trainer_model_passes(t), 1);
    hog_model_state s = { .size = sizeof s };
    cr_assert(hog_model_get_state(m, &s));
    cr_assert_eq(s.schedule, HOG_SCHED_FTRL);
    cr_assert_eq(s.steps, 5000);
    hog_model_free(m);
    hog_trainer_free(t);
    hog_data_free(d);

    TH_DATA_OR_SKIP(k_path, "abalone_scale");
    hog_data *k = th_load(k_path);
    hog_train_opts_init(&o);
    o.multiclass = HOG_MULTICLASS_SOFTMAX;
    o.schedule = HOG_SCHED_ADAGRAD;
    /* its labels, each once: the classes of every piece's run */
    const uint64_t *off;
    const uint32_t *idx;
    const float *val, *y;
    hog_data_csr(k, &off, &idx, &val, &y);
    double classes[64];
    unsigned nk = 0;
    for (uint64_t i = 0; i < hog_data_rows(k); i++) {
        unsigned c = 0;
        while (c < nk && classes[c] != y[i])
            c++;
        if (c == nk) {
            cr_assert_lt(nk, 64);
            classes[nk++] = y[i];
        }
    }
    o.classes = classes;
    o.n_classes = nk;
    t = trainer_of(&o);
    feed(t, k, 0, 2000, 500);
    cr_assert_eq(hog_trainer_model_passes(t), 4);
    hog_trainer_free(t);
    hog_data_free(k);
}

/* What a trainer refuses: options it cannot keep, a piece of other
 * features or labels (the trainer left as it was), a model before the
 * first piece. */
Test(trainer, refusals, .timeout = 120)
{
    TH_DATA_OR_SKIP(path, "a9a");
    hog_data *d = th_load(path);
    hog_train_opts o;
    hog_train_opts_init(&o);
    float rw[2] = { 1, 1 };
    o.row_weights = rw;
    hog_trainer *t;
    hog_err e;
    cr_assert_eq(hog_trainer_create(&o, &t, &e), HOG_EINVAL);
    cr_assert(strstr(e.msg, "row weights"), "%s", e.msg);
    o.row_weights = NULL;
    o.checkpoint = "x.ckpt";
    cr_assert_eq(hog_trainer_create(&o, &t, &e), HOG_EINVAL);
    cr_assert(strstr(e.msg, "checkpoint"), "%s", e.msg);
    o.checkpoint = NULL;
    t = trainer_of(&o);
    hog_model *m;
    cr_assert_eq(hog_trainer_model(t, 1, &m, &e), HOG_EINVAL);
    cr_assert(strstr(e.msg, "first piece"), "%s", e.msg);
    feed(t, d, 0, 1000, 1000);
    hog_data *narrow = th_load(th_data("heart_scale"));
    cr_assert_eq(hog_trainer_train(t, narrow, NULL, &e), HOG_EINVAL);
    cr_assert(strstr(e.msg, "features"), "%s", e.msg);
    hog_data_free(narrow);
    /* one row of the negative class only */
    uint64_t i = 0;
    const uint64_t *off;
    const uint32_t *idx;
    const float *val, *y;
    hog_data_csr(d, &off, &idx, &val, &y);
    while (y[i] > 0)
        i++;
    struct rows one = rows_at(d, i, i + 1);
    cr_assert_eq(hog_trainer_train(t, one.d, NULL, &e), HOG_EINVAL);
    free_rows(one);
    cr_assert_eq(hog_trainer_pieces(t), 1);
    feed(t, d, 1000, 2000, 1000);
    cr_assert_eq(hog_trainer_pieces(t), 2);
    hog_trainer_free(t);
    hog_data_free(d);
}
