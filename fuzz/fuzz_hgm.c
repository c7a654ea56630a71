/*
 * libFuzzer harness: the .hgm binary model loader (src/io/model.c). Inputs
 * that do not start with the .hgm magic get it prepended, so that every
 * execution reaches the .hgm reader.
 */
#include "fuzz_common.h"

#include "io/io.h"

#include <string.h>

/* A sparse version 4 file declares its dense weights, which it does not
 * hold: the loader allocates them when the machine has the memory (and
 * says so when it has not). Declarations above 2^24 weights are skipped,
 * so that libFuzzer's malloc limit reports only real findings. */
static int declares_too_much(const uint8_t *in, size_t size)
{
    if (size < 104 || in[8] != 4 || !(in[96] & 1))
        return 0;
    uint64_t nw = 0;
    for (int i = 7; i >= 0; i--)
        nw = nw << 8 | in[72 + i];
    return nw > (UINT64_C(1) << 24);
}

static void load(const uint8_t *in, size_t size)
{
    hog_model *m = NULL;
    hog_err err;
    if (declares_too_much(in, size))
        return;
    if (hog_model_load(hog_fuzz_file(in, size), &m, &err) == HOG_OK) {
        uint64_t n = m->n_features + (m->bias != 0.0);
        const float *w = hog_model_weights(m);
        volatile float sum = 0;
        for (uint64_t j = 0; j < n; j++) /* every weight readable */
            sum += w[j];
        (void)sum;
        hog_model_free(m);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t *buf;
    static size_t cap;
    const uint8_t *in = data;
    if (size < 8 || memcmp(data, HOG_HGM_MAGIC, 8) != 0) {
        if (cap < size + 8) {
            free(buf);
            cap = size + 8;
            buf = malloc(cap);
            if (!buf)
                abort();
        }
        memcpy(buf, HOG_HGM_MAGIC, 8);
        memcpy(buf + 8, data, size);
        in = buf;
        size += 8;
    }
    load(in, size);
    if (size < 4)
        return 0;
    if (in != buf) {
        if (cap < size) {
            free(buf);
            cap = size;
            buf = malloc(cap);
            if (!buf)
                abort();
        }
        memcpy(buf, in, size);
    }
    uint32_t crc = hog_crc32c(0, buf, size - 4);
    memcpy(buf + size - 4, &crc, 4);
    load(buf, size);
    return 0;
}
