/*
 * fuzz_lengths.c - libFuzzer harness of the CLI's lengths reader
 * (cli/input.c, its parser through lengths_parse) over arbitrary bytes.
 *
 * Checked on every input:
 * - success: the count equals the number of lines (LF, CRLF and lone CR
 *   end a line; a last line needs no end) and each value is the line's
 *   number, in [1, 2^32-1], by an independent and simpler reading;
 * - failure: the status is an exit status, the message is one line of
 *   printable ASCII and nothing is returned;
 * - feeding the same bytes in small chunks gives the same result (chunk
 *   boundaries inside a CRLF, a BOM or a number change nothing).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define CHECK(condition) \
    do { \
        if (!(condition)) \
            abort(); \
    } while (0)

static void check_message(const char *error)
{
    CHECK(error[0] != '\0');
    for (const char *c = error; *c != '\0'; c++)
        CHECK(*c >= 0x20 && *c <= 0x7e);
}

/* The value of line [begin, end) by a plain reading: blanks, digits,
 * blanks. Only called on inputs the reader accepted. */
static uint64_t oracle_value(const uint8_t *begin, const uint8_t *end)
{
    while (begin < end && (*begin == ' ' || *begin == '\t'))
        begin++;
    uint64_t value = 0;
    while (begin < end && *begin >= '0' && *begin <= '9')
        value = value * 10 + (uint64_t)(*begin++ - '0');
    return value;
}

/* Check values[] against the lines of data. */
static void check_lines(const uint8_t *data, size_t size, const lengths *got)
{
    size_t line = 0, start = 0;
    if (size >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        start = 3;
    for (size_t i = start; i <= size; i++) {
        int ends = i == size || data[i] == '\n' || data[i] == '\r';
        if (!ends)
            continue;
        if (i == size && i == start)
            break; /* nothing after the last line end */
        CHECK(line < got->count);
        uint64_t value = oracle_value(data + start, data + i);
        CHECK(value >= 1 && value <= UINT32_MAX);
        CHECK(got->values[line] == value);
        line++;
        if (i < size && data[i] == '\r' && i + 1 < size && data[i + 1] == '\n')
            i++;
        start = i + 1;
    }
    CHECK(line == got->count);
}

/* The same bytes through the parser in chunks of `step` bytes. */
static lengths_status parse_in_chunks(const uint8_t *data, size_t size, size_t step,
                                      lengths *out, char *error, size_t error_size)
{
    lengths_parser parser;
    lengths_parser_start(&parser, error, error_size);
    for (size_t at = 0; at < size; at += step)
        lengths_parser_feed(&parser, (const char *)data + at, size - at < step ? size - at : step);
    return lengths_parser_finish(&parser, out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char error[512], chunked_error[512];
    lengths got, chunked;
    lengths_status status = lengths_parse((const char *)data, size, &got, error, sizeof error);
    if (status == 0) {
        CHECK(got.count >= 1);
        check_lines(data, size, &got);
    } else {
        CHECK(status == CLI_EXIT_BAD_INPUT || status == CLI_EXIT_FAILURE);
        CHECK(got.values == NULL && got.count == 0);
        check_message(error);
    }
    size_t step = size > 0 ? 1 + data[size - 1] % 7 : 1;
    lengths_status again =
        parse_in_chunks(data, size, step, &chunked, chunked_error, sizeof chunked_error);
    CHECK(again == status && chunked.count == got.count);
    if (status == 0)
        CHECK(memcmp(chunked.values, got.values, got.count * sizeof *got.values) == 0);
    else
        CHECK(strcmp(error, chunked_error) == 0);
    lengths_free(&got);
    lengths_free(&chunked);
    return 0;
}
