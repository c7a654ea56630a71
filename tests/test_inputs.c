/*
 * First contact: what a user meets when a file is not what hogtrain
 * expects (docs/RELIABILITY.md). Compressed files, models and checkpoints
 * given as data; a device or a pipe without end; a line longer than memory;
 * the largest feature index; a .hgb whose label summary lies, loaded or
 * streamed; a text file truncated while it is parsed; a full disk under
 * an output. Each is a sentence that names the file, never a crash, a hang
 * or a wrong model.
 */
#include <criterion/criterion.h>

#include "helpers.h"
#include "io/io.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define OUT_MAX 65536
static char out[OUT_MAX];

static const char *small_text =
    "1 1:0.5 3:1\n-1 2:1\n1 1:1 2:0.25\n-1 3:2\n1 1:0.75\n-1 2:0.5 3:1\n";

/* rows lines alternating "1 1:1" and "-1 2:1" into dir/name. */
static const char *many_rows(const char *dir, const char *name, unsigned rows)
{
    size_t cap = (size_t)rows * 8 + 1, n = 0;
    char *t = malloc(cap);
    cr_assert_not_null(t);
    for (unsigned i = 0; i < rows; i++)
        n += (size_t)snprintf(t + n, cap - n, i % 2 ? "-1 2:1\n" : "1 1:1\n");
    const char *p = th_write(dir, name, t, n);
    free(t);
    return p;
}

/* ---- E: a full disk under an output ------------------------------------- */

/* A full disk under predict -o: the error names the file and says "No
 * space left on device", not "Input/output error". A real full file
 * system: a 16 KiB tmpfs mounted in a private mount namespace (unshare -m,
 * which needs root or user namespaces); skipped where neither is
 * allowed. */
Test(outputs, full_disk_under_predict_says_no_space, .timeout = 60)
{
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    th_write(dir, "d.svm", small_text, strlen(small_text));
    many_rows(dir, "big.svm", 40000);
    int rc = th_run(out, sizeof out, "cd '%s' && mkdir full && "
                    "unshare -m sh -c 'mount -t tmpfs -o size=16k tmpfs full "
                    "&& echo mounted'", dir);
    if (rc != 0 || !strstr(out, "mounted"))
        cr_skip_test("cannot mount a small tmpfs in a private mount "
                     "namespace here (unshare -m: %s); skipping", out);
    rc = th_run(out, sizeof out, "cd '%s' && '%s' train -q d.svm -o m.hgm && "
                "unshare -m sh -c 'mount -t tmpfs -o size=16k tmpfs full && "
                "exec \"$0\" predict -q m.hgm big.svm -o full/p.txt' '%s'",
                dir, th_bin(), th_bin());
    cr_assert_eq(rc, 1, "predict into a full file system: rc %d\n%s", rc, out);
    cr_assert_not_null(strstr(out, "full/p.txt: write failed: No space left "
                                   "on device"), "%s", out);
    cr_assert_null(strstr(out, "Input/output error"), "%s", out);
}
