/* Compressed input: gzip, xz and zstd files (and pipes) read directly,
 * told apart by their magic, to the same data and the same models as the
 * plain text, bit for bit; truncated and corrupt files are errors naming
 * the file; a malformed line names file and line; a large file parses in
 * bounded memory (src/io/decompress.c, src/io/readahead.c). */
#include <criterion/criterion.h>

#include "helpers.h"
#include "io/io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char out[16384];

/* The three formats: the command that writes NAME.EXT beside NAME
 * (keeping it), and the extension. */
static const struct format {
    const char *tool, *ext, *kind;
} formats[] = {
    { "gzip -kf", "gz", "gzip" },
    { "xz -kf", "xz", "xz" },
    { "zstd -qf", "zst", "zstd" },
};
#define N_FORMATS (sizeof formats / sizeof *formats)

/* dir/name compressed as f (NULL when its tool is not installed). */
static const char *compress(const char *dir, const char *name,
                            const struct format *f)
{
    static char paths[8][1200];
    static int next;
    char tool[16];
    snprintf(tool, sizeof tool, "%.*s", (int)strcspn(f->tool, " "), f->tool);
    if (th_run(out, sizeof out, "command -v %s", tool) != 0)
        return NULL;
    int rc = th_run(out, sizeof out, "cd '%s' && %s '%s'", dir, f->tool, name);
    cr_assert_eq(rc, 0, "%s %s: %s", f->tool, name, out);
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s.%s", dir, name, f->ext);
    return p;
}

/* dir/name: a copy of the real data file `data`, decompressed. */
static const char *copy_data(const char *dir, const char *data, const char *name)
{
    static char path[1200];
    int rc = th_run(out, sizeof out, "cp '%s' '%s/%s'", data, dir, name);
    cr_assert_eq(rc, 0, "%s", out);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

static void assert_same_data(const hog_data *a, const hog_data *b,
                             const char *what)
{
    cr_assert_eq(a->m.rows, b->m.rows, "%s: rows", what);
    cr_assert_eq(a->m.nnz, b->m.nnz, "%s: nonzeros", what);
    cr_assert_eq(a->n_features, b->n_features, "%s: features", what);
    cr_assert(memcmp(a->m.off, b->m.off, (a->m.rows + 1) * 8) == 0,
              "%s: row offsets", what);
    cr_assert(memcmp(a->m.y, b->m.y, a->m.rows * 4) == 0, "%s: labels", what);
    cr_assert(memcmp(a->m.idx, b->m.idx, a->m.nnz * 4) == 0, "%s: indices",
              what);
    cr_assert(memcmp(a->m.val, b->m.val, a->m.nnz * 4) == 0, "%s: values",
              what);
    cr_assert_eq(a->labels, b->labels, "%s", what);
    cr_assert_eq(a->label_pos, b->label_pos, "%s", what);
    cr_assert_eq(a->label_neg, b->label_neg, "%s", what);
    cr_assert_eq(a->n_pos, b->n_pos, "%s", what);
}

static hog_model *train_serial(const hog_data *d)
{
    hog_train_opts o;
    th_opts_init(&o);
    o.algo = HOG_ALGO_SERIAL;
    o.threads = 1;
    o.epochs = 3;
    o.seed = 9;
    hog_model *m;
    hog_err err;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &m, &err), HOG_OK, "%s", err.msg);
    return m;
}

static hog_data *load(const char *path)
{
    hog_data *d = NULL;
    hog_err err;
    cr_assert_eq(hog_data_load(path, NULL, &d, &err), HOG_OK, "%s: %s", path,
                 err.msg);
    return d;
}

/* a9a as .gz, .xz and .zst: the same arrays as the text, from a path and
 * from standard input, in the default windows and in small ones (many
 * hand-overs between the two buffers, lines carried across), and the
 * same model, bit for bit. */
