/* Clocks, CPU count and CRC32C. */
#include "core.h"

#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double hog_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

unsigned hog_online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

/* CRC32C: the SSE4.2 instruction where the CPU has it, else a table. */
static uint32_t crc_table[8][256];
static atomic_int crc_table_ready;

static void crc_table_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^
                              crc_table[0][crc_table[t - 1][i] & 0xFF];
    /* release: publishes the table; pairs with the acquire below. */
    atomic_store_explicit(&crc_table_ready, 1, memory_order_release);
}

static uint32_t crc32c_sw(uint32_t crc, const unsigned char *p, size_t len)
{
    /* acquire: pairs with the release in crc_table_init(). Two threads may
     * both build the table; they write identical values. */
    if (!atomic_load_explicit(&crc_table_ready, memory_order_acquire))
        crc_table_init();
    while (len >= 8) {
        uint64_t v;
        __builtin_memcpy(&v, p, 8);
        v ^= crc;
        crc = crc_table[7][v & 0xFF] ^ crc_table[6][(v >> 8) & 0xFF] ^
              crc_table[5][(v >> 16) & 0xFF] ^ crc_table[4][(v >> 24) & 0xFF] ^
              crc_table[3][(v >> 32) & 0xFF] ^ crc_table[2][(v >> 40) & 0xFF] ^
              crc_table[1][(v >> 48) & 0xFF] ^ crc_table[0][v >> 56];
        p += 8;
        len -= 8;
    }
    while (len--)
        crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xFF];
    return crc;
}

#if defined(__x86_64__)
/* The crc32 instruction has a latency of 3 cycles and a throughput of one
 * a cycle: three independent streams over three adjacent blocks keep it
 * busy, and the blocks' CRCs are then joined (Mark Adler's crc32c.c):
 * crc(A B) = shift_|B|(crc(A)) ^ crc0(B), where crc0 starts from a zero
 * register and shift_n multiplies by x^(8n) mod P, a linear map on 32 bits
 * applied here through four byte tables. LONG blocks for the bulk, SHORT
 * for the remainder; the tables are built once (pthread_once). */
#define CRC_LONG 8192
#define CRC_SHORT 256
static uint32_t crc_zeros_long[4][256], crc_zeros_short[4][256];
static pthread_once_t crc_zeros_once = PTHREAD_ONCE_INIT;

static uint32_t gf2_times(const uint32_t *mat, uint32_t vec)
{
    uint32_t sum = 0;
    for (; vec; vec >>= 1, mat++)
        if (vec & 1)
            sum ^= *mat;
    return sum;
}

static void gf2_square(uint32_t *sq, const uint32_t *mat)
{
    for (int n = 0; n < 32; n++)
        sq[n] = gf2_times(mat, mat[n]);
}

/* The operator that appends len zero bytes (len a power of two). */
static void crc_zeros_op(uint32_t even[32], size_t len)
{
    uint32_t odd[32];
    odd[0] = 0x82F63B78u; /* one zero bit */
    for (int n = 1; n < 32; n++)
        odd[n] = 1u << (n - 1);
    gf2_square(even, odd); /* two bits */
    gf2_square(odd, even); /* four bits */
    for (;;) {             /* one byte in even, two in odd, ... */
        gf2_square(even, odd);
        if ((len >>= 1) == 0)
            return;
        gf2_square(odd, even);
        if ((len >>= 1) == 0)
            break;
    }
    memcpy(even, odd, sizeof odd);
}

static void crc_zeros_table(uint32_t z[4][256], size_t len)
{
    uint32_t op[32];
    crc_zeros_op(op, len);
    for (uint32_t n = 0; n < 256; n++)
        for (int b = 0; b < 4; b++)
            z[b][n] = gf2_times(op, n << (8 * b));
}

static void crc_zeros_init(void)
{
    crc_zeros_table(crc_zeros_long, CRC_LONG);
    crc_zeros_table(crc_zeros_short, CRC_SHORT);
}

static inline uint32_t crc_shift(uint32_t z[4][256], uint32_t crc)
{
    return z[0][crc & 0xFF] ^ z[1][(crc >> 8) & 0xFF] ^
           z[2][(crc >> 16) & 0xFF] ^ z[3][crc >> 24];
}

/* Three streams over blocks of `blk` bytes while 3 blk remain. */
#define CRC_3WAY(blk, zeros)                                                 \
    while (len >= 3 * (blk)) {                                               \
        uint64_t c1 = 0, c2 = 0;                                             \
        const unsigned char *end = p + (blk);                                \
        do {                                                                 \
            uint64_t v0, v1, v2;                                             \
            __builtin_memcpy(&v0, p, 8);                                     \
            __builtin_memcpy(&v1, p + (blk), 8);                             \
            __builtin_memcpy(&v2, p + 2 * (blk), 8);                         \
            c = __builtin_ia32_crc32di(c, v0);                               \
            c1 = __builtin_ia32_crc32di(c1, v1);                             \
            c2 = __builtin_ia32_crc32di(c2, v2);                             \
            p += 8;                                                          \
        } while (p < end);                                                   \
        c = crc_shift(zeros, (uint32_t)c) ^ (uint32_t)c1;                    \
        c = crc_shift(zeros, (uint32_t)c) ^ (uint32_t)c2;                    \
        p += 2 * (blk);                                                      \
        len -= 3 * (blk);                                                    \
    }

__attribute__((target("sse4.2"))) static uint32_t
crc32c_hw(uint32_t crc, const unsigned char *p, size_t len)
{
    uint64_t c = crc;
    if (len >= 3 * CRC_SHORT) {
        pthread_once(&crc_zeros_once, crc_zeros_init);
        CRC_3WAY(CRC_LONG, crc_zeros_long)
        CRC_3WAY(CRC_SHORT, crc_zeros_short)
    }
    while (len >= 8) {
        uint64_t v;
        __builtin_memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
        p += 8;
        len -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (len--)
        c32 = __builtin_ia32_crc32qi(c32, *p++);
    return c32;
}
#undef CRC_3WAY
#endif

uint32_t hog_crc32c(uint32_t crc, const void *buf, size_t len)
{
    crc = ~crc;
#if defined(__x86_64__)
    if (__builtin_cpu_supports("sse4.2"))
        crc = crc32c_hw(crc, buf, len);
    else
#endif
        crc = crc32c_sw(crc, buf, len);
    return ~crc;
}
