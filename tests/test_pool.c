/* pool: binding plans on synthetic and XML topologies (suite pool), and the
 * pinned thread pool on this machine (suite threads, run under TSan). */
#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "pool/pool.h"

#define SYN "pack:2 numa:2 core:8 pu:2"

/* tests/data/topo-uneven.xml: "pack:2 numa:2 core:4 pu:2" with PUs 6-7,
 * 10-13 and 17 removed, so that the NUMA nodes hold 3, 2, 4 and 4 cores
 * and core 5 (PU 16) has no second hyperthread:
 *   socket 0: node 0 {0,1} {2,3} {4,5}     node 1 {8,9} {14,15}
 *   socket 1: node 2 {16} {18,19} {20,21} {22,23}
 *             node 3 {24,25} {26,27} {28,29} {30,31}                      */
static const char *uneven_xml(void)
{
    static char path[1024];
    const char *f = __FILE__;
    const char *slash = strrchr(f, '/');
    snprintf(path, sizeof path, "%.*sdata/topo-uneven.xml",
             slash ? (int)(slash - f + 1) : 0, f);
    return path;
}

/* Expands "0-62:2,1,3" (ranges with an optional step) into out. */
static unsigned expand(const char *s, int *out, unsigned max)
{
    unsigned n = 0;
    while (*s) {
        char *end;
        long lo = strtol(s, &end, 10), hi = lo, step = 1;
        if (*end == '-')
            hi = strtol(end + 1, &end, 10);
        if (*end == ':')
            step = strtol(end + 1, &end, 10);
        for (long v = lo; v <= hi; v += step) {
            cr_assert_lt(n, max);
            out[n++] = (int)v;
        }
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

static struct hog_topo *load(const char *syn, const char *xml,
                             const char *allowed)
{
    struct hog_topo *t = NULL;
    hog_err err = { { 0 } };
    hog_status st = hog_topo_load(&t, syn, xml, allowed, &err);
    cr_assert_eq(st, HOG_OK, "hog_topo_load: %s", err.msg);
    return t;
}

static struct hog_plan *plan(const struct hog_topo *t, const char *spec,
                             unsigned threads)
{
    struct hog_bind b;
    struct hog_plan *p = NULL;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_bind_parse(spec, &b, &err), HOG_OK, "parse %s: %s", spec,
                 err.msg);
    hog_status st = hog_topo_plan(t, &b, threads, &p, &err);
    cr_assert_eq(st, HOG_OK, "plan %s x%u: %s", spec, threads, err.msg);
    return p;
}

/* The plan's PU sequence equals `expected` (in expand() syntax). */
static void expect_pus(const struct hog_topo *t, const char *spec,
                       unsigned threads, const char *expected)
{
    int want[512];
    unsigned n = expand(expected, want, 512);
    struct hog_plan *p = plan(t, spec, threads);
    cr_assert_eq(p->nthreads, n, "%s x%u: %u threads, expected %u", spec,
                 threads, p->nthreads, n);
    for (unsigned i = 0; i < n; i++)
        cr_assert_eq(p->place[i].pu, want[i],
                     "%s x%u: thread %u on PU %d, expected %d", spec, threads,
                     i, p->place[i].pu, want[i]);
    cr_assert(p->pin);
    hog_plan_free(p);
}

/* Planning fails with HOG_EINVAL and a message containing `needle`. */
static void expect_plan_error(const struct hog_topo *t, const char *spec,
                              unsigned threads, const char *needle)
{
    struct hog_bind b;
    struct hog_plan *p = (struct hog_plan *)&b; /* must be reset to NULL */
    hog_err err = { { 0 } };
    cr_assert_eq(hog_bind_parse(spec, &b, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_topo_plan(t, &b, threads, &p, &err), HOG_EINVAL,
                 "%s x%u should fail", spec, threads);
    cr_assert_null(p);
    cr_assert(strstr(err.msg, needle), "message \"%s\" lacks \"%s\"", err.msg,
              needle);
}

/* ---- topology ------------------------------------------------------------- */

Test(pool, synthetic_topology_counts)
{
    struct hog_topo *t = load(SYN, NULL, NULL);
    struct hog_topo_info in;
    hog_topo_info(t, &in);
    cr_assert_eq(in.sockets, 2);
    cr_assert_eq(in.numa_nodes, 4);
    cr_assert_eq(in.cores, 32);
    cr_assert_eq(in.pus, 64);
    cr_assert_eq(in.allowed_pus, 64);
    cr_assert_eq(in.allowed_cores, 32);
    cr_assert(!in.this_machine);
    char buf[64];
    cr_assert_str_eq(hog_topo_allowed_str(t, buf, sizeof buf), "0-63");
    hog_topo_free(t);

    t = load(SYN, NULL, "0-5,17");
    hog_topo_info(t, &in);
    cr_assert_eq(in.allowed_pus, 7);
    cr_assert_eq(in.allowed_cores, 4);
    cr_assert_str_eq(hog_topo_allowed_str(t, buf, sizeof buf), "0-5,17");
    hog_topo_free(t);
}

Test(pool, uneven_xml_topology_counts)
{
    struct hog_topo *t = load(NULL, uneven_xml(), NULL);
    struct hog_topo_info in;
    hog_topo_info(t, &in);
    cr_assert_eq(in.sockets, 2);
    cr_assert_eq(in.numa_nodes, 4);
    cr_assert_eq(in.cores, 13);
    cr_assert_eq(in.pus, 25);
    cr_assert_eq(in.allowed_pus, 25);
    hog_topo_free(t);
}

Test(pool, topology_load_errors)
{
    struct hog_topo *t = (struct hog_topo *)1;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_topo_load(&t, SYN, uneven_xml(), NULL, &err), HOG_EINVAL);
    cr_assert_null(t);
    cr_assert_eq(hog_topo_load(&t, "pack:x core:2", NULL, NULL, &err),
                 HOG_EINVAL);
    cr_assert(strstr(err.msg, "synthetic"), "%s", err.msg);
    cr_assert_neq(hog_topo_load(&t, NULL, "tests/data/no-such-topology.xml",
                                NULL, &err), HOG_OK);
    cr_assert(strstr(err.msg, "no-such-topology.xml"), "%s", err.msg);
    cr_assert_null(t);
    /* Allowed lists: none of them in the machine, or malformed. */
    cr_assert_eq(hog_topo_load(&t, SYN, NULL, "100-200", &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "no CPU"), "%s", err.msg);
    cr_assert_eq(hog_topo_load(&t, SYN, NULL, "3-1", &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "backwards"), "%s", err.msg);
    cr_assert_null(t);
}

/* ---- LIST and policy parsing ---------------------------------------------- */

/* The machine's topology is loaded once and shared: the same object
 * again, hog_topo_free leaves it, and a thread confined to fewer CPUs
 * gets a topology of its own that sees only those. */
struct affinity_job {
    const struct hog_topo *shared;
    unsigned allowed, own;
};

static void *one_cpu_thread(void *arg)
{
    struct affinity_job *j = arg;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET((int)(sched_getcpu() > 0 ? sched_getcpu() : 0), &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0)
        return NULL;
    struct hog_topo *t;
    hog_err err;
    if (hog_topo_machine(&t, &err) != HOG_OK)
        return NULL;
    struct hog_topo_info in;
    hog_topo_info(t, &in);
    j->allowed = in.allowed_pus;
    j->own = t != j->shared;
    hog_topo_free(t);
    return NULL;
}

Test(threads, machine_topology_is_loaded_once)
{
    struct hog_topo *a, *b;
    hog_err err;
    cr_assert_eq(hog_topo_machine(&a, &err), HOG_OK, "%s", err.msg);
    hog_topo_free(a); /* leaves it */
    cr_assert_eq(hog_topo_machine(&b, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(a, b, "loaded again");
    struct hog_topo_info in;
    hog_topo_info(b, &in);
    cr_assert(in.this_machine && in.allowed_pus >= 1);
    struct affinity_job j = { .shared = b };
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, one_cpu_thread, &j), 0);
    pthread_join(th, NULL);
    cr_assert_eq(j.allowed, 1u, "a thread on one CPU sees %u", j.allowed);
    if (in.allowed_pus > 1)
        cr_assert(j.own, "a thread on one CPU got the shared topology");
    hog_topo_free(b);
}

Test(pool, bind_parse_accepts_policies_and_flags)
{
    struct hog_bind b;
    hog_err err = { { 0 } };
    char buf[256];
    static const struct {
        const char *spec, *canonical;
    } cases[] = {
        { NULL, "compact" },
        { "", "compact" },
        { "compact", "compact" },
        { "none", "none" },
        { "scatter+no_smt", "scatter+no_smt" },
        { "no_smt", "compact+no_smt" },
        { "oversubscribe+no-smt", "compact+no_smt+oversubscribe" },
        { "cpus:0-3,8,10-11", "cpus:0-3,8,10-11" },
        { "cores:3,1-2+no_smt", "cpus:3,1-2+no_smt" },
        { "numa:1,0+oversubscribe", "numa:1,0+oversubscribe" },
        { "socket:1", "socket:1" },
        { "cpus:7-7", "cpus:7" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert_eq(hog_bind_parse(cases[i].spec, &b, &err), HOG_OK, "%s: %s",
                     cases[i].spec, err.msg);
        cr_assert_str_eq(hog_bind_str(&b, buf, sizeof buf), cases[i].canonical);
    }
    cr_assert_eq(hog_bind_parse("cpus:0-3,8,10-11+no_smt", &b, &err), HOG_OK);
    cr_assert_eq(b.policy, HOG_BIND_CPUS);
    cr_assert(b.no_smt && !b.oversubscribe);
    cr_assert_eq(b.nranges, 3);
    cr_assert_eq(b.range[0].lo, 0);
    cr_assert_eq(b.range[0].hi, 3);
    cr_assert_eq(b.range[1].lo, 8);
    cr_assert_eq(b.range[1].hi, 8);
    cr_assert_eq(b.range[2].lo, 10);
    cr_assert_eq(b.range[2].hi, 11);
    /* A short buffer is truncated, not overrun. */
    char small[6];
    cr_assert_str_eq(hog_bind_str(&b, small, sizeof small), "cpus:");
}

Test(pool, bind_parse_rejects_bad_specs_with_reasons)
{
    static const struct {
        const char *spec, *needle;
    } cases[] = {
        { "cpus:", "empty list" },
        { "cpus:0-3,,8", "empty item at character 10" },
        { "cpus:3-1", "runs backwards" },
        { "cpus:0-3,2", "2 is listed twice" },
        { "numa:1,0-2", "1 is listed twice" },
        { "cpus:a", "expected a number at character 6" },
        { "cpus:1-", "range without an end" },
        { "cpus:1,", "ends with a comma" },
        { "cpus:1 ,2", "unexpected ' '" },
        { "cpus:-1", "expected a number" },
        { "cpus:99999999", "is above" },
        { "cpus:1-99999999", "is above" },
        { "compact:1", "takes no list" },
        { "numa", "needs a list" },
        { "fancy", "unknown part \"fancy\"" },
        { "compact+scatter", "only once" },
        { "no_smt+compact", "must come first" },
        { "compact+", "empty part" },
        { "+no_smt", "empty part" },
        { "scatter+smt", "unknown part \"smt\"" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct hog_bind b;
        hog_bind_init(&b);
        b.policy = HOG_BIND_SOCKET; /* a marker: errors leave out alone */
        hog_err err = { { 0 } };
        cr_assert_eq(hog_bind_parse(cases[i].spec, &b, &err), HOG_EINVAL,
                     "\"%s\" should not parse", cases[i].spec);
        cr_assert(strstr(err.msg, cases[i].needle),
                  "\"%s\": message \"%s\" lacks \"%s\"", cases[i].spec, err.msg,
                  cases[i].needle);
        cr_assert(strstr(err.msg, cases[i].spec), "%s", err.msg);
        cr_assert_eq(b.policy, HOG_BIND_SOCKET);
    }
    /* More ranges than a struct hog_bind holds. */
    char spec[1024] = "cpus:";
    for (int i = 0; i <= HOG_BIND_MAX_RANGES; i++)
        snprintf(spec + strlen(spec), sizeof spec - strlen(spec), "%s%d",
                 i ? "," : "", 2 * i);
    struct hog_bind b;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_bind_parse(spec, &b, &err), HOG_EINVAL);
    cr_assert(strstr(err.msg, "ranges"), "%s", err.msg);
}

/* ---- plans on 2 sockets x 2 NUMA nodes x 8 cores x 2 PUs ------------------ */

Test(pool, compact_fills_nodes_one_thread_per_core_first)
{
    struct hog_topo *t = load(SYN, NULL, NULL);
    expect_pus(t, "compact", 0, "0-62:2");
    expect_pus(t, "compact", 5, "0,2,4,6,8");
    expect_pus(t, "compact", 64, "0-62:2,1-63:2");
    expect_pus(t, "compact", 34, "0-62:2,1,3");
    struct hog_plan *p = plan(t, "compact", 0);
    cr_assert_eq(p->nthreads, 32);
    cr_assert(!p->oversubscribed);
    /* The other fields of a place. */
    cr_assert_eq(p->place[8].pu, 16);
    cr_assert_eq(p->place[8].core, 8);
    cr_assert_eq(p->place[8].numa, 1);
    cr_assert_eq(p->place[8].socket, 0);
    cr_assert_eq(p->place[31].pu, 62);
    cr_assert_eq(p->place[31].core, 31);
    cr_assert_eq(p->place[31].numa, 3);
    cr_assert_eq(p->place[31].socket, 1);
    cr_assert_eq(p->topo, t);
    hog_plan_free(p);
    hog_topo_free(t);
}

Test(pool, scatter_deals_cores_over_nodes_sockets_alternating)
{
    struct hog_topo *t = load(SYN, NULL, NULL);
    /* Nodes in the order 0 (socket 0), 2 (socket 1), 1, 3. */
    expect_pus(t, "scatter", 4, "0,32,16,48");
    expect_pus(t, "scatter", 0,
               "0,32,16,48,2,34,18,50,4,36,20,52,6,38,22,54,"
               "8,40,24,56,10,42,26,58,12,44,28,60,14,46,30,62");
    expect_pus(t, "scatter", 40,
               "0,32,16,48,2,34,18,50,4,36,20,52,6,38,22,54,"
               "8,40,24,56,10,42,26,58,12,44,28,60,14,46,30,62,"
               "1,33,17,49,3,35,19,51");
    struct hog_plan *p = plan(t, "scatter", 2);
    cr_assert_eq(p->place[0].socket, 0);
    cr_assert_eq(p->place[1].socket, 1);
    cr_assert_eq(p->place[1].numa, 2);
    hog_plan_free(p);
    hog_topo_free(t);
}

Test(pool, no_smt_and_oversubscription)
{
    struct hog_topo *t = load(SYN, NULL, NULL);
    expect_pus(t, "compact+no_smt", 0, "0-62:2");
    expect_pus(t, "scatter+no_smt", 6, "0,32,16,48,2,34");
    expect_plan_error(t, "compact+no_smt", 33, "only 32 cores");
    expect_plan_error(t, "compact", 65, "only 64 CPUs");
    expect_plan_error(t, "scatter", 65, "oversubscri");
    expect_pus(t, "compact+no_smt+oversubscribe", 34, "0-62:2,0,2");
    expect_pus(t, "compact+oversubscribe", 66, "0-62:2,1-63:2,0,2");
    struct hog_plan *p = plan(t, "compact+oversubscribe", 66);
    cr_assert(p->oversubscribed);
    hog_plan_free(p);
    p = plan(t, "compact+oversubscribe", 64);
    cr_assert(!p->oversubscribed);
    hog_plan_free(p);
    hog_topo_free(t);
}

Test(pool, cpus_list_is_taken_in_order)
{
    struct hog_topo *t = load(SYN, NULL, NULL);
    expect_pus(t, "cpus:5,3,10-12", 0, "5,3,10,11,12");
    expect_pus(t, "cores:5,3,10-12", 3, "5,3,10");
    expect_pus(t, "cpus:0-5+no_smt", 0, "0,2,4");
    expect_pus(t, "cpus:1,0,2+no_smt", 0, "1,2");
    expect_pus(t, "cpus:7,9+oversubscribe", 5, "7,9,7,9,7");
    expect_plan_error(t, "cpus:0-4", 6, "only 5 CPUs");
    expect_plan_error(t, "cpus:60-64", 0, "CPU 64 does not exist");
    struct hog_plan *p = plan(t, "cpus:33", 1);
    cr_assert_eq(p->place[0].core, 16);
    cr_assert_eq(p->place[0].numa, 2);
    cr_assert_eq(p->place[0].socket, 1);
    hog_plan_free(p);
    hog_topo_free(t);
}

Test(pool, numa_and_socket_lists)
{
    struct hog_topo *t = load(SYN, NULL, NULL);
    expect_pus(t, "numa:2,0", 0, "32-46:2,0-14:2");
    expect_pus(t, "numa:2,0", 32, "32-46:2,0-14:2,33-47:2,1-15:2");
    expect_pus(t, "numa:3", 3, "48,50,52");
    expect_plan_error(t, "numa:3", 17, "only 16 CPUs");
    expect_plan_error(t, "numa:4", 0, "NUMA node 4 does not exist");
    expect_pus(t, "socket:1", 0, "32-62:2");
    expect_pus(t, "socket:1,0", 32, "32-62:2,0-30:2");
    expect_pus(t, "socket:1+no_smt", 0, "32-62:2");
    expect_plan_error(t, "socket:1+no_smt", 17, "only 16 cores");
    expect_plan_error(t, "socket:2", 0, "socket 2 does not exist");
    hog_topo_free(t);
}

Test(pool, none_places_nothing_but_counts_the_same)
{
    struct hog_topo *t = load(SYN, NULL, NULL);
    struct hog_plan *p = plan(t, "none", 0);
    cr_assert_eq(p->nthreads, 32);
    cr_assert(!p->pin);
    for (unsigned i = 0; i < p->nthreads; i++) {
        cr_assert_eq(p->place[i].pu, -1);
        cr_assert_eq(p->place[i].numa, -1);
    }
    hog_plan_free(p);
    expect_plan_error(t, "none", 65, "only 64 CPUs");
    p = plan(t, "none+oversubscribe", 100);
    cr_assert_eq(p->nthreads, 100);
    cr_assert(p->oversubscribed);
    hog_plan_free(p);
    hog_topo_free(t);
}

/* ---- restricted allowed sets ----------------------------------------------- */

Test(pool, plans_stay_within_the_allowed_cpus)
{
    struct hog_topo *t = load(SYN, NULL, "0-5");
    expect_pus(t, "compact", 0, "0,2,4");
    expect_pus(t, "compact", 6, "0,2,4,1,3,5");
    expect_pus(t, "scatter", 6, "0,2,4,1,3,5");
    expect_plan_error(t, "compact", 7, "only 6 CPUs among the CPUs this process may use (0-5)");
    expect_plan_error(t, "cpus:4-6", 0, "CPU 6 is outside");
    expect_plan_error(t, "numa:0,1", 0, "NUMA node 1 has no CPU");
    expect_plan_error(t, "socket:1", 0, "socket 1 has no CPU");
    hog_topo_free(t);

    /* Lone hyperthreads count as cores; their siblings come second. */
    t = load(SYN, NULL, "1-4,17,40-47");
    expect_pus(t, "compact", 0, "1,2,4,17,40,42,44,46");
    expect_pus(t, "compact", 12, "1,2,4,17,40,42,44,46,3,41,43,45");
    expect_pus(t, "compact+no_smt", 0, "1,2,4,17,40,42,44,46");
    /* Nodes 0 and 1 (socket 0) and 2 (socket 1): 0, 2, 1 in turn. */
    expect_pus(t, "scatter", 0, "1,40,17,2,42,4,44,46");
    expect_pus(t, "socket:1", 0, "40,42,44,46");
    hog_topo_free(t);
}

/* ---- one socket, and machines without SMT or cores ------------------------ */

Test(pool, single_socket_machines)
{
    struct hog_topo *t = load("pack:1 core:4 pu:2", NULL, NULL);
    struct hog_topo_info in;
    hog_topo_info(t, &in);
    cr_assert_eq(in.sockets, 1);
    cr_assert_eq(in.numa_nodes, 1);
    expect_pus(t, "compact", 0, "0,2,4,6");
    expect_pus(t, "scatter", 0, "0,2,4,6");
    expect_pus(t, "compact", 8, "0,2,4,6,1,3,5,7");
    expect_pus(t, "socket:0", 0, "0,2,4,6");
    expect_pus(t, "numa:0", 5, "0,2,4,6,1");
    hog_topo_free(t);

    t = load("pack:1 numa:2 core:2 pu:2", NULL, NULL);
    expect_pus(t, "compact", 0, "0,2,4,6");
    expect_pus(t, "scatter", 0, "0,4,2,6");
    expect_pus(t, "scatter", 8, "0,4,2,6,1,5,3,7");
    hog_topo_free(t);

    t = load("pack:1 core:4 pu:1", NULL, NULL);
    expect_pus(t, "compact", 0, "0-3");
    expect_plan_error(t, "compact", 5, "only 4 CPUs");
    hog_topo_free(t);

    /* No core objects: every PU counts as a core. */
    t = load("pack:1 pu:4", NULL, NULL);
    hog_topo_info(t, &in);
    cr_assert_eq(in.cores, 4);
    expect_pus(t, "compact+no_smt", 0, "0-3");
    hog_topo_free(t);
}

/* ---- an uneven machine from an XML file ------------------------------------ */

Test(pool, uneven_machine_every_policy)
{
    struct hog_topo *t = load(NULL, uneven_xml(), NULL);
    expect_pus(t, "compact", 0, "0,2,4,8,14,16,18,20,22,24,26,28,30");
    expect_pus(t, "compact", 25,
               "0,2,4,8,14,16,18,20,22,24,26,28,30,"
               "1,3,5,9,15,19,21,23,25,27,29,31");
    expect_plan_error(t, "compact", 26, "only 25 CPUs");
    /* Node 1 runs out after two cores and is skipped. */
    expect_pus(t, "scatter", 0, "0,16,8,24,2,18,14,26,4,20,28,22,30");
    expect_pus(t, "scatter", 25,
               "0,16,8,24,2,18,14,26,4,20,28,22,30,"
               "1,19,9,25,3,21,15,27,5,23,29,31");
    expect_pus(t, "scatter+no_smt", 0, "0,16,8,24,2,18,14,26,4,20,28,22,30");
    expect_plan_error(t, "scatter+no_smt", 14, "only 13 cores");
    expect_pus(t, "numa:1", 0, "8,14");
    expect_pus(t, "numa:1", 4, "8,14,9,15");
    expect_pus(t, "numa:2,1", 0, "16,18,20,22,8,14");
    expect_pus(t, "socket:1", 15, "16-30:2,19-31:2");
    expect_pus(t, "cpus:16,18-19", 0, "16,18,19");
    expect_pus(t, "cpus:16,18-19+no_smt", 0, "16,18");
    expect_plan_error(t, "cpus:17", 0, "CPU 17 does not exist");
    struct hog_plan *p = plan(t, "compact", 0);
    cr_assert_eq(p->place[3].pu, 8);
    cr_assert_eq(p->place[3].core, 3);
    cr_assert_eq(p->place[3].numa, 1);
    cr_assert_eq(p->place[3].socket, 0);
    cr_assert_eq(p->place[5].core, 5);
    cr_assert_eq(p->place[5].numa, 2);
    cr_assert_eq(p->place[5].socket, 1);
    hog_plan_free(p);
    hog_topo_free(t);

    /* Restricted on top: node 1 gone, node 3 down to one core. */
    t = load(NULL, uneven_xml(), "0-5,16-25");
    expect_pus(t, "scatter", 0, "0,16,24,2,18,4,20,22");
    expect_pus(t, "compact", 10, "0,2,4,16,18,20,22,24,1,3");
    hog_topo_free(t);
}

Test(pool, numa_memory_on_a_synthetic_machine_is_plain_memory)
{
    struct hog_topo *t = load(SYN, NULL, NULL);
    size_t len = 3 * 4096 + 5;
    unsigned char *m = hog_numa_alloc(t, 2, len);
    cr_assert_not_null(m);
    memset(m, 0xA5, len);
    cr_assert_eq(m[len - 1], 0xA5);
    hog_numa_free(t, m, len);
    cr_assert_null(hog_numa_alloc(t, 0, 0));
    hog_numa_free(t, NULL, 0);
    hog_topo_free(t);
}

Test(pool, numa_memory_on_this_machine)
{
    struct hog_topo *t = load(NULL, NULL, NULL);
    struct hog_plan *p = plan(t, "compact", 1);
    size_t len = 1 << 20;
    unsigned char *m = hog_numa_alloc(t, p->place[0].numa, len);
    cr_assert_not_null(m);
    cr_assert_eq((uintptr_t)m % 4096, 0, "page-aligned");
    memset(m, 1, len);
    cr_assert_eq(m[12345], 1);
    hog_numa_free(t, m, len);
    m = hog_numa_alloc(t, -1, 100);
    cr_assert_not_null(m);
    m[99] = 7;
    hog_numa_free(t, m, 100);
    hog_plan_free(p);
    hog_topo_free(t);
}

/* ---- the command ------------------------------------------------------------ */

static void skip_without_command(void)
{
    if (access(th_bin(), X_OK) != 0)
        cr_skip_test("the hogtrain command is not built (%s); skipping",
                     th_bin());
}

Test(pool, topo_command_prints_summary_and_plan)
{
    skip_without_command();
    char out[16384];
    int rc = th_run(out, sizeof out,
                    "%s topo --synthetic '%s' --bind scatter --threads 3",
                    th_bin(), SYN);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "sockets     2\n"), "%s", out);
    cr_assert(strstr(out, "NUMA nodes  4\n"), "%s", out);
    cr_assert(strstr(out, "cores       32\n"), "%s", out);
    cr_assert(strstr(out, "PUs         64\n"), "%s", out);
    cr_assert(strstr(out, "allowed     64 PUs on 32 cores: 0-63\n"), "%s", out);
    cr_assert(strstr(out, "binding     scatter, 3 threads\n"), "%s", out);
    cr_assert(strstr(out, "thread     PU   core   NUMA socket\n"
                          "     0      0      0      0      0\n"
                          "     1     32     16      2      1\n"
                          "     2     16      8      1      0\n"),
              "%s", out);

    rc = th_run(out, sizeof out, "%s topo --xml '%s' --no-smt --allowed 0-9",
                th_bin(), uneven_xml());
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "binding     compact+no_smt, 4 threads\n"), "%s", out);
    cr_assert(strstr(out, "     3      8      3      1      0\n"), "%s", out);

    rc = th_run(out, sizeof out, "%s topo", th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "topology    this machine\n"), "%s", out);
}

