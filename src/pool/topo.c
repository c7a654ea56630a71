/*
 * The machine's shape through hwloc: PUs with their core, NUMA node and
 * socket, the CPUs this process may use, and memory bound to a node.
 *
 * The allowed set is hwloc's allowed cpuset (hwloc drops CPUs outside the
 * cgroup cpuset while loading) intersected with the calling thread's
 * binding (sched_getaffinity: what taskset, numactl --cpunodebind and
 * hwloc-bind set, and what new threads inherit). We read the binding rather
 * than load with HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_CPUBINDING so that the
 * summary can still show the whole machine next to the usable part.
 */
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int os_or_logical(hwloc_obj_t o)
{
    return o->os_index == HWLOC_UNKNOWN_INDEX ? (int)o->logical_index
                                              : (int)o->os_index;
}

/* Fills the PU, NUMA node and socket tables from the loaded topology. */
static hog_status describe(struct hog_topo *t, hog_err *err)
{
    hwloc_topology_t hw = t->hw;
    int npus = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PU);
    int nnuma = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_NUMANODE);
    int ncore_objs = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE);
    int nsockets = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PACKAGE);
    if (npus <= 0)
        return hog_errf(err, HOG_EINVAL, "the topology has no processing units");
    t->npus = (unsigned)npus;
    t->nnuma = nnuma > 0 ? (unsigned)nnuma : 0;
    t->nsockets = nsockets > 0 ? (unsigned)nsockets : 0;
    if (ncore_objs < 0)
        ncore_objs = 0;
    t->pu = calloc(t->npus, sizeof *t->pu);
    t->numa_os = calloc(t->nnuma + 1, sizeof *t->numa_os);
    t->numa_socket = calloc(t->nnuma + 1, sizeof *t->numa_socket);
    if (!t->pu || !t->numa_os || !t->numa_socket)
        return hog_errf(err, HOG_ENOMEM, "out of memory describing the topology");

    for (unsigned j = 0; j < t->nnuma; j++) {
        hwloc_obj_t node = hwloc_get_obj_by_type(hw, HWLOC_OBJ_NUMANODE, j);
        hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_PACKAGE,
                                                         node);
        t->numa_os[j] = os_or_logical(node);
        t->numa_socket[j] = pkg ? os_or_logical(pkg) : -1;
    }

    unsigned cores_without_objects = 0;
    for (unsigned i = 0; i < t->npus; i++) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(hw, HWLOC_OBJ_PU, i);
        hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_CORE, pu);
        hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_PACKAGE,
                                                         pu);
        struct hog_pu *p = &t->pu[i];
        p->os = (int)pu->os_index;
        if (core) {
            p->core = (int)core->logical_index;
        } else {
            p->core = ncore_objs + (int)cores_without_objects;
            cores_without_objects++;
        }
        p->socket = pkg ? os_or_logical(pkg) : -1;
        /* The first covering node: the DRAM node where a PU is also covered
         * by HBM or CXL memory nodes, which hwloc lists after it. */
        p->numa = -1;
        for (unsigned j = 0; j < t->nnuma; j++) {
            hwloc_obj_t node = hwloc_get_obj_by_type(hw, HWLOC_OBJ_NUMANODE, j);
            if (node->cpuset && hwloc_bitmap_isset(node->cpuset, pu->os_index)) {
                p->numa = t->numa_os[j];
                break;
            }
        }
        p->allowed = hwloc_bitmap_isset(t->allowed, pu->os_index);
    }
    t->ncores = (unsigned)ncore_objs + cores_without_objects;
    return HOG_OK;
}

