/* test_padding.c - pad_to_multiple_of and length buckets: every micro-batch
 * is priced, capped and reported at the length its collator pads it to; the
 * padded planner stays exact (the contiguity theorem holds for a rounded
 * length, checked against a brute force over every partition); buckets are
 * validated and fingerprinted; the default ladder; the epoch's shapes are
 * the shapes its plans run; the epoch check names a cap that plans. */
#include "brs_test.h"

#include <stdlib.h>
#include <string.h>

static uint64_t round_up(uint64_t length, uint64_t multiple)
{
    return (length + multiple - 1) / multiple * multiple;
}

/* The padded length of a micro-batch whose longest sample has `length`
 * tokens: rounded up to the multiple, then to the first bucket (0: none). */
static uint64_t padded_length(uint64_t length, uint64_t multiple, const uint32_t *buckets,
                              size_t nb)
{
    uint64_t rounded = round_up(length, multiple);
    if (nb == 0) return rounded;
    for (size_t i = 0; i < nb; i++)
        if (buckets[i] >= rounded) return buckets[i];
    return 0;
}

/* Every micro-batch of the computed step: padded tokens and cost are those
 * of its rounded length, within the cap. */
static void expect_padded_step(const brs_plan *p, const uint32_t *lengths, const bt_config *c,
                               uint64_t multiple, const uint32_t *buckets, size_t nb)
{
    bt_step st;
    if (!bt_step_load(&st, p)) return;
    bt_cost_model m = bt_cost_model_of(c);
    for (int64_t slot = 0; slot < st.k; slot++) {
        const bt_micro *mb = &st.mb[slot];
        uint64_t longest = 0;
        for (size_t i = 0; i < mb->count; i++)
            if (lengths[mb->indices[i]] > longest) longest = lengths[mb->indices[i]];
        uint64_t padded = padded_length(longest, multiple, buckets, nb);
        bt_set_case("slot %lld: %zu samples, longest %llu, padded to %llu", (long long)slot,
                    mb->count, (unsigned long long)longest, (unsigned long long)padded);
        BT_ASSERT(padded != 0);
        BT_ASSERT(mb->padded == mb->count * padded);
        BT_ASSERT(bt_close(mb->cost, bt_to_cost(bt_cost_padded(&m, mb->count, padded))));
        if (c->max_tokens) BT_ASSERT(mb->padded <= (uint64_t)c->max_tokens);
    }
    bt_step_free(&st);
}

static brs_sampler *sampler_with_padding(const bt_config *c, int64_t multiple)
{
    brs_sampler *s = NULL;
    CU_ASSERT_FATAL(bt_sampler_new(&s, c) == BRS_OK);
    CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_PAD_TO_MULTIPLE_OF, multiple) == BRS_OK);
    return s;
}

/* A collator padding to 64 under a cap of 4096: lognormal(5, 1) lengths,
 * per-device batch 8, dp 4, grad_accum 2 (without the rounding in the plan,
 * 4 of rank 0's 250 micro-batches were built above the cap). */
static void test_multiple_keeps_the_cap(void)
{
    uint32_t *lengths = bt_lognormal_lengths(8000, 7);
    bt_config c = bt_config_default(lengths, 8000);
    c.batch_size = 8;
    c.dp_size = 4;
    c.grad_accum = 2;
    c.max_tokens = 4096;
    brs_sampler *s = sampler_with_padding(&c, 64);
    brs_plan *p;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    uint64_t steps = 0;
    CU_ASSERT_FATAL(brs_sampler_steps_per_epoch(&steps, s) == BRS_OK);
    for (uint64_t step = 0; step < steps; step++) {
        BT_ASSERT(brs_plan_compute(p, s, 0, step) == BRS_OK);
        expect_padded_step(p, lengths, &c, 64, NULL, 0);
        BT_ASSERT(bt_plan_int(p, BRS_PLAN_MAX_PADDED_TOKENS) <= 4096);
    }
    brs_plan_free(p);
    brs_sampler_free(s);
    free(lengths);
}

/* The padded lengths of desc, longest first still (rounding is monotone). */
static void pad_all(uint32_t *out, const uint32_t *desc, size_t n, uint64_t multiple)
{
    for (size_t i = 0; i < n; i++) out[i] = (uint32_t)round_up(desc[i], multiple);
}

