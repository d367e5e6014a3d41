/*
 * fuzz_api.c - libFuzzer harness of the public C API (include/brs.h).
 *
 * The input is a program: a dataset, then up to 24 operations (set an
 * option through the option table, set lengths by copy or borrow, change a
 * borrowed array behind the sampler's back, compute a step at any
 * epoch/step, walk a whole epoch, resume a step after others, query
 * micro-batches at any rank/micro-step, read options back). Every
 * answer is checked against the contract by tests/fuzz/api_check.c; a
 * broken promise aborts.
 */
#include "api_check.h"
#include "fuzz_input.h"

#include <stdlib.h>
#include <string.h>

/* Small datasets keep one execution in the tens of microseconds, and whole
 * epochs cheap to check. */
#define FZ_MAX_N 300
#define FZ_MAX_OPS 24
#define FZ_MAX_OPTIONS 64
/* Steps of more samples are not planned: a topped-up step of K > N samples
 * is legal but slow, and says nothing small inputs do not. */
#define FZ_MAX_STEP_SAMPLES 4096

typedef struct {
    brs_option key;
    int is_double;
    int64_t lower, upper;
    double lower_d, upper_d;
} fz_option;

typedef struct {
    fz_input in;
    brs_sampler *s;
    brs_plan *plan, *other;
    uint32_t *lengths; /* what the sampler holds (it may borrow this array) */
    size_t n;
    uint64_t fingerprint;
    size_t plan_n;       /* the dataset size w->plan was computed for */
    int plan_unmodelled; /* w->plan was computed with options plans_unmodelled names */
    int borrowed;        /* the sampler borrows w->lengths */
    int mutated;         /* ... and the harness changed it since (a broken precondition) */
} fz_world;

static fz_option options[FZ_MAX_OPTIONS];
static size_t num_options;

/* ---- the option table ------------------------------------------------- */

static void add_option(brs_option key)
{
    fz_option *o = &options[num_options];
    FZ_CHECK(num_options < FZ_MAX_OPTIONS, "more than %d options", FZ_MAX_OPTIONS);
    o->key = key;
    if (brs_option_bounds_int(&o->lower, &o->upper, key) == BRS_OK) {
        FZ_CHECK(o->lower <= o->upper, "option %d has bounds [%lld, %lld]", (int)key,
                 (long long)o->lower, (long long)o->upper);
    } else {
        FZ_CHECK(brs_option_bounds_double(&o->lower_d, &o->upper_d, key) == BRS_OK,
                 "option %d has neither integer nor double bounds", (int)key);
        o->is_double = 1;
    }
    num_options++;
}

/* Every key the library lists is fuzzed, so a new option is covered
 * without touching this file. */
static void load_option_table(void)
{
#if FZ_HAVE_OPTION_TABLE
    size_t count = 0;
    FZ_CHECK(brs_option_count(&count) == BRS_OK && count >= 11, "brs_option_count");
    for (size_t i = 0; i < count; i++) {
        brs_option key;
        FZ_CHECK(brs_option_key(&key, i) == BRS_OK, "brs_option_key(%zu)", i);
        add_option(key);
    }
    brs_option key;
    FZ_CHECK(brs_option_key(&key, count) == BRS_ERR_OUT_OF_RANGE, "brs_option_key(count)");
#else
    for (brs_option key = BRS_OPT_BATCH_SIZE; key <= BRS_OPT_INTERCEPT; key++) add_option(key);
#endif
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    load_option_table();
    return 0;
}

/* ---- sampler state ---------------------------------------------------- */

static void fingerprint_now(uint64_t *fp, const fz_world *w)
{
    brs_status st = brs_sampler_fingerprint(fp, w->s);
    if (w->lengths) {
        FZ_CHECK(st == BRS_OK, "fingerprint with lengths set = %d", (int)st);
        return;
    }
    FZ_CHECK(st == BRS_ERR_STATE, "fingerprint without lengths = %d", (int)st);
#if FZ_HAVE_OPTION_TABLE
    fz_check_failure(st, brs_sampler_last_error(w->s), "brs_sampler_fingerprint");
#endif
    *fp = 0;
}

/* An option changed (or did not): the fingerprint must follow, except for
 * the rank, which every rank of one job shares the plan across. */