Test(pool, topo_command_usage_errors_exit_2)
{
    skip_without_command();
    static const char *const bad[] = {
        "--bogus",
        "--threads",
        "--threads x",
        "--bind cpus:3-1",
        "--synthetic 'pack:2 pu:2' --xml x.xml",
        "--synthetic 'pack:2 core:2 pu:1' --threads 5",
        "extra",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char out[4096];
        int rc = th_run(out, sizeof out, "%s topo %s", th_bin(), bad[i]);
        cr_assert_eq(rc, 2, "topo %s: exit %d: %s", bad[i], rc, out);
        cr_assert(strstr(out, "hogtrain topo: "), "%s", out);
        cr_assert(strstr(out, "usage: hogtrain topo"), "%s", out);
    }
}

/* ---- threads ------------------------------------------------------------------- */

struct counts {
    _Alignas(64) unsigned long runs;
    unsigned tid_seen;
    unsigned n_seen;
};

struct run_job {
    struct counts c[8];
};

static void count_job(void *arg, unsigned tid, unsigned n)
{
    struct run_job *j = arg;
    j->c[tid].runs++;
    j->c[tid].tid_seen = tid;
    j->c[tid].n_seen = n;
}

static struct hog_pool *make_pool(struct hog_topo *t, const char *spec,
                                  unsigned threads)
{
    struct hog_plan *p = plan(t, spec, threads);
    struct hog_pool *pool = NULL;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_pool_create(p, &pool, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_pool_size(pool), p->nthreads);
    hog_plan_free(p); /* the pool keeps its own copy */
    return pool;
}

