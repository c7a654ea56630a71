/* Other tools' options (src/cli/foreign.c): a Vowpal Wabbit or LIBLINEAR
 * user's habit gets hogtrain's words, and those words work. */
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static char out[1 << 14];

#define HT(...) th_run(out, sizeof out, "'%s' " __VA_ARGS__)

/* What each habit says (after "unknown option '-X': "). */
static const struct {
    const char *sub, *typed, *says;
} habits[] = {
    { "train", "-b 20", "-b 20 is Vowpal Wabbit's bits of the hash; here: "
                        "--hash-bits 20" },
    { "train", "--bit_precision=18", "--bit_precision 18 is Vowpal Wabbit's "
                                     "bits of the hash; here: --hash-bits 18" },
    { "train", "--passes 3", "--passes 3 is Vowpal Wabbit's passes over the "
                             "data; here: --epochs 3" },
    { "train", "-c 4", "-c 4 is LIBLINEAR's cost C; here: --C 4" },
    { "train", "-c", "-c is Vowpal Wabbit's cache; here: hogtrain convert" },
    { "train", "-s 1", "-s 1 is LIBLINEAR's solver choice; here: --algo dcd "
                       "--loss sqhinge --C 1" },
    { "train", "-s 0", "here: --algo newton --loss logistic --C 1" },
    { "train", "-s 6", "here: --algo scd --loss logistic --reg l1 --C 1" },
    { "train", "-s 11", "here: --algo newton --loss "
                        "squared_epsilon_insensitive --C 1" },
    { "train", "-s 13", "here: --algo dcd --loss epsilon_insensitive --C 1" },
    { "train", "-p 0.2", "-p 0.2 is LIBLINEAR's epsilon of the SVR loss; "
                         "here: --loss squared_epsilon_insensitive "
                         "--epsilon 0.2" },
    { "train", "--quantile_tau 0.3", "--quantile_tau 0.3 is Vowpal Wabbit's "
                                     "quantile loss's tau; here: --loss "
                                     "quantile --quantile-tau 0.3" },
    { "train", "-s 4", "here: not here (Crammer and Singer's" },
    { "train", "--oaa 20", "--oaa 20 is Vowpal Wabbit's one-against-all; "
                           "here: nothing: 3 or more label values" },
    { "train", "-f m.hgm", "-f m.hgm is Vowpal Wabbit's final regressor; "
                           "here: -o m.hgm" },
    { "train", "-i m.hgm", "here: --init m.hgm" },
    { "train", "-l 0.5", "here: --eta 0.5" },
    { "train", "--loss_function hinge", "here: --loss hinge" },
    { "train", "--power_t 0.5", "here: --schedule invscaling --power 0.5" },
    { "train", "--noconstant", "here: --bias 0" },
    { "train", "--save_resume", "--save_resume is Vowpal Wabbit's saved "
                                "optimizer state; here: --save-state" },
    { "train", "--invert_hash names.txt", "here: --keep-names (then hogtrain "
                                          "info --weights MODEL > names.txt)" },
    { "train", "--readable_model w.txt", "here: hogtrain info --weights "
                                         "MODEL > w.txt" },
    { "train", "--quadratic ab", "here: --interactions ab" },
    { "train", "--cubic abb", "--cubic abb is Vowpal Wabbit's three-way "
                              "interactions; here: --interactions abb" },
    { "train", "-e 0.01", "-e 0.01 is LIBLINEAR's stopping tolerance; here: "
                          "--algo newton --tol 0.01" },
    { "train", "-B 1", "here: --bias 1" },
    { "train", "-v 5", "-v 5 is LIBLINEAR's cross-validation; here: --cv 5" },
    { "train", "-C", "here: --search-C" },
    { "train", "-w1 2", "-w1 2 is LIBLINEAR's class weight; here: "
                        "--class-weight 1:2" },
    { "train", "-n 2", "-n 2 is LIBLINEAR's threads (its multi-core build); "
                       "here: --algo newton --threads 2" },
    { "predict", "-b 1", "-b 1 is LIBLINEAR's probability outputs; here: "
                         "--probabilities" },
    { "predict", "-p preds.txt", "-p preds.txt is Vowpal Wabbit's "
                                 "predictions file; here: -o preds.txt" },
    { "predict", "--link logistic", "here: --probabilities (logistic)" },
};

/* The flag as the error names it: "-b" of "-b 20", "--passes" of
 * "--passes 3", "--bit_precision=18" as typed. */
static void flag_of(const char *typed, char *flag, size_t len)
{
    size_t n = typed[1] == '-' ? strcspn(typed, " ") : 2;
    snprintf(flag, len, "%.*s", (int)n, typed);
}

