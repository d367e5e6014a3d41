/* test_options.c - the option table (brs_option_*): every key is named,
 * found by its name, typed, has a default within its bounds and help, the
 * named values are those of brs.h, and every option but the rank changes
 * the fingerprint (a key left out of the fingerprint fails here). */
#include "brs_test.h"

#include <stdlib.h>
#include <string.h>

static size_t option_count(void)
{
    size_t count = 0;
    CU_ASSERT_FATAL(brs_option_count(&count) == BRS_OK);
    return count;
}

static brs_option option_key(size_t index)
{
    brs_option key = 0;
    CU_ASSERT_FATAL(brs_option_key(&key, index) == BRS_OK);
    return key;
}

static void test_every_key_described(void)
{
    size_t count = option_count();
    CU_ASSERT(count >= 13); /* the 13 of 1.1 (names of the spec below) */
    brs_option seen[64] = {0};
    for (size_t i = 0; i < count && i < 64; i++) {
        brs_option key = option_key(i), found = -1;
        const char *name = NULL, *help = NULL;
        int32_t type = -1;
        bt_set_case("option index %zu (key %d)", i, (int)key);
        BT_ASSERT(brs_option_name(&name, key) == BRS_OK && name && *name);
        BT_ASSERT(brs_option_help(&help, key) == BRS_OK && help && strlen(help) > 10);
        BT_ASSERT(brs_option_find(&found, name) == BRS_OK && found == key);
        BT_ASSERT(brs_option_type(&type, key) == BRS_OK);
        for (size_t j = 0; j < i; j++) BT_ASSERT(seen[j] != key);
        seen[i] = key;
        brs_sampler *s = NULL;
        CU_ASSERT_FATAL(brs_sampler_new(&s) == BRS_OK);
        if (type == BRS_OPTION_INT) {
            int64_t def = -1, lo = 0, hi = 0, held = -2;
            double unused;
            BT_ASSERT(brs_option_default_int(&def, key) == BRS_OK);
            BT_ASSERT(brs_option_bounds_int(&lo, &hi, key) == BRS_OK && lo <= def && def <= hi);
            BT_ASSERT(brs_sampler_get_int(&held, s, key) == BRS_OK && held == def);
            BT_ASSERT(brs_option_default_double(&unused, key) == BRS_ERR_UNSUPPORTED);
        } else {
            double def = -1, lo = 0, hi = 0, held = -2;
            int64_t unused;
            BT_ASSERT(type == BRS_OPTION_DOUBLE);
            BT_ASSERT(brs_option_default_double(&def, key) == BRS_OK);
            BT_ASSERT(brs_option_bounds_double(&lo, &hi, key) == BRS_OK && lo <= def && def <= hi);
            BT_ASSERT(brs_sampler_get_double(&held, s, key) == BRS_OK && held == def);
            BT_ASSERT(brs_option_default_int(&unused, key) == BRS_ERR_UNSUPPORTED);
        }
        brs_sampler_free(s);
    }
    brs_option key;
    CU_ASSERT(brs_option_key(&key, count) == BRS_ERR_OUT_OF_RANGE);
    CU_ASSERT(brs_option_find(&key, "per_device_batch_size") == BRS_ERR_UNSUPPORTED);
    CU_ASSERT(brs_option_find(&key, "") == BRS_ERR_UNSUPPORTED);
    CU_ASSERT(brs_option_find(NULL, "seed") == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_option_find(&key, NULL) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_option_count(NULL) == BRS_ERR_NULL_POINTER);
}

