/* api_check.c - the promises of include/brs.h, checked after each call of
 * the fuzz_api harness (tests/fuzz/api_check.h). */
#include "api_check.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__extension__ typedef unsigned __int128 u128;

void fz_fail(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "fuzz_api: broken promise: ");
    vfprintf(stderr, format, args);
    fprintf(stderr, "\n");
    va_end(args);
    abort();
}

void fz_check_failure(brs_status status, const char *message, const char *call)
{
    FZ_CHECK(status < 0, "%s returned %d, not a negative status", call, (int)status);
    FZ_CHECK(strcmp(brs_strerror(status), "unknown status") != 0,
             "%s returned %d, a status brs_strerror does not name", call, (int)status);
    FZ_CHECK(message != NULL && message[0] != '\0', "%s failed with %d (%s) but no message",
             call, (int)status, brs_strerror(status));
}

/* ---- configuration ---------------------------------------------------- */

static int64_t get_int(const brs_sampler *s, brs_option key)
{
    int64_t v = 0;
    brs_status st = brs_sampler_get_int(&v, s, key);
    FZ_CHECK(st == BRS_OK, "brs_sampler_get_int(%d) = %d", (int)key, (int)st);
    return v;
}

/* Options are resolved to 1e-6 and bounded by 1e12, so the micro-units
 * come back exactly enough for the relative tolerance of the cost checks. */
static uint64_t get_micro(const brs_sampler *s, brs_option key)
{
    double v = 0;
    brs_status st = brs_sampler_get_double(&v, s, key);
    FZ_CHECK(st == BRS_OK, "brs_sampler_get_double(%d) = %d", (int)key, (int)st);
    return (uint64_t)llroundl((long double)v * 1e6L);
}

void fz_config_read(fz_config *c, const brs_sampler *s)
{
    c->batch_size = get_int(s, BRS_OPT_BATCH_SIZE);
    c->grad_accum = get_int(s, BRS_OPT_GRAD_ACCUM);
    c->dp_size = get_int(s, BRS_OPT_DP_SIZE);
    c->rank = get_int(s, BRS_OPT_RANK);
    c->seed = get_int(s, BRS_OPT_SEED);
    c->shuffle = get_int(s, BRS_OPT_SHUFFLE);
    c->drop_last = get_int(s, BRS_OPT_DROP_LAST);
    c->max_tokens = get_int(s, BRS_OPT_MAX_TOKENS);
    c->packed = get_int(s, BRS_OPT_PACKED);
#if FZ_HAVE_OPTION_TABLE
    c->strategy = get_int(s, BRS_OPT_STRATEGY);
#else
    c->strategy = 0;
#endif
    c->alpha_micro = get_micro(s, BRS_OPT_ALPHA);
    c->intercept_micro = get_micro(s, BRS_OPT_INTERCEPT);
    c->pad_multiple = 1;
#if FZ_HAVE_OPTION_TABLE
    brs_option pad;
    if (brs_option_find(&pad, "pad_to_multiple_of") == BRS_OK)
        c->pad_multiple = (uint64_t)get_int(s, pad);
#endif
}

uint64_t fz_padded(const fz_config *c, uint64_t length)
{
    return (length + c->pad_multiple - 1) / c->pad_multiple * c->pad_multiple;
}

uint64_t fz_micro_batches(const fz_config *c)
{
    return (uint64_t)c->dp_size * (uint64_t)c->grad_accum; /* both <= 2^24 */
}

uint64_t fz_global_batch(const fz_config *c)
{
    u128 b = (u128)fz_micro_batches(c) * (uint64_t)c->batch_size;
    return b > UINT64_MAX ? UINT64_MAX : (uint64_t)b;
}

uint64_t fz_steps(const fz_config *c, size_t n)
{
    uint64_t b = fz_global_batch(c);
    return c->drop_last ? n / b : (n + b - 1) / b;
}

uint64_t fz_step_samples(const fz_config *c, size_t n, uint64_t t)
{
    uint64_t b = fz_global_batch(c), k = fz_micro_batches(c);
    if ((t + 1) * b <= n)
        return b;
    uint64_t rest = n - t * b;
    return rest < k ? k : rest;
}

