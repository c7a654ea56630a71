/* The results a caller allocates and the library fills (include/hogtrain.h:
 * the *_stats structs, hog_cv_result, hog_search_result, hog_hashing).
 * Each starts with the caller's sizeof: a caller built against an older,
 * shorter struct gets the fields within its size and not one byte past
 * it, and a size no build of the struct ever had is refused with a
 * sentence. Every struct is filled into a buffer of canary bytes, its
 * size set to a prefix; the bytes past the prefix must stay canaries,
 * while the full size (the control) overwrites some of them. */
#include <criterion/criterion.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"
#include "hogtrain.h"

#define CANARY 0xAB
#define ROOM 64 /* canary bytes past the library's struct */

/* Fills out (a struct whose size field is set) the way a caller would;
 * size is out's size, so that fill sets the struct's inputs only where
 * they fall within it. */
typedef hog_status (*fill_fn)(void *out, size_t size, hog_err *err);

static hog_data *heart(void)
{
    const char *path = th_data("heart_scale");
    if (!path)
        return NULL;
    return th_load(path);
}

/* A buffer of canaries, its size field `size`. */
static void canaries(unsigned char *buf, size_t len, size_t size)
{
    memset(buf, CANARY, len);
    memcpy(buf, &size, sizeof size);
}

static bool canaries_from(const unsigned char *buf, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (buf[i] != CANARY)
            return false;
    return true;
}

/* The contract for a struct of `full` bytes whose older build ends at
 * `prefix` (an offsetof); refuses: whether a bad size is HOG_EINVAL (a
 * getter has no status: it writes nothing then). */
static void check_sizes(const char *name, fill_fn fill, size_t full,
                        size_t prefix, bool refuses)
{
    alignas(max_align_t) unsigned char buf[4096];
    cr_assert_leq(full + ROOM, sizeof buf);
    const size_t len = full + ROOM;
    hog_err err = { { 0 } };

    /* the control: the full size writes past the prefix */
    canaries(buf, len, full);
    cr_assert_eq(fill(buf, full, &err), HOG_OK, "%s: %s", name, err.msg);
    cr_assert(!canaries_from(buf, prefix, full),
              "%s: the full struct wrote nothing past offset %zu, so the "
              "prefix check below would prove nothing", name, prefix);
    cr_assert(canaries_from(buf, full, len),
              "%s: written past sizeof (%zu)", name, full);

    /* the older, shorter struct: its prefix and nothing past it */
    canaries(buf, len, prefix);
    cr_assert_eq(fill(buf, prefix, &err), HOG_OK, "%s: %s", name, err.msg);
    cr_assert(!canaries_from(buf, sizeof(size_t), prefix),
              "%s: nothing written within the size %zu", name, prefix);
    cr_assert(canaries_from(buf, prefix, len),
              "%s: a caller of size %zu had bytes past it written", name,
              prefix);
    size_t kept;
    memcpy(&kept, buf, sizeof kept);
    cr_assert_eq(kept, prefix, "%s: the caller's size was changed", name);

    /* sizes no build of the struct had */
    const size_t bad[] = { 0, sizeof(size_t) - 1, full + 1, 0xABABABAB };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        canaries(buf, len, bad[i]);
        err.msg[0] = '\0';
        hog_status st = fill(buf, bad[i], &err);
        if (refuses) {
            cr_assert_eq(st, HOG_EINVAL, "%s: size %zu: %s", name, bad[i],
                         hog_status_str(st));
            cr_assert_not_null(strstr(err.msg, name),
                               "%s: size %zu: the sentence \"%s\" does not "
                               "name the struct", name, bad[i], err.msg);
            cr_assert_not_null(strstr(err.msg, "sizeof"), "%s", err.msg);
            cr_assert(canaries_from(buf, sizeof(size_t), len),
                      "%s: size %zu refused, yet written", name, bad[i]);
        } else if (bad[i] <= sizeof(size_t)) {
            cr_assert(canaries_from(buf, sizeof(size_t), len),
                      "%s: size %zu, yet written", name, bad[i]);
        }
    }
}

/* ---- the stats the training hooks point to --------------------------------- */

static hog_status train_with(hog_train_opts *o, const hog_train_hooks *h,
                             hog_err *err)
{
    hog_data *d = heart();
    hog_model *m = NULL;
    o->epochs = 2;
    hog_status st = hog_train(d, NULL, o, h, &m, err);
    hog_model_free(m);
    hog_data_free(d);
    return st;
}

static hog_status fill_hot(void *out, size_t size, hog_err *err)
{
    (void)size;
    hog_train_opts o;
    hog_train_opts_init(&o);
    hog_train_hooks h = { .size = sizeof h };
    o.algo = HOG_ALGO_HOGWILD;
    o.threads = 1;
    o.hot_features = 4;
    h.hot_stats = out;
    return train_with(&o, &h, err);
}

