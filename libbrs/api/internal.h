/* api/internal.h - what the files of api/ share: the sampler's configuration (options.c,
 * options.def), the handles, and the units of a step's path. Internal, not installed. */
#ifndef BRS_API_INTERNAL_H
#define BRS_API_INTERNAL_H

#include "brs.h"
#include "planner/planner.h"
#include "util/message.h"
#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* ---- the resolved configuration of a sampler (options.c, options.def). ---- */

/* The resolved configuration, one field per line of options.def: an INT
 * option is an int64_t of its name, a DOUBLE one a uint64_t name_micro in
 * units of 1e-6 (exact, identical cost arithmetic on every machine). Every
 * field is validated on set. */
#define BRS_CONFIG_FIELD_INT(name) int64_t name;
#define BRS_CONFIG_FIELD_DOUBLE(name) uint64_t name##_micro;
struct brs_config {
#define BRS_OPTION(key, name, type, lower, upper, fallback, scope, keyword, help, values) \
    BRS_CONFIG_FIELD_##type(name)
#include "api/options.def"
#undef BRS_OPTION
};

/* The last option key of libbrs 1.0: options after it enter the fingerprint
 * only when set to a value other than their default, so that every plan 1.0
 * could make keeps its fingerprint (tests/vectors). */
#define BRS_OPT_LAST_OF_1_0 BRS_OPT_INTERCEPT

/* options.c */
void brs_config_defaults(struct brs_config *config);
double brs_micro_to_double(uint64_t micro);
/* The fingerprint's share of the configuration: every option of
 * options.def whose scope is not RANK, mixed into h in table order. */
uint64_t brs_config_mix(uint64_t h, const struct brs_config *config);
/* brs_config_mix without the options of scope SPLIT (options.def: those
 * that only split a step among ranks and micro-steps): the stream's share. */
uint64_t brs_config_mix_stream(uint64_t h, const struct brs_config *config);

/* ---- the sampler and plan handles behind brs.h's opaque types. ---- */

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
    /* The shape vocabulary (api/vocabulary.c): chosen on first use by a
     * read-only call, under `vocabulary_busy`, for the fingerprint it was
     * chosen with; the status and message of a failed choice are kept. */
    atomic_flag vocabulary_busy;
    int vocabulary_chosen;
    uint64_t vocabulary_fingerprint;
    brs_status vocabulary_status;
    char vocabulary_message[BRS_MESSAGE_SIZE];
    struct brs_vocabulary vocabulary;
};

/* The plan handle (plan_handle.c, plan.c, step.c, samples.c, describe.c). */
struct brs_plan {
    int ready;
    int batch;             /* planned by brs_plan_compute_batch: errors name the batch */
    int within_vocabulary; /* planned within a shape vocabulary: group_length holds the lengths */
    struct brs_step resolved; /* the step resolved once (brs_step_resolve) */
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
    uint64_t *encoder_tokens; /* k: image patches by slot */
    uint64_t *images;         /* k */
    brs_wide *encoder_cost;   /* k: the encoder's share of slot_cost */
    uint64_t total_encoder_tokens, max_encoder_tokens;
    brs_wide total_encoder_cost;
    size_t megabatch_size; /* length_grouped, else 0 */

    /* Workspace, grown on demand and reused across steps. */
    size_t sample_capacity, group_capacity;
    uint64_t *draw_index;           /* n: dataset index of each drawn sample */
    uint32_t *draw_length;          /* n */
    uint64_t *sorted_index;         /* n: draw_index, longest first */
    uint32_t *sorted_length;        /* n */
    uint32_t *padded_length;        /* n: sorted_length padded, when the padding rounds */
    const uint32_t *planned_length; /* what the padded planner splits: one of the two */
    uint64_t *sort_scratch;         /* 2n */
    uint32_t *group_of;             /* n: packed mode */
    size_t *starts;                 /* k + 1: padded mode */
    uint32_t *group_length;         /* k: each group's padded length, within a shape vocabulary */
    brs_wide *group_cost;           /* k */
    uint32_t *group_of_slot;        /* k: fill_slots */
    uint32_t *slot_of;              /* k */
    uint32_t *pack_scratch;         /* 2k */
    struct brs_encoder_load *sorted_load; /* n: the sorted samples' images (two-part steps) */
    struct brs_grouped_order grouped;     /* the length_grouped epoch order */

