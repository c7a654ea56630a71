/*
 * Model files: hogtrain's binary .hgm and LIBLINEAR's text model.
 *
 * .hgm (all integers and floats little-endian; see docs/FORMATS.md):
 *
 *     offset size
 *          0    8  magic "HOGMODL\0"
 *          8    4  format version (1)
 *         12    4  header size in bytes (88 in version 1): the weights start here
 *         16    4  loss (hog_loss)
 *         20    4  label kind (0 binary, 1 real)
 *         24    8  l1 (f64)
 *         32    8  l2 (f64)
 *         40    8  bias value (f64; 0 = no bias weight)
 *         48    8  label_pos (f64)
 *         56    8  label_neg (f64)
 *         64    8  n_features (u64)
 *         72    8  number of weights stored (u64) = n_features + (bias != 0)
 *         80    8  reserved, zero
 *         88  4*n  weights (f32)
 *     88+4*n    4  CRC32C of everything before it
 *
 * A reader checks, in order: magic, version, that the declared sizes add up
 * to the file's size (before allocating anything), the CRC, then the fields.
 *
 * LIBLINEAR text is written exactly as liblinear-train writes it (see
 * save_model() in linear.cpp) so that liblinear-predict reads it and gives
 * the same labels as hogtrain.
 */
#include "io/io.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define HGM_HEADER_V1 88u

/* ---- little-endian fields -------------------------------------------------- */

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put_f64(unsigned char *p, double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
    put_u64(p, v);
}

