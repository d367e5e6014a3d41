/* test_properties.c - the sampler's contract (docs/design.md) as properties
 * over 10^4 seeded random configurations each, every strategy: no sample
 * lost or duplicated over an epoch, the same micro-batch count on every
 * rank, the hard cap (balanced; the baselines ignore it), one plan for two
 * samplers built apart (and, once, in another process), resume equal to
 * the uninterrupted run, a fingerprint that follows every option but the
 * rank. Datasets are small (N <= 128) so that
 * the suite stays fast under ASan; tests/fuzz covers larger shapes. */
#include "brs_test.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CONFIGS 10000
#define MAX_N 128

/* ---- random configurations ----------------------------------------------- */

typedef struct {
    uint32_t lengths[MAX_N];
    bt_config c;
    int64_t strategy; /* BRS_OPT_STRATEGY where the library has it (1.1) */
} case_t;

static uint32_t random_length(bt_rng *r, unsigned shape)
{
    switch (shape) {
    case 0: return 1 + (uint32_t)bt_rng_below(r, 16);
    case 1: return bt_lognormal(r, 4.0, 1.2, 1, 4096);
    case 2: return 1u << bt_rng_below(r, 31);
    default: return 7;
    }
}

/* A configuration drawn over the whole contract: any shuffle, drop_last,
 * packed, cost model, with a cap in a third of the cases. */
static void random_case(case_t *k, bt_rng *r)
{
    size_t n = 1 + (size_t)bt_rng_below(r, MAX_N);
    unsigned shape = (unsigned)bt_rng_below(r, 4);
    uint32_t longest = 0;
    for (size_t i = 0; i < n; i++) {
        k->lengths[i] = random_length(r, shape);
        longest = k->lengths[i] > longest ? k->lengths[i] : longest;
    }
    static const double alphas[] = {0.0, 0.001, 0.5, 1000.0};
    static const double intercepts[] = {0.0, 1.0, 1e6};
    bt_config c = bt_config_default(k->lengths, n);
    c.batch_size = 1 + (int64_t)bt_rng_below(r, 4);
    c.dp_size = 1 + (int64_t)bt_rng_below(r, 6);
    c.grad_accum = 1 + (int64_t)bt_rng_below(r, 4);
    c.rank = (int64_t)bt_rng_below(r, (uint64_t)c.dp_size);
    c.seed = (int64_t)(bt_rng_next(r) >> 1);
    c.shuffle = (int64_t)bt_rng_below(r, 4) != 0;
    c.drop_last = (int64_t)bt_rng_below(r, 2);
    c.packed = bt_rng_below(r, 4) == 0;
    c.alpha = alphas[bt_rng_below(r, 4)];
    c.intercept = intercepts[bt_rng_below(r, 3)];
    c.max_tokens =
        bt_rng_below(r, 3) == 0 ? (int64_t)longest * (1 + (int64_t)bt_rng_below(r, 6)) : 0;
    k->c = c;
    k->strategy = (int64_t)bt_rng_below(r, 3);
    bt_set_case("strategy %" PRId64 " n %zu P %" PRId64 " dp %" PRId64 " ga %" PRId64
                " seed %" PRId64 " shuffle %" PRId64 " drop_last %" PRId64 " packed %" PRId64
                " max_tokens %" PRId64 " alpha %g intercept %g",
                k->strategy, n, c.batch_size, c.dp_size, c.grad_accum, c.seed, c.shuffle,
                c.drop_last, c.packed, c.max_tokens, c.alpha, c.intercept);
}

static uint64_t micro_batches(const bt_config *c)
{
    return (uint64_t)(c->dp_size * c->grad_accum);
}

static uint64_t global_batch(const bt_config *c)
{
    return (uint64_t)c->batch_size * micro_batches(c);
}

/* Builds the sampler of a case; false (no sampler) when the contract lets
 * it refuse: no full step with drop_last, or fewer samples than K. */
