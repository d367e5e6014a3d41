/* baselines.c - fixed-size random and length-grouped micro-batches. */
#include "baselines.h"

#include <stdlib.h>

#include "memory.h"
#include "shuffle.h"

size_t baseline_megabatch_size(size_t n, const step_shape *shape)
{
    size_t batch = (size_t)(shape->batch_size * shape->grad_accum);
    size_t mult = n / (4 * batch);
    if (mult > 50)
        mult = 50;
    if (mult == 0)
        mult = 1;
    return mult * batch;
}

void baseline_random_order(size_t *order, size_t n, uint64_t seed, uint64_t epoch, int shuffle)
{
    shuffle_order(order, n, seed, epoch, shuffle);
}

typedef struct sort_entry {
    uint32_t length;
    size_t position; /* in the shuffled order: ties keep it, as Python's stable sort */
    size_t index;
} sort_entry;

static int longest_first(const void *a, const void *b)
{
    const sort_entry *x = a, *y = b;
    if (x->length != y->length)
        return x->length > y->length ? -1 : 1;
    return (x->position > y->position) - (x->position < y->position);
}

static void sort_longest_first(size_t *group, size_t count, const uint32_t *lengths,
                               sort_entry *scratch)
{
    for (size_t i = 0; i < count; i++)
        scratch[i] = (sort_entry){lengths[group[i]], i, group[i]};
    qsort(scratch, count, sizeof *scratch, longest_first);
    for (size_t i = 0; i < count; i++)
        group[i] = scratch[i].index;
}

void baseline_length_grouped_order(size_t *order, const uint32_t *lengths, size_t n,
                                   const step_shape *shape, uint64_t seed, uint64_t epoch,
                                   int shuffle)
{
    shuffle_order(order, n, seed, epoch, shuffle);
    size_t size = baseline_megabatch_size(n, shape);
    sort_entry *scratch = cli_calloc(size < n ? size : n, sizeof *scratch);
    size_t longest_head = 0; /* start of the megabatch with the longest first sample */
    for (size_t start = 0; start < n; start += size) {
        size_t count = n - start < size ? n - start : size;
        sort_longest_first(order + start, count, lengths, scratch);
        if (lengths[order[start]] > lengths[order[longest_head]])
            longest_head = start;
    }
    size_t first = order[0];
    order[0] = order[longest_head];
    order[longest_head] = first;
    free(scratch);
}

void baseline_step(micro_batch_stats *slots, const size_t *order, const uint32_t *lengths,
                   size_t n, const step_shape *shape, uint64_t step, const cost_model *model)
{
    uint64_t k = (uint64_t)(shape->dp_size * shape->grad_accum);
    uint64_t full = (uint64_t)shape->batch_size * k;
    uint64_t start = step * full;
    uint64_t samples = n - start < full ? n - start : full;
    if (samples < k)
        samples = k; /* the top-up of a short last step */
    /* Chunk c holds positions [c*samples/K, (c+1)*samples/K): exactly P each
     * in a full step, sizes within one of each other in a kept last step. */
    size_t *chunk = cli_calloc((size_t)(samples / k + 1), sizeof *chunk);
    for (uint64_t c = 0; c < k; c++) {
        uint64_t begin = c * samples / k, end = (c + 1) * samples / k;
        for (uint64_t p = begin; p < end; p++)
            chunk[p - begin] = order[(start + p) % n];
        int64_t rank = (int64_t)c % shape->dp_size, micro = (int64_t)c / shape->dp_size;
        slots[rank * shape->grad_accum + micro] =
            cost_model_measure(model, lengths, chunk, (size_t)(end - begin));
    }
    free(chunk);
}
