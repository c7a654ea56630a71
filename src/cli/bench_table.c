/* hogtrain bench's output: the table on standard output, the same as
 * CSV, and the lines under the table. */
#include "cli/bench.h"

#include <math.h>
#include <string.h>

static const char *fmt_num(char *buf, size_t len, double v, const char *f)
{
    if (!isfinite(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, f, v);
    return buf;
}

void hog_cli_bench_print_table(FILE *f, const struct cell *c, unsigned n,
                               bool regression, bool test)
{
    fprintf(f, "%-8s %-8s %-8s %7s %10s %8s %8s %8s %6s %12s %9s\n", "algo",
            "update", "replicas", "threads", "nnz/s", "x 1thr", "x serial",
            "control", "eff", "to obj (s)",
            regression ? (test ? "test RMSE" : "train RMSE")
                       : (test ? "test acc" : "train acc"));
    for (unsigned i = 0; i < n; i++) {
        char b[7][32];
        bool serial = strcmp(c[i].algo, "serial") == 0 ||
                      strcmp(c[i].algo, "cyclades") == 0;
        fprintf(f, "%-8s %-8s %-8s %7u %10s %8s %8s %8s %6s %12s %9s\n",
                c[i].algo, serial ? "-" : hog_cli_update_name(c[i].update),
                serial ? "-" : c[i].mode,
                c[i].threads, hog_cli_si(b[0], 32, c[i].r.nnz_s),
                fmt_num(b[1], 32, c[i].speedup1, "%.2f"),
                fmt_num(b[2], 32, c[i].speedup_serial, "%.2f"),
                fmt_num(b[3], 32, c[i].control, "%.2f"),
                fmt_num(b[4], 32, c[i].efficiency, "%.2f"),
                isfinite(c[i].r.to_obj)
                    ? fmt_num(b[5], 32, c[i].r.to_obj, "%.3f")
                    : "not reached",
                regression ? fmt_num(b[6], 32, c[i].r.metric, "%.4f")
                           : fmt_num(b[6], 32, c[i].r.metric, "%.2f%%"));
    }
}

static void write_csv(FILE *f, const struct cell *c, unsigned n)
{
    fprintf(f, "algo,update,replicas,threads,nnz_per_s,speedup_1thread,"
               "speedup_serial,control_speedup,efficiency,seconds_to_objective,"
               "objective,test_metric,train_seconds,replica_syncs\n");
    for (unsigned i = 0; i < n; i++) {
        const struct cell *x = &c[i];
        fprintf(f, "%s,%s,%s,%u,%.6g,%.4f,%.4f,%.4f,%.4f,", x->algo,
                hog_cli_update_name(x->update),
                x->algo[0] == 's' ? "-" : x->mode, x->threads, x->r.nnz_s,
                x->speedup1, x->speedup_serial, x->control, x->efficiency);
        if (isfinite(x->r.to_obj))
            fprintf(f, "%.4f", x->r.to_obj);
        fprintf(f, ",%.8g,%.6g,%.4f,%llu\n", x->r.objective, x->r.metric,
                x->r.seconds, (unsigned long long)x->r.syncs);
    }
}

hog_status hog_cli_bench_save_csv(const char *path, const struct cell *c,
                                  unsigned n, hog_err *err)
{
    hog_outfile o;
    hog_status s = hog_outfile_open(&o, path, err);
    if (s != HOG_OK)
        return s;
    write_csv(o.f, c, n);
    return hog_outfile_commit(&o, err);
}

/* Cyclades against Hogwild! (none, shared) and the locked modes at each
 * thread count above 1: the figures of its benchmark targets. */
static void print_cyclades_targets(const struct cell *c, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        if (strcmp(c[i].algo, "cyclades") != 0 || c[i].threads < 2)
            continue;
        const struct cell *hw = NULL;
        double locked_best = 0;
        const char *locked_name = NULL;
        for (unsigned j = 0; j < n; j++) {
            if (strcmp(c[j].algo, "hogwild") != 0 ||
                c[j].threads != c[i].threads ||
                c[j].replicas != HOG_REPLICAS_SHARED || c[j].hot)
                continue;
            if (c[j].update == HOG_UPDATE_NONE)
                hw = &c[j];
            else if (c[j].r.nnz_s > locked_best) {
                locked_best = c[j].r.nnz_s;
                locked_name = hog_cli_update_name(c[j].update);
            }
        }
        printf("Cyclades at %u threads: parallel efficiency %.2f", c[i].threads,
               c[i].efficiency);
        if (hw)
            printf(", %.2fx Hogwild!'s nonzeros/s", c[i].r.nnz_s / hw->r.nnz_s);
        if (locked_name)
            printf(", %.2fx the fastest locked mode (%s)",
                   c[i].r.nnz_s / locked_best, locked_name);
        printf("\n");
    }
}


void hog_cli_bench_print_notes(const struct cell *cells, unsigned n,
                               double stream, double target)
{
    char b1[32], b2[32];
    printf("\nstream (1 thread summing indices and values): %s nnz/s\n",
           hog_cli_si(b1, 32, stream));
    for (unsigned i = 1; i < n; i++)
        if (strcmp(cells[i].algo, "hogwild") == 0 &&
            cells[i].update == HOG_UPDATE_NONE &&
            cells[i].replicas == HOG_REPLICAS_SHARED && !cells[i].hot) {
            double per = cells[i].r.nnz_s / cells[i].threads;
            printf("Hogwild! at %u thread%s: %s nnz/s per thread = %.0f%% of "
                   "the stream\n",
                   cells[i].threads, cells[i].threads == 1 ? "" : "s",
                   hog_cli_si(b2, 32, per), 100.0 * per / stream);
        }
    for (unsigned i = 1; i < n; i++)
        if (cells[i].hot && cells[i].threads > 1) {
            const hog_hot_stats *h = &cells[i].r.hot;
            printf("%s %s, %u threads: %llu hot features%s per thread (%.0f%% "
                   "of the nonzeros), folded %llu times\n",
                   cells[i].mode, hog_cli_update_name(cells[i].update),
                   cells[i].threads, (unsigned long long)h->hot_features,
                   h->bias_hot ? " and the bias" : "",
                   100.0 * h->hot_nnz_share, (unsigned long long)h->folds);
        }
    print_cyclades_targets(cells, n);
    printf("control: each thread trains its own private model on its own rows "
           "(nothing shared); eff = x 1thr / control\n");
    printf("to obj: seconds until the objective is within 0.1%% of the serial "
           "run's final %.6g\n", target);
}
