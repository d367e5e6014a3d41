/* plan.c - the plan handle and brs_plan_compute: draw a step's samples,
 * check their lengths, form the micro-batches with the sampler's strategy
 * (the balanced planner here, a fixed-size baseline of baselines.c), and
 * describe them (plan_describe.c). brs_plan_step is that whole path for a
 * checked sampler, shared with brs_plan_compute_batch (plan_batch.c).
 * Loading is plan_load.c, queries plan_query.c. */
#include "api/cap_error.h"
#include "api/config.h"
#include "api/handles.h"
#include "api/message.h"
#include "draw/draw.h"
#include "planner/assign.h"
#include "planner/baselines.h"
#include "planner/cost_model.h"
#include "planner/packed.h"
#include "planner/planner.h"
#include "planner/two_part.h"
#include "util/wide.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* realloc that leaves *pointer intact on failure. */
static int grow(void **pointer, size_t count, size_t size)
{
    void *p = realloc(*pointer, count * size);
    if (!p) return 0;
    *pointer = p;
    return 1;
}

brs_status brs_plan_reserve(brs_plan *p, size_t n, size_t k)
{
    if (n > p->sample_capacity) {
        if (!grow((void **)&p->indices, n, sizeof(uint64_t)) ||
            !grow((void **)&p->draw_index, n, sizeof(uint64_t)) ||
            !grow((void **)&p->draw_length, n, sizeof(uint32_t)) ||
            !grow((void **)&p->sorted_index, n, sizeof(uint64_t)) ||
            !grow((void **)&p->sorted_length, n, sizeof(uint32_t)) ||
            !grow((void **)&p->padded_length, n, sizeof(uint32_t)) ||
            !grow((void **)&p->sort_scratch, 2 * n, sizeof(uint64_t)) ||
            !grow((void **)&p->group_of, n, sizeof(uint32_t)) ||
            !grow((void **)&p->sorted_load, n, sizeof(struct brs_encoder_load)))
            return BRS_ERR_NO_MEMORY;
        p->sample_capacity = n;
    }
    if (k > p->group_capacity) {
        if (!grow((void **)&p->slot_start, k + 1, sizeof(size_t)) ||
            !grow((void **)&p->padded, k, sizeof(uint64_t)) ||
            !grow((void **)&p->real, k, sizeof(uint64_t)) ||
            !grow((void **)&p->slot_cost, k, sizeof(brs_wide)) ||
            !grow((void **)&p->starts, k + 1, sizeof(size_t)) ||
            !grow((void **)&p->group_cost, k, sizeof(brs_wide)) ||
            !grow((void **)&p->group_of_slot, k, sizeof(uint32_t)) ||
            !grow((void **)&p->slot_of, k, sizeof(uint32_t)) ||
            !grow((void **)&p->pack_scratch, 2 * k, sizeof(uint32_t)) ||
            !grow((void **)&p->encoder_tokens, k, sizeof(uint64_t)) ||
            !grow((void **)&p->images, k, sizeof(uint64_t)) ||
            !grow((void **)&p->encoder_cost, k, sizeof(brs_wide)))
            return BRS_ERR_NO_MEMORY;
        p->group_capacity = k;
    }
    return BRS_OK;
}

/* The step's sample count: B, or the remainder of a kept last step, topped
 * up to k by wrapping around the permutation. */
static size_t step_size(const brs_sampler *s, uint64_t step, size_t b, size_t k)
{
    uint64_t start = step * b;
    if (start + b <= s->count) return b;
    size_t rest = (size_t)(s->count - start);
    return rest < k ? k : rest;
}

/* The dataset index at each position of the step, in draw order: from the
 * epoch permutation, or from a precomputed epoch order (length_grouped).
 * The positions past the end of the epoch (the top-up) wrap around; they
 * are a loop of their own so that the main one has no test per sample. */
static void draw(brs_plan *p, const brs_sampler *s, uint64_t epoch, uint64_t step, size_t b,
                 const uint64_t *epoch_order)
{
    struct brs_permutation perm;
    brs_permutation_init(&perm, s->count, (uint64_t)s->config.seed, epoch,
                         (int)s->config.shuffle);
    uint64_t start = step * b;
    size_t inside = s->count - start < p->num_samples ? (size_t)(s->count - start)
                                                      : p->num_samples;
    uint64_t *out = p->draw_index;
    if (epoch_order)
        memcpy(out, epoch_order + start, inside * sizeof *out);
    else
        brs_permutation_fill(&perm, start, inside, out);
    for (size_t j = inside; j < p->num_samples; j++) {
        uint64_t position = (start + j) % s->count;
        out[j] = epoch_order ? epoch_order[position] : brs_permutation_apply(&perm, position);
    }
}

