/* planner.c - the padded planner: the exact min-max cost (search.c), then
 * the freedom left spent on throughput (refine.c, split_heuristic.c). */
#include "internal.h"

/* Cells the exact second objective may search: a few per sample. */
enum { REFINE_BUDGET_PER_SAMPLE = 4, REFINE_BUDGET_BASE = 4096 };

brs_status brs_plan_padded(struct brs_split *split, const uint32_t *lengths, size_t n, size_t k,
                           const struct brs_cost_model *model, uint64_t *scratch)
{
    /* scratch (2n words) holds 1 / w(L) for the search, then w(L) for the
     * second objective. */
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
    /* Exact second objective where its windows are small (the common case:
     * the optimum is tight); else split the costliest groups. */
    brs_status status = brs_refine_least_total(split, lengths, n, k, model, best,
                                               REFINE_BUDGET_PER_SAMPLE * n + REFINE_BUDGET_BASE,
                                               (brs_wide *)scratch);
    if (status == BRS_ERR_TOO_LARGE) {
        size_t groups = brs_greedy_from_right(split->starts, lengths, n, model, best);
        status = brs_split_to_k(split, lengths, n, groups, k, model);
    }
    if (status != BRS_OK) return status;
    split->max_cost = 0;
    for (size_t g = 0; g < k; g++)
        if (split->costs[g] > split->max_cost) split->max_cost = split->costs[g];
    return BRS_OK;
}
