/*
 * pool: the machine's shape (hwloc), binding plans, a pool of pinned worker
 * threads with a cheap barrier, and NUMA-local memory. pool/spin.h holds
 * the barrier that only spins, for phases too short to sleep in.
 *
 *     struct hog_topo *t;   hog_topo_load(&t, NULL, NULL, NULL, err);
 *     struct hog_bind b;    hog_bind_parse("scatter+no_smt", &b, err);
 *     struct hog_plan *p;   hog_topo_plan(t, &b, 0, &p, err);
 *     struct hog_pool *w;   hog_pool_create(p, &w, err);
 *     hog_pool_run(w, fn, arg);          fn(arg, tid, n) on every worker
 *     hog_pool_destroy(w); hog_plan_free(p); hog_topo_free(t);
 *
 * A topology only ever offers the CPUs this process may run on (taskset,
 * numactl, cgroup cpuset, hwloc-bind): plans never pin outside that set.
 * Topologies from hwloc synthetic descriptions or XML files give plans for
 * other machines without binding anything (tests, `hogtrain topo`).
 * See docs/POOL.md for the policies.
 */
#ifndef HOG_POOL_H
#define HOG_POOL_H

#include "core/core.h"

#include <stdbool.h>
#include <stddef.h>

/* ---- topology ------------------------------------------------------------ */

struct hog_topo; /* opaque */

/* Loads a topology. Both sources NULL: this machine, limited to the CPUs the
 * calling thread may run on (hwloc's allowed set, which follows the cgroup
 * cpuset, intersected with the thread's binding, which follows taskset,
 * numactl and hwloc-bind). synthetic: an hwloc synthetic description
 * ("pack:2 numa:2 core:8 pu:2"); xml: an hwloc XML file (lstopo --of xml);
 * at most one of them. allowed, if not NULL, further limits the allowed CPUs
 * to this list of PU OS indices ("0-5,8"): how tests emulate taskset on a
 * synthetic machine. Empty allowed sets are HOG_EINVAL. */
hog_status hog_topo_load(struct hog_topo **out, const char *synthetic,
                         const char *xml, const char *allowed, hog_err *err);
/* hog_topo_load(out, NULL, NULL, NULL, err), loaded once per process and
 * shared (hwloc's load reads /sys: about 5 ms, which every threaded
 * training would pay again): read-only after the load, its warnings
 * atomic, hog_topo_free leaves it. A calling thread whose CPU affinity is
 * not the one it was loaded under gets a fresh topology of its own. */
hog_status hog_topo_machine(struct hog_topo **out, hog_err *err);
void hog_topo_free(struct hog_topo *t);

/* Counts for a summary. Cores without SMT, or machines whose topology lists
 * no cores, count each PU as a core. */
struct hog_topo_info {
    unsigned sockets;       /* packages (0 when the topology names none) */
    unsigned numa_nodes;
    unsigned cores;
    unsigned pus;           /* processing units (hardware threads) */
    unsigned allowed_pus;   /* those this process may use */
    unsigned allowed_cores; /* cores with at least one allowed PU */
    bool this_machine;      /* false for synthetic and XML topologies */
};
void hog_topo_info(const struct hog_topo *t, struct hog_topo_info *out);

/* Writes the allowed PUs as a list ("0-5,8") into buf; returns buf. */
char *hog_topo_allowed_str(const struct hog_topo *t, char *buf, size_t len);

/* ---- binding policies ---------------------------------------------------- */

enum hog_bind_policy {
    HOG_BIND_COMPACT = 0, /* NUMA node by node, one thread per core first */
    HOG_BIND_NONE,        /* threads are not pinned */
    HOG_BIND_SCATTER,     /* round-robin over NUMA nodes, sockets alternating */
    HOG_BIND_CPUS,        /* the listed PUs (OS indices), in the listed order */
    HOG_BIND_NUMA,        /* compact over the listed NUMA nodes (OS indices) */
    HOG_BIND_SOCKET       /* compact over the listed sockets (OS indices) */
};

