/*
 * io: the LIBSVM/SVMlight parser, the .hgb binary cache, model files and
 * the synthetic data generator. The only module that touches files; it
 * never knows which algorithm runs.
 */
#ifndef HOG_IO_H
#define HOG_IO_H

#include "core/core.h"
#include "core/cross.h"

#include <stdio.h>
#include <sys/types.h>

/* ---- feature hashing (hash.c) --------------------------------------------- */

/* MurmurHash3, x86, 32 bits, of len bytes (Appleby's reference: "" with
 * seed 0 is 0; tests/test_hash.c has the published vectors). */
uint32_t hog_murmur3_32(const void *key, size_t len, uint32_t seed);
/* Its steps, for the inline hash of one 4-byte block below. */
static inline uint32_t hog_murmur3_mix_k(uint32_t k)
{
    k *= 0xcc9e2d51u;
    k = (k << 15) | (k >> 17);
    return k * 0x1b873593u;
}
static inline uint32_t hog_murmur3_round(uint32_t h, uint32_t k)
{
    h ^= hog_murmur3_mix_k(k);
    h = (h << 13) | (h >> 19);
    return h * 5 + 0xe6546b64u;
}
static inline uint32_t hog_murmur3_fmix(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    return h ^ (h >> 16);
}
/* The hash of a LIBSVM feature: MurmurHash3 of the 0-based index j as 4
 * little-endian bytes, hog_murmur3_32(&le32(j), 4, seed). */
static inline uint32_t hog_hash_index(uint32_t j, uint32_t seed)
{
    return hog_murmur3_fmix(hog_murmur3_round(seed, j) ^ 4u);
}
/* Vowpal Wabbit's hash of a name under a seed (its hashstring(), the
 * default "--hash strings"): bytes up to 0x20 at either end dropped; a
 * name of decimal digits alone is the number + seed (mod 2^32), no name
 * the seed, anything else MurmurHash3 of its bytes. Namespaces are hashed
 * with the hash seed, features with their namespace's hash. */
uint32_t hog_vw_hash(const char *s, size_t len, uint32_t seed);

/* The 2^B weights of a hashing and, per weight, which features landed on
 * it: none, one (its tag), or several (a collision). */
struct hog_hash_space {
    unsigned bits;       /* B, 1..HOG_HASH_BITS_MAX */
    uint32_t seed, mask; /* mask = 2^B - 1 */
    unsigned width;      /* bytes per weight in seen */
    void *seen;
    size_t seen_bytes;
};
hog_status hog_hash_space_init(struct hog_hash_space *s, unsigned bits,
                               uint32_t seed, hog_err *err);
void hog_hash_space_free(struct hog_hash_space *s);
/* Records a feature of hash h (any thread, any order); 1 when this made
 * its weight a collision (once per weight), else 0. */
unsigned hog_hash_space_note(const struct hog_hash_space *s, uint32_t h);

/* hog_row_merge and its scratch: core/cross.h. */

/* A hashed .hgb against the hashing asked for in o: HOG_OK when none is
 * asked (hash_bits 0) or it is the file's; else HOG_EINVAL with a
 * sentence (an unhashed file cannot be hashed as it loads). */
hog_status hog_hash_check_file(const char *name, unsigned file_bits,
                               uint32_t file_seed, const hog_load_opts *o,
                               hog_err *err);
/* The caller's load options in a whole struct: the fields past its size
 * (a caller built before they existed) at their defaults. */
void hog_load_opts_take(const hog_load_opts *user, hog_load_opts *o);

/* ---- LIBSVM and Vowpal Wabbit text (parse.c) -------------------------------- */

/* Parses LIBSVM/SVMlight text in buf[0..len) with o->threads threads; name
 * is used in messages ("name:line: reason"). The text is parsed in windows
 * of HOG_PARSE_WINDOW bytes (whole lines), so that besides the result only
 * one window's partial arrays are held. */
hog_status hog_parse_svm(const char *buf, size_t len, const char *name,
                         const hog_load_opts *o, hog_data **out, hog_err *err);
/* The text a window holds: bounds the memory a load holds besides its
 * result, large enough that each of many threads gets slices of MiBs. */
#define HOG_PARSE_WINDOW ((size_t)32 << 20)
/* hog_parse_svm in windows of about window bytes (0: HOG_PARSE_WINDOW),
 * each cut after a newline. With drop_behind, buf is the start of a
 * private read-only mapping of the file, and the pages of each window are
 * unmapped from the process (MADV_DONTNEED) once parsed: the text is never
 * wholly resident beside the arrays. */
hog_status hog_parse_svm_windows(const char *buf, size_t len, const char *name,
                                 const hog_load_opts *o, size_t window,
                                 bool drop_behind, hog_data **out, hog_err *err);
/* The same with exactly nslices slices (threads), whatever the input size:
 * for tests that compare parallel against serial parsing on small files. */