    /* Context parallelism (context_parallel.c): the plan's cp_size (1: none,
     * and the slots are the ranks), its micro-batches and where each starts
     * in `indices`, each (global rank, micro-step)'s micro-batch (NO_GROUP: a
     * placeholder), the peak tokens of a rank. */
    size_t cp_size;
    int cp_active;
    struct brs_cp_plan cp;
    size_t *cp_start, *cp_count; /* each micro-batch's first position in indices, its size */
    uint32_t *cp_rank_group;     /* dp_size * cp_size * grad_accum, rank-major */
    size_t cp_sample_capacity, cp_slot_capacity;
    uint64_t max_rank_tokens;

    struct brs_message message;
};

/* ---- what a sampler's settings imply together (settings.c). ---- */

/* The checks that need several options or the lengths, the reason written
 * into `message`. */
brs_status brs_settings_check(const struct brs_sampler *sampler, const struct brs_message *message);
/* BRS_ERR_TOO_LARGE where dp_size x grad_accum passes the micro-batches
 * a step may have: the check a dataset and a batch share. */
brs_status brs_settings_check_micro_batches(const struct brs_config *c,
                                            const struct brs_message *message);
/* The steps of an epoch (the same on every rank). */
uint64_t brs_settings_steps(const struct brs_sampler *sampler);
/* The padding of the sampler's micro-batches (pad_to_multiple_of, length
 * buckets), and the largest sample length it admits under its cap
 * (brs_padding_limit). */
struct brs_padding brs_settings_padding(const struct brs_sampler *sampler);
uint64_t brs_settings_length_limit(const struct brs_sampler *sampler);
/* The error of lengths[index] == 0 given to the sampler or to a batch. */
brs_status brs_settings_zero_length(const struct brs_message *message, size_t index);
/* The cost model the planner prices the sampler's micro-batches with; a
 * packed row's cap is its total's, the padding's rounding included. */
struct brs_cost_model brs_settings_cost_model(const brs_sampler *s);
/* The same with the sampler's padding already resolved (a step's). */
struct brs_cost_model brs_settings_cost_model_padded(const brs_sampler *s,
                                                     const struct brs_padding *padding);

/* ---- a step's samples in the plan's buffers (samples.c). ---- */

/* The shape of a step of this sampler: epoch, step, dp_size, grad_accum,
 * K, no megabatch. */
void brs_samples_shape(brs_plan *p, const brs_sampler *s, uint64_t epoch, uint64_t step);
/* Buffers for n samples and k micro-batches (BRS_ERR_NO_MEMORY leaves the
 * plan's arrays as they were). */
brs_status brs_samples_reserve(brs_plan *p, size_t n, size_t k);
/* The shape and the sample count of step `step` of `epoch` (B, or a kept
 * last step's remainder topped up to K), the buffers grown to them; the
 * error names the step's size. */
brs_status brs_samples_open(brs_plan *p, const brs_sampler *s, uint64_t epoch, uint64_t step);
/* The opened step's dataset indices in draw order, into draw_index: from
 * the epoch permutation, or from epoch_order (length_grouped) if not NULL. */
void brs_samples_draw(brs_plan *p, const brs_sampler *s, uint64_t epoch, uint64_t step,
                      const uint64_t *epoch_order);
/* The lengths of draw_index gathered, checked (0, and above max_tokens
 * when cap_checked: a borrowed array changed since set_lengths), sorted
 * longest first and padded (planned_length). */
