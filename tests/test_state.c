/*
 * Models that keep the optimizer's state (hog_train_opts.save_state, .hgm
 * version 5; docs/TRAINING.md, "Continuing training"): a run of 3 epochs
 * saved with its state and continued for 2 from the file equals one run
 * of 5 bit for bit, for FTRL, AdaGrad and invscaling, one-vs-rest and
 * softmax;
 * a model without a state is written and warm-started as before; the
 * state section is untrusted input like the rest of the file.
 */
#include <criterion/criterion.h>

#include "helpers.h"
#include "io/io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static hog_model *train_as(const hog_data *d, hog_schedule sch,
                           hog_multiclass mc, unsigned epochs, int save_state,
                           const hog_model *warm)
{
    hog_train_opts o;
    th_opts_init(&o);
    o.schedule = sch;
    o.multiclass = mc;
    o.l2 = sch == HOG_SCHED_FTRL ? 4e-6 : 1e-5;
    o.l1 = sch == HOG_SCHED_INVSCALING ? 1e-6 : 0; /* stamped segments */
    o.epochs = epochs;
    o.threads = 1;
    o.save_state = save_state;
    o.warm_start = warm;
    return th_train_ok(d, &o);
}

static hog_model *train(const hog_data *d, hog_schedule sch, unsigned epochs,
                        int save_state, const hog_model *warm)
{
    return train_as(d, sch, HOG_MULTICLASS_OVR, epochs, save_state, warm);
}

/* m saved to dir/name and loaded back. */
static hog_model *round_trip(const hog_model *m, const char *dir,
                             const char *name)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    hog_err err;
    cr_assert_eq(hog_model_save(m, path, HOG_MODEL_HGM, &err), HOG_OK, "%s",
                 err.msg);
    hog_model *back;
    cr_assert_eq(hog_model_load(path, &back, &err), HOG_OK, "%s", err.msg);
    return back;
}

static void same_weights(const hog_model *a, const hog_model *b,
                         const char *what)
{
    uint64_t n = hog_model_len(a);
    cr_assert_eq(n, hog_model_len(b), "%s", what);
    for (uint64_t j = 0; j < n; j++)
        cr_assert(memcmp(&a->w[j], &b->w[j], sizeof a->w[j]) == 0,
                  "%s: weight %llu is %.9g, the 5-epoch run's %.9g", what,
                  (unsigned long long)j, b->w[j], a->w[j]);
}

/* 3 epochs saved with their state to a file, continued for 2 from it,
 * against one run of 5: the weights, the state, and without the state a
 * restart of the rates that is another model. */
static void three_then_two(const hog_data *d, hog_schedule sch,
                           hog_multiclass mc, const char *name,
                           const char *dir)
{
    hog_model *five = train_as(d, sch, mc, 5, 1, NULL);
    hog_model *three = train_as(d, sch, mc, 3, 1, NULL);
    hog_model *file = round_trip(three, dir, "three.hgm");
    hog_model_state s = { .size = sizeof s };
    cr_assert(hog_model_get_state(file, &s), "%s", name);
    cr_assert_eq(s.epochs, 3);
    cr_assert_eq(s.steps, 3 * d->m.rows);
    hog_model *two = train_as(d, sch, mc, 2, 1, file);
    same_weights(five, two, name);
    /* the continued run's state is the long run's too */
    hog_model_state s5 = { .size = sizeof s5 }, s2 = { .size = sizeof s2 };
    cr_assert(hog_model_get_state(five, &s5) &&
              hog_model_get_state(two, &s2));
    cr_assert_eq(s2.epochs, 5);
    cr_assert_eq(s2.steps, s5.steps);
    uint64_t n = hog_model_len(five);
    cr_assert(!s5.a || memcmp(s5.a, s2.a, n * 4) == 0, "%s", name);
    cr_assert(!s5.b || memcmp(s5.b, s2.b, n * 4) == 0, "%s", name);
    /* without its state the continuation restarts the rates: not the
     * long run (what --init did before a model could keep it) */
    hog_model_set_state(file, NULL, NULL);
    hog_model *restart = train_as(d, sch, mc, 2, 0, file);
    cr_assert(memcmp(restart->w, five->w, n * 4) != 0, "%s", name);
    hog_model_free(restart);
    hog_model_free(two);
    hog_model_free(file);
    hog_model_free(three);
    hog_model_free(five);
}

