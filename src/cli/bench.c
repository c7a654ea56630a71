/* hogtrain bench: Hogwild! and the locked update modes over a grid of
 * thread counts, on one loaded copy of the data, next to the machine's own
 * parallel capacity.
 *
 * Every cell is the median of --repeat runs. Besides the grid it runs:
 *   serial   the serial trainer: the baseline of "x serial" and the target
 *            objective of "to objective";
 *   control  T threads that share nothing: each runs the same SGD on its own
 *            private model over its own rows (hogwild with one replica per
 *            thread, never averaged). Its speedup is what this machine gives
 *            a perfectly parallel SGD at T threads; a mode's parallel
 *            efficiency is its speedup divided by the control's;
 *   stream   one thread summing the indices and values of the data's arrays:
 *            the memory system's pace for one core, the ceiling of any pass.
 * With --algo ...,cyclades the grid also has one Cyclades row per thread
 * count (partitioning included in its time), and a summary line per thread
 * count compares it with Hogwild! and the locked modes.
 */
#include "cli/bench.h"
#include "train/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    OPT_THREADS = HOG_CLI_OPT_OWN, /* a list: bench's own --threads */
    OPT_UPDATE,
    OPT_ALGO,
    OPT_REPLICAS,
    OPT_EPOCHS,
    OPT_REPEAT,
    OPT_CSV,
    OPT_PLOT,
    OPT_LOSS,
    OPT_L1,
    OPT_L2,
    OPT_ETA,
    OPT_SCHEDULE,
    OPT_BIAS,
    OPT_SEED,
    OPT_BIND,
    OPT_SYNC_EVERY,
    OPT_OVERSUBSCRIBE,
    OPT_NO_SMT,
    OPT_HOT,
    OPT_C,
    OPT_REG,
};

static const struct option longopts[] = {
    { "test", required_argument, NULL, 't' },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { "threads", required_argument, NULL, OPT_THREADS },
    { "update", required_argument, NULL, OPT_UPDATE },
    { "algo", required_argument, NULL, OPT_ALGO },
    { "replicas", required_argument, NULL, OPT_REPLICAS },
    { "epochs", required_argument, NULL, OPT_EPOCHS },
    { "repeat", required_argument, NULL, OPT_REPEAT },
    { "csv", required_argument, NULL, OPT_CSV },
    { "plot", required_argument, NULL, OPT_PLOT },
    { "loss", required_argument, NULL, OPT_LOSS },
    { "l1", required_argument, NULL, OPT_L1 },
    { "l2", required_argument, NULL, OPT_L2 },
    { "eta", required_argument, NULL, OPT_ETA },
    { "schedule", required_argument, NULL, OPT_SCHEDULE },
    { "bias", required_argument, NULL, OPT_BIAS },
    { "seed", required_argument, NULL, OPT_SEED },
    { "bind", required_argument, NULL, OPT_BIND },
    { "sync-every", required_argument, NULL, OPT_SYNC_EVERY },
    { "oversubscribe", no_argument, NULL, OPT_OVERSUBSCRIBE },
    { "no-smt", no_argument, NULL, OPT_NO_SMT },
    { "zero-based", no_argument, NULL, HOG_CLI_OPT_ZERO_BASED },
    { "hot", required_argument, NULL, OPT_HOT },
    { "C", required_argument, NULL, OPT_C },
    { "reg", required_argument, NULL, OPT_REG },
    { NULL, 0, NULL, 0 },
};

