/*
 * cli_config.h - the settings of one `brs` invocation, as parsed from argv.
 *
 * Only what the user gave is kept: an option that is not set keeps the
 * library's default, so no default is restated here. Range checks are left
 * to the library, whose bounds and messages are the contract, so the command
 * line and every binding reject the same inputs.
 */
#ifndef BRS_CLI_CONFIG_H
#define BRS_CLI_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include <brs.h>

#include "option_table.h"

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
    const char *output_path;     /* -o/--output FILE, NULL: standard output */
    uint64_t epoch;              /* --epoch, 0 if absent */
    int has_step;                /* --step given */
    uint64_t step;
    double seconds_per_unit;     /* seconds of one cost unit, from --cost-model; 0: unknown */
    int cap_marks_rows;          /* compare: a --max-tokens brs cannot keep marks its row
                                  * instead of ending the command */
    option_setting settings[OPTION_TABLE_MAX]; /* at most one per key */
    size_t setting_count;
    int help;                    /* --help given: print usage, ignore the rest */
} cli_config;

/* The setting of `key`, or NULL if it was not given. */
const option_setting *cli_config_find(const cli_config *config, brs_option key);

/* Add a setting; returns it, or NULL if `key` is already set or the table
 * is full. */
option_setting *cli_config_add(cli_config *config, brs_option key, const char *source);

#endif
