/* Shared test helpers: real data from HOGTRAIN_DATA, scratch folders, and
 * running the hogtrain command. */
#ifndef HOG_TEST_HELPERS_H
#define HOG_TEST_HELPERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

/* Built with AddressSanitizer (whose shadow memory changes the resident
 * set: the tests of peak memory skip under it). */
#if defined(__SANITIZE_ADDRESS__)
#define TH_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TH_ASAN 1
#endif
#endif

/* Path of the decompressed real data file NAME (e.g. "a9a", "a9a.t",
 * "news20.binary.train.svm") from HOGTRAIN_DATA (default ../shared/data),
 * decompressed once into HOGTRAIN_TEST_TMP. NULL when it is absent: the
 * caller skips with th_skip_reason(). */
const char *th_data(const char *name);
/* Skips the current test with a sentence when th_data(name) is NULL. */
/* The long accuracy runs against LIBLINEAR (K classes on the full news20
 * and Fashion-MNIST, cross-validation and the C search on a9a): skipped in
 * the sanitizer builds (make asan, make ubsan set HOGTRAIN_TEST_SANITIZER),
 * where they would add minutes and reach no code path that the small
 * tests of the same suite leave out. */
#define TH_HEAVY_OR_SKIP()                                                    \
    if (getenv("HOGTRAIN_TEST_SANITIZER"))                                    \
    cr_skip_test("a long accuracy run; skipped in the sanitizer build, "       \
                 "where the suite's small tests cover its code")

#define TH_DATA_OR_SKIP(var, name)                                            \
    const char *var = th_data(name);                                          \
    if (!var)                                                                 \
        cr_skip_test("real data file %s not found under HOGTRAIN_DATA; "       \
                     "skipping", name)

/* A fresh scratch folder for this test (removed by nobody: under the build
 * tree). Returns its path in buf. */
const char *th_tmpdir(char *buf, size_t len);
/* Writes text to dir/name and returns the path (static buffer per call slot). */
const char *th_write(const char *dir, const char *name, const char *text,
                     size_t len);
/* Path of the built hogtrain command (HOGTRAIN_BIN). */
const char *th_bin(void);
/* Whether path names something (stat succeeds). */
int th_exists(const char *path);
/* Runs a shell command; returns its exit status (-1 when it did not exit),
 * its stdout+stderr in out (truncated to outlen). */
