/* output.c - what a command writes: the output file, wrapped prose,
 * escaped untrusted bytes, JSON numbers, and the one-line errors with their
 * exit status. */
#define _POSIX_C_SOURCE 200809L

#include "output.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Temporary file, then rename (POSIX mkstemp and rename). */

static char temporary[4096]; /* the file being written, "" when none */
static const char *target;   /* where it goes */

static void remove_temporary(void)
{
    if (temporary[0] != '\0') unlink(temporary);
    temporary[0] = '\0';
}

static const char *display(const char *path)
{
    static char text[256];
    brs_text_escape(text, sizeof text, path, strlen(path));
    return text;
}

FILE *output_open(const char *path)
{
    if (path == NULL || strcmp(path, "-") == 0) return stdout;
    struct stat info;
    if (stat(path, &info) == 0 && S_ISDIR(info.st_mode))
        cli_bad_input("cannot write --output '%s': it is a directory; name a file", display(path));
    if (snprintf(temporary, sizeof temporary, "%s.tmp-XXXXXX", path) >= (int)sizeof temporary)
        cli_bad_input("cannot write --output '%s': the path is too long", display(path));
    int fd = mkstemp(temporary);
    if (fd < 0) {
        int cause = errno;
        temporary[0] = '\0';
        cli_bad_input("cannot write --output '%s': %s (name a file in an existing, writable "
                      "directory)",
                      display(path), strerror(cause));
    }
    atexit(remove_temporary);
    /* mkstemp makes the file private (0600); an output file gets the
     * permissions a plain fopen would give it. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    FILE *out = fdopen(fd, "w");
    if (out == NULL) {
        close(fd);
        cli_failure("cannot write --output '%s': %s", display(path), strerror(errno));
    }
    target = path;
    return out;
}

/* Standard output's text while a command may still fail, in an unnamed
 * temporary file that the system removes at exit; NULL when none. */
static FILE *held;

FILE *output_open_held(const char *path)
{
    if (path != NULL && strcmp(path, "-") != 0) return output_open(path);
    held = tmpfile();
    if (held == NULL)
        cli_failure("cannot hold the output in a temporary file: %s", strerror(errno));
    return held;
}

/* Copy the held text to standard output, then close it. */
static void release_held(const char *what)
{
    char buffer[65536];
    int failed = fflush(held) != 0 || fseek(held, 0, SEEK_SET) != 0;
    size_t length;
    while (!failed && (length = fread(buffer, 1, sizeof buffer, held)) > 0)
        failed = fwrite(buffer, 1, length, stdout) != length;
    if (failed || ferror(held))
        cli_failure("could not write %s to standard output: %s", what, strerror(errno));
    fclose(held);
    held = NULL;
}

void output_commit(FILE *out, const char *what)
{
    if (held != NULL && out == held) {
        release_held(what);
        out = stdout;
    }
    if (out == stdout) {
        if (fflush(stdout) != 0 || ferror(stdout))
            cli_failure("could not write %s to standard output: %s", what, strerror(errno));
        return;
    }
    int failed = fflush(out) != 0 || ferror(out);
    int cause = errno;
    if (fclose(out) != 0 && !failed) {
        failed = 1;
        cause = errno;
    }
    if (failed)
        cli_failure("could not write %s to '%s': %s", what, display(target), strerror(cause));
    if (rename(temporary, target) != 0)
        cli_failure("could not write %s to '%s': %s", what, display(target), strerror(errno));
    temporary[0] = '\0';
}

/* Greedy word wrapping. */

void text_wrap_print_indented(FILE *out, const char *text, int column, int indent, int width)
{
    int start = column; /* where words begin on this line */
    const char *word = text;
    while (*word != '\0') {
        while (*word == ' ') word++;
        int length = (int)strcspn(word, " ");
        if (length == 0) break;
        if (column > start && column + 1 + length > width) {
            fprintf(out, "\n%*s", indent, "");
            column = start = indent;
        } else if (column > start) {
            fputc(' ', out);
            column++;
        }
        fprintf(out, "%.*s", length, word);
        column += length;
        word += length;
    }
    fputc('\n', out);
}

void text_wrap_print(FILE *out, const char *text, int width)
{
    text_wrap_print_indented(out, text, 0, 0, width);
}

/* Round-trip formatting of doubles. */

void json_print_double(FILE *out, double value)
{
    /* 17 significant digits always round-trip an IEEE double; fewer often
     * do, and "47415.216" reads better than "47415.216000000003". */
    char text[32];
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, value);
        if (strtod(text, NULL) == value) break;
    }
    fputs(text, out);
}

/* One-line error messages and the exit status that goes with them. */

static const char *command_name = NULL;

void cli_set_command(const char *name)
{
    command_name = name;
}

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
    if (command_name) fputs(command_name, stderr);
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
    case BRS_ERR_TOO_LARGE: return 1;
    default: return 0;
    }
}

_Noreturn void cli_library_error(brs_status status, const char *context, const char *detail)
{
    const char *reason = detail != NULL && detail[0] != '\0' ? detail : brs_strerror(status);
    const char *separator = context[0] != '\0' ? ": " : "";
    if (status_is_bad_input(status)) cli_bad_input("%s%s%s", context, separator, reason);
    cli_failure("%s%s%s (library status %d)", context, separator, reason, (int)status);
}
