/*
 * libFuzzer harness: the training checkpoint reader (src/io/checkpoint.c).
 * Each input is loaded as it is and "resealed" (its header CRC and its
 * data CRC recomputed), so that the checks behind the CRCs meet hostile
 * sizes, flags and positions too. A loaded checkpoint must hold readable
 * arrays of the declared length.
 */
#include "fuzz_common.h"

#include "io/io.h"

#include <string.h>

static void load(const uint8_t *in, size_t size)
{
    struct hog_ckpt c;
    hog_err err;
    if (hog_ckpt_load(hog_fuzz_file(in, size), &c, &err) != HOG_OK)
        return;
    const struct hog_train_state *s = &c.st;
    volatile float sum = 0;
    for (uint64_t j = 0; j < s->n_weights; j++) {
        sum += s->w[j];
        if (s->w_lazy) /* or FTRL's z */
            sum += s->w_lazy[j];
        if (s->adagrad_g2) /* or FTRL's sqrt(n) */
            sum += s->adagrad_g2[j];
        if (s->stamp)
            sum += (float)s->stamp[j];
    }
    (void)sum;
    hog_ckpt_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t *buf;
    static size_t cap;
    load(data, size);
    if (size < 256)
        return 0;
    if (cap < size) {
        free(buf);
        cap = size;
        buf = malloc(cap);
        if (!buf)
            abort();
    }
    memcpy(buf, data, size);
    uint32_t acrc = hog_crc32c(0, buf + 256, size - 256);
    memcpy(buf + 204, &acrc, 4);
    uint32_t hcrc = hog_crc32c(0, buf, 252);
    memcpy(buf + 252, &hcrc, 4);
    load(buf, size);
    return 0;
}
