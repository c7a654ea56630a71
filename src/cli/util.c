/* Helpers shared by the subcommands: usage errors, strict numbers, enum
 * names, output checks, human-readable units, loading with a report. */
#include "cli/cli.h"
#include "train/train.h" /* the algorithms' table */

#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- usage and errors ------------------------------------------------------- */

int hog_cli_usage_error(const struct hog_cli_cmd *c, const char *fmt, ...)
{
    fprintf(stderr, "hogtrain %s: ", c->name);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nusage: %s\nTry 'hogtrain %s --help' for more.\n",
            c->usage, c->name);
    return HOG_EXIT_USAGE;
}

int hog_cli_fail(const char *fmt, ...)
{
    fflush(stdout);
    fputs("hogtrain: ", stderr);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return HOG_EXIT_ERROR;
}

int hog_cli_fail_status(hog_status s, const hog_err *err)
{
    if (err && err->msg[0])
        return hog_cli_fail("%s", err->msg);
    return hog_cli_fail("%s", hog_status_str(s));
}

hog_status hog_cli_stdout_check(hog_err *err)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return HOG_OK;
    /* errno is gone when the failed write was an earlier one */
    if (errno)
        return hog_errf(err, HOG_EIO, "cannot write to standard output: %s",
                        strerror(errno));
    return hog_errf(err, HOG_EIO, "cannot write to standard output");
}

/* ---- did you mean ------------------------------------------------------------- */

/* Longer names are not typos of ours: no command or option is this long. */
#define NEAREST_MAX 64

/* Levenshtein distance with adjacent transpositions counted as one edit
 * (optimal string alignment): "trian" is one edit from "train". */
static unsigned edit_distance(const char *a, size_t la, const char *b)
{
    size_t lb = strlen(b);
    if (la >= NEAREST_MAX || lb >= NEAREST_MAX)
        return UINT32_MAX;
    unsigned d[NEAREST_MAX + 1][NEAREST_MAX + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (unsigned)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            unsigned sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            unsigned del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            unsigned v = sub < del ? sub : del;
            v = ins < v ? ins : v;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[la][lb];
}

void hog_cli_nearest_init(struct hog_cli_nearest *n, const char *typed,
                          size_t len)
{
    n->typed = typed;
    n->len = len;
    n->best = NULL;
    n->dist = UINT32_MAX;
    n->prefix = NULL;
    n->prefixes = 0;
}

void hog_cli_nearest_offer(struct hog_cli_nearest *n, const char *name)
{
    size_t ln = strlen(name);
    unsigned d = edit_distance(n->typed, n->len, name);
    /* The start of a name counts as one edit: options are spelt out in
     * full (hog_cli_getopt), and "--check" meant one of the --checkpoint
     * options. Two letters are a start only of a name no other shares
     * (hog_cli_nearest_best). */
    bool start = n->len >= 2 && n->len < ln &&
                 strncmp(n->typed, name, n->len) == 0;
    if (start && !n->prefixes++)
        n->prefix = name;
    if (start && n->len >= 3)
        d = 1;
    /* One edit in a name of two letters or more ("l3" may be "l1", but
     * "x" is nobody's typo of "C"); two edits only in a name of six or
     * more, a third of it: "ep" is two edits from "help", and no typo. */
    if (d == 0 || d > 2 || 2 * d > ln || (d == 2 && 3 * d > ln) ||
        d >= n->dist)
        return;
    n->best = name;
    n->dist = d;
}

const char *hog_cli_nearest_best(const struct hog_cli_nearest *n)
{
    return n->best ? n->best : n->prefixes == 1 ? n->prefix : NULL;
}

/* "unknown option '--epoch'; did you mean '--epochs'?" when the parser's
 * table (lo; NULL: none) has a near name; another tool's option in its
 * terms (foreign.c). arg is the word as typed, next the word after it
 * (NULL: none). */
static int unknown_option(const struct hog_cli_cmd *c, const struct option *lo,
                          const char *arg, const char *next)
{
    char hint[512];
    if (hog_cli_foreign_hint(c->name, arg, next, hint, sizeof hint))
        return hog_cli_usage_error(c, "unknown option '%s': %s", arg, hint);
    struct hog_cli_nearest n;
    bool dashes = arg[0] == '-' && arg[1] == '-';
    hog_cli_nearest_init(&n, arg + 2 * dashes, strcspn(arg + 2 * dashes, "="));
    for (; lo && dashes && lo->name; lo++)
        hog_cli_nearest_offer(&n, lo->name);
    const char *best = hog_cli_nearest_best(&n);
    if (best)
        return hog_cli_usage_error(c, "unknown option '%s'; did you mean "
                                   "'--%s'?", arg, best);
    return hog_cli_usage_error(c, "unknown option '%s'", arg);
}

/* Whether the word "--name[=value]" spells out an option of lo. */
static bool exact_long(const struct option *lo, const char *word)
{
    size_t len = strcspn(word + 2, "=");
    for (; lo->name; lo++)
        if (strlen(lo->name) == len && strncmp(word + 2, lo->name, len) == 0)
            return true;
    return false;
}

static int bad_option(const struct hog_cli_cmd *c, const struct option *lo,
                      int ch, char **argv)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "?";
    if (ch == ':' && (!lo || !(arg[0] == '-' && arg[1] == '-') ||
                      exact_long(lo, arg)))
        return hog_cli_usage_error(c, "option '%s' needs an argument", arg);
    /* A short option: "-b 20", getopt has gone past "-b"; "-w1 2" (or
     * "-qw1"), it is still in the word, argv[optind], and the letters
     * after the flag are its value. */
    bool in_word = optind > 0 && argv[optind] && argv[optind][0] == '-' &&
                   argv[optind][1] != '-' && strchr(argv[optind], optopt);
    if (optopt && optopt < 256 &&
        ((arg[0] == '-' && arg[1] != '-' && arg[strlen(arg) - 1] == optopt) ||
         in_word)) {
        char hint[512];
        const char *word = arg[1] == optopt && !arg[2] ? arg : NULL;
        const char *next = word ? argv[optind] : NULL;
        if (!word && in_word && argv[optind][1] == optopt) {
            word = argv[optind];
            next = argv[optind + 1];
        }
        if (word && hog_cli_foreign_hint(c->name, word, next, hint,
                                         sizeof hint))
            return hog_cli_usage_error(c, "unknown option '-%c': %s", optopt,
                                       hint);
        return hog_cli_usage_error(c, "unknown option '-%c'", optopt);
    }
    return unknown_option(c, lo, arg, argv[optind]);
}

