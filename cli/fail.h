/*
 * fail.h - how `brs` gives up.
 *
 * Every error is one line on standard error, prefixed with the command
 * ("brs plan: ..."), and nothing on standard output: the commands compute
 * everything that can fail before they print. Bad input exits with status
 * 2; a failure of the environment (memory, writing the output) with 1.
 */
#ifndef BRS_CLI_FAIL_H
#define BRS_CLI_FAIL_H

#include <brs.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAILURE 1
#define CLI_EXIT_BAD_INPUT 2

/* Name the running command in every later message ("plan", "compare"...). */
void cli_set_command(const char *name);

/* Bad input: print "brs <command>: <message>" and exit with status 2. */
_Noreturn void cli_bad_input(const char *format, ...)
    __attribute__((format(printf, 1, 2)));

/* The environment failed: print the message and exit with status 1. */
_Noreturn void cli_failure(const char *format, ...)
    __attribute__((format(printf, 1, 2)));

/* A library call failed with `status`; `context` says what was being done
 * (may be ""), `detail` is the handle's message. Errors caused by the
 * input exit 2, the others 1. */
_Noreturn void cli_library_error(brs_status status, const char *context, const char *detail);

#endif
