/* What hogtrain train says while and after it trains: the rates of the
 * epoch lines, the table and --json. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

static char out[1 << 17];

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
