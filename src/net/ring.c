/*
 * The TCP backend's ring all-reduce (Patarasuk and Yuan 2009): 2(world-1)
 * steps; rank r sends segment (r - t) mod world at reduce-scatter step t
 * and receives (r - t - 1), adding it into its own copy; then passes the
 * finished segments on round the ring. Every segment is cut into chunks
 * and a chunk is sent on as soon as it arrived and was added, so the steps
 * overlap and every link carries 2(world-1)/world of the vector:
 * bandwidth-optimal. Each sum is computed once, by one rank, and copied to
 * the others, so all ranks end with the same bits. A rank with more to
 * send but nothing ready sends WAIT frames (a bare header) now and then,
 * so that only the rank right after a silent one hears nothing and blames
 * it (ring_run). Also here: the backend's table, and its close, which
 * drains both links after a failure.
 */
#include "net/tcp_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

void hog_net_segment(size_t len, unsigned world, unsigned s, size_t *lo,
                     size_t *hi)
{
    /* 128-bit products: len * world never overflows. */
    *lo = (size_t)((unsigned __int128)len * s / world);
    *hi = (size_t)((unsigned __int128)len * (s + 1) / world);
}

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

/* The same for doubles: the exact solvers' products (net.h). */
static void add_f64(void *dst, const void *in, size_t bytes)
{
    double *d = dst;
    const double *x = in;
    size_t n = bytes / 8;
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
        (void)hog_tcp_frame_send(t->prev_fd, HOG_NET_PROTOCOL, T_ABORT,
                                 t->base.rank, msg, l, 0.2);
    if (next_ok && t->next_fd >= 0)
        (void)hog_tcp_frame_send(t->next_fd, HOG_NET_PROTOCOL, T_ABORT,
                                 t->base.rank, msg, l, 0.2);
}

/* A frame arriving from the successor: only aborts travel that way. */
static hog_status read_backward(struct tcp *t, hog_err *err)
{
    unsigned w = t->base.world;
    unsigned next = (t->base.rank + 1) % w;
    struct frame f;
    char buf[1024];
    hog_err e;
    hog_status st = hog_tcp_frame_recv(t->next_fd, &f, buf, sizeof buf - 1, 1.0,
                                       &e);
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
    hog_tcp_frame_header(o->hdr, g->t->protocol, T_DATA, g->t->base.rank,
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
    hog_tcp_frame_header(o->hdr, g->t->protocol, T_WAIT, g->t->base.rank, 0, "",
                         0);
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
    if (hog_tcp_io_recv(t->prev_fd, msg, l, 1.0) != IO_OK)
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
            if (hog_tcp_frame_check_header(in->hdr, &f, &e) != HOG_OK)
                return hog_errf(err, HOG_ENET, "rank %u (%s): %s", prev,
                                t->prev_addr, e.msg);
            if (f.type == T_ABORT)
                return in_abort(t, &f, err);
            if (f.type == T_WAIT && f.len == 0 && f.rank == prev) {
                if (hog_tcp_frame_check_crc(in->hdr, &f, "", &e) != HOG_OK)
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

static hog_status tcp_sum_f64(hog_net *n, double *buf, size_t len,
                              hog_err *err)
{
    return ring_allreduce((struct tcp *)n, buf, len, 8, add_f64, err);
}

static hog_status tcp_max(hog_net *n, uint64_t *buf, size_t len, hog_err *err)
{
    return ring_allreduce((struct tcp *)n, buf, len, 8, max_u64, err);
}

/* ---- closing -------------------------------------------------------------------- */

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

void hog_tcp_close(hog_net *n)
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

const struct hog_net_ops hog_tcp_ops = { "tcp", tcp_sum, tcp_sum_f64,
                                         tcp_max, hog_tcp_close };
