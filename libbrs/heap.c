/* heap.c - a binary heap of group ids keyed by 128-bit costs, shared by the
 * split heuristic (costliest first) and packed mode (lightest first). Ties
 * go to the smaller id, so plans do not depend on the heap's history. Each
 * operation is written once and instantiated per direction, `max_first` a
 * constant in each. */
#include "internal.h"

/* Whether id a (key ka) comes before id b (key kb). */
static BRS_ALWAYS_INLINE int ranks_before(brs_wide ka, uint32_t a, brs_wide kb, uint32_t b,
                                          int max_first)
{
    if (ka == kb) return a < b;
    return max_first ? ka > kb : ka < kb;
}

/* The better child moves up into the hole all the way down to a leaf, then
 * the sifted id rises back to its place on that path (Floyd's sift): a
 * sifted top usually belongs near the bottom, and on the way down this
 * compares the children only, not each with it. The same heap as swapping
 * it down level by level (the order is total). */
static BRS_ALWAYS_INLINE void sift_down(struct brs_heap *h, size_t i, int max_first)
{
    uint32_t moving = h->ids[i];
    const brs_wide key = h->keys[moving];
    size_t top = i;
    for (size_t child = 2 * i + 1; child < h->size; child = 2 * i + 1) {
        if (child + 1 < h->size) {
            uint32_t left = h->ids[child], right = h->ids[child + 1];
            if (ranks_before(h->keys[right], right, h->keys[left], left, max_first)) child++;
        }
        h->ids[i] = h->ids[child];
        i = child;
    }
    while (i > top) {
        size_t parent = (i - 1) / 2;
        uint32_t up = h->ids[parent];
        if (!ranks_before(key, moving, h->keys[up], up, max_first)) break;
        h->ids[i] = up;
        i = parent;
    }
    h->ids[i] = moving;
}

/* The pushed id rises through a hole the same way. */
static BRS_ALWAYS_INLINE void sift_up(struct brs_heap *h, size_t i, int max_first)
{
    uint32_t moving = h->ids[i];
    const brs_wide key = h->keys[moving];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        uint32_t up = h->ids[parent];
        if (!ranks_before(key, moving, h->keys[up], up, max_first)) break;
        h->ids[i] = up;
        i = parent;
    }
    h->ids[i] = moving;
}

void brs_heap_sift_down(struct brs_heap *h, size_t i)
{
    if (h->max_first)
        sift_down(h, i, 1);
    else
        sift_down(h, i, 0);
}

void brs_heap_push(struct brs_heap *h, uint32_t id)
{
    size_t i = h->size++;
    h->ids[i] = id;
    if (h->max_first)
        sift_up(h, i, 1);
    else
        sift_up(h, i, 0);
}

void brs_heap_pop(struct brs_heap *h)
{
    h->ids[0] = h->ids[--h->size];
    brs_heap_sift_down(h, 0);
}
