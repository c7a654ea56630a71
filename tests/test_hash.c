/* Feature hashing (docs/FORMATS.md, "Hashing"): MurmurHash3 against its
 * published vectors, the index mapping of LIBSVM text, merged rows and
 * counted collisions, the same result at any thread count, hashed .hgb
 * and .hgm files, the command end to end on a9a, and a file whose index
 * 4e9 needs --hash-bits. */
#include <criterion/criterion.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "io/io.h"

/* MurmurHash3_x86_32 of the reference (Appleby's SMHasher), checked
 * independently with this Python transcription of its definition:
 *
 *   def mm3(data, seed=0):
 *       rotl = lambda x, r: ((x << r) | (x >> (32 - r))) & 0xffffffff
 *       c1, c2, h, n = 0xcc9e2d51, 0x1b873593, seed, len(data)
 *       for i in range(n // 4):
 *           k = int.from_bytes(data[4*i:4*i+4], 'little')
 *           k = rotl(k * c1 & 0xffffffff, 15) * c2 & 0xffffffff
 *           h = (rotl(h ^ k, 13) * 5 + 0xe6546b64) & 0xffffffff
 *       t, k = data[n // 4 * 4:], 0
 *       for i in reversed(range(len(t))): k ^= t[i] << (8 * i)
 *       if t: h ^= rotl(k * c1 & 0xffffffff, 15) * c2 & 0xffffffff
 *       h ^= n
 *       h ^= h >> 16; h = h * 0x85ebca6b & 0xffffffff; h ^= h >> 13
 *       h = h * 0xc2b2ae35 & 0xffffffff; return h ^ (h >> 16)
 *
 * The values are the vectors published with the reference and its ports
 * ("" seed 0 is 0, seed 1 0x514E28B7, ...). */
static const struct {
    const char *s;
    size_t len;
    uint32_t seed, want;
} vectors[] = {
    { "", 0, 0, 0 },
    { "", 0, 1, 0x514E28B7u },
    { "", 0, 0xffffffffu, 0x81F16F39u },
    { "\0\0\0\0", 4, 0, 0x2362F9DEu },
    { "\xff\xff\xff\xff", 4, 0, 0x76293B50u },
    { "aaaa", 4, 0x9747b28cu, 0x5A97808Au },
    { "aaa", 3, 0x9747b28cu, 0x283E0130u },
    { "aa", 2, 0x9747b28cu, 0x5D211726u },
    { "a", 1, 0x9747b28cu, 0x7FA09EA6u },
    { "abcd", 4, 0x9747b28cu, 0xF0478627u },
    { "abc", 3, 0x9747b28cu, 0xC84A62DDu },
    { "ab", 2, 0x9747b28cu, 0x74875592u },
    { "Hello, world!", 13, 0x9747b28cu, 0x24884CBAu },
    { "The quick brown fox jumps over the lazy dog", 43, 0x9747b28cu,
      0x2FA826CDu },
};

Test(hash, murmur3_x86_32_published_vectors)
{
    for (size_t i = 0; i < sizeof vectors / sizeof *vectors; i++)
        cr_assert_eq(hog_murmur3_32(vectors[i].s, vectors[i].len,
                                    vectors[i].seed),
                     vectors[i].want, "\"%s\" seed %#x: %#x, want %#x",
                     vectors[i].s, vectors[i].seed,
                     hog_murmur3_32(vectors[i].s, vectors[i].len,
                                    vectors[i].seed),
                     vectors[i].want);
}

/* The index mapping, fixed for good (files and models depend on it): the
 * 0-based index as 4 little-endian bytes. Values from the Python above:
 * mm3(struct.pack('<I', j), seed). */
