/*
 * First contact: what a user meets when a file is not what hogtrain
 * expects (docs/RELIABILITY.md). Compressed files, models and checkpoints
 * given as data; a device or a pipe without end; a line longer than memory;
 * the largest feature index; a .hgb whose label summary lies, loaded or
 * streamed; a text file truncated while it is parsed; a full disk under
 * an output. Each is a sentence that names the file, never a crash, a hang
 * or a wrong model.
 */
#include <criterion/criterion.h>

#include "helpers.h"
#include "io/io.h"
#include "train/train.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define OUT_MAX 65536
static char out[OUT_MAX];

static const char *small_text =
    "1 1:0.5 3:1\n-1 2:1\n1 1:1 2:0.25\n-1 3:2\n1 1:0.75\n-1 2:0.5 3:1\n";

/* rows lines alternating "1 1:1" and "-1 2:1" into dir/name. */
static const char *many_rows(const char *dir, const char *name, unsigned rows)
{
    size_t cap = (size_t)rows * 8 + 1, n = 0;
    char *t = malloc(cap);
    cr_assert_not_null(t);
    for (unsigned i = 0; i < rows; i++)
        n += (size_t)snprintf(t + n, cap - n, i % 2 ? "-1 2:1\n" : "1 1:1\n");
    const char *p = th_write(dir, name, t, n);
    free(t);
    return p;
}

/* ---- E: a full disk under an output ------------------------------------- */

/* A full disk under predict -o: the error names the file and says "No
 * space left on device", not "Input/output error". A real full file
 * system: a 16 KiB tmpfs mounted in a private mount namespace (unshare -m,
 * which needs root or user namespaces); skipped where neither is
 * allowed. */
Test(outputs, full_disk_under_predict_says_no_space, .timeout = 60)
{
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    th_write(dir, "d.svm", small_text, strlen(small_text));
    many_rows(dir, "big.svm", 40000);
    int rc = th_run(out, sizeof out, "cd '%s' && mkdir full && "
                    "unshare -m sh -c 'mount -t tmpfs -o size=16k tmpfs full "
                    "&& echo mounted'", dir);
    if (rc != 0 || !strstr(out, "mounted"))
        cr_skip_test("cannot mount a small tmpfs in a private mount "
                     "namespace here (unshare -m: %s); skipping", out);
    rc = th_run(out, sizeof out, "cd '%s' && '%s' train -q d.svm -o m.hgm && "
                "unshare -m sh -c 'mount -t tmpfs -o size=16k tmpfs full && "
                "exec \"$0\" predict -q m.hgm big.svm -o full/p.txt' '%s'",
                dir, th_bin(), th_bin());
    cr_assert_eq(rc, 1, "predict into a full file system: rc %d\n%s", rc, out);
    cr_assert_not_null(strstr(out, "full/p.txt: write failed: No space left "
                                   "on device"), "%s", out);
    cr_assert_null(strstr(out, "Input/output error"), "%s", out);
}

/* ---- G: files that are not data, told apart by their magic --------------- */

/* A file compressed in a way hogtrain does not read (bzip2), a model or a
 * checkpoint given where data is expected (training, --test, predict,
 * --stream, convert) says what it is, in the same words from the loader
 * and the streamer. (gzip, xz and zstd are read: tests/test_compressed.c.) */