static void test_names_of_the_spec(void)
{
    static const struct {
        brs_option key;
        const char *name;
    } names[] = {{BRS_OPT_BATCH_SIZE, "batch_size"},
                 {BRS_OPT_GRAD_ACCUM, "grad_accum"},
                 {BRS_OPT_DP_SIZE, "dp_size"},
                 {BRS_OPT_RANK, "rank"},
                 {BRS_OPT_SEED, "seed"},
                 {BRS_OPT_SHUFFLE, "shuffle"},
                 {BRS_OPT_DROP_LAST, "drop_last"},
                 {BRS_OPT_MAX_TOKENS, "max_tokens"},
                 {BRS_OPT_PACKED, "packed"},
                 {BRS_OPT_ALPHA, "alpha"},
                 {BRS_OPT_INTERCEPT, "intercept"},
                 {BRS_OPT_STRATEGY, "strategy"},
                 {BRS_OPT_SYNC, "sync"},
                 {BRS_OPT_PAD_TO_MULTIPLE_OF, "pad_to_multiple_of"},
                 {BRS_OPT_ENCODER_ALPHA, "encoder_alpha"},
                 {BRS_OPT_ENCODER_INTERCEPT, "encoder_intercept"},
                 {BRS_OPT_MAX_ENCODER_TOKENS, "max_encoder_tokens"},
                 {BRS_OPT_ENCODER_WEIGHT, "encoder_weight"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *name = NULL;
        bt_set_case("key %d", (int)names[i].key);
        BT_ASSERT(brs_option_name(&name, names[i].key) == BRS_OK &&
                  strcmp(name, names[i].name) == 0);
    }
    const char *name = NULL;
    CU_ASSERT(brs_option_name(&name, 0) == BRS_ERR_UNSUPPORTED);
    CU_ASSERT(brs_option_name(&name, BRS_OPT_CP_LATENCY + 1) == BRS_ERR_UNSUPPORTED);
}

static void expect_value(brs_option key, int64_t value, const char *want)
{
    const char *name = NULL;
    bt_set_case("key %d value %lld", (int)key, (long long)value);
    BT_ASSERT(brs_option_value_name(&name, key, value) == BRS_OK && name &&
              strcmp(name, want) == 0);
}

static void test_value_names(void)
{
    expect_value(BRS_OPT_STRATEGY, BRS_STRATEGY_BALANCED, "balanced");
    expect_value(BRS_OPT_STRATEGY, BRS_STRATEGY_RANDOM, "random");
    expect_value(BRS_OPT_STRATEGY, BRS_STRATEGY_LENGTH_GROUPED, "length_grouped");
    expect_value(BRS_OPT_SYNC, BRS_SYNC_MICRO_STEP, "micro_step");
    expect_value(BRS_OPT_SYNC, BRS_SYNC_STEP, "step");
    const char *name = NULL;
    CU_ASSERT(brs_option_value_name(&name, BRS_OPT_STRATEGY, 3) == BRS_ERR_OUT_OF_RANGE);
    CU_ASSERT(brs_option_value_name(&name, BRS_OPT_STRATEGY, -1) == BRS_ERR_OUT_OF_RANGE);
    CU_ASSERT(brs_option_value_name(&name, BRS_OPT_SYNC, 2) == BRS_ERR_OUT_OF_RANGE);
    const brs_option plain[] = {BRS_OPT_SHUFFLE,    BRS_OPT_DROP_LAST, BRS_OPT_PACKED,
                                BRS_OPT_BATCH_SIZE, BRS_OPT_ALPHA,     999};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        CU_ASSERT(brs_option_value_name(&name, plain[i], 0) == BRS_ERR_UNSUPPORTED);
    CU_ASSERT(brs_option_value_name(NULL, BRS_OPT_SYNC, 0) == BRS_ERR_NULL_POINTER);
    /* an out-of-range strategy is refused with the value names */
    brs_sampler *s = NULL;
    CU_ASSERT_FATAL(brs_sampler_new(&s) == BRS_OK);
    CU_ASSERT(brs_sampler_set_int(s, BRS_OPT_STRATEGY, 3) == BRS_ERR_OUT_OF_RANGE);
    CU_ASSERT(strstr(brs_sampler_last_error(s), "length_grouped") != NULL);
    CU_ASSERT(brs_sampler_set_int(s, BRS_OPT_SYNC, 2) == BRS_ERR_OUT_OF_RANGE);
    CU_ASSERT(strstr(brs_sampler_last_error(s), "micro_step") != NULL);
    brs_sampler_free(s);
}

static uint64_t fingerprint(const brs_sampler *s)
{
    uint64_t fp = 0;
    CU_ASSERT_FATAL(brs_sampler_fingerprint(&fp, s) == BRS_OK);
    return fp;
}

/* Another valid value of the option: the default moved one step (or 0.5
 * for a double) inside the bounds. */
static void set_other_value(brs_sampler *s, brs_option key)
{
    int32_t type = -1;
    CU_ASSERT_FATAL(brs_option_type(&type, key) == BRS_OK);
    if (type == BRS_OPTION_INT) {
        int64_t def, lo, hi;
        CU_ASSERT_FATAL(brs_option_default_int(&def, key) == BRS_OK);
        CU_ASSERT_FATAL(brs_option_bounds_int(&lo, &hi, key) == BRS_OK);
        CU_ASSERT_FATAL(brs_sampler_set_int(s, key, def < hi ? def + 1 : lo) == BRS_OK);
    } else {
        double def, lo, hi;
        CU_ASSERT_FATAL(brs_option_default_double(&def, key) == BRS_OK);
        CU_ASSERT_FATAL(brs_option_bounds_double(&lo, &hi, key) == BRS_OK);
        CU_ASSERT_FATAL(brs_sampler_set_double(s, key, def + 0.5 <= hi ? def + 0.5 : lo) == BRS_OK);
    }
}

static void test_every_option_but_rank_fingerprinted(void)
{
    uint32_t lengths[64];
    for (size_t i = 0; i < 64; i++) lengths[i] = (uint32_t)(1 + (i * 37) % 200);
    brs_sampler *base = NULL;
    CU_ASSERT_FATAL(brs_sampler_new(&base) == BRS_OK);
    CU_ASSERT_FATAL(brs_sampler_set_lengths(base, lengths, 64, BRS_LENGTHS_COPY) == BRS_OK);
    uint64_t base_fp = fingerprint(base);
    size_t count = option_count();
    uint64_t seen[64];
    size_t changed = 0;
    for (size_t i = 0; i < count; i++) {
        brs_option key = option_key(i);
        brs_sampler *s = NULL;
        CU_ASSERT_FATAL(brs_sampler_new(&s) == BRS_OK);
        CU_ASSERT_FATAL(brs_sampler_set_lengths(s, lengths, 64, BRS_LENGTHS_COPY) == BRS_OK);
        set_other_value(s, key);
        uint64_t fp = fingerprint(s);
        bt_set_case("option key %d", (int)key);
        if (key == BRS_OPT_RANK) {
            BT_ASSERT(fp == base_fp); /* ranks of one job agree on it */
        } else {
            BT_ASSERT(fp != base_fp);
            for (size_t j = 0; j < changed; j++) BT_ASSERT(fp != seen[j]);
            if (changed < 64) seen[changed++] = fp;
        }
        brs_sampler_free(s);
    }
    brs_sampler_free(base);
}

int main(int argc, char **argv)
{
    static const bt_test tests[] = {
        {"every key described", test_every_key_described},
        {"names of the spec", test_names_of_the_spec},
        {"value names", test_value_names},
        {"every option but rank fingerprinted", test_every_option_but_rank_fingerprinted},
        {NULL, NULL},
    };
    return bt_run("options", tests, argc - 1, argv + 1);
}
