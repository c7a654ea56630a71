/* hogtrain train, across processes (docs/SCALEOUT.md): the scale-out
 * options once getopt is done, and joining the group before training.
 * The SGD trainers average their models; newton and lbfgs, whose steps
 * are made of products with the data, solve the one problem of every
 * rank's rows exactly (hog_train_hooks.reduce: one all-reduce per product
 * through hog_net_reduce). */
#include "cli/train.h"

#include <stdlib.h>
#include <string.h>

static const struct hog_cli_cmd *const cmd = &hog_cli_train_cmd;

/* Whether a's algorithm solves exactly across processes (newton, lbfgs)
 * rather than averaging models. */
static bool exact(const struct train_args *a)
{
    const struct hog_algo_row *row = hog_algo_row(a->o.algo);
    return row && (row->caps & HOG_CAP_REDUCE);
}

int hog_cli_train_parse_net(struct train_args *a, const unsigned char *seen)
{
    struct net_args *na = &a->net;
    uint64_t u;
    const char *env;
    if (!seen[OPT_WORLD] && (env = getenv("HOGTRAIN_WORLD")) && *env) {
        if (!hog_parse_u64(env, 1, HOG_NET_MAX_WORLD, &u))
            return hog_cli_usage_error(cmd, "HOGTRAIN_WORLD='%s' is not a "
                                       "number of processes", env);
        na->no.world = (unsigned)u;
    }
    if (!seen[OPT_RANK] && (env = getenv("HOGTRAIN_RANK")) && *env) {
        if (!hog_parse_u64(env, 0, HOG_NET_MAX_WORLD - 1, &u))
            return hog_cli_usage_error(cmd, "HOGTRAIN_RANK='%s' is not a "
                                       "rank", env);
        na->no.rank = (unsigned)u;
    }
    if (!seen[OPT_COORDINATOR] && (env = getenv("HOGTRAIN_COORDINATOR")) &&
        *env)
        na->no.coordinator = env;
    bool want_mpi = na->backend >= 0 ? na->backend == NET_BACKEND_MPI
                            : na->no.world <= 1 && hog_net_under_mpirun() &&
                                  hog_net_have_mpi();
    na->mpi = want_mpi;
    na->on = want_mpi || na->no.world > 1;
    static const int net_only[] = {
        OPT_RANK, OPT_COORDINATOR, OPT_SECRET_FILE, OPT_INSECURE, OPT_JOB,
        OPT_CONNECT_TIMEOUT, OPT_NET_TIMEOUT, OPT_SYNC,
        OPT_BMUF_MOMENTUM, OPT_BMUF_LR, OPT_BMUF_NESTEROV, OPT_SHARD,
    };
    if (!na->on) {
        for (size_t i = 0; i < sizeof net_only / sizeof net_only[0]; i++)
            if (seen[net_only[i]])
                return hog_cli_usage_error(
                    cmd, "--%s needs several processes: --world N (or "
                    "HOGTRAIN_WORLD), or mpirun with an MPI build",
                    hog_cli_opt_name(hog_cli_train_longopts,
                                     net_only[i]));
        return -1;
    }
    if (!want_mpi) {
        if (na->no.rank >= na->no.world)
            return hog_cli_usage_error(cmd, "rank %u is not below the world "
                                       "size %u", na->no.rank, na->no.world);
        if (!na->no.coordinator)
            return hog_cli_usage_error(cmd, "--world %u needs --coordinator "
                                       "HOST:PORT (or HOGTRAIN_COORDINATOR)",
                                       na->no.world);
    }
    static const int averaging[] = {
        OPT_SYNC, OPT_SYNC_EVERY, OPT_BMUF_MOMENTUM, OPT_BMUF_LR,
        OPT_BMUF_NESTEROV, OPT_CHECKPOINT,
    };
    for (size_t i = 0; exact(a) && i < sizeof averaging / sizeof *averaging;
         i++)
        if (seen[averaging[i]])
            return hog_cli_usage_error(
                cmd, "--%s belongs to model averaging; --algo %s across "
                "processes adds its products over the ranks at every step "
                "and averages nothing", hog_cli_opt_name(
                    hog_cli_train_longopts, averaging[i]),
                hog_algo_cli_name(a->o.algo));
    bool bmuf = na->ao.mode == HOG_AVG_BMUF;
    if (!bmuf && (seen[OPT_BMUF_MOMENTUM] || seen[OPT_BMUF_LR] ||
                  seen[OPT_BMUF_NESTEROV]))
        return hog_cli_usage_error(cmd, "the --bmuf-* options apply to "
                                   "--sync bmuf only");
    /* --gpus: the conflicts' table (gpus, average) */
    return -1;
}

/* What the ranks must agree on, hashed: the same options everywhere. */
static uint64_t options_digest(const struct train_args *a)
{
    const hog_train_opts *o = &a->o;
    const struct net_args *na = &a->net;
    char buf[512];
    int n = snprintf(buf, sizeof buf,
                     "%d %a %a %a %a %d %a %u %d %a %d %a %d | %d %llu %a %a "
                     "%d %d %d",
                     (int)o->loss, o->l1, o->l2, o->eta, o->power,
                     (int)o->schedule, o->bias, o->epochs, (int)o->algo,
                     o->C, o->C_l1, o->tol, (int)o->multiclass,
                     (int)na->ao.mode, (unsigned long long)na->sync_every,
                     na->ao.momentum, na->ao.block_lr, na->ao.nesterov,
                     (int)na->shard, (int)na->shard_mode);
    unsigned char d[32];
    hog_sha256(buf, (size_t)n, d);
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | d[i];
    return v;
}

