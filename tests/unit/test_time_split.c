/* test_time_split.c - BRS_PLAN_STEP_TIME and where it goes: on real plans
 * (every strategy, both sync models, padded and packed, rounded padding,
 * a batch, a loaded plan) useful + padding + waiting is the ranks' time,
 * ranks x step time; waiting is what the definition of include/brs.h gives
 * from the micro-batches' own costs, useful what the samples cost unpadded,
 * and a perfectly balanced step neither pads nor waits. */
#include "brs_test.h"

#include <stdlib.h>

/* The step time the sync model names, from the micro-batches' costs, read
 * once each: the micro-steps' slowest ranks summed, or the slowest rank's
 * sum over its micro-steps. */
static double slowest(const brs_plan *p, int64_t sync, double *total)
{
    int64_t dp = bt_plan_int(p, BRS_PLAN_DP_SIZE), ga = bt_plan_int(p, BRS_PLAN_GRAD_ACCUM);
    double micro_sync = 0, step_sync = 0;
    double *rank_sum = calloc((size_t)dp, sizeof *rank_sum);
    CU_ASSERT_FATAL(rank_sum != NULL);
    *total = 0;
    for (int64_t m = 0; m < ga; m++) {
        double worst = 0;
        for (int64_t r = 0; r < dp; r++) {
            uint64_t padded, real;
            double cost;
            CU_ASSERT_FATAL(brs_plan_micro_batch_stats(&padded, &real, &cost, p, r, m) == BRS_OK);
            if (cost > worst) worst = cost;
            rank_sum[r] += cost;
            *total += cost;
        }
        micro_sync += worst;
    }
    for (int64_t r = 0; r < dp; r++)
        if (rank_sum[r] > step_sync) step_sync = rank_sum[r];
    free(rank_sum);
    return sync == BRS_SYNC_STEP ? step_sync : micro_sync;
}

/* What the plan's samples cost unpadded: their own weights and an
 * intercept per micro-batch. */
static double unpadded(const brs_plan *p, const uint32_t *lengths, const bt_config *c)
{
    int64_t dp = bt_plan_int(p, BRS_PLAN_DP_SIZE), ga = bt_plan_int(p, BRS_PLAN_GRAD_ACCUM);
    double sum = c->intercept * (double)(dp * ga);
    for (int64_t r = 0; r < dp; r++)
        for (int64_t m = 0; m < ga; m++) {
            const uint64_t *mb;
            size_t count;
            CU_ASSERT_FATAL(brs_plan_micro_batch(&mb, &count, p, r, m) == BRS_OK);
            for (size_t i = 0; i < count; i++) {
                double l = lengths[mb[i]];
                sum += l + c->alpha * l * l;
            }
        }
    return sum;
}

/* The split of the plan against its definition. */
static void expect_split(const brs_plan *p, const uint32_t *lengths, const bt_config *c)
{
    double total, t = slowest(p, c->sync, &total);
    double ranks = (double)bt_plan_int(p, BRS_PLAN_DP_SIZE);
    double step = bt_plan_double(p, BRS_PLAN_STEP_TIME);
    double useful = bt_plan_double(p, BRS_PLAN_USEFUL_TIME);
    double padding = bt_plan_double(p, BRS_PLAN_PADDING_TIME);
    double waiting = bt_plan_double(p, BRS_PLAN_WAITING_TIME);
    CU_ASSERT(bt_close(step, t));
    CU_ASSERT(
        bt_close(step, bt_plan_double(p, c->sync == BRS_SYNC_STEP ? BRS_PLAN_STEP_SYNC_TIME
                                                                  : BRS_PLAN_MICRO_SYNC_TIME)));
    CU_ASSERT(bt_close(useful + padding + waiting, ranks * step));
    CU_ASSERT(bt_close(useful + padding, bt_plan_double(p, BRS_PLAN_TOTAL_COST)));
    CU_ASSERT(fabs(waiting - (ranks * t - total)) <= 1e-9 * ranks * t);
    CU_ASSERT(bt_close(useful, unpadded(p, lengths, c)));
    CU_ASSERT(useful > 0 && padding >= 0 && waiting >= 0);
}

static uint32_t *lognormal(size_t n, uint64_t seed)
{
    uint32_t *len = malloc(n * sizeof *len);
    bt_rng r = {seed};
    for (size_t i = 0; i < n; i++) len[i] = bt_lognormal(&r, 5.0, 1.0, 1, 3000);
    return len;
}

