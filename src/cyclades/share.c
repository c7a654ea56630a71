/*
 * What one-vs-rest's classes share (core/fit.h, struct hog_fit_share):
 * every class's Cyclades run would make the same hot set and cold and hot
 * views (they depend on the rows, the options and the thread count, not
 * on the labels) and, from the same seed, the same first order and its
 * partition (the permutation, the batches' components and the hot
 * layout). On news20's 20 classes that was about 40% of the run, much of
 * it page faults on the layout's 24 bytes per hot nonzero, made again by
 * every class. So the first class to get here builds them, holding the
 * share's lock, and hands them to the share; the others take them as
 * they are, read only. A class that has to write its order (a
 * repartition) first takes a copy of its own (hog_cyc_own_order); one
 * that resumes, or starts from a warm state, replays its orders from the
 * seed into arrays of its own and shares only the views.
 *
 * The share is a snapshot of its builder's struct cyc: the views' and the
 * order's fields are read from it (take_views, take_order) and it frees
 * them (share_free) when one-vs-rest is done. A run whose rows, options
 * or thread count differ from the share's key builds its own.
 */
#include "cyclades/internal.h"

#include <stdlib.h>
#include <string.h>

/* What the views and the first order depend on. Not the weights' offset
 * into their first cache line, by which deal_lines gives hot weights to
 * groups (malloc puts each class's weights where it likes): the group
 * that steps a weight changes no bit of the model; a class whose weights
 * sit elsewhere in their first line may find two groups' weights in one
 * line, which costs time only, and only with more than one thread. */
struct cyc_key {
    const uint64_t *off;
    const uint32_t *idx;
    const float *val;
    uint64_t n, nf, B, seed, hot_degree;
    double bias;
    unsigned T, G;
    int loss;
    unsigned softmax;
};

struct cyc_share {
    struct cyc c; /* its builder, as it stood when it gave them */
    struct cyc_key key;
    bool views, order;   /* what c holds for the share */
    struct hog_rng rows; /* after epoch 1's shuffle */
    /* runs that built the views, that took them, that took the order */
    uint64_t built, took_views, took_order;
};

static struct cyc_key key_of(const struct cyc *c)
{
    struct cyc_key k;
    k.off = c->d->m.off;
    k.idx = c->d->m.idx;
    k.val = c->d->m.val;
    k.n = c->n;
    k.nf = c->nf;
    k.B = c->B;
    k.seed = c->o->seed;
    k.hot_degree = c->o->cyclades_hot_degree;
    k.bias = c->o->bias;
    k.T = c->T;
    k.G = c->G;
    k.loss = (int)c->s.loss;
    k.softmax = c->softmax;
    return k;
}

static bool key_equal(const struct cyc_key *a, const struct cyc_key *b)
{
    return a->off == b->off && a->idx == b->idx && a->val == b->val &&
           a->n == b->n && a->nf == b->nf && a->B == b->B &&
           a->seed == b->seed && a->hot_degree == b->hot_degree &&
           a->bias == b->bias && a->T == b->T &&
           a->G == b->G && a->loss == b->loss && a->softmax == b->softmax;
}

static void share_free(void *p)
{
    struct cyc_share *sh = p;
    if (sh->views)
        hog_cyc_free_views(&sh->c);
    if (sh->order)
        hog_cyc_free_order(&sh->c);
    free(sh);
}

static void take_views(struct cyc *c, const struct cyc_share *sh)
{
    const struct cyc *s = &sh->c;
    c->tau = s->tau;
    c->nh = s->nh;
    c->bias_hot = s->bias_hot;
    c->curv = s->curv;
    c->hot_nnz = s->hot_nnz;
    c->hot_owner = s->hot_owner;
    c->cold = s->cold;
    c->cold_off = s->cold_off;
    c->cold_idx = s->cold_idx;
    c->cold_val = s->cold_val;
    c->hot_off = s->hot_off;
    c->hot_j = s->hot_j;
    c->hot_x = s->hot_x;
    c->hot_alias = s->hot_alias;
    c->hot_l1 = s->hot_l1;
    c->st.hot_features = s->st.hot_features;
    c->st.hot_nnz_share = s->st.hot_nnz_share;
    c->views_shared = true;
}

/* Epoch 1's order as hog_cyc_first_order leaves it: the permutation and
 * its partition, the batches in order, *rows after the shuffle, and the
 * partition's statistics (this run spent no time on it). */
