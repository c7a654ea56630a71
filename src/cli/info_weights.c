/* hogtrain info --weights: a model's weights with their features' names
 * (Vowpal Wabbit's --readable_model and --invert_hash), as text or JSON.
 * A feature is its weight's index: the LIBSVM index for unhashed models
 * (1-based unless --zero-based), the hashed weight (0 to 2^B - 1) for
 * hashed ones. Its names are the model's names section (--keep-names at
 * training: every name hashed there, collisions included) or, for
 * unhashed models, a names file (--names FILE, "INDEX ... NAME" lines).
 * Crossed features (interactions) have no names of their own: their
 * weights are listed by index only. */
#include "cli/cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The names of a names file, by feature (0-based), or NULL each. */
struct file_names {
    char **name;
    uint64_t n;
};

static void file_names_free(struct file_names *fn)
{
    for (uint64_t i = 0; i < fn->n; i++)
        free(fn->name[i]);
    free(fn->name);
}

/* Lines "INDEX NAME" or "INDEX ... NAME" (the last field is the name, as
 * in news20.vocab: index, df, term); '#' starts a comment line. */
static hog_status file_names_load(const char *path, uint64_t nf,
                                  bool zero_based, struct file_names *fn,
                                  hog_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return hog_errf(err, HOG_EIO, "%s: %s", path, strerror(errno));
    fn->n = nf;
    fn->name = calloc(nf ? nf : 1, sizeof *fn->name);
    char *line = NULL;
    size_t cap = 0;
    uint64_t ln = 0;
    hog_status st = fn->name ? HOG_OK
                             : hog_errf(err, HOG_ENOMEM, "out of memory");
    while (st == HOG_OK && getline(&line, &cap, f) > 0) {
        ln++;
        char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save), *last;
        if (!tok || tok[0] == '#')
            continue;
        uint64_t ix;
        if (!hog_parse_u64(tok, zero_based ? 0 : 1, UINT64_MAX - 1, &ix)) {
            st = hog_errf(err, HOG_EPARSE, "%s:%llu: '%s' is not a feature "
                          "index (%s)", path, (unsigned long long)ln, tok,
                          zero_based ? "0 or more" : "1 or more");
            break;
        }
        last = NULL;
        while ((tok = strtok_r(NULL, " \t\r\n", &save)))
            last = tok;
        ix -= !zero_based;
        if (!last || ix >= nf || fn->name[ix])
            continue; /* past the model's features, or no name */
        if (!(fn->name[ix] = strdup(last)))
            st = hog_errf(err, HOG_ENOMEM, "out of memory");
    }
    if (st == HOG_OK && ferror(f))
        st = hog_errf(err, HOG_EIO, "%s: read failed", path);
    free(line);
    fclose(f);
    return st;
}

/* The listed features: the nonzero ones in order, or the top N by their
 * largest |w| over the classes. */
struct listed {
    uint64_t *j;
    uint64_t n;
};

static double top_w(const hog_model *m, uint64_t j)
{
    uint64_t len = hog_model_vector_len(m), v = hog_model_vectors(m);
    double b = 0;
    for (uint64_t c = 0; c < v; c++) {
        double a = fabs((double)m->w[c * len + j]);
        b = a > b ? a : b;
    }
    return b;
}

struct ranked {
    double w;
    uint64_t j;
};

static int by_top(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->w != y->w)
        return x->w > y->w ? -1 : 1;
    return (x->j > y->j) - (x->j < y->j);
}

