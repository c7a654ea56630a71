/*
 * Numbers in data text, for the parsers of every text format (parse_svm.c,
 * parse_vw.c): a decimal mantissa of up to 19 significant digits and a
 * power of ten 10^e. When the mantissa is at most 2^53 and |e| <= 22
 * (Clinger's fast path), m * 10^e for e >= 0 is one correctly rounded IEEE
 * multiplication; for e < 0, m * (10^-k rounded) lands within 2 double
 * ulps of the exact value, which rounds to the same float unless it is
 * within a few ulps of a point halfway between two floats: then the
 * correctly rounded division m / 10^k is used. Rounding a correctly
 * rounded double to float equals rounding the exact decimal unless the
 * double sits exactly halfway; that case, subnormal or overflowing values
 * and every other shape (over 19 digits, larger exponents) go to strtof.
 * Values and labels are thus stored as float, rounded once from the exact
 * decimal, bit-identical to strtof. Private to src/io/.
 */
#ifndef HOG_IO_PARSE_NUM_H
#define HOG_IO_PARSE_NUM_H

#include "core/core.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const double pow10_tab[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static inline bool is_digit(char c) { return (unsigned char)(c - '0') < 10; }
static inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
/* What may follow a number: a blank, the newline, and '#' in LIBSVM text
 * (a comment) or '|' in Vowpal Wabbit text (the next namespace). The
 * callers pass vw as a constant, so each format's parser gets its own
 * comparisons inlined. */
static ALWAYS_INLINE bool num_delim(char c, bool vw)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' ||
           c == (vw ? '|' : '#');
}
enum num_res { NUM_OK = 0, NUM_BAD, NUM_NAN, NUM_INF, NUM_RANGE };

/* strtof on a copy of the token [p, q): the slow, always-right path. */
static __attribute__((unused)) enum num_res
slow_float(const char *p, const char *q, float *out)
{
    char small[64];
    size_t n = (size_t)(q - p);
    char *s = n < sizeof small ? small : malloc(n + 1);
    if (!s)
        return NUM_BAD;
    memcpy(s, p, n);
    s[n] = 0;
    char *e;
    errno = 0;
    float f = strtof(s, &e);
    bool whole = e == s + n;
    if (s != small)
        free(s);
    if (!whole)
        return NUM_BAD;
    if (isnan(f))
        return NUM_NAN;
    if (isinf(f))
        return NUM_RANGE; /* a finite decimal too large for float */
    *out = f;
    return NUM_OK;
}

/* Case-insensitive "nan" / "inf" / "infinity" with an optional sign. */
static __attribute__((unused)) enum num_res
classify_word(const char *p, bool vw)
{
    if (*p == '+' || *p == '-')
        p++;
    const char *q = p;
    while (!num_delim(*q, vw) && *q != ':' && *q != '\0')
        q++;
    size_t n = (size_t)(q - p);
    if (n == 3 && strncasecmp(p, "nan", 3) == 0)
        return NUM_NAN;
    if ((n == 3 && strncasecmp(p, "inf", 3) == 0) ||
        (n == 8 && strncasecmp(p, "infinity", 8) == 0))
        return NUM_INF;
    if (n > 3 && strncasecmp(p, "nan(", 4) == 0)
        return NUM_NAN;
    return NUM_BAD;
}

/* 10^-k rounded to double, for the multiplication fast path. */
static const double inv_pow10_tab[23] = {
    1e0,   1e-1,  1e-2,  1e-3,  1e-4,  1e-5,  1e-6,  1e-7,  1e-8,  1e-9,  1e-10, 1e-11,
    1e-12, 1e-13, 1e-14, 1e-15, 1e-16, 1e-17, 1e-18, 1e-19, 1e-20, 1e-21, 1e-22,
};

/* Distance of a double's 29 low mantissa bits from 1 << 28, the pattern of
 * a value exactly halfway between two adjacent floats of its binade. */
static inline uint32_t from_half(double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    uint32_t low = (uint32_t)(bits & 0x1FFFFFFFu);
    return low > 0x10000000u ? low - 0x10000000u : 0x10000000u - low;
}

/* Parses a decimal number at *pp into *out; on success *pp is just past it
 * and the next byte is a delimiter. */
static ALWAYS_INLINE enum num_res
parse_float(const char **pp, float *out, bool vw)
{
    const char *p = *pp, *start = p;
    bool neg = false;
    if (*p == '-')
        neg = true, p++;
    else if (*p == '+')
        p++;
    uint64_t m = 0;
    int e10 = 0;
    bool lost = false; /* non-zero digits beyond the 19th significant one */
    const char *ip = p;
    while (is_digit(*p))
        p++;
    const char *ie = p, *fp = p, *fe = p;
    if (*p == '.') {
        fp = ++p;
        while (is_digit(*p))
            p++;
        fe = p;
    }
    if (HOG_UNLIKELY(ie == ip && fe == fp))
        return classify_word(start, vw);
    if (HOG_LIKELY((ie - ip) + (fe - fp) <= 19)) {
        /* Common case: at most 19 digits in all, no overflow possible. */
        for (const char *q = ip; q < ie; q++)
            m = m * 10 + (uint64_t)(*q - '0');
        for (const char *q = fp; q < fe; q++)
            m = m * 10 + (uint64_t)(*q - '0');
        e10 = -(int)(fe - fp);
    } else {
        int nd = 0; /* significant digits kept */
        for (const char *q = ip; q < ie; q++) {
            if (nd < 19) {
                m = m * 10 + (uint64_t)(*q - '0');
                nd += m != 0;
            } else {
                e10++;
                lost |= *q != '0';
            }
        }
        for (const char *q = fp; q < fe; q++) {
            if (nd < 19) {
                m = m * 10 + (uint64_t)(*q - '0');
                nd += m != 0;
                e10--;
            } else {
                lost |= *q != '0';
            }
        }
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        bool eneg = false;
        if (*p == '-')
            eneg = true, p++;
        else if (*p == '+')
            p++;
        if (!is_digit(*p))
            return NUM_BAD;
        int x = 0;
        for (; is_digit(*p); p++)
            if (x < 100000)
                x = x * 10 + (*p - '0');
        e10 += eneg ? -x : x;
    }
    if (HOG_UNLIKELY(!num_delim(*p, vw)))
        return NUM_BAD;
    *pp = p;
    if (m == 0 && !lost) {
        *out = neg ? -0.0f : 0.0f;
        return NUM_OK;
    }
    if (HOG_LIKELY(!lost && m <= (UINT64_C(1) << 53) && e10 >= -22 &&
                   e10 <= 22)) {
        double dm = (double)m, d;
        if (e10 >= 0) {
            d = dm * pow10_tab[e10]; /* exact operands: correctly rounded */
        } else {
            /* m * 10^-k is within 2 double ulps of the exact value, so it
             * rounds to the same float unless it lies within a few ulps of
             * a halfway point; then divide, which is correctly rounded. */
            d = dm * inv_pow10_tab[-e10];
            if (HOG_UNLIKELY(from_half(d) <= 8))
                d = dm / pow10_tab[-e10];
        }
        /* A correctly rounded double exactly halfway between two floats,
         * or one outside the normal float range: let strtof round. */
        if (HOG_LIKELY(from_half(d) != 0 && d >= (double)FLT_MIN &&
                       d <= (double)FLT_MAX)) {
            *out = neg ? -(float)d : (float)d;
            return NUM_OK;
        }
    }
    return slow_float(start, p, out);
}

#endif
