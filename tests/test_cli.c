/* The hogtrain command, run as a user runs it: exit codes, messages, files
 * written, and agreement with liblinear-predict. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "hogtrain.h"

#define OUT_MAX (1 << 16)

static char out[OUT_MAX];

/* Runs "hogtrain ARGS" (stdout and stderr together into out). */
#define HT(...) th_run(out, sizeof out, "'%s' " __VA_ARGS__)

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The number after key in text ("test accuracy 84.95%" -> 84.95); NaN when
 * key is absent. */
static double number_after(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? strtod(p + strlen(key), NULL) : NAN;
}

static long count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long n = 0;
    int c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

/* Percentage of the most common label in a LIBSVM file: what always
 * guessing that label scores. */
static double majority_pct(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);
    char line[1 << 16];
    long pos = 0, n = 0;
    while (fgets(line, sizeof line, f)) {
        pos += strtod(line, NULL) > 0;
        n++;
    }
    fclose(f);
    cr_assert_gt(n, 0);
    double p = 100.0 * (double)pos / (double)n;
    return p > 50 ? p : 100 - p;
}

/* A classification problem split into train (first 8000 rows) and test
 * (last 2000) from one generated file, so both share the planted model. */
static void make_split(const char *dir, char *train, char *test, size_t len)
{
    snprintf(train, len, "%s/train.svm", dir);
    snprintf(test, len, "%s/test.svm", dir);
    int rc = HT("gen --rows 10000 --features 2000 --nnz 20 --noise 0.02 "
                "--seed 11 -o '%s/all.svm' -q", th_bin(), dir);
    cr_assert_eq(rc, 0, "gen failed: %s", out);
    rc = th_run(out, sizeof out,
                "head -n 8000 '%s/all.svm' > '%s' && tail -n 2000 '%s/all.svm' > '%s'",
                dir, train, dir, test);
    cr_assert_eq(rc, 0);
}

/* The version, then the build's kind (this test is compiled with the
 * library's flags: -DHOG_PORTABLE=1 in a portable build) and the vector
 * kernels the command runs, which are the ones this process runs. */
Test(cli, version)
{
    int rc = HT("--version", th_bin());
    cr_assert_eq(rc, 0);
#ifdef HOG_PORTABLE
    const char *kind = "build=portable march=";
#else
    const char *kind = "build=native march=";
#endif
    char want[512];
    snprintf(want, sizeof want, "hogtrain %s\n%s\n", HOG_VERSION_STRING,
             hog_build_info());
    cr_assert_str_eq(out, want);
    cr_assert(strncmp(hog_build_info(), kind, strlen(kind)) == 0,
              "'%s' does not start with '%s'", hog_build_info(), kind);
    cr_assert_not_null(strstr(hog_build_info(), " kernels="));
    cr_assert_not_null(strstr(hog_build_info(), " lanes="));
}

Test(cli, help_exits_zero)
{
    cr_assert_eq(HT("--help", th_bin()), 0);
    cr_assert_not_null(strstr(out, "usage: hogtrain"));
    static const char *subs[] = { "train", "predict", "convert", "gen", "info",
                                  "bench", "topo" };
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        cr_assert_eq(HT("%s --help", th_bin(), subs[i]), 0, "%s --help", subs[i]);
        char want[64];
        snprintf(want, sizeof want, "usage: hogtrain %s", subs[i]);
        cr_assert_not_null(strstr(out, want), "%s --help said:\n%s", subs[i], out);
    }
    cr_assert_eq(HT("train --help", th_bin()), 0);
    cr_assert_not_null(strstr(out, "--epochs"));
    cr_assert_not_null(strstr(out, "--model-format"));
}

Test(cli, usage_errors_exit_2)
{
    static const char *bad[] = {
        "",                                  /* no command */
        "frobnicate",                        /* unknown command */
        "train",                             /* missing TRAIN */
        "train --bogus x.svm",               /* unknown flag */
        "train -Z x.svm",                    /* unknown short flag */
        "train x.svm --epochs",              /* missing argument */
        "train x.svm -t",                    /* missing argument */
        "train --epochs 1x x.svm",           /* trailing junk */
        "train --epochs -3 x.svm",           /* negative */
        "train --epochs 0 x.svm",            /* zero epochs */
        "train --epochs 99999999999999999999 x.svm", /* overflow */
        "train --threads 1.5 x.svm",
        "train --eta abc x.svm",
        "train --eta 0 x.svm",
        "train --l2 -1 x.svm",
        "train --l1 nan x.svm",
        "train --bias inf x.svm",
        "train --loss cubic x.svm",
        "train --schedule sometimes x.svm",
        "train --algo quantum x.svm",
        "train --update atomic --algo serial x.svm", /* conflicting */
        "train --model-format liblinear x.svm",      /* needs -o */
        "train --model-format svmlight -o m x.svm",
        "train -o a.hgm -o b.hgm x.svm",             /* given twice */
        "train x.svm y.svm",                         /* two TRAIN files */
        "predict m.hgm",                             /* missing DATA */
        "predict m.hgm d.svm extra",
        "convert in.svm",                            /* missing OUT */
        "gen --rows 10x",
        "gen --rows 0",
        "gen --nnz 0",
        "gen --noise 1.5",                           /* flip probability */
        "gen --features 10 --nnz 11",
        "gen stray",
        "info",                                      /* missing FILE */
        "train x.svm -o x.svm",                      /* output over input */
        "train x.svm -t y.svm --json y.svm",
        "train x.svm -o m --json m",
        "predict m.hgm d.svm -o d.svm",
        "convert d.svm d.svm",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = HT("%s", th_bin(), bad[i]);
        cr_assert_eq(rc, 2, "'hogtrain %s' exited %d, not 2:\n%s", bad[i], rc, out);
        cr_assert_not_null(strstr(out, "usage"), "'hogtrain %s' printed no usage:\n%s",
                           bad[i], out);
    }
}

/* Runs "hogtrain ARGS"; asserts exit status 2, the sentence `want` after
 * "hogtrain SUB: ", and the usage with the pointer to --help. */
