/*
 * The sparse SGD row update: THE one kernel that the serial trainer, Hogwild!
 * and the locked update modes share. The method and its proof of equality
 * with the dense update are above hog_sgd_run() in sgd.c and in
 * docs/TRAINING.md.
 *
 * Shared state (weights, AdaGrad accumulators, timestamps: struct hog_sgd,
 * core/sgd_base.h, with the per-coordinate maths) is _Atomic and
 * touched with relaxed loads and stores only, so that several threads may
 * run the kernel on one struct hog_sgd at once (Hogwild!). Everything else
 * in the struct is written only between segments, by one thread.
 *
 * Life cycle, one thread:
 *     hog_sgd_init(&s, ...)
 *     for each segment of steps (an epoch, or shorter; see seg_cap):
 *         len = hog_sgd_segment_begin(&s, t_global, want);
 *         hog_sgd_run(&s, rows..., t_first, t_stride)   (any threads)
 *         hog_sgd_segment_end(&s, len)                  (every weight current)
 *         t_global += len
 *     hog_sgd_copy_weights(&s, model->w); hog_sgd_free(&s);
 */
#ifndef HOG_SGD_H
#define HOG_SGD_H

#include "core/isa.h" /* first: a PORTABLE copy's names */
#include "core/sgd_base.h"

#include "core/loss.h"

/* Allocates zero weights for n_features (+1 for the bias) and the state o
 * asks for, their pages faulted in for writing by the calling thread
 * (hog_zalloc: no copy-on-write faults in the first epoch), and for train
 * with interactions a buffer of its longest crossed row for each thread
 * that may run the kernel at once (o->threads for Hogwild!, else one), so
 * that the runs, which return no status, never allocate. o must be
 * validated (hog_train checks it). */
hog_status hog_sgd_init(struct hog_sgd *s, const hog_train_opts *o,
                        const hog_data *train, hog_err *err);
/* hog_sgd_init() with the pages left to fault at first touch, for a
 * trainer that has hog_sgd_populate() run by a thread of the memory's own
 * NUMA node (Hogwild!'s replicas). */
hog_status hog_sgd_init_unplaced(struct hog_sgd *s, const hog_train_opts *o,
                                 const hog_data *train, hog_err *err);
/* Faults in the pages of the weights and their state for writing, on the
 * calling thread's NUMA node (hog_populate). */
void hog_sgd_populate(struct hog_sgd *s);
/* hog_sgd_init() without the weights, AdaGrad sums and timestamps (w, g2,
 * stamp NULL): the schedule, the kind of regularization and a segment's step
 * sizes and prefixes, for a trainer that keeps weights of its own in
 * another layout (softmax.c) and steps them by the same maths:
 * hog_sgd_eta_at, hog_sgd_segment_begin and the helpers below. */
hog_status hog_sgd_init_schedule(struct hog_sgd *s, const hog_train_opts *o,
                                 const hog_data *train, hog_err *err);
void hog_sgd_free(struct hog_sgd *s);

/* The rows of the epochs to come (the inverse scaling's n, the segments'
 * cap), for a state kept from one epoch to the next over pieces of other
 * lengths (train/trainer.c): what hog_sgd_init() would set for a data set
 * of `rows` rows, the segment's arrays grown to it. Between segments. */
hog_status hog_sgd_set_rows(struct hog_sgd *s, uint64_t rows, hog_err *err);
/* Weight j as the model has it, between segments (not averaged). */
float hog_sgd_weight(const struct hog_sgd *s, uint64_t j);

/* The step size of global step t for the shared schedules (constant and
 * inverse scaling); AdaGrad's base eta. */
double hog_sgd_eta_at(const struct hog_sgd *s, uint64_t t);

/* Starts a segment at global step t0 with up to want steps (want >= 1) and
 * returns its length (>= 1): shorter when want > seg_cap or when the shrink
 * product would underflow. Steps of the segment are numbered 0..len-1. */
uint32_t hog_sgd_segment_begin(struct hog_sgd *s, uint64_t t0, uint32_t want);

/* Brings every weight up to date with all len steps of the segment and
 * resets the timestamps. O(features). hog_sgd_catch_up_range() does it for
 * w[lo..hi) so that threads may share the work. */
