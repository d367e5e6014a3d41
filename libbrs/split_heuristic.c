/* split_heuristic.c - k groups of cost <= T when the exact second objective
 * is too large to search: the greedy groups from the short end (which the
 * search, refine.c, hands back), the costliest split in halves until there
 * are k; and the least-total split that falls back on it. */
#include "internal.h"

#include <stdlib.h>

/* The groups while they are split: group g is [begin[g], begin[g] + size[g]). */
struct groups {
    size_t *begin, *size;
    brs_wide *costs;
    size_t count;
};

static void push_if_splittable(struct brs_heap *h, const struct groups *g, uint32_t id)
{
    if (g->size[id] >= 2) brs_heap_push(h, id);
}

/* Split the costliest splittable group in halves until there are k groups:
 * every split lowers cost where it is highest, which is what the other
 * ranks wait for. n >= k guarantees a splittable group remains. */
static void split_costliest(struct groups *g, struct brs_heap *h, const uint32_t *lengths, size_t k,
                            const struct brs_cost_model *model)
{
    for (size_t id = 0; id < g->count; id++) push_if_splittable(h, g, (uint32_t)id);
    while (g->count < k) {
        uint32_t top = brs_heap_top(h), added = (uint32_t)g->count++;
        size_t first = (g->size[top] + 1) / 2;
        g->begin[added] = g->begin[top] + first;
        g->size[added] = g->size[top] - first;
        g->size[top] = first;
        g->costs[top] = brs_group_cost(model, lengths[g->begin[top]], g->size[top]);
        g->costs[added] = brs_group_cost(model, lengths[g->begin[added]], g->size[added]);
        if (g->size[top] < 2)
            brs_heap_pop(h);
        else
            brs_heap_update_top(h);
        push_if_splittable(h, g, added);
    }
}

/* Renumber the groups left to right into split->starts and split->costs. */
static void write_in_position_order(struct brs_split *split, const struct groups *g, size_t n,
                                    uint32_t *group_at, brs_wide *costs_in_order)
{
    for (size_t id = 0; id < g->count; id++) group_at[g->begin[id]] = (uint32_t)id;
    size_t out = 0;
    for (size_t pos = 0; pos < n; pos += g->size[group_at[pos]]) {
        split->starts[out] = pos;
        costs_in_order[out++] = g->costs[group_at[pos]];
    }
    split->starts[out] = n;
    for (size_t i = 0; i < out; i++) split->costs[i] = costs_in_order[i];
}

brs_status brs_split_to_k(struct brs_split *split, const uint32_t *lengths, size_t n,
                          size_t groups, size_t k, const struct brs_cost_model *model)
{
    struct groups g = {malloc(k * sizeof(size_t)), malloc(k * sizeof(size_t)), split->costs,
                       groups};
    struct brs_heap h = {malloc(k * sizeof(struct brs_heap_entry)), 0, split->costs, 1};
    uint32_t *group_at = malloc(n * sizeof *group_at);
    brs_wide *costs_in_order = malloc(k * sizeof *costs_in_order);
    brs_status status = BRS_ERR_NO_MEMORY;
    if (g.begin && g.size && h.entries && group_at && costs_in_order) {
        for (size_t id = 0; id < groups; id++) {
            g.begin[id] = split->starts[id];
            g.size[id] = split->starts[id + 1] - split->starts[id];
            g.costs[id] = brs_group_cost(model, lengths[g.begin[id]], g.size[id]);
        }
        split_costliest(&g, &h, lengths, k, model);
        write_in_position_order(split, &g, n, group_at, costs_in_order);
        status = BRS_OK;
    }
    free(g.begin);
    free(g.size);
    free(h.entries);
    free(group_at);
    free(costs_in_order);
    return status;
}

brs_status brs_least_total_split(struct brs_split *split, const uint32_t *lengths, size_t n,
                                 size_t k, const struct brs_cost_model *model, brs_wide limit)
{
    size_t groups;
    brs_status status =
        brs_refine_least_total(split, lengths, n, k, model, limit,
                               BRS_REFINE_CELLS_PER_SAMPLE * n + BRS_REFINE_CELLS_BASE, &groups);
    if (status != BRS_ERR_TOO_LARGE) return status;
    return brs_split_to_k(split, lengths, n, groups, k, model);
}
