/* test_strategies.c - BRS_OPT_STRATEGY and brs_plan_load: the fixed-size
 * baselines (random, length_grouped) cover each epoch like the balanced
 * strategy, read the order their rule gives (checked against a reference
 * computed here), and a loaded plan is described exactly as computed. */
#include "brs_test.h"

#include <stdlib.h>
#include <string.h>

static uint32_t *skewed_lengths(size_t n, uint64_t seed)
{
    uint32_t *len = malloc(n * sizeof *len);
    bt_rng r = {seed};
    for (size_t i = 0; i < n; i++) len[i] = bt_lognormal(&r, 5.0, 1.0, 1, 4000);
    return len;
}

static brs_sampler *sampler_of(const bt_config *c, int64_t strategy)
{
    brs_sampler *s = NULL;
    CU_ASSERT_FATAL(bt_sampler_new(&s, c) == BRS_OK);
    CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_STRATEGY, strategy) == BRS_OK);
    return s;
}

static bt_config shaped(const uint32_t *len, size_t n, int64_t p, int64_t g, int64_t r)
{
    bt_config c = bt_config_default(len, n);
    c.batch_size = p;
    c.grad_accum = g;
    c.dp_size = r;
    c.seed = 11;
    return c;
}

/* The step's micro-batches in read order: chunk c is slot
 * (c % dp) * ga + c / dp (libbrs/planner/baselines.c). */
static size_t read_order(uint64_t *out, const brs_plan *p)
{
    int64_t dp = bt_plan_int(p, BRS_PLAN_DP_SIZE), ga = bt_plan_int(p, BRS_PLAN_GRAD_ACCUM);
    size_t used = 0;
    for (int64_t c = 0; c < dp * ga; c++) {
        const uint64_t *mb;
        size_t count;
        CU_ASSERT_FATAL(brs_plan_micro_batch(&mb, &count, p, c % dp, c / dp) == BRS_OK);
        memcpy(out + used, mb, count * sizeof *mb);
        used += count;
    }
    return used;
}

/* Every step's micro-batches are fixed-size and read in turn from `order`
 * (the whole epoch order, n entries, b per step). */
static void expect_reads(const brs_sampler *s, const uint64_t *order, size_t n, size_t b,
                         int64_t p_size)
{
    uint64_t steps;
    CU_ASSERT_FATAL(brs_sampler_steps_per_epoch(&steps, (brs_sampler *)s) == BRS_OK);
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    uint64_t *got = malloc(b * sizeof *got);
    for (uint64_t t = 0; t < steps && t * b + b <= n; t++) {
        CU_ASSERT_FATAL(brs_plan_compute(p, s, 0, t) == BRS_OK);
        bt_set_case("step %llu", (unsigned long long)t);
        BT_ASSERT(read_order(got, p) == b);
        BT_ASSERT(memcmp(got, order + t * b, b * sizeof *got) == 0);
        const uint64_t *mb;
        size_t count;
        CU_ASSERT(brs_plan_micro_batch(&mb, &count, p, 0, 0) == BRS_OK && count == (size_t)p_size);
    }
    free(got);
    brs_plan_free(p);
}

/* The epoch permutation as the random strategy reads it (n a multiple of B). */
static uint64_t *random_epoch_order(const bt_config *c, uint64_t epoch)
{
    brs_sampler *s = sampler_of(c, BRS_STRATEGY_RANDOM);
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    size_t b = (size_t)(c->batch_size * c->grad_accum * c->dp_size);
    uint64_t *order = malloc(c->n * sizeof *order);
    for (uint64_t t = 0; t < c->n / b; t++) {
        CU_ASSERT_FATAL(brs_plan_compute(p, s, epoch, t) == BRS_OK);
        CU_ASSERT(read_order(order + t * b, p) == b);
    }
    brs_plan_free(p);
    brs_sampler_free(s);
    return order;
}

