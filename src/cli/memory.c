/*
 * OpenBLAS's own pool of threads, which hogtrain never uses: it calls
 * BLAS only from its own threads, on ranges it partitions itself. The pool
 * starts when the library is loaded, before main(), one thread per other
 * CPU, and each thread spins for 2^28 cycles (about 0.1 s) before it
 * sleeps: on every core the parser is about to use. So the command shuts
 * the pool down first (hog_cli_blas_threads), and BLAS runs on the calling
 * thread. Under a finite RLIMIT_AS that is too late: each thread maps a
 * 128 MiB buffer and, when the mapping fails, retries forever
 * (blas_memory_alloc), and exit then waits for them; there the command
 * runs with OPENBLAS_NUM_THREADS=1, which takes effect through a
 * re-execution, done once (the variable is then set). The library leaves
 * the pool alone: in a Python process it may be numpy's.
 */
#include "cli/cli.h"

#include <cblas.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/resource.h>

/* What OpenBLAS's own fork handler calls to stop its pool; a weak
 * reference, since other builds of the library need not have it. */
extern int blas_thread_shutdown_(void) __attribute__((weak));

void hog_cli_blas_threads(char **argv)
{
    struct rlimit rl;
    if (!getenv("OPENBLAS_NUM_THREADS") && getrlimit(RLIMIT_AS, &rl) == 0 &&
        rl.rlim_cur != RLIM_INFINITY &&
        setenv("OPENBLAS_NUM_THREADS", "1", 1) == 0)
        execv("/proc/self/exe", argv); /* returns only on failure: go on */
    /* One BLAS thread: the caller. A build with thread affinity pins the
     * caller to CPU 0 when it goes to one thread; the mask is restored, so
     * the pool hogtrain starts later inherits all CPUs. */
    cpu_set_t mask;
    bool have = sched_getaffinity(0, sizeof mask, &mask) == 0;
    openblas_set_num_threads(1);
    if (have)
        (void)sched_setaffinity(0, sizeof mask, &mask);
    if (blas_thread_shutdown_)
        (void)blas_thread_shutdown_();
}
