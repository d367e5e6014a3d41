/* split_heuristic.c - k groups of cost <= T when the exact second objective
 * is too large to search: the greedy groups from the short end (which the
 * search, refine.c, hands back), the costliest split in halves until there
 * are k; and the least-total split that falls back on it. */
#include "planner/cost_model.h"
#include "planner/refine.h"
#include "planner/split_heuristic.h"
#include "util/cost_sort.h"
#include "util/wide.h"

#include <stdlib.h>

/* The groups while they are split: group g is [begin[g], begin[g] + size[g]),
 * and next[g] the group after it (the groups in position order, from 0). */
struct groups {
    size_t *begin, *size;
    uint32_t *next;
    brs_wide *costs;
    size_t count;
};

/* A group that can still be split, with its cost and the cost of its first
 * half (the costlier one: as many samples or more, and the longer head). */
struct splittable {
    brs_wide cost, half;
    uint32_t id;
};

/* Room for the batches' sort (cost_sort.c), k ids each. */
struct batch_sort {
    uint32_t *ids, *scratch;
    uint64_t *keys; /* 2k */
};

/* Appends group id to the pool if it has two samples or more. */
static void add_splittable(struct splittable *pool, size_t *size, const struct groups *g,
                           uint32_t id, const uint32_t *lengths, const struct brs_cost_model *model)
{
    if (g->size[id] < 2) return;
    brs_wide half = brs_group_cost(model, lengths[g->begin[id]], (g->size[id] + 1) / 2);
    pool[(*size)++] = (struct splittable){g->costs[id], half, id};
}

/* Splits group id in halves: the first keeps the id, the second is a new
 * group right after it. */
static uint32_t split_group(struct groups *g, uint32_t id, const uint32_t *lengths,
                            const struct brs_cost_model *model)
{
    uint32_t added = (uint32_t)g->count++;
    size_t first = (g->size[id] + 1) / 2;
    g->begin[added] = g->begin[id] + first;
    g->size[added] = g->size[id] - first;
    g->size[id] = first;
    g->next[added] = g->next[id];
    g->next[id] = added;
    g->costs[id] = brs_group_cost(model, lengths[g->begin[id]], g->size[id]);
    g->costs[added] = brs_group_cost(model, lengths[g->begin[added]], g->size[added]);
    return added;
}

/* Split the costliest splittable group in halves until there are k groups:
 * every split lowers cost where it is highest, which is what the other
 * ranks wait for. n >= k guarantees a splittable group remains.
 *
 * A heap would split one group at a time. The splits come in batches
 * instead: no half is costlier than `limit`, the costliest half in the
 * pool, so the groups above it are split before any half and in the
 * heap's order, costliest first and ties by id (brs_cost_sort_ids); the same
 * splits, with the same new ids, as one at a time. */
static void split_costliest(struct groups *g, struct splittable *pool, struct splittable *next,
                            const struct batch_sort *sort, const uint32_t *lengths, size_t k,
                            const struct brs_cost_model *model)
{
    size_t size = 0;
    for (size_t id = 0; id < g->count; id++)
        add_splittable(pool, &size, g, (uint32_t)id, lengths, model);
    while (g->count < k) {
        brs_wide limit = 0;
        for (size_t i = 0; i < size; i++)
            if (pool[i].half > limit) limit = pool[i].half;
        size_t batch = 0, kept = 0;
        for (size_t i = 0; i < size; i++) {
            if (pool[i].cost > limit)
                sort->ids[batch++] = pool[i].id;
            else
                next[kept++] = pool[i];
        }
        brs_cost_sort_ids(sort->ids, batch, k, g->costs, sort->scratch, sort->keys);
        for (size_t i = 0; i < batch && g->count < k; i++) {
            uint32_t id = sort->ids[i], added = split_group(g, id, lengths, model);
            add_splittable(next, &kept, g, id, lengths, model);
            add_splittable(next, &kept, g, added, lengths, model);
        }
        struct splittable *swap = pool;
        pool = next;
        next = swap;
        size = kept;
    }
}

/* The groups left to right into split->starts and split->costs. */
static void write_in_position_order(struct brs_split *split, const struct groups *g, size_t n,
                                    brs_wide *costs_in_order)
{
    size_t out = 0;
    for (uint32_t id = 0; out < g->count; id = g->next[id]) {
        split->starts[out] = g->begin[id];
        costs_in_order[out++] = g->costs[id];
    }
    split->starts[out] = n;
    for (size_t i = 0; i < out; i++) split->costs[i] = costs_in_order[i];
}

brs_status brs_split_heuristic_to_k(struct brs_split *split, const uint32_t *lengths, size_t n,
                                    size_t groups, size_t k, const struct brs_cost_model *model)
{
    struct groups g = {malloc(k * sizeof(size_t)), malloc(k * sizeof(size_t)),
                       malloc(k * sizeof(uint32_t)), split->costs, groups};
    struct splittable *pool = malloc(2 * k * sizeof *pool);
    struct batch_sort sort = {malloc(2 * k * sizeof(uint32_t)), NULL,
                              malloc(2 * k * sizeof(uint64_t))};
    brs_wide *costs_in_order = malloc(k * sizeof *costs_in_order);
    brs_status status = BRS_ERR_NO_MEMORY;
    if (g.begin && g.size && g.next && pool && sort.ids && sort.keys && costs_in_order) {
        sort.scratch = sort.ids + k;
        for (size_t id = 0; id < groups; id++) {
            g.begin[id] = split->starts[id];
            g.size[id] = split->starts[id + 1] - split->starts[id];
            g.next[id] = (uint32_t)id + 1;
            g.costs[id] = brs_group_cost(model, lengths[g.begin[id]], g.size[id]);
        }
        split_costliest(&g, pool, pool + k, &sort, lengths, k, model);
        write_in_position_order(split, &g, n, costs_in_order);
        status = BRS_OK;
    }
    free(g.begin);
    free(g.size);
    free(g.next);
    free(pool);
    free(sort.ids);
    free(sort.keys);
    free(costs_in_order);
    return status;
}

brs_status brs_split_heuristic_least_total(struct brs_split *split, const uint32_t *lengths,
                                           size_t n, size_t k, const struct brs_cost_model *model,
                                           brs_wide limit)
{
    size_t groups;
    brs_status status =
        brs_refine_least_total(split, lengths, n, k, model, limit,
                               BRS_REFINE_CELLS_PER_SAMPLE * n + BRS_REFINE_CELLS_BASE, &groups);
    if (status != BRS_ERR_TOO_LARGE) return status;
    return brs_split_heuristic_to_k(split, lengths, n, groups, k, model);
}