hog_status hog_parse_svm_slices(const char *buf, size_t len, const char *name,
                                const hog_load_opts *o, unsigned nslices,
                                hog_data **out, hog_err *err);

/* The incremental parser under those, of LIBSVM or Vowpal Wabbit text
 * (o->format, or told by content: hog_text_sniff), hashing the features
 * when asked (o->hash_bits; VW text always): text fed in pieces of whole lines
 * (each ending with '\n'; the last piece's last line may lack it), in file
 * order, each piece parsed in parallel and appended to the result. An
 * error names the file's own line, counted across pieces; after one, feed
 * and finish refuse. finish hands the rows over (the "empty file" and "no
 * rows" errors are its); free releases what is left, after finish too. */
struct hog_svm_parser;
hog_status hog_svm_parser_create(const char *name, const hog_load_opts *o,
                                 struct hog_svm_parser **out, hog_err *err);
hog_status hog_svm_parser_feed(struct hog_svm_parser *p, const char *buf,
                               size_t len, hog_err *err);
/* Lines fed so far (the last piece's unterminated line counted). */
uint64_t hog_svm_parser_lines(const struct hog_svm_parser *p);
/* The bytes the rows parsed so far hold (their arrays' capacity). */
uint64_t hog_svm_parser_bytes(const struct hog_svm_parser *p);
/* The hashing so far (bits 0: none) and the format (HOG_FORMAT_AUTO while
 * nothing but blank lines and comments came; format may be NULL). */
void hog_svm_parser_hashing(const struct hog_svm_parser *p, hog_hashing *h,
                            hog_format *format);
/* The rows parsed so far, handed over (*out NULL when there are none);
 * the parser goes on with the next feed, its lines and hashing counted
 * across: convert's windows, each written out as it is parsed. */
hog_status hog_svm_parser_take(struct hog_svm_parser *p, hog_data **out,
                               hog_err *err);
hog_status hog_svm_parser_finish(struct hog_svm_parser *p, hog_data **out,
                                 hog_err *err);
void hog_svm_parser_free(struct hog_svm_parser *p);

/* ---- .hgb binary cache (hgb.c) -------------------------------------------- */

#define HOG_HGB_MAGIC "HOGDATA\0"
#define HOG_HGB_VERSION 2u /* written for unhashed features */
/* Version 2's layout with the hashing in the header: written for hashed
 * features, so that a reader that cannot keep the hashing refuses the
 * file by its version. 1 to 3 are read. */
#define HOG_HGB_VERSION_HASHED 3u
#define HOG_HGB_VERSION_READ 3u
#define HOG_HGB_ALIGN 4096u

/* True when the first bytes of a file are the .hgb magic. */
bool hog_hgb_sniff(const void *head, size_t len);
/* Loads a whole .hgb file (o may be NULL: threads = all CPUs). */
hog_status hog_hgb_load(const char *path, const hog_load_opts *o,
                        hog_data **out, hog_err *err);
/* hog_hgb_load choosing how the indices and values of a version 2 file
 * arrive: HOG_HGB_MAP_AUTO maps their pages from the file where it can
 * (the indices only under a read lease: hog_hgb_lease_state), HOG_HGB_COPY
 * reads them into memory and takes no lease (tests compare the two). */
enum hog_hgb_mode { HOG_HGB_MAP_AUTO, HOG_HGB_COPY };
hog_status hog_hgb_load_mode(const char *path, const hog_load_opts *o,
                             enum hog_hgb_mode mode, hog_data **out,
                             hog_err *err);
/* What keeps a loaded version 2 data set safe from its file (the read
 * lease: hgb_lease.c, docs/FORMATS.md "Reading it"). */
enum hog_hgb_lease_state {
    HOG_HGB_LEASE_NONE,   /* no lease: the indices were read, not mapped */
    HOG_HGB_LEASE_HELD,   /* indices and values mapped, the read lease held */
    HOG_HGB_LEASE_COPIED  /* a writer broke the lease: the arrays were
                           * copied to private memory, the lease released */
};
enum hog_hgb_lease_state hog_hgb_lease_state(const hog_data *d);
/* The real-time signal a lease break raises (its handler is installed at
 * the first lease), and the most files leased at once (more load with
 * their indices read). */
int hog_hgb_lease_signal(void);
#define HOG_HGB_LEASES 64
/* Writes d as .hgb (temporary name, then rename); src_size and src_mtime
 * describe the text file it came from (0 when none), so that a stale cache
 * can be told apart. */
hog_status hog_hgb_save(const hog_data *d, const char *path, uint64_t src_size,
                        int64_t src_mtime, hog_err *err);
#define HOG_HGB_CHUNK_TARGET (4u << 20) /* payload bytes per chunk */
/* hog_hgb_save with a chosen chunk payload target (tests use tiny ones). */
hog_status hog_hgb_save_chunked(const hog_data *d, const char *path,
                                uint64_t src_size, int64_t src_mtime,
                                uint64_t chunk_target, hog_err *err);
