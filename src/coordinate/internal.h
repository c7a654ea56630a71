/*
 * What dcd.c and scd.c share beyond coordinate.h: the run around a
 * solver's epochs (driver.c). A solver keeps its state in a struct whose
 * first member is a struct hog_coord, and hands the driver the parts that
 * are its own in a struct hog_coord_ops; the driver does the rest the same
 * way for both:
 *
 *   open the pool (one worker for a small problem: hog_coord_threads_for),
 *   ops->setup, seed the epochs' RNG (stream 0 of o->seed), and then per
 *   epoch: shuffle the active coordinates, ops->run, gather the
 *   coordinates each worker kept (in worker order), ops->end (the rest of
 *   the timed work and the stopping rule), time the epoch (the first one
 *   with the setup), copy the shared weights into the model, ops->report
 *   (untimed), mark f->last and f->converged, f->epoch_end, stop on the
 *   rule, an error or the cancel flag (HOG_EINTR).
 */
#ifndef HOG_COORDINATE_INTERNAL_H
#define HOG_COORDINATE_INTERNAL_H

#include "coordinate/coordinate.h"

struct hog_coord;

/* A solver's parts of the run. */
struct hog_coord_ops {
    /* After the pool is open (c->env): allocates and initialises the
     * solver and sets c->w, c->nw, c->act (every coordinate) and
     * c->active; the driver returns its error as it is. */
    hog_status (*setup)(struct hog_coord *c, hog_err *err);
    /* The epoch's workers over c->act[0, c->active), shuffled; returns how
     * many ran, each on its hog_slice of the active set. */
    unsigned (*run)(struct hog_coord *c);
    /* How many coordinates worker t kept at the front of its slice. */
    uint64_t (*kept)(const struct hog_coord *c, unsigned t);
    /* After the kept coordinates are gathered into the front of c->act
     * (c->active their count): the rest of the epoch's timed work and the
     * stopping rule; true to stop. It may bring every coordinate back
     * (hog_coord_all_active) for a check. */
    bool (*end)(struct hog_coord *c, unsigned nt);
    /* Untimed, after the model holds the epoch's weights: what the solver
     * knows of its objective (f->objective, mean_loss, gap; fit.h). */
    hog_status (*report)(struct hog_coord *c, hog_err *err);
};

struct hog_coord {
    struct hog_fit *f;
    const struct hog_coord_ops *ops;
    struct hog_coord_env env;
    _Atomic double *w;  /* the nw shared weights the model is copied from */
    uint64_t nw;
    uint64_t *act;      /* the active coordinates: rows (dcd), columns (scd) */
    uint64_t active;
    unsigned epoch;     /* the epoch under way, from 1 */
};

/* Runs the epochs of the solver whose state begins with c (c->f and c->ops
 * set, the rest zero) on a problem of nnz nonzeros (the bias's counted).
 * It frees c->w and c->act (malloc'd by setup) and closes the pool; the
 * solver frees the rest of its state afterwards, whatever was reached. */
hog_status hog_coord_drive(struct hog_coord *c, uint64_t nnz, hog_err *err);

/* dcd for the epsilon-insensitive losses (dcd_svr.c: LIBLINEAR's -s 13
 * and -s 12), called by hog_dcd_train for them. */
hog_status hog_dcd_svr_train(struct hog_fit *f, hog_err *err);

/* Every one of the n coordinates active again, in order. */
static inline void hog_coord_all_active(struct hog_coord *c, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        c->act[i] = i;
    c->active = n;
}

#endif
