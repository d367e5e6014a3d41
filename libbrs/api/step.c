/* step.c - one step of a checked sampler into the plan handle, the path
 * that brs_plan_compute, brs_plan_compute_batch and brs_sampler_shapes
 * share: the samples drawn and sorted (samples.c), the step resolved once
 * (struct brs_step: sizes, topology, sync, mode, cost model, padding,
 * vocabulary, images), the micro-batches formed with the sampler's strategy
 * (the planner's one entry, brs_planner_plan, or a fixed-size baseline of
 * planner/baselines.c), written into slots and described (describe.c). */
#include "api/internal.h"
#include "planner/planner.h"
#include "util/wide.h"

#include <string.h>

/* The padded length of padded group g: its head's, or its vocabulary
 * shape's where the step was planned within one. */
static uint32_t length_of_group(const brs_plan *p, size_t g)
{
    return p->within_vocabulary ? p->group_length[g] : p->planned_length[p->starts[g]];
}

/* Writes each group's samples (sorted positions, longest first) into its
 * slot: first counts, then prefix sums, then the indices. */
static void fill_slots(brs_plan *p, int packed)
{
    size_t k = p->k, n = p->num_samples;
    memset(p->slot_start, 0, (k + 1) * sizeof(size_t));
    memset(p->real, 0, k * sizeof(uint64_t));
    if (packed) {
        for (size_t i = 0; i < n; i++) p->slot_start[p->slot_of[p->group_of[i]] + 1]++;
    } else {
        for (size_t g = 0; g < k; g++)
            p->slot_start[p->slot_of[g] + 1] = p->starts[g + 1] - p->starts[g];
    }
    for (size_t s = 0; s < k; s++) p->slot_start[s + 1] += p->slot_start[s];
    if (packed) {
        /* The sort scratch (2n >= k words) is free now: it holds each
         * slot's write cursor. */
        size_t *cursor = (size_t *)p->sort_scratch;
        for (size_t s = 0; s < k; s++) cursor[s] = p->slot_start[s];
        for (size_t i = 0; i < n; i++) {
            uint32_t slot = p->slot_of[p->group_of[i]];
            p->indices[cursor[slot]++] = p->sorted_index[i];
            p->real[slot] += p->sorted_length[i];
        }
    } else {
        /* Slot by slot, so that the indices are written in sequence; each
         * group is read in sequence from where it starts. Its destination
         * and token sum are locals, which the compiler cannot keep in
         * registers through p's arrays. */
        for (size_t g = 0; g < k; g++) p->group_of_slot[p->slot_of[g]] = (uint32_t)g;
        uint64_t *out = p->indices;
        for (size_t slot = 0; slot < k; slot++) {
            uint32_t g = p->group_of_slot[slot];
            size_t first = p->starts[g], end = p->starts[g + 1];
            uint64_t real = 0;
            for (size_t i = first; i < end; i++) {
                *out++ = p->sorted_index[i];
                real += p->sorted_length[i];
            }
            p->real[slot] = real;
            p->padded[slot] = (uint64_t)(end - first) * length_of_group(p, g);
        }
    }
    for (size_t g = 0; g < k; g++) p->slot_cost[p->slot_of[g]] = p->group_cost[g];
}

/* The vocabulary's error: the step fits no split into its shapes. */
static brs_status vocabulary_error(brs_plan *p, const brs_sampler *s)
{
    const struct brs_step *step = &p->resolved;
    return brs_fail(&p->message, BRS_ERR_CAP_INFEASIBLE,
                    "step %llu of epoch %llu cannot be split into %zu micro-batches whose shapes "
                    "are in the vocabulary of %zu shapes (max_shapes %lld%s): raise max_shapes%s",
                    (unsigned long long)p->step, (unsigned long long)p->epoch, p->k,
                    step->vocabulary->count, (long long)s->config.max_shapes,
                    step->model.max_tokens ? ", max_tokens" : "",
                    step->model.max_tokens ? " or max_tokens" : "");
}

