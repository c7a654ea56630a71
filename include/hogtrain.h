/*
 * hogtrain — lock-free parallel training of sparse linear models.
 *
 * The public API. Names start with hog_; long-lived objects are opaque
 * handles created through an out-parameter; every fallible call returns a
 * hog_status and fills a hog_err with a sentence the caller can print
 * ("a9a:1834: feature index 0 in a 1-based file (use --zero-based)").
 *
 * Options structs start with their own size so that they can grow without
 * breaking callers: always fill them with the matching *_init() first.
 *
 * So do the results the caller allocates and the library fills (the
 * *_stats structs, hog_cv_result, hog_search_result, hog_hashing): set
 * their size to the sizeof the caller was built with,
 *
 *     hog_hot_stats hs = { .size = sizeof hs };
 *
 * and the library writes the fields within it and nothing past it, so a
 * caller built against an older, shorter struct keeps working. A size
 * below sizeof(size_t) or above the library's own struct is refused with
 * HOG_EINVAL and a sentence. They only grow at their end. The elements of
 * the arrays a caller hands in (hog_cv_fold, hog_search_step) do not
 * change for the 1.x series: a new figure will come in a new struct.
 */
#ifndef HOGTRAIN_H
#define HOGTRAIN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define HOG_API __attribute__((visibility("default")))
#else
#define HOG_API
#endif

#define HOG_VERSION_MAJOR 0
#define HOG_VERSION_MINOR 1
#define HOG_VERSION_PATCH 0
#define HOG_VERSION_STRING "0.1.0"

/* ---- status and messages ------------------------------------------------ */

typedef enum hog_status {
    HOG_OK = 0,
    HOG_EINVAL,    /* bad argument or option */
    HOG_ENOMEM,    /* allocation failed */
    HOG_EIO,       /* a system call on a file failed */
    HOG_EPARSE,    /* malformed text input (file:line: reason) */
    HOG_EFORMAT,   /* not a file of the expected kind, or a newer version */
    HOG_ECORRUPT,  /* checksum mismatch or truncation */
    HOG_ERANGE,    /* a value or size out of the supported range */
    HOG_ENOTSUP,   /* not supported by this build or machine */
    HOG_EINTR,     /* interrupted by a signal */
    HOG_ENET,      /* network or peer failure */
    HOG_ETIMEDOUT  /* a peer or device did not answer in time */
} hog_status;

#define HOG_ERR_MAX 1024
typedef struct hog_err {
    char msg[HOG_ERR_MAX];
} hog_err;

HOG_API const char *hog_status_str(hog_status s);
HOG_API const char *hog_version(void);
/* How the library was built and which vector kernels this process runs, as
 * "key=value" words: build=native|portable, march= (the compiler's -march:
 * native, x86-64-v2, ...), kernels= (the copy of the SGD kernels in use:
 * native, or in a portable build the x86-64 level picked at run time from
 * the CPU), lanes=avx2+fma|c (the kernels' vector paths). */
HOG_API const char *hog_build_info(void);

/* ---- data ----------------------------------------------------------------- */

typedef struct hog_data hog_data;

/* The text a data file holds (hog_load_opts.format; docs/FORMATS.md). */
typedef enum hog_format {
    HOG_FORMAT_AUTO = 0, /* by content: Vowpal Wabbit when the first line
                            that is neither blank nor a comment has a '|'
                            before any '#', else LIBSVM */
    HOG_FORMAT_LIBSVM,   /* label [qid:N] idx:val ... [# comment] */
    HOG_FORMAT_VW        /* label [importance] [tag]|namespace feature[:v] ... */
} hog_format;

/* Feature hashing (docs/FORMATS.md, "Hashing"): every feature goes to
 * weight h & (2^B - 1), h its MurmurHash3 (x86, 32 bits). At most
 * HOG_HASH_BITS_MAX bits: 2^32 weights would need feature ids past the
 * largest hogtrain keeps (HOG_MAX_FEATURES, 2^32 - 2). Vowpal Wabbit text
 * is always hashed, with HOG_VW_HASH_BITS unless asked otherwise (VW's
 * own default, -b 18). */
#define HOG_HASH_BITS_MAX 31u
#define HOG_VW_HASH_BITS 18u

typedef struct hog_load_opts {
    size_t size;          /* sizeof(hog_load_opts) */
    int zero_based;       /* accept feature index 0 (LIBSVM text is 1-based) */
    unsigned threads;     /* parser threads; 0 = all online CPUs */
    uint64_t n_features;  /* at least this many features (0 = from the data) */
    /* Added with hashing; callers built before them pass a smaller size
     * and get the defaults (all 0). */
    hog_format format;    /* text format; HOG_FORMAT_AUTO: by content */
    unsigned hash_bits;   /* B, 1..HOG_HASH_BITS_MAX: hash the features into
                             2^B weights; 0: LIBSVM indices as they are,
                             Vowpal Wabbit text HOG_VW_HASH_BITS */
    uint32_t hash_seed;   /* the hash's seed (VW's --hash_seed); default 0 */
    /* Added with interactions: VW's -q and --cubic, "ab[,cde...]" (pairs
     * and triples of namespace first bytes; at most HOG_MAX_INTERACTIONS),
     * crossed as every row is read, never stored (docs/FORMATS.md,
     * "Interactions"). Vowpal Wabbit text only; NULL: none. */
    const char *interactions;
    /* Added for callers that write into the loaded arrays (the Python
     * package's load_svmlight): nonzero keeps them in memory of the data
     * set's own, a .hgb file's read rather than mapped (the copy a lease
     * break makes of mapped pages could lose a write made meanwhile;
     * docs/FORMATS.md, "Reading it"). 0: mapped where they can be. */
    int own_arrays;
    /* Added for prediction: nonzero reads rows without a label, whose
     * label is then NaN: in LIBSVM text a row that starts with an
     * index:value pair, in Vowpal Wabbit text one with nothing (or only a
     * tag) before its '|'. 0: every row needs a label. */
    int unlabelled;
    /* Added for readable models: nonzero keeps, for each weight, the
     * names of the Vowpal Wabbit text features hashed into it (VW's
     * --invert_hash), for the model trained on the data to keep
     * (docs/FORMATS.md, "Feature names"); other formats refuse it. */
    int keep_names;
    /* Added for callers that cross namespaces themselves (the Python
     * package): nonzero keeps each entry's namespace, as interactions
     * do, without crossing any; hog_data_column_namespaces() reads them.
     * Entries of two namespaces hashed into one weight of a row stay two
     * entries, as with interactions. Vowpal Wabbit text only. */
    int keep_namespaces;
} hog_load_opts;
#define HOG_MAX_INTERACTIONS 32u

