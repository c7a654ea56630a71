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
    H_TABLE_CRC = 128, H_CRC = HDR_SIZE - 4
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

/* Payload bytes of a chunk: offsets, labels, indices, values. */
static inline uint64_t payload_bytes(uint64_t rows, uint64_t nnz)
{
    return 8 * (rows + 1) + 4 * rows + 8 * nnz;
}

#endif
