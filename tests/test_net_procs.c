/* src/net through the command: refused peers (wrong protocol, random
 * bytes, wrong secret, duplicate rank, idle connections, join retries) and
 * distributed training across processes (model averaging, BMUF, classes,
 * MPI, network namespaces) with its faults (a killed or silent rank,
 * start-up timeouts, options that disagree). All on 127.0.0.1, ports
 * picked by the kernel (th_free_port) so that concurrent test runs do not
 * collide. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "helpers.h"
#include "net/net.h"

/* ---- refused peers, in process --------------------------------------------------- */

static char *slurp(const char *path)
{
    static char buf[1 << 16];
    FILE *f = fopen(path, "r");
    if (!f)
        return strcpy(buf, "");
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Waits (at most limit s) until the file holds needle. */
static bool wait_text(const char *path, const char *needle, double limit)
{
    double t0 = now_s();
    while (now_s() - t0 < limit) {
        if (strstr(slurp(path), needle))
            return true;
        usleep(20000);
    }
    return false;
}

/* A client that speaks the wrong protocol version is refused; 1 MB of
 * random bytes is refused; a wrong secret and a duplicate rank are
 * refused; the listener survives all four and the job then runs. */
Test(net, refusals, .timeout = 60)
{
    char dir[512], coord[64], log0[600], log1[600], log1b[600], log2[600];
    char good[600], bad[600];
    th_tmpdir(dir, sizeof dir);
    snprintf(good, sizeof good, "%s", th_write(dir, "good.key",
             "correct horse battery staple\n", 29));
    snprintf(bad, sizeof bad, "%s", th_write(dir, "bad.key",
             "incorrect donkey battery staple\n", 32));
    static const char tiny_text[] = "1 1:1 2:0.5\n-1 2:1 3:1\n1 1:0.5 3:0.2\n"
                                    "-1 3:1 4:1\n1 1:1 4:0.1\n-1 2:1 4:1\n";
    char tiny[600];
    snprintf(tiny, sizeof tiny, "%s",
             th_write(dir, "tiny.svm", tiny_text, sizeof tiny_text - 1));
    unsigned port = th_free_port();
    snprintf(coord, sizeof coord, "127.0.0.1:%u", port);
    snprintf(log0, sizeof log0, "%s/r0.log", dir);
    snprintf(log1, sizeof log1, "%s/r1.log", dir);
    snprintf(log1b, sizeof log1b, "%s/r1b.log", dir);
    snprintf(log2, sizeof log2, "%s/r2.log", dir);
#define RANK(r, key)                                                           \
    "'%s' train --world 3 --rank " #r " --coordinator %s --secret-file '%s' " \
    "--connect-timeout 20 --net-timeout 10 '%s'", th_bin(), coord, key, tiny
    pid_t p0 = th_spawn(log0, RANK(0, good));
    pid_t p1 = th_spawn(log1, RANK(1, good));
    cr_assert(wait_text(log0, "rank 1 joined", 15), "rank 1 never joined:\n%s",
              slurp(log0));

    /* A wrong secret: the client is told, the listener says who. */
    pid_t pb = th_spawn(log1b, RANK(2, bad));
    cr_assert_eq(th_wait_for(pb, 20), 1);
    cr_assert(strstr(slurp(log1b), "wrong secret"), "%s", slurp(log1b));
    cr_assert(strstr(slurp(log0), "refused 127.0.0.1:"), "%s", slurp(log0));

    /* A duplicate rank. */
    pb = th_spawn(log1b, RANK(1, good));
    cr_assert_eq(th_wait_for(pb, 20), 1);
    cr_assert(strstr(slurp(log1b), "rank 1 is already taken by 127.0.0.1:"),
              "%s", slurp(log1b));

    /* A wrong protocol version, through the library. */
    struct hog_net_opts o;
    hog_net_opts_init(&o);
    o.world = 3;
    o.rank = 2;
    o.coordinator = coord;
    o.connect_timeout = 5;
    o.timeout = 5;
    o.protocol = 99;
    static const unsigned char key[] = "correct horse battery staple";
    o.secret = key;
    o.secret_len = sizeof key - 1;
    hog_net *n = NULL;
    hog_err err = { { 0 } };
    cr_assert_eq(hog_net_open_tcp(&o, &n, &err), HOG_ENET);
    cr_assert(strstr(err.msg, "protocol version 99"), "%s", err.msg);

    /* 1 MB of random bytes. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { 0 };
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    unsigned char *junk = malloc(1 << 20);
    uint64_t z = 0x1234567;
    for (size_t i = 0; i < 1 << 20; i++) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        junk[i] = (unsigned char)(z >> 56);
    }
    size_t sent = 0;
    while (sent < (1u << 20)) {
        ssize_t k = send(fd, junk + sent, (1u << 20) - sent, MSG_NOSIGNAL);
        if (k <= 0)
            break; /* refused and closed: what we want */
        sent += (size_t)k;
    }
    /* Read what the listener says until it closes: closing with its bytes
     * unread would reset the connection before it has read ours. */
    shutdown(fd, SHUT_WR);
    char sink[4096];
    while (recv(fd, sink, sizeof sink, 0) > 0)
        ;
    close(fd);
    free(junk);
    cr_assert(wait_text(log0, "not a hogtrain peer", 10), "%s", slurp(log0));

    /* The listener is alive: the real rank 2 joins and the job runs. */
    pid_t p2 = th_spawn(log2, RANK(2, good));
    int c0 = th_wait_for(p0, 30), c1 = th_wait_for(p1, 30),
        c2 = th_wait_for(p2, 30);
    cr_assert(c0 == 0 && c1 == 0 && c2 == 0, "exit %d %d %d\n%s\n%s\n%s", c0,
              c1, c2, slurp(log0), slurp(log1), slurp(log2));
    const char *l0 = slurp(log0);
    cr_assert(strstr(l0, "wrong secret"), "%s", l0);
    cr_assert(strstr(l0, "protocol version 99"), "%s", l0);
    cr_assert(strstr(l0, "already taken"), "%s", l0);
#undef RANK
}

