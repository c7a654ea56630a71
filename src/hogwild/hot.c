/*
 * Hot-feature replicas for Hogwild! (--hot K): the K most frequent features
 * and the bias are kept per thread, every other weight stays shared.
 *
 * Why. On power-law data every row touches the few frequent features and
 * the bias, so with one shared model two threads keep stealing those cache
 * lines from each other (a written line moves between cores on every
 * other row). Giving each thread its own copy of just those weights takes
 * every shared written line off the hot path, at the cost of K + 1 weights
 * per thread (Hogwild!'s own analysis assumes sparse conflicts: hot
 * features are where real data breaks that assumption).
 *
 * Layout: one pointer per thread. The row kernel (src/core/sgd.c) indexes
 * one array w (and stamp, g2) by feature, so each thread gets a VIEW, an
 * address range of its own laid out as
 *
 *     [ head: private, the K hot weights at its end | cold: SHARED | bias page: private ]
 *
 * The cold part of every view is the same physical memory: one memfd mapped
 * at a page-aligned offset into each thread's range (MAP_SHARED), the head
 * and the bias page are private anonymous memory. The training data get
 * remapped column indices (hot feature of rank r, in ascending original
 * order, at head - K + r; cold feature j at head + its rank among the cold
 * ones; each row keeps its entries' order, so one thread's arithmetic is the
 * plain run's), and the kernel runs unchanged, with every loss, schedule,
 * regularizer and the none, atomic and mutex update modes, on the thread's
 * view. (striped is refused: its deadlock freedom needs ascending indices
 * in each row, which the remap does not keep.)
 *
 * Folding back, at the end of every segment (every sync_every rows or epoch,
 * after the barrier at which all weights are brought up to date): each hot
 * weight becomes the AVERAGE of the threads' copies, each weighted by the
 * n_p rows its thread ran in the segment (n = sum_p n_p),
 *
 *     w_new = R(b) + sum_p (n_p/n) (w_p - R(b)) = sum_p (n_p/n) w_p,
 *
 * b the weight at the last fold and R(b) what the segment's regularization
 * alone makes of it (threads claim each other's rows when they run out of
 * their own, so the n_p differ: a copy that ran few rows has moved little
 * from b, and an equal vote for it would pull the hot weights back towards
 * b), and each AdaGrad accumulator the SUM b + sum_p (g_p - b)
 * (every thread's accumulator is its own between folds; the sum holds all
 * squared gradients, as the serial one does, so the rate is serial SGD's).
 * Why the average and not the sum of the deltas: a thread's copy of a hot
 * weight is a whole SGD trajectory driven by the loss on its own rows, and
 * the copies of a frequent feature all move towards the same value (the
 * bias is corrected by every row), so adding up their moves applies that
 * correction T times, and the objective moves far from serial SGD's at
 * any fold period, where the average ends at serial's objective and test
 * accuracy (measured in docs/bench-log/hogwild.md, "Figures moved out of
 * code comments"). Averaging the hot block is local SGD on those coordinates
 * (Stich, ICLR 2019; DimmWitted's replicas, restricted to the features that
 * need them); the cold ones keep Hogwild!'s every-step sharing. With one
 * thread w_new = n_0 w_0 / n_0 = w_0 exactly, so the model equals plain
 * Hogwild!'s bit for bit when the folds fall at the epochs' ends (a fold
 * inside an epoch also ends a lazy-regularization segment, which changes
 * the rounding of the catch-ups, not the maths).
 *
 * Lazy regularization. Each view carries its own stamps for the private
 * weights (the cold stamps are shared like the cold weights). The prefixes
 * of the segment are the master's (one schedule), so a private weight is
 * caught up over every step of the segment, its own thread's and the
 * others' alike: every copy carries the whole segment's regularization, so
 * their average is the regularized average (exact where the maps are
 * linear: l2, the scaled representation; with l1 the usual first-order
 * approximation). At the segment's end all views are caught up and their
 * stamps reset before the fold, so the fold works on true weights.
 */
#include "hogwild/hogwild.h"

#include "core/sgd.h"
#include "core/sparse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static uint64_t round_up(uint64_t x, uint64_t m) { return (x + m - 1) / m * m; }

struct degree {
    uint64_t n;
    uint32_t j;
};

/* Descending degree, then ascending feature. */
static int by_degree(const void *a, const void *b)
{
    const struct degree *x = a, *y = b;
    if (x->n != y->n)
        return x->n < y->n ? 1 : -1;
    return (x->j > y->j) - (x->j < y->j);
}

/* A view's range: private anonymous memory with the cold part replaced by
 * the shared memfd (fd < 0: all private, the base view). */
