/* planner/lpt.h - packed mode's first plan (lpt.c). Internal, not installed. */
#ifndef BRS_PLANNER_LPT_H
#define BRS_PLANNER_LPT_H

#include "brs.h"
#include "planner/cost_model.h"
#include "planner/split.h"

#include <stddef.h>
#include <stdint.h>

/* n samples sorted longest first into k groups under the model's cap:
 * split->group_of and costs of a packing, or BRS_ERR_CAP_INFEASIBLE with
 * split->needed the fewest groups that pack (0: unknown). scratch holds k. */
brs_status brs_lpt_split(struct brs_split *split, const uint32_t *lengths, size_t n, size_t k,
                         const struct brs_cost_model *model, uint32_t *scratch);

#endif