static void test_identity_on_real_plans(void)
{
    size_t n = 600;
    uint32_t *len = lognormal(n, 3);
    static const int64_t shapes[][3] = {{8, 1, 1}, {4, 2, 4}, {3, 4, 2}, {2, 1, 8}};
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
        for (int64_t strategy = 0; strategy <= 2; strategy++)
            for (int64_t sync = 0; sync <= 1; sync++)
                for (int64_t packed = 0; packed <= 1; packed++)
                    for (int64_t pad = 1; pad <= 64; pad *= 64) {
                        if (packed && strategy) continue; /* packing is the planner's */
                        bt_config c = bt_config_default(len, n);
                        c.batch_size = shapes[sh][0];
                        c.grad_accum = shapes[sh][1];
                        c.dp_size = shapes[sh][2];
                        c.sync = sync, c.packed = packed;
                        c.alpha = 0.002, c.intercept = 40;
                        bt_set_case("shape %zu strategy %lld sync %lld packed %lld pad %lld", sh,
                                    (long long)strategy, (long long)sync, (long long)packed,
                                    (long long)pad);
                        brs_sampler *s = NULL;
                        CU_ASSERT_FATAL(bt_sampler_new(&s, &c) == BRS_OK);
                        CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_STRATEGY, strategy) ==
                                        BRS_OK);
                        CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_PAD_TO_MULTIPLE_OF, pad) ==
                                        BRS_OK);
                        for (uint64_t step = 0; step < 3; step++) {
                            CU_ASSERT_FATAL(brs_plan_compute(p, s, 1, step) == BRS_OK);
                            expect_split(p, len, &c);
                        }
                        brs_sampler_free(s);
                    }
    brs_plan_free(p);
    free(len);
}

/* A batch (brs_plan_compute_batch) and a loaded plan are split alike; a
 * loaded plan that leaves a rank idle waits for the slowest one. */
static void test_batch_and_loaded(void)
{
    size_t n = 64;
    uint32_t *len = lognormal(n, 9);
    bt_config c = bt_config_default(len, n);
    c.batch_size = 8, c.dp_size = 4, c.grad_accum = 2, c.alpha = 0.001;
    brs_sampler *s = NULL;
    CU_ASSERT_FATAL(bt_sampler_new(&s, &c) == BRS_OK);
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    CU_ASSERT_FATAL(brs_plan_compute_batch(p, s, len, n) == BRS_OK);
    expect_split(p, len, &c);
    /* one rank holds all but seven samples */
    uint64_t indices[64], counts[8] = {57, 1, 1, 1, 1, 1, 1, 1};
    for (size_t i = 0; i < n; i++) indices[i] = i;
    CU_ASSERT_FATAL(brs_plan_load(p, s, indices, counts, 8, 0, 0) == BRS_OK);
    expect_split(p, len, &c);
    CU_ASSERT(bt_plan_double(p, BRS_PLAN_WAITING_TIME) > bt_plan_double(p, BRS_PLAN_USEFUL_TIME));
    brs_plan_free(p);
    brs_sampler_free(s);
    free(len);
}

/* Equal samples, as many per micro-batch on every rank: nothing pads and
 * nobody waits, under either sync model, so the useful work fills the
 * ranks' time. */
static void test_balanced_waits_nothing(void)
{
    uint32_t len[96];
    for (size_t i = 0; i < 96; i++) len[i] = 300;
    for (int64_t sync = 0; sync <= 1; sync++) {
        bt_config c = bt_config_default(len, 96);
        c.batch_size = 4, c.dp_size = 4, c.grad_accum = 3, c.alpha = 0.003, c.intercept = 7;
        c.sync = sync;
        brs_sampler *s = NULL;
        CU_ASSERT_FATAL(bt_sampler_new(&s, &c) == BRS_OK);
        brs_plan *p = NULL;
        CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
        CU_ASSERT_FATAL(brs_plan_compute(p, s, 0, 1) == BRS_OK);
        expect_split(p, len, &c);
        CU_ASSERT_EQUAL(bt_plan_double(p, BRS_PLAN_WAITING_TIME), 0);
        CU_ASSERT_EQUAL(bt_plan_double(p, BRS_PLAN_PADDING_TIME), 0);
        CU_ASSERT(bt_close(bt_plan_double(p, BRS_PLAN_USEFUL_TIME),
                           4 * bt_plan_double(p, BRS_PLAN_STEP_TIME)));
        brs_plan_free(p);
        brs_sampler_free(s);
    }
}

int main(int argc, char **argv)
{
    static const bt_test tests[] = {
        {"identity on real plans", test_identity_on_real_plans},
        {"batch and loaded plans", test_batch_and_loaded},
        {"a balanced step waits nothing", test_balanced_waits_nothing},
        {NULL, NULL},
    };
    return bt_run("time_split", tests, argc - 1, argv + 1);
}
