/*
 * core: what every module shares. Status messages, the in-memory data
 * (CSR), the model, the seeded RNG, clocks. No I/O, no threads.
 */
#ifndef HOG_CORE_H
#define HOG_CORE_H

#include "hogtrain.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HOG_CACHELINE 64

#define HOG_LIKELY(x) __builtin_expect(!!(x), 1)
#define HOG_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* For the kernels whose speed rests on the compiler seeing a whole loop
 * (the SGD and softmax row steps, Cyclades' prefetches): inlined whatever
 * GCC's size heuristics say. NOINLINE keeps a long pass out of a loop
 * whose state it would push out of the vector registers. */
#define ALWAYS_INLINE inline __attribute__((always_inline))
#define NOINLINE __attribute__((noinline))

/* Fills err (if not NULL) with a printf-style message and returns s. */
hog_status hog_errf(hog_err *err, hog_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Most features a data set or model may have, and so the largest feature
 * index (0-based) the data may hold: feature ids, and the bias weight's id
 * n_features, stay below UINT32_MAX, which the algorithms keep as "none"
 * (Cyclades' union-find). A 1-based file may use indices up to
 * HOG_MAX_FEATURES (4294967294). */
#define HOG_MAX_FEATURES UINT32_C(0xFFFFFFFE)
#define HOG_MAX_FEATURE_INDEX (HOG_MAX_FEATURES - 1)

/* A sparse row: a plain view the caller may read. */
struct hog_row {
    const uint32_t *idx; /* 0-based feature indices, strictly increasing */
    const float *val;
    uint32_t nnz;
    float y;
};

/* Compressed sparse rows. off has rows + 1 entries, off[0] may be non-zero
 * for a view into a larger matrix (a chunk keeps its own, local offsets). */
struct hog_csr {
    uint64_t rows;
    uint64_t nnz;
    const uint64_t *off;
    const float *y;
    const uint32_t *idx;
    const float *val;
    /* With interactions (core/cross.h): the namespace of each entry, the
     * first byte of its name, indexed as idx; NULL otherwise. */
    const uint8_t *ns;
};

/* "ab,cde": up to three bytes and a ',' an interaction, and the '\0'. */
#define HOG_INTERACTIONS_SPEC_LEN (4 * HOG_MAX_INTERACTIONS + 1)
/* Interactions of two or three namespaces (VW's -q ab, --cubic abc): n
 * terms of namespace bytes, term[k][2] 0 for a pair, crossed into indices
 * below mask + 1 = 2^B (core/cross.h has the formulas). */
struct hog_interactions {
    uint32_t n;
    uint32_t mask;
    uint8_t term[HOG_MAX_INTERACTIONS][3];
};

static inline struct hog_row hog_csr_row(const struct hog_csr *m, uint64_t i)
{
    uint64_t a = m->off[i], b = m->off[i + 1];
    struct hog_row r = { m->idx + a, m->val + a, (uint32_t)(b - a), m->y[i] };
    return r;
}

/* What the labels look like: decided once at load, used for metrics and
 * for writing models that give back the user's own label values. */
enum hog_label_kind {
    HOG_LABELS_BINARY = 0, /* two values; positive is the larger one */
    HOG_LABELS_REAL        /* regression targets (or more than two values) */
};

/* Loaded data: one CSR over the whole set, in file order. The arrays are
 * owned by the hog_data (freed by hog_data_free through the free slots). */
struct hog_data {
    struct hog_csr m;
    uint64_t n_features;          /* max 0-based index + 1, or more if asked */
    enum hog_label_kind labels;
    double label_pos, label_neg;  /* for HOG_LABELS_BINARY */
    uint64_t n_pos;               /* rows whose label is label_pos */
    void *mem[4];                 /* allocations to free */
    size_t mem_len[4];            /* non-zero: munmap with this length */
    /* When set, hog_data_free calls release(release_ctx) before freeing
     * the arrays: what their loader holds besides memory (the read lease
     * on a mapped .hgb file, src/io/hgb_lease.c). */
    void (*release)(void *ctx);
    void *release_ctx;
    /* Row weights (docs/TRAINING.md, "Weights"): row i's loss counts
     * row_w[i] times in the objective and its gradient is scaled by it;
     * NULL: every row weighs 1. Not owned: the training front door sets it
     * on its view of the caller's data (src/train/weights.c), `hogtrain
     * objective --weights` on the data it loaded. */
    const float *row_w;
    /* What the loader (src/io) did: the hashing of the features (bits 0:
     * the file's own indices), the text format read (HOG_FORMAT_AUTO: a
     * .hgb or arrays), and Vowpal Wabbit importance weights, one per row,
     * owned (NULL: every row 1; the command trains with them as row
     * weights unless --weights is given). */
    hog_hashing hash;
    hog_format format;
    float *importance;
    /* HOG_BORROW_ bits: arrays of m that are the caller's, used in place
     * and never freed (hog_data_from_csr, src/core/arrays.c). */
    unsigned borrowed;
    /* Interactions asked at load (n 0: none; m.ns set, ns_mem owned):
     * the kernels read rows through hog_data_row (core/cross.h), which
     * crosses them; cross_nnz counts every row's entries with its crossed
     * ones (before they are summed), cross_row_max the most of one row. */
    struct hog_interactions cross;
    uint8_t *ns_mem;
    uint64_t cross_nnz, cross_row_max;
    /* hog_load_opts.keep_names: the names each weight's features had
     * (owned; NULL when not kept). */
    struct hog_names *names;
};

/* Builds a hog_data around arrays the caller allocated with malloc (taken
 * over), scanning the labels; n_features_min as in hog_load_opts. */
hog_status hog_data_wrap(uint64_t rows, uint64_t nnz, uint64_t *off, float *y,
                         uint32_t *idx, float *val, uint64_t n_features_min,
                         hog_data **out, hog_err *err);
/* hog_data_wrap where the caller knows the feature count: n_features is
 * more than every index (a subset of a data set's rows, the parser's count
 * as it went), so the rows' last indices are not read again (a read per
 * row that misses cache and TLB alike on a large set). */
hog_status hog_data_adopt(uint64_t rows, uint64_t nnz, uint64_t *off, float *y,
                          uint32_t *idx, float *val, uint64_t n_features,
                          hog_data **out, hog_err *err);
/* Scans the labels of d and sets labels, label_pos, label_neg, n_pos. */
void hog_data_scan_labels(hog_data *d);
/* The same scan fed a piece at a time (convert's windows, the streamer's
 * chunks): any cut of the labels into pieces, in order, gives
 * hog_data_scan_labels' summary. */
struct hog_label_scan {
    double a, b;      /* the first two distinct values, NaN until seen */
    uint64_t na, nb;  /* how often each */
    bool real;        /* a third value seen */
};
void hog_label_scan_init(struct hog_label_scan *s);
void hog_label_scan_add(struct hog_label_scan *s, const float *y, uint64_t n);
void hog_label_scan_result(const struct hog_label_scan *s,
                           enum hog_label_kind *kind, double *pos, double *neg,
                           uint64_t *n_pos);
/* [lo, hi) = part i of k of [0, n): worker i's share of n items (n * k
 * must fit in 64 bits). */
static inline void hog_slice(uint64_t n, unsigned i, unsigned k, uint64_t *lo,
                             uint64_t *hi)
{
    *lo = n * i / k;
    *hi = n * (i + 1) / k;
}

/* True when the label counts as positive for classification (the loss's
 * +1/-1 target is hog_loss_target() in core/loss.h). */
static inline bool hog_label_positive(const hog_data *d, float y)
{
    return (double)y == d->label_pos;
}

/* A trained linear model. w has n_features entries, plus one for the bias
 * when bias != 0 (the bias is a constant feature of value `bias`, and is
 * regularized like any other weight, as in LIBLINEAR). */
struct hog_model {
    uint64_t n_features;
    float *w;
    hog_loss loss;
    double loss_param; /* epsilon or tau (core/loss.h), else 0 */
    double l1, l2;
    double bias;
    double label_pos, label_neg; /* values written into LIBLINEAR models */
    enum hog_label_kind labels;
    /* K classes (K >= 3): w holds K vectors of hog_model_vector_len()
     * floats, class c's at w + c * len, for the label classes[c]; 0 and
     * NULL for binary and regression models (one vector). */
    uint32_t n_classes;
    double *classes;
    hog_multiclass multiclass;
    /* The hashing of the data it was trained on (bits 0: none): predict
     * hashes the data it scores the same way (.hgm version 3). */
    uint32_t hash_bits, hash_seed;
    /* The interactions its rows were crossed with (n 0: none; .hgm
     * version 4): predict crosses the data it scores the same way. */
    struct hog_interactions cross;
    char cross_spec[HOG_INTERACTIONS_SPEC_LEN]; /* "ab,cde", for the API */
    /* The optimizer's state after the last epoch (hog_model_state), or
     * NULL: kept by hog_train_opts.save_state, written as .hgm version 5,
     * continued by a warm start. */
    struct hog_opt_state *state;
    /* The names of the features hashed into each weight (--keep-names,
     * .hgm's names section), or NULL: owned. */
    struct hog_names *names;
};

/* A model's optimizer state (hog_model_state's fields; arrays owned,
 * hog_model_len() floats each, NULL where the schedule keeps none). */
struct hog_opt_state {
    hog_schedule schedule;
    uint64_t epochs, steps;
    float *a, *b; /* FTRL: z, sqrt(n); AdaGrad: NULL, its sums */
};

/* Which arrays a schedule's state holds: bit 0 a, bit 1 b. */
static inline unsigned hog_opt_state_arrays(hog_schedule s)
{
    return s == HOG_SCHED_FTRL ? 3u : s == HOG_SCHED_ADAGRAD ? 2u : 0u;
}
/* A state of schedule sch for len floats, its arrays zero (NULL when out
 * of memory). */
struct hog_opt_state *hog_opt_state_new(hog_schedule sch, uint64_t len);
void hog_opt_state_free(struct hog_opt_state *s);

/* The feature names that fell into each weight of a hashed space
 * (Vowpal Wabbit's invert hash; core/names.c): n entries sorted by
 * weight, then by name; entry i names weight pos[i] with the bytes
 * text[off[i] .. off[i + 1]). Several entries of one weight are its
 * collisions. */
struct hog_names {
    uint64_t n;
    uint32_t *pos;
    uint64_t *off; /* n + 1 */
    char *text;
};
void hog_names_free(struct hog_names *nm);
/* The entries [*lo, *hi) of weight j (empty when it has none). */
void hog_names_range(const struct hog_names *nm, uint64_t j, uint64_t *lo,
                     uint64_t *hi);

/* Floats per weight vector (the features, + 1 for the bias), vectors in the
 * model (K, or 1), and all of w. */
static inline uint64_t hog_model_vector_len(const hog_model *m)
{
    return m->n_features + (m->bias != 0.0);
}
static inline uint64_t hog_model_vectors(const hog_model *m)
{
    return m->n_classes ? m->n_classes : 1;
}
static inline uint64_t hog_model_len(const hog_model *m)
{
    return hog_model_vector_len(m) * hog_model_vectors(m);
}

/* Makes m a K-class model for the labels (copied), its weights K zero
 * vectors (the old ones freed). */
hog_status hog_model_set_classes(hog_model *m, uint32_t k,
                                 const double *labels, hog_multiclass mc,
                                 hog_err *err);

/* The distinct label values of d in order of first appearance, at most
 * max of them: *k and a malloc'd array in *labels (freed by the caller);
 * more than max: HOG_EINVAL with a sentence. */
hog_status hog_data_classes(const hog_data *d, uint32_t max, double **labels,
                            uint32_t *k, hog_err *err);
/* The class of label y among labels[0..k) (-1: none), by a lookup table
 * built once (struct hog_class_index, below). */
struct hog_class_index {
    uint64_t mask;     /* slots - 1 */
    uint64_t *key;     /* the label's bits; UINT64_MAX: empty (no finite
                          double has these bits... NaN payload) */
    uint32_t *cls;
};
hog_status hog_class_index_init(struct hog_class_index *ix,
                                const double *labels, uint32_t k,
                                hog_err *err);
int64_t hog_class_index_find(const struct hog_class_index *ix, double y);
void hog_class_index_free(struct hog_class_index *ix);
/* The first class of the highest of k scores. */
uint32_t hog_scores_argmax(const double *s, uint32_t k);
/* The K-class probabilities of row scores s (logistic models): softmax
 * models exp(s_c) / sum, one-vs-rest sigma(s_c) / sum of sigma (LIBLINEAR's
 * -b 1 for one-vs-rest). */
void hog_class_probabilities(hog_multiclass mc, const double *s, uint32_t k,
                             double *p);

/* The K scores of rows under a K-class model m. The model keeps its K
 * vectors one after another, so a row scored from them reads K lines per
 * nonzero; where a feature-major copy (the K weights of a feature side by
 * side) of at most cap bytes can be had, the scorer makes one and reads
 * one or two. The scores are the same doubles either way: each class's
 * sum starts at its bias term and adds the row's entries in order, as
 * hog_sparse_dot does. One scorer serves any number of threads. */
#define HOG_SCORER_CAP ((uint64_t)256 << 20)
struct hog_scorer {
    const hog_model *m;
    float *wt; /* feature-major copy: wt[j * K + c]; NULL: the model's */
};
/* Never fails: without the memory (or above cap) it reads the model. */
void hog_scorer_init(struct hog_scorer *sc, const hog_model *m, uint64_t cap);
void hog_scorer_row(const struct hog_scorer *sc, struct hog_row r, double *s);
void hog_scorer_free(struct hog_scorer *sc);

hog_status hog_model_new(uint64_t n_features, hog_loss loss, double bias,
                         hog_model **out, hog_err *err);

/* ---- seeded random numbers (xoshiro256**, seeded by splitmix64) ---------- */

struct hog_rng {
    uint64_t s[4];
};

void hog_rng_seed(struct hog_rng *r, uint64_t seed, uint64_t stream);

static inline uint64_t hog_rotl64(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t hog_rng_next(struct hog_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = hog_rotl64(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = hog_rotl64(s[3], 45);
    return result;
}

/* Uniform in [0, n), without modulo bias (Lemire). */
uint64_t hog_rng_below(struct hog_rng *r, uint64_t n);
/* Uniform double in [0, 1). */
static inline double hog_rng_uniform(struct hog_rng *r)
{
    return (double)(hog_rng_next(r) >> 11) * 0x1.0p-53;
}
/* Standard normal (Box–Muller). */
double hog_rng_normal(struct hog_rng *r);
/* Fisher–Yates shuffle of a[0..n). */
void hog_shuffle_u64(struct hog_rng *r, uint64_t *a, uint64_t n);
void hog_shuffle_u32(struct hog_rng *r, uint32_t *a, uint64_t n);

/* ---- results the caller allocates and sizes (outsize.c) ------------------- */

/* A struct of include/hogtrain.h that starts with size_t size, the
 * caller's sizeof. hog_out_take checks user's size (what names its type
 * in the sentence) and makes mine, the library's full struct of full
 * bytes, a copy of user's prefix (zeros past it, size full); the library
 * fills mine, and hog_out_give copies back the fields within user's size,
 * leaving the size itself as the caller set it. */
hog_status hog_out_take(void *mine, const void *user, size_t full,
                        const char *what, hog_err *err);
void hog_out_give(void *user, const void *mine, size_t full);

/* ---- clocks and small helpers ---------------------------------------------- */

double hog_now(void); /* monotonic seconds */
unsigned hog_online_cpus(void);
/* CPUs this process may run on (sched_getaffinity; taskset, cgroup cpuset). */
unsigned hog_allowed_cpus(void);

/* Memory this process can still take, in bytes, before the kernel refuses
 * it or kills the process: the least of the machine's MemAvailable
 * (/proc/meminfo), what the address-space limit (RLIMIT_AS, ulimit -v)
 * leaves beside the mappings the process has, and what the memory limit
 * of its cgroup and of each cgroup above it (v2 memory.max and
 * memory.high, v1 memory.limit_in_bytes) leaves beside their usage less
 * the inactive page cache. *what (may be NULL) says which binds, to end a
 * sentence "... GiB is available": "in the machine's memory
 * (MemAvailable)", "under the address-space limit (ulimit -v)" or "under
 * the memory limit of the cgroup (memory.max)" (or memory.high,
 * memory.limit_in_bytes). The cgroup files are read from a fake tree
 * where HOGTRAIN_TEST_CGROUP names one (a test seam, docs/RELIABILITY.md).
 * UINT64_MAX when none can be read. Reads /proc and /sys: call it once,
 * before a large allocation, not in a loop. */
uint64_t hog_mem_available(const char **what);

/* Faults in the 4 KiB pages that [p, p + n) touches in one system call,
 * for reading or for writing (MADV_POPULATE_READ / _WRITE, Linux 5.14):
 * one first-touch fault per page is otherwise taken inside the timed work.
 * Older kernels refuse the advice: harmless, the pages fault as before. */
void hog_populate(void *p, size_t n, bool write);

/* calloc(n, size) for a model's arrays (weights and their per-coordinate
 * state), with the pages faulted in for writing now, by the calling
 * thread (so on its NUMA node). Left to calloc, a fresh mapping reads as
 * the shared zero page; the training step that first writes a page then
 * takes a second fault to copy it, and with several threads each such
 * fault flushes the other CPUs' TLBs (an interrupt to each): a first
 * two-thread Hogwild! epoch on news20.binary took twice its later ones'
 * time for it (docs/BENCHMARKS.md, "First epochs"). Populated for writing,
 * each page faults once, before the threads start. NULL when out of
 * memory. */
void *hog_zalloc(size_t n, size_t size);

/* malloc, realloc and calloc for the large arrays (the parsed data, a
 * solver's vectors, a model's): a block of 2 MiB or more starts at a
 * 2 MiB boundary, spans whole 2 MiB pages, and the kernel is asked to
 * back it with transparent huge pages (MADV_HUGEPAGE: honoured where
 * /sys/kernel/mm/transparent_hugepage/enabled says "madvise" or "always",
 * not "never"). A first touch then takes a fault per 2 MiB instead of one
 * per 4 KiB, and the random reads of a model through the indices miss the
 * TLB less: on this project's virtual machines, where a fault costs
 * several microseconds, whole runs took 0.60-0.81 of their time
 * (docs/BENCHMARKS.md, "Huge pages"). Smaller blocks are malloc's.
 * Freed with free(). */
void *hog_malloc_big(size_t n);
/* p's first used bytes in a block of n, p freed (NULL: p is left). A
 * large block is a new one and a copy, not realloc's move, which keeps
 * neither the boundary nor the advice. */
void *hog_realloc_big(void *p, size_t used, size_t n);
void *hog_calloc_big(size_t n, size_t size);

/* CRC32C (Castagnoli), as used by the .hgb and .hgm files. */
uint32_t hog_crc32c(uint32_t crc, const void *buf, size_t len);

#endif
