/* test_oracle.c - the planner's max cost is the exact optimum.
 *
 * Small steps (B <= 40, K <= 6) are checked against a DP over contiguous
 * splits (the contiguity theorem of docs/design.md, "The planner", makes it exact);
 * large steps against the greedy threshold probe; packed mode against a
 * brute force on tiny steps, against its lower bound and against a plain
 * Karmarkar-Karp. */
#include "brs_test.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMALL_CASES 3000
#define RANDOM_CASES 10000
#define SMALL_MAX_N 120

/* ---- drawing test inputs ------------------------------------------------ */

enum shape { UNIFORM, ALL_EQUAL, TIES, SKEWED, WIDE, LOGNORMAL, LONG_TAIL, SHAPES };
static const char *shape_name[] = {"uniform", "all-equal", "ties",     "skewed",
                                   "wide",    "lognormal", "long-tail"};

static void draw_lengths(bt_rng *r, uint32_t *len, size_t n, enum shape shape)
{
    uint32_t equal = 1 + (uint32_t)bt_rng_below(r, 1000);
    for (size_t i = 0; i < n; i++) {
        switch (shape) {
        case UNIFORM: len[i] = 1 + (uint32_t)bt_rng_below(r, 50); break;
        case ALL_EQUAL: len[i] = equal; break;
        case TIES: len[i] = (uint32_t)(1 + bt_rng_below(r, 3)) * 10; break;
        case SKEWED:
            len[i] = bt_rng_below(r, 8) == 0 ? 2000 + (uint32_t)bt_rng_below(r, 3000)
                                             : 1 + (uint32_t)bt_rng_below(r, 20);
            break;
        case WIDE: len[i] = 1 + (uint32_t)bt_rng_below(r, 100000); break;
        case LOGNORMAL: len[i] = bt_lognormal(r, 5.0, 1.0, 16, 1024); break;
        default: len[i] = bt_lognormal(r, 6.0, 1.5, 1, 65536); break;
        }
    }
}

static uint32_t max_length(const uint32_t *len, size_t n)
{
    uint32_t m = 0;
    for (size_t i = 0; i < n; i++) m = len[i] > m ? len[i] : m;
    return m;
}

/* alpha: zero, the default, a random multiple of 1e-6, the maximum, and a
 * value that is not a multiple of 1e-6 (the library resolves it). */
static double draw_alpha(bt_rng *r, int kind)
{
    switch (kind % 5) {
    case 0: return 0.0;
    case 1: return 0.001;
    case 2: return (double)bt_rng_below(r, 2000001) * 1e-6;
    case 3: return 1000.0;
    default: return 0.0123456789;
    }
}

static double draw_intercept(bt_rng *r, int kind)
{
    switch (kind % 4) {
    case 0: return 0.0;
    case 1: return (double)bt_rng_below(r, 100000) * 1e-3;
    case 2: return 12345.6789012345; /* resolved to 1e-6 */
    default: return 1e9;
    }
}

typedef struct {
    bt_config c;
    uint32_t len[SMALL_MAX_N];
    uint64_t step;
    enum shape shape;
} small_case;

/* Case i of the seeded family: the loop index spreads shapes, alphas and
 * intercepts evenly; the rest is random. */
static void draw_small_case(small_case *sc, bt_rng *r, int i)
{
    int64_t k = 1 + (int64_t)bt_rng_below(r, 6);
    int64_t dp = 1 + (int64_t)bt_rng_below(r, (uint64_t)k);
    while (k % dp) dp--;
    int64_t p = 1 + (int64_t)bt_rng_below(r, (uint64_t)(40 / k));
    size_t b = (size_t)(p * k);
    size_t n = b + bt_rng_below(r, 2 * b + 1);
    sc->shape = (enum shape)(i % SHAPES);
    draw_lengths(r, sc->len, n, sc->shape);
    sc->c = bt_config_default(sc->len, n);
    sc->c.batch_size = p;
    sc->c.dp_size = dp;
    sc->c.grad_accum = k / dp;
    sc->c.rank = (int64_t)bt_rng_below(r, (uint64_t)dp);
    sc->c.seed = (int64_t)bt_rng_below(r, 1000);
    sc->c.shuffle = bt_rng_below(r, 4) != 0;
    sc->c.drop_last = (int64_t)bt_rng_below(r, 2);
    sc->c.alpha = draw_alpha(r, i / SHAPES);
    sc->c.intercept = draw_intercept(r, i / (SHAPES * 5));
    uint64_t steps = sc->c.drop_last ? n / b : (n + b - 1) / b;
    sc->step = bt_rng_below(r, steps);
    /* Half the cases get a cap between the longest sample and a size most
     * steps can meet, so both feasible and infeasible caps occur. */
    uint32_t longest = max_length(sc->len, n);
    sc->c.max_tokens = bt_rng_below(r, 2)
                           ? longest + (int64_t)bt_rng_below(r, (uint64_t)longest * (uint64_t)p * 2)
                           : 0;
}

static void describe(const small_case *sc)
{
    bt_set_case("shape %s n %zu P %" PRId64 " dp %" PRId64 " ga %" PRId64 " seed %" PRId64
                " shuffle %" PRId64 " drop_last %" PRId64 " alpha %.10g intercept %.10g"
                " max_tokens %" PRId64 " step %" PRIu64,
                shape_name[sc->shape], sc->c.n, sc->c.batch_size, sc->c.dp_size, sc->c.grad_accum,
                sc->c.seed, sc->c.shuffle, sc->c.drop_last, sc->c.alpha, sc->c.intercept,
                sc->c.max_tokens, sc->step);
}

/* ---- checking one step against the oracle -------------------------------- */

static int sync_models(void)
{
#ifdef BRS_OPT_SYNC
    return 2;
#else
    return 1; /* the library optimises per-micro-step sync only */
#endif
}

