/*
 * strict_number.h - decimal numbers as a person writes them, nothing else:
 * no leading or trailing blanks, no '+', no hexadecimal, no "nan"/"inf".
 * strtoll and strtod alone accept all of those (" 1", "0x10", "inf").
 */
#ifndef BRS_CLI_STRICT_NUMBER_H
#define BRS_CLI_STRICT_NUMBER_H

#include <stdint.h>

typedef enum strict_result {
    STRICT_OK = 0,
    STRICT_SYNTAX = -1,  /* not a decimal number */
    STRICT_RANGE = -2    /* a decimal number the type cannot hold */
} strict_result;

/* -?[0-9]+ */
strict_result strict_int64(const char *text, int64_t *out);

/* [0-9]+ */
strict_result strict_uint64(const char *text, uint64_t *out);

/* -?([0-9]+(.[0-9]*)?|.[0-9]+)([eE][-+]?[0-9]+)?, finite; a value that
 * would round to infinity, or to zero or a subnormal from a nonzero text,
 * is STRICT_RANGE. */
strict_result strict_double(const char *text, double *out);

#endif