static hog_status fill_cyclades(void *out, size_t size, hog_err *err)
{
    (void)size;
    hog_train_opts o;
    hog_train_opts_init(&o);
    hog_train_hooks h = { .size = sizeof h };
    o.algo = HOG_ALGO_CYCLADES;
    o.threads = 2;
    h.cyclades_stats = out;
    return train_with(&o, &h, err);
}

static hog_status fill_valid(void *out, size_t size, hog_err *err)
{
    (void)size;
    hog_train_opts o;
    hog_train_opts_init(&o);
    hog_train_hooks h = { .size = sizeof h };
    o.holdout = 0.25;
    h.valid_stats = out;
    return train_with(&o, &h, err);
}

static char hgb_path[1024];

static hog_status fill_stream(void *out, size_t size, hog_err *err)
{
    (void)size;
    hog_train_opts o;
    hog_train_opts_init(&o);
    hog_train_hooks h = { .size = sizeof h };
    o.epochs = 2;
    h.stream_stats = out;
    hog_model *m = NULL;
    hog_status st = hog_train_stream(hgb_path, NULL, &o, &h, &m, err);
    hog_model_free(m);
    return st;
}

Test(abi, hot_stats_written_within_the_callers_size)
{
    TH_DATA_OR_SKIP(path, "heart_scale");
    (void)path;
    check_sizes("hog_hot_stats", fill_hot, sizeof(hog_hot_stats),
                offsetof(hog_hot_stats, folds), true);
}

Test(abi, cyclades_stats_written_within_the_callers_size)
{
    TH_DATA_OR_SKIP(path, "heart_scale");
    (void)path;
    check_sizes("hog_cyclades_stats", fill_cyclades,
                sizeof(hog_cyclades_stats),
                offsetof(hog_cyclades_stats, partitions), true);
}

Test(abi, valid_stats_written_within_the_callers_size)
{
    TH_DATA_OR_SKIP(path, "heart_scale");
    (void)path;
    check_sizes("hog_valid_stats", fill_valid, sizeof(hog_valid_stats),
                offsetof(hog_valid_stats, best_epoch), true);
}

Test(abi, stream_stats_written_within_the_callers_size)
{
    TH_DATA_OR_SKIP(path, "heart_scale");
    hog_data *d = th_load(path);
    char dir[512];
    th_tmpdir(dir, sizeof dir);
    snprintf(hgb_path, sizeof hgb_path, "%s/heart.hgb", dir);
    hog_err err;
    cr_assert_eq(hog_data_save_hgb(d, hgb_path, &err), HOG_OK, "%s",
                 err.msg);
    hog_data_free(d);
    check_sizes("hog_stream_stats", fill_stream, sizeof(hog_stream_stats),
                offsetof(hog_stream_stats, ring_bytes), true);
}

/* ---- cross-validation and the search of C ----------------------------------- */

static hog_status fill_cv(void *out, size_t size, hog_err *err)
{
    hog_cv_result *r = out;
    if (size >= offsetof(hog_cv_result, fold) + sizeof r->fold &&
        size <= sizeof *r)
        r->fold = NULL;
    hog_data *d = heart();
    hog_train_opts o;
    hog_train_opts_init(&o);
    o.epochs = 2;
    hog_status st = hog_cross_validate(d, &o, NULL, 3, r, err);
    hog_data_free(d);
    return st;
}

Test(abi, cv_result_written_within_the_callers_size)
{
    TH_DATA_OR_SKIP(path, "heart_scale");
    (void)path;
    /* the fold pointer past the size is a canary, not an array to fill */
    check_sizes("hog_cv_result", fill_cv, sizeof(hog_cv_result),
                offsetof(hog_cv_result, fold), true);
    check_sizes("hog_cv_result", fill_cv, sizeof(hog_cv_result),
                offsetof(hog_cv_result, macro_f1), true);
}

/* 1/64 .. 1/4 by 2: five values of C */
static hog_status search(hog_search_result *r, hog_err *err)
{
    hog_data *d = heart();
    hog_train_opts o;
    hog_train_opts_init(&o);
    o.epochs = 1;
    hog_search_opts so;
    hog_search_opts_init(&so);
    so.C_min = 1.0 / 64;
    so.C_max = 0.25;
    so.patience = 0;
    hog_status st = hog_search_C(d, &o, NULL, 3, &so, r, err);
    hog_data_free(d);
    return st;
}

static hog_status fill_search(void *out, size_t size, hog_err *err)
{
    hog_search_result *r = out;
    if (size >= offsetof(hog_search_result, steps) && size <= sizeof *r) {
        r->step = NULL;
        r->step_cap = 0;
    }
    return search(r, err);
}

Test(abi, search_result_written_within_the_callers_size)
{
    TH_DATA_OR_SKIP(path, "heart_scale");
    (void)path;
    check_sizes("hog_search_result", fill_search, sizeof(hog_search_result),
                offsetof(hog_search_result, best_step), true);
}

/* More values of C than the caller's array holds: the first step_cap are
 * stored, the search goes on, steps counts them all, and best and
 * best_step are the whole path's. */