Test(hash, the_index_mapping_is_stable)
{
    static const struct {
        uint32_t j, seed, want;
    } ix[] = {
        { 0, 0, 0x2362F9DEu }, { 1, 0, 0xFBF1402Au }, { 122, 0, 0x32DED4C1u },
        { 3999999999u, 0, 0x94DE070Au }, { 0xffffffffu, 0, 0x76293B50u },
    };
    for (size_t i = 0; i < sizeof ix / sizeof *ix; i++) {
        cr_assert_eq(hog_hash_index(ix[i].j, ix[i].seed), ix[i].want,
                     "index %u: %#x", ix[i].j, hog_hash_index(ix[i].j, 0));
        unsigned char le[4] = { (unsigned char)ix[i].j,
                                (unsigned char)(ix[i].j >> 8),
                                (unsigned char)(ix[i].j >> 16),
                                (unsigned char)(ix[i].j >> 24) };
        cr_assert_eq(hog_hash_index(ix[i].j, ix[i].seed),
                     hog_murmur3_32(le, 4, ix[i].seed));
    }
    /* with a seed: the inline one-block hash equals the general one */
    for (uint32_t j = 0; j < 5000; j += 7)
        for (uint32_t seed = 0; seed < 3; seed++) {
            unsigned char le[4] = { (unsigned char)j, (unsigned char)(j >> 8),
                                    0, 0 };
            cr_assert_eq(hog_hash_index(j, seed * 0x9e3779b9u),
                         hog_murmur3_32(le, 4, seed * 0x9e3779b9u));
        }
    /* 2^20 weights: h & (2^20 - 1) (mm3(pack('<I', 122)) & 0xfffff) */
    cr_assert_eq(hog_hash_index(122, 0) & 0xfffffu, 971969u);
}

Test(hash, vw_names_digits_are_numbers_others_murmur)
{
    cr_assert_eq(hog_vw_hash("123", 3, 0), 123u);
    cr_assert_eq(hog_vw_hash("123", 3, 1000), 1123u);
    cr_assert_eq(hog_vw_hash("007", 3, 0), 7u);
    cr_assert_eq(hog_vw_hash("4294967296", 10, 5), 5u); /* mod 2^32 */
    cr_assert_eq(hog_vw_hash("abc", 3, 0x9747b28cu), 0xC84A62DDu);
    cr_assert_eq(hog_vw_hash("-5", 2, 0), hog_murmur3_32("-5", 2, 0));
    cr_assert_eq(hog_vw_hash("12a", 3, 0), hog_murmur3_32("12a", 3, 0));
    /* digits wrap, as VW's size_t does: 123456789012345678901234567890
     * mod 2^64 mod 2^32 (Python) */
    const char *big = "123456789012345678901234567890";
    cr_assert_eq(hog_vw_hash(big, strlen(big), 0), 1312754386u);
    /* no name: the seed; control bytes at the ends are not the name's */
    cr_assert_eq(hog_vw_hash("", 0, 77), 77u);
    cr_assert_eq(hog_vw_hash("\x01" "abc" "\x02", 5, 0x9747b28cu), 0xC84A62DDu);
    cr_assert_eq(hog_vw_hash("\x1f" "12", 3, 1), 13u);
}

static hog_data *parse_hashed(const char *text, unsigned bits, uint32_t seed,
                              unsigned slices)
{
    hog_load_opts o;
    hog_load_opts_init(&o);
    o.hash_bits = bits;
    o.hash_seed = seed;
    hog_data *d = NULL;
    hog_err err;
    hog_status st = hog_parse_svm_slices(text, strlen(text), "h.svm", &o,
                                         slices, &d, &err);
    cr_assert_eq(st, HOG_OK, "%s", err.msg);
    return d;
}

static uint32_t slot(uint32_t file_index, unsigned bits, uint32_t seed)
{
    return hog_hash_index(file_index - 1, seed) &
           (uint32_t)((UINT64_C(1) << bits) - 1);
}

/* Two 1-based indices in 1..400 that share a weight of 2^bits. */
static void colliding_pair(unsigned bits, uint32_t *a, uint32_t *b)
{
    for (uint32_t i = 1; i < 400; i++)
        for (uint32_t j = i + 1; j < 400; j++)
            if (slot(i, bits, 0) == slot(j, bits, 0)) {
                *a = i, *b = j;
                return;
            }
    cr_assert_fail("no colliding pair");
}

