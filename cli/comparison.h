/*
 * comparison.h - the library's three strategies over the same steps:
 * random and length-grouped (the peer baselines) and brs (balanced).
 */
#ifndef BRS_CLI_COMPARISON_H
#define BRS_CLI_COMPARISON_H

#include <stdint.h>

#include <brs.h>

#include "epoch_stats.h"
#include "selection.h"

typedef struct comparison {
    epoch_stats random;       /* BRS_STRATEGY_RANDOM */
    epoch_stats grouped;      /* BRS_STRATEGY_LENGTH_GROUPED */
    epoch_stats brs;          /* BRS_STRATEGY_BALANCED */
    double time_lower_bound;  /* sum over steps of brs's BRS_PLAN_TIME_LOWER_BOUND */
    double planning_seconds;  /* time brs_plan_compute took for brs (monotonic clock) */
    uint64_t planned_samples; /* samples in the planned steps */
    uint64_t megabatch_size;  /* length_grouped's, BRS_PLAN_MEGABATCH_SIZE */
} comparison;

/* Measure the selected steps of `epoch` for all three strategies (every
 * rank: --rank does not narrow a comparison); the sampler's strategy is
 * changed on the way. A step brs cannot plan ends the command with the
 * library's message before any baseline runs. */
comparison comparison_run(brs_sampler *sampler, uint64_t epoch, const selection *chosen);

#endif
