/* heap.c - a binary heap of group ids keyed by 128-bit costs, shared by the
 * split heuristic (costliest first) and packed mode (lightest first). Ties
 * go to the smaller id, so plans do not depend on the heap's history. */
#include "internal.h"

static int before(const struct brs_heap *h, uint32_t a, uint32_t b)
{
    if (h->keys[a] == h->keys[b]) return a < b;
    return h->max_first ? h->keys[a] > h->keys[b] : h->keys[a] < h->keys[b];
}

static void swap_ids(struct brs_heap *h, size_t i, size_t j)
{
    uint32_t t = h->ids[i];
    h->ids[i] = h->ids[j];
    h->ids[j] = t;
}

void brs_heap_sift_down(struct brs_heap *h, size_t i)
{
    for (;;) {
        size_t best = i, l = 2 * i + 1, r = l + 1;
        if (l < h->size && before(h, h->ids[l], h->ids[best])) best = l;
        if (r < h->size && before(h, h->ids[r], h->ids[best])) best = r;
        if (best == i) return;
        swap_ids(h, i, best);
        i = best;
    }
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
