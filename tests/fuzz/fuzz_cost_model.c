/*
 * fuzz_cost_model.c - libFuzzer harness of libbrs's cost-model reader
 * (brs_cost_model_file_*, libbrs/formats/cost_model_file.c over
 * libbrs/formats/json.c) over arbitrary bytes. The JSON reader is internal,
 * so this harness compiles its own copy of formats/json.c to check it alone.
 *
 * Checked on every input:
 * - the JSON reader returns 0 or -1, with a one-line printable message
 *   "byte N: ..." (N within the input) on -1, and hands out only members
 *   whose name and value lie inside the input, each name equal to itself;
 * - the cost-model reader returns BRS_OK or a status the format can give,
 *   with a one-line printable message naming the file; it accepts nothing
 *   the JSON reader refuses; an accepted file has alpha and intercept
 *   finite and >= 0, max_tokens >= 1 and seconds_per_unit > 0 when present,
 *   and every present key's JSON text lies inside the reader's copy;
 * - a second reading gives the same status and message.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brs.h"
#include "formats/internal.h"

#define CHECK(condition) \
    do { \
        if (!(condition)) \
            abort(); \
    } while (0)

#define NAME "fuzz.json"

static const char *const keys[] = {
    "format", "version", "alpha", "intercept", "max_tokens", "seconds_per_unit", "r2",
    "worst_residual", "source", "model", "device", "memory", "timing", "timings",
    "first_shape_seconds"};

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

static int visit(const brs_json_member *member, void *context)
{
    const bounds *b = context;
    CHECK(inside(b, member->key, member->key_length));
    CHECK(inside(b, member->value, member->value_length));
    CHECK(member->kind >= BRS_JSON_NULL && member->kind <= BRS_JSON_OBJECT);
    CHECK(brs_json_string_equal(member->key, member->key_length, member->key,
                                member->key_length));
    return 0;
}

static double get_double(const brs_cost_model_file *file, const char *key)
{
    double value = NAN;
    CHECK(brs_cost_model_file_get_double(&value, file, key) == BRS_OK);
    return value;
}

static int has(const brs_cost_model_file *file, const char *key)
{
    int32_t present = -1;
    CHECK(brs_cost_model_file_has(&present, file, key) == BRS_OK);
    CHECK(present == 0 || present == 1);
    return present;
}

static void check_values(const brs_cost_model_file *file, size_t size)
{
    double alpha = get_double(file, "alpha"), intercept = get_double(file, "intercept");
    CHECK(isfinite(alpha) && alpha >= 0.0 && isfinite(intercept) && intercept >= 0.0);
    int64_t max_tokens = 0;
    if (has(file, "max_tokens"))
        CHECK(brs_cost_model_file_get_int(&max_tokens, file, "max_tokens") == BRS_OK &&
              max_tokens >= 1);
    if (has(file, "seconds_per_unit"))
        CHECK(get_double(file, "seconds_per_unit") > 0.0);
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        const char *text = NULL;
        size_t length = 0;
        brs_status status = brs_cost_model_file_get_json(&text, &length, file, keys[k]);
        CHECK(status == (has(file, keys[k]) ? BRS_OK : BRS_ERR_STATE));
        CHECK(status != BRS_OK || (text != NULL && length >= 1 && length <= size));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    bounds b = {text, text + size};
    char error[512];
    int json = brs_json_object_each(text, size, visit, &b, error, sizeof error);
    CHECK(json == 0 || json == -1);
    if (json != 0) {
        check_message(error);
        unsigned long byte;
        CHECK(sscanf(error, "byte %lu:", &byte) == 1 && byte >= 1 && byte <= size + 1);
    }
    brs_cost_model_file *file = NULL, *again = NULL;
    CHECK(brs_cost_model_file_new(&file) == BRS_OK && brs_cost_model_file_new(&again) == BRS_OK);
    brs_status status = brs_cost_model_file_parse(file, text, size, NAME);
    CHECK(brs_cost_model_file_parse(again, text, size, NAME) == status);
    if (status == BRS_OK) {
        CHECK(json == 0);
        check_values(file, size);
    } else {
        CHECK(status == BRS_ERR_INVALID_ARGUMENT || status == BRS_ERR_TOO_LARGE ||
              status == BRS_ERR_NO_MEMORY);
        check_message(brs_cost_model_file_last_error(file));
        CHECK(strncmp(brs_cost_model_file_last_error(file), NAME ": ", strlen(NAME) + 2) == 0);
        CHECK(strcmp(brs_cost_model_file_last_error(file),
                     brs_cost_model_file_last_error(again)) == 0);
    }
    brs_cost_model_file_free(file);
    brs_cost_model_file_free(again);
    return 0;
}