static void check_fingerprint(fz_world *w, int changed, brs_option key)
{
    uint64_t fp;
    fingerprint_now(&fp, w);
    if (w->lengths) {
        if (changed && key != BRS_OPT_RANK)
            FZ_CHECK(fp != w->fingerprint, "option %d changed, the fingerprint did not", (int)key);
        else
            FZ_CHECK(fp == w->fingerprint, "option %d kept its value, the fingerprint changed",
                     (int)key);
    }
    w->fingerprint = fp;
}

static brs_option pick_key(fz_world *w, int want_double)
{
    uint8_t choice = fz_u8(&w->in);
    if (choice >= 250) {
        static const brs_option unknown[] = {0, -1, 99, INT32_MIN, INT32_MAX, 19};
        return unknown[choice - 250];
    }
    /* Prefer the wanted type; a mistyped key must say UNSUPPORTED. */
    size_t i = choice % num_options;
    for (size_t tries = 0; choice % 7 != 0 && tries < num_options; tries++, i++)
        if (options[i % num_options].is_double == want_double) break;
    return options[i % num_options].key;
}

static const fz_option *find_option(brs_option key)
{
    for (size_t i = 0; i < num_options; i++)
        if (options[i].key == key) return &options[i];
    return NULL;
}

static void op_set_int(fz_world *w)
{
    brs_option key = pick_key(w, 0);
    const fz_option *o = find_option(key);
    int64_t lower = o && !o->is_double ? o->lower : 0, upper = o && !o->is_double ? o->upper : 1;
    int64_t value = fz_int_around(&w->in, lower, upper);
    int64_t before = 0, after = 0;
    brs_status got_before = brs_sampler_get_int(&before, w->s, key);
    brs_status st = brs_sampler_set_int(w->s, key, value);
    if (!o || o->is_double) {
        FZ_CHECK(st == BRS_ERR_UNSUPPORTED && got_before == BRS_ERR_UNSUPPORTED,
                 "set_int/get_int of key %d = %d/%d", (int)key, (int)st, (int)got_before);
        fz_check_failure(st, brs_sampler_last_error(w->s), "brs_sampler_set_int");
        check_fingerprint(w, 0, key);
        return;
    }
    FZ_CHECK(brs_sampler_get_int(&after, w->s, key) == BRS_OK, "get_int(%d)", (int)key);
    if (value < o->lower || value > o->upper) {
        FZ_CHECK(st == BRS_ERR_OUT_OF_RANGE && after == before,
                 "set_int(%d, %lld) outside [%lld, %lld] = %d", (int)key, (long long)value,
                 (long long)o->lower, (long long)o->upper, (int)st);
        fz_check_failure(st, brs_sampler_last_error(w->s), "brs_sampler_set_int");
    } else {
        FZ_CHECK(st == BRS_OK && after == value, "set_int(%d, %lld) = %d, reads %lld", (int)key,
                 (long long)value, (int)st, (long long)after);
    }
    check_fingerprint(w, after != before, key);
}

static void op_set_double(fz_world *w)
{
    brs_option key = pick_key(w, 1);
    const fz_option *o = find_option(key);
    double lower = o && o->is_double ? o->lower_d : 0, upper = o && o->is_double ? o->upper_d : 1;
    double value = fz_double_around(&w->in, lower, upper);
    double before = 0, after = 0;
    brs_status got_before = brs_sampler_get_double(&before, w->s, key);
    brs_status st = brs_sampler_set_double(w->s, key, value);
    if (!o || !o->is_double) {
        FZ_CHECK(st == BRS_ERR_UNSUPPORTED && got_before == BRS_ERR_UNSUPPORTED,
                 "set_double/get_double of key %d = %d/%d", (int)key, (int)st, (int)got_before);
        fz_check_failure(st, brs_sampler_last_error(w->s), "brs_sampler_set_double");
        check_fingerprint(w, 0, key);
        return;
    }
    FZ_CHECK(brs_sampler_get_double(&after, w->s, key) == BRS_OK, "get_double(%d)", (int)key);
    if (!(value >= o->lower_d && value <= o->upper_d)) {
        FZ_CHECK(st == BRS_ERR_OUT_OF_RANGE && memcmp(&after, &before, sizeof after) == 0,
                 "set_double(%d, %g) outside [%g, %g] = %d", (int)key, value, o->lower_d,
                 o->upper_d, (int)st);
        fz_check_failure(st, brs_sampler_last_error(w->s), "brs_sampler_set_double");
        check_fingerprint(w, 0, key);
        return;
    }
    /* Accepted values read back resolved to 1e-6 (or the call refuses a
     * value it cannot represent, with a message). */
    if (st != BRS_OK) {
        fz_check_failure(st, brs_sampler_last_error(w->s), "brs_sampler_set_double");
        FZ_CHECK(memcmp(&after, &before, sizeof after) == 0, "a refused double changed");
    } else {
        FZ_CHECK(after >= value - 5.1e-7 && after <= value + 5.1e-7 && after >= o->lower_d &&
                     after <= o->upper_d,
                 "set_double(%d, %.17g) reads back %.17g", (int)key, value, after);
    }
    check_fingerprint(w, after != before, key);
}

