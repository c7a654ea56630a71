/*
 * Rows as the kernels see them: merged entries and crossed features
 * (core/cross.h has the formula and the contract).
 */
#include "core/cross.h"

#include "core/spin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a row's entries, merged ----------------------------------------------- */

void hog_hash_scratch_free(struct hog_hash_scratch *sc)
{
    free(sc->key);
    free(sc->val);
    free(sc->ns);
    sc->key = NULL, sc->val = NULL, sc->ns = NULL, sc->cap = 0;
}

static int key_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static bool scratch_reserve(struct hog_hash_scratch *sc, uint64_t n)
{
    if (n <= sc->cap)
        return true;
    uint64_t *k = realloc(sc->key, (size_t)n * sizeof *k);
    if (k)
        sc->key = k;
    float *v = realloc(sc->val, (size_t)n * sizeof *v);
    if (v)
        sc->val = v;
    uint8_t *s = realloc(sc->ns, (size_t)n);
    if (s)
        sc->ns = s;
    if (!k || !v || !s)
        return false;
    sc->cap = (uint32_t)n;
    return true;
}

/* Rows up to this long are sorted in place by insertion. */
#define INSERTION_MAX 32u

int64_t hog_row_merge(uint32_t *idx, float *val, uint8_t *ns, uint32_t n,
                      struct hog_hash_scratch *sc)
{
    bool sorted = true;
    for (uint32_t i = 1; i < n && sorted; i++)
        sorted = idx[i - 1] < idx[i];
    if (sorted)
        return n;
    if (n <= INSERTION_MAX) {
        /* stable: equal indices keep their order, so sums run in file order */
        for (uint32_t i = 1; i < n; i++) {
            uint32_t j = i, ki = idx[i];
            float vi = val[i];
            uint8_t si = ns ? ns[i] : 0;
            for (; j > 0 && idx[j - 1] > ki; j--) {
                idx[j] = idx[j - 1];
                val[j] = val[j - 1];
                if (ns)
                    ns[j] = ns[j - 1];
            }
            idx[j] = ki;
            val[j] = vi;
            if (ns)
                ns[j] = si;
        }
    } else {
        if (!scratch_reserve(sc, n))
            return -1;
        /* index, then position: a stable sort by index */
        for (uint32_t i = 0; i < n; i++)
            sc->key[i] = (uint64_t)idx[i] << 32 | i;
        qsort(sc->key, n, sizeof *sc->key, key_cmp);
        for (uint32_t i = 0; i < n; i++)
            sc->val[i] = val[(uint32_t)sc->key[i]];
        if (ns) {
            for (uint32_t i = 0; i < n; i++)
                sc->ns[i] = ns[(uint32_t)sc->key[i]];
            memcpy(ns, sc->ns, n);
        }
        for (uint32_t i = 0; i < n; i++) {
            idx[i] = (uint32_t)(sc->key[i] >> 32);
            val[i] = sc->val[i];
        }
    }
    uint32_t w = 0, run = 0; /* [run, w): the entries of idx[w - 1] */
    for (uint32_t i = 0; i < n; i++) {
        if (w > 0 && idx[w - 1] == idx[i]) {
            uint32_t q = run;
            while (ns && q < w && ns[q] != ns[i])
                q++;
            if (q < w) {
                val[q] += val[i];
                continue;
            }
        } else {
            run = w;
        }
        idx[w] = idx[i];
        val[w] = val[i];
        if (ns)
            ns[w] = ns[i];
        w++;
    }
    return w;
}

/* ---- the interactions asked ------------------------------------------------ */

/* VW's order within a term (vw/core/interactions.h,
 * sort_and_filter_duplicate_interactions and must_be_left_sorted): a term
 * with one namespace repeated among others ("aba", "baa") is sorted so
 * that the repeats sit together ("aab"), which the crossing's "each
 * multiset once" rule needs; a term of distinct namespaces keeps the order
 * given, which its hash depends on. */
static void term_order(uint8_t *t, size_t len)
{
    if (len != 3 || (t[0] == t[1] && t[1] == t[2]) ||
        (t[0] != t[1] && t[1] != t[2] && t[0] != t[2]))
        return;
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k + 1 < 3; k++)
            if (t[k] > t[k + 1]) {
                uint8_t c = t[k];
                t[k] = t[k + 1], t[k + 1] = c;
            }
}

