/*
 * hog_data_load: a path (or "-" for standard input) to a hog_data. The
 * content decides: the .hgb magic means the binary cache; compressed files,
 * models and checkpoints are refused with what they are (input.c);
 * anything else is LIBSVM text, mapped into memory (or read whole when it
 * cannot be mapped) and handed to the parallel parser.
 */
#include "io/io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Reads fd to its end into a malloc'd buffer: a pipe or a device, whose
 * size is not known. Its first bytes are checked as soon as they arrive
 * (so that /dev/zero or a compressed stream is refused at once, not read
 * without end), a NUL byte ends the read with the parser's own error, and
 * no line may grow past hog_line_max(). */
static hog_status read_all(int fd, const char *name, char **out, size_t *len,
                           hog_err *err)
{
    size_t cap = 1 << 20, n = 0;
    char *b = malloc(cap);
    if (!b)
        return hog_errf(err, HOG_ENOMEM, "%s: out of memory", name);
    uint64_t max_line = hog_line_max(), line = 1, line_len = 0;
    bool sniffed = false;
    hog_status st = HOG_OK;
    for (;;) {
        if (n == cap) {
            char *q = cap <= SIZE_MAX / 2 ? realloc(b, cap * 2) : NULL;
            if (!q) {
                st = hog_errf(err, HOG_ENOMEM, "%s: out of memory after "
                              "reading %zu bytes", name, n);
                break;
            }
            b = q, cap *= 2;
        }
        ssize_t k = hog_read_some(fd, b + n, cap - n);
        if (k < 0) {
            st = hog_errf(err, HOG_EIO, "%s: read failed: %s", name,
                          strerror(errno));
            break;
        }
        if (!sniffed && (k == 0 || n + (size_t)k >= HOG_SNIFF_BYTES)) {
            sniffed = true;
            enum hog_file_kind kind = hog_file_kind(b, n + (size_t)k);
            if (kind == HOG_FILE_HGB)
                st = hog_errf(err, HOG_EINVAL, "%s: a .hgb file can only be "
                              "loaded from a path, not a pipe", name);
            else
                st = hog_data_kind_check(kind, name, err);
            if (st != HOG_OK)
                break;
        }
        if (k == 0)
            break;
        /* The line in progress (bytes since the last newline), and the
         * first NUL byte, which the parser would refuse anyway: a stream
         * of binary (/dev/urandom) stops here, not when memory runs out. */
        const char *p = b + n, *e = p + k, *z = memchr(p, 0, (size_t)k);
        if (z)
            e = z;
        const char *nl = memrchr(p, '\n', (size_t)(e - p));
        if (nl) {
            for (const char *q = p; (q = memchr(q, '\n', (size_t)(e - q))); q++)
                line++;
            line_len = (uint64_t)(e - nl - 1);
        } else {
            line_len += (uint64_t)(e - p);
        }
        n += (size_t)k;
        if (z) {
            st = hog_errf(err, HOG_EPARSE, "%s:%llu: NUL byte in the line",
                          name, (unsigned long long)line);
            break;
        }
        if (line_len > max_line) {
            st = hog_line_too_long(name, line, max_line, err);
            break;
        }
    }
    if (st != HOG_OK) {
        free(b);
        return st;
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
    struct hog_input in;
    hog_status st = hog_input_open(path, &in, err);
    if (st != HOG_OK)
        return st;
    int fd = in.fd;
    const char *name = in.name;
    if (in.regular && !in.is_stdin) {
        size_t len = (size_t)in.size;
        unsigned char head[HOG_SNIFF_BYTES];
        ssize_t k = pread(fd, head, sizeof head, 0);
        enum hog_file_kind kind = hog_file_kind(head, k > 0 ? (size_t)k : 0);
        if (kind == HOG_FILE_HGB) {
            hog_input_close(&in);
            return hog_hgb_load(path, o, out, err);
        }
        if ((st = hog_data_kind_check(kind, name, err)) != HOG_OK) {
            hog_input_close(&in);
            return st;
        }
        if (len == 0) {
            hog_input_close(&in);
            return hog_errf(err, HOG_EPARSE, "%s: empty file, no rows", name);
        }
        void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map != MAP_FAILED) {
            hog_input_close(&in);
            madvise(map, len, MADV_WILLNEED);
            st = hog_parse_svm(map, len, name, o, out, err);
            munmap(map, len);
            return st;
        }
    }
    char *buf = NULL;
    size_t len = 0;
    st = read_all(fd, name, &buf, &len, err);
    hog_input_close(&in);
    if (st != HOG_OK)
        return st;
    st = hog_parse_svm(buf, len, name, o, out, err);
    free(buf);
    return st;
}

hog_status hog_data_save_hgb(const hog_data *d, const char *path, hog_err *err)
{
    return hog_hgb_save(d, path, 0, 0, err);
}