/* ---- lengths ---------------------------------------------------------- */

static uint32_t one_length(fz_input *in, uint8_t shape, uint32_t fixed)
{
    switch (shape % 6) {
    case 0: return fixed;
    case 1: return 1 + (uint32_t)fz_below(in, 16);
    case 2: return 1 + (uint32_t)fz_below(in, 4096);
    case 3: return UINT32_MAX - (uint32_t)fz_below(in, 256);
    case 4: return fz_u8(in) < 16 ? UINT32_MAX - fz_u8(in) : 1 + fz_u8(in);
    default: return fz_u32(in);
    }
}

static void op_lengths(fz_world *w)
{
    uint8_t how = fz_u8(&w->in);
    size_t n = how & 0x80 ? (size_t)fz_below(&w->in, FZ_MAX_N + 1) : fz_below(&w->in, 65);
    uint8_t shape = fz_u8(&w->in);
    uint32_t fixed = 1 + (uint32_t)fz_below(&w->in, 1000);
    uint32_t *next = malloc((n + 1) * sizeof *next);
    FZ_CHECK(next != NULL, "out of memory in the harness");
    for (size_t i = 0; i < n; i++) next[i] = one_length(&w->in, shape, fixed);
    if (n > 0 && how & 0x40) next[fz_below(&w->in, n)] = 0; /* BRS_ERR_INVALID_LENGTH */
    int32_t mode = how & 0x20 ? (how & 0x10 ? 7 : -1) : how & 1;
    int valid = n > 0 && (mode == 0 || mode == 1);
    for (size_t i = 0; valid && i < n; i++) valid = next[i] != 0;
    brs_status st = brs_sampler_set_lengths(w->s, next, n, mode);
    if (!valid) {
        FZ_CHECK(st != BRS_OK, "set_lengths accepted n=%zu mode=%d with a zero or no length", n,
                 (int)mode);
        fz_check_failure(st, brs_sampler_last_error(w->s), "brs_sampler_set_lengths");
        free(next);
        check_fingerprint(w, 0, 0);
        return;
    }
    FZ_CHECK(st == BRS_OK, "set_lengths(n=%zu, mode=%d) = %d: %s", n, (int)mode, (int)st,
             brs_sampler_last_error(w->s));
    /* The sampler no longer looks at the old array, borrowed or not. */
    /* A borrowed array changed behind the sampler (op_mutate) no longer
     * holds the lengths the recorded fingerprint was taken of. */
    int same =
        w->lengths && !w->mutated && n == w->n && memcmp(next, w->lengths, n * sizeof *next) == 0;
    free(w->lengths);
    w->lengths = next;
    w->n = n;
    w->borrowed = mode == BRS_LENGTHS_BORROW;
    w->mutated = 0;
    uint64_t old = w->fingerprint;
    fingerprint_now(&w->fingerprint, w);
    FZ_CHECK(!same || old == w->fingerprint, "the same lengths changed the fingerprint");
}

/* Changes a borrowed array behind the sampler's back: documented as the
 * caller's fault, it must still give an error (INVALID_LENGTH for a 0,
 * SAMPLE_TOO_LONG above the cap) or a plan of the new lengths, never a
 * crash or a hang. */
