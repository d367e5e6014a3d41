/* objective.c - the score every candidate split is compared by, padded and
 * packed alike (docs/algorithm.md): the step time of the deal the plan will
 * use (assign.c), then the peak tokens of a group, then the total cost. */
#include "planner/assign.h"
#include "planner/objective.h"
#include "util/wide.h"

brs_status brs_objective_score(struct brs_score *score, const brs_wide *costs,
                               const uint32_t *cost_order, uint64_t peak, size_t k, size_t dp_size,
                               int sync, uint32_t *slot_scratch)
{
    int per_step = sync == BRS_SYNC_STEP;
    brs_status status = brs_assign(slot_scratch, per_step ? NULL : &score->time,
                                   per_step ? &score->time : NULL, costs, cost_order, k, dp_size,
                                   sync);
    score->peak = peak;
    score->total = 0;
    for (size_t g = 0; g < k; g++) score->total += costs[g];
    return status;
}

uint64_t brs_objective_padded_peak(const size_t *starts, const uint32_t *lengths, size_t k)
{
    uint64_t peak = 0;
    for (size_t g = 0; g < k; g++) {
        uint64_t tokens = (uint64_t)(starts[g + 1] - starts[g]) * lengths[starts[g]];
        if (tokens > peak) peak = tokens;
    }
    return peak;
}

brs_status brs_objective_score_split(struct brs_score *score, const size_t *starts,
                                     const brs_wide *costs, const uint32_t *lengths, size_t k,
                                     size_t dp_size, int sync, uint32_t *slot_scratch)
{
    return brs_objective_score(score, costs, NULL, brs_objective_padded_peak(starts, lengths, k), k,
                               dp_size, sync, slot_scratch);
}

int brs_objective_better(const struct brs_score *a, const struct brs_score *b)
{
    if (a->time != b->time) return a->time < b->time;
    if (a->peak != b->peak) return a->peak < b->peak;
    return a->total < b->total;
}
