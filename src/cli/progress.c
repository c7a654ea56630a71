/* The training display. On a terminal, one line rewritten in place while an
 * epoch runs:
 *
 *   epoch 3/10  42% | 1.23 M rows/s | loss 0.3251 | elapsed 4.1 s | ETA 9.8 s
 *
 * and after an epoch one plain line with its metrics: after every epoch
 * of a run of up to 30; in a longer one (coordinate descent runs hundreds
 * of quick epochs) after each of the first ten, then on a terminal at most
 * one every half second, elsewhere on a fixed schedule or after half a
 * minute without one; always after the last. The table after the run is
 * bounded alike. The wording is documented in docs/hogtrain.1; keep the
 * two in step. */
#include "cli/cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void hog_progress_init(struct hog_progress *p, FILE *f, bool quiet,
                       bool regression)
{
    memset(p, 0, sizeof *p);
    p->f = f;
    p->tty = isatty(fileno(f)) == 1;
    p->quiet = quiet;
    p->regression = regression;
    p->t0 = p->epoch_t0 = hog_now();
    p->last_loss = NAN;
}

void hog_progress_clear(struct hog_progress *p)
{
    if (p->line_open) {
        fputs("\r\033[K", p->f);
        fflush(p->f);
        p->line_open = false;
    }
}

static void fmt_secs(char *buf, size_t len, double s)
{
    if (!isfinite(s) || s < 0)
        snprintf(buf, len, "-");
    else if (s < 100)
        snprintf(buf, len, "%.1f s", s);
    else if (s < 6000)
        snprintf(buf, len, "%d min %02d s", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, len, "%d h %02d min", (int)(s / 3600),
                 (int)fmod(s / 60, 60));
}

/* One-vs-rest: classes done of K, and the share of class epochs. */
static void draw_classes(struct hog_progress *p, unsigned classes, unsigned k,
                         uint64_t done, uint64_t total, double now)
{
    double frac = total ? (double)done / (double)total : 0.0;
    double el = now - p->t0;
    char e1[32], e2[32];
    fmt_secs(e1, sizeof e1, el);
    fmt_secs(e2, sizeof e2, frac > 0 ? el * (1.0 - frac) / frac : NAN);
    fprintf(p->f, "\r\033[Kone-vs-rest: %u/%u classes trained, %3.0f%% of "
                  "the class epochs | elapsed %s | ETA %s",
            classes, k, 100.0 * frac, e1, e2);
    fflush(p->f);
    p->line_open = true;
}

static void draw_running(struct hog_progress *p, unsigned epoch,
                         unsigned epochs, uint64_t done, uint64_t total,
                         double now)
{
    /* The rate between the epoch's first report and now: set-up before
     * the first row (shuffling, allocation) does not count. */
    double dt = now - p->tick_t0;
    double rate = dt > 0 ? (double)(done - p->tick_done0) / dt : NAN;
    double frac = total ? (double)done / (double)total : 0.0;
    /* Finished epochs (metrics included) give the best estimate of an
     * epoch's wall time; before the first, project the current one. */
    double per_epoch = p->hist_len ? (p->epoch_t0 - p->t0) / p->hist_len
                                   : (double)total / rate;
    double eta = (double)(total - done) / rate +
                 (double)(epochs - epoch) * per_epoch;
    char r[32], el[32], et[32], loss[32];
    hog_cli_si(r, sizeof r, rate);
    fmt_secs(el, sizeof el, now - p->t0);
    fmt_secs(et, sizeof et, eta);
    if (isfinite(p->last_loss))
        snprintf(loss, sizeof loss, "%.4f", p->last_loss);
    else
        snprintf(loss, sizeof loss, "-");
    fprintf(p->f,
            "\r\033[Kepoch %u/%u %3.0f%% | %s rows/s | loss %s | elapsed %s | "
            "ETA %s",
            epoch, epochs, 100.0 * frac, r, loss, el, et);
    fflush(p->f);
    p->line_open = true;
}

static void put_pct(FILE *f, const char *name, double v)
{
    if (isfinite(v))
        fprintf(f, " %s %.2f%%", name, 100.0 * v);
}

static void put_num(FILE *f, const char *name, double v)
{
    if (isfinite(v))
        fprintf(f, " %s %.4f", name, v);
}

/* Epochs 1 to 10, then 20, 30, ..., 100, 200, ...: nine a decade, the
 * same in every run, so that two logs line up. */
static bool on_schedule(unsigned epoch)
{
    if (epoch <= 10)
        return true;
    while (epoch % 10 == 0)
        epoch /= 10;
    return epoch < 10;
}

/* Whether the line of epoch s (known to be the last or not) is printed;
 * the last one of a run whose end the epoch did not tell is printed by
 * hog_progress_finish. */
