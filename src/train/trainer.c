/*
 * hog_trainer (include/hogtrain.h): online learning, one run of the serial
 * trainer continued over pieces of rows that arrive one at a time.
 *
 * A piece is one unshuffled epoch of the serial trainer over its rows
 * (hogwild/serial.c under the epoch driver, core/drive.c), continuing the
 * optimizer's state: hog_train on the piece with save_state and a warm
 * start from the previous piece's model takes the same steps. That path
 * costs a pass over the model per piece (the state made, put in, captured
 * and the weights copied out, twice each); here the state stays in the
 * kernel's own layout (struct hog_sgd, one per class vector) between the
 * pieces, and a piece runs what the driver runs over one epoch of
 * one block without checkpoints:
 *
 *     t = the steps so far
 *     from row 0 of the piece, in the piece's order:
 *         len = hog_sgd_segment_begin(s, t, rows left)
 *         hog_sgd_run(the len rows), hog_sgd_segment_end(s, len)
 *         t += len
 *
 * with the kernel set to the piece's row count (hog_sgd_set_rows: the
 * inverse scaling's n and the segments' cap follow the data, as a run on
 * that piece has them). The segment's end is a pass over the weights only
 * for the lazy kinds (l1 or l2 under the shared schedules or AdaGrad, as
 * in hog_train); FTRL-Proximal and the unregularized kinds end it in
 * O(1). The model is made from the state only when asked for: the
 * weights as serial_model() copies them out, the state as the driver's
 * save at the epoch's end captures it (core/sgd_state.c).
 *
 * What the in-place path does not cover (softmax's K-wide rows,
 * interactions, C, averaging, normalize, a holdout, other trainers) runs
 * hog_train per piece from the last piece's model, as before.
 */
#include "train/train.h"

#include "core/fit.h"
#include "core/loss.h"
#include "core/sgd.h"
#include "gpu/gpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct hog_trainer {
    hog_train_opts o;     /* resolved; epochs 1, shuffle 0; the arrays
                             below are its own copies */
    double *classes, *cw_labels, *cw_values;
    char *gpus, *bind;
    hog_model *warm;      /* o.warm_start's copy, until the first piece */
    /* In place: the model's description (its weights filled when asked
     * for), and the state of each of its vectors. Else: the last piece's
     * model with its state. NULL before the first piece. */
    hog_model *model;
    bool in_place, failed;
    struct hog_sgd *s;
    uint32_t vectors;
    struct hog_class_index ix; /* K classes: the pieces' labels checked */
    bool has_ix;
    uint64_t *order, order_cap; /* 0, 1, ..., the piece's rows */
    uint64_t epochs, steps;     /* the state's counts (hog_model_state) */
    uint64_t pieces, passes;
};

/* m, its weights and classes copied, its state too when with_state. */
static hog_status model_copy(const hog_model *src, bool with_state,
                             hog_model **out, hog_err *err)
{
    hog_model *m;
    hog_status st = hog_model_new(src->n_features, src->loss, src->bias, &m,
                                  err);
    if (st != HOG_OK)
        return st;
    float *w = m->w;
    *m = *src;
    m->w = w;
    m->n_classes = 0;
    m->classes = NULL;
    m->state = NULL;
    m->names = NULL;
    if (src->n_classes)
        st = hog_model_set_classes(m, src->n_classes, src->classes,
                                   src->multiclass, err);
    hog_model_state ms = { .size = sizeof ms };
    if (st == HOG_OK && with_state && hog_model_get_state(src, &ms))
        st = hog_model_set_state(m, &ms, err);
    m->labels = src->labels; /* set_classes marks them binary, as they are */
    if (st != HOG_OK) {
        hog_model_free(m);
        return st;
    }
    memcpy(m->w, src->w, hog_model_len(src) * sizeof *m->w);
    *out = m;
    return HOG_OK;
}

static hog_status dup_array(const double *a, unsigned n, double **out,
                            hog_err *err)
{
    *out = NULL;
    if (!a || !n)
        return HOG_OK;
    if (!(*out = malloc(n * sizeof **out)))
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    memcpy(*out, a, n * sizeof **out);
    return HOG_OK;
}

