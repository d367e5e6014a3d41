/* comparison.c - one pass per strategy over the same steps. */
#include "comparison.h"

#include "monotonic_clock.h"
#include "planning.h"
#include "sampler_setup.h"

static void measure(epoch_stats *stats, comparison *result, brs_sampler *sampler,
                    uint64_t epoch, const selection *chosen, int timed)
{
    uint64_t max_tokens = (uint64_t)sampler_get_int(sampler, BRS_OPT_MAX_TOKENS);
    brs_plan *plan = planning_new();
    for (uint64_t step = chosen->first_step; step < chosen->end_step; step++) {
        double started = monotonic_seconds();
        planning_compute(plan, sampler, epoch, step);
        if (timed) {
            result->planning_seconds += monotonic_seconds() - started;
            result->planned_samples += (uint64_t)planning_get_int(plan, BRS_PLAN_NUM_SAMPLES);
            result->time_lower_bound += planning_get_double(plan, BRS_PLAN_TIME_LOWER_BOUND);
        }
        epoch_stats_add_plan(stats, plan, max_tokens);
        uint64_t megabatch = (uint64_t)planning_get_int(plan, BRS_PLAN_MEGABATCH_SIZE);
        result->megabatch_size = megabatch != 0 ? megabatch : result->megabatch_size;
    }
    brs_plan_free(plan);
}

comparison comparison_run(brs_sampler *sampler, uint64_t epoch, const selection *chosen)
{
    comparison result = {0};
    /* brs first: a step it cannot plan is bad input, and nothing else
     * should run (or print) before that is known. */
    sampler_set_int(sampler, BRS_OPT_STRATEGY, BRS_STRATEGY_BALANCED);
    measure(&result.brs, &result, sampler, epoch, chosen, 1);
    sampler_set_int(sampler, BRS_OPT_STRATEGY, BRS_STRATEGY_RANDOM);
    measure(&result.random, &result, sampler, epoch, chosen, 0);
    sampler_set_int(sampler, BRS_OPT_STRATEGY, BRS_STRATEGY_LENGTH_GROUPED);
    measure(&result.grouped, &result, sampler, epoch, chosen, 0);
    sampler_set_int(sampler, BRS_OPT_STRATEGY, BRS_STRATEGY_BALANCED);
    return result;
}