static void take_order(struct cyc *c, const struct cyc_share *sh,
                       struct hog_rng *rows)
{
    const struct cyc *s = &sh->c;
    free(c->perm); /* hog_cyc_prepare's */
    c->perm = s->perm;
    c->pos = s->pos;
    c->boff = s->boff;
    c->pl1 = s->pl1;
    c->eoff = s->eoff;
    c->roff = s->roff;
    c->bslot = s->bslot;
    c->ent = s->ent;
    c->rec = s->rec;
    c->order_shared = true;
    for (uint64_t b = 0; b < c->nb; b++)
        c->visit[b] = b;
    *rows = sh->rows;
    c->st = s->st;
    c->st.partition_seconds = 0;
    c->first_drawn = true;
}

/* The views built by this run, given to sh (when not NULL). */
static hog_status build_views(struct cyc *c, struct cyc_share *sh,
                              hog_err *err)
{
    hog_status st = hog_cyc_setup_hot(c, err);
    if (st != HOG_OK || !sh)
        return st;
    memcpy(&sh->c, c, sizeof *c);
    sh->views = true;
    sh->built++;
    c->views_shared = true;
    return HOG_OK;
}

/* The partition's arrays and (fresh) epoch 1's order, built by this run,
 * the order given to sh (when not NULL). */
static hog_status build_order(struct cyc *c, bool fresh, struct hog_rng *rows,
                              struct hog_rng *batches, struct cyc_share *sh,
                              hog_err *err)
{
    hog_status st = hog_cyc_alloc_partition(c, err);
    if (st != HOG_OK || !fresh)
        return st;
    hog_cyc_first_order(c, rows, batches);
    if (sh) {
        memcpy(&sh->c, c, sizeof *c);
        sh->rows = *rows;
        sh->order = true;
        c->order_shared = true;
    }
    return HOG_OK;
}

hog_status hog_cyc_setup_shared(struct cyc *c, bool fresh,
                                struct hog_rng *rows, struct hog_rng *batches,
                                hog_err *err)
{
    struct hog_fit_share *fs = c->f->share;
    struct cyc_share *sh = NULL;
    if (fs) {
        const struct cyc_key key = key_of(c);
        pthread_mutex_lock(&fs->lock);
        sh = fs->p;
        if (!sh && (sh = aligned_alloc(HOG_CACHELINE,
                                       (sizeof *sh + HOG_CACHELINE - 1) /
                                           HOG_CACHELINE * HOG_CACHELINE))) {
            memset(sh, 0, sizeof *sh);
            sh->key = key;
            fs->p = sh;
            fs->free_p = share_free;
        }
        /* out of memory for the share, or another key: built alone */
        if (sh && !key_equal(&sh->key, &key))
            sh = NULL;
    }
    hog_status st = HOG_OK;
    if (sh && sh->views) {
        take_views(c, sh);
        sh->took_views++;
    } else {
        st = build_views(c, sh, err);
    }
    /* the hot phase's scratch, which the partition uses too */
    if (st == HOG_OK)
        st = hog_cyc_alloc_hot_scratch(c, err);
    if (st == HOG_OK && sh && sh->order && fresh) {
        take_order(c, sh, rows);
        sh->took_order++;
    } else if (st == HOG_OK) {
        st = build_order(c, fresh, rows, batches, sh, err);
    }
    if (fs)
        pthread_mutex_unlock(&fs->lock);
    return st;
}

hog_status hog_cyc_own_order(struct cyc *c, hog_err *err)
{
    if (!c->order_shared)
        return HOG_OK;
    const uint64_t *perm = c->perm;
    c->perm = c->pos = c->boff = c->eoff = c->roff = NULL;
    c->pl1 = NULL;
    c->bslot = NULL;
    c->ent = NULL;
    c->rec = NULL;
    c->order_shared = false; /* what is allocated below is this run's */
    if (!(c->perm = malloc(c->n * sizeof *c->perm)))
        return hog_errf(err, HOG_ENOMEM, "out of memory for the row order");
    memcpy(c->perm, perm, c->n * sizeof *c->perm);
    return hog_cyc_alloc_partition(c, err);
}

void hog_cyclades_share_counts(struct hog_fit_share *s, uint64_t *built,
                               uint64_t *took_views, uint64_t *took_order)
{
    pthread_mutex_lock(&s->lock);
    const struct cyc_share *sh = s->free_p == share_free ? s->p : NULL;
    *built = sh ? sh->built : 0;
    *took_views = sh ? sh->took_views : 0;
    *took_order = sh ? sh->took_order : 0;
    pthread_mutex_unlock(&s->lock);
}