static void op_mutate(fz_world *w)
{
    if (!w->borrowed || !w->lengths) return;
    for (uint8_t i = 0, count = 1 + fz_u8(&w->in) % 4; i < count; i++) {
        size_t at = (size_t)fz_below(&w->in, w->n);
        static const uint32_t odd[] = {0, 1, UINT32_MAX, 2, 1u << 31};
        uint8_t how = fz_u8(&w->in);
        w->lengths[at] = how < 200 ? odd[how % 5] : fz_u32(&w->in);
    }
    w->mutated = 1;
}

/* ---- planning --------------------------------------------------------- */

static void check_not_ready(const brs_plan *p)
{
    int64_t v;
    const uint64_t *idx;
    size_t count;
    FZ_CHECK(brs_plan_get_int(&v, p, BRS_PLAN_EPOCH) == BRS_ERR_STATE &&
                 brs_plan_micro_batch(&idx, &count, p, 0, 0) == BRS_ERR_STATE,
             "a plan whose compute failed still answers queries");
}

/* A sampler built from scratch with the same lengths (copied) and options. */
static brs_sampler *clone_sampler(const fz_world *w)
{
    brs_sampler *c = NULL;
    FZ_CHECK(brs_sampler_new(&c) == BRS_OK, "brs_sampler_new");
    FZ_CHECK(brs_sampler_set_lengths(c, w->lengths, w->n, BRS_LENGTHS_COPY) == BRS_OK,
             "set_lengths on a clone");
    for (size_t i = 0; i < num_options; i++) {
        brs_option key = options[i].key;
        brs_status st;
        if (options[i].is_double) {
            double v;
            brs_sampler_get_double(&v, w->s, key);
            st = brs_sampler_set_double(c, key, v);
        } else {
            int64_t v;
            brs_sampler_get_int(&v, w->s, key);
            st = brs_sampler_set_int(c, key, v);
        }
        FZ_CHECK(st == BRS_OK, "an option read back (key %d) cannot be set again", (int)key);
    }
    uint64_t a, b;
    FZ_CHECK(brs_sampler_fingerprint(&a, w->s) == BRS_OK &&
                 brs_sampler_fingerprint(&b, c) == BRS_OK && a == b,
             "a clone has another fingerprint");
    return c;
}

/* A sampler of one micro-batch per step over the same dataset, seed and
 * shuffle: by docs/design.md a step's samples depend only on N, B, seed,
 * epoch and shuffle, so it must draw the same sample sets. */
static brs_sampler *reference_sampler(const fz_world *w, int64_t batch, int64_t drop_last)
{
    brs_sampler *ref = NULL;
    int64_t seed = 0, shuffle = 1;
    brs_sampler_get_int(&seed, w->s, BRS_OPT_SEED);
    brs_sampler_get_int(&shuffle, w->s, BRS_OPT_SHUFFLE);
    FZ_CHECK(brs_sampler_new(&ref) == BRS_OK &&
                 brs_sampler_set_lengths(ref, w->lengths, w->n, BRS_LENGTHS_BORROW) == BRS_OK &&
                 brs_sampler_set_int(ref, BRS_OPT_BATCH_SIZE, batch) == BRS_OK &&
                 brs_sampler_set_int(ref, BRS_OPT_DROP_LAST, drop_last) == BRS_OK &&
                 brs_sampler_set_int(ref, BRS_OPT_SEED, seed) == BRS_OK &&
                 brs_sampler_set_int(ref, BRS_OPT_SHUFFLE, shuffle) == BRS_OK,
             "building a reference sampler");
    return ref;
}

/* Appends the samples of step t of the reference to out; their count. */
static uint64_t reference_step(uint64_t *out, brs_plan *p, const brs_sampler *ref, uint64_t epoch,
                               uint64_t t)
{
    const uint64_t *idx;
    size_t count;
    brs_status st = brs_plan_compute(p, ref, epoch, t);
    FZ_CHECK(st == BRS_OK && brs_plan_micro_batch(&idx, &count, p, 0, 0) == BRS_OK,
             "reference step %llu of epoch %llu = %d: %s", (unsigned long long)t,
             (unsigned long long)epoch, (int)st, brs_plan_last_error(p));
    memcpy(out, idx, count * sizeof *idx);
    return count;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The step's dataset indices by the contract, ascending (malloc'd): the
 * slice of the epoch order, and for a short kept last step the top-up,
 * the first K - r positions of the order again (wrapping). */
