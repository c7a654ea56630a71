/*
 * The chunk streamer: a .hgb file read a chunk at a time into a ring of K
 * aligned buffers, with every free buffer already reading the next queued
 * chunk, so that the trainer finds its next chunk in memory while it works
 * on the current ones.
 *
 *     push(seq)  ─► queue of chunk indices (this epoch, then the next one)
 *                        │ a free slot takes the next position
 *                        ▼
 *     backend    ─► reads in flight (io_uring SQEs, or a pread thread)
 *                        │ in queue order
 *                        ▼
 *     next()     ─► wait, check header + CRC + offsets, hand out a view
 *     release()  ─► the slot is free: it starts the next queued read
 *
 * Memory is the ring (K slots of the largest chunk, within the budget) plus
 * the queue (two epochs of chunk indices) and the chunk table. O_DIRECT is
 * used when asked, or by default when the file would not stay in the page
 * cache anyway; a filesystem that refuses it gets buffered reads.
 *
 * Backends sit behind struct hog_stream_backend (stream_be.h): io_uring
 * (stream_uring.c) first, pread (stream_pread.c) when io_uring cannot be
 * set up, with one line saying why.
 */
#include "io/stream_be.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>


void hog_stream_opts_init(struct hog_stream_opts *o)
{
    memset(o, 0, sizeof *o);
    o->io = HOG_IO_AUTO;
    o->direct = -1;
}

const struct hog_hgb_info *hog_stream_info(const hog_stream *s)
{
    return &s->in;
}

unsigned hog_stream_slots(const hog_stream *s)
{
    return s->nslots;
}

unsigned hog_stream_window(const hog_stream *s)
{
    return s->window;
}

static uint64_t window_for(uint64_t k, uint64_t n_chunks)
{
    return k >= n_chunks ? n_chunks : k / 2 ? k / 2 : 1;
}

void hog_stream_get_stats(const hog_stream *s, hog_stream_stats *st)
{
    snprintf(st->backend, sizeof st->backend, "%s", s->be->name);
    snprintf(st->fallback, sizeof st->fallback, "%s", s->fallback);
    st->direct = s->direct;
    st->slots = s->nslots;
    st->window = s->window;
    st->ring_bytes = s->ring_bytes;
    st->bytes_read = s->bytes_read;
    st->read_wait_s = s->read_wait_s;
}

/* ---- opening ------------------------------------------------------------------ */

/* The file would not stay in the page cache next to everything else:
 * more than half the machine's memory. */
static bool too_big_for_cache(uint64_t bytes)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || psz <= 0)
        return false;
    return bytes > (uint64_t)pages * (uint64_t)psz / 2;
}

static void notice(const struct hog_stream_opts *o, const char *line)
{
    if (o->log)
        o->log(o->log_ctx, line);
    else
        fprintf(stderr, "hogtrain: %s\n", line);
}

static hog_status setup_backend(hog_stream *s, const struct hog_stream_opts *o,
                                hog_err *err)
{
    char why[200] = "";
    if (o->io != HOG_IO_PREAD) {
        int e = hog_stream_uring.setup(s, why, sizeof why);
        if (e == 0) {
            s->be = &hog_stream_uring;
            return HOG_OK;
        }
        if (o->io == HOG_IO_URING)
            return hog_errf(err, HOG_ENOTSUP,
                            "%s: --io uring: io_uring cannot be used: %s",
                            s->path, why);
        snprintf(s->fallback, sizeof s->fallback, "%s", why);
        char line[400];
        snprintf(line, sizeof line,
                 "io_uring unavailable (%s); streaming with pread instead", why);
        notice(o, line);
    }
    int e = hog_stream_pread.setup(s, why, sizeof why);
    if (e != 0)
        return hog_errf(err, e == ENOMEM ? HOG_ENOMEM : HOG_EIO,
                        "%s: cannot start the pread reader: %s", s->path, why);
    s->be = &hog_stream_pread;
    return HOG_OK;
}

