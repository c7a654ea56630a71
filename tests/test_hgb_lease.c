/* The read lease on a mapped .hgb (src/io/hgb_lease.c): a writer that
 * opens or truncates the file waits until the loaded arrays have been
 * copied out of the file's pages, and the data set is unchanged and
 * trains as before; a file already open for writing loads with its
 * indices read; hog_data_free releases the lease. Skipped where the file
 * system has no leases. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "io/hgb_format.h"
#include "io/hgb_lease.h"

/* Skips with a sentence unless this process can take a read lease on a
 * file at path. */
static void leases_or_skip(const char *path)
{
    if (hog_hgb_lease_signal() == 0)
        cr_skip_test("the lease signal is taken by another handler; skipping");
    int fd = open(path, O_RDONLY);
    cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
    int rc = fcntl(fd, F_SETLEASE, F_RDLCK), e = errno;
    if (rc == 0)
        fcntl(fd, F_SETLEASE, F_UNLCK);
    close(fd);
    if (rc != 0)
        cr_skip_test("no read lease on %s (%s): the file system has no leases, "
                     "or this user may not take them; skipping",
                     path, strerror(e));
}

/* a9a as a version 2 .hgb of several chunks in a fresh folder; the data
 * loaded from the text in *text. */
static void make_hgb(char *out, size_t len, hog_data **text)
{
    TH_DATA_OR_SKIP(a9a, "a9a");
    char dir[512];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    snprintf(out, len, "%s/a9a.hgb", dir);
    hog_err err;
    cr_assert_eq(hog_data_load(a9a, NULL, text, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_hgb_save_chunked(*text, out, 0, 0, 1 << 20, &err), HOG_OK,
                 "%s", err.msg);
    leases_or_skip(out);
}

static hog_data *load(const char *path)
{
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_hgb_load(path, NULL, &d, &err), HOG_OK, "%s", err.msg);
    return d;
}

static void assert_same(const hog_data *a, const hog_data *b, const char *what)
{
    cr_assert_eq(a->m.rows, b->m.rows, "%s: rows", what);
    cr_assert_eq(a->m.nnz, b->m.nnz, "%s: nnz", what);
    cr_assert(memcmp(a->m.off, b->m.off, (a->m.rows + 1) * 8) == 0, "%s: off", what);
    cr_assert(memcmp(a->m.y, b->m.y, a->m.rows * 4) == 0, "%s: labels", what);
    cr_assert(memcmp(a->m.idx, b->m.idx, a->m.nnz * 4) == 0, "%s: idx", what);
    cr_assert(memcmp(a->m.val, b->m.val, a->m.nnz * 4) == 0, "%s: val", what);
}

/* Whether /proc/locks lists a read lease of this process on path. */
static bool lease_listed(const char *path)
{
    struct stat sb;
    cr_assert_eq(stat(path, &sb), 0);
    FILE *f = fopen("/proc/locks", "r");
    cr_assert_not_null(f);
    char line[512], kind[16], type[16], dev[64];
    bool found = false;
    while (fgets(line, sizeof line, f)) {
        long pid;
        unsigned long ino;
        char *p = strchr(line, ':'); /* past "N:" (and "->" for waiters) */
        if (p && sscanf(p + 1, " %15s %*s %15s %ld %63[^:]:%*[^:]:%lu", kind, type,
                        &pid, dev, &ino) == 5 &&
            strcmp(kind, "LEASE") == 0 && strcmp(type, "READ") == 0 &&
            pid == (long)getpid() && ino == (unsigned long)sb.st_ino)
            found = true;
    }
    fclose(f);
    return found;
}

/* A deep copy of d's arrays, as an ordinary (unleased) data set. */
static hog_data *copy_of(const hog_data *d)
{
    uint64_t *off = malloc((d->m.rows + 1) * 8);
    float *y = malloc(d->m.rows * 4 + 1), *val = malloc(d->m.nnz * 4 + 1);
    uint32_t *idx = malloc(d->m.nnz * 4 + 1);
    cr_assert(off && y && idx && val);
    memcpy(off, d->m.off, (d->m.rows + 1) * 8);
    memcpy(y, d->m.y, d->m.rows * 4);
    memcpy(idx, d->m.idx, d->m.nnz * 4);
    memcpy(val, d->m.val, d->m.nnz * 4);
    hog_data *c;
    hog_err err;
    cr_assert_eq(hog_data_wrap(d->m.rows, d->m.nnz, off, y, idx, val,
                               d->n_features, &c, &err), HOG_OK, "%s", err.msg);
    return c;
}

/* Serial SGD on a and on b, same seed: the same weights, and predictions
 * on a equal to those on b. */
