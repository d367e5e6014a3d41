/* test_epoch_check.c - brs_sampler_check_epoch against what planning does:
 * the check says an epoch plans iff brs_plan_compute plans every step of
 * it, the cap it reports plans every step and one token less does not, the
 * micro-batch count is the most the greedy probe of oracle.c needs over
 * the steps, and on small steps the cap equals a brute force over every
 * partition (contiguous or not) of each step. */
#include "brs_test.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* What planning every step of an epoch says: the first failing status
 * (BRS_OK if none) and, from plans without a cap, each step's lengths
 * longest first. */
typedef struct {
    brs_status status;
    uint64_t steps;
    uint32_t **desc;
    size_t *count;
} epoch_truth;

static brs_status plan_all(const brs_sampler *s, uint64_t epoch)
{
    uint64_t steps;
    brs_sampler *copy = (brs_sampler *)s; /* steps_per_epoch only validates */
    brs_status st = brs_sampler_steps_per_epoch(&steps, copy);
    brs_plan *p = NULL;
    if (st == BRS_OK) st = brs_plan_new(&p);
    for (uint64_t t = 0; st == BRS_OK && t < steps; t++) st = brs_plan_compute(p, s, epoch, t);
    brs_plan_free(p);
    return st;
}

static brs_status sampler_with_cap(brs_sampler **out, bt_config c, int64_t cap)
{
    c.max_tokens = cap;
    return bt_sampler_new(out, &c);
}

/* Each step's lengths, from plans without a cap (the samples of a step do
 * not depend on the cap). */
static bool step_lengths(epoch_truth *e, const bt_config *c, uint64_t epoch)
{
    brs_sampler *s;
    BT_REQUIRE(sampler_with_cap(&s, *c, 0) == BRS_OK);
    brs_plan *p;
    BT_REQUIRE(brs_plan_new(&p) == BRS_OK);
    BT_REQUIRE(brs_sampler_steps_per_epoch(&e->steps, s) == BRS_OK);
    e->desc = calloc(e->steps, sizeof *e->desc);
    e->count = calloc(e->steps, sizeof *e->count);
    for (uint64_t t = 0; t < e->steps; t++) {
        BT_REQUIRE(brs_plan_compute(p, s, epoch, t) == BRS_OK);
        bt_step step;
        BT_REQUIRE(bt_step_load(&step, p));
        e->desc[t] = bt_step_lengths_desc(&step, c->lengths);
        e->count[t] = step.num_samples;
        bt_step_free(&step);
    }
    brs_plan_free(p);
    brs_sampler_free(s);
    return true;
}

static void truth_free(epoch_truth *e)
{
    for (uint64_t t = 0; t < e->steps; t++) free(e->desc[t]);
    free(e->desc);
    free(e->count);
}

/* The most micro-batches the greedy probe needs over the steps under cap. */
static uint64_t most_needed(const epoch_truth *e, uint64_t cap)
{
    bt_cost_model tokens = {0, 0, false};
    uint64_t most = 0;
    for (uint64_t t = 0; t < e->steps; t++) {
        uint64_t g = bt_greedy_groups(e->desc[t], e->count[t], &tokens, BT_NO_LIMIT, cap);
        if (g > most) most = g;
    }
    return most;
}

/* The least cap over every partition of every step (steps of <= 10
 * samples): with alpha and intercept 0 a padded cost is bs * L * 1e6, so
 * the brute-force least max cost is the least peak in micro units; at
 * least the dataset's longest sample. False
 * when a step is too large for the enumeration. */
static bool brute_cap(uint64_t *cap, const epoch_truth *e, size_t k, const bt_config *c)
{
    bt_cost_model tokens = {0, 0, false};
    /* a cap below the dataset's longest sample is refused, drawn or not */
    *cap = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->lengths[i] > *cap) *cap = c->lengths[i];
    for (uint64_t t = 0; t < e->steps; t++) {
        if (e->count[t] > 10) return false;
        u128 best;
        if (!bt_brute_min_max(&best, e->desc[t], e->count[t], k, &tokens, 0)) return false;
        uint64_t peak = (uint64_t)(best / 1000000u); /* micro units */
        if (peak > *cap) *cap = peak;
    }
    return true;
}

