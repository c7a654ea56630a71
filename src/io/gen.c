/*
 * Synthetic sparse data, shaped like tf-idf text, with a planted linear
 * model that a learner can recover.
 *
 * Features. Feature frequencies follow a power law: the feature of rank r
 * (r = 1..F) is drawn with probability p_r = r^-s / H(F, s), s = g->zipf,
 * through a Walker/Vose alias table (one random number per draw). Ranks
 * are mapped to feature ids through a seeded random permutation, so the
 * frequent features are spread over the index range, as in real data.
 *
 * Rows. Row i holds k distinct features, k = 1 + Poisson(nnz_per_row - 1)
 * (capped at F; when the tail is too thin to find k distinct features in
 * 8k + 64 draws the row keeps what it found). Each feature gets a term
 * count tf (P(tf = t) = 2^-t) and the value (1 + ln tf) * idf_r with
 * idf_r = 1 - ln q_r, q_r = 1 - (1 - p_r)^nnz_per_row the chance a row holds
 * the feature (scikit-learn's sublinear tf and idf). The row is scaled to
 * unit L2 norm and each value written with 6 decimals (at least 0.000001).
 *
 * Labels. A planted vector w and a bias b give the margin
 * m = b + sum_j w_j x_j, computed from the values as written. On 8192
 * pilot rows w is scaled so that m has standard deviation 1, and b is
 * minus their median margin, so the two classes are about equally
 * frequent. Classification: y = +1 if m > 0 else -1, flipped with
 * probability label_noise. Regression: y = m + label_noise * N(0, 1).
 * hog_gen_model() returns (w, b) as a model whose scores are exactly m.
 * Each w_r is non-zero with probability density_true, then N(0, 1) times
 * sqrt(q_r): a feature seen in few rows weighs little, since no learner
 * could estimate its weight from those rows. (Unscaled weights put most of
 * the signal on the rare, high-idf features: a linear model learned from
 * 10^5 rows then reached 76% test accuracy; scaled, 89-92%, with the
 * planted model at 95% for 5% label noise.)
 *
 * Determinism: the output depends only on the options. Weights,
 * permutation, pilot and each block of 1024 rows use their own RNG stream,
 * so blocks could be generated in parallel with the same output.
 *
 * Memory: about 21 bytes per feature (alias table, permutation, planted
 * weights, idf, a mark byte), 12 more while building; none per row.
 */
#include "io/io.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GEN_STREAM_WEIGHTS 1
#define GEN_STREAM_PERM 2
#define GEN_STREAM_PILOT 3
#define GEN_STREAM_ROWS 0x100
#define GEN_BLOCK_ROWS 1024
#define GEN_PILOT_ROWS 8192
#define GEN_SCALE 1000000 /* values are written with 6 decimals */

void hog_gen_opts_init(struct hog_gen_opts *g)
{
    memset(g, 0, sizeof *g);
    g->rows = 100000;
    g->features = 100000;
    g->nnz_per_row = 50;
    g->zipf = 1.1;
    g->label_noise = 0.05;
    g->regression = false;
    g->density_true = 0.1;
    g->seed = 1;
}

struct gen {
    struct hog_gen_opts o;
    uint32_t F;
    uint32_t *alias;   /* alias table over ranks (0-based) */
    uint32_t *thresh;  /* keep rank r when the coin is below thresh[r] */
    uint32_t *perm;    /* rank -> feature id (0-based) */
    float *w;          /* planted weight by rank */
    float *idf;        /* by rank */
    uint8_t *mark;     /* by rank: already in the current row */
    float bias_w;      /* planted bias weight (bias feature of value 1) */
    uint64_t *keys;    /* (feature id << 32 | rank) of the current row */
    uint32_t *q;       /* the current row's values, in millionths */
    size_t cap;
    float log_tf[65];
};

static void gen_free(struct gen *g)
{
    free(g->alias), free(g->thresh), free(g->perm), free(g->w);
    free(g->idf), free(g->mark), free(g->keys), free(g->q);
}