static void help(FILE *f)
{
    fprintf(f,
            "\n"
            "Trains on DATA over a grid of thread counts, update modes and replica\n"
            "modes (one loaded copy of the data), and prints a table: nonzeros/s,\n"
            "speedup over 1 thread of the same mode and over serial SGD, the\n"
            "machine's own parallel capacity at that thread count (the control:\n"
            "threads that share nothing), parallel efficiency (speedup / control\n"
            "speedup), seconds to reach the serial run's final objective (within\n"
            "0.1%%) and the final test metric. Each cell is the median of K runs.\n"
            "\n"
            "grid:\n"
            "      --threads LIST     thread counts, e.g. 1,2,4 (default 1 and powers\n"
            "                         of two up to the online CPUs)\n"
            "      --update LIST      none,atomic,striped,mutex (default all four)\n"
            "      --algo LIST        hogwild, cyclades (default hogwild; serial always\n"
            "                         runs as the baseline)\n"
            "      --replicas LIST    shared,node,core (default shared)\n"
            "      --hot LIST         hot-feature replicas, e.g. 0,auto: 0 is plain\n"
            "                         Hogwild!, K or auto keeps the K (auto: those in\n"
            "                         1/32 of the rows) most frequent features and the\n"
            "                         bias per thread (rows 'hot:K'; shared model,\n"
            "                         update none, atomic and mutex only; default 0)\n"
            "      --epochs N         epochs per run (default 10)\n"
            "      --repeat K         runs per cell; the median is reported (default 3)\n"
            "\n"
            "output:\n"
            "  -t, --test FILE        the test set of the metric column\n"
            "      --csv FILE         also write the table as CSV\n"
            "      --plot FILE        draw speedup and time to objective against\n"
            "                         threads with gnuplot (.png or .svg); without\n"
            "                         gnuplot, says so and writes the CSV alone\n"
            "  -q, --quiet            no progress lines\n"
            "\n"
            "training (as in hogtrain train): --loss, --l1, --l2, --C (LIBLINEAR's C:\n"
            "l2 = 1/(C n), or l1 with --reg l1), --eta, --schedule, --bias, --seed,\n"
            "--bind, --no-smt, --oversubscribe, --sync-every, --zero-based.\n");
}

static const struct hog_cli_cmd cmd = {
    "bench",
    "hogtrain bench DATA [-t TEST] [--threads 1,2,4] [--update none,atomic,...]\n"
    "                      [--algo hogwild,cyclades] [--replicas shared,...]\n"
    "                      [--hot 0,auto] [--epochs N]\n"
    "                      [--repeat K] [--csv FILE] [--plot FILE.png|FILE.svg]",
    help,
    NULL,
};


/* Splits a comma list; parse returns -1 for a bad item. */
static int parse_list(const char *opt, const char *s, int (*parse)(const char *),
                      int *out, unsigned *n)
{
    char buf[1024];
    if (strlen(s) >= sizeof buf)
        return hog_cli_usage_error(&cmd, "--%s: list too long", opt);
    strcpy(buf, s);
    *n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int v = parse(tok);
        if (v < 0)
            return hog_cli_usage_error(&cmd, "--%s: bad item '%s' in '%s'",
                                       opt, tok, s);
        if (*n == MAX_LIST)
            return hog_cli_usage_error(&cmd, "--%s: more than %d items", opt,
                                       MAX_LIST);
        for (unsigned i = 0; i < *n; i++)
            if (out[i] == v)
                return hog_cli_usage_error(&cmd, "--%s: '%s' given twice",
                                           opt, tok);
        out[(*n)++] = v;
    }
    if (*n == 0)
        return hog_cli_usage_error(&cmd, "--%s: empty list", opt);
    return -1;
}

static int parse_threads_item(const char *s)
{
    uint64_t u;
    return hog_parse_u64(s, 1, 4096, &u) ? (int)u : -1;
}

static int parse_algo_item(const char *s)
{
    int a = hog_cli_algo_parse(s);
    return a == HOG_ALGO_HOGWILD || a == HOG_ALGO_SERIAL ||
                   a == HOG_ALGO_CYCLADES
               ? a
               : -1;
}

