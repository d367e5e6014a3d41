/* baselines.c - the fixed-size strategies the balanced planner is measured
 * against (BRS_STRATEGY_RANDOM, BRS_STRATEGY_LENGTH_GROUPED of brs.h).
 *
 * Both read an epoch order in fixed-size micro-batches: step t reads the
 * positions [t*B, t*B + n) of the order (a kept short last step topped up
 * to K by wrapping, as the balanced strategy does), and chunk c of the step,
 * [c*n/K, (c+1)*n/K), is the micro-batch of rank c % dp_size at micro-step
 * c / dp_size: consecutive batches go to the ranks in turn, as accelerate
 * shards a batch sampler. In a full step every chunk holds batch_size.
 *   - random reads the library's epoch permutation itself, so it draws the
 *     same samples per step as balanced: only the split differs.
 *   - length_grouped reads transformers' LengthGroupedSampler order: the
 *     permutation cut into megabatches of mult * batch_size * grad_accum
 *     (the batch the Trainer passes it), mult = min(N / (4 * that), 50) or
 *     1, each sorted longest first (ties in permutation order, as Python's
 *     stable sort), then the first sample of the megabatch with the longest
 *     head swapped with the very first so an OOM shows at once. That order
 *     needs O(N) work, so the plan caches it per (fingerprint, epoch).
 */
#include "planner/internal.h"
#include "draw/prng.h"
#include "draw/sort.h"

#include <stdlib.h>

void brs_baselines_slots(uint64_t *indices, size_t *slot_start, const uint64_t *drawn, size_t n,
                         size_t dp_size, size_t grad_accum)
{
    size_t k = dp_size * grad_accum;
    slot_start[0] = 0;
    /* First the size of each slot, then the prefix sums, then the copy. */
    for (size_t c = 0; c < k; c++) {
        size_t slot = (c % dp_size) * grad_accum + c / dp_size;
        slot_start[slot + 1] = (size_t)(((uint64_t)(c + 1) * n) / k - ((uint64_t)c * n) / k);
    }
    for (size_t s = 0; s < k; s++) slot_start[s + 1] += slot_start[s];
    for (size_t c = 0; c < k; c++) {
        size_t slot = (c % dp_size) * grad_accum + c / dp_size;
        size_t begin = (size_t)(((uint64_t)c * n) / k), end = (size_t)(((uint64_t)(c + 1) * n) / k);
        for (size_t p = begin; p < end; p++) indices[slot_start[slot] + (p - begin)] = drawn[p];
    }
}

/* transformers: mult = min(N // (4 * batch), 50), or 1 when that is 0. */
size_t brs_baselines_megabatch(size_t n, size_t batch)
{
    size_t mult = n / (4 * batch);
    if (mult > 50) mult = 50;
    if (mult == 0) mult = 1;
    return mult * batch < n ? mult * batch : n;
}

void brs_grouped_order_free(struct brs_grouped_order *cache)
{
    free(cache->order);
    free(cache->scratch);
    cache->order = NULL;
    cache->scratch = NULL;
    cache->valid = 0;
}

/* Sorts order[0..count) longest first, stably. The megabatch's lengths go
 * to `length` and its indices to `copy`; scratch is 2 * count. */
static void sort_megabatch(uint64_t *order, size_t count, const uint32_t *lengths, uint32_t *length,
                           uint64_t *scratch, uint64_t *copy)
{
    for (size_t i = 0; i < count; i++) {
        length[i] = lengths[order[i]];
        copy[i] = order[i];
    }
    brs_sort_by_length_desc(order, NULL, length, copy, count, scratch);
}

static brs_status build_grouped_order(struct brs_grouped_order *cache,
                                      const struct brs_grouped_source *s, uint64_t epoch)
{
    size_t n = s->count, size = s->megabatch;
    uint64_t *order = realloc(cache->order, n * sizeof *order);
    if (!order) return BRS_ERR_NO_MEMORY;
    cache->order = order;
    /* scratch: 2*size words for the sort, size for the copy, and size
     * uint32 lengths (half a word each, rounded up). */
    uint64_t *scratch = realloc(cache->scratch, (3 * size + (size + 1) / 2) * sizeof *scratch);
    if (!scratch) return BRS_ERR_NO_MEMORY;
    cache->scratch = scratch;
    uint64_t *copy = scratch + 2 * size;
    uint32_t *length = (uint32_t *)(scratch + 3 * size);

    struct brs_permutation perm;
    brs_permutation_init(&perm, n, s->seed, epoch, s->shuffle);
    brs_permutation_fill(&perm, 0, n, order);
    size_t longest_head = 0;
    for (size_t start = 0; start < n; start += size) {
        size_t count = n - start < size ? n - start : size;
        sort_megabatch(order + start, count, s->lengths, length, scratch, copy);
        if (s->lengths[order[start]] > s->lengths[order[longest_head]]) longest_head = start;
    }
    uint64_t first = order[0];
    order[0] = order[longest_head];
    order[longest_head] = first;
    return BRS_OK;
}

brs_status brs_grouped_order_get(const uint64_t **order, struct brs_grouped_order *cache,
                                 const struct brs_grouped_source *source, uint64_t epoch)
{
    if (!(cache->valid && cache->fingerprint == source->fingerprint && cache->epoch == epoch)) {
        cache->valid = 0;
        brs_status status = build_grouped_order(cache, source, epoch);
        if (status != BRS_OK) return status;
        cache->valid = 1;
        cache->fingerprint = source->fingerprint;
        cache->epoch = epoch;
    }
    *order = cache->order;
    return BRS_OK;
}
