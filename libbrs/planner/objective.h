/* planner/objective.h - the planner's objective and its bounds, each formula once
 * (objective.c): the synchronised step times of dealt groups, the padded peak, the time floor,
 * the packed bound and the certified bound on the step time. Internal, not installed. */
#ifndef BRS_PLANNER_OBJECTIVE_H
#define BRS_PLANNER_OBJECTIVE_H

#include "planner/cost_model.h"
#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* A split's score, lexicographic (docs/algorithm.md): the step time of the
 * sync model (the deal of brs_assign), the peak tokens of a group, the total
 * cost. score.c computes it. */
struct brs_score {
    brs_wide time, peak, total;
};
int brs_objective_better(const struct brs_score *a, const struct brs_score *b);

/* Costs by rank-major slot (rank * grad_accum + micro): the sum of one
 * rank's micro-steps, the slowest rank (the first of equal sums), and the
 * two synchronised step times (docs/design.md): per micro-step the sum of
 * the slowest rank at each micro-step, per step the slowest rank's sum
 * (either pointer may be NULL: not computed). */
brs_wide brs_objective_rank_time(const brs_wide *by_slot, size_t rank, size_t grad_accum);
size_t brs_objective_slowest_rank(const brs_wide *by_slot, size_t dp_size, size_t grad_accum);
void brs_objective_sync_times(brs_wide *micro_sync, brs_wide *step_sync, const brs_wide *by_slot,
                              size_t dp_size, size_t grad_accum);

/* Padded tokens of a contiguous split of lengths sorted longest first: a
 * group holds its size times its head's length. The group at the peak
 * (the first of equal ones) and the peak. */
size_t brs_objective_peak_group(const size_t *starts, const uint32_t *lengths, size_t k);
uint64_t brs_objective_padded_peak(const size_t *starts, const uint32_t *lengths, size_t k);

/* max(largest, ceil(total / ranks)): no deal of groups whose largest cost
 * is `largest` and whose costs sum to `total` has a rank slower than that. */
brs_wide brs_objective_time_floor(brs_wide largest, brs_wide total, size_t ranks);

/* The packed planner's bound on the max cost of k groups of these samples
 * (sorted longest first): the average load and the longest sample alone;
 * *weight_sum gets the samples' weights summed. */
brs_wide brs_objective_packed_bound(const uint32_t *lengths, size_t n, size_t k,
                                    const struct brs_cost_model *model, brs_wide *weight_sum);

/* What samples' images add to the bounds of their text (n samples, their
 * lengths as the planner prices them, their loads): every image's cost to
 * the least work (*weight_sum), and the costliest sample alone, text and
 * images, to `bound` on the largest cost, which it returns. A text bound
 * stays a bound: images only add. */
brs_wide brs_objective_image_bound(const uint32_t *lengths, const struct brs_encoder_load *loads,
                                   size_t n, const struct brs_cost_model *model, brs_wide bound,
                                   brs_wide *weight_sum);

/* A lower bound on the step time under either sync model of every padded
 * plan of these samples (sorted longest first) within the model's cap: the
 * min-max `min_max` and the least total cost over dp_size. */
brs_wide brs_objective_time_bound(const uint32_t *lengths, size_t n, size_t k, size_t dp_size,
                                  const struct brs_cost_model *model, brs_wide min_max,
                                  brs_wide weight_sum);
/* The same bound computed from scratch (the min-max searched here): for
 * plans made elsewhere. A cap the samples cannot meet in k groups is
 * ignored, so the bound holds for every plan. */
brs_wide brs_objective_step_time_bound(const uint32_t *lengths, size_t n, size_t k, size_t dp_size,
                                       const struct brs_cost_model *model);

#endif
