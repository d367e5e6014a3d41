/* test_contract.c - the sampler semantics of docs/design.md ("Semantics"): coverage,
 * drop_last and top-up, equal counts per rank, determinism, random access,
 * elasticity, shuffle and seed/epoch mixing, option resolution, the cap,
 * one sampler shared by threads. */
#include "brs_test.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *data_dir = "data";

static bt_config shaped(const uint32_t *len, size_t n, int64_t p, int64_t dp, int64_t ga)
{
    bt_config c = bt_config_default(len, n);
    c.batch_size = p;
    c.dp_size = dp;
    c.grad_accum = ga;
    return c;
}

/* Loads an epoch of c, failing the test if planning fails. */
static bool load_epoch(bt_epoch *e, const bt_config *c, uint64_t epoch, bool scrambled)
{
    brs_sampler *s = NULL;
    brs_status st = bt_sampler_new(&s, c);
    BT_REQUIRE(st == BRS_OK);
    st = bt_epoch_load(e, s, epoch, scrambled);
    if (st != BRS_OK) fprintf(stderr, "  brs: %s\n", brs_sampler_last_error(s));
    brs_sampler_free(s);
    if (st != BRS_OK) bt_epoch_free(e);
    BT_REQUIRE(st == BRS_OK);
    return true;
}