void hog_sgd_segment_end(struct hog_sgd *s, uint32_t len);
void hog_sgd_catch_up_range(struct hog_sgd *s, uint64_t lo, uint64_t hi,
                            uint32_t len);

/* Runs count SGD steps on rows order[0..count) of d; the i-th row is segment
 * step t_first + i * t_stride (all < seg_len). Serial: t_first = position in
 * the segment, t_stride = 1. Safe to call from several threads at once.
 * d with interactions: the data set s was made for (or rows no longer
 * crossed).
 * With d->row_w set, row i's loss derivative is times row_w[i] (the
 * gradient of its weighted loss; a weight of 0 makes the row a no-op, and
 * weights of 1 give the unweighted run's weights bit for bit): the
 * weighted loops, chosen here once per call, leave the unweighted ones
 * untouched. */
void hog_sgd_run(const struct hog_sgd *s, const hog_data *d,
                 const uint64_t *order, uint64_t count, uint32_t t_first,
                 uint32_t t_stride);

/* Locks of the locked update modes (the baselines Hogwild! is measured
 * against). striped: one spinlock per stripe of HOG_SGD_STRIPE_SHIFT-aligned
 * weights (16 floats: one cache line), a row takes its stripes in ascending
 * feature order, so two rows never wait on each other in a cycle (the
 * Hogwild! paper's AIG). mutex: one pthread mutex held around each row's
 * whole update (the paper's round robin, RR). */
#define HOG_SGD_STRIPE_SHIFT 4
struct hog_sgd_locks {
    hog_update mode;          /* HOG_UPDATE_STRIPED or HOG_UPDATE_MUTEX */
    uint64_t n_stripes;
    atomic_uint *stripe;      /* 0 free, 1 held */
    void *mutex;              /* pthread_mutex_t */
};

/* Sets up the locks mode needs to guard s's weights (nothing for none and
 * atomic: then l->mode is HOG_UPDATE_NONE). */
hog_status hog_sgd_locks_init(struct hog_sgd_locks *l, hog_update mode,
                              const struct hog_sgd *s, hog_err *err);
void hog_sgd_locks_free(struct hog_sgd_locks *l);

/* hog_sgd_run() with the update applied under mode: none (relaxed loads and
 * stores, the same as hog_sgd_run), atomic (each weight's new value is
 * installed by compare-and-swap on the value it was computed from), striped
 * and mutex (the row's update under l's locks; l from hog_sgd_locks_init
 * with the same mode). The arithmetic is the same in every mode: with one
 * thread all four give bit-identical weights. */
void hog_sgd_run_mode(const struct hog_sgd *s, const hog_data *d,
                      const uint64_t *order, uint64_t count, uint32_t t_first,
                      uint32_t t_stride, hog_update mode,
                      const struct hog_sgd_locks *l);

/* The progressive metrics (Vowpal Wabbit's "average loss"): what the rows
 * a run stepped scored just before their own steps, summed by the calling
 * thread as the rows go. loss sums v_i loss(y_i, m_i) (v_i the row's
 * weight, 1 without weights), as the objective weighs its losses; right
 * counts the rows whose margin had their label's sign (classification
 * losses; a margin > 0 predicts the positive label, as the metrics do). */
struct hog_sgd_tally {
    double loss;
    uint64_t right, rows;
};

static inline void hog_sgd_tally_add(struct hog_sgd_tally *t, hog_loss loss,
                                     double p, double y, double m, double v)
{
    t->loss += v * hog_loss_value(loss, p, y, m);
    t->right += (m > 0) == (y > 0);
    t->rows++;
}

/* Another thread's tally into *into (threads merged in a fixed order give
 * the same sums at every run). */
static inline void hog_sgd_tally_merge(struct hog_sgd_tally *into,
                                       const struct hog_sgd_tally *t)
{
    into->loss += t->loss;
    into->right += t->right;
    into->rows += t->rows;
}

/* hog_sgd_run_mode() that also adds each row's score before its step to
 * *tally (NULL: nothing, the same loop as hog_sgd_run_mode). The weights
 * are the same either way, bit for bit. */
