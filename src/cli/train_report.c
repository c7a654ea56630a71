/* hogtrain train's report: the --json file and the lines on standard
 * error after training (the epochs' table, Cyclades' batches, the
 * summary). */
#include "cli/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static void json_data(struct hog_json *j, const char *key, const char *path,
                      const hog_data *d, double secs, const hog_model *m)
{
    hog_json_obj(j, key);
    hog_json_str(j, "path", path);
    hog_json_u64(j, "rows", hog_data_rows(d));
    hog_json_u64(j, "features", hog_data_features(d));
    hog_json_u64(j, "nonzeros", hog_data_nnz(d));
    if (d->cross.n) {
        char spec[HOG_INTERACTIONS_SPEC_LEN];
        hog_interactions_format(&d->cross, spec, sizeof spec);
        hog_json_str(j, "interactions", spec);
        hog_json_u64(j, "nonzeros_crossed", d->cross_nnz);
    } else {
        hog_json_null(j, "interactions");
    }
    bool bin = d->labels == HOG_LABELS_BINARY;
    hog_json_str(j, "labels", bin                    ? "binary"
                              : m && m->n_classes ? "classes"
                                                  : "real");
    if (bin) {
        hog_json_num(j, "label_positive", d->label_pos);
        hog_json_num(j, "label_negative", d->label_neg);
        hog_json_u64(j, "rows_positive", d->n_pos);
        hog_json_u64(j, "rows_negative", hog_data_rows(d) - d->n_pos);
    }
    hog_json_str(j, "format", d->format == HOG_FORMAT_AUTO
                                  ? "hgb"
                                  : d->format == HOG_FORMAT_VW ? "vw"
                                                               : "libsvm");
    if (d->importance)
        hog_json_u64(j, "rows_with_importance", hog_cli_importance_rows(d));
    hog_json_num(j, "load_seconds", secs);
    hog_json_close_obj(j);
}

/* The weights' source (options.weights: the file, or null) and the class
 * weights: as typed (options.class_weight) and as resolved against the
 * training labels (options.class_weights: balanced computed, unlisted
 * labels 1), from the library's own resolution (src/train/weights.c). */
static void json_weights(struct hog_json *j, const struct train_report *r)
{
    const struct train_args *a = r->a;
    hog_json_str(j, "weights", a->weights);
    hog_json_str(j, "class_weight", a->class_weight);
    double *lab, *w;
    uint32_t k = 0;
    hog_err e;
    if (!a->class_weight || !r->train ||
        hog_train_class_weights(&a->o, r->train, &lab, &w, &k, &e) != HOG_OK)
        return;
    hog_json_arr(j, "class_weights");
    for (uint32_t c = 0; c < k; c++) {
        hog_json_obj(j, NULL);
        hog_json_num(j, "label", lab[c]);
        hog_json_num(j, "weight", w[c]);
        hog_json_close_obj(j);
    }
    hog_json_close_arr(j);
    free(lab);
    free(w);
}

/* "hashing": how the training set's features were hashed (null: not). */
static void json_hashing(struct hog_json *j, const hog_data *d)
{
    hog_hashing h = { .size = sizeof h };
    hog_data_hashing(d, &h);
    if (!h.bits) {
        hog_json_null(j, "hashing");
        return;
    }
    hog_json_obj(j, "hashing");
    hog_json_u64(j, "bits", h.bits);
    hog_json_u64(j, "seed", h.seed);
    hog_json_u64(j, "weights", UINT64_C(1) << h.bits);
    hog_json_u64(j, "collisions", h.collisions);
    hog_json_u64(j, "merged", h.merged);
    hog_json_close_obj(j);
}

/* Why training stopped: "tol" when scd or dcd met --tol, "epochs" when the
 * run went through --epochs (every other algorithm always does). */
