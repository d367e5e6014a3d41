/* cost_model_file.c - the cost-model-file handle: the JSON object that
 * brs.calibrate and CostModel.save write, checked key by key in the order
 * of docs/formats.md (the first problem is the one reported), its values
 * handed out by key name. The JSON itself is formats/json.c's. */
#include "brs.h"
#include "formats/internal.h"
#include "util/message.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COST_MODEL_FORMAT "brs-cost-model"
#define COST_MODEL_VERSION 1

/* The keys checked, in the order of the checks. */
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
    KEY_ENCODER_WEIGHT,
    KEY_ENCODER_ALPHA,
    KEY_ENCODER_INTERCEPT,
    KEY_MAX_ENCODER_TOKENS,
    KEY_ENCODER,
    KEY_CP_COMM_COST,
    KEY_CP_LATENCY,
    KEY_COUNT
};
static const char *const key_names[KEY_COUNT] = {"format",
                                                 "version",
                                                 "alpha",
                                                 "intercept",
                                                 "max_tokens",
                                                 "seconds_per_unit",
                                                 "r2",
                                                 "worst_residual",
                                                 "source",
                                                 "model",
                                                 "device",
                                                 "memory",
                                                 "timing",
                                                 "timings",
                                                 "first_shape_seconds",
                                                 "encoder_weight",
                                                 "encoder_alpha",
                                                 "encoder_intercept",
                                                 "max_encoder_tokens",
                                                 "encoder",
                                                 "cp_comm_cost",
                                                 "cp_latency"};

struct brs_cost_model_file {
    char *text; /* a copy of the accepted bytes: members point into it */
    brs_json_member members[KEY_COUNT];
    int seen[KEY_COUNT];
    double numbers[KEY_COUNT]; /* the checked value of each number key read as a double */
    int64_t max_tokens, max_encoder_tokens;
    int ready;      /* the latest parse accepted the file */
    char name[200]; /* the file's name as messages give it, escaped */
    struct brs_message message;
};

static const char null_handle_message[] =
    "brs_cost_model_file_last_error: " BRS_MESSAGE_NULL_HANDLE;

/* Refuse the file: "<name>: <problem>" as the message. */
#define bad(f, code, ...) brs_fail_about(&(f)->message, (code), (f)->name, ": ", __VA_ARGS__)

static int remember(const brs_json_member *member, void *context)
{
    brs_cost_model_file *f = context;
    /* brs_json_object_each has refused a name given twice already. */
    for (int key = 0; key < KEY_COUNT; key++)
        if (brs_json_string_equal(member->key, member->key_length, key_names[key],
                                  strlen(key_names[key]))) {
            f->seen[key] = 1;
            f->members[key] = *member;
        }
    return 0;
}

/* The value's text as a C string (numbers are short; longer is cut). */
static void value_text(char *out, size_t size, const brs_json_member *member)
{
    brs_text_escape(out, size, member->value, member->value_length);
}

/* The value as a message shows it: a string in quotes. */
static void value_shown(char *out, size_t size, const brs_json_member *member)
{
    char text[128];
    value_text(text, sizeof text, member);
    snprintf(out, size, member->kind == BRS_JSON_STRING ? "\"%s\"" : "%s", text);
}

static int is_integer(const brs_json_member *member, int64_t *out)
{
    return member->kind == BRS_JSON_NUMBER &&
           brs_decimal_int64(member->value, member->value_length, out) == BRS_DECIMAL_OK;
}

static int is_string(const brs_json_member *member, const char *text)
{
    return member->kind == BRS_JSON_STRING &&
           brs_json_string_equal(member->value, member->value_length, text, strlen(text));
}

