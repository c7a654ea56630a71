/*
 * The .hgb binary cache: a header, a chunk table, then self-checking
 * chunks of whole rows, each at a 4 KiB-aligned offset (ready for O_DIRECT
 * and for a streamer that reads one chunk at a time). The byte layout is in
 * docs/FORMATS.md; every byte of the file, padding included, is covered by
 * a CRC32C, so any single flipped byte is detected.
 *
 * Loading puts each chunk straight into the final arrays (row offsets,
 * labels, indices, values): in a version 2 file the whole pages of its
 * indices and values are mapped from the file (the indices only under a
 * read lease, hgb_lease.c), the rest is read with preadv; then every byte
 * goes through the chunk's CRC and the local row offsets are rebased
 * (details above load_chunk).
 */
#include "io/hgb_format.h"
#include "io/hgb_lease.h"

#include "core/forkjoin.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define A64(x) (((size_t)(x) + 63) & ~(size_t)63)

bool hog_hgb_sniff(const void *head, size_t len)
{
    return len >= 8 && memcmp(head, HOG_HGB_MAGIC, 8) == 0;
}

/* ---- writing ---------------------------------------------------------------- */

static const unsigned char zeros[HOG_HGB_ALIGN];

struct plan {
    uint64_t first_row, rows, nnz;
};

static bool wr(FILE *f, const void *p, size_t n)
{
    return n == 0 || fwrite(p, 1, n, f) == n;
}

hog_status hog_hgb_save_version(const hog_data *d, const char *path,
                                uint64_t src_size, int64_t src_mtime,
                                uint64_t target, uint32_t version, hog_err *err)
{
    const struct hog_csr *m = &d->m;
    if (version < 1 || version > HOG_HGB_VERSION)
        return hog_errf(err, HOG_EINVAL, "%s: cannot write .hgb version %u", path,
                        version);
    if (d->hash.bits && version < 2)
        return hog_errf(err, HOG_EINVAL, "%s: hashed features need .hgb "
                        "version %u, not %u", path, HOG_HGB_VERSION_HASHED,
                        version);
    if (d->hash.bits)
        version = HOG_HGB_VERSION_HASHED; /* version 2's layout, and the hashing */
    /* Plan the chunks: runs of whole rows of at most `target` payload bytes
     * (a row bigger than that gets a chunk of its own). */
    uint64_t cap = 16, n = 0;
    struct plan *pl = malloc(cap * sizeof *pl);
    if (!pl)
        return hog_errf(err, HOG_ENOMEM, "%s: out of memory", path);
    uint64_t max_rows = 0;
    for (uint64_t i = 0; i < m->rows;) {
        uint64_t r = 0, z = 0;
        while (i + r < m->rows) {
            uint64_t rz = m->off[i + r + 1] - m->off[i + r];
            if (r > 0 && payload_bytes(r + 1, z + rz) > target)
                break;
            z += rz;
            r++;
        }
        if (n == cap) {
            struct plan *q = realloc(pl, 2 * cap * sizeof *pl);
            if (!q) {
                free(pl);
                return hog_errf(err, HOG_ENOMEM, "%s: out of memory", path);
            }
            pl = q, cap *= 2;
        }
        pl[n++] = (struct plan){ i, r, z };
        max_rows = r > max_rows ? r : max_rows;
        i += r;
    }
    uint64_t table_bytes = ALIGN_UP(n * TABLE_ENTRY);
    unsigned char *table = calloc(1, table_bytes ? table_bytes : 1);
    uint64_t *loc = malloc((max_rows + 1) * sizeof *loc);
    unsigned char *hdr = calloc(1, HDR_SIZE);
    if (!table || !loc || !hdr) {
        free(pl), free(table), free(loc), free(hdr);
        return hog_errf(err, HOG_ENOMEM, "%s: out of memory", path);
    }
    uint64_t pos = HDR_SIZE + table_bytes;
    for (uint64_t k = 0; k < n; k++) {
        table_entry_put(table + k * TABLE_ENTRY, pos, pl[k].first_row,
                        pl[k].rows, pl[k].nnz);
        struct chunk_layout L = chunk_layout(version, pl[k].rows, pl[k].nnz,
                                             m->off[pl[k].first_row]);
        pos += ALIGN_UP(HOG_HGB_CHUNK_HEADER + L.end);
    }
    struct hog_hgb_info h = {
        .version = version, .rows = m->rows, .n_features = d->n_features,
        .nnz = m->nnz, .n_chunks = n, .src_size = src_size,
        .src_mtime = src_mtime, .labels = d->labels,
        .label_pos = d->label_pos, .label_neg = d->label_neg,
        .n_pos = d->n_pos, .file_size = pos, .hash = d->hash
    };
    header_put(hdr, &h, target, table, table_bytes);

    hog_outfile o;
    hog_status st = hog_outfile_open(&o, path, err);
    if (st != HOG_OK)
        goto out;
    FILE *f = o.f;
    bool ok = wr(f, hdr, HDR_SIZE) && wr(f, table, table_bytes);
    for (uint64_t k = 0; k < n && ok; k++) {
        uint64_t r = pl[k].rows, z = pl[k].nnz, a = m->off[pl[k].first_row];
        for (uint64_t i = 0; i <= r; i++)
            loc[i] = m->off[pl[k].first_row + i] - a;
        const float *y = m->y + pl[k].first_row;
        const uint32_t *idx = m->idx + a;
        const float *val = m->val + a;
        struct chunk_layout L = chunk_layout(version, r, z, a);
        uint64_t pay = L.end;
        uint64_t pad = ALIGN_UP(HOG_HGB_CHUNK_HEADER + pay) - HOG_HGB_CHUNK_HEADER - pay;
        uint32_t c = hog_crc32c(0, loc, (r + 1) * 8);
        c = hog_crc32c(c, y, r * 4);
        c = hog_crc32c(c, zeros, L.gap1);
        c = hog_crc32c(c, idx, z * 4);
        c = hog_crc32c(c, zeros, L.gap2);
        c = hog_crc32c(c, val, z * 4);
        c = hog_crc32c(c, zeros, pad);
        unsigned char ch[HOG_HGB_CHUNK_HEADER] = { 0 };
        memcpy(ch + C_MAGIC, HOG_HGB_CHUNK_MAGIC, 4);
        put64(ch + C_INDEX, k);
        put64(ch + C_FIRST_ROW, pl[k].first_row);
        put64(ch + C_ROWS, r);
        put64(ch + C_NNZ, z);
        put64(ch + C_PAYLOAD, pay);
        put32(ch + C_PAYLOAD_CRC, c);
        put32(ch + C_CRC, hog_crc32c(0, ch, C_CRC));
        ok = wr(f, ch, sizeof ch) && wr(f, loc, (r + 1) * 8) &&
             wr(f, y, r * 4) && wr(f, zeros, L.gap1) && wr(f, idx, z * 4) &&
             wr(f, zeros, L.gap2) && wr(f, val, z * 4) && wr(f, zeros, pad);
    }
    if (!ok) {
        int e = errno;
        hog_outfile_abort(&o);
        st = hog_errf(err, HOG_EIO, "%s: write failed: %s (nothing written)",
                      path, strerror(e));
        goto out;
    }
    st = hog_outfile_commit(&o, err);
out:
    free(pl), free(table), free(loc), free(hdr);
    return st;
}

