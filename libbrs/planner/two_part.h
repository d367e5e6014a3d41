/* planner/two_part.h - splitting a step whose samples carry images: the text cost and the vision
 * encoder's summed (two_part.c, docs/algorithm.md "Two parts"). Internal, not installed. */
#ifndef BRS_PLANNER_TWO_PART_H
#define BRS_PLANNER_TWO_PART_H

#include "brs.h"
#include "planner/cost_model.h"
#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* A step of n samples sorted longest first: lengths are what a micro-batch
 * pads to (padded mode) or its samples' tokens (packed), loads their images. */
struct brs_two_part_step {
    const uint32_t *lengths;
    const struct brs_encoder_load *loads;
    size_t n, k, dp_size;
    int sync, packed;
    const struct brs_cost_model *model;
};

/* Splits the step into k non-empty groups within both caps (max_tokens,
 * max_encoder_tokens) at the least score (planner/objective.h) found: every
 * split where the step is small (exact), else the better of greedy starts
 * and `text_split` (the text planner's group_of, or NULL), each improved by
 * moves and swaps off the costliest group. Writes group_of[n] and costs[k].
 * BRS_ERR_CAP_INFEASIBLE when no split found meets the caps. */
brs_status brs_two_part_split(uint32_t *group_of, brs_wide *costs,
                              const struct brs_two_part_step *step, const uint32_t *text_split);

/* The most splits of a step the exact search scores. */
enum { BRS_TWO_PART_EXACT_SPLITS = 50000 };

#endif
