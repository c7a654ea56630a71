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

#endif
