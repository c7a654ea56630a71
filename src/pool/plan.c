/*
 * Binding plans: which PU each thread runs on.
 *
 * Every policy except cpus:LIST works the same way. The candidates are the
 * allowed PUs the policy may use, each with a group (its NUMA node's place
 * in the policy's node order) and an SMT rank (0 for the first candidate PU
 * of its core, 1 for the second, ...). The plan is the candidates sorted by
 *
 *     compact:  (rank, group, logical order)
 *     scatter:  (rank, index of the core within its group, group)
 *
 * so that every core gets a thread before any core gets two, compact fills
 * one node before the next and scatter deals cores to the nodes in turn.
 * no_smt keeps rank 0 only. cpus:LIST is the list itself.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOG_PLAN_MAX_THREADS 65536

struct cand {
    unsigned key[3];
    unsigned pu; /* index into t->pu */
};

static int cand_cmp(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    for (int k = 0; k < 3; k++)
        if (x->key[k] != y->key[k])
            return x->key[k] < y->key[k] ? -1 : 1;
    return 0;
}

/* Scratch of one planning call. */
struct planner {
    const struct hog_topo *t;
    const struct hog_bind *b;
    const char *spec;     /* canonical spec, for messages */
    unsigned *seq;        /* PU indices in plan order */
    unsigned len;         /* entries of seq */
    unsigned primary;     /* the default thread count */
};

static int pu_by_os(const struct hog_topo *t, unsigned os)
{
    for (unsigned i = 0; i < t->npus; i++)
        if ((unsigned)t->pu[i].os == os)
            return (int)i;
    return -1;
}

static hog_status plan_cpus(struct planner *pl, hog_err *err)
{
    const struct hog_topo *t = pl->t;
    bool *core_used = calloc(t->ncores + 1, sizeof *core_used);
    if (!core_used)
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    char allowed[256];
    hog_status st = HOG_OK;
    for (unsigned k = 0; k < pl->b->nranges && st == HOG_OK; k++) {
        for (unsigned v = pl->b->range[k].lo; v <= pl->b->range[k].hi; v++) {
            int i = pu_by_os(t, v);
            if (i < 0) {
                char all[256];
                hwloc_bitmap_list_snprintf(
                    all, sizeof all, hwloc_topology_get_topology_cpuset(t->hw));
                st = hog_errf(err, HOG_EINVAL,
                              "bind spec \"%s\": CPU %u does not exist (the "
                              "machine's CPUs are %s)", pl->spec, v, all);
                break;
            }
            if (!t->pu[i].allowed) {
                st = hog_errf(err, HOG_EINVAL,
                              "bind spec \"%s\": CPU %u is outside the CPUs "
                              "this process may use (%s; see taskset, numactl "
                              "or the cgroup cpuset)", pl->spec, v,
                              hog_topo_allowed_str(t, allowed, sizeof allowed));
                break;
            }
            if (pl->b->no_smt && core_used[t->pu[i].core])
                continue;
            core_used[t->pu[i].core] = true;
            pl->seq[pl->len++] = (unsigned)i;
        }
    }
    free(core_used);
    pl->primary = pl->len;
    return st;
}

/* Sets group[j] for every NUMA node j (logical order; j = nnuma stands for
 * "no node"): its place in the policy's node order, or -1 when excluded.
 * For socket:LIST, sock_pos[i] gives each PU's socket's place in the list. */
