/* staircase.c - a split that front-loads work for the synchronisation models.
 *
 * Ranks wait for the slowest at each synchronisation, so when the optimum T
 * is set by a few long samples, the first micro-step costs T whatever the
 * other ranks do: they may as well take as much work as T allows. The first
 * block (dp_size groups, one per rank) is greedy from the long end at T; the
 * samples left then get the least max cost T1 their k - dp_size groups
 * allow, and the later blocks are greedy at T1 (one search, not one per
 * block: the later micro-steps are the cheap ones). The planner keeps
 * whichever candidate gives the shorter synchronised step. `model` carries
 * the token cap the staircase must keep (max_tokens, or the memory budget).
 */
#include "planner/candidates/candidate.h"
#include "planner/internal.h"
#include "util/wide.h"

/* Front-loading pays when the optimum stands well above the average group
 * cost: a few long samples set it, and the first micro-step has room to
 * spare. When costs are even (the optimum within 1/8 of the average) the
 * staircase cannot gain much, and its block-by-block searches are skipped.
 * With one rank it cannot help. */
static int applies(const struct brs_candidate_input *in)
{
    brs_wide average = in->model->intercept + in->weight_sum / in->step->k;
    return in->step->dp_size > 1 && in->min_max - average > average / 8;
}

/* k groups of cost <= T*: the first dp_size greedy at T*, the rest greedy
 * at the least max cost their groups allow. */
static brs_status build(const struct brs_candidate_input *in, struct brs_candidate_output *out)
{
    const uint32_t *lengths = in->lengths;
    size_t n = in->step->n, k = in->step->k, pos = 0;
    brs_wide threshold = in->min_max;
    for (size_t g = 0; g < k; g++) {
        size_t groups_left = k - g;
        if (g == in->step->dp_size) {
            /* The greedy prefix leaves a suffix the cap allows in the groups
             * left; checked all the same, as the search assumes it. */
            if (brs_search_groups_for_cap(lengths + pos, n - pos, in->model) > groups_left)
                return BRS_ERR_CAP_INFEASIBLE;
            brs_wide unused;
            brs_wide bound =
                brs_search_lower_bound(lengths + pos, n - pos, groups_left, in->model, &unused);
            threshold = brs_search_min_max(lengths + pos, brs_probe_cache_at(in->cache, pos),
                                           n - pos, groups_left, in->model, bound);
        }
        size_t size =
            brs_search_greedy_group(lengths, n, pos, groups_left - 1, in->model, threshold);
        out->starts[g] = pos;
        out->costs[g] = brs_group_cost(in->model, lengths[pos], size);
        pos += size;
    }
    out->starts[k] = n;
    /* Not expected; the planner then keeps its own split. */
    return pos == n ? BRS_OK : BRS_ERR_INVALID_ARGUMENT;
}

const struct brs_candidate brs_staircase_candidate = {"staircase", applies, build,
                                                      BRS_CANDIDATE_POLISHED};
