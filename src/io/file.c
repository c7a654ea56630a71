/* Crash-safe writes: a temporary name beside the target, fsync, rename,
 * fsync of the folder. A reader never sees a half-written file. */
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

hog_status hog_tmpfile_open(const char *path, char *tmp, size_t tmplen,
                            FILE **out, hog_err *err)
{
    int n = snprintf(tmp, tmplen, "%s.tmp.%ld", path, (long)getpid());
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
    return HOG_OK;
}