hog_status hog_interactions_parse(const char *spec, struct hog_interactions *x,
                                  hog_err *err)
{
    memset(x, 0, sizeof *x);
    if (!spec)
        return HOG_OK;
    for (const char *p = spec; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len > 3)
            return hog_errf(err, HOG_EINVAL,
                            "interaction '%.*s' crosses %zu namespaces; at "
                            "most 3 are supported (pairs as VW's -q, triples "
                            "as its --cubic)",
                            (int)(len > 40 ? 40 : len), p, len);
        if (len < 2)
            return hog_errf(err, HOG_EINVAL,
                            "interaction '%.*s' is not two or three "
                            "namespaces: each is two or three characters, "
                            "the first bytes of namespace names "
                            "(--interactions ab,cde)",
                            (int)len, p);
        if (x->n == HOG_MAX_INTERACTIONS)
            return hog_errf(err, HOG_EINVAL,
                            "more than %u interactions in '%.60s'",
                            HOG_MAX_INTERACTIONS, spec);
        uint8_t *t = x->term[x->n];
        memcpy(t, p, len);
        term_order(t, len);
        /* after VW's order: "aba" repeats "aab". Distinct namespaces in
         * another order ("ba" after "ab") hash apart and stay, as pairs
         * always did here (VW drops them; .hgm files hold such pairs) */
        for (uint32_t k = 0; k < x->n; k++) {
            if (memcmp(x->term[k], t, 3) != 0)
                continue;
            if (memcmp(p, t, len) == 0)
                return hog_errf(err, HOG_EINVAL,
                                "interaction '%.*s' is asked twice", (int)len,
                                p);
            return hog_errf(err, HOG_EINVAL,
                            "interaction '%.*s' is asked twice (as '%.3s', "
                            "VW's order)", (int)len, p, (const char *)t);
        }
        x->n++;
        p += len + (e != NULL);
        if (e && !*p)
            return hog_errf(err, HOG_EINVAL,
                            "interactions '%.60s' end with a ','", spec);
    }
    return HOG_OK;
}

void hog_interactions_format(const struct hog_interactions *x, char *buf,
                             size_t len)
{
    size_t w = 0;
    if (len)
        buf[0] = 0;
    for (uint32_t k = 0; k < x->n && w + 5 <= len; k++) {
        if (k)
            buf[w++] = ',';
        for (int s = 0; s < 3 && x->term[k][s]; s++)
            buf[w++] = (char)x->term[k][s];
        buf[w] = 0;
    }
}

unsigned hog_cross_absent(const hog_data *d, char *buf, size_t len)
{
    bool seen[256] = { false };
    for (uint64_t j = 0; d->m.ns && j < d->m.nnz; j++)
        seen[d->m.ns[j]] = true;
    unsigned n = 0;
    for (uint32_t k = 0; k < d->cross.n; k++)
        for (int s = 0; s < 3; s++) {
            uint8_t c = d->cross.term[k][s];
            if (c && !seen[c] && n + 1 < len) {
                seen[c] = true; /* named once */
                buf[n++] = (char)c;
            }
        }
    if (len)
        buf[n < len ? n : len - 1] = '\0';
    return n;
}

/* ---- crossing ---------------------------------------------------------------- */

/* The ways to choose r of n entries, repeats allowed and order not
 * counted, C(n + r - 1, r): how often a namespace named r times in a term
 * takes part (positions nondecreasing, below). n < 2^32, r <= 3: it fits
 * in 128 bits. */
static unsigned __int128 multisets(uint64_t n, unsigned r)
{
    unsigned __int128 c = 1;
    for (unsigned k = 0; k < r; k++)
        c = c * (n + k) / (k + 1); /* each partial product is C(n+k, k+1) */
    return c;
}

/* The crossed entries of term t among a row's n namespace tags, saturated
 * at UINT64_MAX (three namespaces of 2^22 entries each pass 2^64). */
static uint64_t term_count(const uint8_t *ns, uint64_t n, const uint8_t *t)
{
    const unsigned len = t[2] ? 3 : 2;
    unsigned __int128 c = 1;
    for (unsigned s = 0; s < len;) {
        unsigned r = 1; /* the term's repeats sit together (term_order) */
        while (s + r < len && t[s + r] == t[s])
            r++;
        uint64_t na = 0;
        for (uint64_t k = 0; k < n; k++)
            na += ns[k] == t[s];
        unsigned __int128 ways = multisets(na, r);
        if (ways > UINT64_MAX) /* then c (<= 2^64 - 1) times it fits */
            return UINT64_MAX;
        c *= ways;
        if (c > UINT64_MAX)
            return UINT64_MAX;
        s += r;
    }
    return (uint64_t)c;
}

