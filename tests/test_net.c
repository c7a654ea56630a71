/* src/net: SHA-256 / HMAC vectors, the ring all-reduce in 2, 3 and 4
 * processes on loopback (bit for bit), refused peers, and the command's
 * distributed training and faults. All on 127.0.0.1, ports picked by the
 * kernel (bind to port 0) so that concurrent test runs do not collide. */
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

/* A port the kernel considered free a moment ago. */
static unsigned free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { 0 };
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t l = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &l);
    close(fd);
    return ntohs(a.sin_port);
}

typedef int child_fn(unsigned rank, unsigned world, const char *coord,
                     void *ctx);

/* Runs fn in `world` forked processes; waits at most `limit` seconds
 * (then kills them). Returns how many exited 0; codes[r] the exit codes
 * (-1: killed). */
static unsigned run_group(unsigned world, child_fn *fn, void *ctx,
                          double limit, int *codes)
{
    char coord[64];
    snprintf(coord, sizeof coord, "127.0.0.1:%u", free_port());
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

/* ---- refused peers, in process --------------------------------------------------- */

static char *slurp(const char *path)
{
    static char buf[1 << 16];
    FILE *f = fopen(path, "r");
    if (!f)
        return strcpy(buf, "");
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* Starts `sh -c cmd` with stdout and stderr into log; returns its pid. */
static pid_t spawn(const char *log, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static pid_t spawn(const char *log, const char *fmt, ...)
{
    /* exec: the pid is the command's own, not a shell's, so that a kill
     * reaches it. */
    char cmd[4096] = "exec ";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd + 5, sizeof cmd - 5, fmt, ap);
    va_end(ap);
    fflush(NULL);
    pid_t p = fork();
    cr_assert_geq(p, 0);
    if (p == 0) {
        FILE *f = freopen(log, "w", stdout);
        if (!f)
            _exit(127);
        dup2(1, 2);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return p;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Exit code of pid, waiting at most limit seconds (then SIGKILL, -1). */
static int wait_for(pid_t pid, double limit)
{
    double t0 = now_s();
    for (;;) {
        int st;
        pid_t p = waitpid(pid, &st, WNOHANG);
        if (p == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        if (now_s() - t0 > limit) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            return -1;
        }
        usleep(5000);
    }
}

/* Waits (at most limit s) until the file holds needle. */
static bool wait_text(const char *path, const char *needle, double limit)
{
    double t0 = now_s();
    while (now_s() - t0 < limit) {
        if (strstr(slurp(path), needle))
            return true;
        usleep(20000);
    }
    return false;
}

/* A client that speaks the wrong protocol version is refused; 1 MB of
 * random bytes is refused; a wrong secret and a duplicate rank are
 * refused; the listener survives all four and the job then runs. */
Test(net, refusals, .timeout = 60)
{
    char dir[512], coord[64], log0[600], log1[600], log1b[600], log2[600];
    char good[600], bad[600];
    th_tmpdir(dir, sizeof dir);
    snprintf(good, sizeof good, "%s", th_write(dir, "good.key",
             "correct horse battery staple\n", 29));
    snprintf(bad, sizeof bad, "%s", th_write(dir, "bad.key",
             "incorrect donkey battery staple\n", 32));
    static const char tiny_text[] = "1 1:1 2:0.5\n-1 2:1 3:1\n1 1:0.5 3:0.2\n"
                                    "-1 3:1 4:1\n1 1:1 4:0.1\n-1 2:1 4:1\n";
    char tiny[600];
    snprintf(tiny, sizeof tiny, "%s",
             th_write(dir, "tiny.svm", tiny_text, sizeof tiny_text - 1));
    unsigned port = free_port();
    snprintf(coord, sizeof coord, "127.0.0.1:%u", port);
    snprintf(log0, sizeof log0, "%s/r0.log", dir);
    snprintf(log1, sizeof log1, "%s/r1.log", dir);
    snprintf(log1b, sizeof log1b, "%s/r1b.log", dir);
    snprintf(log2, sizeof log2, "%s/r2.log", dir);
#define RANK(r, key)                                                           \
    "'%s' train --world 3 --rank " #r " --coordinator %s --secret-file '%s' " \
    "--connect-timeout 20 --net-timeout 10 '%s'", th_bin(), coord, key, tiny
    pid_t p0 = spawn(log0, RANK(0, good));
    pid_t p1 = spawn(log1, RANK(1, good));
    cr_assert(wait_text(log0, "rank 1 joined", 15), "rank 1 never joined:\n%s",
              slurp(log0));

    /* A wrong secret: the client is told, the listener says who. */
    pid_t pb = spawn(log1b, RANK(2, bad));
    cr_assert_eq(wait_for(pb, 20), 1);
    cr_assert(strstr(slurp(log1b), "wrong secret"), "%s", slurp(log1b));
    cr_assert(strstr(slurp(log0), "refused 127.0.0.1:"), "%s", slurp(log0));

    /* A duplicate rank. */
    pb = spawn(log1b, RANK(1, good));
    cr_assert_eq(wait_for(pb, 20), 1);
    cr_assert(strstr(slurp(log1b), "rank 1 is already taken by 127.0.0.1:"),
              "%s", slurp(log1b));

    /* A wrong protocol version, through the library. */
    struct hog_net_opts o;
    hog_net_opts_init(&o);
    o.world = 3;
    o.rank = 2;
    o.coordinator = coord;
    o.connect_timeout = 5;
    o.timeout = 5;
    o.protocol = 99;
    static const unsigned char key[] = "correct horse battery staple";
    o.secret = key;
    o.secret_len = sizeof key - 1;
    hog_net *n = NULL;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_net_open_tcp(&o, &n, &err), HOG_ENET);
    cr_assert(strstr(err.msg, "protocol version 99"), "%s", err.msg);

    /* 1 MB of random bytes. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { 0 };
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    unsigned char *junk = malloc(1 << 20);
    uint64_t z = 0x1234567;
    for (size_t i = 0; i < 1 << 20; i++) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        junk[i] = (unsigned char)(z >> 56);
    }
    size_t sent = 0;
    while (sent < (1u << 20)) {
        ssize_t k = send(fd, junk + sent, (1u << 20) - sent, MSG_NOSIGNAL);
        if (k <= 0)
            break; /* refused and closed: what we want */
        sent += (size_t)k;
    }
    /* Read what the listener says until it closes: closing with its bytes
     * unread would reset the connection before it has read ours. */
    shutdown(fd, SHUT_WR);
    char sink[4096];
    while (recv(fd, sink, sizeof sink, 0) > 0)
        ;
    close(fd);
    free(junk);
    cr_assert(wait_text(log0, "not a hogtrain peer", 10), "%s", slurp(log0));

    /* The listener is alive: the real rank 2 joins and the job runs. */
    pid_t p2 = spawn(log2, RANK(2, good));
    int c0 = wait_for(p0, 30), c1 = wait_for(p1, 30), c2 = wait_for(p2, 30);
    cr_assert(c0 == 0 && c1 == 0 && c2 == 0, "exit %d %d %d\n%s\n%s\n%s", c0,
              c1, c2, slurp(log0), slurp(log1), slurp(log2));
    const char *l0 = slurp(log0);
    cr_assert(strstr(l0, "wrong secret"), "%s", l0);
    cr_assert(strstr(l0, "protocol version 99"), "%s", l0);
    cr_assert(strstr(l0, "already taken"), "%s", l0);
#undef RANK
}

/* A connection to 127.0.0.1:port, blocking; -1 when refused. */
static int connect_port(unsigned port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { 0 };
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
        return fd;
    close(fd);
    return -1;
}

/* An idle connection to the coordinator before the ranks join (a port
 * scanner, a stuck client) holds only itself: rank 0 serves the real
 * ranks' handshakes beside it, and the job runs. (It used to take the
 * listener for a handshake step, 10 s, while the joining ranks gave up
 * after 10 s without the challenge.) */
Test(net, idle_connection_before_join, .timeout = 90)
{
    char dir[512], coord[64], logs[3][600], data[600];
    th_tmpdir(dir, sizeof dir);
    static const char text[] = "1 1:1 2:0.5\n-1 2:1 3:1\n1 1:0.5 3:0.2\n"
                               "-1 3:1 4:1\n1 1:1 4:0.1\n-1 2:1 4:1\n";
    snprintf(data, sizeof data, "%s", th_write(dir, "d.svm", text,
                                               sizeof text - 1));
    unsigned port = free_port();
    snprintf(coord, sizeof coord, "127.0.0.1:%u", port);
    pid_t pid[3];
    for (int r = 0; r < 3; r++)
        snprintf(logs[r], sizeof logs[r], "%s/r%d.log", dir, r);
#define RANK(r)                                                                \
    "'%s' train --world 3 --rank %d --coordinator %s '%s'", th_bin(), r,     \
        coord, data
    pid[0] = spawn(logs[0], RANK(0));
    int idle = -1;
    for (double t0 = now_s(); idle < 0 && now_s() - t0 < 20;)
        if ((idle = connect_port(port)) < 0)
            usleep(20000);
    cr_assert_geq(idle, 0, "rank 0 never listened:\n%s", slurp(logs[0]));
    /* Let rank 0 take the idle connection first. */
    usleep(300000);
    pid[1] = spawn(logs[1], RANK(1));
    pid[2] = spawn(logs[2], RANK(2));
#undef RANK
    int c[3];
    char l[3][1 << 12];
    for (int r = 0; r < 3; r++) {
        c[r] = wait_for(pid[r], 40);
        snprintf(l[r], sizeof l[r], "%s", slurp(logs[r]));
    }
    close(idle);
    cr_assert(c[0] == 0 && c[1] == 0 && c[2] == 0, "exit %d %d %d\n%s\n%s\n%s",
              c[0], c[1], c[2], l[0], l[1], l[2]);
}

/* A joining rank whose handshake goes unanswered (here a listener that
 * never accepts, then closes: the coordinator's place taken, or a
 * coordinator still starting) connects again until --connect-timeout, and
 * joins the real coordinator when it comes. */
Test(net, join_retries_until_connect_timeout, .timeout = 90)
{
    char dir[512], coord[64], log0[600], log1[600], data[600];
    th_tmpdir(dir, sizeof dir);
    static const char text[] = "1 1:1\n-1 2:1\n1 1:1 3:1\n-1 2:1 3:1\n";
    snprintf(data, sizeof data, "%s", th_write(dir, "d.svm", text,
                                               sizeof text - 1));
    snprintf(log0, sizeof log0, "%s/r0.log", dir);
    snprintf(log1, sizeof log1, "%s/r1.log", dir);
    /* CLOEXEC: the ranks spawned must not hold it once it is closed. */
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { 0 };
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    cr_assert_eq(bind(lfd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(lfd, 16), 0);
    socklen_t l = sizeof a;
    getsockname(lfd, (struct sockaddr *)&a, &l);
    snprintf(coord, sizeof coord, "127.0.0.1:%u", ntohs(a.sin_port));
    /* --net-timeout 1: a handshake step waits 1 s. */
    pid_t p1 = spawn(log1, "'%s' train --world 2 --rank 1 --coordinator %s "
                     "--connect-timeout 40 --net-timeout 1 '%s'", th_bin(),
                     coord, data);
    cr_assert(wait_text(log1, "trying again", 20), "%s", slurp(log1));
    close(lfd);
    pid_t p0 = spawn(log0, "'%s' train --world 2 --rank 0 --coordinator %s "
                     "--connect-timeout 40 --net-timeout 1 '%s'", th_bin(),
                     coord, data);
    int c0 = wait_for(p0, 40), c1 = wait_for(p1, 40);
    char l0[1 << 12];
    snprintf(l0, sizeof l0, "%s", slurp(log0));
    cr_assert(c0 == 0 && c1 == 0, "exit %d %d\n%s\n%s", c0, c1, l0,
              slurp(log1));
}

/* ---- training across processes ------------------------------------------------- */

/* The number after key in text; NaN when absent. */
static double number_after(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? strtod(p + strlen(key), NULL) : NAN;
}

static bool same_file(const char *a, const char *b)
{
    char out[256];
    return th_run(out, sizeof out, "cmp -s '%s' '%s'", a, b) == 0;
}

/* 3 processes, each every third row of news20.binary, reach the
 * single-process test accuracy within 1 point, and end with the same
 * model bit for bit. */
static void three_ranks_news20(const char *sync_args)
{
    TH_DATA_OR_SKIP(train, "news20.binary.train.svm");
    TH_DATA_OR_SKIP(test, "news20.binary.test.svm");
    char dir[512], out[1 << 14], logs[3][600], models[3][600], ckpt[600];
    th_tmpdir(dir, sizeof dir);
    int rc = th_run(out, sizeof out, "'%s' train '%s' -t '%s' 2>&1", th_bin(),
                    train, test);
    cr_assert_eq(rc, 0, "%s", out);
    double single = number_after(out, "test accuracy ");
    cr_assert(isfinite(single), "%s", out);

    char coord[64];
    snprintf(coord, sizeof coord, "127.0.0.1:%u", free_port());
    snprintf(ckpt, sizeof ckpt, "%s/ckpt.hgm", dir);
    pid_t pid[3];
    for (int r = 0; r < 3; r++) {
        snprintf(logs[r], sizeof logs[r], "%s/r%d.log", dir, r);
        snprintf(models[r], sizeof models[r], "%s/m%d.hgm", dir, r);
        pid[r] = spawn(logs[r], "'%s' train --world 3 --rank %d --coordinator "
                       "%s --shard stride --connect-timeout 20 --net-timeout "
                       "20 %s %s%s '%s' -t '%s' -o '%s'", th_bin(), r, coord,
                       sync_args, r == 0 ? "--checkpoint " : "",
                       r == 0 ? ckpt : "", train, test, models[r]);
    }
    double acc[3];
    for (int r = 0; r < 3; r++) {
        int c = wait_for(pid[r], 60);
        cr_assert_eq(c, 0, "rank %d exit %d:\n%s", r, c, slurp(logs[r]));
        acc[r] = number_after(slurp(logs[r]), "test accuracy ");
    }
    cr_assert(fabs(acc[0] - single) <= 1.0, "3 ranks %s: %.2f%%, one "
              "process %.2f%%", sync_args, acc[0], single);
    cr_assert(acc[0] == acc[1] && acc[1] == acc[2]);
    cr_assert(same_file(models[0], models[1]) && same_file(models[0], models[2]),
              "the ranks' models differ");
    struct stat st;
    cr_assert_eq(stat(ckpt, &st), 0, "no checkpoint written");
    rc = th_run(out, sizeof out, "ls -A '%s'", dir);
    cr_assert_null(strstr(out, ".tmp."), "temporary file left:\n%s", out);
}

/* MA: the step size scaled by the number of ranks (docs/SCALEOUT.md). */
Test(net, train_ma_news20, .timeout = 120)
{
    three_ranks_news20("--sync ma --sync-every 4000 --eta 1.5");
}

Test(net, train_bmuf_news20, .timeout = 120)
{
    three_ranks_news20("--sync bmuf --sync-every 1000");
}

/* Hogwild! inside each process: its threads stop at a barrier at every
 * block's end while thread 0 averages across the processes. */
Test(net, train_ma_hogwild_news20, .timeout = 120)
{
    three_ranks_news20("--sync ma --sync-every 4000 --eta 1.5 --algo hogwild "
                       "--threads 2");
}

/* K classes across processes: news20's 20 classes on 2 ranks of every
 * other row reach the single-process accuracy within 1.5 points with the
 * same model on both ranks: one-vs-rest (each class's vector averaged in
 * turn) and softmax (the K vectors averaged at once). */
static void two_ranks_news20_classes(const char *mode)
{
    TH_DATA_OR_SKIP(train, "news20.test.svm");
    TH_DATA_OR_SKIP(test, "news20.train.svm");
    char dir[512], out[1 << 14], logs[2][600], models[2][600], coord[64];
    th_tmpdir(dir, sizeof dir);
    int rc = th_run(out, sizeof out, "'%s' train --multiclass %s --epochs 2 "
                    "'%s' -t '%s' 2>&1", th_bin(), mode, train, test);
    cr_assert_eq(rc, 0, "%s", out);
    double single = number_after(out, "test accuracy ");
    cr_assert(isfinite(single), "%s", out);
    snprintf(coord, sizeof coord, "127.0.0.1:%u", free_port());
    pid_t pid[2];
    for (int r = 0; r < 2; r++) {
        snprintf(logs[r], sizeof logs[r], "%s/r%d.log", dir, r);
        snprintf(models[r], sizeof models[r], "%s/m%d.hgm", dir, r);
        pid[r] = spawn(logs[r], "'%s' train --world 2 --rank %d --coordinator "
                       "%s --shard stride --connect-timeout 20 --net-timeout "
                       "30 --multiclass %s --epochs 2 '%s' -t '%s' -o '%s'",
                       th_bin(), r, coord, mode, train, test, models[r]);
    }
    double acc[2];
    for (int r = 0; r < 2; r++) {
        int c = wait_for(pid[r], 150);
        cr_assert_eq(c, 0, "rank %d exit %d:\n%s", r, c, slurp(logs[r]));
        acc[r] = number_after(slurp(logs[r]), "test accuracy ");
        char said[64];
        snprintf(said, sizeof said, "of 20 classes (%s)",
                 strcmp(mode, "ovr") ? "softmax" : "one-vs-rest");
        cr_assert(strstr(slurp(logs[r]), said), "%s", slurp(logs[r]));
    }
    cr_assert(fabs(acc[0] - single) <= 1.5, "2 ranks, %s: %.2f%%, one "
              "process %.2f%%", mode, acc[0], single);
    cr_assert(same_file(models[0], models[1]), "the ranks' models differ");
}

Test(net, train_ma_news20_classes, .timeout = 180)
{
    two_ranks_news20_classes("ovr");
}

/* Skipped in the sanitizer builds: softmax's averaging is
 * softmax/averaged_at_every_block_end's there, and the K-class exchange
 * train_ma_news20_classes'. */
Test(net, train_ma_news20_softmax, .timeout = 180)
{
    TH_HEAVY_OR_SKIP();
    two_ranks_news20_classes("softmax");
}

/* Ranks whose files hold different classes are told so (each would train
 * other classes); BMUF with K classes is refused with a sentence. */
Test(net, classes_must_agree, .timeout = 60)
{
    char dir[512], logs[2][600], files[2][600], coord[64];
    th_tmpdir(dir, sizeof dir);
    static const char a[] = "1 1:1\n2 2:1\n3 3:1\n1 1:1 2:1\n";
    static const char b[] = "1 1:1\n2 2:1\n4 3:1\n1 1:1 2:1\n";
    snprintf(files[0], sizeof files[0], "%s", th_write(dir, "a.svm", a,
                                                       sizeof a - 1));
    snprintf(files[1], sizeof files[1], "%s", th_write(dir, "b.svm", b,
                                                       sizeof b - 1));
    for (int pass = 0; pass < 2; pass++) {
        snprintf(coord, sizeof coord, "127.0.0.1:%u", free_port());
        pid_t pid[2];
        for (int r = 0; r < 2; r++) {
            snprintf(logs[r], sizeof logs[r], "%s/p%d-r%d.log", dir, pass, r);
            pid[r] = spawn(logs[r], "'%s' train --world 2 --rank %d "
                           "--coordinator %s --connect-timeout 20 "
                           "--net-timeout 10 %s '%s'", th_bin(), r, coord,
                           pass ? "--sync bmuf" : "",
                           files[pass ? 0 : r]);
        }
        for (int r = 0; r < 2; r++) {
            int c = wait_for(pid[r], 40);
            const char *l = slurp(logs[r]);
            cr_assert_eq(c, 1, "rank %d exit %d:\n%s", r, c, l);
            if (pass == 0)
                cr_assert(strstr(l, "hold different classes"), "%s", l);
            else
                cr_assert(strstr(l, "drop --sync bmuf"), "%s", l);
        }
    }
}

/* kill -9 of one rank in the middle: the others exit within the timeout
 * (+5 s) with a sentence naming it. */
static void kill_one_rank(const char *algo)
{
    TH_DATA_OR_SKIP(train, "news20.binary.train.svm");
    char dir[512], logs[3][600], coord[64];
    th_tmpdir(dir, sizeof dir);
    snprintf(coord, sizeof coord, "127.0.0.1:%u", free_port());
    const double timeout = 3;
    pid_t pid[3];
    for (int r = 0; r < 3; r++) {
        snprintf(logs[r], sizeof logs[r], "%s/r%d.log", dir, r);
        pid[r] = spawn(logs[r], "'%s' train --world 3 --rank %d "
                       "--coordinator %s --shard stride --net-timeout %g "
                       "--connect-timeout 20 --sync-every 200 --epochs 1000 "
                       "%s '%s'", th_bin(), r, coord, timeout, algo, train);
    }
    /* Kill rank 1 once it trains (it has printed its epoch header). */
    cr_assert(wait_text(logs[0], "epoch", 30), "%s", slurp(logs[0]));
    usleep(300000);
    kill(pid[1], SIGKILL);
    double t0 = now_s();
    int c0 = wait_for(pid[0], timeout + 5), c2 = wait_for(pid[2], timeout + 5);
    double dt = now_s() - t0;
    waitpid(pid[1], NULL, 0);
    cr_assert(c0 == 1 && c2 == 1, "exit %d and %d after %.1f s:\n%s\n%s", c0,
              c2, dt, slurp(logs[0]), slurp(logs[2]));
    cr_assert(strstr(slurp(logs[0]), "rank 1 (127.0.0.1:"), "%s",
              slurp(logs[0]));
    cr_assert(strstr(slurp(logs[2]), "rank 1 (127.0.0.1:"), "%s",
              slurp(logs[2]));
}

Test(net, kill_one_rank, .timeout = 60) { kill_one_rank(""); }

/* The same with Hogwild!: thread 0's failed averaging stops the others at
 * their barrier, and the process exits with the sentence. */
Test(net, kill_one_rank_hogwild, .timeout = 60)
{
    kill_one_rank("--algo hogwild --threads 2");
}

/* A rank that stops answering (SIGSTOP): both survivors exit 1 within the
 * documented bound, the timeout plus the grace of min(timeout/2, 2 s)
 * (docs/SCALEOUT.md, Faults), and both name the stopped rank, never each
 * other. The bound is asserted from the stop, with 0.5 s for the block
 * the survivors are finishing and the processes' exit. */
Test(net, silent_rank_times_out, .timeout = 60)
{
    TH_DATA_OR_SKIP(train, "news20.binary.train.svm");
    char dir[512], logs[3][600], coord[64];
    th_tmpdir(dir, sizeof dir);
    snprintf(coord, sizeof coord, "127.0.0.1:%u", free_port());
    const double timeout = 4, bound = timeout + fmin(timeout / 2, 2) + 0.5;
    pid_t pid[3];
    for (int r = 0; r < 3; r++) {
        snprintf(logs[r], sizeof logs[r], "%s/r%d.log", dir, r);
        pid[r] = spawn(logs[r], "'%s' train --world 3 --rank %d "
                       "--coordinator %s --shard stride --net-timeout %g "
                       "--connect-timeout 20 --sync-every 200 --epochs 1000 "
                       "'%s'", th_bin(), r, coord, timeout, train);
    }
    cr_assert(wait_text(logs[0], "epoch", 30), "%s", slurp(logs[0]));
    usleep(300000);
    kill(pid[1], SIGSTOP);
    double t0 = now_s();
    int c0 = wait_for(pid[0], bound + 10);
    double dt0 = now_s() - t0;
    int c2 = wait_for(pid[2], bound + 10);
    double dt2 = now_s() - t0;
    kill(pid[1], SIGKILL);
    waitpid(pid[1], NULL, 0);
    char l0[1 << 12], l2[1 << 12];
    snprintf(l0, sizeof l0, "%s", slurp(logs[0]));
    snprintf(l2, sizeof l2, "%s", slurp(logs[2]));
    cr_assert(c0 == 1 && c2 == 1, "exit %d and %d:\n%s\n%s", c0, c2, l0, l2);
    /* Rank 2 follows the stopped rank and blames it; rank 0 hears of it
     * from rank 2's abort. */
    cr_assert(strstr(l2, "rank 1 (127.0.0.1:") &&
              strstr(l2, "sent nothing for 4 s"), "%s", l2);
    cr_assert(strstr(l0, "rank 1 (127.0.0.1:"), "rank 0 does not name rank "
              "1:\n%s", l0);
    const char *p = strstr(l0, "rank 2 (127.0.0.1:");
    cr_assert(!p || strstr(p, "stopped the all-reduce: rank 1 (127.0.0.1:"),
              "rank 0 blames rank 2:\n%s", l0);
    cr_log_info("the survivors exited %.2f s and %.2f s after the stop "
                "(bound %.2f s)", dt0, dt2, bound);
    cr_assert(dt0 <= bound && dt2 <= bound, "the survivors exited %.2f s and "
              "%.2f s after the stop; the bound is %.2f s (timeout %g s)", dt0,
              dt2, bound, timeout);
}

/* A peer that never connects: a start-up timeout naming it. */
Test(net, startup_timeout, .timeout = 30)
{
    char dir[512], log0[600], log1[600], coord[64];
    th_tmpdir(dir, sizeof dir);
    static const char text[] = "1 1:1\n-1 2:1\n";
    char data[600];
    snprintf(data, sizeof data, "%s", th_write(dir, "d.svm", text,
                                               sizeof text - 1));
    snprintf(log0, sizeof log0, "%s/r0.log", dir);
    snprintf(log1, sizeof log1, "%s/r1.log", dir);
    snprintf(coord, sizeof coord, "127.0.0.1:%u", free_port());
    pid_t p0 = spawn(log0, "'%s' train --world 3 --rank 0 --coordinator %s "
                     "--connect-timeout 2 '%s'", th_bin(), coord, data);
    pid_t p1 = spawn(log1, "'%s' train --world 3 --rank 1 --coordinator %s "
                     "--connect-timeout 2 '%s'", th_bin(), coord, data);
    cr_assert_eq(wait_for(p0, 10), 1);
    cr_assert_eq(wait_for(p1, 10), 1);
    cr_assert(strstr(slurp(log0), "rank 2 never joined"), "%s", slurp(log0));
    /* Rank 1 learns it from the coordinator closing on it. */
    cr_assert(strstr(slurp(log1), "coordinator 127.0.0.1:"), "%s",
              slurp(log1));

    /* Nobody listening at all. */
    pid_t p = spawn(log1, "'%s' train --world 2 --rank 1 --coordinator %s "
                    "--connect-timeout 1 '%s'", th_bin(), coord, data);
    cr_assert_eq(wait_for(p, 10), 1);
    cr_assert(strstr(slurp(log1), "could not reach the coordinator"), "%s",
              slurp(log1));
}

/* Without a secret, only loopback; ranks with different options refuse. */
Test(net, loopback_only_without_secret)
{
    char out[4096], dir[512], data[600];
    th_tmpdir(dir, sizeof dir);
    static const char text[] = "1 1:1\n-1 2:1\n";
    snprintf(data, sizeof data, "%s", th_write(dir, "d.svm", text,
                                               sizeof text - 1));
    /* Refused before any socket is made: no traffic leaves the machine. */
    int rc = th_run(out, sizeof out, "'%s' train --world 2 --rank 0 "
                    "--coordinator 10.200.0.1:9 --connect-timeout 1 "
                    "'%s' 2>&1", th_bin(), data);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "loopback"), "%s", out);
}

/* A malformed --coordinator is a usage error (exit 2, the usage line),
 * caught before any socket is made; a well-formed one goes on. */
Test(net, coordinator_malformed_is_usage_error, .timeout = 30)
{
    char out[4096], dir[512], data[600];
    th_tmpdir(dir, sizeof dir);
    static const char text[] = "1 1:1\n-1 2:1\n";
    snprintf(data, sizeof data, "%s", th_write(dir, "d.svm", text,
                                               sizeof text - 1));
    static const char *bad[] = { "nohost", "h:99999", ":", "h:", ":7000",
                                 "h:0", "h:12x", "[::1", "[::1]7000" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = th_run(out, sizeof out, "'%s' train --world 2 --rank 1 "
                        "--coordinator '%s' --connect-timeout 1 '%s'",
                        th_bin(), bad[i], data);
        cr_assert_eq(rc, 2, "--coordinator %s: exit %d\n%s", bad[i], rc, out);
        cr_assert(strstr(out, "usage: hogtrain train"), "%s", out);
        cr_assert(strstr(out, "coordinator '"), "%s", out);
    }
    /* Well formed, nobody there: a runtime error as before. */
    int rc = th_run(out, sizeof out, "'%s' train --world 2 --rank 1 "
                    "--coordinator 127.0.0.1:%u --connect-timeout 0.3 '%s'",
                    th_bin(), free_port(), data);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "could not reach the coordinator"), "%s", out);
}