static const char *stop_reason(const struct train_report *r)
{
    const struct hog_progress *p = r->p;
    if (r->vs && r->vs->early_stopped)
        return "early_stop";
    return p->hist_len && p->hist[p->hist_len - 1].converged ? "tol"
                                                             : "epochs";
}

/* The epoch whose model was handed out: with --early-stop the best one's
 * (one-vs-rest: its one report), else the last; NULL without any. */
static const hog_epoch_stats *kept_stats(const struct train_report *r)
{
    const struct hog_progress *p = r->p;
    if (!p->hist_len)
        return NULL;
    const hog_epoch_stats *last = &p->hist[p->hist_len - 1];
    if (!r->a->o.early_stop || !r->vs || last->classes)
        return last;
    for (unsigned i = 0; i < p->hist_len; i++)
        if (p->hist[i].epoch == r->vs->best_epoch)
            return &p->hist[i];
    return last;
}

/* The algorithms that stop on --tol, --epochs being a cap: scd, dcd,
 * newton and lbfgs. */
static bool stops_on_tol(const hog_train_opts *o)
{
    return o->algo == HOG_ALGO_SCD || o->algo == HOG_ALGO_DCD ||
           o->algo == HOG_ALGO_NEWTON || o->algo == HOG_ALGO_LBFGS;
}

/* True when the cap came first (LIBLINEAR's "reaching max number of
 * iterations"). --tol 0 asks for every epoch. */
static bool epoch_cap_first(const struct train_report *r)
{
    const hog_train_opts *o = &r->a->o;
    return stops_on_tol(o) && o->tol > 0 &&
           strcmp(stop_reason(r), "epochs") == 0;
}

/* The n of C's 1/(C n): the rows trained on, or with exact solving across
 * processes (newton, lbfgs: a group without averaging) every rank's,
 * which only the strength the model records knows. */
static uint64_t c_rows(const struct train_report *r)
{
    const hog_train_opts *o = &r->a->o;
    if (r->net && !r->avg && r->m) {
        double s = o->C_l1 ? r->m->l1 : r->m->l2;
        return (uint64_t)llround(1.0 / (o->C * s));
    }
    return r->vs ? r->vs->train_rows : hog_data_rows(r->train);
}