hog_status hog_hgb_save_chunked(const hog_data *d, const char *path,
                                uint64_t src_size, int64_t src_mtime,
                                uint64_t target, hog_err *err)
{
    return hog_hgb_save_version(d, path, src_size, src_mtime, target,
                                HOG_HGB_VERSION, err);
}

hog_status hog_hgb_save(const hog_data *d, const char *path, uint64_t src_size,
                        int64_t src_mtime, hog_err *err)
{
    return hog_hgb_save_chunked(d, path, src_size, src_mtime,
                                HOG_HGB_CHUNK_TARGET, err);
}

/* ---- reading the header and the table ------------------------------------------ */

/* The chunk whose bytes end past `size` (the first cut one). */
static uint64_t cut_chunk(const struct hog_hgb_info *in, uint64_t size)
{
    for (uint64_t k = 0; k < in->n_chunks; k++)
        if (in->chunks[k].offset + in->chunks[k].bytes > size)
            return k;
    return in->n_chunks;
}

/* The header's label summary is one hog_data_scan_labels can find: two
 * finite float labels, the larger positive, no more positive rows than
 * rows; real labels with no positive count. Checked at open, so that the
 * loader and the streamer both refuse a summary no data can have. */
static bool summary_possible(const struct hog_hgb_info *in)
{
    double p = in->label_pos, n = in->label_neg;
    if (in->labels == HOG_LABELS_REAL)
        return in->n_pos == 0;
    return isfinite(p) && isfinite(n) && (double)(float)p == p &&
           (double)(float)n == n && p > n && in->n_pos <= in->rows;
}

/* Whether every label of a chunk is the header's positive or negative one
 * (binary files; real ones have nothing to check per chunk); adds the
 * positives to *n_pos. The loader and the streamer check each chunk so. */
static bool chunk_labels_fit(const struct hog_hgb_info *in, const float *y,
                             uint64_t rows, uint64_t *n_pos)
{
    if (in->labels != HOG_LABELS_BINARY)
        return true;
    float pos = (float)in->label_pos, neg = (float)in->label_neg;
    uint64_t np = 0, other = 0;
    for (uint64_t i = 0; i < rows; i++) {
        np += y[i] == pos;
        other += (y[i] != pos) & (y[i] != neg);
    }
    *n_pos += np;
    return other == 0;
}

hog_status hog_hgb_labels_match(const struct hog_hgb_info *in,
                                enum hog_label_kind kind, double pos,
                                double neg, uint64_t n_pos, const char *name,
                                hog_err *err)
{
    if (kind == in->labels && n_pos == in->n_pos &&
        (kind != HOG_LABELS_BINARY ||
         (pos == in->label_pos && neg == in->label_neg)))
        return HOG_OK;
    return hog_errf(err, HOG_ECORRUPT,
                    "%s: the labels disagree with the header's label summary",
                    name);
}

/* A file that is not a .hgb, named for what its magic says it is; else
 * "name: not a .hgb file (why)". Compressed text is data, but not one to
 * read in place: convert makes the cache from it. */