static hog_status gen_check(const struct hog_gen_opts *o, hog_err *err)
{
    if (o->features < 1 || o->features > (uint64_t)HOG_MAX_FEATURE_INDEX + 1)
        return hog_errf(err, HOG_EINVAL,
                        "gen: features must be in 1..%llu (got %llu)",
                        (unsigned long long)HOG_MAX_FEATURE_INDEX + 1,
                        (unsigned long long)o->features);
    if (!(o->nnz_per_row > 0) || !isfinite(o->nnz_per_row))
        return hog_errf(err, HOG_EINVAL,
                        "gen: nnz per row must be a positive number (got %g)",
                        o->nnz_per_row);
    if (!(o->zipf >= 0) || o->zipf > 100)
        return hog_errf(err, HOG_EINVAL,
                        "gen: the Zipf exponent must be in 0..100 (got %g; 0 "
                        "is uniform, text is about 1.1)",
                        o->zipf);
    if (!(o->density_true >= 0 && o->density_true <= 1))
        return hog_errf(err, HOG_EINVAL,
                        "gen: the planted density must be in 0..1 (got %g)",
                        o->density_true);
    if (o->regression ? !(o->label_noise >= 0 && isfinite(o->label_noise))
                      : !(o->label_noise >= 0 && o->label_noise <= 1))
        return hog_errf(err, HOG_EINVAL,
                        o->regression
                            ? "gen: the noise sd must be a number >= 0 (got %g)"
                            : "gen: the label flip probability must be in "
                              "0..1 (got %g)",
                        o->label_noise);
    return HOG_OK;
}

/* Vose's alias method over p_r ~ (r+1)^-s, r = 0..F-1; also the idf and
 * the frequency scaling of the planted weights. */
static hog_status build_tables(struct gen *g, hog_err *err)
{
    uint32_t F = g->F;
    double *p = malloc((size_t)F * sizeof *p);
    uint32_t *work = malloc((size_t)F * sizeof *work);
    if (!p || !work) {
        free(p), free(work);
        return hog_errf(err, HOG_ENOMEM,
                        "gen: out of memory for the tables of %u features", F);
    }
    double s = g->o.zipf, H = 0;
    /* Summed from the tail so that the small terms are not lost. */
    for (uint64_t r = F; r >= 1; r--) {
        p[r - 1] = pow((double)r, -s);
        H += p[r - 1];
    }
    double lambda = g->o.nnz_per_row;
    for (uint32_t r = 0; r < F; r++) {
        double pr = p[r] / H;
        double qr = -expm1(lambda * log1p(-fmin(pr, 1.0 - 1e-16)));
        g->idf[r] = (float)(1.0 - log(fmax(qr, 1e-300)));
        g->w[r] = (float)((double)g->w[r] * sqrt(qr));
        p[r] = pr * F; /* scaled: the mean is 1 */
    }
    /* work holds the small ones from the front, the large from the back. */
    uint32_t ns = 0, nl = 0;
    for (uint32_t r = 0; r < F; r++) {
        if (p[r] < 1.0)
            work[ns++] = r;
        else
            work[F - 1 - nl++] = r;
    }
    while (ns && nl) {
        uint32_t sm = work[--ns], lg = work[F - nl];
        g->thresh[sm] = (uint32_t)fmin(p[sm] * 4294967296.0, 4294967295.0);
        g->alias[sm] = lg;
        p[lg] -= 1.0 - p[sm];
        if (p[lg] < 1.0) {
            nl--;
            work[ns++] = lg;
        }
    }
    /* What is left has probability 1 up to rounding: keep itself. */
    while (ns) {
        uint32_t r = work[--ns];
        g->thresh[r] = UINT32_MAX, g->alias[r] = r;
    }
    while (nl) {
        uint32_t r = work[F - nl--];
        g->thresh[r] = UINT32_MAX, g->alias[r] = r;
    }
    free(p), free(work);
    return HOG_OK;
}

static inline uint32_t zipf_rank(const struct gen *g, struct hog_rng *rng)
{
    /* One 64-bit draw: the high part of x * F picks the column, the low
     * part is an independent coin for the alias test. */
    unsigned __int128 m = (unsigned __int128)hog_rng_next(rng) * g->F;
    uint32_t r = (uint32_t)(m >> 64);
    uint32_t coin = (uint32_t)((uint64_t)m >> 32);
    return coin < g->thresh[r] ? r : g->alias[r];
}