static int parse(int argc, char **argv, struct bench_args *a)
{
    hog_train_opts_init(&a->o);
    hog_load_opts_init(&a->lo);
    a->o.epochs = 10;
    a->repeat = 3;
    int ch, rc, tmp[MAX_LIST];
    unsigned n = 0;
    uint64_t u;
    struct hog_cli_parser op;
    hog_cli_parser_init(&op, &cmd, "t:qh", longopts);
    op.load = &a->lo; /* --zero-based; its --threads is a list */
    op.train = &a->o;
    while ((ch = hog_cli_getopt(&op, argc, argv)) > 0) {
        const char *name = hog_cli_opt_name(longopts, ch);
        switch (ch) {
        case 't': a->test = optarg; break;
        case 'q': a->quiet = true; break;
        case OPT_CSV: a->csv = optarg; break;
        case OPT_PLOT: a->plot = optarg; break;
        case OPT_BIND: a->o.bind = optarg; break;
        case OPT_OVERSUBSCRIBE: a->o.oversubscribe = 1; break;
        case OPT_NO_SMT: a->o.no_smt = 1; break;
        case OPT_THREADS:
            if ((rc = parse_list(name, optarg, parse_threads_item, tmp, &n)) >= 0)
                return rc;
            for (unsigned i = 0; i < n; i++)
                a->threads[i] = (unsigned)tmp[i];
            a->nthreads = n;
            break;
        case OPT_UPDATE:
            if ((rc = parse_list(name, optarg, hog_cli_update_parse, a->update,
                                 &a->nupdate)) >= 0)
                return rc;
            break;
        case OPT_REPLICAS:
            if ((rc = parse_list(name, optarg, hog_cli_replicas_parse,
                                 a->replicas, &a->nreplicas)) >= 0)
                return rc;
            break;
        case OPT_HOT: {
            char buf[1024];
            snprintf(buf, sizeof buf, "%s", optarg);
            a->nhot = 0;
            for (char *sv = NULL, *t = strtok_r(buf, ",", &sv); t;
                 t = strtok_r(NULL, ",", &sv)) {
                if (a->nhot == MAX_LIST)
                    return hog_cli_usage_error(&cmd, "--hot: at most %d "
                                               "items", MAX_LIST);
                if (hog_cli_hot_parse(t, UINT32_MAX, &a->hot[a->nhot++]) != 0)
                    return hog_cli_usage_error(&cmd, "--hot: '%s' is not "
                                               "auto, off or a number of "
                                               "features", t);
            }
            break;
        }
        case OPT_ALGO:
            /* hogwild is the grid; serial always runs as the baseline */
            if ((rc = parse_list(name, optarg, parse_algo_item, tmp, &n)) >= 0)
                return rc;
            for (unsigned i = 0; i < n; i++) {
                a->hogwild |= tmp[i] == HOG_ALGO_HOGWILD;
                a->cyclades |= tmp[i] == HOG_ALGO_CYCLADES;
            }
            if (!a->hogwild && !a->cyclades)
                a->hogwild = true; /* "serial" alone: the default grid */
            break;
        case OPT_EPOCHS:
        case OPT_REPEAT:
            if ((rc = hog_cli_opt_u64(&cmd, name, optarg, 1, 1000000, &u,
                                      "a count (1 to 1000000)")) != HOG_EXIT_OK)
                return rc;
            *(ch == OPT_EPOCHS ? &a->o.epochs : &a->repeat) = (unsigned)u;
            break;
        case OPT_SEED:
        case OPT_SYNC_EVERY:
            if ((rc = hog_cli_opt_u64(&cmd, name, optarg, 0, UINT64_MAX,
                                      ch == OPT_SEED ? &a->o.seed
                                                     : &a->o.sync_every,
                                      "a non-negative integer")) != HOG_EXIT_OK)
                return rc;
            break;
        default:
            return hog_cli_bad_option(&cmd, '?', argv);
        }
    }
    if (ch < 0)
        return op.status;
    if (!op.seen[OPT_ALGO])
        a->hogwild = true;
    static const char *const files[] = { "DATA" };
    if ((rc = hog_cli_operands(&cmd, argc, argv, 1, files, NULL)) >= 0)
        return rc;
    a->data = argv[optind];
    /* AdaGrad unless --schedule says otherwise: the grid's cells (replicas,
     * hot features) would not all resolve to the same schedule */
    if (!op.seen[OPT_SCHEDULE])
        a->o.schedule = HOG_SCHED_ADAGRAD;
    bool hot = false;
    for (unsigned i = 0; i < a->nhot; i++)
        hot |= a->hot[i] != 0;
    if (a->o.schedule == HOG_SCHED_FTRL && (a->cyclades || hot))
        /* Cyclades and hot-feature replicas keep weights of their own,
         * which FTRL's closed form does not run */
        return hog_cli_usage_error(&cmd, "--schedule ftrl: %s do%s not run "
                                   "it; leave %s out of the grid",
                                   a->cyclades ? "Cyclades" : "hot-feature "
                                   "replicas (--hot)",
                                   a->cyclades ? "es" : "",
                                   a->cyclades ? "--algo cyclades"
                                               : "--hot");
    if (!a->nthreads) {
        unsigned cpus = hog_online_cpus();
        for (unsigned t = 1; t <= cpus && a->nthreads < MAX_LIST; t *= 2)
            a->threads[a->nthreads++] = t;
        if (a->threads[a->nthreads - 1] != cpus && a->nthreads < MAX_LIST)
            a->threads[a->nthreads++] = cpus;
    }
    if (!a->nupdate)
        for (int u2 = 0; u2 <= HOG_UPDATE_MUTEX; u2++)
            a->update[a->nupdate++] = u2;
    if (!a->nreplicas)
        a->replicas[a->nreplicas++] = HOG_REPLICAS_SHARED;
    if (!a->nhot)
        a->hot[a->nhot++] = 0;
    const char *outs[] = { a->csv, a->plot };
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++)
        if (outs[i] && (hog_cli_same_file(outs[i], a->data) ||
                        (a->test && hog_cli_same_file(outs[i], a->test))))
            return hog_cli_usage_error(&cmd, "%s would overwrite an input",
                                       outs[i]);
    if (a->plot) {
        const char *dot = strrchr(a->plot, '.');
        if (!dot || (strcmp(dot, ".png") != 0 && strcmp(dot, ".svg") != 0))
            return hog_cli_usage_error(&cmd, "--plot: '%s' must end in .png or "
                                       ".svg", a->plot);
    }
    return -1;
}

