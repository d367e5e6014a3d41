/* plan_query.c - the read-only queries of a plan. Every failure writes the
 * plan's message, the const calls included (brs.h). */
#include "api/handles.h"
#include "api/message.h"
#include "util/wide.h"

static const char null_handle_message[] = "the handle is NULL";

static brs_status check_ready(const brs_plan *plan, const char *call)
{
    if (plan->ready) return BRS_OK;
    return brs_fail(&plan->message, BRS_ERR_STATE,
                    "%s: the plan holds no step: call brs_plan_compute or brs_plan_load first "
                    "(or the last one failed)",
                    call);
}

static brs_status null_out(const brs_plan *plan, const char *call)
{
    return brs_fail(&plan->message, BRS_ERR_NULL_POINTER, "%s: an out-parameter is NULL", call);
}

static brs_status unknown_plan_key(const brs_plan *plan, brs_plan_key key, const char *call,
                                   const char *other)
{
    return brs_fail(&plan->message, BRS_ERR_UNSUPPORTED,
                    "%s: %d is not a key of this call (an unknown key, or one of %s)", call,
                    (int)key, other);
}

brs_status brs_plan_get_int(int64_t *out, const brs_plan *plan, brs_plan_key key)
{
    static const char call[] = "brs_plan_get_int";
    if (!plan) return BRS_ERR_NULL_POINTER;
    if (!out) return null_out(plan, call);
    if (check_ready(plan, call) != BRS_OK) return BRS_ERR_STATE;
    switch (key) {
    case BRS_PLAN_EPOCH: *out = (int64_t)plan->epoch; return BRS_OK;
    case BRS_PLAN_STEP: *out = (int64_t)plan->step; return BRS_OK;
    case BRS_PLAN_NUM_SAMPLES: *out = (int64_t)plan->num_samples; return BRS_OK;
    case BRS_PLAN_DP_SIZE: *out = (int64_t)plan->dp_size; return BRS_OK;
    case BRS_PLAN_GRAD_ACCUM: *out = (int64_t)plan->grad_accum; return BRS_OK;
    case BRS_PLAN_TOTAL_PADDED_TOKENS: *out = (int64_t)plan->total_padded; return BRS_OK;
    case BRS_PLAN_TOTAL_REAL_TOKENS: *out = (int64_t)plan->total_real; return BRS_OK;
    case BRS_PLAN_MAX_PADDED_TOKENS: *out = (int64_t)plan->max_padded; return BRS_OK;
    case BRS_PLAN_MEGABATCH_SIZE: *out = (int64_t)plan->megabatch_size; return BRS_OK;
    case BRS_PLAN_TOTAL_ENCODER_TOKENS: *out = (int64_t)plan->total_encoder_tokens; return BRS_OK;
    case BRS_PLAN_MAX_ENCODER_TOKENS: *out = (int64_t)plan->max_encoder_tokens; return BRS_OK;
    default: return unknown_plan_key(plan, key, call, "brs_plan_get_double");
    }
}

static double cost_to_double(brs_wide cost)
{
    return (double)cost / (double)BRS_COST_UNITS_PER_ONE;
}

brs_status brs_plan_get_double(double *out, const brs_plan *plan, brs_plan_key key)
{
    static const char call[] = "brs_plan_get_double";
    if (!plan) return BRS_ERR_NULL_POINTER;
    if (!out) return null_out(plan, call);
    if (check_ready(plan, call) != BRS_OK) return BRS_ERR_STATE;
    switch (key) {
    case BRS_PLAN_MAX_COST: *out = cost_to_double(plan->max_cost); return BRS_OK;
    case BRS_PLAN_LOWER_BOUND: *out = cost_to_double(plan->lower_bound); return BRS_OK;
    case BRS_PLAN_TOTAL_COST: *out = cost_to_double(plan->total_cost); return BRS_OK;
    case BRS_PLAN_MICRO_SYNC_TIME: *out = cost_to_double(plan->micro_sync); return BRS_OK;
    case BRS_PLAN_STEP_SYNC_TIME: *out = cost_to_double(plan->step_sync); return BRS_OK;
    case BRS_PLAN_TIME_LOWER_BOUND: *out = cost_to_double(plan->time_lower_bound); return BRS_OK;
    case BRS_PLAN_ENCODER_COST: *out = cost_to_double(plan->total_encoder_cost); return BRS_OK;
    default: return unknown_plan_key(plan, key, call, "brs_plan_get_int");
    }
}

