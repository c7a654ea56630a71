/*
 * Other tools' words: what a Vowpal Wabbit or LIBLINEAR user types out of
 * habit ("-b 20", "--passes 3", "-s 1", "-c 4", "--oaa 20", "-f model"),
 * answered with hogtrain's spelling of the same thing instead of a bare
 * "unknown option". The table is docs/TRAINING.md's translation table
 * ("Coming from Vowpal Wabbit or LIBLINEAR"); a test runs each
 * translation it gives as a hogtrain command line.
 *
 * Nothing here prints: util.c's option errors ask for the sentence.
 */
#include "cli/cli.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { IN_TRAIN = 1, IN_PREDICT = 2, IN_BOTH = 3 };

/* What a foreign flag takes after it. */
enum foreign_arg {
    ARG_NONE,   /* a switch */
    ARG_WORD,   /* any word (a file, a name) */
    ARG_NUMBER, /* a number; a flag two tools share tells them apart so */
};

struct foreign {
    const char *flag;  /* as typed, "-b" or "--passes" */
    unsigned in;       /* the subcommands it is met in */
    enum foreign_arg arg;
    const char *tool;  /* whose it is */
    const char *what;  /* what it means there */
    /* hogtrain's words; "%s" stands for the value given (once at most).
     * A sentence instead where nothing here does the same. */
    const char *here;
};

#define VW "Vowpal Wabbit"
#define LL "LIBLINEAR"

/* First match wins: where two tools share a flag, the entry whose
 * argument fits comes first (LIBLINEAR's -c 4 is a number, VW's -c
 * nothing). */
