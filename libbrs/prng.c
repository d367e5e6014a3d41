/* prng.c - the epoch permutation: a keyed pseudo-random bijection of [0, n)
 * evaluated per position, so a step's samples cost O(B), not O(n). */
#include "internal.h"

uint64_t brs_splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static unsigned ceil_log2(uint64_t n)
{
    unsigned bits = 0;
    while (bits < 64 && (UINT64_C(1) << bits) < n) bits++;
    return bits;
}

void brs_permutation_init(struct brs_permutation *perm, uint64_t n, uint64_t seed,
                          uint64_t epoch, int shuffle)
{
    perm->n = n;
    perm->identity = !shuffle || n < 2;
    perm->bits = ceil_log2(n) < 2 ? 2 : ceil_log2(n);
    /* Seed and epoch are hashed separately before mixing, so (seed 0,
     * epoch 1) and (seed 1, epoch 0) give unrelated orders. */
    uint64_t key = brs_splitmix64(brs_splitmix64(seed) ^ brs_splitmix64(~epoch));
    for (unsigned r = 0; r < 4; r++) {
        key = brs_splitmix64(key);
        perm->round_keys[r] = key;
    }
}

static uint64_t round_function(uint64_t half, uint64_t key)
{
    uint64_t h = (half ^ key) * 0xD6E8FEB86659FD93ull;
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ull;
    return h ^ (h >> 32);
}

/* An unbalanced Feistel network on `bits` bits: each round moves the right
 * part to the top and xors the left part with a hash of the right one, so
 * the split alternates and any bit width works. Four rounds with a keyed
 * hash give a pseudo-random permutation (Luby-Rackoff). */
static uint64_t feistel(const struct brs_permutation *perm, uint64_t x)
{
    unsigned right_bits = perm->bits / 2;
    for (unsigned r = 0; r < 4; r++) {
        unsigned left_bits = perm->bits - right_bits;
        uint64_t left = x >> right_bits;
        uint64_t right = x & ((UINT64_C(1) << right_bits) - 1);
        uint64_t mixed = (left ^ round_function(right, perm->round_keys[r])) &
                         ((UINT64_C(1) << left_bits) - 1);
        x = (right << left_bits) | mixed;
        right_bits = left_bits;
    }
    return x;
}

/* Cycle walking: the domain is below 2n, so fewer than two rounds of the
 * network are expected per position. */
uint64_t brs_permutation_apply(const struct brs_permutation *perm, uint64_t position)
{
    if (perm->identity) return position;
    uint64_t x = position;
    do {
        x = feistel(perm, x);
    } while (x >= perm->n);
    return x;
}
