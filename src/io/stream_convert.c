/*
 * Streaming conversion: LIBSVM or Vowpal Wabbit text of any size to .hgb
 * in bounded memory (hashed indices where the text is hashed).
 *
 * The text (plain, or gzip, xz or zstd decompressed on the way) is read
 * ahead by a thread in windows of a few tens of MB, each cut after its
 * last newline (readahead.c), and each window is fed to one incremental
 * parser (parallel) while the next is read; its rows are taken out after
 * each window, the parser numbering lines and counting the hashing's
 * collisions over the whole file. Each window's rows are appended to the
 * output as chunks; the label summary and the feature count are merged
 * across windows exactly as hog_data_scan_labels would find them on the
 * whole data, so that the result reads like a .hgb written from memory.
 *
 * The .hgb header and chunk table come first in the file but are known
 * last. The writer leaves room for the largest table the input could need
 * (a hole: no disk space), writes the chunks after it, then closes the gap
 * with fallocate(FALLOC_FL_COLLAPSE_RANGE) (or, where the filesystem cannot,
 * by moving the chunks down in 8 MiB steps) and writes the table and the
 * header. All under a temporary name, renamed at the end.
 *
 * The layout is src/io/hgb_format.h's (docs/FORMATS.md); the
 * tests read every file this writes back through hgb.c's checks.
 */
#include "io/hgb_format.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


struct entry {
    uint64_t offset, first_row, rows, nnz;
};

struct writer {
    const char *path;
    hog_outfile out;
    int fd;
    uint64_t target;
    uint64_t reserve;   /* table bytes left room for */
    uint64_t pos;       /* where the next chunk goes */
    struct entry *tab;
    uint64_t n, cap;
    uint64_t rows, nnz, n_features;
    unsigned char *stage; /* one chunk, built before its write */
    uint64_t stage_cap;
    struct hog_label_scan labels; /* as hog_data_scan_labels finds them */
    hog_hashing hash;             /* the parser's, over the whole text */
};

static hog_status wfail(struct writer *w, hog_err *err, const char *what)
{
    return hog_errf(err, HOG_EIO, "%s: %s: %s", w->path, what, strerror(errno));
}

/* Appends rows [r0, r0 + r) of m as one chunk. */
static hog_status put_chunk(struct writer *w, const struct hog_csr *m,
                            uint64_t r0, uint64_t r, hog_err *err)
{
    uint64_t a = m->off[r0], z = m->off[r0 + r] - a;
    struct chunk_layout L = chunk_layout(HOG_HGB_VERSION, r, z, w->nnz);
    uint64_t pay = L.end;
    uint64_t bytes = ALIGN_UP(HOG_HGB_CHUNK_HEADER + pay);
    if (bytes > w->stage_cap) {
        free(w->stage);
        w->stage = aligned_alloc(HOG_HGB_ALIGN, bytes);
        w->stage_cap = w->stage ? bytes : 0;
        if (!w->stage)
            return hog_errf(err, HOG_ENOMEM, "%s: out of memory", w->path);
    }
    if (w->n == w->cap) {
        uint64_t nc = w->cap ? 2 * w->cap : 256;
        struct entry *t = realloc(w->tab, nc * sizeof *t);
        if (!t)
            return hog_errf(err, HOG_ENOMEM, "%s: out of memory", w->path);
        w->tab = t, w->cap = nc;
    }
    if (ALIGN_UP((w->n + 1) * TABLE_ENTRY) > w->reserve)
        return hog_errf(err, HOG_ERANGE, "%s: more chunks than the table "
                        "room left for them (%llu)", w->path,
                        (unsigned long long)(w->reserve / TABLE_ENTRY));
    unsigned char *ch = w->stage, *p = ch + HOG_HGB_CHUNK_HEADER;
    uint64_t *loc = (uint64_t *)p;
    for (uint64_t i = 0; i <= r; i++)
        loc[i] = m->off[r0 + i] - a;
    memcpy(p + L.y, m->y + r0, 4 * r);
    memset(p + L.y + 4 * r, 0, L.gap1);
    memcpy(p + L.idx, m->idx + a, 4 * z);
    memset(p + L.idx + 4 * z, 0, L.gap2);
    memcpy(p + L.val, m->val + a, 4 * z);
    memset(p + pay, 0, bytes - HOG_HGB_CHUNK_HEADER - pay);
    memset(ch, 0, HOG_HGB_CHUNK_HEADER);
    memcpy(ch + C_MAGIC, HOG_HGB_CHUNK_MAGIC, 4);
    put64(ch + C_INDEX, w->n);
    put64(ch + C_FIRST_ROW, w->rows);
    put64(ch + C_ROWS, r);
    put64(ch + C_NNZ, z);
    put64(ch + C_PAYLOAD, pay);
    put32(ch + C_PAYLOAD_CRC, hog_crc32c(0, p, bytes - HOG_HGB_CHUNK_HEADER));
    put32(ch + C_CRC, hog_crc32c(0, ch, C_CRC));
    int e;
    if (hog_pwrite_full(w->fd, ch, bytes, w->pos, &e) != bytes)
        return wfail(w, err, "write failed");
    w->tab[w->n++] = (struct entry){ w->pos, w->rows, r, z };
    w->pos += bytes;
    w->rows += r;
    w->nnz += z;
    return HOG_OK;
}

