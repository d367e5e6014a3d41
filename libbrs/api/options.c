/* options.c - the option table (options.def) as data: keys, names, types,
 * bounds, defaults and help, the get/set entry points, the brs_option_*
 * queries and the fingerprint's share of the configuration. */
#include "api/internal.h"
#include "draw/prng.h"

#include <stddef.h>
#include <string.h>

struct option_spec {
    brs_option key;
    const char *name;
    int32_t type;
    int64_t lower, upper, fallback;      /* BRS_OPTION_INT */
    double lower_d, upper_d, fallback_d; /* BRS_OPTION_DOUBLE */
    int32_t scope;                       /* BRS_OPTION_SCOPE_* */
    const char *keyword;                 /* the bindings' name where it is not `name`, or NULL */
    const char *help;
    const char *const *values; /* upper - lower + 1 names, or NULL */
    size_t offset;             /* of the field in struct brs_config */
};

/* One expansion per TYPE column of options.def. */
#define SPEC_BOUNDS_INT(lo, hi, def) BRS_OPTION_INT, (lo), (hi), (def), 0.0, 0.0, 0.0
#define SPEC_BOUNDS_DOUBLE(lo, hi, def) BRS_OPTION_DOUBLE, 0, 0, 0, (lo), (hi), (def)
#define SPEC_FIELD_INT(name) offsetof(struct brs_config, name)
#define SPEC_FIELD_DOUBLE(name) offsetof(struct brs_config, name##_micro)
#define BRS_VALUES(...) ((const char *const[]){__VA_ARGS__})
#define SPEC_SCOPE_RANK BRS_OPTION_SCOPE_RANK
#define SPEC_SCOPE_SPLIT BRS_OPTION_SCOPE_SPLIT
#define SPEC_SCOPE_RUN BRS_OPTION_SCOPE_RUN

static const struct option_spec options[] = {
#define BRS_OPTION(key, name, type, lower, upper, fallback, scope, keyword, help, values) \
    {key,                                                                                 \
     #name,                                                                               \
     SPEC_BOUNDS_##type(lower, upper, fallback),                                          \
     SPEC_SCOPE_##scope,                                                                  \
     keyword,                                                                             \
     help,                                                                                \
     values,                                                                              \
     SPEC_FIELD_##type(name)},
#include "options.def"
#undef BRS_OPTION
};

enum { OPTION_COUNT = sizeof options / sizeof options[0] };

static const struct option_spec *find_option(brs_option key)
{
    for (size_t i = 0; i < OPTION_COUNT; i++)
        if (options[i].key == key) return &options[i];
    return NULL;
}

/* Both field types are 64-bit words: an int64_t value or a uint64_t count
 * of 1e-6 units. */
static uint64_t read_field(const struct brs_config *config, const struct option_spec *spec)
{
    uint64_t word;
    memcpy(&word, (const char *)config + spec->offset, sizeof word);
    return word;
}

static void write_field(struct brs_config *config, const struct option_spec *spec, uint64_t word)
{
    memcpy((char *)config + spec->offset, &word, sizeof word);
}

/* Doubles are stored as integers of 1e-6 so that all cost arithmetic is
 * exact and identical on every machine. Values are >= 0 and <= 1e12 (bounds
 * checked), so rounding half up by truncation is exact and needs no libm. */
static uint64_t double_to_micro(double value)
{
    return (uint64_t)(value * 1e6 + 0.5);
}

double brs_micro_to_double(uint64_t micro)
{
    return (double)micro / 1e6;
}

/* The default as the config field holds it. */
static uint64_t default_word(const struct option_spec *spec)
{
    return spec->type == BRS_OPTION_DOUBLE ? double_to_micro(spec->fallback_d)
                                           : (uint64_t)spec->fallback;
}

void brs_config_defaults(struct brs_config *config)
{
    for (size_t i = 0; i < OPTION_COUNT; i++)
        write_field(config, &options[i], default_word(&options[i]));
}

static uint64_t mix(uint64_t h, uint64_t value)
{
    return brs_splitmix64(h ^ value);
}

static uint64_t mix_options(uint64_t h, const struct brs_config *config, int skip_split)
{
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        const struct option_spec *spec = &options[i];
        if (spec->scope == BRS_OPTION_SCOPE_RANK) continue;
        if (skip_split && spec->scope == BRS_OPTION_SCOPE_SPLIT) continue;
        uint64_t word = read_field(config, spec);
        if (spec->key <= BRS_OPT_LAST_OF_1_0) {
            h = mix(h, word);
        } else {
            /* Later options at their default leave 1.0's fingerprints as
             * they were; the key keeps two such options apart. */
            if (word != default_word(spec)) h = mix(mix(h, (uint64_t)spec->key), word);
        }
    }
    return h;
}

