/*
 * shuffle.h - the epoch order of the baseline samplers: a Fisher-Yates
 * shuffle driven by SplitMix64, keyed by (seed, epoch). It is independent of
 * the library's permutation on purpose: a baseline draws its own order, as
 * torch's RandomSampler or DistributedSampler would.
 */
#ifndef BRS_CLI_SHUFFLE_H
#define BRS_CLI_SHUFFLE_H

#include <stddef.h>
#include <stdint.h>

/* order[i] = a permutation of 0..n-1 (the identity when shuffle is 0). */
void shuffle_order(size_t *order, size_t n, uint64_t seed, uint64_t epoch, int shuffle);

#endif