/* The plan's score recomputed exactly from its micro-batches. */
static bt_score plan_score(const bt_planned *pl, const bt_cost_model *m, int sync)
{
    bt_score s = {0, 0, 0};
    size_t dp = (size_t)pl->step.dp, ga = (size_t)pl->step.ga;
    u128 cost[64];
    for (size_t i = 0; i < dp * ga && i < 64; i++) {
        const bt_micro *mb = &pl->step.mb[i];
        s.peak = mb->padded > s.peak ? mb->padded : s.peak;
        cost[i] = bt_cost_padded(m, mb->count, mb->padded / mb->count);
        s.total += cost[i];
    }
    for (size_t micro = 0; !sync && micro < ga; micro++) {
        u128 worst = 0;
        for (size_t r = 0; r < dp; r++)
            worst = cost[r * ga + micro] > worst ? cost[r * ga + micro] : worst;
        s.time += worst;
    }
    for (size_t r = 0; sync && r < dp; r++) {
        u128 sum = 0;
        for (size_t micro = 0; micro < ga; micro++) sum += cost[r * ga + micro];
        s.time = sum > s.time ? sum : s.time;
    }
    return s;
}

/* The bound is certified (never above the time) and tight: at least the
 * exact min-max, and equal to the time with one micro-step. */
static void expect_bound(const bt_planned *pl, const brs_plan *p, const bt_cost_model *m,
                         uint64_t cap, u128 time)
{
    size_t b = pl->step.num_samples, k = (size_t)pl->step.k;
    u128 min_max = 0;
    BT_ASSERT(bt_oracle_min_max(&min_max, pl->desc, b, k, m, cap));
    double bound = bt_plan_double(p, BRS_PLAN_TIME_LOWER_BOUND);
    BT_ASSERT(bt_le(bt_to_cost(min_max), bound));
    BT_ASSERT(bt_le(bound, bt_to_cost(time)));
    if (pl->step.ga == 1) BT_ASSERT(bt_close(bound, bt_to_cost(time)));
}

/* The plan of a small step is the exact optimum of the objective: the
 * best over every contiguous split and deal within the memory budget. */
static void expect_optimal(const bt_planned *pl, const brs_plan *p, const bt_cost_model *m,
                           uint64_t cap, int sync)
{
    size_t b = pl->step.num_samples, k = (size_t)pl->step.k, dp = (size_t)pl->step.dp;
    uint64_t budget = 0;
    BT_ASSERT(bt_oracle_budget(&budget, pl->desc, b, k, m, cap));
    bt_score best = {0, 0, 0}, got = plan_score(pl, m, sync);
    BT_ASSERT(bt_oracle_best_plan(&best, pl->desc, b, k, dp, sync, m, budget));
    BT_ASSERT(got.time == best.time);
    BT_ASSERT(got.peak == best.peak);
    BT_ASSERT(got.total == best.total);
    expect_bound(pl, p, m, cap, got.time);
}

typedef struct {
    bt_config c;
    uint32_t len[SMALL_MAX_N];
    uint64_t step;
    enum shape shape;
} tiny_case;

/* B <= 12 and K <= 6: small enough for the brute force over every deal. */
static void draw_tiny_case(tiny_case *tc, bt_rng *r, int i)
{
    int64_t k = 1 + (int64_t)bt_rng_below(r, 6);
    int64_t dp = 1 + (int64_t)bt_rng_below(r, (uint64_t)k);
    while (k % dp) dp--;
    int64_t p = 1 + (int64_t)bt_rng_below(r, (uint64_t)(12 / k));
    size_t b = (size_t)(p * k), n = b + bt_rng_below(r, 2 * b + 1);
    tc->shape = (enum shape)(i % SHAPES);
    draw_lengths(r, tc->len, n, tc->shape);
    tc->c = bt_config_default(tc->len, n);
    tc->c.batch_size = p;
    tc->c.dp_size = dp;
    tc->c.grad_accum = k / dp;
    tc->c.seed = (int64_t)bt_rng_below(r, 1000);
    tc->c.drop_last = (int64_t)bt_rng_below(r, 2);
    tc->c.alpha = draw_alpha(r, i / SHAPES);
    tc->c.intercept = draw_intercept(r, i / (SHAPES * 5));
    uint64_t steps = tc->c.drop_last ? n / b : (n + b - 1) / b;
    tc->step = bt_rng_below(r, steps);
    uint32_t longest = max_length(tc->len, n);
    tc->c.max_tokens = bt_rng_below(r, 2)
                           ? longest + (int64_t)bt_rng_below(r, (uint64_t)longest * (uint64_t)p * 2)
                           : 0;
}

/* Each tiny case under both sync models, without and with its cap. */
static void test_small_plans_equal_brute_force(void)
{
    bt_rng r = {20261203};
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    for (int i = 0; i < SMALL_CASES; i++) {
        tiny_case tc;
        draw_tiny_case(&tc, &r, i);
        for (int sync = 0; sync < sync_models(); sync++) {
            for (int capped = 0; capped < 2; capped++) {
                bt_config c = tc.c;
                c.sync = sync;
                if (!capped)
                    c.max_tokens = 0;
                else if (!c.max_tokens)
                    continue;
                bt_set_case("tiny %d: %s n %zu P %" PRId64 " dp %" PRId64 " ga %" PRId64
                            " sync %d alpha %.10g intercept %.10g max_tokens %" PRId64
                            " step %" PRIu64,
                            i, shape_name[tc.shape], c.n, c.batch_size, c.dp_size, c.grad_accum,
                            sync, c.alpha, c.intercept, c.max_tokens, tc.step);
                bt_cost_model m = bt_cost_model_of(&c);
                bt_planned pl;
                if (!bt_plan_step(&pl, &c, tc.step, p)) continue;
                if (pl.status == BRS_OK) {
                    expect_optimal(&pl, p, &m, (uint64_t)c.max_tokens, sync);
                } else {
                    /* only a cap makes a step infeasible, and then the DP agrees */
                    u128 unused;
                    BT_ASSERT(pl.status == BRS_ERR_CAP_INFEASIBLE && capped);
                    BT_ASSERT(!bt_oracle_min_max(&unused, pl.desc, pl.step.num_samples,
                                                 (size_t)pl.step.k, &m, (uint64_t)c.max_tokens));
                }
                bt_planned_free(&pl);
            }
        }
    }
    brs_plan_free(p);
}

