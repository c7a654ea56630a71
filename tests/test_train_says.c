/*
 * What hogtrain train says about its inputs before (or instead of)
 * training: one-class data streamed is refused with the in-memory
 * sentence, never a crash; a full disk at a resumed run's checkpoint names
 * the checkpoint that is intact; a test set of another feature space,
 * labels that look like a regression target and --interactions of a
 * namespace the data never has are warned of; an empty --interactions is
 * a usage error, and so is what a trainer does not do with the options
 * given, before any file is read.
 */
#include <criterion/criterion.h>

#include "helpers.h"
#include "io/io.h"

#include <stdio.h>
#include <string.h>

/* The .hgb of text written to dir/name.svm, as dir/name.hgb. */
static const char *hgb_of(const char *dir, const char *name, const char *text)
{
    static char path[4][1200];
    static int next;
    char *p = path[next++ % 4], svm[64], out[4096];
    snprintf(svm, sizeof svm, "%s.svm", name);
    const char *s = th_write(dir, svm, text, strlen(text));
    snprintf(p, sizeof path[0], "%s/%s.hgb", dir, name);
    int rc = th_run(out, sizeof out, "'%s' convert -q '%s' '%s'", th_bin(), s,
                    p);
    cr_assert_eq(rc, 0, "%s", out);
    return p;
}

/* Sets the positive count of the .hgb header at path (and its CRC), as a
 * damaged or hand-made file might have it. */
static void set_header_n_pos(const char *path, uint64_t n_pos)
{
    enum { HDR = 4096, NPOS = 88 }; /* docs/FORMATS.md */
    unsigned char h[HDR];
    FILE *f = fopen(path, "r+b");
    cr_assert(f, "%s", path);
    cr_assert_eq(fread(h, 1, HDR, f), (size_t)HDR);
    memcpy(h + NPOS, &n_pos, 8);
    uint32_t crc = hog_crc32c(0, h, HDR - 4);
    memcpy(h + HDR - 4, &crc, 4);
    cr_assert_eq(fseek(f, 0, SEEK_SET), 0);
    cr_assert_eq(fwrite(h, 1, HDR, f), (size_t)HDR);
    cr_assert_eq(fclose(f), 0);
}

Test(train_says, one_class_streamed_is_refused_as_in_memory)
{
    char dir[1024], out[8192];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *one = hgb_of(dir, "one", "+1 1:1\n+1 2:1\n");
    int rc = th_run(out, sizeof out, "'%s' train -q '%s'", th_bin(), one);
    cr_assert_eq(rc, 1, "%s", out);
    const char *sentence = "the training labels take one value only (1): a "
                           "classifier needs at least two classes";
    cr_assert(strstr(out, sentence), "%s", out);
    rc = th_run(out, sizeof out, "'%s' train -q --stream '%s'", th_bin(), one);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, sentence), "%s", out);
    /* every row the negative label */
    const char *neg = hgb_of(dir, "neg", "-1 1:1\n-1 2:1\n-1 3:1\n");
    rc = th_run(out, sizeof out, "'%s' train -q --stream '%s'", th_bin(), neg);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "take one value only (-1)"), "%s", out);
}

/* A header that claims no positive row (or every row positive) where the
 * rows have both: the stream, which knows only the header before its
 * first pass, refuses with the sentence rather than reading labels it does
 * not hold. */
Test(train_says, one_class_header_streamed_is_refused)
{
    char dir[1024], out[8192];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *two = hgb_of(dir, "two", "+1 1:1\n-1 2:1\n+1 3:1\n-1 1:1\n");
    set_header_n_pos(two, 0);
    int rc = th_run(out, sizeof out, "'%s' train -q --stream '%s'", th_bin(),
                    two);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "take one value only (-1)"), "%s", out);
    set_header_n_pos(two, 4);
    rc = th_run(out, sizeof out, "'%s' train -q --stream '%s'", th_bin(), two);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "take one value only (1)"), "%s", out);
}

/* A full disk at the first checkpoint of a resumed run: the checkpoint it
 * resumed from is this run's and intact (the commit never replaced it), so
 * the sentence says so instead of "no earlier checkpoint". */