/* Intersects t->allowed with the list of PU OS indices in `list`. */
static hog_status restrict_to_list(struct hog_topo *t, const char *list,
                                   hog_err *err)
{
    struct hog_bind_range r[HOG_BIND_MAX_RANGES];
    unsigned n = 0;
    char what[HOG_ERR_MAX / 2];
    snprintf(what, sizeof what, "allowed CPU list \"%s\"", list);
    hog_status st = hog_list_parse(list, strlen(list), 0, what, r, &n, err);
    if (st != HOG_OK)
        return st;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set)
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    for (unsigned k = 0; k < n; k++)
        hwloc_bitmap_set_range(set, r[k].lo, (int)r[k].hi);
    hwloc_bitmap_and(t->allowed, t->allowed, set);
    hwloc_bitmap_free(set);
    return HOG_OK;
}

hog_status hog_topo_load(struct hog_topo **out, const char *synthetic,
                         const char *xml, const char *allowed, hog_err *err)
{
    *out = NULL;
    if (synthetic && xml)
        return hog_errf(err, HOG_EINVAL,
                        "give a synthetic topology or an XML file, not both");
    struct hog_topo *t = calloc(1, sizeof *t);
    if (!t)
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    t->warned = calloc(1, sizeof *t->warned);
    if (!t->warned) {
        free(t);
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    }
    hog_status st = HOG_OK;
    if (hwloc_topology_init(&t->hw) != 0) {
        free(t->warned);
        free(t);
        return hog_errf(err, HOG_ENOMEM, "hwloc: cannot initialise a topology");
    }
    if (synthetic && hwloc_topology_set_synthetic(t->hw, synthetic) != 0) {
        st = hog_errf(err, HOG_EINVAL,
                      "invalid hwloc synthetic topology \"%s\" (write e.g. "
                      "\"pack:2 numa:2 core:8 pu:2\")", synthetic);
        goto fail;
    }
    if (xml && hwloc_topology_set_xml(t->hw, xml) != 0) {
        st = hog_errf(err, HOG_EIO, "%s: cannot read an hwloc XML topology (%s)",
                      xml, strerror(errno));
        goto fail;
    }
    if (hwloc_topology_load(t->hw) != 0) {
        st = xml ? hog_errf(err, HOG_EFORMAT,
                            "%s: not a valid hwloc XML topology (%s)", xml,
                            strerror(errno))
                 : hog_errf(err, HOG_EIO, "hwloc: cannot load the topology (%s)",
                            strerror(errno));
        goto fail;
    }
    t->this_machine = hwloc_topology_is_thissystem(t->hw) != 0;
    const struct hwloc_topology_support *sup = hwloc_topology_get_support(t->hw);
    t->membind = t->this_machine && sup->membind->alloc_membind;
    t->thread_bind = t->this_machine && sup->cpubind->set_thisthread_cpubind;

    t->allowed = hwloc_bitmap_dup(hwloc_topology_get_allowed_cpuset(t->hw));
    if (!t->allowed) {
        st = hog_errf(err, HOG_ENOMEM, "out of memory");
        goto fail;
    }
    hwloc_bitmap_and(t->allowed, t->allowed,
                     hwloc_topology_get_topology_cpuset(t->hw));
    if (t->this_machine && sup->cpubind->get_thisthread_cpubind) {
        hwloc_bitmap_t mine = hwloc_bitmap_alloc();
        if (mine && hwloc_get_cpubind(t->hw, mine, HWLOC_CPUBIND_THREAD) == 0 &&
            !hwloc_bitmap_iszero(mine))
            hwloc_bitmap_and(t->allowed, t->allowed, mine);
        hwloc_bitmap_free(mine);
    }
    if (allowed && (st = restrict_to_list(t, allowed, err)) != HOG_OK)
        goto fail;
    if (hwloc_bitmap_iszero(t->allowed)) {
        char all[256];
        hwloc_bitmap_list_snprintf(all, sizeof all,
                                   hwloc_topology_get_topology_cpuset(t->hw));
        st = hog_errf(err, HOG_EINVAL,
                      "no CPU of this topology (%s) is allowed%s%s%s", all,
                      allowed ? " by the list \"" : "", allowed ? allowed : "",
                      allowed ? "\"" : "");
        goto fail;
    }
    if ((st = describe(t, err)) != HOG_OK)
        goto fail;
    *out = t;
    return HOG_OK;
fail:
    hog_topo_free(t);
    return st;
}

