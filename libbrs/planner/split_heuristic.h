/* planner/split_heuristic.h - the least-total split with a fallback where its search is too
 * large (split_heuristic.c). Internal, not installed. */
#ifndef BRS_PLANNER_SPLIT_HEURISTIC_H
#define BRS_PLANNER_SPLIT_HEURISTIC_H

#include "brs.h"
#include "planner/cost_model.h"
#include "planner/split.h"
#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* The least total cost among splits of max cost <= limit (refine.c, within
 * a budget of BRS_REFINE_CELLS_PER_SAMPLE * n + BRS_REFINE_CELLS_BASE
 * cells), else the greedy from the right split to k. */
brs_status brs_split_heuristic_least_total(struct brs_split *split, const uint32_t *lengths,
                                           size_t n, size_t k, const struct brs_cost_model *model,
                                           brs_wide limit);
/* The `groups` greedy groups in split->starts split to k: the costliest
 * halved until there are k. */
brs_status brs_split_heuristic_to_k(struct brs_split *split, const uint32_t *lengths, size_t n,
                                    size_t groups, size_t k, const struct brs_cost_model *model);

#endif
