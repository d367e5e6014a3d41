/* plan.c - the plan handle: draw a step's samples, form its micro-batches
 * with the sampler's strategy (the balanced planner, or a fixed-size
 * baseline of baselines.c), or load micro-batches made elsewhere; then
 * describe them with the one cost model and answer queries. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

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
    struct brs_grouped_order grouped; /* the length_grouped epoch order */

    struct brs_message message;
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

/* The dataset index at each position of the step, in draw order: from the
 * epoch permutation, or from a precomputed epoch order (length_grouped). */
static void draw(brs_plan *p, const brs_sampler *s, uint64_t epoch, uint64_t step, size_t b,
                 const uint64_t *epoch_order)
{
    struct brs_permutation perm;
    brs_permutation_init(&perm, s->count, (uint64_t)s->config.seed, epoch,
                         (int)s->config.shuffle);
    uint64_t start = step * b;
    for (size_t j = 0; j < p->num_samples; j++) {
        uint64_t position = start + j;
        if (position >= s->count) position %= s->count; /* top-up wraps */
        p->draw_index[j] = epoch_order ? epoch_order[position]
                                       : brs_permutation_apply(&perm, position);
    }
}

/* Gathers the drawn samples' lengths and sorts them longest first. The
 * lengths were checked by set_lengths, but a borrowed array may have been
 * changed since: a length of 0 or above max_tokens (cap_checked) would
 * break the planner's arithmetic, so it is an error here, never a crash. */