hog_status hog_stream_open(const char *path, const struct hog_stream_opts *o,
                           hog_stream **out, hog_err *err)
{
    struct hog_stream_opts def;
    if (!o) {
        hog_stream_opts_init(&def);
        o = &def;
    }
    *out = NULL;
    hog_stream *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        return hog_errf(err, HOG_ENOMEM, "%s: out of memory", path);
    }
    s->fd = s->direct_fd = -1;
    hog_status st = hog_hgb_open_info(path, &s->in, err);
    if (st != HOG_OK) {
        free(s->path);
        free(s);
        return st;
    }
    s->fd = s->in.fd;
    const struct hog_hgb_info *in = &s->in;

    /* The ring: as many buffers of the largest chunk as the budget holds,
     * no more than there are chunks. */
    uint64_t budget = o->mem_budget ? o->mem_budget : HOG_STREAM_DEFAULT_BUDGET;
    s->slot_bytes = in->max_chunk_bytes ? in->max_chunk_bytes : HOG_HGB_ALIGN;
    uint64_t k = budget / s->slot_bytes;
    if (k > in->n_chunks)
        k = in->n_chunks;
    if (o->max_slots && k > o->max_slots)
        k = o->max_slots;
    if (k > 4096)
        k = 4096;
    /* The consumer's per-row memory of a window comes out of the budget. */
    uint64_t max_rows = 0;
    for (uint64_t c = 0; c < in->n_chunks; c++)
        max_rows = in->chunks[c].rows > max_rows ? in->chunks[c].rows : max_rows;
    while (k > 2 && o->row_bytes) {
        uint64_t w = window_for(k, in->n_chunks);
        uint64_t rows = w >= in->n_chunks ? in->rows : w * max_rows;
        if (k * s->slot_bytes + rows * o->row_bytes <= budget)
            break;
        k--;
    }
    if (in->n_chunks == 0) {
        st = hog_errf(err, HOG_EINVAL, "%s: no rows to stream", path);
        goto fail;
    }
    unsigned need = in->n_chunks >= 2 ? 2 : 1;
    if (k < need) {
        st = hog_errf(err, HOG_EINVAL,
                      "%s: a memory budget of %llu bytes holds fewer than %s "
                      "of %llu bytes; give at least %llu",
                      path, (unsigned long long)budget,
                      need == 2 ? "two chunks" : "one chunk",
                      (unsigned long long)s->slot_bytes,
                      (unsigned long long)(need * s->slot_bytes));
        goto fail;
    }
    s->nslots = k ? (unsigned)k : 1;
    s->window = (unsigned)window_for(s->nslots, in->n_chunks);
    s->ring_bytes = s->nslots * s->slot_bytes;
    s->ring = mmap(NULL, s->ring_bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    s->slots = calloc(s->nslots, sizeof *s->slots);
    s->qcap = 2 * in->n_chunks + 1;
    s->queue = malloc(s->qcap * sizeof *s->queue);
    s->qslot = malloc(s->qcap * sizeof *s->qslot);
    s->seen = calloc(in->n_chunks, 1);
    hog_label_scan_init(&s->labels);
    if (s->ring == MAP_FAILED || !s->slots || !s->queue || !s->qslot ||
        !s->seen) {
        if (s->ring == MAP_FAILED)
            s->ring = NULL;
        st = hog_errf(err, HOG_ENOMEM, "%s: out of memory for %u chunk "
                      "buffers of %llu bytes", path, s->nslots,
                      (unsigned long long)s->slot_bytes);
        goto fail;
    }
    for (unsigned i = 0; i < s->nslots; i++)
        s->slots[i].buf = s->ring + (uint64_t)i * s->slot_bytes;

    bool direct = o->direct > 0 || (o->direct < 0 && too_big_for_cache(in->file_size));
    if (direct) {
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_DIRECT);
        if (fd >= 0) {
            s->fd = s->direct_fd = fd;
            s->direct = 1;
        } /* else: the filesystem refuses O_DIRECT (tmpfs): buffered reads */
    }
    st = setup_backend(s, o, err);
    if (st != HOG_OK)
        goto fail;
    *out = s;
    return HOG_OK;
fail:
    hog_stream_close(s);
    return st;
}