HOG_API void hog_load_opts_init(hog_load_opts *o);

/* Loads LIBSVM/SVMlight text, Vowpal Wabbit text or a .hgb binary cache,
 * told apart by content. path "-" reads text from standard input. A .hgb
 * file keeps the hashing it was converted with: hash_bits 0 takes it as
 * it is, any other value must be the file's (with its seed). */
HOG_API hog_status hog_data_load(const char *path, const hog_load_opts *o,
                                 hog_data **out, hog_err *err);
/* Writes the .hgb binary cache (temporary name, then rename). */
HOG_API hog_status hog_data_save_hgb(const hog_data *d, const char *path,
                                     hog_err *err);
HOG_API void hog_data_free(hog_data *d);

HOG_API uint64_t hog_data_rows(const hog_data *d);
HOG_API uint64_t hog_data_features(const hog_data *d);
HOG_API uint64_t hog_data_nnz(const hog_data *d);

/* How a data set's features were hashed at load (bits 0: not hashed). */
typedef struct hog_hashing {
    size_t size;          /* the caller's sizeof(hog_hashing) */
    unsigned bits;        /* B: the features are the 2^B weights' ids */
    uint32_t seed;
    uint64_t collisions;  /* weights that two or more distinct source
                             features share (each weight counted once) */
    uint64_t merged;      /* entries summed into an entry of their row
                             because their features share a weight */
} hog_hashing;
/* Fills the fields of out within out->size (nothing when it is below
 * sizeof(size_t)): a getter, so no status. */
HOG_API void hog_data_hashing(const hog_data *d, hog_hashing *out);
/* The text format the rows were read from (HOG_FORMAT_AUTO for a .hgb). */
HOG_API hog_format hog_data_format(const hog_data *d);
/* Vowpal Wabbit importance weights, one per row, or NULL when every row's
 * is 1 (or the data is not VW text). Training does not use them yet: they
 * are kept for row weights (docs/FORMATS.md). */
HOG_API const float *hog_data_importance(const hog_data *d);

/* Data from the caller's arrays (docs/ARCHITECTURE.md, "Data in memory"):
 * a CSR matrix, as scipy.sparse.csr_matrix holds it. The caller owns the
 * arrays and keeps them, unchanged, until hog_data_free; hogtrain never
 * writes to them. An array whose element type is hogtrain's own is used
 * in place (zero-copy): indptr INT64 or UINT64, indices INT32 or UINT32,
 * values and labels FLOAT32; any other type is converted once into an
 * array the data set owns. hog_data_borrowed() says which are in place. */
typedef enum hog_dtype {
    HOG_DTYPE_INT32 = 1,
    HOG_DTYPE_INT64,
    HOG_DTYPE_UINT32,
    HOG_DTYPE_UINT64,
    HOG_DTYPE_FLOAT32,
    HOG_DTYPE_FLOAT64
} hog_dtype;

typedef struct hog_csr_arrays {
    size_t size;             /* sizeof(hog_csr_arrays) */
    uint64_t rows;
    uint64_t cols;           /* the features: every index < cols */
    const void *indptr;      /* rows + 1 offsets, indptr[0] = 0, never
                                decreasing; nnz = indptr[rows]. Integer */
    hog_dtype indptr_type;
    const void *indices;     /* nnz feature ids (0-based), strictly
                                increasing within a row. Integer */
    hog_dtype indices_type;
    const void *values;      /* nnz finite values; NULL: every value 1 */
    hog_dtype values_type;
    const void *labels;      /* rows finite labels; NULL: every label 0
                                (data only to score) */
    hog_dtype labels_type;
} hog_csr_arrays;

#define HOG_BORROW_INDPTR  1u
#define HOG_BORROW_INDICES 2u
#define HOG_BORROW_VALUES  4u
#define HOG_BORROW_LABELS  8u

/* Checks every array (a bad offset, index or value is HOG_EINVAL with a
 * sentence naming the row) and builds the data set; threads as
 * hog_load_opts.threads, for the checks and conversions. */
HOG_API hog_status hog_data_from_csr(const hog_csr_arrays *a, unsigned threads,
                                     hog_data **out, hog_err *err);
/* The HOG_BORROW_ bits of the arrays d uses in place (0 for loaded data). */
HOG_API unsigned hog_data_borrowed(const hog_data *d);
/* The data set's own CSR arrays, valid until hog_data_free: rows + 1
 * offsets, nnz indices (0-based) and values, rows labels; for handing a
 * loaded file to the caller without a copy. Those of a data set loaded
 * with hog_load_opts.own_arrays may be written once it is no longer
 * used (what it learnt of them at load, such as the labels' kinds, is
 * not updated). */
HOG_API void hog_data_csr(const hog_data *d, const uint64_t **indptr,
                          const uint32_t **indices, const float **values,
                          const float **labels);

/* Namespaces of data in memory (docs/PYTHON.md, "Interactions"). The
 * namespace of each of d's features, into ns (hog_data_features(d)
 * bytes): the first byte of the namespace name of the entries in that
 * column, ' ' (VW's default namespace) for a feature no entry has. d must
 * keep its entries' namespaces (loaded with hog_load_opts.keep_namespaces
 * or interactions). HOG_EINVAL with a sentence naming the feature, its two
 * namespaces and their rows when a feature holds entries of two (their
 * features hashed into one weight: a namespace per column cannot say
 * it). */
HOG_API hog_status hog_data_column_namespaces(const hog_data *d, uint8_t *ns,
                                              hog_err *err);
