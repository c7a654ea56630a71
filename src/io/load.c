/*
 * hog_data_load: a path (or "-" for standard input) to a hog_data. The
 * content decides: the .hgb magic means the binary cache, anything else is
 * LIBSVM text, mapped into memory (or read whole when it cannot be mapped)
 * and handed to the parallel parser.
 */
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads fd to its end into a malloc'd buffer. */
static hog_status read_all(int fd, const char *name, char **out, size_t *len,
                           hog_err *err)
{
    size_t cap = 1 << 20, n = 0;
    char *b = malloc(cap);
    if (!b)
        return hog_errf(err, HOG_ENOMEM, "%s: out of memory", name);
    for (;;) {
        if (n == cap) {
            char *q = cap <= SIZE_MAX / 2 ? realloc(b, cap * 2) : NULL;
            if (!q) {
                free(b);
                return hog_errf(err, HOG_ENOMEM, "%s: out of memory", name);
            }
            b = q, cap *= 2;
        }
        ssize_t k = read(fd, b + n, cap - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            int e = errno;
            free(b);
            return hog_errf(err, HOG_EIO, "%s: read failed: %s", name, strerror(e));
        }
        if (k == 0)
            break;
        n += (size_t)k;
    }
    *out = b;
    *len = n;
    return HOG_OK;
}

hog_status hog_data_load(const char *path, const hog_load_opts *o,
                         hog_data **out, hog_err *err)
{
    hog_load_opts def;
    if (!o) {
        hog_load_opts_init(&def);
        o = &def;
    }
    if (!path || !out)
        return hog_errf(err, HOG_EINVAL, "hog_data_load: no path or no output");
    bool is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "<stdin>" : path;
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return hog_errf(err, HOG_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    bool regular = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
    hog_status st;
    if (regular && !is_stdin) {
        size_t len = (size_t)sb.st_size;
        unsigned char head[8];
        ssize_t k = len >= 8 ? pread(fd, head, 8, 0) : 0;
        if (k == 8 && hog_hgb_sniff(head, 8)) {
            close(fd);
            return hog_hgb_load(path, o, out, err);
        }
        if (len == 0) {
            close(fd);
            return hog_errf(err, HOG_EPARSE, "%s: empty file, no rows", name);
        }
        void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map != MAP_FAILED) {
            close(fd);
            madvise(map, len, MADV_WILLNEED);
            st = hog_parse_svm(map, len, name, o, out, err);
            munmap(map, len);
            return st;
        }
    }
    char *buf = NULL;
    size_t len = 0;
    st = read_all(fd, name, &buf, &len, err);
    if (!is_stdin)
        close(fd);
    if (st != HOG_OK)
        return st;
    if (hog_hgb_sniff(buf, len))
        st = hog_errf(err, HOG_EINVAL,
                      "%s: a .hgb file can only be loaded from a path, not a pipe",
                      name);
    else
        st = hog_parse_svm(buf, len, name, o, out, err);
    free(buf);
    return st;
}

hog_status hog_data_save_hgb(const hog_data *d, const char *path, hog_err *err)
{
    return hog_hgb_save(d, path, 0, 0, err);
}
