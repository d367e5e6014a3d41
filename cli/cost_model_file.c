/* cost_model_file.c - read the three settings of a cost-model file, and
 * the seconds of one cost unit when it was calibrated. */
#include "cost_model_file.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fail.h"
#include "json_reader.h"
#include "strict_number.h"
#include "text_escape.h"

#define COST_MODEL_FORMAT "brs-cost-model"
#define COST_MODEL_VERSION 1

/* Far above a real file (a few kB with its timing grid); a bound keeps a
 * wrong path (a dataset, /dev/zero) from being read whole. */
enum { MAX_FILE_SIZE = 16 << 20 };

/* The keys read, in the order of `seen`. */
enum {
    KEY_FORMAT,
    KEY_VERSION,
    KEY_ALPHA,
    KEY_INTERCEPT,
    KEY_MAX_TOKENS,
    KEY_SECONDS_PER_UNIT,
    KEY_COUNT
};
static const char *const key_names[KEY_COUNT] = {"format",    "version",    "alpha",
                                                 "intercept", "max_tokens", "seconds_per_unit"};

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
    for (int key = 0; key < KEY_COUNT; key++)
        if (member->key_length == strlen(key_names[key]) &&
            memcmp(member->key, key_names[key], member->key_length) == 0) {
            if (r->seen[key])
                return bad(r, "key \"%s\" appears twice", key_names[key]);
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

static int check_header(reading *r)
{
    char text[128];
    if (!r->seen[KEY_FORMAT])
        return bad(r, "key \"format\" is missing (expected \"%s\")", COST_MODEL_FORMAT);
    const json_member *format = &r->members[KEY_FORMAT];
    value_text(text, sizeof text, format);
    if (format->kind != JSON_STRING || strcmp(text, COST_MODEL_FORMAT) != 0) {
        value_shown(text, sizeof text, format);
        return bad(r, "key \"format\" is %s, expected \"%s\": this is not a cost-model file",
                   text, COST_MODEL_FORMAT);
    }
    if (!r->seen[KEY_VERSION])
        return bad(r, "key \"version\" is missing (expected %d)", COST_MODEL_VERSION);
    const json_member *version = &r->members[KEY_VERSION];
    value_text(text, sizeof text, version);
    int64_t number;
    if (version->kind != JSON_NUMBER || strict_int64(text, &number) != STRICT_OK ||
        number != COST_MODEL_VERSION) {
        value_shown(text, sizeof text, version);
        return bad(r, "key \"version\" is %s, but this brs reads version %d", text,
                   COST_MODEL_VERSION);
    }
    return 0;
}

static int read_double(reading *r, int key, double *out)
{
    if (!r->seen[key])
        return bad(r, "key \"%s\" is missing", key_names[key]);
    char text[128];
    value_text(text, sizeof text, &r->members[key]);
    if (r->members[key].kind != JSON_NUMBER) {
        value_shown(text, sizeof text, &r->members[key]);
        return bad(r, "key \"%s\" is %s, not a number", key_names[key], text);
    }
    if (strict_double(text, out) != STRICT_OK)
        return bad(r, "key \"%s\" is %s, not a finite number", key_names[key], text);
    return 0;
}

/* 1 and sets *out when max_tokens holds an integer, 0 when null or absent. */
static int read_max_tokens(reading *r, int64_t *out, int *present)
{
    *present = 0;
    if (!r->seen[KEY_MAX_TOKENS] || r->members[KEY_MAX_TOKENS].kind == JSON_NULL)
        return 0;
    char text[128];
    value_text(text, sizeof text, &r->members[KEY_MAX_TOKENS]);
    if (r->members[KEY_MAX_TOKENS].kind != JSON_NUMBER || strict_int64(text, out) != STRICT_OK) {
        value_shown(text, sizeof text, &r->members[KEY_MAX_TOKENS]);
        return bad(r, "key \"max_tokens\" is %s, not an integer or null", text);
    }
    *present = 1;
    return 0;
}

/* seconds_per_unit: a number > 0, or null or absent (a model that was not
 * calibrated has no time scale: *out stays 0). */
static int read_seconds_per_unit(reading *r, double *out)
{
    *out = 0.0;
    if (!r->seen[KEY_SECONDS_PER_UNIT] || r->members[KEY_SECONDS_PER_UNIT].kind == JSON_NULL)
        return 0;
    double value;
    int status = read_double(r, KEY_SECONDS_PER_UNIT, &value);
    if (status != 0)
        return status;
    if (!(value > 0.0)) {
        char text[128];
        value_text(text, sizeof text, &r->members[KEY_SECONDS_PER_UNIT]);
        return bad(r, "key \"seconds_per_unit\" is %s; it must be above 0, or null when the "
                      "model was not calibrated", text);
    }
    *out = value;
    return 0;
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
        status = read_double(r, KEY_ALPHA, &alpha);
    if (status == 0)
        status = read_double(r, KEY_INTERCEPT, &intercept);
    if (status == 0)
        status = read_max_tokens(r, &max_tokens, &has_max_tokens);
    if (status == 0)
        status = read_seconds_per_unit(r, &config->seconds_per_unit);
    if (status != 0)
        return status;
    add(config, BRS_OPT_ALPHA, r, "alpha", 0, alpha);
    add(config, BRS_OPT_INTERCEPT, r, "intercept", 0, intercept);
    if (has_max_tokens)
        add(config, BRS_OPT_MAX_TOKENS, r, "max_tokens", max_tokens, 0.0);
    return 0;
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
    int status;
    char problem[256];
    if (size > MAX_FILE_SIZE)
        status = bad(&r, "larger than %d bytes: this is not a cost-model file", MAX_FILE_SIZE);
    else if ((status = json_object_each(text, size, remember, &r, problem, sizeof problem)) < 0)
        status = bad(&r, "not valid JSON at %s", problem);
    if (status == 0)
        status = take_settings(config, &r);
    free(text);
    return status;
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
