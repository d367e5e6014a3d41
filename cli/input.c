/* input.c - the files a command reads: lengths files and cost-model files
 * (whose JSON json.c checks). */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read a lengths file in fixed chunks through the parser. */

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

/* Strict parsing of one length per line, with the line
 * number and an escaped quote of the line in every message. */

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

/* Read the three settings of a cost-model file, and
 * the seconds of one cost unit when it was calibrated. The format's rules
 * are docs/formats.md's; tests/vectors/formats holds a file per rule. */

#define COST_MODEL_FORMAT "brs-cost-model"
#define COST_MODEL_VERSION 1

/* Far above a real file (a few kB with its timing grid); a bound keeps a
 * wrong path (a dataset, /dev/zero) from being read whole. */
enum { MAX_FILE_SIZE = 16 << 20 };

/* The keys checked, in the order of `seen` and of the checks (the order
 * docs/formats.md gives, which Python's CostModel.from_dict follows too). */
enum {
    KEY_FORMAT,
    KEY_VERSION,
    KEY_ALPHA,
    KEY_INTERCEPT,
    KEY_MAX_TOKENS,
    KEY_SECONDS_PER_UNIT,
    KEY_R2,
    KEY_WORST_RESIDUAL,
    KEY_SOURCE,
    KEY_MODEL,
    KEY_DEVICE,
    KEY_MEMORY,
    KEY_TIMING,
    KEY_TIMINGS,
    KEY_FIRST_SHAPE_SECONDS,
    KEY_COUNT
};
static const char *const key_names[KEY_COUNT] = {
    "format", "version", "alpha", "intercept", "max_tokens", "seconds_per_unit", "r2",
    "worst_residual", "source", "model", "device", "memory", "timing", "timings",
    "first_shape_seconds"};

typedef struct reading {
    json_member members[KEY_COUNT];
    int seen[KEY_COUNT];
    const char *name; /* the file, escaped, for messages */
    char *error;
    size_t error_size;
} reading;

static int bad(reading *r, const char *format, ...) __attribute__((format(printf, 2, 3)));

static int bad(reading *r, const char *format, ...)
{
    char text[384];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    snprintf(r->error, r->error_size, "--cost-model %s: %s", r->name, text);
    return CLI_EXIT_BAD_INPUT;
}

static int remember(const json_member *member, void *context)
{
    reading *r = context;
    /* json_object_each has refused a name given twice already. */
    for (int key = 0; key < KEY_COUNT; key++)
        if (json_string_equal(member->key, member->key_length, key_names[key],
                              strlen(key_names[key]))) {
            r->seen[key] = 1;
            r->members[key] = *member;
        }
    return 0;
}

/* The value's text as a C string (numbers are short; longer is cut). */
static void value_text(char *out, size_t size, const json_member *member)
{
    text_escape(out, size, member->value, member->value_length);
}

/* The value as a message shows it: a string in quotes. */
static void value_shown(char *out, size_t size, const json_member *member)
{
    char text[128];
    value_text(text, sizeof text, member);
    snprintf(out, size, member->kind == JSON_STRING ? "\"%s\"" : "%s", text);
}

/* A number's whole text (not cut, unlike value_text) through strict_int64
 * or strict_double. */
static char *number_copy(const json_member *member)
{
    char *text = malloc(member->value_length + 1);
    if (text != NULL) {
        memcpy(text, member->value, member->value_length);
        text[member->value_length] = '\0';
    }
    return text;
}

static strict_result number_int64(const json_member *member, int64_t *out)
{
    char *text = number_copy(member);
    strict_result result = text != NULL ? strict_int64(text, out) : STRICT_RANGE;
    free(text);
    return result;
}

static strict_result number_double(const json_member *member, double *out)
{
    char *text = number_copy(member);
    strict_result result = text != NULL ? strict_double(text, out) : STRICT_RANGE;
    free(text);
    return result;
}

static int check_header(reading *r)
{
    char text[128];
    if (!r->seen[KEY_FORMAT])
        return bad(r, "key \"format\" is missing (expected \"%s\")", COST_MODEL_FORMAT);
    const json_member *format = &r->members[KEY_FORMAT];
    if (format->kind != JSON_STRING || !json_string_equal(format->value, format->value_length,
                                                          COST_MODEL_FORMAT,
                                                          strlen(COST_MODEL_FORMAT))) {
        value_shown(text, sizeof text, format);
        return bad(r, "key \"format\" is %s, expected \"%s\": this is not a cost-model file",
                   text, COST_MODEL_FORMAT);
    }
    if (!r->seen[KEY_VERSION])
        return bad(r, "key \"version\" is missing (expected %d)", COST_MODEL_VERSION);
    const json_member *version = &r->members[KEY_VERSION];
    int64_t number;
    if (version->kind != JSON_NUMBER || number_int64(version, &number) != STRICT_OK ||
        number != COST_MODEL_VERSION) {
        value_shown(text, sizeof text, version);
        return bad(r, "key \"version\" is %s, but this brs reads version %d", text,
                   COST_MODEL_VERSION);
    }
    return 0;
}