/* ---- random configurations: what holds for every plan --------------------- */

/* What every plan satisfies, checked against exact DPs: within the memory
 * budget; never slower than the least-total min-max split (the budget's
 * own plan, dealt the same way, is a candidate); with one micro-step the
 * exact min-max, then the least peak at it; with one rank the least total
 * within the budget. */
static void expect_objective_holds(const bt_planned *pl, const brs_plan *p, const bt_cost_model *m,
                                   uint64_t cap, int sync)
{
    size_t b = pl->step.num_samples, k = (size_t)pl->step.k;
    uint64_t budget = 0;
    BT_ASSERT(bt_oracle_budget(&budget, pl->desc, b, k, m, cap));
    bt_score got = plan_score(pl, m, sync);
    BT_ASSERT(got.peak <= budget);
    expect_bound(pl, p, m, cap, got.time);
    u128 min_max = 0, least = 0;
    BT_ASSERT(bt_oracle_min_max(&min_max, pl->desc, b, k, m, cap));
    if (pl->step.ga == 1) {
        uint64_t peak = 0;
        BT_ASSERT(got.time == min_max);
        BT_ASSERT(bt_oracle_min_peak(&peak, pl->desc, b, k, m, budget, min_max));
        BT_ASSERT(got.peak == peak);
    }
    if (pl->step.dp == 1) {
        BT_ASSERT(bt_oracle_min_total(&least, pl->desc, b, k, m, budget, BT_NO_LIMIT));
        BT_ASSERT(got.time == least);
    }
    /* any plan's time is at least the min-max and the least total per rank */
    BT_ASSERT(bt_oracle_min_total(&least, pl->desc, b, k, m, cap, BT_NO_LIMIT));
    BT_ASSERT(got.time >= min_max && got.time * (u128)pl->step.dp >= least);
}

static void test_random_configurations(void)
{
    bt_rng r = {4242};
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    for (int i = 0; i < RANDOM_CASES; i++) {
        small_case sc;
        draw_small_case(&sc, &r, i);
        describe(&sc);
        sc.c.sync = i % sync_models();
        bt_cost_model m = bt_cost_model_of(&sc.c);
        bt_planned pl;
        if (!bt_plan_step(&pl, &sc.c, sc.step, p)) continue;
        if (pl.status == BRS_OK)
            expect_objective_holds(&pl, p, &m, (uint64_t)sc.c.max_tokens, (int)sc.c.sync);
        else
            BT_ASSERT(pl.status == BRS_ERR_CAP_INFEASIBLE && sc.c.max_tokens);
        bt_planned_free(&pl);
    }
    brs_plan_free(p);
}

/* ---- layered plans: never faster than the plan ---------------------------- */

#define LAYERED_CASES 1500
#define LAYERED_MAX_B 64
#define LAYERED_MAX_K 16

/* Under per-micro-step sync with grad_accum > 1, no layered plan (each
 * micro-step a contiguous slice of the sorted step, split at its min-max
 * into dp groups) within the memory budget is faster than the plan. */
static void test_no_layered_plan_is_faster(void)
{
    bt_rng r = {7171};
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    for (int i = 0; i < LAYERED_CASES; i++) {
        uint32_t len[2 * LAYERED_MAX_B];
        int64_t k = 2 + (int64_t)bt_rng_below(&r, LAYERED_MAX_K - 1),
                dp = 1 + (int64_t)bt_rng_below(&r, (uint64_t)k / 2);
        while (k % dp) dp--;
        int64_t per = 1 + (int64_t)bt_rng_below(&r, (uint64_t)(LAYERED_MAX_B / k));
        size_t b = (size_t)(per * k), n = b + bt_rng_below(&r, b + 1);
        enum shape shape = (enum shape)(i % SHAPES);
        draw_lengths(&r, len, n, shape);
        bt_config c = bt_config_default(len, n);
        c.batch_size = per;
        c.dp_size = dp;
        c.grad_accum = k / dp;
        c.sync = BRS_SYNC_MICRO_STEP;
        c.alpha = draw_alpha(&r, i / SHAPES);
        c.intercept = draw_intercept(&r, i / (SHAPES * 5));
        uint32_t longest = max_length(len, n);
        c.max_tokens =
            i % 2 ? (int64_t)(longest + bt_rng_below(&r, (uint64_t)longest * (uint64_t)per * 2))
                  : 0;
        uint64_t step = bt_rng_below(&r, n / b);
        bt_set_case("layered %d: %s n %zu P %" PRId64 " dp %" PRId64 " ga %" PRId64
                    " alpha %.10g intercept %.10g max_tokens %" PRId64 " step %" PRIu64,
                    i, shape_name[shape], n, per, dp, c.grad_accum, c.alpha, c.intercept,
                    c.max_tokens, step);
        bt_cost_model m = bt_cost_model_of(&c);
        bt_planned pl;
        if (!bt_plan_step(&pl, &c, step, p)) continue;
        if (pl.status == BRS_OK) {
            uint64_t budget = 0;
            u128 layered = 0;
            BT_ASSERT(bt_oracle_budget(&budget, pl.desc, b, (size_t)k, &m, (uint64_t)c.max_tokens));
            bt_score got = plan_score(&pl, &m, BRS_SYNC_MICRO_STEP);
            if (bt_oracle_best_layered(&layered, pl.desc, b, (size_t)k, (size_t)dp, &m, budget))
                BT_ASSERT(got.time <= layered);
        } else {
            BT_ASSERT(pl.status == BRS_ERR_CAP_INFEASIBLE && c.max_tokens);
        }
        bt_planned_free(&pl);
    }
    brs_plan_free(p);
}

