#include "helpers.h"

#include "hogtrain.h"
#include "coordinate/coordinate.h"
#include "core/core.h"
#include "synth.h"

#include <criterion/criterion.h>
#include <criterion/hooks.h>

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *tmp_root(void)
{
    const char *t = getenv("HOGTRAIN_TEST_TMP");
    if (!t || !*t)
        t = "/tmp";
    mkdir(t, 0755);
    return t;
}

const char *th_data(const char *name)
{
    static char paths[16][1024];
    static int next;
    const char *root = getenv("HOGTRAIN_DATA");
    if (!root || !*root)
        root = "../shared/data";
    char *out = paths[next++ % 16];
    snprintf(out, sizeof paths[0], "%s/%s", tmp_root(), name);
    struct stat st;
    if (stat(out, &st) == 0)
        return out;
    char src[1024];
    snprintf(src, sizeof src, "%s/%s", root, name);
    if (stat(src, &st) == 0) { /* stored uncompressed (heart_scale) */
        snprintf(out, sizeof paths[0], "%s", src);
        return out;
    }
    snprintf(src, sizeof src, "%s/%s.xz", root, name);
    if (stat(src, &st) != 0)
        return NULL;
    /* Decompress to a private name, then rename: tests running at the same
     * time never see a half-written file. */
    char cmd[3200];
    snprintf(cmd, sizeof cmd, "xz -dc '%s' > '%s.%d.part' && mv '%s.%d.part' '%s'",
             src, out, (int)getpid(), out, (int)getpid(), out);
    if (system(cmd) != 0)
        return NULL;
    return out;
}

const char *th_tmpdir(char *buf, size_t len)
{
    snprintf(buf, len, "%s/t.XXXXXX", tmp_root());
    if (!mkdtemp(buf))
        return NULL;
    return buf;
}

const char *th_write(const char *dir, const char *name, const char *text,
                     size_t len)
{
    static char paths[16][1024];
    static int next;
    char *p = paths[next++ % 16];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (!f)
        return NULL;
    fwrite(text, 1, len, f);
    fclose(f);
    return p;
}

const char *th_bin(void)
{
    const char *b = getenv("HOGTRAIN_BIN");
    return b && *b ? b : "build/hogtrain";
}

int th_run(char *out, size_t outlen, const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    char full[8300];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (!p)
        return -1;
    size_t n = 0;
    if (out && outlen) {
        size_t k;
        while (n + 1 < outlen && (k = fread(out + n, 1, outlen - 1 - n, p)) > 0)
            n += k;
        out[n] = 0;
    }
    char sink[4096];
    while (fread(sink, 1, sizeof sink, p) > 0)
        ;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

char *th_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    cr_assert_not_null(b);
    cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n, "short read of %s", path);
    b[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return b;
}

char *th_source(const char *name)
{
    char path[1024];
    const char *f = __FILE__, *slash = strrchr(f, '/');
    snprintf(path, sizeof path, "%.*s../%s", slash ? (int)(slash - f + 1) : 0,
             f, name);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return NULL;
    fclose(fp);
    size_t len;
    return th_slurp(path, &len);
}

int th_have_liblinear(void)
{
    char out[256];
    return th_run(out, sizeof out, "command -v liblinear-predict && "
                                   "command -v liblinear-train") == 0;
}

hog_data *th_load(const char *path)
{
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    hog_data *d = NULL;
    hog_err err = { { 0 } };
    hog_status s = hog_data_load(path, &lo, &d, &err);
    cr_assert_eq(s, HOG_OK, "%s: %s", path, err.msg);
    return d;
}

void th_opts_init(hog_train_opts *o)
{
    hog_train_opts_init(o);
    o->schedule = HOG_SCHED_ADAGRAD;
    o->l2 = 1e-5;
    o->eta = 0.3;
    o->epochs = 5;
    o->tol = 0.01;
    o->update = HOG_UPDATE_NONE;
}

hog_train_opts th_solver_opts(int algo, int loss, double l1, double l2,
                              unsigned threads, double tol)
{
    hog_train_opts o;
    th_opts_init(&o);
    o.algo = (hog_algo)algo;
    o.loss = (hog_loss)loss;
    o.l1 = l1;
    o.l2 = l2;
    o.threads = threads;
    o.tol = tol;
    o.epochs = 1000;
    o.bias = 1.0;
    return o;
}

struct hog_objective th_objective(const hog_model *m, const hog_data *d,
                                  int loss, double l1, double l2)
{
    struct hog_objective ob;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_objective_eval(m, d, (hog_loss)loss, l1, l2, &ob, &err),
                 HOG_OK, "%s", err.msg);
    return ob;
}

void th_opts_step_for_loss(hog_train_opts *o)
{
    o->schedule = HOG_SCHED_ADAGRAD;
    o->eta = NAN;
}

hog_model *th_train_ok(const hog_data *d, const hog_train_opts *o)
{
    return th_train_hooked(d, o, NULL);
}

hog_model *th_train_hooked(const hog_data *d, const hog_train_opts *o,
                           const hog_train_hooks *h)
{
    hog_model *m = NULL;
    hog_err err = { { 0 } };
    hog_status s = hog_train(d, NULL, o, h, &m, &err);
    cr_assert_eq(s, HOG_OK, "hog_train: %s", err.msg);
    return m;
}