/* source: one of the three a CostModel can have. */
static int check_source(reading *r)
{
    static const char *const sources[] = {"calibrated", "analytic", "fixed"};
    const json_member *member = &r->members[KEY_SOURCE];
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++)
        if (json_string_equal(member->value, member->value_length, sources[i],
                              strlen(sources[i])))
            return 0;
    char text[128];
    value_shown(text, sizeof text, member);
    return bad(r, "key \"source\" is %s, not one of \"calibrated\", \"analytic\", \"fixed\"",
               text);
}

/* Whether key is absent or null: every optional key means the same then. */
static int absent(const reading *r, int key)
{
    return !r->seen[key] || r->members[key].kind == JSON_NULL;
}

/* A finite number into *out; the caller has checked that the key is set. */
static int read_double(reading *r, int key, double *out)
{
    char text[128];
    if (r->members[key].kind != JSON_NUMBER) {
        value_shown(text, sizeof text, &r->members[key]);
        return bad(r, "key \"%s\" is %s, not a number", key_names[key], text);
    }
    if (number_double(&r->members[key], out) != STRICT_OK) {
        value_text(text, sizeof text, &r->members[key]);
        return bad(r, "key \"%s\" is %s, not a finite number", key_names[key], text);
    }
    return 0;
}

/* alpha and intercept: required, finite and >= 0 (-0 reads as 0). */
static int read_cost_term(reading *r, int key, double *out)
{
    if (!r->seen[key])
        return bad(r, "key \"%s\" is missing", key_names[key]);
    int status = read_double(r, key, out);
    if (status == 0 && !(*out >= 0.0)) {
        char text[128];
        value_text(text, sizeof text, &r->members[key]);
        return bad(r, "key \"%s\" is %s, out of range: it must be a finite number >= 0",
                   key_names[key], text);
    }
    *out += 0.0; /* -0 becomes 0 */
    return status;
}

/* Sets *present and *out when max_tokens holds an integer >= 1. */
static int read_max_tokens(reading *r, int64_t *out, int *present)
{
    *present = 0;
    if (absent(r, KEY_MAX_TOKENS))
        return 0;
    const json_member *member = &r->members[KEY_MAX_TOKENS];
    if (member->kind != JSON_NUMBER || number_int64(member, out) != STRICT_OK || *out < 1) {
        char text[128];
        value_shown(text, sizeof text, member);
        return bad(r, "key \"max_tokens\" is %s, not an integer >= 1 or null", text);
    }
    *present = 1;
    return 0;
}

/* An optional number of seconds: absent or null leaves *out 0 (a model
 * that was not calibrated has no time scale; a first run not measured);
 * else a finite number above `rule`'s bound, which the message states. */
static int read_seconds(reading *r, int key, double *out, int zero_allowed, const char *rule)
{
    *out = 0.0;
    if (absent(r, key))
        return 0;
    double value;
    int status = read_double(r, key, &value);
    if (status != 0)
        return status;
    if (zero_allowed ? !(value >= 0.0) : !(value > 0.0)) {
        char text[128];
        value_text(text, sizeof text, &r->members[key]);
        return bad(r, "key \"%s\" is %s, out of range: it must be %s", key_names[key], text,
                   rule);
    }
    *out = value;
    return 0;
}

/* The keys brs does not use but Python's CostModel keeps: checked here
 * too, so that a file one reader takes the other takes as well. */
static int check_record(reading *r)
{
    static const struct {
        int key;
        json_kind kind;
        const char *what;
    } expected[] = {
        {KEY_R2, JSON_NUMBER, "a number"},        {KEY_WORST_RESIDUAL, JSON_NUMBER, "a number"},
        {KEY_SOURCE, JSON_STRING, "a string"},    {KEY_MODEL, JSON_STRING, "a string"},
        {KEY_DEVICE, JSON_STRING, "a string"},    {KEY_MEMORY, JSON_OBJECT, "an object"},
        {KEY_TIMING, JSON_OBJECT, "an object"},   {KEY_TIMINGS, JSON_ARRAY, "an array"},
    };
    char text[128];
    double unused;
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        int key = expected[i].key;
        if (absent(r, key))
            continue;
        if (r->members[key].kind != expected[i].kind) {
            value_shown(text, sizeof text, &r->members[key]);
            return bad(r, "key \"%s\" is %s, not %s or null", key_names[key], text,
                       expected[i].what);
        }
        if (expected[i].kind == JSON_NUMBER && read_double(r, key, &unused) != 0)
            return CLI_EXIT_BAD_INPUT;
    }
    return absent(r, KEY_SOURCE) ? 0 : check_source(r);
}