/* Crosses d's rows as hog_load_opts.interactions crosses Vowpal Wabbit
 * text's (docs/FORMATS.md, "Interactions"): col_ns holds the namespace
 * byte of each of d's hog_data_features(d) features, interactions is
 * "ab[,cde...]" (NULL or "": none, d unchanged), the crossed features
 * are hashed into the first 2^hash_bits of d's features (1 <= hash_bits
 * <= HOG_HASH_BITS_MAX, 2^hash_bits <= hog_data_features(d)). A model
 * trained on d records them; data it scores must be crossed alike. d must
 * not cross already. HOG_EINVAL (HOG_ERANGE for a row whose crossed
 * entries pass 2^32 - 1) with a sentence; d unchanged then. */
HOG_API hog_status hog_data_set_interactions(hog_data *d, const uint8_t *col_ns,
                                             const char *interactions,
                                             unsigned hash_bits, hog_err *err);

/* ---- models and training ------------------------------------------------- */

typedef enum hog_loss {
    HOG_LOSS_LOGISTIC = 0, /* log(1 + exp(-y m)) */
    HOG_LOSS_HINGE,        /* max(0, 1 - y m) */
    HOG_LOSS_SQHINGE,      /* max(0, 1 - y m)^2 */
    HOG_LOSS_SQUARED,      /* (m - y)^2 / 2, regression */
    HOG_LOSS_MODIFIED_HUBER, /* max(0, 1 - y m)^2 for y m >= -1, else
                                -4 y m (scikit-learn's modified_huber) */
    HOG_LOSS_HUBER,        /* r^2 / 2 for |r| <= epsilon, else epsilon |r|
                              - epsilon^2 / 2; r = m - y, regression */
    HOG_LOSS_EPS_INSENSITIVE, /* max(0, |m - y| - epsilon), regression */
    HOG_LOSS_SQ_EPS_INSENSITIVE, /* max(0, |m - y| - epsilon)^2 */
    HOG_LOSS_QUANTILE,     /* tau r or (tau - 1) r, r = y - m, regression */
    HOG_LOSS_POISSON       /* exp(m) - y m, y >= 0; predicts exp(m) */
} hog_loss;
/* The number of losses (docs/TRAINING.md, "Losses"). */
#define HOG_LOSS_COUNT ((int)HOG_LOSS_POISSON + 1)

typedef enum hog_schedule {
    HOG_SCHED_CONSTANT = 0, /* eta_t = eta */
    HOG_SCHED_INVSCALING,   /* eta_t = eta / (1 + eta * l2 * t) or eta / (1 + t/n)^power */
    HOG_SCHED_ADAGRAD,      /* eta_{t,j} = eta / sqrt(eps + sum of g_j^2) */
    HOG_SCHED_FTRL          /* FTRL-Proximal: per-coordinate rates
                               eta / (beta + sqrt(sum of g_j^2)), l1 and l2
                               in closed form (serial and Hogwild!) */
} hog_schedule;

/* The schedule left to hog_train_opts_resolve(): FTRL-Proximal where it
 * runs, AdaGrad elsewhere (docs/TRAINING.md, "The default"). */
#define HOG_SCHED_AUTO ((hog_schedule)-1)

/* The L2 strength of the default, FTRL-Proximal, where l2 (--l2, alpha)
 * and C are not given: the value at which it reaches the test accuracy of
 * the former default, AdaGrad at l2 1e-5 (docs/TRAINING.md, "The
 * default"). */
#define HOG_FTRL_L2_DEFAULT 4e-6

/* A classification loss on training labels with K >= 3 distinct values
 * trains K classes (two values stay the binary problem). */
typedef enum hog_multiclass {
    HOG_MULTICLASS_OVR = 0, /* one-vs-rest: K binary problems, one load */
    HOG_MULTICLASS_SOFTMAX  /* multinomial logistic regression (logistic loss) */
} hog_multiclass;

/* At most this many classes (a label column with more distinct values is
 * a regression target, or needs hashing of its own). */
#define HOG_MAX_CLASSES 100000u

typedef enum hog_algo {
    HOG_ALGO_SERIAL = 0, /* the reference serial SGD */
    HOG_ALGO_HOGWILD,
    HOG_ALGO_CYCLADES,
    HOG_ALGO_SCD,
    HOG_ALGO_DCD,
    HOG_ALGO_NEWTON, /* trust-region Newton (LIBLINEAR -s 0, -s 2) */
    HOG_ALGO_LBFGS,  /* L-BFGS; OWL-QN with l1 (LIBLINEAR -s 6's problem) */
    /* The default: chosen once the data is known (docs/TRAINING.md,
     * "--algo auto"): the serial trainer, or Hogwild! with a model per
     * thread where the data is large enough for it to be faster;
     * hog_train_hooks.auto_stats says which and why. */
    HOG_ALGO_AUTO
} hog_algo;

typedef enum hog_update {
    HOG_UPDATE_NONE = 0, /* Hogwild!: relaxed atomic loads and stores */
    HOG_UPDATE_ATOMIC,   /* per-coordinate CAS add */
    HOG_UPDATE_STRIPED,  /* spinlocks over feature stripes */
    HOG_UPDATE_MUTEX     /* one lock around each row's update */
} hog_update;
/* The update mode left to hog_train_opts_resolve(): atomic for dcd
 * (PASSCoDe-Atomic), none elsewhere. */
#define HOG_UPDATE_AUTO ((hog_update)-1)

/* What each GPU replica runs (when hog_train_opts.gpus asks for GPUs). */
typedef enum hog_gpu_step {
    HOG_GPU_STEP_MINIBATCH = 0, /* X_B w and X_B^T g in double, then the update */
    HOG_GPU_STEP_HOGWILD        /* a warp per row, each feature's update averaged
                                   over the batch's rows that touch it */
} hog_gpu_step;

/* Model replicas of Hogwild! (DimmWitted, Zhang and Ré, VLDB 2014). */
typedef enum hog_replicas {
    HOG_REPLICAS_SHARED = 0, /* one model shared by every thread */
    HOG_REPLICAS_NODE,       /* one model per NUMA node, averaged */
    HOG_REPLICAS_CORE        /* one model per thread, averaged */
} hog_replicas;

/* Metrics of one epoch. Fields that do not apply are NaN. The library
 * owns it (the progress callback reads it) and sets size to its own
 * sizeof: a caller built against a newer, longer struct reads the fields
 * within size only. */