static void assert_trains_alike(const hog_data *a, const hog_data *b)
{
    hog_train_opts o;
    th_opts_init(&o);
    o.algo = HOG_ALGO_SERIAL;
    o.threads = 1;
    o.epochs = 2;
    o.seed = 7;
    hog_model *ma, *mb;
    hog_err err;
    cr_assert_eq(hog_train(a, NULL, &o, NULL, &ma, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_train(b, NULL, &o, NULL, &mb, &err), HOG_OK, "%s", err.msg);
    uint64_t n = hog_model_features(ma) + 1;
    cr_assert_eq(hog_model_features(ma), hog_model_features(mb));
    cr_assert(memcmp(hog_model_weights(ma), hog_model_weights(mb), n * 4) == 0,
              "training on the kept data gave other weights");
    double *sa = malloc(a->m.rows * sizeof *sa), *sb = malloc(b->m.rows * sizeof *sb);
    cr_assert(sa && sb);
    cr_assert_eq(hog_model_scores(ma, a, sa, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_model_scores(ma, b, sb, &err), HOG_OK, "%s", err.msg);
    cr_assert(memcmp(sa, sb, a->m.rows * sizeof *sa) == 0, "other predictions");
    free(sa), free(sb);
    hog_model_free(ma), hog_model_free(mb);
}

/* d's lease state once a break has run its course: the handler may run
 * on another thread, and the writer goes on (lease released) just before
 * it marks the slot copied. */
static enum hog_hgb_lease_state state_after_break(const hog_data *d)
{
    for (int i = 0; i < 10000 && hog_hgb_lease_state(d) == HOG_HGB_LEASE_HELD; i++)
        usleep(1000);
    return hog_hgb_lease_state(d);
}

/* Loads the file under a lease, then a child process opens it for writing
 * and overwrites the first chunk's indices with 0xFF bytes (or truncates
 * it to its header). Its open() or truncate() waits for the handler to
 * copy the arrays (the_writer_waits_for_the_handler shows the wait): the
 * file changes, and the data set is still what was loaded, every byte
 * readable, and trains as before. */
static void writer_waits_for_the_copy(bool truncate_it)
{
    char path[1024];
    hog_data *text;
    make_hgb(path, sizeof path, &text);
    hog_data *d = load(path);
    cr_assert_eq(hog_hgb_lease_state(d), HOG_HGB_LEASE_HELD);
    cr_assert(lease_listed(path), "no read lease on %s in /proc/locks", path);
    hog_data *before = copy_of(d);
    assert_same(d, text, "loaded under the lease");

    struct hog_hgb_info in;
    hog_err err;
    cr_assert_eq(hog_hgb_open_info(path, &in, &err), HOG_OK, "%s", err.msg);
    const struct hog_hgb_chunk *c = &in.chunks[0];
    uint64_t at = c->offset + HOG_HGB_CHUNK_HEADER +
                  chunk_layout(in.version, c->rows, c->nnz, c->first_nnz).idx;
    size_t n = 4 * c->nnz;
    hog_hgb_info_close(&in);
    cr_assert(lease_listed(path), "a read-only open broke the lease");

    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(p[0]);
        int ok = 1;
        if (truncate_it) {
            ok = truncate(path, 8192) == 0;
        } else {
            int fd = open(path, O_RDWR);
            unsigned char *ff = malloc(n);
            ok = fd >= 0 && ff;
            if (ok) {
                memset(ff, 0xFF, n);
                ok = pwrite(fd, ff, n, (off_t)at) == (ssize_t)n;
            }
            close(fd);
        }
        ok = write(p[1], ok ? "w" : "e", 1) == 1 && ok;
        _exit(ok ? 0 : 1);
    }
    close(p[1]);
    char what = 0;
    cr_assert_eq(read(p[0], &what, 1), 1);
    close(p[0]);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0 && what == 'w',
              "the writer failed");
    cr_assert_eq(state_after_break(d), HOG_HGB_LEASE_COPIED);
    cr_assert(!lease_listed(path), "the lease is still held after the copy");

    /* The file did change under the data set. */
    struct stat sb;
    cr_assert_eq(stat(path, &sb), 0);
    if (truncate_it) {
        cr_assert_eq(sb.st_size, 8192);
    } else {
        int fd = open(path, O_RDONLY);
        uint32_t v = 0;
        cr_assert_eq(pread(fd, &v, 4, (off_t)(at + n / 2 / 4 * 4)), 4);
        close(fd);
        cr_assert_eq(v, 0xFFFFFFFFu);
    }
    assert_same(d, before, "after the writer");
    assert_trains_alike(d, before);
    hog_data_free(before);
    hog_data_free(d);
    hog_data_free(text);
}