static void add(cli_config *config, brs_option key, const reading *r, const char *name,
                int64_t int_value, double double_value)
{
    char source[160];
    snprintf(source, sizeof source, "--cost-model %s key \"%s\"", r->name, name);
    option_setting *setting = cli_config_add(config, key, source);
    if (setting != NULL) { /* NULL: the command line set it, and wins */
        setting->int_value = int_value;
        setting->double_value = double_value;
    }
}

static int take_settings(cli_config *config, reading *r)
{
    double alpha, intercept;
    int64_t max_tokens;
    int has_max_tokens;
    int status = check_header(r);
    if (status == 0)
        status = read_cost_term(r, KEY_ALPHA, &alpha);
    if (status == 0)
        status = read_cost_term(r, KEY_INTERCEPT, &intercept);
    if (status == 0)
        status = read_max_tokens(r, &max_tokens, &has_max_tokens);
    if (status == 0)
        status = read_seconds(r, KEY_SECONDS_PER_UNIT, &config->seconds_per_unit, 0,
                              "a finite number above 0, or null when the model was not "
                              "calibrated");
    if (status == 0)
        status = read_seconds(r, KEY_FIRST_SHAPE_SECONDS, &config->first_shape_seconds, 1,
                              "a finite number >= 0, or null");
    if (status == 0)
        status = check_record(r);
    if (status != 0)
        return status;
    add(config, BRS_OPT_ALPHA, r, "alpha", 0, alpha);
    add(config, BRS_OPT_INTERCEPT, r, "intercept", 0, intercept);
    if (has_max_tokens)
        add(config, BRS_OPT_MAX_TOKENS, r, "max_tokens", max_tokens, 0.0);
    return 0;
}

static int read_text(cli_config *config, reading *r, const char *text, size_t size)
{
    char problem[256];
    int status = json_object_each(text, size, remember, r, problem, sizeof problem);
    if (status < 0)
        return bad(r, "not a valid JSON cost-model file at %s", problem);
    return status != 0 ? status : take_settings(config, r);
}

/* The whole file, NUL-terminated, in a new buffer; NULL with errno set. */
static char *slurp(FILE *stream, size_t *size)
{
    char *text = malloc(MAX_FILE_SIZE + 1);
    if (text == NULL)
        return NULL;
    *size = fread(text, 1, MAX_FILE_SIZE + 1, stream);
    if (ferror(stream)) {
        int cause = errno;
        free(text);
        errno = cause;
        return NULL;
    }
    text[*size <= MAX_FILE_SIZE ? *size : MAX_FILE_SIZE] = '\0';
    return text;
}

int cost_model_file_read(cli_config *config, const char *path, char *error, size_t error_size)
{
    char name[200];
    text_escape(name, sizeof name, path, strlen(path));
    reading r = {{{0}}, {0}, name, error, error_size};
    FILE *stream = fopen(path, "rb");
    if (stream == NULL)
        return bad(&r, "cannot open it: %s", strerror(errno));
    size_t size;
    char *text = slurp(stream, &size);
    int cause = errno;
    fclose(stream);
    if (text == NULL)
        return bad(&r, "cannot read it: %s", strerror(cause));
    int status = size > MAX_FILE_SIZE
                     ? bad(&r, "larger than %d bytes: this is not a cost-model file", MAX_FILE_SIZE)
                     : read_text(config, &r, text, size);
    free(text);
    return status;
}

int cost_model_text_read(cli_config *config, const char *text, size_t size, const char *name,
                         char *error, size_t error_size)
{
    char escaped[200];
    text_escape(escaped, sizeof escaped, name, strlen(name));
    reading r = {{{0}}, {0}, escaped, error, error_size};
    return read_text(config, &r, text, size);
}

void cost_model_file_apply(cli_config *config)
{
    if (config->cost_model_path == NULL)
        return;
    char error[512];
    int status = cost_model_file_read(config, config->cost_model_path, error, sizeof error);
    if (status == CLI_EXIT_FAILURE)
        cli_failure("%s", error);
    if (status != 0)
        cli_bad_input("%s", error);
}
