/*
 * The GPU plugin's loader under ThreadSanitizer (plain program: Criterion
 * cannot start under TSan; see tests/tsan_pool.c). Threads make their first
 * GPU call at once: the plugin is looked for and loaded once
 * (pthread_once), and every thread reads the same sentence. The plugin
 * named is the C library (found through gnu_get_libc_version, which no
 * sanitizer intercepts), a real shared object without the table, so that
 * the whole path (dlopen, dlsym, the sentence) runs in every build.
 */
#include "core/core.h"
#include "gpu/gpu.h"

#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c)                                                              \
    do {                                                                      \
        if (!(c)) {                                                           \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);      \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

#define NT 4

struct arg {
    pthread_barrier_t *go;
    hog_status st;
    hog_err err;
};

static void *first_call(void *p)
{
    struct arg *a = p;
    struct hog_gpu_info g[1];
    unsigned n = 0;
    pthread_barrier_wait(a->go);
    a->st = hog_gpu_list(g, 1, &n, &a->err);
    return NULL;
}

int main(void)
{
    Dl_info info;
    CHECK(dladdr((const void *)&gnu_get_libc_version, &info) &&
          info.dli_fname);
    CHECK(setenv("HOGTRAIN_CUDA_PLUGIN", info.dli_fname, 1) == 0);
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, NT);
    pthread_t th[NT];
    struct arg a[NT];
    for (int i = 0; i < NT; i++) {
        a[i] = (struct arg){ .go = &go, .st = HOG_OK };
        CHECK(pthread_create(&th[i], NULL, first_call, &a[i]) == 0);
    }
    for (int i = 0; i < NT; i++)
        CHECK(pthread_join(th[i], NULL) == 0);
    pthread_barrier_destroy(&go);
    for (int i = 0; i < NT; i++) {
        CHECK(a[i].st == HOG_ENOTSUP);
        CHECK(strstr(a[i].err.msg, "is not a hogtrain plugin"));
        CHECK(strcmp(a[i].err.msg, a[0].err.msg) == 0);
    }
    printf("tsan_gpu_plugin: %d threads, one load: %s\n", NT, a[0].err.msg);
    return 0;
}
