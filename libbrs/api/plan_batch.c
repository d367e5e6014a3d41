/* plan_batch.c - brs_plan_compute_batch: one step whose lengths exist only
 * now (RL rollouts, a window of a stream), planned by the step planner of
 * plan.c. The batch is seen as the one step of an epoch of exactly those
 * lengths, in their order (shuffle off, drop_last off, batch_size rounded
 * up so that one step holds them all), so the plan is by construction what
 * brs_plan_compute gives for that epoch, and its indices are positions into
 * the caller's array. */
#include "api/config.h"
#include "api/encoder_loads.h"
#include "api/handles.h"
#include "api/message.h"
#include "api/settings.h"
#include "api/step.h"
#include "planner/padding.h"

#include <stdlib.h>
#include <string.h>

/* Checks the batch's lengths (none 0, none above what the cap and the
 * padding admit) and records the longest, as brs_sampler_set_lengths does
 * for a dataset. */
static brs_status check_lengths(struct brs_sampler *view, brs_plan *p)
{
    uint64_t cap = (uint64_t)view->config.max_tokens, limit = brs_settings_length_limit(view);
    struct brs_padding padding = brs_settings_padding(view);
    uint32_t longest = 0;
    size_t longest_index = 0;
    for (size_t i = 0; i < view->count; i++) {
        uint32_t length = view->lengths[i];
        if (length == 0)
            return brs_fail(&p->message, BRS_ERR_INVALID_LENGTH,
                            "lengths[%zu] is 0: every sample needs at least one token", i);
        if (length > limit && brs_padding_apply(&padding, length) == 0)
            return brs_fail(&p->message, BRS_ERR_SAMPLE_TOO_LONG,
                            "lengths[%zu] = %u is above the last length bucket %u: add a bucket "
                            "of at least %u or truncate the sample",
                            i, length, view->buckets[view->bucket_count - 1], length);
        if (length > limit)
            return brs_fail(&p->message, BRS_ERR_SAMPLE_TOO_LONG,
                            "lengths[%zu] = %u is above max_tokens %llu%s: raise max_tokens to at "
                            "least %llu or truncate the sample",
                            i, length, (unsigned long long)cap, limit == cap ? "" : " once padded",
                            (unsigned long long)brs_padding_apply(&padding, length));
        if (length > longest) {
            longest = length;
            longest_index = i;
        }
    }
    view->max_length = longest;
    view->max_length_index = longest_index;
    return BRS_OK;
}

/* The shape checks: the ones brs_settings_check makes for a dataset, in the
 * batch's words (there is no batch_size or drop_last to change here). */
static brs_status check_shape(brs_plan *p, const struct brs_config *c, size_t n)
{
    uint64_t k = (uint64_t)c->dp_size * (uint64_t)c->grad_accum;
    if (k > BRS_MAX_MICRO_BATCHES)
        return brs_fail(&p->message, BRS_ERR_TOO_LARGE,
                        "dp_size * grad_accum = %llu exceeds %d micro-batches per step",
                        (unsigned long long)k, BRS_MAX_MICRO_BATCHES);
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
        /* The length_grouped order cache is keyed by the sampler's
         * fingerprint, which a view without a lengths hash does not give:
         * rebuild it. */
        plan->grouped.valid = 0;
        status = brs_step_run(plan, &view, 0, 0);
    }
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
