/* demo_command.c - `brs demo`: the comparison at a realistic configuration. */
#include "demo_command.h"

#include <inttypes.h>
#include <stdio.h>

#include "compare_report.h"
#include "comparison.h"
#include "demo_dataset.h"
#include "fail.h"
#include "options.h"
#include "sampler_setup.h"
#include "selection.h"
#include "usage.h"

/* A small data-parallel job: 8 ranks, 2 accumulation steps, 8 samples per
 * micro-batch on average, the default cost model. */
static cli_config demo_config(void)
{
    cli_config config = cli_config_defaults();
    config.lengths_path = demo_dataset_name;
    config.dp_size = 8;
    config.grad_accum = 2;
    config.batch_size = 8;
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

/* "<23% less> peak memory than <baseline>" or "as much peak memory as <baseline>". */
static void print_compared(FILE *out, int differs, const char *amount, const char *what,
                           const char *baseline)
{
    if (differs)
        fprintf(out, "%s %s than %s", amount, what, baseline);
    else
        fprintf(out, "as much %s as %s", what, baseline);
}

static void print_savings(FILE *out, const comparison *r)
{
    char amount[48];
    double brs_peak = (double)r->brs.peak_padded_tokens;
    fputs("\nIn plain words: brs needs ", out);
    print_compared(out,
                   describe_percent(amount, sizeof amount, brs_peak,
                                    (double)r->grouped.peak_padded_tokens),
                   amount, "peak memory", "length-grouped batches");
    fprintf(out, " (%" PRIu64 " instead of %" PRIu64 " padded tokens in the largest micro-batch)\n",
            r->brs.peak_padded_tokens, r->grouped.peak_padded_tokens);
    fputs("and ", out);
    print_compared(out,
                   describe_factor(amount, sizeof amount, r->brs.micro_sync_time,
                                   r->random.micro_sync_time),
                   amount, "step time", "random batches");
    fputs(" when the ranks sync at every micro-step", out);
    if (describe_factor(amount, sizeof amount, r->brs.step_sync_time, r->random.step_sync_time))
        fprintf(out, " (%s when they sync once per step)", amount);
    fputs(".\nThe other way round, brs needs ", out);
    print_compared(out,
                   describe_percent(amount, sizeof amount, brs_peak,
                                    (double)r->random.peak_padded_tokens),
                   amount, "peak memory", "random batches");
    fputs(" and ", out);
    print_compared(out,
                   describe_factor(amount, sizeof amount, r->brs.micro_sync_time,
                                   r->grouped.micro_sync_time),
                   amount, "step time", "length-grouped batches");
    fputs(",\nwhose steps are not a random draw of the dataset (each holds samples of similar "
          "length).\n",
          out);
}

int demo_command(int count, char **args)
{
    cli_config config = options_parse(count, args, OPTIONS_HELP_ONLY);
    if (config.help) {
        usage_demo(stdout);
        return CLI_EXIT_OK;
    }
    config = demo_config();
    brs_sampler *sampler = sampler_setup(&config, demo_dataset_lengths, demo_dataset_count);
    uint64_t steps = sampler_steps(sampler);
    selection chosen = selection_make(&config, steps);
    comparison result =
        comparison_run(sampler, &config, demo_dataset_lengths, demo_dataset_count, &chosen);

    compare_setting setting = {&config, demo_dataset_count, steps, &chosen};
    printf("brs demo: %s, embedded in brs\n%s\n", demo_dataset_name, demo_dataset_note);
    compare_report_print(stdout, &result, &setting);
    print_savings(stdout, &result);

    brs_sampler_free(sampler);
    if (fflush(stdout) != 0 || ferror(stdout))
        cli_failure("could not write the demo to standard output");
    return CLI_EXIT_OK;
}
