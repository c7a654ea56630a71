/* The options' table (src/train/options.c): the defaults hog_train_opts_
 * resolve settles, its range sentences, and that the command's --help, its
 * man page and its --json report agree with the table. Python's side is
 * python/tests/test_estimators.py (test_options_*). */
#include "helpers.h"

#include "hogtrain.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char out[65536];

static hog_train_opts settled(hog_algo algo, hog_loss loss)
{
    hog_train_opts o;
    hog_train_opts_init(&o);
    o.algo = algo;
    o.loss = loss;
    hog_err err;
    cr_assert_eq(hog_train_opts_resolve(&o, NULL, &err), HOG_OK, "%s", err.msg);
    return o;
}

/* The defaults that depend on the algorithm and loss are the command's
 * (docs/TRAINING.md, "The default"); before the table the library's init
 * gave AdaGrad at l2 1e-5, 5 epochs, tol 0.01 and update none everywhere. */
Test(options, resolve_settles_the_defaults_by_algorithm_and_loss)
{
    hog_train_opts o = settled(HOG_ALGO_SERIAL, HOG_LOSS_LOGISTIC);
    cr_assert_eq(o.schedule, HOG_SCHED_FTRL);
    cr_assert_eq(o.l2, HOG_FTRL_L2_DEFAULT);
    cr_assert_eq(o.eta, 0.3);
    cr_assert_eq(o.epochs, 5);
    cr_assert_eq(o.update, HOG_UPDATE_NONE);
    o = settled(HOG_ALGO_DCD, HOG_LOSS_HINGE);
    cr_assert_eq(o.schedule, HOG_SCHED_ADAGRAD);
    cr_assert_eq(o.l2, 1e-5);
    cr_assert_eq(o.eta, 0.1);
    cr_assert_eq(o.epochs, 1000);
    cr_assert_eq(o.tol, 0.1);
    cr_assert_eq(o.update, HOG_UPDATE_ATOMIC);
    o = settled(HOG_ALGO_NEWTON, HOG_LOSS_SQUARED);
    cr_assert_eq(o.epochs, 1000);
    cr_assert_eq(o.tol, 0.01);
    cr_assert_eq(o.eta, 1.0);
    /* softmax keeps K-wide AdaGrad weights: no FTRL there */
    hog_train_opts s;
    hog_train_opts_init(&s);
    s.multiclass = HOG_MULTICLASS_SOFTMAX;
    hog_err err;
    cr_assert_eq(hog_train_opts_resolve(&s, NULL, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(s.schedule, HOG_SCHED_ADAGRAD);
    /* what is set stays; a second resolve changes nothing */
    hog_train_opts g;
    hog_train_opts_init(&g);
    g.schedule = HOG_SCHED_CONSTANT;
    g.epochs = 0; /* a warm start's "as it is", not unset */
    cr_assert_eq(hog_train_opts_resolve(&g, NULL, &err), HOG_OK, "%s", err.msg);
    hog_train_opts again = g;
    cr_assert_eq(hog_train_opts_resolve(&again, NULL, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(memcmp(&g, &again, sizeof g), 0);
    cr_assert_eq(g.schedule, HOG_SCHED_CONSTANT);
    cr_assert_eq(g.epochs, 0);
    cr_assert_eq(g.l2, 1e-5);
}

/* Every row refuses a value past its range with a sentence naming the
 * option (and its flag or Python name). */
Test(options, every_range_is_refused_with_the_options_name)
{
    size_t n;
    const hog_train_option *rows = hog_train_options(&n);
    cr_assert_gt(n, 20);
    unsigned checked = 0;
    for (size_t i = 0; i < n; i++) {
        const hog_train_option *r = &rows[i];
        double bad = NAN;
        if (r->type == HOG_OPTION_DOUBLE)
            bad = isfinite(r->min) ? r->min - 1 : INFINITY;
        else if (r->type == HOG_OPTION_ENUM)
            bad = r->max + 1;
        else if (r->type == HOG_OPTION_UNSIGNED && r->max < 4294967295.0)
            bad = r->max + 1;
        else if (r->type == HOG_OPTION_U64 && r->max < 1e19)
            bad = r->max + 1;
        if (isnan(bad))
            continue; /* a flag, or a whole type's range */
        hog_train_opts o;
        hog_train_opts_init(&o);
        char *p = (char *)&o + r->offset;
        if (r->type == HOG_OPTION_DOUBLE) {
            memcpy(p, &bad, sizeof bad);
        } else if (r->type == HOG_OPTION_UNSIGNED) {
            unsigned v = (unsigned)bad;
            memcpy(p, &v, sizeof v);
        } else if (r->type == HOG_OPTION_U64) {
            uint64_t v = (uint64_t)bad;
            memcpy(p, &v, sizeof v);
        } else {
            int v = (int)bad;
            memcpy(p, &v, sizeof v);
        }
        hog_err err = { "" };
        cr_assert_eq(hog_train_opts_resolve(&o, NULL, &err), HOG_EINVAL,
                     "%s = %g was taken", r->field, bad);
        char name[64];
        snprintf(name, sizeof name, "option %s", r->field);
        cr_assert(strstr(err.msg, name), "%s = %g: \"%s\"", r->field, bad,
                  err.msg);
        if (r->flag && strcmp(r->flag, r->field) != 0) {
            snprintf(name, sizeof name, "--%s", r->flag);
            cr_assert(strstr(err.msg, name), "\"%s\" names no %s", err.msg,
                      name);
        }
        checked++;
    }
    cr_assert_geq(checked, 15, "only %u rows had a value to refuse", checked);
    hog_train_opts o;
    hog_train_opts_init(&o);
    o.l2 = -1;
    hog_err err;
    cr_assert_eq(hog_train_opts_resolve(&o, NULL, &err), HOG_EINVAL);
    cr_assert_str_eq(err.msg, "the option l2 (--l2, Python alpha) must be a "
                     "finite number >= 0, not -1");
}

/* docs/hogtrain.1's entry for --flag in the train command's section (a
 * .TP, then .B or .BI naming it, up to the next .TP, .PP or section), its
 * roff taken out (macros, fonts, quotes, \- and \(<=) and its lines
 * joined, into buf; NULL when it has none. */
static const char *man_entry(const char *man, const char *flag, char *buf,
                             size_t len)
{
    const char *sec = strstr(man, "\n.SS hogtrain train ");
    const char *end = sec ? strstr(sec + 1, "\n.SS ") : NULL;
    char b[128], bi[128];
    snprintf(b, sizeof b, "\n.TP\n.B \\-\\-%s\n", flag);
    snprintf(bi, sizeof bi, "\n.TP\n.BI \\-\\-%s ", flag);
    const char *at = NULL;
    for (const char *p = sec; p && p < end && !at; p = strchr(p + 1, '\n'))
        if (strncmp(p, b, strlen(b)) == 0 || strncmp(p, bi, strlen(bi)) == 0)
            at = p + 5; /* its .B line */
    if (!at)
        return NULL;
    size_t k = 0;
    for (const char *p = at; *p && k + 3 < len;) {
        if (p != at && (strncmp(p, ".TP\n", 4) == 0 ||
                        strncmp(p, ".PP\n", 4) == 0 ||
                        strncmp(p, ".S", 2) == 0))
            break;
        if (*p == '.') /* a macro: its words follow */
            p += strcspn(p, " \n");
        for (; *p && *p != '\n' && k + 3 < len; p++) {
            if (*p == '"')
                continue;
            if (strncmp(p, "\\f", 2) == 0) {
                p += 2;
                continue;
            }
            if (strncmp(p, "\\(<=", 4) == 0 || strncmp(p, "\\(>=", 4) == 0) {
                buf[k++] = p[2];
                buf[k++] = p[3];
                p += 3;
                continue;
            }
            if (strncmp(p, "\\-", 2) == 0)
                p++;
            buf[k++] = *p;
        }
        buf[k++] = ' ';
        if (*p == '\n')
            p++;
    }
    buf[k] = 0;
    return buf;
}

/* Whether every number in words (a default in words: "5; 1000 for scd")
 * is a number of text too. */
static bool numbers_in(const char *words, const char *text)
{
    for (const char *p = words; *p; p++) {
        if (p != words && !strchr(" (;:,", p[-1]))
            continue;
        char *e;
        double v = strtod(p, &e);
        if (e == p || !(*p >= '0' && *p <= '9'))
            continue;
        bool found = false;
        for (const char *q = text; *q && !found; q++) {
            if (q != text && !strchr(" (;:,", q[-1]))
                continue;
            char *f;
            if (*q >= '0' && *q <= '9' && strtod(q, &f) == v && f != q)
                found = true;
        }
        if (!found)
            return false;
    }
    return true;
}

/* Whether text names word with "default" inside the parenthesis that
 * follows it ("logistic (default)", "ovr (one-vs-rest, the default"). */
static bool marked_default(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(text, word); p; p = strstr(p + 1, word)) {
        if ((p != text && p[-1] != ' ') || strncmp(p + n, " (", 2) != 0)
            continue;
        const char *close = strchr(p + n, ')');
        const char *d = strstr(p + n, "default");
        if (d && (!close || d < close))
            return true;
    }
    return false;
}

/* --help prints each of the table's flags with the table's default (the
 * rule, or the value); the man page describes each flag, and where its
 * entry states a default, it is the table's: every number of the
 * default's words, and an enumeration's default value marked as such. */
Test(options, help_and_man_page_follow_the_table)
{
    int rc = th_run(out, sizeof out, "'%s' train --help", th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    char *man = th_source("docs/hogtrain.1");
    size_t n;
    const hog_train_option *rows = hog_train_options(&n);
    unsigned flags = 0, man_defaults = 0;
    for (size_t i = 0; i < n; i++) {
        const hog_train_option *r = &rows[i];
        if (!r->flag)
            continue;
        flags++;
        char want[256];
        snprintf(want, sizeof want, "\n      --%s ", r->flag);
        const char *at = strstr(out, want);
        cr_assert_not_null(at, "--help has no line for --%s", r->flag);
        /* its lines (up to the next option or section) joined, so that a
         * default wrapped over two lines reads as one */
        const char *end = at + 1;
        while (*end && strncmp(end, "\n      -", 9) != 0 &&
               strncmp(end, "\n\n", 2) != 0)
            end++;
        char flat[2048];
        size_t k = 0;
        for (const char *p = at + 1; p < end && k + 1 < sizeof flat; p++)
            if (!(*p == ' ' || *p == '\n') || (k && flat[k - 1] != ' '))
                flat[k++] = *p == '\n' ? ' ' : *p;
        flat[k] = 0;
        char def[200];
        if (r->rule) {
            /* the rule's first words */
            snprintf(def, sizeof def, "(default %.12s", r->rule);
            for (char *q = def; *q; q++)
                if (*q == '\n')
                    *q = ' ';
        } else if (r->type == HOG_OPTION_DOUBLE) {
            snprintf(def, sizeof def, "(default %g)", r->def);
        } else if (r->type == HOG_OPTION_ENUM) {
            snprintf(def, sizeof def, "(default ");
        } else {
            snprintf(def, sizeof def, "(default %llu)",
                     (unsigned long long)r->def);
        }
        cr_assert(strstr(flat, def), "--help's --%s does not say \"%s\": %s",
                  r->flag, def, flat);
        if (!man)
            continue;
        snprintf(want, sizeof want, ".B \\-\\-%s", r->flag);
        char want2[256];
        snprintf(want2, sizeof want2, ".BI \\-\\-%s ", r->flag);
        cr_assert(strstr(man, want) || strstr(man, want2),
                  "docs/hogtrain.1 does not describe --%s", r->flag);
        char entry[4096];
        const char *text = man_entry(man, r->flag, entry, sizeof entry);
        cr_assert_not_null(text, "docs/hogtrain.1's train section has no "
                           "entry (.TP) for --%s", r->flag);
        if (!strstr(text, "default"))
            continue;
        man_defaults++;
        /* the default in --help's words: the table's rule or value */
        const char *from = strstr(flat, "(default ") + 9;
        char words[512];
        snprintf(words, sizeof words, "%.*s", (int)strcspn(from, ")"), from);
        cr_assert(numbers_in(words, text), "docs/hogtrain.1's --%s says "
                  "another default than the table's \"%s\": %s", r->flag,
                  words, text);
        if (r->type == HOG_OPTION_ENUM) {
            char word[64];
            snprintf(word, sizeof word, "%.*s", (int)strcspn(words, " ;:"),
                     words);
            cr_assert(marked_default(text, word), "docs/hogtrain.1's --%s "
                      "does not mark %s, the table's default: %s", r->flag,
                      word, text);
        }
    }
    cr_assert_geq(flags, 10);
    if (man)
        cr_assert_geq(man_defaults, 10);
    free(man);
    if (!man)
        cr_skip_test("docs/hogtrain.1 is not beside tests/; the man page "
                     "was not checked");
}

/* What `hogtrain train` runs with when given nothing, and with --algo
 * dcd, is what the library settles: the command holds no default of its
 * own (its --json report lists the options it trained with). */
Test(options, the_command_trains_with_the_librarys_defaults, .timeout = 120)
{
    TH_DATA_OR_SKIP(data, "heart_scale");
    char dir[1024], json[1100];
    th_tmpdir(dir, sizeof dir);
    snprintf(json, sizeof json, "%s/o.json", dir);
    struct {
        const char *args;
        hog_algo algo;
    } runs[] = { { "", HOG_ALGO_SERIAL }, { "--algo dcd", HOG_ALGO_DCD },
                 { "--algo hogwild --threads 2", HOG_ALGO_HOGWILD } };
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        int rc = th_run(out, sizeof out, "'%s' train '%s' %s -q --json '%s'",
                        th_bin(), data, runs[i].args, json);
        cr_assert_eq(rc, 0, "%s", out);
        rc = th_run(out, sizeof out,
                    "python3 -c 'import json,sys; o = json.load(open(sys."
                    "argv[1]))[\"options\"]; print(o[\"l2\"], o[\"eta\"], "
                    "o[\"epochs\"], o[\"tol\"], o[\"schedule\"], "
                    "o[\"update\"], o[\"seed\"], o[\"power\"], o[\"bias\"])' "
                    "'%s'", json);
        cr_assert_eq(rc, 0, "%s", out);
        hog_train_opts o = settled(runs[i].algo, HOG_LOSS_LOGISTIC);
        static const char *const sched[] = { "constant", "invscaling",
                                             "adagrad", "ftrl" };
        static const char *const upd[] = { "none", "atomic", "striped",
                                           "mutex" };
        double l2, eta, tol, power, bias;
        unsigned epochs;
        unsigned long long seed;
        char s1[32], s2[32];
        cr_assert_eq(sscanf(out, "%lf %lf %u %lf %31s %31s %llu %lf %lf",
                            &l2, &eta, &epochs, &tol, s1, s2, &seed, &power,
                            &bias), 9, "%s", out);
        cr_assert_eq(l2, o.l2, "%s: l2 %g, the library's %g", runs[i].args,
                     l2, o.l2);
        cr_assert_eq(eta, o.eta, "%s: eta", runs[i].args);
        cr_assert_eq(epochs, o.epochs, "%s: epochs %u, the library's %u",
                     runs[i].args, epochs, o.epochs);
        cr_assert_eq(tol, o.tol, "%s: tol", runs[i].args);
        cr_assert_str_eq(s1, sched[o.schedule], "%s: schedule",
                         runs[i].args);
        cr_assert_str_eq(s2, upd[o.update], "%s: update", runs[i].args);
        cr_assert_eq(seed, o.seed);
        cr_assert_eq(power, o.power);
        cr_assert_eq(bias, o.bias);
    }
}

/* ---- the conflicts' table (src/train/conflicts.c) ------------------------ */

#include "train/train.h"

/* Every row of the conflicts' table, from its own example: the options
 * and context it builds break that row and no row before it, and the walk
 * answers with the row's status and sentence. A row added without an
 * example, or whose predicate never holds, fails here. */
Test(options, every_conflict_row_refuses_its_example_with_its_sentence)
{
    size_t n = 0;
    while (hog_train_conflict(n))
        n++;
    cr_assert_geq(n, 60);
    hog_data binary, classes;
    memset(&binary, 0, sizeof binary);
    binary.labels = HOG_LABELS_BINARY;
    classes = binary;
    classes.labels = HOG_LABELS_REAL;
    for (size_t i = 0; i < n; i++) {
        const struct hog_conflict *r = hog_train_conflict(i);
        cr_assert(r->options && r->hit && r->sentence && r->example,
                  "row %zu is incomplete", i);
        cr_assert_eq(r->detail != NULL, strstr(r->sentence, "%s") != NULL,
                     "row %zu (%s): a detail and its %%s go together", i,
                     r->options);
        hog_train_opts o;
        hog_train_opts_init(&o);
        struct hog_conflict_ctx c;
        memset(&c, 0, sizeof c);
        r->example(&o, &c);
        hog_err err;
        cr_assert_eq(hog_train_opts_resolve(&o, NULL, &err), HOG_OK,
                     "row %zu (%s): %s", i, r->options, err.msg);
        c.o = &o;
        c.train = r->data == HOG_CONFLICT_CLASSES ? &classes
                  : r->data == HOG_CONFLICT_DATA  ? &binary
                                                  : NULL;
        cr_assert(r->hit(&c), "row %zu (%s): its example does not break it",
                  i, r->options);
        hog_err want;
        hog_status ws = hog_conflict_refuse(r, &c, &want);
        cr_assert_eq(ws, r->status);
        cr_assert_eq(strstr(want.msg, "%s"), NULL, "row %zu: %s", i, want.msg);
        hog_status st = hog_train_conflicts_check(&c, &err);
        cr_assert_eq(st, r->status, "row %zu (%s): %s", i, r->options,
                     err.msg);
        cr_assert_str_eq(err.msg, want.msg, "row %zu (%s)", i, r->options);
        /* the defaults break no row */
        hog_train_opts_init(&o);
        cr_assert_eq(hog_train_opts_resolve(&o, NULL, &err), HOG_OK);
        hog_conflict_ctx_of(&c, &o, NULL, c.train, false);
        cr_assert_eq(hog_train_conflicts_check(&c, &err), HOG_OK, "%s",
                     err.msg);
    }
}
