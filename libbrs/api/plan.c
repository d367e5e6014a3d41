/* plan.c - the plan handle's exported functions (created and freed in
 * plan_handle.c): a step computed (brs_plan_compute: the sampler checked, then the step's path,
 * step.c); a batch that exists only now (brs_plan_compute_batch); micro-batches
 * made elsewhere loaded (brs_plan_load); and the read-only queries. Every
 * failure writes the plan's message, the const calls included (brs.h). */
#include "api/internal.h"
#include "planner/planner.h"
#include "util/too_long.h"
#include "util/wide.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- brs_plan_compute, which checks the sampler and the step and runs the step's path (step.c);
 * the handle is created and freed in plan_handle.c. */

/* The step planned within the vocabulary the sampler's options ask for,
 * fetched first so that the step's path never calls up into its choice. */
static brs_status run_step(brs_plan *plan, const brs_sampler *sampler, uint64_t epoch,
                           uint64_t step)
{
    const struct brs_vocabulary *vocabulary;
    brs_status status = brs_vocabulary_for_step(&vocabulary, sampler, &plan->message);
    if (status != BRS_OK) return status;
    return brs_step_plan(plan, sampler, epoch, step, vocabulary);
}

brs_status brs_plan_compute(brs_plan *plan, const brs_sampler *sampler, uint64_t epoch,
                            uint64_t step)
{
    if (!plan) return BRS_ERR_NULL_POINTER;
    plan->ready = 0;
    plan->batch = 0;
    if (!sampler)
        return brs_fail(&plan->message, BRS_ERR_NULL_POINTER, "brs_plan_compute: sampler is NULL");
    brs_status status = brs_settings_check(sampler, &plan->message);
    if (status != BRS_OK) return status;
    uint64_t steps = brs_settings_steps(sampler);
    if (step >= steps)
        return brs_fail(&plan->message, BRS_ERR_OUT_OF_RANGE,
                        "step %llu is out of range: an epoch has %llu steps (0..%llu)",
                        (unsigned long long)step, (unsigned long long)steps,
                        (unsigned long long)steps - 1);
    return run_step(plan, sampler, epoch, step);
}

/* Checks a loaded plan's shape and sums its sizes into *total. */

/* ---- the read-only queries of a plan. Every failure writes the plan's message, the const calls
 * included (brs.h). */

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
    brs_status status = brs_guards_open(plan, out != NULL, call);
    if (status != BRS_OK) return status;
    switch (key) {
    case BRS_PLAN_EPOCH: *out = (int64_t)plan->epoch; return BRS_OK;
    case BRS_PLAN_STEP: *out = (int64_t)plan->step; return BRS_OK;
    case BRS_PLAN_NUM_SAMPLES: *out = (int64_t)plan->num_samples; return BRS_OK;
    case BRS_PLAN_DP_SIZE: *out = (int64_t)plan->dp_size; return BRS_OK;
    case BRS_PLAN_GRAD_ACCUM: *out = (int64_t)plan->grad_accum; return BRS_OK;
    case BRS_PLAN_TOTAL_PADDED_TOKENS: *out = (int64_t)plan->total_padded; return BRS_OK;
    case BRS_PLAN_TOTAL_REAL_TOKENS: *out = (int64_t)plan->total_real; return BRS_OK;
    case BRS_PLAN_MAX_PADDED_TOKENS: *out = (int64_t)plan->max_padded; return BRS_OK;
    case BRS_PLAN_MEGABATCH_SIZE: *out = (int64_t)plan->megabatch_size; return BRS_OK;
    case BRS_PLAN_TOTAL_ENCODER_TOKENS: *out = (int64_t)plan->total_encoder_tokens; return BRS_OK;
    case BRS_PLAN_MAX_ENCODER_TOKENS: *out = (int64_t)plan->max_encoder_tokens; return BRS_OK;
    case BRS_PLAN_CP_SIZE: *out = plan->cp_active ? (int64_t)plan->cp_size : 1; return BRS_OK;
    case BRS_PLAN_MAX_RANK_TOKENS:
        *out = (int64_t)(plan->cp_active ? plan->max_rank_tokens : plan->max_padded);
        return BRS_OK;
    default: return unknown_plan_key(plan, key, call, "brs_plan_get_double");
    }
}

static brs_status time_split(double *out, const brs_plan *plan, brs_plan_key key)
{
    struct brs_time_split split;
    brs_describe_time_split(&split, plan);
    brs_wide value = key == BRS_PLAN_STEP_TIME      ? split.step_time
                     : key == BRS_PLAN_USEFUL_TIME  ? split.useful
                     : key == BRS_PLAN_PADDING_TIME ? split.padding
                                                    : split.waiting;
    *out = brs_wide_to_cost(value);
    return BRS_OK;
}

