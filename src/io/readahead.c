/*
 * Text read ahead by a thread, in windows of whole lines: what the loader
 * and `convert` read rather than map (a pipe, a device, standard input,
 * convert's input, and every compressed file, whose text exists only as
 * it is decoded by decompress.c).
 *
 * Two buffers. The consumer parses window i in one while the thread reads,
 * and decompresses, window i + 1 into the other; a window is handed over
 * once it holds `window` bytes, cut after its last newline, and the line
 * in progress moves to the front of the other buffer when the consumer
 * gives that back. So reading and decompressing overlap the parallel
 * parse, and besides the result a load holds two windows (and the
 * decoder's dictionary), whatever the size of the text.
 *
 * The thread also keeps the checks that make a stream safe to read to its
 * end: a NUL byte stops it with the line it is on (/dev/urandom is not read
 * until memory runs out), and so does a line longer than hog_line_max().
 * The text inside a compressed file is sniffed like a file's first bytes:
 * a compressed .hgb or model is named as such, not parsed as text. Every
 * error reaches the consumer after the windows before it, in order.
 *
 * Closing stops the thread wherever it is: blocked on a full hand-over, in
 * the decoder, or in a read from a pipe that may never write again (it
 * polls the pipe and an eventfd that close() signals), and joins it.
 */
#include "io/io.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define FIRST_CAP ((size_t)1 << 20) /* a window starts this small: tiny pipes stay cheap */
#define IN_CAP ((size_t)1 << 20)    /* compressed bytes read at a time */

struct buf {
    char *p;
    size_t len, cap;
};

/* Who may touch a buffer. */
enum owner { OWN_THREAD, OWN_READY, OWN_CONSUMER };

struct hog_text_reader {
    /* The thread's own. */
    int fd;
    bool poll_fd;               /* not a regular file: a read may block */
    const char *name;
    enum hog_file_kind kind;
    struct hog_decoder *dec;    /* NULL: plain text */
    unsigned char *in;          /* compressed bytes: in[in_pos..in_len) */
    size_t in_len, in_pos;
    bool in_eof;
    size_t window;
    uint64_t max_line;
    const char *max_line_what; /* the limit that sets it, for the message */
    uint64_t line, line_len;    /* the line in progress and its bytes so far */
    unsigned char first[HOG_SNIFF_BYTES]; /* the decoded text's first bytes */
    size_t first_len;
    bool sniffed;

    /* Shared, under mu. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct buf b[2];            /* each touched only by its owner */
    enum owner own[2];
    unsigned want;              /* the consumer's next buffer */
    bool done;                  /* the thread has ended; st says how */
    hog_status st;
    hog_err err;
    bool stop;                  /* close() asks the thread to end */
    int wake;                   /* eventfd close() writes, for the poll */
    atomic_bool stopping;       /* stop, for the loops that hold no lock */
    pthread_t thread;
    size_t most_cap;            /* the largest buffer so far (stats) */
};

static uint64_t count_newlines(const char *p, size_t n)
{
    uint64_t c = 0;
    for (size_t i = 0; i < n; i++) /* a loop the compiler vectorizes */
        c += p[i] == '\n';
    return c;
}

/* The decoded text's first bytes must be text: a compressed .hgb, model
 * or second layer of compression is named, not parsed. */
static hog_status sniff_inner(struct hog_text_reader *r, hog_err *err)
{
    r->sniffed = true;
    enum hog_file_kind k = hog_file_kind(r->first, r->first_len);
    if (k == HOG_FILE_TEXT || r->first_len == 0)
        return HOG_OK;
    return hog_errf(err, HOG_EFORMAT, "%s is %s, and what it holds is %s, "
                    "not LIBSVM text", r->name, hog_file_kind_name(r->kind),
                    hog_file_kind_name(k));
}

