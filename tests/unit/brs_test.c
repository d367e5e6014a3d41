/* brs_test.c - sampler factory, plan walking, RNG and CUnit runner. */
#include "brs_test.h"

#include <CUnit/Basic.h>

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- configuration and sampler factory --------------------------------- */

bt_config bt_config_default(const uint32_t *lengths, size_t n)
{
    bt_config c = {
        .lengths = lengths,
        .n = n,
        .batch_size = 8,
        .grad_accum = 1,
        .dp_size = 1,
        .rank = 0,
        .seed = 0,
        .shuffle = 1,
        .drop_last = 1,
        .max_tokens = 0,
        .packed = 0,
        .alpha = 0.001,
        .intercept = 0.0,
    };
    return c;
}

brs_status bt_sampler_new(brs_sampler **out, const bt_config *c)
{
    const struct {
        brs_option key;
        int64_t value;
    } ints[] = {
        {BRS_OPT_BATCH_SIZE, c->batch_size},
        {BRS_OPT_GRAD_ACCUM, c->grad_accum},
        {BRS_OPT_DP_SIZE, c->dp_size},
        {BRS_OPT_RANK, c->rank},
        {BRS_OPT_SEED, c->seed},
        {BRS_OPT_SHUFFLE, c->shuffle},
        {BRS_OPT_DROP_LAST, c->drop_last},
        {BRS_OPT_MAX_TOKENS, c->max_tokens},
        {BRS_OPT_PACKED, c->packed},
    };
    brs_sampler *s = NULL;
    brs_status st = brs_sampler_new(&s);
    if (st == BRS_OK) st = brs_sampler_set_lengths(s, c->lengths, c->n, BRS_LENGTHS_COPY);
    for (size_t i = 0; st == BRS_OK && i < sizeof ints / sizeof ints[0]; i++)
        st = brs_sampler_set_int(s, ints[i].key, ints[i].value);
#ifdef BRS_OPT_SYNC
    if (st == BRS_OK && c->sync) st = brs_sampler_set_int(s, BRS_OPT_SYNC, c->sync);
#endif
    if (st == BRS_OK) st = brs_sampler_set_double(s, BRS_OPT_ALPHA, c->alpha);
    if (st == BRS_OK) st = brs_sampler_set_double(s, BRS_OPT_INTERCEPT, c->intercept);
    if (st != BRS_OK) {
        brs_sampler_free(s);
        s = NULL;
    }
    *out = s;
    return st;
}

/* ---- cost model ---------------------------------------------------------- */

bt_cost_model bt_cost_model_of(const bt_config *c)
{
    bt_cost_model m = {
        .alpha_micro = (uint64_t)llround(c->alpha * 1e6),
        .intercept_micro = (uint64_t)llround(c->intercept * 1e6),
        .packed = c->packed != 0,
    };
    return m;
}

u128 bt_cost_padded(const bt_cost_model *m, uint64_t bs, uint64_t longest)
{
    u128 tokens = (u128)bs * longest;
    return m->intercept_micro + tokens * 1000000u + (u128)m->alpha_micro * tokens * longest;
}

u128 bt_cost_packed(const bt_cost_model *m, uint64_t sum, u128 sum_sq)
{
    return m->intercept_micro + (u128)sum * 1000000u + (u128)m->alpha_micro * sum_sq;
}

double bt_to_cost(u128 micro)
{
    return (double)((long double)micro / 1e6L);
}

bool bt_close(double got, double want)
{
    double scale = fabs(want) > 1.0 ? fabs(want) : 1.0;
    return fabs(got - want) <= 1e-12 * scale;
}

bool bt_le(double a, double b)
{
    return a <= b || bt_close(a, b);
}

/* ---- one computed step --------------------------------------------------- */

bool bt_step_load(bt_step *s, const brs_plan *p)
{
    memset(s, 0, sizeof *s);
    s->dp = bt_plan_int(p, BRS_PLAN_DP_SIZE);
    s->ga = bt_plan_int(p, BRS_PLAN_GRAD_ACCUM);
    BT_REQUIRE(s->dp >= 1 && s->ga >= 1);
    s->k = s->dp * s->ga;
    s->mb = calloc((size_t)s->k, sizeof *s->mb);
    BT_REQUIRE(s->mb != NULL);
    for (int64_t r = 0; r < s->dp; r++) {
        for (int64_t m = 0; m < s->ga; m++) {
            bt_micro *mb = &s->mb[r * s->ga + m];
            BT_REQUIRE(brs_plan_micro_batch(&mb->indices, &mb->count, p, r, m) == BRS_OK);
            BT_REQUIRE(brs_plan_micro_batch_stats(&mb->padded, &mb->real, &mb->cost, p, r, m) ==
                       BRS_OK);
            s->num_samples += mb->count;
        }
    }
    return true;
}

