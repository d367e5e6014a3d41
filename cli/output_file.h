/*
 * output_file.h - where a command writes: standard output, or --output FILE.
 *
 * A file is written to a temporary file next to it and renamed over FILE
 * only when everything is written, so FILE is either the complete output or
 * untouched; on any failure (also a later exit through fail.h) the
 * temporary file is removed.
 */
#ifndef BRS_CLI_OUTPUT_FILE_H
#define BRS_CLI_OUTPUT_FILE_H

#include <stdio.h>

/* Standard output for NULL or "-", else a new temporary file for `path`.
 * A path that cannot be written is bad input (exit 2) naming it. */
FILE *output_open(const char *path);

/* Flush and check every write, then move the file into place. A failed
 * write exits 1 ("could not write <what> to ..."). */
void output_commit(FILE *out, const char *what);

#endif
