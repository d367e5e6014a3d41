/* shuffle.c - seeded Fisher-Yates for the baselines. */
#include "shuffle.h"

/* SplitMix64 (Steele, Lea and Flood): a tiny generator with good mixing. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Uniform in [0, bound) without modulo bias: reject the low values that
 * would make some residues more likely. */
static uint64_t below(uint64_t *state, uint64_t bound)
{
    uint64_t threshold = (0 - bound) % bound;
    for (;;) {
        uint64_t value = splitmix64(state);
        if (value >= threshold)
            return value % bound;
    }
}

void shuffle_order(size_t *order, size_t n, uint64_t seed, uint64_t epoch, int shuffle)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    if (!shuffle)
        return;
    /* Mix seed and epoch separately: seed + epoch would make (0, 1) and
     * (1, 0) draw the same order. */
    uint64_t seed_state = seed, epoch_state = epoch ^ 0xD1B54A32D192ED03u;
    uint64_t state = splitmix64(&seed_state) ^ splitmix64(&epoch_state);
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)below(&state, i);
        size_t kept = order[i - 1];
        order[i - 1] = order[j];
        order[j] = kept;
    }
}
