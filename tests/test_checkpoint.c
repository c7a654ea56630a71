/*
 * Checkpoints and exact resume (docs/RELIABILITY.md), in the library.
 *
 * A run checkpointed at random rows and epochs, stopped, and resumed,
 * gives the uninterrupted run's weights bit for bit, for each schedule and
 * regularizer (including one whose lazy-regularization segments end inside
 * epochs), and Cyclades' at any thread count; a checkpoint file is
 * untrusted input (every truncation and every flipped byte refused); a
 * resume with other options or data is refused with the difference named;
 * the cancel flag stops every algorithm. The command's signals, kills and
 * full disks are in test_checkpoint_cli.c.
 */
#include <criterion/criterion.h>

#include "helpers.h"
#include "io/io.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- library level ---------------------------------------------------------- */

static hog_data *gen_data(const char *dir, uint64_t rows, bool regression)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/gen%s.svm", dir, regression ? "r" : "");
    struct hog_gen_opts g;
    hog_gen_opts_init(&g);
    g.rows = rows;
    g.features = 400;
    g.nnz_per_row = 8;
    g.regression = regression;
    g.threads = 1;
    g.seed = 7;
    FILE *f = fopen(path, "w");
    cr_assert(f);
    hog_err err;
    cr_assert_eq(hog_gen_write(&g, f, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(fclose(f), 0);
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    lo.threads = 1;
    hog_data *d;
    cr_assert_eq(hog_data_load(path, &lo, &d, &err), HOG_OK, "%s", err.msg);
    return d;
}

struct config {
    const char *name;
    hog_loss loss;
    hog_schedule sched;
    double eta, l1, l2, bias;
};

static const struct config configs[] = {
    { "logistic invscaling l2", HOG_LOSS_LOGISTIC, HOG_SCHED_INVSCALING, 0.5, 0, 1e-5, 1 },
    { "hinge invscaling l1+l2", HOG_LOSS_HINGE, HOG_SCHED_INVSCALING, 0.1, 1e-4, 1e-4, 1 },
    { "logistic adagrad l1+l2", HOG_LOSS_LOGISTIC, HOG_SCHED_ADAGRAD, 0.5, 1e-4, 1e-3, 0 },
    /* eta l2 = 0.45: the shrink product underflows after ~800 steps, so
     * segments end inside each epoch of 2500 rows */
    { "logistic constant, short segments", HOG_LOSS_LOGISTIC, HOG_SCHED_CONSTANT, 0.5, 1e-5, 0.9, 1 },
    { "sqhinge no regularization", HOG_LOSS_SQHINGE, HOG_SCHED_CONSTANT, 0.05, 0, 0, 1 },
    { "squared constant l1", HOG_LOSS_SQUARED, HOG_SCHED_CONSTANT, 0.01, 1e-3, 0, 1 },
    { "logistic ftrl l1+l2", HOG_LOSS_LOGISTIC, HOG_SCHED_FTRL, 0.3, 1e-4, 1e-4, 1 },
    { "squared ftrl l2", HOG_LOSS_SQUARED, HOG_SCHED_FTRL, 0.5, 0, 1e-3, 0 },
};

static void opts_for(const struct config *c, unsigned epochs, hog_train_opts *o)
{
    th_opts_init(o);
    o->loss = c->loss;
    o->schedule = c->sched;
    o->eta = c->eta;
    o->l1 = c->l1;
    o->l2 = c->l2;
    o->bias = c->bias;
    o->epochs = epochs;
    o->seed = 42;
    o->threads = 1;
}

static hog_model *train_or_die(const hog_data *d, const hog_train_opts *o)
{
    hog_model *m;
    hog_err err;
    hog_status st = hog_train(d, NULL, o, NULL, &m, &err);
    cr_assert_eq(st, HOG_OK, "%s", err.msg);
    return m;
}

Test(checkpoint, stopped_anywhere_and_resumed_equals_uninterrupted,
     .timeout = 120)
{
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    hog_data *cls = gen_data(dir, 2500, false);
    hog_data *reg = gen_data(dir, 2500, true);
    char ck[1200];
    snprintf(ck, sizeof ck, "%s/ck", dir);
    unsigned seed = 12345;
    for (size_t k = 0; k < sizeof configs / sizeof configs[0]; k++) {
        const struct config *c = &configs[k];
        const hog_data *d = c->loss == HOG_LOSS_SQUARED ? reg : cls;
        hog_train_opts o;
        opts_for(c, 3, &o);
        hog_model *ref = train_or_die(d, &o);
        for (int trial = 0; trial < 6; trial++) {
            /* checkpoint every R rows (and maybe every epoch), stop after
             * E1 epochs: the last checkpoint lies anywhere */
            uint64_t R = 1 + (uint64_t)rand_r(&seed) % 6000;
            unsigned E1 = 1 + (unsigned)rand_r(&seed) % 3;
            unlink(ck);
            hog_train_opts a;
            opts_for(c, E1, &a);
            a.checkpoint = ck;
            a.checkpoint_rows = R;
            a.checkpoint_epochs = (unsigned)(rand_r(&seed) % 2);
            hog_model *part = train_or_die(d, &a);
            if (E1 == 3) /* checkpoints do not change the run */
                th_assert_same_model(ref, part, c->name);
            hog_model_free(part);
            if (!th_exists(ck)) { /* none due in E1 epochs */
                cr_assert(R > E1 * 2500 && !a.checkpoint_epochs);
                continue;
            }
            hog_train_opts b;
            opts_for(c, 3, &b);
            b.resume = ck;
            hog_model *res = train_or_die(d, &b);
            char what[256];
            snprintf(what, sizeof what, "%s, every %llu rows, stopped after "
                     "epoch %u", c->name, (unsigned long long)R, E1);
            th_assert_same_model(ref, res, what);
            hog_model_free(res);
        }
        hog_model_free(ref);
    }
    hog_data_free(cls);
    hog_data_free(reg);
}

Test(checkpoint, resume_with_other_options_or_data_is_refused)
{
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    hog_data *d = gen_data(dir, 600, false);
    hog_data *other = gen_data(dir, 601, false);
    char ck[1200];
    snprintf(ck, sizeof ck, "%s/ck", dir);
    hog_train_opts o;
    opts_for(&configs[0], 1, &o);
    o.checkpoint = ck;
    hog_model_free(train_or_die(d, &o));

    hog_train_opts b;
    opts_for(&configs[0], 2, &b);
    b.resume = ck;
    b.l2 = 2e-5;
    hog_model *m;
    hog_err err;
    cr_assert_eq(hog_train(d, NULL, &b, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "l2"), "message: %s", err.msg);
    b.l2 = o.l2;
    b.seed = 43;
    cr_assert_eq(hog_train(d, NULL, &b, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "seed"), "message: %s", err.msg);
    b.seed = o.seed;
    cr_assert_eq(hog_train(other, NULL, &b, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "rows"), "message: %s", err.msg);
    b.epochs = 1;
    hog_model_free(train_or_die(d, &b)); /* resuming a finished run: done */
    b.resume = "/nonexistent/ck";
    cr_assert_eq(hog_train(d, NULL, &b, NULL, &m, &err), HOG_EIO);
    cr_assert(strstr(err.msg, "/nonexistent/ck"), "message: %s", err.msg);
    hog_data_free(d);
    hog_data_free(other);
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    unsigned char *b = malloc(*len);
    cr_assert(fread(b, 1, *len, f) == *len);
    fclose(f);
    return b;
}

static void spit(const char *path, const void *b, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    cr_assert(fwrite(b, 1, len, f) == len);
    fclose(f);
}

/* A mid-segment AdaGrad checkpoint holds all four arrays. */
static void small_checkpoint(const char *dir, char *ck, size_t cklen)
{
    char text[4096];
    size_t n = 0;
    for (int i = 0; i < 50; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%d %d:1 %d:0.5\n",
                              i % 3 ? 1 : -1, 1 + i % 10, 11 + i % 2);
    const char *path = th_write(dir, "small.svm", text, n);
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    lo.threads = 1;
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_data_load(path, &lo, &d, &err), HOG_OK, "%s", err.msg);
    snprintf(ck, cklen, "%s/small.ck", dir);
    hog_train_opts o;
    opts_for(&configs[2], 1, &o);
    o.checkpoint = ck;
    o.checkpoint_rows = 37;
    hog_model_free(train_or_die(d, &o));
    hog_data_free(d);
}