/* hog_hgb_save_chunked writing format `version` (1 or HOG_HGB_VERSION):
 * tests use it to check that older files still load. Hashed data is
 * written as HOG_HGB_VERSION_HASHED whatever the version asked (1 is
 * refused). */
hog_status hog_hgb_save_version(const hog_data *d, const char *path,
                                uint64_t src_size, int64_t src_mtime,
                                uint64_t chunk_target, uint32_t version,
                                hog_err *err);

/* Reading chunk by chunk (the streamer). Layout in docs/FORMATS.md. */
#define HOG_HGB_CHUNK_MAGIC "HGBC"
#define HOG_HGB_CHUNK_HEADER 64u /* bytes before a chunk's payload */

struct hog_hgb_chunk {
    uint64_t offset;    /* file offset, a multiple of HOG_HGB_ALIGN */
    uint64_t bytes;     /* chunk header + payload + padding, multiple of 4096 */
    uint64_t first_row; /* global index of its first row */
    uint64_t first_nnz; /* global index of its first nonzero */
    uint64_t rows, nnz;
};

struct hog_hgb_info {
    int fd;             /* open read-only; closed by hog_hgb_info_close */
    uint32_t version;
    uint64_t rows, n_features, nnz, n_chunks;
    uint64_t src_size;
    int64_t src_mtime;
    enum hog_label_kind labels;
    double label_pos, label_neg;
    uint64_t n_pos;
    uint64_t file_size;
    uint64_t max_chunk_bytes;      /* largest chunk: the buffer a reader needs */
    hog_hashing hash;              /* version 3; bits 0 before */
    struct hog_hgb_chunk *chunks;  /* n_chunks entries, in file order */
};

/* Opens path, checks the header and the chunk table (CRCs, sizes against
 * the file size) and fills info. Nothing of the chunks is read. */
hog_status hog_hgb_open_info(const char *path, struct hog_hgb_info *info,
                             hog_err *err);
void hog_hgb_info_close(struct hog_hgb_info *info);
/* Checks chunk k read whole into buf (info->chunks[k].bytes bytes from its
 * offset; buf aligned to at least 8 bytes, HOG_HGB_ALIGN for O_DIRECT):
 * header, CRC of payload and padding, row offsets, indices below
 * n_features, labels among the header's two (binary files). On success m views the chunk inside buf, with local offsets
 * (m->off[0] == 0). name is used in messages. */
hog_status hog_hgb_chunk_verify(const struct hog_hgb_info *info, uint64_t k,
                                const void *buf, const char *name,
                                struct hog_csr *m, hog_err *err);

/* The check of a label summary found in the data (hog_data_scan_labels,
 * or a hog_label_scan over every chunk) against the header's, which the
 * loader and the streamer share: HOG_ECORRUPT "the labels disagree with
 * the header's label summary" naming the file. (Opening a file already
 * refuses a summary no data can have; each chunk checked is refused when
 * a label is neither of the header's two.) */
hog_status hog_hgb_labels_match(const struct hog_hgb_info *in,
                                enum hog_label_kind kind, double pos,
                                double neg, uint64_t n_pos, const char *name,
                                hog_err *err);

/* ---- streamer (stream.c, stream_uring.c, stream_pread.c) ------------------ */

/* Reads .hgb chunks into a ring of aligned buffers, a queue of reads in
 * flight, and hands them out in the order they were queued, each checked
 * (CRC, header, offsets) as it arrives. Two backends behind one interface:
 * io_uring, and a pread reader thread used when io_uring cannot be set up.
 * One consumer thread calls push/next/release; docs/STREAMING.md. */

#define HOG_STREAM_DEFAULT_BUDGET (UINT64_C(256) << 20)

struct hog_stream_opts {
    uint64_t mem_budget;   /* ring bytes, at least two chunks (0: the default) */
    hog_io_backend io;     /* HOG_IO_AUTO falls back on pread with a notice */
    int direct;            /* -1 auto, 0 off, 1 on (on: refused -> buffered) */
    unsigned max_slots;    /* at most this many buffers (0: no limit) */
    unsigned row_bytes;    /* the consumer's memory per row of a window (its
                              row order): counted in the budget */
    hog_log_fn log;        /* the fallback notice; NULL: stderr */
    void *log_ctx;
};
void hog_stream_opts_init(struct hog_stream_opts *o);

typedef struct hog_stream hog_stream;

/* A chunk handed out by hog_stream_next: m views it inside the ring (local
 * row offsets); valid until hog_stream_release(s, c->slot). */
struct hog_stream_chunk {
    uint64_t k;      /* chunk index in the file */
    unsigned slot;   /* ring buffer holding it */
    struct hog_csr m;
};

