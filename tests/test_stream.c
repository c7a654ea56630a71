/* The chunk streamer: both backends hand out the same chunks; the io_uring
 * fallback names its cause; memory stays within the budget; corrupt,
 * truncated, shrinking and removed files are errors, never hangs; text
 * converts to .hgb in windows, in bounded memory. Training on the stream
 * is test_stream_train.c; the data both make is stream_tests.h's. */
#include <criterion/criterion.h>
#include <math.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/sgd.h"
#include "train/train.h"
#include "helpers.h"
#include "stream_tests.h"
#include "synth.h"
#include "io/io.h"

static bool uring_works(void)
{
    /* The test seam off, the kernel decides. */
    unsetenv("HOGTRAIN_TEST_URING_FAIL");
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *f = make_file(dir, "probe.hgb", 100, 1 << 14, 1);
    struct hog_stream_opts o;
    hog_stream_opts_init(&o);
    o.io = HOG_IO_URING;
    hog_stream *s;
    hog_err err;
    if (hog_stream_open(f, &o, &s, &err) != HOG_OK)
        return false;
    hog_stream_close(s);
    return true;
}

#define URING_OR_SKIP()                                                       \
    if (!uring_works())                                                       \
        cr_skip_test("the kernel refuses io_uring here (seccomp, sysctl or "  \
                     "no support); only the pread backend is tested")

struct seen {
    uint64_t k, rows, nnz;
    uint32_t crc;
};

