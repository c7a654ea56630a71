/* load_bench FILE THREADS [REPEAT]: loads FILE (LIBSVM text or .hgb) with
 * hog_data_load REPEAT times and, before each load, reads it the way `cat`
 * does (read() into one 128 KiB buffer, to its end), so that both see the
 * page cache in the same state. Prints one CSV line:
 *   file,threads,bytes,best_seconds,mb_per_s,rows,nnz,
 *   median_seconds,cat_median_seconds,ratio
 * best_seconds and mb_per_s: the fastest load (the machines are shared and
 * noisy); ratio: median cat-like read time / median load time (1.0: the
 * load keeps pace with copying the file out of the page cache). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* What `cat FILE > /dev/null` does, less its process start: seconds. */
static double cat_like(const char *path, char *buf, size_t cap)
{
    double t0 = hog_now();
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    ssize_t k;
    while ((k = read(fd, buf, cap)) > 0)
        ;
    close(fd);
    return k < 0 ? -1 : hog_now() - t0;
}

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
    if (repeat < 1)
        repeat = 1;
    double *tl = calloc((size_t)repeat, sizeof *tl);
    double *tc = calloc((size_t)repeat, sizeof *tc);
    size_t cap = 128 << 10;
    char *buf = malloc(cap);
    if (!tl || !tc || !buf)
        return 1;
    double best = 1e300;
    uint64_t rows = 0, nnz = 0;
    for (int r = 0; r < repeat; r++) {
        tc[r] = cat_like(argv[1], buf, cap);
        if (tc[r] < 0) {
            perror(argv[1]);
            return 1;
        }
        hog_err err;
        hog_data *d;
        double t0 = hog_now();
        if (hog_data_load(argv[1], &o, &d, &err) != HOG_OK) {
            fprintf(stderr, "load_bench: %s\n", err.msg);
            return 1;
        }
        double t = hog_now() - t0;
        tl[r] = t;
        if (t < best)
            best = t;
        rows = hog_data_rows(d);
        nnz = hog_data_nnz(d);
        hog_data_free(d);
    }
    double ml = median(tl, repeat), mc = median(tc, repeat);
    printf("%s,%u,%lld,%.6f,%.1f,%llu,%llu,%.6f,%.6f,%.3f\n", argv[1], o.threads,
           (long long)st.st_size, best, (double)st.st_size / best / 1e6,
           (unsigned long long)rows, (unsigned long long)nnz, ml, mc, mc / ml);
    free(tl), free(tc), free(buf);
    return 0;
}