uint64_t brs_config_mix(uint64_t h, const struct brs_config *config)
{
    return mix_options(h, config, 0);
}

uint64_t brs_config_mix_stream(uint64_t h, const struct brs_config *config)
{
    return mix_options(h, config, 1);
}

/* ------------------------------------------------------------------------ */
/* The table, read by key or position (no handle: nothing to report into).  */
/* ------------------------------------------------------------------------ */

brs_status brs_option_count(size_t *count)
{
    if (!count) return BRS_ERR_NULL_POINTER;
    *count = OPTION_COUNT;
    return BRS_OK;
}

brs_status brs_option_key(brs_option *key, size_t index)
{
    if (!key) return BRS_ERR_NULL_POINTER;
    if (index >= OPTION_COUNT) return BRS_ERR_OUT_OF_RANGE;
    *key = options[index].key;
    return BRS_OK;
}

brs_status brs_option_find(brs_option *key, const char *name)
{
    if (!key || !name) return BRS_ERR_NULL_POINTER;
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        if (strcmp(options[i].name, name) == 0) {
            *key = options[i].key;
            return BRS_OK;
        }
    }
    return BRS_ERR_UNSUPPORTED;
}

/* The spec of `key` if it has type `type` (any type if type < 0). */
static brs_status typed_spec(const struct option_spec **spec, brs_option key, int32_t type)
{
    *spec = find_option(key);
    if (!*spec || (type >= 0 && (*spec)->type != type)) return BRS_ERR_UNSUPPORTED;
    return BRS_OK;
}

brs_status brs_option_name(const char **name, brs_option key)
{
    const struct option_spec *spec;
    if (!name) return BRS_ERR_NULL_POINTER;
    if (typed_spec(&spec, key, -1) != BRS_OK) return BRS_ERR_UNSUPPORTED;
    *name = spec->name;
    return BRS_OK;
}

brs_status brs_option_type(int32_t *type, brs_option key)
{
    const struct option_spec *spec;
    if (!type) return BRS_ERR_NULL_POINTER;
    if (typed_spec(&spec, key, -1) != BRS_OK) return BRS_ERR_UNSUPPORTED;
    *type = spec->type;
    return BRS_OK;
}

brs_status brs_option_help(const char **text, brs_option key)
{
    const struct option_spec *spec;
    if (!text) return BRS_ERR_NULL_POINTER;
    if (typed_spec(&spec, key, -1) != BRS_OK) return BRS_ERR_UNSUPPORTED;
    *text = spec->help;
    return BRS_OK;
}

brs_status brs_option_bounds_int(int64_t *lower, int64_t *upper, brs_option key)
{
    const struct option_spec *spec;
    if (!lower || !upper) return BRS_ERR_NULL_POINTER;
    if (typed_spec(&spec, key, BRS_OPTION_INT) != BRS_OK) return BRS_ERR_UNSUPPORTED;
    *lower = spec->lower;
    *upper = spec->upper;
    return BRS_OK;
}

brs_status brs_option_bounds_double(double *lower, double *upper, brs_option key)
{
    const struct option_spec *spec;
    if (!lower || !upper) return BRS_ERR_NULL_POINTER;
    if (typed_spec(&spec, key, BRS_OPTION_DOUBLE) != BRS_OK) return BRS_ERR_UNSUPPORTED;
    *lower = spec->lower_d;
    *upper = spec->upper_d;
    return BRS_OK;
}

