/* Output files: every writer of the library and the command (models,
 * checkpoints, .hgb caches, predictions, generated data, reports, plots)
 * opens its target with hog_outfile_open and ends with hog_outfile_commit
 * or hog_outfile_abort. What happens depends on what the target is:
 *
 * - a regular file, or no file yet: crash-safe. A temporary name beside
 *   the target, fsync, rename, fsync of the folder: a reader never sees a
 *   half-written file.
 * - a symbolic link: followed to its final target (which need not exist
 *   yet), which is then written as above, in its own folder; the links
 *   keep pointing where they did.
 * - anything else that exists (a character device such as /dev/null or a
 *   terminal, a FIFO): written in place, opened without O_CREAT, never
 *   renamed over. A rename over /dev/null would replace the system's
 *   device with a regular file for every program on the machine.
 * - "-": standard output, in place.
 *
 * The temporary is "TARGET.tmp.HOST-PID-RANDOM", created in the target's
 * folder with O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600: a name somebody
 * planted there (a symlink to another file, a file of theirs) is never
 * opened, so no writer of hogtrain can be made to overwrite what a planted
 * link points to. The random part (getrandom) keeps such a plant from even
 * making the write fail; O_EXCL alone is what makes it safe. Before the
 * rename the temporary gets the mode the target would have: the existing
 * file's permissions, or 0666 less the umask for a new one.
 *
 * A process killed while writing (SIGKILL, power loss) leaves its
 * temporary behind; the next successful commit to the same target removes
 * such leftovers, but only those of this host whose process is gone: on a
 * folder shared between machines, another host's temporary may belong to a
 * live writer. A process ended by a signal it can catch removes its own:
 * the temporaries open now are listed in one process-wide table, which
 * the command's signal handlers empty (hog_outfile_remove_all) before the
 * process dies. That table is the library's one piece of process state,
 * as signals are the process's. */
#include "io/io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

/* ---- the temporaries open now ------------------------------------------------ */

/* Slots beyond 32 temporaries open at once (no writer of hogtrain has
 * more than two) go unlisted: such a temporary is left behind by a signal,
 * as by SIGKILL, and removed by the next commit to its target. */
enum { LIVE_SLOTS = 32, SLOT_FREE = 0, SLOT_TAKEN, SLOT_LIVE };
static struct {
    atomic_int state;
    char name[sizeof ((hog_outfile *)0)->tmp];
} live[LIVE_SLOTS];

/* Lists tmp; the slot, or -1 when the table is full. */
static int live_add(const char *tmp)
{
    for (int i = 0; i < LIVE_SLOTS; i++) {
        int expect = SLOT_FREE;
        if (!atomic_compare_exchange_strong(&live[i].state, &expect,
                                            SLOT_TAKEN))
            continue;
        snprintf(live[i].name, sizeof live[i].name, "%s", tmp);
        /* release: the name is whole before a handler can see the slot;
         * pairs with the acquire in hog_outfile_remove_all() */
        atomic_store_explicit(&live[i].state, SLOT_LIVE, memory_order_release);
        return i;
    }
    return -1;
}

static void live_drop(int slot)
{
    if (slot >= 0)
        atomic_store_explicit(&live[slot].state, SLOT_FREE,
                              memory_order_release);
}

void hog_outfile_remove_all(void)
{
    for (int i = 0; i < LIVE_SLOTS; i++)
        if (atomic_load_explicit(&live[i].state, memory_order_acquire) ==
            SLOT_LIVE)
            unlink(live[i].name); /* async-signal-safe, as is the rest */
}

/* Signals held off while a temporary and its listing change together
 * (created and listed, renamed or removed and dropped): a handler never
 * sees a temporary that is not listed, nor removes a name that is gone. */
static void signals_hold(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, old);
}

static void signals_release(const sigset_t *old)
{
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* ---- names ------------------------------------------------------------------- */

/* This host's name reduced to [A-Za-z0-9_.] (at most 64 bytes), so that it
 * cannot contain the '-' that separates it from the PID, nor a '/'. */
void hog_tmp_host_tag(char *buf, size_t len)
{
    char h[256] = "";
    if (gethostname(h, sizeof h - 1) != 0 || !h[0])
        snprintf(h, sizeof h, "localhost");
    size_t n = 0;
    for (const char *p = h; *p && n + 1 < len && n < 64; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '_' || c == '.';
        buf[n++] = ok ? c : '_';
    }
    buf[n] = 0;
}

/* 64 unpredictable bits for a temporary's name. Without getrandom (an old
 * kernel, a seccomp filter) the clock and a stack address stand in: the
 * name is then guessable, but O_EXCL still refuses whatever was planted. */
static uint64_t name_bits(unsigned attempt)
{
    uint64_t r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r)
        return r;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    r = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
        (uint64_t)(uintptr_t)&r ^ attempt;
    r *= UINT64_C(0x9E3779B97F4A7C15);
    return r ^ (r >> 29);
}