/* The error of the first drawn sample whose length is 0 or above `limit`
 * (the longest length the cap and the padding admit); the lengths were
 * checked by set_lengths, but a borrowed array may have been changed since,
 * and such a length would break the planner's arithmetic, so it is an error
 * here, never a crash. */
static brs_status length_error(brs_plan *p, uint64_t limit, uint64_t cap)
{
    size_t j = 0;
    while (p->draw_length[j] != 0 && p->draw_length[j] <= limit) j++;
    uint32_t length = p->draw_length[j];
    if (length == 0)
        return brs_fail(&p->message, BRS_ERR_INVALID_LENGTH,
                        "lengths[%llu] is 0 (epoch %llu, step %llu): the borrowed lengths "
                        "array changed after brs_sampler_set_lengths; keep it unchanged or "
                        "set the lengths again",
                        (unsigned long long)p->draw_index[j], (unsigned long long)p->epoch,
                        (unsigned long long)p->step);
    if (limit == cap)
        return brs_fail(&p->message, BRS_ERR_SAMPLE_TOO_LONG,
                        "lengths[%llu] = %u is above max_tokens %llu (epoch %llu, step "
                        "%llu): the borrowed lengths array changed after "
                        "brs_sampler_set_lengths; keep it unchanged or set the lengths again",
                        (unsigned long long)p->draw_index[j], length, (unsigned long long)cap,
                        (unsigned long long)p->epoch, (unsigned long long)p->step);
    return brs_fail(&p->message, BRS_ERR_SAMPLE_TOO_LONG,
                    "lengths[%llu] = %u is above %llu, the longest sample that max_tokens %llu "
                    "and the padding (pad_to_multiple_of, length buckets) admit (epoch %llu, "
                    "step %llu): the borrowed lengths array changed after "
                    "brs_sampler_set_lengths; keep it unchanged or set the lengths again",
                    (unsigned long long)p->draw_index[j], length, (unsigned long long)limit,
                    (unsigned long long)cap, (unsigned long long)p->epoch,
                    (unsigned long long)p->step);
}

/* How many samples ahead the gather asks for a length, from how large a
 * dataset on (4 MiB of lengths). */
enum { PREFETCH_AHEAD = 64, PREFETCH_DATASET = 1 << 20 };

/* The lengths the padded planner splits: the sorted lengths, padded as the
 * collator pads (planner/padding.h) when the padding rounds any. */
static void pad_sorted(brs_plan *p, const brs_sampler *s)
{
    struct brs_padding padding = brs_sampler_padding(s);
    p->planned_length = p->sorted_length;
    if (brs_padding_is_identity(&padding)) return;
    brs_padding_apply_all(p->padded_length, p->sorted_length, p->num_samples, &padding);
    p->planned_length = p->padded_length;
}

/* Gathers the drawn samples' lengths, checks them (length_error; the cap
 * only when cap_checked) and sorts them longest first. */
brs_status brs_plan_gather(brs_plan *p, const brs_sampler *s, int cap_checked)
{
    uint64_t cap = cap_checked ? (uint64_t)s->config.max_tokens : 0;
    /* A valid length is in [1, limit], so length - 1 < limit, one unsigned
     * compare; the flags are or-ed without a branch, which keeps the loads
     * independent, so cache misses on a large lengths array overlap instead
     * of queueing. */
    struct brs_padding padding = brs_sampler_padding(s);
    uint64_t limit = brs_padding_limit(&padding, cap);
    uint64_t bad = 0;
    size_t n = p->num_samples, ahead = n > PREFETCH_AHEAD ? n - PREFETCH_AHEAD : 0;
    /* On a large dataset each length misses every cache: the next ones are
     * requested early. A small one stays in cache, and there it would only
     * cost. */
    if (s->count < PREFETCH_DATASET) ahead = 0;
    for (size_t j = 0; j < n; j++) {
        if (j < ahead) __builtin_prefetch(&s->lengths[p->draw_index[j + PREFETCH_AHEAD]]);
        uint32_t length = s->lengths[p->draw_index[j]];
        p->draw_length[j] = length;
        bad |= (uint64_t)length - 1 >= limit;
    }
    if (bad) return length_error(p, limit, cap);
    brs_sort_by_length_desc(p->sorted_index, p->sorted_length, p->draw_length, p->draw_index,
                            p->num_samples, p->sort_scratch);
    pad_sorted(p, s);
    return BRS_OK;
}