/* The oracle itself: on tiny steps the DP over contiguous splits equals a
 * brute force over every partition, which is the contiguity theorem the
 * DP rests on (and a check of the DP code). */
static void test_dp_equals_brute_force_over_all_partitions(void)
{
    bt_rng r = {8};
    for (int i = 0; i < 1500; i++) {
        size_t b = 1 + bt_rng_below(&r, 9), k = 1 + bt_rng_below(&r, b < 4 ? b : 4);
        uint32_t len[9];
        draw_lengths(&r, len, b, (enum shape)(i % SHAPES));
        bt_config c = bt_config_default(len, b);
        c.alpha = draw_alpha(&r, i / SHAPES);
        c.intercept = draw_intercept(&r, i / (SHAPES * 5));
        uint64_t cap = i % 2 ? max_length(len, b) * (1 + bt_rng_below(&r, b)) : 0;
        bt_cost_model m = bt_cost_model_of(&c);
        uint32_t desc[9];
        memcpy(desc, len, sizeof desc);
        for (size_t a = 1; a < b; a++) /* insertion sort, longest first */
            for (size_t j = a; j > 0 && desc[j] > desc[j - 1]; j--) {
                uint32_t t = desc[j];
                desc[j] = desc[j - 1];
                desc[j - 1] = t;
            }
        u128 dp = 0, brute = 0;
        bool dp_ok = bt_oracle_min_max(&dp, desc, b, k, &m, cap);
        bool brute_ok = bt_brute_min_max(&brute, len, b, k, &m, cap);
        bt_set_case("self-check %d: b %zu k %zu cap %" PRIu64, i, b, k, cap);
        BT_ASSERT(dp_ok == brute_ok);
        BT_ASSERT(!dp_ok || dp == brute);
        BT_ASSERT(dp_ok == (bt_greedy_groups(desc, b, &m, BT_NO_LIMIT, cap) <= k));
    }
}

/* Equal lengths have a closed form: ceil(B / K) samples in the largest
 * micro-batch. */
static void test_equal_lengths_closed_form(void)
{
    static uint32_t len[97];
    for (size_t i = 0; i < 97; i++) len[i] = 37;
    bt_config c = bt_config_default(len, 97);
    c.batch_size = 5;
    c.dp_size = 3;
    c.grad_accum = 2; /* B = 30, K = 6 */
    c.alpha = 0.25;
    c.intercept = 3.5;
    c.drop_last = 0; /* steps of 30, 30, 30, 7 */
    bt_cost_model m = bt_cost_model_of(&c);
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    const uint64_t per_step[] = {30, 30, 30, 7};
    for (uint64_t t = 0; t < 4; t++) {
        bt_set_case("equal lengths, step %" PRIu64, t);
        bt_planned pl;
        if (!bt_plan_step(&pl, &c, t, p)) continue;
        BT_ASSERT(pl.status == BRS_OK && pl.step.num_samples == per_step[t]);
        uint64_t biggest = (per_step[t] + 5) / 6;
        BT_ASSERT(pl.max_cost == bt_cost_padded(&m, biggest, 37));
        bt_planned_free(&pl);
    }
    brs_plan_free(p);
}

/* ---- large steps: probe invariants and the threshold optimality --------- */

typedef struct {
    size_t b;
    int64_t dp, ga;
    enum shape shape;
    double alpha, intercept;
    int cap_div; /* 0: no cap; else cap = longest * P / cap_div */
    int64_t drop_last;
} large_case;

static const large_case large_cases[] = {
    {4096, 32, 8, LOGNORMAL, 0.001, 0.0, 0, 1}, {4096, 8, 8, UNIFORM, 0.0, 0.0, 0, 0},
    {4096, 64, 1, LONG_TAIL, 0.5, 250.0, 1, 1}, {4096, 16, 16, LOGNORMAL, 0.001, 0.0, 4, 0},
    {4096, 1, 1, WIDE, 0.001, 0.0, 0, 1},       {2000, 125, 2, SKEWED, 1000.0, 1e6, 0, 0},
    {1024, 4, 4, TIES, 0.001, 10.0, 2, 1},      {1024, 2, 8, LONG_TAIL, 0.0, 0.0, 8, 1},
    {512, 128, 2, WIDE, 0.003, 0.0, 0, 0},      {3000, 250, 1, ALL_EQUAL, 0.001, 1.0, 2, 0},
};

/* Plans the step with and without the case's cap and checks both. */
static void check_large_step(const bt_config *capped, uint64_t step, brs_plan *p)
{
    bt_config c = *capped;
    c.max_tokens = 0;
    bt_cost_model m = bt_cost_model_of(&c);
    bt_planned free_plan, pl;
    if (!bt_plan_step(&free_plan, &c, step, p)) return;
    BT_ASSERT(free_plan.status == BRS_OK);
    if (free_plan.status != BRS_OK) return;
    size_t b = free_plan.step.num_samples, k = (size_t)free_plan.step.k;
    /* With one micro-step the step time is the max cost: the exact min-max.
     * Otherwise the max cost may rise for a shorter step. */
    bool one_micro = free_plan.step.ga == 1;
    if (one_micro) BT_ASSERT(bt_threshold_optimal(free_plan.desc, b, k, &m, 0, free_plan.max_cost));
    uint64_t cap = (uint64_t)capped->max_tokens;
    if (cap && bt_plan_step(&pl, capped, step, p)) {
        uint64_t need = bt_greedy_groups(free_plan.desc, b, &m, BT_NO_LIMIT, cap);
        if (need <= k) {
            BT_ASSERT(pl.status == BRS_OK);
            if (pl.status == BRS_OK && one_micro)
                BT_ASSERT(bt_threshold_optimal(pl.desc, b, k, &m, cap, pl.max_cost));
        } else {
            BT_ASSERT(pl.status == BRS_ERR_CAP_INFEASIBLE);
            BT_ASSERT(bt_has_number(pl.message, need));
        }
        bt_planned_free(&pl);
    }
    bt_planned_free(&free_plan);
}

