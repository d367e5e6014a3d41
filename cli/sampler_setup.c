/* sampler_setup.c - options go to the library, which owns their bounds. */
#include "sampler_setup.h"

#include <inttypes.h>
#include <stdio.h>

#include "fail.h"
#include "lengths_file.h"
#include "option_table.h"

static void apply(brs_sampler *sampler, const option_setting *setting)
{
    const library_option *option = option_table_find(setting->key);
    char context[224];
    brs_status status;
    if (option != NULL && option->form == OPTION_FORM_DOUBLE) {
        status = brs_sampler_set_double(sampler, setting->key, setting->double_value);
        snprintf(context, sizeof context, "%s %g", setting->source, setting->double_value);
    } else {
        status = brs_sampler_set_int(sampler, setting->key, setting->int_value);
        if (option != NULL && option->form == OPTION_FORM_SWITCH)
            snprintf(context, sizeof context, "%s", setting->source);
        else
            snprintf(context, sizeof context, "%s %" PRId64, setting->source,
                     setting->int_value);
    }
    if (status != BRS_OK)
        cli_library_error(status, context, brs_sampler_last_error(sampler));
}

/* The library rejects such a sample too, but names it by its 0-based
 * index; on the command line it is a line of FILE. */
static void check_cap(const brs_sampler *sampler, const cli_config *config,
                      const uint32_t *lengths, size_t count)
{
    int64_t cap = sampler_get_int(sampler, BRS_OPT_MAX_TOKENS);
    if (cap <= 0)
        return;
    const option_setting *setting = cli_config_find(config, BRS_OPT_MAX_TOKENS);
    const char *source = setting != NULL ? setting->source : option_table_flag(BRS_OPT_MAX_TOKENS);
    for (size_t i = 0; i < count; i++)
        if (lengths[i] > (uint64_t)cap)
            cli_bad_input("%s line %zu: a sample of %" PRIu32 " tokens is longer than %s %" PRId64
                          ": raise %s to at least %" PRIu32 " or truncate the sample",
                          lengths_display_name(config->lengths_path), i + 1, lengths[i], source,
                          cap, source, lengths[i]);
}

static void validate(brs_sampler *sampler)
{
    brs_status status = brs_sampler_validate(sampler);
    if (status != BRS_OK)
        cli_library_error(status, "", brs_sampler_last_error(sampler));
}

brs_sampler *sampler_setup(const cli_config *config, const uint32_t *lengths, size_t count)
{
    brs_sampler *sampler;
    brs_status status = brs_sampler_new(&sampler);
    if (status != BRS_OK)
        cli_library_error(status, "creating the sampler", "");
    status = brs_sampler_set_lengths(sampler, lengths, count, BRS_LENGTHS_BORROW);
    if (status != BRS_OK)
        cli_library_error(status, "lengths", brs_sampler_last_error(sampler));
    for (size_t i = 0; i < config->setting_count; i++)
        apply(sampler, &config->settings[i]);
    check_cap(sampler, config, lengths, count);
    validate(sampler);
    return sampler;
}

void sampler_set_int(brs_sampler *sampler, brs_option key, int64_t value)
{
    brs_status status = brs_sampler_set_int(sampler, key, value);
    if (status != BRS_OK)
        cli_library_error(status, option_table_flag(key), brs_sampler_last_error(sampler));
    validate(sampler);
}

int64_t sampler_get_int(const brs_sampler *sampler, brs_option key)
{
    int64_t value;
    brs_status status = brs_sampler_get_int(&value, sampler, key);
    if (status != BRS_OK)
        cli_library_error(status, "reading an option", brs_sampler_last_error(sampler));
    return value;
}

double sampler_get_double(const brs_sampler *sampler, brs_option key)
{
    double value;
    brs_status status = brs_sampler_get_double(&value, sampler, key);
    if (status != BRS_OK)
        cli_library_error(status, "reading an option", brs_sampler_last_error(sampler));
    return value;
}

uint64_t sampler_steps(brs_sampler *sampler)
{
    uint64_t steps;
    brs_status status = brs_sampler_steps_per_epoch(&steps, sampler);
    if (status != BRS_OK)
        cli_library_error(status, "", brs_sampler_last_error(sampler));
    return steps;
}
