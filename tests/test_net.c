/* src/net in one process and in process groups: SHA-256 / HMAC vectors,
 * CRC32C, the ring all-reduce in 2, 3 and 4 forked processes on loopback
 * (bit for bit), the averaging hook and the row shards. The command's
 * refused peers and its distributed training and faults are in
 * test_net_procs.c. All on 127.0.0.1, ports picked by the kernel (bind to
 * port 0) so that concurrent test runs do not collide. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "helpers.h"
#include "net/net.h"

/* ---- SHA-256 (FIPS 180-4 examples) and HMAC-SHA256 (RFC 4231), over
 * libsodium (src/net/crypto.c) ------------------------------------------------ */

static void hex(const unsigned char *d, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

static void unhex(const char *s, unsigned char *out, size_t *n)
{
    *n = strlen(s) / 2;
    for (size_t i = 0; i < *n; i++) {
        unsigned v;
        sscanf(s + 2 * i, "%2x", &v);
        out[i] = (unsigned char)v;
    }
}

static void check_sha(const void *msg, size_t len, const char *want)
{
    unsigned char d[32];
    char h[65];
    hog_sha256(msg, len, d);
    hex(d, 32, h);
    cr_assert_str_eq(h, want);
}

/* CRC32C, one bit at a time: the reference for the checksum of every frame
 * (hog_crc32c runs three interleaved hardware streams on long buffers). */
static uint32_t crc32c_bitwise(uint32_t crc, const unsigned char *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return ~crc;
}

Test(net, crc32c_long_buffers)
{
    size_t max = 3 * 8192 * 2 + 3 * 256 + 100;
    unsigned char *b = malloc(max + 8);
    cr_assert_not_null(b);
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (size_t i = 0; i < max + 8; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        b[i] = (unsigned char)x;
    }
    static const size_t lens[] = { 0, 1, 7, 8, 255, 256, 767, 768, 769, 1000,
                                   24575, 24576, 24577, 3 * 8192 + 3 * 256,
                                   49152 + 768 + 99 };
    for (size_t k = 0; k < sizeof lens / sizeof *lens; k++)
        for (size_t off = 0; off < 8; off += 3) {
            size_t n = lens[k];
            uint32_t want = crc32c_bitwise(0x12345678u, b + off, n);
            cr_assert_eq(hog_crc32c(0x12345678u, b + off, n), want,
                         "length %zu, offset %zu", n, off);
            /* in two pieces */
            uint32_t c = hog_crc32c(0x12345678u, b + off, n / 3);
            cr_assert_eq(hog_crc32c(c, b + off + n / 3, n - n / 3), want);
        }
    free(b);
}

Test(net, sha256_fips_180_4)
{
    check_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223"
                        "b00361a396177a9cb410ff61f20015ad");
    check_sha("", 0, "e3b0c44298fc1c149afbf4c8996fb924"
                     "27ae41e4649b934ca495991b7852b855");
    const char *m2 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    check_sha(m2, strlen(m2), "248d6a61d20638b8e5c026930c3e6039"
                              "a33ce45964ff2167f6ecedd419db06c1");
    char *mil = malloc(1000000);
    cr_assert_not_null(mil);
    memset(mil, 'a', 1000000);
    check_sha(mil, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67"
                            "f1809a48a497200e046d39ccc7112cd0");
    free(mil);
}

Test(net, hmac_sha256_rfc4231)
{
    static const struct {
        const char *key, *data, *mac;
    } v[] = {
        { "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
          "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7" },
        { "4a656665",
          "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" },
        { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
          "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
          "dddddddddddddddddddddddddddddddddddd",
          "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe" },
        /* test case 6: a key longer than the block */
        { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
          "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
          "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
          "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
          "aaaaaa",
          "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a"
          "65204b6579202d2048617368204b6579204669727374",
          "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54" },
        /* test case 4: a 25-byte key */
        { "0102030405060708090a0b0c0d0e0f10111213141516171819",
          "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"
          "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd",
          "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b" },
        /* test case 7: a key and data longer than the block */
        { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
          "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
          "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
          "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
          "aaaaaa",
          "5468697320697320612074657374207573696e672061206c6172676572207468"
          "616e20626c6f636b2d73697a65206b657920616e642061206c61726765722074"
          "68616e20626c6f636b2d73697a6520646174612e20546865206b6579206e6565"
          "647320746f20626520686173686564206265666f7265206265696e6720757365"
          "642062792074686520484d414320616c676f726974686d2e",
          "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2" },
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        unsigned char k[256], d[256], mac[32];
        size_t kl, dl;
        unhex(v[i].key, k, &kl);
        unhex(v[i].data, d, &dl);
        hog_hmac_sha256(k, kl, d, dl, mac);
        char h[65];
        hex(mac, 32, h);
        cr_assert_str_eq(h, v[i].mac, "RFC 4231 vector, entry %zu of the table",
                         i + 1);
    }
}

