/* vocabulary.c - the sampler's shape vocabulary: at most max_shapes
 * (batch size, padded length) pairs that every micro-batch of the run has,
 * chosen once from the lengths and the configuration, the same on every
 * rank and for every epoch (docs/algorithm.md, "Shape vocabulary"). The
 * choice is planner/vocabulary_choice.c's; this file draws the steps it
 * samples, keeps what it chose for the sampler's fingerprint and exports
 * it. */
#include "api/internal.h"
#include "planner/planner.h"

#include <stdio.h>

/* What the choice is made for: the sampler's full step and options. */
static struct brs_vocabulary_request request_of(const brs_sampler *s)
{
    const struct brs_config *c = &s->config;
    size_t k = (size_t)(c->dp_size * c->grad_accum);
    struct brs_step step = {.n = (size_t)c->batch_size * k,
                            .k = k,
                            .dp_size = (size_t)c->dp_size,
                            .grad_accum = (size_t)c->grad_accum,
                            .sync = (int)c->sync,
                            .packed = (int)c->packed,
                            .model = brs_settings_cost_model(s),
                            .padding = brs_settings_padding(s)};
    return (struct brs_vocabulary_request){.step = step,
                                           .max_shapes = (size_t)c->max_shapes,
                                           .batch_size = (size_t)c->batch_size,
                                           .count = s->count,
                                           .drop_last = (int)c->drop_last,
                                           .steps = brs_settings_steps(s),
                                           .longest = s->max_length,
                                           .search_moves = (uint64_t)c->max_shapes_search,
                                           .seed = (uint64_t)c->seed};
}

/* Draws every sampled step (within v, or without a vocabulary) and shows it
 * to the choice: observed, or checked within v. A step that does not plan
 * gets the message brs_plan_compute would give it. */
static brs_status run_samples(struct brs_vocabulary_choice *choice, const brs_sampler *s,
                              brs_plan *plan, const struct brs_vocabulary *v, char *why)
{
    brs_status status = BRS_OK;
    for (size_t i = 0; i < brs_vocabulary_choice_samples(choice) && status == BRS_OK; i++) {
        uint64_t epoch, step;
        brs_vocabulary_choice_sample(&epoch, &step, choice, i);
        status = brs_step_draw(plan, s, epoch, step, v);
        if (status != BRS_OK) break;
        status = v ? brs_vocabulary_choice_check(choice, &plan->resolved)
                   : brs_vocabulary_choice_observe(choice, &plan->resolved);
        if (status != BRS_OK)
            status = brs_step_error(plan, s, brs_vocabulary_choice_planned(choice), status);
    }
    if (status != BRS_OK) snprintf(why, BRS_MESSAGE_SIZE, "%s", brs_message_text(&plan->message));
    return status;
}

static brs_status choose(struct brs_vocabulary *v, const brs_sampler *s, char *why)
{
    struct brs_vocabulary_request request = request_of(s);
    struct brs_vocabulary_choice *choice = NULL;
    brs_plan *plan = NULL;
    brs_status status = brs_vocabulary_choice_open(&choice, &request, why);
    if (status == BRS_OK && brs_plan_new(&plan) != BRS_OK) status = BRS_ERR_NO_MEMORY;
    if (status == BRS_OK) status = run_samples(choice, s, plan, NULL, why);
    if (status == BRS_OK) status = brs_vocabulary_choice_choose(v, choice);
    if (status == BRS_OK && !brs_vocabulary_choice_guaranteed(choice))
        status = run_samples(choice, s, plan, v, why);
    if (status == BRS_ERR_NO_MEMORY)
        snprintf(why, BRS_MESSAGE_SIZE, "cannot allocate the shape vocabulary");
    if (status != BRS_OK) brs_vocabulary_free(v);
    brs_vocabulary_choice_close(choice);
    brs_plan_free(plan);
    return status;
}

