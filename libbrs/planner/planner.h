/* planner/planner.h - splitting a sorted step into k groups: the padded (planner.c) and packed
 * (packed.c) planners, the least-total splits (split_heuristic.c, refine.c), the score and the
 * polish (polish.c), the deal (assign.c). Internal, not installed. */
#ifndef BRS_PLANNER_PLANNER_H
#define BRS_PLANNER_PLANNER_H

#include "brs.h"
#include "planner/cost_model.h"
#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* planner.c / packed.c: split n samples sorted by length descending
 * (`lengths`) into k groups. On success group g is [starts[g], starts[g+1])
 * of the sorted order for the padded planner; the packed planner writes
 * group ids into `group_of`. Both fill costs[g], the max cost, the lower
 * bound of the max cost and the certified lower bound on the step time of
 * the sync model. On BRS_ERR_CAP_INFEASIBLE *needed holds the smallest group
 * count that meets the cap (0 if unknown). The deal to slots is brs_assign
 * of the costs (the padded planner scores its candidates with it). */
struct brs_split {
    size_t *starts;     /* k + 1 entries (padded) */
    uint32_t *group_of; /* n entries (packed) */
    brs_wide *costs;    /* k entries */
    brs_wide max_cost;
    brs_wide lower_bound;
    brs_wide weight_sum; /* sum of sample weights, for the time bound */
    size_t needed;
    brs_wide time_lower_bound;
};
brs_status brs_planner_split(struct brs_split *split, const uint32_t *lengths, size_t n, size_t k,
                             size_t dp_size, int sync, const struct brs_cost_model *model,
                             uint64_t *scratch);
brs_status brs_packed_split(struct brs_split *split, const uint32_t *lengths, size_t n, size_t k,
                            size_t dp_size, int sync, const struct brs_cost_model *model,
                            uint32_t *scratch);

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

/* split_heuristic.c. brs_split_heuristic_least_total: the least total cost among
 * splits of max cost <= limit (refine.c, within a budget of
 * BRS_REFINE_CELLS_PER_SAMPLE * n + BRS_REFINE_CELLS_BASE cells), else the
 * greedy from the right split to k. */
enum { BRS_REFINE_CELLS_PER_SAMPLE = 4, BRS_REFINE_CELLS_BASE = 4096 };
brs_status brs_split_heuristic_least_total(struct brs_split *split, const uint32_t *lengths,
                                           size_t n, size_t k, const struct brs_cost_model *model,
                                           brs_wide limit);
brs_status brs_split_heuristic_to_k(struct brs_split *split, const uint32_t *lengths, size_t n,
                                    size_t groups, size_t k, const struct brs_cost_model *model);

/* refine.c: the split of least total cost among those with max cost <=
 * threshold (at least the optimum), if its search needs at most `budget`
 * cells. Otherwise BRS_ERR_TOO_LARGE, with split->starts[0..groups] the
 * greedy split from the short end at threshold (the fallback's start) and
 * groups <= k in *greedy_groups unless that is NULL. */
brs_status brs_refine_least_total(struct brs_split *split, const uint32_t *lengths, size_t n,
                                  size_t k, const struct brs_cost_model *model,
                                  brs_wide threshold, size_t budget, size_t *greedy_groups);

/* polish.c: boundary moves on a split (starts/costs, changed in place)
 * while its score improves within the model's cap. */
brs_status brs_polish(size_t *starts, brs_wide *costs, const uint32_t *lengths, size_t n, size_t k,
                      size_t dp_size, int sync, const struct brs_cost_model *model);

/* assign.c: slot_of[g] gets the rank-major slot (rank * grad_accum + micro)
 * of group g for the sync model, and the two synchronised step times of that
 * deal (either pointer may be NULL: not computed); a function of the costs
 * alone. cost_order: the groups in the order
 * of brs_cost_sort_ids (util/cost_sort.h) for these costs, or NULL to sort
 * them here. */
brs_status brs_assign(uint32_t *slot_of, brs_wide *micro_sync, brs_wide *step_sync,
                      const brs_wide *costs, const uint32_t *cost_order, size_t k,
                      size_t dp_size, int sync);

#endif
