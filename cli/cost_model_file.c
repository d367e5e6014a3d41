/* cost_model_file.c - read the three settings of a cost-model file, and
 * the seconds of one cost unit when it was calibrated. The format's rules
 * are docs/formats.md's; tests/vectors/formats holds a file per rule. */
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
    KEY_COUNT
};
static const char *const key_names[KEY_COUNT] = {
    "format", "version", "alpha", "intercept", "max_tokens", "seconds_per_unit", "r2",
    "worst_residual", "source", "model", "device", "memory", "timing", "timings"};

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

/* seconds_per_unit: a number > 0, or null or absent (a model that was not
 * calibrated has no time scale: *out stays 0). */
static int read_seconds_per_unit(reading *r, double *out)
{
    *out = 0.0;
    if (absent(r, KEY_SECONDS_PER_UNIT))
        return 0;
    double value;
    int status = read_double(r, KEY_SECONDS_PER_UNIT, &value);
    if (status != 0)
        return status;
    if (!(value > 0.0)) {
        char text[128];
        value_text(text, sizeof text, &r->members[KEY_SECONDS_PER_UNIT]);
        return bad(r, "key \"seconds_per_unit\" is %s, out of range: it must be a finite number "
                      "above 0, or null when the model was not calibrated", text);
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
        status = read_seconds_per_unit(r, &config->seconds_per_unit);
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
