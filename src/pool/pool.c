/*
 * The pool: persistent workers, each pinned once to its planned PU, woken
 * for every job, and a barrier for use inside jobs.
 *
 * Three counters drive it, each on its own cache line:
 *   run_gen   bumped by hog_pool_run to start a job (and by destroy to stop);
 *             workers wait for it to move.
 *   pending   workers still in the job; the last one out bumps done_gen,
 *             which the caller waits on.
 *   bar_gen   the barrier's generation (a sense-reversing barrier with the
 *             sense widened to a counter): arrivals count in bar_count, the
 *             last resets it and bumps bar_gen, the others wait for bar_gen
 *             to move.
 * Every wait spins briefly (a cheap wake-up between the short phases of
 * Hogwild! and coordinate descent), then sleeps on a futex. A waker only
 * enters the kernel when someone sleeps. Cyclades does not use this
 * barrier between the phases of its batches, which are shorter than a
 * futex wake-up: it uses the spinning barrier of pool/spin.h, which never
 * sleeps.
 */
#include "internal.h"

#include "core/spin.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* Pause iterations before sleeping on a futex. A pause takes 10 to 150
 * cycles depending on the CPU, so the barrier spins for roughly 5-100
 * microseconds: long enough to cover the imbalance between phases without
 * a system call, short enough not to matter when a thread is late. Waits
 * between jobs (workers for the next job, the caller for the end of one)
 * spin less: the caller is an extra thread, and with one worker per CPU
 * every spin there takes a CPU from someone who needs it. */
#define HOG_POOL_SPIN_BARRIER 2048
#define HOG_POOL_SPIN_IDLE 128
/* With more threads than PUs a spinner steals its peer's CPU: sleep soon. */
#define HOG_POOL_SPIN_OVERSUBSCRIBED 16

/* A word that threads wait on to change, and how many sleep on it. */
struct hog_event {
    _Alignas(HOG_CACHELINE) atomic_uint word;
    atomic_uint sleepers;
};

struct hog_worker {
    _Alignas(HOG_CACHELINE) pthread_t thread;
    struct hog_pool *pool;
    struct hog_place place;
    unsigned tid;
    bool pinned;
    int bind_errno;
};

struct hog_pool {
    struct hog_event run;  /* word: run_gen */
    struct hog_event done; /* word: done_gen */
    struct hog_event bar;  /* word: bar_gen */
    _Alignas(HOG_CACHELINE) atomic_uint pending;
    _Alignas(HOG_CACHELINE) atomic_uint bar_count;
    struct hog_event ready; /* word: workers up */
    /* Written by the caller before it bumps run_gen, read by the workers
     * after they see it move: the bump publishes them. */
    _Alignas(HOG_CACHELINE) hog_pool_fn fn;
    void *arg;
    bool stop;
    const struct hog_topo *topo;
    unsigned n;
    unsigned spin_barrier, spin_idle;
    bool running; /* a run is in progress: for the one-run-at-a-time check */
    struct hog_worker *w;
};

static void futex_wait(atomic_uint *word, unsigned old)
{
#ifdef __linux__
    /* Returns at once (EAGAIN) when *word != old already. */
    syscall(SYS_futex, (unsigned *)word, FUTEX_WAIT_PRIVATE, old, NULL, NULL, 0);
#else
    (void)word;
    (void)old;
    sched_yield();
#endif
}

