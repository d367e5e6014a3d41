/* planner.c - the padded planner: the synchronised step time of the sync
 * model first, then the peak padded tokens, then the total cost, within the
 * memory budget (docs/algorithm.md).
 *
 * The exact min-max cost T* (search.c) comes first. With one micro-step it
 * is the step time, and the least peak at T*, then the least total, is the
 * exact answer (brs_layered_split_one). Otherwise the least-total split at T*
 * (refine.c, or split_heuristic.c where that search is too large) follows:
 * its peak is the memory budget when no max_tokens is set. Other candidates
 * are held to the budget and kept when they score better: the staircase
 * (staircase.c), the layers (layered.c), transformers' batch_rebalance
 * split (hill_climb.c), the least total under the budget alone (one rank:
 * there the step time is the total), and for small steps every contiguous
 * split (exact.c), which makes the plan exact there. Under per-micro-step
 * sync the polished winner then meets every layering where a DP over the
 * cuts is small (brs_layered_split_fastest): no layered plan within the
 * budget beats the plan there. */
#include "planner/candidates.h"
#include "planner/cost_model.h"
#include "planner/objective.h"
#include "planner/planner.h"
#include "planner/polish.h"
#include "planner/refine.h"
#include "planner/score.h"
#include "planner/search.h"
#include "planner/split_heuristic.h"
#include "util/wide.h"

#include <stdlib.h>
#include <string.h>

/* Cells the least-total search may use where that split is itself the
 * answer (one rank): more than brs_split_heuristic_least_total's few per
 * sample. */
enum { WIDE_BUDGET_PER_SAMPLE = 64 };

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

/* The candidates' shared state: the best split so far (in the caller's
 * split), its score, and room for one more candidate. */
struct contest {
    struct brs_split *split;
    const uint32_t *lengths;
    struct brs_probe_cache cache;
    size_t n, k, dp_size;
    int sync;
    struct brs_cost_model held; /* the cap is the memory budget */
    brs_wide min_max;           /* the exact min-max cost T* */
    struct brs_score best;
    size_t *starts;
    brs_wide *costs;
    uint32_t *slots;
};

/* Keeps the candidate in c->starts/costs when it fits the budget and scores
 * better. A candidate that could not be built is skipped. */
static brs_status consider(struct contest *c, brs_status built)
{
    if (built == BRS_ERR_NO_MEMORY) return built;
    if (built != BRS_OK ||
        brs_objective_padded_peak(c->starts, c->lengths, c->k) > c->held.max_tokens)
        return BRS_OK;
    struct brs_score s;
    brs_status status = brs_score_split(&s, c->starts, c->costs, c->lengths, c->k,
                                                  c->dp_size, c->sync, c->slots);
    if (status != BRS_OK || !brs_objective_better(&s, &c->best)) return status;
    c->best = s;
    memcpy(c->split->starts, c->starts, (c->k + 1) * sizeof *c->starts);
    memcpy(c->split->costs, c->costs, c->k * sizeof *c->costs);
    return BRS_OK;
}

/* A heuristic candidate, polished (polish.c) before it is compared: the
 * candidates end in different local optima, and the best of them wins. */
static brs_status consider_polished(struct contest *c, brs_status built)
{
    if (built == BRS_OK && c->k > 1)
        built = brs_polish(c->starts, c->costs, c->lengths, c->n, c->k, c->dp_size, c->sync,
                           &c->held);
    return consider(c, built);
}

/* Every layering, where that is small, against the polished plan: no
 * layered plan within the budget is then faster than the plan under
 * per-micro-step sync (a layered plan's time is the sum of its layers'
 * min-max, and the deal does no worse with its groups). One that scores
 * better replaces the plan and is polished in turn, so the plan is never
 * worse than without it. */
static brs_status fastest_layering(struct contest *c)
{
    size_t dp = c->dp_size, ga = c->k / dp;
    if (dp == 1 || c->sync != BRS_SYNC_MICRO_STEP) return BRS_OK;
    struct brs_score before;
    brs_status status = brs_score_split(&before, c->split->starts, c->split->costs,
                                                  c->lengths, c->k, dp, c->sync, c->slots);
    if (status != BRS_OK) return status;
    c->best = before;
    status = consider(c, brs_layered_split_fastest(c->starts, c->costs, c->lengths, c->cache, c->n,
                                                   dp, ga, &c->held, before.time));
    if (status != BRS_OK || !brs_objective_better(&c->best, &before)) return status;
    return brs_polish(c->split->starts, c->split->costs, c->lengths, c->n, c->k, dp, c->sync,
                      &c->held);
}

/* The candidates' builders: each writes its split into c->starts/costs. */
static brs_status build_staircase(struct contest *c)
{
    return brs_staircase_split(c->starts, c->costs, c->lengths, c->cache, c->n, c->k, c->dp_size,
                               &c->held, c->min_max);
}

static brs_status build_layers(struct contest *c)
{
    return brs_layered_split(c->starts, c->costs, c->lengths, c->cache, c->n, c->dp_size,
                             c->k / c->dp_size, &c->held);
}

static brs_status build_rebalance_climb(struct contest *c)
{
    return brs_hill_climb_split(c->starts, c->costs, c->lengths, c->n, c->k, c->dp_size,
                                &c->held);
}

static brs_status build_least_total(struct contest *c)
{
    struct brs_split part = {.starts = c->starts, .costs = c->costs};
    size_t budget = WIDE_BUDGET_PER_SAMPLE * c->n + BRS_REFINE_CELLS_BASE;
    return brs_refine_least_total(&part, c->lengths, c->n, c->k, &c->held, BRS_REFINE_NO_LIMIT, budget,
                                  NULL);
}

