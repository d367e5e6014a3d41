/* plan_load.c - brs_plan_load: micro-batches made elsewhere (a peer
 * sampler's), checked and described like a computed plan. */
#include "api/describe.h"
#include "api/handles.h"
#include "api/message.h"
#include "api/samples.h"
#include "api/settings.h"
#include "planner/cost_model.h"

static brs_status check_load(size_t *total, brs_plan *p, const brs_sampler *s,
                             const uint64_t *counts, size_t num_micro_batches)
{
    if (!s->lengths)
        return brs_fail(&p->message, BRS_ERR_STATE,
                        "brs_plan_load: the sampler has no lengths: call brs_sampler_set_lengths "
                        "first");
    uint64_t k = (uint64_t)s->config.dp_size * (uint64_t)s->config.grad_accum;
    if (num_micro_batches != k)
        return brs_fail(&p->message, BRS_ERR_INVALID_ARGUMENT,
                        "brs_plan_load: num_micro_batches = %zu, but the sampler's dp_size %lld x "
                        "grad_accum %lld = %llu: give one count per (rank, micro-step)",
                        num_micro_batches, (long long)s->config.dp_size,
                        (long long)s->config.grad_accum, (unsigned long long)k);
    uint64_t sum = 0;
    for (size_t i = 0; i < num_micro_batches; i++) {
        if (counts[i] == 0)
            return brs_fail(&p->message, BRS_ERR_INVALID_ARGUMENT,
                            "brs_plan_load: counts[%zu] is 0: every micro-batch needs at least "
                            "one sample",
                            i);
        sum += counts[i] < BRS_MAX_STEP_SAMPLES ? counts[i] : BRS_MAX_STEP_SAMPLES + 1;
        if (sum > BRS_MAX_STEP_SAMPLES)
            return brs_fail(&p->message, BRS_ERR_TOO_LARGE,
                            "brs_plan_load: the micro-batches hold more than %d samples",
                            BRS_MAX_STEP_SAMPLES);
    }
    *total = (size_t)sum;
    return BRS_OK;
}

brs_status brs_plan_load(brs_plan *plan, const brs_sampler *sampler, const uint64_t *indices,
                         const uint64_t *counts, size_t num_micro_batches, uint64_t epoch,
                         uint64_t step)
{
    if (!plan) return BRS_ERR_NULL_POINTER;
    plan->ready = 0;
    if (!sampler || !indices || !counts)
        return brs_fail(&plan->message, BRS_ERR_NULL_POINTER, "brs_plan_load: %s is NULL",
                        !sampler   ? "sampler"
                        : !indices ? "indices"
                                   : "counts");
    size_t total = 0;
    brs_status status = check_load(&total, plan, sampler, counts, num_micro_batches);
    if (status != BRS_OK) return status;
    for (size_t j = 0; j < total; j++)
        if (indices[j] >= sampler->count)
            return brs_fail(&plan->message, BRS_ERR_OUT_OF_RANGE,
                            "brs_plan_load: indices[%zu] = %llu is out of range: the dataset has "
                            "%zu samples",
                            j, (unsigned long long)indices[j], sampler->count);
    brs_samples_shape(plan, sampler, epoch, step);
    plan->num_samples = total;
    if (brs_samples_reserve(plan, total, plan->k) != BRS_OK)
        return brs_fail(&plan->message, BRS_ERR_NO_MEMORY,
                        "cannot allocate the buffers of a %zu-sample step", total);
    plan->slot_start[0] = 0;
    for (size_t s = 0; s < plan->k; s++) plan->slot_start[s + 1] = plan->slot_start[s] + counts[s];
    for (size_t j = 0; j < total; j++) plan->indices[j] = plan->draw_index[j] = indices[j];
    status = brs_samples_gather(plan, sampler, 0);
    if (status != BRS_OK) return status;
    struct brs_cost_model model = brs_settings_cost_model(sampler);
    brs_describe_slots(plan, sampler, &model, (int)sampler->config.packed);
    brs_message_clear(&plan->message);
    plan->ready = 1;
    return BRS_OK;
}
