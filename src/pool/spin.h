/*
 * spin: a barrier that never sleeps in the kernel, for phases too short
 * for a futex wake-up (the phases of Cyclades' batches). The pool's own
 * barrier, hog_pool_barrier() in pool.h, spins briefly and then sleeps on
 * a futex: a sleeping thread takes tens of microseconds to wake, more in a
 * virtual machine, and a batch would pay that at every barrier. This one
 * pauses (hog_spin_pause, core/spin.h), and after `spin` pauses yields
 * its CPU on each test instead, so that a loaded or oversubscribed machine
 * still makes progress.
 *
 *     struct hog_spin_barrier b;   hog_spin_barrier_init(&b, n, crowded);
 *     hog_spin_barrier_wait(&b);   in each of the n threads, every phase
 *
 * Sense reversal with the sense widened to a generation counter, as
 * hog_pool_barrier's. Static inline: it sits in the hot loop of its user.
 */
#ifndef HOG_POOL_SPIN_H
#define HOG_POOL_SPIN_H

#include "core/core.h"
#include "core/spin.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

#define HOG_SPIN_BARRIER_SPIN 4096u
#define HOG_SPIN_BARRIER_CROWDED 16u /* more threads than CPUs: yield soon */

struct hog_spin_barrier {
    _Alignas(HOG_CACHELINE) atomic_uint count;
    _Alignas(HOG_CACHELINE) atomic_uint gen;
    unsigned n, spin;
};

/* A barrier for n threads. crowded: there are more threads than CPUs, so
 * that a spinner holds the CPU of a thread it waits for; it yields after
 * HOG_SPIN_BARRIER_CROWDED pauses instead of HOG_SPIN_BARRIER_SPIN. */
static inline void hog_spin_barrier_init(struct hog_spin_barrier *b,
                                         unsigned n, bool crowded)
{
    atomic_init(&b->count, 0);
    atomic_init(&b->gen, 0);
    b->n = n;
    b->spin = crowded ? HOG_SPIN_BARRIER_CROWDED : HOG_SPIN_BARRIER_SPIN;
}

/* Returns when all n threads have arrived; writes before it are visible
 * after it. The last arrival's acq_rel add acquires every earlier
 * arrival's writes (the release sequence on count) and its release store
 * of gen publishes them; pairs with the waiters' acquire loads of gen. */
static inline void hog_spin_barrier_wait(struct hog_spin_barrier *b)
{
    if (b->n == 1)
        return;
    unsigned g = atomic_load_explicit(&b->gen, memory_order_acquire);
    if (atomic_fetch_add_explicit(&b->count, 1, memory_order_acq_rel) ==
        b->n - 1) {
        atomic_store_explicit(&b->count, 0, memory_order_relaxed);
        atomic_store_explicit(&b->gen, g + 1, memory_order_release);
        return;
    }
    for (unsigned i = 0;
         atomic_load_explicit(&b->gen, memory_order_acquire) == g; i++) {
        if (i < b->spin)
            hog_spin_pause();
        else
            sched_yield();
    }
}

#endif