Test(train_says, full_disk_on_resume_names_the_resumed_checkpoint,
     .timeout = 60)
{
    char dir[1024], out[8192], ck[1100];
    cr_assert(th_tmpdir(dir, sizeof dir));
    snprintf(ck, sizeof ck, "%s/ck", dir);
    int rc = th_run(out, sizeof out,
                    "'%s' gen --rows 3000 --features 2000 --nnz 20 -q -o "
                    "'%s/d.svm' && '%s' convert -q '%s/d.svm' '%s/d.hgb' && "
                    "'%s' train -q '%s/d.hgb' --epochs 1 --checkpoint '%s'",
                    th_bin(), dir, th_bin(), dir, dir, th_bin(), dir, ck);
    cr_assert_eq(rc, 0, "%s", out);
    rc = th_run(out, sizeof out,
                "HOGTRAIN_TEST_ENOSPC=1 '%s' train -q '%s/d.hgb' --epochs 3 "
                "--resume '%s' --checkpoint '%s'",
                th_bin(), dir, ck, ck);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "checkpoint after epoch 2 not written"), "%s", out);
    cr_assert(strstr(out, "No space left on device"), "%s", out);
    cr_assert(!strstr(out, "no earlier checkpoint"), "%s", out);
    char want[1300];
    snprintf(want, sizeof want, "the checkpoint this run resumed from (%s, "
             "after epoch 1) is intact", ck);
    cr_assert(strstr(out, want), "%s", out);
    struct hog_ckpt k;
    hog_err err;
    cr_assert_eq(hog_ckpt_load(ck, &k, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(k.st.epoch, 1);
    hog_ckpt_free(&k);
}

/* train -t warns as predict does when the test set lives in another
 * feature space (a9a's 123 features against news20.binary's): one line,
 * the same rule and words as predict's, and training goes on; a test set
 * of the same space (a9a.t) draws none, nor does -q. */
Test(train_says, test_set_of_another_feature_space_is_warned, .timeout = 120)
{
    TH_DATA_OR_SKIP(a9a, "a9a");
    TH_DATA_OR_SKIP(a9at, "a9a.t");
    TH_DATA_OR_SKIP(news, "news20.binary.test.svm");
    char dir[1024], out[16384];
    cr_assert(th_tmpdir(dir, sizeof dir));
    int rc = th_run(out, sizeof out, "'%s' train '%s' -t '%s' --epochs 1",
                    th_bin(), a9a, news);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "hogtrain: warning: the model has 123 features but "
                          "news20.binary.test.svm has 377295: was it "
                          "trained on other data? (training goes on)"),
              "%s", out);
    rc = th_run(out, sizeof out, "'%s' train '%s' -t '%s' --epochs 1 -q",
                th_bin(), a9a, news);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(!strstr(out, "warning"), "%s", out);
    rc = th_run(out, sizeof out, "'%s' train '%s' -t '%s' --epochs 1",
                th_bin(), a9a, a9at);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(!strstr(out, "warning"), "%s", out);
    /* predict says it in the same words of the model it is given */
    rc = th_run(out, sizeof out, "'%s' train -q '%s' --epochs 1 -o "
                "'%s/m.hgm' && '%s' predict '%s/m.hgm' '%s' -o '%s/p'",
                th_bin(), a9a, dir, th_bin(), dir, news, dir);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "the model has 123 features but "
                          "news20.binary.test.svm has 377295: was it "
                          "trained on other data? (predictions go on)"),
              "%s", out);
}

/* Labels that look like a regression target train as classes after one
 * warning line naming --loss squared: abalone's 28 ages (9 of them with
 * fewer than 10 rows), in memory and streamed; labels that are not
 * integers. Not for --loss squared, -q, or ordinary classes. */
Test(train_says, labels_like_a_target_are_warned, .timeout = 60)
{
    TH_DATA_OR_SKIP(abalone, "abalone_scale");
    char dir[1024], out[16384], hgb[1100];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *line = "hogtrain: warning: the labels take 28 values over "
                       "4177 rows (9 of them with fewer than 10 rows): "
                       "trained as 28 classes; if they are numbers to "
                       "predict, use --loss squared";
    int rc = th_run(out, sizeof out, "'%s' train '%s' --epochs 1", th_bin(),
                    abalone);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, line), "%s", out);
    cr_assert(!strstr(strstr(out, "warning") + 1, "warning"), "one line: %s",
              out);
    snprintf(hgb, sizeof hgb, "%s/ab.hgb", dir);
    rc = th_run(out, sizeof out, "'%s' convert -q '%s' '%s' && '%s' train "
                "--stream '%s' --epochs 1", th_bin(), abalone, hgb, th_bin(),
                hgb);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, line), "%s", out);
    rc = th_run(out, sizeof out, "'%s' train '%s' --epochs 1 --loss squared",
                th_bin(), abalone);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(!strstr(out, "warning"), "%s", out);
    rc = th_run(out, sizeof out, "'%s' train '%s' --epochs 1 -q", th_bin(),
                abalone);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(!strstr(out, "warning"), "%s", out);

    /* three classes of 20 rows each: integers draw nothing, halves do */
    char text[4096], halves[4096];
    size_t n = 0, h = 0;
    for (int i = 0; i < 60; i++) {
        n += (size_t)snprintf(text + n, sizeof text - n, "%d %d:1\n", i % 3,
                              1 + i % 7);
        h += (size_t)snprintf(halves + h, sizeof halves - h, "%d.5 %d:1\n",
                              i % 3, 1 + i % 7);
    }
    const char *ints = th_write(dir, "ints.svm", text, n);
    const char *half = th_write(dir, "half.svm", halves, h);
    rc = th_run(out, sizeof out, "'%s' train '%s' --epochs 1", th_bin(), ints);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(!strstr(out, "warning"), "%s", out);
    rc = th_run(out, sizeof out, "'%s' train '%s' --epochs 1", th_bin(), half);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "hogtrain: warning: the labels take 3 values over "
                          "60 rows (label 0.5 is not an integer): trained "
                          "as 3 classes; if they are numbers to predict, use "
                          "--loss squared"), "%s", out);
}