typedef struct hog_epoch_stats {
    size_t size;             /* sizeof(hog_epoch_stats) of the library */
    unsigned epoch;          /* 1-based */
    double objective;        /* mean loss + regularization, training set */
    double train_loss;       /* mean loss (logloss for classification) */
    double train_accuracy;   /* classification */
    double train_auc;        /* classification */
    double train_rmse;       /* regression */
    int has_test;
    double test_loss, test_accuracy, test_auc, test_rmse;
    uint64_t nonzero_weights;
    double seconds;          /* training time of this epoch (metrics excluded) */
    double total_seconds;    /* training time so far */
    double rows_per_s, nnz_per_s; /* each row (nonzero) once per epoch,
                                     whatever the class count */
    uint64_t replica_syncs;  /* Hogwild! replicas: averagings so far */
    /* Coordinate descent (--algo scd, dcd); NaN or 0 elsewhere. */
    double gap;              /* relative duality gap (P - D) / P, dcd */
    uint64_t aux_bytes;      /* memory the algorithm holds beside the data
                                (the column copy of scd, dual variables) */
    int converged;           /* scd, dcd: 1 when the stopping rule (tol) was
                                met after this epoch, the last; 0 on an epoch
                                that ends at the epochs cap without it */
    /* K classes: the macro-averaged F1 (accuracy above is the share of
     * rows whose arg-max class is their label; loss is the multiclass
     * log-loss for logistic models, of the OvR scores normalised as
     * LIBLINEAR's -b 1, else the summed binary losses); NaN otherwise. */
    double train_macro_f1, test_macro_f1;
    unsigned classes;        /* K, or 0 for a binary or regression model */
    unsigned classes_done;   /* one-vs-rest: classes trained so far */
    uint64_t test_unknown_labels; /* K classes: test rows whose label is
                                     none of the model's (counted wrong) */
    /* The validation set (hog_train_opts.holdout or .validation): its
     * metrics after every epoch, as the test set's; NaN without one. */
    int has_valid;
    double valid_loss, valid_accuracy, valid_auc, valid_rmse, valid_macro_f1;
    unsigned best_epoch;     /* the epoch of the lowest validation loss so
                                far (this one or earlier); 0 without one */
    /* The progressive metrics (Vowpal Wabbit's "average loss"): the mean
     * loss (weighted as train_loss) and the accuracy (classification) of
     * the epoch's rows, each scored by the model just before its own step.
     * Every epoch of the SGD trainers that score their rows as they go
     * (serial, Hogwild! and Cyclades, streamed or not, binary and
     * regression, and softmax: its cross-entropy and arg-max accuracy);
     * NaN for the others (one-vs-rest, coordinate descent, the GPU). */
    double progressive_loss, progressive_accuracy;
} hog_epoch_stats;

/* Called during training: within an epoch with done < total (about every
 * tenth of a second), and after it with the epoch's stats (stats != NULL). */
typedef void (*hog_progress_fn)(void *ctx, unsigned epoch, unsigned epochs,
                                uint64_t done, uint64_t total,
                                const hog_epoch_stats *stats);

/* Scale-out: combines the weights of every process (docs/SCALEOUT.md).
 * w holds n current weights (the bias weight last); the callback replaces
 * them with the combined model, the same on every process. A status other
 * than HOG_OK stops training with err's message. */
typedef hog_status (*hog_average_fn)(void *ctx, float *w, uint64_t n,
                                     hog_err *err);

/* Exact solving across processes (docs/SCALEOUT.md): replaces buf's n
 * values with their element-wise sum over every process, the same bits on
 * each. A status other than HOG_OK stops training with err's message. */
typedef hog_status (*hog_reduce_fn)(void *ctx, double *buf, uint64_t n,
                                    hog_err *err);

/* What Cyclades did (--algo cyclades; docs/CYCLADES.md): filled after
 * training when hog_train_hooks.cyclades_stats points here. Component
 * statistics are over every batch of every partition; the _all_ ones are
 * those of the first partition's first 16 batches with every feature, the
 * bias included, in the conflict graph (what the rows would give without
 * hot features). */
typedef struct hog_cyclades_stats {
    size_t size;               /* the caller's sizeof(hog_cyclades_stats) */
    unsigned threads;
    uint64_t batch_size;       /* rows per batch */
    uint64_t batches;          /* per epoch */
    uint64_t hot_degree;       /* features in more rows than this are hot */
    uint64_t hot_features;     /* hot features, the bias not counted */
    int bias_hot;              /* the bias is hot */
    double hot_nnz_share;      /* share of the nonzeros on hot features */
    unsigned partitions;       /* times the rows were partitioned */
    double setup_seconds;      /* degrees, hot set, cold/hot split (once) */
    double partition_seconds;  /* union-find and allocation, all partitions */
    double train_seconds;      /* everything, setup and partitions included */
    double components;         /* mean components per batch */
    uint64_t largest_rows;     /* rows in the largest component of any batch */
    double largest_share;      /* mean share of a batch's rows in its largest */
    double imbalance;          /* mean of (busiest thread's work / mean work) */
    double all_components, all_largest_share;
    uint64_t all_largest_rows;
} hog_cyclades_stats;
/* What the hot-feature replicas of Hogwild! did (hog_train_hooks.hot_stats). */
/* hot_features and cyclades_hot_degree: chosen from the data. */
#define HOG_HOT_AUTO UINT64_MAX
#define HOG_HOT_AUTO_MAX 65536u
typedef struct hog_hot_stats {
    size_t size;            /* the caller's sizeof(hog_hot_stats) */
    uint64_t hot_features;  /* K: features kept per thread, the bias not counted */
    int bias_hot;           /* the bias is kept per thread */
    double hot_nnz_share;   /* share of the nonzeros on hot features */
    uint64_t folds;         /* times the threads' copies were folded back */
    double setup_seconds;   /* degrees, hot set, remapped indices (once) */
} hog_hot_stats;

/* What --algo auto chose (hog_train_hooks.auto_stats). */
typedef struct hog_auto_stats {
    size_t size;            /* the caller's sizeof(hog_auto_stats) */
    int chosen;             /* 1: the run's algo was HOG_ALGO_AUTO */
    hog_algo algo;          /* what trained: serial or hogwild */
    hog_replicas replicas;  /* hogwild's: HOG_REPLICAS_CORE */
    unsigned threads;       /* the threads it trained on */
    char why[200];          /* the rule that decided, in words */
} hog_auto_stats;