static bool contains(const uint64_t *sorted, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sorted[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && sorted[lo] == x;
}

/* How often each index appears over the epoch (malloc'd, n entries). */
static unsigned *epoch_counts(const bt_epoch *e, size_t n)
{
    unsigned *count = calloc(n, sizeof *count);
    for (uint64_t t = 0; t < e->steps; t++) {
        for (size_t j = 0; j < e->num[t]; j++) {
            BT_ASSERT(e->sorted[t][j] < n);
            if (e->sorted[t][j] < n) count[e->sorted[t][j]]++;
        }
    }
    return count;
}

/* ---- coverage: drop_last and the top-up ----------------------------------- */

typedef struct {
    size_t n;
    int64_t p, dp, ga;
} shape_cfg;

static void check_drop_last(const shape_cfg *sh, int64_t shuffle)
{
    uint32_t *len = bt_lognormal_lengths(sh->n, sh->n);
    bt_config c = shaped(len, sh->n, sh->p, sh->dp, sh->ga);
    c.shuffle = shuffle;
    size_t b = (size_t)(sh->p * sh->dp * sh->ga);
    bt_set_case("drop_last n %zu B %zu shuffle %" PRId64, sh->n, b, shuffle);
    bt_epoch e;
    if (load_epoch(&e, &c, 3, false)) {
        BT_ASSERT(e.steps == sh->n / b);
        unsigned *count = epoch_counts(&e, sh->n);
        size_t once = 0, more = 0, tail_seen = 0;
        for (size_t i = 0; i < sh->n; i++) {
            once += count[i] == 1;
            more += count[i] > 1;
            tail_seen += i >= e.steps * b && count[i] > 0;
        }
        BT_ASSERT(more == 0);
        BT_ASSERT(once == e.steps * b);          /* exactly N % B samples dropped */
        if (!shuffle) BT_ASSERT(tail_seen == 0); /* identity order: the last ones */
        for (uint64_t t = 0; t < e.steps; t++) BT_ASSERT(e.num[t] == b);
        free(count);
        bt_epoch_free(&e);
    }
    free(len);
}

static void test_drop_last_drops_exactly_the_tail(void)
{
    const shape_cfg shapes[] = {{1003, 3, 2, 2}, {960, 3, 2, 2}, {100, 100, 1, 1}, {777, 1, 5, 3}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        check_drop_last(&shapes[i], 1);
        check_drop_last(&shapes[i], 0);
    }
}

/* drop_last off: the last step keeps the remainder r = N - (steps-1)*B,
 * topped up to K from the start of the epoch order (wrapping) when r < K.
 * The top-up draws order[j mod N] for j < K - r, so every index appears
 * 1 + q or 2 + q times with q = (K - r) / N, exactly (K - r) % N of them
 * 2 + q times; with shuffle off they are the first indices. */
static void check_keep_last(const shape_cfg *sh, int64_t shuffle)
{
    uint32_t *len = bt_lognormal_lengths(sh->n, 7 * sh->n);
    bt_config c = shaped(len, sh->n, sh->p, sh->dp, sh->ga);
    c.shuffle = shuffle;
    c.drop_last = 0;
    size_t k = (size_t)(sh->dp * sh->ga), b = (size_t)sh->p * k;
    size_t steps = (sh->n + b - 1) / b, r = sh->n - (steps - 1) * b;
    size_t extra = r < k ? k - r : 0, q = extra / sh->n, rem = extra % sh->n;
    bt_set_case("keep last n %zu B %zu K %zu shuffle %" PRId64, sh->n, b, k, shuffle);
    bt_epoch e;
    if (!load_epoch(&e, &c, 1, false)) {
        free(len);
        return;
    }
    BT_ASSERT(e.steps == steps);
    BT_ASSERT(e.steps == steps && e.num[steps - 1] == r + extra);
    unsigned *count = epoch_counts(&e, sh->n);
    size_t low = 0, high = 0, stray = 0;
    for (size_t i = 0; i < sh->n; i++) {
        low += count[i] == 1 + q;
        high += count[i] == 2 + q;
        if (!shuffle) stray += count[i] != 1 + q + (i < rem);
        /* with several steps the repeated samples also opened the epoch */
        if (steps > 1 && count[i] > 1 && e.steps > 0) stray += !contains(e.sorted[0], e.num[0], i);
    }
    BT_ASSERT(low == sh->n - rem && high == rem);
    BT_ASSERT(stray == 0);
    free(count);
    bt_epoch_free(&e);
    free(len);
}

static void test_keep_last_tops_up_only_to_k(void)
{
    const shape_cfg shapes[] = {
        {1003, 3, 2, 2}, /* r = 7 >= K: no top-up */
        {998, 3, 2, 2},  /* r = 2 < K = 4: two repeats */
        {1, 1, 4, 2},    /* N = 1, K = 8: eight times index 0 */
        {3, 2, 2, 2},    /* one step, r = 3 < K = 4 */
        {2, 1, 8, 1},    /* wraps three times */
        {5, 4, 8, 1},    /* N < K < B */
        {30, 20, 2, 1},  /* one short step of N >= K samples, no top-up */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        check_keep_last(&shapes[i], 1);
        check_keep_last(&shapes[i], 0);
    }
}

/* ---- shape of every step --------------------------------------------------- */

/* Every rank has grad_accum non-empty micro-batches per step and nothing
 * beyond them; the plan reports the configured K. */
static void test_equal_micro_batch_counts_no_empty(void)
{
    size_t n = 4000;
    uint32_t *len = bt_lognormal_lengths(n, 11);
    bt_config c = shaped(len, n, 3, 5, 4); /* B = 60, K = 20 */
    c.drop_last = 0;
    brs_sampler *s = NULL;
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(bt_sampler_new(&s, &c) == BRS_OK && brs_plan_new(&p) == BRS_OK);
    uint64_t steps = 0;
    CU_ASSERT(brs_sampler_steps_per_epoch(&steps, s) == BRS_OK && steps == 67);
    size_t empty = 0, bad = 0;
    for (uint64_t t = 0; t < steps; t++) {
        CU_ASSERT_FATAL(brs_plan_compute(p, s, 0, t) == BRS_OK);
        bad += bt_plan_int(p, BRS_PLAN_DP_SIZE) != 5 || bt_plan_int(p, BRS_PLAN_GRAD_ACCUM) != 4;
        for (int64_t r = 0; r < 5; r++) {
            for (int64_t m = 0; m < 4; m++) {
                const uint64_t *idx = NULL;
                size_t cnt = 0;
                bad += brs_plan_micro_batch(&idx, &cnt, p, r, m) != BRS_OK;
                empty += cnt == 0 || idx == NULL;
            }
            const uint64_t *idx = NULL;
            size_t cnt = 0;
            bad += brs_plan_micro_batch(&idx, &cnt, p, r, 4) != BRS_ERR_OUT_OF_RANGE;
            bad += brs_plan_micro_batch(&idx, &cnt, p, r, -1) != BRS_ERR_OUT_OF_RANGE;
        }
        const uint64_t *idx = NULL;
        size_t cnt = 0;
        bad += brs_plan_micro_batch(&idx, &cnt, p, 5, 0) != BRS_ERR_OUT_OF_RANGE;
        bad += brs_plan_micro_batch(&idx, &cnt, p, -1, 0) != BRS_ERR_OUT_OF_RANGE;
    }
    CU_ASSERT(empty == 0);
    CU_ASSERT(bad == 0);
    brs_plan_free(p);
    brs_sampler_free(s);
    free(len);
}

/* ---- determinism and random access ---------------------------------------- */

static void test_deterministic_and_sensitive_to_epoch_and_seed(void)
{
    size_t n = 3000;
    uint32_t *len = bt_lognormal_lengths(n, 21);
    bt_config c = shaped(len, n, 4, 4, 2);
    c.seed = 1234;
    bt_epoch a, b, other_epoch, other_seed;
    CU_ASSERT_FATAL(load_epoch(&a, &c, 5, false));
    CU_ASSERT_FATAL(load_epoch(&b, &c, 5, false));
    CU_ASSERT(bt_epoch_equal(&a, &b));
    CU_ASSERT_FATAL(load_epoch(&other_epoch, &c, 6, false));
    CU_ASSERT(bt_epoch_sets_differ(&a, &other_epoch));
    c.seed = 1235;
    CU_ASSERT_FATAL(load_epoch(&other_seed, &c, 5, false));
    CU_ASSERT(bt_epoch_sets_differ(&a, &other_seed));
    bt_epoch_free(&a);
    bt_epoch_free(&b);
    bt_epoch_free(&other_epoch);
    bt_epoch_free(&other_seed);
    free(len);
}

/* The rank option selects a rank to serve, never the plan of the step. */
static void test_plan_independent_of_rank_option(void)
{
    size_t n = 2000;
    uint32_t *len = bt_lognormal_lengths(n, 31);
    bt_config c = shaped(len, n, 5, 4, 3);
    bt_epoch a, b;
    CU_ASSERT_FATAL(load_epoch(&a, &c, 0, false));
    c.rank = 3;
    CU_ASSERT_FATAL(load_epoch(&b, &c, 0, false));
    CU_ASSERT(bt_epoch_equal(&a, &b));
    bt_epoch_free(&a);
    bt_epoch_free(&b);
    free(len);
}

static void test_random_access_equals_sequential(void)
{
    size_t n = 5000;
    uint32_t *len = bt_lognormal_lengths(n, 41);
    bt_config c = shaped(len, n, 7, 3, 2);
    c.drop_last = 0;
    c.max_tokens = 20000;
    bt_epoch seq, rnd;
    CU_ASSERT_FATAL(load_epoch(&seq, &c, 2, false));
    CU_ASSERT_FATAL(load_epoch(&rnd, &c, 2, true));
    CU_ASSERT(bt_epoch_equal(&seq, &rnd));
    bt_epoch_free(&seq);
    bt_epoch_free(&rnd);
    /* one step of a late epoch on a fresh sampler and plan, against the
     * same step after walking earlier epochs with one plan */
    brs_sampler *s = NULL;
    brs_plan *walked = NULL, *fresh = NULL;
    CU_ASSERT_FATAL(bt_sampler_new(&s, &c) == BRS_OK);
    CU_ASSERT_FATAL(brs_plan_new(&walked) == BRS_OK && brs_plan_new(&fresh) == BRS_OK);
    for (uint64_t e = 0; e < 3; e++)
        for (uint64_t t = 0; t < 10; t++) CU_ASSERT(brs_plan_compute(walked, s, e, t) == BRS_OK);
    CU_ASSERT(brs_plan_compute(walked, s, 7, 99) == BRS_OK);
    brs_sampler_free(s);
    CU_ASSERT_FATAL(bt_sampler_new(&s, &c) == BRS_OK);
    CU_ASSERT(brs_plan_compute(fresh, s, 7, 99) == BRS_OK);
    bt_step x, y;
    if (bt_step_load(&x, walked) && bt_step_load(&y, fresh)) {
        bool same = x.k == y.k;
        for (int64_t g = 0; same && g < x.k; g++)
            same = x.mb[g].count == y.mb[g].count &&
                   memcmp(x.mb[g].indices, y.mb[g].indices, x.mb[g].count * 8) == 0;
        CU_ASSERT(same);
        bt_step_free(&x);
        bt_step_free(&y);
    }
    brs_plan_free(walked);
    brs_plan_free(fresh);
    brs_sampler_free(s);
    free(len);
}

/* BORROW plans like COPY; COPY does not see later changes to the array. */
static void test_borrow_and_copy_plan_alike(void)
{
    size_t n = 1500;
    uint32_t *len = bt_lognormal_lengths(n, 51);
    bt_config c = shaped(len, n, 4, 2, 2);
    bt_epoch copied, borrowed, after;
    CU_ASSERT_FATAL(load_epoch(&copied, &c, 0, false));
    brs_sampler *s = NULL;
    CU_ASSERT_FATAL(bt_sampler_new(&s, &c) == BRS_OK);
    CU_ASSERT(brs_sampler_set_lengths(s, len, n, BRS_LENGTHS_BORROW) == BRS_OK);
    CU_ASSERT(bt_epoch_load(&borrowed, s, 0, false) == BRS_OK);
    CU_ASSERT(bt_epoch_equal(&copied, &borrowed));
    brs_sampler_free(s);
    CU_ASSERT_FATAL(bt_sampler_new(&s, &c) == BRS_OK); /* a private copy */
    for (size_t i = 0; i < n; i++) len[i] = (uint32_t)(1 + i % 3);
    CU_ASSERT(bt_epoch_load(&after, s, 0, false) == BRS_OK);
    CU_ASSERT(bt_epoch_equal(&copied, &after));
    brs_sampler_free(s);
    bt_epoch_free(&copied);
    bt_epoch_free(&borrowed);
    bt_epoch_free(&after);
    free(len);
}

/* ---- which samples form a step ------------------------------------------- */

/* Elastic: for one global batch B, the samples of every full step are the
 * same whatever the split into dp_size x grad_accum x batch_size. A kept
 * last step holds the same remainder, topped up to each layout's own K. */
static bool same_samples_elastic(const bt_epoch *ref, const bt_epoch *e, bool keep_last)
{
    BT_REQUIRE(ref->steps == e->steps && ref->steps > 0);
    uint64_t full = keep_last ? ref->steps - 1 : ref->steps;
    for (uint64_t t = 0; t < full; t++)
        BT_REQUIRE(ref->num[t] == e->num[t] &&
                   memcmp(ref->sorted[t], e->sorted[t], ref->num[t] * sizeof(uint64_t)) == 0);
    if (keep_last) {
        uint64_t t = ref->steps - 1;
        for (size_t j = 0; j < ref->num[t]; j++)
            BT_REQUIRE(contains(e->sorted[t], e->num[t], ref->sorted[t][j]));
    }
    return true;
}

static void test_step_samples_independent_of_layout(void)
{
    const int64_t layouts[][3] = {{48, 1, 1}, {6, 4, 2}, {1, 8, 6}, {2, 24, 1}, {3, 2, 8}};
    size_t n = 5000; /* 104 full steps of 48, and 8 samples left */
    uint32_t *len = bt_lognormal_lengths(n, 61);
    for (int64_t drop = 0; drop <= 1; drop++) {
        bt_epoch ref;
        bt_config c = shaped(len, n, 48, 1, 1);
        c.drop_last = drop;
        c.seed = 99;
        if (!load_epoch(&ref, &c, 4, false)) continue;
        for (size_t i = 1; i < sizeof layouts / sizeof layouts[0]; i++) {
            bt_config d = shaped(len, n, layouts[i][0], layouts[i][1], layouts[i][2]);
            d.drop_last = drop;
            d.seed = 99;
            d.alpha = 0.5; /* the cost model only changes the split */
            bt_epoch e;
            bt_set_case("layout %zu drop_last %" PRId64, i, drop);
            if (load_epoch(&e, &d, 4, false)) {
                BT_ASSERT(same_samples_elastic(&ref, &e, !drop));
                bt_epoch_free(&e);
            }
        }
        bt_epoch_free(&ref);
    }
    free(len);
}

static void test_shuffle_off_is_identity_order(void)
{
    size_t n = 1000;
    uint32_t *len = bt_lognormal_lengths(n, 71);
    for (int64_t seed = 0; seed < 3; seed++) {
        bt_config c = shaped(len, n, 5, 3, 2); /* B = 30 */
        c.shuffle = 0;
        c.seed = seed;
        c.drop_last = 0;
        bt_epoch e;
        if (!load_epoch(&e, &c, (uint64_t)seed * 5, false)) continue;
        size_t stray = 0;
        for (uint64_t t = 0; t < e.steps; t++)
            for (size_t j = 0; j < e.num[t]; j++) stray += e.sorted[t][j] != t * 30 + j;
        CU_ASSERT(e.steps == 34);
        CU_ASSERT(stray == 0);
        bt_epoch_free(&e);
    }
    free(len);
}

/* The PRNG key mixes seed and epoch: (0, 1) and (1, 0) are different
 * orders (upstream's seed + epoch made them equal), and a shuffled epoch is
 * not the identity. */
static void test_seed_and_epoch_are_mixed(void)
{
    size_t n = 2000;
    uint32_t *len = bt_lognormal_lengths(n, 81);
    bt_config c = shaped(len, n, 10, 2, 1);
    bt_epoch s0e1, s1e0, s0e0, ident;
    CU_ASSERT_FATAL(load_epoch(&s0e1, &c, 1, false));
    CU_ASSERT_FATAL(load_epoch(&s0e0, &c, 0, false));
    c.seed = 1;
    CU_ASSERT_FATAL(load_epoch(&s1e0, &c, 0, false));
    c.shuffle = 0;
    CU_ASSERT_FATAL(load_epoch(&ident, &c, 0, false));
    CU_ASSERT(bt_epoch_sets_differ(&s0e1, &s1e0));
    CU_ASSERT(bt_epoch_sets_differ(&s0e0, &s0e1));
    CU_ASSERT(bt_epoch_sets_differ(&s0e0, &ident));
    CU_ASSERT(bt_epoch_sets_differ(&s1e0, &ident));
    bt_epoch_free(&s0e1);
    bt_epoch_free(&s1e0);
    bt_epoch_free(&s0e0);
    bt_epoch_free(&ident);
    free(len);
}

/* ---- options and fingerprint ---------------------------------------------- */

static void test_documented_defaults_and_resolution(void)
{
    brs_sampler *s = NULL;
    CU_ASSERT_FATAL(brs_sampler_new(&s) == BRS_OK);
    const struct {
        brs_option key;
        int64_t value;
    } defaults[] = {{BRS_OPT_BATCH_SIZE, 8}, {BRS_OPT_GRAD_ACCUM, 1}, {BRS_OPT_DP_SIZE, 1},
                    {BRS_OPT_RANK, 0},       {BRS_OPT_SEED, 0},       {BRS_OPT_SHUFFLE, 1},
                    {BRS_OPT_DROP_LAST, 1},  {BRS_OPT_MAX_TOKENS, 0}, {BRS_OPT_PACKED, 0}};
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        int64_t v = -7;
        CU_ASSERT(brs_sampler_get_int(&v, s, defaults[i].key) == BRS_OK);
        CU_ASSERT(v == defaults[i].value);
    }
    double a = -1, ic = -1;
    CU_ASSERT(brs_sampler_get_double(&a, s, BRS_OPT_ALPHA) == BRS_OK && a == 0.001);
    CU_ASSERT(brs_sampler_get_double(&ic, s, BRS_OPT_INTERCEPT) == BRS_OK && ic == 0.0);
    /* doubles resolve to the nearest multiple of 1e-6 */
    const double alphas[] = {0.0012345678, 0.0000005, 0.0000006, 999.9999996, 1.5};
    for (size_t i = 0; i < sizeof alphas / sizeof alphas[0]; i++) {
        CU_ASSERT(brs_sampler_set_double(s, BRS_OPT_ALPHA, alphas[i]) == BRS_OK);
        CU_ASSERT(brs_sampler_get_double(&a, s, BRS_OPT_ALPHA) == BRS_OK);
        CU_ASSERT(bt_close(a, (double)llround(alphas[i] * 1e6) / 1e6));
    }
    /* a nonzero value that would round to 0 is refused, the value kept */
    const brs_option resolved[] = {BRS_OPT_ALPHA, BRS_OPT_INTERCEPT};
    for (size_t i = 0; i < 2; i++) {
        double before = -1, after = -1;
        CU_ASSERT(brs_sampler_get_double(&before, s, resolved[i]) == BRS_OK);
        CU_ASSERT(brs_sampler_set_double(s, resolved[i], 4e-7) == BRS_ERR_OUT_OF_RANGE);
        CU_ASSERT(strstr(brs_sampler_last_error(s), "resolution") != NULL);
        CU_ASSERT(brs_sampler_get_double(&after, s, resolved[i]) == BRS_OK && after == before);
    }
    CU_ASSERT(brs_sampler_set_double(s, BRS_OPT_INTERCEPT, 12345.6789012345) == BRS_OK);
    CU_ASSERT(brs_sampler_get_double(&ic, s, BRS_OPT_INTERCEPT) == BRS_OK);
    CU_ASSERT(bt_close(ic, 12345.678901));
    const struct {
        brs_option key;
        int64_t value;
    } values[] = {{BRS_OPT_BATCH_SIZE, 3}, {BRS_OPT_GRAD_ACCUM, 4},    {BRS_OPT_DP_SIZE, 5},
                  {BRS_OPT_RANK, 2},       {BRS_OPT_SEED, INT64_MAX},  {BRS_OPT_SHUFFLE, 0},
                  {BRS_OPT_DROP_LAST, 0},  {BRS_OPT_MAX_TOKENS, 4096}, {BRS_OPT_PACKED, 1}};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        int64_t v = -7;
        CU_ASSERT(brs_sampler_set_int(s, values[i].key, values[i].value) == BRS_OK);
        CU_ASSERT(brs_sampler_get_int(&v, s, values[i].key) == BRS_OK && v == values[i].value);
    }
    brs_sampler_free(s);
}

