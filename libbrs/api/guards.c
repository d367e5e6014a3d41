/* guards.c - the guards every query of a plan opens with, plan.c's and
 * context_parallel.c's alike: one message for a plan that holds no step and
 * one for a NULL out-parameter, each naming the call. */
#include "api/internal.h"

brs_status brs_guards_ready(const brs_plan *plan, const char *call)
{
    if (plan->ready) return BRS_OK;
    return brs_fail(&plan->message, BRS_ERR_STATE,
                    "%s: the plan holds no step: call brs_plan_compute or brs_plan_load first "
                    "(or the last one failed)",
                    call);
}

brs_status brs_guards_null_out(const brs_plan *plan, const char *call)
{
    return brs_fail(&plan->message, BRS_ERR_NULL_POINTER, "%s: an out-parameter is NULL", call);
}
