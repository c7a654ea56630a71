/*
 * The streamer's pread backend, for where io_uring cannot be set up: reader
 * threads take slots from a FIFO of started reads and pread each chunk
 * whole, so that reads still overlap training. Two threads keep two reads
 * in flight (one reading, one queued in the kernel's readahead or the
 * device), which is what a single io_uring would have for a 2-deep queue;
 * io_uring's advantage is the deeper queue without the threads.
 *
 * Locking: one mutex guards the FIFO and the done flags; a slot's buffer,
 * got and error are written by one reader and read by the consumer only
 * after wait() saw its done flag under the mutex.
 */
#include "io/stream_be.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READERS 2

struct pread_state {
    pthread_mutex_t mu;
    pthread_cond_t job;    /* a read was queued, or stop */
    pthread_cond_t done;   /* a read ended */
    unsigned *fifo;        /* slots to read, nslots entries */
    unsigned head, len;
    unsigned char *finished; /* per slot: its read ended */
    bool stop;
    unsigned nthreads;
    pthread_t th[READERS];
};

static void read_slot(struct hog_stream *s, unsigned i)
{
    struct slot *sl = &s->slots[i];
    uint64_t off, len;
    unsigned char *dst;
    hog_stream_slot_range(s, i, &off, &len, &dst);
    /* Short at the end of the file: the consumer says it shrank. */
    int e;
    sl->got += hog_pread_full(sl->fd, dst, len, off, &e);
    if (e)
        sl->error = e;
}

static void *reader(void *arg)
{
    struct hog_stream *s = arg;
    struct pread_state *p = s->be_state;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->len == 0)
            pthread_cond_wait(&p->job, &p->mu);
        if (p->stop)
            break;
        unsigned i = p->fifo[p->head];
        p->head = (p->head + 1) % s->nslots;
        p->len--;
        pthread_mutex_unlock(&p->mu);
        read_slot(s, i);
        pthread_mutex_lock(&p->mu);
        p->finished[i] = 1;
        pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void pread_teardown(struct hog_stream *s);

static int pread_setup(struct hog_stream *s, char *why, size_t whylen)
{
    struct pread_state *p = calloc(1, sizeof *p);
    if (!p || !(p->fifo = calloc(s->nslots, sizeof *p->fifo)) ||
        !(p->finished = calloc(s->nslots, 1))) {
        if (p)
            free(p->fifo);
        free(p);
        snprintf(why, whylen, "out of memory");
        return ENOMEM;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->job, NULL);
    pthread_cond_init(&p->done, NULL);
    s->be_state = p;
    for (unsigned t = 0; t < READERS; t++) {
        int e = pthread_create(&p->th[t], NULL, reader, s);
        if (e != 0) {
            if (t == 0) {
                pread_teardown(s);
                snprintf(why, whylen, "pthread_create: %s", strerror(e));
                return e;
            }
            break;
        }
        p->nthreads++;
    }
    return 0;
}

static void pread_submit(struct hog_stream *s, unsigned i)
{
    struct pread_state *p = s->be_state;
    pthread_mutex_lock(&p->mu);
    p->finished[i] = 0;
    p->fifo[(p->head + p->len) % s->nslots] = i;
    p->len++;
    pthread_cond_signal(&p->job);
    pthread_mutex_unlock(&p->mu);
}

static void pread_flush(struct hog_stream *s)
{
    (void)s;
}

static void pread_wait(struct hog_stream *s, unsigned i)
{
    struct pread_state *p = s->be_state;
    if (s->slots[i].state != SLOT_READING)
        return;
    pthread_mutex_lock(&p->mu);
    while (!p->finished[i])
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
    s->slots[i].state = SLOT_DONE;
}

static void pread_teardown(struct hog_stream *s)
{
    struct pread_state *p = s->be_state;
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true; /* queued reads are dropped; one in progress finishes */
    pthread_cond_broadcast(&p->job);
    pthread_mutex_unlock(&p->mu);
    for (unsigned t = 0; t < p->nthreads; t++)
        pthread_join(p->th[t], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->job);
    pthread_cond_destroy(&p->done);
    free(p->fifo);
    free(p->finished);
    free(p);
    s->be_state = NULL;
}

const struct hog_stream_backend hog_stream_pread = {
    "pread", pread_setup, pread_submit, pread_flush, pread_wait,
    pread_teardown,
};
