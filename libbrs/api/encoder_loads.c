/* encoder_loads.c - the images of a vision-language dataset: per sample its
 * patches, their squares and its image count (planner/planner.h), kept
 * beside the lengths; their check against the lengths and the encoder cap,
 * and their share of the fingerprints (docs/algorithm.md, "Two parts"). */
#include "api/internal.h"
#include "draw/prng.h"

#include <stdlib.h>
#include <string.h>

/* Sample i's images, checked: each at least one patch, the sum within
 * BRS_MAX_SAMPLE_PATCHES. */
static brs_status sum_images(struct brs_encoder_load *load, const uint32_t *patches, uint64_t first,
                             uint64_t end, size_t i, const struct brs_message *message)
{
    memset(load, 0, sizeof *load);
    for (uint64_t j = first; j < end; j++) {
        if (patches[j] == 0)
            return brs_fail(message, BRS_ERR_INVALID_ARGUMENT,
                            "image_patches[%llu] (sample %zu) is 0: an image has at least one "
                            "patch; leave an image out rather than give it 0",
                            (unsigned long long)j, i);
        load->patches += patches[j];
        if (load->patches > BRS_MAX_SAMPLE_PATCHES)
            return brs_fail(message, BRS_ERR_TOO_LARGE,
                            "sample %zu has more than %llu image patches: shrink or drop images", i,
                            (unsigned long long)BRS_MAX_SAMPLE_PATCHES);
        load->squares += (uint64_t)patches[j] * patches[j];
        load->images++;
    }
    return BRS_OK;
}

static brs_status read_loads(struct brs_encoder_load *loads, const uint32_t *patches,
                             const uint64_t *offsets, size_t n, const struct brs_message *message)
{
    if (offsets[0] != 0)
        return brs_fail(message, BRS_ERR_INVALID_ARGUMENT,
                        "image_offsets[0] is %llu: the first sample's images start at 0",
                        (unsigned long long)offsets[0]);
    for (size_t i = 0; i < n; i++) {
        if (offsets[i + 1] < offsets[i])
            return brs_fail(message, BRS_ERR_INVALID_ARGUMENT,
                            "image_offsets[%zu] = %llu is below image_offsets[%zu] = %llu: the "
                            "offsets are non-decreasing (sample i's images are "
                            "image_patches[offsets[i] .. offsets[i+1]))",
                            i + 1, (unsigned long long)offsets[i + 1], i,
                            (unsigned long long)offsets[i]);
        brs_status status = sum_images(&loads[i], patches, offsets[i], offsets[i + 1], i, message);
        if (status != BRS_OK) return status;
    }
    return BRS_OK;
}

/* A digest of the loads for the fingerprints, as the lengths have one. */
static uint64_t hash_loads(const struct brs_encoder_load *loads, size_t n)
{
    uint64_t h = 0x452821E638D01377ull ^ (uint64_t)n;
    for (size_t i = 0; i < n; i++) {
        h = brs_splitmix64(h ^ loads[i].patches);
        h = brs_splitmix64(h ^ loads[i].squares ^ (loads[i].images << 40));
    }
    return h;
}

static void keep_loads(brs_sampler *s, struct brs_encoder_load *loads, size_t n)
{
    free(s->encoder);
    s->encoder = loads;
    s->encoder_count = n;
    s->encoder_hash = n ? hash_loads(loads, n) : 0;
    s->max_sample_patches = 0;
    s->max_patches_index = 0;
    for (size_t i = 0; i < n; i++)
        if (loads[i].patches > s->max_sample_patches) {
            s->max_sample_patches = loads[i].patches;
            s->max_patches_index = i;
        }
}

brs_status brs_encoder_loads_attach(struct brs_sampler *sampler, const uint32_t *image_patches,
                                    const uint64_t *image_offsets, size_t n,
                                    const struct brs_message *message)
{
    struct brs_encoder_load *loads = malloc(n * sizeof *loads);
    if (!loads)
        return brs_fail(message, BRS_ERR_NO_MEMORY,
                        "cannot allocate the encoder loads of %zu samples", n);
    brs_status status = read_loads(loads, image_patches, image_offsets, n, message);
    if (status != BRS_OK) {
        free(loads);
        return status;
    }
    keep_loads(sampler, loads, n);
    return BRS_OK;
}

