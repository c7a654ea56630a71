/* Training on the chunk streamer: streamed serial SGD equals the
 * in-memory trainer bit for bit (one window) and an in-memory replay of the
 * windowed order; K classes likewise; the command says what cannot
 * stream; cancel stops every streamed trainer; streamed Hogwild! on one
 * thread is the serial run, on two it learns as in memory. */
#include <criterion/criterion.h>
#include <math.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/sgd.h"
#include "train/train.h"
#include "helpers.h"
#include "stream_tests.h"
#include "synth.h"
#include "io/io.h"

/* ---- training ------------------------------------------------------------------ */

/* h: the hooks, or NULL */
static hog_model *train_mem(const char *path, const hog_train_opts *o,
                            const hog_train_hooks *h)
{
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_data_load(path, NULL, &d, &err), HOG_OK, "%s", err.msg);
    hog_model *m;
    cr_assert_eq(hog_train(d, NULL, o, h, &m, &err), HOG_OK, "%s", err.msg);
    hog_data_free(d);
    return m;
}

static hog_model *train_stream(const char *path, hog_train_opts *o,
                               const hog_train_hooks *h, hog_stream_stats *ss)
{
    hog_model *m;
    hog_err err;
    hog_train_hooks with = { .size = sizeof with };
    if (h)
        with = *h;
    with.stream_stats = ss;
    cr_assert_eq(hog_train_stream(path, NULL, o, &with, &m, &err), HOG_OK, "%s",
                 err.msg);
    return m;
}

static void assert_same_weights(const hog_model *a, const hog_model *b,
                                const char *what)
{
    uint64_t n = hog_model_features(a) + 1;
    cr_assert_eq(hog_model_features(a), hog_model_features(b));
    cr_assert(memcmp(hog_model_weights(a), hog_model_weights(b),
                     n * sizeof(float)) == 0,
              "%s: weights differ", what);
}

/* ... and the progressive loss and accuracy of every epoch, the same bits
 * (the same rows in the same order, scored the same way). */
Test(stream, serial_whole_file_window_equals_in_memory_bit_for_bit)
{
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *f = make_file(dir, "d.hgb", 30000, 1 << 16, 11);
    struct {
        hog_loss loss;
        hog_schedule sched;
        double l1, l2;
        hog_io_backend io;
    } cases[] = {
        { HOG_LOSS_LOGISTIC, HOG_SCHED_INVSCALING, 0, 1e-4, HOG_IO_AUTO },
        { HOG_LOSS_HINGE, HOG_SCHED_CONSTANT, 1e-5, 1e-4, HOG_IO_PREAD },
        { HOG_LOSS_SQHINGE, HOG_SCHED_ADAGRAD, 1e-5, 0, HOG_IO_AUTO },
        { HOG_LOSS_LOGISTIC, HOG_SCHED_INVSCALING, 0, 0, HOG_IO_PREAD },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hog_train_opts o;
        th_opts_init(&o);
        o.loss = cases[i].loss;
        th_opts_step_for_loss(&o);
        o.schedule = cases[i].sched;
        o.l1 = cases[i].l1;
        o.l2 = cases[i].l2;
        o.epochs = 3;
        o.seed = 5 + i;
        o.io = cases[i].io;
        struct th_prog pa = { 0 }, pb = { 0 };
        hog_train_hooks hk = { .size = sizeof hk, .progress = th_on_prog,
                               .progress_ctx = &pa };
        hog_model *a = train_mem(f, &o, &hk);
        hog_stream_stats ss = { .size = sizeof ss };
        hk.progress_ctx = &pb;
        hog_model *b = train_stream(f, &o, &hk, &ss);
        cr_assert_gt(ss.slots, 1);
        cr_assert_eq(ss.window, ss.slots, "the whole file fits: one window");
        char what[64];
        snprintf(what, sizeof what, "case %zu", i);
        assert_same_weights(a, b, what);
        cr_assert(pa.n == 3 && pb.n == 3, "%u and %u epochs reported",
                  pa.n, pb.n);
        for (int e = 0; e < 3; e++)
            cr_assert(isfinite(pa.loss[e]) && pa.loss[e] == pb.loss[e] &&
                          isfinite(pa.acc[e]) && pa.acc[e] == pb.acc[e],
                      "case %zu epoch %d: progressive loss %.17g / %.17g, "
                      "accuracy %.17g / %.17g", i, e + 1, pa.loss[e],
                      pb.loss[e], pa.acc[e], pb.acc[e]);
        hog_model_free(a);
        hog_model_free(b);
    }
}

/* The windowed order replayed on the in-memory data with the row kernel,
 * the way src/hogwild/serial.c walks its segments. */
