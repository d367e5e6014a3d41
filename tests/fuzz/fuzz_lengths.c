/*
 * fuzz_lengths.c - libFuzzer harness of libbrs's lengths-file reader
 * (brs_lengths_file_*, libbrs/formats/lengths_file.c and lengths_line.c) over
 * arbitrary bytes, through the public API only.
 *
 * Checked on every input:
 * - success: the count equals the number of lines (LF, CRLF and lone CR
 *   end a line; a last line needs no end), each length is the line's first
 *   field and each sample's images are its second field's comma-separated
 *   loads (none for a lone 0 or no second field), by an independent and
 *   simpler reading; offsets start at 0 and never decrease;
 * - failure: the status is one the format can give, the message is one
 *   line of printable ASCII naming the file, and nothing is handed out;
 * - feeding the same bytes in small chunks (begin, feed, finish) gives the
 *   same result (chunk boundaries inside a CRLF, a BOM or a number change
 *   nothing), and the message too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "brs.h"

#define CHECK(condition) \
    do { \
        if (!(condition)) \
            abort(); \
    } while (0)

#define NAME "fuzz.lengths"

static void check_message(const char *error)
{
    CHECK(strncmp(error, NAME " ", strlen(NAME) + 1) == 0);
    for (const char *c = error; *c != '\0'; c++)
        CHECK(*c >= 0x20 && *c <= 0x7e);
}

/* The number at *at (digits only), moving past it. */
static uint64_t oracle_number(const uint8_t **at, const uint8_t *end)
{
    uint64_t value = 0;
    for (; *at < end && **at >= '0' && **at <= '9'; (*at)++)
        value = value * 10 + (uint64_t)(**at - '0');
    return value;
}

static const uint8_t *skip_blanks(const uint8_t *at, const uint8_t *end)
{
    while (at < end && (*at == ' ' || *at == '\t'))
        at++;
    return at;
}

/* Check sample `line` against the accepted line [begin, end). */
static void check_line(const uint8_t *begin, const uint8_t *end, size_t line,
                       const uint32_t *lengths, const uint32_t *patches, const uint64_t *offsets)
{
    const uint8_t *at = skip_blanks(begin, end);
    uint64_t length = oracle_number(&at, end);
    CHECK(length >= 1 && length <= UINT32_MAX && lengths[line] == length);
    at = skip_blanks(at, end);
    uint64_t first = offsets[line], count = offsets[line + 1] - first, seen = 0;
    uint64_t loads[64];
    while (at < end && *at != ' ' && *at != '\t') {
        CHECK(seen < 64);
        loads[seen++] = oracle_number(&at, end);
        at += at < end && *at == ',';
    }
    CHECK(skip_blanks(at, end) == end);
    if (seen == 1 && loads[0] == 0)
        seen = 0; /* a lone 0: no images */
    CHECK(count == seen);
    for (uint64_t i = 0; i < seen; i++)
        CHECK(loads[i] >= 1 && loads[i] <= UINT32_MAX && patches[first + i] == loads[i]);
}

/* Check the file read against the lines of data. */
static void check_lines(const uint8_t *data, size_t size, const brs_lengths_file *file)
{
    const uint32_t *lengths, *patches;
    const uint64_t *offsets;
    size_t count;
    CHECK(brs_lengths_file_lengths(&lengths, &count, file) == BRS_OK && count >= 1);
    CHECK(brs_lengths_file_images(&patches, &offsets, file) == BRS_OK && patches != NULL);
    CHECK(offsets[0] == 0);
    for (size_t i = 0; i < count; i++)
        CHECK(offsets[i + 1] >= offsets[i]);
    size_t line = 0, start = 0;
    if (size >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        start = 3;
    for (size_t i = start; i <= size; i++) {
        int ends = i == size || data[i] == '\n' || data[i] == '\r';
        if (!ends)
            continue;
        if (i == size && i == start)
            break; /* nothing after the last line end */
        CHECK(line < count);
        check_line(data + start, data + i, line, lengths, patches, offsets);
        line++;
        if (i < size && data[i] == '\r' && i + 1 < size && data[i + 1] == '\n')
            i++;
        start = i + 1;
    }
    CHECK(line == count);
}

/* The same bytes through begin, feed and finish, `step` bytes at a time. */
static brs_status parse_in_chunks(brs_lengths_file *file, const uint8_t *data, size_t size,
                                  size_t step)
{
    CHECK(brs_lengths_file_begin(file, NAME) == BRS_OK);
    for (size_t at = 0; at < size; at += step)
        brs_lengths_file_feed(file, (const char *)data + at, size - at < step ? size - at : step);
    return brs_lengths_file_finish(file);
}

static int same_arrays(const brs_lengths_file *a, const brs_lengths_file *b)
{
    const uint32_t *la, *lb, *pa, *pb;
    const uint64_t *oa, *ob;
    size_t na, nb;
    brs_lengths_file_lengths(&la, &na, a);
    brs_lengths_file_lengths(&lb, &nb, b);
    brs_lengths_file_images(&pa, &oa, a);
    brs_lengths_file_images(&pb, &ob, b);
    return na == nb && memcmp(la, lb, na * sizeof *la) == 0 &&
           memcmp(oa, ob, (na + 1) * sizeof *oa) == 0 &&
           memcmp(pa, pb, oa[na] * sizeof *pa) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    brs_lengths_file *whole = NULL, *chunked = NULL;
    CHECK(brs_lengths_file_new(&whole) == BRS_OK && brs_lengths_file_new(&chunked) == BRS_OK);
    brs_status status = brs_lengths_file_parse(whole, (const char *)data, size, NAME);
    if (status == BRS_OK) {
        check_lines(data, size, whole);
    } else {
        CHECK(status == BRS_ERR_INVALID_ARGUMENT || status == BRS_ERR_TOO_LARGE ||
              status == BRS_ERR_NO_MEMORY);
        check_message(brs_lengths_file_last_error(whole));
    }
    size_t step = size > 0 ? 1 + data[size - 1] % 7 : 1;
    CHECK(parse_in_chunks(chunked, data, size, step) == status);
    if (status == BRS_OK)
        CHECK(same_arrays(whole, chunked));
    else
        CHECK(strcmp(brs_lengths_file_last_error(whole), brs_lengths_file_last_error(chunked)) ==
              0);
    if (status != BRS_OK) { /* a refused file hands out nothing */
        const uint32_t *lengths;
        size_t count;
        CHECK(brs_lengths_file_lengths(&lengths, &count, whole) == BRS_ERR_STATE);
    }
    brs_lengths_file_free(whole);
    brs_lengths_file_free(chunked);
    return 0;
}
