/*
 * net: scale-out. One hogtrain process per machine trains its shard; the
 * processes average their models every so often (MA, or BMUF's block
 * momentum) through a ring all-reduce over TCP, or over MPI_Allreduce where
 * the build has MPI. docs/SCALEOUT.md has the protocol and the options.
 *
 * A group (hog_net) is a rendezvous plus a ring: rank 0 listens on the
 * coordinator address, every other rank connects to it, proves that it
 * holds the job's secret (HMAC-SHA256 over nonces from both sides), and
 * learns where its ring neighbours listen. Every socket operation has a
 * timeout; a dead, silent or misbehaving peer is a status naming its rank
 * and address, never a hang.
 *
 * Backends sit behind a small table (struct hog_net_ops): "tcp" (always)
 * and "mpi" (built where mpicc is found; else hog_net_open_mpi() answers
 * HOG_ENOTSUP with a sentence).
 */
#ifndef HOG_NET_H
#define HOG_NET_H

#include "core/core.h"

#include <stdio.h>

/* ---- cryptography, over libsodium (crypto.c) -------------------------------- */

/* sodium_init(), once per process (thread-safe); the other calls here that
 * need it call it themselves. */
hog_status hog_net_crypto_init(hog_err *err);
void hog_sha256(const void *data, size_t len, unsigned char out[32]);
/* Any key length, 0 included. */
void hog_hmac_sha256(const void *key, size_t keylen, const void *msg,
                     size_t msglen, unsigned char out[32]);
/* Constant-time comparison of two 32-byte proofs. */
bool hog_net_equal32(const unsigned char *a, const unsigned char *b);
/* 32 bytes from the system's random generator. */
hog_status hog_net_nonce(unsigned char out[32], hog_err *err);

/* ---- the group ----------------------------------------------------------------- */

/* The wire protocol's version, carried in every frame header. */
#define HOG_NET_PROTOCOL 2
#define HOG_NET_MAX_WORLD 1024
#define HOG_NET_MAX_SECRET 4096

typedef struct hog_net hog_net;

struct hog_net_opts {
    unsigned world;              /* number of processes, >= 1 */
    unsigned rank;               /* this process, 0 .. world-1 */
    const char *coordinator;     /* "HOST:PORT" or "[V6]:PORT"; rank 0 listens */
    const char *job;             /* job id both sides must name (NULL: "hogtrain") */
    const unsigned char *secret; /* NULL: no secret (loopback only) */
    size_t secret_len;
    int insecure;                /* allow a non-loopback address without secret */
    double connect_timeout;      /* s: the whole rendezvous (default 60) */
    double timeout;              /* s: any socket operation without progress */
    size_t chunk_bytes;          /* all-reduce pipeline chunk (0: 512 KiB) */
    FILE *log;                   /* refused peers are reported here (NULL: not) */
    int verbose;                 /* and, on rank 0, every rank that joins */
    unsigned protocol;           /* tests only: speak this version (0: ours) */
};

void hog_net_opts_init(struct hog_net_opts *o);

/* Checks the form of a coordinator address: "HOST:PORT" or "[V6]:PORT",
 * a host of 1 to 255 bytes and a port from 1 to 65535 (HOG_EINVAL and a
 * sentence otherwise). Resolves nothing. */
hog_status hog_net_check_address(const char *hostport, hog_err *err);

/* Rendezvous and ring set-up over TCP. */
hog_status hog_net_open_tcp(const struct hog_net_opts *o, hog_net **out,
                            hog_err *err);
/* MPI_COMM_WORLD (MPI_Init if needed); world and rank come from MPI. */
hog_status hog_net_open_mpi(const struct hog_net_opts *o, hog_net **out,
                            hog_err *err);
/* True when this build has the MPI backend; and whether this process seems
 * to run under mpirun (OMPI_COMM_WORLD_SIZE, PMI_SIZE, ...). */
bool hog_net_have_mpi(void);
bool hog_net_under_mpirun(void);

unsigned hog_net_world(const hog_net *n);
unsigned hog_net_rank(const hog_net *n);
const char *hog_net_backend(const hog_net *n);