void hog_stream_close(hog_stream *s)
{
    if (!s)
        return;
    if (s->be)
        s->be->teardown(s);
    if (s->direct_fd >= 0)
        close(s->direct_fd);
    if (s->ring)
        munmap(s->ring, s->ring_bytes);
    free(s->slots);
    free(s->queue);
    free(s->qslot);
    free(s->seen);
    hog_hgb_info_close(&s->in);
    free(s->path);
    free(s);
}

/* ---- the queue ------------------------------------------------------------------ */

/* Gives every free slot the next queued chunk and starts its read. */
static void pump(hog_stream *s)
{
    bool started = false;
    for (unsigned i = 0; i < s->nslots && s->submitted < s->pushed; i++) {
        struct slot *sl = &s->slots[i];
        if (sl->state != SLOT_FREE)
            continue;
        uint64_t p = s->submitted++;
        sl->k = s->queue[p % s->qcap];
        sl->pos = p;
        sl->got = 0;
        sl->error = 0;
        sl->state = SLOT_READING;
        sl->fd = s->fd;
        s->qslot[p % s->qcap] = i;
        s->be->submit(s, i);
        started = true;
    }
    if (started)
        s->be->flush(s);
}

hog_status hog_stream_push(hog_stream *s, const uint64_t *seq, uint64_t n,
                           hog_err *err)
{
    struct stat sb;
    if (fstat(s->in.fd, &sb) != 0)
        return hog_errf(err, HOG_EIO, "%s: cannot stat: %s", s->path,
                        strerror(errno));
    if (sb.st_nlink == 0)
        return hog_errf(err, HOG_EIO, "%s: the file was removed while "
                        "training from it", s->path);
    if ((uint64_t)sb.st_size != s->in.file_size)
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: the file changed size while training from it "
                        "(%llu bytes, it had %llu)", s->path,
                        (unsigned long long)sb.st_size,
                        (unsigned long long)s->in.file_size);
    if (s->pushed - s->delivered + n > s->qcap)
        return hog_errf(err, HOG_EINVAL, "%s: more than two epochs of chunks "
                        "queued", s->path);
    for (uint64_t i = 0; i < n; i++) {
        if (seq[i] >= s->in.n_chunks)
            return hog_errf(err, HOG_EINVAL, "%s: no chunk %llu", s->path,
                            (unsigned long long)seq[i]);
        s->queue[(s->pushed + i) % s->qcap] = seq[i];
    }
    s->pushed += n;
    pump(s);
    return HOG_OK;
}

hog_status hog_stream_next(hog_stream *s, struct hog_stream_chunk *c,
                           hog_err *err)
{
    if (s->delivered == s->pushed)
        return hog_errf(err, HOG_EINVAL, "%s: no chunk queued", s->path);
    pump(s);
    if (s->delivered >= s->submitted)
        return hog_errf(err, HOG_EINVAL,
                        "%s: every chunk buffer is held; release one first",
                        s->path);
    unsigned i = s->qslot[s->delivered % s->qcap];
    struct slot *sl = &s->slots[i];
    const struct hog_hgb_chunk *ch = &s->in.chunks[sl->k];
    double t0 = hog_now();
    for (;;) {
        s->be->wait(s, i);
        /* A filesystem that takes O_DIRECT at open but refuses the read:
         * buffered reads from here on (reads in flight keep the direct
         * descriptor, closed with the stream). */
        if (sl->error == EINVAL && sl->fd == s->direct_fd) {
            s->fd = s->in.fd;
            s->direct = 0;
            sl->error = 0;
            sl->state = SLOT_READING;
            sl->fd = s->fd;
            s->be->submit(s, i);
            s->be->flush(s);
            continue;
        }
        break;
    }
    s->read_wait_s += hog_now() - t0;
    s->delivered++;
    sl->state = SLOT_HELD;
    c->k = sl->k;
    c->slot = i;
    if (sl->error)
        return hog_errf(err, HOG_EIO, "%s: chunk %llu at offset %llu: read "
                        "failed: %s", s->path, (unsigned long long)sl->k,
                        (unsigned long long)ch->offset, strerror(sl->error));
    if (sl->got < ch->bytes)
        return hog_errf(err, HOG_ECORRUPT, "%s: chunk %llu at offset %llu: "
                        "the file ends after %llu of its %llu bytes (it shrank "
                        "while training from it)", s->path,
                        (unsigned long long)sl->k,
                        (unsigned long long)ch->offset,
                        (unsigned long long)sl->got,
                        (unsigned long long)ch->bytes);
    s->bytes_read += ch->bytes;
    hog_status st = hog_hgb_chunk_verify(&s->in, sl->k, sl->buf, s->path,
                                         &c->m, err);
    if (st != HOG_OK || s->seen[sl->k])
        return st;
    s->seen[sl->k] = 1;
    hog_label_scan_add(&s->labels, c->m.y, c->m.rows);
    if (++s->n_seen < s->in.n_chunks)
        return HOG_OK;
    enum hog_label_kind kind;
    double pos, neg;
    uint64_t n_pos;
    hog_label_scan_result(&s->labels, &kind, &pos, &neg, &n_pos);
    return hog_hgb_labels_match(&s->in, kind, pos, neg, n_pos, s->path, err);
}

