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

/* A lower bound on the step time under `sync` of every plan of these
 * samples (sorted longest first) within the model's cap: the min-max
 * `min_max` and the least total cost over dp_size. */
brs_wide brs_planner_time_lower_bound(const uint32_t *lengths, size_t n, size_t k, size_t dp_size,
                                      const struct brs_cost_model *model, brs_wide min_max,
                                      brs_wide weight_sum);
/* The same bound computed from scratch (the min-max searched here): for
 * plans made elsewhere. A cap the samples cannot meet in k groups is
 * ignored, so the bound holds for every plan. */
brs_wide brs_planner_step_time_bound(const uint32_t *lengths, size_t n, size_t k, size_t dp_size,
                                     const struct brs_cost_model *model);

#endif
