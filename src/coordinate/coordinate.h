/*
 * coordinate: stochastic coordinate descent, primal (scd.c, over columns)
 * and dual (dcd.c, over rows), run asynchronously on the pinned pool.
 *
 * Both solve the front door's objective
 *
 *     F(w) = (1/n) sum_i loss(y_i, w.x_i) + l2/2 |w|^2 + l1 |w|_1
 *
 * (the bias a weight like the others when opts.bias != 0). Dividing by
 * l2 (dcd) gives LIBLINEAR's  1/2 |w|^2 + C sum_i loss  with C = 1/(l2 n);
 * dividing by l1 (scd, L1) gives  |w|_1 + C sum_i loss  with C = 1/(l1 n).
 * docs/COORDINATE.md has the mapping and the stopping rules.
 *
 * The shared vectors (dcd's w, scd's w and margins) are doubles touched
 * only through the relaxed atomics of core/sparse.h (hog_d_*).
 */
#ifndef HOG_COORDINATE_H
#define HOG_COORDINATE_H

#include "core/fit.h"
#include "core/sparse.h"
#include "pool/pool.h"

/* Primal stochastic coordinate descent (shotgun-parallel): squared loss
 * (Lasso, ridge, elastic net) and logistic loss with L1 and/or L2. */
hog_status hog_scd_train(struct hog_fit *f, hog_err *err);

/* Dual coordinate descent (PASSCoDe-parallel): hinge, squared hinge and
 * logistic loss with L2 (l2 > 0, l1 = 0). */
hog_status hog_dcd_train(struct hog_fit *f, hog_err *err);

/* ---- the objective of any model -------------------------------------------- */

/* F(w) of model m on d for the given loss and strengths (the model's own
 * weights and bias), and the same objective in LIBLINEAR's scale:
 *   l1 = 0, l2 > 0:  1/2 |w|^2 + C sum loss, C = 1/(l2 n), = F / l2;
 *   l2 = 0, l1 > 0:  |w|_1 + C sum loss,     C = 1/(l1 n), = F / l1;
 * NaN (and C NaN) otherwise. */
struct hog_objective {
    double value;      /* F(w) */
    double mean_loss;  /* (1/n) sum loss */
    double reg;        /* l2/2 |w|^2 + l1 |w|_1 */
    double C;          /* LIBLINEAR's C for this problem */
    double liblinear;  /* the objective LIBLINEAR reports and minimises */
    uint64_t nonzeros; /* weights that are not zero, the bias included */
};
hog_status hog_objective_eval(const hog_model *m, const hog_data *d,
                              hog_loss loss, double l1, double l2,
                              struct hog_objective *out, hog_err *err);

/* ---- column access ------------------------------------------------------- */

/* Compressed sparse columns beside a CSR: column j holds the rows that
 * have feature j, in increasing row order. With a bias, column n_features
 * is the constant bias column (every row, value bias). */
struct hog_csc {
    uint64_t rows, cols, nnz;
    uint64_t *off;  /* cols + 1 */
    uint32_t *row;  /* nnz */
    float *val;     /* nnz */
    size_t bytes;   /* memory of off, row and val */
};

/* Transposes m (n_features columns, plus the bias column when bias != 0)
 * on the pool's workers (p NULL: on the caller): each counts its block of rows per column, the
 * counts are turned into per-worker write positions, and each scatters its
 * block, so the result does not depend on the number of workers.
 * HOG_ERANGE when the rows do not fit 32-bit row ids. */
hog_status hog_csc_build(struct hog_pool *p, const struct hog_csr *m,
                         uint64_t n_features, double bias,
                         struct hog_csc *out, hog_err *err);
void hog_csc_free(struct hog_csc *c);

/* ---- the pool a coordinate method runs on ---------------------------------- */

struct hog_coord_env {
    struct hog_topo *topo;
    struct hog_pool *pool;
    unsigned threads;
};

/* Nonzeros per worker below which parallel workers do not pay: a pool
 * wake-up, barriers and a compare-and-swap per shared value moved cost
 * about a millisecond of reading columns or rows (a few ns per nonzero).
 * On an idle machine a barrier costs microseconds; on a busy one it can
 * wait a scheduler slice for a descheduled peer. scd sits out small epochs
 * with it (scd.c); both methods run a problem with fewer than two workers'
 * worth of nonzeros in all on one worker, whatever --threads says
 * (hog_coord_threads_for): reuters_moneyfx (348k nonzeros) and a9a (452k,
 * whose 123 features every row shares, so that two workers would only
 * fight over the same cache lines) among them. */
#define HOG_COORD_PAR_NNZ 262144u

/* The workers to ask for: `threads`, or 1 when the problem has fewer than
 * 2 HOG_COORD_PAR_NNZ nonzeros (counting the bias's). */
static inline unsigned hog_coord_threads_for(uint64_t nnz, unsigned threads)
{
    return nnz < 2 * (uint64_t)HOG_COORD_PAR_NNZ ? 1u : threads;
}

/* threads 0: one per allowed core; more than the cores: oversubscribed
 * (hog_pool_for_opts, HOG_POOL_BIND_ANY: the answers must not depend on
 * the machine, only the speed may). threads 1: no pool at all (pool NULL;
 * the jobs run on the caller, which saves the topology discovery, several
 * milliseconds). driver.c. */
hog_status hog_coord_env_open(unsigned threads, struct hog_coord_env *e,
                              hog_err *err);
void hog_coord_env_close(struct hog_coord_env *e);

/* fn(arg, tid, n) on every worker of p; with p NULL fn(arg, 0, 1) here. */
static inline void hog_coord_run(struct hog_pool *p, hog_pool_fn fn, void *arg)
{
    if (p)
        hog_pool_run(p, fn, arg);
    else
        fn(arg, 0, 1);
}


#endif