static bool line_due(const struct hog_progress *p, unsigned epochs,
                     const hog_epoch_stats *s, double now)
{
    if (epochs <= 30 || s->epoch <= 10 || s->epoch >= epochs || s->converged)
        return true;
    if (p->tty)
        return now - p->last_line >= 0.5;
    return on_schedule(s->epoch) || now - p->last_line >= 30.0;
}

static void print_epoch(struct hog_progress *p, unsigned epochs,
                        const hog_epoch_stats *s)
{
    FILE *f = p->f;
    char r[32];
    fprintf(f, "epoch %u/%u:", s->epoch, epochs);
    /* the training set's figures: exact, or the progressive ones alone */
    const bool prog = !isfinite(s->objective) && isfinite(s->progressive_loss);
    const bool train = isfinite(s->objective) || prog;
    if (prog) {
        fputs(" progressive", f);
        if (p->regression) {
            put_num(f, "RMSE", sqrt(2.0 * s->progressive_loss));
        } else {
            put_num(f, "loss", s->progressive_loss);
            put_pct(f, "acc", s->progressive_accuracy);
        }
    } else if (!isfinite(s->objective)) {
        /* no pass over the training set for metrics this epoch */
    } else if (p->regression) {
        fprintf(f, " objective %.6g | train", s->objective);
        put_num(f, "RMSE", s->train_rmse);
    } else {
        fprintf(f, " objective %.6g | train", s->objective);
        put_num(f, "loss", s->train_loss);
        put_pct(f, "acc", s->train_accuracy);
        put_num(f, "AUC", s->train_auc);
        put_num(f, "macro-F1", s->train_macro_f1);
    }
    if (s->has_test) {
        fputs(train ? " | test" : " test", f);
        if (p->regression) {
            put_num(f, "RMSE", s->test_rmse);
        } else {
            put_pct(f, "acc", s->test_accuracy);
            put_num(f, "AUC", s->test_auc);
            put_num(f, "macro-F1", s->test_macro_f1);
        }
    }
    if (s->has_valid) {
        fputs(" | valid", f);
        if (p->regression) {
            put_num(f, "RMSE", s->valid_rmse);
        } else {
            put_num(f, "loss", s->valid_loss);
            put_pct(f, "acc", s->valid_accuracy);
        }
        if (s->best_epoch == s->epoch)
            fputs(" (best)", f);
    }
    if (isfinite(s->gap))
        fprintf(f, " | gap %.3g", s->gap);
    fprintf(f, "%s%s rows/s | %.2f s\n",
            train || s->has_test || s->has_valid || isfinite(s->gap)
                ? " | "
                : " ",
            hog_cli_si(r, sizeof r, s->rows_per_s),
            s->seconds);
    fflush(f);
    p->printed = s->epoch;
    p->last_line = hog_now();
}

void hog_progress_cb(void *ctx, unsigned epoch, unsigned epochs, uint64_t done,
                     uint64_t total, const hog_epoch_stats *stats)
{
    struct hog_progress *p = ctx;
    double now = hog_now();
    if (!stats) {
        if (p->quiet || !p->tty)
            return;
        if (p->ovr) {
            if (now - p->last_draw >= 0.1 || done == total) {
                p->last_draw = now;
                draw_classes(p, epoch, epochs, done, total, now);
            }
            return;
        }
        if (epoch != p->cur_epoch) { /* the epoch's first report: a start */
            p->cur_epoch = epoch;
            p->tick_t0 = now;
            p->tick_done0 = done;
            return;
        }
        if (now - p->last_draw < 0.1 || done <= p->tick_done0)
            return;
        p->last_draw = now;
        draw_running(p, epoch, epochs, done, total, now);
        return;
    }
    /* The history feeds the table and the JSON report, quiet or not. */
    if (p->hist_len == p->hist_cap && !p->oom) {
        unsigned cap = p->hist_cap ? 2 * p->hist_cap : 16;
        hog_epoch_stats *h = realloc(p->hist, cap * sizeof *h);
        if (h) {
            p->hist = h;
            p->hist_cap = cap;
        } else {
            p->oom = true;
        }
    }
    if (p->hist_len < p->hist_cap)
        p->hist[p->hist_len++] = *stats;
    p->last_loss = p->regression ? stats->train_rmse : stats->train_loss;
    if (!isfinite(p->last_loss))
        p->last_loss = stats->train_loss;
    if (!isfinite(p->last_loss)) /* an epoch with progressive figures only */
        p->last_loss = p->regression ? sqrt(2.0 * stats->progressive_loss)
                                     : stats->progressive_loss;
    p->epochs = epochs;
    if (!p->quiet && line_due(p, epochs, stats, now)) {
        hog_progress_clear(p);
        print_epoch(p, epochs, stats);
    }
    p->epoch_t0 = hog_now();
    p->cur_epoch = 0;
}

