/* hogtrain bench --plot: speedup and seconds to the serial objective
 * against threads, drawn by gnuplot (plot.c) from the script written
 * here. */
#include "cli/bench.h"

#include <math.h>
#include <string.h>

/* The rows of one series: Hogwild! with one update and replica mode, or
 * Cyclades (one mode of its own). */
static bool same_series(const struct cell *x, const struct cell *y)
{
    return strcmp(x->algo, y->algo) == 0 && x->update == y->update &&
           x->replicas == y->replicas && x->hot == y->hot;
}

/* One data block per series: threads, speedup, seconds to objective
 * (NaN: missing). Returns whether the series ever reached the objective. */
static bool plot_series(FILE *g, const char *name, const struct cell *c,
                        unsigned n, const struct cell *like)
{
    bool reached = false;
    fprintf(g, "$%s << EOD\n", name);
    for (unsigned i = 0; i < n; i++) {
        if (!same_series(&c[i], like))
            continue;
        fprintf(g, "%u", c[i].threads);
        const double v[2] = { c[i].speedup1, c[i].r.to_obj };
        for (int k = 0; k < 2; k++)
            isfinite(v[k]) ? fprintf(g, " %g", v[k]) : fputs(" NaN", g);
        fputc('\n', g);
        reached |= isfinite(c[i].r.to_obj);
    }
    fprintf(g, "EOD\n");
    return reached;
}


/* Colour-blind-safe (Okabe and Ito, then Tol's), none of them the black
 * of the control or the grey of the ideal line; series s keeps colour
 * s % 10 in both panels. */
static const char *const palette[] = {
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
    "#56B4E9", "#882255", "#117733", "#AA4499", "#44AA99",
};
#define N_PALETTE (sizeof palette / sizeof palette[0])
/* and a point type each (not 7, the control's filled circle) */
static const int point[N_PALETTE] = { 4, 5, 6, 8, 9, 10, 11, 12, 13, 14 };

/* The gnuplot script: two panels, speedup over 1 thread and seconds to the
 * serial objective against threads; one series per algorithm and mode of
 * the grid (Hogwild!'s update and replica modes, Cyclades), in one colour
 * in both; the legends below the panels, where they hide no line. */
static void plot_script(FILE *g, const struct bench_args *a,
                        const struct cell *c, unsigned n, const char *title,
                        const char *term)
{
    fprintf(g, "set terminal %s size 1000,460 background rgb 'white'\n",
            term);
    fprintf(g, "set datafile missing NaN\n");
    const struct cell *control = NULL;
    for (unsigned i = 0; i < n && !control; i++)
        if (strcmp(c[i].algo, "control") == 0)
            control = &c[i];
    plot_series(g, "control", c, n, control);
    const struct cell *series[64];
    bool reached[64];
    unsigned ns = 0;
    for (unsigned i = 0; i < n && ns < 64; i++) {
        if (strcmp(c[i].algo, "hogwild") != 0 &&
            strcmp(c[i].algo, "cyclades") != 0)
            continue;
        bool dup = false;
        for (unsigned j = 0; j < ns && !dup; j++)
            dup = same_series(series[j], &c[i]);
        if (dup)
            continue;
        char name[16];
        snprintf(name, sizeof name, "s%u", ns);
        reached[ns] = plot_series(g, name, c, n, &c[i]);
        series[ns++] = &c[i];
    }
    unsigned tmax = 1;
    for (unsigned i = 0; i < a->nthreads; i++)
        if (a->threads[i] > tmax)
            tmax = a->threads[i];
    bool modes = a->nreplicas > 1 || a->nhot > 1;
    fputs("set multiplot layout 1,2 title ", g);
    hog_cli_plot_quoted(g, title);
    fprintf(g, "\nset key below center Left reverse vertical maxrows 5\nset grid\n"
               "set xlabel 'threads'\nset xrange [0.8:%u]\nset xtics 1\n",
            tmax);
    for (int panel = 0; panel < 2; panel++) {
        if (panel == 0)
            fprintf(g, "set ylabel 'speedup over 1 thread'\nset yrange [0:*]\n"
                       "plot x title 'ideal' dt 2 lc rgb 'gray40', $control "
                       "using 1:2 with linespoints title 'control (no "
                       "sharing)' lw 2 pt 7 lc rgb 'black'");
        else
            fprintf(g, "set ylabel 'seconds to the serial objective'\n"
                       "set logscale y\nset yrange [*:*]\nplot");
        for (unsigned k = 0; k < ns; k++) {
            const struct cell *x = series[k];
            bool cyc = strcmp(x->algo, "cyclades") == 0;
            /* A series that never reached the objective has no point on
             * the right: its legend entry says so. */
            bool shown = panel == 0 || reached[k];
            fputs(panel == 0 || k > 0 ? ", " : " ", g);
            if (shown)
                fprintf(g, "$s%u using 1:%d", k, 2 + panel);
            else
                fputs("keyentry", g);
            fprintf(g, " with linespoints lw 2 pt %d lc rgb '%s' title "
                       "'%s%s%s%s%s'",
                    point[k % N_PALETTE], palette[k % N_PALETTE],
                    cyc ? "cyclades" : "hogwild ",
                    cyc ? "" : hog_cli_update_name(x->update),
                    !cyc && modes ? ", " : "", !cyc && modes ? x->mode : "",
                    shown ? "" : " (not reached)");
        }
        if (panel == 1 && ns == 0)
            fprintf(g, " $control using 1:3 with linespoints lw 2 lc rgb "
                       "'black' title 'control'");
        fputc('\n', g);
    }
    fprintf(g, "unset multiplot\n");
}

/* The script's body for hog_cli_plot. */
struct bench_plot {
    const struct bench_args *a;
    const struct cell *c;
    unsigned n;
    const char *title;
};

static void bench_script(FILE *g, const char *term, void *ctx)
{
    const struct bench_plot *p = ctx;
    plot_script(g, p->a, p->c, p->n, p->title, term);
}

hog_status hog_cli_bench_draw_plot(const struct bench_args *a,
                                   const struct cell *c, unsigned n,
                                   const char *title, hog_err *err)
{
    struct bench_plot p = { a, c, n, title };
    return hog_cli_plot(a->plot, bench_script, &p, err);
}