static void test_large_random_threshold_optimal(void)
{
    bt_rng r = {777};
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    for (size_t i = 0; i < sizeof large_cases / sizeof large_cases[0]; i++) {
        const large_case *lc = &large_cases[i];
        size_t n = 2 * lc->b + lc->b / 3 + 1; /* a ragged last step */
        uint32_t *len = malloc(n * sizeof *len);
        draw_lengths(&r, len, n, lc->shape);
        bt_config c = bt_config_default(len, n);
        c.batch_size = (int64_t)lc->b / (lc->dp * lc->ga);
        c.dp_size = lc->dp;
        c.grad_accum = lc->ga;
        c.alpha = lc->alpha;
        c.intercept = lc->intercept;
        c.drop_last = lc->drop_last;
        c.seed = (int64_t)i;
        c.max_tokens = lc->cap_div ? (int64_t)max_length(len, n) * c.batch_size / lc->cap_div : 0;
        if (c.max_tokens && c.max_tokens < (int64_t)max_length(len, n))
            c.max_tokens = max_length(len, n);
        uint64_t last = lc->drop_last ? 1 : 2;
        for (uint64_t t = 0; t <= last; t++) {
            bt_set_case("large case %zu (B %zu, K %" PRId64 ", %s, cap %" PRId64 ") step %" PRIu64,
                        i, lc->b, lc->dp * lc->ga, shape_name[lc->shape], c.max_tokens, t);
            check_large_step(&c, t, p);
        }
        free(len);
    }
    brs_plan_free(p);
}

/* ---- the fallback of the least-total split --------------------------------- */

/* The split the least-total search falls back on where it is too large
 * (docs/algorithm.md, step 4), by its definition, one split at a time: the
 * greedy groups from the short end within (limit, cap), numbered left to
 * right, then the costliest group of two samples or more halved (the first
 * half, ceil, keeps its number, the second takes the next) until there are
 * k, ties to the smaller number. Writes each group's (head, size). */
static void reference_fallback(uint64_t (*group)[2], const uint32_t *desc, size_t n, size_t k,
                               const bt_cost_model *m, u128 limit, uint64_t cap)
{
    size_t *begin = malloc(k * sizeof *begin), *size = malloc(k * sizeof *size), count = 0;
    for (size_t end = n; end > 0; count++) {
        size_t a = end - 1;
        while (a > 0 && bt_cost_padded(m, end - a + 1, desc[a - 1]) <= limit &&
               (end - a + 1) * desc[a - 1] <= cap)
            a--;
        begin[count] = a;
        size[count] = end - a;
        end = a;
    }
    CU_ASSERT_FATAL(count <= k);
    for (size_t g = 0; g < count / 2; g++) { /* numbered left to right */
        size_t t = begin[g], u = size[g];
        begin[g] = begin[count - 1 - g], size[g] = size[count - 1 - g];
        begin[count - 1 - g] = t, size[count - 1 - g] = u;
    }
    while (count < k) {
        size_t top = k;
        u128 worst = 0;
        for (size_t g = 0; g < count; g++) {
            u128 c = bt_cost_padded(m, size[g], desc[begin[g]]);
            if (size[g] >= 2 && (top == k || c > worst)) top = g, worst = c;
        }
        CU_ASSERT_FATAL(top < k);
        size_t first = (size[top] + 1) / 2;
        begin[count] = begin[top] + first;
        size[count++] = size[top] - first;
        size[top] = first;
    }
    for (size_t g = 0; g < k; g++) {
        group[g][0] = desc[begin[g]];
        group[g][1] = size[g];
    }
    free(begin);
    free(size);
}

static int head_then_size(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    if (x[0] != y[0]) return x[0] > y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* With one micro-step the plan is the least-total split at T* within the
 * least peak P*, and on these steps (a long tail, B / K large) its search is
 * too large: the plan's micro-batches are the fallback's groups. The batches
 * the library halves at once must make the same splits as one at a time,
 * ties included (equal lengths make many). */
static void test_fallback_split_matches_one_split_at_a_time(void)
{
    static const struct {
        size_t dp, per_rank;
        enum shape shape;
        double intercept;
    } cases[] = {{3000, 20, TIES, 0.0},
                 {3000, 20, LONG_TAIL, 100.0},
                 {600, 100, TIES, 0.0},
                 {2000, 30, ALL_EQUAL, 10.0}};
    bt_rng r = {4242};
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t k = cases[i].dp, b = k * cases[i].per_rank;
        uint32_t *len = malloc(2 * b * sizeof *len);
        draw_lengths(&r, len, 2 * b, cases[i].shape);
        len[bt_rng_below(&r, 2 * b)] = 40000; /* the long sample that sets T* */
        bt_config c = bt_config_default(len, 2 * b);
        c.batch_size = (int64_t)cases[i].per_rank;
        c.dp_size = (int64_t)k;
        c.alpha = 0.001;
        c.intercept = cases[i].intercept;
        brs_sampler *s = NULL;
        bt_step st;
        bt_set_case("fallback case %zu (K %zu, %s)", i, k, shape_name[cases[i].shape]);
        CU_ASSERT_FATAL(bt_sampler_new(&s, &c) == BRS_OK);
        CU_ASSERT_FATAL(brs_plan_compute(p, s, 0, 0) == BRS_OK);
        CU_ASSERT_FATAL(bt_step_load(&st, p));
        uint32_t *desc = bt_step_lengths_desc(&st, len);
        bt_cost_model m = bt_cost_model_of(&c);
        uint64_t(*planned)[2] = malloc(k * sizeof *planned), (*want)[2] = malloc(k * sizeof *want);
        u128 t = 0;
        for (size_t g = 0; g < k; g++) {
            uint64_t head = 0;
            for (size_t j = 0; j < st.mb[g].count; j++)
                head = len[st.mb[g].indices[j]] > head ? len[st.mb[g].indices[j]] : head;
            planned[g][0] = head;
            planned[g][1] = st.mb[g].count;
            u128 cost = bt_cost_padded(&m, st.mb[g].count, head);
            t = cost > t ? cost : t;
        }
        /* T* is the plan's max cost (grad_accum 1: exact); P* the least cap
         * within which the greedy at T* still needs at most k groups */
        CU_ASSERT(bt_threshold_optimal(desc, b, k, &m, 0, t));
        uint64_t low = desc[0], high = (uint64_t)b * desc[0];
        while (low < high) {
            uint64_t mid = low + (high - low) / 2;
            if (bt_greedy_groups(desc, b, &m, t, mid) <= k)
                high = mid;
            else
                low = mid + 1;
        }
        reference_fallback(want, desc, b, k, &m, t, low);
        qsort(planned, k, sizeof *planned, head_then_size);
        qsort(want, k, sizeof *want, head_then_size);
        size_t differ = 0;
        for (size_t g = 0; g < k; g++)
            differ += planned[g][0] != want[g][0] || planned[g][1] != want[g][1];
        CU_ASSERT_EQUAL(differ, 0);
        free(planned);
        free(want);
        free(desc);
        bt_step_free(&st);
        brs_sampler_free(s);
        free(len);
    }
    brs_plan_free(p);
}

