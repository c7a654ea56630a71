/* load_bench FILE THREADS [REPEAT]: loads FILE (LIBSVM text or .hgb) with
 * hog_data_load REPEAT times and prints one CSV line:
 *   file,threads,bytes,best_seconds,mb_per_s,rows,nnz
 * The best of the repeats is taken (the machines are shared and noisy). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "core/core.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: load_bench FILE THREADS [REPEAT]\n");
        return 2;
    }
    struct stat st;
    if (stat(argv[1], &st) != 0) {
        perror(argv[1]);
        return 1;
    }
    hog_load_opts o;
    hog_load_opts_init(&o);
    o.threads = (unsigned)atoi(argv[2]);
    int repeat = argc > 3 ? atoi(argv[3]) : 3;
    double best = 1e300;
    uint64_t rows = 0, nnz = 0;
    for (int r = 0; r < repeat; r++) {
        hog_err err;
        hog_data *d;
        double t0 = hog_now();
        if (hog_data_load(argv[1], &o, &d, &err) != HOG_OK) {
            fprintf(stderr, "load_bench: %s\n", err.msg);
            return 1;
        }
        double t = hog_now() - t0;
        if (t < best)
            best = t;
        rows = hog_data_rows(d);
        nnz = hog_data_nnz(d);
        hog_data_free(d);
    }
    printf("%s,%u,%lld,%.6f,%.1f,%llu,%llu\n", argv[1], o.threads,
           (long long)st.st_size, best, (double)st.st_size / best / 1e6,
           (unsigned long long)rows, (unsigned long long)nnz);
    return 0;
}