int hog_cli_bad_option(const struct hog_cli_cmd *c, int ch, char **argv)
{
    return bad_option(c, NULL, ch, argv);
}

const char *hog_cli_opt_name(const struct option *lo, int ch)
{
    for (; lo->name; lo++)
        if (lo->val == ch && !lo->flag)
            return lo->name;
    return "?";
}

/* ---- options ------------------------------------------------------------------ */

void hog_cli_parser_init(struct hog_cli_parser *p, const struct hog_cli_cmd *c,
                         const char *shortopts, const struct option *longopts)
{
    memset(p, 0, sizeof *p);
    p->cmd = c;
    p->longopts = longopts;
    int n = snprintf(p->shortopts, sizeof p->shortopts, ":%s", shortopts);
    assert(n > 0 && (size_t)n < sizeof p->shortopts);
    (void)n;
    optind = 1;
    opterr = 0; /* hog_cli_bad_option says it, in our words */
}

int hog_cli_parse_threads(const struct hog_cli_cmd *c, const char *arg,
                          unsigned *out)
{
    uint64_t u = 0;
    int rc = hog_cli_opt_u64(c, "threads", arg, 0, 65536, &u,
                             "a thread count (0 to 65536)");
    if (rc == HOG_EXIT_OK)
        *out = (unsigned)u;
    return rc;
}

/* Whether the long option called name was given. */
static bool given(const struct hog_cli_parser *p, const char *name)
{
    for (const struct option *lo = p->longopts; lo->name; lo++)
        if (strcmp(lo->name, name) == 0 && !lo->flag)
            return lo->val >= 0 && lo->val < HOG_CLI_MAX_OPT && p->seen[lo->val];
    return false;
}

/* The model options, by long name: -1 when name is none of them,
 * HOG_EXIT_OK when arg was applied, else the usage error's status. */