/* A connection to 127.0.0.1:port, blocking; -1 when refused. */
static int connect_port(unsigned port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { 0 };
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
        return fd;
    close(fd);
    return -1;
}

/* An idle connection to the coordinator before the ranks join (a port
 * scanner, a stuck client) holds only itself: rank 0 serves the real
 * ranks' handshakes beside it, and the job runs. (It used to take the
 * listener for a handshake step, 10 s, while the joining ranks gave up
 * after 10 s without the challenge.) */
Test(net, idle_connection_before_join, .timeout = 90)
{
    char dir[512], coord[64], logs[3][600], data[600];
    th_tmpdir(dir, sizeof dir);
    static const char text[] = "1 1:1 2:0.5\n-1 2:1 3:1\n1 1:0.5 3:0.2\n"
                               "-1 3:1 4:1\n1 1:1 4:0.1\n-1 2:1 4:1\n";
    snprintf(data, sizeof data, "%s", th_write(dir, "d.svm", text,
                                               sizeof text - 1));
    unsigned port = th_free_port();
    snprintf(coord, sizeof coord, "127.0.0.1:%u", port);
    pid_t pid[3];
    for (int r = 0; r < 3; r++)
        snprintf(logs[r], sizeof logs[r], "%s/r%d.log", dir, r);
#define RANK(r)                                                                \
    "'%s' train --world 3 --rank %d --coordinator %s '%s'", th_bin(), r,     \
        coord, data
    pid[0] = th_spawn(logs[0], RANK(0));
    int idle = -1;
    for (double t0 = now_s(); idle < 0 && now_s() - t0 < 20;)
        if ((idle = connect_port(port)) < 0)
            usleep(20000);
    cr_assert_geq(idle, 0, "rank 0 never listened:\n%s", slurp(logs[0]));
    /* Let rank 0 take the idle connection first. */
    usleep(300000);
    pid[1] = th_spawn(logs[1], RANK(1));
    pid[2] = th_spawn(logs[2], RANK(2));
#undef RANK
    int c[3];
    char l[3][1 << 12];
    for (int r = 0; r < 3; r++) {
        c[r] = th_wait_for(pid[r], 40);
        snprintf(l[r], sizeof l[r], "%s", slurp(logs[r]));
    }
    close(idle);
    cr_assert(c[0] == 0 && c[1] == 0 && c[2] == 0, "exit %d %d %d\n%s\n%s\n%s",
              c[0], c[1], c[2], l[0], l[1], l[2]);
}

