/* Clocks, CPU count, available memory and CRC32C. */
#include "core.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
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

unsigned hog_allowed_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return (unsigned)CPU_COUNT(&set);
    return hog_online_cpus();
}

/* The first number in the file at path after the text key (key "" : the
 * file's first word); false when the file or the number is missing ("max",
 * cgroup v2's "no limit", is not a number). */
static bool read_number(const char *path, const char *key, uint64_t *out)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    char line[256];
    bool ok = false;
    size_t kl = strlen(key);
    while (!ok && fgets(line, sizeof line, f)) {
        unsigned long long v;
        if (strncmp(line, key, kl) == 0 && sscanf(line + kl, "%llu", &v) == 1) {
            *out = v;
            ok = true;
        }
        if (!kl)
            break;
    }
    fclose(f);
    return ok;
}

static void take_min(uint64_t *best, const char **what, uint64_t v,
                     const char *name)
{
    if (v < *best) {
        *best = v;
        *what = name;
    }
}

/* Where the cgroup files are read: the kernel's, or a fake tree a test
 * makes (HOGTRAIN_TEST_CGROUP, a test seam: docs/RELIABILITY.md), whose
 * file "cgroup" stands for /proc/self/cgroup and whose folders for the
 * mount at /sys/fs/cgroup. */
static void cgroup_paths(char *self, size_t ls, char *root, size_t lr)
{
    const char *t = getenv("HOGTRAIN_TEST_CGROUP");
    if (t && *t) {
        snprintf(self, ls, "%s/cgroup", t);
        snprintf(root, lr, "%s", t);
    } else {
        snprintf(self, ls, "/proc/self/cgroup");
        snprintf(root, lr, "/sys/fs/cgroup");
    }
}

/* limit - usage of the cgroup folder dir, into *best when smaller. The
 * usage leaves out the inactive page cache, which the kernel reclaims
 * before it kills anyone (as a kubelet counts a working set). */
static void cgroup_limit(const char *dir, bool v2, const char *limit,
                         const char *name, uint64_t *best, const char **what)
{
    char p[2300];
    uint64_t l, u = 0, cache = 0;
    snprintf(p, sizeof p, "%s/%s", dir, limit);
    if (!read_number(p, "", &l))
        return; /* no file, or "max" */
    snprintf(p, sizeof p, "%s/%s", dir,
             v2 ? "memory.current" : "memory.usage_in_bytes");
    read_number(p, "", &u);
    snprintf(p, sizeof p, "%s/memory.stat", dir);
    read_number(p, v2 ? "inactive_file " : "total_inactive_file ", &cache);
    u = u > cache ? u - cache : 0;
    take_min(best, what, l > u ? l - u : 0, name);
}

/* The least headroom over the process's memory cgroup and those above it,
 * as this mount namespace shows them (a container sees its own root; a
 * path outside the mount is skipped): v2's memory.max and memory.high
 * (above which the kernel throttles the process to a crawl), v1's
 * memory.limit_in_bytes. */
static void cgroup_headroom(uint64_t *best, const char **what)
{
    char self[1024], root[1024];
    cgroup_paths(self, sizeof self, root, sizeof root);
    FILE *f = fopen(self, "re");
    if (!f)
        return;
    char line[1024], rel[1024];
    while (fgets(line, sizeof line, f)) {
        /* v2 "0::/path"; v1 "N:memory:/path" (or "N:cpu,memory:/path") */
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        bool v2 = c1[1] == '\0' && line[0] == '0';
        if (!v2 && !strstr(c1 + 1, "memory"))
            continue;
        snprintf(rel, sizeof rel, "%s", c2 + 1);
        rel[strcspn(rel, "\n")] = '\0';
        for (;;) {
            char dir[2200];
            snprintf(dir, sizeof dir, "%s%s%s", root, v2 ? "" : "/memory", rel);
            if (v2) {
                cgroup_limit(dir, true, "memory.max", "under the memory limit "
                             "of the cgroup (memory.max)", best, what);
                cgroup_limit(dir, true, "memory.high", "under the memory limit "
                             "of the cgroup (memory.high)", best, what);
            } else {
                cgroup_limit(dir, false, "memory.limit_in_bytes", "under the "
                             "memory limit of the cgroup "
                             "(memory.limit_in_bytes)", best, what);
            }
            char *slash = strrchr(rel, '/');
            if (!slash || !rel[0])
                break;
            *slash = '\0';
        }
    }
    fclose(f);
}

uint64_t hog_mem_available(const char **what)
{
    uint64_t best = UINT64_MAX, v;
    const char *name = NULL;
    if (read_number("/proc/meminfo", "MemAvailable:", &v))
        take_min(&best, &name, v * 1024, "in the machine's memory (MemAvailable)");
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        /* statm's first field: the pages mapped now */
        uint64_t pages = 0;
        read_number("/proc/self/statm", "", &pages);
        uint64_t used = pages * (uint64_t)sysconf(_SC_PAGESIZE);
        uint64_t lim = (uint64_t)rl.rlim_cur;
        take_min(&best, &name, lim > used ? lim - used : 0,
                 "under the address-space limit (ulimit -v)");
    }
    cgroup_headroom(&best, &name);
    if (what)
        *what = name;
    return best;
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
/* One stream: 8 bytes per crc32 instruction, whose 3-cycle latency makes
 * this a third of what the unit can do. */
