/*
 * Row-weight files, LIBLINEAR's instance-weight convention: one weight per
 * line, line i for training row i, each a finite number >= 0 (surrounding
 * blanks and a CR before the newline allowed; the last line's newline
 * optional). Nothing else: no comments, no empty lines, so that a weight
 * can never silently move to another row. A bad line is an error naming
 * file and line; a file with another count of lines than the data has
 * rows is one naming both counts.
 */
#include "io/io.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The weight on line s (its newline removed), or a reason in why. */
static bool parse_weight(char *s, float *out, const char **why)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (!*s) {
        *why = "an empty line (the file has one weight per training row, "
               "one per line)";
        return false;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    while (*end == ' ' || *end == '\t')
        end++;
    if (end == s || *end) {
        *why = "not a number";
        return false;
    }
    if (!isfinite(v) || (errno == ERANGE && fabs(v) > 1.0) || v > FLT_MAX) {
        *why = "not a finite number a float holds";
        return false;
    }
    if (v < 0) {
        *why = "a negative weight (weights are >= 0)";
        return false;
    }
    *out = (float)v;
    return true;
}

hog_status hog_weights_load(const char *path, uint64_t rows, float **out,
                            hog_err *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return hog_errf(err, HOG_EIO, "%s: cannot open the weights file: %s",
                        path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || S_ISDIR(st.st_mode)) {
        fclose(f);
        return hog_errf(err, HOG_EIO, "%s: not a weights file (a folder?)",
                        path);
    }
    float *w = malloc((rows ? rows : 1) * sizeof *w);
    if (!w) {
        fclose(f);
        return hog_errf(err, HOG_ENOMEM, "out of memory for %llu row "
                        "weights", (unsigned long long)rows);
    }
    char *line = NULL;
    size_t cap = 0;
    uint64_t lines = 0;
    hog_status rc = HOG_OK;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) >= 0) {
        lines++;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = 0;
        if (memchr(line, 0, (size_t)n)) {
            rc = hog_errf(err, HOG_EPARSE, "%s:%llu: a NUL byte: not a "
                          "weights file (one number per line)", path,
                          (unsigned long long)lines);
            break;
        }
        float v;
        const char *why;
        if (!parse_weight(line, &v, &why)) {
            rc = hog_errf(err, HOG_EPARSE, "%s:%llu: '%.40s%s' is %s", path,
                          (unsigned long long)lines, line,
                          strlen(line) > 40 ? "..." : "", why);
            break;
        }
        if (lines <= rows)
            w[lines - 1] = v;
    }
    if (rc == HOG_OK && ferror(f))
        rc = hog_errf(err, HOG_EIO, "%s: read failed after line %llu: %s",
                      path, (unsigned long long)lines, strerror(errno));
    if (rc == HOG_OK && lines != rows)
        rc = hog_errf(err, HOG_EINVAL,
                      "%s has %llu weight%s (one per line) but the training "
                      "data has %llu row%s: one weight per row, in the "
                      "data's order", path, (unsigned long long)lines,
                      lines == 1 ? "" : "s", (unsigned long long)rows,
                      rows == 1 ? "" : "s");
    free(line);
    fclose(f);
    if (rc != HOG_OK) {
        free(w);
        return rc;
    }
    *out = w;
    return HOG_OK;
}