static void test_random_reads_draw_order(void)
{
    size_t n = 480;
    uint32_t *len = skewed_lengths(n, 5);
    bt_config c = shaped(len, n, 4, 3, 2); /* B = 24 */
    c.shuffle = 0; /* the identity permutation: the draw order is 0, 1, ... */
    uint64_t *identity = malloc(n * sizeof *identity);
    for (size_t i = 0; i < n; i++) identity[i] = i;
    brs_sampler *s = sampler_of(&c, BRS_STRATEGY_RANDOM);
    expect_reads(s, identity, n, 24, 4);
    brs_sampler_free(s);

    /* shuffled: the same samples per step as balanced, only split otherwise */
    c.shuffle = 1;
    brs_sampler *bal = sampler_of(&c, BRS_STRATEGY_BALANCED),
                *rnd = sampler_of(&c, BRS_STRATEGY_RANDOM);
    brs_plan *pb = NULL, *pr = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&pb) == BRS_OK && brs_plan_new(&pr) == BRS_OK);
    for (uint64_t t = 0; t < n / 24; t++) {
        bt_step sb, sr;
        CU_ASSERT_FATAL(brs_plan_compute(pb, bal, 2, t) == BRS_OK);
        CU_ASSERT_FATAL(brs_plan_compute(pr, rnd, 2, t) == BRS_OK);
        CU_ASSERT_FATAL(bt_step_load(&sb, pb) && bt_step_load(&sr, pr));
        uint64_t *ib = bt_step_indices_sorted(&sb), *ir = bt_step_indices_sorted(&sr);
        bt_set_case("step %llu", (unsigned long long)t);
        BT_ASSERT(memcmp(ib, ir, 24 * sizeof *ib) == 0);
        /* balanced minimises the largest cost over the same samples */
        BT_ASSERT(
            bt_le(bt_plan_double(pb, BRS_PLAN_MAX_COST), bt_plan_double(pr, BRS_PLAN_MAX_COST)));
        BT_ASSERT(bt_plan_int(pb, BRS_PLAN_TOTAL_REAL_TOKENS) ==
                  bt_plan_int(pr, BRS_PLAN_TOTAL_REAL_TOKENS));
        free(ib);
        free(ir);
        bt_step_free(&sb);
        bt_step_free(&sr);
    }
    brs_plan_free(pb);
    brs_plan_free(pr);
    brs_sampler_free(bal);
    brs_sampler_free(rnd);
    free(identity);
    free(len);
}

/* transformers' LengthGroupedSampler rule, written out plainly from the
 * permutation: megabatches of mult * batch samples, each sorted longest
 * first (stable), the longest head swapped to the front. */
static void reference_grouped(uint64_t *order, const uint32_t *len, size_t n, size_t batch)
{
    size_t mult = n / (4 * batch);
    mult = mult > 50 ? 50 : mult == 0 ? 1 : mult;
    size_t size = mult * batch;
    for (size_t start = 0; start < n; start += size) {
        size_t end = start + size < n ? start + size : n;
        for (size_t i = start + 1; i < end; i++) /* insertion sort: stable */
            for (size_t j = i; j > start && len[order[j - 1]] < len[order[j]]; j--) {
                uint64_t t = order[j];
                order[j] = order[j - 1];
                order[j - 1] = t;
            }
    }
    size_t best = 0;
    for (size_t start = 0; start < n; start += size)
        if (len[order[start]] > len[order[best]]) best = start;
    uint64_t t = order[0];
    order[0] = order[best];
    order[best] = t;
}

/* BRS_PLAN_MEGABATCH_SIZE: the reference's size for length_grouped, 0 for
 * the other strategies. */
