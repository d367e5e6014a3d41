/* staircase.c - a split that front-loads work for the synchronisation models.
 *
 * Ranks wait for the slowest at each synchronisation, so when the optimum T
 * is set by a few long samples, the first micro-step costs T whatever the
 * other ranks do: they may as well take as much work as T allows. The first
 * block (dp_size groups, one per rank) is greedy from the long end at T; the
 * samples left then get the least max cost T1 their k - dp_size groups
 * allow, and the later blocks are greedy at T1 (one search, not one per
 * block: the later micro-steps are the cheap ones). This is a second
 * candidate; the planner keeps whichever split gives the shorter
 * synchronised step. `model` carries the token cap the staircase must keep
 * (max_tokens, or the other candidate's memory peak).
 */
#include "planner/candidates.h"
#include "planner/cost_model.h"
#include "planner/search.h"
#include "util/wide.h"

/* One greedy group at `threshold` from `pos`, leaving a sample for each of
 * `groups_after` later groups. The layered planner shares it. */
size_t brs_staircase_greedy_group(const uint32_t *lengths, size_t n, size_t pos,
                                  size_t groups_after, const struct brs_cost_model *model,
                                  brs_wide threshold)
{
    size_t limit = brs_cap_size(model, lengths[pos], n - pos - groups_after);
    brs_wide w = brs_sample_weight(model, lengths[pos]);
    brs_wide budget = threshold - model->intercept;
    size_t size = 1; /* a single sample always fits: threshold >= its cost */
    /* Exponential then binary search on the size: cost grows with it. */
    size_t step = 1;
    while (size + step <= limit && (brs_wide)(size + step) * w <= budget) {
        size += step;
        step *= 2;
    }
    for (; step > 0; step /= 2)
        if (size + step <= limit && (brs_wide)(size + step) * w <= budget) size += step;
    return size;
}

brs_status brs_staircase_split(size_t *starts, brs_wide *costs, const uint32_t *lengths,
                               struct brs_probe_cache cache, size_t n, size_t k, size_t dp_size,
                               const struct brs_cost_model *model, brs_wide top)
{
    size_t pos = 0;
    brs_wide threshold = top;
    for (size_t g = 0; g < k; g++) {
        size_t groups_left = k - g;
        if (g == dp_size) {
            /* The greedy prefix leaves a suffix the cap allows in the groups
             * left; checked all the same, as the search assumes it. */
            if (brs_search_groups_for_cap(lengths + pos, n - pos, model) > groups_left)
                return BRS_ERR_CAP_INFEASIBLE;
            brs_wide unused;
            brs_wide bound =
                brs_search_lower_bound(lengths + pos, n - pos, groups_left, model, &unused);
            threshold = brs_search_min_max(lengths + pos, brs_probe_cache_at(cache, pos), n - pos,
                                           groups_left, model, bound);
        }
        size_t size =
            brs_staircase_greedy_group(lengths, n, pos, groups_left - 1, model, threshold);
        starts[g] = pos;
        costs[g] = brs_group_cost(model, lengths[pos], size);
        pos += size;
    }
    starts[k] = n;
    /* Not expected; the caller then keeps its own split. */
    return pos == n ? BRS_OK : BRS_ERR_INVALID_ARGUMENT;
}
