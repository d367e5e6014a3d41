/* padding.c - the padded length of a micro-batch (planner/planner.h, "The padding"):
 * pad_to_multiple_of, length buckets, and the default ladder of buckets. */
#include "planner/internal.h"

static uint64_t round_up(uint64_t length, uint64_t multiple)
{
    return (length + multiple - 1) / multiple * multiple;
}

/* The first bucket >= length, by bisection; bucket_count when none is. */
static size_t bucket_at_least(const struct brs_padding *padding, uint64_t length)
{
    size_t low = 0, high = padding->bucket_count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (padding->buckets[middle] >= length)
            high = middle;
        else
            low = middle + 1;
    }
    return low;
}

uint64_t brs_padding_apply(const struct brs_padding *padding, uint64_t length)
{
    uint64_t rounded = round_up(length, padding->multiple);
    if (padding->bucket_count == 0) return rounded;
    size_t b = bucket_at_least(padding, rounded);
    return b < padding->bucket_count ? padding->buckets[b] : 0;
}

/* The largest length whose padded length is at most `top`. */
static uint64_t limit_below(const struct brs_padding *padding, uint64_t top)
{
    if (padding->bucket_count > 0) {
        /* pad(L) <= bucket b exactly when L rounded up is <= b */
        uint32_t last = padding->buckets[padding->bucket_count - 1];
        size_t b = top >= last ? padding->bucket_count : bucket_at_least(padding, top + 1);
        if (b == 0) return 0;
        top = padding->buckets[b - 1];
    }
    return top / padding->multiple * padding->multiple;
}

uint64_t brs_padding_limit(const struct brs_padding *padding, uint64_t cap)
{
    /* A padded sample length must still be a 32-bit length for the planner. */
    return limit_below(padding, cap != 0 && cap < UINT32_MAX ? cap : UINT32_MAX);
}

uint64_t brs_padding_row_limit(const struct brs_padding *padding, uint64_t cap)
{
    return limit_below(padding, cap != 0 ? cap : UINT64_MAX);
}

void brs_padding_apply_all(uint32_t *out, const uint32_t *lengths, size_t n,
                           const struct brs_padding *padding)
{
    for (size_t i = 0; i < n; i++) out[i] = (uint32_t)brs_padding_apply(padding, lengths[i]);
}

size_t brs_padding_ladder(uint32_t *out, size_t capacity, uint32_t shortest, uint32_t longest,
                          uint32_t steps, uint64_t multiple)
{
    uint64_t octave = 1;
    while (octave * 2 <= shortest) octave *= 2;
    size_t count = 0;
    uint64_t last = 0;
    for (; last < longest; octave *= 2) {
        /* octave * (1 + i / steps), exact: the spacing halves below steps */
        for (uint32_t i = 0; i < steps && last < longest; i++) {
            uint64_t rung = round_up(octave + octave * i / steps, multiple);
            if (rung <= last || rung > UINT32_MAX) continue;
            if (count < capacity) out[count] = (uint32_t)rung;
            count++;
            last = rung;
        }
        if (octave > UINT32_MAX) break;
    }
    return count;
}
