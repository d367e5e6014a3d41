/* util/stable_sort.h - ids sorted by a caller's comparator, stably (stable_sort.c). Internal, not
 * installed. */
#ifndef BRS_UTIL_STABLE_SORT_H
#define BRS_UTIL_STABLE_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Whether id a goes strictly before id b in the caller's order. */
typedef int (*brs_before_fn)(const void *context, uint32_t a, uint32_t b);

/* stable_sort.c: ids[0..n) reordered by `before` (a bottom-up merge sort): ids that neither goes
 * before keep their order. scratch holds n ids. */
void brs_stable_sort_ids(uint32_t *ids, uint32_t *scratch, size_t n, brs_before_fn before,
                         const void *context);

#endif