static void expect_megabatch(brs_sampler *s, size_t n, size_t batch)
{
    size_t mult = n / (4 * batch);
    mult = mult > 50 ? 50 : mult == 0 ? 1 : mult;
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    CU_ASSERT_FATAL(brs_plan_compute(p, s, 0, 0) == BRS_OK);
    BT_ASSERT((size_t)bt_plan_int(p, BRS_PLAN_MEGABATCH_SIZE) ==
              (mult * batch < n ? mult * batch : n));
    CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_STRATEGY, BRS_STRATEGY_RANDOM) == BRS_OK);
    CU_ASSERT_FATAL(brs_plan_compute(p, s, 0, 0) == BRS_OK);
    BT_ASSERT(bt_plan_int(p, BRS_PLAN_MEGABATCH_SIZE) == 0);
    CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_STRATEGY, BRS_STRATEGY_LENGTH_GROUPED) ==
                    BRS_OK);
    brs_plan_free(p);
}

static void test_length_grouped_matches_reference(void)
{
    const struct {
        size_t n;
        int64_t p, g, r;
    } cases[] = {{960, 4, 2, 2}, {480, 2, 1, 3}, {96, 4, 1, 2}, {2400, 1, 1, 2}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = cases[i].n;
        uint32_t *len = skewed_lengths(n, 17 + i);
        len[n - 3] = 5000; /* a long sample late in the dataset */
        bt_config c = shaped(len, n, cases[i].p, cases[i].g, cases[i].r);
        for (int shuffle = 0; shuffle <= 1; shuffle++) {
            c.shuffle = shuffle;
            uint64_t *order = random_epoch_order(&c, 0);
            reference_grouped(order, len, n, (size_t)(c.batch_size * c.grad_accum));
            bt_set_case("case %zu shuffle %d", i, shuffle);
            BT_ASSERT(len[order[0]] == 5000);
            brs_sampler *s = sampler_of(&c, BRS_STRATEGY_LENGTH_GROUPED);
            expect_megabatch(s, n, (size_t)(c.batch_size * c.grad_accum));
            expect_reads(s, order, n, (size_t)(c.batch_size * c.grad_accum * c.dp_size),
                         c.batch_size);
            brs_sampler_free(s);
            free(order);
        }
        free(len);
    }
}

/* drop_last on: every index at most once and exactly the epoch's first
 * steps*B draws; off: every index at least once, repeats only in the
 * top-up of the last step. */
static void expect_coverage(const bt_config *c, int64_t strategy)
{
    brs_sampler *s = sampler_of(c, strategy);
    uint64_t steps;
    CU_ASSERT_FATAL(brs_sampler_steps_per_epoch(&steps, s) == BRS_OK);
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    unsigned *seen = calloc(c->n, sizeof *seen);
    size_t total = 0;
    for (uint64_t t = 0; t < steps; t++) {
        bt_step st;
        CU_ASSERT_FATAL(brs_plan_compute(p, s, 1, t) == BRS_OK);
        CU_ASSERT_FATAL(bt_step_load(&st, p));
        for (int64_t m = 0; m < st.k; m++) {
            BT_ASSERT(st.mb[m].count >= 1);
            for (size_t j = 0; j < st.mb[m].count; j++) seen[st.mb[m].indices[j]]++;
        }
        total += st.num_samples;
        bt_step_free(&st);
    }
    size_t b = (size_t)(c->batch_size * c->grad_accum * c->dp_size),
           k = (size_t)(c->grad_accum * c->dp_size);
    size_t once = 0, none = 0, more = 0;
    for (size_t i = 0; i < c->n; i++) {
        once += seen[i] == 1;
        none += seen[i] == 0;
        more += seen[i] > 1;
    }
    if (c->drop_last) {
        BT_ASSERT(more == 0 && once == (c->n / b) * b && total == once);
    } else {
        size_t rest = c->n % b, topup = rest > 0 && rest < k ? k - rest : 0;
        BT_ASSERT(none == 0 && total == c->n + topup);
    }
    free(seen);
    brs_plan_free(p);
    brs_sampler_free(s);
}

