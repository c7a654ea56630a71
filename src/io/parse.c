/*
 * The LIBSVM/SVMlight text parser.
 *
 *     label [qid:N] idx:val idx:val ... [# comment]
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
 * which serves as the sentinel that stops every scan: the hot loop needs no
 * bounds checks. A last line without a newline is copied into a heap buffer
 * with one appended (no fixed-size line buffer anywhere).
 *
 * Numbers are parsed by hand: a decimal mantissa of up to 19 significant
 * digits and a power of ten 10^e. When the mantissa is at most 2^53 and
 * |e| <= 22 (Clinger's fast path), m * 10^e for e >= 0 is one correctly
 * rounded IEEE multiplication; for e < 0, m * (10^-k rounded) lands within
 * 2 double ulps of the exact value, which rounds to the same float unless
 * it is within a few ulps of a point halfway between two floats: then the
 * correctly rounded division m / 10^k is used. Rounding a correctly
 * rounded double to float equals rounding the exact decimal unless the
 * double sits exactly halfway; that case, subnormal or overflowing values
 * and every other shape (over 19 digits, larger exponents) go to strtof.
 * Values and labels are thus stored as float, rounded once from the exact
 * decimal, bit-identical to strtof.
 */
#include "io/io.h"

#include "core/forkjoin.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define SMALL_INPUT (1u << 20) /* below this, one thread */

/* What one thread builds from its slice. off has rows + 1 entries, local. */
struct slice {
    const char *beg, *end;
    const char *name;
    bool zero_based;
    uint64_t rows, nnz, cap_rows, cap_nnz;
    uint64_t *off;
    float *y;
    uint32_t *idx;
    float *val;
    uint64_t lines;       /* newlines seen (all of them when status is OK) */
    hog_status status;
    uint64_t err_line;    /* 1-based line within the slice */
    char reason[512];
    /* phase two: where this slice lands in the final arrays */
    uint64_t row_base, nnz_base;
    uint64_t *dst_off;
    float *dst_y, *dst_val;
    uint32_t *dst_idx;
} __attribute__((aligned(HOG_CACHELINE)));

