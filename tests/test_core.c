/* core: RNG, CRC32C, label scanning, model and large arrays. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/core.h"

Test(core, crc32c_known_vector)
{
    /* The CRC32C check value of "123456789" (RFC 3720). */
    cr_assert_eq(hog_crc32c(0, "123456789", 9), 0xE3069283u);
    /* Incremental equals one-shot. */
    uint32_t c = hog_crc32c(0, "1234", 4);
    cr_assert_eq(hog_crc32c(c, "56789", 5), 0xE3069283u);
}

Test(core, rng_is_seeded_and_streams_differ)
{
    struct hog_rng a, b, c;
    hog_rng_seed(&a, 42, 0);
    hog_rng_seed(&b, 42, 0);
    hog_rng_seed(&c, 42, 1);
    int same_c = 0;
    for (int i = 0; i < 100; i++) {
        uint64_t x = hog_rng_next(&a);
        cr_assert_eq(x, hog_rng_next(&b));
        same_c += x == hog_rng_next(&c);
    }
    cr_assert_eq(same_c, 0);
}

Test(core, rng_below_is_in_range_and_shuffle_is_a_permutation)
{
    struct hog_rng r;
    hog_rng_seed(&r, 7, 0);
    uint64_t a[1000];
    for (int i = 0; i < 1000; i++)
        a[i] = (uint64_t)i;
    hog_shuffle_u64(&r, a, 1000);
    char seen[1000] = { 0 };
    int moved = 0;
    for (int i = 0; i < 1000; i++) {
        cr_assert_lt(a[i], 1000u);
        cr_assert_eq(seen[a[i]], 0);
        seen[a[i]] = 1;
        moved += a[i] != (uint64_t)i;
    }
    cr_assert_gt(moved, 900);
    for (int i = 0; i < 10000; i++)
        cr_assert_lt(hog_rng_below(&r, 3), 3u);
}

/* Pages of [p, p + n) that mincore() says are resident. */
static size_t resident_pages(const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)4095;
    size_t len = (uintptr_t)p + n - a, pages = (len + 4095) / 4096;
    unsigned char *v = malloc(pages);
    cr_assert_not_null(v);
    cr_assert_eq(mincore((void *)a, len, v), 0);
    size_t in = 0;
    for (size_t i = 0; i < pages; i++)
        in += v[i] & 1;
    free(v);
    return in;
}

Test(core, zalloc_gives_zeroed_memory_whose_pages_are_already_in)
{
    const size_t n = (size_t)8 << 20; /* 8 MiB: calloc maps it fresh */
    void *probe = mmap(NULL, n, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(probe, MAP_FAILED);
    /* the control: a fresh mapping has no page in until touched */
    cr_assert_eq(resident_pages(probe, n), 0);
    bool can = madvise(probe, 4096, 23 /* MADV_POPULATE_WRITE */) == 0;
    munmap(probe, n);
    if (!can)
        cr_skip_test("this kernel has no MADV_POPULATE_WRITE (Linux 5.14), "
                     "so hog_zalloc leaves the pages to fault as calloc's");
    float *w = hog_zalloc(n / sizeof *w, sizeof *w);
    cr_assert_not_null(w);
    size_t pages = n / 4096;
    cr_assert_geq(resident_pages(w, n), pages);
    for (size_t i = 0; i < n / sizeof *w; i += 1021)
        cr_assert_eq(w[i], 0.0f);
    free(w);
}

/* The VmFlags line of the mapping in /proc/self/smaps that holds p, into
 * out (empty when none holds it). */
static void vm_flags_of(const void *p, char *out, size_t cap)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    cr_assert_not_null(f, "/proc/self/smaps cannot be read");
    char line[4352]; /* a mapping's line with the longest path whole */
    bool inside = false;
    out[0] = '\0';
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) { /* a mapping's line */
            inside = lo <= (uintptr_t)p && (uintptr_t)p < hi;
            continue;
        }
        if (inside && strncmp(line, "VmFlags:", 8) == 0) {
            size_t k = strlen(line + 8);
            k = k < cap ? k : cap - 1;
            memcpy(out, line + 8, k);
            out[k] = '\0';
            break;
        }
    }
    fclose(f);
}

Test(core, big_arrays_are_advised_huge_on_whole_2mib_pages)
{
    if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0)
        cr_skip_test("this kernel has no transparent huge pages, so "
                     "hog_malloc_big's advice is refused (harmless)");
    const size_t mib = (size_t)1 << 20, n = 5 * mib + 123;
    unsigned char *p = hog_malloc_big(n);
    cr_assert_not_null(p);
    /* at a 2 MiB boundary, so that no end is left to 4 KiB pages */
    cr_assert_eq((uintptr_t)p % (2 * mib), 0, "%p", (void *)p);
    char flags[512];
    vm_flags_of(p, flags, sizeof flags);
    cr_assert(strstr(flags, " hg"), "no MADV_HUGEPAGE on the block: "
              "VmFlags%s", flags);
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 7);
    /* grown: the first bytes kept, the new block advised and aligned */
    unsigned char *q = hog_realloc_big(p, n, 9 * mib);
    cr_assert_not_null(q);
    cr_assert_eq((uintptr_t)q % (2 * mib), 0);
    for (size_t i = 0; i < n; i += 4093)
        cr_assert_eq(q[i], (unsigned char)(i * 7), "byte %zu", i);
    vm_flags_of(q + 8 * mib, flags, sizeof flags);
    cr_assert(strstr(flags, " hg"), "VmFlags%s", flags);
    /* below 2 MiB it is realloc's: the bytes kept */
    q = hog_realloc_big(q, 9 * mib, 1000);
    cr_assert_not_null(q);
    for (size_t i = 0; i < 1000; i++)
        cr_assert_eq(q[i], (unsigned char)(i * 7));
    free(q);
    /* small ones are malloc's and calloc's */
    free(hog_malloc_big(100));
    double *z = hog_calloc_big(3 * mib, sizeof *z);
    cr_assert_not_null(z);
    cr_assert_eq((uintptr_t)z % (2 * mib), 0);
    for (size_t i = 0; i < 3 * mib; i += 511)
        cr_assert_eq(z[i], 0.0);
    free(z);
    cr_assert_null(hog_calloc_big(SIZE_MAX / 2, 4), "n * size overflows");
}