/* With one micro-step per rank the plan's largest cost is the exact min-max
 * of the rounded lengths: over contiguous splits (the DP oracle) and, on
 * steps of up to 10 samples, over every partition (the theorem holds). */
static void test_exact_with_rounding(void)
{
    bt_rng r = {404};
    brs_plan *p;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    static const int64_t multiples[] = {1, 2, 8, 64};
    for (int trial = 0; trial < 400; trial++) {
        uint32_t lengths[10], desc[10], padded[10];
        size_t k = 1 + bt_rng_below(&r, 4), n = k + bt_rng_below(&r, 11 - k);
        for (size_t i = 0; i < n; i++) lengths[i] = bt_lognormal(&r, 4.0, 1.0, 1, 300);
        bt_config c = bt_config_default(lengths, n);
        c.dp_size = (int64_t)k;
        c.alpha = bt_rng_below(&r, 2) ? 0.01 : 0.0;
        c.intercept = bt_rng_below(&r, 2) ? 5.0 : 0.0;
        int64_t multiple = multiples[bt_rng_below(&r, 4)];
        uint64_t longest = 0;
        for (size_t i = 0; i < n; i++) longest = lengths[i] > longest ? lengths[i] : longest;
        if (bt_rng_below(&r, 2))
            c.max_tokens = (int64_t)(round_up(longest, multiple) + bt_rng_below(&r, 4 * longest));
        brs_sampler *s = sampler_with_padding(&c, multiple);
        bt_set_case("trial %d: n %zu, k %zu, multiple %lld, cap %lld", trial, n, k,
                    (long long)multiple, (long long)c.max_tokens);
        brs_status status = brs_plan_compute_batch(p, s, lengths, n);
        memcpy(desc, lengths, n * sizeof *desc);
        for (size_t i = 1; i < n; i++) /* insertion sort, longest first */
            for (size_t j = i; j > 0 && desc[j] > desc[j - 1]; j--) {
                uint32_t t = desc[j];
                desc[j] = desc[j - 1];
                desc[j - 1] = t;
            }
        pad_all(padded, desc, n, (uint64_t)multiple);
        bt_cost_model m = bt_cost_model_of(&c);
        u128 contiguous = 0, any = 0;
        bool feasible = bt_oracle_min_max(&contiguous, padded, n, k, &m, (uint64_t)c.max_tokens);
        BT_ASSERT(feasible == (status == BRS_OK));
        if (feasible && status == BRS_OK) {
            BT_ASSERT(bt_close(bt_plan_double(p, BRS_PLAN_MAX_COST), bt_to_cost(contiguous)));
            BT_ASSERT(bt_brute_min_max(&any, padded, n, k, &m, (uint64_t)c.max_tokens));
            BT_ASSERT(any == contiguous);
            expect_padded_step(p, lengths, &c, (uint64_t)multiple, NULL, 0);
        }
        brs_sampler_free(s);
    }
    brs_plan_free(p);
}

/* Each micro-batch is padded to the smallest bucket that holds its longest
 * sample rounded to the multiple, for every strategy and both modes' pads. */
static void test_buckets_pad_every_micro_batch(void)
{
    uint32_t *lengths = bt_lognormal_lengths(3000, 11);
    static const uint32_t buckets[] = {64, 128, 192, 256, 384, 512, 768, 1024};
    brs_plan *p;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    for (int64_t strategy = 0; strategy <= 2; strategy++)
        for (int64_t multiple = 1; multiple <= 16; multiple *= 16) {
            bt_config c = bt_config_default(lengths, 3000);
            c.dp_size = 4;
            c.grad_accum = 2;
            c.max_tokens = strategy == BRS_STRATEGY_BALANCED ? 6144 : 0;
            brs_sampler *s = sampler_with_padding(&c, multiple);
            CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_STRATEGY, strategy) == BRS_OK);
            CU_ASSERT_FATAL(brs_sampler_set_length_buckets(s, buckets, 8) == BRS_OK);
            for (uint64_t step = 0; step < 5; step++) {
                bt_set_case("strategy %lld, multiple %lld, step %llu", (long long)strategy,
                            (long long)multiple, (unsigned long long)step);
                BT_ASSERT(brs_plan_compute(p, s, 1, step) == BRS_OK);
                expect_padded_step(p, lengths, &c, (uint64_t)multiple, buckets, 8);
            }
            brs_sampler_free(s);
        }
    brs_plan_free(p);
    free(lengths);
}