static hog_status order_nodes(struct planner *pl, int *group, int *sock_pos,
                              hog_err *err)
{
    const struct hog_topo *t = pl->t;
    const struct hog_bind *b = pl->b;
    unsigned nn = t->nnuma;
    switch (b->policy) {
    case HOG_BIND_COMPACT:
    case HOG_BIND_NONE:
    case HOG_BIND_CPUS:
        for (unsigned j = 0; j <= nn; j++)
            group[j] = (int)j;
        return HOG_OK;
    case HOG_BIND_SCATTER: {
        /* Node 0 of each socket, then node 1 of each socket, ... */
        struct cand *c = calloc(nn + 1, sizeof *c);
        if (!c)
            return hog_errf(err, HOG_ENOMEM, "out of memory");
        for (unsigned j = 0; j <= nn; j++) {
            unsigned rank = 0, sock = j;
            for (unsigned i = 0; i < j && j < nn; i++)
                if (t->numa_socket[i] == t->numa_socket[j]) {
                    if (rank++ == 0)
                        sock = i; /* first node of this socket */
                }
            c[j].key[0] = rank;
            c[j].key[1] = sock; /* sockets in order of their first node */
            c[j].key[2] = j;
            c[j].pu = j;
        }
        qsort(c, nn + 1, sizeof *c, cand_cmp);
        for (unsigned g = 0; g <= nn; g++)
            group[c[g].pu] = (int)g;
        free(c);
        return HOG_OK;
    }
    case HOG_BIND_NUMA: {
        for (unsigned j = 0; j <= nn; j++)
            group[j] = -1;
        int next = 0;
        for (unsigned k = 0; k < b->nranges; k++)
            for (unsigned v = b->range[k].lo; v <= b->range[k].hi; v++) {
                unsigned j = 0;
                while (j < nn && t->numa_os[j] != (int)v)
                    j++;
                if (j == nn)
                    return hog_errf(err, HOG_EINVAL,
                                    "bind spec \"%s\": NUMA node %u does not "
                                    "exist (the machine has %u node%s)",
                                    pl->spec, v, nn, nn == 1 ? "" : "s");
                group[j] = next++;
            }
        return HOG_OK;
    }
    case HOG_BIND_SOCKET: {
        for (unsigned j = 0; j <= nn; j++)
            group[j] = (int)j;
        for (unsigned i = 0; i < t->npus; i++)
            sock_pos[i] = -1;
        int next = 0;
        for (unsigned k = 0; k < b->nranges; k++)
            for (unsigned v = b->range[k].lo; v <= b->range[k].hi; v++) {
                bool found = false;
                for (unsigned i = 0; i < t->npus; i++)
                    if (t->pu[i].socket == (int)v) {
                        sock_pos[i] = next;
                        found = true;
                    }
                if (!found)
                    return hog_errf(err, HOG_EINVAL,
                                    "bind spec \"%s\": socket %u does not "
                                    "exist (the machine has %u socket%s)",
                                    pl->spec, v, t->nsockets,
                                    t->nsockets == 1 ? "" : "s");
                next++;
            }
        return HOG_OK;
    }
    }
    return hog_errf(err, HOG_EINVAL, "unknown binding policy %d", (int)b->policy);
}

static unsigned node_index(const struct hog_topo *t, int os)
{
    for (unsigned j = 0; j < t->nnuma; j++)
        if (t->numa_os[j] == os)
            return j;
    return t->nnuma;
}

