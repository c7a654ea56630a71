/*
 * The TCP backend: rendezvous, authenticated handshakes, framed messages
 * and the pipelined ring all-reduce.
 *
 * Frame (little-endian, 20-byte header, then the payload):
 *     u32 magic "HGNT" | u16 version | u16 type | u32 rank | u32 length |
 *     u32 CRC32C over the first 16 header bytes and the payload
 *
 * Handshake (the same for joining the coordinator and for ring links),
 * client C connects to server S:
 *     C -> S  HELLO1  kind, rank, world, ring port, nonce_c, job id
 *     S -> C  CHALLENGE nonce_s
 *     C -> S  PROOF   HMAC(secret, "hogtrain-c" | nonce_s | HELLO1 payload)
 *     S -> C  WELCOME HMAC(secret, "hogtrain-s" | nonce_c | nonce_s)
 *          or REFUSE  a sentence
 * Both first messages go out before either side waits, so that every rank
 * can connect to its successor and accept its predecessor without a cycle
 * of waits.
 *
 * Ring all-reduce (Patarasuk and Yuan 2009): 2(world-1) steps; rank r sends
 * segment (r - t) mod world at reduce-scatter step t and receives
 * (r - t - 1), adding it into its own copy; then passes the finished
 * segments on round the ring. Every segment is cut into chunks and a chunk
 * is sent on as soon as it arrived and was added, so the steps overlap and
 * every link carries 2(world-1)/world of the vector: bandwidth-optimal.
 * Each sum is computed once, by one rank, and copied to the others, so all
 * ranks end with the same bits. A rank with more to send but nothing ready
 * sends WAIT frames (a bare header) now and then, so that only the rank
 * right after a silent one hears nothing and blames it (ring_run).
 */
#include "net/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAGIC 0x544e4748u /* "HGNT" */
#define HDR 20
#define CTRL_MAX 65536
#define ADDR_MAX 72
#define JOB_MAX 255

enum {
    T_HELLO1 = 1,
    T_CHALLENGE,
    T_PROOF,
    T_WELCOME,
    T_REFUSE,
    T_TABLE,
    T_READY,
    T_GO,
    T_DATA,
    T_ABORT,
    T_WAIT /* protocol 2: "alive, waiting on my predecessor" */
};
enum { KIND_JOIN = 1, KIND_RING = 2 };

struct tcp {
    struct hog_net base; /* first: the handle */
    int next_fd, prev_fd;
    char next_addr[ADDR_MAX], prev_addr[ADDR_MAX];
    double timeout;
    size_t chunk;
    unsigned protocol;
    unsigned char *tmp; /* one chunk */
    bool broken;
    char broken_msg[HOG_ERR_MAX];
};

/* The ring neighbours: this rank sends to next and receives from prev. */
static unsigned next_rank(const struct tcp *t)
{
    return (t->base.rank + 1) % t->base.world;
}

static unsigned prev_rank(const struct tcp *t)
{
    return (t->base.rank + t->base.world - 1) % t->base.world;
}

/* ---- little helpers ---------------------------------------------------------- */

static void put16(unsigned char *p, uint32_t v) { p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); }
static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

void hog_net_opts_init(struct hog_net_opts *o)
{
    memset(o, 0, sizeof *o);
    o->world = 1;
    o->connect_timeout = 60;
    o->timeout = 60;
}

void hog_net_segment(size_t len, unsigned world, unsigned s, size_t *lo,
                     size_t *hi)
{
    /* 128-bit products: len * world never overflows. */
    *lo = (size_t)((unsigned __int128)len * s / world);
    *hi = (size_t)((unsigned __int128)len * (s + 1) / world);
}

static void addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const void *)sa;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        port = ntohs(a->sin_port);
        snprintf(buf, len, "%s:%u", host, port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)sa;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        port = ntohs(a->sin6_port);
        snprintf(buf, len, "[%s]:%u", host, port);
    } else {
        snprintf(buf, len, "(unknown address)");
    }
}

static bool is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const void *)sa;
        return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)sa;
        return IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
    }
    return false;
}

/* "host:port", "[v6]:port" -> host, port. */
static hog_status split_hostport(const char *s, char *host, size_t hlen,
                                 char *port, size_t plen, hog_err *err)
{
    const char *colon;
    const char *h = s;
    size_t n;
    if (!s || !*s)
        return hog_errf(err, HOG_EINVAL, "no coordinator address (HOST:PORT)");
    if (s[0] == '[') {
        const char *e = strchr(s, ']');
        if (!e || e[1] != ':')
            return hog_errf(err, HOG_EINVAL, "coordinator '%s': expected "
                            "[IPV6]:PORT", s);
        h = s + 1;
        n = (size_t)(e - h);
        colon = e + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon)
            return hog_errf(err, HOG_EINVAL, "coordinator '%s': expected "
                            "HOST:PORT", s);
        n = (size_t)(colon - s);
    }
    const char *p = colon + 1;
    char *end;
    long v = strtol(p, &end, 10);
    if (!*p || *end || v < 1 || v > 65535 || n == 0 || n >= hlen ||
        strlen(p) >= plen)
        return hog_errf(err, HOG_EINVAL, "coordinator '%s': expected "
                        "HOST:PORT with a port from 1 to 65535", s);
    memcpy(host, h, n);
    host[n] = 0;
    strcpy(port, p);
    return HOG_OK;
}

hog_status hog_net_check_address(const char *hostport, hog_err *err)
{
    char host[256], port[16];
    return split_hostport(hostport, host, sizeof host, port, sizeof port, err);
}

static hog_status resolve(const char *hostport, struct sockaddr_storage *ss,
                          socklen_t *sl, hog_err *err)
{
    char host[256], port[16];
    hog_status st = split_hostport(hostport, host, sizeof host, port,
                                   sizeof port, err);
    if (st != HOG_OK)
        return st;
    struct addrinfo hints = { 0 }, *res;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0)
        return hog_errf(err, HOG_ENET, "coordinator '%s': cannot resolve "
                        "%s: %s", hostport, host, gai_strerror(rc));
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *sl = res->ai_addrlen;
    freeaddrinfo(res);
    return HOG_OK;
}

static void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void set_bufs(int fd)
{
    int sz = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
}

static void sleep_s(double s)
{
    struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
    nanosleep(&ts, NULL);
}

/* Outcome of a transfer, turned into a sentence by the caller. */
enum io_res { IO_OK = 0, IO_EOF, IO_TIMEOUT, IO_ERR };

/* Waits for ev on fd for at most `timeout` seconds without progress. */
static enum io_res io_wait(int fd, short ev, double timeout)
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
            enum io_res r = io_wait(fd, POLLOUT, timeout);
            if (r != IO_OK)
                return r;
            continue;
        }
        return errno == EPIPE || errno == ECONNRESET ? IO_EOF : IO_ERR;
    }
    return IO_OK;
}

static enum io_res io_recv(int fd, void *buf, size_t len, double timeout)
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
            enum io_res r = io_wait(fd, POLLIN, timeout);
            if (r != IO_OK)
                return r;
            continue;
        }
        return errno == ECONNRESET ? IO_EOF : IO_ERR;
    }
    return IO_OK;
}

static const char *io_what(enum io_res r, double timeout, char *buf, size_t len)
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

