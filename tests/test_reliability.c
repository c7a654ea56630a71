/*
 * Reliability checks that are not about one format (docs/RELIABILITY.md):
 * every input in the fuzzing corpora (fuzz/corpus/, seeds and past
 * findings) replayed through its loader in the ordinary test build (so
 * that make asan and make ubsan replay them too, without libFuzzer), and
 * data larger than the address-space limit, models larger than memory,
 * and the memory a text load holds besides its data.
 */
#include <criterion/criterion.h>

#include "helpers.h"
#include "io/io.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s", path);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    unsigned char *b = malloc(*len + 1);
    cr_assert(b && fread(b, 1, *len, f) == *len);
    fclose(f);
    return b;
}

/* Calls fn on every file of fuzz/corpus/NAME; returns how many. */
static unsigned each_input(const char *name,
                           void (*fn)(const char *path, const unsigned char *b,
                                      size_t len))
{
    char dir[512];
    snprintf(dir, sizeof dir, "fuzz/corpus/%s", name);
    DIR *d = opendir(dir);
    if (!d)
        cr_skip_test("%s not found (run the tests from the source tree)", dir);
    unsigned n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len;
        unsigned char *b = slurp(path, &len);
        fn(path, b, len);
        free(b);
        n++;
    }
    closedir(d);
    return n;
}

static void svm_one(const char *path, const unsigned char *b, size_t len)
{
    if (len == 0)
        return;
    hog_load_opts o;
    hog_load_opts_init(&o);
    o.zero_based = b[0] & 1;
    o.threads = 1;
    o.n_features = (b[0] & 2) ? 1000 : 0;
    o.hash_bits = (b[0] & 8) ? 3 : 0; /* as fuzz/fuzz_svm.c */
    o.format = (b[0] & 16) ? HOG_FORMAT_VW : HOG_FORMAT_AUTO;
    hog_data *d = NULL;
    hog_err err;
    hog_status st = hog_parse_svm_slices((const char *)b + 1, len - 1, path,
                                         &o, (b[0] & 4) ? 3 : 1, &d, &err);
    cr_assert(st == HOG_OK || !d, "%s: data left behind on error", path);
    if (st == HOG_OK)
        cr_assert_eq(d->m.off[d->m.rows], d->m.nnz, "%s", path);
    hog_data_free(d);
}

static void hgb_one(const char *path, const unsigned char *b, size_t len)
{
    (void)b, (void)len;
    hog_load_opts o;
    hog_load_opts_init(&o);
    o.threads = 1;
    hog_data *d = NULL;
    hog_err err;
    if (hog_hgb_load(path, &o, &d, &err) == HOG_OK)
        hog_data_free(d);
    struct hog_hgb_info info;
    if (hog_hgb_open_info(path, &info, &err) == HOG_OK)
        hog_hgb_info_close(&info);
}

static void model_one(const char *path, const unsigned char *b, size_t len)
{
    (void)b, (void)len;
    hog_model *m = NULL;
    hog_err err;
    if (hog_model_load(path, &m, &err) == HOG_OK)
        hog_model_free(m);
}

static void ckpt_one(const char *path, const unsigned char *b, size_t len)
{
    (void)b, (void)len;
    struct hog_ckpt c;
    hog_err err;
    if (hog_ckpt_load(path, &c, &err) == HOG_OK)
        hog_ckpt_free(&c);
}

/* fuzz_compressed's input less its mode byte: a compressed file, loaded. */
static void compressed_one(const char *path, const unsigned char *b, size_t len)
{
    if (len < 2)
        return;
    static char dir[1024];
    if (!dir[0])
        cr_assert(th_tmpdir(dir, sizeof dir));
    const char *f = th_write(dir, "in", (const char *)b + 1, len - 1);
    hog_data *d = NULL;
    hog_err err;
    hog_status st = hog_data_load(f, NULL, &d, &err);
    cr_assert(st == HOG_OK || !d, "%s: data left behind on error", path);
    hog_data_free(d);
}

Test(reliability, fuzz_corpora_replay_without_a_crash)
{
    cr_assert_gt(each_input("fuzz_compressed", compressed_one), 0);
    cr_assert_gt(each_input("fuzz_svm", svm_one), 0);
    cr_assert_gt(each_input("fuzz_hgb", hgb_one), 0);
    cr_assert_gt(each_input("fuzz_hgm", model_one), 0);
    cr_assert_gt(each_input("fuzz_liblinear", model_one), 0);
    cr_assert_gt(each_input("fuzz_ckpt", ckpt_one), 0);
}

