/* compare_command.c - `brs compare --lengths FILE [options]`. */
#include "compare_command.h"

#include <stdio.h>

#include "compare_report.h"
#include "comparison.h"
#include "fail.h"
#include "lengths_file.h"
#include "options.h"
#include "sampler_setup.h"
#include "selection.h"
#include "usage.h"

int compare_command(int count, char **args)
{
    cli_config config = options_parse(count, args, OPTIONS_PLAN);
    if (config.help) {
        usage_compare(stdout);
        return CLI_EXIT_OK;
    }
    options_require_lengths(&config);
    lengths data = lengths_read(config.lengths_path);
    brs_sampler *sampler = sampler_setup(&config, data.values, data.count);
    uint64_t steps = sampler_steps(sampler);
    selection chosen = selection_make(&config, steps);
    comparison result = comparison_run(sampler, &config, data.values, data.count, &chosen);

    compare_setting setting = {&config, data.count, steps, &chosen};
    printf("brs compare: %s\n", config.lengths_path);
    compare_report_print(stdout, &result, &setting);

    brs_sampler_free(sampler);
    lengths_free(&data);
    if (fflush(stdout) != 0 || ferror(stdout))
        cli_failure("could not write the comparison to standard output");
    return CLI_EXIT_OK;
}
