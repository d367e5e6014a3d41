/*
 * lengths_file.h - read a dataset's sample lengths: one integer >= 1 per
 * line, the format of the files data/NAME.lengths. Line i (1-based) is
 * dataset index i-1, so a blank line is an error, never skipped.
 *
 * Lines end in LF, CRLF or a lone CR; blanks (space, tab) around the number
 * are allowed; a UTF-8 byte-order mark before the first line is skipped. A
 * line is at most LENGTHS_MAX_LINE bytes and a file at most
 * LENGTHS_MAX_SAMPLES lines, so that a wrong file (/dev/zero, a binary)
 * stops early with a message instead of filling the memory. docs/formats.md
 * is the format's specification (Python's brs._lengths.read_file follows
 * it too; tests/vectors/formats has a file per rule).
 */
#ifndef BRS_CLI_LENGTHS_FILE_H
#define BRS_CLI_LENGTHS_FILE_H

#include <stddef.h>
#include <stdint.h>

#define LENGTHS_MAX_LINE 128
#define LENGTHS_MAX_SAMPLES ((size_t)1 << 28)

typedef struct lengths {
    uint32_t *values; /* owned; free with lengths_free */
    size_t count;
} lengths;

/* What the readers return: 0 on success, else the exit status the problem
 * deserves (CLI_EXIT_BAD_INPUT for the input, CLI_EXIT_FAILURE for memory). */
typedef int lengths_status;

/* Parse data[0..size). On success *out owns the values; on failure *out is
 * empty and error holds one line ("line 3: 'abc' is not ..."), meant to
 * follow the name of the file. Never exits. */
lengths_status lengths_parse(const char *data, size_t size, lengths *out, char *error,
                             size_t error_size);

/* Read `path` ("-" for standard input) in bounded chunks; messages name the
 * file. Never exits. */
lengths_status lengths_read(const char *path, lengths *out, char *error, size_t error_size);

/* lengths_read, or end the command with its message (exit 2 or 1). */
lengths lengths_load(const char *path);

void lengths_free(lengths *data);

/* How messages name `path`: the path itself, or "standard input" for "-". */
const char *lengths_display_name(const char *path);

#endif
