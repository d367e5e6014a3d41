/* demo_command.c - `brs demo`: the comparison at a realistic configuration. */
#include "demo_command.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "compare_report.h"
#include "comparison.h"
#include "demo_dataset.h"
#include "fail.h"
#include "options.h"
#include "output_file.h"
#include "sampler_setup.h"
#include "selection.h"
#include "text_wrap.h"
#include "usage.h"

/* A small data-parallel job: 8 ranks, 2 accumulation steps, 8 samples per
 * micro-batch on average; every other option keeps the library's default. */
static void add_demo_setting(cli_config *config, brs_option key, int64_t value)
{
    option_setting *setting = cli_config_add(config, key, "brs demo");
    if (setting == NULL)
        cli_failure("the demo's configuration does not fit");
    setting->int_value = value;
}

static cli_config demo_config(void)
{
    cli_config config = {0};
    config.lengths_path = demo_dataset_name;
    add_demo_setting(&config, BRS_OPT_DP_SIZE, 8);
    add_demo_setting(&config, BRS_OPT_GRAD_ACCUM, 2);
    add_demo_setting(&config, BRS_OPT_BATCH_SIZE, 8);
    return config;
}

/* "23% less" / "5% more" (of brs's value against a baseline's, lower is
 * better) into text; returns 0 when they are the same to the shown digits. */
static int describe_percent(char *text, size_t size, double brs, double other)
{
    double change = other > 0.0 ? 100.0 * (1.0 - brs / other) : 0.0;
    if (change > -0.5 && change < 0.5)
        return 0;
    snprintf(text, size, "%.0f%% %s", change > 0 ? change : -change, change > 0 ? "less" : "more");
    return 1;
}

/* "1.40x less" / "1.10x more": the ratio of the two, the same way. */
static int describe_factor(char *text, size_t size, double brs, double other)
{
    if (other < brs * 1.005 && brs < other * 1.005)
        return 0;
    int less = other > brs;
    snprintf(text, size, "%.2fx %s", less ? other / brs : brs / other, less ? "less" : "more");
    return 1;
}

/* Append "<23% less> <what> than <baseline>", or "as much <what> as <baseline>". */
static void append_compared(char *text, size_t size, int differs, const char *amount,
                            const char *what, const char *baseline)
{
    size_t used = strlen(text);
    if (differs)
        snprintf(text + used, size - used, "%s %s than %s", amount, what, baseline);
    else
        snprintf(text + used, size - used, "as much %s as %s", what, baseline);
}

static void append_text(char *text, size_t size, const char *more)
{
    size_t used = strlen(text);
    snprintf(text + used, size - used, "%s", more);
}

static void print_savings(FILE *out, const comparison *r)
{
    char text[1024] = "In plain words: brs needs ", amount[48], tokens[128];
    double brs_peak = (double)r->brs.peak_padded_tokens;
    int differs = describe_percent(amount, sizeof amount, brs_peak,
                                   (double)r->grouped.peak_padded_tokens);
    append_compared(text, sizeof text, differs, amount, "peak memory", "length-grouped batches");
    snprintf(tokens, sizeof tokens,
             " (%" PRIu64 " instead of %" PRIu64 " padded tokens in the largest micro-batch) and ",
             r->brs.peak_padded_tokens, r->grouped.peak_padded_tokens);
    append_text(text, sizeof text, tokens);
    differs = describe_factor(amount, sizeof amount, r->brs.micro_sync_time,
                              r->random.micro_sync_time);
    append_compared(text, sizeof text, differs, amount, "step time", "random batches");
    append_text(text, sizeof text, " when the ranks sync at every micro-step");
    if (describe_factor(amount, sizeof amount, r->brs.step_sync_time, r->random.step_sync_time)) {
        append_text(text, sizeof text, " (");
        append_text(text, sizeof text, amount);
        append_text(text, sizeof text, " when they sync once per step)");
    }
    append_text(text, sizeof text, ". The other way round, brs needs ");
    differs = describe_percent(amount, sizeof amount, brs_peak,
                               (double)r->random.peak_padded_tokens);
    append_compared(text, sizeof text, differs, amount, "peak memory", "random batches");
    append_text(text, sizeof text, " and ");
    differs = describe_factor(amount, sizeof amount, r->brs.micro_sync_time,
                              r->grouped.micro_sync_time);
    append_compared(text, sizeof text, differs, amount, "step time", "length-grouped batches");
    append_text(text, sizeof text, ", whose steps are not a random draw of the dataset: each "
                                   "holds samples of similar length.");
    fputc('\n', out);
    text_wrap_print(out, text, 80);
}

int demo_command(int count, char **args)
{
    cli_config config = options_parse_command(count, args, OPTIONS_HELP_ONLY);
    if (config.help) {
        usage_demo(stdout);
        return CLI_EXIT_OK;
    }
    config = demo_config();
    brs_sampler *sampler = sampler_setup(&config, demo_dataset_lengths, demo_dataset_count);
    uint64_t steps = sampler_steps(sampler);
    selection chosen = selection_make(&config, sampler, steps);
    comparison result = comparison_run(sampler, config.epoch, &chosen);

    compare_setting setting = {sampler, demo_dataset_count, config.epoch, steps, &chosen};
    printf("brs demo: %s, embedded in brs\n", demo_dataset_name);
    text_wrap_print(stdout, demo_dataset_note, 80);
    fputc('\n', stdout);
    compare_report_print(stdout, &result, &setting);
    print_savings(stdout, &result);
    output_commit(stdout, "the demo");

    brs_sampler_free(sampler);
    return CLI_EXIT_OK;
}