Test(vocab, another_tools_option_gets_hogtrains_words)
{
    TH_DATA_OR_SKIP(heart, "heart_scale");
    for (size_t i = 0; i < sizeof habits / sizeof habits[0]; i++) {
        const char *operands = strcmp(habits[i].sub, "predict") == 0
                                   ? "m.hgm" : "";
        int rc = HT("%s %s %s '%s'", th_bin(), habits[i].sub, habits[i].typed,
                    operands, heart);
        cr_assert_eq(rc, 2, "hogtrain %s %s: exit %d\n%s", habits[i].sub,
                     habits[i].typed, rc, out);
        char flag[64], head[128];
        flag_of(habits[i].typed, flag, sizeof flag);
        snprintf(head, sizeof head, "hogtrain %s: unknown option '%s': ",
                 habits[i].sub, flag);
        cr_assert(strncmp(out, head, strlen(head)) == 0,
                  "hogtrain %s %s said:\n%s\nnot starting:\n%s", habits[i].sub,
                  habits[i].typed, out, head);
        cr_assert_not_null(strstr(out, habits[i].says),
                           "hogtrain %s %s said:\n%s\nwithout:\n%s",
                           habits[i].sub, habits[i].typed, out,
                           habits[i].says);
        cr_assert_not_null(strstr(out, "\nusage: hogtrain "), "%s", out);
    }
}

/* Every translation that is a list of options runs as it reads: the words
 * after "here: " (up to a parenthesis), given to the same subcommand. */
Test(vocab, each_translation_is_a_working_command_line, .timeout = 120)
{
    TH_DATA_OR_SKIP(heart, "heart_scale");
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    int rc = HT("train -q '%s' -o '%s/m.hgm'", th_bin(), heart, dir);
    cr_assert_eq(rc, 0, "%s", out);
    unsigned ran = 0;
    for (size_t i = 0; i < sizeof habits / sizeof habits[0]; i++) {
        bool predict = strcmp(habits[i].sub, "predict") == 0;
        rc = HT("%s %s %s '%s'", th_bin(), habits[i].sub, habits[i].typed,
                predict ? "m.hgm" : "", heart);
        const char *here = strstr(out, "; here: ");
        cr_assert_not_null(here, "%s", out);
        here += strlen("; here: ");
        if (here[0] != '-' || here[1] != '-' ||
            strncmp(here, "--search-C", 10) == 0) /* a C search: slow */
            continue;
        char words[256];
        snprintf(words, sizeof words, "%.*s", (int)strcspn(here, "(\n"), here);
        /* files the translation names live in the scratch folder */
        if (predict)
            rc = HT("predict -q %s '%s/m.hgm' '%s' -o '%s/p.txt'", th_bin(),
                    words, dir, heart, dir);
        else if (strstr(words, "--interactions") ||
                 strstr(words, "--keep-names")) /* on VW text: |a |b */
            rc = th_run(out, sizeof out, "sed -E 's/^([^ ]+) (.*)$/\\1 |a \\2 "
                        "|b \\2/' '%s' > '%s/ab.vw' && '%s' train -q %s "
                        "'%s/ab.vw' --epochs 2 -o '%s/ab.hgm'", heart, dir,
                        th_bin(), words, dir, dir);
        else if (strstr(words, "--init") || strstr(words, "-o "))
            rc = th_run(out, sizeof out, "cd '%s' && '%s' train -q --epochs 2 "
                        "%s '%s'", dir, th_bin(), words, heart);
        else
            rc = HT("train -q %s %s '%s' -o '%s/t.hgm'", th_bin(),
                    strstr(words, "--epochs") ? "" : "--epochs 2", words,
                    heart, dir);
        cr_assert_eq(rc, 0, "'%s' (for %s) did not run:\n%s", words,
                     habits[i].typed, out);
        ran++;
    }
    cr_assert_geq(ran, 15, "only %u translations ran", ran);
}

/* -q is --quiet here; "-q ua" is Vowpal Wabbit's interactions, unless a
 * file of that name is the training file. */
Test(vocab, q_with_namespaces_points_at_interactions)
{
    TH_DATA_OR_SKIP(heart, "heart_scale");
    int rc = HT("train -q ua", th_bin());
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert(strncmp(out, "hogtrain train: -q ua is Vowpal Wabbit's "
                      "interactions; here -q is --quiet, and the interactions "
                      "are --interactions ua\nusage: ", 104) == 0, "%s", out);
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    rc = th_run(out, sizeof out, "cp '%s' '%s/ua' && cd '%s' && '%s' train "
                "-q ua --epochs 1 -o m.hgm", heart, dir, dir, th_bin());
    cr_assert_eq(rc, 0, "a file named ua is the training file:\n%s", out);
    cr_assert_str_eq(out, "", "%s", out);
}

/* An unknown short option glued to its value ("-z3", "-w1") is named as
 * typed, not as the word before it (getopt is still inside the word). */
Test(vocab, glued_unknown_short_option_is_named)
{
    int rc = HT("train -z3 x.svm", th_bin());
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert(strncmp(out, "hogtrain train: unknown option '-z'\nusage: ",
                      42) == 0, "%s", out);
    rc = HT("predict -qz m.hgm d.svm", th_bin());
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert(strncmp(out, "hogtrain predict: unknown option '-z'\n", 38) == 0,
              "%s", out);
}
