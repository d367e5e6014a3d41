/* settings.c - what a sampler's settings imply together: the checks across
 * options and lengths (the single-option bounds are checked on set), the
 * steps of an epoch, the padding of a micro-batch, the longest sample the
 * cap admits and the cost model the planner prices with. */
#include "api/internal.h"
#include "planner/planner.h"
#include "util/too_long.h"

#include <stdio.h>

static uint64_t global_batch(const struct brs_config *c)
{
    return (uint64_t)c->batch_size * (uint64_t)c->dp_size * (uint64_t)c->grad_accum;
}

uint64_t brs_settings_steps(const struct brs_sampler *sampler)
{
    uint64_t b = global_batch(&sampler->config), n = sampler->count;
    return sampler->config.drop_last ? n / b : (n + b - 1) / b;
}

struct brs_padding brs_settings_padding(const struct brs_sampler *sampler)
{
    struct brs_padding padding = {(uint64_t)sampler->config.pad_to_multiple_of, sampler->buckets,
                                  sampler->bucket_count};
    return padding;
}

uint64_t brs_settings_length_limit(const struct brs_sampler *sampler)
{
    struct brs_padding padding = brs_settings_padding(sampler);
    return brs_padding_limit(&padding, (uint64_t)sampler->config.max_tokens);
}

/* The longest sample, padded as its micro-batch will be, against the last
 * bucket and max_tokens: the one sample every plan must hold. */
static brs_status check_padded_longest(const struct brs_sampler *sampler,
                                       const struct brs_message *message)
{
    const struct brs_config *c = &sampler->config;
    struct brs_padding padding = brs_settings_padding(sampler);
    uint32_t longest = sampler->max_length;
    char sample[32], limit[96], fix[96];
    snprintf(sample, sizeof sample, "sample %zu", sampler->max_length_index);
    struct brs_too_long too_long = {sample, longest, "", limit, fix};
    if (longest > brs_padding_limit(&padding, 0)) {
        if (sampler->bucket_count > 0) {
            snprintf(limit, sizeof limit, "the last length bucket %u (pad_to_multiple_of %lld)",
                     sampler->buckets[sampler->bucket_count - 1], (long long)c->pad_to_multiple_of);
            snprintf(fix, sizeof fix, "add a bucket of at least %llu",
                     (unsigned long long)brs_padding_apply(
                         &(struct brs_padding){padding.multiple, NULL, 0}, longest));
            return brs_too_long_fail(message, &too_long);
        }
        return brs_fail(message, BRS_ERR_TOO_LARGE,
                        "sample %zu has %u tokens: padded to a multiple of %lld it exceeds "
                        "2^32 - 1 tokens; lower pad_to_multiple_of",
                        sampler->max_length_index, longest, (long long)c->pad_to_multiple_of);
    }
    if (c->max_tokens == 0 || longest <= brs_settings_length_limit(sampler)) return BRS_OK;
    uint64_t padded = brs_padding_apply(&padding, longest);
    char shown[96] = "";
    if (padded != longest)
        snprintf(shown, sizeof shown, ", padded to %llu (pad_to_multiple_of %lld%s)",
                 (unsigned long long)padded, (long long)c->pad_to_multiple_of,
                 sampler->bucket_count > 0 ? ", length buckets" : "");
    snprintf(limit, sizeof limit, "max_tokens %lld", (long long)c->max_tokens);
    snprintf(fix, sizeof fix, "raise max_tokens to at least %llu", (unsigned long long)padded);
    too_long.shown = shown;
    return brs_too_long_fail(message, &too_long);
}

brs_status brs_settings_check_micro_batches(const struct brs_config *c,
                                            const struct brs_message *message)
{
    uint64_t k = (uint64_t)c->dp_size * (uint64_t)c->grad_accum;
    if (k <= BRS_MAX_MICRO_BATCHES) return BRS_OK;
    return brs_fail(message, BRS_ERR_TOO_LARGE,
                    "dp_size * grad_accum = %llu exceeds %d micro-batches per step",
                    (unsigned long long)k, BRS_MAX_MICRO_BATCHES);
}

/* Checks that need several options or the lengths; the single-option bounds
 * were checked on set. Writes the reason into `message`. */
brs_status brs_settings_check(const struct brs_sampler *sampler, const struct brs_message *message)
{
    const struct brs_config *c = &sampler->config;
    if (!sampler->lengths)
        return brs_fail(message, BRS_ERR_STATE, "no lengths: call brs_sampler_set_lengths first");
    if (c->rank >= c->dp_size)
        return brs_fail(message, BRS_ERR_OUT_OF_RANGE,
                        "rank %lld is out of range for dp_size %lld: use 0..%lld",
                        (long long)c->rank, (long long)c->dp_size, (long long)c->dp_size - 1);
    brs_status status = brs_settings_check_micro_batches(c, message);
    if (status != BRS_OK) return status;
    uint64_t b = global_batch(c);
    if (b > BRS_MAX_STEP_SAMPLES)
        return brs_fail(message, BRS_ERR_TOO_LARGE,
                        "the global batch batch_size * dp_size * grad_accum = %llu exceeds %d "
                        "samples per step: lower batch_size",
                        (unsigned long long)b, BRS_MAX_STEP_SAMPLES);
    if (brs_settings_steps(sampler) == 0)
        return brs_fail(message, BRS_ERR_TOO_FEW_SAMPLES,
                        "%zu samples are fewer than one global batch of %llu (batch_size %lld x "
                        "dp_size %lld x grad_accum %lld) with drop_last: lower the batch size or "
                        "turn drop_last off",
                        sampler->count, (unsigned long long)b, (long long)c->batch_size,
                        (long long)c->dp_size, (long long)c->grad_accum);
    status = check_padded_longest(sampler, message);
    if (status == BRS_OK) status = brs_encoder_loads_check(sampler, message);
    if (status != BRS_OK) return status;
    struct brs_padding padding = brs_settings_padding(sampler);
    return brs_cp_check(sampler, &padding, message);
}

struct brs_cost_model brs_settings_cost_model(const brs_sampler *s)
{
    struct brs_padding padding = brs_settings_padding(s);
    return brs_settings_cost_model_padded(s, &padding);
}

struct brs_cost_model brs_settings_cost_model_padded(const brs_sampler *s,
                                                     const struct brs_padding *padding)
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
    if (s->config.packed && (model.max_tokens != 0 || padding->bucket_count != 0))
        model.max_tokens = brs_padding_row_limit(padding, model.max_tokens);
    return model;
}

brs_status brs_settings_zero_length(const struct brs_message *message, size_t index)
{
    return brs_fail(message, BRS_ERR_INVALID_LENGTH,
                    "lengths[%zu] is 0: every sample needs at least one token", index);
}