void hog_sgd_run_tally(const struct hog_sgd *s, const hog_data *d,
                       const uint64_t *order, uint64_t count,
                       uint32_t t_first, uint32_t t_stride, hog_update mode,
                       const struct hog_sgd_locks *l,
                       struct hog_sgd_tally *tally);

/* Hands t's rows (this epoch's, all threads' added) to the front door as
 * f->prog_loss and f->prog_accuracy; nothing when t has no rows. */
struct hog_fit;
void hog_sgd_tally_report(struct hog_fit *f, const struct hog_sgd *s,
                          const struct hog_sgd_tally *t);

/* One step on one row with target y (+1/-1, or the raw target for the
 * squared loss); returns the margin before the step. */
double hog_sgd_step(const struct hog_sgd *s, struct hog_row r, double y,
                    uint32_t t);

/* Copies the weights out (call between segments); the range form copies
 * out[lo, hi) so that threads may share the work. FTRL-Proximal's weights
 * are computed from (z, r) as of the last segment's end. */
void hog_sgd_copy_weights(const struct hog_sgd *s, float *out);
void hog_sgd_copy_weights_range(const struct hog_sgd *s, float *out,
                                uint64_t lo, uint64_t hi);
/* Puts weights in (between segments: a warm start, core/fit.h's init). */
void hog_sgd_set_weights(struct hog_sgd *s, const float *in);

/* FTRL-Proximal (s->zn): its weights after `steps` steps, and its two sums
 * per coordinate out (z[j], r[j]) and in, for the checkpoints; putting
 * them in at a segment boundary makes `steps` the step count the weights
 * are read at until the next segment begins. */
void hog_sgd_ftrl_weights(const struct hog_sgd *s, uint64_t steps,
                          float *out);
void hog_sgd_ftrl_get(const struct hog_sgd *s, float *z, float *r);
void hog_sgd_ftrl_put(struct hog_sgd *s, const float *z, const float *r,
                      uint64_t steps);

/* ---- one-vs-rest's classes in one pass (FTRL-Proximal) ---------------------- */

/* At most this many classes per pass (a one-vs-rest trainer steps more in
 * groups). */
#define HOG_SGD_WIDE_MAX 32

/* k (1..HOG_SGD_WIDE_MAX) binary problems on train's rows, class c's
 * "label == pos[c]" (pos kept, not copied), with o's options (schedule
 * FTRL-Proximal): zero state. The segments are hog_sgd_init's. */
hog_status hog_sgd_init_wide(struct hog_sgd *s, const hog_train_opts *o,
                             const hog_data *train, uint32_t k,
                             const double *pos, hog_err *err);
/* Steps every class on rows order[0..count) of d (row weights as
 * hog_sgd_run's; no interactions), the i-th row segment step t_first + i;
 * one thread. Class
 * c's weights are, bit for bit, those of hog_sgd_run() on class c's
 * binary problem with the same rows and steps (sgd_ftrl.c). */
void hog_sgd_run_wide(const struct hog_sgd *s, const hog_data *d,
                      const uint64_t *order, uint64_t count,
                      uint32_t t_first);
/* Class c's weights (as of the last segment's end) to out + c * stride,
 * every class in one pass over the state. */
void hog_sgd_copy_weights_wide(const struct hog_sgd *s, float *out,
                               uint64_t stride);
/* A warm start: class c's weights from in + c * stride, put in as
 * hog_sgd_set_weights() puts one class's (between segments). */
void hog_sgd_set_weights_wide(struct hog_sgd *s, const float *in,
                              uint64_t stride);

/* k regularization steps at one AdaGrad rate, a = min(1, rate l2): returns
 * P = (1 - a)^k (hog_sgd_shrink_exact's power; 1 where a = 0) and, when q
 * is not NULL, *q = Q / b = (1 - P) / a (k where a = 0), so that a weight
 * untouched for those steps becomes sign(v) max(0, P |v| - b *q) with
 * b = rate l1 (the closed form at the top of sgd.c). */
double hog_sgd_adagrad_decay(double a, uint32_t k, double *q);

/* ---- the catch-up's power, for the tests ------------------------------------ */