static bool case_sampler(brs_sampler **s, const case_t *k)
{
    const bt_config *c = &k->c;
    brs_status st = bt_sampler_new(s, c);
    BT_REQUIRE(st == BRS_OK);
#if BRS_VERSION_NUMBER >= 10100
    BT_REQUIRE(brs_sampler_set_int(*s, BRS_OPT_STRATEGY, k->strategy) == BRS_OK);
#endif
    uint64_t steps = 0;
    st = brs_sampler_steps_per_epoch(&steps, *s);
    bool may_refuse = (c->drop_last && c->n < global_batch(c)) || c->n < micro_batches(c);
    if (st != BRS_OK) {
        BT_ASSERT(may_refuse);
        brs_sampler_free(*s);
        *s = NULL;
        return false;
    }
    uint64_t b = global_batch(c);
    BT_ASSERT(steps == (c->drop_last ? c->n / b : (c->n + b - 1) / b));
    return true;
}

/* Runs `check` on CONFIGS configurations that the library accepts (and
 * that plan: a cap may refuse a step, which the cap property checks). */
static void for_cases(uint64_t seed, bool (*check)(const case_t *k, brs_sampler *s))
{
    bt_rng r = {seed};
    case_t k;
    size_t checked = 0;
    for (size_t tries = 0; checked < CONFIGS && tries < 4 * CONFIGS; tries++) {
        random_case(&k, &r);
        brs_sampler *s = NULL;
        if (!case_sampler(&s, &k)) continue;
        checked += check(&k, s);
        brs_sampler_free(s);
    }
    CU_ASSERT(checked == CONFIGS);
}

/* ---- an epoch, encoded ------------------------------------------------------ */

/* A growing array of uint64: plans encoded for bit-exact comparison. */
typedef struct {
    uint64_t *data;
    size_t len, cap;
} enc_t;

static void enc_push(enc_t *e, uint64_t v)
{
    if (e->len == e->cap) {
        e->cap = e->cap ? 2 * e->cap : 256;
        e->data = realloc(e->data, e->cap * sizeof *e->data);
    }
    e->data[e->len++] = v;
}

/* Appends step (epoch, t): per slot its count, its indices and its padded
 * tokens; the compute's status (nothing appended on failure). */
static brs_status enc_step(enc_t *e, brs_plan *p, const brs_sampler *s, uint64_t epoch, uint64_t t)
{
    brs_status st = brs_plan_compute(p, s, epoch, t);
    if (st != BRS_OK) return st;
    bt_step step;
    if (!bt_step_load(&step, p)) return BRS_ERR_STATE;
    for (int64_t g = 0; g < step.k; g++) {
        enc_push(e, step.mb[g].count);
        for (size_t i = 0; i < step.mb[g].count; i++) enc_push(e, step.mb[g].indices[i]);
        enc_push(e, step.mb[g].padded);
    }
    bt_step_free(&step);
    return BRS_OK;
}

static bool enc_equal(const enc_t *a, const enc_t *b)
{
    return a->len == b->len &&
           (a->len == 0 || memcmp(a->data, b->data, a->len * sizeof *a->data) == 0);
}

/* The whole epoch into e; the first failing status, or BRS_OK. */
static brs_status enc_epoch(enc_t *e, const brs_sampler *s, uint64_t epoch)
{
    uint64_t steps = 0;
    brs_status st = brs_sampler_steps_per_epoch(&steps, (brs_sampler *)s);
    brs_plan *p = NULL;
    if (st == BRS_OK) st = brs_plan_new(&p);
    for (uint64_t t = 0; st == BRS_OK && t < steps; t++) st = enc_step(e, p, s, epoch, t);
    brs_plan_free(p);
    return st;
}

/* ---- properties ------------------------------------------------------------------ */

/* Coverage: every index once per epoch; drop_last drops only the N mod B
 * tail, keeping it adds only the top-up repeats K - r of a short last step.
 * A cap never applies here (it may refuse steps). */
