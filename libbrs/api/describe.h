/* api/describe.h - what a plan's micro-batches weigh (describe.c). Internal, not installed. */
#ifndef BRS_API_DESCRIBE_H
#define BRS_API_DESCRIBE_H

#include "api/handles.h"
#include "planner/cost_model.h"
#include "util/wide.h"

/* The encoder side of a plan without images (all 0). */
void brs_describe_no_images(brs_plan *p);
/* Totals, peaks and the time bound of the filled slots (lower_bound and
 * weight_sum those of the step's samples). */
void brs_describe_totals(brs_plan *p, brs_wide lower_bound, brs_wide weight_sum,
                         const struct brs_cost_model *model);
/* The padded tokens of packed slots whose real tokens are filled: each
 * row's total rounded by the sampler's padding. */
void brs_describe_packed_rows(brs_plan *p, const brs_sampler *s);
/* The whole description of slots filled elsewhere than by the planner
 * (the baselines, a loaded plan). */
void brs_describe_slots(brs_plan *p, const brs_sampler *s, const struct brs_cost_model *model,
                        int packed);

#endif
