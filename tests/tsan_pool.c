/*
 * The pool under ThreadSanitizer without Criterion: Criterion 2.4 cannot
 * start under TSan (its inheritable arena wants address space that TSan
 * reserves: "Could not initialize inheritable arena", Snaipe/Criterion#274),
 * so `make tsan` cannot run tests/test_pool.c's threads suite. Build and run:
 *
 *   make BUILD=build-tsan CFLAGS="-O1 -g -fsanitize=thread" \
 *        LDFLAGS="-fsanitize=thread" build-tsan/libhogtrain.a
 *   cc -std=c11 -D_GNU_SOURCE -O1 -g -fsanitize=thread -Isrc -Iinclude \
 *      tests/tsan_pool.c build-tsan/libhogtrain.a $(pkg-config --libs hwloc) \
 *      -pthread -lm -o build-tsan/tsan_pool
 *   TSAN_OPTIONS=halt_on_error=1 build-tsan/tsan_pool
 *
 * It runs jobs, barriers over plain data, local allocations and
 * create/destroy cycles, and exits non-zero on a wrong result.
 */
#include "pool/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXT 16
#define LOCAL_BYTES 100000

#define CHECK(c)                                                              \
    do {                                                                      \
        if (!(c)) {                                                           \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);      \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

struct job {
    struct hog_pool *pool;
    unsigned rounds;
    atomic_uint arrived;
    atomic_uint errors;
    unsigned slot[MAXT];        /* plain data, published by the barrier */
    unsigned long runs[MAXT];
    unsigned char *mem[MAXT];
};

static void barrier_job(void *arg, unsigned tid, unsigned n)
{
    struct job *j = arg;
    j->runs[tid]++;
    for (unsigned r = 0; r < j->rounds; r++) {
        j->slot[tid] = r;
        atomic_fetch_add_explicit(&j->arrived, 1, memory_order_relaxed);
        hog_pool_barrier(j->pool);
        if (atomic_load_explicit(&j->arrived, memory_order_relaxed) != n * (r + 1))
            atomic_fetch_add(&j->errors, 1);
        for (unsigned k = 0; k < n; k++)
            if (j->slot[k] != r)
                atomic_fetch_add(&j->errors, 1);
        hog_pool_barrier(j->pool);
    }
}

static void local_job(void *arg, unsigned tid, unsigned n)
{
    struct job *j = arg;
    j->mem[tid] = hog_pool_alloc_local(j->pool, tid, LOCAL_BYTES);
    if (j->mem[tid])
        memset(j->mem[tid], (int)tid, LOCAL_BYTES);
}

static void check(const char *spec, unsigned threads, unsigned runs,
                  unsigned rounds)
{
    hog_err err;
    struct hog_topo *t;
    struct hog_topo_info info;
    struct hog_bind b;
    struct hog_plan *p;
    struct hog_pool *pool;
    CHECK(hog_topo_load(&t, NULL, NULL, NULL, &err) == HOG_OK);
    hog_topo_info(t, &info);
    if (threads == 0)
        threads = info.allowed_cores < MAXT ? info.allowed_cores : MAXT;
    CHECK(hog_bind_parse(spec, &b, &err) == HOG_OK);
    CHECK(hog_topo_plan(t, &b, threads, &p, &err) == HOG_OK);
    CHECK(hog_pool_create(p, &pool, &err) == HOG_OK);
    hog_plan_free(p);
    struct job *j = calloc(1, sizeof *j);
    CHECK(j);
    j->pool = pool;
    j->rounds = rounds;
    for (unsigned r = 0; r < runs; r++) {
        atomic_store(&j->arrived, 0);
        hog_pool_run(pool, barrier_job, j);
        CHECK(atomic_load(&j->errors) == 0);
        CHECK(atomic_load(&j->arrived) == threads * rounds);
    }
    for (unsigned i = 0; i < threads; i++)
        CHECK(j->runs[i] == runs);
    hog_pool_run(pool, local_job, j);
    for (unsigned i = 0; i < threads; i++) {
        CHECK(j->mem[i] && j->mem[i][LOCAL_BYTES - 1] == (unsigned char)i);
        hog_pool_free_local(pool, j->mem[i], LOCAL_BYTES);
    }
    hog_pool_destroy(pool);
    free(j);
    hog_topo_free(t);
    printf("ok %s x%u\n", spec, threads);
}

int main(void)
{
    check("none+oversubscribe", 4, 200, 50);
    check("compact", 0, 200, 50);
    check("compact+oversubscribe", 4, 3, 1000);
    check("scatter", 1, 100, 10);
    for (unsigned k = 0; k < 30; k++)
        check("none+oversubscribe", 3, k % 3, 5);
    return 0;
}