Test(compressed, gz_xz_zst_load_and_train_as_the_text, .timeout = 240)
{
    TH_DATA_OR_SKIP(a9a, "a9a");
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    copy_data(dir, a9a, "a9a");
    hog_data *ref = load(a9a);
    hog_model *mref = train_serial(ref);
    uint64_t nw = hog_model_features(mref) + 1;
    unsigned tried = 0;
    for (size_t f = 0; f < N_FORMATS; f++) {
        const char *p = compress(dir, "a9a", &formats[f]);
        if (!p)
            continue;
        tried++;
        char what[128];
        hog_data *d = load(p);
        snprintf(what, sizeof what, "a9a.%s", formats[f].ext);
        assert_same_data(ref, d, what);
        hog_model *m = train_serial(d);
        cr_assert_eq(hog_model_features(m), hog_model_features(mref));
        cr_assert(memcmp(hog_model_weights(m), hog_model_weights(mref),
                         nw * sizeof(float)) == 0,
                  "%s: the model differs from the text's", what);
        cr_assert_eq(hog_model_bias(m), hog_model_bias(mref));
        hog_model_free(m);
        hog_data_free(d);

        setenv("HOGTRAIN_TEST_TEXT_WINDOW", "100003", 1);
        d = load(p);
        snprintf(what, sizeof what, "a9a.%s in windows of 100003", formats[f].ext);
        assert_same_data(ref, d, what);
        hog_data_free(d);
        cr_assert(freopen(p, "rb", stdin));
        d = load("-");
        snprintf(what, sizeof what, "a9a.%s on standard input", formats[f].ext);
        assert_same_data(ref, d, what);
        hog_data_free(d);
        unsetenv("HOGTRAIN_TEST_TEXT_WINDOW");
    }
    cr_assert_geq(tried, 2, "only %u of gzip, xz and zstd are installed", tried);
    hog_model_free(mref);
    hog_data_free(ref);
}

/* Files of several members, streams or frames decode to the end, as zcat,
 * xzcat and zstdcat have them: twice the rows, in order. */
Test(compressed, concatenated_members_and_streams_decode_fully, .timeout = 120)
{
    TH_DATA_OR_SKIP(a9a, "a9a");
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    copy_data(dir, a9a, "a9a");
    int rc = th_run(out, sizeof out, "cd '%s' && cat a9a a9a > twice", dir);
    cr_assert_eq(rc, 0, "%s", out);
    char path[1200];
    snprintf(path, sizeof path, "%s/twice", dir);
    hog_data *ref = load(path);
    for (size_t f = 0; f < N_FORMATS; f++) {
        const char *p = compress(dir, "a9a", &formats[f]);
        if (!p)
            continue;
        snprintf(path, sizeof path, "%s/twice.%s", dir, formats[f].ext);
        rc = th_run(out, sizeof out, "cat '%s' '%s' > '%s'", p, p, path);
        cr_assert_eq(rc, 0, "%s", out);
        hog_data *d = load(path);
        assert_same_data(ref, d, path);
        hog_data_free(d);
    }
    hog_data_free(ref);
}

/* A file cut in half, one with a flipped byte and one with bytes after its
 * data: an error naming the file and what is wrong, never a short data set;
 * from the loader, convert and the command alike. */
Test(compressed, truncated_and_corrupt_files_are_errors_naming_the_file,
     .timeout = 120)
{
    TH_DATA_OR_SKIP(a9a, "a9a");
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    copy_data(dir, a9a, "a9a");
    unsigned tried = 0;
    for (size_t f = 0; f < N_FORMATS; f++) {
        const char *p = compress(dir, "a9a", &formats[f]);
        if (!p)
            continue;
        tried++;
        const char *e = formats[f].ext;
        int rc = th_run(out, sizeof out, "cd '%s' && head -c $(( $(stat -c %%s "
                        "a9a.%s) / 2 )) a9a.%s > half.%s && cp a9a.%s bad.%s && "
                        "printf '\\377' | dd of=bad.%s bs=1 seek=$(( $(stat -c "
                        "%%s a9a.%s) / 2 )) conv=notrunc status=none", dir, e,
                        e, e, e, e, e, e);
        cr_assert_eq(rc, 0, "%s", out);
        char half[1200], bad[1200], says[256], hgb[1200];
        snprintf(half, sizeof half, "%s/half.%s", dir, e);
        snprintf(bad, sizeof bad, "%s/bad.%s", dir, e);
        snprintf(hgb, sizeof hgb, "%s/x.hgb", dir);
        snprintf(says, sizeof says, "half.%s: %s data is truncated (unexpected "
                 "end of input)", e, formats[f].kind);
        hog_data *d = NULL;
        hog_err err;
        cr_assert_eq(hog_data_load(half, NULL, &d, &err), HOG_ECORRUPT, "%s",
                     err.msg);
        cr_assert(strstr(err.msg, says), "%s", err.msg);
        cr_assert_eq(hog_svm_to_hgb_stream(half, hgb, NULL, 0, 0, NULL, &err),
                     HOG_ECORRUPT, "%s", err.msg);
        cr_assert(strstr(err.msg, says), "%s", err.msg);
        cr_assert_neq(access(hgb, F_OK), 0, "convert left %s behind", hgb);
        rc = th_run(out, sizeof out, "cd '%s' && '%s' train -q half.%s -o x.hgm",
                    dir, th_bin(), e);
        cr_assert_eq(rc, 1, "rc %d\n%s", rc, out);
        cr_assert(strstr(out, says), "%s", out);
        rc = th_run(out, sizeof out, "cd '%s' && '%s' train -q - -o x.hgm < "
                    "half.%s", dir, th_bin(), e);
        cr_assert_eq(rc, 1, "rc %d\n%s", rc, out);
        snprintf(says, sizeof says, "<stdin>: %s data is truncated (unexpected "
                 "end of input)", formats[f].kind);
        cr_assert(strstr(out, says), "%s", out);

        cr_assert_eq(hog_data_load(bad, NULL, &d, &err), HOG_ECORRUPT, "%s",
                     err.msg);
        snprintf(says, sizeof says, "bad.%s: %s data is corrupt (", e,
                 formats[f].kind);
        cr_assert(strstr(err.msg, says), "%s", err.msg);
    }
    cr_assert_geq(tried, 2, "only %u of gzip, xz and zstd are installed", tried);

    /* gzip: bytes after the last member that are not one. */
    int rc = th_run(out, sizeof out, "cd '%s' && cp a9a.gz tail.gz && "
                    "printf 'not gzip' >> tail.gz", dir);
    cr_assert_eq(rc, 0, "%s", out);
    char p[1200];
    snprintf(p, sizeof p, "%s/tail.gz", dir);
    hog_data *d = NULL;
    hog_err err;
    cr_assert_eq(hog_data_load(p, NULL, &d, &err), HOG_ECORRUPT, "%s", err.msg);
    cr_assert(strstr(err.msg, "tail.gz: gzip data is followed by bytes that "
                              "start no gzip member (trailing garbage)"),
              "%s", err.msg);
}

