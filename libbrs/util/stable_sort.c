/* stable_sort.c - ids sorted by a comparator, stably, in O(n log n) whatever the input: a
 * bottom-up merge sort, which takes from the right run only where its head goes strictly before
 * the left's, so equal ids keep their order. The planners that order samples by a cost they
 * compute (two_part.c, context_parallel.c) share it. */
#include "util/stable_sort.h"

#include <string.h>

void brs_stable_sort_ids(uint32_t *ids, uint32_t *scratch, size_t n, brs_before_fn before,
                         const void *context)
{
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n,
                   hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t x = lo, y = mid, o = lo;
            while (x < mid && y < hi)
                scratch[o++] = before(context, ids[y], ids[x]) ? ids[y++] : ids[x++];
            while (x < mid) scratch[o++] = ids[x++];
            while (y < hi) scratch[o++] = ids[y++];
        }
        memcpy(ids, scratch, n * sizeof *ids);
    }
}
