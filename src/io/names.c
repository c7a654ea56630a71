/*
 * --keep-names: the names of Vowpal Wabbit text's features gathered as
 * they are hashed (hog_load_opts.keep_names), so that a model can say
 * which names share each weight (VW's --invert_hash). Each parser slice
 * keeps a set of its own (no locks, no sharing), each name once per
 * weight; the slices' sets are merged, sorted and deduplicated into a
 * struct hog_names (core.h) when the rows are taken.
 */
#include "io/parse_int.h"

#include <stdlib.h>

/* A record in buf: the weight (u32), the name's length (u32), its bytes.
 * slot[i] is a record's offset + 1, 0 when empty. */
#define REC_HEAD 8u

static uint32_t rec_u32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static bool set_grow_slots(struct hog_name_set *s)
{
    uint64_t n = s->nslot ? 2 * s->nslot : 1024;
    uint64_t *slot = calloc(n, sizeof *slot);
    if (!slot)
        return false;
    for (uint64_t i = 0; i < s->nslot; i++) {
        if (!s->slot[i])
            continue;
        const unsigned char *r = s->buf + s->slot[i] - 1;
        uint64_t k = rec_u32(r + REC_HEAD + rec_u32(r + 4)) & (n - 1);
        while (slot[k])
            k = (k + 1) & (n - 1);
        slot[k] = s->slot[i];
    }
    free(s->slot);
    s->slot = slot;
    s->nslot = n;
    return true;
}

bool hog_name_set_add(struct hog_name_set *s, uint32_t h, uint32_t pos,
                      const char *const part[], const size_t len[],
                      unsigned parts)
{
    size_t n = 0;
    for (unsigned i = 0; i < parts; i++)
        n += len[i] + (i > 0);
    if (n > UINT32_MAX - REC_HEAD - 4)
        return false;
    /* the record is written past the end first, then kept or dropped;
     * the feature's hash follows it so that the slots can be rehashed */
    size_t need = s->len + REC_HEAD + n + 4;
    if (need > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < need)
            cap *= 2;
        unsigned char *b = realloc(s->buf, cap);
        if (!b)
            return false;
        s->buf = b;
        s->cap = cap;
    }
    unsigned char *r = s->buf + s->len, *q = r + REC_HEAD;
    uint32_t n32 = (uint32_t)n;
    memcpy(r, &pos, 4);
    memcpy(r + 4, &n32, 4);
    for (unsigned i = 0; i < parts; i++) {
        if (i > 0)
            *q++ = '^';
        memcpy(q, part[i], len[i]);
        q += len[i];
    }
    memcpy(q, &h, 4);
    if (2 * (s->used + 1) > s->nslot && !set_grow_slots(s))
        return false;
    uint64_t k = h & (s->nslot - 1);
    for (; s->slot[k]; k = (k + 1) & (s->nslot - 1)) {
        const unsigned char *o = s->buf + s->slot[k] - 1;
        if (rec_u32(o) == pos && rec_u32(o + 4) == n32 &&
            memcmp(o + REC_HEAD, r + REC_HEAD, n) == 0)
            return true; /* seen: the record past the end is dropped */
    }
    s->slot[k] = s->len + 1;
    s->len = need;
    s->used++;
    return true;
}

void hog_name_set_free(struct hog_name_set *s)
{
    if (!s)
        return;
    free(s->buf);
    free(s->slot);
    free(s);
}

static int rec_cmp(const void *a, const void *b)
{
    const unsigned char *x = *(const unsigned char *const *)a,
                        *y = *(const unsigned char *const *)b;
    uint32_t px = rec_u32(x), py = rec_u32(y);
    if (px != py)
        return px < py ? -1 : 1;
    uint32_t lx = rec_u32(x + 4), ly = rec_u32(y + 4);
    int c = memcmp(x + REC_HEAD, y + REC_HEAD, lx < ly ? lx : ly);
    return c ? c : (lx > ly) - (lx < ly);
}

hog_status hog_names_merge(struct hog_name_set *const sets[], unsigned nsets,
                           struct hog_names **out, hog_err *err)
{
    uint64_t n = 0, bytes = 0;
    for (unsigned i = 0; i < nsets; i++)
        n += sets[i] ? sets[i]->used : 0;
    const unsigned char **rec = malloc((n ? n : 1) * sizeof *rec);
    struct hog_names *nm = calloc(1, sizeof *nm);
    if (!rec || !nm)
        goto oom;
    uint64_t k = 0;
    for (unsigned i = 0; i < nsets; i++) {
        const struct hog_name_set *s = sets[i];
        for (uint64_t j = 0; s && j < s->nslot; j++)
            if (s->slot[j])
                rec[k++] = s->buf + s->slot[j] - 1;
    }
    qsort(rec, n, sizeof *rec, rec_cmp);
    uint64_t u = 0; /* the slices' sets may share a name */
    for (uint64_t i = 0; i < n; i++)
        if (u == 0 || rec_cmp(&rec[u - 1], &rec[i]) != 0) {
            rec[u++] = rec[i];
            bytes += rec_u32(rec[i] + 4);
        }
    nm->n = u;
    nm->pos = malloc((u ? u : 1) * sizeof *nm->pos);
    nm->off = malloc((u + 1) * sizeof *nm->off);
    nm->text = malloc(bytes ? bytes : 1);
    if (!nm->pos || !nm->off || !nm->text)
        goto oom;
    nm->off[0] = 0;
    for (uint64_t i = 0; i < u; i++) {
        uint32_t l = rec_u32(rec[i] + 4);
        nm->pos[i] = rec_u32(rec[i]);
        memcpy(nm->text + nm->off[i], rec[i] + REC_HEAD, l);
        nm->off[i + 1] = nm->off[i] + l;
    }
    free(rec);
    *out = nm;
    return HOG_OK;
oom:
    free(rec);
    hog_names_free(nm);
    return hog_errf(err, HOG_ENOMEM, "out of memory for the %llu feature "
                    "names --keep-names keeps", (unsigned long long)n);
}
