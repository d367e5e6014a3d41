/* test_regression.c - cases where the upstream sampler went wrong, and the
 * extremes of the documented ranges.
 *
 * Upstream (transformers' BatchRebalanceSampler) balances by hill climbing
 * and stalls 5-40% above the optimum on small, heavily skewed steps such as
 * N = 246 with K = 2; the exact planner must reach the DP optimum there. */
#include "brs_test.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N246 246

enum skew { FEW_GIANTS, ONE_GIANT, BIMODAL, POWER_LAW, SKEWS };
static const char *skew_name[] = {"few giants", "one giant", "bimodal", "power law"};

static void skewed_lengths(uint32_t *len, enum skew kind, bt_rng *r)
{
    for (size_t i = 0; i < N246; i++) {
        switch (kind) {
        case FEW_GIANTS: /* six very long samples among many short ones */
            len[i] = i % 41 == 7 ? 4000 + (uint32_t)bt_rng_below(r, 4000)
                                 : 20 + (uint32_t)bt_rng_below(r, 81);
            break;
        case ONE_GIANT: len[i] = i == 100 ? 30000 : 10 + (uint32_t)bt_rng_below(r, 41); break;
        case BIMODAL: len[i] = i % 2 ? 1000 : 10; break;
        default: len[i] = 10000 / (uint32_t)(i + 1) + 1; break;
        }
    }
}

static void test_upstream_n246_reaches_optimum(void)
{
    const int64_t layouts[][3] = {{123, 2, 1}, {123, 1, 2}, {82, 3, 1}, {41, 2, 3}};
    const double alphas[] = {0.0, 0.001, 0.05};
    bt_rng r = {246};
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    for (int kind = 0; kind < SKEWS; kind++) {
        uint32_t len[N246];
        skewed_lengths(len, (enum skew)kind, &r);
        for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
            for (size_t a = 0; a < sizeof alphas / sizeof alphas[0]; a++) {
                bt_config c = bt_config_default(len, N246);
                c.batch_size = layouts[l][0];
                c.dp_size = layouts[l][1];
                c.grad_accum = layouts[l][2];
                c.alpha = alphas[a];
                c.shuffle = (int64_t)(a % 2);
                bt_set_case("N 246 %s K %" PRId64 " alpha %g", skew_name[kind],
                            c.dp_size * c.grad_accum, c.alpha);
                bt_planned pl;
                if (!bt_plan_step(&pl, &c, 0, p)) continue;
                BT_ASSERT(pl.status == BRS_OK && pl.step.num_samples == N246);
                bt_cost_model m = bt_cost_model_of(&c);
                u128 best = 0;
                /* With one micro-step the step time is the max cost, and
                 * the plan reaches the exact min-max; with more, the bound
                 * on the step time is at least that optimum. */
                if (pl.status == BRS_OK &&
                    bt_oracle_min_max(&best, pl.desc, N246, (size_t)pl.step.k, &m, 0)) {
                    if (c.grad_accum == 1) {
                        BT_ASSERT(pl.max_cost == best);
                        BT_ASSERT(bt_close(bt_plan_double(p, BRS_PLAN_MAX_COST), bt_to_cost(best)));
                    }
                    BT_ASSERT(
                        bt_le(bt_to_cost(best), bt_plan_double(p, BRS_PLAN_TIME_LOWER_BOUND)));
                }
                bt_planned_free(&pl);
            }
        }
    }
    brs_plan_free(p);
}

/* ---- the extremes: B = 1e5, K up to 1e4, lengths near 2^31 and 2^32 ------ */

typedef struct {
    int64_t p, dp, ga;
    uint32_t base, spread; /* lengths in [base - spread, base] ... */
    bool mixed;            /* ... or half of them uniform in [1, base] */
    double alpha, intercept;
    uint64_t cap_per; /* cap = base * cap_per samples; 0 = none */
} extreme_case;

static const extreme_case extremes[] = {
    {100, 100, 10, 2147483647u, 1u << 20, false, 1000.0, 0.0, 0},
    {10, 1000, 10, 2147483647u, 1u << 20, false, 1000.0, 1e12, 0},
    {20, 250, 20, 2147483648u, 1u << 30, true, 1000.0, 0.0, 0},
    {10, 500, 20, 2147483647u, 1000, false, 1000.0, 0.0, 16},
    {100, 1000, 1, 4294967295u, 1000, true, 1000.0, 1e12, 0},
    {50, 2000, 1, 4294967295u, 1u << 31, false, 0.0, 0.0, 100},
};