Test(threads, run_many_times_every_worker_sees_its_tid)
{
    struct hog_topo *t = load(NULL, NULL, NULL);
    struct hog_pool *pool = make_pool(t, "none+oversubscribe", 4);
    struct run_job j;
    memset(&j, 0, sizeof j);
    for (int r = 0; r < 2000; r++)
        hog_pool_run(pool, count_job, &j);
    for (unsigned i = 0; i < 4; i++) {
        cr_assert_eq(j.c[i].runs, 2000, "worker %u ran %lu times", i,
                     j.c[i].runs);
        cr_assert_eq(j.c[i].tid_seen, i);
        cr_assert_eq(j.c[i].n_seen, 4);
        cr_assert_eq(hog_pool_place(pool, i)->pu, -1);
        cr_assert(!hog_pool_pinned(pool, i));
    }
    hog_pool_destroy(pool);
    hog_topo_free(t);
}

struct barrier_job {
    struct hog_pool *pool;
    unsigned rounds;
    atomic_uint arrived;
    unsigned slot[8];   /* plain data, published only by the barrier */
    atomic_uint errors;
};

static void barrier_job(void *arg, unsigned tid, unsigned n)
{
    struct barrier_job *j = arg;
    for (unsigned r = 0; r < j->rounds; r++) {
        j->slot[tid] = r;
        atomic_fetch_add_explicit(&j->arrived, 1, memory_order_relaxed);
        hog_pool_barrier(j->pool);
        /* Everyone has arrived at round r, and their slots say r. */
        if (atomic_load_explicit(&j->arrived, memory_order_relaxed) != n * (r + 1))
            atomic_fetch_add_explicit(&j->errors, 1, memory_order_relaxed);
        for (unsigned k = 0; k < n; k++)
            if (j->slot[k] != r)
                atomic_fetch_add_explicit(&j->errors, 1, memory_order_relaxed);
        hog_pool_barrier(j->pool);
    }
}

