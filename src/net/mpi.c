/*
 * The MPI backend: the same averaging interface over MPI_Allreduce on
 * MPI_COMM_WORLD. Built only where mpicc is found (the Makefile swaps in
 * nompi.c otherwise). World and rank come from mpirun; the rendezvous,
 * authentication and fault handling are the MPI library's (Open MPI stops
 * the whole job when a rank dies).
 *
 * Bit-identical sums on every rank: Open MPI's all-reduce algorithms
 * (ring, Rabenseifner, recursive doubling) either compute each sum once
 * and copy it, or compute a + b and b + a, which IEEE addition makes equal;
 * tests/test_net.sh checks it on loopback.
 */
#include "net/net.h"

#include <limits.h>
#include <mpi.h>
#include <stdlib.h>

struct mpinet {
    struct hog_net base;
    int we_init;
};

bool hog_net_have_mpi(void) { return true; }

bool hog_net_under_mpirun(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") ||
           getenv("PMIX_RANK");
}

static hog_status mpi_fail(int rc, const char *what, hog_err *err)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    return hog_errf(err, HOG_ENET, "%s: %.*s", what, len, msg);
}

/* MPI_Allreduce in place, in pieces of at most INT_MAX elements (its
 * count is an int). */
static hog_status mpi_allreduce(void *buf, size_t len, size_t elem,
                                MPI_Datatype type, MPI_Op op, hog_err *err)
{
    char *p = buf;
    while (len) {
        int k = len > INT_MAX ? INT_MAX : (int)len;
        int rc = MPI_Allreduce(MPI_IN_PLACE, p, k, type, op, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS)
            return mpi_fail(rc, "MPI_Allreduce", err);
        p += (size_t)k * elem;
        len -= (size_t)k;
    }
    return HOG_OK;
}

static hog_status mpi_sum(hog_net *n, float *buf, size_t len, hog_err *err)
{
    (void)n;
    return mpi_allreduce(buf, len, sizeof *buf, MPI_FLOAT, MPI_SUM, err);
}

static hog_status mpi_sum_f64(hog_net *n, double *buf, size_t len,
                              hog_err *err)
{
    (void)n;
    return mpi_allreduce(buf, len, sizeof *buf, MPI_DOUBLE, MPI_SUM, err);
}

static hog_status mpi_max(hog_net *n, uint64_t *buf, size_t len, hog_err *err)
{
    (void)n;
    return mpi_allreduce(buf, len, sizeof *buf, MPI_UINT64_T, MPI_MAX, err);
}

static void mpi_close(hog_net *n)
{
    struct mpinet *m = (struct mpinet *)n;
    int fin = 0;
    if (m->we_init && MPI_Finalized(&fin) == MPI_SUCCESS && !fin)
        MPI_Finalize();
    free(m);
}

static const struct hog_net_ops mpi_ops = { "mpi", mpi_sum, mpi_sum_f64,
                                            mpi_max, mpi_close };

hog_status hog_net_open_mpi(const struct hog_net_opts *o, hog_net **out,
                            hog_err *err)
{
    (void)o;
    *out = NULL;
    struct mpinet *m = calloc(1, sizeof *m);
    if (!m)
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    int init = 0, rc;
    MPI_Initialized(&init);
    if (!init) {
        if ((rc = MPI_Init(NULL, NULL)) != MPI_SUCCESS) {
            free(m);
            return mpi_fail(rc, "MPI_Init", err);
        }
        m->we_init = 1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int size = 1, rank = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    m->base.ops = &mpi_ops;
    m->base.world = (unsigned)size;
    m->base.rank = (unsigned)rank;
    *out = &m->base;
    return HOG_OK;
}
