/*
 * forkjoin: run a few independent pieces of work at once, each on a thread
 * of its own, and wait for all of them. The one copy for the modules that
 * cannot use the pool (io includes only core; the pool's workers are
 * pinned and long-lived, a poor fit for a one-off load or shard build):
 * the parser's slices, the .hgb loader's chunk runs, the GPU shard builds.
 */
#ifndef HOG_CORE_FORKJOIN_H
#define HOG_CORE_FORKJOIN_H

#include <stddef.h>

enum hog_fork_mode {
    /* Item 0 runs on the calling thread, which would only wait otherwise. */
    HOG_FORK_CALLER_FIRST,
    /* Every item gets a thread of its own, so that what fn does to its
     * thread (a CPU binding) does not stay with the caller. */
    HOG_FORK_ALL
};

/* Calls fn(item) for each of the n items, item i being (char *)items +
 * i * stride, all at once, and returns when every call has returned. An
 * item whose thread cannot start (no memory for the thread list,
 * pthread_create refused) runs on the calling thread instead, once the
 * others are under way: slower, never wrong. After the first refusal no
 * further thread is tried. fn's return value is ignored. */
void hog_fork_join(void *items, size_t stride, unsigned n,
                   void *(*fn)(void *), enum hog_fork_mode mode);

#endif