static void test_bucket_errors(void)
{
    static const uint32_t lengths[] = {10, 300, 40, 70};
    bt_config c = bt_config_default(lengths, 4);
    c.batch_size = 2;
    c.dp_size = 2;
    brs_sampler *s;
    CU_ASSERT_FATAL(bt_sampler_new(&s, &c) == BRS_OK);
    static const uint32_t good[] = {64, 128, 512}, zero[] = {0, 64}, order[] = {64, 64, 512};
    CU_ASSERT(brs_sampler_set_length_buckets(s, good, 3) == BRS_OK);
    CU_ASSERT(brs_sampler_set_length_buckets(s, zero, 2) == BRS_ERR_INVALID_ARGUMENT);
    CU_ASSERT(strstr(brs_sampler_last_error(s), "buckets[0] is 0") != NULL);
    CU_ASSERT(brs_sampler_set_length_buckets(s, order, 3) == BRS_ERR_INVALID_ARGUMENT);
    CU_ASSERT(strstr(brs_sampler_last_error(s), "strictly increasing") != NULL);
    CU_ASSERT(brs_sampler_set_length_buckets(s, NULL, 2) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_sampler_set_length_buckets(NULL, good, 3) == BRS_ERR_NULL_POINTER);
    /* the failures left the buckets as they were */
    const uint32_t *got;
    size_t count;
    CU_ASSERT(brs_sampler_get_length_buckets(&got, &count, s) == BRS_OK);
    CU_ASSERT(count == 3 && memcmp(got, good, sizeof good) == 0);
    CU_ASSERT(brs_sampler_get_length_buckets(NULL, &count, s) == BRS_ERR_NULL_POINTER);
    /* a sample above the last bucket is refused, naming the bucket */
    static const uint32_t short_ladder[] = {64, 128, 256};
    CU_ASSERT(brs_sampler_set_length_buckets(s, short_ladder, 3) == BRS_OK);
    CU_ASSERT(brs_sampler_validate(s) == BRS_ERR_SAMPLE_TOO_LONG);
    CU_ASSERT(strstr(brs_sampler_last_error(s), "last length bucket 256") != NULL);
    CU_ASSERT(bt_has_number(brs_sampler_last_error(s), 300));
    uint64_t cap, groups;
    CU_ASSERT(brs_sampler_check_epoch(&cap, &groups, s, 0) == BRS_ERR_SAMPLE_TOO_LONG);
    /* so is one whose padded length breaks the cap, naming the padded length */
    CU_ASSERT(brs_sampler_set_length_buckets(s, NULL, 0) == BRS_OK);
    CU_ASSERT(brs_sampler_set_int(s, BRS_OPT_MAX_TOKENS, 310) == BRS_OK);
    CU_ASSERT(brs_sampler_validate(s) == BRS_OK);
    CU_ASSERT(brs_sampler_set_int(s, BRS_OPT_PAD_TO_MULTIPLE_OF, 64) == BRS_OK);
    CU_ASSERT(brs_sampler_validate(s) == BRS_ERR_SAMPLE_TOO_LONG);
    CU_ASSERT(bt_has_number(brs_sampler_last_error(s), 320));
    CU_ASSERT(brs_sampler_set_int(s, BRS_OPT_PAD_TO_MULTIPLE_OF, 0) == BRS_ERR_OUT_OF_RANGE);
    brs_sampler_free(s);
}

/* Padding enters both fingerprints, and a sampler without it keeps the
 * fingerprint it had before the options existed. */