/* Streams seq (n entries) twice over (two epochs) and records each chunk. */
static void stream_all(const char *path, hog_io_backend io, int direct,
                       unsigned max_slots, const uint64_t *seq, uint64_t n,
                       const hog_data *ref, struct seen *out)
{
    struct hog_stream_opts o;
    hog_stream_opts_init(&o);
    o.io = io;
    o.direct = direct;
    o.max_slots = max_slots;
    hog_stream *s;
    hog_err err;
    cr_assert_eq(hog_stream_open(path, &o, &s, &err), HOG_OK, "%s", err.msg);
    const struct hog_hgb_info *in = hog_stream_info(s);
    cr_assert_eq(hog_stream_push(s, seq, n, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_stream_push(s, seq, n, &err), HOG_OK, "%s", err.msg);
    for (uint64_t i = 0; i < 2 * n; i++) {
        struct hog_stream_chunk c;
        cr_assert_eq(hog_stream_next(s, &c, &err), HOG_OK, "%s", err.msg);
        cr_assert_eq(c.k, seq[i % n]);
        const struct hog_hgb_chunk *ch = &in->chunks[c.k];
        cr_assert_eq(c.m.rows, ch->rows);
        /* The chunk's rows are the reference data's rows. */
        const struct hog_csr *m = &ref->m;
        for (uint64_t r = 0; r < c.m.rows; r++) {
            struct hog_row a = hog_csr_row(&c.m, r);
            struct hog_row b = hog_csr_row(m, ch->first_row + r);
            cr_assert_eq(a.nnz, b.nnz);
            cr_assert_eq(a.y, b.y);
            cr_assert(memcmp(a.idx, b.idx, 4 * a.nnz) == 0);
            cr_assert(memcmp(a.val, b.val, 4 * a.nnz) == 0);
        }
        uint32_t crc = hog_crc32c(0, c.m.off, 8 * (c.m.rows + 1));
        crc = hog_crc32c(crc, c.m.idx, 4 * c.m.nnz);
        out[i] = (struct seen){ c.k, c.m.rows, c.m.nnz, crc };
        hog_stream_release(s, c.slot);
    }
    hog_stream_close(s);
}

Test(stream, backends_deliver_the_same_chunks)
{
    bool uring = uring_works();
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *f = make_file(dir, "d.hgb", 20000, 1 << 15, 7);
    hog_data *ref;
    hog_err err;
    cr_assert_eq(hog_data_load(f, NULL, &ref, &err), HOG_OK, "%s", err.msg);
    struct hog_hgb_info in;
    cr_assert_eq(hog_hgb_open_info(f, &in, &err), HOG_OK, "%s", err.msg);
    uint64_t n = in.n_chunks;
    cr_assert_gt(n, 10, "the file should have many chunks");
    hog_hgb_info_close(&in);
    uint64_t *seq = malloc(n * sizeof *seq);
    for (uint64_t k = 0; k < n; k++)
        seq[k] = k;
    struct hog_rng r;
    hog_rng_seed(&r, 3, 0);
    hog_shuffle_u64(&r, seq, n);
    struct seen *a = calloc(2 * n, sizeof *a), *b = calloc(2 * n, sizeof *b);
    /* pread, buffered and O_DIRECT, rings of 2 and of 5 buffers */
    stream_all(f, HOG_IO_PREAD, 0, 2, seq, n, ref, a);
    stream_all(f, HOG_IO_PREAD, 1, 5, seq, n, ref, b);
    cr_assert(memcmp(a, b, 2 * n * sizeof *a) == 0);
    if (uring) {
        stream_all(f, HOG_IO_URING, 0, 2, seq, n, ref, b);
        cr_assert(memcmp(a, b, 2 * n * sizeof *a) == 0, "io_uring differs");
        stream_all(f, HOG_IO_URING, 1, 7, seq, n, ref, b);
        cr_assert(memcmp(a, b, 2 * n * sizeof *a) == 0,
                  "io_uring with O_DIRECT differs");
    } else {
        cr_log_warn("io_uring refused by this kernel: only pread compared");
    }
    free(a), free(b), free(seq);
    hog_data_free(ref);
}

/* ---- the fallback ------------------------------------------------------------------ */

struct lines {
    char text[1024];
    int n;
};

static void catch_line(void *ctx, const char *line)
{
    struct lines *l = ctx;
    snprintf(l->text, sizeof l->text, "%s", line);
    l->n++;
}

Test(stream, forced_uring_failure_falls_back_and_names_the_cause)
{
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *f = make_file(dir, "d.hgb", 3000, 1 << 14, 2);
    const char *causes[] = { "EPERM", "ENOSYS", "ENOMEM" };
    const char *words[] = { "seccomp", "no io_uring", "ulimit -l" };
    for (int i = 0; i < 3; i++) {
        setenv("HOGTRAIN_TEST_URING_FAIL", causes[i], 1);
        struct hog_stream_opts o;
        hog_stream_opts_init(&o);
        struct lines l = { "", 0 };
        o.log = catch_line;
        o.log_ctx = &l;
        hog_stream *s;
        hog_err err;
        cr_assert_eq(hog_stream_open(f, &o, &s, &err), HOG_OK, "%s", err.msg);
        hog_stream_stats st = { .size = sizeof st };
        hog_stream_get_stats(s, &st);
        cr_assert_str_eq(st.backend, "pread");
        cr_assert_eq(l.n, 1, "one line");
        cr_assert(strstr(l.text, words[i]), "%s: '%s'", causes[i], l.text);
        cr_assert(strstr(l.text, "pread"), "'%s'", l.text);
        cr_assert(strstr(st.fallback, words[i]));
        /* ... and it works */
        uint64_t k0 = 0;
        struct hog_stream_chunk c;
        cr_assert_eq(hog_stream_push(s, &k0, 1, &err), HOG_OK);
        cr_assert_eq(hog_stream_next(s, &c, &err), HOG_OK, "%s", err.msg);
        hog_stream_release(s, c.slot);
        hog_stream_close(s);
        /* Forcing io_uring turns the same cause into an error. */
        o.io = HOG_IO_URING;
        cr_assert_eq(hog_stream_open(f, &o, &s, &err), HOG_ENOTSUP);
        cr_assert(strstr(err.msg, words[i]), "%s", err.msg);
    }
    /* The command: one line on stderr. */
    char out[8192];
    int rc = th_run(out, sizeof out,
                    "HOGTRAIN_TEST_URING_FAIL=EPERM %s train --epochs 1 "
                    "--stream %s",
                    th_bin(), f);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "io_uring unavailable (io_uring_queue_init: "
                          "Operation not permitted"),
              "%s", out);
    cr_assert(strstr(out, "streamed with pread"), "%s", out);
}

/* ---- broken files ------------------------------------------------------------------- */

static void flip_byte(const char *path, uint64_t off)
{
    int fd = open(path, O_RDWR);
    cr_assert(fd >= 0);
    unsigned char b;
    cr_assert_eq(pread(fd, &b, 1, (off_t)off), 1);
    b ^= 0x40;
    cr_assert_eq(pwrite(fd, &b, 1, (off_t)off), 1);
    close(fd);
}

