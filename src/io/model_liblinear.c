/*
 * LIBLINEAR's text model files, written and read.
 *
 * LIBLINEAR text is written exactly as liblinear-train writes it (see
 * save_model() in linear.cpp) so that liblinear-predict reads it and gives
 * the same labels as hogtrain: one weight per line for two classes, one
 * line per feature with K weights (in the label line's order) for K. A
 * softmax model is written as Crammer-Singer's (MCSVM_CS): the same
 * labels, and no probabilities from LIBLINEAR rather than other ones.
 */
#include "io/model_format.h"

#include "core/loss.h"

#include <stdlib.h>

/* ---- LIBLINEAR writer ------------------------------------------------------- */

/* LIBLINEAR's solver names (solver_type_table in linear.cpp, 2.3). */
static const char *const ll_solvers[] = {
    "L2R_LR", "L2R_L2LOSS_SVC_DUAL", "L2R_L2LOSS_SVC", "L2R_L1LOSS_SVC_DUAL",
    "MCSVM_CS", "L1R_L2LOSS_SVC", "L1R_LR", "L2R_LR_DUAL",
    NULL, NULL, NULL,
    "L2R_L2LOSS_SVR", "L2R_L2LOSS_SVR_DUAL", "L2R_L1LOSS_SVR_DUAL",
};
#define LL_NSOLVERS (sizeof ll_solvers / sizeof ll_solvers[0])

/* The LIBLINEAR solver whose model means what m means. Only the name and
 * whether it is a regression solver matter to liblinear-predict. */
static const char *ll_solver_for(const hog_model *m, bool regression)
{
    bool l1 = m->l1 != 0.0; /* NaN (strength unknown) counts as L1 */
    if (regression) /* LIBLINEAR has no L1 regression solver */
        return m->loss == HOG_LOSS_EPS_INSENSITIVE ? "L2R_L1LOSS_SVR_DUAL"
                                                   : "L2R_L2LOSS_SVR";
    /* LIBLINEAR has no softmax solver. Crammer-Singer's K columns predict
     * the same arg-max, and liblinear-predict -b 1 refuses it, where
     * L2R_LR's -b 1 would print one-vs-rest probabilities that are not
     * the model's. */
    if (m->n_classes && m->multiclass == HOG_MULTICLASS_SOFTMAX)
        return "MCSVM_CS";
    switch (m->loss) {
    case HOG_LOSS_LOGISTIC: return l1 ? "L1R_LR" : "L2R_LR";
    case HOG_LOSS_HINGE: return l1 ? "L1R_L2LOSS_SVC" : "L2R_L1LOSS_SVC_DUAL";
    default: break; /* squared hinge; least squares on two classes */
    }
    return l1 ? "L1R_L2LOSS_SVC" : "L2R_L2LOSS_SVC";
}

static bool label_as_int(double v, int *out)
{
    if (!(v == floor(v)) || v < -2147483648.0 || v > 2147483647.0)
        return false;
    *out = (int)v;
    return true;
}

/* One weight as LIBLINEAR prints it ("%.17g "); zeros, most weights of a
 * sparse model, without printf. */
static void ll_put_weight(FILE *f, float v)
{
    if (v == 0.0f && !signbit(v))
        fputs("0 ", f);
    else
        fprintf(f, "%.17g ", (double)v);
}