static hog_status not_hgb(const unsigned char *head, size_t n, const char *name,
                          const char *why, hog_err *err)
{
    enum hog_file_kind k = hog_file_kind(head, n);
    if (hog_decoder_supports(k)) {
        const char *dot = strrchr(name, '.');
        int stem = dot && dot != name && strchr(dot, '/') == NULL &&
                   (!strcmp(dot, ".gz") || !strcmp(dot, ".xz") ||
                    !strcmp(dot, ".zst") || !strcmp(dot, ".zstd"))
                       ? (int)(dot - name) : (int)strlen(name);
        return hog_errf(err, HOG_EFORMAT, "%s is %s, not a .hgb file (make "
                        "one with: hogtrain convert %s %.*s.hgb)", name,
                        hog_file_kind_name(k), name, stem, name);
    }
    hog_status st = hog_data_kind_check(k, name, err);
    return st != HOG_OK ? st : hog_errf(err, HOG_EFORMAT,
                                        "%s: not a .hgb file (%s)", name, why);
}

static hog_status read_info(int fd, const char *name, struct hog_hgb_info *in,
                            hog_err *err)
{
    memset(in, 0, sizeof *in);
    in->fd = -1;
    struct stat sb;
    if (fstat(fd, &sb) != 0)
        return hog_errf(err, HOG_EIO, "%s: cannot stat: %s", name, strerror(errno));
    if (!S_ISREG(sb.st_mode)) {
        /* A device or a pipe: its size says nothing; its first bytes may
         * still say what it is (/dev/zero). */
        unsigned char head[HOG_SNIFF_BYTES];
        ssize_t k = pread(fd, head, sizeof head, 0);
        return not_hgb(head, k > 0 ? (size_t)k : 0, name,
                       "not even a regular file", err);
    }
    uint64_t size = (uint64_t)sb.st_size;
    unsigned char hdr[HDR_SIZE];
    size_t got = size < HDR_SIZE ? (size_t)size : HDR_SIZE;
    int rerr;
    if (hog_pread_full(fd, hdr, got, 0, &rerr) != got)
        return hog_errf(err, HOG_EIO, "%s: cannot read: %s", name,
                        rerr ? strerror(rerr) : "short read");
    if (!hog_hgb_sniff(hdr, got)) {
        /* Say what it is when that can be told (xz, a model, ...). */
        return not_hgb(hdr, got, name, "bad magic", err);
    }
    if (got < 12)
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: truncated .hgb header (%llu bytes)", name,
                        (unsigned long long)size);
    uint32_t ver = get32(hdr + H_VERSION);
    if (ver > HOG_HGB_VERSION_READ)
        return hog_errf(err, HOG_EFORMAT,
                        "%s: .hgb format version %u is newer than this hogtrain reads (%u)",
                        name, ver, HOG_HGB_VERSION_READ);
    if (got < HDR_SIZE)
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: truncated .hgb header (%llu bytes of %u)", name,
                        (unsigned long long)size, HDR_SIZE);
    if (hog_crc32c(0, hdr, H_CRC) != get32(hdr + H_CRC))
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: .hgb header checksum mismatch (offset 0)", name);
    /* The magic and a sealed header, but fields no writer makes: the file
     * is a damaged .hgb (not text to convert, not a newer format). */
    if (ver == 0)
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: a damaged .hgb file: format version 0 is not valid",
                        name);
    if (get32(hdr + H_HDRSIZE) != HDR_SIZE)
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: a damaged .hgb file: its header says it is %u "
                        "bytes long, but a version %u header is %u bytes",
                        name, get32(hdr + H_HDRSIZE), ver, HDR_SIZE);
    in->version = ver;
    in->rows = get64(hdr + H_ROWS);
    in->n_features = get64(hdr + H_FEATURES);
    in->nnz = get64(hdr + H_NNZ);
    in->n_chunks = get64(hdr + H_CHUNKS);
    in->src_size = get64(hdr + H_SRC_SIZE);
    in->src_mtime = (int64_t)get64(hdr + H_SRC_MTIME);
    uint32_t lk = get32(hdr + H_LABELS);
    memcpy(&in->label_pos, hdr + H_LABEL_POS, 8);
    memcpy(&in->label_neg, hdr + H_LABEL_NEG, 8);
    in->n_pos = get64(hdr + H_NPOS);
    in->file_size = get64(hdr + H_FILE_SIZE);
    uint64_t toff = get64(hdr + H_TABLE_OFF), tbytes = get64(hdr + H_TABLE_BYTES);
    /* Every declared size is checked against the file before use. */
    if (lk > HOG_LABELS_REAL || toff != HDR_SIZE ||
        in->file_size > (UINT64_C(1) << 56) || /* no size sum can overflow */
        in->n_chunks > in->file_size / HOG_HGB_ALIGN ||
        tbytes != ALIGN_UP(in->n_chunks * TABLE_ENTRY) ||
        in->file_size < HDR_SIZE + tbytes)
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: inconsistent .hgb header (offset 0)", name);
    in->labels = (enum hog_label_kind)lk;
    memset(&in->hash, 0, sizeof in->hash);
    if (ver >= HOG_HGB_VERSION_HASHED) {
        in->hash.bits = get32(hdr + H_HASH_BITS);
        in->hash.seed = get32(hdr + H_HASH_SEED);
        in->hash.collisions = get64(hdr + H_HASH_COLLISIONS);
        in->hash.merged = get64(hdr + H_HASH_MERGED);
        if (in->hash.bits < 1 || in->hash.bits > HOG_HASH_BITS_MAX ||
            in->n_features < (UINT64_C(1) << in->hash.bits))
            return hog_errf(err, HOG_ECORRUPT,
                            "%s: a damaged .hgb file: its features are "
                            "hashed with %u bits, which %llu features "
                            "cannot be", name, in->hash.bits,
                            (unsigned long long)in->n_features);
    }
    if (in->n_features > HOG_MAX_FEATURES)
        return hog_errf(err, HOG_ERANGE, "%s: %llu features, more than "
                        "hogtrain supports (%llu)", name,
                        (unsigned long long)in->n_features,
                        (unsigned long long)HOG_MAX_FEATURES);
    if (!summary_possible(in))
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: a damaged .hgb file: its label summary is "
                        "impossible (%s labels, positive %g, negative %g, "
                        "%llu of %llu rows positive)", name,
                        lk == HOG_LABELS_BINARY ? "two" : "real", in->label_pos,
                        in->label_neg, (unsigned long long)in->n_pos,
                        (unsigned long long)in->rows);
    if (size < HDR_SIZE + tbytes)
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: truncated: the chunk table at offset %u ends past "
                        "the end of the file (%llu bytes of %llu)",
                        name, HDR_SIZE, (unsigned long long)size,
                        (unsigned long long)in->file_size);
    unsigned char *tab = malloc(tbytes ? tbytes : 1);
    in->chunks = calloc(in->n_chunks ? in->n_chunks : 1, sizeof *in->chunks);
    if (!tab || !in->chunks) {
        free(tab);
        hog_hgb_info_close(in);
        return hog_errf(err, HOG_ENOMEM, "%s: out of memory", name);
    }
    hog_status st = HOG_OK;
    if (hog_pread_full(fd, tab, tbytes, toff, &rerr) != tbytes) {
        st = hog_errf(err, HOG_EIO, "%s: cannot read the chunk table", name);
        goto fail;
    }
    if (hog_crc32c(0, tab, tbytes) != get32(hdr + H_TABLE_CRC)) {
        st = hog_errf(err, HOG_ECORRUPT,
                      "%s: chunk table checksum mismatch (offset %u)", name, HDR_SIZE);
        goto fail;
    }
    uint64_t pos = HDR_SIZE + tbytes, row = 0, nz = 0, maxb = 0;
    for (uint64_t k = 0; k < in->n_chunks; k++) {
        const unsigned char *e = tab + k * TABLE_ENTRY;
        struct hog_hgb_chunk *c = &in->chunks[k];
        c->offset = get64(e);
        c->first_row = get64(e + 8);
        c->rows = get64(e + 16);
        c->nnz = get64(e + 24);
        c->first_nnz = nz;
        uint64_t limit = in->file_size / 4;
        if (c->offset != pos || c->first_row != row || c->rows == 0 ||
            c->rows > limit || c->nnz > limit) {
            st = hog_errf(err, HOG_ECORRUPT,
                          "%s: chunk table entry %llu is inconsistent (offset %u)",
                          name, (unsigned long long)k, HDR_SIZE);
            goto fail;
        }
        c->bytes = ALIGN_UP(HOG_HGB_CHUNK_HEADER +
                            chunk_layout(ver, c->rows, c->nnz, nz).end);
        maxb = c->bytes > maxb ? c->bytes : maxb;
        pos += c->bytes, row += c->rows, nz += c->nnz;
        if (pos > in->file_size) {
            st = hog_errf(err, HOG_ECORRUPT,
                          "%s: chunk %llu ends past the declared file size",
                          name, (unsigned long long)k);
            goto fail;
        }
    }
    if (pos != in->file_size || row != in->rows || nz != in->nnz) {
        st = hog_errf(err, HOG_ECORRUPT,
                      "%s: chunk table does not add up to the header's sizes",
                      name);
        goto fail;
    }
    in->max_chunk_bytes = maxb;
    if (size < in->file_size) {
        uint64_t k = cut_chunk(in, size);
        st = hog_errf(err, HOG_ECORRUPT,
                      "%s: truncated in chunk %llu at offset %llu (%llu bytes, "
                      "the header says %llu)",
                      name, (unsigned long long)k,
                      (unsigned long long)in->chunks[k].offset,
                      (unsigned long long)size, (unsigned long long)in->file_size);
        goto fail;
    }
    if (size > in->file_size) {
        st = hog_errf(err, HOG_ECORRUPT,
                      "%s: %llu unexpected bytes after the last chunk (offset %llu)",
                      name, (unsigned long long)(size - in->file_size),
                      (unsigned long long)in->file_size);
        goto fail;
    }
    free(tab);
    return HOG_OK;
