/*
 * hog_data_load: a path (or "-" for standard input) to a hog_data. The
 * content decides: the .hgb magic means the binary cache; compressed files,
 * models and checkpoints are refused with what they are (input.c);
 * anything else is LIBSVM text, handed to the parallel parser a window of
 * whole lines at a time: mapped into memory, each window's pages dropped
 * once parsed, or (a pipe, a file that cannot be mapped) read a window at
 * a time. The text is never wholly in memory beside the arrays.
 */
#include "io/io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The window size: HOG_PARSE_WINDOW, or a test's (a test seam, not a
 * feature: docs/FORMATS.md). */
static size_t text_window(void)
{
    const char *t = getenv("HOGTRAIN_TEST_TEXT_WINDOW");
    if (t && *t) {
        unsigned long long w = strtoull(t, NULL, 10);
        if (w > 0)
            return (size_t)w;
    }
    return HOG_PARSE_WINDOW;
}

/* Reads fd to its end (a pipe or a device, whose size is not known) in
 * windows of whole lines, each parsed as it fills: besides the result only
 * one window is held. The first bytes are checked as soon as they arrive
 * (so that /dev/zero or a compressed stream is refused at once, not read
 * without end), a NUL byte ends the read with the parser's own error, and
 * no line may grow past hog_line_max(). */
static hog_status read_windows(int fd, const char *name,
                               const hog_load_opts *o, hog_data **out,
                               hog_err *err)
{
    struct hog_svm_parser *ps = NULL;
    hog_status st = hog_svm_parser_create(name, o, &ps, err);
    if (st != HOG_OK)
        return st;
    size_t window = text_window();
    size_t cap = window < (1 << 20) ? window : 1 << 20, n = 0;
    char *b = malloc(cap);
    if (!b) {
        hog_svm_parser_free(ps);
        return hog_errf(err, HOG_ENOMEM, "%s: out of memory", name);
    }
    uint64_t max_line = hog_line_max(), line = 1, line_len = 0;
    bool sniffed = false;
    for (;;) {
        if (n == cap) {
            /* Full: parse its whole lines, keep the line in progress. */
            const char *nl = cap >= window ? memrchr(b, '\n', n) : NULL;
            if (nl) {
                size_t cut = (size_t)(nl - b) + 1;
                if ((st = hog_svm_parser_feed(ps, b, cut, err)) != HOG_OK)
                    break;
                memmove(b, b + cut, n - cut);
                n -= cut;
                continue;
            }
            /* Still filling the first window, or one line longer. */
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
        if (k == 0) {
            if ((st = hog_svm_parser_feed(ps, b, n, err)) == HOG_OK)
                st = hog_svm_parser_finish(ps, out, err);
            break;
        }
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
    free(b);
    hog_svm_parser_free(ps);
    return st;
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
            st = hog_parse_svm_windows(map, len, name, o, text_window(),
                                       true, out, err);
            munmap(map, len);
            return st;
        }
    }
    st = read_windows(fd, name, o, out, err);
    hog_input_close(&in);
    return st;
}

hog_status hog_data_save_hgb(const hog_data *d, const char *path, hog_err *err)
{
    return hog_hgb_save(d, path, 0, 0, err);
}
