/* prng.c - the epoch permutation: a keyed pseudo-random bijection of [0, n)
 * evaluated per position, so a step's samples cost O(B), not O(n). */
#include "draw/prng.h"

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

/* Four rounds of the mix on a domain of 256 or more positions, where they
 * pass the statistics of tests/unit/test_permutation.c. A smaller domain
 * gets sixteen rounds with keyed multipliers: there the fixed-multiplier
 * rounds are close to a translation of one fixed map, so some orders are
 * far more likely than others, and the longer mix costs nothing at that
 * size. */
enum { ROUNDS = 4, SMALL_BITS = 8, SMALL_ROUNDS = 16 };

/* Odd multipliers (SplitMix64's and golden-ratio constants): any odd number
 * is a bijection modulo 2^bits, and these have well-spread low bits. */
static const uint64_t multiplier[ROUNDS] = {0x9E3779B97F4A7C15ull, 0xD6E8FEB86659FD93ull,
                                            0xBF58476D1CE4E5B9ull, 0x94D049BB133111EBull};

void brs_permutation_init(struct brs_permutation *perm, uint64_t n, uint64_t seed, uint64_t epoch,
                          int shuffle)
{
    perm->n = n;
    perm->identity = !shuffle || n < 2;
    perm->bits = ceil_log2(n) < 1 ? 1 : ceil_log2(n);
    /* Seed and epoch are hashed separately before mixing, so (seed 0,
     * epoch 1) and (seed 1, epoch 0) give unrelated orders. */
    uint64_t key = brs_splitmix64(brs_splitmix64(seed) ^ brs_splitmix64(~epoch));
    for (unsigned r = 0; r < ROUNDS; r++) {
        key = brs_splitmix64(key);
        perm->round_keys[r] = key;
    }
}

/* A bijection of [0, 2^bits) (mask = 2^bits - 1): four rounds of xor with
 * a round key, multiplication by an odd constant and an xorshift by half
 * the width, each invertible modulo 2^bits. The multiplication carries low
 * bits upwards, the xorshift high bits downwards, so after four rounds
 * every output bit depends on every input and key bit; with three,
 * neighbouring positions stay visibly correlated (too many or too few
 * ascents). */
static inline uint64_t mix_round(uint64_t x, uint64_t key, uint64_t odd, uint64_t mask,
                                 unsigned shift)
{
    x = ((x ^ key) * odd) & mask;
    return x ^ (x >> shift);
}

/* Written out round by round: the compiler keeps the loop otherwise, and
 * its counter costs a third of the mix. */
static inline uint64_t mix(const struct brs_permutation *perm, uint64_t x, uint64_t mask,
                           unsigned shift)
{
    x = mix_round(x, perm->round_keys[0], multiplier[0], mask, shift);
    x = mix_round(x, perm->round_keys[1], multiplier[1], mask, shift);
    x = mix_round(x, perm->round_keys[2], multiplier[2], mask, shift);
    return mix_round(x, perm->round_keys[3], multiplier[3], mask, shift);
}

/* The small domains' mix: each round's key drawn from a round key by
 * SplitMix64, its multiplier and an addend taken from that key, so the key
 * selects the maps, not only a translation of one map. */
static uint64_t mix_small(const struct brs_permutation *perm, uint64_t x, uint64_t mask,
                          unsigned shift)
{
    for (unsigned r = 0; r < SMALL_ROUNDS; r++) {
        uint64_t key = brs_splitmix64(perm->round_keys[r % ROUNDS] + r / ROUNDS);
        x = ((x ^ key) * ((key >> 32) | 1) + (key >> 16)) & mask;
        x ^= x >> shift;
    }
    return x;
}

/* Cycle walking past the first mix, out of line: the first lands in
 * [0, n) with probability n / 2^bits > 1/2, and keeping the loop out of
 * brs_permutation_apply spares that common case the loop's set-up. */
static uint64_t walk(const struct brs_permutation *perm, uint64_t x, uint64_t mask, unsigned shift)
{
    do {
        x = perm->bits < SMALL_BITS ? mix_small(perm, x, mask, shift) : mix(perm, x, mask, shift);
    } while (x >= perm->n);
    return x;
}

/* The domain is below 2n, so fewer than two mixes are expected per
 * position. */