Test(inputs, compressed_models_and_checkpoints_given_as_data_are_named,
     .timeout = 60)
{
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    th_write(dir, "d.svm", small_text, strlen(small_text));
    int rc = th_run(out, sizeof out, "cd '%s' && '%s' train -q d.svm "
                    "--epochs 2 --checkpoint run.ck -o m.hgm", dir, th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    static const struct {
        const char *tool, *file, *says;
    } cases[] = {
        { "bzip2 -k", "d.svm.bz2", "d.svm.bz2 is bzip2-compressed, which hogtrain does not read: decompress it first (bzip2 -dk d.svm.bz2)" },
        { "zip -q d.svm.zip", "d.svm.zip", "d.svm.zip is a zip archive, which hogtrain does not read: extract it first (unzip d.svm.zip)" },
        { NULL, "m.hgm", "m.hgm is a hogtrain model, not data" },
        { NULL, "run.ck", "run.ck is a hogtrain checkpoint, not data" },
    };
    static const char *const uses[] = {
        "train -q %s -o x.hgm", "train -q d.svm --test %s -o x.hgm",
        "predict -q m.hgm %s", "train -q --stream %s -o x.hgm",
        "convert %s x.hgb", "info %s",
    };
    unsigned tried = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (cases[i].tool) {
            char tool[64];
            snprintf(tool, sizeof tool, "%.*s", (int)strcspn(cases[i].tool, " "),
                     cases[i].tool);
            if (th_run(out, sizeof out, "cd '%s' && command -v %s && %s d.svm",
                       dir, tool, cases[i].tool) != 0)
                continue; /* that compressor is not installed */
        }
        for (size_t u = 0; u < sizeof uses / sizeof *uses; u++) {
            if (u == 5 && !cases[i].tool)
                continue; /* info describes models and checkpoints */
            char use[256];
            snprintf(use, sizeof use, uses[u], cases[i].file);
            rc = th_run(out, sizeof out, "cd '%s' && '%s' %s", dir, th_bin(), use);
            cr_assert_eq(rc, 1, "%s: rc %d\n%s", use, rc, out);
            cr_assert_not_null(strstr(out, cases[i].says), "%s:\n%s", use, out);
            tried++;
        }
    }
    cr_assert_geq(tried, 10, "only %u cases could be tried", tried);

    /* The library's loader, from a path and from a pipe. */
    char path[1100];
    snprintf(path, sizeof path, "%s/m.hgm", dir);
    hog_data *d = NULL;
    hog_err err;
    cr_assert_eq(hog_data_load(path, NULL, &d, &err), HOG_EFORMAT, "%s", err.msg);
    cr_assert_not_null(strstr(err.msg, "is a hogtrain model, not data"), "%s",
                       err.msg);
    rc = th_run(out, sizeof out, "cd '%s' && '%s' train -q - -o x.hgm < run.ck",
                dir, th_bin());
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert_not_null(strstr(out, "<stdin> is a hogtrain checkpoint, not data"),
                       "%s", out);
}

/* hogtrain info describes a checkpoint: the run it belongs to and where
 * that run stands. */
