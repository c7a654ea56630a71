/*
 * The text parser: LIBSVM/SVMlight or Vowpal Wabbit text into one CSR,
 * in parallel. The lines of each format are parsed by that format's entry
 * in a small table (parse_int.h: parse_svm.c, parse_vw.c); this file is
 * what they share: windows, slices, threads, hashing and the result.
 *
 * The text arrives in windows of whole lines (hog_svm_parser_feed; the
 * whole-buffer entries below cut their buffer into windows of about
 * HOG_PARSE_WINDOW bytes). Each window is cut into one slice per thread at
 * line boundaries; slice 0 parses straight onto the end of the result's
 * arrays (the accumulator), each other slice into scratch arrays of its
 * own, counting lines; the accumulator then grows to hold them and they
 * are copied in after it, in file order and in parallel. So besides the
 * result only one window's scratch arrays are held, and the text only one
 * window at a time where the caller can drop the rest (a mapping's pages
 * behind, with MADV_DONTNEED; a pipe's bytes read a window at a time). An
 * error names the file's line: the accumulator counts the lines of every
 * window so far, and slice k of a window starts after the newlines of
 * slices 0..k-1, which all finished (only the first failing slice
 * matters: its line is the smallest).
 *
 * Every line of a slice but possibly the buffer's very last ends with '\n',
 * which serves as the sentinel that stops every scan: the hot loops need no
 * bounds checks. A last line without a newline is copied into a heap
 * buffer with one appended (no fixed-size line buffer anywhere).
 *
 * The format is the one asked for, or told by the first line that is
 * neither blank nor a comment (hog_text_sniff). Hashing (hash.c) is the
 * format's own where it has names (Vowpal Wabbit); LIBSVM's integer
 * indices are hashed by a pass over each slice's new rows after its
 * lines, so that the LIBSVM loop is the same with hashing off.
 */
#include "io/parse_int.h"

#include "core/forkjoin.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>

/* Below this, one thread; and each slice at least half of it. A second
 * slice costs its scratch arrays' first touch and their copy: on a9a
 * (2.3 MB) two threads loaded in 1.19x one thread's time, ijcnn1 and
 * reuters money-fx (7.8 and 8.3 MB) in 0.84-0.93x, news20.binary's test
 * set (31 MB) in 0.69x (12-05, two cores; docs/BENCHMARKS.md, "--algo
 * auto"). */
#define SMALL_INPUT (4u << 20)

void hog_slice_fail(struct hog_slice *s, hog_status st, uint64_t line,
                    const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->reason, sizeof s->reason, fmt, ap);
    va_end(ap);
    s->status = st;
    s->err_line = line;
}