static void test_coverage_per_epoch(void)
{
    const struct {
        size_t n;
        int64_t p, g, r, drop_last;
    } cases[] = {{1000, 4, 2, 3, 1}, {1000, 4, 2, 3, 0}, {101, 8, 1, 4, 0},
                 {30, 4, 2, 4, 0},   {7, 1, 3, 3, 0},    {1, 1, 4, 2, 0}};
    const int64_t strategies[] = {BRS_STRATEGY_BALANCED, BRS_STRATEGY_RANDOM,
                                  BRS_STRATEGY_LENGTH_GROUPED};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t *len = skewed_lengths(cases[i].n, 40 + i);
        bt_config c = shaped(len, cases[i].n, cases[i].p, cases[i].g, cases[i].r);
        c.drop_last = cases[i].drop_last;
        for (int packed = 0; packed <= 1; packed++) {
            c.packed = packed;
            for (size_t j = 0; j < 3; j++) {
                bt_set_case("case %zu packed %d strategy %lld", i, packed,
                            (long long)strategies[j]);
                expect_coverage(&c, strategies[j]);
            }
        }
        free(len);
    }
}

/* Fixed sizes ignore max_tokens: the plan succeeds and reports its peak;
 * the stats describe each micro-batch with the library's cost model. */
static void test_baselines_described_by_queries(void)
{
    size_t n = 512;
    uint32_t *len = skewed_lengths(n, 77);
    bt_config c = shaped(len, n, 8, 2, 2);
    c.max_tokens = 4000 * 8 / 2; /* balanced fits it, fixed-size batches may not */
    c.intercept = 3.0;
    bt_cost_model model = bt_cost_model_of(&c);
    for (int64_t strategy = BRS_STRATEGY_RANDOM; strategy <= BRS_STRATEGY_LENGTH_GROUPED;
         strategy++) {
        brs_sampler *s = sampler_of(&c, strategy);
        brs_plan *p = NULL;
        CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
        for (uint64_t t = 0; t < n / 32; t++) {
            bt_step st;
            CU_ASSERT_FATAL(brs_plan_compute(p, s, 0, t) == BRS_OK);
            CU_ASSERT_FATAL(bt_step_load(&st, p));
            uint64_t peak = 0, padded = 0;
            double max_cost = 0, micro_sync = 0, step_sync = 0;
            for (int64_t m = 0; m < st.k; m++) {
                uint64_t longest = 0;
                for (size_t j = 0; j < st.mb[m].count; j++)
                    longest =
                        len[st.mb[m].indices[j]] > longest ? len[st.mb[m].indices[j]] : longest;
                bt_set_case("strategy %lld step %llu slot %lld", (long long)strategy,
                            (unsigned long long)t, (long long)m);
                BT_ASSERT(st.mb[m].padded == st.mb[m].count * longest);
                BT_ASSERT(bt_close(st.mb[m].cost,
                                   bt_to_cost(bt_cost_padded(&model, st.mb[m].count, longest))));
                peak = st.mb[m].padded > peak ? st.mb[m].padded : peak;
                padded += st.mb[m].padded;
                max_cost = st.mb[m].cost > max_cost ? st.mb[m].cost : max_cost;
            }
            for (int64_t micro = 0; micro < st.ga; micro++) {
                double slowest = 0;
                for (int64_t r = 0; r < st.dp; r++)
                    slowest = st.mb[r * st.ga + micro].cost > slowest
                                  ? st.mb[r * st.ga + micro].cost
                                  : slowest;
                micro_sync += slowest;
            }
            for (int64_t r = 0; r < st.dp; r++) {
                double sum = 0;
                for (int64_t micro = 0; micro < st.ga; micro++)
                    sum += st.mb[r * st.ga + micro].cost;
                step_sync = sum > step_sync ? sum : step_sync;
            }
            BT_ASSERT((uint64_t)bt_plan_int(p, BRS_PLAN_MAX_PADDED_TOKENS) == peak);
            BT_ASSERT((uint64_t)bt_plan_int(p, BRS_PLAN_TOTAL_PADDED_TOKENS) == padded);
            BT_ASSERT(bt_close(bt_plan_double(p, BRS_PLAN_MAX_COST), max_cost));
            BT_ASSERT(bt_close(bt_plan_double(p, BRS_PLAN_MICRO_SYNC_TIME), micro_sync));
            BT_ASSERT(bt_close(bt_plan_double(p, BRS_PLAN_STEP_SYNC_TIME), step_sync));
            BT_ASSERT(bt_le(bt_plan_double(p, BRS_PLAN_LOWER_BOUND), max_cost));
            BT_ASSERT(bt_le(bt_plan_double(p, BRS_PLAN_TIME_LOWER_BOUND), micro_sync));
            bt_step_free(&st);
        }
        brs_plan_free(p);
        brs_sampler_free(s);
    }
    free(len);
}