static bool coverage_holds(const case_t *k, brs_sampler *s)
{
    const bt_config *c = &k->c;
    if (c->max_tokens != 0) BT_REQUIRE(brs_sampler_set_int(s, BRS_OPT_MAX_TOKENS, 0) == BRS_OK);
    bt_epoch e;
    BT_REQUIRE(bt_epoch_load(&e, s, bt_rng_below(&(bt_rng){(uint64_t)c->seed}, 5), true) == BRS_OK);
    unsigned count[MAX_N] = {0};
    size_t total = 0;
    for (uint64_t t = 0; t < e.steps; t++) {
        for (size_t j = 0; j < e.num[t]; j++) {
            BT_ASSERT(e.sorted[t][j] < c->n);
            count[e.sorted[t][j] % c->n]++;
        }
        total += e.num[t];
    }
    uint64_t b = global_batch(c), kk = micro_batches(c);
    uint64_t rest = c->n - (e.steps - 1) * b;
    uint64_t extra = !c->drop_last && rest < kk ? kk - rest : 0;
    size_t never = 0;
    for (size_t i = 0; i < c->n; i++) {
        never += count[i] == 0;
        if (c->drop_last)
            BT_ASSERT(count[i] <= 1);
        else
            BT_ASSERT(count[i] >= 1 && count[i] <= 2 + extra / c->n);
    }
    BT_ASSERT(total == (c->drop_last ? e.steps * b : c->n + extra));
    BT_ASSERT(never == (c->drop_last ? c->n - e.steps * b : 0));
    bt_epoch_free(&e);
    return true;
}

static void test_no_sample_lost_or_duplicated(void)
{
    for_cases(101, coverage_holds);
}

/* Every rank has grad_accum non-empty micro-batches per step, nothing past
 * them, the same steps per epoch and the same fingerprint whatever its rank. */
static bool equal_counts_hold(const case_t *k, brs_sampler *s)
{
    const bt_config *c = &k->c;
    BT_REQUIRE(brs_sampler_set_int(s, BRS_OPT_MAX_TOKENS, 0) == BRS_OK);
    uint64_t steps = 0, fp = 0;
    BT_REQUIRE(brs_sampler_steps_per_epoch(&steps, s) == BRS_OK);
    BT_REQUIRE(brs_sampler_fingerprint(&fp, s) == BRS_OK);
    for (int64_t r = 0; r < c->dp_size; r++) {
        uint64_t steps_r = 0, fp_r = 0;
        BT_REQUIRE(brs_sampler_set_int(s, BRS_OPT_RANK, r) == BRS_OK);
        BT_ASSERT(brs_sampler_steps_per_epoch(&steps_r, s) == BRS_OK && steps_r == steps);
        BT_ASSERT(brs_sampler_fingerprint(&fp_r, s) == BRS_OK && fp_r == fp);
    }
    brs_plan *p = NULL;
    BT_REQUIRE(brs_plan_new(&p) == BRS_OK);
    uint64_t t = bt_rng_below(&(bt_rng){(uint64_t)c->seed}, steps);
    bool ok = brs_plan_compute(p, s, 0, t) == BRS_OK;
    BT_ASSERT(ok);
    for (int64_t r = 0; ok && r < c->dp_size; r++) {
        const uint64_t *idx;
        size_t count;
        for (int64_t m = 0; m < c->grad_accum; m++)
            BT_ASSERT(brs_plan_micro_batch(&idx, &count, p, r, m) == BRS_OK && count >= 1);
        BT_ASSERT(brs_plan_micro_batch(&idx, &count, p, r, c->grad_accum) == BRS_ERR_OUT_OF_RANGE);
    }
    BT_ASSERT(brs_plan_micro_batch(&(const uint64_t *){0}, &(size_t){0}, p, c->dp_size, 0) ==
              BRS_ERR_OUT_OF_RANGE);
    brs_plan_free(p);
    return true;
}

static void test_every_rank_same_micro_batch_count(void)
{
    for_cases(202, equal_counts_hold);
}

static int cmp_u32_desc(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x < y) - (x > y);
}

/* A refused step is really infeasible: in padded mode the greedy probe is
 * exact (docs/algorithm.md), in packed mode tiny steps are searched. */
