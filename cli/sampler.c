/* sampler.c - the library's sampler and plans as the commands use them:
 * set up from the command line, narrowed to the steps and ranks asked for,
 * planned through checked calls. */
#include "sampler.h"

#include <inttypes.h>
#include <stdio.h>

#include "args.h"
#include "buckets.h"
#include "input.h"
#include "output.h"
#include "util/too_long.h"

/* Options go to the library, which owns their bounds. */

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
            snprintf(context, sizeof context, "%s %" PRId64, setting->source, setting->int_value);
    }
    if (status != BRS_OK) cli_library_error(status, context, brs_sampler_last_error(sampler));
}

static size_t longest_sample(const uint32_t *lengths, size_t count)
{
    size_t longest = 0;
    for (size_t i = 1; i < count; i++)
        if (lengths[i] > lengths[longest]) longest = i;
    return longest;
}

/* A cap the run cannot keep fails here, before anything is planned, and
 * names the least cap that plans every step of the epoch (the library's
 * check), so one retry suffices. A sample above the cap is named by its
 * line of FILE (the library names it by its 0-based index): the longest
 * one, whose length bounds the cap. Other errors are validate's. */
static void check_cap(const brs_sampler *sampler, const cli_config *config, const uint32_t *lengths,
                      size_t count)
{
    int64_t cap = sampler_get_int(sampler, BRS_OPT_MAX_TOKENS);
    if (cap <= 0) return;
    const option_setting *setting = cli_config_find(config, BRS_OPT_MAX_TOKENS);
    const char *source = setting != NULL ? setting->source : option_table_flag(BRS_OPT_MAX_TOKENS);
    uint64_t least, needed;
    brs_status status = brs_sampler_check_epoch(&least, &needed, sampler, config->epoch);
    if (status == BRS_ERR_CAP_INFEASIBLE && !config->cap_marks_rows) {
        char context[224];
        snprintf(context, sizeof context, "%s %" PRId64, source, cap);
        cli_library_error(status, context, brs_sampler_last_error(sampler));
    }
    size_t longest = longest_sample(lengths, count);
    if (lengths[longest] <= (uint64_t)cap) return;
    /* the library's sentence (util/too_long.c), in the command's words */
    char sample[320], limit[320], fix[704], text[1536];
    snprintf(sample, sizeof sample, "%s: the longest sample, sample %zu (line %zu),",
             lengths_display_name(config->lengths_path), longest, longest + 1);
    snprintf(limit, sizeof limit, "%s %" PRId64, source, cap);
    if (status == BRS_ERR_SAMPLE_TOO_LONG)
        snprintf(fix, sizeof fix,
                 "raise %s to at least %" PRIu64 " (the least that plans every step of epoch "
                 "%" PRIu64 ")",
                 source, least, config->epoch);
    else /* packed mode: only planning a step settles more than the sample itself */
        snprintf(fix, sizeof fix, "raise %s to at least %" PRIu32, source, lengths[longest]);
    brs_too_long_text(text, sizeof text,
                      &(struct brs_too_long){sample, lengths[longest], "", limit, fix});
    cli_bad_input("%s", text);
}

static void validate(brs_sampler *sampler)
{
    brs_status status = brs_sampler_validate(sampler);
    if (status != BRS_OK) cli_library_error(status, "", brs_sampler_last_error(sampler));
}

brs_sampler *sampler_setup(const cli_config *config, const uint32_t *lengths, size_t count)
{
    brs_sampler *sampler;
    brs_status status = brs_sampler_new(&sampler);
    if (status != BRS_OK) cli_library_error(status, "creating the sampler", "");
    status = brs_sampler_set_lengths(sampler, lengths, count, BRS_LENGTHS_BORROW);
    if (status != BRS_OK) cli_library_error(status, "lengths", brs_sampler_last_error(sampler));
    for (size_t i = 0; i < config->setting_count; i++) apply(sampler, &config->settings[i]);
    if (config->length_buckets != NULL) buckets_apply(sampler, config->length_buckets);
    check_cap(sampler, config, lengths, count);
    validate(sampler);
    return sampler;
}