/* --interactions '' is a usage error (it was taken as no interaction);
 * a namespace the training data never has is one warning line naming it,
 * and training goes on; namespaces it has draw none. */
Test(train_says, interactions_empty_or_absent)
{
    char dir[1024], out[8192];
    cr_assert(th_tmpdir(dir, sizeof dir));
    static const char text[] = "1 |a x |b y\n-1 |a z |b y\n1 |a w |b q\n";
    const char *vw = th_write(dir, "t.vw", text, strlen(text));
    int rc = th_run(out, sizeof out, "'%s' train '%s' --interactions ''",
                    th_bin(), vw);
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert(strstr(out, "--interactions: an empty list"), "%s", out);
    cr_assert(strstr(out, "usage: hogtrain train"), "%s", out);
    rc = th_run(out, sizeof out, "'%s' train '%s' --interactions ab "
                "--interactions ''", th_bin(), vw);
    cr_assert_eq(rc, 2, "%s", out);
    rc = th_run(out, sizeof out, "'%s' train '%s' --interactions zz "
                "--epochs 1", th_bin(), vw);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "hogtrain: warning: --interactions zz: t.vw has no "
                          "namespace that starts with 'z'; the interactions "
                          "with it cross nothing"), "%s", out);
    /* a triple's third namespace too */
    rc = th_run(out, sizeof out, "'%s' train '%s' --interactions abz "
                "--epochs 1", th_bin(), vw);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "--interactions abz: t.vw has no namespace that "
                          "starts with 'z'"), "%s", out);
    rc = th_run(out, sizeof out, "'%s' train '%s' --interactions ab,zq,az "
                "--epochs 1", th_bin(), vw);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "starts with 'z' or 'q'; the interactions with them"),
              "%s", out);
    rc = th_run(out, sizeof out, "'%s' train '%s' --interactions ab,aa "
                "--epochs 1", th_bin(), vw);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(!strstr(out, "warning"), "%s", out);
    rc = th_run(out, sizeof out, "'%s' train '%s' --interactions zz -q",
                th_bin(), vw);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert_str_eq(out, "");
}

/* What a trainer does not do with the options given is the conflicts'
 * table's (src/train/conflicts_trainers.c), asked before any file is
 * read: a usage error with the trainer's sentence, the missing training
 * and weights files never opened (these were refused by the trainers as
 * they set up, after the data was loaded). */
Test(train_says, trainer_conflicts_before_the_files)
{
    static const struct {
        const char *args, *want;
    } runs[] = {
        { "--holdout 0.2 --weights absent.w",
          "a holdout with row weights (--weights) is not done yet" },
        { "--algo hogwild --hot 16 --update striped",
          "not with striped locks (they need each row's indices in "
          "ascending order)" },
        { "--algo hogwild --hot 16 --replicas core",
          "not with model replicas" },
        { "--algo hogwild --replicas core --checkpoint absent.ck",
          "Hogwild! checkpoints hold one shared model; drop --replicas" },
    };
    char out[8192];
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        int rc = th_run(out, sizeof out, "'%s' train absent.svm %s", th_bin(),
                        runs[i].args);
        cr_assert_eq(rc, 2, "%s: %s", runs[i].args, out);
        cr_assert(strstr(out, runs[i].want), "%s: %s", runs[i].args, out);
        cr_assert(strstr(out, "usage: hogtrain train"), "%s", out);
    }
}
