/*
 * Crash-safe writes (src/io/outfile.c): the temporary beside the target, and
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
 * real hog_outfile_open ("X.tmp.HOST-PID-RANDOM"). */
static void our_prefix(const char *path, char *buf, size_t len)
{
    hog_outfile o;
    hog_err err;
    cr_assert_eq(hog_outfile_open(&o, path, &err), HOG_OK, "%s", err.msg);
    char tmp[sizeof o.tmp];
    memcpy(tmp, o.tmp, sizeof tmp);
    hog_outfile_abort(&o);
    cr_assert_not(exists(tmp), "abort left %s", tmp);
    char pid[32];
    snprintf(pid, sizeof pid, "-%ld-", (long)getpid());
    char *at = strstr(tmp + strlen(path), pid);
    cr_assert_not_null(at, "temporary %s does not hold our PID", tmp);
    cr_assert_eq(strlen(at + strlen(pid)), 16,
                 "temporary %s does not end in 16 random hex digits", tmp);
    snprintf(buf, len, "%.*s", (int)(at + 1 - tmp), tmp);
}

Test(tmpfile, commit_removes_only_dead_local_temporaries)
{
    char dir[4096];
    th_tmpdir(dir, sizeof dir);
    char path[4300];
    snprintf(path, sizeof path, "%s/model.hgm", dir);
    char prefix[4400];
    our_prefix(path, prefix, sizeof prefix);

    /* dead: today's name; dead_old: the name of hogtrain 0.1 (no random
     * part), which a killed writer of that version may have left. */
    char dead[4500], dead_old[4500], live[4500], other[4500], foreign[4500];
    snprintf(dead, sizeof dead, "%s%ld-00c0ffee00c0ffee", prefix,
             (long)dead_pid());
    snprintf(dead_old, sizeof dead_old, "%s%ld", prefix, (long)dead_pid());
    snprintf(live, sizeof live, "%s%ld-0123456789abcdef", prefix,
             (long)getppid());
    snprintf(other, sizeof other, "%s/model.hgm.tmp.elsewhere-%ld-0123456789abcdef",
             dir, (long)dead_pid());
    snprintf(foreign, sizeof foreign, "%s/other.hgm.tmp.x-1", dir);
    const char *leftovers[] = {dead, dead_old, live, other, foreign};
    for (int i = 0; i < 5; i++) {
        FILE *f = fopen(leftovers[i], "wb");
        cr_assert_not_null(f, "%s", leftovers[i]);
        fputs("half a model", f);
        fclose(f);
    }

    hog_outfile o;
    hog_err err;
    cr_assert_eq(hog_outfile_open(&o, path, &err), HOG_OK, "%s", err.msg);
    char tmp[sizeof o.tmp];
    memcpy(tmp, o.tmp, sizeof tmp);
    fputs("whole", o.f);
    cr_assert_eq(hog_outfile_commit(&o, &err), HOG_OK, "%s", err.msg);

    cr_assert(exists(path));
    cr_assert_not(exists(tmp), "our own temporary %s left", tmp);
    cr_assert_not(exists(dead), "a dead writer's temporary %s was kept", dead);
    cr_assert_not(exists(dead_old), "a dead writer's temporary %s was kept",
                  dead_old);
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
    snprintf(dead, sizeof dead, "%s%ld-00c0ffee00c0ffee", prefix,
             (long)dead_pid());
    FILE *g = fopen(dead, "wb");
    cr_assert_not_null(g);
    fclose(g);

    setenv("HOGTRAIN_TEST_ENOSPC", "1", 1);
    hog_outfile o;
    hog_err err;
    cr_assert_eq(hog_outfile_open(&o, path, &err), HOG_OK, "%s", err.msg);
    char tmp[sizeof o.tmp];
    memcpy(tmp, o.tmp, sizeof tmp);
    fputs("x", o.f);
    hog_status s = hog_outfile_commit(&o, &err);
    unsetenv("HOGTRAIN_TEST_ENOSPC");
    cr_assert_eq(s, HOG_EIO);
    cr_assert(strstr(err.msg, "No space left"), "%s", err.msg);
    cr_assert_not(exists(path));
    cr_assert_not(exists(tmp));
    cr_assert(exists(dead), "cleanup ran although the write failed");
}

static void put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

static void assert_content(const char *path, const char *want)
{
    char got[256] = "";
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    size_t n = fread(got, 1, sizeof got - 1, f);
    got[n] = 0;
    fclose(f);
    cr_assert_str_eq(got, want, "%s was written through a planted link", path);
}

/* Links at every name a writer of `target` in process `pid` used to take
 * ("target.tmp.HOST-PID") and at "target.tmp": to the victim, and one
 * dangling (a file created through it would appear at `ghost`). */