Test(checkpoint, every_truncation_and_flipped_byte_is_refused, .timeout = 60)
{
    char dir[1024], ck[1200], bad[1300];
    cr_assert(th_tmpdir(dir, sizeof dir));
    small_checkpoint(dir, ck, sizeof ck);
    snprintf(bad, sizeof bad, "%s/bad.ck", dir);
    size_t len;
    unsigned char *b = slurp(ck, &len);
    struct hog_ckpt c;
    hog_err err;
    cr_assert_eq(hog_ckpt_load(ck, &c, &err), HOG_OK, "%s", err.msg);
    cr_assert(c.st.w && c.st.w_lazy && c.st.adagrad_g2 && c.st.stamp,
              "the small checkpoint should be mid-segment with AdaGrad");
    cr_assert_eq(len, 256 + 4 * 4 * c.st.n_weights);
    hog_ckpt_free(&c);
    for (size_t cut = 0; cut < len; cut++) {
        spit(bad, b, cut);
        hog_status st = hog_ckpt_load(bad, &c, &err);
        cr_assert(st == HOG_ECORRUPT || st == HOG_EFORMAT,
                  "truncated at %zu: status %d", cut, (int)st);
    }
    for (size_t i = 0; i < len; i++) {
        b[i] ^= 0x10;
        spit(bad, b, len);
        hog_status st = hog_ckpt_load(bad, &c, &err);
        cr_assert(st == HOG_ECORRUPT || st == HOG_EFORMAT,
                  "byte %zu flipped: status %d", i, (int)st);
        b[i] ^= 0x10;
    }
    /* a newer version is refused with its number, before its CRC */
    uint32_t v = 9;
    memcpy(b + 8, &v, 4);
    spit(bad, b, len);
    cr_assert_eq(hog_ckpt_load(bad, &c, &err), HOG_EFORMAT);
    cr_assert(strstr(err.msg, "version 9 is newer"), "message: %s", err.msg);
    free(b);
}

