/* padded.c - the padded planner: the synchronised step time of the sync
 * model first, then the peak padded tokens, then the total cost, within the
 * memory budget (docs/algorithm.md).
 *
 * The exact min-max cost T* (search.c) comes first. With one micro-step it
 * is the step time, and the least peak at T*, then the least total, is the
 * exact answer (brs_layering_one). Otherwise the first plan is the
 * least-total split at T* (least_total.c, or least_total.c where that search
 * is too large): its peak is the memory budget when no max_tokens is set.
 * The rows of candidates/padded.def are then held to the budget and kept
 * when they score better (objective.c); the winner is polished (polish.c),
 * and the rows that meet the polished plan come last. */
#include "planner/internal.h"
#include "planner/candidates/candidate.h"
#include "util/wide.h"

#include <stdlib.h>
#include <string.h>

/* The contest of the candidates: the best split so far (in the caller's
 * split) and its score, the rows' input (its model's cap is the memory
 * budget) and room for one more candidate. */
struct contest {
    struct brs_split *split;
    struct brs_cost_model held;
    struct brs_candidate_input in;
    struct brs_candidate_output out;
    struct brs_score best;
    uint32_t *slots;
};

static brs_status polish(const struct contest *c, size_t *starts, brs_wide *costs)
{
    const struct brs_candidate_input *in = &c->in;
    const struct brs_step *step = in->step;
    return brs_polish(starts, costs, in->lengths, step, in->model);
}

/* Keeps the candidate in c->out when it fits the budget and scores better.
 * A candidate that could not be built is skipped. */
static brs_status consider(struct contest *c, brs_status built)
{
    const struct brs_candidate_input *in = &c->in;
    if (built == BRS_ERR_NO_MEMORY) return built;
    if (built != BRS_OK ||
        brs_objective_padded_peak(c->out.starts, in->lengths, in->step->k) > c->held.max_tokens)
        return BRS_OK;
    struct brs_score s;
    brs_status status =
        brs_assign_score_split(&s, c->out.starts, c->out.costs, in->lengths, in->step, c->slots);
    if (status != BRS_OK || !brs_objective_better(&s, &c->best)) return status;
    c->best = s;
    memcpy(c->split->starts, c->out.starts, (in->step->k + 1) * sizeof *c->out.starts);
    memcpy(c->split->costs, c->out.costs, in->step->k * sizeof *c->out.costs);
    return BRS_OK;
}

/* A row's split, polished where its flags say: the heuristics end in
 * different local optima, and the best of them wins. */
static brs_status polished(struct contest *c, const struct brs_candidate *row, brs_status built)
{
    if (!(row->flags & BRS_CANDIDATE_POLISHED) || built != BRS_OK || c->in.step->k == 1)
        return built;
    return polish(c, c->out.starts, c->out.costs);
}

/* A row against the polished plan, whose step time it must beat: one that
 * scores better replaces the plan and is polished in turn, so the plan is
 * never worse than without it. */
static brs_status meet_polished(struct contest *c, const struct brs_candidate *row)
{
    struct brs_score before;
    const struct brs_candidate_input *in = &c->in;
    brs_status status = brs_assign_score_split(&before, c->split->starts, c->split->costs,
                                               in->lengths, in->step, c->slots);
    if (status != BRS_OK) return status;
    c->best = before;
    c->in.beat = before.time;
    status = consider(c, row->build(&c->in, &c->out));
    if (status != BRS_OK || !brs_objective_better(&c->best, &before)) return status;
    return polish(c, c->split->starts, c->split->costs);
}

static const struct brs_candidate *const CANDIDATES[] = {
#define BRS_CANDIDATE(file) &brs_##file##_candidate,
#include "planner/candidates/padded.def"
#undef BRS_CANDIDATE
};
enum { CANDIDATE_COUNT = sizeof CANDIDATES / sizeof CANDIDATES[0] };

static int applies(const struct contest *c, const struct brs_candidate *row)
{
    return !row->applies || row->applies(&c->in);
}

/* The table's rows in order, then the polish of the winner, then the rows
 * that meet the polished plan. A settling row that can be built ends it. */
static brs_status walk(struct contest *c)
{
    brs_status status = BRS_OK;
    for (size_t i = 0; i < CANDIDATE_COUNT && status == BRS_OK; i++) {
        const struct brs_candidate *row = CANDIDATES[i];
        if ((row->flags & BRS_CANDIDATE_AFTER_POLISH) || !applies(c, row)) continue;
        brs_status built = row->build(&c->in, &c->out);
        status = consider(c, polished(c, row, built));
        if ((row->flags & BRS_CANDIDATE_SETTLES) && built != BRS_ERR_TOO_LARGE) return status;
    }
    if (status == BRS_OK && c->in.step->k > 1)
        status = polish(c, c->split->starts, c->split->costs);
    for (size_t i = 0; i < CANDIDATE_COUNT && status == BRS_OK; i++) {
        const struct brs_candidate *row = CANDIDATES[i];
        if ((row->flags & BRS_CANDIDATE_AFTER_POLISH) && applies(c, row))
            status = meet_polished(c, row);
    }
    return status;
}

/* The candidates after the first plan, the least-total split at the
 * optimum, which is in split->starts/costs and sets the budget when the
 * user gave none. */
static brs_status improve(struct brs_split *split, const struct brs_step *step,
                          struct brs_probe_cache cache, brs_wide best)
{
    const uint32_t *lengths = step->planned;
    size_t k = step->k;
    struct contest c = {split,
                        step->model,
                        {step, lengths, NULL, cache, best, split->weight_sum, 0},
                        {NULL, NULL, NULL},
                        {0, 0, 0},
                        NULL};
    c.in.model = &c.held;
    if (c.held.max_tokens == 0)
        c.held.max_tokens = brs_objective_padded_peak(split->starts, lengths, k);
    c.out.starts = malloc((k + 1) * sizeof *c.out.starts);
    c.out.costs = malloc(k * sizeof *c.out.costs);
    c.slots = malloc(k * sizeof *c.slots);
    brs_status status = c.out.starts && c.out.costs && c.slots ? BRS_OK : BRS_ERR_NO_MEMORY;
    if (status == BRS_OK)
        status =
            brs_assign_score_split(&c.best, split->starts, split->costs, lengths, step, c.slots);
    if (status == BRS_OK) status = walk(&c);
    free(c.out.starts);
    free(c.out.costs);
    free(c.slots);
    return status;
}

brs_status brs_padded_split(struct brs_split *split, const struct brs_step *step, uint64_t *scratch)
{
    const uint32_t *lengths = step->planned;
    const struct brs_cost_model *model = &step->model;
    size_t n = step->n, k = step->k;
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
    if (k == step->dp_size && k > 1 && n > k) {
        /* One micro-step: the step time is the max cost whatever the sync,
         * so the least peak at the optimum, then the least total, is the
         * exact answer, and within the default budget (the least-total
         * split at the optimum is one of the splits it ranges over). */
        status = brs_layering_one(split->starts, split->costs, lengths, cache, n, k, model, best);
    } else {
        status = brs_least_total_split(split, lengths, n, k, model, best);
        /* with n == k there is one split, and nothing to improve */
        if (status == BRS_OK && k > 1 && n > k) status = improve(split, step, cache, best);
    }
    if (status != BRS_OK) return status;
    split->max_cost = brs_objective_largest(split->costs, k);
    split->time_lower_bound = brs_objective_time_bound(step, best, split->weight_sum);
    return BRS_OK;
}
