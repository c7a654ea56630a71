/* The libraries' symbols. Both define no global outside the hog_ prefix:
 * the archive is linked whole into other programs (and into the Python
 * extension and the CUDA plugin), where an unprefixed global of ours
 * (tcp_close) would collide with theirs. The shared library exports every
 * function include/hogtrain.h declares: its version script
 * (mk/libhogtrain.map) and -fvisibility=hidden must never hide one. The
 * libraries are read with nm beside the command (HOGTRAIN_BIN's folder). */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "helpers.h"

#define NAMES_MAX 4096

/* A set of symbol names, each malloc'd. */
struct names {
    char *v[NAMES_MAX];
    unsigned n;
};

static void names_add(struct names *s, const char *name)
{
    cr_assert_lt(s->n, NAMES_MAX, "more than %d names", NAMES_MAX);
    s->v[s->n] = strdup(name);
    cr_assert_not_null(s->v[s->n]);
    s->n++;
}

static bool names_has(const struct names *s, const char *name)
{
    for (unsigned i = 0; i < s->n; i++)
        if (strcmp(s->v[i], name) == 0)
            return true;
    return false;
}

static void names_free(struct names *s)
{
    for (unsigned i = 0; i < s->n; i++)
        free(s->v[i]);
    s->n = 0;
}

static void nm_or_skip(void)
{
    char out[256];
    if (th_run(out, sizeof out, "command -v nm") != 0)
        cr_skip_test("nm is not on the PATH (Debian: binutils); the "
                     "libraries' symbols are not checked");
}

/* The path of the library `name` beside the command; the test fails when
 * it has not been built. */
static const char *lib_path(const char *name)
{
    static char path[1024];
    const char *bin = th_bin(), *slash = strrchr(bin, '/');
    snprintf(path, sizeof path, "%.*s%s", slash ? (int)(slash - bin + 1) : 0,
             bin, name);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0,
                 "%s is not there: build it (make) beside %s", path, bin);
    return path;
}

/* The defined global names that `nm flags path` lists (the archive's
 * member headers and blank lines are skipped: only "value type name"
 * lines name a symbol). */
static void nm_globals(const char *flags, const char *path, struct names *s)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "nm %s '%s'", flags, path);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p, "cannot run %s", cmd);
    char line[1024];
    while (fgets(line, sizeof line, p)) {
        char value[64], type[8], name[512];
        if (sscanf(line, "%63s %7s %511s", value, type, name) == 3)
            names_add(s, name);
    }
    cr_assert_eq(pclose(p), 0, "%s failed", cmd);
}

/* Whether name is one a sanitizer adds beside ours (GCC's AddressSanitizer
 * defines __odr_asan.<variable> for each global variable: make asan). */
static bool sanitizer_name(const char *name)
{
    static const char *const prefix[] = { "__odr_asan", "__asan_",
                                          "__ubsan_", "__sancov_" };
    for (size_t i = 0; i < sizeof prefix / sizeof *prefix; i++)
        if (strncmp(name, prefix[i], strlen(prefix[i])) == 0)
            return true;
    return false;
}

/* Fails, naming them, when any of s lacks the hog_ prefix. */
static void assert_all_hog(const struct names *s, const char *what)
{
    char bad[4096] = "";
    size_t len = 0;
    unsigned n = 0;
    for (unsigned i = 0; i < s->n; i++)
        if (strncmp(s->v[i], "hog_", 4) != 0 && !sanitizer_name(s->v[i])) {
            n++;
            if (len < sizeof bad)
                len += (size_t)snprintf(bad + len, sizeof bad - len, " %s",
                                        s->v[i]);
        }
    cr_assert_gt(s->n, 0, "%s lists no global symbol at all", what);
    cr_assert_eq(n, 0, "%s: global symbols without the hog_ prefix (%u; "
                 "rename them hog_..., or make them static):%s", what, n,
                 bad);
}

Test(abi, archive_defines_hog_globals_only)
{
    nm_or_skip();
    struct names s = { 0 };
    const char *a = lib_path("libhogtrain.a");
    nm_globals("-g --defined-only", a, &s);
    assert_all_hog(&s, a);
    names_free(&s);
}

Test(abi, shared_library_exports_hog_only)
{
    nm_or_skip();
    struct names s = { 0 };
    const char *so = lib_path("libhogtrain.so");
    nm_globals("-D --defined-only", so, &s);
    assert_all_hog(&s, so);
    names_free(&s);
}

/* The functions include/hogtrain.h declares: every hog_name followed by
 * "(" outside comments and preprocessor lines, but for a type before a
 * function pointer ("hog_status (*between)(void *)"). */
static void header_functions(const char *text, struct names *s)
{
    const char *p = text;
    bool line_start = true;
    while (*p) {
        if (p[0] == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            p = e ? e + 2 : p + strlen(p);
            continue;
        }
        if (p[0] == '/' && p[1] == '/') {
            p += strcspn(p, "\n");
            continue;
        }
        if (line_start && *p == '#') { /* with its continuation lines */
            while (*p && !(*p == '\n' && p[-1] != '\\'))
                p++;
            continue;
        }
        if (*p == '\n')
            line_start = true;
        else if (!isspace((unsigned char)*p))
            line_start = false;
        bool word_start = p == text || !(isalnum((unsigned char)p[-1]) ||
                                         p[-1] == '_');
        if (word_start && strncmp(p, "hog_", 4) == 0) {
            const char *e = p + 4;
            while (isalnum((unsigned char)*e) || *e == '_')
                e++;
            const char *q = e;
            while (*q == ' ' || *q == '\t')
                q++;
            char name[512];
            snprintf(name, sizeof name, "%.*s", (int)(e - p), p);
            if (*q == '(' && q[1] != '*' && !names_has(s, name))
                names_add(s, name);
            p = e;
            continue;
        }
        p++;
    }
}

Test(abi, shared_library_exports_every_public_function)
{
    nm_or_skip();
    struct names api = { 0 }, exported = { 0 };
    /* hogtrain.h and the model's part it includes */
    static const char *const headers[] = { "include/hogtrain.h",
                                           "include/hogtrain_model.h" };
    for (size_t i = 0; i < sizeof headers / sizeof *headers; i++) {
        char *h = th_source(headers[i]);
        if (!h)
            cr_skip_test("%s is not beside tests/ (run from the source "
                         "tree); skipping", headers[i]);
        header_functions(h, &api);
        free(h);
    }
    /* a floor, so that a parser that finds nothing cannot pass */
    cr_assert_geq(api.n, 30, "found only %u functions in include/hogtrain.h",
                  api.n);
    const char *so = lib_path("libhogtrain.so");
    nm_globals("-D --defined-only", so, &exported);
    char missing[4096] = "";
    size_t len = 0;
    unsigned n = 0;
    for (unsigned i = 0; i < api.n; i++)
        if (!names_has(&exported, api.v[i])) {
            n++;
            if (len < sizeof missing)
                len += (size_t)snprintf(missing + len, sizeof missing - len,
                                        " %s", api.v[i]);
        }
    cr_assert_eq(n, 0, "%s leaves out functions that "
                 "include/hogtrain.h declares (%u of %u; HOG_API on each; "
                 "mk/libhogtrain.map):%s", so, n, api.n, missing);
    names_free(&api);
    names_free(&exported);
}
