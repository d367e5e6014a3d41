/* test_context_parallel.c - cp_size and max_tokens_per_rank: every micro-step
 * of every rank holds one micro-batch or a placeholder; a micro-batch's group
 * is `degree` consecutive ranks aligned to a multiple of its degree within
 * one block of cp_size, and every rank of it reads the same indices; the token
 * ranges of a group cover each sequence once (the head-tail split); no rank
 * holds more than max_tokens_per_rank; a step draws the samples it draws
 * without context parallelism; small steps are planned exactly, checked
 * against a brute force over every partition into micro-batches, every degree
 * and every micro-step; plans are deterministic and the options are
 * fingerprinted; the errors name what to change. */
#include "brs_test.h"

#include <stdlib.h>
#include <string.h>

/* The test's own cost model, in micro units (alpha, intercept, comm,
 * latency). */
typedef struct {
    uint64_t alpha, intercept, comm, latency, cap;
    uint64_t dp, cp, ga;
    uint32_t degrees; /* allowed degrees, bitmask */
} cp_model;

static u128 weight_of(const cp_model *m, uint64_t length)
{
    return (u128)length * 1000000u + (u128)m->alpha * length * length;
}

static u128 group_cost(const cp_model *m, u128 weights, uint64_t tokens, uint64_t degree)
{
    u128 exchange = (u128)m->comm * (degree - 1) * tokens;
    return m->intercept + (weights + exchange + degree - 1) / degree +
           (u128)m->latency * (degree - 1);
}

typedef struct {
    u128 time;
    uint64_t peak;
    u128 total;
} cp_score;

static bool score_better(const cp_score *a, const cp_score *b)
{
    if (a->time != b->time) return a->time < b->time;
    if (a->peak != b->peak) return a->peak < b->peak;
    return a->total < b->total;
}

/* ---- the brute force: every partition of the samples into micro-batches
 * (restricted growth strings), every degree of each, every micro-step of
 * each, the degrees of a micro-step within the world. ---- */

#define MAX_ITEMS 7

typedef struct {
    const cp_model *m;
    const uint32_t *len;
    size_t n;
    int block[MAX_ITEMS];
    size_t blocks;
    uint64_t degree[MAX_ITEMS], micro[MAX_ITEMS];
    bool found;
    cp_score best;
} brute;

static void brute_blocks(brute *b, size_t j)
{
    const cp_model *m = b->m;
    if (j == b->blocks) {
        u128 height[8] = {0};
        uint64_t used[8] = {0};
        cp_score sc = {0, 0, 0};
        for (size_t q = 0; q < b->blocks; q++) {
            u128 w = 0;
            uint64_t tokens = 0, held = 0;
            for (size_t i = 0; i < b->n; i++)
                if (b->block[i] == (int)q) {
                    w += weight_of(m, b->len[i]);
                    tokens += b->len[i];
                    held += (b->len[i] + b->degree[q] - 1) / b->degree[q];
                }
            if (m->cap && held > m->cap) return;
            used[b->micro[q]] += b->degree[q];
            if (used[b->micro[q]] > m->dp * m->cp) return;
            u128 cost = group_cost(m, w, tokens, b->degree[q]);
            if (cost > height[b->micro[q]]) height[b->micro[q]] = cost;
            if (held > sc.peak) sc.peak = held;
            sc.total += cost * b->degree[q];
        }
        for (size_t s = 0; s < m->ga; s++) sc.time += height[s];
        if (!b->found || score_better(&sc, &b->best)) b->best = sc, b->found = true;
        return;
    }
    for (uint64_t c = 1; c <= m->cp; c <<= 1) {
        if (!(m->degrees & c)) continue;
        for (uint64_t s = 0; s < m->ga; s++) {
            b->degree[j] = c;
            b->micro[j] = s;
            brute_blocks(b, j + 1);
        }
    }
}

static void brute_partitions(brute *b, size_t i, size_t blocks)
{
    if (i == b->n) {
        b->blocks = blocks;
        brute_blocks(b, 0);
        return;
    }
    for (size_t q = 0; q <= blocks; q++) {
        b->block[i] = (int)q;
        brute_partitions(b, i + 1, blocks + (q == blocks));
    }
}

/* ---- a plan read through brs_plan_cp_*, checked and scored. ---- */

/* Checks every (rank, micro-step) of the plan against the structure the
 * header promises and returns its score; `lengths` by dataset index (or
 * batch position). Every sample's every token is counted into `covered`
 * (per index, summed over the ranks of its group). */
