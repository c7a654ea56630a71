/*
 * libFuzzer harness: the .hgb binary cache loader (src/io/hgb.c), through
 * hog_hgb_load and through the chunk-by-chunk reader the streamer uses
 * (hog_hgb_open_info + hog_hgb_chunk_verify). A loaded set must be
 * self-consistent.
 *
 * Every header, table and chunk carries a CRC32C, so nearly every random
 * mutation stops at the first checksum. Each input is therefore loaded
 * twice: as it is, and "resealed": with every CRC the layout in
 * docs/FORMATS.md locates recomputed, so that the checks behind the CRCs
 * (sizes, counts, offsets, indices) meet hostile values too. The resealed
 * input is also loaded from a file open for writing nowhere, under the
 * read lease that maps its indices as well as its values.
 */
#include "fuzz_common.h"

#include "io/io.h"

#include <fcntl.h>
#include <string.h>

static void check(const hog_data *d)
{
    const struct hog_csr *m = &d->m;
    if (m->off[m->rows] - m->off[0] != m->nnz)
        abort();
    for (uint64_t i = 0; i < m->rows; i++) {
        if (m->off[i] > m->off[i + 1])
            abort();
        for (uint64_t k = m->off[i]; k < m->off[i + 1]; k++)
            if (m->idx[k] >= d->n_features)
                abort();
    }
}

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static void wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

/* Recomputes the CRCs of a .hgb image in place where they lie in range. */
static void reseal(uint8_t *b, size_t size)
{
    if (size < 4096)
        return;
    uint64_t nch = rd64(b + 40), toff = rd64(b + 112), tb = rd64(b + 120);
    if (toff <= size && tb <= size - toff) {
        wr32(b + 128, hog_crc32c(0, b + toff, tb));
        for (uint64_t k = 0; k < nch && k < tb / 32; k++) {
            uint64_t off = rd64(b + toff + 32 * k);
            if (off > size || size - off < 64)
                continue;
            uint8_t *c = b + off;
            uint64_t pay = rd64(c + 40);
            uint64_t end = (64 + pay + 4095) & ~(uint64_t)4095;
            if (pay <= size && end <= size - off)
                wr32(c + 48, hog_crc32c(0, c + 64, end - 64));
            wr32(c + 60, hog_crc32c(0, c, 60));
        }
    }
    wr32(b + 4092, hog_crc32c(0, b, 4092));
}

/* Loads path with one thread; what loads must pass check(). */
static void load_and_check(const char *path)
{
    hog_load_opts o;
    hog_load_opts_init(&o);
    o.threads = 1;
    hog_data *d = NULL;
    hog_err err;
    if (hog_hgb_load(path, &o, &d, &err) == HOG_OK) {
        check(d);
        hog_data_free(d);
    }
}

static int one(const uint8_t *data, size_t size)
{
    const char *path = hog_fuzz_file(data, size);
    load_and_check(path);
    hog_err err;

    struct hog_hgb_info info;
    if (hog_hgb_open_info(path, &info, &err) != HOG_OK)
        return 0;
    void *buf = malloc(info.max_chunk_bytes ? info.max_chunk_bytes : 1);
    if (!buf)
        abort();
    for (uint64_t k = 0; k < info.n_chunks; k++) {
        const struct hog_hgb_chunk *c = &info.chunks[k];
        if (c->bytes > info.max_chunk_bytes || c->offset + c->bytes > size)
            abort(); /* open_info promised sizes within the file */
        memcpy(buf, data + c->offset, c->bytes);
        struct hog_csr m;
        if (hog_hgb_chunk_verify(&info, k, buf, "fuzz", &m, &err) != HOG_OK)
            continue;
        if (m.off[0] != 0 || m.off[m.rows] != m.nnz || m.rows != c->rows)
            abort();
        for (uint64_t i = 0; i < m.rows; i++)
            for (uint64_t j = m.off[i]; j < m.off[i + 1]; j++)
                if (m.idx[j] >= info.n_features)
                    abort();
    }
    free(buf);
    hog_hgb_info_close(&info);
    return 0;
}

static const char *leased_path;

static void remove_leased(void)
{
    unlink(leased_path);
}

/* Loads data[0..size) from a file nobody has open for writing, so that
 * the loader gets its read lease and maps the indices too (src/io/
 * hgb_lease.c). A memfd will not do (no lease without a link): a file in
 * /dev/shm (memory too), else in TMPDIR, one per process. */
static void load_leased(const uint8_t *data, size_t size)
{
    static char path[256];
    if (!path[0]) {
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/hogfuzz-lease-%d.hgb", dir ? dir : "/tmp",
                 (int)getpid());
        atexit(remove_leased);
        leased_path = path;
    }
    int w = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (w < 0)
        abort();
    for (size_t done = 0; done < size;) {
        ssize_t k = write(w, data + done, size - done);
        if (k <= 0)
            abort();
        done += (size_t)k;
    }
    close(w);
    load_and_check(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t *copy;
    static size_t cap;
    one(data, size);
    if (size < 4096)
        return 0;
    if (cap < size) {
        free(copy);
        copy = malloc(size);
        cap = size;
        if (!copy)
            abort();
    }
    memcpy(copy, data, size);
    reseal(copy, size);
    load_leased(copy, size);
    return one(copy, size);
}
