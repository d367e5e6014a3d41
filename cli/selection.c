/* selection.c - narrow a command to the steps and ranks asked for. */
#include "selection.h"

#include <inttypes.h>

#include "fail.h"

selection selection_make(const cli_config *config, uint64_t steps_per_epoch)
{
    selection chosen = {0, steps_per_epoch, 0, config->dp_size};
    if (config->has_step) {
        uint64_t step = (uint64_t)config->step;
        if (step >= steps_per_epoch)
            cli_bad_input("--step %" PRIu64 " is out of range: the epoch has %" PRIu64
                          " steps, 0 to %" PRIu64, step, steps_per_epoch, steps_per_epoch - 1);
        chosen.first_step = step;
        chosen.end_step = step + 1;
    }
    if (config->has_rank) {
        chosen.first_rank = config->rank;
        chosen.end_rank = config->rank + 1;
    }
    return chosen;
}
