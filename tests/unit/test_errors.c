/* test_errors.c - every error path of brs.h: NULL pointers, status strings,
 * option bounds and keys, bad lengths and configurations, plan states,
 * versions. */
#include "brs_test.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint32_t small[] = {5, 3, 9, 2, 7, 7, 1, 4, 8, 6, 3, 2, 9, 5, 4, 1,
                                 6, 8, 2, 3, 7, 5, 9, 4, 1, 2, 6, 3, 8, 7, 5, 4};
#define SMALL_N (sizeof small / sizeof small[0])

/* A sampler over `small` (K = 2, B = 8) and a plan of its step 0. */
static void ready_handles(brs_sampler **s, brs_plan **p)
{
    bt_config c = bt_config_default(small, SMALL_N);
    c.batch_size = 4;
    c.dp_size = 2;
    CU_ASSERT_FATAL(bt_sampler_new(s, &c) == BRS_OK);
    CU_ASSERT_FATAL(brs_plan_new(p) == BRS_OK);
    CU_ASSERT_FATAL(brs_plan_compute(*p, *s, 0, 0) == BRS_OK);
}

static bool nonempty(const char *msg)
{
    return msg != NULL && msg[0] != '\0';
}

/* ---- NULL pointers --------------------------------------------------------- */

static void test_null_sampler_functions(void)
{
    brs_sampler *s;
    brs_plan *p;
    ready_handles(&s, &p);
    int64_t i64 = 0, lo = 0, hi = 0;
    uint64_t u64 = 0;
    double d = 0, dlo = 0, dhi = 0;
    CU_ASSERT(brs_option_bounds_int(NULL, &hi, BRS_OPT_BATCH_SIZE) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_option_bounds_int(&lo, NULL, BRS_OPT_BATCH_SIZE) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_option_bounds_double(NULL, &dhi, BRS_OPT_ALPHA) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_option_bounds_double(&dlo, NULL, BRS_OPT_ALPHA) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_sampler_new(NULL) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_sampler_set_lengths(NULL, small, SMALL_N, BRS_LENGTHS_COPY) ==
              BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_sampler_set_lengths(s, NULL, SMALL_N, BRS_LENGTHS_COPY) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_sampler_set_int(NULL, BRS_OPT_SEED, 1) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_sampler_set_double(NULL, BRS_OPT_ALPHA, 0.5) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_sampler_get_int(NULL, s, BRS_OPT_SEED) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_sampler_get_int(&i64, NULL, BRS_OPT_SEED) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_sampler_get_double(NULL, s, BRS_OPT_ALPHA) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_sampler_get_double(&d, NULL, BRS_OPT_ALPHA) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_sampler_validate(NULL) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_sampler_steps_per_epoch(NULL, s) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_sampler_steps_per_epoch(&u64, NULL) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_sampler_fingerprint(NULL, s) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_sampler_fingerprint(&u64, NULL) == BRS_ERR_NULL_POINTER);
    /* the handles are still usable after refusing NULL arguments */
    CU_ASSERT(brs_sampler_validate(s) == BRS_OK);
    brs_plan_free(p);
    brs_sampler_free(s);
}

static void test_null_plan_functions(void)
{
    brs_sampler *s;
    brs_plan *p;
    ready_handles(&s, &p);
    int64_t i64 = 0;
    double d = 0, cost = 0;
    const uint64_t *idx = NULL;
    size_t cnt = 0;
    uint64_t padded = 0, real = 0;
    CU_ASSERT(brs_plan_new(NULL) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_plan_compute(NULL, s, 0, 0) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_plan_compute(p, NULL, 0, 0) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_plan_compute(p, s, 0, 0) == BRS_OK);
    CU_ASSERT(brs_plan_get_int(NULL, p, BRS_PLAN_STEP) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_plan_get_int(&i64, NULL, BRS_PLAN_STEP) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_plan_get_double(NULL, p, BRS_PLAN_MAX_COST) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_plan_get_double(&d, NULL, BRS_PLAN_MAX_COST) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_plan_micro_batch(NULL, &cnt, p, 0, 0) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_plan_micro_batch(&idx, NULL, p, 0, 0) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_plan_micro_batch(&idx, &cnt, NULL, 0, 0) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_plan_micro_batch_stats(NULL, &real, &cost, p, 0, 0) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_plan_micro_batch_stats(&padded, NULL, &cost, p, 0, 0) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_plan_micro_batch_stats(&padded, &real, NULL, p, 0, 0) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_plan_micro_batch_stats(&padded, &real, &cost, NULL, 0, 0) ==
              BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_plan_micro_batch(&idx, &cnt, p, 0, 0) == BRS_OK && cnt >= 1);
    brs_plan_free(p);
    brs_sampler_free(s);
}

static void test_free_null_and_static_messages(void)
{
    brs_sampler_free(NULL);
    brs_plan_free(NULL);
    const char *a = brs_sampler_last_error(NULL), *b = brs_plan_last_error(NULL);
    CU_ASSERT(nonempty(a) && nonempty(b));
    CU_ASSERT(brs_sampler_last_error(NULL) == a); /* static, not per call */
    CU_ASSERT(brs_plan_last_error(NULL) == b);
    brs_sampler *s = NULL;
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_sampler_new(&s) == BRS_OK && brs_plan_new(&p) == BRS_OK);
    CU_ASSERT(strcmp(brs_sampler_last_error(s), "") == 0); /* nothing failed yet */
    CU_ASSERT(strcmp(brs_plan_last_error(p), "") == 0);
    brs_plan_free(p);
    brs_sampler_free(s);
}

