/* strict_number.c - check the grammar first, then convert. */
#include "strict_number.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static const char *skip_digits(const char *c)
{
    while (is_digit(*c))
        c++;
    return c;
}

strict_result strict_uint64(const char *text, uint64_t *out)
{
    if (!is_digit(text[0]))
        return STRICT_SYNTAX;
    uint64_t value = 0;
    const char *c = text;
    for (; is_digit(*c); c++) {
        uint64_t digit = (uint64_t)(*c - '0');
        if (value > (UINT64_MAX - digit) / 10)
            return *skip_digits(c) == '\0' ? STRICT_RANGE : STRICT_SYNTAX;
        value = value * 10 + digit;
    }
    if (*c != '\0')
        return STRICT_SYNTAX;
    *out = value;
    return STRICT_OK;
}

strict_result strict_int64(const char *text, int64_t *out)
{
    int negative = text[0] == '-';
    uint64_t magnitude;
    strict_result result = strict_uint64(text + negative, &magnitude);
    if (result != STRICT_OK)
        return result;
    uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    if (magnitude > limit)
        return STRICT_RANGE;
    /* Negate in unsigned arithmetic: -INT64_MIN overflows int64_t. */
    *out = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
    return STRICT_OK;
}

/* Whether text is a decimal number, and whether any digit is nonzero. */
static int decimal_grammar(const char *text, int *nonzero)
{
    const char *c = text + (text[0] == '-');
    const char *start = c;
    *nonzero = 0;
    for (; is_digit(*c) || *c == '.'; c++) {
        if (*c == '.' && (c != skip_digits(start)))
            return 0; /* a second point */
        *nonzero |= *c >= '1' && *c <= '9';
    }
    if (c == start || (c - start == 1 && *start == '.'))
        return 0; /* no digit in the mantissa */
    if (*c == 'e' || *c == 'E') {
        c++;
        c += *c == '-' || *c == '+';
        if (!is_digit(*c))
            return 0;
        c = skip_digits(c);
    }
    return *c == '\0';
}

strict_result strict_double(const char *text, double *out)
{
    int nonzero;
    if (!decimal_grammar(text, &nonzero))
        return STRICT_SYNTAX;
    double value = strtod(text, NULL);
    if (!isfinite(value) || (nonzero && fabs(value) < DBL_MIN))
        return STRICT_RANGE;
    *out = value;
    return STRICT_OK;
}