static uint64_t fingerprint_of(const bt_config *c)
{
    brs_sampler *s = NULL;
    uint64_t fp = 0;
    BT_ASSERT(bt_sampler_new(&s, c) == BRS_OK);
    BT_ASSERT(s && brs_sampler_fingerprint(&fp, s) == BRS_OK);
    brs_sampler_free(s);
    return fp;
}

/* Same inputs, same fingerprint; the rank is left out; every other option
 * and the lengths are in. */
static void test_fingerprint_covers_configuration(void)
{
    size_t n = 500;
    uint32_t *len = bt_lognormal_lengths(n, 91);
    bt_config c = shaped(len, n, 4, 2, 2);
    uint64_t base = fingerprint_of(&c);
    CU_ASSERT(fingerprint_of(&c) == base);
    bt_config d = c;
    d.rank = 1;
    CU_ASSERT(fingerprint_of(&d) == base);
    bt_config changed[10];
    for (size_t i = 0; i < 10; i++) changed[i] = c;
    changed[0].batch_size = 5;
    changed[1].grad_accum = 1;
    changed[2].dp_size = 4;
    changed[3].seed = 1;
    changed[4].shuffle = 0;
    changed[5].drop_last = 0;
    changed[6].max_tokens = 8192;
    changed[7].packed = 1;
    changed[8].alpha = 0.002;
    changed[9].intercept = 1.0;
    for (size_t i = 0; i < 10; i++) {
        bt_set_case("fingerprint option %zu", i);
        BT_ASSERT(fingerprint_of(&changed[i]) != base);
    }
    len[n / 2]++;
    CU_ASSERT(fingerprint_of(&c) != base);
    free(len);
}

