/* api/step.h - one step into the plan handle (step.c). Internal, not installed. */
#ifndef BRS_API_STEP_H
#define BRS_API_STEP_H

#include "brs.h"
#include "api/handles.h"
#include "planner/vocabulary.h"

#include <stdint.h>

/* Step `step` of `epoch` of a sampler whose configuration is checked
 * (brs_settings_check, or brs_plan_compute_batch's own checks) and the step
 * in range: drawn, gathered, planned with its strategy, described; the
 * plan is ready on BRS_OK. */
brs_status brs_step_run(brs_plan *p, const brs_sampler *s, uint64_t epoch, uint64_t step);
/* The same with the sampler's shape vocabulary given: NULL plans without
 * one (what choosing the vocabulary plans), whatever max_shapes says. */
brs_status brs_step_plan(brs_plan *p, const brs_sampler *s, uint64_t epoch, uint64_t step,
                         const struct brs_vocabulary *vocabulary);

#endif
