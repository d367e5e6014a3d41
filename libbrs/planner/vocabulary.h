/* planner/vocabulary.h - a step planned within a shape vocabulary (vocabulary.c): every group
 * has one of a fixed set of (batch size, padded length) shapes (docs/algorithm.md, "Shape
 * vocabulary"). Internal, not installed. */
#ifndef BRS_PLANNER_VOCABULARY_H
#define BRS_PLANNER_VOCABULARY_H

#include "brs.h"
#include "planner/cost_model.h"
#include "planner/split.h"
#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* The shapes, sorted by batch size, then length; the distinct sizes and
 * where each one's lengths start (size_first[j] .. size_first[j + 1]). */
struct brs_vocabulary {
    size_t count;
    uint32_t *sizes, *lengths;
    size_t size_count;
    uint32_t *size_values;
    size_t *size_first;
};

/* Builds v from `count` pairs (size, length), in any order with repeats;
 * BRS_ERR_NO_MEMORY leaves v empty. brs_vocabulary_free releases it. */
brs_status brs_vocabulary_build(struct brs_vocabulary *v, const uint32_t *sizes,
                                const uint32_t *lengths, size_t count);
void brs_vocabulary_free(struct brs_vocabulary *v);

/* The shortest vocabulary length of batch size `size` that holds `head`
 * tokens (already padded as the collator pads), or 0 when none does: a
 * non-decreasing function of head, so the contiguity theorem holds. */
uint32_t brs_vocabulary_length(const struct brs_vocabulary *v, size_t size, uint32_t head);

/* n samples sorted longest first (padded lengths) into k contiguous groups
 * whose shapes are in v: the step time of the sync model, then the peak
 * padded tokens, then the total cost, within the model's cap. Exact where
 * the compositions of n into k vocabulary sizes are few (every one is
 * scored); elsewhere the best of least-total splits under thresholds from
 * the exact min-max cost, polished, with a certified time_lower_bound.
 * Fills split->starts, costs, max_cost and time_lower_bound, and
 * group_length[g], the padded length of group g. BRS_ERR_CAP_INFEASIBLE
 * when no split fits the vocabulary; BRS_ERR_TOO_LARGE past the planner's
 * table size (k * n above 2^26). */
brs_status brs_vocabulary_split(struct brs_split *split, uint32_t *group_length,
                                const uint32_t *lengths, size_t n, size_t k, size_t dp_size,
                                int sync, const struct brs_cost_model *model,
                                const struct brs_vocabulary *v);

/* A quick estimate of the step time of n samples (sorted longest first,
 * padded) within v: the least-total split at the exact min-max cost, dealt
 * for the sync model; NO time (the all-ones value) when no split fits.
 * What choosing a vocabulary compares candidates by. */
brs_wide brs_vocabulary_quick_time(const uint32_t *lengths, size_t n, size_t k, size_t dp_size,
                                   int sync, const struct brs_cost_model *model,
                                   const struct brs_vocabulary *v);

#endif
