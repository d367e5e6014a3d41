/* planner/cost_model.h - the padded cost model shared by the planners, inline for their hot paths.
 * Internal, not installed. */
#ifndef BRS_PLANNER_COST_MODEL_H
#define BRS_PLANNER_COST_MODEL_H

#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* The cost model shared by the planners: the text part, then the vision
 * encoder's (docs/algorithm.md, "Two parts"). */
struct brs_cost_model {
    uint64_t intercept;          /* micro units */
    uint64_t alpha;              /* micro units */
    uint64_t max_tokens;         /* 0: no cap */
    uint64_t encoder_weight;     /* micro units per patch */
    uint64_t encoder_alpha;      /* micro units */
    uint64_t encoder_intercept;  /* micro units, per image */
    uint64_t max_encoder_tokens; /* patches; 0: no cap */
};

/* A sample's images, as the encoder's cost needs them: the patches summed,
 * their squares summed (attention runs within each image) and the count.
 * Bounds: a sample's patches sum to less than 2^32 (BRS_MAX_SAMPLE_PATCHES),
 * so its squares sum below 2^64, its images number below 2^32, and its cost
 * stays below 2^95, as a text weight does (util/wide.h). */
struct brs_encoder_load {
    uint64_t patches, squares, images;
};

/* The encoder's cost of a sample's images: encoder_weight per patch (one
 * padded text token's cost by default), plus the attention and per-image
 * terms. */
static inline brs_wide brs_encoder_cost(const struct brs_cost_model *model,
                                        const struct brs_encoder_load *load)
{
    return (brs_wide)load->patches * model->encoder_weight +
           (brs_wide)model->encoder_alpha * load->squares +
           (brs_wide)model->encoder_intercept * load->images;
}
/* The padded cost model, inline: it is on the planner's hot paths. */
static inline brs_wide brs_sample_weight(const struct brs_cost_model *model, uint32_t length)
{
    return (brs_wide)length * BRS_COST_UNITS_PER_ONE + (brs_wide)model->alpha * length * length;
}

/* A micro-batch of `size` samples whose longest has `head` tokens. */
static inline brs_wide brs_group_cost(const struct brs_cost_model *model, uint32_t head,
                                      size_t size)
{
    return model->intercept + (brs_wide)size * brs_sample_weight(model, head);
}

/* Whether intercept + (n + 1) w(L_0) < 2^64 for n samples sorted longest
 * first: then no group of up to n + 1 of them costs more than 64 bits. */
static inline int brs_fits_64_bits(const uint32_t *lengths, size_t n,
                                   const struct brs_cost_model *model)
{
    return brs_group_cost(model, lengths[0], n + 1) >> 64 == 0;
}

/* brs_sample_weight in 64-bit arithmetic, for samples of a narrow step
 * (brs_fits_64_bits). */
static inline uint64_t brs_sample_weight_narrow(const struct brs_cost_model *model, uint32_t length)
{
    return (uint64_t)length * BRS_COST_UNITS_PER_ONE + model->alpha * length * length;
}

/* brs_group_cost, in 64-bit arithmetic where `narrow` (brs_fits_64_bits of
 * samples that include this group); the hot loops pass a constant. */
static inline brs_wide brs_group_cost_narrow(const struct brs_cost_model *model, uint32_t head,
                                             size_t size, int narrow)
{
    if (!narrow) return brs_group_cost(model, head, size);
    return model->intercept + size * brs_sample_weight_narrow(model, head);
}

/* The largest group the token cap allows for a head of this length. */
static inline size_t brs_cap_size(const struct brs_cost_model *model, uint32_t head,
                                  size_t remaining)
{
    if (model->max_tokens == 0) return remaining;
    uint64_t s = model->max_tokens / head;
    return s < remaining ? (size_t)s : remaining;
}

/* The largest s <= limit with s * w <= budget, from an estimate a step or
 * two off (a floating-point one): exact whatever its rounding. */
static inline size_t brs_exact_size(size_t estimate, size_t limit, brs_wide w, brs_wide budget)
{
    size_t s = estimate < limit ? estimate : limit;
    while (s > 0 && (brs_wide)s * w > budget) s--;
    while (s < limit && (brs_wide)(s + 1) * w <= budget) s++;
    return s;
}

#endif
