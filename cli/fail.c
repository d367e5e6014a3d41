/* fail.c - one-line error messages and the exit status that goes with them. */
#include "fail.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const char *command_name = NULL;

void cli_set_command(const char *name) { command_name = name; }

/* Print the text as printable ASCII, so a message is always one line and
 * never sends raw bytes (a file's, an argument's) to the terminal. */
static void put_one_line(const char *text)
{
    for (const unsigned char *c = (const unsigned char *)text; *c != '\0'; c++) {
        if (*c >= 0x20 && *c <= 0x7e)
            fputc(*c, stderr);
        else
            fprintf(stderr, "\\x%02x", *c);
    }
}

static void print_message(const char *format, va_list args)
{
    char text[1024];
    vsnprintf(text, sizeof text, format, args);
    fflush(stdout);
    fputs(command_name ? "brs " : "brs", stderr);
    if (command_name)
        fputs(command_name, stderr);
    fputs(": ", stderr);
    put_one_line(text);
    fputc('\n', stderr);
}

_Noreturn void cli_bad_input(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    print_message(format, args);
    va_end(args);
    exit(CLI_EXIT_BAD_INPUT);
}

_Noreturn void cli_failure(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    print_message(format, args);
    va_end(args);
    exit(CLI_EXIT_FAILURE);
}

/* Which library statuses mean "the input is wrong" (exit 2) rather than
 * "something broke" (exit 1): everything a user can fix by changing
 * the lengths or the flags. */
static int status_is_bad_input(brs_status status)
{
    switch (status) {
    case BRS_ERR_INVALID_ARGUMENT:
    case BRS_ERR_OUT_OF_RANGE:
    case BRS_ERR_INVALID_LENGTH:
    case BRS_ERR_TOO_FEW_SAMPLES:
    case BRS_ERR_SAMPLE_TOO_LONG:
    case BRS_ERR_CAP_INFEASIBLE:
    case BRS_ERR_TOO_LARGE:
        return 1;
    default:
        return 0;
    }
}

_Noreturn void cli_library_error(brs_status status, const char *context, const char *detail)
{
    const char *reason = detail != NULL && detail[0] != '\0' ? detail : brs_strerror(status);
    const char *separator = context[0] != '\0' ? ": " : "";
    if (status_is_bad_input(status))
        cli_bad_input("%s%s%s", context, separator, reason);
    cli_failure("%s%s%s (library status %d)", context, separator, reason, (int)status);
}
