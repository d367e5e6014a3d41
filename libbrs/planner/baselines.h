/* planner/baselines.h - the fixed-size strategies (baselines.c). Internal, not installed. */
#ifndef BRS_PLANNER_BASELINES_H
#define BRS_PLANNER_BASELINES_H

#include "brs.h"

#include <stddef.h>
#include <stdint.h>

/* baselines.c: the fixed-size strategies. brs_baselines_slots deals the n
 * drawn dataset indices (read order) into K = dp_size * grad_accum chunks,
 * chunk c to slot (c % dp_size) * grad_accum + c / dp_size, writing
 * slot_start[0..K] and the indices slot by slot. */
void brs_baselines_slots(uint64_t *indices, size_t *slot_start, const uint64_t *drawn, size_t n,
                         size_t dp_size, size_t grad_accum);
/* Samples per megabatch of transformers' length grouping of a dataset of n
 * samples read in batches of `batch` (batch_size * grad_accum, the batch
 * the Trainer passes it); at most n. */
size_t brs_baselines_megabatch(size_t n, size_t batch);
/* The length-grouped epoch order (N dataset indices), cached in the plan
 * handle for one (sampler fingerprint, epoch); never global state. */
struct brs_grouped_order {
    int valid;
    uint64_t fingerprint, epoch;
    uint64_t *order;
    uint64_t *scratch;
};
/* What the order is built from: the dataset, the permutation's key, the
 * megabatch size and the fingerprint of all of them (the cache's key). */
struct brs_grouped_source {
    const uint32_t *lengths;
    size_t count;
    uint64_t seed;
    int shuffle;
    size_t megabatch;
    uint64_t fingerprint;
};
brs_status brs_grouped_order_get(const uint64_t **order, struct brs_grouped_order *cache,
                                 const struct brs_grouped_source *source, uint64_t epoch);
void brs_grouped_order_free(struct brs_grouped_order *cache);

#endif