static brs_status check_header(brs_cost_model_file *f)
{
    char text[128];
    int64_t version;
    if (!f->seen[KEY_FORMAT])
        return bad(f, BRS_ERR_INVALID_ARGUMENT, "key \"format\" is missing (expected \"%s\")",
                   COST_MODEL_FORMAT);
    if (!is_string(&f->members[KEY_FORMAT], COST_MODEL_FORMAT)) {
        value_shown(text, sizeof text, &f->members[KEY_FORMAT]);
        return bad(f, BRS_ERR_INVALID_ARGUMENT,
                   "key \"format\" is %s, expected \"%s\": this is not a cost-model file", text,
                   COST_MODEL_FORMAT);
    }
    if (!f->seen[KEY_VERSION])
        return bad(f, BRS_ERR_INVALID_ARGUMENT, "key \"version\" is missing (expected %d)",
                   COST_MODEL_VERSION);
    if (!is_integer(&f->members[KEY_VERSION], &version) || version != COST_MODEL_VERSION) {
        value_shown(text, sizeof text, &f->members[KEY_VERSION]);
        return bad(f, BRS_ERR_INVALID_ARGUMENT,
                   "key \"version\" is %s, but this brs reads version %d", text,
                   COST_MODEL_VERSION);
    }
    return BRS_OK;
}

/* Whether key is absent or null: every optional key means the same then. */
static int absent(const brs_cost_model_file *f, int key)
{
    return !f->seen[key] || f->members[key].kind == BRS_JSON_NULL;
}

/* A finite number into f->numbers[key]; the caller has checked that the
 * key is set. -0 reads as 0. */
static brs_status read_double(brs_cost_model_file *f, int key)
{
    char text[128];
    const brs_json_member *member = &f->members[key];
    if (member->kind != BRS_JSON_NUMBER) {
        value_shown(text, sizeof text, member);
        return bad(f, BRS_ERR_INVALID_ARGUMENT, "key \"%s\" is %s, not a number", key_names[key],
                   text);
    }
    double value;
    if (brs_decimal_double(member->value, member->value_length, &value) != BRS_DECIMAL_OK) {
        value_text(text, sizeof text, member);
        return bad(f, BRS_ERR_INVALID_ARGUMENT, "key \"%s\" is %s, not a finite number",
                   key_names[key], text);
    }
    f->numbers[key] = value + 0.0;
    return BRS_OK;
}

/* A number of an optional key must pass `rule` (>= 0, or > 0 when zero is
 * not allowed), which the message states. */
static brs_status check_bound(brs_cost_model_file *f, int key, int zero_allowed, const char *rule)
{
    double value = f->numbers[key];
    if (zero_allowed ? value >= 0.0 : value > 0.0) return BRS_OK;
    char text[128];
    value_text(text, sizeof text, &f->members[key]);
    return bad(f, BRS_ERR_INVALID_ARGUMENT, "key \"%s\" is %s, out of range: it must be %s",
               key_names[key], text, rule);
}

/* alpha and intercept: required, finite and >= 0. */
static brs_status read_cost_term(brs_cost_model_file *f, int key)
{
    if (!f->seen[key])
        return bad(f, BRS_ERR_INVALID_ARGUMENT, "key \"%s\" is missing", key_names[key]);
    brs_status status = read_double(f, key);
    return status != BRS_OK ? status : check_bound(f, key, 1, "a finite number >= 0");
}

/* max_tokens, max_encoder_tokens: absent, null, or an integer >= 1. */
static brs_status read_cap(brs_cost_model_file *f, int key, int64_t *cap)
{
    const brs_json_member *member = &f->members[key];
    if (absent(f, key) || (is_integer(member, cap) && *cap >= 1)) return BRS_OK;
    char text[128];
    value_shown(text, sizeof text, member);
    return bad(f, BRS_ERR_INVALID_ARGUMENT, "key \"%s\" is %s, not an integer >= 1 or null",
               key_names[key], text);
}

/* The encoder's terms (files written before images were priced have none)
 * and the context-parallel ones (files of models not timed on a CP group
 * have none): absent, null, or a finite number >= 0; and the encoder's cap. */