/* How a streamed run reads the .hgb file. */
typedef enum hog_io_backend {
    HOG_IO_AUTO = 0, /* io_uring, falling back on pread with a one-line notice */
    HOG_IO_URING,    /* io_uring or an error */
    HOG_IO_PREAD     /* a reader thread with pread */
} hog_io_backend;

/* A one-line notice from the library ("io_uring unavailable: ..."). */
typedef void (*hog_log_fn)(void *ctx, const char *line);

/* What a streamed run did (hog_train_hooks.stream_stats). */
typedef struct hog_stream_stats {
    size_t size;             /* the caller's sizeof(hog_stream_stats) */
    char backend[16];        /* "io_uring" or "pread" */
    char fallback[256];      /* why io_uring was not used ("" when it was) */
    int direct;              /* 1: the file was read with O_DIRECT */
    unsigned slots;          /* chunk buffers in the ring */
    unsigned window;         /* chunks shuffled together */
    uint64_t ring_bytes;     /* memory of the ring */
    uint64_t bytes_read;     /* over all epochs */
    double read_wait_s;      /* time the trainer waited for a chunk */
} hog_stream_stats;

typedef struct hog_train_opts {
    size_t size;            /* sizeof(hog_train_opts) */
    hog_loss loss;
    double l1, l2;          /* objective: mean loss + l2/2 |w|^2 + l1 |w|_1;
                               l2 NaN (init): 4e-6 under FTRL, else 1e-5 */
    double eta;             /* initial step size; NaN (init): the loss's */
    double power;           /* exponent of HOG_SCHED_INVSCALING */
    hog_schedule schedule;  /* HOG_SCHED_AUTO (init): FTRL where it runs */
    double bias;            /* 0: no bias; else a constant feature of this value */
    unsigned epochs;        /* HOG_EPOCHS_AUTO (init): 1000 for scd, dcd and
                               newton, else 5; 0 with a warm start only */
    uint64_t seed;
    unsigned threads;       /* 0 = all allowed cores */
    hog_algo algo;
    hog_update update;      /* HOG_UPDATE_AUTO (init): dcd atomic, else none */
    /* GPUs: NULL or "none" trains on the CPU; "all", or a list of CUDA
     * device numbers ("0,2", after CUDA_VISIBLE_DEVICES; a number twice is
     * two replicas on one GPU). See docs/GPU.md. */
    const char *gpus;
    hog_gpu_step gpu_step;
    uint32_t gpu_batch;     /* rows per replica per step (0 = the default) */
    /* Scale-out (hog_train_hooks.average): each epoch is cut into
     * average_blocks blocks of rows, block k ending after row
     * floor(k * rows / average_blocks), and average() is called after each
     * block. Every process makes the same number of calls. */
    uint64_t average_blocks;

    /* Hogwild! (algo HOG_ALGO_HOGWILD); the serial trainer ignores them. */
    const char *bind;       /* binding policy, docs/POOL.md (NULL: compact) */
    int no_smt;             /* at most one thread per core */
    int oversubscribe;      /* allow more threads than usable CPUs */
    hog_replicas replicas;  /* HOG_REPLICAS_SHARED by default */
    /* Model averaging, one meaning for every trainer that averages: rows
     * per replica (Hogwild! replicas node/core, GPU replicas) or per
     * process (scale-out: the command turns `--sync-every`, default 10000
     * there, into average_blocks) between averagings. Default 65536. 0,
     * everywhere: no averaging within an epoch, one at each epoch's end
     * (each epoch's model is the replicas' or processes' average). */
    uint64_t sync_every;

    /* Cyclades (--algo cyclades; docs/CYCLADES.md). */
    uint64_t batch_size;   /* rows per batch; 0 = chosen from the data */
    int repartition;       /* 1: a fresh permutation and partition every
                              epoch (the serial trainer's row order); 0: one
                              partition, its batches visited in a new order
                              each epoch (default) */
    /* Hot features: the bias and the features in more than D rows leave
     * the conflict graph and take one step per batch. HOG_HOT_AUTO
     * (default): D chosen with the batch size; D >= 1: that degree; 0:
     * none, every feature stays, and the model equals serial SGD's over
     * the same row order bit for bit. */
    uint64_t cyclades_hot_degree;
    /* scd and dcd: stop before `epochs` once LIBLINEAR's -e criterion is
     * below tol (dcd: projected-gradient spread, LIBLINEAR -s 1/3/7;
     * scd: the L1 norm of the minimum-norm subgradient relative to the
     * first epoch's, as -s 5/6). 0 runs every epoch. NaN (init): dcd
     * 0.1, else 0.01 (hog_train_opts_resolve). */
    double tol;
    /* Out-of-core training (hog_train_stream); ignored by hog_train. */
    uint64_t mem_budget;    /* bytes for the ring of chunk buffers (0: 256 MiB) */
    hog_io_backend io;      /* HOG_IO_AUTO: io_uring, else pread */
    int direct;             /* O_DIRECT: -1 when the file would not stay in the
                               page cache (default), 0 never, 1 always */
    /* Checkpoints (docs/RELIABILITY.md; the serial trainer): the model and
     * its training state written atomically to checkpoint after every
     * checkpoint_epochs-th epoch and/or every checkpoint_rows rows (steps).
     * resume continues from such a file: with the same data and options the
     * result equals the uninterrupted run bit for bit. */
    const char *checkpoint;
    unsigned checkpoint_epochs;
    uint64_t checkpoint_rows;
    const char *resume;
    /* Hogwild! hot-feature replicas (--algo hogwild --hot K; docs/TRAINING.md):
     * the hot_features most frequent features and the bias are kept per
     * thread and folded into the shared model at the end of every segment
     * (every sync_every rows, or epoch). 0 (default): plain Hogwild!, every
     * weight shared; HOG_HOT_AUTO: the features in at least 1/32 of the
     * rows (at most HOG_HOT_AUTO_MAX of them). */
    uint64_t hot_features;
    /* The full training-set metrics (objective, loss, accuracy, AUC; a
     * pass over the data on `threads` threads) after every
     * metrics_every-th epoch and after the last. On the other epochs scd
     * and dcd report the objective and mean loss the solver keeps
     * (accuracy and AUC NaN), the trainers with progressive metrics
     * (hog_epoch_stats) those alone, the others none (all NaN). 0
     * (default): after the last epoch only for scd, dcd and the trainers
     * with progressive metrics, every epoch for the others; 1: every
     * epoch. Only with a progress callback (hog_train_hooks). */
    unsigned metrics_every;
    /* K >= 3 label values under a classification loss (docs/TRAINING.md). */
    hog_multiclass multiclass;
    /* 1: per-feature max-abs scaling learned on the training set, folded
     * into the returned weights (docs/TRAINING.md, "Scaling"). */
    int normalize;
    /* Weights (docs/TRAINING.md, "Weights"): training row i's loss counts
     * v_i = row_weights[i] x (the class weight of its label) times in the
     * objective (1/n) sum_i v_i loss_i + regularizer, in every algorithm
     * and in every one-vs-rest problem alike (scikit-learn's sample_weight
     * times class_weight[y]). row_weights: NULL (every row 1) or one
     * finite weight >= 0 per training row, owned by the caller. Class
     * weights: class_weight_balanced = 1 gives class k of K with n_k rows
     * n / (K n_k) (scikit-learn's "balanced"); or n_class_weights labels
     * class_weight_labels[] with their weights class_weight_values[]
     * (finite, >= 0; each label one of the training labels; a label not
     * listed weighs 1); not both. At least one row must weigh more than 0.
     * Not with hog_train_stream or GPUs. */
    const float *row_weights;
    int class_weight_balanced;
    const double *class_weight_labels;
    const double *class_weight_values;
    unsigned n_class_weights;

    /* ---- LIBLINEAR's C, validation and early stopping, warm start ----
     * (docs/TRAINING.md, "Cross-validation, C search and early stopping") */
    /* C > 0: the objective is LIBLINEAR's for that C: l2 = 1/(C n), l1 = 0
     * (C_l1 = 1: l1 = 1/(C n), l2 = 0), n the rows trained on (after the
     * holdout), replacing l1 and l2. 0 (default): l1 and l2 as given. */
    double C;
    int C_l1;
    /* 0 < holdout < 1: a seeded (seed), stratified share of the training
     * rows is kept out as the validation set (a copy of the rows: memory
     * for one more data set); or validation: a set of the caller's. Its
     * metrics come after every epoch (hog_epoch_stats.valid_*). */
    double holdout;
    const hog_data *validation;
    /* early_stop N >= 1 (needs a validation set): training stops after N
     * epochs in a row without a lower validation loss, and the model is
     * the epoch's of the lowest one (also when the epochs run out).
     * One-vs-rest: each class stops on its own binary validation loss. */
    unsigned early_stop;
    /* Warm start (--init): start from this model's weights instead of
     * zero: a model of the same features, bias, loss kind, classes and
     * mode (a mismatch is a sentence); the serial, Hogwild! and Cyclades
     * trainers, softmax and one-vs-rest. With epochs = 0 the result is its
     * weights. The caller keeps the model. */
    const struct hog_model *warm_start;
    /* K >= 3 classes, in this order (the model's), instead of those of the
     * training labels in first appearance: for trainers that must agree
     * on them (the ranks of a --world group, whose shards may each lack a
     * class). Every training label must be one of them. NULL, 0: from the
     * labels. The caller keeps the array. */
    const double *classes;
    unsigned n_classes;
    /* Online learning (docs/TRAINING.md, "Continuing training"). save_state
     * 1: the returned model keeps the optimizer's state after its last
     * epoch (FTRL's z and sqrt(n), AdaGrad's sums, the epochs and steps
     * taken: hog_model_state), so that a warm start from it continues
     * exactly where this run stopped: 3 epochs, then 2 from its model,
     * equal 5 bit for bit. The serial trainer in memory, binary,
     * regression or one-vs-rest. shuffle 0: the rows are visited in the
     * data's order every epoch (the SGD trainers in memory; 1, the
     * default: a seeded shuffle each epoch). */
    int save_state;
    int shuffle;
    /* Averaged SGD (docs/TRAINING.md, "Averaged SGD"; scikit-learn's
     * average, Bottou's ASGD): N >= 1 returns the mean of the iterates
     * from the N-th step of the run on (the weights after each step, the
     * N-th's included; 1: all of them) instead of the last one, each
     * epoch's model the mean so far. The shared schedules (constant,
     * invscaling; HOG_SCHED_AUTO becomes invscaling), the serial and
     * Hogwild! trainers. 0 (default): the last iterate. */
    uint64_t average;
    /* The losses' parameters (docs/TRAINING.md, "Losses"): epsilon, the
     * threshold of HOG_LOSS_HUBER and the tube of the two
     * epsilon-insensitive losses (LIBLINEAR's -p), >= 0, default 0.1;
     * quantile_tau, HOG_LOSS_QUANTILE's quantile in (0, 1), default 0.5.
     * A loss that takes neither ignores them. */
    double epsilon;
    double quantile_tau;
} hog_train_opts;