void hog_stream_release(hog_stream *s, unsigned slot)
{
    if (slot < s->nslots && s->slots[slot].state == SLOT_HELD) {
        s->slots[slot].state = SLOT_FREE;
        pump(s);
    }
}

/* ---- windows ------------------------------------------------------------------------ */

hog_status hog_stream_win_init(struct hog_stream_win *w, uint64_t cap,
                               hog_err *err)
{
    memset(w, 0, sizeof *w);
    w->cap = cap ? cap : 1;
    w->c = calloc(w->cap, sizeof *w->c);
    w->first = calloc(w->cap + 1, sizeof *w->first);
    w->d = calloc(w->cap, sizeof *w->d);
    if (!w->c || !w->first || !w->d) {
        hog_stream_win_free(w);
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    }
    return HOG_OK;
}

void hog_stream_win_free(struct hog_stream_win *w)
{
    free(w->c);
    free(w->first);
    free(w->d);
    memset(w, 0, sizeof *w);
}

hog_status hog_stream_win_take(hog_stream *s, struct hog_stream_win *w,
                               uint64_t n, hog_err *err)
{
    w->first[0] = 0;
    w->n = 0;
    for (uint64_t j = 0; j < n && j < w->cap; j++) {
        hog_status st = hog_stream_next(s, &w->c[j], err);
        w->n = j + 1; /* held even on error: released with the rest */
        if (st != HOG_OK)
            return st;
        w->first[j + 1] = w->first[j] + w->c[j].m.rows;
        memset(&w->d[j], 0, sizeof w->d[j]);
        w->d[j].m = w->c[j].m;
        w->d[j].n_features = s->in.n_features;
        w->d[j].labels = s->in.labels;
        w->d[j].label_pos = s->in.label_pos;
        w->d[j].label_neg = s->in.label_neg;
    }
    return HOG_OK;
}

void hog_stream_win_release(hog_stream *s, struct hog_stream_win *w)
{
    for (uint64_t j = 0; j < w->n; j++)
        hog_stream_release(s, w->c[j].slot);
    w->n = 0;
}

/* ---- the order of a streamed run ------------------------------------------------ */

uint64_t hog_stream_window_rows_max(const struct hog_hgb_info *in,
                                    uint64_t window)
{
    if (window >= in->n_chunks)
        return in->rows;
    /* The window's largest possible row count: its `window` biggest chunks. */
    uint64_t top = 0, *best = calloc(window ? window : 1, sizeof *best);
    if (!best)
        return in->rows;
    for (uint64_t k = 0; k < in->n_chunks; k++) {
        uint64_t r = in->chunks[k].rows, j = 0;
        for (uint64_t i = 1; i < window; i++)
            if (best[i] < best[j])
                j = i;
        if (r > best[j])
            best[j] = r;
    }
    for (uint64_t i = 0; i < window; i++)
        top += best[i];
    free(best);
    return top;
}