static brs_status read_optional_terms(brs_cost_model_file *f)
{
    static const int terms[] = {KEY_ENCODER_WEIGHT, KEY_ENCODER_ALPHA, KEY_ENCODER_INTERCEPT,
                                KEY_CP_COMM_COST, KEY_CP_LATENCY};
    for (size_t i = 0; i < sizeof terms / sizeof terms[0]; i++) {
        if (absent(f, terms[i])) continue;
        brs_status status = read_double(f, terms[i]);
        if (status == BRS_OK) status = check_bound(f, terms[i], 1, "a finite number >= 0, or null");
        if (status != BRS_OK) return status;
    }
    return read_cap(f, KEY_MAX_ENCODER_TOKENS, &f->max_encoder_tokens);
}

/* An optional number of seconds: absent or null (a model that was not
 * calibrated; a first run not measured), else a finite number within `rule`. */
static brs_status read_seconds(brs_cost_model_file *f, int key, int zero_allowed, const char *rule)
{
    if (absent(f, key)) return BRS_OK;
    brs_status status = read_double(f, key);
    return status != BRS_OK ? status : check_bound(f, key, zero_allowed, rule);
}

/* source: one of the three a CostModel can have. */
static brs_status check_source(brs_cost_model_file *f)
{
    static const char *const sources[] = {"calibrated", "analytic", "fixed"};
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++)
        if (is_string(&f->members[KEY_SOURCE], sources[i])) return BRS_OK;
    char text[128];
    value_shown(text, sizeof text, &f->members[KEY_SOURCE]);
    return bad(f, BRS_ERR_INVALID_ARGUMENT,
               "key \"source\" is %s, not one of \"calibrated\", \"analytic\", \"fixed\"", text);
}

/* The keys the planner does not use but a CostModel keeps (the record of
 * the calibration): their types, and numbers finite. */
static brs_status check_record(brs_cost_model_file *f)
{
    static const struct {
        int key;
        brs_json_kind kind;
        const char *what;
    } expected[] = {
        {KEY_R2, BRS_JSON_NUMBER, "a number"},
        {KEY_WORST_RESIDUAL, BRS_JSON_NUMBER, "a number"},
        {KEY_SOURCE, BRS_JSON_STRING, "a string"},
        {KEY_MODEL, BRS_JSON_STRING, "a string"},
        {KEY_DEVICE, BRS_JSON_STRING, "a string"},
        {KEY_MEMORY, BRS_JSON_OBJECT, "an object"},
        {KEY_TIMING, BRS_JSON_OBJECT, "an object"},
        {KEY_TIMINGS, BRS_JSON_ARRAY, "an array"},
        {KEY_ENCODER, BRS_JSON_OBJECT, "an object"},
    };
    char text[128];
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        int key = expected[i].key;
        if (absent(f, key)) continue;
        if (f->members[key].kind != expected[i].kind) {
            value_shown(text, sizeof text, &f->members[key]);
            return bad(f, BRS_ERR_INVALID_ARGUMENT, "key \"%s\" is %s, not %s or null",
                       key_names[key], text, expected[i].what);
        }
        if (expected[i].kind == BRS_JSON_NUMBER && read_double(f, key) != BRS_OK)
            return BRS_ERR_INVALID_ARGUMENT;
    }
    return absent(f, KEY_SOURCE) ? BRS_OK : check_source(f);
}

static brs_status check_keys(brs_cost_model_file *f)
{
    brs_status status = check_header(f);
    if (status == BRS_OK) status = read_cost_term(f, KEY_ALPHA);
    if (status == BRS_OK) status = read_cost_term(f, KEY_INTERCEPT);
    if (status == BRS_OK) status = read_cap(f, KEY_MAX_TOKENS, &f->max_tokens);
    if (status == BRS_OK)
        status = read_seconds(f, KEY_SECONDS_PER_UNIT, 0,
                              "a finite number above 0, or null when the model was not "
                              "calibrated");
    if (status == BRS_OK)
        status = read_seconds(f, KEY_FIRST_SHAPE_SECONDS, 1, "a finite number >= 0, or null");
    if (status == BRS_OK) status = read_optional_terms(f);
    return status == BRS_OK ? check_record(f) : status;
}

