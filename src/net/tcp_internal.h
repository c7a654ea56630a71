/*
 * The TCP backend's private header: the handle (struct tcp), the frame
 * and handshake types, and the steps its files share. Not for other
 * modules: they use net/net.h. fuzz/fuzz_net.c includes it too, to drive
 * the frame decoder, the listener's handshakes and the ring directly.
 *
 *   frame.c       frames, and the timed sends and receives under them
 *   sock.c        addresses, listening, connecting with retries
 *   auth.c        the authenticated handshake, and a listener serving many
 *   rendezvous.c  the coordinator and the joining ranks: the group comes up
 *   ring.c        the pipelined ring all-reduce; the backend's table
 */
#ifndef HOG_NET_TCP_INTERNAL_H
#define HOG_NET_TCP_INTERNAL_H

#include "net/net.h"

#include <sys/socket.h>

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
static inline unsigned next_rank(const struct tcp *t)
{
    return (t->base.rank + 1) % t->base.world;
}

static inline unsigned prev_rank(const struct tcp *t)
{
    return (t->base.rank + t->base.world - 1) % t->base.world;
}

/* Little-endian fields. */
static inline void put16(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static inline void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static inline uint32_t get16(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}
static inline uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/* ---- frame.c ------------------------------------------------------------------ */

/* Outcome of a transfer, turned into a sentence by the caller. */
enum io_res { IO_OK = 0, IO_EOF, IO_TIMEOUT, IO_ERR };

/* A control frame: up to max payload bytes into buf. The reason of a
 * failure (without the peer's address) goes into err. */
struct frame {
    unsigned version, type, rank;
    uint32_t len;
};


enum io_res hog_tcp_io_wait(int fd, short ev, double timeout);
enum io_res hog_tcp_io_recv(int fd, void *buf, size_t len, double timeout);
/* The sentence for r: "closed the connection", "did not answer for 10 s",
 * ... (in buf where it needs one). */
const char *hog_tcp_io_what(enum io_res r, double timeout, char *buf,
                            size_t len);

void hog_tcp_frame_header(unsigned char *h, unsigned version, uint32_t type,
                          uint32_t rank, uint32_t len, const void *payload,
                          size_t crc_len);
enum io_res hog_tcp_frame_send(int fd, unsigned version, uint32_t type,
                               uint32_t rank, const void *payload, size_t len,
                               double timeout);
hog_status hog_tcp_frame_check_header(const unsigned char *h, struct frame *f,
                                      hog_err *err);
hog_status hog_tcp_frame_check_len(const struct frame *f, size_t max,
                                   hog_err *err);
hog_status hog_tcp_frame_check_crc(const unsigned char *h,
                                   const struct frame *f, const void *payload,
                                   hog_err *err);
hog_status hog_tcp_frame_recv_io(int fd, struct frame *f, void *buf, size_t max,
                                 double timeout, enum io_res *io, hog_err *err);
hog_status hog_tcp_frame_recv(int fd, struct frame *f, void *buf, size_t max,
                              double timeout, hog_err *err);

/* ---- sock.c ------------------------------------------------------------------- */

void hog_tcp_addr_str(const struct sockaddr *sa, char *buf, size_t len);
bool hog_tcp_is_loopback(const struct sockaddr *sa);
hog_status hog_tcp_resolve(const char *hostport, struct sockaddr_storage *ss,
                           socklen_t *sl, hog_err *err);
/* Non-blocking, and TCP_NODELAY. */
void hog_tcp_set_nonblock(int fd);
void hog_tcp_sleep_s(double s);
hog_status hog_tcp_listen_on(const struct sockaddr *sa, socklen_t sl,
                             int *fd_out, hog_err *err);
hog_status hog_tcp_connect_until(const struct sockaddr *sa, socklen_t sl,
                                 double deadline, const char *what, int *out,
                                 hog_err *err);

/* ---- auth.c ------------------------------------------------------------------- */

/* One side of a handshake: the job it belongs to, and how it proves it. */
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

/* What a server accepts: kind, a rank range, ranks already taken. */
struct want {
    unsigned kind;
    unsigned lo, hi;        /* inclusive */
    const bool *taken;      /* NULL: none */
    char (*taken_by)[ADDR_MAX];
    bool late;              /* joins come too late: refuse them as such */
};

/* Connections in their handshake at a listener (auth.c). */
struct hs_set {
    struct hs_conn *c; /* HS_MAX */
    unsigned n;
};

/* The client's steps; *lost (if not NULL) as in auth.c. */
hog_status hog_tcp_client_hello(const struct auth *a, int fd, unsigned kind,
                                unsigned port, struct hello *h,
                                const char *peer, bool *lost, hog_err *err);
hog_status hog_tcp_client_prove(const struct auth *a, int fd,
                                struct hello *h, unsigned char nonce_s[32],
                                const char *peer, bool *lost, hog_err *err);
hog_status hog_tcp_client_welcome(const struct auth *a, int fd,
                                  const struct hello *h,
                                  const unsigned char nonce_s[32],
                                  const char *peer, bool *lost, hog_err *err);

/* The server's side: a set of connections served under one poll. */
hog_status hog_tcp_hs_set_init(struct hs_set *s, hog_err *err);
hog_status hog_tcp_hs_add(const struct auth *a, struct hs_set *s, int fd,
                          const char *peer, hog_err *err);
hog_status hog_tcp_hs_serve(const struct auth *a, struct hs_set *s, int lfd,
                            const struct want *w, double deadline,
                            hog_status (*between)(void *), void *bctx,
                            int *fd, char *peer, unsigned *rank,
                            unsigned *port, hog_err *err);
void hog_tcp_hs_set_free(const struct auth *a, struct hs_set *s);

/* ---- ring.c ------------------------------------------------------------------- */

/* The backend's table: the ring all-reduce's sum and maximum, and the
 * close (which drains both links after a failure). */
extern const struct hog_net_ops hog_tcp_ops;
void hog_tcp_close(hog_net *n);

#endif
