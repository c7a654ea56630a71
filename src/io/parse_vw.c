/*
 * Vowpal Wabbit text lines (the format's entry in parse.c's table;
 * docs/FORMATS.md, "The Vowpal Wabbit dialect accepted"):
 *
 *     label [importance] [tag]|namespace[:scale] feature[:value] ... |namespace ...
 *
 * Before the first '|': the label (any number), an optional importance
 * weight (a number >= 0) and an optional tag, which is the last field when
 * it touches the '|' or starts with a quote (as VW tells it), and is
 * dropped. Each '|' opens a namespace: its name right after the '|' (none
 * when a blank follows: the default namespace), an optional ":scale" that
 * multiplies its features' values, then features, each a name (any bytes
 * but blanks, ':' and '|') and an optional ":value" (default 1): a
 * number, or a string (VW's string values). Features of value 0 are
 * dropped, as VW drops them.
 *
 * A feature is the weight hog_vw_hash(name, namespace hash) & (2^B - 1),
 * the namespace hash being hog_vw_hash(namespace name, seed), or the hash
 * of no bytes for the default namespace: VW's own hashing (hash.c). As in
 * VW, name:string is hog_vw_hash(string, hog_vw_hash(name, namespace
 * hash)) with value 1, and :value (no name) the anonymous feature whose
 * hash is the namespace's plus its number among the namespace's anonymous
 * features. Each row's entries are merged where their features share a
 * weight and sorted by index as its line ends.
 *
 * With --keep-names (s->names set) each feature's name is noted in its
 * weight as "namespace^name" ("name" in the default namespace,
 * "namespace^name^string" for a string value, "namespace^N" for the
 * N-th anonymous feature, from 0), as VW's --invert_hash names them;
 * the one test of s->names per feature is all it costs otherwise.
 *
 * A line whose first byte past any blanks is '#' is a comment (VW has
 * none; its labels never start so, and its names may hold '#' anywhere
 * else). Every line ends with '\n', the sentinel of every scan; a NUL
 * byte anywhere in a line is refused first.
 */
#include "io/parse_int.h"

static inline bool vw_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* What ends a feature or a namespace name. */
static inline bool vw_name_end(char c)
{
    return vw_blank(c) || c == ':' || c == '|' || c == '\n';
}

/* Length of the token at p (up to a blank, '|' or newline, at most 40),
 * for messages. */
static int token_len(const char *p)
{
    int n = 0;
    while (n < 40 && !vw_blank(p[n]) && p[n] != '|' && p[n] != '\n')
        n++;
    return n;
}

/* Whether the value after a feature's ':' is a string (VW reads one
 * where no number starts): not a digit, sign or point, not nan or inf. */
static bool vw_string_value(const char *p)
{
    if (is_digit(*p) || *p == '+' || *p == '-' || *p == '.' || vw_name_end(*p))
        return false;
    return classify_word(p, true) == NUM_BAD;
}

/* The field [s, e) before the first '|'. */
struct field {
    const char *s, *e;
};

static enum num_res field_float(struct field f, float *out)
{
    const char *q = f.s;
    enum num_res r = parse_float(&q, out, true);
    return r == NUM_OK && q != f.e ? NUM_BAD : r;
}

/* Why a number was refused: "is NaN", ... */
static const char *num_why(enum num_res r)
{
    switch (r) {
    case NUM_NAN: return "is NaN";
    case NUM_INF: return "is infinite";
    case NUM_RANGE: return "is out of range for float";
    default: return "is not a number";
    }
}

static hog_status num_status(enum num_res r)
{
    return r == NUM_RANGE ? HOG_ERANGE : HOG_EPARSE;
}

/* The label and importance of the line at p (blanks skipped), whose
 * first '|' is bar (NULL: none before nl). False with the slice's error. */
