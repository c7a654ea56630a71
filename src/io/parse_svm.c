/*
 * LIBSVM/SVMlight lines (the format's entry in parse.c's table):
 *
 *     label [qid:N] idx:val idx:val ... [# comment]
 *
 * Indices are integers, 1-based (0-based with --zero-based) and strictly
 * increasing within a row; qid tokens are read and dropped. Every line
 * ends with '\n', which serves as the sentinel that stops every scan: the
 * hot loop needs no bounds checks. With hashing asked for, the indices
 * are hashed after the slice's lines by parse.c, so that this loop is the
 * same with hashing off.
 */
#include "io/parse_int.h"

/* What may follow a number or a qid token. */
static inline bool is_delim(char c)
{
    return num_delim(c, false);
}

/* Length of the token at p (up to a blank, newline or '#'), for messages. */
static int token_len(const char *p)
{
    int n = 0;
    while (n < 40 && !is_delim(p[n]) && p[n] != '\0')
        n++;
    return n;
}

/* A label with a comma in it on a line without one ':' is a CSV row (a
 * header "label,f1,f2" or "1,0.5,3"), the format newcomers try first. */
static bool looks_like_csv(const char *t)
{
    const char *nl = rawmemchr(t, '\n');
    return memchr(t, ',', (size_t)token_len(t)) &&
           !memchr(t, ':', (size_t)(nl - t));
}

static const char csv_hint[] =
    ": the file looks like CSV (fields between commas), which hogtrain does "
    "not read; it reads LIBSVM/SVMlight text, a row per line as 'label "
    "index:value index:value ...' (1 3:2.5 7:1), or Vowpal Wabbit text "
    "(--format vw)";

/* Skips a comment from p (at '#') to its newline; false on a NUL byte. */
static const char *skip_comment(const char *p, bool *nul)
{
    const char *nl = rawmemchr(p, '\n');
    *nul = memchr(p, '\0', (size_t)(nl - p)) != NULL;
    return nl;
}

/* Parses the lines in [p, end); every line ends with '\n' (end[-1] too).
 * Returns false with s->status set on the first error. */