hog_status hog_cross_count(hog_data *d, const char *name, hog_err *err)
{
    const struct hog_csr *m = &d->m;
    uint64_t total = 0, most = 0;
    for (uint64_t i = 0; i < m->rows && m->ns; i++) {
        uint64_t a = m->off[i], n = m->off[i + 1] - a, e = n;
        for (uint32_t p = 0; p < d->cross.n; p++) {
            uint64_t c = term_count(m->ns + a, n, d->cross.term[p]);
            e = e + c < e ? UINT64_MAX : e + c;
        }
        if (e > HOG_CROSS_ROW_MAX) {
            char spec[HOG_INTERACTIONS_SPEC_LEN];
            hog_interactions_format(&d->cross, spec, sizeof spec);
            char n_s[32] = "more than 2^64";
            if (e < UINT64_MAX)
                snprintf(n_s, sizeof n_s, "%llu", (unsigned long long)e);
            return hog_errf(err, HOG_ERANGE,
                            "%s: row %llu of %llu entries crosses to %s "
                            "with --interactions %s, past the %llu a row "
                            "can hold",
                            name, (unsigned long long)i + 1,
                            (unsigned long long)n, n_s, spec,
                            (unsigned long long)HOG_CROSS_ROW_MAX);
        }
        total = total + e < total ? UINT64_MAX : total + e;
        most = e > most ? e : most;
    }
    d->cross_nnz = m->ns ? total : m->nnz;
    d->cross_row_max = most;
    return HOG_OK;
}

hog_status hog_cross_buf_init(struct hog_cross_buf *b, const hog_data *d,
                              hog_err *err)
{
    memset(b, 0, sizeof *b);
    if (!d->m.ns)
        return HOG_OK;
    uint64_t n = d->cross_row_max ? d->cross_row_max : 1;
    if (n > HOG_CROSS_ROW_MAX) /* hog_cross_count() refused such a row */
        return hog_errf(err, HOG_ERANGE,
                        "a row of %llu entries with its crossed features "
                        "(more than %llu)", (unsigned long long)n,
                        (unsigned long long)HOG_CROSS_ROW_MAX);
    b->idx = malloc(n * sizeof *b->idx);
    b->val = malloc(n * sizeof *b->val);
    for (int s = 0; s < 3; s++)
        b->pos[s] = malloc(n * sizeof *b->pos[s]);
    b->cap = n;
    if (!b->idx || !b->val || !b->pos[0] || !b->pos[1] || !b->pos[2] ||
        !scratch_reserve(&b->sc, n)) {
        hog_cross_buf_free(b);
        return hog_errf(err, HOG_ENOMEM,
                        "out of memory for a row of %llu entries with its "
                        "crossed features", (unsigned long long)n);
    }
    return HOG_OK;
}

void hog_cross_buf_free(struct hog_cross_buf *b)
{
    free(b->idx), free(b->val);
    free(b->pos[0]), free(b->pos[1]), free(b->pos[2]);
    hog_hash_scratch_free(&b->sc);
    memset(b, 0, sizeof *b);
}

struct hog_cross_slot {
    /* first: hog_cross_bufs_give() finds the slot from its buffer */
    _Alignas(HOG_CACHELINE) struct hog_cross_buf b;
    atomic_bool taken;
};

hog_status hog_cross_bufs_init(struct hog_cross_bufs *p, const hog_data *d,
                               unsigned n, hog_err *err)
{
    p->slot = NULL;
    p->n = 0;
    if (!d->m.ns)
        return HOG_OK;
    n = n ? n : 1;
    struct hog_cross_slot *s = aligned_alloc(HOG_CACHELINE, n * sizeof *s);
    if (!s)
        return hog_errf(err, HOG_ENOMEM, "out of memory for %u buffers of "
                        "rows with their crossed features", n);
    for (unsigned k = 0; k < n; k++) {
        atomic_init(&s[k].taken, false);
        hog_status st = hog_cross_buf_init(&s[k].b, d, err);
        if (st != HOG_OK) {
            while (k--)
                hog_cross_buf_free(&s[k].b);
            free(s);
            return st;
        }
    }
    p->slot = s;
    p->n = n;
    return HOG_OK;
}