static void check_refusal(const bt_config *c, const brs_sampler *s, uint64_t t)
{
    bt_config free_cap = *c;
    free_cap.max_tokens = 0;
    brs_sampler *open = NULL;
    brs_plan *p = NULL;
    bt_step step;
    if (bt_sampler_new(&open, &free_cap) != BRS_OK || brs_plan_new(&p) != BRS_OK ||
        brs_plan_compute(p, open, 0, t) != BRS_OK || !bt_step_load(&step, p)) {
        BT_ASSERT(false);
    } else {
        uint32_t *desc = bt_step_lengths_desc(&step, c->lengths);
        qsort(desc, step.num_samples, sizeof *desc, cmp_u32_desc);
        bt_cost_model m = bt_cost_model_of(c);
        if (!c->packed)
            BT_ASSERT(bt_greedy_groups(desc, step.num_samples, &m, BT_NO_LIMIT,
                                       (uint64_t)c->max_tokens) > micro_batches(c));
        else if (step.num_samples <= 10)
            BT_ASSERT(!bt_brute_min_max(&(u128){0}, desc, step.num_samples, micro_batches(c), &m,
                                        (uint64_t)c->max_tokens));
        free(desc);
        bt_step_free(&step);
    }
    (void)s;
    brs_plan_free(p);
    brs_sampler_free(open);
}

/* The hard cap: every micro-batch within max_tokens (padded tokens, or
 * tokens when packed), or CAP_INFEASIBLE when no split can meet it. */
static bool cap_holds(const case_t *k, brs_sampler *s)
{
    bt_config capped = k->c;
    const bt_config *c = &capped;
    if (capped.max_tokens == 0) { /* every case of this property has a cap */
        uint32_t longest = 0;
        for (size_t i = 0; i < c->n; i++)
            longest = c->lengths[i] > longest ? c->lengths[i] : longest;
        capped.max_tokens = (int64_t)longest * (1 + (int64_t)(c->seed % 6));
        BT_REQUIRE(brs_sampler_set_int(s, BRS_OPT_MAX_TOKENS, capped.max_tokens) == BRS_OK);
    }
#if BRS_VERSION_NUMBER >= 10100
    /* the fixed-size baselines do not bend to the cap (include/brs.h) */
    BT_REQUIRE(brs_sampler_set_int(s, BRS_OPT_STRATEGY, BRS_STRATEGY_BALANCED) == BRS_OK);
#endif
    uint64_t steps = 0;
    BT_REQUIRE(brs_sampler_steps_per_epoch(&steps, s) == BRS_OK);
    brs_plan *p = NULL;
    BT_REQUIRE(brs_plan_new(&p) == BRS_OK);
    for (uint64_t t = 0; t < steps && t < 4; t++) {
        brs_status st = brs_plan_compute(p, s, 0, t);
        BT_ASSERT(st == BRS_OK || st == BRS_ERR_CAP_INFEASIBLE);
        if (st == BRS_ERR_CAP_INFEASIBLE) {
            check_refusal(c, s, t);
            continue;
        }
        for (int64_t r = 0; st == BRS_OK && r < c->dp_size; r++) {
            for (int64_t m = 0; m < c->grad_accum; m++) {
                uint64_t padded = 0, real = 0;
                double cost;
                BT_ASSERT(brs_plan_micro_batch_stats(&padded, &real, &cost, p, r, m) == BRS_OK);
                BT_ASSERT(padded <= (uint64_t)c->max_tokens);
            }
        }
    }
    brs_plan_free(p);
    return true;
}

static void test_hard_cap_never_exceeded(void)
{
    for_cases(303, cap_holds);
}

/* Two samplers built apart (one copying, one borrowing a separate copy of
 * the lengths) plan every step of an epoch identically. */
static bool same_plan_holds(const case_t *k, brs_sampler *s)
{
    uint32_t copy[MAX_N];
    memcpy(copy, k->lengths, k->c.n * sizeof *copy);
    bt_config c = k->c;
    c.lengths = copy;
    brs_sampler *other = NULL;
    BT_REQUIRE(bt_sampler_new(&other, &c) == BRS_OK);
    BT_REQUIRE(brs_sampler_set_lengths(other, copy, c.n, BRS_LENGTHS_BORROW) == BRS_OK);
#if BRS_VERSION_NUMBER >= 10100
    BT_REQUIRE(brs_sampler_set_int(other, BRS_OPT_STRATEGY, k->strategy) == BRS_OK);
#endif
    enc_t a = {0}, b = {0};
    uint64_t epoch = (uint64_t)k->c.seed % 7;
    brs_status sa = enc_epoch(&a, s, epoch), sb = enc_epoch(&b, other, epoch);
    BT_ASSERT(sa == sb && enc_equal(&a, &b));
    uint64_t fa = 0, fb = 1;
    BT_ASSERT(brs_sampler_fingerprint(&fa, s) == BRS_OK &&
              brs_sampler_fingerprint(&fb, other) == BRS_OK && fa == fb);
    free(a.data);
    free(b.data);
    brs_sampler_free(other);
    return true;
}

