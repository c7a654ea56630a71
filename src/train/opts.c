/*
 * The options a caller hands in, completed where an older, shorter struct
 * stops and resolved (options.c holds the defaults).
 */
#include "train/train.h"

#include <string.h>

hog_status hog_train_opts_take(const hog_train_opts *user,
                               const hog_train_hooks *h, hog_train_opts *o,
                               hog_err *err)
{
    if (!user || user->size == 0 || user->size > sizeof(hog_train_opts))
        return hog_errf(err, HOG_EINVAL,
                        "the training options were not set up with "
                        "hog_train_opts_init()");
    hog_train_opts_init(o);
    memcpy(o, user, user->size);
    o->size = sizeof *o;
    return hog_train_opts_resolve(o, h, err);
}