struct hog_cross_buf *hog_cross_bufs_take(const struct hog_cross_bufs *p)
{
    if (!p->n)
        return NULL;
    for (;;) {
        for (unsigned k = 0; k < p->n; k++) {
            struct hog_cross_slot *s = &p->slot[k];
            /* acquire: the last holder's use of the buffer (its scratch
             * table's state) is over; pairs with the release in
             * hog_cross_bufs_give() */
            if (!atomic_load_explicit(&s->taken, memory_order_relaxed) &&
                !atomic_exchange_explicit(&s->taken, true,
                                          memory_order_acquire))
                return &s->b;
        }
        hog_spin_pause();
    }
}

void hog_cross_bufs_give(struct hog_cross_buf *b)
{
    struct hog_cross_slot *s = (struct hog_cross_slot *)b;
    /* release: pairs with the acquire in hog_cross_bufs_take() */
    atomic_store_explicit(&s->taken, false, memory_order_release);
}

void hog_cross_bufs_free(struct hog_cross_bufs *p)
{
    for (unsigned k = 0; k < p->n; k++)
        hog_cross_buf_free(&p->slot[k].b);
    free(p->slot);
    p->slot = NULL;
    p->n = 0;
}

/* The positions of namespace c's entries among a row's n tags. */
static uint32_t positions(const uint8_t *ns, uint32_t n, uint8_t c,
                          uint32_t *pos)
{
    uint32_t k = 0;
    for (uint32_t j = 0; j < n; j++)
        if (ns[j] == c)
            pos[k++] = j;
    return k;
}

struct hog_row hog_cross_row(const struct hog_interactions *x,
                             const struct hog_csr *m, uint64_t i,
                             struct hog_cross_buf *b)
{
    struct hog_row r = hog_csr_row(m, i);
    const uint8_t *ns = m->ns + m->off[i];
    const uint32_t n = r.nnz, mask = x->mask;
    uint32_t w = n;
    memcpy(b->idx, r.idx, n * sizeof *r.idx);
    memcpy(b->val, r.val, n * sizeof *r.val);
    uint32_t *const pa = b->pos[0], *const pb = b->pos[1], *const pc = b->pos[2];
    for (uint32_t p = 0; p < x->n; p++) {
        const uint8_t *t = x->term[p];
        const uint32_t na = positions(ns, n, t[0], pa);
        const uint32_t nb = positions(ns, n, t[1], pb);
        /* A namespace named again takes positions from the previous one's
         * on: each multiset of entries once, with repeats (VW's default,
         * without --permutations) */
        const bool ab = t[0] == t[1], bc = t[1] == t[2];
        if (!t[2]) { /* two loops of their own: -q's hot path, as VW keeps
                      * its quadratic loop beside the cubic one */
            for (uint32_t s = 0; s < na; s++) {
                const uint32_t hf = r.idx[pa[s]] * HOG_CROSS_PRIME;
                const float vf = r.val[pa[s]];
                for (uint32_t u = ab ? s : 0; u < nb; u++) {
                    b->idx[w] = (hf ^ r.idx[pb[u]]) & mask;
                    b->val[w] = vf * r.val[pb[u]];
                    w++;
                }
            }
            continue;
        }
        const uint32_t nc = positions(ns, n, t[2], pc);
        for (uint32_t s = 0; s < na; s++) {
            const uint32_t hf = r.idx[pa[s]] * HOG_CROSS_PRIME;
            const float vf = r.val[pa[s]];
            for (uint32_t u = ab ? s : 0; u < nb; u++) {
                const uint32_t hg = (hf ^ r.idx[pb[u]]) * HOG_CROSS_PRIME;
                const float vg = vf * r.val[pb[u]];
                for (uint32_t v = bc ? u : 0; v < nc; v++) {
                    b->idx[w] = (hg ^ r.idx[pc[v]]) & mask;
                    b->val[w] = vg * r.val[pc[v]];
                    w++;
                }
            }
        }
    }
    /* never allocates: the scratch holds cross_row_max entries */
    int64_t k = hog_row_merge(b->idx, b->val, NULL, w, &b->sc);
    struct hog_row out = { b->idx, b->val, (uint32_t)k, r.y };
    return out;
}
