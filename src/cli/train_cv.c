/* hogtrain train's model selection: --cv K (the library's
 * hog_cross_validate), --search-C (hog_search_C: LIBLINEAR's -C), their
 * tables and summaries on standard error, --plot of the path of C, and
 * the report's parts for them and for the validation set (--holdout,
 * --validation, --early-stop). */
#include "cli/train.h"

#include "core/loss.h"

#include <math.h>
#include <string.h>

static bool regression(const struct train_args *a, const hog_data *d)
{
    return a->o.loss == HOG_LOSS_SQUARED && d->labels != HOG_LABELS_BINARY;
}

static bool classes(const struct train_args *a, const hog_data *d)
{
    return hog_loss_is_classification(a->o.loss) &&
           d->labels != HOG_LABELS_BINARY;
}

void hog_cli_c_strength(char *buf, size_t len, const hog_train_opts *o,
                        uint64_t rows, const hog_model *m)
{
    const char *which = o->C_l1 ? "l1" : "l2";
    if (!(o->C > 0)) {
        buf[0] = '\0';
    } else if (m || rows) {
        double l1, l2;
        hog_strengths_of_C(o->C, o->C_l1 != 0, rows, &l1, &l2);
        if (m) {
            l1 = m->l1;
            l2 = m->l2;
        }
        snprintf(buf, len, "%s = 1/(C n) = %.6g (n = %llu rows trained on)",
                 which, o->C_l1 ? l1 : l2, (unsigned long long)rows);
    } else {
        snprintf(buf, len, "%s = 1/(C n), n the rows each fold trains on",
                 which);
    }
}

/* "± 0.41" of a percentage, or "" when it is not a number. */
static const char *pm_pct(char *buf, size_t len, double sd)
{
    if (isfinite(sd))
        snprintf(buf, len, " (± %.2f", 100.0 * sd);
    else
        snprintf(buf, len, " (");
    return buf;
}

/* How the folds used the threads, for the line under the table. */
static const char *parallel_words(unsigned parallel)
{
    return parallel > 1 ? "at a time, each on one thread"
                        : "one after another on all threads";
}

/* ---- --cv K ------------------------------------------------------------------- */

static void print_folds(const struct train_args *a, const hog_data *d,
                        const hog_cv_result *r)
{
    bool reg = regression(a, d), k = classes(a, d);
    fprintf(stderr, "%4s %10s %10s", "fold", "train rows", "rows");
    if (reg)
        fprintf(stderr, " %10s", "RMSE");
    else
        fprintf(stderr, " %9s %9s", "accuracy", k ? "macro-F1" : "AUC");
    fprintf(stderr, " %9s %8s\n", "loss", "seconds");
    for (unsigned i = 0; i < r->folds; i++) {
        const hog_cv_fold *f = &r->fold[i];
        fprintf(stderr, "%4u %10llu %10llu", i + 1,
                (unsigned long long)f->train_rows,
                (unsigned long long)f->valid_rows);
        if (reg)
            fprintf(stderr, " %10.4f", f->rmse);
        else
            fprintf(stderr, " %8.2f%% %9.4f", 100.0 * f->accuracy,
                    k ? f->macro_f1 : f->auc);
        fprintf(stderr, " %9.4f %8.3f\n", f->loss, f->seconds);
    }
}

/* "cross-validation accuracy 84.76% (± 0.41 over 5 folds), AUC ..." */
static void print_cv_summary(const struct train_args *a, const hog_data *d,
                             const hog_cv_result *r)
{
    char pm[32];
    if (regression(a, d)) {
        fprintf(stderr, "cross-validation RMSE %.4f", r->rmse);
        if (isfinite(r->rmse_sd))
            fprintf(stderr, " (± %.4f", r->rmse_sd);
        else
            fputs(" (", stderr);
    } else {
        fprintf(stderr, "cross-validation accuracy %.2f%%%s",
                100.0 * r->accuracy, pm_pct(pm, sizeof pm, r->accuracy_sd));
    }
    fprintf(stderr, " over %u folds)", r->folds);
    if (classes(a, d) && isfinite(r->macro_f1))
        fprintf(stderr, ", macro-F1 %.4f (± %.4f)", r->macro_f1,
                r->macro_f1_sd);
    else if (!regression(a, d) && isfinite(r->auc))
        fprintf(stderr, ", AUC %.4f (± %.4f)", r->auc, r->auc_sd);
    fprintf(stderr, "; %u folds %s, %.2f s\n", r->parallel > 1 ? r->parallel
                                                               : r->folds,
            parallel_words(r->parallel), r->seconds);
}

