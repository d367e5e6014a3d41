/*
 * api_check.h - what the public C API promises, checked by the fuzz_api
 * harness (tests/fuzz/fuzz_api.c) on every call it makes. A broken promise
 * prints what was seen and calls abort(), which libFuzzer reports as a crash
 * with the input that caused it.
 *
 * The promises are those of include/brs.h and docs/design.md: indices in
 * range, each step exactly its slice of the epoch permutation (topped up by
 * wrapping), K non-empty micro-batches, the cap, stats and queries that
 * agree with the lengths, a second compute bit-identical, and on failure a
 * negative status with a message.
 */
#ifndef BRS_FUZZ_API_CHECK_H
#define BRS_FUZZ_API_CHECK_H

#include <brs.h>

#include <stddef.h>
#include <stdint.h>

/* LIBBRS_1.1 adds the option table queries and the strategy option. */
#if BRS_VERSION_NUMBER >= 10100
#define FZ_HAVE_OPTION_TABLE 1
#else
#define FZ_HAVE_OPTION_TABLE 0
#endif

void fz_fail(const char *format, ...) __attribute__((format(printf, 1, 2), noreturn));
#define FZ_CHECK(cond, ...)                                                               \
    do {                                                                                  \
        if (!(cond))                                                                      \
            fz_fail(__VA_ARGS__);                                                         \
    } while (0)

/* A failed call: negative status, a known status name, a non-empty message. */
void fz_check_failure(brs_status status, const char *message, const char *call);

/* The sampler's configuration as read back through brs_sampler_get_*. */
typedef struct {
    int64_t batch_size, grad_accum, dp_size, rank, seed, shuffle, drop_last, max_tokens, packed;
    int64_t strategy; /* BRS_STRATEGY_BALANCED before LIBBRS_1.1 */
    uint64_t alpha_micro, intercept_micro;
    uint64_t pad_multiple; /* pad_to_multiple_of (1.4), 1 before */
} fz_config;

void fz_config_read(fz_config *c, const brs_sampler *s);
/* A length (a packed row's total) as the collator pads it: rounded up to pad_multiple. */
uint64_t fz_padded(const fz_config *c, uint64_t length);
uint64_t fz_micro_batches(const fz_config *c); /* K */
uint64_t fz_global_batch(const fz_config *c);  /* B, or UINT64_MAX past 2^64 */

/* The dataset as the harness gave it. */
typedef struct {
    const uint32_t *lengths;
    size_t n;
} fz_data;

/* Steps per epoch by the contract, 0 when none. */
uint64_t fz_steps(const fz_config *c, size_t n);
/* Samples in step t (t < steps): B, the kept remainder, or K for a short
 * remainder topped up by wrapping around the permutation. */
uint64_t fz_step_samples(const fz_config *c, size_t n, uint64_t t);

/* Everything a computed plan reports, copied out so that two computes can
 * be compared bit for bit. */
typedef struct {
    int64_t ints[8];    /* BRS_PLAN_EPOCH .. BRS_PLAN_MAX_PADDED_TOKENS */
    double doubles[6];  /* BRS_PLAN_MAX_COST .. BRS_PLAN_TIME_LOWER_BOUND */
    size_t k, total;
    size_t *count;      /* k, slot = rank * grad_accum + micro */
    uint64_t *indices;  /* total, slot by slot */
    uint64_t *padded, *real;
    double *cost;
} fz_snapshot;

/* Reads every query and micro-batch of a computed plan (aborting on any
 * failing query) and checks the out-of-range and NULL answers. */
void fz_snapshot_take(fz_snapshot *snap, const brs_plan *p, const fz_config *c);
void fz_snapshot_free(fz_snapshot *snap);
/* Bit-identical, or abort naming `what`. */
void fz_snapshot_same(const fz_snapshot *a, const fz_snapshot *b, const char *what);

/* Checks one computed step against the lengths and the configuration:
 * ranges, non-empty slots, longest first, stats, cap, totals, sync times
 * and bounds. `expected` holds the step's dataset indices sorted ascending
 * (NULL to skip that comparison), num_expected of them. */
void fz_check_step(const fz_snapshot *snap, const fz_config *c, const fz_data *d,
                   uint64_t epoch, uint64_t step, const uint64_t *expected);

/* Fewest contiguous groups (longest first, greedy) that keep bs * L within
 * cap in padded mode: the exact minimum (docs/algorithm.md). lengths sorted
 * descending, each <= cap. */
uint64_t fz_padded_groups_for_cap(const uint32_t *desc, size_t n, uint64_t cap);
/* Fewest bins of capacity cap holding these lengths (n <= FZ_PACK_MAX),
 * by exhaustive search. */
#define FZ_PACK_MAX 10
uint64_t fz_packed_bins_for_cap(const uint32_t *len, size_t n, uint64_t cap);
/* The first decimal number after `prefix` in msg, or UINT64_MAX. */
uint64_t fz_number_after(const char *msg, const char *prefix);

#endif