/* Checks n new bytes of text at p: their NUL bytes and line lengths. */
static hog_status account(struct hog_text_reader *r, const char *p, size_t n,
                          hog_err *err)
{
    if (r->dec && !r->sniffed) {
        size_t k = sizeof r->first - r->first_len;
        k = k < n ? k : n;
        memcpy(r->first + r->first_len, p, k);
        r->first_len += k;
        hog_status st;
        if (r->first_len == sizeof r->first && (st = sniff_inner(r, err)) != HOG_OK)
            return st;
    }
    const char *z = memchr(p, 0, n);
    size_t m = z ? (size_t)(z - p) : n;
    const char *nl = memrchr(p, '\n', m);
    if (nl) {
        r->line += count_newlines(p, (size_t)(nl - p) + 1);
        r->line_len = (uint64_t)(p + m - nl - 1);
    } else {
        r->line_len += m;
    }
    if (z)
        return hog_errf(err, HOG_EPARSE, "%s:%llu: NUL byte in the line",
                        r->name, (unsigned long long)r->line);
    if (r->line_len > r->max_line)
        return hog_line_too_long(r->name, r->line, r->max_line,
                                 r->max_line_what, err);
    return HOG_OK;
}

/* One read of the input; -1 with errno on an error, or ECANCELED once
 * close() has asked the thread to stop. */
static ssize_t read_input(struct hog_text_reader *r, void *buf, size_t len)
{
    if (r->poll_fd) {
        struct pollfd p[2] = { { r->fd, POLLIN, 0 }, { r->wake, POLLIN, 0 } };
        while (poll(p, 2, -1) < 0)
            if (errno != EINTR)
                return -1;
        if (p[1].revents) {
            errno = ECANCELED;
            return -1;
        }
    }
    return hog_read_some(r->fd, buf, len);
}

static hog_status read_failed(struct hog_text_reader *r, hog_err *err)
{
    if (atomic_load_explicit(&r->stopping, memory_order_relaxed))
        return HOG_EINTR; /* nobody reads it: close() is waiting */
    return hog_errf(err, HOG_EIO, "%s: read failed: %s", r->name,
                    strerror(errno));
}

/* Appends at most room bytes of text to b; *eof at the end of the text. */
static hog_status produce(struct hog_text_reader *r, struct buf *b, size_t room,
                          bool *eof, hog_err *err)
{
    size_t at = b->len;
    if (!r->dec) {
        ssize_t k = read_input(r, b->p + at, room);
        if (k < 0)
            return read_failed(r, err);
        *eof = k == 0;
        b->len += (size_t)k;
        return account(r, b->p + at, (size_t)k, err);
    }
    for (;;) {
        bool end = false;
        hog_status st = hog_decoder_run(r->dec, r->in, r->in_len, &r->in_pos,
                                        b->p, at + room, &b->len, r->in_eof,
                                        &end, err);
        if (st != HOG_OK)
            return st;
        if (b->len > at || end) {
            *eof = end;
            if ((st = account(r, b->p + at, b->len - at, err)) != HOG_OK)
                return st;
            return end && !r->sniffed ? sniff_inner(r, err) : HOG_OK;
        }
        /* Nothing decoded: the decoder wants more of the file. */
        if (atomic_load_explicit(&r->stopping, memory_order_relaxed))
            return HOG_EINTR;
        memmove(r->in, r->in + r->in_pos, r->in_len - r->in_pos);
        r->in_len -= r->in_pos;
        r->in_pos = 0;
        ssize_t k = read_input(r, r->in + r->in_len, IN_CAP - r->in_len);
        if (k < 0)
            return read_failed(r, err);
        r->in_len += (size_t)k;
        r->in_eof = k == 0;
    }
}

static bool buf_reserve(struct buf *b, size_t cap)
{
    if (b->cap >= cap)
        return true;
    char *p = realloc(b->p, cap);
    if (!p)
        return false;
    b->p = p, b->cap = cap;
    return true;
}

