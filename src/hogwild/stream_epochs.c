/*
 * The epoch order of the streamed trainers (serial, softmax, Hogwild!),
 * as the epoch driver's draw (core/drive.h): each epoch's chunk sequence
 * goes into the stream's queue with the next epoch's behind it, so that
 * the next epoch's first reads start as soon as this epoch's last buffers
 * come back. The sequences alternate between the two halves of the
 * order's buffer (hog_stream_order_epoch), so this epoch's stays valid
 * while the next one is drawn.
 */
#include "hogwild/hogwild.h"

#include <string.h>

hog_status hog_stream_epochs_init(struct hog_stream_epochs *e,
                                  const struct hog_fit *f, hog_err *err)
{
    memset(e, 0, sizeof *e);
    e->s = f->stream;
    e->epochs = f->o->epochs;
    const struct hog_hgb_info *in = hog_stream_info(e->s);
    uint64_t W = hog_stream_window(e->s);
    hog_status st = hog_stream_win_init(&e->win, W, err);
    if (st == HOG_OK)
        st = hog_stream_order_init(&e->ord, in, W, f->o->seed, err);
    return st;
}

void hog_stream_epochs_free(struct hog_stream_epochs *e)
{
    if (e->win.c)
        hog_stream_win_release(e->s, &e->win);
    hog_stream_win_free(&e->win);
    hog_stream_order_free(&e->ord);
}

hog_status hog_stream_epochs_draw(struct hog_stream_epochs *e,
                                  unsigned epoch, hog_err *err)
{
    const uint64_t nc = e->ord.in->n_chunks;
    hog_status st = HOG_OK;
    if (!e->next) { /* the first epoch: nothing queued yet */
        e->seq = hog_stream_order_epoch(&e->ord);
        st = hog_stream_push(e->s, e->seq, nc, err);
    } else {
        e->seq = e->next;
    }
    e->next = NULL;
    if (st == HOG_OK && epoch < e->epochs) {
        e->next = hog_stream_order_epoch(&e->ord);
        st = hog_stream_push(e->s, e->next, nc, err);
    }
    return st;
}