/* The length_grouped order is cached per (fingerprint, epoch) in the plan:
 * revisiting an epoch, or a changed sampler on the same plan, gives what a
 * fresh plan gives. */
static void test_grouped_cache_keyed(void)
{
    size_t n = 600;
    uint32_t *len = skewed_lengths(n, 3);
    bt_config c = shaped(len, n, 4, 1, 2);
    brs_sampler *s = sampler_of(&c, BRS_STRATEGY_LENGTH_GROUPED);
    brs_plan *reused = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&reused) == BRS_OK);
    const uint64_t epochs[] = {1, 0, 1, 2};
    for (int round = 0; round < 2; round++) {
        for (size_t e = 0; e < 4; e++) {
            brs_plan *fresh = NULL;
            bt_step a, b;
            CU_ASSERT_FATAL(brs_plan_new(&fresh) == BRS_OK);
            CU_ASSERT_FATAL(brs_plan_compute(reused, s, epochs[e], 3) == BRS_OK);
            CU_ASSERT_FATAL(brs_plan_compute(fresh, s, epochs[e], 3) == BRS_OK);
            CU_ASSERT_FATAL(bt_step_load(&a, reused) && bt_step_load(&b, fresh));
            for (int64_t m = 0; m < a.k; m++) {
                bt_set_case("round %d epoch %llu slot %lld", round, (unsigned long long)epochs[e],
                            (long long)m);
                BT_ASSERT(a.mb[m].count == b.mb[m].count &&
                          memcmp(a.mb[m].indices, b.mb[m].indices,
                                 a.mb[m].count * sizeof(uint64_t)) == 0);
            }
            bt_step_free(&a);
            bt_step_free(&b);
            brs_plan_free(fresh);
        }
        CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_SEED, 99) ==
                        BRS_OK); /* same plan, new key */
    }
    brs_plan_free(reused);
    brs_sampler_free(s);
    free(len);
}

/* ---- brs_plan_load ------------------------------------------------------- */

