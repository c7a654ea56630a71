/*
 * What an input file is, told from its first bytes, for the loader, the
 * streamer, `convert` and `info` alike: so that a model or a checkpoint
 * given as data is named for what it is ("m.hgm is a hogtrain model, not
 * data") instead of failing as text on its first NUL byte, a device such
 * as /dev/zero is refused at its first byte instead of being read without
 * end, and compressed text (gzip, xz, zstd) goes to its decoder
 * (decompress.c) while the kinds hogtrain does not decompress (bzip2,
 * zip) are named with the command that does.
 *
 * How an input named by a path or "-" is opened (hog_input_open) and its
 * first bytes read (hog_input_sniff).
 *
 * And how long one line of text may be where lines are buffered (a pipe, a
 * device, convert's windows): a mapped regular file needs no buffer, but a
 * stream without newlines would otherwise grow one until memory runs out.
 */
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

hog_status hog_input_open(const char *path, struct hog_input *in,
                          hog_err *err)
{
    memset(in, 0, sizeof *in);
    in->is_stdin = strcmp(path, "-") == 0;
    in->name = in->is_stdin ? "<stdin>" : path;
    in->fd = in->is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (in->fd < 0)
        return hog_errf(err, HOG_EIO, "%s: cannot open: %s", path,
                        strerror(errno));
    struct stat sb;
    in->regular = fstat(in->fd, &sb) == 0 && S_ISREG(sb.st_mode);
    if (in->regular) {
        in->size = (uint64_t)sb.st_size;
        in->mtime = (int64_t)sb.st_mtime;
    }
    return HOG_OK;
}

hog_status hog_input_sniff(struct hog_input *in, hog_err *err)
{
    /* A file named by its path is read from 0 again (or mapped); a pipe
     * or standard input goes on after the bytes read here. */
    in->head_consumed = !in->regular || in->is_stdin;
    int e;
    in->head_len = in->head_consumed
                       ? hog_read_full(in->fd, in->head, sizeof in->head, &e)
                       : hog_pread_full(in->fd, in->head, sizeof in->head, 0, &e);
    if (e)
        return hog_errf(err, HOG_EIO, "%s: read failed: %s", in->name,
                        strerror(e));
    in->kind = hog_file_kind(in->head, in->head_len);
    return HOG_OK;
}

void hog_input_close(struct hog_input *in)
{
    if (!in->is_stdin && in->fd >= 0)
        close(in->fd);
    in->fd = -1;
}

enum hog_file_kind hog_file_kind(const void *head, size_t len)
{
    const unsigned char *h = head;
    static const struct {
        const char *magic;
        size_t len;
        enum hog_file_kind kind;
    } magics[] = {
        { HOG_HGB_MAGIC, 8, HOG_FILE_HGB },
        { HOG_HGM_MAGIC, 8, HOG_FILE_HGM },
        { HOG_CKPT_MAGIC, 8, HOG_FILE_CKPT },
        { "solver_type", 11, HOG_FILE_LIBLINEAR },
        { "\x1F\x8B", 2, HOG_FILE_GZIP },
        { "\xFD" "7zXZ\0", 6, HOG_FILE_XZ },
        { "\x28\xB5\x2F\xFD", 4, HOG_FILE_ZSTD },
        { "PK\x03\x04", 4, HOG_FILE_ZIP },
    };
    for (size_t i = 0; i < sizeof magics / sizeof *magics; i++)
        if (len >= magics[i].len && memcmp(h, magics[i].magic, magics[i].len) == 0)
            return magics[i].kind;
    if (len >= 4 && memcmp(h, "BZh", 3) == 0 && h[3] >= '1' && h[3] <= '9')
        return HOG_FILE_BZIP2;
    if (len >= 1 && h[0] == 0)
        return HOG_FILE_NUL;
    return HOG_FILE_TEXT;
}

hog_format hog_text_sniff(const char *buf, size_t len)
{
    const char *p = buf, *end = buf + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *q = p;
        while (q < le && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        if (q < le && *q != '#') {
            /* a LIBSVM comment may hold a '|'; a VW line has one before
             * any '#' (which VW names may hold) */
            const char *hash = memchr(q, '#', (size_t)(le - q));
            const char *bar = memchr(q, '|', (size_t)((hash ? hash : le) - q));
            return bar ? HOG_FORMAT_VW : HOG_FORMAT_LIBSVM;
        }
        p = nl ? nl + 1 : end;
    }
    return HOG_FORMAT_AUTO;
}

const char *hog_format_name(hog_format f)
{
    switch (f) {
    case HOG_FORMAT_LIBSVM: return "LIBSVM";
    case HOG_FORMAT_VW: return "Vowpal Wabbit";
    case HOG_FORMAT_AUTO: break;
    }
    return "text";
}

