/* The algorithms' table (src/train/algos.c): the library refuses an option
 * an algorithm does not take with the same sentence as the command, and
 * every row's capabilities are what its trainer honours. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "train/train.h"

static hog_status no_average(void *ctx, float *w, uint64_t n, hog_err *err)
{
    return HOG_OK;
}

/* What each capability looks like in hog_train_opts and the hooks, set on
 * o and h. */
static void ask_for(hog_train_opts *o, hog_train_hooks *h, unsigned cap)
{
    switch (cap) {
    case HOG_CAP_THREADS: o->threads = 2; break;
    case HOG_CAP_UPDATE: o->update = HOG_UPDATE_ATOMIC; break;
    case HOG_CAP_REPLICAS: o->replicas = HOG_REPLICAS_CORE; break;
    case HOG_CAP_CHECKPOINT: o->checkpoint = "unused.ck"; break;
    case HOG_CAP_WORLD: h->average = no_average; o->average_blocks = 1; break;
    }
}

/* Four rows, three features; hog_data_wrap takes the arrays. */
static hog_data *tiny(void)
{
    static const uint64_t off[] = { 0, 2, 3, 5, 6 };
    static const float y[] = { 1, -1, 1, -1 };
    static const uint32_t idx[] = { 0, 1, 1, 0, 2, 2 };
    static const float val[] = { 1, 0.5f, -1, 2, 1, -0.5f };
    uint64_t *o = malloc(sizeof off);
    float *yy = malloc(sizeof y), *v = malloc(sizeof val);
    uint32_t *j = malloc(sizeof idx);
    cr_assert(o && yy && v && j);
    memcpy(o, off, sizeof off);
    memcpy(yy, y, sizeof y);
    memcpy(j, idx, sizeof idx);
    memcpy(v, val, sizeof val);
    hog_data *d;
    cr_assert_eq(hog_data_wrap(4, 6, o, yy, j, v, 3, &d, NULL), HOG_OK);
    hog_data_scan_labels(d);
    return d;
}

/* Every (algorithm, capability) pair: validation accepts exactly the
 * capabilities of the algorithm's row (those that change what a trainer
 * computes; the knobs are the command's to refuse). */
Test(algos, validation_follows_the_table)
{
    static const unsigned caps[] = {
        HOG_CAP_THREADS, HOG_CAP_UPDATE, HOG_CAP_REPLICAS,
        HOG_CAP_CHECKPOINT, HOG_CAP_WORLD,
    };
    hog_data *d = tiny();
    unsigned rows = 0;
    for (int a = 0; hog_algo_row((hog_algo)a); a++, rows++) {
        const struct hog_algo_row *r = hog_algo_row((hog_algo)a);
        for (size_t i = 0; i < sizeof caps / sizeof *caps; i++) {
            hog_train_opts o;
            th_opts_init(&o);
            o.algo = (hog_algo)a;
            hog_train_hooks h = { .size = sizeof h };
            ask_for(&o, &h, caps[i]);
            cr_assert_eq(hog_train_opts_caps(&o, &h), caps[i],
                         "capability %#x is not seen in the options",
                         caps[i]);
            hog_err err;
            hog_status st = hog_train_validate(&o, &h, d, &err);
            if (r->caps & caps[i]) {
                cr_expect_eq(st, HOG_OK, "%s refused %#x: %s", r->name,
                             caps[i], err.msg);
            } else {
                cr_expect_eq(st, HOG_EINVAL, "%s accepted %#x", r->name,
                             caps[i]);
                char tail[64];
                snprintf(tail, sizeof tail, "(this run uses --algo %s)",
                         r->name);
                cr_expect(strstr(err.msg, tail) && strstr(err.msg, " only "),
                          "%s", err.msg);
            }
        }
    }
    cr_assert_eq(rows, 8, "the table has %u rows", rows);
    hog_data_free(d);
}

/* Names round-trip, and a name that is not an algorithm is -1. */
Test(algos, names_round_trip)
{
    for (int a = 0; hog_algo_row((hog_algo)a); a++)
        cr_expect_eq(hog_algo_parse(hog_algo_cli_name((hog_algo)a)), a);
    cr_expect_eq(hog_algo_parse("sgd"), -1);
    cr_expect_str_eq(hog_algo_name(HOG_ALGO_HOGWILD), "Hogwild!");
}

/* The sentence lists the algorithms that take the option, from the table. */
Test(algos, the_sentence_names_the_takers)
{
    hog_err err;
    cr_assert_eq(hog_algo_check(HOG_ALGO_SERIAL, HOG_CAP_UPDATE, &err),
                 HOG_EINVAL);
    cr_expect_str_eq(err.msg, "--update applies to --algo hogwild and dcd "
                              "only (this run uses --algo serial)");
    cr_assert_eq(hog_algo_check(HOG_ALGO_DCD, HOG_CAP_CHECKPOINT, &err),
                 HOG_EINVAL);
    cr_expect_str_eq(err.msg, "--checkpoint and --resume apply to --algo "
                              "serial, hogwild and cyclades only (this run "
                              "uses --algo dcd)");
    cr_expect_eq(hog_algo_check(HOG_ALGO_HOGWILD, HOG_CAP_REPLICAS, &err),
                 HOG_OK);
}

/* The command refuses with the library's sentence, as a usage error. */
Test(algos, the_command_and_the_library_say_the_same)
{
    TH_DATA_OR_SKIP(heart, "heart_scale");
    hog_data *d = tiny();
    hog_train_opts o;
    th_opts_init(&o);
    o.algo = HOG_ALGO_CYCLADES;
    o.replicas = HOG_REPLICAS_NODE;
    hog_err err;
    cr_assert_eq(hog_train_validate(&o, NULL, d, &err), HOG_EINVAL);
    static char out[8192];
    int rc = th_run(out, sizeof out, "'%s' train -q --algo cyclades "
                    "--replicas node '%s'", th_bin(), heart);
    cr_expect_eq(rc, 2, "%s", out);
    cr_expect(strstr(out, err.msg), "the command said %s, the library %s",
              out, err.msg);
    hog_data_free(d);
}
