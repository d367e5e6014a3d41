/* planner/refine.h - the least total cost under a max cost, exactly (refine.c). Internal, not
 * installed. */
#ifndef BRS_PLANNER_REFINE_H
#define BRS_PLANNER_REFINE_H

#include "brs.h"
#include "planner/cost_model.h"
#include "planner/split.h"
#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* The search's budget where its split is a step on the way (a few cells per
 * sample), and a threshold that limits nothing. */
enum { BRS_REFINE_CELLS_PER_SAMPLE = 4, BRS_REFINE_CELLS_BASE = 4096 };
#define BRS_REFINE_NO_LIMIT (~(brs_wide)0)

/* The split of least total cost among those with max cost <= threshold (at
 * least the optimum), if its search needs at most `budget` cells.
 * Otherwise BRS_ERR_TOO_LARGE, with split->starts[0..groups] the greedy
 * split from the short end at threshold (the fallback's start) and groups
 * <= k in *greedy_groups unless that is NULL. */
brs_status brs_refine_least_total(struct brs_split *split, const uint32_t *lengths, size_t n,
                                  size_t k, const struct brs_cost_model *model, brs_wide threshold,
                                  size_t budget, size_t *greedy_groups);

#endif
