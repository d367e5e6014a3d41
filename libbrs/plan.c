/* plan.c - the plan handle: draw a step's samples, run the planner, deal
 * the micro-batches to (rank, micro-step) and answer queries. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* The sync model of the configuration (until the option exists: micro-step). */
#define PLAN_SYNC(config) BRS_SYNC_MICRO_STEP

static const char null_handle_message[] = "the handle is NULL";

struct brs_plan {
    int ready;
    uint64_t epoch, step;
    size_t num_samples, k, dp_size, grad_accum;

    /* Results, by rank-major slot (rank * grad_accum + micro). */
    uint64_t *indices;   /* num_samples, slot by slot */
    size_t *slot_start;  /* k + 1 */
    uint64_t *padded;    /* k */
    uint64_t *real;      /* k */
    brs_wide *slot_cost; /* k */
    brs_wide max_cost, lower_bound, total_cost, micro_sync, step_sync, time_lower_bound;
    uint64_t total_padded, total_real, max_padded;

    /* Workspace, grown on demand and reused across steps. */
    size_t sample_capacity, group_capacity;
    uint64_t *draw_index;    /* n: dataset index of each drawn sample */
    uint32_t *draw_length;   /* n */
    uint32_t *order;         /* n: draw positions, longest first */
    uint32_t *sorted_length; /* n */
    uint64_t *sort_scratch;  /* 2n */
    uint32_t *group_of;      /* n: packed mode */
    size_t *starts;          /* k + 1: padded mode */
    brs_wide *group_cost;    /* k */
    uint32_t *group_order;   /* k */
    uint32_t *slot_of;       /* k */
    uint32_t *pack_scratch;  /* 2k */

    char message[BRS_MESSAGE_SIZE];
};

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
    free(p->order);
    free(p->sorted_length);
    free(p->sort_scratch);
    free(p->group_of);
    free(p->slot_start);
    free(p->padded);
    free(p->real);
    free(p->slot_cost);
    free(p->starts);
    free(p->group_cost);
    free(p->group_order);
    free(p->slot_of);
    free(p->pack_scratch);
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

