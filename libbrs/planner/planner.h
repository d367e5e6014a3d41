/* planner/planner.h - the padded planner (planner.c). Internal, not installed. */
#ifndef BRS_PLANNER_PLANNER_H
#define BRS_PLANNER_PLANNER_H

#include "brs.h"
#include "planner/cost_model.h"
#include "planner/split.h"
#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* n samples sorted by length descending (`lengths`, padded as the collator
 * pads) into k contiguous groups (split->starts and costs): the step time
 * of the sync model, then the peak, then the total (docs/algorithm.md).
 * scratch holds 2n words. */
brs_status brs_planner_split(struct brs_split *split, const uint32_t *lengths, size_t n, size_t k,
                             size_t dp_size, int sync, const struct brs_cost_model *model,
                             uint64_t *scratch);

#endif