Test(stream, corrupt_chunk_names_chunk_and_offset)
{
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *f = make_file(dir, "d.hgb", 20000, 1 << 15, 3);
    struct hog_hgb_info in;
    hog_err err;
    cr_assert_eq(hog_hgb_open_info(f, &in, &err), HOG_OK, "%s", err.msg);
    uint64_t off5 = in.chunks[5].offset;
    flip_byte(f, off5 + in.chunks[5].bytes / 2);
    hog_hgb_info_close(&in);
    char want[128];
    snprintf(want, sizeof want, "chunk 5 at offset %llu: checksum mismatch",
             (unsigned long long)off5);
    hog_io_backend ios[] = { HOG_IO_PREAD, HOG_IO_AUTO };
    for (int i = 0; i < 2; i++) {
        hog_train_opts o;
        th_opts_init(&o);
        o.epochs = 2;
        o.io = ios[i];
        o.mem_budget = 4 << 20;
        hog_model *m;
        cr_assert_eq(hog_train_stream(f, NULL, &o, NULL, &m, &err), HOG_ECORRUPT);
        cr_assert(strstr(err.msg, want), "%s", err.msg);
        cr_assert(strstr(err.msg, f), "%s", err.msg);
    }
}

Test(stream, truncated_file_is_refused_with_chunk_and_offset)
{
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *f = make_file(dir, "d.hgb", 20000, 1 << 15, 3);
    struct hog_hgb_info in;
    hog_err err;
    cr_assert_eq(hog_hgb_open_info(f, &in, &err), HOG_OK, "%s", err.msg);
    uint64_t cut = in.chunks[4].offset + 100;
    hog_hgb_info_close(&in);
    cr_assert_eq(truncate(f, (off_t)cut), 0);
    hog_train_opts o;
    th_opts_init(&o);
    hog_model *m;
    cr_assert_eq(hog_train_stream(f, NULL, &o, NULL, &m, &err), HOG_ECORRUPT);
    cr_assert(strstr(err.msg, "truncated in chunk 4 at offset"), "%s", err.msg);
}

Test(stream, file_shrinking_or_removed_while_streaming_is_an_error)
{
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    for (int backend = 0; backend < 2; backend++) {
        const char *f = make_file(dir, "d.hgb", 20000, 1 << 15, 4);
        struct hog_stream_opts so;
        hog_stream_opts_init(&so);
        so.io = backend ? HOG_IO_AUTO : HOG_IO_PREAD;
        so.direct = 0;
        so.max_slots = 2;
        hog_stream *s;
        hog_err err;
        cr_assert_eq(hog_stream_open(f, &so, &s, &err), HOG_OK, "%s", err.msg);
        const struct hog_hgb_info *in = hog_stream_info(s);
        uint64_t n = in->n_chunks, *seq = malloc(n * sizeof *seq);
        for (uint64_t k = 0; k < n; k++)
            seq[k] = k;
        cr_assert_eq(hog_stream_push(s, seq, n, &err), HOG_OK, "%s", err.msg);
        struct hog_stream_chunk c;
        cr_assert_eq(hog_stream_next(s, &c, &err), HOG_OK, "%s", err.msg);
        /* Cut the file in the middle of chunk 6: chunks 1 and 2 may be read
         * already; reading on must stop with an error, not hang. */
        cr_assert_eq(truncate(f, (off_t)(in->chunks[6].offset + 512)), 0);
        hog_stream_release(s, c.slot);
        hog_status st = HOG_OK;
        uint64_t got = 1;
        while (got < n && (st = hog_stream_next(s, &c, &err)) == HOG_OK) {
            hog_stream_release(s, c.slot);
            got++;
        }
        cr_assert_eq(st, HOG_ECORRUPT, "backend %d: %s", backend, err.msg);
        cr_assert(strstr(err.msg, "chunk 6 at offset"), "%s", err.msg);
        cr_assert(strstr(err.msg, "shrank"), "%s", err.msg);
        hog_stream_release(s, c.slot);
        /* The next epoch is refused up front. */
        cr_assert_eq(hog_stream_push(s, seq, 1, &err), HOG_ECORRUPT);
        cr_assert(strstr(err.msg, "changed size"), "%s", err.msg);
        hog_stream_close(s);

        /* Removed: the next push says so. */
        f = make_file(dir, "e.hgb", 2000, 1 << 14, 4);
        cr_assert_eq(hog_stream_open(f, &so, &s, &err), HOG_OK, "%s", err.msg);
        cr_assert_eq(unlink(f), 0);
        cr_assert_eq(hog_stream_push(s, seq, 1, &err), HOG_EIO);
        cr_assert(strstr(err.msg, "removed"), "%s", err.msg);
        hog_stream_close(s);
        free(seq);
    }
}