/* Opens path (a .hgb file; its header and chunk table are checked) and sets
 * up the ring and a backend. Test seam: HOGTRAIN_TEST_URING_FAIL=EPERM,
 * ENOSYS or ENOMEM in the environment makes the io_uring setup fail with
 * that error, as a seccomp filter, an old kernel or the memlock limit would. */
hog_status hog_stream_open(const char *path, const struct hog_stream_opts *o,
                           hog_stream **out, hog_err *err);
void hog_stream_close(hog_stream *s);

const struct hog_hgb_info *hog_stream_info(const hog_stream *s);
unsigned hog_stream_slots(const hog_stream *s);
/* Chunks a consumer should hold at once (a shuffling window): every chunk
 * when the ring holds the whole file, else half the ring, so that the other
 * half reads ahead. */
unsigned hog_stream_window(const hog_stream *s);
/* Fills every field of st. */
void hog_stream_get_stats(const hog_stream *s, hog_stream_stats *st);

/* Queues chunks seq[0..n) to be read in that order after those queued
 * before (reads start at once into free buffers: queue the next epoch
 * early to prefetch it). Checks first that the file is still whole: a file
 * removed or shrunk since it was opened is an error. */
hog_status hog_stream_push(hog_stream *s, const uint64_t *seq, uint64_t n,
                           hog_err *err);
/* Waits for the next queued chunk, checks it and hands it out. An error
 * names the chunk and its offset (a read error, a file that shrank, a
 * checksum mismatch, a label the header does not declare). Once every
 * chunk has been handed out, the labels of all are checked against the
 * header's summary as a whole load checks them (hog_hgb_labels_match). HOG_EINVAL when nothing is queued or every buffer is
 * held by the caller. */
hog_status hog_stream_next(hog_stream *s, struct hog_stream_chunk *c,
                           hog_err *err);
/* Gives a buffer back; its slot is refilled with the next queued chunk. */
void hog_stream_release(hog_stream *s, unsigned slot);

/* The chunks a consumer holds at once, numbered as one run of rows. */
struct hog_stream_win {
    struct hog_stream_chunk *c; /* n chunks, in queue order */
    uint64_t *first;            /* n + 1: window row number of each's first row */
    hog_data *d;                /* n: each chunk as a hog_data (m only), for
                                   kernels that take one */
    uint64_t n, cap;
};
hog_status hog_stream_win_init(struct hog_stream_win *w, uint64_t cap,
                               hog_err *err);
void hog_stream_win_free(struct hog_stream_win *w);
/* Takes the next n (<= cap) queued chunks; on error the chunks taken so
 * far are still held (hog_stream_win_release gives them back). */
hog_status hog_stream_win_take(hog_stream *s, struct hog_stream_win *w,
                               uint64_t n, hog_err *err);