/* ---- threads ------------------------------------------------------------------ */

/* One sampler serves many threads at once, each with its own plan: every
 * thread plans every step of the epoch and must match a sequential walk. */
typedef struct {
    const brs_sampler *sampler;
    const bt_epoch *expected;
    bool same;
} thread_job;

/* Whether plan p holds the micro-batches that enc encodes (count, indices
 * per (rank, micro)). Uses no CUnit call: CUnit is not thread-safe. */
static bool plan_matches(const brs_plan *p, const uint64_t *enc, size_t enc_len, int64_t dp,
                         int64_t ga)
{
    size_t at = 0;
    for (int64_t r = 0; r < dp; r++) {
        for (int64_t m = 0; m < ga; m++) {
            const uint64_t *idx;
            size_t cnt;
            if (brs_plan_micro_batch(&idx, &cnt, p, r, m) != BRS_OK || at + 1 + cnt > enc_len ||
                enc[at] != cnt || memcmp(enc + at + 1, idx, cnt * sizeof *idx) != 0)
                return false;
            at += 1 + cnt;
        }
    }
    return at == enc_len;
}

static void *plan_in_thread(void *arg)
{
    thread_job *job = arg;
    brs_plan *p = NULL;
    job->same = brs_plan_new(&p) == BRS_OK;
    /* walk the steps backwards, unlike the sequential reference */
    for (uint64_t t = job->expected->steps; job->same && t-- > 0;)
        job->same = brs_plan_compute(p, job->sampler, 1, t) == BRS_OK &&
                    plan_matches(p, job->expected->enc[t], job->expected->enc_len[t], 4, 2);
    brs_plan_free(p);
    return NULL;
}