static bt_config random_config(bt_rng *r, uint32_t *lengths)
{
    size_t n = 1 + (size_t)bt_rng_below(r, 40);
    /* mostly short samples, a few long ones: the shape that breaks a cap */
    for (size_t i = 0; i < n; i++)
        lengths[i] = bt_rng_below(r, 5) == 0 ? 20 + (uint32_t)bt_rng_below(r, 40)
                                             : 1 + (uint32_t)bt_rng_below(r, 8);
    bt_config c = bt_config_default(lengths, n);
    c.batch_size = 1 + (int64_t)bt_rng_below(r, 3);
    c.dp_size = 1 + (int64_t)bt_rng_below(r, 2);
    c.grad_accum = 1 + (int64_t)bt_rng_below(r, 3);
    c.drop_last = (int64_t)bt_rng_below(r, 2);
    c.shuffle = (int64_t)bt_rng_below(r, 4) != 0;
    c.seed = (int64_t)bt_rng_below(r, 1000);
    c.max_tokens = bt_rng_below(r, 6) == 0 ? 0 : 1 + (int64_t)bt_rng_below(r, 150);
    return c;
}

/* One configuration: the check against planning and the oracles. */
static void check_one(const bt_config *c, uint64_t epoch)
{
    brs_sampler *s;
    if (bt_sampler_new(&s, c) != BRS_OK) return;
    uint64_t cap = 0, needed = 0;
    brs_status check = brs_sampler_check_epoch(&cap, &needed, s, epoch);
    brs_status planned = plan_all(s, epoch);
    brs_sampler_free(s);
    if (planned == BRS_ERR_TOO_FEW_SAMPLES) {
        BT_ASSERT(check == BRS_ERR_TOO_FEW_SAMPLES);
        return;
    }
    /* feasible iff every step plans, with the planner's reason */
    BT_ASSERT(check == planned);
    epoch_truth e = {0};
    if (!step_lengths(&e, c, epoch)) {
        truth_free(&e);
        return;
    }
    size_t k = (size_t)(c->dp_size * c->grad_accum);
    uint64_t configured = (uint64_t)c->max_tokens;
    if (check == BRS_ERR_SAMPLE_TOO_LONG)
        BT_ASSERT(needed == 0);
    else
        BT_ASSERT(needed == (configured ? most_needed(&e, configured) : 1));
    BT_ASSERT((check == BRS_OK) == (needed <= k && check != BRS_ERR_SAMPLE_TOO_LONG));
    /* the reported cap plans every step, and one token less does not */
    BT_ASSERT(most_needed(&e, cap) <= k);
    BT_ASSERT(sampler_with_cap(&s, *c, (int64_t)cap) == BRS_OK);
    BT_ASSERT(plan_all(s, epoch) == BRS_OK);
    brs_sampler_free(s);
    if (cap > 1) {
        BT_ASSERT(sampler_with_cap(&s, *c, (int64_t)cap - 1) == BRS_OK);
        BT_ASSERT(plan_all(s, epoch) != BRS_OK);
        brs_sampler_free(s);
    }
    uint64_t brute;
    if (brute_cap(&brute, &e, k, c)) BT_ASSERT(cap == brute);
    truth_free(&e);
}

static void test_random_against_planning(void)
{
    bt_rng r = {2026};
    uint32_t lengths[40];
    for (int i = 0; i < 600; i++) {
        bt_config c = random_config(&r, lengths);
        uint64_t epoch = bt_rng_below(&r, 3);
        bt_set_case("case %d: n %zu bs %" PRId64 " dp %" PRId64 " ga %" PRId64 " drop_last %" PRId64
                    " seed %" PRId64 " max_tokens %" PRId64 " epoch %" PRIu64,
                    i, c.n, c.batch_size, c.dp_size, c.grad_accum, c.drop_last, c.seed,
                    c.max_tokens, epoch);
        check_one(&c, epoch);
    }
}

/* transformers' test data: 4 steps of 12 samples, K = 4; the message names
 * the count and the cap, which the random test proves right. */
