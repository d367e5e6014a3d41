/* planner/score.h - the score of a split under the objective (score.c). Internal, not
 * installed. */
#ifndef BRS_PLANNER_SCORE_H
#define BRS_PLANNER_SCORE_H

#include "brs.h"
#include "planner/objective.h"
#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* The score of k groups of these costs whose largest holds `peak` tokens.
 * cost_order: the groups in cost order, or NULL (brs_assign). slot_scratch
 * holds k. */
brs_status brs_score_groups(struct brs_score *score, const brs_wide *costs,
                            const uint32_t *cost_order, uint64_t peak, size_t k, size_t dp_size,
                            int sync, uint32_t *slot_scratch);
/* The same of a contiguous split of lengths sorted longest first (padded:
 * a group holds its size times its head's length). */
brs_status brs_score_split(struct brs_score *score, const size_t *starts, const brs_wide *costs,
                           const uint32_t *lengths, size_t k, size_t dp_size, int sync,
                           uint32_t *slot_scratch);

#endif
