/* packed.c - packed mode (varlen attention, no padding): a group costs
 * intercept + sum w(L) and holds sum L tokens. Contiguity does not hold
 * here: the first plan is LPT (lpt.c), and the rows of
 * candidates/packed.def are tried against it, each scored under the
 * planner's objective (docs/algorithm.md, step 7) and kept where it meets
 * the cap and scores better; ties keep the earlier plan. A cap that no
 * packing meets is reported with the fewest groups that do where a search
 * settles it (bin_packing.c). */
#include "planner/packed.h"
#include "planner/bin_packing.h"
#include "planner/candidates/candidate.h"
#include "planner/cost_model.h"
#include "planner/lpt.h"
#include "planner/objective.h"
#include "planner/score.h"
#include "util/wide.h"

#include <stdlib.h>
#include <string.h>

/* A packing's costs and tokens per group and its score under the planner's
 * objective (objective.c); 0 when it breaks the cap. */
struct packing {
    uint32_t *group_of;
    brs_wide *costs;
    uint64_t *tokens;
    struct brs_score score;
};

static int score_packing(struct packing *p, const struct brs_candidate_input *in,
                         uint32_t *slot_scratch, brs_status *status)
{
    size_t k = in->k;
    const struct brs_cost_model *model = in->model;
    for (size_t g = 0; g < k; g++) {
        p->costs[g] = model->intercept;
        p->tokens[g] = 0;
    }
    for (size_t i = 0; i < in->n; i++) {
        p->costs[p->group_of[i]] += brs_sample_weight(model, in->lengths[i]);
        p->tokens[p->group_of[i]] += in->lengths[i];
    }
    uint64_t peak = 0;
    for (size_t g = 0; g < k; g++)
        if (p->tokens[g] > peak) peak = p->tokens[g];
    if (model->max_tokens && peak > model->max_tokens) return 0;
    *status =
        brs_score_groups(&p->score, p->costs, NULL, peak, k, in->dp_size, in->sync, slot_scratch);
    return *status == BRS_OK;
}

/* The best packing so far (in the caller's split), its score once a row
 * has been built (scored), and room for a row's packing. */
struct contest {
    struct brs_split *split;
    struct brs_candidate_input in;
    struct brs_candidate_output out;
    uint64_t *tokens; /* k */
    uint32_t *slots;  /* k */
    struct brs_score best;
    int scored;
};

/* The row's packing in c->out replaces the plan when it meets the cap and
 * scores better. */
static brs_status consider(struct contest *c)
{
    brs_status status = BRS_OK;
    if (!c->scored) {
        struct packing kept = {c->split->group_of, c->split->costs, c->tokens, {0, 0, 0}};
        score_packing(&kept, &c->in, c->slots, &status);
        c->best = kept.score;
        c->scored = 1;
        if (status != BRS_OK) return status;
    }
    struct packing row = {c->out.group_of, c->out.costs, c->tokens, {0, 0, 0}};
    if (!score_packing(&row, &c->in, c->slots, &status) ||
        !brs_objective_better(&row.score, &c->best))
        return status;
    c->best = row.score;
    memcpy(c->split->group_of, row.group_of, c->in.n * sizeof *row.group_of);
    memcpy(c->split->costs, row.costs, c->in.k * sizeof *row.costs);
    return BRS_OK;
}

static const struct brs_candidate *const CANDIDATES[] = {
#define BRS_CANDIDATE(file) &brs_##file##_candidate,
#include "planner/candidates/packed.def"
#undef BRS_CANDIDATE
};

/* The table's rows against the plan in c->split. A row over its work
 * bound (BRS_ERR_TOO_LARGE) gives no candidate; its other errors are the
 * step's. */
static brs_status walk(struct contest *c)
{
    for (size_t i = 0; i < sizeof CANDIDATES / sizeof CANDIDATES[0]; i++) {
        const struct brs_candidate *row = CANDIDATES[i];
        if (row->applies && !row->applies(&c->in)) continue;
        brs_status status = row->build(&c->in, &c->out);
        if (status == BRS_ERR_TOO_LARGE) continue;
        if (status == BRS_OK) status = consider(c);
        if (status != BRS_OK) return status;
    }
    return BRS_OK;
}

static brs_status try_candidates(struct brs_split *split, const uint32_t *lengths, size_t n,
                                 size_t k, size_t dp_size, int sync,
                                 const struct brs_cost_model *model, uint32_t *scratch)
{
    struct contest c = {split,
                        {.lengths = lengths,
                         .n = n,
                         .k = k,
                         .dp_size = dp_size,
                         .grad_accum = k / dp_size,
                         .sync = sync,
                         .model = model},
                        {NULL, malloc(n * sizeof(uint32_t)), malloc(k * sizeof(brs_wide))},
                        malloc(k * sizeof(uint64_t)),
                        scratch,
                        {0, 0, 0},
                        0};
    brs_status status = c.out.group_of && c.out.costs && c.tokens ? walk(&c) : BRS_ERR_NO_MEMORY;
    free(c.out.group_of);
    free(c.out.costs);
    free(c.tokens);
    return status;
}

brs_status brs_packed_split(struct brs_split *split, const uint32_t *lengths, size_t n, size_t k,
                            size_t dp_size, int sync, const struct brs_cost_model *model,
                            uint32_t *scratch)
{
    uint64_t cap = model->max_tokens;
    if (cap) {
        size_t needed = brs_bin_packing_bound(lengths, n, cap);
        if (needed > k) {
            /* The bound is only a floor: name the least count that packs
             * where the search settles it (brs.h promises that number). */
            size_t least =
                brs_bin_packing_fewest_groups(split->group_of, lengths, n, needed - 1, cap);
            split->needed = least > 0 ? least : needed;
            return BRS_ERR_CAP_INFEASIBLE;
        }
    }
    brs_status status = brs_lpt_split(split, lengths, n, k, model, scratch);
    if (status == BRS_OK)
        status = try_candidates(split, lengths, n, k, dp_size, sync, model, scratch);
    if (status != BRS_OK) return status;
    split->lower_bound = brs_objective_packed_bound(lengths, n, k, model, &split->weight_sum);
    split->max_cost = 0;
    for (size_t g = 0; g < k; g++)
        if (split->costs[g] > split->max_cost) split->max_cost = split->costs[g];
    return BRS_OK;
}