brs_status brs_plan_get_double(double *out, const brs_plan *plan, brs_plan_key key)
{
    static const char call[] = "brs_plan_get_double";
    brs_status status = brs_guards_open(plan, out != NULL, call);
    if (status != BRS_OK) return status;
    switch (key) {
    case BRS_PLAN_MAX_COST: *out = brs_wide_to_cost(plan->max_cost); return BRS_OK;
    case BRS_PLAN_LOWER_BOUND: *out = brs_wide_to_cost(plan->lower_bound); return BRS_OK;
    case BRS_PLAN_TOTAL_COST: *out = brs_wide_to_cost(plan->total_cost); return BRS_OK;
    case BRS_PLAN_MICRO_SYNC_TIME: *out = brs_wide_to_cost(plan->micro_sync); return BRS_OK;
    case BRS_PLAN_STEP_SYNC_TIME: *out = brs_wide_to_cost(plan->step_sync); return BRS_OK;
    case BRS_PLAN_TIME_LOWER_BOUND: *out = brs_wide_to_cost(plan->time_lower_bound); return BRS_OK;
    case BRS_PLAN_ENCODER_COST: *out = brs_wide_to_cost(plan->total_encoder_cost); return BRS_OK;
    case BRS_PLAN_STEP_TIME:
    case BRS_PLAN_USEFUL_TIME:
    case BRS_PLAN_PADDING_TIME:
    case BRS_PLAN_WAITING_TIME: return time_split(out, plan, key);
    default: return unknown_plan_key(plan, key, call, "brs_plan_get_int");
    }
}

/* The slot of (rank, micro-step) a query reads, after its guards (`outputs`:
 * every out-parameter given). */
static brs_status slot_index(size_t *slot, const brs_plan *plan, int outputs, int64_t rank,
                             int64_t micro, const char *call)
{
    brs_status status = brs_guards_open(plan, outputs, call);
    if (status != BRS_OK) return status;
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
    size_t slot = 0; /* set by slot_index on success; 0 quiets a false uninitialised warning */
    brs_status status = slot_index(&slot, plan, indices && count, rank, micro, call);
    if (status != BRS_OK) return status;
    *indices = plan->indices + plan->slot_start[slot];
    *count = plan->slot_start[slot + 1] - plan->slot_start[slot];
    return BRS_OK;
}

brs_status brs_plan_micro_batch_stats(uint64_t *padded_tokens, uint64_t *real_tokens, double *cost,
                                      const brs_plan *plan, int64_t rank, int64_t micro)
{
    static const char call[] = "brs_plan_micro_batch_stats";
    size_t slot = 0; /* set by slot_index on success; 0 quiets a false uninitialised warning */
    brs_status status =
        slot_index(&slot, plan, padded_tokens && real_tokens && cost, rank, micro, call);
    if (status != BRS_OK) return status;
    *padded_tokens = plan->padded[slot];
    *real_tokens = plan->real[slot];
    *cost = brs_wide_to_cost(plan->slot_cost[slot]);
    return BRS_OK;
}

brs_status brs_plan_micro_batch_encoder(uint64_t *encoder_tokens, uint64_t *images,
                                        double *encoder_cost, const brs_plan *plan, int64_t rank,
                                        int64_t micro)
{
    static const char call[] = "brs_plan_micro_batch_encoder";
    size_t slot = 0; /* set by slot_index on success; 0 quiets a false uninitialised warning */
    brs_status status =
        slot_index(&slot, plan, encoder_tokens && images && encoder_cost, rank, micro, call);
    if (status != BRS_OK) return status;
    *encoder_tokens = plan->encoder_tokens[slot];
    *images = plan->images[slot];
    *encoder_cost = brs_wide_to_cost(plan->encoder_cost[slot]);
    return BRS_OK;
}

const char *brs_plan_last_error(const brs_plan *plan)
{
    return plan ? brs_message_text(&plan->message) : BRS_MESSAGE_NULL_HANDLE;
}