static hog_model *replay(const char *path, const hog_train_opts *o,
                         uint64_t window)
{
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_data_load(path, NULL, &d, &err), HOG_OK, "%s", err.msg);
    struct hog_hgb_info in;
    cr_assert_eq(hog_hgb_open_info(path, &in, &err), HOG_OK, "%s", err.msg);
    struct hog_stream_order ord;
    cr_assert_eq(hog_stream_order_init(&ord, &in, window, o->seed, &err),
                 HOG_OK);
    uint64_t n = d->m.rows, *order = malloc(n * sizeof *order);
    struct hog_sgd s;
    cr_assert_eq(hog_sgd_init(&s, o, d, &err), HOG_OK);
    uint64_t t_global = 0;
    for (unsigned e = 1; e <= o->epochs; e++) {
        const uint64_t *seq = hog_stream_order_epoch(&ord);
        uint64_t at = 0;
        for (uint64_t w = 0; w * window < in.n_chunks; w++) {
            uint64_t first[64], nw = 0, R;
            first[0] = 0;
            for (uint64_t k = w * window; k < in.n_chunks && k < (w + 1) * window; k++, nw++)
                first[nw + 1] = first[nw] + in.chunks[seq[k]].rows;
            const uint32_t *rows = hog_stream_order_window(&ord, seq, w, &R);
            for (uint64_t i = 0; i < R; i++) {
                uint64_t j = 0;
                while (first[j + 1] <= rows[i])
                    j++;
                order[at++] = in.chunks[seq[w * window + j]].first_row +
                              (rows[i] - first[j]);
            }
        }
        cr_assert_eq(at, n);
        for (uint64_t done = 0; done < n;) {
            uint32_t len = hog_sgd_segment_begin(&s, t_global,
                                                 (uint32_t)(n - done));
            hog_sgd_run(&s, d, order + done, len, 0, 1);
            hog_sgd_segment_end(&s, len);
            t_global += len;
            done += len;
        }
    }
    hog_model *m;
    cr_assert_eq(hog_model_new(d->n_features, o->loss, o->bias, &m, &err), HOG_OK);
    hog_sgd_copy_weights(&s, m->w);
    hog_sgd_free(&s);
    free(order);
    hog_stream_order_free(&ord);
    hog_hgb_info_close(&in);
    hog_data_free(d);
    return m;
}

Test(stream, serial_windowed_order_equals_in_memory_replay)
{
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *f = make_file(dir, "d.hgb", 40000, 1 << 15, 13);
    struct hog_hgb_info in;
    hog_err err;
    cr_assert_eq(hog_hgb_open_info(f, &in, &err), HOG_OK, "%s", err.msg);
    uint64_t chunk = in.max_chunk_bytes, nc = in.n_chunks;
    hog_hgb_info_close(&in);
    hog_train_opts o;
    th_opts_init(&o);
    o.epochs = 3;
    o.l1 = 1e-5;
    o.seed = 21;
    /* A ring of 6 buffers (plus the row order): windows of 3 chunks. */
    o.mem_budget = 6 * chunk + chunk / 2;
    hog_stream_stats ss = { .size = sizeof ss };
    hog_model *a = train_stream(f, &o, NULL, &ss);
    cr_assert_eq(ss.window, 3, "window %u", ss.window);
    cr_assert_lt(ss.window, nc);
    hog_model *b = replay(f, &o, ss.window);
    assert_same_weights(a, b, "windowed order");
    /* And the backend does not matter. */
    o.io = HOG_IO_PREAD;
    hog_model *c = train_stream(f, &o, NULL, &ss);
    assert_same_weights(a, c, "pread");
    hog_model_free(a);
    hog_model_free(b);
    hog_model_free(c);
}

/* ---- the command ---------------------------------------------------------------------- */

Test(stream, command_explains_what_cannot_stream)
{
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *f = make_file(dir, "d.hgb", 3000, 1 << 16, 2);
    const char *txt = th_write(dir, "t.svm", "1 1:1\n-1 2:1\n", 12);
    char out[8192];
    int rc = th_run(out, sizeof out, "%s train --stream %s", th_bin(), txt);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "--stream reads a .hgb file; make one with: "
                          "hogtrain convert"), "%s", out);
    rc = th_run(out, sizeof out, "%s train --stream --algo cyclades %s",
                th_bin(), f);
    /* an option conflict (src/train/conflicts.c): refused before the
     * file is read, as a usage error */
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert(strstr(out, "needs the data in memory"), "%s", out);
    rc = th_run(out, sizeof out, "%s train --stream --mem-budget 4K %s",
                th_bin(), f);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "fewer than two chunks"), "%s", out);
    rc = th_run(out, sizeof out, "%s train --mem-budget 4M %s", th_bin(), f);
    cr_assert_eq(rc, 2, "%s", out);
    cr_assert(strstr(out, "--mem-budget applies to --stream only"), "%s", out);
    rc = th_run(out, sizeof out, "%s train --stream --io floppy %s", th_bin(), f);
    cr_assert_eq(rc, 2, "%s", out);
}

