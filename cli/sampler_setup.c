/* sampler_setup.c - options go to the library, which owns their bounds. */
#include "sampler_setup.h"

#include <inttypes.h>
#include <stdio.h>

#include "fail.h"
#include "lengths_file.h"

typedef struct int_option {
    const char *flag; /* for messages */
    brs_option key;
    int64_t value;
} int_option;

typedef struct double_option {
    const char *flag;
    brs_option key;
    double value;
} double_option;

static void set_int(brs_sampler *sampler, const int_option *option)
{
    brs_status status = brs_sampler_set_int(sampler, option->key, option->value);
    if (status != BRS_OK) {
        char context[96];
        snprintf(context, sizeof context, "%s %" PRId64, option->flag, option->value);
        cli_library_error(status, context, brs_sampler_last_error(sampler));
    }
}

static void set_double(brs_sampler *sampler, const double_option *option)
{
    brs_status status = brs_sampler_set_double(sampler, option->key, option->value);
    if (status != BRS_OK) {
        char context[96];
        snprintf(context, sizeof context, "%s %g", option->flag, option->value);
        cli_library_error(status, context, brs_sampler_last_error(sampler));
    }
}

static void set_options(brs_sampler *sampler, const cli_config *config)
{
    /* --rank is only a filter of the output, but setting it lets the
     * library check rank < dp-size with its own message. */
    const int_option ints[] = {
        {"--batch-size", BRS_OPT_BATCH_SIZE, config->batch_size},
        {"--grad-accum", BRS_OPT_GRAD_ACCUM, config->grad_accum},
        {"--dp-size", BRS_OPT_DP_SIZE, config->dp_size},
        {"--rank", BRS_OPT_RANK, config->has_rank ? config->rank : 0},
        {"--seed", BRS_OPT_SEED, config->seed},
        {"--no-shuffle", BRS_OPT_SHUFFLE, config->shuffle},
        {"--no-drop-last", BRS_OPT_DROP_LAST, config->drop_last},
        {"--max-tokens", BRS_OPT_MAX_TOKENS, config->max_tokens},
        {"--packed", BRS_OPT_PACKED, config->packed},
    };
    const double_option doubles[] = {
        {"--alpha", BRS_OPT_ALPHA, config->alpha},
        {"--intercept", BRS_OPT_INTERCEPT, config->intercept},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        set_int(sampler, &ints[i]);
    for (size_t i = 0; i < sizeof doubles / sizeof doubles[0]; i++)
        set_double(sampler, &doubles[i]);
}

/* The library rejects such a sample too, but names it by its 0-based
 * index; on the command line it is a line of FILE. */
static void check_cap(const cli_config *config, const uint32_t *lengths, size_t count)
{
    if (config->max_tokens <= 0)
        return;
    for (size_t i = 0; i < count; i++)
        if (lengths[i] > (uint64_t)config->max_tokens)
            cli_bad_input("%s line %zu: a sample of %" PRIu32 " tokens is longer than "
                          "--max-tokens %" PRId64 ": raise --max-tokens to at least %" PRIu32
                          " or truncate the sample",
                          lengths_display_name(config->lengths_path), i + 1, lengths[i], config->max_tokens,
                          lengths[i]);
}

brs_sampler *sampler_setup(const cli_config *config, const uint32_t *lengths, size_t count)
{
    if (config->epoch < 0)
        cli_bad_input("--epoch %" PRId64 " is negative; epochs count from 0", config->epoch);
    if (config->has_step && config->step < 0)
        cli_bad_input("--step %" PRId64 " is negative; steps count from 0", config->step);
    check_cap(config, lengths, count);
    brs_sampler *sampler;
    brs_status status = brs_sampler_new(&sampler);
    if (status != BRS_OK)
        cli_library_error(status, "creating the sampler", "");
    status = brs_sampler_set_lengths(sampler, lengths, count, BRS_LENGTHS_BORROW);
    if (status != BRS_OK)
        cli_library_error(status, "lengths", brs_sampler_last_error(sampler));
    set_options(sampler, config);
    status = brs_sampler_validate(sampler);
    if (status != BRS_OK)
        cli_library_error(status, "", brs_sampler_last_error(sampler));
    return sampler;
}

uint64_t sampler_steps(brs_sampler *sampler)
{
    uint64_t steps;
    brs_status status = brs_sampler_steps_per_epoch(&steps, sampler);
    if (status != BRS_OK)
        cli_library_error(status, "", brs_sampler_last_error(sampler));
    return steps;
}