hog_status hog_liblinear_save(const hog_model *m, FILE *f,
                              const char *path, hog_err *err)
{
    bool regression = !hog_loss_is_classification(m->loss) &&
                      m->labels == HOG_LABELS_REAL && !m->n_classes;
    uint32_t k = m->n_classes;
    int lp = 0, ln = 0;
    if (m->loss == HOG_LOSS_POISSON)
        return hog_errf(err, HOG_ENOTSUP,
                        "%s: this model predicts exp(w.x) (the Poisson "
                        "loss's log link), and liblinear-predict would print "
                        "w.x; save it as .hgm", path);
    if (m->hash_bits)
        return hog_errf(err, HOG_ENOTSUP,
                        "%s: this model's features are hashed (--hash-bits "
                        "%u), and LIBLINEAR cannot hash: liblinear-predict "
                        "would score the data's own feature indices against "
                        "weights of hashed ones; save it as .hgm",
                        path, m->hash_bits);
    if (k) {
        for (uint32_t c = 0; c < k; c++)
            if (!label_as_int(m->classes[c], &lp))
                return hog_errf(err, HOG_ERANGE,
                                "%s: LIBLINEAR stores class labels as "
                                "integers, and this model's class %u of %u "
                                "is %g",
                                path, c + 1, k, m->classes[c]);
    } else if (!regression && (!label_as_int(m->label_pos, &lp) ||
                               !label_as_int(m->label_neg, &ln))) {
        return hog_errf(err, HOG_ERANGE,
                        "%s: LIBLINEAR stores class labels as integers, and this "
                        "model's labels are %g and %g",
                        path, m->label_pos, m->label_neg);
    }
    if (m->n_features > INT32_MAX)
        return hog_errf(err, HOG_ERANGE,
                        "%s: LIBLINEAR models hold at most %d features, this "
                        "one has %llu",
                        path, INT32_MAX, (unsigned long long)m->n_features);
    /* LIBLINEAR's bias feature must be >= 0; a negative bias value b with
     * weight v is written as |b| with weight -v: the product is the same. */
    double bias = m->bias;
    float bias_sign = bias < 0 ? -1.0f : 1.0f;
    fprintf(f, "solver_type %s\n", ll_solver_for(m, regression));
    fprintf(f, "nr_class %u\n", k ? k : 2u);
    if (k) {
        /* liblinear-predict takes the arg-max over the K columns, in the
         * label line's order: the model's class order */
        fputs("label", f);
        for (uint32_t c = 0; c < k; c++)
            fprintf(f, " %d", (int)m->classes[c]);
        fputc('\n', f);
    } else if (!regression) {
        fprintf(f, "label %d %d\n", lp, ln); /* label[0] is predicted when w.x > 0 */
    }
    fprintf(f, "nr_feature %llu\n", (unsigned long long)m->n_features);
    fprintf(f, "bias %.17g\n", bias != 0.0 ? fabs(bias) : -1.0);
    fprintf(f, "w\n");
    /* one line per feature (the bias last), one weight per vector on it */
    uint64_t len = hog_model_vector_len(m), nv = hog_model_vectors(m);
    for (uint64_t i = 0; i < len; i++) {
        float sign = i == m->n_features ? bias_sign : 1.0f;
        for (uint64_t c = 0; c < nv; c++)
            ll_put_weight(f, sign * m->w[c * len + i]);
        fputc('\n', f);
    }
    if (ferror(f))
        return hog_model_write_failed(path, err);
    return HOG_OK;
}

/* ---- LIBLINEAR reader ------------------------------------------------------- */

struct ll_reader {
    FILE *f;
    const char *path;
    char *line;
    size_t cap;
    uint64_t lineno;
};

/* Next line without its newline; NULL at end of file. */
static char *ll_next(struct ll_reader *r)
{
    ssize_t n = getline(&r->line, &r->cap, r->f);
    if (n < 0)
        return NULL;
    r->lineno++;
    while (n > 0 && (r->line[n - 1] == '\n' || r->line[n - 1] == '\r'))
        r->line[--n] = 0;
    return r->line;
}

static bool is_blank(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return *s == 0;
}

/* LIBLINEAR's solver numbers (the index in ll_solvers) that hogtrain's
 * reader tells apart. */
enum { LL_MCSVM_CS = 4, LL_FIRST_SVR = 11 };

static hog_loss ll_loss_of(int solver)
{
    switch (solver) {
    case 0: case 6: case 7: return HOG_LOSS_LOGISTIC;
    case 3: return HOG_LOSS_HINGE;
    case LL_MCSVM_CS: return HOG_LOSS_HINGE; /* Crammer-Singer's multiclass hinge */
    case 1: case 2: case 5: return HOG_LOSS_SQHINGE;
    /* L1-loss SVR; the file does not keep -p, so epsilon reads as 0
     * (objective --epsilon gives it) */
    case 13: return HOG_LOSS_EPS_INSENSITIVE;
    /* -s 11 and 12's squared epsilon-insensitive loss at the unknown -p:
     * the squared loss, -p 0's */
    default: return HOG_LOSS_SQUARED;
    }
}

/* The numbers of a "label" line, appended to a growing array. Returns how
 * many, or -1 when more than HOG_MAX_CLASSES or out of memory; *rest is
 * where they end. */
static long ll_labels(char *arg, double **lab, char **rest)
{
    size_t k = 0, cap = 0;
    char *p = arg, *end;
    for (;;) {
        double v = strtod(p, &end);
        if (end == p)
            break;
        if (k == cap) {
            cap = cap ? 2 * cap : 16;
            double *grown = k < HOG_MAX_CLASSES ? realloc(*lab, cap * sizeof *grown)
                                                : NULL;
            if (!grown)
                return -1;
            *lab = grown;
        }
        (*lab)[k++] = v;
        p = end;
    }
    *rest = p;
    return (long)k;
}

