/* hogtrain objective: the primal objective of a model (hogtrain's .hgm or
 * a LIBLINEAR text model) on a data set, for a given loss and
 * regularization, so that two solvers can be compared on one problem. */
#include "cli/cli.h"

#include "coordinate/coordinate.h"
#include "core/loss.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_LOSS = HOG_CLI_OPT_OWN, OPT_L1, OPT_L2, OPT_C, OPT_REG, OPT_WEIGHTS,
    OPT_EPSILON, OPT_QUANTILE_TAU
};

static const struct option longopts[] = {
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { "loss", required_argument, NULL, OPT_LOSS },
    { "epsilon", required_argument, NULL, OPT_EPSILON },
    { "quantile-tau", required_argument, NULL, OPT_QUANTILE_TAU },
    { "l1", required_argument, NULL, OPT_L1 },
    { "l2", required_argument, NULL, OPT_L2 },
    { "C", required_argument, NULL, OPT_C },
    { "reg", required_argument, NULL, OPT_REG },
    { "weights", required_argument, NULL, OPT_WEIGHTS },
    HOG_CLI_LOAD_OPTIONS,
    { NULL, 0, NULL, 0 },
};

static const char help[] =
    "\n"
    "Prints the primal objective of MODEL (.hgm or LIBLINEAR text) on DATA:\n"
    "\n"
    "    F(w) = (1/n) sum_i v_i loss(y_i, w.x_i + b) + l2/2 |w|^2 + l1 |w|_1\n"
    "\n"
    "with v_i the row weights of --weights (1 without), the bias weight\n"
    "regularized like the others (LIBLINEAR's -B), and the same objective in\n"
    "LIBLINEAR's scale: 1/2 |w|^2 + C sum v_i loss_i = F / l2 with\n"
    "C = 1/(l2 n), or |w|_1 + C sum v_i loss_i = F / l1 with C = 1/(l1 n).\n"
    "\n"
    "  --loss L      any of train's (default: the model's)\n"
    "  --epsilon X, --quantile-tau X  the loss's parameter (default: the\n"
    "                model's for its loss, else train's)\n"
    "  --l1 X, --l2 X  the strengths (default: the model's, when it records them)\n"
    "  --C X         LIBLINEAR's C: sets l2 (or l1, see --reg) to 1/(C n)\n"
    "  --reg R       l1 or l2: which strength --C sets (default: the model's\n"
    "                kind; LIBLINEAR -s 5 and -s 6 models are l1)\n"
    "  --weights F   row weights, one per line of F for each row of DATA (as\n"
    "                train --weights): the loss term is (1/n) sum_i v_i loss_i,\n"
    "                LIBLINEAR's C sum_i v_i loss_i\n"
    "  --zero-based  feature indices in the text start at 0\n"
    "  --threads N   parser threads; 0 = all cores (default 0)\n"
    "  --format F    auto, libsvm or vw (the data is hashed as the model's\n"
    "                training data was; --hash-bits B, --hash-seed S must\n"
    "                then be the model's)\n"
    "  -q, --quiet   print nothing on standard error\n"
    "\n"
    "Standard output: one 'name value' per line: objective, mean_loss,\n"
    "regularizer, loss (and its epsilon or quantile_tau), l1, l2, C,\n"
    "liblinear_objective, nonzero_weights, rows.\n"
    HOG_CLI_EXIT_HELP;

static const struct hog_cli_cmd cmd = {
    "objective",
    "hogtrain objective [options] MODEL DATA",
    NULL,
    help,
};


struct objective_args {
    const char *model, *data, *weights;
    bool quiet, have_loss, have_l1, have_l2, have_c, have_reg, have_param;
    hog_loss loss;
    hog_train_opts param; /* --epsilon and --quantile-tau, or defaults */
    double l1, l2, C;
    int reg_l1; /* --reg l1 */
    hog_load_opts lo;
};