hog_status hog_cli_train_net_setup(struct train_args *a, hog_data **train,
                                   hog_net **net, struct hog_avg **avg,
                                   hog_err *err)
{
    struct net_args *na = &a->net;
    unsigned char *secret = NULL;
    hog_status s;
    if (na->secret_file) {
        size_t len;
        if ((s = hog_net_read_secret(na->secret_file, &secret, &len, err)) !=
            HOG_OK)
            return s;
        na->no.secret = secret;
        na->no.secret_len = len;
    }
    na->no.log = stderr;
    na->no.verbose = !a->quiet;
    s = na->mpi ? hog_net_open_mpi(&na->no, net, err)
                : hog_net_open_tcp(&na->no, net, err);
    free(secret);
    na->no.secret = NULL;
    if (s != HOG_OK)
        return s;
    unsigned rank = hog_net_rank(*net), world = hog_net_world(*net);
    /* K classes: the loaded data's (before a shard, which may lack some),
     * the same on every rank (checked below) */
    uint32_t k = 0;
    if (hog_train_is_multiclass(&a->o, *train) &&
        (s = hog_data_classes(*train, HOG_MAX_CLASSES, &na->classes, &k,
                              err)) != HOG_OK)
        return s;
    if (k >= 3) {
        if (na->ao.mode == HOG_AVG_BMUF)
            return hog_errf(err, HOG_ENOTSUP, "K classes average by plain "
                            "model averaging: BMUF keeps the block momentum "
                            "of one weight vector; drop --sync bmuf");
        if (na->ao.checkpoint)
            return hog_errf(err, HOG_ENOTSUP, "the averaged-model "
                            "checkpoint holds one weight vector; K classes "
                            "do not write it yet (drop it)");
        a->o.classes = na->classes;
        a->o.n_classes = k;
    }
    uint64_t cd = 0; /* FNV-1a of the classes in order */
    for (uint32_t c = 0; c < k; c++) {
        uint64_t b;
        memcpy(&b, &na->classes[c], sizeof b);
        cd = (cd ^ b) * UINT64_C(0x100000001b3);
    }
    if (na->shard) {
        hog_data *part;
        if ((s = hog_net_shard(*train, rank, world, na->shard_mode, &part,
                               err)) != HOG_OK)
            return s;
        hog_data_free(*train);
        *train = part;
    }
    uint64_t dg = options_digest(a);
    uint64_t v[6] = { (*train)->n_features, (*train)->m.rows, dg, ~dg,
                      cd, ~cd };
    if ((s = hog_net_allreduce_max(*net, v, 6, err)) != HOG_OK)
        return s;
    if (v[2] != dg || v[3] != ~dg)
        return hog_errf(err, HOG_EINVAL, "rank %u: the ranks were started "
                        "with different training options (loss, step, "
                        "epochs, --sync...); give every rank the same", rank);
    if (v[4] != cd || v[5] != ~cd)
        return hog_errf(err, HOG_EINVAL, "rank %u: the ranks' training data "
                        "hold different classes (%u here, in their order of "
                        "first appearance); every rank trains all of them: "
                        "give each a file with every class in the same "
                        "order, or one file and --shard", rank, k);
    /* Shards whose largest index differs still share one feature space. */
    (*train)->n_features = v[0];
    if (exact(a)) {
        /* named before the options were resolved (train_opts.c), for the
         * SGD trainers' defaults; the exact solvers average nothing */
        a->h.average = NULL;
        a->h.reduce = hog_net_reduce;
        a->h.reduce_ctx = *net;
        if (!a->quiet)
            fprintf(stderr, "rank %u of %u (%s): %llu rows, %llu features, "
                    "%s solved exactly over every rank's rows (one "
                    "all-reduce per product)\n", rank, world,
                    hog_net_backend(*net),
                    (unsigned long long)(*train)->m.rows,
                    (unsigned long long)v[0], hog_algo_name(a->o.algo));
        return HOG_OK;
    }
    /* --sync-every 0: one averaging, at each epoch's end */
    uint64_t blocks = na->sync_every
                          ? (v[1] + na->sync_every - 1) / na->sync_every
                          : 1;
    a->h.average = hog_avg_step;
    a->o.average_blocks = blocks ? blocks : 1;

    hog_model *like = NULL;
    if (na->ao.checkpoint) {
        if ((s = hog_model_new(v[0], a->o.loss, a->o.bias, &like, err)) !=
            HOG_OK)
            return s;
        like->l1 = a->o.l1;
        like->l2 = a->o.l2;
        like->labels = (*train)->labels;
        like->label_pos = (*train)->label_pos;
        like->label_neg = (*train)->label_neg;
        if (a->o.loss != HOG_LOSS_SQUARED)
            like->labels = HOG_LABELS_BINARY;
        na->ao.like = like;
        na->ao.epoch_blocks = a->o.average_blocks;
    }
    s = hog_avg_create(*net, &na->ao, avg, err);
    hog_model_free(like);
    na->ao.like = NULL;
    if (s != HOG_OK)
        return s;
    a->h.average_ctx = *avg;
    if (!a->quiet)
        fprintf(stderr, "rank %u of %u (%s): %llu rows, %llu features, "
                "%s every %llu rows (%llu per epoch)\n", rank, world,
                hog_net_backend(*net),
                (unsigned long long)(*train)->m.rows,
                (unsigned long long)v[0],
                na->ao.mode == HOG_AVG_BMUF ? "BMUF" : "averaging",
                (unsigned long long)(((*train)->m.rows + a->o.average_blocks -
                                      1) / a->o.average_blocks),
                (unsigned long long)a->o.average_blocks);
    return HOG_OK;
}
