/* epoch_stats.c - accumulate memory, padding and step time per strategy. */
#include "epoch_stats.h"

static double micro_sync_time(const micro_batch_stats *slots, int64_t dp_size, int64_t grad_accum)
{
    double total = 0.0;
    for (int64_t micro = 0; micro < grad_accum; micro++) {
        double slowest = 0.0;
        for (int64_t rank = 0; rank < dp_size; rank++) {
            double cost = slots[rank * grad_accum + micro].cost;
            slowest = cost > slowest ? cost : slowest;
        }
        total += slowest;
    }
    return total;
}

static double step_sync_time(const micro_batch_stats *slots, int64_t dp_size, int64_t grad_accum)
{
    double slowest = 0.0;
    for (int64_t rank = 0; rank < dp_size; rank++) {
        double total = 0.0;
        for (int64_t micro = 0; micro < grad_accum; micro++)
            total += slots[rank * grad_accum + micro].cost;
        slowest = total > slowest ? total : slowest;
    }
    return slowest;
}

void epoch_stats_add_step(epoch_stats *stats, const micro_batch_stats *slots, int64_t dp_size,
                          int64_t grad_accum, uint64_t max_tokens)
{
    int64_t k = dp_size * grad_accum;
    for (int64_t slot = 0; slot < k; slot++) {
        uint64_t padded = slots[slot].padded_tokens;
        stats->peak_padded_tokens = padded > stats->peak_padded_tokens ? padded
                                                                       : stats->peak_padded_tokens;
        stats->padded_tokens += padded;
        stats->real_tokens += slots[slot].real_tokens;
        stats->cap_violations += max_tokens != 0 && padded > max_tokens;
    }
    stats->steps += 1;
    stats->micro_batches += (uint64_t)k;
    stats->micro_sync_time += micro_sync_time(slots, dp_size, grad_accum);
    stats->step_sync_time += step_sync_time(slots, dp_size, grad_accum);
}

double epoch_stats_padding_efficiency(const epoch_stats *stats)
{
    return stats->padded_tokens ? (double)stats->real_tokens / (double)stats->padded_tokens : 1.0;
}