static bool svm_parse_lines(struct hog_slice *s, const char *p, const char *end)
{
    const bool zb = s->zero_based;
    uint64_t line = s->lines;
    uint64_t nf = s->nf;
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
        if (HOG_UNLIKELY(s->rows == s->cap_rows) && !hog_slice_grow_rows(s))
            goto oom;
        float label = 0;
        const char *t = p;
        enum num_res r = NUM_OK;
        if (s->unlabelled && memchr(t, ':', (size_t)token_len(t)))
            label = NAN; /* unlabelled: it starts with its first index:value */
        else
            r = parse_float(&p, &label, false);
        if (HOG_UNLIKELY(r != NUM_OK)) {
            if (*t == '\0' || (r == NUM_BAD && t[token_len(t)] == '\0'))
                goto nul_byte;
            if (r == NUM_NAN)
                hog_slice_fail(s, HOG_EPARSE, line, "label is NaN");
            else if (r == NUM_INF)
                hog_slice_fail(s, HOG_EPARSE, line, "label is infinite");
            else if (r == NUM_RANGE)
                hog_slice_fail(s, HOG_ERANGE, line,
                           "label '%.*s' is out of range for float",
                           token_len(t), t);
            else
                hog_slice_fail(s, HOG_EPARSE, line, "bad label '%.*s'%s",
                           token_len(t), t,
                           looks_like_csv(t) ? csv_hint : "");
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
                        hog_slice_fail(s, HOG_EPARSE, line, "bad qid '%.*s'",
                                   token_len(t), t);
                        goto fail;
                    }
                    while (is_digit(*p))
                        p++;
                    if (!is_delim(*p)) {
                        if (*p == '\0')
                            goto nul_byte;
                        hog_slice_fail(s, HOG_EPARSE, line, "bad qid '%.*s'",
                                   token_len(t), t);
                        goto fail;
                    }
                    continue;
                }
                if (nd > 0 && is_delim(*p))
                    hog_slice_fail(s, HOG_EPARSE, line,
                               "missing ':' in feature '%.*s' (expected idx:value)",
                               token_len(t), t);
                else
                    hog_slice_fail(s, HOG_EPARSE, line,
                               "bad feature index in '%.*s' (expected idx:value)",
                               token_len(t), t);
                goto fail;
            }
            p++; /* ':' */
            if (HOG_UNLIKELY(nd > 19 || j > (uint64_t)HOG_MAX_FEATURE_INDEX + !zb)) {
                hog_slice_fail(s, HOG_ERANGE, line,
                           "feature index %.*s is beyond the largest supported (%llu)",
                           nd, t,
                           (unsigned long long)HOG_MAX_FEATURE_INDEX + !zb);
                goto fail;
            }
            if (!zb) {
                if (HOG_UNLIKELY(j == 0)) {
                    hog_slice_fail(s, HOG_EPARSE, line,
                               "feature index 0 in a 1-based file (use --zero-based)");
                    goto fail;
                }
                j--;
            }
            if (HOG_UNLIKELY(j + 1 <= prev)) {
                uint64_t shown = j + !zb, before = prev - 1 + !zb;
                if (j + 1 == prev)
                    hog_slice_fail(s, HOG_EPARSE, line,
                               "feature index %llu repeated (indices must be strictly increasing)",
                               (unsigned long long)shown);
                else
                    hog_slice_fail(s, HOG_EPARSE, line,
                               "feature index %llu after %llu (indices must be strictly increasing)",
                               (unsigned long long)shown,
                               (unsigned long long)before);
                goto fail;
            }
            prev = j + 1;
            float v = 0;
            const char *vt = p;
            r = parse_float(&p, &v, false);
            if (HOG_UNLIKELY(r != NUM_OK)) {
                unsigned long long shown = (unsigned long long)(j + !zb);
                if (is_delim(*vt))
                    hog_slice_fail(s, HOG_EPARSE, line,
                               "missing value after '%llu:'", shown);
                else if (*vt == '\0' || (r == NUM_BAD && vt[token_len(vt)] == '\0'))
                    goto nul_byte;
                else if (r == NUM_NAN)
                    hog_slice_fail(s, HOG_EPARSE, line,
                               "value of feature %llu is NaN", shown);
                else if (r == NUM_INF)
                    hog_slice_fail(s, HOG_EPARSE, line,
                               "value of feature %llu is infinite", shown);
                else if (r == NUM_RANGE)
                    hog_slice_fail(s, HOG_ERANGE, line,
                               "value '%.*s' of feature %llu is out of range for float",
                               token_len(vt), vt, shown);
                else
                    hog_slice_fail(s, HOG_EPARSE, line,
                               "bad value '%.*s' for feature %llu",
                               token_len(vt), vt, shown);
                goto fail;
            }
            if (HOG_UNLIKELY(n == s->cap_nnz)) {
                s->nnz = n;
                if (!hog_slice_grow_nnz(s))
                    goto oom;
            }
            s->idx[n] = (uint32_t)j;
            s->val[n] = v;
            n++;
        }
        p++; /* '\n' */
        nf = prev > nf ? prev : nf; /* indices increase: the row's last */
        s->nnz = n;
        s->y[s->rows] = label;
        s->off[++s->rows] = n;
    }
    s->lines = line;
    s->nf = nf;
    return true;
nul_byte:
    hog_slice_fail(s, HOG_EPARSE, line, "NUL byte in the line");
    goto fail;
oom:
    hog_slice_fail(s, HOG_ENOMEM, line, "out of memory while parsing");
fail:
    s->lines = line;
    return false;
}

const struct hog_text_format hog_text_libsvm = {
    HOG_FORMAT_LIBSVM, "LIBSVM", svm_parse_lines, false,
};
