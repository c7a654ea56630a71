/*
 * A cgroup's memory limit (a container's, `systemd-run -p MemoryMax=`)
 * never fails an allocation: its OOM killer ends the process. So the
 * memory a process may take (hog_mem_available) reads the limit of its
 * cgroup, v1 and v2, and every budget uses it: the load's estimate, the
 * line limit, the model's size. The fake cgroup trees are read through
 * the test seam HOGTRAIN_TEST_CGROUP (docs/RELIABILITY.md); the last test
 * makes a real cgroup where this machine allows it.
 */
#include <criterion/criterion.h>

#include "core/core.h"
#include "helpers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char out[16384];

/* dir/rel (folders made as needed) holding text. */
static void put(const char *dir, const char *rel, const char *text)
{
    char p[1400];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    for (char *s = p + strlen(dir); (s = strchr(s, '/')); s++) {
        *s = 0;
        mkdir(p, 0755);
        *s = '/';
    }
    FILE *f = fopen(p, "w");
    cr_assert(f, "%s: %s", p, strerror(errno));
    fputs(text, f);
    fclose(f);
}

#define MiB (UINT64_C(1) << 20)

static uint64_t available(const char *tree, const char **what)
{
    setenv("HOGTRAIN_TEST_CGROUP", tree, 1);
    uint64_t v = hog_mem_available(what);
    unsetenv("HOGTRAIN_TEST_CGROUP");
    return v;
}

Test(memlimit, available_memory_reads_cgroup_v1_and_v2)
{
    char dir[1024], tree[1100];
    th_tmpdir(dir, sizeof dir);
    const char *what = NULL;

    /* v2: the limit less the usage less the inactive page cache */
    snprintf(tree, sizeof tree, "%s/v2", dir);
    put(tree, "cgroup", "0::/job/step\n");
    put(tree, "memory.max", "max\n");
    put(tree, "job/memory.max", "104857600\n");
    put(tree, "job/memory.high", "max\n");
    put(tree, "job/memory.current", "31457280\n");
    put(tree, "job/memory.stat", "anon 20971520\ninactive_anon 0\n"
                                 "inactive_file 10485760\n");
    put(tree, "job/step/memory.max", "max\n");
    cr_assert_eq(available(tree, &what), 80 * MiB);
    cr_assert_str_eq(what, "under the memory limit of the cgroup (memory.max)");
    /* memory.high, above which the process is throttled, binds too */
    put(tree, "job/step/memory.high", "73400320\n");
    put(tree, "job/step/memory.current", "0\n");
    cr_assert_eq(available(tree, &what), 70 * MiB);
    cr_assert_str_eq(what, "under the memory limit of the cgroup (memory.high)");

    /* v1: a parent's limit binds its children ("no limit" is 2^63 - 4096) */
    snprintf(tree, sizeof tree, "%s/v1", dir);
    put(tree, "cgroup", "5:cpu,cpuacct:/a\n4:memory:/a/b\n0::/\n");
    put(tree, "memory/memory.limit_in_bytes", "9223372036854771712\n");
    put(tree, "memory/a/memory.limit_in_bytes", "67108864\n");
    put(tree, "memory/a/memory.usage_in_bytes", "4194304\n");
    put(tree, "memory/a/memory.stat", "cache 0\ntotal_inactive_file 0\n");
    put(tree, "memory/a/b/memory.limit_in_bytes", "9223372036854771712\n");
    cr_assert_eq(available(tree, &what), 60 * MiB);
    cr_assert_str_eq(what, "under the memory limit of the cgroup "
                           "(memory.limit_in_bytes)");

    /* "max" everywhere: no cgroup limit, the machine's memory binds */
    snprintf(tree, sizeof tree, "%s/none", dir);
    put(tree, "cgroup", "0::/job\n");
    put(tree, "job/memory.max", "max\n");
    uint64_t v = available(tree, &what);
    cr_assert(v > 80 * MiB && v < UINT64_MAX, "%llu", (unsigned long long)v);
    cr_assert(!strstr(what, "cgroup"), "%s", what);
}

/* A fake v2 tree whose job has limit bytes, in dir/name. */
static const char *tree_v2(const char *dir, const char *name, const char *limit)
{
    static char tree[1100];
    snprintf(tree, sizeof tree, "%s/%s", dir, name);
    put(tree, "cgroup", "0::/job\n");
    put(tree, "job/memory.max", limit);
    put(tree, "job/memory.current", "0\n");
    return tree;
}