static void test_one_sampler_many_threads(void)
{
    size_t n = 4000;
    uint32_t *len = bt_lognormal_lengths(n, 101);
    bt_config c = shaped(len, n, 5, 4, 2);
    c.max_tokens = 16384;
    brs_sampler *s = NULL;
    CU_ASSERT_FATAL(bt_sampler_new(&s, &c) == BRS_OK);
    bt_epoch expected;
    CU_ASSERT_FATAL(bt_epoch_load(&expected, s, 1, false) == BRS_OK);
    enum { THREADS = 4 };
    pthread_t tid[THREADS];
    thread_job jobs[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i] = (thread_job){s, &expected, false};
        CU_ASSERT_FATAL(pthread_create(&tid[i], NULL, plan_in_thread, &jobs[i]) == 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(tid[i], NULL);
        CU_ASSERT(jobs[i].same);
    }
    bt_epoch_free(&expected);
    brs_sampler_free(s);
    free(len);
}

/* ---- the cap, on real lengths -------------------------------------------- */

static uint32_t *read_lengths(const char *name, size_t *n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", data_dir, name);
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    size_t cap = 1024;
    uint32_t *len = malloc(cap * sizeof *len);
    unsigned long v;
    *n = 0;
    while (fscanf(f, "%lu", &v) == 1) {
        if (*n == cap) len = realloc(len, (cap *= 2) * sizeof *len);
        len[(*n)++] = (uint32_t)v;
    }
    fclose(f);
    return len;
}

