/* sampler.c - the sampler handle: lengths, configuration, validation,
 * steps per epoch and the fingerprints. */
#include "api/internal.h"
#include "draw/prng.h"

#include <stdlib.h>
#include <string.h>

brs_status brs_sampler_new(brs_sampler **out)
{
    if (!out) return BRS_ERR_NULL_POINTER;
    *out = calloc(1, sizeof **out);
    if (!*out) return BRS_ERR_NO_MEMORY;
    brs_config_defaults(&(*out)->config);
    return BRS_OK;
}

void brs_sampler_free(brs_sampler *sampler)
{
    if (!sampler) return;
    free(sampler->owned);
    free(sampler->buckets);
    free(sampler->encoder);
    brs_vocabulary_free(&sampler->vocabulary);
    free(sampler);
}

/* Chained multiply-rotate: a fast 64-bit digest of the lengths, part of the
 * fingerprint (not a cryptographic hash). */
static uint64_t hash_lengths(const uint32_t *lengths, size_t n)
{
    uint64_t h = 0x243F6A8885A308D3ull ^ (uint64_t)n;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ lengths[i]) * 0x9E3779B97F4A7C15ull;
        h = (h << 31) | (h >> 33);
    }
    return brs_splitmix64(h);
}

brs_status brs_sampler_set_lengths(brs_sampler *sampler, const uint32_t *lengths, size_t n,
                                   int32_t mode)
{
    if (!sampler) return BRS_ERR_NULL_POINTER;
    if (!lengths)
        return brs_fail(&sampler->message, BRS_ERR_NULL_POINTER,
                        "brs_sampler_set_lengths: lengths is NULL");
    if (mode != BRS_LENGTHS_COPY && mode != BRS_LENGTHS_BORROW)
        return brs_fail(&sampler->message, BRS_ERR_INVALID_ARGUMENT,
                        "mode %d is neither BRS_LENGTHS_COPY (0) nor BRS_LENGTHS_BORROW (1)",
                        (int)mode);
    if (n == 0)
        return brs_fail(&sampler->message, BRS_ERR_INVALID_ARGUMENT,
                        "the dataset is empty: give at least one length");
    uint32_t longest = 0, shortest = UINT32_MAX;
    size_t longest_index = 0;
    for (size_t i = 0; i < n; i++) {
        if (lengths[i] == 0) return brs_settings_zero_length(&sampler->message, i);
        if (lengths[i] > longest) {
            longest = lengths[i];
            longest_index = i;
        }
        if (lengths[i] < shortest) shortest = lengths[i];
    }
    uint32_t *copy = NULL;
    if (mode == BRS_LENGTHS_COPY) {
        copy = malloc(n * sizeof *copy);
        if (!copy)
            return brs_fail(&sampler->message, BRS_ERR_NO_MEMORY, "cannot allocate %zu lengths", n);
        memcpy(copy, lengths, n * sizeof *copy);
    }
    free(sampler->owned);
    sampler->owned = copy;
    sampler->lengths = copy ? copy : lengths;
    sampler->count = n;
    sampler->max_length = longest;
    sampler->max_length_index = longest_index;
    sampler->min_length = shortest;
    sampler->lengths_hash = hash_lengths(lengths, n);
    brs_message_clear(&sampler->message);
    return BRS_OK;
}

brs_status brs_sampler_validate(brs_sampler *sampler)
{
    if (!sampler) return BRS_ERR_NULL_POINTER;
    brs_status status = brs_settings_check(sampler, &sampler->message);
    if (status == BRS_OK) brs_message_clear(&sampler->message);
    return status;
}

brs_status brs_sampler_steps_per_epoch(uint64_t *out, brs_sampler *sampler)
{
    if (!sampler) return BRS_ERR_NULL_POINTER;
    if (!out)
        return brs_fail(&sampler->message, BRS_ERR_NULL_POINTER,
                        "brs_sampler_steps_per_epoch: out is NULL");
    brs_status status = brs_sampler_validate(sampler);
    if (status != BRS_OK) return status;
    *out = brs_settings_steps(sampler);
    return BRS_OK;
}

/* Both fingerprints: the checks they share, then the plan algorithm version
 * and the lengths, to which each mixes its share of the configuration. */
static brs_status fingerprint_lengths(uint64_t *out, const brs_sampler *sampler,
                                      const char *function)
{
    if (!sampler) return BRS_ERR_NULL_POINTER;
    if (!out) return brs_fail(&sampler->message, BRS_ERR_NULL_POINTER, "%s: out is NULL", function);
    if (!sampler->lengths)
        return brs_fail(&sampler->message, BRS_ERR_STATE,
                        "no lengths to fingerprint: call brs_sampler_set_lengths first");
    uint64_t h = brs_splitmix64(BRS_PLAN_ALGORITHM_VERSION);
    h = brs_splitmix64(h ^ sampler->count);
    *out = brs_splitmix64(h ^ sampler->lengths_hash);
    return BRS_OK;
}

/* The length buckets, when set: their count and their values after a tag
 * that no option key takes, so that a sampler without buckets keeps the
 * fingerprint it had before buckets existed. */
static uint64_t mix_buckets(uint64_t h, const brs_sampler *sampler)
{
    if (sampler->bucket_count == 0) return h;
    h = brs_splitmix64(h ^ UINT64_C(0x6275636b657473)); /* "buckets" */
    h = brs_splitmix64(h ^ sampler->bucket_count);
    return brs_splitmix64(h ^ hash_lengths(sampler->buckets, sampler->bucket_count));
}

brs_status brs_sampler_fingerprint(uint64_t *out, const brs_sampler *sampler)
{
    brs_status status = fingerprint_lengths(out, sampler, "brs_sampler_fingerprint");
    if (status != BRS_OK) return status;
    *out = brs_encoder_loads_mix(mix_buckets(brs_config_mix(*out, &sampler->config), sampler),
                                 sampler);
    *out = brs_cp_fingerprint_mix(*out, sampler);
    return BRS_OK;
}

brs_status brs_sampler_stream_fingerprint(uint64_t *out, const brs_sampler *sampler)
{
    brs_status status = fingerprint_lengths(out, sampler, "brs_sampler_stream_fingerprint");
    if (status != BRS_OK) return status;
    *out = brs_encoder_loads_mix(
        mix_buckets(brs_config_mix_stream(*out, &sampler->config), sampler), sampler);
    return BRS_OK;
}

const char *brs_sampler_last_error(const brs_sampler *sampler)
{
    return sampler ? brs_message_text(&sampler->message) : BRS_MESSAGE_NULL_HANDLE;
}