/* ---- status strings -------------------------------------------------------- */

static void test_strerror_distinct_and_unknown(void)
{
    const char *seen[12];
    for (int32_t code = 0; code >= -11; code--) {
        const char *msg = brs_strerror(code);
        CU_ASSERT(nonempty(msg));
        seen[-code] = msg ? msg : "";
        for (int32_t j = 0; j < -code; j++) CU_ASSERT(strcmp(seen[j], seen[-code]) != 0);
    }
    const int32_t unknown[] = {1, -12, -999, INT32_MIN, INT32_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *msg = brs_strerror(unknown[i]);
        CU_ASSERT(msg != NULL && strstr(msg, "unknown") != NULL);
        for (int j = 0; msg && j < 12; j++) CU_ASSERT(strcmp(seen[j], msg) != 0);
    }
}

/* ---- options: bounds, keys, types ----------------------------------------- */

static const brs_option int_keys[] = {BRS_OPT_BATCH_SIZE, BRS_OPT_GRAD_ACCUM, BRS_OPT_DP_SIZE,
                                      BRS_OPT_RANK,       BRS_OPT_SEED,       BRS_OPT_SHUFFLE,
                                      BRS_OPT_DROP_LAST,  BRS_OPT_MAX_TOKENS, BRS_OPT_PACKED};
#define INT_KEYS (sizeof int_keys / sizeof int_keys[0])
static const brs_option double_keys[] = {BRS_OPT_ALPHA, BRS_OPT_INTERCEPT};

/* A refused value leaves the option as it was and explains itself. */
static void expect_refused_int(brs_sampler *s, brs_option key, int64_t value)
{
    int64_t before = 0, after = 0;
    CU_ASSERT(brs_sampler_get_int(&before, s, key) == BRS_OK);
    bt_set_case("int option %d value %" PRId64, (int)key, value);
    BT_ASSERT(brs_sampler_set_int(s, key, value) == BRS_ERR_OUT_OF_RANGE);
    BT_ASSERT(nonempty(brs_sampler_last_error(s)));
    CU_ASSERT(brs_sampler_get_int(&after, s, key) == BRS_OK);
    BT_ASSERT(after == before);
}

static void expect_refused_double(brs_sampler *s, brs_option key, double value)
{
    double before = 0, after = 0;
    CU_ASSERT(brs_sampler_get_double(&before, s, key) == BRS_OK);
    bt_set_case("double option %d value %g", (int)key, value);
    BT_ASSERT(brs_sampler_set_double(s, key, value) == BRS_ERR_OUT_OF_RANGE);
    BT_ASSERT(nonempty(brs_sampler_last_error(s)));
    CU_ASSERT(brs_sampler_get_double(&after, s, key) == BRS_OK);
    BT_ASSERT(after == before);
}

static void test_int_option_bounds(void)
{
    brs_sampler *s = NULL;
    CU_ASSERT_FATAL(brs_sampler_new(&s) == BRS_OK);
    for (size_t i = 0; i < INT_KEYS; i++) {
        int64_t lo = 1, hi = 0;
        CU_ASSERT(brs_option_bounds_int(&lo, &hi, int_keys[i]) == BRS_OK);
        CU_ASSERT(lo <= hi);
        if (lo > INT64_MIN) expect_refused_int(s, int_keys[i], lo - 1);
        if (hi < INT64_MAX) expect_refused_int(s, int_keys[i], hi + 1);
        expect_refused_int(s, int_keys[i], INT64_MIN);
        CU_ASSERT(brs_sampler_set_int(s, int_keys[i], lo) == BRS_OK);
        CU_ASSERT(brs_sampler_set_int(s, int_keys[i], hi) == BRS_OK);
    }
    /* documented bounds */
    int64_t lo, hi;
    CU_ASSERT(brs_option_bounds_int(&lo, &hi, BRS_OPT_SEED) == BRS_OK && lo == 0 &&
              hi == INT64_MAX);
    const brs_option flags[] = {BRS_OPT_SHUFFLE, BRS_OPT_DROP_LAST, BRS_OPT_PACKED};
    for (size_t i = 0; i < 3; i++)
        CU_ASSERT(brs_option_bounds_int(&lo, &hi, flags[i]) == BRS_OK && lo == 0 && hi == 1);
    const brs_option at_least_one[] = {BRS_OPT_BATCH_SIZE, BRS_OPT_GRAD_ACCUM, BRS_OPT_DP_SIZE};
    for (size_t i = 0; i < 3; i++)
        CU_ASSERT(brs_option_bounds_int(&lo, &hi, at_least_one[i]) == BRS_OK && lo == 1);
    CU_ASSERT(brs_option_bounds_int(&lo, &hi, BRS_OPT_RANK) == BRS_OK && lo == 0);
    CU_ASSERT(brs_option_bounds_int(&lo, &hi, BRS_OPT_MAX_TOKENS) == BRS_OK && lo == 0);
    brs_sampler_free(s);
}