hog_model *th_liblinear_model(const char *path, int solver, double C,
                              const char *eps, double *printed)
{
    char dir[512], mp[700], out[8192];
    th_tmpdir(dir, sizeof dir);
    snprintf(mp, sizeof mp, "%s/ll%d.model", dir, solver);
    int rc = th_run(out, sizeof out,
                    "liblinear-train -s %d -c %.17g -e %s -B 1 '%s' '%s'",
                    solver, C, eps, path, mp);
    cr_assert_eq(rc, 0, "liblinear-train failed: %s", out);
    if (printed) {
        const char *p = strstr(out, "Objective value = ");
        *printed = p ? strtod(p + strlen("Objective value = "), NULL) : NAN;
    }
    hog_model *m = NULL;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_model_load(mp, &m, &err), HOG_OK, "%s", err.msg);
    return m;
}

long th_peak_rss_kib(const char *cmd)
{
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, STDOUT_FILENO);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int status;
    struct rusage ru;
    cr_assert_eq(wait4(pid, &status, 0, &ru), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "'%s' failed (%d)", cmd, status);
    return ru.ru_maxrss;
}

/* One line at the end of the run for the tests that had no real data:
 * without it, a machine without ../shared/data passes a suite that never
 * read a real data set, and nobody is told. */
ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
    size_t no_data = 0;
    for (struct criterion_suite_stats *s = stats->suites; s; s = s->next)
        for (struct criterion_test_stats *t = s->tests; t; t = t->next)
            if (t->test_status == CR_STATUS_SKIPPED && t->message &&
                (strstr(t->message, "real data") ||
                 strstr(t->message, "HOGTRAIN_DATA")))
                no_data++;
    if (no_data) {
        const char *root = getenv("HOGTRAIN_DATA");
        fprintf(stderr,
                "hogtrain tests: %zu tests skipped: their real data sets are "
                "not in HOGTRAIN_DATA=%s (point HOGTRAIN_DATA at a folder "
                "holding a9a.xz, news20.binary.train.svm.xz, ...)\n",
                no_data, root && *root ? root : "../shared/data");
    }
}

void th_on_prog(void *ctx, unsigned epoch, unsigned epochs, uint64_t done,
                uint64_t total, const hog_epoch_stats *s)
{
    (void)epoch, (void)epochs, (void)done, (void)total;
    struct th_prog *p = ctx;
    if (s && p->n < 8) {
        p->loss[p->n] = s->progressive_loss;
        p->acc[p->n++] = s->progressive_accuracy;
    }
}

int th_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* ---- processes of a --world group on loopback ---------------------------- */

unsigned th_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in a = { 0 };
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t l = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &l);
    close(fd);
    return ntohs(a.sin_port);
}

pid_t th_spawn(const char *log, const char *fmt, ...)
{
    /* exec: the pid is the command's own, not a shell's, so that a kill
     * reaches it. */
    char cmd[4096] = "exec ";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd + 5, sizeof cmd - 5, fmt, ap);
    va_end(ap);
    fflush(NULL);
    pid_t p = fork();
    cr_assert_geq(p, 0);
    if (p == 0) {
        FILE *f = freopen(log, "w", stdout);
        if (!f)
            _exit(127);
        dup2(1, 2);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return p;
}

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int th_wait_for(pid_t pid, double limit)
{
    double t0 = mono_s();
    for (;;) {
        int st;
        pid_t p = waitpid(pid, &st, WNOHANG);
        if (p == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        if (mono_s() - t0 > limit) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            return -1;
        }
        usleep(5000);
    }
}

void th_assert_no_temporaries(const char *dir)
{
    char ls[4096];
    th_run(ls, sizeof ls, "ls -A '%s'", dir);
    cr_assert_null(strstr(ls, ".tmp."), "temporary file left in %s:\n%s", dir,
                   ls);
}

double th_sgd_eta(const struct hog_train_opts *o, uint64_t t, uint64_t n)
{
    if (o->schedule != HOG_SCHED_INVSCALING)
        return o->eta;
    if (o->l2 > 0)
        return o->eta / (1.0 + o->eta * o->l2 * (double)t);
    return o->eta / pow(1.0 + (double)t / (double)n, o->power);
}

double th_soft(double u, double b)
{
    return u > b ? u - b : u < -b ? u + b : 0.0;
}

hog_data *th_load_hashed(const char *path, unsigned bits,
                         const char *interactions)
{
    hog_load_opts o;
    hog_load_opts_init(&o);
    o.hash_bits = bits;
    o.interactions = interactions;
    hog_data *d = NULL;
    hog_err err;
    cr_assert_eq(hog_data_load(path, &o, &d, &err), HOG_OK, "%s", err.msg);
    return d;
}

void th_assert_same_model(const hog_model *a, const hog_model *b,
                          const char *what)
{
    cr_assert_eq(a->n_features, b->n_features, "%s: the features", what);
    cr_assert_eq(a->loss, b->loss, "%s: the loss", what);
    cr_assert_eq(a->bias, b->bias, "%s: the bias", what);
    cr_assert_eq(a->n_classes, b->n_classes, "%s: the classes", what);
    cr_assert_eq(a->multiclass, b->multiclass, "%s: the mode", what);
    for (uint32_t c = 0; c < a->n_classes; c++)
        cr_assert_eq(a->classes[c], b->classes[c], "%s: class %u", what, c);
    cr_assert(memcmp(a->w, b->w, hog_model_len(a) * sizeof(float)) == 0,
              "%s: the weights differ", what);
}

hog_data *th_k_classes(uint64_t rows, uint32_t nf, unsigned k, double step,
                       uint64_t seed)
{
    hog_err err = { { 0 } };
    hog_data *d = th_synth(&(struct th_synth){
        .rows = rows, .features = nf, .layout = TH_SYNTH_SKEW,
        .nnz_min = 3, .nnz_max = 14, .seed = seed, .stream = 5,
        .first = { .normal = true } }, &err);
    cr_assert(d, "%s", err.msg);
    cr_assert(th_label_argmax(d, k, step, 1, 99));
    return d;
}
