/* Binding policy strings: "scatter+no_smt", "cpus:0-3,8", "numa:1". */
#include "internal.h"

#include <stdio.h>
#include <string.h>

void hog_bind_init(struct hog_bind *b)
{
    memset(b, 0, sizeof *b);
    b->policy = HOG_BIND_COMPACT;
}

/* A decimal index at s[*i]; false when there is none or it is too large. */
static bool parse_index(const char *s, size_t len, size_t *i, unsigned *out)
{
    size_t start = *i;
    unsigned long v = 0;
    while (*i < len && s[*i] >= '0' && s[*i] <= '9') {
        v = v * 10 + (unsigned long)(s[*i] - '0');
        if (v > HOG_BIND_MAX_INDEX)
            return false;
        (*i)++;
    }
    *out = (unsigned)v;
    return *i > start;
}

hog_status hog_list_parse(const char *s, size_t len, size_t base,
                          const char *what, struct hog_bind_range *r,
                          unsigned *n, hog_err *err)
{
    unsigned count = 0;
    size_t i = 0;
    if (len == 0)
        return hog_errf(err, HOG_EINVAL, "%s: empty list (write e.g. 0-3,8)",
                        what);
    for (;;) {
        size_t item = i;
        struct hog_bind_range cur;
        if (!parse_index(s, len, &i, &cur.lo)) {
            if (i < len && s[i] >= '0' && s[i] <= '9')
                return hog_errf(err, HOG_EINVAL,
                                "%s: index at character %zu is above %u", what,
                                base + item + 1, HOG_BIND_MAX_INDEX);
            return hog_errf(err, HOG_EINVAL,
                            i < len && s[i] != ','
                                ? "%s: expected a number at character %zu"
                                : "%s: empty item at character %zu",
                            what, base + item + 1);
        }
        cur.hi = cur.lo;
        if (i < len && s[i] == '-') {
            i++;
            size_t hi_at = i;
            if (!parse_index(s, len, &i, &cur.hi)) {
                if (i < len && s[i] >= '0' && s[i] <= '9')
                    return hog_errf(err, HOG_EINVAL,
                                    "%s: index at character %zu is above %u",
                                    what, base + hi_at + 1, HOG_BIND_MAX_INDEX);
                return hog_errf(err, HOG_EINVAL,
                                "%s: range without an end at character %zu",
                                what, base + hi_at + 1);
            }
            if (cur.hi < cur.lo)
                return hog_errf(err, HOG_EINVAL,
                                "%s: range %u-%u runs backwards", what, cur.lo,
                                cur.hi);
        }
        if (i < len && s[i] != ',')
            return hog_errf(err, HOG_EINVAL,
                            "%s: unexpected '%c' at character %zu (a list "
                            "looks like 0-3,8,10-11)",
                            what, s[i], base + i + 1);
        for (unsigned k = 0; k < count; k++)
            if (cur.lo <= r[k].hi && r[k].lo <= cur.hi) {
                unsigned dup = cur.lo > r[k].lo ? cur.lo : r[k].lo;
                return hog_errf(err, HOG_EINVAL, "%s: %u is listed twice",
                                what, dup);
            }
        if (count == HOG_BIND_MAX_RANGES)
            return hog_errf(err, HOG_EINVAL,
                            "%s: more than %d ranges; merge neighbours into "
                            "ranges (0-7 rather than 0,1,...,7)",
                            what, HOG_BIND_MAX_RANGES);
        r[count++] = cur;
        if (i == len)
            break;
        i++; /* the comma */
        if (i == len)
            return hog_errf(err, HOG_EINVAL, "%s: list ends with a comma",
                            what);
    }
    *n = count;
    return HOG_OK;
}

static const struct {
    const char *name;
    enum hog_bind_policy policy;
    bool list;
} policies[] = {
    { "compact", HOG_BIND_COMPACT, false },
    { "none", HOG_BIND_NONE, false },
    { "scatter", HOG_BIND_SCATTER, false },
    { "cpus", HOG_BIND_CPUS, true },
    { "cores", HOG_BIND_CPUS, true }, /* an alias: PU OS indices too */
    { "numa", HOG_BIND_NUMA, true },
    { "socket", HOG_BIND_SOCKET, true },
};

