/*
 * --algo auto, the default: which trainer runs, chosen where the front
 * door first knows the data (train.c), before anything is checked
 * against it or allocated.
 *
 * The serial trainer unless every one of these holds; then Hogwild!
 * with a model per thread (--replicas core) under FTRL:
 *   - two threads or more (--threads, or the allowed cores);
 *   - FTRL, the default schedule: the replicas average its sums, and
 *     that is what was measured (docs/BENCHMARKS.md, "--algo auto");
 *   - two labels or a regression target: one-vs-rest's classes spread
 *     over the threads in the serial trainer already, each class a
 *     thread's, and softmax's K-wide rows have no replicas;
 *   - the data in memory, at least AUTO_MIN_NNZ nonzeros: below it five
 *     epochs take about a tenth of a second on one core, the whole run
 *     gains at most a tenth, and two replicas, each stepping half the
 *     rows, cost test accuracy (8 seeds, two threads: news20.binary,
 *     3.8M nonzeros, 0.90x the serial run's time at 0.12 point below;
 *     ijcnn1 0.91x at 0.20 below; a9a 0.97x, the same); the 1M-row
 *     generated set (24M): 0.76x, 0.10 point below over 4 seeds;
 *   - the replicas (a float working copy and FTRL's two sums per weight
 *     and thread) no larger than the data's indices and values: beyond
 *     that, averaging them costs more than the rows they step on;
 *   - Hogwild! takes every other option given (the conflicts' table and
 *     the memory check: a warm start of saved state, averaged SGD or
 *     --save-state keep the serial trainer).
 * The serial trainer's model is the same at any thread count; Hogwild!'s
 * with replicas is the same run after run at one thread count, and
 * differs between counts. Both are written in the progress (h->log)
 * and the JSON (hog_auto_stats).
 */
#include "train/train.h"

#include <stdio.h>
#include <string.h>

#define AUTO_MIN_NNZ (1ull << 24)
/* per weight and thread: the working copy and FTRL's z and sqrt(n) */
#define REPLICA_BYTES (3 * sizeof(float))
/* per nonzero: its index and value */
#define NONZERO_BYTES (sizeof(uint32_t) + sizeof(float))

/* "30.0M" */
static void millions(char *buf, size_t len, uint64_t n)
{
    snprintf(buf, len, "%.1fM", (double)n / 1e6);
}

/* Why the serial trainer runs, into why (NULL: Hogwild! with replicas
 * is the choice). */
static const char *serial_because(const hog_train_opts *o,
                                  const hog_train_hooks *h,
                                  const hog_data *train, bool stream,
                                  unsigned threads, char *why, size_t len)
{
    char a[32], b[32];
    if (threads < 2)
        return "one thread";
    if (stream)
        return "the data is streamed";
    if (o->schedule != HOG_SCHED_FTRL)
        return "the schedule is not ftrl";
    if (!train) /* the validation's to refuse */
        return "no data";
    if (hog_train_is_multiclass(o, train))
        return "K classes, which the serial trainer spreads over the "
               "threads";
    if (train->m.nnz < AUTO_MIN_NNZ) {
        millions(a, sizeof a, train->m.nnz);
        millions(b, sizeof b, AUTO_MIN_NNZ);
        snprintf(why, len, "%s nonzeros, below the %s where a model per "
                 "thread gains", a, b);
        return why;
    }
    uint64_t replicas = (uint64_t)threads * (train->n_features + 1) *
                        REPLICA_BYTES;
    if (replicas > train->m.nnz * NONZERO_BYTES) {
        snprintf(why, len, "%u models of %llu features would outweigh the "
                 "data's %llu nonzeros", threads,
                 (unsigned long long)train->n_features,
                 (unsigned long long)train->m.nnz);
        return why;
    }
    hog_train_opts c = *o;
    c.algo = HOG_ALGO_HOGWILD;
    c.replicas = HOG_REPLICAS_CORE;
    hog_err e;
    if (hog_train_validate(&c, h, train, &e) != HOG_OK) {
        snprintf(why, len, "Hogwild! would refuse: %.160s", e.msg);
        return why;
    }
    return NULL;
}

void hog_train_auto(hog_train_opts *o, const hog_train_hooks *h,
                    const hog_data *train, bool stream)
{
    if (o->algo != HOG_ALGO_AUTO)
        return;
    hog_auto_stats *s = h->auto_stats;
    unsigned threads = hog_train_threads(o);
    char buf[sizeof s->why], line[sizeof s->why + 96];
    const char *why = serial_because(o, h, train, stream, threads, buf,
                                     sizeof buf);
    if (why) {
        o->algo = HOG_ALGO_SERIAL;
        snprintf(line, sizeof line, "--algo auto: the serial trainer (%s)",
                 why);
    } else {
        o->algo = HOG_ALGO_HOGWILD;
        o->replicas = HOG_REPLICAS_CORE;
        char a[32];
        millions(a, sizeof a, train->m.nnz);
        snprintf(buf, sizeof buf, "%s nonzeros on %u threads", a, threads);
        why = buf;
        snprintf(line, sizeof line, "--algo auto: Hogwild! with a model per "
                 "thread (%s; --algo serial: the same model at any "
                 "--threads)", why);
    }
    if (s) {
        s->chosen = 1;
        s->algo = o->algo;
        s->replicas = o->replicas;
        s->threads = o->algo == HOG_ALGO_SERIAL ? 1 : threads;
        snprintf(s->why, sizeof s->why, "%s", why);
    }
    /* said to a caller who listens (the command without -q), where it
     * changes what a user expects: threads that train, or threads asked
     * for that do not */
    if (h->log && (o->algo != HOG_ALGO_SERIAL || o->threads > 1))
        h->log(h->log_ctx, line);
}