static uint64_t row_nnz(const struct gen *g, struct hog_rng *rng)
{
    double lam = g->o.nnz_per_row - 1.0;
    uint64_t k;
    if (lam <= 0) {
        k = 0;
    } else if (lam < 30) {
        double L = exp(-lam), prod = hog_rng_uniform(rng);
        k = 0;
        while (prod > L) {
            k++;
            prod *= hog_rng_uniform(rng);
        }
    } else {
        double v = floor(lam + sqrt(lam) * hog_rng_normal(rng) + 0.5);
        k = v > 0 ? (uint64_t)v : 0;
    }
    k += 1;
    return k < g->F ? k : g->F;
}

static void sort_u64(uint64_t *a, size_t n)
{
    while (n > 16) {
        /* median of three, then a Hoare partition */
        size_t mid = n / 2;
        uint64_t x = a[0], y = a[mid], z = a[n - 1];
        uint64_t piv = x < y ? (y < z ? y : (x < z ? z : x))
                             : (x < z ? x : (y < z ? z : y));
        size_t i = 0, j = n - 1;
        for (;;) {
            while (a[i] < piv)
                i++;
            while (a[j] > piv)
                j--;
            if (i >= j)
                break;
            uint64_t t = a[i];
            a[i++] = a[j];
            a[j--] = t;
        }
        /* recurse into the smaller side, loop on the larger */
        size_t left = j + 1;
        if (left < n - left) {
            sort_u64(a, left);
            a += left;
            n -= left;
        } else {
            sort_u64(a + left, n - left);
            n = left;
        }
    }
    for (size_t i = 1; i < n; i++) {
        uint64_t v = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1] > v; j--)
            a[j] = a[j - 1];
        a[j] = v;
    }
}

static hog_status grow_row(struct gen *g, size_t k, hog_err *err)
{
    if (k <= g->cap)
        return HOG_OK;
    size_t cap = g->cap ? g->cap : 256;
    while (cap < k)
        cap *= 2;
    uint64_t *keys = realloc(g->keys, cap * sizeof *keys);
    if (keys)
        g->keys = keys;
    uint32_t *q = realloc(g->q, cap * sizeof *q);
    if (q)
        g->q = q;
    if (!keys || !q)
        return hog_errf(err, HOG_ENOMEM, "gen: out of memory for a row of %zu",
                        k);
    g->cap = cap;
    return HOG_OK;
}

/* Draws one row into g->keys / g->q (sorted by feature id); returns its
 * nnz and its margin start + w.x, summed in feature order as
 * hog_model_scores() sums it (start is the bias term). */
