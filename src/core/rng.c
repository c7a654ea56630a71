/* Seeded random streams: xoshiro256** (Blackman & Vigna), seeded through
 * splitmix64 so that (seed, stream) pairs give independent streams. */
#include "core.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

void hog_rng_seed(struct hog_rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream * UINT64_C(0xD1B54A32D192ED03));
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

uint64_t hog_rng_below(struct hog_rng *r, uint64_t n)
{
    /* Lemire's multiply-shift with rejection of the biased low range. */
    unsigned __int128 m = (unsigned __int128)hog_rng_next(r) * n;
    uint64_t lo = (uint64_t)m;
    if (lo < n) {
        uint64_t thresh = -n % n;
        while (lo < thresh) {
            m = (unsigned __int128)hog_rng_next(r) * n;
            lo = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

double hog_rng_normal(struct hog_rng *r)
{
    double u1 = hog_rng_uniform(r), u2 = hog_rng_uniform(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Fisher-Yates, one body for both element types. */
#define SHUFFLE(NAME, T)                                                      \
    void NAME(struct hog_rng *r, T *a, uint64_t n)                            \
    {                                                                         \
        for (uint64_t i = n; i > 1; i--) {                                    \
            uint64_t j = hog_rng_below(r, i);                                 \
            T t = a[i - 1];                                                   \
            a[i - 1] = a[j];                                                  \
            a[j] = t;                                                         \
        }                                                                     \
    }
SHUFFLE(hog_shuffle_u64, uint64_t)
SHUFFLE(hog_shuffle_u32, uint32_t)
#undef SHUFFLE