fail:
    free(tab);
    hog_hgb_info_close(in);
    return st;
}

hog_status hog_hgb_open_info(const char *path, struct hog_hgb_info *info,
                             hog_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        memset(info, 0, sizeof *info);
        info->fd = -1;
        return hog_errf(err, HOG_EIO, "%s: cannot open: %s", path, strerror(errno));
    }
    hog_status st = read_info(fd, path, info, err);
    if (st != HOG_OK) {
        close(fd);
        return st;
    }
    info->fd = fd;
    return HOG_OK;
}

void hog_hgb_info_close(struct hog_hgb_info *info)
{
    if (info->fd >= 0)
        close(info->fd);
    info->fd = -1;
    free(info->chunks);
    info->chunks = NULL;
}

/* ---- checking a chunk ------------------------------------------------------------ */

static hog_status check_chunk_header(const struct hog_hgb_info *in, uint64_t k,
                                     const unsigned char *ch, const char *name,
                                     uint32_t *payload_crc, hog_err *err)
{
    const struct hog_hgb_chunk *c = &in->chunks[k];
    if (memcmp(ch + C_MAGIC, HOG_HGB_CHUNK_MAGIC, 4) != 0 ||
        hog_crc32c(0, ch, C_CRC) != get32(ch + C_CRC) ||
        get64(ch + C_INDEX) != k || get64(ch + C_FIRST_ROW) != c->first_row ||
        get64(ch + C_ROWS) != c->rows || get64(ch + C_NNZ) != c->nnz ||
        get64(ch + C_PAYLOAD) !=
            chunk_layout(in->version, c->rows, c->nnz, c->first_nnz).end)
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: chunk %llu at offset %llu: bad chunk header", name,
                        (unsigned long long)k, (unsigned long long)c->offset);
    *payload_crc = get32(ch + C_PAYLOAD_CRC);
    return HOG_OK;
}

