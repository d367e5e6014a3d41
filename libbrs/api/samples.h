/* api/samples.h - a step's samples in the plan's buffers (samples.c). Internal, not
 * installed. */
#ifndef BRS_API_SAMPLES_H
#define BRS_API_SAMPLES_H

#include "brs.h"
#include "api/handles.h"

#include <stddef.h>
#include <stdint.h>

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

#endif
