/* The .hgb binary cache: text -> .hgb -> data is identical; every flipped
 * byte and every truncation is detected; versions and magic; the
 * chunk-by-chunk reading API. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <stdint.h>
#include <unistd.h>

#include "helpers.h"
#include "io/io.h"

static void assert_same(const hog_data *a, const hog_data *b, const char *what)
{
    cr_assert_eq(a->m.rows, b->m.rows, "%s: rows", what);
    cr_assert_eq(a->m.nnz, b->m.nnz, "%s: nnz", what);
    cr_assert_eq(a->n_features, b->n_features, "%s: features", what);
    cr_assert(memcmp(a->m.off, b->m.off, (a->m.rows + 1) * 8) == 0, "%s: off", what);
    cr_assert(memcmp(a->m.y, b->m.y, a->m.rows * 4) == 0, "%s: labels", what);
    cr_assert(memcmp(a->m.idx, b->m.idx, a->m.nnz * 4) == 0, "%s: idx", what);
    cr_assert(memcmp(a->m.val, b->m.val, a->m.nnz * 4) == 0, "%s: val", what);
    cr_assert_eq(a->labels, b->labels, "%s: label kind", what);
    cr_assert_eq(a->label_pos, b->label_pos, "%s", what);
    cr_assert_eq(a->label_neg, b->label_neg, "%s", what);
    cr_assert_eq(a->n_pos, b->n_pos, "%s", what);
}

static hog_data *load(const char *path, unsigned threads)
{
    hog_load_opts o;
    hog_load_opts_init(&o);
    o.threads = threads;
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_data_load(path, &o, &d, &err), HOG_OK, "%s", err.msg);
    return d;
}

Test(hgb, text_to_hgb_to_data_is_identical, .timeout = 60)
{
    static const char *names[] = { "heart_scale", "a9a", "abalone_scale",
                                   "rcv1_vw_small.train", "reuters_moneyfx.trn" };
    char dir[512];
    cr_assert(th_tmpdir(dir, sizeof dir));
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        TH_DATA_OR_SKIP(path, names[i]);
        hog_data *d = load(path, 1);
        char out[1024];
        snprintf(out, sizeof out, "%s/%s.hgb", dir, names[i]);
        static const uint64_t targets[] = { HOG_HGB_CHUNK_TARGET, 5000, 100000 };
        for (size_t t = 0; t < 3; t++) {
            hog_err err;
            cr_assert_eq(hog_hgb_save_chunked(d, out, 123, -7, targets[t], &err),
                         HOG_OK, "%s", err.msg);
            for (unsigned th = 1; th <= 3; th++) {
                hog_data *e = load(out, th);
                assert_same(d, e, names[i]);
                hog_data_free(e);
            }
            struct hog_hgb_info in;
            cr_assert_eq(hog_hgb_open_info(out, &in, &err), HOG_OK, "%s", err.msg);
            cr_assert_eq(in.src_size, 123);
            cr_assert_eq(in.src_mtime, -7);
            cr_assert_eq(in.rows, d->m.rows);
            cr_assert_eq(in.nnz, d->m.nnz);
            cr_assert_eq(in.n_features, d->n_features);
            cr_assert_eq(in.version, HOG_HGB_VERSION);
            if (targets[t] == 5000)
                cr_assert_gt(in.n_chunks, 2);
            hog_hgb_info_close(&in);
        }
        /* n_features from the options still wins when larger. */
        hog_load_opts o;
        hog_load_opts_init(&o);
        o.n_features = d->n_features + 10;
        hog_data *e;
        hog_err err;
        cr_assert_eq(hog_data_load(out, &o, &e, &err), HOG_OK);
        cr_assert_eq(e->n_features, d->n_features + 10);
        hog_data_free(e);
        /* The public writer. */
        cr_assert_eq(hog_data_save_hgb(d, out, &err), HOG_OK);
        e = load(out, 0);
        assert_same(d, e, names[i]);
        hog_data_free(e);
        hog_data_free(d);
        unlink(out);
    }
}

