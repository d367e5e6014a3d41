/* planning.h - compute one step's plan, or end the command with the reason. */
#ifndef BRS_CLI_PLANNING_H
#define BRS_CLI_PLANNING_H

#include <stdint.h>

#include <brs.h>

/* A new, empty plan (exit 1 if it cannot be made). */
brs_plan *planning_new(void);

/* Plan `step` of `epoch`; a failure (e.g. an unsatisfiable --max-tokens)
 * exits with the library's message and the step's number. */
void planning_compute(brs_plan *plan, const brs_sampler *sampler, uint64_t epoch, uint64_t step);

/* An integer or double property of the computed plan (BRS_PLAN_*). */
int64_t planning_get_int(const brs_plan *plan, brs_plan_key key);
double planning_get_double(const brs_plan *plan, brs_plan_key key);

#endif