/* Fills b with `window` bytes of text, or more as far as the end of the
 * line in progress, or to the end; *cut: where its last whole line ends. */
static hog_status fill(struct hog_text_reader *r, struct buf *b, size_t *cut,
                       bool *eof, hog_err *err)
{
    for (;;) {
        if (atomic_load_explicit(&r->stopping, memory_order_relaxed))
            return HOG_EINTR;
        if (b->len == b->cap) {
            size_t cap = b->cap <= SIZE_MAX / 2 ? b->cap * 2 : 0;
            if (cap > r->window && b->cap < r->window)
                cap = r->window;
            if (!cap || !buf_reserve(b, cap))
                return hog_errf(err, HOG_ENOMEM, "%s: out of memory for a "
                                "window of %zu bytes of text", r->name, cap);
        }
        bool past = b->len >= r->window; /* a line longer than the window */
        size_t at = b->len, room = b->cap - at;
        if (!past && room > r->window - at)
            room = r->window - at;
        hog_status st = produce(r, b, room, eof, err);
        if (st != HOG_OK)
            return st;
        if (*eof) {
            *cut = b->len;
            return HOG_OK;
        }
        if (b->len >= r->window) {
            /* Before this piece, a long line had no newline yet. */
            size_t from = past ? at : 0;
            const char *nl = memrchr(b->p + from, '\n', b->len - from);
            if (nl) {
                *cut = (size_t)(nl - b->p) + 1;
                return HOG_OK;
            }
        }
    }
}

static hog_status run(struct hog_text_reader *r, hog_err *err)
{
    hog_status st;
    if (!r->dec && r->b[0].len &&
        (st = account(r, r->b[0].p, r->b[0].len, err)) != HOG_OK)
        return st; /* the bytes the caller sniffed */
    for (unsigned cur = 0;; cur ^= 1) {
        struct buf *b = &r->b[cur], *nx = &r->b[cur ^ 1];
        size_t cut = 0;
        bool eof = false;
        if ((st = fill(r, b, &cut, &eof, err)) != HOG_OK)
            return st;
        /* The other buffer back from the consumer, the line in progress
         * moved into it, then this one handed over. */
        pthread_mutex_lock(&r->mu);
        while (r->own[cur ^ 1] != OWN_THREAD && !r->stop)
            pthread_cond_wait(&r->cv, &r->mu);
        bool stop = r->stop;
        pthread_mutex_unlock(&r->mu);
        if (stop)
            return HOG_EINTR;
        size_t tail = b->len - cut;
        if (!eof && !buf_reserve(nx, tail < r->window ? r->window : 2 * tail))
            return hog_errf(err, HOG_ENOMEM, "%s: out of memory for a window "
                            "of %zu bytes of text", r->name, r->window);
        if (tail)
            memcpy(nx->p, b->p + cut, tail);
        nx->len = tail;
        b->len = cut;
        pthread_mutex_lock(&r->mu);
        if (b->cap > r->most_cap)
            r->most_cap = b->cap;
        if (cut > 0)
            r->own[cur] = OWN_READY;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        if (eof)
            return HOG_OK;
    }
}