static void expect_usage_error(const char *sub, const char *args,
                               const char *want)
{
    int rc = HT("%s %s", th_bin(), sub, args);
    cr_assert_eq(rc, 2, "'hogtrain %s %s' exited %d, not 2:\n%s", sub, args,
                 rc, out);
    char line[512], usage[64], more[64];
    snprintf(line, sizeof line, "hogtrain %s: %s\n", sub, want);
    snprintf(usage, sizeof usage, "\nusage: hogtrain %s ", sub);
    snprintf(more, sizeof more, "Try 'hogtrain %s --help' for more.\n", sub);
    cr_assert(strncmp(out, line, strlen(line)) == 0,
              "'hogtrain %s %s' said:\n%s\nnot:\n%s", sub, args, out, line);
    cr_assert_not_null(strstr(out, usage), "'hogtrain %s %s': no usage:\n%s",
                       sub, args, out);
    cr_assert_not_null(strstr(out, more), "'hogtrain %s %s': no --help "
                       "pointer:\n%s", sub, args, out);
}

/* Every subcommand parses its options with one loop (hog_cli_getopt): the
 * same mistake gets the same sentence, naming the option, whichever
 * subcommand it is made in. Each row: a subcommand, operands that would
 * otherwise do, an option taking an argument, one that may be repeated. */
Test(cli, option_mistakes_read_the_same_in_every_subcommand)
{
    static const struct {
        const char *sub, *operands, *with_arg, *flag;
    } cmds[] = {
        { "train", "x.svm", "--epochs", "--quiet" },
        { "predict", "m.hgm d.svm", "--output", "--scores" },
        { "convert", "d.svm d.hgb", "--window", "--zero-based" },
        { "gen", "", "--rows", "--regression" },
        { "info", "d.svm", "--threads", "--zero-based" },
        { "bench", "d.svm", "--epochs", "--quiet" },
        { "objective", "m.hgm d.svm", "--loss", "--quiet" },
        { "topo", "", "--bind", "--no-smt" },
    };
    char args[256], want[256];
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        const char *sub = cmds[i].sub, *ops = cmds[i].operands;
        snprintf(args, sizeof args, "--bogus %s", ops);
        expect_usage_error(sub, args, "unknown option '--bogus'");
        snprintf(args, sizeof args, "-Z %s", ops);
        expect_usage_error(sub, args, "unknown option '-Z'");
        snprintf(args, sizeof args, "%s %s", ops, cmds[i].with_arg);
        snprintf(want, sizeof want, "option '%s' needs an argument",
                 cmds[i].with_arg);
        expect_usage_error(sub, args, want);
        snprintf(args, sizeof args, "%s %s %s", cmds[i].flag, ops,
                 cmds[i].flag);
        snprintf(want, sizeof want, "option %s given twice", cmds[i].flag);
        expect_usage_error(sub, args, want);
    }
    /* --threads N, the data-loading thread count (topo: threads to place) */
    static const char *const threaded[][2] = {
        { "train", "x.svm" }, { "predict", "m.hgm d.svm" },
        { "convert", "d.svm d.hgb" }, { "info", "d.svm" },
        { "objective", "m.hgm d.svm" }, { "topo", "" },
    };
    static const char *const bad_threads[] = { "1.5", "-1", "65537", "", "2x" };
    for (size_t i = 0; i < sizeof threaded / sizeof threaded[0]; i++)
        for (size_t k = 0; k < sizeof bad_threads / sizeof bad_threads[0]; k++) {
            snprintf(args, sizeof args, "--threads '%s' %s", bad_threads[k],
                     threaded[i][1]);
            snprintf(want, sizeof want, "--threads: '%s' is not a thread "
                     "count (0 to 65536)", bad_threads[k]);
            expect_usage_error(threaded[i][0], args, want);
        }
    expect_usage_error("topo", "-t 2 --threads 3", "option --threads given twice");
    /* bench's --threads is a list of counts */
    expect_usage_error("bench", "--threads 1.5 d.svm",
                       "--threads: bad item '1.5' in '1.5'");
    /* Cyclades and hot-feature replicas keep weights of their own */
    expect_usage_error("bench", "d.svm --schedule ftrl --algo cyclades",
                       "--schedule ftrl: Cyclades does not run it; leave "
                       "--algo cyclades out of the grid");
    expect_usage_error("bench", "d.svm --schedule ftrl --hot 0,auto",
                       "--schedule ftrl: hot-feature replicas (--hot) do not "
                       "run it; leave --hot out of the grid");
    /* the model options train, bench and objective share */
    static const char *const modelled[][2] = {
        { "train", "x.svm" }, { "bench", "d.svm" }, { "objective", "m.hgm d.svm" },
    };
    for (size_t i = 0; i < sizeof modelled / sizeof modelled[0]; i++) {
        snprintf(args, sizeof args, "--loss cubic %s", modelled[i][1]);
        expect_usage_error(modelled[i][0], args, "--loss: unknown loss 'cubic' "
                           "(logistic, hinge, sqhinge, squared, "
                           "modified_huber, huber, epsilon_insensitive, "
                           "squared_epsilon_insensitive, quantile, poisson)");
        snprintf(args, sizeof args, "--l2 -1 %s", modelled[i][1]);
        expect_usage_error(modelled[i][0], args, "--l2: '-1' is not a number >= 0");
    }
}