/* ---- the grid ------------------------------------------------------------------ */

/* The cells, into cells[] (room for all): serial, the controls, then the
 * Hogwild! grid and Cyclades. Returns how many. */
static unsigned grid(const struct bench_args *a, struct cell *cells)
{
    unsigned n = 0;
    cells[n++] = (struct cell){ .algo = "serial", .threads = 1 };
    for (unsigned ti = 0; ti < a->nthreads; ti++) {
        cells[n] = (struct cell){ .algo = "control",
                                  .update = HOG_UPDATE_NONE,
                                  .replicas = HOG_REPLICAS_CORE,
                                  .threads = a->threads[ti] };
        snprintf(cells[n++].mode, sizeof cells->mode, "core");
    }
    /* hot-feature replicas run on the shared model, without stripes */
    for (unsigned ri = 0; a->hogwild && ri < a->nreplicas; ri++)
        for (unsigned hi = 0; hi < a->nhot; hi++)
            for (unsigned ui = 0; ui < a->nupdate; ui++)
                for (unsigned ti = 0; ti < a->nthreads; ti++) {
                    uint64_t k = a->hot[hi];
                    if (k && (a->replicas[ri] != HOG_REPLICAS_SHARED ||
                              a->update[ui] == HOG_UPDATE_STRIPED))
                        continue;
                    struct cell *c = &cells[n++];
                    *c = (struct cell){ .algo = "hogwild",
                                        .update = (hog_update)a->update[ui],
                                        .replicas = (hog_replicas)a->replicas[ri],
                                        .hot = k,
                                        .threads = a->threads[ti] };
                    if (!k)
                        snprintf(c->mode, sizeof c->mode, "%s",
                                 hog_cli_replicas_name(c->replicas));
                    else if (k == HOG_HOT_AUTO)
                        snprintf(c->mode, sizeof c->mode, "hot:auto");
                    else
                        snprintf(c->mode, sizeof c->mode, "hot:%llu",
                                 (unsigned long long)k);
                }
    for (unsigned ti = 0; a->cyclades && ti < a->nthreads; ti++) {
        cells[n] = (struct cell){ .algo = "cyclades",
                                  .update = HOG_UPDATE_NONE,
                                  .replicas = HOG_REPLICAS_SHARED,
                                  .threads = a->threads[ti] };
        snprintf(cells[n++].mode, sizeof cells->mode, "-");
    }
    return n;
}

/* Each cell's speedups: over 1 thread of the same kind, over serial
 * (cells[0]); the control's (cells[1 .. nthreads]) at its thread count. */
static void speedups(struct cell *cells, unsigned n, unsigned nthreads)
{
    for (unsigned i = 0; i < n; i++) {
        struct cell *c = &cells[i];
        c->speedup1 = c->speedup_serial = c->control = c->efficiency = NAN;
        c->speedup_serial = c->r.nnz_s / cells[0].r.nnz_s;
        if (i == 0)
            continue;
        for (unsigned j = 1; j < n; j++)
            if (cells[j].threads == 1 && strcmp(cells[j].algo, c->algo) == 0 &&
                cells[j].update == c->update &&
                cells[j].replicas == c->replicas && cells[j].hot == c->hot)
                c->speedup1 = c->r.nnz_s / cells[j].r.nnz_s;
        for (unsigned j = 1; j <= nthreads; j++)
            if (cells[j].threads == c->threads)
                c->control = cells[j].speedup1;
        c->efficiency = c->speedup1 / c->control;
    }
}

/* ---- the command -------------------------------------------------------------- */

