/* hogtrain predict MODEL -: standard input answered as it comes, rows
 * without a label scored (src/cli/predict.c, predict_stream). */
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static char out[1 << 14];

#define HT(...) th_run(out, sizeof out, __VA_ARGS__)

/* The answers to a9a.t through a pipe (plain and xz-compressed) are the
 * file's, byte for byte, in each output kind; and so is the report. */
Test(predict_stream, stdin_answers_equal_the_files)
{
    TH_DATA_OR_SKIP(train, "a9a");
    TH_DATA_OR_SKIP(test, "a9a.t");
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    int rc = HT("cd '%s' && '%s' train -q --epochs 2 '%s' -o m.hgm", dir,
                th_bin(), train);
    cr_assert_eq(rc, 0, "%s", out);
    static const char *const kinds[] = { "", "--scores", "--probabilities" };
    for (size_t i = 0; i < 3; i++) {
        rc = HT("cd '%s' && '%s' predict %s m.hgm '%s' -o f.txt 2> f.err && "
                "'%s' predict %s m.hgm - < '%s' > s.txt 2> s.err && "
                "xz -c '%s' | '%s' predict %s m.hgm - -o x.txt 2> x.err && "
                "cmp f.txt s.txt && cmp f.txt x.txt && "
                "grep -h accuracy f.err s.err x.err | uniq | wc -l",
                dir, th_bin(), kinds[i], test, th_bin(), kinds[i], test, test,
                th_bin(), kinds[i]);
        cr_assert_eq(rc, 0, "%s: %s", kinds[i], out);
        cr_assert_str_eq(out, "1\n", "%s: the three reports differ", kinds[i]);
    }
}

/* A pipe's reader gets the first answer while the input is still open:
 * the writer waits for it before it writes the second row (a predict
 * that read to the end first would never answer; read -t bounds it). */
Test(predict_stream, a_pipe_is_answered_before_the_input_ends, .timeout = 120)
{
    TH_DATA_OR_SKIP(train, "a9a");
    TH_DATA_OR_SKIP(test, "a9a.t");
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    int rc = HT("cd '%s' && '%s' train -q --epochs 1 '%s' -o m.hgm && "
                "'%s' predict -q m.hgm '%s' -o all.txt && "
                "head -1 '%s' > r1 && sed -n 2p '%s' > r2 && "
                "mkfifo in outp", dir, th_bin(), train, th_bin(), test, test,
                test);
    cr_assert_eq(rc, 0, "%s", out);
    rc = HT("cd '%s' && exec bash -c '"
            "\"%s\" predict -q m.hgm - < in > outp & p=$!; "
            "exec 3> in 4< outp; cat r1 >&3; "
            "if ! read -t 60 -r a <&4; then echo no answer; kill $p; exit 1; fi; "
            "cat r2 >&3; exec 3>&-; read -r b <&4; wait $p || exit 1; "
            "echo \"$a\"; echo \"$b\"'", dir, th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    char want[64];
    rc = th_run(want, sizeof want, "head -2 '%s/all.txt'", dir);
    cr_assert_eq(rc, 0);
    cr_assert_str_eq(out, want, "answers through the pipe:\n%s\nnot:\n%s", out,
                     want);
}

/* Rows without a label are scored as the same rows with one (LIBSVM text:
 * a row that starts with index:value; Vowpal Wabbit text: nothing before
 * the '|'), from a file and from a pipe, and the accuracy counts the
 * labelled rows only. */
Test(predict_stream, unlabelled_rows_are_scored)
{
    TH_DATA_OR_SKIP(heart, "heart_scale");
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    int rc = HT("cd '%s' && '%s' train -q '%s' -o m.hgm && "
                "'%s' predict -q --scores m.hgm '%s' -o want.txt && "
                "sed -E 's/^[^ ]+ //' '%s' > unl.svm && "
                "'%s' predict -q --scores m.hgm unl.svm -o file.txt && "
                "'%s' predict --scores m.hgm - < unl.svm > pipe.txt && "
                "cmp want.txt file.txt && cmp want.txt pipe.txt",
                dir, th_bin(), heart, th_bin(), heart, heart, th_bin(),
                th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    /* half of them labelled: the accuracy is theirs */
    rc = HT("cd '%s' && { sed -n '1~2p' '%s'; sed -n '2~2p' unl.svm; } > "
            "half.svm && '%s' predict m.hgm half.svm -o h.txt 2>&1 && "
            "sed -n '1~2p' '%s' > lab.svm && '%s' predict m.hgm lab.svm -o "
            "l.txt 2>&1", dir, heart, th_bin(), heart, th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert_not_null(strstr(out, "135 rows of half.svm without a label: "
                                   "scored, not counted"), "%s", out);
    const char *acc = strstr(out, "accuracy ");
    cr_assert_not_null(acc, "%s", out);
    char first[128];
    snprintf(first, sizeof first, "%.*s", (int)strcspn(acc, "\n"), acc);
    cr_assert_not_null(strstr(acc + 1, first), "the labelled half's "
                       "accuracy is not the labelled rows':\n%s", out);
    /* Vowpal Wabbit text: "label |a ..." and "|a ..." */
    rc = HT("cd '%s' && sed -E 's/^([^ ]+) (.*)$/\\1 |a \\2/' '%s' > l.vw && "
            "sed -E 's/^[^ ]+ (.*)$/|a \\1/' '%s' > u.vw && "
            "'%s' train -q l.vw -o v.hgm && "
            "'%s' predict -q --scores v.hgm l.vw -o vl.txt && "
            "'%s' predict -q --scores v.hgm - < u.vw > vu.txt && "
            "cmp vl.txt vu.txt", dir, heart, heart, th_bin(), th_bin(),
            th_bin());
    cr_assert_eq(rc, 0, "%s", out);
}

/* Training still needs every label: the same unlabelled row is a
 * sentence naming the file and line. */
Test(predict_stream, training_still_needs_labels)
{
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    int rc = HT("cd '%s' && printf '1 1:1\\n2:1 3:0.5\\n' > u.svm && "
                "'%s' train -q u.svm -o m.hgm 2>&1", dir, th_bin());
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert_not_null(strstr(out, "u.svm:2: bad label '2:1'"), "%s", out);
}
