/* planner/assign.h - the deal of k groups to (rank, micro-step) slots (assign.c). Internal, not
 * installed. */
#ifndef BRS_PLANNER_ASSIGN_H
#define BRS_PLANNER_ASSIGN_H

#include "brs.h"
#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* slot_of[g] gets the rank-major slot (rank * grad_accum + micro) of group
 * g for the sync model, and the two synchronised step times of that deal
 * (either pointer may be NULL: not computed); a function of the costs
 * alone. cost_order: the groups in the order of brs_cost_sort_ids
 * (util/cost_sort.h) for these costs, or NULL to sort them here. */
brs_status brs_assign(uint32_t *slot_of, brs_wide *micro_sync, brs_wide *step_sync,
                      const brs_wide *costs, const uint32_t *cost_order, size_t k, size_t dp_size,
                      int sync);

#endif
