/* step.c - one step of a checked sampler into the plan handle, the path
 * that brs_plan_compute, brs_plan_compute_batch and brs_sampler_shapes
 * share: the samples drawn and sorted (samples.c), the micro-batches
 * formed with the sampler's strategy (the balanced planner, or a
 * fixed-size baseline of planner/baselines.c), dealt to slots and
 * described (describe.c). */
#include "api/internal.h"
#include "planner/assign.h"
#include "planner/baselines.h"
#include "planner/cost_model.h"
#include "planner/packed.h"
#include "planner/planner.h"
#include "planner/split.h"
#include "planner/search.h"
#include "planner/two_part.h"
#include "planner/vocabulary.h"
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

/* A step whose samples carry images: the two-part planner, started from the
 * text planner's split, then described (describe.c) with both parts. */
static brs_status plan_two_part(brs_plan *p, const brs_sampler *s,
                                const struct brs_cost_model *model)
{
    int packed = (int)s->config.packed, sync = (int)s->config.sync;
    size_t n = p->num_samples;
    for (size_t i = 0; i < n; i++) p->sorted_load[i] = brs_encoder_loads_of(s, p->sorted_index[i]);
    if (!packed)
        for (size_t g = 0; g < p->k; g++)
            for (size_t i = p->starts[g]; i < p->starts[g + 1]; i++) p->group_of[i] = (uint32_t)g;
    struct brs_two_part_step step = {packed ? p->sorted_length : p->planned_length,
                                     p->sorted_load,
                                     n,
                                     p->k,
                                     p->dp_size,
                                     sync,
                                     packed,
                                     model};
    /* the text split is read before group_of is first written */
    brs_status status = brs_two_part_split(p->group_of, p->group_cost, &step, p->group_of);
    if (status == BRS_ERR_CAP_INFEASIBLE) return brs_cap_error_encoder(p, s);
    if (status == BRS_OK)
        status = brs_assign(p->slot_of, &p->micro_sync, &p->step_sync, p->group_cost, NULL, p->k,
                            p->dp_size, sync);
    if (status != BRS_OK)
        return brs_fail(&p->message, status, "the planner failed: %s", brs_strerror(status));
    fill_slots(p, 1);
    brs_describe_slots(p, s, model, packed);
    return BRS_OK;
}

/* The balanced planner on the gathered step, dealt for the sync model
 * (assign.c) as the planner scored it. */
static brs_status plan_balanced(brs_plan *p, const brs_sampler *s,
                                const struct brs_cost_model *model)
{
    int packed = (int)s->config.packed, sync = (int)s->config.sync;
    struct brs_split split = {.starts = p->starts, .group_of = p->group_of, .costs = p->group_cost};
    brs_status status = packed ? brs_packed_split(&split, p->sorted_length, p->num_samples, p->k,
                                                  p->dp_size, sync, model, p->pack_scratch)
                               : brs_planner_split(&split, p->planned_length, p->num_samples, p->k,
                                                   p->dp_size, sync, model, p->sort_scratch);
    if (status == BRS_ERR_CAP_INFEASIBLE) return brs_cap_error(p, s, &split);
    if (status == BRS_OK && brs_encoder_loads_in_step(p, s)) return plan_two_part(p, s, model);
    if (status == BRS_OK)
        status = brs_assign(p->slot_of, &p->micro_sync, &p->step_sync, p->group_cost, NULL, p->k,
                            p->dp_size, sync);
    if (status != BRS_OK)
        return brs_fail(&p->message, status, "the planner failed: %s", brs_strerror(status));
    fill_slots(p, packed);
    if (packed) brs_describe_packed_rows(p, s);
    brs_describe_no_images(p);
    brs_describe_totals(p, split.lower_bound, split.weight_sum, model);
    /* the padded planner certifies a tighter bound on the step time */
    if (split.time_lower_bound > p->time_lower_bound) p->time_lower_bound = split.time_lower_bound;
    return BRS_OK;
}

/* The step within the shape vocabulary v (planner/vocabulary.c), dealt
 * for the sync model as it was scored. */
static brs_status plan_within(brs_plan *p, const brs_sampler *s, const struct brs_cost_model *model,
                              const struct brs_vocabulary *v)
{
    int sync = (int)s->config.sync;
    struct brs_split split = {.starts = p->starts, .costs = p->group_cost};
    brs_status status = brs_vocabulary_split(&split, p->group_length, p->planned_length,
                                             p->num_samples, p->k, p->dp_size, sync, model, v);
    if (status == BRS_ERR_CAP_INFEASIBLE)
        return brs_fail(&p->message, status,
                        "step %llu of epoch %llu cannot be split into %zu micro-batches whose "
                        "shapes are in the vocabulary of %zu shapes (max_shapes %lld%s): raise "
                        "max_shapes%s",
                        (unsigned long long)p->step, (unsigned long long)p->epoch, p->k, v->count,
                        (long long)s->config.max_shapes, model->max_tokens ? ", max_tokens" : "",
                        model->max_tokens ? " or max_tokens" : "");
    if (status == BRS_OK)
        status = brs_assign(p->slot_of, &p->micro_sync, &p->step_sync, p->group_cost, NULL, p->k,
                            p->dp_size, sync);
    if (status != BRS_OK)
        return brs_fail(&p->message, status, "the planner failed: %s", brs_strerror(status));
    p->within_vocabulary = 1;
    fill_slots(p, 0);
    brs_describe_no_images(p);
    brs_wide weight_sum,
        bound = brs_search_lower_bound(p->planned_length, p->num_samples, p->k, model, &weight_sum);
    brs_describe_totals(p, bound, weight_sum, model);
    if (split.time_lower_bound > p->time_lower_bound) p->time_lower_bound = split.time_lower_bound;
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

brs_status brs_step_run(brs_plan *plan, const brs_sampler *sampler, uint64_t epoch, uint64_t step)
{
    const struct brs_vocabulary *vocabulary = NULL;
    if (sampler->config.max_shapes > 0 && sampler->config.strategy == BRS_STRATEGY_BALANCED) {
        brs_status status = brs_vocabulary_of(&vocabulary, sampler, &plan->message);
        if (status != BRS_OK) return status;
    }
    return brs_step_plan(plan, sampler, epoch, step, vocabulary);
}

brs_status brs_step_plan(brs_plan *plan, const brs_sampler *sampler, uint64_t epoch, uint64_t step,
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

    struct brs_cost_model model = brs_settings_cost_model(sampler);
    if (vocabulary) {
        status = plan_within(plan, sampler, &model, vocabulary);
        if (status != BRS_OK) return status;
    } else if (c->strategy == BRS_STRATEGY_BALANCED) {
        status = plan_balanced(plan, sampler, &model);
        if (status != BRS_OK) return status;
    } else {
        brs_baselines_slots(plan->indices, plan->slot_start, plan->draw_index, plan->num_samples,
                            plan->dp_size, plan->grad_accum);
        brs_describe_slots(plan, sampler, &model, (int)c->packed);
    }
    brs_message_clear(&plan->message);
    plan->ready = 1;
    return BRS_OK;
}
