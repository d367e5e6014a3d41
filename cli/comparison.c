/* comparison.c - one pass per strategy over the same steps. */
#include "comparison.h"

#include <stdlib.h>

#include "baselines.h"
#include "fail.h"
#include "memory.h"
#include "monotonic_clock.h"
#include "planning.h"

typedef struct run {
    const cli_config *config;
    const uint32_t *lengths;
    size_t n;
    const selection *chosen;
    step_shape shape;
    micro_batch_stats *slots; /* one step's K micro-batches, reused */
} run;

static void measure_baseline(epoch_stats *stats, const run *r, const size_t *order,
                             const cost_model *model)
{
    for (uint64_t step = r->chosen->first_step; step < r->chosen->end_step; step++) {
        baseline_step(r->slots, order, r->lengths, r->n, &r->shape, step, model);
        epoch_stats_add_step(stats, r->slots, r->shape.dp_size, r->shape.grad_accum,
                             (uint64_t)r->config->max_tokens);
    }
}

static void measure_baselines(comparison *result, const run *r)
{
    const cli_config *c = r->config;
    size_t *order = cli_calloc(r->n, sizeof *order);
    baseline_random_order(order, r->n, (uint64_t)c->seed, (uint64_t)c->epoch, c->shuffle);
    measure_baseline(&result->random, r, order, &result->model);
    baseline_length_grouped_order(order, r->lengths, r->n, &r->shape, (uint64_t)c->seed,
                                  (uint64_t)c->epoch, c->shuffle);
    measure_baseline(&result->grouped, r, order, &result->model);
    free(order);
}

/* The library's own numbers for each micro-batch, read back through the
 * public API, so that brs is measured exactly like the baselines. */
static void read_slots(micro_batch_stats *slots, const brs_plan *plan, const step_shape *shape)
{
    for (int64_t rank = 0; rank < shape->dp_size; rank++)
        for (int64_t micro = 0; micro < shape->grad_accum; micro++) {
            micro_batch_stats *slot = &slots[rank * shape->grad_accum + micro];
            brs_status status = brs_plan_micro_batch_stats(
                &slot->padded_tokens, &slot->real_tokens, &slot->cost, plan, rank, micro);
            if (status != BRS_OK)
                cli_library_error(status, "reading a micro-batch", brs_plan_last_error(plan));
        }
}

static void measure_brs(comparison *result, const run *r, const brs_sampler *sampler)
{
    brs_plan *plan = planning_new();
    for (uint64_t step = r->chosen->first_step; step < r->chosen->end_step; step++) {
        double started = monotonic_seconds();
        planning_compute(plan, sampler, (uint64_t)r->config->epoch, step);
        result->planning_seconds += monotonic_seconds() - started;
        result->planned_samples += (uint64_t)planning_get_int(plan, BRS_PLAN_NUM_SAMPLES);
        result->time_lower_bound += planning_get_double(plan, BRS_PLAN_TIME_LOWER_BOUND);
        read_slots(r->slots, plan, &r->shape);
        epoch_stats_add_step(&result->brs, r->slots, r->shape.dp_size, r->shape.grad_accum,
                             (uint64_t)r->config->max_tokens);
    }
    brs_plan_free(plan);
}

comparison comparison_run(const brs_sampler *sampler, const cli_config *config,
                          const uint32_t *lengths, size_t n, const selection *chosen)
{
    comparison result = {0};
    run r = {config, lengths, n, chosen,
             {config->batch_size, config->grad_accum, config->dp_size}, NULL};
    r.slots = cli_calloc((size_t)(config->dp_size * config->grad_accum), sizeof *r.slots);
    result.model = cost_model_of(sampler);
    result.megabatch_size = baseline_megabatch_size(n, &r.shape);
    /* brs first: a step it cannot plan is bad input, and nothing else
     * should run (or print) before that is known. */
    measure_brs(&result, &r, sampler);
    measure_baselines(&result, &r);
    free(r.slots);
    return result;
}
