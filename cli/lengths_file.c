/* lengths_file.c - read a lengths file in fixed chunks through the parser. */
#include "lengths_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fail.h"
#include "lengths_parser.h"
#include "text_escape.h"

enum { CHUNK_SIZE = 65536 };

lengths_status lengths_parse(const char *data, size_t size, lengths *out, char *error,
                             size_t error_size)
{
    lengths_parser parser;
    lengths_parser_start(&parser, error, error_size);
    lengths_parser_feed(&parser, data, size);
    return lengths_parser_finish(&parser, out);
}

const char *lengths_display_name(const char *path)
{
    return strcmp(path, "-") == 0 ? "standard input" : path;
}

/* Feed the whole stream; a read error (not the end of the file) is an error
 * too, so a truncated read never plans a part of the dataset. */
static lengths_status read_stream(FILE *stream, lengths *out, const char *name, char *error,
                                  size_t error_size)
{
    static char chunk[CHUNK_SIZE];
    char problem[256];
    lengths_parser parser;
    lengths_parser_start(&parser, problem, sizeof problem);
    size_t got;
    do {
        got = fread(chunk, 1, sizeof chunk, stream);
        lengths_parser_feed(&parser, chunk, got);
    } while (got == sizeof chunk && parser.status == 0);
    if (parser.status == 0 && ferror(stream)) {
        int cause = errno;
        lengths_parser_finish(&parser, out);
        snprintf(error, error_size, "cannot read %s: %s", name, strerror(cause));
        return CLI_EXIT_BAD_INPUT;
    }
    lengths_status status = lengths_parser_finish(&parser, out);
    if (status != 0)
        snprintf(error, error_size, "%s %s", name, problem);
    return status;
}

lengths_status lengths_read(const char *path, lengths *out, char *error, size_t error_size)
{
    char name[200];
    text_escape(name, sizeof name, lengths_display_name(path), strlen(lengths_display_name(path)));
    *out = (lengths){NULL, 0};
    if (strcmp(path, "-") == 0)
        return read_stream(stdin, out, name, error, error_size);
    FILE *stream = fopen(path, "rb");
    if (stream == NULL) {
        snprintf(error, error_size, "cannot open lengths file '%s': %s", name, strerror(errno));
        return CLI_EXIT_BAD_INPUT;
    }
    lengths_status status = read_stream(stream, out, name, error, error_size);
    fclose(stream);
    return status;
}

lengths lengths_load(const char *path)
{
    char error[512];
    lengths data;
    lengths_status status = lengths_read(path, &data, error, sizeof error);
    if (status == CLI_EXIT_FAILURE)
        cli_failure("%s", error);
    if (status != 0)
        cli_bad_input("%s", error);
    return data;
}

void lengths_free(lengths *data)
{
    free(data->values);
    data->values = NULL;
    data->count = 0;
}
