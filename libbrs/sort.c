/* sort.c - order a step's samples by length, longest first, in O(n):
 * an LSD radix sort on (max - length), stable, so ties keep draw order. */
#include "internal.h"

#include <string.h>

enum { SMALL_SORT = 32 };

static void insertion_sort(uint32_t *order, const uint32_t *lengths, size_t n)
{
    for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
    for (size_t i = 1; i < n; i++) {
        uint32_t item = order[i];
        size_t j = i;
        while (j > 0 && lengths[order[j - 1]] < lengths[item]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = item;
    }
}

static unsigned bit_width(uint32_t value)
{
    unsigned bits = 0;
    while (bits < 32 && (value >> bits) != 0) bits++;
    return bits;
}

/* One counting pass on the digit at `shift`; keys hold the sort key in the
 * high 32 bits and the position in the low 32 bits. */
static void radix_pass(uint64_t *to, const uint64_t *from, size_t n, unsigned shift,
                       unsigned digit_bits)
{
    size_t counts[1u << 11];
    size_t buckets = (size_t)1 << digit_bits;
    uint64_t mask = buckets - 1;
    memset(counts, 0, buckets * sizeof counts[0]);
    for (size_t i = 0; i < n; i++) counts[(from[i] >> shift) & mask]++;
    size_t sum = 0;
    for (size_t b = 0; b < buckets; b++) {
        size_t c = counts[b];
        counts[b] = sum;
        sum += c;
    }
    for (size_t i = 0; i < n; i++) to[counts[(from[i] >> shift) & mask]++] = from[i];
}

/* A counting sort on (longest - length) when its range is small: two passes
 * over the samples, stable. counts must hold `range` entries. */
static void counting_sort(uint32_t *order, const uint32_t *lengths, size_t n, uint32_t longest,
                          size_t range, size_t *counts)
{
    memset(counts, 0, range * sizeof *counts);
    for (size_t i = 0; i < n; i++) counts[longest - lengths[i]]++;
    size_t sum = 0;
    for (size_t b = 0; b < range; b++) {
        size_t c = counts[b];
        counts[b] = sum;
        sum += c;
    }
    for (size_t i = 0; i < n; i++) order[counts[longest - lengths[i]]++] = (uint32_t)i;
}

void brs_sort_by_length_desc(uint32_t *order, const uint32_t *lengths, size_t n,
                             uint64_t *scratch)
{
    if (n <= SMALL_SORT) {
        insertion_sort(order, lengths, n);
        return;
    }
    uint32_t longest = 0, shortest = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        if (lengths[i] > longest) longest = lengths[i];
        if (lengths[i] < shortest) shortest = lengths[i];
    }
    size_t range = (size_t)(longest - shortest) + 1;
    if (range <= 2 * n) { /* the scratch (2n words) holds the counts */
        counting_sort(order, lengths, n, longest, range, (size_t *)scratch);
        return;
    }
    uint64_t *keys = scratch, *other = scratch + n;
    for (size_t i = 0; i < n; i++)
        keys[i] = ((uint64_t)(longest - lengths[i]) << 32) | (uint64_t)i;
    /* Digits of 8 bits keep the histogram small for small steps. */
    unsigned digit_bits = n < 4096 ? 8 : 11;
    unsigned key_bits = bit_width(longest - shortest);
    for (unsigned shift = 0; shift < key_bits; shift += digit_bits) {
        radix_pass(other, keys, n, 32 + shift, digit_bits);
        uint64_t *swap = keys;
        keys = other;
        other = swap;
    }
    for (size_t i = 0; i < n; i++) order[i] = (uint32_t)keys[i];
}
