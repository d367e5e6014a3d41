/* lengths_file.c - parse a lengths file strictly, with line-numbered errors. */
#define _POSIX_C_SOURCE 200809L /* getline */

#include "lengths_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fail.h"
#include "memory.h"

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* Parse one line (surrounding blanks allowed) as a length >= 1. Returns
 * NULL on success, or a static description of what is wrong with it,
 * which follows the quoted line in the message. */
static const char *parse_length(const char *line, uint32_t *out)
{
    const char *c = line;
    while (is_blank(*c))
        c++;
    if (*c == '\0')
        return "is empty: write one token count >= 1 on every line";
    uint64_t value = 0;
    const char *digits = c;
    for (; *c >= '0' && *c <= '9'; c++) {
        value = value * 10 + (uint64_t)(*c - '0');
        if (value > UINT32_MAX)
            return "is larger than 4294967295, the largest length";
    }
    while (is_blank(*c))
        c++;
    if (c == digits || *c != '\0')
        return "is not a positive integer: write one token count >= 1 per line";
    if (value == 0)
        return "is a length of 0: every sample needs at least one token";
    *out = (uint32_t)value;
    return NULL;
}

/* The line without its end-of-line and cut to a readable size, for messages. */
static void quote_line(char *quoted, size_t size, const char *line)
{
    size_t length = strcspn(line, "\r\n");
    if (length > size - 4) {
        snprintf(quoted, size, "%.*s...", (int)(size - 4), line);
        return;
    }
    snprintf(quoted, size, "%.*s", (int)length, line);
}

static void append(lengths *data, size_t *capacity, uint32_t value)
{
    if (data->count == *capacity) {
        *capacity = *capacity ? 2 * *capacity : 4096;
        data->values = cli_realloc_array(data->values, *capacity, sizeof *data->values);
    }
    data->values[data->count++] = value;
}

/* Read every line of an open stream; `name` is only for messages. A blank
 * line is an error, not skipped: indices must stay equal to line numbers. */
static lengths read_stream(FILE *stream, const char *name)
{
    lengths data = {NULL, 0};
    size_t capacity = 0;
    char *line = NULL;
    size_t line_size = 0;
    while (getline(&line, &line_size, stream) != -1) {
        uint32_t value;
        const char *problem = parse_length(line, &value);
        if (problem != NULL) {
            char quoted[48];
            quote_line(quoted, sizeof quoted, line);
            cli_bad_input("%s line %zu: '%s' %s", name, data.count + 1, quoted, problem);
        }
        append(&data, &capacity, value);
    }
    if (ferror(stream))
        cli_bad_input("cannot read %s: %s", name, strerror(errno));
    free(line);
    if (data.count == 0)
        cli_bad_input("%s has no lengths (expected one token count >= 1 per line)", name);
    return data;
}

const char *lengths_display_name(const char *path)
{
    return strcmp(path, "-") == 0 ? "standard input" : path;
}

lengths lengths_read(const char *path)
{
    if (strcmp(path, "-") == 0)
        return read_stream(stdin, lengths_display_name(path));
    FILE *stream = fopen(path, "r");
    if (stream == NULL)
        cli_bad_input("cannot open lengths file '%s': %s", path, strerror(errno));
    lengths data = read_stream(stream, path);
    fclose(stream);
    return data;
}

void lengths_free(lengths *data)
{
    free(data->values);
    data->values = NULL;
    data->count = 0;
}