/* A joining rank whose handshake goes unanswered (here a listener that
 * never accepts, then closes: the coordinator's place taken, or a
 * coordinator still starting) connects again until --connect-timeout, and
 * joins the real coordinator when it comes. */
Test(net, join_retries_until_connect_timeout, .timeout = 90)
{
    char dir[512], coord[64], log0[600], log1[600], data[600];
    th_tmpdir(dir, sizeof dir);
    static const char text[] = "1 1:1\n-1 2:1\n1 1:1 3:1\n-1 2:1 3:1\n";
    snprintf(data, sizeof data, "%s", th_write(dir, "d.svm", text,
                                               sizeof text - 1));
    snprintf(log0, sizeof log0, "%s/r0.log", dir);
    snprintf(log1, sizeof log1, "%s/r1.log", dir);
    /* CLOEXEC: the ranks spawned must not hold it once it is closed. */
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { 0 };
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    cr_assert_eq(bind(lfd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(lfd, 16), 0);
    socklen_t l = sizeof a;
    getsockname(lfd, (struct sockaddr *)&a, &l);
    snprintf(coord, sizeof coord, "127.0.0.1:%u", ntohs(a.sin_port));
    /* --net-timeout 1: a handshake step waits 1 s. */
    pid_t p1 = th_spawn(log1, "'%s' train --world 2 --rank 1 --coordinator %s "
                     "--connect-timeout 40 --net-timeout 1 '%s'", th_bin(),
                     coord, data);
    cr_assert(wait_text(log1, "trying again", 20), "%s", slurp(log1));
    close(lfd);
    pid_t p0 = th_spawn(log0, "'%s' train --world 2 --rank 0 --coordinator %s "
                     "--connect-timeout 40 --net-timeout 1 '%s'", th_bin(),
                     coord, data);
    int c0 = th_wait_for(p0, 40), c1 = th_wait_for(p1, 40);
    char l0[1 << 12];
    snprintf(l0, sizeof l0, "%s", slurp(log0));
    cr_assert(c0 == 0 && c1 == 0, "exit %d %d\n%s\n%s", c0, c1, l0,
              slurp(log1));
}

/* ---- training across processes ------------------------------------------------- */

/* The number after key in text; NaN when absent. */
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

/* 3 processes, each every third row of news20.binary, reach the
 * single-process test accuracy within 1 point, and end with the same
 * model bit for bit. */
static void three_ranks_news20(const char *sync_args)
{
    TH_DATA_OR_SKIP(train, "news20.binary.train.svm");
    TH_DATA_OR_SKIP(test, "news20.binary.test.svm");
    char dir[512], out[1 << 14], logs[3][600], models[3][600], ckpt[600];
    th_tmpdir(dir, sizeof dir);
    int rc = th_run(out, sizeof out, "'%s' train '%s' -t '%s' 2>&1", th_bin(),
                    train, test);
    cr_assert_eq(rc, 0, "%s", out);
    double single = number_after(out, "test accuracy ");
    cr_assert(isfinite(single), "%s", out);

    char coord[64];
    snprintf(coord, sizeof coord, "127.0.0.1:%u", th_free_port());
    snprintf(ckpt, sizeof ckpt, "%s/ckpt.hgm", dir);
    pid_t pid[3];
    for (int r = 0; r < 3; r++) {
        snprintf(logs[r], sizeof logs[r], "%s/r%d.log", dir, r);
        snprintf(models[r], sizeof models[r], "%s/m%d.hgm", dir, r);
        pid[r] = th_spawn(logs[r], "'%s' train --world 3 --rank %d --coordinator "
                       "%s --shard stride --connect-timeout 20 --net-timeout "
                       "20 %s %s%s '%s' -t '%s' -o '%s'", th_bin(), r, coord,
                       sync_args, r == 0 ? "--checkpoint " : "",
                       r == 0 ? ckpt : "", train, test, models[r]);
    }
    double acc[3];
    for (int r = 0; r < 3; r++) {
        int c = th_wait_for(pid[r], 60);
        cr_assert_eq(c, 0, "rank %d exit %d:\n%s", r, c, slurp(logs[r]));
        acc[r] = number_after(slurp(logs[r]), "test accuracy ");
    }
    cr_assert(fabs(acc[0] - single) <= 1.0, "3 ranks %s: %.2f%%, one "
              "process %.2f%%", sync_args, acc[0], single);
    cr_assert(acc[0] == acc[1] && acc[1] == acc[2]);
    cr_assert(same_file(models[0], models[1]) && same_file(models[0], models[2]),
              "the ranks' models differ");
    struct stat st;
    cr_assert_eq(stat(ckpt, &st), 0, "no checkpoint written");
    rc = th_run(out, sizeof out, "ls -A '%s'", dir);
    cr_assert_null(strstr(out, ".tmp."), "temporary file left:\n%s", out);
}

/* MA: the step size scaled by the number of ranks (docs/SCALEOUT.md). */
Test(net, train_ma_news20, .timeout = 120)
{
    three_ranks_news20("--sync ma --sync-every 4000 --eta 1.5");
}

Test(net, train_bmuf_news20, .timeout = 120)
{
    three_ranks_news20("--sync bmuf --sync-every 1000");
}

/* Hogwild! inside each process: its threads stop at a barrier at every
 * block's end while thread 0 averages across the processes. */
Test(net, train_ma_hogwild_news20, .timeout = 120)
{
    three_ranks_news20("--sync ma --sync-every 4000 --eta 1.5 --algo hogwild "
                       "--threads 2");
}

/* --sync-every 0 has one meaning for every trainer that averages: no
 * averaging within an epoch, one at its end. 2 processes on a9a: with 0
 * and with more rows per block than a rank has, the same model bit for
 * bit on every rank (one block per epoch either way). */
static void two_ranks_a9a(const char *dir, const char *sync, char models[2][600])
{
    TH_DATA_OR_SKIP(train, "a9a");
    char logs[2][600], coord[64];
    snprintf(coord, sizeof coord, "127.0.0.1:%u", th_free_port());
    pid_t pid[2];
    for (int r = 0; r < 2; r++) {
        snprintf(logs[r], sizeof logs[r], "%s/%s.r%d.log", dir, sync, r);
        snprintf(models[r], sizeof models[r], "%s/%s.m%d.hgm", dir, sync, r);
        pid[r] = th_spawn(logs[r], "'%s' train --world 2 --rank %d --coordinator "
                       "%s --shard stride --connect-timeout 20 --net-timeout "
                       "30 --sync-every %s --epochs 2 '%s' -o '%s'", th_bin(),
                       r, coord, sync, train, models[r]);
    }
    for (int r = 0; r < 2; r++) {
        int c = th_wait_for(pid[r], 60);
        cr_assert_eq(c, 0, "rank %d, --sync-every %s: exit %d:\n%s", r, sync,
                     c, slurp(logs[r]));
    }
}

Test(net, sync_every_0_averages_at_each_epochs_end, .timeout = 120)
{
    char dir[512], zero[2][600], whole[2][600];
    th_tmpdir(dir, sizeof dir);
    two_ranks_a9a(dir, "0", zero);
    two_ranks_a9a(dir, "100000000", whole);
    cr_assert(same_file(zero[0], zero[1]), "the ranks' models differ");
    cr_assert(same_file(zero[0], whole[0]), "--sync-every 0 is not one "
              "averaging per epoch");
}

/* K classes across processes: news20's 20 classes on 2 ranks of every
 * other row reach the single-process accuracy within 1.5 points with the
 * same model on both ranks: one-vs-rest (each class's vector averaged in
 * turn) and softmax (the K vectors averaged at once). */
static void two_ranks_news20_classes(const char *mode)
{
    TH_DATA_OR_SKIP(train, "news20.test.svm");
    TH_DATA_OR_SKIP(test, "news20.train.svm");
    char dir[512], out[1 << 14], logs[2][600], models[2][600], coord[64];
    th_tmpdir(dir, sizeof dir);
    int rc = th_run(out, sizeof out, "'%s' train --multiclass %s --epochs 2 "
                    "'%s' -t '%s' 2>&1", th_bin(), mode, train, test);
    cr_assert_eq(rc, 0, "%s", out);
    double single = number_after(out, "test accuracy ");
    cr_assert(isfinite(single), "%s", out);
    snprintf(coord, sizeof coord, "127.0.0.1:%u", th_free_port());
    pid_t pid[2];
    for (int r = 0; r < 2; r++) {
        snprintf(logs[r], sizeof logs[r], "%s/r%d.log", dir, r);
        snprintf(models[r], sizeof models[r], "%s/m%d.hgm", dir, r);
        pid[r] = th_spawn(logs[r], "'%s' train --world 2 --rank %d --coordinator "
                       "%s --shard stride --connect-timeout 20 --net-timeout "
                       "30 --multiclass %s --epochs 2 '%s' -t '%s' -o '%s'",
                       th_bin(), r, coord, mode, train, test, models[r]);
    }
    double acc[2];
    for (int r = 0; r < 2; r++) {
        int c = th_wait_for(pid[r], 150);
        cr_assert_eq(c, 0, "rank %d exit %d:\n%s", r, c, slurp(logs[r]));
        acc[r] = number_after(slurp(logs[r]), "test accuracy ");
        char said[64];
        snprintf(said, sizeof said, "of 20 classes (%s)",
                 strcmp(mode, "ovr") ? "softmax" : "one-vs-rest");
        cr_assert(strstr(slurp(logs[r]), said), "%s", slurp(logs[r]));
    }
    cr_assert(fabs(acc[0] - single) <= 1.5, "2 ranks, %s: %.2f%%, one "
              "process %.2f%%", mode, acc[0], single);
    cr_assert(same_file(models[0], models[1]), "the ranks' models differ");
}

Test(net, train_ma_news20_classes, .timeout = 180)
{
    two_ranks_news20_classes("ovr");
}

/* Skipped in the sanitizer builds: softmax's averaging is
 * softmax/averaged_at_every_block_end's there, and the K-class exchange
 * train_ma_news20_classes'. */
Test(net, train_ma_news20_softmax, .timeout = 180)
{
    TH_HEAVY_OR_SKIP();
    two_ranks_news20_classes("softmax");
}

/* Ranks whose files hold different classes are told so (each would train
 * other classes); BMUF with K classes is refused with a sentence. */
Test(net, classes_must_agree, .timeout = 60)
{
    char dir[512], logs[2][600], files[2][600], coord[64];
    th_tmpdir(dir, sizeof dir);
    static const char a[] = "1 1:1\n2 2:1\n3 3:1\n1 1:1 2:1\n";
    static const char b[] = "1 1:1\n2 2:1\n4 3:1\n1 1:1 2:1\n";
    snprintf(files[0], sizeof files[0], "%s", th_write(dir, "a.svm", a,
                                                       sizeof a - 1));
    snprintf(files[1], sizeof files[1], "%s", th_write(dir, "b.svm", b,
                                                       sizeof b - 1));
    for (int pass = 0; pass < 2; pass++) {
        snprintf(coord, sizeof coord, "127.0.0.1:%u", th_free_port());
        pid_t pid[2];
        for (int r = 0; r < 2; r++) {
            snprintf(logs[r], sizeof logs[r], "%s/p%d-r%d.log", dir, pass, r);
            pid[r] = th_spawn(logs[r], "'%s' train --world 2 --rank %d "
                           "--coordinator %s --connect-timeout 20 "
                           "--net-timeout 10 %s '%s'", th_bin(), r, coord,
                           pass ? "--sync bmuf" : "",
                           files[pass ? 0 : r]);
        }
        for (int r = 0; r < 2; r++) {
            int c = th_wait_for(pid[r], 40);
            const char *l = slurp(logs[r]);
            cr_assert_eq(c, 1, "rank %d exit %d:\n%s", r, c, l);
            if (pass == 0)
                cr_assert(strstr(l, "hold different classes"), "%s", l);
            else
                cr_assert(strstr(l, "drop --sync bmuf"), "%s", l);
        }
    }
}

/* kill -9 of one rank in the middle: the others exit within the timeout
 * (+5 s) with a sentence naming it. */
static void kill_one_rank(const char *algo)
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
                       "--connect-timeout 20 --sync-every 200 --epochs 1000 "
                       "%s '%s'", th_bin(), r, coord, timeout, algo, train);
    }
    /* Kill rank 1 once it trains (it has printed its epoch header). */
    cr_assert(wait_text(logs[0], "epoch", 30), "%s", slurp(logs[0]));
    usleep(300000);
    kill(pid[1], SIGKILL);
    double t0 = now_s();
    int c0 = th_wait_for(pid[0], timeout + 5), c2 = th_wait_for(pid[2], timeout + 5);
    double dt = now_s() - t0;
    waitpid(pid[1], NULL, 0);
    cr_assert(c0 == 1 && c2 == 1, "exit %d and %d after %.1f s:\n%s\n%s", c0,
              c2, dt, slurp(logs[0]), slurp(logs[2]));
    cr_assert(strstr(slurp(logs[0]), "rank 1 (127.0.0.1:"), "%s",
              slurp(logs[0]));
    cr_assert(strstr(slurp(logs[2]), "rank 1 (127.0.0.1:"), "%s",
              slurp(logs[2]));
}