static hog_status dup_string(const char *s, char **out, hog_err *err)
{
    *out = NULL;
    if (!s)
        return HOG_OK;
    if (!(*out = strdup(s)))
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    return HOG_OK;
}

hog_status hog_trainer_create(const hog_train_opts *user, hog_trainer **out,
                              hog_err *err)
{
    *out = NULL;
    hog_train_hooks h;
    hog_status st = hog_train_hooks_take(NULL, &h, err);
    hog_trainer *t = calloc(1, sizeof *t);
    if (st == HOG_OK && !t)
        st = hog_errf(err, HOG_ENOMEM, "out of memory");
    if (st != HOG_OK) {
        free(t);
        return st;
    }
    hog_train_opts *o = &t->o;
    if ((st = hog_train_opts_take(user, &h, o, err)) != HOG_OK)
        ;
    else if (o->row_weights)
        st = hog_errf(err, HOG_EINVAL, "a trainer takes each piece's row "
                      "weights with the piece (hog_trainer_train), not "
                      "hog_train_opts.row_weights");
    else if (o->checkpoint || o->resume || o->validation)
        st = hog_errf(err, HOG_EINVAL, "a trainer keeps no checkpoint and "
                      "takes no validation set (checkpoint, resume, "
                      "validation): its model with its state "
                      "(hog_trainer_model) is where it stands");
    o->epochs = 1;
    o->shuffle = 0;
    o->save_state = 0;
    /* online learning is the serial trainer's: auto, the default, is it */
    if (o->algo == HOG_ALGO_AUTO)
        o->algo = HOG_ALGO_SERIAL;
    if (st == HOG_OK &&
        (st = hog_train_conflicts_options(o, &h, false, err)) == HOG_OK &&
        (st = dup_array(o->classes, o->n_classes, &t->classes, err)) ==
            HOG_OK &&
        (st = dup_array(o->class_weight_labels, o->n_class_weights,
                        &t->cw_labels, err)) == HOG_OK &&
        (st = dup_array(o->class_weight_values, o->n_class_weights,
                        &t->cw_values, err)) == HOG_OK &&
        (st = dup_string(o->gpus, &t->gpus, err)) == HOG_OK &&
        (st = dup_string(o->bind, &t->bind, err)) == HOG_OK &&
        o->warm_start)
        st = model_copy(o->warm_start, true, &t->warm, err);
    o->classes = t->classes;
    o->class_weight_labels = t->cw_labels;
    o->class_weight_values = t->cw_values;
    o->gpus = t->gpus;
    o->bind = t->bind;
    o->warm_start = NULL;
    if (st != HOG_OK) {
        hog_trainer_free(t);
        return st;
    }
    *out = t;
    return HOG_OK;
}

/* The model and the kernel's state (a failed set-up's, or the end). */
static void drop_state(hog_trainer *t)
{
    for (uint32_t c = 0; c < t->vectors; c++)
        hog_sgd_free(&t->s[c]);
    free(t->s);
    t->s = NULL;
    t->vectors = 0;
    if (t->has_ix)
        hog_class_index_free(&t->ix);
    t->has_ix = false;
    hog_model_free(t->model);
    t->model = NULL;
}

void hog_trainer_free(hog_trainer *t)
{
    if (!t)
        return;
    drop_state(t);
    hog_model_free(t->warm);
    free(t->order);
    free(t->classes);
    free(t->cw_labels);
    free(t->cw_values);
    free(t->gpus);
    free(t->bind);
    free(t);
}

uint64_t hog_trainer_pieces(const hog_trainer *t)
{
    return t->pieces;
}

uint64_t hog_trainer_model_passes(const hog_trainer *t)
{
    return t->passes;
}

/* ---- hog_train per piece ------------------------------------------------------ */

/* The piece with hog_train from the last model and its state (or the
 * warm start); the new model replaces it. */