static uint64_t *expected_samples(fz_world *w, const fz_config *c, uint64_t epoch, uint64_t t)
{
    uint64_t count = fz_step_samples(c, w->n, t), b = fz_global_batch(c);
    uint64_t *out = malloc((count + 1) * sizeof *out);
    brs_plan *p = NULL;
    FZ_CHECK(out != NULL && brs_plan_new(&p) == BRS_OK, "out of memory in the harness");
    if (!c->shuffle) { /* the identity order, known without the library */
        for (uint64_t j = 0; j < count; j++) out[j] = (t * b + j) % w->n;
        brs_plan_free(p);
        qsort(out, count, sizeof *out, cmp_u64);
        return out;
    }
    brs_sampler *ref = reference_sampler(w, (int64_t)b, c->drop_last);
    uint64_t got = reference_step(out, p, ref, epoch, t);
    brs_sampler_free(ref);
    FZ_CHECK(got <= count && (got == count || t * b + got == w->n),
             "reference step %llu holds %llu of %llu samples", (unsigned long long)t,
             (unsigned long long)got, (unsigned long long)count);
    if (got < count) {
        ref = reference_sampler(w, 1, 1);
        for (uint64_t j = 0; got < count; j++)
            got += reference_step(out + got, p, ref, epoch, j % w->n);
        brs_sampler_free(ref);
    }
    brs_plan_free(p);
    qsort(out, count, sizeof *out, cmp_u64);
    return out;
}

static int cmp_u32_desc(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x < y) - (x > y);
}

/* CAP_INFEASIBLE must be true, and the count it names the least that fits. */
static void check_cap_infeasible(fz_world *w, const fz_config *c, uint64_t epoch, uint64_t t)
{
    FZ_CHECK(c->max_tokens > 0, "CAP_INFEASIBLE without max_tokens");
    uint64_t *idx = expected_samples(w, c, epoch, t);
    uint64_t count = fz_step_samples(c, w->n, t), k = fz_micro_batches(c);
    uint32_t *len = malloc(count * sizeof *len);
    FZ_CHECK(len != NULL, "out of memory in the harness");
    /* padded: the groups hold padded lengths; packed: a row's rounded total keeps the cap
     * exactly when its raw total keeps the cap rounded down to the multiple */
    for (uint64_t j = 0; j < count; j++)
        len[j] = c->packed ? w->lengths[idx[j]] : (uint32_t)fz_padded(c, w->lengths[idx[j]]);
    qsort(len, count, sizeof *len, cmp_u32_desc);
    uint64_t least = UINT64_MAX;
    uint64_t packed_cap = (uint64_t)c->max_tokens / c->pad_multiple * c->pad_multiple;
    if (!c->packed)
        least = fz_padded_groups_for_cap(len, count, (uint64_t)c->max_tokens);
    else if (count <= FZ_PACK_MAX)
        least = fz_packed_bins_for_cap(len, count, packed_cap);
    const char *msg = brs_plan_last_error(w->plan);
    uint64_t named = fz_number_after(msg, "needs at least ");
    FZ_CHECK(least == UINT64_MAX || least > k,
             "CAP_INFEASIBLE, but %llu micro-batches fit max_tokens %lld and K = %llu",
             (unsigned long long)least, (long long)c->max_tokens, (unsigned long long)k);
    FZ_CHECK(least == UINT64_MAX || named == UINT64_MAX || named == least,
             "CAP_INFEASIBLE names %llu micro-batches, the least that fits is %llu: %s",
             (unsigned long long)named, (unsigned long long)least, msg);
    free(len);
    free(idx);
}

/* The status brs_plan_compute must return before planning (validation and
 * the step range), or 1 when it must plan. */
static brs_status expected_before_planning(fz_world *w, const fz_config *c, uint64_t step)
{
    brs_status valid = brs_sampler_validate(w->s);
    if (valid != BRS_OK) {
        fz_check_failure(valid, brs_sampler_last_error(w->s), "brs_sampler_validate");
        return valid;
    }
    FZ_CHECK(w->lengths && c->rank < c->dp_size && fz_micro_batches(c) <= BRS_MAX_MICRO_BATCHES &&
                 fz_global_batch(c) <= BRS_MAX_STEP_SAMPLES && fz_steps(c, w->n) > 0,
             "validate accepted an invalid configuration");
    uint64_t steps = 0;
    FZ_CHECK(brs_sampler_steps_per_epoch(&steps, w->s) == BRS_OK && steps == fz_steps(c, w->n),
             "steps_per_epoch %llu, the contract says %llu", (unsigned long long)steps,
             (unsigned long long)fz_steps(c, w->n));
    return step >= steps ? BRS_ERR_OUT_OF_RANGE : 1;
}