#define HOG_BIND_MAX_RANGES 64     /* ranges in one LIST */
#define HOG_BIND_MAX_INDEX 1048575 /* largest index a LIST may name */

struct hog_bind_range {
    unsigned lo, hi; /* inclusive */
};

/* A parsed policy: a plain struct, no allocation. */
struct hog_bind {
    enum hog_bind_policy policy;
    bool no_smt;        /* at most one thread per core */
    bool oversubscribe; /* more threads than PUs (or cores): wrap around */
    unsigned nranges;   /* the LIST of cpus:, numa:, socket: */
    struct hog_bind_range range[HOG_BIND_MAX_RANGES];
};

/* The default: compact, SMT allowed, no oversubscription. */
void hog_bind_init(struct hog_bind *b);

/* Parses SPEC = POLICY ['+' FLAG]..., where POLICY is none | compact |
 * scatter | cpus:LIST | cores:LIST (the same as cpus:) | numa:LIST |
 * socket:LIST, FLAG is no_smt | oversubscribe, and LIST is "0-3,8,10-11"
 * (no repeats, no spaces). A spec of flags alone ("no_smt") means compact
 * with those flags; NULL or "" means the default. On error, out is left
 * unchanged and err says where the spec is wrong. */
hog_status hog_bind_parse(const char *spec, struct hog_bind *out, hog_err *err);

/* Writes the canonical spec ("cpus:0-3,8+no_smt") into buf; returns buf. */
char *hog_bind_str(const struct hog_bind *b, char *buf, size_t len);

/* ---- plans --------------------------------------------------------------- */

/* Where one thread runs. pu is the PU's OS index (what taskset and
 * sched_getcpu() use), numa the node's OS index (numactl), socket the
 * package's OS index, core the core's logical index (core OS indices repeat
 * across packages). -1 when unpinned (policy none) or unknown. */
struct hog_place {
    int pu, core, numa, socket;
};

struct hog_plan {
    const struct hog_topo *topo; /* borrowed: must outlive the plan */
    unsigned nthreads;
    bool pin;            /* false for policy none: all places are -1 */
    bool oversubscribed; /* some PU runs more than one thread */
    struct hog_place place[]; /* nthreads entries, by thread id */
};

/* Plans nthreads threads (0: one per allowed core that the policy may use;
 * with cpus:LIST, one per listed PU) over the allowed PUs of t.
 *
 * compact: NUMA nodes in order, and within a node its cores in order, one
 *   thread per core; once every core has a thread, a second pass places
 *   threads on the cores' second hyperthreads in the same order, and so on.
 * scatter: the same passes, but each pass deals cores round-robin over the
 *   NUMA nodes, taking node 0 of each socket, then node 1 of each socket,
 *   and so on (so that two threads reach two sockets); nodes that run out
 *   of cores are skipped.
 * numa:LIST, socket:LIST: compact over the listed nodes (sockets), in the
 *   order listed.
 * cpus:LIST: the listed PUs in the listed order; each must be allowed.
 * none: counted like compact, but every place is -1 (not pinned).
 * no_smt keeps only the first usable PU of each core (in plan order).
 *
 * More threads than the plan has places is HOG_EINVAL with a sentence,
 * unless b->oversubscribe: then thread i takes place i mod places. Listed
 * CPUs, nodes or sockets that do not exist or offer no allowed CPU are
 * HOG_EINVAL; more than 65536 threads is HOG_ERANGE. */
hog_status hog_topo_plan(const struct hog_topo *t, const struct hog_bind *b,
                         unsigned nthreads, struct hog_plan **out,
                         hog_err *err);
void hog_plan_free(struct hog_plan *p);

/* ---- the pool ------------------------------------------------------------ */

struct hog_pool; /* opaque */

