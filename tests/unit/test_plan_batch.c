/* test_plan_batch.c - brs_plan_compute_batch: a batch planned on its own is
 * the plan brs_plan_compute gives for the one step of an epoch of exactly
 * those lengths with shuffle off (every strategy, padded and packed, both
 * sync models, with and without a cap), holds every position once within
 * the cap, is the exact min-max of the oracle where it has one micro-step,
 * plans exactly when the oracle says the cap can be met, and its errors
 * name what would do. */
#include "brs_test.h"

#include <stdlib.h>
#include <string.h>

/* The sampler of the one-step epoch of `lengths` under c. */
static brs_status one_step_sampler(brs_sampler **out, bt_config c, const uint32_t *lengths,
                                   size_t n)
{
    c.lengths = lengths;
    c.n = n;
    c.shuffle = 0;
    c.drop_last = 0;
    c.rank = 0;
    c.batch_size = (int64_t)((n + (size_t)(c.dp_size * c.grad_accum) - 1) /
                             (size_t)(c.dp_size * c.grad_accum));
    return bt_sampler_new(out, &c);
}

/* The same micro-batches, slot by slot. */
static void expect_same_plan(const brs_plan *a, const brs_plan *b, int64_t dp, int64_t ga)
{
    BT_ASSERT(bt_plan_int(a, BRS_PLAN_NUM_SAMPLES) == bt_plan_int(b, BRS_PLAN_NUM_SAMPLES));
    BT_ASSERT(bt_plan_double(a, BRS_PLAN_MICRO_SYNC_TIME) ==
              bt_plan_double(b, BRS_PLAN_MICRO_SYNC_TIME));
    for (int64_t r = 0; r < dp; r++)
        for (int64_t g = 0; g < ga; g++) {
            const uint64_t *x, *y;
            size_t nx, ny;
            BT_ASSERT(brs_plan_micro_batch(&x, &nx, a, r, g) == BRS_OK);
            BT_ASSERT(brs_plan_micro_batch(&y, &ny, b, r, g) == BRS_OK);
            BT_ASSERT(nx == ny && memcmp(x, y, nx * sizeof *x) == 0);
        }
}

/* A random small configuration: K in 1..6, n in K..12, a cap some of the
 * time (sometimes too small for K micro-batches), packed, sync and the
 * strategy some of the time. The sampler's own lengths are unrelated. */
static bt_config random_config(bt_rng *r, uint32_t *lengths, size_t *n, const uint32_t *dataset,
                               size_t dataset_n)
{
    bt_config c = bt_config_default(dataset, dataset_n);
    c.dp_size = 1 + (int64_t)bt_rng_below(r, 3);
    c.grad_accum = 1 + (int64_t)bt_rng_below(r, 2);
    size_t k = (size_t)(c.dp_size * c.grad_accum);
    *n = k + bt_rng_below(r, 13 - k);
    uint32_t longest = 0;
    for (size_t i = 0; i < *n; i++) {
        lengths[i] = bt_lognormal(r, 3.0, 1.0, 1, 200);
        if (lengths[i] > longest) longest = lengths[i];
    }
    c.alpha = bt_rng_below(r, 2) ? 0.01 : 0.0;
    c.intercept = bt_rng_below(r, 2) ? 7.0 : 0.0;
    c.packed = bt_rng_below(r, 4) == 0;
    c.sync = (int64_t)bt_rng_below(r, 2);
    c.seed = (int64_t)bt_rng_below(r, 1000); /* must play no part */
    if (bt_rng_below(r, 2)) c.max_tokens = (int64_t)(longest + bt_rng_below(r, 3 * longest + 1));
    return c;
}