Test(hash, libsvm_rows_hashed_merged_and_sorted)
{
    unsigned bits = 6;
    uint32_t a, b;
    colliding_pair(bits, &a, &b);
    char text[256];
    /* row 1: a and b merge (2 + 3); row 2: a alone; row 3: b and 500 */
    snprintf(text, sizeof text, "1 %u:2 %u:3 700:1\n-1 %u:4\n1 %u:1 500:2\n",
             a, b, a, b);
    hog_data *d = parse_hashed(text, bits, 0, 1);
    cr_assert_eq(d->n_features, 64);
    cr_assert_eq(d->hash.bits, bits);
    cr_assert_eq(d->format, HOG_FORMAT_LIBSVM);
    cr_assert_eq(d->hash.merged, 1);
    uint32_t s_ab = slot(a, bits, 0), s700 = slot(700, bits, 0),
             s500 = slot(500, bits, 0);
    /* every row strictly increasing, the merged value the sum */
    for (uint64_t i = 0; i < d->m.rows; i++)
        for (uint64_t e = d->m.off[i] + 1; e < d->m.off[i + 1]; e++)
            cr_assert_lt(d->m.idx[e - 1], d->m.idx[e]);
    uint64_t r0 = d->m.off[0], r1 = d->m.off[1];
    cr_assert_eq(r1 - r0, s700 == s_ab ? 1u : 2u);
    for (uint64_t e = r0; e < r1; e++)
        if (d->m.idx[e] == s_ab && s700 != s_ab)
            cr_assert_eq(d->m.val[e], 5.0f);
    /* collisions: the weights two distinct indices share; a and b's is one */
    uint32_t ids[] = { a, b, 700, 500 };
    uint64_t shared = 0;
    for (unsigned s = 0; s < 64; s++) {
        unsigned n = 0;
        for (unsigned k = 0; k < 4; k++)
            n += slot(ids[k], bits, 0) == s;
        shared += n >= 2;
    }
    cr_assert_eq(d->hash.collisions, shared);
    cr_assert_geq(shared, 1);
    (void)s500;
    hog_data_free(d);
}

