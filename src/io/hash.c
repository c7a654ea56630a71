/*
 * Feature hashing (docs/FORMATS.md, "Hashing").
 *
 * A feature becomes the weight h & (2^B - 1), where h is a 32-bit hash
 * of it: MurmurHash3's x86 32-bit variant (Appleby, public domain; the
 * hash Vowpal Wabbit uses) of
 *
 *   - a LIBSVM index: its 4 bytes, little-endian, of the 0-based index
 *     (the file's index - 1, or as written with --zero-based), seeded by
 *     the hash seed: hog_hash_index();
 *   - a Vowpal Wabbit feature: its name's bytes, seeded by its namespace's
 *     hash, which is the namespace name's hash seeded by the hash seed
 *     (the default namespace: the hash of no bytes); a name of decimal
 *     digits alone is taken as the number it spells plus the seed, modulo
 *     2^32, as VW's default --hash strings does: hog_vw_hash(). A string
 *     value (name:value) is the value's hash seeded by the name's, an
 *     anonymous feature (:value) its namespace's hash plus its number in
 *     the namespace, as VW hashes them (parse_vw.c).
 *
 * Hashing is done where indices are made (the parsers), so every algorithm
 * sees plain indices below 2^B. A row's entries whose features land on one
 * weight are summed into one entry and the row sorted by index again
 * (hog_row_merge): the kernels need strictly increasing indices.
 *
 * Collisions are counted as the weights that two or more distinct source
 * features share, each weight once (struct hog_hash_space): per weight,
 * whether no feature, one (the high 32 - B bits of its h, which tell the
 * features of one weight apart), or several have landed on it. What that
 * counts does not depend on the order the rows arrive in, so the count is
 * the same for any number of parser threads. Two features whose whole 32
 * bits agree are one feature to the hash (and to VW).
 */
#include "io/io.h"

#include <stdlib.h>
#include <string.h>

/* ---- MurmurHash3, x86, 32 bits ------------------------------------------------ */

uint32_t hog_murmur3_32(const void *key, size_t len, uint32_t seed)
{
    const unsigned char *p = key;
    uint32_t h = seed;
    size_t blocks = len / 4;
    for (size_t i = 0; i < blocks; i++, p += 4) {
        uint32_t k = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
                     (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        h = hog_murmur3_round(h, k);
    }
    uint32_t k = 0;
    switch (len & 3) {
    case 3: k ^= (uint32_t)p[2] << 16; /* fall through */
    case 2: k ^= (uint32_t)p[1] << 8;  /* fall through */
    case 1:
        k ^= p[0];
        h ^= hog_murmur3_mix_k(k);
    }
    return hog_murmur3_fmix(h ^ (uint32_t)len);
}

uint32_t hog_vw_hash(const char *s, size_t len, uint32_t seed)
{
    /* VW's hashstring(): control bytes and blanks at either end are not
     * part of the name; digits alone are the number (wrapping, as VW's
     * does) plus the seed, no name at all the seed itself */
    while (len > 0 && (unsigned char)s[0] <= 0x20)
        s++, len--;
    while (len > 0 && (unsigned char)s[len - 1] <= 0x20)
        len--;
    uint32_t v = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned d = (unsigned char)s[i] - '0';
        if (d > 9)
            return hog_murmur3_32(s, len, seed);
        v = v * 10 + d;
    }
    return v + seed;
}

/* ---- collisions ------------------------------------------------------------------ */

/* Bytes a weight's state takes: the tags (the high 32 - B bits of h, + 1)
 * and two more values (0: no feature yet; all ones: two or more) fit. */
static unsigned space_width(unsigned bits)
{
    return bits >= 25 ? 1 : bits >= 17 ? 2 : 4;
}