static bool vw_head(struct hog_slice *s, uint64_t line, const char *p,
                    const char *bar, const char *nl, float *label, float *imp)
{
    const char *he = bar ? bar : nl;
    struct field f[4];
    unsigned nf = 0;
    for (const char *q = p;;) {
        while (q < he && vw_blank(*q))
            q++;
        if (q >= he)
            break;
        if (nf == 4) {
            hog_slice_fail(s, HOG_EPARSE, line,
                           "more fields before the first '|' than a label, "
                           "an importance weight and a tag ('%.*s')",
                           token_len(q), q);
            return false;
        }
        f[nf].s = q;
        while (q < he && !vw_blank(*q))
            q++;
        f[nf++].e = q;
    }
    bool tag = nf > 0 && ((bar && f[nf - 1].e == bar) || *f[nf - 1].s == '\'');
    nf -= tag;
    if (nf == 0 && s->unlabelled && bar) { /* scored, not trained on */
        *label = NAN;
        *imp = 1.0f;
        return true;
    }
    if (nf == 0) {
        if (tag && *f[0].s != '\'')
            hog_slice_fail(s, HOG_EPARSE, line,
                           "no label: '%.*s' touches the '|', which makes it "
                           "the tag; put a blank before the '|'",
                           (int)(f[0].e - f[0].s), f[0].s);
        else
            hog_slice_fail(s, HOG_EPARSE, line,
                           "no label (every row needs one: unlabelled "
                           "examples are not read)");
        return false;
    }
    if (nf > 2) {
        hog_slice_fail(s, HOG_EPARSE, line,
                       "a third field before the '|' ('%.*s', VW's initial "
                       "prediction) is not read; a tag needs a leading ' "
                       "or must touch the '|'",
                       (int)(f[2].e - f[2].s), f[2].s);
        return false;
    }
    enum num_res r = field_float(f[0], label);
    if (r != NUM_OK) {
        hog_slice_fail(s, num_status(r), line, "label '%.*s' %s",
                       (int)(f[0].e - f[0].s), f[0].s, num_why(r));
        return false;
    }
    *imp = 1.0f;
    if (nf == 2) {
        r = field_float(f[1], imp);
        if (r != NUM_OK || *imp < 0) {
            hog_slice_fail(s, num_status(r), line,
                           "importance weight '%.*s' %s; a tag needs a "
                           "leading ' or must touch the '|'",
                           (int)(f[1].e - f[1].s), f[1].s,
                           r == NUM_OK ? "is negative" : num_why(r));
            return false;
        }
    }
    return true;
}

/* A value after ':' at *pp (of the feature or namespace [t, t + len)),
 * into *v; false with the slice's error. */
static bool vw_value(struct hog_slice *s, uint64_t line, const char **pp,
                     const char *what, const char *t, size_t len, float *v)
{
    const char *vt = *pp;
    enum num_res r = parse_float(pp, v, true);
    if (r == NUM_OK)
        return true;
    if (vw_blank(*vt) || *vt == '|' || *vt == '\n')
        hog_slice_fail(s, HOG_EPARSE, line, "missing value after %s '%.*s:'",
                       what, (int)len, t);
    else if (r == NUM_BAD)
        hog_slice_fail(s, HOG_EPARSE, line, "bad value '%.*s' of %s '%.*s' "
                       "(%s)", token_len(vt), vt, what, (int)len, t,
                       *what == 'n' ? "a number"
                                    : "a number, or a string that starts "
                                      "with neither a digit, a sign nor a "
                                      "point");
    else
        hog_slice_fail(s, num_status(r), line, "value '%.*s' of %s '%.*s' %s",
                       token_len(vt), vt, what, (int)len, t, num_why(r));
    return false;
}

/* The name of the feature [t, t + len) (its value, if a string, after
 * t[len] == ':'), of hash h in namespace [nst, nst + nsl), the anon-th
 * anonymous one when len is 0: noted in s->names. */
static bool vw_note_name(struct hog_slice *s, uint32_t h, const char *nst,
                         size_t nsl, const char *t, size_t len,
                         uint32_t anon)
{
    const char *part[3];
    size_t plen[3];
    unsigned n = 0;
    char num[16];
    if (nsl)
        part[n] = nst, plen[n++] = nsl;
    if (len) {
        part[n] = t, plen[n++] = len;
        if (t[len] == ':' && vw_string_value(t + len + 1)) {
            const char *st = t + len + 1, *e = st;
            while (!vw_name_end(*e))
                e++;
            part[n] = st, plen[n++] = (size_t)(e - st);
        }
    } else {
        part[n] = num;
        plen[n++] = (size_t)snprintf(num, sizeof num, "%u", anon);
    }
    return hog_name_set_add(s->names, h, h & s->hash->mask, part, plen, n);
}

