/* planner/objective.h - the planner's objective, the one score of padded and packed splits
 * (objective.c). Internal, not installed. */
#ifndef BRS_PLANNER_OBJECTIVE_H
#define BRS_PLANNER_OBJECTIVE_H

#include "brs.h"
#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* A split's score, lexicographic (docs/algorithm.md): the step time of the
 * sync model (the deal of brs_assign), the peak tokens of a group, the total
 * cost. */
struct brs_score {
    brs_wide time, peak, total;
};

/* The score of k groups of these costs whose largest holds `peak` tokens.
 * cost_order: the groups in cost order, or NULL (brs_assign). slot_scratch
 * holds k. */
brs_status brs_objective_score(struct brs_score *score, const brs_wide *costs,
                               const uint32_t *cost_order, uint64_t peak, size_t k, size_t dp_size,
                               int sync, uint32_t *slot_scratch);
/* The same of a contiguous split of lengths sorted longest first (padded:
 * a group holds its size times its head's length). */
brs_status brs_objective_score_split(struct brs_score *score, const size_t *starts,
                                     const brs_wide *costs, const uint32_t *lengths, size_t k,
                                     size_t dp_size, int sync, uint32_t *slot_scratch);
/* The largest padded-token count of a contiguous split. */
uint64_t brs_objective_padded_peak(const size_t *starts, const uint32_t *lengths, size_t k);
int brs_objective_better(const struct brs_score *a, const struct brs_score *b);

#endif
