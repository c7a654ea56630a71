/* Files at the level of the system calls: the whole-transfer loops every
 * reader and writer of io uses (read(2), pread(2), preadv(2), pwrite(2)
 * repeated over EINTR and short transfers), and crash-safe writes.
 *
 * Crash-safe writes: a temporary name beside the target, fsync, rename,
 * fsync of the folder. A reader never sees a half-written file.
 *
 * The temporary is "path.tmp.HOST-PID-RANDOM", created in the target's
 * folder with O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600: a name somebody
 * planted there (a symlink to another file, a file of theirs) is never
 * opened, so no writer of hogtrain can be made to overwrite what a link
 * points to. The random part (getrandom) keeps such a plant from even
 * making the write fail; O_EXCL alone is what makes it safe. Before the
 * rename the temporary gets the mode the target would have: the existing
 * file's permissions, or 0666 less the umask for a new one.
 *
 * A process killed while writing (SIGKILL, power loss) leaves its
 * temporary behind; the next successful commit to the same path removes
 * such leftovers, but only those of this host whose process is gone: on a
 * folder shared between machines, another host's temporary may belong to a
 * live writer. */
#include "io/io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* ---- whole transfers ---------------------------------------------------------- */

ssize_t hog_read_some(int fd, void *buf, size_t len)
{
    ssize_t k;
    do
        k = read(fd, buf, len);
    while (k < 0 && errno == EINTR);
    return k;
}

/* The one loop under the whole transfers: readv (off < 0), preadv or
 * pwritev over iov[0..n) (consumed), repeated over EINTR and short
 * transfers until every byte has moved. */
static size_t transfer(int fd, struct iovec *iov, int n, int64_t off,
                       bool write, int *error)
{
    size_t done = 0;
    *error = 0;
    for (;;) {
        while (n > 0 && iov->iov_len == 0)
            iov++, n--;
        if (n == 0)
            break;
        int batch = n < IOV_MAX ? n : IOV_MAX;
        off_t at = (off_t)off + (off_t)done;
        ssize_t k = write    ? pwritev(fd, iov, batch, at)
                    : off < 0 ? readv(fd, iov, batch)
                              : preadv(fd, iov, batch, at);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            /* 0 is the end of the file for a read; a write of nothing
             * has no errno, but cannot go on either. */
            if (k < 0 || write)
                *error = k < 0 ? errno : EIO;
            break;
        }
        done += (size_t)k;
        size_t left = (size_t)k;
        while (n > 0 && left >= iov->iov_len) {
            left -= iov->iov_len;
            iov++, n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + left;
            iov->iov_len -= left;
        }
    }
    return done;
}

size_t hog_read_full(int fd, void *buf, size_t len, int *error)
{
    struct iovec v = { buf, len };
    return transfer(fd, &v, 1, -1, false, error);
}

size_t hog_pread_full(int fd, void *buf, size_t len, uint64_t off, int *error)
{
    struct iovec v = { buf, len };
    return transfer(fd, &v, 1, (int64_t)off, false, error);
}

size_t hog_preadv_full(int fd, struct iovec *iov, int n, uint64_t off,
                       int *error)
{
    return transfer(fd, iov, n, (int64_t)off, false, error);
}

size_t hog_pwrite_full(int fd, const void *buf, size_t len, uint64_t off,
                       int *error)
{
    struct iovec v = { (void *)buf, len };
    return transfer(fd, &v, 1, (int64_t)off, true, error);
}

/* ---- crash-safe writes ---------------------------------------------------------- */

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

/* The permissions the file at path would have after the write: those of
 * the regular file there now (not a link's, which the rename replaces),
 * else what open(path, O_CREAT, 0666) would give. */
static mode_t target_mode(const char *path)
{
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
        return st.st_mode & 0777;
    return 0666 & ~current_umask();
}

hog_status hog_tmpfile_open(const char *path, char *tmp, size_t tmplen,
                            FILE **out, hog_err *err)
{
    char host[72];
    hog_tmp_host_tag(host, sizeof host);
    int fd = -1, e = EEXIST;
    for (unsigned attempt = 0; fd < 0 && e == EEXIST && attempt < 16;
         attempt++) {
        int n = snprintf(tmp, tmplen, "%s.tmp.%s-%ld-%016llx", path, host,
                         (long)getpid(),
                         (unsigned long long)name_bits(attempt));
        if (n < 0 || (size_t)n >= tmplen)
            return hog_errf(err, HOG_EINVAL, "%s: path too long", path);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  0600);
        e = fd < 0 ? errno : 0;
    }
    if (fd < 0)
        return hog_errf(err, HOG_EIO, "%s: cannot create: %s", tmp,
                        strerror(e));
    /* The target's mode now, while nobody else can open the file yet;
     * a folder that keeps no modes (vfat) refuses, and that is fine. */
    (void)fchmod(fd, target_mode(path));
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        e = errno;
        close(fd);
        unlink(tmp);
        return hog_errf(err, HOG_ENOMEM, "%s: cannot create: %s", tmp,
                        strerror(e));
    }
    *out = f;
    return HOG_OK;
}

void hog_tmpfile_abort(FILE *f, const char *tmp)
{
    if (f)
        fclose(f);
    unlink(tmp);
}

static void fsync_dir_of(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    int fd = open(dirname(buf), O_RDONLY | O_DIRECTORY);
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
    snprintf(dirbuf, sizeof dirbuf, "%s", path);
    snprintf(basebuf, sizeof basebuf, "%s", path);
    const char *dir = dirname(dirbuf), *base = basename(basebuf);
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
    struct statvfs vs;
    if (fstatvfs(fd, &vs) == 0 && (vs.f_bavail == 0 || vs.f_favail == 0))
        return ENOSPC;
    return EIO;
}

hog_status hog_tmpfile_commit(FILE *f, const char *tmp, const char *path,
                              hog_err *err)
{
    int e = test_enospc(path);
    bool bad = ferror(f);
    if (fflush(f) != 0 && !e)
        e = errno;
    if (bad && !e)
        e = lost_write_errno(fileno(f));
    if (!e && fsync(fileno(f)) != 0 && errno != EINVAL && errno != EROFS)
        e = errno;
    if (fclose(f) != 0 && !e)
        e = errno;
    if (e) {
        unlink(tmp);
        return hog_errf(err, HOG_EIO, "%s: write failed: %s (nothing written)",
                        path, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        e = errno;
        unlink(tmp);
        return hog_errf(err, HOG_EIO, "%s: cannot rename %s into place: %s",
                        path, tmp, strerror(e));
    }
    fsync_dir_of(path);
    remove_stale_temporaries(path);
    return HOG_OK;
}