/* ---- --search-C ----------------------------------------------------------------- */

struct step_print {
    const struct train_args *a;
    bool reg, header;
};

static void step_header(const struct step_print *p)
{
    fprintf(stderr, "%12s %7s %12s %10s %7s %8s %5s\n", "C", "log2 C",
            p->a->o.C_l1 ? "l1 (all n)" : "l2 (all n)",
            p->reg ? "CV RMSE" : "CV acc", "sd", "seconds", "warm");
}

static void step_row(const struct step_print *p, const hog_search_step *s)
{
    fprintf(stderr, "%12.6g %7.2f %12.4g", s->C, log2(s->C),
            p->a->o.C_l1 ? s->l1 : s->l2);
    if (p->reg)
        fprintf(stderr, " %10.4f %7s", s->rmse, "-");
    else
        fprintf(stderr, " %9.2f%% %7.2f", 100.0 * s->accuracy,
                100.0 * s->accuracy_sd);
    fprintf(stderr, " %8.3f %5s\n", s->seconds, s->warm ? "yes" : "no");
}

/* The search's callback: a row of the table as each C is done. */
static void on_step(void *ctx, const hog_search_step *s)
{
    struct step_print *p = ctx;
    if (!p->header) {
        step_header(p);
        p->header = true;
    }
    step_row(p, s);
}

struct plot_ctx {
    const struct train_args *a;
    const hog_search_result *r;
    bool reg;
};

/* CV accuracy (or RMSE) against log2 C, the folds' spread as error bars
 * and the best C marked. */
static void search_script(FILE *g, const char *term, void *ctx)
{
    const struct plot_ctx *p = ctx;
    const hog_search_result *r = p->r;
    fprintf(g, "set terminal %s size 800,480 background rgb 'white'\n", term);
    fprintf(g, "set datafile missing NaN\n$cv << EOD\n");
    for (unsigned i = 0; i < r->steps && i < r->step_cap; i++) {
        const hog_search_step *s = &r->step[i];
        double v = p->reg ? s->rmse : 100.0 * s->accuracy;
        double sd = p->reg ? 0.0 : 100.0 * s->accuracy_sd;
        fprintf(g, "%.17g %.17g %.17g\n", log2(s->C), v,
                isfinite(sd) ? sd : 0.0);
    }
    const hog_search_step *b = &r->best_step;
    fprintf(g, "EOD\n$best << EOD\n%.17g %.17g\nEOD\n", log2(b->C),
            p->reg ? b->rmse : 100.0 * b->accuracy);
    char title[512];
    snprintf(title, sizeof title, "%s: %u-fold cross-validation, %s loss, "
             "--algo %s", hog_cli_basename(p->a->train), p->a->cv,
             hog_cli_loss_name(p->a->o.loss), hog_cli_algo_name(p->a->o.algo));
    fputs("set title ", g);
    hog_cli_plot_quoted(g, title);
    fprintf(g, "\nset grid\nset key bottom right\nset xlabel 'log2 C'\n"
               "set ylabel '%s'\n",
            p->reg ? "cross-validation RMSE" : "cross-validation accuracy (%)");
    fprintf(g, "plot $cv using 1:2:3 with yerrorlines lw 2 pt 7 lc rgb "
               "'#0072B2' title '%s', $best using 1:2 with points pt 6 ps 3 "
               "lw 2 lc rgb '#D55E00' title 'best C = %g'\n",
            p->reg ? "CV RMSE" : "CV accuracy (± sd over the folds)", b->C);
}

