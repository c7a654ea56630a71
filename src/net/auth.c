/*
 * The TCP backend's handshake, the same for joining the coordinator and
 * for ring links; client C connects to server S:
 *     C -> S  HELLO1  kind, rank, world, ring port, nonce_c, job id
 *     S -> C  CHALLENGE nonce_s
 *     C -> S  PROOF   HMAC(secret, "hogtrain-c" | nonce_s | HELLO1 payload)
 *     S -> C  WELCOME HMAC(secret, "hogtrain-s" | nonce_c | nonce_s)
 *          or REFUSE  a sentence
 * Both first messages go out before either side waits, so that every rank
 * can connect to its successor and accept its predecessor without a cycle
 * of waits. The client's steps are three calls (hog_tcp_client_*); the
 * server's side is a set of connections that a listener serves at once
 * (hog_tcp_hs_serve). HMAC, nonces and the comparison of proofs: crypto.c.
 */
#include "net/tcp_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* HMAC(secret, label | n1 | n2 | extra): the proofs of both sides. */
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

/* ---- the client ------------------------------------------------------------------ */

/* The client steps set *lost (if not NULL) when the connection failed or
 * the server did not answer in time, as opposed to a refusal or a wrong
 * proof: a joining rank tries again on a new connection. */

/* A frame out to the server. */
static hog_status client_send(const struct auth *a, int fd, unsigned type,
                              const void *payload, size_t len,
                              const char *peer, bool *lost, hog_err *err)
{
    char why[128];
    enum io_res r = hog_tcp_frame_send(fd, a->protocol, type, a->my_rank,
                                       payload, len, a->timeout);
    if (lost)
        *lost = r != IO_OK;
    if (r != IO_OK)
        return hog_errf(err, HOG_ENET, "%s %s", peer,
                        hog_tcp_io_what(r, a->timeout, why, sizeof why));
    return HOG_OK;
}

/* A frame in from the server, at most 1023 bytes into buf[1024]; a
 * refusal is the server's sentence. */
static hog_status client_recv(const struct auth *a, int fd, struct frame *f,
                              unsigned char buf[1024], const char *peer,
                              bool *lost, hog_err *err)
{
    hog_err e;
    enum io_res io = IO_OK;
    hog_status st = hog_tcp_frame_recv_io(fd, f, buf, 1024 - 1, a->timeout, &io,
                                          &e);
    if (lost)
        *lost = io != IO_OK;
    if (st != HOG_OK)
        return hog_errf(err, st, "%s: %s", peer, e.msg);
    if (f->type == T_REFUSE) {
        buf[f->len] = 0;
        return hog_errf(err, HOG_ENET, "%s refused rank %u: %s", peer,
                        a->my_rank, (char *)buf);
    }
    return HOG_OK;
}

/* Client, first message. */
hog_status hog_tcp_client_hello(const struct auth *a, int fd, unsigned kind,
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
    return client_send(a, fd, T_HELLO1, h->raw, h->raw_len, peer, lost, err);
}

/* Client: challenge in, proof out. */
hog_status hog_tcp_client_prove(const struct auth *a, int fd,
                                struct hello *h, unsigned char nonce_s[32],
                                const char *peer, bool *lost, hog_err *err)
{
    struct frame f;
    unsigned char buf[1024];
    hog_status st = client_recv(a, fd, &f, buf, peer, lost, err);
    if (st != HOG_OK)
        return st;
    if (f.type != T_CHALLENGE || f.len != 32)
        return hog_errf(err, HOG_ENET, "%s: expected a challenge, got a "
                        "frame of type %u", peer, f.type);
    memcpy(nonce_s, buf, 32);
    unsigned char pr[32];
    proof(a, "hogtrain-c", nonce_s, h->nonce, h->raw, h->raw_len, pr);
    return client_send(a, fd, T_PROOF, pr, 32, peer, lost, err);
}

/* Client: welcome (server's proof) or refusal. */
hog_status hog_tcp_client_welcome(const struct auth *a, int fd,
                                  const struct hello *h,
                                  const unsigned char nonce_s[32],
                                  const char *peer, bool *lost, hog_err *err)
{
    struct frame f;
    unsigned char buf[1024];
    hog_status st = client_recv(a, fd, &f, buf, peer, lost, err);
    if (st != HOG_OK)
        return st;
    unsigned char want[32];
    proof(a, "hogtrain-s", h->nonce, nonce_s, "", 0, want);
    if (f.type != T_WELCOME || f.len != 32 || !hog_net_equal32(buf, want))
        return hog_errf(err, HOG_ENET, "%s does not hold this job's secret "
                        "(its proof does not match)", peer);
    return HOG_OK;
}

/* ---- serving handshakes, many at a time -------------------------------------- */

/* Says why, on a->log and (fd >= 0) to the peer, best effort. */
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
        (void)hog_tcp_frame_send(fd, HOG_NET_PROTOCOL, T_REFUSE, a->my_rank,
                                 msg, strlen(msg), 1.0);
}

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


hog_status hog_tcp_hs_set_init(struct hs_set *s, hog_err *err)
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
hog_status hog_tcp_hs_add(const struct auth *a, struct hs_set *s, int fd,
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
    enum io_res r = hog_tcp_frame_send(fd, a->protocol, T_CHALLENGE, a->my_rank,
                                       c->nonce_s, 32, a->timeout);
    if (r != IO_OK) {
        refuse(a, -1, peer, "%s",
               hog_tcp_io_what(r, a->timeout, why, sizeof why));
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
            if (hog_tcp_frame_check_header(c->in, f, e) != HOG_OK ||
                hog_tcp_frame_check_len(f, sizeof c->in - HDR, e) != HOG_OK)
                return -1;
            if (c->got == HDR + f->len)
                return hog_tcp_frame_check_crc(c->in, f, c->in + HDR, e) ==
                               HOG_OK ? 1 : -1;
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
    enum io_res r = hog_tcp_frame_send(c->fd, a->protocol, T_WELCOME,
                                       a->my_rank, pr, 32, a->timeout);
    if (r != IO_OK) {
        refuse(a, -1, c->peer, "%s",
               hog_tcp_io_what(r, a->timeout, why, sizeof why));
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
hog_status hog_tcp_hs_serve(const struct auth *a, struct hs_set *s, int lfd,
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
            hog_tcp_set_nonblock(nc);
            char addr[ADDR_MAX];
            hog_tcp_addr_str((struct sockaddr *)&ss, addr, sizeof addr);
            hog_status st = hog_tcp_hs_add(a, s, nc, addr, err);
            if (st != HOG_OK)
                return st;
        }
    }
}

/* Closes what is left: connections in their handshake at once (the
 * rendezvous is over for them), refused ones once drained. */
void hog_tcp_hs_set_free(const struct auth *a, struct hs_set *s)
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
    (void)hog_tcp_hs_serve(a, s, -1, &none, hog_now() + 0.5, NULL, NULL, &fd,
                           peer, &rank, &port, &e);
    for (unsigned i = 0; i < s->n; i++)
        close(s->c[i].fd);
    free(s->c);
    s->c = NULL;
    s->n = 0;
}