static void check_barrier(const char *spec, unsigned threads, unsigned rounds)
{
    struct hog_topo *t = load(NULL, NULL, NULL);
    struct hog_pool *pool = make_pool(t, spec, threads);
    for (int rep = 0; rep < 3; rep++) {
        struct barrier_job j = { .pool = pool, .rounds = rounds };
        atomic_init(&j.arrived, 0);
        atomic_init(&j.errors, 0);
        hog_pool_run(pool, barrier_job, &j);
        cr_assert_eq(atomic_load(&j.errors), 0, "%s x%u: %u barrier errors",
                     spec, threads, atomic_load(&j.errors));
        cr_assert_eq(atomic_load(&j.arrived), threads * rounds);
    }
    hog_pool_destroy(pool);
    hog_topo_free(t);
}

Test(threads, barrier_holds_for_1000_rounds)
{
    check_barrier("none+oversubscribe", 4, 1000);
}

Test(threads, barrier_holds_with_pinned_oversubscribed_workers)
{
    /* Twice as many pinned workers as CPUs: spinners must give way. */
    struct hog_topo *t = load(NULL, NULL, NULL);
    struct hog_topo_info in;
    hog_topo_info(t, &in);
    hog_topo_free(t);
    check_barrier("compact+oversubscribe", 2 * in.allowed_pus > 8 ? 8 : 2 * in.allowed_pus,
                  1000);
}

