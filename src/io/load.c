/*
 * hog_data_load: a path (or "-" for standard input) to a hog_data. The
 * content decides (input.c): the .hgb magic means the binary cache;
 * gzip, xz and zstd are decompressed; models, checkpoints and what
 * hogtrain does not decompress are refused with what they are; anything
 * else is text, LIBSVM or Vowpal Wabbit (the parser tells them apart). Text is handed to the parallel parser a window of
 * whole lines at a time: a regular file mapped into memory, each window's
 * pages dropped once parsed; a pipe, a device or compressed text read
 * ahead by a thread (readahead.c), which fills (and decompresses) the
 * next window while the parser works on this one. The text is never
 * wholly in memory beside the arrays.
 *
 * Before the text is parsed, and before each window, the rows it will
 * make are weighed against the memory this process may still take
 * (budget.c): a cgroup's limit kills rather than failing an allocation.
 */
#include "io/io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The window size: HOG_PARSE_WINDOW, or a test's (a test seam, not a
 * feature: docs/FORMATS.md). */
static size_t text_window(void)
{
    const char *t = getenv("HOGTRAIN_TEST_TEXT_WINDOW");
    if (t && *t) {
        unsigned long long w = strtoull(t, NULL, 10);
        if (w > 0)
            return (size_t)w;
    }
    return HOG_PARSE_WINDOW;
}

/* Parses what the reader hands over, a window at a time (a pipe, a
 * device, compressed text): the thread reads and decompresses the next
 * window while this one is parsed. */
static hog_status load_windows(const struct hog_input *in,
                               const hog_load_opts *o, hog_data **out,
                               bool *weighed, hog_err *err)
{
    struct hog_svm_parser *ps = NULL;
    struct hog_text_reader *r = NULL;
    bool file = in->regular && !in->is_stdin;
    /* a compressed file's text, weighed whole by its first window */
    uint64_t total = file && in->kind != HOG_FILE_TEXT
                         ? hog_decoded_size(in->fd, in->kind, in->size) : 0;
    uint64_t text = 0;
    hog_status st = hog_load_fits(in->name, NULL, 0, total, file, err);
    *weighed = st != HOG_OK;
    if (st == HOG_OK)
        st = hog_svm_parser_create(in->name, o, &ps, err);
    if (st == HOG_OK)
        st = hog_text_reader_open(in, text_window(), &r, err);
    for (;;) {
        const char *w;
        size_t n;
        if (st != HOG_OK || (st = hog_text_reader_next(r, &w, &n, err)) != HOG_OK)
            break;
        if (n == 0) {
            st = hog_svm_parser_finish(ps, out, err);
            break;
        }
        if ((text == 0 &&
             (st = hog_load_fits(in->name, w, n, total, file, err)) != HOG_OK) ||
            (st = hog_window_fits(in->name, w, n, text,
                                  hog_svm_parser_bytes(ps), file, err)) != HOG_OK) {
            *weighed = true;
            break;
        }
        text += n;
        if ((st = hog_svm_parser_feed(ps, w, n, err)) != HOG_OK)
            break;
    }
    hog_text_reader_close(r);
    hog_svm_parser_free(ps);
    return st;
}

/* hog_data_load but for the explanation of a refused allocation; *weighed
 * when the load was refused for memory before anything failed. */
static hog_status load(const char *path, const hog_load_opts *o,
                       hog_data **out, bool *weighed, hog_err *err)
{
    hog_load_opts full; /* the caller's, with the fields it predates */
    hog_load_opts_take(o, &full);
    o = &full;
    if (!path || !out)
        return hog_errf(err, HOG_EINVAL, "hog_data_load: no path or no output");
    struct hog_input in;
    hog_status st = hog_input_open(path, &in, err);
    if (st != HOG_OK)
        return st;
    if ((st = hog_input_sniff(&in, err)) != HOG_OK) {
        hog_input_close(&in);
        return st;
    }
    const char *name = in.name;
    if (in.kind == HOG_FILE_HGB) {
        hog_input_close(&in);
        hog_load_opts lo;
        hog_load_opts_take(o, &lo);
        if (lo.interactions && *lo.interactions)
            return hog_errf(err, HOG_EINVAL, "%s: a .hgb file keeps no "
                            "namespaces, which interactions cross; train on "
                            "the Vowpal Wabbit text", name);
        if (lo.keep_namespaces)
            return hog_errf(err, HOG_EINVAL, "%s: a .hgb file keeps no "
                            "namespaces; load the Vowpal Wabbit text", name);
        if (lo.keep_names)
            return hog_errf(err, HOG_EINVAL, "%s: a .hgb file keeps no "
                            "feature names, which --keep-names keeps; train "
                            "on the Vowpal Wabbit text", name);
        if (in.head_consumed)
            return hog_errf(err, HOG_EINVAL, "%s: a .hgb file can only be "
                            "loaded from a path, not a pipe", name);
        return hog_hgb_load_mode(path, o, o->own_arrays ? HOG_HGB_COPY
                                                        : HOG_HGB_MAP_AUTO,
                                 out, err);
    }
    if ((st = hog_data_kind_check(in.kind, name, err)) != HOG_OK) {
        hog_input_close(&in);
        return st;
    }
    if (in.kind == HOG_FILE_TEXT && !in.head_consumed) {
        /* A regular file of text: mapped, no copy. */
        size_t len = (size_t)in.size;
        if (len == 0) {
            hog_input_close(&in);
            return hog_errf(err, HOG_EPARSE, "%s: empty file, no rows", name);
        }
        void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, in.fd, 0);
        if (map != MAP_FAILED) {
            hog_input_close(&in);
            madvise(map, len, MADV_WILLNEED);
            st = hog_load_fits_mapped(name, map, len, err);
            *weighed = st != HOG_OK;
            if (st == HOG_OK)
                st = hog_parse_svm_windows(map, len, name, o, text_window(),
                                           true, out, err);
            munmap(map, len);
            return st;
        }
    }
    st = load_windows(&in, o, out, weighed, err);
    hog_input_close(&in);
    return st;
}

hog_status hog_data_load(const char *path, const hog_load_opts *o,
                         hog_data **out, hog_err *err)
{
    bool weighed = false;
    hog_status st = load(path, o, out, &weighed, err);
    if (st == HOG_ENOMEM && !weighed && path && strcmp(path, "-") != 0 && err)
        hog_explain_memory(path, err); /* budget.c */
    return st;
}

hog_status hog_data_save_hgb(const hog_data *d, const char *path, hog_err *err)
{
    return hog_hgb_save(d, path, 0, 0, err);
}