static brs_status slot_index(size_t *slot, const brs_plan *plan, int64_t rank, int64_t micro,
                             const char *call)
{
    if (check_ready(plan, call) != BRS_OK) return BRS_ERR_STATE;
    if (rank < 0 || (uint64_t)rank >= plan->dp_size)
        return brs_fail(&plan->message, BRS_ERR_OUT_OF_RANGE,
                        "%s: rank %lld is out of range: the plan has ranks 0..%zu", call,
                        (long long)rank, plan->dp_size - 1);
    if (micro < 0 || (uint64_t)micro >= plan->grad_accum)
        return brs_fail(&plan->message, BRS_ERR_OUT_OF_RANGE,
                        "%s: micro-step %lld is out of range: the plan has micro-steps 0..%zu",
                        call, (long long)micro, plan->grad_accum - 1);
    *slot = (size_t)rank * plan->grad_accum + (size_t)micro;
    return BRS_OK;
}

brs_status brs_plan_micro_batch(const uint64_t **indices, size_t *count, const brs_plan *plan,
                                int64_t rank, int64_t micro)
{
    static const char call[] = "brs_plan_micro_batch";
    if (!plan) return BRS_ERR_NULL_POINTER;
    if (!indices || !count) return null_out(plan, call);
    size_t slot = 0; /* set by slot_index on success; 0 quiets a false uninitialised warning */
    brs_status status = slot_index(&slot, plan, rank, micro, call);
    if (status != BRS_OK) return status;
    *indices = plan->indices + plan->slot_start[slot];
    *count = plan->slot_start[slot + 1] - plan->slot_start[slot];
    return BRS_OK;
}

brs_status brs_plan_micro_batch_stats(uint64_t *padded_tokens, uint64_t *real_tokens, double *cost,
                                      const brs_plan *plan, int64_t rank, int64_t micro)
{
    static const char call[] = "brs_plan_micro_batch_stats";
    if (!plan) return BRS_ERR_NULL_POINTER;
    if (!padded_tokens || !real_tokens || !cost) return null_out(plan, call);
    size_t slot = 0; /* set by slot_index on success; 0 quiets a false uninitialised warning */
    brs_status status = slot_index(&slot, plan, rank, micro, call);
    if (status != BRS_OK) return status;
    *padded_tokens = plan->padded[slot];
    *real_tokens = plan->real[slot];
    *cost = cost_to_double(plan->slot_cost[slot]);
    return BRS_OK;
}

brs_status brs_plan_micro_batch_encoder(uint64_t *encoder_tokens, uint64_t *images,
                                        double *encoder_cost, const brs_plan *plan, int64_t rank,
                                        int64_t micro)
{
    static const char call[] = "brs_plan_micro_batch_encoder";
    if (!plan) return BRS_ERR_NULL_POINTER;
    if (!encoder_tokens || !images || !encoder_cost) return null_out(plan, call);
    size_t slot = 0; /* set by slot_index on success; 0 quiets a false uninitialised warning */
    brs_status status = slot_index(&slot, plan, rank, micro, call);
    if (status != BRS_OK) return status;
    *encoder_tokens = plan->encoder_tokens[slot];
    *images = plan->images[slot];
    *encoder_cost = cost_to_double(plan->encoder_cost[slot]);
    return BRS_OK;
}

const char *brs_plan_last_error(const brs_plan *plan)
{
    return plan ? brs_message_text(&plan->message) : null_handle_message;
}
