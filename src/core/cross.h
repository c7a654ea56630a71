/*
 * Rows as the kernels see them: a row's entries sorted and summed
 * (hog_row_merge, which the parsers use as they hash), and the crossed
 * features of interactions of two or three namespaces (VW's -q and
 * --cubic), generated per row into a per-thread buffer just before a
 * kernel reads the row (hog_data_row), never stored for the data set.
 *
 * A data set loaded with interactions (hog_load_opts.interactions) keeps,
 * beside each entry, the namespace it came from (struct hog_csr's ns: the
 * first byte of the namespace's name, ' ' for VW's default namespace).
 * Row i then reads as its own entries plus, for each pair "ab" asked, for
 * every entry f of namespace a and g of namespace b,
 *
 *     index ((f * P) ^ g) mod 2^B,  value x_f * x_g
 *
 * and for each triple "abc", with h of namespace c,
 *
 *     index ((((f * P) ^ g) * P) ^ h) mod 2^B,  value (x_f * x_g) * x_h
 *
 * (VW's formulas, vw/core/interactions_predict.h's
 * process_quadratic_interaction and process_cubic_interaction, with P =
 * 16777619, FNV-1's 32-bit prime, on the B-bit indices: multiplications
 * and xors mod 2^B see only their operands' low B bits, so this equals
 * VW's on the 32-bit hashes taken mod 2^B), sorted and summed where
 * indices meet. A namespace named twice or thrice in a term ("aa", "aab",
 * "abb", "aaa"; VW sorts "aba" to "aab") crosses each multiset of its
 * entries once, an entry with itself included: positions in the row
 * nondecreasing, as VW's combinations without --permutations (VW counts
 * positions in file order, hogtrain in the row's order by index).
 * Without interactions ns is NULL and hog_data_row is the stored row: one
 * predictable test per row.
 */
#ifndef HOG_CORE_CROSS_H
#define HOG_CORE_CROSS_H

#include "core/core.h"

#define HOG_CROSS_PRIME UINT32_C(16777619) /* FNV-1's 32-bit prime, as VW */

/* The scratch of hog_row_merge, kept between rows. */
struct hog_hash_scratch {
    uint64_t *key;
    float *val;
    uint8_t *ns;
    uint32_t cap;
};
/* Sorts a row's n entries by index (stably) and sums the values of entries
 * of equal index (and, when ns is not NULL, equal namespace: entries of two
 * namespaces stay apart, adjacent, in their first one's order), in file
 * order; returns the entries left, -1 when out of memory for the scratch
 * (which only grows for rows longer than sc->cap). */
int64_t hog_row_merge(uint32_t *idx, float *val, uint8_t *ns, uint32_t n,
                      struct hog_hash_scratch *sc);
void hog_hash_scratch_free(struct hog_hash_scratch *sc);

/* Parses "ab[,cde...]" (pairs and triples of namespace bytes) into x, a
 * triple with one namespace repeated among others in VW's order ("aba"
 * as "aab"); HOG_EINVAL with a sentence naming the bad item: more than
 * three namespaces, fewer than two, or a term asked twice (in VW's
 * order). NULL or "" is no interaction. */
hog_status hog_interactions_parse(const char *spec, struct hog_interactions *x,
                                  hog_err *err);
/* "ab,cde" into buf (len >= HOG_INTERACTIONS_SPEC_LEN). */
void hog_interactions_format(const struct hog_interactions *x, char *buf,
                             size_t len);

/* The namespace bytes of d's interactions that no entry of d has (each
 * term of them then crosses nothing), distinct, in the order asked, into
 * buf (len >= 3 * HOG_MAX_INTERACTIONS + 1); returns how many. */
unsigned hog_cross_absent(const hog_data *d, char *buf, size_t len);

/* The most entries one row may have with its crossed features, before
 * they are summed: a row's length is 32 bits (struct hog_row). A thread's
 * buffer takes 33 bytes an entry (hog_cross_buf, its scratch included). */
#define HOG_CROSS_ROW_MAX UINT64_C(0xFFFFFFFF)

/* The entries of every row of d with its crossed features (before they are
 * summed), and the most of one row: sets d->cross_nnz, d->cross_row_max.
 * HOG_ERANGE with a sentence naming name and the row when a row's count
 * passes HOG_CROSS_ROW_MAX (counted without overflow, whatever the row). */
hog_status hog_cross_count(hog_data *d, const char *name, hog_err *err);

/* A thread's buffer for expanded rows of one data set. */
struct hog_cross_buf {
    uint32_t *idx, *pos[3]; /* pos: a term's namespaces' entries' places */
    float *val;
    uint64_t cap;
    struct hog_hash_scratch sc;
};
/* Sized for d's longest expanded row, so that expanding never allocates;
 * nothing is allocated for data without interactions. */
hog_status hog_cross_buf_init(struct hog_cross_buf *b, const hog_data *d,
                              hog_err *err);
void hog_cross_buf_free(struct hog_cross_buf *b);

/* Buffers for the threads that expand rows of one data set at once, made
 * at set-up so that a loop that returns no status (the SGD kernel's) never
 * allocates: a run of rows takes a free one and gives it back. */
struct hog_cross_slot;
struct hog_cross_bufs {
    struct hog_cross_slot *slot; /* n, one per cache line; NULL: none */
    unsigned n;
};
/* n (>= 1) buffers sized as hog_cross_buf_init() sizes one, nothing for
 * data without interactions; a failure is hog_cross_buf_init()'s status
 * and sentence, with nothing kept. */
hog_status hog_cross_bufs_init(struct hog_cross_bufs *p, const hog_data *d,
                               unsigned n, hog_err *err);
/* A free buffer; while all n are taken, the next to be given back (more
 * takers than the set-up counted are slower, never wrong). NULL when none
 * was made. */
struct hog_cross_buf *hog_cross_bufs_take(const struct hog_cross_bufs *p);
void hog_cross_bufs_give(struct hog_cross_buf *b);
void hog_cross_bufs_free(struct hog_cross_bufs *p);

/* Row i of m with the crossed features of x, in b (valid until the next
 * call on b). m->ns must be set. */
struct hog_row hog_cross_row(const struct hog_interactions *x,
                             const struct hog_csr *m, uint64_t i,
                             struct hog_cross_buf *b);

/* Row i of m (d's matrix, or a view of it) as every kernel must read it. */
static inline struct hog_row hog_data_row(const hog_data *d,
                                          const struct hog_csr *m, uint64_t i,
                                          struct hog_cross_buf *b)
{
    if (HOG_LIKELY(m->ns == NULL))
        return hog_csr_row(m, i);
    return hog_cross_row(&d->cross, m, i, b);
}

#endif