/* Follows path's symbolic links, as text, to the name that is not one (40
 * links at most, as the kernel allows), into dest: the regular file to
 * replace, or the name a dangling link points to, which the write will
 * create. */
static hog_status follow_links(const char *path, char *dest, size_t len,
                               hog_err *err)
{
    if ((size_t)snprintf(dest, len, "%s", path) >= len)
        return hog_errf(err, HOG_EINVAL, "%s: path too long", path);
    for (int hops = 0;; hops++) {
        struct stat st;
        if (lstat(dest, &st) != 0 || !S_ISLNK(st.st_mode))
            return HOG_OK;
        char link[4096];
        ssize_t n = hops < 40 ? readlink(dest, link, sizeof link - 1) : -1;
        if (n < 0)
            return hog_errf(err, HOG_EIO, "%s: cannot write: %s", path,
                            strerror(hops < 40 ? errno : ELOOP));
        link[n] = 0;
        /* a relative link is relative to the folder that holds it */
        const char *slash = strrchr(dest, '/');
        size_t keep = link[0] != '/' && slash ? (size_t)(slash + 1 - dest) : 0;
        if (keep + (size_t)n >= len)
            return hog_errf(err, HOG_EINVAL, "%s: path too long", path);
        memcpy(dest + keep, link, (size_t)n + 1);
    }
}

/* Where path's bytes go: *in_place and dest = path when it names (through
 * any links, /dev/stdout's magic ones too) something that exists and is
 * not a regular file, opened by that name; else dest = the regular file
 * at the end of its links, or the name to create. */
static hog_status resolve(const char *path, char *dest, size_t len,
                          bool *in_place, hog_err *err)
{
    if (!*path)
        return hog_errf(err, HOG_EINVAL, "empty output file name");
    struct stat st;
    *in_place = false;
    if (stat(path, &st) != 0) {
        if (errno != ENOENT)
            return hog_errf(err, HOG_EIO, "%s: cannot write: %s", path,
                            strerror(errno));
    } else if (S_ISDIR(st.st_mode)) {
        return hog_errf(err, HOG_EIO, "%s: cannot write: %s", path,
                        strerror(EISDIR));
    } else if (!S_ISREG(st.st_mode)) {
        *in_place = true;
        if ((size_t)snprintf(dest, len, "%s", path) >= len)
            return hog_errf(err, HOG_EINVAL, "%s: path too long", path);
        return HOG_OK;
    }
    return follow_links(path, dest, len, err);
}

/* The folder of path, into buf. */
static const char *folder_of(const char *path, char *buf, size_t len)
{
    snprintf(buf, len, "%s", path);
    return dirname(buf);
}

hog_status hog_outfile_check(const char *path, hog_err *err)
{
    if (strcmp(path, "-") == 0)
        return HOG_OK;
    char dest[4096], dirbuf[4096];
    bool in_place;
    hog_status s = resolve(path, dest, sizeof dest, &in_place, err);
    if (s != HOG_OK)
        return s;
    if (in_place) {
        if (access(dest, W_OK) != 0)
            return hog_errf(err, HOG_EIO, "%s: cannot write: %s", path,
                            strerror(errno));
        return HOG_OK;
    }
    struct stat st;
    const char *dir = folder_of(dest, dirbuf, sizeof dirbuf);
    if (stat(dir, &st) != 0)
        return hog_errf(err, HOG_EIO, "%s: cannot write: folder %s: %s", path,
                        dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return hog_errf(err, HOG_EIO, "%s: cannot write: %s is not a folder",
                        path, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return hog_errf(err, HOG_EIO, "%s: cannot write: folder %s: %s", path,
                        dir, strerror(errno));
    return HOG_OK;
}

/* ---- opening ----------------------------------------------------------------- */

/* The process's umask, read without changing it (umask(2) can only set
 * it, and setting it to read it would race with threads creating files):
 * /proc/self/status has it since Linux 4.7; 022 where it cannot be read. */
static mode_t current_umask(void)
{
    mode_t m = 022;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return m;
    char line[256];
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "Umask:", 6) == 0) {
            m = (mode_t)strtoul(line + 6, NULL, 8) & 0777;
            break;
        }
    fclose(f);
    return m;
}