static void test_double_option_bounds(void)
{
    brs_sampler *s = NULL;
    CU_ASSERT_FATAL(brs_sampler_new(&s) == BRS_OK);
    double lo = 1, hi = 0;
    CU_ASSERT(brs_option_bounds_double(&lo, &hi, BRS_OPT_ALPHA) == BRS_OK && lo == 0 && hi == 1000);
    CU_ASSERT(brs_option_bounds_double(&lo, &hi, BRS_OPT_INTERCEPT) == BRS_OK && lo == 0 &&
              hi == 1e12);
    CU_ASSERT(brs_sampler_set_double(s, BRS_OPT_ALPHA, 0.25) == BRS_OK);
    expect_refused_double(s, BRS_OPT_ALPHA, -0.001);
    expect_refused_double(s, BRS_OPT_ALPHA, 1000.001);
    expect_refused_double(s, BRS_OPT_ALPHA, NAN);
    expect_refused_double(s, BRS_OPT_ALPHA, INFINITY);
    expect_refused_double(s, BRS_OPT_ALPHA, -INFINITY);
    CU_ASSERT(brs_sampler_set_double(s, BRS_OPT_INTERCEPT, 2.5) == BRS_OK);
    expect_refused_double(s, BRS_OPT_INTERCEPT, -1.0);
    expect_refused_double(s, BRS_OPT_INTERCEPT, 1.001e12);
    expect_refused_double(s, BRS_OPT_INTERCEPT, NAN);
    expect_refused_double(s, BRS_OPT_INTERCEPT, INFINITY);
    CU_ASSERT(brs_sampler_set_double(s, BRS_OPT_ALPHA, 0) == BRS_OK);
    CU_ASSERT(brs_sampler_set_double(s, BRS_OPT_ALPHA, 1000) == BRS_OK);
    CU_ASSERT(brs_sampler_set_double(s, BRS_OPT_INTERCEPT, 1e12) == BRS_OK);
    brs_sampler_free(s);
}

static void test_unknown_keys_unsupported(void)
{
    brs_sampler *s;
    brs_plan *p;
    ready_handles(&s, &p);
    const int32_t unknown[] = {0, -1, BRS_OPT_CP_LATENCY + 1, 999, INT32_MAX, INT32_MIN};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        int32_t key = unknown[i];
        int64_t v = 0, lo, hi;
        double d = 0, dlo, dhi;
        bt_set_case("unknown key %d", (int)key);
        BT_ASSERT(brs_sampler_set_int(s, key, 1) == BRS_ERR_UNSUPPORTED);
        BT_ASSERT(nonempty(brs_sampler_last_error(s)));
        BT_ASSERT(brs_sampler_set_double(s, key, 1.0) == BRS_ERR_UNSUPPORTED);
        BT_ASSERT(brs_sampler_get_int(&v, s, key) == BRS_ERR_UNSUPPORTED);
        BT_ASSERT(brs_sampler_get_double(&d, s, key) == BRS_ERR_UNSUPPORTED);
        BT_ASSERT(brs_option_bounds_int(&lo, &hi, key) == BRS_ERR_UNSUPPORTED);
        BT_ASSERT(brs_option_bounds_double(&dlo, &dhi, key) == BRS_ERR_UNSUPPORTED);
        /* the first unknown option is a plan key */
        if (key >= BRS_PLAN_MAX_COST && key <= BRS_PLAN_WAITING_TIME) continue;
        BT_ASSERT(brs_plan_get_int(&v, p, key) == BRS_ERR_UNSUPPORTED);
        BT_ASSERT(brs_plan_get_double(&d, p, key) == BRS_ERR_UNSUPPORTED);
    }
    int64_t v;
    double d;
    CU_ASSERT(brs_plan_get_int(&v, p, 14) == BRS_ERR_UNSUPPORTED); /* gap in the keys */
    CU_ASSERT(brs_plan_get_double(&d, p, BRS_PLAN_WAITING_TIME + 1) == BRS_ERR_UNSUPPORTED);
    brs_plan_free(p);
    brs_sampler_free(s);
}

/* An int key through the double functions (and back) is unsupported and
 * changes nothing. */
