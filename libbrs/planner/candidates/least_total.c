/* least_total.c - with one rank the step time is the total cost, whatever
 * the max: the split of least total cost within the memory budget alone
 * (least_total.c without a cost limit), searched with more cells than the
 * planner's first plan may use, since here it is itself the answer. */
#include "planner/candidates/candidate.h"
#include "planner/internal.h"

/* Cells per sample the search may use: more than the few per sample of
 * brs_least_total_split. */
enum { WIDE_BUDGET_PER_SAMPLE = 64 };

static int applies(const struct brs_candidate_input *in)
{
    return in->step->dp_size == 1 && in->step->k > 1;
}

static brs_status build(const struct brs_candidate_input *in, struct brs_candidate_output *out)
{
    struct brs_split part = {.starts = out->starts, .costs = out->costs};
    size_t budget = WIDE_BUDGET_PER_SAMPLE * in->step->n + BRS_LEAST_TOTAL_CELLS_BASE;
    return brs_least_total_search(&part, in->lengths, in->step->n, in->step->k, in->model,
                                  BRS_LEAST_TOTAL_NO_LIMIT, budget, NULL);
}

const struct brs_candidate brs_least_total_candidate = {"least total under the budget alone",
                                                        applies, build, 0};