static brs_status reserve(brs_plan *p, size_t n, size_t k)
{
    if (n > p->sample_capacity) {
        if (!grow((void **)&p->indices, n, sizeof(uint64_t)) ||
            !grow((void **)&p->draw_index, n, sizeof(uint64_t)) ||
            !grow((void **)&p->draw_length, n, sizeof(uint32_t)) ||
            !grow((void **)&p->order, n, sizeof(uint32_t)) ||
            !grow((void **)&p->sorted_length, n, sizeof(uint32_t)) ||
            !grow((void **)&p->sort_scratch, 2 * n, sizeof(uint64_t)) ||
            !grow((void **)&p->group_of, n, sizeof(uint32_t)))
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
            !grow((void **)&p->group_order, k, sizeof(uint32_t)) ||
            !grow((void **)&p->slot_of, k, sizeof(uint32_t)) ||
            !grow((void **)&p->pack_scratch, 2 * k, sizeof(uint32_t)))
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

static void draw(brs_plan *p, const brs_sampler *s, uint64_t epoch, uint64_t step, size_t b)
{
    struct brs_permutation perm;
    brs_permutation_init(&perm, s->count, (uint64_t)s->config.seed, epoch,
                         (int)s->config.shuffle);
    uint64_t start = step * b;
    for (size_t j = 0; j < p->num_samples; j++) {
        uint64_t position = start + j;
        if (position >= s->count) position %= s->count; /* top-up wraps */
        p->draw_index[j] = brs_permutation_apply(&perm, position);
    }
    /* Gathered in a pass of its own: the loads are independent, so cache
     * misses on a large lengths array overlap instead of queueing. */
    for (size_t j = 0; j < p->num_samples; j++) p->draw_length[j] = s->lengths[p->draw_index[j]];
    brs_sort_by_length_desc(p->order, p->draw_length, p->num_samples, p->sort_scratch);
    for (size_t i = 0; i < p->num_samples; i++) p->sorted_length[i] = p->draw_length[p->order[i]];
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
    /* The sort scratch (2n >= k words) is free now: it holds each slot's
     * write cursor. */
    size_t *cursor = (size_t *)p->sort_scratch;
    for (size_t s = 0; s < k; s++) cursor[s] = p->slot_start[s];
    if (packed) {
        for (size_t i = 0; i < n; i++) {
            uint32_t slot = p->slot_of[p->group_of[i]];
            p->indices[cursor[slot]++] = p->draw_index[p->order[i]];
            p->real[slot] += p->sorted_length[i];
        }
    } else {
        for (size_t g = 0; g < k; g++) {
            uint32_t slot = p->slot_of[g];
            for (size_t i = p->starts[g]; i < p->starts[g + 1]; i++) {
                p->indices[cursor[slot]++] = p->draw_index[p->order[i]];
                p->real[slot] += p->sorted_length[i];
            }
            p->padded[slot] = (uint64_t)(p->starts[g + 1] - p->starts[g]) *
                              p->sorted_length[p->starts[g]];
        }
    }
    for (size_t g = 0; g < k; g++) p->slot_cost[p->slot_of[g]] = p->group_cost[g];
    if (packed)
        for (size_t s = 0; s < k; s++) p->padded[s] = p->real[s];
}

static void summarise(brs_plan *p, const struct brs_split *split,
                      const struct brs_cost_model *model)
{
    size_t k = p->k;
    p->max_cost = split->max_cost;
    p->lower_bound = split->lower_bound;
    p->total_cost = 0;
    p->total_padded = p->total_real = p->max_padded = 0;
    for (size_t s = 0; s < k; s++) {
        p->total_cost += p->slot_cost[s];
        p->total_padded += p->padded[s];
        p->total_real += p->real[s];
        if (p->padded[s] > p->max_padded) p->max_padded = p->padded[s];
    }
    /* Both sync times are at least the largest cost, and at least the share
     * of one rank in the least possible work: k intercepts plus every
     * sample's weight (each sample pays at least its own). */
    brs_wide work = (brs_wide)k * model->intercept + split->weight_sum;
    brs_wide per_rank = (work + p->dp_size - 1) / p->dp_size;
    p->time_lower_bound = per_rank > split->lower_bound ? per_rank : split->lower_bound;
    /* the padded planner certifies a tighter one */
    if (split->time_lower_bound > p->time_lower_bound) p->time_lower_bound = split->time_lower_bound;
}

static void cap_message(brs_plan *p, const brs_sampler *s, const struct brs_split *split)
{
    if (split->needed > 0)
        brs_message_set(p->message,
                        "step %llu of epoch %llu needs at least %zu micro-batches to keep every "
                        "micro-batch within max_tokens %lld, but dp_size x grad_accum gives %zu: "
                        "raise max_tokens, raise grad_accum so that dp_size * grad_accum >= %zu, "
                        "or lower per_device_batch_size",
                        (unsigned long long)p->step, (unsigned long long)p->epoch, split->needed,
                        (long long)s->config.max_tokens, p->k, split->needed);
    else
        brs_message_set(p->message,
                        "step %llu of epoch %llu: packing found no split into %zu micro-batches "
                        "within max_tokens %lld (the bound does not prove it impossible): raise "
                        "max_tokens or grad_accum",
                        (unsigned long long)p->step, (unsigned long long)p->epoch, p->k,
                        (long long)s->config.max_tokens);
}

brs_status brs_plan_compute(brs_plan *plan, const brs_sampler *sampler, uint64_t epoch,
                            uint64_t step)
{
    if (!plan || !sampler) return BRS_ERR_NULL_POINTER;
    plan->ready = 0;
    brs_status status = brs_config_check(sampler, plan->message);
    if (status != BRS_OK) return status;
    const struct brs_config *c = &sampler->config;
    uint64_t steps = brs_steps_in_epoch(sampler);
    if (step >= steps) {
        brs_message_set(plan->message, "step %llu is out of range: an epoch has %llu steps",
                        (unsigned long long)step, (unsigned long long)steps);
        return BRS_ERR_OUT_OF_RANGE;
    }
    plan->epoch = epoch;
    plan->step = step;
    plan->dp_size = (size_t)c->dp_size;
    plan->grad_accum = (size_t)c->grad_accum;
    plan->k = plan->dp_size * plan->grad_accum;
    size_t b = (size_t)c->batch_size * plan->k;
    plan->num_samples = step_size(sampler, step, b, plan->k);
    if (reserve(plan, plan->num_samples, plan->k) != BRS_OK) {
        brs_message_set(plan->message, "cannot allocate the buffers of a %zu-sample step",
                        plan->num_samples);
        return BRS_ERR_NO_MEMORY;
    }
    draw(plan, sampler, epoch, step, b);

    struct brs_cost_model model = {c->intercept_micro, c->alpha_micro, (uint64_t)c->max_tokens};
    struct brs_split split = {.starts = plan->starts, .group_of = plan->group_of,
                              .costs = plan->group_cost};
    int sync = PLAN_SYNC(c);
    status = c->packed ? brs_plan_packed(&split, plan->sorted_length, plan->num_samples, plan->k,
                                         &model, plan->pack_scratch)
                       : brs_plan_padded(&split, plan->sorted_length, plan->num_samples, plan->k,
                                         plan->dp_size, sync, &model, plan->sort_scratch);
    if (status == BRS_ERR_CAP_INFEASIBLE) cap_message(plan, sampler, &split);
    if (status == BRS_ERR_NO_MEMORY) brs_message_set(plan->message, "out of memory in the planner");
    if (status != BRS_OK) return status;

    if (status == BRS_OK)
        status = brs_assign(plan->slot_of, &plan->micro_sync, &plan->step_sync, plan->group_cost,
                            plan->k, plan->dp_size, sync);
    if (status != BRS_OK) {
        brs_message_set(plan->message, "out of memory in the planner");
        return status;
    }
    fill_slots(plan, (int)c->packed);
    summarise(plan, &split, &model);
    plan->message[0] = '\0';
    plan->ready = 1;
    return BRS_OK;
}

static brs_status check_ready(const brs_plan *plan)
{
    return plan->ready ? BRS_OK : BRS_ERR_STATE;
}

brs_status brs_plan_get_int(int64_t *out, const brs_plan *plan, brs_plan_key key)
{
    if (!out || !plan) return BRS_ERR_NULL_POINTER;
    if (check_ready(plan) != BRS_OK) return BRS_ERR_STATE;
    switch (key) {
    case BRS_PLAN_EPOCH: *out = (int64_t)plan->epoch; return BRS_OK;
    case BRS_PLAN_STEP: *out = (int64_t)plan->step; return BRS_OK;
    case BRS_PLAN_NUM_SAMPLES: *out = (int64_t)plan->num_samples; return BRS_OK;
    case BRS_PLAN_DP_SIZE: *out = (int64_t)plan->dp_size; return BRS_OK;
    case BRS_PLAN_GRAD_ACCUM: *out = (int64_t)plan->grad_accum; return BRS_OK;
    case BRS_PLAN_TOTAL_PADDED_TOKENS: *out = (int64_t)plan->total_padded; return BRS_OK;
    case BRS_PLAN_TOTAL_REAL_TOKENS: *out = (int64_t)plan->total_real; return BRS_OK;
    case BRS_PLAN_MAX_PADDED_TOKENS: *out = (int64_t)plan->max_padded; return BRS_OK;
    default: return BRS_ERR_UNSUPPORTED;
    }
}

static double cost_to_double(brs_wide cost)
{
    return (double)cost / (double)BRS_COST_UNITS_PER_ONE;
}

brs_status brs_plan_get_double(double *out, const brs_plan *plan, brs_plan_key key)
{
    if (!out || !plan) return BRS_ERR_NULL_POINTER;
    if (check_ready(plan) != BRS_OK) return BRS_ERR_STATE;
    switch (key) {
    case BRS_PLAN_MAX_COST: *out = cost_to_double(plan->max_cost); return BRS_OK;
    case BRS_PLAN_LOWER_BOUND: *out = cost_to_double(plan->lower_bound); return BRS_OK;
    case BRS_PLAN_TOTAL_COST: *out = cost_to_double(plan->total_cost); return BRS_OK;
    case BRS_PLAN_MICRO_SYNC_TIME: *out = cost_to_double(plan->micro_sync); return BRS_OK;
    case BRS_PLAN_STEP_SYNC_TIME: *out = cost_to_double(plan->step_sync); return BRS_OK;
    case BRS_PLAN_TIME_LOWER_BOUND: *out = cost_to_double(plan->time_lower_bound); return BRS_OK;
    default: return BRS_ERR_UNSUPPORTED;
    }
}

static brs_status slot_index(size_t *slot, const brs_plan *plan, int64_t rank, int64_t micro)
{
    if (check_ready(plan) != BRS_OK) return BRS_ERR_STATE;
    if (rank < 0 || (uint64_t)rank >= plan->dp_size || micro < 0 ||
        (uint64_t)micro >= plan->grad_accum)
        return BRS_ERR_OUT_OF_RANGE;
    *slot = (size_t)rank * plan->grad_accum + (size_t)micro;
    return BRS_OK;
}

brs_status brs_plan_micro_batch(const uint64_t **indices, size_t *count, const brs_plan *plan,
                                int64_t rank, int64_t micro)
{
    if (!indices || !count || !plan) return BRS_ERR_NULL_POINTER;
    size_t slot;
    brs_status status = slot_index(&slot, plan, rank, micro);
    if (status != BRS_OK) return status;
    *indices = plan->indices + plan->slot_start[slot];
    *count = plan->slot_start[slot + 1] - plan->slot_start[slot];
    return BRS_OK;
}

brs_status brs_plan_micro_batch_stats(uint64_t *padded_tokens, uint64_t *real_tokens,
                                      double *cost, const brs_plan *plan, int64_t rank,
                                      int64_t micro)
{
    if (!padded_tokens || !real_tokens || !cost || !plan) return BRS_ERR_NULL_POINTER;
    size_t slot;
    brs_status status = slot_index(&slot, plan, rank, micro);
    if (status != BRS_OK) return status;
    *padded_tokens = plan->padded[slot];
    *real_tokens = plan->real[slot];
    *cost = cost_to_double(plan->slot_cost[slot]);
    return BRS_OK;
}

const char *brs_plan_last_error(const brs_plan *plan)
{
    return plan ? plan->message : null_handle_message;
}