static void print_search_summary(const struct train_args *a,
                                 const hog_search_result *r, bool reg,
                                 unsigned patience)
{
    const hog_search_step *b = &r->best_step;
    char pm[32];
    fprintf(stderr, "best C = %g (log2 C = %.2f): ", b->C, log2(b->C));
    if (reg)
        fprintf(stderr, "cross-validation RMSE %.4f", b->rmse);
    else
        fprintf(stderr, "cross-validation accuracy %.2f%%%s over %u folds)",
                100.0 * b->accuracy, pm_pct(pm, sizeof pm, b->accuracy_sd),
                a->cv);
    fprintf(stderr, "; %u values of C in %.2f s", r->steps, r->seconds);
    if (r->stopped_early)
        fprintf(stderr, " (stopped after %u without a gain)", patience);
    fputc('\n', stderr);
}

hog_status hog_cli_train_cv(struct train_args *a, const hog_data *train,
                            hog_cv_result *cv, hog_cv_fold *folds,
                            hog_search_result *search, hog_err *err)
{
    hog_status s;
    if (!a->search_c) {
        *cv = (hog_cv_result){ .size = sizeof *cv, .fold = folds };
        if ((s = hog_cross_validate(train, &a->o, &a->h, a->cv, cv,
                                    err)) != HOG_OK)
            return s;
        if (!a->quiet) {
            print_folds(a, train, cv);
            print_cv_summary(a, train, cv);
        }
        return HOG_OK;
    }
    struct step_print sp = { a, regression(a, train), false };
    hog_search_opts so;
    hog_search_opts_init(&so);
    if (a->o.C > 0) /* --C with --search-C: the first C, as LIBLINEAR's -c */
        so.C_min = a->o.C;
    if (!a->quiet) {
        so.step = on_step;
        so.step_ctx = &sp;
    }
    if ((s = hog_search_C(train, &a->o, &a->h, a->cv, &so, search,
                          err)) != HOG_OK)
        return s;
    if (!a->quiet)
        print_search_summary(a, search, sp.reg, so.patience);
    if (a->plot && !hog_cli_have_gnuplot()) {
        fprintf(stderr, "hogtrain train: gnuplot is not installed; no plot "
                        "(--plot %s)\n", a->plot);
    } else if (a->plot) {
        struct plot_ctx pc = { a, search, sp.reg };
        if ((s = hog_cli_plot(a->plot, search_script, &pc, err)) != HOG_OK)
            return s;
    }
    a->o.C = search->best_C; /* the refit's, with -o or -t */
    return HOG_OK;
}

/* ---- the report --------------------------------------------------------------- */

static void json_fold_figures(struct hog_json *j, const hog_cv_fold *f)
{
    hog_json_u64(j, "train_rows", f->train_rows);
    hog_json_u64(j, "rows", f->valid_rows);
    hog_json_num(j, "accuracy", f->accuracy);
    hog_json_num(j, "auc", f->auc);
    hog_json_num(j, "rmse", f->rmse);
    hog_json_num(j, "macro_f1", f->macro_f1);
    hog_json_num(j, "loss", f->loss);
    hog_json_num(j, "seconds", f->seconds);
}

