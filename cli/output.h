/* output.h - output.c: what a command writes (its output, wrapped prose,
 * escaped untrusted bytes, JSON numbers) and how `brs` gives up. */
#ifndef BRS_CLI_OUTPUT_H
#define BRS_CLI_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#include <brs.h>

#include "formats/internal.h"

/*
 * How `brs` gives up.
 *
 * Every error is one line on standard error, prefixed with the command
 * ("brs plan: ..."), and nothing on standard output: a command computes
 * everything that can fail before it prints, or holds its output until it
 * is complete (output_open_held). Bad input exits with status 2; a failure
 * of the environment (memory, writing the output) with 1.
 */

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAILURE 1
#define CLI_EXIT_BAD_INPUT 2

/* Name the running command in every later message ("plan", "compare"...). */
void cli_set_command(const char *name);

/* Bad input: print "brs <command>: <message>" and exit with status 2. */
_Noreturn void cli_bad_input(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* The environment failed: print the message and exit with status 1. */
_Noreturn void cli_failure(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* A library call failed with `status`; `context` says what was being done
 * (may be ""), `detail` is the handle's message. Errors caused by the
 * input exit 2, the others 1. */
_Noreturn void cli_library_error(brs_status status, const char *context, const char *detail);

/* Untrusted bytes (a line of a file, an argument) are quoted in a message
 * by brs_text_escape, the library's one implementation
 * (libbrs/formats/text.c, compiled into the command too: it is not part of
 * the ABI). */

/* Prose wrapped at a column, for notes, summaries and the descriptions of
 * --help: `text` with its spaces turned into line breaks where a line would
 * pass `width` columns (a longer word stays whole); ends with a newline. */
void text_wrap_print(FILE *out, const char *text, int width);

/* The same, for text that starts at column `column` of the current line;
 * continuation lines are indented by `indent` spaces. */
void text_wrap_print_indented(FILE *out, const char *text, int column, int indent, int width);

/* A double as the shortest JSON number that reads back to exactly the same
 * value; `value` must be finite (costs always are). */
void json_print_double(FILE *out, double value);

/*
 * Where a command writes: standard output, or --output FILE.
 *
 * A file is written to a temporary file next to it and renamed over FILE
 * only when everything is written, so FILE is either the complete output or
 * untouched; on any failure (also a later exit through cli_bad_input or
 * cli_failure) the temporary file is removed.
 */

/* Standard output for NULL or "-", else a new temporary file for `path`.
 * A path that cannot be written is bad input (exit 2) naming it. */
FILE *output_open(const char *path);

/* output_open for a command that finds errors while it writes: standard
 * output too gets the whole output or nothing, held in a temporary file. */
FILE *output_open_held(const char *path);

/* Flush and check every write, then move the file into place. A failed
 * write exits 1 ("could not write <what> to ..."). */
void output_commit(FILE *out, const char *what);

#endif