brs_status brs_plan_draw_sorted(brs_plan *p, const brs_sampler *s, uint64_t epoch,
                                uint64_t step)
{
    brs_plan_set_shape(p, s, epoch, step);
    size_t b = (size_t)s->config.batch_size * p->k;
    p->num_samples = step_size(s, step, b, p->k);
    if (brs_plan_reserve(p, p->num_samples, p->k) != BRS_OK)
        return brs_fail(&p->message, BRS_ERR_NO_MEMORY,
                        "cannot allocate the buffers of a %zu-sample step", p->num_samples);
    draw(p, s, epoch, step, b, NULL);
    return brs_plan_gather(p, s, 0);
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
            p->padded[slot] = (uint64_t)(end - first) * p->planned_length[first];
        }
    }
    for (size_t g = 0; g < k; g++) p->slot_cost[p->slot_of[g]] = p->group_cost[g];
}

void brs_plan_set_shape(brs_plan *p, const brs_sampler *s, uint64_t epoch, uint64_t step)
{
    p->epoch = epoch;
    p->step = step;
    p->dp_size = (size_t)s->config.dp_size;
    p->grad_accum = (size_t)s->config.grad_accum;
    p->k = p->dp_size * p->grad_accum;
    p->megabatch_size = 0;
}

struct brs_cost_model brs_plan_cost_model(const brs_sampler *s)
{
    struct brs_cost_model model = {s->config.intercept_micro,
                                   s->config.alpha_micro,
                                   (uint64_t)s->config.max_tokens,
                                   s->config.encoder_weight_micro,
                                   s->config.encoder_alpha_micro,
                                   s->config.encoder_intercept_micro,
                                   (uint64_t)s->config.max_encoder_tokens};
    /* A packed row's padded total must stay within the cap: its raw total
     * then may not exceed the longest the padding admits (the last bucket,
     * when there is no cap). */
    struct brs_padding padding = brs_sampler_padding(s);
    if (s->config.packed && (model.max_tokens != 0 || padding.bucket_count != 0))
        model.max_tokens = brs_padding_row_limit(&padding, model.max_tokens);
    return model;
}

void brs_plan_pad_packed(brs_plan *p, const brs_sampler *s)
{
    struct brs_padding padding = brs_sampler_padding(s);
    for (size_t slot = 0; slot < p->k; slot++)
        p->padded[slot] = brs_padding_apply(&padding, p->real[slot]);
}

/* A step the encoder cap (or both caps at once) cannot plan as split. */
static brs_status encoder_cap_message(brs_plan *p, const brs_sampler *s)
{
    char where[96], text_cap[64] = "";
    if (p->batch)
        snprintf(where, sizeof where, "the batch of %zu samples", p->num_samples);
    else
        snprintf(where, sizeof where, "step %llu of epoch %llu", (unsigned long long)p->step,
                 (unsigned long long)p->epoch);
    if (s->config.max_tokens != 0)
        snprintf(text_cap, sizeof text_cap, " and max_tokens %lld", (long long)s->config.max_tokens);
    return brs_fail(&p->message, BRS_ERR_CAP_INFEASIBLE,
                    "%s: no split into %zu micro-batches within max_encoder_tokens %lld (image "
                    "patches)%s was found: raise max_encoder_tokens or grad_accum",
                    where, p->k, (long long)s->config.max_encoder_tokens, text_cap);
}

/* A step whose samples carry images: the two-part planner, started from the
 * text planner's split, then described (plan_describe.c) with both parts. */
static brs_status plan_two_part(brs_plan *p, const brs_sampler *s,
                                const struct brs_cost_model *model)
{
    int packed = (int)s->config.packed, sync = (int)s->config.sync;
    size_t n = p->num_samples;
    for (size_t i = 0; i < n; i++) p->sorted_load[i] = brs_sampler_load(s, p->sorted_index[i]);
    if (!packed)
        for (size_t g = 0; g < p->k; g++)
            for (size_t i = p->starts[g]; i < p->starts[g + 1]; i++) p->group_of[i] = (uint32_t)g;
    struct brs_two_part_step step = {packed ? p->sorted_length : p->planned_length,
                                     p->sorted_load, n, p->k, p->dp_size, sync, packed, model};
    /* the text split is read before group_of is first written */
    brs_status status = brs_two_part_split(p->group_of, p->group_cost, &step, p->group_of);
    if (status == BRS_ERR_CAP_INFEASIBLE) return encoder_cap_message(p, s);
    if (status == BRS_OK)
        status = brs_assign(p->slot_of, &p->micro_sync, &p->step_sync, p->group_cost, NULL, p->k,
                            p->dp_size, sync);
    if (status != BRS_OK)
        return brs_fail(&p->message, status, "the planner failed: %s", brs_strerror(status));
    fill_slots(p, 1);
    brs_plan_describe(p, s, model, packed);
    return BRS_OK;
}

