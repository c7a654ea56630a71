/*
 * warm: a data set's arrays read once, in order, on a core a one-thread
 * trainer leaves idle, while its first epoch runs.
 *
 * The first epoch after a load visits rows in random order through arrays
 * that are no longer in the caches (the parse streamed the whole text
 * through since), one latency at a time; on this project's 2-core
 * machines it took 2-5x each later epoch (news20.binary 39-51 ms against
 * 9-10 ms, the 1M-row set 0.53-0.72 s against 0.25-0.42 s). A sequential
 * read, which the hardware prefetches, brings them in a few milliseconds
 * ahead of the trainer's random reads; on the idle core it costs the run
 * nothing (whole runs 0.95x, docs/BENCHMARKS.md, "First epochs: the data
 * warmed beside").
 */
#ifndef HOG_CORE_WARM_H
#define HOG_CORE_WARM_H

#include "core/core.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

struct hog_warm {
    pthread_t thread;
    const hog_data *d;
    atomic_bool stop; /* the trainer is done: the reader stops early */
    bool running;
};

/* Starts the reader of d's arrays when there is a core for it (threads,
 * the run's, >= 2) and enough data to gain (else, or if the thread
 * cannot start, nothing: the trainer reads them itself). */
void hog_warm_begin(struct hog_warm *w, const hog_data *d, unsigned threads);
/* Stops the reader and waits for it (at most one 64 KiB step). */
void hog_warm_end(struct hog_warm *w);

#endif