static hog_status chunk_bad(const struct hog_hgb_info *in, uint64_t k,
                            const char *name, const char *what, hog_err *err)
{
    return hog_errf(err, HOG_ECORRUPT, "%s: chunk %llu at offset %llu: %s", name,
                    (unsigned long long)k,
                    (unsigned long long)in->chunks[k].offset, what);
}

static bool idx_in_range(const uint32_t *idx, uint64_t n, uint64_t nf)
{
    uint32_t mx = 0;
    for (uint64_t i = 0; i < n; i++)
        mx = idx[i] > mx ? idx[i] : mx;
    return n == 0 || (uint64_t)mx < nf;
}

hog_status hog_hgb_chunk_verify(const struct hog_hgb_info *in, uint64_t k,
                                const void *buf, const char *name,
                                struct hog_csr *m, hog_err *err)
{
    if (k >= in->n_chunks)
        return hog_errf(err, HOG_EINVAL, "%s: no chunk %llu", name,
                        (unsigned long long)k);
    const struct hog_hgb_chunk *c = &in->chunks[k];
    const unsigned char *b = buf;
    uint32_t want = 0;
    hog_status st = check_chunk_header(in, k, b, name, &want, err);
    if (st != HOG_OK)
        return st;
    if (hog_crc32c(0, b + HOG_HGB_CHUNK_HEADER, c->bytes - HOG_HGB_CHUNK_HEADER) != want)
        return chunk_bad(in, k, name, "checksum mismatch", err);
    const unsigned char *p = b + HOG_HGB_CHUNK_HEADER;
    struct chunk_layout L = chunk_layout(in->version, c->rows, c->nnz, c->first_nnz);
    const uint64_t *off = (const uint64_t *)p;
    const float *y = (const float *)(p + L.y);
    const uint32_t *idx = (const uint32_t *)(p + L.idx);
    const float *val = (const float *)(p + L.val);
    if (off[0] != 0 || off[c->rows] != c->nnz)
        return chunk_bad(in, k, name, "bad row offsets", err);
    for (uint64_t i = 0; i < c->rows; i++)
        if (off[i + 1] < off[i])
            return chunk_bad(in, k, name, "bad row offsets", err);
    if (!idx_in_range(idx, c->nnz, in->n_features))
        return chunk_bad(in, k, name, "feature index beyond the header's count", err);
    uint64_t np = 0;
    if (!chunk_labels_fit(in, y, c->rows, &np)) {
        char what[160];
        snprintf(what, sizeof what, "a label is neither of the two the "
                 "header's label summary declares (%g and %g)", in->label_pos,
                 in->label_neg);
        return chunk_bad(in, k, name, what, err);
    }
    *m = (struct hog_csr){ c->rows, c->nnz, off, y, idx, val, NULL };
    return HOG_OK;
}

/* ---- loading the whole file -------------------------------------------------------- */

/*
 * Each thread loads a contiguous run of chunks into the final arrays: one
 * anonymous mapping holding the row offsets, labels, indices and values,
 * each array starting on a page. A chunk's bytes arrive in file order as
 * segments: most are read with preadv straight into place (one copy, from
 * the page cache), and in a version 2 file the whole pages of its indices
 * and values are instead mapped from the file (MAP_PRIVATE | MAP_FIXED
 * over the anonymous pages): no copy, no fresh memory to fault in and
 * zero, the page cache's own pages. Only the partial pages at the ends of
 * each chunk's arrays are read. Then every byte of the chunk, wherever it
 * landed, goes through its CRC32C, exactly as in the file.
 *
 * The indices are mapped only while the file's read lease is held
 * (hgb_lease.c): a mapped page stays the page cache's until written, and
 * without the lease another program rewriting the file in place after
 * the range check could turn an index into a write past the weights. No
 * lease, and the indices are read; mapped values can only change the
 * model.
 */

struct loader {
    const struct hog_hgb_info *in;
    const char *name;
    uint64_t k0, k1;          /* chunks [k0, k1) */
    uint64_t *off;            /* final arrays */
    float *y, *val;
    uint32_t *idx;
    bool map_idx, map_val;    /* map whole pages of idx, val from the file */
    bool labels_ok;           /* every label is the header's pos or neg */
    uint64_t n_pos;           /* labels equal to the header's pos */
    hog_status status;
    hog_err err;
} __attribute__((aligned(HOG_CACHELINE)));

