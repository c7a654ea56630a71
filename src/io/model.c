/*
 * Model files: hog_model_save() and hog_model_load(), the format chosen by
 * the caller or read from the file's first bytes: hogtrain's binary .hgm
 * (model_hgm.c, which opens with its layout) or LIBLINEAR's text model
 * (model_liblinear.c). Both are written through outfile.c, under a
 * temporary name renamed into place.
 */
#include "io/model_format.h"

#include <sys/stat.h>

hog_status hog_model_save(const hog_model *m, const char *path,
                          hog_model_format fmt, hog_err *err)
{
    if (!m || !path)
        return hog_errf(err, HOG_EINVAL, "hog_model_save: no model or no path");
    if (fmt != HOG_MODEL_HGM && fmt != HOG_MODEL_LIBLINEAR)
        return hog_errf(err, HOG_EINVAL, "%s: unknown model format %d", path,
                        (int)fmt);
    if (m->n_classes && (m->n_classes < 3 || !m->classes))
        return hog_errf(err, HOG_EINVAL, "%s: a model of %u classes: K-class "
                        "models have 3 or more (two are a binary model)",
                        path, m->n_classes);
    hog_outfile o;
    hog_status s = hog_outfile_open(&o, path, err);
    if (s != HOG_OK)
        return s;
    if (fmt == HOG_MODEL_LIBLINEAR) {
        setvbuf(o.f, NULL, _IOFBF, 1 << 20);
        s = hog_liblinear_save(m, o.f, path, err);
    } else {
        s = hog_hgm_save(m, o.f, path, err);
    }
    if (s != HOG_OK) {
        hog_outfile_abort(&o);
        return s;
    }
    return hog_outfile_commit(&o, err);
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
        s = hog_hgm_load(f, path, (uint64_t)st.st_size, out, err);
    else if (got >= 11 && !memcmp(head, "solver_type", 11))
        s = hog_liblinear_load(f, path, (uint64_t)st.st_size, out, err);
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