brs_status brs_step_error(brs_plan *p, const brs_sampler *s, const struct brs_planned *planned,
                          brs_status status)
{
    if (status == BRS_ERR_CAP_INFEASIBLE && planned->failed == BRS_FAILED_TEXT_CAP)
        return brs_cap_error(p, s, &planned->split);
    if (status == BRS_ERR_CAP_INFEASIBLE && planned->failed == BRS_FAILED_ENCODER_CAP)
        return brs_cap_error_encoder(p, s);
    if (status == BRS_ERR_CAP_INFEASIBLE && planned->failed == BRS_FAILED_VOCABULARY)
        return vocabulary_error(p, s);
    return brs_fail(&p->message, status, "the planner failed: %s", brs_strerror(status));
}

/* The balanced planner on the resolved step (planner/planner.c), its
 * groups written into slots and described: a two-part plan from its
 * slots (describe.c prices both parts), a text plan from the planner's
 * bounds, the tighter certified bound on the step time included. */
/* A context-parallel step (planner/context_parallel.c) written into the
 * plan (context_parallel.c); its errors name what would plan it. */
static brs_status plan_context_parallel(brs_plan *p, const brs_sampler *s)
{
    if (brs_cp_reserve(p, p->num_samples) != BRS_OK)
        return brs_fail(&p->message, BRS_ERR_NO_MEMORY,
                        "cannot allocate the context-parallel buffers of a %zu-sample step",
                        p->num_samples);
    struct brs_planned planned = {.cp = &p->cp};
    brs_status status = brs_planner_plan(&planned, &p->resolved, p->sort_scratch, p->pack_scratch);
    const struct brs_config *c = &s->config;
    if (status == BRS_ERR_SAMPLE_TOO_LONG)
        return brs_fail(&p->message, status,
                        "step %llu of epoch %llu has a sample of %u tokens that no allowed "
                        "context-parallel degree (cp_size %lld, cp_degrees %lld) holds within "
                        "max_tokens_per_rank %lld: raise max_tokens_per_rank or cp_size",
                        (unsigned long long)p->step, (unsigned long long)p->epoch,
                        p->sorted_length[0], (long long)c->cp_size, (long long)c->cp_degrees,
                        (long long)c->max_tokens_per_rank);
    if (status == BRS_ERR_CAP_INFEASIBLE)
        return brs_fail(&p->message, status,
                        "step %llu of epoch %llu: libbrs found no plan of its %zu samples in "
                        "grad_accum %lld micro-steps of dp_size %lld x cp_size %lld ranks with at "
                        "most max_tokens_per_rank %lld tokens per rank: raise grad_accum, "
                        "max_tokens_per_rank or cp_size",
                        (unsigned long long)p->step, (unsigned long long)p->epoch, p->num_samples,
                        (long long)c->grad_accum, (long long)c->dp_size, (long long)c->cp_size,
                        (long long)c->max_tokens_per_rank);
    if (status != BRS_OK)
        return brs_fail(&p->message, status, "the planner failed: %s", brs_strerror(status));
    p->cp_active = 1;
    brs_cp_fill(p);
    return BRS_OK;
}

static brs_status plan_balanced(brs_plan *p, const brs_sampler *s)
{
    if (p->resolved.cp.active) return plan_context_parallel(p, s);
    struct brs_planned planned = {
        .split = {.starts = p->starts, .group_of = p->group_of, .costs = p->group_cost},
        .group_length = p->group_length,
        .slot_of = p->slot_of};
    brs_status status = brs_planner_plan(&planned, &p->resolved, p->sort_scratch, p->pack_scratch);
    if (status != BRS_OK) return brs_step_error(p, s, &planned, status);
    p->micro_sync = planned.micro_sync;
    p->step_sync = planned.step_sync;
    p->within_vocabulary = planned.within_vocabulary;
    fill_slots(p, planned.by_group);
    if (planned.with_images) {
        brs_describe_slots(p, s);
        return BRS_OK;
    }
    if (p->resolved.packed) brs_describe_packed_rows(p);
    brs_describe_no_images(p);
    struct brs_split *split = &planned.split;
    if (planned.within_vocabulary) /* the bound of the shapes' raw lengths holds a fortiori */
        split->lower_bound = brs_search_lower_bound(p->planned_length, p->num_samples, p->k,
                                                    &p->resolved.model, &split->weight_sum);
    brs_describe_totals(p, split->lower_bound, split->weight_sum);
    if (split->time_lower_bound > p->time_lower_bound)
        p->time_lower_bound = split->time_lower_bound;
    return BRS_OK;
}