/* Whether the sampler plans what this checker does not model: a shape
 * vocabulary (max_shapes) or context parallelism (cp_size,
 * max_tokens_per_rank) change every micro-batch's shape or layout. Their
 * plans are checked against oracles by tests/unit/test_vocabulary.c and
 * test_context_parallel.c; here they are only run (no crash, no leak, a
 * documented status). */
static int plans_unmodelled(const brs_sampler *s)
{
#if FZ_HAVE_OPTION_TABLE
    static const char *const names[] = {"max_shapes", "max_tokens_per_rank", "cp_size"};
    static const int64_t plain[] = {0, 0, 1};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        brs_option key;
        int64_t value;
        if (brs_option_find(&key, names[i]) == BRS_OK &&
            brs_sampler_get_int(&value, s, key) == BRS_OK && value != plain[i])
            return 1;
    }
#else
    (void)s;
#endif
    return 0;
}

/* Computes (epoch, step) into w->plan and checks everything; returns 1 with
 * the step in *snap when it was planned. */
static int compute_checked(fz_world *w, fz_snapshot *snap, uint64_t epoch, uint64_t step)
{
    fz_config c;
    fz_config_read(&c, w->s);
    if (plans_unmodelled(w->s)) {
        brs_status st = brs_plan_compute(w->plan, w->s, epoch, step);
        if (st != BRS_OK) fz_check_failure(st, brs_plan_last_error(w->plan), "brs_plan_compute");
        w->plan_n = w->n;
        w->plan_unmodelled = 1; /* a CP placeholder is an empty micro-batch */
        return 0;
    }
    brs_status want = expected_before_planning(w, &c, step);
    if (want == 1 && fz_step_samples(&c, w->n, step) > FZ_MAX_STEP_SAMPLES) return 0;
    brs_status st = brs_plan_compute(w->plan, w->s, epoch, step);
    if (st != BRS_OK) {
        fz_check_failure(st, brs_plan_last_error(w->plan), "brs_plan_compute");
        check_not_ready(w->plan);
        if (w->mutated) {
            FZ_CHECK(want != 1 || st == BRS_ERR_CAP_INFEASIBLE || st == BRS_ERR_INVALID_LENGTH ||
                         st == BRS_ERR_SAMPLE_TOO_LONG,
                     "compute over a changed borrowed array = %d", (int)st);
            return 0;
        }
        FZ_CHECK(want != 1 ? st == want : st == BRS_ERR_CAP_INFEASIBLE,
                 "compute(%llu, %llu) = %d, expected %d", (unsigned long long)epoch,
                 (unsigned long long)step, (int)st, (int)want);
        if (st == BRS_ERR_CAP_INFEASIBLE) check_cap_infeasible(w, &c, epoch, step);
        return 0;
    }
    FZ_CHECK(want == 1, "compute(%llu, %llu) succeeded, expected %d", (unsigned long long)epoch,
             (unsigned long long)step, (int)want);
    FZ_CHECK(brs_plan_last_error(w->plan)[0] == '\0', "a successful compute left a message");
    w->plan_n = w->n; /* the plan outlives later changes of the lengths */
    w->plan_unmodelled = 0;
    fz_snapshot_take(snap, w->plan, &c);
    fz_data d = {w->lengths, w->n};
    /* After a change behind the sampler's back, the references (which
     * validate the lengths) cannot be built; the plan is still checked. */
    uint64_t *expected = w->mutated || c.strategy == BRS_STRATEGY_LENGTH_GROUPED
                             ? NULL
                             : expected_samples(w, &c, epoch, step);
    fz_check_step(snap, &c, &d, epoch, step, expected);
    free(expected);
    return 1;
}