brs_status brs_sampler_set_encoder_loads(brs_sampler *sampler, const uint32_t *image_patches,
                                         const uint64_t *image_offsets, size_t n)
{
    if (!sampler) return BRS_ERR_NULL_POINTER;
    if (n == 0) {
        keep_loads(sampler, NULL, 0);
        brs_message_clear(&sampler->message);
        return BRS_OK;
    }
    if (!image_offsets || !image_patches)
        return brs_fail(&sampler->message, BRS_ERR_NULL_POINTER,
                        "brs_sampler_set_encoder_loads: %s is NULL (n 0 clears the loads)",
                        !image_offsets ? "image_offsets" : "image_patches");
    brs_status status =
        brs_encoder_loads_attach(sampler, image_patches, image_offsets, n, &sampler->message);
    if (status == BRS_OK) brs_message_clear(&sampler->message);
    return status;
}

brs_status brs_sampler_encoder_load(uint64_t *images, uint64_t *patches, const brs_sampler *sampler,
                                    uint64_t index)
{
    if (!sampler) return BRS_ERR_NULL_POINTER;
    if (!images || !patches)
        return brs_fail(&sampler->message, BRS_ERR_NULL_POINTER,
                        "brs_sampler_encoder_load: %s is NULL", !images ? "images" : "patches");
    if (sampler->encoder && index >= sampler->encoder_count)
        return brs_fail(&sampler->message, BRS_ERR_OUT_OF_RANGE,
                        "sample %llu is out of range: the encoder loads hold %zu samples",
                        (unsigned long long)index, sampler->encoder_count);
    struct brs_encoder_load load = brs_encoder_loads_of(sampler, index);
    *images = load.images;
    *patches = load.patches;
    return BRS_OK;
}

struct brs_encoder_load brs_encoder_loads_of(const struct brs_sampler *sampler, uint64_t index)
{
    if (!sampler->encoder) return (struct brs_encoder_load){0, 0, 0};
    return sampler->encoder[index];
}

int brs_encoder_loads_in_step(const brs_plan *p, const struct brs_sampler *s)
{
    if (!s->encoder) return 0;
    for (size_t i = 0; i < p->num_samples; i++)
        if (s->encoder[p->draw_index[i]].images) return 1;
    return 0;
}

brs_status brs_encoder_loads_check(const struct brs_sampler *sampler,
                                   const struct brs_message *message)
{
    if (!sampler->encoder) return BRS_OK;
    if (sampler->encoder_count != sampler->count)
        return brs_fail(message, BRS_ERR_INVALID_ARGUMENT,
                        "the encoder loads hold %zu samples but the lengths %zu: give one load "
                        "list per sample (brs_sampler_set_encoder_loads)",
                        sampler->encoder_count, sampler->count);
    uint64_t cap = (uint64_t)sampler->config.max_encoder_tokens;
    if (cap != 0 && sampler->max_sample_patches > cap)
        return brs_fail(message, BRS_ERR_SAMPLE_TOO_LONG,
                        "sample %zu has %llu image patches, more than max_encoder_tokens %llu: "
                        "raise max_encoder_tokens to at least %llu or shrink its images",
                        sampler->max_patches_index, (unsigned long long)sampler->max_sample_patches,
                        (unsigned long long)cap, (unsigned long long)sampler->max_sample_patches);
    return BRS_OK;
}

uint64_t brs_encoder_loads_mix(uint64_t h, const struct brs_sampler *sampler)
{
    /* loads without a single image plan as no loads: the same fingerprint */
    if (!sampler->encoder || sampler->max_sample_patches == 0) return h;
    h = brs_splitmix64(h ^ UINT64_C(0x656e636f646572)); /* "encoder" */
    return brs_splitmix64(h ^ sampler->encoder_hash);
}
