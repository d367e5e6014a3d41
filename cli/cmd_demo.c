/* cmd_demo.c - `brs demo`: the comparison at a realistic configuration. */
#include "commands.h"

#include <stdio.h>

#include "args.h"
#include "compare.h"
#include "compare_report.h"
#include "demo_dataset.h"
#include "output.h"
#include "sampler.h"
#include "usage.h"

/* A small data-parallel job: 8 ranks, 2 accumulation steps, 8 samples per
 * micro-batch on average; every other option keeps the library's default. */
static void add_demo_setting(cli_config *config, brs_option key, int64_t value)
{
    option_setting *setting = cli_config_add(config, key, "brs demo");
    if (setting == NULL) cli_failure("the demo's configuration does not fit");
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

    compare_setting setting =
        compare_setting_make(&config, sampler, demo_dataset_count, steps, &chosen);
    /* the demo's lengths are data/ of the source tree, its layout demo_config's */
    char report[256];
    snprintf(report, sizeof report,
             "python -m brs report --lengths data/%s --dp-size 8 --grad-accum 2 --batch-size 8",
             demo_dataset_name);
    setting.report_command = report;
    printf("brs demo: %s, embedded in brs\n", demo_dataset_name);
    text_wrap_print(stdout, demo_dataset_note, 80);
    fputc('\n', stdout);
    compare_report_print(stdout, &result, &setting);
    output_commit(stdout, "the demo");

    brs_sampler_free(sampler);
    return CLI_EXIT_OK;
}
