/* heap.c - a heap of ids keyed by 128-bit costs, for packed mode: LPT's
 * groups (lightest first) and Karmarkar-Karp's tuples (largest spread
 * first). Ties go to the smaller id, so plans do not depend on the heap's
 * history, nor on its shape: any heap pops the same sequence.
 *
 * It is 4-ary, and each entry keeps a copy of its key: a sift compares
 * children that sit side by side in one or two cache lines, on half the
 * levels of a binary heap, instead of reading each child's key through its
 * id. Each operation is written once and instantiated per direction,
 * `max_first` a constant in each. */
#include "util/heap.h"
#include "util/wide.h"

enum { ARITY = 4 };

/* Whether entry a comes before entry b. */
static BRS_ALWAYS_INLINE int before(const struct brs_heap_entry *a, const struct brs_heap_entry *b,
                                    int max_first)
{
    if (a->key == b->key) return a->id < b->id;
    return max_first ? a->key > b->key : a->key < b->key;
}

/* The best child moves up into the hole all the way down to a leaf, then
 * the sifted entry rises back to its place on that path (Floyd's sift): a
 * sifted top usually belongs near the bottom, and on the way down this
 * compares the children only, not each with it. */
static BRS_ALWAYS_INLINE void sift_down(struct brs_heap *h, size_t i, int max_first)
{
    struct brs_heap_entry moving = h->entries[i];
    size_t top = i;
    for (size_t child = ARITY * i + 1; child < h->size; child = ARITY * i + 1) {
        size_t best = child, end = h->size - child < ARITY ? h->size : child + ARITY;
        for (size_t c = child + 1; c < end; c++)
            if (before(&h->entries[c], &h->entries[best], max_first)) best = c;
        h->entries[i] = h->entries[best];
        i = best;
    }
    while (i > top) {
        size_t parent = (i - 1) / ARITY;
        if (!before(&moving, &h->entries[parent], max_first)) break;
        h->entries[i] = h->entries[parent];
        i = parent;
    }
    h->entries[i] = moving;
}

static BRS_ALWAYS_INLINE void sift_up(struct brs_heap *h, size_t i, int max_first)
{
    struct brs_heap_entry moving = h->entries[i];
    while (i > 0) {
        size_t parent = (i - 1) / ARITY;
        if (!before(&moving, &h->entries[parent], max_first)) break;
        h->entries[i] = h->entries[parent];
        i = parent;
    }
    h->entries[i] = moving;
}

static void sift_top(struct brs_heap *h)
{
    if (h->max_first)
        sift_down(h, 0, 1);
    else
        sift_down(h, 0, 0);
}

void brs_heap_fill_in_order(struct brs_heap *h, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        h->entries[i].key = h->keys[i];
        h->entries[i].id = (uint32_t)i;
    }
    h->size = count;
}

void brs_heap_push(struct brs_heap *h, uint32_t id)
{
    size_t i = h->size++;
    h->entries[i].key = h->keys[id];
    h->entries[i].id = id;
    if (h->max_first)
        sift_up(h, i, 1);
    else
        sift_up(h, i, 0);
}

void brs_heap_pop(struct brs_heap *h)
{
    h->entries[0] = h->entries[--h->size];
    sift_top(h);
}

void brs_heap_update_top(struct brs_heap *h)
{
    h->entries[0].key = h->keys[h->entries[0].id];
    sift_top(h);
}

void brs_heap_replace_top(struct brs_heap *h, uint32_t id)
{
    h->entries[0].key = h->keys[id];
    h->entries[0].id = id;
    sift_top(h);
}