static bool check_and_score(cp_score *sc, const brs_plan *p, const cp_model *m,
                            const uint32_t *lengths, size_t n, uint64_t *covered)
{
    uint64_t ranks = m->dp * m->cp, steps = 0;
    BT_REQUIRE(brs_plan_cp_micro_steps(&steps, p) == BRS_OK && steps == m->ga);
    BT_REQUIRE(bt_plan_int(p, BRS_PLAN_CP_SIZE) == (int64_t)m->cp);
    u128 height[64] = {0};
    sc->time = 0, sc->peak = 0, sc->total = 0;
    uint64_t max_rank = 0;
    for (uint64_t micro = 0; micro < steps; micro++) {
        for (uint64_t r = 0; r < ranks; r++) {
            const uint64_t *idx = NULL;
            size_t count = 0;
            uint64_t first = 0, degree = 0;
            BT_REQUIRE(brs_plan_cp_micro_batch(&idx, &count, &first, &degree, p, r, micro) ==
                       BRS_OK);
            uint64_t padded = 0, real = 0;
            double cost = 0;
            BT_REQUIRE(brs_plan_cp_micro_batch_stats(&padded, &real, &cost, p, r, micro) == BRS_OK);
            if (count == 0) { /* a placeholder */
                BT_ASSERT(first == r && degree == 1 && padded == 0 && real == 0 && cost == 0);
                continue;
            }
            BT_REQUIRE(degree >= 1 && (degree & (degree - 1)) == 0 && degree <= m->cp);
            BT_REQUIRE(m->degrees & degree);
            BT_REQUIRE(first % degree == 0 && first <= r && r < first + degree);
            BT_REQUIRE(first / m->cp == (first + degree - 1) / m->cp);
            /* the group's first rank reads the same micro-batch */
            const uint64_t *idx0 = NULL;
            size_t count0 = 0;
            uint64_t first0 = 0, degree0 = 0;
            BT_REQUIRE(brs_plan_cp_micro_batch(&idx0, &count0, &first0, &degree0, p, first,
                                               micro) == BRS_OK);
            BT_REQUIRE(count0 == count && first0 == first && degree0 == degree);
            BT_REQUIRE(memcmp(idx0, idx, count * sizeof *idx) == 0);
            u128 w = 0;
            uint64_t tokens = 0, held = 0;
            for (size_t j = 0; j < count; j++) {
                BT_REQUIRE(idx[j] < n);
                uint64_t length = lengths[idx[j]];
                w += weight_of(m, length);
                tokens += length;
                held += (length + degree - 1) / degree;
                if (j > 0) BT_ASSERT(lengths[idx[j - 1]] >= length); /* longest first */
            }
            BT_ASSERT(padded == held); /* pad_to_multiple_of 1 */
            if (m->cap) BT_ASSERT(padded <= m->cap);
            if (padded > max_rank) max_rank = padded;
            u128 exact = group_cost(m, w, tokens, degree);
            BT_ASSERT(bt_close(cost, bt_to_cost(exact)));
            /* this rank's token ranges: within its sequences, its real tokens */
            size_t got = 0;
            BT_REQUIRE(brs_plan_cp_token_ranges(NULL, &got, p, r, micro, 0) == BRS_OK);
            BT_REQUIRE(got <= 2 * count);
            uint64_t ranges[3 * 2 * MAX_ITEMS * 64];
            BT_REQUIRE(got <= sizeof ranges / sizeof ranges[0] / 3);
            size_t again = 0;
            BT_REQUIRE(brs_plan_cp_token_ranges(ranges, &again, p, r, micro, got) == BRS_OK);
            BT_REQUIRE(again == got);
            uint64_t sum = 0, most = 0;
            for (size_t q = 0; q < got; q++) {
                uint64_t index = ranges[3 * q], start = ranges[3 * q + 1], end = ranges[3 * q + 2];
                BT_REQUIRE(index < n && start < end && end <= lengths[index]);
                bool member = false;
                for (size_t j = 0; j < count; j++) member = member || idx[j] == index;
                BT_ASSERT(member);
                sum += end - start;
                covered[index] += end - start;
            }
            BT_ASSERT(sum == real);
            for (size_t j = 0; j < count; j++) most += (lengths[idx[j]] + degree - 1) / degree;
            BT_ASSERT(real <= most);
            if (r == first) { /* once per micro-batch */
                if (exact > height[micro]) height[micro] = exact;
                if (held > sc->peak) sc->peak = held;
                sc->total += exact * degree;
            }
        }
        sc->time += height[micro];
    }
    BT_ASSERT(bt_plan_int(p, BRS_PLAN_MAX_RANK_TOKENS) == (int64_t)max_rank);
    BT_ASSERT(bt_close(bt_plan_double(p, BRS_PLAN_MICRO_SYNC_TIME), bt_to_cost(sc->time)));
    BT_ASSERT(bt_plan_double(p, BRS_PLAN_TIME_LOWER_BOUND) <=
              bt_plan_double(p, BRS_PLAN_MICRO_SYNC_TIME) * (1 + 1e-12));
    return true;
}

