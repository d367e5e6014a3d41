/* draw/sort.h - the sort of a step by length (sort.c). Internal, not installed. */
#ifndef BRS_DRAW_SORT_H
#define BRS_DRAW_SORT_H

#include <stddef.h>
#include <stdint.h>

/* items[i] belongs to the sample of length lengths[i]; items_out gets the
 * items ordered by length descending, stable, and `sorted` (unless NULL)
 * the lengths in that order. items_out must not overlap items; scratch
 * must hold 2 * n uint64_t. */
void brs_sort_by_length_desc(uint64_t *items_out, uint32_t *sorted, const uint32_t *lengths,
                             const uint64_t *items, size_t n, uint64_t *scratch);

#endif
