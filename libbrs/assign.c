/* assign.c - deal the k groups to (rank, micro-step) slots: sorted by cost,
 * micro-step m takes the m-th block of dp_size groups, alternating the
 * direction (snake), so per-micro-step maxima and per-rank sums stay even. */
#include "internal.h"

/* Stable bottom-up merge sort of group ids by cost, descending; starting
 * from ids in order makes ties fall by id. (qsort takes no context, and
 * libbrs keeps no global state.) */
static void sort_by_cost_desc(uint32_t *order, uint32_t *scratch, const brs_wide *costs,
                              size_t k)
{
    for (size_t i = 0; i < k; i++) order[i] = (uint32_t)i;
    uint32_t *from = order, *to = scratch;
    for (size_t width = 1; width < k; width *= 2) {
        for (size_t lo = 0; lo < k; lo += 2 * width) {
            size_t mid = lo + width < k ? lo + width : k;
            size_t hi = lo + 2 * width < k ? lo + 2 * width : k;
            size_t a = lo, b = mid, out = lo;
            while (a < mid && b < hi)
                to[out++] = costs[from[b]] > costs[from[a]] ? from[b++] : from[a++];
            while (a < mid) to[out++] = from[a++];
            while (b < hi) to[out++] = from[b++];
        }
        uint32_t *t = from;
        from = to;
        to = t;
    }
    if (from != order)
        for (size_t i = 0; i < k; i++) order[i] = from[i];
}

/* The snake deal of groups in `order` (by cost, descending): micro-step m
 * takes positions [m * dp_size, (m + 1) * dp_size), even m to ranks 0..R-1,
 * odd m back from R-1. */
static size_t rank_at(size_t position, size_t dp_size)
{
    size_t micro = position / dp_size, within = position % dp_size;
    return (micro % 2 == 0) ? within : dp_size - 1 - within;
}

/* Both synchronised step times of the deal: the first group of each block is
 * its slowest; each rank sums one group per block. */
static void sync_times_of_order(brs_wide *micro_sync, brs_wide *step_sync, const brs_wide *costs,
                                const uint32_t *order, size_t k, size_t dp_size)
{
    size_t grad_accum = k / dp_size;
    *micro_sync = 0;
    for (size_t m = 0; m < grad_accum; m++) *micro_sync += costs[order[m * dp_size]];
    *step_sync = 0;
    for (size_t r = 0; r < dp_size; r++) {
        brs_wide sum = 0;
        for (size_t m = 0; m < grad_accum; m++) {
            size_t within = (m % 2 == 0) ? r : dp_size - 1 - r;
            sum += costs[order[m * dp_size + within]];
        }
        if (sum > *step_sync) *step_sync = sum;
    }
}

void brs_assign_snake(uint32_t *slot_of, uint32_t *order, brs_wide *micro_sync,
                      brs_wide *step_sync, const brs_wide *costs, size_t k, size_t dp_size)
{
    /* slot_of doubles as the merge scratch before it is filled. */
    sort_by_cost_desc(order, slot_of, costs, k);
    size_t grad_accum = k / dp_size;
    for (size_t p = 0; p < k; p++)
        slot_of[order[p]] = (uint32_t)(rank_at(p, dp_size) * grad_accum + p / dp_size);
    sync_times_of_order(micro_sync, step_sync, costs, order, k, dp_size);
}

void brs_sync_times(brs_wide *micro_sync, brs_wide *step_sync, const brs_wide *costs, size_t k,
                    size_t dp_size, uint32_t *scratch)
{
    sort_by_cost_desc(scratch, scratch + k, costs, k);
    sync_times_of_order(micro_sync, step_sync, costs, scratch, k, dp_size);
}