/* A configuration sampler (no lengths) for brs_plan_compute_batch. */
static brs_sampler *config_of(const cp_model *m, int64_t comm_set)
{
    brs_sampler *s = NULL;
    CU_ASSERT_EQUAL_FATAL(brs_sampler_new(&s), BRS_OK);
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_PACKED, 1), BRS_OK);
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_DP_SIZE, (int64_t)m->dp), BRS_OK);
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_GRAD_ACCUM, (int64_t)m->ga), BRS_OK);
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_CP_SIZE, (int64_t)m->cp), BRS_OK);
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_MAX_TOKENS_PER_RANK, (int64_t)m->cap), BRS_OK);
    CU_ASSERT_EQUAL(brs_sampler_set_double(s, BRS_OPT_ALPHA, (double)m->alpha / 1e6), BRS_OK);
    CU_ASSERT_EQUAL(brs_sampler_set_double(s, BRS_OPT_INTERCEPT, (double)m->intercept / 1e6),
                    BRS_OK);
    if (comm_set) {
        CU_ASSERT_EQUAL(brs_sampler_set_double(s, BRS_OPT_CP_COMM_COST, (double)m->comm / 1e6),
                        BRS_OK);
        CU_ASSERT_EQUAL(brs_sampler_set_double(s, BRS_OPT_CP_LATENCY, (double)m->latency / 1e6),
                        BRS_OK);
    }
    uint32_t all = 0;
    for (uint64_t c = 1; c <= m->cp; c <<= 1) all |= (uint32_t)c;
    if (m->degrees != all)
        CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_CP_DEGREES, m->degrees), BRS_OK);
    return s;
}

static void test_small_steps_exact(void)
{
    bt_rng rng = {20250601};
    int planned = 0, refused = 0;
    for (int t = 0; t < 700; t++) {
        cp_model m = {0};
        m.dp = 1 + bt_rng_below(&rng, 2);
        m.cp = (uint64_t)1 << (1 + bt_rng_below(&rng, 2)); /* 2 or 4 */
        m.ga = 1 + bt_rng_below(&rng, 2);
        m.alpha = bt_rng_below(&rng, 3) == 0 ? 0 : 1000 * (1 + bt_rng_below(&rng, 20));
        m.intercept = bt_rng_below(&rng, 3) == 0 ? 1000000 * bt_rng_below(&rng, 50) : 0;
        m.comm = 10000 * bt_rng_below(&rng, 100);
        m.latency = bt_rng_below(&rng, 3) == 0 ? 0 : 1000000 * bt_rng_below(&rng, 3000);
        m.degrees = 0;
        for (uint64_t c = 1; c <= m.cp; c <<= 1) m.degrees |= (uint32_t)c;
        if (bt_rng_below(&rng, 4) == 0) m.degrees &= ~(uint32_t)(1u << bt_rng_below(&rng, 2));
        if (m.degrees == 0) m.degrees = (uint32_t)m.cp;
        size_t k = (size_t)(m.dp * m.ga);
        size_t n = k + (size_t)bt_rng_below(&rng, 7 - k);
        if (n > 6) n = 6;
        uint32_t len[MAX_ITEMS];
        uint64_t longest = 0;
        for (size_t i = 0; i < n; i++) {
            len[i] = 1 + (uint32_t)bt_rng_below(&rng, bt_rng_below(&rng, 2) ? 64 : 2000);
            if (len[i] > longest) longest = len[i];
        }
        m.cap = bt_rng_below(&rng, 3) == 0 ? 0 : (longest + 1) / 2 + bt_rng_below(&rng, 2000);
        bt_set_case("case %d: dp %llu cp %llu ga %llu n %zu cap %llu degrees %u", t,
                    (unsigned long long)m.dp, (unsigned long long)m.cp, (unsigned long long)m.ga, n,
                    (unsigned long long)m.cap, m.degrees);
        brs_sampler *s = config_of(&m, 1);
        brs_plan *p = NULL;
        CU_ASSERT_EQUAL_FATAL(brs_plan_new(&p), BRS_OK);
        brs_status st = brs_plan_compute_batch(p, s, len, n);
        brute b = {.m = &m, .len = len, .n = n};
        brute_partitions(&b, 0, 0);
        bool too_long = false;
        for (size_t i = 0; i < n; i++) {
            bool fits = false;
            for (uint64_t c = 1; c <= m.cp; c <<= 1)
                fits = fits || ((m.degrees & c) && (!m.cap || (len[i] + c - 1) / c <= m.cap));
            too_long = too_long || !fits;
        }
        if (too_long) {
            BT_ASSERT(st == BRS_ERR_SAMPLE_TOO_LONG);
            refused++;
        } else if (!b.found) {
            BT_ASSERT(st == BRS_ERR_CAP_INFEASIBLE);
            refused++;
        } else {
            BT_ASSERT(st == BRS_OK);
            if (st == BRS_OK) {
                cp_score sc;
                uint64_t covered[MAX_ITEMS] = {0};
                if (check_and_score(&sc, p, &m, len, n, covered)) {
                    BT_ASSERT(sc.time == b.best.time);
                    BT_ASSERT(sc.peak == b.best.peak);
                    BT_ASSERT(sc.total == b.best.total);
                    for (size_t i = 0; i < n; i++) BT_ASSERT(covered[i] == len[i]);
                }
                planned++;
            }
        }
        brs_plan_free(p);
        brs_sampler_free(s);
    }
    BT_ASSERT(planned > 300 && refused > 5);
}