/* The permissions the regular file dest would have after the write: those
 * of the file there now, else what open(dest, O_CREAT, 0666) would give. */
static mode_t target_mode(const char *dest)
{
    struct stat st;
    if (lstat(dest, &st) == 0 && S_ISREG(st.st_mode))
        return st.st_mode & 0777;
    return 0666 & ~current_umask();
}

/* o->f over fd (closed on failure). */
static hog_status wrap(hog_outfile *o, int fd, hog_err *err)
{
    o->f = fdopen(fd, "wb");
    if (o->f)
        return HOG_OK;
    int e = errno;
    close(fd);
    return hog_errf(err, HOG_ENOMEM, "%s: cannot write: %s", o->name,
                    strerror(e));
}

static hog_status open_temporary(hog_outfile *o, hog_err *err)
{
    char host[72];
    hog_tmp_host_tag(host, sizeof host);
    int fd = -1, e = EEXIST;
    sigset_t old;
    for (unsigned attempt = 0; fd < 0 && e == EEXIST && attempt < 16;
         attempt++) {
        int n = snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%s-%ld-%016llx",
                         o->dest, host, (long)getpid(),
                         (unsigned long long)name_bits(attempt));
        if (n < 0 || (size_t)n >= sizeof o->tmp) {
            o->tmp[0] = 0;
            return hog_errf(err, HOG_EINVAL, "%s: path too long", o->name);
        }
        signals_hold(&old);
        /* read too: the streamed .hgb writer moves its chunks down where
         * the file system cannot collapse a range (src/io/stream_convert.c) */
        fd = open(o->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  0600);
        e = fd < 0 ? errno : 0;
        if (fd >= 0)
            o->slot = live_add(o->tmp);
        signals_release(&old);
    }
    if (fd < 0) {
        hog_errf(err, HOG_EIO, "%s: cannot create: %s", o->tmp, strerror(e));
        o->tmp[0] = 0;
        return HOG_EIO;
    }
    /* The target's mode now, while nobody else can open the file yet;
     * a folder that keeps no modes (vfat) refuses, and that is fine. */
    (void)fchmod(fd, target_mode(o->dest));
    hog_status s = wrap(o, fd, err);
    if (s != HOG_OK)
        hog_outfile_abort(o);
    return s;
}

hog_status hog_outfile_open(hog_outfile *o, const char *path, hog_err *err)
{
    o->f = NULL;
    o->name = path;
    o->tmp[0] = 0;
    o->slot = -1;
    if (strcmp(path, "-") == 0) {
        snprintf(o->dest, sizeof o->dest, "%s", path);
        fflush(stdout); /* what the command printed goes first */
        int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
        if (fd < 0)
            return hog_errf(err, HOG_EIO, "standard output: cannot write: %s",
                            strerror(errno));
        return wrap(o, fd, err);
    }
    bool in_place;
    hog_status s = resolve(path, o->dest, sizeof o->dest, &in_place, err);
    if (s != HOG_OK)
        return s;
    if (in_place) {
        /* No O_CREAT: this opens what is there or nothing. A FIFO's open
         * waits for its reader, as a shell's redirection does. */
        int fd = open(o->dest, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
            return hog_errf(err, HOG_EIO, "%s: cannot write: %s", path,
                            strerror(errno));
        struct stat st;
        if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode))
            return wrap(o, fd, err);
        close(fd); /* replaced by a regular file meanwhile: as one */
        if ((s = follow_links(path, o->dest, sizeof o->dest, err)) != HOG_OK)
            return s;
    }
    return open_temporary(o, err);
}

bool hog_outfile_in_place(const hog_outfile *o)
{
    return !o->tmp[0];
}

/* ---- committing ---------------------------------------------------------------- */

static void fsync_dir_of(const char *path)
{
    char buf[4096];
    int fd = open(folder_of(path, buf, sizeof buf), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd); /* best effort: some filesystems refuse it on folders */
        close(fd);
    }
}

/* Test seam (docs/RELIABILITY.md), not a feature: with the environment
 * variable HOGTRAIN_TEST_ENOSPC=1 every commit fails as a full disk would;
 * with HOGTRAIN_TEST_ENOSPC=replace only those that would replace an
 * existing file (the second checkpoint of a run, say). */