Test(state, three_then_two_epochs_equal_five, .timeout = 300)
{
    TH_DATA_OR_SKIP(path, "a9a");
    char dir[1024];
    th_tmpdir(dir, sizeof dir);
    hog_data *d = th_load(path);
    three_then_two(d, HOG_SCHED_FTRL, HOG_MULTICLASS_OVR, "ftrl", dir);
    three_then_two(d, HOG_SCHED_ADAGRAD, HOG_MULTICLASS_OVR, "adagrad", dir);
    three_then_two(d, HOG_SCHED_INVSCALING, HOG_MULTICLASS_OVR, "invscaling",
                   dir);
    hog_data_free(d);
}

/* Softmax keeps its own state: one AdaGrad sum per feature for its K
 * weights, and the step count (abalone's 28 classes: AdaGrad with l2's
 * stamps, invscaling with l1's prefixes, constant with l2's scale). */
Test(state, softmax_three_then_two_epochs_equal_five, .timeout = 300)
{
    TH_DATA_OR_SKIP(path, "abalone_scale");
    char dir[1024];
    th_tmpdir(dir, sizeof dir);
    hog_data *d = th_load(path);
    three_then_two(d, HOG_SCHED_ADAGRAD, HOG_MULTICLASS_SOFTMAX, "adagrad",
                   dir);
    three_then_two(d, HOG_SCHED_INVSCALING, HOG_MULTICLASS_SOFTMAX,
                   "invscaling", dir);
    three_then_two(d, HOG_SCHED_CONSTANT, HOG_MULTICLASS_SOFTMAX, "constant",
                   dir);
    hog_data_free(d);
}

/* Without save_state nothing changes: the file is the version it was
 * (1 here), the weights are those of a run that kept its state, and a
 * warm start from it takes its weights only. */
Test(state, a_model_without_state_is_written_as_before)
{
    TH_DATA_OR_SKIP(path, "heart_scale");
    char dir[1024], file[1100];
    th_tmpdir(dir, sizeof dir);
    hog_data *d = th_load(path);
    hog_model *plain = train(d, HOG_SCHED_FTRL, 3, 0, NULL);
    hog_model *kept = train(d, HOG_SCHED_FTRL, 3, 1, NULL);
    hog_model_state s = { .size = sizeof s };
    cr_assert(!hog_model_get_state(plain, &s));
    same_weights(plain, kept, "with and without the state");
    hog_err err;
    snprintf(file, sizeof file, "%s/plain.hgm", dir);
    cr_assert_eq(hog_model_save(plain, file, HOG_MODEL_HGM, &err), HOG_OK);
    size_t len;
    unsigned char *bytes = (unsigned char *)th_slurp(file, &len);
    cr_assert(bytes && len > 12);
    cr_assert_eq(bytes[8], 1, "a binary model without a state is version 1");
    free(bytes);
    snprintf(file, sizeof file, "%s/kept.hgm", dir);
    cr_assert_eq(hog_model_save(kept, file, HOG_MODEL_HGM, &err), HOG_OK);
    bytes = (unsigned char *)th_slurp(file, &len);
    cr_assert_eq(bytes[8], 5, "a model with its state is version 5");
    /* a header of 112 bytes, 14 weights, 32 + 2 x 14 x 4 of FTRL's
     * state, the CRC */
    cr_assert_eq(len, 112 + 14 * 4 + 32 + 2 * 14 * 4 + 4, "%zu", len);
    free(bytes);
    hog_model_free(kept);
    hog_model_free(plain);
    hog_data_free(d);
}

Test(state, another_schedule_is_refused_with_a_sentence)
{
    TH_DATA_OR_SKIP(path, "heart_scale");
    hog_data *d = th_load(path);
    hog_model *m = train(d, HOG_SCHED_FTRL, 1, 1, NULL);
    hog_train_opts o;
    th_opts_init(&o);
    o.schedule = HOG_SCHED_ADAGRAD;
    o.warm_start = m;
    hog_model *out = NULL;
    hog_err err;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &out, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "optimizer state of --schedule ftrl and "
                              "this run's is adagrad"), "%s",
              err.msg);
    hog_model_free(m);
    hog_data_free(d);
}

/* Every truncation and every flipped byte of a version 5 file (weights
 * and state) is refused; a state section whose size, version, schedule
 * or arrays do not add up is refused after the CRC is resealed. */
