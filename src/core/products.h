/*
 * The exact solvers' products with the training rows, X v and X^T c, on
 * devices: a table of functions the front door (src/train) hands the
 * solvers through struct hog_fit when --gpus asks for devices, so that
 * src/newton never includes src/gpu (gpu/gpu.h's hog_gpu_products is the
 * one table today). Without one the solvers run the products over their
 * row blocks on the CPUs (newton.h).
 */
#ifndef HOG_PRODUCTS_H
#define HOG_PRODUCTS_H

#include "core/core.h"

struct hog_products;

struct hog_products_ops {
    /* m's rows on the devices o->gpus names, with the bias (when not 0) a
     * column of value bias after the nf features: nw = nf + (bias != 0)
     * columns. The rows stay there until close. HOG_ENOTSUP with the
     * device's or the plugin's sentence where there is none. */
    hog_status (*open)(const struct hog_csr *m, uint64_t nf, double bias,
                       const hog_train_opts *o, struct hog_products **out,
                       hog_err *err);
    /* t = X v: m->rows doubles from nw. */
    hog_status (*xv)(struct hog_products *p, const double *v, double *t,
                     hog_err *err);
    /* out = X^T c, or (X.*X)^T c with squares (the Hessian's diagonal):
     * nw doubles from m->rows; the devices' partials added in the fixed
     * order of their shards. */
    hog_status (*xtc)(struct hog_products *p, const double *c, bool squares,
                      double *out, hog_err *err);
    /* Host memory held (the staging of the vectors). */
    uint64_t (*bytes)(const struct hog_products *p);
    void (*close)(struct hog_products *p);
};

#endif
