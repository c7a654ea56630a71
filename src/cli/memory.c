/*
 * Data that does not fit in memory (docs/RELIABILITY.md): the loader's
 * "out of memory" becomes a sentence with the size the data needs, the
 * address-space limit when one is set (ulimit -v), and the remedy.
 *
 * And OpenBLAS's own pool of threads, which hogtrain never uses: it calls
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
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>

/* What OpenBLAS's own fork handler calls to stop its pool; a weak
 * reference, since other builds of the library need not have it. */
extern int blas_thread_shutdown_(void) __attribute__((weak));

static double mib(uint64_t b) { return (double)b / (1024.0 * 1024.0); }

void hog_cli_explain_memory(const char *path, hog_err *err)
{
    uint64_t need = 0;
    struct hog_hgb_info info;
    hog_err e;
    struct stat sb;
    const char *how = "";
    const char *conv = "";
    if (hog_hgb_open_info(path, &info, &e) == HOG_OK) {
        /* offsets, labels, indices and values in memory */
        need = (info.rows + 1) * 8 + info.rows * 4 + info.nnz * 8;
        hog_hgb_info_close(&info);
    } else if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        /* A pipe or a device, of a size nobody knows: read a window at a
         * time, its parsed rows did not fit. */
        char msg[HOG_ERR_MAX + 256];
        int n = snprintf(msg, sizeof msg, "%s: %s is not a regular file, and "
                         "its parsed rows do not fit in memory; save it to a "
                         "file and convert it to .hgb (hogtrain convert), then "
                         "train with --stream", err->msg, path);
        if (n > 0 && (size_t)n < sizeof err->msg)
            memcpy(err->msg, msg, (size_t)n + 1);
        return;
    } else if (stat(path, &sb) == 0) {
        /* the text mapped (all of it counts in the address space, though
         * only a window is resident), plus its parsed rows (about half the
         * text's size) */
        need = (uint64_t)sb.st_size + (uint64_t)sb.st_size / 2;
        how = " (the text and its parsed rows)";
        conv = "convert it to .hgb (hogtrain convert) and ";
    } else {
        return;
    }
    char lim[128] = "";
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        snprintf(lim, sizeof lim, ", but the address space is limited to "
                 "%.0f MiB (ulimit -v)", mib((uint64_t)rl.rlim_cur));
    char msg[HOG_ERR_MAX + 512];
    int n = snprintf(msg, sizeof msg,
             "%s: the data needs about %.0f MiB of memory%s%s; raise the "
             "limit, or %strain with --stream, which reads it from disk a "
             "chunk at a time",
             err->msg, mib(need), how, lim, conv);
    if (n > 0 && (size_t)n < sizeof err->msg)
        memcpy(err->msg, msg, (size_t)n + 1);
}

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