brs_status brs_samples_gather(brs_plan *p, const brs_sampler *s, int cap_checked);
/* Opened, drawn from the epoch permutation and gathered with the cap not
 * checked: what the balanced planner starts from. The sampler is checked. */
brs_status brs_samples_draw_sorted(brs_plan *p, const brs_sampler *s, uint64_t epoch,
                                   uint64_t step);

/* ---- one step into the plan handle (step.c). ---- */

/* Step `step` of `epoch` of a sampler whose configuration is checked
 * (brs_settings_check, or brs_plan_compute_batch's own checks) and the step
 * in range, within `vocabulary` (brs_vocabulary_for_step; NULL plans
 * without one, whatever max_shapes says): drawn, gathered, planned with its
 * strategy, described; the plan is ready on BRS_OK. */
brs_status brs_step_plan(brs_plan *p, const brs_sampler *s, uint64_t epoch, uint64_t step,
                         const struct brs_vocabulary *vocabulary);
/* brs_step_plan's first half: the step drawn, gathered and resolved into
 * p->resolved, not planned (what the vocabulary's choice plans itself). */
brs_status brs_step_draw(brs_plan *p, const brs_sampler *s, uint64_t epoch, uint64_t step,
                         const struct brs_vocabulary *vocabulary);
/* The error of a step the planner could not plan (status, with what
 * planned says failed): what would plan it, in p's message. */
brs_status brs_step_error(brs_plan *p, const brs_sampler *s, const struct brs_planned *planned,
                          brs_status status);
/* The gathered step, its padding resolved by brs_samples_gather, resolved
 * once into p->resolved (planner/planner.h): what every planner,
 * description and error of the step reads. */
void brs_step_resolve(brs_plan *p, const brs_sampler *s, const struct brs_vocabulary *vocabulary);

/* ---- the guards every query of a plan opens with (guards.c). ---- */

/* BRS_OK where the plan is not NULL, `outputs` says every out-parameter
 * is given and the plan holds a step; else BRS_ERR_NULL_POINTER (with the
 * message naming the call where the plan is not NULL) or BRS_ERR_STATE. */
brs_status brs_guards_open(const brs_plan *plan, int outputs, const char *call);

/* ---- context parallelism (context_parallel.c). ---- */

/* The layout the sampler's options give (inactive without cp_size > 1 or
 * max_tokens_per_rank), its cap on a rank's share within what the
 * sampler's padding admits. */
struct brs_cp_layout brs_cp_layout_of(const brs_sampler *s, const struct brs_padding *padding);
/* h mixed with the context-parallel cost's form, for a sampler that plans
 * with context parallelism (h itself otherwise): brs_sampler_fingerprint. */
uint64_t brs_cp_fingerprint_mix(uint64_t h, const brs_sampler *s);
/* The checks of the context-parallel options together with the others and
 * the longest sample, padded as `padding` says. */
brs_status brs_cp_check(const brs_sampler *s, const struct brs_padding *padding,
                        const struct brs_message *message);
/* The options context parallelism does not plan with (padded mode, a fixed-size strategy,
 * max_tokens, max_shapes, images): checked when a step is planned, as max_shapes' are. */
brs_status brs_cp_check_combination(const brs_sampler *s, const struct brs_message *message);
/* The plan's buffers for a context-parallel step of n samples. */
brs_status brs_cp_reserve(brs_plan *p, size_t n);
/* The context-parallel plan in p->cp written into the slots (each dp rank's
 * slot holds its block's micro-batches of that micro-step) and described. */
void brs_cp_fill(brs_plan *p);
/* What brs_plan_free releases. */
void brs_cp_free(brs_plan *p);

/* ---- what a plan's micro-batches weigh (describe.c). ---- */

/* The encoder side of a plan without images (all 0). */
void brs_describe_no_images(brs_plan *p);
/* Totals, peaks and the time bound of the filled slots (lower_bound and
 * weight_sum those of the step's samples). */
