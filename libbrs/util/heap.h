/* util/heap.h - the binary heap of ids by wide keys (heap.c). Internal, not installed. */
#ifndef BRS_UTIL_HEAP_H
#define BRS_UTIL_HEAP_H

#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* heap.c: ids ordered by keys[id] (largest first if max_first, else
 * smallest), ties by id. Each entry keeps a copy of its id's key, so a sift
 * reads the keys it compares side by side; `entries` holds the capacity.
 * After changing the top's key in keys[], call brs_heap_update_top. */
struct brs_heap_entry {
    brs_wide key;
    uint32_t id;
};
struct brs_heap {
    struct brs_heap_entry *entries;
    size_t size;
    const brs_wide *keys;
    int max_first;
};
static inline uint32_t brs_heap_top(const struct brs_heap *h)
{
    return h->entries[0].id;
}
/* The heap of ids 0..count-1, whose keys are already in heap order (sorted,
 * or all equal). */
void brs_heap_fill_in_order(struct brs_heap *h, size_t count);
void brs_heap_push(struct brs_heap *h, uint32_t id);
void brs_heap_pop(struct brs_heap *h);
void brs_heap_update_top(struct brs_heap *h);
/* `id` takes the top's place (the top leaves the heap). */
void brs_heap_replace_top(struct brs_heap *h, uint32_t id);

#endif