Test(threads, single_worker_pool)
{
    check_barrier("compact", 1, 100);
}

struct where_job {
    struct hog_pool *pool;
    int cpu[8];
    int ncpus[8];   /* CPUs in the worker's affinity mask */
    int in_mask[8]; /* its planned PU is in the mask */
};

static void where_job(void *arg, unsigned tid, unsigned n)
{
    struct where_job *j = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    j->cpu[tid] = sched_getcpu();
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        j->ncpus[tid] = CPU_COUNT(&set);
        int pu = hog_pool_place(j->pool, tid)->pu;
        j->in_mask[tid] = pu >= 0 && CPU_ISSET(pu, &set);
    }
}

/* True when this process may set thread affinity (not a locked-down
 * container): then the pool must pin. */
static bool binding_supported(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 &&
           sched_setaffinity(0, sizeof set, &set) == 0;
}

Test(threads, workers_run_on_their_planned_pus)
{
    struct hog_topo *t = load(NULL, NULL, NULL);
    struct hog_topo_info in;
    hog_topo_info(t, &in);
    unsigned n = in.allowed_pus < 8 ? in.allowed_pus : 8;
    struct hog_pool *pool = make_pool(t, "compact", n);
    bool must_pin = binding_supported();
    for (int rep = 0; rep < 20; rep++) {
        struct where_job j = { .pool = pool };
        hog_pool_run(pool, where_job, &j);
        for (unsigned i = 0; i < n; i++) {
            const struct hog_place *pl = hog_pool_place(pool, i);
            cr_assert_geq(pl->pu, 0);
            if (must_pin)
                cr_assert(hog_pool_pinned(pool, i), "worker %u not pinned", i);
            if (!hog_pool_pinned(pool, i))
                continue;
            cr_assert_eq(j.cpu[i], pl->pu, "worker %u on CPU %d, planned %d", i,
                         j.cpu[i], pl->pu);
            cr_assert_eq(j.ncpus[i], 1);
            cr_assert(j.in_mask[i]);
        }
    }
    hog_pool_destroy(pool);
    hog_topo_free(t);
}

