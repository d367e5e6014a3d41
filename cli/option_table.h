/*
 * option_table.h - the library's options as command-line flags.
 *
 * Everything here is read from the library at run time (brs_option_*):
 * names, types, bounds, named values, defaults and help. The flag of option
 * "batch_size" is "--batch-size". How a value is written follows from the
 * option itself: a double option takes a decimal number, an option with
 * named values takes a name ("--strategy random") or its number, an integer
 * option with bounds [0, 1] and no names is a switch pair ("--packed",
 * "--no-packed"), and any other integer option takes a decimal integer.
 */
#ifndef BRS_CLI_OPTION_TABLE_H
#define BRS_CLI_OPTION_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include <brs.h>

#define OPTION_TABLE_MAX 64
#define OPTION_FLAG_MAX 48

typedef enum option_form {
    OPTION_FORM_INT,    /* --name N */
    OPTION_FORM_DOUBLE, /* --name X */
    OPTION_FORM_NAMED,  /* --name VALUE_NAME or --name N */
    OPTION_FORM_SWITCH  /* --name (1) and --no-name (0) */
} option_form;

typedef struct library_option {
    brs_option key;
    const char *name;              /* the library's, e.g. "batch_size" */
    char flag[OPTION_FLAG_MAX];    /* "--batch-size" */
    char negated[OPTION_FLAG_MAX]; /* "--no-shuffle" for a switch, else "" */
    option_form form;
    int64_t lower, upper;          /* integer forms */
    double lower_double, upper_double;
} library_option;

/* The library's options in its order, read on the first call. Returns 0 and
 * sets *table and *count, or a status with a message in error. */
int option_table_get(const library_option **table, size_t *count, char *error, size_t error_size);

/* The entry of `key`, or NULL (also when the table cannot be read). */
const library_option *option_table_find(brs_option key);

/* The flag that sets `key` ("--max-tokens"), or "" if the library has none. */
const char *option_table_flag(brs_option key);

/* Value `value` of a named option by the library's name ("random"), or
 * NULL when it has no name. */
const char *option_table_value_name(const library_option *option, int64_t value);

#endif
