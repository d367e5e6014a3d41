/*
 * epoch_stats.h - what a strategy's plans add up to over the steps compared.
 *
 * Every number is the library's (brs_plan_* queries of each step's plan):
 * tokens, and the step time under both synchronisation models, so the CLI
 * only sums them (the models are described in docs/design.md).
 */
#ifndef BRS_CLI_EPOCH_STATS_H
#define BRS_CLI_EPOCH_STATS_H

#include <stdint.h>

#include <brs.h>

typedef struct epoch_stats {
    uint64_t steps;
    uint64_t peak_padded_tokens; /* the memory peak: the largest micro-batch's padded tokens */
    uint64_t padded_tokens;
    uint64_t real_tokens;
    uint64_t cap_violations;     /* micro-batches above max_tokens (0 without a cap) */
    double micro_sync_time;      /* BRS_PLAN_MICRO_SYNC_TIME, summed */
    double step_sync_time;       /* BRS_PLAN_STEP_SYNC_TIME, summed */
} epoch_stats;

/* Add the computed plan of one step; max_tokens 0 means no cap. */
void epoch_stats_add_plan(epoch_stats *stats, const brs_plan *plan, uint64_t max_tokens);

/* Real tokens / padded tokens (1 when nothing is padded). */
double epoch_stats_padding_efficiency(const epoch_stats *stats);

#endif
