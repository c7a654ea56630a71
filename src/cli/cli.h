/*
 * cli: the hogtrain command. One file per subcommand, plus the helpers they
 * share: strict number parsing, usage errors, output paths, a small JSON
 * writer and the progress display.
 *
 * Exit status, for every subcommand:
 *   0  success
 *   1  runtime error ("hogtrain: <message>" on standard error)
 *   2  usage error (unknown or conflicting option, missing argument, bad
 *      number; a one-line reason and the usage on standard error)
 *
 * Standard output carries only data (predictions, generated text, info
 * reports, help); progress, reports and errors go to standard error.
 */
#ifndef HOG_CLI_H
#define HOG_CLI_H

#include "io/io.h" /* and core/core.h */

#include <getopt.h>
#include <math.h> /* HOG_CLI_ABOVE, HOG_CLI_BELOW */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define HOG_EXIT_OK 0
#define HOG_EXIT_ERROR 1
#define HOG_EXIT_USAGE 2

/* A subcommand: argv[0] is the subcommand's name. Returns the exit status. */
typedef int (*hog_cli_fn)(int argc, char **argv);

int hog_cli_train(int argc, char **argv);
int hog_cli_predict(int argc, char **argv);
int hog_cli_convert(int argc, char **argv);
int hog_cli_gen(int argc, char **argv);
int hog_cli_info(int argc, char **argv);
/* info --weights (info_weights.c): the model at path's weights listed. */
struct hog_cli_weights {
    uint64_t top;      /* --top N: the N largest |w| (0: every nonzero) */
    bool json;         /* --json */
    bool zero_based;   /* LIBSVM indices shown from 0 */
    const char *names; /* --names FILE, or NULL */
};
int hog_cli_info_weights(const char *path, const struct hog_cli_weights *o);
int hog_cli_bench(int argc, char **argv);
int hog_cli_objective(int argc, char **argv);
int hog_cli_topo(int argc, char **argv);

/* ---- usage and errors (util.c) -------------------------------------------- */

/* What a subcommand tells the shared helpers about itself. */
struct hog_cli_cmd {
    const char *name;                 /* "train" */
    const char *usage;                /* "hogtrain train [options] TRAIN ..." */
    /* --help: the text after "usage: <usage>", written by help(f) or,
     * where help is NULL, help_text as it stands. */
    void (*help)(FILE *f);
    const char *help_text;
};

/* Prints "hogtrain CMD: <reason>" and the usage line(s) to stderr; returns
 * HOG_EXIT_USAGE. */
