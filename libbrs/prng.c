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
    unsigned right_bits = perm->bits / 2;
    for (unsigned r = 0; r < 4; r++) {
        key = brs_splitmix64(key);
        perm->round_keys[r] = key;
        perm->right_bits[r] = right_bits;
        perm->left_bits[r] = perm->bits - right_bits;
        perm->right_mask[r] = (UINT64_C(1) << right_bits) - 1;
        right_bits = perm->left_bits[r];
    }
}

/* A keyed hash whose top `shift`-complement bits are well mixed
 * (multiplicative hashing keeps its entropy in the high bits). */
static inline uint64_t round_function(uint64_t half, uint64_t key, unsigned shift)
{
    uint64_t h = (half ^ key) * 0xD6E8FEB86659FD93ull;
    h ^= h >> 32;
    h *= 0x9E3779B97F4A7C15ull;
    return h >> shift;
}

/* An unbalanced Feistel network on `bits` bits: each round moves the right
 * part to the top and xors the left part with a hash of the right one, so
 * the split alternates and any bit width works. Four rounds with a keyed
 * hash give a pseudo-random permutation (Luby-Rackoff). The widths of each
 * round are precomputed in brs_permutation_init. */
static inline uint64_t feistel_round(const struct brs_permutation *perm, uint64_t x, unsigned r)
{
    uint64_t left = x >> perm->right_bits[r];
    uint64_t right = x & perm->right_mask[r];
    return (right << perm->left_bits[r]) |
           (left ^ round_function(right, perm->round_keys[r], 64 - perm->left_bits[r]));
}

static inline uint64_t feistel(const struct brs_permutation *perm, uint64_t x)
{
    x = feistel_round(perm, x, 0);
    x = feistel_round(perm, x, 1);
    x = feistel_round(perm, x, 2);
    return feistel_round(perm, x, 3);
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