brs_status brs_vocabulary_check(const brs_sampler *s, const struct brs_message *message)
{
    const struct brs_config *c = &s->config;
    if (c->max_shapes == 0 || c->strategy != BRS_STRATEGY_BALANCED) return BRS_OK;
    if (s->encoder)
        return brs_fail(message, BRS_ERR_UNSUPPORTED,
                        "max_shapes plans micro-batches of text: set max_shapes to 0 for samples "
                        "with images");
    if (c->packed && brs_settings_cost_model(s).max_tokens == 0)
        return brs_fail(message, BRS_ERR_UNSUPPORTED,
                        "max_shapes in packed mode needs a longest row, the vocabulary's longest "
                        "shape: set max_tokens (or length_buckets)");
    return BRS_OK;
}

static void forget(brs_sampler *s)
{
    brs_vocabulary_free(&s->vocabulary);
    s->vocabulary_chosen = 0;
}

brs_status brs_vocabulary_of(const struct brs_vocabulary **out, const brs_sampler *sampler,
                             const struct brs_message *message)
{
    /* The vocabulary is a cache of the sampler's lengths and options: a
     * read-only call may fill it (one at a time), as a const handle's
     * message may be written (api/internal.h). */
    brs_sampler *s = (brs_sampler *)sampler;
    uint64_t fingerprint;
    brs_status status = brs_vocabulary_check(sampler, message);
    if (status != BRS_OK) return status;
    status = brs_sampler_fingerprint(&fingerprint, sampler);
    if (status != BRS_OK) return status;
    while (atomic_flag_test_and_set_explicit(&s->vocabulary_busy, memory_order_acquire)) {
    }
    if (!s->vocabulary_chosen || s->vocabulary_fingerprint != fingerprint) {
        forget(s);
        s->vocabulary_message[0] = '\0';
        s->vocabulary_status = choose(&s->vocabulary, s, s->vocabulary_message);
        s->vocabulary_fingerprint = fingerprint;
        s->vocabulary_chosen = 1;
    }
    status = s->vocabulary_status;
    atomic_flag_clear_explicit(&s->vocabulary_busy, memory_order_release);
    if (status != BRS_OK) return brs_fail(message, status, "%s", s->vocabulary_message);
    *out = &s->vocabulary;
    return BRS_OK;
}

brs_status brs_vocabulary_for_step(const struct brs_vocabulary **out, const brs_sampler *sampler,
                                   const struct brs_message *message)
{
    *out = NULL;
    /* combinations the options cannot plan are refused here, when a step is
     * planned, not when they are set or validated: every option can be set
     * at once (each binding's every-option test) */
    brs_status status = brs_cp_check_combination(sampler, message);
    if (status != BRS_OK) return status;
    if (sampler->config.max_shapes == 0 || sampler->config.strategy != BRS_STRATEGY_BALANCED)
        return BRS_OK;
    return brs_vocabulary_of(out, sampler, message);
}

brs_status brs_sampler_shape_vocabulary(uint64_t *shapes, size_t *count, const brs_sampler *sampler,
                                        size_t capacity)
{
    if (!sampler) return BRS_ERR_NULL_POINTER;
    if (!count || (!shapes && capacity > 0))
        return brs_fail(&sampler->message, BRS_ERR_NULL_POINTER,
                        "brs_sampler_shape_vocabulary: %s is NULL", !count ? "count" : "shapes");
    brs_status status = brs_settings_check(sampler, &sampler->message);
    if (status != BRS_OK) return status;
    *count = 0;
    if (sampler->config.max_shapes == 0 || sampler->config.strategy != BRS_STRATEGY_BALANCED)
        return BRS_OK;
    const struct brs_vocabulary *v;
    status = brs_vocabulary_of(&v, sampler, &sampler->message);
    if (status != BRS_OK) return status;
    *count = v->count;
    for (size_t i = 0; i < v->count && i < capacity; i++) {
        shapes[2 * i] = v->sizes[i];
        shapes[2 * i + 1] = v->lengths[i];
    }
    if (v->count > capacity && shapes)
        return brs_fail(&sampler->message, BRS_ERR_OUT_OF_RANGE,
                        "the vocabulary has %zu shapes, more than the capacity %zu: call again "
                        "with room for %zu",
                        v->count, capacity, v->count);
    return BRS_OK;
}
