/* A small streaming JSON writer: enough for the training report, and strict
 * about what it emits (escaped strings, valid UTF-8, null for NaN). */
#include "cli/cli.h"

#include <inttypes.h>
#include <math.h>

static void indent(struct hog_json *j)
{
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
}

/* Length of the valid UTF-8 sequence at s, or 0 when it is not one. */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    int n;
    unsigned min;
    if (c < 0x80)
        return 1;
    if ((c & 0xE0) == 0xC0)
        n = 2, min = 0x80, c &= 0x1F;
    else if ((c & 0xF0) == 0xE0)
        n = 3, min = 0x800, c &= 0x0F;
    else if ((c & 0xF8) == 0xF0)
        n = 4, min = 0x10000, c &= 0x07;
    else
        return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0; /* overlong, out of range, or a surrogate */
    return n;
}

static void put_string(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', f);
    while (*s) {
        unsigned c = *s;
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc((int)c, f);
            s++;
        } else if (c < 0x20) {
            switch (c) {
            case '\n': fputs("\\n", f); break;
            case '\t': fputs("\\t", f); break;
            case '\r': fputs("\\r", f); break;
            default: fprintf(f, "\\u%04x", c); break;
            }
            s++;
        } else {
            int n = utf8_len(s);
            if (n == 0) {
                fputs("\\ufffd", f);
                s++;
            } else {
                fwrite(s, 1, (size_t)n, f);
                s += n;
            }
        }
    }
    fputc('"', f);
}

/* Comma, newline and key before a value. */
static void item(struct hog_json *j, const char *key)
{
    if (j->need_comma)
        fputc(',', j->f);
    if (j->depth > 0)
        indent(j);
    if (key) {
        put_string(j->f, key);
        fputs(": ", j->f);
    }
    j->need_comma = true;
}

void hog_json_begin(struct hog_json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->need_comma = false;
    fputc('{', f);
    j->depth = 1;
}

void hog_json_end(struct hog_json *j)
{
    j->depth = 0;
    fputs("\n}\n", j->f);
}

void hog_json_obj(struct hog_json *j, const char *key)
{
    item(j, key);
    fputc('{', j->f);
    j->depth++;
    j->need_comma = false;
}

void hog_json_arr(struct hog_json *j, const char *key)
{
    item(j, key);
    fputc('[', j->f);
    j->depth++;
    j->need_comma = false;
}

static void close_with(struct hog_json *j, char c)
{
    bool empty = !j->need_comma;
    j->depth--;
    if (!empty)
        indent(j);
    fputc(c, j->f);
    j->need_comma = true;
}

void hog_json_close_obj(struct hog_json *j) { close_with(j, '}'); }
void hog_json_close_arr(struct hog_json *j) { close_with(j, ']'); }

void hog_json_str(struct hog_json *j, const char *key, const char *v)
{
    item(j, key);
    if (v)
        put_string(j->f, v);
    else
        fputs("null", j->f);
}

void hog_json_num(struct hog_json *j, const char *key, double v)
{
    item(j, key);
    if (isfinite(v))
        fprintf(j->f, "%.10g", v);
    else
        fputs("null", j->f);
}

void hog_json_u64(struct hog_json *j, const char *key, uint64_t v)
{
    item(j, key);
    fprintf(j->f, "%" PRIu64, v);
}

void hog_json_bool(struct hog_json *j, const char *key, bool v)
{
    item(j, key);
    fputs(v ? "true" : "false", j->f);
}

void hog_json_null(struct hog_json *j, const char *key)
{
    item(j, key);
    fputs("null", j->f);
}
