/* objective.c - every formula of the objective and its bounds, written once
 * (docs/algorithm.md): the comparison of scores, the synchronised step times
 * of a deal, the padded peak, the bounds. The deal and the score of a split
 * (assign.c) are built on them, as are the plan's description and the
 * polish. */
#include "planner/internal.h"
#include "util/wide.h"

#include <stdlib.h>

brs_wide brs_objective_largest(const brs_wide *costs, size_t k)
{
    brs_wide largest = 0;
    for (size_t g = 0; g < k; g++)
        if (costs[g] > largest) largest = costs[g];
    return largest;
}

int brs_objective_better(const struct brs_score *a, const struct brs_score *b)
{
    if (a->time != b->time) return a->time < b->time;
    if (a->peak != b->peak) return a->peak < b->peak;
    return a->total < b->total;
}

brs_wide brs_objective_rank_time(const brs_wide *by_slot, size_t rank, size_t grad_accum)
{
    brs_wide sum = 0;
    for (size_t m = 0; m < grad_accum; m++) sum += by_slot[rank * grad_accum + m];
    return sum;
}

size_t brs_objective_slowest_rank(const brs_wide *by_slot, size_t dp_size, size_t grad_accum)
{
    size_t slow = 0;
    brs_wide worst = 0;
    for (size_t r = 0; r < dp_size; r++) {
        brs_wide sum = brs_objective_rank_time(by_slot, r, grad_accum);
        if (sum > worst) worst = sum, slow = r;
    }
    return slow;
}

void brs_objective_sync_times(brs_wide *micro_sync, brs_wide *step_sync, const brs_wide *by_slot,
                              size_t dp_size, size_t grad_accum)
{
    if (micro_sync) {
        *micro_sync = 0;
        for (size_t m = 0; m < grad_accum; m++) {
            brs_wide slowest = 0;
            for (size_t r = 0; r < dp_size; r++)
                if (by_slot[r * grad_accum + m] > slowest) slowest = by_slot[r * grad_accum + m];
            *micro_sync += slowest;
        }
    }
    if (step_sync)
        *step_sync = brs_objective_rank_time(
            by_slot, brs_objective_slowest_rank(by_slot, dp_size, grad_accum), grad_accum);
}

static uint64_t group_tokens(const size_t *starts, const uint32_t *lengths, size_t g)
{
    return (uint64_t)(starts[g + 1] - starts[g]) * lengths[starts[g]];
}

size_t brs_objective_peak_group(const size_t *starts, const uint32_t *lengths, size_t k)
{
    uint64_t peak = 0;
    size_t at = 0;
    for (size_t g = 0; g < k; g++) {
        uint64_t tokens = group_tokens(starts, lengths, g);
        if (tokens > peak) peak = tokens, at = g;
    }
    return at;
}

uint64_t brs_objective_padded_peak(const size_t *starts, const uint32_t *lengths, size_t k)
{
    return group_tokens(starts, lengths, brs_objective_peak_group(starts, lengths, k));
}

brs_wide brs_objective_time_floor(brs_wide largest, brs_wide total, size_t ranks)
{
    brs_wide share = (total + ranks - 1) / ranks;
    return share > largest ? share : largest;
}

brs_wide brs_objective_packed_bound(const uint32_t *lengths, size_t n, size_t k,
                                    const struct brs_cost_model *model, brs_wide *weight_sum)
{
    brs_wide sum = 0;
    for (size_t i = 0; i < n; i++) sum += brs_sample_weight(model, lengths[i]);
    *weight_sum = sum;
    brs_wide average = brs_average_group_cost(model, k, sum);
    brs_wide longest = brs_packed_cost(model, brs_sample_weight(model, lengths[0]));
    return average > longest ? average : longest;
}

brs_wide brs_objective_image_bound(const uint32_t *lengths, const struct brs_encoder_load *loads,
                                   size_t n, const struct brs_cost_model *model, brs_wide bound,
                                   brs_wide *weight_sum)
{
    for (size_t i = 0; i < n; i++) {
        brs_wide encoder = brs_encoder_cost(model, &loads[i]);
        brs_wide alone = brs_packed_cost(model, brs_sample_weight(model, lengths[i])) + encoder;
        *weight_sum += encoder;
        if (alone > bound) bound = alone;
    }
    return bound;
}

/* The least total cost of any k-split within the cap where its search is
 * cheap, else k intercepts plus every sample's own weight (each sample pays
 * at least that). */
static brs_wide least_total(const uint32_t *lengths, size_t n, size_t k,
                            const struct brs_cost_model *model, brs_wide weight_sum)
{
    brs_wide least = brs_least_work(model, k, weight_sum);
    size_t *starts = malloc((k + 1) * sizeof *starts);
    brs_wide *costs = malloc(k * sizeof *costs);
    if (starts && costs) {
        struct brs_split part = {.starts = starts, .costs = costs};
        if (brs_least_total_search(&part, lengths, n, k, model, BRS_LEAST_TOTAL_NO_LIMIT,
                                   n + BRS_LEAST_TOTAL_CELLS_BASE, NULL) == BRS_OK) {
            least = 0;
            for (size_t g = 0; g < k; g++) least += costs[g];
        }
    }
    free(starts);
    free(costs);
    return least;
}

brs_wide brs_objective_time_bound(const struct brs_step *step, brs_wide min_max,
                                  brs_wide weight_sum)
{
    const struct brs_cost_model *model = &step->model;
    size_t k = step->k;
    /* with one micro-step, least / dp_size <= the min-max: the search
     * cannot matter */
    brs_wide least = k == step->dp_size ? brs_least_work(model, k, weight_sum)
                                        : least_total(step->planned, step->n, k, model, weight_sum);
    return brs_objective_time_floor(min_max, least, step->dp_size);
}

brs_wide brs_objective_step_time_bound(const struct brs_step *step)
{
    const uint32_t *lengths = step->planned;
    size_t n = step->n, k = step->k;
    struct brs_step bounded = *step;
    struct brs_cost_model *m = &bounded.model;
    if (m->max_tokens && brs_search_groups_for_cap(lengths, n, m) > k) m->max_tokens = 0;
    brs_wide weight_sum, bound = brs_search_lower_bound(lengths, n, k, m, &weight_sum);
    uint64_t *memory = malloc(2 * n * sizeof *memory);
    if (!memory) return bound; /* still a bound, only a looser one */
    struct brs_probe_cache cache = brs_probe_cache_build(memory, lengths, n);
    brs_wide min_max = brs_search_min_max(lengths, cache, n, k, m, bound);
    free(memory);
    return brs_objective_time_bound(&bounded, min_max, weight_sum);
}
