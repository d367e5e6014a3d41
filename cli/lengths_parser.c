/* lengths_parser.c - strict parsing of one length per line, with the line
 * number and an escaped quote of the line in every message. */
#include "lengths_parser.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fail.h"
#include "text_escape.h"

static const char byte_order_mark[] = "\xEF\xBB\xBF";

static void fail(lengths_parser *parser, lengths_status status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static void fail(lengths_parser *parser, lengths_status status, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(parser->error, parser->error_size, format, args);
    va_end(args);
    parser->status = status;
}

void lengths_parser_start(lengths_parser *parser, char *error, size_t error_size)
{
    memset(parser, 0, sizeof *parser);
    parser->line_number = 1;
    parser->error = error;
    parser->error_size = error_size;
    if (error_size > 0)
        error[0] = '\0';
}

static int is_blank(char c) { return c == ' ' || c == '\t'; }

/* Parse text[0..length) (blanks around allowed) as a length >= 1. Returns
 * NULL on success, or what is wrong with the line, to follow its quote. */
static const char *parse_length(const char *text, size_t length, uint32_t *out)
{
    size_t i = 0;
    while (i < length && is_blank(text[i]))
        i++;
    size_t digits = i;
    uint64_t value = 0;
    for (; i < length && text[i] >= '0' && text[i] <= '9'; i++) {
        value = value * 10 + (uint64_t)(text[i] - '0');
        if (value > UINT32_MAX)
            return "is larger than 4294967295, the largest length";
    }
    size_t end = i;
    while (i < length && is_blank(text[i]))
        i++;
    if (end == digits || i != length)
        return "is not a positive integer: write one token count >= 1 per line";
    if (value == 0)
        return "is a length of 0: every sample needs at least one token";
    *out = (uint32_t)value;
    return NULL;
}

static void append(lengths_parser *parser, uint32_t value)
{
    lengths *data = &parser->data;
    if (data->count == LENGTHS_MAX_SAMPLES) {
        fail(parser, CLI_EXIT_BAD_INPUT,
             "has more than %zu lines, the most brs reads: plan a part of the dataset",
             LENGTHS_MAX_SAMPLES);
        return;
    }
    if (data->count == parser->capacity) {
        size_t capacity = parser->capacity ? 2 * parser->capacity : 4096;
        uint32_t *values = realloc(data->values, capacity * sizeof *values);
        if (values == NULL) {
            fail(parser, CLI_EXIT_FAILURE, "could not be read: out of memory after %zu lengths",
                 data->count);
            return;
        }
        data->values = values;
        parser->capacity = capacity;
    }
    data->values[data->count++] = value;
}

static void end_line(lengths_parser *parser)
{
    const char *text = parser->line;
    size_t length = parser->line_length;
    if (parser->line_number == 1 && length >= 3 && memcmp(text, byte_order_mark, 3) == 0) {
        text += 3;
        length -= 3;
    }
    uint32_t value;
    const char *problem = parse_length(text, length, &value);
    if (problem != NULL) {
        char quoted[48];
        text_escape(quoted, sizeof quoted, text, length);
        if (length == 0)
            fail(parser, CLI_EXIT_BAD_INPUT,
                 "line %zu is empty: write one token count >= 1 on every line",
                 parser->line_number);
        else
            fail(parser, CLI_EXIT_BAD_INPUT, "line %zu: '%s' %s", parser->line_number, quoted,
                 problem);
        return;
    }
    append(parser, value);
    parser->line_number++;
    parser->line_length = 0;
}

static void take_byte(lengths_parser *parser, char byte)
{
    if (parser->after_cr && byte == '\n') {
        parser->after_cr = 0; /* the LF of a CRLF: the line has ended already */
        return;
    }
    parser->after_cr = byte == '\r';
    if (byte == '\n' || byte == '\r') {
        end_line(parser);
    } else if (byte == '\0') {
        fail(parser, CLI_EXIT_BAD_INPUT,
             "line %zu: a NUL byte at column %zu: this is not a text file of one token count "
             "per line",
             parser->line_number, parser->line_length + 1);
    } else if (parser->line_length == LENGTHS_MAX_LINE) {
        fail(parser, CLI_EXIT_BAD_INPUT,
             "line %zu is longer than %d bytes: write one token count >= 1 per line",
             parser->line_number, LENGTHS_MAX_LINE);
    } else {
        parser->line[parser->line_length++] = byte;
    }
}

lengths_status lengths_parser_feed(lengths_parser *parser, const char *bytes, size_t size)
{
    for (size_t i = 0; i < size && parser->status == 0; i++)
        take_byte(parser, bytes[i]);
    return parser->status;
}

lengths_status lengths_parser_finish(lengths_parser *parser, lengths *out)
{
    if (parser->status == 0 && parser->line_length > 0)
        end_line(parser);
    if (parser->status == 0 && parser->data.count == 0)
        fail(parser, CLI_EXIT_BAD_INPUT,
             "has no lengths (expected one token count >= 1 per line)");
    if (parser->status != 0) {
        free(parser->data.values);
        parser->data.values = NULL;
        parser->data.count = 0;
    }
    *out = parser->data;
    return parser->status;
}
