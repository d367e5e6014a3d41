/* sampler.h - sampler.c: the library's sampler and plans as the commands
 * use them: set up from the command line, narrowed to the steps and ranks
 * asked for, planned through checked calls that end the command with the
 * library's reason. */
#ifndef BRS_CLI_SAMPLER_H
#define BRS_CLI_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include <brs.h>

#include "args.h"

/* A validated sampler over `lengths` (borrowed: keep them alive) with every
 * option of `config`; the others keep the library's defaults. Bad values
 * exit 2 with the library's reason, named after the flag (or cost-model
 * key) that carried them. Free with brs_sampler_free. */
brs_sampler *sampler_setup(const cli_config *config, const uint32_t *lengths, size_t count);

/* The images of a lengths file's samples (its second column), when any
 * sample has one, set on the sampler and validated (a sample above
 * max_encoder_tokens exits 2 with the library's reason). */
void sampler_set_images(brs_sampler *sampler, const uint32_t *patches, const uint64_t *offsets,
                        size_t count);

/* Set one option on a sampler already set up, and validate it again. */
void sampler_set_int(brs_sampler *sampler, brs_option key, int64_t value);

/* An option as the sampler resolved it. */
int64_t sampler_get_int(const brs_sampler *sampler, brs_option key);
double sampler_get_double(const brs_sampler *sampler, brs_option key);

/* The number of steps per epoch of a validated sampler. */
uint64_t sampler_steps(brs_sampler *sampler);

/* A new, empty plan (exit 1 if it cannot be made). */
brs_plan *planning_new(void);

/* Plan `step` of `epoch`; a failure (e.g. an unsatisfiable --max-tokens)
 * exits with the library's message and the step's number. */
void planning_compute(brs_plan *plan, const brs_sampler *sampler, uint64_t epoch, uint64_t step);

/* An integer or double property of the computed plan (BRS_PLAN_*). */
int64_t planning_get_int(const brs_plan *plan, brs_plan_key key);
double planning_get_double(const brs_plan *plan, brs_plan_key key);

/* One micro-batch of the computed plan: its indices and what it weighs. */
typedef struct micro_batch {
    const uint64_t *indices; /* the plan's; valid until it is computed again */
    size_t count;
    uint64_t padded_tokens, real_tokens;
    double cost;
    uint64_t encoder_tokens, images; /* its images' patches and count; 0 without images */
} micro_batch;

/* The micro-batch of (rank, micro); reading a computed plan cannot fail
 * but through the system, so a failure exits 1. */
micro_batch planning_micro_batch(const brs_plan *plan, int64_t rank, int64_t micro);

/* Which steps and ranks a command covers (--step, --rank). */
typedef struct selection {
    uint64_t first_step, end_step; /* steps [first_step, end_step) */
    int64_t first_rank, end_rank;  /* ranks [first_rank, end_rank) */
} selection;

/* Every step of the epoch and every rank, or the one --step / --rank
 * names. A --step beyond the epoch is bad input (exit 2); --rank was
 * checked against --dp-size by the library already. */
selection selection_make(const cli_config *config, const brs_sampler *sampler,
                         uint64_t steps_per_epoch);

#endif