static void test_int_double_key_mismatch(void)
{
    brs_sampler *s;
    brs_plan *p;
    ready_handles(&s, &p);
    int64_t v = 0, lo, hi;
    double d = 0, dlo, dhi;
    for (size_t i = 0; i < INT_KEYS; i++) {
        int64_t before = 0, after = 1;
        bt_set_case("int key %d as double", (int)int_keys[i]);
        CU_ASSERT(brs_sampler_get_int(&before, s, int_keys[i]) == BRS_OK);
        BT_ASSERT(brs_sampler_set_double(s, int_keys[i], 1.0) == BRS_ERR_UNSUPPORTED);
        BT_ASSERT(brs_sampler_get_double(&d, s, int_keys[i]) == BRS_ERR_UNSUPPORTED);
        BT_ASSERT(brs_option_bounds_double(&dlo, &dhi, int_keys[i]) == BRS_ERR_UNSUPPORTED);
        CU_ASSERT(brs_sampler_get_int(&after, s, int_keys[i]) == BRS_OK);
        BT_ASSERT(before == after);
    }
    for (size_t i = 0; i < 2; i++) {
        double before = 0, after = 1;
        bt_set_case("double key %d as int", (int)double_keys[i]);
        CU_ASSERT(brs_sampler_get_double(&before, s, double_keys[i]) == BRS_OK);
        BT_ASSERT(brs_sampler_set_int(s, double_keys[i], 1) == BRS_ERR_UNSUPPORTED);
        BT_ASSERT(brs_sampler_get_int(&v, s, double_keys[i]) == BRS_ERR_UNSUPPORTED);
        BT_ASSERT(brs_option_bounds_int(&lo, &hi, double_keys[i]) == BRS_ERR_UNSUPPORTED);
        CU_ASSERT(brs_sampler_get_double(&after, s, double_keys[i]) == BRS_OK);
        BT_ASSERT(before == after);
    }
    const brs_plan_key int_plan[] = {1, 2, 3, 4, 5, 6, 7, 8};
    const brs_plan_key double_plan[] = {20, 21, 22, 23, 24, 25};
    for (size_t i = 0; i < 8; i++) {
        CU_ASSERT(brs_plan_get_int(&v, p, int_plan[i]) == BRS_OK);
        CU_ASSERT(brs_plan_get_double(&d, p, int_plan[i]) == BRS_ERR_UNSUPPORTED);
    }
    for (size_t i = 0; i < 6; i++) {
        CU_ASSERT(brs_plan_get_double(&d, p, double_plan[i]) == BRS_OK);
        CU_ASSERT(brs_plan_get_int(&v, p, double_plan[i]) == BRS_ERR_UNSUPPORTED);
    }
    brs_plan_free(p);
    brs_sampler_free(s);
}

/* ---- lengths ---------------------------------------------------------------- */

static void test_zero_length_names_index(void)
{
    brs_sampler *s = NULL;
    CU_ASSERT_FATAL(brs_sampler_new(&s) == BRS_OK);
    CU_ASSERT(brs_sampler_set_lengths(s, small, SMALL_N, BRS_LENGTHS_COPY) == BRS_OK);
    uint64_t before = 0, after = 1;
    CU_ASSERT(brs_sampler_fingerprint(&before, s) == BRS_OK);
    const size_t bad_at[] = {0, 2, 17, SMALL_N - 1};
    for (size_t i = 0; i < 4; i++) {
        uint32_t len[SMALL_N];
        memcpy(len, small, sizeof len);
        len[bad_at[i]] = 0;
        if (bad_at[i] != 17) len[17] = 0; /* the first bad index is the one named */
        size_t first = bad_at[i] < 17 ? bad_at[i] : 17;
        bt_set_case("zero length at %zu", bad_at[i]);
        BT_ASSERT(brs_sampler_set_lengths(s, len, SMALL_N, BRS_LENGTHS_COPY) ==
                  BRS_ERR_INVALID_LENGTH);
        BT_ASSERT(bt_has_number(brs_sampler_last_error(s), first));
        BT_ASSERT(brs_sampler_set_lengths(s, len, SMALL_N, BRS_LENGTHS_BORROW) ==
                  BRS_ERR_INVALID_LENGTH);
    }
    CU_ASSERT(brs_sampler_fingerprint(&after, s) == BRS_OK);
    CU_ASSERT(before == after); /* the previous lengths were kept */
    CU_ASSERT(brs_sampler_set_lengths(s, small, 0, BRS_LENGTHS_COPY) == BRS_ERR_INVALID_ARGUMENT);
    CU_ASSERT(brs_sampler_set_lengths(s, small, SMALL_N, 2) == BRS_ERR_INVALID_ARGUMENT);
    CU_ASSERT(brs_sampler_set_lengths(s, small, SMALL_N, -1) == BRS_ERR_INVALID_ARGUMENT);
    CU_ASSERT(brs_sampler_fingerprint(&after, s) == BRS_OK && before == after);
    brs_sampler_free(s);
}

static void test_no_lengths_is_a_state_error(void)
{
    brs_sampler *s = NULL;
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_sampler_new(&s) == BRS_OK && brs_plan_new(&p) == BRS_OK);
    uint64_t u = 0;
    CU_ASSERT(brs_sampler_validate(s) == BRS_ERR_STATE);
    CU_ASSERT(brs_sampler_steps_per_epoch(&u, s) == BRS_ERR_STATE);
    CU_ASSERT(brs_sampler_fingerprint(&u, s) == BRS_ERR_STATE);
    CU_ASSERT(brs_plan_compute(p, s, 0, 0) == BRS_ERR_STATE);
    CU_ASSERT(nonempty(brs_plan_last_error(p)));
    brs_plan_free(p);
    brs_sampler_free(s);
}

/* ---- configuration errors ---------------------------------------------------- */

/* The status of validate, steps_per_epoch and compute (all must agree),
 * with the plan's message copied to msg. */
static brs_status config_status(const bt_config *c, char *msg, size_t size)
{
    brs_sampler *s = NULL;
    brs_plan *p = NULL;
    brs_status st = bt_sampler_new(&s, c);
    BT_ASSERT(st == BRS_OK);
    if (st != BRS_OK) return st;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    uint64_t steps = 0;
    brs_status v = brs_sampler_validate(s);
    BT_ASSERT(v == BRS_OK || nonempty(brs_sampler_last_error(s)));
    BT_ASSERT(brs_sampler_steps_per_epoch(&steps, s) == v);
    st = brs_plan_compute(p, s, 0, 0);
    snprintf(msg, size, "%s", brs_plan_last_error(p));
    if (v != BRS_OK) BT_ASSERT(st == v && nonempty(msg));
    brs_plan_free(p);
    brs_sampler_free(s);
    return st;
}

