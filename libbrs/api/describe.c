/* describe.c - what a plan's micro-batches weigh: tokens and costs of
 * micro-batches formed elsewhere than by the planner (the baselines, a
 * loaded plan), the two synchronised step times of the slots as dealt, the
 * totals and the lower bounds, all with the one cost model of
 * planner/planner.h. */
#include "api/internal.h"
#include "planner/planner.h"
#include "util/wide.h"

void brs_describe_no_images(brs_plan *p)
{
    for (size_t slot = 0; slot < p->k; slot++) {
        p->encoder_tokens[slot] = p->images[slot] = 0;
        p->encoder_cost[slot] = 0;
    }
}

/* Totals and the peak of the encoder side of the filled slots. */
static void summarise_encoder(brs_plan *p)
{
    p->total_encoder_tokens = p->max_encoder_tokens = 0;
    p->total_encoder_cost = 0;
    for (size_t slot = 0; slot < p->k; slot++) {
        p->total_encoder_tokens += p->encoder_tokens[slot];
        if (p->encoder_tokens[slot] > p->max_encoder_tokens)
            p->max_encoder_tokens = p->encoder_tokens[slot];
        p->total_encoder_cost += p->encoder_cost[slot];
    }
}

void brs_describe_totals(brs_plan *p, brs_wide lower_bound, brs_wide weight_sum)
{
    const struct brs_cost_model *model = &p->resolved.model;
    size_t k = p->k;
    p->lower_bound = lower_bound;
    p->max_cost = p->total_cost = 0;
    p->total_padded = p->total_real = p->max_padded = 0;
    for (size_t s = 0; s < k; s++) {
        if (p->slot_cost[s] > p->max_cost) p->max_cost = p->slot_cost[s];
        p->total_cost += p->slot_cost[s];
        p->total_padded += p->padded[s];
        p->total_real += p->real[s];
        if (p->padded[s] > p->max_padded) p->max_padded = p->padded[s];
    }
    /* Both sync times are at least the largest cost, and at least the share
     * of one rank in the least possible work. */
    p->time_lower_bound =
        brs_objective_time_floor(lower_bound, brs_least_work(model, k, weight_sum), p->dp_size);
    summarise_encoder(p);
}

struct brs_shape brs_describe_shape(const brs_plan *p, size_t slot, int packed)
{
    return brs_shape_of(p->slot_start[slot + 1] - p->slot_start[slot], p->padded[slot], packed);
}

void brs_describe_packed_rows(brs_plan *p)
{
    for (size_t slot = 0; slot < p->k; slot++)
        p->padded[slot] = brs_packed_row_length(&p->resolved, p->real[slot]);
}

/* The images of each slot: patches, count and encoder cost, the cost
 * added to the slot's. */
static void describe_images(brs_plan *p, const brs_sampler *s, const struct brs_cost_model *model)
{
    for (size_t slot = 0; slot < p->k; slot++) {
        uint64_t patches = 0, images = 0;
        brs_wide cost = 0;
        for (size_t i = p->slot_start[slot]; i < p->slot_start[slot + 1]; i++) {
            struct brs_encoder_load load = brs_encoder_loads_of(s, p->indices[i]);
            patches += load.patches;
            images += load.images;
            cost += brs_encoder_cost(model, &load);
        }
        p->encoder_tokens[slot] = patches;
        p->images[slot] = images;
        p->encoder_cost[slot] = cost;
        p->slot_cost[slot] += cost;
    }
}

/* What the images add to the bounds (objective.c), the step's loads read
 * in sorted order into sorted_load. */
static brs_wide image_bounds(brs_plan *p, const brs_sampler *s, const struct brs_cost_model *model,
                             brs_wide bound, brs_wide *weight_sum, int packed)
{
    for (size_t i = 0; i < p->num_samples; i++)
        p->sorted_load[i] = brs_encoder_loads_of(s, p->sorted_index[i]);
    return brs_objective_image_bound(packed ? p->sorted_length : p->planned_length, p->sorted_load,
                                     p->num_samples, model, bound, weight_sum);
}