Test(hgb_lease, a_writer_waits_and_the_data_stays)
{
    writer_waits_for_the_copy(false);
}

Test(hgb_lease, a_truncation_waits_and_the_data_stays)
{
    writer_waits_for_the_copy(true);
}

/* Runs in a child of the test, which has one thread (Criterion and
 * OpenBLAS start others, which might take the signal): loads path, holds
 * the lease signal back, and starts a writer. NULL when the writer's
 * open() waited until the signal was let through and the handler had
 * copied the arrays; else what went wrong. */
static const char *writer_waits(const char *path)
{
    hog_data *d;
    hog_err err;
    if (hog_hgb_load(path, NULL, &d, &err) != HOG_OK)
        return "the load failed";
    if (hog_hgb_lease_state(d) != HOG_HGB_LEASE_HELD)
        return "no lease after the load";
    sigset_t sig, old;
    sigemptyset(&sig);
    sigaddset(&sig, hog_hgb_lease_signal());
    int p[2];
    if (sigprocmask(SIG_BLOCK, &sig, &old) != 0 || pipe(p) != 0)
        return "sigprocmask or pipe failed";
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(path, O_RDWR);
        _exit(fd >= 0 && write(p[1], "o", 1) == 1 ? 0 : 1);
    }
    struct pollfd pf = { .fd = p[0], .events = POLLIN };
    if (pid < 0)
        return "fork failed";
    if (poll(&pf, 1, 300) != 0)
        return "the writer's open() did not wait for the lease";
    if (hog_hgb_lease_state(d) != HOG_HGB_LEASE_HELD)
        return "the lease went before the signal was let through";
    /* The pending signal runs the handler before this call returns. */
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (hog_hgb_lease_state(d) != HOG_HGB_LEASE_COPIED)
        return "the handler did not copy the arrays";
    char c;
    int status;
    if (read(p[0], &c, 1) != 1 || waitpid(pid, &status, 0) != pid ||
        !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return "the writer's open() failed after the handler";
    hog_data_free(d);
    return NULL;
}

/* Runs in a child of the test (one thread: the handler runs on the way
 * back from the open that breaks the lease). A break that comes while
 * the file is still being loaded (the lease taken, the arrays not yet
 * published) is left to the loader: publishing then copies the mapped
 * pages to private memory and releases the lease, after which the file
 * can be truncated under them. NULL when all of that holds. */
static const char *break_during_load(const char *path)
{
    int fd = open(path, O_RDONLY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0)
        return "cannot open the file";
    struct hog_hgb_lease *l = hog_hgb_lease_take(fd);
    if (!l)
        return "no lease";
    size_t len = (size_t)sb.st_size;
    unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    unsigned char *want = malloc(len);
    if (p == MAP_FAILED || !want || pread(fd, want, len, 0) != (ssize_t)len)
        return "cannot map or read the file";
    if (open(path, O_RDWR | O_NONBLOCK) >= 0 || errno != EWOULDBLOCK)
        return "a writer's open() went through during the load";
    bool late = true;
    if (hog_hgb_lease_publish(l, p, len, &late) || late)
        return "publishing did not see the break during the load";
    int w = open(path, O_RDWR);
    if (w < 0 || ftruncate(w, 0) != 0)
        return "the lease was not released after the copy";
    close(w);
    if (memcmp(p, want, len) != 0) /* SIGBUS here if still the file's pages */
        return "the copied pages differ from the file as loaded";
    hog_hgb_lease_drop(l);
    munmap(p, len);
    free(want);
    return NULL;
}

/* Runs fn(path) in a child process; asserts it returned NULL. */
static void in_a_child(const char *(*fn)(const char *), const char *path)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        const char *why = fn(path);
        if (why && write(p[1], why, strlen(why)) < 0)
            _exit(2);
        _exit(why ? 1 : 0);
    }
    close(p[1]);
    char why[256] = "";
    ssize_t k = read(p[0], why, sizeof why - 1);
    why[k > 0 ? k : 0] = 0;
    close(p[0]);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s (status %d)",
              why, status);
}

Test(hgb_lease, the_writer_waits_for_the_handler)
{
    char path[1024];
    hog_data *text;
    make_hgb(path, sizeof path, &text);
    hog_data_free(text);
    in_a_child(writer_waits, path);
}

Test(hgb_lease, a_break_during_the_load_is_copied_at_its_end)
{
    char path[1024];
    hog_data *text;
    make_hgb(path, sizeof path, &text);
    hog_data_free(text);
    in_a_child(break_during_load, path);
}

/* A file already open for writing gets no lease (F_RDLCK is refused while
 * a writer exists): the load still works, with its indices read. */