static void test_too_few_samples(void)
{
    char msg[512];
    bt_config c = bt_config_default(small, 10);
    c.batch_size = 8;
    c.dp_size = 2; /* B = 16 > N = 10 */
    bt_set_case("too few samples");
    BT_ASSERT(config_status(&c, msg, sizeof msg) == BRS_ERR_TOO_FEW_SAMPLES);
    c.drop_last = 0; /* a topped-up partial step is fine */
    BT_ASSERT(config_status(&c, msg, sizeof msg) == BRS_OK);
}

static void test_rank_outside_dp_size(void)
{
    char msg[512];
    bt_config c = bt_config_default(small, SMALL_N);
    c.batch_size = 2;
    c.dp_size = 2;
    c.rank = 2; /* accepted by the setter, refused when planning */
    bt_set_case("rank 2 of 2");
    BT_ASSERT(config_status(&c, msg, sizeof msg) == BRS_ERR_OUT_OF_RANGE);
    c.rank = 1;
    BT_ASSERT(config_status(&c, msg, sizeof msg) == BRS_OK);
}

static void test_sample_longer_than_cap(void)
{
    char msg[512];
    bt_config c = bt_config_default(small, SMALL_N);
    c.batch_size = 2;
    c.max_tokens = 8; /* two samples are 9 long */
    bt_set_case("sample above max_tokens");
    BT_ASSERT(config_status(&c, msg, sizeof msg) == BRS_ERR_SAMPLE_TOO_LONG);
    c.max_tokens = 9;
    BT_ASSERT(config_status(&c, msg, sizeof msg) != BRS_ERR_SAMPLE_TOO_LONG);
    c.packed = 1;
    c.max_tokens = 8;
    BT_ASSERT(config_status(&c, msg, sizeof msg) == BRS_ERR_SAMPLE_TOO_LONG);
}

/* Above BRS_MAX_STEP_SAMPLES or BRS_MAX_MICRO_BATCHES: TOO_LARGE (where the
 * option bounds let us build such a configuration at all). */
static void test_limits_too_large(void)
{
    char msg[512];
    int64_t lo, p_hi, dp_hi;
    CU_ASSERT_FATAL(brs_option_bounds_int(&lo, &p_hi, BRS_OPT_BATCH_SIZE) == BRS_OK);
    CU_ASSERT_FATAL(brs_option_bounds_int(&lo, &dp_hi, BRS_OPT_DP_SIZE) == BRS_OK);
    bt_config c = bt_config_default(small, SMALL_N);
    c.drop_last = 0;
    int tried = 0;
    if (p_hi >= BRS_MAX_STEP_SAMPLES / 2) {
        c.batch_size = BRS_MAX_STEP_SAMPLES / 2;
        c.dp_size = 3;
        tried++;
        bt_set_case("B above the limit");
        BT_ASSERT(config_status(&c, msg, sizeof msg) == BRS_ERR_TOO_LARGE);
    }
    if (dp_hi * 2 > BRS_MAX_MICRO_BATCHES) {
        c.batch_size = 1;
        c.dp_size = dp_hi;
        c.grad_accum = 2;
        tried++;
        bt_set_case("K above the limit");
        BT_ASSERT(config_status(&c, msg, sizeof msg) == BRS_ERR_TOO_LARGE);
    }
    CU_ASSERT(tried == 2); /* the bounds allow both configurations */
}

/* K micro-batches cannot meet the cap: the message names the fewest that
 * would, which the greedy probe computes independently. */
static void test_cap_infeasible_names_minimum(void)
{
    static uint32_t flat[10] = {100, 100, 100, 100, 100, 100, 100, 100, 100, 100};
    char msg[512];
    bt_config c = bt_config_default(flat, 10);
    c.batch_size = 5;
    c.dp_size = 2;
    c.max_tokens = 300; /* at most 3 per micro-batch: 4 needed, K = 2 */
    bt_set_case("flat cap");
    BT_ASSERT(config_status(&c, msg, sizeof msg) == BRS_ERR_CAP_INFEASIBLE);
    BT_ASSERT(bt_has_number(msg, 4));
    c.batch_size = 3;
    c.grad_accum = 2;
    c.drop_last = 0; /* the same 10 samples, K = 4: 4 micro-batches fit */
    BT_ASSERT(config_status(&c, msg, sizeof msg) == BRS_OK);

    bt_rng r = {3};
    for (int i = 0; i < 50; i++) {
        uint32_t len[64];
        for (size_t j = 0; j < 64; j++) len[j] = 1 + (uint32_t)bt_rng_below(&r, 500);
        bt_config d = bt_config_default(len, 64);
        d.batch_size = 16;
        d.dp_size = 2;
        d.grad_accum = 2; /* one step of all 64 samples, K = 4 */
        d.shuffle = i % 2;
        d.max_tokens = 500 + (int64_t)bt_rng_below(&r, 4000);
        uint32_t desc[64];
        memcpy(desc, len, sizeof desc);
        for (size_t a = 1; a < 64; a++) /* insertion sort, longest first */
            for (size_t b = a; b > 0 && desc[b] > desc[b - 1]; b--) {
                uint32_t t = desc[b];
                desc[b] = desc[b - 1];
                desc[b - 1] = t;
            }
        bt_cost_model m = bt_cost_model_of(&d);
        uint64_t need = bt_greedy_groups(desc, 64, &m, BT_NO_LIMIT, (uint64_t)d.max_tokens);
        bt_set_case("random cap %" PRId64 " needs %" PRIu64, d.max_tokens, need);
        brs_status st = config_status(&d, msg, sizeof msg);
        BT_ASSERT(st == (need <= 4 ? BRS_OK : BRS_ERR_CAP_INFEASIBLE));
        if (need > 4) BT_ASSERT(bt_has_number(msg, need));
    }
}