Test(memlimit, a_load_over_the_cgroup_limit_is_refused_with_a_sentence,
     .timeout = 120)
{
    TH_DATA_OR_SKIP(a9a, "a9a");
    const char *root = getenv("HOGTRAIN_DATA");
    char xz[1100], dir[1024];
    snprintf(xz, sizeof xz, "%s/a9a.xz", root ? root : "../shared/data");
    th_tmpdir(dir, sizeof dir);
    const char *v2 = tree_v2(dir, "v2", "1048576\n");
    char v1[1100];
    snprintf(v1, sizeof v1, "%s/v1", dir);
    put(v1, "cgroup", "4:memory:/job\n");
    put(v1, "memory/job/memory.limit_in_bytes", "1048576\n");
    /* a9a's 2.2 MiB of text fit in any machine, not in 1 MiB; its .xz is
     * weighed by what it decodes to, not its 150 KB */
    const char *files[] = { a9a, xz, a9a };
    const char *trees[] = { v2, v2, v1 };
    for (int i = 0; i < 3; i++) {
        int rc = th_run(out, sizeof out, "cd '%s' && HOGTRAIN_TEST_CGROUP='%s' "
                        "'%s' train -q '%s' -o m.hgm", dir, trees[i], th_bin(),
                        files[i]);
        cr_assert_eq(rc, 1, "%d: rc %d\n%s", i, rc, out);
        cr_assert(strstr(out, "a9a") && strstr(out, ": the data needs about ") &&
                  strstr(out, "of memory (its parsed rows, from 2.2 MiB of "
                              "text), but only 1.0 MiB is available under the "
                              "memory limit of the cgroup (memory.") &&
                  strstr(out, "; raise the limit, or convert it to .hgb"),
                  "%d: %s", i, out);
    }
    /* read from a pipe, weighed window by window */
    int rc = th_run(out, sizeof out, "cd '%s' && HOGTRAIN_TEST_CGROUP='%s' "
                    "'%s' train -q - -o m.hgm < '%s'", dir, v2, th_bin(), a9a);
    cr_assert_eq(rc, 1, "rc %d\n%s", rc, out);
    cr_assert(strstr(out, "<stdin>: the data needs about ") &&
              strstr(out, "but only 1.0 MiB is available under the memory "
                          "limit of the cgroup (memory.max); raise the limit, "
                          "or save it to a file"), "%s", out);
    /* no limit ("max"): the same load trains */
    const char *none = tree_v2(dir, "none", "max\n");
    rc = th_run(out, sizeof out, "cd '%s' && HOGTRAIN_TEST_CGROUP='%s' '%s' "
                "train -q '%s' -o m.hgm", dir, none, th_bin(), xz);
    cr_assert_eq(rc, 0, "rc %d\n%s", rc, out);
}

Test(memlimit, a_line_over_half_the_cgroup_limit_names_it, .timeout = 60)
{
    char dir[1024];
    th_tmpdir(dir, sizeof dir);
    const char *tree = tree_v2(dir, "v2", "4194304\n");
    int rc = th_run(out, sizeof out, "cd '%s' && { printf '1 1:1\\n'; head -c "
                    "3000000 /dev/zero | tr '\\0' 1; } | HOGTRAIN_TEST_CGROUP='%s' "
                    "'%s' train -q - -o m.hgm", dir, tree, th_bin());
    cr_assert_eq(rc, 1, "rc %d\n%s", rc, out);
    cr_assert(strstr(out, "<stdin>:2: a line longer than 2 MiB without a "
                          "newline, the most one line may hold here (half the "
                          "memory available under the memory limit of the "
                          "cgroup (memory.max))"), "%s", out);
}

/* This process's memory cgroup folder, v1 or v2, in buf; NULL when none
 * is mounted where it can be made. */
static const char *own_cgroup(char *buf, size_t len, bool *v2)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return NULL;
    char line[1024];
    const char *found = NULL;
    while (!found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = 0;
        struct stat sb;
        if (strstr(c1 + 1, "memory")) {
            snprintf(buf, len, "/sys/fs/cgroup/memory%s", c2 + 1);
            *v2 = false;
        } else if (line[0] == '0' && !c1[1] &&
                   stat("/sys/fs/cgroup/cgroup.controllers", &sb) == 0) {
            snprintf(buf, len, "/sys/fs/cgroup%s", c2 + 1);
            *v2 = true;
        } else {
            continue;
        }
        found = stat(buf, &sb) == 0 ? buf : NULL;
    }
    fclose(f);
    return found;
}

/* The real thing: a cgroup of 64 MiB, where the rows of Fashion-MNIST
 * (about 300 MiB) would meet the OOM killer. */
Test(memlimit, a_real_cgroup_limit_refuses_the_load, .timeout = 120)
{
    const char *root = getenv("HOGTRAIN_DATA");
    char xz[1100], base[1024], cg[1200], p[1300];
    snprintf(xz, sizeof xz, "%s/fashion-mnist.train.svm.xz",
             root ? root : "../shared/data");
    if (access(xz, R_OK) != 0)
        cr_skip_test("%s not found; skipping", xz);
    bool v2;
    if (!own_cgroup(base, sizeof base, &v2))
        cr_skip_test("no memory cgroup of this process is mounted; skipping");
    snprintf(cg, sizeof cg, "%s/hogtrain-test-%d", base, (int)getpid());
    if (mkdir(cg, 0755) != 0)
        cr_skip_test("cannot make a cgroup under %s (%s); skipping", base,
                     strerror(errno));
    snprintf(p, sizeof p, "%s/%s", cg, v2 ? "memory.max" : "memory.limit_in_bytes");
    FILE *f = fopen(p, "w");
    bool set = f && fputs("67108864\n", f) >= 0;
    if (f)
        set = fclose(f) == 0 && set;
    if (!set) {
        rmdir(cg);
        cr_skip_test("cannot set a memory limit in %s; skipping", cg);
    }
    char dir[1024];
    th_tmpdir(dir, sizeof dir);
    int rc = th_run(out, sizeof out, "cd '%s' && sh -c 'echo $$ > \"%s/"
                    "cgroup.procs\" && exec \"%s\" train -q \"%s\" -o m.hgm'",
                    dir, cg, th_bin(), xz);
    rmdir(cg);
    if (strstr(out, "cgroup.procs"))
        cr_skip_test("cannot move a process into %s; skipping: %s", cg, out);
    cr_assert_eq(rc, 1, "rc %d (137: killed)\n%s", rc, out);
    cr_assert(strstr(out, "fashion-mnist.train.svm.xz: the data needs about ") &&
              strstr(out, "is available under the memory limit of the cgroup"),
              "%s", out);
}