void hog_progress_finish(struct hog_progress *p)
{
    hog_progress_clear(p);
    if (!p->quiet && p->hist_len && p->hist[p->hist_len - 1].epoch != p->printed)
        print_epoch(p, p->epochs, &p->hist[p->hist_len - 1]);
}

/* Whether the table has a row for hist[i]: every epoch of a run of up to
 * 30, else the schedule's, the last, and the one early stopping kept. */
static bool row_shown(const struct hog_progress *p, unsigned i)
{
    const hog_epoch_stats *last = &p->hist[p->hist_len - 1];
    return p->hist_len <= 30 || i == p->hist_len - 1 ||
           on_schedule(p->hist[i].epoch) ||
           (last->has_valid && p->hist[i].epoch == last->best_epoch);
}

/* A cell right-aligned in w columns: a percentage, a number, or "-". */
static void cell_pct(FILE *f, int w, double v)
{
    if (isfinite(v))
        fprintf(f, " %*.2f%%", w - 1, 100.0 * v);
    else
        fprintf(f, " %*s", w, "-");
}

static void cell_num(FILE *f, int w, int prec, double v)
{
    if (isfinite(v))
        fprintf(f, " %*.*f", w, prec, v);
    else
        fprintf(f, " %*s", w, "-");
}

void hog_progress_table(const struct hog_progress *p, FILE *f)
{
    if (!p->hist_len)
        return;
    bool test = p->hist[0].has_test;
    /* K classes: the macro-averaged F1 where two classes have the AUC */
    bool k = p->hist[0].classes != 0;
    fprintf(f, "%5s %12s", "epoch", "objective");
    if (p->regression)
        fprintf(f, " %10s", "train RMSE");
    else
        fprintf(f, " %10s %9s %9s", "train loss", "train acc",
                k ? "train F1" : "train AUC");
    if (test) {
        if (p->regression)
            fprintf(f, " %10s", "test RMSE");
        else
            fprintf(f, " %9s %9s", "test acc", k ? "test F1" : "test AUC");
    }
    bool valid = p->hist[0].has_valid;
    if (valid) {
        if (p->regression)
            fprintf(f, " %10s", "valid RMSE");
        else
            fprintf(f, " %10s %9s", "valid loss", "valid acc");
    }
    /* the progressive figures, where the trainer scored its rows */
    bool prog = false;
    for (unsigned i = 0; i < p->hist_len; i++)
        prog |= isfinite(p->hist[i].progressive_loss);
    if (prog) {
        if (p->regression)
            fprintf(f, " %9s", "prog RMSE");
        else
            fprintf(f, " %9s %8s", "prog loss", "prog acc");
    }
    fprintf(f, " %10s %8s %9s\n", "nonzero w", "seconds", "rows/s");
    unsigned shown = 0;
    for (unsigned i = 0; i < p->hist_len; i++) {
        const hog_epoch_stats *s = &p->hist[i];
        char r[32];
        if (!row_shown(p, i))
            continue;
        shown++;
        fprintf(f, "%5u", s->epoch);
        cell_num(f, 12, 6, s->objective);
        if (p->regression) {
            cell_num(f, 10, 4, s->train_rmse);
        } else {
            cell_num(f, 10, 4, s->train_loss);
            cell_pct(f, 9, s->train_accuracy);
            cell_num(f, 9, 4, k ? s->train_macro_f1 : s->train_auc);
        }
        if (test) {
            if (p->regression) {
                cell_num(f, 10, 4, s->test_rmse);
            } else {
                cell_pct(f, 9, s->test_accuracy);
                cell_num(f, 9, 4, k ? s->test_macro_f1 : s->test_auc);
            }
        }
        if (valid && p->regression) {
            cell_num(f, 10, 4, s->valid_rmse);
        } else if (valid) {
            cell_num(f, 10, 4, s->valid_loss);
            cell_pct(f, 9, s->valid_accuracy);
        }
        if (prog && p->regression) {
            cell_num(f, 9, 4, sqrt(2.0 * s->progressive_loss));
        } else if (prog) {
            cell_num(f, 9, 4, s->progressive_loss);
            cell_pct(f, 8, s->progressive_accuracy);
        }
        fprintf(f, " %10llu", (unsigned long long)s->nonzero_weights);
        cell_num(f, 8, 3, s->seconds);
        fprintf(f, " %9s\n", hog_cli_si(r, sizeof r, s->rows_per_s));
    }
    if (shown < p->hist_len)
        fprintf(f, "(%u of %u epochs shown: 1 to 10, 20, 30, ..., 100, 200, "
                   "..., and the last; --json lists every one)\n",
                shown, p->hist_len);
}

void hog_progress_free(struct hog_progress *p)
{
    free(p->hist);
    p->hist = NULL;
    p->hist_len = p->hist_cap = 0;
}
