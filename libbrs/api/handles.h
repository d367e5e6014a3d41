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
#include "planner/vocabulary.h"
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

/* The plan handle (plan.c, step.c, samples.c, describe.c, plan_load.c, plan_query.c). */
struct brs_plan {
    int ready;
    int batch;             /* planned by brs_plan_compute_batch: errors name the batch */
    int within_vocabulary; /* planned within a shape vocabulary: group_length holds the lengths */
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

    struct brs_message message;
};

#endif