Test(abi, search_steps_past_the_capacity_are_counted_not_stored)
{
    TH_DATA_OR_SKIP(path, "heart_scale");
    (void)path;
    hog_err err;
    hog_search_step all[HOG_SEARCH_MAX_STEPS];
    hog_search_result full = { .size = sizeof full, .step = all,
                               .step_cap = HOG_SEARCH_MAX_STEPS };
    cr_assert_eq(search(&full, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(full.steps, 5);

    hog_search_step few[3];
    memset(few, CANARY, sizeof few);
    hog_search_result r = { .size = sizeof r, .step = few, .step_cap = 2 };
    cr_assert_eq(search(&r, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(r.steps, 5, "the search stopped at its array: %u", r.steps);
    for (unsigned i = 0; i < 2; i++) {
        cr_assert_eq(few[i].C, all[i].C);
        cr_assert_eq(few[i].accuracy, all[i].accuracy);
    }
    cr_assert(canaries_from((const unsigned char *)&few[2], 0, sizeof few[2]),
              "a step written past step_cap");
    cr_assert_eq(r.best, full.best);
    cr_assert_eq(r.best_C, full.best_C);
    cr_assert_eq(r.best_step.C, all[full.best].C);
    cr_assert_eq(r.best_step.accuracy, all[full.best].accuracy);

    /* no array at all: LIBLINEAR's use, the best C and its figures */
    hog_search_result bare = { .size = sizeof bare };
    cr_assert_eq(search(&bare, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(bare.best_C, full.best_C);
    cr_assert_eq(bare.best_step.accuracy, full.best_step.accuracy);

    /* a capacity without an array is a mistake, said so */
    hog_search_result lost = { .size = sizeof lost, .step_cap = 4 };
    cr_assert_eq(search(&lost, &err), HOG_EINVAL);
    cr_assert_not_null(strstr(err.msg, "step_cap is 4 but step is NULL"),
                       "%s", err.msg);
}

/* ---- the hashing of a data set (a getter) ----------------------------------- */

static hog_status fill_hashing(void *out, size_t size, hog_err *err)
{
    (void)size;
    hog_load_opts lo;
    hog_load_opts_init(&lo);
    lo.hash_bits = 3; /* 13 features into 8 weights: collisions */
    hog_data *d;
    hog_status st = hog_data_load(th_data("heart_scale"), &lo, &d, err);
    if (st != HOG_OK)
        return st;
    hog_data_hashing(d, out);
    hog_data_free(d);
    return HOG_OK;
}

Test(abi, hashing_written_within_the_callers_size)
{
    TH_DATA_OR_SKIP(path, "heart_scale");
    (void)path;
    check_sizes("hog_hashing", fill_hashing, sizeof(hog_hashing),
                offsetof(hog_hashing, collisions), false);
}

/* ---- what the library hands the progress callback --------------------------- */

static void on_epoch(void *ctx, unsigned epoch, unsigned epochs,
                     uint64_t done, uint64_t total, const hog_epoch_stats *s)
{
    (void)epoch, (void)epochs, (void)done, (void)total;
    if (s)
        *(size_t *)ctx = s->size;
}

Test(abi, epoch_stats_carry_the_librarys_size)
{
    TH_DATA_OR_SKIP(path, "heart_scale");
    hog_data *d = th_load(path);
    hog_train_opts o;
    hog_train_opts_init(&o);
    o.epochs = 1;
    size_t seen = 0;
    hog_train_hooks h = { .size = sizeof h, .progress = on_epoch,
                          .progress_ctx = &seen };
    hog_model_free(th_train_hooked(d, &o, &h));
    hog_data_free(d);
    cr_assert_eq(seen, sizeof(hog_epoch_stats));
}

/* ---- the hooks, size-first as the options ----------------------------------- */

/* A caller built against a shorter hog_train_hooks: the fields past its
 * size are none, however they read (here a raised cancel flag); a size
 * that is none of the struct's is refused with a sentence. */
Test(abi, hooks_past_the_callers_size_are_none)
{
    TH_DATA_OR_SKIP(path, "heart_scale");
    hog_data *d = th_load(path);
    hog_train_opts o;
    hog_train_opts_init(&o);
    o.epochs = 1;
    volatile sig_atomic_t flag = 1;
    hog_train_hooks h = { .size = sizeof h, .cancel = &flag };
    hog_model *m = NULL;
    hog_err err;
    cr_assert_eq(hog_train(d, NULL, &o, &h, &m, &err), HOG_EINTR, "%s",
                 err.msg);
    h.size = offsetof(hog_train_hooks, cancel);
    cr_assert_eq(hog_train(d, NULL, &o, &h, &m, &err), HOG_OK, "%s", err.msg);
    hog_model_free(m);
    size_t bad[] = { 0, sizeof(size_t) - 1, sizeof h + 1 };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        h.size = bad[i];
        cr_assert_eq(hog_train(d, NULL, &o, &h, &m, &err), HOG_EINVAL);
        cr_assert(strstr(err.msg, "hog_train_hooks.size"), "%s", err.msg);
        cr_assert_null(m);
    }
    hog_data_free(d);
}