/* Every key length from none to three blocks, against libsodium's one-shot
 * HMAC where it applies (32-byte keys) and against RFC 2104 built on
 * SHA-256 otherwise; proofs compare in constant time; nonces differ. */
Test(net, hmac_any_key_length)
{
    unsigned char key[200], msg[300], mac[32], want[32];
    for (size_t i = 0; i < sizeof key; i++)
        key[i] = (unsigned char)(i * 37 + 11);
    for (size_t i = 0; i < sizeof msg; i++)
        msg[i] = (unsigned char)(i * 101 + 7);
    for (size_t kl = 0; kl <= sizeof key; kl++) {
        size_t ml = (kl * 7) % sizeof msg;
        hog_hmac_sha256(kl ? key : NULL, kl, msg, ml, mac);
        /* H((K' ^ opad) | H((K' ^ ipad) | m)), K' = K, or H(K) when
         * longer than the 64-byte block, zero-padded. */
        unsigned char kp[64] = { 0 }, blk[64 + 300], inner[32];
        if (kl > 64)
            crypto_hash_sha256(kp, key, kl);
        else
            memcpy(kp, key, kl);
        for (int j = 0; j < 64; j++)
            blk[j] = kp[j] ^ 0x36;
        memcpy(blk + 64, msg, ml);
        crypto_hash_sha256(inner, blk, 64 + ml);
        for (int j = 0; j < 64; j++)
            blk[j] = kp[j] ^ 0x5c;
        memcpy(blk + 64, inner, 32);
        crypto_hash_sha256(want, blk, 96);
        cr_assert(hog_net_equal32(mac, want), "key of %zu bytes", kl);
        if (kl == crypto_auth_hmacsha256_KEYBYTES) {
            crypto_auth_hmacsha256(want, msg, ml, key);
            cr_assert_eq(memcmp(mac, want, 32), 0);
        }
        want[kl % 32] ^= 1;
        cr_assert(!hog_net_equal32(mac, want), "key of %zu bytes", kl);
    }
    unsigned char n1[32], n2[32];
    hog_err err;
    cr_assert_eq(hog_net_nonce(n1, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_net_nonce(n2, &err), HOG_OK, "%s", err.msg);
    cr_assert_neq(memcmp(n1, n2, 32), 0);
}

/* ---- process groups ------------------------------------------------------------ */

typedef int child_fn(unsigned rank, unsigned world, const char *coord,
                     void *ctx);

/* Runs fn in `world` forked processes; waits at most `limit` seconds
 * (then kills them). Returns how many exited 0; codes[r] the exit codes
 * (-1: killed). */
static unsigned run_group(unsigned world, child_fn *fn, void *ctx,
                          double limit, int *codes)
{
    char coord[64];
    snprintf(coord, sizeof coord, "127.0.0.1:%u", th_free_port());
    pid_t pid[8];
    fflush(NULL);
    for (unsigned r = 0; r < world; r++) {
        pid[r] = fork();
        cr_assert_geq(pid[r], 0);
        if (pid[r] == 0)
            _exit(fn(r, world, coord, ctx));
    }
    unsigned ok = 0, left = world;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned r = 0; r < world; r++)
        codes[r] = -1;
    while (left) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p > 0) {
            for (unsigned r = 0; r < world; r++)
                if (pid[r] == p) {
                    codes[r] = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
                    ok += codes[r] == 0;
                    pid[r] = 0;
                }
            left--;
            continue;
        }
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((double)(t.tv_sec - t0.tv_sec) > limit) {
            for (unsigned r = 0; r < world; r++)
                if (pid[r] > 0) {
                    kill(pid[r], SIGKILL);
                    waitpid(pid[r], NULL, 0);
                }
            break;
        }
        usleep(2000);
    }
    return ok;
}

/* Reproducible inputs with a wide spread of magnitudes, so that the order
 * of the additions shows in the bits. */
static float input(unsigned rank, size_t i)
{
    uint64_t z = (uint64_t)rank * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull + 1;
    z ^= z >> 31;
    z *= 0x94D049BB133111EBull;
    z ^= z >> 29;
    double u = (double)(z >> 11) * 0x1.0p-53 - 0.5;
    int e = (int)((z >> 3) % 24) - 12;
    return (float)ldexp(u, e);
}

/* The documented order, computed in one process: element i of segment s
 * is ((x_s + x_{s+1}) + ...) + x_{s-1}. */