/* ---- snapshots ---------------------------------------------------------- */

static void check_slot_errors(const brs_plan *p, int64_t dp, int64_t ga)
{
    const int64_t bad[][2] = {{-1, 0}, {0, -1}, {dp, 0}, {0, ga}, {INT64_MIN, 0},
                              {0, INT64_MAX}, {dp, ga}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const uint64_t *idx = NULL;
        size_t count = 0;
        uint64_t a, b;
        double cost;
        brs_status st = brs_plan_micro_batch(&idx, &count, p, bad[i][0], bad[i][1]);
        FZ_CHECK(st == BRS_ERR_OUT_OF_RANGE, "micro_batch(%lld, %lld) of %lld x %lld = %d",
                 (long long)bad[i][0], (long long)bad[i][1], (long long)dp, (long long)ga,
                 (int)st);
        st = brs_plan_micro_batch_stats(&a, &b, &cost, p, bad[i][0], bad[i][1]);
        FZ_CHECK(st == BRS_ERR_OUT_OF_RANGE, "micro_batch_stats(%lld, %lld) = %d",
                 (long long)bad[i][0], (long long)bad[i][1], (int)st);
    }
    size_t count;
    const uint64_t *idx;
    FZ_CHECK(brs_plan_micro_batch(NULL, &count, p, 0, 0) == BRS_ERR_NULL_POINTER &&
                 brs_plan_micro_batch(&idx, NULL, p, 0, 0) == BRS_ERR_NULL_POINTER,
             "micro_batch with a NULL out-parameter");
    int64_t v;
    FZ_CHECK(brs_plan_get_int(&v, p, 0) == BRS_ERR_UNSUPPORTED &&
                 brs_plan_get_int(&v, p, BRS_PLAN_MAX_COST) == BRS_ERR_UNSUPPORTED,
             "plan_get_int with an unknown or double key");
}

static void read_queries(fz_snapshot *snap, const brs_plan *p)
{
    for (int key = BRS_PLAN_EPOCH; key <= BRS_PLAN_MAX_PADDED_TOKENS; key++) {
        brs_status st = brs_plan_get_int(&snap->ints[key - BRS_PLAN_EPOCH], p, key);
        FZ_CHECK(st == BRS_OK, "brs_plan_get_int(%d) = %d after a compute", key, (int)st);
    }
    for (int key = BRS_PLAN_MAX_COST; key <= BRS_PLAN_TIME_LOWER_BOUND; key++) {
        brs_status st = brs_plan_get_double(&snap->doubles[key - BRS_PLAN_MAX_COST], p, key);
        FZ_CHECK(st == BRS_OK, "brs_plan_get_double(%d) = %d after a compute", key, (int)st);
    }
}

