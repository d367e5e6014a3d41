/* draw/draw.h - the draw of a step: the keyed epoch permutation (prng.c) and the sort by length
 * (sort.c). Internal, not installed. */
#ifndef BRS_DRAW_DRAW_H
#define BRS_DRAW_DRAW_H

#include <stddef.h>
#include <stdint.h>

/* prng.c: the epoch permutation, a keyed bijection of [0, n). */
struct brs_permutation {
    uint64_t n;
    uint64_t round_keys[4];
    uint64_t right_mask[4];
    unsigned right_bits[4], left_bits[4];
    unsigned bits; /* domain is [0, 2^bits), bits >= 2 */
    int identity;
};
uint64_t brs_splitmix64(uint64_t x);
void brs_permutation_init(struct brs_permutation *perm, uint64_t n, uint64_t seed,
                          uint64_t epoch, int shuffle);
uint64_t brs_permutation_apply(const struct brs_permutation *perm, uint64_t position);
/* out[j] = brs_permutation_apply(perm, first + j) for j < count. */
void brs_permutation_fill(const struct brs_permutation *perm, uint64_t first, size_t count,
                          uint64_t *out);

/* sort.c: items[i] belongs to the sample of length lengths[i]; items_out
 * gets the items ordered by length descending, stable, and `sorted` (unless
 * NULL) the lengths in that order. items_out must not overlap items;
 * scratch must hold 2 * n uint64_t. */
void brs_sort_by_length_desc(uint64_t *items_out, uint32_t *sorted, const uint32_t *lengths,
                             const uint64_t *items, size_t n, uint64_t *scratch);

#endif