/* OpenBLAS starts a pool of threads when it is loaded (one per other CPU,
 * each spinning at first), which hogtrain never uses: the command shuts it
 * down before its work. Seen while the command waits to open its input (a
 * FIFO with no writer yet, so it blocks in openat), it has as many threads
 * as the same command with OPENBLAS_NUM_THREADS=1, the control, where the
 * pool is never started; without the shutdown it had one per other CPU
 * more. */
Test(reliability, openblas_pool_is_down_before_the_command_starts_work,
     .timeout = 60)
{
#if defined(__x86_64__)
    const int openat = 257;
#elif defined(__aarch64__)
    const int openat = 56;
#else
    const int openat = -1;
    cr_skip_test("no syscall number for openat on this architecture");
#endif
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        cr_skip_test("one CPU: OpenBLAS starts no pool to shut down");
    char dir[1024], out[4096];
    cr_assert(th_tmpdir(dir, sizeof dir));
    int rc = th_run(
        out, sizeof out,
        "f='%s/in'; mkfifo \"$f\" || exit 3; "
        "for e in OPENBLAS_UNSET=1 OPENBLAS_NUM_THREADS=1; do "
        "  env -u OPENBLAS_NUM_THREADS $e '%s' train -q \"$f\" -o '%s/m' & "
        "  p=$!; i=0; "
        "  while [ \"$(cut -d' ' -f1 /proc/$p/syscall 2>/dev/null)\" != %d ]"
        "  && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; "
        "  [ $i -lt 400 ] && n=$(awk '/^Threads:/ {print $2}' "
        "/proc/$p/status) || n=unseen; "
        "  : > \"$f\"; wait $p; echo \"threads $n\"; "
        "done",
        dir, th_bin(), dir, openat);
    cr_assert_eq(rc, 0, "%s", out);
    if (strstr(out, "unseen"))
        cr_skip_test("the command's syscall cannot be read in /proc here "
                     "(ptrace restrictions): %s", out);
    unsigned with = 0, control = 0;
    const char *a = strstr(out, "threads ");
    cr_assert(a && sscanf(a, "threads %u", &with) == 1, "%s", out);
    const char *b = strstr(a + 1, "threads ");
    cr_assert(b && sscanf(b, "threads %u", &control) == 1, "%s", out);
    cr_assert_geq(control, 1u, "%s", out);
    cr_assert_eq(with, control,
                 "%u threads before the command's work, %u with "
                 "OPENBLAS_NUM_THREADS=1: OpenBLAS's pool is still up (%s)",
                 with, control, out);
}

/* Data that does not fit under ulimit -v: exit 1 and a sentence with the
 * size needed and the remedy, not a crash. */
Test(reliability, data_over_the_address_space_limit_says_what_to_do,
     .timeout = 120)
{
#ifdef TH_ASAN
    cr_skip_test("AddressSanitizer reserves terabytes of address space: "
                 "ulimit -v cannot be tested under it");
#endif
    char dir[1024], out[4096];
    cr_assert(th_tmpdir(dir, sizeof dir));
    int rc = th_run(out, sizeof out,
                    "'%s' gen --rows 80000 --features 10000 --nnz 50 -q -o "
                    "'%s/big.svm' && '%s' gen --rows 100 --features 100 "
                    "--nnz 5 -q -o '%s/small.svm'",
                    th_bin(), dir, th_bin(), dir);
    cr_assert_eq(rc, 0, "%s", out);
    /* the smallest limit (to 10 MB) that lets a small set through: what
     * the command itself needs (with CUDA's libraries mapped, hundreds of
     * MB); the big set needs ~70 MB more */
    unsigned lo = 0, hi = 30000;
    while (th_run(out, sizeof out, "ulimit -v %u && '%s' train -q --epochs 1 "
                  "'%s/small.svm'", hi, th_bin(), dir) != 0) {
        cr_assert_lt(hi, 16000000, "small data fails under any limit: %s",
                     out);
        lo = hi;
        hi *= 2;
    }
    while (hi - lo > 10000) {
        unsigned mid = lo + (hi - lo) / 2;
        if (th_run(out, sizeof out, "ulimit -v %u && '%s' train -q --epochs 1 "
                   "'%s/small.svm'", mid, th_bin(), dir) == 0)
            hi = mid;
        else
            lo = mid;
    }
    unsigned lim = hi;
    rc = th_run(out, sizeof out, "ulimit -v %u && '%s' train -q --epochs 1 "
                "'%s/big.svm'", lim, th_bin(), dir);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "needs about") && strstr(out, "MiB") &&
                  strstr(out, "ulimit -v") && strstr(out, "--stream"),
              "%s", out);
    rc = th_run(out, sizeof out, "'%s' convert -q '%s/big.svm' '%s/big.hgb' "
                "&& ulimit -v %u && '%s' train -q --epochs 1 '%s/big.hgb'",
                th_bin(), dir, dir, lim, th_bin(), dir);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "needs about") && strstr(out, "--stream"), "%s",
              out);
}