/* The same step from another plan and from a sampler built separately. */
static void check_determinism(fz_world *w, const fz_snapshot *snap, uint64_t epoch, uint64_t step)
{
    fz_config c;
    fz_config_read(&c, w->s);
    fz_snapshot again;
    if (w->mutated) /* plans may hold orders of the lengths before the change */
        return;
    FZ_CHECK(brs_plan_compute(w->other, w->s, epoch, step) == BRS_OK, "second compute failed");
    fz_snapshot_take(&again, w->other, &c);
    fz_snapshot_same(snap, &again, "a second compute");
    fz_snapshot_free(&again);
    brs_sampler *clone = clone_sampler(w);
    FZ_CHECK(brs_plan_compute(w->other, clone, epoch, step) == BRS_OK, "clone compute failed");
    brs_sampler_free(clone); /* plans stay valid after their sampler is freed */
    fz_snapshot_take(&again, w->other, &c);
    fz_snapshot_same(snap, &again, "a separately built sampler");
    fz_snapshot_free(&again);
}

static uint64_t steps_now(fz_world *w)
{
    uint64_t steps = 0;
    return brs_sampler_steps_per_epoch(&steps, w->s) == BRS_OK ? steps : 0;
}

static void op_compute(fz_world *w)
{
    uint64_t epoch = fz_index(&w->in, 4), step = fz_index(&w->in, steps_now(w));
    fz_snapshot snap;
    if (!compute_checked(w, &snap, epoch, step)) return;
    check_determinism(w, &snap, epoch, step);
    fz_snapshot_free(&snap);
}

/* Step t computed cold, then after other steps (and epochs) in the same
 * plan, must not change: plans are random access. */
static void op_resume(fz_world *w)
{
    uint64_t steps = steps_now(w);
    if (steps == 0) return;
    uint64_t epoch = fz_index(&w->in, 3), t = fz_below(&w->in, steps);
    fz_snapshot cold, other, warm;
    if (!compute_checked(w, &cold, epoch, t)) return;
    for (uint8_t i = 0, many = fz_u8(&w->in) % 4; i < many; i++) {
        uint64_t e = fz_u8(&w->in) & 1 ? epoch : epoch + 1, s = fz_below(&w->in, steps);
        if (compute_checked(w, &other, e, s)) fz_snapshot_free(&other);
    }
    if (compute_checked(w, &warm, epoch, t)) {
        /* Not after a change behind the sampler's back: length_grouped keeps
         * an epoch's order in the plan, ordered by the lengths it saw. */
        if (!w->mutated) fz_snapshot_same(&cold, &warm, "a step recomputed after other steps");
        fz_snapshot_free(&warm);
    }
    fz_snapshot_free(&cold);
}

/* An epoch's index counts: at most once with drop_last (only the N mod B
 * tail is missing), at least once without (only top-up repeats added). */