/* ---- plan states --------------------------------------------------------------- */

static void expect_no_step(const brs_plan *p)
{
    int64_t v;
    double d;
    const uint64_t *idx;
    size_t cnt;
    uint64_t padded, real;
    BT_ASSERT(brs_plan_get_int(&v, p, BRS_PLAN_STEP) == BRS_ERR_STATE);
    BT_ASSERT(brs_plan_get_double(&d, p, BRS_PLAN_MAX_COST) == BRS_ERR_STATE);
    BT_ASSERT(brs_plan_micro_batch(&idx, &cnt, p, 0, 0) == BRS_ERR_STATE);
    BT_ASSERT(brs_plan_micro_batch_stats(&padded, &real, &d, p, 0, 0) == BRS_ERR_STATE);
}

static void test_plan_states(void)
{
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    bt_set_case("fresh plan");
    expect_no_step(p);
    brs_plan_free(p);

    brs_sampler *s;
    ready_handles(&s, &p);
    uint64_t steps = 0;
    CU_ASSERT(brs_sampler_steps_per_epoch(&steps, s) == BRS_OK && steps == SMALL_N / 8);
    CU_ASSERT(brs_plan_compute(p, s, 0, steps - 1) == BRS_OK);
    int64_t v = -1;
    CU_ASSERT(brs_plan_get_int(&v, p, BRS_PLAN_STEP) == BRS_OK && v == (int64_t)steps - 1);
    CU_ASSERT(brs_plan_get_int(&v, p, BRS_PLAN_EPOCH) == BRS_OK && v == 0);
    const uint64_t *idx;
    size_t cnt;
    uint64_t padded, real;
    double d;
    CU_ASSERT(brs_plan_micro_batch(&idx, &cnt, p, 2, 0) == BRS_ERR_OUT_OF_RANGE);
    CU_ASSERT(brs_plan_micro_batch_stats(&padded, &real, &d, p, 0, 1) == BRS_ERR_OUT_OF_RANGE);
    CU_ASSERT(brs_plan_micro_batch_stats(&padded, &real, &d, p, -1, 0) == BRS_ERR_OUT_OF_RANGE);
    CU_ASSERT(brs_plan_compute(p, s, 0, steps) == BRS_ERR_OUT_OF_RANGE);
    CU_ASSERT(nonempty(brs_plan_last_error(p)));
    bt_set_case("after a failed compute");
    expect_no_step(p); /* the earlier step is gone */
    CU_ASSERT(brs_plan_compute(p, s, 0, UINT64_MAX) == BRS_ERR_OUT_OF_RANGE);
    CU_ASSERT(brs_plan_compute(p, s, UINT64_MAX, 0) == BRS_OK); /* any epoch */
    /* a plan outlives its sampler */
    brs_sampler_free(s);
    CU_ASSERT(brs_plan_micro_batch(&idx, &cnt, p, 1, 0) == BRS_OK && cnt >= 1 && idx[0] < SMALL_N);
    brs_plan_free(p);
}

/* ---- versions ---------------------------------------------------------------- */

static void test_version_consistent(void)
{
    CU_ASSERT(BRS_VERSION_NUMBER ==
              BRS_VERSION_MAJOR * 10000 + BRS_VERSION_MINOR * 100 + BRS_VERSION_PATCH);
    CU_ASSERT(brs_version_number() == BRS_VERSION_NUMBER);
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", BRS_VERSION_MAJOR, BRS_VERSION_MINOR,
             BRS_VERSION_PATCH);
    const char *got = brs_version_string();
    CU_ASSERT(got != NULL && strcmp(got, want) == 0);
}

/* ---- every failing call writes its own handle's message ----------------------- */

/* One failing call on a handle and a phrase its message must contain. */
typedef struct {
    const char *what;
    brs_status want;
    const char *phrase;
} fresh_case;

static void expect_fresh(const fresh_case *c, brs_status got, const char *message,
                         const char *stale)
{
    bt_set_case("%s", c->what);
    BT_ASSERT(got == c->want);
    BT_ASSERT(strstr(message, c->phrase) != NULL);
    BT_ASSERT(strstr(message, stale) == NULL);
}

/* Before each call a different failure (rank = -5) sets the message; the
 * call must replace it by its own, read-only calls included. */