static int parse(int argc, char **argv, struct objective_args *a)
{
    hog_load_opts_init(&a->lo);
    hog_train_opts model; /* --loss, --l1 and --l2, read as train reads them */
    hog_train_opts_init(&model);
    int ch, rc;
    /* --loss, --l1, --l2, --C and --reg are the shared parser's, read as
     * train reads them (with its checks: --C excludes --l1 and --l2, --reg
     * needs --C) */
    struct hog_cli_parser op;
    hog_cli_parser_init(&op, &cmd, "qh", longopts);
    op.load = &a->lo;
    op.train = &model;
    while ((ch = hog_cli_getopt(&op, argc, argv)) > 0) {
        if (ch == OPT_WEIGHTS) {
            a->weights = optarg;
            continue;
        }
        if (ch != 'q')
            return hog_cli_bad_option(&cmd, '?', argv);
        a->quiet = true;
    }
    if (ch < 0)
        return op.status;
    static const char *const files[] = { "MODEL", "DATA" };
    if ((rc = hog_cli_operands(&cmd, argc, argv, 2, files, NULL)) >= 0)
        return rc;
    a->have_c = op.seen[OPT_C];
    a->have_reg = op.seen[OPT_REG];
    a->have_loss = op.seen[OPT_LOSS];
    a->have_param = op.seen[OPT_EPSILON] || op.seen[OPT_QUANTILE_TAU];
    a->param = model;
    a->have_l1 = op.seen[OPT_L1];
    a->have_l2 = op.seen[OPT_L2];
    a->loss = model.loss;
    a->l1 = model.l1;
    a->l2 = model.l2;
    a->C = model.C;
    a->reg_l1 = model.C_l1;
    a->model = argv[optind];
    a->data = argv[optind + 1];
    return -1;
}

int hog_cli_objective(int argc, char **argv)
{
    struct objective_args a;
    memset(&a, 0, sizeof a);
    int rc = parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    hog_err err = { { 0 } };
    hog_status s;
    hog_model *m = NULL;
    hog_data *d = NULL;
    float *rw = NULL;
    /* The data lives in the model's feature space at least. */
    if ((s = hog_cli_load_model_data(a.model, a.data, NULL, &a.lo, true,
                                     a.quiet, &m, &d, &err)) != HOG_OK)
        goto fail;
    /* the metrics weigh each row's loss by the data's row weights */
    if (a.weights) {
        if ((s = hog_weights_load(a.weights, hog_data_rows(d), &rw, &err)) !=
            HOG_OK)
            goto fail;
        d->row_w = rw;
    }

    hog_loss loss = a.have_loss ? a.loss : m->loss;
    /* the model's parameter is its own loss's: another loss, or one
     * given, takes the options' */
    if (loss != m->loss || a.have_param) {
        a.param.loss = loss;
        m->loss_param = hog_loss_param_of(&a.param);
    }
    double l1 = m->l1, l2 = m->l2;
    if (a.have_c) {
        /* LIBLINEAR models mark their kind with NaN ("regularized,
         * strength unknown"). */
        bool reg_l1 = a.have_reg ? a.reg_l1
                                 : (isnan(m->l1) || (m->l1 > 0 && !(m->l2 > 0)));
        hog_strengths_of_C(a.C, reg_l1, hog_data_rows(d), &l1, &l2);
    } else {
        if (a.have_l1)
            l1 = a.l1;
        if (a.have_l2)
            l2 = a.l2;
        /* A LIBLINEAR model's other strength is zero once one is given. */
        if (a.have_l1 && !a.have_l2 && isnan(l2))
            l2 = 0.0;
        if (a.have_l2 && !a.have_l1 && isnan(l1))
            l1 = 0.0;
    }
    if (isnan(l1) || isnan(l2)) {
        hog_model_free(m);
        hog_data_free(d);
        free(rw);
        return hog_cli_usage_error(&cmd, "%s does not record its "
                                   "regularization strength (a LIBLINEAR "
                                   "model); give --C or --l1/--l2", a.model);
    }
    struct hog_objective ob;
    if ((s = hog_objective_eval(m, d, loss, l1, l2, &ob, &err)) != HOG_OK)
        goto fail;
    printf("objective %.12g\n", ob.value);
    printf("mean_loss %.12g\n", ob.mean_loss);
    printf("regularizer %.12g\n", ob.reg);
    printf("loss %s\n", hog_cli_loss_name(loss));
    if (hog_loss_rows[loss].param != HOG_LOSS_PARAM_NONE)
        printf("%s %.12g\n",
               hog_loss_rows[loss].param == HOG_LOSS_PARAM_TAU ? "quantile_tau"
                                                               : "epsilon",
               m->loss_param);
    printf("l1 %.12g\n", l1);
    printf("l2 %.12g\n", l2);
    printf("C %.12g\n", ob.C);
    printf("liblinear_objective %.12g\n", ob.liblinear);
    printf("nonzero_weights %llu\n", (unsigned long long)ob.nonzeros);
    printf("rows %llu\n", (unsigned long long)hog_data_rows(d));
    rc = HOG_EXIT_OK;
    goto out;
fail:
    rc = hog_cli_fail_status(s, &err);
out:
    hog_model_free(m);
    hog_data_free(d);
    free(rw);
    return rc;
}
