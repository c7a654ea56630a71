/*
 * The front door's side of checkpoints (checkpoint.c): loading and checking
 * a checkpoint to resume from, and the save hook the algorithms call
 * (core/fit.h). The file format is src/io/checkpoint.c.
 */
#ifndef HOG_TRAIN_CHECKPOINT_H
#define HOG_TRAIN_CHECKPOINT_H

#include "io/io.h"

struct hog_ckpt_ctx {
    struct hog_ckpt resume;   /* loaded when o->resume */
    bool loaded;
    uint32_t data_crc;
    bool have_last;           /* a checkpoint of this run is on disk: */
    bool last_resumed;        /* the one resumed from, or one written */
    uint64_t last_epoch, last_pos;
};

/* Sets f's checkpoint fields from f->o: loads and checks o->resume against
 * the options and the data. hog_train_ckpt_end frees what it holds. */
hog_status hog_train_ckpt_begin(struct hog_fit *f, struct hog_ckpt_ctx *cx,
                                hog_err *err);
void hog_train_ckpt_end(struct hog_ckpt_ctx *cx);

#endif
