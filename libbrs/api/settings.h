/* api/settings.h - what a sampler's settings imply together (settings.c). Internal, not
 * installed. */
#ifndef BRS_API_SETTINGS_H
#define BRS_API_SETTINGS_H

#include "brs.h"
#include "api/handles.h"
#include "api/message.h"
#include "planner/cost_model.h"
#include "planner/padding.h"

#include <stdint.h>

/* The checks that need several options or the lengths, the reason written
 * into `message`. */
brs_status brs_settings_check(const struct brs_sampler *sampler, const struct brs_message *message);
/* The steps of an epoch (the same on every rank). */
uint64_t brs_settings_steps(const struct brs_sampler *sampler);
/* The padding of the sampler's micro-batches (pad_to_multiple_of, length
 * buckets), and the largest sample length it admits under its cap
 * (brs_padding_limit). */
struct brs_padding brs_settings_padding(const struct brs_sampler *sampler);
uint64_t brs_settings_length_limit(const struct brs_sampler *sampler);
/* The cost model the planner prices the sampler's micro-batches with; a
 * packed row's cap is its total's, the padding's rounding included. */
struct brs_cost_model brs_settings_cost_model(const brs_sampler *s);

#endif
