/*
 * The streamer's io_uring backend: one ring with an SQE per slot, the ring
 * buffers registered once (READ_FIXED: no page pinning per read), reads
 * submitted in batches and reaped in any order; the consumer waits only
 * for the slot it needs next. Short reads are resubmitted for the rest; a
 * read at end of file (0 bytes) ends the slot short, which the consumer
 * reports as a file that shrank.
 *
 * Setup fails over to pread (stream.c) on ENOSYS (no io_uring), EPERM
 * (seccomp, io_uring_disabled sysctl) and ENOMEM (memlock limit on the
 * ring). Registered buffers refused (memlock again) only lose the fixed
 * reads. HOGTRAIN_TEST_URING_FAIL=EPERM|ENOSYS|ENOMEM fakes a failed
 * io_uring_queue_init: the test seam of the fallback.
 */
#include "io/stream_be.h"

#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct uring_state {
    struct io_uring ring;
    bool fixed;    /* buffers registered: READ_FIXED */
    unsigned pending; /* SQEs prepared but not submitted */
};

static int test_seam(void)
{
    const char *v = getenv("HOGTRAIN_TEST_URING_FAIL");
    if (!v || !*v)
        return 0;
    if (strcmp(v, "EPERM") == 0)
        return EPERM;
    if (strcmp(v, "ENOSYS") == 0)
        return ENOSYS;
    if (strcmp(v, "ENOMEM") == 0)
        return ENOMEM;
    return EINVAL;
}

static void explain(int e, char *why, size_t len)
{
    const char *what =
        e == ENOSYS ? "the kernel has no io_uring"
        : e == EPERM ? "refused by a seccomp filter or the "
                       "kernel.io_uring_disabled sysctl"
        : e == ENOMEM ? "the locked-memory limit (ulimit -l) is too low for a ring"
                      : "setup failed";
    snprintf(why, len, "io_uring_queue_init: %s: %s", strerror(e), what);
}

static int uring_setup(struct hog_stream *s, char *why, size_t whylen)
{
    struct uring_state *u = calloc(1, sizeof *u);
    if (!u) {
        snprintf(why, whylen, "out of memory");
        return ENOMEM;
    }
    unsigned entries = 1;
    while (entries < s->nslots && entries < 4096)
        entries *= 2;
    int e = test_seam();
    if (e == 0) {
        int r = io_uring_queue_init(entries, &u->ring, 0);
        e = r < 0 ? -r : 0;
    }
    if (e != 0) {
        explain(e, why, whylen);
        free(u);
        return e;
    }
    struct iovec *iov = malloc(s->nslots * sizeof *iov);
    if (iov) {
        for (unsigned i = 0; i < s->nslots; i++)
            iov[i] = (struct iovec){ s->slots[i].buf, s->slot_bytes };
        u->fixed = io_uring_register_buffers(&u->ring, iov, s->nslots) == 0;
        free(iov);
    }
    s->be_state = u;
    return 0;
}

static void uring_submit(struct hog_stream *s, unsigned i)
{
    struct uring_state *u = s->be_state;
    struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
    if (!sqe) { /* the SQ is full: send what is there, then retry */
        io_uring_submit(&u->ring);
        u->pending = 0;
        sqe = io_uring_get_sqe(&u->ring);
    }
    uint64_t off, len;
    unsigned char *dst;
    hog_stream_slot_range(s, i, &off, &len, &dst);
    if (len > (1u << 30))
        len = 1u << 30;
    if (u->fixed)
        io_uring_prep_read_fixed(sqe, s->slots[i].fd, dst, (unsigned)len, off, (int)i);
    else
        io_uring_prep_read(sqe, s->slots[i].fd, dst, (unsigned)len, off);
    io_uring_sqe_set_data64(sqe, i);
    u->pending++;
}

static void uring_flush(struct hog_stream *s)
{
    struct uring_state *u = s->be_state;
    if (u->pending) {
        io_uring_submit(&u->ring);
        u->pending = 0;
    }
}

/* One completion: the slot's read advanced, ended or failed. */
static void complete(struct hog_stream *s, unsigned i, int res)
{
    struct slot *sl = &s->slots[i];
    uint64_t want = s->in.chunks[sl->k].bytes;
    if (res == -EINTR || res == -EAGAIN) {
        uring_submit(s, i);
        return;
    }
    if (res < 0) {
        sl->error = -res;
        sl->state = SLOT_DONE;
        return;
    }
    sl->got += (uint64_t)res;
    if (res == 0 || sl->got >= want)
        sl->state = SLOT_DONE;
    else
        uring_submit(s, i); /* short read: the rest */
}

static void uring_wait(struct hog_stream *s, unsigned i)
{
    struct uring_state *u = s->be_state;
    while (s->slots[i].state == SLOT_READING) {
        uring_flush(s);
        struct io_uring_cqe *cqe;
        int r = io_uring_wait_cqe(&u->ring, &cqe);
        if (r == -EINTR)
            continue;
        if (r < 0) { /* the ring itself failed: fail the slot, no hang */
            s->slots[i].error = -r;
            s->slots[i].state = SLOT_DONE;
            return;
        }
        unsigned j = (unsigned)io_uring_cqe_get_data64(cqe);
        int res = cqe->res;
        io_uring_cqe_seen(&u->ring, cqe);
        if (j < s->nslots)
            complete(s, j, res);
    }
}

static void uring_teardown(struct hog_stream *s)
{
    struct uring_state *u = s->be_state;
    if (!u)
        return;
    /* Reads still in flight land in the ring: reap them before it goes. */
    for (unsigned i = 0; i < s->nslots; i++)
        while (s->slots[i].state == SLOT_READING)
            uring_wait(s, i);
    io_uring_queue_exit(&u->ring);
    free(u);
    s->be_state = NULL;
}

const struct hog_stream_backend hog_stream_uring = {
    "io_uring", uring_setup, uring_submit, uring_flush, uring_wait,
    uring_teardown,
};
