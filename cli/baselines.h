/*
 * baselines.h - the samplers brs is compared with, both reading an epoch
 * order in fixed-size micro-batches of P samples:
 *   - random: a seeded shuffle (torch RandomSampler / DistributedSampler);
 *   - length-grouped: transformers' LengthGroupedSampler (group_by_length):
 *     the shuffle cut into megabatches of mult x (P * G) samples, mult =
 *     min(N / (4 * P * G), 50) but at least 1, each sorted longest first,
 *     and the longest megabatch head swapped to the front so that an OOM
 *     shows at once. P * G is the batch size the Trainer passes to it.
 * Consecutive micro-batches of the order go to the ranks in turn (as
 * accelerate shards a batch sampler), G of them per rank and step; step t
 * therefore reads order[t*B .. (t+1)*B).
 */
#ifndef BRS_CLI_BASELINES_H
#define BRS_CLI_BASELINES_H

#include <stddef.h>
#include <stdint.h>

#include "cost_model.h"

typedef struct step_shape {
    int64_t batch_size; /* P */
    int64_t grad_accum; /* G */
    int64_t dp_size;    /* R */
} step_shape;

/* Samples per micro-batch group in transformers' length grouping. */
size_t baseline_megabatch_size(size_t n, const step_shape *shape);

/* The random baseline's order of the epoch (order has n entries). */
void baseline_random_order(size_t *order, size_t n, uint64_t seed, uint64_t epoch, int shuffle);

/* The length-grouped baseline's order of the epoch. */
void baseline_length_grouped_order(size_t *order, const uint32_t *lengths, size_t n,
                                   const step_shape *shape, uint64_t seed, uint64_t epoch,
                                   int shuffle);

/* The K = R*G micro-batches of `step` when reading `order` in turn:
 * slots[rank * G + micro]. A kept last step with fewer than B samples is
 * split as evenly as possible, topped up to K samples from the start of
 * the order if needed (the library's drop-last=false rule). */
void baseline_step(micro_batch_stats *slots, const size_t *order, const uint32_t *lengths,
                   size_t n, const step_shape *shape, uint64_t step, const cost_model *model);

#endif
