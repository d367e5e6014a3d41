/* planning.c - thin checked wrappers over brs_plan_*. */
#include "planning.h"

#include <inttypes.h>
#include <stdio.h>

#include "fail.h"

brs_plan *planning_new(void)
{
    brs_plan *plan;
    brs_status status = brs_plan_new(&plan);
    if (status != BRS_OK)
        cli_library_error(status, "creating a plan", "");
    return plan;
}

void planning_compute(brs_plan *plan, const brs_sampler *sampler, uint64_t epoch, uint64_t step)
{
    brs_status status = brs_plan_compute(plan, sampler, epoch, step);
    if (status != BRS_OK) {
        /* The library's message names the step and says what to change. */
        char context[96];
        snprintf(context, sizeof context, "planning step %" PRIu64 " of epoch %" PRIu64, step,
                 epoch);
        const char *detail = brs_plan_last_error(plan);
        cli_library_error(status, detail[0] != '\0' ? "" : context, detail);
    }
}

int64_t planning_get_int(const brs_plan *plan, brs_plan_key key)
{
    int64_t value;
    brs_status status = brs_plan_get_int(&value, plan, key);
    if (status != BRS_OK)
        cli_failure("reading plan property %d: %s", (int)key, brs_plan_last_error(plan));
    return value;
}

double planning_get_double(const brs_plan *plan, brs_plan_key key)
{
    double value;
    brs_status status = brs_plan_get_double(&value, plan, key);
    if (status != BRS_OK)
        cli_failure("reading plan property %d: %s", (int)key, brs_plan_last_error(plan));
    return value;
}