/* K classes streamed (one-vs-rest, a pass of the file per class and
 * epoch after one pass for the classes; softmax, a pass per epoch):
 * news20's 20 classes, the whole file in one window, equal the in-memory
 * models bit for bit, class order included; streamed softmax's Hogwild! is
 * refused with a sentence. */
Test(stream, classes_whole_file_window_equal_in_memory, .timeout = 120)
{
    TH_DATA_OR_SKIP(txt, "news20.test.svm");
    char dir[1024], hgb[1100];
    cr_assert(th_tmpdir(dir, sizeof dir));
    snprintf(hgb, sizeof hgb, "%s/n20.hgb", dir);
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_data_load(txt, NULL, &d, &err), HOG_OK, "%s", err.msg);
    cr_assert_eq(hog_data_save_hgb(d, hgb, &err), HOG_OK, "%s", err.msg);
    hog_data_free(d);
    hog_train_opts o;
    th_opts_init(&o);
    o.epochs = 2;
    o.threads = 1;
    hog_model *a = train_mem(hgb, &o, NULL);
    hog_stream_stats ss = { .size = sizeof ss };
    hog_model *b = train_stream(hgb, &o, NULL, &ss);
    cr_assert_eq(ss.window, ss.slots, "the whole file fits: one window");
    const double *ca, *cb;
    cr_assert_eq(hog_model_classes(a, &ca), 20u);
    cr_assert_eq(hog_model_classes(b, &cb), 20u);
    cr_assert_eq(memcmp(ca, cb, 20 * sizeof *ca), 0, "class order differs");
    uint64_t n = 20 * (hog_model_features(a) + 1);
    cr_assert_eq(hog_model_features(a), hog_model_features(b));
    cr_assert(memcmp(hog_model_weights(a), hog_model_weights(b),
                     n * sizeof(float)) == 0, "the K vectors differ");
    hog_model_free(a);
    hog_model_free(b);
    /* softmax (serial), every schedule kind the same way: in-memory bits */
    o.multiclass = HOG_MULTICLASS_SOFTMAX;
    const struct {
        hog_schedule schedule;
        double l1;
    } sm[] = { { HOG_SCHED_ADAGRAD, 0 }, { HOG_SCHED_ADAGRAD, 1e-5 },
               { HOG_SCHED_INVSCALING, 0 }, { HOG_SCHED_CONSTANT, 1e-5 } };
    for (size_t i = 0; i < sizeof sm / sizeof *sm; i++) {
        hog_train_opts q = o;
        q.schedule = sm[i].schedule;
        q.l1 = sm[i].l1;
        q.eta = q.schedule == HOG_SCHED_ADAGRAD ? 0.3 : 0.1;
        a = train_mem(hgb, &q, NULL);
        b = train_stream(hgb, &q, NULL, &ss);
        cr_assert_eq(ss.window, ss.slots, "the whole file fits: one window");
        const double *ka, *kb;
        cr_assert_eq(hog_model_classes(a, &ka), 20u);
        cr_assert_eq(hog_model_classes(b, &kb), 20u);
        cr_assert_eq(memcmp(ka, kb, 20 * sizeof *ka), 0,
                     "softmax: class order differs");
        cr_assert(memcmp(hog_model_weights(a), hog_model_weights(b),
                         n * sizeof(float)) == 0,
                  "softmax, schedule %d, l1 %g: the K vectors differ",
                  (int)sm[i].schedule, sm[i].l1);
        hog_model_free(a);
        hog_model_free(b);
    }
    /* the cancel flag (Ctrl-C): a sentence, no model */
    static volatile sig_atomic_t stop = 1;
    hog_train_opts q = o;
    hog_train_hooks hq = { .size = sizeof hq, .cancel = &stop };
    b = NULL;
    cr_assert_eq(hog_train_stream(hgb, NULL, &q, &hq, &b, &err), HOG_EINTR);
    cr_assert(strstr(err.msg, "training interrupted at row"), "%s", err.msg);
    cr_assert_null(b);
    /* what it does not do: a sentence each */
    o.algo = HOG_ALGO_HOGWILD;
    cr_assert_eq(hog_train_stream(hgb, NULL, &o, NULL, &b, &err), HOG_ENOTSUP);
    cr_assert(strstr(err.msg, "streamed softmax training (--stream "
                              "--multiclass softmax) runs --algo serial only"),
              "%s", err.msg);
}

