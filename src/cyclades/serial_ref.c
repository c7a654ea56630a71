/*
 * The serial reference of Cyclades without hot features, for tests: the
 * rows in the order Cyclades visits them (its permutations, batches and
 * batch order, hog_cyc_next_order), one at a time through the plain
 * kernel (hog_sgd_run) as the serial trainer runs them, segment by
 * segment. hog_cyclades_train with hot = 0 must give its model bit for
 * bit, at every thread count, and with a progress callback its
 * progressive figures (each row scored before its step, summed in this
 * order).
 */
#include "cyclades/internal.h"

#include <stdlib.h>

#define REF_BLOCK 4096u

hog_status hog_cyclades_train_reference(struct hog_fit *f, bool softmax,
                                        hog_err *err)
{
    if (f->o->cyclades_hot_degree)
        return hog_errf(err, HOG_EINVAL,
                        "the serial reference of Cyclades needs hot = 0");
    struct cyc c;
    struct hog_softmax_work kw = { 0 };
    uint64_t *order = NULL;
    hog_status st = hog_cyc_prepare(&c, f, false, softmax, err);
    if (st != HOG_OK ||
        (softmax && (st = hog_softmax_work_init(&kw, &c.km, c.d, err)) !=
                        HOG_OK))
        goto out;
    c.km.tally = softmax && c.f->hooks.progress;
    uint64_t n = c.n;
    if (!(order = malloc(n * sizeof *order))) {
        st = hog_errf(err, HOG_ENOMEM, "out of memory for the row order");
        goto out;
    }
    struct hog_rng rows, batches;
    hog_rng_seed(&rows, c.o->seed, 0);
    hog_rng_seed(&batches, c.o->seed, 1);
    uint64_t t_global = 0;
    for (unsigned epoch = 1; epoch <= c.o->epochs && st == HOG_OK; epoch++) {
        double t0 = hog_now();
        hog_cyc_next_order(&c, &rows, &batches, epoch);
        uint64_t k = 0;
        for (uint64_t bi = 0; bi < c.nb; bi++) {
            uint64_t lo = c.visit[bi] * c.B, hi = min_u64(lo + c.B, n);
            for (uint64_t p = lo; p < hi; p++)
                order[k++] = c.perm[p];
        }
        struct hog_sgd_tally tally = { 0 };
        struct hog_sgd_tally *tl = c.f->hooks.progress ? &tally : NULL;
        for (uint64_t done = 0; done < n;) {
            uint64_t left = n - done;
            uint32_t len = hog_sgd_segment_begin(
                &c.s, t_global,
                left < UINT32_MAX ? (uint32_t)left : UINT32_MAX);
            for (uint32_t i = 0; i < len;) {
                uint32_t blk = len - i < REF_BLOCK ? len - i : REF_BLOCK;
                if (softmax)
                    hog_softmax_run(&c.km, false, &kw, c.d, c.cls,
                                    order + done + i, blk, i, 1);
                else
                    hog_sgd_run_tally(&c.s, c.d, order + done + i, blk, i, 1,
                                      HOG_UPDATE_NONE, NULL, tl);
                i += blk;
            }
            if (softmax)
                hog_softmax_end(&c.km, false, kw.buf, 0, c.km.nw, len);
            else
                hog_sgd_segment_end(&c.s, len);
            t_global += len;
            done += len;
        }
        if (softmax) {
            hog_softmax_model_slice(&c.km, f->model->w, 0, c.km.nw);
            hog_sgd_tally_report(f, &c.s, &kw.tally);
            kw.tally = (struct hog_sgd_tally){ 0 };
        } else {
            hog_sgd_copy_weights(&c.s, f->model->w);
            hog_sgd_tally_report(f, &c.s, &tally);
        }
        st = f->epoch_end(f, epoch, hog_now() - t0, err);
    }
out:
    hog_softmax_work_free(&kw);
    free(order);
    hog_cyc_free(&c);
    return st;
}
