/*
 * Optional backends as plugins: a shared object found next to the library
 * (or named by an environment variable), dlopen()ed on first use, that
 * exports one table of functions. The caller runs hog_plugin_load() once
 * (pthread_once) and forwards through the table; when it is NULL, every
 * call answers HOG_ENOTSUP with the sentence in why. Nothing here knows
 * CUDA: the same loader can serve another backend (MPI) with its own spec.
 */
#ifndef HOG_CORE_PLUGIN_H
#define HOG_CORE_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>

struct hog_plugin_spec {
    const char *what;   /* opens the sentence: "GPU support" */
    const char *file;   /* file name searched for: "libhogtrain-cuda.so" */
    const char *env;    /* variable naming the plugin's path, tried alone */
    const char *symbol; /* the table's symbol */
    /* Remedy when the plugin is there but cannot be loaded (a library it
     * needs is missing): "install the CUDA runtime ... or rebuild with NVCC=". */
    const char *hint_load;
    /* Checks the table (its ABI version); false with a reason in why. */
    bool (*check)(const void *table, char *why, size_t len);
};

struct hog_plugin {
    const void *table; /* NULL when not loaded */
    char path[1024];   /* the file loaded, or the one that failed */
    char why[1024];    /* the sentence when table is NULL (HOG_ERR_MAX) */
};

/* Searches, loads and checks the plugin: the path in $env when it is set
 * and not empty (alone), else file in the folder of the object holding
 * libhogtrain (the shared library, or the program linked with the static
 * one), that folder's hogtrain/, ../lib/hogtrain/ beside it (an install:
 * bin/ and lib/), and its parent (a build tree's build/bench/). Never
 * unloads. Not thread-safe by itself: call it under pthread_once. */
void hog_plugin_load(const struct hog_plugin_spec *s, struct hog_plugin *p);

#endif
