/* heap.c - a binary heap of group ids keyed by 128-bit costs, shared by the
 * split heuristic (costliest first) and packed mode (lightest first). Ties
 * go to the smaller id, so plans do not depend on the heap's history. */
#include "internal.h"

/* Whether id a (key ka) comes before id b (key kb). */
static int ranks_before(const struct brs_heap *h, brs_wide ka, uint32_t a, brs_wide kb, uint32_t b)
{
    if (ka == kb) return a < b;
    return h->max_first ? ka > kb : ka < kb;
}

static int before(const struct brs_heap *h, uint32_t a, uint32_t b)
{
    return ranks_before(h, h->keys[a], a, h->keys[b], b);
}

static void swap_ids(struct brs_heap *h, size_t i, size_t j)
{
    uint32_t t = h->ids[i];
    h->ids[i] = h->ids[j];
    h->ids[j] = t;
}

/* The better child moves up into the hole until the sifted id goes there:
 * the same heap as swapping it down level by level (the order is total), with
 * half the writes and its key read once. */
void brs_heap_sift_down(struct brs_heap *h, size_t i)
{
    uint32_t moving = h->ids[i];
    const brs_wide key = h->keys[moving];
    for (size_t child = 2 * i + 1; child < h->size; child = 2 * i + 1) {
        if (child + 1 < h->size && before(h, h->ids[child + 1], h->ids[child])) child++;
        uint32_t up = h->ids[child];
        if (!ranks_before(h, h->keys[up], up, key, moving)) break;
        h->ids[i] = up;
        i = child;
    }
    h->ids[i] = moving;
}

void brs_heap_push(struct brs_heap *h, uint32_t id)
{
    size_t i = h->size++;
    h->ids[i] = id;
    while (i > 0 && before(h, h->ids[i], h->ids[(i - 1) / 2])) {
        swap_ids(h, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

void brs_heap_pop(struct brs_heap *h)
{
    h->ids[0] = h->ids[--h->size];
    brs_heap_sift_down(h, 0);
}
