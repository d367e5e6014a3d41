/* context_parallel.c - context parallelism in the handles: the layout the
 * options give (cp_size, cp_degrees, max_tokens_per_rank, cp_comm_cost,
 * cp_latency), the
 * checks they need together with the other options and the lengths, the
 * plan's buffers, the context-parallel plan (planner/context_parallel.c)
 * written into the plan handle, and the exported queries brs_plan_cp_*.
 * The slots keep their meaning (a data-parallel rank's micro-step): a slot
 * holds its block's micro-batches of that micro-step, so that every query
 * of a plan without context parallelism answers for a plan with it. */
#include "api/internal.h"
#include "draw/prng.h"
#include "planner/planner.h"
#include "util/too_long.h"
#include "util/wide.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_GROUP UINT32_MAX

/* The degrees cp_degrees allows (every power of two up to cp_size when 0). */
static uint32_t allowed_degrees(const struct brs_config *c)
{
    if (c->cp_degrees != 0) return (uint32_t)c->cp_degrees;
    uint32_t mask = 0;
    for (int64_t d = 1; d <= c->cp_size; d <<= 1) mask |= (uint32_t)d;
    return mask;
}

/* Whether the options ask for context parallelism. */
static int is_active(const struct brs_config *c)
{
    return c->cp_size > 1 || c->max_tokens_per_rank > 0;
}

/* The cost's form (the (c - 1) / c exchange and the latency of
 * docs/algorithm.md, "Context parallelism") changed what a CP sampler plans
 * at its defaults: its fingerprint names the form, while a sampler without
 * context parallelism keeps its fingerprint and BRS_PLAN_ALGORITHM_VERSION
 * stays. */
uint64_t brs_cp_fingerprint_mix(uint64_t h, const brs_sampler *s)
{
    if (!is_active(&s->config)) return h;
    return brs_splitmix64(h ^ UINT64_C(0x63702d636f737432)); /* "cp-cost2" */
}

struct brs_cp_layout brs_cp_layout_of(const brs_sampler *s, const struct brs_padding *padding)
{
    const struct brs_config *c = &s->config;
    struct brs_cp_layout cp = {is_active(c),          (size_t)c->cp_size,
                               allowed_degrees(c),    (uint64_t)c->max_tokens_per_rank,
                               c->cp_comm_cost_micro, c->cp_latency_micro};
    /* A rank's share is one packed row: its padded total must stay within
     * the cap, so its raw total may not exceed the longest the padding
     * admits. */
    if (cp.max_tokens != 0 || padding->bucket_count != 0)
        cp.max_tokens = brs_padding_row_limit(padding, cp.max_tokens);
    return cp;
}

brs_status brs_cp_check(const brs_sampler *s, const struct brs_padding *padding,
                        const struct brs_message *message)
{
    const struct brs_config *c = &s->config;
    int64_t size = c->cp_size;
    if (size & (size - 1))
        return brs_fail(message, BRS_ERR_INVALID_ARGUMENT,
                        "cp_size %lld is not a power of two: context-parallel groups of every "
                        "degree must tile a block of cp_size ranks",
                        (long long)size);
    if (c->cp_degrees != 0 && (c->cp_degrees >= 2 * size || c->cp_degrees <= 0))
        return brs_fail(message, BRS_ERR_INVALID_ARGUMENT,
                        "cp_degrees %lld allows a degree above cp_size %lld: bit j allows degree "
                        "2^j, at most cp_size",
                        (long long)c->cp_degrees, (long long)size);
    struct brs_cp_layout cp = brs_cp_layout_of(s, padding);
    if (!cp.active) return BRS_OK;
    uint64_t slots = (uint64_t)c->dp_size * (uint64_t)size * (uint64_t)c->grad_accum;
    if (slots > BRS_MAX_MICRO_BATCHES)
        return brs_fail(message, BRS_ERR_TOO_LARGE,
                        "dp_size * cp_size * grad_accum = %llu exceeds %d rank micro-steps",
                        (unsigned long long)slots, BRS_MAX_MICRO_BATCHES);
    if (s->lengths && s->count > 0 && brs_cp_least_degree(&cp, s->max_length) == 0) {
        uint64_t widest = 1;
        for (uint64_t d = 1; d <= cp.size; d <<= 1)
            if (cp.degrees & (uint32_t)d) widest = d;
        char sample[32], shown[96], limit[64];
        snprintf(sample, sizeof sample, "sample %zu", s->max_length_index);
        snprintf(shown, sizeof shown, ", %llu on each of %llu ranks (the widest degree allowed)",
                 (unsigned long long)((s->max_length + widest - 1) / widest),
                 (unsigned long long)widest);
        snprintf(limit, sizeof limit, "max_tokens_per_rank %lld allows once padded",
                 (long long)c->max_tokens_per_rank);
        return brs_too_long_fail(message,
                                 &(struct brs_too_long){sample, s->max_length, shown, limit,
                                                        "raise max_tokens_per_rank or "
                                                        "cp_size,"});
    }
    return BRS_OK;
}