static hog_status plan_groups(struct planner *pl, hog_err *err)
{
    const struct hog_topo *t = pl->t;
    const struct hog_bind *b = pl->b;
    unsigned nn = t->nnuma, ngroups = nn + 1;
    int *group = calloc(ngroups, sizeof *group);
    int *sock_pos = calloc(t->npus, sizeof *sock_pos);
    unsigned *core_rank = calloc(t->ncores + 1, sizeof *core_rank);
    struct cand *c = calloc(t->npus, sizeof *c);
    unsigned *in_group = NULL;
    unsigned *hits = calloc(t->npus + ngroups, sizeof *hits);
    hog_status st = HOG_OK;
    if (!group || !sock_pos || !core_rank || !c || !hits) {
        st = hog_errf(err, HOG_ENOMEM, "out of memory");
        goto out;
    }
    if ((st = order_nodes(pl, group, sock_pos, err)) != HOG_OK)
        goto out;
    bool by_socket = b->policy == HOG_BIND_SOCKET;
    unsigned n = 0, max_rank = 0;
    for (unsigned i = 0; i < t->npus; i++) {
        const struct hog_pu *p = &t->pu[i];
        int g = group[node_index(t, p->numa)];
        if (!p->allowed || g < 0 || (by_socket && sock_pos[i] < 0))
            continue;
        hits[by_socket ? (unsigned)sock_pos[i] : (unsigned)g]++;
        unsigned rank = core_rank[p->core]++;
        if (b->no_smt && rank > 0)
            continue;
        if (rank > max_rank)
            max_rank = rank;
        /* socket:LIST: sockets in list order, then their nodes in order. */
        unsigned grp = by_socket ? (unsigned)sock_pos[i] * ngroups + (unsigned)g
                                 : (unsigned)g;
        c[n] = (struct cand){ { rank, grp, i }, i };
        n++;
    }
    if (b->policy == HOG_BIND_NUMA || b->policy == HOG_BIND_SOCKET) {
        /* Every listed node (socket) must offer a CPU: a list that silently
         * shrinks under taskset would hide a mistake. */
        unsigned item = 0;
        for (unsigned k = 0; k < b->nranges; k++)
            for (unsigned v = b->range[k].lo; v <= b->range[k].hi; v++, item++)
                if (hits[item] == 0) {
                    char allowed[256];
                    st = hog_errf(err, HOG_EINVAL,
                                  "bind spec \"%s\": %s %u has no CPU this "
                                  "process may use (allowed CPUs: %s)",
                                  pl->spec, by_socket ? "socket" : "NUMA node",
                                  v, hog_topo_allowed_str(t, allowed,
                                                          sizeof allowed));
                    goto out;
                }
    }
    if (n == 0) {
        char allowed[256];
        st = hog_errf(err, HOG_EINVAL,
                      "bind spec \"%s\": none of its CPUs may be used by this "
                      "process (allowed CPUs: %s)", pl->spec,
                      hog_topo_allowed_str(t, allowed, sizeof allowed));
        goto out;
    }
    if (b->policy == HOG_BIND_SCATTER) {
        /* key = (rank, k-th core of its group in this rank, group) */
        in_group = calloc(ngroups, sizeof *in_group);
        if (!in_group) {
            st = hog_errf(err, HOG_ENOMEM, "out of memory");
            goto out;
        }
        for (unsigned r = 0; r <= max_rank; r++) {
            memset(in_group, 0, ngroups * sizeof *in_group);
            for (unsigned k = 0; k < n; k++)
                if (c[k].key[0] == r) {
                    unsigned g = c[k].key[1];
                    c[k].key[1] = in_group[g]++;
                    c[k].key[2] = g;
                }
        }
    }
    qsort(c, n, sizeof *c, cand_cmp);
    for (unsigned k = 0; k < n; k++) {
        pl->seq[pl->len++] = c[k].pu;
        if (c[k].key[0] == 0)
            pl->primary++;
    }
out:
    free(group);
    free(sock_pos);
    free(core_rank);
    free(c);
    free(in_group);
    free(hits);
    return st;
}

hog_status hog_topo_plan(const struct hog_topo *t, const struct hog_bind *b,
                         unsigned nthreads, struct hog_plan **out,
                         hog_err *err)
{
    *out = NULL;
    char spec[HOG_ERR_MAX / 4];
    struct planner pl = { .t = t, .b = b, .spec = hog_bind_str(b, spec, sizeof spec) };
    if (nthreads > HOG_PLAN_MAX_THREADS)
        return hog_errf(err, HOG_ERANGE, "%u threads: at most %d are supported",
                        nthreads, HOG_PLAN_MAX_THREADS);
    pl.seq = calloc(t->npus, sizeof *pl.seq);
    if (!pl.seq)
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    hog_status st = b->policy == HOG_BIND_CPUS ? plan_cpus(&pl, err)
                                               : plan_groups(&pl, err);
    if (st != HOG_OK) {
        free(pl.seq);
        return st;
    }
    unsigned n = nthreads ? nthreads : pl.primary;
    if (n > pl.len && !b->oversubscribe) {
        char allowed[256];
        free(pl.seq);
        return hog_errf(err, HOG_EINVAL,
                        "%u threads, but the binding \"%s\" has only %u %s "
                        "among the CPUs this process may use (%s); use fewer "
                        "threads or allow oversubscription (+oversubscribe, "
                        "--oversubscribe)", n, spec, pl.len,
                        b->no_smt ? "cores" : "CPUs",
                        hog_topo_allowed_str(t, allowed, sizeof allowed));
    }
    struct hog_plan *p = calloc(1, sizeof *p + (size_t)n * sizeof p->place[0]);
    if (!p) {
        free(pl.seq);
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    }
    p->topo = t;
    p->nthreads = n;
    p->pin = b->policy != HOG_BIND_NONE;
    p->oversubscribed = n > pl.len;
    for (unsigned i = 0; i < n; i++) {
        const struct hog_pu *u = &t->pu[pl.seq[i % pl.len]];
        p->place[i] = p->pin ? (struct hog_place){ u->os, u->core, u->numa, u->socket }
                             : (struct hog_place){ -1, -1, -1, -1 };
    }
    free(pl.seq);
    *out = p;
    return HOG_OK;
}

void hog_plan_free(struct hog_plan *p)
{
    free(p);
}
