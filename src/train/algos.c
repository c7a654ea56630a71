/*
 * The algorithms' table: one row per algorithm, with its name as the
 * command spells it, its name in sentences, its entry points and what it
 * accepts beyond the options every trainer takes (in the spirit of ggml's
 * supports_op). The library's validation and the command both ask this
 * table, so an option an algorithm does not take is refused by both, with
 * the same sentence, and the sentence lists the algorithms that do take it.
 *
 * Adding an algorithm is one row here and one folder for its code
 * (docs/ARCHITECTURE.md).
 */
#include "train/train.h"

#include "core/loss.h"
#include "coordinate/coordinate.h"
#include "cyclades/cyclades.h"
#include "gpu/gpu.h"
#include "hogwild/hogwild.h"
#include "newton/newton.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const struct hog_algo_row rows[] = {
    [HOG_ALGO_SERIAL] = {
        "serial", "serial", hog_serial_train, hog_serial_train_stream,
        hog_softmax_train,
        HOG_CAP_CHECKPOINT | HOG_CAP_WORLD | HOG_CAP_WARM |
            HOG_CAP_INTERACTIONS | HOG_CAP_FTRL },
    [HOG_ALGO_HOGWILD] = {
        "hogwild", "Hogwild!", hog_hogwild_train, hog_hogwild_train_stream,
        hog_softmax_train,
        HOG_CAP_THREADS | HOG_CAP_UPDATE | HOG_CAP_REPLICAS | HOG_CAP_HOT |
            HOG_CAP_BIND | HOG_CAP_CHECKPOINT | HOG_CAP_WORLD | HOG_CAP_WARM |
            HOG_CAP_INTERACTIONS | HOG_CAP_FTRL },
    [HOG_ALGO_CYCLADES] = {
        "cyclades", "Cyclades", hog_cyclades_train, NULL,
        hog_cyclades_train_softmax,
        HOG_CAP_THREADS | HOG_CAP_HOT | HOG_CAP_BATCH | HOG_CAP_CHECKPOINT |
            HOG_CAP_WARM },
    [HOG_ALGO_SCD] = {
        "scd", "stochastic coordinate descent", hog_scd_train, NULL, NULL,
        HOG_CAP_THREADS | HOG_CAP_TOL },
    [HOG_ALGO_DCD] = {
        "dcd", "dual coordinate descent", hog_dcd_train, NULL, NULL,
        HOG_CAP_THREADS | HOG_CAP_UPDATE | HOG_CAP_TOL },
    [HOG_ALGO_NEWTON] = {
        "newton", "trust-region Newton", hog_newton_train, NULL, NULL,
        HOG_CAP_THREADS | HOG_CAP_TOL | HOG_CAP_REDUCE | HOG_CAP_GPU },
    [HOG_ALGO_LBFGS] = {
        "lbfgs", "L-BFGS", hog_lbfgs_train, NULL, NULL,
        HOG_CAP_THREADS | HOG_CAP_TOL | HOG_CAP_REDUCE | HOG_CAP_GPU },
    /* The default: serial or Hogwild! once the data is known (auto.c).
     * Until then it is the serial trainer, the fallback, in every rule
     * that reads the row; it takes what either may be given for it:
     * --threads and where they run. */
    [HOG_ALGO_AUTO] = {
        "auto", "auto (serial, or Hogwild! on large data)",
        hog_serial_train, hog_serial_train_stream, hog_softmax_train,
        HOG_CAP_THREADS | HOG_CAP_BIND | HOG_CAP_CHECKPOINT | HOG_CAP_WORLD |
            HOG_CAP_WARM | HOG_CAP_INTERACTIONS | HOG_CAP_FTRL },
};
#define N_ROWS (sizeof rows / sizeof rows[0])

/* How each capability's options are named in a refusal, and whether the
 * name is plural ("apply to") or singular ("applies to"). */
static const struct {
    unsigned cap;
    const char *options;
    bool plural;
} cap_names[] = {
    { HOG_CAP_THREADS, "--threads above 1", false },
    { HOG_CAP_UPDATE, "--update", false },
    { HOG_CAP_REPLICAS, "--replicas", false },
    { HOG_CAP_HOT, "--hot", false },
    { HOG_CAP_BIND, "--bind, --no-smt and --oversubscribe", true },
    { HOG_CAP_BATCH, "--batch-size and --repartition", true },
    { HOG_CAP_TOL, "--tol", false },
    { HOG_CAP_CHECKPOINT, "--checkpoint and --resume", true },
    { HOG_CAP_WORLD, "model averaging across processes (--world, mpirun)",
      false },
    { HOG_CAP_REDUCE, "exact solving across processes (--world, mpirun)",
      false },
    { HOG_CAP_WARM, "a warm start (--init, --search-C's path)", false },
    { HOG_CAP_FTRL, "--schedule ftrl", false },
    { HOG_CAP_INTERACTIONS, "--interactions (crossed as each row is read, "
      "which coordinate descent's columns and Cyclades' conflict graph do "
      "not do)", true },
};

