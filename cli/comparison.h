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
    epoch_stats brs;          /* BRS_STRATEGY_BALANCED; empty when brs_infeasible */
    double time_lower_bound;  /* sum over steps of brs's BRS_PLAN_TIME_LOWER_BOUND (of
                               * random's plans when brs_infeasible) */
    double planning_seconds;  /* time brs_plan_compute took for brs (monotonic clock) */
    uint64_t planned_samples; /* samples in the planned steps */
    uint64_t megabatch_size;  /* length_grouped's, BRS_PLAN_MEGABATCH_SIZE */
    int brs_infeasible;       /* brs cannot keep max_tokens in step brs_infeasible_step */
    uint64_t brs_infeasible_step;
    uint64_t least_max_tokens; /* when brs_infeasible: the least max_tokens with which brs
                                * plans every step of the epoch; 0 where the library cannot
                                * tell before planning (packed mode) */
} comparison;

/* Measure the selected steps of `epoch` for all three strategies (every
 * rank); the sampler's strategy is changed on the way. A max_tokens that
 * brs cannot keep does not end the command: brs_infeasible says so, and the
 * fixed-size baselines, which do not bend to the cap, are still measured.
 * Any other step brs cannot plan ends the command with the library's
 * message before a baseline runs. */
comparison comparison_run(brs_sampler *sampler, uint64_t epoch, const selection *chosen);

#endif