static int model_option(struct hog_cli_parser *p, int ch, const char *arg)
{
    const struct hog_cli_cmd *c = p->cmd;
    hog_train_opts *o = p->train;
    const char *name = hog_cli_opt_name(p->longopts, ch);
    if (strcmp(name, "l1") == 0)
        return hog_cli_opt_double(c, name, arg, 0.0, HUGE_VAL, &o->l1,
                                  "a number >= 0");
    if (strcmp(name, "l2") == 0)
        return hog_cli_opt_double(c, name, arg, 0.0, HUGE_VAL, &o->l2,
                                  "a number >= 0");
    if (strcmp(name, "power") == 0)
        return hog_cli_opt_double(c, name, arg, 0.0, HUGE_VAL, &o->power,
                                  "a number >= 0");
    if (strcmp(name, "epsilon") == 0)
        return hog_cli_opt_double(c, name, arg, 0.0, HUGE_VAL, &o->epsilon,
                                  "a number >= 0");
    if (strcmp(name, "quantile-tau") == 0)
        return hog_cli_opt_double(c, name, arg, HOG_CLI_ABOVE(0.0),
                                  HOG_CLI_BELOW(1.0), &o->quantile_tau,
                                  "a number between 0 and 1 (exclusive)");
    if (strcmp(name, "eta") == 0)
        return hog_cli_opt_double(c, name, arg, HOG_CLI_ABOVE(0.0), HUGE_VAL,
                                  &o->eta, "a step size > 0");
    if (strcmp(name, "bias") == 0)
        return hog_cli_opt_double(c, name, arg, -HUGE_VAL, HUGE_VAL, &o->bias,
                                  "a number");
    if (strcmp(name, "C") == 0) /* LIBLINEAR's: l2 (or l1) = 1/(C n) */
        return hog_cli_opt_double(c, name, arg, HOG_CLI_ABOVE(0.0), HUGE_VAL,
                                  &o->C, "a number > 0");
    static const struct hog_cli_name reg_names[] = {
        { "l1", 1, false }, { "l2", 0, false }, { NULL, 0, false },
    };
    const struct hog_cli_enum names[] = {
        { ch, "loss", hog_cli_loss_names, HOG_CLI_TARGET(o->loss) },
        { ch, "schedule", hog_cli_schedule_names, HOG_CLI_TARGET(o->schedule) },
        { ch, "reg", reg_names, HOG_CLI_TARGET(o->C_l1) },
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(name, names[i].noun) == 0)
            return hog_cli_enum_option(c, p->longopts, &names[i], 1, ch, arg);
    return -1;
}

/* After the options: --C sets the strengths, so it excludes --l1 and
 * --l2, and --reg says which one it sets. -1 to go on, else the usage
 * error's status. */
static int model_check(const struct hog_cli_parser *p)
{
    if (given(p, "C") && (given(p, "l1") || given(p, "l2")))
        return hog_cli_usage_error(p->cmd, "--C sets l2 (or l1, with --reg "
                                   "l1) to 1/(C n); give either --C or "
                                   "--l1/--l2");
    if (given(p, "reg") && !given(p, "C"))
        return hog_cli_usage_error(p->cmd, "--reg says what --C sets; it "
                                   "needs --C");
    return -1;
}


/* An option the parser applies itself: -1 when ch is none of them,
 * HOG_EXIT_OK when applied, else the usage error's status. */
