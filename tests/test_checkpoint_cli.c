/*
 * Checkpoints and exact resume (docs/RELIABILITY.md) through the command:
 * SIGKILL at random moments and resume (serial and Cyclades); SIGINT and
 * SIGTERM finish the step, write the checkpoint and exit 1 with a
 * sentence; a second signal exits at once; a full disk during a checkpoint
 * (the HOGTRAIN_TEST_ENOSPC seam in src/io/file.c) leaves the previous one
 * loadable and says so. The library's side is test_checkpoint.c.
 */
#include <criterion/criterion.h>

#include "helpers.h"
#include "io/io.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- command level ------------------------------------------------------------- */

struct cli_data {
    char dir[1024];
    char data[1200]; /* .hgb */
    char ref[1200];  /* the uninterrupted run's model */
    double secs;     /* how long the uninterrupted run took */
};

#define TRAIN_OPTS "--epochs 3 --l1 1e-6 --seed 5 -q"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void cli_setup(struct cli_data *c, unsigned rows)
{
    cr_assert(th_tmpdir(c->dir, sizeof c->dir));
    char out[4096];
    snprintf(c->data, sizeof c->data, "%s/d.hgb", c->dir);
    snprintf(c->ref, sizeof c->ref, "%s/ref.hgm", c->dir);
    int rc = th_run(out, sizeof out,
                    "'%s' gen --rows %u --features 20000 --nnz 20 -q -o "
                    "'%s/d.svm' && '%s' convert -q '%s/d.svm' '%s'",
                    th_bin(), rows, c->dir, th_bin(), c->dir, c->data);
    cr_assert_eq(rc, 0, "%s", out);
    double t = now_s();
    rc = th_run(out, sizeof out, "'%s' train '%s' " TRAIN_OPTS " -o '%s'",
                th_bin(), c->data, c->ref);
    c->secs = now_s() - t;
    cr_assert_eq(rc, 0, "%s", out);
}

/* Starts hogtrain train with extra arguments (a NULL-terminated list),
 * stderr to errfile. */
static pid_t spawn_train(const struct cli_data *c, const char *errfile,
                         const char *const *extra)
{
    const char *argv[32];
    int n = 0;
    argv[n++] = th_bin();
    argv[n++] = "train";
    argv[n++] = c->data;
    argv[n++] = "--epochs";
    argv[n++] = "3";
    argv[n++] = "--l1";
    argv[n++] = "1e-6";
    argv[n++] = "--seed";
    argv[n++] = "5";
    argv[n++] = "-q";
    for (; *extra && n < 31; extra++)
        argv[n++] = *extra;
    argv[n] = NULL;
    pid_t p = fork();
    cr_assert(p >= 0);
    if (p == 0) {
        int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 2);
            close(fd);
        }
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return p;
}


static void sleep_s(double s)
{
    struct timespec t = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
    nanosleep(&t, NULL);
}

static void assert_same_file(const char *a, const char *b)
{
    char out[4096];
    int rc = th_run(out, sizeof out, "cmp '%s' '%s'", a, b);
    cr_assert_eq(rc, 0, "%s and %s differ: %s", a, b, out);
}

Test(checkpoint, sigkill_at_random_moments_then_resume_is_bit_exact,
     .timeout = 240)
{
    struct cli_data c;
    cli_setup(&c, 120000);
    char ck[1300], model[1300], errf[1300];
    snprintf(ck, sizeof ck, "%s/ck", c.dir);
    snprintf(model, sizeof model, "%s/m.hgm", c.dir);
    snprintf(errf, sizeof errf, "%s/err", c.dir);
    unsigned seed = (unsigned)time(NULL);
    int kills = 0;
    for (int attempt = 0; attempt < 12 && kills < 4; attempt++) {
        /* resume when a checkpoint exists, else start from the beginning */
        const char *extra[] = { "--checkpoint", ck, "--checkpoint-every",
                                "7919r", "-o", model,
                                th_exists(ck) ? "--resume" : NULL, ck, NULL };
        pid_t p = spawn_train(&c, errf, extra);
        double delay = c.secs * (0.1 + 0.8 * rand_r(&seed) / (double)RAND_MAX);
        sleep_s(delay);
        kill(p, SIGKILL);
        int ws;
        cr_assert_eq(waitpid(p, &ws, 0), p);
        if (WIFSIGNALED(ws))
            kills++;
        else
            cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0,
                      "a run ended with status %d (seed %u)", ws, seed);
    }
    cr_assert(kills > 0, "no run was killed (seed %u)", seed);
    const char *extra[] = { "--checkpoint", ck, "--checkpoint-every", "7919r",
                            "-o", model, th_exists(ck) ? "--resume" : NULL, ck,
                            NULL };
    pid_t p = spawn_train(&c, errf, extra);
    int ws;
    cr_assert_eq(waitpid(p, &ws, 0), p);
    cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "the last run failed");
    assert_same_file(c.ref, model);
}