static void test_fingerprints(void)
{
    uint32_t *lengths = bt_lognormal_lengths(500, 3);
    bt_config c = bt_config_default(lengths, 500);
    brs_sampler *s;
    CU_ASSERT_FATAL(bt_sampler_new(&s, &c) == BRS_OK);
    uint64_t plain, plain_stream, fp, stream;
    CU_ASSERT(brs_sampler_fingerprint(&plain, s) == BRS_OK);
    CU_ASSERT(brs_sampler_stream_fingerprint(&plain_stream, s) == BRS_OK);
    CU_ASSERT(brs_sampler_set_int(s, BRS_OPT_PAD_TO_MULTIPLE_OF, 1) == BRS_OK);
    CU_ASSERT(brs_sampler_fingerprint(&fp, s) == BRS_OK && fp == plain);
    CU_ASSERT(brs_sampler_set_int(s, BRS_OPT_PAD_TO_MULTIPLE_OF, 64) == BRS_OK);
    CU_ASSERT(brs_sampler_fingerprint(&fp, s) == BRS_OK && fp != plain);
    CU_ASSERT(brs_sampler_set_int(s, BRS_OPT_PAD_TO_MULTIPLE_OF, 1) == BRS_OK);
    static const uint32_t a[] = {512, 1024}, b[] = {256, 1024};
    uint64_t with_a, with_b;
    CU_ASSERT(brs_sampler_set_length_buckets(s, a, 2) == BRS_OK);
    CU_ASSERT(brs_sampler_fingerprint(&with_a, s) == BRS_OK && with_a != plain);
    CU_ASSERT(brs_sampler_stream_fingerprint(&stream, s) == BRS_OK && stream != plain_stream);
    CU_ASSERT(brs_sampler_set_length_buckets(s, b, 2) == BRS_OK);
    CU_ASSERT(brs_sampler_fingerprint(&with_b, s) == BRS_OK && with_b != with_a);
    CU_ASSERT(brs_sampler_set_length_buckets(s, NULL, 0) == BRS_OK);
    CU_ASSERT(brs_sampler_fingerprint(&fp, s) == BRS_OK && fp == plain);
    brs_sampler_free(s);
    free(lengths);
}

static void test_ladder(void)
{
    static const uint32_t lengths[] = {16, 1024, 300, 77};
    bt_config c = bt_config_default(lengths, 4);
    c.batch_size = 1;
    brs_sampler *s;
    CU_ASSERT_FATAL(bt_sampler_new(&s, &c) == BRS_OK);
    size_t count = 0;
    CU_ASSERT(brs_sampler_bucket_ladder(NULL, &count, s, 0, 0) == BRS_OK);
    /* 16, 20, 24, 28, 32, ... 896, 1024: four per doubling over six doublings */
    CU_ASSERT(count == 25);
    uint32_t ladder[64];
    CU_ASSERT(brs_sampler_bucket_ladder(ladder, &count, s, 0, 64) == BRS_OK);
    CU_ASSERT(ladder[0] == 16 && ladder[1] == 20 && ladder[4] == 32 && ladder[count - 1] == 1024);
    for (size_t i = 1; i < count; i++) {
        CU_ASSERT(ladder[i] > ladder[i - 1]);
        /* no bucket more than 25% above the longest length it must hold */
        CU_ASSERT(4 * (uint64_t)ladder[i] <= 5 * ((uint64_t)ladder[i - 1] + 1));
    }
    CU_ASSERT(brs_sampler_bucket_ladder(ladder, &count, s, 0, 3) == BRS_ERR_OUT_OF_RANGE);
    CU_ASSERT(count == 25 && bt_has_number(brs_sampler_last_error(s), 25));
    CU_ASSERT(brs_sampler_bucket_ladder(ladder, &count, s, 65, 64) == BRS_ERR_OUT_OF_RANGE);
    CU_ASSERT(brs_sampler_bucket_ladder(NULL, &count, s, 0, 4) == BRS_ERR_NULL_POINTER);
    /* rounded to the multiple, without repeats, still covering the longest */
    CU_ASSERT(brs_sampler_set_int(s, BRS_OPT_PAD_TO_MULTIPLE_OF, 64) == BRS_OK);
    CU_ASSERT(brs_sampler_bucket_ladder(ladder, &count, s, 4, 64) == BRS_OK);
    CU_ASSERT(ladder[0] == 64 && ladder[count - 1] == 1024);
    for (size_t i = 0; i < count; i++) CU_ASSERT(ladder[i] % 64 == 0);
    /* a ladder of the sampler's own lengths always validates */
    CU_ASSERT(brs_sampler_set_length_buckets(s, ladder, count) == BRS_OK);
    CU_ASSERT(brs_sampler_validate(s) == BRS_OK);
    brs_sampler_free(s);
}

struct pair {
    uint64_t size, length;
};