static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static double get_f64(const unsigned char *p)
{
    uint64_t v = get_u64(p);
    double d;
    memcpy(&d, &v, 8);
    return d;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOG_HOST_BIG_ENDIAN 1
#else
#define HOG_HOST_BIG_ENDIAN 0
#endif

/* Byte-swaps n floats in place on a big-endian host; nothing elsewhere. */
static void f32_le_inplace(float *w, uint64_t n)
{
#if HOG_HOST_BIG_ENDIAN
    for (uint64_t i = 0; i < n; i++) {
        uint32_t v;
        memcpy(&v, &w[i], 4);
        v = __builtin_bswap32(v);
        memcpy(&w[i], &v, 4);
    }
#else
    (void)w, (void)n;
#endif
}

static uint64_t model_nweights(const hog_model *m)
{
    return m->n_features + (m->bias != 0.0);
}

/* ---- .hgm writer ------------------------------------------------------------ */

static hog_status save_hgm(const hog_model *m, FILE *f, const char *path,
                           hog_err *err)
{
    unsigned char h[HGM_HEADER_V1];
    uint64_t n = model_nweights(m);
    memset(h, 0, sizeof h);
    memcpy(h, HOG_HGM_MAGIC, 8);
    put_u32(h + 8, HOG_HGM_VERSION);
    put_u32(h + 12, HGM_HEADER_V1);
    put_u32(h + 16, (uint32_t)m->loss);
    put_u32(h + 20, (uint32_t)m->labels);
    put_f64(h + 24, m->l1);
    put_f64(h + 32, m->l2);
    put_f64(h + 40, m->bias);
    put_f64(h + 48, m->label_pos);
    put_f64(h + 56, m->label_neg);
    put_u64(h + 64, m->n_features);
    put_u64(h + 72, n);
    uint32_t crc = hog_crc32c(0, h, sizeof h);
    if (fwrite(h, 1, sizeof h, f) != sizeof h)
        return hog_errf(err, HOG_EIO, "%s: write failed: %s", path,
                        strerror(errno));
#if HOG_HOST_BIG_ENDIAN
    float buf[4096];
    for (uint64_t i = 0; i < n; i += 4096) {
        uint64_t k = n - i < 4096 ? n - i : 4096;
        memcpy(buf, m->w + i, k * 4);
        f32_le_inplace(buf, k);
        crc = hog_crc32c(crc, buf, k * 4);
        if (fwrite(buf, 4, k, f) != k)
            return hog_errf(err, HOG_EIO, "%s: write failed: %s", path,
                            strerror(errno));
    }
#else
    crc = hog_crc32c(crc, m->w, n * 4);
    if (n && fwrite(m->w, 4, n, f) != n)
        return hog_errf(err, HOG_EIO, "%s: write failed: %s", path,
                        strerror(errno));
#endif
    unsigned char c[4];
    put_u32(c, crc);
    if (fwrite(c, 1, 4, f) != 4)
        return hog_errf(err, HOG_EIO, "%s: write failed: %s", path,
                        strerror(errno));
    return HOG_OK;
}

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
    if (regression)
        return "L2R_L2LOSS_SVR"; /* LIBLINEAR has no L1 regression solver */
    switch (m->loss) {
    case HOG_LOSS_LOGISTIC: return l1 ? "L1R_LR" : "L2R_LR";
    case HOG_LOSS_HINGE: return l1 ? "L1R_L2LOSS_SVC" : "L2R_L1LOSS_SVC_DUAL";
    case HOG_LOSS_SQHINGE:
    case HOG_LOSS_SQUARED: break; /* least squares on two classes */
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

static hog_status save_liblinear(const hog_model *m, FILE *f, const char *path,
                                 hog_err *err)
{
    bool regression = m->loss == HOG_LOSS_SQUARED &&
                      m->labels == HOG_LABELS_REAL;
    int lp = 0, ln = 0;
    if (!regression &&
        (!label_as_int(m->label_pos, &lp) || !label_as_int(m->label_neg, &ln)))
        return hog_errf(err, HOG_ERANGE,
                        "%s: LIBLINEAR stores class labels as integers, and this "
                        "model's labels are %g and %g",
                        path, m->label_pos, m->label_neg);
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
    fprintf(f, "nr_class 2\n");
    if (!regression)
        fprintf(f, "label %d %d\n", lp, ln); /* label[0] is predicted when w.x > 0 */
    fprintf(f, "nr_feature %llu\n", (unsigned long long)m->n_features);
    fprintf(f, "bias %.17g\n", bias != 0.0 ? fabs(bias) : -1.0);
    fprintf(f, "w\n");
    for (uint64_t i = 0; i < m->n_features; i++)
        fprintf(f, "%.17g \n", (double)m->w[i]);
    if (bias != 0.0)
        fprintf(f, "%.17g \n", (double)(bias_sign * m->w[m->n_features]));
    if (ferror(f))
        return hog_errf(err, HOG_EIO, "%s: write failed: %s", path,
                        strerror(errno));
    return HOG_OK;
}

hog_status hog_model_save(const hog_model *m, const char *path,
                          hog_model_format fmt, hog_err *err)
{
    if (!m || !path)
        return hog_errf(err, HOG_EINVAL, "hog_model_save: no model or no path");
    if (fmt != HOG_MODEL_HGM && fmt != HOG_MODEL_LIBLINEAR)
        return hog_errf(err, HOG_EINVAL, "%s: unknown model format %d", path,
                        (int)fmt);
    char tmp[4200];
    FILE *f;
    hog_status s = hog_tmpfile_open(path, tmp, sizeof tmp, &f, err);
    if (s != HOG_OK)
        return s;
    if (fmt == HOG_MODEL_LIBLINEAR) {
        setvbuf(f, NULL, _IOFBF, 1 << 20);
        s = save_liblinear(m, f, path, err);
    } else {
        s = save_hgm(m, f, path, err);
    }
    if (s != HOG_OK) {
        hog_tmpfile_abort(f, tmp);
        return s;
    }
    return hog_tmpfile_commit(f, tmp, path, err);
}

/* ---- .hgm reader ------------------------------------------------------------ */

static hog_status load_hgm(FILE *f, const char *path, uint64_t fsize,
                           hog_model **out, hog_err *err)
{
    unsigned char h[HGM_HEADER_V1];
    if (fsize < 16)
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: truncated .hgm file (%llu bytes, the header alone "
                        "is %u)",
                        path, (unsigned long long)fsize, HGM_HEADER_V1);
    if (fread(h, 1, 16, f) != 16)
        return hog_errf(err, HOG_EIO, "%s: read failed: %s", path,
                        strerror(errno));
    uint32_t version = get_u32(h + 8), hsize = get_u32(h + 12);
    if (version > HOG_HGM_VERSION)
        return hog_errf(err, HOG_EFORMAT,
                        "%s: .hgm format version %u is newer than this hogtrain "
                        "reads (%u)",
                        path, version, HOG_HGM_VERSION);
    if (version == 0)
        return hog_errf(err, HOG_EFORMAT, "%s: .hgm format version 0 is not valid",
                        path);
    if (hsize != HGM_HEADER_V1)
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: .hgm header size %u, version %u has %u", path,
                        hsize, version, HGM_HEADER_V1);
    if (fsize < (uint64_t)HGM_HEADER_V1 + 4)
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: truncated .hgm file (%llu bytes, the header alone "
                        "is %u)",
                        path, (unsigned long long)fsize, HGM_HEADER_V1);
    if (fread(h + 16, 1, HGM_HEADER_V1 - 16, f) != HGM_HEADER_V1 - 16)
        return hog_errf(err, HOG_EIO, "%s: read failed: %s", path,
                        strerror(errno));
    uint64_t nf = get_u64(h + 64), nw = get_u64(h + 72);
    /* Sizes first, against the file: nothing is allocated for a size the
     * file does not hold. */
    uint64_t avail = (fsize - HGM_HEADER_V1 - 4) / 4;
    if (nw > avail || (fsize - HGM_HEADER_V1 - 4) % 4 != 0 || nw != avail)
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: header declares %llu weights, so %llu bytes, but "
                        "the file has %llu bytes (truncated or corrupt)",
                        path, (unsigned long long)nw,
                        nw <= (UINT64_MAX - HGM_HEADER_V1 - 4) / 4
                            ? (unsigned long long)(HGM_HEADER_V1 + 4 + 4 * nw)
                            : 0ull,
                        (unsigned long long)fsize);
    float *w = malloc(nw ? nw * 4 : 4);
    if (!w)
        return hog_errf(err, HOG_ENOMEM, "%s: out of memory for %llu weights",
                        path, (unsigned long long)nw);
    unsigned char c[4];
    if ((nw && fread(w, 4, nw, f) != nw) || fread(c, 1, 4, f) != 4) {
        free(w);
        return hog_errf(err, HOG_ECORRUPT, "%s: truncated while reading weights",
                        path);
    }
    uint32_t crc = hog_crc32c(hog_crc32c(0, h, sizeof h), w, nw * 4);
    if (crc != get_u32(c)) {
        free(w);
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: checksum mismatch (stored %08x, computed %08x): the "
                        "file is corrupt",
                        path, get_u32(c), crc);
    }
    f32_le_inplace(w, nw);
    uint32_t loss = get_u32(h + 16), kind = get_u32(h + 20);
    double l1 = get_f64(h + 24), l2 = get_f64(h + 32), bias = get_f64(h + 40);
    const char *bad = NULL;
    if (loss > HOG_LOSS_SQUARED)
        bad = "unknown loss";
    else if (kind > HOG_LABELS_REAL)
        bad = "unknown label kind";
    else if (!isfinite(bias))
        bad = "bias value is not finite";
    else if (nf > (uint64_t)HOG_MAX_FEATURES)
        bad = "too many features";
    else if (nw != nf + (bias != 0.0))
        bad = "weight count does not match features and bias";
    if (bad) {
        free(w);
        return hog_errf(err, HOG_ECORRUPT, "%s: invalid .hgm header: %s", path,
                        bad);
    }
    hog_model *m = calloc(1, sizeof *m);
    if (!m) {
        free(w);
        return hog_errf(err, HOG_ENOMEM, "%s: out of memory", path);
    }
    m->n_features = nf;
    m->w = w;
    m->loss = (hog_loss)loss;
    m->labels = (enum hog_label_kind)kind;
    m->l1 = l1;
    m->l2 = l2;
    m->bias = bias;
    m->label_pos = get_f64(h + 48);
    m->label_neg = get_f64(h + 56);
    *out = m;
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

