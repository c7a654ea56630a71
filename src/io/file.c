/* Crash-safe writes: a temporary name beside the target, fsync, rename,
 * fsync of the folder. A reader never sees a half-written file.
 *
 * The temporary is "path.tmp.HOST-PID". A process killed while writing
 * (SIGKILL, power loss) leaves its temporary behind; the next successful
 * commit to the same path removes such leftovers, but only those of this
 * host whose process is gone: on a folder shared between machines, another
 * host's temporary may belong to a live writer. */
#include "io/io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* This host's name reduced to [A-Za-z0-9_.] (at most 64 bytes), so that it
 * cannot contain the '-' that separates it from the PID, nor a '/'. */
static void host_tag(char *buf, size_t len)
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

hog_status hog_tmpfile_open(const char *path, char *tmp, size_t tmplen,
                            FILE **out, hog_err *err)
{
    char host[72];
    host_tag(host, sizeof host);
    int n = snprintf(tmp, tmplen, "%s.tmp.%s-%ld", path, host, (long)getpid());
    if (n < 0 || (size_t)n >= tmplen)
        return hog_errf(err, HOG_EINVAL, "%s: path too long", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return hog_errf(err, HOG_EIO, "%s: cannot create: %s", tmp,
                        strerror(errno));
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

/* Removes "path.tmp.HOST-PID" files of this host whose process no longer
 * exists (kill(pid, 0) fails with ESRCH). Best effort: errors are ignored. */
static void remove_stale_temporaries(const char *path)
{
    char dirbuf[4096], basebuf[4096], host[72];
    snprintf(dirbuf, sizeof dirbuf, "%s", path);
    snprintf(basebuf, sizeof basebuf, "%s", path);
    const char *dir = dirname(dirbuf), *base = basename(basebuf);
    host_tag(host, sizeof host);
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

hog_status hog_tmpfile_commit(FILE *f, const char *tmp, const char *path,
                              hog_err *err)
{
    int bad = ferror(f);
    int e = bad ? EIO : test_enospc(path);
    if (fflush(f) != 0 && !e)
        e = errno;
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