static void write_json(FILE *f, const struct train_report *r)
{
    const hog_train_opts *o = &r->a->o;
    struct hog_json j;
    hog_json_begin(&j, f);
    hog_json_str(&j, "hogtrain", hog_version());
    hog_json_str(&j, "command", "train");
    hog_json_obj(&j, "options");
    hog_json_str(&j, "loss", hog_cli_loss_name(o->loss));
    /* --C: the strengths the model was trained with (or, for a
     * cross-validation alone, each fold's) */
    hog_json_num(&j, "l1", r->m ? r->m->l1 : o->C > 0 ? NAN : o->l1);
    hog_json_num(&j, "l2", r->m ? r->m->l2 : o->C > 0 ? NAN : o->l2);
    if (o->C > 0) {
        char reg[160];
        hog_cli_c_strength(reg, sizeof reg, o, r->m ? c_rows(r) : 0, r->m);
        hog_json_num(&j, "C", o->C);
        hog_json_str(&j, "regularization", reg);
    } else {
        hog_json_null(&j, "C");
    }
    hog_json_num(&j, "eta", o->eta);
    hog_json_str(&j, "schedule", hog_cli_schedule_name(o->schedule));
    hog_json_num(&j, "power", o->power);
    hog_json_num(&j, "bias", o->bias);
    hog_json_u64(&j, "epochs", o->epochs);
    hog_json_u64(&j, "seed", o->seed);
    hog_json_u64(&j, "threads", o->threads);
    hog_json_u64(&j, "cpus_online", hog_online_cpus());
    hog_json_str(&j, "algo", hog_cli_algo_name(o->algo));
    /* --algo auto (the default): what it chose and the rule that did */
    if (r->autos) {
        hog_json_obj(&j, "auto");
        hog_json_str(&j, "algo", hog_cli_algo_name(r->autos->algo));
        hog_json_str(&j, "replicas",
                     hog_cli_replicas_name(r->autos->replicas));
        hog_json_u64(&j, "threads", r->autos->threads);
        hog_json_str(&j, "why", r->autos->why);
        hog_json_close_obj(&j);
    } else {
        hog_json_null(&j, "auto");
    }
    hog_json_str(&j, "update", hog_cli_update_name(o->update));
    if (o->algo == HOG_ALGO_HOGWILD) {
        hog_json_str(&j, "bind", o->bind ? o->bind : "compact");
        hog_json_bool(&j, "no_smt", o->no_smt != 0);
        hog_json_bool(&j, "oversubscribe", o->oversubscribe != 0);
        hog_json_str(&j, "replicas", hog_cli_replicas_name(o->replicas));
        hog_json_u64(&j, "sync_every", o->sync_every);
    }
    hog_json_num(&j, "tol", o->tol);
    hog_json_u64(&j, "metrics_every", o->metrics_every);
    hog_json_str(&j, "multiclass", o->multiclass == HOG_MULTICLASS_SOFTMAX
                                       ? "softmax"
                                       : "ovr");
    hog_json_bool(&j, "normalize", o->normalize != 0);
    hog_json_str(&j, "init", r->a->init);
    hog_json_bool(&j, "zero_based", r->a->lo.zero_based != 0);
    if (hog_gpu_requested(o)) {
        hog_json_str(&j, "gpus", o->gpus);
        hog_json_str(&j, "gpu_step", o->gpu_step == HOG_GPU_STEP_HOGWILD
                                         ? "hogwild"
                                         : "minibatch");
        hog_json_u64(&j, "gpu_batch",
                     o->gpu_batch ? o->gpu_batch : HOG_GPU_DEFAULT_BATCH);
        hog_json_u64(&j, "sync_every", o->sync_every);
    } else {
        hog_json_null(&j, "gpus");
    }
    hog_json_str(&j, "model", r->a->model);
    hog_json_str(&j, "model_format",
                 r->a->fmt == HOG_MODEL_LIBLINEAR ? "liblinear" : "hgm");
    json_weights(&j, r);
    hog_json_close_obj(&j);

    if (r->net) {
        const struct net_args *na = &r->a->net;
        hog_json_obj(&j, "scale_out");
        hog_json_str(&j, "backend", hog_net_backend(r->net));
        hog_json_u64(&j, "world", hog_net_world(r->net));
        hog_json_u64(&j, "rank", hog_net_rank(r->net));
        /* exact solving (newton, lbfgs) averages nothing */
        hog_json_str(&j, "sync", !r->avg ? "exact"
                     : na->ao.mode == HOG_AVG_BMUF ? "bmuf" : "ma");
        if (r->avg) {
            hog_json_u64(&j, "sync_every", na->sync_every);
            hog_json_u64(&j, "averagings_per_epoch", o->average_blocks);
            hog_json_u64(&j, "averagings", hog_avg_count(r->avg));
        }
        if (r->avg && na->ao.mode == HOG_AVG_BMUF) {
            hog_json_num(&j, "bmuf_momentum",
                         na->ao.momentum < 0
                             ? 1.0 - 1.0 / hog_net_world(r->net)
                             : na->ao.momentum);
            hog_json_num(&j, "bmuf_lr", na->ao.block_lr);
            hog_json_bool(&j, "bmuf_nesterov", na->ao.nesterov != 0);
        }
        hog_json_str(&j, "shard", !na->shard ? NULL
                     : na->shard_mode == HOG_SHARD_RANGE ? "range" : "stride");
        hog_json_close_obj(&j);
    }

    hog_json_obj(&j, "data");
    json_data(&j, "train", r->a->train, r->train, r->load_train_s, r->m);
    if (r->test)
        json_data(&j, "test", r->a->test, r->test, r->load_test_s, r->m);
    else
        hog_json_null(&j, "test");
    if (r->valid)
        json_data(&j, "validation", r->a->validation, r->valid,
                  r->load_valid_s, r->m);
    hog_json_close_obj(&j);
    hog_cli_json_cv(&j, r);
    if (!r->m) { /* --cv alone: no model trained on every row */
        hog_json_null(&j, "epochs");
        hog_json_null(&j, "model");
        goto tail;
    }
    hog_cli_json_validation(&j, r);
    json_hashing(&j, r->train);

    hog_json_arr(&j, "epochs");
    for (unsigned i = 0; i < r->p->hist_len; i++) {
        const hog_epoch_stats *s = &r->p->hist[i];
        hog_json_obj(&j, NULL);
        hog_json_u64(&j, "epoch", s->epoch);
        hog_json_num(&j, "objective", s->objective);
        hog_json_num(&j, "train_loss", s->train_loss);
        hog_json_num(&j, "train_accuracy", s->train_accuracy);
        hog_json_num(&j, "train_auc", s->train_auc);
        hog_json_num(&j, "train_rmse", s->train_rmse);
        if (s->classes)
            hog_json_num(&j, "train_macro_f1", s->train_macro_f1);
        hog_json_num(&j, "progressive_loss", s->progressive_loss);
        hog_json_num(&j, "progressive_accuracy", s->progressive_accuracy);
        if (s->has_test) {
            hog_json_num(&j, "test_loss", s->test_loss);
            hog_json_num(&j, "test_accuracy", s->test_accuracy);
            hog_json_num(&j, "test_auc", s->test_auc);
            hog_json_num(&j, "test_rmse", s->test_rmse);
            if (s->classes)
                hog_json_num(&j, "test_macro_f1", s->test_macro_f1);
        }
        if (s->has_valid) {
            hog_json_num(&j, "valid_loss", s->valid_loss);
            hog_json_num(&j, "valid_accuracy", s->valid_accuracy);
            hog_json_num(&j, "valid_auc", s->valid_auc);
            hog_json_num(&j, "valid_rmse", s->valid_rmse);
            if (s->classes)
                hog_json_num(&j, "valid_macro_f1", s->valid_macro_f1);
        }
        hog_json_u64(&j, "nonzero_weights", s->nonzero_weights);
        hog_json_num(&j, "gap", s->gap);
        hog_json_u64(&j, "aux_bytes", s->aux_bytes);
        hog_json_num(&j, "seconds", s->seconds);
        hog_json_num(&j, "total_seconds", s->total_seconds);
        hog_json_num(&j, "rows_per_s", s->rows_per_s);
        hog_json_num(&j, "nnz_per_s", s->nnz_per_s);
        if (o->algo == HOG_ALGO_HOGWILD && o->replicas != HOG_REPLICAS_SHARED)
            hog_json_u64(&j, "replica_syncs", s->replica_syncs);
        hog_json_close_obj(&j);
    }
    hog_json_close_arr(&j);
    hog_json_str(&j, "stopped", stop_reason(r));

    if (r->hot) {
        hog_json_obj(&j, "hot_replicas");
        hog_json_u64(&j, "hot_features", r->hot->hot_features);
        hog_json_bool(&j, "bias_hot", r->hot->bias_hot != 0);
        hog_json_num(&j, "hot_nnz_share", r->hot->hot_nnz_share);
        hog_json_u64(&j, "folds", r->hot->folds);
        hog_json_u64(&j, "sync_every", o->sync_every);
        hog_json_num(&j, "setup_seconds", r->hot->setup_seconds);
        hog_json_close_obj(&j);
    }

    if (r->cyc) {
        const hog_cyclades_stats *c = r->cyc;
        hog_json_obj(&j, "cyclades");
        hog_json_u64(&j, "threads", c->threads);
        hog_json_u64(&j, "batch_size", c->batch_size);
        hog_json_u64(&j, "batches_per_epoch", c->batches);
        hog_json_bool(&j, "repartition", o->repartition != 0);
        hog_json_bool(&j, "hot", o->cyclades_hot_degree != 0);
        hog_json_u64(&j, "hot_degree", c->hot_degree);
        hog_json_u64(&j, "hot_features", c->hot_features);
        hog_json_bool(&j, "bias_hot", c->bias_hot != 0);
        hog_json_num(&j, "hot_nnz_share", c->hot_nnz_share);
        hog_json_u64(&j, "partitions", c->partitions);
        hog_json_num(&j, "setup_seconds", c->setup_seconds);
        hog_json_num(&j, "partition_seconds", c->partition_seconds);
        hog_json_num(&j, "train_seconds", c->train_seconds);
        hog_json_obj(&j, "components");
        hog_json_num(&j, "per_batch", c->components);
        hog_json_u64(&j, "largest_rows", c->largest_rows);
        hog_json_num(&j, "largest_share", c->largest_share);
        hog_json_num(&j, "thread_imbalance", c->imbalance);
        hog_json_close_obj(&j);
        hog_json_obj(&j, "components_every_feature");
        hog_json_num(&j, "per_batch", c->all_components);
        hog_json_u64(&j, "largest_rows", c->all_largest_rows);
        hog_json_num(&j, "largest_share", c->all_largest_share);
        hog_json_close_obj(&j);
        hog_json_close_obj(&j);
    }

    hog_json_obj(&j, "model");
    hog_json_u64(&j, "features", hog_model_features(r->m));
    if (r->m->n_classes)
        hog_json_null(&j, "bias_weight"); /* one per class: multiclass */
    else
        hog_json_num(&j, "bias_weight", hog_model_bias(r->m));
    hog_json_close_obj(&j);
    if (r->m->n_classes)
        hog_cli_json_classes(&j, r);

    if (r->stream) {
        const hog_stream_stats *ss = r->stream;
        hog_json_obj(&j, "stream");
        hog_json_str(&j, "backend", ss->backend);
        if (ss->fallback[0])
            hog_json_str(&j, "fallback_reason", ss->fallback);
        else
            hog_json_null(&j, "fallback_reason");
        hog_json_bool(&j, "direct", ss->direct != 0);
        hog_json_u64(&j, "mem_budget", o->mem_budget ? o->mem_budget
                                                     : HOG_STREAM_DEFAULT_BUDGET);
        hog_json_u64(&j, "slots", ss->slots);
        hog_json_u64(&j, "window_chunks", ss->window);
        hog_json_u64(&j, "ring_bytes", ss->ring_bytes);
        hog_json_u64(&j, "bytes_read", ss->bytes_read);
        hog_json_num(&j, "read_wait_seconds", ss->read_wait_s);
        hog_json_close_obj(&j);
    } else {
        hog_json_null(&j, "stream");
    }
tail:;
    struct rusage ru;
    hog_json_obj(&j, "memory");
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        hog_json_u64(&j, "peak_rss_bytes", (uint64_t)ru.ru_maxrss * 1024);
    else
        hog_json_null(&j, "peak_rss_bytes");
    hog_json_close_obj(&j);

    hog_json_obj(&j, "timings");
    hog_json_num(&j, "load_train_seconds", r->load_train_s);
    hog_json_num(&j, "load_test_seconds", r->test ? r->load_test_s : NAN);
    if (r->valid)
        hog_json_num(&j, "load_validation_seconds", r->load_valid_s);
    hog_json_num(&j, "train_seconds", r->train_s);
    hog_json_num(&j, "save_seconds", r->a->model ? r->save_s : NAN);
    hog_json_num(&j, "total_seconds", r->total_s);
    hog_json_close_obj(&j);
    hog_json_end(&j);
}