/* A dataset sampler with context parallelism; lengths borrowed. */
static brs_sampler *dataset_sampler(const uint32_t *lengths, size_t n, const cp_model *m,
                                    int64_t batch_size, int64_t seed)
{
    brs_sampler *s = config_of(m, 0);
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_BATCH_SIZE, batch_size), BRS_OK);
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_SEED, seed), BRS_OK);
    CU_ASSERT_EQUAL_FATAL(brs_sampler_set_lengths(s, lengths, n, BRS_LENGTHS_COPY), BRS_OK);
    return s;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Every step of an epoch on long-tailed lengths: the structure, the cap,
 * the coverage, the samples of the step without context parallelism, every
 * sample once per epoch. */
static void test_epochs_structure_and_samples(void)
{
    bt_rng rng = {77};
    for (int t = 0; t < 24; t++) {
        size_t n = 300 + (size_t)bt_rng_below(&rng, 300);
        uint32_t *lengths = malloc(n * sizeof *lengths);
        for (size_t i = 0; i < n; i++) lengths[i] = bt_lognormal(&rng, 6.5, 1.2, 1, 16384);
        cp_model m = {0};
        m.dp = 1 + bt_rng_below(&rng, 3);
        m.cp = (uint64_t)1 << bt_rng_below(&rng, 4); /* 1 .. 8 */
        m.ga = 1 + bt_rng_below(&rng, 4);
        m.alpha = 1000, m.comm = 600000, m.latency = 7500000000u; /* the defaults */
        for (uint64_t c = 1; c <= m.cp; c <<= 1) m.degrees |= (uint32_t)c;
        m.cap = 16384 / m.cp + bt_rng_below(&rng, 4096) + 1;
        int64_t batch_size = 1 + (int64_t)bt_rng_below(&rng, 6);
        bt_set_case("epoch case %d: n %zu dp %llu cp %llu ga %llu cap %llu bs %lld", t, n,
                    (unsigned long long)m.dp, (unsigned long long)m.cp, (unsigned long long)m.ga,
                    (unsigned long long)m.cap, (long long)batch_size);
        brs_sampler *s = dataset_sampler(lengths, n, &m, batch_size, t);
        cp_model plain_model = m;
        plain_model.cp = 1, plain_model.cap = 0, plain_model.degrees = 1;
        brs_sampler *plain = dataset_sampler(lengths, n, &plain_model, batch_size, t);
        brs_plan *p = NULL, *q = NULL;
        CU_ASSERT_EQUAL_FATAL(brs_plan_new(&p), BRS_OK);
        CU_ASSERT_EQUAL_FATAL(brs_plan_new(&q), BRS_OK);
        uint64_t *covered = calloc(n, sizeof *covered);
        uint64_t *seen = calloc(n, sizeof *seen);
        uint64_t steps = n / (uint64_t)(batch_size * (int64_t)m.dp * (int64_t)m.ga);
        for (uint64_t step = 0; step < steps; step++) {
            brs_status st = brs_plan_compute(p, s, 0, step);
            BT_ASSERT(st == BRS_OK);
            if (st != BRS_OK) {
                printf("%s\n", brs_plan_last_error(p));
                break;
            }
            CU_ASSERT_EQUAL(brs_plan_compute(q, plain, 0, step), BRS_OK);
            cp_score sc;
            memset(covered, 0, n * sizeof *covered);
            if (!check_and_score(&sc, p, &m, lengths, n, covered)) break;
            /* the step's samples: those of the plan without context parallelism */
            size_t b = (size_t)bt_plan_int(p, BRS_PLAN_NUM_SAMPLES);
            BT_ASSERT((int64_t)b == bt_plan_int(q, BRS_PLAN_NUM_SAMPLES));
            uint64_t *mine = malloc(b * sizeof *mine), *theirs = malloc(b * sizeof *theirs);
            size_t got = 0, want = 0;
            for (uint64_t micro = 0; micro < m.ga; micro++)
                for (uint64_t r = 0; r < m.dp * m.cp; r++) {
                    const uint64_t *idx = NULL;
                    size_t count = 0;
                    uint64_t first = 0, degree = 0;
                    brs_plan_cp_micro_batch(&idx, &count, &first, &degree, p, r, micro);
                    if (r != first) continue;
                    for (size_t j = 0; j < count && got < b; j++) mine[got++] = idx[j];
                }
            for (int64_t r = 0; r < (int64_t)m.dp; r++)
                for (int64_t micro = 0; micro < (int64_t)m.ga; micro++) {
                    const uint64_t *idx = NULL;
                    size_t count = 0;
                    brs_plan_micro_batch(&idx, &count, q, r, micro);
                    for (size_t j = 0; j < count && want < b; j++) theirs[want++] = idx[j];
                }
            BT_ASSERT(got == b && want == b);
            qsort(mine, got, sizeof *mine, cmp_u64);
            qsort(theirs, want, sizeof *theirs, cmp_u64);
            BT_ASSERT(memcmp(mine, theirs, b * sizeof *mine) == 0);
            for (size_t j = 0; j < got; j++) {
                seen[mine[j]]++;
                BT_ASSERT(covered[mine[j]] == lengths[mine[j]]); /* every token once */
            }
            /* the data-parallel view: each dp rank's slots hold its block's samples */
            int64_t total = 0;
            for (int64_t r = 0; r < (int64_t)m.dp; r++)
                for (int64_t micro = 0; micro < (int64_t)m.ga; micro++) {
                    const uint64_t *idx = NULL;
                    size_t count = 0;
                    BT_ASSERT(brs_plan_micro_batch(&idx, &count, p, r, micro) == BRS_OK);
                    total += (int64_t)count;
                }
            BT_ASSERT(total == (int64_t)b);
            free(mine);
            free(theirs);
        }
        for (size_t i = 0; i < n && steps * (uint64_t)batch_size * m.dp * m.ga == n; i++)
            BT_ASSERT(seen[i] == 1);
        size_t drawn = 0;
        for (size_t i = 0; i < n; i++) drawn += seen[i];
        BT_ASSERT(drawn == steps * (uint64_t)batch_size * m.dp * m.ga);
        free(covered);
        free(seen);
        brs_plan_free(p);
        brs_plan_free(q);
        brs_sampler_free(s);
        brs_sampler_free(plain);
        free(lengths);
    }
}