Test(checkpoint, huge_declared_size_is_refused_before_allocating)
{
    char dir[1024], ck[1200];
    cr_assert(th_tmpdir(dir, sizeof dir));
    small_checkpoint(dir, ck, sizeof ck);
    size_t len;
    unsigned char *b = slurp(ck, &len);
    uint64_t nw = UINT64_C(1) << 61; /* 2^61 weights: would be 8 EiB */
    memcpy(b + 112, &nw, 8);
    uint32_t crc = hog_crc32c(0, b, 252); /* a consistent header */
    memcpy(b + 252, &crc, 4);
    spit(ck, b, len);
    struct hog_ckpt c;
    hog_err err;
    cr_assert_eq(hog_ckpt_load(ck, &c, &err), HOG_ECORRUPT);
    cr_assert(strstr(err.msg, "weights"), "message: %s", err.msg);
    free(b);
}

/* ---- the cancel flag, algorithm by algorithm ------------------------------------ */

/* A cancel flag raised before training. The trainers that write
 * checkpoints stop at their first block (the serial trainer's rows, a
 * Cyclades batch, a Hogwild! epoch), write the checkpoint and return
 * HOG_EINTR with a sentence naming it; resumed and cancelled again
 * (`rounds` times), then resumed with the flag down, they equal the
 * uninterrupted run bit for bit; without a checkpoint the sentence says
 * none was asked for. scd and dcd write no checkpoints: they stop after
 * the current epoch with HOG_EINTR and a sentence. */