void brs_describe_totals(brs_plan *p, brs_wide lower_bound, brs_wide weight_sum);
/* The padded tokens of packed slots whose real tokens are filled: each
 * row's total rounded by the step's padding. */
void brs_describe_packed_rows(brs_plan *p);
/* The shape of the planned micro-batch in slot `slot` (brs_shape_of,
 * planner/planner.h); (0, 0) for an empty slot of padded mode. */
struct brs_shape brs_describe_shape(const brs_plan *p, size_t slot, int packed);
/* The whole description of slots filled elsewhere than by the planner's
 * text plan (the baselines, a loaded plan, a two-part plan), from the
 * sampler's lengths and images. */
void brs_describe_slots(brs_plan *p, const brs_sampler *s);
/* The step time of the plan's sync model and the ranks' time in it as
 * useful work, padding and waiting (their sum is ranks x step_time). */
struct brs_time_split {
    brs_wide step_time, useful, padding, waiting;
};
void brs_describe_time_split(struct brs_time_split *out, const brs_plan *p);

/* ---- the images of a vision-language dataset beside its lengths (encoder_loads.c). ---- */

/* The images of dataset sample `index` (none without loads). */
struct brs_encoder_load brs_encoder_loads_of(const struct brs_sampler *sampler, uint64_t index);
/* The loads of n samples read into the sampler (its earlier ones freed), or
 * an error written to `message` (the sampler unchanged). */
brs_status brs_encoder_loads_attach(struct brs_sampler *sampler, const uint32_t *image_patches,
                                    const uint64_t *image_offsets, size_t n,
                                    const struct brs_message *message);
/* Whether any of the step's drawn samples has an image. */
int brs_encoder_loads_in_step(const brs_plan *p, const struct brs_sampler *s);
/* The check of the loads against the lengths and max_encoder_tokens. */
brs_status brs_encoder_loads_check(const struct brs_sampler *sampler,
                                   const struct brs_message *message);
/* The loads' share of the fingerprint. */
uint64_t brs_encoder_loads_mix(uint64_t h, const struct brs_sampler *sampler);

/* ---- the error of a step the cap cannot plan (cap_error.c). ---- */

/* BRS_ERR_CAP_INFEASIBLE for the gathered step of p (a brs_plan_compute
 * step, or the batch of brs_plan_compute_batch), naming what would plan
 * it: the least cap, found as the planner decides, or more micro-batches
 * (split->needed). Uses the plan's buffers: the plan holds no step. */
brs_status brs_cap_error(brs_plan *p, const brs_sampler *s, const struct brs_split *split);
/* The same where the encoder cap (or both caps at once) cannot plan a
 * two-part step as split. */
brs_status brs_cap_error_encoder(brs_plan *p, const brs_sampler *s);

/* ---- the sampler's shape vocabulary, chosen once and kept (vocabulary.c). ---- */

/* The vocabulary every plan of a checked sampler with max_shapes > 0 keeps
 * to, chosen on first use and kept while the fingerprint stays; failures
 * are written into `message`. */
brs_status brs_vocabulary_of(const struct brs_vocabulary **out, const brs_sampler *s,
                             const struct brs_message *message);
/* What a step of the sampler plans within: NULL without max_shapes (or
 * with a fixed-size strategy), else brs_vocabulary_of. The combinations a
 * step cannot plan (brs_cp_check_combination) are refused first. plan.c and
 * shapes.c fetch it before running a step (brs_step_plan), so that the
 * step's path never calls back up into the vocabulary's choice. */
brs_status brs_vocabulary_for_step(const struct brs_vocabulary **out, const brs_sampler *sampler,
                                   const struct brs_message *message);
/* BRS_ERR_UNSUPPORTED, written into `message`, where max_shapes is set
 * for what it does not plan (packed mode, images); checked when a step is
 * planned (api/step.c). */
brs_status brs_vocabulary_check(const brs_sampler *s, const struct brs_message *message);

#endif
