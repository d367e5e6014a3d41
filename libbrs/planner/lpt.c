/* lpt.c - packed mode's first plan: longest sample first, each to the least
 * loaded group that has room under the token cap (LPT). Where it misses a
 * packing under the cap, first-fit decreasing and then (small steps) an
 * exact search try (bin_packing.c) before the cap is reported infeasible. */
#include "planner/lpt.h"
#include "planner/bin_packing.h"
#include "planner/cost_model.h"
#include "util/heap.h"
#include "util/wide.h"

#include <stdlib.h>

/* Place sample i in the least loaded group with room; groups without room
 * are set aside (in `full`) and put back after. Returns 0 if none has room. */
static int place(struct brs_heap *h, brs_wide *loads, uint64_t *tokens, uint32_t *full,
                 uint32_t *group_of, size_t i, uint32_t length, brs_wide weight, uint64_t cap)
{
    size_t set_aside = 0;
    int placed = 0;
    while (h->size > 0) {
        uint32_t g = brs_heap_top(h);
        if (cap == 0 || tokens[g] + length <= cap) {
            loads[g] += weight;
            tokens[g] += length;
            group_of[i] = g;
            brs_heap_update_top(h);
            placed = 1;
            break;
        }
        full[set_aside++] = g;
        brs_heap_pop(h);
    }
    for (size_t j = 0; j < set_aside; j++) brs_heap_push(h, full[j]);
    return placed;
}

brs_status brs_lpt_split(struct brs_split *split, const uint32_t *lengths, size_t n, size_t k,
                         const struct brs_cost_model *model, uint32_t *scratch)
{
    uint64_t cap = model->max_tokens;
    brs_wide *loads = split->costs;
    uint64_t *tokens = calloc(k, sizeof *tokens);
    struct brs_heap h = {malloc(k * sizeof *h.entries), 0, loads, 0};
    if (!tokens || !h.entries) {
        free(tokens);
        free(h.entries);
        return BRS_ERR_NO_MEMORY;
    }
    uint32_t *full = scratch;
    /* All loads start equal, so ids in order already form a heap. */
    for (size_t g = 0; g < k; g++) loads[g] = model->intercept;
    brs_heap_fill_in_order(&h, k);
    int packed = 1;
    for (size_t i = 0; packed && i < n; i++)
        packed = place(&h, loads, tokens, full, split->group_of, i, lengths[i],
                       brs_sample_weight(model, lengths[i]), cap);
    free(tokens);
    free(h.entries);
    if (packed) return BRS_OK;
    if (!brs_bin_packing_first_fit(split->group_of, lengths, n, k, cap)) {
        int found = brs_bin_packing_search(split->group_of, lengths, n, k, cap);
        if (found != 1) {
            split->needed =
                found == 0 ? brs_bin_packing_fewest_groups(split->group_of, lengths, n, k, cap) : 0;
            return BRS_ERR_CAP_INFEASIBLE;
        }
    }
    for (size_t g = 0; g < k; g++) loads[g] = model->intercept;
    for (size_t i = 0; i < n; i++)
        loads[split->group_of[i]] += brs_sample_weight(model, lengths[i]);
    return BRS_OK;
}