static bool vw_parse_lines(struct hog_slice *s, const char *p, const char *end)
{
    const struct hog_hash_space *hs = s->hash; /* VW text is always hashed */
    const uint32_t mask = hs->mask;
    const uint32_t ns_default = hog_murmur3_32("", 0, hs->seed);
    uint64_t line = s->lines;
    while (p < end) {
        line++;
        const char *nl = rawmemchr(p, '\n');
        while (vw_blank(*p))
            p++;
        if (*p == '\n') {
            p++;
            continue;
        }
        if (HOG_UNLIKELY(memchr(p, '\0', (size_t)(nl - p)) != NULL)) {
            hog_slice_fail(s, HOG_EPARSE, line, "NUL byte in the line");
            goto fail;
        }
        if (*p == '#') {
            p = nl + 1;
            continue;
        }
        if (HOG_UNLIKELY(s->rows == s->cap_rows) && !hog_slice_grow_rows(s))
            goto oom;
        const char *bar = memchr(p, '|', (size_t)(nl - p));
        float label, imp;
        if (!vw_head(s, line, p, bar, nl, &label, &imp))
            goto fail;
        if (!hog_slice_set_importance(s, s->rows, imp))
            goto oom;
        uint64_t n0 = s->nnz, n = n0;
        p = bar ? bar : nl;
        while (*p == '|') {
            p++;
            uint32_t ns = ns_default;
            uint8_t tag = ' '; /* the namespace's first byte (VW's default: ' ') */
            float scale = 1.0f;
            const char *nst = p; /* its name, for --keep-names */
            size_t nsl = 0;
            if (!vw_name_end(*p) || *p == ':') {
                const char *t = p;
                while (!vw_name_end(*p))
                    p++;
                size_t len = (size_t)(p - t);
                if (len == 0) {
                    hog_slice_fail(s, HOG_EPARSE, line,
                                   "a namespace without a name before ':' "
                                   "('|%.*s')", token_len(t), t);
                    goto fail;
                }
                ns = hog_vw_hash(t, len, hs->seed);
                tag = (uint8_t)t[0];
                nsl = len;
                if (*p == ':') {
                    p++;
                    if (!vw_value(s, line, &p, "namespace", t, len, &scale))
                        goto fail;
                }
            }
            uint32_t anon = 0; /* VW's anonymous features, per namespace */
            for (;;) {
                while (vw_blank(*p))
                    p++;
                if (*p == '|' || *p == '\n')
                    break;
                const char *t = p;
                while (!vw_name_end(*p))
                    p++;
                size_t len = (size_t)(p - t);
                float v = scale;
                uint32_t h;
                if (*p != ':') {
                    h = hog_vw_hash(t, len, ns);
                } else if (p++, vw_string_value(p)) {
                    /* name:string, VW's chained hash, value 1 (not scaled) */
                    const char *st = p;
                    while (!vw_name_end(*p))
                        p++;
                    if (*p == ':') {
                        hog_slice_fail(s, HOG_EPARSE, line,
                                       "bad value '%.*s' of feature '%.*s' "
                                       "(one ':' in a feature)",
                                       token_len(st), st, (int)len, t);
                        goto fail;
                    }
                    h = hog_vw_hash(st, (size_t)(p - st),
                                    hog_vw_hash(t, len, ns));
                    v = 1.0f;
                } else {
                    if (!vw_value(s, line, &p, "feature", t, len, &v))
                        goto fail;
                    v *= scale;
                    if (HOG_UNLIKELY(!isfinite(v))) {
                        hog_slice_fail(s, HOG_ERANGE, line,
                                       "the value of feature '%.*s' times "
                                       "its namespace's is out of range for "
                                       "float", (int)len, t);
                        goto fail;
                    }
                    /* :value, an anonymous feature: the namespace's hash
                     * plus its number there */
                    h = len ? hog_vw_hash(t, len, ns) : ns + anon++;
                }
                if (v == 0.0f)
                    continue; /* as VW: a zero adds nothing */
                if (HOG_UNLIKELY(s->names != NULL) &&
                    !vw_note_name(s, h, nst, nsl, t, len, anon - (len == 0)))
                    goto oom;
                s->collisions += hog_hash_space_note(hs, h);
                if (HOG_UNLIKELY(n == s->cap_nnz)) {
                    s->nnz = n;
                    if (!hog_slice_grow_nnz(s))
                        goto oom;
                }
                s->idx[n] = h & mask;
                s->val[n] = v;
                if (s->ns)
                    s->ns[n] = tag;
                n++;
            }
        }
        int64_t k = hog_row_merge(s->idx + n0, s->val + n0,
                                  s->ns ? s->ns + n0 : NULL, (uint32_t)(n - n0),
                                  &s->scratch);
        if (k < 0)
            goto oom;
        s->merged += n - n0 - (uint64_t)k;
        s->nnz = n0 + (uint64_t)k;
        s->y[s->rows] = label;
        s->off[++s->rows] = s->nnz;
        p = nl + 1;
    }
    s->lines = line;
    return true;
oom:
    hog_slice_fail(s, HOG_ENOMEM, line, "out of memory while parsing");
fail:
    s->lines = line;
    return false;
}

const struct hog_text_format hog_text_vw = {
    HOG_FORMAT_VW, "Vowpal Wabbit", vw_parse_lines, true,
};
