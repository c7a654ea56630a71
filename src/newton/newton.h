/*
 * newton: exact primal solvers whose data work is nothing but products
 * with the data matrix X (rows x_i, the bias a constant column):
 *
 *   X v      one dot product per row, each row writing its own result;
 *   X^T u    sum_i u_i x_i, accumulated per FIXED block of rows into the
 *            block's own partial vector and reduced block 0, 1, 2, ...
 *
 * The blocks are cut from the data alone (about HOG_NEWTON_BLOCK_NNZ
 * nonzeros each), never from the thread count, and every sum runs in an
 * order that depends on the blocks only: the model is the same bit for bit
 * at every --threads. The same pass serves GPUs (device.c: with
 * hog_fit.products, X v and X^T c run there as SpMV on resident shards,
 * the rows' coefficients here), and several processes: with hog_train_opts.reduce each pass's
 * results (the vector and the running sum) are added over the ranks by
 * one all-reduce, which leaves the same bits on every rank, so every rank
 * takes the same steps on replicated weights (docs/SCALEOUT.md, "Exact
 * solving").
 *
 * The solvers' work over the nw weights (dots, axpys, norms) runs on the
 * same pool over FIXED ranges of HOG_NEWTON_VEC_RANGE weights (vec.c), each
 * range's partial sums in its own slot, added range 0, 1, 2, ...: the same
 * bits at every thread count, for the vectors as for the products.
 *
 * tron.c: trust-region Newton with preconditioned conjugate gradients
 * (LIBLINEAR -s 0 and -s 2, and least squares) on these products;
 * lbfgs.c: L-BFGS on the same losses, OWL-QN when l1 > 0 (LIBLINEAR -s 6's
 * problem); solver.c: what the two share.
 */
#ifndef HOG_NEWTON_H
#define HOG_NEWTON_H

#include "core/fit.h"
#include "core/products.h"
#include "core/sparse.h"
#include "pool/pool.h"

/* Trust-region Newton (tron.c): L2-regularised logistic, squared hinge or
 * squared loss; stops on LIBLINEAR's relative gradient norm (o->tol) or
 * after o->epochs Newton iterations. */
hog_status hog_newton_train(struct hog_fit *f, hog_err *err);

/* L-BFGS, or OWL-QN when l1 > 0 (lbfgs.c): logistic, squared hinge or
 * squared loss with L1 and/or L2; stops on LIBLINEAR's -e rule (o->tol)
 * or after o->epochs iterations. */
hog_status hog_lbfgs_train(struct hog_fit *f, hog_err *err);

/* ---- the products (blocks.c) ------------------------------------------- */

/* Nonzeros per block: a block's partial X^T u is reduced with one pass
 * over the features its rows touch, so blocks much smaller than this pay
 * for the reduction more than for the product; much larger ones leave a
 * thread count above nnz / HOG_NEWTON_BLOCK_NNZ idle. */
#define HOG_NEWTON_BLOCK_NNZ 65536u

/* What a pass does with row i once its product t = x_i . v is known
 * (0 when the pass was given no v): returns the coefficient c_i of x_i in
 * the pass's X^T c (ignored without one) and may add to *acc, the block's
 * running sum, which the pass returns summed in block order. Called for
 * the rows of a block in order, by the block's worker. */
typedef double (*hog_newton_row_fn)(void *ctx, uint64_t i, double t,
                                    double *acc);

struct hog_newton_blocks {
    const struct hog_csr *m;
    uint64_t nf;         /* feature columns; the bias is column nf */
    double bias;         /* 0: no bias column */
    uint64_t nw;         /* nf + (bias != 0) */
    uint64_t nb;         /* blocks */
    uint64_t *row0;      /* nb + 1: first row of each block */
    uint64_t *feat0;     /* nb + 1: each block's start in feat and part */
    uint32_t *feat;      /* per block, increasing: the features it touches */
    uint32_t *lidx;      /* m->nnz: each entry's position in its block's feat */
    double *part;        /* per block: its partial X^T c, by feat */
    double *part_bias;   /* nb: the bias column's partial */
    double *acc;         /* nb: the blocks' running sums */
    uint64_t *cut;       /* threads + 1: each worker's features to reduce */
    uint32_t *cursor;    /* threads x nb: the reduction's place in each
                            block's list, a row per worker */
    uint64_t nr;         /* weight ranges of HOG_NEWTON_VEC_RANGE (vec.c) */
    double *vsum;        /* nr x HOG_NEWTON_VEC_SUMS: the ranges' sums */
    size_t bytes;        /* memory of the above */
    struct hog_topo *topo;
    struct hog_pool *pool; /* NULL with one thread: jobs run on the caller */
    unsigned threads;
    /* Across processes (hog_newton_open): every pass's results and the
     * counts below are sums over the ranks; reduce NULL: one process. */
    hog_reduce_fn reduce;
    void *reduce_ctx;
    double *red;         /* nw + 1: a pass's results on their way */
    uint64_t rows, pos;  /* every rank's rows, and those with y > 0 */
    /* The first failed reduction's status and sentence; from then on
     * every pass does nothing and answers NaN, so that the solver's loops
     * end, and hog_newton_report returns it. */
    hog_status st;
    hog_err err;
    /* The products on devices (device.c; hog_newton_open with
     * f->products): every pass runs X v and X^T c there, and the rows'
     * coefficients here over fixed ranges of HOG_NEWTON_DEV_ROWS rows;
     * the blocks' arrays above are then not read by any pass. */
    const struct hog_products_ops *dev_ops;
    struct hog_products *dev;
    double *dev_t;       /* rows: the products t_i, then the c_i */
    double *dev_acc;     /* per range: the running sum */
    uint64_t dev_ranges;
};

