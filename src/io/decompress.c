/*
 * Compressed input: gzip (zlib), xz (liblzma) and zstd (libzstd) behind
 * one small table of functions, each fed the compressed bytes in pieces
 * and writing the text they hold. The file's magic chooses the decoder
 * (hog_file_kind, input.c); the reader thread (readahead.c) drives it.
 *
 * A file may hold several compressed units one after another, and all of
 * them are decoded, as zcat, xzcat and zstdcat do: gzip members (each
 * restarted on its magic), xz streams with their padding (liblzma's
 * LZMA_CONCATENATED) and zstd frames, skippable ones included (libzstd
 * runs on from frame to frame by itself). Every unit's own check is
 * verified (gzip's CRC-32 and length, xz's CRC-64 or SHA-256, a zstd
 * frame's checksum when it has one).
 *
 * Input that ends inside a unit is "truncated (unexpected end of input)",
 * never the text decoded so far: a cut-off file is an error naming the
 * file, not a silently short data set. So is anything the libraries call
 * corrupt, and bytes after the last gzip member that start no member.
 *
 * And the size of the text a file will give, where its format records it
 * (hog_decoded_size), so that a load can be weighed before it is decoded.
 */
#include "io/io.h"

#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

/* What one call of a backend's step did. */
enum step {
    STEP_MORE,  /* made progress or needs more input or room */
    STEP_END,   /* the last unit ended exactly with the input */
    STEP_NOMEM, /* the library could not allocate */
    STEP_FAIL   /* the data is bad: why[] says how ("truncated (...)") */
};

/* One piece of work: in[*in_pos..in_len) to out[*out_pos..out_cap). */
struct pipe_state {
    const unsigned char *in;
    size_t in_len, in_pos;
    char *out;
    size_t out_cap, out_pos;
    bool last; /* nothing follows in[in_len) */
};

struct backend {
    const char *what; /* "gzip data", in messages */
    void *(*open)(void);
    enum step (*step)(void *s, struct pipe_state *p, char *why, size_t whylen);
    void (*close)(void *s);
};

/* ---- gzip (zlib) ---------------------------------------------------------- */

struct gz {
    z_stream z;
    bool between; /* one member ended: the next must start with the magic */
};

static void *gz_open(void)
{
    struct gz *g = calloc(1, sizeof *g);
    /* 16 + MAX_WBITS: the gzip wrapper only (header, CRC-32, length). */
    if (g && inflateInit2(&g->z, 16 + MAX_WBITS) != Z_OK) {
        free(g);
        return NULL;
    }
    return g;
}

static enum step gz_step(void *s, struct pipe_state *p, char *why, size_t whylen)
{
    struct gz *g = s;
    if (g->between) {
        size_t left = p->in_len - p->in_pos;
        if (left == 0)
            return p->last ? STEP_END : STEP_MORE;
        if (left < 2 && !p->last)
            return STEP_MORE; /* the magic's second byte is still to come */
        if (left < 2 || p->in[p->in_pos] != 0x1F || p->in[p->in_pos + 1] != 0x8B) {
            snprintf(why, whylen, "followed by bytes that start no gzip "
                     "member (trailing garbage)");
            return STEP_FAIL;
        }
        inflateReset(&g->z);
        g->between = false;
    }
    /* zlib's counts are unsigned int: pieces above 4 GiB go in steps. */
    size_t in_left = p->in_len - p->in_pos, out_left = p->out_cap - p->out_pos;
    g->z.next_in = (unsigned char *)p->in + p->in_pos;
    g->z.avail_in = in_left > UINT_MAX ? UINT_MAX : (unsigned)in_left;
    g->z.next_out = (unsigned char *)p->out + p->out_pos;
    g->z.avail_out = out_left > UINT_MAX ? UINT_MAX : (unsigned)out_left;
    unsigned in0 = g->z.avail_in, out0 = g->z.avail_out;
    int r = inflate(&g->z, Z_NO_FLUSH);
    p->in_pos += in0 - g->z.avail_in;
    p->out_pos += out0 - g->z.avail_out;
    switch (r) {
    case Z_OK:
        return STEP_MORE;
    case Z_STREAM_END:
        g->between = true;
        return p->last && p->in_pos == p->in_len ? STEP_END : STEP_MORE;
    case Z_BUF_ERROR: /* no progress possible: more input, or more room */
        if (p->last && p->in_pos == p->in_len && out0 > 0) {
            snprintf(why, whylen, "truncated (unexpected end of input)");
            return STEP_FAIL;
        }
        return STEP_MORE;
    case Z_MEM_ERROR:
        return STEP_NOMEM;
    default: /* Z_DATA_ERROR, Z_NEED_DICT, Z_STREAM_ERROR */
        snprintf(why, whylen, "corrupt (%s)", g->z.msg ? g->z.msg : "bad data");
        return STEP_FAIL;
    }
}

