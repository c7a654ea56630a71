/* Exact solving across processes (docs/SCALEOUT.md, "Exact solving"): the
 * ring's all-reduce of doubles in 3 processes (the order of its additions,
 * the same bits everywhere), and --algo newton and lbfgs on 3 ranks of
 * disjoint shards of a9a against one process on all its rows, a dead rank
 * and the options that belong to averaging. All on 127.0.0.1, ports
 * picked by the kernel. */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "net/net.h"

/* ---- the all-reduce of doubles --------------------------------------------- */

/* Magnitudes from 1e-8 to 1e8 and both signs: any other order of the
 * additions changes the low bits. */
static double input(unsigned rank, size_t i)
{
    uint64_t h = (uint64_t)(rank + 1) * 0x9e3779b97f4a7c15u ^ (i * 0xbf58476d1ce4e5b9u);
    h ^= h >> 31;
    double m = (double)(h % 1000003) / 1000003.0 + 0.5;
    int e = (int)(h >> 40) % 17 - 8;
    return (h & 1 ? -m : m) * pow(10.0, e);
}

/* net.h's order: element i of segment s is ((x_s + x_{s+1}) + ...) +
 * x_{s-1}, ranks mod world. */
static double reference(size_t i, size_t len, unsigned world)
{
    unsigned s = 0;
    for (unsigned q = 0; q < world; q++) {
        size_t lo, hi;
        hog_net_segment(len, world, q, &lo, &hi);
        if (i >= lo && i < hi)
            s = q;
    }
    double v = input(s, i);
    for (unsigned k = 1; k < world; k++)
        v = v + input((s + k) % world, i);
    return v;
}

/* One rank: opens the group, sums, compares bit for bit; the exit code
 * says how it went (0: the reference's bits). */
static int sum_child(unsigned rank, unsigned world, const char *coord,
                     size_t len)
{
    struct hog_net_opts o;
    hog_net_opts_init(&o);
    o.world = world;
    o.rank = rank;
    o.coordinator = coord;
    o.connect_timeout = 20;
    o.timeout = 20;
    o.chunk_bytes = 4096; /* many chunks per segment */
    hog_net *n;
    hog_err err;
    if (hog_net_open_tcp(&o, &n, &err) != HOG_OK)
        return 2;
    double *b = malloc(len * sizeof *b);
    for (size_t i = 0; i < len; i++)
        b[i] = input(rank, i);
    int rc = hog_net_allreduce_sum_f64(n, b, len, &err) == HOG_OK ? 0 : 3;
    for (size_t i = 0; i < len && rc == 0; i++)
        if (memcmp(&b[i], &(double){ reference(i, len, world) }, 8) != 0)
            rc = 4;
    free(b);
    hog_net_close(n);
    return rc;
}

Test(net_exact, allreduce_f64_3_ranks, .timeout = 60)
{
    const unsigned world = 3;
    const size_t len = 100003; /* segments of unequal length */
    char coord[64];
    snprintf(coord, sizeof coord, "127.0.0.1:%u", th_free_port());
    pid_t pid[3];
    fflush(NULL);
    for (unsigned r = 0; r < world; r++) {
        pid[r] = fork();
        cr_assert_geq(pid[r], 0);
        if (pid[r] == 0)
            _exit(sum_child(r, world, coord, len));
    }
    for (unsigned r = 0; r < world; r++) {
        int c = th_wait_for(pid[r], 40);
        cr_assert_eq(c, 0, "rank %u exited %d (2: no group, 3: the sum "
                     "failed, 4: other bits than the fixed order's)", r, c);
    }
}

/* ---- the solvers on 3 ranks ------------------------------------------------- */

static double number_after(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? strtod(p + strlen(key), NULL) : NAN;
}

static bool same_file(const char *a, const char *b)
{
    char out[256];
    return th_run(out, sizeof out, "cmp -s '%s' '%s'", a, b) == 0;
}

/* F(w) of the model on every row of data, at the strengths the model
 * records. */
static double objective_on(const char *model, const char *data)
{
    char out[4096];
    int rc = th_run(out, sizeof out, "'%s' objective -q '%s' '%s'", th_bin(),
                    model, data);
    cr_assert_eq(rc, 0, "%s", out);
    double f = number_after(out, "objective ");
    cr_assert(isfinite(f), "%s", out);
    return f;
}

/* a9a cut into 3 files of every third row (the rows of rank r: line
 * numbers r + 1 mod 3), in dir. */
static void write_shards(const char *data, const char *dir, char shard[3][600])
{
    for (int r = 0; r < 3; r++) {
        snprintf(shard[r], sizeof shard[r], "%s/a9a.%d", dir, r);
        char out[512];
        int rc = th_run(out, sizeof out, "awk 'NR %% 3 == %d' '%s' > '%s'",
                        (r + 1) % 3, data, shard[r]);
        cr_assert_eq(rc, 0, "%s", out);
    }
}

/* One process on all of a9a, then 3 ranks on its shards, with `args`:
 * every rank saves the same model, whose objective on all the rows (at
 * the strengths it records: C's l2 is that of all the rows) is the one
 * process's within 1e-9 relative. */