#define PAGE_DOWN(x) ((x) & ~(uintptr_t)(HOG_HGB_ALIGN - 1))
#define PAGE_UP(x) PAGE_DOWN((x) + HOG_HGB_ALIGN - 1)

/* A run of a chunk's bytes, in file order, and where it lands. */
struct seg {
    void *p;
    uint64_t len;
    bool map; /* whole pages, mapped from the file */
};

#define MAX_SEGS 16

/* Adds the segments of one array of `len` bytes landing at dst: in map
 * mode its whole pages as one mapped segment between the partial ends. */
static int add_array(struct seg *s, int n, void *dst, uint64_t len, bool map)
{
    uintptr_t a = (uintptr_t)dst, e = a + len;
    uintptr_t ma = PAGE_UP(a), me = PAGE_DOWN(e);
    if (!map || me <= ma) {
        s[n++] = (struct seg){ dst, len, false };
        return n;
    }
    if (ma > a)
        s[n++] = (struct seg){ dst, ma - a, false };
    s[n++] = (struct seg){ (void *)ma, me - ma, true };
    if (e > me)
        s[n++] = (struct seg){ (void *)me, e - me, false };
    return n;
}

/* Maps [p, p + len) from the file at `at` over the anonymous pages; false
 * (and the pages anonymous again) where the kernel refuses. */
static bool map_pages(int fd, void *p, uint64_t len, uint64_t at)
{
    if (at % HOG_HGB_ALIGN == 0) {
        void *q = mmap(p, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED,
                       fd, (off_t)at);
        if (q == p) {
            hog_populate(p, len, false);
            return true;
        }
    }
    /* A failed MAP_FIXED may have unmapped the range: make it memory again
     * (should that fail too, the read into it reports the error). */
    mmap(p, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
         -1, 0);
    return false;
}

/* Reads or maps the segments [0, n) from file offset `at`. */
static bool fetch(int fd, struct seg *s, int n, uint64_t at)
{
    struct iovec iov[MAX_SEGS];
    int ni = 0, e;
    uint64_t pos = at, rd = at;
    size_t want = 0;
    for (int i = 0; i <= n; i++) {
        bool flush = i == n || s[i].map;
        if (flush && ni > 0) {
            if (hog_preadv_full(fd, iov, ni, rd, &e) != want)
                return false;
            ni = 0;
            want = 0;
        }
        if (i == n)
            break;
        if (s[i].map && !map_pages(fd, s[i].p, s[i].len, pos))
            s[i].map = false; /* read it instead */
        if (!s[i].map && s[i].len > 0) {
            if (ni == 0)
                rd = pos;
            iov[ni++] = (struct iovec){ s[i].p, s[i].len };
            want += s[i].len;
        }
        pos += s[i].len;
    }
    return true;
}

/* Indices per CRC-then-range-check step: 72 KiB, three of the CRC's
 * 3 x 8 KiB steps, small enough to stay in L2 between the two. */
#define IDX_PIECE 18432

static uint32_t max_u32(const uint32_t *v, uint64_t n, uint32_t mx)
{
    for (uint64_t i = 0; i < n; i++)
        mx = v[i] > mx ? v[i] : mx;
    return mx;
}

static hog_status load_chunk(struct loader *L, uint64_t k)
{
    const struct hog_hgb_info *in = L->in;
    const struct hog_hgb_chunk *c = &in->chunks[k];
    struct chunk_layout lay = chunk_layout(in->version, c->rows, c->nnz, c->first_nnz);
    unsigned char ch[HOG_HGB_CHUNK_HEADER];
    unsigned char gap1[HOG_HGB_ALIGN], gap2[HOG_HGB_ALIGN], pad[HOG_HGB_ALIGN];
    uint64_t off0;
    uint64_t padn = c->bytes - HOG_HGB_CHUNK_HEADER - lay.end;
    uint64_t *doff = L->off + c->first_row + 1; /* entries 1..rows */
    float *dy = L->y + c->first_row;
    uint32_t *didx = L->idx + c->first_nnz;
    float *dval = L->val + c->first_nnz;
    struct seg s[MAX_SEGS];
    int n = 0;
    s[n++] = (struct seg){ ch, sizeof ch, false };
    s[n++] = (struct seg){ &off0, 8, false };
    s[n++] = (struct seg){ doff, 8 * c->rows, false };
    s[n++] = (struct seg){ dy, 4 * c->rows, false };
    s[n++] = (struct seg){ gap1, lay.gap1, false };
    n = add_array(s, n, didx, 4 * c->nnz, L->map_idx);
    s[n++] = (struct seg){ gap2, lay.gap2, false };
    n = add_array(s, n, dval, 4 * c->nnz, L->map_val);
    s[n++] = (struct seg){ pad, padn, false };
    hog_populate(doff, 8 * c->rows, true);
    hog_populate(dy, 4 * c->rows, true);
    if (!L->map_idx)
        hog_populate(didx, 4 * c->nnz, true);
    if (!L->map_val)
        hog_populate(dval, 4 * c->nnz, true);
    errno = 0;
    if (!fetch(in->fd, s, n, c->offset))
        return hog_errf(&L->err, errno ? HOG_EIO : HOG_ECORRUPT,
                        "%s: chunk %llu at offset %llu: cannot read: %s", L->name,
                        (unsigned long long)k, (unsigned long long)c->offset,
                        errno ? strerror(errno) : "file shrank");
    uint32_t want = 0;
    hog_status st = check_chunk_header(in, k, ch, L->name, &want, &L->err);
    if (st != HOG_OK)
        return st;
    /* Every byte after the chunk header, in file order (the segments of
     * an array are contiguous in memory). The indices' range is checked
     * piece by piece right after their CRC, while they are in the cache. */
    uint32_t crc = hog_crc32c(0, &off0, 8);
    crc = hog_crc32c(crc, doff, 8 * c->rows);
    crc = hog_crc32c(crc, dy, 4 * c->rows);
    crc = hog_crc32c(crc, gap1, lay.gap1);
    uint32_t mx = 0;
    for (uint64_t i = 0; i < c->nnz; i += IDX_PIECE) {
        uint64_t m = c->nnz - i < IDX_PIECE ? c->nnz - i : IDX_PIECE;
        crc = hog_crc32c(crc, didx + i, 4 * m);
        mx = max_u32(didx + i, m, mx);
    }
    crc = hog_crc32c(crc, gap2, lay.gap2);
    crc = hog_crc32c(crc, dval, 4 * c->nnz);
    crc = hog_crc32c(crc, pad, padn);
    if (crc != want)
        return chunk_bad(in, k, L->name, "checksum mismatch", &L->err);
    /* Local offsets to global ones, checking they are monotone. */
    uint64_t prev = off0, base = c->first_nnz;
    bool ok = off0 == 0;
    for (uint64_t i = 0; i < c->rows; i++) {
        uint64_t v = doff[i];
        ok &= v >= prev;
        prev = v;
        doff[i] = v + base;
    }
    if (!ok || prev != c->nnz)
        return chunk_bad(in, k, L->name, "bad row offsets", &L->err);
    if (c->nnz > 0 && (uint64_t)mx >= in->n_features)
        return chunk_bad(in, k, L->name, "feature index beyond the header's count",
                         &L->err);
    /* The header's label summary, checked where the labels are hot. */
    L->labels_ok &= chunk_labels_fit(in, dy, c->rows, &L->n_pos);
    return HOG_OK;
}

