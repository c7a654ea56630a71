/*
 * What every writer does with a target that is not a plain new file
 * (src/io/outfile.c): a device or a FIFO is written in place, never
 * renamed over; a symlink keeps pointing where it did and its target gets
 * the bytes; "-" is standard output; a signal that ends the command
 * removes its temporary. The devices here are this test's own (mknod in
 * a scratch folder): the suite never writes to the real /dev/null.
 */
#include <criterion/criterion.h>

#include "helpers.h"
#include "io/io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define OUT_MAX 16384

/* A scratch folder with a small real data set (heart_scale, 270 rows) as
 * d.svm and a model of it as m.hgm. */
static void setup(char *dir, size_t len)
{
    th_tmpdir(dir, len);
    const char *heart = th_data("heart_scale");
    if (!heart)
        cr_skip_test("real data file heart_scale not found under "
                     "HOGTRAIN_DATA; skipping");
    char out[OUT_MAX];
    int rc = th_run(out, sizeof out,
                    "cd '%s' && cp '%s' d.svm && '%s' train -q d.svm -o m.hgm",
                    dir, heart, th_bin());
    cr_assert_eq(rc, 0, "%s", out);
}

/* dir/name as a character device with the numbers of /dev/null (1, 3);
 * skips the test where this process may not make devices. */
static void make_null(const char *dir, const char *name, char *path,
                      size_t len)
{
    snprintf(path, len, "%s/%s", dir, name);
    if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) != 0)
        cr_skip_test("cannot make a device node here (%s): the in-place "
                     "writes to a device are tested where the suite runs "
                     "as root", strerror(errno));
}

static void assert_null_device(const char *path, const char *after)
{
    struct stat st;
    cr_assert_eq(lstat(path, &st), 0, "%s: %s", path, strerror(errno));
    cr_assert(S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3),
              "after `%s`, %s is no longer the device (mode %o, %lld bytes)",
              after, path, (unsigned)st.st_mode, (long long)st.st_size);
}

/* Names in dir that hold ".tmp.": temporaries left behind. */
static unsigned temporaries(const char *dir, char *first, size_t len)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    unsigned n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strstr(e->d_name, ".tmp.") && n++ == 0)
            snprintf(first, len, "%s", e->d_name);
    closedir(d);
    return n;
}

static unsigned lines_of(const char *path)
{
    size_t len;
    char *s = th_slurp(path, &len);
    unsigned n = 0;
    for (size_t i = 0; i < len; i++)
        n += s[i] == '\n';
    free(s);
    return n;
}

Test(outfile, device_target_is_written_in_place, .timeout = 120)
{
    char dir[4096], null[4300], out[OUT_MAX];
    setup(dir, sizeof dir);
    make_null(dir, "null", null, sizeof null);
    static const char *const runs[] = {
        "train -q d.svm -o null",
        "train -q d.svm --epochs 2 --json null -o m2.hgm",
        "train -q d.svm --epochs 2 --checkpoint null",
        "predict -q m.hgm d.svm -o null",
        "predict -q --probabilities m.hgm d.svm -o null",
        "gen --rows 100 --features 10 -q -o null",
        "train -q d.svm --model-format liblinear -o null",
    };
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        int rc = th_run(out, sizeof out, "cd '%s' && '%s' %s", dir, th_bin(),
                        runs[i]);
        cr_assert_eq(rc, 0, "%s: %s", runs[i], out);
        assert_null_device(null, runs[i]);
    }
    /* the library's own writers */
    hog_err err;
    hog_model *m;
    char path[4300];
    snprintf(path, sizeof path, "%s/m.hgm", dir);
    cr_assert_eq(hog_model_load(path, &m, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_model_save(m, null, HOG_MODEL_HGM, &err), HOG_OK, "%s",
                 err.msg);
    hog_model_free(m);
    assert_null_device(null, "hog_model_save");
    char first[256];
    cr_assert_eq(temporaries(dir, first, sizeof first), 0, "left: %s", first);
    /* a .hgb is written out of order: a sentence, and the device stays */
    int rc = th_run(out, sizeof out, "cd '%s' && '%s' convert d.svm null", dir,
                    th_bin());
    cr_assert(rc == 1 && strstr(out, "null: not a regular file"), "rc %d: %s",
              rc, out);
    assert_null_device(null, "convert d.svm null");
    /* and the system's own, which no test writes to */
    struct stat st;
    cr_assert(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode),
              "/dev/null is not a character device");
}