static void test_extremes_no_overflow(void)
{
    bt_rng r = {31};
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    for (size_t i = 0; i < sizeof extremes / sizeof extremes[0]; i++) {
        const extreme_case *x = &extremes[i];
        size_t n = (size_t)(x->p * x->dp * x->ga); /* one step of B = 1e5 */
        uint32_t *len = malloc(n * sizeof *len);
        for (size_t j = 0; j < n; j++)
            len[j] = x->mixed && j % 2 ? 1 + (uint32_t)bt_rng_below(&r, x->base)
                                       : x->base - (uint32_t)bt_rng_below(&r, x->spread);
        bt_config c = bt_config_default(len, n);
        c.batch_size = x->p;
        c.dp_size = x->dp;
        c.grad_accum = x->ga;
        c.alpha = x->alpha;
        c.intercept = x->intercept;
        c.max_tokens = (int64_t)(x->cap_per * x->base);
        bt_set_case("extreme case %zu: B %zu K %" PRId64 " cap %" PRId64, i, n, x->dp * x->ga,
                    c.max_tokens);
        bt_planned pl;
        if (bt_plan_step(&pl, &c, 0, p)) {
            BT_ASSERT(pl.status == BRS_OK);
            if (pl.status != BRS_OK) fprintf(stderr, "  brs: %s\n", pl.message);
            if (pl.status == BRS_OK) {
                size_t dup = 0;
                for (size_t j = 0; j < n; j++)
                    dup += pl.sorted[j] != j; /* N = B: every index exactly once */
                BT_ASSERT(pl.step.num_samples == n && dup == 0);
                bt_cost_model m = bt_cost_model_of(&c);
                if (c.grad_accum == 1) /* the step time is the max cost */
                    BT_ASSERT(bt_threshold_optimal(pl.desc, n, (size_t)pl.step.k, &m,
                                                   (uint64_t)c.max_tokens, pl.max_cost));
            }
            bt_planned_free(&pl);
        }
        free(len);
    }
    brs_plan_free(p);
}

/* The benchmark against upstream found brs spreading work over later
 * micro-steps when one long sample fixes the optimum (manpages@32k, dp 8 x
 * ga 4): every rank waits for that sample in the first micro-step anyway,
 * so the work belongs there. One sample of 1000 tokens and fifteen of
 * 10..24, alpha 0, dp 2 x ga 2: the first micro-step is {1000} beside the
 * thirteen longest shorts (13 x 24 = 312), the second {11} and {10}, so the
 * per-micro-step time is 1000 + 11 and the per-step time 1000 + 10. The
 * least-total split (shorts in three bands) would give 1000 + 95. */
static void test_one_long_sample_front_loads_the_first_micro_step(void)
{
    uint32_t len[16];
    len[0] = 1000;
    for (size_t i = 1; i < 16; i++) len[i] = (uint32_t)(9 + i);
    brs_sampler *s = NULL;
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_sampler_new(&s) == BRS_OK && brs_plan_new(&p) == BRS_OK);
    CU_ASSERT(brs_sampler_set_lengths(s, len, 16, BRS_LENGTHS_COPY) == BRS_OK);
    CU_ASSERT(brs_sampler_set_int(s, BRS_OPT_BATCH_SIZE, 4) == BRS_OK);
    CU_ASSERT(brs_sampler_set_int(s, BRS_OPT_DP_SIZE, 2) == BRS_OK);
    CU_ASSERT(brs_sampler_set_int(s, BRS_OPT_GRAD_ACCUM, 2) == BRS_OK);
    CU_ASSERT(brs_sampler_set_double(s, BRS_OPT_ALPHA, 0.0) == BRS_OK);
    CU_ASSERT_FATAL(brs_plan_compute(p, s, 0, 0) == BRS_OK);
    double micro = 0, step = 0, max_cost = 0;
    CU_ASSERT(brs_plan_get_double(&max_cost, p, BRS_PLAN_MAX_COST) == BRS_OK);
    CU_ASSERT(brs_plan_get_double(&micro, p, BRS_PLAN_MICRO_SYNC_TIME) == BRS_OK);
    CU_ASSERT(brs_plan_get_double(&step, p, BRS_PLAN_STEP_SYNC_TIME) == BRS_OK);
    CU_ASSERT(max_cost == 1000.0);
    CU_ASSERT(micro == 1011.0);
    CU_ASSERT(step == 1010.0);
    brs_plan_free(p);
    brs_sampler_free(s);
}

int main(int argc, char **argv)
{
    static const bt_test tests[] = {
        {"upstream N = 246 skewed steps: exact min-max, bound above it",
         test_upstream_n246_reaches_optimum},
        {"B = 1e5, K up to 1e4, huge lengths: no overflow", test_extremes_no_overflow},
        {"one long sample: the first micro-step takes the work",
         test_one_long_sample_front_loads_the_first_micro_step},
        {NULL, NULL},
    };
    return bt_run("regression", tests, argc - 1, argv + 1);
}