Test(net, kill_one_rank, .timeout = 60) { kill_one_rank(""); }

/* The same with Hogwild!: thread 0's failed averaging stops the others at
 * their barrier, and the process exits with the sentence. */
Test(net, kill_one_rank_hogwild, .timeout = 60)
{
    kill_one_rank("--algo hogwild --threads 2");
}

/* A rank that stops answering (SIGSTOP): both survivors exit 1 within the
 * documented bound, the timeout plus the grace of min(timeout/2, 2 s)
 * (docs/SCALEOUT.md, Faults), and both name the stopped rank, never each
 * other. The bound is asserted from the stop, with 0.5 s for the block
 * the survivors are finishing and the processes' exit. */
Test(net, silent_rank_times_out, .timeout = 60)
{
    TH_DATA_OR_SKIP(train, "news20.binary.train.svm");
    char dir[512], logs[3][600], coord[64];
    th_tmpdir(dir, sizeof dir);
    snprintf(coord, sizeof coord, "127.0.0.1:%u", th_free_port());
    const double timeout = 4, bound = timeout + fmin(timeout / 2, 2) + 0.5;
    pid_t pid[3];
    for (int r = 0; r < 3; r++) {
        snprintf(logs[r], sizeof logs[r], "%s/r%d.log", dir, r);
        pid[r] = th_spawn(logs[r], "'%s' train --world 3 --rank %d "
                       "--coordinator %s --shard stride --net-timeout %g "
                       "--connect-timeout 20 --sync-every 200 --epochs 1000 "
                       "'%s'", th_bin(), r, coord, timeout, train);
    }
    cr_assert(wait_text(logs[0], "epoch", 30), "%s", slurp(logs[0]));
    usleep(300000);
    kill(pid[1], SIGSTOP);
    double t0 = now_s();
    int c0 = th_wait_for(pid[0], bound + 10);
    double dt0 = now_s() - t0;
    int c2 = th_wait_for(pid[2], bound + 10);
    double dt2 = now_s() - t0;
    kill(pid[1], SIGKILL);
    waitpid(pid[1], NULL, 0);
    char l0[1 << 12], l2[1 << 12];
    snprintf(l0, sizeof l0, "%s", slurp(logs[0]));
    snprintf(l2, sizeof l2, "%s", slurp(logs[2]));
    cr_assert(c0 == 1 && c2 == 1, "exit %d and %d:\n%s\n%s", c0, c2, l0, l2);
    /* Rank 2 follows the stopped rank and blames it; rank 0 hears of it
     * from rank 2's abort. */
    cr_assert(strstr(l2, "rank 1 (127.0.0.1:") &&
              strstr(l2, "sent nothing for 4 s"), "%s", l2);
    cr_assert(strstr(l0, "rank 1 (127.0.0.1:"), "rank 0 does not name rank "
              "1:\n%s", l0);
    const char *p = strstr(l0, "rank 2 (127.0.0.1:");
    cr_assert(!p || strstr(p, "stopped the all-reduce: rank 1 (127.0.0.1:"),
              "rank 0 blames rank 2:\n%s", l0);
    cr_log_info("the survivors exited %.2f s and %.2f s after the stop "
                "(bound %.2f s)", dt0, dt2, bound);
    cr_assert(dt0 <= bound && dt2 <= bound, "the survivors exited %.2f s and "
              "%.2f s after the stop; the bound is %.2f s (timeout %g s)", dt0,
              dt2, bound, timeout);
}

