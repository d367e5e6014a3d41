/* plan.c - the plan handle: created, freed, and brs_plan_compute, which
 * checks the sampler and the step and runs the step's path (step.c).
 * brs_plan_compute_batch is plan_batch.c, loading plan_load.c, queries
 * plan_query.c. */
#include "api/handles.h"
#include "api/message.h"
#include "api/settings.h"
#include "api/step.h"
#include "planner/baselines.h"

#include <stdlib.h>

brs_status brs_plan_new(brs_plan **out)
{
    if (!out) return BRS_ERR_NULL_POINTER;
    *out = calloc(1, sizeof **out);
    return *out ? BRS_OK : BRS_ERR_NO_MEMORY;
}

static void free_buffers(brs_plan *p)
{
    free(p->indices);
    free(p->draw_index);
    free(p->draw_length);
    free(p->sorted_index);
    free(p->sorted_length);
    free(p->padded_length);
    free(p->sort_scratch);
    free(p->group_of);
    free(p->slot_start);
    free(p->padded);
    free(p->real);
    free(p->slot_cost);
    free(p->starts);
    free(p->group_cost);
    free(p->group_length);
    free(p->group_of_slot);
    free(p->slot_of);
    free(p->pack_scratch);
    free(p->sorted_load);
    free(p->encoder_tokens);
    free(p->images);
    free(p->encoder_cost);
    brs_grouped_order_free(&p->grouped);
}

void brs_plan_free(brs_plan *plan)
{
    if (!plan) return;
    free_buffers(plan);
    free(plan);
}

brs_status brs_plan_compute(brs_plan *plan, const brs_sampler *sampler, uint64_t epoch,
                            uint64_t step)
{
    if (!plan) return BRS_ERR_NULL_POINTER;
    plan->ready = 0;
    plan->batch = 0;
    if (!sampler)
        return brs_fail(&plan->message, BRS_ERR_NULL_POINTER, "brs_plan_compute: sampler is NULL");
    brs_status status = brs_settings_check(sampler, &plan->message);
    if (status != BRS_OK) return status;
    uint64_t steps = brs_settings_steps(sampler);
    if (step >= steps)
        return brs_fail(&plan->message, BRS_ERR_OUT_OF_RANGE,
                        "step %llu is out of range: an epoch has %llu steps (0..%llu)",
                        (unsigned long long)step, (unsigned long long)steps,
                        (unsigned long long)steps - 1);
    return brs_step_run(plan, sampler, epoch, step);
}

/* Checks a loaded plan's shape and sums its sizes into *total. */
