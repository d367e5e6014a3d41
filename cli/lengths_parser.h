/*
 * lengths_parser.h - the lengths format as a byte-at-a-time state machine,
 * so that a file is read in fixed chunks (memory bounded by the values, not
 * by a line) and an in-memory buffer goes through exactly the same rules.
 * The format itself is described in lengths_file.h.
 */
#ifndef BRS_CLI_LENGTHS_PARSER_H
#define BRS_CLI_LENGTHS_PARSER_H

#include <stddef.h>

#include "lengths_file.h"

typedef struct lengths_parser {
    lengths data;
    size_t capacity;
    char line[LENGTHS_MAX_LINE]; /* the line being read, without its end */
    size_t line_length;
    size_t line_number;          /* 1-based */
    int after_cr;                /* the last byte ended a line with CR */
    lengths_status status;       /* 0 until something is wrong */
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

#endif
