/* test_vocabulary.c - max_shapes: the shape vocabulary is sorted, within
 * max_shapes, the same on every rank and chosen again when the sampler
 * changes; every micro-batch of every rank and epoch runs at one of its
 * shapes (the padded length the vocabulary's, the batch size exact, every
 * sample once); small steps are planned exactly, checked against a brute
 * force over every split whose groups map to vocabulary shapes and every
 * deal; a kept last step plans; max_shapes_search's vocabulary keeps
 * these promises and plans faster; packed rows run at vocabulary rows;
 * the errors name what to change. */
#include "brs_test.h"

#include <stdlib.h>
#include <string.h>

#define MAX_VOCABULARY 64

typedef struct {
    uint64_t pairs[2 * MAX_VOCABULARY];
    size_t count;
} vocabulary;

static brs_status vocabulary_of(vocabulary *v, const brs_sampler *s)
{
    return brs_sampler_shape_vocabulary(v->pairs, &v->count, s, MAX_VOCABULARY);
}

static bool has_shape(const vocabulary *v, uint64_t size, uint64_t length)
{
    for (size_t i = 0; i < v->count; i++)
        if (v->pairs[2 * i] == size && v->pairs[2 * i + 1] == length) return true;
    return false;
}

/* The shortest vocabulary length of `size` holding `head`; 0 if none. */
static uint64_t shortest_holding(const vocabulary *v, uint64_t size, uint64_t head)
{
    uint64_t best = 0;
    for (size_t i = 0; i < v->count; i++)
        if (v->pairs[2 * i] == size && v->pairs[2 * i + 1] >= head &&
            (best == 0 || v->pairs[2 * i + 1] < best))
            best = v->pairs[2 * i + 1];
    return best;
}

static uint64_t round_up(uint64_t length, uint64_t multiple)
{
    return (length + multiple - 1) / multiple * multiple;
}

static brs_sampler *sampler_with(const bt_config *c, int64_t max_shapes, int64_t multiple)
{
    brs_sampler *s = NULL;
    CU_ASSERT_EQUAL_FATAL(bt_sampler_new(&s, c), BRS_OK);
    CU_ASSERT_EQUAL_FATAL(brs_sampler_set_int(s, BRS_OPT_MAX_SHAPES, max_shapes), BRS_OK);
    CU_ASSERT_EQUAL_FATAL(brs_sampler_set_int(s, BRS_OPT_PAD_TO_MULTIPLE_OF, multiple), BRS_OK);
    return s;
}

/* Every micro-batch of the step runs at a vocabulary shape: its padded
 * length is the shortest of its size that holds its longest sample. */
static void expect_in_vocabulary(const bt_step *st, const vocabulary *v, const uint32_t *lengths,
                                 uint64_t multiple)
{
    for (int64_t slot = 0; slot < st->k; slot++) {
        const bt_micro *mb = &st->mb[slot];
        uint64_t longest = 0;
        for (size_t i = 0; i < mb->count; i++)
            if (lengths[mb->indices[i]] > longest) longest = lengths[mb->indices[i]];
        BT_ASSERT(mb->count > 0);
        if (mb->count == 0) continue;
        uint64_t length = mb->padded / mb->count;
        BT_ASSERT(mb->padded % mb->count == 0);
        BT_ASSERT(has_shape(v, mb->count, length));
        BT_ASSERT(length == shortest_holding(v, mb->count, round_up(longest, multiple)));
    }
}

/* Every step of the epoch plans, each micro-batch at a vocabulary shape. */
static void expect_epoch_in_vocabulary(brs_sampler *s, uint64_t epoch, const vocabulary *v,
                                       const uint32_t *lengths, uint64_t multiple)
{
    uint64_t steps = 0;
    CU_ASSERT_EQUAL(brs_sampler_steps_per_epoch(&steps, s), BRS_OK);
    brs_plan *p = NULL;
    CU_ASSERT_EQUAL_FATAL(brs_plan_new(&p), BRS_OK);
    for (uint64_t step = 0; step < steps; step++) {
        bt_set_case("epoch %llu step %llu", (unsigned long long)epoch, (unsigned long long)step);
        BT_ASSERT(brs_plan_compute(p, s, epoch, step) == BRS_OK);
        bt_step st;
        if (!bt_step_load(&st, p)) break;
        expect_in_vocabulary(&st, v, lengths, multiple);
        bt_step_free(&st);
    }
    brs_plan_free(p);
}