/* ---- brs_plan_load: micro-batches made elsewhere (a peer sampler's), checked and described like a
 * computed plan. */

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
        return brs_fail(&plan->message, BRS_ERR_NULL_POINTER, "brs_plan_load: %s is NULL",
                        !sampler   ? "sampler"
                        : !indices ? "indices"
                                   : "counts");
    size_t total = 0;
    brs_status status = check_load(&total, plan, sampler, counts, num_micro_batches);
    if (status != BRS_OK) return status;
    for (size_t j = 0; j < total; j++)
        if (indices[j] >= sampler->count)
            return brs_fail(&plan->message, BRS_ERR_OUT_OF_RANGE,
                            "brs_plan_load: indices[%zu] = %llu is out of range: the dataset has "
                            "%zu samples",
                            j, (unsigned long long)indices[j], sampler->count);
    brs_samples_shape(plan, sampler, epoch, step);
    plan->num_samples = total;
    if (brs_samples_reserve(plan, total, plan->k) != BRS_OK)
        return brs_fail(&plan->message, BRS_ERR_NO_MEMORY,
                        "cannot allocate the buffers of a %zu-sample step", total);
    plan->slot_start[0] = 0;
    for (size_t s = 0; s < plan->k; s++) plan->slot_start[s + 1] = plan->slot_start[s] + counts[s];
    for (size_t j = 0; j < total; j++) plan->indices[j] = plan->draw_index[j] = indices[j];
    status = brs_samples_gather(plan, sampler, 0);
    if (status != BRS_OK) return status;
    brs_step_resolve(plan, sampler, NULL);
    brs_describe_slots(plan, sampler);
    brs_message_clear(&plan->message);
    plan->ready = 1;
    return BRS_OK;
}

/* ---- brs_plan_compute_batch: one step whose lengths exist only now (RL rollouts, a window of a
 * stream), planned by the step planner of plan.c. The batch is seen as the one step of an epoch
 * of exactly those lengths, in their order (shuffle off, drop_last off, batch_size rounded up so
 * that one step holds them all), so the plan is by construction what brs_plan_compute gives for
 * that epoch, and its indices are positions into the caller's array. */

static int longer_first(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x < y) - (x > y);
}

/* The least max_tokens with which the batch's k padded micro-batches hold
 * every sample (planner/least_cap.c, exact in padded mode); in packed mode,
 * or without the memory to sort a copy, the longest padded sample, which
 * every cap must hold. */
static uint64_t least_batch_cap(const struct brs_sampler *view, size_t k, uint32_t longest)
{
    struct brs_padding padding = brs_settings_padding(view);
    uint64_t padded_longest = brs_padding_apply(&padding, longest);
    size_t n = view->count;
    uint32_t *sorted = view->config.packed || n < k ? NULL : malloc(n * sizeof *sorted);
    if (sorted == NULL) return padded_longest;
    for (size_t i = 0; i < n; i++)
        sorted[i] = (uint32_t)brs_padding_apply(&padding, view->lengths[i]);
    qsort(sorted, n, sizeof *sorted, longer_first);
    uint64_t least = brs_least_cap_padded(sorted, n, k, sorted[0]);
    free(sorted);
    return least;
}

/* lengths[i], the batch's longest, too long for its limit: above the last
 * bucket, or (padded to `padded`) above max_tokens. */
static brs_status too_long(brs_plan *p, const struct brs_sampler *view, size_t i, uint32_t length,
                           uint64_t padded)
{
    char sample[64], shown[48] = "", limit[64], fix[160];
    snprintf(sample, sizeof sample, "the longest sample, lengths[%zu],", i);
    if (padded == 0) {
        snprintf(limit, sizeof limit, "the last length bucket %u",
                 view->buckets[view->bucket_count - 1]);
        snprintf(fix, sizeof fix, "add a bucket of at least %u", length);
    } else {
        if (padded != length)
            snprintf(shown, sizeof shown, ", padded to %llu", (unsigned long long)padded);
        snprintf(limit, sizeof limit, "max_tokens %lld", (long long)view->config.max_tokens);
        size_t k = (size_t)(view->config.dp_size * view->config.grad_accum);
        snprintf(fix, sizeof fix,
                 "raise max_tokens to %s%llu (the least that plans the whole batch into %zu "
                 "micro-batches)",
                 view->config.packed ? "at least " : "",
                 (unsigned long long)least_batch_cap(view, k, length), k);
    }
    return brs_too_long_fail(&p->message,
                             &(struct brs_too_long){sample, length, shown, limit, fix});
}

/* Checks the batch's lengths (none 0, none above what the cap and the
 * padding admit) and records the longest, as brs_sampler_set_lengths does
 * for a dataset. A batch over the cap is named by its longest sample (not
 * the first over it, which would only lead to the next) and the least cap
 * that plans all of it. */
static brs_status check_lengths(struct brs_sampler *view, brs_plan *p)
{
    uint64_t limit = brs_settings_length_limit(view);
    struct brs_padding padding = brs_settings_padding(view);
    uint32_t longest = 0;
    size_t longest_index = 0;
    for (size_t i = 0; i < view->count; i++) {
        uint32_t length = view->lengths[i];
        if (length == 0) return brs_settings_zero_length(&p->message, i);
        if (length > longest) {
            longest = length;
            longest_index = i;
        }
    }
    if (longest > limit)
        return too_long(p, view, longest_index, longest, brs_padding_apply(&padding, longest));
    view->max_length = longest;
    view->max_length_index = longest_index;
    return BRS_OK;
}

