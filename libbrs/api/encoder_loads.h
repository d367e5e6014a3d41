/* api/encoder_loads.h - the images of a vision-language dataset beside its lengths
 * (encoder_loads.c). Internal, not installed. */
#ifndef BRS_API_ENCODER_LOADS_H
#define BRS_API_ENCODER_LOADS_H

#include "brs.h"
#include "api/handles.h"
#include "api/message.h"
#include "planner/cost_model.h"

#include <stddef.h>
#include <stdint.h>

/* The images of dataset sample `index` (none without loads). */
struct brs_encoder_load brs_encoder_loads_of(const struct brs_sampler *sampler, uint64_t index);
/* The loads of n samples read into the sampler (its earlier ones freed), or
 * an error written to `message` (the sampler unchanged). */
brs_status brs_encoder_loads_attach(struct brs_sampler *sampler, const uint32_t *image_patches,
                                    const uint64_t *image_offsets, size_t n,
                                    const struct brs_message *message);
/* Whether any of the step's drawn samples has an image. */
int brs_encoder_loads_in_step(const brs_plan *p, const struct brs_sampler *s);
/* The check of the loads against the lengths and max_encoder_tokens. */
brs_status brs_encoder_loads_check(const struct brs_sampler *sampler,
                                   const struct brs_message *message);
/* The loads' share of the fingerprint. */
uint64_t brs_encoder_loads_mix(uint64_t h, const struct brs_sampler *sampler);

#endif