static void *map_view(const struct hog_hot *h, int fd)
{
    size_t bytes = h->span * 4, head = h->head * 4, cold = h->cold_pad * 4;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    if (fd >= 0 && cold &&
        mmap((char *)p + head, cold, PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
        munmap(p, bytes);
        return NULL;
    }
    return p;
}

/* Chooses the hot set and the remapped indices. */
static hog_status choose(struct hog_hot *h, const hog_data *d, uint64_t want,
                         hog_err *err)
{
    const uint64_t nf = d->n_features, n = d->m.rows;
    struct degree *deg = calloc(nf ? nf : 1, sizeof *deg);
    h->map = malloc((nf ? nf : 1) * sizeof *h->map);
    if (!deg || !h->map) {
        free(deg);
        return hog_errf(err, HOG_ENOMEM, "out of memory for the degrees of "
                        "%llu features", (unsigned long long)nf);
    }
    const uint64_t e0 = d->m.off[0], e1 = d->m.off[n];
    for (uint64_t j = 0; j < nf; j++)
        deg[j].j = (uint32_t)j;
    for (uint64_t e = e0; e < e1; e++)
        deg[d->m.idx[e]].n++;
    qsort(deg, nf, sizeof *deg, by_degree);
    uint64_t k = 0;
    if (want == HOG_HOT_AUTO) {
        /* a feature in 1/32 of the rows is written by another thread
         * every few dozen of this thread's rows */
        while (k < nf && k < HOG_HOT_AUTO_MAX && deg[k].n > 0 &&
               deg[k].n * 32 >= n)
            k++;
    } else {
        k = want < nf ? want : nf;
    }
    uint64_t hot_nnz = 0;
    memset(h->map, 0, nf * sizeof *h->map);
    for (uint64_t r = 0; r < k; r++) {
        h->map[deg[r].j] = 1;
        hot_nnz += deg[r].n;
    }
    free(deg);
    h->k = k;
    h->nnz_share = e1 > e0 ? (double)hot_nnz / (double)(e1 - e0) : 0.0;

    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE) / 4;
    h->head = round_up(k ? k : 1, page);
    h->cold = nf - k;
    h->cold_pad = round_up(h->cold, page);
    h->n_features = h->head + h->cold_pad;
    h->span = h->n_features + (h->bias ? page : 0);
    if (h->n_features >= UINT32_MAX)
        return hog_errf(err, HOG_EINVAL, "too many features (%llu) for hot "
                        "replicas", (unsigned long long)nf);
    uint64_t hr = h->head - k, cr = h->head;
    for (uint64_t j = 0; j < nf; j++)
        h->map[j] = (uint32_t)(h->map[j] ? hr++ : cr++);
    return HOG_OK;
}

hog_status hog_hot_init(struct hog_hot *h, const hog_data *d,
                        const struct hog_sgd *master, uint64_t want,
                        unsigned threads, hog_err *err)
{
    double t0 = hog_now();
    memset(h, 0, sizeof *h);
    h->bias = master->bias != 0.0;
    h->nviews = threads + 1;
    hog_status st = choose(h, d, want, err);
    if (st != HOG_OK)
        return st;

    /* the rows' entries are [off[0], off[rows]) of the arrays */
    const uint64_t e0 = d->m.off[0], e1 = d->m.off[d->m.rows];
    uint32_t *idx = malloc((e1 ? e1 : 1) * sizeof *idx);
    if (!idx)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the remapped "
                        "indices of %llu nonzeros",
                        (unsigned long long)(e1 - e0));
    for (uint64_t e = e0; e < e1; e++)
        idx[e] = h->map[d->m.idx[e]];
    h->idx = idx;
    h->data = *d;
    h->data.m.idx = idx;
    h->data.n_features = h->n_features;
    memset(h->data.mem, 0, sizeof h->data.mem); /* d owns its arrays */

    if (!(h->ran = calloc(threads, sizeof *h->ran)))
        goto oom;
    /* the arrays the master has: weights, stamps, accumulators */
    const void *has[3] = { master->w, master->stamp, master->g2 };
    for (int a = 0; a < 3; a++) {
        h->view[a] = calloc(h->nviews, sizeof *h->view[a]);
        if (!h->view[a])
            goto oom;
        if (!has[a])
            continue;
        int fd = memfd_create("hogtrain-cold", MFD_CLOEXEC);
        if (fd < 0)
            return hog_errf(err, HOG_EIO, "hot replicas: memfd_create: %s",
                            strerror(errno));
        if (ftruncate(fd, (off_t)(h->cold_pad * 4)) != 0) {
            close(fd);
            return hog_errf(err, HOG_ENOMEM, "hot replicas: %llu bytes of "
                            "shared weights: %s",
                            (unsigned long long)h->cold_pad * 4,
                            strerror(errno));
        }
        for (unsigned v = 0; v < h->nviews; v++)
            if (!(h->view[a][v] = map_view(h, v < threads ? fd : -1))) {
                close(fd);
                goto oom;
            }
        close(fd); /* the mappings keep the memory */
    }
    h->setup_seconds = hog_now() - t0;
    return HOG_OK;