static struct hog_topo *machine;   /* hog_topo_machine's, never freed */
static cpu_set_t machine_affinity; /* the loading thread's CPUs */
static pthread_mutex_t machine_lock = PTHREAD_MUTEX_INITIALIZER;

hog_status hog_topo_machine(struct hog_topo **out, hog_err *err)
{
    cpu_set_t now;
    CPU_ZERO(&now);
    bool known = sched_getaffinity(0, sizeof now, &now) == 0;
    pthread_mutex_lock(&machine_lock);
    hog_status st = HOG_OK;
    if (!machine && known &&
        (st = hog_topo_load(&machine, NULL, NULL, NULL, err)) == HOG_OK) {
        machine->shared = true;
        machine_affinity = now;
    }
    bool same = machine && known && CPU_EQUAL(&now, &machine_affinity);
    *out = same ? machine : NULL;
    pthread_mutex_unlock(&machine_lock);
    if (st != HOG_OK || same)
        return st;
    return hog_topo_load(out, NULL, NULL, NULL, err);
}

void hog_topo_free(struct hog_topo *t)
{
    if (!t || t->shared)
        return;
    hwloc_bitmap_free(t->allowed);
    hwloc_topology_destroy(t->hw);
    free(t->pu);
    free(t->numa_os);
    free(t->numa_socket);
    free(t->warned);
    free(t);
}

void hog_topo_info(const struct hog_topo *t, struct hog_topo_info *out)
{
    memset(out, 0, sizeof *out);
    out->sockets = t->nsockets;
    out->numa_nodes = t->nnuma;
    out->cores = t->ncores;
    out->pus = t->npus;
    out->this_machine = t->this_machine;
    /* PUs of a core are contiguous in logical order. */
    int last_core = -1;
    for (unsigned i = 0; i < t->npus; i++) {
        if (!t->pu[i].allowed)
            continue;
        out->allowed_pus++;
        if (t->pu[i].core != last_core)
            out->allowed_cores++;
        last_core = t->pu[i].core;
    }
}

char *hog_topo_allowed_str(const struct hog_topo *t, char *buf, size_t len)
{
    if (len)
        hwloc_bitmap_list_snprintf(buf, len, t->allowed);
    return buf;
}

/* ---- NUMA memory ----------------------------------------------------------- */

void *hog_numa_alloc(const struct hog_topo *t, int node, size_t bytes)
{
    if (bytes == 0)
        return NULL;
    if (node < 0 || !t->this_machine)
        return hwloc_alloc(t->hw, bytes);
    const char *why = "not supported on this system";
    if (t->membind) {
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        if (!set)
            return NULL;
        hwloc_bitmap_only(set, (unsigned)node);
        void *mem = hwloc_alloc_membind(t->hw, bytes, set, HWLOC_MEMBIND_BIND,
                                        HWLOC_MEMBIND_BYNODESET |
                                            HWLOC_MEMBIND_STRICT);
        int e = errno;
        hwloc_bitmap_free(set);
        if (mem)
            return mem;
        why = strerror(e);
    }
    /* A single node has nothing to choose: no warning there. */
    if (t->nnuma > 1 &&
        !atomic_exchange_explicit(&t->warned->membind, true,
                                  memory_order_relaxed))
        fprintf(stderr,
                "hogtrain: warning: cannot bind memory to NUMA node %d (%s); "
                "pages go where they are first written\n", node, why);
    return hwloc_alloc(t->hw, bytes);
}

void hog_numa_free(const struct hog_topo *t, void *mem, size_t bytes)
{
    if (mem)
        hwloc_free(t->hw, mem, bytes);
}
