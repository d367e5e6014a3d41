/* draw/prng.h - the keyed epoch permutation (prng.c). Internal, not installed. */
#ifndef BRS_DRAW_PRNG_H
#define BRS_DRAW_PRNG_H

#include <stddef.h>
#include <stdint.h>

/* The epoch permutation, a keyed bijection of [0, n). */
struct brs_permutation {
    uint64_t n;
    uint64_t round_keys[4];
    uint64_t right_mask[4];
    unsigned right_bits[4], left_bits[4];
    unsigned bits; /* domain is [0, 2^bits), bits >= 2 */
    int identity;
};
uint64_t brs_splitmix64(uint64_t x);
void brs_permutation_init(struct brs_permutation *perm, uint64_t n, uint64_t seed, uint64_t epoch,
                          int shuffle);
uint64_t brs_permutation_apply(const struct brs_permutation *perm, uint64_t position);
/* out[j] = brs_permutation_apply(perm, first + j) for j < count. */
void brs_permutation_fill(const struct brs_permutation *perm, uint64_t first, size_t count,
                          uint64_t *out);

#endif
