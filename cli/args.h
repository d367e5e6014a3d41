/* args.h - args.c: a command's arguments, read into a cli_config, and the
 * library's options as command-line flags. */
#ifndef BRS_CLI_ARGS_H
#define BRS_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include <brs.h>

/*
 * Decimal numbers as a person writes them, nothing else:
 * no leading or trailing blanks, no '+', no hexadecimal, no "nan"/"inf".
 * strtoll and strtod alone accept all of those (" 1", "0x10", "inf").
 */

typedef enum strict_result {
    STRICT_OK = 0,
    STRICT_SYNTAX = -1, /* not a decimal number */
    STRICT_RANGE = -2   /* a decimal number the type cannot hold */
} strict_result;

/* -?[0-9]+ */
strict_result strict_int64(const char *text, int64_t *out);

/* [0-9]+ */
strict_result strict_uint64(const char *text, uint64_t *out);

/* -?([0-9]+(.[0-9]*)?|.[0-9]+)([eE][-+]?[0-9]+)?, finite; a value that
 * would round to infinity, or to zero or a subnormal from a nonzero text,
 * is STRICT_RANGE. */
strict_result strict_double(const char *text, double *out);

/*
 * The library's options as command-line flags.
 *
 * Everything here is read from the library at run time (brs_option_*):
 * names, types, bounds, named values, defaults and help. The flag of option
 * "batch_size" is "--batch-size". How a value is written follows from the
 * option itself: a double option takes a decimal number, an option with
 * named values takes a name ("--strategy random") or its number, an integer
 * option with bounds [0, 1] and no names is a switch pair ("--packed",
 * "--no-packed"), and any other integer option takes a decimal integer.
 */

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
    int64_t lower, upper; /* integer forms */
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

/*
 * The settings of one `brs` invocation, as parsed from argv.
 *
 * Only what the user gave is kept: an option that is not set keeps the
 * library's default, so no default is restated here. Range checks are left
 * to the library, whose bounds and messages are the contract, so the command
 * line and every binding reject the same inputs.
 */

/* One library option and where its value came from, for messages:
 * "--alpha" or "\"alpha\" in model.json". */
typedef struct option_setting {
    brs_option key;
    int64_t int_value;
    double double_value;
    char source[160];
} option_setting;

typedef struct cli_config {
    const char *lengths_path;    /* --lengths FILE, "-" for standard input, NULL if absent */
    const char *cost_model_path; /* --cost-model FILE, NULL if absent */
    const char *length_buckets;  /* --length-buckets LIST|FILE|auto, NULL if absent */
    const char *output_path;     /* -o/--output FILE, NULL: standard output */
    uint64_t epoch;              /* --epoch, 0 if absent */
    int has_step;                /* --step given */
    uint64_t step;
    double seconds_per_unit;    /* seconds of one cost unit, from --cost-model; 0: unknown */
    double first_shape_seconds; /* the first run of a new shape, from --cost-model; 0: unknown */
    int cap_marks_rows;         /* compare: a --max-tokens brs cannot keep marks its row
                                 * instead of ending the command */
    option_setting settings[OPTION_TABLE_MAX]; /* at most one per key */
    size_t setting_count;
    int help; /* --help given: print usage, ignore the rest */
} cli_config;

/* The setting of `key`, or NULL if it was not given. */
const option_setting *cli_config_find(const cli_config *config, brs_option key);

/* Add a setting; returns it, or NULL if `key` is already set or the table
 * is full. */
option_setting *cli_config_add(cli_config *config, brs_option key, const char *source);

/*
 * Turn a command's arguments into a cli_config.
 *
 * Flags are "--name VALUE" or "--name=VALUE" ("-o FILE" for --output);
 * switches take no value. The library's options come from its table (see the
 * option table above); the command's own flags are --lengths, --cost-model,
 * --length-buckets, --output, --epoch and --step. Every number is strict
 * decimal (see the strict numbers above). A flag given twice, or a switch
 * with its opposite, is an error, not "the last one wins". --help (or -h)
 * stops parsing and sets config.help. Anything else unknown is bad input.
 */

/* Which flags a command accepts. */
typedef enum options_set {
    OPTIONS_PLAN,     /* every dataset, configuration and narrowing flag */
    OPTIONS_COMPARE,  /* those of plan, less the library options it measures every value of */
    OPTIONS_HELP_ONLY /* only --help (the demo) */
} options_set;

/* Why a command does not take library option `key` (its message when the
 * flag is given, e.g. "compare measures every rank"), or NULL if it takes
 * it. --help lists only the options a command takes. */
const char *options_not_taken(options_set accepted, brs_option key);

/* Parse args[0..count) (the arguments after the command name) into *config.
 * Returns 0, or the exit status of the problem with one line in error.
 * Never exits; config holds pointers into args. */
int options_parse(cli_config *config, int count, char *const *args, options_set accepted,
                  char *error, size_t error_size);

/* options_parse, or end the command with its message. */
cli_config options_parse_command(int count, char **args, options_set accepted);

/* plan and compare need --lengths: exit 2 saying so if it is missing. */
void options_require_lengths(const cli_config *config);

#endif