brs_status brs_option_default_int(int64_t *value, brs_option key)
{
    const struct option_spec *spec;
    if (!value) return BRS_ERR_NULL_POINTER;
    if (typed_spec(&spec, key, BRS_OPTION_INT) != BRS_OK) return BRS_ERR_UNSUPPORTED;
    *value = spec->fallback;
    return BRS_OK;
}

brs_status brs_option_default_double(double *value, brs_option key)
{
    const struct option_spec *spec;
    if (!value) return BRS_ERR_NULL_POINTER;
    if (typed_spec(&spec, key, BRS_OPTION_DOUBLE) != BRS_OK) return BRS_ERR_UNSUPPORTED;
    *value = brs_micro_to_double(double_to_micro(spec->fallback_d)); /* as a sampler holds it */
    return BRS_OK;
}

brs_status brs_option_value_name(const char **name, brs_option key, int64_t value)
{
    const struct option_spec *spec;
    if (!name) return BRS_ERR_NULL_POINTER;
    if (typed_spec(&spec, key, BRS_OPTION_INT) != BRS_OK || !spec->values)
        return BRS_ERR_UNSUPPORTED;
    if (value < spec->lower || value > spec->upper) return BRS_ERR_OUT_OF_RANGE;
    *name = spec->values[value - spec->lower];
    return BRS_OK;
}

brs_status brs_option_value_find(int64_t *value, brs_option key, const char *name)
{
    const struct option_spec *spec;
    if (!value || !name) return BRS_ERR_NULL_POINTER;
    if (typed_spec(&spec, key, BRS_OPTION_INT) != BRS_OK || !spec->values)
        return BRS_ERR_UNSUPPORTED;
    for (int64_t v = spec->lower; v <= spec->upper; v++)
        if (strcmp(spec->values[v - spec->lower], name) == 0) {
            *value = v;
            return BRS_OK;
        }
    return BRS_ERR_INVALID_ARGUMENT;
}

brs_status brs_option_keyword(const char **keyword, brs_option key)
{
    if (!keyword) return BRS_ERR_NULL_POINTER;
    const struct option_spec *spec = find_option(key);
    if (!spec) return BRS_ERR_UNSUPPORTED;
    *keyword = spec->keyword ? spec->keyword : spec->name;
    return BRS_OK;
}

brs_status brs_option_scope(int32_t *scope, brs_option key)
{
    if (!scope) return BRS_ERR_NULL_POINTER;
    const struct option_spec *spec = find_option(key);
    if (!spec) return BRS_ERR_UNSUPPORTED;
    *scope = spec->scope;
    return BRS_OK;
}

/* ------------------------------------------------------------------------ */
/* Sampler options                                                           */
/* ------------------------------------------------------------------------ */

static brs_status wrong_key(const brs_sampler *sampler, brs_option key, const char *verb,
                            int32_t wanted)
{
    const struct option_spec *spec = find_option(key);
    if (!spec)
        return brs_fail(&sampler->message, BRS_ERR_UNSUPPORTED,
                        "unknown option key %d (this libbrs has keys 1..%d)", (int)key,
                        (int)options[OPTION_COUNT - 1].key);
    int is_double = spec->type == BRS_OPTION_DOUBLE;
    return brs_fail(&sampler->message, BRS_ERR_UNSUPPORTED,
                    "option %s is a%s option, not a%s one: use brs_sampler_%s_%s", spec->name,
                    is_double ? " double" : "n integer",
                    wanted == BRS_OPTION_DOUBLE ? " double" : "n integer", verb,
                    is_double ? "double" : "int");
}

/* The spec of key for a sampler call of type `wanted`, or the failure. */
static brs_status sampler_spec(const struct option_spec **spec, const brs_sampler *sampler,
                               brs_option key, int32_t wanted, const char *verb)
{
    if (typed_spec(spec, key, wanted) != BRS_OK) return wrong_key(sampler, key, verb, wanted);
    return BRS_OK;
}

