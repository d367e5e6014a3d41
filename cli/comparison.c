/* comparison.c - one pass per strategy over the same steps. */
#include "comparison.h"

#include "monotonic_clock.h"
#include "planning.h"
#include "sampler_setup.h"

/* What a pass does besides its stats: brs's is timed and may find the cap
 * infeasible, and the bound is summed from one strategy's plans only. */
enum { PASS_BASELINE = 0, PASS_TIMED = 1, PASS_BOUND = 2, PASS_CAP_MAY_FAIL = 4 };

/* Plan `step`; 0 when the cap cannot be kept in it and the pass allows
 * that. Every other failure ends the command: planning_compute plans the
 * step again (the same inputs, the same failure) and exits with the
 * library's message. */
static int plan_step(brs_plan *plan, brs_sampler *sampler, uint64_t epoch, uint64_t step,
                     int pass)
{
    brs_status status = brs_plan_compute(plan, sampler, epoch, step);
    if (status == BRS_ERR_CAP_INFEASIBLE && (pass & PASS_CAP_MAY_FAIL))
        return 0;
    if (status != BRS_OK)
        planning_compute(plan, sampler, epoch, step);
    return 1;
}

/* Returns 0, or the first step + 1 that cannot keep max_tokens (then
 * *stats and the timing are left partial: the caller drops them). */
static uint64_t measure(epoch_stats *stats, comparison *result, brs_sampler *sampler,
                        uint64_t epoch, const selection *chosen, int pass)
{
    uint64_t max_tokens = (uint64_t)sampler_get_int(sampler, BRS_OPT_MAX_TOKENS);
    brs_plan *plan = planning_new();
    uint64_t failed = 0;
    for (uint64_t step = chosen->first_step; step < chosen->end_step; step++) {
        double started = monotonic_seconds();
        if (!plan_step(plan, sampler, epoch, step, pass)) {
            failed = step + 1;
            break;
        }
        if (pass & PASS_TIMED) {
            result->planning_seconds += monotonic_seconds() - started;
            result->planned_samples += (uint64_t)planning_get_int(plan, BRS_PLAN_NUM_SAMPLES);
        }
        if (pass & PASS_BOUND)
            result->time_lower_bound += planning_get_double(plan, BRS_PLAN_TIME_LOWER_BOUND);
        epoch_stats_add_plan(stats, plan, max_tokens);
        uint64_t megabatch = (uint64_t)planning_get_int(plan, BRS_PLAN_MEGABATCH_SIZE);
        result->megabatch_size = megabatch != 0 ? megabatch : result->megabatch_size;
    }
    brs_plan_free(plan);
    return failed;
}

/* brs cannot keep the cap in `step`: forget its partial pass, and ask the
 * library for the least cap that plans the whole epoch. */
static void mark_infeasible(comparison *result, const brs_sampler *sampler, uint64_t epoch,
                            uint64_t step)
{
    *result = (comparison){0};
    result->brs_infeasible = 1;
    result->brs_infeasible_step = step;
    uint64_t least, micro_batches;
    brs_status status = brs_sampler_check_epoch(&least, &micro_batches, sampler, epoch);
    if (status == BRS_OK || status == BRS_ERR_CAP_INFEASIBLE)
        result->least_max_tokens = least;
}

comparison comparison_run(brs_sampler *sampler, uint64_t epoch, const selection *chosen)
{
    comparison result = {0};
    /* brs first: a step it cannot plan for another reason than the cap is
     * bad input, and nothing else should run (or print) before that is known. */
    sampler_set_int(sampler, BRS_OPT_STRATEGY, BRS_STRATEGY_BALANCED);
    uint64_t failed = measure(&result.brs, &result, sampler, epoch, chosen,
                              PASS_TIMED | PASS_BOUND | PASS_CAP_MAY_FAIL);
    if (failed)
        mark_infeasible(&result, sampler, epoch, failed - 1);
    /* The fixed-size strategies plan every step whatever the cap. */
    sampler_set_int(sampler, BRS_OPT_STRATEGY, BRS_STRATEGY_RANDOM);
    measure(&result.random, &result, sampler, epoch, chosen,
            result.brs_infeasible ? PASS_BOUND : PASS_BASELINE);
    sampler_set_int(sampler, BRS_OPT_STRATEGY, BRS_STRATEGY_LENGTH_GROUPED);
    measure(&result.grouped, &result, sampler, epoch, chosen, PASS_BASELINE);
    sampler_set_int(sampler, BRS_OPT_STRATEGY, BRS_STRATEGY_BALANCED);
    return result;
}
