/*
 * The TCP backend's frames, and the timed transfers under them: a send or
 * a receive gives up after `timeout` seconds without progress, and says
 * how it ended (enum io_res); the caller makes the sentence, naming the
 * peer.
 *
 * Frame (little-endian, 20-byte header, then the payload):
 *     u32 magic "HGNT" | u16 version | u16 type | u32 rank | u32 length |
 *     u32 CRC32C over the first 16 header bytes and the payload
 *
 * Control frames are received whole here (hog_tcp_frame_recv); the listener
 * (auth.c) and the ring (ring.c) read theirs piecemeal from non-blocking
 * sockets and check them with the same header, length and CRC checks.
 */
#include "net/tcp_internal.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

/* Waits for ev on fd for at most `timeout` seconds without progress. */
enum io_res hog_tcp_io_wait(int fd, short ev, double timeout)
{
    struct pollfd p = { fd, ev, 0 };
    int ms = timeout > 2e6 ? 2000000000 : (int)(timeout * 1000) + 1;
    int rc;
    do
        rc = poll(&p, 1, ms);
    while (rc < 0 && errno == EINTR);
    if (rc == 0)
        return IO_TIMEOUT;
    return rc < 0 ? IO_ERR : IO_OK;
}

static enum io_res io_send(int fd, const void *buf, size_t len, double timeout)
{
    const char *p = buf;
    while (len) {
        ssize_t k = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k > 0) {
            p += k;
            len -= (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            enum io_res r = hog_tcp_io_wait(fd, POLLOUT, timeout);
            if (r != IO_OK)
                return r;
            continue;
        }
        return errno == EPIPE || errno == ECONNRESET ? IO_EOF : IO_ERR;
    }
    return IO_OK;
}

enum io_res hog_tcp_io_recv(int fd, void *buf, size_t len, double timeout)
{
    char *p = buf;
    while (len) {
        ssize_t k = recv(fd, p, len, MSG_DONTWAIT);
        if (k > 0) {
            p += k;
            len -= (size_t)k;
            continue;
        }
        if (k == 0)
            return IO_EOF;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            enum io_res r = hog_tcp_io_wait(fd, POLLIN, timeout);
            if (r != IO_OK)
                return r;
            continue;
        }
        return errno == ECONNRESET ? IO_EOF : IO_ERR;
    }
    return IO_OK;
}

const char *hog_tcp_io_what(enum io_res r, double timeout, char *buf,
                            size_t len)
{
    switch (r) {
    case IO_OK: return "no error";
    case IO_EOF: return "closed the connection";
    case IO_TIMEOUT:
        snprintf(buf, len, "did not answer for %g s", timeout);
        return buf;
    case IO_ERR:
        snprintf(buf, len, "connection failed: %s", strerror(errno));
        return buf;
    }
    return "?";
}

void hog_tcp_frame_header(unsigned char *h, unsigned version, uint32_t type,
                          uint32_t rank, uint32_t len, const void *payload,
                          size_t crc_len)
{
    put32(h, MAGIC);
    put16(h + 4, version);
    put16(h + 6, type);
    put32(h + 8, rank);
    put32(h + 12, len);
    uint32_t c = hog_crc32c(0, h, 16);
    put32(h + 16, hog_crc32c(c, payload, crc_len));
}

enum io_res hog_tcp_frame_send(int fd, unsigned version, uint32_t type,
                               uint32_t rank, const void *payload, size_t len,
                               double timeout)
{
    unsigned char h[HDR];
    hog_tcp_frame_header(h, version, type, rank, (uint32_t)len, payload, len);
    enum io_res r = io_send(fd, h, HDR, timeout);
    return r != IO_OK || !len ? r : io_send(fd, payload, len, timeout);
}

hog_status hog_tcp_frame_check_header(const unsigned char *h, struct frame *f,
                                      hog_err *err)
{
    if (get32(h) != MAGIC)
        return hog_errf(err, HOG_ENET, "not a hogtrain peer (bad frame "
                        "magic 0x%08x)", (unsigned)get32(h));
    f->version = get16(h + 4);
    f->type = get16(h + 6);
    f->rank = get32(h + 8);
    f->len = get32(h + 12);
    if (f->version != HOG_NET_PROTOCOL && f->type != T_REFUSE)
        return hog_errf(err, HOG_ENET, "speaks protocol version %u, this "
                        "hogtrain speaks version %u", f->version,
                        HOG_NET_PROTOCOL);
    return HOG_OK;
}

hog_status hog_tcp_frame_check_len(const struct frame *f, size_t max,
                                   hog_err *err)
{
    if (f->len > max)
        return hog_errf(err, HOG_ENET, "sent a frame of %u bytes where at "
                        "most %zu fit (type %u)", (unsigned)f->len, max,
                        f->type);
    return HOG_OK;
}

hog_status hog_tcp_frame_check_crc(const unsigned char *h,
                                   const struct frame *f, const void *payload,
                                   hog_err *err)
{
    uint32_t c = hog_crc32c(hog_crc32c(0, h, 16), payload, f->len);
    if (c != get32(h + 16))
        return hog_errf(err, HOG_ENET, "sent a frame whose checksum does not "
                        "match (type %u, %u bytes)", f->type,
                        (unsigned)f->len);
    return HOG_OK;
}

/* *io (if not NULL) says whether the transfer itself failed (a timeout, a
 * closed or broken connection) rather than the frame being wrong. */
hog_status hog_tcp_frame_recv_io(int fd, struct frame *f, void *buf, size_t max,
                                 double timeout, enum io_res *io, hog_err *err)
{
    unsigned char h[HDR];
    char why[128];
    enum io_res r = hog_tcp_io_recv(fd, h, HDR, timeout);
    if (r == IO_OK) {
        hog_status st = hog_tcp_frame_check_header(h, f, err);
        if (st == HOG_OK)
            st = hog_tcp_frame_check_len(f, max, err);
        if (st != HOG_OK)
            return st;
        r = hog_tcp_io_recv(fd, buf, f->len, timeout);
    }
    if (io)
        *io = r;
    if (r != IO_OK)
        return hog_errf(err, r == IO_TIMEOUT ? HOG_ETIMEDOUT : HOG_ENET, "%s",
                        hog_tcp_io_what(r, timeout, why, sizeof why));
    return hog_tcp_frame_check_crc(h, f, buf, err);
}

hog_status hog_tcp_frame_recv(int fd, struct frame *f, void *buf, size_t max,
                              double timeout, hog_err *err)
{
    return hog_tcp_frame_recv_io(fd, f, buf, max, timeout, NULL, err);
}