static void *loader_run(void *arg)
{
    struct loader *L = arg;
    L->status = HOG_OK;
    for (uint64_t k = L->k0; k < L->k1; k++) {
        hog_status st = load_chunk(L, k);
        if (st != HOG_OK) {
            L->status = st;
            break;
        }
    }
    return NULL;
}

/* Whether mapping a version 2 file's pages fits the process's limit on
 * mappings: each chunk may split the arrays into four more; half the
 * limit is left to the rest of the process. */
static bool maps_fit(uint64_t n_chunks)
{
    long limit = 65530; /* the kernel's default vm.max_map_count */
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (f) {
        if (fscanf(f, "%ld", &limit) != 1)
            limit = 65530;
        fclose(f);
    }
    return n_chunks <= (uint64_t)(limit / 8);
}

#define A4K(x) (((size_t)(x) + HOG_HGB_ALIGN - 1) & ~(size_t)(HOG_HGB_ALIGN - 1))

/* Closes the file when the loaded data keeps no lease on it: through the
 * lease, which owns fd, when there is one. Before unmapping the arrays. */
static void close_file(int fd, struct hog_hgb_lease *lease)
{
    if (lease)
        hog_hgb_lease_drop(lease);
    else
        close(fd);
}

/* Hands [idx, end of the mapping) to the lease: its whole pages, which
 * hold the indices and the values. A writer that asked for the file
 * during the load has had them copied now; if it waited past the
 * kernel's patience, the copy's indices are checked again. */
static hog_status publish_lease(struct hog_hgb_lease *lease, const char *path,
                                uint32_t *idx, uint64_t nnz, uint64_t n_features,
                                void *map_end, hog_err *err)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)idx & ~(page - 1);
    uintptr_t e = ((uintptr_t)map_end + page - 1) & ~(page - 1);
    bool late;
    if (hog_hgb_lease_publish(lease, (void *)a, e - a, &late) || !late ||
        nnz == 0 || max_u32(idx, nnz, 0) < n_features)
        return HOG_OK;
    return hog_errf(err, HOG_ECORRUPT,
                    "%s: rewritten by another program while being loaded "
                    "(it waited past fs.lease-break-time); load it again", path);
}