static float *reference(size_t len, unsigned world)
{
    float *r = malloc((len ? len : 1) * sizeof *r);
    for (unsigned s = 0; s < world; s++) {
        size_t lo, hi;
        hog_net_segment(len, world, s, &lo, &hi);
        for (size_t i = lo; i < hi; i++) {
            float acc = input(s, i);
            for (unsigned k = 1; k < world; k++)
                acc = acc + input((s + k) % world, i);
            r[i] = acc;
        }
    }
    return r;
}

struct ar_case {
    size_t len;
    size_t chunk;
    uint32_t *crc; /* shared with the children: CRC32C of each result */
};

static int allreduce_child(unsigned rank, unsigned world, const char *coord,
                           void *ctx)
{
    const struct ar_case *c = ctx;
    struct hog_net_opts o;
    hog_net_opts_init(&o);
    o.world = world;
    o.rank = rank;
    o.coordinator = coord;
    o.connect_timeout = 10;
    o.timeout = 10;
    o.chunk_bytes = c->chunk;
    hog_err err = { { 0 } };
    hog_net *n;
    if (hog_net_open_tcp(&o, &n, &err) != HOG_OK) {
        fprintf(stderr, "rank %u: %s\n", rank, err.msg);
        return 2;
    }
    float *x = malloc(c->len * sizeof *x);
    for (size_t i = 0; i < c->len; i++)
        x[i] = input(rank, i);
    int rc = 0;
    /* Twice on one connection (small vectors), the last one checked: rank
     * 0 against the one-process sum, every rank by its checksum. */
    for (int round = c->len < 100000 ? 0 : 1; round < 2 && rc == 0; round++) {
        if (round == 1)
            for (size_t i = 0; i < c->len; i++)
                x[i] = input(rank, i);
        if (hog_net_allreduce_sum(n, x, c->len, &err) != HOG_OK) {
            fprintf(stderr, "rank %u: %s\n", rank, err.msg);
            rc = 3;
            break;
        }
    }
    if (rc == 0 && rank == 0) {
        float *want = reference(c->len, world);
        if (memcmp(x, want, c->len * sizeof *x) != 0)
            rc = 4;
        for (size_t i = 0; rc && i < c->len; i++)
            if (memcmp(&x[i], &want[i], 4) != 0) {
                fprintf(stderr, "rank 0: element %zu of %zu: %a, want %a\n",
                        i, c->len, x[i], want[i]);
                break;
            }
        free(want);
    }
    c->crc[rank] = hog_crc32c(0, x, c->len * sizeof *x);
    /* A small maximum too: the feature-count agreement. */
    uint64_t m[3] = { rank, 100 - rank, 7 };
    if (rc == 0 && (hog_net_allreduce_max(n, m, 3, &err) != HOG_OK ||
                    m[0] != world - 1 || m[1] != 100 || m[2] != 7))
    {
        fprintf(stderr, "rank %u: max %s: %llu %llu %llu\n", rank, err.msg,
                (unsigned long long)m[0], (unsigned long long)m[1],
                (unsigned long long)m[2]);
        rc = 5;
    }
    free(x);
    hog_net_close(n);
    return rc;
}

static void allreduce_world(unsigned world)
{
    static const struct ar_case cases[] = {
        { 1, 0, NULL },       { 2, 0, NULL },       { 3, 0, NULL },
        { 5, 0, NULL },       { 1000, 64, NULL },   { 1001, 64, NULL },
        { 65537, 4096, NULL }, { 1000003, 0, NULL }, { 10000000, 0, NULL },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int codes[8];
        struct ar_case c = cases[k];
        c.crc = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        cr_assert_neq(c.crc, MAP_FAILED);
        unsigned ok = run_group(world, allreduce_child, &c, 60, codes);
        for (unsigned r = 1; r < world && ok == world; r++)
            cr_assert_eq(c.crc[r], c.crc[0], "%u ranks, %zu elements: rank "
                         "%u holds other bits than rank 0", world, c.len, r);
        munmap(c.crc, 4096);
        cr_assert_eq(ok, world, "%u ranks, %zu elements (chunk %zu): exit "
                     "codes %d %d %d %d", world, c.len, c.chunk, codes[0],
                     codes[1], world > 2 ? codes[2] : 0,
                     world > 3 ? codes[3] : 0);
    }
}

Test(net, allreduce_2_ranks, .timeout = 120) { allreduce_world(2); }
Test(net, allreduce_3_ranks, .timeout = 120) { allreduce_world(3); }
Test(net, allreduce_4_ranks, .timeout = 120) { allreduce_world(4); }

/* ---- the averaging hook and sharding, in one process ------------------------- */

struct hook_count {
    uint64_t calls, n;
    float scale; /* multiply the weights by this */
};

static hog_status count_hook(void *ctx, float *w, uint64_t n, hog_err *err)
{
    (void)err;
    struct hook_count *c = ctx;
    c->calls++;
    c->n = n;
    for (uint64_t j = 0; j < n; j++)
        w[j] *= c->scale;
    return HOG_OK;
}