hog_status hog_cli_train_save_json(const struct train_report *r, hog_err *err)
{
    hog_outfile o;
    hog_status s = hog_outfile_open(&o, r->a->json, err);
    if (s != HOG_OK)
        return s;
    write_json(o.f, r);
    return hog_outfile_commit(&o, err);
}

/* Two lines on how Cyclades cut the batches. */
static void print_cyclades(const hog_cyclades_stats *c)
{
    fprintf(stderr,
            "cyclades: %u threads, %llu batches of %llu rows, %llu hot "
            "features%s (degree > %llu, %.1f%% of nonzeros); partition "
            "%.3f s (%u times), setup %.3f s\n",
            c->threads, (unsigned long long)c->batches,
            (unsigned long long)c->batch_size,
            (unsigned long long)c->hot_features,
            c->bias_hot ? " and the bias" : "",
            (unsigned long long)c->hot_degree, 100.0 * c->hot_nnz_share,
            c->partition_seconds, c->partitions, c->setup_seconds);
    fprintf(stderr,
            "cyclades: components per batch %.1f, largest %llu rows (mean "
            "share %.1f%%), thread imbalance %.2f; with every feature: %.1f "
            "per batch, largest %llu rows (%.1f%%)\n",
            c->components, (unsigned long long)c->largest_rows,
            100.0 * c->largest_share, c->imbalance, c->all_components,
            (unsigned long long)c->all_largest_rows,
            100.0 * c->all_largest_share);
}