static void test_sampler_messages_never_stale(void)
{
    brs_sampler *s, *bare = NULL;
    brs_plan *p;
    ready_handles(&s, &p);
    CU_ASSERT_FATAL(brs_sampler_new(&bare) == BRS_OK);
    int64_t v;
    double d;
    uint64_t u;
    static const fresh_case cases[] = {
        {"get_int unknown key", BRS_ERR_UNSUPPORTED, "unknown option key 999"},
        {"get_int of a double option", BRS_ERR_UNSUPPORTED, "alpha is a double option"},
        {"get_double of an int option", BRS_ERR_UNSUPPORTED, "seed is an integer option"},
        {"get_int NULL out", BRS_ERR_NULL_POINTER, "out is NULL"},
        {"fingerprint NULL out", BRS_ERR_NULL_POINTER, "out is NULL"},
        {"set_double below the resolution", BRS_ERR_OUT_OF_RANGE, "resolution 1e-06"},
        {"set_int strategy out of range", BRS_ERR_OUT_OF_RANGE, "strategy = 7"},
        {"set_lengths NULL", BRS_ERR_NULL_POINTER, "lengths is NULL"},
        {"validate rank >= dp_size", BRS_ERR_OUT_OF_RANGE, "rank 3 is out of range for dp_size 2"},
        {"steps_per_epoch NULL out", BRS_ERR_NULL_POINTER, "out is NULL"},
    };
    brs_status got[sizeof cases / sizeof cases[0]];
    size_t i = 0;
#define STALE_THEN(call)                                                             \
    do {                                                                             \
        CU_ASSERT(brs_sampler_set_int(s, BRS_OPT_RANK, -5) == BRS_ERR_OUT_OF_RANGE); \
        got[i] = (call);                                                             \
        expect_fresh(&cases[i], got[i], brs_sampler_last_error(s), "rank = -5");     \
        i++;                                                                         \
    } while (0)
    STALE_THEN(brs_sampler_get_int(&v, s, 999));
    STALE_THEN(brs_sampler_get_int(&v, s, BRS_OPT_ALPHA));
    STALE_THEN(brs_sampler_get_double(&d, s, BRS_OPT_SEED));
    STALE_THEN(brs_sampler_get_int(NULL, s, BRS_OPT_SEED));
    STALE_THEN(brs_sampler_fingerprint(NULL, s));
    STALE_THEN(brs_sampler_set_double(s, BRS_OPT_ALPHA, 1e-7));
    STALE_THEN(brs_sampler_set_int(s, BRS_OPT_STRATEGY, 7));
    STALE_THEN(brs_sampler_set_lengths(s, NULL, 3, BRS_LENGTHS_COPY));
    CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_RANK, 3) == BRS_OK);
    STALE_THEN(brs_sampler_validate(s));
    STALE_THEN(brs_sampler_steps_per_epoch(NULL, s));
#undef STALE_THEN
    /* a sampler without lengths: the fingerprint says why */
    CU_ASSERT(brs_sampler_set_int(bare, BRS_OPT_RANK, -5) == BRS_ERR_OUT_OF_RANGE);
    fresh_case no_lengths = {"fingerprint without lengths", BRS_ERR_STATE, "no lengths"};
    expect_fresh(&no_lengths, brs_sampler_fingerprint(&u, bare), brs_sampler_last_error(bare),
                 "rank = -5");
    brs_sampler_free(bare);
    brs_plan_free(p);
    brs_sampler_free(s);
}

static void test_plan_messages_never_stale(void)
{
    brs_sampler *s;
    brs_plan *p, *idle = NULL;
    ready_handles(&s, &p);
    CU_ASSERT_FATAL(brs_plan_new(&idle) == BRS_OK);
    int64_t v;
    double d;
    const uint64_t *mb;
    size_t count;
    uint64_t padded, real, indices[] = {0, 1}, counts[] = {1, 1};
    static const fresh_case cases[] = {
        {"get_int unknown key", BRS_ERR_UNSUPPORTED, "99 is not a key"},
        {"get_double of an int key", BRS_ERR_UNSUPPORTED, "brs_plan_get_double"},
        {"get_int NULL out", BRS_ERR_NULL_POINTER, "out-parameter is NULL"},
        {"micro_batch rank out of range", BRS_ERR_OUT_OF_RANGE, "rank 2 is out of range"},
        {"micro_batch micro out of range", BRS_ERR_OUT_OF_RANGE, "micro-step 1 is out of range"},
        {"micro_batch_stats rank out of range", BRS_ERR_OUT_OF_RANGE, "rank 5"},
        {"load the wrong number of micro-batches", BRS_ERR_INVALID_ARGUMENT,
         "num_micro_batches = 1"},
        {"compute step out of range", BRS_ERR_OUT_OF_RANGE, "step 1000 is out of range"},
        {"get_int after a failed compute", BRS_ERR_STATE, "holds no step"},
    };
    size_t i = 0;
#define STALE_THEN(call)                                                  \
    do {                                                                  \
        CU_ASSERT(brs_plan_micro_batch(&mb, &count, p, -9, 0) != BRS_OK); \
        brs_status got_ = (call);                                         \
        expect_fresh(&cases[i], got_, brs_plan_last_error(p), "rank -9"); \
        i++;                                                              \
    } while (0)
    STALE_THEN(brs_plan_get_int(&v, p, 99));
    STALE_THEN(brs_plan_get_double(&d, p, BRS_PLAN_STEP));
    STALE_THEN(brs_plan_get_int(NULL, p, BRS_PLAN_STEP));
    STALE_THEN(brs_plan_micro_batch(&mb, &count, p, 2, 0));
    STALE_THEN(brs_plan_micro_batch(&mb, &count, p, 0, 1));
    STALE_THEN(brs_plan_micro_batch_stats(&padded, &real, &d, p, 5, 0));
    STALE_THEN(brs_plan_load(p, s, indices, counts, 1, 0, 0));
    CU_ASSERT_FATAL(brs_plan_compute(p, s, 0, 0) == BRS_OK);
    STALE_THEN(brs_plan_compute(p, s, 0, 1000));
    STALE_THEN(brs_plan_get_int(&v, p, BRS_PLAN_STEP));
#undef STALE_THEN
    /* a plan that never held a step */
    fresh_case never = {"micro_batch on a new plan", BRS_ERR_STATE, "holds no step"};
    expect_fresh(&never, brs_plan_micro_batch(&mb, &count, idle, 0, 0), brs_plan_last_error(idle),
                 "rank -9");
    brs_plan_free(idle);
    brs_plan_free(p);
    brs_sampler_free(s);
}