void bt_step_free(bt_step *s)
{
    free(s->mb);
    s->mb = NULL;
}

static int cmp_u32_desc(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x < y) - (x > y);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

uint32_t *bt_step_lengths_desc(const bt_step *s, const uint32_t *lengths)
{
    uint32_t *out = malloc((s->num_samples + 1) * sizeof *out);
    size_t j = 0;
    for (int64_t g = 0; g < s->k; g++)
        for (size_t i = 0; i < s->mb[g].count; i++) out[j++] = lengths[s->mb[g].indices[i]];
    qsort(out, j, sizeof *out, cmp_u32_desc);
    return out;
}

uint64_t *bt_step_indices_sorted(const bt_step *s)
{
    uint64_t *out = malloc((s->num_samples + 1) * sizeof *out);
    size_t j = 0;
    for (int64_t g = 0; g < s->k; g++)
        for (size_t i = 0; i < s->mb[g].count; i++) out[j++] = s->mb[g].indices[i];
    qsort(out, j, sizeof *out, cmp_u64);
    return out;
}

/* ---- a whole epoch ------------------------------------------------------- */

/* Appends the plan's step to the epoch's arrays at slot t. */
static bool epoch_store(bt_epoch *e, uint64_t t, const brs_plan *p)
{
    bt_step s;
    BT_REQUIRE(bt_step_load(&s, p));
    size_t len = 0;
    uint64_t *enc = malloc((s.num_samples + (size_t)s.k) * sizeof *enc);
    for (int64_t g = 0; g < s.k; g++) {
        enc[len++] = s.mb[g].count;
        memcpy(enc + len, s.mb[g].indices, s.mb[g].count * sizeof *enc);
        len += s.mb[g].count;
    }
    e->enc[t] = enc;
    e->enc_len[t] = len;
    e->num[t] = s.num_samples;
    e->sorted[t] = bt_step_indices_sorted(&s);
    bt_step_free(&s);
    return true;
}

static uint64_t gcd(uint64_t x, uint64_t y)
{
    while (y) {
        uint64_t r = x % y;
        x = y;
        y = r;
    }
    return x;
}

/* The i-th step of a fixed scrambled visiting order of 0..steps-1:
 * t = (i * a + steps / 2) mod steps with a coprime to steps. */
static uint64_t scrambled_step(uint64_t i, uint64_t steps)
{
    uint64_t a = 7919;
    while (gcd(a, steps) != 1) a++;
    return (i * a + steps / 2) % steps;
}

brs_status bt_epoch_load(bt_epoch *e, const brs_sampler *s, uint64_t epoch, bool scrambled)
{
    memset(e, 0, sizeof *e);
    brs_status st = brs_sampler_steps_per_epoch(&e->steps, (brs_sampler *)s);
    if (st != BRS_OK) return st;
    e->enc = calloc(e->steps, sizeof *e->enc);
    e->sorted = calloc(e->steps, sizeof *e->sorted);
    e->enc_len = calloc(e->steps, sizeof *e->enc_len);
    e->num = calloc(e->steps, sizeof *e->num);
    brs_plan *p = NULL;
    st = brs_plan_new(&p);
    for (uint64_t i = 0; st == BRS_OK && i < e->steps; i++) {
        uint64_t t = scrambled ? scrambled_step(i, e->steps) : i;
        st = brs_plan_compute(p, s, epoch, t);
        if (st == BRS_OK && !epoch_store(e, t, p)) st = BRS_ERR_STATE;
    }
    brs_plan_free(p);
    return st;
}

void bt_epoch_free(bt_epoch *e)
{
    for (uint64_t t = 0; t < e->steps; t++) {
        if (e->enc) free(e->enc[t]);
        if (e->sorted) free(e->sorted[t]);
    }
    free(e->enc);
    free(e->sorted);
    free(e->enc_len);
    free(e->num);
    memset(e, 0, sizeof *e);
}

