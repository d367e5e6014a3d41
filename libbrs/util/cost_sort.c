/* cost_sort.c - group ids in the order the planner ranks groups: costliest
 * first, ties by the smaller id. The deal (assign.c) sorts every group of a
 * split, the split heuristic (least_total.c) each batch it halves. */
#include "util/cost_sort.h"
#include "util/wide.h"

#include <string.h>

/* From this many ids on, costs are radix sorted where (top - cost) and the
 * id fit one 64-bit key together. */
enum { RADIX_IDS = 256, DIGIT_BITS = 11, BUCKETS = 1 << DIGIT_BITS };

static unsigned bits_of(uint64_t value)
{
    unsigned bits = 0;
    while (bits < 64 && (value >> bits) != 0) bits++;
    return bits;
}

/* The LSD radix sort on (top - cost): each key is that above the id, so
 * the passes read keys in sequence instead of costs by id. Ids given in
 * ascending order need only the cost bits sorted (the passes are stable);
 * others have the id bits sorted too. keys holds 2 * count words. Returns
 * 0 (ids untouched) when a key does not fit. */
static int radix_sort(uint32_t *ids, size_t count, size_t id_bound, const brs_wide *costs,
                      uint64_t *keys)
{
    brs_wide top = costs[ids[0]], bottom = top;
    int ascending = 1;
    for (size_t i = 1; i < count; i++) {
        brs_wide c = costs[ids[i]];
        if (c > top) top = c;
        if (c < bottom) bottom = c;
        ascending &= ids[i] > ids[i - 1];
    }
    unsigned id_bits = bits_of(id_bound - 1);
    if (id_bits == 0 || (top - bottom) >> (64 - id_bits)) return 0;
    unsigned low = ascending ? id_bits : 0;
    unsigned sorted_bits = bits_of((uint64_t)(top - bottom)) + id_bits - low;
    unsigned digits = sorted_bits == 0 ? 1 : (sorted_bits + DIGIT_BITS - 1) / DIGIT_BITS;
    unsigned digit_bits = sorted_bits == 0 ? 1 : (sorted_bits + digits - 1) / digits;
    uint64_t mask = ((uint64_t)1 << digit_bits) - 1;
    uint32_t counts[64 / DIGIT_BITS + 1][BUCKETS]; /* only the used buckets are cleared */
    for (unsigned d = 0; d < digits; d++) memset(counts[d], 0, (mask + 1) * sizeof counts[d][0]);
    uint64_t *from = keys, *to = keys + count;
    for (size_t i = 0; i < count; i++) {
        uint64_t key = (uint64_t)(top - costs[ids[i]]) << id_bits | ids[i];
        from[i] = key;
        for (unsigned d = 0; d < digits; d++) counts[d][(key >> (low + d * digit_bits)) & mask]++;
    }
    for (unsigned d = 0; d < digits; d++)
        for (uint32_t b = 0, sum = 0; b <= mask; b++) {
            uint32_t c = counts[d][b];
            counts[d][b] = sum;
            sum += c;
        }
    for (unsigned d = 0; d + 1 < digits; d++) {
        unsigned shift = low + d * digit_bits;
        for (size_t i = 0; i < count; i++) to[counts[d][(from[i] >> shift) & mask]++] = from[i];
        uint64_t *t = from;
        from = to;
        to = t;
    }
    unsigned shift = low + (digits - 1) * digit_bits;
    uint64_t id_mask = ((uint64_t)1 << id_bits) - 1;
    uint32_t *last = counts[digits - 1];
    for (size_t i = 0; i < count; i++)
        ids[last[(from[i] >> shift) & mask]++] = (uint32_t)(from[i] & id_mask);
    return 1;
}

/* Whether id a ranks before id b. */
static int ranks_before(const brs_wide *costs, uint32_t a, uint32_t b)
{
    return costs[a] != costs[b] ? costs[a] > costs[b] : a < b;
}

/* Bottom-up merge sort (qsort takes no context, and libbrs keeps no global
 * state). */
static void merge_sort(uint32_t *ids, size_t count, const brs_wide *costs, uint32_t *scratch)
{
    uint32_t *from = ids, *to = scratch;
    for (size_t width = 1; width < count; width *= 2) {
        for (size_t lo = 0; lo < count; lo += 2 * width) {
            size_t mid = lo + width < count ? lo + width : count;
            size_t hi = lo + 2 * width < count ? lo + 2 * width : count;
            size_t a = lo, b = mid, out = lo;
            while (a < mid && b < hi)
                to[out++] = ranks_before(costs, from[b], from[a]) ? from[b++] : from[a++];
            while (a < mid) to[out++] = from[a++];
            while (b < hi) to[out++] = from[b++];
        }
        uint32_t *t = from;
        from = to;
        to = t;
    }
    if (from != ids)
        for (size_t i = 0; i < count; i++) ids[i] = from[i];
}

/* id inserted into ids[0..count) (ids has room for one more), in order. */
static void insert_ranked(uint32_t *ids, size_t count, const brs_wide *costs, uint32_t id)
{
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ranks_before(costs, ids[mid], id))
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(ids + lo + 1, ids + lo, (count - lo) * sizeof *ids);
    ids[lo] = id;
}

void brs_cost_sort_moved(uint32_t *out, const uint32_t *sorted, size_t count, const brs_wide *costs,
                         uint32_t a, uint32_t b)
{
    /* the others keep their order: copied around a and b, which are then
     * placed by binary search */
    size_t kept = 0;
    for (size_t i = 0, from = 0; i <= count; i++) {
        if (i < count && sorted[i] != a && sorted[i] != b) continue;
        memcpy(out + kept, sorted + from, (i - from) * sizeof *out);
        kept += i - from;
        from = i + 1;
    }
    insert_ranked(out, kept, costs, a);
    insert_ranked(out, kept + 1, costs, b);
}

void brs_cost_sort_ids(uint32_t *ids, size_t count, size_t id_bound, const brs_wide *costs,
                       uint32_t *scratch, uint64_t *keys)
{
    if (count >= RADIX_IDS && radix_sort(ids, count, id_bound, costs, keys)) return;
    merge_sort(ids, count, costs, scratch);
}