uint64_t brs_permutation_apply(const struct brs_permutation *perm, uint64_t position)
{
    if (perm->identity) return position;
    uint64_t mask = UINT64_MAX >> (64 - perm->bits);
    unsigned shift = (perm->bits + 1) / 2;
    if (perm->bits < SMALL_BITS) return walk(perm, position, mask, shift);
    uint64_t x = mix(perm, position, mask, shift);
    return x < perm->n ? x : walk(perm, x, mask, shift);
}

/* ---- a run of consecutive positions --------------------------------------
 * brs_permutation_fill gives brs_permutation_apply's values block by block:
 * the first mix of every position of a block, then the positions it left
 * outside [0, n) mixed again, all at once, until none is left. There is no
 * branch per position, where cycle walking position by position
 * mispredicts on up to half of them. */
enum { BLOCK = 256 };

#if defined(__x86_64__) && defined(__GNUC__)
/* Eight 32-bit lanes, where the processor has AVX2 (asked at run time).
 * For a domain of at most 2^32 positions a product modulo 2^bits depends
 * only on the low 32 bits of its factors, so the lanes give mix()'s values
 * exactly, on any machine. */
typedef uint32_t lanes __attribute__((vector_size(32)));
enum { LANES = 8 };

__attribute__((target("avx2"))) static void first_mix_lanes(uint64_t *out, uint64_t first,
                                                            size_t count, const uint64_t *keys,
                                                            uint32_t mask, unsigned shift)
{
    lanes key[ROUNDS], odd[ROUNDS];
    for (unsigned r = 0; r < ROUNDS; r++) {
        key[r] = (lanes){0} + (uint32_t)keys[r];
        odd[r] = (lanes){0} + (uint32_t)multiplier[r];
    }
    for (size_t j = 0; j + LANES <= count; j += LANES) {
        uint32_t p = (uint32_t)(first + j); /* first + count <= n <= 2^32 */
        lanes x = {p, p + 1, p + 2, p + 3, p + 4, p + 5, p + 6, p + 7};
        for (unsigned r = 0; r < ROUNDS; r++) {
            x = ((x ^ key[r]) * odd[r]) & mask;
            x ^= x >> shift;
        }
        for (unsigned l = 0; l < LANES; l++) out[j + l] = x[l];
    }
}

static size_t first_mix_wide(uint64_t *out, uint64_t first, size_t count,
                             const struct brs_permutation *perm, uint64_t mask, unsigned shift)
{
    if (perm->bits > 32 || !__builtin_cpu_supports("avx2")) return 0;
    first_mix_lanes(out, first, count, perm->round_keys, (uint32_t)mask, shift);
    return count / LANES * LANES;
}
#else
static size_t first_mix_wide(uint64_t *out, uint64_t first, size_t count,
                             const struct brs_permutation *perm, uint64_t mask, unsigned shift)
{
    (void)out, (void)first, (void)count, (void)perm, (void)mask, (void)shift;
    return 0;
}
#endif

static void fill_block(const struct brs_permutation *perm, uint64_t first, size_t count,
                       uint64_t *out, uint64_t mask, unsigned shift)
{
    for (size_t j = first_mix_wide(out, first, count, perm, mask, shift); j < count; j++)
        out[j] = mix(perm, first + j, mask, shift);
    uint32_t walking[BLOCK];
    size_t left = 0;
    for (size_t j = 0; j < count; j++) {
        walking[left] = (uint32_t)j;
        left += out[j] >= perm->n;
    }
    while (left > 0) {
        size_t still = 0;
        for (size_t w = 0; w < left; w++) {
            uint32_t j = walking[w];
            out[j] = mix(perm, out[j], mask, shift);
            walking[still] = j;
            still += out[j] >= perm->n;
        }
        left = still;
    }
}

void brs_permutation_fill(const struct brs_permutation *perm, uint64_t first, size_t count,
                          uint64_t *out)
{
    if (perm->identity || perm->bits < SMALL_BITS) {
        for (size_t j = 0; j < count; j++) out[j] = brs_permutation_apply(perm, first + j);
        return;
    }
    /* a local copy, which `out` cannot alias: the keys stay in registers */
    const struct brs_permutation local = *perm;
    uint64_t mask = UINT64_MAX >> (64 - local.bits);
    unsigned shift = (local.bits + 1) / 2;
    for (size_t j = 0; j < count; j += BLOCK)
        fill_block(&local, first + j, count - j < BLOCK ? count - j : BLOCK, out + j, mask, shift);
}
