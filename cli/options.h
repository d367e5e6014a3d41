/*
 * options.h - turn a command's arguments into a cli_config.
 *
 * Flags are "--name VALUE" or "--name=VALUE" ("-o FILE" for --output);
 * switches take no value. The library's options come from its table (see
 * option_table.h); the command's own flags are --lengths, --cost-model,
 * --output, --epoch and --step. Every number is strict decimal (see
 * strict_number.h). A flag given twice, or a switch with its opposite, is an
 * error, not "the last one wins". --help (or -h) stops parsing and sets
 * config.help. Anything else unknown is bad input.
 */
#ifndef BRS_CLI_OPTIONS_H
#define BRS_CLI_OPTIONS_H

#include <stddef.h>

#include "cli_config.h"

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
