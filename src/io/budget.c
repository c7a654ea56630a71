/*
 * Whether a load fits in the memory this process may still take
 * (hog_mem_available: the machine's, `ulimit -v`, the cgroup's limit that
 * a container or `systemd-run -p MemoryMax=` sets). Where a limit makes
 * an allocation fail (`ulimit -v`) the loader's "out of memory" is
 * explained after the fact (hog_explain_memory); a cgroup's limit never
 * fails an allocation, its OOM killer ends the process instead (exit
 * 137), so the load is weighed before it starts and again before each
 * window of text, and refused with the same sentence.
 *
 * The rows' size is told from the text itself: each line holds a label
 * and an offset (12 bytes), each further token an index and a value (8
 * bytes), counted in a sample and scaled to the whole text, whose size a
 * compressed file's format records (hog_decoded_size).
 */
#include "io/io.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#define SAMPLE ((size_t)4 << 20) /* text sampled to weigh a mapped file */

static double mib(uint64_t b) { return (double)b / (1024.0 * 1024.0); }

/* "2.2 MiB", "830 MiB": a tenth where the number is small */
static const char *in_mib(char *buf, size_t len, uint64_t b)
{
    snprintf(buf, len, mib(b) < 10 ? "%.1f MiB" : "%.0f MiB", mib(b));
    return buf;
}

void hog_text_count(const char *p, size_t n, uint64_t *tokens_out,
                    uint64_t *lines_out)
{
    uint64_t lines = 0, tokens = 0;
    bool in = false;
    for (size_t i = 0; i < n; i++) {
        bool blank = p[i] == ' ' || p[i] == '\t' || p[i] == '\n' ||
                     p[i] == '\r';
        tokens += !blank && !in;
        lines += p[i] == '\n';
        in = !blank;
    }
    if (n && p[n - 1] != '\n')
        lines++;
    *tokens_out = tokens;
    *lines_out = lines;
}

/* The most hog_text_rows_bytes says of a byte of text: 8 a token and 4 a
 * line, a token taking at least one byte and a blank after it, a line at
 * least its newline ("1 2 3 ..." or blank lines: 4 a byte; "1\n1\n...": 6).
 * Where DENSEST times the text fits, no sample of it needs counting. */
#define DENSEST 8u

uint64_t hog_text_rows_bytes(const char *p, size_t n)
{
    uint64_t tokens, lines;
    hog_text_count(p, n, &tokens, &lines);
    return tokens * 8 + lines * 4;
}

/* HOG_ENOMEM: the sentence every refusal of a load for memory gives. */
static hog_status refuse(hog_err *err, const char *name, uint64_t need,
                         const char *how, uint64_t have, const char *what,
                         bool regular)
{
    char n[32], h[32];
    return hog_errf(err, HOG_ENOMEM,
                    "%s: the data needs about %s of memory (%s), but only %s "
                    "is available %s; raise the limit, or %s and train with "
                    "--stream, which reads it from disk a chunk at a time",
                    name, in_mib(n, sizeof n, need), how,
                    in_mib(h, sizeof h, have), what,
                    regular ? "convert it to .hgb (hogtrain convert)"
                            : "save it to a file, convert that to .hgb "
                              "(hogtrain convert)");
}

hog_status hog_load_fits(const char *name, const char *text, size_t n,
                         uint64_t total, bool regular, hog_err *err)
{
    if (!total)
        return HOG_OK;
    const char *what;
    uint64_t have = hog_mem_available(&what);
    if (total <= have / DENSEST)
        return HOG_OK; /* no text this long takes more: no sample read */
    /* without a sample, half the text: the least rows of plain LIBSVM
     * take (a9a's take 1.7 times its text, news20's 0.7) */
    uint64_t need = total / 2;
    if (n)
        need = (uint64_t)((double)hog_text_rows_bytes(text, n) *
                          ((double)total / (double)n));
    if (need <= have)
        return HOG_OK;
    char how[128], t[32];
    snprintf(how, sizeof how, "its parsed rows, from %s of text",
             in_mib(t, sizeof t, total));
    return refuse(err, name, need, how, have, what, regular);
}

hog_status hog_load_fits_mapped(const char *name, const char *text,
                                size_t len, hog_err *err)
{
    return hog_load_fits(name, text, len < SAMPLE ? len : SAMPLE, len, true,
                         err);
}

hog_status hog_window_fits(const char *name, const char *w, size_t n,
                           uint64_t text_so_far, uint64_t held,
                           bool regular, hog_err *err)
{
    /* this window's rows, and the arrays grown by half again to take them */
    const char *what;
    uint64_t have = hog_mem_available(&what);
    if (held / 2 <= have && n <= (have - held / 2) / DENSEST)
        return HOG_OK; /* as in hog_load_fits: no count needed */
    uint64_t more = hog_text_rows_bytes(w, n) + held / 2;
    if (more <= have)
        return HOG_OK;
    char how[160], t[32];
    snprintf(how, sizeof how, "the parsed rows of its first %s of text, "
             "and more", in_mib(t, sizeof t, text_so_far + n));
    return refuse(err, name, held + more, how, have, what, regular);
}

void hog_explain_memory(const char *path, hog_err *err)
{
    uint64_t need = 0;
    struct hog_hgb_info info;
    hog_err e;
    struct stat sb;
    const char *how = "";
    const char *conv = "";
    struct hog_input in;
    if (hog_hgb_open_info(path, &info, &e) == HOG_OK) {
        /* offsets, labels, indices and values in memory */
        need = (info.rows + 1) * 8 + info.rows * 4 + info.nnz * 8;
        hog_hgb_info_close(&info);
    } else if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        /* A pipe or a device, of a size nobody knows: read a window at a
         * time, its parsed rows did not fit. */
        char msg[HOG_ERR_MAX + 256];
        int n = snprintf(msg, sizeof msg, "%s: %s is not a regular file, and "
                         "its parsed rows do not fit in memory; save it to a "
                         "file and convert it to .hgb (hogtrain convert), then "
                         "train with --stream", err->msg, path);
        if (n > 0 && (size_t)n < sizeof err->msg)
            memcpy(err->msg, msg, (size_t)n + 1);
        return;
    } else if (hog_input_open(path, &in, &e) == HOG_OK) {
        /* the text mapped (all of it counts in the address space, though
         * only a window is resident), plus its parsed rows (about half the
         * text's size); compressed text, its rows from what it decodes to */
        how = " (the text and its parsed rows)";
        need = in.size + in.size / 2;
        if (hog_input_sniff(&in, &e) == HOG_OK && in.kind != HOG_FILE_TEXT) {
            /* 0 where the file does not record it: no size made up */
            need = hog_decoded_size(in.fd, in.kind, in.size) / 2;
            how = " (the rows parsed from its text once decompressed)";
        }
        hog_input_close(&in);
        conv = "convert it to .hgb (hogtrain convert) and ";
    } else {
        return;
    }
    char lim[128] = "";
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        snprintf(lim, sizeof lim, ", but the address space is limited to "
                 "%.0f MiB (ulimit -v)", mib((uint64_t)rl.rlim_cur));
    char msg[HOG_ERR_MAX + 512];
    char size[64] = "more";
    if (need)
        snprintf(size, sizeof size, "about %.0f MiB of", mib(need));
    int n = snprintf(msg, sizeof msg,
             "%s: the data needs %s memory%s%s; raise the limit, or %strain "
             "with --stream, which reads it from disk a chunk at a time",
             err->msg, size, how, lim, conv);
    if (n > 0 && (size_t)n < sizeof err->msg)
        memcpy(err->msg, msg, (size_t)n + 1);
}
