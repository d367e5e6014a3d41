/* plan_handle.c - the plan handle created and freed, apart from what it
 * computes (plan.c): the vocabulary's choice plans its sampled steps on a
 * handle of its own, and this keeps it from calling back into plan.c. */
#include "api/internal.h"
#include "planner/planner.h"

#include <stdlib.h>

brs_status brs_plan_new(brs_plan **out)
{
    if (!out) return BRS_ERR_NULL_POINTER;
    *out = calloc(1, sizeof **out);
    return *out ? BRS_OK : BRS_ERR_NO_MEMORY;
}

static void free_buffers(brs_plan *p)
{
    free(p->indices);
    free(p->draw_index);
    free(p->draw_length);
    free(p->sorted_index);
    free(p->sorted_length);
    free(p->padded_length);
    free(p->sort_scratch);
    free(p->group_of);
    free(p->slot_start);
    free(p->padded);
    free(p->real);
    free(p->slot_cost);
    free(p->starts);
    free(p->group_cost);
    free(p->group_length);
    free(p->group_of_slot);
    free(p->slot_of);
    free(p->pack_scratch);
    free(p->sorted_load);
    free(p->encoder_tokens);
    free(p->images);
    free(p->encoder_cost);
    brs_grouped_order_free(&p->grouped);
    brs_cp_free(p);
}

void brs_plan_free(brs_plan *plan)
{
    if (!plan) return;
    free_buffers(plan);
    free(plan);
}
