/* least_cap.c - the least max_tokens that plans a step, which an error
 * names so that the user can raise the cap to it.
 *
 * Padded: the planner refuses a step exactly when the greedy split from the
 * long end (each micro-batch as large as its longest sample allows) needs
 * more than k groups; by contiguity that greedy count is the least any
 * split needs, and it never rises with the cap, so the least cap is the
 * least c with greedy(c) <= k, found by bisection. Packed: the cap is bin
 * packing, so the least cap is found by planning (a bisection that each
 * probe settles with the packed planner, verified at its end). */
#include "planner/internal.h"

size_t brs_least_cap_groups(const uint32_t *sorted, size_t n, uint64_t cap, size_t limit)
{
    struct brs_cost_model model = {.max_tokens = cap};
    return brs_search_groups_for_cap_upto(sorted, n, &model, limit);
}

/* Bracketed below by the pigeonhole bound (among the (m - 1)k + 1 longest
 * samples some group holds m, and its head is at least the last of them:
 * brs_search_lower_bound's argument, in tokens) and above by k groups of
 * ceil(n / k) samples, which fit under any head; then bisection, each probe
 * O(k). No overflow: a head < 2^32 times a size <= 2^24. */
uint64_t brs_least_cap_padded(const uint32_t *sorted, size_t n, size_t k, uint64_t known)
{
    if (known >= sorted[0] && brs_least_cap_groups(sorted, n, known, k) <= k) return known;
    uint64_t low = known + 1;
    for (size_t m = 1; (m - 1) * k < n; m++) {
        uint64_t pigeonhole = (uint64_t)m * sorted[(m - 1) * k];
        if (pigeonhole > low) low = pigeonhole;
    }
    uint64_t high = (uint64_t)sorted[0] * ((n + k - 1) / k);
    if (high < low) high = low;
    while (low < high) {
        uint64_t middle = low + (high - low) / 2;
        if (brs_least_cap_groups(sorted, n, middle, k) <= k)
            high = middle;
        else
            low = middle + 1;
    }
    return low;
}

/* What a packed probe plans: the step, its cap replaced. */
struct packed_probe {
    struct brs_split *work;
    struct brs_step step;
    uint32_t *scratch;
};

/* Whether the packed planner splits the step under the cap that max_tokens
 * `cap` gives (rounded rows included). */
static int packs_within(struct packed_probe *probe, uint64_t cap)
{
    probe->step.model.max_tokens = brs_padding_row_limit(&probe->step.padding, cap);
    if (probe->step.model.max_tokens == 0) return 0;
    return brs_packed_split(probe->work, &probe->step, probe->scratch) == BRS_OK;
}

uint64_t brs_least_cap_packed(struct brs_split *work, const struct brs_step *step,
                              uint32_t *scratch)
{
    struct packed_probe probe = {work, *step, scratch};
    const uint32_t *sorted = step->lengths;
    size_t n = step->n, k = step->k;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) total += sorted[i];
    /* Below the longest sample or the average row no split exists; the
     * whole step in one row is an upper end that the planner may still
     * miss (a heuristic): then none is named. */
    uint64_t low = (total + k - 1) / k, high = brs_padding_apply(&step->padding, total);
    if (low < sorted[0]) low = sorted[0];
    if (high == 0 || !packs_within(&probe, high)) return 0;
    while (low < high) {
        uint64_t middle = low + (high - low) / 2;
        if (packs_within(&probe, middle))
            high = middle;
        else
            low = middle + 1;
    }
    return packs_within(&probe, low) ? low : 0;
}