hog_status hog_stream_order_init(struct hog_stream_order *o,
                                 const struct hog_hgb_info *in,
                                 uint64_t window, uint64_t seed, hog_err *err)
{
    memset(o, 0, sizeof *o);
    o->in = in;
    o->window = window < 1 ? 1 : window > in->n_chunks ? in->n_chunks : window;
    hog_rng_seed(&o->row_rng, seed, 0);
    hog_rng_seed(&o->chunk_rng, seed, 1);
    uint64_t n = in->n_chunks;
    o->rows_cap = hog_stream_window_rows_max(in, o->window);
    if (o->rows_cap > UINT32_MAX)
        return hog_errf(err, HOG_ERANGE, "a window of %llu rows is more than "
                        "%u; give a smaller memory budget",
                        (unsigned long long)o->rows_cap, UINT32_MAX);
    o->chunks = malloc((2 * n + 1) * sizeof *o->chunks);
    o->rows = malloc((o->rows_cap + 1) * sizeof *o->rows);
    if (!o->chunks || !o->rows) {
        hog_stream_order_free(o);
        return hog_errf(err, HOG_ENOMEM, "out of memory for the order of "
                        "%llu rows", (unsigned long long)o->rows_cap);
    }
    /* Both halves start in file order; epochs alternate between them. */
    for (uint64_t k = 0; k < n; k++)
        o->chunks[k] = o->chunks[n + k] = k;
    for (uint64_t i = 0; i < o->rows_cap; i++)
        o->rows[i] = (uint32_t)i;
    o->chunks[2 * n] = 0; /* epoch parity */
    return HOG_OK;
}

void hog_stream_order_free(struct hog_stream_order *o)
{
    free(o->chunks);
    free(o->rows);
    o->chunks = NULL;
    o->rows = NULL;
}

const uint64_t *hog_stream_order_epoch(struct hog_stream_order *o)
{
    uint64_t n = o->in->n_chunks, par = o->chunks[2 * n];
    uint64_t *cur = o->chunks + par * n, *prev = o->chunks + (1 - par) * n;
    o->chunks[2 * n] = 1 - par;
    if (o->window >= n)
        return cur; /* one window: file order, the rows carry the shuffle */
    /* The chunk order continues from the previous epoch's. */
    memcpy(cur, prev, n * sizeof *cur); /* prev may still be in use */
    hog_shuffle_u64(&o->chunk_rng, cur, n);
    return cur;
}

void hog_stream_walk_begin(struct hog_stream_walk *k, hog_stream *s,
                           struct hog_stream_win *win,
                           struct hog_stream_order *ord, const uint64_t *seq)
{
    *k = (struct hog_stream_walk){ .s = s, .win = win, .ord = ord,
                                   .seq = seq, .window = hog_stream_window(s) };
}

hog_status hog_stream_walk_next(struct hog_stream_walk *k, uint64_t *left,
                                bool *fresh, hog_err *err)
{
    *fresh = k->pos == k->len;
    if (*fresh) { /* the next window of chunks */
        uint64_t nc = k->ord->in->n_chunks, first = k->next * k->window;
        hog_stream_win_release(k->s, k->win);
        hog_status st = hog_stream_win_take(
            k->s, k->win, nc - first < k->window ? nc - first : k->window,
            err);
        if (st != HOG_OK)
            return st;
        k->rows = hog_stream_order_window(k->ord, k->seq, k->next, &k->len);
        k->pos = 0;
        k->next++;
    }
    *left = k->len - k->pos;
    return HOG_OK;
}

const uint32_t *hog_stream_order_window(struct hog_stream_order *o,
                                        const uint64_t *seq, uint64_t w,
                                        uint64_t *n)
{
    const struct hog_hgb_info *in = o->in;
    if (o->window >= in->n_chunks) {
        /* The in-memory serial order: one permutation of all rows,
         * reshuffled in place each epoch (src/hogwild/serial.c). */
        hog_shuffle_u32(&o->row_rng, o->rows, in->rows);
        *n = in->rows;
        return o->rows;
    }
    uint64_t a = w * o->window, b = a + o->window, r = 0;
    if (b > in->n_chunks)
        b = in->n_chunks;
    for (uint64_t i = a; i < b; i++)
        r += in->chunks[seq[i]].rows;
    for (uint64_t i = 0; i < r; i++)
        o->rows[i] = (uint32_t)i;
    hog_shuffle_u32(&o->row_rng, o->rows, r);
    *n = r;
    return o->rows;
}
