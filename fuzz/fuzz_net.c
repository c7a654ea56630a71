/*
 * libFuzzer harness: the TCP backend's frame decoder and the server side of
 * its handshake (src/net/tcp.c), fed from a socket pair whose other end
 * holds the input and is then shut for writing. tcp.c is included whole:
 * frame_recv() and serve() are static, and the harness must reach them
 * without changing the backend. Any status is fine (a hostile peer is
 * refused); a crash, a leak, undefined behaviour or a hang is a finding.
 */
#include "fuzz_common.h"

#include "../src/net/tcp.c"

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
    set_nonblock(sv[0]);
    static unsigned char buf[1 << 16];
    struct frame f;
    for (int k = 0; k < 64; k++)
        if (frame_recv(sv[0], &f, buf, sizeof buf, 0.01, &err) != HOG_OK)
            break;
    close(sv[0]);
    close(sv[1]);

    /* the same bytes as the client's side of a handshake */
    feed(data, size, sv);
    set_nonblock(sv[0]);
    set_nonblock(sv[1]);
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
    (void)serve(&a, sv[0], "fuzz-peer", &w, &rank, &port, NULL, NULL, &err);
    close(sv[0]);
    close(sv[1]);
    return 0;
}
