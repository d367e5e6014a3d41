/* layered.c - a candidate split for the synchronised step: the sorted step
 * cut into grad_accum contiguous layers, one per micro-step, each split into
 * dp_size groups at its own exact min-max (docs/algorithm.md, step 5, "the layers").
 *
 * Under per-micro-step sync a layered plan takes sum over layers of the
 * layer's min-max; long samples share a layer, so only one micro-step pays
 * for them. The cuts come from a dynamic programme over a grid of at most
 * GRID + 1 cut positions with a cheap estimate of each layer's time (its
 * average and its longest sample), then a descent on the exact layer times
 * moving one cut at a time by 1, 2, 4, ... 64 samples, then a push: each layer grows as far as its own
 * time allows, which only shrinks the layers after it. Inside each layer the
 * groups take the least memory peak that keeps the layer's time, then the
 * least total cost (brs_plan_layer): with one layer (grad_accum 1) that is
 * the exact lexicographic optimum, and the planner's whole answer.
 * `model` carries the memory budget as its token cap.
 */
#include "internal.h"

#include <stdlib.h>

#define NO_TIME (~(brs_wide)0)

enum { GRID = 64, DESCENT_ROUNDS = 1, DESCENT_MAX_GROUPS = 1024, DESCENT_REACH = 64 };

struct layers {
    const uint32_t *lengths;
    struct brs_probe_cache cache;
    size_t n, ranks, count; /* count: the number of layers */
    const struct brs_cost_model *model;
    size_t *cut;     /* count + 1: layer m is [cut[m], cut[m + 1]) */
    brs_wide *time;  /* count: exact min-max of each layer */
    brs_wide *before;       /* the weight before each run (by rank from the first
                             * sample's), or without runs before each sample */
};

/* ---- sample weights, summed run by run ------------------------------------ */

/* The step position where the run of `rank` starts among these samples. */
static size_t run_start(const struct layers *l, uint32_t rank)
{
    size_t start = rank > 0 ? l->cache.run_end[rank - 1] : 0;
    return start > l->cache.first ? start : l->cache.first;
}

/* The weight before each run, from the first sample's run on: O(distinct
 * lengths) instead of a prefix sum per sample, which is what it is without
 * runs. */
static void sum_weights(struct layers *l)
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
        size_t start = run_start(l, r), stop = l->cache.run_end[r] < end ? l->cache.run_end[r] : end;
        brs_wide w = brs_sample_weight(l->model, l->lengths[start - l->cache.first]);
        l->before[r - first + 1] = l->before[r - first] + (brs_wide)(stop - start) * w;
    }
}

/* The weight of the i longest samples. */
static brs_wide weight_before(const struct layers *l, size_t i)
{
    if (!l->cache.rank) return l->before[i];
    uint32_t first = l->cache.rank[0];
    if (i == l->n) return l->before[brs_probe_cache_runs(l->cache, l->n)];
    uint32_t r = l->cache.rank[i];
    size_t within = l->cache.first + i - run_start(l, r);
    return l->before[r - first] + (brs_wide)within * brs_sample_weight(l->model, l->lengths[i]);
}

/* A layer's time estimated from below: its average group and its longest
 * sample alone. */
static brs_wide estimate(const struct layers *l, size_t a, size_t b)
{
    if (b <= a || b - a < l->ranks) return NO_TIME;
    brs_wide average = (weight_before(l, b) - weight_before(l, a) + l->ranks - 1) / l->ranks;
    brs_wide head = brs_sample_weight(l->model, l->lengths[a]);
    return l->model->intercept + (average > head ? average : head);
}

/* The exact min-max of [a, b) into `ranks` groups under the cap; NO_TIME
 * when the layer cannot hold them. */
static brs_wide layer_time(const struct layers *l, size_t a, size_t b)
{
    size_t size = b - a;
    if (b <= a || size < l->ranks) return NO_TIME;
    if (l->model->max_tokens && brs_groups_for_cap(l->lengths + a, size, l->model) > l->ranks)
        return NO_TIME;
    return brs_min_max_threshold(l->lengths + a, brs_probe_cache_at(l->cache, a), size, l->ranks,
                                 l->model, estimate(l, a, b));
}

/* ---- the estimate and the dynamic programme over grid cuts ---------------- */

/* best[m][i]: the least estimated time of m layers covering the first
 * grid[i] samples; from[m][i] the grid point where the m-th layer starts. */
static brs_status grid_cuts(struct layers *l)
{
    size_t points = l->n < GRID ? l->n : GRID, g = l->count;
    size_t *grid = malloc((points + 1) * sizeof *grid);
    brs_wide *best = malloc((g + 1) * (points + 1) * sizeof *best);
    uint32_t *from = malloc((g + 1) * (points + 1) * sizeof *from);
    brs_status status = grid && best && from ? BRS_OK : BRS_ERR_NO_MEMORY;
    if (status == BRS_OK) {
        for (size_t i = 0; i <= points; i++) grid[i] = i * l->n / points;
        for (size_t i = 0; i <= points; i++) best[i] = i == 0 ? 0 : NO_TIME;
        for (size_t m = 1; m <= g; m++) {
            brs_wide *row = best + m * (points + 1), *prev = row - (points + 1);
            for (size_t i = 0; i <= points; i++) {
                row[i] = NO_TIME;
                from[m * (points + 1) + i] = 0;
                for (size_t h = 0; h < i; h++) {
                    brs_wide e = estimate(l, grid[h], grid[i]);
                    if (prev[h] == NO_TIME || e == NO_TIME || prev[h] + e >= row[i]) continue;
                    row[i] = prev[h] + e;
                    from[m * (points + 1) + i] = (uint32_t)h;
                }
            }
        }
        if (best[g * (points + 1) + points] == NO_TIME) status = BRS_ERR_INVALID_ARGUMENT;
        size_t i = points;
        for (size_t m = g; m > 0 && status == BRS_OK; m--) {
            l->cut[m] = grid[i];
            i = from[m * (points + 1) + i];
        }
        l->cut[0] = 0;
    }
    free(grid);
    free(best);
    free(from);
    return status;
}