static hog_status train_whole(hog_trainer *t, const hog_data *piece,
                              const float *row_weights, hog_err *err)
{
    hog_train_opts o = t->o;
    o.warm_start = t->model ? t->model : t->warm;
    o.save_state = 1;
    o.row_weights = row_weights;
    hog_model *m;
    hog_status st = hog_train(piece, NULL, &o, NULL, &m, err);
    if (st != HOG_OK)
        return st;
    hog_model_free(t->model);
    hog_model_free(t->warm);
    t->warm = NULL;
    t->model = m;
    t->passes++;
    return HOG_OK;
}

/* ---- in place ----------------------------------------------------------------- */

/* Whether the state of o's run on piece can stay in the kernel's layout
 * between pieces: the serial trainer's one vector or one-vs-rest, of
 * rows as they are, without what keeps more than the kernel's state. */
static bool in_place_fits(const hog_train_opts *o, const hog_data *piece)
{
    bool softmax = hog_train_is_multiclass(o, piece) &&
                   o->multiclass == HOG_MULTICLASS_SOFTMAX;
    return o->algo == HOG_ALGO_SERIAL && !hog_gpu_requested(o) && !softmax &&
           !piece->m.ns && !(o->C > 0) && !o->average && !o->normalize &&
           !(o->holdout > 0) && !o->early_stop;
}

/* Vector c's problem on d: d itself, or class c's one-vs-rest view. */
static hog_data vector_view(const hog_trainer *t, const hog_data *d,
                            uint32_t c)
{
    const hog_model *m = t->model;
    return m->n_classes ? hog_train_class_view(d, m->classes[c], 0) : *d;
}

/* The first piece: the model's description from it (as hog_train makes
 * it), the warm start checked against that and put in, the kernel's state
 * of every vector. */
static hog_status set_up(hog_trainer *t, const hog_data *piece, hog_err *err)
{
    hog_train_opts o = t->o;
    o.warm_start = t->warm;
    hog_model *m;
    hog_status st = hog_train_new_model(piece, &o, &m, err);
    if (st != HOG_OK)
        return st;
    t->model = m;
    const float *init;
    struct hog_fit f = { .train = piece, .o = &o, .model = m };
    struct hog_train_state warm;
    if ((st = hog_train_warm_weights(&o, m, &init, err)) != HOG_OK)
        return st;
    f.init = init;
    if ((st = hog_train_state_begin(&f, &warm, err)) != HOG_OK)
        return st;
    if (m->n_classes) {
        st = hog_class_index_init(&t->ix, m->classes, m->n_classes, err);
        if (st != HOG_OK)
            return st;
        t->has_ix = true;
    }
    uint32_t k = m->n_classes ? m->n_classes : 1;
    uint64_t len = hog_model_vector_len(m);
    if (!(t->s = calloc(k, sizeof *t->s)))
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    for (uint32_t c = 0; c < k; c++) {
        hog_data view = vector_view(t, piece, c);
        if ((st = hog_sgd_init(&t->s[c], &t->o, &view, err)) != HOG_OK)
            return st;
        t->vectors = c + 1;
        t->s[c].alone = true;
        if (init)
            hog_sgd_set_weights(&t->s[c], init + c * len);
        if (f.warm) { /* as the serial trainer resumes a completed epoch */
            struct hog_train_state ws = hog_train_state_class(f.warm, c);
            if ((st = hog_sgd_state_restore(&t->s[c], &ws, err)) != HOG_OK)
                return st;
        }
    }
    t->steps = f.warm ? f.warm->t_global : 0;
    t->epochs = f.warm ? f.warm->epoch : 0;
    hog_model_free(t->warm);
    t->warm = NULL;
    t->passes++;
    return HOG_OK;
}

/* A later piece against the model of the first: its features, its
 * positive label (binary), its labels among the classes (K classes). */
