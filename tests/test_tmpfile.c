/*
 * Crash-safe writes (src/io/file.c): the temporary beside the target, and
 * the removal of temporaries that killed writers of this host left behind,
 * without touching those of live processes or of other hosts.
 */
#include <criterion/criterion.h>

#include "helpers.h"
#include "io/io.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* A PID that no process holds now: a child that has exited and been
 * reaped (PIDs are not reused at once). */
static pid_t dead_pid(void)
{
    pid_t p = fork();
    cr_assert(p >= 0);
    if (p == 0)
        _exit(0);
    int st;
    waitpid(p, &st, 0);
    return p;
}

/* "X.tmp.HOST-" as this process names its temporaries, read back from a
 * real hog_tmpfile_open. */
static void our_prefix(const char *path, char *buf, size_t len)
{
    char tmp[4200];
    FILE *f;
    hog_err err;
    cr_assert_eq(hog_tmpfile_open(path, tmp, sizeof tmp, &f, &err), HOG_OK,
                 "%s", err.msg);
    hog_tmpfile_abort(f, tmp);
    char *dash = strrchr(tmp, '-');
    cr_assert_not_null(dash, "temporary %s has no HOST-PID suffix", tmp);
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    cr_assert_str_eq(dash + 1, pid, "temporary %s does not end in our PID",
                     tmp);
    snprintf(buf, len, "%.*s", (int)(dash + 1 - tmp), tmp);
}

Test(tmpfile, commit_removes_only_dead_local_temporaries)
{
    char dir[4096];
    th_tmpdir(dir, sizeof dir);
    char path[4300];
    snprintf(path, sizeof path, "%s/model.hgm", dir);
    char prefix[4400];
    our_prefix(path, prefix, sizeof prefix);

    char dead[4500], live[4500], other[4500], foreign[4500];
    snprintf(dead, sizeof dead, "%s%ld", prefix, (long)dead_pid());
    snprintf(live, sizeof live, "%s%ld", prefix, (long)getppid());
    snprintf(other, sizeof other, "%s/model.hgm.tmp.elsewhere-%ld", dir,
             (long)dead_pid());
    snprintf(foreign, sizeof foreign, "%s/other.hgm.tmp.x-1", dir);
    const char *leftovers[] = {dead, live, other, foreign};
    for (int i = 0; i < 4; i++) {
        FILE *f = fopen(leftovers[i], "wb");
        cr_assert_not_null(f, "%s", leftovers[i]);
        fputs("half a model", f);
        fclose(f);
    }

    char tmp[4200];
    FILE *f;
    hog_err err;
    cr_assert_eq(hog_tmpfile_open(path, tmp, sizeof tmp, &f, &err), HOG_OK,
                 "%s", err.msg);
    fputs("whole", f);
    cr_assert_eq(hog_tmpfile_commit(f, tmp, path, &err), HOG_OK, "%s",
                 err.msg);

    cr_assert(exists(path));
    cr_assert_not(exists(tmp), "our own temporary %s left", tmp);
    cr_assert_not(exists(dead), "a dead writer's temporary %s was kept", dead);
    cr_assert(exists(live), "a live process's temporary %s was removed", live);
    cr_assert(exists(other), "another host's temporary %s was removed", other);
    cr_assert(exists(foreign), "another file's temporary %s was removed",
              foreign);
}

Test(tmpfile, failed_commit_removes_nothing_else)
{
    char dir[4096];
    th_tmpdir(dir, sizeof dir);
    char path[4300];
    snprintf(path, sizeof path, "%s/ckpt", dir);
    char prefix[4400];
    our_prefix(path, prefix, sizeof prefix);
    char dead[4500];
    snprintf(dead, sizeof dead, "%s%ld", prefix, (long)dead_pid());
    FILE *g = fopen(dead, "wb");
    cr_assert_not_null(g);
    fclose(g);

    setenv("HOGTRAIN_TEST_ENOSPC", "1", 1);
    char tmp[4200];
    FILE *f;
    hog_err err;
    cr_assert_eq(hog_tmpfile_open(path, tmp, sizeof tmp, &f, &err), HOG_OK,
                 "%s", err.msg);
    fputs("x", f);
    hog_status s = hog_tmpfile_commit(f, tmp, path, &err);
    unsetenv("HOGTRAIN_TEST_ENOSPC");
    cr_assert_eq(s, HOG_EIO);
    cr_assert(strstr(err.msg, "No space left"), "%s", err.msg);
    cr_assert_not(exists(path));
    cr_assert_not(exists(tmp));
    cr_assert(exists(dead), "cleanup ran although the write failed");
}
