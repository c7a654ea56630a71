/*
 * hog_train() in memory, once its options are taken, the holdout split
 * and C resolved: the options checked against the data, then the row
 * weights' view of the data, the model, the warm start and the
 * algorithm, around the front door's hooks (epoch.c) and checkpoints.
 */
#include "train/train.h"

#include "train/checkpoint.h"

#include "core/fit.h"
#include "gpu/gpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

hog_status hog_train_check(const hog_data *train, const hog_data *test,
                           const hog_train_opts *o, const hog_train_hooks *h,
                           hog_err *err)
{
    hog_status st;
    if ((st = hog_train_validate(o, h, train, err)) != HOG_OK)
        return st;
    /* a test or validation set is scored as the model will be: crossed
     * as the training rows are */
    const hog_data *other[] = { test, o->validation };
    for (int i = 0; i < 2; i++)
        if (other[i] && (other[i]->cross.n != train->cross.n ||
                         memcmp(other[i]->cross.term, train->cross.term,
                                sizeof train->cross.term) != 0))
            return hog_errf(err, HOG_EINVAL,
                            "the %s set was loaded with other interactions "
                            "than the training set; load both with the "
                            "same (hog_load_opts.interactions)",
                            i ? "validation" : "test");
    return HOG_OK;
}

hog_status hog_train_run(const hog_data *train, const hog_data *test,
                         const hog_train_opts *op, const hog_train_hooks *h,
                         hog_model **out, hog_err *err)
{
    const hog_train_opts o = *op;
    hog_status st;
    const bool gpu = hog_train_gpu_replicas(&o);
    const struct hog_algo_row *row = hog_algo_row(o.algo);

    /* Row and class weights, combined once; the algorithms and the
     * training-set metrics see them on this view of the data. */
    float *rw;
    if ((st = hog_train_row_weights(&o, train, &rw, err)) != HOG_OK)
        return st;
    hog_data view;
    if (rw) {
        view = *train;
        memset(view.mem, 0, sizeof view.mem); /* train owns its arrays */
        memset(view.mem_len, 0, sizeof view.mem_len);
        view.release = NULL;
        view.row_w = rw;
    }
    const hog_data *data = rw ? &view : train;

    hog_model *m;
    if ((st = hog_train_new_model(train, &o, &m, err)) != HOG_OK) {
        free(rw);
        return st;
    }
    const float *init;
    if ((st = hog_train_warm_weights(&o, m, &init, err)) != HOG_OK) {
        free(rw);
        return hog_train_hand_out(st, m, out);
    }
    if (init && o.epochs == 0) { /* no step: the model given */
        memcpy(m->w, init, hog_model_len(m) * sizeof *m->w);
        free(rw);
        return hog_train_hand_out(HOG_OK, m, out);
    }

    struct hog_front c;
    struct hog_fit f = { .train = data, .o = &o, .hooks = *h, .model = m,
                         .init = init,
                         .epoch_end = hog_train_epoch_end,
                         .tick = hog_train_tick, .ctx = &c,
                         .replica_syncs = 0, .gap = NAN, .aux_bytes = 0,
                         .objective = NAN, .mean_loss = NAN,
                         .prog_loss = NAN, .prog_accuracy = NAN };
    /* GPUs asked for: the exact solvers run their products there, for
     * every other o.algo the GPU replicas train in its place. */
    if (hog_gpu_requested(&o) && !gpu)
        f.products = &hog_gpu_products;
    struct hog_ckpt_ctx ck;
    struct hog_train_state warm;
    if ((st = hog_train_front_begin(&c, &f, test, err)) != HOG_OK ||
        (st = hog_train_state_begin(&f, &warm, err)) != HOG_OK) {
        free(rw);
        hog_model_free(m);
        return st;
    }
    st = hog_train_ckpt_begin(&f, &ck, err);
    if (st == HOG_OK)
        st = gpu             ? hog_gpu_train(&f, err)
             : !m->n_classes ? row->run(&f, err)
             : m->multiclass == HOG_MULTICLASS_SOFTMAX
                 ? row->softmax(&f, err)
                 : hog_train_ovr(&f, row, &c.ovr, err);
    hog_train_ckpt_end(&ck);
    st = hog_train_front_end(&c, st, &f, train->m.rows);
    free(rw);
    return hog_train_hand_out(st, m, out);
}