/* ---- memory -------------------------------------------------------------------------- */

static uint64_t json_u64(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(buf, pat);
    cr_assert(p, "%s not in %s", key, path);
    return strtoull(p + strlen(pat), NULL, 10);
}

Test(stream, peak_rss_stays_within_budget_on_a_file_4x_larger, .timeout = 60)
{
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    char f[1100], j[1100];
    snprintf(f, sizeof f, "%s/big.hgb", dir);
    snprintf(j, sizeof j, "%s/r.json", dir);
    /* About 90 MiB: 1.2 M rows of 8 nonzeros (12 + 8 * 8 bytes each). */
    {
        uint64_t rows = 1200000, z = 8 * rows;
        uint64_t *off = malloc((rows + 1) * 8);
        float *y = malloc(rows * 4), *val = malloc(z * 4);
        uint32_t *idx = malloc(z * 4);
        struct hog_rng r;
        hog_rng_seed(&r, 9, 0);
        for (uint64_t i = 0; i <= rows; i++)
            off[i] = 8 * i;
        for (uint64_t i = 0; i < rows; i++) {
            y[i] = hog_rng_below(&r, 2) ? 1.0f : -1.0f;
            for (unsigned k = 0; k < 8; k++) {
                idx[8 * i + k] = k * 125 + (uint32_t)hog_rng_below(&r, 125);
                val[8 * i + k] = 1.0f;
            }
        }
        hog_data *d;
        hog_err err;
        cr_assert_eq(hog_data_wrap(rows, z, off, y, idx, val, 1000, &d, &err),
                     HOG_OK);
        cr_assert_eq(hog_hgb_save(d, f, 0, 0, &err), HOG_OK, "%s", err.msg);
        hog_data_free(d);
    }
    struct stat sb;
    cr_assert_eq(stat(f, &sb), 0);
    uint64_t budget = 16u << 20;
    cr_assert_gt((uint64_t)sb.st_size, 4 * budget, "the file is 4x the budget");
    char out[8192];
    int rc = th_run(out, sizeof out,
                    "%s train -q --epochs 2 --stream --mem-budget 16M "
                    "--json %s %s",
                    th_bin(), j, f);
    cr_assert_eq(rc, 0, "%s", out);
    uint64_t rss = json_u64(j, "peak_rss_bytes");
    uint64_t read = json_u64(j, "bytes_read");
    uint64_t model = 1001 * 4 * 4; /* weights, stamps: a few KiB */
    struct hog_hgb_info in;
    hog_err err;
    cr_assert_eq(hog_hgb_open_info(f, &in, &err), HOG_OK, "%s", err.msg);
    uint64_t chunks = 0;
    for (uint64_t k = 0; k < in.n_chunks; k++)
        chunks += in.chunks[k].bytes;
    hog_hgb_info_close(&in);
    cr_assert_eq(read, 2 * chunks, "two passes over every chunk");
    cr_log_info("streamed %llu MiB file with a 16 MiB budget: peak RSS %llu MiB",
                (unsigned long long)(sb.st_size >> 20),
                (unsigned long long)(rss >> 20));
#ifdef __SANITIZE_ADDRESS__
    return; /* AddressSanitizer's own memory is not the command's */
#endif
    cr_assert_lt(rss, budget + model + (64u << 20),
                 "peak RSS %llu bytes", (unsigned long long)rss);
}

/* ---- streaming conversion --------------------------------------------------------------- */

static void assert_same_data(const hog_data *a, const hog_data *b)
{
    cr_assert_eq(a->m.rows, b->m.rows);
    cr_assert_eq(a->m.nnz, b->m.nnz);
    cr_assert_eq(a->n_features, b->n_features);
    cr_assert(memcmp(a->m.off, b->m.off, (a->m.rows + 1) * 8) == 0);
    cr_assert(memcmp(a->m.y, b->m.y, a->m.rows * 4) == 0);
    cr_assert(memcmp(a->m.idx, b->m.idx, a->m.nnz * 4) == 0);
    cr_assert(memcmp(a->m.val, b->m.val, a->m.nnz * 4) == 0);
    cr_assert_eq(a->labels, b->labels);
    cr_assert_eq(a->label_pos, b->label_pos);
    cr_assert_eq(a->label_neg, b->label_neg);
    cr_assert_eq(a->n_pos, b->n_pos);
}