/* A malformed line inside a compressed file names the file and the file's
 * own line, from the loader (in windows of 4 KiB and the default), from
 * convert and from the command; so does a NUL byte in the text. */
Test(compressed, a_malformed_line_names_file_and_line, .timeout = 60)
{
    size_t n = 60000;
    char *buf = malloc(n * 32 + 64);
    cr_assert(buf);
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(buf + len, i % 5 == 3 ? "# note %zu\n"
                               : "%zu 1:%zu.5\n", i % 2, i);
    len += (size_t)sprintf(buf + len, "1 3:1 2:1\n1 1:1\n");
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    th_write(dir, "bad.svm", buf, len);
    const char *gz = compress(dir, "bad.svm", &formats[0]);
    cr_assert(gz, "gzip is not installed");
    hog_data *d = NULL;
    hog_err err;
    static const char *const windows[] = { "4096", NULL };
    for (size_t w = 0; w < 2; w++) {
        if (windows[w])
            setenv("HOGTRAIN_TEST_TEXT_WINDOW", windows[w], 1);
        cr_assert_eq(hog_data_load(gz, NULL, &d, &err), HOG_EPARSE, "%s", err.msg);
        cr_assert(strstr(err.msg, "bad.svm.gz:60001: feature index 2 after 3"),
                  "%s", err.msg);
        unsetenv("HOGTRAIN_TEST_TEXT_WINDOW");
    }
    char hgb[1200];
    snprintf(hgb, sizeof hgb, "%s/bad.hgb", dir);
    cr_assert_eq(hog_svm_to_hgb_stream(gz, hgb, NULL, 4096, 0, NULL, &err),
                 HOG_EPARSE, "%s", err.msg);
    cr_assert(strstr(err.msg, "bad.svm.gz:60001: feature index 2 after 3"),
              "%s", err.msg);
    int rc = th_run(out, sizeof out, "cd '%s' && '%s' train -q bad.svm.gz -o "
                    "x.hgm", dir, th_bin());
    cr_assert_eq(rc, 1, "rc %d\n%s", rc, out);
    cr_assert(strstr(out, "bad.svm.gz:60001: feature index 2 after 3"), "%s", out);

    memcpy(buf + len - 16, "1 2:1 3:1\n", 10); /* line 60001 mended */
    buf[len - 3] = '\0';
    th_write(dir, "nul.svm", buf, len);
    free(buf);
    const char *nul = compress(dir, "nul.svm", &formats[0]);
    cr_assert_eq(hog_data_load(nul, NULL, &d, &err), HOG_EPARSE, "%s", err.msg);
    cr_assert(strstr(err.msg, "nul.svm.gz:60002: NUL byte in the line"), "%s",
              err.msg);
}