/* The default cost (cp_comm_cost, cp_latency, alpha of the option table)
 * keeps a lone 2,048-token sample on one rank and spreads a lone
 * 32,768-token one, both degrees fitting the cap; a latency of 0 spreads
 * the short one too (the latency is what keeps it whole). */
static int lone_degree(uint32_t length, int64_t zero_latency)
{
    cp_model m = {.dp = 1, .cp = 8, .ga = 1, .alpha = 1000, .cap = 32768, .degrees = 15};
    brs_sampler *s = config_of(&m, 0);
    if (zero_latency) CU_ASSERT_EQUAL(brs_sampler_set_double(s, BRS_OPT_CP_LATENCY, 0.0), BRS_OK);
    brs_plan *p = NULL;
    CU_ASSERT_EQUAL_FATAL(brs_plan_new(&p), BRS_OK);
    uint32_t len[1] = {length};
    CU_ASSERT_EQUAL_FATAL(brs_plan_compute_batch(p, s, len, 1), BRS_OK);
    const uint64_t *idx = NULL;
    size_t count = 0;
    uint64_t first = 0, degree = 0;
    CU_ASSERT_EQUAL(brs_plan_cp_micro_batch(&idx, &count, &first, &degree, p, 0, 0), BRS_OK);
    CU_ASSERT_EQUAL(count, 1);
    brs_plan_free(p);
    brs_sampler_free(s);
    return (int)degree;
}

static void test_default_cost_splits_long_not_short(void)
{
    CU_ASSERT_EQUAL(lone_degree(2048, 0), 1);
    CU_ASSERT(lone_degree(32768, 0) > 1);
    CU_ASSERT(lone_degree(2048, 1) > 1);
}

/* The head-tail split: rank i of a group of c gets chunks i and 2c - 1 - i
 * of 2c chunks as even as possible; each rank at most ceil(L / c). */