static void test_random_batches_against_one_step_epoch(void)
{
    static const uint32_t dataset[3] = {5, 900, 17};
    bt_rng r = {2026};
    brs_plan *batch, *epoch;
    CU_ASSERT_FATAL(brs_plan_new(&batch) == BRS_OK && brs_plan_new(&epoch) == BRS_OK);
    for (int trial = 0; trial < 600; trial++) {
        uint32_t lengths[12];
        size_t n;
        bt_config c = random_config(&r, lengths, &n, dataset, 3);
        int64_t strategy = trial % 5 == 4 ? 1 + trial % 2 : BRS_STRATEGY_BALANCED;
        brs_sampler *config, *one;
        CU_ASSERT_FATAL(bt_sampler_new(&config, &c) == BRS_OK);
        CU_ASSERT_FATAL(one_step_sampler(&one, c, lengths, n) == BRS_OK);
        CU_ASSERT_FATAL(brs_sampler_set_int(config, BRS_OPT_STRATEGY, strategy) == BRS_OK);
        CU_ASSERT_FATAL(brs_sampler_set_int(one, BRS_OPT_STRATEGY, strategy) == BRS_OK);
        brs_status got = brs_plan_compute_batch(batch, config, lengths, n);
        BT_ASSERT(got == brs_plan_compute(epoch, one, 0, 0));
        bt_cost_model m = bt_cost_model_of(&c);
        uint64_t cap = (uint64_t)c.max_tokens;
        size_t k = (size_t)(c.dp_size * c.grad_accum);
        if (got == BRS_OK) {
            expect_same_plan(batch, epoch, c.dp_size, c.grad_accum);
            bt_step step;
            CU_ASSERT_FATAL(bt_step_load(&step, batch));
            u128 max_cost = 0;
            /* stats recomputed and the cap respected (the fixed-size
             * strategies keep draw order, not longest first) */
            if (strategy == BRS_STRATEGY_BALANCED)
                BT_ASSERT(bt_check_step(&max_cost, &step, batch, lengths, n, &m, cap));
            /* every position once */
            uint64_t *sorted = bt_step_indices_sorted(&step);
            for (size_t i = 0; i < n; i++) BT_ASSERT(step.num_samples == n && sorted[i] == i);
            free(sorted);
            if (strategy == BRS_STRATEGY_BALANCED && !c.packed && c.grad_accum == 1) {
                uint32_t *desc = bt_step_lengths_desc(&step, lengths);
                u128 best = 0;
                BT_ASSERT(bt_oracle_min_max(&best, desc, n, k, &m, cap));
                BT_ASSERT(max_cost == best);
                free(desc);
            }
            bt_step_free(&step);
        } else if (!c.packed) {
            /* only a cap the oracle cannot meet either stops a padded batch */
            BT_ASSERT(got == BRS_ERR_CAP_INFEASIBLE);
            BT_ASSERT(strstr(brs_plan_last_error(batch), "the batch") != NULL);
            uint32_t desc[12];
            memcpy(desc, lengths, n * sizeof *desc);
            for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && desc[j - 1] < desc[j]; j--) {
                    uint32_t t = desc[j];
                    desc[j] = desc[j - 1];
                    desc[j - 1] = t;
                }
            u128 unused;
            BT_ASSERT(!bt_oracle_min_max(&unused, desc, n, k, &m, cap));
        }
        BT_ASSERT(brs_plan_micro_batch(NULL, NULL, batch, 0, 0) != BRS_OK || got == BRS_OK);
        brs_sampler_free(config);
        brs_sampler_free(one);
    }
    brs_plan_free(batch);
    brs_plan_free(epoch);
}

/* The least max_tokens named by a refusal plans the batch; one less does not. */
static void test_cap_error_names_least_cap(void)
{
    static const uint32_t lengths[] = {100, 90, 80, 10, 9, 8, 7, 6};
    bt_config c = bt_config_default(lengths, 8);
    c.dp_size = 2;
    c.max_tokens = 100;
    brs_sampler *s;
    brs_plan *p;
    CU_ASSERT_FATAL(bt_sampler_new(&s, &c) == BRS_OK && brs_plan_new(&p) == BRS_OK);
    BT_ASSERT(brs_plan_compute_batch(p, s, lengths, 8) == BRS_ERR_CAP_INFEASIBLE);
    const char *message = brs_plan_last_error(p);
    /* 100 | 90 | 80 | 10 9 8 7 6 at 100 tokens: 4 micro-batches */
    BT_ASSERT(bt_has_number(message, 4));
    uint64_t least = 0;
    for (uint64_t cap = 100; cap <= 800 && least == 0; cap++) {
        CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_MAX_TOKENS, (int64_t)cap) == BRS_OK);
        if (brs_plan_compute_batch(p, s, lengths, 8) == BRS_OK) least = cap;
    }
    BT_ASSERT(least > 100 && bt_has_number(message, least) == false);
    CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_MAX_TOKENS, 100) == BRS_OK);
    BT_ASSERT(brs_plan_compute_batch(p, s, lengths, 8) == BRS_ERR_CAP_INFEASIBLE);
    BT_ASSERT(bt_has_number(brs_plan_last_error(p), least));
    brs_sampler_free(s);
    brs_plan_free(p);
}

