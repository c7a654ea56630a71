/*
 * Cyclades' private header: the state of a run (struct cyc), the
 * per-thread scratch, and the steps the files of src/cyclades share. Not
 * for other modules: they use cyclades.h. run.c's comment has the
 * algorithm and the map of the files.
 */
#ifndef HOG_CYCLADES_INTERNAL_H
#define HOG_CYCLADES_INTERNAL_H

#include "cyclades/cyclades.h"

#include "core/sgd.h"
#include "core/softmax.h"
#include "core/sparse.h"
#include "pool/pool.h"
#include "pool/spin.h"
#include "cyclades/prof.h"

#define CYC_NONE UINT32_MAX
/* Work groups per thread. A batch's components, and the hot lines, are
 * dealt to G = CYC_GROUPS T groups, not to T threads, and threads claim
 * groups from a shared counter, largest first (cyc_claim): a thread on a
 * free CPU takes the groups of a partner that was descheduled instead of
 * waiting for it at the barrier. Groups are whole components and whole
 * cache lines of hot weights, so who runs a group never changes the
 * arithmetic. */
#define CYC_GROUPS 8u

/* A batch's hot entries, feature-major: one record per hot feature the
 * batch touches, its entries (row's place in the batch, value) in row
 * order. */
struct hot_ent {
    uint32_t at; /* position - batch start */
    float x;
};
struct hot_rec {
    uint64_t start; /* first entry */
    uint32_t j, count; /* weight index, entries */
};
/* What the rows phase leaves the hot phase of each row of the batch (one
 * line holds four rows' both). */
struct row_d {
    double d; /* loss derivative at the batch's start */
    double h; /* curvature times |x_hot|_1 (hot_curv) */
};

/* One component of a batch. */
struct comp {
    uint64_t work;
    uint32_t rows, id;
};

/* Per-thread scratch: union-find over the features and the allocation. */
struct cyc_thread {
    /* [nf + 1], CYC_NONE: untouched */
    _Alignas(HOG_CACHELINE) uint32_t *parent;
    uint32_t *cid;      /* [nf + 1] component id of a root */
    uint32_t *touched;  /* [nf + 1] features touched in this batch */
    uint32_t ntouched;
    uint32_t *comp_of;  /* [B] component of each row of the batch */
    uint32_t *thr_of;   /* [B] group of each component */
    struct comp *comps; /* [B] */
    uint64_t *load;     /* [G] work of each group */
    uint64_t *cur;      /* [G] counts, then cursors */
    uint32_t *slot;     /* [G] a group's place in claim order */
    struct comp *gby;   /* [G] the groups in claim order */
    uint64_t *busy;     /* [T] the claim order's simulated thread loads */
    uint64_t *scur;     /* [G] hot records by slot, then cursors */
    uint32_t *hcnt;     /* [nf + 1] entries of a hot weight in the batch */
    uint32_t *htouch;   /* hot weights the batch touches */
    uint32_t *aj;       /* [nh] the hot phase's steps: weight, */
    double *ag;         /* gradient, */
    double *asq;        /* AdaGrad's increment */
    /* softmax: the row steps' scratch, and a hot feature's K summed
     * gradients and K Gershgorin sums (kg[0..K), kg[K..2K)) */
    struct hog_softmax_work kw;
    double *kg;
    /* the views' setup (hot.c): entries of the thread's share of the
     * rows, cold and hot, then where its share starts in each view */
    uint64_t v_cold, v_hot;
    /* statistics of the batches this thread partitioned */
    uint64_t st_batches, st_comps, st_largest;
    double st_share, st_imb;
    struct cyc_prof prof; /* the epochs' phases (prof.h) */
};

struct cyc {
    struct hog_fit *f;
    const hog_data *d;
    const hog_train_opts *o;
    struct hog_sgd s;
    hog_sgd_split_fn *step;
    /* --multiclass softmax (hog_cyclades_train_softmax): the K-wide
     * weights (core/softmax.h) in place of s's, which keeps the schedule
     * and the segment's prefixes; each row's class; and for the hot phase
     * each batch row's weighted score gradient and per-class curvature
     * bound (kd, kh: [B K]; hot_curv's K-wide form) and |g|^2 (kq: [B]) */
    bool softmax;
    struct hog_softmax km;
    uint32_t *cls;
    double *kd, *kh, *kq;
    struct hog_train_state last; /* softmax: the last epoch kept for a
                                    checkpoint (after whole epochs) */
    unsigned T, G; /* threads; work groups per phase (CYC_GROUPS T) */
    struct hog_topo *topo;
    struct hog_pool *pool;
    uint64_t n, nf, B, nb, tau;
    bool bias_hot;

