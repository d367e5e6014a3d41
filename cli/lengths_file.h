/*
 * lengths_file.h - read a dataset's sample lengths: one positive integer per
 * line, the format of the files data/NAME.lengths. Line i (1-based) is dataset index i-1.
 */
#ifndef BRS_CLI_LENGTHS_FILE_H
#define BRS_CLI_LENGTHS_FILE_H

#include <stddef.h>
#include <stdint.h>

typedef struct lengths {
    uint32_t *values; /* owned; free with lengths_free */
    size_t count;
} lengths;

/* Read `path` ("-" for standard input). Any problem is bad input: a missing
 * file, an empty one, a line that is not a positive 32-bit integer; the
 * message names the file and the line. */
lengths lengths_read(const char *path);

void lengths_free(lengths *data);

/* How messages name `path`: the path itself, or "standard input" for "-". */
const char *lengths_display_name(const char *path);

#endif
