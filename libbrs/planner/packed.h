/* planner/packed.h - the packed planner (packed.c). Internal, not installed. */
#ifndef BRS_PLANNER_PACKED_H
#define BRS_PLANNER_PACKED_H

#include "brs.h"
#include "planner/cost_model.h"
#include "planner/split.h"

#include <stddef.h>
#include <stdint.h>

/* n samples sorted by length descending into k groups (split->group_of
 * and costs) without padding: a group costs intercept + sum w(L) and holds
 * sum L tokens. scratch holds 2k. */
brs_status brs_packed_split(struct brs_split *split, const uint32_t *lengths, size_t n, size_t k,
                            size_t dp_size, int sync, const struct brs_cost_model *model,
                            uint32_t *scratch);

#endif
