/* sort.c - order a step's samples by length, longest first, in O(n):
 * an LSD radix sort on (max - length), stable, so ties keep draw order.
 * Each sample's item (its dataset index) travels with it, so what reads the
 * sorted step reads it in sequence. */
#include "draw/sort.h"

#include <string.h>

enum { SMALL_SORT = 32 };

static void insertion_sort(uint64_t *items_out, uint32_t *sorted, const uint32_t *lengths,
                           const uint64_t *items, size_t n)
{
    uint32_t order[SMALL_SORT];
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        while (j > 0 && lengths[order[j - 1]] < lengths[i]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = (uint32_t)i;
    }
    for (size_t i = 0; i < n; i++) {
        items_out[i] = items[order[i]];
        if (sorted) sorted[i] = lengths[order[i]];
    }
}

static unsigned bit_width(uint32_t value)
{
    unsigned bits = 0;
    while (bits < 32 && (value >> bits) != 0) bits++;
    return bits;
}

/* Histogram entries of every digit at once: 4 digits of 8 bits or 3 of 11
 * cover a 32-bit key. Counts fit 32 bits: a step holds at most
 * BRS_MAX_STEP_SAMPLES = 2^24 samples. */
enum { COUNTS = 3u << 11 };

/* Samples per length from which the counting sort writes the sorted
 * lengths bucket by bucket. */
enum { REPEATS = 8 };

/* Turns a digit's histogram into its buckets' start offsets. */
static void prefix_sums(uint32_t *counts, size_t buckets)
{
    uint32_t sum = 0;
    for (size_t b = 0; b < buckets; b++) {
        uint32_t c = counts[b];
        counts[b] = sum;
        sum += c;
    }
}

/* An LSD radix sort on (longest - length): one pass builds the keys (the
 * sort key in the high 32 bits, the position in the low 32) and every
 * digit's histogram at once, then one scatter pass per digit, the last one
 * writing the items straight into `items_out` (and the lengths into
 * `sorted`). */
static void radix_sort(uint64_t *items_out, uint32_t *sorted, const uint32_t *lengths,
                       const uint64_t *items, size_t n, uint32_t longest, unsigned key_bits,
                       uint64_t *scratch)
{
    /* As few passes as digits of up to 11 bits allow, each digit as narrow
     * as that count allows: the histograms' clearing and prefix sums cost
     * their width, which matters on small steps. */
    unsigned digits = key_bits == 0 ? 1 : (key_bits + 10) / 11;
    unsigned digit_bits = key_bits == 0 ? 1 : (key_bits + digits - 1) / digits;
    size_t buckets = (size_t)1 << digit_bits;
    uint64_t mask = buckets - 1;
    uint32_t counts[COUNTS];
    uint64_t *keys = scratch, *other = scratch + n;
    if (digits <= 2) {
        /* The common case (keys of up to 16 or 22 bits), written out: a
         * loop over the digits per sample costs more than the counting.
         * With one digit the second histogram is all in bucket 0, unused. */
        digits = digits < 2 ? 1 : 2;
        memset(counts, 0, 2 * buckets * sizeof counts[0]);
        for (size_t i = 0; i < n; i++) {
            uint32_t key = longest - lengths[i];
            keys[i] = ((uint64_t)key << 32) | (uint64_t)i;
            counts[key & mask]++;
            counts[buckets + ((key >> digit_bits) & mask)]++;
        }
    } else {
        memset(counts, 0, digits * buckets * sizeof counts[0]);
        for (size_t i = 0; i < n; i++) {
            uint32_t key = longest - lengths[i];
            keys[i] = ((uint64_t)key << 32) | (uint64_t)i;
            for (unsigned d = 0; d < digits; d++)
                counts[d * buckets + ((key >> (d * digit_bits)) & mask)]++;
        }
    }
    for (unsigned d = 0; d < digits; d++) prefix_sums(counts + d * buckets, buckets);
    for (unsigned d = 0; d + 1 < digits; d++) {
        unsigned shift = 32 + d * digit_bits;
        uint32_t *cursor = counts + d * buckets;
        for (size_t i = 0; i < n; i++) other[cursor[(keys[i] >> shift) & mask]++] = keys[i];
        uint64_t *swap = keys;
        keys = other;
        other = swap;
    }
    unsigned shift = 32 + (digits - 1) * digit_bits;
    uint32_t *last = counts + (digits - 1) * buckets;
    for (size_t i = 0; i < n; i++) {
        size_t at = last[(keys[i] >> shift) & mask]++;
        items_out[at] = items[(uint32_t)keys[i]];
        if (sorted) sorted[at] = longest - (uint32_t)(keys[i] >> 32);
    }
}

/* A counting sort on (longest - length) when its range is small: two passes
 * over the samples, stable. counts must hold `range` entries (32 bits
 * suffice, see COUNTS). Where lengths repeat many times, the sorted lengths
 * are the buckets' values in turn, written in sequence instead of among the
 * scattered items. */
static void counting_sort(uint64_t *items_out, uint32_t *sorted, const uint32_t *lengths,
                          const uint64_t *items, size_t n, uint32_t longest, size_t range,
                          uint32_t *counts)
{
    memset(counts, 0, range * sizeof *counts);
    for (size_t i = 0; i < n; i++) counts[longest - lengths[i]]++;
    int in_sequence = sorted && n >= REPEATS * range;
    if (in_sequence)
        for (size_t b = 0, at = 0; b < range; b++)
            for (uint32_t c = 0; c < counts[b]; c++) sorted[at++] = longest - (uint32_t)b;
    prefix_sums(counts, range);
    if (in_sequence || !sorted) {
        for (size_t i = 0; i < n; i++) items_out[counts[longest - lengths[i]]++] = items[i];
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t at = counts[longest - lengths[i]]++;
        items_out[at] = items[i];
        sorted[at] = lengths[i];
    }
}

void brs_sort_by_length_desc(uint64_t *items_out, uint32_t *sorted, const uint32_t *lengths,
                             const uint64_t *items, size_t n, uint64_t *scratch)
{
    if (n <= SMALL_SORT) {
        insertion_sort(items_out, sorted, lengths, items, n);
        return;
    }
    uint32_t longest = 0, shortest = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        if (lengths[i] > longest) longest = lengths[i];
        if (lengths[i] < shortest) shortest = lengths[i];
    }
    size_t range = (size_t)(longest - shortest) + 1;
    /* Up to a range of 4n the counting sort's pass over the range costs
     * less than a second radix pass; the scratch (2n 64-bit words) holds
     * 4n 32-bit counts. */
    if (range <= 4 * n) {
        counting_sort(items_out, sorted, lengths, items, n, longest, range,
                      (uint32_t *)(void *)scratch);
        return;
    }
    radix_sort(items_out, sorted, lengths, items, n, longest, bit_width(longest - shortest),
               scratch);
}