static void test_sorted_bounded_rank_independent(void)
{
    uint32_t *lengths = bt_lognormal_lengths(640, 7);
    bt_config c = bt_config_default(lengths, 640);
    c.batch_size = 8, c.dp_size = 4, c.grad_accum = 2, c.rank = 0;
    for (int64_t max_shapes = 4; max_shapes <= 16; max_shapes *= 4) {
        bt_set_case("max_shapes %lld", (long long)max_shapes);
        brs_sampler *s0 = sampler_with(&c, max_shapes, 64);
        vocabulary v0, v3;
        BT_ASSERT(vocabulary_of(&v0, s0) == BRS_OK);
        BT_ASSERT(v0.count >= 1 && v0.count <= (size_t)max_shapes);
        for (size_t i = 1; i < v0.count; i++) {
            uint64_t a = v0.pairs[2 * i - 2], b = v0.pairs[2 * i];
            BT_ASSERT(a < b || (a == b && v0.pairs[2 * i - 1] < v0.pairs[2 * i + 1]));
        }
        brs_sampler *s3 = sampler_with(&c, max_shapes, 64);
        CU_ASSERT_EQUAL(brs_sampler_set_int(s3, BRS_OPT_RANK, 3), BRS_OK);
        BT_ASSERT(vocabulary_of(&v3, s3) == BRS_OK);
        BT_ASSERT(v3.count == v0.count);
        BT_ASSERT(memcmp(v0.pairs, v3.pairs, 2 * v0.count * sizeof *v0.pairs) == 0);
        brs_sampler_free(s0);
        brs_sampler_free(s3);
    }
    free(lengths);
}

/* Every rank, three epochs: each step's micro-batches run at vocabulary
 * shapes, and each epoch trains every sample once. */
static void test_every_micro_batch_in_vocabulary(void)
{
    size_t n = 1200;
    uint32_t *lengths = bt_lognormal_lengths(n, 11);
    bt_config c = bt_config_default(lengths, n);
    c.batch_size = 6, c.dp_size = 4, c.grad_accum = 2;
    for (int sync = 0; sync <= 1; sync++) {
        c.sync = sync;
        brs_sampler *s = sampler_with(&c, 12, 64);
        vocabulary v;
        BT_ASSERT(vocabulary_of(&v, s) == BRS_OK);
        brs_plan *p = NULL;
        CU_ASSERT_EQUAL_FATAL(brs_plan_new(&p), BRS_OK);
        uint64_t steps = 0;
        CU_ASSERT_EQUAL(brs_sampler_steps_per_epoch(&steps, s), BRS_OK);
        for (uint64_t epoch = 0; epoch < 3; epoch++) {
            unsigned char *seen = calloc(n, 1);
            for (uint64_t step = 0; step < steps; step++) {
                bt_set_case("sync %d epoch %llu step %llu", sync, (unsigned long long)epoch,
                            (unsigned long long)step);
                BT_ASSERT(brs_plan_compute(p, s, epoch, step) == BRS_OK);
                bt_step st;
                if (!bt_step_load(&st, p)) break;
                expect_in_vocabulary(&st, &v, lengths, 64);
                for (int64_t slot = 0; slot < st.k; slot++)
                    for (size_t i = 0; i < st.mb[slot].count; i++) seen[st.mb[slot].indices[i]]++;
                BT_ASSERT(
                    bt_plan_double(p, BRS_PLAN_TIME_LOWER_BOUND) <=
                    bt_plan_double(p, sync ? BRS_PLAN_STEP_SYNC_TIME : BRS_PLAN_MICRO_SYNC_TIME) *
                        (1 + 1e-12));
                bt_step_free(&st);
            }
            size_t once = 0;
            for (size_t i = 0; i < n; i++) once += seen[i] == 1;
            BT_ASSERT(once == steps * 48); /* drop_last: the tail is dropped */
            free(seen);
        }
        brs_plan_free(p);
        brs_sampler_free(s);
    }
    free(lengths);
}