static void frame_header(unsigned char *h, unsigned version, uint32_t type,
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

static enum io_res frame_send(int fd, unsigned version, uint32_t type,
                              uint32_t rank, const void *payload, size_t len,
                              double timeout)
{
    unsigned char h[HDR];
    frame_header(h, version, type, rank, (uint32_t)len, payload, len);
    enum io_res r = io_send(fd, h, HDR, timeout);
    return r != IO_OK || !len ? r : io_send(fd, payload, len, timeout);
}

/* A control frame: up to max payload bytes into buf. The reason of a
 * failure (without the peer's address) goes into err. */
struct frame {
    unsigned version, type, rank;
    uint32_t len;
};

static hog_status frame_check_header(const unsigned char *h, struct frame *f,
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

static hog_status frame_check_len(const struct frame *f, size_t max,
                                  hog_err *err)
{
    if (f->len > max)
        return hog_errf(err, HOG_ENET, "sent a frame of %u bytes where at "
                        "most %zu fit (type %u)", (unsigned)f->len, max,
                        f->type);
    return HOG_OK;
}

static hog_status frame_check_crc(const unsigned char *h, const struct frame *f,
                                  const void *payload, hog_err *err)
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
static hog_status frame_recv_io(int fd, struct frame *f, void *buf, size_t max,
                                double timeout, enum io_res *io, hog_err *err)
{
    unsigned char h[HDR];
    char why[128];
    enum io_res r = io_recv(fd, h, HDR, timeout);
    if (r == IO_OK) {
        hog_status st = frame_check_header(h, f, err);
        if (st == HOG_OK)
            st = frame_check_len(f, max, err);
        if (st != HOG_OK)
            return st;
        r = io_recv(fd, buf, f->len, timeout);
    }
    if (io)
        *io = r;
    if (r != IO_OK)
        return hog_errf(err, r == IO_TIMEOUT ? HOG_ETIMEDOUT : HOG_ENET, "%s",
                        io_what(r, timeout, why, sizeof why));
    return frame_check_crc(h, f, buf, err);
}

static hog_status frame_recv(int fd, struct frame *f, void *buf, size_t max,
                             double timeout, hog_err *err)
{
    return frame_recv_io(fd, f, buf, max, timeout, NULL, err);
}

/* ---- handshake ------------------------------------------------------------------- */

struct auth {
    const unsigned char *secret;
    size_t secret_len;
    const char *job;
    unsigned world;
    unsigned protocol; /* what we speak */
    double timeout;
    FILE *log;
    unsigned my_rank;
};

/* HELLO1 payload: u32 kind, u32 rank, u32 world, u16 port, 32 nonce_c,
 * u8 job length, job. */
#define H1_FIXED (4 + 4 + 4 + 2 + 32 + 1)

struct hello {
    unsigned kind, rank, world, port;
    unsigned char nonce[32];
    char job[JOB_MAX + 1];
    unsigned char raw[H1_FIXED + JOB_MAX];
    size_t raw_len;
};

static void proof(const struct auth *a, const char *label,
                  const unsigned char *n1, const unsigned char *n2,
                  const void *extra, size_t extra_len, unsigned char out[32])
{
    unsigned char msg[16 + 64 + H1_FIXED + JOB_MAX];
    size_t l = strlen(label);
    memcpy(msg, label, l);
    memcpy(msg + l, n1, 32);
    memcpy(msg + l + 32, n2, 32);
    memcpy(msg + l + 64, extra, extra_len);
    hog_hmac_sha256(a->secret, a->secret_len, msg, l + 64 + extra_len, out);
}

/* Client, first message. */
/* The client steps set *lost (if not NULL) when the connection failed or
 * the server did not answer in time, as opposed to a refusal or a wrong
 * proof: a joining rank tries again on a new connection. */
static hog_status client_hello(const struct auth *a, int fd, unsigned kind,
                               unsigned port, struct hello *h,
                               const char *peer, bool *lost, hog_err *err)
{
    hog_status st = hog_net_nonce(h->nonce, err);
    if (st != HOG_OK)
        return st;
    size_t jl = strlen(a->job);
    unsigned char *p = h->raw;
    put32(p, kind);
    put32(p + 4, a->my_rank);
    put32(p + 8, a->world);
    put16(p + 12, port);
    memcpy(p + 14, h->nonce, 32);
    p[46] = (unsigned char)jl;
    memcpy(p + 47, a->job, jl);
    h->raw_len = H1_FIXED + jl;
    char why[128];
    enum io_res r = frame_send(fd, a->protocol, T_HELLO1, a->my_rank, h->raw,
                               h->raw_len, a->timeout);
    if (lost)
        *lost = r != IO_OK;
    if (r != IO_OK)
        return hog_errf(err, HOG_ENET, "%s %s", peer,
                        io_what(r, a->timeout, why, sizeof why));
    return HOG_OK;
}

/* Client: challenge in, proof out. */
static hog_status client_prove(const struct auth *a, int fd,
                               struct hello *h, unsigned char nonce_s[32],
                               const char *peer, bool *lost, hog_err *err)
{
    struct frame f;
    unsigned char buf[1024];
    hog_err e;
    enum io_res io = IO_OK;
    hog_status st = frame_recv_io(fd, &f, buf, sizeof buf - 1, a->timeout,
                                  &io, &e);
    if (lost)
        *lost = io != IO_OK;
    if (st != HOG_OK)
        return hog_errf(err, st, "%s: %s", peer, e.msg);
    if (f.type == T_REFUSE) {
        buf[f.len] = 0;
        return hog_errf(err, HOG_ENET, "%s refused rank %u: %s", peer,
                        a->my_rank, (char *)buf);
    }
    if (f.type != T_CHALLENGE || f.len != 32)
        return hog_errf(err, HOG_ENET, "%s: expected a challenge, got a "
                        "frame of type %u", peer, f.type);
    memcpy(nonce_s, buf, 32);
    unsigned char pr[32];
    proof(a, "hogtrain-c", nonce_s, h->nonce, h->raw, h->raw_len, pr);
    char why[128];
    enum io_res r = frame_send(fd, a->protocol, T_PROOF, a->my_rank, pr, 32,
                               a->timeout);
    if (lost)
        *lost = r != IO_OK;
    if (r != IO_OK)
        return hog_errf(err, HOG_ENET, "%s %s", peer,
                        io_what(r, a->timeout, why, sizeof why));
    return HOG_OK;
}

/* Client: welcome (server's proof) or refusal. */
static hog_status client_welcome(const struct auth *a, int fd,
                                 const struct hello *h,
                                 const unsigned char nonce_s[32],
                                 const char *peer, bool *lost, hog_err *err)
{
    struct frame f;
    unsigned char buf[1024];
    hog_err e;
    enum io_res io = IO_OK;
    hog_status st = frame_recv_io(fd, &f, buf, sizeof buf - 1, a->timeout,
                                  &io, &e);
    if (lost)
        *lost = io != IO_OK;
    if (st != HOG_OK)
        return hog_errf(err, st, "%s: %s", peer, e.msg);
    if (f.type == T_REFUSE) {
        buf[f.len] = 0;
        return hog_errf(err, HOG_ENET, "%s refused rank %u: %s", peer,
                        a->my_rank, (char *)buf);
    }
    unsigned char want[32];
    proof(a, "hogtrain-s", h->nonce, nonce_s, "", 0, want);
    if (f.type != T_WELCOME || f.len != 32 || !hog_net_equal32(buf, want))
        return hog_errf(err, HOG_ENET, "%s does not hold this job's secret "
                        "(its proof does not match)", peer);
    return HOG_OK;
}

/* What a server accepts: kind, a rank range, ranks already taken. */
struct want {
    unsigned kind;
    unsigned lo, hi;        /* inclusive */
    const bool *taken;      /* NULL: none */
    char (*taken_by)[ADDR_MAX];
    bool late;              /* joins come too late: refuse them as such */
};

static void refuse(const struct auth *a, int fd, const char *peer,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void refuse(const struct auth *a, int fd, const char *peer,
                   const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (a->log) {
        fprintf(a->log, "hogtrain: rank %u: refused %s: %s\n", a->my_rank,
                peer, msg);
        fflush(a->log);
    }
    if (fd >= 0)
        (void)frame_send(fd, HOG_NET_PROTOCOL, T_REFUSE, a->my_rank, msg,
                         strlen(msg), 1.0);
}

/* ---- serving handshakes, many at a time -------------------------------------- */

/* A listener serves every connection in its handshake at once, under one
 * poll: a peer that connects and stays silent (or sends half a frame)
 * holds only its own connection, for at most a->timeout per step, never
 * the ranks behind it. A refused connection stays in the set while it is
 * drained (half a second at most, so that the refusal is not lost to a
 * reset), without holding the others either. */

/* Connections in their handshake at once; more wait in the backlog. */
#define HS_MAX 64

struct hs_conn {
    int fd;
    char peer[ADDR_MAX];
    enum { HS_HELLO, HS_PROOF, HS_CLOSING } state;
    double deadline;            /* of this step (closing: of the drain) */
    unsigned char nonce_s[32];
    struct hello h;
    unsigned char in[HDR + H1_FIXED + JOB_MAX]; /* the frame coming in */
    size_t got;
};

struct hs_set {
    struct hs_conn *c; /* HS_MAX */
    unsigned n;
};

static hog_status hs_set_init(struct hs_set *s, hog_err *err)
{
    s->n = 0;
    s->c = malloc(HS_MAX * sizeof *s->c);
    return s->c ? HOG_OK : hog_errf(err, HOG_ENOMEM, "out of memory");
}

/* Takes c out of the set; its fd stays open. */
static void hs_remove(struct hs_set *s, struct hs_conn *c)
{
    *c = s->c[--s->n];
}

/* After a refusal: no more from us, drain what the peer still sends. */
static void hs_refused(struct hs_conn *c)
{
    shutdown(c->fd, SHUT_WR);
    c->state = HS_CLOSING;
    c->deadline = hog_now() + 0.5;
}

/* A new connection: the challenge goes out at once (both first messages
 * before either side waits, see the top of the file). */
static hog_status hs_add(const struct auth *a, struct hs_set *s, int fd,
                         const char *peer, hog_err *err)
{
    struct hs_conn *c = &s->c[s->n];
    hog_status st = hog_net_nonce(c->nonce_s, err);
    if (st != HOG_OK) {
        close(fd);
        return st;
    }
    s->n++;
    c->fd = fd;
    snprintf(c->peer, sizeof c->peer, "%s", peer);
    c->state = HS_HELLO;
    c->got = 0;
    c->deadline = hog_now() + a->timeout;
    char why[128];
    enum io_res r = frame_send(fd, a->protocol, T_CHALLENGE, a->my_rank,
                               c->nonce_s, 32, a->timeout);
    if (r != IO_OK) {
        refuse(a, -1, peer, "%s", io_what(r, a->timeout, why, sizeof why));
        hs_refused(c);
    }
    return HOG_OK;
}

/* Reads what has arrived of the frame in c->in: 1 when it is whole (f
 * describes it), 0 when more is to come, -1 on an error (e says why). */
static int hs_read_frame(struct hs_conn *c, struct frame *f, hog_err *e)
{
    for (;;) {
        if (c->got >= HDR) {
            if (frame_check_header(c->in, f, e) != HOG_OK ||
                frame_check_len(f, sizeof c->in - HDR, e) != HOG_OK)
                return -1;
            if (c->got == HDR + f->len)
                return frame_check_crc(c->in, f, c->in + HDR, e) == HOG_OK
                           ? 1 : -1;
        }
        /* Never past this frame: the next one stays in the socket. */
        size_t want = c->got < HDR ? HDR - c->got : HDR + f->len - c->got;
        ssize_t k = recv(c->fd, c->in + c->got, want, MSG_DONTWAIT);
        if (k > 0) {
            c->got += (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (k == 0 || errno == ECONNRESET)
            hog_errf(e, HOG_ENET, "closed the connection");
        else
            hog_errf(e, HOG_ENET, "connection failed: %s", strerror(errno));
        return -1;
    }
}

enum hs_res { HS_MORE, HS_DONE, HS_REFUSED, HS_FAILED };

/* The hello: its checks before the proof is awaited. */
static enum hs_res hs_hello(const struct auth *a, struct hs_conn *c,
                            const struct frame *f)
{
    const unsigned char *buf = c->in + HDR;
    if (f->type != T_HELLO1 || f->len < H1_FIXED ||
        f->len != (uint32_t)(H1_FIXED + buf[46])) {
        refuse(a, c->fd, c->peer, "expected a hello, got a frame of type %u "
               "and %u bytes", f->type, (unsigned)f->len);
        return HS_REFUSED;
    }
    struct hello *h = &c->h;
    h->kind = get32(buf);
    h->rank = get32(buf + 4);
    h->world = get32(buf + 8);
    h->port = get16(buf + 12);
    memcpy(h->nonce, buf + 14, 32);
    memcpy(h->job, buf + 47, buf[46]);
    h->job[buf[46]] = 0;
    memcpy(h->raw, buf, f->len);
    h->raw_len = f->len;
    if (strcmp(h->job, a->job) != 0) {
        refuse(a, c->fd, c->peer, "it belongs to job '%s', this is job '%s'",
               h->job, a->job);
        return HS_REFUSED;
    }
    if (h->world != a->world) {
        refuse(a, c->fd, c->peer, "it counts %u ranks, this job has %u",
               h->world, a->world);
        return HS_REFUSED;
    }
    return HS_MORE;
}

/* The proof, then the roles: welcome, or a refusal. */
static enum hs_res hs_proof(const struct auth *a, struct hs_conn *c,
                            const struct frame *f, const struct want *w)
{
    const struct hello *h = &c->h;
    unsigned char want_pr[32];
    proof(a, "hogtrain-c", c->nonce_s, h->nonce, h->raw, h->raw_len, want_pr);
    if (f->type != T_PROOF || f->len != 32 ||
        !hog_net_equal32(c->in + HDR, want_pr)) {
        refuse(a, c->fd, c->peer, "wrong secret (its proof does not match "
               "this job's secret)");
        return HS_REFUSED;
    }
    /* Authenticated: now the roles. */
    if (h->kind != w->kind || h->rank < w->lo || h->rank > w->hi) {
        if (h->kind == KIND_JOIN && w->taken && h->rank < a->world &&
            w->taken[h->rank])
            refuse(a, c->fd, c->peer, "rank %u is already taken by %s",
                   h->rank, w->taken_by[h->rank]);
        else if (h->kind == KIND_JOIN && w->late)
            refuse(a, c->fd, c->peer, "rank %u joins too late: the job's %u "
                   "ranks have all joined", h->rank, a->world);
        else if (h->kind == KIND_JOIN)
            refuse(a, c->fd, c->peer, "rank %u is not a rank of this %u-rank "
                   "job that may join (0 is the coordinator)", h->rank,
                   a->world);
        else
            refuse(a, c->fd, c->peer, "unexpected ring link from rank %u "
                   "(want rank %u)", h->rank, w->lo);
        return HS_REFUSED;
    }
    if (w->taken && w->taken[h->rank]) {
        refuse(a, c->fd, c->peer, "rank %u is already taken by %s", h->rank,
               w->taken_by[h->rank]);
        return HS_REFUSED;
    }
    unsigned char pr[32];
    char why[128];
    proof(a, "hogtrain-s", h->nonce, c->nonce_s, "", 0, pr);
    enum io_res r = frame_send(c->fd, a->protocol, T_WELCOME, a->my_rank, pr,
                               32, a->timeout);
    if (r != IO_OK) {
        refuse(a, -1, c->peer, "%s", io_what(r, a->timeout, why, sizeof why));
        return HS_REFUSED;
    }
    return HS_DONE;
}

/* What has arrived on c. `between` runs once the hello passed its checks
 * and before the proof is awaited (the ring set-up does its own client
 * step there); its failure is HS_FAILED with its status in *st. */
static enum hs_res hs_input(const struct auth *a, struct hs_conn *c,
                            const struct want *w,
                            hog_status (*between)(void *), void *bctx,
                            hog_status *st)
{
    if (c->state == HS_CLOSING) {
        char sink[16384];
        ssize_t k = recv(c->fd, sink, sizeof sink, MSG_DONTWAIT);
        bool more = k > 0 || (k < 0 && (errno == EAGAIN || errno == EINTR));
        return more ? HS_MORE : HS_REFUSED;
    }
    struct frame f;
    hog_err e;
    int k = hs_read_frame(c, &f, &e);
    if (k == 0)
        return HS_MORE;
    if (k < 0) {
        refuse(a, c->fd, c->peer, "%s", e.msg);
        hs_refused(c);
        return HS_MORE;
    }
    enum hs_res r = c->state == HS_HELLO ? hs_hello(a, c, &f)
                                         : hs_proof(a, c, &f, w);
    c->got = 0;
    if (r == HS_REFUSED) {
        hs_refused(c);
        return HS_MORE;
    }
    if (r == HS_MORE) {
        if (between && (*st = between(bctx)) != HOG_OK)
            return HS_FAILED;
        c->state = HS_PROOF;
        c->deadline = hog_now() + a->timeout;
    }
    return r;
}

/* Serves every connection of s, accepting new ones from lfd (-1: none)
 * while fewer than HS_MAX are in the set, until one is welcomed (*fd, its
 * address in peer, its *rank and ring *port; it leaves the set), the
 * deadline passes or nothing is left to wait for (*fd = -1), or a failure
 * that ends the rendezvous (accept, poll, `between`). */
static hog_status hs_serve(const struct auth *a, struct hs_set *s, int lfd,
                           const struct want *w, double deadline,
                           hog_status (*between)(void *), void *bctx,
                           int *fd, char *peer, unsigned *rank,
                           unsigned *port, hog_err *err)
{
    *fd = -1;
    for (;;) {
        double now = hog_now(), until = deadline;
        for (unsigned i = s->n; i-- > 0;) {
            struct hs_conn *c = &s->c[i];
            if (now < c->deadline) {
                until = c->deadline < until ? c->deadline : until;
                continue;
            }
            if (c->state == HS_CLOSING) {
                close(c->fd);
                hs_remove(s, c);
                continue;
            }
            refuse(a, c->fd, c->peer, "did not answer for %g s", a->timeout);
            hs_refused(c);
            until = c->deadline < until ? c->deadline : until;
        }
        if (now >= deadline || (lfd < 0 && s->n == 0))
            return HOG_OK;
        struct pollfd pf[HS_MAX + 1];
        pf[0] = (struct pollfd){ s->n < HS_MAX ? lfd : -1, POLLIN, 0 };
        for (unsigned i = 0; i < s->n; i++)
            pf[i + 1] = (struct pollfd){ s->c[i].fd, POLLIN, 0 };
        double left = until - now;
        int rc = poll(pf, s->n + 1, left > 2e6 ? 2000000000
                                               : (int)(left * 1000) + 1);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0)
            return hog_errf(err, HOG_ENET, "poll: %s", strerror(errno));
        /* Downwards: a removal moves the last connection, already seen,
         * into the slot. */
        for (unsigned i = s->n; i-- > 0;) {
            if (!pf[i + 1].revents)
                continue;
            struct hs_conn *c = &s->c[i];
            hog_status st = HOG_OK;
            enum hs_res r = hs_input(a, c, w, between, bctx, &st);
            if (r == HS_REFUSED) { /* drained */
                close(c->fd);
                hs_remove(s, c);
            } else if (r == HS_FAILED) {
                close(c->fd);
                hs_remove(s, c);
                return st;
            } else if (r == HS_DONE) {
                *fd = c->fd;
                snprintf(peer, ADDR_MAX, "%s", c->peer);
                *rank = c->h.rank;
                *port = c->h.port;
                hs_remove(s, c);
                return HOG_OK;
            }
        }
        while ((pf[0].revents & POLLIN) && s->n < HS_MAX) {
            struct sockaddr_storage ss;
            socklen_t sl = sizeof ss;
            int nc = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
            if (nc < 0) {
                if (errno == EINTR || errno == ECONNABORTED)
                    continue;
                if (errno == EAGAIN || errno == EWOULDBLOCK)
                    break;
                return hog_errf(err, HOG_ENET, "accept: %s", strerror(errno));
            }
            set_nonblock(nc);
            char addr[ADDR_MAX];
            addr_str((struct sockaddr *)&ss, addr, sizeof addr);
            hog_status st = hs_add(a, s, nc, addr, err);
            if (st != HOG_OK)
                return st;
        }
    }
}

/* Closes what is left: connections in their handshake at once (the
 * rendezvous is over for them), refused ones once drained. */
static void hs_set_free(const struct auth *a, struct hs_set *s)
{
    if (!s->c)
        return;
    for (unsigned i = s->n; i-- > 0;)
        if (s->c[i].state != HS_CLOSING) {
            close(s->c[i].fd);
            hs_remove(s, &s->c[i]);
        }
    int fd;
    char peer[ADDR_MAX];
    unsigned rank, port;
    struct want none = { 0 };
    hog_err e;
    (void)hs_serve(a, s, -1, &none, hog_now() + 0.5, NULL, NULL, &fd, peer,
                   &rank, &port, &e);
    for (unsigned i = 0; i < s->n; i++)
        close(s->c[i].fd);
    free(s->c);
    s->c = NULL;
    s->n = 0;
}

/* ---- sockets ------------------------------------------------------------------------ */

static hog_status listen_on(const struct sockaddr *sa, socklen_t sl,
                            int *fd_out, hog_err *err)
{
    char a[ADDR_MAX];
    addr_str(sa, a, sizeof a);
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return hog_errf(err, HOG_ENET, "socket: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    set_bufs(fd);
    if (bind(fd, sa, sl) != 0 || listen(fd, 64) != 0) {
        int e = errno;
        close(fd);
        return hog_errf(err, HOG_ENET, "cannot listen on %s: %s", a,
                        strerror(e));
    }
    set_nonblock(fd);
    *fd_out = fd;
    return HOG_OK;
}

/* Connects to addr, retrying refused attempts until the deadline. */
static hog_status connect_until(const struct sockaddr *sa, socklen_t sl,
                                double deadline, const char *what, int *out,
                                hog_err *err)
{
    char a[ADDR_MAX];
    addr_str(sa, a, sizeof a);
    int last = 0;
    double t0 = hog_now();
    while (hog_now() < deadline) {
        int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return hog_errf(err, HOG_ENET, "socket: %s", strerror(errno));
        set_bufs(fd);
        set_nonblock(fd);
        int rc = connect(fd, sa, sl);
        if (rc != 0 && errno == EINPROGRESS) {
            double left = deadline - hog_now();
            if (io_wait(fd, POLLOUT, left > 0 ? left : 0) == IO_OK) {
                int e = 0;
                socklen_t el = sizeof e;
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
                rc = e ? -1 : 0;
                errno = e ? e : ETIMEDOUT;
            } else {
                errno = ETIMEDOUT;
            }
        }
        if (rc == 0) {
            *out = fd;
            return HOG_OK;
        }
        last = errno;
        close(fd);
        sleep_s(0.05);
    }
    return hog_errf(err, HOG_ETIMEDOUT, "could not reach %s at %s within "
                    "%.3g s: %s", what, a, hog_now() - t0,
                    last ? strerror(last) : "no attempt");
}

/* ---- rendezvous ----------------------------------------------------------------- */

struct member {
    int fd; /* control connection (rank 0) */
    char addr[ADDR_MAX];   /* as rank 0 saw it */
    char host[INET6_ADDRSTRLEN];
    unsigned port;         /* ring listener */
};

/* The ring step done while serving: the client's proof to the successor. */
struct ring_mid {
    const struct auth *a;
    int fd;
    struct hello *h;
    unsigned char *nonce_s;
    const char *peer;
    hog_err *err;
    bool done;
    hog_status st;
};

static hog_status ring_mid(void *ctx)
{
    struct ring_mid *m = ctx;
    if (m->done)
        return HOG_OK;
    m->done = true;
    m->st = client_prove(m->a, m->fd, m->h, m->nonce_s, m->peer, NULL,
                         m->err);
    return m->st;
}

static void tcp_close(hog_net *n);
static hog_status tcp_sum(hog_net *n, float *buf, size_t len, hog_err *err);
static hog_status tcp_max(hog_net *n, uint64_t *buf, size_t len, hog_err *err);

static const struct hog_net_ops tcp_ops = { "tcp", tcp_sum, tcp_max, tcp_close };

static void sockaddr_port(struct sockaddr_storage *ss, unsigned port)
{
    if (ss->ss_family == AF_INET)
        ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
}

static unsigned sockaddr_get_port(const struct sockaddr_storage *ss)
{
    return ss->ss_family == AF_INET
               ? ntohs(((const struct sockaddr_in *)ss)->sin_port)
               : ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
}

/* Connects the ring: successor as client, predecessor accepted on lfd,
 * served in the set hs (rank 0's holds what is left of the joins). */
static hog_status ring_up(struct tcp *t, const struct auth *a, int lfd,
                          struct hs_set *hs,
                          const struct sockaddr_storage *next_sa,
                          socklen_t next_sl, double deadline, hog_err *err)
{
    unsigned me = t->base.rank, w = t->base.world;
    unsigned next = (me + 1) % w, prev = (me + w - 1) % w;
    hog_status st = connect_until((const struct sockaddr *)next_sa, next_sl,
                                  deadline, "the next rank", &t->next_fd, err);
    if (st != HOG_OK)
        return st;
    addr_str((const struct sockaddr *)next_sa, t->next_addr,
             sizeof t->next_addr);
    char peer_next[ADDR_MAX + 32];
    snprintf(peer_next, sizeof peer_next, "rank %u (%s)", next, t->next_addr);
    struct hello h;
    unsigned char nonce_s[32];
    if ((st = client_hello(a, t->next_fd, KIND_RING, 0, &h, peer_next, NULL,
                           err)) != HOG_OK)
        return st;
    struct ring_mid mid = { a, t->next_fd, &h, nonce_s, peer_next, err, false,
                            HOG_OK };
    struct want wt = { KIND_RING, prev, prev, NULL, NULL, me == 0 };
    int c;
    char peer[ADDR_MAX];
    unsigned r, port;
    if ((st = hs_serve(a, hs, lfd, &wt, deadline, ring_mid, &mid, &c, peer,
                       &r, &port, err)) != HOG_OK)
        return st; /* our own client step failed, or the listener */
    if (c < 0)
        return hog_errf(err, HOG_ETIMEDOUT, "rank %u (the previous in the "
                        "ring) did not connect within the rendezvous "
                        "timeout", prev);
    t->prev_fd = c;
    snprintf(t->prev_addr, sizeof t->prev_addr, "%s", peer);
    if (!mid.done && (st = ring_mid(&mid)) != HOG_OK)
        return st;
    return client_welcome(a, t->next_fd, &h, nonce_s, peer_next, NULL, err);
}

/* One rendezvous in progress. */
struct rdv {
    struct tcp *t;
    const struct hog_net_opts *o;
    struct auth a;
    struct sockaddr_storage coord;
    socklen_t coord_len;
    char coord_s[ADDR_MAX];
    double connect_t, deadline;
    int lfd;            /* this rank's listener */
    unsigned char *buf; /* CTRL_MAX bytes for control frames */
};

static hog_status numeric_addr(const char *host, unsigned port,
                               struct sockaddr_storage *ss, socklen_t *sl)
{
    char port_s[8];
    snprintf(port_s, sizeof port_s, "%u", port);
    struct addrinfo hints = { 0 }, *res;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port_s, &hints, &res) != 0)
        return HOG_ENET;
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *sl = res->ai_addrlen;
    freeaddrinfo(res);
    return HOG_OK;
}

static void peer_host(int fd, char *host, size_t len)
{
    struct sockaddr_storage ps;
    socklen_t pl = sizeof ps;
    getpeername(fd, (struct sockaddr *)&ps, &pl);
    if (ps.ss_family == AF_INET)
        inet_ntop(AF_INET, &((struct sockaddr_in *)&ps)->sin_addr, host,
                  (socklen_t)len);
    else
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ps)->sin6_addr, host,
                  (socklen_t)len);
}

/* Rank 0, after the joins: the table of ring listeners, one entry per
 * rank: u16 port, u8 host length, host (rank 0: empty, meaning the
 * coordinator address). */
static size_t make_table(const struct member *m, unsigned w,
                         unsigned char *tab)
{
    size_t len = 0;
    for (unsigned r = 0; r < w; r++) {
        size_t hl = r ? strlen(m[r].host) : 0;
        put16(tab + len, r ? m[r].port : 0);
        tab[len + 2] = (unsigned char)hl;
        memcpy(tab + len + 3, m[r].host, hl);
        len += 3 + hl;
    }
    return len;
}

/* Ranks > 0: the successor's entry of the table. */
static hog_status table_lookup(const struct rdv *v, size_t len, unsigned want,
                               struct sockaddr_storage *ss, socklen_t *sl,
                               hog_err *err)
{
    const unsigned char *tab = v->buf;
    size_t p = 0;
    for (unsigned r = 0;; r++) {
        if (p + 3 > len || p + 3 + tab[p + 2] > len ||
            tab[p + 2] >= INET6_ADDRSTRLEN)
            return hog_errf(err, HOG_ENET, "the coordinator %s sent a "
                            "malformed table", v->coord_s);
        if (r == want)
            break;
        p += 3 + tab[p + 2];
    }
    if (want == 0) {
        *ss = v->coord;
        *sl = v->coord_len;
        return HOG_OK;
    }
    char host[INET6_ADDRSTRLEN];
    memcpy(host, tab + p + 3, tab[p + 2]);
    host[tab[p + 2]] = 0;
    if (numeric_addr(host, get16(tab + p), ss, sl) != HOG_OK)
        return hog_errf(err, HOG_ENET, "the coordinator %s sent a bad "
                        "address '%s' for rank %u", v->coord_s, host, want);
    return HOG_OK;
}

/* Rank 0: accept the other ranks (refusing strangers), hand out the
 * table, build the ring, and say go when every ring link is up. */
static hog_status coordinate(struct rdv *v, hog_err *err)
{
    struct tcp *t = v->t;
    unsigned w = t->base.world;
    struct member *m = calloc(w, sizeof *m);
    bool *taken = calloc(w, sizeof *taken);
    char(*taken_by)[ADDR_MAX] = calloc(w, ADDR_MAX);
    struct hs_set hs = { NULL, 0 };
    hog_status st = HOG_OK;
    if (!m || !taken || !taken_by) {
        st = hog_errf(err, HOG_ENOMEM, "out of memory");
        goto out;
    }
    if ((st = hs_set_init(&hs, err)) != HOG_OK)
        goto out;
    for (unsigned r = 0; r < w; r++)
        m[r].fd = -1;
    if ((st = listen_on((struct sockaddr *)&v->coord, v->coord_len, &v->lfd,
                        err)) != HOG_OK)
        goto out;
    taken[0] = true;
    snprintf(taken_by[0], ADDR_MAX, "%s", v->coord_s);
    struct want wj = { KIND_JOIN, 1, w - 1, taken, taken_by, false };
    for (unsigned joined = 1; joined < w;) {
        int c;
        char peer[ADDR_MAX];
        unsigned r, port;
        if ((st = hs_serve(&v->a, &hs, v->lfd, &wj, v->deadline, NULL, NULL,
                           &c, peer, &r, &port, err)) != HOG_OK)
            goto out;
        if (c < 0) {
            char missing[256] = "";
            size_t ml = 0;
            for (unsigned k = 1; k < w && ml + 12 < sizeof missing; k++)
                if (!taken[k])
                    ml += (size_t)snprintf(missing + ml, sizeof missing - ml,
                                           "%s%u", ml ? ", " : "", k);
            st = hog_errf(err, HOG_ETIMEDOUT, "rendezvous timed out after %g "
                          "s at %s: rank%s %s never joined", v->connect_t,
                          v->coord_s, strchr(missing, ',') ? "s" : "",
                          missing);
            goto out;
        }
        taken[r] = true;
        snprintf(taken_by[r], ADDR_MAX, "%s", peer);
        if (v->o->log && v->o->verbose) {
            fprintf(v->o->log, "hogtrain: rank 0: rank %u joined from %s\n", r,
                    peer);
            fflush(v->o->log);
        }
        m[r].fd = c;
        snprintf(m[r].addr, sizeof m[r].addr, "%s", peer);
        m[r].port = port;
        peer_host(c, m[r].host, sizeof m[r].host);
        joined++;
    }
    size_t tab_len = make_table(m, w, v->buf);
    for (unsigned r = 1; r < w; r++) {
        enum io_res ir = frame_send(m[r].fd, t->protocol, T_TABLE, 0, v->buf,
                                    tab_len, t->timeout);
        if (ir != IO_OK) {
            char why[128];
            st = hog_errf(err, HOG_ENET, "rank %u (%s) %s during the "
                          "rendezvous", r, m[r].addr,
                          io_what(ir, t->timeout, why, sizeof why));
            goto out;
        }
    }
    struct sockaddr_storage next_sa;
    socklen_t next_sl = 0;
    if (numeric_addr(m[1].host, m[1].port, &next_sa, &next_sl) != HOG_OK) {
        st = hog_errf(err, HOG_ENET, "bad address %s of rank 1", m[1].host);
        goto out;
    }
    if ((st = ring_up(t, &v->a, v->lfd, &hs, &next_sa, next_sl, v->deadline,
                      err)) != HOG_OK)
        goto out;
    for (unsigned r = 1; r < w; r++) {
        struct frame f;
        hog_err e;
        st = frame_recv(m[r].fd, &f, v->buf, 64,
                        v->deadline - hog_now() + t->timeout, &e);
        if (st == HOG_OK && f.type != T_READY)
            st = hog_errf(&e, HOG_ENET, "sent frame type %u instead of "
                          "ready", f.type);
        if (st != HOG_OK) {
            st = hog_errf(err, st, "rank %u (%s) during the ring set-up: %s",
                          r, m[r].addr, e.msg);
            goto out;
        }
    }
    for (unsigned r = 1; r < w; r++)
        (void)frame_send(m[r].fd, t->protocol, T_GO, 0, "", 0, t->timeout);
out:
    hs_set_free(&v->a, &hs);
    if (m)
        for (unsigned r = 0; r < w; r++)
            if (m[r].fd >= 0)
                close(m[r].fd);
    free(m);
    free(taken);
    free(taken_by);
    return st;
}

/* Ranks > 0: join at the coordinator, trying again on a new connection
 * when one is lost or unanswered (the coordinator may be starting, or busy)
 * until the rendezvous deadline. A refusal or a wrong proof is final. On
 * HOG_OK *ctl is the control connection, its handshake done, and v->lfd
 * this rank's ring listener, on the address that reaches the coordinator. */
static hog_status join_coordinator(struct rdv *v, const char *peer0, int *ctl,
                                   hog_err *err)
{
    const struct auth *a = &v->a;
    hog_err last = { { 0 } };
    hog_status st, last_st = HOG_OK;
    for (;;) {
        st = connect_until((struct sockaddr *)&v->coord,
                                      v->coord_len, v->deadline,
                                      "the coordinator", ctl, err);
        if (st != HOG_OK) {
            /* Out of time after a lost handshake: that is the news, not
             * the last connection attempt. */
            if (last_st != HOG_OK)
                return hog_errf(err, last_st, "%s", last.msg);
            return st;
        }
        struct sockaddr_storage me;
        socklen_t ml = sizeof me;
        if (v->lfd < 0) {
            getsockname(*ctl, (struct sockaddr *)&me, &ml);
            sockaddr_port(&me, 0);
            if ((st = listen_on((struct sockaddr *)&me, ml, &v->lfd, err)) !=
                HOG_OK)
                break;
            ml = sizeof me;
        }
        getsockname(v->lfd, (struct sockaddr *)&me, &ml);
        struct hello h;
        unsigned char nonce_s[32];
        bool lost = false;
        if ((st = client_hello(a, *ctl, KIND_JOIN, sockaddr_get_port(&me), &h,
                               peer0, &lost, err)) == HOG_OK &&
            (st = client_prove(a, *ctl, &h, nonce_s, peer0, &lost, err)) ==
                HOG_OK &&
            (st = client_welcome(a, *ctl, &h, nonce_s, peer0, &lost, err)) ==
                HOG_OK)
            return HOG_OK;
        if (!lost || hog_now() >= v->deadline)
            break;
        close(*ctl);
        *ctl = -1;
        last = *err;
        last_st = st;
        if (v->o->log && v->o->verbose) {
            fprintf(v->o->log, "hogtrain: rank %u: %s; trying again\n",
                    a->my_rank, err->msg);
            fflush(v->o->log);
        }
        sleep_s(0.05);
    }
    close(*ctl);
    *ctl = -1;
    return st;
}

/* Ranks > 0: join at the coordinator (and listen for the predecessor),
 * wait for the table, build the ring, report ready and wait for go. */
static hog_status join(struct rdv *v, hog_err *err)
{
    struct tcp *t = v->t;
    const struct auth *a = &v->a;
    char peer0[ADDR_MAX + 40];
    snprintf(peer0, sizeof peer0, "the coordinator %s", v->coord_s);
    int ctl = -1;
    struct frame f;
    hog_err e;
    struct hs_set hs = { NULL, 0 };
    hog_status st = join_coordinator(v, peer0, &ctl, err);
    if (st != HOG_OK)
        return st;
    /* The table comes when every rank has joined. */
    double left = v->deadline - hog_now() + t->timeout;
    st = frame_recv(ctl, &f, v->buf, CTRL_MAX, left > 0 ? left : 1, &e);
    if (st == HOG_OK && f.type != T_TABLE)
        st = hog_errf(&e, HOG_ENET, "sent frame type %u instead of the "
                      "table", f.type);
    if (st != HOG_OK) {
        st = hog_errf(err, st, "%s during the rendezvous: %s", peer0, e.msg);
        goto out;
    }
    struct sockaddr_storage next_sa;
    socklen_t next_sl = 0;
    if ((st = table_lookup(v, f.len, next_rank(t), &next_sa, &next_sl,
                           err)) != HOG_OK ||
        (st = hs_set_init(&hs, err)) != HOG_OK ||
        (st = ring_up(t, a, v->lfd, &hs, &next_sa, next_sl,
                      hog_now() + v->connect_t, err)) != HOG_OK)
        goto out;
    if (frame_send(ctl, t->protocol, T_READY, t->base.rank, "", 0,
                   t->timeout) != IO_OK) {
        st = hog_errf(err, HOG_ENET, "%s closed the connection during the "
                      "ring set-up", peer0);
        goto out;
    }
    st = frame_recv(ctl, &f, v->buf, 64, v->connect_t + t->timeout, &e);
    if (st == HOG_OK && f.type != T_GO)
        st = hog_errf(&e, HOG_ENET, "sent frame type %u instead of go",
                      f.type);
    if (st != HOG_OK)
        st = hog_errf(err, st, "%s during the ring set-up: %s", peer0, e.msg);
out:
    hs_set_free(a, &hs);
    close(ctl);
    return st;
}

hog_status hog_net_open_tcp(const struct hog_net_opts *o, hog_net **out,
                            hog_err *err)
{
    *out = NULL;
    if (o->world < 1 || o->world > HOG_NET_MAX_WORLD)
        return hog_errf(err, HOG_EINVAL, "the world must have 1 to %u ranks, "
                        "not %u", HOG_NET_MAX_WORLD, o->world);
    if (o->rank >= o->world)
        return hog_errf(err, HOG_EINVAL, "rank %u is not below the world "
                        "size %u", o->rank, o->world);
    const char *job = o->job ? o->job : "hogtrain";
    if (strlen(job) > JOB_MAX)
        return hog_errf(err, HOG_EINVAL, "the job id is longer than %d "
                        "bytes", JOB_MAX);
    struct tcp *t = calloc(1, sizeof *t);
    if (!t)
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    t->base.ops = &tcp_ops;
    t->base.world = o->world;
    t->base.rank = o->rank;
    t->next_fd = t->prev_fd = -1;
    t->timeout = o->timeout > 0 ? o->timeout : 60;
    t->chunk = o->chunk_bytes ? o->chunk_bytes : (size_t)512 << 10;
    t->chunk = (t->chunk + 7) & ~(size_t)7;
    t->protocol = o->protocol ? o->protocol : HOG_NET_PROTOCOL;
    if (o->world == 1) {
        *out = &t->base;
        return HOG_OK;
    }

    struct rdv v = { .t = t, .o = o, .lfd = -1 };
    hog_status st = HOG_OK;
    t->tmp = malloc(t->chunk);
    v.buf = malloc(CTRL_MAX);
    if (!t->tmp || !v.buf) {
        st = hog_errf(err, HOG_ENOMEM, "out of memory");
        goto out;
    }
    if ((st = resolve(o->coordinator, &v.coord, &v.coord_len, err)) != HOG_OK)
        goto out;
    if (!o->secret && !o->insecure &&
        !is_loopback((struct sockaddr *)&v.coord)) {
        st = hog_errf(err, HOG_EINVAL, "coordinator %s is not a loopback "
                      "address: without a shared secret (--secret-file) "
                      "anyone could join; give a secret, or --insecure on a "
                      "trusted network", o->coordinator);
        goto out;
    }
    addr_str((struct sockaddr *)&v.coord, v.coord_s, sizeof v.coord_s);
    /* A handshake is a few small frames: a connection that stays silent
     * longer is refused sooner than a training peer would be. */
    double hs_timeout = t->timeout < 10 ? t->timeout : 10;
    v.a = (struct auth){ o->secret, o->secret ? o->secret_len : 0, job,
                         o->world, t->protocol, hs_timeout, o->log, o->rank };
    v.connect_t = o->connect_timeout > 0 ? o->connect_timeout : 60;
    v.deadline = hog_now() + v.connect_t;
    st = o->rank == 0 ? coordinate(&v, err) : join(&v, err);
out:
    if (v.lfd >= 0)
        close(v.lfd);
    free(v.buf);
    if (st != HOG_OK) {
        tcp_close(&t->base);
        return st;
    }
    *out = &t->base;
    return HOG_OK;
}

/* Half-closes both ring links and drains them together until each peer's
 * end or `limit` seconds: one at a time, a silent neighbour's half second
 * came on top of the other's. */
static void close_both_drained(int a, int b, double limit)
{
    struct pollfd pf[2] = { { a, POLLIN, 0 }, { b, POLLIN, 0 } };
    for (int i = 0; i < 2; i++)
        if (pf[i].fd >= 0)
            shutdown(pf[i].fd, SHUT_WR);
    double end = hog_now() + limit;
    char sink[16384];
    while (pf[0].fd >= 0 || pf[1].fd >= 0) {
        double left = end - hog_now();
        if (left <= 0)
            break;
        int rc = poll(pf, 2, (int)(left * 1000) + 1);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            break;
        for (int i = 0; i < 2; i++) {
            if (pf[i].fd < 0 || !pf[i].revents)
                continue;
            ssize_t k = recv(pf[i].fd, sink, sizeof sink, MSG_DONTWAIT);
            if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
                close(pf[i].fd);
                pf[i].fd = -1;
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (pf[i].fd >= 0)
            close(pf[i].fd);
}

static void tcp_close(hog_net *n)
{
    struct tcp *t = (struct tcp *)n;
    /* After a failure the neighbours still have our abort to read: a close
     * with unread bytes here would reset the connection and could destroy
     * it on their side. Half-close and drain first, at most half a second
     * (and within the grace of the fault bound, docs/SCALEOUT.md). */
    if (t->broken) {
        double grace = t->timeout < 4 ? t->timeout / 2 : 2.0;
        close_both_drained(t->next_fd, t->prev_fd, grace < 0.5 ? grace : 0.5);
    } else {
        if (t->next_fd >= 0)
            close(t->next_fd);
        if (t->prev_fd >= 0)
            close(t->prev_fd);
    }
    free(t->tmp);
    free(t);
}

/* ---- the ring all-reduce ------------------------------------------------------- */

typedef void reduce_fn(void *dst, const void *in, size_t bytes);

/* dst = in + dst, element by element: the partial sum that arrived comes
 * first, this rank's value second (the order in net.h). */
static void add_f32(void *dst, const void *in, size_t bytes)
{
    float *d = dst;
    const float *x = in;
    size_t n = bytes / 4;
    for (size_t i = 0; i < n; i++)
        d[i] = x[i] + d[i];
}

static void max_u64(void *dst, const void *in, size_t bytes)
{
    uint64_t *d = dst;
    const uint64_t *x = in;
    size_t n = bytes / 8;
    for (size_t i = 0; i < n; i++)
        d[i] = x[i] > d[i] ? x[i] : d[i];
}

struct ring {
    struct tcp *t;
    unsigned char *buf;
    size_t elem, len;   /* element size, elements */
    size_t chunk_elems;
    unsigned steps;     /* 2 (world - 1) */
    reduce_fn *op;
};

/* Segment handled at step `step` by the sender (send = true) or the
 * receiver of rank r. */
static unsigned seg_of(const struct ring *g, unsigned step, bool send)
{
    unsigned w = g->t->base.world, r = g->t->base.rank;
    unsigned half = w - 1;
    long s;
    if (step < half)
        s = (long)r - (long)step - (send ? 0 : 1);
    else
        s = (long)r + (send ? 1 : 0) - (long)(step - half);
    s %= (long)w;
    return (unsigned)(s < 0 ? s + (long)w : s);
}

static size_t seg_chunks(const struct ring *g, unsigned s)
{
    size_t lo, hi;
    hog_net_segment(g->len, g->t->base.world, s, &lo, &hi);
    return (hi - lo + g->chunk_elems - 1) / g->chunk_elems;
}

/* Byte range of chunk c of segment s. */
static void chunk_range(const struct ring *g, unsigned s, size_t c,
                        size_t *off, size_t *bytes)
{
    size_t lo, hi;
    hog_net_segment(g->len, g->t->base.world, s, &lo, &hi);
    size_t a = lo + c * g->chunk_elems;
    size_t b = a + g->chunk_elems < hi ? a + g->chunk_elems : hi;
    *off = a * g->elem;
    *bytes = (b - a) * g->elem;
}

/* A position in the stream of frames: step, chunk. Normalised so that the
 * chunk exists, or step == steps (done). */
struct pos {
    unsigned step;
    size_t chunk;
};

static void normalise(const struct ring *g, struct pos *p, bool send)
{
    while (p->step < g->steps &&
           p->chunk >= seg_chunks(g, seg_of(g, p->step, send))) {
        p->step++;
        p->chunk = 0;
    }
}

/* Best effort: tell the neighbours why this rank stops. */
static void send_abort(struct tcp *t, bool next_ok, const char *msg)
{
    size_t l = strlen(msg);
    if (l > 900)
        l = 900;
    if (t->prev_fd >= 0)
        (void)frame_send(t->prev_fd, HOG_NET_PROTOCOL, T_ABORT, t->base.rank,
                         msg, l, 0.2);
    if (next_ok && t->next_fd >= 0)
        (void)frame_send(t->next_fd, HOG_NET_PROTOCOL, T_ABORT, t->base.rank,
                         msg, l, 0.2);
}

/* A frame arriving from the successor: only aborts travel that way. */
static hog_status read_backward(struct tcp *t, hog_err *err)
{
    unsigned w = t->base.world;
    unsigned next = (t->base.rank + 1) % w;
    struct frame f;
    char buf[1024];
    hog_err e;
    hog_status st = frame_recv(t->next_fd, &f, buf, sizeof buf - 1, 1.0, &e);
    if (st == HOG_OK && f.type == T_ABORT) {
        buf[f.len] = 0;
        return hog_errf(err, HOG_ENET, "rank %u (%s) stopped the all-reduce: "
                        "%s", next, t->next_addr, buf);
    }
    if (st == HOG_OK)
        return hog_errf(err, HOG_ENET, "rank %u (%s) sent an unexpected frame "
                        "(type %u)", next, t->next_addr, f.type);
    return hog_errf(err, HOG_ENET, "rank %u (%s) %s in the middle of an "
                    "all-reduce", next, t->next_addr, e.msg);
}

/* The two streams of one all-reduce: frames out to the successor, frames
 * in from the predecessor, each at a position (step, chunk) with the frame
 * in flight. */
struct out_stream {
    struct pos p;
    bool active;            /* a frame is being sent */
    bool wait;              /* it is a WAIT frame (no data, p stays) */
    unsigned char hdr[HDR];
    size_t off, bytes;      /* the chunk's bytes in the vector */
    size_t done;            /* header and payload bytes sent */
};

struct in_stream {
    struct pos p;
    unsigned char hdr[HDR];
    size_t hdr_got;
    size_t off, bytes, got; /* the chunk's bytes in the vector, received */
    uint32_t crc;
};

/* "rank 1 (127.0.0.1:4000) closed the connection in the middle of an
 * all-reduce"; e is errno, or 0 for an orderly close. */
static hog_status peer_failed(unsigned rank, const char *addr, int e,
                              hog_err *err)
{
    return hog_errf(err, HOG_ENET, "rank %u (%s) %s in the middle of an "
                    "all-reduce", rank, addr,
                    e == 0 || e == EPIPE || e == ECONNRESET
                        ? "closed the connection"
                        : strerror(e));
}

/* Starts the next frame out if its data is ready: the chunk sent at step t
 * (t > 0) is the one received, and added, at step t - 1. */
static void out_start(const struct ring *g, struct out_stream *o,
                      const struct pos *in)
{
    if (o->active || o->p.step >= g->steps)
        return;
    if (o->p.step > 0 && !(in->step > o->p.step - 1 ||
                           (in->step == o->p.step - 1 &&
                            in->chunk > o->p.chunk)))
        return;
    chunk_range(g, seg_of(g, o->p.step, true), o->p.chunk, &o->off,
                &o->bytes);
    frame_header(o->hdr, g->t->protocol, T_DATA, g->t->base.rank,
                 (uint32_t)o->bytes, g->buf + o->off, o->bytes);
    o->done = 0;
    o->active = true;
}

/* A WAIT frame when this rank has more to send but nothing ready (it waits
 * on its predecessor): the successor learns that this rank is alive, and
 * blames it for nothing; only the rank right after a silent one hears
 * nothing at all. Sent between data frames only. */
static void out_wait(const struct ring *g, struct out_stream *o)
{
    frame_header(o->hdr, g->t->protocol, T_WAIT, g->t->base.rank, 0, "", 0);
    o->off = o->bytes = o->done = 0;
    o->active = o->wait = true;
}

/* Sends until the socket is full or nothing is ready. */
static hog_status out_pump(const struct ring *g, struct out_stream *o,
                           const struct in_stream *in, double *last,
                           hog_err *err)
{
    struct tcp *t = g->t;
    out_start(g, o, &in->p);
    while (o->active) {
        struct iovec iov[2];
        int k = 0;
        size_t pd = o->done > HDR ? o->done - HDR : 0;
        if (o->done < HDR)
            iov[k++] = (struct iovec){ o->hdr + o->done, HDR - o->done };
        if (o->bytes > pd)
            iov[k++] = (struct iovec){ g->buf + o->off + pd, o->bytes - pd };
        struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)k };
        ssize_t n = sendmsg(t->next_fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                return HOG_OK;
            return peer_failed(next_rank(t), t->next_addr, errno, err);
        }
        *last = hog_now();
        o->done += (size_t)n;
        if (o->done == HDR + o->bytes) {
            o->active = false;
            if (!o->wait) {
                o->p.chunk++;
                normalise(g, &o->p, true);
            }
            o->wait = false;
            out_start(g, o, &in->p);
        }
    }
    return HOG_OK;
}

/* An ABORT frame from the predecessor, its header already in. */
static hog_status in_abort(struct tcp *t, const struct frame *f, hog_err *err)
{
    char msg[1024];
    size_t l = f->len < sizeof msg - 1 ? f->len : sizeof msg - 1;
    if (io_recv(t->prev_fd, msg, l, 1.0) != IO_OK)
        l = 0;
    msg[l] = 0;
    return hog_errf(err, HOG_ENET, "rank %u (%s) stopped the all-reduce: %s",
                    prev_rank(t), t->prev_addr, l ? msg : "(no reason)");
}

/* Receives until the socket is empty or the stream is done. A chunk of a
 * reduce-scatter step lands in t->tmp and is added into the vector; one of
 * an all-gather step lands in place. *heard is the time of the last byte
 * in, *data that of the last byte of a data frame (a WAIT frame moves
 * only the first). */
static hog_status in_pump(const struct ring *g, struct in_stream *in,
                          double *heard, double *data, hog_err *err)
{
    struct tcp *t = g->t;
    unsigned prev = prev_rank(t), half = t->base.world - 1;
    while (in->p.step < g->steps) {
        bool reduce = in->p.step < half;
        unsigned char *dst;
        size_t want;
        if (in->hdr_got < HDR) {
            dst = in->hdr + in->hdr_got;
            want = HDR - in->hdr_got;
        } else {
            dst = (reduce ? t->tmp : g->buf + in->off) + in->got;
            want = in->bytes - in->got;
        }
        ssize_t n = want ? recv(t->prev_fd, dst, want, MSG_DONTWAIT) : 0;
        if (want && n <= 0) {
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
                          errno == EINTR))
                return HOG_OK;
            return peer_failed(prev, t->prev_addr, n == 0 ? 0 : errno, err);
        }
        if (want)
            *heard = hog_now();
        if (in->hdr_got < HDR) {
            in->hdr_got += (size_t)n;
            if (in->hdr_got < HDR)
                continue;
            struct frame f;
            hog_err e;
            if (frame_check_header(in->hdr, &f, &e) != HOG_OK)
                return hog_errf(err, HOG_ENET, "rank %u (%s): %s", prev,
                                t->prev_addr, e.msg);
            if (f.type == T_ABORT)
                return in_abort(t, &f, err);
            if (f.type == T_WAIT && f.len == 0 && f.rank == prev) {
                if (frame_check_crc(in->hdr, &f, "", &e) != HOG_OK)
                    return hog_errf(err, HOG_ENET, "rank %u (%s) %s", prev,
                                    t->prev_addr, e.msg);
                in->hdr_got = 0;
                continue;
            }
            *data = *heard;
            chunk_range(g, seg_of(g, in->p.step, false), in->p.chunk,
                        &in->off, &in->bytes);
            if (f.type != T_DATA || f.len != in->bytes || f.rank != prev)
                return hog_errf(err, HOG_ENET, "rank %u (%s) sent a frame out "
                                "of step (type %u, rank %u, %u bytes where "
                                "%zu were due)", prev, t->prev_addr, f.type,
                                f.rank, (unsigned)f.len, in->bytes);
            in->crc = hog_crc32c(0, in->hdr, 16);
            in->got = 0;
            continue;
        }
        *data = *heard;
        in->crc = hog_crc32c(in->crc, dst, (size_t)n);
        in->got += (size_t)n;
        if (in->got < in->bytes)
            continue;
        /* A whole chunk is in. */
        if (in->crc != get32(in->hdr + 16))
            return hog_errf(err, HOG_ENET, "rank %u (%s) sent a chunk whose "
                            "checksum does not match", prev, t->prev_addr);
        if (reduce)
            g->op(g->buf + in->off, t->tmp, in->bytes);
        in->hdr_got = 0;
        in->p.chunk++;
        normalise(g, &in->p, false);
    }
    return HOG_OK;
}

