/*
 * All-reduce bandwidth on loopback, against a plain point-to-point TCP
 * transfer between two processes measured in the same run.
 *
 *   net_bench tcp [MB ...]    fork-based: p2p, then the ring with 2, 3, 4
 *                             ranks (default sizes 1 16 256)
 *   net_bench mpi [MB ...]    under mpirun: the library's MPI backend
 *                             (MPI_Allreduce), world from mpirun
 *
 * CSV on stdout: backend,ranks,bytes,reps,seconds,algbw_GBps,frac_p2p
 * (algbw = bytes / seconds per all-reduce; frac_p2p = algbw / the p2p
 * bandwidth of the same size; the p2p row has ranks 2 and frac 1).
 */
#include "net/net.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { 0 };
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0)
        return 0;
    socklen_t l = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &l);
    close(fd);
    return ntohs(a.sin_port);
}

static int reps_for(size_t bytes)
{
    return bytes <= (2u << 20) ? 50 : bytes <= (32u << 20) ? 10 : 3;
}

/* Plain TCP: one process sends `bytes`, reps times; the other receives and
 * answers one byte at the end. Seconds per transfer. */
static double p2p(size_t bytes, int reps)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { 0 };
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int sz = 4 << 20;
    setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 1))
        return -1;
    socklen_t l = sizeof a;
    getsockname(lfd, (struct sockaddr *)&a, &l);
    char *buf = malloc(bytes);
    memset(buf, 1, bytes);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
        if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
            _exit(1);
        for (int r = 0; r < reps + 1; r++) {
            for (size_t s = 0; s < bytes;) {
                ssize_t k = send(fd, buf + s, bytes - s, 0);
                if (k <= 0)
                    _exit(1);
                s += (size_t)k;
            }
            char c;
            if (recv(fd, &c, 1, MSG_WAITALL) != 1)
                _exit(1);
        }
        _exit(0);
    }
    int fd = accept(lfd, NULL, NULL);
    double t0 = 0;
    for (int r = 0; r < reps + 1; r++) {
        if (r == 1)
            t0 = hog_now(); /* the first transfer warms up */
        for (size_t s = 0; s < bytes;) {
            ssize_t k = recv(fd, buf + s, bytes - s, 0);
            if (k <= 0)
                return -1;
            s += (size_t)k;
        }
        if (send(fd, "k", 1, 0) != 1)
            return -1;
    }
    double t = (hog_now() - t0) / reps;
    waitpid(pid, NULL, 0);
    close(fd);
    close(lfd);
    free(buf);
    return t;
}

/* One rank: open, warm up, time reps all-reduces. Seconds per call. */
static double rank_run(hog_net *n, size_t bytes, int reps)
{
    size_t len = bytes / 4;
    float *x = malloc(len * sizeof *x);
    for (size_t i = 0; i < len; i++)
        x[i] = (float)(i % 1000) * 1e-3f;
    hog_err err;
    uint64_t b = 0;
    if (hog_net_allreduce_sum(n, x, len, &err) != HOG_OK ||
        hog_net_allreduce_max(n, &b, 1, &err) != HOG_OK) {
        fprintf(stderr, "net_bench: %s\n", err.msg);
        exit(1);
    }
    double t0 = hog_now();
    for (int r = 0; r < reps; r++)
        if (hog_net_allreduce_sum(n, x, len, &err) != HOG_OK) {
            fprintf(stderr, "net_bench: %s\n", err.msg);
            exit(1);
        }
    double t = (hog_now() - t0) / reps;
    free(x);
    return t;
}

static double tcp_allreduce(unsigned world, size_t bytes, int reps)
{
    char coord[64];
    snprintf(coord, sizeof coord, "127.0.0.1:%u", free_port());
    double *out = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pid_t pid[16];
    for (unsigned r = 0; r < world; r++) {
        pid[r] = fork();
        if (pid[r] == 0) {
            struct hog_net_opts o;
            hog_net_opts_init(&o);
            o.world = world;
            o.rank = r;
            o.coordinator = coord;
            o.connect_timeout = 30;
            o.timeout = 60;
            const char *ck = getenv("NET_BENCH_CHUNK_KB"); /* tuning */
            if (ck)
                o.chunk_bytes = (size_t)atol(ck) << 10;
            hog_net *n;
            hog_err err;
            if (hog_net_open_tcp(&o, &n, &err) != HOG_OK) {
                fprintf(stderr, "net_bench: %s\n", err.msg);
                _exit(1);
            }
            out[r] = rank_run(n, bytes, reps);
            hog_net_close(n);
            _exit(0);
        }
    }
    int bad = 0;
    for (unsigned r = 0; r < world; r++) {
        int st;
        waitpid(pid[r], &st, 0);
        bad |= !WIFEXITED(st) || WEXITSTATUS(st);
    }
    double t = 0;
    for (unsigned r = 0; r < world; r++)
        t = out[r] > t ? out[r] : t;
    munmap(out, 4096);
    return bad ? -1 : t;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "tcp") && strcmp(argv[1], "mpi"))) {
        fprintf(stderr, "usage: net_bench tcp|mpi [MB ...]\n");
        return 2;
    }
    size_t sizes[16];
    int ns = 0;
    for (int i = 2; i < argc && ns < 16; i++)
        sizes[ns++] = (size_t)atof(argv[i]) * (1u << 20);
    if (ns == 0) {
        sizes[0] = 1u << 20;
        sizes[1] = 16u << 20;
        sizes[2] = 256u << 20;
        ns = 3;
    }
    if (strcmp(argv[1], "mpi") == 0) {
        struct hog_net_opts o;
        hog_net_opts_init(&o);
        hog_net *n;
        hog_err err;
        if (hog_net_open_mpi(&o, &n, &err) != HOG_OK) {
            fprintf(stderr, "net_bench: %s\n", err.msg);
            return 1;
        }
        for (int k = 0; k < ns; k++) {
            int reps = reps_for(sizes[k]);
            double t = rank_run(n, sizes[k], reps);
            if (hog_net_rank(n) == 0)
                printf("mpi,%u,%zu,%d,%.6f,%.3f,\n", hog_net_world(n),
                       sizes[k], reps, t, (double)sizes[k] / t / 1e9);
        }
        hog_net_close(n);
        return 0;
    }
    printf("backend,ranks,bytes,reps,seconds,algbw_GBps,frac_p2p\n");
    for (int k = 0; k < ns; k++) {
        size_t b = sizes[k];
        int reps = reps_for(b);
        double tp = p2p(b, reps);
        double bw = (double)b / tp / 1e9;
        printf("p2p,2,%zu,%d,%.6f,%.3f,1\n", b, reps, tp, bw);
        fflush(stdout);
        const char *mw = getenv("NET_BENCH_MAX_RANKS"); /* tuning */
        unsigned maxw = mw ? (unsigned)atoi(mw) : 4;
        for (unsigned w = 2; w <= maxw && w <= 16; w++) {
            double t = tcp_allreduce(w, b, reps);
            if (t < 0)
                return 1;
            double ab = (double)b / t / 1e9;
            printf("tcp,%u,%zu,%d,%.6f,%.3f,%.3f\n", w, b, reps, t, ab,
                   ab / bw);
            fflush(stdout);
        }
    }
    return 0;
}