Test(outfile, fifo_reader_gets_the_output, .timeout = 60)
{
    char dir[4096], out[OUT_MAX], path[4300];
    setup(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/pipe", dir);
    cr_assert_eq(mkfifo(path, 0600), 0, "%s", strerror(errno));
    /* Before the fix the command renamed a file over the FIFO, and its
     * reader would have waited for ever but for its own timeout. */
    int rc = th_run(out, sizeof out,
                    "cd '%s' && { timeout 30 cat pipe > got & r=$!; "
                    "'%s' predict -q m.hgm d.svm -o pipe; s=$?; wait $r; "
                    "exit $s; }",
                    dir, th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    snprintf(path, sizeof path, "%s/got", dir);
    cr_assert_eq(lines_of(path), 270, "the FIFO's reader got %u lines",
                 lines_of(path));
    struct stat st;
    snprintf(path, sizeof path, "%s/pipe", dir);
    cr_assert(lstat(path, &st) == 0 && S_ISFIFO(st.st_mode),
              "the FIFO was replaced");
}

static void assert_link(const char *dir, const char *name, const char *to)
{
    char path[4300], got[4300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ssize_t n = readlink(path, got, sizeof got - 1);
    cr_assert(n > 0, "%s is no longer a symlink", path);
    got[n] = 0;
    cr_assert_str_eq(got, to, "%s points elsewhere", path);
}

static void assert_model(const char *dir, const char *name)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    hog_model *m;
    hog_err err;
    cr_assert_eq(hog_model_load(path, &m, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_model_features(m), 13);
    hog_model_free(m);
}

Test(outfile, symlinks_are_kept_and_their_targets_written, .timeout = 60)
{
    char dir[4096], out[OUT_MAX];
    setup(dir, sizeof dir);
    /* a relative link into another folder, a chain of two, a dangling
     * link (the write creates its target), an absolute link */
    int rc = th_run(out, sizeof out,
                    "cd '%s' && mkdir models && echo old > models/real.hgm && "
                    "ln -s models/real.hgm rel.hgm && ln -s rel.hgm chain.hgm && "
                    "ln -s models/new.hgm dangling.hgm && "
                    "ln -s \"$PWD/models/abs.hgm\" abs.hgm && "
                    "'%s' train -q d.svm -o chain.hgm && "
                    "'%s' train -q d.svm -o dangling.hgm && "
                    "'%s' train -q d.svm -o abs.hgm && "
                    "'%s' predict -q m.hgm d.svm -o rel.hgm.txt",
                    dir, th_bin(), th_bin(), th_bin(), th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    assert_link(dir, "rel.hgm", "models/real.hgm");
    assert_link(dir, "chain.hgm", "rel.hgm");
    assert_link(dir, "dangling.hgm", "models/new.hgm");
    assert_model(dir, "models/real.hgm");
    assert_model(dir, "models/new.hgm");
    assert_model(dir, "models/abs.hgm");
    char first[256], models[4300];
    snprintf(models, sizeof models, "%s/models", dir);
    cr_assert_eq(temporaries(dir, first, sizeof first), 0, "left: %s", first);
    cr_assert_eq(temporaries(models, first, sizeof first), 0, "left: %s",
                 first);
    /* the replaced file keeps its link's target's mode */
    struct stat st;
    char path[4300];
    snprintf(path, sizeof path, "%s/models/real.hgm", dir);
    cr_assert(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
}

/* The machine's /dev/stdout is a link that a broken writer would replace:
 * the test makes its own link to /proc/self/fd/1. */
Test(outfile, dash_is_standard_output, .timeout = 60)
{
    char dir[4096], out[OUT_MAX], path[4300];
    setup(dir, sizeof dir);
    int rc = th_run(out, sizeof out,
                    "cd '%s' && '%s' predict -q m.hgm d.svm -o - > p.txt && "
                    "'%s' predict -q m.hgm d.svm -o p2.txt && "
                    "ln -s /proc/self/fd/1 stdout && "
                    "'%s' predict -q m.hgm d.svm -o stdout | cat > p3.txt && "
                    "'%s' train -q d.svm -o - > s.hgm && "
                    "'%s' train -q d.svm --json - -o s2.hgm > r.json && "
                    "'%s' gen --rows 50 --features 5 -q -o - > g.svm",
                    dir, th_bin(), th_bin(), th_bin(), th_bin(), th_bin(),
                    th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    size_t a, b, c;
    snprintf(path, sizeof path, "%s/p.txt", dir);
    char *p1 = th_slurp(path, &a);
    snprintf(path, sizeof path, "%s/p2.txt", dir);
    char *p2 = th_slurp(path, &b);
    snprintf(path, sizeof path, "%s/p3.txt", dir);
    char *p3 = th_slurp(path, &c);
    cr_assert(a > 0 && a == b && a == c && !memcmp(p1, p2, a) &&
                  !memcmp(p1, p3, a),
              "-o -, -o FILE and -o a link to /proc/self/fd/1 (as /dev/stdout) "
              "differ (%zu, %zu, %zu bytes)",
              a, b, c);
    free(p1), free(p2), free(p3);
    assert_model(dir, "s.hgm");
    snprintf(path, sizeof path, "%s/r.json", dir);
    char *js = th_slurp(path, &a);
    cr_assert(strstr(js, "\"command\": \"train\""), "%s", js);
    free(js);
    snprintf(path, sizeof path, "%s/g.svm", dir);
    cr_assert_eq(lines_of(path), 50);
}

/* Starts argv in dir, its standard input a pipe whose write end is
 * returned in *in (closed at once when in is NULL). */
static pid_t start(char *const argv[], const char *dir, int *in)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        /* the dispositions a user's shell gives a command it runs */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        dup2(p[0], STDIN_FILENO);
        close(p[0]), close(p[1]);
        if (chdir(dir) != 0)
            _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    close(p[0]);
    if (in)
        *in = p[1];
    else
        close(p[1]);
    return pid;
}

/* Waits (20 s at most) until dir holds a temporary. */
static bool await_temporary(const char *dir)
{
    char first[256];
    for (int i = 0; i < 2000; i++) {
        if (temporaries(dir, first, sizeof first))
            return true;
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    return false;
}

static void assert_died_clean(pid_t pid, int sig, const char *dir,
                              const char *target, const char *what)
{
    int ws;
    cr_assert_eq(waitpid(pid, &ws, 0), pid);
    cr_assert(WIFSIGNALED(ws) && WTERMSIG(ws) == sig,
              "%s: not ended by signal %d (status %#x)", what, sig, ws);
    char first[256], path[4300];
    cr_assert_eq(temporaries(dir, first, sizeof first), 0,
                 "%s: left its temporary %s", what, first);
    snprintf(path, sizeof path, "%s/%s", dir, target);
    struct stat st;
    cr_assert_neq(stat(path, &st), 0, "%s: %s was written", what, path);
}

Test(outfile, signals_remove_the_temporary, .timeout = 120)
{
    char dir[4096];
    th_tmpdir(dir, sizeof dir);
    /* gen: 2e8 rows, far more than it can write before the signal */
    char *gen[] = { (char *)th_bin(), "gen", "-q", "--rows", "200000000",
                    "--features", "1000", "-o", "big.svm", NULL };
    pid_t pid = start(gen, dir, NULL);
    cr_assert(await_temporary(dir), "gen made no temporary");
    kill(pid, SIGINT);
    assert_died_clean(pid, SIGINT, dir, "big.svm", "gen, SIGINT");

    /* convert of standard input that has not ended: its temporary exists,
     * it waits for more text */
    char *conv[] = { (char *)th_bin(), "convert", "-q", "-", "c.hgb", NULL };
    int in;
    pid = start(conv, dir, &in);
    static const char rows[] = "1 1:0.5 3:1\n-1 2:1\n";
    for (int i = 0; i < 1000; i++)
        cr_assert_eq(write(in, rows, sizeof rows - 1), (ssize_t)sizeof rows - 1);
    cr_assert(await_temporary(dir), "convert made no temporary");
    kill(pid, SIGTERM);
    assert_died_clean(pid, SIGTERM, dir, "c.hgb", "convert, SIGTERM");
    close(in);
}