static brs_status build_exhaustive(struct contest *c)
{
    return brs_exact_split(c->starts, c->costs, c->lengths, c->n, c->k, c->dp_size, c->sync,
                           &c->held);
}

/* When each candidate applies. */
static int staircase_applies(const struct contest *c)
{
    /* with one rank it cannot help */
    return c->dp_size > 1 && worth_a_staircase(c->min_max, c->split->weight_sum, c->k, &c->held);
}

static int several_ranks(const struct contest *c) { return c->dp_size > 1; }

/* one rank: the step time is the total cost, whatever the max */
static int one_rank(const struct contest *c) { return c->dp_size == 1 && c->k > 1; }

static int always(const struct contest *c)
{
    (void)c;
    return 1;
}

/* A row of the candidates' table. A `settles` candidate is exact where it
 * can be built (anything but BRS_ERR_TOO_LARGE): its outcome is the plan. */
struct candidate {
    const char *name;
    int (*applies)(const struct contest *c);
    brs_status (*build)(struct contest *c);
    int polished;
    int settles;
};

/* In the order they are tried (docs/algorithm.md); ties keep the earlier. */
static const struct candidate CANDIDATES[] = {
    {"staircase", staircase_applies, build_staircase, 1, 0},
    {"layers, one per micro-step", several_ranks, build_layers, 1, 0},
    /* the split of the sampler users replace, so that it never beats the plan */
    {"transformers' batch_rebalance split", several_ranks, build_rebalance_climb, 1, 0},
    {"least total under the budget alone", one_rank, build_least_total, 0, 0},
    /* small steps: all of them (exact; nothing is left to polish) */
    {"every contiguous split", always, build_exhaustive, 0, 1},
};

/* With grad_accum > 1 (one micro-step is planned directly, see
 * brs_planner_split): the table's candidates, then the polish of the winner
 * and, last, every layering. */
static brs_status try_candidates(struct contest *c)
{
    brs_status status = BRS_OK;
    size_t count = sizeof CANDIDATES / sizeof CANDIDATES[0];
    for (size_t i = 0; i < count && status == BRS_OK; i++) {
        const struct candidate *row = &CANDIDATES[i];
        if (!row->applies(c)) continue;
        brs_status built = row->build(c);
        status = row->polished ? consider_polished(c, built) : consider(c, built);
        if (row->settles && built != BRS_ERR_TOO_LARGE) return status;
    }
    if (status == BRS_OK && c->k > 1)
        status = brs_polish(c->split->starts, c->split->costs, c->lengths, c->n, c->k, c->dp_size,
                            c->sync, &c->held);
    if (status == BRS_OK) status = fastest_layering(c);
    return status;
}

/* The candidates after the least-total split at the optimum, which is in
 * split->starts/costs and sets the budget when the user gave none. */
static brs_status improve(struct brs_split *split, const uint32_t *lengths, size_t n, size_t k,
                          size_t dp_size, int sync, const struct brs_cost_model *model,
                          struct brs_probe_cache cache, brs_wide best)
{
    struct contest c = {split, lengths, cache, n, k, dp_size, sync, *model,
                        best, {0, 0, 0}, NULL, NULL, NULL};
    if (c.held.max_tokens == 0)
        c.held.max_tokens = brs_objective_padded_peak(split->starts, lengths, k);
    c.starts = malloc((k + 1) * sizeof *c.starts);
    c.costs = malloc(k * sizeof *c.costs);
    c.slots = malloc(k * sizeof *c.slots);
    brs_status status = c.starts && c.costs && c.slots ? BRS_OK : BRS_ERR_NO_MEMORY;
    if (status == BRS_OK)
        status = brs_score_split(&c.best, split->starts, split->costs, lengths, k,
                                           dp_size, sync, c.slots);
    if (status == BRS_OK) status = try_candidates(&c);
    free(c.starts);
    free(c.costs);
    free(c.slots);
    return status;
}

brs_status brs_planner_split(struct brs_split *split, const uint32_t *lengths, size_t n, size_t k,
                             size_t dp_size, int sync, const struct brs_cost_model *model,
                             uint64_t *scratch)
{
    if (model->max_tokens) {
        size_t needed = brs_search_groups_for_cap(lengths, n, model);
        if (needed > k) {
            split->needed = needed;
            return BRS_ERR_CAP_INFEASIBLE;
        }
    }
    split->lower_bound = brs_search_lower_bound(lengths, n, k, model, &split->weight_sum);
    /* scratch (2n words) holds the searches' cache */
    struct brs_probe_cache cache = brs_probe_cache_build(scratch, lengths, n);
    brs_wide best = brs_search_min_max(lengths, cache, n, k, model, split->lower_bound);

    brs_status status;
    if (k == dp_size && k > 1 && n > k) {
        /* One micro-step: the step time is the max cost whatever the sync,
         * so the least peak at the optimum, then the least total, is the
         * exact answer, and within the default budget (the least-total
         * split at the optimum is one of the splits it ranges over). */
        status =
            brs_layered_split_one(split->starts, split->costs, lengths, cache, n, k, model, best);
    } else {
        status = brs_split_heuristic_least_total(split, lengths, n, k, model, best);
        /* with n == k there is one split, and nothing to improve */
        if (status == BRS_OK && k > 1 && n > k)
            status = improve(split, lengths, n, k, dp_size, sync, model, cache, best);
    }
    if (status != BRS_OK) return status;
    split->max_cost = 0;
    for (size_t g = 0; g < k; g++)
        if (split->costs[g] > split->max_cost) split->max_cost = split->costs[g];
    split->time_lower_bound =
        brs_objective_time_bound(lengths, n, k, dp_size, model, best, split->weight_sum);
    return BRS_OK;
}