void sampler_set_images(brs_sampler *sampler, const uint32_t *patches, const uint64_t *offsets,
                        size_t count)
{
    if (offsets == NULL || offsets[count] == 0) return; /* text only: plans as before */
    brs_status status = brs_sampler_set_encoder_loads(sampler, patches, offsets, count);
    if (status != BRS_OK) cli_library_error(status, "images", brs_sampler_last_error(sampler));
    validate(sampler);
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
    if (status != BRS_OK) cli_library_error(status, "", brs_sampler_last_error(sampler));
    return steps;
}

/* Narrow a command to the steps and ranks asked for. */

selection selection_make(const cli_config *config, const brs_sampler *sampler,
                         uint64_t steps_per_epoch)
{
    selection chosen = {0, steps_per_epoch, 0, sampler_get_int(sampler, BRS_OPT_DP_SIZE)};
    if (config->has_step) {
        if (config->step >= steps_per_epoch)
            cli_bad_input("--step %" PRIu64 " is out of range: the epoch has %" PRIu64
                          " steps, 0 to %" PRIu64,
                          config->step, steps_per_epoch, steps_per_epoch - 1);
        chosen.first_step = config->step;
        chosen.end_step = config->step + 1;
    }
    /* The library option rank is what the command narrows to. */
    const option_setting *rank = cli_config_find(config, BRS_OPT_RANK);
    if (rank != NULL) {
        chosen.first_rank = rank->int_value;
        chosen.end_rank = rank->int_value + 1;
    }
    return chosen;
}

/* Thin checked wrappers over brs_plan_*. */

brs_plan *planning_new(void)
{
    brs_plan *plan;
    brs_status status = brs_plan_new(&plan);
    if (status != BRS_OK) cli_library_error(status, "creating a plan", "");
    return plan;
}

void planning_compute(brs_plan *plan, const brs_sampler *sampler, uint64_t epoch, uint64_t step)
{
    brs_status status = brs_plan_compute(plan, sampler, epoch, step);
    if (status != BRS_OK) {
        /* The library's message names the step and says what to change. */
        char context[96];
        snprintf(context, sizeof context, "planning step %" PRIu64 " of epoch %" PRIu64, step,
                 epoch);
        const char *detail = brs_plan_last_error(plan);
        cli_library_error(status, detail[0] != '\0' ? "" : context, detail);
    }
}

int64_t planning_get_int(const brs_plan *plan, brs_plan_key key)
{
    int64_t value;
    brs_status status = brs_plan_get_int(&value, plan, key);
    if (status != BRS_OK)
        cli_failure("reading plan property %d: %s", (int)key, brs_plan_last_error(plan));
    return value;
}

micro_batch planning_micro_batch(const brs_plan *plan, int64_t rank, int64_t micro)
{
    micro_batch mb;
    brs_status status = brs_plan_micro_batch(&mb.indices, &mb.count, plan, rank, micro);
    if (status == BRS_OK)
        status = brs_plan_micro_batch_stats(&mb.padded_tokens, &mb.real_tokens, &mb.cost, plan,
                                            rank, micro);
    double encoder_cost;
    if (status == BRS_OK)
        status = brs_plan_micro_batch_encoder(&mb.encoder_tokens, &mb.images, &encoder_cost, plan,
                                              rank, micro);
    if (status != BRS_OK)
        cli_failure("reading micro-batch (rank %" PRId64 ", micro %" PRId64 "): %s", rank, micro,
                    brs_plan_last_error(plan));
    return mb;
}

double planning_get_double(const brs_plan *plan, brs_plan_key key)
{
    double value;
    brs_status status = brs_plan_get_double(&value, plan, key);
    if (status != BRS_OK)
        cli_failure("reading plan property %d: %s", (int)key, brs_plan_last_error(plan));
    return value;
}
