/*
 * The model's memory: what training holds per weight, and the refusal,
 * before anything is allocated, of a model that cannot fit, with the
 * --hash-bits that would.
 */
#include "train/train.h"

#include "gpu/gpu.h"

#include <stdio.h>
#include <string.h>

/* Bytes per weight (feature) that training holds at once, from the
 * allocations of each algorithm, and what they are, for the sentence:
 *   the model's float weights (hog_model_new);
 *   serial, Hogwild!, Cyclades (hog_sgd_init): a float working copy, the
 *     lazy-regularization timestamps (l1, or l2 under AdaGrad), AdaGrad's
 *     float sums, or FTRL's two float sums in their place; Hogwild! with
 *     --replicas core: all of them per thread (node: at least one
 *     replica, the node count being the pool's);
 *   Cyclades: degrees and owners, and per thread the union-find's parent,
 *     component and touched arrays (and a hot count with hot features);
 *   scd: double weights, column norms, the active set and the column
 *     offsets (and the line search's start under the logistic loss);
 *   dcd: double weights;
 *   newton: nine double vectors (w, the trial w, g, M and CG's five);
 *   lbfgs: six double vectors (w, g, their trial values, pg, d) and
 *     ten pairs (s, y).
 * Arrays that grow with the rows (the data is loaded already, and what
 * the algorithms keep per row is smaller than it) and short-lived ones
 * are left out: a lower bound, so that a refusal is never wrong. */
static uint64_t bytes_per_weight(const hog_train_opts *o, char *what,
                                 size_t len)
{
    unsigned T = o->threads ? o->threads : hog_allowed_cpus();
    bool ada = o->schedule == HOG_SCHED_ADAGRAD;
    bool stamps = o->l1 > 0 || (ada && o->l2 > 0);
    uint64_t b = sizeof(float);
    unsigned rep = o->algo == HOG_ALGO_HOGWILD &&
                           o->replicas == HOG_REPLICAS_CORE ? T : 1;
    const char *part[5];
    unsigned n = 0;
    part[n++] = "the weights";
    if (hog_train_gpu_replicas(o)) {
        /* the replicas live in device memory */
    } else if (o->algo == HOG_ALGO_SCD) {
        b += (4 + (o->loss == HOG_LOSS_LOGISTIC)) * sizeof(double);
        part[n++] = "the solver's double-precision weights and column arrays";
    } else if (o->algo == HOG_ALGO_DCD) {
        b += sizeof(double);
        part[n++] = "the solver's double-precision weights";
    } else if (o->algo == HOG_ALGO_NEWTON) {
        b += 9 * sizeof(double);
        part[n++] = "the solver's nine double-precision vectors";
    } else if (o->algo == HOG_ALGO_LBFGS) {
        b += 26 * sizeof(double);
        part[n++] = "the solver's six double-precision vectors and ten "
                    "pairs of them";
    } else if (o->schedule == HOG_SCHED_FTRL) {
        b += 2 * sizeof(float) * rep;
        part[n++] = rep > 1 ? "FTRL's two sums per weight per thread"
                            : "FTRL's two sums per weight";
    } else {
        b += sizeof(float) * (1 + stamps + ada) * rep;
        part[n++] = rep > 1 ? "a working copy per thread" : "a working copy";
        if (ada)
            part[n++] = rep > 1 ? "AdaGrad's sums per thread" : "AdaGrad's sums";
        if (stamps)
            part[n++] = "regularization timestamps";
        if (o->algo == HOG_ALGO_CYCLADES) {
            unsigned hot = o->cyclades_hot_degree != 0;
            b += 2 * sizeof(uint32_t) +
                 (uint64_t)T * (3 + hot) * sizeof(uint32_t);
            part[n++] = "the conflict graph's arrays per thread";
        }
    }
    size_t k = 0;
    what[0] = '\0';
    for (unsigned i = 0; i < n && k < len; i++)
        k += (size_t)snprintf(what + k, len - k, "%s%s",
                              i == 0 ? "" : i == n - 1 ? " and " : ", ",
                              part[i]);
    return b;
}

/* The bytes a model of nf features and k classes needs to train, at
 * bpw bytes per weight of one vector: k classes (0: one vector) add
 * k - 1 model vectors (and, softmax, k - 1 working copies). */
static uint64_t model_need(const hog_train_opts *o, uint64_t nf, uint32_t k,
                           uint64_t bpw)
{
    uint64_t nw = nf + (o->bias != 0.0);
    uint64_t need = nw * bpw;
    if (k > 1)
        need += nw * sizeof(float) * (k - 1);
    /* softmax.c's working copy is K wide too (its per-feature state is
     * counted once, as above) */
    if (k > 1 && o->multiclass == HOG_MULTICLASS_SOFTMAX)
        need += nw * sizeof(float) * (k - 1);
    return need;
}

/* The --hash-bits to suggest: the most bits up to 24 (16.8 M weights)
 * whose model takes at most half of what is available, and fewer than
 * the data's own when it is hashed already; 0 when none fits. */
static unsigned hash_bits_that_fit(const hog_train_opts *o, uint32_t k,
                                   uint64_t bpw, uint64_t have,
                                   unsigned data_bits)
{
    unsigned b = data_bits && data_bits <= 24 ? data_bits - 1 : 24;
    for (; b >= 1; b--)
        if (model_need(o, UINT64_C(1) << b, k, bpw) <= have / 2)
            return b;
    return 0;
}

/* A feature index of 4e9 is 16 GB of weights alone, which the kernel
 * would otherwise answer by killing the process partway through. */
hog_status hog_train_check_memory(const hog_train_opts *o,
                                  const hog_data *train, uint32_t k,
                                  hog_err *err)
{
    char what[256];
    uint64_t nf = train->n_features;
    uint64_t bpw = bytes_per_weight(o, what, sizeof what);
    uint64_t need = model_need(o, nf, k, bpw);
    const char *limit;
    uint64_t have = hog_mem_available(&limit);
    if (need <= have)
        return HOG_OK;
    if (k > 1) {
        size_t l = strlen(what);
        snprintf(what + l, sizeof what - l, " (the weights%s for each of "
                 "%u classes)", o->multiclass == HOG_MULTICLASS_SOFTMAX
                                    ? " and the working copy" : "", k);
    }
    const double gib = 1024.0 * 1024.0 * 1024.0, mib = 1024.0 * 1024.0;
    char remedy[256];
    unsigned b = hash_bits_that_fit(o, k, bpw, have, train->hash.bits);
    if (b)
        snprintf(remedy, sizeof remedy,
                 "hash the features into fewer weights with --hash-bits %u "
                 "(%.1f M weights, %.0f MiB; %.0f MiB with what training "
                 "keeps beside them), or renumber them into a smaller range",
                 b, (double)(UINT64_C(1) << b) / 1e6,
                 (double)(UINT64_C(4) << b) * (k > 1 ? k : 1) / mib,
                 (double)model_need(o, UINT64_C(1) << b, k, bpw) / mib);
    else
        snprintf(remedy, sizeof remedy, "use fewer distinct feature indices "
                 "(renumber them, or hash them with --hash-bits)");
    return hog_errf(err, HOG_ENOMEM,
                    "the training data spans %llu features (%s), and a dense "
                    "model of them needs %.1f GiB for %s, but only %.1f GiB "
                    "is available %s; %s",
                    (unsigned long long)nf,
                    train->hash.bits ? "hashed into 2^bits weights"
                                     : "up to its largest feature index",
                    (double)need / gib, what, (double)have / gib, limit,
                    remedy);
}