static const struct foreign table[] = {
    { "-b", IN_PREDICT, ARG_NUMBER, LL, "probability outputs",
      "--probabilities" },
    { "-b", IN_TRAIN, ARG_NUMBER, VW, "bits of the hash", "--hash-bits %s" },
    { "--bit_precision", IN_TRAIN, ARG_NUMBER, VW, "bits of the hash",
      "--hash-bits %s" },
    { "--passes", IN_TRAIN, ARG_NUMBER, VW, "passes over the data",
      "--epochs %s" },
    { "-c", IN_TRAIN, ARG_NUMBER, LL, "cost C", "--C %s" },
    { "-c", IN_TRAIN, ARG_NONE, VW, "cache",
      "hogtrain convert TRAIN TRAIN.hgb once, then train on TRAIN.hgb "
      "(the binary form loads without parsing)" },
    { "--cache", IN_TRAIN, ARG_NONE, VW, "cache",
      "hogtrain convert TRAIN TRAIN.hgb once, then train on TRAIN.hgb "
      "(the binary form loads without parsing)" },
    { "-k", IN_TRAIN, ARG_NONE, VW, "kill_cache", "nothing: no cache is "
      "kept behind your back (hogtrain convert makes one when asked)" },
    { "--oaa", IN_TRAIN, ARG_NUMBER, VW, "one-against-all",
      "nothing: 3 or more label values train K classes by themselves, "
      "one-vs-rest by default (--multiclass ovr), any label values" },
    { "-f", IN_TRAIN, ARG_WORD, VW, "final regressor", "-o %s" },
    { "--final_regressor", IN_TRAIN, ARG_WORD, VW, "final regressor",
      "-o %s" },
    { "-i", IN_TRAIN, ARG_WORD, VW, "initial regressor", "--init %s" },
    { "--initial_regressor", IN_TRAIN, ARG_WORD, VW, "initial regressor",
      "--init %s" },
    { "-i", IN_PREDICT, ARG_WORD, VW, "initial regressor",
      "hogtrain predict %s DATA" },
    { "-d", IN_BOTH, ARG_WORD, VW, "data file",
      "the data file is an operand, with no flag before it: %s" },
    { "--data", IN_BOTH, ARG_WORD, VW, "data file",
      "the data file is an operand, with no flag before it: %s" },
    { "-p", IN_TRAIN, ARG_NUMBER, LL, "epsilon of the SVR loss",
      "--loss squared_epsilon_insensitive --epsilon %s" },
    { "-p", IN_TRAIN, ARG_WORD, VW, "predictions file",
      "hogtrain predict MODEL DATA -o %s" },
    { "--predictions", IN_TRAIN, ARG_WORD, VW, "predictions file",
      "hogtrain predict MODEL DATA -o %s" },
    { "-p", IN_PREDICT, ARG_WORD, VW, "predictions file", "-o %s" },
    { "--predictions", IN_PREDICT, ARG_WORD, VW, "predictions file",
      "-o %s" },
    { "-l", IN_TRAIN, ARG_NUMBER, VW, "learning rate", "--eta %s" },
    { "--learning_rate", IN_TRAIN, ARG_NUMBER, VW, "learning rate",
      "--eta %s" },
    { "--power_t", IN_TRAIN, ARG_NUMBER, VW, "power of the step's decay",
      "--schedule invscaling --power %s" },
    { "--loss_function", IN_TRAIN, ARG_WORD, VW, "loss", "--loss %s" },
    { "--quantile_tau", IN_TRAIN, ARG_NUMBER, VW, "quantile loss's tau",
      "--loss quantile --quantile-tau %s" },
    { "--random_seed", IN_TRAIN, ARG_NUMBER, VW, "seed", "--seed %s" },
    { "--hash_seed", IN_TRAIN, ARG_NUMBER, VW, "hash seed",
      "--hash-seed %s" },
    { "--noconstant", IN_TRAIN, ARG_NONE, VW, "no constant feature",
      "--bias 0" },
    { "--ftrl", IN_TRAIN, ARG_NONE, VW, "FTRL-Proximal",
      "--schedule ftrl (the default where it runs)" },
    { "--ftrl_alpha", IN_TRAIN, ARG_NUMBER, VW, "FTRL's alpha", "--eta %s" },
    { "--adaptive", IN_TRAIN, ARG_NONE, VW, "adaptive (AdaGrad) steps",
      "--schedule adagrad" },
    { "--quadratic", IN_TRAIN, ARG_WORD, VW, "interactions",
      "--interactions %s" },
    { "--cubic", IN_TRAIN, ARG_WORD, VW, "three-way interactions",
      "--interactions %s" },
    { "--holdout_off", IN_TRAIN, ARG_NONE, VW, "no holdout",
      "nothing: no row is held out unless --holdout F asks" },
    { "--holdout_period", IN_TRAIN, ARG_NUMBER, VW, "holdout period",
      "--holdout F (a seeded, stratified share F of the rows)" },
    { "--readable_model", IN_TRAIN, ARG_WORD, VW, "readable model",
      "hogtrain info --weights MODEL > %s (--json: JSON)" },
    { "--invert_hash", IN_TRAIN, ARG_WORD, VW, "inverted hash",
      "--keep-names (then hogtrain info --weights MODEL > %s)" },
    { "--save_resume", IN_TRAIN, ARG_NONE, VW, "saved optimizer state",
      "--save-state (a later --init MODEL continues exactly)" },
    { "--link", IN_PREDICT, ARG_WORD, VW, "link function",
      "--probabilities (logistic) or --scores (identity)" },
    { "-s", IN_TRAIN, ARG_NUMBER, LL, "solver choice", NULL /* solver() */ },
    { "-e", IN_TRAIN, ARG_NUMBER, LL, "stopping tolerance",
      "--algo newton --tol %s (the --algo of your -s: newton, dcd, scd or "
      "lbfgs)" },
    { "-B", IN_TRAIN, ARG_NUMBER, LL, "bias", "--bias %s" },
    { "-v", IN_TRAIN, ARG_NUMBER, LL, "cross-validation", "--cv %s" },
    { "-C", IN_TRAIN, ARG_NONE, LL, "search of C", "--search-C" },
    { "-W", IN_TRAIN, ARG_WORD, LL, "instance weights", "--weights %s" },
    { "-n", IN_TRAIN, ARG_NUMBER, LL, "threads (its multi-core build)",
      "--algo newton --threads %s (the --algo of your -s)" },
    { "-w", IN_TRAIN, ARG_NUMBER, LL, "class weight",
      "--class-weight LABEL:%s" /* -wLABEL: weight() */ },
};

