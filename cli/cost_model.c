/* cost_model.c - padded and packed micro-batch costs. */
#include "cost_model.h"

#include "fail.h"

static double get_double(const brs_sampler *sampler, brs_option key)
{
    double value;
    brs_status status = brs_sampler_get_double(&value, sampler, key);
    if (status != BRS_OK)
        cli_library_error(status, "reading the cost model", brs_sampler_last_error(sampler));
    return value;
}

cost_model cost_model_of(const brs_sampler *sampler)
{
    int64_t packed;
    brs_status status = brs_sampler_get_int(&packed, sampler, BRS_OPT_PACKED);
    if (status != BRS_OK)
        cli_library_error(status, "reading the cost model", brs_sampler_last_error(sampler));
    cost_model model = {get_double(sampler, BRS_OPT_ALPHA), get_double(sampler, BRS_OPT_INTERCEPT),
                        packed != 0};
    return model;
}

micro_batch_stats cost_model_measure(const cost_model *model, const uint32_t *lengths,
                                     const size_t *indices, size_t count)
{
    uint64_t longest = 0, tokens = 0;
    double squares = 0.0;
    for (size_t i = 0; i < count; i++) {
        uint64_t length = lengths[indices[i]];
        longest = length > longest ? length : longest;
        tokens += length;
        squares += (double)length * (double)length;
    }
    micro_batch_stats stats;
    stats.real_tokens = tokens;
    if (model->packed) {
        stats.padded_tokens = tokens;
        stats.cost = model->intercept + (double)tokens + model->alpha * squares;
    } else {
        double padded = (double)count * (double)longest;
        stats.padded_tokens = (uint64_t)count * longest;
        stats.cost = model->intercept + padded + model->alpha * padded * (double)longest;
    }
    return stats;
}
