/* The README's a9a examples, run as written on the real data: every line
 * of output the README shows must be what the command prints, but for
 * what the machine decides (seconds, rates, how many folds run at once).
 * The examples are found by their prompt ("    $ "), not by line number:
 * a command is an indented line that starts with "$ ", its output the
 * indented lines after it up to the next command or the next paragraph. */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "hogtrain.h"

static char out[1 << 18];

static bool is_number(const char *t)
{
    char *end;
    strtod(t, &end);
    return end != t && (*end == 0 || strchr(",;)", *end));
}

/* Whether a word is a unit of the rate before it ("4.58 M rows/s"). */
static bool is_unit(const char *w)
{
    return w[0] && strchr("kMG", w[0]) && !w[1];
}

/* The line with what the machine decides replaced by '#': a number before
 * "s" (seconds), before "rows/s" (with its k, M or G); the clause of how
 * the folds shared the CPUs ("2 folds at a time, each on one thread, 6.30
 * s", "5 folds one after another on all threads, ...") to the line's end;
 * a table row (its first word the epoch) loses its seconds and rows/s
 * columns. Words are joined by one space. */
static void mask(const char *line, char *buf, size_t len)
{
    char copy[1024], *tok[128], *save;
    unsigned n = 0;
    snprintf(copy, sizeof copy, "%s", line);
    for (char *t = strtok_r(copy, " ", &save); t && n < 128;
         t = strtok_r(NULL, " ", &save))
        tok[n++] = t;
    if (n >= 3 && strspn(tok[0], "0123456789") == strlen(tok[0]))
        n -= 2 + is_unit(tok[n - 1]);
    size_t at = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < n; i++) {
        const char *w = tok[i];
        const char *next = i + 1 < n ? tok[i + 1] : "";
        bool unit = is_unit(next) && i + 2 < n;
        const char *after = unit ? tok[i + 2] : next;
        if (is_number(w) && strcmp(next, "folds") == 0)
            n = i + 1; /* the clause of the CPUs: the line's last */
        if (is_number(w) &&
            ((after[0] == 's' && (!after[1] || strchr(",;)", after[1]))) ||
             strncmp(after, "rows/s", 6) == 0 || strcmp(next, "folds") == 0)) {
            w = "#";
            i += unit; /* the unit goes with the number */
        }
        at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%s%s",
                               at ? " " : "", w);
    }
}

/* The words that tell a line from the others of its output: two for the
 * lines that repeat their first word ("epoch 3/5:", "loaded a9a.t:",
 * the table's header), else the first. */
static void key_of(const char *line, char *buf, size_t len)
{
    char a[256] = "", b[256] = "";
    sscanf(line, "%255s %255s", a, b);
    bool two = strcmp(a, "epoch") == 0 || strcmp(a, "loaded") == 0 ||
               strcmp(a, "wrote") == 0;
    snprintf(buf, len, "%s%s%s", a, two ? " " : "", two ? b : "");
}

/* The line of the command's output with key's words, NULL: none. */
static const char *find_line(const char *text, const char *key, char *buf,
                             size_t len)
{
    for (const char *p = text; *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        snprintf(buf, len, "%.*s", (int)n, p);
        char k[512];
        key_of(buf, k, sizeof k);
        if (strcmp(k, key) == 0)
            return buf;
        p += n + (eol != NULL);
    }
    return NULL;
}

/* Whether the README's command is one this test runs: on a9a, by the
 * command or by what the README shows of a9a's files, and quick (the C
 * search takes tens of seconds, bench much longer; topo names the
 * machine). */
static bool runs(const char *cmd, bool liblinear)
{
    bool ours = strncmp(cmd, "hogtrain ", 9) == 0 ||
                strncmp(cmd, "head ", 5) == 0 ||
                (liblinear && strncmp(cmd, "liblinear-predict ", 18) == 0);
    return ours && strstr(cmd, "a9a") && !strstr(cmd, "--search-C") &&
           !strstr(cmd, "hogtrain bench") && !strstr(cmd, "hogtrain topo");
}