void hog_cli_json_cv(struct hog_json *j, const struct train_report *r)
{
    const struct train_args *a = r->a;
    if (r->cv) {
        const hog_cv_result *c = r->cv;
        hog_json_obj(j, "cross_validation");
        hog_json_u64(j, "folds", c->folds);
        hog_json_u64(j, "seed", a->o.seed);
        hog_json_str(j, "stratified", classes(a, r->train) ||
                                              r->train->labels ==
                                                  HOG_LABELS_BINARY
                                          ? "classes"
                                          : "none (regression)");
        hog_json_u64(j, "parallel_folds", c->parallel);
        hog_json_num(j, "accuracy", c->accuracy);
        hog_json_num(j, "accuracy_sd", c->accuracy_sd);
        hog_json_num(j, "auc", c->auc);
        hog_json_num(j, "auc_sd", c->auc_sd);
        hog_json_num(j, "rmse", c->rmse);
        hog_json_num(j, "rmse_sd", c->rmse_sd);
        hog_json_num(j, "macro_f1", c->macro_f1);
        hog_json_num(j, "macro_f1_sd", c->macro_f1_sd);
        hog_json_num(j, "loss", c->loss);
        hog_json_num(j, "seconds", c->seconds);
        hog_json_arr(j, "per_fold");
        for (unsigned i = 0; c->fold && i < c->folds; i++) {
            hog_json_obj(j, NULL);
            hog_json_u64(j, "fold", i + 1);
            json_fold_figures(j, &c->fold[i]);
            hog_json_close_obj(j);
        }
        hog_json_close_arr(j);
        hog_json_close_obj(j);
    }
    if (r->search) {
        const hog_search_result *s = r->search;
        const hog_search_step *b = &s->best_step;
        hog_json_obj(j, "search_C");
        hog_json_u64(j, "folds", a->cv);
        hog_json_u64(j, "seed", a->o.seed);
        hog_json_str(j, "regularization", a->o.C_l1 ? "l1" : "l2");
        hog_json_num(j, "best_C", s->best_C);
        hog_json_num(j, "best_log2_C", log2(s->best_C));
        hog_json_num(j, "best_accuracy", b->accuracy);
        hog_json_num(j, "best_accuracy_sd", b->accuracy_sd);
        hog_json_num(j, "best_rmse", b->rmse);
        hog_json_str(j, "stopped", s->stopped_early ? "patience" : "C_max");
        hog_json_num(j, "seconds", s->seconds);
        hog_json_str(j, "plot", a->plot);
        hog_json_arr(j, "steps");
        for (unsigned i = 0; i < s->steps && i < s->step_cap; i++) {
            const hog_search_step *t = &s->step[i];
            hog_json_obj(j, NULL);
            hog_json_num(j, "C", t->C);
            hog_json_num(j, "log2_C", log2(t->C));
            hog_json_num(j, "l1", t->l1);
            hog_json_num(j, "l2", t->l2);
            hog_json_num(j, "accuracy", t->accuracy);
            hog_json_num(j, "accuracy_sd", t->accuracy_sd);
            hog_json_num(j, "auc", t->auc);
            hog_json_num(j, "rmse", t->rmse);
            hog_json_num(j, "macro_f1", t->macro_f1);
            hog_json_num(j, "seconds", t->seconds);
            hog_json_bool(j, "warm_start", t->warm != 0);
            hog_json_close_obj(j);
        }
        hog_json_close_arr(j);
        hog_json_close_obj(j);
    }
}

void hog_cli_json_validation(struct hog_json *j, const struct train_report *r)
{
    const struct train_args *a = r->a;
    const hog_valid_stats *v = r->vs;
    if (!v || !v->rows) {
        hog_json_null(j, "validation");
        return;
    }
    hog_json_obj(j, "validation");
    hog_json_str(j, "source", a->validation ? "file" : "holdout");
    if (a->validation)
        hog_json_str(j, "path", a->validation);
    else
        hog_json_num(j, "holdout", a->o.holdout);
    hog_json_u64(j, "rows", v->rows);
    hog_json_u64(j, "train_rows", v->train_rows);
    if (a->o.early_stop)
        hog_json_u64(j, "early_stop", a->o.early_stop);
    else
        hog_json_null(j, "early_stop");
    hog_json_u64(j, "epochs_run", v->epochs_run);
    hog_json_u64(j, "best_epoch", v->best_epoch);
    hog_json_num(j, "best_loss", v->best_loss);
    /* the model handed out: the best epoch's with --early-stop, else the
     * last one's */
    hog_json_u64(j, "kept_epoch", a->o.early_stop ? v->best_epoch
                                                   : v->epochs_run);
    hog_json_str(j, "stopped", v->early_stopped ? "early_stop" : "epochs");
    if (r->m && r->m->n_classes && r->m->multiclass == HOG_MULTICLASS_OVR &&
        a->o.early_stop)
        hog_json_u64(j, "classes_stopped", v->classes_stopped);
    hog_json_close_obj(j);
}