static void test_head_tail_split(void)
{
    static const uint32_t lengths[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 100, 1001};
    cp_model m = {.dp = 1, .cp = 8, .ga = 1, .comm = 0, .degrees = 8};
    for (size_t t = 0; t < sizeof lengths / sizeof lengths[0]; t++) {
        uint32_t len[1] = {lengths[t]};
        brs_sampler *s = config_of(&m, 1);
        brs_plan *p = NULL;
        CU_ASSERT_EQUAL_FATAL(brs_plan_new(&p), BRS_OK);
        CU_ASSERT_EQUAL_FATAL(brs_plan_compute_batch(p, s, len, 1), BRS_OK);
        uint64_t L = len[0], chunks = 16, q = L / chunks, rem = L % chunks, total = 0;
        for (uint64_t r = 0; r < 8; r++) {
            uint64_t ranges[12];
            size_t count = 0;
            CU_ASSERT_EQUAL(brs_plan_cp_token_ranges(ranges, &count, p, r, 0, 4), BRS_OK);
            uint64_t want[4], got_want = 0;
            for (int k = 0; k < 2; k++) {
                uint64_t j = k == 0 ? r : chunks - 1 - r;
                uint64_t start = j * q + (j < rem ? j : rem), end = start + q + (j < rem);
                if (start == end) continue;
                if (got_want > 0 && want[2 * got_want - 1] == start) {
                    want[2 * got_want - 1] = end;
                    continue;
                }
                want[2 * got_want] = start, want[2 * got_want + 1] = end;
                got_want++;
            }
            CU_ASSERT_EQUAL(count, got_want);
            uint64_t share = 0;
            for (size_t k = 0; k < count && k < got_want; k++) {
                CU_ASSERT_EQUAL(ranges[3 * k], 0);
                CU_ASSERT_EQUAL(ranges[3 * k + 1], want[2 * k]);
                CU_ASSERT_EQUAL(ranges[3 * k + 2], want[2 * k + 1]);
                share += ranges[3 * k + 2] - ranges[3 * k + 1];
            }
            CU_ASSERT(share <= (L + 7) / 8);
            CU_ASSERT(share + 1 >= L / 8);
            total += share;
        }
        CU_ASSERT_EQUAL(total, L);
        brs_plan_free(p);
        brs_sampler_free(s);
    }
}

/* Two samplers built apart plan alike; the options enter the fingerprint,
 * not the stream's; a plan without context parallelism answers the cp
 * queries at degree 1. */