static int shared_option(struct hog_cli_parser *p, int ch, const char *arg)
{
    if (p->load && ch == HOG_CLI_OPT_ZERO_BASED) {
        p->load->zero_based = 1;
        return HOG_EXIT_OK;
    }
    if (p->load && ch == HOG_CLI_OPT_THREADS)
        return hog_cli_parse_threads(p->cmd, arg, &p->load->threads);
    if (p->load && ch == HOG_CLI_OPT_HASH_BITS) {
        uint64_t b = p->load->hash_bits;
        int rc = hog_cli_opt_u64(p->cmd, "hash-bits", arg, 1,
                                 HOG_HASH_BITS_MAX, &b,
                                 "a number of bits from 1 to %u (2^32 "
                                 "weights would need feature ids past the "
                                 "largest hogtrain keeps, 2^32 - 2)",
                                 HOG_HASH_BITS_MAX);
        p->load->hash_bits = (unsigned)b;
        return rc;
    }
    if (p->load && ch == HOG_CLI_OPT_HASH_SEED) {
        uint64_t v = p->load->hash_seed;
        int rc = hog_cli_opt_u64(p->cmd, "hash-seed", arg, 0, UINT32_MAX, &v,
                                 "a seed from 0 to %u", UINT32_MAX);
        p->load->hash_seed = (uint32_t)v;
        return rc;
    }
    if (p->load && ch == HOG_CLI_OPT_FORMAT) {
        const struct hog_cli_enum e = {
            ch, "format", hog_cli_format_names, HOG_CLI_TARGET(p->load->format)
        };
        return hog_cli_enum_option(p->cmd, p->longopts, &e, 1, ch, arg);
    }
    if (p->train)
        return model_option(p, ch, arg);
    return -1;
}

/* The word of argv that held the long option getopt_long just returned:
 * "--name=value" or "--name" (its value, if any, is the next word). */
static const char *long_word(char **argv)
{
    const char *w = argv[optind - 1];
    return optarg && optarg == w && optind >= 2 ? argv[optind - 2] : w;
}

int hog_cli_getopt(struct hog_cli_parser *p, int argc, char **argv)
{
    for (;;) {
        int li = -1;
        int ch = getopt_long(argc, argv, p->shortopts, p->longopts, &li);
        if (ch == -1 && p->train && (p->status = model_check(p)) >= 0)
            return -1;
        if (ch == -1)
            return 0;
        /* getopt_long takes any unambiguous start of a name ("--epoch" for
         * --epochs); each new option would make some of those ambiguous
         * and break the scripts that used them, so names are spelt out. */
        if (li >= 0 && ch != '?' && ch != ':') {
            const char *w = long_word(argv);
            if (!exact_long(p->longopts, w)) {
                /* the word after it, unless getopt took it as a value */
                const char *next = optarg && !strchr(w, '=') ? optarg
                                                             : argv[optind];
                p->status = unknown_option(p->cmd, p->longopts, w, next);
                return -1;
            }
        }
        if (ch == '?' || ch == ':') {
            p->status = bad_option(p->cmd, p->longopts, ch, argv);
            return -1;
        }
        assert(ch > 0 && ch < HOG_CLI_MAX_OPT);
        if (p->seen[ch] && ch != p->repeatable) {
            p->status = hog_cli_usage_error(p->cmd, "option --%s given twice",
                                            hog_cli_opt_name(p->longopts, ch));
            return -1;
        }
        p->seen[ch] = 1;
        if (ch == 'h') {
            printf("usage: %s\n", p->cmd->usage);
            if (p->cmd->help)
                p->cmd->help(stdout);
            else
                fputs(p->cmd->help_text, stdout);
            p->status = HOG_EXIT_OK;
            return -1;
        }
        int rc = shared_option(p, ch, optarg);
        if (rc < 0)
            return ch; /* the subcommand's own */
        if (rc != HOG_EXIT_OK) {
            p->status = rc;
            return -1;
        }
    }
}

int hog_cli_operands(const struct hog_cli_cmd *c, int argc, char **argv,
                     int n, const char *const *names, const char *hint)
{
    int have = argc - optind;
    if (have > n && hint)
        return hog_cli_usage_error(c, "unexpected argument '%s' (%s)",
                                   argv[optind + n], hint);
    if (have > n)
        return hog_cli_usage_error(c, "unexpected argument '%s'",
                                   argv[optind + n]);
    if (have == n)
        return -1;
    char list[256]; /* "DATA", "MODEL and DATA", "A, B and C" */
    size_t len = 0;
    list[0] = '\0';
    for (int i = have; i < n && len < sizeof list; i++) {
        const char *sep = i == have ? "" : i == n - 1 ? " and " : ", ";
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", sep,
                                names[i]);
    }
    return hog_cli_usage_error(c, "missing the %s file%s", list,
                               n - have > 1 ? "s" : "");
}

/* ---- numeric options ---------------------------------------------------------- */