/* What the validation set saw (hog_train_hooks.valid_stats). */
typedef struct hog_valid_stats {
    size_t size;           /* the caller's sizeof(hog_valid_stats) */
    uint64_t rows;         /* of the validation set */
    uint64_t train_rows;   /* trained on */
    unsigned epochs_run;   /* epochs trained (one-vs-rest: the most any
                              class ran) */
    unsigned best_epoch;   /* the epoch whose model was kept: the lowest
                              validation loss (one-vs-rest with early_stop:
                              the latest of the classes' kept epochs) */
    double best_loss;      /* its validation loss (one-vs-rest: of the
                              returned K-class model) */
    int early_stopped;     /* 1: stopped by early_stop before the epochs ran
                              out (one-vs-rest: some class did) */
    unsigned classes_stopped; /* one-vs-rest: the classes that stopped early */
} hog_valid_stats;

/* The caller's hooks into a run, apart from the options: the callbacks
 * the library calls and the stats it fills. Every training entry point
 * takes a pointer to one beside the options; NULL, or a NULL field, is
 * none. It starts with its size, as the options do (fields past the
 * caller's size are none), so set size and then what you need:
 *
 *     hog_train_hooks h = { .size = sizeof h, .progress = show,
 *                           .hot_stats = &hs };
 */
