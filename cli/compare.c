/* compare.c - every strategy of the library over the same steps, summed
 * per strategy (compare.h). */
#define _POSIX_C_SOURCE 200809L

#include "compare.h"

#include <time.h>

#include "output.h"
#include "sampler.h"
#include "shape_tally.h"

/* CLOCK_MONOTONIC (POSIX): C11's timespec_get only has
 * TIME_UTC, which moves when the wall clock is set. */

static double monotonic_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

/* Sum the library's per-step numbers per strategy. */

/* The cap is a bound on each micro-batch, so each one is read. */
static uint64_t count_over_cap(const brs_plan *plan, uint64_t max_tokens)
{
    int64_t dp_size = planning_get_int(plan, BRS_PLAN_DP_SIZE);
    int64_t grad_accum = planning_get_int(plan, BRS_PLAN_GRAD_ACCUM);
    uint64_t over = 0;
    for (int64_t rank = 0; rank < dp_size; rank++)
        for (int64_t micro = 0; micro < grad_accum; micro++)
            over += planning_micro_batch(plan, rank, micro).padded_tokens > max_tokens;
    return over;
}

/* Add the computed plan of one step; max_tokens 0 means no cap. */
static void add_plan(epoch_stats *stats, const brs_plan *plan, uint64_t max_tokens)
{
    uint64_t peak = (uint64_t)planning_get_int(plan, BRS_PLAN_MAX_PADDED_TOKENS);
    stats->peak_padded_tokens = peak > stats->peak_padded_tokens ? peak : stats->peak_padded_tokens;
    uint64_t patches = (uint64_t)planning_get_int(plan, BRS_PLAN_MAX_ENCODER_TOKENS);
    if (patches > stats->peak_encoder_tokens) stats->peak_encoder_tokens = patches;
    stats->padded_tokens += (uint64_t)planning_get_int(plan, BRS_PLAN_TOTAL_PADDED_TOKENS);
    stats->real_tokens += (uint64_t)planning_get_int(plan, BRS_PLAN_TOTAL_REAL_TOKENS);
    if (max_tokens != 0 && peak > max_tokens)
        stats->cap_violations += count_over_cap(plan, max_tokens);
    stats->micro_sync_time += planning_get_double(plan, BRS_PLAN_MICRO_SYNC_TIME);
    stats->step_sync_time += planning_get_double(plan, BRS_PLAN_STEP_SYNC_TIME);
    stats->useful_time += planning_get_double(plan, BRS_PLAN_USEFUL_TIME);
    stats->padding_time += planning_get_double(plan, BRS_PLAN_PADDING_TIME);
    stats->waiting_time += planning_get_double(plan, BRS_PLAN_WAITING_TIME);
    stats->steps += 1;
}

/* One pass per strategy over the same steps. */

/* What a pass does besides its stats: brs's is timed and may find the cap
 * infeasible, and the bound is summed from one strategy's plans only. */
enum { PASS_BASELINE = 0, PASS_TIMED = 1, PASS_BOUND = 2, PASS_CAP_MAY_FAIL = 4 };

/* Plan `step`; 0 when the cap cannot be kept in it and the pass allows
 * that. Every other failure ends the command: planning_compute plans the
 * step again (the same inputs, the same failure) and exits with the
 * library's message. */
static int plan_step(brs_plan *plan, brs_sampler *sampler, uint64_t epoch, uint64_t step, int pass)
{
    brs_status status = brs_plan_compute(plan, sampler, epoch, step);
    if (status == BRS_ERR_CAP_INFEASIBLE && (pass & PASS_CAP_MAY_FAIL)) return 0;
    if (status != BRS_OK) planning_compute(plan, sampler, epoch, step);
    return 1;
}

/* Returns 0, or the first step + 1 that cannot keep max_tokens (then
 * *stats and the timing are left partial: the caller drops them). */