/* ---- packed mode ---------------------------------------------------------- */

/* Tiny packed steps: LOWER_BOUND <= exact optimum <= MAX_COST; a cap is
 * never exceeded and CAP_INFEASIBLE only when no packing fits. */
static void test_packed_small_against_brute_force(void)
{
    bt_rng r = {99};
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    for (int i = 0; i < 400; i++) {
        int64_t k = 1 + (int64_t)bt_rng_below(&r, 3);
        int64_t per = 1 + (int64_t)bt_rng_below(&r, (uint64_t)(9 / k));
        size_t b = (size_t)(k * per), n = b;
        uint32_t len[9];
        draw_lengths(&r, len, n, (enum shape)(i % SHAPES));
        bt_config c = bt_config_default(len, n);
        c.packed = 1;
        c.batch_size = per;
        c.grad_accum = k;
        c.alpha = draw_alpha(&r, i);
        c.intercept = draw_intercept(&r, i / 5);
        uint64_t sum = 0;
        for (size_t j = 0; j < n; j++) sum += len[j];
        uint32_t longest = max_length(len, n);
        c.max_tokens = i % 2 ? (int64_t)(longest + bt_rng_below(&r, sum)) : 0;
        bt_set_case("packed case %d: B %zu K %" PRId64 " cap %" PRId64, i, b, k, c.max_tokens);
        bt_cost_model m = bt_cost_model_of(&c);
        u128 best = 0;
        bool feasible = bt_brute_min_max(&best, len, b, (size_t)k, &m, (uint64_t)c.max_tokens);
        bt_planned pl;
        if (!bt_plan_step(&pl, &c, 0, p)) continue;
        if (pl.status == BRS_ERR_CAP_INFEASIBLE) {
            BT_ASSERT(!feasible);
        } else {
            BT_ASSERT(pl.status == BRS_OK && feasible);
            if (pl.status == BRS_OK && feasible) {
                BT_ASSERT(pl.step.num_samples == b);
                BT_ASSERT(bt_le(bt_plan_double(p, BRS_PLAN_LOWER_BOUND), bt_to_cost(best)));
                BT_ASSERT(best <= pl.max_cost);
            }
        }
        bt_planned_free(&pl);
    }
    brs_plan_free(p);
}

/* Plans one packed step of all n samples with K = k and the cap; returns
 * the status (the step's invariants are checked when it plans). */
static brs_status plan_packed_once(const uint32_t *len, size_t n, size_t k, int64_t cap,
                                   brs_plan *p)
{
    bt_config c = bt_config_default(len, n);
    c.packed = 1;
    c.batch_size = (int64_t)((n + k - 1) / k);
    c.grad_accum = (int64_t)k;
    c.drop_last = 0; /* B >= n: one step of all n samples */
    c.alpha = 0.0;
    c.max_tokens = cap;
    bt_planned pl;
    if (!bt_plan_step(&pl, &c, 0, p)) return BRS_ERR_STATE;
    brs_status status = pl.status;
    bt_planned_free(&pl);
    return status;
}

/* Threes and twos, cap 6: m groups {3,3} and m groups {2,2,2} fit exactly,
 * with `spare` groups left empty until a sample moves into them. LPT puts
 * one three in every group and strands the twos; first-fit decreasing
 * finds the packing. */
static void expect_threes_and_twos_pack(size_t m, size_t spare, brs_plan *p)
{
    size_t n = 5 * m;
    uint32_t *len = malloc(n * sizeof *len);
    for (size_t i = 0; i < n; i++) len[i] = i < 2 * m ? 3 : 2;
    bt_set_case("packed threes and twos: m %zu, K %zu, cap 6", m, 2 * m + spare);
    BT_ASSERT(plan_packed_once(len, n, 2 * m + spare, 6, p) == BRS_OK);
    free(len);
}

/* Packed steps whose cap is met only by some packings. The header promises
 * CAP_INFEASIBLE only when K micro-batches cannot meet the cap, so each
 * feasible one must plan within it. Tiny cases are decided by brute force,
 * larger ones are feasible by construction. */