static brs_status int_out_of_range(brs_sampler *sampler, const struct option_spec *spec,
                                   int64_t value)
{
    if (spec->values && spec->upper - spec->lower == 1)
        return brs_fail(&sampler->message, BRS_ERR_OUT_OF_RANGE,
                        "%s = %lld is out of range: use %lld (%s) or %lld (%s)", spec->name,
                        (long long)value, (long long)spec->lower, spec->values[0],
                        (long long)spec->upper, spec->values[1]);
    if (spec->values && spec->upper - spec->lower == 2)
        return brs_fail(&sampler->message, BRS_ERR_OUT_OF_RANGE,
                        "%s = %lld is out of range: use %lld (%s), %lld (%s) or %lld (%s)",
                        spec->name, (long long)value, (long long)spec->lower, spec->values[0],
                        (long long)spec->lower + 1, spec->values[1], (long long)spec->upper,
                        spec->values[2]);
    return brs_fail(&sampler->message, BRS_ERR_OUT_OF_RANGE,
                    "%s = %lld is out of range [%lld, %lld]", spec->name, (long long)value,
                    (long long)spec->lower, (long long)spec->upper);
}

brs_status brs_sampler_set_int(brs_sampler *sampler, brs_option key, int64_t value)
{
    if (!sampler) return BRS_ERR_NULL_POINTER;
    const struct option_spec *spec;
    brs_status status = sampler_spec(&spec, sampler, key, BRS_OPTION_INT, "set");
    if (status != BRS_OK) return status;
    if (value < spec->lower || value > spec->upper) return int_out_of_range(sampler, spec, value);
    write_field(&sampler->config, spec, (uint64_t)value);
    brs_message_clear(&sampler->message);
    return BRS_OK;
}

/* The resolution of a double option, 1e-6: a nonzero value that would round
 * to 0 is refused rather than silently turned off. */
#define MICRO_RESOLUTION 1e-6

brs_status brs_sampler_set_double(brs_sampler *sampler, brs_option key, double value)
{
    if (!sampler) return BRS_ERR_NULL_POINTER;
    const struct option_spec *spec;
    brs_status status = sampler_spec(&spec, sampler, key, BRS_OPTION_DOUBLE, "set");
    if (status != BRS_OK) return status;
    if (!(value >= spec->lower_d && value <= spec->upper_d))
        return brs_fail(&sampler->message, BRS_ERR_OUT_OF_RANGE, "%s = %g is out of range [%g, %g]",
                        spec->name, value, spec->lower_d, spec->upper_d);
    uint64_t micro = double_to_micro(value);
    if (micro == 0 && value != 0.0)
        return brs_fail(&sampler->message, BRS_ERR_OUT_OF_RANGE,
                        "%s = %g rounds to 0 at the resolution %g of %s: use 0 or a value of at "
                        "least %g",
                        spec->name, value, MICRO_RESOLUTION, spec->name, MICRO_RESOLUTION / 2);
    write_field(&sampler->config, spec, micro);
    brs_message_clear(&sampler->message);
    return BRS_OK;
}

brs_status brs_sampler_get_int(int64_t *out, const brs_sampler *sampler, brs_option key)
{
    if (!sampler) return BRS_ERR_NULL_POINTER;
    if (!out)
        return brs_fail(&sampler->message, BRS_ERR_NULL_POINTER,
                        "brs_sampler_get_int: out is NULL");
    const struct option_spec *spec;
    brs_status status = sampler_spec(&spec, sampler, key, BRS_OPTION_INT, "get");
    if (status != BRS_OK) return status;
    *out = (int64_t)read_field(&sampler->config, spec);
    return BRS_OK;
}

brs_status brs_sampler_get_double(double *out, const brs_sampler *sampler, brs_option key)
{
    if (!sampler) return BRS_ERR_NULL_POINTER;
    if (!out)
        return brs_fail(&sampler->message, BRS_ERR_NULL_POINTER,
                        "brs_sampler_get_double: out is NULL");
    const struct option_spec *spec;
    brs_status status = sampler_spec(&spec, sampler, key, BRS_OPTION_DOUBLE, "get");
    if (status != BRS_OK) return status;
    *out = brs_micro_to_double(read_field(&sampler->config, spec));
    return BRS_OK;
}