brs_status brs_cp_check_combination(const brs_sampler *s, const struct brs_message *message)
{
    const struct brs_config *c = &s->config;
    int64_t size = c->cp_size;
    if (!is_active(c)) return BRS_OK;
    if (!c->packed)
        return brs_fail(message, BRS_ERR_UNSUPPORTED,
                        "context parallelism (cp_size %lld, max_tokens_per_rank %lld) runs in "
                        "packed mode: set packed 1 (a rank's share of a micro-batch is a row of "
                        "token ranges of its sequences; padded micro-batches cannot be split "
                        "across ranks)",
                        (long long)size, (long long)c->max_tokens_per_rank);
    const char *unsupported = c->strategy != BRS_STRATEGY_BALANCED         ? "a fixed-size strategy"
                              : c->max_tokens != 0                         ? "max_tokens"
                              : c->max_shapes != 0                         ? "max_shapes"
                              : s->encoder != NULL && s->encoder_count > 0 ? "encoder loads"
                                                                           : NULL;
    if (unsupported)
        return brs_fail(message, BRS_ERR_UNSUPPORTED,
                        "context parallelism (cp_size %lld, max_tokens_per_rank %lld) plans packed "
                        "micro-batches with the balanced strategy, without max_tokens (use "
                        "max_tokens_per_rank), max_shapes or images; the sampler has %s",
                        (long long)size, (long long)c->max_tokens_per_rank, unsupported);
    return BRS_OK;
}

static int grow(void **pointer, size_t count, size_t size)
{
    void *q = realloc(*pointer, (count ? count : 1) * size);
    if (!q) return 0;
    *pointer = q;
    return 1;
}

brs_status brs_cp_reserve(brs_plan *p, size_t n)
{
    size_t slots = p->k * p->cp_size;
    if (n > p->cp_sample_capacity) {
        if (!grow((void **)&p->cp.micro, n, sizeof(uint32_t)) ||
            !grow((void **)&p->cp.first_rank, n, sizeof(uint32_t)) ||
            !grow((void **)&p->cp.degree, n, sizeof(uint32_t)) ||
            !grow((void **)&p->cp.tokens, n, sizeof(uint64_t)) ||
            !grow((void **)&p->cp.cost, n, sizeof(brs_wide)) ||
            !grow((void **)&p->cp_start, n, sizeof(size_t)) ||
            !grow((void **)&p->cp_count, n, sizeof(size_t)))
            return BRS_ERR_NO_MEMORY;
        p->cp_sample_capacity = n;
    }
    if (slots > p->cp_slot_capacity) {
        if (!grow((void **)&p->cp_rank_group, slots, sizeof(uint32_t))) return BRS_ERR_NO_MEMORY;
        p->cp_slot_capacity = slots;
    }
    p->cp.group_of = p->group_of;
    return BRS_OK;
}

void brs_cp_free(brs_plan *p)
{
    free(p->cp.micro);
    free(p->cp.first_rank);
    free(p->cp.degree);
    free(p->cp.tokens);
    free(p->cp.cost);
    free(p->cp_start);
    free(p->cp_count);
    free(p->cp_rank_group);
}

/* The data-parallel slot (block, micro-step) of micro-batch g. */
static size_t slot_of_group(const brs_plan *p, size_t g)
{
    return (size_t)(p->cp.first_rank[g] / p->cp_size) * p->grad_accum + p->cp.micro[g];
}

