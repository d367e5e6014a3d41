/* options.c - the option table: keys, types, bounds and defaults. */
#include "internal.h"


struct option_spec {
    brs_option key;
    const char *name;
    int is_double;
    int64_t lower, upper, fallback;
    double lower_d, upper_d, fallback_d;
};

#define INT_OPTION(key, name, lo, hi, def) {key, name, 0, lo, hi, def, 0.0, 0.0, 0.0}
#define DOUBLE_OPTION(key, name, lo, hi, def) {key, name, 1, 0, 0, 0, lo, hi, def}

static const struct option_spec options[] = {
    INT_OPTION(BRS_OPT_BATCH_SIZE, "batch_size", 1, BRS_MAX_STEP_SAMPLES, 8),
    INT_OPTION(BRS_OPT_GRAD_ACCUM, "grad_accum", 1, BRS_MAX_MICRO_BATCHES, 1),
    INT_OPTION(BRS_OPT_DP_SIZE, "dp_size", 1, BRS_MAX_MICRO_BATCHES, 1),
    INT_OPTION(BRS_OPT_RANK, "rank", 0, BRS_MAX_MICRO_BATCHES - 1, 0),
    INT_OPTION(BRS_OPT_SEED, "seed", 0, INT64_MAX, 0),
    INT_OPTION(BRS_OPT_SHUFFLE, "shuffle", 0, 1, 1),
    INT_OPTION(BRS_OPT_DROP_LAST, "drop_last", 0, 1, 1),
    INT_OPTION(BRS_OPT_MAX_TOKENS, "max_tokens", 0, INT64_MAX, 0),
    INT_OPTION(BRS_OPT_PACKED, "packed", 0, 1, 0),
    DOUBLE_OPTION(BRS_OPT_ALPHA, "alpha", 0.0, 1000.0, 0.001),
    DOUBLE_OPTION(BRS_OPT_INTERCEPT, "intercept", 0.0, 1e12, 0.0),
};

static const struct option_spec *find_option(brs_option key)
{
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++)
        if (options[i].key == key) return &options[i];
    return NULL;
}

static int64_t *int_field(struct brs_config *config, brs_option key)
{
    switch (key) {
    case BRS_OPT_BATCH_SIZE: return &config->batch_size;
    case BRS_OPT_GRAD_ACCUM: return &config->grad_accum;
    case BRS_OPT_DP_SIZE: return &config->dp_size;
    case BRS_OPT_RANK: return &config->rank;
    case BRS_OPT_SEED: return &config->seed;
    case BRS_OPT_SHUFFLE: return &config->shuffle;
    case BRS_OPT_DROP_LAST: return &config->drop_last;
    case BRS_OPT_MAX_TOKENS: return &config->max_tokens;
    case BRS_OPT_PACKED: return &config->packed;
    default: return NULL;
    }
}

static uint64_t *double_field(struct brs_config *config, brs_option key)
{
    switch (key) {
    case BRS_OPT_ALPHA: return &config->alpha_micro;
    case BRS_OPT_INTERCEPT: return &config->intercept_micro;
    default: return NULL;
    }
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

void brs_config_defaults(struct brs_config *config)
{
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        if (options[i].is_double)
            *double_field(config, options[i].key) = double_to_micro(options[i].fallback_d);
        else
            *int_field(config, options[i].key) = options[i].fallback;
    }
}

brs_status brs_option_bounds_int(int64_t *lower, int64_t *upper, brs_option key)
{
    if (!lower || !upper) return BRS_ERR_NULL_POINTER;
    const struct option_spec *spec = find_option(key);
    if (!spec || spec->is_double) return BRS_ERR_UNSUPPORTED;
    *lower = spec->lower;
    *upper = spec->upper;
    return BRS_OK;
}

brs_status brs_option_bounds_double(double *lower, double *upper, brs_option key)
{
    if (!lower || !upper) return BRS_ERR_NULL_POINTER;
    const struct option_spec *spec = find_option(key);
    if (!spec || !spec->is_double) return BRS_ERR_UNSUPPORTED;
    *lower = spec->lower_d;
    *upper = spec->upper_d;
    return BRS_OK;
}

static brs_status unsupported(brs_sampler *sampler, brs_option key, const char *wanted)
{
    const struct option_spec *spec = find_option(key);
    if (spec)
        brs_message_set(sampler->message, "option %s is a %s option; use brs_sampler_%s_%s",
                        spec->name, spec->is_double ? "double" : "integer", wanted,
                        spec->is_double ? "double" : "int");
    else
        brs_message_set(sampler->message, "unknown option key %d", (int)key);
    return BRS_ERR_UNSUPPORTED;
}

brs_status brs_sampler_set_int(brs_sampler *sampler, brs_option key, int64_t value)
{
    if (!sampler) return BRS_ERR_NULL_POINTER;
    const struct option_spec *spec = find_option(key);
    if (!spec || spec->is_double) return unsupported(sampler, key, "set");
    if (value < spec->lower || value > spec->upper) {
        brs_message_set(sampler->message, "%s = %lld is out of range [%lld, %lld]", spec->name,
                        (long long)value, (long long)spec->lower, (long long)spec->upper);
        return BRS_ERR_OUT_OF_RANGE;
    }
    *int_field(&sampler->config, key) = value;
    sampler->message[0] = '\0';
    return BRS_OK;
}

brs_status brs_sampler_set_double(brs_sampler *sampler, brs_option key, double value)
{
    if (!sampler) return BRS_ERR_NULL_POINTER;
    const struct option_spec *spec = find_option(key);
    if (!spec || !spec->is_double) return unsupported(sampler, key, "set");
    if (!(value >= spec->lower_d && value <= spec->upper_d)) {
        brs_message_set(sampler->message, "%s = %g is out of range [%g, %g]", spec->name, value,
                        spec->lower_d, spec->upper_d);
        return BRS_ERR_OUT_OF_RANGE;
    }
    *double_field(&sampler->config, key) = double_to_micro(value);
    sampler->message[0] = '\0';
    return BRS_OK;
}

brs_status brs_sampler_get_int(int64_t *out, const brs_sampler *sampler, brs_option key)
{
    if (!out || !sampler) return BRS_ERR_NULL_POINTER;
    const struct option_spec *spec = find_option(key);
    if (!spec || spec->is_double) return BRS_ERR_UNSUPPORTED;
    struct brs_config copy = sampler->config;
    *out = *int_field(&copy, key);
    return BRS_OK;
}

brs_status brs_sampler_get_double(double *out, const brs_sampler *sampler, brs_option key)
{
    if (!out || !sampler) return BRS_ERR_NULL_POINTER;
    const struct option_spec *spec = find_option(key);
    if (!spec || !spec->is_double) return BRS_ERR_UNSUPPORTED;
    struct brs_config copy = sampler->config;
    *out = brs_micro_to_double(*double_field(&copy, key));
    return BRS_OK;
}
