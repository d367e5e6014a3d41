/* api/handles.h - the sampler and plan handles behind brs.h's opaque types. Internal, not
 * installed. */
#ifndef BRS_API_HANDLES_H
#define BRS_API_HANDLES_H

#include "brs.h"
#include "api/config.h"
#include "api/message.h"
#include "planner/baselines.h"
#include "planner/cost_model.h"
#include "planner/padding.h"
#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/*
 * Version of the plan algorithm (permutation, sort, planner, assignment).
 * It enters every fingerprint; bump it with any change of output and
 * regenerate tests/vectors.
 */
#define BRS_PLAN_ALGORITHM_VERSION 10

struct brs_sampler {
    const uint32_t *lengths; /* borrowed, or == owned */
    uint32_t *owned;
    size_t count;
    uint32_t max_length, min_length;
    size_t max_length_index;
    uint64_t lengths_hash;
    uint32_t *buckets; /* owned, strictly increasing; NULL when none are set */
    size_t bucket_count;
    struct brs_encoder_load *encoder; /* owned, encoder_count entries; NULL when none are set */
    size_t encoder_count;
    uint64_t encoder_hash;
    uint64_t max_sample_patches; /* the most patches of one sample, at max_patches_index */
    size_t max_patches_index;
    struct brs_config config;
    struct brs_message message;
};

/* The plan handle (plan.c, plan_describe.c, plan_load.c, plan_query.c). */
struct brs_plan {
    int ready;
    int batch; /* planned by brs_plan_compute_batch: errors name the batch */
    uint64_t epoch, step;
    size_t num_samples, k, dp_size, grad_accum;

    /* Results, by rank-major slot (rank * grad_accum + micro). */
    uint64_t *indices;   /* num_samples, slot by slot */
    size_t *slot_start;  /* k + 1 */
    uint64_t *padded;    /* k */
    uint64_t *real;      /* k */
    brs_wide *slot_cost; /* k */
    brs_wide max_cost, lower_bound, total_cost, micro_sync, step_sync, time_lower_bound;
    uint64_t total_padded, total_real, max_padded;
    uint64_t *encoder_tokens;   /* k: image patches by slot */
    uint64_t *images;           /* k */
    brs_wide *encoder_cost;     /* k: the encoder's share of slot_cost */
    uint64_t total_encoder_tokens, max_encoder_tokens;
    brs_wide total_encoder_cost;
    size_t megabatch_size; /* length_grouped, else 0 */

    /* Workspace, grown on demand and reused across steps. */
    size_t sample_capacity, group_capacity;
    uint64_t *draw_index;    /* n: dataset index of each drawn sample */
    uint32_t *draw_length;   /* n */
    uint64_t *sorted_index;  /* n: draw_index, longest first */
    uint32_t *sorted_length; /* n */
    uint32_t *padded_length; /* n: sorted_length padded, when the padding rounds */
    const uint32_t *planned_length; /* what the padded planner splits: one of the two */
    uint64_t *sort_scratch;  /* 2n */
    uint32_t *group_of;      /* n: packed mode */
    size_t *starts;          /* k + 1: padded mode */
    brs_wide *group_cost;    /* k */
    uint32_t *group_of_slot; /* k: fill_slots */
    uint32_t *slot_of;       /* k */
    uint32_t *pack_scratch;  /* 2k */
    struct brs_encoder_load *sorted_load; /* n: the sorted samples' images (two-part steps) */
    struct brs_grouped_order grouped; /* the length_grouped epoch order */

    struct brs_message message;
};

/* plan.c: buffers for n samples and k micro-batches (BRS_ERR_NO_MEMORY
 * leaves the plan's arrays as they were); the shape of a step of this
 * sampler; its cost model; the step's lengths gathered from draw_index,
 * checked (0, and above max_tokens when cap_checked) and sorted. */
brs_status brs_plan_reserve(brs_plan *p, size_t n, size_t k);
void brs_plan_set_shape(brs_plan *p, const brs_sampler *s, uint64_t epoch, uint64_t step);
struct brs_cost_model brs_plan_cost_model(const brs_sampler *s);
brs_status brs_plan_gather(brs_plan *p, const brs_sampler *s, int cap_checked);
/* plan.c: the padded tokens of packed slots whose real tokens are filled:
 * each row's total rounded by the sampler's padding. */
void brs_plan_pad_packed(brs_plan *p, const brs_sampler *s);
/* plan.c: step `step` of `epoch` of the epoch permutation drawn into p,
 * gathered and sorted as brs_plan_gather does (0 lengths checked, the cap
 * not): what the balanced planner starts from. The sampler is checked. */
brs_status brs_plan_draw_sorted(brs_plan *p, const brs_sampler *s, uint64_t epoch,
                                uint64_t step);
/* plan.c: step `step` of `epoch` of a sampler whose configuration is
 * checked (brs_sampler_check_config, or brs_plan_compute_batch's own checks) and
 * the step in range: drawn, gathered, planned with its strategy. */
brs_status brs_plan_step(brs_plan *p, const brs_sampler *s, uint64_t epoch, uint64_t step);
/* plan_describe.c: totals, peaks and the time bound of the filled slots
 * (lower_bound and weight_sum those of the step's samples); and the whole
 * description of slots filled elsewhere than by the planner. */
/* plan_describe.c: the encoder side of a plan without images (all 0). */
void brs_plan_no_images(brs_plan *p);
void brs_plan_summarise(brs_plan *p, brs_wide lower_bound, brs_wide weight_sum,
                        const struct brs_cost_model *model);
void brs_plan_describe(brs_plan *p, const brs_sampler *s, const struct brs_cost_model *model,
                       int packed);

/* encoder_loads.c: the images of dataset sample `index` (none without
 * loads); whether any of the step's drawn samples has an image; the check
 * of the loads against the lengths and max_encoder_tokens; the loads'
 * share of the fingerprint. */
struct brs_encoder_load brs_sampler_load(const struct brs_sampler *sampler, uint64_t index);
/* encoder_loads.c: the loads of n samples read into the sampler (its
 * earlier ones freed), or an error written to `message` (the sampler
 * unchanged). */
brs_status brs_encoder_loads_attach(struct brs_sampler *sampler, const uint32_t *image_patches,
                                    const uint64_t *image_offsets, size_t n,
                                    const struct brs_message *message);
int brs_plan_has_images(const brs_plan *p, const struct brs_sampler *s);
brs_status brs_encoder_check_config(const struct brs_sampler *sampler,
                                    const struct brs_message *message);
uint64_t brs_encoder_mix(uint64_t h, const struct brs_sampler *sampler);

/* sampler.c: the padding of the sampler's micro-batches (pad_to_multiple_of,
 * length buckets), and the largest sample length it admits under its cap
 * (brs_padding_limit). */
struct brs_padding brs_sampler_padding(const struct brs_sampler *sampler);
uint64_t brs_sampler_length_limit(const struct brs_sampler *sampler);
/* sampler.c */
brs_status brs_sampler_check_config(const struct brs_sampler *sampler,
                                    const struct brs_message *message);
uint64_t brs_sampler_steps_in_epoch(const struct brs_sampler *sampler);

#endif