void brs_cp_fill(brs_plan *p)
{
    const struct brs_cp_plan *cp = &p->cp;
    const struct brs_padding *padding = &p->resolved.padding;
    size_t k = p->k, n = p->num_samples, count = cp->count, g;
    memset(p->slot_start, 0, (k + 1) * sizeof(size_t));
    memset(p->cp_count, 0, (count ? count : 1) * sizeof(size_t));
    for (size_t i = 0; i < n; i++) p->cp_count[cp->group_of[i]]++;
    for (g = 0; g < count; g++) p->slot_start[slot_of_group(p, g) + 1] += p->cp_count[g];
    for (size_t s = 0; s < k; s++) p->slot_start[s + 1] += p->slot_start[s];
    /* The micro-batches are ordered by micro-step, then first rank: those of
     * one slot come in rank order, each one's samples after the last's. */
    size_t *cursor = (size_t *)p->sort_scratch; /* k <= n slots: 2n words */
    for (size_t s = 0; s < k; s++) cursor[s] = p->slot_start[s];
    for (g = 0; g < count; g++) {
        size_t s = slot_of_group(p, g);
        p->cp_start[g] = cursor[s];
        cursor[s] += p->cp_count[g];
    }
    for (g = 0; g < count; g++) cursor[g] = p->cp_start[g]; /* count <= n */
    for (size_t s = 0; s < k; s++) p->real[s] = p->padded[s] = 0, p->slot_cost[s] = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t group = cp->group_of[i];
        p->indices[cursor[group]++] = p->sorted_index[i];
        p->real[slot_of_group(p, group)] += p->sorted_length[i];
    }
    size_t ranks = p->dp_size * p->cp_size;
    for (size_t r = 0; r < ranks * p->grad_accum; r++) p->cp_rank_group[r] = NO_GROUP;
    p->max_cost = p->total_cost = 0;
    p->max_rank_tokens = 0;
    for (g = 0; g < count; g++) {
        size_t s = slot_of_group(p, g);
        uint64_t share = brs_padding_apply(padding, cp->tokens[g]);
        p->padded[s] += share * cp->degree[g];
        if (cp->cost[g] > p->slot_cost[s]) p->slot_cost[s] = cp->cost[g];
        if (cp->cost[g] > p->max_cost) p->max_cost = cp->cost[g];
        if (share > p->max_rank_tokens) p->max_rank_tokens = share;
        p->total_cost += cp->cost[g] * cp->degree[g];
        for (uint32_t r = 0; r < cp->degree[g]; r++)
            p->cp_rank_group[(size_t)(cp->first_rank[g] + r) * p->grad_accum + cp->micro[g]] =
                (uint32_t)g;
    }
    p->total_padded = p->total_real = p->max_padded = 0;
    for (size_t s = 0; s < k; s++) {
        p->total_padded += p->padded[s];
        p->total_real += p->real[s];
        if (p->padded[s] > p->max_padded) p->max_padded = p->padded[s];
    }
    p->micro_sync = cp->micro_sync;
    p->step_sync = cp->step_sync;
    p->lower_bound = cp->lower_bound;
    p->time_lower_bound = cp->time_lower_bound;
    brs_describe_no_images(p);
    p->total_encoder_tokens = p->max_encoder_tokens = 0;
    p->total_encoder_cost = 0;
}

/* ---- the exported queries ---- */

/* The micro-batch of (global rank, micro-step) of a ready plan, or an
 * error: *group NO_GROUP for a placeholder; without context parallelism the
 * rank's slot. */
static brs_status locate(uint32_t *group, size_t *slot, const brs_plan *plan, int outputs,
                         uint64_t rank, uint64_t micro, const char *call)
{
    brs_status status = brs_guards_open(plan, outputs, call);
    if (status != BRS_OK) return status;
    size_t cp_size = plan->cp_active ? plan->cp_size : 1, ranks = plan->dp_size * cp_size;
    if (rank >= ranks)
        return brs_fail(&plan->message, BRS_ERR_OUT_OF_RANGE,
                        "%s: global rank %llu is out of range: the plan has ranks 0..%zu (dp_size "
                        "%zu x cp_size %zu)",
                        call, (unsigned long long)rank, ranks - 1, plan->dp_size, cp_size);
    if (micro >= plan->grad_accum)
        return brs_fail(&plan->message, BRS_ERR_OUT_OF_RANGE,
                        "%s: micro-step %llu is out of range: the plan has micro-steps 0..%zu",
                        call, (unsigned long long)micro, plan->grad_accum - 1);
    if (!plan->cp_active) {
        *group = NO_GROUP;
        *slot = (size_t)rank * plan->grad_accum + (size_t)micro;
        return BRS_OK;
    }
    *group = plan->cp_rank_group[(size_t)rank * plan->grad_accum + (size_t)micro];
    *slot = SIZE_MAX;
    return BRS_OK;
}

brs_status brs_plan_cp_micro_steps(uint64_t *count, const brs_plan *plan)
{
    static const char call[] = "brs_plan_cp_micro_steps";
    brs_status status = brs_guards_open(plan, count != NULL, call);
    if (status != BRS_OK) return status;
    *count = plan->grad_accum;
    return BRS_OK;
}