static bool parse_size_in(const char *s, uint64_t lo, uint64_t hi,
                          uint64_t *out)
{
    uint64_t v;
    if (!hog_cli_parse_size(s, &v) || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* One body for the three kinds of number: parse(arg, lo, hi, &v), or the
 * usage error "--NAME: 'ARG' is not WHAT". */
#define NUMBER_OPTION(fn, type, parse)                                        \
    int fn(const struct hog_cli_cmd *c, const char *name, const char *arg,    \
           type lo, type hi, type *out, const char *what, ...)                \
    {                                                                         \
        type v;                                                               \
        if (parse(arg, lo, hi, &v)) {                                         \
            *out = v;                                                         \
            return HOG_EXIT_OK;                                               \
        }                                                                     \
        char w[256];                                                          \
        va_list ap;                                                           \
        va_start(ap, what);                                                   \
        vsnprintf(w, sizeof w, what, ap);                                     \
        va_end(ap);                                                           \
        return hog_cli_usage_error(c, "--%s: '%s' is not %s", name, arg, w); \
    }

NUMBER_OPTION(hog_cli_opt_u64, uint64_t, hog_parse_u64)
NUMBER_OPTION(hog_cli_opt_double, double, hog_parse_double)
NUMBER_OPTION(hog_cli_opt_size, uint64_t, parse_size_in)

/* ---- strict numbers ---------------------------------------------------------- */

bool hog_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return false; /* no sign, no space, not empty */
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

bool hog_parse_double(const char *s, double min, double max, double *out)
{
    if (!s || !*s || strchr(" \t\n\v\f\r", *s))
        return false;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno == ERANGE && fabs(v) > 1.0)
        return false; /* overflow; underflow to a tiny number is fine */
    if (end == s || *end || !isfinite(v) || v < min || v > max)
        return false;
    *out = v;
    return true;
}

bool hog_cli_parse_size(const char *s, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return false;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case 't': case 'T': shift = 40; break;
    case '\0': break;
    default: return false;
    }
    if (*end) {
        end++;
        if (*end == 'i' && end[1] == 'B')
            end += 2;
        else if (*end == 'B')
            end++;
    }
    if (*end || (shift && v > (UINT64_MAX >> shift)))
        return false;
    *out = (uint64_t)v << shift;
    return true;
}

/* ---- enum options ---------------------------------------------------------------- */

const struct hog_cli_name hog_cli_loss_names[] = {
    { "logistic", HOG_LOSS_LOGISTIC, false }, { "hinge", HOG_LOSS_HINGE, false },
    { "sqhinge", HOG_LOSS_SQHINGE, false }, { "squared", HOG_LOSS_SQUARED, false },
    { "modified_huber", HOG_LOSS_MODIFIED_HUBER, false },
    { "huber", HOG_LOSS_HUBER, false },
    { "epsilon_insensitive", HOG_LOSS_EPS_INSENSITIVE, false },
    { "squared_epsilon_insensitive", HOG_LOSS_SQ_EPS_INSENSITIVE, false },
    { "quantile", HOG_LOSS_QUANTILE, false },
    { "poisson", HOG_LOSS_POISSON, false },
    { NULL, 0, false },
};
const struct hog_cli_name hog_cli_schedule_names[] = {
    { "constant", HOG_SCHED_CONSTANT, false },
    { "invscaling", HOG_SCHED_INVSCALING, false },
    { "adagrad", HOG_SCHED_ADAGRAD, false }, { "ftrl", HOG_SCHED_FTRL, false },
    { NULL, 0, false },
};
const struct hog_cli_name hog_cli_update_names[] = {
    { "none", HOG_UPDATE_NONE, false }, { "atomic", HOG_UPDATE_ATOMIC, false },
    { "striped", HOG_UPDATE_STRIPED, false }, { "mutex", HOG_UPDATE_MUTEX, false },
    { NULL, 0, false },
};
const struct hog_cli_name hog_cli_replicas_names[] = {
    { "shared", HOG_REPLICAS_SHARED, false }, { "node", HOG_REPLICAS_NODE, false },
    { "core", HOG_REPLICAS_CORE, false }, { NULL, 0, false },
};

#define MAX_ALGOS 16