typedef struct hog_train_hooks {
    size_t size;            /* the caller's sizeof(hog_train_hooks) */
    hog_progress_fn progress;
    void *progress_ctx;
    /* One-line notices (the io fallback, labels that look like a
     * regression target); NULL: "hogtrain: LINE" on stderr. */
    hog_log_fn log;
    void *log_ctx;
    /* Polled during training: once *cancel is non-zero, training finishes
     * its current step, writes a checkpoint when one is configured, and
     * returns HOG_EINTR. For a signal handler's flag; NULL: never. */
    const volatile sig_atomic_t *cancel;
    /* Scale-out, the model averaged across processes (the SGD trainers;
     * docs/SCALEOUT.md): called after each of hog_train_opts'
     * average_blocks blocks of every epoch. */
    hog_average_fn average;
    void *average_ctx;
    /* Exact solving across processes (newton, lbfgs; docs/SCALEOUT.md):
     * when reduce is not NULL the training rows are this process's share
     * of rows that several processes hold, each calling hog_train with
     * the same options; every product with the data and every sum over
     * rows (the row count n of C = 1/(l2 n) included) is added over them
     * by reduce(), so that each process takes the same steps and returns
     * the model of all the rows. Every process makes the same calls. */
    hog_reduce_fn reduce;
    void *reduce_ctx;
    /* Out: each filled after training when not NULL (its size set by the
     * caller, as above). */
    hog_cyclades_stats *cyclades_stats; /* --algo cyclades */
    hog_hot_stats *hot_stats;           /* Hogwild!'s hot_features */
    hog_stream_stats *stream_stats;     /* hog_train_stream */
    hog_valid_stats *valid_stats;       /* a validation set */
    hog_auto_stats *auto_stats;         /* --algo auto's choice */
} hog_train_hooks;

/* The defaults of every option, with those that depend on others left
 * unset for hog_train_opts_resolve(): eta, l2 and tol NaN, schedule
 * HOG_SCHED_AUTO, update HOG_UPDATE_AUTO, epochs HOG_EPOCHS_AUTO. */
HOG_API void hog_train_opts_init(hog_train_opts *o);

/* epochs left to hog_train_opts_resolve(): 1000 for scd, dcd and newton
 * (their tol stops them first), 5 for the SGD trainers. Not 0, which is
 * a warm start's "the model as it is". */
#define HOG_EPOCHS_AUTO 0xffffffffu

/* ---- the options' table (src/train/options.c) ----------------------------
 * One row per scalar option of hog_train_opts: its type, range, default
 * and the rule of a default that depends on other options, the command's
 * flag and help line and the Python estimators' parameter. The command's
 * --help, its man page and the Python package are generated from or
 * checked against these rows (tests/test_options.c). */
typedef enum hog_option_type {
    HOG_OPTION_DOUBLE = 0,
    HOG_OPTION_UNSIGNED, /* unsigned */
    HOG_OPTION_U64,      /* uint64_t */
    HOG_OPTION_ENUM,     /* an enum, stored as an int: min..max its values */
    HOG_OPTION_BOOL      /* an int, 0 or not */
} hog_option_type;

typedef struct hog_train_option {
    const char *field;   /* the field of hog_train_opts ("l2") */
    size_t offset;       /* offsetof(hog_train_opts, field) */
    hog_option_type type;
    double min, max;     /* a value's range (not for HOG_OPTION_BOOL) */
    int above_min;       /* 1: the value must be above min */
    int below_max;       /* 1: the value must be below max */
    double def;          /* the default where rule does not say otherwise */
    const char *rule;    /* NULL, or the default that depends on other
                            options, in words ("dcd 0.1, else 0.01") */
    const char *flag;    /* the command's long option, without "--";
                            NULL: none */
    const char *metavar; /* its argument in --help ("X"); NULL: none */
    const char *help;    /* its --help text, lines joined by '\n', the
                            default left out (--help adds it) */
    const char *python;  /* the estimators' parameter; NULL: none */
} hog_train_option;

/* The rows, in the order hog_train_opts_resolve() settles them; *n their
 * count. */
HOG_API const hog_train_option *hog_train_options(size_t *n);

/* Turns o's unset options into their defaults (given the options set:
 * the algorithm, loss, schedule...; and h, the hooks of the run, NULL for
 * none: a model averaged across processes, h->average, runs no FTRL) and
 * checks every row's range: HOG_OK, or HOG_EINVAL with a sentence naming
 * the option. Every training entry point calls it on its copy of the
 * options with its hooks; a caller calls it to see what a run will use.
 * Settled options stay as they are, so a second call changes nothing. */
HOG_API hog_status hog_train_opts_resolve(hog_train_opts *o,
                                          const hog_train_hooks *h,
                                          hog_err *err);

typedef struct hog_model hog_model;

/* Trains on train; test may be NULL; h the hooks (NULL: none).
 * Deterministic given o->seed for the serial trainer. */
HOG_API hog_status hog_train(const hog_data *train, const hog_data *test,
                             const hog_train_opts *o,
                             const hog_train_hooks *h, hog_model **out,
                             hog_err *err);

/* Trains on a .hgb file streamed from disk a chunk at a time: memory is the
 * model plus o->mem_budget plus a small constant, whatever the file's size.
 * Rows are shuffled within a window of chunks (docs/STREAMING.md); when the
 * whole file fits the budget, the serial trainer's order and model equal
 * hog_train's bit for bit. Serial and Hogwild! only; training-set metrics
 * are not computed (they would need a second pass), test metrics are. */
HOG_API hog_status hog_train_stream(const char *path, const hog_data *test,
                                    const hog_train_opts *o,
                                    const hog_train_hooks *h, hog_model **out,
                                    hog_err *err);

/* ---- online learning (docs/TRAINING.md, "Continuing training") ---------
 * A serial run over pieces of rows, each one unshuffled epoch on from the
 * last's state (hog_train's steps with save_state and a warm start), at the
 * cost of its nonzeros. o copied, arrays and warm_start (with its state)
 * too; row weights per piece. A diverged piece (HOG_ERANGE) fails it. */
