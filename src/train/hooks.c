/* The caller's hooks (hog_train_hooks): its callbacks, and the stats it
 * asks for (cyclades_stats, hot_stats, stream_stats, valid_stats,
 * auto_stats). The algorithms fill whole structs of the library's own;
 * the front door hands back the fields within each caller's size, so a
 * caller built against an older, shorter struct gets its prefix and
 * nothing past it (include/hogtrain.h). */
#include "train/train.h"

#include <string.h>

hog_status hog_train_hooks_take(const hog_train_hooks *user,
                                hog_train_hooks *h, hog_err *err)
{
    if (user)
        return hog_out_take(h, user, sizeof *h, "hog_train_hooks", err);
    memset(h, 0, sizeof *h);
    h->size = sizeof *h;
    return HOG_OK;
}

hog_status hog_train_outs_take(hog_train_hooks *h, struct hog_train_outs *t,
                               hog_err *err)
{
    memset(t, 0, sizeof *t);
    t->cyc_to = h->cyclades_stats;
    t->hot_to = h->hot_stats;
    t->stream_to = h->stream_stats;
    t->valid_to = h->valid_stats;
    t->autos_to = h->auto_stats;
    hog_status st = HOG_OK;
    if (t->autos_to)
        st = hog_out_take(&t->autos, t->autos_to, sizeof t->autos,
                          "hog_auto_stats", err);
    if (t->cyc_to && st == HOG_OK)
        st = hog_out_take(&t->cyc, t->cyc_to, sizeof t->cyc,
                          "hog_cyclades_stats", err);
    if (t->hot_to && st == HOG_OK)
        st = hog_out_take(&t->hot, t->hot_to, sizeof t->hot, "hog_hot_stats",
                          err);
    if (t->stream_to && st == HOG_OK)
        st = hog_out_take(&t->stream, t->stream_to, sizeof t->stream,
                          "hog_stream_stats", err);
    if (t->valid_to && st == HOG_OK)
        st = hog_out_take(&t->valid, t->valid_to, sizeof t->valid,
                          "hog_valid_stats", err);
    if (st != HOG_OK)
        return st;
    /* the copies stand in for the caller's wherever the library writes */
    if (t->cyc_to)
        h->cyclades_stats = &t->cyc;
    if (t->hot_to)
        h->hot_stats = &t->hot;
    if (t->stream_to)
        h->stream_stats = &t->stream;
    if (t->valid_to)
        h->valid_stats = &t->valid;
    /* always the front door's own, and out only (nothing of the
     * caller's read): validation reads whether auto chose */
    memset(&t->autos, 0, sizeof t->autos);
    t->autos.size = sizeof t->autos;
    h->auto_stats = &t->autos;
    return HOG_OK;
}

void hog_train_outs_give(const struct hog_train_outs *t)
{
    if (t->cyc_to)
        hog_out_give(t->cyc_to, &t->cyc, sizeof t->cyc);
    if (t->hot_to)
        hog_out_give(t->hot_to, &t->hot, sizeof t->hot);
    if (t->stream_to)
        hog_out_give(t->stream_to, &t->stream, sizeof t->stream);
    if (t->valid_to)
        hog_out_give(t->valid_to, &t->valid, sizeof t->valid);
    if (t->autos_to)
        hog_out_give(t->autos_to, &t->autos, sizeof t->autos);
}