Test(net, options_must_agree, .timeout = 30)
{
    char dir[512], log0[600], log1[600], coord[64], data[600];
    th_tmpdir(dir, sizeof dir);
    static const char text[] = "1 1:1\n-1 2:1\n1 1:1 3:1\n-1 2:1 3:1\n";
    snprintf(data, sizeof data, "%s", th_write(dir, "d.svm", text,
                                               sizeof text - 1));
    snprintf(log0, sizeof log0, "%s/r0.log", dir);
    snprintf(log1, sizeof log1, "%s/r1.log", dir);
    snprintf(coord, sizeof coord, "127.0.0.1:%u", free_port());
    pid_t p0 = spawn(log0, "'%s' train --world 2 --rank 0 --coordinator %s "
                     "--epochs 3 '%s'", th_bin(), coord, data);
    pid_t p1 = spawn(log1, "'%s' train --world 2 --rank 1 --coordinator %s "
                     "--epochs 4 '%s'", th_bin(), coord, data);
    cr_assert_eq(wait_for(p0, 20), 1);
    cr_assert_eq(wait_for(p1, 20), 1);
    cr_assert(strstr(slurp(log0), "different training options"), "%s",
              slurp(log0));
}

/* The MPI backend: mpirun -np 3 on loopback, when this build has MPI and
 * mpirun is installed. */