/* What the validation set and early stopping did. */
static void print_validation(const struct train_report *r)
{
    const hog_train_opts *o = &r->a->o;
    const hog_valid_stats *v = r->vs;
    bool ovr = r->m && r->m->n_classes &&
               r->m->multiclass == HOG_MULTICLASS_OVR;
    fprintf(stderr, "validation: %llu rows (%s), trained on %llu",
            (unsigned long long)v->rows,
            r->a->validation ? hog_cli_basename(r->a->validation)
                             : "held out of TRAIN",
            (unsigned long long)v->train_rows);
    if (!o->early_stop) {
        if (v->best_epoch)
            fprintf(stderr, "; lowest validation loss after epoch %u "
                            "(%.4f)", v->best_epoch, v->best_loss);
    } else if (ovr) {
        fprintf(stderr, "; early stopping per class: %u of %u classes "
                        "stopped early, each keeping its best epoch",
                v->classes_stopped, r->m->n_classes);
    } else {
        fprintf(stderr, "; %s after epoch %u, kept epoch %u (validation "
                        "loss %.4f)",
                v->early_stopped ? "stopped early" : "ran every epoch",
                v->epochs_run, v->best_epoch, v->best_loss);
    }
    fputc('\n', stderr);
}

void hog_cli_train_print_tables(const struct train_report *r)
{
    const hog_train_opts *o = &r->a->o;
    fputc('\n', stderr);
    hog_progress_table(r->p, stderr);
    if (r->cyc)
        print_cyclades(r->cyc);
    if (epoch_cap_first(r))
        fprintf(stderr, "%s: reached the epoch cap (--epochs %u) before "
                        "--tol %g; the model may be less accurate: raise "
                        "--epochs\n",
                hog_cli_algo_name(o->algo), o->epochs, o->tol);
    if (o->C > 0) {
        char reg[160];
        hog_cli_c_strength(reg, sizeof reg, o, c_rows(r), r->m);
        fprintf(stderr, "C = %g: %s\n", o->C, reg);
    }
    if (r->vs && r->vs->rows)
        print_validation(r);
    if (r->hot)
        fprintf(stderr, "hot replicas: %llu features%s per thread "
                        "(%.1f%% of the nonzeros), folded %llu times\n",
                (unsigned long long)r->hot->hot_features,
                r->hot->bias_hot ? " and the bias" : "",
                100.0 * r->hot->hot_nnz_share,
                (unsigned long long)r->hot->folds);
}

