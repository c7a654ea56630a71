/*
 * .hgm, hogtrain's binary model file, written and read (LIBLINEAR's text
 * model is model_liblinear.c's; model.c chooses between them).
 *
 * .hgm (all integers and floats little-endian; see docs/FORMATS.md):
 *
 *     offset size
 *          0    8  magic "HOGMODL\0"
 *          8    4  format version: 1 (one weight vector), 2 (K classes),
 *                  3 (either, of hashed features), 4 (any, with
 *                  interactions or weights stored sparsely), 5 (any,
 *                  with the optimizer's state)
 *         12    4  header size in bytes: the weights start here
 *                  (88 in version 1, 104 + 8 K in versions 2 and 3,
 *                  104 + 8 K + 4 Q in version 4, 112 + 8 K + 4 Q in
 *                  version 5)
 *         16    4  loss (hog_loss)
 *         20    4  label kind (0 binary, 1 real)
 *         24    8  l1 (f64)
 *         32    8  l2 (f64)
 *         40    8  bias value (f64; 0 = no bias weight)
 *         48    8  label_pos (f64)
 *         56    8  label_neg (f64)
 *         64    8  n_features (u64)
 *         72    8  number of weights stored (u64) = V * (n_features + (bias != 0)),
 *                  V vectors: 1, or K
 *         80    8  reserved, zero (version 3: hash bits B, u32, 1..31,
 *                  then the hash seed, u32; version 4: the same, B 0
 *                  for unhashed features)
 *     versions 2 to 4:
 *         88    4  K, the number of classes (u32, >= 3; versions 3 and 4:
 *                  0 for one weight vector)
 *         92    4  multiclass mode (hog_multiclass)
 *         96    8  reserved, zero (versions 4 and 5: flags, u32, bit 0
 *                  = the weights are stored sparsely, bit 1 = a names
 *                  section, bit 2 = the loss's parameter, bit 3 = a
 *                  triple among the interactions; then Q, u32, the
 *                  number of interactions, 0..32)
 *        104  8*K  the class labels (f64), in the model's class order
 *     versions 4 and 5:
 *   104+8K  4*Q  the interactions: two namespace bytes each and two
 *                  zeros, or three (a triple) and one zero
 *     version 5:
 *  104+8K+4Q  8  S, the size of the state section (u64)
 *     flag bit 1 (the header 8 bytes longer):
 *      then   8  N, the size of the names section (u64)
 *     flag bit 2 (the header 8 bytes longer):
 *      then   8  the loss's parameter (f64: epsilon or tau)
 *     then, dense:
 *     hsize   4*n  weights (f32), class c's vector at c * (n / K)
 *     or, sparse (version 4, flag bit 0):
 *     hsize     8  z, the nonzero weights (u64, <= n)
 *   hsize+8   8*z  their positions in the dense array (u64, increasing)
 *          4*z  their values (f32); every other weight is 0
 *     version 5, the state section (S = 32 + 4 n A bytes):
 *              4  its version, 1 (u32)
 *              4  the schedule it belongs to (hog_schedule)
 *              4  its arrays A as bits: 1 a, 2 b (3 FTRL, 2 AdaGrad, 0
 *                 constant and invscaling)
 *              4  zero
 *              8  epochs trained (u64)
 *              8  steps taken (u64; one-vs-rest: per class)
 *            4*n  a (f32): FTRL's sums z, laid out as the weights
 *            4*n  b (f32): FTRL's sqrt(n), or AdaGrad's sums
 *     flag bit 1, the names section (N = 16 + 8 E + T bytes):
 *              4  its version, 1 (u32); then 4 zero
 *              8  E, the names (u64)
 *            4*E  each name's weight (u32, increasing)
 *            4*E  each name's length (u32)
 *              T  the names' bytes
 *     and last
 *              4  CRC32C of everything before it
 *
 * Binary and regression models are written as version 1, byte for byte as
 * before version 2 existed; K-class models as version 2; a model of hashed
 * features (either kind) as version 3, so that a reader that cannot hash
 * the data it scores refuses the file by its version; a model with
 * interactions, or a hashed one whose nonzero weights are fewer than a
 * third of its weights (so that 12 bytes each beat 4 for every weight),
 * as version 4; a model that keeps its optimizer's state (save_state)
 * as version 5, which older readers refuse by its number; a model that
 * keeps its features' names (--keep-names) as version 4 or 5 with flag
 * bit 1, which older readers refuse by its header size; a model of a loss
 * with a parameter (Huber, the epsilon-insensitive pair, quantile) as
 * version 4 or 5 with flag bit 2, which older readers refuse by its
 * loss (the losses without one keep their version). A reader checks,
 * in order: magic, version, that the declared sizes add up to the file's
 * size (before allocating anything), the CRC, then the fields.
 */
#include "io/model_format.h"

#include "core/loss.h"

#include <stdlib.h>