/* Applies one '+'-separated token (s, len) to b. */
static hog_status parse_token(const char *spec, const char *s, size_t len,
                              bool first, bool *have_policy,
                              struct hog_bind *b, hog_err *err)
{
    if (len == 0)
        return hog_errf(err, HOG_EINVAL,
                        "bind spec \"%s\": empty part (parts are joined by "
                        "'+', as in scatter+no_smt)", spec);
    if ((len == 6 && memcmp(s, "no_smt", 6) == 0) ||
        (len == 6 && memcmp(s, "no-smt", 6) == 0)) {
        b->no_smt = true;
        return HOG_OK;
    }
    if (len == 13 && memcmp(s, "oversubscribe", 13) == 0) {
        b->oversubscribe = true;
        return HOG_OK;
    }
    const char *colon = memchr(s, ':', len);
    size_t name_len = colon ? (size_t)(colon - s) : len;
    for (size_t k = 0; k < sizeof policies / sizeof policies[0]; k++) {
        if (strlen(policies[k].name) != name_len ||
            memcmp(policies[k].name, s, name_len) != 0)
            continue;
        if (!first || *have_policy)
            return hog_errf(err, HOG_EINVAL,
                            "bind spec \"%s\": the policy (%.*s) must come "
                            "first, and only once", spec, (int)name_len, s);
        if (policies[k].list && !colon)
            return hog_errf(err, HOG_EINVAL,
                            "bind spec \"%s\": %s needs a list, as in %s:0-3,8",
                            spec, policies[k].name, policies[k].name);
        if (!policies[k].list && colon)
            return hog_errf(err, HOG_EINVAL,
                            "bind spec \"%s\": %s takes no list", spec,
                            policies[k].name);
        *have_policy = true;
        b->policy = policies[k].policy;
        b->nranges = 0;
        if (!colon)
            return HOG_OK;
        char what[HOG_ERR_MAX / 2];
        snprintf(what, sizeof what, "bind spec \"%s\"", spec);
        return hog_list_parse(colon + 1, len - name_len - 1,
                              (size_t)(colon + 1 - spec), what, b->range,
                              &b->nranges, err);
    }
    return hog_errf(err, HOG_EINVAL,
                    "bind spec \"%s\": unknown part \"%.*s\" (policies: none, "
                    "compact, scatter, cpus:LIST, cores:LIST, numa:LIST, "
                    "socket:LIST; flags: no_smt, oversubscribe)",
                    spec, (int)len, s);
}

hog_status hog_bind_parse(const char *spec, struct hog_bind *out, hog_err *err)
{
    struct hog_bind b;
    hog_bind_init(&b);
    if (spec && *spec) {
        bool have_policy = false;
        const char *s = spec;
        for (bool first = true;; first = false) {
            const char *plus = strchr(s, '+');
            size_t len = plus ? (size_t)(plus - s) : strlen(s);
            hog_status st = parse_token(spec, s, len, first, &have_policy,
                                        &b, err);
            if (st != HOG_OK)
                return st;
            if (!plus)
                break;
            s = plus + 1;
        }
    }
    *out = b;
    return HOG_OK;
}

char *hog_bind_str(const struct hog_bind *b, char *buf, size_t len)
{
    static const char *const names[] = {
        [HOG_BIND_COMPACT] = "compact", [HOG_BIND_NONE] = "none",
        [HOG_BIND_SCATTER] = "scatter", [HOG_BIND_CPUS] = "cpus",
        [HOG_BIND_NUMA] = "numa",       [HOG_BIND_SOCKET] = "socket",
    };
    size_t at = 0;
#define PUT(...)                                                              \
    do {                                                                      \
        int w_ = at < len ? snprintf(buf + at, len - at, __VA_ARGS__) : 0;   \
        if (w_ > 0)                                                           \
            at += (size_t)w_;                                                 \
    } while (0)
    if (len == 0)
        return buf;
    buf[0] = '\0';
    PUT("%s", (unsigned)b->policy < sizeof names / sizeof names[0]
                  ? names[b->policy]
                  : "?");
    for (unsigned k = 0; k < b->nranges; k++) {
        const struct hog_bind_range *r = &b->range[k];
        PUT(k ? "," : ":");
        if (r->lo == r->hi)
            PUT("%u", r->lo);
        else
            PUT("%u-%u", r->lo, r->hi);
    }
    if (b->no_smt)
        PUT("+no_smt");
    if (b->oversubscribe)
        PUT("+oversubscribe");
#undef PUT
    return buf;
}