typedef struct hog_trainer hog_trainer;
HOG_API hog_status hog_trainer_create(const hog_train_opts *o,
                                      hog_trainer **out, hog_err *err);
HOG_API hog_status hog_trainer_train(hog_trainer *t, const hog_data *piece,
                                     const float *row_weights, hog_err *err);
HOG_API hog_status hog_trainer_model(hog_trainer *t, int with_state,
                                     hog_model **out, hog_err *err);
HOG_API uint64_t hog_trainer_pieces(const hog_trainer *t);
HOG_API uint64_t hog_trainer_model_passes(const hog_trainer *t);
HOG_API void hog_trainer_free(hog_trainer *t);

/* ---- cross-validation and the search for C ------------------------------ */

/* One fold of a cross-validation: the model trained on the other folds,
 * scored on this one. Fields that do not apply are NaN. */
typedef struct hog_cv_fold {
    uint64_t train_rows, valid_rows;
    double loss, accuracy, auc, rmse, macro_f1;
    double seconds;        /* its training time */
} hog_cv_fold;

#define HOG_CV_MAX_FOLDS 1000u

typedef struct hog_cv_result {
    size_t size;           /* in: the caller's sizeof(hog_cv_result) */
    unsigned folds;
    unsigned parallel;     /* folds trained at once, each on one thread;
                              1: one after another on all threads */
    /* accuracy over every row (each scored once, by its fold's model, as
     * LIBLINEAR's -v), RMSE over every row, and the means of the folds'
     * AUC, macro-F1 and loss; each _sd the sample standard deviation of
     * the folds' figures */
    double accuracy, accuracy_sd, auc, auc_sd, rmse, rmse_sd;
    double macro_f1, macro_f1_sd, loss, loss_sd;
    double seconds;        /* wall time of the whole cross-validation */
    hog_cv_fold *fold;     /* in: NULL or an array of `folds` entries the
                              caller owns, filled fold by fold (outside
                              size: NULL) */
} hog_cv_result;

/* K-fold cross-validation of the options o on d: the rows dealt into K
 * stratified folds (seeded by o->seed: each fold holds each class's share
 * within one row; regression: a seeded shuffle), K models each trained on
 * K - 1 folds (hog_train with o; a fold's n for o->C is its training
 * rows) and scored on the fold left out. The folds' copies of the rows
 * are made as each fold starts: memory for one more data set per fold in
 * flight. 2 <= folds <= min(rows, HOG_CV_MAX_FOLDS). Of the hooks h
 * (NULL: none) the folds take log and cancel; progress is not called and
 * no stats are filled. */
HOG_API hog_status hog_cross_validate(const hog_data *d,
                                      const hog_train_opts *o,
                                      const hog_train_hooks *h, unsigned folds,
                                      hog_cv_result *res, hog_err *err);

/* One C of the search. */
typedef struct hog_search_step {
    double C;
    double l1, l2;          /* the strengths of C on the whole data (n rows);
                               each fold's are 1/(C n_fold) */
    double accuracy, accuracy_sd, auc, rmse, macro_f1;
    double seconds;         /* wall time of this C's cross-validation */
    int warm;               /* the folds started from the previous C's */
} hog_search_step;

/* The most values of C one search tries. */
#define HOG_SEARCH_MAX_STEPS 128u

typedef struct hog_search_opts {
    size_t size;            /* sizeof(hog_search_opts) */
    double C_min;           /* the first C; 0 (default): LIBLINEAR's start,
                               2^floor(log2(1 / (n max |x|^2))) (sqhinge:
                               1 / (2 n max |x|^2)) */
    double C_max;           /* the last C at most (default 1024 = 2^10) */
    double ratio;           /* C grows by this factor (default 2) */
    unsigned patience;      /* stop after this many C in a row without a
                               gain of min_gain over the last gain, once
                               the path has gained once (default 3; 0:
                               every C) */
    int warm_start;         /* 1 (default): each fold starts from its model
                               of the previous C where the algorithm takes
                               a warm start (serial, hogwild, cyclades) */
    /* Called after each C (may be NULL). */
    void (*step)(void *ctx, const hog_search_step *s);
    void *step_ctx;
    /* What counts as a gain for patience: the CV accuracy up by at least
     * this (a fraction: default 0.001, a tenth of a point), or the RMSE
     * down by this share of itself. The best C is the best figure still. */
    double min_gain;
} hog_search_opts;

HOG_API void hog_search_opts_init(hog_search_opts *so);

typedef struct hog_search_result {
    size_t size;            /* in: the caller's sizeof(hog_search_result) */
    /* in: NULL, or an array of step_cap entries the caller owns: the
     * first min(steps, step_cap) values of C tried go there, in order;
     * the search goes on past step_cap (the steps beyond it are in
     * neither array, only in the counts and best_step). step_cap
     * HOG_SEARCH_MAX_STEPS holds any search; a step_cap with a NULL step
     * is refused (HOG_EINVAL). */
    hog_search_step *step;
    unsigned step_cap;
    unsigned steps;         /* the values of C tried (may exceed step_cap) */
    unsigned best;          /* index of the best step: the highest CV
                               accuracy (regression: the lowest RMSE), the
                               smallest C of a tie, as LIBLINEAR */
    double best_C;
    int stopped_early;      /* 1: patience ran out before C_max */
    double seconds;
    hog_search_step best_step; /* the best step's figures, whatever step_cap */
} hog_search_result;

/* LIBLINEAR's -C: cross-validation (folds, as hog_cross_validate) over
 * C = C_min, C_min ratio, ... up to C_max, stopping early by patience.
 * o->C_l1 says which strength C sets; o->C itself is ignored. res->size,
 * step and step_cap are the caller's to set:
 *
 *     hog_search_result r = { .size = sizeof r };  // r.best_C, r.best_step
 */
HOG_API hog_status hog_search_C(const hog_data *d, const hog_train_opts *o,
                                const hog_train_hooks *h, unsigned folds,
                                const hog_search_opts *so,
                                hog_search_result *res, hog_err *err);

/* Models: files, what they hold, scores and predictions. */
#include "hogtrain_model.h"

#ifdef __cplusplus
}
#endif
#endif