/* A peer that never connects: a start-up timeout naming it. */
Test(net, startup_timeout, .timeout = 30)
{
    char dir[512], log0[600], log1[600], coord[64];
    th_tmpdir(dir, sizeof dir);
    static const char text[] = "1 1:1\n-1 2:1\n";
    char data[600];
    snprintf(data, sizeof data, "%s", th_write(dir, "d.svm", text,
                                               sizeof text - 1));
    snprintf(log0, sizeof log0, "%s/r0.log", dir);
    snprintf(log1, sizeof log1, "%s/r1.log", dir);
    snprintf(coord, sizeof coord, "127.0.0.1:%u", th_free_port());
    pid_t p0 = th_spawn(log0, "'%s' train --world 3 --rank 0 --coordinator %s "
                     "--connect-timeout 2 '%s'", th_bin(), coord, data);
    pid_t p1 = th_spawn(log1, "'%s' train --world 3 --rank 1 --coordinator %s "
                     "--connect-timeout 2 '%s'", th_bin(), coord, data);
    cr_assert_eq(th_wait_for(p0, 10), 1);
    cr_assert_eq(th_wait_for(p1, 10), 1);
    cr_assert(strstr(slurp(log0), "rank 2 never joined"), "%s", slurp(log0));
    /* Rank 1 learns it from the coordinator closing on it. */
    cr_assert(strstr(slurp(log1), "coordinator 127.0.0.1:"), "%s",
              slurp(log1));

    /* Nobody listening at all. */
    pid_t p = th_spawn(log1, "'%s' train --world 2 --rank 1 --coordinator %s "
                    "--connect-timeout 1 '%s'", th_bin(), coord, data);
    cr_assert_eq(th_wait_for(p, 10), 1);
    cr_assert(strstr(slurp(log1), "could not reach the coordinator"), "%s",
              slurp(log1));
}