/* The sorted distinct shapes of the rank, by planning every step here. */
static size_t walked_shapes(struct pair *out, const brs_sampler *s, uint64_t epoch, int64_t rank,
                            int64_t ga, int packed)
{
    brs_plan *p;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    size_t n = 0;
    for (uint64_t step = 0; brs_plan_compute(p, s, epoch, step) == BRS_OK; step++)
        for (int64_t m = 0; m < ga; m++) {
            const uint64_t *indices;
            size_t count;
            uint64_t padded, real;
            double cost;
            CU_ASSERT(brs_plan_micro_batch(&indices, &count, p, rank, m) == BRS_OK);
            CU_ASSERT(brs_plan_micro_batch_stats(&padded, &real, &cost, p, rank, m) == BRS_OK);
            struct pair shape = {count, packed ? padded : padded / count};
            size_t at = 0;
            while (at < n && (out[at].size < shape.size ||
                              (out[at].size == shape.size && out[at].length < shape.length)))
                at++;
            if (at < n && out[at].size == shape.size && out[at].length == shape.length) continue;
            memmove(&out[at + 1], &out[at], (n - at) * sizeof *out);
            out[at] = shape;
            n++;
        }
    brs_plan_free(p);
    return n;
}

static void test_shapes_are_the_plans_shapes(void)
{
    uint32_t *lengths = bt_lognormal_lengths(2000, 5);
    static const uint32_t buckets[] = {64, 128, 256, 512, 1024};
    for (int variant = 0; variant < 4; variant++) {
        bt_config c = bt_config_default(lengths, 2000);
        c.dp_size = 4;
        c.grad_accum = 2;
        c.rank = 3;
        c.packed = variant == 3;
        c.max_tokens = variant == 3 ? 4096 : 0;
        brs_sampler *s = sampler_with_padding(&c, variant >= 1 ? 64 : 1);
        if (variant == 2) CU_ASSERT(brs_sampler_set_length_buckets(s, buckets, 5) == BRS_OK);
        bt_set_case("variant %d", variant);
        struct pair want[2000];
        size_t n = walked_shapes(want, s, 2, 3, 2, (int)c.packed);
        size_t count = 0;
        BT_ASSERT(brs_sampler_shapes(NULL, &count, s, 2, 0) == BRS_OK && count == n);
        uint64_t first[2];
        BT_ASSERT(brs_sampler_shapes(first, &count, s, 2, 1) == BRS_ERR_OUT_OF_RANGE);
        BT_ASSERT(count == n && first[0] == want[0].size && first[1] == want[0].length);
        uint64_t *got = malloc(2 * n * sizeof *got);
        BT_ASSERT(brs_sampler_shapes(got, &count, s, 2, n) == BRS_OK && count == n);
        for (size_t i = 0; i < n && i < count; i++)
            BT_ASSERT(got[2 * i] == want[i].size && got[2 * i + 1] == want[i].length);
        if (variant == 2)
            for (size_t i = 0; i < count; i++) BT_ASSERT(got[2 * i + 1] % 64 == 0);
        free(got);
        brs_sampler_free(s);
    }
    free(lengths);
}

static void test_shapes_errors(void)
{
    static const uint32_t lengths[] = {10, 20, 30, 40};
    bt_config c = bt_config_default(lengths, 4);
    c.batch_size = 8;
    brs_sampler *s;
    CU_ASSERT_FATAL(bt_sampler_new(&s, &c) == BRS_OK);
    size_t count;
    uint64_t shapes[8];
    CU_ASSERT(brs_sampler_shapes(shapes, &count, s, 0, 4) == BRS_ERR_TOO_FEW_SAMPLES);
    CU_ASSERT(brs_sampler_shapes(shapes, NULL, s, 0, 4) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_sampler_shapes(NULL, &count, s, 0, 4) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_sampler_shapes(shapes, &count, NULL, 0, 4) == BRS_ERR_NULL_POINTER);
    brs_sampler_free(s);
}