/* The length_grouped epoch order of the sampler (baselines.c), cached in
 * the plan for one (fingerprint, epoch). */
static brs_status grouped_order(const uint64_t **order, brs_plan *p, const brs_sampler *s,
                                uint64_t epoch)
{
    const struct brs_config *c = &s->config;
    struct brs_grouped_source source = {
        s->lengths,
        s->count,
        (uint64_t)c->seed,
        (int)c->shuffle,
        brs_baselines_megabatch(s->count, (size_t)(c->batch_size * c->grad_accum)),
        0};
    brs_sampler_fingerprint(&source.fingerprint, s); /* lengths are set: cannot fail */
    p->megabatch_size = source.megabatch;
    return brs_grouped_order_get(order, &p->grouped, &source, epoch);
}

void brs_step_resolve(brs_plan *p, const brs_sampler *s, const struct brs_vocabulary *vocabulary)
{
    const struct brs_config *c = &s->config;
    struct brs_padding padding = p->resolved.padding; /* brs_samples_gather's */
    p->resolved = (struct brs_step){.lengths = p->sorted_length,
                                    .planned = p->planned_length,
                                    .loads = NULL,
                                    .n = p->num_samples,
                                    .k = p->k,
                                    .dp_size = p->dp_size,
                                    .grad_accum = p->grad_accum,
                                    .sync = (int)c->sync,
                                    .packed = (int)c->packed,
                                    .model = brs_settings_cost_model_padded(s, &padding),
                                    .padding = padding,
                                    .vocabulary = vocabulary,
                                    .cp = brs_cp_layout_of(s, &padding)};
    if (!brs_encoder_loads_in_step(p, s)) return;
    for (size_t i = 0; i < p->num_samples; i++)
        p->sorted_load[i] = brs_encoder_loads_of(s, p->sorted_index[i]);
    p->resolved.loads = p->sorted_load;
}

brs_status brs_step_draw(brs_plan *plan, const brs_sampler *sampler, uint64_t epoch, uint64_t step,
                         const struct brs_vocabulary *vocabulary)
{
    const struct brs_config *c = &sampler->config;
    plan->within_vocabulary = 0;
    brs_status status = brs_samples_open(plan, sampler, epoch, step);
    if (status != BRS_OK) return status;
    const uint64_t *epoch_order = NULL;
    if (c->strategy == BRS_STRATEGY_LENGTH_GROUPED &&
        grouped_order(&epoch_order, plan, sampler, epoch) != BRS_OK)
        return brs_fail(&plan->message, BRS_ERR_NO_MEMORY,
                        "cannot allocate the length_grouped order of %zu samples", sampler->count);
    brs_samples_draw(plan, sampler, epoch, step, epoch_order);
    status = brs_samples_gather(plan, sampler, 1);
    if (status != BRS_OK) return status;
    brs_step_resolve(plan, sampler, vocabulary);
    return BRS_OK;
}

brs_status brs_step_plan(brs_plan *plan, const brs_sampler *sampler, uint64_t epoch, uint64_t step,
                         const struct brs_vocabulary *vocabulary)
{
    brs_status status = brs_step_draw(plan, sampler, epoch, step, vocabulary);
    if (status != BRS_OK) return status;
    if (sampler->config.strategy == BRS_STRATEGY_BALANCED) {
        status = plan_balanced(plan, sampler);
        if (status != BRS_OK) return status;
    } else {
        brs_baselines_slots(plan->indices, plan->slot_start, plan->draw_index, plan->num_samples,
                            plan->dp_size, plan->grad_accum);
        brs_describe_slots(plan, sampler);
    }
    brs_message_clear(&plan->message);
    plan->ready = 1;
    return BRS_OK;
}
