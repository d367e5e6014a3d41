/* samples.c - a step's samples in the plan's buffers: its shape, the
 * buffers grown to it, the dataset indices drawn from the epoch's order,
 * their lengths gathered, checked, sorted longest first and padded as the
 * collator pads. What the planner and the baselines then split. */
#include "api/internal.h"
#include "draw/prng.h"
#include "draw/sort.h"
#include "planner/planner.h"
#include "util/wide.h"

#include <stdlib.h>
#include <string.h>

void brs_samples_shape(brs_plan *p, const brs_sampler *s, uint64_t epoch, uint64_t step)
{
    p->epoch = epoch;
    p->step = step;
    p->dp_size = (size_t)s->config.dp_size;
    p->grad_accum = (size_t)s->config.grad_accum;
    p->k = p->dp_size * p->grad_accum;
    p->megabatch_size = 0;
    p->cp_size = (size_t)s->config.cp_size;
    p->cp_active = 0;
}

/* realloc that leaves *pointer intact on failure. */
static int grow(void **pointer, size_t count, size_t size)
{
    void *p = realloc(*pointer, count * size);
    if (!p) return 0;
    *pointer = p;
    return 1;
}

brs_status brs_samples_reserve(brs_plan *p, size_t n, size_t k)
{
    if (n > p->sample_capacity) {
        if (!grow((void **)&p->indices, n, sizeof(uint64_t)) ||
            !grow((void **)&p->draw_index, n, sizeof(uint64_t)) ||
            !grow((void **)&p->draw_length, n, sizeof(uint32_t)) ||
            !grow((void **)&p->sorted_index, n, sizeof(uint64_t)) ||
            !grow((void **)&p->sorted_length, n, sizeof(uint32_t)) ||
            !grow((void **)&p->padded_length, n, sizeof(uint32_t)) ||
            !grow((void **)&p->sort_scratch, 2 * n, sizeof(uint64_t)) ||
            !grow((void **)&p->group_of, n, sizeof(uint32_t)) ||
            !grow((void **)&p->sorted_load, n, sizeof(struct brs_encoder_load)))
            return BRS_ERR_NO_MEMORY;
        p->sample_capacity = n;
    }
    if (k > p->group_capacity) {
        if (!grow((void **)&p->slot_start, k + 1, sizeof(size_t)) ||
            !grow((void **)&p->padded, k, sizeof(uint64_t)) ||
            !grow((void **)&p->real, k, sizeof(uint64_t)) ||
            !grow((void **)&p->slot_cost, k, sizeof(brs_wide)) ||
            !grow((void **)&p->starts, k + 1, sizeof(size_t)) ||
            !grow((void **)&p->group_length, k, sizeof(uint32_t)) ||
            !grow((void **)&p->group_cost, k, sizeof(brs_wide)) ||
            !grow((void **)&p->group_of_slot, k, sizeof(uint32_t)) ||
            !grow((void **)&p->slot_of, k, sizeof(uint32_t)) ||
            !grow((void **)&p->pack_scratch, 2 * k, sizeof(uint32_t)) ||
            !grow((void **)&p->encoder_tokens, k, sizeof(uint64_t)) ||
            !grow((void **)&p->images, k, sizeof(uint64_t)) ||
            !grow((void **)&p->encoder_cost, k, sizeof(brs_wide)))
            return BRS_ERR_NO_MEMORY;
        p->group_capacity = k;
    }
    return BRS_OK;
}

/* The step's sample count: B, or the remainder of a kept last step, topped
 * up to k by wrapping around the permutation. */
static size_t step_size(const brs_sampler *s, uint64_t step, size_t b, size_t k)
{
    uint64_t start = step * b;
    if (start + b <= s->count) return b;
    size_t rest = (size_t)(s->count - start);
    return rest < k ? k : rest;
}

brs_status brs_samples_open(brs_plan *p, const brs_sampler *s, uint64_t epoch, uint64_t step)
{
    brs_samples_shape(p, s, epoch, step);
    size_t b = (size_t)s->config.batch_size * p->k;
    p->num_samples = step_size(s, step, b, p->k);
    if (brs_samples_reserve(p, p->num_samples, p->k) != BRS_OK)
        return brs_fail(&p->message, BRS_ERR_NO_MEMORY,
                        "cannot allocate the buffers of a %zu-sample step", p->num_samples);
    return BRS_OK;
}

/* The dataset index at each position of the step, in draw order: from the
 * epoch permutation, or from a precomputed epoch order (length_grouped).
 * The positions past the end of the epoch (the top-up) wrap around; they
 * are a loop of their own so that the main one has no test per sample. */
void brs_samples_draw(brs_plan *p, const brs_sampler *s, uint64_t epoch, uint64_t step,
                      const uint64_t *epoch_order)
{
    size_t b = (size_t)s->config.batch_size * p->k;
    struct brs_permutation perm;
    brs_permutation_init(&perm, s->count, (uint64_t)s->config.seed, epoch, (int)s->config.shuffle);
    uint64_t start = step * b;
    size_t inside = s->count - start < p->num_samples ? (size_t)(s->count - start) : p->num_samples;
    uint64_t *out = p->draw_index;
    if (epoch_order)
        memcpy(out, epoch_order + start, inside * sizeof *out);
    else
        brs_permutation_fill(&perm, start, inside, out);
    for (size_t j = inside; j < p->num_samples; j++) {
        uint64_t position = (start + j) % s->count;
        out[j] = epoch_order ? epoch_order[position] : brs_permutation_apply(&perm, position);
    }
}