/* The shape checks: the ones brs_settings_check makes for a dataset, in the
 * batch's words (there is no batch_size or drop_last to change here). */
static brs_status check_shape(brs_plan *p, const struct brs_config *c, size_t n)
{
    brs_status status = brs_settings_check_micro_batches(c, &p->message);
    if (status != BRS_OK) return status;
    uint64_t k = (uint64_t)c->dp_size * (uint64_t)c->grad_accum;
    if (n == 0)
        return brs_fail(&p->message, BRS_ERR_INVALID_ARGUMENT,
                        "the batch is empty: give at least dp_size x grad_accum = %llu lengths",
                        (unsigned long long)k);
    if (n > BRS_MAX_STEP_SAMPLES)
        return brs_fail(&p->message, BRS_ERR_TOO_LARGE,
                        "the batch has %zu samples, more than %d per step: plan it in parts", n,
                        BRS_MAX_STEP_SAMPLES);
    if (n < k)
        return brs_fail(&p->message, BRS_ERR_TOO_FEW_SAMPLES,
                        "the batch has %zu samples, fewer than its dp_size x grad_accum = %llu "
                        "micro-batches (each needs one sample): give at least %llu samples, or "
                        "lower dp_size x grad_accum to at most %zu",
                        n, (unsigned long long)k, (unsigned long long)k, n);
    return BRS_OK;
}

/* One step of these lengths (and images, when image_offsets is not NULL)
 * planned with the configuration of `config`. */
static brs_status compute_batch(brs_plan *plan, const brs_sampler *config, const uint32_t *lengths,
                                const uint32_t *image_patches, const uint64_t *image_offsets,
                                size_t n)
{
    brs_status status = check_shape(plan, &config->config, n);
    if (status != BRS_OK) return status;
    /* A sampler of its own, never the caller's: only the configuration is
     * read from it, so its lengths (set or not) play no part. The message
     * is zeroed, not copied: it holds an atomic flag. */
    struct brs_sampler view;
    memset(&view, 0, sizeof view);
    view.config = config->config;
    view.config.shuffle = 0;
    view.config.drop_last = 0;
    view.config.rank = 0;
    size_t k = (size_t)(view.config.dp_size * view.config.grad_accum);
    view.config.batch_size = (int64_t)((n + k - 1) / k);
    view.lengths = lengths;
    view.count = n;
    view.buckets = config->buckets;
    view.bucket_count = config->bucket_count;
    status = check_lengths(&view, plan);
    if (status == BRS_OK && image_offsets)
        status = brs_encoder_loads_attach(&view, image_patches, image_offsets, n, &plan->message);
    if (status == BRS_OK) status = brs_encoder_loads_check(&view, &plan->message);
    if (status == BRS_OK) {
        struct brs_padding padding = brs_settings_padding(&view);
        status = brs_cp_check(&view, &padding, &plan->message);
    }
    if (status == BRS_OK) {
        /* The length_grouped order cache is keyed by the sampler's
         * fingerprint, which a view without a lengths hash does not give:
         * rebuild it. */
        plan->grouped.valid = 0;
        status = run_step(plan, &view, 0, 0);
    }
    /* the view chose a vocabulary of its own where max_shapes is set */
    brs_vocabulary_free(&view.vocabulary);
    free(view.encoder);
    return status;
}

brs_status brs_plan_compute_batch(brs_plan *plan, const brs_sampler *config,
                                  const uint32_t *lengths, size_t n)
{
    if (!plan) return BRS_ERR_NULL_POINTER;
    plan->ready = 0;
    plan->batch = 1;
    if (!config || !lengths)
        return brs_fail(&plan->message, BRS_ERR_NULL_POINTER, "brs_plan_compute_batch: %s is NULL",
                        !config ? "config" : "lengths");
    return compute_batch(plan, config, lengths, NULL, NULL, n);
}

brs_status brs_plan_compute_batch_images(brs_plan *plan, const brs_sampler *config,
                                         const uint32_t *lengths, const uint32_t *image_patches,
                                         const uint64_t *image_offsets, size_t n)
{
    if (!plan) return BRS_ERR_NULL_POINTER;
    plan->ready = 0;
    plan->batch = 1;
    if (!config || !lengths || !image_patches || !image_offsets)
        return brs_fail(&plan->message, BRS_ERR_NULL_POINTER,
                        "brs_plan_compute_batch_images: %s is NULL",
                        !config          ? "config"
                        : !lengths       ? "lengths"
                        : !image_patches ? "image_patches"
                                         : "image_offsets");
    return compute_batch(plan, config, lengths, image_patches, image_offsets, n);
}