void fz_snapshot_take(fz_snapshot *snap, const brs_plan *p, const fz_config *c)
{
    memset(snap, 0, sizeof *snap);
    read_queries(snap, p);
    int64_t dp = snap->ints[BRS_PLAN_DP_SIZE - 1], ga = snap->ints[BRS_PLAN_GRAD_ACCUM - 1];
    FZ_CHECK(dp == c->dp_size && ga == c->grad_accum, "plan is %lld x %lld, sampler %lld x %lld",
             (long long)dp, (long long)ga, (long long)c->dp_size, (long long)c->grad_accum);
    snap->k = (size_t)(dp * ga);
    size_t samples = (size_t)snap->ints[BRS_PLAN_NUM_SAMPLES - 1];
    snap->count = malloc(snap->k * sizeof *snap->count);
    snap->padded = malloc(snap->k * sizeof *snap->padded);
    snap->real = malloc(snap->k * sizeof *snap->real);
    snap->cost = malloc(snap->k * sizeof *snap->cost);
    snap->indices = malloc((samples + 1) * sizeof *snap->indices);
    FZ_CHECK(snap->count && snap->padded && snap->real && snap->cost && snap->indices,
             "out of memory in the harness");
    for (int64_t r = 0; r < dp; r++) {
        for (int64_t m = 0; m < ga; m++) {
            size_t slot = (size_t)(r * ga + m), count = 0;
            const uint64_t *idx = NULL;
            brs_status st = brs_plan_micro_batch(&idx, &count, p, r, m);
            FZ_CHECK(st == BRS_OK, "micro_batch(%lld, %lld) = %d", (long long)r, (long long)m,
                     (int)st);
            FZ_CHECK(count >= 1 && idx != NULL, "micro-batch (%lld, %lld) is empty",
                     (long long)r, (long long)m);
            FZ_CHECK(snap->total + count <= samples, "micro-batches hold more than NUM_SAMPLES %zu",
                     samples);
            memcpy(snap->indices + snap->total, idx, count * sizeof *idx);
            snap->total += count;
            snap->count[slot] = count;
            st = brs_plan_micro_batch_stats(&snap->padded[slot], &snap->real[slot],
                                            &snap->cost[slot], p, r, m);
            FZ_CHECK(st == BRS_OK, "micro_batch_stats(%lld, %lld) = %d", (long long)r,
                     (long long)m, (int)st);
        }
    }
    FZ_CHECK(snap->total == samples, "micro-batches hold %zu samples, NUM_SAMPLES says %zu",
             snap->total, samples);
    check_slot_errors(p, dp, ga);
}

void fz_snapshot_free(fz_snapshot *snap)
{
    free(snap->count);
    free(snap->indices);
    free(snap->padded);
    free(snap->real);
    free(snap->cost);
    memset(snap, 0, sizeof *snap);
}

void fz_snapshot_same(const fz_snapshot *a, const fz_snapshot *b, const char *what)
{
    FZ_CHECK(memcmp(a->ints, b->ints, sizeof a->ints) == 0 &&
                 memcmp(a->doubles, b->doubles, sizeof a->doubles) == 0,
             "%s: plan queries differ", what);
    FZ_CHECK(a->k == b->k && a->total == b->total, "%s: shapes differ", what);
    FZ_CHECK(memcmp(a->count, b->count, a->k * sizeof *a->count) == 0 &&
                 memcmp(a->indices, b->indices, a->total * sizeof *a->indices) == 0,
             "%s: micro-batches differ", what);
    FZ_CHECK(memcmp(a->padded, b->padded, a->k * sizeof *a->padded) == 0 &&
                 memcmp(a->real, b->real, a->k * sizeof *a->real) == 0 &&
                 memcmp(a->cost, b->cost, a->k * sizeof *a->cost) == 0,
             "%s: micro-batch stats differ", what);
}

/* ---- one step ------------------------------------------------------------- */

static double to_cost(u128 micro)
{
    return (double)((long double)micro / 1e6L);
}

/* Equal up to the conversion of a 128-bit cost to double (relative 1e-12). */
static int close_to(double got, u128 want)
{
    double w = to_cost(want), scale = fabs(w) > 1.0 ? fabs(w) : 1.0;
    return fabs(got - w) <= 1e-12 * scale;
}

static int at_most(double a, double b)
{
    double scale = fabs(b) > 1.0 ? fabs(b) : 1.0;
    return a <= b + 1e-12 * scale;
}

typedef struct {
    u128 *cost; /* k, exact */
    uint64_t padded, real, max_padded;
    u128 total, max_cost;
} step_sums;