static void three_ranks_a9a(const char *args)
{
    TH_DATA_OR_SKIP(data, "a9a");
    char dir[512], out[1 << 14], shard[3][600], logs[3][600], models[3][600];
    char single[600], coord[64];
    th_tmpdir(dir, sizeof dir);
    write_shards(data, dir, shard);
    snprintf(single, sizeof single, "%s/single.hgm", dir);
    int rc = th_run(out, sizeof out, "'%s' train -q %s '%s' -o '%s'",
                    th_bin(), args, data, single);
    cr_assert_eq(rc, 0, "%s", out);

    snprintf(coord, sizeof coord, "127.0.0.1:%u", th_free_port());
    pid_t pid[3];
    for (int r = 0; r < 3; r++) {
        snprintf(logs[r], sizeof logs[r], "%s/r%d.log", dir, r);
        snprintf(models[r], sizeof models[r], "%s/m%d.hgm", dir, r);
        pid[r] = th_spawn(logs[r], "'%s' train --world 3 --rank %d "
                          "--coordinator %s --connect-timeout 20 "
                          "--net-timeout 20 %s '%s' -o '%s'", th_bin(), r,
                          coord, args, shard[r], models[r]);
    }
    for (int r = 0; r < 3; r++) {
        int c = th_wait_for(pid[r], 90);
        size_t len;
        char *log = th_slurp(logs[r], &len);
        cr_assert_eq(c, 0, "rank %d exit %d:\n%s", r, c, log);
        cr_assert(strstr(log, "solved exactly over every rank's rows"),
                  "%s", log);
        free(log);
    }
    cr_assert(same_file(models[0], models[1]) &&
              same_file(models[0], models[2]), "the ranks' models differ");
    double f1 = objective_on(single, data), f3 = objective_on(models[0], data);
    cr_log_info("%s: one process %.12g, 3 ranks %.12g", args, f1, f3);
    cr_assert(fabs(f3 - f1) <= 1e-9 * fabs(f1), "%s: 3 ranks' objective "
              "%.12g, one process's %.12g (relative %.3g)", args, f3, f1,
              fabs(f3 - f1) / fabs(f1));
}

/* At LIBLINEAR's -e 0.01 Newton stops 5e-10 to 1e-8 (relative) from where
 * one process stops: its conjugate gradients on a9a's ill-conditioned
 * Hessian amplify the last bits of sums added in another order, and one
 * process on the same rows in another order differs as much
 * (docs/SCALEOUT.md, "Exact solving"). Nearer the optimum both agree. */
Test(net_exact, newton_logistic_a9a, .timeout = 120)
{
    three_ranks_a9a("--algo newton --loss logistic --C 1 --tol 1e-4");
}

Test(net_exact, lbfgs_l2_a9a, .timeout = 120)
{
    three_ranks_a9a("--algo lbfgs --loss logistic --C 1");
}

Test(net_exact, owlqn_l1_a9a, .timeout = 120)
{
    three_ranks_a9a("--algo lbfgs --loss logistic --l1 1e-4 --l2 0");
}

/* kill -9 of one rank in the middle of a long L-BFGS run: the others exit
 * 1 within the timeout (+5 s) with a sentence naming it. */
Test(net_exact, dead_rank, .timeout = 90)
{
    TH_DATA_OR_SKIP(train, "news20.binary.train.svm");
    char dir[512], logs[3][600], coord[64];
    th_tmpdir(dir, sizeof dir);
    snprintf(coord, sizeof coord, "127.0.0.1:%u", th_free_port());
    const double timeout = 3;
    pid_t pid[3];
    for (int r = 0; r < 3; r++) {
        snprintf(logs[r], sizeof logs[r], "%s/r%d.log", dir, r);
        pid[r] = th_spawn(logs[r], "'%s' train --world 3 --rank %d "
                          "--coordinator %s --shard stride --net-timeout %g "
                          "--connect-timeout 20 --algo lbfgs --C 1000 --tol 0 "
                          "--epochs 100000 '%s'", th_bin(), r, coord,
                          timeout, train);
    }
    size_t len;
    char *log = NULL;
    for (int k = 0; k < 3000; k++) { /* its first iteration, at most 30 s */
        free(log);
        log = access(logs[0], R_OK) == 0 ? th_slurp(logs[0], &len)
                                         : strdup("");
        if (strstr(log, "epoch"))
            break;
        usleep(10000);
    }
    cr_assert(strstr(log, "epoch"), "%s", log);
    free(log);
    usleep(300000);
    kill(pid[1], SIGKILL);
    int c0 = th_wait_for(pid[0], timeout + 5);
    int c2 = th_wait_for(pid[2], timeout + 5);
    waitpid(pid[1], NULL, 0);
    char *l0 = th_slurp(logs[0], &len), *l2 = th_slurp(logs[2], &len);
    cr_assert(c0 == 1 && c2 == 1, "exit %d and %d:\n%s\n%s", c0, c2, l0, l2);
    cr_assert(strstr(l0, "rank 1 (127.0.0.1:"), "%s", l0);
    cr_assert(strstr(l2, "rank 1 (127.0.0.1:"), "%s", l2);
    free(l0);
    free(l2);
}

/* The options of model averaging are refused with --algo newton and
 * lbfgs, before any rank connects. */
Test(net_exact, averaging_options_refused)
{
    static const char *const opts[] = { "--sync-every 100", "--sync bmuf",
                                        "--checkpoint x.hgm" };
    char dir[512], out[4096];
    th_tmpdir(dir, sizeof dir);
    const char *data = th_write(dir, "d.svm", "1 1:1\n-1 2:1\n", 12);
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++) {
        int rc = th_run(out, sizeof out, "'%s' train --world 2 --rank 0 "
                        "--coordinator 127.0.0.1:1 --algo newton %s '%s'",
                        th_bin(), opts[i], data);
        cr_assert_eq(rc, 2, "%s: exit %d\n%s", opts[i], rc, out);
        cr_assert(strstr(out, "belongs to model averaging"), "%s", out);
    }
}
