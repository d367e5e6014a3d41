/*
 * test_stream_fingerprint.c - brs_sampler_stream_fingerprint: equal for
 * samplers that split the same stream differently among ranks and
 * micro-steps, different when the stream itself changes (include/brs.h).
 */
#include "brs_test.h"

#include <stdlib.h>
#include <string.h>

/* Global batch 16 as dp_size x batch_size x grad_accum = 2 x 4 x 2. */
static bt_config split_2x4x2(const uint32_t *len, size_t n)
{
    bt_config c = bt_config_default(len, n);
    c.dp_size = 2;
    c.batch_size = 4;
    c.grad_accum = 2;
    return c;
}

static uint64_t stream_fingerprint_of(const bt_config *c)
{
    brs_sampler *s = NULL;
    uint64_t fp = 0;
    BT_ASSERT(bt_sampler_new(&s, c) == BRS_OK);
    BT_ASSERT(s && brs_sampler_stream_fingerprint(&fp, s) == BRS_OK);
    brs_sampler_free(s);
    return fp;
}

/* The same global batch of 16 split four other ways, the rank and the sync
 * model: one stream. */
static void test_split_is_left_out(void)
{
    size_t n = 400;
    uint32_t *len = bt_lognormal_lengths(n, 17);
    bt_config c = split_2x4x2(len, n);
    uint64_t base = stream_fingerprint_of(&c);
    bt_config split[5];
    for (size_t i = 0; i < 5; i++) split[i] = c;
    split[0].dp_size = 4, split[0].grad_accum = 1;
    split[1].dp_size = 1, split[1].batch_size = 8;
    split[2].dp_size = 1, split[2].batch_size = 2, split[2].grad_accum = 8;
    split[3].rank = 1;
    split[4].sync = BRS_SYNC_STEP;
    for (size_t i = 0; i < 5; i++) {
        bt_set_case("split %zu", i);
        BT_ASSERT(stream_fingerprint_of(&split[i]) == base);
    }
    free(len);
}

/* Another seed, lengths, shuffle or drop_last: another stream. */
static void test_stream_changes_are_in(void)
{
    size_t n = 400;
    uint32_t *len = bt_lognormal_lengths(n, 17);
    bt_config c = split_2x4x2(len, n);
    uint64_t base = stream_fingerprint_of(&c);
    bt_config changed[3];
    for (size_t i = 0; i < 3; i++) changed[i] = c;
    changed[0].seed = 1;
    changed[1].shuffle = 0;
    changed[2].drop_last = 0;
    for (size_t i = 0; i < 3; i++) {
        bt_set_case("stream option %zu", i);
        BT_ASSERT(stream_fingerprint_of(&changed[i]) != base);
    }
    len[n / 2]++;
    CU_ASSERT(stream_fingerprint_of(&c) != base);
    bt_config shorter = c;
    shorter.n = n - 1;
    CU_ASSERT(stream_fingerprint_of(&shorter) != base);
    free(len);
}

/* What the equality promises: every step draws the same samples. */
static void test_equal_streams_draw_the_same_steps(void)
{
    size_t n = 400;
    uint32_t *len = bt_lognormal_lengths(n, 29);
    bt_config a = split_2x4x2(len, n), b = a;
    b.dp_size = 1, b.batch_size = 2, b.grad_accum = 8;
    BT_ASSERT(stream_fingerprint_of(&a) == stream_fingerprint_of(&b));
    brs_sampler *sa = NULL, *sb = NULL;
    bt_epoch ea = {0}, eb = {0};
    BT_ASSERT(bt_sampler_new(&sa, &a) == BRS_OK && bt_sampler_new(&sb, &b) == BRS_OK);
    BT_ASSERT(bt_epoch_load(&ea, sa, 3, false) == BRS_OK);
    BT_ASSERT(bt_epoch_load(&eb, sb, 3, false) == BRS_OK);
    CU_ASSERT(!bt_epoch_sets_differ(&ea, &eb));
    bt_epoch_free(&ea);
    bt_epoch_free(&eb);
    brs_sampler_free(sa);
    brs_sampler_free(sb);
    free(len);
}

/* The errors of brs_sampler_fingerprint, with this function's name. */
static void test_errors(void)
{
    brs_sampler *s = NULL;
    uint64_t out = 0;
    CU_ASSERT(brs_sampler_stream_fingerprint(&out, NULL) == BRS_ERR_NULL_POINTER);
    CU_ASSERT_FATAL(brs_sampler_new(&s) == BRS_OK);
    CU_ASSERT(brs_sampler_stream_fingerprint(&out, s) == BRS_ERR_STATE);
    static const uint32_t lengths[] = {3, 1, 2};
    CU_ASSERT_FATAL(brs_sampler_set_lengths(s, lengths, 3, BRS_LENGTHS_COPY) == BRS_OK);
    CU_ASSERT(brs_sampler_stream_fingerprint(NULL, s) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(strstr(brs_sampler_last_error(s), "brs_sampler_stream_fingerprint: out is NULL") !=
              NULL);
    brs_sampler_free(s);
}

int main(int argc, char **argv)
{
    static const bt_test tests[] = {
        {"the split among ranks and micro-steps is left out", test_split_is_left_out},
        {"seed, lengths, shuffle and drop_last are in", test_stream_changes_are_in},
        {"equal stream fingerprints draw the same steps", test_equal_streams_draw_the_same_steps},
        {"errors", test_errors},
        {NULL, NULL},
    };
    return bt_run("stream_fingerprint", tests, argc - 1, argv + 1);
}
