/* planner.c - the padded planner: the exact min-max cost (search.c), then
 * the freedom left spent on throughput. Two candidate splits reach the
 * optimum: the least total cost (refine.c, or split_heuristic.c where that
 * search is too large) and the staircase (staircase.c); the planner keeps
 * the one whose synchronised step is shorter. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* Cells the exact second objective may search: a few per sample. */
enum { REFINE_BUDGET_PER_SAMPLE = 4, REFINE_BUDGET_BASE = 4096 };

/* Lexicographic: per-micro-step sync time, per-step sync time, total cost. */
struct score {
    brs_wide micro_sync, step_sync, total;
};

static struct score score_of(const brs_wide *costs, size_t k, size_t dp_size, uint32_t *scratch)
{
    struct score s = {0, 0, 0};
    brs_sync_times(&s.micro_sync, &s.step_sync, costs, k, dp_size, scratch);
    for (size_t g = 0; g < k; g++) s.total += costs[g];
    return s;
}

static int shorter(const struct score *a, const struct score *b)
{
    if (a->micro_sync != b->micro_sync) return a->micro_sync < b->micro_sync;
    if (a->step_sync != b->step_sync) return a->step_sync < b->step_sync;
    return a->total < b->total;
}

/* The least total cost among optimal splits, into split->starts/costs. */
static brs_status least_total(struct brs_split *split, const uint32_t *lengths, size_t n,
                              size_t k, const struct brs_cost_model *model, brs_wide best,
                              brs_wide *weight_scratch)
{
    brs_status status = brs_refine_least_total(split, lengths, n, k, model, best,
                                               REFINE_BUDGET_PER_SAMPLE * n + REFINE_BUDGET_BASE,
                                               weight_scratch);
    if (status != BRS_ERR_TOO_LARGE) return status;
    size_t groups = brs_greedy_from_right(split->starts, lengths, n, model, best);
    return brs_split_to_k(split, lengths, n, groups, k, model);
}

/* Front-loading pays when the optimum stands well above the average group
 * cost: a few long samples set it, and the first micro-step has room to
 * spare. When costs are even (the optimum within 1/8 of the average) the
 * staircase cannot gain much, and its block-by-block searches are skipped. */
static int worth_a_staircase(brs_wide best, brs_wide weight_sum, size_t k,
                             const struct brs_cost_model *model)
{
    brs_wide average = model->intercept + weight_sum / k;
    return best - average > average / 8;
}

/* The largest padded-token count of a contiguous split. */
static uint64_t peak_tokens(const size_t *starts, const uint32_t *lengths, size_t k)
{
    uint64_t peak = 0;
    for (size_t g = 0; g < k; g++) {
        uint64_t tokens = (uint64_t)(starts[g + 1] - starts[g]) * lengths[starts[g]];
        if (tokens > peak) peak = tokens;
    }
    return peak;
}

/* Replaces the split by the staircase when that shortens the synchronised
 * step. Front-loading fills micro-batches up to the optimum cost, which can
 * raise the memory peak: the staircase is held to max_tokens when the user
 * set one (the memory they have), else to the split's own peak, so time is
 * never bought with memory nobody offered. */
static brs_status try_staircase(struct brs_split *split, const uint32_t *lengths,
                                double *inverse_weight, size_t n, size_t k, size_t dp_size,
                                const struct brs_cost_model *model, brs_wide best)
{
    struct brs_cost_model held = *model;
    if (held.max_tokens == 0) held.max_tokens = peak_tokens(split->starts, lengths, k);
    size_t *starts = malloc((k + 1) * sizeof *starts);
    brs_wide *costs = malloc(k * sizeof *costs);
    uint32_t *scratch = malloc(2 * k * sizeof *scratch);
    brs_status status = starts && costs && scratch ? BRS_OK : BRS_ERR_NO_MEMORY;
    if (status == BRS_OK) {
        brs_fill_inverse_weights(inverse_weight, lengths, n, model); /* the refine reused it */
        if (brs_plan_staircase(starts, costs, lengths, inverse_weight, n, k, dp_size, &held,
                               best) == BRS_OK) {
            struct score current = score_of(split->costs, k, dp_size, scratch);
            struct score stair = score_of(costs, k, dp_size, scratch);
            if (shorter(&stair, &current)) {
                memcpy(split->starts, starts, (k + 1) * sizeof *starts);
                memcpy(split->costs, costs, k * sizeof *costs);
            }
        }
    }
    free(starts);
    free(costs);
    free(scratch);
    return status;
}

brs_status brs_plan_padded(struct brs_split *split, const uint32_t *lengths, size_t n, size_t k,
                           size_t dp_size, const struct brs_cost_model *model, uint64_t *scratch)
{
    /* scratch (2n words) holds 1 / w(L) for the searches, then w(L) for
     * the least total cost. */
    double *inverse_weight = (double *)scratch;
    if (model->max_tokens) {
        size_t needed = brs_groups_for_cap(lengths, n, model);
        if (needed > k) {
            split->needed = needed;
            return BRS_ERR_CAP_INFEASIBLE;
        }
    }
    split->lower_bound = brs_lower_bound(lengths, n, k, model, &split->weight_sum);
    brs_fill_inverse_weights(inverse_weight, lengths, n, model);
    brs_wide best = brs_min_max_threshold(lengths, inverse_weight, n, k, model, split->lower_bound);

    brs_status status = least_total(split, lengths, n, k, model, best, (brs_wide *)scratch);
    /* With one micro-step per rank both sync times are the max cost, and
     * with one rank the per-micro-step time is the total: there the least
     * total is already the best and no staircase is tried. */
    if (status == BRS_OK && k > dp_size && dp_size > 1 &&
        worth_a_staircase(best, split->weight_sum, k, model))
        status = try_staircase(split, lengths, inverse_weight, n, k, dp_size, model, best);
    if (status != BRS_OK) return status;
    split->max_cost = 0;
    for (size_t g = 0; g < k; g++)
        if (split->costs[g] > split->max_cost) split->max_cost = split->costs[g];
    return BRS_OK;
}