/* Without a secret, only loopback; ranks with different options refuse. */
Test(net, loopback_only_without_secret)
{
    char out[4096], dir[512], data[600];
    th_tmpdir(dir, sizeof dir);
    static const char text[] = "1 1:1\n-1 2:1\n";
    snprintf(data, sizeof data, "%s", th_write(dir, "d.svm", text,
                                               sizeof text - 1));
    /* Refused before any socket is made: no traffic leaves the machine. */
    int rc = th_run(out, sizeof out, "'%s' train --world 2 --rank 0 "
                    "--coordinator 10.200.0.1:9 --connect-timeout 1 "
                    "'%s' 2>&1", th_bin(), data);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "loopback"), "%s", out);
}

/* A malformed --coordinator is a usage error (exit 2, the usage line),
 * caught before any socket is made; a well-formed one goes on. */
Test(net, coordinator_malformed_is_usage_error, .timeout = 30)
{
    char out[4096], dir[512], data[600];
    th_tmpdir(dir, sizeof dir);
    static const char text[] = "1 1:1\n-1 2:1\n";
    snprintf(data, sizeof data, "%s", th_write(dir, "d.svm", text,
                                               sizeof text - 1));
    static const char *bad[] = { "nohost", "h:99999", ":", "h:", ":7000",
                                 "h:0", "h:12x", "[::1", "[::1]7000" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = th_run(out, sizeof out, "'%s' train --world 2 --rank 1 "
                        "--coordinator '%s' --connect-timeout 1 '%s'",
                        th_bin(), bad[i], data);
        cr_assert_eq(rc, 2, "--coordinator %s: exit %d\n%s", bad[i], rc, out);
        cr_assert(strstr(out, "usage: hogtrain train"), "%s", out);
        cr_assert(strstr(out, "coordinator '"), "%s", out);
    }
    /* Well formed, nobody there: a runtime error as before. */
    int rc = th_run(out, sizeof out, "'%s' train --world 2 --rank 1 "
                    "--coordinator 127.0.0.1:%u --connect-timeout 0.3 '%s'",
                    th_bin(), th_free_port(), data);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(out, "could not reach the coordinator"), "%s", out);
}

