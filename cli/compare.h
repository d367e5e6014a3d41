/*
 * compare.h - compare.c: every strategy of the library (BRS_OPT_STRATEGY's
 * values) over the same steps, summed per strategy: balanced is brs's own,
 * the others (random and length-grouped today) are the peer baselines.
 * `brs compare` and `brs demo` run it; compare_report.c prints its result.
 *
 * Every number is the library's (brs_plan_* queries of each step's plan):
 * tokens, and the step time under both synchronisation models, so the CLI
 * only sums them (the models are described in docs/design.md).
 */
#ifndef BRS_CLI_COMPARE_H
#define BRS_CLI_COMPARE_H

#include <stdint.h>

#include <brs.h>

#include "sampler.h"

/* What a strategy's plans add up to over the steps compared. */
typedef struct epoch_stats {
    uint64_t steps;
    uint64_t peak_padded_tokens; /* the memory peak: the largest micro-batch's padded tokens */
    uint64_t padded_tokens;
    uint64_t real_tokens;
    uint64_t cap_violations;      /* micro-batches above max_tokens (0 without a cap) */
    double micro_sync_time;       /* BRS_PLAN_MICRO_SYNC_TIME, summed */
    double step_sync_time;        /* BRS_PLAN_STEP_SYNC_TIME, summed */
    uint64_t shapes_per_rank;     /* distinct (batch size, padded length) of the rank with most */
    uint64_t peak_encoder_tokens; /* the largest micro-batch's image patches (0: no images) */
    /* Where the ranks' time goes under the sampler's sync model, summed:
     * BRS_PLAN_USEFUL_TIME, _PADDING_TIME and _WAITING_TIME (they add up to
     * ranks x BRS_PLAN_STEP_TIME). */
    double useful_time, padding_time, waiting_time;
} epoch_stats;

#define COMPARISON_MAX_STRATEGIES 8

typedef struct comparison {
    int64_t lowest_strategy; /* brs_option_bounds_int(BRS_OPT_STRATEGY) */
    int64_t highest_strategy;
    epoch_stats stats[COMPARISON_MAX_STRATEGIES]; /* by strategy - lowest_strategy; that of
                                                   * BRS_STRATEGY_BALANCED is empty when
                                                   * brs_infeasible */
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
    int encoder_cap_failed;    /* when brs_infeasible: max_tokens plans the epoch, the
                                * images' max_encoder_tokens is what brs cannot keep */
} comparison;

/* Measure the selected steps of `epoch` for every strategy (every rank);
 * the sampler's strategy is changed on the way. A max_tokens that
 * brs cannot keep does not end the command: brs_infeasible says so, and the
 * fixed-size baselines, which do not bend to the cap, are still measured.
 * Any other step brs cannot plan ends the command with the library's
 * message before a baseline runs. */
comparison comparison_run(brs_sampler *sampler, uint64_t epoch, const selection *chosen);

/* What `strategy` (a BRS_OPT_STRATEGY value) added up to. */
const epoch_stats *comparison_stats(const comparison *result, int64_t strategy);

#endif