static void test_errors(void)
{
    static const uint32_t lengths[] = {3, 0, 50, 4};
    bt_config c = bt_config_default(lengths, 1);
    c.dp_size = 2;
    c.grad_accum = 2;
    brs_sampler *s;
    brs_plan *p;
    CU_ASSERT_FATAL(bt_sampler_new(&s, &c) == BRS_OK && brs_plan_new(&p) == BRS_OK);
    BT_ASSERT(brs_plan_compute_batch(NULL, s, lengths, 4) == BRS_ERR_NULL_POINTER);
    BT_ASSERT(brs_plan_compute_batch(p, NULL, lengths, 4) == BRS_ERR_NULL_POINTER);
    BT_ASSERT(strstr(brs_plan_last_error(p), "config") != NULL);
    BT_ASSERT(brs_plan_compute_batch(p, s, NULL, 4) == BRS_ERR_NULL_POINTER);
    BT_ASSERT(brs_plan_compute_batch(p, s, lengths, 0) == BRS_ERR_INVALID_ARGUMENT);
    BT_ASSERT(strstr(brs_plan_last_error(p), "empty") != NULL);
    BT_ASSERT(brs_plan_compute_batch(p, s, lengths + 2, 2) == BRS_ERR_TOO_FEW_SAMPLES);
    /* 2 samples, K = 4: the message says 4 are needed */
    BT_ASSERT(bt_has_number(brs_plan_last_error(p), 4));
    BT_ASSERT(brs_plan_compute_batch(p, s, lengths, 4) == BRS_ERR_INVALID_LENGTH);
    BT_ASSERT(strstr(brs_plan_last_error(p), "lengths[1]") != NULL);
    static const uint32_t long_one[] = {3, 7, 50, 4};
    CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_MAX_TOKENS, 40) == BRS_OK);
    BT_ASSERT(brs_plan_compute_batch(p, s, long_one, 4) == BRS_ERR_SAMPLE_TOO_LONG);
    BT_ASSERT(strstr(brs_plan_last_error(p), "lengths[2]") != NULL);
    BT_ASSERT(bt_has_number(brs_plan_last_error(p), 50));
    /* a failed batch leaves no step behind */
    int64_t value;
    BT_ASSERT(brs_plan_get_int(&value, p, BRS_PLAN_NUM_SAMPLES) == BRS_ERR_STATE);
    CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_MAX_TOKENS, 0) == BRS_OK);
    BT_ASSERT(brs_plan_compute_batch(p, s, long_one, 4) == BRS_OK);
    BT_ASSERT(brs_plan_get_int(&value, p, BRS_PLAN_NUM_SAMPLES) == BRS_OK && value == 4);
    brs_sampler_free(s);
    brs_plan_free(p);
}

/* A sampler without lengths is a configuration too. */
static void test_config_without_lengths(void)
{
    static const uint32_t lengths[] = {30, 1, 2, 3, 4, 5};
    brs_sampler *s;
    brs_plan *p;
    CU_ASSERT_FATAL(brs_sampler_new(&s) == BRS_OK && brs_plan_new(&p) == BRS_OK);
    CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_DP_SIZE, 2) == BRS_OK);
    BT_ASSERT(brs_plan_compute_batch(p, s, lengths, 6) == BRS_OK);
    const uint64_t *mb;
    size_t count;
    BT_ASSERT(brs_plan_micro_batch(&mb, &count, p, 0, 0) == BRS_OK);
    size_t total = count;
    BT_ASSERT(brs_plan_micro_batch(&mb, &count, p, 1, 0) == BRS_OK);
    BT_ASSERT(total + count == 6);
    brs_sampler_free(s);
    brs_plan_free(p);
}

int main(int argc, char **argv)
{
    static const bt_test tests[] = {
        {"random batches against the one-step epoch and the oracle",
         test_random_batches_against_one_step_epoch},
        {"the cap error names the least cap", test_cap_error_names_least_cap},
        {"errors", test_errors},
        {"a configuration without lengths", test_config_without_lengths},
        {NULL, NULL},
    };
    return bt_run("plan_batch", tests, argc - 1, argv + 1);
}