struct cancel_case {
    const char *name;
    hog_algo algo;
    struct config c;
    unsigned epochs, threads;
    uint64_t hot_features, checkpoint_rows;
    int rounds;          /* 0: no checkpoints (scd, dcd) */
    bool per_batch;      /* each round's checkpoint one batch further inside
                          * epoch 1; resumed at 1, 2, 3 threads (Cyclades) */
    bool threaded_resume; /* a resume at 2 threads ends too, not bit for bit:
                           * the threads race (Hogwild!) */
};

static const struct cancel_case cancel_cases[] = {
    { "serial", HOG_ALGO_SERIAL,
      { "hinge invscaling l1+l2", HOG_LOSS_HINGE, HOG_SCHED_INVSCALING, 0.1, 1e-4, 1e-4, 1 },
      2, 1, 0, 1000, 3, false, false },
    { "cyclades", HOG_ALGO_CYCLADES,
      { "logistic adagrad l1+l2", HOG_LOSS_LOGISTIC, HOG_SCHED_ADAGRAD, 0.5, 1e-4, 1e-3, 0 },
      2, 2, 0, 0, 3, true, false },
    { "hogwild", HOG_ALGO_HOGWILD,
      { "logistic adagrad l1", HOG_LOSS_LOGISTIC, HOG_SCHED_ADAGRAD, 0.1, 1e-6, 1e-5, 1 },
      4, 1, 0, 0, 1, false, true },
    { "hogwild, hot replicas", HOG_ALGO_HOGWILD, /* AdaGrad sums in the state */
      { "logistic adagrad l1", HOG_LOSS_LOGISTIC, HOG_SCHED_ADAGRAD, 0.1, 1e-6, 1e-5, 1 },
      4, 1, HOG_HOT_AUTO, 0, 1, false, true },
    { "scd", HOG_ALGO_SCD,
      { "logistic l1", HOG_LOSS_LOGISTIC, HOG_SCHED_CONSTANT, 0.5, 1e-3, 0, 1 },
      1000, 1, 0, 0, 0, false, false },
    { "scd, 2 threads", HOG_ALGO_SCD,
      { "logistic l1", HOG_LOSS_LOGISTIC, HOG_SCHED_CONSTANT, 0.5, 1e-3, 0, 1 },
      1000, 2, 0, 0, 0, false, false },
    { "dcd", HOG_ALGO_DCD,
      { "logistic l2", HOG_LOSS_LOGISTIC, HOG_SCHED_CONSTANT, 0.5, 0, 1e-3, 1 },
      1000, 1, 0, 0, 0, false, false },
    { "dcd, 2 threads", HOG_ALGO_DCD,
      { "logistic l2", HOG_LOSS_LOGISTIC, HOG_SCHED_CONSTANT, 0.5, 0, 1e-3, 1 },
      1000, 2, 0, 0, 0, false, false },
};

static void count_epoch(void *ctx, unsigned epoch, unsigned epochs,
                        uint64_t done, uint64_t total, const hog_epoch_stats *s)
{
    (void)epoch, (void)epochs, (void)done, (void)total;
    if (s)
        ++*(unsigned *)ctx;
}

static void cancel_without_checkpoints(const struct cancel_case *k,
                                       const hog_data *d, hog_train_opts o)
{
    volatile sig_atomic_t flag = 1;
    unsigned epochs_done = 0;
    hog_train_hooks h = { .size = sizeof h, .cancel = &flag,
                          .progress = count_epoch,
                          .progress_ctx = &epochs_done };
    hog_model *m = NULL;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_train(d, NULL, &o, &h, &m, &err), HOG_EINTR, "%s: %s",
                 k->name, err.msg);
    cr_assert_null(m);
    cr_assert_eq(epochs_done, 1, "%s: %u epochs ran", k->name, epochs_done);
    cr_assert(strstr(err.msg, "interrupted after epoch 1"), "%s: %s", k->name,
              err.msg);
}