static int test_enospc(const char *path)
{
    const char *v = getenv("HOGTRAIN_TEST_ENOSPC");
    if (!v || !*v)
        return 0;
    if (!strcmp(v, "replace"))
        return access(path, F_OK) == 0 ? ENOSPC : 0;
    return !strcmp(v, "1") ? ENOSPC : 0;
}

/* Removes "path.tmp.HOST-PID-RANDOM" files of this host whose process no
 * longer exists (kill(pid, 0) fails with ESRCH), and "path.tmp.HOST-PID"
 * ones that hogtrain 0.1 left. Best effort: errors are ignored. */
static void remove_stale_temporaries(const char *path)
{
    char dirbuf[4096], basebuf[4096], host[72];
    snprintf(basebuf, sizeof basebuf, "%s", path);
    const char *dir = folder_of(path, dirbuf, sizeof dirbuf),
               *base = basename(basebuf);
    hog_tmp_host_tag(host, sizeof host);
    char prefix[4200];
    int plen = snprintf(prefix, sizeof prefix, "%s.tmp.%s-", base, host);
    if (plen < 0 || (size_t)plen >= sizeof prefix)
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, prefix, (size_t)plen) != 0)
            continue;
        const char *num = e->d_name + plen;
        char *end;
        errno = 0;
        long pid = strtol(num, &end, 10);
        if (*end == '-' && end[1] && strspn(end + 1, "0123456789abcdef") ==
                                         strlen(end + 1))
            end += strlen(end);
        if (errno || end == num || *end || pid <= 0 || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* alive, or not ours to signal: leave it */
        char full[8400];
        if (snprintf(full, sizeof full, "%s/%s", dir, e->d_name) <
            (int)sizeof full)
            unlink(full);
    }
    closedir(d);
}

/* Why an earlier write of fd failed, when stdio no longer knows: a failed
 * write sets the stream's error flag, but its errno is gone by the commit,
 * and a flush has nothing left to retry when the failed write was the
 * last. A full file system is the one cause that can be seen afterwards
 * (and by far the most common); anything else stays "Input/output error". */
static int lost_write_errno(int fd)
{
    struct stat st;
    struct statvfs vs;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && fstatvfs(fd, &vs) == 0 &&
        (vs.f_bavail == 0 || vs.f_favail == 0))
        return ENOSPC;
    return EIO;
}

hog_status hog_outfile_commit(hog_outfile *o, hog_err *err)
{
    FILE *f = o->f;
    o->f = NULL;
    int e = test_enospc(o->dest);
    bool bad = ferror(f);
    if (fflush(f) != 0 && !e)
        e = errno;
    if (bad && !e)
        e = lost_write_errno(fileno(f));
    /* EINVAL: a pipe, a terminal or /dev/null, which keep nothing to sync */
    if (!e && fsync(fileno(f)) != 0 && errno != EINVAL && errno != EROFS)
        e = errno;
    if (fclose(f) != 0 && !e)
        e = errno;
    if (hog_outfile_in_place(o))
        return e ? hog_errf(err, HOG_EIO, "%s: write failed: %s", o->name,
                            strerror(e))
                 : HOG_OK;
    sigset_t old;
    signals_hold(&old);
    if (!e && rename(o->tmp, o->dest) != 0)
        e = -errno;
    if (e)
        unlink(o->tmp);
    live_drop(o->slot);
    signals_release(&old);
    o->slot = -1;
    if (e < 0)
        hog_errf(err, HOG_EIO, "%s: cannot rename %s into place: %s", o->name,
                 o->tmp, strerror(-e));
    else if (e)
        hog_errf(err, HOG_EIO, "%s: write failed: %s (nothing written)",
                 o->name, strerror(e));
    o->tmp[0] = 0;
    if (e)
        return HOG_EIO;
    fsync_dir_of(o->dest);
    remove_stale_temporaries(o->dest);
    return HOG_OK;
}

void hog_outfile_abort(hog_outfile *o)
{
    if (o->f)
        fclose(o->f);
    o->f = NULL;
    if (hog_outfile_in_place(o))
        return;
    sigset_t old;
    signals_hold(&old);
    unlink(o->tmp);
    live_drop(o->slot);
    signals_release(&old);
    o->slot = -1;
    o->tmp[0] = 0;
}