/* The cancel flag (Ctrl-C) stops streamed training with a sentence: the
 * serial and Hogwild! trainers (softmax: classes_whole_file_...). */
Test(stream, cancel_stops_every_streamed_trainer)
{
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *f = make_file(dir, "d.hgb", 3000, 1 << 12, 23);
    static volatile sig_atomic_t stop = 1;
    const hog_algo algo[] = { HOG_ALGO_SERIAL, HOG_ALGO_HOGWILD };
    for (int i = 0; i < 2; i++) {
        hog_train_opts o;
        th_opts_init(&o);
        o.algo = algo[i];
        o.threads = 1;
        o.epochs = 50;
        hog_train_hooks hk = { .size = sizeof hk, .cancel = &stop };
        hog_model *m = NULL;
        hog_err err;
        cr_assert_eq(hog_train_stream(f, NULL, &o, &hk, &m, &err), HOG_EINTR,
                     "algorithm %d", (int)algo[i]);
        cr_assert(strstr(err.msg, "training interrupted at row"), "%s",
                  err.msg);
        cr_assert(strstr(err.msg, "of epoch 1"), "%s", err.msg);
        cr_assert_null(m);
    }
}

/* ---- Hogwild! ------------------------------------------------------------------------- */

Test(threads, streamed_hogwild_one_thread_whole_file_equals_serial)
{
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *f = make_file(dir, "d.hgb", 20000, 1 << 16, 17);
    hog_update modes[] = { HOG_UPDATE_NONE, HOG_UPDATE_STRIPED };
    for (int i = 0; i < 2; i++) {
        hog_train_opts o;
        th_opts_init(&o);
        o.epochs = 2;
        o.l1 = 1e-5;
        hog_model *a = train_mem(f, &o, NULL);
        o.algo = HOG_ALGO_HOGWILD;
        o.threads = 1;
        o.update = modes[i];
        o.oversubscribe = 1;
        hog_stream_stats ss = { .size = sizeof ss };
        hog_model *b = train_stream(f, &o, NULL, &ss);
        cr_assert_eq(ss.window, ss.slots);
        assert_same_weights(a, b, "hogwild, 1 thread");
        hog_model_free(a);
        hog_model_free(b);
    }
}

/* Two threads, windows of a few chunks: Hogwild! races, so the weights are
 * not the serial ones, but the model must be as good. */
Test(threads, streamed_hogwild_two_threads_learns_like_in_memory)
{
    char dir[1024];
    cr_assert(th_tmpdir(dir, sizeof dir));
    const char *f = make_file(dir, "d.hgb", 40000, 1 << 15, 19);
    hog_data *d;
    hog_err err;
    cr_assert_eq(hog_data_load(f, NULL, &d, &err), HOG_OK, "%s", err.msg);
    struct hog_hgb_info in;
    cr_assert_eq(hog_hgb_open_info(f, &in, &err), HOG_OK, "%s", err.msg);
    uint64_t chunk = in.max_chunk_bytes;
    hog_hgb_info_close(&in);
    hog_train_opts o;
    th_opts_init(&o);
    o.epochs = 3;
    o.algo = HOG_ALGO_HOGWILD;
    o.threads = 2;
    o.oversubscribe = 1;
    hog_model *a;
    cr_assert_eq(hog_train(d, NULL, &o, NULL, &a, &err), HOG_OK, "%s", err.msg);
    o.mem_budget = 8 * chunk + chunk / 2;
    hog_io_backend ios[] = { HOG_IO_AUTO, HOG_IO_PREAD };
    for (int i = 0; i < 2; i++) {
        o.io = ios[i];
        hog_stream_stats ss = { .size = sizeof ss };
        hog_model *b = train_stream(f, &o, NULL, &ss);
        cr_assert_eq(ss.window, 4, "window %u", ss.window);
        double la = 0, lb = 0;
        for (uint64_t r = 0; r < d->m.rows; r++) {
            struct hog_row row = hog_csr_row(&d->m, r);
            double ma = hog_model_bias(a), mb = hog_model_bias(b);
            for (uint32_t k = 0; k < row.nnz; k++) {
                ma += hog_model_weights(a)[row.idx[k]] * row.val[k];
                mb += hog_model_weights(b)[row.idx[k]] * row.val[k];
            }
            la += (ma > 0) == (row.y > 0);
            lb += (mb > 0) == (row.y > 0);
        }
        la /= (double)d->m.rows;
        lb /= (double)d->m.rows;
        cr_assert_gt(la, 0.7, "in-memory accuracy %g", la);
        cr_assert_gt(lb, la - 0.02, "streamed accuracy %g vs in-memory %g", lb,
                     la);
        hog_model_free(b);
    }
    hog_model_free(a);
    hog_data_free(d);
}