Test(hgb_lease, a_file_open_for_writing_loads_without_a_lease)
{
    char path[1024];
    hog_data *text;
    make_hgb(path, sizeof path, &text);
    int w = open(path, O_RDWR);
    cr_assert_geq(w, 0);
    hog_data *d = load(path);
    cr_assert_eq(hog_hgb_lease_state(d), HOG_HGB_LEASE_NONE);
    cr_assert(!lease_listed(path));
    assert_same(d, text, "loaded without a lease");
    hog_data_free(d);
    close(w);
    d = load(path);
    cr_assert_eq(hog_hgb_lease_state(d), HOG_HGB_LEASE_HELD);
    hog_data_free(d);
    hog_data_free(text);
}

/* hog_load_opts.own_arrays: the arrays are read into the data set's own
 * memory (no lease, nothing mapped), for a caller that writes into them;
 * without it the same load maps them under a lease. */
Test(hgb_lease, own_arrays_are_read_not_mapped)
{
    char path[1024];
    hog_data *text;
    make_hgb(path, sizeof path, &text);
    hog_load_opts o;
    hog_load_opts_init(&o);
    o.own_arrays = 1;
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_data_load(path, &o, &d, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_hgb_lease_state(d), HOG_HGB_LEASE_NONE);
    cr_assert(!lease_listed(path), "a lease on %s with own_arrays", path);
    assert_same(d, text, "loaded with its own arrays");
    hog_data_free(d);
    o.own_arrays = 0;
    cr_assert_eq(hog_data_load(path, &o, &d, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_hgb_lease_state(d), HOG_HGB_LEASE_HELD);
    hog_data_free(d);
    hog_data_free(text);
}

/* A non-blocking open for writing is refused while the lease is held (and
 * breaks it: the arrays are copied); after hog_data_free it succeeds. */
Test(hgb_lease, free_releases_the_lease)
{
    char path[1024];
    hog_data *text;
    make_hgb(path, sizeof path, &text);
    hog_data *d = load(path), *e = load(path); /* two leases, one file */
    cr_assert_eq(hog_hgb_lease_state(e), HOG_HGB_LEASE_HELD);
    hog_data_free(e);
    cr_assert(lease_listed(path));
    cr_assert_eq(hog_hgb_lease_state(d), HOG_HGB_LEASE_HELD);
    int w = open(path, O_RDWR | O_NONBLOCK);
    cr_assert(w < 0 && errno == EWOULDBLOCK, "open for writing under a lease: %d %s",
              w, strerror(errno));
    /* The refused open broke the lease all the same. */
    cr_assert_eq(state_after_break(d), HOG_HGB_LEASE_COPIED);
    assert_same(d, text, "after the break");
    hog_data_free(d);
    d = load(path);
    cr_assert_eq(hog_hgb_lease_state(d), HOG_HGB_LEASE_HELD);
    /* A child forked meanwhile holds the leased open file too: freeing
     * releases the lease all the same. */
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        char c;
        close(p[1]);
        _exit(read(p[0], &c, 1) < 0);
    }
    close(p[0]);
    hog_data_free(d);
    cr_assert(!lease_listed(path));
    w = open(path, O_RDWR | O_NONBLOCK);
    int e_open = errno;
    close(p[1]);
    waitpid(pid, NULL, 0);
    cr_assert_geq(w, 0, "open for writing after hog_data_free: %s", strerror(e_open));
    close(w);
    hog_data_free(text);
}

/* A memfd's own descriptor writes without counting as a writer, so the
 * kernel would grant a lease that writer never breaks: a file without
 * links loads with its indices read. */
Test(hgb_lease, a_memfd_loads_without_a_lease)
{
    char path[1024];
    hog_data *text;
    make_hgb(path, sizeof path, &text);
    int fd = open(path, O_RDONLY);
    struct stat sb;
    cr_assert(fd >= 0 && fstat(fd, &sb) == 0);
    int m = memfd_create("hgb", MFD_CLOEXEC);
    cr_assert_geq(m, 0);
    char *buf = malloc((size_t)sb.st_size);
    cr_assert_not_null(buf);
    cr_assert_eq(pread(fd, buf, (size_t)sb.st_size, 0), sb.st_size);
    cr_assert_eq(write(m, buf, (size_t)sb.st_size), sb.st_size);
    free(buf);
    close(fd);
    char mp[64];
    snprintf(mp, sizeof mp, "/proc/self/fd/%d", m);
    hog_data *d = load(mp);
    cr_assert_eq(hog_hgb_lease_state(d), HOG_HGB_LEASE_NONE);
    assert_same(d, text, "loaded from a memfd");
    hog_data_free(d);
    close(m);
    hog_data_free(text);
}