static hog_status ring_run(struct ring *g, hog_err *err)
{
    struct tcp *t = g->t;
    struct out_stream o = { 0 };
    struct in_stream in = { 0 };
    normalise(g, &o.p, true);
    normalise(g, &in.p, false);
    /* Progress clocks. A stall is blamed on the predecessor when nothing
     * at all has come from it for the timeout: a rank with nothing to send
     * says every `beat` that it waits (out_wait), so only the rank right
     * after a silent or dead one hears nothing, times out, and its abort
     * names the culprit to the ranks behind it. A predecessor that keeps
     * saying it waits and sends no data for the timeout plus a grace is
     * blamed too: a last resort, should that abort never come. */
    double beat = t->timeout / 4 < 1 ? t->timeout / 4 : 1;
    double grace = t->timeout < 4 ? t->timeout / 2 : 2.0;
    double last_heard = hog_now(), last_data = last_heard;
    double last_out = last_heard;
    hog_status st = HOG_OK;

    while (st == HOG_OK && (o.p.step < g->steps || in.p.step < g->steps)) {
        out_start(g, &o, &in.p);
        double now = hog_now();
        bool may_wait = !o.active && o.p.step < g->steps;
        if (may_wait && now - last_out >= beat)
            out_wait(g, &o);
        struct pollfd pf[2] = {
            /* While this rank still sends, the successor may not close:
             * watch for its end (or an abort) too. */
            { o.p.step < g->steps ? t->next_fd : -1,
              (short)(POLLIN | (o.active ? POLLOUT : 0)), 0 },
            { in.p.step < g->steps ? t->prev_fd : -1, POLLIN, 0 },
        };
        double until;
        if (in.p.step < g->steps) {
            until = last_heard + t->timeout;
            if (last_data + t->timeout + grace < until)
                until = last_data + t->timeout + grace;
        } else {
            until = last_out + t->timeout;
        }
        if (!o.active && o.p.step < g->steps && last_out + beat < until)
            until = last_out + beat;
        double left = until - now;
        int rc = left > 0 ? poll(pf, 2, (int)(left * 1000) + 1) : 0;
        if (rc < 0 && errno == EINTR)
            continue;
        now = hog_now();
        if (rc < 0)
            st = hog_errf(err, HOG_ENET, "poll: %s", strerror(errno));
        else if (rc == 0 && in.p.step < g->steps &&
                 now >= last_heard + t->timeout)
            st = hog_errf(err, HOG_ETIMEDOUT, "rank %u (%s) sent nothing for "
                          "%g s in the middle of an all-reduce", prev_rank(t),
                          t->prev_addr, t->timeout);
        else if (rc == 0 && in.p.step < g->steps &&
                 now >= last_data + t->timeout + grace)
            st = hog_errf(err, HOG_ETIMEDOUT, "rank %u (%s) sent no data for "
                          "%g s in the middle of an all-reduce (it said it "
                          "was waiting, and no rank said why)", prev_rank(t),
                          t->prev_addr, t->timeout + grace);
        else if (rc == 0 && in.p.step >= g->steps &&
                 now >= last_out + t->timeout)
            st = hog_errf(err, HOG_ETIMEDOUT, "rank %u (%s) took no data for "
                          "%g s in the middle of an all-reduce", next_rank(t),
                          t->next_addr, t->timeout);
        else if (rc == 0)
            continue; /* a WAIT frame is due */
        else if (pf[0].revents & (POLLIN | POLLHUP | POLLERR))
            st = read_backward(t, err);
        else {
            if (pf[0].revents & POLLOUT)
                st = out_pump(g, &o, &in, &last_out, err);
            if (st == HOG_OK && (pf[1].revents & (POLLIN | POLLHUP | POLLERR)))
                st = in_pump(g, &in, &last_heard, &last_data, err);
        }
    }
    if (st != HOG_OK) {
        /* Tell the neighbours why (forward only between frames), and refuse
         * every later call on this group. */
        send_abort(t, !o.active || o.done == 0, err->msg);
        t->broken = true;
        snprintf(t->broken_msg, sizeof t->broken_msg, "%s", err->msg);
    }
    return st;
}