/* Converted in windows of `window` bytes, the .hgb loads to the same data
 * as the text loaded whole (and passes every check of the .hgb reader). */
static void convert_check(const char *txt, const char *dir, size_t window,
                          uint64_t target)
{
    char out[1100];
    snprintf(out, sizeof out, "%s/c.hgb", dir);
    hog_err err;
    struct hog_convert_stats cs;
    memset(&cs, 0, sizeof cs);
    cr_assert_eq(hog_svm_to_hgb_stream(txt, out, NULL, window, target, &cs, &err),
                 HOG_OK, "%s", err.msg);
    hog_data *a, *b;
    cr_assert_eq(hog_data_load(txt, NULL, &a, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_data_load(out, NULL, &b, &err), HOG_OK, "%s", err.msg);
    assert_same_data(a, b);
    cr_assert_eq(cs.rows, a->m.rows);
    hog_data_free(a);
    hog_data_free(b);
}

Test(stream, convert_in_windows_equals_whole_load)
{
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    /* comments, blank lines, CRLF, one label value per window, no final
     * newline */
    static const char text[] =
        "# a comment\n"
        "1 1:0.5 3:1\n"
        "\n"
        "1 2:1\r\n"
        "-1 4:2.5 7:1 9:-1 # trailing\n"
        "-1\n"
        "1 1:1 2:1 3:1 4:1 5:1 6:1 7:1 8:1 9:1 10:1 11:1 12:1\n"
        "-1 12:3";
    const char *t = th_write(dir, "t.svm", text, sizeof text - 1);
    for (size_t w = 4096; w <= 8192; w += 4096)
        convert_check(t, dir, w, 64);
    /* many windows and chunks over a bigger generated file */
    char big[1100];
    snprintf(big, sizeof big, "%s/g.svm", dir);
    char out[8192];
    cr_assert_eq(th_run(out, sizeof out, "%s gen -q --rows 20000 --features "
                        "5000 --nnz 10 -o %s", th_bin(), big), 0, "%s", out);
    convert_check(big, dir, 4096, 1 << 14);
    convert_check(big, dir, 100000, 0);
}

Test(stream, convert_real_data_in_windows)
{
    TH_DATA_OR_SKIP(p, "a9a");
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    convert_check(p, dir, 1 << 16, 1 << 16);
}

Test(stream, convert_error_lines_count_from_the_start_of_the_file)
{
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    size_t n = 0, cap = 1 << 20;
    char *text = malloc(cap);
    for (int i = 1; i <= 5000; i++)
        n += (size_t)snprintf(text + n, cap - n, "%d 1:%d 2:0.5\n",
                              i % 2 ? 1 : -1, i);
    n += (size_t)snprintf(text + n, cap - n, "1 3:1 2:1\n"); /* line 5001 */
    const char *t = th_write(dir, "bad.svm", text, n);
    free(text);
    char out[1100];
    snprintf(out, sizeof out, "%s/o.hgb", dir);
    hog_err err;
    struct hog_convert_stats cs;
    memset(&cs, 0, sizeof cs);
    cr_assert_eq(hog_svm_to_hgb_stream(t, out, NULL, 4096, 0, &cs, &err),
                 HOG_EPARSE);
    char want[1200];
    snprintf(want, sizeof want, "%s:5001: ", t);
    cr_assert(strstr(err.msg, want), "%s", err.msg);
    cr_assert_gt(cs.windows, 10, "the error is in a late window");
    struct stat sb;
    cr_assert_neq(stat(out, &sb), 0, "no output left behind");
}

/* Runs `hogtrain convert -q --window 4M in out` and returns its peak RSS
 * in bytes (wait4), or 0 when it did not exit 0. */
static uint64_t convert_peak_rss(const char *in, const char *out)
{
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        execl(th_bin(), th_bin(), "convert", "-q", "--window", "4M", in, out,
              (char *)NULL);
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) ||
        WEXITSTATUS(st) != 0)
        return 0;
    return (uint64_t)ru.ru_maxrss * 1024;
}