/* A job: called once on every worker, tid in [0, nthreads). */
typedef void (*hog_pool_fn)(void *arg, unsigned tid, unsigned nthreads);

/* Starts plan->nthreads persistent workers, each pinned to its planned PU
 * before it runs anything, and waits until all are up. A worker that cannot
 * be pinned (a restricted container, a topology of another machine) runs
 * unpinned after a one-line warning on stderr; that is not an error. The
 * plan may be freed afterwards; its topology must outlive the pool. */
hog_status hog_pool_create(const struct hog_plan *plan, struct hog_pool **out,
                           hog_err *err);

/* Runs fn(arg, tid, n) on every worker and returns when all have returned;
 * their writes are then visible to the caller. The calling thread only
 * waits (it is not a worker and is never pinned). No threads are created.
 * One run at a time per pool; never call it from inside a job. */
void hog_pool_run(struct hog_pool *p, hog_pool_fn fn, void *arg);

/* Inside a job only, called by all n workers the same number of times:
 * returns when all have arrived; writes before it are visible after it.
 * Spins briefly, then sleeps on a futex. Phases shorter than a futex
 * wake-up (Cyclades' batches) want the spinning barrier of pool/spin.h. */
void hog_pool_barrier(struct hog_pool *p);

/* Stops and joins the workers. NULL is fine. */
void hog_pool_destroy(struct hog_pool *p);

unsigned hog_pool_size(const struct hog_pool *p);
/* The planned place of worker tid. */
const struct hog_place *hog_pool_place(const struct hog_pool *p, unsigned tid);
/* True when worker tid was pinned to its place's PU. */
bool hog_pool_pinned(const struct hog_pool *p, unsigned tid);

/* ---- the pool of an algorithm -------------------------------------------- */

/* Where an algorithm's workers may run. */
enum hog_pool_binding {
    /* o->bind, with o->no_smt and o->oversubscribe added (Hogwild!). */
    HOG_POOL_BIND_OPTS,
    /* compact, oversubscribed, whatever o says: for the algorithms whose
     * answer must not depend on the machine, only their speed (tests ask
     * for 4 threads on 2 cores): Cyclades, coordinate descent. */
    HOG_POOL_BIND_ANY
};

/* Loads this machine's topology into *topo and starts `threads` workers on
 * it in *pool (0: one per allowed core the binding may use, as
 * hog_topo_plan); the plan is freed, the topology must outlive the pool.
 * o is read only for HOG_POOL_BIND_OPTS (NULL is fine otherwise). The
 * errors are those of hog_bind_parse, hog_topo_load, hog_topo_plan and
 * hog_pool_create; on failure *topo and *pool are NULL. Free with
 * hog_pool_destroy, then hog_topo_free (for_opts.c). */
hog_status hog_pool_for_opts(const hog_train_opts *o, unsigned threads,
                             enum hog_pool_binding how,
                             struct hog_topo **topo, struct hog_pool **pool,
                             hog_err *err);

/* ---- NUMA memory ----------------------------------------------------------- */

/* bytes (> 0) of page-aligned memory bound to NUMA node `node` (OS index).
 * Where binding is unsupported (no NUMA support, a restricted container, a
 * topology of another machine, node < 0) the memory is plain and unbound:
 * pages land on the node of the thread that first writes them (first
 * touch), and the first failure on this machine prints a one-line warning.
 * NULL only when out of memory. Free with hog_numa_free (same bytes). */
void *hog_numa_alloc(const struct hog_topo *t, int node, size_t bytes);
void hog_numa_free(const struct hog_topo *t, void *mem, size_t bytes);

/* hog_numa_alloc on worker tid's node (unbound for policy none). */
void *hog_pool_alloc_local(struct hog_pool *p, unsigned tid, size_t bytes);
void hog_pool_free_local(struct hog_pool *p, void *mem, size_t bytes);

#endif