/* Packed: a micro-batch's one row is padded as a whole; the cap holds for it. */
static void test_packed_row_rounded(void)
{
    uint32_t *lengths = bt_lognormal_lengths(1000, 9);
    bt_config c = bt_config_default(lengths, 1000);
    c.dp_size = 2;
    c.grad_accum = 2;
    c.packed = 1;
    c.max_tokens = 3000;
    brs_sampler *s = sampler_with_padding(&c, 128);
    brs_plan *p;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    for (uint64_t step = 0; step < 10; step++) {
        BT_ASSERT(brs_plan_compute(p, s, 0, step) == BRS_OK);
        for (int64_t slot = 0; slot < 4; slot++) {
            uint64_t padded, real;
            double cost;
            BT_ASSERT(brs_plan_micro_batch_stats(&padded, &real, &cost, p, slot / 2, slot % 2) ==
                      BRS_OK);
            BT_ASSERT(padded == round_up(real, 128) && padded <= 3000);
        }
    }
    brs_plan_free(p);
    brs_sampler_free(s);
    free(lengths);
}

/* A packed row is a sum of lengths, wider than 32 bits: a cap above 2^32
 * still holds rows above 2^32 once rounded. */
static void test_packed_rows_above_32_bits(void)
{
    static const uint32_t lengths[] = {3000000000u, 2900000000u, 2000000000u, 1900000000u};
    bt_config c = bt_config_default(lengths, 4);
    c.batch_size = 2;
    c.dp_size = 2;
    c.packed = 1;
    c.alpha = 0.0;
    c.max_tokens = 5000000000;
    brs_sampler *s = sampler_with_padding(&c, 128);
    brs_plan *p;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    BT_ASSERT(brs_plan_compute(p, s, 0, 0) == BRS_OK);
    for (int64_t rank = 0; rank < 2; rank++) {
        uint64_t padded, real;
        double cost;
        BT_ASSERT(brs_plan_micro_batch_stats(&padded, &real, &cost, p, rank, 0) == BRS_OK);
        BT_ASSERT(real > UINT32_MAX && padded == round_up(real, 128) && padded <= 5000000000u);
    }
    brs_plan_free(p);
    brs_sampler_free(s);
}

/* The least cap the epoch check names plans every step of the epoch with
 * padding, and one token less does not. */
static void test_epoch_check_names_a_cap_that_plans(void)
{
    uint32_t *lengths = bt_lognormal_lengths(1200, 13);
    bt_config c = bt_config_default(lengths, 1200);
    c.dp_size = 2;
    c.grad_accum = 2;
    c.batch_size = 6;
    c.max_tokens = 1100;
    brs_sampler *s = sampler_with_padding(&c, 64);
    uint64_t least = 0, groups = 0;
    brs_status status = brs_sampler_check_epoch(&least, &groups, s, 0);
    BT_ASSERT(status == BRS_ERR_CAP_INFEASIBLE || status == BRS_OK);
    brs_plan *p;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    CU_ASSERT(brs_sampler_set_int(s, BRS_OPT_MAX_TOKENS, (int64_t)least) == BRS_OK);
    uint64_t steps = 0;
    CU_ASSERT(brs_sampler_steps_per_epoch(&steps, s) == BRS_OK);
    for (uint64_t step = 0; step < steps; step++)
        BT_ASSERT(brs_plan_compute(p, s, 0, step) == BRS_OK);
    CU_ASSERT(brs_sampler_set_int(s, BRS_OPT_MAX_TOKENS, (int64_t)least - 1) == BRS_OK);
    size_t failed = 0;
    for (uint64_t step = 0; step < steps; step++)
        failed += brs_plan_compute(p, s, 0, step) != BRS_OK;
    BT_ASSERT(failed > 0);
    brs_plan_free(p);
    brs_sampler_free(s);
    free(lengths);
}

int main(int argc, char **argv)
{
    static const bt_test tests[] = {
        {"pad_to_multiple_of keeps the cap for the tensor built", test_multiple_keeps_the_cap},
        {"exact with rounding: DP and brute force", test_exact_with_rounding},
        {"buckets pad every micro-batch", test_buckets_pad_every_micro_batch},
        {"bucket errors", test_bucket_errors},
        {"fingerprints", test_fingerprints},
        {"default ladder", test_ladder},
        {"shapes are the plans' shapes", test_shapes_are_the_plans_shapes},
        {"shapes errors", test_shapes_errors},
        {"packed row rounded", test_packed_row_rounded},
        {"packed rows above 32 bits", test_packed_rows_above_32_bits},
        {"epoch check names a cap that plans", test_epoch_check_names_a_cap_that_plans},
        {NULL, NULL},
    };
    return bt_run("padding", tests, argc - 1, argv + 1);
}