hog_status hog_file_kind_of(const char *path, enum hog_file_kind *kind,
                            hog_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return hog_errf(err, HOG_EIO, "%s: cannot open: %s", path,
                        strerror(errno));
    unsigned char head[HOG_SNIFF_BYTES];
    ssize_t n = hog_read_some(fd, head, sizeof head);
    int e = errno;
    close(fd);
    if (n < 0 && e != EAGAIN)
        return hog_errf(err, HOG_EIO, "%s: cannot read: %s", path, strerror(e));
    *kind = hog_file_kind(head, n > 0 ? (size_t)n : 0);
    return HOG_OK;
}

const char *hog_file_kind_name(enum hog_file_kind k)
{
    switch (k) {
    case HOG_FILE_TEXT: return "LIBSVM text";
    case HOG_FILE_HGB: return "a hogtrain binary cache (.hgb)";
    case HOG_FILE_HGM: return "a hogtrain model";
    case HOG_FILE_CKPT: return "a hogtrain checkpoint";
    case HOG_FILE_LIBLINEAR: return "a LIBLINEAR model";
    case HOG_FILE_GZIP: return "gzip-compressed";
    case HOG_FILE_XZ: return "xz-compressed";
    case HOG_FILE_ZSTD: return "zstd-compressed";
    case HOG_FILE_BZIP2: return "bzip2-compressed";
    case HOG_FILE_ZIP: return "a zip archive";
    case HOG_FILE_NUL: return "binary (it starts with a NUL byte)";
    }
    return "of an unknown kind";
}

hog_status hog_data_kind_check(enum hog_file_kind k, const char *name,
                               hog_err *err)
{
    bool is_stdin = strcmp(name, "<stdin>") == 0;
    switch (k) {
    case HOG_FILE_TEXT:
    case HOG_FILE_HGB:
    case HOG_FILE_GZIP:
    case HOG_FILE_XZ:
    case HOG_FILE_ZSTD:
        return HOG_OK;
    case HOG_FILE_BZIP2:
        /* The command that decompresses, keeping the original (a file),
         * or to standard output (a pipe). */
        if (is_stdin)
            return hog_errf(err, HOG_EFORMAT, "%s is %s, which hogtrain does "
                            "not read: decompress it first (bzip2 -dc FILE | "
                            "hogtrain ...)", name, hog_file_kind_name(k));
        return hog_errf(err, HOG_EFORMAT, "%s is %s, which hogtrain does not "
                        "read: decompress it first (bzip2 -dk %s)", name,
                        hog_file_kind_name(k), name);
    case HOG_FILE_ZIP:
        if (is_stdin)
            return hog_errf(err, HOG_EFORMAT, "%s is %s, which hogtrain does "
                            "not read: extract it first (unzip -p FILE | "
                            "hogtrain ...)", name, hog_file_kind_name(k));
        return hog_errf(err, HOG_EFORMAT, "%s is %s, which hogtrain does not "
                        "read: extract it first (unzip %s)", name,
                        hog_file_kind_name(k), name);
    case HOG_FILE_HGM:
    case HOG_FILE_LIBLINEAR:
        return hog_errf(err, HOG_EFORMAT, "%s is %s, not data", name,
                        hog_file_kind_name(k));
    case HOG_FILE_CKPT:
        return hog_errf(err, HOG_EFORMAT, "%s is %s, not data (hogtrain info "
                        "%s describes it; --resume %s continues its run)",
                        name, hog_file_kind_name(k), name, name);
    case HOG_FILE_NUL:
        return hog_errf(err, HOG_EFORMAT, "%s starts with a NUL byte: it is "
                        "binary, neither LIBSVM text nor a .hgb file", name);
    }
    return HOG_OK;
}

/* ---- how long a buffered line may be ------------------------------------------ */

uint64_t hog_line_max(const char **what)
{
    /* Test seam (docs/RELIABILITY.md), not a feature. */
    const char *t = getenv("HOGTRAIN_TEST_LINE_MAX");
    if (t && *t) {
        if (what)
            *what = "as HOGTRAIN_TEST_LINE_MAX sets it";
        return strtoull(t, NULL, 10);
    }
    /* The line buffered and its row parsed (about as large again) must fit
     * in what this process may still take: the machine's memory, the
     * address space where that is limited, the cgroup's limit. */
    const char *w;
    uint64_t have = hog_mem_available(&w);
    if (have == UINT64_MAX)
        have = UINT64_C(1) << 34, w = "(none could be read; 16 GiB assumed)";
    if (what)
        *what = w;
    return have / 2;
}

hog_status hog_line_too_long(const char *name, uint64_t line, uint64_t max,
                             const char *what, hog_err *err)
{
    bool mib = max >= (UINT64_C(1) << 20);
    return hog_errf(err, HOG_ERANGE,
                    "%s:%llu: a line longer than %llu %s without a newline, "
                    "the most one line may hold here (half the memory "
                    "available %s); is this really LIBSVM text?",
                    name, (unsigned long long)line,
                    (unsigned long long)(mib ? max >> 20 : max),
                    mib ? "MiB" : "bytes", what ? what : "");
}