Test(threads, topology_follows_the_callers_affinity)
{
    cpu_set_t all, one;
    cr_assert_eq(sched_getaffinity(0, sizeof all, &all), 0);
    if (CPU_COUNT(&all) < 2 || !binding_supported())
        cr_skip_test("needs two usable CPUs and thread binding; skipping");
    int last = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all))
            last = c;
    CPU_ZERO(&one);
    CPU_SET(last, &one);
    /* As `taskset -c LAST` would. Criterion runs each test in its own
     * process, so the mask does not leak. */
    cr_assert_eq(sched_setaffinity(0, sizeof one, &one), 0);
    struct hog_topo *t = load(NULL, NULL, NULL);
    struct hog_topo_info in;
    hog_topo_info(t, &in);
    cr_assert_eq(in.allowed_pus, 1);
    char buf[32], want[32];
    snprintf(want, sizeof want, "%d", last);
    cr_assert_str_eq(hog_topo_allowed_str(t, buf, sizeof buf), want);
    expect_pus(t, "compact", 0, want);
    expect_plan_error(t, "compact", 2, "only 1 CPUs");
    struct hog_pool *pool = make_pool(t, "compact+oversubscribe", 2);
    struct where_job j = { .pool = pool };
    hog_pool_run(pool, where_job, &j);
    cr_assert_eq(j.cpu[0], last);
    cr_assert_eq(j.cpu[1], last);
    hog_pool_destroy(pool);
    cr_assert_eq(sched_setaffinity(0, sizeof all, &all), 0);
    hog_topo_free(t);
}

