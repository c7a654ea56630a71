/*
 * The .hgb layout shared by its two writers (hgb.c from memory,
 * stream_convert.c from text in windows) and its reader (hgb.c): field
 * offsets of the file header and of a chunk header, and the payload size.
 * docs/FORMATS.md describes the same bytes. Private to src/io/.
 */
#ifndef HOG_IO_HGB_FORMAT_H
#define HOG_IO_HGB_FORMAT_H

#include "io/io.h"

#include <string.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "the .hgb writer and reader assume a little-endian host");
_Static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE floats");

#define HDR_SIZE 4096u
#define TABLE_ENTRY 32u
#define ALIGN_UP(x) (((x) + (uint64_t)HOG_HGB_ALIGN - 1) & ~(uint64_t)(HOG_HGB_ALIGN - 1))

/* Header field offsets (little-endian). */
enum {
    H_MAGIC = 0, H_VERSION = 8, H_HDRSIZE = 12, H_ROWS = 16, H_FEATURES = 24,
    H_NNZ = 32, H_CHUNKS = 40, H_SRC_SIZE = 48, H_SRC_MTIME = 56,
    H_LABELS = 64, H_LABEL_POS = 72, H_LABEL_NEG = 80, H_NPOS = 88,
    H_TARGET = 96, H_FILE_SIZE = 104, H_TABLE_OFF = 112, H_TABLE_BYTES = 120,
    H_TABLE_CRC = 128,
    /* version 3: the hashing of the features */
    H_HASH_BITS = 136, H_HASH_SEED = 140, H_HASH_COLLISIONS = 144,
    H_HASH_MERGED = 152,
    H_CRC = HDR_SIZE - 4
};
/* Chunk header field offsets. */
enum {
    C_MAGIC = 0, C_INDEX = 8, C_FIRST_ROW = 16, C_ROWS = 24, C_NNZ = 32,
    C_PAYLOAD = 40, C_PAYLOAD_CRC = 48, C_CRC = 60
};

static inline void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static inline uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint64_t get64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* A chunk table entry: where chunk starts and what it holds. */
static inline void table_entry_put(unsigned char *e, uint64_t offset,
                                   uint64_t first_row, uint64_t rows,
                                   uint64_t nnz)
{
    put64(e, offset);
    put64(e + 8, first_row);
    put64(e + 16, rows);
    put64(e + 24, nnz);
}

/* The file header at hdr (HDR_SIZE bytes, zeroed by the caller) for what
 * in says (its fd, chunks and max_chunk_bytes are not written), the chunk
 * target, and the table at table[0..table_bytes) that follows the header:
 * the header of both writers, whose CRCs cover the table and itself. */
static inline void header_put(unsigned char *hdr, const struct hog_hgb_info *in,
                              uint64_t target, const unsigned char *table,
                              uint64_t table_bytes)
{
    memcpy(hdr + H_MAGIC, HOG_HGB_MAGIC, 8);
    put32(hdr + H_VERSION, in->version);
    put32(hdr + H_HDRSIZE, HDR_SIZE);
    put64(hdr + H_ROWS, in->rows);
    put64(hdr + H_FEATURES, in->n_features);
    put64(hdr + H_NNZ, in->nnz);
    put64(hdr + H_CHUNKS, in->n_chunks);
    put64(hdr + H_SRC_SIZE, in->src_size);
    put64(hdr + H_SRC_MTIME, (uint64_t)in->src_mtime);
    put32(hdr + H_LABELS, (uint32_t)in->labels);
    memcpy(hdr + H_LABEL_POS, &in->label_pos, 8);
    memcpy(hdr + H_LABEL_NEG, &in->label_neg, 8);
    put64(hdr + H_NPOS, in->n_pos);
    put64(hdr + H_TARGET, target);
    put64(hdr + H_FILE_SIZE, in->file_size);
    put64(hdr + H_TABLE_OFF, HDR_SIZE);
    put64(hdr + H_TABLE_BYTES, table_bytes);
    put32(hdr + H_TABLE_CRC, hog_crc32c(0, table, table_bytes));
    if (in->version >= HOG_HGB_VERSION_HASHED) {
        put32(hdr + H_HASH_BITS, in->hash.bits);
        put32(hdr + H_HASH_SEED, in->hash.seed);
        put64(hdr + H_HASH_COLLISIONS, in->hash.collisions);
        put64(hdr + H_HASH_MERGED, in->hash.merged);
    }
    put32(hdr + H_CRC, hog_crc32c(0, hdr, H_CRC));
}

/* Payload bytes of a version 1 chunk: offsets, labels, indices, values
 * (also the measure the writers plan chunks by). */
static inline uint64_t payload_bytes(uint64_t rows, uint64_t nnz)
{
    return 8 * (rows + 1) + 4 * rows + 8 * nnz;
}

/*
 * Where a chunk's arrays lie, in bytes from the start of its payload.
 * Version 1: offsets, labels, indices, values back to back. Version 2 puts
 * zero bytes before the indices and before the values (gap1, gap2, each
 * under 4 KiB) so that, within a page, both start where they would in the
 * whole-file arrays: chunk header + idx == 4 * first_nnz (mod 4096), and
 * the same for val. A loader can then map the pages of every chunk's
 * indices and values straight from the file into one contiguous array.
 */
struct chunk_layout {
    uint64_t y, gap1, idx, gap2, val, end; /* end: the payload bytes */
};

static inline struct chunk_layout chunk_layout(uint32_t version, uint64_t rows,
                                               uint64_t nnz, uint64_t first_nnz)
{
    const uint64_t mask = HOG_HGB_ALIGN - 1;
    struct chunk_layout L;
    L.y = 8 * (rows + 1);
    uint64_t i0 = L.y + 4 * rows;
    L.gap1 = version >= 2 ? (4 * first_nnz - HOG_HGB_CHUNK_HEADER - i0) & mask : 0;
    L.idx = i0 + L.gap1;
    L.gap2 = version >= 2 ? (0 - 4 * nnz) & mask : 0;
    L.val = L.idx + 4 * nnz + L.gap2;
    L.end = L.val + 4 * nnz;
    return L;
}

#endif
