/* epoch_check.c - brs_sampler_check_epoch: whether max_tokens lets every
 * step of an epoch be planned, decided before the first step is planned.
 *
 * The balanced padded planner refuses a step exactly when the greedy split
 * from the long end needs more than K = dp_size x grad_accum groups, and
 * the least cap that plans a step follows from that count
 * (planner/least_cap.c). So the check draws and sorts each step as
 * brs_plan_compute does and asks the same questions: O(B) per step, one
 * pass over the epoch. The epoch's least cap is the largest over its
 * steps, and a step needs a search only when it beats the largest so far. */
#include "api/internal.h"
#include "planner/planner.h"
#include "util/too_long.h"

#include <stdio.h>

/* What the pass learns: the least cap for every step, and under the
 * configured cap the most micro-batches a step needs and the first step
 * that needs them. */
struct epoch_need {
    uint64_t cap;
    size_t groups;
    uint64_t worst_step;
};

/* A sample above the configured cap inside the step, although the sampler
 * found none at set_lengths: the borrowed array changed (plan.c reports it
 * the same way when planning). */
static brs_status changed_length(const brs_sampler *s, const brs_plan *p, uint64_t cap)
{
    return brs_fail(&s->message, BRS_ERR_SAMPLE_TOO_LONG,
                    "lengths[%llu] = %u is above max_tokens %llu (epoch %llu, step %llu): the "
                    "borrowed lengths array changed after brs_sampler_set_lengths; keep it "
                    "unchanged or set the lengths again",
                    (unsigned long long)p->sorted_index[0], p->sorted_length[0],
                    (unsigned long long)cap, (unsigned long long)p->epoch,
                    (unsigned long long)p->step);
}

/* One pass over the epoch's steps. `cap` is the configured max_tokens, 0
 * when none is set or some sample is above it (no count of micro-batches
 * helps then). */
static brs_status scan_epoch(struct epoch_need *need, const brs_sampler *s, brs_plan *p,
                             uint64_t epoch, uint64_t cap)
{
    uint64_t steps = brs_settings_steps(s);
    for (uint64_t step = 0; step < steps; step++) {
        brs_status status = brs_samples_draw_sorted(p, s, epoch, step);
        if (status != BRS_OK)
            return brs_fail(&s->message, status, "%s", brs_message_text(&p->message));
        const uint32_t *sorted = p->planned_length;
        size_t n = p->num_samples;
        need->cap = brs_least_cap_padded(sorted, n, p->k, need->cap);
        if (cap == 0) continue;
        if (sorted[0] > cap) return changed_length(s, p, cap);
        size_t groups = brs_least_cap_groups(sorted, n, cap, n);
        if (groups > need->groups) {
            need->groups = groups;
            need->worst_step = step;
        }
    }
    return BRS_OK;
}

static brs_status report(const brs_sampler *s, const struct epoch_need *need, uint64_t epoch,
                         brs_status config_status)
{
    const struct brs_config *c = &s->config;
    size_t k = (size_t)(c->dp_size * c->grad_accum);
    struct brs_padding padding = brs_settings_padding(s);
    uint64_t longest = brs_padding_apply(&padding, s->max_length);
    if (config_status == BRS_ERR_SAMPLE_TOO_LONG) {
        char sample[32], shown[48] = "", limit[48], fix[160];
        snprintf(sample, sizeof sample, "sample %zu", s->max_length_index);
        if (longest != s->max_length)
            snprintf(shown, sizeof shown, ", padded to %llu", (unsigned long long)longest);
        snprintf(limit, sizeof limit, "max_tokens %lld", (long long)c->max_tokens);
        snprintf(fix, sizeof fix,
                 "raise max_tokens to %llu (the least that plans every step of epoch %llu; the "
                 "longest sample alone needs %llu)",
                 (unsigned long long)need->cap, (unsigned long long)epoch,
                 (unsigned long long)longest);
        return brs_too_long_fail(&s->message,
                                 &(struct brs_too_long){sample, s->max_length, shown, limit, fix});
    }
    if (need->groups > k)
        return brs_fail(&s->message, BRS_ERR_CAP_INFEASIBLE,
                        "max_tokens %lld cannot plan epoch %llu: step %llu needs at least %zu "
                        "micro-batches, but dp_size x grad_accum gives %zu: raise max_tokens to "
                        "%llu (the least that plans every step of the epoch), raise grad_accum "
                        "so that dp_size * grad_accum >= %zu, or lower batch_size",
                        (long long)c->max_tokens, (unsigned long long)epoch,
                        (unsigned long long)need->worst_step, need->groups, k,
                        (unsigned long long)need->cap, need->groups);
    return BRS_OK;
}

brs_status brs_sampler_check_epoch(uint64_t *min_max_tokens, uint64_t *micro_batches,
                                   const brs_sampler *sampler, uint64_t epoch)
{
    if (!sampler) return BRS_ERR_NULL_POINTER;
    if (!min_max_tokens || !micro_batches)
        return brs_fail(&sampler->message, BRS_ERR_NULL_POINTER,
                        "brs_sampler_check_epoch: %s is NULL",
                        !min_max_tokens ? "min_max_tokens" : "micro_batches");
    /* A sample above the cap is an error the pass can still size. */
    brs_status config_status = brs_settings_check(sampler, &sampler->message);
    if (config_status != BRS_OK && config_status != BRS_ERR_SAMPLE_TOO_LONG) return config_status;
    /* ... unless it is above the last length bucket: no cap helps then. */
    struct brs_padding padding = brs_settings_padding(sampler);
    uint64_t longest = brs_padding_apply(&padding, sampler->max_length);
    if (longest == 0) return config_status;
    const struct brs_config *c = &sampler->config;
    if (c->packed)
        return brs_fail(&sampler->message, BRS_ERR_UNSUPPORTED,
                        "brs_sampler_check_epoch: packed mode's cap is bin packing, which only "
                        "planning a step settles; the check covers the padded planner");
    if (c->strategy != BRS_STRATEGY_BALANCED) {
        /* The fixed-size strategies do not bend to max_tokens: only a
         * sample above it stops them, and any count of micro-batches plans. */
        *min_max_tokens = longest;
        *micro_batches = config_status == BRS_OK ? 1 : 0;
        return config_status;
    }
    brs_plan *plan;
    if (brs_plan_new(&plan) != BRS_OK)
        return brs_fail(&sampler->message, BRS_ERR_NO_MEMORY, "cannot allocate a plan");
    uint64_t cap = config_status == BRS_OK ? (uint64_t)c->max_tokens : 0;
    /* brs_settings_check refuses a cap below the dataset's longest sample,
     * drawn in this epoch or not (drop_last may leave it out). */
    struct epoch_need need = {longest, cap == 0 ? 1 : 0, 0};
    brs_status status = scan_epoch(&need, sampler, plan, epoch, cap);
    brs_plan_free(plan);
    if (status != BRS_OK) return status;
    *min_max_tokens = need.cap;
    *micro_batches = config_status == BRS_OK ? need.groups : 0;
    return report(sampler, &need, epoch, config_status);
}