static void tally_epoch(const unsigned *seen, fz_world *w, const fz_config *c, uint64_t steps)
{
    uint64_t b = fz_global_batch(c), total = 0, want = 0, missing = 0;
    for (uint64_t t = 0; t < steps; t++) want += fz_step_samples(c, w->n, t);
    for (size_t i = 0; i < w->n; i++) {
        FZ_CHECK(c->drop_last ? seen[i] <= 1 : seen[i] >= 1, "index %zu seen %u times", i, seen[i]);
        total += seen[i];
        missing += seen[i] == 0;
    }
    FZ_CHECK(total == want, "an epoch holds %llu samples, the contract says %llu",
             (unsigned long long)total, (unsigned long long)want);
    FZ_CHECK(missing == (c->drop_last ? w->n - steps * b : 0), "%llu indices never drawn",
             (unsigned long long)missing);
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* Every step of an epoch in a scrambled order: each index exactly as often
 * as the contract says (once; never with drop_last's tail; top-up repeats). */
static void op_epoch(fz_world *w)
{
    uint64_t steps = steps_now(w), epoch = fz_index(&w->in, 3);
    if (steps == 0 || steps > 24) return;
    fz_config c;
    fz_config_read(&c, w->s);
    unsigned *seen = calloc(w->n, sizeof *seen);
    FZ_CHECK(seen != NULL, "out of memory in the harness");
    uint64_t stride = 1 + fz_below(&w->in, steps), offset = fz_below(&w->in, steps);
    while (gcd(stride, steps) != 1) stride--; /* a stride coprime to steps visits every step once */
    int complete = 1;
    for (uint64_t i = 0; i < steps && complete; i++) {
        fz_snapshot snap;
        complete = compute_checked(w, &snap, epoch, (offset + i * stride) % steps);
        for (size_t j = 0; complete && j < snap.total; j++) seen[snap.indices[j]]++;
        if (complete) fz_snapshot_free(&snap);
    }
    if (complete) tally_epoch(seen, w, &c, steps);
    free(seen);
}

/* Micro-batch queries at any rank/micro-step on whatever the plan holds. */
static void op_micro(fz_world *w)
{
    int64_t dp = 1, ga = 1, rank = fz_int_around(&w->in, -1, 8);
    int64_t micro = fz_int_around(&w->in, -1, 8);
    int ready = brs_plan_get_int(&dp, w->plan, BRS_PLAN_DP_SIZE) == BRS_OK;
    if (ready)
        FZ_CHECK(brs_plan_get_int(&ga, w->plan, BRS_PLAN_GRAD_ACCUM) == BRS_OK, "GRAD_ACCUM");
    const uint64_t *idx = NULL;
    size_t count = 0;
    brs_status st = brs_plan_micro_batch(&idx, &count, w->plan, rank, micro);
    int inside = rank >= 0 && rank < dp && micro >= 0 && micro < ga;
    if (!ready)
        FZ_CHECK(st == BRS_ERR_STATE, "micro_batch on an empty plan = %d", (int)st);
    else if (!inside)
        FZ_CHECK(st == BRS_ERR_OUT_OF_RANGE, "micro_batch(%lld, %lld) outside = %d",
                 (long long)rank, (long long)micro, (int)st);
    else
        FZ_CHECK(st == BRS_OK && (count >= 1 || w->plan_unmodelled) &&
                     (count == 0 || idx[0] < w->plan_n),
                 "micro_batch(%lld, %lld) = %d", (long long)rank, (long long)micro, (int)st);
}

/* Read-only calls: unknown keys and NULLs answer with a status, the handle
 * with a message (LIBBRS_1.1: every failing call sets its own). */
static void op_queries(fz_world *w)
{
    int64_t v;
    double d;
    brs_option key = (brs_option)fz_u32(&w->in);
    brs_status st = brs_sampler_get_int(&v, w->s, key);
    const fz_option *o = find_option(key);
    FZ_CHECK((st == BRS_OK) == (o && !o->is_double), "get_int(%d) = %d", (int)key, (int)st);
#if FZ_HAVE_OPTION_TABLE
    if (st != BRS_OK) fz_check_failure(st, brs_sampler_last_error(w->s), "brs_sampler_get_int");
#endif
    st = brs_sampler_get_double(&d, w->s, key);
    FZ_CHECK((st == BRS_OK) == (o && o->is_double), "get_double(%d) = %d", (int)key, (int)st);
    FZ_CHECK(brs_sampler_get_int(NULL, w->s, BRS_OPT_SEED) == BRS_ERR_NULL_POINTER &&
                 brs_sampler_fingerprint(NULL, w->s) == BRS_ERR_NULL_POINTER &&
                 brs_plan_compute(NULL, w->s, 0, 0) == BRS_ERR_NULL_POINTER &&
                 brs_plan_compute(w->other, NULL, 0, 0) == BRS_ERR_NULL_POINTER,
             "a NULL argument was not BRS_ERR_NULL_POINTER");
    check_fingerprint(w, 0, 0);
}

/* ---- the program ------------------------------------------------------- */

typedef void (*fz_op)(fz_world *w);
static const fz_op ops[] = {op_set_int, op_set_int, op_set_double, op_lengths,
                            op_compute, op_compute, op_epoch,      op_resume,
                            op_micro,   op_queries, op_set_int,    op_mutate};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_world w = {.in = {data, size, 0}};
    FZ_CHECK(brs_sampler_new(&w.s) == BRS_OK && brs_plan_new(&w.plan) == BRS_OK &&
                 brs_plan_new(&w.other) == BRS_OK,
             "cannot create handles");
    /* Most programs start with a dataset; some plan without one. */
    if (fz_u8(&w.in) % 16 != 0) op_lengths(&w);
    for (int i = 0; i < FZ_MAX_OPS && !fz_done(&w.in); i++)
        ops[fz_u8(&w.in) % (sizeof ops / sizeof ops[0])](&w);
    brs_plan_free(w.plan);
    brs_plan_free(w.other);
    brs_sampler_free(w.s);
    free(w.lengths);
    return 0;
}