static void expect_same_description(const brs_plan *a, const brs_plan *b)
{
    const brs_plan_key ints[] = {BRS_PLAN_EPOCH,
                                 BRS_PLAN_STEP,
                                 BRS_PLAN_NUM_SAMPLES,
                                 BRS_PLAN_DP_SIZE,
                                 BRS_PLAN_GRAD_ACCUM,
                                 BRS_PLAN_TOTAL_PADDED_TOKENS,
                                 BRS_PLAN_TOTAL_REAL_TOKENS,
                                 BRS_PLAN_MAX_PADDED_TOKENS};
    const brs_plan_key doubles[] = {BRS_PLAN_MAX_COST,       BRS_PLAN_LOWER_BOUND,
                                    BRS_PLAN_TOTAL_COST,     BRS_PLAN_MICRO_SYNC_TIME,
                                    BRS_PLAN_STEP_SYNC_TIME, BRS_PLAN_TIME_LOWER_BOUND};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        BT_ASSERT(bt_plan_int(a, ints[i]) == bt_plan_int(b, ints[i]));
    for (size_t i = 0; i < sizeof doubles / sizeof doubles[0]; i++)
        BT_ASSERT(bt_plan_double(a, doubles[i]) == bt_plan_double(b, doubles[i]));
    bt_step sa, sb;
    CU_ASSERT_FATAL(bt_step_load(&sa, a) && bt_step_load(&sb, b));
    for (int64_t m = 0; m < sa.k; m++) {
        BT_ASSERT(sa.mb[m].count == sb.mb[m].count && sa.mb[m].padded == sb.mb[m].padded &&
                  sa.mb[m].real == sb.mb[m].real && sa.mb[m].cost == sb.mb[m].cost);
        BT_ASSERT(memcmp(sa.mb[m].indices, sb.mb[m].indices, sa.mb[m].count * sizeof(uint64_t)) ==
                  0);
    }
    bt_step_free(&sa);
    bt_step_free(&sb);
}

/* The micro-batches of a computed plan, concatenated rank-major. */
static size_t export_plan(uint64_t **indices, uint64_t **counts, const brs_plan *p)
{
    bt_step st;
    CU_ASSERT_FATAL(bt_step_load(&st, p));
    *indices = malloc(st.num_samples * sizeof **indices);
    *counts = malloc((size_t)st.k * sizeof **counts);
    size_t used = 0;
    for (int64_t m = 0; m < st.k; m++) {
        (*counts)[m] = st.mb[m].count;
        memcpy(*indices + used, st.mb[m].indices, st.mb[m].count * sizeof(uint64_t));
        used += st.mb[m].count;
    }
    size_t k = (size_t)st.k;
    bt_step_free(&st);
    return k;
}

static void test_load_reproduces_computed(void)
{
    size_t n = 800;
    uint32_t *len = skewed_lengths(n, 21);
    const struct {
        int64_t p, g, r, packed, strategy;
        double intercept;
    } cases[] = {{4, 2, 3, 0, BRS_STRATEGY_BALANCED, 0},
                 {8, 1, 1, 0, BRS_STRATEGY_BALANCED, 2},
                 {4, 4, 2, 1, BRS_STRATEGY_BALANCED, 1},
                 {4, 2, 2, 0, BRS_STRATEGY_RANDOM, 0},
                 {2, 3, 2, 1, BRS_STRATEGY_LENGTH_GROUPED, 5}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bt_config c = shaped(len, n, cases[i].p, cases[i].g, cases[i].r);
        c.packed = cases[i].packed;
        c.intercept = cases[i].intercept;
        c.drop_last = 0;
        brs_sampler *s = sampler_of(&c, cases[i].strategy);
        brs_plan *computed = NULL, *loaded = NULL;
        CU_ASSERT_FATAL(brs_plan_new(&computed) == BRS_OK && brs_plan_new(&loaded) == BRS_OK);
        uint64_t steps;
        CU_ASSERT_FATAL(brs_sampler_steps_per_epoch(&steps, s) == BRS_OK);
        const uint64_t picks[] = {0, steps / 2, steps - 1};
        for (size_t j = 0; j < 3; j++) {
            CU_ASSERT_FATAL(brs_plan_compute(computed, s, 4, picks[j]) == BRS_OK);
            uint64_t *indices, *counts;
            size_t k = export_plan(&indices, &counts, computed);
            bt_set_case("case %zu step %llu", i, (unsigned long long)picks[j]);
            BT_ASSERT(brs_plan_load(loaded, s, indices, counts, k, 4, picks[j]) == BRS_OK);
            BT_ASSERT(brs_plan_last_error(loaded)[0] == '\0');
            expect_same_description(computed, loaded);
            free(indices);
            free(counts);
        }
        brs_plan_free(computed);
        brs_plan_free(loaded);
        brs_sampler_free(s);
    }
    free(len);
}

