/* input.h - input.c: the lengths file and the cost-model file. */
#ifndef BRS_CLI_INPUT_H
#define BRS_CLI_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "args.h"

/*
 * A dataset's sample lengths: one integer >= 1 per line, the format of
 * the files data/NAME.lengths. Line i (1-based) is dataset index i-1, so a
 * blank line is an error, never skipped.
 *
 * Lines end in LF, CRLF or a lone CR; blanks (space, tab) around the number
 * are allowed; a UTF-8 byte-order mark before the first line is skipped. A
 * line is at most LENGTHS_MAX_LINE bytes and a file at most
 * LENGTHS_MAX_SAMPLES lines, so that a wrong file (/dev/zero, a binary)
 * stops early with a message instead of filling the memory. docs/formats.md
 * is the format's specification (Python's brs._lengths.read_file follows
 * it too; tests/vectors/formats has a file per rule).
 */

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

/*
 * The lengths format as a byte-at-a-time state machine, so that a file is
 * read in fixed chunks (memory bounded by the values, not by a line) and an
 * in-memory buffer goes through exactly the same rules. The format itself
 * is described above, with lengths_parse.
 */

typedef struct lengths_parser {
    lengths data;
    size_t capacity;
    char line[LENGTHS_MAX_LINE]; /* the line being read, without its end */
    size_t line_length;
    size_t line_number;    /* 1-based */
    int after_cr;          /* the last byte ended a line with CR */
    lengths_status status; /* 0 until something is wrong */
    char *error;
    size_t error_size;
} lengths_parser;

/* Start an empty parse; messages go to error[0..error_size). */
void lengths_parser_start(lengths_parser *parser, char *error, size_t error_size);

/* Take the next bytes. Returns the status so far (0: keep feeding). */
lengths_status lengths_parser_feed(lengths_parser *parser, const char *bytes, size_t size);

/* End of input: the last line needs no line end; an input without lines is
 * an error. On success *out takes the values, on failure they are freed and
 * *out is empty. */
lengths_status lengths_parser_finish(lengths_parser *parser, lengths *out);

/*
 * `--cost-model FILE`: the cost-model JSON that Python's
 * brs.calibrate / CostModel.save writes:
 *   {"format": "brs-cost-model", "version": 1, "alpha": A, "intercept": C,
 *    "max_tokens": T or null, ...}
 * format and version are checked; alpha, intercept and max_tokens are used
 * (max_tokens null or absent: no setting), and so is seconds_per_unit (null
 * or absent in a model that was not calibrated), which `brs compare` turns
 * its times into seconds with; the keys of the calibration's record (r2,
 * source, timings, ...) are only type-checked, and unknown keys ignored.
 * A flag given on the command line wins over the file, so a calibrated model
 * can be tried with one value changed. docs/formats.md is the format's
 * specification (Python's CostModel.load follows the same rules).
 */

/* Read `path` and add its settings to *config, except those the command
 * line gave. Returns 0, or the exit status with one line in error naming
 * the file and the key. Never exits. */
int cost_model_file_read(cli_config *config, const char *path, char *error, size_t error_size);

/* The same for the file's bytes text[0..size), named `name` in messages
 * (the fuzz harness's entry: no file, no size limit). */
int cost_model_text_read(cli_config *config, const char *text, size_t size, const char *name,
                         char *error, size_t error_size);

/* cost_model_file_read of config->cost_model_path (nothing if NULL), or
 * end the command with its message. */
void cost_model_file_apply(cli_config *config);

#endif