/* The mean micro-step sync time of epochs [0, epochs) within the sampler's vocabulary. */
static double mean_time(brs_sampler *s, uint64_t epochs)
{
    brs_plan *p = NULL;
    CU_ASSERT_EQUAL_FATAL(brs_plan_new(&p), BRS_OK);
    uint64_t steps = 0;
    CU_ASSERT_EQUAL(brs_sampler_steps_per_epoch(&steps, s), BRS_OK);
    double total = 0;
    for (uint64_t epoch = 0; epoch < epochs; epoch++)
        for (uint64_t step = 0; step < steps; step++) {
            BT_ASSERT(brs_plan_compute(p, s, epoch, step) == BRS_OK);
            total += bt_plan_double(p, BRS_PLAN_MICRO_SYNC_TIME);
        }
    brs_plan_free(p);
    return total / (double)(epochs * steps);
}

/* max_shapes_search: the searched vocabulary is within max_shapes, keeps the
 * safety shape, is the same on every rank, holds every micro-batch of a
 * later epoch, and plans the steps it searched on faster than the greedy
 * choice it starts from; 0 is the default. */
static void test_search(void)
{
    size_t n = 1200;
    uint32_t *lengths = bt_lognormal_lengths(n, 5);
    bt_config c = bt_config_default(lengths, n);
    c.batch_size = 6, c.dp_size = 4, c.grad_accum = 2;
    uint64_t longest = 0;
    for (size_t i = 0; i < n; i++)
        if (round_up(lengths[i], 64) > longest) longest = round_up(lengths[i], 64);
    brs_sampler *greedy = sampler_with(&c, 10, 64), *searched = sampler_with(&c, 10, 64);
    brs_sampler *other_rank = sampler_with(&c, 10, 64), *zero = sampler_with(&c, 10, 64);
    CU_ASSERT_EQUAL(brs_sampler_set_int(searched, BRS_OPT_MAX_SHAPES_SEARCH, 400), BRS_OK);
    CU_ASSERT_EQUAL(brs_sampler_set_int(other_rank, BRS_OPT_MAX_SHAPES_SEARCH, 400), BRS_OK);
    CU_ASSERT_EQUAL(brs_sampler_set_int(other_rank, BRS_OPT_RANK, 3), BRS_OK);
    CU_ASSERT_EQUAL(brs_sampler_set_int(zero, BRS_OPT_MAX_SHAPES_SEARCH, 0), BRS_OK);
    vocabulary g, v, r, z;
    BT_ASSERT(vocabulary_of(&g, greedy) == BRS_OK && vocabulary_of(&v, searched) == BRS_OK);
    BT_ASSERT(vocabulary_of(&r, other_rank) == BRS_OK && vocabulary_of(&z, zero) == BRS_OK);
    BT_ASSERT(v.count >= 1 && v.count <= 10);
    BT_ASSERT(has_shape(&v, 6, longest)); /* 48 samples in 8 groups of 6, at the longest */
    BT_ASSERT(r.count == v.count && memcmp(r.pairs, v.pairs, 2 * v.count * sizeof *v.pairs) == 0);
    BT_ASSERT(z.count == g.count && memcmp(z.pairs, g.pairs, 2 * g.count * sizeof *g.pairs) == 0);
    BT_ASSERT(v.count != g.count || memcmp(v.pairs, g.pairs, 2 * g.count * sizeof *g.pairs) != 0);
    expect_epoch_in_vocabulary(searched, 2, &v, lengths, 64);
    /* the search tried its moves on every step of epochs 0 and 1 */
    BT_ASSERT(mean_time(searched, 2) < mean_time(greedy, 2));
    brs_sampler_free(greedy);
    brs_sampler_free(searched);
    brs_sampler_free(other_rank);
    brs_sampler_free(zero);
    free(lengths);
}

