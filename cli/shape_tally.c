/* shape_tally.c - the distinct shapes each rank runs over the steps a
 * command planned (shape_tally.h). */
#include "shape_tally.h"

#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "sampler.h"

static void push(shape_tally *tally, uint64_t rank, uint64_t size, uint64_t padded)
{
    if (tally->count + 3 > tally->capacity) {
        size_t capacity = tally->capacity ? 2 * tally->capacity : 3 * 1024;
        uint64_t *grown = realloc(tally->entries, capacity * sizeof *grown);
        if (grown == NULL) cli_failure("out of memory counting shapes");
        tally->entries = grown;
        tally->capacity = capacity;
    }
    uint64_t *entry = &tally->entries[tally->count];
    entry[0] = rank;
    entry[1] = size;
    entry[2] = padded;
    tally->count += 3;
}

void shape_tally_add_plan(shape_tally *tally, const brs_plan *plan)
{
    int64_t dp_size = planning_get_int(plan, BRS_PLAN_DP_SIZE);
    int64_t grad_accum = planning_get_int(plan, BRS_PLAN_GRAD_ACCUM);
    for (int64_t rank = 0; rank < dp_size; rank++)
        for (int64_t micro = 0; micro < grad_accum; micro++) {
            micro_batch mb = planning_micro_batch(plan, rank, micro);
            push(tally, (uint64_t)rank, mb.count, mb.padded_tokens);
        }
}

static int compare_triples(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    for (int i = 0; i < 3; i++)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return 0;
}

uint64_t shape_tally_finish(shape_tally *tally)
{
    size_t n = tally->count / 3;
    if (n == 0) return 0; /* nothing planned (a cap brs cannot keep): no entries to sort */
    qsort(tally->entries, n, 3 * sizeof(uint64_t), compare_triples);
    uint64_t most = 0, current = 0;
    for (size_t i = 0; i < n; i++) {
        const uint64_t *entry = &tally->entries[3 * i], *previous = entry - 3;
        if (i > 0 && previous[0] != entry[0]) current = 0;
        if (i == 0 || compare_triples(previous, entry) != 0) current++;
        if (current > most) most = current;
    }
    free(tally->entries);
    *tally = (shape_tally){0};
    return most;
}
