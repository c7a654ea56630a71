/*
 * hogwild: stochastic gradient descent on sparse rows. The serial reference
 * trainer (serial.c); Hogwild! and the locked update modes run the same
 * kernel (src/core/sgd.h) from several threads; multinomial logistic
 * regression of K classes, serial and Hogwild! (softmax.c).
 */
#ifndef HOG_HOGWILD_H
#define HOG_HOGWILD_H

#include "core/drive.h"
#include "io/io.h"

/* Serial SGD: each epoch a fresh permutation of the rows drawn from
 * hog_rng stream 0 seeded with o->seed; zero initial weights.
 * Deterministic given the seed. */
hog_status hog_serial_train(struct hog_fit *f, hog_err *err);
/* The serial trainer's row order before its first shuffle, the identity
 * over n rows (malloc'd; NULL with err set when out of memory), with *rng
 * seeded as it seeds its own (stream 0 of seed): a trainer that steps in
 * the serial order shuffles it with *rng before each epoch. */
uint64_t *hog_serial_order(uint64_t n, uint64_t seed, struct hog_rng *rng,
                           hog_err *err);
/* Serial SGD over f->stream: rows in the streamed order of
 * hog_stream_order_init (io.h) with the stream's window; with a window of
 * the whole file, the same steps as hog_serial_train, bit for bit. */
hog_status hog_serial_train_stream(struct hog_fit *f, hog_err *err);

/* The streamed trainers' epochs (stream_epochs.c): the stream's order
 * and window, and hog_stream_epochs_draw as the driver's draw (drive.h):
 * epoch `epoch`'s chunk sequence into seq, queued on the stream with the
 * next epoch's behind it (read-ahead). The window's chunks stay held
 * until hog_stream_win_release or hog_stream_epochs_free. */
struct hog_stream_epochs {
    hog_stream *s;
    struct hog_stream_order ord;
    struct hog_stream_win win;
    const uint64_t *seq, *next; /* this epoch's sequence; the next's */
    unsigned epochs;
};
hog_status hog_stream_epochs_init(struct hog_stream_epochs *e,
                                  const struct hog_fit *f, hog_err *err);
hog_status hog_stream_epochs_draw(struct hog_stream_epochs *e,
                                  unsigned epoch, hog_err *err);
void hog_stream_epochs_free(struct hog_stream_epochs *e);

/* Hogwild! (Niu, Recht, Ré, Wright 2011) and its locked baselines on a
 * pinned thread pool, with optional model replicas (hogwild.c). With one
 * thread and shared weights the model is bit-identical to
 * hog_serial_train's in every update mode. */
hog_status hog_hogwild_train(struct hog_fit *f, hog_err *err);
/* Hogwild! over f->stream (hogwild_stream.c): each window of chunks is
 * trained by all threads on one shared model while the next one is read.
 * Update modes as hog_hogwild_train; replicas are refused. */
hog_status hog_hogwild_train_stream(struct hog_fit *f, hog_err *err);

/* Multinomial logistic regression of the model's K classes
 * (--multiclass softmax; softmax.c has the maths): SGD on one
 * feature-major K-wide weight array, with the binary kernel's schedules
 * and lazy regularization (one stamp and, AdaGrad, one accumulator per
 * feature). o->algo serial: on the calling thread, the serial trainer's
 * row order; hogwild: o->threads Hogwild! threads on the shared array,
 * whose model with one thread equals the serial one bit for bit. The
 * options train.c refuses for it (update modes, replicas, hot features,
 * checkpoints, streaming, averaging) are not looked at. */
hog_status hog_softmax_train(struct hog_fit *f, hog_err *err);

struct hog_pool;
struct hog_sgd;
/* Hot-feature replicas of Hogwild! (hot.c has the design): per thread a
 * view, an address range [head | cold | bias page] whose cold part is the
 * same shared memory in every view and whose hot weights (at the end of the
 * head) and bias are the thread's own. view[a][v]: array a (0 weights,
 * 1 stamps, 2 AdaGrad sums; NULL where the master has none) of view v,
 * v < threads a thread's, v == threads the base (the AdaGrad sums at the
 * last fold). */
struct hog_hot {
    uint64_t k;          /* hot features */
    bool bias;           /* the bias is private too (whenever there is one) */
    uint64_t head;       /* elements before the cold part (page multiple) */
    uint64_t cold, cold_pad;
    uint64_t n_features; /* the views': head + cold_pad, the bias's index */
    uint64_t span;       /* elements per view */
    uint32_t *map;       /* original feature -> view index */
    uint32_t *idx;       /* the data's column indices, remapped */
    hog_data data;       /* the training data with idx */
    unsigned nviews;
    void **view[3];
    uint64_t *ran;       /* [threads] rows each thread's view ran in the
                            running segment (written by that thread) */
    double nnz_share;    /* share of the nonzeros on hot features */
    double setup_seconds;
};
/* Chooses the want most frequent features (HOG_HOT_AUTO: by degree) of d
 * and maps the views for threads threads; master is the shared trainer
 * (hog_sgd_init'ed: it says which arrays exist). */
hog_status hog_hot_init(struct hog_hot *h, const hog_data *d,
                        const struct hog_sgd *master, uint64_t want,
                        unsigned threads, hog_err *err);
void hog_hot_free(struct hog_hot *h);
/* out = master running on view v (call after each segment_begin). */
void hog_hot_view(const struct hog_hot *h, const struct hog_sgd *master,
                  unsigned v, struct hog_sgd *out);
/* At the end of a segment of len steps: each thread brings its private
 * weights up to date (hog_hot_catch_up_private); after a barrier, thread
 * tid of T brings its share of the cold weights up to date
 * (hog_hot_segment_end) and folds its share of the hot weights back into
 * every view (hog_hot_fold): the two touch disjoint memory. */
void hog_hot_catch_up_private(struct hog_hot *h, struct hog_sgd *mine,
                              uint32_t len);
void hog_hot_segment_end(struct hog_hot *h, struct hog_sgd *mine,
                         unsigned tid, unsigned T, uint32_t len);
void hog_hot_fold(struct hog_hot *h, unsigned tid, unsigned T);
/* out[lo..hi) = the model's weights in the original feature order (the
 * bias at n_features); after a fold. hog_hot_g2: the AdaGrad sums. */
void hog_hot_model(const struct hog_hot *h, uint64_t lo, uint64_t hi,
                   uint64_t n_features, float *out);
void hog_hot_g2(const struct hog_hot *h, uint64_t n_weights,
                uint64_t n_features, float *out);

#endif