static void test_refused_before_planning(void)
{
    uint32_t lengths[48];
    for (size_t i = 0; i < 48; i++) lengths[i] = i < 40 ? 100 : 3000;
    bt_config c = bt_config_default(lengths, 48);
    c.batch_size = 3;
    c.dp_size = 2;
    c.grad_accum = 2;
    c.max_tokens = 4000;
    brs_sampler *s;
    CU_ASSERT_FATAL(bt_sampler_new(&s, &c) == BRS_OK);
    uint64_t cap = 0, needed = 0;
    bt_set_case("transformers' lengths, max_tokens 4000");
    BT_ASSERT(brs_sampler_check_epoch(&cap, &needed, s, 0) == BRS_ERR_CAP_INFEASIBLE);
    const char *message = brs_sampler_last_error(s);
    BT_ASSERT(needed > 4);
    BT_ASSERT(cap > 4000);
    BT_ASSERT(bt_has_number(message, cap));
    BT_ASSERT(bt_has_number(message, needed));
    BT_ASSERT(plan_all(s, 0) == BRS_ERR_CAP_INFEASIBLE);
    brs_sampler_free(s);
}

/* A sample above max_tokens: the check names a cap that plans the epoch,
 * not merely the longest sample. */
static void test_sample_too_long_names_working_cap(void)
{
    uint32_t lengths[48];
    for (size_t i = 0; i < 48; i++) lengths[i] = i < 40 ? 100 : 3000;
    bt_config c = bt_config_default(lengths, 48);
    c.batch_size = 3;
    c.dp_size = 2;
    c.grad_accum = 2;
    c.max_tokens = 2000;
    brs_sampler *s;
    CU_ASSERT_FATAL(bt_sampler_new(&s, &c) == BRS_OK);
    uint64_t cap = 0, needed = 1;
    BT_ASSERT(brs_sampler_check_epoch(&cap, &needed, s, 0) == BRS_ERR_SAMPLE_TOO_LONG);
    BT_ASSERT(needed == 0);
    BT_ASSERT(cap >= 3000);
    BT_ASSERT(bt_has_number(brs_sampler_last_error(s), cap));
    brs_sampler_free(s);
    BT_ASSERT(sampler_with_cap(&s, c, (int64_t)cap) == BRS_OK);
    BT_ASSERT(plan_all(s, 0) == BRS_OK);
    brs_sampler_free(s);
}

static void test_null_packed_and_fixed_strategies(void)
{
    static const uint32_t lengths[] = {5, 3, 9, 2, 7, 7, 1, 4};
    bt_config c = bt_config_default(lengths, 8);
    c.batch_size = 2;
    c.dp_size = 2;
    c.max_tokens = 9;
    brs_sampler *s;
    CU_ASSERT_FATAL(bt_sampler_new(&s, &c) == BRS_OK);
    uint64_t cap, needed;
    BT_ASSERT(brs_sampler_check_epoch(NULL, &needed, s, 0) == BRS_ERR_NULL_POINTER);
    BT_ASSERT(strstr(brs_sampler_last_error(s), "min_max_tokens") != NULL);
    BT_ASSERT(brs_sampler_check_epoch(&cap, NULL, s, 0) == BRS_ERR_NULL_POINTER);
    BT_ASSERT(brs_sampler_check_epoch(&cap, &needed, NULL, 0) == BRS_ERR_NULL_POINTER);
    /* random never bends to the cap: only the longest sample matters */
    BT_ASSERT(brs_sampler_set_int(s, BRS_OPT_STRATEGY, BRS_STRATEGY_RANDOM) == BRS_OK);
    BT_ASSERT(brs_sampler_check_epoch(&cap, &needed, s, 0) == BRS_OK);
    BT_ASSERT(cap == 9 && needed == 1);
    BT_ASSERT(brs_sampler_set_int(s, BRS_OPT_STRATEGY, BRS_STRATEGY_BALANCED) == BRS_OK);
    BT_ASSERT(brs_sampler_set_int(s, BRS_OPT_PACKED, 1) == BRS_OK);
    BT_ASSERT(brs_sampler_check_epoch(&cap, &needed, s, 0) == BRS_ERR_UNSUPPORTED);
    BT_ASSERT(strstr(brs_sampler_last_error(s), "packed") != NULL);
    brs_sampler_free(s);
}

int main(int argc, char **argv)
{
    static const bt_test tests[] = {
        {"random configurations against planning", test_random_against_planning},
        {"transformers' data refused before planning", test_refused_before_planning},
        {"sample too long names a working cap", test_sample_too_long_names_working_cap},
        {"NULL, packed and fixed strategies", test_null_packed_and_fixed_strategies},
        {NULL, NULL},
    };
    return bt_run("epoch_check", tests, argc - 1, argv + 1);
}