bool bt_epoch_equal(const bt_epoch *a, const bt_epoch *b)
{
    if (a->steps != b->steps) return false;
    for (uint64_t t = 0; t < a->steps; t++) {
        if (a->enc_len[t] != b->enc_len[t] ||
            memcmp(a->enc[t], b->enc[t], a->enc_len[t] * sizeof *a->enc[t]) != 0)
            return false;
    }
    return true;
}

bool bt_epoch_sets_differ(const bt_epoch *a, const bt_epoch *b)
{
    if (a->steps != b->steps) return true;
    for (uint64_t t = 0; t < a->steps; t++) {
        if (a->num[t] != b->num[t] ||
            memcmp(a->sorted[t], b->sorted[t], a->num[t] * sizeof *a->sorted[t]) != 0)
            return true;
    }
    return false;
}

/* ---- small utilities ------------------------------------------------------ */

uint64_t bt_rng_next(bt_rng *r)
{
    /* SplitMix64: tiny, seedable, good enough to draw test cases. */
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t bt_rng_below(bt_rng *r, uint64_t n)
{
    return n ? bt_rng_next(r) % n : 0;
}

double bt_rng_normal(bt_rng *r)
{
    double u1 = ((double)(bt_rng_next(r) >> 11) + 1.0) / 9007199254740993.0;
    double u2 = (double)(bt_rng_next(r) >> 11) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

uint32_t bt_lognormal(bt_rng *r, double mu, double sigma, uint32_t lo, uint32_t hi)
{
    double x = round(exp(mu + sigma * bt_rng_normal(r)));
    if (x < lo) return lo;
    if (x > hi) return hi;
    return (uint32_t)x;
}

bool bt_has_number(const char *msg, uint64_t value)
{
    char want[32];
    snprintf(want, sizeof want, "%" PRIu64, value);
    size_t len = strlen(want);
    for (const char *p = msg; (p = strstr(p, want)) != NULL; p++) {
        bool starts = p == msg || !isdigit((unsigned char)p[-1]);
        bool ends = !isdigit((unsigned char)p[len]);
        if (starts && ends) return true;
    }
    return false;
}

double bt_plan_double(const brs_plan *p, brs_plan_key key)
{
    double v = NAN;
    BT_ASSERT(brs_plan_get_double(&v, p, key) == BRS_OK);
    return v;
}

int64_t bt_plan_int(const brs_plan *p, brs_plan_key key)
{
    int64_t v = -1;
    BT_ASSERT(brs_plan_get_int(&v, p, key) == BRS_OK);
    return v;
}

static char case_text[512];
static bool case_printed;

void bt_set_case(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(case_text, sizeof case_text, fmt, ap);
    va_end(ap);
    case_printed = false;
}

void bt_print_case(void)
{
    if (!case_printed && case_text[0]) fprintf(stderr, "\n  failing case: %s\n", case_text);
    case_printed = true;
}

/* Whether the command line selects the test called name. */
static bool selected(const char *name, int argc, char **argv)
{
    for (int i = 0; i + 1 < argc; i += 2) {
        bool match = strstr(name, argv[i + 1]) != NULL;
        if ((strcmp(argv[i], "-t") == 0 && !match) || (strcmp(argv[i], "-x") == 0 && match))
            return false;
    }
    return true;
}

int bt_run(const char *suite, const bt_test *tests, int argc, char **argv)
{
    if (argc % 2 != 0) {
        fprintf(stderr, "usage: [-t TEXT | -x TEXT]...\n");
        return 2;
    }
    if (CU_initialize_registry() != CUE_SUCCESS) return 99;
    CU_pSuite s = CU_add_suite(suite, NULL, NULL);
    for (const bt_test *t = tests; s && t->name; t++)
        if (selected(t->name, argc, argv)) CU_add_test(s, t->name, t->fn);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures();
    unsigned ran = CU_get_number_of_tests_run();
    CU_cleanup_registry();
    if (CU_get_error() != CUE_SUCCESS) return 99;
    return failed == 0 && ran > 0 ? 0 : 1;
}

uint32_t *bt_lognormal_lengths(size_t n, uint64_t seed)
{
    bt_rng r = {seed};
    uint32_t *len = malloc(n * sizeof *len);
    for (size_t i = 0; i < n; i++) len[i] = bt_lognormal(&r, 5.0, 1.0, 16, 1024);
    return len;
}
