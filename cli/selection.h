/*
 * selection.h - which steps and ranks a command covers (--step, --rank).
 */
#ifndef BRS_CLI_SELECTION_H
#define BRS_CLI_SELECTION_H

#include <stdint.h>

#include <brs.h>

#include "cli_config.h"

typedef struct selection {
    uint64_t first_step, end_step; /* steps [first_step, end_step) */
    int64_t first_rank, end_rank;  /* ranks [first_rank, end_rank) */
} selection;

/* Every step of the epoch and every rank, or the one --step / --rank
 * names. A --step beyond the epoch is bad input (exit 2); --rank was
 * checked against --dp-size by the library already. */
selection selection_make(const cli_config *config, const brs_sampler *sampler,
                         uint64_t steps_per_epoch);

#endif