void hog_cli_train_print_stream(const hog_stream_stats *ss)
{
    char per[32], read[32];
    fprintf(stderr, "streamed with %s%s: %u buffers of %s, %s read, "
                    "%.2f s waiting for reads\n",
            ss->backend, ss->direct ? " (O_DIRECT)" : "", ss->slots,
            hog_cli_bytes(per, sizeof per,
                          ss->slots ? (double)ss->ring_bytes / ss->slots : 0),
            hog_cli_bytes(read, sizeof read, (double)ss->bytes_read),
            ss->read_wait_s);
}

/* What ended scd, dcd, newton or lbfgs, as LIBLINEAR says it after its iterations. One
 * report stands for every class of one-vs-rest, each of which stops on
 * its own: nothing is said there. */
static void print_stop(const struct train_report *r)
{
    const hog_train_opts *o = &r->a->o;
    const char *why = stop_reason(r);
    if (!stops_on_tol(o) ||
        (r->m && r->m->n_classes && r->m->multiclass == HOG_MULTICLASS_OVR))
        return;
    if (strcmp(why, "tol") == 0)
        fprintf(stderr, ", tolerance met (--tol %g)", o->tol);
    else if (strcmp(why, "epochs") == 0)
        fprintf(stderr, ", epoch limit reached (--epochs %u)", o->epochs);
}