static void forget(brs_cost_model_file *f)
{
    free(f->text);
    f->text = NULL;
    f->ready = 0;
    memset(f->seen, 0, sizeof f->seen);
}

brs_status brs_cost_model_file_new(brs_cost_model_file **out)
{
    if (!out) return BRS_ERR_NULL_POINTER;
    *out = calloc(1, sizeof **out);
    return *out ? BRS_OK : BRS_ERR_NO_MEMORY;
}

void brs_cost_model_file_free(brs_cost_model_file *file)
{
    if (!file) return;
    forget(file);
    free(file);
}

/* The JSON of the copy, then its keys. */
static brs_status read_copy(brs_cost_model_file *f, size_t size)
{
    char problem[256];
    if (brs_json_object_each(f->text, size, remember, f, problem, sizeof problem) != 0)
        return bad(f, BRS_ERR_INVALID_ARGUMENT, "not a valid JSON cost-model file at %s", problem);
    return check_keys(f);
}

brs_status brs_cost_model_file_parse(brs_cost_model_file *file, const char *bytes, size_t size,
                                     const char *name)
{
    if (!file) return BRS_ERR_NULL_POINTER;
    if ((!bytes && size > 0) || !name)
        return brs_fail(&file->message, BRS_ERR_NULL_POINTER, "brs_cost_model_file_parse: %s",
                        !name ? "name is NULL" : "bytes is NULL (size 0 is an empty file)");
    forget(file);
    brs_message_clear(&file->message);
    brs_text_escape(file->name, sizeof file->name, name, strlen(name));
    if (size > BRS_COST_MODEL_FILE_MAX_BYTES)
        return bad(file, BRS_ERR_TOO_LARGE, "larger than %d bytes: this is not a cost-model file",
                   BRS_COST_MODEL_FILE_MAX_BYTES);
    file->text = malloc(size + 1);
    if (!file->text) return bad(file, BRS_ERR_NO_MEMORY, "cannot read it: out of memory");
    if (size > 0) memcpy(file->text, bytes, size);
    brs_status status = read_copy(file, size);
    if (status != BRS_OK) forget(file);
    file->ready = status == BRS_OK;
    return status;
}

/* The key named `key` of a parsed file, or a status with the message. */
static brs_status find_key(int *found, const brs_cost_model_file *f, const char *key,
                           const char *call)
{
    if (!f->ready)
        return brs_fail(&f->message, BRS_ERR_STATE,
                        "%s: no cost-model file was read: parse one "
                        "first",
                        call);
    for (int k = 0; k < KEY_COUNT; k++)
        if (strcmp(key, key_names[k]) == 0) {
            *found = k;
            return BRS_OK;
        }
    char shown[64];
    brs_text_escape(shown, sizeof shown, key, strlen(key));
    return brs_fail(&f->message, BRS_ERR_UNSUPPORTED,
                    "%s: \"%s\" is not a key of the cost-model format (docs/formats.md)", call,
                    shown);
}

/* find_key, then the key must hold a value. */
static brs_status find_value(int *found, const brs_cost_model_file *f, const char *key,
                             const char *call)
{
    brs_status status = find_key(found, f, key, call);
    if (status == BRS_OK && absent(f, *found))
        return brs_fail(&f->message, BRS_ERR_STATE, "%s: key \"%s\" is absent or null in %s", call,
                        key_names[*found], f->name);
    return status;
}

brs_status brs_cost_model_file_has(int32_t *present, const brs_cost_model_file *file,
                                   const char *key)
{
    if (!file) return BRS_ERR_NULL_POINTER;
    if (!present || !key)
        return brs_fail(&file->message, BRS_ERR_NULL_POINTER,
                        "brs_cost_model_file_has: %s is "
                        "NULL",
                        !present ? "present" : "key");
    int found;
    brs_status status = find_key(&found, file, key, "brs_cost_model_file_has");
    if (status == BRS_OK) *present = !absent(file, found);
    return status;
}