static hog_status piece_fits(const hog_trainer *t, const hog_data *piece,
                             hog_err *err)
{
    const hog_model *m = t->model;
    if (piece->n_features != m->n_features)
        return hog_errf(err, HOG_EINVAL, "the piece has %llu features and "
                        "the trainer's model %llu: every piece must have the "
                        "first one's features",
                        (unsigned long long)piece->n_features,
                        (unsigned long long)m->n_features);
    if (piece->m.ns)
        return hog_errf(err, HOG_EINVAL, "the piece was loaded with "
                        "interactions and the first one without: load every "
                        "piece alike");
    if (!piece->m.y)
        return hog_errf(err, HOG_EINVAL, "the piece has no labels");
    if (m->n_classes) {
        for (uint64_t i = 0; i < piece->m.rows; i++)
            if (hog_class_index_find(&t->ix, piece->m.y[i]) < 0)
                return hog_errf(err, HOG_EINVAL, "the piece's row %llu has "
                                "the label %g, none of the trainer's %u "
                                "classes", (unsigned long long)i + 1,
                                (double)piece->m.y[i], m->n_classes);
    } else if (hog_loss_is_classification(m->loss) &&
               (piece->labels != HOG_LABELS_BINARY ||
                piece->label_pos != m->label_pos)) {
        return hog_errf(err, HOG_EINVAL, "the piece's labels are not the "
                        "trainer's two classes (positive label %g): every "
                        "piece of a binary problem has both", m->label_pos);
    }
    return HOG_OK;
}

/* One epoch over rows order[0..n) of d from step t: the serial trainer's
 * segments (hog_drive_seg_next, one block). */
static void run_epoch(struct hog_sgd *s, const hog_data *d,
                      const uint64_t *order, uint64_t n, uint64_t t)
{
    for (uint64_t from = 0; from < n;) {
        uint64_t left = n - from;
        uint32_t len = hog_sgd_segment_begin(
            s, t, left < UINT32_MAX ? (uint32_t)left : UINT32_MAX);
        hog_sgd_run(s, d, order + from, len, 0, 1);
        hog_sgd_segment_end(s, len);
        t += len;
        from += len;
    }
}

/* The divergence check of the front door's epoch end, on the weights the
 * piece stepped: the others only shrank (or, FTRL, follow from sums that
 * did not change), so they stay finite. */
static hog_status piece_finite(hog_trainer *t, const hog_data *piece,
                               hog_err *err)
{
    const hog_model *m = t->model;
    const uint64_t nnz = piece->m.off[piece->m.rows] - piece->m.off[0];
    const uint32_t *idx = piece->m.idx + piece->m.off[0];
    for (uint32_t c = 0; c < t->vectors; c++) {
        const struct hog_sgd *s = &t->s[c];
        for (uint64_t e = 0; e <= nnz; e++) {
            if (e == nnz && m->bias == 0)
                break;
            uint64_t j = e < nnz ? idx[e] : m->n_features;
            float w = hog_sgd_weight(s, j);
            if (isfinite(w))
                continue;
            t->failed = true;
            if (m->n_classes)
                return hog_errf(err, HOG_ERANGE, "training class %g "
                                "diverged in piece %llu (weight %llu is "
                                "%g); use a smaller step size than eta = %g",
                                m->classes[c],
                                (unsigned long long)t->pieces + 1,
                                (unsigned long long)j, w, t->o.eta);
            return hog_errf(err, HOG_ERANGE, "training diverged in piece "
                            "%llu (weight %llu is %g); use a smaller step "
                            "size than eta = %g",
                            (unsigned long long)t->pieces + 1,
                            (unsigned long long)j, w, t->o.eta);
        }
    }
    return HOG_OK;
}

