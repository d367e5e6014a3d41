/*
 * fuzz_cost_model.c - libFuzzer harness of the CLI's cost-model reader
 * (cli/input.c over cli/json.c) over arbitrary bytes.
 *
 * Checked on every input:
 * - the JSON reader returns 0 or -1, with a one-line printable message
 *   "byte N: ..." (N within the input) on -1, and hands out only members
 *   whose name and value lie inside the input, each name equal to itself;
 * - the cost-model reader returns 0 or an exit status with a one-line
 *   printable message; it accepts nothing the JSON reader refuses, and an
 *   accepted file sets alpha and intercept to finite numbers >= 0 and
 *   max_tokens, when set, to at least 1;
 * - a second reading gives the same status and message.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define CHECK(condition) \
    do { \
        if (!(condition)) \
            abort(); \
    } while (0)

typedef struct bounds {
    const char *begin, *end;
} bounds;

static void check_message(const char *error)
{
    CHECK(error[0] != '\0');
    for (const char *c = error; *c != '\0'; c++)
        CHECK(*c >= 0x20 && *c <= 0x7e);
}

static int inside(const bounds *b, const char *text, size_t length)
{
    return text >= b->begin && text <= b->end && length <= (size_t)(b->end - text);
}

static int visit(const json_member *member, void *context)
{
    const bounds *b = context;
    CHECK(inside(b, member->key, member->key_length));
    CHECK(inside(b, member->value, member->value_length));
    CHECK(member->kind >= JSON_NULL && member->kind <= JSON_OBJECT);
    CHECK(json_string_equal(member->key, member->key_length, member->key, member->key_length));
    return 0;
}

static void check_settings(const cli_config *config)
{
    const option_setting *alpha = cli_config_find(config, BRS_OPT_ALPHA);
    const option_setting *intercept = cli_config_find(config, BRS_OPT_INTERCEPT);
    const option_setting *max_tokens = cli_config_find(config, BRS_OPT_MAX_TOKENS);
    CHECK(alpha != NULL && intercept != NULL);
    CHECK(isfinite(alpha->double_value) && alpha->double_value >= 0.0);
    CHECK(isfinite(intercept->double_value) && intercept->double_value >= 0.0);
    CHECK(max_tokens == NULL || max_tokens->int_value >= 1);
    CHECK(config->seconds_per_unit == 0.0 ||
          (isfinite(config->seconds_per_unit) && config->seconds_per_unit > 0.0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    bounds b = {text, text + size};
    char error[512], again_error[512];
    int json = json_object_each(text, size, visit, &b, error, sizeof error);
    CHECK(json == 0 || json == -1);
    if (json != 0) {
        check_message(error);
        unsigned long byte;
        CHECK(sscanf(error, "byte %lu:", &byte) == 1 && byte >= 1 && byte <= size + 1);
    }
    static cli_config config, again; /* large: not on the stack */
    memset(&config, 0, sizeof config);
    memset(&again, 0, sizeof again);
    int status = cost_model_text_read(&config, text, size, "fuzz.json", error, sizeof error);
    int status_again =
        cost_model_text_read(&again, text, size, "fuzz.json", again_error, sizeof again_error);
    CHECK(status == status_again);
    if (status == 0) {
        CHECK(json == 0);
        check_settings(&config);
    } else {
        CHECK(status == CLI_EXIT_BAD_INPUT || status == CLI_EXIT_FAILURE);
        check_message(error);
        CHECK(strcmp(error, again_error) == 0);
    }
    return 0;
}