static void cancel_with_checkpoints(const struct cancel_case *k,
                                    const hog_data *d, const hog_train_opts *o,
                                    const char *ck)
{
    hog_model *ref = train_or_die(d, o);
    unlink(ck);
    volatile sig_atomic_t flag = 1;
    hog_train_opts a = *o;
    a.checkpoint = ck;
    a.checkpoint_rows = k->checkpoint_rows;
    hog_train_hooks h = { .size = sizeof h, .cancel = &flag };
    hog_model *m = NULL;
    hog_err err = { { 0 } };
    uint64_t last = 0;
    for (int round = 0; round < k->rounds; round++) {
        cr_assert_eq(hog_train(d, NULL, &a, &h, &m, &err), HOG_EINTR, "%s: %s",
                     k->name, err.msg);
        cr_assert_null(m);
        cr_assert(strstr(err.msg, "interrupted") && strstr(err.msg, ck),
                  "%s: message: %s", k->name, err.msg);
        if (k->per_batch) {
            struct hog_ckpt kc;
            cr_assert_eq(hog_ckpt_load(ck, &kc, &err), HOG_OK, "%s", err.msg);
            cr_assert(kc.st.pos > last && kc.st.pos < d->m.rows,
                      "%s: one batch per round: at row %llu after %llu",
                      k->name, (unsigned long long)kc.st.pos,
                      (unsigned long long)last);
            last = kc.st.pos;
            hog_ckpt_free(&kc);
            a.threads = 1 + (unsigned)round; /* 1, 2, 3 */
        }
        a.resume = ck; /* the next round resumes and is cancelled again */
    }
    flag = 0;
    if (k->threaded_resume) { /* from the same checkpoint, not overwriting it */
        hog_train_opts t = a;
        t.checkpoint = NULL;
        t.threads = 2;
        t.oversubscribe = 1;
        hog_model_free(train_or_die(d, &t));
    }
    hog_model *res = train_or_die(d, &a);
    char what[256];
    snprintf(what, sizeof what, "%s cancelled %d times", k->name, k->rounds);
    th_assert_same_model(ref, res, what);
    hog_model_free(res);
    hog_model_free(ref);

    /* without a checkpoint: HOG_EINTR and a sentence that says so */
    hog_train_opts b = *o;
    flag = 1;
    cr_assert_eq(hog_train(d, NULL, &b, &h, &m, &err), HOG_EINTR, "%s", k->name);
    cr_assert_null(m);
    cr_assert(strstr(err.msg, "no checkpoint"), "%s: message: %s", k->name,
              err.msg);
}

Test(checkpoint, cancel_flag_stops_every_algorithm, .timeout = 60)
{
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    hog_data *d = gen_data(dir, 2500, false);
    char ck[1200];
    snprintf(ck, sizeof ck, "%s/ck", dir);
    for (size_t i = 0; i < sizeof cancel_cases / sizeof cancel_cases[0]; i++) {
        const struct cancel_case *k = &cancel_cases[i];
        hog_train_opts o;
        opts_for(&k->c, k->epochs, &o);
        o.algo = k->algo;
        o.threads = k->threads;
        o.hot_features = k->hot_features;
        if (k->rounds)
            cancel_with_checkpoints(k, d, &o, ck);
        else
            cancel_without_checkpoints(k, d, o);
    }
    hog_data_free(d);
}

/* The weights a checkpoint holds are the model: at an epoch's end they are
 * the model the run returns; inside a segment (l1: stamped, l2: scaled) they
 * are the lazy ones brought current, which differ from the stored lazy
 * ones. */