/* Cuts m into blocks, opens the pool (threads 1: none) and lists each
 * block's features on it. HOG_ENOMEM with a sentence; HOG_ERANGE when nf
 * or one block's nonzeros pass 2^32. */
hog_status hog_newton_blocks_open(struct hog_newton_blocks *b,
                                  const struct hog_csr *m, uint64_t nf,
                                  double bias, unsigned threads, hog_err *err);
void hog_newton_blocks_close(struct hog_newton_blocks *b);

/* One pass over every row: t_i = x_i . v (v NULL: t_i = 0), c_i =
 * fn(ctx, i, t_i, acc); with out (nw doubles) out = sum_i c_i x_i, or
 * sum_i c_i x_i^2 elementwise when squares (the Hessian's diagonal).
 * Returns the blocks' sums of acc, added in block order. With b->reduce,
 * out and the sum are then added over the ranks (one all-reduce); after a
 * failed one (b->st) they are NaN. */
double hog_newton_pass(struct hog_newton_blocks *b, const double *v,
                       hog_newton_row_fn fn, void *ctx, double *out,
                       bool squares);

/* ---- the products on devices (device.c) --------------------------------- */

/* Rows per range of the rows' coefficients on the host: each range's sum
 * in its own slot, added range 0, 1, 2, ...: the same bits at every
 * thread count, as for the blocks. */
#define HOG_NEWTON_DEV_ROWS 4096u

/* The rows of b on the devices ops opens from o (--gpus); HOG_ENOTSUP
 * with the device's sentence where there is none. */
hog_status hog_newton_dev_open(struct hog_newton_blocks *b,
                               const struct hog_products_ops *ops,
                               const hog_train_opts *o, hog_err *err);
void hog_newton_dev_close(struct hog_newton_blocks *b);
/* hog_newton_pass on the devices (before the reduction over the ranks);
 * a device's failure goes to b->st and b->err and the answer is NaN. */
double hog_newton_dev_pass(struct hog_newton_blocks *b, const double *v,
                           hog_newton_row_fn fn, void *ctx, double *out,
                           bool squares);

/* ---- the vectors (vec.c) ---------------------------------------------- */

/* Weights per range: 128 KiB of each vector, enough to pay for a pool
 * wake-up at a few ranges per thread, and news20.binary's 1.35M weights
 * still make 83 ranges to share. Fixed, so the sums never depend on the
 * thread count. */
#define HOG_NEWTON_VEC_RANGE 16384u
/* Below this many ranges the vector work stays on the caller: a pool
 * wake-up costs more than the loop. */
#define HOG_NEWTON_VEC_POOL_RANGES 4u
/* The most sums one vector pass returns. */
#define HOG_NEWTON_VEC_SUMS 4

/* Does a pass's work on the weights [lo, hi), adding its partial sums
 * into sum (zeroed, HOG_NEWTON_VEC_SUMS of them) in index order. */
typedef void (*hog_newton_vec_fn)(void *ctx, uint64_t lo, uint64_t hi,
                                  double *sum);

/* fn over every range of [0, b->nw); sum (HOG_NEWTON_VEC_SUMS doubles, or
 * NULL) gets the ranges' sums added in range order. */
void hog_newton_vec(struct hog_newton_blocks *b, hog_newton_vec_fn fn,
                    void *ctx, double *sum);

/* ---- what the solvers share (solver.c) --------------------------------- */

/* The blocks of f's training rows (hog_newton_blocks_open with f's
 * options), with f->o->reduce as their reduction across processes. */
hog_status hog_newton_open(struct hog_newton_blocks *b,
                           const struct hog_fit *f, hog_err *err);

/* y[i]: the loss's target of f's training row i. */
void hog_newton_targets(const struct hog_fit *f, hog_loss loss, double *y);

/* b->rows and b->pos from y, this rank's n targets, summed over the ranks
 * (the n of C = 1 / (l2 n) and the counts of the -e rule are the whole
 * data's). */
hog_status hog_newton_count(struct hog_newton_blocks *b, const double *y,
                            uint64_t n, hog_err *err);

/* LIBLINEAR's -e rule as a share of the first gradient's norm: tol
 * max(min(pos, neg), 1) / n for classification (its primal_solver_tol),
 * tol for regression; b->rows and b->pos as hog_newton_count left them. */
double hog_newton_rel_tol(const struct hog_newton_blocks *b, hog_loss loss,
                          double tol);

/* One iteration's end, as the front door hears it. */
struct hog_newton_iter {
    const char *solver;  /* "Newton", "L-BFGS": in the cancel sentence */
    const double *w;     /* the weights, b->nw of them */
    unsigned epoch;
    double secs;
    double objective;    /* F(w), the front door's scale */
    double mean_loss;
    bool stop;           /* the solver stops after this iteration */
    bool converged;      /* ... because its stopping rule holds */
};

/* The weights into f's model and the epoch to f->epoch_end; HOG_EINTR with
 * a sentence when the run was cancelled before its last iteration. */
hog_status hog_newton_report(struct hog_fit *f, struct hog_newton_blocks *b,
                             const struct hog_newton_iter *it, hog_err *err);

#endif