static void futex_wake_all(atomic_uint *word)
{
#ifdef __linux__
    syscall(SYS_futex, (unsigned *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
#else
    (void)word;
#endif
}

/* Waits until ev->word != old; returns the new value with acquire
 * semantics (pairs with the seq_cst bump in event_bump()). */
static unsigned event_wait(struct hog_event *ev, unsigned old, unsigned spin)
{
    unsigned v;
    for (unsigned i = 0; i < spin; i++) {
        v = atomic_load_explicit(&ev->word, memory_order_acquire);
        if (v != old)
            return v;
        hog_spin_pause();
    }
    /* seq_cst on both sides (here: sleepers++ then load word; in
     * event_bump: store word then load sleepers): either the bumper sees a
     * sleeper and wakes it, or this load sees the new word. */
    atomic_fetch_add_explicit(&ev->sleepers, 1, memory_order_seq_cst);
    while ((v = atomic_load_explicit(&ev->word, memory_order_seq_cst)) == old)
        futex_wait(&ev->word, old);
    atomic_fetch_sub_explicit(&ev->sleepers, 1, memory_order_relaxed);
    return v;
}

/* Moves ev->word on and wakes its sleepers. seq_cst: a release of
 * everything written before (pairs with the acquire in event_wait()) and
 * the store half of the sleeper handshake described there. */
static void event_bump(struct hog_event *ev)
{
    atomic_fetch_add_explicit(&ev->word, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&ev->sleepers, memory_order_seq_cst) != 0)
        futex_wake_all(&ev->word);
}

static void pin_self(struct hog_worker *w)
{
    const struct hog_topo *t = w->pool->topo;
    if (w->place.pu < 0 || !t->thread_bind)
        return;
    hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(t->hw, (unsigned)w->place.pu);
    if (!pu) {
        w->bind_errno = ENOENT;
        return;
    }
    if (hwloc_set_cpubind(t->hw, pu->cpuset, HWLOC_CPUBIND_THREAD) == 0)
        w->pinned = true;
    else
        w->bind_errno = errno ? errno : EINVAL;
}

static void *worker_main(void *arg)
{
    struct hog_worker *w = arg;
    struct hog_pool *p = w->pool;
    pin_self(w);
    event_bump(&p->ready);
    unsigned seen = 0; /* run_gen starts at 0 */
    for (;;) {
        seen = event_wait(&p->run, seen, p->spin_idle);
        if (p->stop)
            break;
        p->fn(p->arg, w->tid, p->n);
        /* acq_rel: the last one out acquires every worker's release here,
         * then publishes them all to the caller through done_gen. */
        if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1)
            event_bump(&p->done);
    }
    return NULL;
}

/* Stops the first `started` workers and frees the pool. */
static void stop_and_free(struct hog_pool *p, unsigned started)
{
    p->stop = true;
    event_bump(&p->run); /* publishes stop */
    for (unsigned i = 0; i < started; i++)
        pthread_join(p->w[i].thread, NULL);
    free(p->w);
    free(p);
}

static void warn_unpinned(const struct hog_pool *p)
{
    unsigned failed = 0;
    int e = 0;
    for (unsigned i = 0; i < p->n; i++)
        if (!p->w[i].pinned) {
            failed++;
            if (!e)
                e = p->w[i].bind_errno;
        }
    if (failed == 0)
        return;
    if (!p->topo->this_machine)
        fprintf(stderr,
                "hogtrain: warning: the plan is for another machine's "
                "topology; %u worker threads run unpinned\n", p->n);
    else if (!p->topo->thread_bind)
        fprintf(stderr,
                "hogtrain: warning: this system cannot pin threads; %u worker "
                "threads run unpinned\n", p->n);
    else
        fprintf(stderr,
                "hogtrain: warning: could not pin %u of %u worker threads "
                "(%s); they run unpinned\n", failed, p->n,
                strerror(e ? e : EINVAL));
}