Test(checkpoint, checkpoint_weights_are_the_model)
{
    char dir[1024], ck[1200];
    cr_assert(th_tmpdir(dir, sizeof dir));
    hog_data *d = gen_data(dir, 2500, false);
    snprintf(ck, sizeof ck, "%s/ck", dir);
    for (int k = 0; k < 2; k++) {
        hog_train_opts o;
        opts_for(&configs[k], 2, &o); /* l2 only (scaled); l1 + l2 */
        o.checkpoint = ck;
        hog_model *m = train_or_die(d, &o);
        struct hog_ckpt c;
        hog_err err;
        cr_assert_eq(hog_ckpt_load(ck, &c, &err), HOG_OK, "%s", err.msg);
        cr_assert_eq(c.st.epoch, 2);
        cr_assert_null(c.st.w_lazy);
        cr_assert(memcmp(c.st.w, m->w, c.st.n_weights * 4) == 0);
        hog_ckpt_free(&c);
        hog_model_free(m);

        o.checkpoint_epochs = 0;
        o.checkpoint_rows = 1234; /* the last one at row 2436 of epoch 2 */
        hog_model_free(train_or_die(d, &o));
        cr_assert_eq(hog_ckpt_load(ck, &c, &err), HOG_OK, "%s", err.msg);
        cr_assert_eq(c.st.pos, 4 * 1234 - 2500);
        cr_assert_not_null(c.st.w_lazy);
        cr_assert(memcmp(c.st.w, c.st.w_lazy, c.st.n_weights * 4) != 0,
                  "%s: the lazy weights were stored as the model",
                  configs[k].name);
        for (uint64_t j = 0; j < c.st.n_weights; j++)
            cr_assert(fabsf(c.st.w[j]) < 100.0f);
        hog_ckpt_free(&c);
    }
    hog_data_free(d);
}

/* A resume from the checkpoint of a run's last epoch runs no epoch and
 * gives that run's model, for every trainer that writes checkpoints
 * (Hogwild! once returned zero weights there). */
/* FTRL-Proximal keeps no lazy weights and no AdaGrad sums: its checkpoint
 * holds its sums z and sqrt(n), always both, never stamps, and `hogtrain
 * info` says so (it used to read them as AdaGrad sums inside a
 * lazy-regularization segment). */