/* The keys whose value is a number read as a double. */
static int is_double_key(int key)
{
    return key == KEY_ALPHA || key == KEY_INTERCEPT || key == KEY_SECONDS_PER_UNIT ||
           key == KEY_FIRST_SHAPE_SECONDS || key == KEY_R2 || key == KEY_WORST_RESIDUAL ||
           key == KEY_ENCODER_WEIGHT || key == KEY_ENCODER_ALPHA || key == KEY_ENCODER_INTERCEPT ||
           key == KEY_CP_COMM_COST || key == KEY_CP_LATENCY;
}

brs_status brs_cost_model_file_get_double(double *value, const brs_cost_model_file *file,
                                          const char *key)
{
    if (!file) return BRS_ERR_NULL_POINTER;
    if (!value || !key)
        return brs_fail(&file->message, BRS_ERR_NULL_POINTER,
                        "brs_cost_model_file_get_double: %s is NULL", !value ? "value" : "key");
    int found;
    brs_status status = find_value(&found, file, key, "brs_cost_model_file_get_double");
    if (status != BRS_OK) return status;
    if (!is_double_key(found))
        return brs_fail(&file->message, BRS_ERR_UNSUPPORTED,
                        "brs_cost_model_file_get_double: key \"%s\" is not a real number (%s)",
                        key_names[found],
                        found == KEY_VERSION || found == KEY_MAX_TOKENS ||
                                found == KEY_MAX_ENCODER_TOKENS
                            ? "an integer: brs_cost_model_file_get_int"
                            : "read it with brs_cost_model_file_get_json");
    *value = file->numbers[found];
    return BRS_OK;
}

brs_status brs_cost_model_file_get_int(int64_t *value, const brs_cost_model_file *file,
                                       const char *key)
{
    if (!file) return BRS_ERR_NULL_POINTER;
    if (!value || !key)
        return brs_fail(&file->message, BRS_ERR_NULL_POINTER,
                        "brs_cost_model_file_get_int: %s is NULL", !value ? "value" : "key");
    int found;
    brs_status status = find_value(&found, file, key, "brs_cost_model_file_get_int");
    if (status != BRS_OK) return status;
    if (found != KEY_VERSION && found != KEY_MAX_TOKENS && found != KEY_MAX_ENCODER_TOKENS)
        return brs_fail(&file->message, BRS_ERR_UNSUPPORTED,
                        "brs_cost_model_file_get_int: key \"%s\" is not an integer",
                        key_names[found]);
    *value = found == KEY_VERSION      ? COST_MODEL_VERSION
             : found == KEY_MAX_TOKENS ? file->max_tokens
                                       : file->max_encoder_tokens;
    return BRS_OK;
}

brs_status brs_cost_model_file_get_json(const char **text, size_t *length,
                                        const brs_cost_model_file *file, const char *key)
{
    if (!file) return BRS_ERR_NULL_POINTER;
    if (!text || !length || !key)
        return brs_fail(&file->message, BRS_ERR_NULL_POINTER,
                        "brs_cost_model_file_get_json: %s is NULL",
                        !text     ? "text"
                        : !length ? "length"
                                  : "key");
    int found;
    brs_status status = find_value(&found, file, key, "brs_cost_model_file_get_json");
    if (status != BRS_OK) return status;
    const brs_json_member *member = &file->members[found];
    /* A string is handed out without its quotes; they are in the text around it. */
    int quoted = member->kind == BRS_JSON_STRING;
    *text = member->value - quoted;
    *length = member->value_length + 2 * (size_t)quoted;
    return BRS_OK;
}

const char *brs_cost_model_file_last_error(const brs_cost_model_file *file)
{
    return file ? brs_message_text(&file->message) : null_handle_message;
}
