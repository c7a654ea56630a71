/* src/net: SHA-256 / HMAC vectors, the ring all-reduce in 2, 3 and 4
 * processes on loopback (bit for bit), refused peers, and the command's
 * distributed training and faults. All on 127.0.0.1, ports picked by the
 * kernel (bind to port 0) so that concurrent test runs do not collide. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "net/net.h"

/* ---- SHA-256 (FIPS 180-4 examples) and HMAC-SHA256 (RFC 4231) ------------ */

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
    /* The same fed in uneven pieces. */
    struct hog_sha256 s;
    hog_sha256_init(&s);
    const unsigned char *p = msg;
    size_t step = 1;
    for (size_t o = 0; o < len; o += step, step = step * 3 % 97 + 1)
        hog_sha256_update(&s, p + o, o + step <= len ? step : len - o);
    hog_sha256_final(&s, d);
    hex(d, 32, h);
    cr_assert_str_eq(h, want);
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
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        unsigned char k[256], d[256], mac[32];
        size_t kl, dl;
        unhex(v[i].key, k, &kl);
        unhex(v[i].data, d, &dl);
        hog_hmac_sha256(k, kl, d, dl, mac);
        char h[65];
        hex(mac, 32, h);
        cr_assert_str_eq(h, v[i].mac, "RFC 4231 vector %zu", i + 1);
    }
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

/* The documented order: element i of segment s is
 * ((x_s + x_{s+1}) + ...) + x_{s-1}. */
static float reference(size_t i, size_t len, unsigned world)
{
    unsigned s = 0;
    for (unsigned k = 0; k < world; k++) {
        size_t lo, hi;
        hog_net_segment(len, world, k, &lo, &hi);
        if (i >= lo && i < hi)
            s = k;
    }
    float acc = input(s, i);
    for (unsigned k = 1; k < world; k++)
        acc = acc + input((s + k) % world, i);
    return acc;
}

struct ar_case {
    size_t len;
    size_t chunk;
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
    for (int round = 0; round < 2 && rc == 0; round++) {
        if (round == 1)
            for (size_t i = 0; i < c->len; i++)
                x[i] = input(rank, i);
        if (hog_net_allreduce_sum(n, x, c->len, &err) != HOG_OK) {
            fprintf(stderr, "rank %u: %s\n", rank, err.msg);
            rc = 3;
            break;
        }
        for (size_t i = 0; i < c->len; i++) {
            float want = reference(i, c->len, world);
            if (memcmp(&x[i], &want, 4) != 0) {
                fprintf(stderr, "rank %u: element %zu of %zu: %a, want %a\n",
                        rank, i, c->len, x[i], want);
                rc = 4;
                break;
            }
        }
    }
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
        { 1, 0 }, { 2, 0 }, { 3, 0 }, { 5, 0 }, { 1000, 64 }, { 1001, 64 },
        { 65537, 4096 }, { 1000003, 0 }, { 10000000, 0 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int codes[8];
        struct ar_case c = cases[k];
        unsigned ok = run_group(world, allreduce_child, &c, 60, codes);
        cr_assert_eq(ok, world, "%u ranks, %zu elements (chunk %zu): exit "
                     "codes %d %d %d %d", world, c.len, c.chunk, codes[0],
                     codes[1], world > 2 ? codes[2] : 0,
                     world > 3 ? codes[3] : 0);
    }
}

Test(net, allreduce_2_ranks, .timeout = 120) { allreduce_world(2); }
Test(net, allreduce_3_ranks, .timeout = 120) { allreduce_world(3); }
Test(net, allreduce_4_ranks, .timeout = 120) { allreduce_world(4); }