static hog_status ring_allreduce(struct tcp *t, void *buf, size_t len,
                                 size_t elem, reduce_fn *op, hog_err *err)
{
    if (t->base.world == 1 || len == 0)
        return HOG_OK;
    if (t->broken)
        return hog_errf(err, HOG_ENET, "the group is broken: %s",
                        t->broken_msg);
    struct ring g = { t, buf, elem, len, t->chunk / elem,
                      2 * (t->base.world - 1), op };
    return ring_run(&g, err);
}

static hog_status tcp_sum(hog_net *n, float *buf, size_t len, hog_err *err)
{
    return ring_allreduce((struct tcp *)n, buf, len, 4, add_f32, err);
}

static hog_status tcp_max(hog_net *n, uint64_t *buf, size_t len, hog_err *err)
{
    return ring_allreduce((struct tcp *)n, buf, len, 8, max_u64, err);
}

/* ---- the backend-independent front ------------------------------------------- */

unsigned hog_net_world(const hog_net *n) { return n->world; }
unsigned hog_net_rank(const hog_net *n) { return n->rank; }
const char *hog_net_backend(const hog_net *n) { return n->ops->name; }

hog_status hog_net_allreduce_sum(hog_net *n, float *buf, size_t len,
                                 hog_err *err)
{
    if (!n->ops->sum_f32)
        return hog_errf(err, HOG_ENOTSUP, "the %s backend has no sum",
                        n->ops->name);
    return n->ops->sum_f32(n, buf, len, err);
}

