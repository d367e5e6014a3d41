/* planner.c - the one entry from a step to its plan: the planner the step
 * needs (within its shape vocabulary, padded or packed), then the two-part
 * planner where its samples carry images, started from the text plan
 * (docs/algorithm.md, "Two parts"), then the deal of the groups to ranks
 * and micro-steps for the sync model (assign.c), which the planners scored
 * their candidates with; a context-parallel step goes to its own planner
 * (context_parallel.c), which lays its micro-batches out on ranks itself. */
#include "planner/internal.h"

/* The text planner: packed (each row then padded to its vocabulary row
 * where the step has a vocabulary), or every group's shape in the
 * vocabulary, or padded. */
static brs_status plan_text(struct brs_planned *out, const struct brs_step *step, uint64_t *scratch,
                            uint32_t *pack_scratch)
{
    out->within_vocabulary = step->vocabulary != NULL && !step->packed;
    out->by_group = step->packed;
    brs_status status;
    if (step->packed) {
        status = brs_packed_split(&out->split, step, pack_scratch);
        /* scratch holds 2n >= k words, free in packed mode */
        if (status == BRS_OK && step->vocabulary)
            brs_vocabulary_pad_rows(&out->split, step, scratch);
    } else if (step->vocabulary) {
        status = brs_vocabulary_split(&out->split, out->group_length, step);
    } else {
        status = brs_padded_split(&out->split, step, scratch);
    }
    if (status == BRS_ERR_CAP_INFEASIBLE)
        out->failed = out->within_vocabulary ? BRS_FAILED_VOCABULARY : BRS_FAILED_TEXT_CAP;
    return status;
}

/* Both parts, started from the text split (as group_of, which the two-part
 * planner reads before it first writes it). */
static brs_status plan_two_parts(struct brs_planned *out, const struct brs_step *step)
{
    struct brs_split *split = &out->split;
    if (!out->by_group)
        for (size_t g = 0; g < step->k; g++)
            for (size_t i = split->starts[g]; i < split->starts[g + 1]; i++)
                split->group_of[i] = (uint32_t)g;
    out->by_group = 1;
    out->with_images = 1;
    brs_status status = brs_two_part_split(split->group_of, split->costs, step, split->group_of);
    if (status == BRS_ERR_CAP_INFEASIBLE) out->failed = BRS_FAILED_ENCODER_CAP;
    return status;
}

brs_status brs_planner_plan(struct brs_planned *out, const struct brs_step *step, uint64_t *scratch,
                            uint32_t *pack_scratch)
{
    out->by_group = out->within_vocabulary = out->with_images = out->failed = 0;
    if (step->cp.active) {
        brs_status status = brs_cp_plan(out->cp, step);
        if (status == BRS_ERR_CAP_INFEASIBLE) out->failed = BRS_FAILED_TEXT_CAP;
        return status;
    }
    brs_status status = plan_text(out, step, scratch, pack_scratch);
    if (status == BRS_OK && step->loads) status = plan_two_parts(out, step);
    if (status != BRS_OK) return status;
    return brs_assign(out->slot_of, &out->micro_sync, &out->step_sync, out->split.costs, NULL,
                      step);
}