/* Small steps against the brute force: one step an epoch (N = B), its
 * plan scored exactly as the oracle scores every vocabulary split. */
static void test_small_steps_exact(void)
{
    bt_rng rng = {20261207};
    int checked = 0;
    for (int round = 0; round < 300; round++) {
        int64_t dp = 1 + (int64_t)bt_rng_below(&rng, 3), ga = 1 + (int64_t)bt_rng_below(&rng, 3);
        if (dp * ga > BT_PLAN_MAX_GROUPS) continue;
        int64_t bs = 1 + (int64_t)bt_rng_below(&rng, 3);
        size_t n = (size_t)(bs * dp * ga);
        if (n > 12) continue;
        uint32_t lengths[16];
        for (size_t i = 0; i < n; i++) lengths[i] = bt_lognormal(&rng, 4, 1, 1, 400);
        int64_t multiple = bt_rng_below(&rng, 2) ? 16 : 1;
        bt_config c = bt_config_default(lengths, n);
        c.batch_size = bs, c.dp_size = dp, c.grad_accum = ga, c.seed = round;
        c.sync = (int64_t)bt_rng_below(&rng, 2);
        int64_t max_shapes = 1 + (int64_t)bt_rng_below(&rng, 8);
        brs_sampler *s = sampler_with(&c, max_shapes, multiple);
        vocabulary v;
        brs_status status = vocabulary_of(&v, s);
        bt_set_case("round %d: n %zu dp %lld ga %lld max_shapes %lld sync %lld multiple %lld",
                    round, n, (long long)dp, (long long)ga, (long long)max_shapes,
                    (long long)c.sync, (long long)multiple);
        if (status != BRS_OK) {
            /* one shape a step needs at most: n / K at the longest */
            BT_ASSERT(status == BRS_ERR_CAP_INFEASIBLE);
            brs_sampler_free(s);
            continue;
        }
        brs_plan *p = NULL;
        CU_ASSERT_EQUAL_FATAL(brs_plan_new(&p), BRS_OK);
        for (uint64_t epoch = 0; epoch < 2; epoch++) {
            BT_ASSERT(brs_plan_compute(p, s, epoch, 0) == BRS_OK);
            bt_step st;
            if (!bt_step_load(&st, p)) break;
            expect_in_vocabulary(&st, &v, lengths, (uint64_t)multiple);
            uint32_t *desc = bt_step_lengths_desc(&st, lengths);
            for (size_t i = 0; i < n; i++) desc[i] = (uint32_t)round_up(desc[i], multiple);
            bt_cost_model m = bt_cost_model_of(&c);
            bt_score best;
            BT_ASSERT(bt_oracle_best_vocabulary_plan(&best, desc, n, (size_t)(dp * ga), (size_t)dp,
                                                     (int)c.sync, &m, 0, v.pairs, v.count));
            double time =
                bt_plan_double(p, c.sync ? BRS_PLAN_STEP_SYNC_TIME : BRS_PLAN_MICRO_SYNC_TIME);
            BT_ASSERT(bt_close(time, bt_to_cost(best.time)));
            if (bt_close(time, bt_to_cost(best.time))) {
                BT_ASSERT((u128)bt_plan_int(p, BRS_PLAN_MAX_PADDED_TOKENS) == best.peak);
                BT_ASSERT(bt_close(bt_plan_double(p, BRS_PLAN_TOTAL_COST), bt_to_cost(best.total)));
            }
            checked++;
            free(desc);
            bt_step_free(&st);
        }
        brs_plan_free(p);
        brs_sampler_free(s);
    }
    BT_ASSERT(checked > 100);
}

/* A kept last step (drop_last off, N not a multiple of B) plans within the
 * least vocabulary: its own safety shapes are in it. */
