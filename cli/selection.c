/* selection.c - narrow a command to the steps and ranks asked for. */
#include "selection.h"

#include <inttypes.h>

#include "fail.h"
#include "sampler_setup.h"

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