static void test_deterministic_fingerprinted(void)
{
    uint32_t *lengths = bt_lognormal_lengths(500, 3);
    cp_model m = {.dp = 2, .cp = 4, .ga = 2, .alpha = 1000, .cap = 400, .degrees = 7};
    brs_sampler *a = dataset_sampler(lengths, 500, &m, 4, 1);
    brs_sampler *b = dataset_sampler(lengths, 500, &m, 4, 1);
    brs_plan *p = NULL, *q = NULL;
    CU_ASSERT_EQUAL_FATAL(brs_plan_new(&p), BRS_OK);
    CU_ASSERT_EQUAL_FATAL(brs_plan_new(&q), BRS_OK);
    for (uint64_t step = 0; step < 5; step++) {
        CU_ASSERT_EQUAL_FATAL(brs_plan_compute(p, a, 1, step), BRS_OK);
        CU_ASSERT_EQUAL_FATAL(brs_plan_compute(q, b, 1, step), BRS_OK);
        for (uint64_t r = 0; r < 8; r++)
            for (uint64_t micro = 0; micro < 2; micro++) {
                const uint64_t *x = NULL, *y = NULL;
                size_t cx = 0, cy = 0;
                uint64_t fx = 0, fy = 0, dx = 0, dy = 0;
                brs_plan_cp_micro_batch(&x, &cx, &fx, &dx, p, r, micro);
                brs_plan_cp_micro_batch(&y, &cy, &fy, &dy, q, r, micro);
                CU_ASSERT(cx == cy && fx == fy && dx == dy);
                CU_ASSERT(cx == cy && memcmp(x, y, cx * sizeof *x) == 0);
            }
    }
    uint64_t f1 = 0, f2 = 0, s1 = 0, s2 = 0;
    brs_sampler_fingerprint(&f1, a);
    brs_sampler_stream_fingerprint(&s1, a);
    static const brs_option keys[] = {BRS_OPT_CP_SIZE, BRS_OPT_MAX_TOKENS_PER_RANK,
                                      BRS_OPT_CP_DEGREES};
    static const int64_t values[] = {2, 500, 3};
    for (int k = 0; k < 3; k++) {
        brs_sampler *c = dataset_sampler(lengths, 500, &m, 4, 1);
        CU_ASSERT_EQUAL(brs_sampler_set_int(c, keys[k], values[k]), BRS_OK);
        brs_sampler_fingerprint(&f2, c);
        brs_sampler_stream_fingerprint(&s2, c);
        CU_ASSERT(f1 != f2);
        CU_ASSERT(s1 == s2);
        brs_sampler_free(c);
    }
    brs_sampler *c = dataset_sampler(lengths, 500, &m, 4, 1);
    CU_ASSERT_EQUAL(brs_sampler_set_double(c, BRS_OPT_CP_COMM_COST, 0.5), BRS_OK);
    brs_sampler_fingerprint(&f2, c);
    CU_ASSERT(f1 != f2);
    CU_ASSERT_EQUAL(brs_sampler_set_double(c, BRS_OPT_CP_COMM_COST, 0.6), BRS_OK);
    CU_ASSERT_EQUAL(brs_sampler_set_double(c, BRS_OPT_CP_LATENCY, 100.0), BRS_OK);
    brs_sampler_fingerprint(&f2, c);
    CU_ASSERT(f1 != f2);
    brs_sampler_free(c);
    /* a plan without context parallelism, through the cp queries */
    cp_model plain = {.dp = 2, .cp = 1, .ga = 2, .alpha = 1000, .degrees = 1};
    brs_sampler *d = dataset_sampler(lengths, 500, &plain, 4, 1);
    CU_ASSERT_EQUAL_FATAL(brs_plan_compute(p, d, 0, 0), BRS_OK);
    CU_ASSERT_EQUAL(bt_plan_int(p, BRS_PLAN_CP_SIZE), 1);
    for (uint64_t r = 0; r < 2; r++)
        for (uint64_t micro = 0; micro < 2; micro++) {
            const uint64_t *x = NULL, *y = NULL;
            size_t cx = 0, cy = 0, nr = 0;
            uint64_t f = 0, dg = 0;
            CU_ASSERT_EQUAL(brs_plan_cp_micro_batch(&x, &cx, &f, &dg, p, r, micro), BRS_OK);
            CU_ASSERT_EQUAL(brs_plan_micro_batch(&y, &cy, p, (int64_t)r, (int64_t)micro), BRS_OK);
            CU_ASSERT(x == y && cx == cy && f == r && dg == 1);
            CU_ASSERT_EQUAL(brs_plan_cp_token_ranges(NULL, &nr, p, r, micro, 0), BRS_OK);
            CU_ASSERT_EQUAL(nr, cx);
        }
    brs_sampler_free(d);
    brs_plan_free(p);
    brs_plan_free(q);
    brs_sampler_free(a);
    brs_sampler_free(b);
    free(lengths);
}