/* What a compressed file holds is sniffed too: a compressed .hgb or model
 * is named, not parsed as text; --stream, which reads a .hgb in place,
 * says how to make one from compressed text. */
Test(compressed, what_a_compressed_file_holds_is_named, .timeout = 60)
{
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    static const char text[] = "1 1:1 3:0.5\n-1 2:1\n1 1:0.25 2:1\n";
    th_write(dir, "d.svm", text, sizeof text - 1);
    int rc = th_run(out, sizeof out, "cd '%s' && '%s' convert -q d.svm d.hgb && "
                    "'%s' train -q d.svm -o m.hgm", dir, th_bin(), th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    const char *xz = compress(dir, "d.svm", &formats[1]);
    cr_assert(xz, "xz is not installed");
    compress(dir, "d.hgb", &formats[1]);
    compress(dir, "m.hgm", &formats[1]);
    static const struct {
        const char *run, *says;
    } cases[] = {
        { "train -q d.hgb.xz -o x.hgm", "d.hgb.xz is xz-compressed, and what it "
          "holds is a hogtrain binary cache (.hgb), not LIBSVM text" },
        { "convert m.hgm.xz x.hgb", "m.hgm.xz is xz-compressed, and what it "
          "holds is a hogtrain model, not LIBSVM text" },
        { "train -q --stream d.svm.xz -o x.hgm", "d.svm.xz is xz-compressed, "
          "not a .hgb file (make one with: hogtrain convert d.svm.xz d.svm.hgb)" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rc = th_run(out, sizeof out, "cd '%s' && '%s' %s", dir, th_bin(),
                    cases[i].run);
        cr_assert_eq(rc, 1, "%s: rc %d\n%s", cases[i].run, rc, out);
        cr_assert(strstr(out, cases[i].says), "%s:\n%s", cases[i].run, out);
    }
    /* info: the compression, then the summary as for the text. */
    rc = th_run(out, sizeof out, "cd '%s' && '%s' info d.svm.xz", dir, th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "format           LIBSVM text, xz-compressed "
                          "(1-based feature indices)\n"), "%s", out);
    cr_assert(strstr(out, "rows             3\n"), "%s", out);
    cr_assert(strstr(out, "nonzeros         5\n"), "%s", out);
    /* Compressed standard input, told by its magic. */
    rc = th_run(out, sizeof out, "cd '%s' && '%s' train -q - -o s.hgm < "
                "d.svm.xz && '%s' info s.hgm", dir, th_bin(), th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "features         3\n"), "%s", out);
}

/* The reader thread stops when the parser fails, even while it waits on a
 * pipe that stays open and silent: the load returns with the parser's
 * error (a hang here is the test's timeout). */
Test(compressed, a_parse_error_stops_the_reader_blocked_on_a_pipe, .timeout = 30)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    char buf[8192];
    size_t len = (size_t)sprintf(buf, "1 2:1 1:1\n");
    while (len < sizeof buf - 16)
        len += (size_t)sprintf(buf + len, "1 1:1\n");
    cr_assert_eq(write(p[1], buf, len), (ssize_t)len);
    cr_assert_geq(dup2(p[0], STDIN_FILENO), 0);
    setenv("HOGTRAIN_TEST_TEXT_WINDOW", "4096", 1);
    hog_data *d = NULL;
    hog_err err;
    cr_assert_eq(hog_data_load("-", NULL, &d, &err), HOG_EPARSE, "%s", err.msg);
    cr_assert(strstr(err.msg, "<stdin>:1: feature index 1 after 2"), "%s",
              err.msg);
    unsetenv("HOGTRAIN_TEST_TEXT_WINDOW");
    close(p[1]);
}

/* The command, straight from the data folder's .xz files: train with a
 * test set, the same model file as from the text; convert to the same
 * .hgb, byte for byte, as from the text `xz -dk` leaves. */
