/* stream_read FILE.hgb BACKEND DIRECT BUDGET_MIB [PASSES]: the chunk
 * streamer alone (no training): reads every chunk of FILE PASSES times
 * through the ring, checking each chunk's CRC as it arrives, and prints one
 * CSV line:
 *   file,backend,direct,budget_mib,slots,bytes,seconds,mb_per_s
 * BACKEND is uring or pread; DIRECT is on or off. MB/s counts 10^6 bytes of
 * chunks handed out, like dd. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: stream_read FILE.hgb uring|pread on|off "
                        "BUDGET_MIB [PASSES]\n");
        return 2;
    }
    struct hog_stream_opts o;
    hog_stream_opts_init(&o);
    o.io = strcmp(argv[2], "pread") == 0 ? HOG_IO_PREAD : HOG_IO_URING;
    o.direct = strcmp(argv[3], "on") == 0 ? 1 : 0;
    o.mem_budget = (uint64_t)atoll(argv[4]) << 20;
    int passes = argc > 5 ? atoi(argv[5]) : 1;
    hog_stream *s;
    hog_err err;
    if (hog_stream_open(argv[1], &o, &s, &err) != HOG_OK) {
        fprintf(stderr, "stream_read: %s\n", err.msg);
        return 1;
    }
    const struct hog_hgb_info *in = hog_stream_info(s);
    uint64_t n = in->n_chunks, *seq = malloc(n * sizeof *seq);
    for (uint64_t k = 0; k < n; k++)
        seq[k] = k;
    double t0 = hog_now();
    uint64_t bytes = 0;
    for (int p = 0; p < passes; p++) {
        if (hog_stream_push(s, seq, n, &err) != HOG_OK)
            goto fail;
        for (uint64_t k = 0; k < n; k++) {
            struct hog_stream_chunk c;
            if (hog_stream_next(s, &c, &err) != HOG_OK)
                goto fail;
            bytes += in->chunks[c.k].bytes;
            hog_stream_release(s, c.slot);
        }
    }
    double secs = hog_now() - t0;
    hog_stream_stats st;
    hog_stream_get_stats(s, &st);
    printf("%s,%s,%s,%s,%u,%llu,%.4f,%.1f\n", argv[1], st.backend,
           st.direct ? "on" : "off", argv[4], st.slots,
           (unsigned long long)bytes, secs, (double)bytes / secs / 1e6);
    hog_stream_close(s);
    free(seq);
    return 0;
fail:
    fprintf(stderr, "stream_read: %s\n", err.msg);
    hog_stream_close(s);
    free(seq);
    return 1;
}