hog_status hog_net_allreduce_max(hog_net *n, uint64_t *buf, size_t len,
                                 hog_err *err)
{
    if (!n->ops->max_u64)
        return hog_errf(err, HOG_ENOTSUP, "the %s backend has no maximum",
                        n->ops->name);
    return n->ops->max_u64(n, buf, len, err);
}

void hog_net_close(hog_net *n)
{
    if (n)
        n->ops->close(n);
}

hog_status hog_net_read_secret(const char *path, unsigned char **out,
                               size_t *len, hog_err *err)
{
    *out = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return hog_errf(err, HOG_EIO, "%s: cannot open the secret file: %s",
                        path, strerror(errno));
    unsigned char *b = malloc(HOG_NET_MAX_SECRET + 1);
    if (!b) {
        fclose(f);
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    }
    size_t n = fread(b, 1, HOG_NET_MAX_SECRET + 1, f);
    fclose(f);
    if (n > HOG_NET_MAX_SECRET) {
        free(b);
        return hog_errf(err, HOG_EINVAL, "%s: the secret is longer than %d "
                        "bytes", path, HOG_NET_MAX_SECRET);
    }
    if (n && b[n - 1] == '\n')
        n--;
    if (n < 16) {
        free(b);
        return hog_errf(err, HOG_EINVAL, "%s: the secret has %zu bytes; use "
                        "at least 16 (e.g. head -c 32 /dev/urandom | base64)",
                        path, n);
    }
    *out = b;
    *len = n;
    return HOG_OK;
}