#define HGM_HEADER_V1 88u
#define HGM_HEADER_V2 104u /* then the K class labels */
#define HGM_VERSION_ONE 1u /* one weight vector */
#define HGM_VERSION_K 2u   /* K classes */
#define HGM_VERSION_HASHED 3u /* either, of hashed features */
#define HGM_VERSION_SPARSE 4u /* any, interactions or sparse weights */
#define HGM_VERSION_STATE 5u  /* any, with the optimizer's state */
#define HGM_FLAG_SPARSE 1u
#define HGM_FLAG_NAMES 2u     /* versions 4 and 5: a names section */
#define HGM_FLAG_LOSS_PARAM 4u /* versions 4 and 5: the loss's parameter */
/* Versions 4 and 5: an interaction of three namespaces; a reader older
 * than triples refuses the unknown flag instead of crossing a triple as
 * the pair of its first two bytes. */
#define HGM_FLAG_TRIPLES 8u
#define HGM_NAMES_HEAD 16u    /* the names section before its arrays */
#define HGM_STATE_HEAD 32u    /* the state section before its arrays */

/* ---- little-endian fields -------------------------------------------------- */

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put_f64(unsigned char *p, double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
    put_u64(p, v);
}

static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static double get_f64(const unsigned char *p)
{
    uint64_t v = get_u64(p);
    double d;
    memcpy(&d, &v, 8);
    return d;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOG_HOST_BIG_ENDIAN 1
#else
#define HOG_HOST_BIG_ENDIAN 0
#endif

/* Byte-swaps n floats in place on a big-endian host; nothing elsewhere. */
static void f32_le_inplace(float *w, uint64_t n)
{
#if HOG_HOST_BIG_ENDIAN
    for (uint64_t i = 0; i < n; i++) {
        uint32_t v;
        memcpy(&v, &w[i], 4);
        v = __builtin_bswap32(v);
        memcpy(&w[i], &v, 4);
    }
#else
    (void)w, (void)n;
#endif
}

/* ---- .hgm writer ------------------------------------------------------------ */

/* The state section's size (m->state). */
static uint64_t state_bytes(const hog_model *m)
{
    unsigned arr = hog_opt_state_arrays(m->state->schedule);
    return HGM_STATE_HEAD +
           4 * hog_model_len(m) * (uint64_t)((arr & 1) + (arr >> 1));
}

/* The state section, into the CRC. */
static hog_status save_state(const hog_model *m, FILE *f, const char *path,
                             uint32_t *crc, hog_err *err)
{
    const struct hog_opt_state *st = m->state;
    unsigned arr = hog_opt_state_arrays(st->schedule);
    unsigned char h[HGM_STATE_HEAD] = { 0 };
    put_u32(h, 1);
    put_u32(h + 4, (uint32_t)st->schedule);
    put_u32(h + 8, arr);
    put_u64(h + 16, st->epochs);
    put_u64(h + 24, st->steps);
    *crc = hog_crc32c(*crc, h, sizeof h);
    if (fwrite(h, 1, sizeof h, f) != sizeof h)
        return hog_model_write_failed(path, err);
    const float *a[2] = { st->a, st->b };
    uint64_t n = hog_model_len(m);
    for (int i = 0; i < 2; i++) {
        if (!(arr & (1u << i)))
            continue;
        float buf[4096];
        for (uint64_t j = 0; j < n; j += 4096) {
            uint64_t c = n - j < 4096 ? n - j : 4096;
            memcpy(buf, a[i] + j, c * 4);
            f32_le_inplace(buf, c);
            *crc = hog_crc32c(*crc, buf, c * 4);
            if (fwrite(buf, 4, c, f) != c)
                return hog_model_write_failed(path, err);
        }
    }
    return HOG_OK;
}

/* The names section's size (m->names). */
static uint64_t names_bytes(const hog_model *m)
{
    const struct hog_names *nm = m->names;
    return HGM_NAMES_HEAD + 8 * nm->n + nm->off[nm->n];
}

/* The names section, into the CRC: its head, the entries' weights, their
 * names' lengths, then the names. */
static hog_status save_names(const hog_model *m, FILE *f, const char *path,
                             uint32_t *crc, hog_err *err)
{
    const struct hog_names *nm = m->names;
    unsigned char buf[4 * 1024];
    put_u32(buf, 1);
    put_u32(buf + 4, 0);
    put_u64(buf + 8, nm->n);
    *crc = hog_crc32c(*crc, buf, HGM_NAMES_HEAD);
    if (fwrite(buf, 1, HGM_NAMES_HEAD, f) != HGM_NAMES_HEAD)
        return hog_model_write_failed(path, err);
    for (int pass = 0; pass < 2; pass++)
        for (uint64_t i = 0; i < nm->n;) {
            size_t k = 0;
            for (; k < sizeof buf / 4 && i < nm->n; k++, i++)
                put_u32(buf + 4 * k,
                        pass ? (uint32_t)(nm->off[i + 1] - nm->off[i])
                             : nm->pos[i]);
            *crc = hog_crc32c(*crc, buf, 4 * k);
            if (fwrite(buf, 4, k, f) != k)
                return hog_model_write_failed(path, err);
        }
    uint64_t t = nm->off[nm->n];
    *crc = hog_crc32c(*crc, nm->text, t);
    if (t && fwrite(nm->text, 1, t, f) != t)
        return hog_model_write_failed(path, err);
    return HOG_OK;
}

/* The sections after the weights: the state, the names. */
static hog_status save_sections(const hog_model *m, FILE *f,
                                const char *path, uint32_t *crc,
                                hog_err *err)
{
    hog_status st = HOG_OK;
    if (m->state)
        st = save_state(m, f, path, crc, err);
    if (st == HOG_OK && m->names)
        st = save_names(m, f, path, crc, err);
    return st;
}

/* The header, and for K classes the labels after it: *hsize bytes,
 * malloc'd; version 1 unless the model has K classes. */
static unsigned char *hgm_header(const hog_model *m, bool sparse,
                                 uint32_t *hsize, hog_err *err)
{
    uint32_t k = m->n_classes, q = m->cross.n;
    bool hashed = m->hash_bits != 0, v5 = m->state != NULL,
         names = m->names != NULL,
         lp = hog_loss_rows[m->loss].param != HOG_LOSS_PARAM_NONE,
         v4 = sparse || q || v5 || names || lp;
    *hsize = k || hashed || v4 ? HGM_HEADER_V2 + 8u * k + 4u * q
                               : HGM_HEADER_V1;
    *hsize += (v5 ? 8u : 0u) + (names ? 8u : 0u) + (lp ? 8u : 0u);
    unsigned char *h = calloc(1, *hsize);
    if (!h) {
        hog_errf(err, HOG_ENOMEM, "out of memory for a model header of %u "
                 "classes", k);
        return NULL;
    }
    memcpy(h, HOG_HGM_MAGIC, 8);
    put_u32(h + 8, v5       ? HGM_VERSION_STATE
                   : v4     ? HGM_VERSION_SPARSE
                   : hashed ? HGM_VERSION_HASHED
                   : k      ? HGM_VERSION_K
                            : HGM_VERSION_ONE);
    put_u32(h + 12, *hsize);
    put_u32(h + 16, (uint32_t)m->loss);
    put_u32(h + 20, (uint32_t)m->labels);
    put_f64(h + 24, m->l1);
    put_f64(h + 32, m->l2);
    put_f64(h + 40, m->bias);
    put_f64(h + 48, m->label_pos);
    put_f64(h + 56, m->label_neg);
    put_u64(h + 64, m->n_features);
    put_u64(h + 72, hog_model_len(m));
    if (hashed) {
        put_u32(h + 80, m->hash_bits);
        put_u32(h + 84, m->hash_seed);
    }
    if (k) {
        put_u32(h + 88, k);
        put_u32(h + 92, (uint32_t)m->multiclass);
        for (uint32_t c = 0; c < k; c++)
            put_f64(h + HGM_HEADER_V2 + 8 * c, m->classes[c]);
    }
    if (v4) {
        bool triples = false;
        for (uint32_t i = 0; i < q; i++)
            triples |= m->cross.term[i][2] != 0;
        put_u32(h + 96, (sparse ? HGM_FLAG_SPARSE : 0) |
                            (names ? HGM_FLAG_NAMES : 0) |
                            (lp ? HGM_FLAG_LOSS_PARAM : 0) |
                            (triples ? HGM_FLAG_TRIPLES : 0));
        put_u32(h + 100, q);
        for (uint32_t i = 0; i < q; i++) {
            memcpy(h + HGM_HEADER_V2 + 8 * k + 4 * i, m->cross.term[i], 3);
        }
    }
    if (v5)
        put_u64(h + HGM_HEADER_V2 + 8 * k + 4 * q, state_bytes(m));
    if (names)
        put_u64(h + HGM_HEADER_V2 + 8 * k + 4 * q + (v5 ? 8 : 0),
                names_bytes(m));
    if (lp)
        put_f64(h + HGM_HEADER_V2 + 8 * k + 4 * q + (v5 ? 8 : 0) +
                    (names ? 8 : 0),
                m->loss_param);
    return h;
}

/* The header's q interactions, 4 bytes each, read back as written: what
 * hog_interactions_parse() makes of them is them (no zero in a pair's two
 * bytes, none read past, VW's order, none twice), and a triple among them
 * if and only if the flag says so. */
static bool interactions_ok(const unsigned char *b, uint32_t q, bool triples)
{
    struct hog_interactions x = { .n = q };
    bool any = false;
    for (uint32_t i = 0; i < q; i++) {
        if (b[4 * i + 3] != 0)
            return false;
        memcpy(x.term[i], b + 4 * i, 3);
        any |= b[4 * i + 2] != 0;
    }
    if (any != triples)
        return false;
    char spec[HOG_INTERACTIONS_SPEC_LEN];
    hog_interactions_format(&x, spec, sizeof spec);
    struct hog_interactions y;
    hog_err e;
    return hog_interactions_parse(spec, &y, &e) == HOG_OK && y.n == q &&
           memcmp(x.term, y.term, sizeof x.term) == 0;
}

/* The nonzero weights as (position, value) pairs, in blocks: z, then the
 * positions, then the values, each little-endian, into the CRC. */
static hog_status save_sparse(const float *w, uint64_t n, uint64_t z, FILE *f,
                              const char *path, uint32_t *crc, hog_err *err)
{
    unsigned char buf[8 * 512];
    put_u64(buf, z);
    *crc = hog_crc32c(*crc, buf, 8);
    if (fwrite(buf, 1, 8, f) != 8)
        return hog_model_write_failed(path, err);
    for (int pass = 0; pass < 2; pass++) {
        size_t k = 0, width = pass ? 4 : 8;
        for (uint64_t i = 0; i <= n; i++) {
            if (k == sizeof buf / 8 || (i == n && k)) {
                *crc = hog_crc32c(*crc, buf, k * width);
                if (fwrite(buf, width, k, f) != k)
                    return hog_model_write_failed(path, err);
                k = 0;
            }
            if (i == n || w[i] == 0.0f)
                continue;
            if (pass) {
                uint32_t v;
                memcpy(&v, &w[i], 4);
                put_u32(buf + 4 * k, v);
            } else {
                put_u64(buf + 8 * k, i);
            }
            k++;
        }
    }
    return HOG_OK;
}

hog_status hog_hgm_save(const hog_model *m, FILE *f, const char *path,
                        hog_err *err)
{
    uint64_t n = hog_model_len(m), z = 0;
    for (uint64_t i = 0; i < n; i++)
        z += m->w[i] != 0.0f; /* -0 is stored as 0 */
    /* sparse: hashed models only (2^B weights, few of them seen), so that
     * models of unhashed features stay byte for byte what version 1 and 2
     * readers read */
    bool sparse = m->hash_bits != 0 && z < n / 3;
    uint32_t hsize;
    unsigned char *h = hgm_header(m, sparse, &hsize, err);
    if (!h)
        return HOG_ENOMEM;
    uint32_t crc = hog_crc32c(0, h, hsize);
    size_t put = fwrite(h, 1, hsize, f);
    free(h);
    if (put != hsize)
        return hog_model_write_failed(path, err);
    if (sparse) {
        hog_status st = save_sparse(m->w, n, z, f, path, &crc, err);
        if (st == HOG_OK)
            st = save_sections(m, f, path, &crc, err);
        if (st != HOG_OK)
            return st;
        unsigned char c[4];
        put_u32(c, crc);
        return fwrite(c, 1, 4, f) == 4 ? HOG_OK : hog_model_write_failed(path, err);
    }
#if HOG_HOST_BIG_ENDIAN
    float buf[4096];
    for (uint64_t i = 0; i < n; i += 4096) {
        uint64_t k = n - i < 4096 ? n - i : 4096;
        memcpy(buf, m->w + i, k * 4);
        f32_le_inplace(buf, k);
        crc = hog_crc32c(crc, buf, k * 4);
        if (fwrite(buf, 4, k, f) != k)
            return hog_model_write_failed(path, err);
    }
#else
    crc = hog_crc32c(crc, m->w, n * 4);
    if (n && fwrite(m->w, 4, n, f) != n)
        return hog_model_write_failed(path, err);
#endif
    hog_status st = save_sections(m, f, path, &crc, err);
    if (st != HOG_OK)
        return st;
    unsigned char c[4];
    put_u32(c, crc);
    if (fwrite(c, 1, 4, f) != 4)
        return hog_model_write_failed(path, err);
    return HOG_OK;
}

/* ---- .hgm reader ------------------------------------------------------------ */

/* What a header's fields say, checked after its CRC. NULL when they are
 * valid, else why not. */
static const char *check_hgm_fields(const unsigned char *h, uint32_t version,
                                    const double *cl, hog_err *err)
{
    uint32_t loss = get_u32(h + 16), kind = get_u32(h + 20);
    double bias = get_f64(h + 40);
    uint64_t nf = get_u64(h + 64), nw = get_u64(h + 72);
    uint64_t k = version >= HGM_VERSION_K && get_u32(h + 88) ? get_u32(h + 88)
                                                             : 1;
    if (!hog_loss_valid((int)loss))
        return "unknown loss";
    if (kind > HOG_LABELS_REAL)
        return "unknown label kind";
    if (!isfinite(bias))
        return "bias value is not finite";
    if (nf > (uint64_t)HOG_MAX_FEATURES)
        return "too many features";
    if (nw % k != 0 || nw / k != nf + (bias != 0.0))
        return k > 1 ? "weight count is not the classes times features and "
                       "bias"
                     : "weight count does not match features and bias";
    if (version >= HGM_VERSION_HASHED) {
        uint32_t bits = get_u32(h + 80);
        bool none = version >= HGM_VERSION_SPARSE && bits == 0;
        if (!none && (bits < 1 || bits > HOG_HASH_BITS_MAX))
            return "hash bits not in 1 to 31";
        if (!none && nf < (UINT64_C(1) << bits))
            return "fewer features than the hashing's weights";
        if (version >= HGM_VERSION_SPARSE && get_u32(h + 100) && none)
            return "interactions of unhashed features";
        if (version >= HGM_VERSION_SPARSE &&
            (get_u32(h + 96) &
             ~(HGM_FLAG_SPARSE | HGM_FLAG_NAMES | HGM_FLAG_LOSS_PARAM |
               HGM_FLAG_TRIPLES)))
            return "unknown flags";
    }
    if (k == 1)
        return NULL;
    uint32_t mc = get_u32(h + 92);
    if (!hog_loss_is_classification(loss) || kind != HOG_LABELS_BINARY)
        return "K classes of a regression model";
    if (mc > HOG_MULTICLASS_SOFTMAX)
        return "unknown multiclass mode";
    if (mc == HOG_MULTICLASS_SOFTMAX && loss != HOG_LOSS_LOGISTIC)
        return "a softmax model without the logistic loss";
    return hog_model_check_classes(cl, (uint32_t)k, err);
}

/* The state section sec of sbytes (CRC checked; its size is 32 and up
 * to two arrays of nw, checked before it was read) into *out. */
static hog_status load_state(const unsigned char *sec, uint64_t sbytes,
                             uint64_t nw, const char *path,
                             struct hog_opt_state **out, hog_err *err)
{
    uint32_t ver = get_u32(sec), sch = get_u32(sec + 4),
             arr = get_u32(sec + 8);
    const char *bad = NULL;
    if (ver != 1)
        bad = "its version is not 1";
    else if (sch > HOG_SCHED_FTRL)
        bad = "unknown schedule";
    else if (arr != hog_opt_state_arrays((hog_schedule)sch) ||
             get_u32(sec + 12) != 0)
        bad = "its arrays are not its schedule's";
    else if (sbytes != HGM_STATE_HEAD + 4 * nw * ((arr & 1) + (arr >> 1)))
        bad = "its size is not its arrays'";
    if (bad)
        return hog_errf(err, HOG_ECORRUPT, "%s: invalid .hgm state "
                        "section: %s", path, bad);
    struct hog_opt_state *st = hog_opt_state_new((hog_schedule)sch, nw);
    if (!st)
        return hog_errf(err, HOG_ENOMEM, "%s: out of memory for the "
                        "optimizer state of %llu weights", path,
                        (unsigned long long)nw);
    st->epochs = get_u64(sec + 16);
    st->steps = get_u64(sec + 24);
    const unsigned char *p = sec + HGM_STATE_HEAD;
    float *a[2] = { st->a, st->b };
    for (int i = 0; i < 2; i++) {
        if (!a[i])
            continue;
        memcpy(a[i], p, nw * 4);
        f32_le_inplace(a[i], nw);
        p += nw * 4;
        for (uint64_t j = 0; j < nw; j++)
            if (!isfinite(a[i][j]) || (i == 1 && a[i][j] < 0)) {
                double v = a[i][j]; /* the array goes with st */
                hog_opt_state_free(st);
                return hog_errf(err, HOG_ECORRUPT, "%s: invalid .hgm state "
                                "section: its sums hold %g at weight %llu",
                                path, v, (unsigned long long)j);
            }
    }
    *out = st;
    return HOG_OK;
}

/* The names section sec of nbytes (CRC checked; at least its head) into
 * *out: its entries' weights below nf, in order, and their lengths
 * adding up to the bytes after them. */
static hog_status load_names(const unsigned char *sec, uint64_t nbytes,
                             uint64_t nf, const char *path,
                             struct hog_names **out, hog_err *err)
{
    uint64_t n = get_u64(sec + 8);
    const char *bad = NULL;
    if (get_u32(sec) != 1 || get_u32(sec + 4) != 0)
        bad = "its version is not 1";
    else if (n > (nbytes - HGM_NAMES_HEAD) / 8)
        bad = "more entries than its size holds";
    if (bad)
        return hog_errf(err, HOG_ECORRUPT, "%s: invalid .hgm names "
                        "section: %s", path, bad);
    const unsigned char *pos = sec + HGM_NAMES_HEAD, *len = pos + 4 * n;
    uint64_t t = nbytes - HGM_NAMES_HEAD - 8 * n;
    struct hog_names *nm = calloc(1, sizeof *nm);
    if (nm) {
        nm->pos = malloc((n ? n : 1) * sizeof *nm->pos);
        nm->off = malloc((n + 1) * sizeof *nm->off);
        nm->text = malloc(t ? t : 1);
    }
    if (!nm || !nm->pos || !nm->off || !nm->text) {
        hog_names_free(nm);
        return hog_errf(err, HOG_ENOMEM, "%s: out of memory for %llu "
                        "feature names", path, (unsigned long long)n);
    }
    nm->n = n;
    nm->off[0] = 0;
    for (uint64_t i = 0; i < n && !bad; i++) {
        nm->pos[i] = get_u32(pos + 4 * i);
        nm->off[i + 1] = nm->off[i] + get_u32(len + 4 * i);
        if (nm->pos[i] >= nf || (i && nm->pos[i] < nm->pos[i - 1]))
            bad = "weights not in order below the features' count";
        else if (nm->off[i + 1] > t)
            bad = "names longer than its size holds";
    }
    if (!bad && nm->off[n] != t)
        bad = "names shorter than its size";
    if (bad) {
        hog_names_free(nm);
        return hog_errf(err, HOG_ECORRUPT, "%s: invalid .hgm names "
                        "section: %s", path, bad);
    }
    memcpy(nm->text, len + 4 * n, t);
    *out = nm;
    return HOG_OK;
}

static hog_status read_failed(const char *path, hog_err *err)
{
    return hog_errf(err, HOG_EIO, "%s: read failed: %s", path,
                    strerror(errno));
}

static hog_status truncated_header(const char *path, uint64_t fsize,
                                   uint32_t need, hog_err *err)
{
    return hog_errf(err, HOG_ECORRUPT,
                    "%s: truncated .hgm file (%llu bytes, the header alone "
                    "is %u)",
                    path, (unsigned long long)fsize, need);
}

hog_status hog_hgm_load(FILE *f, const char *path, uint64_t fsize,
                        hog_model **out, hog_err *err)
{
    unsigned char h[HGM_HEADER_V2];
    if (fsize < 16)
        return truncated_header(path, fsize, HGM_HEADER_V1, err);
    if (fread(h, 1, 16, f) != 16)
        return read_failed(path, err);
    uint32_t version = get_u32(h + 8), hsize = get_u32(h + 12);
    if (version > HOG_HGM_VERSION)
        return hog_errf(err, HOG_EFORMAT,
                        "%s: .hgm format version %u is newer than this hogtrain "
                        "reads (%u)",
                        path, version, HOG_HGM_VERSION);
    if (version == 0)
        return hog_errf(err, HOG_EFORMAT, "%s: .hgm format version 0 is not valid",
                        path);
    /* the fixed part: all of version 1's header; version 2's (and 3's)
     * before its class labels */
    uint32_t fixed = version >= HGM_VERSION_K ? HGM_HEADER_V2 : HGM_HEADER_V1;
    if (version == HGM_VERSION_ONE && hsize != HGM_HEADER_V1)
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: .hgm header size %u, version %u has %u", path,
                        hsize, version, HGM_HEADER_V1);
    if (fsize < (uint64_t)fixed + 4)
        return truncated_header(path, fsize, fixed, err);
    if (fread(h + 16, 1, fixed - 16, f) != fixed - 16)
        return read_failed(path, err);
    uint32_t k = 0, q = 0;
    /* version 5: the state section's size after the interactions */
    const uint32_t x5 = version == HGM_VERSION_STATE ? 8u : 0u;
    /* versions 4 and 5 with the names flag: the names section's size */
    const uint32_t xn = version >= HGM_VERSION_SPARSE &&
                                (get_u32(h + 96) & HGM_FLAG_NAMES)
                            ? 8u : 0u;
    /* and with the loss's parameter flag: the parameter */
    const uint32_t xp = version >= HGM_VERSION_SPARSE &&
                                (get_u32(h + 96) & HGM_FLAG_LOSS_PARAM)
                            ? 8u : 0u;
    bool sparse = false;
    if (version >= HGM_VERSION_K) {
        k = get_u32(h + 88);
        /* versions 3 and 4 of one weight vector: K 0 */
        if ((k < 3 && !(version >= HGM_VERSION_HASHED && k == 0)) ||
            k > HOG_MAX_CLASSES)
            return hog_errf(err, HOG_ECORRUPT,
                            "%s: invalid .hgm header: %u classes (a K-class "
                            "model has 3 to %u)",
                            path, k, HOG_MAX_CLASSES);
        q = version >= HGM_VERSION_SPARSE ? get_u32(h + 100) : 0;
        if (q > HOG_MAX_INTERACTIONS)
            return hog_errf(err, HOG_ECORRUPT,
                            "%s: invalid .hgm header: %u interactions (at "
                            "most %u)", path, q, HOG_MAX_INTERACTIONS);
        if (hsize != HGM_HEADER_V2 + 8u * k + 4u * q + x5 + xn + xp) {
            char ints[40] = "";
            if (q)
                snprintf(ints, sizeof ints, " and %u interactions", q);
            return hog_errf(err, HOG_ECORRUPT,
                            "%s: .hgm header size %u, version %u with %u "
                            "classes%s has %u",
                            path, hsize, version, k, ints,
                            HGM_HEADER_V2 + 8u * k + 4u * q + x5 + xn + xp);
        }
        sparse = version >= HGM_VERSION_SPARSE &&
                 (get_u32(h + 96) & HGM_FLAG_SPARSE);
        if (fsize < (uint64_t)hsize + 4)
            return truncated_header(path, fsize, hsize, err);
    }
    uint64_t nw = get_u64(h + 72);
    /* interactions, the state's size, the names', the loss's parameter,
     * z */
    unsigned char extra[4 * HOG_MAX_INTERACTIONS + 32];
    uint32_t nx = 8u * k; /* the labels' bytes, read below */
    if ((uint64_t)hsize + 4 + (sparse ? 8 : 0) > fsize)
        return truncated_header(path, fsize, hsize, err);
    /* the interactions, S and z sit after the labels: read the labels now */
    unsigned char *lab0 = NULL;
    uint64_t z = 0, sbytes = 0, nbytes = 0;
    double lparam = 0.0;
    const uint32_t nextra = 4u * q + x5 + xn + xp + (sparse ? 8u : 0u);
    if (nextra) {
        lab0 = malloc(nx + 1);
        if (!lab0)
            return hog_errf(err, HOG_ENOMEM, "%s: out of memory", path);
        if ((nx && fread(lab0, 1, nx, f) != nx) ||
            fread(extra, 1, nextra, f) != nextra) {
            free(lab0);
            return read_failed(path, err);
        }
        if (sparse)
            z = get_u64(extra + 4u * q + x5 + xn + xp);
        if (x5)
            sbytes = get_u64(extra + 4u * q);
        if (xn)
            nbytes = get_u64(extra + 4u * q + x5);
        if (xp)
            lparam = get_f64(extra + 4u * q + x5 + xn);
    }
    /* Sizes first, against the file: nothing is allocated for a size the
     * file does not hold. The state section holds one or two arrays of
     * the weights' count, or none. */
    uint64_t nw0 = get_u64(h + 72);
    uint64_t room = fsize - hsize - 4 - (sparse ? 8 : 0);
    /* the arrays' floats, counted without 4 nw0, which a forged count
     * overflows */
    uint64_t sfl = sbytes > HGM_STATE_HEAD ? (sbytes - HGM_STATE_HEAD) / 4 : 0;
    if (x5 && (sbytes < HGM_STATE_HEAD || sbytes > room ||
               (sbytes > HGM_STATE_HEAD &&
                ((sbytes - HGM_STATE_HEAD) % 4 != 0 || nw0 == 0 ||
                 sfl % nw0 != 0 || sfl / nw0 > 2)))) {
        free(lab0);
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: header declares a state section of %llu bytes, "
                        "which is not 32 bytes and up to two arrays of its "
                        "%llu weights in a file of %llu bytes (truncated or "
                        "corrupt)", path, (unsigned long long)sbytes,
                        (unsigned long long)nw0, (unsigned long long)fsize);
    }
    if (xn && (nbytes < HGM_NAMES_HEAD || nbytes > room - sbytes)) {
        free(lab0);
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: header declares a names section of %llu bytes, "
                        "which is not 16 bytes and up to what a file of %llu "
                        "bytes holds (truncated or corrupt)", path,
                        (unsigned long long)nbytes, (unsigned long long)fsize);
    }
    uint64_t body = room - sbytes - nbytes;
    if (sparse && (z > nw || body % 12 != 0 || body / 12 != z)) {
        free(lab0);
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: header declares %llu of %llu weights stored, "
                        "but the file has %llu bytes (truncated or corrupt)",
                        path, (unsigned long long)z, (unsigned long long)nw,
                        (unsigned long long)fsize);
    }
    if (sparse) {
        /* The dense weights a sparse file declares are not in the file:
         * their count is checked against the header's own fields (a hashed
         * model's 2^B weights and more, per vector), and against the
         * memory this process can have, before they are allocated. */
        uint64_t nf = get_u64(h + 64), v = k ? k : 1;
        uint32_t bits = get_u32(h + 80);
        const char *bad = NULL;
        if (bits < 1 || bits > HOG_HASH_BITS_MAX)
            bad = "sparse weights of a model of unhashed features";
        else if (nf < (UINT64_C(1) << bits) || nf > (uint64_t)HOG_MAX_FEATURES)
            bad = "features not between the hashing's weights and the most "
                  "a model has";
        else if (nw != v * (nf + (get_f64(h + 40) != 0.0)))
            bad = "weight count is not the vectors times features and bias";
        if (bad) {
            free(lab0);
            return hog_errf(err, HOG_ECORRUPT, "%s: invalid .hgm header: %s",
                            path, bad);
        }
        const char *what;
        uint64_t have = hog_mem_available(&what);
        if (nw > have / 4) {
            free(lab0);
            return hog_errf(err, HOG_ENOMEM,
                            "%s: its %llu weights need %.1f GiB in memory, "
                            "and %.1f GiB is available %s", path,
                            (unsigned long long)nw, (double)nw * 4 / 1073741824.0,
                            (double)have / 1073741824.0, what ? what : "");
        }
    }
    uint64_t avail = body / 4;
    if (!sparse && (nw > avail || body % 4 != 0 || nw != avail)) {
        free(lab0);
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: header declares %llu weights, so %llu bytes, but "
                        "the file has %llu bytes (truncated or corrupt)",
                        path, (unsigned long long)nw,
                        nw <= (UINT64_MAX - hsize - 4 - sbytes - nbytes) / 4
                            ? (unsigned long long)(hsize + 4 + sbytes +
                                                   nbytes + 4 * nw)
                            : 0ull,
                        (unsigned long long)fsize);
    }
    unsigned char *lab = lab0 ? lab0 : malloc(8 * (size_t)k + 1);
    double *cl = malloc(sizeof *cl * k + 1);
    float *w = sparse ? calloc(nw ? nw : 1, 4) : malloc(nw ? nw * 4 : 4);
    uint64_t *pos = sparse ? malloc(z ? z * 8 : 8) : NULL;
    unsigned char *raw = sparse ? malloc(z ? z * 8 : 8) : NULL;
    unsigned char *sec = x5 ? malloc(sbytes) : NULL;
    unsigned char *nsec = xn ? malloc(nbytes) : NULL;
    hog_model *m = calloc(1, sizeof *m);
    hog_status s = HOG_OK;
    unsigned char c[4];
    const char *bad;
    if (!lab || !cl || !w || !m || (sparse && (!pos || !raw)) ||
        (x5 && !sec) || (xn && !nsec)) {
        s = hog_errf(err, HOG_ENOMEM, "%s: out of memory for %llu weights",
                     path, (unsigned long long)nw);
        goto fail;
    }
    bool short_read;
    uint32_t crc;
    if (sparse) {
        /* positions then values; a position out of order or range is a
         * corrupt file (after the CRC, which covers the raw bytes) */
        short_read = (z && fread(raw, 8, z, f) != z);
        crc = hog_crc32c(hog_crc32c(hog_crc32c(0, h, fixed), lab, nx), extra,
                         nextra);
        crc = hog_crc32c(crc, raw, z * 8);
        for (uint64_t i = 0; i < z && !short_read; i++)
            pos[i] = get_u64(raw + 8 * i);
        short_read = short_read || (z && fread(raw, 4, z, f) != z);
        crc = hog_crc32c(crc, raw, z * 4);
    } else {
        short_read = (!lab0 && k && fread(lab, 8, k, f) != k) ||
                     (nw && fread(w, 4, nw, f) != nw);
        crc = hog_crc32c(hog_crc32c(hog_crc32c(0, h, fixed), lab, 8u * k),
                         extra, nextra);
        crc = hog_crc32c(crc, w, nw * 4);
    }
    if (x5) {
        short_read = short_read || fread(sec, 1, sbytes, f) != sbytes;
        crc = hog_crc32c(crc, sec, sbytes);
    }
    if (xn) {
        short_read = short_read || fread(nsec, 1, nbytes, f) != nbytes;
        crc = hog_crc32c(crc, nsec, nbytes);
    }
    if (short_read || fread(c, 1, 4, f) != 4) {
        s = hog_errf(err, HOG_ECORRUPT, "%s: truncated while reading weights",
                     path);
        goto fail;
    }
    if (crc != get_u32(c)) {
        s = hog_errf(err, HOG_ECORRUPT,
                     "%s: checksum mismatch (stored %08x, computed %08x): the "
                     "file is corrupt",
                     path, get_u32(c), crc);
        goto fail;
    }
    for (uint64_t i = 0; sparse && i < z; i++) {
        /* the positions the CRC vouched for, checked before they index */
        uint32_t v = get_u32(raw + 4 * i);
        if (pos[i] >= nw || (i && pos[i] <= pos[i - 1])) {
            s = hog_errf(err, HOG_ECORRUPT, "%s: invalid .hgm weights: "
                         "stored positions not increasing below %llu",
                         path, (unsigned long long)nw);
            goto fail;
        }
        memcpy(&w[pos[i]], &v, 4);
    }
    if (!sparse)
        f32_le_inplace(w, nw);
    for (uint32_t i = 0; i < k; i++)
        cl[i] = get_f64(lab + 8 * i);
    const bool triples = version >= HGM_VERSION_SPARSE &&
                         (get_u32(h + 96) & HGM_FLAG_TRIPLES);
    if ((q || triples) && !interactions_ok(extra, q, triples)) {
        s = hog_errf(err, HOG_ECORRUPT, "%s: invalid .hgm header: "
                     "interactions that are not pairs or triples of "
                     "namespaces", path);
        goto fail;
    }
    if (!(bad = check_hgm_fields(h, version, cl, err)) &&
        (hog_loss_rows[get_u32(h + 16)].param != HOG_LOSS_PARAM_NONE) !=
            (xp != 0))
        bad = xp ? "a loss parameter for a loss that takes none"
                 : "no parameter for a loss that takes one";
    else if (!bad && !hog_loss_param_ok((hog_loss)get_u32(h + 16), lparam))
        bad = "the loss's parameter is out of its range";
    if (bad) {
        s = hog_errf(err, HOG_ECORRUPT, "%s: invalid .hgm header: %s", path,
                     bad);
        goto fail;
    }
    if (x5 && (s = load_state(sec, sbytes, nw, path, &m->state, err)) !=
                  HOG_OK)
        goto fail;
    if (xn && (s = load_names(nsec, nbytes, get_u64(h + 64), path,
                              &m->names, err)) != HOG_OK)
        goto fail;
    free(sec);
    free(nsec);
    sec = nsec = NULL;
    free(lab);
    m->n_features = get_u64(h + 64);
    m->w = w;
    m->loss = (hog_loss)get_u32(h + 16);
    m->loss_param = lparam;
    m->labels = (enum hog_label_kind)get_u32(h + 20);
    m->l1 = get_f64(h + 24);
    m->l2 = get_f64(h + 32);
    m->bias = get_f64(h + 40);
    m->label_pos = get_f64(h + 48);
    m->label_neg = get_f64(h + 56);
    if (k) {
        m->n_classes = k;
        m->classes = cl;
        m->multiclass = (hog_multiclass)get_u32(h + 92);
    } else {
        free(cl);
    }
    if (version >= HGM_VERSION_HASHED) {
        m->hash_bits = get_u32(h + 80);
        m->hash_seed = get_u32(h + 84);
    }
    for (uint32_t i = 0; i < q; i++) {
        memcpy(m->cross.term[i], extra + 4 * i, 3);
    }
    m->cross.n = q;
    m->cross.mask = m->hash_bits ? (uint32_t)((UINT64_C(1) << m->hash_bits) - 1)
                                 : 0;
    hog_interactions_format(&m->cross, m->cross_spec, sizeof m->cross_spec);
    free(pos);
    free(raw);
    *out = m;
    return HOG_OK;
fail:
    if (m) {
        hog_opt_state_free(m->state);
        hog_names_free(m->names);
    }
    free(sec);
    free(nsec);
    free(pos);
    free(raw);
    free(lab);
    free(cl);
    free(w);
    free(m);
    return s;
}

