/*
 * hogwild: stochastic gradient descent on sparse rows. The serial reference
 * trainer (serial.c); Hogwild! and the locked update modes run the same
 * kernel (src/core/sgd.h) from several threads.
 */
#ifndef HOG_HOGWILD_H
#define HOG_HOGWILD_H

#include "core/fit.h"

/* Rows per call to the kernel between progress checks. */
#define HOG_SGD_BLOCK 4096u

/* Serial SGD: each epoch a fresh permutation of the rows drawn from
 * hog_rng stream 0 seeded with o->seed; zero initial weights.
 * Deterministic given the seed. */
hog_status hog_serial_train(struct hog_fit *f, hog_err *err);
/* Serial SGD over f->stream: rows in the streamed order of
 * hog_stream_order_init (io.h) with the stream's window; with a window of
 * the whole file, the same steps as hog_serial_train, bit for bit. */
hog_status hog_serial_train_stream(struct hog_fit *f, hog_err *err);

/* Hogwild! (Niu, Recht, Ré, Wright 2011) and its locked baselines on a
 * pinned thread pool, with optional model replicas (hogwild.c). With one
 * thread and shared weights the model is bit-identical to
 * hog_serial_train's in every update mode. */
hog_status hog_hogwild_train(struct hog_fit *f, hog_err *err);
/* Hogwild! over f->stream (hogwild_stream.c): each window of chunks is
 * trained by all threads on one shared model while the next one is read.
 * Update modes as hog_hogwild_train; replicas are refused. */
hog_status hog_hogwild_train_stream(struct hog_fit *f, hog_err *err);

struct hog_topo;
struct hog_pool;
/* The pool o asks for (binding, SMT, oversubscription, threads). */
hog_status hog_hogwild_make_pool(const hog_train_opts *o,
                                 struct hog_topo **topo,
                                 struct hog_pool **pool, hog_err *err);
/* Checkpoint state of an SGD trainer (sgd_state.c). capture fills st
 * (arrays malloc'd; hog_train_state_free) from s at step seg_pos of the
 * open segment (0: at a segment boundary), leaving s as it was; restore
 * puts st's weights, sums and timestamps into s, whose segment the caller
 * has rebuilt with hog_sgd_segment_begin(st->seg_t0, st->seg_want). */
struct hog_sgd;
hog_status hog_sgd_state_capture(struct hog_sgd *s, uint32_t seg_pos,
                                 struct hog_train_state *st, hog_err *err);
hog_status hog_sgd_state_restore(struct hog_sgd *s,
                                 const struct hog_train_state *st,
                                 hog_err *err);
void hog_train_state_free(struct hog_train_state *st);

#endif