    /* rows without their hot features (== the data when nothing is hot) */
    struct hog_csr cold;
    uint64_t *cold_off;
    uint32_t *cold_idx;
    float *cold_val;
    /* hot features: the bias and the features in more than tau rows */
    uint64_t nh;          /* hot weights, the bias's included */
    uint32_t *hot_owner;  /* [nf + 1] group that steps weight j; CYC_NONE:
                             cold (the bias is weight nf) */
    uint64_t *hot_bits;   /* bit j set: weight j is hot; the views' test,
                             a 32nd of hot_owner's bytes (in cache); freed
                             once the views are made */
    uint64_t *hot_off;    /* [n + 1] a row's hot entries (bias not included) */
    uint32_t *hot_j;      /* weight index of each entry, feature order */
    float *hot_x;
    bool hot_alias;       /* the hot view is the data's own arrays */
    /* per partition: batch b's hot entries are ent[eoff[b]..eoff[b+1]),
     * the records of the group in claim slot k are
     * rec[roff[b (G+1) + k] .. roff[b (G+1) + k + 1]); the bias's group is
     * in slot bslot[b] */
    uint64_t *eoff, *roff;
    uint32_t *bslot;
    struct hot_ent *ent;
    struct hot_rec *rec;
    double curv;
    uint64_t hot_nnz;     /* entries of the hot view */

    /* One-vs-rest's classes share the views above and the first order's
     * partition below, read only (share.c): then the share owns them. */
    bool views_shared, order_shared;
    /* epoch 1's order is drawn and partitioned (with the set-up) */
    bool first_drawn;

    /* order and partition */
    uint64_t *perm;  /* [n] epoch position -> row */
    uint64_t *pos;   /* [n] positions, per batch per group, ascending */
    uint64_t *boff;  /* [nb G + 1] start of the list of batch b's group in
                        claim slot k: boff[b G + k] */
    uint64_t *gcur;  /* [G] where each slot's rows stopped (a segment can
                        end inside a batch; read after a barrier) */
    uint64_t *visit; /* [nb] batch order of this epoch */
    struct row_d *rd; /* [B] what the hot phase needs of each batch row */
    /* progress on: each epoch position's row scored before its step (the
     * weighted loss, and 1 where its margin had its label's sign), added
     * in position order after the epoch, the same at any thread count;
     * NULL otherwise */
    double *prog_loss;   /* [n] */
    unsigned char *prog_right; /* [n] */
    double *pl1;     /* [n] |x_hot|_1 of the row at each epoch position */
    double *hot_l1;  /* [n] |x_hot|_1 of each row, the bias's |value| in */
    struct cyc_thread *th;
    bool all_mode;   /* partition job: statistics with every feature */

    /* run state, written by thread 0 between barriers */
    unsigned epoch;
    uint64_t t_global, seg_lo, seg_len;
    uint32_t seg_want; /* what the open segment was begun with */

    /* checkpoints and interruption (core/fit.h) */
    uint64_t every;          /* checkpoint every this many steps, or never */
    uint64_t start_bi, start_epos; /* where the epoch starts (a resume) */
    atomic_bool stop[2];     /* batch bi's poll of the cancel flag: [bi & 1] */
    hog_status ck_st;        /* thread 0's checkpoint, read after a barrier */
    hog_err *err;
    struct hog_rng rows_rng; /* after the shuffle of the epoch */

    /* between the phases of a batch: the spinning barrier (pool/spin.h),
     * not the pool's, which sleeps */
    struct hog_spin_barrier bar;
    /* tickets of the group claims (cyc_claim), reset per epoch */
    _Alignas(HOG_CACHELINE) atomic_uint_fast64_t claim;
    char claim_pad[HOG_CACHELINE - sizeof(atomic_uint_fast64_t)];
    hog_cyclades_stats st;
    struct cyc_prof prof; /* the setup's phases (prof.h) */
};

static inline uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Where thread t's share of n items starts, of T threads' (n t / T in 128
 * bits: n may be a count of nonzeros). The setup's pool jobs split rows
 * and features this way. */
static inline uint64_t cyc_share(uint64_t n, unsigned t, unsigned T)
{
    return (uint64_t)((unsigned __int128)n * t / T);
}