const struct hog_cli_name *hog_cli_algo_names(void)
{
    /* Filled once from the library's rows; the command parses on one
     * thread. */
    static struct hog_cli_name names[MAX_ALGOS + 1];
    if (!names[0].name) {
        size_t n = 0;
        for (int a = 0; n < MAX_ALGOS && hog_algo_row((hog_algo)a); a++)
            names[n++] = (struct hog_cli_name){ hog_algo_cli_name((hog_algo)a),
                                                a, false };
    }
    return names;
}

int hog_cli_name_find(const struct hog_cli_name *names, const char *s)
{
    for (; names->name; names++)
        if (strcmp(names->name, s) == 0)
            return names->value;
    return -1;
}

const char *hog_cli_name_of(const struct hog_cli_name *names, int v)
{
    for (; names->name; names++)
        if (names->value == v && !names->alias)
            return names->name;
    return "?";
}

/* The listed names: "a, b, c" (noun set), "a, b or c", "neither a nor b".
 * Returns how many. */
static size_t name_list(char *buf, size_t len, const struct hog_cli_name *names,
                      bool noun)
{
    size_t n = 0, k = 0, at = 0;
    for (const struct hog_cli_name *x = names; x->name; x++)
        n += !x->alias;
    buf[0] = '\0';
    for (; names->name && at < len; names++) {
        if (names->alias)
            continue;
        const char *sep = k == 0 ? (!noun && n == 2 ? "neither " : "")
                          : noun ? ", "
                          : k < n - 1 ? ", "
                          : n == 2 ? " nor " : " or ";
        at += (size_t)snprintf(buf + at, len - at, "%s%s", sep, names->name);
        k++;
    }
    return n;
}

int hog_cli_enum_option(const struct hog_cli_cmd *c, const struct option *lo,
                        const struct hog_cli_enum *table, size_t n, int ch,
                        const char *arg)
{
    const struct hog_cli_enum *e = NULL;
    for (size_t i = 0; i < n && !e; i++)
        if (table[i].opt == ch)
            e = &table[i];
    if (!e)
        return -1;
    const struct hog_cli_name *x = e->names;
    while (x->name && strcmp(x->name, arg) != 0)
        x++;
    if (!x->name) {
        const char *name = hog_cli_opt_name(lo, ch);
        char list[256];
        size_t k = name_list(list, sizeof list, e->names, e->noun != NULL);
        if (e->noun)
            return hog_cli_usage_error(c, "--%s: unknown %s '%s' (%s)", name,
                                       e->noun, arg, list);
        return hog_cli_usage_error(c, "--%s: '%s' is %s%s", name, arg,
                                   k == 2 ? "" : "not ", list);
    }
    int v = x->value;
    assert(e->size == sizeof(int)); /* the row's target: an int or an enum */
    memcpy(e->target, &v, sizeof v);
    return HOG_EXIT_OK;
}

int hog_cli_loss_parse(const char *s) { return hog_cli_name_find(hog_cli_loss_names, s); }
int hog_cli_schedule_parse(const char *s) { return hog_cli_name_find(hog_cli_schedule_names, s); }
int hog_cli_algo_parse(const char *s) { return hog_algo_parse(s); }
int hog_cli_update_parse(const char *s) { return hog_cli_name_find(hog_cli_update_names, s); }
const char *hog_cli_loss_name(hog_loss l) { return hog_cli_name_of(hog_cli_loss_names, (int)l); }
const char *hog_cli_schedule_name(hog_schedule s) { return hog_cli_name_of(hog_cli_schedule_names, (int)s); }
const char *hog_cli_algo_name(hog_algo a) { return hog_algo_cli_name(a); }
const char *hog_cli_update_name(hog_update u) { return hog_cli_name_of(hog_cli_update_names, (int)u); }
int hog_cli_replicas_parse(const char *s) { return hog_cli_name_find(hog_cli_replicas_names, s); }
const char *hog_cli_replicas_name(hog_replicas r) { return hog_cli_name_of(hog_cli_replicas_names, (int)r); }

int hog_cli_hot_parse(const char *s, uint64_t max, uint64_t *k)
{
    if (strcmp(s, "auto") == 0)
        *k = HOG_HOT_AUTO;
    else if (strcmp(s, "off") == 0)
        *k = 0;
    else if (!hog_parse_u64(s, 0, max, k))
        return -1;
    return 0;
}