struct local_job {
    struct hog_pool *pool;
    unsigned char *mem[8];
    size_t len;
};

static void local_job(void *arg, unsigned tid, unsigned n)
{
    struct local_job *j = arg;
    /* Allocated and first written by the worker itself. */
    j->mem[tid] = hog_pool_alloc_local(j->pool, tid, j->len);
    if (j->mem[tid])
        memset(j->mem[tid], (int)tid + 1, j->len);
}

Test(threads, local_memory_per_worker)
{
    struct hog_topo *t = load(NULL, NULL, NULL);
    struct hog_topo_info in;
    hog_topo_info(t, &in);
    unsigned n = in.allowed_cores < 4 ? in.allowed_cores : 4;
    struct hog_pool *pool = make_pool(t, "compact", n);
    struct local_job j = { .pool = pool, .len = (1 << 20) + 3 };
    hog_pool_run(pool, local_job, &j);
    for (unsigned i = 0; i < n; i++) {
        cr_assert_not_null(j.mem[i]);
        cr_assert_eq(j.mem[i][0], i + 1);
        cr_assert_eq(j.mem[i][j.len - 1], i + 1);
        hog_pool_free_local(pool, j.mem[i], j.len);
    }
    hog_pool_destroy(pool);
    hog_topo_free(t);
}