static hog_data *small_data(void)
{
    char dir[512];
    th_tmpdir(dir, sizeof dir);
    char text[1 << 14];
    size_t len = 0;
    for (int i = 0; i < 200; i++)
        len += (size_t)snprintf(text + len, sizeof text - len,
                                "%d %d:%g %d:%g %d:1\n", i % 3 ? 1 : -1,
                                i % 7 + 1, (i % 5) * 0.3, i % 11 + 8,
                                (i % 4) * 0.5 - 0.7, i % 13 + 20);
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    hog_data *d = NULL;
    hog_err err;
    cr_assert_eq(hog_data_load(th_write(dir, "s.svm", text, len), &lo, &d,
                               &err), HOG_OK, "%s", err.msg);
    return d;
}

/* The serial trainer calls the hook epochs x blocks times with every
 * weight, and an identity hook changes nothing but rounding; a hook that
 * changes the weights is seen by the training that follows. */
Test(net, average_hook_in_serial_trainer)
{
    hog_data *d = small_data();
    hog_train_opts o;
    th_opts_init(&o);
    o.epochs = 3;
    hog_model *plain, *hooked, *scaled;
    hog_err err;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &plain, &err), HOG_OK, "%s", err.msg);
    struct hook_count c = { 0, 0, 1.0f };
    hog_train_hooks hk = { .size = sizeof hk };
    hk.average = count_hook;
    hk.average_ctx = &c;
    o.average_blocks = 7;
    cr_assert_eq(hog_train(d, NULL, &o, &hk, &hooked, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(c.calls, 3 * 7);
    cr_assert_eq(c.n, hog_model_features(plain) + 1); /* + the bias */
    /* Blocks end SGD segments early (the lazy regularization is caught up
     * at each), which changes float rounding only. */
    double diff = 0, big = 0;
    for (uint64_t j = 0; j < c.n; j++) {
        double a = hog_model_weights(plain)[j], b = hog_model_weights(hooked)[j];
        diff = fmax(diff, fabs(a - b));
        big = fmax(big, fabs(a));
    }
    cr_assert(big > 0 && diff <= 1e-5 * big, "identity hook moved the "
              "weights by %g (largest %g)", diff, big);
    /* More blocks than rows: empty blocks still call, so that every
     * process makes the same number of calls. */
    c.calls = 0;
    o.average_blocks = 500;
    hog_model *many;
    cr_assert_eq(hog_train(d, NULL, &o, &hk, &many, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(c.calls, 3 * 500);
    hog_model_free(many);
    /* Zero the model after every block: the final weights are zero. */
    c = (struct hook_count){ 0, 0, 0.0f };
    o.average_blocks = 2;
    cr_assert_eq(hog_train(d, NULL, &o, &hk, &scaled, &err), HOG_OK, "%s", err.msg);
    for (uint64_t j = 0; j < c.n; j++)
        cr_assert_eq(hog_model_weights(scaled)[j], 0.0f);
    /* Averaging asks for at least one block. */
    o.average_blocks = 0;
    hog_model *none;
    cr_assert_eq(hog_train(d, NULL, &o, &hk, &none, &err), HOG_EINVAL);
    hog_model_free(plain);
    hog_model_free(hooked);
    hog_model_free(scaled);
    hog_data_free(d);
}

Test(net, shards_cover_the_rows)
{
    hog_data *d = small_data();
    uint64_t rows = hog_data_rows(d);
    for (int mode = 0; mode < 2; mode++) {
        uint64_t seen = 0, nnz = 0;
        for (unsigned r = 0; r < 3; r++) {
            hog_data *s;
            hog_err err;
            cr_assert_eq(hog_net_shard(d, r, 3, (enum hog_shard_mode)mode, &s,
                                       &err), HOG_OK, "%s", err.msg);
            cr_assert_eq(s->n_features, d->n_features);
            for (uint64_t i = 0; i < s->m.rows; i++) {
                uint64_t src = mode == HOG_SHARD_STRIDE
                                   ? r + 3 * i
                                   : rows * r / 3 + i;
                struct hog_row a = hog_csr_row(&s->m, i);
                struct hog_row b = hog_csr_row(&d->m, src);
                cr_assert_eq(a.nnz, b.nnz);
                cr_assert_eq(a.y, b.y);
                cr_assert_eq(memcmp(a.idx, b.idx, a.nnz * 4), 0);
                cr_assert_eq(memcmp(a.val, b.val, a.nnz * 4), 0);
            }
            seen += s->m.rows;
            nnz += s->m.nnz;
            hog_data_free(s);
        }
        cr_assert_eq(seen, rows);
        cr_assert_eq(nnz, hog_data_nnz(d));
    }
    hog_data_free(d);
}
