/* core: RNG, CRC32C, label scanning. */
#include <criterion/criterion.h>
#include <string.h>

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
