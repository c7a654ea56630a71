/* Crash-safe writes: a temporary name beside the target, fsync, rename,
 * fsync of the folder. A reader never sees a half-written file. */
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
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

hog_status hog_tmpfile_commit(FILE *f, const char *tmp, const char *path,
                              hog_err *err)
{
    int bad = ferror(f);
    int e = bad ? EIO : 0;
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
