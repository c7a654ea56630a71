/* The data read ahead beside a one-thread trainer (core/warm.h): only
 * where there is a second thread and data enough to gain, stopped on
 * request, and the serial trainer's model the same with it as without. */
#include <criterion/criterion.h>

#include "helpers.h"
#include "hogtrain.h"

#include "core/warm.h"


Test(warm, reads_ahead_only_with_a_thread_and_data_to_spare)
{
    TH_DATA_OR_SKIP(path, "news20.binary.train.svm");
    hog_data *big = th_load(path);
    struct hog_warm w;
    hog_warm_begin(&w, big, 1);
    cr_expect(!w.running, "one thread: nothing to read ahead on");
    hog_warm_end(&w);
    hog_warm_begin(&w, big, 2);
    cr_expect(w.running, "two threads, 3.8M nonzeros: the reader runs");
    hog_warm_end(&w); /* stops it early: returns */
    cr_expect(!w.running);
    hog_warm_end(&w); /* twice is nothing */

    TH_DATA_OR_SKIP(small_path, "heart_scale");
    hog_data *small = th_load(small_path);
    hog_warm_begin(&w, small, 2);
    cr_expect(!w.running, "270 rows: over before a thread starts");
    hog_warm_end(&w);
    hog_data_free(small);
    hog_data_free(big);
}

/* The reader only loads: the serial trainer's model is the same bit for
 * bit whether it runs (threads 2: the command's default on two cores) or
 * not (threads 1). */
Test(warm, the_serial_model_is_the_same_beside_it)
{
    /* four runs on news20.binary; the reader runs beside every serial
     * test with two threads in the sanitizer builds too */
    TH_HEAVY_OR_SKIP();
    TH_DATA_OR_SKIP(path, "news20.binary.train.svm");
    hog_data *d = th_load(path);
    hog_train_opts o;
    hog_train_opts_init(&o);
    o.algo = HOG_ALGO_SERIAL;
    o.epochs = 2;
    o.threads = 1;
    hog_model *a = th_train_ok(d, &o);
    o.threads = 0;
    hog_model *b = th_train_ok(d, &o);
    th_assert_same_model(a, b, "with the reader and without");
    hog_model_free(a);
    hog_model_free(b);
    hog_data_free(d);
}