static hog_status load_liblinear(FILE *f, const char *path, uint64_t fsize,
                                 hog_model **out, hog_err *err)
{
    struct ll_reader r = { f, path, NULL, 0, 0 };
    hog_status s = HOG_OK;
    int solver = -1;
    long nr_class = -1;
    long long nr_feature = -1;
    double bias = -1;
    bool have_label = false;
    double lab[2] = { 0, 0 };
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
            if (solver == 4)
                FAIL(HOG_ENOTSUP, "MCSVM_CS (Crammer-Singer multiclass) models "
                                  "are not supported; hogtrain reads two-class "
                                  "and regression models");
        } else if (!strcmp(key, "nr_class")) {
            nr_class = strtol(arg, &end, 10);
            if (end == arg || !is_blank(end) || nr_class < 1)
                FAIL(HOG_EPARSE, "nr_class needs a positive integer");
            if (nr_class > 2)
                FAIL(HOG_ENOTSUP, "a multiclass LIBLINEAR model (nr_class %ld); "
                                  "hogtrain reads two-class and regression "
                                  "models only",
                     nr_class);
            if (nr_class < 2)
                FAIL(HOG_ENOTSUP, "a LIBLINEAR model of a single class "
                                  "(nr_class 1) predicts one label for every "
                                  "row; hogtrain reads two-class and "
                                  "regression models only");
        } else if (!strcmp(key, "label")) {
            int k = 0;
            char *p = arg;
            for (;;) {
                double v = strtod(p, &end);
                if (end == p)
                    break;
                if (k < 2)
                    lab[k] = v;
                k++;
                p = end;
            }
            if (!is_blank(p) || k != 2)
                FAIL(HOG_EPARSE, "label needs two numbers (found %d)", k);
            have_label = true;
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
    bool regression = solver >= 11;
    if (!regression && !have_label)
        FAIL(HOG_EPARSE, "a classification model without a label line");
    if (!regression && nr_class != 2)
        FAIL(HOG_EPARSE, "a classification model without nr_class 2");

    hog_loss loss;
    switch (solver) {
    case 0: case 6: case 7: loss = HOG_LOSS_LOGISTIC; break;
    case 3: loss = HOG_LOSS_HINGE; break;
    case 1: case 2: case 5: loss = HOG_LOSS_SQHINGE; break;
    default: loss = HOG_LOSS_SQUARED; break; /* the SVR solvers */
    }
    /* LIBLINEAR adds a bias feature when bias >= 0; of value 0 it adds
     * nothing, so that weight is read and dropped. */
    bool has_bias_line = bias >= 0;
    double hbias = bias > 0 ? bias : 0.0;
    uint64_t nlines = (uint64_t)nr_feature + has_bias_line;
    /* Each weight takes a line of at least two bytes: a size the file
     * cannot hold is refused before the weights are allocated. */
    if (nlines > fsize / 2)
        FAIL(HOG_ECORRUPT, "nr_feature %lld, but a file of %llu bytes holds "
                           "fewer weights (truncated?)",
             nr_feature, (unsigned long long)fsize);
    s = hog_model_new((uint64_t)nr_feature, loss, hbias, &m, err);
    if (s != HOG_OK)
        goto done;
    /* The strengths are not stored; NaN says "regularized, strength unknown"
     * and keeps the L1/L2 choice for a later export. */
    m->l1 = (solver == 5 || solver == 6) ? NAN : 0.0;
    m->l2 = (solver == 5 || solver == 6) ? 0.0 : NAN;
    m->labels = regression ? HOG_LABELS_REAL : HOG_LABELS_BINARY;
    /* LIBLINEAR predicts label[0] when w.x > 0; hogtrain predicts the larger
     * label when w.x > 0, so a model listing the smaller label first is read
     * with its weights negated. */
    bool negate = false;
    if (!regression) {
        negate = lab[0] < lab[1];
        m->label_pos = negate ? lab[1] : lab[0];
        m->label_neg = negate ? lab[0] : lab[1];
        if (lab[0] == lab[1])
            FAIL(HOG_EPARSE, "label lists the same class twice");
    }
    for (uint64_t i = 0; i < nlines; i++) {
        if (!(ln = ll_next(&r)))
            FAIL(HOG_ECORRUPT, "end of file after %llu of %llu weights "
                               "(truncated)",
                 (unsigned long long)i, (unsigned long long)nlines);
        double v = strtod(ln, &end);
        if (end == ln || !is_blank(end))
            FAIL(HOG_EPARSE, "expected one weight per line");
        if (!isfinite(v) || fabs(v) > 3.4028234663852886e38)
            FAIL(HOG_ERANGE, "weight %s does not fit a float", ln);
        float fv = (float)(negate ? -v : v);
        if (i < (uint64_t)nr_feature)
            m->w[i] = fv;
        else if (hbias != 0.0)
            m->w[nr_feature] = fv;
    }
    while ((ln = ll_next(&r)))
        if (!is_blank(ln))
            FAIL(HOG_EPARSE, "unexpected text after the %llu weights",
                 (unsigned long long)nlines);
#undef FAIL
done:
    free(r.line);
    if (s != HOG_OK) {
        hog_model_free(m);
        return s;
    }
    *out = m;
    return HOG_OK;
}

hog_status hog_model_load(const char *path, hog_model **out, hog_err *err)
{
    if (!path || !out)
        return hog_errf(err, HOG_EINVAL, "hog_model_load: no path or no output");
    FILE *f = fopen(path, "rb");
    if (!f)
        return hog_errf(err, HOG_EIO, "%s: cannot open: %s", path,
                        strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return hog_errf(err, HOG_EIO, "%s: not a regular file", path);
    }
    char head[16] = { 0 };
    size_t got = fread(head, 1, sizeof head, f);
    rewind(f);
    hog_status s;
    if (got >= 8 && !memcmp(head, HOG_HGM_MAGIC, 8))
        s = load_hgm(f, path, (uint64_t)st.st_size, out, err);
    else if (got >= 11 && !memcmp(head, "solver_type", 11))
        s = load_liblinear(f, path, (uint64_t)st.st_size, out, err);
    else if (got == 0)
        s = hog_errf(err, HOG_EFORMAT, "%s: empty file, not a model", path);
    else
        s = hog_errf(err, HOG_EFORMAT,
                     "%s: not a model file (neither .hgm nor LIBLINEAR text "
                     "starting with \"solver_type\")",
                     path);
    fclose(f);
    return s;
}
