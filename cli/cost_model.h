/*
 * cost_model.h - what a micro-batch costs, for the baselines.
 *
 * The same model as the library's (DESIGN.md section 1): padded,
 *   cost = intercept + bs*L + alpha*bs*L^2,  padded tokens = bs*L
 * (bs samples, L the longest); packed (varlen attention, no padding),
 *   cost = intercept + sum(L) + alpha*sum(L^2),  padded tokens = sum(L).
 * Doubles are exact enough here: this only measures baselines.
 */
#ifndef BRS_CLI_COST_MODEL_H
#define BRS_CLI_COST_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include <brs.h>

typedef struct cost_model {
    double alpha;
    double intercept;
    int packed;
} cost_model;

typedef struct micro_batch_stats {
    uint64_t padded_tokens;
    uint64_t real_tokens;
    double cost;
} micro_batch_stats;

/* The model a sampler plans with (alpha and intercept as it resolved them). */
cost_model cost_model_of(const brs_sampler *sampler);

/* Tokens and cost of the micro-batch of lengths[indices[0..count)]. */
micro_batch_stats cost_model_measure(const cost_model *model, const uint32_t *lengths,
                                     const size_t *indices, size_t count);

#endif