/* ---- a borrowed array changed after set_lengths: an error, never a crash ---- */

static void test_borrowed_lengths_changed(void)
{
    enum { N = 100 };
    uint32_t a[N];
    for (size_t i = 0; i < N; i++) a[i] = 10;
    brs_sampler *s = NULL;
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_sampler_new(&s) == BRS_OK && brs_plan_new(&p) == BRS_OK);
    CU_ASSERT_FATAL(brs_sampler_set_lengths(s, a, N, BRS_LENGTHS_BORROW) == BRS_OK);
    CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_BATCH_SIZE, 4) == BRS_OK);
    CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_MAX_TOKENS, 100) == BRS_OK);
    for (int64_t strategy = 0; strategy <= BRS_STRATEGY_LENGTH_GROUPED; strategy++) {
        CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_STRATEGY, strategy) == BRS_OK);
        for (int packed = 0; packed <= 1; packed++) {
            CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_PACKED, packed) == BRS_OK);
            bt_set_case("strategy %lld packed %d", (long long)strategy, packed);
            for (size_t i = 0; i < N; i++) a[i] = 0; /* used to divide by zero */
            BT_ASSERT(brs_plan_compute(p, s, 0, 0) == BRS_ERR_INVALID_LENGTH);
            BT_ASSERT(strstr(brs_plan_last_error(p), "is 0") != NULL);
            for (size_t i = 0; i < N; i++) a[i] = UINT32_MAX; /* used to loop forever */
            BT_ASSERT(brs_plan_compute(p, s, 0, 0) == BRS_ERR_SAMPLE_TOO_LONG);
            BT_ASSERT(strstr(brs_plan_last_error(p), "above max_tokens 100") != NULL);
            /* one changed sample: exactly the step that draws it fails, naming it */
            for (size_t i = 0; i < N; i++) a[i] = 10;
            a[17] = 0;
            size_t failed = 0;
            for (uint64_t t = 0; t < N / 4; t++) {
                brs_status st = brs_plan_compute(p, s, 3, t);
                if (st != BRS_OK) {
                    failed++;
                    BT_ASSERT(st == BRS_ERR_INVALID_LENGTH);
                    BT_ASSERT(strstr(brs_plan_last_error(p), "lengths[17] is 0") != NULL);
                }
            }
            BT_ASSERT(failed == 1);
            a[17] = 10;
        }
    }
    /* without a cap, zeros used to give a plan of 0 padded tokens */
    CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_MAX_TOKENS, 0) == BRS_OK);
    CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_STRATEGY, BRS_STRATEGY_BALANCED) == BRS_OK);
    for (size_t i = 0; i < N; i++) a[i] = 0;
    CU_ASSERT(brs_plan_compute(p, s, 0, 0) == BRS_ERR_INVALID_LENGTH);
    for (size_t i = 0; i < N; i++) a[i] = UINT32_MAX; /* no cap: a valid, huge plan */
    CU_ASSERT(brs_plan_compute(p, s, 0, 0) == BRS_OK);
    brs_plan_free(p);
    brs_sampler_free(s);
}

int main(int argc, char **argv)
{
    static const bt_test tests[] = {
        {"NULL to sampler functions", test_null_sampler_functions},
        {"NULL to plan functions", test_null_plan_functions},
        {"free(NULL) and static NULL-handle messages", test_free_null_and_static_messages},
        {"strerror distinct, unknown status", test_strerror_distinct_and_unknown},
        {"int option bounds", test_int_option_bounds},
        {"double option bounds", test_double_option_bounds},
        {"unknown keys unsupported", test_unknown_keys_unsupported},
        {"int/double key mismatch", test_int_double_key_mismatch},
        {"zero length names its index", test_zero_length_names_index},
        {"no lengths: state error", test_no_lengths_is_a_state_error},
        {"too few samples", test_too_few_samples},
        {"rank outside dp_size", test_rank_outside_dp_size},
        {"sample longer than max_tokens", test_sample_longer_than_cap},
        {"limits: too large", test_limits_too_large},
        {"cap infeasible names the minimum count", test_cap_infeasible_names_minimum},
        {"plan states", test_plan_states},
        {"version number and string", test_version_consistent},
        {"sampler messages never stale", test_sampler_messages_never_stale},
        {"plan messages never stale", test_plan_messages_never_stale},
        {"borrowed lengths changed after set_lengths", test_borrowed_lengths_changed},
        {NULL, NULL},
    };
    return bt_run("errors", tests, argc - 1, argv + 1);
}