hog_status hog_liblinear_load(FILE *f, const char *path, uint64_t fsize,
                              hog_model **out, hog_err *err)
{
    struct ll_reader r = { f, path, NULL, 0, 0 };
    hog_status s = HOG_OK;
    int solver = -1;
    long nr_class = -1, nlab = -1;
    long long nr_feature = -1;
    double bias = -1;
    double *lab = NULL;
    hog_model *m = NULL;
    char *ln, *end;

#define FAIL(st, ...)                                                          \
    do {                                                                       \
        char why_[600];                                                        \
        snprintf(why_, sizeof why_, __VA_ARGS__);                              \
        s = hog_errf(err, st, "%s:%llu: %s", path,                             \
                     (unsigned long long)r.lineno, why_);                      \
        goto done;                                                             \
    } while (0)

    for (;;) {
        if (!(ln = ll_next(&r)))
            FAIL(HOG_EPARSE, "end of file before the \"w\" line that starts "
                             "the weights");
        char key[32];
        int used = 0;
        if (is_blank(ln))
            continue;
        if (sscanf(ln, " %31s%n", key, &used) != 1)
            FAIL(HOG_EPARSE, "expected a keyword");
        char *arg = ln + used;
        if (!strcmp(key, "w")) {
            if (!is_blank(arg))
                FAIL(HOG_EPARSE, "unexpected text after \"w\"");
            break;
        } else if (!strcmp(key, "solver_type")) {
            char name[64];
            if (sscanf(arg, " %63s", name) != 1)
                FAIL(HOG_EPARSE, "solver_type without a name");
            for (size_t i = 0; i < LL_NSOLVERS; i++)
                if (ll_solvers[i] && !strcmp(ll_solvers[i], name))
                    solver = (int)i;
            if (solver < 0)
                FAIL(HOG_ENOTSUP, "unknown LIBLINEAR solver \"%s\"", name);
        } else if (!strcmp(key, "nr_class")) {
            nr_class = strtol(arg, &end, 10);
            if (end == arg || !is_blank(end) || nr_class < 1)
                FAIL(HOG_EPARSE, "nr_class needs a positive integer");
            if (nr_class > (long)HOG_MAX_CLASSES)
                FAIL(HOG_ENOTSUP, "a LIBLINEAR model of %ld classes; hogtrain "
                                  "reads at most %u",
                     nr_class, HOG_MAX_CLASSES);
            if (nr_class < 2)
                FAIL(HOG_ENOTSUP, "a LIBLINEAR model of a single class "
                                  "(nr_class 1) predicts one label for every "
                                  "row; hogtrain reads models of two or more "
                                  "classes and regression models");
        } else if (!strcmp(key, "label")) {
            char *rest;
            free(lab);
            lab = NULL;
            if ((nlab = ll_labels(arg, &lab, &rest)) < 0)
                FAIL(HOG_ENOTSUP, "label lists more classes than hogtrain "
                                  "reads (%u)",
                     HOG_MAX_CLASSES);
            if (!is_blank(rest))
                FAIL(HOG_EPARSE, "label needs numbers, one per class");
            if (nr_class > 0 && nlab != nr_class)
                FAIL(HOG_EPARSE, "label needs %ld numbers, one per class "
                                 "(found %ld)",
                     nr_class, nlab);
            for (long c = 0; c < nlab; c++)
                if (!isfinite(lab[c]))
                    FAIL(HOG_EPARSE, "label %ld is not a finite number", c + 1);
        } else if (!strcmp(key, "nr_feature")) {
            nr_feature = strtoll(arg, &end, 10);
            if (end == arg || !is_blank(end) || nr_feature < 0 ||
                nr_feature > (long long)HOG_MAX_FEATURES)
                FAIL(HOG_EPARSE, "nr_feature needs an integer in 0..%u",
                     HOG_MAX_FEATURES);
        } else if (!strcmp(key, "bias")) {
            bias = strtod(arg, &end);
            if (end == arg || !is_blank(end) || !isfinite(bias))
                FAIL(HOG_EPARSE, "bias needs a number");
        } else if (!strcmp(key, "rho")) {
            /* LIBLINEAR >= 2.40 writes rho for one-class SVM only. */
        } else {
            FAIL(HOG_EPARSE, "unknown keyword \"%s\" in a LIBLINEAR model", key);
        }
    }
    if (solver < 0)
        FAIL(HOG_EPARSE, "no solver_type before the weights");
    if (nr_feature < 0)
        FAIL(HOG_EPARSE, "no nr_feature before the weights");
    bool regression = solver >= LL_FIRST_SVR;
    if (!regression && nlab < 0)
        FAIL(HOG_EPARSE, "a classification model without a label line");
    if (!regression && nr_class < 0)
        FAIL(HOG_EPARSE, "a classification model without nr_class");
    if (!regression && nlab != nr_class)
        FAIL(HOG_EPARSE, "label lists %ld classes, but nr_class is %ld", nlab,
             nr_class);
    /* LIBLINEAR keeps one weight column for two classes (w.x > 0 predicts
     * label[0]), K for K classes and for Crammer-Singer of any K (the
     * arg-max of the K scores predicts) */
    uint32_t k = regression || nr_class == 2 ? 0 : (uint32_t)nr_class;
    uint32_t cols = regression || (nr_class == 2 && solver != LL_MCSVM_CS)
                        ? 1
                        : (uint32_t)nr_class;

    /* LIBLINEAR adds a bias feature when bias >= 0; of value 0 it adds
     * nothing, so that weight is read and dropped. */
    bool has_bias_line = bias >= 0;
    double hbias = bias > 0 ? bias : 0.0;
    uint64_t nlines = (uint64_t)nr_feature + has_bias_line;
    /* Each weight takes at least two bytes: a size the file cannot hold
     * is refused before the weights are allocated. */
    if (nlines > fsize / 2 / cols)
        FAIL(HOG_ECORRUPT, "nr_feature %lld, but a file of %llu bytes holds "
                           "fewer weights (truncated?)",
             nr_feature, (unsigned long long)fsize);
    s = hog_model_new((uint64_t)nr_feature, ll_loss_of(solver), hbias, &m, err);
    if (s == HOG_OK && k) {
        const char *dup = hog_model_check_classes(lab, k, err);
        if (dup)
            FAIL(HOG_EPARSE, "label: %s", dup);
        s = hog_model_set_classes(m, k, lab, HOG_MULTICLASS_OVR, err);
    }
    if (s != HOG_OK)
        goto done;
    /* The strengths are not stored; NaN says "regularized, strength unknown"
     * and keeps the L1/L2 choice for a later export. */
    m->l1 = (solver == 5 || solver == 6) ? NAN : 0.0;
    m->l2 = (solver == 5 || solver == 6) ? 0.0 : NAN;
    if (!k)
        m->labels = regression ? HOG_LABELS_REAL : HOG_LABELS_BINARY;
    /* LIBLINEAR predicts label[0] when w.x > 0; hogtrain predicts the larger
     * label when w.x > 0, so a two-class model listing the smaller label
     * first is read with its weights negated. */
    bool negate = false;
    if (!regression && !k) {
        if (lab[0] == lab[1])
            FAIL(HOG_EPARSE, "label lists the same class twice");
        negate = lab[0] < lab[1];
        m->label_pos = negate ? lab[1] : lab[0];
        m->label_neg = negate ? lab[0] : lab[1];
    }
    uint64_t len = hog_model_vector_len(m);
    const char *lines = cols == 1 ? "weights" : "lines of weights";
    for (uint64_t i = 0; i < nlines; i++) {
        if (!(ln = ll_next(&r)))
            FAIL(HOG_ECORRUPT, "end of file after %llu of %llu %s "
                               "(truncated)",
                 (unsigned long long)i, (unsigned long long)nlines, lines);
        /* the line's weights, one per column; bias 0's line is dropped */
        bool keep = i < (uint64_t)nr_feature || hbias != 0.0;
        double v[2] = { 0, 0 };
        char *p = ln;
        for (uint32_t c = 0; c < cols; c++, p = end) {
            while (*p == ' ' || *p == '\t')
                p++;
            double x = strtod(p, &end);
            if (end == p) {
                if (cols == 1)
                    FAIL(HOG_EPARSE, "expected one weight per line");
                FAIL(HOG_EPARSE, "expected %u weights per line, one per "
                                 "class (found %u)",
                     cols, c);
            }
            if (!isfinite(x) || fabs(x) > 3.4028234663852886e38)
                FAIL(HOG_ERANGE, "weight %.*s does not fit a float",
                     (int)(end - p), p);
            if (k && keep)
                m->w[c * len + i] = (float)x;
            else if (c < 2)
                v[c] = x;
        }
        if (!is_blank(p)) {
            if (cols == 1)
                FAIL(HOG_EPARSE, "expected one weight per line");
            FAIL(HOG_EPARSE, "expected %u weights per line, one per class "
                             "(found more)",
                 cols);
        }
        if (k || !keep)
            continue;
        /* two-class Crammer-Singer: label[0] wins when its score is the
         * larger, w0.x - w1.x > 0 */
        double x = cols == 2 ? v[0] - v[1] : v[0];
        if (fabs(x) > 3.4028234663852886e38)
            FAIL(HOG_ERANGE, "the two weights' difference %g does not fit a "
                             "float",
                 x);
        m->w[i] = (float)(negate ? -x : x);
    }
    while ((ln = ll_next(&r)))
        if (!is_blank(ln))
            FAIL(HOG_EPARSE, "unexpected text after the %llu %s",
                 (unsigned long long)nlines, lines);
#undef FAIL
done:
    free(r.line);
    free(lab);
    if (s != HOG_OK) {
        hog_model_free(m);
        return s;
    }
    *out = m;
    return HOG_OK;
}