static void test_packed_cap_infeasible_only_when_no_packing_fits(void)
{
    static const struct {
        uint32_t len[8];
        size_t n, k;
        int64_t cap;
    } cases[] = {
        {{3, 3, 2, 2, 2}, 5, 2, 6},        /* {3,3} {2,2,2} */
        {{5, 4, 3, 3, 3}, 5, 2, 9},        /* {5,4} {3,3,3} */
        {{4, 4, 3, 3, 2, 2}, 6, 2, 9},     /* LPT meets it exactly */
        {{7, 5, 4, 3, 3, 2}, 6, 3, 8},     /* 24 = 3 x 8 but 7 has no partner: none */
        {{6, 6, 4, 4, 4, 4, 4}, 7, 3, 12}, /* {6,6} {4,4,4} {4,4} */
    };
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bt_config c = bt_config_default(cases[i].len, cases[i].n);
        c.packed = 1;
        c.alpha = 0.0;
        bt_cost_model m = bt_cost_model_of(&c);
        u128 best = 0;
        bool feasible = bt_brute_min_max(&best, cases[i].len, cases[i].n, cases[i].k, &m,
                                         (uint64_t)cases[i].cap);
        bt_set_case("packed handcrafted case %zu (feasible %d)", i, (int)feasible);
        brs_status st = plan_packed_once(cases[i].len, cases[i].n, cases[i].k, cases[i].cap, p);
        BT_ASSERT(st == (feasible ? BRS_OK : BRS_ERR_CAP_INFEASIBLE));
    }
    expect_threes_and_twos_pack(4, 1, p);   /* a group stays empty after packing */
    expect_threes_and_twos_pack(512, 0, p); /* the trap at scale */
    expect_threes_and_twos_pack(300, 7, p);
    brs_plan_free(p);
}

/* A large packed step under a cap 2% above the average tokens per group.
 * 32 long samples (1024) among 4064 short ones (16..64) with alpha = 0.1:
 * balancing cost alone leaves the long samples alone in their groups and
 * piles the short ones elsewhere (5104 tokens), so the cap must steer the
 * packing. */
static void test_packed_tight_cap_large_step(void)
{
    bt_rng r = {17};
    size_t n = 4096;
    uint32_t *len = malloc(n * sizeof *len);
    for (size_t i = 0; i < n; i++)
        len[i] = i % 128 == 5 ? 1024 : 16 + (uint32_t)bt_rng_below(&r, 49);
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) sum += len[i];
    bt_config c = bt_config_default(len, n);
    c.packed = 1;
    c.batch_size = 64;
    c.dp_size = 16;
    c.grad_accum = 4; /* K = 64: one step of all samples */
    c.alpha = 0.1;
    int64_t cap = (int64_t)(sum / 64 + sum / 64 / 50);
    c.max_tokens = cap;
    bt_set_case("packed tight cap %" PRId64, cap);
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    bt_planned pl;
    if (bt_plan_step(&pl, &c, 0, p)) {
        BT_ASSERT(pl.status == BRS_OK && pl.step.num_samples == n);
        bt_planned_free(&pl);
    }
    /* the same step without the cap does exceed it: the cap binds */
    c.max_tokens = 0;
    if (bt_plan_step(&pl, &c, 0, p)) {
        BT_ASSERT(pl.status == BRS_OK && bt_plan_int(p, BRS_PLAN_MAX_PADDED_TOKENS) > cap);
        bt_planned_free(&pl);
    }
    brs_plan_free(p);
    free(len);
}

/* A whole packed epoch: every index exactly once, each step checked. */
static void test_packed_epoch_covers_every_index(void)
{
    bt_rng r = {5};
    size_t n = 3 * 4096;
    uint32_t *len = malloc(n * sizeof *len);
    draw_lengths(&r, len, n, LOGNORMAL);
    bt_config c = bt_config_default(len, n);
    c.packed = 1;
    c.batch_size = 16;
    c.dp_size = 64;
    c.grad_accum = 4; /* B = 4096, K = 256 */
    c.max_tokens = 16 * 1024;
    bt_cost_model m = bt_cost_model_of(&c);
    unsigned char *seen = calloc(n, 1);
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    for (uint64_t t = 0; t < 3; t++) {
        bt_set_case("packed epoch, step %" PRIu64, t);
        bt_planned pl;
        if (!bt_plan_step(&pl, &c, t, p)) continue;
        BT_ASSERT(pl.status == BRS_OK);
        for (size_t j = 0; pl.status == BRS_OK && j < pl.step.num_samples; j++)
            seen[pl.sorted[j]]++;
        (void)m;
        bt_planned_free(&pl);
    }
    size_t once = 0;
    for (size_t i = 0; i < n; i++) once += seen[i] == 1;
    BT_ASSERT(once == n);
    brs_plan_free(p);
    free(seen);
    free(len);
}

/* ---- packed mode against Karmarkar-Karp ---------------------------------- */

#define KK_CASES 2400

/* The exact cost of each micro-batch of a planned step, slot by slot. */
static void slot_costs(u128 *cost, const bt_planned *pl, const uint32_t *len,
                       const bt_cost_model *m)
{
    for (int64_t slot = 0; slot < pl->step.k; slot++) {
        const bt_micro *mb = &pl->step.mb[slot];
        uint64_t sum = 0;
        u128 sum_sq = 0;
        for (size_t j = 0; j < mb->count; j++) {
            sum += len[mb->indices[j]];
            sum_sq += (u128)len[mb->indices[j]] * len[mb->indices[j]];
        }
        cost[slot] = bt_cost_packed(m, sum, sum_sq);
    }
}

/* Per-micro-step sync time of costs dealt rank-major; for the reference's
 * groups (costliest first) the deal into blocks of dp is the optimal one. */
static u128 micro_sync_rank_major(const u128 *cost, size_t dp, size_t ga)
{
    u128 time = 0;
    for (size_t micro = 0; micro < ga; micro++) {
        u128 worst = 0;
        for (size_t r = 0; r < dp; r++)
            worst = cost[r * ga + micro] > worst ? cost[r * ga + micro] : worst;
        time += worst;
    }
    return time;
}