static void test_plan_identical_across_samplers(void)
{
    for_cases(404, same_plan_holds);
}

/* Plans of the first `count` cases of seed 505 into e (parent and child
 * run the same code, so a difference means process state leaked in). */
static void encode_cases(enc_t *e, size_t count)
{
    bt_rng r = {505};
    case_t k;
    for (size_t i = 0; i < count; i++) {
        random_case(&k, &r);
        brs_sampler *s = NULL;
        if (bt_sampler_new(&s, &k.c) != BRS_OK) continue;
        enc_push(e, (uint64_t)enc_epoch(e, s, i % 3));
        brs_sampler_free(s);
    }
}

/* Once per run: the same plans in a fork()ed process, sent back by a pipe. */
static void test_plan_identical_across_processes(void)
{
    enum { CASES = 300 };
    int fds[2];
    CU_ASSERT_FATAL(pipe(fds) == 0);
    pid_t child = fork();
    CU_ASSERT_FATAL(child >= 0);
    if (child == 0) {
        close(fds[0]);
        enc_t e = {0};
        encode_cases(&e, CASES);
        size_t bytes = e.len * sizeof *e.data;
        int ok = write(fds[1], &bytes, sizeof bytes) == (ssize_t)sizeof bytes;
        for (size_t off = 0; ok && off < bytes;) {
            ssize_t w = write(fds[1], (char *)e.data + off, bytes - off);
            ok = w > 0;
            off += ok ? (size_t)w : 0;
        }
        _exit(ok ? 0 : 1);
    }
    close(fds[1]);
    enc_t mine = {0}, theirs = {0};
    encode_cases(&mine, CASES);
    size_t bytes = 0;
    CU_ASSERT(read(fds[0], &bytes, sizeof bytes) == (ssize_t)sizeof bytes);
    theirs.data = malloc(bytes + 1);
    size_t got = 0;
    for (ssize_t r; got < bytes && (r = read(fds[0], (char *)theirs.data + got, bytes - got)) > 0;)
        got += (size_t)r;
    theirs.len = got / sizeof *theirs.data;
    close(fds[0]);
    int status = 0;
    CU_ASSERT(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CU_ASSERT(got == bytes && mine.len > CASES);
    CU_ASSERT(enc_equal(&mine, &theirs));
    free(mine.data);
    free(theirs.data);
}

/* Resume: step t of epoch e computed in a fresh plan equals step t computed
 * after other steps and epochs in the same plan. */
static bool resume_holds(const case_t *k, brs_sampler *s)
{
    uint64_t steps = 0;
    BT_REQUIRE(brs_sampler_steps_per_epoch(&steps, s) == BRS_OK);
    bt_rng r = {(uint64_t)k->c.seed};
    uint64_t epoch = bt_rng_below(&r, 4), t = bt_rng_below(&r, steps);
    brs_plan *cold = NULL, *warm = NULL;
    BT_REQUIRE(brs_plan_new(&cold) == BRS_OK && brs_plan_new(&warm) == BRS_OK);
    enc_t a = {0}, b = {0}, scratch = {0};
    brs_status sa = enc_step(&a, cold, s, epoch, t);
    for (int i = 0; i < 3; i++) {
        scratch.len = 0;
        (void)enc_step(&scratch, warm, s, epoch + bt_rng_below(&r, 2), bt_rng_below(&r, steps));
    }
    brs_status sb = enc_step(&b, warm, s, epoch, t);
    BT_ASSERT(sa == sb && enc_equal(&a, &b));
    free(a.data);
    free(b.data);
    free(scratch.data);
    brs_plan_free(cold);
    brs_plan_free(warm);
    return true;
}

static void test_resume_equals_uninterrupted(void)
{
    for_cases(606, resume_holds);
}

/* ---- fingerprint ------------------------------------------------------------------ */

/* The option keys: the library's table where it has one (LIBBRS_1.1), so
 * a new option is covered without editing this file. */
static size_t option_keys(brs_option *keys, size_t max)
{
#if BRS_VERSION_NUMBER >= 10100
    size_t count = 0;
    CU_ASSERT_FATAL(brs_option_count(&count) == BRS_OK && count <= max);
    for (size_t i = 0; i < count; i++) CU_ASSERT_FATAL(brs_option_key(&keys[i], i) == BRS_OK);
    return count;
#else
    size_t count = 0;
    for (brs_option key = BRS_OPT_BATCH_SIZE; key <= BRS_OPT_INTERCEPT && count < max; key++)
        keys[count++] = key;
    return count;
#endif
}

/* Sets key to another in-range value; false if it has a single value. */
static bool change_option(brs_sampler *s, brs_option key, bt_rng *r)
{
    int64_t lo, hi, now;
    if (brs_option_bounds_int(&lo, &hi, key) == BRS_OK) {
        BT_REQUIRE(brs_sampler_get_int(&now, s, key) == BRS_OK);
        if (lo == hi) return false;
        uint64_t span = (uint64_t)hi - (uint64_t)lo;
        int64_t v = now;
        while (v == now) v = lo + (int64_t)bt_rng_below(r, span < 64 ? span + 1 : 64);
        BT_REQUIRE(brs_sampler_set_int(s, key, v) == BRS_OK);
        return true;
    }
    /* Doubles resolve to 1e-6: a change is a different value read back. */
    double dlo, dhi, dnow, dv, got;
    BT_REQUIRE(brs_option_bounds_double(&dlo, &dhi, key) == BRS_OK);
    BT_REQUIRE(brs_sampler_get_double(&dnow, s, key) == BRS_OK);
    do {
        dv = dlo + (double)(1 + bt_rng_below(r, 4000)) * 1e-6;
        BT_REQUIRE(dv <= dhi && brs_sampler_set_double(s, key, dv) == BRS_OK);
        BT_REQUIRE(brs_sampler_get_double(&got, s, key) == BRS_OK);
    } while (got == dnow);
    return true;
}

/* Changing any one option except the rank changes the fingerprint;
 * changing the rank does not. */
static bool fingerprint_follows(const case_t *k, brs_sampler *s)
{
    brs_option keys[64];
    size_t count = option_keys(keys, 64);
    bt_rng r = {(uint64_t)k->c.seed ^ 0x5151};
    brs_option key = keys[bt_rng_below(&r, count)];
    uint64_t before = 0, after = 0;
    BT_REQUIRE(brs_sampler_fingerprint(&before, s) == BRS_OK);
    if (!change_option(s, key, &r)) return false;
    BT_REQUIRE(brs_sampler_fingerprint(&after, s) == BRS_OK);
    if (key == BRS_OPT_RANK)
        BT_ASSERT(after == before);
    else
        BT_ASSERT(after != before);
    return true;
}

static void test_fingerprint_follows_every_option_but_rank(void)
{
    for_cases(707, fingerprint_follows);
}

int main(int argc, char **argv)
{
    static const bt_test tests[] = {
        {"no sample lost or duplicated over an epoch", test_no_sample_lost_or_duplicated},
        {"every rank the same number of micro-batches", test_every_rank_same_micro_batch_count},
        {"hard cap never exceeded", test_hard_cap_never_exceeded},
        {"plan identical across samplers", test_plan_identical_across_samplers},
        {"plan identical across processes", test_plan_identical_across_processes},
        {"resume equals the uninterrupted run", test_resume_equals_uninterrupted},
        {"fingerprint follows every option but rank",
         test_fingerprint_follows_every_option_but_rank},
        {NULL, NULL},
    };
    return bt_run("properties", tests, argc - 1, argv + 1);
}
