/* What hogtrain train says while and after it trains: the rates of the
 * epoch lines, the table and --json, and how many lines a long
 * coordinate-descent run prints. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

static char out[1 << 19]; /* a log of 1,900 lines fits */

/* Each table row's rows/s times its seconds, over rows_per_epoch (one
 * epoch's rows): the epochs the row covers, as the printed figures say.
 * Rows whose seconds are too short to give two digits are left out. */
static unsigned table_epochs(const char *text, double rows_per_epoch,
                             double *epochs, unsigned max)
{
    const char *p = strstr(text, "\nepoch    objective");
    cr_assert_not_null(p, "no table:\n%s", text);
    unsigned n = 0;
    for (p = strchr(p + 1, '\n'); p && n < max; p = strchr(p + 1, '\n')) {
        const char *line = p + 1, *eol = strchr(line, '\n');
        unsigned epoch;
        char sp;
        /* a row: the epoch right-aligned in five columns */
        if (!eol || sscanf(line, "%5u%c", &epoch, &sp) != 2 || sp != ' ')
            break;
        /* the last columns: seconds (%.3f) and the rate ("6.6 k") */
        char row[512], *tok[32], *save;
        unsigned nt = 0;
        snprintf(row, sizeof row, "%.*s", (int)(eol - line), line);
        for (char *t = strtok_r(row, " ", &save); t && nt < 32;
             t = strtok_r(NULL, " ", &save))
            tok[nt++] = t;
        unsigned unit = nt && strchr("kMG", tok[nt - 1][0]) && !tok[nt - 1][1];
        cr_assert_geq(nt, 3 + unit, "%.*s", (int)(eol - line), line);
        double s = strtod(tok[nt - 2 - unit], NULL);
        double r = strtod(tok[nt - 1 - unit], NULL) *
                   (!unit ? 1.0 : tok[nt - 1][0] == 'k' ? 1e3
                          : tok[nt - 1][0] == 'M' ? 1e6 : 1e9);
        if (s >= 0.05 && isfinite(r))
            epochs[n++] = r * s / rows_per_epoch;
    }
    return n;
}

/* K classes step K weights for each entry of a row, but a row is trained
 * once an epoch: rows/s counts rows (20 classes of news20 made it 20 times
 * the rows trained). The table's figures and --json's say so alike. */
Test(report, k_class_rows_per_s_counts_each_row_once, .timeout = 120)
{
    TH_DATA_OR_SKIP(news20, "news20.train.svm");
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    static const char *const modes[] = { "softmax", "ovr" };
    for (size_t i = 0; i < 2; i++) {
        int rc = th_run(out, sizeof out,
                        "cd '%s' && head -n 1000 '%s' > k.svm && '%s' train "
                        "k.svm --multiclass %s --epochs 2 --threads 1 "
                        "--json r.json 2>&1 && python3 -c \"import json; "
                        "j = json.load(open('r.json')); "
                        "print('classes', j['classes']['count']); "
                        "[print('json epochs %%.6f' %% (e['rows_per_s'] * "
                        "e['seconds'] / j['data']['train']['rows'])) "
                        "for e in j['epochs']]\"",
                        dir, news20, th_bin(), modes[i]);
        cr_assert_eq(rc, 0, "%s", out);
        cr_assert_not_null(strstr(out, "classes 20\n"), "%s", out);
        /* softmax reports every epoch, one-vs-rest once for both */
        double per_report = i == 0 ? 1.0 : 2.0;
        unsigned reports = 0;
        for (const char *p = out; (p = strstr(p, "json epochs ")); p++) {
            double e = strtod(p + strlen("json epochs "), NULL);
            cr_assert_float_eq(e, per_report, 1e-5,
                               "%s: --json's rows_per_s x seconds is %g "
                               "epochs of rows, not %g:\n%s",
                               modes[i], e, per_report, out);
            reports++;
        }
        cr_assert_eq(reports, i == 0 ? 2u : 1u, "%s", out);
        double ep[8];
        unsigned n = table_epochs(out, 1000, ep, 8);
        for (unsigned k = 0; k < n; k++)
            cr_assert(ep[k] > 0.8 * per_report && ep[k] < 1.25 * per_report,
                      "%s: the table's rows/s x seconds is %.3g epochs of "
                      "rows, not %g:\n%s",
                      modes[i], ep[k], per_report, out);
    }
}

/* ---- long coordinate-descent runs ------------------------------------------ */

/* Epochs 1 to 10, 20, 30, ..., 100, 200, ... up to n: the schedule of the
 * epoch lines off a terminal and of the table's rows in a long run. */
static unsigned scheduled(unsigned n)
{
    unsigned c = 0;
    for (unsigned e = 1; e <= n; e++) {
        unsigned x = e;
        while (x > 10 && x % 10 == 0)
            x /= 10;
        c += x <= 10;
    }
    return c;
}

/* Lines "epoch N/M:" in text (the \r line's "epoch N/M  42%" is not one). */
static unsigned epoch_lines(const char *text)
{
    unsigned n = 0, e, cap;
    char colon;
    for (const char *p = text; (p = strstr(p, "epoch ")); p++)
        if ((p == text || p[-1] == '\n' || p[-1] == 'K') &&
            sscanf(p, "epoch %u/%u%c", &e, &cap, &colon) == 3 && colon == ':')
            n++;
    return n;
}

