/* cmd_compare.c - `brs compare --lengths FILE [options]`: every strategy
 * of the library over the same steps, summed per strategy, as a table. */
#include "commands.h"

#include <stdio.h>
#include <string.h>

#include "args.h"
#include "compare.h"
#include "compare_report.h"
#include "input.h"
#include "output.h"
#include "sampler.h"
#include "usage.h"

/* "python -m brs report" and this command's own arguments: the same
 * comparison with transformers' batch_rebalance added (bindings/python/brs/
 * report.py); a word with a space or quote is quoted. */
static void report_command(char *out, size_t size, int count, char **args)
{
    size_t used = (size_t)snprintf(out, size, "python -m brs report");
    for (int i = 0; i < count && used < size; i++) {
        int quote = strpbrk(args[i], " '\"") != NULL || args[i][0] == '\0';
        used += (size_t)snprintf(out + used, size - used, quote ? " '%s'" : " %s", args[i]);
    }
}

int compare_command(int count, char **args)
{
    cli_config config = options_parse_command(count, args, OPTIONS_COMPARE);
    if (config.help) {
        usage_compare(stdout);
        return CLI_EXIT_OK;
    }
    options_require_lengths(&config);
    cost_model_file_apply(&config);
    /* A cap brs cannot keep is a finding here, not an error: its row says
     * so and the baselines, which never bend to the cap, are still shown. */
    config.cap_marks_rows = 1;
    FILE *out = output_open(config.output_path);
    lengths data = lengths_load(config.lengths_path);
    brs_sampler *sampler = sampler_setup(&config, data.values, data.count);
    sampler_set_images(sampler, data.patches, data.offsets, data.count);
    uint64_t steps = sampler_steps(sampler);
    selection chosen = selection_make(&config, sampler, steps);
    comparison result = comparison_run(sampler, config.epoch, &chosen);

    compare_setting setting = compare_setting_make(&config, sampler, data.count, steps, &chosen);
    char report[1024];
    report_command(report, sizeof report, count, args);
    setting.report_command = report;
    fprintf(out, "brs compare: %s\n", config.lengths_path);
    compare_report_print(out, &result, &setting);
    output_commit(out, "the comparison");

    brs_sampler_free(sampler);
    lengths_free(&data);
    return CLI_EXIT_OK;
}
