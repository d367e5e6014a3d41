/* exact.c - the exact plan of a small step: every contiguous split, each
 * dealt by brs_assign and scored like the planner's candidates. By the
 * contiguity theorem (docs/design.md) the contiguous splits with every deal
 * to (rank, micro-step) contain an optimum of the step time, the peak and
 * the total; brs_assign is exact for the sizes let through here (sorted
 * blocks per micro-step, branch and bound per step up to 10 groups), so the
 * best score found is the optimum under the model's cap. */
#include "planner/candidates/candidate.h"
#include "planner/internal.h"
#include "util/wide.h"

#include <stdlib.h>
#include <string.h>

enum { EXACT_SPLITS = 2000, EXACT_STEP_GROUPS = 10 };

/* Whether C(n - 1, k - 1), the number of contiguous splits, is small. */
static int few_splits(size_t n, size_t k)
{
    uint64_t count = 1;
    size_t top = n - 1, pick = k - 1 < n - k ? k - 1 : n - k;
    for (size_t i = 1; i <= pick; i++) {
        count = count * (top - pick + i) / i; /* exact: a binomial at every i */
        if (count > EXACT_SPLITS) return 0;
    }
    return 1;
}

struct enumeration {
    const struct brs_step *step; /* the deal's topology and sync model */
    const uint32_t *lengths;
    size_t n, k;
    const struct brs_cost_model *model;
    size_t *starts, *best_starts;
    brs_wide *costs, *best_costs;
    uint32_t *slots;
    struct brs_score best;
    int found;
    brs_status status;
};

static void score_current(struct enumeration *e)
{
    struct brs_score s;
    brs_status status =
        brs_assign_score_split(&s, e->starts, e->costs, e->lengths, e->step, e->slots);
    if (status != BRS_OK) {
        e->status = status;
        return;
    }
    if (e->found && !brs_objective_better(&s, &e->best)) return;
    e->best = s;
    e->found = 1;
    memcpy(e->best_starts, e->starts, (e->k + 1) * sizeof *e->starts);
    memcpy(e->best_costs, e->costs, e->k * sizeof *e->costs);
}

/* Group g starts at starts[g]; choose where it ends. */
static void visit(struct enumeration *e, size_t g)
{
    size_t from = e->starts[g], groups_after = e->k - g - 1;
    for (size_t end = from + 1; end + groups_after <= e->n && e->status == BRS_OK; end++) {
        if (groups_after == 0 && end != e->n) continue;
        size_t size = end - from;
        uint32_t head = e->lengths[from];
        if (e->model->max_tokens && (uint64_t)size * head > e->model->max_tokens) break;
        e->costs[g] = brs_group_cost(e->model, head, size);
        e->starts[g + 1] = end;
        if (groups_after == 0)
            score_current(e);
        else
            visit(e, g + 1);
    }
}

/* The best split within the model's cap, if any; BRS_ERR_TOO_LARGE when
 * the step has more than EXACT_SPLITS of them (or, under per-step sync,
 * more groups than the deal searches exactly). */
static brs_status build(const struct brs_candidate_input *in, struct brs_candidate_output *out)
{
    size_t n = in->step->n, k = in->step->k;
    if (!few_splits(n, k) || (in->step->sync == BRS_SYNC_STEP && k > EXACT_STEP_GROUPS))
        return BRS_ERR_TOO_LARGE;
    struct enumeration e = {in->step, in->lengths, n,    k,         in->model, NULL,  out->starts,
                            NULL,     out->costs,  NULL, {0, 0, 0}, 0,         BRS_OK};
    e.starts = malloc((k + 1) * sizeof *e.starts);
    e.costs = malloc(k * sizeof *e.costs);
    e.slots = malloc(k * sizeof *e.slots);
    if (!e.starts || !e.costs || !e.slots) e.status = BRS_ERR_NO_MEMORY;
    if (e.status == BRS_OK) {
        e.starts[0] = 0;
        visit(&e, 0);
    }
    if (e.status == BRS_OK && !e.found) e.status = BRS_ERR_CAP_INFEASIBLE;
    free(e.starts);
    free(e.costs);
    free(e.slots);
    return e.status;
}

/* small steps: all of them (exact; nothing is left to polish) */
const struct brs_candidate brs_exact_candidate = {"every contiguous split", NULL, build,
                                                  BRS_CANDIDATE_SETTLES};