/* ---- files and formatting --------------------------------------------------------- */

hog_status hog_cli_check_readable(const char *const *paths, size_t n,
                                  hog_err *err)
{
    for (size_t i = 0; i < n; i++) {
        const char *p = paths[i];
        if (!p || strcmp(p, "-") == 0)
            continue;
        struct stat st;
        /* The loader's own words for the same failures (src/io/load.c);
         * access() rather than open(), which would wait on a FIFO. */
        if (stat(p, &st) != 0 || access(p, R_OK) != 0)
            return hog_errf(err, HOG_EIO, "%s: cannot open: %s", p,
                            strerror(errno));
        if (S_ISDIR(st.st_mode))
            return hog_errf(err, HOG_EIO, "%s: cannot open: %s", p,
                            strerror(EISDIR));
    }
    return HOG_OK;
}

bool hog_cli_same_file(const char *a, const char *b)
{
    /* "-" is standard input as an input and standard output as an output:
     * two streams. A device or FIFO (/dev/null, /dev/stdin and /dev/stdout
     * on one terminal) is not overwritten by a write: only regular files
     * (and one name that is not there yet) can be the same file. */
    if (!a || !b || strcmp(a, "-") == 0 || strcmp(b, "-") == 0)
        return false;
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino &&
               S_ISREG(sa.st_mode);
    return strcmp(a, b) == 0;
}

const char *hog_cli_basename(const char *path)
{
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}

const char *hog_cli_si(char *buf, size_t len, double v)
{
    if (!isfinite(v))
        snprintf(buf, len, "-");
    else if (v >= 1e9)
        snprintf(buf, len, "%.2f G", v / 1e9);
    else if (v >= 1e6)
        snprintf(buf, len, "%.2f M", v / 1e6);
    else if (v >= 1e3)
        snprintf(buf, len, "%.1f k", v / 1e3);
    else
        snprintf(buf, len, "%.0f", v);
    return buf;
}

const char *hog_cli_label(char *buf, size_t len, double v)
{
    if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, len, "%.0f", v == 0.0 ? 0.0 : v);
    else
        snprintf(buf, len, "%.9g", v);
    return buf;
}

const char *hog_cli_labels(char *buf, size_t len, const double *labels,
                           uint32_t k, uint32_t head)
{
    size_t n = 0;
    buf[0] = 0;
    for (uint32_t c = 0; c < k && n + 1 < len; c++) {
        char one[40];
        if (k > head + 2 && c == head) {
            n += (size_t)snprintf(buf + n, len - n, " ...");
            c = k - 2; /* and the last two */
        }
        hog_cli_label(one, sizeof one, labels[c]);
        if (n + 1 < len)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", c ? " " : "", one);
    }
    return buf;
}

const char *hog_cli_bytes(char *buf, size_t len, double b)
{
    if (b >= 1024.0 * 1024 * 1024)
        snprintf(buf, len, "%.2f GiB", b / (1024.0 * 1024 * 1024));
    else if (b >= 1024.0 * 1024)
        snprintf(buf, len, "%.1f MiB", b / (1024.0 * 1024));
    else if (b >= 1024.0)
        snprintf(buf, len, "%.1f KiB", b / 1024.0);
    else
        snprintf(buf, len, "%.0f B", b);
    return buf;
}

hog_status hog_cli_load(const char *path, const hog_load_opts *o, bool quiet,
                        hog_data **out, double *secs, hog_err *err)
{
    double t = hog_now();
    hog_status s = hog_data_load(path, o, out, err);
    t = hog_now() - t;
    if (secs)
        *secs = t;
    if (s == HOG_OK && !quiet) {
        hog_hashing h = { .size = sizeof h };
        hog_data_hashing(*out, &h);
        char hb[160];
        hog_cli_hashing(hb, sizeof hb, &h);
        fprintf(stderr,
                "loaded %s: %llu rows, %llu features, %llu nonzeros in %.2f s"
                "%s%s\n",
                strcmp(path, "-") == 0 ? "standard input" : hog_cli_basename(path),
                (unsigned long long)hog_data_rows(*out),
                (unsigned long long)hog_data_features(*out),
                (unsigned long long)hog_data_nnz(*out), t, *hb ? "; " : "", hb);
    }
    return s;
}