static brs_status gather(brs_plan *p, const brs_sampler *s, int cap_checked)
{
    /* Gathered in a pass of its own: the loads are independent, so cache
     * misses on a large lengths array overlap instead of queueing. */
    for (size_t j = 0; j < p->num_samples; j++) p->draw_length[j] = s->lengths[p->draw_index[j]];
    uint64_t cap = (uint64_t)s->config.max_tokens;
    for (size_t j = 0; j < p->num_samples; j++) {
        uint32_t length = p->draw_length[j];
        if (length == 0)
            return brs_fail(&p->message, BRS_ERR_INVALID_LENGTH,
                            "lengths[%llu] is 0 (epoch %llu, step %llu): the borrowed lengths "
                            "array changed after brs_sampler_set_lengths; keep it unchanged or "
                            "set the lengths again",
                            (unsigned long long)p->draw_index[j], (unsigned long long)p->epoch,
                            (unsigned long long)p->step);
        if (cap_checked && cap != 0 && length > cap)
            return brs_fail(&p->message, BRS_ERR_SAMPLE_TOO_LONG,
                            "lengths[%llu] = %u is above max_tokens %llu (epoch %llu, step "
                            "%llu): the borrowed lengths array changed after "
                            "brs_sampler_set_lengths; keep it unchanged or set the lengths again",
                            (unsigned long long)p->draw_index[j], length,
                            (unsigned long long)cap, (unsigned long long)p->epoch,
                            (unsigned long long)p->step);
    }
    brs_sort_by_length_desc(p->order, p->draw_length, p->num_samples, p->sort_scratch);
    for (size_t i = 0; i < p->num_samples; i++) p->sorted_length[i] = p->draw_length[p->order[i]];
    return BRS_OK;
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

/* Totals, peaks and the time bound of the filled slots; lower_bound and
 * weight_sum are those of the step's samples. */
static void summarise(brs_plan *p, brs_wide lower_bound, brs_wide weight_sum,
                      const struct brs_cost_model *model)
{
    size_t k = p->k;
    p->lower_bound = lower_bound;
    p->max_cost = p->total_cost = 0;
    p->total_padded = p->total_real = p->max_padded = 0;
    for (size_t s = 0; s < k; s++) {
        if (p->slot_cost[s] > p->max_cost) p->max_cost = p->slot_cost[s];
        p->total_cost += p->slot_cost[s];
        p->total_padded += p->padded[s];
        p->total_real += p->real[s];
        if (p->padded[s] > p->max_padded) p->max_padded = p->padded[s];
    }
    /* Both sync times are at least the largest cost, and at least the share
     * of one rank in the least possible work: k intercepts plus every
     * sample's weight (each sample pays at least its own). */
    brs_wide work = (brs_wide)k * model->intercept + weight_sum;
    brs_wide per_rank = (work + p->dp_size - 1) / p->dp_size;
    p->time_lower_bound = per_rank > lower_bound ? per_rank : lower_bound;
}

/* The two synchronised step times of the slots as dealt (docs/design.md):
 * per micro-step the slowest rank, and the slowest rank's sum. */
static void slot_sync_times(brs_plan *p)
{
    size_t g_count = p->grad_accum;
    p->micro_sync = p->step_sync = 0;
    for (size_t m = 0; m < g_count; m++) {
        brs_wide slowest = 0;
        for (size_t r = 0; r < p->dp_size; r++)
            if (p->slot_cost[r * g_count + m] > slowest) slowest = p->slot_cost[r * g_count + m];
        p->micro_sync += slowest;
    }
    for (size_t r = 0; r < p->dp_size; r++) {
        brs_wide sum = 0;
        for (size_t m = 0; m < g_count; m++) sum += p->slot_cost[r * g_count + m];
        if (sum > p->step_sync) p->step_sync = sum;
    }
}

/* The packed planner's bound (packed.c): the average load and the longest
 * sample alone. */
static brs_wide packed_lower_bound(const uint32_t *sorted, size_t n, size_t k,
                                   const struct brs_cost_model *model, brs_wide *weight_sum)
{
    brs_wide sum = 0;
    for (size_t i = 0; i < n; i++) sum += brs_sample_weight(model, sorted[i]);
    *weight_sum = sum;
    brs_wide average = model->intercept + (sum + k - 1) / k;
    brs_wide longest = model->intercept + brs_sample_weight(model, sorted[0]);
    return average > longest ? average : longest;
}

/* Tokens and costs of micro-batches formed elsewhere than by the planner
 * (the baselines, a loaded plan): slot_start and indices are filled, the
 * step's sorted lengths are in sorted_length. */
static void describe_slots(brs_plan *p, const brs_sampler *s, const struct brs_cost_model *model,
                           int packed)
{
    for (size_t slot = 0; slot < p->k; slot++) {
        uint64_t longest = 0, real = 0;
        brs_wide weights = 0;
        size_t count = p->slot_start[slot + 1] - p->slot_start[slot];
        for (size_t i = p->slot_start[slot]; i < p->slot_start[slot + 1]; i++) {
            uint32_t length = s->lengths[p->indices[i]];
            if (length > longest) longest = length;
            real += length;
            weights += brs_sample_weight(model, length);
        }
        p->real[slot] = real;
        p->padded[slot] = packed ? real : (uint64_t)count * longest;
        p->slot_cost[slot] = packed ? model->intercept + weights
                                    : brs_group_cost(model, (uint32_t)longest, count);
    }
    slot_sync_times(p);
    brs_wide weight_sum, bound =
        packed ? packed_lower_bound(p->sorted_length, p->num_samples, p->k, model, &weight_sum)
               : brs_lower_bound(p->sorted_length, p->num_samples, p->k, model, &weight_sum);
    summarise(p, bound, weight_sum, model);
}

static brs_status cap_message(brs_plan *p, const brs_sampler *s, const struct brs_split *split)
{
    if (split->needed > 0)
        return brs_fail(&p->message, BRS_ERR_CAP_INFEASIBLE,
                        "step %llu of epoch %llu needs at least %zu micro-batches to keep every "
                        "micro-batch within max_tokens %lld, but dp_size x grad_accum gives %zu: "
                        "raise max_tokens, raise grad_accum so that dp_size * grad_accum >= %zu, "
                        "or lower batch_size",
                        (unsigned long long)p->step, (unsigned long long)p->epoch, split->needed,
                        (long long)s->config.max_tokens, p->k, split->needed);
    return brs_fail(&p->message, BRS_ERR_CAP_INFEASIBLE,
                        "step %llu of epoch %llu: packing found no split into %zu micro-batches "
                        "within max_tokens %lld (the bound does not prove it impossible): raise "
                        "max_tokens or grad_accum",
                        (unsigned long long)p->step, (unsigned long long)p->epoch, p->k,
                        (long long)s->config.max_tokens);
}

static void set_shape(brs_plan *p, const brs_sampler *s, uint64_t epoch, uint64_t step)
{
    p->epoch = epoch;
    p->step = step;
    p->dp_size = (size_t)s->config.dp_size;
    p->grad_accum = (size_t)s->config.grad_accum;
    p->k = p->dp_size * p->grad_accum;
}

static struct brs_cost_model cost_model_of(const brs_sampler *s)
{
    struct brs_cost_model model = {s->config.intercept_micro, s->config.alpha_micro,
                                   (uint64_t)s->config.max_tokens};
    return model;
}

/* The balanced planner on the gathered step, dealt by cost (assign.c). */
static brs_status plan_balanced(brs_plan *p, const brs_sampler *s,
                                const struct brs_cost_model *model)
{
    int packed = (int)s->config.packed;
    struct brs_split split = {p->starts, p->group_of, p->group_cost, 0, 0, 0, 0};
    brs_status status = packed ? brs_plan_packed(&split, p->sorted_length, p->num_samples, p->k,
                                                 model, p->pack_scratch)
                               : brs_plan_padded(&split, p->sorted_length, p->num_samples, p->k,
                                                 p->dp_size, model, p->sort_scratch);
    if (status == BRS_ERR_CAP_INFEASIBLE) return cap_message(p, s, &split);
    if (status != BRS_OK)
        return brs_fail(&p->message, status, "the planner failed: %s", brs_strerror(status));
    brs_assign_snake(p->slot_of, p->group_order, &p->micro_sync, &p->step_sync, p->group_cost,
                     p->k, p->dp_size);
    fill_slots(p, packed);
    summarise(p, split.lower_bound, split.weight_sum, model);
    return BRS_OK;
}

brs_status brs_plan_compute(brs_plan *plan, const brs_sampler *sampler, uint64_t epoch,
                            uint64_t step)
{
    if (!plan) return BRS_ERR_NULL_POINTER;
    plan->ready = 0;
    if (!sampler)
        return brs_fail(&plan->message, BRS_ERR_NULL_POINTER, "brs_plan_compute: sampler is NULL");
    brs_status status = brs_config_check(sampler, &plan->message);
    if (status != BRS_OK) return status;
    const struct brs_config *c = &sampler->config;
    uint64_t steps = brs_steps_in_epoch(sampler);
    if (step >= steps)
        return brs_fail(&plan->message, BRS_ERR_OUT_OF_RANGE,
                        "step %llu is out of range: an epoch has %llu steps (0..%llu)",
                        (unsigned long long)step, (unsigned long long)steps,
                        (unsigned long long)steps - 1);
    set_shape(plan, sampler, epoch, step);
    size_t b = (size_t)c->batch_size * plan->k;
    plan->num_samples = step_size(sampler, step, b, plan->k);
    if (reserve(plan, plan->num_samples, plan->k) != BRS_OK)
        return brs_fail(&plan->message, BRS_ERR_NO_MEMORY,
                        "cannot allocate the buffers of a %zu-sample step", plan->num_samples);
    const uint64_t *epoch_order = NULL;
    if (c->strategy == BRS_STRATEGY_LENGTH_GROUPED &&
        brs_grouped_order_get(&epoch_order, &plan->grouped, sampler, epoch) != BRS_OK)
        return brs_fail(&plan->message, BRS_ERR_NO_MEMORY,
                        "cannot allocate the length_grouped order of %zu samples",
                        sampler->count);
    draw(plan, sampler, epoch, step, b, epoch_order);
    status = gather(plan, sampler, 1);
    if (status != BRS_OK) return status;

    struct brs_cost_model model = cost_model_of(sampler);
    if (c->strategy == BRS_STRATEGY_BALANCED) {
        status = plan_balanced(plan, sampler, &model);
        if (status != BRS_OK) return status;
    } else {
        brs_baseline_slots(plan->indices, plan->slot_start, plan->draw_index, plan->num_samples,
                           plan->dp_size, plan->grad_accum);
        describe_slots(plan, sampler, &model, (int)c->packed);
    }
    brs_message_clear(&plan->message);
    plan->ready = 1;
    return BRS_OK;
}

/* Checks a loaded plan's shape and sums its sizes into *total. */
static brs_status check_load(size_t *total, brs_plan *p, const brs_sampler *s,
                             const uint64_t *counts, size_t num_micro_batches)
{
    if (!s->lengths)
        return brs_fail(&p->message, BRS_ERR_STATE,
                        "brs_plan_load: the sampler has no lengths: call brs_sampler_set_lengths "
                        "first");
    uint64_t k = (uint64_t)s->config.dp_size * (uint64_t)s->config.grad_accum;
    if (num_micro_batches != k)
        return brs_fail(&p->message, BRS_ERR_INVALID_ARGUMENT,
                        "brs_plan_load: num_micro_batches = %zu, but the sampler's dp_size %lld x "
                        "grad_accum %lld = %llu: give one count per (rank, micro-step)",
                        num_micro_batches, (long long)s->config.dp_size,
                        (long long)s->config.grad_accum, (unsigned long long)k);
    uint64_t sum = 0;
    for (size_t i = 0; i < num_micro_batches; i++) {
        if (counts[i] == 0)
            return brs_fail(&p->message, BRS_ERR_INVALID_ARGUMENT,
                            "brs_plan_load: counts[%zu] is 0: every micro-batch needs at least "
                            "one sample",
                            i);
        sum += counts[i] < BRS_MAX_STEP_SAMPLES ? counts[i] : BRS_MAX_STEP_SAMPLES + 1;
        if (sum > BRS_MAX_STEP_SAMPLES)
            return brs_fail(&p->message, BRS_ERR_TOO_LARGE,
                            "brs_plan_load: the micro-batches hold more than %d samples",
                            BRS_MAX_STEP_SAMPLES);
    }
    *total = (size_t)sum;
    return BRS_OK;
}

brs_status brs_plan_load(brs_plan *plan, const brs_sampler *sampler, const uint64_t *indices,
                         const uint64_t *counts, size_t num_micro_batches, uint64_t epoch,
                         uint64_t step)
{
    if (!plan) return BRS_ERR_NULL_POINTER;
    plan->ready = 0;
    if (!sampler || !indices || !counts)
        return brs_fail(&plan->message, BRS_ERR_NULL_POINTER,
                        "brs_plan_load: %s is NULL",
                        !sampler ? "sampler" : !indices ? "indices" : "counts");
    size_t total;
    brs_status status = check_load(&total, plan, sampler, counts, num_micro_batches);
    if (status != BRS_OK) return status;
    for (size_t j = 0; j < total; j++)
        if (indices[j] >= sampler->count)
            return brs_fail(&plan->message, BRS_ERR_OUT_OF_RANGE,
                            "brs_plan_load: indices[%zu] = %llu is out of range: the dataset has "
                            "%zu samples",
                            j, (unsigned long long)indices[j], sampler->count);
    set_shape(plan, sampler, epoch, step);
    plan->num_samples = total;
    if (reserve(plan, total, plan->k) != BRS_OK)
        return brs_fail(&plan->message, BRS_ERR_NO_MEMORY,
                        "cannot allocate the buffers of a %zu-sample step", total);
    plan->slot_start[0] = 0;
    for (size_t s = 0; s < plan->k; s++) plan->slot_start[s + 1] = plan->slot_start[s] + counts[s];
    for (size_t j = 0; j < total; j++) plan->indices[j] = plan->draw_index[j] = indices[j];
    status = gather(plan, sampler, 0);
    if (status != BRS_OK) return status;
    struct brs_cost_model model = cost_model_of(sampler);
    describe_slots(plan, sampler, &model, (int)sampler->config.packed);
    brs_message_clear(&plan->message);
    plan->ready = 1;
    return BRS_OK;
}

static brs_status check_ready(const brs_plan *plan, const char *call)
{
    if (plan->ready) return BRS_OK;
    return brs_fail(&plan->message, BRS_ERR_STATE,
                    "%s: the plan holds no step: call brs_plan_compute or brs_plan_load first "
                    "(or the last one failed)",
                    call);
}

static brs_status null_out(const brs_plan *plan, const char *call)
{
    return brs_fail(&plan->message, BRS_ERR_NULL_POINTER, "%s: an out-parameter is NULL", call);
}

static brs_status unknown_plan_key(const brs_plan *plan, brs_plan_key key, const char *call,
                                   const char *other)
{
    return brs_fail(&plan->message, BRS_ERR_UNSUPPORTED,
                    "%s: %d is not a key of this call (an unknown key, or one of %s)", call,
                    (int)key, other);
}

brs_status brs_plan_get_int(int64_t *out, const brs_plan *plan, brs_plan_key key)
{
    static const char call[] = "brs_plan_get_int";
    if (!plan) return BRS_ERR_NULL_POINTER;
    if (!out) return null_out(plan, call);
    if (check_ready(plan, call) != BRS_OK) return BRS_ERR_STATE;
    switch (key) {
    case BRS_PLAN_EPOCH: *out = (int64_t)plan->epoch; return BRS_OK;
    case BRS_PLAN_STEP: *out = (int64_t)plan->step; return BRS_OK;
    case BRS_PLAN_NUM_SAMPLES: *out = (int64_t)plan->num_samples; return BRS_OK;
    case BRS_PLAN_DP_SIZE: *out = (int64_t)plan->dp_size; return BRS_OK;
    case BRS_PLAN_GRAD_ACCUM: *out = (int64_t)plan->grad_accum; return BRS_OK;
    case BRS_PLAN_TOTAL_PADDED_TOKENS: *out = (int64_t)plan->total_padded; return BRS_OK;
    case BRS_PLAN_TOTAL_REAL_TOKENS: *out = (int64_t)plan->total_real; return BRS_OK;
    case BRS_PLAN_MAX_PADDED_TOKENS: *out = (int64_t)plan->max_padded; return BRS_OK;
    default: return unknown_plan_key(plan, key, call, "brs_plan_get_double");
    }
}

static double cost_to_double(brs_wide cost)
{
    return (double)cost / (double)BRS_COST_UNITS_PER_ONE;
}

brs_status brs_plan_get_double(double *out, const brs_plan *plan, brs_plan_key key)
{
    static const char call[] = "brs_plan_get_double";
    if (!plan) return BRS_ERR_NULL_POINTER;
    if (!out) return null_out(plan, call);
    if (check_ready(plan, call) != BRS_OK) return BRS_ERR_STATE;
    switch (key) {
    case BRS_PLAN_MAX_COST: *out = cost_to_double(plan->max_cost); return BRS_OK;
    case BRS_PLAN_LOWER_BOUND: *out = cost_to_double(plan->lower_bound); return BRS_OK;
    case BRS_PLAN_TOTAL_COST: *out = cost_to_double(plan->total_cost); return BRS_OK;
    case BRS_PLAN_MICRO_SYNC_TIME: *out = cost_to_double(plan->micro_sync); return BRS_OK;
    case BRS_PLAN_STEP_SYNC_TIME: *out = cost_to_double(plan->step_sync); return BRS_OK;
    case BRS_PLAN_TIME_LOWER_BOUND: *out = cost_to_double(plan->time_lower_bound); return BRS_OK;
    default: return unknown_plan_key(plan, key, call, "brs_plan_get_int");
    }
}

static brs_status slot_index(size_t *slot, const brs_plan *plan, int64_t rank, int64_t micro,
                             const char *call)
{
    if (check_ready(plan, call) != BRS_OK) return BRS_ERR_STATE;
    if (rank < 0 || (uint64_t)rank >= plan->dp_size)
        return brs_fail(&plan->message, BRS_ERR_OUT_OF_RANGE,
                        "%s: rank %lld is out of range: the plan has ranks 0..%zu", call,
                        (long long)rank, plan->dp_size - 1);
    if (micro < 0 || (uint64_t)micro >= plan->grad_accum)
        return brs_fail(&plan->message, BRS_ERR_OUT_OF_RANGE,
                        "%s: micro-step %lld is out of range: the plan has micro-steps 0..%zu",
                        call, (long long)micro, plan->grad_accum - 1);
    *slot = (size_t)rank * plan->grad_accum + (size_t)micro;
    return BRS_OK;
}

brs_status brs_plan_micro_batch(const uint64_t **indices, size_t *count, const brs_plan *plan,
                                int64_t rank, int64_t micro)
{
    static const char call[] = "brs_plan_micro_batch";
    if (!plan) return BRS_ERR_NULL_POINTER;
    if (!indices || !count) return null_out(plan, call);
    size_t slot;
    brs_status status = slot_index(&slot, plan, rank, micro, call);
    if (status != BRS_OK) return status;
    *indices = plan->indices + plan->slot_start[slot];
    *count = plan->slot_start[slot + 1] - plan->slot_start[slot];
    return BRS_OK;
}

brs_status brs_plan_micro_batch_stats(uint64_t *padded_tokens, uint64_t *real_tokens,
                                      double *cost, const brs_plan *plan, int64_t rank,
                                      int64_t micro)
{
    static const char call[] = "brs_plan_micro_batch_stats";
    if (!plan) return BRS_ERR_NULL_POINTER;
    if (!padded_tokens || !real_tokens || !cost) return null_out(plan, call);
    size_t slot;
    brs_status status = slot_index(&slot, plan, rank, micro, call);
    if (status != BRS_OK) return status;
    *padded_tokens = plan->padded[slot];
    *real_tokens = plan->real[slot];
    *cost = cost_to_double(plan->slot_cost[slot]);
    return BRS_OK;
}

const char *brs_plan_last_error(const brs_plan *plan)
{
    return plan ? brs_message_text(&plan->message) : null_handle_message;
}
