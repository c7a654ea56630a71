/*
 * The data warmed beside a one-thread trainer's first epoch (warm.h).
 */
#include "core/warm.h"

#include <string.h>

/* below this many nonzeros (2 MiB of indices and values) the first epoch
 * is over before a thread would have started */
#define WARM_MIN_NNZ (1u << 18)
/* entries read between looks at the stop flag: 64 KiB of each array */
#define WARM_STEP (1u << 14)

/* One load per cache line of an array of n elements of size b. */
static uint64_t lines(const struct hog_warm *w, const void *p, uint64_t n,
                      size_t b)
{
    const unsigned char *c = p;
    uint64_t sum = 0, bytes = n * b;
    for (uint64_t at = 0; c && at < bytes; at += WARM_STEP) {
        if (atomic_load_explicit(&w->stop, memory_order_relaxed))
            break;
        uint64_t end = at + WARM_STEP < bytes ? at + WARM_STEP : bytes;
        for (uint64_t i = at; i < end; i += 64)
            sum += c[i];
    }
    return sum;
}

static void *reader(void *arg)
{
    const struct hog_warm *w = arg;
    const struct hog_csr *m = &w->d->m;
    uint64_t s = lines(w, m->off, m->rows + 1, sizeof *m->off);
    s += lines(w, m->y, m->rows, sizeof *m->y);
    s += lines(w, w->d->row_w, m->rows, sizeof *w->d->row_w);
    s += lines(w, m->idx, m->nnz, sizeof *m->idx);
    s += lines(w, m->val, m->nnz, sizeof *m->val);
    /* the sum kept, so that the loads are not optimised away */
    volatile uint64_t keep = s;
    (void)keep;
    return NULL;
}

void hog_warm_begin(struct hog_warm *w, const hog_data *d, unsigned threads)
{
    memset(w, 0, sizeof *w);
    w->d = d;
    atomic_init(&w->stop, false);
    if (threads >= 2 && d->m.nnz >= WARM_MIN_NNZ)
        w->running = pthread_create(&w->thread, NULL, reader, w) == 0;
}

void hog_warm_end(struct hog_warm *w)
{
    if (!w->running)
        return;
    /* pairs with nothing: the reader only stops sooner */
    atomic_store_explicit(&w->stop, true, memory_order_relaxed);
    pthread_join(w->thread, NULL);
    w->running = false;
}