const char *hog_cli_hashing(char *buf, size_t len, const hog_hashing *h)
{
    if (!h->bits)
        snprintf(buf, len, "%s", "");
    else
        snprintf(buf, len, "hashed into 2^%u weights (seed %u), %llu "
                 "collision%s, %llu entr%s merged", h->bits, h->seed,
                 (unsigned long long)h->collisions,
                 h->collisions == 1 ? "" : "s",
                 (unsigned long long)h->merged, h->merged == 1 ? "y" : "ies");
    return buf;
}

uint64_t hog_cli_importance_rows(const hog_data *d)
{
    const float *w = hog_data_importance(d);
    uint64_t n = 0, rows = hog_data_rows(d);
    for (uint64_t i = 0; w && i < rows; i++)
        n += w[i] != 1.0f;
    return n;
}

const struct hog_cli_name hog_cli_format_names[] = {
    { "auto", HOG_FORMAT_AUTO, false },
    { "libsvm", HOG_FORMAT_LIBSVM, false },
    { "vw", HOG_FORMAT_VW, false },
    { "svmlight", HOG_FORMAT_LIBSVM, true },
    { NULL, 0, false },
};

hog_status hog_cli_load_model_data(const char *model, const char *data,
                                   const char *out, hog_load_opts *lo,
                                   bool model_space, bool quiet,
                                   hog_model **m, hog_data **d, hog_err *err)
{
    const char *const ins[] = { model, data };
    hog_status s;
    if ((s = hog_cli_check_readable(ins, 2, err)) != HOG_OK ||
        (out && (s = hog_outfile_check(out, err)) != HOG_OK) ||
        (s = hog_model_load(model, m, err)) != HOG_OK)
        return s;
    if (model_space)
        lo->n_features = hog_model_features(*m);
    unsigned bits = hog_model_hash_bits(*m);
    uint32_t seed = hog_model_hash_seed(*m);
    if (lo->hash_bits && (lo->hash_bits != bits || lo->hash_seed != seed))
        return hog_errf(err, HOG_EINVAL,
                        "%s was trained on %s, not on --hash-bits %u "
                        "--hash-seed %u: leave the hashing out, predict "
                        "hashes the data as the model asks", model,
                        bits ? "hashed features" : "unhashed features",
                        lo->hash_bits, lo->hash_seed);
    lo->hash_bits = bits;
    lo->hash_seed = seed;
    /* and crosses it as the model's training rows were */
    lo->interactions = hog_model_interactions(*m);
    if (!d)
        return HOG_OK;
    if ((s = hog_cli_load(data, lo, quiet, d, NULL, err)) != HOG_OK)
        return s;
    return hog_cli_hashing_check(model, *m, data, *d, err);
}

hog_status hog_cli_hashing_check(const char *model, const hog_model *m,
                                 const char *data, const hog_data *d,
                                 hog_err *err)
{
    unsigned bits = hog_model_hash_bits(m);
    hog_hashing h = { .size = sizeof h };
    hog_data_hashing(d, &h);
    if (h.bits != bits || (bits && h.seed != hog_model_hash_seed(m)))
        return hog_errf(err, HOG_EINVAL,
                        "%s: its features are %s, but %s was trained on %s; "
                        "a model scores only data hashed as its training "
                        "data was",
                        data, h.bits ? "hashed (Vowpal Wabbit text always is)"
                                     : "not hashed",
                        model, bits ? "hashed features" : "unhashed ones");
    return HOG_OK;
}

void hog_cli_warn_feature_space(uint64_t mf, uint64_t df, const char *path,
                                const char *goes_on)
{
    if ((df > 2 * mf && df - mf >= 1000) || (mf > 100 * df && mf - df >= 1000))
        fprintf(stderr, "hogtrain: warning: the model has %llu features but "
                        "%s has %llu: was it trained on other data? (%s)\n",
                (unsigned long long)mf,
                strcmp(path, "-") == 0 ? "standard input"
                                       : hog_cli_basename(path),
                (unsigned long long)df, goes_on);
}
