/* pool's private view of a topology, shared by topo.c, plan.c and pool.c.
 * Not for other modules: they use pool.h. */
#ifndef HOG_POOL_INTERNAL_H
#define HOG_POOL_INTERNAL_H

#include "pool.h"

#include <hwloc.h>

/* One PU, in hwloc's logical order (cores of a node are contiguous). */
struct hog_pu {
    int os;      /* OS index */
    int core;    /* core id: the core's logical index, or a unique id
                    past the last core for a PU without a core */
    int numa;    /* OS index of the first NUMA node covering it, or -1 */
    int socket;  /* OS index of its package, or -1 */
    bool allowed;
};

/* Once-per-topology warnings. Kept behind a pointer so that calls taking a
 * const topology (allocation) may still record that they warned. */
struct hog_topo_warned {
    atomic_bool membind;
};

struct hog_topo {
    hwloc_topology_t hw;
    bool this_machine;
    bool membind;     /* hwloc can allocate memory bound to a node here */
    bool thread_bind; /* hwloc can bind the calling thread here */
    unsigned npus, ncores, nsockets;
    struct hog_pu *pu;  /* npus entries */
    unsigned nnuma;
    int *numa_os;       /* NUMA node OS indices, logical order */
    int *numa_socket;   /* their package's OS index, or -1 */
    hwloc_bitmap_t allowed; /* allowed PUs (OS indices) */
    struct hog_topo_warned *warned;
    bool shared;        /* hog_topo_machine's: hog_topo_free leaves it */
};

/* Parses LIST ("0-3,8,10-11"), the len bytes at s, into at most
 * HOG_BIND_MAX_RANGES ranges in the order written; repeats, empty items,
 * spaces and indices above HOG_BIND_MAX_INDEX are errors. what names the
 * list in messages ("bind spec \"cpus:0-3\""), whose character base + 1
 * s[0] is. */
hog_status hog_list_parse(const char *s, size_t len, size_t base,
                          const char *what, struct hog_bind_range *r,
                          unsigned *n, hog_err *err);

#endif