Test(net, mpi_three_ranks, .timeout = 120)
{
    char out[1 << 15];
    if (!hog_net_have_mpi())
        cr_skip_test("this build has no MPI (mpicc was not found); skipping");
    if (th_run(out, sizeof out, "command -v mpirun") != 0)
        cr_skip_test("mpirun is not installed; skipping");
    TH_DATA_OR_SKIP(train, "news20.binary.train.svm");
    TH_DATA_OR_SKIP(test, "news20.binary.test.svm");
    int rc = th_run(out, sizeof out, "'%s' train '%s' -t '%s' 2>&1", th_bin(),
                    train, test);
    cr_assert_eq(rc, 0, "%s", out);
    double single = number_after(out, "test accuracy ");
    rc = th_run(out, sizeof out,
                "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
                "OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo "
                "OMPI_MCA_oob_tcp_if_include=lo "
                "timeout 100 mpirun --oversubscribe -np 3 '%s' train --sync "
                "ma --eta 1.5 --sync-every 4000 --shard stride '%s' -t '%s' "
                "2>&1", th_bin(), train, test);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "rank 2 of 3 (mpi)"), "%s", out);
    /* Three summaries, one accuracy: the ranks hold the same model. */
    const char *p = out;
    double acc[3];
    for (int r = 0; r < 3; r++) {
        p = strstr(p, "test accuracy ");
        cr_assert_not_null(p, "%s", out);
        acc[r] = strtod(p + 14, NULL);
        p += 14;
    }
    cr_assert(acc[0] == acc[1] && acc[1] == acc[2], "%s", out);
    cr_assert(fabs(acc[0] - single) <= 1.0, "mpi %.2f%%, one process %.2f%%",
              acc[0], single);
}

