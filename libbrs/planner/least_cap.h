/* planner/least_cap.h - the least max_tokens with which a step plans into k micro-batches
 * (least_cap.c). Internal, not installed. */
#ifndef BRS_PLANNER_LEAST_CAP_H
#define BRS_PLANNER_LEAST_CAP_H

#include "planner/cost_model.h"
#include "planner/padding.h"
#include "planner/split.h"

#include <stddef.h>
#include <stdint.h>

/* The greedy count of groups of n samples sorted longest first under a
 * token cap alone (each as large as its head allows): by contiguity the
 * least any split needs. Some count above `limit` once it exceeds it. */
size_t brs_least_cap_groups(const uint32_t *sorted, size_t n, uint64_t cap, size_t limit);

/* Padded: the least cap above `known` (a cap some earlier step needed)
 * with which k groups hold these n >= k samples (sorted longest first, as
 * the padded planner splits them), or `known` if that already does. */
uint64_t brs_least_cap_padded(const uint32_t *sorted, size_t n, size_t k, uint64_t known);

/* Packed: the least cap with which the packed planner splits the n samples
 * (sorted longest first) into k groups under `model` (its cap replaced)
 * once each row is padded as `padding` says, found by bisection and
 * verified by planning; 0 where even the whole step in one row does not
 * plan. `work` and scratch are the packed planner's buffers. */
uint64_t brs_least_cap_packed(struct brs_split *work, const uint32_t *sorted, size_t n, size_t k,
                              size_t dp_size, int sync, const struct brs_cost_model *model,
                              const struct brs_padding *padding, uint32_t *scratch);

#endif