hog_status hog_hash_space_init(struct hog_hash_space *s, unsigned bits,
                               uint32_t seed, hog_err *err)
{
    memset(s, 0, sizeof *s);
    if (bits < 1 || bits > HOG_HASH_BITS_MAX)
        return hog_errf(err, HOG_EINVAL, "--hash-bits %u: hashing takes 1 "
                        "to %u bits", bits, HOG_HASH_BITS_MAX);
    s->bits = bits;
    s->seed = seed;
    s->mask = (uint32_t)((UINT64_C(1) << bits) - 1);
    s->width = space_width(bits);
    /* calloc'd pages stay unmapped until a feature lands on them */
    s->seen_bytes = (size_t)s->width << bits;
    s->seen = calloc(1, s->seen_bytes);
    if (!s->seen)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the collision "
                        "counts of 2^%u hashed weights (%zu bytes)", bits,
                        s->seen_bytes);
    return HOG_OK;
}

void hog_hash_space_free(struct hog_hash_space *s)
{
    free(s->seen);
    s->seen = NULL;
}

/* The state of one weight moves from none to one feature (its tag) to
 * several, never back; whoever moves it to several counts it, once.
 * Relaxed: the counts are summed after the parser threads are joined. */
#define NOTE(T, MANY)                                                         \
    do {                                                                      \
        _Atomic T *c = (_Atomic T *)s->seen + slot;                           \
        T want = (T)tag;                                                      \
        T v = atomic_load_explicit(c, memory_order_relaxed);                  \
        if (v == want || v == (T)(MANY))                                      \
            return 0;                                                         \
        if (v == 0 && atomic_compare_exchange_strong_explicit(                \
                          c, &v, want, memory_order_relaxed,                  \
                          memory_order_relaxed))                              \
            return 0;                                                         \
        if (v == want || v == (T)(MANY))                                      \
            return 0;                                                         \
        return atomic_exchange_explicit(c, (T)(MANY),                         \
                                        memory_order_relaxed) != (T)(MANY);   \
    } while (0)

unsigned hog_hash_space_note(const struct hog_hash_space *s, uint32_t h)
{
    uint32_t slot = h & s->mask;
    uint32_t tag = (h >> s->bits) + 1; /* bits <= 31 */
    switch (s->width) {
    case 1: NOTE(uint8_t, UINT8_MAX);
    case 2: NOTE(uint16_t, UINT16_MAX);
    default: NOTE(uint32_t, UINT32_MAX);
    }
}
#undef NOTE

/* ---- what was loaded, against what is asked ----------------------------------------- */

hog_status hog_hash_check_file(const char *name, unsigned file_bits,
                               uint32_t file_seed, const hog_load_opts *o,
                               hog_err *err)
{
    if (!o || o->hash_bits == 0)
        return HOG_OK;
    if (file_bits == 0)
        return hog_errf(err, HOG_EINVAL,
                        "%s: a .hgb file of unhashed features cannot be "
                        "hashed with --hash-bits %u as it loads; convert the "
                        "text with the hashing: hogtrain convert --hash-bits "
                        "%u TEXT %s",
                        name, o->hash_bits, o->hash_bits, name);
    if (file_bits != o->hash_bits || file_seed != o->hash_seed)
        return hog_errf(err, HOG_EINVAL,
                        "%s: its features were hashed with --hash-bits %u "
                        "--hash-seed %u, not --hash-bits %u --hash-seed %u as "
                        "asked; hashed features cannot be hashed again "
                        "(convert the text anew)",
                        name, file_bits, file_seed, o->hash_bits,
                        o->hash_seed);
    return HOG_OK;
}

void hog_load_opts_take(const hog_load_opts *user, hog_load_opts *o)
{
    hog_load_opts_init(o);
    if (!user)
        return;
    size_t n = user->size && user->size < sizeof *o ? user->size : sizeof *o;
    memcpy(o, user, n);
    o->size = sizeof *o;
}

/* ---- the public accessors --------------------------------------------------------------- */

void hog_data_hashing(const hog_data *d, hog_hashing *out)
{
    hog_out_give(out, &d->hash, sizeof d->hash);
}

hog_format hog_data_format(const hog_data *d)
{
    return d->format;
}

const float *hog_data_importance(const hog_data *d)
{
    return d->importance;
}

unsigned hog_model_hash_bits(const hog_model *m)
{
    return m->hash_bits;
}

uint32_t hog_model_hash_seed(const hog_model *m)
{
    return m->hash_seed;
}

const char *hog_model_interactions(const hog_model *m)
{
    return m->cross.n ? m->cross_spec : NULL;
}