/* Three ranks on three hosts of their own (network namespaces). */
Test(net, netns_three_hosts, .timeout = 90)
{
    char dir[512], out[1 << 15];
    th_tmpdir(dir, sizeof dir);
    int rc = th_run(out, sizeof out, "sh '%s/tests/net_netns.sh' '%s' '%s'",
                    getenv("HOGTRAIN_SRC") ? getenv("HOGTRAIN_SRC") : ".",
                    th_bin(), dir);
    if (rc == 77)
        cr_skip_test("%s", out);
    cr_assert_eq(rc, 0, "%s", out);
}

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
    cr_assert_eq(hog_train(d, NULL, &o, &plain, &err), HOG_OK, "%s", err.msg);
    struct hook_count c = { 0, 0, 1.0f };
    o.average = count_hook;
    o.average_ctx = &c;
    o.average_blocks = 7;
    cr_assert_eq(hog_train(d, NULL, &o, &hooked, &err), HOG_OK, "%s", err.msg);
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
    cr_assert_eq(hog_train(d, NULL, &o, &many, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(c.calls, 3 * 500);
    hog_model_free(many);
    /* Zero the model after every block: the final weights are zero. */
    c = (struct hook_count){ 0, 0, 0.0f };
    o.average_blocks = 2;
    cr_assert_eq(hog_train(d, NULL, &o, &scaled, &err), HOG_OK, "%s", err.msg);
    for (uint64_t j = 0; j < c.n; j++)
        cr_assert_eq(hog_model_weights(scaled)[j], 0.0f);
    /* Averaging asks for at least one block. */
    o.average_blocks = 0;
    hog_model *none;
    cr_assert_eq(hog_train(d, NULL, &o, &none, &err), HOG_EINVAL);
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