static const double pow10_tab[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static inline bool is_digit(char c) { return (unsigned char)(c - '0') < 10; }
static inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
/* What may follow a number or a qid token. */
static inline bool is_delim(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '#';
}

/* Length of the token at p (up to a blank, newline or '#'), for messages. */
static int token_len(const char *p)
{
    int n = 0;
    while (n < 40 && !is_delim(p[n]) && p[n] != '\0')
        n++;
    return n;
}

enum num_res { NUM_OK = 0, NUM_BAD, NUM_NAN, NUM_INF, NUM_RANGE };

/* strtof on a copy of the token [p, q): the slow, always-right path. */
static enum num_res slow_float(const char *p, const char *q, float *out)
{
    char small[64];
    size_t n = (size_t)(q - p);
    char *s = n < sizeof small ? small : malloc(n + 1);
    if (!s)
        return NUM_BAD;
    memcpy(s, p, n);
    s[n] = 0;
    char *e;
    errno = 0;
    float f = strtof(s, &e);
    bool whole = e == s + n;
    if (s != small)
        free(s);
    if (!whole)
        return NUM_BAD;
    if (isnan(f))
        return NUM_NAN;
    if (isinf(f))
        return NUM_RANGE; /* a finite decimal too large for float */
    *out = f;
    return NUM_OK;
}

/* Case-insensitive "nan" / "inf" / "infinity" with an optional sign. */
static enum num_res classify_word(const char *p)
{
    if (*p == '+' || *p == '-')
        p++;
    const char *q = p;
    while (!is_delim(*q) && *q != ':' && *q != '\0')
        q++;
    size_t n = (size_t)(q - p);
    if (n == 3 && strncasecmp(p, "nan", 3) == 0)
        return NUM_NAN;
    if ((n == 3 && strncasecmp(p, "inf", 3) == 0) ||
        (n == 8 && strncasecmp(p, "infinity", 8) == 0))
        return NUM_INF;
    if (n > 3 && strncasecmp(p, "nan(", 4) == 0)
        return NUM_NAN;
    return NUM_BAD;
}

/* 10^-k rounded to double, for the multiplication fast path. */
static const double inv_pow10_tab[23] = {
    1e0,   1e-1,  1e-2,  1e-3,  1e-4,  1e-5,  1e-6,  1e-7,  1e-8,  1e-9,  1e-10, 1e-11,
    1e-12, 1e-13, 1e-14, 1e-15, 1e-16, 1e-17, 1e-18, 1e-19, 1e-20, 1e-21, 1e-22,
};

/* Distance of a double's 29 low mantissa bits from 1 << 28, the pattern of
 * a value exactly halfway between two adjacent floats of its binade. */
static inline uint32_t from_half(double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    uint32_t low = (uint32_t)(bits & 0x1FFFFFFFu);
    return low > 0x10000000u ? low - 0x10000000u : 0x10000000u - low;
}

/* Parses a decimal number at *pp into *out; on success *pp is just past it
 * and the next byte is a delimiter. */
static inline __attribute__((always_inline)) enum num_res
parse_float(const char **pp, float *out)
{
    const char *p = *pp, *start = p;
    bool neg = false;
    if (*p == '-')
        neg = true, p++;
    else if (*p == '+')
        p++;
    uint64_t m = 0;
    int e10 = 0;
    bool lost = false; /* non-zero digits beyond the 19th significant one */
    const char *ip = p;
    while (is_digit(*p))
        p++;
    const char *ie = p, *fp = p, *fe = p;
    if (*p == '.') {
        fp = ++p;
        while (is_digit(*p))
            p++;
        fe = p;
    }
    if (HOG_UNLIKELY(ie == ip && fe == fp))
        return classify_word(start);
    if (HOG_LIKELY((ie - ip) + (fe - fp) <= 19)) {
        /* Common case: at most 19 digits in all, no overflow possible. */
        for (const char *q = ip; q < ie; q++)
            m = m * 10 + (uint64_t)(*q - '0');
        for (const char *q = fp; q < fe; q++)
            m = m * 10 + (uint64_t)(*q - '0');
        e10 = -(int)(fe - fp);
    } else {
        int nd = 0; /* significant digits kept */
        for (const char *q = ip; q < ie; q++) {
            if (nd < 19) {
                m = m * 10 + (uint64_t)(*q - '0');
                nd += m != 0;
            } else {
                e10++;
                lost |= *q != '0';
            }
        }
        for (const char *q = fp; q < fe; q++) {
            if (nd < 19) {
                m = m * 10 + (uint64_t)(*q - '0');
                nd += m != 0;
                e10--;
            } else {
                lost |= *q != '0';
            }
        }
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        bool eneg = false;
        if (*p == '-')
            eneg = true, p++;
        else if (*p == '+')
            p++;
        if (!is_digit(*p))
            return NUM_BAD;
        int x = 0;
        for (; is_digit(*p); p++)
            if (x < 100000)
                x = x * 10 + (*p - '0');
        e10 += eneg ? -x : x;
    }
    if (HOG_UNLIKELY(!is_delim(*p)))
        return NUM_BAD;
    *pp = p;
    if (m == 0 && !lost) {
        *out = neg ? -0.0f : 0.0f;
        return NUM_OK;
    }
    if (HOG_LIKELY(!lost && m <= (UINT64_C(1) << 53) && e10 >= -22 &&
                   e10 <= 22)) {
        double dm = (double)m, d;
        if (e10 >= 0) {
            d = dm * pow10_tab[e10]; /* exact operands: correctly rounded */
        } else {
            /* m * 10^-k is within 2 double ulps of the exact value, so it
             * rounds to the same float unless it lies within a few ulps of
             * a halfway point; then divide, which is correctly rounded. */
            d = dm * inv_pow10_tab[-e10];
            if (HOG_UNLIKELY(from_half(d) <= 8))
                d = dm / pow10_tab[-e10];
        }
        /* A correctly rounded double exactly halfway between two floats,
         * or one outside the normal float range: let strtof round. */
        if (HOG_LIKELY(from_half(d) != 0 && d >= (double)FLT_MIN &&
                       d <= (double)FLT_MAX)) {
            *out = neg ? -(float)d : (float)d;
            return NUM_OK;
        }
    }
    return slow_float(start, p, out);
}

static void slice_fail(struct slice *s, hog_status st, uint64_t line,
                       const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void slice_fail(struct slice *s, hog_status st, uint64_t line,
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
    void *q = realloc(*p, (size_t)(c * elem));
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

static bool grow_rows(struct slice *s)
{
    uint64_t c = s->cap_rows;
    if (!grow((void **)&s->y, &c, s->rows + 1, sizeof *s->y))
        return false;
    uint64_t c2 = s->cap_rows + 1;
    if (!grow((void **)&s->off, &c2, c + 1, sizeof *s->off))
        return false;
    s->cap_rows = c;
    return true;
}

static bool grow_nnz(struct slice *s)
{
    uint64_t c = s->cap_nnz;
    if (!grow((void **)&s->idx, &c, s->nnz + 1, sizeof *s->idx))
        return false;
    uint64_t c2 = s->cap_nnz;
    if (!grow((void **)&s->val, &c2, c, sizeof *s->val))
        return false;
    s->cap_nnz = c;
    return true;
}

/* Skips a comment from p (at '#') to its newline; false on a NUL byte. */
static const char *skip_comment(const char *p, bool *nul)
{
    const char *nl = rawmemchr(p, '\n');
    *nul = memchr(p, '\0', (size_t)(nl - p)) != NULL;
    return nl;
}

/* Parses the lines in [p, end); every line ends with '\n' (end[-1] too).
 * Returns false with s->status set on the first error. */
static bool parse_lines(struct slice *s, const char *p, const char *end)
{
    const bool zb = s->zero_based;
    uint64_t line = s->lines;
    while (p < end) {
        line++;
        while (is_blank(*p))
            p++;
        if (*p == '\n') {
            p++;
            continue;
        }
        if (*p == '#') {
            bool nul;
            p = skip_comment(p, &nul);
            if (nul)
                goto nul_byte;
            p++;
            continue;
        }
        if (HOG_UNLIKELY(s->rows == s->cap_rows) && !grow_rows(s))
            goto oom;
        float label = 0;
        const char *t = p;
        enum num_res r = parse_float(&p, &label);
        if (HOG_UNLIKELY(r != NUM_OK)) {
            if (*t == '\0' || (r == NUM_BAD && t[token_len(t)] == '\0'))
                goto nul_byte;
            if (r == NUM_NAN)
                slice_fail(s, HOG_EPARSE, line, "label is NaN");
            else if (r == NUM_INF)
                slice_fail(s, HOG_EPARSE, line, "label is infinite");
            else if (r == NUM_RANGE)
                slice_fail(s, HOG_ERANGE, line,
                           "label '%.*s' is out of range for float",
                           token_len(t), t);
            else
                slice_fail(s, HOG_EPARSE, line, "bad label '%.*s'",
                           token_len(t), t);
            goto fail;
        }
        uint64_t prev = 0; /* previous index + 1; 0 before the first */
        uint64_t n = s->nnz;
        for (;;) {
            while (is_blank(*p))
                p++;
            if (*p == '\n')
                break;
            if (*p == '#') {
                bool nul;
                p = skip_comment(p, &nul);
                if (nul)
                    goto nul_byte;
                break;
            }
            t = p;
            uint64_t j = 0;
            int nd = 0;
            for (; is_digit(*p); p++, nd++)
                if (nd < 19)
                    j = j * 10 + (uint64_t)(*p - '0');
            if (HOG_UNLIKELY(nd == 0 || *p != ':')) {
                if (*p == '\0')
                    goto nul_byte;
                if (nd == 0 && strncmp(t, "qid:", 4) == 0) {
                    p = t + 4;
                    if (!is_digit(*p)) {
                        slice_fail(s, HOG_EPARSE, line, "bad qid '%.*s'",
                                   token_len(t), t);
                        goto fail;
                    }
                    while (is_digit(*p))
                        p++;
                    if (!is_delim(*p)) {
                        if (*p == '\0')
                            goto nul_byte;
                        slice_fail(s, HOG_EPARSE, line, "bad qid '%.*s'",
                                   token_len(t), t);
                        goto fail;
                    }
                    continue;
                }
                if (nd > 0 && is_delim(*p))
                    slice_fail(s, HOG_EPARSE, line,
                               "missing ':' in feature '%.*s' (expected idx:value)",
                               token_len(t), t);
                else
                    slice_fail(s, HOG_EPARSE, line,
                               "bad feature index in '%.*s' (expected idx:value)",
                               token_len(t), t);
                goto fail;
            }
            p++; /* ':' */
            if (HOG_UNLIKELY(nd > 19 || j > (uint64_t)HOG_MAX_FEATURE_INDEX + !zb)) {
                slice_fail(s, HOG_ERANGE, line,
                           "feature index %.*s is beyond the largest supported (%llu)",
                           nd, t,
                           (unsigned long long)HOG_MAX_FEATURE_INDEX + !zb);
                goto fail;
            }
            if (!zb) {
                if (HOG_UNLIKELY(j == 0)) {
                    slice_fail(s, HOG_EPARSE, line,
                               "feature index 0 in a 1-based file (use --zero-based)");
                    goto fail;
                }
                j--;
            }
            if (HOG_UNLIKELY(j + 1 <= prev)) {
                uint64_t shown = j + !zb, before = prev - 1 + !zb;
                if (j + 1 == prev)
                    slice_fail(s, HOG_EPARSE, line,
                               "feature index %llu repeated (indices must be strictly increasing)",
                               (unsigned long long)shown);
                else
                    slice_fail(s, HOG_EPARSE, line,
                               "feature index %llu after %llu (indices must be strictly increasing)",
                               (unsigned long long)shown,
                               (unsigned long long)before);
                goto fail;
            }
            prev = j + 1;
            float v = 0;
            const char *vt = p;
            r = parse_float(&p, &v);
            if (HOG_UNLIKELY(r != NUM_OK)) {
                unsigned long long shown = (unsigned long long)(j + !zb);
                if (is_delim(*vt))
                    slice_fail(s, HOG_EPARSE, line,
                               "missing value after '%llu:'", shown);
                else if (*vt == '\0' || (r == NUM_BAD && vt[token_len(vt)] == '\0'))
                    goto nul_byte;
                else if (r == NUM_NAN)
                    slice_fail(s, HOG_EPARSE, line,
                               "value of feature %llu is NaN", shown);
                else if (r == NUM_INF)
                    slice_fail(s, HOG_EPARSE, line,
                               "value of feature %llu is infinite", shown);
                else if (r == NUM_RANGE)
                    slice_fail(s, HOG_ERANGE, line,
                               "value '%.*s' of feature %llu is out of range for float",
                               token_len(vt), vt, shown);
                else
                    slice_fail(s, HOG_EPARSE, line,
                               "bad value '%.*s' for feature %llu",
                               token_len(vt), vt, shown);
                goto fail;
            }
            if (HOG_UNLIKELY(n == s->cap_nnz)) {
                s->nnz = n;
                if (!grow_nnz(s))
                    goto oom;
            }
            s->idx[n] = (uint32_t)j;
            s->val[n] = v;
            n++;
        }
        p++; /* '\n' */
        s->nnz = n;
        s->y[s->rows] = label;
        s->off[++s->rows] = n;
    }
    s->lines = line;
    return true;
nul_byte:
    slice_fail(s, HOG_EPARSE, line, "NUL byte in the line");
    goto fail;
oom:
    slice_fail(s, HOG_ENOMEM, line, "out of memory while parsing");
fail:
    s->lines = line;
    return false;
}

static void *slice_run(void *arg)
{
    struct slice *s = arg;
    s->status = HOG_OK;
    if (!s->off) {
        /* First use; the arrays are kept for the windows that follow. */
        uint64_t guess = (uint64_t)(s->end - s->beg) / 12 + 16;
        s->cap_rows = guess / 16 + 16;
        s->off = malloc((s->cap_rows + 1) * sizeof *s->off);
        s->y = malloc(s->cap_rows * sizeof *s->y);
        s->cap_nnz = guess;
        s->idx = malloc(s->cap_nnz * sizeof *s->idx);
        s->val = malloc(s->cap_nnz * sizeof *s->val);
        if (!s->off || !s->y || !s->idx || !s->val) {
            slice_fail(s, HOG_ENOMEM, s->lines + 1, "out of memory while parsing");
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
        if (!parse_lines(s, s->beg, ls))
            return NULL;
        size_t n = (size_t)(end - ls);
        char *tail = malloc(n + 1);
        if (!tail) {
            slice_fail(s, HOG_ENOMEM, s->lines + 1, "out of memory while parsing");
            return NULL;
        }
        memcpy(tail, ls, n);
        tail[n] = '\n';
        parse_lines(s, tail, tail + n + 1);
        free(tail);
        return NULL;
    }
    parse_lines(s, s->beg, end);
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

static void *slice_copy(void *arg)
{
    struct slice *s = arg;
    populate(s->dst_off + s->row_base + 1, s->rows * sizeof *s->off);
    populate(s->dst_y + s->row_base, s->rows * sizeof *s->y);
    populate(s->dst_idx + s->nnz_base, s->nnz * sizeof *s->idx);
    populate(s->dst_val + s->nnz_base, s->nnz * sizeof *s->val);
    for (uint64_t i = 1; i <= s->rows; i++)
        s->dst_off[s->row_base + i] = s->nnz_base + s->off[i];
    memcpy(s->dst_y + s->row_base, s->y, s->rows * sizeof *s->y);
    memcpy(s->dst_idx + s->nnz_base, s->idx, s->nnz * sizeof *s->idx);
    memcpy(s->dst_val + s->nnz_base, s->val, s->nnz * sizeof *s->val);
    return NULL;
}

static void slice_free(struct slice *s)
{
    free(s->off), free(s->y), free(s->idx), free(s->val);
    s->off = NULL, s->y = NULL, s->idx = NULL, s->val = NULL;
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
    unsigned threads;         /* o->threads: 0 = all online CPUs */
    uint64_t n_features_min;
    uint64_t text;            /* bytes fed, after a byte order mark */
    hog_status failed;        /* the first error, after which feeds refuse */
    struct slice *sl;         /* sl[0], the accumulator; then the scratch */
    unsigned nsl;
};

hog_status hog_svm_parser_create(const char *name, const hog_load_opts *o,
                                 struct hog_svm_parser **out, hog_err *err)
{
    struct hog_svm_parser *p = calloc(1, sizeof *p);
    if (!p)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the parser");
    p->name = name;
    p->zero_based = o && o->zero_based;
    p->threads = o ? o->threads : 0;
    p->n_features_min = o ? o->n_features : 0;
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
    free(p);
}

/* Room for n slices, the accumulator's state kept. */
static bool parser_slices(struct hog_svm_parser *p, unsigned n)
{
    if (n <= p->nsl)
        return true;
    size_t bytes = ((n * sizeof *p->sl + HOG_CACHELINE - 1) / HOG_CACHELINE) *
                   HOG_CACHELINE;
    struct slice *sl = aligned_alloc(HOG_CACHELINE, bytes);
    if (!sl)
        return false;
    memset(sl, 0, bytes);
    if (p->nsl)
        memcpy(sl, p->sl, p->nsl * sizeof *sl);
    free(p->sl);
    p->sl = sl;
    p->nsl = n;
    return true;
}

/* The accumulator's arrays grown (by half again, as in parse_lines) to
 * hold rows rows and nnz nonzeros. */
static bool acc_reserve(struct slice *a, uint64_t rows, uint64_t nnz)
{
    if (rows > a->cap_rows) {
        uint64_t c = a->cap_rows, c2;
        if (!grow((void **)&a->y, &c, rows, sizeof *a->y))
            return false;
        c2 = a->cap_rows + 1;
        if (!grow((void **)&a->off, &c2, c + 1, sizeof *a->off))
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
        a->cap_nnz = c;
    }
    return true;
}

static unsigned feed_threads(const struct hog_svm_parser *p, size_t len)
{
    unsigned t = p->threads ? p->threads : hog_online_cpus();
    if (len < SMALL_INPUT)
        t = 1;
    else if (t > len / (SMALL_INPUT / 4))
        t = (unsigned)(len / (SMALL_INPUT / 4)); /* slices of >= 256 KiB */
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
    p->text += len;
    if (nslices == 0)
        nslices = feed_threads(p, len);
    if (nslices > len)
        nslices = (unsigned)len;
    if (!parser_slices(p, nslices)) {
        p->failed = HOG_ENOMEM;
        return hog_errf(err, HOG_ENOMEM, "out of memory for the parser");
    }
    struct slice *sl = p->sl;
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
        if (i > 0) {
            sl[i].rows = sl[i].nnz = sl[i].lines = 0;
            sl[i].err_line = 0;
        }
        at = cut;
    }
    hog_fork_join(sl, sizeof *sl, nslices, slice_run, HOG_FORK_CALLER_FIRST);
    /* Only the first failing slice matters: its line is the smallest. The
     * accumulator counts the file's lines; a scratch slice its own. */
    struct slice *a = &sl[0];
    hog_status st = HOG_OK;
    uint64_t lines = a->lines, rows = a->rows, nnz = a->nnz;
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
    }
    if (st == HOG_OK && !acc_reserve(a, rows, nnz))
        st = hog_errf(err, HOG_ENOMEM,
                      "%s: out of memory for %llu rows and %llu nonzeros",
                      p->name, (unsigned long long)rows,
                      (unsigned long long)nnz);
    if (st != HOG_OK) {
        p->failed = st;
        return st;
    }
    for (unsigned i = 1; i < nslices; i++) {
        sl[i].dst_off = a->off, sl[i].dst_y = a->y;
        sl[i].dst_idx = a->idx, sl[i].dst_val = a->val;
    }
    if (nslices > 1)
        hog_fork_join(sl + 1, sizeof *sl, nslices - 1, slice_copy,
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

hog_status hog_svm_parser_finish(struct hog_svm_parser *p, hog_data **out,
                                 hog_err *err)
{
    if (p->failed != HOG_OK)
        return hog_errf(err, p->failed, "%s: the parser already failed",
                        p->name);
    if (p->text == 0)
        return hog_errf(err, HOG_EPARSE, "%s: empty file, no rows", p->name);
    struct slice *a = &p->sl[0];
    if (a->rows == 0)
        return hog_errf(err, HOG_EPARSE,
                        "%s: no rows (only blank lines and comments)", p->name);
    /* Take the arrays over, trimmed (a large block shrinks in place). */
    uint64_t rows = a->rows, nnz = a->nnz;
    uint64_t *off = realloc(a->off, (rows + 1) * sizeof *off);
    float *y = realloc(a->y, rows * sizeof *y);
    uint32_t *idx = nnz ? realloc(a->idx, nnz * sizeof *idx) : a->idx;
    float *val = nnz ? realloc(a->val, nnz * sizeof *val) : a->val;
    off = off ? off : a->off, y = y ? y : a->y;
    idx = idx ? idx : a->idx, val = val ? val : a->val;
    a->off = NULL, a->y = NULL, a->idx = NULL, a->val = NULL;
    a->rows = a->nnz = a->cap_rows = a->cap_nnz = 0;
    p->failed = HOG_EINVAL; /* finished: nothing more to feed */
    return hog_data_wrap(rows, nnz, off, y, idx, val, p->n_features_min, out,
                         err);
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