/* The balanced planner on the gathered step, dealt for the sync model
 * (assign.c) as the planner scored it. */
static brs_status plan_balanced(brs_plan *p, const brs_sampler *s,
                                const struct brs_cost_model *model)
{
    int packed = (int)s->config.packed, sync = (int)s->config.sync;
    struct brs_split split = {.starts = p->starts, .group_of = p->group_of,
                              .costs = p->group_cost};
    brs_status status = packed ? brs_packed_split(&split, p->sorted_length, p->num_samples, p->k,
                                                  p->dp_size, sync, model, p->pack_scratch)
                               : brs_planner_split(&split, p->planned_length, p->num_samples,
                                                   p->k, p->dp_size, sync, model, p->sort_scratch);
    if (status == BRS_ERR_CAP_INFEASIBLE) return brs_cap_error(p, s, &split);
    if (status == BRS_OK && brs_plan_has_images(p, s)) return plan_two_part(p, s, model);
    if (status == BRS_OK)
        status = brs_assign(p->slot_of, &p->micro_sync, &p->step_sync, p->group_cost, NULL, p->k,
                            p->dp_size, sync);
    if (status != BRS_OK)
        return brs_fail(&p->message, status, "the planner failed: %s", brs_strerror(status));
    fill_slots(p, packed);
    if (packed) brs_plan_pad_packed(p, s);
    brs_plan_no_images(p);
    brs_plan_summarise(p, split.lower_bound, split.weight_sum, model);
    /* the padded planner certifies a tighter bound on the step time */
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
        s->lengths, s->count, (uint64_t)c->seed, (int)c->shuffle,
        brs_baselines_megabatch(s->count, (size_t)(c->batch_size * c->grad_accum)), 0};
    brs_sampler_fingerprint(&source.fingerprint, s); /* lengths are set: cannot fail */
    p->megabatch_size = source.megabatch;
    return brs_grouped_order_get(order, &p->grouped, &source, epoch);
}

brs_status brs_plan_step(brs_plan *plan, const brs_sampler *sampler, uint64_t epoch,
                         uint64_t step)
{
    const struct brs_config *c = &sampler->config;
    brs_plan_set_shape(plan, sampler, epoch, step);
    size_t b = (size_t)c->batch_size * plan->k;
    plan->num_samples = step_size(sampler, step, b, plan->k);
    if (brs_plan_reserve(plan, plan->num_samples, plan->k) != BRS_OK)
        return brs_fail(&plan->message, BRS_ERR_NO_MEMORY,
                        "cannot allocate the buffers of a %zu-sample step", plan->num_samples);
    const uint64_t *epoch_order = NULL;
    if (c->strategy == BRS_STRATEGY_LENGTH_GROUPED &&
        grouped_order(&epoch_order, plan, sampler, epoch) != BRS_OK)
        return brs_fail(&plan->message, BRS_ERR_NO_MEMORY,
                        "cannot allocate the length_grouped order of %zu samples",
                        sampler->count);
    draw(plan, sampler, epoch, step, b, epoch_order);
    brs_status status = brs_plan_gather(plan, sampler, 1);
    if (status != BRS_OK) return status;

    struct brs_cost_model model = brs_plan_cost_model(sampler);
    if (c->strategy == BRS_STRATEGY_BALANCED) {
        status = plan_balanced(plan, sampler, &model);
        if (status != BRS_OK) return status;
    } else {
        brs_baselines_slots(plan->indices, plan->slot_start, plan->draw_index, plan->num_samples,
                            plan->dp_size, plan->grad_accum);
        brs_plan_describe(plan, sampler, &model, (int)c->packed);
    }
    brs_message_clear(&plan->message);
    plan->ready = 1;
    return BRS_OK;
}

brs_status brs_plan_compute(brs_plan *plan, const brs_sampler *sampler, uint64_t epoch,
                            uint64_t step)
{
    if (!plan) return BRS_ERR_NULL_POINTER;
    plan->ready = 0;
    plan->batch = 0;
    if (!sampler)
        return brs_fail(&plan->message, BRS_ERR_NULL_POINTER, "brs_plan_compute: sampler is NULL");
    brs_status status = brs_sampler_check_config(sampler, &plan->message);
    if (status != BRS_OK) return status;
    uint64_t steps = brs_sampler_steps_in_epoch(sampler);
    if (step >= steps)
        return brs_fail(&plan->message, BRS_ERR_OUT_OF_RANGE,
                        "step %llu is out of range: an epoch has %llu steps (0..%llu)",
                        (unsigned long long)step, (unsigned long long)steps,
                        (unsigned long long)steps - 1);
    return brs_plan_step(plan, sampler, epoch, step);
}

/* Checks a loaded plan's shape and sums its sizes into *total. */