/* Element-wise sum over the ranks, in place, every rank the same bits.
 * TCP: a pipelined ring (reduce-scatter, then all-gather). The order of
 * the float additions is fixed: element i of segment s (the ring cuts the
 * vector into world segments, s covering [s*len/world, (s+1)*len/world))
 * is ((x_s + x_{s+1}) + x_{s+2}) + ... + x_{s-1}, ranks mod world. */
hog_status hog_net_allreduce_sum(hog_net *n, float *buf, size_t len,
                                 hog_err *err);
/* The same for doubles (the exact solvers' products and sums, which
 * floats would round to 1e-7): the same order of additions, each sum made
 * once and copied, so every rank holds the same bits. */
hog_status hog_net_allreduce_sum_f64(hog_net *n, double *buf, size_t len,
                                     hog_err *err);
/* hog_net_allreduce_sum_f64 as a hog_reduce_fn (include/hogtrain.h), ctx
 * the hog_net: hog_train_opts.reduce for --algo newton and lbfgs. */
hog_status hog_net_reduce(void *ctx, double *buf, uint64_t n, hog_err *err);
/* Element-wise maximum, in place. */
hog_status hog_net_allreduce_max(hog_net *n, uint64_t *buf, size_t len,
                                 hog_err *err);
/* Closes the sockets (or finalizes MPI). NULL is fine. */
void hog_net_close(hog_net *n);

/* The segment bounds of the ring (for tests and docs): [*lo, *hi). */
void hog_net_segment(size_t len, unsigned world, unsigned s, size_t *lo,
                     size_t *hi);

/* Reads a secret file (at most HOG_NET_MAX_SECRET bytes, at least 16; one
 * trailing newline dropped) into a malloc'd buffer. */
hog_status hog_net_read_secret(const char *path, unsigned char **out,
                               size_t *len, hog_err *err);

/* The backend table. A NULL slot is "not supported". */
struct hog_net_ops {
    const char *name;
    hog_status (*sum_f32)(hog_net *n, float *buf, size_t len, hog_err *err);
    hog_status (*sum_f64)(hog_net *n, double *buf, size_t len, hog_err *err);
    hog_status (*max_u64)(hog_net *n, uint64_t *buf, size_t len, hog_err *err);
    void (*close)(hog_net *n);
};

/* What every backend's handle starts with. */
struct hog_net {
    const struct hog_net_ops *ops;
    unsigned world, rank;
};

/* ---- model averaging (avg.c) --------------------------------------------------- */

enum hog_avg_mode {
    HOG_AVG_MA = 0, /* plain model averaging */
    HOG_AVG_BMUF    /* block momentum (Chen and Huo, ICASSP 2016) */
};

struct hog_avg_opts {
    enum hog_avg_mode mode;
    double momentum;      /* BMUF block momentum eta_b; < 0: 1 - 1/world */
    double block_lr;      /* BMUF block learning rate zeta (default 1) */
    int nesterov;         /* BMUF: hand out w_g + eta_b * delta (default 1) */
    const char *checkpoint; /* write the averaged model here after each
                               averaging (temporary file, then rename) */
    const hog_model *like;  /* checkpoint: loss, bias and labels from here */
    uint64_t epoch_blocks;  /* averagings per epoch: the checkpoint is written
                               at every epoch's end, and in between at most
                               once a second */
};

void hog_avg_opts_init(struct hog_avg_opts *o);

struct hog_avg;
hog_status hog_avg_create(hog_net *n, const struct hog_avg_opts *o,
                          struct hog_avg **out, hog_err *err);
/* A hog_average_fn (include/hogtrain.h); ctx is the struct hog_avg. */
hog_status hog_avg_step(void *ctx, float *w, uint64_t n, hog_err *err);
uint64_t hog_avg_count(const struct hog_avg *a);
void hog_avg_free(struct hog_avg *a);

/* ---- sharding (avg.c) ------------------------------------------------------------ */

enum hog_shard_mode {
    HOG_SHARD_STRIDE = 0, /* rows rank, rank + world, rank + 2 world, ... */
    HOG_SHARD_RANGE       /* one contiguous range of about rows/world */
};

/* The rows of d that belong to rank, as a new hog_data (copies). */
hog_status hog_net_shard(const hog_data *d, unsigned rank, unsigned world,
                         enum hog_shard_mode mode, hog_data **out,
                         hog_err *err);

#endif