/* Waits until path exists (the first checkpoint: training is under way). */
static void wait_for(const char *path, pid_t p)
{
    for (int i = 0; i < 20000 && !th_exists(path); i++) {
        int ws;
        cr_assert_eq(waitpid(p, &ws, WNOHANG), 0,
                     "hogtrain ended before its first checkpoint");
        sleep_s(0.001);
    }
    cr_assert(th_exists(path), "no checkpoint after 20 s");
}

static char *read_text(const char *path)
{
    static char buf[8192];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = 0;
    if (f)
        fclose(f);
    return buf;
}

Test(checkpoint, sigint_and_sigterm_checkpoint_and_exit_1, .timeout = 240)
{
    struct cli_data c;
    cli_setup(&c, 120000);
    int sigs[] = { SIGINT, SIGTERM };
    for (int k = 0; k < 2; k++) {
        char ck[1300], model[1300], errf[1300];
        snprintf(ck, sizeof ck, "%s/ck%d", c.dir, k);
        snprintf(model, sizeof model, "%s/m%d.hgm", c.dir, k);
        snprintf(errf, sizeof errf, "%s/err%d", c.dir, k);
        const char *extra[] = { "--checkpoint", ck, "--checkpoint-every",
                                "1", "-o", model, NULL };
        pid_t p = spawn_train(&c, errf, extra);
        wait_for(ck, p); /* after epoch 1 of 3 */
        kill(p, sigs[k]);
        int ws;
        cr_assert_eq(waitpid(p, &ws, 0), p);
        cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 1,
                  "status %d; stderr: %s", ws, read_text(errf));
        const char *msg = read_text(errf);
        cr_assert(strstr(msg, "interrupted") && strstr(msg, "checkpoint "
                                                        "written to"),
                  "stderr: %s", msg);
        cr_assert(!th_exists(model), "an interrupted run wrote its model");
        const char *again[] = { "--resume", ck, "-o", model, NULL };
        p = spawn_train(&c, errf, again);
        cr_assert_eq(waitpid(p, &ws, 0), p);
        cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "stderr: %s",
                  read_text(errf));
        assert_same_file(c.ref, model);
    }
}

Test(checkpoint, second_signal_exits_at_once, .timeout = 120)
{
    struct cli_data c;
    cli_setup(&c, 120000);
    char ck[1300], errf[1300];
    snprintf(ck, sizeof ck, "%s/ck", c.dir);
    snprintf(errf, sizeof errf, "%s/err", c.dir);
    const char *extra[] = { "--checkpoint", ck, "--checkpoint-every", "1",
                            NULL };
    pid_t p = spawn_train(&c, errf, extra);
    wait_for(ck, p);
    /* both pending when it wakes: the first sets the flag, the second
     * finds it set and exits */
    kill(p, SIGSTOP);
    kill(p, SIGINT);
    kill(p, SIGTERM);
    kill(p, SIGCONT);
    int ws;
    cr_assert_eq(waitpid(p, &ws, 0), p);
    cr_assert(WIFEXITED(ws) && (WEXITSTATUS(ws) == 130 ||
                                WEXITSTATUS(ws) == 143),
              "status %d; stderr: %s", ws, read_text(errf));
    cr_assert(strstr(read_text(errf), "interrupted again"), "stderr: %s",
              read_text(errf));
}