/* The operands: what is missing is named, the same way everywhere. */
Test(cli, missing_and_extra_operands_are_named)
{
    expect_usage_error("train", "", "missing the TRAIN file");
    expect_usage_error("bench", "", "missing the DATA file");
    expect_usage_error("predict", "", "missing the MODEL and DATA files");
    expect_usage_error("objective", "", "missing the MODEL and DATA files");
    expect_usage_error("convert", "", "missing the IN and OUT files");
    expect_usage_error("predict", "m.hgm", "missing the DATA file");
    expect_usage_error("objective", "m.hgm", "missing the DATA file");
    expect_usage_error("convert", "d.svm", "missing the OUT file");
    expect_usage_error("info", "", "missing the FILE to describe");
    expect_usage_error("predict", "m.hgm d.svm x", "unexpected argument 'x'");
    expect_usage_error("objective", "m.hgm d.svm x", "unexpected argument 'x'");
    expect_usage_error("convert", "d.svm d.hgb x", "unexpected argument 'x'");
    expect_usage_error("bench", "d.svm x", "unexpected argument 'x'");
    expect_usage_error("topo", "x", "unexpected argument 'x'");
    expect_usage_error("train", "x.svm y.svm", "unexpected argument 'y.svm' "
                       "(one TRAIN file; the test file goes after -t)");
    expect_usage_error("gen", "x", "unexpected argument 'x' (the output file "
                       "goes after -o)");
}

/* bench's --plot and --csv may not overwrite the data, whichever is given. */
Test(cli, bench_outputs_never_overwrite_the_data)
{
    expect_usage_error("bench", "x.svg --plot x.svg", "x.svg would overwrite an input");
    expect_usage_error("bench", "x.csv --csv x.csv", "x.csv would overwrite an input");
    expect_usage_error("bench", "x.svm -t y.svg --plot y.svg",
                       "y.svg would overwrite an input");
}

Test(cli, malformed_data_is_an_error_with_file_and_line)
{
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    static const char text[] = "1 1:0.5 3:1\n-1 2:abc\n1 1:1\n";
    const char *bad = th_write(dir, "bad.svm", text, sizeof text - 1);
    int rc = HT("train '%s' -o '%s/m.hgm'", th_bin(), bad, dir);
    cr_assert_eq(rc, 1, "exit %d:\n%s", rc, out);
    cr_assert_not_null(strstr(out, "hogtrain: "), "%s", out);
    cr_assert_not_null(strstr(out, "bad.svm:2:"), "no file:line in:\n%s", out);
    char model[1100];
    snprintf(model, sizeof model, "%s/m.hgm", dir);
    cr_assert(!exists(model), "a model was written from bad data");
    /* The same through info and predict. */
    cr_assert_eq(HT("info '%s'", th_bin(), bad), 1);
    cr_assert_not_null(strstr(out, "bad.svm:2:"), "%s", out);
    /* A missing file is a runtime error too, not a usage error. */
    cr_assert_eq(HT("train '%s/nonexistent.svm'", th_bin(), dir), 1);
    cr_assert_not_null(strstr(out, "nonexistent.svm"), "%s", out);
}

Test(cli, gen_is_deterministic)
{
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    const char *g = "gen --rows 3000 --features 500 --nnz 12 --zipf 1.1";
    cr_assert_eq(HT("%s --seed 7 -o '%s/a.svm'", th_bin(), g, dir), 0, "%s", out);
    cr_assert_eq(HT("%s --seed 7 > '%s/b.svm'", th_bin(), g, dir), 0, "%s", out);
    cr_assert_eq(HT("%s --seed 8 -o '%s/c.svm' -q", th_bin(), g, dir), 0, "%s", out);
    cr_assert_eq(th_run(out, sizeof out, "cmp '%s/a.svm' '%s/b.svm'", dir, dir), 0,
                 "same seed, different bytes: %s", out);
    cr_assert_neq(th_run(out, sizeof out, "cmp -s '%s/a.svm' '%s/c.svm'", dir, dir), 0,
                  "different seeds gave the same bytes");
    char a[1100];
    snprintf(a, sizeof a, "%s/a.svm", dir);
    cr_assert_eq(count_lines(a), 3000);
    th_assert_no_temporaries(dir);
    /* Regression targets are real numbers, still one row per line. */
    cr_assert_eq(HT("gen --rows 100 --features 50 --nnz 5 --regression --seed 1 -q"
                    " -o '%s/r.svm'", th_bin(), dir), 0, "%s", out);
    snprintf(a, sizeof a, "%s/r.svm", dir);
    cr_assert_eq(count_lines(a), 100);
}

Test(cli, train_then_predict_on_generated_data)
{
    char dir[1024], train[1100], test[1100], model[1100], pred[1100];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    make_split(dir, train, test, sizeof train);
    snprintf(model, sizeof model, "%s/m.hgm", dir);
    snprintf(pred, sizeof pred, "%s/pred.txt", dir);

    int rc = HT("train '%s' -t '%s' -o '%s' --epochs 5", th_bin(), train, test, model);
    cr_assert_eq(rc, 0, "train failed:\n%s", out);
    cr_assert(exists(model));
    cr_assert_not_null(strstr(out, "loaded train.svm: 8000 rows"), "%s", out);
    cr_assert_not_null(strstr(out, "epoch 5/5"), "%s", out);
    cr_assert_not_null(strstr(out, "done: 5 epochs in "), "%s", out);
    cr_assert_not_null(strstr(out, "model written to"), "%s", out);
    double train_acc = number_after(out, "test accuracy ");
    double chance = majority_pct(test);
    cr_assert(train_acc > chance + 5, "test accuracy %.2f%% vs chance %.2f%%:\n%s",
              train_acc, chance, out);

    rc = HT("predict '%s' '%s' -o '%s'", th_bin(), model, test, pred);
    cr_assert_eq(rc, 0, "predict failed:\n%s", out);
    double acc = number_after(out, "accuracy ");
    cr_assert(acc > chance + 5, "predict accuracy %.2f%% vs chance %.2f%%", acc, chance);
    cr_assert(fabs(acc - train_acc) < 0.01, "predict says %.2f%%, train said %.2f%%",
              acc, train_acc);
    cr_assert_eq(count_lines(pred), 2000);
    /* Labels in the data's own values. */
    cr_assert_eq(th_run(out, sizeof out, "grep -cv '^-\\{0,1\\}1$' '%s'", pred), 1,
                 "a prediction is not +1/-1: %s", out);
    /* To standard output, and scores instead of labels. */
    rc = th_run(out, sizeof out, "'%s' predict -q '%s' '%s' | cmp - '%s'", th_bin(),
                model, test, pred);
    cr_assert_eq(rc, 0, "stdout differs from -o: %s", out);
    rc = th_run(out, sizeof out,
                "'%s' predict -q --scores '%s' '%s' | awk '{print ($1 > 0) ? 1 : -1}' "
                "| cmp - '%s'", th_bin(), model, test, pred);
    cr_assert_eq(rc, 0, "the signs of --scores disagree with the labels: %s", out);
    /* info describes the model. */
    cr_assert_eq(HT("info '%s'", th_bin(), model), 0, "%s", out);
    cr_assert_not_null(strstr(out, "logistic"), "%s", out);
    cr_assert_eq(number_after(out, "features "), 2000.0, "%s", out);
    th_assert_no_temporaries(dir);
}

