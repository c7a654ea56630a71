/*
 * parse_bench: LIBSVM parse and .hgb load throughput.
 *
 *   parse_bench FILE [THREADS...]
 *
 * For each thread count: loads FILE (text) from memory with the parser,
 * best of 7, and prints MB/s of text. Then writes FILE.hgb beside a temp
 * name and times hog_data_load on it.
 * Build: cc -O2 -Iinclude -Isrc bench/parse_bench.c build/libhogtrain.a -lm -pthread
 */
#include "io/io.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE [THREADS...]\n", argv[0]);
        return 2;
    }
    const char *path = argv[1];
    int fd = open(path, O_RDONLY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        perror(path);
        return 1;
    }
    size_t len = (size_t)sb.st_size;
    const char *buf = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (buf == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    hog_err err;
    hog_data *keep = NULL;
    int nt = argc > 2 ? argc - 2 : 1;
    for (int a = 0; a < nt; a++) {
        unsigned t = argc > 2 ? (unsigned)atoi(argv[a + 2]) : 1;
        hog_load_opts o;
        hog_load_opts_init(&o);
        o.threads = t;
        double best = 1e30;
        for (int rep = 0; rep < 7; rep++) {
            hog_data *d;
            double t0 = hog_now();
            hog_status st = hog_parse_svm_slices(buf, len, path, &o, t, &d, &err);
            double dt = hog_now() - t0;
            if (st != HOG_OK) {
                fprintf(stderr, "%s\n", err.msg);
                return 1;
            }
            best = dt < best ? dt : best;
            if (!keep)
                keep = d;
            else
                hog_data_free(d);
        }
        printf("parse %s threads=%u rows=%llu nnz=%llu: %.3f s, %.1f MB/s\n", path, t,
               (unsigned long long)hog_data_rows(keep),
               (unsigned long long)hog_data_nnz(keep), best, len / best / 1e6);
    }
    char hgb[4096];
    snprintf(hgb, sizeof hgb, "%s.bench.hgb", path);
    if (hog_hgb_save(keep, hgb, 0, 0, &err) != HOG_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    struct stat hb;
    stat(hgb, &hb);
    for (int a = 0; a < nt; a++) {
        unsigned t = argc > 2 ? (unsigned)atoi(argv[a + 2]) : 1;
        hog_load_opts o;
        hog_load_opts_init(&o);
        o.threads = t;
        double best = 1e30;
        for (int rep = 0; rep < 5; rep++) {
            hog_data *d;
            double t0 = hog_now();
            if (hog_data_load(hgb, &o, &d, &err) != HOG_OK) {
                fprintf(stderr, "%s\n", err.msg);
                return 1;
            }
            double dt = hog_now() - t0;
            best = dt < best ? dt : best;
            hog_data_free(d);
        }
        printf("hgb load threads=%u: %lld bytes, %.4f s, %.1f MB/s\n", t,
               (long long)hb.st_size, best, hb.st_size / best / 1e6);
    }
    unlink(hgb);
    hog_data_free(keep);
    return 0;
}