static void *reader_main(void *arg)
{
    struct hog_text_reader *r = arg;
    hog_err e;
    hog_status st = run(r, &e);
    pthread_mutex_lock(&r->mu);
    r->st = st;
    if (st != HOG_OK)
        r->err = e;
    r->done = true;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

static void reader_free(struct hog_text_reader *r)
{
    hog_decoder_free(r->dec);
    if (r->wake >= 0)
        close(r->wake);
    free(r->in);
    free(r->b[0].p);
    free(r->b[1].p);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

hog_status hog_text_reader_open(const struct hog_input *in, size_t window,
                                struct hog_text_reader **out, hog_err *err)
{
    bool plain = in->kind == HOG_FILE_TEXT;
    if (!plain && !hog_decoder_supports(in->kind)) {
        hog_status st = hog_data_kind_check(in->kind, in->name, err);
        return st != HOG_OK ? st : hog_errf(err, HOG_EINVAL, "%s is %s, not "
                                            "text", in->name,
                                            hog_file_kind_name(in->kind));
    }
    struct hog_text_reader *r = calloc(1, sizeof *r);
    if (!r)
        return hog_errf(err, HOG_ENOMEM, "%s: out of memory", in->name);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->wake = -1;
    r->fd = in->fd;
    r->poll_fd = !in->regular;
    r->name = in->name;
    r->kind = in->kind;
    r->window = window ? window : HOG_PARSE_WINDOW;
    r->max_line = hog_line_max(&r->max_line_what);
    r->line = 1;
    size_t head = in->head_consumed ? in->head_len : 0;
    /* a small window (1: predict's stream, each read's lines at once)
     * still reads in pages */
    size_t cap = r->window < FIRST_CAP ? r->window : FIRST_CAP;
    if (cap < 4096)
        cap = 4096;
    hog_status st = HOG_OK;
    if (!buf_reserve(&r->b[0], cap < head ? head : cap) ||
        (!plain && !(r->in = malloc(IN_CAP))))
        st = hog_errf(err, HOG_ENOMEM, "%s: out of memory", in->name);
    else if (!plain)
        st = hog_decoder_open(in->kind, in->name, &r->dec, err);
    if (st == HOG_OK && (r->wake = eventfd(0, EFD_CLOEXEC)) < 0)
        st = hog_errf(err, HOG_EIO, "%s: eventfd: %s", in->name, strerror(errno));
    if (st != HOG_OK) {
        reader_free(r);
        return st;
    }
    /* The bytes read to tell the kind are the text's, or the decoder's. */
    memcpy(plain ? (void *)r->b[0].p : (void *)r->in, in->head, head);
    if (plain)
        r->b[0].len = head;
    else
        r->in_len = head;
    r->most_cap = r->b[0].cap;
    /* Signals go to the caller's threads, never to the reader's. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(&r->thread, NULL, reader_main, r);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0) {
        reader_free(r);
        return hog_errf(err, HOG_ENOMEM, "%s: cannot start the reading "
                        "thread: %s", in->name, strerror(e));
    }
    *out = r;
    return HOG_OK;
}

hog_status hog_text_reader_next(struct hog_text_reader *r, const char **buf,
                                size_t *len, hog_err *err)
{
    pthread_mutex_lock(&r->mu);
    unsigned prev = r->want ^ 1;
    if (r->own[prev] == OWN_CONSUMER) {
        r->own[prev] = OWN_THREAD; /* the window handed out last is done */
        pthread_cond_broadcast(&r->cv);
    }
    while (r->own[r->want] != OWN_READY && !r->done)
        pthread_cond_wait(&r->cv, &r->mu);
    hog_status st = HOG_OK;
    *buf = NULL;
    *len = 0;
    if (r->own[r->want] == OWN_READY) {
        r->own[r->want] = OWN_CONSUMER;
        *buf = r->b[r->want].p;
        *len = r->b[r->want].len;
        r->want ^= 1;
    } else if ((st = r->st) != HOG_OK && err) {
        *err = r->err;
    }
    pthread_mutex_unlock(&r->mu);
    return st;
}

size_t hog_text_reader_buffer_bytes(struct hog_text_reader *r)
{
    pthread_mutex_lock(&r->mu);
    size_t n = r->most_cap;
    pthread_mutex_unlock(&r->mu);
    return n;
}

void hog_text_reader_close(struct hog_text_reader *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->mu);
    r->stop = true;
    atomic_store_explicit(&r->stopping, true, memory_order_relaxed);
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    uint64_t one = 1;
    ssize_t k = write(r->wake, &one, sizeof one); /* wakes a blocked poll */
    (void)k;
    pthread_join(r->thread, NULL);
    reader_free(r);
}