static bool grow(void **p, uint64_t *cap, uint64_t need, size_t elem)
{
    uint64_t c = *cap ? *cap : 1024;
    while (c < need)
        c += c / 2 + 1024;
    if (c > SIZE_MAX / elem)
        return false;
    void *q = hog_realloc_big(*p, (size_t)(*cap * elem), (size_t)(c * elem));
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

/* The importance array (when there is one) at c rows. */
static bool grow_imp(struct hog_slice *s, uint64_t c)
{
    if (!s->imp)
        return true;
    float *q = realloc(s->imp, (size_t)c * sizeof *q);
    if (!q)
        return false;
    s->imp = q;
    return true;
}

bool hog_slice_grow_rows(struct hog_slice *s)
{
    uint64_t c = s->cap_rows;
    if (!grow((void **)&s->y, &c, s->rows + 1, sizeof *s->y))
        return false;
    uint64_t c2 = s->cap_rows + 1;
    if (!grow((void **)&s->off, &c2, c + 1, sizeof *s->off))
        return false;
    if (!grow_imp(s, c))
        return false;
    s->cap_rows = c;
    return true;
}

bool hog_slice_grow_nnz(struct hog_slice *s)
{
    uint64_t c = s->cap_nnz;
    if (!grow((void **)&s->idx, &c, s->nnz + 1, sizeof *s->idx))
        return false;
    uint64_t c2 = s->cap_nnz;
    if (!grow((void **)&s->val, &c2, c, sizeof *s->val))
        return false;
    c2 = s->cap_nnz;
    if (s->keep_ns && !grow((void **)&s->ns, &c2, c, sizeof *s->ns))
        return false;
    s->cap_nnz = c;
    return true;
}

/* The importance array of a slice, every row so far at 1. */
static bool imp_start(struct hog_slice *s, uint64_t rows)
{
    if (s->imp)
        return true;
    s->imp = malloc((s->cap_rows ? s->cap_rows : 1) * sizeof *s->imp);
    if (!s->imp)
        return false;
    for (uint64_t i = 0; i < rows; i++)
        s->imp[i] = 1.0f;
    return true;
}

bool hog_slice_set_importance(struct hog_slice *s, uint64_t row, float v)
{
    if (!s->imp && v == 1.0f)
        return true;
    if (!imp_start(s, row))
        return false;
    s->imp[row] = v;
    return true;
}

/* LIBSVM indices to their hashed weights: the rows from r0 on, each
 * merged (hog_row_merge) and packed down onto the entries before it. */
static bool hash_rows(struct hog_slice *s, uint64_t r0)
{
    const struct hog_hash_space *hs = s->hash;
    uint64_t a = s->off[r0], w = a;
    for (uint64_t i = r0; i < s->rows; i++) {
        uint64_t b = s->off[i + 1];
        uint32_t n = (uint32_t)(b - a);
        for (uint64_t e = a; e < b; e++) {
            uint32_t h = hog_hash_index(s->idx[e], hs->seed);
            s->collisions += hog_hash_space_note(hs, h);
            s->idx[w + (e - a)] = h & hs->mask;
            s->val[w + (e - a)] = s->val[e];
        }
        int64_t k = hog_row_merge(s->idx + w, s->val + w, NULL, n, &s->scratch);
        if (k < 0) {
            hog_slice_fail(s, HOG_ENOMEM, s->lines, "out of memory while "
                           "hashing a row of %u features", n);
            return false;
        }
        s->merged += n - (uint64_t)k;
        w += (uint64_t)k;
        s->off[i + 1] = w;
        a = b;
    }
    s->nnz = w;
    return true;
}

/* The slice's lines, then (LIBSVM with hashing) its new rows hashed. */
static bool slice_lines(struct hog_slice *s, const char *p, const char *end)
{
    uint64_t r0 = s->rows;
    if (!s->fmt->parse_lines(s, p, end))
        return false;
    return !s->hash || s->fmt->hashes_names || hash_rows(s, r0);
}

/* The slice's first arrays, for rows rows and nnz nonzeros (0: none
 * asked); false, with none kept, when out of memory. */
static bool slice_alloc(struct hog_slice *s, uint64_t rows, uint64_t nnz)
{
    if (!rows || !nnz || nnz > SIZE_MAX / 8 || rows > SIZE_MAX / 16)
        return false;
    s->cap_rows = rows;
    s->off = hog_malloc_big((rows + 1) * sizeof *s->off);
    s->y = hog_malloc_big(rows * sizeof *s->y);
    s->cap_nnz = nnz;
    s->idx = hog_malloc_big(nnz * sizeof *s->idx);
    s->val = hog_malloc_big(nnz * sizeof *s->val);
    s->ns = s->keep_ns ? malloc(nnz) : NULL;
    if (s->off && s->y && s->idx && s->val && (!s->keep_ns || s->ns))
        return true;
    free(s->off), free(s->y), free(s->idx), free(s->val), free(s->ns);
    s->off = NULL, s->y = NULL, s->idx = NULL, s->val = NULL, s->ns = NULL;
    s->cap_rows = s->cap_nnz = 0;
    return false;
}

static void *slice_run(void *arg)
{
    struct hog_slice *s = arg;
    s->status = HOG_OK;
    if (!s->off) {
        /* First use; the arrays are kept for the windows that follow. */
        uint64_t guess = (uint64_t)(s->end - s->beg) / 12 + 16;
        if (!slice_alloc(s, s->want_rows, s->want_nnz) &&
            !slice_alloc(s, guess / 16 + 16, guess)) {
            hog_slice_fail(s, HOG_ENOMEM, s->lines + 1,
                           "out of memory while parsing");
            return NULL;
        }
        s->off[0] = 0;
    }
    const char *end = s->end;
    if (end > s->beg && end[-1] != '\n') {
        /* The text's last line has no newline: parse the rest, then a
         * heap copy of that line with one appended. */
        const char *ls = end;
        while (ls > s->beg && ls[-1] != '\n')
            ls--;
        if (!slice_lines(s, s->beg, ls))
            return NULL;
        size_t n = (size_t)(end - ls);
        char *tail = malloc(n + 1);
        if (!tail) {
            hog_slice_fail(s, HOG_ENOMEM, s->lines + 1,
                           "out of memory while parsing");
            return NULL;
        }
        memcpy(tail, ls, n);
        tail[n] = '\n';
        slice_lines(s, tail, tail + n + 1);
        free(tail);
        return NULL;
    }
    slice_lines(s, s->beg, end);
    return NULL;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* Faults in [p, p + n) with one system call instead of a page fault per
 * 4 KiB (older kernels refuse it: harmless). */
static void populate(void *p, size_t n)
{
    if (n == 0)
        return;
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)4095;
    uintptr_t e = ((uintptr_t)p + n + 4095) & ~(uintptr_t)4095;
    madvise((void *)a, e - a, MADV_POPULATE_WRITE);
}

/* Rows [r0, r1) of a scratch slice, to be copied into the result. */
struct copy_job {
    const struct hog_slice *s;
    uint64_t r0, r1;
};

static void *slice_copy(void *arg)
{
    const struct copy_job *j = arg;
    const struct hog_slice *s = j->s;
    uint64_t r0 = j->r0, rows = j->r1 - j->r0;
    uint64_t e0 = s->off[r0], nnz = s->off[j->r1] - e0;
    uint64_t rb = s->row_base + r0, eb = s->nnz_base + e0;
    populate(s->dst_off + rb + 1, rows * sizeof *s->off);
    populate(s->dst_y + rb, rows * sizeof *s->y);
    populate(s->dst_idx + eb, nnz * sizeof *s->idx);
    populate(s->dst_val + eb, nnz * sizeof *s->val);
    for (uint64_t i = r0 + 1; i <= j->r1; i++)
        s->dst_off[s->row_base + i] = s->nnz_base + s->off[i];
    memcpy(s->dst_y + rb, s->y + r0, rows * sizeof *s->y);
    memcpy(s->dst_idx + eb, s->idx + e0, nnz * sizeof *s->idx);
    memcpy(s->dst_val + eb, s->val + e0, nnz * sizeof *s->val);
    if (s->dst_ns)
        memcpy(s->dst_ns + eb, s->ns + e0, nnz);
    if (s->dst_imp && s->imp)
        memcpy(s->dst_imp + rb, s->imp + r0, rows * sizeof *s->imp);
    else if (s->dst_imp)
        for (uint64_t i = 0; i < rows; i++)
            s->dst_imp[rb + i] = 1.0f;
    return NULL;
}

/* The scratch slices' copies as nslices jobs, so that every thread of the
 * feed copies: one job a slice, and the largest slice's rows cut in two
 * at its middle nonzero (with two threads, the one scratch slice is then
 * copied by both). */
static unsigned copy_jobs(const struct hog_slice *sl, unsigned nslices,
                          struct copy_job *job)
{
    unsigned n = 0, big = 1;
    for (unsigned i = 1; i < nslices; i++) {
        job[n++] = (struct copy_job){ &sl[i], 0, sl[i].rows };
        if (sl[i].nnz > sl[big].nnz)
            big = i;
    }
    const struct hog_slice *s = &sl[big];
    uint64_t lo = 0, hi = s->rows, half = s->nnz / 2;
    while (lo < hi) { /* the first row ending past half the nonzeros */
        uint64_t mid = lo + (hi - lo) / 2;
        if (s->off[mid + 1] <= half)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && lo < s->rows) {
        job[big - 1].r1 = lo;
        job[n++] = (struct copy_job){ s, lo, s->rows };
    }
    return n;
}

static void slice_free(struct hog_slice *s)
{
    free(s->off), free(s->y), free(s->idx), free(s->val), free(s->imp);
    free(s->ns);
    hog_name_set_free(s->names);
    s->off = NULL, s->y = NULL, s->idx = NULL, s->val = NULL, s->imp = NULL;
    s->ns = NULL, s->names = NULL;
    hog_hash_scratch_free(&s->scratch);
}


/* ---- the incremental parser ------------------------------------------------
 *
 * Slice 0 of every feed is the accumulator: its arrays are the result's,
 * and its row, nonzero and line counts run on from feed to feed, so that
 * it parses straight into place. The other slices are scratch, emptied
 * before each feed and kept (with their capacity) for the next; once all
 * have parsed, the accumulator grows to hold them and they are copied in
 * after it, in file order and in parallel. What is held besides the
 * result is thus one feed's text and its scratch slices. */
struct hog_svm_parser {
    const char *name;
    bool zero_based, started;
    bool unlabelled;          /* o->unlabelled */
    bool keep_names;          /* o->keep_names */
    bool keep_ns;             /* o->keep_namespaces, or interactions */
    unsigned threads;         /* o->threads: 0 = all online CPUs */
    uint64_t n_features_min;
    uint64_t n_features_asked; /* o->n_features */
    uint64_t text;            /* bytes fed, after a byte order mark */
    uint64_t want_rows, want_nnz; /* the accumulator's first capacity,
                                     from the whole text (expect_text) */
    hog_status failed;        /* the first error, after which feeds refuse */
    hog_format want;          /* o->format */
    const struct hog_text_format *fmt; /* NULL until told (auto) */
    unsigned hash_bits;       /* o->hash_bits */
    uint32_t hash_seed;
    bool hashing;             /* hs is set up */
    struct hog_hash_space hs;
    uint64_t collisions, merged; /* over every feed */
    struct hog_interactions cross; /* o->interactions (VW text only) */
    struct hog_slice *sl;     /* sl[0], the accumulator; then the scratch */
    unsigned nsl;
    struct copy_job *jobs;    /* nsl of them: the scratch slices' copies */
};

static const struct hog_text_format *const formats[] = {
    [HOG_FORMAT_LIBSVM] = &hog_text_libsvm,
    [HOG_FORMAT_VW] = &hog_text_vw,
};

/* The format is known: hashing set up as it asks (VW always hashes). */
static hog_status parser_settle(struct hog_svm_parser *p, hog_format f,
                                hog_err *err)
{
    if (p->cross.n && f != HOG_FORMAT_VW)
        return hog_errf(err, HOG_EINVAL,
                        "%s: interactions cross namespaces, which only "
                        "Vowpal Wabbit text has; this is %s text", p->name,
                        hog_format_name(f));
    if (p->keep_ns && !p->cross.n && f != HOG_FORMAT_VW)
        return hog_errf(err, HOG_EINVAL,
                        "%s: namespaces are kept of Vowpal Wabbit text; "
                        "this is %s text, which has none", p->name,
                        hog_format_name(f));
    if (p->keep_names && f != HOG_FORMAT_VW)
        return hog_errf(err, HOG_EINVAL,
                        "%s: --keep-names keeps the names of Vowpal Wabbit "
                        "text's features; this is %s text, whose features "
                        "are their indices", p->name, hog_format_name(f));
    p->fmt = formats[f];
    unsigned bits = p->hash_bits;
    if (bits == 0 && f == HOG_FORMAT_VW)
        bits = HOG_VW_HASH_BITS;
    if (bits == 0)
        return HOG_OK;
    hog_status st = hog_hash_space_init(&p->hs, bits, p->hash_seed, err);
    if (st != HOG_OK)
        return st;
    p->hashing = true;
    uint64_t nf = UINT64_C(1) << bits;
    p->n_features_min = p->n_features_asked > nf ? p->n_features_asked : nf;
    p->cross.mask = p->hs.mask;
    return HOG_OK;
}

hog_status hog_svm_parser_create(const char *name, const hog_load_opts *user,
                                 struct hog_svm_parser **out, hog_err *err)
{
    hog_load_opts o;
    hog_load_opts_take(user, &o);
    if (o.hash_bits > HOG_HASH_BITS_MAX)
        return hog_errf(err, HOG_EINVAL,
                        "--hash-bits %u: at most %u bits (2^32 weights would "
                        "need feature ids past the largest hogtrain keeps, "
                        "2^32 - 2)", o.hash_bits, HOG_HASH_BITS_MAX);
    if ((unsigned)o.format > HOG_FORMAT_VW)
        return hog_errf(err, HOG_EINVAL, "unknown text format %d",
                        (int)o.format);
    struct hog_interactions cross;
    hog_status cst = hog_interactions_parse(o.interactions, &cross, err);
    if (cst != HOG_OK)
        return cst;
    struct hog_svm_parser *p = calloc(1, sizeof *p);
    if (!p)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the parser");
    p->cross = cross;
    p->name = name;
    p->zero_based = o.zero_based;
    p->unlabelled = o.unlabelled != 0;
    p->keep_names = o.keep_names != 0;
    p->keep_ns = o.keep_namespaces != 0 || cross.n > 0;
    p->threads = o.threads;
    p->n_features_min = p->n_features_asked = o.n_features;
    p->want = o.format;
    p->hash_bits = o.hash_bits;
    p->hash_seed = o.hash_seed;
    if (o.format != HOG_FORMAT_AUTO) {
        hog_status st = parser_settle(p, o.format, err);
        if (st != HOG_OK) {
            free(p);
            return st;
        }
    }
    *out = p;
    return HOG_OK;
}

void hog_svm_parser_free(struct hog_svm_parser *p)
{
    if (!p)
        return;
    for (unsigned i = 0; i < p->nsl; i++)
        slice_free(&p->sl[i]);
    free(p->sl);
    free(p->jobs);
    if (p->hashing)
        hog_hash_space_free(&p->hs);
    free(p);
}

/* Room for n slices, the accumulator's state kept. */
static bool parser_slices(struct hog_svm_parser *p, unsigned n)
{
    if (n <= p->nsl)
        return true;
    size_t bytes = ((n * sizeof *p->sl + HOG_CACHELINE - 1) / HOG_CACHELINE) *
                   HOG_CACHELINE;
    struct hog_slice *sl = aligned_alloc(HOG_CACHELINE, bytes);
    struct copy_job *jobs = realloc(p->jobs, n * sizeof *jobs);
    if (jobs)
        p->jobs = jobs;
    if (!sl || !jobs) {
        free(sl);
        return false;
    }
    memset(sl, 0, bytes);
    if (p->nsl)
        memcpy(sl, p->sl, p->nsl * sizeof *sl);
    free(p->sl);
    p->sl = sl;
    p->nsl = n;
    return true;
}

/* The accumulator's arrays grown (by half again, as the line parsers
 * grow theirs) to hold rows rows and nnz nonzeros. */
static bool acc_reserve(struct hog_slice *a, uint64_t rows, uint64_t nnz)
{
    if (rows > a->cap_rows) {
        uint64_t c = a->cap_rows, c2;
        if (!grow((void **)&a->y, &c, rows, sizeof *a->y))
            return false;
        c2 = a->cap_rows + 1;
        if (!grow((void **)&a->off, &c2, c + 1, sizeof *a->off))
            return false;
        if (!grow_imp(a, c))
            return false;
        a->cap_rows = c;
    }
    if (nnz > a->cap_nnz) {
        uint64_t c = a->cap_nnz, c2;
        if (!grow((void **)&a->idx, &c, nnz, sizeof *a->idx))
            return false;
        c2 = a->cap_nnz;
        if (!grow((void **)&a->val, &c2, c, sizeof *a->val))
            return false;
        c2 = a->cap_nnz;
        if (a->keep_ns && !grow((void **)&a->ns, &c2, c, sizeof *a->ns))
            return false;
        a->cap_nnz = c;
    }
    return true;
}

static unsigned feed_threads(const struct hog_svm_parser *p, size_t len)
{
    unsigned t = p->threads ? p->threads : hog_online_cpus();
    if (len < SMALL_INPUT)
        t = 1;
    else if (t > len / (SMALL_INPUT / 2))
        t = (unsigned)(len / (SMALL_INPUT / 2)); /* slices of >= 2 MiB */
    return t ? t : 1;
}

static hog_status parser_feed(struct hog_svm_parser *p, const char *buf,
                              size_t len, unsigned nslices, hog_err *err)
{
    if (p->failed != HOG_OK)
        return hog_errf(err, p->failed, "%s: the parser already failed",
                        p->name);
    if (!p->started) {
        p->started = true;
        if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
            buf += 3, len -= 3; /* a UTF-8 byte order mark */
    }
    if (len == 0)
        return HOG_OK;
    if (!p->fmt) {
        /* Told by the first line with something on it; until then (blank
         * lines and comments) either format reads the same nothing. */
        hog_format f = hog_text_sniff(buf, len);
        hog_status st = f == HOG_FORMAT_AUTO ? HOG_OK
                                             : parser_settle(p, f, err);
        if (st != HOG_OK) {
            p->failed = st;
            return st;
        }
    }
    const struct hog_text_format *fmt = p->fmt ? p->fmt : &hog_text_libsvm;
    p->text += len;
    if (nslices == 0)
        nslices = feed_threads(p, len);
    if (nslices > len)
        nslices = (unsigned)len;
    if (!parser_slices(p, nslices)) {
        p->failed = HOG_ENOMEM;
        return hog_errf(err, HOG_ENOMEM, "out of memory for the parser");
    }
    struct hog_slice *sl = p->sl;
    /* Cut at line boundaries; a slice may end up empty. */
    const char *end = buf + len, *at = buf;
    for (unsigned i = 0; i < nslices; i++) {
        const char *cut = i + 1 == nslices ? end : buf + len / nslices * (i + 1);
        if (cut < at)
            cut = at;
        if (cut < end && cut > buf && cut[-1] != '\n') {
            const char *nl = memchr(cut, '\n', (size_t)(end - cut));
            cut = nl ? nl + 1 : end;
        }
        sl[i].beg = at;
        sl[i].end = cut;
        sl[i].name = p->name;
        sl[i].zero_based = p->zero_based;
        sl[i].unlabelled = p->unlabelled;
        sl[i].fmt = fmt;
        sl[i].hash = p->hashing ? &p->hs : NULL;
        sl[i].keep_ns = p->keep_ns;
        /* each slice's set lives across feeds; take_rows merges them */
        if (p->keep_names && !sl[i].names &&
            !(sl[i].names = calloc(1, sizeof *sl[i].names))) {
            p->failed = HOG_ENOMEM;
            return hog_errf(err, HOG_ENOMEM, "out of memory for the parser");
        }
        sl[i].collisions = sl[i].merged = 0;
        if (i == 0)
            sl[i].want_rows = p->want_rows, sl[i].want_nnz = p->want_nnz;
        if (i > 0) {
            sl[i].rows = sl[i].nnz = sl[i].lines = sl[i].nf = 0;
            sl[i].err_line = 0;
            free(sl[i].imp);
            sl[i].imp = NULL;
        }
        at = cut;
    }
    hog_fork_join(sl, sizeof *sl, nslices, slice_run, HOG_FORK_CALLER_FIRST);
    /* Only the first failing slice matters: its line is the smallest. The
     * accumulator counts the file's lines; a scratch slice its own. */
    struct hog_slice *a = &sl[0];
    hog_status st = HOG_OK;
    uint64_t lines = a->lines, rows = a->rows, nnz = a->nnz;
    bool imp = a->imp != NULL;
    if (a->status != HOG_OK)
        st = hog_errf(err, a->status, "%s:%llu: %s", p->name,
                      (unsigned long long)a->err_line, a->reason);
    for (unsigned i = 1; i < nslices && st == HOG_OK; i++) {
        if (sl[i].status != HOG_OK) {
            st = hog_errf(err, sl[i].status, "%s:%llu: %s", p->name,
                          (unsigned long long)(lines + sl[i].err_line),
                          sl[i].reason);
            break;
        }
        sl[i].row_base = rows;
        sl[i].nnz_base = nnz;
        lines += sl[i].lines;
        rows += sl[i].rows;
        nnz += sl[i].nnz;
        a->nf = sl[i].nf > a->nf ? sl[i].nf : a->nf;
        imp |= sl[i].imp != NULL;
    }
    if (st == HOG_OK && (!acc_reserve(a, rows, nnz) ||
                         (imp && !imp_start(a, a->rows))))
        st = hog_errf(err, HOG_ENOMEM,
                      "%s: out of memory for %llu rows and %llu nonzeros",
                      p->name, (unsigned long long)rows,
                      (unsigned long long)nnz);
    if (st != HOG_OK) {
        p->failed = st;
        return st;
    }
    for (unsigned i = 0; i < nslices; i++) {
        p->collisions += sl[i].collisions;
        p->merged += sl[i].merged;
    }
    for (unsigned i = 1; i < nslices; i++) {
        sl[i].dst_off = a->off, sl[i].dst_y = a->y;
        sl[i].dst_idx = a->idx, sl[i].dst_val = a->val;
        sl[i].dst_imp = a->imp;
        sl[i].dst_ns = a->ns;
    }
    if (nslices > 1)
        hog_fork_join(p->jobs, sizeof *p->jobs,
                      copy_jobs(sl, nslices, p->jobs), slice_copy,
                      HOG_FORK_CALLER_FIRST);
    a->lines = lines, a->rows = rows, a->nnz = nnz;
    return HOG_OK;
}

hog_status hog_svm_parser_feed(struct hog_svm_parser *p, const char *buf,
                               size_t len, hog_err *err)
{
    return parser_feed(p, buf, len, 0, err);
}

uint64_t hog_svm_parser_lines(const struct hog_svm_parser *p)
{
    return p->nsl ? p->sl[0].lines : 0;
}

uint64_t hog_svm_parser_bytes(const struct hog_svm_parser *p)
{
    if (!p->nsl)
        return 0;
    const struct hog_slice *a = &p->sl[0];
    return a->cap_rows * (sizeof *a->y + sizeof *a->off) +
           a->cap_nnz * (sizeof *a->idx + sizeof *a->val);
}

void hog_svm_parser_hashing(const struct hog_svm_parser *p, hog_hashing *h,
                            hog_format *format)
{
    memset(h, 0, sizeof *h);
    if (p->hashing) {
        h->bits = p->hs.bits;
        h->seed = p->hs.seed;
        h->collisions = p->collisions;
        h->merged = p->merged;
    }
    if (format)
        *format = p->fmt ? p->fmt->id : HOG_FORMAT_AUTO;
}

/* The rows so far as a data set; the accumulator starts afresh (its line
 * count kept). */
static hog_status take_rows(struct hog_svm_parser *p, hog_data **out,
                            hog_err *err)
{
    struct hog_slice *a = &p->sl[0];
    /* Take the arrays over, trimmed (a large block shrinks in place). */
    uint64_t rows = a->rows, nnz = a->nnz;
    uint64_t *off = realloc(a->off, (rows + 1) * sizeof *off);
    float *y = realloc(a->y, rows * sizeof *y);
    uint32_t *idx = nnz ? realloc(a->idx, nnz * sizeof *idx) : a->idx;
    float *val = nnz ? realloc(a->val, nnz * sizeof *val) : a->val;
    float *imp = a->imp ? realloc(a->imp, rows * sizeof *imp) : NULL;
    uint8_t *ns = a->ns && nnz ? realloc(a->ns, nnz) : a->ns;
    ns = ns ? ns : a->ns;
    off = off ? off : a->off, y = y ? y : a->y;
    idx = idx ? idx : a->idx, val = val ? val : a->val;
    imp = imp ? imp : a->imp;
    a->off = NULL, a->y = NULL, a->idx = NULL, a->val = NULL, a->imp = NULL;
    a->ns = NULL;
    a->rows = a->nnz = a->cap_rows = a->cap_nnz = 0;
    /* hashed indices are below n_features_min, the table's size */
    uint64_t nf = p->hashing || a->nf < p->n_features_min ? p->n_features_min
                                                          : a->nf;
    a->nf = 0;
    hog_status st = hog_data_adopt(rows, nnz, off, y, idx, val, nf, out, err);
    if (st != HOG_OK) {
        free(imp);
        free(ns);
        return st;
    }
    hog_svm_parser_hashing(p, &(*out)->hash, &(*out)->format);
    (*out)->importance = imp;
    if (p->keep_names && p->fmt == &hog_text_vw) {
        struct hog_name_set **sets = malloc(p->nsl * sizeof *sets + 1);
        for (unsigned i = 0; sets && i < p->nsl; i++)
            sets[i] = p->sl[i].names;
        st = sets ? hog_names_merge(sets, p->nsl, &(*out)->names, err)
                  : hog_errf(err, HOG_ENOMEM, "out of memory");
        free(sets);
        if (st != HOG_OK) {
            free(ns);
            hog_data_free(*out);
            *out = NULL;
            return st;
        }
    }
    if (p->cross.n) {
        if (!ns)
            ns = malloc(1); /* no entries: a tag array all the same */
        if (!ns) {
            hog_data_free(*out);
            *out = NULL;
            return hog_errf(err, HOG_ENOMEM, "out of memory");
        }
        (*out)->ns_mem = ns;
        (*out)->m.ns = ns;
        (*out)->cross = p->cross;
        hog_status cst = hog_cross_count(*out, p->name, err);
        if (cst != HOG_OK) {
            hog_data_free(*out);
            *out = NULL;
            return cst;
        }
    } else if (p->keep_ns) {
        /* kept, not crossed: m.ns stays NULL, so rows read as stored */
        (*out)->ns_mem = ns ? ns : malloc(1);
        if (!(*out)->ns_mem) {
            hog_data_free(*out);
            *out = NULL;
            return hog_errf(err, HOG_ENOMEM, "out of memory");
        }
    } else {
        free(ns);
    }
    return HOG_OK;
}

hog_status hog_svm_parser_take(struct hog_svm_parser *p, hog_data **out,
                               hog_err *err)
{
    *out = NULL;
    if (p->failed != HOG_OK)
        return hog_errf(err, p->failed, "%s: the parser already failed",
                        p->name);
    if (!p->nsl || p->sl[0].rows == 0)
        return HOG_OK;
    return take_rows(p, out, err);
}

hog_status hog_svm_parser_finish(struct hog_svm_parser *p, hog_data **out,
                                 hog_err *err)
{
    if (p->failed != HOG_OK)
        return hog_errf(err, p->failed, "%s: the parser already failed",
                        p->name);
    if (p->text == 0)
        return hog_errf(err, HOG_EPARSE, "%s: empty file, no rows", p->name);
    if (p->sl[0].rows == 0)
        return hog_errf(err, HOG_EPARSE,
                        "%s: no rows (only blank lines and comments)", p->name);
    p->failed = HOG_EINVAL; /* finished: nothing more to feed */
    return take_rows(p, out, err);
}

/* ---- whole texts -------------------------------------------------------- */

hog_status hog_parse_svm_slices(const char *buf, size_t len, const char *name,
                                const hog_load_opts *o, unsigned nslices,
                                hog_data **out, hog_err *err)
{
    struct hog_svm_parser *p = NULL;
    hog_status st = hog_svm_parser_create(name, o, &p, err);
    if (st != HOG_OK)
        return st;
    st = parser_feed(p, buf, len, nslices ? nslices : 1, err);
    if (st == HOG_OK)
        st = hog_svm_parser_finish(p, out, err);
    hog_svm_parser_free(p);
    return st;
}

/* The accumulator's first arrays sized for the whole text buf[0..len),
 * from the tokens and lines of its first 256 KiB and a tenth more: reserved
 * once, where sized from its first window's slice they grew window after
 * window, each time by a copy (onto huge pages, hog_realloc_big) with the
 * old arrays held beside the new. Room beyond the rows written is address
 * space, not memory; short of it, the arrays still grow. */
static void expect_text(struct hog_svm_parser *p, const char *buf, size_t len)
{
    size_t n = len < ((size_t)256 << 10) ? len : (size_t)256 << 10;
    uint64_t tokens, lines;
    hog_text_count(buf, n, &tokens, &lines);
    /* both counts are at most n, so both products at most 1.1 len */
    double scale = (double)len / (double)(n ? n : 1) * 1.1;
    p->want_rows = (uint64_t)((double)lines * scale) + 16;
    p->want_nnz = (uint64_t)((double)tokens * scale) + 16;
}

hog_status hog_parse_svm_windows(const char *buf, size_t len, const char *name,
                                 const hog_load_opts *o, size_t window,
                                 bool drop_behind, hog_data **out, hog_err *err)
{
    struct hog_svm_parser *p = NULL;
    hog_status st = hog_svm_parser_create(name, o, &p, err);
    if (st != HOG_OK)
        return st;
    if (window == 0)
        window = HOG_PARSE_WINDOW;
    expect_text(p, buf, len);
    const uintptr_t page = 4096;
    const char *end = buf + len, *at = buf;
    uintptr_t dropped = ((uintptr_t)buf + page - 1) & ~(page - 1);
    while (st == HOG_OK && at < end) {
        /* Whole lines of about window bytes: cut after the newline that
         * ends the line in progress at the nominal end. */
        const char *cut = (size_t)(end - at) > window ? at + window : end;
        if (cut < end && cut[-1] != '\n') {
            const char *nl = memchr(cut, '\n', (size_t)(end - cut));
            cut = nl ? nl + 1 : end;
        }
        st = hog_svm_parser_feed(p, at, (size_t)(cut - at), err);
        at = cut;
        if (drop_behind) {
            /* The pages wholly behind: parsed, never needed again. */
            uintptr_t to = (uintptr_t)at & ~(page - 1);
            if (at == end)
                to = ((uintptr_t)end + page - 1) & ~(page - 1);
            if (to > dropped) {
                madvise((void *)dropped, to - dropped, MADV_DONTNEED);
                dropped = to;
            }
        }
    }
    if (st == HOG_OK)
        st = hog_svm_parser_finish(p, out, err);
    hog_svm_parser_free(p);
    return st;
}

hog_status hog_parse_svm(const char *buf, size_t len, const char *name,
                         const hog_load_opts *o, hog_data **out, hog_err *err)
{
    return hog_parse_svm_windows(buf, len, name, o, 0, false, out, err);
}