hog_status hog_hgb_load_mode(const char *path, const hog_load_opts *o,
                             enum hog_hgb_mode mode, hog_data **out,
                             hog_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return hog_errf(err, HOG_EIO, "%s: cannot open: %s", path, strerror(errno));
    /* The read lease before the first byte is read: from then on nobody
     * writes the file, so what is checked below stays true of its mapped
     * pages. None to be had: the indices are read (load_chunk). */
    struct hog_hgb_lease *lease =
        mode == HOG_HGB_MAP_AUTO ? hog_hgb_lease_take(fd) : NULL;
    struct hog_hgb_info in;
    hog_status st = read_info(fd, path, &in, err);
    if (st != HOG_OK) {
        close_file(fd, lease);
        return st;
    }
    in.fd = fd; /* closed by close_file or the lease, not hog_hgb_info_close */
    if ((st = hog_hash_check_file(path, in.hash.bits, in.hash.seed, o, err)) !=
        HOG_OK) {
        in.fd = -1;
        hog_hgb_info_close(&in);
        close_file(fd, lease);
        return st;
    }
    uint64_t rows = in.rows, nnz = in.nnz;
    /* One anonymous mapping for the four arrays, each on its own pages
     * (sizes are bounded by the file size, checked by read_info). */
    size_t a_off = A4K((rows + 1) * 8), a_y = A4K(rows * 4), a_nz = A4K(nnz * 4);
    size_t total = a_off + a_y + 2 * a_nz;
    unsigned char *base = mmap(NULL, total, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        in.fd = -1;
        hog_hgb_info_close(&in);
        close_file(fd, lease);
        return hog_errf(err, HOG_ENOMEM,
                        "%s: out of memory for %llu rows and %llu nonzeros", path,
                        (unsigned long long)rows, (unsigned long long)nnz);
    }
    /* huge pages for those read into (those mapped from the file below are
     * the page cache's; docs/ARCHITECTURE.md, "In memory") */
    (void)madvise(base, total, MADV_HUGEPAGE);
    bool map = mode == HOG_HGB_MAP_AUTO && in.version >= 2 && maps_fit(in.n_chunks);
    /* A file that is read, not mapped, keeps its lease only while loading. */
    bool map_idx = map && lease;
    uint64_t *off = (uint64_t *)base;
    float *y = (float *)(base + a_off);
    uint32_t *idx = (uint32_t *)(base + a_off + a_y);
    float *val = (float *)(base + a_off + a_y + a_nz);
    off[0] = 0;
    /* All CPUs by default, but at least 8 MiB per thread; a count asked
     * for is used as given (up to one thread per chunk). */
    unsigned t = o && o->threads ? o->threads : hog_online_cpus();
    uint64_t per = 8u << 20;
    if (!(o && o->threads) && t > in.file_size / per + 1)
        t = (unsigned)(in.file_size / per + 1);
    if (t > in.n_chunks)
        t = in.n_chunks ? (unsigned)in.n_chunks : 1;
    hog_data *d = NULL;
    struct loader *L = aligned_alloc(HOG_CACHELINE, t * sizeof *L);
    if (!L) {
        st = hog_errf(err, HOG_ENOMEM, "%s: out of memory", path);
        goto fail;
    }
    /* Contiguous runs of chunks of about equal bytes per thread. */
    uint64_t k = 0, acc = 0, data = in.file_size;
    for (unsigned i = 0; i < t; i++) {
        L[i] = (struct loader){ .in = &in, .name = path, .k0 = k, .off = off,
                                .y = y, .idx = idx, .val = val,
                                .map_idx = map_idx, .map_val = map,
                                .labels_ok = true };
        uint64_t goal = data / t * (i + 1);
        while (k < in.n_chunks && (i + 1 == t || acc < goal))
            acc += in.chunks[k++].bytes;
        L[i].k1 = k;
    }
    hog_fork_join(L, sizeof *L, t, loader_run, HOG_FORK_CALLER_FIRST);
    st = HOG_OK;
    bool labels_ok = true;
    uint64_t n_pos = 0;
    for (unsigned i = 0; i < t; i++) {
        if (L[i].status != HOG_OK && st == HOG_OK) { /* the lowest chunk wins */
            st = L[i].status;
            if (err)
                *err = L[i].err;
        }
        labels_ok &= L[i].labels_ok;
        n_pos += L[i].n_pos;
    }
    free(L);
    if (st == HOG_OK && map_idx)
        st = publish_lease(lease, path, idx, nnz, in.n_features, base + total, err);
    d = st == HOG_OK ? calloc(1, sizeof *d) : NULL;
    if (st == HOG_OK && !d)
        st = hog_errf(err, HOG_ENOMEM, "%s: out of memory", path);
    if (st != HOG_OK)
        goto fail;
    /* Every index was checked against the header's count, which is kept
     * (it may exceed the largest index: a count asked for at save time). */
    d->m = (struct hog_csr){ rows, nnz, off, y, idx, val, NULL };
    d->n_features = o && o->n_features > in.n_features ? o->n_features : in.n_features;
    d->hash = in.hash;
    d->mem[0] = base;
    d->mem_len[0] = total;
    if (map_idx) { /* the lease lives as long as the arrays */
        d->release = hog_hgb_lease_release;
        d->release_ctx = lease;
    } else {
        close_file(fd, lease);
    }
    in.fd = -1;
    /* Two distinct labels, both present, each the header's: exactly what
     * hog_data_scan_labels would find, checked by the loaders. Anything
     * else is scanned again and compared. */
    if (in.labels == HOG_LABELS_BINARY && labels_ok && n_pos == in.n_pos &&
        n_pos > 0 && n_pos < rows && in.label_pos > in.label_neg) {
        d->labels = HOG_LABELS_BINARY;
        d->label_pos = in.label_pos;
        d->label_neg = in.label_neg;
        d->n_pos = n_pos;
    } else {
        hog_data_scan_labels(d);
        st = hog_hgb_labels_match(&in, d->labels, d->label_pos, d->label_neg,
                                  d->n_pos, path, err);
        if (st != HOG_OK)
            hog_data_free(d);
    }
    hog_hgb_info_close(&in);
    if (st == HOG_OK)
        *out = d;
    return st;
fail:
    in.fd = -1;
    hog_hgb_info_close(&in);
    close_file(fd, lease);
    munmap(base, total);
    return st;
}

hog_status hog_hgb_load(const char *path, const hog_load_opts *o,
                        hog_data **out, hog_err *err)
{
    return hog_hgb_load_mode(path, o, HOG_HGB_MAP_AUTO, out, err);
}
