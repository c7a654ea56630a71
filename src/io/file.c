/* Files at the level of the system calls: the whole-transfer loops every
 * reader and writer of io uses (read(2), pread(2), preadv(2), pwrite(2)
 * repeated over EINTR and short transfers). The writers' output files
 * (temporaries, renames, targets written in place) are src/io/outfile.c. */
#include "io/io.h"

#include <errno.h>
#include <limits.h>
#include <sys/uio.h>
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