int hog_cli_bench(int argc, char **argv)
{
    struct bench_args a;
    memset(&a, 0, sizeof a);
    int rc = parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    hog_err err = { { 0 } };
    hog_status s = HOG_OK;
    hog_data *d = NULL, *test = NULL;
    struct cell *cells = NULL;
    const char *csv = a.csv;
    char csv_buf[4200];
    bool plot = a.plot != NULL;
    if (plot && !hog_cli_have_gnuplot()) {
        if (!csv) {
            snprintf(csv_buf, sizeof csv_buf, "%.*s.csv",
                     (int)(strrchr(a.plot, '.') - a.plot), a.plot);
            csv = csv_buf;
        }
        fprintf(stderr, "hogtrain bench: gnuplot is not installed; no plot, "
                        "writing the CSV alone to %s\n", csv);
        plot = false;
    }
    const char *const ins[] = { a.data, a.test };
    if ((s = hog_cli_check_readable(ins, 2, &err)) != HOG_OK ||
        (csv && (s = hog_outfile_check(csv, &err)) != HOG_OK) ||
        (plot && (s = hog_outfile_check(a.plot, &err)) != HOG_OK))
        goto fail;
    if ((s = hog_cli_load(a.data, &a.lo, a.quiet, &d, NULL, &err)) != HOG_OK)
        goto fail;
    if (a.test) {
        hog_load_opts tl = a.lo;
        tl.n_features = hog_data_features(d);
        if ((s = hog_cli_load(a.test, &tl, a.quiet, &test, NULL, &err)) !=
            HOG_OK)
            goto fail;
    }

    unsigned ncells = 1 + a.nthreads * (1 + a.nupdate * a.nreplicas * a.nhot + 1);
    cells = calloc(ncells, sizeof *cells);
    if (!cells) {
        s = hog_errf(&err, HOG_ENOMEM, "out of memory");
        goto fail;
    }
    unsigned n = grid(&a, cells);
    double load0 = hog_cli_bench_load_avg();
    double t_start = hog_now();
    if (!a.quiet)
        fprintf(stderr, "bench: %u cells x %u runs of %u epochs; load average "
                        "%.2f on %u CPUs\n",
                n, a.repeat, a.o.epochs, load0, hog_online_cpus());
    /* Repeats round-robin over the cells, so that a busy spell of a shared
     * machine slows every cell alike. The serial run is deterministic: its
     * first objective is the target of all. */
    struct result *runs = calloc((size_t)n * a.repeat, sizeof *runs);
    if (!runs) {
        s = hog_errf(&err, HOG_ENOMEM, "out of memory");
        goto fail;
    }
    for (unsigned i = 0; i < n; i++)
        cells[i].runs = runs + (size_t)i * a.repeat;
    double target = NAN;
    for (unsigned r = 0; r < a.repeat; r++)
        for (unsigned i = 0; i < n; i++) {
            s = hog_cli_bench_run_cell(&a, d, test, &cells[i], r, target, &err);
            if (s != HOG_OK) {
                free(runs);
                goto fail;
            }
            if (i == 0 && r == 0)
                target = cells[0].runs[0].objective;
        }
    for (unsigned i = 0; i < n; i++)
        cells[i].r = hog_cli_bench_median_of(cells[i].runs, a.repeat);
    free(runs);
    double stream = hog_cli_bench_stream_rate(d, a.repeat);
    if (!a.quiet && isatty(STDERR_FILENO))
        fputs("\r\033[K", stderr);

    speedups(cells, n, a.nthreads);

    bool regression = a.o.loss == HOG_LOSS_SQUARED;
    printf("hogtrain bench: %s, %llu rows, %llu features, %llu nonzeros; "
           "%s loss, %u epochs, median of %u\n",
           hog_cli_basename(a.data), (unsigned long long)hog_data_rows(d),
           (unsigned long long)hog_data_features(d),
           (unsigned long long)hog_data_nnz(d), hog_cli_loss_name(a.o.loss),
           a.o.epochs, a.repeat);
    hog_cli_bench_print_table(stdout, cells, n, regression, test != NULL);
    hog_cli_bench_print_notes(cells, n, stream, target);
    printf("load average %.2f before, %.2f after, %u CPUs online; %.0f s\n",
           load0, hog_cli_bench_load_avg(), hog_online_cpus(),
           hog_now() - t_start);
    fflush(stdout);

    if (csv && (s = hog_cli_bench_save_csv(csv, cells, n, &err)) != HOG_OK)
        goto fail;
    if (plot) {
        char title[256];
        snprintf(title, sizeof title, "%s, %s loss, %u epochs",
                 hog_cli_basename(a.data), hog_cli_loss_name(a.o.loss),
                 a.o.epochs);
        if ((s = hog_cli_bench_draw_plot(&a, cells, n, title, &err)) != HOG_OK)
            goto fail;
    }
    rc = HOG_EXIT_OK;
    goto out;
fail:
    rc = hog_cli_fail_status(s, &err);
out:
    free(cells);
    hog_data_free(test);
    hog_data_free(d);
    return rc;
}