static u128 micro_sync_sorted_blocks(const u128 *sorted_desc, size_t dp, size_t ga)
{
    u128 time = 0;
    for (size_t micro = 0; micro < ga; micro++) time += sorted_desc[micro * dp];
    return time;
}

static int by_length_desc(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* One step of every sample, planned packed, against the reference KK on the
 * same lengths. With one micro-step the step time of both sync models is
 * the largest cost, so the plan's max cost is at most KK's; with several,
 * under per-micro-step sync, its step time is at most KK's optimally dealt.
 * Where KK breaks the cap only the cap is checked. */
static void expect_at_least_kk(const bt_planned *pl, const bt_config *c, const bt_cost_model *m)
{
    size_t n = c->n, k = (size_t)(c->dp_size * c->grad_accum), dp = (size_t)c->dp_size;
    uint32_t desc[BT_KK_MAX_SAMPLES];
    memcpy(desc, c->lengths, n * sizeof *desc);
    qsort(desc, n, sizeof *desc, by_length_desc);
    u128 kk_cost[BT_KK_MAX_GROUPS], got[BT_KK_MAX_GROUPS];
    uint64_t kk_tokens[BT_KK_MAX_GROUPS], kk_peak = 0;
    BT_ASSERT(bt_oracle_karmarkar_karp(kk_cost, kk_tokens, desc, n, k, m));
    for (size_t g = 0; g < k; g++) kk_peak = kk_tokens[g] > kk_peak ? kk_tokens[g] : kk_peak;
    bool kk_fits = !c->max_tokens || kk_peak <= (uint64_t)c->max_tokens;
    BT_ASSERT(pl->status == BRS_OK || !kk_fits);
    if (pl->status != BRS_OK) return;
    BT_ASSERT(pl->step.num_samples == n);
    for (size_t j = 0; j < n && j < pl->step.num_samples; j++)
        BT_ASSERT(pl->sorted[j] == j); /* every sample once */
    if (!kk_fits) return;
    if (c->grad_accum == 1) {
        BT_ASSERT(pl->max_cost <= kk_cost[0]);
    } else {
        slot_costs(got, pl, c->lengths, m);
        BT_ASSERT(micro_sync_rank_major(got, dp, (size_t)c->grad_accum) <=
                  micro_sync_sorted_blocks(kk_cost, dp, (size_t)c->grad_accum));
    }
}

static void test_packed_at_least_karmarkar_karp(void)
{
    bt_rng r = {2024};
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    for (int i = 0; i < KK_CASES; i++) {
        uint32_t len[BT_KK_MAX_SAMPLES];
        int64_t dp = 1 + (int64_t)bt_rng_below(&r, 8);
        int64_t ga =
            i % 2 ? 1 : 1 + (int64_t)bt_rng_below(&r, (uint64_t)(16 / dp < 3 ? 16 / dp : 3));
        int64_t k = dp * ga, per = 1 + (int64_t)bt_rng_below(&r, (uint64_t)(40 / k));
        size_t n = (size_t)(k * per);
        enum shape shape = (enum shape)(i % SHAPES);
        draw_lengths(&r, len, n, shape);
        bt_config c = bt_config_default(len, n);
        c.packed = 1;
        c.shuffle = (int64_t)bt_rng_below(&r, 2);
        c.batch_size = per;
        c.dp_size = dp;
        c.grad_accum = ga;
        c.sync = ga == 1 ? (int64_t)bt_rng_below(&r, 2) : BRS_SYNC_MICRO_STEP;
        c.alpha = draw_alpha(&r, i / SHAPES);
        c.intercept = draw_intercept(&r, i / (SHAPES * 5));
        uint64_t sum = 0;
        for (size_t j = 0; j < n; j++) sum += len[j];
        c.max_tokens = i % 3 ? 0 : (int64_t)(max_length(len, n) + bt_rng_below(&r, sum));
        bt_set_case("packed kk case %d: %s n %zu dp %" PRId64 " ga %" PRId64 " sync %" PRId64
                    " alpha %.10g intercept %.10g cap %" PRId64,
                    i, shape_name[shape], n, dp, ga, c.sync, c.alpha, c.intercept, c.max_tokens);
        bt_cost_model m = bt_cost_model_of(&c);
        bt_planned pl;
        if (!bt_plan_step(&pl, &c, 0, p)) continue;
        if (pl.status == BRS_OK || pl.status == BRS_ERR_CAP_INFEASIBLE)
            expect_at_least_kk(&pl, &c, &m);
        else
            BT_ASSERT(pl.status == BRS_OK);
        bt_planned_free(&pl);
    }
    brs_plan_free(p);
}

int main(int argc, char **argv)
{
    static const bt_test tests[] = {
        {"small steps: plan equals the brute force over splits and deals",
         test_small_plans_equal_brute_force},
        {"random configurations: budget, bound and exact cases", test_random_configurations},
        {"layered: no layered plan within the budget is faster", test_no_layered_plan_is_faster},
        {"oracle self-check: DP equals brute force",
         test_dp_equals_brute_force_over_all_partitions},
        {"equal lengths: closed-form optimum", test_equal_lengths_closed_form},
        {"large steps: greedy threshold optimality", test_large_random_threshold_optimal},
        {"large steps: the fallback split equals one split at a time",
         test_fallback_split_matches_one_split_at_a_time},
        {"packed: brute force on tiny steps", test_packed_small_against_brute_force},
        {"packed: epoch covers every index once", test_packed_epoch_covers_every_index},
        {"packed: tight cap on a large step", test_packed_tight_cap_large_step},
        {"packed kk: at least as good as Karmarkar-Karp", test_packed_at_least_karmarkar_karp},
        {"packed cap: infeasible only when no packing fits",
         test_packed_cap_infeasible_only_when_no_packing_fits},
        {NULL, NULL},
    };
    return bt_run("oracle", tests, argc - 1, argv + 1);
}