brs_status brs_plan_cp_micro_batch(const uint64_t **indices, size_t *count, uint64_t *first_rank,
                                   uint64_t *degree, const brs_plan *plan, uint64_t global_rank,
                                   uint64_t micro)
{
    static const char call[] = "brs_plan_cp_micro_batch";
    uint32_t group = NO_GROUP;
    size_t slot = 0;
    brs_status status = locate(&group, &slot, plan, indices && count && first_rank && degree,
                               global_rank, micro, call);
    if (status != BRS_OK) return status;
    *first_rank = global_rank;
    *degree = 1;
    if (!plan->cp_active) {
        *indices = plan->indices + plan->slot_start[slot];
        *count = plan->slot_start[slot + 1] - plan->slot_start[slot];
    } else if (group == NO_GROUP) {
        *indices = plan->indices; /* a valid pointer to nothing */
        *count = 0;
    } else {
        *indices = plan->indices + plan->cp_start[group];
        *count = plan->cp_count[group];
        *first_rank = plan->cp.first_rank[group];
        *degree = plan->cp.degree[group];
    }
    return BRS_OK;
}

brs_status brs_plan_cp_micro_batch_stats(uint64_t *padded_tokens, uint64_t *real_tokens,
                                         double *cost, const brs_plan *plan, uint64_t global_rank,
                                         uint64_t micro)
{
    static const char call[] = "brs_plan_cp_micro_batch_stats";
    uint32_t group = NO_GROUP;
    size_t slot = 0;
    brs_status status =
        locate(&group, &slot, plan, padded_tokens && real_tokens && cost, global_rank, micro, call);
    if (status != BRS_OK) return status;
    if (!plan->cp_active) {
        *padded_tokens = plan->padded[slot];
        *real_tokens = plan->real[slot];
        *cost = brs_wide_to_cost(plan->slot_cost[slot]);
        return BRS_OK;
    }
    *padded_tokens = *real_tokens = 0;
    *cost = 0.0;
    if (group == NO_GROUP) return BRS_OK;
    uint64_t degree = plan->cp.degree[group], i = global_rank - plan->cp.first_rank[group];
    uint64_t real = 0, ranges[4];
    for (size_t j = 0; j < plan->num_samples; j++) {
        if (plan->cp.group_of[j] != group) continue;
        size_t pieces = brs_cp_shard(ranges, plan->sorted_length[j], degree, i);
        for (size_t q = 0; q < pieces; q++) real += ranges[2 * q + 1] - ranges[2 * q];
    }
    *padded_tokens = brs_padding_apply(&plan->resolved.padding, plan->cp.tokens[group]);
    *real_tokens = real;
    *cost = brs_wide_to_cost(plan->cp.cost[group]);
    return BRS_OK;
}

brs_status brs_plan_cp_token_ranges(uint64_t *ranges, size_t *count, const brs_plan *plan,
                                    uint64_t global_rank, uint64_t micro, size_t capacity)
{
    static const char call[] = "brs_plan_cp_token_ranges";
    uint32_t group = NO_GROUP;
    size_t slot = 0;
    brs_status status =
        locate(&group, &slot, plan, count && (ranges || capacity == 0), global_rank, micro, call);
    if (status != BRS_OK) return status;
    size_t written = 0;
    if (!plan->cp_active) {
        /* degree 1: every sample whole, in the order of its indices */
        for (size_t j = plan->slot_start[slot]; j < plan->slot_start[slot + 1]; j++) {
            if (written < capacity) {
                uint64_t index = plan->indices[j], length = 0;
                for (size_t i = 0; i < plan->num_samples; i++)
                    if (plan->sorted_index[i] == index) {
                        length = plan->sorted_length[i];
                        break;
                    }
                ranges[3 * written] = index;
                ranges[3 * written + 1] = 0;
                ranges[3 * written + 2] = length;
            }
            written++;
        }
    } else if (group != NO_GROUP) {
        uint64_t degree = plan->cp.degree[group], i = global_rank - plan->cp.first_rank[group];
        uint64_t pieces[4];
        for (size_t j = 0; j < plan->num_samples; j++) {
            if (plan->cp.group_of[j] != group) continue;
            size_t got = brs_cp_shard(pieces, plan->sorted_length[j], degree, i);
            for (size_t q = 0; q < got; q++, written++) {
                if (written >= capacity) continue;
                ranges[3 * written] = plan->sorted_index[j];
                ranges[3 * written + 1] = pieces[2 * q];
                ranges[3 * written + 2] = pieces[2 * q + 1];
            }
        }
    }
    *count = written;
    if (written > capacity && !(ranges == NULL && capacity == 0))
        return brs_fail(&plan->message, BRS_ERR_OUT_OF_RANGE,
                        "%s: %zu ranges do not fit in a capacity of %zu: call again with room",
                        call, written, capacity);
    return BRS_OK;
}