/* Appends every row of d as chunks of about w->target payload bytes (the
 * plan of hog_hgb_save_chunked: a row bigger than that is a chunk alone). */
static hog_status put_data(struct writer *w, const hog_data *d, hog_err *err)
{
    const struct hog_csr *m = &d->m;
    for (uint64_t i = 0; i < m->rows;) {
        uint64_t r = 0, z = 0;
        while (i + r < m->rows) {
            uint64_t rz = m->off[i + r + 1] - m->off[i + r];
            if (r > 0 && payload_bytes(r + 1, z + rz) > w->target)
                break;
            z += rz;
            r++;
        }
        hog_status st = put_chunk(w, m, i, r, err);
        if (st != HOG_OK)
            return st;
        i += r;
    }
    if (d->n_features > w->n_features)
        w->n_features = d->n_features;
    hog_label_scan_add(&w->labels, m->y, m->rows);
    return HOG_OK;
}

/* Moves [from, from + len) down to `to` (to < from), ascending. */
static bool move_down(int fd, uint64_t to, uint64_t from, uint64_t len)
{
    size_t step = 8u << 20;
    unsigned char *buf = malloc(step);
    if (!buf)
        return false;
    bool ok = true;
    int e;
    for (uint64_t done = 0; done < len && ok;) {
        size_t n = len - done < step ? (size_t)(len - done) : step;
        ok = hog_pread_full(fd, buf, n, from + done, &e) == n &&
             hog_pwrite_full(fd, buf, n, to + done, &e) == n;
        done += n;
    }
    free(buf);
    return ok;
}

static hog_status finish(struct writer *w, uint64_t src_size, int64_t src_mtime,
                         hog_err *err)
{
    uint64_t tbytes = ALIGN_UP(w->n * TABLE_ENTRY);
    uint64_t gap = w->reserve - tbytes, body = w->pos - (HDR_SIZE + w->reserve);
    if (gap > 0) {
        if (fallocate(w->fd, FALLOC_FL_COLLAPSE_RANGE, (off_t)(HDR_SIZE + tbytes),
                      (off_t)gap) != 0) {
            /* Not on this filesystem (or the gap reaches the end). */
            if (!move_down(w->fd, HDR_SIZE + tbytes, HDR_SIZE + w->reserve, body) ||
                ftruncate(w->fd, (off_t)(HDR_SIZE + tbytes + body)) != 0)
                return wfail(w, err, "cannot close the table's gap");
        }
        for (uint64_t k = 0; k < w->n; k++)
            w->tab[k].offset -= gap;
    }
    uint64_t file_size = HDR_SIZE + tbytes + body;
    unsigned char *table = calloc(1, tbytes ? tbytes : 1);
    unsigned char *hdr = calloc(1, HDR_SIZE);
    if (!table || !hdr) {
        free(table), free(hdr);
        return hog_errf(err, HOG_ENOMEM, "%s: out of memory", w->path);
    }
    for (uint64_t k = 0; k < w->n; k++) {
        table_entry_put(table + k * TABLE_ENTRY, w->tab[k].offset,
                        w->tab[k].first_row, w->tab[k].rows, w->tab[k].nnz);
    }
    /* The label summary of hog_data_scan_labels over all rows. */
    struct hog_hgb_info h = {
        .version = w->hash.bits ? HOG_HGB_VERSION_HASHED : HOG_HGB_VERSION,
        .rows = w->rows, .n_features = w->n_features, .nnz = w->nnz,
        .n_chunks = w->n, .src_size = src_size, .src_mtime = src_mtime,
        .file_size = file_size, .hash = w->hash
    };
    hog_label_scan_result(&w->labels, &h.labels, &h.label_pos, &h.label_neg,
                          &h.n_pos);
    header_put(hdr, &h, w->target, table, tbytes);
    int e;
    bool ok = hog_pwrite_full(w->fd, table, tbytes, HDR_SIZE, &e) == tbytes &&
              hog_pwrite_full(w->fd, hdr, HDR_SIZE, 0, &e) == HDR_SIZE;
    free(table), free(hdr);
    if (!ok)
        return wfail(w, err, "write failed");
    return HOG_OK;
}

/* ---- reading the text in windows ------------------------------------------------------ */