Test(checkpoint, full_disk_keeps_the_previous_checkpoint, .timeout = 120)
{
    struct cli_data c;
    cli_setup(&c, 20000);
    char ck[1300], model[1300], out[4096];
    snprintf(ck, sizeof ck, "%s/ck", c.dir);
    snprintf(model, sizeof model, "%s/m.hgm", c.dir);
    /* the seam fails every commit that would replace a file: the first
     * checkpoint is written, the second meets a "full disk" */
    int rc = th_run(out, sizeof out,
                    "HOGTRAIN_TEST_ENOSPC=replace '%s' train '%s' " TRAIN_OPTS
                    " --checkpoint '%s' --checkpoint-every 1 -o '%s'",
                    th_bin(), c.data, ck, model);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "No space left on device"), "%s", out);
    cr_assert(strstr(out, "previous checkpoint (after epoch 1) is intact"),
              "%s", out);
    cr_assert(!th_exists(model));
    rc = th_run(out, sizeof out, "ls -a '%s' | grep -c tmp", c.dir);
    cr_assert_str_eq(out, "0\n", "temporary files left behind");
    struct hog_ckpt k;
    hog_err err;
    cr_assert_eq(hog_ckpt_load(ck, &k, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(k.st.epoch, 1);
    hog_ckpt_free(&k);
    rc = th_run(out, sizeof out, "'%s' train '%s' " TRAIN_OPTS
                " --resume '%s' -o '%s'", th_bin(), c.data, ck, model);
    cr_assert_eq(rc, 0, "%s", out);
    assert_same_file(c.ref, model);
    /* every commit failing: the first checkpoint already, and it says so */
    rc = th_run(out, sizeof out,
                "HOGTRAIN_TEST_ENOSPC=1 '%s' train '%s' " TRAIN_OPTS
                " --checkpoint '%s/ck2'", th_bin(), c.data, c.dir);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "no earlier checkpoint"), "%s", out);
}

Test(checkpoint, cli_usage)
{
    char out[4096];
    int rc = th_run(out, sizeof out, "'%s' train x --checkpoint-every 5",
                    th_bin());
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert(strstr(out, "needs --checkpoint"), "%s", out);
    rc = th_run(out, sizeof out, "'%s' train x --checkpoint c "
                "--checkpoint-every 5q", th_bin());
    cr_assert_eq(rc, 2, "%s", out);
    rc = th_run(out, sizeof out, "'%s' train x --checkpoint c "
                "--checkpoint-every 0r", th_bin());
    cr_assert_eq(rc, 2, "%s", out);
}

/* ---- Cyclades (docs/CYCLADES.md): checkpoints at batch boundaries ------------- */

/* Command level: `hogtrain train --algo cyclades --threads 2` killed with
 * SIGKILL at random moments and resumed (at 2, 1 or 3 threads), then run
 * to the end, writes the uninterrupted run's model byte for byte; SIGTERM
 * finishes the batch, writes the checkpoint, exits 1 with a sentence. On
 * generated data always, and on a9a when ../shared/data has it. */
