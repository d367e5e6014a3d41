/* epoch_stats.c - sum the library's per-step numbers per strategy. */
#include "epoch_stats.h"

#include "fail.h"
#include "planning.h"

/* The cap is a bound on each micro-batch, so each one is read. */
static uint64_t count_over_cap(const brs_plan *plan, uint64_t max_tokens)
{
    int64_t dp_size = planning_get_int(plan, BRS_PLAN_DP_SIZE);
    int64_t grad_accum = planning_get_int(plan, BRS_PLAN_GRAD_ACCUM);
    uint64_t over = 0;
    for (int64_t rank = 0; rank < dp_size; rank++)
        for (int64_t micro = 0; micro < grad_accum; micro++) {
            uint64_t padded, real;
            double cost;
            brs_status status =
                brs_plan_micro_batch_stats(&padded, &real, &cost, plan, rank, micro);
            if (status != BRS_OK)
                cli_library_error(status, "reading a micro-batch", brs_plan_last_error(plan));
            over += padded > max_tokens;
        }
    return over;
}

void epoch_stats_add_plan(epoch_stats *stats, const brs_plan *plan, uint64_t max_tokens)
{
    uint64_t peak = (uint64_t)planning_get_int(plan, BRS_PLAN_MAX_PADDED_TOKENS);
    stats->peak_padded_tokens = peak > stats->peak_padded_tokens ? peak : stats->peak_padded_tokens;
    stats->padded_tokens += (uint64_t)planning_get_int(plan, BRS_PLAN_TOTAL_PADDED_TOKENS);
    stats->real_tokens += (uint64_t)planning_get_int(plan, BRS_PLAN_TOTAL_REAL_TOKENS);
    if (max_tokens != 0 && peak > max_tokens)
        stats->cap_violations += count_over_cap(plan, max_tokens);
    stats->micro_sync_time += planning_get_double(plan, BRS_PLAN_MICRO_SYNC_TIME);
    stats->step_sync_time += planning_get_double(plan, BRS_PLAN_STEP_SYNC_TIME);
    stats->steps += 1;
}

double epoch_stats_padding_efficiency(const epoch_stats *stats)
{
    return stats->padded_tokens ? (double)stats->real_tokens / (double)stats->padded_tokens : 1.0;
}
