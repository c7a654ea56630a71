/*
 * Row-weight files, LIBLINEAR's instance-weight convention: one weight per
 * line, line i for training row i, each a finite number >= 0 (surrounding
 * blanks and a CR before the newline allowed; the last line's newline
 * optional). Nothing else: no comments, no empty lines, so that a weight
 * can never silently move to another row. A bad line is an error naming
 * file and line; a file with another count of lines than the data has
 * rows is one naming both counts.
 *
 * A line is read a byte at a time up to a bound no weight comes near, and
 * a NUL byte ends the reading where it is: /dev/zero or a binary file
 * given by mistake is refused at once, not read until memory runs out.
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

/* The longest line a weights file may have: a number and its blanks. */
#define LINE_MAX_BYTES 4096

enum line_end { LINE_OK, LINE_EOF, LINE_NUL, LINE_LONG };

/* The next line of f into buf (cap bytes, NUL-terminated, its newline
 * dropped); LINE_EOF when nothing is left, LINE_NUL at a NUL byte and
 * LINE_LONG past cap - 1 bytes, both without reading further. */
static enum line_end read_line(FILE *f, char *buf, size_t cap, size_t *len)
{
    size_t n = 0;
    int c;
    while ((c = getc_unlocked(f)) != EOF && c != '\n') {
        if (c == 0)
            return LINE_NUL;
        if (n + 1 == cap)
            return LINE_LONG;
        buf[n++] = (char)c;
    }
    buf[n] = 0;
    *len = n;
    return c == EOF && n == 0 ? LINE_EOF : LINE_OK;
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
    char line[LINE_MAX_BYTES];
    uint64_t lines = 0;
    hog_status rc = HOG_OK;
    size_t n;
    enum line_end e;
    while ((e = read_line(f, line, sizeof line, &n)) != LINE_EOF) {
        lines++;
        if (e == LINE_NUL) {
            rc = hog_errf(err, HOG_EPARSE, "%s:%llu: a NUL byte: not a "
                          "weights file (one number per line)", path,
                          (unsigned long long)lines);
            break;
        }
        if (e == LINE_LONG) {
            rc = hog_errf(err, HOG_EPARSE, "%s:%llu: a line longer than %d "
                          "bytes: not a weights file (one number per line)",
                          path, (unsigned long long)lines, LINE_MAX_BYTES - 1);
            break;
        }
        while (n > 0 && line[n - 1] == '\r')
            line[--n] = 0;
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
    fclose(f);
    if (rc != HOG_OK) {
        free(w);
        return rc;
    }
    *out = w;
    return HOG_OK;
}