/* With B = 128 and K = 8 on gsm8k, this cap is met by about half the steps
 * and binds (changes the plan) in most of those. */
#define GSM8K_CAP 2400

/* Plans every step of a real dataset under a binding cap: a plan never
 * exceeds it, and CAP_INFEASIBLE comes only when the greedy count of
 * micro-batches that meet the cap exceeds K. */
static void test_cap_never_exceeded_on_real_lengths(void)
{
    size_t n = 0;
    uint32_t *len = read_lengths("gsm8k_train.lengths", &n);
    CU_ASSERT_FATAL(len != NULL && n > 1000);
    bt_config c = shaped(len, n, 16, 4, 2); /* B = 128, K = 8 */
    c.drop_last = 0;
    bt_config capped = c;
    capped.max_tokens = GSM8K_CAP;
    bt_cost_model m = bt_cost_model_of(&c);
    brs_sampler *free_s = NULL, *cap_s = NULL;
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(bt_sampler_new(&free_s, &c) == BRS_OK);
    CU_ASSERT_FATAL(bt_sampler_new(&cap_s, &capped) == BRS_OK);
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    uint64_t steps = 0, feasible = 0, binding = 0;
    CU_ASSERT(brs_sampler_steps_per_epoch(&steps, cap_s) == BRS_OK);
    for (uint64_t t = 0; t < steps; t++) {
        bt_set_case("gsm8k step %" PRIu64, t);
        bt_step st;
        BT_ASSERT(brs_plan_compute(p, free_s, 0, t) == BRS_OK);
        if (!bt_step_load(&st, p)) break;
        uint32_t *desc = bt_step_lengths_desc(&st, len);
        uint64_t need = bt_greedy_groups(desc, st.num_samples, &m, BT_NO_LIMIT, GSM8K_CAP);
        bool over = bt_plan_int(p, BRS_PLAN_MAX_PADDED_TOKENS) > GSM8K_CAP;
        bt_step_free(&st);
        brs_status status = brs_plan_compute(p, cap_s, 0, t);
        BT_ASSERT(status == (need <= 8 ? BRS_OK : BRS_ERR_CAP_INFEASIBLE));
        if (status == BRS_OK) {
            feasible++;
            binding += over;
            BT_ASSERT(bt_plan_int(p, BRS_PLAN_MAX_PADDED_TOKENS) <= GSM8K_CAP);
        }
        free(desc);
    }
    CU_ASSERT(feasible > 0 && binding > 0); /* the cap changed some plans */
    brs_plan_free(p);
    brs_sampler_free(free_s);
    brs_sampler_free(cap_s);
    free(len);
}

