/* The MPI backend where the build has no MPI (mpicc was not found). */
#include "net/net.h"

#include <stdlib.h>

bool hog_net_have_mpi(void) { return false; }

bool hog_net_under_mpirun(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") ||
           getenv("PMIX_RANK");
}

hog_status hog_net_open_mpi(const struct hog_net_opts *o, hog_net **out,
                            hog_err *err)
{
    *out = NULL;
    return hog_errf(err, HOG_ENOTSUP, "this hogtrain was built without MPI "
                    "(mpicc was not found; install libopenmpi-dev and "
                    "rebuild), use the TCP layer (--world, --rank, "
                    "--coordinator)");
}