/* A feature index of 4e9 makes a dense model of 16 GB of weights before
 * any optimizer state. The command refuses it at once with the size needed
 * and the memory there is, not killed by the kernel partway through. The
 * child runs under ulimit -v 4 GiB, so that a missing check cannot take
 * the machine's memory. */
Test(reliability, a_model_larger_than_memory_is_refused_with_a_sentence,
     .timeout = 60)
{
#ifdef TH_ASAN
    cr_skip_test("AddressSanitizer reserves terabytes of address space: "
                 "ulimit -v cannot be tested under it");
#endif
    char dir[1024], out[4096];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *svm = th_write(dir, "wide.svm", "1 4000000000:1\n-1 1:1\n", 22);
    static const char *const algos[] = { "serial", "hogwild", "cyclades",
                                         "dcd" };
    for (size_t i = 0; i < sizeof algos / sizeof algos[0]; i++) {
        int rc = th_run(out, sizeof out, "ulimit -v 4194304 && exec timeout "
                        "50 '%s' train -q --epochs 1 --algo %s '%s'", th_bin(),
                        algos[i], svm);
        cr_assert_eq(rc, 1, "--algo %s: exit %d: %s", algos[i], rc, out);
        cr_assert(strstr(out, "hogtrain: the training data spans 4000000000 "
                          "features") &&
                      strstr(out, "a dense model of them needs") &&
                      strstr(out, "GiB is available under the address-space "
                              "limit (ulimit -v)") &&
                      strstr(out, "hash the features into fewer weights "
                                  "with --hash-bits"),
                  "--algo %s: %s", algos[i], out);
    }
}

/* The same refusal for a library caller: hog_train's validation, before
 * it allocates (this test process capped at 2 GiB more than it maps, in
 * case the check is missing). */
Test(reliability, hog_train_refuses_a_model_larger_than_memory)
{
#ifdef TH_ASAN
    cr_skip_test("AddressSanitizer reserves terabytes of address space: "
                 "RLIMIT_AS cannot be tested under it");
#endif
    unsigned long long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    cr_assert(f && fscanf(f, "%llu", &pages) == 1);
    fclose(f);
    struct rlimit rl = { 0, 0 };
    cr_assert_eq(getrlimit(RLIMIT_AS, &rl), 0);
    rl.rlim_cur = pages * (unsigned long long)sysconf(_SC_PAGESIZE) +
                  (UINT64_C(2) << 30);
    cr_assert_eq(setrlimit(RLIMIT_AS, &rl), 0);

    uint64_t *off = malloc(3 * sizeof *off);
    float *y = malloc(2 * sizeof *y), *val = malloc(2 * sizeof *val);
    uint32_t *idx = malloc(2 * sizeof *idx);
    cr_assert(off && y && val && idx);
    off[0] = 0, off[1] = 1, off[2] = 2;
    y[0] = 1, y[1] = -1;
    idx[0] = 3999999999u, idx[1] = 0;
    val[0] = val[1] = 1;
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_data_wrap(2, 2, off, y, idx, val, 0, &d, &err), HOG_OK,
                 "%s", err.msg);
    hog_train_opts o;
    th_opts_init(&o);
    o.epochs = 1;
    hog_model *m = NULL;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_ENOMEM, "%s", err.msg);
    cr_assert_null(m);
    cr_assert(strstr(err.msg, "spans 4000000000 features") &&
                  strstr(err.msg, "needs 59.6 GiB for the weights, a working "
                         "copy, AdaGrad's sums and regularization timestamps") &&
                  strstr(err.msg, "ulimit -v"),
              "%s", err.msg);
    hog_data_free(d);
}

/* .hgb: huge sizes in a header whose CRC is right are refused against the
 * file's size before anything is allocated (tests/test_hgb.c flips and
 * truncates every byte; here the CRC is made to agree). */