int main(int argc, char **argv)
{
    if (argc > 1 && argv[1][0] != '-') {
        data_dir = argv[1];
        argc--;
        argv++;
    }
    static const bt_test tests[] = {
        {"drop_last on drops exactly the tail", test_drop_last_drops_exactly_the_tail},
        {"drop_last off tops up only to K", test_keep_last_tops_up_only_to_k},
        {"equal micro-batch counts, none empty", test_equal_micro_batch_counts_no_empty},
        {"deterministic, sensitive to epoch and seed",
         test_deterministic_and_sensitive_to_epoch_and_seed},
        {"plan independent of the rank option", test_plan_independent_of_rank_option},
        {"random access equals sequential", test_random_access_equals_sequential},
        {"borrowed and copied lengths plan alike", test_borrow_and_copy_plan_alike},
        {"step samples independent of dp/ga layout", test_step_samples_independent_of_layout},
        {"shuffle off is identity order", test_shuffle_off_is_identity_order},
        {"seed and epoch are mixed", test_seed_and_epoch_are_mixed},
        {"documented defaults and 1e-6 resolution", test_documented_defaults_and_resolution},
        {"fingerprint covers the configuration", test_fingerprint_covers_configuration},
        {"cap never exceeded on real lengths", test_cap_never_exceeded_on_real_lengths},
        {"one sampler, many threads", test_one_sampler_many_threads},
        {NULL, NULL},
    };
    return bt_run("contract", tests, argc - 1, argv + 1);
}
