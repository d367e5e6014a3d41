/* api/cap_error.h - the error of a step the cap cannot plan (cap_error.c). Internal, not
 * installed. */
#ifndef BRS_API_CAP_ERROR_H
#define BRS_API_CAP_ERROR_H

#include "brs.h"
#include "api/handles.h"
#include "planner/split.h"

/* BRS_ERR_CAP_INFEASIBLE for the gathered step of p (a brs_plan_compute
 * step, or the batch of brs_plan_compute_batch), naming what would plan
 * it: the least cap, found as the planner decides, or more micro-batches
 * (split->needed). Uses the plan's buffers: the plan holds no step. */
brs_status brs_cap_error(brs_plan *p, const brs_sampler *s, const struct brs_split *split);
/* The same where the encoder cap (or both caps at once) cannot plan a
 * two-part step as split. */
brs_status brs_cap_error_encoder(brs_plan *p, const brs_sampler *s);

#endif