static void gz_close(void *s)
{
    struct gz *g = s;
    inflateEnd(&g->z);
    free(g);
}

/* ---- xz (liblzma) --------------------------------------------------------- */

static void *xz_open(void)
{
    lzma_stream *x = malloc(sizeof *x);
    if (!x)
        return NULL;
    *x = (lzma_stream)LZMA_STREAM_INIT;
    /* No memory limit beyond the machine's: the dictionary is the file's. */
    if (lzma_stream_decoder(x, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) {
        free(x);
        return NULL;
    }
    return x;
}

static const char *xz_reason(lzma_ret r)
{
    switch (r) {
    case LZMA_MEMLIMIT_ERROR: return "too large for the memory allowed";
    case LZMA_FORMAT_ERROR: return "corrupt (not in the .xz format)";
    case LZMA_OPTIONS_ERROR: return "in a variant this liblzma cannot decode "
                                    "(unsupported options)";
    case LZMA_DATA_ERROR: return "corrupt (compressed data or check mismatch)";
    case LZMA_BUF_ERROR: return "truncated (unexpected end of input)";
    default: return "corrupt (liblzma error)";
    }
}

static enum step xz_step(void *s, struct pipe_state *p, char *why, size_t whylen)
{
    lzma_stream *x = s;
    x->next_in = p->in + p->in_pos;
    x->avail_in = p->in_len - p->in_pos;
    x->next_out = (uint8_t *)p->out + p->out_pos;
    x->avail_out = p->out_cap - p->out_pos;
    size_t in0 = x->avail_in, out0 = x->avail_out;
    /* LZMA_FINISH once the input is whole: only then may the decoder say
     * the last stream ended, or that the input ended inside one. */
    lzma_ret r = lzma_code(x, p->last ? LZMA_FINISH : LZMA_RUN);
    p->in_pos += in0 - x->avail_in;
    p->out_pos += out0 - x->avail_out;
    if (r == LZMA_OK)
        return STEP_MORE;
    if (r == LZMA_STREAM_END)
        return STEP_END;
    /* liblzma's "no progress" only means truncation when the input is
     * whole and there was room to write. */
    if (r == LZMA_BUF_ERROR && !(p->last && out0 > 0))
        return STEP_MORE;
    if (r == LZMA_MEM_ERROR)
        return STEP_NOMEM;
    snprintf(why, whylen, "%s", xz_reason(r));
    return STEP_FAIL;
}

static void xz_close(void *s)
{
    lzma_end(s);
    free(s);
}

/* ---- zstd (libzstd) ------------------------------------------------------- */

struct zs {
    ZSTD_DStream *d;
    bool in_frame; /* the input ends inside a frame unless the last
                      call finished one and flushed it */
};

static void *zs_open(void)
{
    struct zs *z = calloc(1, sizeof *z);
    if (!z)
        return NULL;
    if (!(z->d = ZSTD_createDStream()) || ZSTD_isError(ZSTD_initDStream(z->d))) {
        ZSTD_freeDStream(z->d);
        free(z);
        return NULL;
    }
    return z;
}

static enum step zs_step(void *s, struct pipe_state *p, char *why, size_t whylen)
{
    struct zs *z = s;
    ZSTD_inBuffer in = { p->in, p->in_len, p->in_pos };
    ZSTD_outBuffer out = { p->out, p->out_cap, p->out_pos };
    size_t in0 = in.pos, out0 = out.pos;
    size_t r = ZSTD_decompressStream(z->d, &out, &in);
    p->in_pos = in.pos;
    p->out_pos = out.pos;
    if (ZSTD_isError(r) && ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation)
        return STEP_NOMEM;
    if (ZSTD_isError(r)) {
        snprintf(why, whylen, "corrupt (%s)", ZSTD_getErrorName(r));
        return STEP_FAIL;
    }
    if (in.pos > in0 || out.pos > out0)
        z->in_frame = r != 0;
    if (p->last && p->in_pos == p->in_len) {
        if (!z->in_frame)
            return STEP_END;
        if (in.pos == in0 && out.pos == out0 && out0 < p->out_cap) {
            snprintf(why, whylen, "truncated (unexpected end of input)");
            return STEP_FAIL;
        }
    }
    return STEP_MORE;
}

static void zs_close(void *s)
{
    struct zs *z = s;
    ZSTD_freeDStream(z->d);
    free(z);
}

/* ---- the table ------------------------------------------------------------ */

static const struct backend *backend_of(enum hog_file_kind k)
{
    static const struct backend gz = { "gzip data", gz_open, gz_step, gz_close };
    static const struct backend xz = { "xz data", xz_open, xz_step, xz_close };
    static const struct backend zs = { "zstd data", zs_open, zs_step, zs_close };
    switch (k) {
    case HOG_FILE_GZIP: return &gz;
    case HOG_FILE_XZ: return &xz;
    case HOG_FILE_ZSTD: return &zs;
    default: return NULL;
    }
}

struct hog_decoder {
    const struct backend *be;
    void *s;
    const char *name;
    bool ended;
};

bool hog_decoder_supports(enum hog_file_kind k)
{
    return backend_of(k) != NULL;
}

hog_status hog_decoder_open(enum hog_file_kind k, const char *name,
                            struct hog_decoder **out, hog_err *err)
{
    const struct backend *be = backend_of(k);
    if (!be)
        return hog_errf(err, HOG_ENOTSUP, "%s is %s: hogtrain does not "
                        "decompress it", name, hog_file_kind_name(k));
    struct hog_decoder *d = calloc(1, sizeof *d);
    if (!d || !(d->s = be->open())) {
        free(d);
        return hog_errf(err, HOG_ENOMEM, "%s: out of memory for the %s "
                        "decoder", name, be->what);
    }
    d->be = be;
    d->name = name;
    *out = d;
    return HOG_OK;
}

hog_status hog_decoder_run(struct hog_decoder *d, const unsigned char *in,
                           size_t in_len, size_t *in_used, char *out,
                           size_t out_cap, size_t *out_used, bool last,
                           bool *end, hog_err *err)
{
    struct pipe_state p = { in, in_len, *in_used, out, out_cap, *out_used, last };
    enum step r = STEP_MORE;
    char why[256] = "";
    /* Until the output is full, or no step moves anything: more input is
     * needed, or (the input whole) the backend has said how it ended.
     * liblzma says "truncated" on the second call without progress; a
     * third is a backend that would never say it. */
    for (unsigned idle = 0; !d->ended && p.out_pos < p.out_cap;) {
        size_t i0 = p.in_pos, o0 = p.out_pos;
        r = d->be->step(d->s, &p, why, sizeof why);
        if (r != STEP_MORE)
            break;
        if (p.in_pos != i0 || p.out_pos != o0) {
            idle = 0;
        } else if (!last) {
            break;
        } else if (++idle == 3) {
            snprintf(why, sizeof why, "truncated (unexpected end of input)");
            r = STEP_FAIL;
            break;
        }
    }
    *in_used = p.in_pos;
    *out_used = p.out_pos;
    if (r == STEP_NOMEM)
        return hog_errf(err, HOG_ENOMEM, "%s: out of memory while "
                        "decompressing %s", d->name, d->be->what);
    if (r == STEP_FAIL)
        return hog_errf(err, HOG_ECORRUPT, "%s: %s is %s", d->name,
                        d->be->what, why);
    if (r == STEP_END)
        d->ended = true;
    *end = d->ended;
    return HOG_OK;
}

void hog_decoder_free(struct hog_decoder *d)
{
    if (!d)
        return;
    d->be->close(d->s);
    free(d);
}

/* ---- the size of the text, from what the formats record ------------------- */

/* gzip's trailer: the last member's length mod 2^32 (ISIZE). Raised by
 * 2^32 until it is at least the file's size (text does not shrink by
 * compressing), so a lower bound: a larger text or earlier members are
 * found as the text is read. */
static uint64_t gzip_size(int fd, uint64_t size)
{
    unsigned char t[4];
    int e;
    if (size < 18 || hog_pread_full(fd, t, 4, size - 4, &e) != 4)
        return 0;
    uint64_t n = (uint64_t)t[0] | (uint64_t)t[1] << 8 | (uint64_t)t[2] << 16 |
                 (uint64_t)t[3] << 24;
    while (n < size)
        n += UINT64_C(1) << 32;
    return n;
}

/* xz's index, at the end of each stream: every stream's uncompressed size,
 * walked from the last (with its padding) to the first. Exact. */
static uint64_t xz_size(int fd, uint64_t size)
{
    uint64_t pos = size, total = 0;
    while (pos > 0) {
        unsigned char b[LZMA_STREAM_HEADER_SIZE];
        int e;
        if (pos < 2 * LZMA_STREAM_HEADER_SIZE ||
            hog_pread_full(fd, b, sizeof b, pos - sizeof b, &e) != sizeof b)
            return 0;
        if (!memcmp(b + 8, "\0\0\0\0", 4)) { /* stream padding */
            pos -= 4;
            continue;
        }
        lzma_stream_flags fl;
        if (lzma_stream_footer_decode(&fl, b) != LZMA_OK ||
            fl.backward_size > pos - 2 * LZMA_STREAM_HEADER_SIZE ||
            fl.backward_size > (UINT64_C(1) << 26))
            return 0;
        unsigned char *ib = malloc((size_t)fl.backward_size);
        lzma_index *ix = NULL;
        /* An index's memory follows the record count it claims, not its
         * size: a forged count asked for 3 GB (fuzz_compressed). 64 MiB
         * holds millions of blocks' records; past it the size is unknown. */
        uint64_t limit = UINT64_C(1) << 26;
        size_t used = 0;
        bool ok = ib && hog_pread_full(fd, ib, (size_t)fl.backward_size,
                                       pos - sizeof b - fl.backward_size,
                                       &e) == fl.backward_size &&
                  lzma_index_buffer_decode(&ix, &limit, NULL, ib, &used,
                                           (size_t)fl.backward_size) == LZMA_OK;
        free(ib);
        if (!ok)
            return 0;
        uint64_t stream = lzma_index_stream_size(ix);
        total += lzma_index_uncompressed_size(ix);
        lzma_index_end(ix, NULL);
        if (stream > pos)
            return 0;
        pos -= stream;
    }
    return total;
}

/* zstd's frame headers: the content size each frame declares (frames
 * written by a stream, as `zstd` reading a pipe writes them, declare
 * none). Exact when every frame declares it. */
static uint64_t zstd_size(int fd, uint64_t size)
{
    if (size > SIZE_MAX)
        return 0;
    void *m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED)
        return 0;
    const unsigned char *p = m;
    size_t left = (size_t)size;
    uint64_t total = 0;
    while (left > 0) {
        /* a skippable frame's content size is 0 */
        unsigned long long n = ZSTD_getFrameContentSize(p, left);
        size_t fr = ZSTD_findFrameCompressedSize(p, left);
        if (n == ZSTD_CONTENTSIZE_UNKNOWN || n == ZSTD_CONTENTSIZE_ERROR ||
            ZSTD_isError(fr) || fr > left) {
            total = 0;
            break;
        }
        total += n;
        p += fr;
        left -= fr;
    }
    munmap(m, (size_t)size);
    return total;
}

uint64_t hog_decoded_size(int fd, enum hog_file_kind k, uint64_t size)
{
    switch (k) {
    case HOG_FILE_GZIP: return gzip_size(fd, size);
    case HOG_FILE_XZ: return xz_size(fd, size);
    case HOG_FILE_ZSTD: return zstd_size(fd, size);
    default: return 0;
    }
}
