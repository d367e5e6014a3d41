/* decimal.c - JSON numbers as int64 and double, nothing silently changed:
 * an integer that overflows or a double that rounds to infinity or
 * underflows is out of range, never clamped. */
#ifdef BRS_HAVE_STRTOD_L
#define _GNU_SOURCE /* strtod_l and newlocale */
#include <locale.h>
#endif
#include "formats/internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

brs_decimal_result brs_decimal_int64(const char *text, size_t length, int64_t *out)
{
    size_t i = length > 0 && text[0] == '-';
    int negative = (int)i;
    if (i == length) return BRS_DECIMAL_SYNTAX;
    uint64_t magnitude = 0, limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    int overflow = 0;
    for (; i < length; i++) {
        if (!is_digit(text[i])) return BRS_DECIMAL_SYNTAX;
        uint64_t digit = (uint64_t)(text[i] - '0');
        if (magnitude > (limit - digit) / 10)
            overflow = 1; /* keep scanning: "1e999"-like text is still not an integer */
        else
            magnitude = magnitude * 10 + digit;
    }
    if (overflow) return BRS_DECIMAL_RANGE;
    /* Negate in unsigned arithmetic: -INT64_MIN overflows int64_t. */
    *out = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
    return BRS_DECIMAL_OK;
}

/* Whether a digit of the mantissa (before any exponent) is nonzero. */
static int nonzero_mantissa(const char *text, size_t length)
{
    for (size_t i = 0; i < length && text[i] != 'e' && text[i] != 'E'; i++)
        if (text[i] >= '1' && text[i] <= '9') return 1;
    return 0;
}

/* strtod reads the decimal point of the current locale: a host program that
 * set LC_NUMERIC to de_DE would read "0.5" as 0. The "C" locale reads JSON. */
static double c_locale_strtod(const char *text)
{
#ifdef BRS_HAVE_STRTOD_L
    locale_t c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (c_locale != (locale_t)0) {
        double value = strtod_l(text, NULL, c_locale);
        freelocale(c_locale);
        return value;
    }
#endif
    return strtod(text, NULL);
}

brs_decimal_result brs_decimal_double(const char *text, size_t length, double *out)
{
    char *copy = malloc(length + 1); /* strtod needs a terminator */
    if (copy == NULL) return BRS_DECIMAL_RANGE;
    memcpy(copy, text, length);
    copy[length] = '\0';
    double value = c_locale_strtod(copy);
    free(copy);
    if (!isfinite(value) || (nonzero_mantissa(text, length) && fabs(value) < DBL_MIN))
        return BRS_DECIMAL_RANGE;
    *out = value;
    return BRS_DECIMAL_OK;
}