void hog_cli_train_print_summary(const struct train_report *r)
{
    const struct hog_progress *p = r->p;
    const hog_epoch_stats *last = p->hist_len ? &p->hist[p->hist_len - 1]
                                              : NULL;
    const hog_epoch_stats *kept = kept_stats(r);
    if (last && last->test_unknown_labels)
        fprintf(stderr, "warning: %llu rows of %s have a label the training "
                        "set has not (no class of the model): counted as "
                        "errors in the test accuracy\n",
                (unsigned long long)last->test_unknown_labels,
                hog_cli_basename(r->a->test));
    unsigned epochs = p->hist_len ? p->hist[p->hist_len - 1].epoch : 0;
    fprintf(stderr, "done: %u epoch%s", epochs, epochs == 1 ? "" : "s");
    if (r->m && r->m->n_classes)
        fprintf(stderr, " of %u classes (%s)", r->m->n_classes,
                r->m->multiclass == HOG_MULTICLASS_SOFTMAX ? "softmax"
                                                           : "one-vs-rest");
    fprintf(stderr, " in %.2f s", r->train_s);
    print_stop(r);
    if (kept && kept != last)
        fprintf(stderr, ", kept epoch %u", kept->epoch);
    if (kept) {
        const hog_epoch_stats *s = kept;
        const char *set = s->has_test ? "test" : "train";
        double acc = s->has_test ? s->test_accuracy : s->train_accuracy;
        double rmse = s->has_test ? s->test_rmse : s->train_rmse;
        if (p->regression && isfinite(rmse))
            fprintf(stderr, ", %s RMSE %.4f", set, rmse);
        else if (!p->regression && isfinite(acc))
            fprintf(stderr, ", %s accuracy %.2f%%", set, 100.0 * acc);
        else if (!p->regression && isfinite(s->progressive_accuracy))
            /* a kept epoch before the last: no exact training pass */
            fprintf(stderr, ", progressive accuracy %.2f%%",
                    100.0 * s->progressive_accuracy);
        double f1 = s->has_test ? s->test_macro_f1 : s->train_macro_f1;
        if (s->classes && isfinite(f1))
            fprintf(stderr, ", macro-F1 %.4f", f1);
    }
    if (p->hist_len && p->hist[p->hist_len - 1].aux_bytes) {
        char b[32];
        fprintf(stderr, ", %s held beside the data",
                hog_cli_bytes(b, sizeof b,
                              (double)p->hist[p->hist_len - 1].aux_bytes));
    }
    if (r->a->model)
        fprintf(stderr, ", model written to %s", r->a->model);
    fputc('\n', stderr);
}
