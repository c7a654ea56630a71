/*
 * Serial SGD, the reference every parallel trainer is measured against.
 *
 * Minimises (1/n) sum_i loss(y_i, w.x_i + b) + l2/2 |w|^2 + l1 |w|_1 by
 * plain stochastic (proximal) gradient steps, one row at a time, rows in a
 * fresh seeded permutation each epoch (Bottou, "Stochastic gradient descent
 * tricks", 2012). The update and the lazy regularization that keeps each
 * step O(nnz of the row) are in src/core/sgd.c.
 */
#include "hogwild/hogwild.h"

#include "core/sgd.h"

#include <stdlib.h>

hog_status hog_serial_train(struct hog_fit *f, hog_err *err)
{
    const hog_data *d = f->train;
    const hog_train_opts *o = f->o;
    uint64_t n = d->m.rows;

    struct hog_sgd s;
    hog_status st = hog_sgd_init(&s, o, d, err);
    if (st != HOG_OK)
        return st;
    uint64_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!order) {
        hog_sgd_free(&s);
        return hog_errf(err, HOG_ENOMEM,
                        "out of memory for the order of %llu rows",
                        (unsigned long long)n);
    }
    for (uint64_t i = 0; i < n; i++)
        order[i] = i;
    struct hog_rng rng;
    hog_rng_seed(&rng, o->seed, 0);

    uint64_t t_global = 0;
    for (unsigned epoch = 1; epoch <= o->epochs && st == HOG_OK; epoch++) {
        double t0 = hog_now();
        hog_shuffle_u64(&rng, order, n);
        uint64_t done = 0;
        while (done < n) {
            uint64_t left = n - done;
            uint32_t len = hog_sgd_segment_begin(
                &s, t_global, left < UINT32_MAX ? (uint32_t)left : UINT32_MAX);
            for (uint32_t i = 0; i < len;) {
                uint32_t blk = len - i < HOG_SGD_BLOCK ? len - i
                                                       : HOG_SGD_BLOCK;
                hog_sgd_run(&s, d, order + done + i, blk, i, 1);
                i += blk;
                f->tick(f, epoch, done + i, n);
            }
            hog_sgd_segment_end(&s, len);
            t_global += len;
            done += len;
        }
        hog_sgd_copy_weights(&s, f->model->w);
        st = f->epoch_end(f, epoch, hog_now() - t0, err);
    }
    free(order);
    hog_sgd_free(&s);
    return st;
}