/* The same arrays and counts however many threads parse. */
Test(hash, any_thread_count_gives_the_same_hashed_data)
{
    TH_DATA_OR_SKIP(path, "a9a");
    size_t len;
    char *text = th_slurp(path, &len);
    hog_data *one = parse_hashed(text, 7, 11, 1);
    cr_assert_gt(one->hash.collisions, 0); /* 123 features, 128 weights */
    cr_assert_gt(one->hash.merged, 0);
    for (unsigned t = 2; t <= 5; t += 3) {
        hog_data *d = parse_hashed(text, 7, 11, t);
        cr_assert_eq(d->m.nnz, one->m.nnz);
        cr_assert(memcmp(d->m.off, one->m.off, (d->m.rows + 1) * 8) == 0);
        cr_assert(memcmp(d->m.idx, one->m.idx, d->m.nnz * 4) == 0);
        cr_assert(memcmp(d->m.val, one->m.val, d->m.nnz * 4) == 0);
        cr_assert_eq(d->hash.collisions, one->hash.collisions);
        cr_assert_eq(d->hash.merged, one->hash.merged);
        hog_data_free(d);
    }
    /* and the streaming conversion counts the same over its windows */
    char dir[512], out[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    snprintf(out, sizeof out, "%s/a9a.hgb", dir);
    hog_load_opts o;
    hog_load_opts_init(&o);
    o.hash_bits = 7, o.hash_seed = 11;
    hog_err err;
    struct hog_convert_stats cs = { 0 };
    cr_assert_eq(hog_svm_to_hgb_stream(path, out, &o, 65536, 0, &cs, &err),
                 HOG_OK, "%s", err.msg);
    cr_assert_gt(cs.windows, 10);
    cr_assert_eq(cs.hash.collisions, one->hash.collisions);
    cr_assert_eq(cs.hash.merged, one->hash.merged);
    hog_data *h = NULL;
    cr_assert_eq(hog_data_load(out, NULL, &h, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(h->hash.bits, 7);
    cr_assert_eq(h->hash.seed, 11);
    cr_assert_eq(h->hash.collisions, one->hash.collisions);
    cr_assert(memcmp(h->m.idx, one->m.idx, h->m.nnz * 4) == 0);
    hog_data_free(h);
    struct hog_hgb_info in;
    cr_assert_eq(hog_hgb_open_info(out, &in, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(in.version, HOG_HGB_VERSION_HASHED);
    hog_hgb_info_close(&in);
    /* asked with other bits, or a seed not the file's: refused */
    o.hash_bits = 8;
    cr_assert_eq(hog_data_load(out, &o, &h, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "hashed with --hash-bits 7 --hash-seed 11"),
              "%s", err.msg);
    o.hash_bits = 7, o.hash_seed = 0;
    cr_assert_eq(hog_data_load(out, &o, &h, &err), HOG_EINVAL);
    o.hash_seed = 11;
    cr_assert_eq(hog_data_load(out, &o, &h, &err), HOG_OK, "%s", err.msg);
    hog_data_free(h);
    hog_data_free(one);
    free(text);
}

Test(hash, an_unhashed_hgb_is_not_hashed_as_it_loads)
{
    char dir[512];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *svm = th_write(dir, "p.svm", "1 1:1 3:2\n-1 2:1\n", 17);
    char out[1024];
    snprintf(out, sizeof out, "%s/p.hgb", dir);
    hog_err err;
    cr_assert_eq(hog_svm_to_hgb_stream(svm, out, NULL, 0, 0, NULL, &err),
                 HOG_OK, "%s", err.msg);
    hog_load_opts o;
    hog_load_opts_init(&o);
    o.hash_bits = 10;
    hog_data *d = NULL;
    cr_assert_eq(hog_data_load(out, &o, &d, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "hogtrain convert --hash-bits 10"), "%s", err.msg);
}

/* A caller built before the hashing fields (a smaller size) gets none. */
Test(hash, load_options_of_an_older_caller)
{
    hog_load_opts o;
    memset(&o, 0xAB, sizeof o); /* what lies past an old struct */
    o.size = offsetof(hog_load_opts, format);
    o.zero_based = 0;
    o.threads = 1;
    o.n_features = 0;
    hog_load_opts full;
    hog_load_opts_take(&o, &full);
    cr_assert_eq(full.hash_bits, 0);
    cr_assert_eq(full.format, HOG_FORMAT_AUTO);
    cr_assert_eq(full.threads, 1);
}

/* .hgm version 3: the hashing kept, binary and K-class; LIBLINEAR refuses. */
Test(hash, models_record_the_hashing)
{
    char dir[512], p[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    hog_err err;
    for (int k = 0; k < 2; k++) {
        hog_model *m = NULL;
        cr_assert_eq(hog_model_new(1u << 5, HOG_LOSS_LOGISTIC, 1.0, &m, &err),
                     HOG_OK);
        if (k) {
            double labels[3] = { 3, 1, 2 };
            cr_assert_eq(hog_model_set_classes(m, 3, labels,
                                               HOG_MULTICLASS_OVR, &err),
                         HOG_OK);
        }
        for (uint64_t j = 0; j < hog_model_len(m); j++)
            m->w[j] = (float)j / 8;
        m->hash_bits = 5;
        m->hash_seed = 77;
        snprintf(p, sizeof p, "%s/m%d.hgm", dir, k);
        cr_assert_eq(hog_model_save(m, p, HOG_MODEL_HGM, &err), HOG_OK, "%s",
                     err.msg);
        size_t len;
        unsigned char *b = (unsigned char *)th_slurp(p, &len);
        cr_assert_eq(b[8], 3); /* version 3 */
        cr_assert_eq(len, 104 + 8 * (k ? 3 : 0) + 4 * hog_model_len(m) + 4);
        free(b);
        hog_model *r = NULL;
        cr_assert_eq(hog_model_load(p, &r, &err), HOG_OK, "%s", err.msg);
        cr_assert_eq(hog_model_hash_bits(r), 5);
        cr_assert_eq(hog_model_hash_seed(r), 77);
        cr_assert_eq(r->n_classes, k ? 3u : 0u);
        cr_assert(memcmp(r->w, m->w, 4 * hog_model_len(m)) == 0);
        hog_model_free(r);
        snprintf(p, sizeof p, "%s/m%d.txt", dir, k);
        cr_assert_eq(hog_model_save(m, p, HOG_MODEL_LIBLINEAR, &err),
                     HOG_ENOTSUP);
        cr_assert(strstr(err.msg, "LIBLINEAR cannot hash"), "%s", err.msg);
        /* an unhashed model is still version 1 or 2 */
        m->hash_bits = 0;
        snprintf(p, sizeof p, "%s/u%d.hgm", dir, k);
        cr_assert_eq(hog_model_save(m, p, HOG_MODEL_HGM, &err), HOG_OK);
        b = (unsigned char *)th_slurp(p, &len);
        cr_assert_eq(b[8], k ? 2 : 1);
        free(b);
        hog_model_free(m);
    }
}

/* The command on a9a: a model trained with --hash-bits predicts through
 * `hogtrain predict` with the accuracy the train report gave its test
 * set, the hashing taken from the model; --json counts the collisions. */
Test(hash, a9a_hashed_model_predicts_as_trained, .timeout = 300)
{
    TH_DATA_OR_SKIP(train, "a9a");
    TH_DATA_OR_SKIP(test, "a9a.t");
    char dir[512], out[8192];
    cr_assert(th_tmpdir(dir, sizeof dir));
    int rc = th_run(out, sizeof out, "'%s' train -q --epochs 5 --hash-bits 10 "
                    "-t '%s' -o '%s/m.hgm' --json '%s/r.json' '%s'", th_bin(),
                    test, dir, dir, train);
    cr_assert_eq(rc, 0, "%s", out);
    char jp[1024];
    snprintf(jp, sizeof jp, "%s/r.json", dir);
    size_t len;
    char *json = th_slurp(jp, &len);
    const char *h = strstr(json, "\"hashing\": {");
    cr_assert(h, "%s", json);
    cr_assert(strstr(h, "\"bits\": 10") && strstr(h, "\"seed\": 0"), "%s", h);
    const char *c = strstr(h, "\"collisions\": ");
    cr_assert(c);
    long coll = strtol(c + 14, NULL, 10);
    cr_assert_gt(coll, 0); /* 123 features into 1024 weights */
    /* the last epoch's test accuracy */
    const char *acc = NULL, *q = json;
    while ((q = strstr(q, "\"test_accuracy\": ")))
        acc = q, q++;
    cr_assert(acc);
    double want = strtod(acc + 17, NULL);
    rc = th_run(out, sizeof out, "'%s' predict '%s/m.hgm' '%s' -o '%s/p.txt'",
                th_bin(), dir, test, dir);
    cr_assert_eq(rc, 0, "%s", out);
    const char *a = strstr(out, "accuracy ");
    cr_assert(a, "%s", out);
    double got = strtod(a + 9, NULL) / 100;
    cr_assert(fabs(got - want) < 1e-4, "predict %.4f, train report %.6f: %s",
              got, want, out);
    cr_assert_gt(got, 0.8);
    cr_assert(strstr(out, "hashed into 2^10 weights"), "%s", out);
    /* info shows the hashing; another --hash-bits is refused */
    rc = th_run(out, sizeof out, "'%s' info '%s/m.hgm'", th_bin(), dir);
    cr_assert(rc == 0 && strstr(out, "--hash-bits 10 --hash-seed 0"), "%s", out);
    rc = th_run(out, sizeof out, "'%s' predict --hash-bits 12 '%s/m.hgm' '%s'",
                th_bin(), dir, test);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "leave the hashing out"), "%s", out);
    /* LIBLINEAR cannot hold it */
    rc = th_run(out, sizeof out, "'%s' train -q --epochs 1 --hash-bits 10 "
                "--model-format liblinear -o '%s/m.txt' '%s'", th_bin(), dir,
                train);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "LIBLINEAR cannot hash"), "%s", out);
    free(json);
}

/* Index 4e9 in four rows: refused in seconds with a sentence naming
 * --hash-bits (under a 4 GiB address-space limit, so on any machine),
 * before the loader allocates anything per feature; with --hash-bits 20
 * it trains in under 300 MiB. */
Test(hash, index_4e9_needs_hash_bits, .timeout = 60)
{
#ifdef TH_ASAN
    cr_skip_test("AddressSanitizer reserves terabytes of address space: "
                 "ulimit -v and peak memory cannot be tested under it");
#endif
    char dir[512], out[4096], cmd[2048];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char text[] = "1 1:1 4000000000:1\n-1 2:1 4000000000:-1\n"
                        "1 3:0.5\n-1 4000000000:2\n";
    const char *svm = th_write(dir, "wide.svm", text, sizeof text - 1);
    int rc = th_run(out, sizeof out, "ulimit -v 4194304 && exec timeout 20 "
                    "'%s' train -q '%s'", th_bin(), svm);
    cr_assert_eq(rc, 1, "exit %d: %s", rc, out);
    cr_assert(strstr(out, "spans 4000000000 features") &&
                  strstr(out, "--hash-bits ") && strstr(out, "M weights, "),
              "%s", out);
    snprintf(cmd, sizeof cmd, "exec '%s' train -q --hash-bits 20 -o "
             "'%s/w.hgm' '%s'", th_bin(), dir, svm);
    long kib = th_peak_rss_kib(cmd);
    cr_assert_lt(kib, 300L << 10, "peak %ld KiB", kib);
    rc = th_run(out, sizeof out, "'%s' predict '%s/w.hgm' '%s'", th_bin(), dir,
                svm);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "accuracy "), "%s", out);
}
