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
#include "cli/cli.h"
#include "train/train.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

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
            "training (as in hogtrain train): --loss, --l1, --l2, --eta, --schedule,\n"
            "--bias, --seed, --bind, --no-smt, --oversubscribe, --sync-every,\n"
            "--zero-based.\n");
}

static const struct hog_cli_cmd cmd = {
    "bench",
    "hogtrain bench DATA [-t TEST] [--threads 1,2,4] [--update none,atomic,...]\n"
    "                      [--algo hogwild,cyclades] [--replicas shared,...]\n"
    "                      [--hot 0,auto] [--epochs N]\n"
    "                      [--repeat K] [--csv FILE] [--plot FILE.png|FILE.svg]",
    help,
};


#define MAX_LIST 32

struct bench_args {
    hog_train_opts o;
    hog_load_opts lo;
    const char *data, *test, *csv, *plot;
    unsigned threads[MAX_LIST], nthreads;
    hog_update update[MAX_LIST];
    unsigned nupdate;
    hog_replicas replicas[MAX_LIST];
    unsigned nreplicas;
    uint64_t hot[MAX_LIST];
    unsigned nhot;
    unsigned repeat;
    bool quiet;
    bool hogwild, cyclades; /* the --algo list */
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
    unsigned n;
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
            if ((rc = parse_list(name, optarg, hog_cli_update_parse, tmp, &n)) >= 0)
                return rc;
            for (unsigned i = 0; i < n; i++)
                a->update[i] = (hog_update)tmp[i];
            a->nupdate = n;
            break;
        case OPT_REPLICAS:
            if ((rc = parse_list(name, optarg, hog_cli_replicas_parse, tmp, &n)) >= 0)
                return rc;
            for (unsigned i = 0; i < n; i++)
                a->replicas[i] = (hog_replicas)tmp[i];
            a->nreplicas = n;
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
                if (hog_cli_hot_parse(t, &a->hot[a->nhot++]) != 0)
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
    hog_cli_model_finish(&op);
    if (!a->nthreads) {
        unsigned cpus = hog_online_cpus();
        for (unsigned t = 1; t <= cpus && a->nthreads < MAX_LIST; t *= 2)
            a->threads[a->nthreads++] = t;
        if (a->threads[a->nthreads - 1] != cpus && a->nthreads < MAX_LIST)
            a->threads[a->nthreads++] = cpus;
    }
    if (!a->nupdate)
        for (int u2 = 0; u2 <= HOG_UPDATE_MUTEX; u2++)
            a->update[a->nupdate++] = (hog_update)u2;
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

/* ---- one run ------------------------------------------------------------------ */

#define MAX_EPOCHS_KEPT 100000

struct run_log {
    unsigned n, cap;
    hog_epoch_stats *e;
    bool oom;
    /* progress on stderr */
    bool quiet;
    const char *label;
};

static void on_progress(void *ctx, unsigned epoch, unsigned epochs,
                        uint64_t done, uint64_t total,
                        const hog_epoch_stats *s)
{
    struct run_log *l = ctx;
    if (!s)
        return;
    if (l->n == l->cap) {
        unsigned cap = l->cap ? 2 * l->cap : 16;
        hog_epoch_stats *e = realloc(l->e, cap * sizeof *e);
        if (!e) {
            l->oom = true;
            return;
        }
        l->e = e;
        l->cap = cap;
    }
    l->e[l->n++] = *s;
    if (!l->quiet && isatty(STDERR_FILENO))
        fprintf(stderr, "\r  %-32s epoch %u/%u ", l->label, epoch, epochs);
}

struct result {
    double nnz_s;     /* nonzeros per second of training */
    double objective; /* final */
    double metric;    /* test (else train) accuracy %, or RMSE */
    double to_obj;    /* seconds to the target objective; INFINITY: never */
    double seconds;
    uint64_t syncs;
    hog_hot_stats hot; /* --hot: what the last run did */
};

static hog_status run_once(const hog_data *d, const hog_data *test,
                           const hog_train_opts *o, double target,
                           const char *label, bool quiet, struct result *r,
                           hog_err *err)
{
    struct run_log l = { .quiet = quiet, .label = label };
    hog_train_opts x = *o;
    x.progress = on_progress;
    x.progress_ctx = &l;
    x.hot_stats = &r->hot;
    hog_model *m = NULL;
    hog_status s = hog_train(d, test, &x, &m, err);
    hog_model_free(m);
    if (s == HOG_OK && (l.oom || l.n == 0))
        s = hog_errf(err, HOG_ENOMEM, "out of memory for the epoch log");
    if (s != HOG_OK) {
        free(l.e);
        return s;
    }
    const hog_epoch_stats *last = &l.e[l.n - 1];
    r->seconds = last->total_seconds;
    r->nnz_s = (double)hog_data_nnz(d) * l.n / last->total_seconds;
    r->objective = last->objective;
    bool reg = o->loss == HOG_LOSS_SQUARED;
    r->metric = last->has_test
                    ? (reg ? last->test_rmse : 100.0 * last->test_accuracy)
                    : (reg ? last->train_rmse : 100.0 * last->train_accuracy);
    if (isnan(target)) /* the baseline: its own final objective */
        target = last->objective;
    r->to_obj = INFINITY;
    for (unsigned i = 0; i < l.n; i++)
        if (l.e[i].objective <= target * (1.0 + 1e-3)) {
            r->to_obj = l.e[i].total_seconds;
            break;
        }
    r->syncs = last->replica_syncs;
    free(l.e);
    return HOG_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The median of each field over k results (infinities sort last). */
static struct result median_of(const struct result *rs, unsigned k)
{
    double(*v)[4] = malloc(k * sizeof *v);
    struct result m = { 0 };
    if (!v)
        return m;
    double *col = (double *)v;
    for (unsigned i = 0; i < k; i++) {
        col[0 * k + i] = rs[i].nnz_s;
        col[1 * k + i] = rs[i].objective;
        col[2 * k + i] = rs[i].metric;
        col[3 * k + i] = rs[i].to_obj;
    }
    m.nnz_s = median(col, k);
    m.objective = median(col + k, k);
    m.metric = median(col + 2 * k, k);
    m.to_obj = median(col + 3 * k, k);
    free(v);
    m.syncs = rs[k - 1].syncs;
    m.hot = rs[k - 1].hot;
    for (unsigned i = 0; i < k; i++)
        m.seconds += rs[i].seconds / k;
    return m;
}

/* ---- the grid --------------------------------------------------------------------- */

struct cell {
    const char *algo;       /* "serial", "control", "hogwild", "cyclades" */
    hog_update update;
    hog_replicas replicas;
    uint64_t hot;           /* hogwild: --hot K (0: plain) */
    char mode[32];          /* the replicas column: shared, core, hot:K */
    unsigned threads;
    struct result r;        /* the median of runs[] */
    struct result *runs;    /* repeat of them */
    double speedup1;        /* over 1 thread of the same row kind */
    double speedup_serial;
    double control;         /* the control's speedup at this thread count */
    double efficiency;      /* speedup1 / control */
};

/* Run `rep` of cell c. */
static hog_status run_cell(const struct bench_args *a, const hog_data *d,
                           const hog_data *test, struct cell *c, unsigned rep,
                           double target, hog_err *err)
{
    hog_train_opts o = a->o;
    char label[96];
    if (strcmp(c->algo, "serial") == 0) {
        o.algo = HOG_ALGO_SERIAL;
        o.threads = 0;
        snprintf(label, sizeof label, "serial");
    } else if (strcmp(c->algo, "cyclades") == 0) {
        o.algo = HOG_ALGO_CYCLADES;
        o.threads = c->threads;
        snprintf(label, sizeof label, "cyclades %u", c->threads);
    } else {
        o.algo = HOG_ALGO_HOGWILD;
        o.threads = c->threads;
        o.update = c->update;
        o.replicas = c->replicas;
        o.hot_count = c->hot;
        if (strcmp(c->algo, "control") == 0)
            o.sync_every = 0; /* private models, never averaged */
        snprintf(label, sizeof label, "%s %s %s %u", c->algo,
                 hog_cli_update_name(c->update), c->mode, c->threads);
    }
    return run_once(d, test, &o, target, label, a->quiet, &c->runs[rep], err);
}

/* Nonzeros per second of one thread summing idx and val over the arrays. */
static double stream_rate(const hog_data *d, unsigned repeat)
{
    const struct hog_csr *m = &d->m;
    double v[64];
    unsigned k = repeat < 64 ? repeat : 64;
    volatile double sink = 0;
    for (unsigned r = 0; r < k; r++) {
        uint64_t passes = 0;
        double t0 = hog_now(), t;
        do {
            uint64_t si = 0;
            double sv = 0;
            for (uint64_t i = m->off[0]; i < m->off[m->rows]; i++) {
                si += m->idx[i];
                sv += m->val[i];
            }
            sink += (double)si + sv;
            passes++;
        } while ((t = hog_now() - t0) < 0.3);
        v[r] = (double)m->nnz * passes / t;
    }
    (void)sink;
    return median(v, k);
}

static double load_avg(void)
{
    double l[1];
    return getloadavg(l, 1) == 1 ? l[0] : NAN;
}

/* ---- output --------------------------------------------------------------------- */

static const char *fmt_num(char *buf, size_t len, double v, const char *f)
{
    if (!isfinite(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, f, v);
    return buf;
}

static void print_table(FILE *f, const struct cell *c, unsigned n,
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

static hog_status save_csv(const char *path, const struct cell *c, unsigned n,
                           hog_err *err)
{
    char tmp[4200];
    FILE *f;
    hog_status s = hog_tmpfile_open(path, tmp, sizeof tmp, &f, err);
    if (s != HOG_OK)
        return s;
    write_csv(f, c, n);
    return hog_tmpfile_commit(f, tmp, path, err);
}

static bool have_gnuplot(void)
{
    return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

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

/* s between gnuplot's single quotes, where a quote is written twice. */
static void put_quoted(FILE *g, const char *s)
{
    fputc('\'', g);
    for (; *s; s++)
        fputs(*s == '\'' ? "''" : (char[2]){ *s, 0 }, g);
    fputc('\'', g);
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
    put_quoted(g, title);
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

/* Runs gnuplot on script, its image (standard output) into fd. */
static hog_status run_gnuplot(const char *script, size_t len, int fd,
                              hog_err *err)
{
    int p[2];
    if (pipe(p) != 0)
        return hog_errf(err, HOG_EIO, "cannot run gnuplot: %s",
                        strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&fa, fd, STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, p[1]);
    char *args[] = { (char[]){ "gnuplot" }, NULL };
    pid_t pid;
    int e = posix_spawnp(&pid, "gnuplot", &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[0]);
    if (e != 0) {
        close(p[1]);
        return hog_errf(err, HOG_EIO, "cannot run gnuplot: %s", strerror(e));
    }
    /* A gnuplot that dies early closes the pipe: an error, not SIGPIPE. */
    struct sigaction ign = { .sa_handler = SIG_IGN }, old;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old);
    for (size_t done = 0; done < len;) {
        ssize_t k = write(p[1], script + done, len - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break; /* its exit status says why */
        done += (size_t)k;
    }
    close(p[1]);
    sigaction(SIGPIPE, &old, NULL);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return hog_errf(err, HOG_EIO, "gnuplot failed (status %d)",
                        WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return HOG_OK;
}

static hog_status draw_plot(const struct bench_args *a, const struct cell *c,
                            unsigned n, const char *title, hog_err *err)
{
    bool svg = strcmp(strrchr(a->plot, '.'), ".svg") == 0;
    const char *term = svg ? "svg dynamic" : "pngcairo";
    if (!svg && system("gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1") != 0)
        term = "png"; /* libgd's, where gnuplot has no cairo */
    char *script = NULL;
    size_t len = 0;
    FILE *g = open_memstream(&script, &len);
    if (!g)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the plot");
    plot_script(g, a, c, n, title, term);
    if (fclose(g) != 0) {
        free(script);
        return hog_errf(err, HOG_ENOMEM, "out of memory for the plot");
    }
    /* Test seam: the script itself, to see what was drawn. */
    const char *keep = getenv("HOGTRAIN_TEST_PLOT_SCRIPT");
    if (keep && *keep) {
        FILE *k = fopen(keep, "w");
        if (k) {
            fwrite(script, 1, len, k);
            fclose(k);
        }
    }
    char tmp[4200];
    FILE *f;
    hog_status s = hog_tmpfile_open(a->plot, tmp, sizeof tmp, &f, err);
    if (s == HOG_OK && (s = run_gnuplot(script, len, fileno(f), err)) != HOG_OK) {
        hog_tmpfile_abort(f, tmp);
        char why[HOG_ERR_MAX];
        snprintf(why, sizeof why, "%s", err->msg);
        s = hog_errf(err, s, "%s, drawing %s", why, a->plot);
    } else if (s == HOG_OK) {
        s = hog_tmpfile_commit(f, tmp, a->plot, err);
    }
    free(script);
    return s;
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
    if (plot && !have_gnuplot()) {
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
        (csv && (s = hog_cli_check_writable(csv, &err)) != HOG_OK) ||
        (plot && (s = hog_cli_check_writable(a.plot, &err)) != HOG_OK))
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

    /* serial, the controls, then the grid */
    unsigned ncells = 1 + a.nthreads * (1 + a.nupdate * a.nreplicas * a.nhot + 1);
    cells = calloc(ncells, sizeof *cells);
    if (!cells) {
        s = hog_errf(&err, HOG_ENOMEM, "out of memory");
        goto fail;
    }
    unsigned n = 0;
    cells[n++] = (struct cell){ .algo = "serial", .threads = 1 };
    for (unsigned ti = 0; ti < a.nthreads; ti++) {
        cells[n] = (struct cell){ .algo = "control",
                                  .update = HOG_UPDATE_NONE,
                                  .replicas = HOG_REPLICAS_CORE,
                                  .threads = a.threads[ti] };
        snprintf(cells[n++].mode, sizeof cells->mode, "core");
    }
    /* hot-feature replicas run on the shared model, without stripes */
    for (unsigned ri = 0; a.hogwild && ri < a.nreplicas; ri++)
        for (unsigned hi = 0; hi < a.nhot; hi++)
            for (unsigned ui = 0; ui < a.nupdate; ui++)
                for (unsigned ti = 0; ti < a.nthreads; ti++) {
                    uint64_t k = a.hot[hi];
                    if (k && (a.replicas[ri] != HOG_REPLICAS_SHARED ||
                              a.update[ui] == HOG_UPDATE_STRIPED))
                        continue;
                    struct cell *c = &cells[n++];
                    *c = (struct cell){ .algo = "hogwild",
                                        .update = a.update[ui],
                                        .replicas = a.replicas[ri],
                                        .hot = k,
                                        .threads = a.threads[ti] };
                    if (!k)
                        snprintf(c->mode, sizeof c->mode, "%s",
                                 hog_cli_replicas_name(c->replicas));
                    else if (k == HOG_HOT_AUTO)
                        snprintf(c->mode, sizeof c->mode, "hot:auto");
                    else
                        snprintf(c->mode, sizeof c->mode, "hot:%llu",
                                 (unsigned long long)k);
                }
    for (unsigned ti = 0; a.cyclades && ti < a.nthreads; ti++) {
        cells[n] = (struct cell){ .algo = "cyclades",
                                  .update = HOG_UPDATE_NONE,
                                  .replicas = HOG_REPLICAS_SHARED,
                                  .threads = a.threads[ti] };
        snprintf(cells[n++].mode, sizeof cells->mode, "-");
    }
    double load0 = load_avg();
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
            s = run_cell(&a, d, test, &cells[i], r, target, &err);
            if (s != HOG_OK) {
                free(runs);
                goto fail;
            }
            if (i == 0 && r == 0)
                target = cells[0].runs[0].objective;
        }
    for (unsigned i = 0; i < n; i++)
        cells[i].r = median_of(cells[i].runs, a.repeat);
    free(runs);
    double stream = stream_rate(d, a.repeat);
    if (!a.quiet && isatty(STDERR_FILENO))
        fputs("\r\033[K", stderr);

    /* speedups: over 1 thread of the same kind, over serial; the control */
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
        for (unsigned j = 1; j <= a.nthreads; j++)
            if (cells[j].threads == c->threads)
                c->control = cells[j].speedup1;
        c->efficiency = c->speedup1 / c->control;
    }

    bool regression = a.o.loss == HOG_LOSS_SQUARED;
    printf("hogtrain bench: %s, %llu rows, %llu features, %llu nonzeros; "
           "%s loss, %u epochs, median of %u\n",
           hog_cli_basename(a.data), (unsigned long long)hog_data_rows(d),
           (unsigned long long)hog_data_features(d),
           (unsigned long long)hog_data_nnz(d), hog_cli_loss_name(a.o.loss),
           a.o.epochs, a.repeat);
    print_table(stdout, cells, n, regression, test != NULL);
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
    printf("load average %.2f before, %.2f after, %u CPUs online; %.0f s\n",
           load0, load_avg(), hog_online_cpus(), hog_now() - t_start);
    fflush(stdout);

    if (csv && (s = save_csv(csv, cells, n, &err)) != HOG_OK)
        goto fail;
    if (plot) {
        char title[256];
        snprintf(title, sizeof title, "%s, %s loss, %u epochs",
                 hog_cli_basename(a.data), hog_cli_loss_name(a.o.loss),
                 a.o.epochs);
        if ((s = draw_plot(&a, cells, n, title, &err)) != HOG_OK)
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