/* ---- setup.c ------------------------------------------------------------ */

/* Zeroes c and sets up what every run needs: the SGD state (softmax: the
 * schedule in s and the K-wide kernel in km), the pool and
 * its barrier (parallel only; else T = 1 and no pool), the batch size and
 * the row order's arrays. On failure c is left for hog_cyc_free. */
hog_status hog_cyc_prepare(struct cyc *c, struct hog_fit *f, bool parallel,
                           bool softmax, hog_err *err);
/* The per-thread scratch for T threads, nf + 1 features and B rows,
 * before the hot set (the degree count uses it), set on the pool's
 * threads; then, once the hot set is known, the hot phase's. */
hog_status hog_cyc_alloc_threads(struct cyc *c, hog_err *err);
hog_status hog_cyc_alloc_hot_scratch(struct cyc *c, hog_err *err);
/* Frees what hog_cyc_prepare and the rest allocated (not c itself), but
 * the views and the order a share holds. */
void hog_cyc_free(struct cyc *c);
/* Frees the hot set and the views; the order (the permutation) and its
 * partition. */
void hog_cyc_free_views(struct cyc *c);
void hog_cyc_free_order(struct cyc *c);

/* ---- hot.c -------------------------------------------------------------- */

/* The loss's curvature bound, and with o->cyclades_hot_degree the hot set
 * (tau, owners by cache line), the cold rows and the hot entries, and the
 * partition's hot-entry tables. Nothing is hot with
 * o->cyclades_hot_degree 0: c->cold is the data. */
hog_status hog_cyc_setup_hot(struct cyc *c, hog_err *err);

/* ---- partition.c -------------------------------------------------------- */

/* The partition's arrays (positions, group lists, each position's
 * |x_hot|_1 and, with hot features, the hot layout's tables), after the
 * hot set. */
hog_status hog_cyc_alloc_partition(struct cyc *c, hog_err *err);
/* Partitions every batch of c->perm on the pool; statistics into c->st
 * (all: every feature in the graph, the _all_ fields, nothing else). */
void hog_cyc_partition(struct cyc *c, bool all);
/* Epoch 1's order (hog_cyc_next_order) and its partition, timed into
 * c->st; c->first_drawn set. */
void hog_cyc_first_order(struct cyc *c, struct hog_rng *rows,
                         struct hog_rng *batches);
/* Draws the row order of an epoch; true when it must be partitioned. */
bool hog_cyc_next_order(struct cyc *c, struct hog_rng *rows,
                        struct hog_rng *batches, unsigned epoch);

/* ---- share.c ------------------------------------------------------------ */

/* The hot set and the views (hog_cyc_setup_hot), the hot phase's scratch,
 * the partition's arrays and, for a run that starts afresh (fresh: no resume, no warm state),
 * epoch 1's order and partition (hog_cyc_first_order, *rows after its
 * shuffle): built here, or taken from c->f->share, read only, when a
 * sibling run built them (and built here and given to the share when
 * this run is the first). The same arrays either way, bit for bit. */
hog_status hog_cyc_setup_shared(struct cyc *c, bool fresh,
                                struct hog_rng *rows, struct hog_rng *batches,
                                hog_err *err);
/* Before the run writes its order (a repartition): its own copy of a
 * shared order and partition arrays of its own. */
hog_status hog_cyc_own_order(struct cyc *c, hog_err *err);

/* ---- step.c ------------------------------------------------------------- */

/* The pool job of one epoch, from batch c->start_bi of c->visit. */
void hog_cyc_run_job(void *arg, unsigned tid, unsigned T);

/* ---- run.c -------------------------------------------------------------- */

/* The phase timers on standard error (prof.h; nothing without
 * HOG_CYC_PROF). */
void hog_cyc_prof_print(const struct cyc *c);

/* ---- checkpoint.c ------------------------------------------------------- */

/* The checkpoint at epoch position epos, a batch boundary (n: the epoch's
 * end); HOG_EINTR when cancelled. One thread, the others waiting. */
hog_status hog_cyc_checkpoint(struct cyc *c, uint64_t epos, bool cancelled);
/* Epoch position of the first row of the epoch's last batch. */
uint64_t hog_cyc_last_batch_start(const struct cyc *c);
/* Puts the run where f->resume left it (checkpoint.c has the details). */
hog_status hog_cyc_resume(struct cyc *c, struct hog_rng *rows,
                          struct hog_rng *batches, unsigned *first, bool *mid,
                          hog_err *err);

#endif
