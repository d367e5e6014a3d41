/* planner/candidates.h - the planner's candidate splits, one file each under planner/candidates/.
 * Internal, not installed. */
#ifndef BRS_PLANNER_CANDIDATES_H
#define BRS_PLANNER_CANDIDATES_H

#include "brs.h"
#include "planner/cost_model.h"
#include "planner/search.h"
#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* karmarkar_karp.c: the k-way largest differencing method on the packed
 * weights of n >= k samples (sorted longest first), blind to the cap:
 * group_of[i] in [0, k), every group non-empty. BRS_ERR_TOO_LARGE when it
 * would write more than its work bound (n - 1) * k allows. */
brs_status brs_karmarkar_karp_split(uint32_t *group_of, const uint32_t *lengths, size_t n, size_t k,
                                    const struct brs_cost_model *model);

/* staircase.c: the greedy group at `threshold` from `pos` (cost and cap),
 * leaving a sample for each of `groups_after` later groups. */
size_t brs_staircase_greedy_group(const uint32_t *lengths, size_t n, size_t pos,
                                  size_t groups_after, const struct brs_cost_model *model,
                                  brs_wide threshold);
/* staircase.c: k groups (starts[0..k], costs[0..k-1]) of cost <= top: the
 * first dp_size greedy at top, the rest greedy at the least max cost their
 * groups allow. cache as for brs_search_min_max. */
brs_status brs_staircase_split(size_t *starts, brs_wide *costs, const uint32_t *lengths,
                               struct brs_probe_cache cache, size_t n, size_t k, size_t dp_size,
                               const struct brs_cost_model *model, brs_wide top);

/* layered.c: k = dp_size * grad_accum groups, grad_accum contiguous layers
 * of dp_size groups each at the layer's min-max and least peak under the
 * model's cap; BRS_ERR_INVALID_ARGUMENT when no layering fits the cap. */
brs_status brs_layered_split(size_t *starts, brs_wide *costs, const uint32_t *lengths,
                             struct brs_probe_cache cache, size_t n, size_t dp_size,
                             size_t grad_accum, const struct brs_cost_model *model);
/* layered.c: the same with every cut, where the search over them (a
 * bisection for two layers, a dynamic programme for more) is small: the
 * fastest layering under the model's cap, with a step time of
 * at most `beat`; BRS_ERR_TOO_LARGE where the step is too large or none is
 * that fast. */
brs_status brs_layered_split_fastest(size_t *starts, brs_wide *costs, const uint32_t *lengths,
                                     struct brs_probe_cache cache, size_t n, size_t dp_size,
                                     size_t grad_accum, const struct brs_cost_model *model,
                                     brs_wide beat);
/* hill_climb.c: transformers' batch_rebalance split of the n sorted samples
 * into k contiguous groups (no cap; the caller checks it); BRS_ERR_TOO_LARGE
 * beyond 4096 groups. */
brs_status brs_hill_climb_split(size_t *starts, brs_wide *costs, const uint32_t *lengths,
                                size_t n, size_t k, size_t dp_size,
                                const struct brs_cost_model *model);
/* layered.c: n samples into `ranks` contiguous groups of cost <= time (the
 * exact min-max, or any feasible time): the least peak, then the least total
 * cost at that peak where its search is small enough. This is the exact
 * lexicographic optimum of a step of one micro-step. */
brs_status brs_layered_split_one(size_t *starts, brs_wide *costs, const uint32_t *lengths,
                                 struct brs_probe_cache cache, size_t n, size_t ranks,
                                 const struct brs_cost_model *model, brs_wide time);

/* exact.c: every contiguous split of a small step (at most EXACT_SPLITS of
 * them), scored like the planner's candidates; BRS_ERR_TOO_LARGE when the
 * step has more. Writes the best split within the model's cap, if any. */
brs_status brs_exact_split(size_t *starts, brs_wide *costs, const uint32_t *lengths, size_t n,
                           size_t k, size_t dp_size, int sync,
                           const struct brs_cost_model *model);

#endif
