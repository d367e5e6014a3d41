/* planner/split.h - a step split into k groups, what the padded (planner.c) and packed
 * (packed.c) planners and the least-total searches (refine.c, split_heuristic.c) fill.
 * Internal, not installed. */
#ifndef BRS_PLANNER_SPLIT_H
#define BRS_PLANNER_SPLIT_H

#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* n samples sorted by length descending split into k groups. A padded
 * split's group g is [starts[g], starts[g+1]) of the sorted order; a
 * packed one writes group ids into `group_of`. Both fill costs[g], the max
 * cost, the lower bound of the max cost and the certified lower bound on
 * the step time of the sync model. On BRS_ERR_CAP_INFEASIBLE *needed holds
 * the smallest group count that meets the cap (0 if unknown). The deal to
 * slots is brs_assign of the costs (the padded planner scores its
 * candidates with it). */
struct brs_split {
    size_t *starts;     /* k + 1 entries (padded) */
    uint32_t *group_of; /* n entries (packed) */
    brs_wide *costs;    /* k entries */
    brs_wide max_cost;
    brs_wide lower_bound;
    brs_wide weight_sum; /* sum of sample weights, for the time bound */
    size_t needed;
    brs_wide time_lower_bound;
};

#endif