Test(net, options_must_agree, .timeout = 30)
{
    char dir[512], log0[600], log1[600], coord[64], data[600];
    th_tmpdir(dir, sizeof dir);
    static const char text[] = "1 1:1\n-1 2:1\n1 1:1 3:1\n-1 2:1 3:1\n";
    snprintf(data, sizeof data, "%s", th_write(dir, "d.svm", text,
                                               sizeof text - 1));
    snprintf(log0, sizeof log0, "%s/r0.log", dir);
    snprintf(log1, sizeof log1, "%s/r1.log", dir);
    snprintf(coord, sizeof coord, "127.0.0.1:%u", th_free_port());
    pid_t p0 = th_spawn(log0, "'%s' train --world 2 --rank 0 --coordinator %s "
                     "--epochs 3 '%s'", th_bin(), coord, data);
    pid_t p1 = th_spawn(log1, "'%s' train --world 2 --rank 1 --coordinator %s "
                     "--epochs 4 '%s'", th_bin(), coord, data);
    cr_assert_eq(th_wait_for(p0, 20), 1);
    cr_assert_eq(th_wait_for(p1, 20), 1);
    cr_assert(strstr(slurp(log0), "different training options"), "%s",
              slurp(log0));
}

/* The MPI backend: mpirun -np 3 on loopback, when this build has MPI and
 * mpirun is installed. */