static bool list_features(const hog_model *m, uint64_t top,
                          struct listed *l)
{
    uint64_t nf = m->n_features;
    l->n = 0;
    l->j = malloc((nf ? nf : 1) * sizeof *l->j);
    struct ranked *r = top ? malloc((nf ? nf : 1) * sizeof *r) : NULL;
    if (!l->j || (top && !r)) {
        free(r);
        return false;
    }
    for (uint64_t j = 0; j < nf; j++) {
        double w = top_w(m, j);
        if (w == 0.0)
            continue;
        if (r)
            r[l->n] = (struct ranked){ w, j };
        l->j[l->n++] = j;
    }
    if (r) {
        qsort(r, l->n, sizeof *r, by_top);
        l->n = l->n < top ? l->n : top;
        for (uint64_t i = 0; i < l->n; i++)
            l->j[i] = r[i].j;
        free(r);
    }
    return true;
}

/* A name of the model's names section as a C string (in buf, cut at
 * len - 1 bytes). */
static const char *names_entry(const struct hog_names *nm, uint64_t e,
                               char *buf, size_t len)
{
    uint64_t n = nm->off[e + 1] - nm->off[e];
    n = n < len - 1 ? n : len - 1;
    memcpy(buf, nm->text + nm->off[e], n);
    buf[n] = '\0';
    return buf;
}

static uint64_t shown_index(const hog_model *m, uint64_t j, bool zero_based)
{
    return j + (!m->hash_bits && !zero_based);
}

static void print_text(const hog_model *m, const char *path,
                       const struct listed *l, const struct file_names *fn,
                       bool zero_based)
{
    uint64_t len = hog_model_vector_len(m), v = hog_model_vectors(m);
    char b[4096];
    printf("# %s: %s loss, %llu features", path,
           hog_cli_loss_name(m->loss), (unsigned long long)m->n_features);
    if (m->hash_bits)
        printf(", --hash-bits %u --hash-seed %u", m->hash_bits, m->hash_seed);
    if (m->cross.n)
        printf(", --interactions %s (crossed features by index only)",
               m->cross_spec);
    fputs("\n# index", stdout);
    for (uint64_t c = 0; c < v; c++) {
        if (m->n_classes)
            printf("\tclass %s", hog_cli_label(b, sizeof b, m->classes[c]));
        else
            fputs("\tweight", stdout);
    }
    fputs(m->names || fn->name ? "\tnames\n" : "\n", stdout);
    for (uint64_t i = 0; i < l->n; i++) {
        uint64_t j = l->j[i];
        printf("%llu", (unsigned long long)shown_index(m, j, zero_based));
        for (uint64_t c = 0; c < v; c++)
            printf("\t%.9g", (double)m->w[c * len + j]);
        if (m->names) {
            uint64_t lo, hi;
            hog_names_range(m->names, j, &lo, &hi);
            putchar('\t');
            for (uint64_t e = lo; e < hi; e++)
                printf("%s%s", e > lo ? " " : "",
                       names_entry(m->names, e, b, sizeof b));
        } else if (fn->name) {
            printf("\t%s", fn->name[j] ? fn->name[j] : "");
        }
        putchar('\n');
    }
    if (m->bias != 0.0) {
        fputs("bias", stdout);
        for (uint64_t c = 0; c < v; c++)
            printf("\t%.9g", (double)m->w[c * len + m->n_features]);
        printf("%s\n", m->names || fn->name ? "\t" : "");
    }
}

