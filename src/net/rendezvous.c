/*
 * The TCP backend's rendezvous: how a group comes up. Rank 0 listens on
 * the coordinator address; every other rank opens its own ring listener
 * on the address it reaches the coordinator from and joins, shaking hands
 * (auth.c), retrying a lost or unanswered handshake on a new connection
 * until the rendezvous deadline. When all have joined, rank 0 sends each
 * the table of ring addresses; each rank connects to its successor and
 * accepts its predecessor, says ready, and rank 0 answers go when every
 * ring link is up. The control connections and listeners then close, and
 * hog_net_open_tcp() hands out the ring (ring.c).
 */
#include "net/tcp_internal.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    m->st = hog_tcp_client_prove(m->a, m->fd, m->h, m->nonce_s, m->peer, NULL,
                                 m->err);
    return m->st;
}

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
    hog_status st = hog_tcp_connect_until((const struct sockaddr *)next_sa,
                                          next_sl, deadline, "the next rank",
                                          &t->next_fd, err);
    if (st != HOG_OK)
        return st;
    hog_tcp_addr_str((const struct sockaddr *)next_sa, t->next_addr,
                     sizeof t->next_addr);
    char peer_next[ADDR_MAX + 32];
    snprintf(peer_next, sizeof peer_next, "rank %u (%s)", next, t->next_addr);
    struct hello h;
    unsigned char nonce_s[32];
    if ((st = hog_tcp_client_hello(a, t->next_fd, KIND_RING, 0, &h, peer_next,
                                   NULL, err)) != HOG_OK)
        return st;
    struct ring_mid mid = { a, t->next_fd, &h, nonce_s, peer_next, err, false,
                            HOG_OK };
    struct want wt = { KIND_RING, prev, prev, NULL, NULL, me == 0 };
    int c;
    char peer[ADDR_MAX];
    unsigned r, port;
    if ((st = hog_tcp_hs_serve(a, hs, lfd, &wt, deadline, ring_mid, &mid, &c,
                               peer, &r, &port, err)) != HOG_OK)
        return st; /* our own client step failed, or the listener */
    if (c < 0)
        return hog_errf(err, HOG_ETIMEDOUT, "rank %u (the previous in the "
                        "ring) did not connect within the rendezvous "
                        "timeout", prev);
    t->prev_fd = c;
    snprintf(t->prev_addr, sizeof t->prev_addr, "%s", peer);
    if (!mid.done && (st = ring_mid(&mid)) != HOG_OK)
        return st;
    return hog_tcp_client_welcome(a, t->next_fd, &h, nonce_s, peer_next, NULL,
                                  err);
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
    if ((st = hog_tcp_hs_set_init(&hs, err)) != HOG_OK)
        goto out;
    for (unsigned r = 0; r < w; r++)
        m[r].fd = -1;
    if ((st = hog_tcp_listen_on((struct sockaddr *)&v->coord, v->coord_len,
                                &v->lfd, err)) != HOG_OK)
        goto out;
    taken[0] = true;
    snprintf(taken_by[0], ADDR_MAX, "%s", v->coord_s);
    struct want wj = { KIND_JOIN, 1, w - 1, taken, taken_by, false };
    for (unsigned joined = 1; joined < w;) {
        int c;
        char peer[ADDR_MAX];
        unsigned r, port;
        if ((st = hog_tcp_hs_serve(&v->a, &hs, v->lfd, &wj, v->deadline, NULL,
                                   NULL, &c, peer, &r, &port, err)) != HOG_OK)
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
        enum io_res ir = hog_tcp_frame_send(m[r].fd, t->protocol, T_TABLE, 0,
                                            v->buf, tab_len, t->timeout);
        if (ir != IO_OK) {
            char why[128];
            st = hog_errf(err, HOG_ENET, "rank %u (%s) %s during the "
                          "rendezvous", r, m[r].addr,
                          hog_tcp_io_what(ir, t->timeout, why, sizeof why));
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
        st = hog_tcp_frame_recv(m[r].fd, &f, v->buf, 64,
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
        (void)hog_tcp_frame_send(m[r].fd, t->protocol, T_GO, 0, "", 0,
                                 t->timeout);
out:
    hog_tcp_hs_set_free(&v->a, &hs);
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
        st = hog_tcp_connect_until((struct sockaddr *)&v->coord, v->coord_len,
                                   v->deadline, "the coordinator", ctl, err);
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
            if ((st = hog_tcp_listen_on((struct sockaddr *)&me, ml, &v->lfd,
                                        err)) != HOG_OK)
                break;
            ml = sizeof me;
        }
        getsockname(v->lfd, (struct sockaddr *)&me, &ml);
        struct hello h;
        unsigned char nonce_s[32];
        bool lost = false;
        if ((st = hog_tcp_client_hello(a, *ctl, KIND_JOIN,
                                       sockaddr_get_port(&me), &h, peer0, &lost,
                                       err)) == HOG_OK &&
            (st = hog_tcp_client_prove(a, *ctl, &h, nonce_s, peer0, &lost,
                                       err)) == HOG_OK &&
            (st = hog_tcp_client_welcome(a, *ctl, &h, nonce_s, peer0, &lost,
                                         err)) == HOG_OK)
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
        hog_tcp_sleep_s(0.05);
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
    st = hog_tcp_frame_recv(ctl, &f, v->buf, CTRL_MAX, left > 0 ? left : 1, &e);
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
        (st = hog_tcp_hs_set_init(&hs, err)) != HOG_OK ||
        (st = ring_up(t, a, v->lfd, &hs, &next_sa, next_sl,
                      hog_now() + v->connect_t, err)) != HOG_OK)
        goto out;
    if (hog_tcp_frame_send(ctl, t->protocol, T_READY, t->base.rank, "", 0,
                           t->timeout) != IO_OK) {
        st = hog_errf(err, HOG_ENET, "%s closed the connection during the "
                      "ring set-up", peer0);
        goto out;
    }
    st = hog_tcp_frame_recv(ctl, &f, v->buf, 64, v->connect_t + t->timeout, &e);
    if (st == HOG_OK && f.type != T_GO)
        st = hog_errf(&e, HOG_ENET, "sent frame type %u instead of go",
                      f.type);
    if (st != HOG_OK)
        st = hog_errf(err, st, "%s during the ring set-up: %s", peer0, e.msg);
out:
    hog_tcp_hs_set_free(a, &hs);
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
    t->base.ops = &hog_tcp_ops;
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
    if ((st = hog_tcp_resolve(o->coordinator, &v.coord, &v.coord_len, err)) !=
        HOG_OK)
        goto out;
    if (!o->secret && !o->insecure &&
        !hog_tcp_is_loopback((struct sockaddr *)&v.coord)) {
        st = hog_errf(err, HOG_EINVAL, "coordinator %s is not a loopback "
                      "address: without a shared secret (--secret-file) "
                      "anyone could join; give a secret, or --insecure on a "
                      "trusted network", o->coordinator);
        goto out;
    }
    hog_tcp_addr_str((struct sockaddr *)&v.coord, v.coord_s, sizeof v.coord_s);
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
        hog_tcp_close(&t->base);
        return st;
    }
    *out = &t->base;
    return HOG_OK;
}
