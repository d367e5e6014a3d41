/* layering.c - the sorted step cut into grad_accum contiguous layers, one
 * per micro-step, each split into dp_size groups (docs/algorithm.md, step 5,
 * "the layers" and "every layering"). Under per-micro-step sync a layered
 * plan takes the sum over layers of the layer's min-max; long samples share
 * a layer, so only one micro-step pays for them. What the two layered
 * candidates share: the weights summed run by run, a layer's time
 * estimated and exact, and the groups of each layer, which take the least
 * memory peak that keeps the layer's time, then the least total cost
 * (brs_layering_one): with one layer (grad_accum 1) that is the exact
 * lexicographic optimum, and the planner's whole answer. `model` carries
 * the memory budget as its token cap. */
#include "planner/internal.h"
#include "util/wide.h"

#include <stdlib.h>

/* The step position where the run of `rank` starts among these samples. */
static size_t run_start(const struct brs_layering *l, uint32_t rank)
{
    size_t start = rank > 0 ? l->cache.run_end[rank - 1] : 0;
    return start > l->cache.first ? start : l->cache.first;
}

/* The weight before each run, from the first sample's run on: O(distinct
 * lengths) instead of a prefix sum per sample, which is what it is without
 * runs. */
static void sum_weights(struct brs_layering *l)
{
    l->before[0] = 0;
    if (!l->cache.rank) {
        for (size_t i = 0; i < l->n; i++)
            l->before[i + 1] = l->before[i] + brs_sample_weight(l->model, l->lengths[i]);
        return;
    }
    uint32_t first = l->cache.rank[0], last = l->cache.rank[l->n - 1];
    size_t end = l->cache.first + l->n;
    for (uint32_t r = first; r <= last; r++) {
        size_t start = run_start(l, r),
               stop = l->cache.run_end[r] < end ? l->cache.run_end[r] : end;
        brs_wide w = brs_sample_weight(l->model, l->lengths[start - l->cache.first]);
        l->before[r - first + 1] = l->before[r - first] + (brs_wide)(stop - start) * w;
    }
}

/* The weight of the i longest samples. */
static brs_wide weight_before(const struct brs_layering *l, size_t i)
{
    if (!l->cache.rank) return l->before[i];
    uint32_t first = l->cache.rank[0];
    if (i == l->n) return l->before[brs_probe_cache_runs(l->cache, l->n)];
    uint32_t r = l->cache.rank[i];
    size_t within = l->cache.first + i - run_start(l, r);
    return l->before[r - first] + (brs_wide)within * brs_sample_weight(l->model, l->lengths[i]);
}

brs_wide brs_layering_estimate(const struct brs_layering *l, size_t a, size_t b)
{
    if (b <= a || b - a < l->ranks) return BRS_LAYERING_NO_TIME;
    brs_wide average =
        brs_average_group_cost(l->model, l->ranks, weight_before(l, b) - weight_before(l, a));
    brs_wide head = l->model->intercept + brs_sample_weight(l->model, l->lengths[a]);
    return average > head ? average : head;
}

brs_wide brs_layering_time(const struct brs_layering *l, size_t a, size_t b)
{
    size_t size = b - a;
    if (b <= a || size < l->ranks) return BRS_LAYERING_NO_TIME;
    if (l->model->max_tokens &&
        brs_search_groups_for_cap(l->lengths + a, size, l->model) > l->ranks)
        return BRS_LAYERING_NO_TIME;
    return brs_search_min_max(l->lengths + a, brs_probe_cache_at(l->cache, a), size, l->ranks,
                              l->model, brs_layering_estimate(l, a, b));
}

brs_status brs_layering_one(size_t *starts, brs_wide *costs, const uint32_t *lengths,
                            struct brs_probe_cache cache, size_t n, size_t ranks,
                            const struct brs_cost_model *model, brs_wide time)
{
    struct brs_cost_model held = *model;
    held.max_tokens = brs_search_least_peak(lengths, cache, n, ranks, model, time);
    struct brs_split part = {starts, NULL, costs, 0, 0, 0, 0, 0};
    return brs_least_total_split(&part, lengths, n, ranks, &held, time);
}

/* Layer m's `ranks` groups into starts/costs (absolute positions). */
static brs_status build_layer(const struct brs_layering *l, size_t m, size_t *starts,
                              brs_wide *costs)
{
    size_t a = l->cut[m];
    brs_status status =
        brs_layering_one(starts, costs, l->lengths + a, brs_probe_cache_at(l->cache, a),
                         l->cut[m + 1] - a, l->ranks, l->model, l->time[m]);
    for (size_t r = 0; r < l->ranks && status == BRS_OK; r++) starts[r] += a;
    return status;
}

brs_status brs_layering_open(struct brs_layering *l, const uint32_t *lengths,
                             struct brs_probe_cache cache, const struct brs_step *step,
                             const struct brs_cost_model *model)
{
    size_t n = step->n, grad_accum = step->grad_accum;
    size_t entries = (cache.rank ? brs_probe_cache_runs(cache, n) : n) + 1;
    *l = (struct brs_layering){lengths,
                               cache,
                               n,
                               step->dp_size,
                               grad_accum,
                               model,
                               malloc((grad_accum + 1) * sizeof *l->cut),
                               malloc(grad_accum * sizeof *l->time),
                               malloc(entries * sizeof *l->before)};
    if (!l->cut || !l->time || !l->before) return BRS_ERR_NO_MEMORY;
    sum_weights(l);
    l->cut[grad_accum] = n;
    return BRS_OK;
}

void brs_layering_close(struct brs_layering *l)
{
    free(l->cut);
    free(l->time);
    free(l->before);
}

brs_status brs_layering_build(const struct brs_layering *l, size_t *starts, brs_wide *costs)
{
    brs_status status = BRS_OK;
    for (size_t m = 0; m < l->count && status == BRS_OK; m++)
        status = build_layer(l, m, starts + m * l->ranks, costs + m * l->ranks);
    starts[l->count * l->ranks] = l->n;
    return status;
}