Test(state, every_truncation_and_flipped_byte_is_refused, .timeout = 120)
{
    TH_DATA_OR_SKIP(path, "heart_scale");
    char dir[1024], file[1100], bad[1100];
    th_tmpdir(dir, sizeof dir);
    hog_data *d = th_load(path);
    hog_model *m = train(d, HOG_SCHED_ADAGRAD, 1, 1, NULL);
    hog_err err;
    snprintf(file, sizeof file, "%s/s.hgm", dir);
    snprintf(bad, sizeof bad, "%s/bad.hgm", dir);
    cr_assert_eq(hog_model_save(m, file, HOG_MODEL_HGM, &err), HOG_OK);
    size_t len;
    unsigned char *b = (unsigned char *)th_slurp(file, &len);
    for (size_t cut = 0; cut < len; cut++) {
        FILE *f = fopen(bad, "wb");
        cr_assert(f && fwrite(b, 1, cut, f) == cut && fclose(f) == 0);
        hog_model *x = NULL;
        cr_assert_neq(hog_model_load(bad, &x, &err), HOG_OK, "cut %zu", cut);
    }
    for (size_t i = 0; i < len; i++) {
        b[i] ^= 0x10;
        FILE *f = fopen(bad, "wb");
        cr_assert(f && fwrite(b, 1, len, f) == len && fclose(f) == 0);
        hog_model *x = NULL;
        cr_assert_neq(hog_model_load(bad, &x, &err), HOG_OK, "byte %zu", i);
        b[i] ^= 0x10;
    }
    /* the section's fields, resealed: version, schedule, arrays */
    size_t sec = len - 4 - (32 + 14 * 4);
    const size_t field[] = { sec, sec + 4, sec + 8, sec + 12 };
    const char *why[] = { "version is not 1", "unknown schedule",
                          "not its schedule's", "not its schedule's" };
    for (size_t k = 0; k < 4; k++) {
        b[field[k]] ^= 0x04;
        uint32_t crc = hog_crc32c(0, b, len - 4);
        memcpy(b + len - 4, &crc, 4);
        FILE *f = fopen(bad, "wb");
        cr_assert(f && fwrite(b, 1, len, f) == len && fclose(f) == 0);
        hog_model *x = NULL;
        cr_assert_eq(hog_model_load(bad, &x, &err), HOG_ECORRUPT);
        cr_assert(strstr(err.msg, why[k]), "field %zu: %s", k, err.msg);
        b[field[k]] ^= 0x04;
    }
    free(b);
    hog_model_free(m);
    hog_data_free(d);
}

/* The command: --save-state, then --init continues one-vs-rest exactly
 * (FTRL, news20's 20 classes, spread over the threads), and the options it
 * does not combine with are a usage error. */
Test(state, command_continues_one_vs_rest_exactly, .timeout = 600)
{
    TH_HEAVY_OR_SKIP();
    TH_DATA_OR_SKIP(path, "news20.train.svm");
    char dir[1024], out[8192];
    th_tmpdir(dir, sizeof dir);
    int rc = th_run(out, sizeof out, "'%s' train '%s' -q --epochs 3 "
                    "-o '%s/three.hgm'", th_bin(), path, dir);
    cr_assert_eq(rc, 0, "%s", out);
    rc = th_run(out, sizeof out, "'%s' train '%s' -q --epochs 2 "
                "--save-state -o '%s/two.hgm'", th_bin(), path, dir);
    cr_assert_eq(rc, 0, "%s", out);
    rc = th_run(out, sizeof out, "'%s' train '%s' -q --epochs 1 "
                "--init '%s/two.hgm' -o '%s/one.hgm'", th_bin(), path, dir,
                dir);
    cr_assert_eq(rc, 0, "%s", out);
    rc = th_run(out, sizeof out, "cmp '%s/three.hgm' '%s/one.hgm'", dir, dir);
    cr_assert_eq(rc, 0, "2 + 1 epochs are not 3: %s", out);

    rc = th_run(out, sizeof out, "'%s' train '%s' -q --save-state --algo "
                "hogwild -o '%s/x.hgm'", th_bin(), path, dir);
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert(strstr(out, "--save-state keeps the state of the serial"), "%s",
              out);
    rc = th_run(out, sizeof out, "'%s' train '%s' -q --save-state "
                "--model-format liblinear -o '%s/x.txt'", th_bin(), path, dir);
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert(strstr(out, "LIBLINEAR's text has no place"), "%s", out);
}

/* The command continues softmax exactly too: 2 epochs with --save-state,
 * then 1 from that model, write the model of 3 (abalone's 28 classes). */