void hog_stream_win_release(hog_stream *s, struct hog_stream_win *w);
/* The chunk holding window row p. */
static inline uint64_t hog_stream_win_chunk(const struct hog_stream_win *w,
                                            uint64_t p)
{
    uint64_t lo = 0, hi = w->n - 1;
    while (lo < hi) {
        uint64_t mid = (lo + hi + 1) / 2;
        if (w->first[mid] <= p)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* The shuffled row order of a streamed run (docs/STREAMING.md). */
struct hog_stream_order {
    const struct hog_hgb_info *in;
    uint64_t window;        /* chunks per window (n_chunks: one window) */
    struct hog_rng chunk_rng, row_rng;
    uint64_t *chunks;       /* n_chunks: the chunk order, reshuffled each epoch */
    uint32_t *rows;         /* rows of the largest window */
    uint64_t rows_cap;
};
/* window >= n_chunks: one window over the file, whose row order is the
 * in-memory serial trainer's (one permutation of all rows from hog_rng
 * stream 0 of seed, reshuffled each epoch). Otherwise each epoch reshuffles
 * the chunk order (stream 1), cuts it into windows, and shuffles the rows
 * of each window afresh (stream 0). */
hog_status hog_stream_order_init(struct hog_stream_order *o,
                                 const struct hog_hgb_info *in,
                                 uint64_t window, uint64_t seed, hog_err *err);
void hog_stream_order_free(struct hog_stream_order *o);
/* The next epoch's chunk sequence (n_chunks entries, into o->chunks). */
const uint64_t *hog_stream_order_epoch(struct hog_stream_order *o);
/* The row order of window w of the sequence last returned: positions into
 * the concatenated rows of its chunks (in sequence order); *n rows. */
const uint32_t *hog_stream_order_window(struct hog_stream_order *o,
                                        const uint64_t *seq, uint64_t w,
                                        uint64_t *n);
/* One thread's walk through an epoch's rows in that order, window after
 * window (the serial streamed trainers): begin with the epoch's chunk
 * sequence, then, until the epoch's rows are done, next() gives the rows
 * left in the current window (taking the next window, and setting *fresh,
 * when it is used up), row() the b-th of them (its chunk as the data, its
 * row there), and the caller advances pos by the rows it stepped. The
 * last window stays held: hog_stream_win_release() it after the epoch. */
struct hog_stream_walk {
    hog_stream *s;
    struct hog_stream_win *win;
    struct hog_stream_order *ord;
    const uint64_t *seq;
    uint64_t window, next, len, pos; /* chunks a window; the next window;
                                        the current's rows, those done */
    const uint32_t *rows;
};
void hog_stream_walk_begin(struct hog_stream_walk *k, hog_stream *s,
                           struct hog_stream_win *win,
                           struct hog_stream_order *ord, const uint64_t *seq);
hog_status hog_stream_walk_next(struct hog_stream_walk *k, uint64_t *left,
                                bool *fresh, hog_err *err);
static inline const hog_data *hog_stream_walk_row(
    const struct hog_stream_walk *k, uint64_t b, uint64_t *row)
{
    uint32_t p = k->rows[k->pos + b];
    uint64_t j = hog_stream_win_chunk(k->win, p);
    *row = p - k->win->first[j];
    return &k->win->d[j];
}

/* Most rows a window can hold: 4 bytes of order each (counted in budgets). */
uint64_t hog_stream_window_rows_max(const struct hog_hgb_info *in,
                                    uint64_t window);

/* ---- streaming conversion (stream_convert.c) -------------------------------- */

struct hog_convert_stats {
    uint64_t rows, nnz, n_features, chunks;
    uint64_t windows;      /* text windows parsed */
    uint64_t window_bytes; /* the window buffer (grown for very long lines) */
    hog_hashing hash;      /* bits 0: not hashed */
    hog_format format;     /* the text's */
};
/* LIBSVM or Vowpal Wabbit text at in ("-": standard input) to .hgb at out
 * in bounded memory (hashed as o asks; VW text always):
 * the text is parsed in windows of `window` bytes cut at newlines (error
 * lines numbered in the whole file), each appended as chunks of about
 * chunk_target payload bytes (0: HOG_HGB_CHUNK_TARGET); header and table
 * written last; temporary name, then rename. cs may be NULL. */
hog_status hog_svm_to_hgb_stream(const char *in, const char *out,
                                 const hog_load_opts *o, size_t window,
                                 uint64_t chunk_target,
                                 struct hog_convert_stats *cs, hog_err *err);

/* ---- model files (model.c, model_hgm.c, model_liblinear.c) ---------------- */

#define HOG_HGM_MAGIC "HOGMODL\0"
/* The newest .hgm version read: 4, models with interactions or sparse
 * weights (3: models of hashed features, 2: K-class
 * models). Binary and regression models of unhashed features are still
 * written as version 1, byte for byte, K-class ones as version 2. */
#define HOG_HGM_VERSION 5u

/* ---- training checkpoints (checkpoint.c) --------------------------------- */

#include "core/fit.h"

#define HOG_CKPT_MAGIC "HOGCKPT\0"
#define HOG_CKPT_VERSION 3u

/* A checkpoint file: what it belongs to (checked on resume) and the state.
 * Layout in docs/RELIABILITY.md; every byte is covered by a CRC32C. */
struct hog_ckpt {
    uint32_t algo, loss, schedule;
    double eta, l1, l2, power, bias;
    uint64_t seed;
    uint64_t rows, nnz, n_features;
    uint32_t data_crc;          /* hog_ckpt_data_crc() of the training set */
    uint64_t ckpt_rows;         /* the cadence it was written with */
    uint32_t ckpt_epochs;
    /* Version 2: the algorithm options that shape the run (as asked for;
     * 0 = chosen from the data). Version 1 files leave opts_known false. */
    bool opts_known;
    uint64_t batch_size, hot_degree;  /* Cyclades */
    uint32_t repartition, cyc_hot;    /* Cyclades */
    uint64_t hot_count, sync_every;   /* Hogwild! hot replicas, replicas */
    uint32_t replicas;                /* Hogwild! hog_replicas */
    /* Row weights the run trained with (docs/TRAINING.md, "Weights"):
     * the CRC32C of the effective weights (hog_ckpt_weights_crc); files
     * written before weights existed say unweighted. */
    bool weighted;
    uint32_t weights_crc;
    /* Multinomial training of K classes (--multiclass softmax): st holds
     * the K class-major vectors; files before it say one-vs-rest. */
    bool softmax;
    struct hog_train_state st;  /* arrays owned (hog_ckpt_free) */
};

/* CRC32C over the rows, labels, indices and values of d. */
uint32_t hog_ckpt_data_crc(const hog_data *d);
/* CRC32C over d's row weights (d->row_w, rows floats); 0 without them. */
uint32_t hog_ckpt_weights_crc(const hog_data *d);
hog_status hog_ckpt_save(const struct hog_ckpt *c, const char *path,
                         hog_err *err);
/* Reads and checks a checkpoint: magic, version (a newer one is refused
 * with its number), CRCs, sizes against the file size before allocating. */
hog_status hog_ckpt_load(const char *path, struct hog_ckpt *c, hog_err *err);
void hog_ckpt_free(struct hog_ckpt *c);

/* ---- row-weight files (weights.c) ----------------------------------------- */

/* Reads path, one weight per line for each of the training data's rows
 * (LIBLINEAR's instance weights; docs/TRAINING.md, "Weights"), into a
 * malloc'd array of rows floats. A line that is not a finite number >= 0
 * is HOG_EPARSE naming file and line; another count of lines than rows is
 * HOG_EINVAL naming both counts and the file. */
hog_status hog_weights_load(const char *path, uint64_t rows, float **out,
                            hog_err *err);

/* ---- synthetic data (gen.c) ----------------------------------------------- */

struct hog_gen_opts {
    uint64_t rows;
    uint64_t features;
    double nnz_per_row;   /* mean nonzeros per row (Poisson-like around it) */
    double zipf;          /* power-law exponent of feature frequencies (~1.1 like text) */
    double label_noise;   /* probability of flipping a class label / noise sd */
    bool regression;      /* real targets instead of +1/-1 */
    double density_true;  /* fraction of planted weights that are non-zero */
    uint64_t seed;
    unsigned threads;     /* 0 = all online CPUs; the output is the same for any */
};

void hog_gen_opts_init(struct hog_gen_opts *g);
/* Writes LIBSVM text to f (streams: memory use independent of rows). */
hog_status hog_gen_write(const struct hog_gen_opts *g, FILE *f, hog_err *err);
/* The planted model of g: weights by 0-based feature id, and a bias weight
 * (bias value 1) chosen so that the classes are about balanced. Its scores
 * on the written data are the margins the labels were drawn from (loss
 * logistic, or squared for regression). */
hog_status hog_gen_model(const struct hog_gen_opts *g, hog_model **out,
                         hog_err *err);

/* ---- what an input is (input.c) ------------------------------------------ */

/* A file's kind from its first HOG_SNIFF_BYTES bytes (magic numbers). */
enum hog_file_kind {
    HOG_FILE_TEXT,      /* none of the others: LIBSVM text, as far as it shows */
    HOG_FILE_HGB,
    HOG_FILE_HGM,
    HOG_FILE_CKPT,
    HOG_FILE_LIBLINEAR, /* a LIBLINEAR text model */
    HOG_FILE_GZIP,      /* gzip, xz and zstd are read (decompress.c) */
    HOG_FILE_XZ,
    HOG_FILE_ZSTD,
    HOG_FILE_BZIP2,     /* bzip2 and zip are only named */
    HOG_FILE_ZIP,
    HOG_FILE_NUL        /* starts with a NUL byte (binary, /dev/zero) */
};
#define HOG_SNIFF_BYTES 16

/* A data input as the loader and convert take it: a path, or "-" for
 * standard input. */
struct hog_input {
    int fd;
    const char *name;  /* in messages: the path, or "<stdin>" */
    bool is_stdin;     /* fd is standard input: not opened, never closed */
    bool regular;      /* fd is a regular file (standard input may be one) */
    uint64_t size;     /* when regular: its size and modification time */
    int64_t mtime;
    /* Filled by hog_input_sniff: */
    enum hog_file_kind kind;
    unsigned char head[HOG_SNIFF_BYTES]; /* the first head_len bytes */
    size_t head_len;
    bool head_consumed; /* read from fd (a pipe, standard input), which
                           goes on after them; else fd is still at 0 */
};
/* Opens path for reading (O_CLOEXEC) and fstats it; HOG_EIO "path: cannot
 * open: reason". hog_input_close closes it unless it is standard input. */
hog_status hog_input_open(const char *path, struct hog_input *in,
                          hog_err *err);
/* Reads the input's first bytes (waiting for HOG_SNIFF_BYTES of a pipe, or
 * its end) and tells its kind; HOG_EIO "name: read failed: reason". */
hog_status hog_input_sniff(struct hog_input *in, hog_err *err);
void hog_input_close(struct hog_input *in);
enum hog_file_kind hog_file_kind(const void *head, size_t len);
/* The format of text by its first line that is neither blank nor a
 * comment ('#' first): Vowpal Wabbit when it has a '|' before any '#',
 * else LIBSVM; HOG_FORMAT_AUTO when buf[0..len) has no such line. */
hog_format hog_text_sniff(const char *buf, size_t len);
/* "LIBSVM" or "Vowpal Wabbit" (HOG_FORMAT_AUTO: "text"). */
const char *hog_format_name(hog_format f);
/* The kind of the file at path (its first bytes read; never blocks). */
hog_status hog_file_kind_of(const char *path, enum hog_file_kind *kind,
                            hog_err *err);
/* "xz-compressed", "a hogtrain model", ... */
const char *hog_file_kind_name(enum hog_file_kind k);
/* HOG_OK for the kinds that are data (text, .hgb, text compressed with
 * gzip, xz or zstd); else HOG_EFORMAT with a sentence saying what the file
 * is and what to do ("a9a.bz2 is bzip2-compressed, which hogtrain does not
 * read: decompress it first (bzip2 -dk a9a.bz2)"). name as in messages
 * ("<stdin>" for standard input). */
hog_status hog_data_kind_check(enum hog_file_kind k, const char *name,
                               hog_err *err);
/* The longest line of text read through a buffer (pipes, devices,
 * convert's windows): half the memory this process may still take
 * (hog_mem_available: the machine's, the address-space limit, the
 * cgroup's), so that the line and its parsed row fit; *what (may be NULL)
 * names the limit that binds, as hog_mem_available says it. */
uint64_t hog_line_max(const char **what);
/* HOG_ERANGE "name:line: a line longer than ..." for a line past max,
 * naming the limit (what, from hog_line_max). */
hog_status hog_line_too_long(const char *name, uint64_t line, uint64_t max,
                             const char *what, hog_err *err);

/* ---- whether a load fits in memory (budget.c) ------------------------------ */

/* The whitespace-separated tokens and the lines (a last one without its
 * newline counted) of the text p[0..n). */
void hog_text_count(const char *p, size_t n, uint64_t *tokens,
                    uint64_t *lines);
/* The bytes the parsed rows of the text p[0..n) take, about: 12 per line
 * (label and offset), 8 per further token (index and value). */
uint64_t hog_text_rows_bytes(const char *p, size_t n);
/* HOG_OK when the rows of total bytes of text, weighed by its sample
 * text[0..n), fit in what hog_mem_available says is left; else HOG_ENOMEM
 * "name: the data needs about N MiB of memory (its parsed rows, from T MiB
 * of text), but only M MiB is available under the memory limit of the
 * cgroup (memory.max); raise the limit, or convert it to .hgb ... and train
 * with --stream ...". regular: the input is a file (not a pipe). Without
 * a sample (n 0), the rows are taken as half the text. */
hog_status hog_load_fits(const char *name, const char *text, size_t n,
                         uint64_t total, bool regular, hog_err *err);
/* hog_load_fits for a mapped text file of len bytes, sampling its start. */
hog_status hog_load_fits_mapped(const char *name, const char *text,
                                size_t len, hog_err *err);
/* Before a window w[0..n) of text is parsed, after text_so_far bytes whose
 * rows hold `held` bytes: HOG_ENOMEM, the same sentence, when its rows and
 * the arrays' growth would not fit. */
hog_status hog_window_fits(const char *name, const char *w, size_t n,
                           uint64_t text_so_far, uint64_t held,
                           bool regular, hog_err *err);
/* A load of path failed with HOG_ENOMEM where an allocation was refused
 * (ulimit -v): appends to err's message what the data needs (a .hgb's
 * arrays, a text file and its rows, a compressed file's rows from the size
 * its format records) and the remedy. */
void hog_explain_memory(const char *path, hog_err *err);

/* ---- compressed input (decompress.c) --------------------------------------- */

/* A decoder of gzip, xz or zstd: compressed bytes in, in pieces, the text
 * out. Every member, stream or frame of a file is decoded in turn (as zcat,
 * xzcat and zstdcat do) and each one's check verified. */
struct hog_decoder;
/* True for the kinds a decoder reads (gzip, xz, zstd). */
bool hog_decoder_supports(enum hog_file_kind k);
/* name: the file, in messages. HOG_ENOTSUP for a kind it does not read. */
hog_status hog_decoder_open(enum hog_file_kind k, const char *name,
                            struct hog_decoder **out, hog_err *err);
/* Decodes in[*in_used..in_len) into out[*out_used..out_cap), advancing both,
 * until the output is full or more input is needed; last: nothing follows
 * in_len. *end once the data ended, with the input. A bad file is
 * HOG_ECORRUPT naming it and the reason ("a9a.xz: xz data is truncated
 * (unexpected end of input)", "gzip data is corrupt (invalid block
 * type)"): input that ends inside a member, stream or frame is never
 * taken for the end. */
hog_status hog_decoder_run(struct hog_decoder *d, const unsigned char *in,
                           size_t in_len, size_t *in_used, char *out,
                           size_t out_cap, size_t *out_used, bool last,
                           bool *end, hog_err *err);
void hog_decoder_free(struct hog_decoder *d);
/* The bytes of text the compressed regular file fd (of size bytes, kind k)
 * decodes to, from what its format records: xz's index (exact), zstd's
 * frame content sizes (exact; 0 when a frame declares none), gzip's last
 * ISIZE, which is mod 2^32 and of the last member only (a lower bound, at
 * least the file's size). 0: unknown. */
uint64_t hog_decoded_size(int fd, enum hog_file_kind k, uint64_t size);

/* ---- text read ahead in windows of whole lines (readahead.c) ---------------- */

/* A thread reads the input (decompressing it when in->kind is gzip, xz or
 * zstd) into two buffers in turn, handing each over as a window of about
 * `window` bytes (0: HOG_PARSE_WINDOW; 1: the whole lines of each read, as
 * soon as they come) cut after a newline, so that the caller parses one
 * window while the next is read. A NUL byte, a line
 * longer than hog_line_max(), a read or decompression error ends the
 * text with an error naming the file (and the line, for the first two),
 * after the windows before it. in must have been sniffed; its kind is
 * text or compressed text, else the answer is hog_data_kind_check's. */
struct hog_text_reader;
hog_status hog_text_reader_open(const struct hog_input *in, size_t window,
                                struct hog_text_reader **out, hog_err *err);
/* The next window (*len 0 at the end): whole lines, except that the text's
 * last line may lack its newline. Valid until the next call. */
hog_status hog_text_reader_next(struct hog_text_reader *r, const char **buf,
                                size_t *len, hog_err *err);
/* The largest window buffer so far (a line longer than the window grows one). */
size_t hog_text_reader_buffer_bytes(struct hog_text_reader *r);
/* Stops the thread, wherever it is (a read from a pipe is woken), joins it
 * and frees everything. NULL is a no-op. */
void hog_text_reader_close(struct hog_text_reader *r);

/* ---- whole transfers (file.c) --------------------------------------------- */

/* read(2), pread(2), preadv(2) and pwrite(2) repeated over interruptions
 * (EINTR) and short transfers until all len bytes have moved; the one
 * copy of these loops in io (one loop over readv, preadv and pwritev). Each returns the bytes moved: len, or fewer
 * at the end of the file (a read) or on an error, whose errno is then in
 * *error (0 otherwise; errno itself is left as the failed call set it).
 * hog_preadv_full fills iov[0..n) in order and consumes iov. */
size_t hog_read_full(int fd, void *buf, size_t len, int *error);
size_t hog_pread_full(int fd, void *buf, size_t len, uint64_t off, int *error);
struct iovec;
size_t hog_preadv_full(int fd, struct iovec *iov, int n, uint64_t off,
                       int *error);
size_t hog_pwrite_full(int fd, const void *buf, size_t len, uint64_t off,
                       int *error);
/* One read(2), repeated only over EINTR: for readers that look at each
 * piece as it arrives (a pipe). The bytes read, 0 at the end of the file,
 * -1 with errno on an error. */
ssize_t hog_read_some(int fd, void *buf, size_t len);

/* ---- helpers shared by the writers ---------------------------------------- */

/* This host's name as temporaries carry it: reduced to [A-Za-z0-9_.], at
 * most 64 bytes (no '-', which separates it from the PID, nor '/'). */
void hog_tmp_host_tag(char *buf, size_t len);

/* An output file (src/io/outfile.c): a regular target (or a new one, or
 * the final target of a symlink) is written to "TARGET.tmp.HOST-PID-RANDOM"
 * beside it (O_EXCL | O_NOFOLLOW: a name planted there is never opened)
 * with the mode the target would get, and hog_outfile_commit() fsyncs,
 * closes and renames it over the target (or removes it on failure, naming
 * the real cause: "No space left on device"), then removes temporaries of
 * the target that dead processes of this host left behind. A target that
 * exists and is not a regular file (/dev/null, a terminal, a FIFO) and
 * "-" (standard output) are written in place: never renamed over. Every
 * writer of the library and the command goes through these. */
typedef struct hog_outfile {
    FILE *f;          /* write here */
    const char *name; /* the path as given, for messages */
    char dest[4096];  /* written or renamed onto: the path, or its links' end */
    char tmp[4200];   /* the temporary; "" when written in place */
    int slot;         /* in the table of temporaries open now, or -1 */
} hog_outfile;

/* Whether path could be opened for writing (its folder writable, or the
 * device or FIFO there writable), without opening it: the command checks
 * its outputs before a long run. */
hog_status hog_outfile_check(const char *path, hog_err *err);
hog_status hog_outfile_open(hog_outfile *o, const char *path, hog_err *err);
/* Whether o writes its target in place (not a regular file: no rename). */
bool hog_outfile_in_place(const hog_outfile *o);
hog_status hog_outfile_commit(hog_outfile *o, hog_err *err);
/* Closes o and removes its temporary; nothing once committed or aborted. */
void hog_outfile_abort(hog_outfile *o);
/* Removes every temporary of this process not yet committed or aborted:
 * async-signal-safe, for the handlers of the signals the process dies of. */
void hog_outfile_remove_all(void);

#endif