Test(net, mpi_three_ranks, .timeout = 120)
{
    char out[1 << 15];
    if (!hog_net_have_mpi())
        cr_skip_test("this build has no MPI (mpicc was not found); skipping");
    if (th_run(out, sizeof out, "command -v mpirun") != 0)
        cr_skip_test("mpirun is not installed; skipping");
    TH_DATA_OR_SKIP(train, "news20.binary.train.svm");
    TH_DATA_OR_SKIP(test, "news20.binary.test.svm");
    int rc = th_run(out, sizeof out, "'%s' train '%s' -t '%s' 2>&1", th_bin(),
                    train, test);
    cr_assert_eq(rc, 0, "%s", out);
    double single = number_after(out, "test accuracy ");
    rc = th_run(out, sizeof out,
                "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
                "OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo "
                "OMPI_MCA_oob_tcp_if_include=lo "
                "timeout 100 mpirun --oversubscribe -np 3 '%s' train --sync "
                "ma --eta 1.5 --sync-every 4000 --shard stride '%s' -t '%s' "
                "2>&1", th_bin(), train, test);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "rank 2 of 3 (mpi)"), "%s", out);
    /* Three summaries, one accuracy: the ranks hold the same model. */
    const char *p = out;
    double acc[3];
    for (int r = 0; r < 3; r++) {
        p = strstr(p, "test accuracy ");
        cr_assert_not_null(p, "%s", out);
        acc[r] = strtod(p + 14, NULL);
        p += 14;
    }
    cr_assert(acc[0] == acc[1] && acc[1] == acc[2], "%s", out);
    cr_assert(fabs(acc[0] - single) <= 1.0, "mpi %.2f%%, one process %.2f%%",
              acc[0], single);
}

/* Three ranks on three hosts of their own (network namespaces). */
Test(net, netns_three_hosts, .timeout = 90)
{
    char dir[512], out[1 << 15];
    th_tmpdir(dir, sizeof dir);
    int rc = th_run(out, sizeof out, "sh '%s/tests/net_netns.sh' '%s' '%s'",
                    getenv("HOGTRAIN_SRC") ? getenv("HOGTRAIN_SRC") : ".",
                    th_bin(), dir);
    if (rc == 77)
        cr_skip_test("%s", out);
    cr_assert_eq(rc, 0, "%s", out);
}