int hog_cli_usage_error(const struct hog_cli_cmd *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prints "hogtrain: <message>" to stderr; returns HOG_EXIT_ERROR. */
int hog_cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "hogtrain: <err->msg>" (or the status's name when the message is
 * empty); returns HOG_EXIT_ERROR. */
int hog_cli_fail_status(hog_status s, const hog_err *err);

/* Flushes standard output: "cannot write to standard output: reason" in
 * err when the flush fails or an earlier write did. main() checks it after
 * every command; a command checks it itself before it reports success. */
hog_status hog_cli_stdout_check(hog_err *err);

/* Explains getopt_long's '?' (unknown option) or ':' (missing argument)
 * from optopt and argv[optind-1]; returns HOG_EXIT_USAGE. */
int hog_cli_bad_option(const struct hog_cli_cmd *c, int ch, char **argv);

/* Another tool's option (Vowpal Wabbit's -b 20, LIBLINEAR's -s 1; the
 * table in foreign.c) typed to subcommand cmd: the sentence "-b 20 is
 * Vowpal Wabbit's bits of the hash; here: --hash-bits 20" in buf, or NULL
 * when word (as typed: "-b", "-b20", "--passes=3"; next: the word after
 * it, or NULL) is nobody's. */
const char *hog_cli_foreign_hint(const char *cmd, const char *word,
                                 const char *next, char *buf, size_t len);
/* "-q ua" (next: the word after -q): the sentence pointing Vowpal
 * Wabbit's -q at --interactions, or NULL when next is no pair of
 * namespaces (or names a file). */
const char *hog_cli_foreign_quiet(const char *next, char *buf, size_t len);

/* "Did you mean": the names offered one by one, the nearest to what was
 * typed that is near enough to be a typo (one edit, an adjacent
 * transposition counting one, in a name of two letters or more; two in a
 * name of six or more; or the start of the name, of three letters or of
 * two that start no other name); the first offered wins a tie. Every
 * option parser (hog_cli_getopt) and the command names (main.c) use it. */
struct hog_cli_nearest {
    const char *typed;
    size_t len;        /* of typed ("epoch" of "epoch=5") */
    const char *best;  /* NULL: none near enough */
    unsigned dist;
    const char *prefix;  /* the first name typed starts */
    unsigned prefixes;   /* how many it starts */
};
void hog_cli_nearest_init(struct hog_cli_nearest *n, const char *typed,
                          size_t len);
void hog_cli_nearest_offer(struct hog_cli_nearest *n, const char *name);
/* The suggestion once every name was offered; NULL: none. */
const char *hog_cli_nearest_best(const struct hog_cli_nearest *n);

/* "epochs" for the long option whose value is ch. */
const char *hog_cli_opt_name(const struct option *lo, int ch);

/* ---- options (util.c) ------------------------------------------------------ */

/* getopt_long values of the options hog_cli_getopt applies itself; a
 * subcommand's own long-only options start at HOG_CLI_OPT_OWN. */
enum {
    HOG_CLI_OPT_ZERO_BASED = 256,
    HOG_CLI_OPT_THREADS,
    HOG_CLI_OPT_FORMAT,
    HOG_CLI_OPT_HASH_BITS,
    HOG_CLI_OPT_HASH_SEED,
    HOG_CLI_OPT_OWN,
};

/* The table entries of the data-loading options, --zero-based, --threads N
 * (parser threads), --format F and the hashing (--hash-bits B, --hash-seed
 * S), for a parser whose load is set. */
#define HOG_CLI_LOAD_OPTIONS                                                  \
    { "zero-based", no_argument, NULL, HOG_CLI_OPT_ZERO_BASED },              \
    { "threads", required_argument, NULL, HOG_CLI_OPT_THREADS },              \
    HOG_CLI_TEXT_OPTIONS
/* The text's format and hashing alone (bench, whose --threads is its own). */
#define HOG_CLI_TEXT_OPTIONS                                                  \
    { "format", required_argument, NULL, HOG_CLI_OPT_FORMAT },                \
    { "hash-bits", required_argument, NULL, HOG_CLI_OPT_HASH_BITS },          \
    { "hash-seed", required_argument, NULL, HOG_CLI_OPT_HASH_SEED }

/* Their lines in a help text (predict, convert, info), and the line on
 * exit status that ends most helps. */
#define HOG_CLI_LOAD_HELP                                                     \
    "      --zero-based    feature indices in the text start at 0\n"          \
    "      --threads N     parser threads; 0 = all cores (default 0)\n"       \
    HOG_CLI_TEXT_HELP
#define HOG_CLI_TEXT_HELP                                                     \
    "      --format F      the text's format: auto (default: Vowpal Wabbit\n" \
    "                      when its first line has a '|'), libsvm or vw\n"     \
    "      --hash-bits B   hash the features into 2^B weights, B from 1 to\n" \
    "                      31 (Vowpal Wabbit text: always, default 18)\n"      \
    "      --hash-seed S   the hash's seed, 0 to 4294967295 (default 0)\n"
#define HOG_CLI_EXIT_HELP                                                     \
    "Exit status: 0 success, 1 runtime error, 2 usage error.\n"

/* Every subcommand's option loop. hog_cli_getopt wraps getopt_long and
 * makes the checks they all make, so that one mistake gets one sentence
 * whatever the subcommand:
 *   - an unknown option, or one without its argument: a usage error,
 *     with "did you mean '--epochs'?" when a name is near; long names
 *     are spelt out (getopt_long's abbreviations are refused);
 *   - an option given twice: a usage error (every option may appear once;
 *     seen[] records which were given, for checks after the loop);
 *   - -h/--help: the help on standard output and exit status 0;
 *   - with load set: --zero-based and --threads N, by their values
 *     (HOG_CLI_LOAD_OPTIONS; a subcommand whose --threads means something
 *     else, like bench's list, gives it a value of its own);
 *   - with train set: the model options train and bench share, by long
 *     name: --l1, --l2, --power, --bias, --loss, --eta and --schedule
 *     into *train (the library resolves those not given,
 *     hog_train_opts_resolve). Only those in the subcommand's table are
 *     accepted.
 *
 *     struct hog_cli_parser op;
 *     hog_cli_parser_init(&op, &cmd, "o:qh", longopts);
 *     op.load = &lo;
 *     while ((ch = hog_cli_getopt(&op, argc, argv)) > 0)
 *         switch (ch) { ... the subcommand's own options ... }
 *     if (ch < 0)
 *         return op.status;
 */
#define HOG_CLI_MAX_OPT 512 /* option values are below it */
struct hog_cli_parser {
    const struct hog_cli_cmd *cmd;
    const struct option *longopts;
    char shortopts[32];                 /* ':' and the caller's */
    hog_load_opts *load;                /* NULL: no data-loading options */
    hog_train_opts *train;              /* NULL: no model options */
    int status;                         /* the exit status after a -1 */
    unsigned char seen[HOG_CLI_MAX_OPT]; /* by option value */
    int repeatable;                     /* an option value that may be given
                                           more than once (0: none) */
};

/* Starts a fresh scan of argv (optind = 1, getopt_long's own messages
 * off). shortopts as getopt_long takes them, without the leading ':'. */
void hog_cli_parser_init(struct hog_cli_parser *p, const struct hog_cli_cmd *c,
                         const char *shortopts, const struct option *longopts);
/* The next option the subcommand handles itself (optarg is its argument);
 * 0 after the last option (argv[optind] is the first operand); -1 when the
 * command ends now with p->status: a usage error was printed, or the help. */
int hog_cli_getopt(struct hog_cli_parser *p, int argc, char **argv);

/* The operands after the options, argv[optind..]: exactly n, named by
 * names[] ("MODEL", "DATA"). Too few: "missing the DATA file" (or "the
 * MODEL and DATA files"); too many: "unexpected argument 'X'", with
 * " (hint)" appended when hint is not NULL. Returns -1 when they fit, else
 * the usage error's status. */
int hog_cli_operands(const struct hog_cli_cmd *c, int argc, char **argv,
                     int n, const char *const *names, const char *hint);

/* --threads N: a thread count from 0 (all cores) to 65536; HOG_EXIT_OK, or
 * the usage error's status for anything else. */
int hog_cli_parse_threads(const struct hog_cli_cmd *c, const char *arg,
                          unsigned *out);

/* ---- numeric options (util.c) ------------------------------------------------ */

/* Every numeric option of every command: arg must be a number in [lo, hi]
 * (hog_parse_u64, hog_parse_double), else the usage error
 * "--NAME: 'ARG' is not " followed by what (a printf format: "a number of
 * epochs (1 to %u)"). Returns HOG_EXIT_OK with *out set, or the usage
 * error's status with *out unchanged. An open bound is the next number
 * inward: HOG_CLI_ABOVE(0.0) for "> 0", HOG_CLI_BELOW(1.0) for "< 1". */
int hog_cli_opt_u64(const struct hog_cli_cmd *c, const char *name,
                    const char *arg, uint64_t lo, uint64_t hi, uint64_t *out,
                    const char *what, ...) __attribute__((format(printf, 7, 8)));
int hog_cli_opt_double(const struct hog_cli_cmd *c, const char *name,
                       const char *arg, double lo, double hi, double *out,
                       const char *what, ...)
    __attribute__((format(printf, 7, 8)));
/* The same for a size (hog_cli_parse_size: "64M", "2G") in [lo, hi]. */
int hog_cli_opt_size(const struct hog_cli_cmd *c, const char *name,
                     const char *arg, uint64_t lo, uint64_t hi, uint64_t *out,
                     const char *what, ...) __attribute__((format(printf, 7, 8)));
#define HOG_CLI_ABOVE(x) nextafter((x), HUGE_VAL)
#define HOG_CLI_BELOW(x) nextafter((x), -HUGE_VAL)

/* ---- strict numbers (util.c) ---------------------------------------------- */

/* Whole string, decimal, no sign, no space, no overflow; in [min, max]. */
bool hog_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* Whole string, finite; in [min, max]. */
bool hog_parse_double(const char *s, double min, double max, double *out);
/* A size in bytes: digits and an optional K, M, G or T (powers of 1024),
 * optionally followed by B or iB: "512M", "2GiB", "4096". */
bool hog_cli_parse_size(const char *s, uint64_t *out);

/* ---- enum options (util.c) -------------------------------------------------- */

/* One name an option accepts and the value it stands for. */
struct hog_cli_name {
    const char *name;
    int value;
    bool alias; /* accepted, but not listed in the error ("io_uring") */
};

/* An option whose value is one of a few names: a row of a command's table,
 * parsed by hog_cli_enum_option. The error names the choices:
 *   noun "loss":  "--loss: unknown loss 'cubic' (logistic, hinge, ...)"
 *   noun NULL:    "--direct: 'x' is not auto, on or off"
 *                 ("is neither l1 nor l2" for two names). */
struct hog_cli_enum {
    int opt;                          /* the getopt_long value */
    const char *noun;
    const struct hog_cli_name *names; /* ends with { NULL } */
    void *target;                     /* an int or an enum of int's size */
    size_t size;                      /* sizeof *target */
};
/* target and size of a struct hog_cli_enum row. */
#define HOG_CLI_TARGET(x) &(x), sizeof(x)

/* The option ch, when a row of table (n rows) is for it: -1 when none is,
 * HOG_EXIT_OK when arg named a value (stored in the row's target), else
 * the usage error's status. lo names the option in the error. */
int hog_cli_enum_option(const struct hog_cli_cmd *c, const struct option *lo,
                        const struct hog_cli_enum *table, size_t n, int ch,
                        const char *arg);

/* The value of the name s (aliases included), or -1. */
int hog_cli_name_find(const struct hog_cli_name *names, const char *s);
/* The listed name of v, or "?". */
const char *hog_cli_name_of(const struct hog_cli_name *names, int v);

extern const struct hog_cli_name hog_cli_loss_names[];
extern const struct hog_cli_name hog_cli_schedule_names[];
extern const struct hog_cli_name hog_cli_update_names[];
extern const struct hog_cli_name hog_cli_replicas_names[];
/* --algo: the names of the library's table (src/train/algos.c). */
const struct hog_cli_name *hog_cli_algo_names(void);

/* -1 when the name is unknown. */
int hog_cli_loss_parse(const char *s);
int hog_cli_schedule_parse(const char *s);
int hog_cli_algo_parse(const char *s);
int hog_cli_update_parse(const char *s);
const char *hog_cli_loss_name(hog_loss l);
const char *hog_cli_schedule_name(hog_schedule s);
const char *hog_cli_algo_name(hog_algo a);
const char *hog_cli_update_name(hog_update u);
int hog_cli_replicas_parse(const char *s);
/* --hot: auto (HOG_HOT_AUTO), off (0) or a number 0 <= K <= max (0: no
 * hot features). Returns 0, or -1 when s is none of those. */
int hog_cli_hot_parse(const char *s, uint64_t max, uint64_t *k);
const char *hog_cli_replicas_name(hog_replicas r);

/* ---- files and formatting (util.c) ------------------------------------------ */

/* Checks before any work that each input named on the command line can be
 * read (NULL and "-", standard input, are skipped): a missing test set is
 * said at once, not after the training set has loaded. Fills err with
 * "path: cannot open: reason" for the first that cannot. */
hog_status hog_cli_check_readable(const char *const *paths, size_t n,
                                  hog_err *err);
/* True when a and b name one regular file (the same inode), or one name
 * that does not exist yet; never for "-", devices or FIFOs, which a write
 * does not overwrite. Guards inputs against being overwritten by outputs. */
bool hog_cli_same_file(const char *a, const char *b);
/* The last component of a path: "data/a9a.t" -> "a9a.t". Points into path. */
const char *hog_cli_basename(const char *path);
/* "1.23 M", "456 k", "12" in buf. */
const char *hog_cli_si(char *buf, size_t len, double v);
/* A label value in buf: an integer as an integer ("3", "-1"), anything
 * else with the 9 digits that give back its float ("0.5"). */
const char *hog_cli_label(char *buf, size_t len, double v);
/* k labels separated by spaces in buf; more than head + 2 of them are cut
 * to the first head, " ..." and the last two ("1 2 3 ... 19 20"). */
const char *hog_cli_labels(char *buf, size_t len, const double *labels,
                           uint32_t k, uint32_t head);
/* "2.1 MB" etc. in buf. */
const char *hog_cli_bytes(char *buf, size_t len, double bytes);
/* Loads data, printing "loaded NAME: R rows, F features, Z nonzeros in T s"
 * to stderr unless quiet; the seconds taken in *secs (may be NULL). */
hog_status hog_cli_load(const char *path, const hog_load_opts *o, bool quiet,
                        hog_data **out, double *secs, hog_err *err);
/* "hashed into 2^18 weights (seed 0), 12 collisions, 3 entries merged" in
 * buf, or "" for data that is not hashed. */
const char *hog_cli_hashing(char *buf, size_t len, const hog_hashing *h);
/* Rows whose Vowpal Wabbit importance weight is not 1 (0 without any). */
uint64_t hog_cli_importance_rows(const hog_data *d);
/* --format: auto, libsvm, vw. */
extern const struct hog_cli_name hog_cli_format_names[];

/* MODEL and DATA, as predict and objective take them: both checked
 * readable, and out (NULL: none) writable, before either loads; then the
 * model, then the data with hog_cli_load (in the model's feature space at
 * least when model_space is set), hashed as the model's training data was
 * (--hash-bits and --hash-seed, when --hash-bits is given, must be the
 * model's; data that ends up hashed otherwise, a .hgb or VW text for a
 * model of unhashed features, is refused). On failure *m and *d hold what
 * loaded, for the caller to free. d NULL: the model only, and lo set to
 * read the data as the model asks (predict's stream). */
/* HOG_EINVAL with a sentence when d's features are hashed otherwise than
 * the model's training data were (names as in messages). */
hog_status hog_cli_hashing_check(const char *model, const hog_model *m,
                                 const char *data, const hog_data *d,
                                 hog_err *err);
hog_status hog_cli_load_model_data(const char *model, const char *data,
                                   const char *out, hog_load_opts *lo,
                                   bool model_space, bool quiet,
                                   hog_model **m, hog_data **d, hog_err *err);

/* A model of other data scores it without an error (a feature it lacks
 * weighs 0), so predict and train -t say when the model's feature count
 * (mf) and the data's (df) are far apart: the data's more than twice the
 * model's and 1000 more (a test set may well have a few features the
 * training set lacked), or the model's more than 100 times the data's and
 * 1000 more (a small file may use few of a large model's features, but not
 * that few). One warning line on stderr, ending "(goes_on)". */
void hog_cli_warn_feature_space(uint64_t mf, uint64_t df, const char *path,
                                const char *goes_on);

/* ---- JSON (json.c) ------------------------------------------------------- */

/* A streaming writer with commas and indentation handled; strings are
 * escaped (invalid UTF-8 becomes U+FFFD), non-finite numbers are null. */
struct hog_json {
    FILE *f;
    int depth;
    bool need_comma;
};

void hog_json_begin(struct hog_json *j, FILE *f);
void hog_json_end(struct hog_json *j);
void hog_json_obj(struct hog_json *j, const char *key);   /* key NULL in arrays */
void hog_json_arr(struct hog_json *j, const char *key);
void hog_json_close_obj(struct hog_json *j);
void hog_json_close_arr(struct hog_json *j);
void hog_json_str(struct hog_json *j, const char *key, const char *v);
void hog_json_num(struct hog_json *j, const char *key, double v);
void hog_json_u64(struct hog_json *j, const char *key, uint64_t v);
void hog_json_bool(struct hog_json *j, const char *key, bool v);
void hog_json_null(struct hog_json *j, const char *key);

/* ---- images (plot.c) ------------------------------------------------------ */

bool hog_cli_have_gnuplot(void);
/* s between gnuplot's single quotes, where a quote is written twice. */
void hog_cli_plot_quoted(FILE *g, const char *s);
/* Draws path (.svg or .png) with gnuplot: body writes the script, whose
 * first line sets the terminal term ("set terminal TERM size ..."); the
 * image is written to a temporary name and renamed. The test seam
 * HOGTRAIN_TEST_PLOT_SCRIPT=FILE keeps the script. */
hog_status hog_cli_plot(const char *path,
                        void (*body)(FILE *g, const char *term, void *ctx),
                        void *ctx, hog_err *err);

/* ---- progress (progress.c) ------------------------------------------------- */

/* The training display: on a terminal one line rewritten with \r while an
 * epoch runs; a plain line after each epoch either way. */
struct hog_progress {
    FILE *f;
    bool tty;             /* rewrite a line in place */
    bool quiet;           /* print nothing */
    bool regression;      /* RMSE instead of accuracy/AUC */
    bool line_open;       /* a \r line is on screen */
    double t0;            /* start of training */
    double epoch_t0;      /* start of the current epoch */
    double last_draw;
    unsigned cur_epoch;   /* epoch of tick_t0 (0: none running) */
    double tick_t0;       /* first report of the running epoch */
    uint64_t tick_done0;  /* rows done at tick_t0 */
    double last_loss;     /* train loss of the last finished epoch (NaN before) */
    hog_epoch_stats *hist;/* one per finished epoch (hist_len of them) */
    unsigned hist_len, hist_cap;
    bool oom;
    bool ovr;             /* one-vs-rest of K classes: the running reports
                             count classes done (epoch of epochs) and class
                             epochs (done of total) */
    unsigned epochs;      /* the run's epoch cap, from the reports */
    unsigned printed;     /* epoch of the last epoch line (0: none) */
    double last_line;     /* when it was printed */
};

void hog_progress_init(struct hog_progress *p, FILE *f, bool quiet,
                       bool regression);
/* A hog_progress_fn; ctx is the struct hog_progress. */
void hog_progress_cb(void *ctx, unsigned epoch, unsigned epochs, uint64_t done,
                     uint64_t total, const hog_epoch_stats *stats);
/* Clears a \r line left on screen. */
void hog_progress_clear(struct hog_progress *p);
/* After training: clears the \r line and prints the last epoch's line
 * when the epoch lines' schedule left it out. */
void hog_progress_finish(struct hog_progress *p);
/* The table of per-epoch metrics. */
void hog_progress_table(const struct hog_progress *p, FILE *f);
void hog_progress_free(struct hog_progress *p);

/* SIGINT/SIGTERM while training (signals.c): the first sets the flag
 * returned (for hog_train_opts.cancel), a second removes the temporaries
 * of writes under way and exits at once. Restoring puts back the handlers
 * of hog_cli_cleanup_install. */
const volatile sig_atomic_t *hog_cli_signals_install(void);
void hog_cli_signals_restore(void);
/* Every signal that would end the process (SIGINT, SIGTERM, SIGHUP,
 * SIGPIPE, SIGXFSZ, ...) first removes the temporaries of the writes under
 * way, then ends it as the signal would. Installed once by main; signals
 * the caller ignores stay ignored. */
void hog_cli_cleanup_install(void);
/* SIGBUS (a mapped .hgb truncated by another program): a sentence and exit
 * status 1 instead of a core dump. Installed once by main. */
void hog_cli_sigbus_install(void);

/* OpenBLAS's pool, which hogtrain never uses, shut down before it spins on
 * the cores the command is about to use; under an address-space limit
 * (ulimit -v) the command is first re-executed with OPENBLAS_NUM_THREADS=1
 * unless it is set: an OpenBLAS pool thread that cannot map its buffer
 * retries forever and exit waits for it (memory.c). */
void hog_cli_blas_threads(char **argv);

#endif
