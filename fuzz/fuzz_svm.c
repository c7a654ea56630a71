/*
 * libFuzzer harness: the text parser, LIBSVM/SVMlight and Vowpal Wabbit (src/io/parse.c).
 * The first byte picks the options (zero-based indices, a minimum feature
 * count, one or three slices, hashing into 8 weights, Vowpal Wabbit text
 * forced, interactions whose crossed rows are then read ("ab,aa", or
 * with an odd length the triples "abc,aab,abb,aaa" and "ab"), rows
 * without a label read (predict's), the hashed names kept (--keep-names);
 * VW text is also told by content) so that the parallel slicing and its
 * boundary hand-off are fuzzed as well as the serial path; the rest is the
 * text. Any status is fine; a crash, a leak, undefined behaviour or a
 * hang is a finding. A loaded set must be self-consistent.
 */
#include "fuzz_common.h"

#include "core/cross.h"
#include "io/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    hog_load_opts o;
    hog_load_opts_init(&o);
    o.zero_based = mode & 1;
    o.threads = 1;
    o.n_features = (mode & 2) ? 1000 : 0;
    o.hash_bits = (mode & 8) ? 3 : 0;         /* 8 weights: merges, collisions */
    o.format = (mode & 16) ? HOG_FORMAT_VW : HOG_FORMAT_AUTO;
    /* the length picks the interactions: no bit of mode is free */
    o.interactions = !(mode & 32) ? NULL
                     : (size & 1) ? "abc,aab,abb,aaa,ab"
                                  : "ab,aa";
    o.unlabelled = (mode & 64) != 0;
    o.keep_names = (mode & 128) != 0;
    unsigned slices = (mode & 4) ? 3 : 1;
    hog_data *d = NULL;
    hog_err err;
    hog_status st = hog_parse_svm_slices((const char *)data + 1, size - 1,
                                         "fuzz", &o, slices, &d, &err);
    if (st == HOG_OK) {
        /* the CSR the trainers will trust */
        const struct hog_csr *m = &d->m;
        if (m->off[0] != 0 || m->off[m->rows] != m->nnz)
            abort();
        for (uint64_t i = 0; i < m->rows; i++) {
            if (m->off[i] > m->off[i + 1])
                abort();
            /* with interactions, entries of one weight from two
             * namespaces stay apart, adjacent */
            for (uint64_t k = m->off[i]; k < m->off[i + 1]; k++)
                if (m->idx[k] >= d->n_features ||
                    (k > m->off[i] && m->idx[k] < m->idx[k - 1]) ||
                    (k > m->off[i] && m->idx[k] == m->idx[k - 1] &&
                     (!m->ns || m->ns[k] == m->ns[k - 1])))
                    abort();
        }
        /* the rows as the kernels read them: crossed, strictly increasing.
         * A row crossed to more than 2^20 entries was counted (the bound's
         * path, at load) but is not expanded: its buffer would pass
         * libFuzzer's malloc limit, as on a machine it may pass memory
         * (the trainers refuse it at set-up, HOG_ENOMEM) */
        struct hog_cross_buf b;
        if (d->cross_row_max <= (UINT64_C(1) << 20) &&
            hog_cross_buf_init(&b, d, &err) == HOG_OK) {
            for (uint64_t i = 0; i < m->rows; i++) {
                struct hog_row r = hog_data_row(d, m, i, &b);
                for (uint32_t k = 0; k < r.nnz; k++)
                    if (r.idx[k] >= d->n_features ||
                        (k && r.idx[k] <= r.idx[k - 1]))
                        abort();
            }
            hog_cross_buf_free(&b);
        }
        hog_data_free(d);
    } else if (d) {
        abort(); /* an error leaves no data behind */
    }
    return 0;
}