int th_run(char *out, size_t outlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Asserts that no writer's temporary ("NAME.tmp.HOST-PID-RANDOM") is left
 * in dir. */
void th_assert_no_temporaries(const char *dir);

/* Each epoch's progressive figures (hog_epoch_stats.progressive_loss and
 * _accuracy), in the order the epochs report, as th_on_prog records them
 * (a progress callback whose ctx is a struct th_prog; at most 8 epochs). */
struct th_prog {
    unsigned n;
    double loss[8], acc[8];
};
struct hog_epoch_stats;
void th_on_prog(void *ctx, unsigned epoch, unsigned epochs, uint64_t done,
                uint64_t total, const struct hog_epoch_stats *s);

/* The bytes of path, NUL-terminated, malloc'd; the length in *len. Fails
 * the test when the file cannot be read. */
char *th_slurp(const char *path, size_t *len);

/* The text of a file of the source tree (name relative to its root, as
 * "README.md"), malloc'd; NULL when it is not there (the tests were not
 * run from the source tree). */
char *th_source(const char *name);

/* Whether liblinear-train and liblinear-predict are on the PATH (Debian:
 * liblinear-tools); TH_LIBLINEAR_OR_SKIP() skips the test with a sentence
 * when they are not. */
int th_have_liblinear(void);
#define TH_LIBLINEAR_OR_SKIP()                                                \
    if (!th_have_liblinear())                                                 \
    cr_skip_test("liblinear-train/liblinear-predict not installed "           \
                 "(apt-get install liblinear-tools); skipping")

struct hog_data;
struct hog_model;
/* The data file at path, loaded with the default options; fails the test
 * when it cannot be. */
struct hog_data *th_load(const char *path);
/* path loaded hashed at `bits` bits with the interactions asked (NULL:
 * none), asserted to load. */
struct hog_data *th_load_hashed(const char *path, unsigned bits,
                                const char *interactions);
struct hog_train_opts;
struct hog_train_hooks;
/* hog_train_opts_init() with the library's defaults of before the options'
 * table settled them by algorithm (src/train/options.c): AdaGrad at l2
 * 1e-5, eta 0.3 whatever the loss, 5 epochs, tol 0.01 and update none for
 * every algorithm. The suite's tests were written, and their models
 * compared, against these; a test of the defaults themselves calls
 * hog_train_opts_init(). */
void th_opts_init(struct hog_train_opts *o);
/* The SGD trainers' step size at step t (0-based) with n rows an epoch:
 * o->eta, or invscaling's eta / (1 + eta l2 t) with l2, else
 * eta / (1 + t / n)^power (docs/TRAINING.md), for the eager references. */
double th_sgd_eta(const struct hog_train_opts *o, uint64_t t, uint64_t n);
/* Soft thresholding: u moved toward 0 by b, 0 within b of it. */
double th_soft(double u, double b);
/* AdaGrad with the library's step for o's loss (eta unset, resolved by
 * loss): what hog_train_opts_defaults_for_loss() gave before the table. */
void th_opts_step_for_loss(struct hog_train_opts *o);
/* The options of the tests of the exact solvers and the coordinate
 * methods: th_opts_init()'s with algo, loss, l1, l2, threads (0: the
 * library's default), tol, 1000 epochs (iterations) and a bias feature. */
struct hog_train_opts th_solver_opts(int algo, int loss, double l1, double l2,
                                     unsigned threads, double tol);
struct hog_objective;
/* hog_objective_eval() of m on d (src/coordinate/coordinate.h: .value, the
 * mean, and .liblinear, LIBLINEAR's scale); fails the test unless it
 * evaluates. */
struct hog_objective th_objective(const struct hog_model *m,
                                  const struct hog_data *d, int loss,
                                  double l1, double l2);
/* A skewed sparse problem of k classes (th_synth's TH_SYNTH_SKEW, 3 to 14
 * features a row of nf, values normal; stream 5 of seed), each row
 * labelled step * (c + 1) for the class c of the highest-scoring of k
 * planted models (th_label_argmax, the same models for every seed); fails
 * the test when out of memory. */
struct hog_data *th_k_classes(uint64_t rows, uint32_t nf, unsigned k,
                              double step, uint64_t seed);
/* Fails the test (naming what) unless a and b are the same model: its
 * features, loss, bias, classes and mode, and its weights bit for bit. */
void th_assert_same_model(const struct hog_model *a,
                          const struct hog_model *b, const char *what);
/* hog_train on d (no test set) with o (and the hooks h); fails the test
 * unless it trains. */
struct hog_model *th_train_ok(const struct hog_data *d,
                              const struct hog_train_opts *o);
struct hog_model *th_train_hooked(const struct hog_data *d,
                                  const struct hog_train_opts *o,
                                  const struct hog_train_hooks *h);

/* Trains liblinear-train's solver s at C with -B 1 and -e eps on path and
 * loads its model (fails the test otherwise). The printed "Objective
 * value" (dual solvers) in *printed when not NULL (NaN when LIBLINEAR
 * printed none). */
struct hog_model *th_liblinear_model(const char *path, int solver, double C,
                                     const char *eps, double *printed);

/* The peak resident set (KiB) of sh -c cmd and what it waited for, its
 * standard output discarded; the test fails unless cmd exits with 0. */
long th_peak_rss_kib(const char *cmd);

/* Processes of a --world group on loopback: a port the kernel considered
 * free a moment ago; `sh -c "exec CMD"` started with its standard output
 * and error into log (the pid is the command's own, for kill); the exit
 * code of pid within limit seconds (then SIGKILL, and -1). */
unsigned th_free_port(void);
pid_t th_spawn(const char *log, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int th_wait_for(pid_t pid, double limit);

#endif