static void test_kept_last_step(void)
{
    size_t n = 203;
    uint32_t *lengths = bt_lognormal_lengths(n, 3);
    bt_config c = bt_config_default(lengths, n);
    c.batch_size = 4, c.dp_size = 2, c.grad_accum = 3, c.drop_last = 0;
    brs_sampler *s = sampler_with(&c, 1, 1);
    vocabulary v;
    brs_status status = vocabulary_of(&v, s);
    BT_ASSERT(status == BRS_ERR_CAP_INFEASIBLE);
    /* 24 per step: (4, longest); the last 203 % 24 = 11: (1, longest), (2, longest) */
    BT_ASSERT(bt_has_number(brs_sampler_last_error(s), 3));
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_MAX_SHAPES, 3), BRS_OK);
    BT_ASSERT(vocabulary_of(&v, s) == BRS_OK);
    BT_ASSERT(v.count == 3);
    expect_epoch_in_vocabulary(s, 1, &v, lengths, 1);
    brs_sampler_free(s);
    free(lengths);
}

static void test_errors(void)
{
    uint32_t *lengths = bt_lognormal_lengths(500, 5);
    bt_config c = bt_config_default(lengths, 500);
    c.batch_size = 4, c.dp_size = 2;
    brs_sampler *s = sampler_with(&c, 0, 1);
    vocabulary v;
    BT_ASSERT(vocabulary_of(&v, s) == BRS_OK);
    BT_ASSERT(v.count == 0); /* unbounded: no vocabulary */
    size_t count = 99;
    BT_ASSERT(brs_sampler_shape_vocabulary(NULL, NULL, s, 0) == BRS_ERR_NULL_POINTER);
    BT_ASSERT(brs_sampler_shape_vocabulary(NULL, &count, NULL, 0) == BRS_ERR_NULL_POINTER);
    BT_ASSERT(brs_sampler_shape_vocabulary(NULL, &count, s, 4) == BRS_ERR_NULL_POINTER);
    BT_ASSERT(brs_sampler_set_int(s, BRS_OPT_MAX_SHAPES, -1) == BRS_ERR_OUT_OF_RANGE);
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_MAX_SHAPES, 8), BRS_OK);
    BT_ASSERT(brs_sampler_shape_vocabulary(NULL, &count, s, 0) == BRS_OK);
    BT_ASSERT(count >= 1 && count <= 8);
    uint64_t one[2];
    if (count > 1) {
        BT_ASSERT(brs_sampler_shape_vocabulary(one, &count, s, 1) == BRS_ERR_OUT_OF_RANGE);
        BT_ASSERT(bt_has_number(brs_sampler_last_error(s), count));
    }
    /* packed mode needs a longest row: max_tokens */
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_PACKED, 1), BRS_OK);
    BT_ASSERT(brs_sampler_shape_vocabulary(NULL, &count, s, 0) == BRS_ERR_UNSUPPORTED);
    BT_ASSERT(strstr(brs_sampler_last_error(s), "max_tokens") != NULL);
    brs_plan *p = NULL;
    CU_ASSERT_EQUAL_FATAL(brs_plan_new(&p), BRS_OK);
    BT_ASSERT(brs_plan_compute(p, s, 0, 0) == BRS_ERR_UNSUPPORTED);
    BT_ASSERT(strstr(brs_plan_last_error(p), "packed") != NULL);
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_MAX_TOKENS, 1 << 20), BRS_OK);
    BT_ASSERT(brs_plan_compute(p, s, 0, 0) == BRS_OK);
    /* the fixed-size strategies ignore max_shapes */
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_PACKED, 0), BRS_OK);
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_STRATEGY, BRS_STRATEGY_RANDOM), BRS_OK);
    BT_ASSERT(brs_plan_compute(p, s, 0, 0) == BRS_OK);
    BT_ASSERT(brs_sampler_shape_vocabulary(NULL, &count, s, 0) == BRS_OK && count == 0);
    brs_plan_free(p);
    brs_sampler_free(s);
    free(lengths);
}

/* Packed mode: every micro-batch is one row at a vocabulary row (batch size
 * 1), the shortest that holds its padded total, the longest the cap's; a row
 * costs its packed cost plus a one-token sample's per token the vocabulary
 * adds; every sample trains once an epoch; more shapes pad less. */