Test(cli, serial_training_is_deterministic)
{
    char dir[1024], train[1100], test[1100];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    make_split(dir, train, test, sizeof train);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(HT("train -q --algo serial --seed 5 --epochs 2 '%s' -o '%s/m%d.hgm'",
                        th_bin(), train, dir, i), 0, "%s", out);
    cr_assert_eq(out[0], '\0', "--quiet printed: %s", out);
    cr_assert_eq(th_run(out, sizeof out, "cmp '%s/m0.hgm' '%s/m1.hgm'", dir, dir), 0,
                 "two serial runs with one seed differ: %s", out);
}

/* -q alone: nobody reads the epochs' metrics, and the command asks for
 * none (no progress callback: the library computes none); --json or -t
 * still get every epoch's (a test seam prints how many arrived). The
 * model is the same either way. */
Test(cli, quiet_alone_computes_no_metrics)
{
    char dir[1024], train[1100], test[1100];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    make_split(dir, train, test, sizeof train);
    char json[1200], tset[1200];
    snprintf(json, sizeof json, "--json '%s/r.json'", dir);
    snprintf(tset, sizeof tset, "-t '%s'", test);
    const char *opts[] = { "", json, tset };
    const char *want[] = { "epoch reports: 0", "epoch reports: 3",
                           "epoch reports: 3" };
    for (int i = 0; i < 3; i++) {
        int rc = th_run(out, sizeof out, "HOGTRAIN_TEST_EPOCH_REPORTS=1 '%s' "
                        "train -q --epochs 3 %s -o '%s/m%d.hgm' '%s'",
                        th_bin(), opts[i], dir, i, train);
        cr_assert_eq(rc, 0, "%s", out);
        cr_assert(strstr(out, want[i]), "-q %s: %s", opts[i], out);
    }
    cr_assert_eq(th_run(out, sizeof out, "cmp '%s/m0.hgm' '%s/m1.hgm' && "
                        "cmp '%s/m0.hgm' '%s/m2.hgm'", dir, dir, dir, dir), 0,
                 "the metrics changed the model: %s", out);
}

/* --metrics-every K with serial SGD: the exact training-set metrics on
 * the K-th epochs and the last, null in --json on the others. */
Test(cli, metrics_every_for_serial_sgd)
{
    char dir[1024], train[1100], test[1100];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    make_split(dir, train, test, sizeof train);
    int rc = th_run(out, sizeof out,
                    "'%s' train -q --epochs 5 --metrics-every 2 --json "
                    "'%s/r.json' '%s' && python3 -c \"import json; j = "
                    "json.load(open('%s/r.json')); print(j['options']"
                    "['metrics_every'], [(e['train_accuracy'] is not None, "
                    "e['objective'] is not None) for e in j['epochs']])\"",
                    th_bin(), dir, train, dir);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "2 [(False, False), (True, True), (False, False), "
                          "(True, True), (True, True)]"), "%s", out);
}

/* The default schedule: FTRL-Proximal at its own l2 where it runs, AdaGrad
 * at the library's l2 where it does not; --l2, --C and --schedule as
 * given (docs/TRAINING.md, "The default"). */
Test(cli, default_schedule_is_ftrl_where_it_runs)
{
    char dir[1024], train[1100], test[1100];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    make_split(dir, train, test, sizeof train);
    static const struct {
        const char *args, *want;
    } cases[] = {
        { "", "ftrl 4e-06" },
        { "--algo hogwild --threads 2", "ftrl 4e-06" },
        { "--l2 1e-5", "ftrl 1e-05" },
        { "--schedule ftrl", "ftrl 4e-06" },
        { "--schedule adagrad", "adagrad 1e-05" },
        { "--algo cyclades", "adagrad 1e-05" },
        { "--algo hogwild --hot auto", "adagrad 1e-05" },
        { "--algo hogwild --replicas core", "ftrl 4e-06" },
        { "--multiclass softmax", "adagrad 1e-05" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int rc = th_run(out, sizeof out,
                        "'%s' train -q --epochs 1 %s --json '%s/r.json' '%s' "
                        "&& python3 -c \"import json; o = json.load(open("
                        "'%s/r.json'))['options']; print(o['schedule'], "
                        "'%%g' %% o['l2'])\"",
                        th_bin(), cases[i].args, dir, train, dir);
        cr_assert_eq(rc, 0, "%s: %s", cases[i].args, out);
        cr_assert(strstr(out, cases[i].want), "'%s': %s, not %s",
                  cases[i].args, out, cases[i].want);
    }
    /* --C: l2 = 1/(C n) under FTRL too */
    int rc = th_run(out, sizeof out,
                    "'%s' train -q --epochs 1 --C 1 --json '%s/r.json' '%s' "
                    "&& python3 -c \"import json; j = json.load(open("
                    "'%s/r.json')); print(j['options']['schedule'], "
                    "abs(j['options']['l2'] * j['data']['train']['rows'] - 1) < 1e-6)\"",
                    th_bin(), dir, train, dir);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "ftrl True"), "--C 1: %s", out);
}