/* One slot against the lengths: range, longest first, stats, cost, cap. */
static void check_slot(step_sums *sums, const fz_snapshot *snap, size_t slot, size_t first,
                       const fz_config *c, const fz_data *d)
{
    uint64_t sum = 0, longest = 0;
    u128 sum_sq = 0;
    for (size_t i = first; i < first + snap->count[slot]; i++) {
        FZ_CHECK(snap->indices[i] < d->n, "index %llu out of range for %zu samples",
                 (unsigned long long)snap->indices[i], d->n);
        uint64_t l = d->lengths[snap->indices[i]];
        FZ_CHECK(l >= 1, "slot %zu holds index %llu of length 0", slot,
                 (unsigned long long)snap->indices[i]);
        sum += l;
        sum_sq += (u128)l * l;
        longest = l > longest ? l : longest;
    }
    uint64_t bs = snap->count[slot];
    if (c->strategy == 0)
        FZ_CHECK(d->lengths[snap->indices[first]] == longest,
                 "slot %zu does not start with its longest sample", slot);
    /* padded: every row is its longest sample's length, rounded as the collator pads it;
     * packed: the one row's total is rounded, and the cost stays that of the samples */
    uint64_t row = fz_padded(c, longest);
    uint64_t padded = c->packed ? fz_padded(c, sum) : bs * row;
    u128 cost = c->packed ? c->intercept_micro + (u128)sum * 1000000u + c->alpha_micro * sum_sq
                          : c->intercept_micro + (u128)bs * row * 1000000u +
                                (u128)c->alpha_micro * bs * row * row;
    FZ_CHECK(snap->padded[slot] == padded && snap->real[slot] == sum,
             "slot %zu stats %llu/%llu, lengths give %llu/%llu", slot,
             (unsigned long long)snap->padded[slot], (unsigned long long)snap->real[slot],
             (unsigned long long)padded, (unsigned long long)sum);
    FZ_CHECK(close_to(snap->cost[slot], cost), "slot %zu cost %.17g, lengths give %.17g", slot,
             snap->cost[slot], to_cost(cost));
    if (c->strategy == 0 && c->max_tokens > 0)
        FZ_CHECK(padded <= (uint64_t)c->max_tokens, "slot %zu holds %llu tokens > max_tokens %lld",
                 slot, (unsigned long long)padded, (long long)c->max_tokens);
    sums->cost[slot] = cost;
    sums->padded += padded;
    sums->real += sum;
    sums->max_padded = padded > sums->max_padded ? padded : sums->max_padded;
    sums->total += cost;
    sums->max_cost = cost > sums->max_cost ? cost : sums->max_cost;
}

/* Sum over micro-steps of the max over ranks, and max over ranks of the sum
 * over micro-steps, as BRS_PLAN_MICRO_SYNC_TIME / STEP_SYNC_TIME define. */
