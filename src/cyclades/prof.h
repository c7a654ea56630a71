/*
 * Cyclades' phase timers, for finding where a run's time goes: compiled in
 * with -DHOG_CYC_PROF (make BUILD=build-prof EXTRA_CFLAGS=-DHOG_CYC_PROF),
 * empty otherwise. Each phase adds wall time (CLOCK_MONOTONIC) and CPU
 * time: the thread's own (CLOCK_THREAD_CPUTIME_ID) in the epochs' job,
 * the process's (CLOCK_PROCESS_CPUTIME_ID, every thread's together) for
 * the run's setup, timed by the calling thread around pool jobs. The run
 * prints them on standard error at its end (hog_cyc_prof_print).
 */
#ifndef HOG_CYCLADES_PROF_H
#define HOG_CYCLADES_PROF_H

#include <time.h>

enum cyc_phase {
    /* setup, timed by the caller of the pool's jobs */
    CYC_P_PREPARE,   /* SGD state, pool, row order */
    CYC_P_DEGREES,   /* the features' degrees */
    CYC_P_HOTSET,    /* tau, the hot set, its owners */
    CYC_P_VIEWS,     /* the cold and hot views */
    CYC_P_THREADS,   /* per-thread scratch */
    CYC_P_PARTITION, /* every partition */
    CYC_P_STATS,     /* the partition with every feature (statistics) */
    CYC_P_EPOCH_END, /* weights copied out, the epoch's metrics, checkpoints */
    /* per thread, in the epochs' job */
    CYC_P_ROWS,      /* rows phase: claims and rows */
    CYC_P_ROWS_WAIT, /* the barrier after it */
    CYC_P_HOT,       /* hot phase: claims and steps */
    CYC_P_HOT_WAIT,  /* the barrier after it */
    CYC_P_SEGMENT,   /* a segment's end: catch-up and its barriers */
    CYC_P_BETWEEN,   /* between batches: progress, checkpoints */
    CYC_P_COUNT
};

struct cyc_prof {
    double wall[CYC_P_COUNT], cpu[CYC_P_COUNT];
    double last_wall, last_cpu;
};

#ifdef HOG_CYC_PROF
static inline double cyc_prof_clock(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
/* Starts a lap; cpu: CLOCK_THREAD_CPUTIME_ID or CLOCK_PROCESS_CPUTIME_ID. */
static inline void cyc_prof_start(struct cyc_prof *p, clockid_t cpu)
{
    p->last_wall = cyc_prof_clock(CLOCK_MONOTONIC);
    p->last_cpu = cyc_prof_clock(cpu);
}
/* Adds the time since the last lap to phase ph and starts the next. */
static inline void cyc_prof_lap(struct cyc_prof *p, enum cyc_phase ph,
                                clockid_t cpu)
{
    double w = cyc_prof_clock(CLOCK_MONOTONIC), c = cyc_prof_clock(cpu);
    p->wall[ph] += w - p->last_wall;
    p->cpu[ph] += c - p->last_cpu;
    p->last_wall = w;
    p->last_cpu = c;
}
#else
static inline void cyc_prof_start(struct cyc_prof *p, clockid_t cpu)
{
    (void)p;
    (void)cpu;
}
static inline void cyc_prof_lap(struct cyc_prof *p, enum cyc_phase ph,
                                clockid_t cpu)
{
    (void)p;
    (void)ph;
    (void)cpu;
}
#endif

#define CYC_PROF_THREAD CLOCK_THREAD_CPUTIME_ID
#define CYC_PROF_PROCESS CLOCK_PROCESS_CPUTIME_ID

#endif
