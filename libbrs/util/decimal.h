/* util/decimal.h - the value of a JSON number's text (decimal.c). Internal, not installed. */
#ifndef BRS_UTIL_DECIMAL_H
#define BRS_UTIL_DECIMAL_H

#include <stddef.h>
#include <stdint.h>

typedef enum brs_decimal_result {
    BRS_DECIMAL_OK = 0,
    BRS_DECIMAL_SYNTAX = -1, /* not an integer (a fraction or an exponent) */
    BRS_DECIMAL_RANGE = -2   /* a number the type cannot hold */
} brs_decimal_result;

/* text[0..length) is a number of JSON's grammar (brs_json_object_each has
 * checked it). As an int64: -?[0-9]+ only, so "1.0" and "1e3" are
 * BRS_DECIMAL_SYNTAX. */
brs_decimal_result brs_decimal_int64(const char *text, size_t length, int64_t *out);

/* As a finite double, read the same in every locale; a value that rounds to
 * infinity, or to zero or a subnormal from nonzero digits, is
 * BRS_DECIMAL_RANGE (so is a copy that cannot be allocated). */
brs_decimal_result brs_decimal_double(const char *text, size_t length, double *out);

#endif