static void test_packed_rows(void)
{
    size_t n = 1600;
    uint32_t *lengths = bt_lognormal_lengths(n, 13);
    bt_config c = bt_config_default(lengths, n);
    c.batch_size = 5, c.dp_size = 4, c.grad_accum = 2, c.packed = 1, c.max_tokens = 8000;
    uint64_t padded_by_count[2] = {0, 0};
    for (int round = 0; round < 2; round++) {
        int64_t max_shapes = round == 0 ? 2 : 12;
        bt_set_case("max_shapes %lld", (long long)max_shapes);
        brs_sampler *s = sampler_with(&c, max_shapes, 64);
        vocabulary v;
        BT_ASSERT(vocabulary_of(&v, s) == BRS_OK);
        BT_ASSERT(v.count >= 1 && v.count <= (size_t)max_shapes);
        for (size_t i = 0; i < v.count; i++) BT_ASSERT(v.pairs[2 * i] == 1);
        BT_ASSERT(v.pairs[2 * v.count - 1] == 8000 / 64 * 64); /* the cap's row, padded within it */
        bt_cost_model m = bt_cost_model_of(&c);
        brs_plan *p = NULL;
        CU_ASSERT_EQUAL_FATAL(brs_plan_new(&p), BRS_OK);
        uint64_t steps = 0;
        CU_ASSERT_EQUAL(brs_sampler_steps_per_epoch(&steps, s), BRS_OK);
        for (uint64_t epoch = 0; epoch < 2; epoch++) {
            unsigned char *seen = calloc(n, 1);
            for (uint64_t step = 0; step < steps; step++) {
                bt_set_case("max_shapes %lld epoch %llu step %llu", (long long)max_shapes,
                            (unsigned long long)epoch, (unsigned long long)step);
                BT_ASSERT(brs_plan_compute(p, s, epoch, step) == BRS_OK);
                bt_step st;
                if (!bt_step_load(&st, p)) break;
                for (int64_t slot = 0; slot < st.k; slot++) {
                    const bt_micro *mb = &st.mb[slot];
                    uint64_t sum = 0;
                    u128 squares = 0;
                    for (size_t i = 0; i < mb->count; i++) {
                        uint64_t length = lengths[mb->indices[i]];
                        sum += length, squares += (u128)length * length;
                        seen[mb->indices[i]]++;
                    }
                    BT_ASSERT(mb->real == sum);
                    BT_ASSERT(has_shape(&v, 1, mb->padded));
                    BT_ASSERT(mb->padded == shortest_holding(&v, 1, round_up(sum, 64)));
                    uint64_t added = mb->padded - round_up(sum, 64);
                    u128 cost = bt_cost_packed(&m, sum, squares) +
                                (u128)added * (bt_cost_padded(&m, 1, 1) - m.intercept_micro);
                    BT_ASSERT(bt_le(mb->cost, (double)cost / 1e6) &&
                              bt_le((double)cost / 1e6, mb->cost));
                    padded_by_count[round] += mb->padded;
                }
                bt_step_free(&st);
            }
            size_t once = 0;
            for (size_t i = 0; i < n; i++) once += seen[i] == 1;
            BT_ASSERT(once == steps * 40);
            free(seen);
        }
        brs_plan_free(p);
        brs_sampler_free(s);
    }
    BT_ASSERT(padded_by_count[1] < padded_by_count[0]);
    free(lengths);
}

int main(int argc, char **argv)
{
    static const bt_test tests[] = {
        {"vocabulary: sorted, bounded, the same on every rank",
         test_sorted_bounded_rank_independent},
        {"vocabulary: every micro-batch of every epoch at a vocabulary shape",
         test_every_micro_batch_in_vocabulary},
        {"vocabulary: small steps exact against the brute force", test_small_steps_exact},
        {"vocabulary: a kept last step plans", test_kept_last_step},
        {"vocabulary: max_shapes_search", test_search},
        {"vocabulary: packed rows", test_packed_rows},
        {"vocabulary: errors", test_errors},
        {NULL, NULL},
    };
    return bt_run("vocabulary", tests, argc - 1, argv + 1);
}
