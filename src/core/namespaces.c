/*
 * Namespaces of data in memory, for callers that hold a matrix rather
 * than Vowpal Wabbit text (the Python package): the namespace of each
 * column of a loaded data set, and the crossing of a data set's rows by
 * a namespace per column (core/cross.h has the formulas). Rows and
 * features are counted from 0 in the sentences, as the caller's matrix
 * counts them.
 */
#include "core/cross.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A byte of a sentence: the character, or its code where unprintable. */
static const char *ns_text(uint8_t c, char buf[8])
{
    if (c >= 0x20 && c < 0x7F)
        snprintf(buf, 8, "'%c'", (char)c);
    else
        snprintf(buf, 8, "0x%02X", c);
    return buf;
}

/* The first row with an entry of feature j in namespace c (one exists). */
static uint64_t first_row(const struct hog_csr *m, const uint8_t *ns,
                          uint32_t j, uint8_t c)
{
    for (uint64_t i = 0; i < m->rows; i++)
        for (uint64_t k = m->off[i]; k < m->off[i + 1]; k++)
            if (m->idx[k] == j && ns[k] == c)
                return i;
    return 0;
}

hog_status hog_data_column_namespaces(const hog_data *d, uint8_t *ns,
                                      hog_err *err)
{
    if (!d || !ns)
        return hog_errf(err, HOG_EINVAL, "hog_data_column_namespaces: "
                        "needs a data set and an array for its namespaces");
    const struct hog_csr *m = &d->m;
    if (!d->ns_mem)
        return hog_errf(err, HOG_EINVAL, "the data set keeps no namespaces: "
                        "load Vowpal Wabbit text with keep_namespaces");
    uint64_t nf = d->n_features;
    uint8_t *seen = calloc(nf / 8 + 1, 1);
    if (!seen)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the namespaces "
                        "of %llu features", (unsigned long long)nf);
    memset(ns, ' ', nf);
    for (uint64_t i = 0; i < m->rows; i++)
        for (uint64_t k = m->off[i]; k < m->off[i + 1]; k++) {
            uint32_t j = m->idx[k];
            uint8_t c = d->ns_mem[k], bit = (uint8_t)(1u << (j & 7));
            if (!(seen[j >> 3] & bit)) {
                seen[j >> 3] |= bit;
                ns[j] = c;
                continue;
            }
            if (ns[j] == c)
                continue;
            char a[8], b[8];
            uint64_t r = first_row(m, d->ns_mem, j, ns[j]);
            free(seen);
            return hog_errf(err, HOG_EINVAL,
                            "feature %llu holds entries of namespaces %s "
                            "(row %llu) and %s (row %llu): their features "
                            "were hashed into one column, which one "
                            "namespace per column cannot say (more hash bits "
                            "may part them)", (unsigned long long)j,
                            ns_text(ns[j], a), (unsigned long long)r,
                            ns_text(c, b), (unsigned long long)i);
        }
    free(seen);
    return HOG_OK;
}

hog_status hog_data_set_interactions(hog_data *d, const uint8_t *col_ns,
                                     const char *interactions,
                                     unsigned hash_bits, hog_err *err)
{
    if (!d || !col_ns)
        return hog_errf(err, HOG_EINVAL, "hog_data_set_interactions: needs "
                        "a data set and its features' namespaces");
    struct hog_interactions x;
    hog_status st = hog_interactions_parse(interactions, &x, err);
    if (st != HOG_OK || x.n == 0)
        return st;
    if (d->cross.n || d->m.ns)
        return hog_errf(err, HOG_EINVAL, "the data set crosses its rows "
                        "already");
    if (hash_bits < 1 || hash_bits > HOG_HASH_BITS_MAX)
        return hog_errf(err, HOG_EINVAL, "interactions hash their crossed "
                        "features into 2^B columns: B must be 1 to %u (got "
                        "%u)", HOG_HASH_BITS_MAX, hash_bits);
    if (d->n_features < (UINT64_C(1) << hash_bits))
        return hog_errf(err, HOG_EINVAL, "interactions hash their crossed "
                        "features into 2^%u columns, but the data set has "
                        "%llu", hash_bits, (unsigned long long)d->n_features);
    /* an empty set's array is still one byte: the crossing tests it */
    uint64_t nnz = d->m.off[d->m.rows];
    uint8_t *ns = malloc(nnz ? nnz : 1);
    if (!ns)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the namespaces "
                        "of %llu entries", (unsigned long long)nnz);
    for (uint64_t k = 0; k < nnz; k++)
        ns[k] = col_ns[d->m.idx[k]];
    x.mask = (uint32_t)((UINT64_C(1) << hash_bits) - 1);
    uint64_t was_nnz = d->cross_nnz, was_max = d->cross_row_max;
    d->cross = x;
    d->m.ns = ns;
    st = hog_cross_count(d, "the data", err);
    if (st != HOG_OK) {
        memset(&d->cross, 0, sizeof d->cross);
        d->m.ns = NULL;
        d->cross_nnz = was_nnz, d->cross_row_max = was_max;
        free(ns);
        return st;
    }
    free(d->ns_mem); /* namespaces kept at load, now the crossing's */
    d->ns_mem = ns;
    return HOG_OK;
}
