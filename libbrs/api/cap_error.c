/* cap_error.c - the error of a step that max_tokens cannot plan, for
 * brs_plan_compute and brs_plan_compute_batch: it names what would plan the
 * step, the least cap (planner/least_cap.c: exact in padded mode, found by
 * planning in packed mode) or the micro-batches the cap needs. */
#include "api/internal.h"
#include "planner/planner.h"

#include <stdio.h>

/* The least max_tokens that plans the gathered step, 0 where none is known:
 * the padded planner splits the padded lengths, the packed one the raw
 * lengths into rows padded by the sampler's padding. */
static uint64_t least_cap(brs_plan *p, const brs_sampler *s)
{
    if (!s->config.packed)
        return brs_least_cap_padded(p->planned_length, p->num_samples, p->k, p->planned_length[0]);
    struct brs_split work = {.starts = p->starts, .group_of = p->group_of, .costs = p->group_cost};
    return brs_least_cap_packed(&work, &p->resolved, p->pack_scratch);
}

/* The batch's words: there is no step, epoch or batch_size to name. */
static brs_status batch_error(brs_plan *p, const brs_sampler *s, const struct brs_split *split)
{
    long long cap = (long long)s->config.max_tokens;
    /* padded: the greedy count from the long end is the least any split
     * needs, so the least cap is exact; packed: found by planning */
    uint64_t least = least_cap(p, s);
    const char *how = s->config.packed ? ", found by planning" : "";
    if (split->needed > 0 && least != 0)
        return brs_fail(&p->message, BRS_ERR_CAP_INFEASIBLE,
                        "the batch of %zu samples needs at least %zu micro-batches to keep "
                        "every micro-batch within max_tokens %lld, but dp_size x grad_accum "
                        "gives %zu: raise max_tokens to %llu (the least with which %zu "
                        "micro-batches plan it%s), or dp_size x grad_accum to at least %zu",
                        p->num_samples, split->needed, cap, p->k, (unsigned long long)least, p->k,
                        how, split->needed);
    if (least != 0)
        return brs_fail(&p->message, BRS_ERR_CAP_INFEASIBLE,
                        "the batch of %zu samples: packing found no split into %zu "
                        "micro-batches within max_tokens %lld: raise max_tokens to %llu (the "
                        "least with which %zu micro-batches plan it%s), or dp_size x grad_accum",
                        p->num_samples, p->k, cap, (unsigned long long)least, p->k, how);
    return brs_fail(&p->message, BRS_ERR_CAP_INFEASIBLE,
                    "the batch of %zu samples: no split into %zu micro-batches within "
                    "max_tokens %lld was found (the bound does not prove it impossible): raise "
                    "max_tokens or dp_size x grad_accum",
                    p->num_samples, p->k, cap);
}

/* A step the cap cannot plan: what would (the least cap, found as the
 * planner decides, or more micro-batches). */
brs_status brs_cap_error(brs_plan *p, const brs_sampler *s, const struct brs_split *split)
{
    if (p->batch) return batch_error(p, s, split);
    uint64_t least = least_cap(p, s);
    char raise[160] = "raise max_tokens";
    if (least != 0)
        snprintf(raise, sizeof raise,
                 "raise max_tokens to %llu (the least with which this step "
                 "plans into %zu micro-batches%s)",
                 (unsigned long long)least, p->k, s->config.packed ? ", found by planning" : "");
    if (split->needed > 0)
        return brs_fail(&p->message, BRS_ERR_CAP_INFEASIBLE,
                        "step %llu of epoch %llu needs at least %zu micro-batches to keep every "
                        "micro-batch within max_tokens %lld, but dp_size x grad_accum gives %zu: "
                        "%s, raise grad_accum so that dp_size * grad_accum >= %zu, or lower "
                        "batch_size",
                        (unsigned long long)p->step, (unsigned long long)p->epoch, split->needed,
                        (long long)s->config.max_tokens, p->k, raise, split->needed);
    return brs_fail(&p->message, BRS_ERR_CAP_INFEASIBLE,
                    "step %llu of epoch %llu: packing found no split into %zu micro-batches "
                    "within max_tokens %lld%s: %s or grad_accum",
                    (unsigned long long)p->step, (unsigned long long)p->epoch, p->k,
                    (long long)s->config.max_tokens,
                    least != 0 ? "" : " (the bound does not prove it impossible)", raise);
}

/* A step the encoder cap (or both caps at once) cannot plan as split. */
brs_status brs_cap_error_encoder(brs_plan *p, const brs_sampler *s)
{
    char where[96], text_cap[64] = "";
    if (p->batch)
        snprintf(where, sizeof where, "the batch of %zu samples", p->num_samples);
    else
        snprintf(where, sizeof where, "step %llu of epoch %llu", (unsigned long long)p->step,
                 (unsigned long long)p->epoch);
    if (s->config.max_tokens != 0)
        snprintf(text_cap, sizeof text_cap, " and max_tokens %lld",
                 (long long)s->config.max_tokens);
    return brs_fail(&p->message, BRS_ERR_CAP_INFEASIBLE,
                    "%s: no split into %zu micro-batches within max_encoder_tokens %lld (image "
                    "patches)%s was found: raise max_encoder_tokens or grad_accum",
                    where, p->k, (long long)s->config.max_encoder_tokens, text_cap);
}