__attribute__((target("sse4.2"))) static uint64_t
crc32c_hw1(uint64_t c, const unsigned char *p, size_t len)
{
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

/*
 * Three streams. Without the pre- and post-inversion the CRC state is
 * linear over GF(2): the state after A||B||C, from s, is
 *   Z_|C|(Z_|B|(crc(s, A)) ^ crc(0, B)) ^ crc(0, C)
 * where Z_n(s) = crc(s, n zero bytes), itself linear in s and so four
 * table look-ups (one table per byte of s). With |A| = |B| = |C| the three
 * crc32 chains are independent and run in parallel. Blocks of 8 KiB per
 * stream (measured: shorter streams leave data from memory slower, longer
 * gain nothing), then 1 KiB, then one stream for the last < 3 KiB.
 */
#define CRC_BIG 8192
#define CRC_SMALL 1024
static uint32_t crc_zeros_big[4][256], crc_zeros_small[4][256];
static pthread_once_t crc_zeros_once = PTHREAD_ONCE_INIT;

__attribute__((target("sse4.2"))) static void
crc_zeros_table(uint32_t t[4][256], size_t n)
{
    static const unsigned char zero[CRC_BIG];
    uint32_t bit[32];
    for (int i = 0; i < 32; i++)
        bit[i] = (uint32_t)crc32c_hw1(UINT32_C(1) << i, zero, n);
    for (int b = 0; b < 4; b++)
        for (uint32_t v = 0; v < 256; v++) {
            uint32_t z = 0;
            for (int i = 0; i < 8; i++)
                if (v >> i & 1)
                    z ^= bit[8 * b + i];
            t[b][v] = z;
        }
}

static void crc_zeros_init(void)
{
    crc_zeros_table(crc_zeros_big, CRC_BIG);
    crc_zeros_table(crc_zeros_small, CRC_SMALL);
}

static inline uint32_t crc_zeros(const uint32_t t[4][256], uint32_t s)
{
    return t[0][s & 0xFF] ^ t[1][(s >> 8) & 0xFF] ^ t[2][(s >> 16) & 0xFF] ^
           t[3][s >> 24];
}

/* Runs of 3 blocks of `block` bytes from *p while they last. */
__attribute__((target("sse4.2"), always_inline)) static inline uint64_t
crc32c_3way(uint64_t c0, const unsigned char **pp, size_t *len, size_t block,
            const uint32_t t[4][256])
{
    const unsigned char *p = *pp;
    while (*len >= 3 * block) {
        uint64_t c1 = 0, c2 = 0;
        for (size_t i = 0; i < block; i += 8) {
            uint64_t a, b, c;
            __builtin_memcpy(&a, p + i, 8);
            __builtin_memcpy(&b, p + block + i, 8);
            __builtin_memcpy(&c, p + 2 * block + i, 8);
            c0 = __builtin_ia32_crc32di(c0, a);
            c1 = __builtin_ia32_crc32di(c1, b);
            c2 = __builtin_ia32_crc32di(c2, c);
        }
        c0 = crc_zeros(t, crc_zeros(t, (uint32_t)c0) ^ (uint32_t)c1) ^ (uint32_t)c2;
        p += 3 * block;
        *len -= 3 * block;
    }
    *pp = p;
    return c0;
}

__attribute__((target("sse4.2"))) static uint32_t
crc32c_hw(uint32_t crc, const unsigned char *p, size_t len)
{
    uint64_t c = crc;
    if (len >= 3 * CRC_SMALL) {
        pthread_once(&crc_zeros_once, crc_zeros_init);
        c = crc32c_3way(c, &p, &len, CRC_BIG, crc_zeros_big);
        c = crc32c_3way(c, &p, &len, CRC_SMALL, crc_zeros_small);
    }
    return (uint32_t)crc32c_hw1(c, p, len);
}
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

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

void hog_populate(void *p, size_t n, bool write)
{
    const uintptr_t page = 4096;
    if (n == 0)
        return;
    uintptr_t a = (uintptr_t)p & ~(page - 1);
    uintptr_t e = ((uintptr_t)p + n + page - 1) & ~(page - 1);
    (void)madvise((void *)a, e - a,
                  write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
}

#define HUGE_PAGE ((size_t)2 << 20)

void *hog_malloc_big(size_t n)
{
    if (n < HUGE_PAGE)
        return malloc(n ? n : 1);
    /* At a 2 MiB boundary and a whole number of 2 MiB pages: advice on an
     * unaligned block leaves its two ends, up to 4 MiB, to 4 KiB pages. */
    size_t r = (n + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    void *p = r >= n ? aligned_alloc(HUGE_PAGE, r) : NULL;
    if (p) /* kernels built without THP refuse it: harmless */
        (void)madvise(p, r, MADV_HUGEPAGE);
    return p;
}

void *hog_realloc_big(void *p, size_t used, size_t n)
{
    if (n < HUGE_PAGE)
        return realloc(p, n ? n : 1);
    void *q = hog_malloc_big(n);
    if (q && p) {
        memcpy(q, p, used < n ? used : n);
        free(p);
    }
    return q;
}

void *hog_calloc_big(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    if (n * size < HUGE_PAGE)
        return calloc(n ? n : 1, size ? size : 1);
    void *p = hog_malloc_big(n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

void *hog_zalloc(size_t n, size_t size)
{
    void *p = hog_calloc_big(n, size);
    /* a large block's memset has written every page already */
    if (p && n && size && n * size < HUGE_PAGE)
        hog_populate(p, n * size, true);
    return p;
}