Test(cli, json_report_is_valid_json)
{
    char dir[1024], train[1100], test[1100];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    make_split(dir, train, test, sizeof train);
    /* A file name that needs escaping in JSON. */
    cr_assert_eq(th_run(out, sizeof out, "cp '%s' '%s/we\"ird\\name.svm'", train, dir), 0);
    int rc = HT("train -q --epochs 3 '%s/we\"ird\\name.svm' -t '%s' --json '%s/r.json'",
                th_bin(), dir, test, dir);
    cr_assert_eq(rc, 0, "%s", out);
    rc = th_run(out, sizeof out, "python3 -m json.tool '%s/r.json' > /dev/null", dir);
    cr_assert_eq(rc, 0, "not valid JSON: %s", out);
    rc = th_run(out, sizeof out,
                "python3 -c 'import json,sys; d = json.load(open(sys.argv[1]));"
                " assert len(d[\"epochs\"]) == 3, d[\"epochs\"];"
                " assert d[\"data\"][\"train\"][\"rows\"] == 8000;"
                " assert d[\"data\"][\"test\"][\"rows\"] == 2000;"
                " assert d[\"data\"][\"train\"][\"path\"].endswith(\"we\\\"ird\\\\name.svm\"), d[\"data\"];"
                " assert d[\"options\"][\"epochs\"] == 3;"
                " assert 0.5 < d[\"epochs\"][-1][\"test_accuracy\"] <= 1;"
                " assert d[\"timings\"][\"train_seconds\"] >= 0' '%s/r.json'",
                dir);
    cr_assert_eq(rc, 0, "unexpected report: %s", out);
    th_assert_no_temporaries(dir);
}

Test(cli, liblinear_export_agrees_with_liblinear_predict)
{
    if (th_run(out, sizeof out, "command -v liblinear-predict") != 0)
        cr_skip_test("liblinear-predict not installed (Debian: liblinear-tools)");
    char dir[1024], train[1100], test[1100];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    make_split(dir, train, test, sizeof train);
    int rc = HT("train -q --epochs 3 --seed 2 '%s' -o '%s/m.txt' --model-format liblinear",
                th_bin(), train, dir);
    cr_assert_eq(rc, 0, "%s", out);
    rc = HT("train -q --epochs 3 --seed 2 '%s' -o '%s/m.hgm'", th_bin(), train, dir);
    cr_assert_eq(rc, 0, "%s", out);
    rc = th_run(out, sizeof out, "liblinear-predict '%s' '%s/m.txt' '%s/ll.txt'", test, dir,
                dir);
    cr_assert_eq(rc, 0, "liblinear-predict failed: %s", out);
    double ll_acc = number_after(out, "Accuracy = ");
    /* hogtrain reads the LIBLINEAR model too, and its own .hgm gives the
     * same labels. */
    cr_assert_eq(HT("predict '%s/m.txt' '%s' -o '%s/h1.txt'", th_bin(), dir, test, dir), 0,
                 "%s", out);
    double h_acc = number_after(out, "accuracy ");
    cr_assert_eq(HT("predict -q '%s/m.hgm' '%s' -o '%s/h2.txt'", th_bin(), dir, test, dir), 0,
                 "%s", out);
    cr_assert_eq(th_run(out, sizeof out, "cmp '%s/ll.txt' '%s/h1.txt'", dir, dir), 0,
                 "liblinear-predict and hogtrain predict disagree: %s", out);
    cr_assert_eq(th_run(out, sizeof out, "cmp '%s/ll.txt' '%s/h2.txt'", dir, dir), 0,
                 "liblinear-predict and the .hgm model disagree: %s", out);
    cr_assert(fabs(ll_acc - h_acc) < 0.01, "accuracy %.4f vs %.4f", ll_acc, h_acc);
}

Test(cli, a9a_test_accuracy)
{
    TH_DATA_OR_SKIP(train, "a9a");
    TH_DATA_OR_SKIP(test, "a9a.t");
    /* adagrad: on a9a's 0/1 features the default invscaling steps wander
     * (77-83% test accuracy over seeds); adagrad stays at 84.6-85.1%. */
    int rc = HT("train --schedule adagrad '%s' -t '%s'", th_bin(), train, test);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert_not_null(strstr(out, "loaded a9a: 32561 rows, 123 features, 451592 nonzeros"),
                       "%s", out);
    double acc = number_after(out, "test accuracy ");
    cr_assert(acc >= 84.0, "a9a test accuracy %.2f%% < 84%%:\n%s", acc, out);
}

/* The lines of `info` that describe the contents, not the file. */
static void info_counts(const char *path, char *buf, size_t len)
{
    int rc = HT("info '%s'", th_bin(), path);
    cr_assert_eq(rc, 0, "info %s: %s", path, out);
    size_t n = 0;
    buf[0] = 0;
    static const char *keys[] = { "rows ", "features ", "nonzeros ", "density ", "labels " };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *p = strstr(out, keys[i]);
        cr_assert_not_null(p, "info %s has no '%s':\n%s", path, keys[i], out);
        int k = (int)strcspn(p, "\n");
        n += (size_t)snprintf(buf + n, len - n, "%.*s\n", k, p);
        cr_assert_lt(n, len);
    }
}

Test(cli, convert_then_info_shows_the_same_counts)
{
    char dir[1024], text[1100], hgb[1100], a[4096], b[4096];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    snprintf(text, sizeof text, "%s/d.svm", dir);
    snprintf(hgb, sizeof hgb, "%s/d.hgb", dir);
    cr_assert_eq(HT("gen -q --rows 5000 --features 3000 --nnz 15 --seed 4 -o '%s'",
                    th_bin(), text), 0, "%s", out);
    cr_assert_eq(HT("convert '%s' '%s'", th_bin(), text, hgb), 0, "%s", out);
    cr_assert_not_null(strstr(out, "5000 rows"), "%s", out);
    info_counts(text, a, sizeof a);
    info_counts(hgb, b, sizeof b);
    cr_assert_str_eq(a, b);
    cr_assert_eq(HT("info '%s'", th_bin(), hgb), 0);
    cr_assert_not_null(strstr(out, ".hgb"), "%s", out);
    /* Predictions from the cache equal those from the text. */
    cr_assert_eq(HT("train -q --epochs 1 '%s' -o '%s/m.hgm'", th_bin(), text, dir), 0,
                 "%s", out);
    int rc = th_run(out, sizeof out,
                    "'%s' predict -q '%s/m.hgm' '%s' > '%s/p1' && "
                    "'%s' predict -q '%s/m.hgm' '%s' > '%s/p2' && cmp '%s/p1' '%s/p2'",
                    th_bin(), dir, text, dir, th_bin(), dir, hgb, dir, dir, dir);
    cr_assert_eq(rc, 0, "%s", out);
}

