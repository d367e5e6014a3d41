/* score.c - the score every candidate split is compared by, padded and
 * packed alike (docs/algorithm.md): the step time of the deal the plan will
 * use (assign.c), then the peak tokens of a group, then the total cost. */
#include "planner/score.h"
#include "planner/assign.h"
#include "planner/objective.h"
#include "util/wide.h"

brs_status brs_score_groups(struct brs_score *score, const brs_wide *costs,
                            const uint32_t *cost_order, uint64_t peak, size_t k, size_t dp_size,
                            int sync, uint32_t *slot_scratch)
{
    int per_step = sync == BRS_SYNC_STEP;
    brs_status status =
        brs_assign(slot_scratch, per_step ? NULL : &score->time, per_step ? &score->time : NULL,
                   costs, cost_order, k, dp_size, sync);
    score->peak = peak;
    score->total = 0;
    for (size_t g = 0; g < k; g++) score->total += costs[g];
    return status;
}

brs_status brs_score_split(struct brs_score *score, const size_t *starts, const brs_wide *costs,
                           const uint32_t *lengths, size_t k, size_t dp_size, int sync,
                           uint32_t *slot_scratch)
{
    return brs_score_groups(score, costs, NULL, brs_objective_padded_peak(starts, lengths, k), k,
                            dp_size, sync, slot_scratch);
}
