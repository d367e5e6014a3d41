/* guards.c - the guards every query of a plan opens with, plan.c's and
 * context_parallel.c's alike, in one order: the handle, the out-parameters
 * (one message for a NULL one), a step held (one message for a plan that
 * holds none), each message naming the call. */
#include "api/internal.h"

static brs_status ready(const brs_plan *plan, const char *call)
{
    if (plan->ready) return BRS_OK;
    return brs_fail(&plan->message, BRS_ERR_STATE,
                    "%s: the plan holds no step: call brs_plan_compute or brs_plan_load first "
                    "(or the last one failed)",
                    call);
}

static brs_status null_out(const brs_plan *plan, const char *call)
{
    return brs_fail(&plan->message, BRS_ERR_NULL_POINTER, "%s: an out-parameter is NULL", call);
}

brs_status brs_guards_open(const brs_plan *plan, int outputs, const char *call)
{
    if (!plan) return BRS_ERR_NULL_POINTER;
    if (!outputs) return null_out(plan, call);
    return ready(plan, call);
}
