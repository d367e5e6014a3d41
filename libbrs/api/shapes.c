/* shapes.c - brs_sampler_shapes: the distinct (batch size, padded length)
 * shapes one rank runs in an epoch, found by planning every step of it
 * before training, so that they can be warmed or captured once. */
#include "api/internal.h"

#include <stdlib.h>

static int compare_shapes(const void *a, const void *b)
{
    const struct brs_shape *x = a, *y = b;
    if (x->size != y->size) return x->size < y->size ? -1 : 1;
    if (x->length != y->length) return x->length < y->length ? -1 : 1;
    return 0;
}

/* The shapes of the rank's micro-batches of every step, in `out`
 * (steps x grad_accum entries). */
static brs_status collect(struct brs_shape *out, const brs_sampler *s, brs_plan *p, uint64_t epoch,
                          uint64_t steps)
{
    size_t g = (size_t)s->config.grad_accum, rank = (size_t)s->config.rank;
    const struct brs_vocabulary *vocabulary;
    brs_status status = brs_vocabulary_for_step(&vocabulary, s, &p->message);
    if (status != BRS_OK) return brs_fail(&s->message, status, "%s", brs_message_text(&p->message));
    for (uint64_t step = 0; step < steps; step++) {
        status = brs_step_plan(p, s, epoch, step, vocabulary);
        if (status != BRS_OK)
            return brs_fail(&s->message, status, "%s", brs_message_text(&p->message));
        for (size_t m = 0; m < g; m++)
            out[step * g + m] = brs_describe_shape(p, rank * g + m, (int)s->config.packed);
    }
    return BRS_OK;
}

/* Sorts the shapes and keeps one of each; returns how many remain. */
static size_t distinct(struct brs_shape *shapes, size_t n)
{
    qsort(shapes, n, sizeof *shapes, compare_shapes);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (kept == 0 || compare_shapes(&shapes[kept - 1], &shapes[i]) != 0)
            shapes[kept++] = shapes[i];
    return kept;
}

brs_status brs_sampler_shapes(uint64_t *shapes, size_t *count, const brs_sampler *sampler,
                              uint64_t epoch, size_t capacity)
{
    if (!sampler) return BRS_ERR_NULL_POINTER;
    if (!count || (!shapes && capacity > 0))
        return brs_fail(&sampler->message, BRS_ERR_NULL_POINTER, "brs_sampler_shapes: %s is NULL",
                        !count ? "count" : "shapes");
    brs_status status = brs_settings_check(sampler, &sampler->message);
    if (status != BRS_OK) return status;
    uint64_t steps = brs_settings_steps(sampler);
    size_t total = (size_t)steps * (size_t)sampler->config.grad_accum;
    struct brs_shape *all = malloc(total * sizeof *all);
    brs_plan *plan = NULL;
    if (!all || brs_plan_new(&plan) != BRS_OK) {
        free(all);
        return brs_fail(&sampler->message, BRS_ERR_NO_MEMORY,
                        "cannot allocate the %zu shapes of an epoch", total);
    }
    status = collect(all, sampler, plan, epoch, steps);
    brs_plan_free(plan);
    if (status == BRS_OK) {
        *count = distinct(all, total);
        for (size_t i = 0; i < *count && i < capacity; i++) {
            shapes[2 * i] = all[i].size;
            shapes[2 * i + 1] = all[i].length;
        }
        if (*count > capacity && shapes)
            status = brs_fail(&sampler->message, BRS_ERR_OUT_OF_RANGE,
                              "epoch %llu has %zu distinct shapes, more than the capacity %zu: "
                              "call again with room for %zu",
                              (unsigned long long)epoch, *count, capacity, *count);
    }
    free(all);
    return status;
}