static void cyclades_kill_and_resume(const char *data, double secs,
                                     const char *dir, const char *ref,
                                     unsigned *seed)
{
    char ck[1300], model[1300], errf[1300], out[4096];
    snprintf(ck, sizeof ck, "%s/cck", dir);
    snprintf(model, sizeof model, "%s/cm.hgm", dir);
    snprintf(errf, sizeof errf, "%s/cerr", dir);
    unlink(ck);
    struct cli_data c;
    snprintf(c.data, sizeof c.data, "%s", data);
    static const char *const threads[] = { "2", "1", "3" };
    int kills = 0;
    for (int attempt = 0; attempt < 12 && kills < 4; attempt++) {
        const char *extra[] = { "--algo", "cyclades", "--threads",
                                threads[attempt % 3], "--checkpoint", ck,
                                "--checkpoint-every", "3001r", "-o", model,
                                th_exists(ck) ? "--resume" : NULL, ck, NULL };
        pid_t p = spawn_train(&c, errf, extra);
        sleep_s(secs * (0.1 + 0.8 * rand_r(seed) / (double)RAND_MAX));
        kill(p, SIGKILL);
        int ws;
        cr_assert_eq(waitpid(p, &ws, 0), p);
        if (WIFSIGNALED(ws))
            kills++;
        else
            cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0,
                      "a run ended with status %d (seed %u): %s", ws, *seed,
                      read_text(errf));
    }
    cr_assert(kills > 0, "no run was killed (seed %u)", *seed);
    /* SIGTERM once training is under way: a checkpoint and exit 1 */
    if (th_exists(ck)) {
        const char *extra[] = { "--algo", "cyclades", "--threads", "2",
                                "--checkpoint", ck, "--checkpoint-every",
                                "3001r", "-o", model, "--resume", ck, NULL };
        struct stat before;
        cr_assert_eq(stat(ck, &before), 0);
        pid_t p = spawn_train(&c, errf, extra);
        /* Under way once it has replaced the checkpoint (a rename: a new
         * inode), so the handlers are installed; before that, while it
         * loads, SIGTERM ends the command as any program. */
        int ws = 0;
        bool ended = false;
        for (int i = 0; i < 20000; i++) {
            struct stat now;
            if (stat(ck, &now) == 0 && now.st_ino != before.st_ino)
                break;
            if (waitpid(p, &ws, WNOHANG) == p) {
                ended = true; /* finished before a new checkpoint */
                break;
            }
            sleep_s(0.001);
        }
        if (!ended) {
            kill(p, SIGTERM);
            cr_assert_eq(waitpid(p, &ws, 0), p);
        }
        cr_assert(WIFEXITED(ws), "status %d", ws);
        if (WEXITSTATUS(ws) == 1) {
            const char *msg = read_text(errf);
            cr_assert(strstr(msg, "interrupted") &&
                          strstr(msg, "checkpoint written to"),
                      "stderr: %s", msg);
        } else { /* it finished before the signal came */
            cr_assert_eq(WEXITSTATUS(ws), 0, "stderr: %s", read_text(errf));
        }
    }
    /* No checkpoint yet when every run was killed before its first one
     * (a slow sanitizer build): then the last run starts afresh. */
    char resume[1400] = "";
    if (th_exists(ck))
        snprintf(resume, sizeof resume, "--resume '%s'", ck);
    int rc = th_run(out, sizeof out, "'%s' train '%s' " TRAIN_OPTS
                    " --algo cyclades --threads 2 --checkpoint '%s' "
                    "--checkpoint-every 3001r -o '%s' %s",
                    th_bin(), data, ck, model, resume);
    cr_assert_eq(rc, 0, "%s", out);
    assert_same_file(ref, model);
}

static double cyclades_ref(const char *data, const char *ref)
{
    char out[4096];
    double t = now_s();
    int rc = th_run(out, sizeof out, "'%s' train '%s' " TRAIN_OPTS
                    " --algo cyclades --threads 2 -o '%s'", th_bin(), data,
                    ref);
    cr_assert_eq(rc, 0, "%s", out);
    return now_s() - t;
}

Test(checkpoint, cyclades_sigkill_at_random_moments_then_resume_is_bit_exact,
     .timeout = 240)
{
    struct cli_data c;
    cli_setup(&c, 60000);
    unsigned seed = (unsigned)time(NULL);
    char ref[1300];
    snprintf(ref, sizeof ref, "%s/cref.hgm", c.dir);
    double secs = cyclades_ref(c.data, ref);
    cyclades_kill_and_resume(c.data, secs, c.dir, ref, &seed);
    const char *a9a = th_data("a9a");
    if (a9a) {
        snprintf(ref, sizeof ref, "%s/a9a_ref.hgm", c.dir);
        secs = cyclades_ref(a9a, ref);
        cyclades_kill_and_resume(a9a, secs, c.dir, ref, &seed);
    }
}