/* The table's rows: lines that start with the epoch in five columns. */
static unsigned table_rows(const char *text)
{
    const char *p = strstr(text, "\nepoch    objective");
    cr_assert_not_null(p, "no table:\n%s", text);
    unsigned n = 0, e;
    char sp;
    for (p = strchr(p + 1, '\n'); p && sscanf(p + 1, "%5u%c", &e, &sp) == 2 &&
                                  sp == ' ';
         p = strchr(p + 1, '\n'))
        n++;
    return n;
}

/* The "done: N epochs in S s" line's N and S. */
static void done_line(const char *text, unsigned *epochs, double *secs)
{
    const char *p = strstr(text, "\ndone: ");
    cr_assert_not_null(p, "no done: line:\n%s", text);
    cr_assert_eq(sscanf(p, "\ndone: %u epochs in %lf s", epochs, secs), 2,
                 "%s", p);
}

/* dcd on a9a with the hinge loss runs about 950 epochs of a few
 * milliseconds: its log holds the first ten epochs, the schedule's, and
 * the last (each once: the table after the run is bounded alike and says
 * so), not 1,900 lines; the last line says the tolerance ended it. */
Test(report, long_dcd_run_prints_a_bounded_log, .timeout = 120)
{
    TH_DATA_OR_SKIP(a9a, "a9a");
    int rc = th_run(out, sizeof out, "'%s' train --algo dcd --loss hinge "
                    "--threads 1 '%s'", th_bin(), a9a);
    cr_assert_eq(rc, 0, "%s", out);
    unsigned epochs;
    double secs;
    done_line(out, &epochs, &secs);
    cr_assert_gt(epochs, 100, "a short run tests no bound:\n%s", out);
    /* the schedule's, the last, and one per half minute between them */
    unsigned most = scheduled(epochs) + 1 + (unsigned)(secs / 30.0);
    unsigned lines = epoch_lines(out), rows = table_rows(out);
    cr_assert_leq(lines, most, "%u epoch lines for %u epochs:\n%s", lines,
                  epochs, out);
    cr_assert_geq(lines, scheduled(epochs), "%s", out);
    cr_assert_leq(rows, scheduled(epochs) + 1, "%u table rows:\n%s", rows, out);
    char last[64], shown[96];
    snprintf(last, sizeof last, "\nepoch %u/1000:", epochs);
    cr_assert_not_null(strstr(out, last), "no line for the last epoch:\n%s",
                       out);
    snprintf(shown, sizeof shown, "(%u of %u epochs shown", rows, epochs);
    cr_assert_not_null(strstr(out, shown), "%s", out);
    cr_assert_not_null(strstr(out, ", tolerance met (--tol 0.1)"), "%s", out);
    cr_assert_null(strstr(out, "epoch limit"), "%s", out);
}

/* On a terminal the lines come at most one every half second after the
 * first ten (and the last), whatever the epochs' pace. */
Test(report, long_dcd_run_on_a_terminal_prints_twice_a_second_at_most,
     .timeout = 120)
{
    TH_DATA_OR_SKIP(a9a, "a9a");
    if (th_run(out, sizeof out, "command -v script") != 0)
        cr_skip_test("script(1) is not installed (no terminal to run "
                     "under); skipping");
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    int rc = th_run(out, sizeof out, "cd '%s' && script -qec \"'%s' train "
                    "--algo dcd --loss hinge --threads 1 '%s'\" typescript",
                    dir, th_bin(), a9a);
    cr_assert_eq(rc, 0, "%s", out);
    unsigned epochs;
    double secs;
    done_line(out, &epochs, &secs);
    unsigned lines = epoch_lines(out);
    cr_assert_leq(lines, 10 + 1 + (unsigned)(2.0 * secs) + 1,
                  "%u epoch lines in %.2f s:\n%s", lines, secs, out);
}

/* The done: line of scd and dcd says what ended the run, the --epochs cap
 * or --tol; the SGD trainers always run every epoch and say neither. */
Test(report, done_line_says_tolerance_or_epoch_limit, .timeout = 60)
{
    TH_DATA_OR_SKIP(a9a, "a9a");
    int rc = th_run(out, sizeof out, "'%s' train --algo dcd --epochs 5 "
                    "--threads 1 '%s'", th_bin(), a9a);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert_not_null(strstr(out, "\ndone: 5 epochs in "), "%s", out);
    cr_assert_not_null(strstr(out, ", epoch limit reached (--epochs 5)"),
                       "%s", out);
    cr_assert_null(strstr(out, "tolerance met"), "%s", out);
    rc = th_run(out, sizeof out, "'%s' train --algo scd --loss logistic --l1 "
                "1e-3 --tol 0.1 --threads 1 '%s'", th_bin(), a9a);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert_not_null(strstr(out, ", tolerance met (--tol 0.1)"), "%s", out);
    rc = th_run(out, sizeof out, "'%s' train --epochs 2 '%s'", th_bin(), a9a);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert_null(strstr(out, "tolerance met"), "%s", out);
    cr_assert_null(strstr(out, "epoch limit"), "%s", out);
}