/* Tokens and costs of micro-batches formed elsewhere than by the planner's
 * text plan (the baselines, a loaded plan, a two-part split): slot_start
 * and indices are filled, the step resolved (its sorted lengths, padded in
 * planned_length). A micro-batch is padded to its longest sample, rounded
 * by the step's padding; its images' encoder cost adds to its cost. */
void brs_describe_slots(brs_plan *p, const brs_sampler *s)
{
    const struct brs_step *step = &p->resolved;
    const struct brs_cost_model *model = &step->model;
    int packed = step->packed;
    for (size_t slot = 0; slot < p->k; slot++) {
        uint64_t longest = 0, real = 0;
        brs_wide weights = 0;
        size_t count = p->slot_start[slot + 1] - p->slot_start[slot];
        for (size_t i = p->slot_start[slot]; i < p->slot_start[slot + 1]; i++) {
            uint32_t length = s->lengths[p->indices[i]];
            if (length > longest) longest = length;
            real += length;
            weights += brs_sample_weight(model, length);
        }
        p->real[slot] = real;
        uint64_t padded_length = brs_padding_apply(&step->padding, longest);
        p->padded[slot] = packed ? real : (uint64_t)count * padded_length;
        p->slot_cost[slot] =
            packed ? brs_packed_cost(model, weights) + brs_packed_row_padding_cost(step, real)
                   : brs_group_cost(model, (uint32_t)padded_length, count);
    }
    if (packed) brs_describe_packed_rows(p);
    describe_images(p, s, model);
    brs_objective_sync_times(&p->micro_sync, &p->step_sync, p->slot_cost, p->dp_size,
                             p->grad_accum);
    brs_wide weight_sum, bound = packed
                                     ? brs_objective_packed_bound(p->sorted_length, p->num_samples,
                                                                  p->k, model, &weight_sum)
                                     : brs_search_lower_bound(p->planned_length, p->num_samples,
                                                              p->k, model, &weight_sum);
    if (s->encoder) bound = image_bounds(p, s, model, bound, &weight_sum, packed);
    brs_describe_totals(p, bound, weight_sum);
    if (!packed) {
        /* the padded planner's certified bound, as for a computed plan; one
         * that breaks the cap is bounded without it */
        struct brs_step bounded = *step;
        if (model->max_tokens && p->max_padded > model->max_tokens) bounded.model.max_tokens = 0;
        brs_wide certified = brs_objective_step_time_bound(&bounded);
        if (certified > p->time_lower_bound) p->time_lower_bound = certified;
    }
}

/* The rank-time of the step split three ways (brs.h, BRS_PLAN_STEP_TIME):
 * every rank is held for the step time T of the sync model, so the ranks
 * spend ranks x T in all. Of it, the micro-batches' costs (total_cost) are
 * work, and the rest is waiting at the synchronisation: under "micro_step"
 * each micro-step's slowest rank's cost minus each rank's, under "step" the
 * slowest rank's sum minus each rank's, both summed over ranks (and
 * micro-steps), which is ranks x T - total_cost either way. Useful work is
 * what the samples would cost unpadded: each sample's own weight, the
 * encoder's cost of its images, and one intercept per micro-batch run on a
 * rank; padding is the rest of the work (with context parallelism also the
 * sharding's communication). */
void brs_describe_time_split(struct brs_time_split *out, const brs_plan *p)
{
    const struct brs_cost_model *model = &p->resolved.model;
    size_t ranks = p->dp_size, runs = p->k;
    if (p->cp_active) {
        ranks *= p->cp_size;
        runs = 0;
        for (size_t g = 0; g < p->cp.count; g++) runs += p->cp.degree[g];
    }
    brs_wide weights = 0;
    for (size_t i = 0; i < p->num_samples; i++)
        weights += brs_sample_weight(model, p->sorted_length[i]);
    brs_wide useful = brs_least_work(model, runs, weights) + p->total_encoder_cost;
    if (useful > p->total_cost) useful = p->total_cost; /* never more than the work done */
    out->step_time = p->resolved.sync == BRS_SYNC_STEP ? p->step_sync : p->micro_sync;
    out->useful = useful;
    out->padding = p->total_cost - useful;
    out->waiting = (brs_wide)ranks * out->step_time - p->total_cost;
}