/* LIBLINEAR's -s, solver by solver, at its default -c 1. */
static const char *solver(long s)
{
    switch (s) {
    case 0: return "--algo newton --loss logistic --C 1";
    case 1: return "--algo dcd --loss sqhinge --C 1";
    case 2: return "--algo newton --loss sqhinge --C 1";
    case 3: return "--algo dcd --loss hinge --C 1";
    case 4: return "not here (Crammer and Singer's multiclass SVM); the "
                   "nearest: --multiclass softmax (multinomial logistic)";
    case 5: return "--algo scd --loss sqhinge --reg l1 --C 1";
    case 6: return "--algo scd --loss logistic --reg l1 --C 1";
    case 7: return "--algo dcd --loss logistic --C 1";
    case 11: return "--algo newton --loss squared_epsilon_insensitive --C 1 "
                    "(-p is --epsilon, 0.1 here too)";
    case 12: return "--algo dcd --loss squared_epsilon_insensitive --C 1 "
                    "(-p is --epsilon, 0.1 here too)";
    case 13: return "--algo dcd --loss epsilon_insensitive --C 1 (-p is "
                    "--epsilon, 0.1 here too)";
    case 21: return "not here (one-class SVM)";
    default: return NULL;
    }
}

static bool is_number(const char *s)
{
    if (!s || !*s)
        return false;
    char *end;
    (void)strtod(s, &end);
    return *end == '\0';
}

/* "-b", "--passes=3" or "-b20": the flag (into flag) and its attached
 * value, or NULL. */
static const char *split(const char *word, char *flag, size_t len)
{
    const char *eq = word[1] == '-' ? strchr(word, '=') : NULL;
    size_t n = eq ? (size_t)(eq - word) : word[1] == '-' ? strlen(word)
                                                           : (size_t)2;
    if (n >= len)
        n = len - 1;
    memcpy(flag, word, n);
    flag[n] = '\0';
    if (eq)
        return eq + 1;
    return word[1] != '-' && word[1] && word[2] ? word + 2 : NULL;
}

const char *hog_cli_foreign_hint(const char *cmd, const char *word,
                                 const char *next, char *buf, size_t len)
{
    if (!word || word[0] != '-' || !word[1])
        return NULL;
    unsigned in = strcmp(cmd, "train") == 0     ? IN_TRAIN
                  : strcmp(cmd, "predict") == 0 ? IN_PREDICT
                                                : 0;
    char flag[64];
    const char *attached = split(word, flag, sizeof flag);
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const struct foreign *f = &table[i];
        if (!(f->in & in) || strcmp(f->flag, flag) != 0)
            continue;
        /* LIBLINEAR's -wLABEL W: the label is glued to the flag */
        const char *label = NULL;
        if (strcmp(f->flag, "-w") == 0) {
            label = attached;
            attached = NULL;
            if (!is_number(label))
                continue;
        }
        const char *value = f->arg == ARG_NONE ? NULL
                            : attached         ? attached
                                               : next;
        if ((f->arg == ARG_NUMBER && !is_number(value)) ||
            (f->arg == ARG_WORD && (!value || !*value)) ||
            (f->arg == ARG_NONE && attached))
            continue;
        char shown[96];
        snprintf(shown, sizeof shown, "%s%s%s", label ? word : flag,
                 value ? " " : "", value ? value : "");
        char here[256];
        if (strcmp(f->flag, "-s") == 0) {
            const char *s = solver(strtol(value, NULL, 10));
            snprintf(here, sizeof here, "%s",
                     s ? s : "no such solver in LIBLINEAR either");
        } else if (label) {
            snprintf(here, sizeof here, "--class-weight %s:%s", label, value);
        } else {
            snprintf(here, sizeof here, f->here, value ? value : "");
        }
        snprintf(buf, len, "%s is %s's %s; here: %s", shown, f->tool, f->what,
                 here);
        return buf;
    }
    return NULL;
}

const char *hog_cli_foreign_quiet(const char *next, char *buf, size_t len)
{
    /* VW's -q takes two namespaces' first letters (':' any); a file of
     * that name is hogtrain's TRAIN after -q. */
    if (!next || strlen(next) != 2)
        return NULL;
    for (int k = 0; k < 2; k++)
        if (!isalnum((unsigned char)next[k]) && next[k] != ':')
            return NULL;
    struct stat sb;
    if (stat(next, &sb) == 0)
        return NULL;
    snprintf(buf, len, "-q %s is Vowpal Wabbit's interactions; here -q is "
             "--quiet, and the interactions are --interactions %s", next,
             next);
    return buf;
}