const struct hog_algo_row *hog_algo_row(hog_algo a)
{
    return (unsigned)a < N_ROWS && rows[a].name ? &rows[a] : NULL;
}

const char *hog_algo_name(hog_algo a)
{
    const struct hog_algo_row *r = hog_algo_row(a);
    return r ? r->title : "unknown";
}

int hog_algo_parse(const char *name)
{
    for (size_t i = 0; i < N_ROWS; i++)
        if (rows[i].name && strcmp(rows[i].name, name) == 0)
            return (int)i;
    return -1;
}

const char *hog_algo_cli_name(hog_algo a)
{
    const struct hog_algo_row *r = hog_algo_row(a);
    return r ? r->name : "?";
}

/* K >= 3 classes: a classification loss on labels that are not two
 * values, or the caller's class list. */
bool hog_train_is_multiclass(const hog_train_opts *o, const hog_data *train)
{
    return train && hog_loss_is_classification(o->loss) &&
           (train->labels != HOG_LABELS_BINARY || o->n_classes);
}

bool hog_train_gpu_replicas(const hog_train_opts *o)
{
    const struct hog_algo_row *r = hog_algo_row(o->algo);
    return hog_gpu_requested(o) && !(r && (r->caps & HOG_CAP_GPU));
}

unsigned hog_train_opts_caps(const hog_train_opts *o, const hog_train_hooks *h)
{
    unsigned c = 0;
    if (o->threads > 1)
        c |= HOG_CAP_THREADS;
    /* unset (the command asks before resolving): the algorithm's own */
    if (o->update != HOG_UPDATE_NONE && o->update != HOG_UPDATE_AUTO)
        c |= HOG_CAP_UPDATE;
    if (o->replicas != HOG_REPLICAS_SHARED)
        c |= HOG_CAP_REPLICAS;
    if (o->checkpoint || o->resume)
        c |= HOG_CAP_CHECKPOINT;
    if (h && h->average)
        c |= HOG_CAP_WORLD;
    if (h && h->reduce)
        c |= HOG_CAP_REDUCE;
    if (o->warm_start)
        c |= HOG_CAP_WARM;
    if (o->schedule == HOG_SCHED_FTRL)
        c |= HOG_CAP_FTRL;
    return c;
}

/* "hogwild and dcd", "serial, hogwild and cyclades": the rows with cap. */
static void list_takers(unsigned cap, char *buf, size_t len)
{
    size_t n = 0, k = 0, total = 0;
    /* auto chooses one of the trainers named */
    for (size_t i = 0; i < HOG_ALGO_AUTO; i++)
        total += rows[i].name && (rows[i].caps & cap);
    buf[0] = 0;
    for (size_t i = 0; i < HOG_ALGO_AUTO && n < len; i++) {
        if (!rows[i].name || !(rows[i].caps & cap))
            continue;
        const char *sep = k == 0 ? "" : k + 1 == total ? " and " : ", ";
        int w = snprintf(buf + n, len - n, "%s%s", sep, rows[i].name);
        n += w > 0 ? (size_t)w : 0;
        k++;
    }
}

hog_status hog_algo_check(hog_algo a, unsigned used, hog_err *err)
{
    const struct hog_algo_row *r = hog_algo_row(a);
    if (!r)
        return hog_errf(err, HOG_EINVAL, "unknown algorithm %d", (int)a);
    unsigned refused = used & ~r->caps;
    for (size_t i = 0; i < sizeof cap_names / sizeof *cap_names; i++) {
        if (!(refused & cap_names[i].cap))
            continue;
        char takers[128];
        list_takers(cap_names[i].cap, takers, sizeof takers);
        return hog_errf(err, HOG_EINVAL,
                        "%s %s to --algo %s only (this run uses --algo %s)",
                        cap_names[i].options,
                        cap_names[i].plural ? "apply" : "applies", takers,
                        r->name);
    }
    return HOG_OK;
}