static void print_json(const hog_model *m, const char *path,
                       const struct listed *l, const struct file_names *fn,
                       bool zero_based)
{
    uint64_t len = hog_model_vector_len(m), v = hog_model_vectors(m);
    struct hog_json j;
    char b[4096];
    hog_json_begin(&j, stdout);
    hog_json_str(&j, "model", path);
    hog_json_str(&j, "loss", hog_cli_loss_name(m->loss));
    hog_json_u64(&j, "features", m->n_features);
    if (m->hash_bits) {
        hog_json_obj(&j, "hashing");
        hog_json_u64(&j, "bits", m->hash_bits);
        hog_json_u64(&j, "seed", m->hash_seed);
        hog_json_close_obj(&j);
    } else {
        hog_json_null(&j, "hashing");
    }
    hog_json_str(&j, "interactions", m->cross.n ? m->cross_spec : NULL);
    hog_json_str(&j, "index_base", m->hash_bits || zero_based ? "0" : "1");
    if (m->n_classes) {
        hog_json_arr(&j, "classes");
        for (uint32_t c = 0; c < m->n_classes; c++)
            hog_json_num(&j, NULL, m->classes[c]);
        hog_json_close_arr(&j);
        hog_json_str(&j, "multiclass",
                     m->multiclass == HOG_MULTICLASS_SOFTMAX ? "softmax"
                                                             : "ovr");
    } else {
        hog_json_null(&j, "classes");
    }
    hog_json_arr(&j, "index");
    for (uint64_t i = 0; i < l->n; i++)
        hog_json_u64(&j, NULL, shown_index(m, l->j[i], zero_based));
    hog_json_close_arr(&j);
    if (m->names || fn->name) {
        hog_json_arr(&j, "names"); /* one list per feature: collisions */
        for (uint64_t i = 0; i < l->n; i++) {
            hog_json_arr(&j, NULL);
            uint64_t lo = 0, hi = 0;
            if (m->names)
                hog_names_range(m->names, l->j[i], &lo, &hi);
            for (uint64_t e = lo; e < hi; e++)
                hog_json_str(&j, NULL, names_entry(m->names, e, b, sizeof b));
            if (!m->names && fn->name[l->j[i]])
                hog_json_str(&j, NULL, fn->name[l->j[i]]);
            hog_json_close_arr(&j);
        }
        hog_json_close_arr(&j);
    } else {
        hog_json_null(&j, "names");
    }
    /* one array per class (K classes), else one */
    hog_json_arr(&j, "weights");
    for (uint64_t c = 0; c < v; c++) {
        if (m->n_classes)
            hog_json_arr(&j, NULL);
        for (uint64_t i = 0; i < l->n; i++)
            hog_json_num(&j, NULL, (double)m->w[c * len + l->j[i]]);
        if (m->n_classes)
            hog_json_close_arr(&j);
    }
    hog_json_close_arr(&j);
    if (m->bias != 0.0) {
        hog_json_obj(&j, "bias");
        hog_json_num(&j, "value", m->bias);
        if (m->n_classes)
            hog_json_arr(&j, "weights");
        for (uint64_t c = 0; c < v; c++)
            hog_json_num(&j, m->n_classes ? NULL : "weight",
                         (double)m->w[c * len + m->n_features]);
        if (m->n_classes)
            hog_json_close_arr(&j);
        hog_json_close_obj(&j);
    } else {
        hog_json_null(&j, "bias");
    }
    hog_json_end(&j);
}

int hog_cli_info_weights(const char *path, const struct hog_cli_weights *o)
{
    hog_err err = { { 0 } };
    hog_model *m = NULL;
    hog_status s = hog_model_load(path, &m, &err);
    if (s != HOG_OK)
        return hog_cli_fail_status(s, &err);
    struct file_names fn = { NULL, 0 };
    struct listed l = { NULL, 0 };
    if (o->names && m->hash_bits)
        s = hog_errf(&err, HOG_EINVAL, "%s: --names %s names LIBSVM "
                     "indices, but the model's features are hashed (train "
                     "with --keep-names to keep their names)", path,
                     o->names);
    else if (o->names)
        s = file_names_load(o->names, m->n_features, o->zero_based, &fn,
                            &err);
    if (s == HOG_OK && !list_features(m, o->top, &l))
        s = hog_errf(&err, HOG_ENOMEM, "out of memory");
    if (s == HOG_OK && o->json)
        print_json(m, path, &l, &fn, o->zero_based);
    else if (s == HOG_OK)
        print_text(m, path, &l, &fn, o->zero_based);
    free(l.j);
    file_names_free(&fn);
    hog_model_free(m);
    return s == HOG_OK ? HOG_EXIT_OK : hog_cli_fail_status(s, &err);
}
