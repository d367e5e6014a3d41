/* util/cost_sort.h - ids sorted by wide costs (cost_sort.c). Internal, not installed. */
#ifndef BRS_UTIL_COST_SORT_H
#define BRS_UTIL_COST_SORT_H

#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* cost_sort.c: ids[0..count) (distinct, each below id_bound) reordered by
 * costs[id] descending, ties by the smaller id. scratch holds count
 * uint32_t, keys 2 * count uint64_t. */
void brs_cost_sort_ids(uint32_t *ids, size_t count, size_t id_bound, const brs_wide *costs,
                       uint32_t *scratch, uint64_t *keys);
/* The same order after the costs of two ids a != b changed, in O(count):
 * sorted (in the order above for the old costs) is copied to out with a and
 * b merged in at their new places. */
void brs_cost_sort_moved(uint32_t *out, const uint32_t *sorted, size_t count, const brs_wide *costs,
                         uint32_t a, uint32_t b);

#endif
