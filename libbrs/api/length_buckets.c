/* length_buckets.c - the sampler's length buckets: the padded lengths a
 * micro-batch may take (planner/planner.h, "The padding"), set, read back, and the
 * library's default ladder of them. */
#include "api/internal.h"
#include "planner/planner.h"

#include <stdlib.h>
#include <string.h>

/* Steps per doubling of the default ladder: 64, 80, 96, 112, 128, 160, ...
 * (a bucket at most 25% above any length it holds). */
enum { DEFAULT_LADDER_STEPS = 4, MAX_LADDER_STEPS = 64 };

static brs_status check_buckets(const brs_sampler *s, const uint32_t *buckets, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (buckets[i] == 0)
            return brs_fail(&s->message, BRS_ERR_INVALID_ARGUMENT,
                            "buckets[%zu] is 0: a bucket is a padded length of at least 1 token",
                            i);
        if (i > 0 && buckets[i] <= buckets[i - 1])
            return brs_fail(&s->message, BRS_ERR_INVALID_ARGUMENT,
                            "buckets[%zu] = %u is not above buckets[%zu] = %u: give the buckets "
                            "strictly increasing",
                            i, buckets[i], i - 1, buckets[i - 1]);
    }
    return BRS_OK;
}

brs_status brs_sampler_set_length_buckets(brs_sampler *sampler, const uint32_t *buckets, size_t n)
{
    if (!sampler) return BRS_ERR_NULL_POINTER;
    if (!buckets && n > 0)
        return brs_fail(&sampler->message, BRS_ERR_NULL_POINTER,
                        "brs_sampler_set_length_buckets: buckets is NULL (n 0 clears them)");
    if (n > BRS_MAX_LENGTH_BUCKETS)
        return brs_fail(&sampler->message, BRS_ERR_TOO_LARGE, "%zu length buckets are more than %d",
                        n, BRS_MAX_LENGTH_BUCKETS);
    brs_status status = check_buckets(sampler, buckets, n);
    if (status != BRS_OK) return status;
    uint32_t *copy = NULL;
    if (n > 0) {
        copy = malloc(n * sizeof *copy);
        if (!copy)
            return brs_fail(&sampler->message, BRS_ERR_NO_MEMORY,
                            "cannot allocate %zu length buckets", n);
        memcpy(copy, buckets, n * sizeof *copy);
    }
    free(sampler->buckets);
    sampler->buckets = copy;
    sampler->bucket_count = n;
    brs_message_clear(&sampler->message);
    return BRS_OK;
}

brs_status brs_sampler_get_length_buckets(const uint32_t **buckets, size_t *count,
                                          const brs_sampler *sampler)
{
    if (!sampler) return BRS_ERR_NULL_POINTER;
    if (!buckets || !count)
        return brs_fail(&sampler->message, BRS_ERR_NULL_POINTER,
                        "brs_sampler_get_length_buckets: %s is NULL",
                        !buckets ? "buckets" : "count");
    *buckets = sampler->buckets;
    *count = sampler->bucket_count;
    return BRS_OK;
}

brs_status brs_sampler_bucket_ladder(uint32_t *buckets, size_t *count, const brs_sampler *sampler,
                                     uint32_t steps_per_doubling, size_t capacity)
{
    if (!sampler) return BRS_ERR_NULL_POINTER;
    if (!count || (!buckets && capacity > 0))
        return brs_fail(&sampler->message, BRS_ERR_NULL_POINTER,
                        "brs_sampler_bucket_ladder: %s is NULL", !count ? "count" : "buckets");
    if (!sampler->lengths)
        return brs_fail(&sampler->message, BRS_ERR_STATE,
                        "no lengths to build a ladder for: call brs_sampler_set_lengths first");
    if (steps_per_doubling > MAX_LADDER_STEPS)
        return brs_fail(&sampler->message, BRS_ERR_OUT_OF_RANGE,
                        "steps_per_doubling %u is out of range: use 1..%d, or 0 for the "
                        "default %d",
                        steps_per_doubling, MAX_LADDER_STEPS, DEFAULT_LADDER_STEPS);
    uint32_t steps = steps_per_doubling ? steps_per_doubling : DEFAULT_LADDER_STEPS;
    *count = brs_padding_ladder(buckets, capacity, sampler->min_length, sampler->max_length, steps,
                                (uint64_t)sampler->config.pad_to_multiple_of);
    if (*count > capacity && buckets)
        return brs_fail(&sampler->message, BRS_ERR_OUT_OF_RANGE,
                        "the ladder has %zu buckets, more than the capacity %zu: call again "
                        "with room for %zu",
                        *count, capacity, *count);
    return BRS_OK;
}
