/* cost.c - the padded cost model shared by the planners: a micro-batch of
 * s samples whose longest has L tokens costs intercept + s * w(L), with
 * w(L) = L + alpha L^2, in exact micro cost units. */
#include "internal.h"

brs_wide brs_sample_weight(const struct brs_cost_model *model, uint32_t length)
{
    return (brs_wide)length * BRS_COST_UNITS_PER_ONE +
           (brs_wide)model->alpha * length * length;
}

brs_wide brs_group_cost(const struct brs_cost_model *model, uint32_t head, size_t size)
{
    return model->intercept + (brs_wide)size * brs_sample_weight(model, head);
}

/* The largest group allowed by the token cap for a head of this length. */
size_t brs_cap_size(const struct brs_cost_model *model, uint32_t head, size_t remaining)
{
    if (model->max_tokens == 0) return remaining;
    uint64_t s = model->max_tokens / head;
    return s < remaining ? (size_t)s : remaining;
}
