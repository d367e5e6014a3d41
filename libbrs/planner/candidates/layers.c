/* layers.c - a candidate split for the synchronised step: the sorted step
 * cut into grad_accum contiguous layers, one per micro-step, each split into
 * dp_size groups at its own exact min-max (docs/algorithm.md, step 5, "the
 * layers"; what a layering is: planner/layering.c).
 *
 * The cuts come from a dynamic programme over a grid of at most GRID + 1
 * cut positions with a cheap estimate of each layer's time (its average and
 * its longest sample), then a descent on the exact layer times moving one
 * cut at a time by 1, 2, 4, ... 64 samples, then a push: each layer grows
 * as far as its own time allows, which only shrinks the layers after it.
 */
#include "planner/candidates/candidate.h"
#include "planner/internal.h"
#include "util/wide.h"

#include <stdlib.h>

enum { GRID = 64, DESCENT_ROUNDS = 1, DESCENT_MAX_GROUPS = 1024, DESCENT_REACH = 64 };

/* best[m][i]: the least estimated time of m layers covering the first
 * grid[i] samples; from[m][i] the grid point where the m-th layer starts. */
static brs_status grid_cuts(struct brs_layering *l)
{
    size_t points = l->n < GRID ? l->n : GRID, g = l->count;
    size_t *grid = malloc((points + 1) * sizeof *grid);
    brs_wide *best = malloc((g + 1) * (points + 1) * sizeof *best);
    uint32_t *from = malloc((g + 1) * (points + 1) * sizeof *from);
    brs_status status = grid && best && from ? BRS_OK : BRS_ERR_NO_MEMORY;
    if (status == BRS_OK) {
        for (size_t i = 0; i <= points; i++) grid[i] = i * l->n / points;
        for (size_t i = 0; i <= points; i++) best[i] = i == 0 ? 0 : BRS_LAYERING_NO_TIME;
        for (size_t m = 1; m <= g; m++) {
            brs_wide *row = best + m * (points + 1), *prev = row - (points + 1);
            for (size_t i = 0; i <= points; i++) {
                row[i] = BRS_LAYERING_NO_TIME;
                from[m * (points + 1) + i] = 0;
                for (size_t h = 0; h < i; h++) {
                    brs_wide e = brs_layering_estimate(l, grid[h], grid[i]);
                    if (prev[h] == BRS_LAYERING_NO_TIME || e == BRS_LAYERING_NO_TIME ||
                        prev[h] + e >= row[i])
                        continue;
                    row[i] = prev[h] + e;
                    from[m * (points + 1) + i] = (uint32_t)h;
                }
            }
        }
        if (best[g * (points + 1) + points] == BRS_LAYERING_NO_TIME)
            status = BRS_ERR_INVALID_ARGUMENT;
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

static brs_wide sum_of_times(const struct brs_layering *l)
{
    brs_wide sum = 0;
    for (size_t m = 0; m < l->count; m++) {
        if (l->time[m] == BRS_LAYERING_NO_TIME) return BRS_LAYERING_NO_TIME;
        sum += l->time[m];
    }
    return sum;
}

/* Moves cut m (between layers m - 1 and m) by growing steps either way and
 * keeps the move that lowers the two layers' time the most. */
static void descend_cut(struct brs_layering *l, size_t m)
{
    size_t a = l->cut[m - 1], here = l->cut[m], b = l->cut[m + 1];
    brs_wide now = l->time[m - 1] == BRS_LAYERING_NO_TIME || l->time[m] == BRS_LAYERING_NO_TIME
                       ? BRS_LAYERING_NO_TIME
                       : l->time[m - 1] + l->time[m];
    size_t best_cut = here;
    brs_wide best_left = l->time[m - 1], best_right = l->time[m];
    for (int side = -1; side <= 1; side += 2) {
        for (size_t step = 1; step < b - a && step <= DESCENT_REACH; step *= 2) {
            if (side < 0 ? here < a + step : here + step >= b) break;
            size_t c = side < 0 ? here - step : here + step;
            brs_wide left = brs_layering_time(l, a, c), right = brs_layering_time(l, c, b);
            if (left == BRS_LAYERING_NO_TIME || right == BRS_LAYERING_NO_TIME) continue;
            if (now == BRS_LAYERING_NO_TIME || left + right < now) {
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
static void push(struct brs_layering *l)
{
    for (size_t m = 0; m + 1 < l->count; m++) {
        if (l->time[m] == BRS_LAYERING_NO_TIME) return;
        size_t pos = l->cut[m], after = l->ranks * (l->count - m - 1);
        for (size_t r = 0; r < l->ranks; r++)
            pos += brs_search_greedy_group(l->lengths, l->n, pos, after + l->ranks - 1 - r,
                                           l->model, l->time[m]);
        if (pos > l->cut[m + 1]) {
            l->cut[m + 1] = pos;
            l->time[m + 1] = brs_layering_time(l, l->cut[m + 1], l->cut[m + 2]);
        }
    }
}

static void refine_cuts(struct brs_layering *l)
{
    for (size_t m = 0; m < l->count; m++)
        l->time[m] = brs_layering_time(l, l->cut[m], l->cut[m + 1]);
    /* the descent's layer times cost O(ranks) probes each: skipped for very wide steps */
    int rounds = l->ranks * l->count > DESCENT_MAX_GROUPS ? 0 : DESCENT_ROUNDS;
    for (int round = 0; round < rounds; round++)
        for (size_t m = 1; m < l->count; m++) descend_cut(l, m);
    push(l);
}

/* With one rank a layer is a single group: the layers cannot help. */
static int applies(const struct brs_candidate_input *in)
{
    return in->step->dp_size > 1;
}

/* The layers under the model's cap; BRS_ERR_INVALID_ARGUMENT when no
 * layering fits it. */
static brs_status build(const struct brs_candidate_input *in, struct brs_candidate_output *out)
{
    struct brs_layering l;
    brs_status status = brs_layering_open(&l, in->lengths, in->cache, in->step, in->model);
    if (status == BRS_OK) status = grid_cuts(&l);
    if (status == BRS_OK) {
        refine_cuts(&l);
        if (sum_of_times(&l) == BRS_LAYERING_NO_TIME) status = BRS_ERR_INVALID_ARGUMENT;
    }
    if (status == BRS_OK) status = brs_layering_build(&l, out->starts, out->costs);
    brs_layering_close(&l);
    return status;
}

const struct brs_candidate brs_layers_candidate = {"layers, one per micro-step", applies, build,
                                                   BRS_CANDIDATE_POLISHED};