Test(readme, a9a_examples_print_what_the_readme_shows, .timeout = 240)
{
    TH_DATA_OR_SKIP(a9a, "a9a");
    TH_DATA_OR_SKIP(a9a_t, "a9a.t");
    char *text = th_source("README.md");
    if (!text)
        cr_skip_test("README.md is not beside tests/ (run from the source "
                     "tree); skipping");
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    /* a9a as Vowpal Wabbit text, as the README's "head -1 a9a.vw" shows */
    int rc = th_run(out, sizeof out,
                    "cd '%s' && ln -sf '%s' a9a && ln -sf '%s' a9a.t && "
                    "for f in a9a a9a.t; do sed -E 's/ ([0-9]+):1/ w\\1/g; "
                    "s/^([^ ]+) /\\1 |f /; s/ +$//' $f > $f.vw; done",
                    dir, a9a, a9a_t);
    cr_assert_eq(rc, 0, "%s", out);
    bool liblinear = th_have_liblinear();
    unsigned commands = 0, lines = 0;
    char *save, *cmd = NULL;
    bool run = false;
    for (char *l = strtok_r(text, "\n", &save); l;
         l = strtok_r(NULL, "\n", &save)) {
        if (strncmp(l, "    ", 4) != 0) { /* prose: the block ended */
            cmd = NULL;
            continue;
        }
        if (strncmp(l, "    $ ", 6) == 0) {
            cmd = l + 6;
            run = runs(cmd, liblinear);
            if (!run)
                continue;
            bool ours = strncmp(cmd, "hogtrain ", 9) == 0;
            /* the command without its comment (th_run appends 2>&1) */
            const char *hash = strstr(cmd, " #");
            int len = hash ? (int)(hash - cmd) : (int)strlen(cmd);
            rc = th_run(out, sizeof out, "cd '%s' && %s%s%s%.*s", dir,
                        ours ? "'" : "", ours ? th_bin() : "", ours ? "'" : "",
                        len - 8 * ours, cmd + 8 * ours);
            cr_assert_eq(rc, 0, "README's $ %s:\n%s", cmd, out);
            commands++;
            continue;
        }
        if (!cmd || !run || strcmp(l + 4, "...") == 0)
            continue;
        char key[512], got[1024], want_m[1024], got_m[1024];
        key_of(l + 4, key, sizeof key);
        const char *g = find_line(out, key, got, sizeof got);
        cr_assert_not_null(g, "README's $ %s shows\n%s\nbut it printed no "
                           "such line:\n%s", cmd, l + 4, out);
        mask(l + 4, want_m, sizeof want_m);
        mask(g, got_m, sizeof got_m);
        cr_assert_str_eq(got_m, want_m, "README's $ %s shows\n  %s\nbut it "
                         "prints\n  %s", cmd, l + 4, g);
        lines++;
    }
    free(text);
    cr_log_info("%u README commands run, %u lines of output compared",
                commands, lines);
    cr_assert_geq(commands, 9, "the README's a9a examples were not found");
}

/* --search-C stops after as many C values without a gain as the library's
 * default says, and --help and the man page say that number (they said 5
 * where it was 3). */
Test(readme, search_C_patience_is_the_one_help_and_man_page_give)
{
    hog_search_opts so;
    hog_search_opts_init(&so);
    char want[64];
    int rc = th_run(out, sizeof out, "'%s' train --help", th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    snprintf(want, sizeof want, "stopping after %u values without", so.patience);
    cr_assert_not_null(strstr(out, want), "--help does not say \"%s\":\n%s",
                       want, out);
    char *man = th_source("docs/hogtrain.1");
    if (!man)
        cr_skip_test("docs/hogtrain.1 is not beside tests/ (run from the "
                     "source tree); skipping");
    snprintf(want, sizeof want, "stopped after %u values of C in a row",
             so.patience);
    cr_assert_not_null(strstr(man, want), "docs/hogtrain.1 does not say "
                       "\"%s\"", want);
    free(man);
}