Test(compressed, the_command_trains_and_converts_from_xz, .timeout = 240)
{
    TH_DATA_OR_SKIP(a9a, "a9a");
    TH_DATA_OR_SKIP(a9at, "a9a.t");
    const char *root = getenv("HOGTRAIN_DATA");
    if (!root || !*root)
        root = "../shared/data";
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    int rc = th_run(out, sizeof out, "{ cd '%s' && cp -p '%s/a9a.xz' '%s/a9a.t.xz' "
                    ". && xz -dk a9a.xz && '%s' train --algo serial --threads 1 "
                    "a9a.xz -t a9a.t.xz -o xz.hgm && '%s' train -q --algo serial "
                    "--threads 1 a9a -t '%s' -o text.hgm && cmp xz.hgm text.hgm; }",
                    dir, root, root, th_bin(), th_bin(), a9at);
    cr_assert_eq(rc, 0, "rc %d\n%s", rc, out);
    cr_assert(strstr(out, "loaded a9a.xz: 32561 rows, 123 features, 451592 "
                          "nonzeros"), "%s", out);
    cr_assert(strstr(out, "loaded a9a.t.xz: 16281 rows"), "%s", out);
    cr_assert(strstr(out, "test accuracy"), "%s", out);
    rc = th_run(out, sizeof out, "{ cd '%s' && '%s' convert -q a9a.xz xz.hgb && "
                "'%s' convert -q a9a text.hgb && cmp xz.hgb text.hgb && "
                "xz -dc a9a.xz | '%s' convert -q - pipe.hgb && '%s' info "
                "pipe.hgb; }", dir, th_bin(), th_bin(), th_bin(), th_bin());
    cr_assert_eq(rc, 0, "rc %d\n%s", rc, out);
    cr_assert(strstr(out, "rows             32561\n"), "%s", out);
}

/* A large compressed file loads in bounded memory, as text does
 * (reliability/text_load_peak_memory_is_bounded): two windows of text
 * and the decoder's state beside the arrays, not the decompressed text.
 * The text here is 193 MB, its arrays 103 MB: holding the text as well
 * would pass the bound by far. */
Test(compressed, large_file_parses_in_bounded_memory, .timeout = 300)
{
#ifdef TH_ASAN
    cr_skip_test("AddressSanitizer's shadow memory and quarantine change "
                 "the resident set: its peak cannot be tested under it");
#endif
    const struct format *zst = &formats[2];
    char dir[1024], cmd[4096];
    cr_assert(th_tmpdir(dir, sizeof dir));
    int rc = th_run(out, sizeof out, "command -v zstd || command -v gzip");
    cr_assert_eq(rc, 0, "neither zstd nor gzip is installed");
    if (strstr(out, "gzip"))
        zst = &formats[0];
    rc = th_run(out, sizeof out,
                "cd '%s' && '%s' gen -q --rows 450000 --features 1000000 "
                "--nnz 27 --seed 7 -o big.svm && '%s' gen -q --rows 100 "
                "--features 1000000 --nnz 27 --seed 7 -o small.svm && "
                "'%s' info big.svm && %s big.svm small.svm",
                dir, th_bin(), th_bin(), th_bin(),
                zst == &formats[2] ? "zstd -q -1 --rm" : "gzip -1");
    /* (the text is removed: only its compressed copy is read) */
    cr_assert_eq(rc, 0, "%s", out);
    const char *r = strstr(out, "\nrows"), *z = strstr(out, "\nnonzeros");
    cr_assert(r && z, "%s", out);
    unsigned long long rows = strtoull(r + 5, NULL, 10);
    unsigned long long nnz = strtoull(z + 9, NULL, 10);
    cr_assert(rows == 450000 && nnz > 10000000, "%s", out);
    long data_kib = (long)((rows * 12 + nnz * 8) >> 10);
    snprintf(cmd, sizeof cmd, "exec '%s' info '%s/small.svm.%s'", th_bin(), dir,
             zst->ext);
    long base = th_peak_rss_kib(cmd);
    snprintf(cmd, sizeof cmd, "exec '%s' info '%s/big.svm.%s'", th_bin(), dir,
             zst->ext);
    long peak = th_peak_rss_kib(cmd);
    long bound = data_kib * 3 / 2 + (100 << 10) + base;
    cr_assert_leq(peak, bound, "%s file: peak %ld KiB over %ld (data %ld, "
                  "baseline %ld)", zst->kind, peak, bound, data_kib, base);
    /* The same on standard input: one training epoch. */
    snprintf(cmd, sizeof cmd, "exec '%s' train -q --epochs 1 -o '%s/m.hgm' - "
             "< '%s/small.svm.%s'", th_bin(), dir, dir, zst->ext);
    base = th_peak_rss_kib(cmd);
    snprintf(cmd, sizeof cmd, "exec '%s' train -q --epochs 1 -o '%s/m.hgm' - "
             "< '%s/big.svm.%s'", th_bin(), dir, dir, zst->ext);
    peak = th_peak_rss_kib(cmd);
    bound = data_kib * 3 / 2 + (100 << 10) + base;
    cr_assert_leq(peak, bound, "%s on standard input: peak %ld KiB over %ld "
                  "(data %ld, baseline %ld)", zst->kind, peak, bound, data_kib,
                  base);
    th_run(out, sizeof out, "rm -f '%s'/big.svm.*", dir);
}