static void plant(const char *dir, const char *target, const char *pidstr)
{
    char host[80], link[4500], ghost[4300];
    hog_tmp_host_tag(host, sizeof host);
    snprintf(ghost, sizeof ghost, "%s/ghost", dir);
    snprintf(link, sizeof link, "%s/%s.tmp.%s-%s", dir, target, host, pidstr);
    cr_assert_eq(symlink("victim", link), 0, "%s", link);
    snprintf(link, sizeof link, "%s/%s.tmp", dir, target);
    cr_assert_eq(symlink(ghost, link), 0, "%s", link);
}

/* A planted symlink at a writer's temporary name must not redirect the
 * write: every writer goes through hog_outfile_open, which creates its
 * temporary with O_EXCL | O_NOFOLLOW under an unpredictable name. The
 * library's writers are called here with links at this process's old
 * names; the command's writers through `exec`, so that the shell's $$ is
 * the command's PID. */
Test(tmpfile, planted_symlinks_are_never_followed, .timeout = 60)
{
    char dir[4096];
    th_tmpdir(dir, sizeof dir);
    char victim[4300], ghost[4300], pid[32];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(ghost, sizeof ghost, "%s/ghost", dir);
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    put_file(victim, "precious\n");

    /* hog_outfile_open itself, and the .hgb writer. */
    plant(dir, "raw", pid);
    char path[4300];
    snprintf(path, sizeof path, "%s/raw", dir);
    hog_outfile o;
    hog_err err;
    cr_assert_eq(hog_outfile_open(&o, path, &err), HOG_OK, "%s", err.msg);
    fputs("new\n", o.f);
    cr_assert_eq(hog_outfile_commit(&o, &err), HOG_OK, "%s", err.msg);
    assert_content(path, "new\n");
    assert_content(victim, "precious\n");

    const char *text = "1 1:0.5 3:1\n-1 2:1\n1 1:1 2:0.25\n-1 3:2\n";
    const char *svm = th_write(dir, "d.svm", text, strlen(text));
    hog_data *d;
    cr_assert_eq(hog_data_load(svm, NULL, &d, &err), HOG_OK, "%s", err.msg);
    plant(dir, "d.hgb", pid);
    snprintf(path, sizeof path, "%s/d.hgb", dir);
    cr_assert_eq(hog_hgb_save(d, path, 0, 0, &err), HOG_OK, "%s", err.msg);
    hog_data_free(d);
    plant(dir, "s.hgb", pid);
    snprintf(path, sizeof path, "%s/s.hgb", dir);
    cr_assert_eq(hog_svm_to_hgb_stream(svm, path, NULL, 0, 0, NULL, &err),
                 HOG_OK, "%s", err.msg);
    assert_content(victim, "precious\n");

    /* The command's writers: model, checkpoint, JSON, predictions, gen,
     * convert. */
    char host[80], out[8192];
    hog_tmp_host_tag(host, sizeof host);
    static const char *const runs[][2] = {
        { "m.hgm ck r.json",
          "train d.svm --epochs 2 -q --checkpoint ck -o m.hgm --json r.json" },
        { "p.txt", "predict -q m.hgm d.svm -o p.txt" },
        { "g.svm", "gen --rows 10 --features 5 -o g.svm" },
        { "c.hgb", "convert d.svm c.hgb" },
    };
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        int rc = th_run(out, sizeof out,
                        "cd '%s' && sh -c 'for t in %s; do "
                        "ln -s victim $t.tmp.%s-$$; ln -sf ghost $t.tmp; done; "
                        "exec \"$0\" %s' '%s'",
                        dir, runs[i][0], host, runs[i][1], th_bin());
        cr_assert_eq(rc, 0, "%s: %s", runs[i][1], out);
        assert_content(victim, "precious\n");
    }
    cr_assert_not(exists(ghost), "a file was created through a dangling link");
    struct stat st;
    snprintf(path, sizeof path, "%s/p.txt", dir);
    cr_assert(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
}

/* The written file has the mode the target would get: an existing file's
 * own, else 0666 less the umask. */
Test(tmpfile, written_file_takes_the_targets_mode)
{
    char dir[4096];
    th_tmpdir(dir, sizeof dir);
    char path[4300];
    snprintf(path, sizeof path, "%s/out", dir);
    umask(027);
    static const mode_t before[] = { 0, 0600, 0755, 0604 };
    for (size_t i = 0; i < sizeof before / sizeof *before; i++) {
        if (before[i])
            cr_assert_eq(chmod(path, before[i]), 0);
        hog_outfile o;
        hog_err err;
        cr_assert_eq(hog_outfile_open(&o, path, &err), HOG_OK, "%s", err.msg);
        fputs("x", o.f);
        cr_assert_eq(hog_outfile_commit(&o, &err), HOG_OK, "%s", err.msg);
        struct stat st;
        cr_assert_eq(stat(path, &st), 0);
        mode_t want = before[i] ? before[i] : 0640;
        cr_assert_eq(st.st_mode & 07777, want, "mode %o, not %o (before: %o)",
                     (unsigned)(st.st_mode & 07777), (unsigned)want,
                     (unsigned)before[i]);
    }
}
