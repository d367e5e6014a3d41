/* invariants.c - what every computed step must satisfy, recomputed exactly. */
#include "brs_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exact padded tokens, real tokens and cost of one micro-batch; false after
 * CUnit failures if it is empty, out of the dataset or not longest first. */
static bool micro_exact(uint64_t *padded, uint64_t *real, u128 *cost, const bt_micro *mb,
                        const uint32_t *lengths, size_t n, const bt_cost_model *m)
{
    BT_REQUIRE(mb->count >= 1 && mb->indices != NULL);
    uint64_t sum = 0, longest = 0;
    u128 sum_sq = 0;
    for (size_t i = 0; i < mb->count; i++) {
        BT_REQUIRE(mb->indices[i] < n);
        uint64_t l = lengths[mb->indices[i]];
        sum += l;
        sum_sq += (u128)l * l;
        longest = l > longest ? l : longest;
    }
    BT_REQUIRE(lengths[mb->indices[0]] == longest); /* documented: longest first */
    *real = sum;
    *padded = m->packed ? sum : mb->count * longest;
    *cost = m->packed ? bt_cost_packed(m, sum, sum_sq) : bt_cost_padded(m, mb->count, longest);
    return true;
}

typedef struct {
    uint64_t padded, real, max_padded;
    u128 total, max_cost, micro_sync, step_sync;
} step_totals;

/* Checks each micro-batch's reported stats and accumulates the step's. */
static bool micro_batches_exact(step_totals *t, const bt_step *s, const uint32_t *lengths, size_t n,
                                const bt_cost_model *m, uint64_t cap)
{
    u128 *cost = calloc((size_t)s->k, sizeof *cost);
    bool ok = cost != NULL;
    for (int64_t g = 0; ok && g < s->k; g++) {
        uint64_t padded, real;
        ok = micro_exact(&padded, &real, &cost[g], &s->mb[g], lengths, n, m);
        if (!ok) break;
        BT_ASSERT(s->mb[g].padded == padded);
        BT_ASSERT(s->mb[g].real == real);
        BT_ASSERT(bt_close(s->mb[g].cost, bt_to_cost(cost[g])));
        BT_ASSERT(cap == 0 || padded <= cap);
        t->padded += padded;
        t->real += real;
        t->max_padded = padded > t->max_padded ? padded : t->max_padded;
        t->total += cost[g];
        t->max_cost = cost[g] > t->max_cost ? cost[g] : t->max_cost;
    }
    /* Micro-step sync: sum over micro-steps of the max over ranks; step
     * sync: max over ranks of the sum over micro-steps. */
    for (int64_t mi = 0; ok && mi < s->ga; mi++) {
        u128 worst = 0;
        for (int64_t r = 0; r < s->dp; r++)
            worst = cost[r * s->ga + mi] > worst ? cost[r * s->ga + mi] : worst;
        t->micro_sync += worst;
    }
    for (int64_t r = 0; ok && r < s->dp; r++) {
        u128 sum = 0;
        for (int64_t mi = 0; mi < s->ga; mi++) sum += cost[r * s->ga + mi];
        t->step_sync = sum > t->step_sync ? sum : t->step_sync;
    }
    free(cost);
    return ok;
}

bool bt_check_step(u128 *max_cost, const bt_step *s, const brs_plan *p, const uint32_t *lengths,
                   size_t n, const bt_cost_model *m, uint64_t cap)
{
    step_totals t = {0};
    BT_REQUIRE(micro_batches_exact(&t, s, lengths, n, m, cap));
    BT_ASSERT(bt_plan_int(p, BRS_PLAN_NUM_SAMPLES) == (int64_t)s->num_samples);
    BT_ASSERT(bt_plan_int(p, BRS_PLAN_TOTAL_PADDED_TOKENS) == (int64_t)t.padded);
    BT_ASSERT(bt_plan_int(p, BRS_PLAN_TOTAL_REAL_TOKENS) == (int64_t)t.real);
    BT_ASSERT(bt_plan_int(p, BRS_PLAN_MAX_PADDED_TOKENS) == (int64_t)t.max_padded);

    double max = bt_plan_double(p, BRS_PLAN_MAX_COST);
    double lb = bt_plan_double(p, BRS_PLAN_LOWER_BOUND);
    double tlb = bt_plan_double(p, BRS_PLAN_TIME_LOWER_BOUND);
    double micro_sync = bt_plan_double(p, BRS_PLAN_MICRO_SYNC_TIME);
    double step_sync = bt_plan_double(p, BRS_PLAN_STEP_SYNC_TIME);
    BT_ASSERT(bt_close(max, bt_to_cost(t.max_cost)));
    BT_ASSERT(bt_close(bt_plan_double(p, BRS_PLAN_TOTAL_COST), bt_to_cost(t.total)));
    BT_ASSERT(bt_close(micro_sync, bt_to_cost(t.micro_sync)));
    BT_ASSERT(bt_close(step_sync, bt_to_cost(t.step_sync)));
    BT_ASSERT(lb > 0 && bt_le(lb, max));
    BT_ASSERT(bt_le(lb, tlb)); /* documented: max(LOWER_BOUND, ...) */
    BT_ASSERT(bt_le(tlb, micro_sync));
    BT_ASSERT(bt_le(tlb, step_sync));
    /* Any assignment's sync times are at least the largest micro-batch. */
    BT_ASSERT(bt_le(max, micro_sync) && bt_le(max, step_sync));
    *max_cost = t.max_cost;
    return true;
}

bool bt_plan_step(bt_planned *out, const bt_config *c, uint64_t step, brs_plan *p)
{
    memset(out, 0, sizeof *out);
    brs_sampler *s = NULL;
    BT_REQUIRE(bt_sampler_new(&s, c) == BRS_OK);
    out->status = brs_plan_compute(p, s, 0, step);
    snprintf(out->message, sizeof out->message, "%s", brs_plan_last_error(p));
    brs_sampler_free(s);
    if (out->status != BRS_OK) return true;
    bt_cost_model m = bt_cost_model_of(c);
    BT_REQUIRE(bt_step_load(&out->step, p));
    BT_REQUIRE(out->step.k == c->dp_size * c->grad_accum);
    out->desc = bt_step_lengths_desc(&out->step, c->lengths);
    out->sorted = bt_step_indices_sorted(&out->step);
    out->total_cost = bt_plan_double(p, BRS_PLAN_TOTAL_COST);
    BT_REQUIRE(bt_check_step(&out->max_cost, &out->step, p, c->lengths, c->n, &m,
                             (uint64_t)c->max_tokens));
    return true;
}

void bt_planned_free(bt_planned *pl)
{
    bt_step_free(&pl->step);
    free(pl->desc);
    free(pl->sorted);
    memset(pl, 0, sizeof *pl);
}
