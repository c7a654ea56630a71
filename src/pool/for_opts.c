/*
 * The pool an algorithm runs on, from its options: this machine's
 * topology, a binding plan for the threads asked for, and the pinned pool
 * started from it. Hogwild!, Cyclades and coordinate descent all start
 * theirs here, so that a wrong --bind or too many threads read the same
 * in each (the sentences are hog_bind_parse's, hog_topo_load's (through
 * hog_topo_machine, which loads it once per process),
 * hog_topo_plan's and hog_pool_create's).
 */
#include "pool/pool.h"

hog_status hog_pool_for_opts(const hog_train_opts *o, unsigned threads,
                             enum hog_pool_binding how,
                             struct hog_topo **topo, struct hog_pool **pool,
                             hog_err *err)
{
    *topo = NULL;
    *pool = NULL;
    struct hog_bind b;
    hog_status st = HOG_OK;
    if (how == HOG_POOL_BIND_OPTS) {
        if ((st = hog_bind_parse(o->bind, &b, err)) != HOG_OK)
            return st;
        b.no_smt |= o->no_smt != 0;
        b.oversubscribe |= o->oversubscribe != 0;
    } else {
        hog_bind_init(&b);
        b.oversubscribe = true;
    }
    if ((st = hog_topo_machine(topo, err)) != HOG_OK)
        return st;
    struct hog_plan *plan = NULL;
    if ((st = hog_topo_plan(*topo, &b, threads, &plan, err)) == HOG_OK)
        st = hog_pool_create(plan, pool, err);
    hog_plan_free(plan); /* the pool keeps its places */
    if (st != HOG_OK) {
        hog_pool_destroy(*pool);
        hog_topo_free(*topo);
        *pool = NULL;
        *topo = NULL;
    }
    return st;
}