Test(inputs, info_describes_a_checkpoint, .timeout = 30)
{
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    th_write(dir, "d.svm", small_text, strlen(small_text));
    int rc = th_run(out, sizeof out, "cd '%s' && '%s' train -q d.svm "
                    "--epochs 3 --eta 0.25 --l2 0.001 --seed 7 --checkpoint run.ck "
                    "-o m.hgm && '%s' info run.ck", dir, th_bin(), th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    static const char *const rows[] = {
        "format           hogtrain checkpoint (version 2)\n",
        "algorithm        serial\n",
        "loss             logistic\n",
        "eta 0.25",
        "l2 0.001",
        "seed             7\n",
        "data             6 rows, 9 nonzeros, 3 features",
        "position         after epoch 3 (step 18)\n",
        "weights          4, ",
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        cr_assert_not_null(strstr(out, rows[i]), "no \"%s\" in:\n%s", rows[i],
                           out);
    /* K classes: softmax's K vectors, one-vs-rest's class in progress */
    static const char k3[] = "1 1:1 2:0.5\n2 2:1 3:1\n3 1:0.5 3:1\n"
                             "1 1:1\n2 2:1\n3 3:1\n";
    th_write(dir, "k.svm", k3, strlen(k3));
    rc = th_run(out, sizeof out, "cd '%s' && '%s' train -q k.svm --epochs 2 "
                "--multiclass softmax --checkpoint s.ck -o s.hgm && '%s' info "
                "s.ck", dir, th_bin(), th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert_not_null(strstr(out, "multiclass       softmax: "), "%s", out);
    cr_assert_not_null(strstr(out, "weights          12, "), "%s", out);
    rc = th_run(out, sizeof out, "cd '%s' && '%s' train -q k.svm --epochs 2 "
                "--checkpoint o.ck -o o.hgm && '%s' info o.ck", dir, th_bin(),
                th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert_not_null(strstr(out, "(version 3)"), "%s", out);
    cr_assert_not_null(strstr(out, "multiclass       one-vs-rest of 3 "
                                   "classes: 2 finished, class 3 running"),
                       "%s", out);
}

/* ---- C: devices and lines without end ------------------------------------ */

/* /dev/zero is refused at its first byte, as a file, through a pipe and
 * to convert, instead of being read until memory runs out; so is a stream
 * of random bytes at its first NUL. */
Test(inputs, dev_zero_is_refused_at_once, .timeout = 60)
{
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    static const char *const runs[] = {
        "train -q /dev/zero -o x.hgm", "predict -q m.hgm /dev/zero",
        "convert /dev/zero x.hgb", "train -q --stream /dev/zero -o x.hgm",
    };
    th_write(dir, "d.svm", small_text, strlen(small_text));
    int rc = th_run(out, sizeof out, "cd '%s' && '%s' train -q d.svm -o m.hgm",
                    dir, th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        rc = th_run(out, sizeof out, "cd '%s' && timeout 20 '%s' %s", dir,
                    th_bin(), runs[i]);
        cr_assert_eq(rc, 1, "%s: rc %d (124: still reading)\n%s", runs[i], rc,
                     out);
        cr_assert_not_null(strstr(out, "/dev/zero starts with a NUL byte: it is "
                                       "binary, neither LIBSVM text nor a .hgb "
                                       "file"), "%s:\n%s", runs[i], out);
    }
    rc = th_run(out, sizeof out, "cd '%s' && timeout 20 '%s' train -q - "
                "-o x.hgm < /dev/zero", dir, th_bin());
    cr_assert_eq(rc, 1, "rc %d\n%s", rc, out);
    cr_assert_not_null(strstr(out, "<stdin> starts with a NUL byte"), "%s", out);
    rc = th_run(out, sizeof out, "cd '%s' && { printf '1 1:1\\n'; "
                "cat /dev/urandom; } | timeout 20 '%s' train -q - -o x.hgm",
                dir, th_bin());
    cr_assert_eq(rc, 1, "rc %d\n%s", rc, out);
    cr_assert_not_null(strstr(out, ": NUL byte in the line"), "%s", out);
}

/* A line longer than memory allows, read through a buffer (a pipe, or
 * convert's windows), is refused naming the file and the line. The limit
 * is half the memory; HOGTRAIN_TEST_LINE_MAX sets it small for the test. */
Test(inputs, a_line_longer_than_the_limit_names_file_and_line, .timeout = 60)
{
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    int rc = th_run(out, sizeof out, "cd '%s' && { printf '1 1:1\\n-1 2:1\\n'; "
                    "head -c 300000 /dev/zero | tr '\\0' 1; } | "
                    "HOGTRAIN_TEST_LINE_MAX=100000 '%s' train -q - -o x.hgm",
                    dir, th_bin());
    cr_assert_eq(rc, 1, "rc %d\n%s", rc, out);
    cr_assert_not_null(strstr(out, "<stdin>:3: a line longer than 100000 bytes "
                                   "without a newline, the most one line may "
                                   "hold here"), "%s", out);

    /* convert, in windows of 4 KiB that a long line would grow. */
    size_t n = 40000;
    char *t = malloc(n + 32);
    cr_assert_not_null(t);
    int h = snprintf(t, 32, "1 1:1\n-1 2:1\n1 3:1\n");
    memset(t + h, '1', n - (size_t)h);
    const char *svm = th_write(dir, "long.svm", t, n);
    free(t);
    char hgb[1100];
    snprintf(hgb, sizeof hgb, "%s/long.hgb", dir);
    setenv("HOGTRAIN_TEST_LINE_MAX", "10000", 1);
    hog_err err;
    hog_status st = hog_svm_to_hgb_stream(svm, hgb, NULL, 4096, 0, NULL, &err);
    unsetenv("HOGTRAIN_TEST_LINE_MAX");
    cr_assert_eq(st, HOG_ERANGE, "%s", err.msg);
    cr_assert_not_null(strstr(err.msg, "long.svm:4: a line longer than 10000 "
                                       "bytes"), "%s", err.msg);
}

/* ---- .hgb headers that lie, resealed ------------------------------------- */

/* Writes n bytes at offset `at` of the .hgb at path and reseals the
 * header's CRC (bytes 0..4091, stored at 4092), so that only the field
 * is wrong. */
static void patch_header(const char *path, long at, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "r+b");
    cr_assert_not_null(f, "%s", path);
    unsigned char h[4096];
    cr_assert_eq(fread(h, 1, sizeof h, f), sizeof h);
    memcpy(h + at, bytes, n);
    uint32_t crc = hog_crc32c(0, h, 4092);
    memcpy(h + 4092, &crc, 4);
    rewind(f);
    cr_assert_eq(fwrite(h, 1, sizeof h, f), sizeof h);
    fclose(f);
}

static const char *make_hgb(const char *dir, const char *name)
{
    static char path[1100];
    const char *svm = th_write(dir, "h.svm", small_text, strlen(small_text));
    snprintf(path, sizeof path, "%s/%s", dir, name);
    hog_err err;
    cr_assert_eq(hog_svm_to_hgb_stream(svm, path, NULL, 0, 0, NULL, &err),
                 HOG_OK, "%s", err.msg);
    return path;
}

/* F: --stream on a .hgb whose header size is wrong says that the file is
 * a damaged .hgb and what is wrong, not "make one with hogtrain convert". */
Test(inputs, stream_names_a_damaged_header, .timeout = 30)
{
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    patch_header(make_hgb(dir, "bad.hgb"), 12, &(uint32_t){ 8192 }, 4);
    static const char *const runs[] = { "train -q --stream bad.hgb -o x.hgm",
                                        "train -q bad.hgb -o x.hgm" };
    for (size_t i = 0; i < 2; i++) {
        int rc = th_run(out, sizeof out, "cd '%s' && '%s' %s", dir, th_bin(),
                        runs[i]);
        cr_assert_eq(rc, 1, "%s: rc %d\n%s", runs[i], rc, out);
        cr_assert_not_null(strstr(out, "bad.hgb: a damaged .hgb file: its header "
                                       "says it is 8192 bytes long, but a "
                                       "version 2 header is 4096 bytes"),
                           "%s:\n%s", runs[i], out);
        cr_assert_null(strstr(out, "convert"), "%s:\n%s", runs[i], out);
    }
}

/* B: a .hgb whose header's label summary is not its labels' (positive
 * label 5 or NaN over labels of +1 and -1, a positive count that is off)
 * is refused streamed as in memory, never trained into a model that
 * predicts one class. */
Test(inputs, streaming_checks_the_label_summary_as_loading_does, .timeout = 60)
{
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    double five = 5.0, nan = __builtin_nan("");
    uint64_t npos = 2; /* of 3 */
    const struct {
        const char *name;
        long at;
        const void *v;
    } lies[] = {
        { "pos5.hgb", 72, &five }, { "posnan.hgb", 72, &nan },
        { "npos.hgb", 88, &npos },
    };
    for (size_t i = 0; i < sizeof lies / sizeof *lies; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s", lies[i].name);
        const char *path = make_hgb(dir, name);
        patch_header(path, lies[i].at, lies[i].v, 8);
        hog_data *d = NULL;
        hog_err err;
        cr_assert_eq(hog_data_load(path, NULL, &d, &err), HOG_ECORRUPT,
                     "%s loaded", name);
        for (int stream = 0; stream < 2; stream++) {
            int rc = th_run(out, sizeof out, "cd '%s' && '%s' train -q %s %s "
                            "--epochs 2 -o m.hgm", dir, th_bin(),
                            stream ? "--stream" : "", name);
            cr_assert_eq(rc, 1, "%s%s: rc %d\n%s", stream ? "--stream " : "",
                         name, rc, out);
            cr_assert_not_null(strstr(out, name), "%s", out);
            cr_assert_not_null(strstr(out, "label"), "%s", out);
        }
    }
}

/* ---- D: the largest feature index ---------------------------------------- */

/* Whatever the parser accepts, the trainer accepts: the largest index a
 * 1-based file may hold is 4294967294 (stored 4294967293, so n_features
 * and the bias weight's id stay below UINT32_MAX, which the algorithms
 * keep as "none"); one more is refused with file and line by the parser,
 * convert and the command, and a .hgb header declaring more features is
 * refused naming the file. */
Test(inputs, largest_feature_index_agrees_with_the_trainer, .timeout = 30)
{
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    const char *top = "1 4294967294:1\n-1 1:1\n";
    const char *svm = th_write(dir, "top.svm", top, strlen(top));
    hog_data *d = NULL;
    hog_err err;
    cr_assert_eq(hog_data_load(svm, NULL, &d, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(d->n_features, (uint64_t)HOG_MAX_FEATURES);
    hog_train_opts o;
    th_opts_init(&o);
    /* The limit agrees; a machine without 64 GiB to spare refuses the
     * dense model for its size, which is another sentence. */
    hog_status st = hog_train_validate(&o, NULL, d, &err);
    cr_assert(st == HOG_OK || (strstr(err.msg, "a dense model of them needs") &&
                               !strstr(err.msg, "more than hogtrain supports")),
              "the parser accepted %s but the trainer refuses it: %s", top,
              err.msg);
    hog_data_free(d);

    const char *over = "-1 1:1\n1 4294967295:1\n";
    svm = th_write(dir, "over.svm", over, strlen(over));
    cr_assert_eq(hog_data_load(svm, NULL, &d, &err), HOG_ERANGE, "%s loaded",
                 over);
    cr_assert_not_null(strstr(err.msg, "over.svm:2: feature index 4294967295 "
                                       "is beyond the largest supported "
                                       "(4294967294)"), "%s", err.msg);
    static const char *const runs[] = { "train -q over.svm -o x.hgm",
                                        "convert over.svm x.hgb" };
    for (size_t i = 0; i < 2; i++) {
        int rc = th_run(out, sizeof out, "cd '%s' && '%s' %s", dir, th_bin(),
                        runs[i]);
        cr_assert_eq(rc, 1, "%s: rc %d\n%s", runs[i], rc, out);
        cr_assert_not_null(strstr(out, "over.svm:2: feature index 4294967295"),
                           "%s:\n%s", runs[i], out);
    }

    const char *hgb = make_hgb(dir, "wide.hgb");
    patch_header(hgb, 24, &(uint64_t){ UINT64_C(4294967295) }, 8);
    for (int stream = 0; stream < 2; stream++) {
        int rc = th_run(out, sizeof out, "cd '%s' && '%s' train -q %s wide.hgb "
                        "-o x.hgm", dir, th_bin(), stream ? "--stream" : "");
        cr_assert_eq(rc, 1, "rc %d\n%s", rc, out);
        cr_assert_not_null(strstr(out, "wide.hgb: 4294967295 features, more "
                                       "than hogtrain supports (4294967294)"),
                           "%s", out);
    }
}

/* ---- F: text truncated while it is parsed --------------------------------- */

/* LIBSVM text is mapped while it is parsed: another program truncating it
 * then makes the parser's next page raise SIGBUS. The command names the
 * file and calls it text (not "a .hgb data set") and exits 1. The
 * truncation must land while the file is mapped: the shell waits for the
 * mapping in /proc/PID/maps; a parse that finished first is tried again. */
Test(inputs, text_truncated_while_parsed_is_named, .timeout = 120)
{
    char dir[1024];
    cr_assert_not_null(th_tmpdir(dir, sizeof dir));
    int rc = th_run(out, sizeof out, "cd '%s' && '%s' gen -q --rows 60000 "
                    "-o big.svm && cp big.svm keep.svm", dir, th_bin());
    cr_assert_eq(rc, 0, "%s", out);
    bool hit = false;
    for (int attempt = 0; attempt < 5 && !hit; attempt++) {
        rc = th_run(out, sizeof out, "cd '%s' && cp keep.svm big.svm && "
                    "{ '%s' train -q big.svm --threads 1 --epochs 1 -o m.hgm "
                    "2> err & pid=$!; "
                    "while kill -0 $pid 2>/dev/null && "
                    "! grep -q big.svm /proc/$pid/maps 2>/dev/null; do :; done; "
                    "truncate -s 0 big.svm; wait $pid; echo \"rc=$?\"; cat err; }",
                    dir, th_bin());
        cr_assert_eq(rc, 0, "%s", out);
        hit = !strstr(out, "rc=0\n");
    }
    if (!hit)
        cr_skip_test("the parse finished before the truncation five times "
                     "(a fast machine); skipping");
    cr_assert_not_null(strstr(out, "rc=1\n"), "not exit status 1:\n%s", out);
    cr_assert_not_null(strstr(out, "big.svm, LIBSVM text mapped into memory "
                                   "while it was parsed, was truncated in "
                                   "place while in use"), "%s", out);
    cr_assert_null(strstr(out, ".hgb"), "%s", out);
}
