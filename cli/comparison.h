/*
 * comparison.h - run brs and the two baselines over the same steps.
 */
#ifndef BRS_CLI_COMPARISON_H
#define BRS_CLI_COMPARISON_H

#include <stddef.h>
#include <stdint.h>

#include <brs.h>

#include "cli_config.h"
#include "cost_model.h"
#include "epoch_stats.h"
#include "selection.h"

typedef struct comparison {
    epoch_stats random;   /* fixed-size micro-batches of a shuffle */
    epoch_stats grouped;  /* transformers' length-grouped megabatches */
    epoch_stats brs;
    double time_lower_bound;  /* sum over steps of BRS_PLAN_TIME_LOWER_BOUND */
    double planning_seconds;  /* time spent in brs_plan_compute (monotonic clock) */
    uint64_t planned_samples; /* samples in the planned steps */
    size_t megabatch_size;    /* of the length-grouped baseline */
    cost_model model;
} comparison;

/* Measure the selected steps of epoch config->epoch for all three strategies
 * (every rank: --rank does not narrow a comparison). A step brs cannot plan
 * ends the command with the library's message. */
comparison comparison_run(const brs_sampler *sampler, const cli_config *config,
                          const uint32_t *lengths, size_t n, const selection *chosen);

#endif