Test(threads, create_and_destroy_join_cleanly)
{
    struct hog_topo *t = load(NULL, NULL, NULL);
    hog_pool_destroy(NULL);
    for (int k = 0; k < 50; k++) {
        struct hog_pool *pool = make_pool(t, "none+oversubscribe", 3);
        struct run_job j;
        memset(&j, 0, sizeof j);
        for (int r = 0; r < k % 4; r++)
            hog_pool_run(pool, count_job, &j);
        hog_pool_destroy(pool);
        for (unsigned i = 0; i < 3; i++)
            cr_assert_eq(j.c[i].runs, (unsigned long)(k % 4));
    }
    hog_topo_free(t);
}

Test(threads, pool_on_another_machines_plan_runs_unpinned_with_a_warning,
     .init = cr_redirect_stderr)
{
    /* A synthetic topology cannot bind: one warning line, not an error. */
    struct hog_topo *t = load("pack:1 core:4 pu:1", NULL, NULL);
    struct hog_pool *pool = make_pool(t, "compact", 4);
    struct run_job j;
    memset(&j, 0, sizeof j);
    hog_pool_run(pool, count_job, &j);
    for (unsigned i = 0; i < 4; i++) {
        cr_assert(!hog_pool_pinned(pool, i));
        cr_assert_eq(hog_pool_place(pool, i)->pu, (int)i);
        cr_assert_eq(j.c[i].runs, 1);
    }
    hog_pool_destroy(pool);
    hog_topo_free(t);
    fflush(stderr);
    char text[1024] = "";
    size_t len = fread(text, 1, sizeof text - 1, cr_get_redirected_stderr());
    text[len] = 0;
    cr_assert(strstr(text, "hogtrain: warning: "), "stderr: %s", text);
    cr_assert(strstr(text, "unpinned"), "stderr: %s", text);
    cr_assert_eq(strchr(text, '\n'), text + len - 1, "one line: %s", text);
}

/* A pool's start loads no hwloc plugin (I/O discovery, libxml2 and what
 * they link cost 13 ms of CPU each time), and hwloc's own XML reader still
 * reads a topology saved by lstopo. */
Test(pool, the_command_starts_pools_without_hwloc_plugins)
{
    char out[4096], dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    cr_assert_eq(th_run(out, sizeof out, "'%s' gen --rows 2000 --features 50 "
                        "-o '%s/g.svm' -q", th_bin(), dir), 0, "%s", out);
    cr_assert_eq(th_run(out, sizeof out, "unset HWLOC_PLUGINS_PATH; "
                        "LD_DEBUG=files '%s' train -q --algo newton --threads 2 "
                        "'%s/g.svm' -o '%s/g.hgm' 2>&1 | grep -c '/hwloc_'",
                        th_bin(), dir, dir), 1, "plugins loaded: %s", out);
    cr_assert_str_eq(out, "0\n");
    cr_assert_eq(th_run(out, sizeof out, "'%s' topo --xml "
                        "tests/data/topo-uneven.xml", th_bin()), 0, "%s", out);
    cr_assert_not_null(strstr(out, "cores       13\n"), "%s", out);
    cr_assert_not_null(strstr(out, "PUs         25\n"), "%s", out);
}