Test(cli, regression_reports_rmse)
{
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    cr_assert_eq(HT("gen -q --regression --rows 4000 --features 200 --nnz 10 --noise 0.1"
                    " --seed 3 -o '%s/r.svm'", th_bin(), dir), 0, "%s", out);
    int rc = HT("train --loss squared --epochs 5 '%s/r.svm' -o '%s/r.hgm'", th_bin(), dir,
                dir);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert_not_null(strstr(out, "train RMSE"), "%s", out);
    double rmse = number_after(out, "train RMSE ");
    cr_assert(isfinite(rmse) && rmse >= 0, "%s", out);
    rc = HT("predict '%s/r.hgm' '%s/r.svm' -o '%s/p.txt'", th_bin(), dir, dir, dir);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert_not_null(strstr(out, "RMSE "), "%s", out);
}

Test(cli, failed_writes_fail_cleanly)
{
    char dir[1024], train[1100], test[1100];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    make_split(dir, train, test, sizeof train);
    /* Into a folder that does not exist: caught before training. */
    int rc = HT("train '%s' -o '%s/no/such/dir/m.hgm'", th_bin(), train, dir);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert_not_null(strstr(out, "hogtrain: "), "%s", out);
    cr_assert_not_null(strstr(out, "no/such/dir/m.hgm"), "%s", out);
    cr_assert_null(strstr(out, "epoch 1/"), "trained before failing: %s", out);
    rc = HT("gen -o '%s/no/such.svm'", th_bin(), dir);
    cr_assert_eq(rc, 1, "%s", out);
    rc = HT("train -q '%s' --json '%s/no/r.json'", th_bin(), train, dir);
    cr_assert_eq(rc, 1, "%s", out);
    /* Onto an existing folder: the rename fails after the write. */
    cr_assert_eq(th_run(out, sizeof out, "mkdir '%s/sub'", dir), 0);
    rc = HT("gen --rows 100 -o '%s/sub'", th_bin(), dir);
    cr_assert_eq(rc, 1, "%s", out);
    th_assert_no_temporaries(dir);
    /* A write that fails half way (file size limit): no partial file and no
     * temporary left, for the generator and for the model writer. */
    char lim[1100];
    snprintf(lim, sizeof lim, "%s/lim", dir);
    cr_assert_eq(th_run(out, sizeof out, "mkdir '%s'", lim), 0);
    rc = th_run(out, sizeof out,
                "ulimit -f 16; trap '' XFSZ; exec '%s' gen --rows 20000 --features 1000 "
                "-o '%s/big.svm'", th_bin(), lim);
    cr_assert_eq(rc, 1, "gen past the size limit exited %d: %s", rc, out);
    cr_assert_not_null(strstr(out, "hogtrain: "), "%s", out);
    rc = th_run(out, sizeof out,
                "'%s' gen -q --rows 2000 --features 100000 --nnz 50 -o '%s/wide.svm' && "
                "ulimit -f 16; trap '' XFSZ; exec '%s' train -q --epochs 1 '%s/wide.svm' "
                "-o '%s/m.hgm'", th_bin(), dir, th_bin(), dir, lim);
    cr_assert_eq(rc, 1, "writing a model past the size limit exited %d: %s", rc, out);
    cr_assert_not_null(strstr(out, "hogtrain: "), "%s", out);
    cr_assert_eq(th_run(out, sizeof out, "ls -A '%s'", lim), 0);
    cr_assert_str_eq(out, "", "left behind in %s: %s", lim, out);
}

/* dir/g.svm and dir/g.hgb: `hogtrain gen` data of `rows` rows, 40
 * nonzeros each, converted; then the shell command `then` (or ""). */
static void gen_hgb(const char *dir, unsigned rows, const char *then)
{
    int rc = th_run(out, sizeof out,
                    "cd '%s' && '%s' gen -q --rows %u --nnz 40 -o g.svm && "
                    "'%s' convert -q g.svm g.hgb%s",
                    dir, th_bin(), rows, th_bin(), then);
    cr_assert_eq(rc, 0, "%s", out);
}

/* A version 2 .hgb is mapped from the file (src/io/hgb.c). Without a
 * read lease on it (here the shell holds it open for writing, so none is
 * granted), another program truncating it in place during training makes
 * the lost pages raise SIGBUS: the command says what happened and exits
 * 1, no core dump. */