static uint64_t measure(epoch_stats *stats, comparison *result, brs_sampler *sampler,
                        uint64_t epoch, const selection *chosen, int pass)
{
    uint64_t max_tokens = (uint64_t)sampler_get_int(sampler, BRS_OPT_MAX_TOKENS);
    brs_plan *plan = planning_new();
    shape_tally shapes = {0};
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
        add_plan(stats, plan, max_tokens);
        shape_tally_add_plan(&shapes, plan);
        uint64_t megabatch = (uint64_t)planning_get_int(plan, BRS_PLAN_MEGABATCH_SIZE);
        result->megabatch_size = megabatch != 0 ? megabatch : result->megabatch_size;
    }
    stats->shapes_per_rank = shape_tally_finish(&shapes);
    brs_plan_free(plan);
    return failed;
}

/* brs cannot keep the cap in `step`: forget its partial pass, and ask the
 * library for the least cap that plans the whole epoch. */
static void mark_infeasible(comparison *result, const brs_sampler *sampler, uint64_t epoch,
                            uint64_t step)
{
    *result = (comparison){.lowest_strategy = result->lowest_strategy,
                           .highest_strategy = result->highest_strategy};
    result->brs_infeasible = 1;
    result->brs_infeasible_step = step;
    uint64_t least, micro_batches;
    brs_status status = brs_sampler_check_epoch(&least, &micro_batches, sampler, epoch);
    /* max_tokens plans every step: the images' cap is what failed */
    if (status == BRS_OK && sampler_get_int(sampler, BRS_OPT_MAX_ENCODER_TOKENS) > 0)
        result->encoder_cap_failed = 1;
    else if (status == BRS_OK || status == BRS_ERR_CAP_INFEASIBLE)
        result->least_max_tokens = least;
}

/* The library's strategies, which the comparison holds one epoch_stats each of. */
static void read_strategies(comparison *result)
{
    brs_status status = brs_option_bounds_int(&result->lowest_strategy, &result->highest_strategy,
                                              BRS_OPT_STRATEGY);
    if (status != BRS_OK) cli_library_error(status, "reading the strategies", "");
    if (result->highest_strategy - result->lowest_strategy >= COMPARISON_MAX_STRATEGIES)
        cli_failure("the library has more strategies than brs compare can hold");
}

const epoch_stats *comparison_stats(const comparison *result, int64_t strategy)
{
    return &result->stats[strategy - result->lowest_strategy];
}

comparison comparison_run(brs_sampler *sampler, uint64_t epoch, const selection *chosen)
{
    comparison result = {0};
    read_strategies(&result);
    /* brs first: a step it cannot plan for another reason than the cap is
     * bad input, and nothing else should run (or print) before that is known. */
    sampler_set_int(sampler, BRS_OPT_STRATEGY, BRS_STRATEGY_BALANCED);
    epoch_stats *brs = &result.stats[BRS_STRATEGY_BALANCED - result.lowest_strategy];
    uint64_t failed =
        measure(brs, &result, sampler, epoch, chosen, PASS_TIMED | PASS_BOUND | PASS_CAP_MAY_FAIL);
    if (failed) mark_infeasible(&result, sampler, epoch, failed - 1);
    /* The fixed-size strategies plan every step whatever the cap. Without
     * brs's plans the bound comes from random's, which draw the same samples
     * per step. */
    for (int64_t strategy = result.lowest_strategy; strategy <= result.highest_strategy;
         strategy++) {
        if (strategy == BRS_STRATEGY_BALANCED) continue;
        int bound = result.brs_infeasible && strategy == BRS_STRATEGY_RANDOM;
        sampler_set_int(sampler, BRS_OPT_STRATEGY, strategy);
        measure(&result.stats[strategy - result.lowest_strategy], &result, sampler, epoch, chosen,
                bound ? PASS_BOUND : PASS_BASELINE);
    }
    sampler_set_int(sampler, BRS_OPT_STRATEGY, BRS_STRATEGY_BALANCED);
    return result;
}
