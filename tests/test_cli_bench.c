/* The command's bench as a user runs it: its plot. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"

#define OUT_MAX (1 << 16)

static char out[OUT_MAX];

/* hogtrain bench --plot: every algorithm of the grid drawn, each series in
 * one colour in both panels, the legends below the panels (off the ideal
 * line), an opaque background; written through a temporary file. */
Test(cli, bench_plot_draws_every_algorithm, .timeout = 120)
{
    if (th_run(out, sizeof out, "command -v gnuplot") != 0)
        cr_skip_test("gnuplot is not installed; skipping");
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    int rc = th_run(out, sizeof out,
                    "cd '%s' && '%s' gen -q --rows 3000 --features 500 "
                    "--nnz 10 -o g.svm && HOGTRAIN_TEST_PLOT_SCRIPT=p.gp '%s' "
                    "bench g.svm --algo hogwild,cyclades --threads 1,2 "
                    "--update none,mutex --epochs 1 --repeat 1 -q "
                    "--oversubscribe --plot p.svg > /dev/null",
                    dir, th_bin(), th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    /* the SVG itself: a white rectangle under everything, each series */
    char path[1100];
    snprintf(path, sizeof path, "%s/p.svg", dir);
    rc = th_run(out, sizeof out, "grep -c '<rect x=\"0\" y=\"0\" width=\"1000\" "
                "height=\"[0-9]*\" fill=\"#ffffff\"' '%s' && for t in "
                "'hogwild none' 'hogwild mutex' cyclades; do grep -q "
                "\"<title>$t\" '%s' || { echo no $t; exit 1; }; done", path,
                path);
    cr_assert_eq(rc, 0, "%s", out);
    /* the script: the legend, the background, a colour per series */
    snprintf(path, sizeof path, "%s/p.gp", dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "no plot script %s", path);
    char line[8192], plots[2][8192];
    int np = 0;
    bool key_below = false, white = false;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "plot ", 5) == 0 && np < 2)
            snprintf(plots[np++], sizeof plots[0], "%s", line);
        key_below |= strncmp(line, "set key below", 13) == 0;
        white |= strstr(line, "background rgb 'white'") != NULL;
    }
    fclose(f);
    cr_assert_eq(np, 2, "not two panels in %s", path);
    cr_assert(key_below, "the legend is inside a panel");
    cr_assert(white, "no opaque background");
    static const char *const series[] = { "hogwild none", "hogwild mutex",
                                          "cyclades" };
    for (size_t i = 0; i < 3; i++) {
        char colour[2][16];
        for (int p = 0; p < 2; p++) {
            char t[64];
            snprintf(t, sizeof t, "title '%s", series[i]);
            char *at = strstr(plots[p], t);
            cr_assert_not_null(at, "no %s in panel %d:\n%s", series[i], p + 1,
                               plots[p]);
            *at = '\0'; /* its colour is the last before its title */
            char *lc = NULL;
            for (char *q = plots[p]; (q = strstr(q, "lc rgb '")); q++)
                lc = q;
            cr_assert_not_null(lc);
            snprintf(colour[p], sizeof colour[0], "%.7s", lc + 8);
            *at = 't';
        }
        cr_assert_str_eq(colour[0], colour[1], "%s changes colour", series[i]);
    }
    th_assert_no_temporaries(dir);
}

/* A failed write to standard output is an error, whatever the command:
 * exit 1 and a sentence, not 0 having written nothing. */
