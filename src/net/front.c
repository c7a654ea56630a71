/*
 * net's backend-independent front: the options' defaults, and the hog_net_*
 * entry points, which go through the backend's table (struct hog_net_ops;
 * a NULL slot is HOG_ENOTSUP with a sentence). Which backend a group has
 * is chosen by its opening: hog_net_open_tcp() (rendezvous.c) or
 * hog_net_open_mpi() (mpi.c, or nompi.c without MPI).
 */
#include "net/net.h"

#include <stdint.h>
#include <string.h>

void hog_net_opts_init(struct hog_net_opts *o)
{
    memset(o, 0, sizeof *o);
    o->world = 1;
    o->connect_timeout = 60;
    o->timeout = 60;
}

unsigned hog_net_world(const hog_net *n) { return n->world; }
unsigned hog_net_rank(const hog_net *n) { return n->rank; }
const char *hog_net_backend(const hog_net *n) { return n->ops->name; }

hog_status hog_net_allreduce_sum(hog_net *n, float *buf, size_t len,
                                 hog_err *err)
{
    if (!n->ops->sum_f32)
        return hog_errf(err, HOG_ENOTSUP, "the %s backend has no sum",
                        n->ops->name);
    return n->ops->sum_f32(n, buf, len, err);
}

hog_status hog_net_allreduce_sum_f64(hog_net *n, double *buf, size_t len,
                                     hog_err *err)
{
    if (!n->ops->sum_f64)
        return hog_errf(err, HOG_ENOTSUP, "the %s backend has no sum of "
                        "doubles", n->ops->name);
    return n->ops->sum_f64(n, buf, len, err);
}

hog_status hog_net_reduce(void *ctx, double *buf, uint64_t n, hog_err *err)
{
    if (n > SIZE_MAX)
        return hog_errf(err, HOG_ERANGE, "%llu values are too many for one "
                        "all-reduce", (unsigned long long)n);
    return hog_net_allreduce_sum_f64(ctx, buf, (size_t)n, err);
}

hog_status hog_net_allreduce_max(hog_net *n, uint64_t *buf, size_t len,
                                 hog_err *err)
{
    if (!n->ops->max_u64)
        return hog_errf(err, HOG_ENOTSUP, "the %s backend has no maximum",
                        n->ops->name);
    return n->ops->max_u64(n, buf, len, err);
}

void hog_net_close(hog_net *n)
{
    if (n)
        n->ops->close(n);
}