hog_status hog_pool_create(const struct hog_plan *plan, struct hog_pool **out,
                           hog_err *err)
{
    *out = NULL;
    if (plan->nthreads == 0)
        return hog_errf(err, HOG_EINVAL, "a pool needs at least one thread");
    struct hog_pool *p = aligned_alloc(HOG_CACHELINE, sizeof *p);
    if (!p)
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    memset(p, 0, sizeof *p);
    p->topo = plan->topo;
    p->n = plan->nthreads;
    bool crowded = plan->oversubscribed;
    p->spin_barrier = crowded ? HOG_POOL_SPIN_OVERSUBSCRIBED : HOG_POOL_SPIN_BARRIER;
    p->spin_idle = crowded ? HOG_POOL_SPIN_OVERSUBSCRIBED : HOG_POOL_SPIN_IDLE;
    size_t wbytes = (size_t)p->n * sizeof *p->w; /* a multiple of the line */
    p->w = aligned_alloc(HOG_CACHELINE, wbytes);
    if (!p->w) {
        free(p);
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    }
    memset(p->w, 0, wbytes);
    for (unsigned i = 0; i < p->n; i++) {
        p->w[i].pool = p;
        p->w[i].tid = i;
        p->w[i].place = plan->place[i];
    }
    for (unsigned i = 0; i < p->n; i++) {
        int rc = pthread_create(&p->w[i].thread, NULL, worker_main, &p->w[i]);
        if (rc != 0) {
            stop_and_free(p, i);
            return hog_errf(err, rc == EAGAIN ? HOG_ENOMEM : HOG_EINVAL,
                            "cannot start worker thread %u of %u (%s)", i,
                            plan->nthreads, strerror(rc));
        }
    }
    /* Wait until every worker is pinned (so that the warning below, and
     * hog_pool_pinned(), tell the truth). */
    unsigned up;
    while ((up = atomic_load_explicit(&p->ready.word, memory_order_acquire)) < p->n)
        event_wait(&p->ready, up, HOG_POOL_SPIN_OVERSUBSCRIBED);
    if (plan->pin)
        warn_unpinned(p);
    *out = p;
    return HOG_OK;
}

void hog_pool_run(struct hog_pool *p, hog_pool_fn fn, void *arg)
{
    /* Our bug, not the world's: runs must not overlap or nest. */
    if (p->running) {
        fprintf(stderr, "hogtrain: bug: hog_pool_run called during a run\n");
        abort();
    }
    p->running = true;
    p->fn = fn;
    p->arg = arg;
    atomic_store_explicit(&p->pending, p->n, memory_order_relaxed);
    unsigned done = atomic_load_explicit(&p->done.word, memory_order_relaxed);
    event_bump(&p->run); /* publishes fn, arg, pending */
    event_wait(&p->done, done, p->spin_idle);
    p->running = false;
}

void hog_pool_barrier(struct hog_pool *p)
{
    if (p->n == 1)
        return;
    unsigned gen = atomic_load_explicit(&p->bar.word, memory_order_acquire);
    /* acq_rel: the last arrival acquires every earlier arrival's writes
     * (release sequence on bar_count), then releases them all through
     * event_bump(); the others acquire them in event_wait(). */
    if (atomic_fetch_add_explicit(&p->bar_count, 1, memory_order_acq_rel) ==
        p->n - 1) {
        /* Nobody touches bar_count until bar_gen moves: relaxed is enough,
         * the bump below publishes it. */
        atomic_store_explicit(&p->bar_count, 0, memory_order_relaxed);
        event_bump(&p->bar);
    } else {
        event_wait(&p->bar, gen, p->spin_barrier);
    }
}

void hog_pool_destroy(struct hog_pool *p)
{
    if (p)
        stop_and_free(p, p->n);
}

unsigned hog_pool_size(const struct hog_pool *p)
{
    return p->n;
}

const struct hog_place *hog_pool_place(const struct hog_pool *p, unsigned tid)
{
    return &p->w[tid].place;
}

bool hog_pool_pinned(const struct hog_pool *p, unsigned tid)
{
    return p->w[tid].pinned;
}

void *hog_pool_alloc_local(struct hog_pool *p, unsigned tid, size_t bytes)
{
    return hog_numa_alloc(p->topo, p->w[tid].place.numa, bytes);
}

void hog_pool_free_local(struct hog_pool *p, void *mem, size_t bytes)
{
    hog_numa_free(p->topo, mem, bytes);
}
