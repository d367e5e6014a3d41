/*
 * options.h - turn a command's arguments into a cli_config.
 *
 * Flags are "--name VALUE" or "--name=VALUE"; switches take no value. The
 * last occurrence of a flag wins. --help (or -h) stops parsing and sets
 * config.help. Anything else unknown is bad input (exit 2).
 */
#ifndef BRS_CLI_OPTIONS_H
#define BRS_CLI_OPTIONS_H

#include "cli_config.h"

/* Which flags a command accepts. */
typedef enum options_set {
    OPTIONS_PLAN, /* every dataset, configuration and narrowing flag */
    OPTIONS_HELP_ONLY /* only --help (the demo) */
} options_set;

/* Parse args[0..count) (the arguments after the command name). */
cli_config options_parse(int count, char **args, options_set accepted);

/* plan and compare need --lengths: exit 2 saying so if it is missing. */
void options_require_lengths(const cli_config *config);

#endif