oom:
    return hog_errf(err, HOG_ENOMEM, "out of memory for %u hot-feature "
                    "views of %llu weights", h->nviews,
                    (unsigned long long)h->span);
}

void hog_hot_free(struct hog_hot *h)
{
    for (int a = 0; a < 3; a++) {
        if (h->view[a])
            for (unsigned v = 0; v < h->nviews; v++)
                if (h->view[a][v])
                    munmap(h->view[a][v], h->span * 4);
        free(h->view[a]);
        h->view[a] = NULL;
    }
    free(h->map);
    free(h->idx);
    free(h->ran);
    h->ran = NULL;
    h->map = NULL;
    h->idx = NULL;
}

void hog_hot_view(const struct hog_hot *h, const struct hog_sgd *master,
                  unsigned v, struct hog_sgd *out)
{
    *out = *master;
    out->w = h->view[0][v];
    out->stamp = h->view[1][v];
    out->g2 = h->view[2][v];
    out->n_features = h->n_features;
    out->n_weights = h->n_features + h->bias;
}

/* The private indices, hot weights and bias, as [lo, hi) of 0..K(+1). */
static uint64_t hot_index(const struct hog_hot *h, uint64_t i)
{
    return i < h->k ? h->head - h->k + i : h->n_features;
}

void hog_hot_catch_up_private(struct hog_hot *h, struct hog_sgd *mine,
                              uint32_t len)
{
    hog_sgd_catch_up_range(mine, h->head - h->k, h->head, len);
    if (h->bias)
        hog_sgd_catch_up_range(mine, h->n_features, h->n_features + 1, len);
}

void hog_hot_segment_end(struct hog_hot *h, struct hog_sgd *mine,
                         unsigned tid, unsigned T, uint32_t len)
{
    uint64_t lo, hi;
    /* its share of the cold weights (one memory behind every view) */
    hog_slice(h->cold, tid, T, &lo, &hi);
    hog_sgd_catch_up_range(mine, h->head + lo, h->head + hi, len);
}

void hog_hot_fold(struct hog_hot *h, unsigned tid, unsigned T)
{
    uint64_t lo, hi, nh = h->k + h->bias;
    hog_slice(nh, tid, T, &lo, &hi);
    void *const *w0 = h->view[0], *const *g0 = h->view[2];
#define W(p) ((_Atomic float *)w0[p])
#define G(p) ((_Atomic float *)g0[p])
    double n = 0; /* rows, exact in double */
    for (unsigned p = 0; p < T; p++)
        n += (double)h->ran[p];
    for (uint64_t i = lo; i < hi; i++) {
        uint64_t j = hot_index(h, i);
        /* R(b) + sum_p (n_p/n) (w_p - R(b)) = sum_p (n_p/n) w_p */
        double acc = 0;
        for (unsigned p = 0; p < T; p++)
            acc += n > 0 ? (double)h->ran[p] * hog_w_load_relaxed(W(p), j)
                         : hog_w_load_relaxed(W(p), j);
        /* one thread: n_0 w_0 / n_0 is w_0 exactly (both factors fit the
         * 53 bits of a double) */
        float nv = (float)(acc / (n > 0 ? n : T));
        for (unsigned p = 0; p <= T; p++)
            atomic_store_explicit(&W(p)[j], nv, memory_order_relaxed);
        if (g0[0]) {
            /* the accumulators: b + sum_p (g_p - b) */
            double gb = hog_w_load_relaxed(G(T), j);
            double ga = hog_w_load_relaxed(G(0), j);
            for (unsigned p = 1; p < T; p++)
                ga += (double)hog_w_load_relaxed(G(p), j) - gb;
            float ng = (float)ga;
            for (unsigned p = 0; p <= T; p++)
                atomic_store_explicit(&G(p)[j], ng, memory_order_relaxed);
        }
    }
#undef W
#undef G
}

void hog_hot_model(const struct hog_hot *h, uint64_t lo, uint64_t hi,
                   uint64_t n_features, float *out)
{
    const _Atomic float *w = h->view[0][0];
    for (uint64_t j = lo; j < hi; j++)
        out[j] = hog_w_load_relaxed(w, j < n_features ? h->map[j]
                                                      : h->n_features);
}

void hog_hot_g2(const struct hog_hot *h, uint64_t n_weights,
                uint64_t n_features, float *out)
{
    const _Atomic float *g = h->view[2][0];
    for (uint64_t j = 0; j < n_weights; j++)
        out[j] = g ? hog_w_load_relaxed(g, j < n_features ? h->map[j]
                                                          : h->n_features)
                   : 0.0f;
}