Test(state, command_continues_softmax_exactly, .timeout = 120)
{
    TH_DATA_OR_SKIP(path, "abalone_scale");
    char dir[1024], out[8192];
    th_tmpdir(dir, sizeof dir);
    int rc = th_run(out, sizeof out, "'%s' train '%s' -q --multiclass "
                    "softmax --epochs 3 -o '%s/three.hgm'", th_bin(), path,
                    dir);
    cr_assert_eq(rc, 0, "%s", out);
    rc = th_run(out, sizeof out, "'%s' train '%s' -q --multiclass softmax "
                "--epochs 2 --save-state -o '%s/two.hgm'", th_bin(), path,
                dir);
    cr_assert_eq(rc, 0, "%s", out);
    rc = th_run(out, sizeof out, "'%s' train '%s' -q --multiclass softmax "
                "--epochs 1 --init '%s/two.hgm' -o '%s/one.hgm'", th_bin(),
                path, dir, dir);
    cr_assert_eq(rc, 0, "%s", out);
    rc = th_run(out, sizeof out, "cmp '%s/three.hgm' '%s/one.hgm'", dir, dir);
    cr_assert_eq(rc, 0, "2 + 1 softmax epochs are not 3: %s", out);
}

/* The options of a run that continues the state of warm (NULL: none),
 * writing a checkpoint to ck every ck_rows steps (0: every epoch). */
static hog_train_opts ckpt_opts(hog_schedule sch, hog_multiclass mc,
                                unsigned epochs, const hog_model *warm,
                                const char *ck, uint64_t ck_rows)
{
    hog_train_opts o;
    th_opts_init(&o);
    o.schedule = sch;
    o.multiclass = mc;
    o.l2 = 1e-5;
    o.l1 = sch == HOG_SCHED_ADAGRAD && mc == HOG_MULTICLASS_OVR ? 1e-6 : 0;
    o.epochs = epochs;
    o.threads = 1;
    o.warm_start = warm;
    o.checkpoint = ck;
    o.checkpoint_rows = ck_rows;
    return o;
}

/* A checkpoint of a run warm-started from a model's state (2 epochs, then
 * 2 more from the model, a checkpoint inside the continuation's second
 * epoch or after it) resumes alone: the resumed run is the 5-epoch run,
 * and its state counts every epoch. Before, the resume replayed the
 * checkpoint's epochs only and was refused as "different seed or data". */
static void warm_checkpoint_resumes(const hog_data *d, hog_schedule sch,
                                    hog_multiclass mc, uint64_t ck_rows,
                                    const char *dir, const char *name)
{
    char ck[1100];
    snprintf(ck, sizeof ck, "%s/warm.ckpt", dir);
    hog_model *five = train_as(d, sch, mc, 5, 1, NULL);
    hog_model *two = train_as(d, sch, mc, 2, 1, NULL);
    hog_model *file = round_trip(two, dir, "two.hgm");
    hog_train_opts o = ckpt_opts(sch, mc, 2, file, ck, ck_rows);
    o.l1 = five->l1; /* as train_as set them */
    o.l2 = five->l2;
    hog_model_free(th_train_ok(d, &o));
    o = ckpt_opts(sch, mc, 3, NULL, ck, ck_rows);
    o.l1 = five->l1;
    o.l2 = five->l2;
    o.resume = ck;
    o.save_state = 1;
    hog_model *resumed = th_train_ok(d, &o);
    same_weights(five, resumed, name);
    hog_model_state s = { .size = sizeof s }, s5 = { .size = sizeof s5 };
    cr_assert(hog_model_get_state(resumed, &s) &&
              hog_model_get_state(five, &s5), "%s", name);
    cr_assert_eq(s.epochs, 5, "%s: %llu epochs", name,
                 (unsigned long long)s.epochs);
    cr_assert_eq(s.steps, s5.steps, "%s", name);
    hog_model_free(resumed);
    hog_model_free(file);
    hog_model_free(two);
    hog_model_free(five);
}

Test(state, a_checkpoint_of_a_warm_state_run_resumes_alone, .timeout = 300)
{
    TH_DATA_OR_SKIP(bin, "heart_scale");
    TH_DATA_OR_SKIP(mc, "abalone_scale");
    char dir[1024];
    th_tmpdir(dir, sizeof dir);
    hog_data *d = th_load(bin);
    /* heart_scale's 270 rows: the last checkpoint at step 1000, row 190
     * of the continuation's second epoch, inside an AdaGrad segment */
    warm_checkpoint_resumes(d, HOG_SCHED_FTRL, HOG_MULTICLASS_OVR, 100, dir,
                            "ftrl");
    warm_checkpoint_resumes(d, HOG_SCHED_ADAGRAD, HOG_MULTICLASS_OVR, 100,
                            dir, "adagrad");
    hog_data_free(d);
    d = th_load(mc);
    warm_checkpoint_resumes(d, HOG_SCHED_ADAGRAD, HOG_MULTICLASS_SOFTMAX, 0,
                            dir, "softmax");
    hog_data_free(d);
}

