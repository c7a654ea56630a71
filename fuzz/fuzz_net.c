/*
 * libFuzzer harness: the TCP backend's frame decoder (src/net/frame.c), the
 * server side of its handshake (auth.c), and the ring all-reduce's data
 * frames (ring.c), fed from a socket pair whose other end holds the input
 * and is then shut for writing. The backend's private header
 * (src/net/tcp_internal.h) gives the harness hog_tcp_frame_recv(), the
 * handshake set (hog_tcp_hs_add(), hog_tcp_hs_serve()) and the handle behind
 * hog_net_allreduce_sum(), without changing the backend. Any status is
 * fine (a hostile peer is refused); a crash, a leak, undefined behaviour
 * or a hang is a finding.
 *
 * The same input is read three ways: as control frames; as the client's
 * side of a handshake; and as the stream of data frames a ring predecessor
 * sends during an all-reduce, where its first 4 bytes set up the ring:
 *   byte 0: bits 0-1 world - 2 (3: 2), bits 5-7 rank mod world,
 *           bit 2 reseal (every frame's CRC recomputed, so that the checks
 *           behind the CRC are fuzzed too), bit 3 maximum of u64 instead of
 *           the float sum, bit 4 through hog_avg_step with BMUF (the sum);
 *   bytes 1-2: vector length (elements, < 2048), byte 3: chunk elements - 1
 *           (below 64).
 */
#include "fuzz_common.h"

#include "../src/net/tcp_internal.h"

#include <stdlib.h>
#include <string.h>

#include <signal.h>
#include <sys/socket.h>

/* A socket pair with data waiting on sv[0] and nothing more to come. */
static bool feed(const uint8_t *data, size_t size, int sv[2])
{
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        abort();
    int big = 1 << 20;
    setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    size_t done = 0;
    while (done < size) {
        ssize_t k = write(sv[1], data + done, size - done);
        if (k <= 0) { /* the buffer is full: feed what fits */
            break;
        }
        done += (size_t)k;
    }
    shutdown(sv[1], SHUT_WR);
    return true;
}

/* Recomputes the CRC of every frame of the stream s[0..n) in place. */
static void reseal(unsigned char *s, size_t n)
{
    size_t p = 0;
    while (n - p >= HDR) {
        uint32_t len = get32(s + p + 12);
        size_t have = n - p - HDR < len ? n - p - HDR : len;
        uint32_t c = hog_crc32c(hog_crc32c(0, s + p, 16), s + p + HDR, have);
        put32(s + p + 16, c);
        if (have < len)
            break;
        p += HDR + len;
    }
}

/* One all-reduce on a ring whose predecessor sends data[4..size). */
static void ring_frames(const uint8_t *data, size_t size)
{
    unsigned world = 2 + (data[0] & 3) % 3;
    unsigned rank = (data[0] >> 5) % world;
    bool max = data[0] & 8, bmuf = !max && (data[0] & 16);
    size_t len = (size_t)(data[1] | data[2] << 8) % 2048;
    size_t elem = max ? 8 : 4;
    size_t n = size - 4;
    unsigned char *s = malloc(n ? n : 1);
    if (!s)
        abort();
    memcpy(s, data + 4, n);
    if (data[0] & 4)
        reseal(s, n);

    int in[2], out[2];
    feed(s, n, in);
    free(s);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, out) != 0)
        abort();
    int big = 1 << 20;
    setsockopt(out[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    setsockopt(out[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    hog_tcp_set_nonblock(in[0]);
    hog_tcp_set_nonblock(out[0]);

    struct tcp *t = calloc(1, sizeof *t);
    if (!t)
        abort();
    t->base.ops = &hog_tcp_ops;
    t->base.world = world;
    t->base.rank = rank;
    t->prev_fd = in[0];
    t->next_fd = out[0];
    snprintf(t->prev_addr, sizeof t->prev_addr, "fuzz-prev");
    snprintf(t->next_addr, sizeof t->next_addr, "fuzz-next");
    t->timeout = 0.01;
    t->chunk = (size_t)(1 + data[3] % 64) * elem;
    t->protocol = HOG_NET_PROTOCOL;
    t->tmp = malloc(t->chunk);
    if (!t->tmp)
        abort();

    hog_err err;
    void *v = calloc(len ? len : 1, elem);
    if (!v)
        abort();
    for (size_t i = 0; i < len; i++) {
        if (max)
            ((uint64_t *)v)[i] = i * 0x9E3779B97F4A7C15u;
        else
            ((float *)v)[i] = (float)i * 0.25f;
    }
    if (bmuf) {
        struct hog_avg_opts ao;
        hog_avg_opts_init(&ao);
        ao.mode = HOG_AVG_BMUF;
        struct hog_avg *a;
        if (hog_avg_create(&t->base, &ao, &a, &err) != HOG_OK)
            abort();
        /* twice: the second call on a broken group must refuse too */
        for (int k = 0; k < 2; k++)
            (void)hog_avg_step(a, v, len, &err);
        hog_avg_free(a);
    } else if (max) {
        (void)hog_net_allreduce_max(&t->base, v, len, &err);
    } else {
        (void)hog_net_allreduce_sum(&t->base, v, len, &err);
    }
    free(v);
    /* The successor's end first: a broken group's close drains its sockets
     * until the peer's end (at most 0.5 s), which must come at once here. */
    close(out[1]);
    hog_net_close(&t->base);
    close(in[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool once;
    if (!once) {
        signal(SIGPIPE, SIG_IGN);
        once = true;
    }
    int sv[2];
    hog_err err;

    /* frames until the first error */
    feed(data, size, sv);
    hog_tcp_set_nonblock(sv[0]);
    static unsigned char buf[1 << 16];
    struct frame f;
    for (int k = 0; k < 64; k++)
        if (hog_tcp_frame_recv(sv[0], &f, buf, sizeof buf, 0.01, &err) !=
            HOG_OK)
            break;
    close(sv[0]);
    close(sv[1]);

    /* the same bytes as the client's side of a handshake */
    feed(data, size, sv);
    hog_tcp_set_nonblock(sv[0]);
    hog_tcp_set_nonblock(sv[1]);
    static const unsigned char secret[] = "fuzz-secret";
    struct auth a = { .secret = secret, .secret_len = sizeof secret - 1,
                      .job = "hogtrain", .world = 4,
                      .protocol = HOG_NET_PROTOCOL, .timeout = 0.01,
                      .log = NULL, .my_rank = 0 };
    bool taken[4] = { false, true, false, false };
    char taken_by[4][ADDR_MAX] = { "", "10.0.0.1:1", "", "" };
    struct want w = { .kind = KIND_JOIN, .lo = 1, .hi = 3, .taken = taken,
                      .taken_by = taken_by, .late = false };
    unsigned rank, port;
    struct hs_set hs;
    int fd = -1;
    char peer[ADDR_MAX];
    if (hog_tcp_hs_set_init(&hs, &err) != HOG_OK)
        abort();
    /* The set owns sv[0] from here. Every byte is there and then the
     * end: the handshake finishes (welcomed, refused and drained) at
     * once, well before the deadline. */
    if (hog_tcp_hs_add(&a, &hs, sv[0], "fuzz-peer", &err) == HOG_OK)
        (void)hog_tcp_hs_serve(&a, &hs, -1, &w, hog_now() + 1.0, NULL, NULL,
                               &fd, peer, &rank, &port, &err);
    if (fd >= 0)
        close(fd);
    hog_tcp_hs_set_free(&a, &hs);
    close(sv[1]);

    if (size >= 4)
        ring_frames(data, size);
    return 0;
}