Test(hgb, chunk_by_chunk_reading)
{
    TH_DATA_OR_SKIP(path, "heart_scale");
    hog_data *d = load(path, 1);
    char dir[512], out[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    snprintf(out, sizeof out, "%s/h.hgb", dir);
    hog_err err;
    for (uint32_t ver = 1; ver <= HOG_HGB_VERSION; ver++) {
    cr_assert_eq(hog_hgb_save_version(d, out, 0, 0, 3000, ver, &err), HOG_OK);
    struct hog_hgb_info in;
    cr_assert_eq(hog_hgb_open_info(out, &in, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(in.version, ver);
    cr_assert_gt(in.n_chunks, 5);
    void *buf = aligned_alloc(HOG_HGB_ALIGN, in.max_chunk_bytes);
    uint64_t row = 0;
    for (uint64_t k = 0; k < in.n_chunks; k++) {
        const struct hog_hgb_chunk *c = &in.chunks[k];
        cr_assert_eq(c->offset % HOG_HGB_ALIGN, 0);
        cr_assert_eq(c->bytes % HOG_HGB_ALIGN, 0);
        cr_assert_eq(c->first_row, row);
        cr_assert_eq(pread(in.fd, buf, c->bytes, (off_t)c->offset), (ssize_t)c->bytes);
        struct hog_csr m;
        cr_assert_eq(hog_hgb_chunk_verify(&in, k, buf, out, &m, &err), HOG_OK, "%s",
                     err.msg);
        cr_assert_eq(m.rows, c->rows);
        cr_assert_eq(m.off[0], 0);
        for (uint64_t i = 0; i < m.rows; i++) {
            struct hog_row a = hog_csr_row(&m, i), b = hog_csr_row(&d->m, row + i);
            cr_assert_eq(a.nnz, b.nnz);
            cr_assert_eq(a.y, b.y);
            cr_assert(memcmp(a.idx, b.idx, a.nnz * 4) == 0);
            cr_assert(memcmp(a.val, b.val, a.nnz * 4) == 0);
        }
        /* A flipped payload byte in the buffer is caught, naming the chunk. */
        ((unsigned char *)buf)[c->bytes - 1] ^= 0x40;
        cr_assert_eq(hog_hgb_chunk_verify(&in, k, buf, out, &m, &err), HOG_ECORRUPT);
        char want[64];
        snprintf(want, sizeof want, "chunk %llu at offset %llu", (unsigned long long)k,
                 (unsigned long long)c->offset);
        cr_assert(strstr(err.msg, want) != NULL, "%s", err.msg);
        row += c->rows;
    }
    cr_assert_eq(row, d->m.rows);
    free(buf);
    hog_hgb_info_close(&in);
    }
    hog_data_free(d);
}

/* A small multi-chunk file from heart_scale. */
static void small_hgb(char *out, size_t outlen, hog_data **d)
{
    const char *path = th_data("heart_scale");
    if (!path)
        cr_skip_test("heart_scale not found under HOGTRAIN_DATA; skipping");
    *d = load(path, 1);
    char dir[512];
    cr_assert(th_tmpdir(dir, sizeof dir));
    snprintf(out, outlen, "%s/small.hgb", dir);
    hog_err err;
    cr_assert_eq(hog_hgb_save_chunked(*d, out, 1, 2, 3000, &err), HOG_OK);
}

/* A load for each of the file's ~9,000 bytes: seconds alone, but a
 * minute on a machine running other builds, whose load no verdict may
 * depend on; hence the long timeout (as for every truncation below). */
Test(hgb, every_flipped_byte_is_detected, .timeout = 300)
{
    char out[1024];
    hog_data *d;
    small_hgb(out, sizeof out, &d);
    int fd = open(out, O_RDWR);
    struct stat sb;
    fstat(fd, &sb);
    hog_load_opts o;
    hog_load_opts_init(&o);
    o.threads = 1;
    for (off_t i = 0; i < sb.st_size; i++) {
        unsigned char b, f;
        cr_assert_eq(pread(fd, &b, 1, i), 1);
        f = b ^ (unsigned char)(1u << (i % 8));
        cr_assert_eq(pwrite(fd, &f, 1, i), 1);
        hog_data *e = NULL;
        hog_err err;
        hog_status st = hog_hgb_load(out, &o, &e, &err);
        cr_assert(st == HOG_ECORRUPT || st == HOG_EFORMAT,
                  "byte %lld flipped: status %s", (long long)i, hog_status_str(st));
        cr_assert_eq(pwrite(fd, &b, 1, i), 1);
    }
    close(fd);
    hog_data *e = load(out, 1); /* restored: loads again */
    assert_same(d, e, "restored");
    hog_data_free(e);
    hog_data_free(d);
}

Test(hgb, every_truncation_is_detected, .timeout = 300)
{
    char out[1024];
    hog_data *d;
    small_hgb(out, sizeof out, &d);
    int fd = open(out, O_RDWR);
    struct stat sb;
    fstat(fd, &sb);
    hog_load_opts o;
    hog_load_opts_init(&o);
    for (off_t len = sb.st_size - 1; len >= 0; len--) {
        cr_assert_eq(ftruncate(fd, len), 0);
        hog_data *e = NULL;
        hog_err err;
        hog_status st = hog_hgb_load(out, &o, &e, &err);
        cr_assert(st == HOG_ECORRUPT || st == HOG_EFORMAT,
                  "truncated to %lld: status %s", (long long)len, hog_status_str(st));
        if (len > 4096 * 2 && len % 4096 == 100)
            cr_assert(strstr(err.msg, "truncated in chunk") != NULL, "%s", err.msg);
    }
    close(fd);
    hog_data_free(d);
}

Test(hgb, extra_bytes_newer_version_and_bad_magic)
{
    char out[1024];
    hog_data *d;
    small_hgb(out, sizeof out, &d);
    hog_data_free(d);
    hog_err err;
    hog_data *e;
    /* Trailing garbage. */
    FILE *f = fopen(out, "ab");
    fputs("x", f);
    fclose(f);
    cr_assert_eq(hog_hgb_load(out, NULL, &e, &err), HOG_ECORRUPT);
    cr_assert(strstr(err.msg, "unexpected bytes") != NULL, "%s", err.msg);
    struct stat sb;
    stat(out, &sb);
    cr_assert_eq(truncate(out, sb.st_size - 1), 0);
    /* A newer version is named, whatever else the header holds. */
    int fd = open(out, O_RDWR);
    uint32_t v = 7;
    cr_assert_eq(pwrite(fd, &v, 4, 8), 4);
    cr_assert_eq(hog_data_load(out, NULL, &e, &err), HOG_EFORMAT);
    char want[1200];
    snprintf(want, sizeof want,
             "%s: .hgb format version 7 is newer than this hogtrain reads (%u)", out,
             HOG_HGB_VERSION_READ);
    cr_assert_str_eq(err.msg, want);
    v = 1;
    cr_assert_eq(pwrite(fd, &v, 4, 8), 4);
    /* Bad magic. */
    cr_assert_eq(pwrite(fd, "HOGDATX", 7, 0), 7);
    close(fd);
    cr_assert_eq(hog_hgb_load(out, NULL, &e, &err), HOG_EFORMAT);
    cr_assert(strstr(err.msg, "bad magic") != NULL, "%s", err.msg);
}

Test(hgb, sniff)
{
    cr_assert(hog_hgb_sniff("HOGDATA\0rest", 12));
    cr_assert(!hog_hgb_sniff("HOGDATA", 7));
    cr_assert(!hog_hgb_sniff("1 1:1\n-1 2:1\n", 12));
}

/* Many small chunks loaded by 1..8 threads give the same data; with two
 * damaged chunks the error names the first, whatever the thread count. */
Test(threads, hgb_parallel_load_equals_serial, .timeout = 60)
{
    TH_DATA_OR_SKIP(path, "rcv1_vw_small.train");
    hog_data *d = load(path, 1);
    char dir[512], out[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    snprintf(out, sizeof out, "%s/r.hgb", dir);
    hog_err err;
    cr_assert_eq(hog_hgb_save_chunked(d, out, 0, 0, 20000, &err), HOG_OK);
    static const unsigned counts[] = { 1, 2, 3, 4, 8 };
    for (size_t i = 0; i < 5; i++) {
        hog_data *e = load(out, counts[i]);
        assert_same(d, e, "parallel load");
        hog_data_free(e);
    }
    struct hog_hgb_info in;
    cr_assert_eq(hog_hgb_open_info(out, &in, &err), HOG_OK);
    cr_assert_gt(in.n_chunks, 20);
    uint64_t o2 = in.chunks[2].offset, o9 = in.chunks[9].offset;
    hog_hgb_info_close(&in);
    int fd = open(out, O_RDWR);
    unsigned char b;
    cr_assert_eq(pread(fd, &b, 1, (off_t)o9 + 100), 1);
    b ^= 1;
    cr_assert_eq(pwrite(fd, &b, 1, (off_t)o9 + 100), 1);
    cr_assert_eq(pread(fd, &b, 1, (off_t)o2 + 500), 1);
    b ^= 1;
    cr_assert_eq(pwrite(fd, &b, 1, (off_t)o2 + 500), 1);
    close(fd);
    char want[64];
    snprintf(want, sizeof want, "chunk 2 at offset %llu: checksum mismatch",
             (unsigned long long)o2);
    for (size_t i = 0; i < 5; i++) {
        hog_load_opts o;
        hog_load_opts_init(&o);
        o.threads = counts[i];
        hog_data *e;
        cr_assert_eq(hog_data_load(out, &o, &e, &err), HOG_ECORRUPT);
        cr_assert(strstr(err.msg, want) != NULL, "%u threads: %s", counts[i], err.msg);
    }
    hog_data_free(d);
}

/* CRC32C (three interleaved streams on x86-64) against the bitwise
 * definition, at lengths around the interleaving block and at odd starts,
 * whole and split in two. */
static uint32_t crc_bitwise(const unsigned char *p, size_t n)
{
    uint32_t c = ~0u;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    }
    return ~c;
}

Test(hgb, crc32c_matches_bitwise)
{
    size_t cap = 40000;
    unsigned char *b = malloc(cap);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < cap; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        b[i] = (unsigned char)x;
    }
    static const size_t lens[] = { 0, 1, 7, 8, 6143, 6144, 6145, 6151, 12288,
                                   12289, 18431, 20000, 39000 };
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
        for (size_t s = 0; s < 4; s++) {
            size_t n = lens[li];
            uint32_t want = crc_bitwise(b + s, n);
            cr_assert_eq(hog_crc32c(0, b + s, n), want, "len %zu start %zu", n, s);
            uint32_t c = hog_crc32c(0, b + s, n / 3);
            cr_assert_eq(hog_crc32c(c, b + s + n / 3, n - n / 3), want);
        }
    free(b);
}

/* True when /proc/self/maps shows a mapping of path. */
static bool file_is_mapped(const char *path)
{
    FILE *f = fopen("/proc/self/maps", "r");
    cr_assert(f);
    char line[4096];
    bool hit = false;
    while (fgets(line, sizeof line, f))
        hit |= strstr(line, path) != NULL;
    fclose(f);
    return hit;
}

static hog_data *load_mode(const char *path, unsigned threads, enum hog_hgb_mode mode)
{
    hog_load_opts o;
    hog_load_opts_init(&o);
    o.threads = threads;
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_hgb_load_mode(path, &o, mode, &d, &err), HOG_OK, "%s", err.msg);
    return d;
}

/* Version 1 and 2 files, mapped or read, any thread count: the same data.
 * A version 2 load maps the file's pages (seen in /proc/self/maps) and
 * keeps no mapping after hog_data_free; version 1 and copy loads map none. */
Test(hgb, versions_and_mapping_agree, .timeout = 60)
{
    TH_DATA_OR_SKIP(path, "a9a");
    hog_data *d = load(path, 1);
    char dir[512], out[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    snprintf(out, sizeof out, "%s/v.hgb", dir);
    static const uint64_t targets[] = { HOG_HGB_CHUNK_TARGET, 300000, 20000 };
    for (uint32_t ver = 1; ver <= HOG_HGB_VERSION; ver++)
        for (size_t t = 0; t < 3; t++) {
            hog_err err;
            cr_assert_eq(hog_hgb_save_version(d, out, 0, 0, targets[t], ver, &err),
                         HOG_OK, "%s", err.msg);
            for (unsigned th = 1; th <= 3; th++)
                for (int mode = HOG_HGB_MAP_AUTO; mode <= HOG_HGB_COPY; mode++) {
                    hog_data *e = load_mode(out, th, (enum hog_hgb_mode)mode);
                    assert_same(d, e, "version/mode");
                    bool want = ver >= 2 && mode == HOG_HGB_MAP_AUTO;
                    cr_assert_eq(file_is_mapped(out), want,
                                 "version %u target %llu mode %d", ver,
                                 (unsigned long long)targets[t], mode);
                    hog_data_free(e);
                    cr_assert(!file_is_mapped(out));
                }
        }
    hog_data_free(d);
}

static void flip_byte(const char *path, uint64_t at)
{
    int fd = open(path, O_RDWR);
    cr_assert_geq(fd, 0);
    unsigned char b;
    cr_assert_eq(pread(fd, &b, 1, (off_t)at), 1);
    b ^= 0x10;
    cr_assert_eq(pwrite(fd, &b, 1, (off_t)at), 1);
    close(fd);
}

/* A flipped bit inside mapped pages of the indices or the values, or in a
 * version 2 alignment gap, is a checksum mismatch naming the chunk. */
Test(hgb, flips_in_mapped_pages_are_detected, .timeout = 60)
{
    TH_DATA_OR_SKIP(path, "a9a");
    hog_data *d = load(path, 1);
    char dir[512], out[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    snprintf(out, sizeof out, "%s/f.hgb", dir);
    hog_err err;
    cr_assert_eq(hog_hgb_save_chunked(d, out, 0, 0, 1000000, &err), HOG_OK);
    struct hog_hgb_info in;
    cr_assert_eq(hog_hgb_open_info(out, &in, &err), HOG_OK, "%s", err.msg);
    cr_assert_gt(in.n_chunks, 2);
    const struct hog_hgb_chunk *c = &in.chunks[1];
    uint64_t pay = c->offset + HOG_HGB_CHUNK_HEADER;
    uint64_t y = pay + 8 * (c->rows + 1), i0 = y + 4 * c->rows;
    /* The indices start on the page offset of 4 * first_nnz. */
    uint64_t idx = i0 + ((4 * c->first_nnz - (i0 - c->offset)) & 4095);
    cr_assert_eq(idx % 4096, (4 * c->first_nnz) % 4096);
    uint64_t val = idx + 4 * c->nnz + ((0 - 4 * c->nnz) & 4095);
    cr_assert_eq(val % 4096, (4 * c->first_nnz) % 4096);
    uint64_t at[] = { idx + 4 * c->nnz / 2, val + 4 * c->nnz / 2, i0 };
    char want[128];
    snprintf(want, sizeof want, "chunk 1 at offset %llu: checksum mismatch",
             (unsigned long long)c->offset);
    hog_hgb_info_close(&in);
    for (size_t i = 0; i < 3; i++) {
        if (i == 2 && idx == i0)
            continue; /* no gap before this chunk's indices */
        /* Closed before loading: a file open for writing gets no read
         * lease, and its indices would be read, not mapped. */
        flip_byte(out, at[i]);
        for (int mode = HOG_HGB_MAP_AUTO; mode <= HOG_HGB_COPY; mode++) {
            hog_data *e = NULL;
            cr_assert_eq(hog_hgb_load_mode(out, NULL, (enum hog_hgb_mode)mode, &e,
                                           &err), HOG_ECORRUPT);
            cr_assert(strstr(err.msg, want) != NULL, "%s", err.msg);
        }
        flip_byte(out, at[i]);
    }
    hog_data *e = load(out, 2);
    assert_same(d, e, "restored");
    hog_data_free(e);
    hog_data_free(d);
}

/* Mapped data is private: writing to it leaves the file as it was, and a
 * file replaced (written and renamed) after the load leaves the data. */
Test(hgb, mapped_data_is_private)
{
    TH_DATA_OR_SKIP(path, "a9a");
    hog_data *d = load(path, 1);
    char dir[512], out[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    snprintf(out, sizeof out, "%s/p.hgb", dir);
    hog_err err;
    cr_assert_eq(hog_hgb_save(d, out, 0, 0, &err), HOG_OK);
    hog_data *e = load(out, 1);
    cr_assert(file_is_mapped(out));
    uint64_t mid = e->m.nnz / 2;
    float v = e->m.val[mid];
    ((float *)e->m.val)[mid] = v + 1.0f; /* hog_csr is const to readers */
    ((volatile uint32_t *)e->m.idx)[mid] ^= 0;
    hog_data *f = load(out, 1);
    assert_same(d, f, "file after a write to the loaded data");
    hog_data_free(f);
    ((float *)e->m.val)[mid] = v;
    /* Replace the file with other data. */
    hog_data *g = load(path, 1);
    for (uint64_t i = 0; i < g->m.nnz; i++)
        ((float *)g->m.val)[i] *= 2.0f;
    cr_assert_eq(hog_hgb_save(g, out, 0, 0, &err), HOG_OK);
    assert_same(d, e, "loaded data after the file was replaced");
    hog_data *h = load(out, 1);
    assert_same(g, h, "the new file");
    hog_data_free(h);
    hog_data_free(g);
    hog_data_free(e);
    hog_data_free(d);
}