static void expect_load_error(brs_plan *p, brs_status status, brs_status want, const char *words)
{
    int64_t v;
    BT_ASSERT(status == want);
    BT_ASSERT(strstr(brs_plan_last_error(p), words) != NULL);
    BT_ASSERT(brs_plan_get_int(&v, p, BRS_PLAN_STEP) == BRS_ERR_STATE); /* holds no step */
}

static void test_load_errors(void)
{
    uint32_t len[10] = {5, 9, 2, 7, 7, 3, 1, 8, 4, 6};
    bt_config c = shaped(len, 10, 1, 2, 2); /* K = 4 */
    brs_sampler *s = sampler_of(&c, BRS_STRATEGY_BALANCED), *empty = NULL;
    CU_ASSERT_FATAL(brs_sampler_new(&empty) == BRS_OK);
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    uint64_t indices[] = {0, 1, 2, 3, 4, 5}, counts[] = {1, 2, 2, 1}, zero[] = {1, 0, 4, 1};
    uint64_t far[] = {0, 1, 2, 3, 4, 10};
    CU_ASSERT(brs_plan_load(p, s, indices, counts, 4, 0, 0) == BRS_OK);
    bt_set_case("load errors");
    expect_load_error(p, brs_plan_load(p, NULL, indices, counts, 4, 0, 0), BRS_ERR_NULL_POINTER,
                      "sampler");
    expect_load_error(p, brs_plan_load(p, s, NULL, counts, 4, 0, 0), BRS_ERR_NULL_POINTER,
                      "indices");
    expect_load_error(p, brs_plan_load(p, s, indices, NULL, 4, 0, 0), BRS_ERR_NULL_POINTER,
                      "counts");
    CU_ASSERT(brs_plan_load(NULL, s, indices, counts, 4, 0, 0) == BRS_ERR_NULL_POINTER);
    expect_load_error(p, brs_plan_load(p, s, indices, counts, 3, 0, 0), BRS_ERR_INVALID_ARGUMENT,
                      "num_micro_batches = 3");
    expect_load_error(p, brs_plan_load(p, s, indices, zero, 4, 0, 0), BRS_ERR_INVALID_ARGUMENT,
                      "counts[1] is 0");
    expect_load_error(p, brs_plan_load(p, s, far, counts, 4, 0, 0), BRS_ERR_OUT_OF_RANGE,
                      "indices[5] = 10");
    expect_load_error(p, brs_plan_load(p, empty, indices, counts, 4, 0, 0), BRS_ERR_STATE,
                      "no lengths");
    /* a repeated index is a plan the library can describe (a peer's top-up) */
    uint64_t twice[] = {3, 3, 1, 2, 0, 0};
    CU_ASSERT(brs_plan_load(p, s, twice, counts, 4, 7, 2) == BRS_OK);
    CU_ASSERT(bt_plan_int(p, BRS_PLAN_EPOCH) == 7 && bt_plan_int(p, BRS_PLAN_STEP) == 2);
    CU_ASSERT(bt_plan_int(p, BRS_PLAN_NUM_SAMPLES) == 6);
    brs_plan_free(p);
    brs_sampler_free(s);
    brs_sampler_free(empty);
}

int main(int argc, char **argv)
{
    static const bt_test tests[] = {
        {"random reads the draw order", test_random_reads_draw_order},
        {"length_grouped matches the reference", test_length_grouped_matches_reference},
        {"coverage per epoch, every strategy", test_coverage_per_epoch},
        {"baselines described by the queries", test_baselines_described_by_queries},
        {"length_grouped cache keyed", test_grouped_cache_keyed},
        {"load reproduces the computed plan", test_load_reproduces_computed},
        {"load errors", test_load_errors},
        {NULL, NULL},
    };
    return bt_run("strategies", tests, argc - 1, argv + 1);
}