/* ---- exact refinement of the cuts ----------------------------------------- */

static brs_wide sum_of_times(const struct layers *l)
{
    brs_wide sum = 0;
    for (size_t m = 0; m < l->count; m++) {
        if (l->time[m] == NO_TIME) return NO_TIME;
        sum += l->time[m];
    }
    return sum;
}

/* Moves cut m (between layers m - 1 and m) by growing steps either way and
 * keeps the move that lowers the two layers' time the most. */
static void descend_cut(struct layers *l, size_t m)
{
    size_t a = l->cut[m - 1], here = l->cut[m], b = l->cut[m + 1];
    brs_wide now = l->time[m - 1] == NO_TIME || l->time[m] == NO_TIME
                       ? NO_TIME
                       : l->time[m - 1] + l->time[m];
    size_t best_cut = here;
    brs_wide best_left = l->time[m - 1], best_right = l->time[m];
    for (int side = -1; side <= 1; side += 2) {
        for (size_t step = 1; step < b - a && step <= DESCENT_REACH; step *= 2) {
            if (side < 0 ? here < a + step : here + step >= b) break;
            size_t c = side < 0 ? here - step : here + step;
            brs_wide left = layer_time(l, a, c), right = layer_time(l, c, b);
            if (left == NO_TIME || right == NO_TIME) continue;
            if (now == NO_TIME || left + right < now) {
                now = left + right;
                best_cut = c;
                best_left = left;
                best_right = right;
            }
        }
    }
    l->cut[m] = best_cut;
    l->time[m - 1] = best_left;
    l->time[m] = best_right;
}

/* Each layer in turn as far as its time allows (greedy groups at it),
 * leaving a sample for every group after it; the next layer only shrinks. */
static void push(struct layers *l)
{
    for (size_t m = 0; m + 1 < l->count; m++) {
        if (l->time[m] == NO_TIME) return;
        size_t pos = l->cut[m], after = l->ranks * (l->count - m - 1);
        for (size_t r = 0; r < l->ranks; r++)
            pos += brs_greedy_group(l->lengths, l->n, pos, after + l->ranks - 1 - r, l->model,
                                    l->time[m]);
        if (pos > l->cut[m + 1]) {
            l->cut[m + 1] = pos;
            l->time[m + 1] = layer_time(l, l->cut[m + 1], l->cut[m + 2]);
        }
    }
}

static void refine_cuts(struct layers *l)
{
    for (size_t m = 0; m < l->count; m++) l->time[m] = layer_time(l, l->cut[m], l->cut[m + 1]);
    /* the descent's layer times cost O(ranks) probes each: skipped for very wide steps */
    int rounds = l->ranks * l->count > DESCENT_MAX_GROUPS ? 0 : DESCENT_ROUNDS;
    for (int round = 0; round < rounds; round++)
        for (size_t m = 1; m < l->count; m++) descend_cut(l, m);
    push(l);
}

/* ---- the groups of one layer ---------------------------------------------- */

brs_status brs_plan_layer(size_t *starts, brs_wide *costs, const uint32_t *lengths,
                          struct brs_probe_cache cache, size_t n, size_t ranks,
                          const struct brs_cost_model *model, brs_wide time)
{
    struct brs_cost_model held = *model;
    held.max_tokens = brs_least_peak(lengths, cache, n, ranks, model, time);
    struct brs_split part = {starts, NULL, costs, 0, 0, 0, 0, 0};
    return brs_least_total_split(&part, lengths, n, ranks, &held, time);
}

/* Layer m's `ranks` groups into starts/costs (absolute positions). */
static brs_status build_layer(const struct layers *l, size_t m, size_t *starts, brs_wide *costs)
{
    size_t a = l->cut[m];
    brs_status status = brs_plan_layer(starts, costs, l->lengths + a, brs_probe_cache_at(l->cache, a),
                                       l->cut[m + 1] - a, l->ranks, l->model, l->time[m]);
    for (size_t r = 0; r < l->ranks && status == BRS_OK; r++) starts[r] += a;
    return status;
}

brs_status brs_plan_layered(size_t *starts, brs_wide *costs, const uint32_t *lengths,
                            struct brs_probe_cache cache, size_t n, size_t dp_size,
                            size_t grad_accum, const struct brs_cost_model *model)
{
    size_t *cut = malloc((grad_accum + 1) * sizeof *cut);
    brs_wide *time = malloc(grad_accum * sizeof *time);
    size_t entries = (cache.rank ? brs_probe_cache_runs(cache, n) : n) + 1;
    brs_wide *before = malloc(entries * sizeof *before);
    brs_status status = cut && time && before ? BRS_OK : BRS_ERR_NO_MEMORY;
    struct layers l = {lengths, cache, n, dp_size, grad_accum, model, cut, time, before};
    if (status == BRS_OK) {
        sum_weights(&l);
        cut[grad_accum] = n;
        status = grid_cuts(&l);
    }
    if (status == BRS_OK) {
        refine_cuts(&l);
        if (sum_of_times(&l) == NO_TIME) status = BRS_ERR_INVALID_ARGUMENT;
    }
    for (size_t m = 0; m < grad_accum && status == BRS_OK; m++)
        status = build_layer(&l, m, starts + m * dp_size, costs + m * dp_size);
    starts[grad_accum * dp_size] = n;
    free(cut);
    free(time);
    free(before);
    return status;
}