Test(reliability, hgb_huge_declared_sizes_refused_before_allocating)
{
    char dir[1024], path[1200];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *svm = th_write(dir, "s.svm", "1 1:1 3:2\n-1 2:1\n", 17);
    hog_load_opts o;
    hog_load_opts_init(&o);
    o.threads = 1;
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_data_load(svm, &o, &d, &err), HOG_OK, "%s", err.msg);
    snprintf(path, sizeof path, "%s/s.hgb", dir);
    cr_assert_eq(hog_hgb_save(d, path, 0, 0, &err), HOG_OK, "%s", err.msg);
    hog_data_free(d);
    size_t len;
    unsigned char *orig = slurp(path, &len);
    /* rows, nnz, n_chunks, file_size, table bytes (n_features is no size
     * of the file: any value loads, and training refuses too many) */
    static const unsigned fields[] = { 16, 32, 40, 104, 120 };
    static const uint64_t values[] = { UINT64_C(1) << 60, UINT64_MAX,
                                       UINT64_C(1) << 33 };
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++)
        for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
            unsigned char *b = malloc(len);
            memcpy(b, orig, len);
            memcpy(b + fields[f], &values[v], 8);
            uint32_t crc = hog_crc32c(0, b, 4092);
            memcpy(b + 4092, &crc, 4);
            FILE *fp = fopen(path, "wb");
            cr_assert(fp && fwrite(b, 1, len, fp) == len);
            fclose(fp);
            free(b);
            hog_status st = hog_hgb_load(path, &o, &d, &err);
            cr_assert(st == HOG_ECORRUPT || st == HOG_EFORMAT ||
                          st == HOG_ERANGE,
                      "field at %u = %llu: status %d (%s)", fields[f],
                      (unsigned long long)values[v], (int)st, err.msg);
        }
    free(orig);
}

/* Loading text holds the data and little more: the text is parsed a
 * window at a time (its mapped pages dropped behind, or a pipe read a
 * window at a time), so the peak is within 1.5 times the CSR arrays plus
 * 100 MiB of what the command needs for a tiny file. This file (193 MB of
 * text, 103 MB of arrays) peaked at 345 MB, 1.8 times its text, when it
 * was mapped whole and all its slices' arrays built before the copy. */
Test(reliability, text_load_peak_memory_is_bounded, .timeout = 300)
{
#ifdef TH_ASAN
    cr_skip_test("AddressSanitizer's shadow memory and quarantine change "
                 "the resident set: its peak cannot be tested under it");
#endif
    char dir[1024], out[4096], cmd[4096];
    cr_assert(th_tmpdir(dir, sizeof dir));
    int rc = th_run(out, sizeof out,
                    "cd '%s' && '%s' gen -q --rows 450000 --features 1000000 "
                    "--nnz 27 --seed 7 -o big.svm && '%s' gen -q --rows 100 "
                    "--features 1000000 --nnz 27 --seed 7 -o small.svm && "
                    "'%s' info big.svm", dir, th_bin(), th_bin(), th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    const char *r = strstr(out, "\nrows"), *z = strstr(out, "\nnonzeros");
    cr_assert(r && z, "%s", out);
    unsigned long long rows = strtoull(r + 5, NULL, 10);
    unsigned long long nnz = strtoull(z + 9, NULL, 10);
    cr_assert(rows == 450000 && nnz > 10000000, "%s", out);
    long data_kib = (long)((rows * 12 + nnz * 8) >> 10);
    /* Mapped: info loads the file. */
    snprintf(cmd, sizeof cmd, "exec '%s' info '%s/small.svm'", th_bin(), dir);
    long base = th_peak_rss_kib(cmd);
    snprintf(cmd, sizeof cmd, "exec '%s' info '%s/big.svm'", th_bin(), dir);
    long peak = th_peak_rss_kib(cmd);
    long bound = data_kib * 3 / 2 + (100 << 10) + base;
    cr_assert_leq(peak, bound, "mapped text: peak %ld KiB over %ld (data %ld, "
                  "baseline %ld)", peak, bound, data_kib, base);
    /* Standard input: one training epoch. */
    snprintf(cmd, sizeof cmd, "exec '%s' train -q --epochs 1 -o '%s/m.hgm' - "
             "< '%s/small.svm'", th_bin(), dir, dir);
    base = th_peak_rss_kib(cmd);
    snprintf(cmd, sizeof cmd, "exec '%s' train -q --epochs 1 -o '%s/m.hgm' - "
             "< '%s/big.svm'", th_bin(), dir, dir);
    peak = th_peak_rss_kib(cmd);
    bound = data_kib * 3 / 2 + (100 << 10) + base;
    cr_assert_leq(peak, bound, "standard input: peak %ld KiB over %ld (data "
                  "%ld, baseline %ld)", peak, bound, data_kib, base);
    th_run(out, sizeof out, "rm -f '%s/big.svm'", dir);
}
