/*
 * The streamer's inside, shared by stream.c and its two backends
 * (stream_uring.c, stream_pread.c). Not for the rest of the library: they
 * use the hog_stream_* calls of io.h.
 */
#ifndef HOG_STREAM_BE_H
#define HOG_STREAM_BE_H

#include "io/io.h"

#include <pthread.h>

enum slot_state { SLOT_FREE = 0, SLOT_READING, SLOT_DONE, SLOT_HELD };

struct slot {
    unsigned char *buf;  /* slot_bytes, 4 KiB aligned */
    enum slot_state state;
    uint64_t k;          /* chunk being read or held */
    uint64_t pos;        /* its position in the queue */
    uint64_t got;        /* bytes read so far */
    int error;           /* errno of a failed read, 0 */
    int fd;              /* the descriptor its read uses */
};

struct hog_stream;

/* A backend: NULL slots are not allowed. Errors from submit/wait are
 * recorded in the slot (error, got), not returned: the consumer reports
 * them when it reaches that chunk. A backend thread never touches
 * slot->state: wait() (the consumer's thread) sets SLOT_DONE, after which
 * got and error are the consumer's to read. */
struct hog_stream_backend {
    const char *name;
    /* Sets up; on failure returns the errno and fills why. */
    int (*setup)(struct hog_stream *s, char *why, size_t whylen);
    /* Starts reading slot's chunk (from slot->got on, for short reads). */
    void (*submit)(struct hog_stream *s, unsigned slot);
    /* Makes started reads go (io_uring_submit); may be a no-op. */
    void (*flush)(struct hog_stream *s);
    /* Blocks until slot's read is over; sets it SLOT_DONE. Called for every
     * slot the consumer takes, whatever its state. */
    void (*wait)(struct hog_stream *s, unsigned slot);
    void (*teardown)(struct hog_stream *s);
};

extern const struct hog_stream_backend hog_stream_uring;
extern const struct hog_stream_backend hog_stream_pread;

struct hog_stream {
    char *path;
    struct hog_hgb_info in;
    int fd;               /* the reads' descriptor (direct_fd or in.fd) */
    int direct_fd;        /* opened with O_DIRECT, or -1 */
    int direct;           /* reads use direct_fd */
    const struct hog_stream_backend *be;
    void *be_state;
    char fallback[256];

    unsigned nslots;
    unsigned window;      /* hog_stream_window() */
    uint64_t slot_bytes;
    unsigned char *ring;  /* nslots * slot_bytes, one mapping */
    uint64_t ring_bytes;
    struct slot *slots;

    /* The queue of chunks: positions [0, pushed) were queued, [0, submitted)
     * have a buffer, [0, delivered) were handed out. */
    uint64_t *queue;      /* chunk index of position p at queue[p % qcap] */
    unsigned *qslot;      /* its slot, once submitted */
    uint64_t qcap, pushed, submitted, delivered;

    uint64_t bytes_read;
    double read_wait_s;

    /* The labels of each chunk the first time it is handed out, checked
     * against the header's summary once all were (the loader's check). */
    struct hog_label_scan labels;
    unsigned char *seen;  /* n_chunks flags */
    uint64_t n_seen;
};

/* For a backend: the file range slot still has to read. */
static inline void hog_stream_slot_range(const struct hog_stream *s,
                                         unsigned i, uint64_t *off,
                                         uint64_t *len, unsigned char **dst)
{
    const struct slot *sl = &s->slots[i];
    const struct hog_hgb_chunk *c = &s->in.chunks[sl->k];
    *off = c->offset + sl->got;
    *len = c->bytes - sl->got;
    *dst = sl->buf + sl->got;
}

#endif