static void test_errors(void)
{
    uint32_t lengths[64];
    for (int i = 0; i < 64; i++) lengths[i] = 100 + (uint32_t)i;
    lengths[5] = 5000;
    cp_model m = {.dp = 2, .cp = 4, .ga = 1, .alpha = 1000, .cap = 1000, .degrees = 7};
    brs_sampler *s = dataset_sampler(lengths, 64, &m, 4, 0);
    brs_plan *p = NULL;
    CU_ASSERT_EQUAL_FATAL(brs_plan_new(&p), BRS_OK);
    /* 5000 tokens on 4 ranks: 1250 each, above 1000 */
    CU_ASSERT_EQUAL(brs_plan_compute(p, s, 0, 0), BRS_ERR_SAMPLE_TOO_LONG);
    BT_ASSERT(strstr(brs_plan_last_error(p), "max_tokens_per_rank") != NULL);
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_MAX_TOKENS_PER_RANK, 1250), BRS_OK);
    CU_ASSERT_EQUAL(brs_plan_compute(p, s, 0, 0), BRS_OK);
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_CP_SIZE, 3), BRS_OK);
    CU_ASSERT_EQUAL(brs_plan_compute(p, s, 0, 0), BRS_ERR_INVALID_ARGUMENT);
    BT_ASSERT(strstr(brs_plan_last_error(p), "power of two") != NULL);
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_CP_SIZE, 4), BRS_OK);
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_CP_DEGREES, 8), BRS_OK);
    CU_ASSERT_EQUAL(brs_plan_compute(p, s, 0, 0), BRS_ERR_INVALID_ARGUMENT);
    BT_ASSERT(strstr(brs_plan_last_error(p), "cp_degrees") != NULL);
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_CP_DEGREES, 0), BRS_OK);
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_PACKED, 0), BRS_OK);
    CU_ASSERT_EQUAL(brs_plan_compute(p, s, 0, 0), BRS_ERR_UNSUPPORTED);
    BT_ASSERT(strstr(brs_plan_last_error(p), "packed mode: set packed 1") != NULL);
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_PACKED, 1), BRS_OK);
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_MAX_TOKENS, 9000), BRS_OK);
    CU_ASSERT_EQUAL(brs_plan_compute(p, s, 0, 0), BRS_ERR_UNSUPPORTED);
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_MAX_TOKENS, 0), BRS_OK);
    CU_ASSERT_EQUAL(brs_plan_compute(p, s, 0, 0), BRS_OK);
    /* the queries' arguments */
    const uint64_t *idx = NULL;
    size_t count = 0;
    uint64_t first = 0, degree = 0, a = 0, b = 0, steps = 0;
    double cost = 0;
    CU_ASSERT_EQUAL(brs_plan_cp_micro_batch(&idx, &count, &first, &degree, p, 8, 0),
                    BRS_ERR_OUT_OF_RANGE);
    BT_ASSERT(strstr(brs_plan_last_error(p), "global rank 8") != NULL);
    CU_ASSERT_EQUAL(brs_plan_cp_micro_batch(&idx, &count, &first, &degree, p, 0, 1),
                    BRS_ERR_OUT_OF_RANGE);
    CU_ASSERT_EQUAL(brs_plan_cp_micro_batch(NULL, &count, &first, &degree, p, 0, 0),
                    BRS_ERR_NULL_POINTER);
    CU_ASSERT_EQUAL(brs_plan_cp_micro_batch_stats(&a, &b, &cost, p, 9, 0), BRS_ERR_OUT_OF_RANGE);
    CU_ASSERT_EQUAL(brs_plan_cp_micro_batch_stats(&a, NULL, &cost, p, 0, 0), BRS_ERR_NULL_POINTER);
    CU_ASSERT_EQUAL(brs_plan_cp_micro_steps(NULL, p), BRS_ERR_NULL_POINTER);
    CU_ASSERT_EQUAL(brs_plan_cp_micro_steps(&steps, NULL), BRS_ERR_NULL_POINTER);
    CU_ASSERT_EQUAL(brs_plan_cp_token_ranges(NULL, &count, p, 0, 0, 3), BRS_ERR_NULL_POINTER);
    /* a group holding samples has ranges; room for fewer is refused */
    uint64_t r = 0;
    for (r = 0; r < 8; r++) {
        CU_ASSERT_EQUAL(brs_plan_cp_token_ranges(NULL, &count, p, r, 0, 0), BRS_OK);
        if (count > 1) break;
    }
    uint64_t ranges[3];
    size_t more = 0;
    if (count > 1) {
        CU_ASSERT_EQUAL(brs_plan_cp_token_ranges(ranges, &more, p, r, 0, 1), BRS_ERR_OUT_OF_RANGE);
        CU_ASSERT_EQUAL(more, count);
    }
    brs_plan *empty = NULL;
    CU_ASSERT_EQUAL_FATAL(brs_plan_new(&empty), BRS_OK);
    CU_ASSERT_EQUAL(brs_plan_cp_micro_steps(&steps, empty), BRS_ERR_STATE);
    CU_ASSERT_EQUAL(brs_plan_cp_micro_batch(&idx, &count, &first, &degree, empty, 0, 0),
                    BRS_ERR_STATE);
    brs_plan_free(empty);
    /* max_tokens_per_rank below what grad_accum micro-steps can hold */
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_MAX_TOKENS_PER_RANK, 1300), BRS_OK);
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_CP_SIZE, 4), BRS_OK);
    CU_ASSERT_EQUAL(brs_sampler_set_int(s, BRS_OPT_BATCH_SIZE, 32), BRS_OK);
    CU_ASSERT_EQUAL(brs_plan_compute(p, s, 0, 0), BRS_ERR_CAP_INFEASIBLE);
    BT_ASSERT(strstr(brs_plan_last_error(p), "grad_accum") != NULL);
    brs_plan_free(p);
    brs_sampler_free(s);
}

int main(int argc, char **argv)
{
    static const bt_test tests[] = {
        {"cp: small steps exact against the brute force", test_small_steps_exact},
        {"cp: epochs: groups, cap, coverage, the samples without cp",
         test_epochs_structure_and_samples},
        {"cp: the head-tail split", test_head_tail_split},
        {"cp: the default cost splits a long sample, not a short one",
         test_default_cost_splits_long_not_short},
        {"cp: deterministic and fingerprinted", test_deterministic_fingerprinted},
        {"cp: errors", test_errors},
        {NULL, NULL},
    };
    return bt_run("context_parallel", tests, argc - 1, argv + 1);
}