/* (1 - a)^k for 0 <= a <= 1 as the kernel of AdaGrad with l2 only
 * computes it (its lanes: 1 - a at k = 1, else exp(k log(1 - a));
 * sgd_lanes.h states the accuracy), and as shrink_pow() does for the other
 * AdaGrad kinds (log(1 - a) by a short series where a < 1e-3). */
double hog_sgd_shrink_lanes(double a, uint32_t k);
double hog_sgd_shrink_exact(double a, uint32_t k);

/* ---- checkpoints (sgd_state.c) ---------------------------------------------- */

/* Checkpoint state of an SGD trainer (core/fit.h). capture fills st
 * (arrays malloc'd; hog_train_state_free) from s at step seg_pos of the
 * open segment (0: at a segment boundary), leaving s as it was; restore
 * puts st's weights, sums and timestamps into s, whose segment the caller
 * has rebuilt with hog_sgd_segment_begin(st->seg_t0, st->seg_want). One
 * thread, no step running. */
struct hog_train_state;
hog_status hog_sgd_state_capture(struct hog_sgd *s, uint32_t seg_pos,
                                 struct hog_train_state *st, hog_err *err);
hog_status hog_sgd_state_restore(struct hog_sgd *s,
                                 const struct hog_train_state *st,
                                 hog_err *err);
void hog_train_state_free(struct hog_train_state *st);
/* A checkpoint of an SGD trainer at step seg_pos of the open segment: st,
 * whose position the caller has filled (epoch, pos, t_global, seg_t0,
 * seg_want, seg_pos, rng), gets s's state (hog_sgd_state_capture), goes to
 * the front door (hog_fit_save: HOG_EINTR when cancelled) and has its
 * arrays freed. The serial trainer and Cyclades call it. */
struct hog_fit;
hog_status hog_sgd_checkpoint(struct hog_fit *f, struct hog_sgd *s,
                              uint32_t seg_pos, struct hog_train_state *st,
                              bool cancelled, hog_err *err);

/* ---- Cyclades: steps with some weights kept apart (src/cyclades) ------------ */

/* One step on row r at segment step t whose margin gets m_extra added (the
 * contribution of weights the caller keeps and updates itself), with the
 * bias weight left out unless with_bias. m_extra is in STORED units: the
 * sum of the raw values w[j] (hog_w_load_relaxed) times x_j, exactly as the
 * kernel sums the row's own weights; in the scaled mode (l2 only) the
 * kernel divides the whole margin, m_extra included, by q_t, so the caller
 * never needs to know the representation. Returns the loss derivative d at
 * the margin, before the row's weight (0: no step). The weighted function
 * (hog_sgd_split_step(s, true)) steps with rw d, rw the row's weight; the
 * unweighted one ignores rw; *margin gets the whole margin before the
 * step (hog_sgd_step's return). With m_extra = 0 and with_bias =
 * (bias != 0) it is hog_sgd_step bit for bit. Specialised like
 * hog_sgd_run: fetch the function once with hog_sgd_split_step(). */
typedef double hog_sgd_split_fn(const struct hog_sgd *s, struct hog_row r,
                                double y, double rw, uint32_t t,
                                double m_extra, bool with_bias,
                                double *margin);
hog_sgd_split_fn *hog_sgd_split_step(const struct hog_sgd *s, bool weighted);

/* Step t's update of weight j alone, with loss gradient g (d x_j, the TRUE
 * gradient): the pending regularization, then the step as in hog_sgd_step
 * (scaled mode: the stored value moves by eta_t g q_{t+1}), except that
 * AdaGrad's accumulator takes sq where hog_sgd_step adds g^2 (Cyclades'
 * hot weights step once with a sum of gradients g = sum_i g_i and give
 * sq = sum_i g_i^2, the serial steps' increments). */
void hog_sgd_apply(const struct hog_sgd *s, uint64_t j, uint32_t t, double g,
                   double sq);
/* hog_sgd_apply(s, j[i], t, g[i], sq[i]) for i < count (distinct
 * j < 2^32), specialised; sq NULL: sq[i] = g[i]^2. */
void hog_sgd_apply_many(const struct hog_sgd *s, const uint32_t *j,
                        const double *g, const double *sq, uint64_t count,
                        uint32_t t);

#endif