Test(checkpoint, ftrl_checkpoint_holds_its_sums_and_info_names_them)
{
    char dir[1024], ck[1200];
    cr_assert(th_tmpdir(dir, sizeof dir));
    hog_data *d = gen_data(dir, 2500, false);
    snprintf(ck, sizeof ck, "%s/ck", dir);
    hog_train_opts o;
    opts_for(&configs[6], 2, &o); /* logistic ftrl l1+l2 */
    cr_assert_eq(o.schedule, HOG_SCHED_FTRL);
    o.checkpoint = ck;
    hog_model_free(train_or_die(d, &o));
    hog_data_free(d);
    struct hog_ckpt c;
    hog_err err;
    cr_assert_eq(hog_ckpt_load(ck, &c, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(c.schedule, HOG_SCHED_FTRL);
    cr_assert(c.st.ftrl_z && c.st.ftrl_sqrt_n && !c.st.stamp);
    bool moved = false;
    for (uint64_t j = 0; j < c.st.n_weights; j++) {
        cr_assert_geq(c.st.ftrl_sqrt_n[j], 0.0f);
        moved |= c.st.ftrl_z[j] != 0.0f;
    }
    cr_assert(moved, "FTRL's sums z are all zero after two epochs");
    hog_ckpt_free(&c);

    char out[8192];
    int rc = th_run(out, sizeof out, "'%s' info '%s'", th_bin(), ck);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert_not_null(strstr(out, "FTRL sums (z and sqrt(n))"), "%s", out);
    cr_assert_null(strstr(out, "AdaGrad"), "%s", out);
    cr_assert_null(strstr(out, "lazy-regularization"), "%s", out);
}

Test(checkpoint, resume_after_the_last_epoch_is_the_model, .timeout = 60)
{
    char dir[1024], ck[1200];
    cr_assert(th_tmpdir(dir, sizeof dir));
    hog_data *d = gen_data(dir, 2500, false);
    snprintf(ck, sizeof ck, "%s/ck", dir);
    const hog_algo algos[] = { HOG_ALGO_SERIAL, HOG_ALGO_HOGWILD,
                               HOG_ALGO_CYCLADES };
    for (size_t a = 0; a < sizeof algos / sizeof *algos; a++) {
        hog_train_opts o;
        opts_for(&configs[1], 2, &o);
        o.algo = algos[a];
        o.threads = algos[a] == HOG_ALGO_SERIAL ? 1 : 2;
        o.checkpoint = ck;
        hog_model *m = train_or_die(d, &o);
        hog_train_opts r = o;
        r.checkpoint = NULL;
        r.resume = ck;
        hog_model *back = train_or_die(d, &r);
        cr_assert(memcmp(back->w, m->w, hog_model_len(m) * sizeof *m->w) == 0,
                  "algorithm %d", (int)algos[a]);
        hog_model_free(back);
        hog_model_free(m);
    }
    hog_data_free(d);
}

/* ---- Cyclades (docs/CYCLADES.md): checkpoints at batch boundaries ------------- */

/* Library level: Cyclades at 2 threads checkpointed every R rows (rounded
 * up to the end of the batch that crosses a multiple of R) and after
 * epochs, stopped after E1 epochs and resumed at 1, 2 or 3 threads, gives
 * the uninterrupted 2-thread run's weights bit for bit, for every
 * configuration (segments ending inside batches included); checkpoints do
 * not change the run. */
Test(checkpoint, cyclades_stopped_anywhere_resumed_at_any_thread_count,
     .timeout = 120)
{
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    hog_data *cls = gen_data(dir, 2500, false);
    hog_data *reg = gen_data(dir, 2500, true);
    char ck[1200];
    snprintf(ck, sizeof ck, "%s/ck", dir);
    unsigned seed = (unsigned)time(NULL);
    int resumed_mid = 0;
    for (size_t k = 0; k < sizeof configs / sizeof configs[0]; k++) {
        const struct config *c = &configs[k];
        const hog_data *d = c->loss == HOG_LOSS_SQUARED ? reg : cls;
        if (c->sched == HOG_SCHED_FTRL)
            continue; /* serial and Hogwild! only */
        for (int rep = 0; rep < 2; rep++) {
            hog_train_opts o;
            opts_for(c, 3, &o);
            o.algo = HOG_ALGO_CYCLADES;
            o.threads = 2;
            o.repartition = rep; /* partitioned once, then every epoch */
            hog_model *ref = train_or_die(d, &o);
            for (int trial = 0; trial < 4; trial++) {
                uint64_t R = 1 + (uint64_t)rand_r(&seed) % 6000;
                unsigned E1 = 1 + (unsigned)rand_r(&seed) % 3;
                unlink(ck);
                hog_train_opts a = o;
                a.epochs = E1;
                a.checkpoint = ck;
                a.checkpoint_rows = R;
                a.checkpoint_epochs = (unsigned)(rand_r(&seed) % 2);
                hog_model *part = train_or_die(d, &a);
                if (E1 == 3)
                    th_assert_same_model(ref, part, c->name);
                hog_model_free(part);
                if (!th_exists(ck)) {
                    cr_assert(R > E1 * 2500 && !a.checkpoint_epochs);
                    continue;
                }
                struct hog_ckpt kc;
                hog_err err;
                cr_assert_eq(hog_ckpt_load(ck, &kc, &err), HOG_OK, "%s",
                             err.msg);
                resumed_mid += kc.st.pos < 2500;
                hog_ckpt_free(&kc);
                hog_train_opts b = o;
                b.resume = ck;
                b.threads = 1 + (unsigned)rand_r(&seed) % 3;
                hog_model *res = train_or_die(d, &b);
                char what[256];
                snprintf(what, sizeof what, "%s%s, every %llu rows, stopped "
                         "after epoch %u, resumed at %u threads (seed %u)",
                         c->name, rep ? " --repartition" : "",
                         (unsigned long long)R, E1, b.threads, seed);
                th_assert_same_model(ref, res, what);
                hog_model_free(res);
            }
            hog_model_free(ref);
        }
    }
    cr_assert(resumed_mid > 0, "no checkpoint fell inside an epoch (seed %u)",
              seed);
    hog_data_free(cls);
    hog_data_free(reg);
}

/* The options that shape Cyclades' batches and Hogwild!'s folds are part of
 * a checkpoint's identity: resuming with others would silently give another
 * model, so it is refused with the option named. A version 1 file (serial
 * training, before these fields) still resumes. */
Test(checkpoint, resume_with_other_algorithm_options_is_refused)
{
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    hog_data *d = gen_data(dir, 800, false);
    char ck[1200];
    snprintf(ck, sizeof ck, "%s/ck", dir);
    hog_model *m;
    hog_err err;

    hog_train_opts o;
    opts_for(&configs[0], 1, &o);
    o.algo = HOG_ALGO_CYCLADES;
    o.threads = 2;
    o.batch_size = 64;
    o.checkpoint = ck;
    hog_model_free(train_or_die(d, &o));
    hog_train_opts b = o;
    b.checkpoint = NULL;
    b.resume = ck;
    b.epochs = 2;
    b.batch_size = 32; /* batch ends of 64 are batch ends of 32 too */
    cr_assert_eq(hog_train(d, NULL, &b, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "--batch-size 64, not 32"), "message: %s",
              err.msg);
    b.batch_size = 64;
    b.repartition = 1;
    cr_assert_eq(hog_train(d, NULL, &b, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "--repartition"), "message: %s", err.msg);
    b.repartition = 0;
    b.cyclades_hot_degree = 0;
    cr_assert_eq(hog_train(d, NULL, &b, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "--hot off"), "message: %s", err.msg);
    b.cyclades_hot_degree = o.cyclades_hot_degree;
    b.threads = 3; /* the thread count is not part of Cyclades' identity */
    hog_model_free(train_or_die(d, &b));

    unlink(ck);
    opts_for(&configs[0], 1, &o);
    o.algo = HOG_ALGO_HOGWILD;
    o.hot_features = 8;
    o.checkpoint = ck;
    hog_model_free(train_or_die(d, &o));
    b = o;
    b.checkpoint = NULL;
    b.resume = ck;
    b.epochs = 2;
    b.hot_features = 0;
    cr_assert_eq(hog_train(d, NULL, &b, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "--hot count 8, not 0"), "message: %s",
              err.msg);
    b.hot_features = 8;
    b.sync_every = o.sync_every + 1;
    cr_assert_eq(hog_train(d, NULL, &b, NULL, &m, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "--sync-every"), "message: %s", err.msg);
    b.sync_every = o.sync_every;
    hog_model_free(train_or_die(d, &b));

    /* A version 1 file: the new fields zeroed, version 1, CRC resealed. */
    unlink(ck);
    opts_for(&configs[0], 1, &o);
    o.checkpoint = ck;
    hog_model_free(train_or_die(d, &o));
    size_t len;
    unsigned char *buf = slurp(ck, &len);
    uint32_t v1 = 1;
    memcpy(buf + 8, &v1, 4);
    memset(buf + 208, 0, 44);
    uint32_t crc = hog_crc32c(0, buf, 252);
    memcpy(buf + 252, &crc, 4);
    spit(ck, buf, len);
    free(buf);
    struct hog_ckpt kc;
    cr_assert_eq(hog_ckpt_load(ck, &kc, &err), HOG_OK, "%s", err.msg);
    cr_assert_not(kc.opts_known);
    hog_ckpt_free(&kc);
    b = o;
    b.checkpoint = NULL;
    b.resume = ck;
    b.epochs = 2;
    hog_model *resumed = train_or_die(d, &b);
    hog_train_opts full = o;
    full.checkpoint = NULL;
    full.epochs = 2;
    hog_model *ref = train_or_die(d, &full);
    th_assert_same_model(ref, resumed, "resumed from a version 1 file");
    hog_model_free(ref);
    hog_model_free(resumed);
    hog_data_free(d);
}
