/*
 * epoch_stats.h - what a strategy's micro-batches add up to over an epoch.
 *
 * Step time under two synchronisation models (DESIGN.md section 3):
 *   per-micro-step sync (FSDP / ZeRO-3): sum over micro-steps of the max over ranks;
 *   per-step sync (DDP with no_sync):    max over ranks of the sum over micro-steps.
 */
#ifndef BRS_CLI_EPOCH_STATS_H
#define BRS_CLI_EPOCH_STATS_H

#include <stdint.h>

#include "cost_model.h"

typedef struct epoch_stats {
    uint64_t steps;
    uint64_t micro_batches;
    uint64_t peak_padded_tokens; /* the memory peak: largest bs*L of one micro-batch */
    uint64_t padded_tokens;
    uint64_t real_tokens;
    uint64_t cap_violations;     /* micro-batches above max_tokens (0 without a cap) */
    double micro_sync_time;
    double step_sync_time;
} epoch_stats;

/* Add one step: slots[rank * grad_accum + micro]; max_tokens 0 means no cap. */
void epoch_stats_add_step(epoch_stats *stats, const micro_batch_stats *slots, int64_t dp_size,
                          int64_t grad_accum, uint64_t max_tokens);

/* Real tokens / padded tokens (1 when nothing is padded). */
double epoch_stats_padding_efficiency(const epoch_stats *stats);

#endif