/* The error of the first drawn sample whose length is 0 or above `limit`
 * (the longest length the cap and the padding admit); the lengths were
 * checked by set_lengths, but a borrowed array may have been changed since,
 * and such a length would break the planner's arithmetic, so it is an error
 * here, never a crash. */
static brs_status length_error(brs_plan *p, uint64_t limit, uint64_t cap)
{
    size_t j = 0;
    while (p->draw_length[j] != 0 && p->draw_length[j] <= limit) j++;
    uint32_t length = p->draw_length[j];
    if (length == 0)
        return brs_fail(&p->message, BRS_ERR_INVALID_LENGTH,
                        "lengths[%llu] is 0 (epoch %llu, step %llu): the borrowed lengths "
                        "array changed after brs_sampler_set_lengths; keep it unchanged or "
                        "set the lengths again",
                        (unsigned long long)p->draw_index[j], (unsigned long long)p->epoch,
                        (unsigned long long)p->step);
    if (limit == cap)
        return brs_fail(&p->message, BRS_ERR_SAMPLE_TOO_LONG,
                        "lengths[%llu] = %u is above max_tokens %llu (epoch %llu, step "
                        "%llu): the borrowed lengths array changed after "
                        "brs_sampler_set_lengths; keep it unchanged or set the lengths again",
                        (unsigned long long)p->draw_index[j], length, (unsigned long long)cap,
                        (unsigned long long)p->epoch, (unsigned long long)p->step);
    return brs_fail(&p->message, BRS_ERR_SAMPLE_TOO_LONG,
                    "lengths[%llu] = %u is above %llu, the longest sample that max_tokens %llu "
                    "and the padding (pad_to_multiple_of, length buckets) admit (epoch %llu, "
                    "step %llu): the borrowed lengths array changed after "
                    "brs_sampler_set_lengths; keep it unchanged or set the lengths again",
                    (unsigned long long)p->draw_index[j], length, (unsigned long long)limit,
                    (unsigned long long)cap, (unsigned long long)p->epoch,
                    (unsigned long long)p->step);
}

/* How many samples ahead the gather asks for a length, from how large a
 * dataset on (4 MiB of lengths). */
enum { PREFETCH_AHEAD = 64, PREFETCH_DATASET = 1 << 20 };

/* The lengths the padded planner splits: the sorted lengths, padded as the
 * collator pads (planner/planner.h, "The padding") when the padding rounds any. */
static void pad_sorted(brs_plan *p, const struct brs_padding *padding)
{
    p->planned_length = p->sorted_length;
    if (brs_padding_is_identity(padding)) return;
    brs_padding_apply_all(p->padded_length, p->sorted_length, p->num_samples, padding);
    p->planned_length = p->padded_length;
}

/* Gathers the drawn samples' lengths, checks them (length_error; the cap
 * only when cap_checked) and sorts them longest first. The step's padding
 * is resolved here, once, into p->resolved.padding (brs_step_resolve keeps
 * it). */
brs_status brs_samples_gather(brs_plan *p, const brs_sampler *s, int cap_checked)
{
    uint64_t cap = cap_checked ? (uint64_t)s->config.max_tokens : 0;
    /* A valid length is in [1, limit], so length - 1 < limit, one unsigned
     * compare; the flags are or-ed without a branch, which keeps the loads
     * independent, so cache misses on a large lengths array overlap instead
     * of queueing. */
    p->resolved.padding = brs_settings_padding(s);
    uint64_t limit = brs_padding_limit(&p->resolved.padding, cap);
    uint64_t bad = 0;
    size_t n = p->num_samples, ahead = n > PREFETCH_AHEAD ? n - PREFETCH_AHEAD : 0;
    /* On a large dataset each length misses every cache: the next ones are
     * requested early. A small one stays in cache, and there it would only
     * cost. */
    if (s->count < PREFETCH_DATASET) ahead = 0;
    for (size_t j = 0; j < n; j++) {
        if (j < ahead) __builtin_prefetch(&s->lengths[p->draw_index[j + PREFETCH_AHEAD]]);
        uint32_t length = s->lengths[p->draw_index[j]];
        p->draw_length[j] = length;
        bad |= (uint64_t)length - 1 >= limit;
    }
    if (bad) return length_error(p, limit, cap);
    brs_sort_by_length_desc(p->sorted_index, p->sorted_length, p->draw_length, p->draw_index,
                            p->num_samples, p->sort_scratch);
    pad_sorted(p, &p->resolved.padding);
    return BRS_OK;
}

brs_status brs_samples_draw_sorted(brs_plan *p, const brs_sampler *s, uint64_t epoch, uint64_t step)
{
    brs_status status = brs_samples_open(p, s, epoch, step);
    if (status != BRS_OK) return status;
    brs_samples_draw(p, s, epoch, step, NULL);
    return brs_samples_gather(p, s, 0);
}