Test(stream, convert_runs_in_bounded_memory, .timeout = 60)
{
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    char txt[1100], hgb[1100];
    snprintf(txt, sizeof txt, "%s/big.svm", dir);
    snprintf(hgb, sizeof hgb, "%s/big.hgb", dir);
    FILE *f = fopen(txt, "w");
    cr_assert(f);
    static char line[256];
    for (int i = 0; i < 1000000; i++) {
        int k = snprintf(line, sizeof line,
                         "%d 1:0.25 %d:1 %d:0.5 %d:2 %d:1.5 %d:1 %d:0.75\n",
                         i % 3 ? 1 : -1, 2 + i % 97, 100 + i % 89, 200 + i % 83,
                         300 + i % 79, 400 + i % 73, 500 + i % 71);
        fwrite(line, 1, (size_t)k, f);
    }
    fclose(f);
    struct stat sb;
    cr_assert_eq(stat(txt, &sb), 0);
    cr_assert_gt(sb.st_size, 48 << 20);
    /* The command's own footprint (shared libraries: with CUDA and MPI
     * builds tens of MiB) measured on a one-line file, then the big one. */
    char small[1100], small_hgb[1100];
    snprintf(small, sizeof small, "%s/small.svm", dir);
    snprintf(small_hgb, sizeof small_hgb, "%s/small.hgb", dir);
    FILE *sf = fopen(small, "w");
    cr_assert(sf);
    fputs("1 1:1\n", sf);
    fclose(sf);
    uint64_t base = convert_peak_rss(small, small_hgb);
    uint64_t peak = convert_peak_rss(txt, hgb);
    cr_assert_gt(base, 0, "the one-line conversion failed");
    cr_assert_gt(peak, 0, "the conversion failed");
    cr_log_info("converted %lld MiB of text with 4 MiB windows: peak RSS %llu "
                "MiB, %llu MiB over the command's own %llu MiB",
                (long long)(sb.st_size >> 20), (unsigned long long)(peak >> 20),
                (unsigned long long)((peak - base) >> 20),
                (unsigned long long)(base >> 20));
    /* A few windows and a constant, well under the text (a whole-file
     * conversion holds the text and its parse: over twice the file). */
    /* (Not under AddressSanitizer, whose shadow memory and quarantine are
     * not the command's.) */
#ifndef __SANITIZE_ADDRESS__
    cr_assert_lt(peak - base, (4u << 22) + (24u << 20), "peak RSS %llu over "
                 "a baseline of %llu", (unsigned long long)peak,
                 (unsigned long long)base);
#endif
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_data_load(hgb, NULL, &d, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(d->m.rows, 1000000);
    cr_assert_eq(d->m.nnz, 7000000);
    hog_data_free(d);
}

Test(stream, forced_uring_backend_is_used_where_the_kernel_allows)
{
    URING_OR_SKIP();
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *f = make_file(dir, "d.hgb", 20000, 1 << 15, 5);
    char out[8192];
    int rc = th_run(out, sizeof out, "%s train --epochs 2 --stream --io uring "
                    "--direct on --mem-budget 1M %s", th_bin(), f);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "streamed with io_uring (O_DIRECT)"), "%s", out);
    cr_assert_null(strstr(out, "unavailable"), "%s", out);
}

/* A regular file on standard input is sized: the chunk table gets room for
 * its real size (its size is not recorded in the header, as for a pipe),
 * not for an empty file's 16 chunks. */
Test(stream, convert_of_a_file_on_standard_input_has_room_for_its_chunks)
{
    TH_DATA_OR_SKIP(a9a, "a9a");
    char dir[1024], out[1100];
    cr_assert(th_tmpdir(dir, sizeof dir));
    snprintf(out, sizeof out, "%s/in.hgb", dir);
    int fd = open(a9a, O_RDONLY);
    cr_assert(fd >= 0);
    int saved = dup(0);
    cr_assert(saved >= 0 && dup2(fd, 0) == 0);
    close(fd);
    hog_err err;
    /* 4 KiB chunks: a9a's 5.4 MB of payload needs over a thousand */
    hog_status st = hog_svm_to_hgb_stream("-", out, NULL, 1 << 16, 4096,
                                          NULL, &err);
    dup2(saved, 0);
    close(saved);
    cr_assert_eq(st, HOG_OK, "%s", err.msg);
    hog_data *a, *b;
    cr_assert_eq(hog_data_load(a9a, NULL, &a, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_data_load(out, NULL, &b, &err), HOG_OK, "%s", err.msg);
    assert_same_data(a, b);
    hog_data_free(a);
    hog_data_free(b);
}