/* What cannot be resumed says why and what to do: one-vs-rest's later
 * classes would need the model's vectors, and a state trained on other
 * rows has no known epochs to replay. */
Test(state, a_warm_state_checkpoint_that_cannot_resume_says_why,
     .timeout = 300)
{
    TH_DATA_OR_SKIP(bin, "heart_scale");
    TH_DATA_OR_SKIP(mc, "abalone_scale");
    char dir[1024], ck[1100];
    th_tmpdir(dir, sizeof dir);
    snprintf(ck, sizeof ck, "%s/warm.ckpt", dir);
    hog_err err;
    hog_model *out = NULL;

    hog_data *d = th_load(mc);
    hog_model *two = train(d, HOG_SCHED_FTRL, 1, 1, NULL);
    hog_train_opts o = ckpt_opts(HOG_SCHED_FTRL, HOG_MULTICLASS_OVR, 2, two,
                                 ck, 0);
    o.l2 = 4e-6;
    hog_model_free(th_train_ok(d, &o));
    o.warm_start = NULL;
    o.resume = ck;
    o.epochs = 3;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &out, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "one-vs-rest run warm-started from a model's "
                              "optimizer state") &&
              strstr(err.msg, "--init MODEL"), "%s", err.msg);
    hog_model_free(two);
    hog_data_free(d);

    /* a state of heart_scale's first 200 rows, continued on all 270 */
    size_t len;
    char *text = th_slurp(bin, &len), *at = text;
    for (int k = 0; k < 200; k++)
        at = strchr(at, '\n') + 1;
    *at = 0;
    hog_data *head = th_load(th_write(dir, "head.svm", text, strlen(text)));
    free(text);
    d = th_load(bin);
    two = train(head, HOG_SCHED_FTRL, 1, 1, NULL);
    o = ckpt_opts(HOG_SCHED_FTRL, HOG_MULTICLASS_OVR, 1, two, ck, 0);
    o.l2 = 4e-6;
    hog_model_free(th_train_ok(d, &o));
    o.warm_start = NULL;
    o.resume = ck;
    o.epochs = 2;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &out, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "state of 200 steps, which are not whole "
                              "epochs of these 270 rows") &&
              strstr(err.msg, "--init MODEL"), "%s", err.msg);
    hog_model_free(two);
    hog_data_free(head);
    hog_data_free(d);
}

/* Softmax warm-started from a model's state and cut before its first
 * epoch ends: the checkpoint holds the model's weights, sums and steps,
 * and resumed alone it is the long run (before, it held zero weights
 * and no steps, and the resumed run trained from zero). */
Test(state, a_warm_softmax_run_cut_in_its_first_epoch_resumes_alone,
     .timeout = 300)
{
    TH_DATA_OR_SKIP(path, "abalone_scale");
    char dir[1024], ck[1100];
    th_tmpdir(dir, sizeof dir);
    snprintf(ck, sizeof ck, "%s/cut.ckpt", dir);
    hog_data *d = th_load(path);
    hog_model *five = train_as(d, HOG_SCHED_ADAGRAD, HOG_MULTICLASS_SOFTMAX,
                               5, 1, NULL);
    hog_model *two = train_as(d, HOG_SCHED_ADAGRAD, HOG_MULTICLASS_SOFTMAX,
                              2, 1, NULL);
    hog_train_opts o = ckpt_opts(HOG_SCHED_ADAGRAD, HOG_MULTICLASS_SOFTMAX,
                                 3, two, ck, 0);
    volatile sig_atomic_t stop = 1; /* cut at the first poll */
    hog_train_hooks h = { .size = sizeof h, .cancel = &stop };
    hog_model *out = NULL;
    hog_err err;
    cr_assert_eq(hog_train(d, NULL, &o, &h, &out, &err), HOG_EINTR, "%s",
                 err.msg);
    hog_model_free(out);
    o = ckpt_opts(HOG_SCHED_ADAGRAD, HOG_MULTICLASS_SOFTMAX, 3, NULL, ck, 0);
    o.resume = ck;
    hog_model *resumed = th_train_ok(d, &o);
    same_weights(five, resumed, "softmax cut in its first epoch");
    hog_model_free(resumed);
    hog_model_free(two);
    hog_model_free(five);
    hog_data_free(d);
}
