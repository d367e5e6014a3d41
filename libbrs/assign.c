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
            while (a < mid && b < hi) to[out++] = costs[from[b]] > costs[from[a]] ? from[b++] : from[a++];
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

void brs_assign_snake(uint32_t *slot_of, uint32_t *order, const brs_wide *costs, size_t k,
                      size_t dp_size)
{
    /* slot_of doubles as the merge scratch before it is filled. */
    sort_by_cost_desc(order, slot_of, costs, k);
    size_t grad_accum = k / dp_size;
    for (size_t p = 0; p < k; p++) {
        size_t micro = p / dp_size, within = p % dp_size;
        size_t rank = (micro % 2 == 0) ? within : dp_size - 1 - within;
        slot_of[order[p]] = (uint32_t)(rank * grad_accum + micro);
    }
}

void brs_sync_times(brs_wide *micro_sync, brs_wide *step_sync, const brs_wide *costs, size_t k,
                    size_t dp_size, uint32_t *scratch)
{
    uint32_t *order = scratch, *merge = scratch + k;
    sort_by_cost_desc(order, merge, costs, k);
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