static hog_status gen_row(struct gen *g, struct hog_rng *rng, double start,
                          uint32_t *nnz, double *margin, hog_err *err)
{
    uint64_t k = row_nnz(g, rng);
    hog_status s = grow_row(g, (size_t)k, err);
    if (s != HOG_OK)
        return s;
    uint64_t n = 0, tries = 0, limit = 8 * k + 64;
    while (n < k && tries++ < limit) {
        uint32_t r = zipf_rank(g, rng);
        if (g->mark[r])
            continue;
        g->mark[r] = 1;
        g->keys[n++] = (uint64_t)g->perm[r] << 32 | r;
    }
    for (uint64_t i = 0; i < n; i++)
        g->mark[(uint32_t)g->keys[i]] = 0;
    sort_u64(g->keys, (size_t)n);
    double ss = 0;
    float *v = (float *)g->q; /* the raw values first, then millionths */
    for (uint64_t i = 0; i < n; i++) {
        uint32_t r = (uint32_t)g->keys[i];
        unsigned tf = 1 + (unsigned)__builtin_ctzll(hog_rng_next(rng) | (1ull << 63));
        float x = (1.0f + g->log_tf[tf < 64 ? tf : 64]) * g->idf[r];
        v[i] = x;
        ss += (double)x * x;
    }
    double scale = ss > 0 ? (double)GEN_SCALE / sqrt(ss) : 0;
    double m = start;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t r = (uint32_t)g->keys[i];
        double qd = floor((double)v[i] * scale + 0.5);
        uint32_t q = qd < 1 ? 1 : qd > GEN_SCALE ? GEN_SCALE : (uint32_t)qd;
        g->q[i] = q;
        /* the value a parser reads back from the text */
        float x = (float)((double)q / GEN_SCALE);
        m += (double)g->w[r] * (double)x;
    }
    *nnz = (uint32_t)n;
    *margin = m;
    return HOG_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static hog_status gen_init(struct gen *g, const struct hog_gen_opts *o,
                           hog_err *err)
{
    memset(g, 0, sizeof *g);
    hog_status s = gen_check(o, err);
    if (s != HOG_OK)
        return s;
    g->o = *o;
    g->F = (uint32_t)o->features;
    size_t F = g->F;
    g->alias = malloc(F * sizeof *g->alias);
    g->thresh = malloc(F * sizeof *g->thresh);
    g->perm = malloc(F * sizeof *g->perm);
    g->w = malloc(F * sizeof *g->w);
    g->idf = malloc(F * sizeof *g->idf);
    g->mark = calloc(F, 1);
    if (!g->alias || !g->thresh || !g->perm || !g->w || !g->idf || !g->mark) {
        gen_free(g);
        return hog_errf(err, HOG_ENOMEM,
                        "gen: out of memory for %zu features (about 21 bytes "
                        "each)",
                        F);
    }
    for (int t = 1; t <= 64; t++)
        g->log_tf[t] = (float)log((double)t);
    g->log_tf[0] = 0;
    struct hog_rng rng;
    hog_rng_seed(&rng, o->seed, GEN_STREAM_WEIGHTS);
    for (size_t r = 0; r < F; r++) {
        bool nz = hog_rng_uniform(&rng) < o->density_true;
        double x = hog_rng_normal(&rng); /* drawn always: w_r depends on r only */
        g->w[r] = nz ? (float)x : 0.0f;  /* scaled in build_tables() */
    }
    if ((s = build_tables(g, err)) != HOG_OK) {
        gen_free(g);
        return s;
    }
    hog_rng_seed(&rng, o->seed, GEN_STREAM_PERM);
    for (size_t r = 0; r < F; r++)
        g->perm[r] = (uint32_t)r;
    hog_shuffle_u32(&rng, g->perm, F);

    /* The bias: minus the median margin of pilot rows. */
    double *pm = malloc(GEN_PILOT_ROWS * sizeof *pm);
    if (!pm) {
        gen_free(g);
        return hog_errf(err, HOG_ENOMEM, "gen: out of memory");
    }
    hog_rng_seed(&rng, o->seed, GEN_STREAM_PILOT);
    for (int i = 0; i < GEN_PILOT_ROWS; i++) {
        uint32_t nnz;
        if ((s = gen_row(g, &rng, 0.0, &nnz, &pm[i], err)) != HOG_OK) {
            free(pm);
            gen_free(g);
            return s;
        }
    }
    qsort(pm, GEN_PILOT_ROWS, sizeof *pm, cmp_double);
    double med = 0.5 * (pm[GEN_PILOT_ROWS / 2 - 1] + pm[GEN_PILOT_ROWS / 2]);
    double sum = 0, ss = 0;
    for (int i = 0; i < GEN_PILOT_ROWS; i++)
        sum += pm[i], ss += pm[i] * pm[i];
    double var = ss / GEN_PILOT_ROWS - (sum / GEN_PILOT_ROWS) * (sum / GEN_PILOT_ROWS);
    double scale = var > 1e-300 ? 1.0 / sqrt(var) : 1.0;
    for (size_t r = 0; r < F; r++)
        g->w[r] = (float)((double)g->w[r] * scale);
    g->bias_w = (float)(-med * scale);
    free(pm);
    return HOG_OK;
}

/* ---- text output ------------------------------------------------------------ */

static const char digits2[] = "00010203040506070809101112131415161718192021222324"
                              "25262728293031323334353637383940414243444546474849"
                              "50515253545556575859606162636465666768697071727374"
                              "75767778798081828384858687888990919293949596979899";