static hog_status train_in_place(hog_trainer *t, const hog_data *piece,
                                 const float *rw_in, hog_err *err)
{
    hog_train_opts o = t->o;
    o.row_weights = rw_in;
    const uint64_t n = piece->m.rows;
    hog_status st = piece_fits(t, piece, err);
    float *rw = NULL;
    if (st != HOG_OK ||
        (st = hog_train_row_weights(&o, piece, &rw, err)) != HOG_OK)
        return st;
    if (n > t->order_cap) {
        uint64_t *p = realloc(t->order, n * sizeof *p);
        if (!p) {
            free(rw);
            return hog_errf(err, HOG_ENOMEM, "out of memory for the order "
                            "of %llu rows", (unsigned long long)n);
        }
        t->order = p;
        t->order_cap = n;
    }
    for (uint64_t i = 0; i < n; i++)
        t->order[i] = i;
    for (uint32_t c = 0; c < t->vectors && st == HOG_OK; c++)
        st = hog_sgd_set_rows(&t->s[c], n, err);
    if (st != HOG_OK) {
        free(rw);
        return st;
    }
    hog_data view = *piece;
    view.row_w = rw;
    for (uint32_t c = 0; c < t->vectors; c++) {
        hog_data vc = vector_view(t, &view, c);
        run_epoch(&t->s[c], &vc, t->order, n, t->steps);
    }
    free(rw);
    if (t->s[0].reg != HOG_SGD_REG_NONE)
        t->passes++; /* the segments' ends caught every weight up */
    st = piece_finite(t, piece, err);
    t->steps += n;
    t->epochs++;
    return st;
}

hog_status hog_trainer_train(hog_trainer *t, const hog_data *piece,
                             const float *row_weights, hog_err *err)
{
    if (t->failed)
        return hog_errf(err, HOG_EINVAL, "an earlier piece failed this "
                        "trainer (its weights diverged): make a new one");
    hog_train_opts o = t->o;
    o.row_weights = row_weights;
    if (!t->model) /* the first piece decides */
        t->in_place = in_place_fits(&o, piece);
    hog_status st;
    if (!t->in_place) {
        st = train_whole(t, piece, row_weights, err);
    } else if ((st = hog_train_check(piece, NULL, &o, NULL, err)) != HOG_OK) {
        return st;
    } else if (!t->model && (st = set_up(t, piece, err)) != HOG_OK) {
        drop_state(t); /* nothing trained: the next piece sets up again */
        return st;
    } else {
        st = train_in_place(t, piece, row_weights, err);
    }
    if (st == HOG_OK)
        t->pieces++;
    return st;
}

/* In place: the weights and the state into the model's description,
 * as the serial trainer hands them out at an epoch's end. */
static hog_status fill_model(hog_trainer *t, bool with_state, hog_err *err)
{
    hog_model *m = t->model;
    uint64_t len = hog_model_vector_len(m);
    hog_opt_state_free(m->state);
    m->state = NULL;
    if (with_state &&
        !(m->state = hog_opt_state_new(t->o.schedule, hog_model_len(m))))
        return hog_errf(err, HOG_ENOMEM, "out of memory for the optimizer "
                        "state of %llu weights",
                        (unsigned long long)hog_model_len(m));
    for (uint32_t c = 0; c < t->vectors; c++) {
        hog_sgd_copy_weights(&t->s[c], m->w + c * len);
        if (!m->state || !hog_opt_state_arrays(t->o.schedule))
            continue;
        struct hog_train_state at;
        memset(&at, 0, sizeof at);
        at.t_global = t->steps;
        hog_status st = hog_sgd_state_capture(&t->s[c], 0, &at, err);
        if (st != HOG_OK)
            return st;
        size_t bytes = len * sizeof(float);
        if (m->state->a)
            memcpy(m->state->a + c * len, at.ftrl_z, bytes);
        if (m->state->b)
            memcpy(m->state->b + c * len, at.adagrad_g2, bytes);
        hog_train_state_free(&at);
    }
    if (m->state) {
        m->state->epochs = t->epochs;
        m->state->steps = t->steps;
    }
    return HOG_OK;
}

hog_status hog_trainer_model(hog_trainer *t, int with_state, hog_model **out,
                             hog_err *err)
{
    *out = NULL;
    if (!t->model)
        return hog_errf(err, HOG_EINVAL, "the trainer has no model before "
                        "its first piece");
    if (t->failed)
        return hog_errf(err, HOG_EINVAL, "an earlier piece failed this "
                        "trainer (its weights diverged): it has no model");
    hog_status st = t->in_place ? fill_model(t, with_state != 0, err)
                                : HOG_OK;
    if (st == HOG_OK)
        st = model_copy(t->model, with_state != 0, out, err);
    return st;
}
