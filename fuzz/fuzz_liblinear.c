/*
 * libFuzzer harness: the LIBLINEAR text model loader (src/io/model.c).
 * Inputs that do not start with "solver_type" get it prepended, so that
 * every execution reaches the text reader.
 */
#include "fuzz_common.h"

#include "io/io.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t *buf;
    static size_t cap;
    static const char pre[] = "solver_type";
    const size_t np = sizeof pre - 1;
    const uint8_t *in = data;
    if (size < np || memcmp(data, pre, np) != 0) {
        if (cap < size + np) {
            free(buf);
            cap = size + np;
            buf = malloc(cap);
            if (!buf)
                abort();
        }
        memcpy(buf, pre, np);
        memcpy(buf + np, data, size);
        in = buf;
        size += np;
    }
    hog_model *m = NULL;
    hog_err err;
    if (hog_model_load(hog_fuzz_file(in, size), &m, &err) == HOG_OK) {
        uint64_t n = m->n_features + (m->bias != 0.0);
        const float *w = hog_model_weights(m);
        volatile float sum = 0;
        for (uint64_t j = 0; j < n; j++)
            sum += w[j];
        (void)sum;
        hog_model_free(m);
    }
    return 0;
}