static char *put_uint(char *p, uint64_t v)
{
    char tmp[24];
    char *e = tmp + sizeof tmp, *b = e;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100);
        v /= 100;
        b -= 2;
        memcpy(b, digits2 + 2 * d, 2);
    }
    if (v >= 10) {
        b -= 2;
        memcpy(b, digits2 + 2 * v, 2);
    } else {
        *--b = (char)('0' + v);
    }
    memcpy(p, b, (size_t)(e - b));
    return p + (e - b);
}

/* q millionths, 1 <= q <= 10^6, without trailing zeros: "0.25", "1". */
static char *put_value(char *p, uint32_t q)
{
    if (q >= GEN_SCALE) {
        *p++ = '1';
        return p;
    }
    char d[6];
    for (int i = 5; i >= 0; i--) {
        d[i] = (char)('0' + q % 10);
        q /= 10;
    }
    int n = 6;
    while (n > 1 && d[n - 1] == '0')
        n--;
    p[0] = '0', p[1] = '.';
    memcpy(p + 2, d, 6);
    return p + 2 + n;
}

hog_status hog_gen_write(const struct hog_gen_opts *o, FILE *f, hog_err *err)
{
    struct gen g;
    hog_status s = gen_init(&g, o, err);
    if (s != HOG_OK)
        return s;
    size_t cap = (size_t)8 << 20;
    char *buf = malloc(cap);
    if (!buf) {
        gen_free(&g);
        return hog_errf(err, HOG_ENOMEM, "gen: out of memory for the buffer");
    }
    size_t len = 0;
    struct hog_rng rng;
    for (uint64_t i = 0; i < o->rows && s == HOG_OK; i++) {
        if (i % GEN_BLOCK_ROWS == 0)
            hog_rng_seed(&rng, o->seed, GEN_STREAM_ROWS + i / GEN_BLOCK_ROWS);
        uint32_t nnz;
        double m;
        if ((s = gen_row(&g, &rng, (double)g.bias_w, &nnz, &m, err)) != HOG_OK)
            break;
        size_t need = (size_t)nnz * 20 + 64;
        if (cap - len < need) {
            if (len && fwrite(buf, 1, len, f) != len) {
                s = hog_errf(err, HOG_EIO, "gen: write failed: %s",
                             strerror(errno));
                break;
            }
            len = 0;
            if (cap < need) {
                char *nb = realloc(buf, need);
                if (!nb) {
                    s = hog_errf(err, HOG_ENOMEM, "gen: out of memory");
                    break;
                }
                buf = nb, cap = need;
            }
        }
        char *p = buf + len;
        if (o->regression) {
            double y = m + o->label_noise * hog_rng_normal(&rng);
            p += snprintf(p, 32, "%.7g", y);
        } else {
            bool pos = m > 0;
            if (o->label_noise > 0 && hog_rng_uniform(&rng) < o->label_noise)
                pos = !pos;
            memcpy(p, pos ? "+1" : "-1", 2);
            p += 2;
        }
        for (uint32_t k = 0; k < nnz; k++) {
            *p++ = ' ';
            p = put_uint(p, (g.keys[k] >> 32) + 1);
            *p++ = ':';
            p = put_value(p, g.q[k]);
        }
        *p++ = '\n';
        len = (size_t)(p - buf);
    }
    if (s == HOG_OK && len && fwrite(buf, 1, len, f) != len)
        s = hog_errf(err, HOG_EIO, "gen: write failed: %s", strerror(errno));
    if (s == HOG_OK && fflush(f) != 0)
        s = hog_errf(err, HOG_EIO, "gen: write failed: %s", strerror(errno));
    free(buf);
    gen_free(&g);
    return s;
}

hog_status hog_gen_model(const struct hog_gen_opts *o, hog_model **out,
                         hog_err *err)
{
    struct gen g;
    hog_status s = gen_init(&g, o, err);
    if (s != HOG_OK)
        return s;
    hog_model *m;
    s = hog_model_new(g.F, o->regression ? HOG_LOSS_SQUARED : HOG_LOSS_LOGISTIC,
                      1.0, &m, err);
    if (s == HOG_OK) {
        for (uint32_t r = 0; r < g.F; r++)
            m->w[g.perm[r]] = g.w[r];
        m->w[g.F] = g.bias_w;
        *out = m;
    }
    gen_free(&g);
    return s;
}