Test(cli, truncated_mapped_data_is_a_sentence)
{
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    gen_hgb(dir, 100000, "");
    /* Train for long; once the first epoch is reported the data is mapped
     * and in use: cut the file to its header. */
    int rc = th_run(out, sizeof out, "cd '%s' && exec 3<>g.hgb && "
            "{ timeout 120 '%s' train g.hgb --epochs 100000 "
            "--threads 1 -o m.hgm 2> err & pid=$!; "
            "for i in $(seq 600); do grep -q 'epoch 1/' err && break; "
            "sleep 0.1; done; truncate -s 8192 g.hgb; wait $pid; "
            "echo \"rc=$?\"; cat err; }",
            dir, th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert_not_null(strstr(out, "rc=1\n"), "not exit status 1:\n%s", out);
    cr_assert_not_null(strstr(out, "g.hgb, a .hgb data set mapped into memory, "
                                   "was truncated in place while in use"),
                       "%s", out);
    char model[1100];
    snprintf(model, sizeof model, "%s/m.hgm", dir);
    cr_assert(!exists(model), "a model was written from lost data");
}

/* With the read lease (where the file system grants one), truncating the
 * .hgb during training waits until the loaded arrays are copied out of
 * the file's pages: training goes on and writes the model that the
 * untouched file gives. (dd, not truncate(1): that one opens with
 * O_NONBLOCK, so a lease makes it fail at once, EAGAIN.) */
Test(cli, truncation_under_a_lease_leaves_training_alone, .timeout = 60)
{
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    gen_hgb(dir, 50000, " && cp g.hgb kept.hgb");
    char path[1100];
    snprintf(path, sizeof path, "%s/g.hgb", dir);
    int fd = open(path, O_RDONLY);
    cr_assert_geq(fd, 0);
    bool leases = fcntl(fd, F_SETLEASE, F_RDLCK) == 0;
    fcntl(fd, F_SETLEASE, F_UNLCK);
    close(fd);
    if (!leases)
        cr_skip_test("no read lease on %s: the file system has no leases; skipping",
                     path);
    int rc = th_run(out, sizeof out, "cd '%s' && { timeout 50 '%s' train g.hgb --epochs 12 "
            "--threads 1 --seed 3 -o m.hgm 2> err & pid=$!; "
            "for i in $(seq 300); do grep -q 'epoch 1/' err && break; "
            "sleep 0.1; done; dd if=/dev/null of=g.hgb bs=1 count=0 seek=8192 status=none; "
            "wait $pid; echo \"rc=$?\"; cat err; } && "
            "'%s' train -q kept.hgb --epochs 12 --threads 1 --seed 3 -o kept.hgm && "
            "stat -c %%s g.hgb && cmp m.hgm kept.hgm && echo same",
            dir, th_bin(), th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert_not_null(strstr(out, "rc=0\n"), "training did not finish:\n%s", out);
    cr_assert_not_null(strstr(out, "\n8192\n"), "not truncated:\n%s", out);
    cr_assert_not_null(strstr(out, "same\n"), "another model:\n%s", out);
}

/* ---- first contact: mistakes a new user makes -------------------------------- */

/* Every input named on the command line is checked before any is loaded:
 * a missing -t file (or --resume checkpoint, or MODEL) is said at once,
 * not after the training set has loaded. */
Test(cli, a_missing_input_is_named_before_anything_loads)
{
    char dir[1024], train[1100], test[1100];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    make_split(dir, train, test, sizeof train);
    static const char *const runs[][2] = {
        { "train '%s' -t '%s/absent.svm'", "absent.svm: cannot open" },
        { "train '%s' --resume '%s/absent.ckpt'", "absent.ckpt: cannot open" },
        { "bench '%s' -t '%s/absent.svm'", "absent.svm: cannot open" },
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char args[2400];
        snprintf(args, sizeof args, runs[i][0], train, dir);
        int rc = HT("%s", th_bin(), args);
        cr_assert_eq(rc, 1, "'%s' exited %d:\n%s", args, rc, out);
        cr_assert_not_null(strstr(out, runs[i][1]), "'%s':\n%s", args, out);
        cr_assert_null(strstr(out, "loaded"), "'%s' loaded data first:\n%s",
                       args, out);
    }
    /* predict and objective: DATA before the model is read */
    int rc = HT("predict '%s/absent.hgm' '%s'", th_bin(), dir, test);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert_not_null(strstr(out, "absent.hgm: cannot open"), "%s", out);
    rc = HT("train -q '%s' -o '%s/m.hgm'", th_bin(), train, dir);
    cr_assert_eq(rc, 0, "%s", out);
    rc = HT("objective '%s/m.hgm' '%s/absent.svm'", th_bin(), dir, dir);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert_not_null(strstr(out, "absent.svm: cannot open"), "%s", out);
    /* a folder is no data */
    rc = HT("train '%s' -t '%s'", th_bin(), train, dir);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert_not_null(strstr(out, "cannot open: Is a directory"), "%s", out);
    cr_assert_null(strstr(out, "loaded"), "%s", out);
}

/* A model of other data (123 features, data up to index ~400000: an a9a
 * model on news20) predicts with one warning line; the predictions are
 * those it always made, and a model of the data's own space says nothing. */
Test(cli, predict_warns_once_when_the_model_is_of_other_data)
{
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    int rc = th_run(out, sizeof out,
                    "cd '%s' && '%s' gen -q --rows 300 --features 123 -o "
                    "narrow.svm && '%s' gen -q --rows 50 --features 400000 "
                    "--nnz 30 -o wide.svm && '%s' train -q narrow.svm -o "
                    "narrow.hgm && '%s' train -q wide.svm -o wide.hgm",
                    dir, th_bin(), th_bin(), th_bin(), th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    rc = th_run(out, sizeof out, "cd '%s' && '%s' predict narrow.hgm wide.svm "
                "2>err >p1 && '%s' predict -q narrow.hgm wide.svm >p2 && "
                "cmp p1 p2 && grep -c warning err; cat err", dir, th_bin(),
                th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strncmp(out, "1\n", 2) == 0, "not one warning line:\n%s", out);
    cr_assert_not_null(strstr(out, "hogtrain: warning: the model has 123 "
                              "features but wide.svm has "), "%s", out);
    cr_assert_not_null(strstr(out, "was it trained on other data?"), "%s",
                       out);
    /* the other way round: a large model on small data */
    rc = th_run(out, sizeof out, "{ '%s' predict '%s/wide.hgm' "
                "'%s/narrow.svm' > /dev/null; }", th_bin(), dir, dir);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert_not_null(strstr(out, "warning: the model has"), "%s", out);
    rc = th_run(out, sizeof out, "{ '%s' predict '%s/narrow.hgm' "
                "'%s/narrow.svm' > /dev/null; }", th_bin(), dir, dir);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert_not_null(strstr(out, "accuracy"), "%s", out);
    cr_assert_null(strstr(out, "warning"), "%s", out);
}

/* scd and dcd stop on --tol; when the --epochs cap comes first they say
 * so in one line (LIBLINEAR's "reaching max number of iterations"), not
 * under --quiet, and --json records why training stopped. */
Test(cli, coordinate_descent_says_when_the_epoch_cap_came_first)
{
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    int rc = HT("gen -q --rows 400 --features 100 --seed 5 -o '%s/g.svm'",
                th_bin(), dir);
    cr_assert_eq(rc, 0, "%s", out);
    static const char *const capped[][2] = {
        { "--algo dcd --loss hinge", "dcd: reached the epoch cap (--epochs 2) "
          "before --tol 0.0001; the model may be less accurate: raise "
          "--epochs\n" },
        { "--algo scd --loss squared --l1 0.001", "scd: reached the epoch cap "
          "(--epochs 2) before --tol 0.0001; the model may be less accurate: "
          "raise --epochs\n" },
    };
    for (size_t i = 0; i < 2; i++) {
        rc = HT("train %s --epochs 2 --tol 0.0001 '%s/g.svm' --json "
                "'%s/r.json'", th_bin(), capped[i][0], dir, dir);
        cr_assert_eq(rc, 0, "%s", out);
        cr_assert_not_null(strstr(out, capped[i][1]), "%s:\n%s", capped[i][0],
                           out);
        rc = th_run(out, sizeof out, "grep -c '\"stopped\": \"epochs\"' "
                    "'%s/r.json'", dir);
        cr_assert_eq(rc, 0, "no \"stopped\": \"epochs\" in the report");
        rc = HT("train -q %s --epochs 2 --tol 0.0001 '%s/g.svm'", th_bin(),
                capped[i][0], dir);
        cr_assert_eq(rc, 0, "%s", out);
        cr_assert_str_eq(out, "", "--quiet printed:\n%s", out);
    }
    /* met --tol: no line, and the report says so */
    rc = HT("train --algo dcd --loss hinge --l2 0.01 '%s/g.svm' --json "
            "'%s/r.json'", th_bin(), dir, dir);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert_null(strstr(out, "epoch cap"), "%s", out);
    rc = th_run(out, sizeof out, "grep -c '\"stopped\": \"tol\"' '%s/r.json'",
                dir);
    cr_assert_eq(rc, 0, "no \"stopped\": \"tol\" in the report");
}

/* A mistyped command or option gets the nearest name, in every
 * subcommand's parser; still a usage error. Long options are spelt out:
 * an abbreviation is a mistype too. */
Test(cli, mistypes_suggest_the_nearest_name)
{
    int rc = HT("trian x.svm", th_bin());
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert(strncmp(out, "hogtrain: unknown command 'trian'; did you mean "
                      "'train'?\nusage: hogtrain", 63) == 0, "%s", out);
    rc = HT("help perdict", th_bin());
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert_not_null(strstr(out, "unknown command 'perdict'; did you mean "
                              "'predict'?"), "%s", out);
    rc = HT("frobnicate", th_bin());
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert_null(strstr(out, "did you mean"), "%s", out);
    /* "ep" is two edits from "help", half of it: no typo of it */
    rc = HT("predict --ep 3 m.hgm d.svm", th_bin());
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert_null(strstr(out, "did you mean"), "%s", out);
    static const char *const typos[][4] = {
        { "train", "x.svm", "--epoch 5", "--epochs" },
        /* the start of one name ("--ep" starts --epsilon's too) */
        { "train", "x.svm", "--epo 3", "--epochs" },
        { "train", "x.svm", "--epohcs=5", "--epochs" },
        { "train", "x.svm", "--gpu 0", "--gpus" },
        { "predict", "m.hgm d.svm", "--socres", "--scores" },
        { "convert", "d.svm d.hgb", "--windwo 4M", "--window" },
        { "gen", "", "--rwos 10", "--rows" },
        { "info", "d.svm", "--zero-base", "--zero-based" },
        { "bench", "d.svm", "--repaet 1", "--repeat" },
        { "objective", "m.hgm d.svm", "--l3 1", "--l1" },
        { "topo", "", "--bnid compact", "--bind" },
    };
    for (size_t i = 0; i < sizeof typos / sizeof typos[0]; i++) {
        char args[256], want[256], word[64];
        snprintf(args, sizeof args, "%s %s", typos[i][2], typos[i][1]);
        snprintf(word, sizeof word, "%.*s", (int)strcspn(typos[i][2], " "),
                 typos[i][2]);
        snprintf(want, sizeof want, "unknown option '%s'; did you mean '%s'?",
                 word, typos[i][3]);
        expect_usage_error(typos[i][0], args, want);
    }
}

Test(cli, a_failed_write_to_standard_output_is_an_error)
{
    if (!exists("/dev/full"))
        cr_skip_test("no /dev/full on this system");
    char dir[1024], train[1100], test[1100];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    make_split(dir, train, test, sizeof train);
    int rc = HT("train -q '%s' -o '%s/m.hgm'", th_bin(), train, dir);
    cr_assert_eq(rc, 0, "%s", out);
    /* stderr to the pipe, stdout to the full device */
    static const char *const runs[] = {
        "info '%s/m.hgm'", "objective '%s/m.hgm' '%s/test.svm'", "--help",
        "train --help", "predict '%s/m.hgm' '%s/test.svm'",
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char args[2400];
        snprintf(args, sizeof args, runs[i], dir, dir);
        rc = th_run(out, sizeof out, "{ '%s' %s > /dev/full; }", th_bin(),
                    args);
        cr_assert_eq(rc, 1, "'%s' > /dev/full exited %d:\n%s", args, rc, out);
        cr_assert_not_null(strstr(out, "hogtrain: cannot write to standard "
                                  "output"), "'%s':\n%s", args, out);
    }
    /* The reason too, for a command that writes and for info (which
     * flushes after each file). */
    static const char *const why[] = { "objective '%s/m.hgm' '%s'",
                                       "info '%s/m.hgm'" };
    for (size_t i = 0; i < 2; i++) {
        char args[2400];
        snprintf(args, sizeof args, why[i], dir, test);
        th_run(out, sizeof out, "{ '%s' %s > /dev/full; }", th_bin(), args);
        cr_assert_not_null(strstr(out, "hogtrain: cannot write to standard "
                                  "output: No space left on device\n"),
                           "'%s':\n%s", args, out);
    }
}