hog_status hog_svm_to_hgb_stream(const char *in, const char *out,
                                 const hog_load_opts *o, size_t window,
                                 uint64_t chunk_target, struct hog_convert_stats *cs,
                                 hog_err *err)
{
    hog_load_opts full; /* the caller's, with the fields it predates */
    hog_load_opts_take(o, &full);
    o = &full;
    if (window < 4096)
        window = 4096;
    if (chunk_target == 0)
        chunk_target = HOG_HGB_CHUNK_TARGET;
    struct hog_input src;
    hog_status st = hog_input_open(in, &src, err);
    if (st != HOG_OK)
        return st;
    const char *name = src.name;

    struct writer w;
    memset(&w, 0, sizeof w);
    w.path = out;
    w.target = chunk_target;
    hog_label_scan_init(&w.labels);
    w.n_features = o->n_features;
    struct hog_text_reader *r = NULL;
    struct hog_svm_parser *ps = NULL;
    uint64_t text = 0;
    if ((st = hog_input_sniff(&src, err)) != HOG_OK)
        goto done;
    st = src.kind == HOG_FILE_HGB
             ? hog_errf(err, HOG_EINVAL, "%s: already a .hgb file", name)
             : hog_data_kind_check(src.kind, name, err);
    if (st != HOG_OK)
        goto done;
    /* Room for the table: a window's chunks are at most its payload over
     * the target plus one, and a text byte makes at most 10 payload bytes
     * (an empty row "1\n": 2 bytes of text, 20 of payload). Unknown size
     * (a pipe, compressed text): room for 2^21 chunks, 8 TiB at 4 MiB
     * each. The room is the input's own size, also when it is a regular
     * file on standard input (whose size the header does not record). */
    bool sized = src.regular && src.kind == HOG_FILE_TEXT;
    uint64_t most = sized ? (10 * src.size) / chunk_target + src.size / window + 16
                          : UINT64_C(1) << 21;
    w.reserve = ALIGN_UP(most * TABLE_ENTRY);
    w.pos = HDR_SIZE + w.reserve;
    st = hog_outfile_open(&w.out, out, err);
    if (st != HOG_OK)
        goto done;
    if (hog_outfile_in_place(&w.out)) {
        /* /dev/null, a FIFO, standard output: no file to go back into */
        st = hog_errf(err, HOG_EINVAL, "%s: not a regular file: a .hgb is "
                      "written out of order (its table last), so it needs "
                      "one", out);
        goto done;
    }
    w.fd = fileno(w.out.f);
    /* The text read ahead (and decompressed) a window at a time, each
     * parsed (in parallel) by one parser, which numbers the lines and
     * counts the hashing's collisions over the whole text, and its rows
     * written out as chunks before the next. */
    if ((st = hog_svm_parser_create(name, o, &ps, err)) != HOG_OK ||
        (st = hog_text_reader_open(&src, window, &r, err)) != HOG_OK)
        goto done;
    for (;;) {
        const char *buf;
        size_t cut;
        if ((st = hog_text_reader_next(r, &buf, &cut, err)) != HOG_OK)
            goto done;
        if (cut == 0)
            break;
        text += cut;
        hog_data *d = NULL;
        if ((st = hog_svm_parser_feed(ps, buf, cut, err)) != HOG_OK ||
            (st = hog_svm_parser_take(ps, &d, err)) != HOG_OK)
            goto done;
        if (d && d->importance) {
            st = hog_errf(err, HOG_ENOTSUP,
                          "%s: its rows have importance weights, which a "
                          ".hgb file has no place for yet; train on the text "
                          "itself", name);
            hog_data_free(d);
            goto done;
        }
        if (d) /* NULL: a window of blank lines and comments */
            st = put_data(&w, d, err);
        hog_data_free(d);
        if (st != HOG_OK)
            goto done;
        if (cs)
            cs->windows++;
    }
    hog_format fmt;
    hog_svm_parser_hashing(ps, &w.hash, &fmt);
    if (w.rows == 0) {
        st = hog_errf(err, HOG_EPARSE, text ? "%s: no rows (only blank lines "
                      "and comments)" : "%s: empty file, no rows", name);
        goto done;
    }
    /* The source: the text's size (decompressed, from a compressed file:
     * what `xz -dk` would leave, with the same modification time). */
    uint64_t src_size = src.is_stdin ? 0 : text;
    int64_t src_mtime = src.is_stdin ? 0 : src.mtime;
    if ((st = finish(&w, src_size, src_mtime, err)) != HOG_OK)
        goto done;
    st = hog_outfile_commit(&w.out, err);
    if (st == HOG_OK && cs) {
        cs->rows = w.rows;
        cs->nnz = w.nnz;
        cs->n_features = w.n_features;
        cs->chunks = w.n;
        cs->window_bytes = hog_text_reader_buffer_bytes(r);
        cs->hash = w.hash;
        cs->format = fmt;
    }
done:
    hog_text_reader_close(r);
    hog_svm_parser_free(ps);
    hog_outfile_abort(&w.out); /* nothing once committed */
    hog_input_close(&src);
    free(w.tab);
    free(w.stage);
    return st;
}