static void sync_times(u128 *micro_sync, u128 *step_sync, const u128 *cost, size_t dp, size_t ga)
{
    *micro_sync = *step_sync = 0;
    for (size_t m = 0; m < ga; m++) {
        u128 worst = 0;
        for (size_t r = 0; r < dp; r++)
            worst = cost[r * ga + m] > worst ? cost[r * ga + m] : worst;
        *micro_sync += worst;
    }
    for (size_t r = 0; r < dp; r++) {
        u128 sum = 0;
        for (size_t m = 0; m < ga; m++)
            sum += cost[r * ga + m];
        *step_sync = sum > *step_sync ? sum : *step_sync;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void check_sample_set(const fz_snapshot *snap, const uint64_t *expected)
{
    uint64_t *got = malloc((snap->total + 1) * sizeof *got);
    FZ_CHECK(got != NULL, "out of memory in the harness");
    memcpy(got, snap->indices, snap->total * sizeof *got);
    qsort(got, snap->total, sizeof *got, cmp_u64);
    int same = memcmp(got, expected, snap->total * sizeof *got) == 0;
    free(got);
    FZ_CHECK(same, "the step's samples are not its slice of the epoch permutation");
}

static void check_totals(const fz_snapshot *snap, const step_sums *s, const fz_config *c)
{
    const int64_t *q = snap->ints;
    const double *dq = snap->doubles;
    FZ_CHECK((uint64_t)q[BRS_PLAN_TOTAL_PADDED_TOKENS - 1] == s->padded &&
                 (uint64_t)q[BRS_PLAN_TOTAL_REAL_TOKENS - 1] == s->real &&
                 (uint64_t)q[BRS_PLAN_MAX_PADDED_TOKENS - 1] == s->max_padded,
             "plan token totals disagree with the micro-batch stats");
    u128 micro_sync, step_sync;
    sync_times(&micro_sync, &step_sync, s->cost, (size_t)c->dp_size, (size_t)c->grad_accum);
    double max = dq[BRS_PLAN_MAX_COST - 20], lb = dq[BRS_PLAN_LOWER_BOUND - 20];
    double tlb = dq[BRS_PLAN_TIME_LOWER_BOUND - 20];
    FZ_CHECK(close_to(max, s->max_cost), "MAX_COST %.17g, micro-batches give %.17g", max,
             to_cost(s->max_cost));
    FZ_CHECK(close_to(dq[BRS_PLAN_TOTAL_COST - 20], s->total), "TOTAL_COST disagrees");
    FZ_CHECK(close_to(dq[BRS_PLAN_MICRO_SYNC_TIME - 20], micro_sync) &&
                 close_to(dq[BRS_PLAN_STEP_SYNC_TIME - 20], step_sync),
             "sync times disagree with the micro-batch costs");
    FZ_CHECK(lb > 0 && at_most(lb, max) && at_most(lb, tlb), "LOWER_BOUND %.17g above %.17g",
             lb, max);
    FZ_CHECK(at_most(tlb, to_cost(micro_sync)) && at_most(tlb, to_cost(step_sync)),
             "TIME_LOWER_BOUND %.17g above a sync time", tlb);
}

void fz_check_step(const fz_snapshot *snap, const fz_config *c, const fz_data *d,
                   uint64_t epoch, uint64_t step, const uint64_t *expected)
{
    FZ_CHECK((uint64_t)snap->ints[BRS_PLAN_EPOCH - 1] == epoch &&
                 (uint64_t)snap->ints[BRS_PLAN_STEP - 1] == step,
             "plan says epoch %lld step %lld, computed %llu %llu",
             (long long)snap->ints[0], (long long)snap->ints[1], (unsigned long long)epoch,
             (unsigned long long)step);
    uint64_t want = fz_step_samples(c, d->n, step);
    FZ_CHECK(snap->total == want, "step %llu holds %zu samples, the contract says %llu",
             (unsigned long long)step, snap->total, (unsigned long long)want);
    step_sums sums = {0};
    sums.cost = calloc(snap->k, sizeof *sums.cost);
    FZ_CHECK(sums.cost != NULL, "out of memory in the harness");
    for (size_t slot = 0, first = 0; slot < snap->k; first += snap->count[slot++])
        check_slot(&sums, snap, slot, first, c, d);
    check_totals(snap, &sums, c);
    free(sums.cost);
    if (expected)
        check_sample_set(snap, expected);
}

/* ---- cap references ------------------------------------------------------ */

uint64_t fz_padded_groups_for_cap(const uint32_t *desc, size_t n, uint64_t cap)
{
    uint64_t groups = 0;
    for (size_t i = 0; i < n; groups++) {
        uint64_t size = cap / desc[i]; /* >= 1: every length fits the cap */
        i += size < n - i ? (size_t)size : n - i;
    }
    return groups;
}

/* Can len[i..n) join bins whose loads are load[0..bins) within cap? The
 * first empty bin stands for all empty ones (they are interchangeable). */
static int pack(uint64_t *load, size_t bins, const uint32_t *len, size_t i, size_t n,
                uint64_t cap)
{
    if (i == n)
        return 1;
    for (size_t b = 0; b < bins; b++) {
        if (load[b] + len[i] > cap)
            continue;
        load[b] += len[i];
        int ok = pack(load, bins, len, i + 1, n, cap);
        load[b] -= len[i];
        if (ok)
            return 1;
        if (load[b] == 0)
            break;
    }
    return 0;
}

uint64_t fz_packed_bins_for_cap(const uint32_t *len, size_t n, uint64_t cap)
{
    uint64_t load[FZ_PACK_MAX] = {0};
    for (size_t bins = 1; bins < n; bins++)
        if (pack(load, bins, len, 0, n, cap))
            return bins;
    return n;
}

uint64_t fz_number_after(const char *msg, const char *prefix)
{
    const char *p = strstr(msg, prefix);
    if (!p)
        return UINT64_MAX;
    p += strlen(prefix);
    if (*p < '0' || *p > '9')
        return UINT64_MAX;
    return strtoull(p, NULL, 10);
}
